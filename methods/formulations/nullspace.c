/* Null-space formulations qr, putd, zeroeig, svd, schur ([pennestri_coordinate_reduction], Sects. 5,
 * 7.3-7.6 and the appendix code); see nullspace.h.
 *
 * At every evaluation (as in the appendix code, V is recomputed each time):
 *  1. a decomposition of B (or B^T, B^T B) gives an orthogonal W = [Y | V] with
 *     V spanning ker B (Eqs. (62), (67), (70), (74), (79)) and the rank r;
 *  2. the particular solution x_p = [S]{gamma} of Eqs. (33)/(65)/(76), i.e. the
 *     x with B x = gamma and V^T x = 0: x_p = Y z with (B Y) z = gamma, solved by
 *     a GSL QR of the n_lambda x r matrix B Y (least squares, exact for the
 *     consistent right-hand sides of redundant constraints; the appendix inverts
 *     the square [B; V^T] instead, which exists only for full rank);
 *  3. (V^T M V) a = V^T (f - M x_p) by Cholesky (Eqs. (64), (77)), v' = x_p + V a;
 *  4. the multipliers from the first block row M v' + B^T lambda = f: the
 *     minimum-norm solution lambda = Q [R^-T Y^T (f - M v'); 0] with the same QR
 *     B Y = Q R (for redundant constraints only B^T lambda is determined). */
#include "../../core/gslalloc.h"
#include "nullspace.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t mbs_ns_rank(const double *s, size_t n, double rank_tol)
{
    double smax = 0.0;
    for (size_t i = 0; i < n; i++)
        smax = fmax(smax, fabs(s[i]));
    size_t r = 0;
    for (size_t i = 0; i < n; i++)
        if (smax > 0.0 && fabs(s[i]) > rank_tol * smax)
            r++;
    return r;
}

size_t mbs_ns_rank_capped(const double *s, size_t n, double rank_tol, size_t cap)
{
    size_t r = mbs_ns_rank(s, n, rank_tol);
    return r < cap ? r : cap;
}

void mbs_ns_diag_reset(mbs_ns_diag *d)
{
    memset(d, 0, sizeof *d);
    d->rank_min = (size_t)-1;
    d->cond_last = NAN;
}

void mbs_ns_diag_note(mbs_ns_diag *d, size_t rank, double cond)
{
    d->evals++;
    if (rank < d->rank_min)
        d->rank_min = rank;
    if (rank > d->rank_max)
        d->rank_max = rank;
    d->rank_last = rank;
    d->cond_last = cond;
    if (cond > d->cond_max)
        d->cond_max = cond;
}

/* ---- bases ------------------------------------------------------------------ */

typedef struct basis_ws {
    size_t n, m, nmax;        /* B is m x n */
    gsl_matrix *A, *A2;       /* nmax x nmax work */
    gsl_matrix *R;            /* n x m (QR unpack) */
    gsl_matrix *W;            /* n x n result [Y | V] */
    gsl_vector *tau, *s, *work, *norm;
    gsl_permutation *perm;
    gsl_eigen_symmv_workspace *esym;
    gsl_eigen_nonsymm_workspace *ens;
    gsl_vector_complex *ceval;
} basis_ws;

static void basis_free(basis_ws *b)
{
    gsl_matrix_free(b->A);
    gsl_matrix_free(b->A2);
    gsl_matrix_free(b->R);
    gsl_matrix_free(b->W);
    gsl_vector_free(b->tau);
    gsl_vector_free(b->s);
    gsl_vector_free(b->work);
    gsl_vector_free(b->norm);
    gsl_permutation_free(b->perm);
    if (b->esym)
        gsl_eigen_symmv_free(b->esym);
    if (b->ens)
        gsl_eigen_nonsymm_free(b->ens);
    gsl_vector_complex_free(b->ceval);
    memset(b, 0, sizeof *b);
}

