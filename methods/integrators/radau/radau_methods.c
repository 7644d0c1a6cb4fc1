/* The Radau IIA integrators of the DAE axis (methods/framework/dae_axis.h;
 * the integrator itself: radau5.c): RADAU5 (s = 3, order 5), adaptive and fixed
 * step; the variable-order family `radau` after Hairer & Wanner's code RADAU
 * (s = 3, 5, 7: orders 5, 9, 13, chosen from the Newton contraction) with its
 * fixed-step members radau9-fixed and radau13-fixed.  Their parameters and
 * declarations; methods/registry.c runs each on every DAE formulation that
 * fits. */
#include <stdio.h>

#include "../../framework/dae_axis.h"
#include "radau5_impl.h"

/* The parameter `linsol` (values: RADAU_LS_*, radau5_impl.h). */
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
                       "Newton stopping factor (RADAU5 FNEWT, Arnold 2016 [arnold2016dae] Example 10); must "  \
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

/* The variable-order family: RADAU's NSMIN and NSMAX (IWORK(11), (12)), and
 * where the iteration matrix takes its Jacobian (radau5.c, radau_jac_point). */
/* The index-3 form's Newton stop (radau5.c, radau_newton_index3); the
 * adaptive methods only, ignored on the other forms. */
#define RADAU_NSTOP_PARAM                                                                   \
    {"nstop", 1, 0, 1,                                                                      \
     "index-3 form: where the Newton iteration stops: radau5 (RADAU5's test in its error "  \
     "weights, v and lambda divided by h and h^2) or unweighted (default: that test, then "  \
     "the same test without the division, until met or the increments stop falling); "     \
     "other forms: RADAU5's test", "radau5,unweighted", 1}

#define RADAU_NS_PARAMS                                                                     \
    {"nsmin", 0, 0, 2, "fewest stages: 3, 5 or 7 (orders 5, 9, 13; RADAU NSMIN)", "3,5,7", 1}, \
    {"nsmax", 2, 0, 2, "most stages: 3, 5 or 7, not below nsmin (RADAU NSMAX); the run "      \
                       "starts with nsmin", "3,5,7", 1},                                      \
    RADAU_NSTOP_PARAM,                                                                      \
    {"jpoint", 0.0, 0.0, 1.0,                                                               \
     "where in the step the dense iteration matrix takes dF/dy and E: 0 (default) at "      \
     "(t_n, y_n) as RADAU; c in (0, 1] at t_n + c h on the previous step's collocation "    \
     "polynomial, extrapolated (the structured KKT path has no dF/dy: unaffected)",         \
     NULL, 0}

static const mbs_param_def radau5_newton_params[] = {RADAU5_NEWTON_PARAMS};
static const mbs_param_def radau_var_newton_params[] = {RADAU_VAR_NEWTON_PARAMS};
/* The iteration matrix, with the E, F forms.  On index1 `linsol` is the
 * formulation's (the KKT solver of the ODE's right-hand side); the Newton
 * matrix is then the finite-difference n x n Jacobian of that ODE (dense:
 * PEERS.md, the index-1 ODE Jacobian is dense). */
static const mbs_param_def radau_linsol_params[] = {RADAU_LINSOL_PARAM};
static const mbs_param_def radau_ns_params[] = {RADAU_NS_PARAMS};
static const mbs_param_def radau_nstop_params[] = {RADAU_NSTOP_PARAM};

#define RADAU_CITE                                                                          \
    "Hairer & Wanner, Solving ODEs II, Sect. IV.8 (RADAU5) and VII.4; Hairer, Lubich, Roche " \
    "(1989); Arnold 2016 [arnold2016dae], Remark 8a, Eqs. (73)"
#define RADAU_VAR_CITE                                                                      \
    "Hairer & Wanner, Solving ODEs II, Sect. IV.8 and VII.4; Hairer & Wanner, J. Comput. "  \
    "Appl. Math. 111 (1999) 93-111 (code RADAU)"

#define RADAU_FLAGS (MBS_M_IMPLICIT | MBS_M_NEEDS_FULL_RANK)

/* Nominal orders of Radau IIA with s stages, p = 2s - 1 (Hairer & Wanner II,
 * Sect. VI.7, VII.4), by the algebraic index of the formulation: index 1 (an
 * ODE) p in q, v and lambda; index 2: p in q, v and s in lambda; index 3: p in
 * q, s in v and s - 1 in lambda. */
#define RADAU_ORDERS(p, s) {[1] = {p, p, p}, [2] = {p, p, s}, [3] = {p, s, (s) - 1}}

/* "SUMMARY (CODE), on TITLE" and "CITATION; Arnold 2016 [arnold2016dae] Eq(s). EQS".  On the
 * index-3 form the integrator scales the constraint rows and the multipliers
 * ([arnold2016dae] Eqs. (69)-(70)); the code name is shown where the method is
 * Hairer's code, i.e. without a projection step. */
