/* The DAE formulation layer (see dae_form.h): E(y) y' = F(t, y) for the
 * index-3, index-2, GGL and index-2 Baumgarte forms of [arnold2016dae] Section 4.2. */
#include "../../core/gslalloc.h"
#include "dae_form.h"
#include "../../problems/triplets.h"
#include "../linsol/dense_small.h"

#include <float.h>
#include <gsl/gsl_blas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *mbs_dae_form_kind_name(mbs_form_kind kind)
{
    switch (kind) {
    case MBS_FORM_INDEX3:
        return "index3";
    case MBS_FORM_INDEX2:
        return "index2";
    case MBS_FORM_GGL:
        return "ggl";
    case MBS_FORM_BAUMGARTE2:
        return "baumgarte2";
    }
    return "?";
}

void mbs_dae_form_free(mbs_dae_form *f)
{
    if (!f)
        return;
    free(f->var_index);
    gsl_matrix_free(f->M);
    gsl_matrix_free(f->B);
    gsl_matrix_free(f->Gt);
    gsl_matrix_free(f->Kd);
    gsl_matrix_free(f->Zd);
    gsl_matrix_free(f->Bp);
    free(f->g);
    free(f->gt);
    free(f->w);
    free(f->yp);
    free(f->F0);
    free(f->F1);
    mbs_triplets_free(&f->Mt);
    mbs_triplets_free(&f->Bt);
    mbs_triplets_free(&f->Bj);
    mbs_triplets_free(&f->It);
    mbs_linsol_free(&f->kkt);
    mbs_linsol_free(&f->kktg);
    free(f->ka);
    free(f->kg);
    free(f->kx);
    free(f->kl);
    free(f);
}

/* dense_mats = 0: no n_v x n_v mass and n_l x n_v constraint matrices (sparse
 * mode with the problem's triplet callbacks). */
static int form_alloc(mbs_dae_form **out, mbs_ctx *ctx, mbs_form_kind kind, int dense_mats)
{
    const mbs_problem *pb = ctx->pb;
    *out = NULL;
    if (kind != MBS_FORM_INDEX3 && kind != MBS_FORM_INDEX2 && kind != MBS_FORM_GGL &&
        kind != MBS_FORM_BAUMGARTE2)
        return mbs_fail(ctx, MBS_BAD_INPUT, pb->t0, "unknown DAE formulation %d", (int)kind);
    int ext = (pb->flags & MBS_PB_EXTENDED) != 0;
    if (ext && kind != MBS_FORM_INDEX3 && kind != MBS_FORM_INDEX2)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "the %s form does not support extended problems (%s)",
                        mbs_dae_form_kind_name(kind), pb->def->name);
    mbs_dae_form *f = calloc(1, sizeof *f);
    if (!f)
        return MBS_NO_MEMORY;
    f->kind = kind;
    f->nq = pb->nq;
    f->nv = pb->nv;
    f->nl = pb->nl;
    f->nmu = kind == MBS_FORM_GGL ? pb->nl : 0;
    f->nx = ext ? pb->nx : 0;
    f->n = f->nq + f->nv + f->nl + f->nmu + f->nx;
    f->baumgarte_C = 1.0;
    f->h = 0.0;
    size_t nlc = f->nl ? f->nl : 1, nw = f->nq;
    if (f->nv > nw)
        nw = f->nv;
    if (nlc > nw)
        nw = nlc;
    f->var_index = malloc(f->n * sizeof *f->var_index);
    if (dense_mats) {
        f->M = mbs_matrix_alloc(f->nv, f->nv);
        f->B = mbs_matrix_alloc(nlc, f->nv);
    }
    f->g = malloc(nlc * sizeof(double));
    f->gt = malloc(nlc * sizeof(double));
    f->w = malloc(nw * sizeof(double));
    f->yp = malloc(f->n * sizeof(double));
    f->F0 = malloc(f->n * sizeof(double));
    f->F1 = malloc(f->n * sizeof(double));
    int ok = f->var_index && (!dense_mats || (f->M && f->B)) && f->g && f->gt && f->w &&
             f->yp && f->F0 && f->F1;
    if (ok && kind == MBS_FORM_GGL && pb->def->kinematic)
        ok = (f->Gt = mbs_matrix_alloc(nlc, f->nq)) != NULL;
    const mbs_problem_def *d = pb->def;
    f->deriv = dense_mats && !d->kinematic && !ext &&
               (d->force_q || d->force_v || d->gtlambda_q || d->gw_q);
    if (ok && f->deriv)
        ok = (f->Kd = mbs_matrix_alloc(f->nq, f->nq)) != NULL &&
             (f->Zd = mbs_matrix_alloc(nlc, f->nq)) != NULL &&
             (f->Bp = mbs_matrix_alloc(nlc, f->nq)) != NULL;
    if (!ok) {
        mbs_dae_form_free(f);
        return MBS_NO_MEMORY;
    }
    for (size_t i = 0; i < f->nq + f->nv; i++)
        f->var_index[i] = 1;
    for (size_t i = 0; i < f->nl; i++)
        f->var_index[f->nq + f->nv + i] = kind == MBS_FORM_INDEX3 ? 3 : 2;
    for (size_t i = 0; i < f->nmu; i++)
        f->var_index[f->nq + f->nv + f->nl + i] = 2;
    if (ext) {
        /* The problem's own formulation: its per-variable index, and its
         * constraint rows must be of the kind's index (index-2 rows B v + g_t or
         * index-3 rows g). */
        int s = pb->def->ext->var_index(pb, f->var_index);
        int want = kind == MBS_FORM_INDEX3 ? 3 : 2;
        for (size_t i = 0; s == MBS_OK && i < f->nl; i++)
            if (f->var_index[f->nq + f->nv + i] != want)
                s = mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                             "%s is given in an index-%d form; use an %s method",
                             pb->def->name, f->var_index[f->nq + f->nv + i],
                             f->var_index[f->nq + f->nv + i] == 3 ? "index3/" : "index2/");
        if (s != MBS_OK) {
            mbs_dae_form_free(f);
            return s < 0 ? s : MBS_CALLBACK_FAILED;
        }
    }
    *out = f;
    return MBS_OK;
}

