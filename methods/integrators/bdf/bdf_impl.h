/* Private to methods/bdf*.c: the state of the BDF methods,
 * shared by bdf.c (methods, allocation, starter, fixed and adaptive step
 * loops), bdf_coeffs.c (error weights, variable-step BDF coefficients, divided
 * differences, order estimates and selection) and bdf_newton.c (iteration
 * matrix, residual, corrector, one step attempt, initial derivative). */
#ifndef MBS_BDF_IMPL_H
#define MBS_BDF_IMPL_H

#include <gsl/gsl_linalg.h>

#include "../../formulations/dae_form.h"
#include "../../formulations/index1.h"
#include "../../framework/method.h"
#include "../../framework/odesolve.h"
#include "../../formulations/projection.h"

enum {
    BDF_KMAX = 5,
    BDF_NHIST = 8,     /* stored solution points (need k + 3 <= 8) */
    BDF_MAXIT = 4,     /* Newton iterations per attempt (DASSL) */
    BDF_MAXIT_FIXED = 20, /* fixed-step methods: no smaller step to fall back on; iterated
                             to round-off (newton_tol 1e-15) */
    BDF_MAXFAIL = 12   /* consecutive failed attempts before giving up */
};

/* Values of the parameter `linsol` (choices BDF_LINSOL_CHOICES). */
enum { BDF_LS_FULL = 0, BDF_LS_LU = 1, BDF_LS_UMFPACK = 2, BDF_LS_CHOLMOD = 3, BDF_LS_AUTO = 4 };
#define BDF_LINSOL_CHOICES "full,lu,umfpack,cholmod,auto"

/* The settings of one BDF method, from its formulation and integrator. */
typedef struct bdf_variant {
    mbs_form_kind kind;
    int fixed;   /* fixed step, fixed order */
    int project; /* projection after accepted steps */
} bdf_variant;

/* Parameter indices (tables below keep this order; absent ones are -1). */
typedef struct bdf_state {
    const bdf_variant *var; /* &var_store */
    bdf_variant var_store;
    mbs_dae_form *form;
    mbs_projection *proj;
    mbs_index1 *ix;
    mbs_ctx *ctx; /* valid during integrate() */
    size_t n, nq, nv, nl, nr;
    double kappa, newton_tol;
    int maxord, order;
    int lsk;       /* parameter linsol: BDF_LS_FULL or a structured backend (below) */
    /* history: hy[0] = y_n (newest), ht[0] = t_n */
    double *hy[BDF_NHIST], ht[BDF_NHIST];
    int nhist;
    /* work vectors (length n) */
    double *y, *yp, *ypred, *base, *R, *F, *dy, *w, *lte, *y0p, *tmp, *dd[BDF_NHIST];
    double *state; /* q | v | lambda */
    double *ydense; /* dense output: the interpolant's value (n) */
    int kdense;     /* dense output: the order of the step just accepted */
    int *errmask;  /* error test: 1 in it, 2 in it scaled by h, 0 excluded */
    int *newtmask; /* Newton norm: index of the component (scale h^(index-1)) */
    int *plainmask; /* index-3 form, adaptive: all 1 (index3_second_stop); else NULL */
    double hnow;   /* step size of the current attempt */
    double hbaum;  /* h in alpha0 = C/h (Baumgarte2) */
    /* iteration matrix */
    gsl_matrix *E, *J, *S;
    gsl_permutation *perm;
    gsl_vector *rhs;
    double *rs, *cs; /* row and column scaling of S (length nr) */
    double c0f;      /* c_0 at the factorisation (0: none) */
    int jac_fresh;   /* J computed in this step attempt */
    double snewt;    /* rho/(1 - rho) carried between steps (DASSL's S) */
    /* starter (fixed-step methods) */
    mbs_ode_solver *starter; /* rk8pd on the index-1 ODE at 1e-13 */
    double starter_h;        /* its first trial step */
    double *sy, *svd; /* (q, v) and v' of the starter */
} bdf_state;

/* bdf_coeffs.c */
double mbs_bdf_wnorm(const bdf_state *st, const double *x, const int *mask);
void mbs_bdf_set_weights(bdf_state *st, const double *y, double rtol, double atol);
void mbs_bdf_lagrange_weights(const double *ts, int m, double t, double *L);
void mbs_bdf_coefficients(const double *x, int k, double *c);
double mbs_bdf_order_estimate(bdf_state *st, double *const *ys, const double *ts, int p,
                             double h);
int mbs_bdf_select_order(bdf_state *st, int k, double err, double h, int nconst, double *est);

/* bdf_newton.c */
int mbs_bdf_attempt(bdf_state *st, double h, int k, double *err);
void mbs_bdf_push_history(bdf_state *st, double t);
int mbs_bdf_report(bdf_state *st, double t);
int mbs_bdf_initial_derivative(bdf_state *st, double t, const double *y);

#endif
