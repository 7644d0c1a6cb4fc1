/* Sparse (CSC) Newton matrices of the SUNDIALS peers for SUNLinSol_KLU (see
 * peer_sundials_klu.h). */
#ifdef MBS_HAVE_SUNDIALS

#include "peer_sundials_klu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include "../../problems/triplets.h"
#include "../formulations/dae_form.h"

struct mbs_peer_csc {
    mbs_peer_csc_kind kind;
    size_t nq, nv, nl, n;
    mbs_triplets Mt, Bt;   /* M(q), B(q) of the last evaluation */
    mbs_triplets Bp;       /* B at a perturbed q (Hessian terms) */
    size_t *pat;           /* the pattern of M and B at the last build: rows, cols of M,
                              then of B */
    size_t pm, pb, patcap; /* entries of M and B in pat */
    int built;             /* the structures below describe the current pattern */
    int fresh;             /* no matrix yet in this run (KLU analyses the first anyway) */
    int *ti, *tj;          /* the matrix as triplets (walk order) */
    size_t tcap;
    mbs_csc P;             /* its CSC pattern and the triplet -> position map */
    /* Hessian terms (IDA kinds): the B triplets by constraint row (rp, re), the
     * distinct coordinates each row depends on (dp, dj), a colouring of the
     * coordinates in which no two of one colour share a row (color, ncolor),
     * the derivatives d B_e / d q_j for every triplet e of row k and j of row
     * k (hv, in that order) and, index-1 form, d gamma_k / d q_j, d gamma_k /
     * d v_j (gq, gv, in the order of dj) */
    size_t *rp, *re, *dp, *dj;
    int *color, ncolor;
    double *hv, *gq, *gv;
    double *qp, *vp, *g0, *g1, *dlt; /* perturbed q, v; gamma; steps (length n_q, n_l) */
    long analyses, factorizations, solves;
};

int mbs_peer_csc_check(mbs_ctx *ctx, const char *method)
{
    const mbs_problem *pb = ctx->pb;
    const mbs_problem_def *d = pb->def;
    const char *why = NULL;
    if (!d->mass_sparse || !d->jacobian_sparse)
        why = "has no triplet callbacks (mass_sparse, jacobian_sparse) to assemble the sparse "
              "Jacobian from";
    else if (d->kinematic)
        why = "has a kinematic matrix H(q) != I";
    else if (pb->flags & MBS_PB_EXTENDED)
        why = "has extra variables x (extended contract)";
    else if (pb->flags & MBS_PB_NONHOLONOMIC)
        why = "has non-holonomic constraints";
    if (!why)
        return MBS_OK;
    return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                    "%s: linsol=klu does not apply: %s %s (use linsol=lu)", method, d->name, why);
}

/* The structures of the Hessian terms (they depend on the pattern of B). */
static void hess_free(mbs_peer_csc *c)
{
    free(c->rp);
    free(c->re);
    free(c->dp);
    free(c->dj);
    free(c->color);
    free(c->hv);
    free(c->gq);
    free(c->gv);
    c->rp = c->re = c->dp = c->dj = NULL;
    c->color = NULL;
    c->hv = c->gq = c->gv = NULL;
    c->ncolor = 0;
}

void mbs_peer_csc_free(mbs_peer_csc *c)
{
    if (!c)
        return;
    mbs_triplets_free(&c->Mt);
    mbs_triplets_free(&c->Bt);
    mbs_triplets_free(&c->Bp);
    free(c->pat);
    free(c->ti);
    free(c->tj);
    mbs_csc_free(&c->P);
    hess_free(c);
    free(c->qp);
    free(c->vp);
    free(c->g0);
    free(c->g1);
    free(c->dlt);
    free(c);
}

int mbs_peer_csc_alloc(mbs_peer_csc **out, mbs_ctx *ctx, mbs_peer_csc_kind kind)
{
    const mbs_problem *pb = ctx->pb;
    *out = NULL;
    mbs_peer_csc *c = calloc(1, sizeof *c);
    if (!c)
        return MBS_NO_MEMORY;
    c->kind = kind;
    c->nq = pb->nq;
    c->nv = pb->nv;
    c->nl = pb->nl;
    c->n = c->nq + c->nv + (kind == MBS_PEER_CSC_ODE     ? 0
                            : kind == MBS_PEER_CSC_GGL ? 2 * c->nl
                                                       : c->nl);
    size_t nlc = c->nl ? c->nl : 1;
    c->qp = malloc(c->nq * sizeof(double));
    c->vp = malloc(c->nv * sizeof(double));
    c->dlt = malloc(c->nq * sizeof(double));
    c->g0 = malloc(nlc * sizeof(double));
    c->g1 = malloc(nlc * sizeof(double));
    if (!c->qp || !c->vp || !c->dlt || !c->g0 || !c->g1) {
        mbs_peer_csc_free(c);
        return MBS_NO_MEMORY;
    }
    *out = c;
    return MBS_OK;
}