int mbs_dae_form_auto_structured(mbs_ctx *ctx, int *ls_kind)
{
    const mbs_problem *pb = ctx->pb;
    const mbs_problem_def *d = pb->def;
    size_t nv = pb->nv, nl = pb->nl;
    *ls_kind = d->mass_sparse && d->jacobian_sparse && nv + nl >= 30 ? MBS_LS_CHOLMOD
                                                                      : MBS_LS_DENSE;
    if (d->kinematic || (pb->flags & (MBS_PB_EXTENDED | MBS_PB_NONHOLONOMIC |
                                      MBS_PB_SINGULAR_MASS)) ||
        nl == 0 || nv + nl < 20)
        return 0;
    return mbs_dae_form_forces_vanish(ctx);
}

int mbs_dae_form_forces_vanish(mbs_ctx *ctx)
{
    const mbs_problem *pb = ctx->pb;
    const mbs_problem_def *d = pb->def;
    size_t nq = pb->nq, nv = pb->nv, nl = pb->nl;
    if (!d->force_q || !d->force_v)
        return 0;
    double *q = calloc(nq + nv + nl + 1, sizeof(double));
    gsl_matrix *K = mbs_matrix_alloc(nv, nq > nv ? nq : nv);
    int have = 0, zero = 0;
    if (!q || !K) {
        zero = -1;
        goto done;
    }
    if (d->initial(pb, q, q + nq, q + nq + nv, &have) != MBS_OK)
        goto done;
    zero = 1;
    for (int pass = 0; pass < 2 && zero == 1; pass++) {
        for (size_t i = 0; pass && i < nq + nv; i++) /* a generic nearby state */
            q[i] += 1e-2 * (0.1 + fmod(0.6180339887 * (double)(i + 1), 1.0));
        for (int which = 0; which < 2 && zero == 1; which++) {
            gsl_matrix_view Kv = gsl_matrix_submatrix(K, 0, 0, nv, which ? nv : nq);
            int s = which ? mbs_force_v(ctx, pb->t0, q, q + nq, &Kv.matrix)
                          : mbs_force_q(ctx, pb->t0, q, q + nq, &Kv.matrix);
            if (s != MBS_OK || !gsl_matrix_isnull(&Kv.matrix))
                zero = 0;
        }
    }
done:
    ctx->reason[0] = '\0';
    free(q);
    gsl_matrix_free(K);
    return zero;
}

int mbs_dae_form_alloc(mbs_dae_form **out, mbs_ctx *ctx, mbs_form_kind kind)
{
    return form_alloc(out, ctx, kind, 1);
}

int mbs_dae_form_position_row(const mbs_dae_form *f, size_t i)
{
    size_t i0 = f->nq + f->nv;
    return (f->kind == MBS_FORM_INDEX3 || f->kind == MBS_FORM_GGL) && i >= i0 &&
           i < i0 + f->nl;
}

/* A = 0 (gsl_matrix_set_zero without the library call: one memset when the
 * rows are contiguous). */
static void zero_matrix(gsl_matrix *A)
{
    if (A->tda == A->size2)
        memset(A->data, 0, A->size1 * A->tda * sizeof(double));
    else
        for (size_t i = 0; i < A->size1; i++)
            memset(A->data + i * A->tda, 0, A->size2 * sizeof(double));
}

