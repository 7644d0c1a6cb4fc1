/* BDF (methods/integrators/bdf/bdf.c): the iteration matrix (Jacobian, scaled LU or the
 * structured KKT backends), the residual, the Newton corrector with DASSL's
 * convergence test, one step attempt (predictor, corrector, error estimate)
 * and the consistent initial derivative.  Split from bdf.c. */
#include <float.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../core/gslalloc.h"
#include "bdf_impl.h"

/* ---- iteration matrix -------------------------------------------------------- */

/* Evaluate J = dF/dy and E at (t, y) (fresh Jacobian). */
static int new_jacobian(bdf_state *st, double t, const double *y)
{
    int s;
    if (st->lsk != BDF_LS_FULL) {
        /* structured path: the KKT matrices depend on q only (dae_form.h) */
        if ((s = mbs_dae_form_kkt_factor(st->form, st->ctx, t, y)) != MBS_OK)
            return s;
        st->jac_fresh = 1;
        return MBS_OK;
    }
    if ((s = mbs_dae_form_jac(st->form, st->ctx, t, y, st->J)) != MBS_OK ||
        (s = mbs_dae_form_mass(st->form, st->ctx, t, y, st->E)) != MBS_OK)
        return s;
    st->jac_fresh = 1;
    return MBS_OK;
}

/* Condensed, scaled iteration matrix for c0 and its LU factorisation:
 * S = A_rr - A_rq A_qr / c0 with A = c0 E - J ([arnold2016dae] Eq. (76)). */
static int factor(bdf_state *st, double c0, double t)
{
    size_t nq = st->nq, nr = st->nr, nv = st->nv, nl = st->nl;
    mbs_dae_form *f = st->form;
    if (st->lsk != BDF_LS_FULL) {
        /* structured path: c0 enters only the right-hand side (kkt_solve) */
        st->c0f = c0;
        return MBS_OK;
    }
    for (size_t i = 0; i < nr; i++) {
        size_t gi = nq + i;
        st->rs[i] = i < nv ? 1.0 / c0 : mbs_dae_form_position_row(f, gi) ? c0 : 1.0;
        st->cs[i] = (i >= nv && i < nv + nl) ? c0 : 1.0; /* lambda unknowns ~ h lambda */
    }
    for (size_t i = 0; i < nr; i++)
        for (size_t j = 0; j < nr; j++) {
            double a = c0 * gsl_matrix_get(st->E, nq + i, nq + j) -
                       gsl_matrix_get(st->J, nq + i, nq + j);
            double corr = 0.0;
            for (size_t k = 0; k < nq; k++)
                corr += gsl_matrix_get(st->J, nq + i, k) * gsl_matrix_get(st->J, k, nq + j);
            gsl_matrix_set(st->S, i, j, st->rs[i] * (a - corr / c0) * st->cs[j]);
        }
    /* Singular mass matrix without constraints: a v row of an algebraic
     * equation (zero mass row, e.g. smallmass at m1 = 0) scaled by 1/c0 is
     * O(1/c0) against O(1) rows, which the pivot test below would call
     * singular; equilibrate the v rows (the same rs scales the right-hand side
     * in solve()).  Constrained problems are factorised as before. */
    if (nl == 0 && (st->ctx->pb->flags & MBS_PB_SINGULAR_MASS))
        for (size_t i = 0; i < nv; i++) {
            double rmax = 0.0;
            for (size_t j = 0; j < nr; j++)
                rmax = fmax(rmax, fabs(gsl_matrix_get(st->S, i, j)));
            if (rmax > 0.0 && isfinite(rmax)) {
                st->rs[i] /= rmax;
                for (size_t j = 0; j < nr; j++)
                    gsl_matrix_set(st->S, i, j, gsl_matrix_get(st->S, i, j) / rmax);
            }
        }
    int sign;
    mbs_count_factorization(st->ctx);
    st->c0f = 0.0;
    if (gsl_linalg_LU_decomp(st->S, st->perm, &sign) != GSL_SUCCESS)
        return mbs_fail(st->ctx, MBS_SINGULAR_MATRIX, t, "LU of the BDF iteration matrix failed");
    double dmax = 0.0, dmin = INFINITY;
    for (size_t i = 0; i < nr; i++) {
        double d = fabs(gsl_matrix_get(st->S, i, i));
        dmax = fmax(dmax, d);
        dmin = fmin(dmin, d);
    }
    if (!(dmin > 1e-14 * dmax) || !isfinite(dmax))
        return mbs_fail(st->ctx, MBS_SINGULAR_MATRIX, t,
                        "singular BDF iteration matrix (pivot ratio %.3g, rank %zu of %zu)",
                        dmin / dmax, mbs_lu_rank(st->S), st->S->size1);
    st->c0f = c0;
    return MBS_OK;
}