size_t mbs_peer_csc_n(const mbs_peer_csc *c)
{
    return c->n;
}

size_t mbs_peer_csc_nnz_guess(const mbs_peer_csc *c)
{
    /* the fixed blocks plus a diagonal M and a few entries per constraint;
     * grown at the first build when the problem's triplets need more */
    return c->kind == MBS_PEER_CSC_ODE ? c->n + c->nq : 2 * c->nq + c->nv + 16 * c->nl;
}

/* Visit the entries of the matrix in one fixed order (peer_sundials_klu.h): with
 * ti, tj given record their positions, with x given add their values at
 * x[map[k]] (y, yp: the point of the Jacobian).  Returns the number of entries. */
static size_t walk(const mbs_peer_csc *c, double cj, const double *y, const double *yp, int *ti,
                   int *tj, double *x)
{
    const size_t nq = c->nq, nv = c->nv, nl = c->nl, ic = nq + nv;
    const int *map = c->P.map;
    size_t k = 0;
#define PUT(r, col, val)                                                                   \
    do {                                                                                   \
        if (ti) {                                                                          \
            ti[k] = (int)(r);                                                              \
            tj[k] = (int)(col);                                                            \
        }                                                                                  \
        if (x)                                                                             \
            x[map[k]] += (val);                                                            \
        k++;                                                                               \
    } while (0)
    if (c->kind == MBS_PEER_CSC_ODE) {
        for (size_t i = 0; i < c->n; i++)
            PUT(i, i, 0.0);
        for (size_t i = 0; i < nq; i++)
            PUT(i, nq + i, 1.0);
        return k;
    }
    for (size_t i = 0; i < nq; i++) {
        PUT(i, i, cj);
        PUT(i, nq + i, -1.0);
    }
    const mbs_triplets *M = &c->Mt, *B = &c->Bt;
    for (size_t e = 0; e < M->nnz; e++)
        PUT(nq + M->row[e], nq + M->col[e], cj * M->val[e]);
    for (size_t e = 0; e < B->nnz; e++) {
        size_t r = B->row[e], j = B->col[e];
        double b = B->val[e];
        PUT(nq + j, ic + r, b); /* B^T lambda in the v rows */
        switch (c->kind) {
        case MBS_PEER_CSC_INDEX1: /* B v' - gamma */
            PUT(ic + r, nq + j, cj * b);
            break;
        case MBS_PEER_CSC_INDEX2: /* -(B v + g_t) */
            PUT(ic + r, nq + j, -b);
            break;
        case MBS_PEER_CSC_GGL: /* -g, -(B v + g_t); G^T mu in the q rows (G = B) */
            PUT(ic + r, j, -b);
            PUT(ic + nl + r, nq + j, -b);
            PUT(j, ic + nl + r, b);
            break;
        case MBS_PEER_CSC_ODE:
            break;
        }
    }
    /* Hessian terms in the q columns: (B^T lambda)_q in the v rows, -(B v)_q
     * (index-1: (B v')_q - gamma_q, and -gamma_v in the v columns) in the
     * constraint rows, GGL also (G^T mu)_q in the q rows */
    const double *v = y ? y + nq : NULL, *lam = y ? y + ic : NULL;
    const double *mu = y && c->kind == MBS_PEER_CSC_GGL ? y + ic + nl : NULL;
    const double *w = c->kind == MBS_PEER_CSC_INDEX1 ? (yp ? yp + nq : NULL) : v;
    const double ws = c->kind == MBS_PEER_CSC_INDEX1 ? 1.0 : -1.0;
    const size_t rc = c->kind == MBS_PEER_CSC_GGL ? ic + nl : ic;
    size_t ph = 0;
    for (size_t r = 0; r < nl; r++)
        for (size_t a = c->rp[r]; a < c->rp[r + 1]; a++) {
            size_t e = c->re[a], ce = B->col[e];
            for (size_t d = c->dp[r]; d < c->dp[r + 1]; d++, ph++) {
                size_t j = c->dj[d];
                double hv = x ? c->hv[ph] : 0.0;
                PUT(nq + ce, j, x ? hv * lam[r] : 0.0);
                PUT(rc + r, j, x ? ws * hv * w[ce] : 0.0);
                if (mu)
                    PUT(ce, j, hv * mu[r]);
                else if (c->kind == MBS_PEER_CSC_GGL)
                    PUT(ce, j, 0.0);
            }
        }
    if (c->kind == MBS_PEER_CSC_INDEX1)
        for (size_t r = 0; r < nl; r++)
            for (size_t d = c->dp[r]; d < c->dp[r + 1]; d++) {
                PUT(ic + r, c->dj[d], x ? -c->gq[d] : 0.0);
                PUT(ic + r, nq + c->dj[d], x ? -c->gv[d] : 0.0);
            }
#undef PUT
    return k;
}