int mbs_dae_form_mass(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y, gsl_matrix *E)
{
    if (f->native)
        return mbs_fail(ctx, MBS_BAD_INPUT, t, "dense E requested from a sparse-mode form");
    if (f->nx)
        return mbs_ext_mass(ctx, t, y, E);
    /* E = diag(I, M, 0) without gsl_matrix_set_zero and a submatrix view per
     * call (on the pendulum these cost more than the rest of the mass term) */
    size_t nq = f->nq, nv = f->nv, tda = E->tda;
    zero_matrix(E);
    for (size_t i = 0; i < nq; i++)
        E->data[i * tda + i] = 1.0;
    gsl_matrix Mv = {.size1 = nv, .size2 = nv, .tda = tda, .data = E->data + nq * tda + nq,
                     .block = E->block, .owner = 0};
    return mbs_mass(ctx, t, y, &Mv);
}

/* B v + g_t into out (length nl); f->B must hold B(t, q). */
static int velocity_constraint(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *q,
                               const double *v, double *out)
{
    /* scleronomic constraints: g_t = 0 without the call (mbs_constraint_t would
     * only fill zeros, uncounted) */
    const int rheo = ctx->pb->def->constraint_t != NULL;
    if (rheo) {
        int s = mbs_constraint_t(ctx, t, q, f->gt);
        if (s != MBS_OK)
            return s;
    }
    const double *Bd = f->B->data;
    const size_t tb = f->B->tda;
    for (size_t i = 0; i < f->nl; i++) {
        double bv = rheo ? f->gt[i] : 0.0;
        for (size_t j = 0; j < f->nv; j++)
            bv += Bd[i * tb + j] * v[j];
        out[i] = bv;
    }
    return MBS_OK;
}

/* B v + g_t into out (length nl) with B = f->Bt (triplets). */
static int velocity_constraint_triplets(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *q,
                                        const double *v, double *out)
{
    int s = mbs_constraint_t(ctx, t, q, out);
    if (s != MBS_OK)
        return s;
    const mbs_triplets *B = &f->Bt;
    for (size_t k = 0; k < B->nnz; k++)
        out[B->row[k]] += B->val[k] * v[B->col[k]];
    return MBS_OK;
}

/* F(t, y) of sparse mode with the problem's triplet callbacks (H = I, so G = B):
 * the same rows as the dense code below, products over the triplets of B. */
/* Baumgarte2 ([arnold2016dae] Eq. (87c)): Fc += alpha0 g(t, q), alpha0 = C / h. */
static int add_baumgarte_term(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *q,
                              double *Fc)
{
    int s = mbs_constraint(ctx, t, q, f->g);
    if (s != MBS_OK)
        return s;
    for (size_t i = 0; i < f->nl; i++)
        Fc[i] += f->baumgarte_C / f->h * f->g[i];
    return MBS_OK;
}

static int rhs_triplets(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y, double *F)
{
    size_t nq = f->nq, nv = f->nv, nl = f->nl;
    const double *q = y, *v = y + nq, *lam = y + nq + nv;
    double *Fq = F, *Fv = F + nq, *Fc = F + nq + nv;
    int s;
    if ((s = mbs_qdot(ctx, q, v, Fq)) != MBS_OK || (s = mbs_force(ctx, t, q, v, Fv)) != MBS_OK)
        return s;
    if (nl == 0)
        return MBS_OK;
    f->Bt.nnz = 0;
    if ((s = mbs_jacobian_sparse(ctx, t, q, &f->Bt)) != MBS_OK)
        return s;
    const mbs_triplets *B = &f->Bt;
    for (size_t k = 0; k < B->nnz; k++)
        Fv[B->col[k]] -= B->val[k] * lam[B->row[k]];
    switch (f->kind) {
    case MBS_FORM_INDEX3:
        return mbs_constraint(ctx, t, q, Fc);
    case MBS_FORM_INDEX2:
        return velocity_constraint_triplets(f, ctx, t, q, v, Fc);
    case MBS_FORM_BAUMGARTE2:
        if ((s = velocity_constraint_triplets(f, ctx, t, q, v, Fc)) != MBS_OK)
            return s;
        return add_baumgarte_term(f, ctx, t, q, Fc);
    case MBS_FORM_GGL: {
        const double *mu = y + nq + nv + nl;
        for (size_t k = 0; k < B->nnz; k++)
            Fq[B->col[k]] -= B->val[k] * mu[B->row[k]];
        if ((s = mbs_constraint(ctx, t, q, Fc)) != MBS_OK)
            return s;
        return velocity_constraint_triplets(f, ctx, t, q, v, Fc + nl);
    }
    }
    return MBS_OK;
}

