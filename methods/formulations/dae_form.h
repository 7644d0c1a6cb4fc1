/* The equations of motion as a linearly implicit DAE  E(y) y' = F(t, y)
 * ([arnold2016dae], Section 4.2, Eqs. (71), (77), (79), (87), (92)), shared by the
 * implicit DAE integrators (Radau IIA, BDF).
 *
 * y = (q, v, lambda [, mu]),  E = diag(I_nq, M(q), 0 [, 0]):
 *   index-3 ([arnold2016dae] Eq. (77)):  F = (H v, f - B^T lambda, g)
 *   index-2 (Eq. (79)):           F = (H v, f - B^T lambda, B v + g_t)
 *   GGL (Eq. (92)):               F = (H v - G^T mu, f - B^T lambda, g, B v + g_t)
 *   Baumgarte2 (Eq. (87)):        F = (H v, f - B^T lambda, B v + g_t + (C/h) g)
 * with B = G H (problems/problem.h).  The problem is called only through the
 * counting wrappers of methods/framework/method.h.
 *
 * The index-3 scaling of [arnold2016dae] Eqs. (69)-(70) (iteration matrix bounded as
 * h -> 0) is done by the integrator (scale the constraint rows and the
 * multiplier unknowns); the form only provides E, F and dF/dy. */
#ifndef MBS_DAE_FORM_H
#define MBS_DAE_FORM_H

#include <float.h>
#include <gsl/gsl_matrix.h>
#include <math.h>
#include <stddef.h>

#include "../linsol/linsol.h"
#include "../framework/dae_axis.h"
#include "../framework/method.h"

/* The formulations of the DAE axis evaluated here (framework/dae_axis.h):
 * index3, index2, ggl, baumgarte2 (their mbs_form_kind). */
extern const mbs_dae_formulation mbs_dae_formulation_index3, mbs_dae_formulation_index2,
    mbs_dae_formulation_ggl, mbs_dae_formulation_baumgarte2;

typedef struct mbs_dae_form {
    mbs_form_kind kind;
    size_t nq, nv, nl, nmu, n;  /* nmu = nl for GGL, else 0; n = nq + nv + nl + nmu */
    int *var_index;             /* per component of y: 1 for q and v; for lambda 3 (index-3 form)
                                   or 2 (index-2, GGL, Baumgarte2); for mu 2.  Integrators use it
                                   for index-aware error scaling (Radau: scale by h^(index-1)) or to
                                   exclude algebraic components from the error test (BDF). */
    double baumgarte_C;         /* Baumgarte2 only: alpha0 = C / h ([arnold2016dae] Eq. (87));
                                   default 1, set by the integrator from its parameter */
    double h;                   /* current step size, set by the integrator (Baumgarte2, scaling) */
    size_t nx;                  /* extended problems (problems/problem.h, MBS_PB_EXTENDED): the
                                   extra variables x, y = q | v | lambda | x, n = ny; E, F are
                                   the problem's own (index2/index3 kinds only, matching the
                                   index of the problem's constraint rows); else 0 */
    /* ---- private workspace (do not touch) ---- */
    gsl_matrix *M;              /* nv x nv mass matrix */
    gsl_matrix *B;              /* max(nl,1) x nv, B = G H */
    gsl_matrix *Gt;             /* max(nl,1) x nq, G (GGL with H != I only; else NULL) */
    double *g, *gt, *w;         /* constraint, g_t, work (length max(nq, nv, nl, 1)) */
    double *yp, *F0, *F1;       /* perturbed y and right-hand sides (length n) */
    int deriv;                  /* 1: dF/dy from the problem's derivative callbacks (problem.h;
                                   H = I, not extended, at least one callback given) */
    gsl_matrix *Kd, *Zd, *Bp;   /* deriv: nq x nq, max(nl,1) x nq, max(nl,1) x nq scratch */
    /* sparse mode (mbs_dae_form_alloc_sparse; all zero/NULL in dense mode) */
    int sparse;                 /* 1: structured iteration matrix on an mbs_linsol backend */
    int ls_kind;                /* its backend (linsol.h) */
    int native;                 /* sparse mode with the problem's triplet callbacks: M, B
                                   above are NULL and F uses Mt, Bt */
    mbs_triplets Mt, Bt;        /* M and B = G (H = I) as triplets at the last evaluation */
    mbs_triplets Bj, It;        /* B at the last KKT factorisation; identity (GGL) */
    mbs_linsol *kkt;            /* [M B^T; B 0] */
    mbs_linsol *kktg;           /* GGL: [I G^T; G 0] */
    double *ka, *kg, *kx, *kl;  /* KKT right-hand sides and solutions (columns of n_v, n_l) */
} mbs_dae_form;