/* 1 when the triplet patterns of M and B are those of the last build. */
static int same_pattern(const mbs_peer_csc *c)
{
    if (!c->built || c->Mt.nnz != c->pm || c->Bt.nnz != c->pb)
        return 0;
    const size_t *p = c->pat;
    const mbs_triplets *T[2] = {&c->Mt, &c->Bt};
    for (int m = 0; m < 2; m++) {
        size_t nz = T[m]->nnz;
        if (nz && (memcmp(p, T[m]->row, nz * sizeof *p) != 0 ||
                   memcmp(p + nz, T[m]->col, nz * sizeof *p) != 0))
            return 0;
        p += 2 * nz;
    }
    return 1;
}

static int by_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The structures of the Hessian terms for the pattern of c->Bt: the triplets by
 * row, the distinct coordinates of each row, and a greedy colouring of the
 * coordinates (Curtis, Powell & Reid 1974 [curtis1974sparse]: coordinates that
 * share no constraint row are perturbed together, so each row's change under
 * one perturbation belongs to one coordinate). */
static int hess_build(mbs_peer_csc *c)
{
    hess_free(c);
    const mbs_triplets *B = &c->Bt;
    size_t nl = c->nl, nq = c->nq, nz = B->nnz;
    c->rp = calloc(nl + 1, sizeof *c->rp);
    c->re = malloc((nz ? nz : 1) * sizeof *c->re);
    c->dp = calloc(nl + 1, sizeof *c->dp);
    c->dj = malloc((nz ? nz : 1) * sizeof *c->dj);
    c->color = malloc((nq ? nq : 1) * sizeof *c->color);
    int *seen = malloc((nq ? nq : 1) * sizeof *seen);
    if (!c->rp || !c->re || !c->dp || !c->dj || !c->color || !seen) {
        free(seen);
        return MBS_NO_MEMORY;
    }
    for (size_t e = 0; e < nz; e++)
        c->rp[B->row[e] + 1]++;
    for (size_t r = 0; r < nl; r++)
        c->rp[r + 1] += c->rp[r];
    for (size_t e = 0; e < nz; e++) /* rp[r] runs to the end of row r, then back */
        c->re[c->rp[B->row[e]]++] = e;
    for (size_t r = nl; r > 0; r--)
        c->rp[r] = c->rp[r - 1];
    c->rp[0] = 0;
    /* distinct coordinates of each row, sorted */
    size_t nd = 0, npair = 0;
    for (size_t r = 0; r < nl; r++) {
        size_t d0 = nd;
        for (size_t a = c->rp[r]; a < c->rp[r + 1]; a++)
            c->dj[nd++] = B->col[c->re[a]];
        qsort(c->dj + d0, nd - d0, sizeof *c->dj, by_size);
        size_t u = d0;
        for (size_t d = d0; d < nd; d++)
            if (d == d0 || c->dj[d] != c->dj[u - 1])
                c->dj[u++] = c->dj[d];
        nd = u;
        c->dp[r + 1] = nd;
        npair += (c->rp[r + 1] - c->rp[r]) * (nd - d0);
    }
    /* greedy colouring: a coordinate takes the smallest colour none of the
     * coordinates sharing a row with it has (seen[k] = j + 1: colour k is
     * taken for coordinate j) */
    for (size_t j = 0; j < nq; j++) {
        c->color[j] = -1;
        seen[j] = 0;
    }
    size_t *rows = malloc((nz ? nz : 1) * sizeof *rows), *cp = calloc(nq + 1, sizeof *cp);
    int ok = rows && cp;
    if (ok) { /* the rows of each coordinate */
        for (size_t r = 0; r < nl; r++)
            for (size_t d = c->dp[r]; d < c->dp[r + 1]; d++)
                cp[c->dj[d] + 1]++;
        for (size_t j = 0; j < nq; j++)
            cp[j + 1] += cp[j];
        for (size_t r = 0; r < nl; r++)
            for (size_t d = c->dp[r]; d < c->dp[r + 1]; d++)
                rows[cp[c->dj[d]]++] = r;
        for (size_t j = nq; j > 0; j--)
            cp[j] = cp[j - 1];
        cp[0] = 0;
        for (size_t j = 0; j < nq; j++) {
            if (cp[j] == cp[j + 1])
                continue; /* in no constraint */
            for (size_t a = cp[j]; a < cp[j + 1]; a++) {
                size_t r = rows[a];
                for (size_t d = c->dp[r]; d < c->dp[r + 1]; d++)
                    if (c->color[c->dj[d]] >= 0)
                        seen[c->color[c->dj[d]]] = (int)j + 1;
            }
            int k = 0;
            while (seen[k] == (int)j + 1)
                k++;
            c->color[j] = k;
            if (k + 1 > c->ncolor)
                c->ncolor = k + 1;
        }
    }
    free(rows);
    free(cp);
    free(seen);
    if (!ok)
        return MBS_NO_MEMORY;
    c->hv = calloc(npair ? npair : 1, sizeof *c->hv);
    if (!c->hv)
        return MBS_NO_MEMORY;
    if (c->kind == MBS_PEER_CSC_INDEX1) {
        c->gq = calloc(nd ? nd : 1, sizeof *c->gq);
        c->gv = calloc(nd ? nd : 1, sizeof *c->gv);
        if (!c->gq || !c->gv)
            return MBS_NO_MEMORY;
    }
    return MBS_OK;
}

