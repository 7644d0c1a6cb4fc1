/* Radau IIA, 3 stages, order 5, on the linearly implicit DAE E(y) y' = F(t, y)
 * of methods/formulations/dae_form.h (index-3, index-2 and GGL forms of [arnold2016dae] Section
 * 4.2, Eqs. (77), (79), (92); Remark 8a, Eqs. (73a), (73b), (73d)).
 *
 * After Hairer & Wanner's code RADAU5 (Solving ODEs II, Sect. IV.8 and VII.4):
 *   - collocation equations for Z_i = Y_i - y_n (i = 1..3):
 *         E(Y_i) (1/h) sum_j (A^-1)_ij Z_j = F(t_n + c_i h, Y_i),
 *     E evaluated at the stage values;
 *   - simplified Newton with the iteration matrix (1/h) A^-1 (x) E(y_n) - I (x) J,
 *     J = dF/dy at (t_n, y_n), reused across steps while the contraction
 *     factor theta <= 0.001 (RADAU5's THET) and the step is kept when
 *     1 <= h_new/h <= 1.2.  As in RADAU5 the 3n x 3n system is decoupled by
 *     the eigenvector matrix T of A^-1 into one real n x n system
 *     (u1/h E - J) and one complex n x n system ((alpha + i beta)/h E - J),
 *     factored with GSL's real and complex LU; when the q rows read q' = v
 *     (H = I: index-3 and index-2 forms) the q unknowns are eliminated as in
 *     RADAU5's option for second-order systems (M1 = M2 = n_q), which leaves
 *     systems of order n - n_q (radau5_linalg.c, mbs_radau_reducible);
 *   - with a constant mass matrix (problem flag MBS_PB_CONSTANT_MASS, dense
 *     path, adaptive modes) RADAU5's transformed iteration: F = (T^-1 (x) I) Z kept, no E and
 *     no stage derivatives at the stages (radau5_linalg.c,
 *     mbs_radau_solve_transformed), ||dZ|| below then the norm of the
 *     transformed increment, as RADAU5's;
 *   - Newton stopped when faccon * ||dZ|| <= fnewt; fnewt = kappa when the
 *     parameter `kappa` is given, otherwise RADAU5's default
 *     max(10 eps / rtol', min(0.03, sqrt(rtol'))) (kappa's default 0.03 is the
 *     cap; [arnold2016dae] Example 10 and Fig. 12 study kappa); on the index-3
 *     form (parameter nstop, default unweighted) the iteration then goes on
 *     until the same test holds with every component weighted as an ODE
 *     variable (radau_newton_index3);
 *   - RADAU5's embedded error estimate (ESTRAD: (u1/h E - J) err =
 *     F(t_n, y_n) + E sum_i e_i Z_i / h, with the second, filtered estimate
 *     after the first step and after rejections), tolerances transformed as in
 *     RADAU5 (rtol' = 0.1 rtol^(2/3), atol' = rtol' atol / rtol), RMS norm with
 *     scal_i = atol' + rtol' |y_i| divided by h^(index_i - 1) for index-2 and
 *     index-3 components (RADAU5's NIND2/NIND3 scaling, [arnold2016dae] Sect. 4.2:
 *     "the error estimates for lambda and mu are scaled by the small factor h";
 *     in the index-3 form v counts as index 2, see set_scal);
 *   - step-size control with Gustafsson's predictive controller, factors
 *     limited to [1/8, 5], safety factor depending on the Newton iterations;
 *   - Newton starting values by extrapolation of the previous collocation
 *     polynomial.
 * Index-3 scaling ([arnold2016dae] Eqs. (69)-(70)): the Newton systems are solved for
 * the scaled unknowns (dZ_q / h, dZ_v, h dZ_lambda, dZ_mu) with the momentum
 * rows multiplied by h and the position-level constraint rows by 1/h, so the
 * scaled iteration matrix and its inverse stay bounded as h -> 0 (its limit is
 * [[A^-1, -H, 0, (G^T)], [0, A^-1 M, B^T, 0], [-G, 0, 0, 0], ([0, -B, 0, 0])]).
 *
 * Linear algebra (parameter `linsol`; not for index1/radau5, whose
 * Jacobian is the finite-difference n x n matrix of the index-1 ODE, so it
 * stays dense).  `full` is the dense path above.  `auto` (default)
 * takes the structured path below where it drops only the Hessian terms
 * (mbs_dae_form_auto_structured: H = I and the problem's analytic f_q, f_v
 * vanish), else `full`; the -fixed methods keep `full`.  `lu`, `umfpack`,
 * `cholmod` use the structured simplified Newton of methods/formulations/dae_form.h (sparse
 * mode; H = I problems only, others MBS_UNSUPPORTED): f_q, f_v and the
 * second-derivative terms are dropped from J, which leaves the h-independent
 * KKT matrix [M B^T; B 0] (GGL: also [I G^T; G 0], [arnold2016dae] Eq. (17)) on the
 * linsol.h backend.  The real block (u1/h) uses mbs_dae_form_kkt_solve, the
 * complex block ((alpha + i beta)/h, complex right-hand side W2 + i W3) uses
 * mbs_dae_form_kkt_solve_complex: two real solves per KKT system on the same
 * real factorisation (Hairer & Wanner II, Sect. IV.8).  Factorised only where
 * the dense path evaluates a fresh Jacobian, not when h changes; no row/column
 * scaling (the KKT systems do not degenerate as h -> 0); E y' products by
 * mbs_dae_form_mass_times (the error estimate uses E(y_n) rather than E at the
 * last Jacobian); y'(t_0) for the first-step predictor from the index-1 KKT
 * solve on the same backend.  Nothing n x n is allocated.  Measured
 * (tests/check_sparse_dae.c, tol 1e-6, errors in q / v at t_end against
 * index1/rk8pd at 1e-12): pendulum t = 3, index2 3.1e-7 / 1.6e-6 (full 3.1e-7 /
 * 1.8e-6), ggl 1.8e-7 / 5.9e-7 (2.1e-7 / 5.3e-7), index3 4.5e-6 / 3.4e-5
 * (4.2e-6 / 3.3e-5), steps within 1 of full, about half the factorisations;
 * chain:N=20, t = 0.2: index2 4.4e-8 / 6.1e-7 (6.7e-8 / 8.8e-7), ggl 1.4e-7 /
 * 5.4e-7 (1.2e-7 / 2.0e-6), index3 9.9e-7 / 1.8e-4 (2.5e-6 / 2.2e-4).
 *
 * Fixed-step mode (`-fixed` methods, for convergence studies): N =
 * ceil((t_end - t_0)/h) equal steps of (t_end - t_0)/N <= h, a fresh Jacobian
 * every step and Newton iterated to round-off (see the fixed-step branch of
 * radau_integrate).  A last, shorter step would set the multipliers' error at
 * t_end (their error is local, h^s in the index-2 form): on pendulum (t_end 10)
 * index2/radau13-fixed at h = 0.16 ended with a step of 0.08 and its lambda error
 * equalled that of h = 0.08 (1.627e-9 both), which broke the order fit.
 *
 * Nominal orders (Hairer, Lubich, Roche 1989, LNM 1409; Hairer & Wanner,
 * Solving ODEs II, Sect. VII.4, Theorems 4.4 and 4.8 with s = 3): index-2
 * (and GGL): y h^(2s-1) = h^5, z h^s = h^3, i.e. q 5, v 5, lambda 3; index-3:
 * y h^(2s-1), z h^s, u h^(s-1), i.e. q 5, v 3, lambda 2.  index1/radau5
 * integrates the index-1 formulation ([arnold2016dae] Eqs. (83)-(84)) as the ODE
 * (q, v)' = (H v, v'(t, q, v)) with v', lambda from the KKT solve of
 * methods/formulations/index1.h (E = I, finite-difference Jacobian): order 5 in q, v and
 * lambda (lambda is a function of the order-5 state).
 *
 * The harness state gets q, v, lambda (mu is dropped); mbs_accept receives
 * v' = the derivative of the collocation polynomial at t_n+1 (stage 3), for
 * index1/radau5 the v' of the KKT solve at the accepted point. */