/* Solve A dy = -R with the condensed factorisation (c0 = st->c0f); the
 * structured path solves with the current c0 (exact in c0). */
static int solve(bdf_state *st, double t, double c0now, const double *R, double *dy)
{
    if (st->lsk != BDF_LS_FULL)
        return mbs_dae_form_kkt_solve(st->form, st->ctx, t, c0now, R, dy);
    size_t nq = st->nq, nr = st->nr;
    double c0 = st->c0f;
    /* b_r = -R_r - J_rq R_q / c0 */
    for (size_t i = 0; i < nr; i++) {
        double b = -R[nq + i];
        for (size_t k = 0; k < nq; k++)
            b -= gsl_matrix_get(st->J, nq + i, k) * R[k] / c0;
        gsl_vector_set(st->rhs, i, st->rs[i] * b);
    }
    gsl_linalg_LU_svx(st->S, st->perm, st->rhs);
    mbs_count_solve(st->ctx);
    for (size_t i = 0; i < nr; i++)
        dy[nq + i] = st->cs[i] * gsl_vector_get(st->rhs, i);
    /* dq = (-R_q + J_qr dr) / c0 */
    for (size_t k = 0; k < nq; k++) {
        double b = -R[k];
        for (size_t j = 0; j < nr; j++)
            b += gsl_matrix_get(st->J, k, nq + j) * dy[nq + j];
        dy[k] = b / c0;
    }
    return MBS_OK;
}

/* Residual R = E(y) y' - F(t, y). */
static int residual(bdf_state *st, double t, const double *y, const double *yp, double *R)
{
    int s;
    size_t nq = st->nq, nv = st->nv;
    if (st->lsk != BDF_LS_FULL) {
        if ((s = mbs_dae_form_rhs(st->form, st->ctx, t, y, st->F)) != MBS_OK ||
            (s = mbs_dae_form_mass_times(st->form, st->ctx, t, y, yp, R)) != MBS_OK)
            return s;
        for (size_t i = 0; i < st->n; i++)
            R[i] -= st->F[i];
        return MBS_OK;
    }
    if ((s = mbs_dae_form_rhs(st->form, st->ctx, t, y, st->F)) != MBS_OK ||
        (s = mbs_dae_form_mass(st->form, st->ctx, t, y, st->E)) != MBS_OK)
        return s;
    for (size_t i = 0; i < nq; i++)
        R[i] = yp[i] - st->F[i];
    for (size_t i = 0; i < nv; i++) {
        double r = -st->F[nq + i];
        for (size_t j = 0; j < nv; j++)
            r += gsl_matrix_get(st->E, nq + i, nq + j) * yp[nq + j];
        R[nq + i] = r;
    }
    for (size_t i = nq + nv; i < st->n; i++)
        R[i] = -st->F[i];
    return MBS_OK;
}

/* The round-off floor of the Newton increments at the iterate st->y (residual()
 * just evaluated there, st->yp = c0 y + base) in the norm of the stopping test
 * (full path): the increment that a residual perturbation of the size of its
 * rounding errors causes, the solve applied to eps times the magnitudes of the
 * residual's terms, |E| (|c0 y| + |base|) + |F| + |J| |y| (the q rows: the
 * rounding of c0 q_{n+1} + base, O(eps |q| / h); the constraint rows: the
 * rounding of g(q) through G, eps |G| |q|), as the generalized-alpha family
 * measures its floor (genalpha_step.c).  In the index-weighted norm (v of the
 * index-3 form scaled by h, its multipliers by h^2) the floor is O(eps /
 * newton_tol) at every h.  Uses st->tmp and st->lte as scratch. */
