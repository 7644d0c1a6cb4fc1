/* Explicit ODE integrators over an acceleration evaluator: the ODE axis of the
 * method registry (issue 19).
 *
 * Every formulation that turns (t, q, v) into accelerations v' (and, where it
 * yields them, multipliers lambda) is an `mbs_accel_def`: the index-1 KKT solve,
 * Baumgarte, the null-space methods (QR, SVD, ...), Udwadia-Kalaba, the recursive
 * O(N) formalism, DCA.  Formulations and explicit integrators are two lists
 * composed automatically: a formulation file ends with one
 * MBS_ODE_FORMULATION_METHODS line, which defines FORMULATION/INTEGRATOR for every
 * integrator of MBS_EXPLICIT_INTEGRATORS below, and registry.def names it once with
 * MBS_ODE_FORMULATION(symbol).  A new explicit integrator is one line in
 * MBS_EXPLICIT_INTEGRATORS (and its stepper in explicit.c): it then exists for
 * every formulation, without a registry line per pair.
 *
 * The integrated state is (q, v); lambda is taken from the evaluation at each
 * accepted point (for Runge-Kutta it is the first stage of the next step, so it
 * costs nothing extra).  An optional post_step hook runs after every accepted
 * step (projection methods, coordinate partitioning) and may change q and v. */
#ifndef MBS_EXPLICIT_H
#define MBS_EXPLICIT_H

#include "method.h"

typedef struct mbs_accel_def {
    const char *name;   /* formulation prefix, e.g. "index1" */
    /* Workspace for ctx->pb with the method's parameters; MBS_UNSUPPORTED with
     * a reason in ctx when the formulation cannot handle the problem. */
    int (*alloc)(void **ws, mbs_ctx *ctx, const mbs_params *params);
    /* v' (and lambda, n_lambda values; may be NULL) at (t, q, v).  Methods that
     * do not yield multipliers write NaN. */
    int (*eval)(void *ws, mbs_ctx *ctx, double t, const double *q, const double *v,
                double *vdot, double *lambda);
    /* Optional: called after each accepted step; may modify q and v in place. */
    int (*post_step)(void *ws, mbs_ctx *ctx, double t, double *q, double *v);
    void (*free_ws)(void *ws);
    /* Optional: called at the start of every integrate() with the initial state
     * (reset per-run data such as a coordinate partition or diagnostics). */
    int (*start)(void *ws, mbs_ctx *ctx, double t0, const double *q, const double *v);
    /* Optional: called at the end of every integrate(), on every exit (report
     * linear-solver statistics: mbs_ctx_report_linsol, mbs_index1_report). */
    void (*finish)(void *ws, mbs_ctx *ctx);
} mbs_accel_def;

/* The integrators (variant of an explicit method). */
typedef enum {
    MBS_EXPLICIT_RK4,     /* classical RK4, fixed step */
    MBS_EXPLICIT_RKF45,   /* GSL rkf45, adaptive */
    MBS_EXPLICIT_RK8PD,   /* GSL rk8pd, adaptive */
    MBS_EXPLICIT_DOPRI5   /* Dormand-Prince 5(4), adaptive (ours, Hairer's controller) */
} mbs_explicit_kind;

typedef struct mbs_explicit_variant {
    const mbs_accel_def *accel;
    mbs_explicit_kind kind;
    const double *rk4_weights; /* NULL: classical (1,2,2,1)/6; tests may perturb */
} mbs_explicit_variant;

extern const mbs_method_ops mbs_explicit_ops;

/* The formulation workspace inside an explicit method's state (from
 * mbs_explicit_ops.alloc), e.g. to read a formulation's diagnostics. */
void *mbs_explicit_accel_ws(void *state);

#define MBS_EXPLICIT_FLAGS_RK4 (MBS_M_FIXED_STEP)
#define MBS_EXPLICIT_FLAGS_ADAPTIVE (MBS_M_ADAPTIVE)