static int basis_alloc(basis_ws *b, mbs_ns_kind kind, size_t n, size_t m)
{
    memset(b, 0, sizeof *b);
    size_t mc = m ? m : 1, nmax = n > mc ? n : mc, mn = n < mc ? n : mc;
    b->n = n;
    b->m = m;
    b->nmax = nmax;
    b->A = mbs_matrix_alloc(nmax, nmax);
    b->A2 = mbs_matrix_alloc(nmax, nmax);
    b->W = mbs_matrix_alloc(n, n);
    b->s = gsl_vector_alloc(nmax);
    b->work = gsl_vector_alloc(nmax);
    int ok = b->A && b->A2 && b->W && b->s && b->work;
    switch (kind) {
    case MBS_NS_QR:
    case MBS_NS_PUTD:
        b->R = mbs_matrix_alloc(n, mc);
        b->tau = gsl_vector_alloc(mn);
        b->norm = gsl_vector_alloc(mc);
        b->perm = gsl_permutation_alloc(mc);
        ok = ok && b->R && b->tau && b->norm && b->perm;
        break;
    case MBS_NS_ZEROEIG:
        ok = ok && (b->esym = mbs_eigen_symmv_alloc(n));
        break;
    case MBS_NS_SCHUR:
        ok = ok && (b->ens = gsl_eigen_nonsymm_alloc(n)) && (b->ceval = gsl_vector_complex_alloc(n));
        if (ok) /* T wanted (its diagonal), no balancing: Z stays orthogonal */
            gsl_eigen_nonsymm_params(1, 0, b->ens);
        break;
    case MBS_NS_SVD:
        break;
    }
    if (!ok) {
        basis_free(b);
        return MBS_NO_MEMORY;
    }
    return MBS_OK;
}

/* Whether s[i] is among the r largest of s[0..n-1] (ties by index). */
static int among_largest(const double *s, size_t n, size_t i, size_t r)
{
    size_t above = 0;
    for (size_t j = 0; j < n; j++)
        if (s[j] > s[i] || (s[j] == s[i] && j < i))
            above++;
    return above < r;
}

