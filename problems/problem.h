/* The problem contract.
 *
 * A problem describes the constrained mechanical system ([arnold2016dae], Eq. (16);
 * the kinematic matrix H after [arnold2016dae] Eq. (44)):
 *
 *     q' = H(q) v,
 *     M(t,q) v' = f(t,q,v) - H(q)^T G(t,q)^T lambda,
 *     0 = g(t,q),
 *
 * with n_q >= n_v coordinates, n_v velocities and n_lambda constraints, G = dg/dq
 * (n_lambda x n_q).  The velocity-level constraint matrix is B = G H
 * (n_lambda x n_v), the hidden constraints are B v + g_t = 0 and B v' = gamma with
 * the curvature term gamma = -(B v)_q H v - 2 (B_t) v - g_tt ([arnold2016dae] Eq. (17);
 * [pennestri_coordinate_reduction] Eq. (2)).  Redundant constraints (rank G < n_lambda) and a
 * rank-deficient M (positive definite on ker B) are allowed and flagged.
 *
 * A problem file defines one `const mbs_problem_def` and adds one line to
 * problems/registry.def.  Every callback takes the problem instance (its
 * parameters and any derived data) explicitly and returns an mbs_status
 * (0 = success).  Matrices are dense GSL matrices whose size the caller
 * provides; sparse problems set MBS_PB_SPARSE and provide the triplet
 * callbacks as well (docs/adding-a-problem.md describes every field).
 */
#ifndef MBS_PROBLEM_H
#define MBS_PROBLEM_H

#include <gsl/gsl_matrix.h>
#include <stddef.h>

#include "../core/mathconst.h"
#include "../core/param.h"

enum mbs_problem_flags {
    MBS_PB_EXACT = 1u << 0,          /* exact solution available */
    MBS_PB_CONSERVATIVE = 1u << 1,   /* total energy is conserved */
    MBS_PB_SPARSE = 1u << 2,         /* sparse M and G callbacks available */
    MBS_PB_REDUNDANT = 1u << 3,      /* rank G < n_lambda somewhere */
    MBS_PB_SINGULAR_MASS = 1u << 4,  /* M rank-deficient (definite on ker B) */
    MBS_PB_RHEONOMIC = 1u << 5,      /* g depends on t */
    MBS_PB_SINGULAR_CONFIG = 1u << 6, /* passes singular configurations */
    MBS_PB_EXTENDED = 1u << 7,        /* extra variables x (mbs_extension below) */
    MBS_PB_NONHOLONOMIC = 1u << 8,    /* the last n_nh constraints are non-holonomic (below) */
    MBS_PB_LIEGROUP = 1u << 9,        /* q lies on the Lie group of def->lie (below) */
    MBS_PB_CONSTANT_MASS = 1u << 10   /* M(t, q) does not depend on t or q (below) */
};

/* MBS_PB_CONSTANT_MASS: the mass callback returns the same matrix at every t and
 * q (point masses and planar bodies in Cartesian or body coordinates; not Euler
 * angles, relative coordinates or Euler parameters).  The Radau IIA methods then
 * run RADAU5's transformed Newton iteration, which forms M once per Jacobian and
 * not at the stages (Hairer & Wanner 1996 [hairer1996solving], Sect. IV.8;
 * methods/integrators/radau/radau5_linalg.c); check-problem (harness/probcheck.c)
 * refuses the flag when M differs between t0, q0 and perturbed t, q.  Only M is
 * promised: the E of an extended problem (mbs_extension.mass) is not covered. */

typedef struct mbs_problem_def mbs_problem_def;