static double roundoff_floor(bdf_state *st, double t, double c0)
{
    size_t n = st->n;
    double *r = st->tmp, *d = st->lte;
    for (size_t i = 0; i < n; i++) {
        double a = fabs(st->F[i]);
        for (size_t j = 0; j < n; j++) {
            double e = gsl_matrix_get(st->E, i, j);
            if (e != 0.0)
                a += fabs(e) * (fabs(c0 * st->y[j]) + fabs(st->base[j]));
            a += fabs(gsl_matrix_get(st->J, i, j) * st->y[j]);
        }
        r[i] = DBL_EPSILON * a;
    }
    if (solve(st, t, c0, r, d) != MBS_OK)
        return INFINITY;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(d[i]))
            return INFINITY;
    return mbs_bdf_wnorm(st, d, st->newtmask);
}

/* Index-3 form (adaptive): the second stop of the simplified Newton iteration,
 * after DASSL's test has passed.  That test weights v by h and lambda by h^2
 * (newtmask), so it stops with iteration errors up to kappa w/h in v and
 * kappa w/h^2 in lambda.  In the index-3 form these are perturbations of the
 * discretized equations that the solution does not forget: a residual delta of
 * the index-3 equations moves the numerical solution by O(delta/h^2)
 * ([arnold2016dae] Sect. 4.1 and Example 10; Brenan, Campbell & Petzold 1996
 * [brenan1996numerical] Sect. 3.2), and
 * v = c0 q + base carries a q iteration error kappa w into v as kappa w c0.
 * So the iteration goes on until the increment meets the same test in the
 * unweighted norm (every component as an ODE variable, st->plainmask),
 * rho/(1 - rho) |dy| <= kappa with rho the latest ratio of increments (the
 * rate of the first test to begin with), for at most the iterations left of
 * BDF_MAXIT; it stops without failing where the increments stop falling
 * (ratio >= 0.5: the unweighted increments of v and lambda have a round-off
 * floor eps/h and eps/h^2, which the weighted test already met), as
 * methods/integrators/radau/radau5.c (radau_newton_index3) does for Radau IIA.
 * The extra iterations only refine y; the rate carried to the next step
 * (st->snewt) stays that of DASSL's test. */
static int index3_second_stop(bdf_state *st, double t, double c0, double ratio, int iters,
                              double faccon)
{
    size_t n = st->n;
    double dn = mbs_bdf_wnorm(st, st->dy, st->plainmask);
    for (int k = 0; k < iters && faccon * dn > st->kappa; k++) {
        int s;
        for (size_t i = 0; i < n; i++)
            st->yp[i] = c0 * st->y[i] + st->base[i];
        if ((s = residual(st, t, st->y, st->yp, st->R)) != MBS_OK ||
            (s = solve(st, t, c0, st->R, st->dy)) != MBS_OK)
            return s;
        mbs_count_newton(st->ctx);
        for (size_t i = 0; i < n; i++)
            st->dy[i] *= ratio != 1.0 ? 2.0 / (1.0 + ratio) : 1.0;
        double dp = dn;
        dn = mbs_bdf_wnorm(st, st->dy, st->plainmask);
        if (!(dn < 0.5 * dp)) /* no longer contracting: round-off (or NaN): keep y */
            break;
        for (size_t i = 0; i < n; i++)
            st->y[i] += st->dy[i];
        faccon = (dn / dp) / (1.0 - dn / dp);
    }
    return MBS_OK;
}

/* The corrector: Newton from y = ypred for y' = c0 y + base at t.
 * Returns MBS_OK, a positive status (no convergence, singular matrix, callback
 * failure: retry with a smaller step) or a fatal status. */
