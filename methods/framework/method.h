/* The method contract.
 *
 * A method integrates a problem from (t0, y0) to t_end, where the state is one
 * contiguous buffer y = q | v | lambda (n_q + n_v + n_lambda doubles; methods
 * with auxiliary variables keep them in their own workspace).  It calls the
 * problem only through the counting wrappers below, so the work counters are
 * automatic, and reports every accepted step through mbs_accept(), which counts
 * the step, enforces the step budget, rejects NaN/Inf and calls the harness's
 * observer (the observer measures errors and drift; methods never do).
 *
 * A method file defines `const mbs_method_def` descriptors (several may share
 * one ops table through `variant`), listed for methods/registry.def; the
 * methods of the two axes are composed from their formulation and integrator
 * (ode_axis.h, dae_axis.h).  Names read FORMULATION/INTEGRATOR (index1/rk4).
 * All workspace is allocated in alloc(); integrate() allocates nothing.
 * Status convention (core/status.def): 0 success, > 0 recoverable,
 * < 0 fatal; on failure ctx->fail_t and ctx->reason say where and why.
 */
#ifndef MBS_METHOD_H
#define MBS_METHOD_H

#include <gsl/gsl_matrix.h>
#include <stddef.h>

#include "../../core/param.h"
#include "../linsol/linsol.h"
#include "../../core/status.h"
#include "../../problems/problem.h"

typedef struct mbs_counters {
    long steps;          /* accepted steps */
    long rejected;       /* rejected steps (error test or Newton failure) */
    long f_evals;        /* force evaluations */
    long mass_evals;     /* mass-matrix evaluations */
    long g_evals;        /* constraint (position level) evaluations */
    long jac_evals;      /* constraint-Jacobian evaluations */
    long gamma_evals;    /* curvature-term evaluations */
    long factorizations; /* linear-system factorizations */
    long solves;         /* linear-system solves (one right-hand side each) */
    long newton_iters;   /* Newton iterations */
    long jacobians;      /* iteration-matrix Jacobians dF/dy assembled (implicit
                            methods on methods/formulations/dae_form.h, index1/radau5, the genalpha
                            family; 0 for methods that build none) */
    long deriv_evals;    /* derivative callbacks (problem.h: force_q, force_v,
                            gtlambda_q, gw_q, ext->jac) */
} mbs_counters;

/* Called after every accepted step; vdot may be NULL when the method does not
 * produce accelerations.  A non-zero return stops the integration. */
typedef int (*mbs_observer_fn)(void *data, double t, const double *q, const double *v,
                               const double *vdot, const double *lambda);

/* Dense output of the step just accepted (optional): writes the method's own
 * continuous solution at t in [t_prev, t_acc] (the last two accepted times) as a
 * state y = q | v | lambda (| x) and returns 0, or writes q and v only and
 * returns MBS_DENSE_QV (methods that integrate (q, v) and take lambda from the
 * state at each accepted point: explicit Runge-Kutta, index1/radau5, CVODE; the
 * harness then takes lambda as for its own interpolation, harness/traj.h), or
 * returns -1 (the harness interpolates).  It evaluates stored data only:
 * no problem callback, no change to the method's state or counters, so that
 * measuring along the trajectory leaves the run as it is. */
enum { MBS_DENSE_QV = 1 };
typedef int (*mbs_dense_fn)(void *data, double t, double *y);

/* Run context: everything a method may touch besides its own workspace. */
typedef struct mbs_ctx {
    const mbs_problem *pb;
    mbs_counters cnt;
    long max_steps;       /* step budget (accepted + rejected) */
    double max_cpu;       /* CPU-time budget of one integration [s] */
    double cpu_start;     /* process CPU clock at the start (set by the harness) */
    double inject_fail_t; /* testing: callbacks fail for t >= this (NaN: never) */
    mbs_observer_fn observer;
    void *observer_data;
    gsl_matrix *G_full;   /* n_lambda x n_q scratch, only when H != I */
    gsl_matrix *H;        /* n_q x n_v scratch, only when H != I */
    /* Linear-solver backend statistics (methods/linsol/linsol.h) of the run, summed
     * over every mbs_linsol a method used; reported by the method
     * through mbs_ctx_report_linsol() at the end of integrate().  linsol_kind
     * is -1 when the method used no mbs_linsol backend. */
    int linsol_kind;
    mbs_linsol_stats linsol;
    double fail_t;        /* time of failure (set by mbs_fail) */
    char reason[256];     /* failure detail (set by mbs_fail) */
    double max_wall;      /* wall-clock budget of one integration [s] */
    double wall_start;    /* monotonic clock at the start (mbs_ctx_reset) */
    /* Threads the method's parallel parts ran on (dca/...: the
     * assembly/disassembly passes), set by the method during integrate(); 0
     * (reset by mbs_ctx_reset) for methods that do not report one. */
    int threads;
    /* Dense output (optional; mbs_dense_fn above): a method that can evaluate
     * its continuous solution over the step it accepts sets dense and
     * dense_data before mbs_accept and sets dense to NULL for steps it cannot
     * (mbs_ctx_reset clears both).  The harness's observer uses it for the
     * output grid of the trajectory measures; NULL: the harness interpolates
     * (cubic Hermite on q and v between the accepted steps). */
    mbs_dense_fn dense;
    void *dense_data;
} mbs_ctx;

