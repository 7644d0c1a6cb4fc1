/* dF/dy from the problem's analytic derivative callbacks (problems/problem.h)
 * for methods/formulations/dae_form.c (mbs_dae_form_jac with f->deriv set). */
#include <math.h>
#include <string.h>

#include "../linsol/dense_small.h"
#include "dae_form.h"

/* The leading m x k block of A as a matrix (gsl_matrix_submatrix(A, 0, 0, m,
 * k) without the library call; m, k within A's sizes). */
static inline gsl_matrix leading(gsl_matrix *A, size_t m, size_t k)
{
    gsl_matrix V = {.size1 = m, .size2 = k, .tda = A->tda, .data = A->data, .block = A->block,
                    .owner = 0};
    return V;
}

/* J(r0 + i, c0 + j) += a K(i, j), i < m, j < k. */
static inline MBS_SMALL_INLINE void add_block_k(size_t k, gsl_matrix *J, size_t r0, size_t c0,
                                                double a, const gsl_matrix *K, size_t m)
{
    double *Jd = J->data + r0 * J->tda + c0;
    const double *Kd = K->data;
    const size_t tj = J->tda, tk = K->tda;
    for (size_t i = 0; i < m; i++)
        MBS_SMALL_UNROLL
        for (size_t j = 0; j < k; j++)
            Jd[i * tj + j] += a * Kd[i * tk + j];
}

/* Instantiated per k up to MBS_SMALL_FIXED (methods/linsol/dense_small.h):
 * the same sums, the row loop of constant length. */
static void add_block(gsl_matrix *J, size_t r0, size_t c0, double a, const gsl_matrix *K,
                      size_t m, size_t k)
{
    MBS_SMALL_DISPATCH(, add_block_k, k, J, r0, c0, a, K, m)
}

/* dF/dy with H = I (n_q = n_v) from the problem's derivative callbacks
 * (dae_form.h); J is zero on entry.  Rows and the terms they need:
 *   q:  v (identity in the v columns), GGL: -(G^T mu)_q, -G^T (mu columns);
 *   v:  f_q - (G^T lambda)_q, f_v, -G^T (lambda columns);
 *   c:  index-3 G; index-2 (G v)_q + (g_t)_q, G (v columns); Baumgarte2 as
 *       index-2 plus (C/h) G; GGL G, then the index-2 rows. */
