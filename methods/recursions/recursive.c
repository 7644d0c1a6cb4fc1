/* The recursive O(N) formalism with pseudo-inverses (see recursive.h). */
#include "recursive.h"

#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../framework/ode_axis.h"

#define DM MBS_TREE_DMAX

typedef struct rbody { /* pointers into compact per-body storage (d x d, d) */
    double *Kinv, *Mbar, *fbar;
    double *accM, *accf;
    double *Gp; /* G^+ (n x n) */
    double *X;  /* ker G basis, n x (n - r), one null vector after the other */
    double *pdd, *mu, *resid;
    size_t rank;
} rbody;

struct mbs_recursive {
    const mbs_tree_def *tree;
    const mbs_problem *pb;
    size_t N, d;
    int *parent;
    size_t *n, *off;
    mbs_tree_body *b;
    rbody *w;
    double *pool;
    gsl_permutation *perm;
    gsl_matrix *svdA, *svdV;
    gsl_vector *svdS, *svdW;
    double rank_tol;
};

void mbs_recursive_set_rank_tol(mbs_recursive *r, double tol)
{
    r->rank_tol = tol;
}

void mbs_recursive_free(mbs_recursive *r)
{
    if (!r)
        return;
    free(r->parent);
    free(r->n);
    free(r->off);
    free(r->b);
    free(r->w);
    free(r->pool);
    if (r->perm)
        gsl_permutation_free(r->perm);
    if (r->svdA)
        gsl_matrix_free(r->svdA);
    if (r->svdV)
        gsl_matrix_free(r->svdV);
    if (r->svdS)
        gsl_vector_free(r->svdS);
    if (r->svdW)
        gsl_vector_free(r->svdW);
    free(r);
}

int mbs_recursive_alloc(mbs_recursive **out, const mbs_tree_def *tree, const mbs_problem *pb)
{
    *out = NULL;
    mbs_recursive *r = calloc(1, sizeof *r);
    if (!r)
        return MBS_NO_MEMORY;
    r->tree = tree;
    r->pb = pb;
    r->N = tree->nbodies(pb);
    r->d = tree->d;
    if (r->d == 0 || r->d > DM) {
        free(r);
        return MBS_BAD_INPUT;
    }
    size_t N = r->N ? r->N : 1;
    r->parent = malloc(N * sizeof *r->parent);
    r->n = malloc(N * sizeof *r->n);
    r->off = malloc(N * sizeof *r->off);
    r->b = calloc(N, sizeof *r->b);
    r->w = calloc(N, sizeof *r->w);
    r->perm = gsl_permutation_alloc(r->d);
    r->svdA = gsl_matrix_alloc(r->d, r->d);
    r->svdV = gsl_matrix_alloc(r->d, r->d);
    r->svdS = gsl_vector_alloc(r->d);
    r->svdW = gsl_vector_alloc(r->d);
    size_t d = r->d, per = 4 * d * d + 2 * d + 5 * d * d + 5 * d;
    r->pool = calloc(N * per, sizeof *r->pool);
    if (!r->parent || !r->n || !r->off || !r->b || !r->w || !r->perm || !r->svdA || !r->svdV ||
        !r->svdS || !r->svdW || !r->pool) {
        mbs_recursive_free(r);
        return MBS_NO_MEMORY;
    }
    for (size_t i = 0; i < N; i++) { /* compact layout, one body after the other */
        double *p = r->pool + i * per;
        mbs_tree_body *e = &r->b[i];
        rbody *w = &r->w[i];
        e->M = p, p += d * d;
        e->K = p, p += d * d;
        e->H = p, p += d * d;
        e->J = p, p += d * d;
        e->k2 = p, p += d;
        e->f = p, p += d;
        w->Kinv = p, p += d * d;
        w->Mbar = p, p += d * d;
        w->accM = p, p += d * d;
        w->Gp = p, p += d * d;
        w->X = p, p += d * d;
        w->fbar = p, p += d;
        w->accf = p, p += d;
        w->pdd = p, p += d;
        w->mu = p, p += d;
        w->resid = p;
    }
    int s = tree->topology(pb, r->parent, r->n, r->off);
    for (size_t i = 0; s == MBS_OK && i < r->N; i++)
        if (r->parent[i] >= (int)i || r->parent[i] < -1 || r->n[i] == 0 || r->n[i] > r->d ||
            r->off[i] + r->n[i] > pb->nv)
            s = MBS_BAD_INPUT;
    if (s != MBS_OK) {
        mbs_recursive_free(r);
        return s;
    }
    *out = r;
    return MBS_OK;
}