int mbs_dae_form_rhs(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y, double *F)
{
    size_t nq = f->nq, nv = f->nv, nl = f->nl;
    const double *q = y, *v = y + nq, *lam = y + nq + nv;
    double *Fq = F, *Fv = F + nq, *Fc = F + nq + nv;
    int s;
    if (f->nx)
        return mbs_ext_rhs(ctx, t, y, F);
    if (f->kind == MBS_FORM_BAUMGARTE2 && !(f->h > 0.0 && f->baumgarte_C > 0.0))
        return mbs_fail(ctx, MBS_BAD_INPUT, t,
                        "baumgarte2 form needs h > 0 and C > 0 (h=%g, C=%g)", f->h,
                        f->baumgarte_C);
    if (f->native)
        return rhs_triplets(f, ctx, t, y, F);
    /* (77a): q' = H v */
    if ((s = mbs_qdot(ctx, q, v, Fq)) != MBS_OK)
        return s;
    /* (77b): f - B^T lambda */
    if ((s = mbs_force(ctx, t, q, v, Fv)) != MBS_OK)
        return s;
    if (nl == 0)
        return MBS_OK;
    /* f->B is n_l x n_v when n_l > 0 (form_alloc) */
    if ((s = mbs_constraint_jacobian(ctx, t, q, f->B)) != MBS_OK)
        return s;
    const double *Bd = f->B->data;
    const size_t tb = f->B->tda;
    for (size_t i = 0; i < nl; i++)
        for (size_t j = 0; j < nv; j++)
            Fv[j] -= Bd[i * tb + j] * lam[i];
    switch (f->kind) {
    case MBS_FORM_INDEX3: /* (77c) */
        return mbs_constraint(ctx, t, q, Fc);
    case MBS_FORM_INDEX2: /* (79c) with g_t for rheonomic constraints */
        return velocity_constraint(f, ctx, t, q, v, Fc);
    case MBS_FORM_BAUMGARTE2: /* (87c): alpha0 g + B v + g_t, alpha0 = C / h */
        if ((s = velocity_constraint(f, ctx, t, q, v, Fc)) != MBS_OK)
            return s;
        return add_baumgarte_term(f, ctx, t, q, Fc);
    case MBS_FORM_GGL: {
        /* (92a): q' = H v - G^T mu.  G is B when H = I, else the full Jacobian
         * that mbs_constraint_jacobian left in ctx->G_full. */
        const double *mu = y + nq + nv + nl;
        const gsl_matrix *G = f->B;
        if (f->Gt) {
            gsl_matrix_view Gs = gsl_matrix_submatrix(f->Gt, 0, 0, nl, nq);
            gsl_matrix_const_view Gc = gsl_matrix_const_submatrix(ctx->G_full, 0, 0, nl, nq);
            gsl_matrix_memcpy(&Gs.matrix, &Gc.matrix);
            G = f->Gt;
        }
        for (size_t i = 0; i < nl; i++)
            for (size_t j = 0; j < nq; j++)
                Fq[j] -= gsl_matrix_get(G, i, j) * mu[i];
        /* (92c), (92d) */
        if ((s = mbs_constraint(ctx, t, q, Fc)) != MBS_OK)
            return s;
        return velocity_constraint(f, ctx, t, q, v, Fc + nl);
    }
    }
    return MBS_OK;
}



/* Columns 0..ncols-1 of dF/dy by forward differences about y (f->F0 = F(t, y)
 * already computed; f->yp holds a copy of y). */
static int fd_columns(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y, gsl_matrix *J,
                      size_t ncols)
{
    for (size_t j = 0; j < ncols; j++) {
        double d = mbs_dae_form_fd_step(y[j]);
        f->yp[j] = y[j] + d;
        d = f->yp[j] - y[j];
        int s = mbs_dae_form_rhs(f, ctx, t, f->yp, f->F1);
        f->yp[j] = y[j];
        if (s != MBS_OK)
            return s;
        for (size_t i = 0; i < f->n; i++)
            gsl_matrix_set(J, i, j, (f->F1[i] - f->F0[i]) / d);
    }
    return MBS_OK;
}

