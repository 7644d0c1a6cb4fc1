/* The sparse KKT path of the DAE formulation layer (dae_form.h): the
 * saddle-point matrix [M B^T; B 0] assembled from triplets, factorised once per
 * Jacobian, and the real (c0) and complex (cr + i ci) shifted systems of the
 * Radau IIA and BDF Newton iterations solved through it (seed 002 Sect. 4.2). */
#include "dae_form.h"
#include "../problems/triplets.h"

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

int mbs_dae_form_kkt_solve(mbs_dae_form *f, mbs_ctx *ctx, double t, double c0, const double *R,
                           double *dy)
{
    size_t nq = f->nq, nv = f->nv, nl = f->nl, ic = nq + nv;
    if (!f->sparse || !(c0 > 0.0))
        return mbs_fail(ctx, MBS_BAD_INPUT, t, "KKT solve: sparse form and c0 > 0 needed");
    const double *Rq = R, *Rv = R + nq, *Rc = R + ic;
    double beta = 0.0, coef = 0.0;
    if (f->kind == MBS_FORM_BAUMGARTE2) {
        if (!(f->h > 0.0 && f->baumgarte_C > 0.0))
            return mbs_fail(ctx, MBS_BAD_INPUT, t, "baumgarte2 form needs h > 0 and C > 0");
        beta = f->baumgarte_C / f->h / c0;
        coef = beta;
    } else if (f->kind == MBS_FORM_INDEX3) {
        coef = 1.0;
    }
    /* right-hand side of [M B^T; B 0] (dv, dlambda/c0), r = -R (dae_form.h) */
    for (size_t i = 0; i < nv; i++)
        f->ka[i] = -Rv[i] / c0;
    for (size_t i = 0; i < nl; i++)
        f->kg[i] = f->kind == MBS_FORM_INDEX3 ? c0 * Rc[i]
                   : f->kind == MBS_FORM_GGL  ? Rc[nl + i]
                                              : Rc[i];
    if (coef != 0.0)
        for (size_t k = 0; k < f->Bj.nnz; k++)
            f->kg[f->Bj.row[k]] += coef * f->Bj.val[k] * Rq[f->Bj.col[k]];
    if (beta != 0.0)
        for (size_t i = 0; i < nl; i++)
            f->kg[i] /= 1.0 + beta;
    char msg[200];
    msg[0] = '\0';
    int s = mbs_linsol_solve(f->kkt, f->ka, f->kg, f->kx, f->kl, msg, sizeof msg);
    mbs_count_solve(ctx);
    if (s != MBS_OK)
        return mbs_fail(ctx, s, t, "%s KKT solve: %s", mbs_linsol_name(f->ls_kind), msg);
    double *dq = dy, *dv = dy + nq, *dl = dy + ic;
    memcpy(dv, f->kx, nv * sizeof(double));
    for (size_t i = 0; i < nl; i++)
        dl[i] = c0 * f->kl[i];
    /* q rows: c0 dq (+ G^T dmu) = r_q + dv */
    if (f->kktg) {
        for (size_t j = 0; j < nq; j++)
            f->ka[j] = (dv[j] - Rq[j]) / c0;
        for (size_t i = 0; i < nl; i++)
            f->kg[i] = Rc[i];
        s = mbs_linsol_solve(f->kktg, f->ka, f->kg, dq, f->kl, msg, sizeof msg);
        mbs_count_solve(ctx);
        if (s != MBS_OK)
            return mbs_fail(ctx, s, t, "%s GGL solve: %s", mbs_linsol_name(f->ls_kind), msg);
        for (size_t i = 0; i < nl; i++)
            dy[ic + nl + i] = c0 * f->kl[i];
    } else {
        for (size_t j = 0; j < nq; j++)
            dq[j] = (dv[j] - Rq[j]) / c0;
        for (size_t i = ic + nl; i < f->n; i++) /* GGL without constraints: no mu */
            dy[i] = 0.0;
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

/* Complex shift (Radau IIA's complex block; dae_form.h).  Derivation as for
 * mbs_dae_form_kkt_solve with c0 -> c complex (seed 002 Eq. (17) for the KKT
 * systems; Hairer & Wanner II, Sect. IV.8 for the complex block): with r = -R,
 *   [M B^T; B 0] (dv, dlambda/c) = (r_v/c, b),
 *   b = -r_c (index-2; GGL: its velocity rows), -c r_c - B r_q (index-3),
 *       (-r_c - beta B r_q)/(1 + beta), beta = alpha0/c (Baumgarte2),
 *   dq = (r_q + dv)/c, or GGL: [I G^T; G 0] (dq, dmu/c) = ((r_q + dv)/c, -r_g).
 * The matrices are real: each system is solved for the real and the imaginary
 * part of its right-hand side as two columns of one mbs_linsol_solve_k call
 * (column 0 real, column 1 imaginary part in ka | kg -> kx | kl). */
int mbs_dae_form_kkt_solve_complex(mbs_dae_form *f, mbs_ctx *ctx, double t, double cr,
                                   double ci, const double *Rr, const double *Ri, double *dyr,
                                   double *dyi)
{
    size_t nq = f->nq, nv = f->nv, nl = f->nl, ic = nq + nv;
    if (!f->sparse || !(cr * cr + ci * ci > 0.0))
        return mbs_fail(ctx, MBS_BAD_INPUT, t, "complex KKT solve: sparse form and c != 0 needed");
    double betr = 0.0, beti = 0.0;
    if (f->kind == MBS_FORM_BAUMGARTE2) {
        if (!(f->h > 0.0 && f->baumgarte_C > 0.0))
            return mbs_fail(ctx, MBS_BAD_INPUT, t, "baumgarte2 form needs h > 0 and C > 0");
        cdiv(f->baumgarte_C / f->h, 0.0, cr, ci, &betr, &beti);
    }
    double *pbr = f->kl, *pbi = f->kl + nl; /* B R_q, real and imaginary part */
    for (size_t i = 0; i < nl; i++)
        pbr[i] = pbi[i] = 0.0;
    if (f->kind == MBS_FORM_INDEX3 || f->kind == MBS_FORM_BAUMGARTE2)
        for (size_t k = 0; k < f->Bj.nnz; k++) {
            pbr[f->Bj.row[k]] += f->Bj.val[k] * Rr[f->Bj.col[k]];
            pbi[f->Bj.row[k]] += f->Bj.val[k] * Ri[f->Bj.col[k]];
        }
    /* b: real part in kg[0, nl), imaginary part in kg[nl, 2 nl) */
    for (size_t i = 0; i < nl; i++) {
        size_t r = f->kind == MBS_FORM_GGL ? ic + nl + i : ic + i;
        double br = Rr[r], bi = Ri[r], pr = pbr[i], pi = pbi[i];
        if (f->kind == MBS_FORM_INDEX3) { /* c R_c + B R_q */
            br = cr * Rr[r] - ci * Ri[r] + pr;
            bi = cr * Ri[r] + ci * Rr[r] + pi;
        } else if (f->kind == MBS_FORM_BAUMGARTE2) { /* (R_c + beta B R_q)/(1 + beta) */
            cdiv(Rr[r] + betr * pr - beti * pi, Ri[r] + betr * pi + beti * pr, 1.0 + betr, beti,
                 &br, &bi);
        }
        f->kg[i] = br;
        f->kg[nl + i] = bi;
    }
    for (size_t i = 0; i < nv; i++)
        cdiv(-Rr[nq + i], -Ri[nq + i], cr, ci, &f->ka[i], &f->ka[nv + i]);
    char msg[200];
    msg[0] = '\0';
    int s = mbs_linsol_solve_k(f->kkt, 2, f->ka, f->kg, f->kx, f->kl, msg, sizeof msg);
    mbs_count_solve(ctx);
    mbs_count_solve(ctx);
    if (s != MBS_OK)
        return mbs_fail(ctx, s, t, "%s KKT solve: %s", mbs_linsol_name(f->ls_kind), msg);
    memcpy(dyr + nq, f->kx, nv * sizeof(double));
    memcpy(dyi + nq, f->kx + nv, nv * sizeof(double));
    for (size_t i = 0; i < nl; i++) { /* dlambda = c (dlambda/c) */
        double lr = f->kl[i], li = f->kl[nl + i];
        dyr[ic + i] = cr * lr - ci * li;
        dyi[ic + i] = cr * li + ci * lr;
    }
    /* q rows: c dq (+ G^T dmu) = r_q + dv = dv - R_q */
    if (!f->kktg) {
        for (size_t j = 0; j < nq; j++)
            cdiv(dyr[nq + j] - Rr[j], dyi[nq + j] - Ri[j], cr, ci, &dyr[j], &dyi[j]);
        for (size_t i = ic + nl; i < f->n; i++) /* GGL without constraints: no mu */
            dyr[i] = dyi[i] = 0.0;
        return MBS_OK;
    }
    for (size_t j = 0; j < nq; j++)
        cdiv(dyr[nq + j] - Rr[j], dyi[nq + j] - Ri[j], cr, ci, &f->ka[j], &f->ka[nq + j]);
    memcpy(f->kg, Rr + ic, nl * sizeof(double));
    memcpy(f->kg + nl, Ri + ic, nl * sizeof(double));
    s = mbs_linsol_solve_k(f->kktg, 2, f->ka, f->kg, f->kx, f->kl, msg, sizeof msg);
    mbs_count_solve(ctx);
    mbs_count_solve(ctx);
    if (s != MBS_OK)
        return mbs_fail(ctx, s, t, "%s GGL solve: %s", mbs_linsol_name(f->ls_kind), msg);
    memcpy(dyr, f->kx, nq * sizeof(double));
    memcpy(dyi, f->kx + nq, nq * sizeof(double));
    for (size_t i = 0; i < nl; i++) { /* dmu = c (dmu/c) */
        double mr = f->kl[i], mi = f->kl[nl + i];
        dyr[ic + nl + i] = cr * mr - ci * mi;
        dyi[ic + nl + i] = cr * mi + ci * mr;
    }
    return MBS_OK;
}
