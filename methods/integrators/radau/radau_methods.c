/* The Radau IIA methods (integrator: methods/integrators/radau/radau5.c): RADAU5 (s = 3,
 * order 5) on the index-3, index-2, GGL and index-1 formulations, adaptive and
 * fixed step, with projection; and the variable-order family `radau` after
 * Hairer & Wanner's code RADAU (s = 3, 5, 7: orders 5, 9, 13, chosen from the
 * Newton contraction; issue 16) with its fixed-step members radau9-fixed and
 * radau13-fixed.  Parameters and method definitions only (split from
 * radau5.c). */
#include "../../formulations/dae_form.h"
#include "../../formulations/index1.h"
#include "../../formulations/projection.h"
#include "radau5_impl.h"


/* Values of the parameter `linsol` (issue 10). */
#define RADAU_LINSOL_PARAM                                                                  \
    {"linsol", RADAU_LS_AUTO, 0, 4,                                                         \
     "iteration matrix: full (dense real and complex LU of dF/dy), the structured KKT "     \
     "simplified Newton (methods/formulations/dae_form.h; H = I problems) on lu (dense KKT LU), "        \
     "umfpack or cholmod, or auto (default): structured where it drops only the Hessian "   \
     "terms (mbs_dae_form_auto_structured), else full; -fixed methods: full",               \
     "full,lu,umfpack,cholmod,auto", 1}

/* kappa and nit of RADAU5 (s = 3) and of the variable-order RADAU. */
#define RADAU5_NEWTON_PARAMS                                                                \
    [RADAU_P_KAPPA] = {"kappa", 0.03, 1e-12, 1.0,                                           \
                       "Newton stopping factor (RADAU5 FNEWT, seed 002 Example 10); must "  \
                       "be > 0; when not given RADAU5's default max(10 eps/rtol', "         \
                       "min(0.03, sqrt(rtol')))",                                           \
                       NULL, 0},                                                            \
    [RADAU_P_NIT] = {"nit", 7, 2, 50, "maximum Newton iterations per step (RADAU5 NIT)", NULL, 1}

#define RADAU_VAR_NEWTON_PARAMS                                                             \
    [RADAU_P_KAPPA] = {"kappa", 0.03, 1e-12, 1.0,                                           \
                       "Newton stopping factor (RADAU FNEWT); must be > 0; when not given " \
                       "RADAU's default max(10 eps/rtol', min(0.03, rtol'^(1/e - 1))), "    \
                       "e = (s+1)/(2s)",                                                    \
                       NULL, 0},                                                            \
    [RADAU_P_NIT] = {"nit", 7, 2, 50,                                                       \
                     "maximum Newton iterations per step at s = 3 (RADAU NIT; +5 at s = 5, " \
                     "+10 at s = 7)",                                                       \
                     NULL, 1}

/* The variable-order family: RADAU's NSMIN and NSMAX (IWORK(11), (12)). */
#define RADAU_NS_PARAMS                                                                     \
    {"nsmin", 0, 0, 2, "fewest stages: 3, 5 or 7 (orders 5, 9, 13; RADAU NSMIN)", "3,5,7", 1}, \
    {"nsmax", 2, 0, 2, "most stages: 3, 5 or 7, not below nsmin (RADAU NSMAX); the run "      \
                       "starts with nsmin", "3,5,7", 1}

static const mbs_param_def radau_params[] = {RADAU5_NEWTON_PARAMS, RADAU_LINSOL_PARAM};

/* index1/radau5: its Newton matrix is the finite-difference n x n Jacobian
 * of the index-1 ODE (dense: PEERS.md, the index-1 ODE Jacobian is dense);
 * `linsol` is the index-1 KKT solver of its right-hand side (lu, chol,
 * umfpack, cholmod), as for the other index1/ methods. */
static const mbs_param_def radau_index1_params[] = {RADAU5_NEWTON_PARAMS,
                                                    MBS_INDEX1_LINSOL_PARAM};

