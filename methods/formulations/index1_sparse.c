/* The index-1 formulation (index1.h) on the sparse backends of linsol.h:
 * linsol=umfpack (sparse LU of the KKT matrix) and linsol=cholmod (range-space
 * solve with CHOLMOD).  Problems that provide mass_sparse and jacobian_sparse
 * and have H = I are evaluated as triplets directly (the chain); every other
 * problem is evaluated densely through the counting wrappers and handed over
 * with its full dense pattern (correct, but without the sparse savings). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/gslalloc.h"
#include "index1.h"
#include "../linsol/linsol.h"
#include "../../problems/triplets.h"

struct mbs_index1_sparse {
    mbs_linsol *ls;
    int native;          /* triplet callbacks of the problem are used */
    mbs_triplets Mt, Bt; /* M and B = G as triplets */
    gsl_matrix *Md, *Bd; /* dense fallback */
    double *f, *gam;
};

void mbs_index1_sparse_free(mbs_index1_sparse *sp)
{
    if (!sp)
        return;
    mbs_linsol_free(&sp->ls);
    mbs_triplets_free(&sp->Mt);
    mbs_triplets_free(&sp->Bt);
    if (sp->Md)
        gsl_matrix_free(sp->Md);
    if (sp->Bd)
        gsl_matrix_free(sp->Bd);
    free(sp->f);
    free(sp->gam);
    free(sp);
}

int mbs_index1_sparse_alloc(mbs_index1 *w, mbs_ctx *ctx)
{
    const mbs_problem *pb = ctx->pb;
    size_t nv = pb->nv, nl = pb->nl, nlc = nl ? nl : 1;
    mbs_index1_sparse *sp = calloc(1, sizeof *sp);
    if (!sp)
        return MBS_NO_MEMORY;
    int kind = w->linsol == MBS_LINSOL_UMFPACK ? MBS_LS_UMFPACK : MBS_LS_CHOLMOD;
    /* M only definite on ker B: the augmented-Lagrangian A = M + w B^T B. */
    double aug = (pb->flags & MBS_PB_SINGULAR_MASS) ? 1.0 : 0.0;
    int s = mbs_linsol_alloc(&sp->ls, kind, nv, nl, aug);
    if (s != MBS_OK) {
        mbs_index1_sparse_free(sp);
        return s;
    }
    sp->native = pb->def->mass_sparse && pb->def->jacobian_sparse && !pb->def->kinematic;
    sp->f = malloc(nv * sizeof *sp->f);
    sp->gam = calloc(nlc, sizeof *sp->gam);
    int ok = sp->f && sp->gam;
    if (ok && !sp->native) {
        sp->Md = mbs_matrix_alloc(nv, nv);
        sp->Bd = mbs_matrix_alloc(nlc, nv);
        ok = sp->Md && sp->Bd && mbs_triplets_reserve(&sp->Mt, nv * nv) == 0 &&
             mbs_triplets_reserve(&sp->Bt, nl * nv) == 0;
    }
    if (!ok) {
        mbs_index1_sparse_free(sp);
        return MBS_NO_MEMORY;
    }
    w->sp = sp;
    return MBS_OK;
}

const mbs_linsol *mbs_index1_linsol(const mbs_index1 *w)
{
    return w && w->sp ? w->sp->ls : NULL;
}

void mbs_index1_report(mbs_ctx *ctx, const mbs_index1 *w)
{
    if (w && w->sp)
        mbs_ctx_report_linsol(ctx, w->sp->ls,
                              w->linsol == MBS_LINSOL_UMFPACK ? MBS_LS_UMFPACK : MBS_LS_CHOLMOD);
}

static int eval_matrices(mbs_index1_sparse *sp, mbs_ctx *ctx, double t, const double *q)
{
    const mbs_problem *pb = ctx->pb;
    size_t nv = pb->nv, nl = pb->nl;
    int s;
    if (sp->native) {
        if ((s = mbs_mass_sparse(ctx, t, q, &sp->Mt)) != MBS_OK)
            return s;
        sp->Bt.nnz = 0;
        return nl == 0 ? MBS_OK : mbs_jacobian_sparse(ctx, t, q, &sp->Bt);
    }
    if ((s = mbs_mass(ctx, t, q, sp->Md)) != MBS_OK)
        return s;
    sp->Mt.nnz = 0;
    for (size_t i = 0; i < nv; i++)
        for (size_t j = 0; j < nv; j++)
            mbs_triplets_push(&sp->Mt, i, j, gsl_matrix_get(sp->Md, i, j));
    sp->Bt.nnz = 0;
    if (nl == 0)
        return MBS_OK;
    gsl_matrix_view B = gsl_matrix_submatrix(sp->Bd, 0, 0, nl, nv);
    if ((s = mbs_constraint_jacobian(ctx, t, q, &B.matrix)) != MBS_OK)
        return s;
    for (size_t i = 0; i < nl; i++)
        for (size_t j = 0; j < nv; j++)
            mbs_triplets_push(&sp->Bt, i, j, gsl_matrix_get(&B.matrix, i, j));
    return MBS_OK;
}

int mbs_index1_sparse_accel(mbs_index1 *w, mbs_ctx *ctx, double t, const double *q,
                            const double *v, double *vdot)
{
    mbs_index1_sparse *sp = w->sp;
    size_t nl = w->nl;
    int s;
    if ((s = eval_matrices(sp, ctx, t, q)) != MBS_OK ||
        (s = mbs_force(ctx, t, q, v, sp->f)) != MBS_OK)
        return s;
    if (nl > 0) {
        if ((s = mbs_gamma(ctx, t, q, v, sp->gam)) != MBS_OK)
            return s;
        if (w->alpha != 0.0 || w->beta != 0.0) {
            /* [pennestri_coordinate_reduction] Eq. (9): gamma - 2 alpha (B v + g_t) - beta^2 g */
            if ((s = mbs_constraint(ctx, t, q, w->g)) != MBS_OK ||
                (s = mbs_constraint_t(ctx, t, q, w->gt)) != MBS_OK)
                return s;
            for (size_t i = 0; i < nl; i++)
                sp->gam[i] -= w->beta * w->beta * w->g[i] + 2.0 * w->alpha * w->gt[i];
            for (size_t k = 0; k < sp->Bt.nnz; k++)
                sp->gam[sp->Bt.row[k]] -= 2.0 * w->alpha * sp->Bt.val[k] * v[sp->Bt.col[k]];
        }
    }
    mbs_linsol_stats a, b;
    mbs_linsol_get_stats(sp->ls, &a);
    char msg[200];
    msg[0] = '\0';
    s = mbs_linsol_factor(sp->ls, &sp->Mt, &sp->Bt, msg, sizeof msg);
    if (s == MBS_OK)
        s = mbs_linsol_solve(sp->ls, sp->f, sp->gam, vdot, w->lambda, msg, sizeof msg);
    mbs_linsol_get_stats(sp->ls, &b);
    ctx->cnt.factorizations += b.factorizations - a.factorizations;
    ctx->cnt.solves += b.solves - a.solves;
    if (s != MBS_OK)
        return mbs_fail(ctx, s, t, "%s: %s", mbs_linsol_name(w->linsol == MBS_LINSOL_UMFPACK
                                                                   ? MBS_LS_UMFPACK
                                                                   : MBS_LS_CHOLMOD),
                        msg);
    return MBS_OK;
}