/* Record the pattern of M and B and build the CSC pattern of the matrix. */
static int build(mbs_peer_csc *c)
{
    size_t pm = c->Mt.nnz, pb = c->Bt.nnz, need = 2 * (pm + pb);
    int s;
    c->built = 0;
    if (need > c->patcap) {
        size_t *p = realloc(c->pat, need * sizeof *p);
        if (!p)
            return MBS_NO_MEMORY;
        c->pat = p;
        c->patcap = need;
    }
    if (pm) {
        memcpy(c->pat, c->Mt.row, pm * sizeof *c->pat);
        memcpy(c->pat + pm, c->Mt.col, pm * sizeof *c->pat);
    }
    if (pb) {
        memcpy(c->pat + 2 * pm, c->Bt.row, pb * sizeof *c->pat);
        memcpy(c->pat + 2 * pm + pb, c->Bt.col, pb * sizeof *c->pat);
    }
    c->pm = pm;
    c->pb = pb;
    if (c->kind != MBS_PEER_CSC_ODE && (s = hess_build(c)) != MBS_OK)
        return s;
    size_t nt = walk(c, 0.0, NULL, NULL, NULL, NULL, NULL);
    if (nt > c->tcap) {
        int *a = realloc(c->ti, nt * sizeof *a);
        if (!a)
            return MBS_NO_MEMORY;
        c->ti = a;
        if (!(a = realloc(c->tj, nt * sizeof *a)))
            return MBS_NO_MEMORY;
        c->tj = a;
        c->tcap = nt;
    }
    walk(c, 0.0, NULL, NULL, c->ti, c->tj, NULL);
    if (mbs_csc_build(&c->P, c->n, c->n, nt, c->ti, c->tj) != 0)
        return MBS_NO_MEMORY;
    c->built = 1;
    return MBS_OK;
}

/* The Hessian terms by forward differences of B (and, index-1 form, gamma)
 * over the colours: d B_e / d q_j for the coordinate j of colour k in the row
 * of e is (B_e(q + sum_{colour k} delta_j e_j) - B_e(q)) / delta_j (problem.h
 * gives these derivatives only as dense matrices, gtlambda_q and gw_q). */