/* A problem instance: definition + parameter values + derived data. */
typedef struct mbs_problem {
    const mbs_problem_def *def;
    mbs_params params;
    size_t nq, nv, nl;  /* set by the definition's dims() */
    size_t nx;          /* extra variables after lambda (MBS_PB_EXTENDED; else 0) */
    size_t nnh;         /* the last nnh of the nl constraints are non-holonomic
                           (MBS_PB_NONHOLONOMIC; else 0) */
    unsigned flags;     /* the definition's flags, possibly adjusted by setup() */
    double t0, t_end;   /* t_end may be overridden by the harness */
    void *data;         /* derived data owned by the problem (setup/teardown) */
    /* Reported quantities of this instance (def->reported below): the definition's
     * names, set before setup(), which may point them at a list of its own in
     * pb->data when they depend on the parameters; n_reported is counted after
     * setup() (0: none). */
    const char *const *reported_names;
    size_t n_reported;
} mbs_problem;

/* Default output grid of the trajectory measures: t0 + k (t_end - t0) / steps,
 * k = 0..steps, i.e. 101 equally spaced times (def->output_steps below). */
#define MBS_OUTPUT_STEPS 100

/* Sparse matrix as triplets (0-based), for problems flagged MBS_PB_SPARSE.  A
 * callback sets nnz and grows row/col/val with realloc when cap is too small
 * (problems/triplets.h), so the caller may pass a zeroed struct, keeps the
 * arrays between calls and frees them (mbs_triplets_free). */
/* Contract extension after [arnold2016dae] Eq. (44), for problems flagged MBS_PB_EXTENDED:
 * n_x extra variables x follow the multipliers, so the state is
 *     y = q | v | lambda | x        (mbs_ny counts x; records, stored references,
 *                                     observers (x = lambda + n_l) keep this layout),
 * additional first-order states (their rows of E carry their own coefficients) and
 * additional algebraic variables s with their own equations 0 = h(t, q, s) (rows of
 * E = 0).  Because such a problem's forces may depend on lambda and x (the
 * wheelset's creep forces depend on the normal forces), the problem gives its whole
 * system as the linearly implicit DAE  E(t, y) y' = F(t, y)  of its own formulation
 * (rows in the order of y: q' rows, v' rows, constraint rows, x rows).  The plain
 * callbacks describe what they can (documented per problem): mass = the v-block of
 * E, constraint/jacobian/gamma = the position constraint with x eliminated; force
 * may return MBS_UNSUPPORTED.  initial(): lambda0 has room for n_l + n_x values,
 * lambda0 followed by x0.  Methods that support extended problems carry
 * MBS_M_EXTENDED_OK (methods/framework/method.h); the harness declines the others with status
 * `unsupported`.  Methods call these through mbs_ext_mass / mbs_ext_rhs. */
typedef struct mbs_extension {
    int (*dims)(const mbs_problem *pb, size_t *nx);
    /* Per component of y (length mbs_ny): 1 differential or index-1 algebraic,
     * 2 or 3 the index of an algebraic variable (error scaling of the integrator). */
    int (*var_index)(const mbs_problem *pb, int *index);
    int (*mass)(const mbs_problem *pb, double t, const double *y, gsl_matrix *E);
    int (*rhs)(const mbs_problem *pb, double t, const double *y, double *F);
    /* Optional (NULL: none): n_switch switching functions sw(t, y) whose zero
     * sets are where F is continuous but not differentiable (a friction force
     * entering saturation).  Integrators that locate them end a step on each
     * sign change, so that no step straddles a kink of the solution's
     * derivative (Gear & Osterby 1984 [gear1984discontinuities]; Hairer,
     * Norsett & Wanner 1993 [hairer1993solving] Sect. II.6). */
    int (*switches)(const mbs_problem *pb, double t, const double *y, double *sw);
    size_t n_switch;
    /* Optional (NULL: forward differences of rhs by the integrator): dF/dy
     * (ny x ny, rows and columns in the order of y), exact or by differences
     * the problem organises itself (e.g. recomputing only what a column moves). */
    int (*jac)(const mbs_problem *pb, double t, const double *y, gsl_matrix *J);
} mbs_extension;

