/* One step of the generalized-alpha methods (methods/integrators/genalpha/genalpha.c, [arnold2016dae]
 * Eqs. (70), (94)): the iteration matrix (dense, difference Jacobian, or the
 * structured KKT backends), the residual and the simplified Newton iteration
 * with its round-off floor.  Split from genalpha.c. */
#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../../../core/gslalloc.h"
#include "../../formulations/index1.h"
#include "../../formulations/kkt_eval.h"
#include "../../linsol/linsol.h"
#include "../../framework/method.h"
#include "../../../problems/triplets.h"
#include "genalpha_impl.h"

/* ---- one step ------------------------------------------------------------------ */

/* LU of the assembled st->K in place (counted): 0, -1 when GSL's LU fails, 1
 * when the pivots span more than 14 decades (numerically singular). */
static int factor_K(ga_state *st, mbs_ctx *ctx)
{
    int sign;
    mbs_count_factorization(ctx);
    if (gsl_linalg_LU_decomp(st->K, st->perm, &sign) != GSL_SUCCESS)
        return -1;
    double umax = 0.0, umin = INFINITY;
    for (size_t i = 0; i < st->nx; i++) {
        double d = fabs(gsl_matrix_get(st->K, i, i));
        umax = fmax(umax, d);
        umin = fmin(umin, d);
    }
    return umin > 1e-14 * umax ? 0 : 1;
}

/* The iteration matrix at (t, q) (Eq. (70); for GGL the matrix after Eq. (94)),
 * LU-factorised.  Uses st->M, st->G as given (the caller evaluated them). */
static int factor(ga_state *st, mbs_ctx *ctx, double t, const gsl_matrix *M,
                  const gsl_matrix *G)
{
    size_t n = st->n, nl = st->nl;
    double c = (1.0 - st->am) / (st->beta * (1.0 - st->af));
    double gb = st->gamma / st->beta;
    mbs_count_jacobian(ctx); /* the matrix of Eq. (70) from M and G */
    gsl_matrix_set_zero(st->K);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++)
            gsl_matrix_set(st->K, i, j, c * gsl_matrix_get(M, i, j));
        for (size_t k = 0; k < nl; k++) {
            double gki = gsl_matrix_get(G, k, i);
            gsl_matrix_set(st->K, i, n + k, gki);
            gsl_matrix_set(st->K, n + k, i, gki);
        }
    }
    if (st->kind == GA_GGL) {
        for (size_t k = 0; k < nl; k++) {
            for (size_t i = 0; i < n; i++) {
                double mg = 0.0; /* (M G^T)_{ik} */
                for (size_t j = 0; j < n; j++)
                    mg += gsl_matrix_get(M, i, j) * gsl_matrix_get(G, k, j);
                gsl_matrix_set(st->K, i, n + nl + k, c * mg);
                gsl_matrix_set(st->K, n + nl + k, i, gb * gsl_matrix_get(G, k, i));
            }
            for (size_t l = 0; l < nl; l++) {
                double gg = 0.0; /* (G G^T)_{kl} */
                for (size_t j = 0; j < n; j++)
                    gg += gsl_matrix_get(G, k, j) * gsl_matrix_get(G, l, j);
                gsl_matrix_set(st->K, n + nl + k, n + nl + l, gb * gg);
            }
        }
    }
    int lu = factor_K(st, ctx);
    if (lu < 0)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "LU of the iteration matrix failed");
    if (lu > 0)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                        "singular iteration matrix (Eq. (70)) at t=%g (rank %zu of %zu)", t,
                        mbs_lu_rank(st->K), st->nx);
    return MBS_OK;
}

/* Structured path: KKT(c M(q_n), G(q_n)) [and KKT(I, G(q_n)) for GGL] on the
 * backend (header).  Evaluates M, G at (t, q_n) into ke0. */