#include <float.h>
#include <gsl/gsl_complex_math.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../core/gslalloc.h"
#include "../../formulations/dae_form.h"
#include "../../formulations/index1.h"
#include "../../formulations/projection.h"
#include "radau5.h"
#include "radau5_impl.h"

static void radau_free(void *p)
{
    radau_state *st = p;
    if (!st)
        return;
    mbs_dae_form_free(st->form);
    mbs_index1_free(st->ix);
    free(st->lam1);
    free(st->jy);
    free(st->jf);
    mbs_project_free(st->proj);
    gsl_matrix_free(st->E0);
    gsl_matrix_free(st->J0);
    gsl_matrix_free(st->Es);
    for (int b = 0; b < 3; b++) {
        gsl_matrix_complex_free(st->Tc[b]);
        gsl_permutation_free(st->pc[b]);
        gsl_permutation_free(st->pcr[b]);
    }
    gsl_matrix_free(st->T1);
    gsl_permutation_free(st->p1);
    gsl_permutation_free(st->p1r);
    gsl_vector_complex_free(st->bc);
    free(st->W);
    free(st->Fz);
    gsl_vector_free(st->b1);
    gsl_matrix_free(st->Mw);
    gsl_permutation_free(st->pm);
    gsl_vector_free(st->bm);
    gsl_vector_free(st->xm);
    free(st->yd0);
    free(st->Wx);
    free(st->v_index2);
    mbs_index1_free(st->ix0);
    mbs_radau_switch_free(st);
    double *bufs[] = {st->y,   st->Z,    st->dZ,   st->R,  st->Yd,  st->F0,   st->F1, st->F2,
                      st->cont, st->scal, st->scal1, st->rs, st->cs, st->err, st->Ys, st->Es_w, st->ydense};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    free(st);
}

/* linsol.h backend of a structured `linsol` choice. */
static int radau_ls_kind(int lsk)
{
    return lsk == RADAU_LS_UMFPACK   ? MBS_LS_UMFPACK
           : lsk == RADAU_LS_CHOLMOD ? MBS_LS_CHOLMOD
                                     : MBS_LS_DENSE;
}

/* The current stage count s: its coefficients and the stage-vector length. */
static void radau_use_stages(radau_state *st, int s)
{
    st->co = &st->tab[s / 2 - 1]; /* s = 3, 5, 7 */
    st->N = (size_t)s * st->n;
}

static int radau_alloc(const mbs_method_def *m, const mbs_params *prm, mbs_ctx *ctx,
                       void **out)
{
    radau_variant vs;
    mbs_radau_variant(m, &vs);
    const radau_variant *var = &vs;
    *out = NULL;
    double kappa = prm->val[RADAU_P_KAPPA];
    if (!(kappa > 0.0))
        return mbs_fail(ctx, MBS_BAD_INPUT, ctx->pb->t0, "%s: kappa=%g must be > 0", m->name,
                        kappa);
    radau_state *st = calloc(1, sizeof *st);
    if (!st)
        return MBS_NO_MEMORY;
    st->var_store = vs;
    st->var = &st->var_store;
    st->kappa = kappa;
    st->kappa_set = (prm->set_mask >> RADAU_P_KAPPA) & 1u;
    st->nit = (int)prm->val[RADAU_P_NIT];
    int ij = mbs_params_find(prm, "jpoint");
    st->jpoint = ij >= 0 && !var->fixed ? prm->val[ij] : 0.0;
    st->nsmin = st->nsmax = var->stages;
    if (var->stages == 0) { /* variable order (RADAU): NSMIN, NSMAX */
        int i0 = mbs_params_find(prm, "nsmin"), i1 = mbs_params_find(prm, "nsmax");
        st->nsmin = 3 + 2 * (i0 >= 0 ? (int)prm->val[i0] : 0); /* choices 3,5,7 */
        st->nsmax = 3 + 2 * (i1 >= 0 ? (int)prm->val[i1] : 2);
        if (st->nsmin > st->nsmax) {
            int nsmin = st->nsmin, nsmax = st->nsmax;
            free(st);
            return mbs_fail(ctx, MBS_BAD_INPUT, ctx->pb->t0,
                            "%s: nsmin=%d must not exceed nsmax=%d", m->name, nsmin, nsmax);
        }
    }
    int ip = mbs_params_find(prm, "linsol");
    st->lsk = ip >= 0 && !var->index1 ? (int)prm->val[ip] : RADAU_LS_FULL;
    if (st->lsk == RADAU_LS_AUTO) {
        int kind, a = var->fixed ? 0 : mbs_dae_form_auto_structured(ctx, &kind);
        if (a < 0) {
            radau_free(st);
            return MBS_NO_MEMORY;
        }
        st->lsk = !a ? RADAU_LS_FULL : kind == MBS_LS_CHOLMOD ? RADAU_LS_CHOLMOD : RADAU_LS_LU;
    }
    int rhs_linsol = ip >= 0 && var->index1 ? (int)prm->val[ip] : MBS_LINSOL_LU;
    const int full = st->lsk == RADAU_LS_FULL;
    int s = full ? mbs_dae_form_alloc(&st->form, ctx, var->kind)
                 : mbs_dae_form_alloc_sparse(&st->form, ctx, var->kind, radau_ls_kind(st->lsk));
    if (s == MBS_OK && var->project)
        s = full ? mbs_project_alloc(&st->proj, ctx, prm->val[RADAU_P_EPS_G])
                 : mbs_project_alloc_backend(&st->proj, ctx, prm->val[RADAU_P_EPS_G],
                                             radau_ls_kind(st->lsk));
    if (s == MBS_OK && !full) /* y'(t_0) by the index-1 KKT solve on the same backend */
        s = mbs_index1_alloc(&st->ix0, ctx,
                             st->lsk == RADAU_LS_UMFPACK   ? MBS_LINSOL_UMFPACK
                             : st->lsk == RADAU_LS_CHOLMOD ? MBS_LINSOL_CHOLMOD
                                                           : MBS_LINSOL_LU);
    if (s == MBS_OK && var->index1)
        s = mbs_index1_alloc(&st->ix, ctx, rhs_linsol);
    for (int ns = st->nsmin; s == MBS_OK && ns <= st->nsmax; ns += 2) /* RADAU5's s = 3 */
        s = ns == 3 ? mbs_radau_tableau(&st->tab[0]) : mbs_radau_coeffs(ns, &st->tab[ns / 2 - 1]);
    if (s != MBS_OK) {
        radau_free(st);
        return s;
    }
    const int npmax = (st->nsmax - 1) / 2;
    size_t nf = st->form->n, n = var->index1 ? st->form->nq + st->form->nv : nf,
           N = (size_t)st->nsmax * n;
    st->n = n;
    radau_use_stages(st, st->nsmin);
    st->lam1 = calloc(st->form->nl + 1, sizeof(double));
    st->jy = malloc(n * sizeof(double));
    st->jf = malloc(n * sizeof(double));
    st->W = malloc(N * sizeof(double));
    st->yd0 = calloc(n, sizeof(double));
    int ok = st->W && st->yd0 && st->lam1 && st->jy && st->jf;
    /* RADAU5's transformed iteration (radau5_linalg.c): E = diag(I, M, 0) constant,
     * dense path (the structured KKT path keeps the iteration on E(Y_i) Yd_i - F).
     * Not in fixed-step mode, which iterates to round-off: the transformed
     * residual (T^-1 (x) I) R takes the rounding of F(Y_i) itself, of size
     * |y'|, where the other form transforms the small residual E Yd_i - F;
     * index2/radau13-fixed on the pendulum (q, v at round-off) ended at q, v
     * errors of 1e-14 .. 7e-14 instead of 7e-16 .. 1.6e-14. */
    st->cmass = (ctx->pb->flags & MBS_PB_CONSTANT_MASS) && full && !var->index1 &&
                !var->fixed && st->form->nx == 0;
    if (st->cmass)
        ok = ok && (st->Fz = malloc(N * sizeof(double)));
    if (full) { /* dense iteration matrices: linsol=full only */
        size_t nv = st->form->nv;
        st->E0 = mbs_matrix_alloc(n, n);
        st->J0 = mbs_matrix_alloc(n, n);
        st->Es = mbs_matrix_alloc(n, n);
        for (int p = 0; p < npmax; p++) {
            st->Tc[p] = mbs_matrix_complex_alloc(n, n);
            st->pc[p] = gsl_permutation_alloc(n);
            ok = ok && st->Tc[p] && st->pc[p];
        }
        st->T1 = mbs_matrix_alloc(n, n);
        st->p1 = gsl_permutation_alloc(n);
        size_t nq = st->form->nq;
        if (nq > 0 && 2 * nq <= n) { /* the reduced systems (radau5_linalg.c) */
            st->p1r = gsl_permutation_alloc(n - nq);
            ok = ok && st->p1r;
            for (int p = 0; p < npmax; p++)
                ok = ok && (st->pcr[p] = gsl_permutation_alloc(n - nq));
        }
        st->bc = gsl_vector_complex_alloc(n);
        st->b1 = gsl_vector_alloc(n);
        st->Mw = mbs_matrix_alloc(nv, nv);
        st->pm = gsl_permutation_alloc(nv);
        st->bm = gsl_vector_alloc(nv);
        st->xm = gsl_vector_alloc(nv);
        ok = ok && st->E0 && st->J0 && st->Es && st->T1 && st->p1 &&
             st->bc && st->b1 && st->Mw && st->pm && st->bm && st->xm;
    } else {
        ok = ok && (st->Wx = malloc(N * sizeof(double)));
    }
    ok = ok && (st->v_index2 = calloc(st->form && st->form->nv > 0 ? st->form->nv : 1, sizeof(int)));
    ok = ok && (st->y = malloc(n * sizeof(double))) && (st->Z = malloc(N * sizeof(double))) &&
         (st->dZ = malloc(N * sizeof(double))) && (st->R = malloc(N * sizeof(double))) &&
         (st->Yd = calloc(N, sizeof(double))) && (st->F0 = malloc(n * sizeof(double))) &&
         (st->F1 = malloc(n * sizeof(double))) && (st->F2 = malloc(n * sizeof(double))) &&
         (st->cont = calloc(N, sizeof(double))) && (st->scal = malloc(n * sizeof(double))) &&
         (st->rs = malloc(nf * sizeof(double))) && (st->cs = malloc(nf * sizeof(double))) &&
         (st->err = malloc(n * sizeof(double))) && (st->Ys = malloc(RADAU_SMAX * n * sizeof(double))) &&
         (st->Es_w = malloc(n * sizeof(double))) && (st->ydense = malloc(n * sizeof(double)));
    int in = mbs_params_find(prm, "nstop");
    if (ok && in >= 0 && prm->val[in] == 1.0 && var->kind == MBS_FORM_INDEX3 && !var->index1 &&
        !var->fixed && st->form->nl > 0)
        ok = (st->scal1 = malloc(n * sizeof(double))) != NULL;
    if (!ok || mbs_radau_switch_alloc(st, ctx) != MBS_OK) {
        radau_free(st);
        return MBS_NO_MEMORY;
    }
    *out = st;
    return MBS_OK;
}