/* Contract extension for problems flagged MBS_PB_LIEGROUP (set by the definition
 * or by setup() for the instances it applies to; `lie` is then non-NULL): the
 * configuration is an element of a matrix Lie group stored in q (e.g. the heavy
 * top's SO(3) x R^3 form, q = (x, R) with R as nine entries) and v holds its
 * velocity in Lie-algebra coordinates, q' = H(q) v ([arnold2016dae] Eq. (33)).
 *   compose_exp: q1 = q o exp(w) for w in R^{n_v}: the exact flow of q' = H(q) w
 *       over unit time at constant w (so q o exp(h v) = q + h H(q) v + O(h^2));
 *       q1 may not alias q.
 *   log: w = log(qa^-1 o qb) in R^{n_v} (qb = qa o exp(w); for rotations the
 *       angle |w| <= pi); the norm of the rotation components of w is the
 *       geodesic distance of the two configurations, used for error measures.
 * Lie-group integrators (liegroup/genalpha, liegroup-ggl/genalpha) change q only
 * through compose_exp, so q stays on the group to round-off with no
 * normalisation constraint.  The tangent operator of exp is I + O(h) and enters
 * only O(h) terms of their iteration matrices, which the simplified Newton
 * iteration of [arnold2016dae] Eq. (70) drops, so the contract has no callback for it.
 * Methods that treat q as a vector integrate the embedding q' = H(q) v in
 * R^{n_q} and drift off the group at the size of their local errors. */
typedef struct mbs_liegroup {
    int (*compose_exp)(const mbs_problem *pb, const double *q, const double *w, double *q1);
    int (*log)(const mbs_problem *pb, const double *qa, const double *qb, double *w);
} mbs_liegroup;

typedef struct mbs_triplets {
    size_t nnz, cap;
    size_t *row, *col;
    double *val;
} mbs_triplets;

struct mbs_problem_def {
    const char *name;      /* command-line name, e.g. "pendulum" */
    const char *title;     /* one line */
    const char *citation;  /* author, year, references.bib key, equation/example */
    const char *reference; /* provenance of the reference solution ("<name>": the name) */
    unsigned flags;
    int index;             /* differential index (3 position constraints, 2 velocity
                              constraints only, 0 an ODE); informational */
    double t0, t_end;      /* defaults */
    const mbs_param_def *params;
    size_t n_params;

    /* Required. */
    int (*dims)(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl);
    /* Consistent q0, v0; lambda0 may be left untouched and *have_lambda = 0, in
     * which case the harness computes it from the index-1 system (Eq. (17)). */
    int (*initial)(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                   int *have_lambda);
    int (*mass)(const mbs_problem *pb, double t, const double *q, gsl_matrix *M);
    int (*force)(const mbs_problem *pb, double t, const double *q, const double *v,
                 double *f);
    int (*constraint)(const mbs_problem *pb, double t, const double *q, double *g);
    int (*jacobian)(const mbs_problem *pb, double t, const double *q, gsl_matrix *G);
    int (*gamma)(const mbs_problem *pb, double t, const double *q, const double *v,
                 double *gamma);