static const mbs_param_def radau_proj_params[] = {
    RADAU5_NEWTON_PARAMS,
    [RADAU_P_EPS_G] = MBS_PROJECT_EPS_PARAM,
    RADAU_LINSOL_PARAM,
};

static const mbs_param_def radau_var_params[] = {RADAU_VAR_NEWTON_PARAMS, RADAU_LINSOL_PARAM,
                                                 RADAU_NS_PARAMS};

static const mbs_param_def radau_var_index1_params[] = {
    RADAU_VAR_NEWTON_PARAMS, MBS_INDEX1_LINSOL_PARAM, RADAU_NS_PARAMS};

#define RADAU_CITE                                                                          \
    "Hairer & Wanner, Solving ODEs II, Sect. IV.8 (RADAU5) and VII.4; Hairer, Lubich, Roche " \
    "(1989); seed 002, Remark 8a, Eqs. (73)"

/* kindv: DAE form; idx1v: 1 = the index-1 ODE instead (kindv then only sizes
 * the work arrays); fixedv: fixed-step mode; projv: projection; sv: stages
 * (0: variable order 5/9/13, parameters nsmin and nsmax). */
#define RADAU_METHOD(sym, nm, summ, cite, kindv, idx1v, fixedv, projv, sv, pq, pv, pl, prm)   \
    static const radau_variant sym##_variant = {.kind = kindv, .index1 = idx1v,             \
                                                .fixed = fixedv, .project = projv,          \
                                                .stages = sv};                              \
    const mbs_method_def sym = {                                                            \
        .name = nm,                                                                         \
        .summary = summ,                                                                    \
        .citation = cite,                                                                   \
        .order = {pq, pv, pl},                                                              \
        .flags = ((fixedv) ? MBS_M_FIXED_STEP : MBS_M_ADAPTIVE) | MBS_M_IMPLICIT |          \
                 MBS_M_NEEDS_FULL_RANK | ((projv) ? MBS_M_PROJECTING : 0u) |                \
                 /* extended problems (problem.h): index-2/-3 DAE forms only */             \
                 ((!(idx1v) && (kindv) != MBS_FORM_GGL) ? MBS_M_EXTENDED_OK      \
                                                                   : 0u),                   \
        .params = prm,                                                                      \
        .n_params = sizeof prm / sizeof prm[0],                                             \
        .variant = &sym##_variant,                                                          \
        .ops = &mbs_radau_ops,                                                                  \
    };

RADAU_METHOD(mbs_method_index3_radau5, "index3/radau5",
             "Radau IIA order 5, adaptive (RADAU5), on the index-3 formulation with scaling",
             RADAU_CITE "; seed 002 Eqs. (77), (69)-(70)", MBS_FORM_INDEX3, 0, 0, 0, 3, 5, 3, 2,
             radau_params)
RADAU_METHOD(mbs_method_index2_radau5, "index2/radau5",
             "Radau IIA order 5, adaptive (RADAU5), on the index-2 formulation",
             RADAU_CITE "; seed 002 Eq. (79)", MBS_FORM_INDEX2, 0, 0, 0, 3, 5, 5, 3, radau_params)
RADAU_METHOD(mbs_method_ggl_radau5, "ggl/radau5",
             "Radau IIA order 5, adaptive (RADAU5), on the GGL stabilized index-2 formulation",
             RADAU_CITE "; seed 002 Eq. (92)", MBS_FORM_GGL, 0, 0, 0, 3, 5, 5, 3, radau_params)
RADAU_METHOD(mbs_method_index1_radau5, "index1/radau5",
             "Radau IIA order 5, adaptive (RADAU5), on the index-1 formulation (ODE in q, v)",
             RADAU_CITE "; seed 002 Eqs. (83)-(84)", MBS_FORM_INDEX2, 1, 0, 0, 3, 5, 5, 5,
             radau_index1_params)
RADAU_METHOD(mbs_method_index3_radau5_fixed, "index3/radau5-fixed",
             "Radau IIA order 5, fixed step, on the index-3 formulation with scaling",
             RADAU_CITE "; seed 002 Eqs. (77), (69)-(70)", MBS_FORM_INDEX3, 0, 1, 0, 3, 5, 3, 2,
             radau_params)
