/* Private to methods/radau5*.c and radau_coeffs.c: the state
 * of the Radau IIA methods, shared by radau5.c (step loop, Newton, error
 * estimate, controller, order selection), radau_methods.c (the method
 * definitions and parameters), radau5_linalg.c (RADAU5's s = 3 coefficients
 * and the linear systems of the simplified Newton iteration), radau_coeffs.c
 * (the s = 3, 5, 7 coefficients of the variable-order methods) and
 * radau5_stages.c (the formulation, stage residual, error estimate,
 * predictor, scaling). */
#ifndef MBS_RADAU5_IMPL_H
#define MBS_RADAU5_IMPL_H

#include <gsl/gsl_linalg.h>

#include "../../formulations/dae_form.h"
#include "../../formulations/index1.h"
#include "../../formulations/projection.h"
#include "../../linsol/dense_small.h"

/* A function off the adaptive step's hot path (fixed-step mode, failures):
 * out of line and in the cold text section, so that the code a step runs
 * stays small enough for the instruction cache (docs/methods.md, the Radau
 * IIA section). */
#if defined(__GNUC__)
#define RADAU_COLD __attribute__((noinline, cold))
#else
#define RADAU_COLD
#endif

/* Values of the parameter `linsol`. */
enum { RADAU_LS_FULL = 0, RADAU_LS_LU = 1, RADAU_LS_UMFPACK = 2, RADAU_LS_CHOLMOD = 3,
       RADAU_LS_AUTO = 4 };

/* The settings of one Radau method, from its formulation and integrator
 * (mbs_radau_variant). */
typedef struct radau_variant {
    mbs_form_kind kind;
    int index1;   /* index-1 formulation (Eqs. (83)-(84)) as an ODE, instead of kind */
    int fixed;    /* fixed-step mode */
    int project;  /* projection after accepted steps ([arnold2016dae] Eqs. (88)-(91)) */
    int stages;   /* s = 3, 5, 7; 0: variable order (RADAU), s from the
                     parameters nsmin .. nsmax */
} radau_variant;

/* A Radau integrator's own settings (mbs_dae_integrator.variant). */
typedef struct radau_integrator {
    int stages;       /* as radau_variant.stages */
    const char *code; /* Hairer's code it is ("RADAU5"), or NULL */
} radau_integrator;

/* radau_methods.c: the settings of method m (a pair of the DAE axis). */
void mbs_radau_variant(const mbs_method_def *m, radau_variant *v);

/* Parameter indices shared by the method tables (radau_methods.c) and the
 * integrator (radau5.c); linsol, nsmin and nsmax are found by name. */
enum { RADAU_P_KAPPA, RADAU_P_NIT, RADAU_P_EPS_G };

/* radau5.c: the integrator of every Radau method. */
extern const mbs_method_ops mbs_radau_ops;

enum { RADAU_SMAX = 7 };
/* fixed-step mode: Newton iterations per step while the iteration contracts */
enum { RADAU_NIT_FIXED = 50 };

/* Coefficients of the s-stage Radau IIA method: nodes, A^-1, the embedded
 * estimate's dd, and RADAU's transformation T^-1 A^-1 T = diag(u1,
 * [alpha_p -beta_p; beta_p alpha_p], p = 1..(s-1)/2). */
typedef struct radau_coeffs {
    int s;
    double c[RADAU_SMAX], Ainv[RADAU_SMAX][RADAU_SMAX], dd[RADAU_SMAX], u1;
    double alpha[(RADAU_SMAX - 1) / 2], beta[(RADAU_SMAX - 1) / 2];
    double Tm[RADAU_SMAX][RADAU_SMAX], TI[RADAU_SMAX][RADAU_SMAX];
} radau_coeffs;

/* radau_coeffs.c: the coefficients for s = 3, 5 or 7, computed (MBS_OK,
 * MBS_BAD_INPUT for another s, MBS_LIBRARY_FAILURE, MBS_NO_MEMORY). */
int mbs_radau_coeffs(int s, radau_coeffs *k);