    /* Optional (NULL = not available / default). */
    int (*setup)(mbs_problem *pb, char *err,
                 size_t errlen);             /* check parameter combinations, derive
                                                data, adjust flags; message on error */
    void (*teardown)(mbs_problem *pb);       /* free derived data */
    int (*constraint_t)(const mbs_problem *pb, double t, const double *q,
                        double *gt);         /* NULL: scleronomic, g_t = 0 */
    int (*kinematic)(const mbs_problem *pb, const double *q,
                     gsl_matrix *H);         /* NULL: H = I (n_q = n_v) */
    double (*energy)(const mbs_problem *pb, double t, const double *q, const double *v);
    int (*exact)(const mbs_problem *pb, double t, double *q, double *v, double *lambda);
    int (*mass_sparse)(const mbs_problem *pb, double t, const double *q, mbs_triplets *M);
    int (*jacobian_sparse)(const mbs_problem *pb, double t, const double *q,
                           mbs_triplets *G);
    /* Optional: the same motion in an independent formulation (minimal
     * coordinates, a rotation-matrix ODE, ...), integrated by the problem itself
     * at tolerance tol from t0 to t_end, for reference generation (`mbsbench
     * reference`).  Writes q and v at t_end, and lambda with *have_lambda = 1
     * (else the caller solves the index-1 system), and a one-line description
     * of the formulation (or the failure reason) to what. */
    int (*independent)(const mbs_problem *pb, double t_end, double tol, double *q, double *v,
                       double *lambda, int *have_lambda, char *what, size_t whatlen);
    /* Optional, with independent: the same formulation in one integration to each
     * of the n increasing times ts (ts[0] may be t0), writing the state
     * q | v | lambda (| x) at ts[k] to Y + k ny, ny = n_q + n_v + n_l + n_x
     * (*have_lambda as above, for every row).  Reference trajectories (`mbsbench
     * reference --trajectory`) use it; without it they call independent once per
     * time, from t0 each time (cost ~ n^2 / 2 integrations). */
    int (*independent_grid)(const mbs_problem *pb, const double *ts, size_t n, double tol,
                            double *Y, int *have_lambda, char *what, size_t whatlen);
    /* Optional: the state y = q | v | lambda at time t in the component order of
     * the published definition (Test Set problems: exactly the order of
     * the Test Set 2.4 [testset24], multipliers in the published sign convention);
     * sets *n to the number of components and, when out is not NULL, writes them.
     * published_scd lists the 0-based published components the published
     * accuracy measure scd uses (NULL = all n). */
    int (*published)(const mbs_problem *pb, double t, const double *y, double *out,
                     size_t *n);
    const size_t *published_scd;
    size_t n_published_scd;
    /* Required with MBS_PB_EXTENDED, else NULL (see mbs_extension above). */
    const mbs_extension *ext;
    /* Required with MBS_PB_NONHOLONOMIC, else NULL: the number n_nh <= n_lambda of
     * non-holonomic (velocity-level, linear in v) constraints
     *     A(t,q) v + a(t,q) = 0                      ([bauchau2003selfstabilized] Eq. (2), Sect. 3.3).
     * They are the LAST n_nh of the n_lambda constraints and their multipliers the
     * last n_nh entries of lambda (state q | v | lambda unchanged; n_lambda counts
     * them).  For these rows the plain callbacks carry the velocity-level data, so
     * B v + g_t = 0 and B v' = gamma hold as for holonomic rows and index-1 solvers,
     * lambda0 and the harness's velocity residual need no change:
     *     constraint() = 0 (there is no position-level constraint),
     *     jacobian()   = A_q with A = A_q H (A itself when H = I),
     *     constraint_t() = a(t,q) (NULL: a = 0),
     *     gamma()      = -(A_q v)_q H v - A_t v - a_q H v - a_t  (so A v' = gamma).
     * Methods that enforce g = 0 itself (projection, GGL, Baumgarte, EP's
     * discrete gradient without Eq. (22)) must not treat these rows as
     * holonomic; only methods flagged MBS_M_NONHOLONOMIC_OK run such problems
     * (the harness declines the others with status `unsupported`). */
    int (*nonholonomic_dims)(const mbs_problem *pb, size_t *nnh);
    /* Required with MBS_PB_LIEGROUP, else ignored (see mbs_liegroup above). */
    const mbs_liegroup *lie;