static int corrector(bdf_state *st, double t, double h, double c0)
{
    size_t n = st->n;
    mbs_ctx *ctx = st->ctx;
    int s;
    st->form->h = st->var->kind == MBS_FORM_BAUMGARTE2 ? st->hbaum : h;
    for (;;) {
        int fresh = st->jac_fresh;
        double ratio = st->c0f > 0.0 ? c0 / st->c0f : 0.0;
        if (st->c0f == 0.0 || ratio < 0.6 || ratio > 1.0 / 0.6) {
            if (!fresh) {
                if ((s = new_jacobian(st, t, st->ypred)) != MBS_OK)
                    return s;
                fresh = 1;
            }
            if ((s = factor(st, c0, t)) != MBS_OK)
                return s;
            st->snewt = 100.0;
            ratio = 1.0;
        }
        if (st->lsk != BDF_LS_FULL)
            ratio = 1.0; /* the structured solve uses the current c0 */
        memcpy(st->y, st->ypred, n * sizeof(double));
        double norm0 = 0.0, rho = 0.0, nrm = NAN, prev = INFINITY, fl = NAN;
        int converged = 0;
        const int floor_test = st->var->fixed && st->lsk == BDF_LS_FULL;
        s = MBS_OK;
        int maxit = st->var->fixed ? BDF_MAXIT_FIXED : BDF_MAXIT;
        for (int m = 0; m < maxit; m++) {
            for (size_t i = 0; i < n; i++)
                st->yp[i] = c0 * st->y[i] + st->base[i];
            if ((s = residual(st, t, st->y, st->yp, st->R)) != MBS_OK)
                break;
            if ((s = solve(st, t, c0, st->R, st->dy)) != MBS_OK)
                break;
            mbs_count_newton(ctx);
            if (ratio != 1.0)
                for (size_t i = 0; i < n; i++)
                    st->dy[i] *= 2.0 / (1.0 + ratio);
            int finite = 1;
            for (size_t i = 0; i < n; i++) {
                st->y[i] += st->dy[i];
                finite = finite && isfinite(st->y[i]);
            }
            if (!finite) {
                s = MBS_NEWTON_DIVERGED;
                break;
            }
            nrm = mbs_bdf_wnorm(st, st->dy, st->newtmask);
            if (m == 0) {
                norm0 = nrm;
                if (nrm <= 100.0 * 2.2e-16 * mbs_bdf_wnorm(st, st->ypred, st->newtmask)) {
                    converged = 1;
                    break;
                }
            } else {
                rho = m == 1 ? nrm / norm0 : pow(nrm / norm0, 1.0 / m); /* pow(x, 1) == x */
                /* Fixed step (no smaller step to fall back on): an iteration that
                 * stops contracting (an increment at least half the previous one)
                 * or reaches its last iteration within 10 times its round-off floor
                 * has converged (stagnation at
                 * round-off is not a divergence, as in the generalized-alpha
                 * family); above it, a kept matrix is evaluated afresh. */
                if (floor_test && (nrm >= 0.5 * prev || rho > 0.9 || m == maxit - 1)) {
                    fl = roundoff_floor(st, t, c0);
                    if (nrm <= 10.0 * fl) {
                        converged = 1;
                        break;
                    }
                    if (!fresh) {
                        s = MBS_NEWTON_DIVERGED; /* slow with an old matrix: refresh it */
                        break;
                    }
                }
                if (rho > 0.9) {
                    s = MBS_NEWTON_DIVERGED;
                    break;
                }
                st->snewt = rho / (1.0 - rho);
            }
            prev = nrm;
            /* A rate carried over from an earlier step (or measured in the
             * quadratic phase of a fresh Jacobian) is trusted only down to
             * 0.5 for acceptance after the first iteration. */
            double sfac = m == 0 ? fmax(st->snewt, 0.5) : st->snewt;
            if (sfac * nrm <= st->kappa) {
                converged = 1;
                if (st->plainmask && (s = index3_second_stop(st, t, c0, ratio, maxit - 1 - m,
                                                             sfac)) != MBS_OK)
                    converged = 0;
                break;
            }
        }
        if (s < 0)
            return s;
        if (converged) {
            for (size_t i = 0; i < n; i++)
                st->yp[i] = c0 * st->y[i] + st->base[i];
            return MBS_OK;
        }
        if (fresh && floor_test && isnan(fl))
            fl = roundoff_floor(st, t, c0);
        if (fresh && floor_test && rho > 0.9)
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                            "Newton iteration diverged (h=%.3g): rate %.3g, scaled increment "
                            "%.3g above its round-off floor %.3g (tolerance %.3g)",
                            h, rho, nrm, fl, st->kappa);
        if (fresh && floor_test)
            return mbs_fail(ctx, s > 0 ? s : MBS_NEWTON_DIVERGED, t,
                            "Newton did not converge in %d iterations (h=%.3g): rate %.3g, "
                            "scaled increment %.3g (tolerance %.3g), round-off floor %.3g",
                            maxit, h, rho, nrm, st->kappa, fl);
        if (fresh)
            return mbs_fail(ctx, s > 0 ? s : MBS_NEWTON_DIVERGED, t,
                            "Newton did not converge in %d iterations (h=%.3g)", maxit, h);
        /* Old matrix: re-evaluate the Jacobian and retry with the same step. */
        ctx->reason[0] = '\0';
        if ((s = new_jacobian(st, t, st->ypred)) != MBS_OK)
            return s;
        st->c0f = 0.0;
    }
}