int mbs_dae_form_jac(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y, gsl_matrix *J)
{
    size_t nq = f->nq, nv = f->nv, nl = f->nl, n = f->n, ic = nq + nv;
    int s;
    if (f->native)
        return mbs_fail(ctx, MBS_BAD_INPUT, t, "dense dF/dy requested from a sparse-mode form");
    zero_matrix(J);
    mbs_count_jacobian(ctx);
    if (f->deriv) {
        if (f->kind == MBS_FORM_BAUMGARTE2 && !(f->h > 0.0 && f->baumgarte_C > 0.0))
            return mbs_fail(ctx, MBS_BAD_INPUT, t,
                            "baumgarte2 form needs h > 0 and C > 0 (h=%g, C=%g)", f->h,
                            f->baumgarte_C);
        return mbs_dae_form_jac_deriv(f, ctx, t, y, J);
    }
    /* Extended problem: the problem's own dF/dy, else forward differences of
     * its F in every column. */
    if (f->nx && mbs_ext_has_jac(ctx))
        return mbs_ext_jac(ctx, t, y, J);
    if ((s = mbs_dae_form_rhs(f, ctx, t, y, f->F0)) != MBS_OK)
        return s;
    memcpy(f->yp, y, n * sizeof(double));
    if (f->nx)
        return fd_columns(f, ctx, t, y, J, n);
    /* q columns: finite differences of the whole F (f_q, (B^T lambda)_q, (H v)_q,
     * (G^T mu)_q, (B v)_q, g_q). */
    if ((s = fd_columns(f, ctx, t, y, J, nq)) != MBS_OK)
        return s;
    /* Analytic blocks at y: B (and G) from the constraint Jacobian. */
    if (nl > 0) {
        gsl_matrix_view B = gsl_matrix_submatrix(f->B, 0, 0, nl, nv);
        if ((s = mbs_constraint_jacobian(ctx, t, y, &B.matrix)) != MBS_OK)
            return s;
        const gsl_matrix *G = f->B; /* H = I: G = B */
        if (ctx->pb->def->kinematic)
            G = ctx->G_full;
        for (size_t i = 0; i < nl; i++) {
            for (size_t j = 0; j < nv; j++) {
                double b = gsl_matrix_get(f->B, i, j);
                gsl_matrix_set(J, nq + j, ic + i, -b); /* d(f - B^T lambda)/dlambda */
                if (f->kind != MBS_FORM_INDEX3) /* d(B v + ...)/dv */
                    gsl_matrix_set(J, ic + (f->kind == MBS_FORM_GGL ? nl : 0) + i, nq + j, b);
            }
            for (size_t j = 0; j < nq; j++) {
                double g = gsl_matrix_get(G, i, j);
                if (f->kind == MBS_FORM_INDEX3 || f->kind == MBS_FORM_GGL)
                    gsl_matrix_set(J, ic + i, j, g); /* dg/dq = G (analytic) */
                if (f->kind == MBS_FORM_GGL)
                    gsl_matrix_set(J, j, ic + nl + i, -g); /* d(-G^T mu)/dmu */
            }
        }
    }
    /* v columns: H in the q rows (columns of H via q' = H e_j), f_v by
     * finite differences in the v rows. */
    for (size_t j = 0; j < nv; j++) {
        memset(f->yp + nq, 0, nv * sizeof(double));
        f->yp[nq + j] = 1.0;
        if ((s = mbs_qdot(ctx, y, f->yp + nq, f->w)) != MBS_OK)
            return s;
        for (size_t i = 0; i < nq; i++)
            gsl_matrix_set(J, i, nq + j, f->w[i]);
    }
    memcpy(f->yp + nq, y + nq, nv * sizeof(double));
    if ((s = mbs_force(ctx, t, y, y + nq, f->F0)) != MBS_OK)
        return s;
    for (size_t j = 0; j < nv; j++) {
        double d = mbs_dae_form_fd_step(y[nq + j]);
        f->yp[nq + j] = y[nq + j] + d;
        d = f->yp[nq + j] - y[nq + j];
        s = mbs_force(ctx, t, y, f->yp + nq, f->F1);
        f->yp[nq + j] = y[nq + j];
        if (s != MBS_OK)
            return s;
        for (size_t i = 0; i < nv; i++)
            gsl_matrix_set(J, nq + i, nq + j, (f->F1[i] - f->F0[i]) / d);
    }
    return MBS_OK;
}

void mbs_dae_form_from_state(const mbs_dae_form *f, const double *state, double *y)
{
    size_t m = f->nq + f->nv + f->nl;
    memcpy(y, state, m * sizeof(double));
    for (size_t i = 0; i < f->nmu; i++)
        y[m + i] = 0.0;
    if (f->nx) /* extended problems: x after lambda (nmu = 0) */
        memcpy(y + m, state + m, f->nx * sizeof(double));
}

void mbs_dae_form_to_state(const mbs_dae_form *f, const double *y, double *state)
{
    memcpy(state, y, (f->nq + f->nv + f->nl + f->nx) * sizeof(double));
}

/* ---- sparse mode (the algebra is in dae_form.h) ------------------- */