    /* Optional analytic derivatives (NULL = the methods fall back to
     * finite differences).  Dense GSL matrices of the stated size, provided by
     * the caller; the callback writes every entry.  With G = jacobian()
     * (n_lambda x n_q, the matrix that callback returns, also for
     * non-holonomic rows) and fixed vectors lambda (length n_lambda), w
     * (length n_q):
     *     force_q:     df/dq                (n_v x n_q)
     *     force_v:     df/dv                (n_v x n_v)
     *     gtlambda_q:  d(G(t,q)^T lambda)/dq (n_q x n_q; symmetric for holonomic rows)
     *     gw_q:        d(G(t,q) w)/dq       (n_lambda x n_q)
     * The last two are contractions of the constraint Hessian g_qq.  The
     * implicit methods' Jacobian dF/dy (methods/formulations/dae_form.c) uses them when
     * H = I; tests/check_derivs.c checks every provided derivative of every
     * problem against central differences of the plain callbacks.  There is
     * no d(M a)/dq: the simplified Newton iterations of our implicit methods
     * neglect it (dae_form.h), so nothing would call it. */
    int (*force_q)(const mbs_problem *pb, double t, const double *q, const double *v,
                   gsl_matrix *K);
    int (*force_v)(const mbs_problem *pb, double t, const double *q, const double *v,
                   gsl_matrix *D);
    int (*gtlambda_q)(const mbs_problem *pb, double t, const double *q, const double *lambda,
                      gsl_matrix *K);
    int (*gw_q)(const mbs_problem *pb, double t, const double *q, const double *w,
                gsl_matrix *Z);

    /* Optional: the output grid of the trajectory measures (errors along the
     * trajectory, `run --trajectory`): the number of output steps on [t0, t_end],
     * i.e. steps + 1 equally spaced times including both ends (0 = MBS_OUTPUT_STEPS;
     * a suite grid or `run --output-steps` overrides it). */
    long output_steps;
    /* Optional: named reported quantities, e.g. the coordinates and velocities of
     * a point B0 (x_B0, y_B0, vx_B0, vy_B0), written as extra columns of `run
     * --trajectory` after the state.  reported_names is a NULL-terminated list of
     * names of [A-Za-z0-9_.] that starts with a letter (setup() may replace it
     * per instance, see mbs_problem); reported(pb, t, q, v, out) writes their
     * values at (t, q, v) in that order.  Both or neither. */
    const char *const *reported_names;
    int (*reported)(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *out);
    /* Optional: reference values of the reported quantities at t from an
     * independent reduction of the model (e.g. the parallelogram branch of the
     * N-four-bar, problems/mech_reference.h), for problems without an exact
     * solution; MBS_UNSUPPORTED for instances it does not cover.  The IFToMM
     * error of the trajectory measures (harness/traj.h) compares with it. */
    int (*reported_reference)(const mbs_problem *pb, double t, double *out);
    /* Optional: a problem whose motion can pass singular configurations where it
     * may change branch (the N-four-bar) and whose intended branch has a closed
     * form: the branch's q and v at t (qb, vb; no multipliers) and *off, the
     * distance of the configuration q from the branch's configurations (0 on it,
     * O(1) on another branch; any phase error along the branch does not count).
     * `converge` measures such a problem against it (harness/converge.h);
     * MBS_UNSUPPORTED for instances it does not cover. */
    int (*branch)(const mbs_problem *pb, double t, const double *q, double *qb, double *vb,
                  double *off);
};

/* force_q or force_v of a force that does not depend on q (v): K = 0. */
int mbs_zero_force_derivative(const mbs_problem *pb, double t, const double *q, const double *v,
                              gsl_matrix *K);

/* Create an instance from "name[:k=v,...]".  Returns 0 or an mbs_status and a
 * one-line message naming the bad name, key or value. */
int mbs_problem_open(mbs_problem *pb, const char *spec, char *err, size_t errlen);
void mbs_problem_close(mbs_problem *pb);

/* Registry (problems/registry.def). */
size_t mbs_problem_count(void);
const mbs_problem_def *mbs_problem_at(size_t i);
const mbs_problem_def *mbs_problem_find(const char *name);

/* Value of the instance's parameter `i` (index into the definition's table). */
static inline double mbs_pb_param(const mbs_problem *pb, size_t i)
{
    return pb->params.val[i];
}

/* Length of the state q | v | lambda (| x for extended problems). */
static inline size_t mbs_ny(const mbs_problem *pb)
{
    return pb->nq + pb->nv + pb->nl + pb->nx;
}

#endif