/* Dense output (mbs_dense_fn, method.h): the collocation polynomial of the step
 * just accepted, as RADAU5's CONTR5 (Hairer and Wanner 1996 [hairer1996solving],
 * Sect. IV.8): with x = (t - t_n+1)/h,
 *     y(t) = y_n+1 + x (cont_1 + (x - (c_(s-1) - 1)) (cont_2 + ... (x - (c_1 - 1)) cont_s)),
 * every component (the multipliers too); mbs_radau_update_solution built cont.
 * index1/radau5 integrates (q, v) only: q and v (MBS_DENSE_QV), its multipliers
 * are those of the KKT solve at the accepted point. */
static void radau_poly_at(const radau_state *st, double x, double *out)
{
    const size_t n = st->n;
    const int s = st->cont_ns;
    for (size_t k = 0; k < n; k++) {
        double val = st->cont[(size_t)(s - 1) * n + k];
        for (int l = s - 2; l >= 0; l--)
            val = st->cont[(size_t)l * n + k] + (x - (st->cont_c[s - 2 - l] - 1.0)) * val;
        out[k] = st->y[k] + x * val;
    }
}

static int radau_dense(void *p, double t, double *ystate)
{
    radau_state *st = p;
    radau_poly_at(st, (t - st->t_dense) / st->h_dense, st->ydense);
    mbs_radau_form_to_state(st, st->ydense, ystate);
    return st->ix ? MBS_DENSE_QV : 0;
}

/* The point (t_j, y_j) of the dense iteration matrix's dF/dy and E.  RADAU5 and
 * RADAU take (t_n, y_n).  The simplified Newton iteration contracts by about
 * the distance between that Jacobian and those at the stage values (Hairer and
 * Wanner 1996 [hairer1996solving], Sect. IV.8, the convergence rate theta),
 * which is largest at the far end of the step: where the forces depend strongly
 * on the state (the Test Set's Andrews mechanism: velocity-squared forces,
 * v' ~ 1e5), its rate theta was 0.05-0.6 at every step, the steps were set by
 * Newton rejections instead of the error estimate, and the order never rose.
 * jpoint = c takes the Jacobian at t_n + c h on the previous step's collocation
 * polynomial (extrapolated, as the starting values), nearer to the stages on
 * average.  The collocation solution is the same (only the iteration matrix
 * changes); the error estimate then forms E(y_n) afresh (e0_current 0).  The
 * first step, without a polynomial, takes y_n.  Returns 1 when y_j != y_n. */
static int radau_jac_point(radau_state *st, double t, double h, double *tj, const double **yj)
{
    *tj = t;
    *yj = st->y;
    if (!(st->jpoint > 0.0) || st->cont_ns == 0)
        return 0;
    radau_poly_at(st, st->jpoint * h / st->h_dense, st->Ys);
    *tj = t + st->jpoint * h;
    *yj = st->Ys;
    return 1;
}

/* Fixed-step mode: the round-off floor of the Newton increments in the norm of
 * the iteration (scal, index-weighted): the increment that perturbations of the
 * stage residuals by their rounding, eps (|E| |Y'_i| + |J| |Y_i|) (the mass
 * rows' E Y' and the terms of F, stiff forces and G^T lambda included, as the
 * BDF and generalized-alpha floors measure theirs: bdf_newton.c), cause through
 * the current factorisation (Yd's multiplier entries, never formed by
 * mbs_radau_stage_derivatives, are zero from radau_alloc's calloc: E's zero
 * columns times uninitialised NaN made the floor NaN, read as infinite, and
 * every stagnation a convergence).  Overwrites R and dZ (the next iteration forms
 * both again).  INFINITY where E or J is not formed (structured path). */
