#include "index1.h"

#include "../../core/gslalloc.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <stdlib.h>
#include <string.h>

void mbs_index1_free(mbs_index1 *w)
{
    if (!w)
        return;
    gsl_matrix_free(w->Mown);
    gsl_matrix_free(w->Bown);
    gsl_matrix_free(w->K);
    gsl_permutation_free(w->perm);
    gsl_vector_free(w->rhs);
    gsl_vector_free(w->sol);
    gsl_matrix_free(w->Hc);
    gsl_matrix_free(w->S);
    gsl_vector_free(w->w);
    free(w->fown);
    free(w->gamown);
    free(w->g);
    free(w->gt);
    free(w->lambda);
    mbs_index1_sparse_free(w->sp);
    free(w);
}

int mbs_index1_alloc(mbs_index1 **out, mbs_ctx *ctx, int linsol)
{
    const mbs_problem *pb = ctx->pb;
    *out = NULL;
    if (pb->flags & MBS_PB_REDUNDANT)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "index-1 KKT solve needs full-rank constraints (%s is redundant)",
                        pb->def->name);
    if (linsol == MBS_LINSOL_CHOL && (pb->flags & MBS_PB_SINGULAR_MASS))
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "block Cholesky needs a positive definite mass matrix");
    mbs_index1 *w = calloc(1, sizeof *w);
    if (!w)
        return MBS_NO_MEMORY;
    size_t nv = pb->nv, nl = pb->nl, nk = nv + nl, nlc = nl ? nl : 1;
    w->nq = pb->nq;
    w->nv = nv;
    w->nl = nl;
    w->linsol = linsol;
    w->w = gsl_vector_alloc(nv);
    w->g = malloc(nlc * sizeof *w->g);
    w->gt = malloc(nlc * sizeof *w->gt);
    w->lambda = calloc(nlc, sizeof *w->lambda);
    int ok = w->w && w->g && w->gt && w->lambda;
    int sps = MBS_OK;
    if (linsol == MBS_LINSOL_UMFPACK || linsol == MBS_LINSOL_CHOLMOD) {
        ok = ok && (sps = mbs_index1_sparse_alloc(w, ctx)) == MBS_OK;
    } else if (linsol == MBS_LINSOL_LU) {
        /* M, B, f and gamma are evaluated straight into the KKT system. */
        w->K = mbs_matrix_alloc(nk, nk);
        w->perm = gsl_permutation_alloc(nk);
        w->rhs = gsl_vector_alloc(nk);
        w->sol = gsl_vector_alloc(nk);
        ok = ok && w->K && w->perm && w->rhs && w->sol;
        if (ok) {
            w->Mv = gsl_matrix_submatrix(w->K, 0, 0, nv, nv);
            w->M = &w->Mv.matrix;
            w->f = w->rhs->data;
            if (nl > 0) {
                w->Bv = gsl_matrix_submatrix(w->K, nv, 0, nl, nv);
                w->B = &w->Bv.matrix;
                w->gam = w->rhs->data + nv;
            }
        }
    } else {
        w->M = w->Mown = mbs_matrix_alloc(nv, nv);
        w->f = w->fown = malloc(nv * sizeof *w->f);
        w->Hc = mbs_matrix_alloc(nv, nlc);
        w->S = mbs_matrix_alloc(nlc, nlc);
        ok = ok && w->Mown && w->fown && w->Hc && w->S;
    }
    if (ok && !w->B && !w->sp) {
        w->B = w->Bown = mbs_matrix_alloc(nlc, nv);
        w->gam = w->gamown = malloc(nlc * sizeof *w->gam);
        ok = w->Bown && w->gamown;
    }
    if (!ok) {
        mbs_index1_free(w);
        return sps != MBS_OK ? sps : MBS_NO_MEMORY;
    }
    *out = w;
    return MBS_OK;
}