/* W = [Y | V] for B (m x n, m = b->m); rank into *rank, at most rank_cap. */
static int basis_compute(basis_ws *b, mbs_ns_kind kind, const gsl_matrix *B, double rank_tol,
                         size_t rank_cap, size_t *rank, char *why, size_t whylen)
{
    size_t n = b->n, m = b->m, mn = n < m ? n : m;
    *rank = 0;
    if (m == 0) {
        gsl_matrix_set_identity(b->W);
        return MBS_OK;
    }
    double *s = b->s->data;
    switch (kind) {
    case MBS_NS_QR:
    case MBS_NS_PUTD: {
        /* Eq. (58): B^T = [Q1 Q2] [R1; 0]; QR pivots columns of B^T (constraints)
         * so that |R_ii| decreases and reveals the rank. */
        gsl_matrix_view A = gsl_matrix_submatrix(b->A, 0, 0, n, m);
        gsl_matrix_transpose_memcpy(&A.matrix, B);
        int sig, st;
        if (kind == MBS_NS_QR)
            st = gsl_linalg_QRPT_decomp(&A.matrix, b->tau, b->perm, &sig, b->norm);
        else
            st = gsl_linalg_QR_decomp(&A.matrix, b->tau);
        if (st != GSL_SUCCESS) {
            snprintf(why, whylen, "GSL QR of B^T failed (%s)", gsl_strerror(st));
            return MBS_LIBRARY_FAILURE;
        }
        for (size_t i = 0; i < mn; i++)
            s[i] = fabs(gsl_matrix_get(&A.matrix, i, i));
        /* pivoted: |R_ii| decrease, so capping the rank moves the split only */
        *rank = mbs_ns_rank_capped(s, mn, rank_tol, rank_cap);
        if (kind == MBS_NS_PUTD && (*rank < m)) {
            /* No pivoting: |R_ii| does not reveal a deficient rank reliably,
             * and Eq. (67) takes r = m. */
            snprintf(why, whylen,
                     "putd: rank-deficient constraint Jacobian (rank %zu < %zu constraints; "
                     "unpivoted Householder needs full rank)",
                     *rank, m);
            return MBS_SINGULAR_MATRIX;
        }
        /* W = H, the product of the Householder reflections (Q of the QR);
         * putd's V = H D2^T (Eqs. (66)-(67)) = its last n - r columns. */
        gsl_matrix_view R = gsl_matrix_submatrix(b->R, 0, 0, n, m);
        if ((st = gsl_linalg_QR_unpack(&A.matrix, b->tau, b->W, &R.matrix)) != GSL_SUCCESS) {
            snprintf(why, whylen, "GSL QR unpack failed (%s)", gsl_strerror(st));
            return MBS_LIBRARY_FAILURE;
        }
        return MBS_OK;
    }
    case MBS_NS_ZEROEIG:
    case MBS_NS_SCHUR: {
        /* Eq. (68): H = B^T B (n x n, symmetric positive semidefinite). */
        gsl_matrix_view A = gsl_matrix_submatrix(b->A, 0, 0, n, n);
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, B, B, 0.0, &A.matrix);
        if (kind == MBS_NS_ZEROEIG) {
            /* Eq. (69): T^T H T = Lambda; sorted so that the zero eigenvalues come
             * last (the paper's T1 of Eq. (70), put after T2 here). */
            gsl_vector_view ev = gsl_vector_subvector(b->s, 0, n);
            int st = gsl_eigen_symmv(&A.matrix, &ev.vector, b->W, b->esym);
            if (st == GSL_SUCCESS)
                st = gsl_eigen_symmv_sort(&ev.vector, b->W, GSL_EIGEN_SORT_VAL_DESC);
            if (st != GSL_SUCCESS) {
                snprintf(why, whylen, "GSL symmetric eigensolver failed (%s)",
                         gsl_strerror(st));
                return MBS_LIBRARY_FAILURE;
            }
            /* singular values of B: sqrt of the eigenvalues (rounding may make
             * zero eigenvalues slightly negative). */
            for (size_t i = 0; i < n; i++)
                s[i] = sqrt(fmax(s[i], 0.0));
            *rank = mbs_ns_rank_capped(s, n, rank_tol, rank_cap); /* sorted: the split moves */
            return MBS_OK;
        }
        /* Eq. (78): K^T H K = U, GSL's Francis QR for nonsymmetric matrices with
         * the Schur vectors Z = K.  H is symmetric here, so its real Schur form is
         * diagonal up to rounding (off-diagonal ~ eps |H|) and every Schur vector
         * is an eigenvector: the method coincides with the zero-eigenvalue method
         * computed by a nonsymmetric algorithm, and selecting the columns of Z
         * whose diagonal entries of U vanish needs no reordering of the Schur form
         * (for a general matrix that would need LAPACK's dtrsen, absent in GSL). */
        gsl_matrix_view Z = gsl_matrix_submatrix(b->A2, 0, 0, n, n);
        int st = gsl_eigen_nonsymm_Z(&A.matrix, b->ceval, &Z.matrix, b->ens);
        if (st != GSL_SUCCESS) {
            snprintf(why, whylen, "GSL nonsymmetric Schur decomposition failed (%s)",
                     gsl_strerror(st));
            return MBS_LIBRARY_FAILURE;
        }
        for (size_t i = 0; i < n; i++)
            s[i] = sqrt(fabs(gsl_matrix_get(&A.matrix, i, i)));
        double smax = 0.0;
        for (size_t i = 0; i < n; i++)
            smax = fmax(smax, s[i]);
        *rank = mbs_ns_rank(s, n, rank_tol);
        int capped = *rank > rank_cap;
        if (capped)
            *rank = rank_cap;
        /* Y: columns with non-zero diagonal (the rank_cap largest when capped),
         * then V (K1 of Eq. (79)), in order. */
        size_t k = 0;
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = 0; i < n; i++) {
                int nonzero = smax > 0.0 && s[i] > rank_tol * smax &&
                              (!capped || among_largest(s, n, i, *rank));
                if (nonzero == (pass == 0)) {
                    gsl_vector_view src = gsl_matrix_column(&Z.matrix, i);
                    gsl_matrix_set_col(b->W, k++, &src.vector);
                }
            }
        return MBS_OK;
    }
    case MBS_NS_SVD: {
        /* Eq. (72): B^T = [W_d W_i] [Lambda_1; 0] U^T.  GSL's SVD (one-sided,
         * rows >= columns) returns the thin factor; to get the full n x n left
         * factor of B^T we decompose B^T padded with zero columns to n x n
         * (m <= n), or B itself (m > n), whose right factor is n x n. */
        int st;
        gsl_vector_view sv = gsl_vector_subvector(b->s, 0, n);
        gsl_vector_view wk = gsl_vector_subvector(b->work, 0, n);
        gsl_matrix_view V2 = gsl_matrix_submatrix(b->A2, 0, 0, n, n);
        if (m <= n) {
            gsl_matrix_view A = gsl_matrix_submatrix(b->A, 0, 0, n, n);
            gsl_matrix_set_zero(&A.matrix);
            gsl_matrix_view Am = gsl_matrix_submatrix(b->A, 0, 0, n, m);
            gsl_matrix_transpose_memcpy(&Am.matrix, B);
            st = gsl_linalg_SV_decomp(&A.matrix, &V2.matrix, &sv.vector, &wk.vector);
            if (st == GSL_SUCCESS)
                gsl_matrix_memcpy(b->W, &A.matrix);
        } else {
            gsl_matrix_view A = gsl_matrix_submatrix(b->A, 0, 0, m, n);
            gsl_matrix_memcpy(&A.matrix, B);
            st = gsl_linalg_SV_decomp(&A.matrix, &V2.matrix, &sv.vector, &wk.vector);
            if (st == GSL_SUCCESS)
                gsl_matrix_memcpy(b->W, &V2.matrix);
        }
        if (st != GSL_SUCCESS) {
            snprintf(why, whylen, "GSL SVD failed (%s)", gsl_strerror(st));
            return MBS_LIBRARY_FAILURE;
        }
        /* singular values are sorted decreasingly: W = [W_d | W_i] */
        *rank = mbs_ns_rank_capped(s, n, rank_tol, rank_cap);
        return MBS_OK;
    }
    }
    return MBS_BAD_INPUT;
}