typedef struct radau_state {
    const radau_variant *var; /* &var_store */
    radau_variant var_store;
    mbs_dae_form *form;     /* for index1: an index-2 form, used for the dimensions only */
    mbs_index1 *ix;         /* index-1 variant: KKT solve for v' and lambda */
    double *lam1, *jy, *jf; /* index-1: multipliers of the last evaluation, FD work */
    mbs_projection *proj;
    size_t n, N; /* N = ns n, the current stage vector length */
    double kappa;
    int kappa_set, nit;
    double jpoint; /* parameter jpoint of the variable-order family (0: at y_n) */
    radau_coeffs tab[3];   /* s = 3, 5, 7 (those in [nsmin, nsmax]) */
    const radau_coeffs *co; /* the current stage count co->s */
    int nsmin, nsmax;
    int cont_ns;            /* stages of the polynomial in cont (0: none yet) */
    double cont_c[RADAU_SMAX];
    gsl_matrix *E0, *J0, *Es, *T1;
    gsl_matrix_complex *Tc[3];
    double zdg[3][3 * MBS_SMALL_NMAX]; /* the complex factors' diagonals for the solves
                                          (mbs_small_zlu_diag; orders <= MBS_SMALL_NMAX) */
    gsl_permutation *pc[3], *p1;
    gsl_permutation *pcr[3], *p1r; /* order n - n_q: the reduced systems (radau_reducible) */
    int red;                       /* the factors are of the reduced systems */
    double ig1, igr[3], igi[3];    /* 1/gamma: h/u1, h/(alpha_p + i beta_p) */
    gsl_vector *b1;        /* right-hand side and solution of the real solve */
    gsl_vector_complex *bc; /* of the complex solves */
    double *W; /* transformed residual (ns n) */
    /* RADAU5's transformed iteration (problem flag MBS_PB_CONSTANT_MASS, dense
     * DAE forms, adaptive modes): 1 when it runs, and F = (T^-1 (x) I) Z (ns n)
     * kept over the iteration (radau5_linalg.c mbs_radau_solve_transformed) */
    int cmass;
    double *Fz;
    double *y, *Z, *dZ, *R, *Yd, *F0, *F1, *F2, *cont, *scal, *rs, *cs, *err, *Ys, *Es_w;
    /* Index-3 form (adaptive): the weights atol + rtol |y_i| without the index
     * division, for the Newton iteration's second stop (radau_newton_index3);
     * NULL otherwise */
    double *scal1;
    double *yd0; /* y'(t_n) of the differential components (first-step predictor) */
    gsl_matrix *Mw;
    gsl_permutation *pm;
    gsl_vector *bm, *xm;
    int lsk;           /* parameter linsol: RADAU_LS_FULL or a structured backend */
    double *Wx;        /* structured path: KKT solutions w1 | ... | w_ns (ns n) */
    mbs_index1 *ix0;   /* structured path: y'(t_0) (first-step predictor) */
    int *v_index2;     /* index-3 form: 1 for the velocities the constraints see
                          (index-2 variables, error scaled by h), 0 for the others */
    double *ydense;    /* dense output: the polynomial's value (n) */
    double t_dense, h_dense; /* dense output: t_n+1 and h of the step just accepted */
    /* Switching functions of an extended problem (radau_switch.c; adaptive
     * modes only): their number (0: none), values at t_n (sw0) and at the end
     * of the current attempt (sw1), the side (+1, -1) of the piece the
     * solution is on (swsg), the function the current attempt was cut to land
     * on (sw_land, -1: none), work (swy: a polynomial value, n), and how
     * often the landing attempt was redone to its own root (sw_redo). */
    size_t nsw;
    double *sw0, *sw1, *swy;
    int *swsg;
    int sw_land, sw_redo;
} radau_state;

int mbs_radau_tableau(radau_coeffs *k);
void mbs_radau_scaling(const mbs_dae_form *f, double h, double *rs, double *cs);
void mbs_radau_assemble(const radau_coeffs *k, size_t n, const gsl_matrix *E0,
                     const gsl_matrix *J0, const double *rs, const double *cs, double h,
                     gsl_matrix *T);