static int hess_eval(mbs_peer_csc *c, mbs_ctx *ctx, double t, const double *y)
{
    const size_t nq = c->nq, nv = c->nv, nl = c->nl;
    const double *q = y, *v = y + nq;
    const mbs_triplets *B = &c->Bt;
    int idx1 = c->kind == MBS_PEER_CSC_INDEX1, s;
    if (idx1 && (s = mbs_gamma(ctx, t, q, v, c->g0)) != MBS_OK)
        return s;
    for (int k = 0; k < c->ncolor; k++) {
        memcpy(c->qp, q, nq * sizeof(double));
        for (size_t j = 0; j < nq; j++)
            if (c->color[j] == k) {
                c->qp[j] = q[j] + mbs_dae_form_fd_step(q[j]);
                c->dlt[j] = c->qp[j] - q[j];
            }
        c->Bp.nnz = 0;
        if ((s = mbs_jacobian_sparse(ctx, t, c->qp, &c->Bp)) != MBS_OK)
            return s;
        if (c->Bp.nnz != B->nnz ||
            (B->nnz && (memcmp(c->Bp.row, B->row, B->nnz * sizeof *B->row) != 0 ||
                        memcmp(c->Bp.col, B->col, B->nnz * sizeof *B->col) != 0)))
            return mbs_fail(ctx, MBS_UNSUPPORTED, t,
                            "linsol=klu: jacobian_sparse of %s gave another pattern at a "
                            "perturbed q (triplets must be structural, linsol.h)",
                            ctx->pb->def->name);
        size_t ph = 0;
        for (size_t r = 0; r < nl; r++)
            for (size_t a = c->rp[r]; a < c->rp[r + 1]; a++) {
                size_t e = c->re[a];
                for (size_t d = c->dp[r]; d < c->dp[r + 1]; d++, ph++)
                    if (c->color[c->dj[d]] == k)
                        c->hv[ph] = (c->Bp.val[e] - B->val[e]) / c->dlt[c->dj[d]];
            }
        if (!idx1)
            continue;
        /* gamma_q with the same perturbation, gamma_v with it in v (H = I: the
         * rows of gamma depend on the coordinates and velocities of their
         * constraint) */
        if ((s = mbs_gamma(ctx, t, c->qp, v, c->g1)) != MBS_OK)
            return s;
        for (size_t r = 0; r < nl; r++)
            for (size_t d = c->dp[r]; d < c->dp[r + 1]; d++)
                if (c->color[c->dj[d]] == k)
                    c->gq[d] = (c->g1[r] - c->g0[r]) / c->dlt[c->dj[d]];
        memcpy(c->vp, v, nv * sizeof(double));
        for (size_t j = 0; j < nq; j++)
            if (c->color[j] == k) {
                c->vp[j] = v[j] + mbs_dae_form_fd_step(v[j]);
                c->dlt[j] = c->vp[j] - v[j];
            }
        if ((s = mbs_gamma(ctx, t, q, c->vp, c->g1)) != MBS_OK)
            return s;
        for (size_t r = 0; r < nl; r++)
            for (size_t d = c->dp[r]; d < c->dp[r + 1]; d++)
                if (c->color[c->dj[d]] == k)
                    c->gv[d] = (c->g1[r] - c->g0[r]) / c->dlt[c->dj[d]];
    }
    return MBS_OK;
}