static int factor_ls(ga_state *st, mbs_ctx *ctx, double t, const double *q)
{
    double c = (1.0 - st->am) / (st->beta * (1.0 - st->af));
    int s;
    if ((s = mbs_kkt_eval_mass(&st->ke0, ctx, t, q)) != MBS_OK ||
        (s = mbs_kkt_eval_jacobian(&st->ke0, ctx, t, q)) != MBS_OK)
        return s;
    if (mbs_triplets_copy_scaled(&st->cM, &st->ke0.M, c) != 0)
        return mbs_fail(ctx, MBS_NO_MEMORY, t, "iteration matrix: out of memory");
    if ((s = mbs_kkt_factor(st->ls, st->lskind, ctx, t, &st->cM, &st->ke0.B,
                            "iteration matrix (Eq. (70))")) != MBS_OK)
        return s;
    if (st->kind == GA_GGL)
        return mbs_kkt_factor(st->ls2, st->lskind, ctx, t, &st->Id, &st->ke0.B,
                              "iteration matrix (G G^T block, Eq. (94))");
    return MBS_OK;
}

/* Structured path: dx = K^-1 rhs (rhs = -F, n_x) with the factors of factor_ls. */
static int solve_ls(ga_state *st, mbs_ctx *ctx, double t, const double *rhs, double *dx)
{
    size_t n = st->n, nl = st->nl;
    int s;
    if (st->kind != GA_GGL)
        return mbs_kkt_solve(st->ls, st->lskind, ctx, t, rhs, rhs + n, dx, dx + n,
                             "iteration matrix");
    /* (w, h lambda): KKT(c M, G) with constraint rows (beta/gamma) r3 */
    double bg = st->beta / st->gamma;
    for (size_t k = 0; k < nl; k++) {
        st->r2[k] = bg * rhs[n + nl + k];
        st->sl[k] = st->r2[k] - rhs[n + k]; /* G G^T mu = (beta/gamma) r3 - r2 */
    }
    if ((s = mbs_kkt_solve(st->ls, st->lskind, ctx, t, rhs, st->r2, st->sa, dx + n,
                           "iteration matrix")) != MBS_OK)
        return s;
    memset(st->r1, 0, n * sizeof(double));
    if ((s = mbs_kkt_solve(st->ls2, st->lskind, ctx, t, st->r1, st->sl, st->z, st->nu,
                           "iteration matrix (G G^T block)")) != MBS_OK)
        return s;
    for (size_t i = 0; i < n; i++)
        dx[i] = st->sa[i] - st->z[i];
    for (size_t k = 0; k < nl; k++)
        dx[n + nl + k] = -st->nu[k];
    return MBS_OK;
}

/* The linear maps (68b-e) (with w = Delta q + G^T(q_n) mu for GGL, Eq. (94));
 * on a Lie group (68b) is q_{n+1} = q_n o exp(h Delta q) (genalpha.c). */
static int linear_update(ga_state *st, mbs_ctx *ctx, double h, const double *x)
{
    size_t n = st->n, nl = st->nl;
    double b = st->beta, gm = st->gamma;
    double c = (1.0 - st->am) / (b * (1.0 - st->af));
    if (st->ls) { /* w = Delta q + G^T(q_n) mu from the triplets */
        memcpy(st->w, x, n * sizeof(double));
        if (st->kind == GA_GGL)
            mbs_triplets_gemv(&st->ke0.B, 1, 1.0, x + n + nl, st->w);
    }
    for (size_t i = 0; i < n; i++) {
        double w = x[i];
        if (st->ls)
            w = st->w[i];
        else if (st->kind == GA_GGL)
            for (size_t k = 0; k < nl; k++)
                w += gsl_matrix_get(st->G0, k, i) * x[n + nl + k];
        st->w[i] = w;
        if (st->lie)
            st->hx[i] = h * x[i];
        else
            st->q1[i] = st->qn[i] + h * x[i];                                   /* (68b) */
        st->a1[i] = (w - st->vn[i] - (0.5 - b) * h * st->an[i]) / (b * h);      /* (68c) */
        st->v1[i] = gm / b * w + (1.0 - gm / b) * st->vn[i] +
                    h * (1.0 - gm / (2.0 * b)) * st->an[i];                     /* (68d) */
        st->qdd1[i] = c * ((w - st->vn[i]) / h - 0.5 * st->an[i]) +
                      (st->an[i] - st->af * st->qddn[i]) / (1.0 - st->af);      /* (68e) */
    }
    return st->lie ? mbs_lie_exp(ctx, st->qn, st->hx, st->q1) : MBS_OK;
}