/* Allocate the form for ctx->pb.  Returns MBS_OK, MBS_NO_MEMORY or
 * MBS_BAD_INPUT (unknown kind; reason in ctx).  *out is NULL on failure. */
int mbs_dae_form_alloc(mbs_dae_form **out, mbs_ctx *ctx, mbs_form_kind kind);
/* Accepts NULL. */
void mbs_dae_form_free(mbs_dae_form *f);

/* E(y) (n x n): diag(I_nq, M(q), 0). */
int mbs_dae_form_mass(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y, gsl_matrix *E);
/* F(t, y) (length n).  Baumgarte2 needs f->h > 0 and f->baumgarte_C > 0
 * (MBS_BAD_INPUT with a reason otherwise). */
int mbs_dae_form_rhs(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y, double *F);
/* dF/dy (n x n): analytic blocks where the contract gives them (B, G, -B^T, H),
 * forward finite differences for f_q, f_v, (B^T lambda)_q, (B v)_q, (H v)_q,
 * (G^T mu)_q; counted through the ctx wrappers.  When H = I and the problem
 * provides derivative callbacks (problem.h: force_q, force_v, gtlambda_q,
 * gw_q) these terms come from them, each missing one from forward
 * differences of its own term only (f_q, f_v: n_q, n_v force evaluations;
 * the Hessian terms: n_q constraint-Jacobian evaluations), no evaluation of
 * the whole F.  Counted as one Jacobian (ctx->cnt.jacobians).  Does not
 * include the derivative of E(y) y' with respect to q (simplified Newton
 * neglects it). */
int mbs_dae_form_jac(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y, gsl_matrix *J);
/* Private to methods/dae_form*.c: dF/dy from the derivative callbacks (f->deriv,
 * J zero on entry; dae_form_deriv.c) and the forward-difference step. */
int mbs_dae_form_jac_deriv(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y,
                           gsl_matrix *J);
static inline double mbs_dae_form_fd_step(double x)
{
    return sqrt(DBL_EPSILON) * fmax(1.0, fabs(x));
}

/* y from the harness state q|v|lambda (mu = 0), and back (drops mu). */
void mbs_dae_form_from_state(const mbs_dae_form *f, const double *state, double *y);
void mbs_dae_form_to_state(const mbs_dae_form *f, const double *y, double *state);

/* ---- additions ---------------------------------------------------------------- */
/* Short name of a kind: "index3", "index2", "ggl", "baumgarte2". */
const char *mbs_dae_form_kind_name(mbs_form_kind kind);
/* 1 when row i of F is a position-level constraint (g for index-3 and GGL),
 * i.e. a row the integrator scales by 1/h in the index-3 scaling; else 0. */
int mbs_dae_form_position_row(const mbs_dae_form *f, size_t i);

