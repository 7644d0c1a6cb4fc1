/* Explicit ODE integrators over an acceleration evaluator: the integrators of
 * the ODE axis (methods/framework/ode_axis.h).  Every ODE formulation is run by
 * every integrator listed here: the tableaux of tableaux.def (one generic
 * stepper, explicit.c), then GSL's rkf45 and rk8pd (MBS_EXPLICIT_INTEGRATORS);
 * methods/registry.c forms the pairs with mbs_explicit_pair, and plugins add
 * tableaux at run time (mbs_explicit_register_tableau).  A new explicit
 * integrator is one line in tableaux.def (or in MBS_EXPLICIT_INTEGRATORS with
 * its stepper in explicit.c): it then exists for every formulation. */
#ifndef MBS_EXPLICIT_H
#define MBS_EXPLICIT_H

#include "../../framework/method.h"
#include "../../framework/ode_axis.h"
#include "tableau.h"

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

/* One explicit integrator (the pairs FORMULATION/name of every ODE formulation). */
typedef struct mbs_explicit_integrator {
    const char *name, *summary, *citation;
    mbs_explicit_kind kind;
    const mbs_tableau *tab; /* MBS_EXPLICIT_TABLEAU */
    int fixed;              /* 1: fixed step (MBS_M_FIXED_STEP), else adaptive */
    double order;           /* nominal order in q, v (and lambda, when the formulation yields it) */
} mbs_explicit_integrator;

/* The integrators of MBS_EXPLICIT_INTEGRATORS, in that order; the last entry
 * has name NULL. */
extern const mbs_explicit_integrator mbs_explicit_integrators[];

/* FORMULATION/INTEGRATOR: the method m (with its variant var) of formulation f
 * run by integrator in, as the registry forms every pair of the ODE axis (name,
 * summary, citation, orders, flags and parameters: methods/framework/ode_axis.h).
 * Its three strings are written to text, one after the other.  Returns the
 * bytes they need; var, m and text are written only when that is <= len (m's
 * strings then point into text). */
size_t mbs_explicit_pair(const mbs_ode_formulation *f, const mbs_explicit_integrator *in,
                         mbs_explicit_variant *var, mbs_method_def *m, char *text, size_t len);

#endif
