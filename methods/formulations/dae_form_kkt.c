/* The sparse KKT path of the DAE formulation layer (dae_form.h): the
 * saddle-point matrix [M B^T; B 0] assembled from triplets, factorised once per
 * Jacobian, and the real (c0) and complex (cr + i ci) shifted systems of the
 * Radau IIA and BDF Newton iterations solved through it ([arnold2016dae] Sect. 4.2). */
#include "dae_form.h"
#include "../../problems/triplets.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* M and B at (t, q) as triplets into f->Mt, f->Bt (dense problems: every entry,
 * so the pattern is structural). */
static int eval_triplets(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *q)
{
    size_t nv = f->nv, nl = f->nl;
    int s;
    f->Mt.nnz = 0;
    f->Bt.nnz = 0;
    if (f->native) {
        if ((s = mbs_mass_sparse(ctx, t, q, &f->Mt)) != MBS_OK)
            return s;
        return nl == 0 ? MBS_OK : mbs_jacobian_sparse(ctx, t, q, &f->Bt);
    }
    if ((s = mbs_mass(ctx, t, q, f->M)) != MBS_OK)
        return s;
    for (size_t i = 0; i < nv; i++)
        for (size_t j = 0; j < nv; j++)
            mbs_triplets_push(&f->Mt, i, j, gsl_matrix_get(f->M, i, j));
    if (nl == 0)
        return MBS_OK;
    gsl_matrix_view B = gsl_matrix_submatrix(f->B, 0, 0, nl, nv);
    if ((s = mbs_constraint_jacobian(ctx, t, q, &B.matrix)) != MBS_OK)
        return s;
    for (size_t i = 0; i < nl; i++)
        for (size_t j = 0; j < nv; j++)
            mbs_triplets_push(&f->Bt, i, j, gsl_matrix_get(&B.matrix, i, j));
    return MBS_OK;
}

int mbs_dae_form_kkt_factor(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y)
{
    if (!f->sparse)
        return mbs_fail(ctx, MBS_BAD_INPUT, t, "KKT factorisation requested from a dense form");
    int s = eval_triplets(f, ctx, t, y);
    if (s != MBS_OK)
        return s;
    /* keep B of the factorisation for the right-hand sides of kkt_solve (the
     * next residual evaluations overwrite f->Bt) */
    f->Bj.nnz = 0;
    if (mbs_triplets_reserve(&f->Bj, f->Bt.nnz) != 0)
        return mbs_fail(ctx, MBS_NO_MEMORY, t, "out of memory copying B");
    for (size_t k = 0; k < f->Bt.nnz; k++)
        mbs_triplets_push(&f->Bj, f->Bt.row[k], f->Bt.col[k], f->Bt.val[k]);
    char msg[200];
    msg[0] = '\0';
    mbs_count_jacobian(ctx); /* M and B: the data of the structured iteration matrix */
    mbs_count_factorization(ctx);
    s = mbs_linsol_factor(f->kkt, &f->Mt, &f->Bj, msg, sizeof msg);
    if (s != MBS_OK)
        return mbs_fail(ctx, s, t, "%s, KKT matrix [M B^T; B 0]: %s", mbs_linsol_name(f->ls_kind),
                        msg);
    if (f->kktg) {
        mbs_count_factorization(ctx);
        s = mbs_linsol_factor(f->kktg, &f->It, &f->Bj, msg, sizeof msg);
        if (s != MBS_OK)
            return mbs_fail(ctx, s, t, "%s, GGL matrix [I G^T; G 0]: %s",
                            mbs_linsol_name(f->ls_kind), msg);
    }
    return MBS_OK;
}

/* (ar + i ai) / (br + i bi) */
static void cdiv(double ar, double ai, double br, double bi, double *xr, double *xi)
{
    double d = br * br + bi * bi;
    *xr = (ar * br + ai * bi) / d;
    *xi = (ai * br - ar * bi) / d;
}

