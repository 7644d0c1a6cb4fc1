/* M and B as triplets for the linear-solver backends (see kkt_eval.h). */
#include "kkt_eval.h"

#include <stdlib.h>
#include <string.h>

#include "../../core/gslalloc.h"
#include "../linsol/linsol.h"
#include "../../problems/triplets.h"

void mbs_kkt_eval_free(mbs_kkt_eval *e)
{
    mbs_triplets_free(&e->M);
    mbs_triplets_free(&e->B);
    if (e->Md)
        gsl_matrix_free(e->Md);
    if (e->Bd)
        gsl_matrix_free(e->Bd);
    e->Md = e->Bd = NULL;
}

int mbs_kkt_eval_init(mbs_kkt_eval *e, const mbs_ctx *ctx)
{
    const mbs_problem *pb = ctx->pb;
    memset(e, 0, sizeof *e);
    e->nv = pb->nv;
    e->nl = pb->nl;
    e->native = pb->def->mass_sparse && pb->def->jacobian_sparse && !pb->def->kinematic;
    if (e->native)
        return MBS_OK;
    size_t nv = pb->nv, nl = pb->nl;
    e->Md = mbs_matrix_alloc(nv, nv);
    e->Bd = mbs_matrix_alloc(nl ? nl : 1, nv);
    if (!e->Md || !e->Bd || mbs_triplets_reserve(&e->M, nv * nv) != 0 ||
        mbs_triplets_reserve(&e->B, nl * nv + 1) != 0) {
        mbs_kkt_eval_free(e);
        return MBS_NO_MEMORY;
    }
    return MBS_OK;
}

int mbs_kkt_eval_mass(mbs_kkt_eval *e, mbs_ctx *ctx, double t, const double *q)
{
    if (e->native)
        return mbs_mass_sparse(ctx, t, q, &e->M);
    int s = mbs_mass(ctx, t, q, e->Md);
    if (s != MBS_OK)
        return s;
    e->M.nnz = 0;
    for (size_t i = 0; i < e->nv; i++)
        for (size_t j = 0; j < e->nv; j++)
            mbs_triplets_push(&e->M, i, j, gsl_matrix_get(e->Md, i, j));
    return MBS_OK;
}

int mbs_kkt_eval_jacobian(mbs_kkt_eval *e, mbs_ctx *ctx, double t, const double *q)
{
    e->B.nnz = 0;
    if (e->nl == 0)
        return MBS_OK;
    if (e->native)
        return mbs_jacobian_sparse(ctx, t, q, &e->B);
    gsl_matrix_view B = gsl_matrix_submatrix(e->Bd, 0, 0, e->nl, e->nv);
    int s = mbs_constraint_jacobian(ctx, t, q, &B.matrix);
    if (s != MBS_OK)
        return s;
    for (size_t i = 0; i < e->nl; i++)
        for (size_t j = 0; j < e->nv; j++)
            mbs_triplets_push(&e->B, i, j, gsl_matrix_get(&B.matrix, i, j));
    return MBS_OK;
}

void mbs_triplets_gemv(const mbs_triplets *T, int trans, double alpha, const double *x,
                       double *y)
{
    if (trans)
        for (size_t k = 0; k < T->nnz; k++)
            y[T->col[k]] += alpha * T->val[k] * x[T->row[k]];
    else
        for (size_t k = 0; k < T->nnz; k++)
            y[T->row[k]] += alpha * T->val[k] * x[T->col[k]];
}

int mbs_triplets_copy_scaled(mbs_triplets *dst, const mbs_triplets *src, double scale)
{
    dst->nnz = 0;
    if (mbs_triplets_reserve(dst, src->nnz) != 0)
        return -1;
    for (size_t k = 0; k < src->nnz; k++)
        mbs_triplets_push(dst, src->row[k], src->col[k], scale * src->val[k]);
    return 0;
}

int mbs_kkt_factor(mbs_linsol *ls, int kind, mbs_ctx *ctx, double t, const mbs_triplets *M,
                   const mbs_triplets *B, const char *what)
{
    mbs_linsol_stats a, b;
    char msg[200];
    msg[0] = '\0';
    mbs_linsol_get_stats(ls, &a);
    int s = mbs_linsol_factor(ls, M, B, msg, sizeof msg);
    mbs_linsol_get_stats(ls, &b);
    ctx->cnt.factorizations += b.factorizations - a.factorizations;
    if (s != MBS_OK)
        return mbs_fail(ctx, s, t, "%s: %s: %s", what, mbs_linsol_name(kind), msg);
    return MBS_OK;
}

int mbs_kkt_solve(mbs_linsol *ls, int kind, mbs_ctx *ctx, double t, const double *f,
                  const double *gam, double *a, double *lambda, const char *what)
{
    char msg[200];
    msg[0] = '\0';
    mbs_count_solve(ctx);
    int s = mbs_linsol_solve(ls, f, gam, a, lambda, msg, sizeof msg);
    if (s != MBS_OK)
        return mbs_fail(ctx, s, t, "%s: %s: %s", what, mbs_linsol_name(kind), msg);
    return MBS_OK;
}