int mbs_ns_basis(mbs_ns_kind kind, const gsl_matrix *B, double rank_tol, gsl_matrix *W,
                 size_t *rank)
{
    basis_ws b;
    char why[256];
    if (W->size1 != B->size2 || W->size2 != B->size2)
        return MBS_BAD_INPUT;
    int s = basis_alloc(&b, kind, B->size2, B->size1);
    if (s != MBS_OK)
        return s;
    s = basis_compute(&b, kind, B, rank_tol, (size_t)-1, rank, why, sizeof why);
    if (s == MBS_OK)
        gsl_matrix_memcpy(W, b.W);
    basis_free(&b);
    return s;
}

/* ---- the accelerations ------------------------------------------------------ */

typedef struct ns_ws {
    mbs_ns_diag diag; /* first member: read by mbs_ns_diag_get */
    mbs_ns_kind kind;
    double rank_tol;
    size_t rank0; /* rank at the run's first evaluation (t0, q0); (size_t)-1 before it */
    size_t nv, nl;
    basis_ws b;
    gsl_matrix *M, *B;   /* nv x nv, nl x nv */
    gsl_matrix *C;       /* nl x nv: B Y and its QR */
    gsl_vector *ctau;    /* nv */
    gsl_matrix *MV, *Mh; /* nv x nv work (M V, V^T M V) */
    gsl_vector *res;     /* nl: least-squares residual */
    gsl_vector *rcw;     /* 3 nv: rcond work */
    double *f, *gam, *xp, *z, *rhs, *a, *r, *lam;
} ns_ws;

static void ns_free(void *p)
{
    ns_ws *w = p;
    if (!w)
        return;
    basis_free(&w->b);
    gsl_matrix_free(w->M);
    gsl_matrix_free(w->B);
    gsl_matrix_free(w->C);
    gsl_vector_free(w->ctau);
    gsl_matrix_free(w->MV);
    gsl_matrix_free(w->Mh);
    gsl_vector_free(w->res);
    gsl_vector_free(w->rcw);
    free(w->f);
    free(w->gam);
    free(w->xp);
    free(w->z);
    free(w->rhs);
    free(w->a);
    free(w->r);
    free(w->lam);
    free(w);
}