/* The KKT solves of one real shift c0 (have_real) and np complex shifts
 * cr[p] + i ci[p] (Radau IIA's complex blocks, Hairer & Wanner II, Sect. IV.8)
 * with the last factorisation, all columns in one mbs_linsol_solve_k call per
 * KKT matrix.  Column c of the right-hand sides is R[c] -> dy[c]: the real
 * block first (if any), then the real and imaginary part of each complex block.
 * With r = -R ([arnold2016dae] Eq. (17) for the KKT systems), for a shift c:
 *   [M B^T; B 0] (dv, dlambda/c) = (r_v/c, b),
 *   b = -r_c (index-2; GGL: its velocity rows), -c r_c - B r_q (index-3),
 *       (-r_c - beta B r_q)/(1 + beta), beta = alpha0/c (Baumgarte2),
 *   dq = (r_q + dv)/c, or GGL: [I G^T; G 0] (dq, dmu/c) = ((r_q + dv)/c, -r_g).
 * The matrices are real; the c-dependent algebra is done in complex
 * arithmetic for the complex blocks.  One counted solve per column. */
static int kkt_solve_columns(mbs_dae_form *f, mbs_ctx *ctx, double t, int have_real, double c0,
                             size_t np, const double *cr, const double *ci,
                             const double *const *R, double *const *dy)
{
    size_t nq = f->nq, nv = f->nv, nl = f->nl, ic = nq + nv, r0 = have_real ? 1 : 0;
    size_t ncol = r0 + 2 * np;
    if (!f->sparse || ncol == 0 || ncol > MBS_LINSOL_MAX_RHS || (have_real && !(c0 > 0.0)))
        return mbs_fail(ctx, MBS_BAD_INPUT, t,
                        "KKT solve: sparse form, 1 to %d columns and c0 > 0 needed",
                        MBS_LINSOL_MAX_RHS);
    for (size_t p = 0; p < np; p++)
        if (!(cr[p] * cr[p] + ci[p] * ci[p] > 0.0))
            return mbs_fail(ctx, MBS_BAD_INPUT, t, "complex KKT solve: c != 0 needed");
    if (f->kind == MBS_FORM_BAUMGARTE2 && !(f->h > 0.0 && f->baumgarte_C > 0.0))
        return mbs_fail(ctx, MBS_BAD_INPUT, t, "baumgarte2 form needs h > 0 and C > 0");
    double *ka = f->ka, *kg = f->kg, *kx = f->kx, *kl = f->kl;
    if (have_real) { /* right-hand side of [M B^T; B 0] (dv, dlambda/c0), r = -R */
        const double *Rq = R[0], *Rv = R[0] + nq, *Rc = R[0] + ic;
        double beta = 0.0, coef = 0.0;
        if (f->kind == MBS_FORM_BAUMGARTE2) {
            beta = f->baumgarte_C / f->h / c0;
            coef = beta;
        } else if (f->kind == MBS_FORM_INDEX3) {
            coef = 1.0;
        }
        for (size_t i = 0; i < nv; i++)
            ka[i] = -Rv[i] / c0;
        for (size_t i = 0; i < nl; i++)
            kg[i] = f->kind == MBS_FORM_INDEX3 ? c0 * Rc[i]
                    : f->kind == MBS_FORM_GGL  ? Rc[nl + i]
                                               : Rc[i];
        if (coef != 0.0)
            for (size_t k = 0; k < f->Bj.nnz; k++)
                kg[f->Bj.row[k]] += coef * f->Bj.val[k] * Rq[f->Bj.col[k]];
        if (beta != 0.0)
            for (size_t i = 0; i < nl; i++)
                kg[i] /= 1.0 + beta;
    }
    for (size_t p = 0; p < np; p++) {
        size_t c = r0 + 2 * p;
        const double *Rr = R[c], *Ri = R[c + 1];
        double betr = 0.0, beti = 0.0;
        if (f->kind == MBS_FORM_BAUMGARTE2)
            cdiv(f->baumgarte_C / f->h, 0.0, cr[p], ci[p], &betr, &beti);
        double *pbr = kl + c * nl, *pbi = kl + (c + 1) * nl; /* B R_q (scratch) */
        for (size_t i = 0; i < nl; i++)
            pbr[i] = pbi[i] = 0.0;
        if (f->kind == MBS_FORM_INDEX3 || f->kind == MBS_FORM_BAUMGARTE2)
            for (size_t k = 0; k < f->Bj.nnz; k++) {
                pbr[f->Bj.row[k]] += f->Bj.val[k] * Rr[f->Bj.col[k]];
                pbi[f->Bj.row[k]] += f->Bj.val[k] * Ri[f->Bj.col[k]];
            }
        for (size_t i = 0; i < nl; i++) {
            size_t r = f->kind == MBS_FORM_GGL ? ic + nl + i : ic + i;
            double br = Rr[r], bi = Ri[r], pr = pbr[i], pi = pbi[i];
            if (f->kind == MBS_FORM_INDEX3) { /* c R_c + B R_q */
                br = cr[p] * Rr[r] - ci[p] * Ri[r] + pr;
                bi = cr[p] * Ri[r] + ci[p] * Rr[r] + pi;
            } else if (f->kind == MBS_FORM_BAUMGARTE2) { /* (R_c + beta B R_q)/(1 + beta) */
                cdiv(Rr[r] + betr * pr - beti * pi, Ri[r] + betr * pi + beti * pr, 1.0 + betr,
                     beti, &br, &bi);
            }
            kg[c * nl + i] = br;
            kg[(c + 1) * nl + i] = bi;
        }
        for (size_t i = 0; i < nv; i++)
            cdiv(-Rr[nq + i], -Ri[nq + i], cr[p], ci[p], &ka[c * nv + i], &ka[(c + 1) * nv + i]);
    }
    char msg[200];
    msg[0] = '\0';
    int s = mbs_linsol_solve_k(f->kkt, ncol, ka, kg, kx, kl, msg, sizeof msg);
    for (size_t c = 0; c < ncol; c++)
        mbs_count_solve(ctx);
    if (s != MBS_OK)
        return mbs_fail(ctx, s, t, "%s KKT solve: %s", mbs_linsol_name(f->ls_kind), msg);
    /* dv, dlambda = c (dlambda/c) */
    if (have_real) {
        memcpy(dy[0] + nq, kx, nv * sizeof(double));
        for (size_t i = 0; i < nl; i++)
            dy[0][ic + i] = c0 * kl[i];
    }
    for (size_t p = 0; p < np; p++) {
        size_t c = r0 + 2 * p;
        double *dyr = dy[c], *dyi = dy[c + 1];
        memcpy(dyr + nq, kx + c * nv, nv * sizeof(double));
        memcpy(dyi + nq, kx + (c + 1) * nv, nv * sizeof(double));
        for (size_t i = 0; i < nl; i++) {
            double lr = kl[c * nl + i], li = kl[(c + 1) * nl + i];
            dyr[ic + i] = cr[p] * lr - ci[p] * li;
            dyi[ic + i] = cr[p] * li + ci[p] * lr;
        }
    }
    /* q rows: c dq (+ G^T dmu) = r_q + dv = dv - R_q */
    if (!f->kktg) {
        if (have_real) {
            for (size_t j = 0; j < nq; j++)
                dy[0][j] = (dy[0][nq + j] - R[0][j]) / c0;
            for (size_t i = ic + nl; i < f->n; i++) /* GGL without constraints: no mu */
                dy[0][i] = 0.0;
        }
        for (size_t p = 0; p < np; p++) {
            size_t c = r0 + 2 * p;
            double *dyr = dy[c], *dyi = dy[c + 1];
            const double *Rr = R[c], *Ri = R[c + 1];
            for (size_t j = 0; j < nq; j++)
                cdiv(dyr[nq + j] - Rr[j], dyi[nq + j] - Ri[j], cr[p], ci[p], &dyr[j], &dyi[j]);
            for (size_t i = ic + nl; i < f->n; i++)
                dyr[i] = dyi[i] = 0.0;
        }
        return MBS_OK;
    }
    if (have_real) {
        for (size_t j = 0; j < nq; j++)
            ka[j] = (dy[0][nq + j] - R[0][j]) / c0;
        memcpy(kg, R[0] + ic, nl * sizeof(double));
    }
    for (size_t p = 0; p < np; p++) {
        size_t c = r0 + 2 * p;
        for (size_t j = 0; j < nq; j++)
            cdiv(dy[c][nq + j] - R[c][j], dy[c + 1][nq + j] - R[c + 1][j], cr[p], ci[p],
                 &ka[c * nq + j], &ka[(c + 1) * nq + j]);
        memcpy(kg + c * nl, R[c] + ic, nl * sizeof(double));
        memcpy(kg + (c + 1) * nl, R[c + 1] + ic, nl * sizeof(double));
    }
    s = mbs_linsol_solve_k(f->kktg, ncol, ka, kg, kx, kl, msg, sizeof msg);
    for (size_t c = 0; c < ncol; c++)
        mbs_count_solve(ctx);
    if (s != MBS_OK)
        return mbs_fail(ctx, s, t, "%s GGL solve: %s", mbs_linsol_name(f->ls_kind), msg);
    if (have_real) {
        memcpy(dy[0], kx, nq * sizeof(double));
        for (size_t i = 0; i < nl; i++)
            dy[0][ic + nl + i] = c0 * kl[i];
    }
    for (size_t p = 0; p < np; p++) { /* dmu = c (dmu/c) */
        size_t c = r0 + 2 * p;
        double *dyr = dy[c], *dyi = dy[c + 1];
        memcpy(dyr, kx + c * nq, nq * sizeof(double));
        memcpy(dyi, kx + (c + 1) * nq, nq * sizeof(double));
        for (size_t i = 0; i < nl; i++) {
            double mr = kl[c * nl + i], mi = kl[(c + 1) * nl + i];
            dyr[ic + nl + i] = cr[p] * mr - ci[p] * mi;
            dyi[ic + nl + i] = cr[p] * mi + ci[p] * mr;
        }
    }
    return MBS_OK;
}