/* ---- one step attempt ---------------------------------------------------------- */

/* Predictor and corrector coefficients for a step t_n -> t_n + h of order k,
 * then the corrector.  On success st->y, st->yp hold y_{n+1}, y'_{n+1}; *err is
 * the weighted local error estimate (adaptive) and st->lte the error vector. */
int mbs_bdf_attempt(bdf_state *st, double h, int k, double *err)
{
    size_t n = st->n;
    double t1 = st->ht[0] + h;
    st->hnow = h;
    st->kdense = k;
    double x[BDF_NHIST + 1], c[BDF_KMAX + 1], L[BDF_NHIST];
    /* predictor: interpolant through min(k+1, nhist) stored points; from the
     * initial point alone: y0 + h y'0 (lambda, mu constant). */
    int mp = k + 1 < st->nhist ? k + 1 : st->nhist;
    if (mp == 1) {
        for (size_t i = 0; i < n; i++)
            st->ypred[i] = st->hy[0][i] + h * st->y0p[i];
    } else {
        mbs_bdf_lagrange_weights(st->ht, mp, t1, L);
        for (size_t i = 0; i < n; i++) {
            double s = 0.0;
            for (int j = 0; j < mp; j++)
                s += L[j] * st->hy[j][i];
            st->ypred[i] = s;
        }
    }
    /* corrector coefficients on t1, t_n, ..., t_{n+1-k} */
    x[0] = t1;
    for (int j = 1; j <= k; j++)
        x[j] = st->ht[j - 1];
    mbs_bdf_coefficients(x, k, c);
    for (size_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 1; j <= k; j++)
            s += c[j] * st->hy[j - 1][i];
        st->base[i] = s;
    }
    int s = corrector(st, t1, h, c[0]);
    if (s != MBS_OK)
        return s;
    /* LTE ~ (y - y^P) / (c0 (t_{n+1} - t_{n-k})); the oldest predictor node
     * t_{n-k} is t_n - h when only y_0 was available (Euler predictor). */
    double told = mp == 1 ? st->ht[0] - h : st->ht[mp - 1];
    double fac = 1.0 / (c[0] * (t1 - told));
    for (size_t i = 0; i < n; i++)
        st->lte[i] = fac * (st->y[i] - st->ypred[i]);
    *err = mbs_bdf_wnorm(st, st->lte, st->errmask);
    return MBS_OK;
}

/* Make y_{n+1} (st->y at t) the newest history point. */
void mbs_bdf_push_history(bdf_state *st, double t)
{
    double *oldest = st->hy[BDF_NHIST - 1];
    for (int j = BDF_NHIST - 1; j > 0; j--) {
        st->hy[j] = st->hy[j - 1];
        st->ht[j] = st->ht[j - 1];
    }
    st->hy[0] = oldest;
    st->ht[0] = t;
    memcpy(oldest, st->y, st->n * sizeof(double));
    if (st->nhist < BDF_NHIST)
        st->nhist++;
}

/* Dense output (mbs_dense_fn, method.h): the polynomial through the last k + 1
 * accepted points, k the order of the step just accepted (the solution
 * polynomial of the BDF step, as DASSL's DDATRP interpolates: Brenan, Campbell
 * and Petzold 1996 [brenan1996numerical], Ch. 5), every component. */
static int bdf_dense(void *p, double t, double *state)
{
    bdf_state *st = p;
    int m = st->kdense + 1 < st->nhist ? st->kdense + 1 : st->nhist;
    double L[BDF_NHIST];
    mbs_bdf_lagrange_weights(st->ht, m, t, L);
    for (size_t i = 0; i < st->n; i++) {
        double y = 0.0;
        for (int j = 0; j < m; j++)
            y += L[j] * st->hy[j][i];
        st->ydense[i] = y;
    }
    mbs_dae_form_to_state(st->form, st->ydense, state);
    return 0;
}