/* C (m x n) = op(A) op(B), op(A) m x k; row-major with the stated leading
 * dimensions of the stored matrices. */
static void mul(double *C, const double *A, int ta, size_t lda, const double *B, int tb,
                size_t ldb, size_t m, size_t n, size_t k)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0.0;
            for (size_t l = 0; l < k; l++)
                s += (ta ? A[l * lda + i] : A[i * lda + l]) * (tb ? B[j * ldb + l] : B[l * ldb + j]);
            C[i * n + j] = s;
        }
}

/* y (m) = op(A) x */
static void mulv(double *y, const double *A, int ta, size_t lda, const double *x, size_t m,
                 size_t k)
{
    for (size_t i = 0; i < m; i++) {
        double s = 0.0;
        for (size_t l = 0; l < k; l++)
            s += (ta ? A[l * lda + i] : A[i * lda + l]) * x[l];
        y[i] = s;
    }
}

/* G^+ and ker G of the symmetric positive semi-definite n x n matrix G by SVD
 * ([arnold2013recursive], Remark 1 of Appendix A).  Returns the rank. */
static size_t pinv(mbs_recursive *r, const double *G, size_t n, double *Gp, double *X)
{
    gsl_matrix_view A = gsl_matrix_submatrix(r->svdA, 0, 0, n, n);
    gsl_matrix_view V = gsl_matrix_submatrix(r->svdV, 0, 0, n, n);
    gsl_vector_view S = gsl_vector_subvector(r->svdS, 0, n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            gsl_matrix_set(&A.matrix, i, j, G[i * n + j]);
    if (n == 1) {
        gsl_matrix_set(&V.matrix, 0, 0, 1.0);
        gsl_vector_set(&S.vector, 0, fabs(G[0]));
        gsl_matrix_set(&A.matrix, 0, 0, G[0] < 0.0 ? -1.0 : 1.0);
    } else if (gsl_linalg_SV_decomp_jacobi(&A.matrix, &V.matrix, &S.vector) != GSL_SUCCESS) {
        return 0;
    }
    double smax = 0.0;
    for (size_t i = 0; i < n; i++)
        smax = fmax(smax, gsl_vector_get(&S.vector, i));
    double tol = (r->rank_tol > 0.0 ? r->rank_tol : (double)n * DBL_EPSILON) * smax;
    size_t rank = 0, nn = 0;
    memset(Gp, 0, n * n * sizeof *Gp);
    for (size_t k = 0; k < n; k++) {
        double s = gsl_vector_get(&S.vector, k);
        if (s > tol && s > 0.0) {
            rank++;
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                    Gp[i * n + j] += gsl_matrix_get(&V.matrix, i, k) *
                                     gsl_matrix_get(&A.matrix, j, k) / s;
        } else {
            for (size_t i = 0; i < n; i++)
                X[nn * n + i] = gsl_matrix_get(&V.matrix, i, k);
            nn++;
        }
    }
    return rank;
}

int mbs_recursive_eval(mbs_recursive *r, double t, const double *q, const double *v, double *qdd,
                       char *msg, size_t len)
{
    size_t N = r->N, d = r->d;
    int s = r->tree->eval(r->pb, t, q, v, r->b);
    if (s != MBS_OK) {
        snprintf(msg, len, "tree callback of %s failed", r->pb->def->name);
        return s;
    }
    double T1[DM * DM], T2[DM * DM], G[DM * DM], P[DM * DM], u[DM], u2[DM];
    int sign;
    for (size_t i = 0; i < N; i++) {
        rbody *w = &r->w[i];
        gsl_matrix_view K = gsl_matrix_view_array(T1, d, d);
        memcpy(T1, r->b[i].K, d * d * sizeof(double));
        gsl_matrix_view Ki = gsl_matrix_view_array(w->Kinv, d, d);
        if (gsl_linalg_LU_decomp(&K.matrix, r->perm, &sign) != GSL_SUCCESS ||
            gsl_linalg_LU_invert(&K.matrix, r->perm, &Ki.matrix) != GSL_SUCCESS ||
            !isfinite(w->Kinv[0])) {
            snprintf(msg, len, "joint Jacobian K_%zu singular", i);
            return MBS_SINGULAR_MATRIX;
        }
        memset(w->accM, 0, d * d * sizeof *w->accM);
        memset(w->accf, 0, d * sizeof *w->accf);
    }
    /* backward recursion, [arnold2013recursive] Eq. (17) */
    for (size_t ii = N; ii-- > 0;) {
        rbody *w = &r->w[ii];
        const mbs_tree_body *b = &r->b[ii];
        size_t n = r->n[ii];
        for (size_t k = 0; k < d * d; k++)
            T2[k] = b->M[k] + w->accM[k];
        mul(T1, T2, 0, d, w->Kinv, 0, d, d, d, d);           /* (M + acc) K^-1 */
        mul(w->Mbar, w->Kinv, 1, d, T1, 0, d, d, d, d);      /* K^-T (...) */
        for (size_t k = 0; k < d; k++)
            u[k] = b->f[k] - w->accf[k];
        mulv(w->fbar, w->Kinv, 1, d, u, d, d);
        /* G = J^T Mbar J and its pseudo-inverse */
        mul(T1, w->Mbar, 0, d, b->J, 0, n, d, n, d);         /* Mbar J (d x n) */
        mul(G, b->J, 1, n, T1, 0, n, n, n, d);               /* J^T Mbar J */
        w->rank = pinv(r, G, n, w->Gp, w->X);
        int p = r->parent[ii];
        if (p < 0)
            continue;
        /* T = I - Mbar J G^+ J^T (d x d) */
        mul(T2, T1, 0, n, w->Gp, 0, n, d, n, n);             /* Mbar J G^+ (d x n) */
        mul(P, T2, 0, n, b->J, 1, n, d, d, n);               /* Mbar J G^+ J^T */
        for (size_t i = 0; i < d; i++)
            for (size_t j = 0; j < d; j++)
                P[i * d + j] = (i == j) - P[i * d + j];
        /* acc_f(parent) += H^T T (fbar + Mbar k2) */
        mulv(u, w->Mbar, 0, d, b->k2, d, d);
        for (size_t k = 0; k < d; k++)
            u[k] += w->fbar[k];
        mulv(u2, P, 0, d, u, d, d);
        mulv(u, b->H, 1, d, u2, d, d);
        rbody *wp = &r->w[p];
        for (size_t k = 0; k < d; k++)
            wp->accf[k] += u[k];
        /* acc_M(parent) += H^T (T Mbar) H */
        mul(T1, P, 0, d, w->Mbar, 0, d, d, d, d);
        mul(T2, T1, 0, d, b->H, 0, d, d, d, d);
        mul(T1, b->H, 1, d, T2, 0, d, d, d, d);
        for (size_t k = 0; k < d * d; k++)
            wp->accM[k] += T1[k];
    }
    /* forward recursion, Eqs. (18), (19), (25a), (13) */
    size_t deficient = N;
    static const double zero[DM] = {0};
    for (size_t i = 0; i < N; i++) {
        rbody *w = &r->w[i];
        const mbs_tree_body *b = &r->b[i];
        size_t n = r->n[i];
        const double *ppd = r->parent[i] < 0 ? zero : r->w[r->parent[i]].pdd;
        double rhs[DM], qd[DM];
        mulv(u, b->H, 0, d, ppd, d, d);
        for (size_t k = 0; k < d; k++)
            u[k] += b->k2[k];
        mulv(u2, w->Mbar, 0, d, u, d, d);
        for (size_t k = 0; k < d; k++)
            u2[k] += w->fbar[k];
        mulv(rhs, b->J, 1, n, u2, n, d);
        for (size_t k = 0; k < n; k++)
            rhs[k] = -rhs[k];
        mulv(qd, w->Gp, 0, n, rhs, n, n);
        for (size_t k = 0; k + w->rank < n; k++) { /* Eq. (28b) residuals */
            double s2 = 0.0;
            for (size_t l = 0; l < n; l++)
                s2 += w->X[k * n + l] * rhs[l];
            w->resid[k] = s2;
        }
        if (w->rank < n && deficient == N)
            deficient = i;
        /* p'' = K^-1 (-H p_pi'' - J q'' - k2) */
        mulv(u2, b->J, 0, n, qd, d, n);
        for (size_t k = 0; k < d; k++)
            u2[k] = -u[k] - u2[k];
        mulv(w->pdd, w->Kinv, 0, d, u2, d, d);
        /* mu = fbar - Mbar K p'' */
        mulv(u, b->K, 0, d, w->pdd, d, d);
        mulv(u2, w->Mbar, 0, d, u, d, d);
        for (size_t k = 0; k < d; k++)
            w->mu[k] = w->fbar[k] - u2[k];
        memcpy(qdd + r->off[i], qd, n * sizeof *qd);
    }
    if (deficient < N) {
        snprintf(msg, len,
                 "projected mass J^T Mbar J of body %zu has rank %zu < %zu: mixed first/second "
                 "order system (Arnold 2013 [arnold2013recursive] Sect. 3.4) needs a DAE integrator",
                 deficient, r->w[deficient].rank, r->n[deficient]);
        return MBS_SINGULAR_MATRIX;
    }
    return MBS_OK;
}

size_t mbs_recursive_nbodies(const mbs_recursive *r)
{
    return r->N;
}

const double *mbs_recursive_pdd(const mbs_recursive *r, size_t i)
{
    return r->w[i].pdd;
}

const double *mbs_recursive_mu(const mbs_recursive *r, size_t i)
{
    return r->w[i].mu;
}

const double *mbs_recursive_mbar(const mbs_recursive *r, size_t i)
{
    return r->w[i].Mbar;
}

const double *mbs_recursive_fbar(const mbs_recursive *r, size_t i)
{
    return r->w[i].fbar;
}

size_t mbs_recursive_rank(const mbs_recursive *r, size_t i, const double **resid)
{
    if (resid)
        *resid = r->w[i].resid;
    return r->w[i].rank;
}

/* ---- as an acceleration evaluator: recursive/rk4, recursive/dopri5 ---------- */

static int accel_alloc(void **ws, mbs_ctx *ctx, const mbs_params *p)
{
    const mbs_problem *pb = ctx->pb;
    const mbs_tree_def *tree = mbs_tree_find(pb->def);
    if (!tree || pb->nl != 0 || pb->nq != pb->nv)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "the recursive formalism needs a tree description in joint "
                        "coordinates (%s has none)",
                        pb->def->name);
    int s = mbs_recursive_alloc((mbs_recursive **)ws, tree, pb);
    if (s == MBS_OK)
        mbs_recursive_set_rank_tol(*ws, p->val[0]);
    return s;
}