int mbs_dae_form_kkt_solve(mbs_dae_form *f, mbs_ctx *ctx, double t, double c0, const double *R,
                           double *dy)
{
    return kkt_solve_columns(f, ctx, t, 1, c0, 0, NULL, NULL, &R, &dy);
}

int mbs_dae_form_kkt_solve_complex(mbs_dae_form *f, mbs_ctx *ctx, double t, double cr,
                                   double ci, const double *Rr, const double *Ri, double *dyr,
                                   double *dyi)
{
    const double *R[2] = {Rr, Ri};
    double *dy[2] = {dyr, dyi};
    return kkt_solve_columns(f, ctx, t, 0, 0.0, 1, &cr, &ci, R, dy);
}

int mbs_dae_form_kkt_solve_stages(mbs_dae_form *f, mbs_ctx *ctx, double t, double c0, size_t np,
                                  const double *cr, const double *ci, size_t n, const double *W,
                                  double *w)
{
    const double *R[MBS_LINSOL_MAX_RHS];
    double *dy[MBS_LINSOL_MAX_RHS];
    if (1 + 2 * np > MBS_LINSOL_MAX_RHS)
        return mbs_fail(ctx, MBS_BAD_INPUT, t, "KKT solve: %zu complex blocks (at most %d)", np,
                        (MBS_LINSOL_MAX_RHS - 1) / 2);
    for (size_t c = 0; c < 1 + 2 * np; c++) {
        R[c] = W + c * n;
        dy[c] = w + c * n;
    }
    return kkt_solve_columns(f, ctx, t, 1, c0, np, cr, ci, R, dy);
}