/* Right-hand side of the constraint rows, with optional Baumgarte terms. */
static int constraint_rhs(mbs_index1 *w, mbs_ctx *ctx, double t, const double *q,
                          const double *v)
{
    int s = mbs_gamma(ctx, t, q, v, w->gam);
    if (s != MBS_OK || (w->alpha == 0.0 && w->beta == 0.0))
        return s;
    /* [pennestri_coordinate_reduction] Eq. (9): gamma - 2 alpha Phi' - beta^2 Phi, Phi' = B v + g_t. */
    if ((s = mbs_constraint(ctx, t, q, w->g)) != MBS_OK ||
        (s = mbs_constraint_t(ctx, t, q, w->gt)) != MBS_OK)
        return s;
    for (size_t i = 0; i < w->nl; i++) {
        double bv = w->gt[i];
        for (size_t j = 0; j < w->nv; j++)
            bv += gsl_matrix_get(w->B, i, j) * v[j];
        w->gam[i] -= 2.0 * w->alpha * bv + w->beta * w->beta * w->g[i];
    }
    return MBS_OK;
}

static int solve_lu(mbs_index1 *w, mbs_ctx *ctx, double t, double *vdot)
{
    size_t nv = w->nv, nl = w->nl, nk = nv + nl;
    /* M, B, f, gamma are already in place (views); complete B^T and the zero block. */
    double *K = w->K->data;
    size_t tda = w->K->tda;
    for (size_t i = 0; i < nl; i++) {
        for (size_t j = 0; j < nv; j++)
            K[j * tda + nv + i] = K[(nv + i) * tda + j];
        for (size_t j = nv; j < nk; j++)
            K[(nv + i) * tda + j] = 0.0;
    }
    int sign;
    mbs_count_factorization(ctx);
    if (gsl_linalg_LU_decomp(w->K, w->perm, &sign) != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "KKT LU factorization failed");
    mbs_count_solve(ctx);
    if (gsl_linalg_LU_solve(w->K, w->perm, w->rhs, w->sol) != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "singular KKT matrix (rank %zu of %zu)",
                        mbs_lu_rank(w->K), w->K->size1);
    for (size_t i = 0; i < nv; i++)
        vdot[i] = gsl_vector_get(w->sol, i);
    for (size_t i = 0; i < nl; i++)
        w->lambda[i] = gsl_vector_get(w->sol, nv + i);
    return MBS_OK;
}

static int solve_chol(mbs_index1 *w, mbs_ctx *ctx, double t, double *vdot)
{
    size_t nv = w->nv, nl = w->nl;
    mbs_count_factorization(ctx);
    if (gsl_linalg_cholesky_decomp1(w->M) != GSL_SUCCESS) /* M = L L^T */
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "mass matrix not positive definite");
    gsl_vector_view f = gsl_vector_view_array(w->f, nv);
    /* w = L^-1 f */
    gsl_vector_memcpy(w->w, &f.vector);
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, w->M, w->w);
    if (nl > 0) {
        /* Hc = L^-1 B^T ([pennestri_coordinate_reduction] Eq. (5)), S = Hc^T Hc = B M^-1 B^T. */
        gsl_matrix_view B = gsl_matrix_submatrix(w->B, 0, 0, nl, nv);
        gsl_matrix_view Hc = gsl_matrix_submatrix(w->Hc, 0, 0, nv, nl);
        gsl_matrix_view S = gsl_matrix_submatrix(w->S, 0, 0, nl, nl);
        gsl_matrix_transpose_memcpy(&Hc.matrix, &B.matrix);
        gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, w->M,
                       &Hc.matrix);
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &Hc.matrix, &Hc.matrix, 0.0,
                       &S.matrix);
        mbs_count_factorization(ctx);
        if (gsl_linalg_cholesky_decomp1(&S.matrix) != GSL_SUCCESS) /* Eq. (6) */
            return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "B M^-1 B^T not positive definite");
        /* lambda = S^-1 (Hc^T L^-1 f - gamma)  (Eq. (7)) */
        gsl_vector_view lam = gsl_vector_view_array(w->lambda, nl);
        gsl_blas_dgemv(CblasTrans, 1.0, &Hc.matrix, w->w, 0.0, &lam.vector);
        for (size_t i = 0; i < nl; i++)
            w->lambda[i] -= w->gam[i];
        mbs_count_solve(ctx);
        gsl_linalg_cholesky_svx(&S.matrix, &lam.vector);
        /* v' = L^-T (L^-1 f - Hc lambda)  (Eq. (8)) */
        gsl_blas_dgemv(CblasNoTrans, -1.0, &Hc.matrix, &lam.vector, 1.0, w->w);
    }
    mbs_count_solve(ctx);
    gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, w->M, w->w);
    for (size_t i = 0; i < nv; i++)
        vdot[i] = gsl_vector_get(w->w, i);
    return MBS_OK;
}