static void radau_describe(const mbs_dae_integrator *in, const mbs_dae_formulation *f,
                           char *summary, size_t ns, char *citation, size_t nc)
{
    const radau_integrator *ri = in->variant;
    int scaled = f->index == 3, code = ri->code && !(f->provides & MBS_DAE_PROJECTION);
    snprintf(summary, ns, "%s%s%s%s, on %s%s", in->summary, code ? " (" : "",
             code ? ri->code : "", code ? ")" : "", f->title, scaled ? " with scaling" : "");
    char eqs[64];
    snprintf(eqs, sizeof eqs, "%s%s", f->eqs, scaled ? ", (69)-(70)" : "");
    snprintf(citation, nc, "%s; Arnold 2016 [arnold2016dae] %s %s", in->citation, mbs_dae_eq_word(eqs), eqs);
}

const mbs_dae_integrator mbs_dae_integrators_radau[] = {
    {
        .name = "radau5",
        .runs_on = MBS_DAE_EF | MBS_DAE_ACCEL,
        .handles = MBS_DAE_PROJECTION | MBS_DAE_EXTENDED,
        .max_index = 3,
        .flags = MBS_M_ADAPTIVE | RADAU_FLAGS,
        .order = RADAU_ORDERS(5, 3),
        .params = MBS_PARAM_LIST(radau5_newton_params),
        .form_params = MBS_PARAM_LIST(radau_linsol_params),
        .tail_params = MBS_PARAM_LIST(radau_nstop_params),
        .ops = &mbs_radau_ops,
        .variant = &(const radau_integrator){.stages = 3, .code = "RADAU5"},
        .summary = "Radau IIA order 5, adaptive",
        .citation = RADAU_CITE,
        .describe = radau_describe,
    },
    {
        .name = "radau5-fixed",
        .runs_on = MBS_DAE_EF | MBS_DAE_ACCEL,
        .handles = MBS_DAE_EXTENDED,
        .max_index = 3,
        .flags = MBS_M_FIXED_STEP | RADAU_FLAGS,
        .order = RADAU_ORDERS(5, 3),
        .params = MBS_PARAM_LIST(radau5_newton_params),
        .form_params = MBS_PARAM_LIST(radau_linsol_params),
        .ops = &mbs_radau_ops,
        .variant = &(const radau_integrator){.stages = 3},
        .summary = "Radau IIA order 5, fixed step",
        .citation = RADAU_CITE,
        .describe = radau_describe,
    },
    {
        .name = "radau",
        .runs_on = MBS_DAE_EF | MBS_DAE_ACCEL,
        .handles = MBS_DAE_EXTENDED,
        .max_index = 3,
        .flags = MBS_M_ADAPTIVE | RADAU_FLAGS,
        .order = RADAU_ORDERS(5, 3), /* at the first order, s = 3 */
        .params = MBS_PARAM_LIST(radau_var_newton_params),
        .form_params = MBS_PARAM_LIST(radau_linsol_params),
        .tail_params = MBS_PARAM_LIST(radau_ns_params),
        .ops = &mbs_radau_ops,
        .variant = &(const radau_integrator){.stages = 0},
        .summary = "Radau IIA of variable order 5/9/13 (RADAU), adaptive",
        .citation = RADAU_VAR_CITE,
        .describe = radau_describe,
    },
    /* The orders 9 and 13 at fixed steps, on the index-2 form. */
    {
        .name = "radau9-fixed",
        .runs_on = MBS_DAE_EF,
        .handles = MBS_DAE_EXTENDED,
        .max_index = 3,
        .only = "index2",
        .flags = MBS_M_FIXED_STEP | RADAU_FLAGS,
        .order = RADAU_ORDERS(9, 5),
        .params = MBS_PARAM_LIST(radau5_newton_params),
        .form_params = MBS_PARAM_LIST(radau_linsol_params),
        .ops = &mbs_radau_ops,
        .variant = &(const radau_integrator){.stages = 5},
        .summary = "Radau IIA, 5 stages, order 9, fixed step",
        .citation = RADAU_VAR_CITE,
        .describe = radau_describe,
    },
    {
        .name = "radau13-fixed",
        .runs_on = MBS_DAE_EF,
        .handles = MBS_DAE_EXTENDED,
        .max_index = 3,
        .only = "index2",
        .flags = MBS_M_FIXED_STEP | RADAU_FLAGS,
        .order = RADAU_ORDERS(13, 7),
        .params = MBS_PARAM_LIST(radau5_newton_params),
        .form_params = MBS_PARAM_LIST(radau_linsol_params),
        .ops = &mbs_radau_ops,
        .variant = &(const radau_integrator){.stages = 7},
        .summary = "Radau IIA, 7 stages, order 13, fixed step",
        .citation = RADAU_VAR_CITE,
        .describe = radau_describe,
    },
    {.name = NULL},
};

void mbs_radau_variant(const mbs_method_def *m, radau_variant *v)
{
    const mbs_dae_method *dm = m->variant;
    const mbs_dae_formulation *f = dm->formulation;
    const int index1 = !(f->provides & MBS_DAE_EF);
    *v = (radau_variant){
        /* index1: an index-2 form sizes the work arrays */
        .kind = index1 ? MBS_FORM_INDEX2 : f->kind,
        .index1 = index1,
        .fixed = (dm->integrator->flags & MBS_M_FIXED_STEP) != 0,
        .project = (f->provides & MBS_DAE_PROJECTION) != 0,
        .stages = ((const radau_integrator *)dm->integrator->variant)->stages,
    };
}