int mbs_peer_csc_fill(mbs_peer_csc *c, mbs_ctx *ctx, double t, const double *y,
                      const double *yp, double cj, SUNMatrix A, SUNLinearSolver LS)
{
    int s;
    mbs_count_jacobian(ctx);
    if (c->kind != MBS_PEER_CSC_ODE) {
        c->Mt.nnz = 0;
        if ((s = mbs_mass_sparse(ctx, t, y, &c->Mt)) != MBS_OK)
            return s;
        c->Bt.nnz = 0;
        if (c->nl > 0 && (s = mbs_jacobian_sparse(ctx, t, y, &c->Bt)) != MBS_OK)
            return s;
    }
    if (!same_pattern(c)) {
        int first = c->P.p == NULL;
        if ((s = build(c)) != MBS_OK)
            return s;
        sunindextype nnz = (sunindextype)c->P.nnz;
        if (SUNSparseMatrix_NNZ(A) < nnz && SUNSparseMatrix_Reallocate(A, nnz) != 0)
            return MBS_NO_MEMORY;
        if (!first && !c->fresh) { /* a new pattern: KLU's symbolic analysis is stale */
            if (SUNLinSol_KLUReInit(LS, A, nnz, SUNKLU_REINIT_PARTIAL) != 0)
                return mbs_fail(ctx, MBS_LIBRARY_FAILURE, t, "SUNLinSol_KLUReInit failed");
            c->analyses++;
        }
    }
    c->fresh = 0;
    if (c->kind != MBS_PEER_CSC_ODE && c->nl > 0 && (s = hess_eval(c, ctx, t, y)) != MBS_OK)
        return s;
    /* SUNDIALS zeroes the whole matrix (pattern included) before calling the
     * Jacobian function: write the pattern every time */
    sunindextype *cp = SUNSparseMatrix_IndexPointers(A), *ri = SUNSparseMatrix_IndexValues(A);
    double *x = SUNSparseMatrix_Data(A);
    for (size_t j = 0; j <= c->n; j++)
        cp[j] = c->P.p[j];
    for (size_t e = 0; e < c->P.nnz; e++)
        ri[e] = c->P.i[e];
    memset(x, 0, c->P.nnz * sizeof *x);
    walk(c, cj, y, yp, NULL, NULL, x);
    return MBS_OK;
}

int mbs_peer_csc_index1_residual(mbs_peer_csc *c, mbs_ctx *ctx, double t, const double *y,
                                 const double *yp, double *r)
{
    const size_t nq = c->nq, nv = c->nv, nl = c->nl, ic = nq + nv;
    const double *q = y, *v = y + nq, *lam = y + ic, *vp = yp + nq;
    double *rv = r + nq, *rc = r + ic;
    int s;
    if ((s = mbs_force(ctx, t, q, v, rv)) != MBS_OK)
        return s;
    c->Mt.nnz = 0;
    if ((s = mbs_mass_sparse(ctx, t, q, &c->Mt)) != MBS_OK)
        return s;
    if (nl > 0) {
        c->Bt.nnz = 0;
        if ((s = mbs_jacobian_sparse(ctx, t, q, &c->Bt)) != MBS_OK ||
            (s = mbs_gamma(ctx, t, q, v, rc)) != MBS_OK)
            return s;
    }
    for (size_t i = 0; i < nq; i++) /* H = I (mbs_peer_csc_check) */
        r[i] = yp[i] - v[i];
    for (size_t i = 0; i < nv; i++)
        rv[i] = -rv[i];
    for (size_t i = 0; i < nl; i++)
        rc[i] = -rc[i];
    const mbs_triplets *M = &c->Mt, *B = &c->Bt;
    for (size_t e = 0; e < M->nnz; e++)
        rv[M->row[e]] += M->val[e] * vp[M->col[e]];
    for (size_t e = 0; e < B->nnz; e++) {
        rv[B->col[e]] += B->val[e] * lam[B->row[e]];
        rc[B->row[e]] += B->val[e] * vp[B->col[e]];
    }
    return MBS_OK;
}

void mbs_peer_csc_new_run(mbs_peer_csc *c)
{
    c->analyses++;
    c->fresh = 1;
}

void mbs_peer_csc_end_run(mbs_peer_csc *c, SUNLinearSolver LS, long setups, long solves,
                          mbs_linsol_stats *st)
{
    c->factorizations += setups;
    c->solves += solves;
    memset(st, 0, sizeof *st);
    st->analyses = c->analyses;
    st->factorizations = c->factorizations;
    st->solves = c->solves;
    st->n = c->n;
    st->nnz = c->P.nnz;
    st->rcond = NAN;
    sun_klu_symbolic *sym = SUNLinSol_KLUGetSymbolic(LS);
    sun_klu_numeric *num = SUNLinSol_KLUGetNumeric(LS);
    sun_klu_common *com = SUNLinSol_KLUGetCommon(LS);
    if (sym && num && com) {
        st->nnz_factor = (size_t)(num->lnz + num->unz + num->nzoff);
        st->fill = st->nnz ? (double)st->nnz_factor / (double)st->nnz : NAN;
        if (sun_klu_rcond(sym, num, com))
            st->rcond = com->rcond;
    }
}

#else
/* Without SUNDIALS this file defines nothing (ISO C needs a declaration). */
typedef int mbs_peer_sundials_klu_absent;
#endif