static int accel_eval(void *ws, mbs_ctx *ctx, double t, const double *q, const double *v,
                      double *vdot, double *lambda)
{
    (void)lambda; /* n_lambda = 0: joint coordinates */
    char msg[200];
    mbs_recursive *r = ws;
    /* the tree callback evaluates masses and forces of all bodies */
    ctx->cnt.f_evals++;
    ctx->cnt.mass_evals++;
    if (t >= ctx->inject_fail_t)
        return mbs_fail(ctx, MBS_CALLBACK_FAILED, t, "tree callback failed (injected at t >= %g)",
                        ctx->inject_fail_t);
    int s = mbs_recursive_eval(r, t, q, v, vdot, msg, sizeof msg);
    mbs_count_solve(ctx);
    if (s != MBS_OK)
        return mbs_fail(ctx, s, t, "recursive: %s", msg);
    return MBS_OK;
}

static void accel_free(void *ws)
{
    mbs_recursive_free(ws);
}

const mbs_accel_def mbs_accel_recursive = {
    .name = "recursive",
    .alloc = accel_alloc,
    .eval = accel_eval,
    .free_ws = accel_free,
};

static const mbs_param_def recursive_params[] = {
    {"rank_tol", 0.0, 0.0, 1e-2,
     "relative singular-value threshold of the pseudo-inverses G^+ (0: n eps)", NULL, 0},
};

#define CITE "Arnold 2013 [arnold2013recursive], Sect. 3, Eqs. (17), (18), (24a,b); Arnold 2016 [arnold2016dae], Table 1"
const mbs_ode_formulation mbs_ode_formulation_recursive = {
    .name = "recursive",
    .accel = &mbs_accel_recursive,
    .summary = "on the recursive O(N) formalism (joint coordinates)",
    .citation = CITE,
    .flags = MBS_M_NEEDS_REGULAR_MASS,
    .lambda = 0,
    .params = recursive_params,
    .n_params = sizeof recursive_params / sizeof recursive_params[0],
};
