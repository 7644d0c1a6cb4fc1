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

#include "../../framework/method.h"
#include "tableau.h"

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

/* The integrators (variant of an explicit method): an explicit Runge-Kutta
 * tableau run by the generic stepper of explicit.c (fixed step when the method
 * has MBS_M_FIXED_STEP, else adaptive with Hairer's controller), or one of
 * GSL's steppers. */
typedef enum {
    MBS_EXPLICIT_TABLEAU, /* methods/integrators/explicit/tableau.h: rk4, dopri5, tsit5, vern6, plugins */
    MBS_EXPLICIT_RKF45,   /* GSL rkf45, adaptive */
    MBS_EXPLICIT_RK8PD    /* GSL rk8pd, adaptive */
} mbs_explicit_kind;

typedef struct mbs_explicit_variant {
    const mbs_accel_def *accel;
    mbs_explicit_kind kind;
    const mbs_tableau *tab; /* MBS_EXPLICIT_TABLEAU */
} mbs_explicit_variant;

extern const mbs_method_ops mbs_explicit_ops;

/* The formulation workspace inside an explicit method's state (from
 * mbs_explicit_ops.alloc), e.g. to read a formulation's diagnostics. */
void *mbs_explicit_accel_ws(void *state);

/* An ODE formulation as data, for composing it with integrators at run time
 * (MBS_ODE_FORMULATION_METHODS defines mbs_ode_formulation_<fsym>; the list
 * follows registry.def). */
typedef struct mbs_ode_formulation {
    const char *name;           /* "index1" */
    const mbs_accel_def *accel;
    const char *summary, *citation;
    unsigned flags;             /* MBS_M_* flags of the formulation */
    int lambda;                 /* 1: yields the multipliers */
    const mbs_param_def *params;
    size_t n_params;
} mbs_ode_formulation;

size_t mbs_ode_formulation_count(void);
const mbs_ode_formulation *mbs_ode_formulation_at(size_t i);

/* ---- run-time registration of tableaux (plugins) -----------------------------------
 * A set of methods made at run time: one mbs_method_def per ODE formulation
 * and registered tableau, named FORMULATION/TABLEAU, owning deep copies of
 * the tableaux.  The compiled-in registry (registry.def) is not touched; a
 * caller that wants these methods found by name (the plugin loader) looks
 * them up here with mbs_method_set_find or hands their definitions over. */
typedef struct mbs_method_set {
    const mbs_method_def **defs; /* n method definitions (owned) */
    size_t n, cap;
    void **owned;                /* every other allocation (tableau copies, strings) */
    size_t n_owned, cap_owned;
} mbs_method_set;

/* Register tableau `tab` (copied; the caller keeps ownership of tab and its
 * arrays) for every ODE formulation: adds mbs_ode_formulation_count() methods
 * FORMULATION/tab->name to `set` (zero-initialise a set before its first
 * use).  Adaptive (MBS_M_ADAPTIVE) when tab->bhat is given, else fixed step;
 * orders {p, p, p or 0} as for the compiled-in pairs.  The tableau must pass
 * mbs_tableau_validate (structure, row sums, order conditions of b and bhat
 * up to the claimed orders), and its name must not be that of a compiled-in
 * integrator (rk4, rkf45, rk8pd, dopri5, tsit5, ...) or of one already in
 * `set`.  Returns MBS_OK; MBS_BAD_INPUT with a one-line message in err (set
 * unchanged); MBS_NO_MEMORY (set unchanged). */
int mbs_explicit_register_tableau(mbs_method_set *set, const mbs_tableau *tab, char *err,
                                  size_t errlen);
/* The method of `set` named `name` ("index1/mytab"), or NULL. */
const mbs_method_def *mbs_method_set_find(const mbs_method_set *set, const char *name);
/* Free everything the set owns (its method definitions become invalid); the
 * set is left empty and reusable.  NULL is a no-op. */
void mbs_method_set_free(mbs_method_set *set);

/* Define `const mbs_method_def sym` combining accel `acc` with integrator `kind`
 * (tableau `tabp` for MBS_EXPLICIT_TABLEAU).  p_q, p_v, p_l: nominal orders;
 * fixed: 1 for a fixed-step method; extra_flags: formulation flags; prm:
 * parameter table (static array) of the formulation. */