/* Integration settings given by the harness. */
typedef struct mbs_settings {
    double h;      /* fixed step size, or initial step of adaptive methods (0 = auto) */
    double rtol;   /* tolerances of adaptive methods */
    double atol;
    double t_end;
} mbs_settings;

enum mbs_method_flags {
    MBS_M_FIXED_STEP = 1u << 0,
    MBS_M_ADAPTIVE = 1u << 1,
    MBS_M_IMPLICIT = 1u << 2,
    MBS_M_NEEDS_FULL_RANK = 1u << 3,     /* declines MBS_PB_REDUNDANT problems */
    MBS_M_NEEDS_REGULAR_MASS = 1u << 4,  /* declines MBS_PB_SINGULAR_MASS problems */
    MBS_M_SPARSE = 1u << 5,
    MBS_M_ENERGY_CONSERVING = 1u << 6,
    MBS_M_ENERGY_DECAYING = 1u << 7,
    MBS_M_PROJECTING = 1u << 8,
    MBS_M_EXTENDED_OK = 1u << 9,         /* supports MBS_PB_EXTENDED problems (else declined) */
    MBS_M_EXTERNAL_ALLOC = 1u << 10,     /* allocates inside an external library whose own
                                            allocation-failure paths leak or crash (GSL 2.7
                                            msadams/msbdf/bsimp, SUNDIALS 6.4): peer methods;
                                            skipped by tests/alloc/allocfail.c */
    MBS_M_NONHOLONOMIC_OK = 1u << 11     /* supports MBS_PB_NONHOLONOMIC problems (else
                                            declined) */
};

/* Default budget of every integration (docs/results-schema.md, "Budgets"). */
#define MBS_DEFAULT_MAX_STEPS 10000000L
#define MBS_DEFAULT_MAX_CPU 600.0
#define MBS_DEFAULT_MAX_WALL 1200.0

typedef struct mbs_method_def mbs_method_def;

typedef struct mbs_method_ops {
    /* Allocate the workspace for problem ctx->pb; *state owned by the caller, freed
     * with free_state (also on failure paths).  Returns MBS_UNSUPPORTED with a
     * reason in ctx->reason when the method cannot run this problem. */
    int (*alloc)(const mbs_method_def *m, const mbs_params *params, mbs_ctx *ctx,
                 void **state);
    /* Integrate from (*t, y) to s->t_end; on return (*t, y) is the last accepted
     * state.  May be called several times on one workspace (timing repeats). */
    int (*integrate)(void *state, mbs_ctx *ctx, const mbs_settings *s, double *t, double *y);
    void (*free_state)(void *state);
} mbs_method_ops;

struct mbs_method_def {
    const char *name;        /* "index1/rk4" */
    const char *summary;     /* one line */
    const char *citation;    /* seed and equations */
    double order[3];         /* nominal order in q, v, lambda (0 = not defined) */
    unsigned flags;
    const mbs_param_def *params;
    size_t n_params;
    const void *variant;     /* tableau, stepper type, ... */
    const mbs_method_ops *ops;
};

/* Registry (methods/registry.def). */
size_t mbs_method_count(void);
const mbs_method_def *mbs_method_at(size_t i);
const mbs_method_def *mbs_method_find(const char *name);

/* Parse "name[:k=v,...]".  Returns 0 or MBS_BAD_INPUT with a one-line message. */
int mbs_method_parse(const char *spec, const mbs_method_def **m, mbs_params *params,
                     char *err, size_t errlen);

/* ---- counting wrappers: the only way methods call the problem ---------------- */
int mbs_mass(mbs_ctx *ctx, double t, const double *q, gsl_matrix *M);
int mbs_force(mbs_ctx *ctx, double t, const double *q, const double *v, double *f);
int mbs_constraint(mbs_ctx *ctx, double t, const double *q, double *g);
/* Triplet forms (problems flagged MBS_PB_SPARSE; T is grown by the callback). */
int mbs_mass_sparse(mbs_ctx *ctx, double t, const double *q, mbs_triplets *T);
int mbs_jacobian_sparse(mbs_ctx *ctx, double t, const double *q, mbs_triplets *T);
/* B = G H (n_lambda x n_v), the velocity-level constraint matrix. */
int mbs_constraint_jacobian(mbs_ctx *ctx, double t, const double *q, gsl_matrix *B);
int mbs_constraint_t(mbs_ctx *ctx, double t, const double *q, double *gt);
int mbs_gamma(mbs_ctx *ctx, double t, const double *q, const double *v, double *gam);
/* q' = H(q) v. */
int mbs_qdot(mbs_ctx *ctx, const double *q, const double *v, double *qdot);
/* Lie-group problems (problems/problem.h, mbs_liegroup; MBS_PB_LIEGROUP):
 * q1 = q o exp(w), w in R^{n_v}; not counted (kinematics, like mbs_qdot). */