/* residual() with M and G as triplets (structured path); linear_update done. */
static int residual_ls(ga_state *st, mbs_ctx *ctx, double t1, double h, const double *x)
{
    size_t n = st->n, nl = st->nl;
    double *F = st->F->data;
    int s;
    if ((s = mbs_kkt_eval_mass(&st->ke, ctx, t1, st->q1)) != MBS_OK ||
        (s = mbs_force(ctx, t1, st->q1, st->v1, st->f)) != MBS_OK ||
        (s = mbs_kkt_eval_jacobian(&st->ke, ctx, t1, st->q1)) != MBS_OK ||
        (s = mbs_constraint(ctx, t1, st->q1, st->g)) != MBS_OK)
        return s;
    if (st->kind == GA_GGL && (s = mbs_constraint_t(ctx, t1, st->q1, st->gt)) != MBS_OK)
        return s;
    for (size_t i = 0; i < n; i++)
        F[i] = -h * st->f[i];
    mbs_triplets_gemv(&st->ke.M, 0, h, st->qdd1, F);
    mbs_triplets_gemv(&st->ke.B, 1, 1.0, x + n, F);
    for (size_t k = 0; k < nl; k++)
        F[n + k] = st->g[k] / h;
    if (st->kind == GA_GGL) {
        memcpy(F + n + nl, st->gt, nl * sizeof(double));
        mbs_triplets_gemv(&st->ke.B, 0, 1.0, st->v1, F + n + nl);
    }
    for (size_t i = 0; i < st->nx; i++)
        if (!isfinite(F[i]))
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t1, "non-finite Newton residual");
    return MBS_OK;
}

/* F(x) = (r_h, g_h [, gdot_h]) of Eqs. (69) / (94). */
static int residual(ga_state *st, mbs_ctx *ctx, double t1, double h, const double *x)
{
    size_t n = st->n, nl = st->nl;
    int s;
    if ((s = linear_update(st, ctx, h, x)) != MBS_OK)
        return s;
    if (st->ls)
        return residual_ls(st, ctx, t1, h, x);
    if ((s = mbs_mass(ctx, t1, st->q1, st->M)) != MBS_OK ||
        (s = mbs_force(ctx, t1, st->q1, st->v1, st->f)) != MBS_OK ||
        (s = mbs_constraint_jacobian(ctx, t1, st->q1, st->G)) != MBS_OK ||
        (s = mbs_constraint(ctx, t1, st->q1, st->g)) != MBS_OK)
        return s;
    if (st->kind == GA_GGL && (s = mbs_constraint_t(ctx, t1, st->q1, st->gt)) != MBS_OK)
        return s;
    for (size_t i = 0; i < n; i++) {
        double r = -h * st->f[i];
        for (size_t j = 0; j < n; j++)
            r += gsl_matrix_get(st->M, i, j) * h * st->qdd1[j];
        for (size_t k = 0; k < nl; k++)
            r += gsl_matrix_get(st->G, k, i) * x[n + k];
        gsl_vector_set(st->F, i, r);
    }
    for (size_t k = 0; k < nl; k++) {
        gsl_vector_set(st->F, n + k, st->g[k] / h);
        if (st->kind == GA_GGL) {
            double gd = st->gt[k];
            for (size_t j = 0; j < n; j++)
                gd += gsl_matrix_get(st->G, k, j) * st->v1[j];
            gsl_vector_set(st->F, n + nl + k, gd);
        }
    }
    for (size_t i = 0; i < st->nx; i++)
        if (!isfinite(gsl_vector_get(st->F, i)))
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t1, "non-finite Newton residual");
    return MBS_OK;
}