static double radau_roundoff_floor(radau_state *st, mbs_ctx *ctx, double t)
{
    size_t n = st->n, ns = (size_t)st->co->s;
    if (st->Wx || !st->J0 || (!st->ix && !st->E0))
        return INFINITY;
    for (size_t i = 0; i < ns; i++) {
        const double *Zi = st->Z + i * n, *Ydi = st->Yd + i * n;
        double *Ri = st->R + i * n;
        for (size_t k = 0; k < n; k++) {
            double a = st->ix ? fabs(Ydi[k]) : 0.0;
            for (size_t l = 0; l < n; l++) {
                if (!st->ix)
                    a += fabs(gsl_matrix_get(st->E0, k, l) * Ydi[l]);
                a += fabs(gsl_matrix_get(st->J0, k, l) * (st->y[l] + Zi[l]));
            }
            Ri[k] = DBL_EPSILON * a;
        }
    }
    if (mbs_radau_solve_stages(st, ctx, t, NULL) != MBS_OK)
        return INFINITY;
    double fl = mbs_radau_rms_scaled(st->dZ, st->scal, ns * n, n);
    /* a floor that is not finite accepts no stagnation (it accepted every one) */
    return isfinite(fl) ? fl : 0.0;
}

/* One simplified Newton iteration with the Newton update of Z: the stage
 * residuals and the block solves, Z += dZ; or, with a constant mass matrix
 * (st->cmass), RADAU5's transformed iteration (F += w, Z = (T (x) I) F;
 * radau5_linalg.c).  *inc: the increment the convergence tests measure (dZ,
 * or RADAU5's transformed increment w).  A failed residual's status is
 * returned as is; a failed solve sets *solve_failed. */
static inline MBS_SMALL_INLINE int radau_newton_iteration(radau_state *st, mbs_ctx *ctx,
                                                          double t, double h,
                                                          const double **inc, int *solve_failed)
{
    int s;
    *solve_failed = 0;
    if (st->cmass) {
        if ((s = mbs_radau_stage_rhs(st, ctx, t, h)) != MBS_OK)
            return s;
        *inc = st->W;
        *solve_failed = (s = mbs_radau_solve_transformed(st, ctx, h)) != MBS_OK;
        return s;
    }
    if ((s = mbs_radau_residual(st, ctx, t, h)) != MBS_OK)
        return s;
    *inc = st->dZ;
    *solve_failed = (s = mbs_radau_solve_stages(st, ctx, t, st->Z)) != MBS_OK;
    return s;
}

/* F = (T^-1 (x) I) Z of the starting values (transformed iteration only). */
static void radau_newton_start(radau_state *st)
{
    if (st->cmass)
        mbs_radau_kron(st->co->TI, st->co->s, st->n, st->n, st->Z, 1.0, st->Fz);
}

static int report(radau_state *st, mbs_ctx *ctx, double t, double h, double *ystate)
{
    const mbs_dae_form *f = st->form;
    int s;
    /* final Z: stage s derivative = polynomial at t_n+1; only the observer
     * reads v' (mbs_accept), so timing runs skip it */
    if (ctx->observer)
        mbs_radau_stage_derivatives(st, h);
    const double *vdot = st->Yd + (size_t)(st->co->s - 1) * st->n + f->nq;
    if (st->proj) {
        if ((s = mbs_project(st->proj, ctx, t, st->y, st->y + f->nq)) != MBS_OK)
            return s;
    }
    if (st->ix) {
        /* index-1: multipliers (and v') of the KKT solve at the accepted point */
        if ((s = mbs_radau_form_rhs(st, ctx, t, st->y, st->F1)) != MBS_OK)
            return s;
        vdot = st->F1 + f->nq;
    }
    mbs_radau_form_to_state(st, st->y, ystate);
    if (st->cont_ns > 0) {
        st->t_dense = t;
        st->h_dense = h;
        ctx->dense = radau_dense;
        ctx->dense_data = st;
    }
    return mbs_accept(ctx, t, ystate, vdot);
}

/* RADAU's constants for the current ns: rtol' = 0.1 rtol^e with
 * e = (s+1)/(2s) (RADAU5: 2/3), atol' = rtol' atol/rtol, the Newton stopping
 * value FNEWT and the iteration limit NIT (+5 at s = 5, +10 at s = 7); the
 * step-size exponent 1/(s+1) is radau_step_root's.  Fixed-step mode iterates
 * to round-off.
 * RADAU's e assumes the asymptotic regime of a smooth solution: an estimate of
 * O(h^(s+1)) at rtol' stands for a local error of O(h^(2s)) near rtol.  Where
 * the problem declares switching functions (a right-hand side that is not
 * differentiable across them, radau_switch.c) the solution has kinks, and
 * steep layers between them, and the order-9 and -13 steps are not in that
 * regime: their error follows the estimate rather than its power 2s/(s+1).
 * There e = 2/3 for every s (RADAU5's rtol' and FNEWT).  Wheelset (Test Set
 * 2.4), index2/radau, mixed error at t_end, geometric mean over tol x
 * 0.9 .. 1.1, at tol 1e-8, 1e-10, 1e-12: RADAU's e 6.5e-7, 2.3e-8, 3.5e-10
 * (order-13 steps with estimates 0.07 .. 0.8 at tol 1e-11, rtol' = 4.9e-8,
 * left 5e-10 .. 1e-8 in v and beta), e = 2/3 6.3e-8, 5.1e-9, 8.3e-11 for
 * 3% .. 11% more force evaluations (index2/radau5: 3.3e-7, 4.9e-9, 1.0e-10;
 * docs/problems.md).  On the smooth pendulum the same change cost 4% .. 7%
 * more instructions at make bench's 1e-9 target (the order-9 rows): kept to
 * problems with switches. */
static void radau_order_constants(const radau_state *st, double r0, double a0, double *rtol,
                                  double *atol, double *fnewt, int *nit)
{
    const int s = st->co->s;
    if (st->var->fixed) {
        *rtol = *atol = 1e-15;
        *fnewt = 1.0;
        *nit = st->nit > RADAU_NIT_FIXED ? st->nit : RADAU_NIT_FIXED;
        return;
    }
    const int radau5 = s == 3 || st->nsw > 0;
    const double e = radau5 ? 2.0 / 3.0 : (s + 1.0) / (2.0 * s);
    *rtol = 0.1 * pow(r0, e);
    *atol = *rtol * (a0 / r0);
    const double cap = radau5 ? sqrt(*rtol) : pow(*rtol, 1.0 / e - 1.0);
    *fnewt = st->kappa_set ? st->kappa : fmax(10.0 * DBL_EPSILON / *rtol, fmin(st->kappa, cap));
    *nit = st->nit + (s == 5 ? 5 : s == 7 ? 10 : 0);
}

/* RADAU5's Newton stop faccon dyno <= fnewt.  RADAU5 sets faccon =
 * max(faccon, eps)^0.8 at the start of every attempt; here that power stays
 * pending (*pend) until a test needs it, since from the second iteration on
 * faccon = theta/(1 - theta) replaces it (radau_integrate).  With b =
 * max(faccon, eps) <= 1, b <= b^0.8 <= 1 (pow errs by less than an ulp), so
 * dyno <= fnewt settles the test as true and b dyno > fnewt (1 + 1e-12) as
 * false without the power; otherwise it is taken.  The same decisions and
 * values as RADAU5's eager power. */
static int radau_newton_stop(double *faccon, int *pend, double dyno, double fnewt)
{
    if (*pend) {
        const double b = fmax(*faccon, DBL_EPSILON);
        if (b <= 1.0 && dyno <= fnewt)
            return 1;
        if (b <= 1.0 && b * dyno > fnewt * (1.0 + 1e-12))
            return 0;
        *faccon = pow(b, 0.8);
        *pend = 0;
    }
    return *faccon * dyno <= fnewt;
}

/* RADAU5's predicted final increment faccon dyno theta^k / fnewt (fd =
 * faccon dyno, 0 <= theta < 0.99), where only whether it reaches 1 matters
 * unless it does: theta^k by k - 1 products (relative error below k ulps)
 * decides it outside 1 +- 1e-12 (the value returned is then below 1, not
 * the quotient); pow otherwise, the value RADAU5 computes. */