int mbs_dae_form_jac_deriv(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y, gsl_matrix *J)
{
    const mbs_problem_def *d = ctx->pb->def;
    size_t nq = f->nq, nv = f->nv, nl = f->nl, ic = nq + nv;
    const double *q = y, *v = y + nq, *lam = y + ic, *mu = y + ic + nl;
    size_t iv = ic + (f->kind == MBS_FORM_GGL ? nl : 0); /* velocity-constraint rows */
    int need_gv = f->kind != MBS_FORM_INDEX3, need_gmu = f->kind == MBS_FORM_GGL;
    gsl_matrix *K = f->Kd;
    gsl_matrix Kv = leading(K, nv, nv);
    int s;
    memcpy(f->yp, y, f->n * sizeof(double));
    for (size_t j = 0; j < nv; j++) /* q' = v */
        gsl_matrix_set(J, j, nq + j, 1.0);
    /* f_q and f_v: callbacks, else forward differences of f alone */
    if (!d->force_q || !d->force_v)
        if ((s = mbs_force(ctx, t, q, v, f->F0)) != MBS_OK)
            return s;
    for (int pass = 0; pass < 2; pass++) {
        size_t c0 = pass ? nq : 0, nc = pass ? nv : nq;
        if (pass ? d->force_v != NULL : d->force_q != NULL) {
            s = pass ? mbs_force_v(ctx, t, q, v, &Kv) : mbs_force_q(ctx, t, q, v, K);
            if (s != MBS_OK)
                return s;
            add_block(J, nq, c0, 1.0, K, nv, nc);
            continue;
        }
        for (size_t j = 0; j < nc; j++) {
            double h = mbs_dae_form_fd_step(y[c0 + j]);
            f->yp[c0 + j] = y[c0 + j] + h;
            h = f->yp[c0 + j] - y[c0 + j];
            s = mbs_force(ctx, t, f->yp, f->yp + nq, f->F1);
            f->yp[c0 + j] = y[c0 + j];
            if (s != MBS_OK)
                return s;
            for (size_t i = 0; i < nv; i++)
                gsl_matrix_set(J, nq + i, c0 + j, (f->F1[i] - f->F0[i]) / h);
        }
    }
    if (nl == 0)
        return MBS_OK;
    gsl_matrix B = leading(f->B, nl, nv);
    if ((s = mbs_constraint_jacobian(ctx, t, q, &B)) != MBS_OK)
        return s;
    /* the Hessian terms: callbacks, else forward differences of G (one
     * constraint-Jacobian evaluation per q column for all missing terms) */
    int fd_gtl = !d->gtlambda_q, fd_gw = need_gv && !d->gw_q;
    if (d->gtlambda_q) {
        if ((s = mbs_gtlambda_q(ctx, t, q, lam, K)) != MBS_OK)
            return s;
        add_block(J, nq, 0, -1.0, K, nv, nq);
        if (need_gmu) {
            if ((s = mbs_gtlambda_q(ctx, t, q, mu, K)) != MBS_OK)
                return s;
            add_block(J, 0, 0, -1.0, K, nq, nq);
        }
    }
    if (need_gv && d->gw_q) {
        gsl_matrix Z = leading(f->Zd, nl, nq);
        if ((s = mbs_gw_q(ctx, t, q, v, &Z)) != MBS_OK)
            return s;
        add_block(J, iv, 0, 1.0, &Z, nl, nq);
    }
    if (fd_gtl || fd_gw) {
        gsl_matrix Bp = leading(f->Bp, nl, nq);
        for (size_t j = 0; j < nq; j++) {
            double h = mbs_dae_form_fd_step(q[j]);
            f->yp[j] = q[j] + h;
            h = f->yp[j] - q[j];
            s = mbs_constraint_jacobian(ctx, t, f->yp, &Bp);
            f->yp[j] = q[j];
            if (s != MBS_OK)
                return s;
            for (size_t i = 0; i < nl; i++)
                for (size_t k = 0; k < nq; k++) {
                    double dg = (gsl_matrix_get(&Bp, i, k) - gsl_matrix_get(f->B, i, k)) / h;
                    if (fd_gtl) {
                        *gsl_matrix_ptr(J, nq + k, j) -= dg * lam[i];
                        if (need_gmu)
                            *gsl_matrix_ptr(J, k, j) -= dg * mu[i];
                    }
                    if (fd_gw)
                        *gsl_matrix_ptr(J, iv + i, j) += dg * v[k];
                }
        }
    }
    /* (g_t)_q of rheonomic constraints: forward differences of g_t */
    if (need_gv && d->constraint_t) {
        if ((s = mbs_constraint_t(ctx, t, q, f->gt)) != MBS_OK)
            return s;
        for (size_t j = 0; j < nq; j++) {
            double h = mbs_dae_form_fd_step(q[j]);
            f->yp[j] = q[j] + h;
            h = f->yp[j] - q[j];
            s = mbs_constraint_t(ctx, t, f->yp, f->g);
            f->yp[j] = q[j];
            if (s != MBS_OK)
                return s;
            for (size_t i = 0; i < nl; i++)
                *gsl_matrix_ptr(J, iv + i, j) += (f->g[i] - f->gt[i]) / h;
        }
    }
    /* the G blocks (G = B with H = I) */
    double alpha0 = f->kind == MBS_FORM_BAUMGARTE2 ? f->baumgarte_C / f->h : 0.0;
    for (size_t i = 0; i < nl; i++)
        for (size_t j = 0; j < nv; j++) {
            double b = gsl_matrix_get(f->B, i, j);
            gsl_matrix_set(J, nq + j, ic + i, -b); /* d(f - G^T lambda)/dlambda */
            if (need_gv)
                gsl_matrix_set(J, iv + i, nq + j, b); /* d(G v)/dv */
            if (f->kind == MBS_FORM_INDEX3 || f->kind == MBS_FORM_GGL)
                gsl_matrix_set(J, ic + i, j, b); /* dg/dq */
            if (f->kind == MBS_FORM_BAUMGARTE2)
                *gsl_matrix_ptr(J, ic + i, j) += alpha0 * b; /* (C/h) dg/dq */
            if (need_gmu)
                gsl_matrix_set(J, j, ic + nl + i, -b); /* d(-G^T mu)/dmu */
        }
    return MBS_OK;
}