int mbs_lie_exp(mbs_ctx *ctx, const double *q, const double *w, double *q1);
/* Extended problems (problems/problem.h, mbs_extension): E(t, y) (ny x ny) and
 * F(t, y) of the whole system, y = q | v | lambda | x; counted as a mass-matrix
 * and a force evaluation. */
int mbs_ext_mass(mbs_ctx *ctx, double t, const double *y, gsl_matrix *E);
int mbs_ext_rhs(mbs_ctx *ctx, double t, const double *y, double *F);
/* dF/dy of an extended problem that gives it (mbs_extension.jac; 1 from
 * mbs_ext_has_jac), counted as a derivative evaluation. */
int mbs_ext_has_jac(const mbs_ctx *ctx);
int mbs_ext_jac(mbs_ctx *ctx, double t, const double *y, gsl_matrix *J);
/* Switching functions of an extended problem (mbs_extension.switches): their
 * number (0: none) and their values at (t, y), counted as a force evaluation. */
size_t mbs_ext_n_switch(const mbs_ctx *ctx);
int mbs_ext_switches(mbs_ctx *ctx, double t, const double *y, double *sw);

/* Context life cycle (the harness owns it). */
int mbs_ctx_init(mbs_ctx *ctx, const mbs_problem *pb);
void mbs_ctx_free(mbs_ctx *ctx);
/* Reset counters and failure information before a run. */
void mbs_ctx_reset(mbs_ctx *ctx);

/* Add the statistics of one linsol backend to ctx->linsol (counts are summed,
 * n / nnz / nnz_factor / fill are those of the largest factored system, rcond
 * the minimum).  Call once per backend at the end of integrate(); the harness
 * resets ctx->linsol before every integration (mbs_ctx_reset).  NULL ls is a
 * no-op. */
void mbs_ctx_report_linsol(mbs_ctx *ctx, const mbs_linsol *ls, int kind);
/* The same for statistics gathered outside an mbs_linsol (SUNDIALS' KLU in the
 * peers, kind MBS_LS_KLU); counts cumulative over the workspace's life, as
 * mbs_linsol_get_stats gives them. */
void mbs_ctx_report_linsol_stats(mbs_ctx *ctx, const mbs_linsol_stats *st, int kind);

/* Count linear-algebra work. */
static inline void mbs_count_factorization(mbs_ctx *ctx) { ctx->cnt.factorizations++; }
static inline void mbs_count_solve(mbs_ctx *ctx) { ctx->cnt.solves++; }
static inline void mbs_count_newton(mbs_ctx *ctx) { ctx->cnt.newton_iters++; }
static inline void mbs_count_rejected(mbs_ctx *ctx) { ctx->cnt.rejected++; }
static inline void mbs_count_jacobian(mbs_ctx *ctx) { ctx->cnt.jacobians++; }

/* Analytic derivatives (problem.h), counted in deriv_evals.  Callers
 * check that the problem provides the callback (NULL: finite differences). */
int mbs_force_q(mbs_ctx *ctx, double t, const double *q, const double *v, gsl_matrix *K);
int mbs_force_v(mbs_ctx *ctx, double t, const double *q, const double *v, gsl_matrix *D);
int mbs_gtlambda_q(mbs_ctx *ctx, double t, const double *q, const double *lambda,
                   gsl_matrix *K);
int mbs_gw_q(mbs_ctx *ctx, double t, const double *q, const double *w, gsl_matrix *Z);

/* Numerical rank seen in an LU factorisation (GSL, partial pivoting): the
 * number of |U_ii| above 1e-14 max |U_ii|.  An estimate (LU is not rank
 * revealing), reported with singular-matrix failures. */
size_t mbs_lu_rank(const gsl_matrix *LU);

/* Report an accepted step: counts it, checks the budget and the state for
 * NaN/Inf, calls the observer.  y = q | v | lambda, vdot may be NULL. */
int mbs_accept(mbs_ctx *ctx, double t, const double *y, const double *vdot);

/* Check the budget before attempting a step (accepted + rejected): steps,
 * CPU time and wall-clock time (defaults MBS_DEFAULT_MAX_STEPS/_CPU/_WALL);
 * an exhausted budget fails the run with a reason starting "budget:". */
int mbs_budget(mbs_ctx *ctx, double t);

/* Record a failure reason and time; returns status for `return mbs_fail(...)`. */
int mbs_fail(mbs_ctx *ctx, int status, double t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;


#endif