int mbs_index1_accel(mbs_index1 *w, mbs_ctx *ctx, double t, const double *q, const double *v,
                     double *vdot, double *lambda)
{
    int s;
    if (w->sp) {
        s = mbs_index1_sparse_accel(w, ctx, t, q, v, vdot);
        if (s == MBS_OK && lambda)
            memcpy(lambda, w->lambda, w->nl * sizeof *lambda);
        return s;
    }
    if ((s = mbs_mass(ctx, t, q, w->M)) != MBS_OK ||
        (s = mbs_force(ctx, t, q, v, w->f)) != MBS_OK)
        return s;
    if (w->nl > 0) {
        gsl_matrix_view B = gsl_matrix_submatrix(w->B, 0, 0, w->nl, w->nv);
        if ((s = mbs_constraint_jacobian(ctx, t, q, &B.matrix)) != MBS_OK ||
            (s = constraint_rhs(w, ctx, t, q, v)) != MBS_OK)
            return s;
    }
    s = w->linsol == MBS_LINSOL_LU ? solve_lu(w, ctx, t, vdot) : solve_chol(w, ctx, t, vdot);
    if (s == MBS_OK && lambda)
        memcpy(lambda, w->lambda, w->nl * sizeof *lambda);
    return s;
}

int mbs_index1_rhs(mbs_index1 *w, mbs_ctx *ctx, double t, const double *y, double *dy)
{
    int s = mbs_qdot(ctx, y, y + w->nq, dy);
    if (s != MBS_OK)
        return s;
    return mbs_index1_accel(w, ctx, t, y, y + w->nq, dy + w->nq, NULL);
}

/* ---- the index-1 formulation as an acceleration evaluator ------------------ */

#include "../framework/dae_axis.h"
#include "../framework/ode_axis.h"

static const mbs_param_def index1_params[] = {MBS_INDEX1_LINSOL_PARAM};

static int accel_alloc(void **ws, mbs_ctx *ctx, const mbs_params *p)
{
    return mbs_index1_alloc((mbs_index1 **)ws, ctx, (int)p->val[0]);
}

static int accel_eval(void *ws, mbs_ctx *ctx, double t, const double *q, const double *v,
                      double *vdot, double *lambda)
{
    return mbs_index1_accel(ws, ctx, t, q, v, vdot, lambda);
}

static void accel_finish(void *ws, mbs_ctx *ctx)
{
    mbs_index1_report(ctx, ws);
}

static void accel_free(void *ws)
{
    mbs_index1_free(ws);
}

const mbs_accel_def mbs_accel_index1 = {
    .name = "index1",
    .alloc = accel_alloc,
    .eval = accel_eval,
    .finish = accel_finish,
    .free_ws = accel_free,
};

#define CITE "Arnold 2016 [arnold2016dae], Eqs. (83)-(84); Pennestri & Valentini [pennestri_coordinate_reduction], Eqs. (2)-(8)"
const mbs_ode_formulation mbs_ode_formulation_index1 = {
    .name = "index1",
    .accel = &mbs_accel_index1,
    .summary = "on the index-1 formulation",
    .citation = CITE,
    .flags = MBS_M_NEEDS_FULL_RANK,
    .lambda = 1,
    .params = index1_params,
    .n_params = sizeof index1_params / sizeof index1_params[0],
};

/* The index-1 formulation on the DAE axis: v' and lambda from the KKT solve,
 * integrated as the ODE (q, v)' = (H v, v') (Radau IIA) or as the residual of
 * the KKT system (IDA). */
const mbs_dae_formulation mbs_dae_formulation_index1 = {
    .name = "index1",
    .provides = MBS_DAE_ACCEL,
    .index = 1,
    .title = "the index-1 formulation (ODE in q, v)",
    .form = "the index-1 form",
    .eqs = "(83)-(84)",
    .params = MBS_PARAM_LIST(index1_params),
};