/* ---- sparse mode ----------------------------------------------------
 * A structured simplified Newton for the BDF-type corrector  A dy = -R,
 * A = c0 E - dF/dy, R = E y' - F, without any n x n matrix.  dF/dy is
 * approximated by dropping f_q, f_v and the second-derivative terms
 * (B^T lambda)_q, (B v)_q, (G^T mu)_q (an O(h), O(h^2) perturbation of the
 * iteration matrix: only the Newton rate changes, not the converged solution).
 * With H = I (so G = B) and r = -R the rows then read
 *   q:  c0 dq - dv (+ G^T dmu) = r_q,           v:  c0 M dv + B^T dlambda = r_v,
 *   index-2 (79c):  -B dv = r_c,                index-3 (77c):  -G dq = r_c,
 *   Baumgarte2 (87c):  -(B dv + alpha0 G dq) = r_c,
 *   GGL (92c, d):   -G dq = r_g,  -B dv = r_c,
 * and, substituting dq = (r_q + dv)/c0 (GGL: after dv), reduce to the KKT
 * systems of [arnold2016dae] Eq. (17), which do not depend on c0 or h:
 *   [M B^T; B 0] (dv, dlambda/c0) = (r_v/c0, b),  b = -r_c (index-2, GGL),
 *     -c0 r_c - B r_q (index-3), (-r_c - beta B r_q)/(1 + beta), beta = alpha0/c0
 *     (Baumgarte2);
 *   GGL:  [I G^T; G 0] (dq, dmu/c0) = ((r_q + dv)/c0, -r_g).
 * F and E y' are evaluated from triplets (mbs_mass_sparse, mbs_jacobian_sparse)
 * for problems with those callbacks, else from the dense callbacks converted
 * to triplets (full pattern).  Requires H = I, no extended variables, no
 * non-holonomic rows, and constraints when M is singular (MBS_UNSUPPORTED with
 * a reason otherwise).  ls_kind: MBS_LS_DENSE, MBS_LS_UMFPACK or MBS_LS_CHOLMOD,
 * or -1 for F and the residual from triplets without any KKT backend (the
 * SUNDIALS peers with linsol=klu assemble their own Newton matrix). */
int mbs_dae_form_alloc_sparse(mbs_dae_form **out, mbs_ctx *ctx, mbs_form_kind kind,
                              int ls_kind);
/* Index-3 form: which velocities are index-2 variables of the DAE.  Only the
 * velocity components the constraints see (non-zero columns of B = G H, at q
 * and at q perturbed by distinct amounts per coordinate, so that columns that
 * vanish only at one configuration count) are; the others (e.g. elastic
 * coordinates no constraint involves) are ordinary differential components.
 * seen[j] (j < nv) gets 1 or 0.  Integrators scale the error of the index-2
 * velocities by h (RADAU5, Hairer & Wanner II Sect. VII.8) and test the others
 * unscaled: scaling those by h let their error grow like tol/h (crank
 * ended "ok" with scd -2.9 under index3/bdf). */
int mbs_dae_form_index2_velocities(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *q,
                                   int *seen);
/* E(y) yp (length n) without forming E: (yp_q, M(q) yp_v, 0). */
int mbs_dae_form_mass_times(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y,
                            const double *yp, double *out);
/* R = E(y) yp - F(t, y) (length n) in one call: F by mbs_dae_form_rhs into R,
 * then E yp as mbs_dae_form_mass_times forms it (the same numbers as
 * mass_times(out) followed by R = out - R, without the product vector).
 * yp NULL: R = -F(t, y), E yp left out and M not evaluated (the stage
 * residuals of RADAU5's transformed iteration with a constant E). */
int mbs_dae_form_residual(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y,
                          const double *yp, double *R);
/* R_i = E(Y_i) Yp_i - F(t_i, Y_i) for ns stages (blocks of length n of Y, Yp,
 * R): the numbers of ns calls of mbs_dae_form_residual, in one call (Yp NULL:
 * R_i = -F(t_i, Y_i), as there). */
int mbs_dae_form_residual_stages(mbs_dae_form *f, mbs_ctx *ctx, size_t ns, const double *t,
                                 const double *Y, const double *Yp, double *R);
/* Evaluate M, B at (t, y) and factor the KKT matrices (one counted factorisation
 * per mbs_linsol_factor).  MBS_SINGULAR_MATRIX etc. with a reason in ctx. */
int mbs_dae_form_kkt_factor(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y);
/* dy = -A~^-1 R with the last factorisation and the current c0 (one counted
 * solve per KKT solve).  Baumgarte2 reads f->h and f->baumgarte_C. */
int mbs_dae_form_kkt_solve(mbs_dae_form *f, mbs_ctx *ctx, double t, double c0, const double *R,
                           double *dy);