static double radau_dyth(double fd, double theta, int k, double fnewt)
{
    double tk = 1.0;
    for (int i = 0; i < k; i++)
        tk *= theta;
    if (k > 0 && fd * tk / fnewt < 1.0 - 1e-12)
        return 0.0;
    return fd * pow(theta, k) / fnewt;
}

/* x^(1/(s + 1)), the step-size controller's power for s stages
 * (RADAU5's exponent 1/(s + 1)): by square roots where s + 1 is a power of
 * two (s = 3, 7; each root correctly rounded, so within a few ulps of
 * pow's), pow otherwise.  The controller's only per-step use of libm's pow,
 * whose code (about 700 bytes) a step otherwise keeps in the instruction
 * cache beside its own (docs/methods.md, the Radau IIA section). */
static double radau_step_root(double x, int s)
{
    if (s == 3)
        return sqrt(sqrt(x));
    if (s == 7)
        return sqrt(sqrt(sqrt(x)));
    return pow(x, 1.0 / (s + 1.0));
}

/* The pending power of radau_newton_stop, taken. */
static void radau_faccon_resolve(double *faccon, int *pend)
{
    if (*pend)
        *faccon = pow(fmax(*faccon, DBL_EPSILON), 0.8);
    *pend = 0;
}

/* RADAU's order selection (label 20 of its RADCOV), made wherever a new
 * iteration matrix is due: the smoothed contraction thetat = min(10,
 * max(theta, thetat/2)); two stages more when Newton converged fast (thetat
 * <= 0.002 after more than one iteration) and h changed by less than 20%;
 * two fewer when it converged slowly (thetat >= 0.8) or after an unexpected
 * rejection (Newton failure, or a Newton-driven step cut to half or less); no
 * increase within 10 decisions of the last change.  Returns 1 when ns
 * changed. */
typedef struct radau_order_ctl {
    double thetat;
    int ichan, unexp, unexn, change, force;
} radau_order_ctl;

static int radau_select_order(radau_state *st, radau_order_ctl *o, double hquot, int newt,
                              double theta)
{
    const double vitu = 0.002, vitd = 0.8, hhou = 1.2, hhod = 0.8;
    int ns = st->co->s, nsnew = ns;
    o->ichan++;
    o->force = 0;
    o->thetat = fmin(10.0, fmax(theta, 0.5 * o->thetat));
    if (newt > 1 && o->thetat <= vitu && hquot < hhou && hquot > hhod && ns < st->nsmax)
        nsnew = ns + 2;
    if ((o->thetat >= vitd || o->unexp || o->unexn) && ns > st->nsmin)
        nsnew = ns - 2;
    if (o->ichan <= 10 && nsnew > ns)
        nsnew = ns;
    o->change = nsnew != ns;
    o->unexp = o->unexn = 0;
    if (!o->change)
        return 0;
    radau_use_stages(st, nsnew);
    o->ichan = 1;
    return 1;
}

/* Index-3 form: the second stop of the simplified Newton iteration, after
 * RADAU5's test has passed.  RADAU5 measures the increments in the weights
 * scal/h^(index-1) of its error test (v as index 2, lambda as index 3), so the
 * iteration stops with errors up to fnewt atol'/h in v and fnewt atol'/h^2 in
 * lambda.  In the index-3 form those errors are perturbations of the
 * discretized system that the solution does not forget: a residual delta of
 * the index-3 equations moves the numerical solution by O(delta/h^2)
 * ([arnold2016dae] Sect. 4.1 and Example 10: RADAU5 on the index-3 form of the
 * wheelset with kappa = 0.03 has 0.1-1% errors at every TOL, with kappa = 1e-5
 * errors of the size of TOL).  Measured: simple-pendulum over 10 s at tol
 * 1e-10, q error 6.5e-7 after RADAU5's test alone; the tangential velocity's
 * iteration error fnewt atol'/h accumulates over the steps.  So the iteration
 * goes on until the increment meets the same test in the unweighted norm
 * (atol' + rtol' |y_i|: every component as an ODE variable), faccon ||dZ|| <=
 * fnewt with faccon = theta / (1 - theta) from the latest rate (RADAU5's at
 * the start), for at most the iterations left of RADAU5's NIT (iters); it stops
 * without failing where the increments stop falling (rate >= 0.5: the
 * unweighted increments of v and lambda have a round-off floor eps/h and
 * eps/h^2, which the weighted test already met).  The extra iterations only
 * refine Z: RADAU5's iteration count (its step-size safety factor, the order
 * selection) and faccon (the next step's first test) stay those of its own test
 * (letting them in cost crank index3/radau at tol 1e-8 377 steps instead of
 * 242).  Returns MBS_OK, or the status of a failed evaluation (*solve_failed =
 * 0) or stage solve (*solve_failed = 1). */
static int radau_newton_index3(radau_state *st, mbs_ctx *ctx, double t, double h, int iters,
                               double fnewt, double faccon, const double *inc,
                               int *solve_failed)
{
    const size_t N = st->N, n = st->n;
    /* inc: the last increment (dZ, or w of the transformed iteration, which
     * the iterations here continue) */
    double dn = mbs_radau_rms_scaled(inc, st->scal1, N, n);
    int s;
    *solve_failed = 0;
    for (int k = 0; k < iters && faccon * dn > fnewt; k++) {
        if ((s = radau_newton_iteration(st, ctx, t, h, &inc, solve_failed)) != MBS_OK)
            return s;
        mbs_count_newton(ctx);
        double dp = dn;
        dn = mbs_radau_rms_scaled(inc, st->scal1, N, n);
        if (!(dn < 0.5 * dp)) /* no longer contracting: round-off (or NaN) */
            break;
        faccon = (dn / dp) / (1.0 - dn / dp);
    }
    return MBS_OK;
}

/* Where radau_fixed_newton sends the step loop when it does not converge:
 * nowhere (the status it returns ends the run or is MBS_OK), to the Newton
 * failure or to the failed evaluation of radau_integrate. */
enum { RADAU_JUMP_NONE = 0, RADAU_JUMP_NEWTON = 1, RADAU_JUMP_EVAL = 2 };

/* Fixed-step mode's attempt at t, h: simplified Newton iterated to
 * round-off.  There is no smaller step to fall back on, so the iteration goes
 * on while it contracts (Hairer and Wanner 1996 [hairer1996solving], Sect. IV.8:
 * rate theta_k = ||dZ_k|| / ||dZ_(k-1)||), up to max(nit,
 * RADAU_NIT_FIXED) iterations (radau_order_constants), and stops when
 * ||dZ|| <= 1e-15 (1 + |y|) in the index-scaled RMS norm, or on
 * stagnation below 1e-12 (1 + |y|) (an increment at least half the
 * smallest one before: round-off makes the increments fluctuate
 * there).  Stopping on the estimate theta / (1 - theta) ||dZ|| instead
 * left q of bead-rod at 4.9e-11 instead of 5.7e-13 (h = 5e-3).  Two
 * consecutive increments above the first one (and above the
 * stagnation level) are a divergence; single increases happen on the
 * way (andrews at h = 4e-4 converges after a rate of 1.05).  Out of line
 * and cold (RADAU_COLD): kept out of the adaptive step's code, which must
 * fit the instruction cache (docs/methods.md, the Radau IIA section). */