RADAU_METHOD(mbs_method_index2_radau5_fixed, "index2/radau5-fixed",
             "Radau IIA order 5, fixed step, on the index-2 formulation",
             RADAU_CITE "; seed 002 Eq. (79)", MBS_FORM_INDEX2, 0, 1, 0, 3, 5, 5, 3, radau_params)
RADAU_METHOD(mbs_method_ggl_radau5_fixed, "ggl/radau5-fixed",
             "Radau IIA order 5, fixed step, on the GGL stabilized index-2 formulation",
             RADAU_CITE "; seed 002 Eq. (92)", MBS_FORM_GGL, 0, 1, 0, 3, 5, 5, 3, radau_params)
RADAU_METHOD(mbs_method_index1_radau5_fixed, "index1/radau5-fixed",
             "Radau IIA order 5, fixed step, on the index-1 formulation (ODE in q, v)",
             RADAU_CITE "; seed 002 Eqs. (83)-(84)", MBS_FORM_INDEX2, 1, 1, 0, 3, 5, 5, 5,
             radau_index1_params)
RADAU_METHOD(mbs_method_proj_index2_radau5, "proj-index2/radau5",
             "Radau IIA order 5, adaptive, on the index-2 formulation with projection",
             RADAU_CITE "; seed 002 Eqs. (79), (88)-(91)", MBS_FORM_INDEX2, 0, 0, 1, 3, 5, 5, 3,
             radau_proj_params)

#define RADAU_VAR_CITE                                                                      \
    "Hairer & Wanner, Solving ODEs II, Sect. IV.8 and VII.4; Hairer & Wanner, J. Comput. "  \
    "Appl. Math. 111 (1999) 93-111 (code RADAU)"

RADAU_METHOD(mbs_method_index3_radau, "index3/radau",
             "Radau IIA of variable order 5/9/13 (RADAU), adaptive, on the index-3 "
             "formulation with scaling",
             RADAU_VAR_CITE "; seed 002 Eqs. (77), (69)-(70)", MBS_FORM_INDEX3, 0, 0, 0, 0, 5, 3,
             2, radau_var_params)
RADAU_METHOD(mbs_method_index2_radau, "index2/radau",
             "Radau IIA of variable order 5/9/13 (RADAU), adaptive, on the index-2 formulation",
             RADAU_VAR_CITE "; seed 002 Eq. (79)", MBS_FORM_INDEX2, 0, 0, 0, 0, 5, 5, 3,
             radau_var_params)
RADAU_METHOD(mbs_method_ggl_radau, "ggl/radau",
             "Radau IIA of variable order 5/9/13 (RADAU), adaptive, on the GGL stabilized "
             "index-2 formulation",
             RADAU_VAR_CITE "; seed 002 Eq. (92)", MBS_FORM_GGL, 0, 0, 0, 0, 5, 5, 3,
             radau_var_params)
RADAU_METHOD(mbs_method_index1_radau, "index1/radau",
             "Radau IIA of variable order 5/9/13 (RADAU), adaptive, on the index-1 "
             "formulation (ODE in q, v)",
             RADAU_VAR_CITE "; seed 002 Eqs. (83)-(84)", MBS_FORM_INDEX2, 1, 0, 0, 0, 5, 5, 5,
             radau_var_index1_params)
RADAU_METHOD(mbs_method_index2_radau9_fixed, "index2/radau9-fixed",
             "Radau IIA, 5 stages, order 9, fixed step, on the index-2 formulation",
             RADAU_VAR_CITE "; seed 002 Eq. (79)", MBS_FORM_INDEX2, 0, 1, 0, 5, 9, 9, 5,
             radau_params)
RADAU_METHOD(mbs_method_index2_radau13_fixed, "index2/radau13-fixed",
             "Radau IIA, 7 stages, order 13, fixed step, on the index-2 formulation",
             RADAU_VAR_CITE "; seed 002 Eq. (79)", MBS_FORM_INDEX2, 0, 1, 0, 7, 13, 13, 7,
             radau_params)