/* Scaled norm of a Newton increment d at the iterate x.  The iteration matrix of
 * the scaled system (Arnold 2016 [arnold2016dae], Eqs. (69)-(70) and (94); Arnold
 * and Brüls 2007 [arnold2007convergence]) and its inverse stay bounded as h -> 0,
 * so a perturbation of size eps in g/h moves every unknown by O(eps/h): in the
 * index-3 forms Delta q (a velocity, index 2) by O(eps/h) and lambda (index 3) by
 * O(eps/h^2); in the GGL form, where G v = 0 fixes the normal part of Delta q to
 * O(eps), Delta q (index 1) by O(eps), lambda and mu (index 2) by O(eps/h).  As
 * RADAU5 weights its error and Newton norms (Hairer and Wanner 1996
 * [hairer1996solving], Sect. VII.4: the scale of an index-2 variable divided by
 * h, of an index-3 variable by h^2), an unknown of index k is measured relative
 * to (1 + |value|) / h^(k-1), so that newton_tol means the same at every h and
 * round-off lies at O(eps) in this norm.  The unknown h lambda is lambda scaled by
 * h: relative to 1 + |lambda| its increment is |d| / (h + |x|). */
static double increment_norm(const ga_state *st, double h, const double *x, const double *d)
{
    size_t n = st->n, nl = st->nl;
    int ggl = st->kind == GA_GGL;
    double wq = ggl ? 1.0 : h, wl = ggl ? h : h * h;
    double e = 0.0;
    for (size_t i = 0; i < st->nx; i++) {
        double r;
        if (i < n)
            r = wq * fabs(d[i]) / (1.0 + fabs(x[i]));
        else if (i < n + nl)
            r = wl * fabs(d[i]) / (h + fabs(x[i]));
        else
            r = h * fabs(d[i]) / (1.0 + fabs(x[i])); /* mu */
        if (r > e || isnan(r))
            e = r;
    }
    return e;
}

/* The round-off floor of the scaled increments at the iterate st->x (residual()
 * just evaluated there, and the current factorisation): the increment that a
 * residual perturbation of the size of its rounding errors causes, i.e. K^-1
 * applied to eps times the magnitudes of the residual's terms (momentum rows:
 * |M| |h q''| + h |f| + |G^T| |h lambda|; position constraints: the rounding of
 * q_{n+1} through G, |G| |q_{n+1}| / h; GGL velocity constraints: |G| |v| +
 * |g_t|), in the norm of increment_norm.  Uses st->F0 and st->F as scratch. */
static int roundoff_floor(ga_state *st, mbs_ctx *ctx, double t, double h, double *out)
{
    size_t n = st->n, nl = st->nl;
    double *r = st->F0->data, *z = st->F->data;
    double qmax = 0.0;
    for (size_t j = 0; j < st->nq; j++)
        qmax = fmax(qmax, fabs(st->q1[j]));
    memset(r, 0, st->nx * sizeof(double));
    for (size_t i = 0; i < n; i++)
        r[i] = h * fabs(st->f[i]);
    if (st->ls) {
        const mbs_triplets *M = &st->ke.M, *B = &st->ke.B;
        for (size_t p = 0; p < M->nnz; p++)
            r[M->row[p]] += fabs(M->val[p] * h * st->qdd1[M->col[p]]);
        for (size_t p = 0; p < B->nnz; p++) {
            size_t k = B->row[p], j = B->col[p];
            r[j] += fabs(B->val[p] * st->x[n + k]);
            r[n + k] += fabs(B->val[p]) * (st->lie ? qmax : fabs(st->q1[j])) / h;
            if (st->kind == GA_GGL)
                r[n + nl + k] += fabs(B->val[p] * st->v1[j]);
        }
    } else {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                r[i] += fabs(gsl_matrix_get(st->M, i, j) * h * st->qdd1[j]);
        for (size_t k = 0; k < nl; k++)
            for (size_t j = 0; j < n; j++) {
                double gkj = gsl_matrix_get(st->G, k, j);
                r[j] += fabs(gkj * st->x[n + k]);
                r[n + k] += fabs(gkj) * (st->lie ? qmax : fabs(st->q1[j])) / h;
                if (st->kind == GA_GGL)
                    r[n + nl + k] += fabs(gkj * st->v1[j]);
            }
    }
    if (st->kind == GA_GGL)
        for (size_t k = 0; k < nl; k++)
            r[n + nl + k] += fabs(st->gt[k]);
    for (size_t i = 0; i < st->nx; i++)
        r[i] *= DBL_EPSILON;
    int s;
    if (st->ls) {
        if ((s = solve_ls(st, ctx, t, r, z)) != MBS_OK)
            return s;
    } else {
        mbs_count_solve(ctx);
        if (gsl_linalg_LU_solve(st->K, st->perm, st->F0, st->F) != GSL_SUCCESS)
            return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "LU solve failed");
    }
    *out = increment_norm(st, h, st->x, z);
    return MBS_OK;
}