/* Define `const mbs_method_def sym` combining accel `acc` with integrator `kind`.
 * p_q, p_v, p_l: nominal orders; extra_flags: formulation flags; prm: parameter
 * table (static array) of the formulation. */
#define MBS_EXPLICIT_METHOD(sym, nm, summ, cite, acc, kindv, p_q, p_v, p_l, extra_flags, prm) \
    static const mbs_explicit_variant sym##_variant = {.accel = &acc, .kind = kindv};         \
    const mbs_method_def sym = {                                                              \
        .name = nm,                                                                           \
        .summary = summ,                                                                      \
        .citation = cite,                                                                     \
        .order = {p_q, p_v, p_l},                                                             \
        .flags = ((kindv) == MBS_EXPLICIT_RK4 ? MBS_M_FIXED_STEP : MBS_M_ADAPTIVE) |          \
                 (extra_flags),                                                               \
        .params = prm,                                                                        \
        .n_params = sizeof prm / sizeof prm[0],                                               \
        .variant = &sym##_variant,                                                            \
        .ops = &mbs_explicit_ops,                                                             \
    };

/* The explicit integrators: X(symbol, "name", kind, order, "summary", "citation",
 * formulation...).  Orders are nominal for q, v (and lambda when the formulation
 * yields multipliers). */
#define MBS_EXPLICIT_INTEGRATORS(X, ...)                                                     \
    X(rk4, "rk4", MBS_EXPLICIT_RK4, 4, "classical Runge-Kutta 4, fixed step", "Kutta (1901)", \
      __VA_ARGS__)                                                                           \
    X(rkf45, "rkf45", MBS_EXPLICIT_RKF45, 4, "GSL Runge-Kutta-Fehlberg 4(5), adaptive",      \
      "GSL gsl_odeiv2_step_rkf45", __VA_ARGS__)                                              \
    X(rk8pd, "rk8pd", MBS_EXPLICIT_RK8PD, 8, "GSL Prince-Dormand 8(9), adaptive",            \
      "GSL gsl_odeiv2_step_rk8pd", __VA_ARGS__)                                              \
    X(dopri5, "dopri5", MBS_EXPLICIT_DOPRI5, 5, "Dormand-Prince 5(4), adaptive",             \
      "Dormand & Prince (1980), Hairer's DOPRI5 controller", __VA_ARGS__)

#define MBS_ODE_PAIR_(isym, iname, kindv, p, isumm, icite, fsym, fname, acc, fsumm, fcite,  \
                      fflags, lam, prm)                                                      \
    MBS_EXPLICIT_METHOD(mbs_method_##fsym##_##isym, fname "/" iname, isumm ", " fsumm,      \
                        fcite "; " icite, acc, kindv, p, p, (lam) ? (p) : 0, fflags, prm)

/* One line at the end of a formulation file: FORMULATION/INTEGRATOR for every
 * explicit integrator.  fsym: symbol (mbs_method_<fsym>_<integrator>); fname:
 * the name before '/'; acc: its mbs_accel_def; fsumm, fcite: what it is and its
 * source; fflags: MBS_M_* flags; lam: 1 when it yields the multipliers; prm: its
 * parameter table (a static array). */
#define MBS_ODE_FORMULATION_METHODS(fsym, fname, acc, fsumm, fcite, fflags, lam, prm)       \
    MBS_EXPLICIT_INTEGRATORS(MBS_ODE_PAIR_, fsym, fname, acc, fsumm, fcite, fflags, lam, prm)

/* registry.c: the declarations and addresses of a formulation's methods. */
#define MBS_ODE_DECL_(isym, iname, kindv, p, isumm, icite, fsym)                             \
    extern const mbs_method_def mbs_method_##fsym##_##isym;
#define MBS_ODE_ADDR_(isym, iname, kindv, p, isumm, icite, fsym) &mbs_method_##fsym##_##isym,

#endif