int mbs_dae_form_alloc_sparse(mbs_dae_form **out, mbs_ctx *ctx, mbs_form_kind kind,
                              int ls_kind)
{
    const mbs_problem *pb = ctx->pb;
    *out = NULL;
    const char *why = NULL;
    if (pb->def->kinematic)
        why = "a kinematic matrix H(q) != I";
    else if (pb->flags & MBS_PB_EXTENDED)
        why = "extra variables x (extended contract)";
    else if (pb->flags & MBS_PB_NONHOLONOMIC)
        why = "non-holonomic constraints";
    else if (pb->nl == 0 && (pb->flags & MBS_PB_SINGULAR_MASS))
        why = "a singular mass matrix and no constraints";
    if (why)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "structured %s iteration matrix (linsol=%s) needs H = I and a regular "
                        "KKT matrix; %s has %s (use linsol=full)",
                        mbs_dae_form_kind_name(kind), mbs_linsol_name(ls_kind), pb->def->name,
                        why);
    int native = pb->def->mass_sparse && pb->def->jacobian_sparse;
    mbs_dae_form *f;
    int s = form_alloc(&f, ctx, kind, !native);
    if (s != MBS_OK)
        return s;
    f->sparse = 1;
    f->native = native;
    f->ls_kind = ls_kind;
    size_t nq = f->nq, nv = f->nv, nl = f->nl, nlc = nl ? nl : 1;
    /* singular M (definite on ker B): CHOLMOD on the augmented Lagrangian */
    double aug = (pb->flags & MBS_PB_SINGULAR_MASS) ? 1.0 : 0.0;
    if (ls_kind < 0) { /* residual only: the caller assembles its own matrix */
        *out = f;
        return MBS_OK;
    }
    s = mbs_linsol_alloc(&f->kkt, ls_kind, nv, nl, aug);
    if (s == MBS_OK && kind == MBS_FORM_GGL && nl > 0)
        s = mbs_linsol_alloc(&f->kktg, ls_kind, nq, nl, 0.0);
    if (s != MBS_OK) {
        mbs_dae_form_free(f);
        return s;
    }
    /* up to MBS_LINSOL_MAX_RHS columns (Radau's real block and the real and
     * imaginary parts of its complex blocks) of n_v (GGL: n_q = n_v, H = I) and
     * n_l entries */
    size_t nvq = nv > nq ? nv : nq, kc = MBS_LINSOL_MAX_RHS;
    f->ka = malloc(kc * nvq * sizeof(double));
    f->kx = malloc(kc * nvq * sizeof(double));
    f->kg = calloc(kc * nlc, sizeof(double));
    f->kl = calloc(kc * nlc, sizeof(double));
    int ok = f->ka && f->kx && f->kg && f->kl;
    if (ok && !native)
        ok = mbs_triplets_reserve(&f->Mt, nv * nv) == 0 &&
             mbs_triplets_reserve(&f->Bt, nl * nv) == 0 &&
             mbs_triplets_reserve(&f->Bj, nl * nv) == 0;
    if (ok && f->kktg) {
        ok = mbs_triplets_reserve(&f->It, nq) == 0;
        for (size_t i = 0; ok && i < nq; i++)
            mbs_triplets_push(&f->It, i, i, 1.0);
    }
    if (!ok) {
        mbs_dae_form_free(f);
        return MBS_NO_MEMORY;
    }
    *out = f;
    return MBS_OK;
}

const mbs_linsol *mbs_dae_form_linsol(const mbs_dae_form *f, int which)
{
    if (!f)
        return NULL;
    return which == 0 ? f->kkt : which == 1 ? f->kktg : NULL;
}

/* ov = M(q) pv - sub (length n_v; sub NULL: M(q) pv), M from the triplets
 * (native sparse mode) or the dense mass matrix.  ov may be sub. */
static inline int mass_times_v(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y,
                               const double *pv, double *ov, const double *sub)
{
    size_t nv = f->nv;
    int s;
    if (f->native) {
        double *acc = sub ? f->F1 : ov; /* F1: scratch */
        f->Mt.nnz = 0;
        if ((s = mbs_mass_sparse(ctx, t, y, &f->Mt)) != MBS_OK)
            return s;
        memset(acc, 0, nv * sizeof(double));
        for (size_t k = 0; k < f->Mt.nnz; k++)
            acc[f->Mt.row[k]] += f->Mt.val[k] * pv[f->Mt.col[k]];
        if (sub)
            for (size_t i = 0; i < nv; i++)
                ov[i] = acc[i] - sub[i];
        return MBS_OK;
    }
    if ((s = mbs_mass(ctx, t, y, f->M)) != MBS_OK)
        return s;
    const double *Md = f->M->data;
    const size_t tm = f->M->tda;
    for (size_t i = 0; i < nv; i++) {
        double r = 0.0;
        for (size_t j = 0; j < nv; j++)
            r += Md[i * tm + j] * pv[j];
        ov[i] = sub ? r - sub[i] : r;
    }
    return MBS_OK;
}

int mbs_dae_form_mass_times(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y,
                            const double *yp, double *out)
{
    size_t nq = f->nq, nv = f->nv;
    int s;
    if (f->nx)
        return mbs_fail(ctx, MBS_BAD_INPUT, t, "E y' product not available for extended problems");
    memcpy(out, yp, nq * sizeof(double));
    if ((s = mass_times_v(f, ctx, t, y, yp + nq, out + nq, NULL)) != MBS_OK)
        return s;
    memset(out + nq + nv, 0, (f->n - nq - nv) * sizeof(double));
    return MBS_OK;
}

/* E y' - F of the index-2 and index-3 forms with H = I in dense mode (the
 * common case of the Radau IIA stages and IDA's residual), in one pass: the
 * callbacks in the order of mbs_dae_form_rhs and mass_times_v (force, B,
 * g_t or g, M), each entry the same expression in the same order as the
 * general path below (the same numbers, the same counters), without the
 * layers between them.  yp NULL: -F, without the mass callback. */