/* Report the newest point as an accepted step (projected first for proj-). */
int mbs_bdf_report(bdf_state *st, double t)
{
    if (st->proj) {
        int s = mbs_project(st->proj, st->ctx, t, st->hy[0], st->hy[0] + st->nq);
        if (s != MBS_OK)
            return s;
    }
    mbs_dae_form_to_state(st->form, st->hy[0], st->state);
    st->jac_fresh = 0;
    st->ctx->dense = st->nhist > 1 ? bdf_dense : NULL;
    st->ctx->dense_data = st;
    return mbs_accept(st->ctx, t, st->state, st->yp + st->nq);
}

/* v'_0 without constraints and with a singular mass matrix (smallmass at
 * m1 = 0, the first-order DAE of [arnold2013recursive] Eq. (6)), where M v' = f does not
 * determine v': the rows of M that vanish are algebraic equations 0 = F_i(t, q, v);
 * they are replaced by their time derivative
 *     dF_i/dt + dF_i/dq q'_0 + dF_i/dv v'_0 = 0
 * (dF/dt by a forward difference), the other rows stay E_i v'_0 = F_i.  Uses
 * the iteration-matrix workspace (n_r = n_v here); factorised again before the
 * first step. */
static int initial_derivative_singular(bdf_state *st, double t, const double *y)
{
    size_t nq = st->nq, nv = st->nv;
    mbs_ctx *ctx = st->ctx;
    int s;
    if ((s = new_jacobian(st, t, y)) != MBS_OK ||
        (s = mbs_dae_form_rhs(st->form, ctx, t, y, st->F)) != MBS_OK)
        return s;
    double dt = 1e-7 * fmax(1.0, fabs(t));
    if ((s = mbs_dae_form_rhs(st->form, ctx, t + dt, y, st->tmp)) != MBS_OK)
        return s;
    for (size_t i = 0; i < nv; i++) {
        double emax = 0.0;
        for (size_t j = 0; j < nv; j++)
            emax = fmax(emax, fabs(gsl_matrix_get(st->E, nq + i, nq + j)));
        int alg = emax == 0.0;
        double b = st->F[nq + i];
        if (alg) {
            b = -(st->tmp[nq + i] - st->F[nq + i]) / dt;
            for (size_t k = 0; k < nq; k++)
                b -= gsl_matrix_get(st->J, nq + i, k) * st->y0p[k];
        }
        for (size_t j = 0; j < nv; j++)
            gsl_matrix_set(st->S, i, j,
                           alg ? gsl_matrix_get(st->J, nq + i, nq + j)
                               : gsl_matrix_get(st->E, nq + i, nq + j));
        gsl_vector_set(st->rhs, i, b);
    }
    st->c0f = 0.0;
    st->jac_fresh = 0;
    int sign;
    mbs_count_factorization(ctx);
    if (gsl_linalg_LU_decomp(st->S, st->perm, &sign) != GSL_SUCCESS ||
        gsl_linalg_LU_svx(st->S, st->perm, st->rhs) != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                        "singular-mass DAE: initial v' undetermined (only zero rows of M "
                        "are differentiated)");
    mbs_count_solve(ctx);
    for (size_t i = 0; i < nv; i++) {
        double d = gsl_vector_get(st->rhs, i);
        if (!isfinite(d))
            return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                            "singular-mass DAE: initial v' undetermined (only zero rows of "
                            "M are differentiated)");
        st->y0p[nq + i] = d;
    }
    return MBS_OK;
}

/* y'_0 for the differential components from the index-1 system ([arnold2016dae]
 * Eqs. (83)-(84)); zero for the multipliers. */
int mbs_bdf_initial_derivative(bdf_state *st, double t, const double *y)
{
    size_t nq = st->nq;
    memset(st->y0p, 0, st->n * sizeof(double));
    int s = mbs_qdot(st->ctx, y, y + nq, st->y0p);
    if (s != MBS_OK)
        return s;
    if (st->nl == 0 && st->nr == st->nv && (st->ctx->pb->flags & MBS_PB_SINGULAR_MASS))
        return initial_derivative_singular(st, t, y);
    return mbs_index1_accel(st->ix, st->ctx, t, y, y + nq, st->y0p + nq, NULL);
}