static int ns_alloc(void **out, mbs_ctx *ctx, const mbs_params *p, mbs_ns_kind kind)
{
    const mbs_problem *pb = ctx->pb;
    *out = NULL;
    if (kind == MBS_NS_PUTD && (pb->flags & MBS_PB_REDUNDANT))
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "putd needs full-rank constraints (%s is redundant); use qr, svd, "
                        "zeroeig, schur or uk",
                        pb->def->name);
    if (pb->flags & MBS_PB_SINGULAR_MASS)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "null-space methods need a positive definite mass matrix here "
                        "(Cholesky of M in the multiplier-free form)");
    ns_ws *w = calloc(1, sizeof *w);
    if (!w)
        return MBS_NO_MEMORY;
    size_t nv = pb->nv, nl = pb->nl, nlc = nl ? nl : 1;
    w->kind = kind;
    w->rank_tol = p->val[0];
    w->rank0 = (size_t)-1;
    w->nv = nv;
    w->nl = nl;
    int s = basis_alloc(&w->b, kind, nv, nl);
    if (s != MBS_OK) {
        free(w);
        return s;
    }
    w->M = mbs_matrix_alloc(nv, nv);
    w->B = mbs_matrix_alloc(nlc, nv);
    w->C = mbs_matrix_alloc(nlc, nv);
    w->ctau = gsl_vector_alloc(nv);
    w->MV = mbs_matrix_alloc(nv, nv);
    w->Mh = mbs_matrix_alloc(nv, nv);
    w->res = gsl_vector_alloc(nlc);
    w->rcw = gsl_vector_alloc(3 * nv);
    w->f = malloc(nv * sizeof(double));
    w->gam = calloc(nlc, sizeof(double));
    w->xp = malloc(nv * sizeof(double));
    w->z = malloc(nv * sizeof(double));
    w->rhs = malloc(nv * sizeof(double));
    w->a = malloc(nv * sizeof(double));
    w->r = malloc(nv * sizeof(double));
    w->lam = calloc(nlc, sizeof(double));
    if (!(w->M && w->B && w->C && w->ctau && w->MV && w->Mh && w->res && w->rcw && w->f &&
          w->gam && w->xp && w->z && w->rhs && w->a && w->r && w->lam)) {
        ns_free(w);
        return MBS_NO_MEMORY;
    }
    mbs_ns_diag_reset(&w->diag);
    *out = w;
    return MBS_OK;
}

static int ns_start(void *p, mbs_ctx *ctx, double t0, const double *q, const double *v)
{
    (void)ctx, (void)t0, (void)q, (void)v;
    mbs_ns_diag_reset(&((ns_ws *)p)->diag);
    ((ns_ws *)p)->rank0 = (size_t)-1;
    return MBS_OK;
}