static inline MBS_SMALL_INLINE int residual_plain_n(size_t nv, mbs_dae_form *f, mbs_ctx *ctx,
                                                    double t, const double *restrict y,
                                                    const double *restrict yp, double *restrict R,
                                                    const int with_e)
{
    if (!with_e) /* a constant where inlined: each caller's copy has one path */
        yp = NULL;
    const size_t nq = nv, nl = f->nl; /* H = I: n_q = n_v */
    const double *q = y, *v = y + nq, *lam = y + nq + nv;
    double *restrict Rv = R + nq, *restrict Rc = R + nq + nv;
    int s;
    if (yp) {
        MBS_SMALL_UNROLL
        for (size_t i = 0; i < nq; i++) /* q' = v */
            R[i] = yp[i] - v[i];
    } else {
        MBS_SMALL_UNROLL
        for (size_t i = 0; i < nq; i++)
            R[i] = 0.0 - v[i];
    }
    if ((s = mbs_force(ctx, t, q, v, Rv)) != MBS_OK)
        return s;
    if (nl > 0) {
        if ((s = mbs_constraint_jacobian(ctx, t, q, f->B)) != MBS_OK)
            return s;
        const double *Bd = f->B->data;
        const size_t tb = f->B->tda;
        for (size_t i = 0; i < nl; i++) { /* f - B^T lambda */
            const double *Bi = Bd + i * tb, li = lam[i];
            MBS_SMALL_UNROLL
            for (size_t j = 0; j < nv; j++)
                Rv[j] -= Bi[j] * li;
        }
        if (f->kind == MBS_FORM_INDEX3) {
            if ((s = mbs_constraint(ctx, t, q, Rc)) != MBS_OK)
                return s;
            for (size_t i = 0; i < nl; i++) /* E's zero rows: 0 - g */
                Rc[i] = 0.0 - Rc[i];
        } else {
            const int rheo = ctx->pb->def->constraint_t != NULL;
            if (rheo && (s = mbs_constraint_t(ctx, t, q, f->gt)) != MBS_OK)
                return s;
            for (size_t i = 0; i < nl; i++) { /* 0 - (B v + g_t) */
                const double *Bi = Bd + i * tb;
                double bv = rheo ? f->gt[i] : 0.0;
                MBS_SMALL_UNROLL
                for (size_t j = 0; j < nv; j++)
                    bv += Bi[j] * v[j];
                Rc[i] = 0.0 - bv;
            }
        }
    }
    if (!yp) {
        MBS_SMALL_UNROLL
        for (size_t i = 0; i < nv; i++) /* -(f - B^T lambda) */
            Rv[i] = 0.0 - Rv[i];
        return MBS_OK;
    }
    if ((s = mbs_mass(ctx, t, q, f->M)) != MBS_OK)
        return s;
    const double *Md = f->M->data, *pv = yp + nq;
    const size_t tm = f->M->tda;
    MBS_SMALL_UNROLL
    for (size_t i = 0; i < nv; i++) { /* M v' - (f - B^T lambda) */
        const double *Mi = Md + i * tm;
        double r = 0.0;
        MBS_SMALL_UNROLL
        for (size_t j = 0; j < nv; j++)
            r += Mi[j] * pv[j];
        Rv[i] = r - Rv[i];
    }
    return MBS_OK;
}

/* Instantiated per n_v up to MBS_SMALL_FIXED (methods/linsol/dense_small.h):
 * the loops over q and v unrolled, the same operations in the same order. */
static int residual_plain(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y,
                          const double *yp, double *R)
{
    if (yp) {
        MBS_SMALL_DISPATCH(return, residual_plain_n, f->nv, f, ctx, t, y, yp, R, 1)
    }
    MBS_SMALL_DISPATCH(return, residual_plain_n, f->nv, f, ctx, t, y, NULL, R, 0)
}

/* ns stages of residual_plain_n in one call (the same evaluations in the
 * same order, without a dispatch and the form's tests per stage). */
static inline MBS_SMALL_INLINE int residual_plain_stages_n(size_t nv, mbs_dae_form *f,
                                                           mbs_ctx *ctx, size_t ns,
                                                           const double *t, const double *Y,
                                                           const double *Yp, double *R,
                                                           const int with_e)
{
    const size_t n = f->n;
    for (size_t i = 0; i < ns; i++) {
        int s = residual_plain_n(nv, f, ctx, t[i], Y + i * n, with_e ? Yp + i * n : NULL,
                                 R + i * n, with_e);
        if (s != MBS_OK)
            return s;
    }
    return MBS_OK;
}

int mbs_dae_form_residual_stages(mbs_dae_form *f, mbs_ctx *ctx, size_t ns, const double *t,
                                 const double *Y, const double *Yp, double *R)
{
    if (!f->nx && !f->native && !ctx->pb->def->kinematic &&
        (f->kind == MBS_FORM_INDEX2 || f->kind == MBS_FORM_INDEX3)) {
        if (Yp) {
            MBS_SMALL_DISPATCH(return, residual_plain_stages_n, f->nv, f, ctx, ns, t, Y, Yp, R, 1)
        }
        MBS_SMALL_DISPATCH(return, residual_plain_stages_n, f->nv, f, ctx, ns, t, Y, NULL, R, 0)
    }
    for (size_t i = 0; i < ns; i++) {
        int s = mbs_dae_form_residual(f, ctx, t[i], Y + i * f->n, Yp ? Yp + i * f->n : NULL,
                                      R + i * f->n);
        if (s != MBS_OK)
            return s;
    }
    return MBS_OK;
}