static RADAU_COLD int radau_fixed_newton(radau_state *st, mbs_ctx *ctx, double t, double h,
                                         int nit, int *jump)
{
    const size_t N = st->N, n = st->n;
    int s = MBS_OK;
    *jump = RADAU_JUMP_NONE;
    int done = 0, newt = 0, bad_solve;
    double dprev = HUGE_VAL, dyno = HUGE_VAL, dfirst = HUGE_VAL, dmin = HUGE_VAL, th = 0.0,
           fl = NAN;
    const double *inc;
    while (!done && newt < nit) {
        /* Z updated already here: a diverged iteration (below) ends the run */
        if ((s = radau_newton_iteration(st, ctx, t, h, &inc, &bad_solve)) != MBS_OK) {
            *jump = bad_solve ? RADAU_JUMP_NEWTON : RADAU_JUMP_EVAL;
            return s;
        }
        newt++;
        mbs_count_newton(ctx);
        dyno = mbs_radau_rms_scaled(inc, st->scal, N, n);
        if (!isfinite(dyno)) {
            *jump = RADAU_JUMP_NEWTON;
            return MBS_OK;
        }
        th = newt > 1 ? dyno / dprev : 0.0;
        if (newt == 1)
            dfirst = dyno;
        else if (dyno > fmax(dfirst, 1e3) &&
                 (newt > 2 ? dprev > dfirst : dyno > 1e3 * dfirst))
            break; /* diverged */
        done = dyno <= 1.0 || (dyno <= 1e3 && dyno >= 0.5 * dmin);
        /* above 1e-12 (1 + |y|): stagnation (or the last iteration)
         * within 10 times the round-off floor is convergence too */
        if (!done && newt > 1 && (dyno >= 0.5 * dmin || newt == nit)) {
            fl = radau_roundoff_floor(st, ctx, t);
            done = dyno <= 10.0 * fl;
        }
        dprev = dyno;
        dmin = fmin(dmin, dyno);
    }
    if (!done) {
        if (newt > 1 && dyno > fmax(dfirst, 1e3) && newt < nit)
            s = mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                         "Newton iteration diverged in fixed-step mode (h=%.3g): rate "
                         "%.3g, scaled increment %.3g at iteration %d",
                         h, th, 1e-15 * dyno, newt);
        else
            s = mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                         "Newton iteration did not converge in %d iterations in "
                         "fixed-step mode (h=%.3g): rate %.3g, scaled increment %.3g "
                         "(round-off floor %.3g)",
                         newt, h, th, 1e-15 * dyno, 1e-15 * fl);
        return s;
    }
    return MBS_OK;
}