/* Fallback when the iteration with the matrix of Eq. (70) stops contracting (its
 * O(h) terms - force derivatives, derivatives of G^T lambda and of G v - matter
 * for fast motions): the full Jacobian of F at x by forward differences, LU-factorised.
 * Costs n_x residual evaluations (counted by the wrappers). */
static int fd_factor(ga_state *st, mbs_ctx *ctx, double t1, double h, double *x)
{
    size_t n = st->n, nl = st->nl;
    int s;
    mbs_count_jacobian(ctx);
    if ((s = residual(st, ctx, t1, h, x)) != MBS_OK)
        return s;
    gsl_vector_memcpy(st->F0, st->F);
    for (size_t j = 0; j < st->nx; j++) {
        double xj = x[j];
        double scale = (j >= n && j < n + nl) ? h : 1.0;
        double d = sqrt(DBL_EPSILON) * fmax(fabs(xj), scale);
        x[j] = xj + d;
        d = x[j] - xj;
        s = residual(st, ctx, t1, h, x);
        x[j] = xj;
        if (s != MBS_OK)
            return s;
        for (size_t i = 0; i < st->nx; i++)
            gsl_matrix_set(st->K, i, j,
                           (gsl_vector_get(st->F, i) - gsl_vector_get(st->F0, i)) / d);
    }
    int lu = factor_K(st, ctx);
    if (lu < 0)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t1, "LU of the difference Jacobian failed");
    if (lu > 0)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t1, "singular Newton Jacobian at t=%g", t1);
    return MBS_OK;
}