int mbs_dae_form_residual(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y,
                          const double *yp, double *R)
{
    size_t nq = f->nq, nv = f->nv;
    int s;
    if (f->nx)
        return mbs_fail(ctx, MBS_BAD_INPUT, t, "E y' product not available for extended problems");
    if (!f->native && !ctx->pb->def->kinematic &&
        (f->kind == MBS_FORM_INDEX2 || f->kind == MBS_FORM_INDEX3))
        return residual_plain(f, ctx, t, y, yp, R);
    if ((s = mbs_dae_form_rhs(f, ctx, t, y, R)) != MBS_OK)
        return s;
    if (!yp) { /* -F: E y' left out */
        for (size_t i = 0; i < f->n; i++)
            R[i] = 0.0 - R[i];
        return MBS_OK;
    }
    for (size_t i = 0; i < nq; i++)
        R[i] = yp[i] - R[i];
    if ((s = mass_times_v(f, ctx, t, y, yp + nq, R + nq, R + nq)) != MBS_OK) /* M yp_v - F_v */
        return s;
    for (size_t i = nq + nv; i < f->n; i++) /* E's zero rows: 0 - F, as E y' - F */
        R[i] = 0.0 - R[i];
    return MBS_OK;
}

int mbs_dae_form_index2_velocities(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *q,
                                   int *seen)
{
    size_t nq = f->nq, nv = f->nv, nl = f->nl;
    for (size_t j = 0; j < nv; j++) /* extended problems: their own var_index decides */
        seen[j] = nl > 0 && (!f->nx || f->var_index[nq + j] >= 2);
    if (nl == 0 || f->nx)
        return MBS_OK;
    gsl_matrix *B = gsl_matrix_calloc(nl, nv);
    double *qp = malloc(nq * sizeof(double));
    int s = MBS_NO_MEMORY;
    if (!B || !qp)
        goto done;
    for (size_t j = 0; j < nv; j++)
        seen[j] = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < nq; i++)
            qp[i] = q[i] + (pass ? 1e-3 * (0.1 + fmod(0.6180339887 * (double)(i + 1), 1.0)) : 0.0);
        if ((s = mbs_constraint_jacobian(ctx, t, qp, B)) != MBS_OK)
            goto done;
        for (size_t j = 0; j < nv; j++)
            for (size_t i = 0; i < nl && !seen[j]; i++)
                seen[j] = gsl_matrix_get(B, i, j) != 0.0;
    }
done:
    gsl_matrix_free(B);
    free(qp);
    return s;
}

/* ---- the formulations of the DAE axis (framework/dae_axis.h) ---------------------- */

#define DAE_FORM_PROVIDES (MBS_DAE_EF | MBS_DAE_JACOBIAN | MBS_DAE_KKT)

const mbs_dae_formulation mbs_dae_formulation_index3 = {
    .name = "index3",
    .kind = MBS_FORM_INDEX3,
    .provides = DAE_FORM_PROVIDES | MBS_DAE_EXTENDED,
    .index = 3,
    .title = "the index-3 formulation",
    .form = "the index-3 form",
    .eqs = "(77)",
};

const mbs_dae_formulation mbs_dae_formulation_index2 = {
    .name = "index2",
    .kind = MBS_FORM_INDEX2,
    .provides = DAE_FORM_PROVIDES | MBS_DAE_EXTENDED,
    .index = 2,
    .title = "the index-2 formulation",
    .form = "the index-2 form",
    .eqs = "(79)",
};

const mbs_dae_formulation mbs_dae_formulation_ggl = {
    .name = "ggl",
    .kind = MBS_FORM_GGL,
    .provides = DAE_FORM_PROVIDES,
    .index = 2,
    .mu = 1,
    .title = "the GGL stabilized index-2 formulation",
    .form = "the GGL form",
    .eqs = "(92)",
};

static const mbs_param_def baumgarte2_params[] = {
    {"C", 1.0, 1e-8, 1e8, "Baumgarte constant, alpha0 = C/h (Arnold 2016 [arnold2016dae] Eq. (87))", NULL, 0},
};

/* Simeon et al. ([arnold2016dae]) give alpha0 = C/h for fixed step sizes (after Eq. (87)). */
const mbs_dae_formulation mbs_dae_formulation_baumgarte2 = {
    .name = "baumgarte2",
    .kind = MBS_FORM_BAUMGARTE2,
    .provides = DAE_FORM_PROVIDES | MBS_DAE_FIXED_H,
    .index = 2,
    .title = "the index-2 Baumgarte formulation, alpha0 = C/h",
    .form = "the index-2 Baumgarte form, alpha0 = C/h",
    .eqs = "(87)",
    .params = MBS_PARAM_LIST(baumgarte2_params),
};