static int ns_eval(void *p, mbs_ctx *ctx, double t, const double *q, const double *v,
                   double *vdot, double *lambda)
{
    ns_ws *w = p;
    size_t nv = w->nv, nl = w->nl, r = 0;
    int s;
    if ((s = mbs_mass(ctx, t, q, w->M)) != MBS_OK ||
        (s = mbs_force(ctx, t, q, v, w->f)) != MBS_OK)
        return s;
    gsl_matrix_view B = gsl_matrix_submatrix(w->B, 0, 0, nl ? nl : 1, nv);
    if (nl > 0 && ((s = mbs_constraint_jacobian(ctx, t, q, &B.matrix)) != MBS_OK ||
                   (s = mbs_gamma(ctx, t, q, v, w->gam)) != MBS_OK))
        return s;
    char why[200];
    mbs_count_factorization(ctx);
    /* The rank never rises above its value at the first evaluation (t0, q0, on
     * the constraints): off them (the drift of an unprojected integration) a
     * redundant row's singular value grows with the violation (Weyl: by at most
     * |B(q) - B(q*)| = O(|q - q*|)), and counting it locks a mobile mechanism
     * (bricard, one redundant row: svd/rkf45 at tol 1e-6 had |g| up to 1.7e-5,
     * rank 24 instead of 23 at part of its evaluations, 479 of 1044 steps
     * rejected and q 0.1 off).  A rank that falls (a singular configuration)
     * is still taken as found. */
    if ((s = basis_compute(&w->b, w->kind, &B.matrix, w->rank_tol, w->rank0, &r, why,
                           sizeof why)) != MBS_OK)
        return mbs_fail(ctx, s, t, "%s", why);
    if (w->rank0 == (size_t)-1)
        w->rank0 = r;
    size_t F = nv - r;
    gsl_vector_view xp = gsl_vector_view_array(w->xp, nv);
    gsl_vector_view f = gsl_vector_view_array(w->f, nv);
    gsl_vector_set_zero(&xp.vector);
    if (r > 0) {
        /* x_p = Y z, (B Y) z = gamma (Eq. (65)) */
        gsl_matrix_const_view Y = gsl_matrix_const_submatrix(w->b.W, 0, 0, nv, r);
        gsl_matrix_view C = gsl_matrix_submatrix(w->C, 0, 0, nl, r);
        gsl_vector_view tau = gsl_vector_subvector(w->ctau, 0, r);
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &B.matrix, &Y.matrix, 0.0, &C.matrix);
        mbs_count_factorization(ctx);
        if (gsl_linalg_QR_decomp(&C.matrix, &tau.vector) != GSL_SUCCESS)
            return mbs_fail(ctx, MBS_LIBRARY_FAILURE, t, "GSL QR of B Y failed");
        for (size_t i = 0; i < r; i++)
            if (gsl_matrix_get(&C.matrix, i, i) == 0.0)
                return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "B Y singular (rank %zu)", r);
        gsl_vector_view gam = gsl_vector_view_array(w->gam, nl);
        gsl_vector_view z = gsl_vector_view_array(w->z, r);
        gsl_vector_view res = gsl_vector_subvector(w->res, 0, nl);
        mbs_count_solve(ctx);
        if (gsl_linalg_QR_lssolve(&C.matrix, &tau.vector, &gam.vector, &z.vector,
                                  &res.vector) != GSL_SUCCESS)
            return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "least squares B Y z = gamma failed");
        gsl_blas_dgemv(CblasNoTrans, 1.0, &Y.matrix, &z.vector, 0.0, &xp.vector);
    }
    gsl_vector_view vd = gsl_vector_view_array(vdot, nv);
    gsl_vector_memcpy(&vd.vector, &xp.vector);
    double cond = 1.0;
    if (F > 0) {
        /* (V^T M V) a = V^T (f - M x_p)   (Eqs. (17), (64), (77)) */
        gsl_matrix_const_view V = gsl_matrix_const_submatrix(w->b.W, 0, r, nv, F);
        gsl_matrix_view MV = gsl_matrix_submatrix(w->MV, 0, 0, nv, F);
        gsl_matrix_view Mh = gsl_matrix_submatrix(w->Mh, 0, 0, F, F);
        gsl_vector_view rr = gsl_vector_view_array(w->r, nv);
        gsl_vector_view rhs = gsl_vector_view_array(w->rhs, F);
        gsl_vector_view a = gsl_vector_view_array(w->a, F);
        gsl_vector_view rcw = gsl_vector_subvector(w->rcw, 0, 3 * F);
        gsl_blas_dsymm(CblasLeft, CblasUpper, 1.0, w->M, &V.matrix, 0.0, &MV.matrix);
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &V.matrix, &MV.matrix, 0.0, &Mh.matrix);
        gsl_vector_memcpy(&rr.vector, &f.vector);
        gsl_blas_dsymv(CblasUpper, -1.0, w->M, &xp.vector, 1.0, &rr.vector);
        gsl_blas_dgemv(CblasTrans, 1.0, &V.matrix, &rr.vector, 0.0, &rhs.vector);
        mbs_count_factorization(ctx);
        if (gsl_linalg_cholesky_decomp1(&Mh.matrix) != GSL_SUCCESS)
            return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                            "reduced mass matrix V^T M V not positive definite");
        double rc;
        if (gsl_linalg_cholesky_rcond(&Mh.matrix, &rc, &rcw.vector) == GSL_SUCCESS && rc > 0)
            cond = 1.0 / rc;
        else
            cond = INFINITY;
        mbs_count_solve(ctx);
        gsl_linalg_cholesky_solve(&Mh.matrix, &rhs.vector, &a.vector);
        gsl_blas_dgemv(CblasNoTrans, 1.0, &V.matrix, &a.vector, 1.0, &vd.vector);
    }
    mbs_ns_diag_note(&w->diag, r, cond);
    if (lambda && nl > 0) {
        /* M v' + B^T lambda = f: lambda = Q [R^-T Y^T (f - M v'); 0] (min-norm) */
        gsl_vector_view lam = gsl_vector_view_array(lambda, nl);
        gsl_vector_set_zero(&lam.vector);
        if (r > 0) {
            gsl_matrix_const_view Y = gsl_matrix_const_submatrix(w->b.W, 0, 0, nv, r);
            gsl_matrix_view C = gsl_matrix_submatrix(w->C, 0, 0, nl, r);
            gsl_matrix_view R = gsl_matrix_submatrix(w->C, 0, 0, r, r);
            gsl_vector_view tau = gsl_vector_subvector(w->ctau, 0, r);
            gsl_vector_view rr = gsl_vector_view_array(w->r, nv);
            gsl_vector_view l1 = gsl_vector_subvector(&lam.vector, 0, r);
            gsl_vector_memcpy(&rr.vector, &f.vector);
            gsl_blas_dsymv(CblasUpper, -1.0, w->M, &vd.vector, 1.0, &rr.vector);
            gsl_blas_dgemv(CblasTrans, 1.0, &Y.matrix, &rr.vector, 0.0, &l1.vector);
            gsl_blas_dtrsv(CblasUpper, CblasTrans, CblasNonUnit, &R.matrix, &l1.vector);
            gsl_linalg_QR_Qvec(&C.matrix, &tau.vector, &lam.vector);
        }
    }
    return MBS_OK;
}