int mbs_radau_lu_singular(const gsl_matrix *LU);
/* 1 when the Newton systems at E0, J0 reduce to order n - n_q (RADAU5's
 * second-order structure); radau5.c sets st->red from it per Jacobian. */
int mbs_radau_reducible(const radau_state *st);
int mbs_radau_factor(radau_state *st, mbs_ctx *ctx, double t, double h);
/* dZ of one simplified Newton iteration from the residual R; Zadd (or NULL)
 * += dZ in the same pass. */
int mbs_radau_solve_stages(radau_state *st, mbs_ctx *ctx, double t, double *Zadd);
void mbs_radau_kron(const double M[RADAU_SMAX][RADAU_SMAX], int s, size_t n, size_t len,
                    const double *x, double d, double *y);
int mbs_radau_solve1(radau_state *st, mbs_ctx *ctx, double t, const double *rhs, double *e);
/* RADAU5's transformed iteration with a constant E = diag(I, M, 0): from the
 * stage residuals R_i = -F(Y_i) (mbs_radau_stage_rhs) and F = (T^-1 (x) I) Z,
 * w = the transformed Newton increment (in st->W), F += w, Z = (T (x) I) F. */
int mbs_radau_solve_transformed(radau_state *st, mbs_ctx *ctx, double h);

/* radau5_stages.c */
int mbs_radau_form_mass(radau_state *st, mbs_ctx *ctx, double t, const double *y, gsl_matrix *E);
int mbs_radau_form_rhs(radau_state *st, mbs_ctx *ctx, double t, const double *y, double *F);
int mbs_radau_form_jac(radau_state *st, mbs_ctx *ctx, double t, const double *y, gsl_matrix *J);
void mbs_radau_form_from_state(radau_state *st, const double *state, double *y);
void mbs_radau_form_to_state(radau_state *st, const double *y, double *state);
void mbs_radau_stage_derivatives(radau_state *st, double h);
int mbs_radau_residual(radau_state *st, mbs_ctx *ctx, double t, double h);
/* R_i = -F(t + c_i h, Y_i): the stage residuals without E Yd_i (transformed
 * iteration, st->cmass; the mass matrix is not evaluated). */
int mbs_radau_stage_rhs(radau_state *st, mbs_ctx *ctx, double t, double h);
double mbs_radau_rms_scaled(const double *x, const double *scal, size_t len, size_t n);
int mbs_radau_estimate(radau_state *st, mbs_ctx *ctx, double t, double h, int first_or_reject,
                    int e0_current, double *errn);
void mbs_radau_update_solution(radau_state *st);
void mbs_radau_first_derivative(radau_state *st, mbs_ctx *ctx, double t);
void mbs_radau_start_values(radau_state *st, int first, double h, double hold);
void mbs_radau_set_scal(radau_state *st, double rtol, double atol, double h, int index_aware);

/* radau_switch.c: the switching functions (problem.h mbs_extension.switches).
 * alloc: st->nsw and the work arrays (MBS_NO_MEMORY); start: their sides at
 * (t, st->y); find: after an attempt's Newton iteration converged, the first
 * root theta in (0, 1) of a function that changed sign over the attempt, on
 * its collocation polynomial (*which = -1, *theta = 1: none to land on); on a
 * landing attempt, *which = sw_land with theta near 1 (above 1 too: stretch)
 * where that attempt's own root is off its end;
 * accept: the sides after an accepted attempt. */
int mbs_radau_switch_alloc(radau_state *st, mbs_ctx *ctx);
void mbs_radau_switch_free(radau_state *st);
int mbs_radau_switch_start(radau_state *st, mbs_ctx *ctx, double t);
int mbs_radau_switch_find(radau_state *st, mbs_ctx *ctx, double t, double h, double *theta,
                          int *which);
/* restrict: the current attempt's stage values Z moved to the attempt that
 * ends at theta (the starting values of the landing attempt). */
void mbs_radau_switch_restrict(radau_state *st, double theta);
void mbs_radau_switch_accept(radau_state *st);

#endif