static int radau_integrate(void *p, mbs_ctx *ctx, const mbs_settings *set, double *tp,
                           double *ystate)
{
    radau_state *st = p;
    const int fixed = st->var->fixed, sparse = st->lsk != RADAU_LS_FULL;
    const double eps = DBL_EPSILON, safe = 0.9, facl = 5.0, facr = 0.125, thet = 0.001;
    size_t n = st->n;
    double t0 = *tp, t = t0, t_end = set->t_end, span = t_end - t0;
    int s = MBS_OK;
    /* every integration on this workspace starts as the first did (timing
     * repeats: not at the order the previous integration ended with) */
    radau_use_stages(st, st->nsmin);
    st->cont_ns = 0;
    mbs_radau_form_from_state(st, ystate, st->y);
    if (st->form && st->form->kind == MBS_FORM_INDEX3 &&
        (s = mbs_dae_form_index2_velocities(st->form, ctx, t0, ystate, st->v_index2)) != MBS_OK)
        return s;
    if ((s = mbs_radau_switch_start(st, ctx, t0)) != MBS_OK)
        return s;

    /* Tolerances (RADAU's transformation for the current ns) and the Newton
     * stopping value. */
    const double r0 = set->rtol > 0.0 ? set->rtol : 1e-6, a0 = set->atol > 0.0 ? set->atol : r0;
    double rtol, atol, fnewt;
    int nit;
    radau_order_constants(st, r0, a0, &rtol, &atol, &fnewt, &nit);
    const int variable = st->nsmin < st->nsmax && !fixed;
    radau_order_ctl oc = {0.0, 0, 0, 0, 0, 0};
    double h_dec = -1.0; /* h at the last order decision */
    int newt_last = 0;
    double h;
    long nsteps = 0, istep = 0;
    double h_fixed = 0.0; /* the equal steps of fixed-step mode */
    if (fixed) {
        nsteps = (long)ceil(span / set->h * (1.0 - 1e-12));
        h_fixed = span / (double)nsteps;
        h = h_fixed;
    } else {
        h = set->h > 0.0 ? set->h : 1e-6;
    }
    h = fmin(h, span);
    const double hmax = span;
    double hold = h, hacc = h, erracc = 1.0, faccon = 1.0, theta = 0.0, h_fact = -1.0;
    int faccon_pend = 0; /* faccon's power still to take (radau_newton_stop) */
    double h_theta = 0.0; /* h of the attempt whose rate set faccon (0: none yet) */
    int first = 1, reject = 0, last = 0, need_jac = 1, jac_current = 0, naccpt = 0, nsing = 0;
    /* F0 = F(t, y) is current (evaluated after the last accepted step at the
     * same t, y): the Jacobian evaluation then does not repeat it (F does
     * not depend on h in these forms) */
    int f0_current = 0;
    /* the iteration matrix's dF/dy and E are not at y_n (radau_jac_point) */
    int jac_moved = 0;
    /* stalled-estimate guard: consecutive steps on a kept Jacobian whose
     * scaled error stays within 10% of the previous one in [0.5, 2] */
    double err_prev = 0.0;
    int nstall = 0;
    /* h of the attempt that was cut to land on a switch (radau_switch.c) */
    double h_cut = 0.0;

    while (t < t_end) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        if (fixed) {
            double tn = istep + 1 == nsteps ? t_end : t0 + (double)(istep + 1) * h_fixed;
            h = tn - t;
            last = istep + 1 == nsteps;
        } else if (st->sw_land >= 0) {
            /* landing on a switch (radau_switch.c): h and Z are set */
        } else if (t + 1.0001 * h >= t_end) {
            h = t_end - t;
            last = 1;
        } else if (t + 2.0 * h > t_end) {
            /* Halve the remainder rather than leave a tiny last step: the
             * index-2/3 weights scal/h^(index-1) of a tiny step would loosen
             * the Newton test on lambda (mu) at t_end. */
            h = 0.5 * (t_end - t);
        }
        if (0.1 * h <= fabs(t) * eps || h < 1e-14 * span) {
            s = mbs_fail(ctx, MBS_STEP_UNDERFLOW, t, "step size %.3g too small at t=%.6g", h, t);
            break;
        }
        st->form->h = h;
        const int jac_due = need_jac || fixed;
        if ((need_jac || fixed) && sparse) {
            /* structured path: the KKT factorisation (h-independent) takes the
             * place of the Jacobian; nothing to refactor when h changes */
            if ((s = mbs_dae_form_kkt_factor(st->form, ctx, t, st->y)) != MBS_OK) {
                if (s < 0 || fixed || ++nsing >= 5)
                    break;
                goto unexpected;
            }
            if (!f0_current && (s = mbs_radau_form_rhs(st, ctx, t, st->y, st->F0)) != MBS_OK)
                goto failed_eval;
            f0_current = 1;
            need_jac = 0;
            jac_current = 1;
            if (first)
                mbs_radau_first_derivative(st, ctx, t);
        } else if (need_jac || fixed) {
            double tj = t;
            const double *yj = st->y;
            jac_moved = !first && radau_jac_point(st, t, h, &tj, &yj);
            if ((s = mbs_radau_form_mass(st, ctx, tj, yj, st->E0)) != MBS_OK ||
                (s = mbs_radau_form_jac(st, ctx, tj, yj, st->J0)) != MBS_OK ||
                (!f0_current && (s = mbs_radau_form_rhs(st, ctx, t, st->y, st->F0)) != MBS_OK))
                goto failed_eval;
            f0_current = 1;
            st->red = mbs_radau_reducible(st);
            need_jac = 0;
            jac_current = 1;
            h_fact = -1.0;
            if (first)
                mbs_radau_first_derivative(st, ctx, t);
        }
        if (variable && st->sw_land < 0 && (jac_due || h != h_dec || oc.force)) {
            h_dec = h;
            if (radau_select_order(st, &oc, h / hold, newt_last, theta)) {
                radau_order_constants(st, r0, a0, &rtol, &atol, &fnewt, &nit);
                h_fact = -1.0;
            }
        }
        const size_t N = st->N;
        if (sparse) {
            h_fact = h;
        } else if (h != h_fact) {
            if ((s = mbs_radau_factor(st, ctx, t, h)) != MBS_OK) {
                if (fixed || ++nsing >= 5) {
                    mbs_fail(ctx, s, t, "singular Radau iteration matrix at h=%.3g", h);
                    break;
                }
                goto unexpected;
            }
            h_fact = h;
        }
        mbs_radau_set_scal(st, rtol, atol, h, 1);
        if (st->sw_land < 0)
            mbs_radau_start_values(st, first, h, hold);

        if (fixed) {
            int jump;
            s = radau_fixed_newton(st, ctx, t, h, nit, &jump);
            if (jump == RADAU_JUMP_NEWTON)
                goto newton_failed;
            if (jump == RADAU_JUMP_EVAL)
                goto failed_eval;
            if (s != MBS_OK)
                break;
            t = istep + 1 == nsteps ? t_end : t + h;
            istep++;
            mbs_radau_update_solution(st);
            f0_current = 0;
            hold = h;
            first = 0;
            if ((s = report(st, ctx, t, h, ystate)) != MBS_OK)
                break;
            continue;
        }

        /* Simplified Newton iteration (RADAU5). */
        radau_faccon_resolve(&faccon, &faccon_pend);
        /* The rate behind faccon was measured at h_theta; RADAU5 carries it to
         * any later h, and its first test faccon dyno <= fnewt can then stop
         * after one iteration.  The rate grows with h, by far more than h's
         * ratio where the solution has a fast transient: the wheelset's first
         * step (h = 1e-6) converged at theta = 4.8e-9, the 7.3 times longer
         * second step's first increment was 100 times the error scale and was
         * taken (faccon^0.8 = 2.2e-7), leaving v and beta off by 1.7e-4 to
         * t_end (index2/radau:nsmin=5, tol 1e-7), where that h converges at
         * theta ~ 2e-2 only after cuts.  So a rate is trusted only up to
         * RADAU5's QUOT2 = 1.2 times the h it was measured at (the growth for
         * which RADAU5 keeps its iteration matrix); beyond, faccon starts again
         * at 1, RADAU5's initial value, and the first iteration stops only if
         * its increment is below fnewt itself. */
        if (h > 1.2 * h_theta)
            faccon = 1.0;
        faccon_pend = 1; /* faccon = max(faccon, eps)^0.8, when a test needs it */
        theta = fabs(thet);
        double dynold = 0.0, thqold = 1.0;
        int newt = 0, converged = 0, bad_solve;
        const double *inc;
        radau_newton_start(st);
        while (!converged) {
            if (newt >= nit)
                goto newton_failed;
            /* Z updated already here: an attempt that stops below starts
             * again from its starting values */
            if ((s = radau_newton_iteration(st, ctx, t, h, &inc, &bad_solve)) != MBS_OK) {
                if (bad_solve)
                    goto newton_failed;
                goto failed_eval;
            }
            newt++;
            mbs_count_newton(ctx);
            double dyno = mbs_radau_rms_scaled(inc, st->scal, N, n);
            if (!isfinite(dyno))
                goto newton_failed;
            if (newt > 1 && newt < nit) {
                double thq = dyno / dynold;
                theta = newt == 2 ? thq : sqrt(thq * thqold);
                thqold = thq;
                if (theta < 0.99) {
                    faccon = theta / (1.0 - theta);
                    faccon_pend = 0;
                    h_theta = h;
                    /* theta^k <= 1 (0 <= theta < 0.99, k >= 0), so dyth <= faccon
                     * dyno / fnewt as rounded: pow only where the test can hold */
                    double dyth = faccon * dyno / fnewt;
                    if (dyth >= 1.0)
                        dyth = radau_dyth(faccon * dyno, theta, nit - 1 - newt, fnewt);
                    if (dyth >= 1.0) {
                        double qnewt = fmax(1e-4, fmin(20.0, dyth));
                        double hhfac = 0.8 * pow(qnewt, -1.0 / (4.0 + nit - 1 - newt));
                        h *= hhfac;
                        oc.unexn = oc.unexn || hhfac <= 0.5;
                        newt_last = newt;
                        reject = 1;
                        last = 0;
                        mbs_count_rejected(ctx);
                        need_jac = !jac_current;
                        goto next_attempt;
                    }
                } else {
                    goto newton_failed;
                }
            }
            dynold = fmax(dyno, eps);
            if (radau_newton_stop(&faccon, &faccon_pend, dyno, fnewt))
                converged = 1;
        }
        if (st->scal1) {
            int solve_failed;
            radau_faccon_resolve(&faccon, &faccon_pend);
            if ((s = radau_newton_index3(st, ctx, t, h, nit - newt, fnewt, faccon, inc,
                                         &solve_failed)) != MBS_OK) {
                if (solve_failed)
                    goto newton_failed;
                goto failed_eval;
            }
        }
        newt_last = newt;

        /* A switching function changed sign over the attempt: redo it to end
         * on the first root (radau_switch.c); Jacobian and iteration matrix
         * are kept, the factorisation follows the new h.  A landing attempt
         * whose own root is off its end is redone to that root (a stretch
         * only within [t, t_end)); h_cut stays the first cut attempt's. */
        if (st->nsw) {
            double th;
            int k;
            if ((s = mbs_radau_switch_find(st, ctx, t, h, &th, &k)) != MBS_OK)
                goto failed_eval;
            if (k >= 0 && th > 1.0 && !(t + th * h < t_end))
                k = -1;
            if (k >= 0) {
                if (st->sw_land < 0) {
                    h_cut = h;
                    st->sw_redo = 0;
                } else {
                    st->sw_redo++;
                }
                h *= th;
                mbs_radau_switch_restrict(st, th);
                st->sw_land = k;
                last = 0;
                mbs_count_rejected(ctx);
                continue;
            }
        }

        /* Error estimate and step-size control (RADAU5). */
        double errn;
        if ((s = mbs_radau_estimate(st, ctx, t, h, first || reject, jac_current && !jac_moved,
                                    &errn)) != MBS_OK)
            goto failed_eval;
        /* A scaled error that sits near 1 with the same value step after step
         * while the Jacobian (and E) are kept is the signature of a stale
         * iteration matrix, not of the solution: refresh it (after 3 such
         * steps) rather than let h shrink or stagnate. */
        if (!jac_current && errn >= 0.5 && errn <= 2.0 && fabs(errn - err_prev) <= 0.1 * err_prev)
            nstall++;
        else
            nstall = 0;
        err_prev = errn;
        if (nstall >= 3) {
            nstall = 0;
            need_jac = 1;
            jac_current = 0;
            h_fact = -1.0;
        }
        double fac = fmin(safe, safe * (1.0 + 2.0 * nit) / (newt + 2.0 * nit));
        double quot = fmax(facr, fmin(facl, radau_step_root(errn, st->co->s) / fac));
        double hnew = h / quot;
        if (errn < 1.0) {
            first = 0;
            naccpt++;
            if (!oc.change) { /* Gustafsson's predictive controller (not across an order change) */
                if (naccpt > 1) {
                    double facgus = (hacc / h) * radau_step_root(errn * errn / erracc, st->co->s) / safe;
                    facgus = fmax(facr, fmin(facl, facgus));
                    quot = fmax(quot, facgus);
                    hnew = h / quot;
                }
                hacc = h;
                erracc = fmax(1e-2, errn);
            }
            hold = h;
            t = last ? t_end : t + h;
            mbs_radau_update_solution(st);
            f0_current = 0;
            jac_current = 0;
            if (st->sw_land >= 0) /* landed: the step the cut attempt asked for,
                                      within RADAU's growth limit of the predictor */
                hnew = fmax(hnew, fmin(h_cut, facl * h));
            if (st->nsw) /* without switches sw_land stays -1 */
                mbs_radau_switch_accept(st);
            if ((s = report(st, ctx, t, h, ystate)) != MBS_OK)
                break;
            if (last)
                break;
            if ((s = mbs_radau_form_rhs(st, ctx, t, st->y, st->F0)) != MBS_OK)
                goto failed_eval;
            f0_current = st->form->kind != MBS_FORM_BAUMGARTE2;
            hnew = fmin(hnew, hmax);
            if (reject)
                hnew = fmin(hnew, h);
            reject = 0;
            nsing = 0;
            double qt = hnew / h;
            if (need_jac) {
                h = hnew; /* stalled estimate: fresh Jacobian at the new point */
            } else if (theta <= thet && qt >= 1.0 && qt <= 1.2) {
                need_jac = 0; /* keep h, Jacobian and factorization */
                if (variable && ++oc.ichan >= 10 && st->co->s < st->nsmax)
                    oc.force = 1; /* RADAU's IKEEP: reconsider a higher order */
            } else {
                h = hnew;
                need_jac = theta > thet;
            }
        } else {
            reject = 1;
            last = 0;
            st->sw_land = -1;
            mbs_count_rejected(ctx);
            h = first ? 0.1 * h : hnew;
            need_jac = need_jac || !jac_current;
        }
        continue;

    failed_eval:
        /* A problem callback failed: fatal statuses end the run, recoverable
         * ones are treated like a Newton failure (halve the step). */
        if (s < 0)
            break;
        goto newton_failed;
    newton_failed:
        if (fixed) {
            char why[sizeof ctx->reason];
            memcpy(why, ctx->reason, sizeof why);
            s = mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                         "Newton iteration did not converge in fixed-step mode (h=%.3g)%s%.200s",
                         h, why[0] ? ": " : "", why);
            break;
        }
    unexpected:
        oc.unexp = 1;
        h *= 0.5;
        reject = 1;
        last = 0;
        mbs_count_rejected(ctx);
        need_jac = !jac_current;
    next_attempt:
        st->sw_land = -1; /* a shorter attempt need not reach the switch */
        ctx->reason[0] = '\0';
        s = MBS_OK;
        continue;
    }
    mbs_radau_form_to_state(st, st->y, ystate);
    *tp = t;
    if (sparse) {
        int kind = radau_ls_kind(st->lsk);
        mbs_ctx_report_linsol(ctx, mbs_dae_form_linsol(st->form, 0), kind);
        mbs_ctx_report_linsol(ctx, mbs_dae_form_linsol(st->form, 1), kind);
        mbs_ctx_report_linsol(ctx, mbs_index1_linsol(st->ix0), kind);
        mbs_project_report(ctx, st->proj);
    }
    mbs_index1_report(ctx, st->ix); /* index1/radau5 on a sparse KKT backend */
    return s;
}