#define NS_ALLOC(name, kind)                                                                 \
    static int name##_alloc(void **ws, mbs_ctx *ctx, const mbs_params *p)                    \
    {                                                                                        \
        return ns_alloc(ws, ctx, p, kind);                                                   \
    }
NS_ALLOC(qr, MBS_NS_QR)
NS_ALLOC(putd, MBS_NS_PUTD)
NS_ALLOC(zeroeig, MBS_NS_ZEROEIG)
NS_ALLOC(svd, MBS_NS_SVD)
NS_ALLOC(schur, MBS_NS_SCHUR)
#undef NS_ALLOC

#define NS_ACCEL(sym, nm)                                                                    \
    const mbs_accel_def sym = {                                                              \
        .name = #nm,                                                                         \
        .alloc = nm##_alloc,                                                                 \
        .eval = ns_eval,                                                                     \
        .free_ws = ns_free,                                                                  \
        .start = ns_start,                                                                   \
    };
NS_ACCEL(mbs_accel_qr, qr)
NS_ACCEL(mbs_accel_putd, putd)
NS_ACCEL(mbs_accel_zeroeig, zeroeig)
NS_ACCEL(mbs_accel_svd, svd)
NS_ACCEL(mbs_accel_schur, schur)
#undef NS_ACCEL

int mbs_ns_diag_get(const mbs_accel_def *acc, const void *ws, mbs_ns_diag *d)
{
    static const mbs_accel_def *const mine[] = {
        &mbs_accel_qr,  &mbs_accel_putd, &mbs_accel_zeroeig, &mbs_accel_svd,
        &mbs_accel_schur, &mbs_accel_uk, &mbs_accel_ukb,     &mbs_accel_cp};
    if (!acc || !ws)
        return MBS_BAD_INPUT;
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        if (acc == mine[i]) {
            const mbs_ns_diag *src = ws;
            *d = *src; /* every workspace of the family starts with its mbs_ns_diag */
            return MBS_OK;
        }
    return MBS_BAD_INPUT;
}

/* ---- methods ---------------------------------------------------------------- */

static const mbs_param_def ns_params[] = {MBS_NS_RANK_TOL_PARAM};

#define NS_METHODS(fm, acc, title, cite, fflags)                                             \
    MBS_NS_FORMULATION(fm, acc, ns_params, title, cite, fflags)

NS_METHODS(qr, mbs_accel_qr, "null space from a column-pivoted QR of B^T (GSL)",
           "Pennestri & Valentini [pennestri_coordinate_reduction], Eqs. (58)-(65)", 0)
NS_METHODS(putd, mbs_accel_putd,
           "null space from the Householder transform of B^T and D2 (PUTD)",
           "Pennestri & Valentini [pennestri_coordinate_reduction], Eqs. (66)-(67); Amirouche & Ider (1988)", MBS_M_NEEDS_FULL_RANK)
NS_METHODS(zeroeig, mbs_accel_zeroeig,
           "null space from the zero eigenvalues of B^T B (GSL symmetric eigensolver)",
           "Pennestri & Valentini [pennestri_coordinate_reduction], Eqs. (68)-(71); Walton & Steeves (1969)", 0)
NS_METHODS(svd, mbs_accel_svd, "null space from the SVD of B^T (GSL)",
           "Pennestri & Valentini [pennestri_coordinate_reduction], Eqs. (72)-(77); Singh & Likins (1985)", 0)
NS_METHODS(schur, mbs_accel_schur,
           "null space from the Schur vectors of B^T B (GSL nonsymmetric Schur)",
           "Pennestri & Valentini [pennestri_coordinate_reduction], Eqs. (78)-(80)", 0)

/* The formulations of this file, for methods/registry.def (MBS_ODE_FORMULATIONS). */
const mbs_ode_formulation *const mbs_ode_formulations_nullspace[] = {
    &mbs_ode_formulation_qr,  &mbs_ode_formulation_putd,  &mbs_ode_formulation_zeroeig,
    &mbs_ode_formulation_svd, &mbs_ode_formulation_schur, NULL};