/* The same for a complex shift c = cr + i ci and a complex residual R = Rr + i Ri
 * (Radau IIA's complex block (alpha + i beta)/h E - dF/dy, Hairer & Wanner II,
 * Sect. IV.8): dy = dyr + i dyi = -A~(c)^-1 R.  The KKT matrices do not depend
 * on c and are real, so every KKT solve above becomes two real solves (real and
 * imaginary part of the right-hand side; GGL: four), and the c-dependent
 * algebra (r_v/c, b, dlambda = c (dlambda/c), dq = (r_q + dv)/c) is done in
 * complex arithmetic.  R and dy must not overlap.  ci = 0 gives kkt_solve's
 * result with twice the solves. */
int mbs_dae_form_kkt_solve_complex(mbs_dae_form *f, mbs_ctx *ctx, double t, double cr,
                                   double ci, const double *Rr, const double *Ri, double *dyr,
                                   double *dyi);
/* All blocks of a Radau IIA Newton step in one pass: the real shift c0 and np
 * complex shifts cr[p] + i ci[p] on the one KKT factorisation, with the
 * right-hand sides W = W0 | W1r | W1i | ... (blocks of n = f->n) and the
 * results w in the same layout: w0 = kkt_solve(c0, W0), w(2p+1) + i w(2p+2) =
 * kkt_solve_complex(cr[p], ci[p], ...), column for column the same numbers,
 * but each KKT matrix is solved for all 1 + 2 np columns in one
 * mbs_linsol_solve_k call (CHOLMOD: one pass of each triangular solve instead
 * of 1 + np).  1 + 2 np <= MBS_LINSOL_MAX_RHS. */
int mbs_dae_form_kkt_solve_stages(mbs_dae_form *f, mbs_ctx *ctx, double t, double c0, size_t np,
                                  const double *cr, const double *ci, size_t n, const double *W,
                                  double *w);
/* linsol=auto of radau5 and bdf: 1 when the structured iteration
 * matrix above suits ctx->pb, i.e. sparse mode is supported (H = I, no extended
 * variables, no non-holonomic rows, constraints, a regular M), the system is
 * not small (n_v + n_l >= 20) and the matrix drops only the Hessian terms
 * (O(h^2) in the scaled system): the problem provides force_q and force_v and
 * both vanish at its initial state and at a perturbed one.  Then the
 * h-independent KKT factorisation replaces the dense LUs of dimension n
 * (radau5: one real, one complex per step size change), 3-10x cheaper on
 * chain:N=10, fivebar, doubleloop at similar errors in q, v and lambda.  Small
 * systems keep the full matrix: on the pendulum the saving is 15% while the
 * slower contraction leaves a 3-160x larger lambda error at tol 1e-6 (nightly
 * cases of index2/ and ggl/radau5, t_end 1).  *ls_kind: CHOLMOD for
 * problems with triplet callbacks (mass_sparse, jacobian_sparse) and n_v + n_l
 * >= 30, else the dense KKT LU (MBS_LS_DENSE): measured at tol 1e-7, t_end 2,
 * CPU of CHOLMOD / dense KKT LU: chain:N=10 0.76-1.06, chain:N=20 0.42-0.61,
 * doubleloop (dense M, 41 unknowns) 1.27-1.62.  0 otherwise (use the full dense
 * iteration matrix); -1: out of memory. */
int mbs_dae_form_auto_structured(mbs_ctx *ctx, int *ls_kind);
/* 1 when ctx->pb provides force_q and force_v and both vanish at its initial
 * state and at a perturbed one (the test of mbs_dae_form_auto_structured; the
 * SUNDIALS peers' linsol=auto uses it too), 0 otherwise, -1 out of memory.
 * Clears ctx->reason. */
int mbs_dae_form_forces_vanish(mbs_ctx *ctx);

/* The backends of sparse mode (which = 0: [M B^T; B 0], 1: GGL's [I G^T; G 0]);
 * NULL when absent. */
const mbs_linsol *mbs_dae_form_linsol(const mbs_dae_form *f, int which);

#endif