int mbs_radau5_iteration_matrix(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y,
                                double h, int scaled, gsl_matrix *T)
{
    size_t n = f->n;
    if (!(h > 0.0) || T->size1 != 3 * n || T->size2 != 3 * n)
        return mbs_fail(ctx, MBS_BAD_INPUT, t, "iteration matrix: h=%g, T %zux%zu, n=%zu", h,
                        T->size1, T->size2, n);
    radau_coeffs tab;
    gsl_matrix *E = mbs_matrix_alloc(n, n), *J = mbs_matrix_alloc(n, n);
    double *rs = malloc(n * sizeof(double)), *cs = malloc(n * sizeof(double));
    int s = (E && J && rs && cs) ? MBS_OK : MBS_NO_MEMORY;
    if (s == MBS_OK)
        s = mbs_radau_tableau(&tab);
    f->h = h;
    if (s == MBS_OK && (s = mbs_dae_form_mass(f, ctx, t, y, E)) == MBS_OK &&
        (s = mbs_dae_form_jac(f, ctx, t, y, J)) == MBS_OK) {
        if (scaled) {
            mbs_radau_scaling(f, h, rs, cs);
        } else {
            for (size_t i = 0; i < n; i++)
                rs[i] = cs[i] = 1.0;
        }
        mbs_radau_assemble(&tab, n, E, J, rs, cs, h, T);
    }
    gsl_matrix_free(E);
    gsl_matrix_free(J);
    free(rs);
    free(cs);
    return s;
}

int mbs_radau5_newton_solve(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y, double h,
                            int reduce, const double *R, double *dZ, int *reduced)
{
    size_t n = f->n, nq = f->nq;
    if (!(h > 0.0) || f->sparse)
        return mbs_fail(ctx, MBS_BAD_INPUT, t, "Newton solve: h=%g, dense form needed", h);
    radau_state st = {.form = f, .n = n, .N = 3 * n};
    int s = mbs_radau_tableau(&st.tab[0]);
    st.co = &st.tab[0];
    st.E0 = mbs_matrix_alloc(n, n);
    st.J0 = mbs_matrix_alloc(n, n);
    st.T1 = mbs_matrix_alloc(n, n);
    st.Tc[0] = mbs_matrix_complex_alloc(n, n);
    st.p1 = gsl_permutation_alloc(n);
    st.pc[0] = gsl_permutation_alloc(n);
    if (nq > 0 && 2 * nq <= n) {
        st.p1r = gsl_permutation_alloc(n - nq);
        st.pcr[0] = gsl_permutation_alloc(n - nq);
    }
    st.b1 = gsl_vector_alloc(n);
    st.bc = gsl_vector_complex_alloc(n);
    st.rs = malloc(n * sizeof(double));
    st.cs = malloc(n * sizeof(double));
    st.W = malloc(3 * n * sizeof(double));
    st.R = malloc(3 * n * sizeof(double));
    if (s == MBS_OK && !(st.E0 && st.J0 && st.T1 && st.Tc[0] && st.p1 && st.pc[0] && st.b1 &&
                         st.bc && st.rs && st.cs && st.W && st.R &&
                         (st.p1r || !(nq > 0 && 2 * nq <= n)) && (st.pcr[0] || !st.p1r)))
        s = MBS_NO_MEMORY;
    f->h = h;
    if (s == MBS_OK && (s = mbs_dae_form_mass(f, ctx, t, y, st.E0)) == MBS_OK &&
        (s = mbs_dae_form_jac(f, ctx, t, y, st.J0)) == MBS_OK) {
        st.red = reduce && mbs_radau_reducible(&st);
        *reduced = st.red;
        memcpy(st.R, R, 3 * n * sizeof(double));
        st.dZ = dZ;
        if ((s = mbs_radau_factor(&st, ctx, t, h)) == MBS_OK)
            s = mbs_radau_solve_stages(&st, ctx, t, NULL);
    }
    gsl_matrix_free(st.E0);
    gsl_matrix_free(st.J0);
    gsl_matrix_free(st.T1);
    gsl_matrix_complex_free(st.Tc[0]);
    gsl_permutation_free(st.p1);
    gsl_permutation_free(st.pc[0]);
    gsl_permutation_free(st.p1r);
    gsl_permutation_free(st.pcr[0]);
    gsl_vector_free(st.b1);
    gsl_vector_complex_free(st.bc);
    free(st.rs);
    free(st.cs);
    free(st.W);
    free(st.R);
    return s;
}

const mbs_method_ops mbs_radau_ops = {
    .alloc = radau_alloc,
    .integrate = radau_integrate,
    .free_state = radau_free,
};