#define MBS_EXPLICIT_METHOD(sym, nm, summ, cite, acc, kindv, tabp, fixed, p_q, p_v, p_l,     \
                            extra_flags, prm)                                               \
    static const mbs_explicit_variant sym##_variant = {                                     \
        .accel = &acc, .kind = kindv, .tab = tabp};                                         \
    const mbs_method_def sym = {                                                            \
        .name = nm,                                                                         \
        .summary = summ,                                                                    \
        .citation = cite,                                                                   \
        .order = {p_q, p_v, p_l},                                                           \
        .flags = ((fixed) ? MBS_M_FIXED_STEP : MBS_M_ADAPTIVE) | (extra_flags),             \
        .params = prm,                                                                      \
        .n_params = sizeof prm / sizeof prm[0],                                             \
        .variant = &sym##_variant,                                                          \
        .ops = &mbs_explicit_ops,                                                           \
    };

/* The in-tree tableaux (erk_tableaux.c, one entry each in tableaux.def). */
#include "tableaux.def"
#define MBS_TABLEAU_DECL_(sym, nm, p, phat, fs, summ, cite, unused)                         \
    extern const mbs_tableau mbs_tableau_##sym;
MBS_TABLEAUX(MBS_TABLEAU_DECL_, ~)

/* The explicit integrators: X(symbol, "name", kind, tableau or NULL, fixed,
 * order, "summary", "citation", formulation...): every tableau of tableaux.def,
 * then GSL's rkf45 and rk8pd (library code: kept as GSL steppers).  Orders are
 * nominal for q, v (and lambda when the formulation yields multipliers). */
#define MBS_EXPLICIT_TABLEAU_X_(sym, nm, p, phat, fs, summ, cite, X, ...)                   \
    X(sym, nm, MBS_EXPLICIT_TABLEAU, &mbs_tableau_##sym, (phat) == 0, p, summ, cite,        \
      __VA_ARGS__)
#define MBS_EXPLICIT_INTEGRATORS(X, ...)                                                    \
    MBS_TABLEAUX(MBS_EXPLICIT_TABLEAU_X_, X, __VA_ARGS__)                                   \
    X(rkf45, "rkf45", MBS_EXPLICIT_RKF45, NULL, 0, 4,                                       \
      "GSL Runge-Kutta-Fehlberg 4(5), adaptive", "GSL gsl_odeiv2_step_rkf45", __VA_ARGS__)  \
    X(rk8pd, "rk8pd", MBS_EXPLICIT_RK8PD, NULL, 0, 8, "GSL Prince-Dormand 8(9), adaptive",  \
      "GSL gsl_odeiv2_step_rk8pd", __VA_ARGS__)

#define MBS_ODE_PAIR_(isym, iname, kindv, tabp, fixed, p, isumm, icite, fsym, fname, acc,   \
                      fsumm, fcite, fflags, lam, prm)                                       \
    MBS_EXPLICIT_METHOD(mbs_method_##fsym##_##isym, fname "/" iname, isumm ", " fsumm,     \
                        fcite "; " icite, acc, kindv, tabp, fixed, p, p, (lam) ? (p) : 0,  \
                        fflags, prm)

/* One line at the end of a formulation file: FORMULATION/INTEGRATOR for every
 * explicit integrator, and the formulation's mbs_ode_formulation.  fsym:
 * symbol (mbs_method_<fsym>_<integrator>); fname: the name before '/'; acc:
 * its mbs_accel_def; fsumm, fcite: what it is and its source; fflags: MBS_M_*
 * flags; lam: 1 when it yields the multipliers; prm: its parameter table (a
 * static array). */
#define MBS_ODE_FORMULATION_METHODS(fsym, fname, acc, fsumm, fcite, fflags, lam, prm)      \
    MBS_EXPLICIT_INTEGRATORS(MBS_ODE_PAIR_, fsym, fname, acc, fsumm, fcite, fflags, lam,   \
                             prm)                                                          \
    const mbs_ode_formulation mbs_ode_formulation_##fsym = {                               \
        .name = fname,                                                                     \
        .accel = &acc,                                                                     \
        .summary = fsumm,                                                                  \
        .citation = fcite,                                                                 \
        .flags = fflags,                                                                   \
        .lambda = lam,                                                                     \
        .params = prm,                                                                     \
        .n_params = sizeof prm / sizeof prm[0],                                            \
    };

/* registry.c: the declarations and addresses of a formulation's methods. */
#define MBS_ODE_DECL_(isym, iname, kindv, tabp, fixed, p, isumm, icite, fsym)               \
    extern const mbs_method_def mbs_method_##fsym##_##isym;
#define MBS_ODE_ADDR_(isym, iname, kindv, tabp, fixed, p, isumm, icite, fsym)               \
    &mbs_method_##fsym##_##isym,

#endif