int mbs_ga_step(ga_state *st, mbs_ctx *ctx, double t, double h)
{
    size_t n = st->n, nl = st->nl;
    double t1 = t + h;
    int s;
    /* Iteration matrix at (t_n, q_n), Eq. (70). */
    if (st->ls) {
        if ((s = factor_ls(st, ctx, t, st->qn)) != MBS_OK)
            return s;
    } else if ((s = mbs_mass(ctx, t, st->qn, st->M0)) != MBS_OK ||
               (s = mbs_constraint_jacobian(ctx, t, st->qn, st->G0)) != MBS_OK ||
               (s = factor(st, ctx, t, st->M0, st->G0)) != MBS_OK)
        return s;
    /* Predictor a_{n+1} = a_n: Delta q = v_n + h a_n / 2, lambda_{n+1} = lambda_n, mu = 0. */
    for (size_t i = 0; i < n; i++)
        st->x[i] = st->vn[i] + 0.5 * h * st->an[i];
    for (size_t k = 0; k < nl; k++) {
        st->x[n + k] = h * st->lam[k];
        if (st->kind == GA_GGL)
            st->x[n + nl + k] = 0.0;
    }
    /* Simplified Newton, stopped when the scaled increment (increment_norm) is at
     * most newton_tol.  In these weights an accepted increment e leaves an error of
     * about e/h in Delta q and so in v at every step, and over t_end/h steps these add
     * up: at the former default 1e-13, index3/hht on the simple pendulum (t_end 200)
     * had q errors 3.07e-5, 5.74e-6 at h = 2.5e-4, 1.25e-4 (pairwise order 2.42, the
     * iteration error cancelling part of the discretization error) and stalled at
     * 5e-4 for t_end 2000; at 1e-15 (default; as the fixed-step BDF methods,
     * bdf_newton.c, and Arnold 2016 [arnold2016dae], Sect. 4.2: direct index-3
     * discretizations need very small iteration errors) 3.18e-5, 8.02e-6 (1.99),
     * equal to newton_tol 1e-16 to 3 digits.  An iteration that contracts slower than 1/2 has either
     * reached the round-off floor of the scaled unknowns (roundoff_floor): then it
     * has converged and keeps its last iterate (so does one that stalls within 10
     * newton_tol); or it switches once to the difference Jacobian (fd_factor;
     * the structured backends have none and continue); an increment that still
     * grows above 10 times the floor (on the backends: grows past both previous
     * ones, see the header) is a divergence. */
    double prev = INFINITY, prev2 = INFINITY, err = INFINITY;
    int refactored = 0, converged = 0;
    for (long it = 0; it < st->nmaxit && !converged; it++) {
        if ((s = residual(st, ctx, t1, h, st->x)) != MBS_OK)
            return s;
        mbs_count_newton(ctx);
        gsl_vector_scale(st->F, -1.0);
        if (st->ls) {
            if ((s = solve_ls(st, ctx, t, st->F->data, st->dx->data)) != MBS_OK)
                return s;
        } else {
            mbs_count_solve(ctx);
            if (gsl_linalg_LU_solve(st->K, st->perm, st->F, st->dx) != GSL_SUCCESS)
                return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "LU solve failed");
        }
        err = increment_norm(st, h, st->x, st->dx->data);
        if (!isfinite(err))
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t, "non-finite Newton increment at t=%g",
                            t);
        if (err >= 0.5 * prev) {
            double fl = NAN;
            if ((s = roundoff_floor(st, ctx, t, h, &fl)) != MBS_OK)
                return s;
            if (err <= 10.0 * fmax(st->ntol, fl)) {
                converged = 1; /* round-off level: keep the last iterate */
                break;
            }
            if (!refactored && !st->ls) {
                /* Slow or no contraction: exact Newton from the last iterate. */
                refactored = 1;
                memcpy(st->x, st->xold, st->nx * sizeof(double));
                if ((s = fd_factor(st, ctx, t1, h, st->x)) != MBS_OK)
                    return s;
                prev = INFINITY;
                continue;
            }
            if (err >= prev && (!st->ls || err >= prev2))
                return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                                "Newton iteration diverged at t=%g (h=%g): contraction rate "
                                "%.3g, scaled increment %.3g above its round-off floor %.3g",
                                t, h, err / prev, err, fl);
        }
        memcpy(st->xold, st->x, st->nx * sizeof(double));
        for (size_t i = 0; i < st->nx; i++)
            st->x[i] += gsl_vector_get(st->dx, i);
        prev2 = prev;
        prev = err;
        converged = err <= st->ntol;
    }
    if (!converged) {
        /* the last iteration within 10 times the round-off floor has converged too */
        double fl = NAN;
        if ((s = roundoff_floor(st, ctx, t, h, &fl)) != MBS_OK)
            return s;
        converged = err <= 10.0 * fmax(st->ntol, fl);
    }
    if (!converged)
        return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                        "Newton did not converge in %ld iterations at t=%g (h=%g, increment %g)",
                        st->nmaxit, t, h, err);
    /* Accept: the linear maps at the converged unknowns. */
    if ((s = linear_update(st, ctx, h, st->x)) != MBS_OK)
        return s;
    memcpy(st->qn, st->q1, st->nq * sizeof(double));
    memcpy(st->vn, st->v1, n * sizeof(double));
    memcpy(st->qddn, st->qdd1, n * sizeof(double));
    memcpy(st->an, st->a1, n * sizeof(double));
    for (size_t k = 0; k < nl; k++)
        st->lam[k] = st->x[n + k] / h;
    return MBS_OK;
}

