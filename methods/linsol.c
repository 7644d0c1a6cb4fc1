/* Linear-solver backends for the KKT system (see linsol.h). */
#include "linsol.h"

#include <cholmod.h>
#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <umfpack.h>

#include "../core/status.h"
#include "../core/gslalloc.h"

/* A sparse pattern in compressed-column form with a map from the triplets. */
typedef struct csc {
    size_t nr, nc, nzt; /* rows, columns, number of triplets */
    int *p, *i;         /* column pointers (nc + 1), row indices (nnz) */
    double *x;          /* values (nnz) */
    int *map;           /* triplet k -> position in i/x (nzt) */
    size_t nnz;
} csc;

static void csc_free(csc *A)
{
    free(A->p);
    free(A->i);
    free(A->x);
    free(A->map);
    memset(A, 0, sizeof *A);
}

/* Compress the nzt triplets (ti, tj) of an nr x nc matrix to CSC with sorted row
 * indices and duplicates merged: two stable counting sorts (by row, then by
 * column).  Returns 0 or -1 (out of memory; A is then empty). */
static int csc_build(csc *A, size_t nr, size_t nc, size_t nzt, const int *ti, const int *tj)
{
    csc_free(A);
    A->nr = nr;
    A->nc = nc;
    A->nzt = nzt;
    size_t nz1 = nzt ? nzt : 1, nmax = (nr > nc ? nr : nc) + 1;
    A->p = calloc(nc + 1, sizeof *A->p);
    A->i = malloc(nz1 * sizeof *A->i);
    A->x = calloc(nz1, sizeof *A->x);
    A->map = malloc(nz1 * sizeof *A->map);
    size_t *cnt = calloc(nmax + 1, sizeof *cnt);
    size_t *p1 = malloc(nz1 * sizeof *p1), *p2 = malloc(nz1 * sizeof *p2);
    int ok = A->p && A->i && A->x && A->map && cnt && p1 && p2;
    if (ok) {
        /* by row */
        for (size_t k = 0; k < nzt; k++)
            cnt[(size_t)ti[k] + 1]++;
        for (size_t r = 0; r < nr; r++)
            cnt[r + 1] += cnt[r];
        for (size_t k = 0; k < nzt; k++)
            p1[cnt[ti[k]]++] = k;
        /* stable by column */
        memset(cnt, 0, (nmax + 1) * sizeof *cnt);
        for (size_t k = 0; k < nzt; k++)
            cnt[(size_t)tj[k] + 1]++;
        for (size_t c = 0; c < nc; c++)
            cnt[c + 1] += cnt[c];
        for (size_t m = 0; m < nzt; m++) {
            size_t k = p1[m];
            p2[cnt[tj[k]]++] = k;
        }
        /* merge duplicates */
        size_t pos = 0, m = 0;
        for (size_t c = 0; c < nc; c++) {
            A->p[c] = (int)pos;
            size_t start = pos;
            for (; m < nzt && (size_t)tj[p2[m]] == c; m++) {
                size_t k = p2[m];
                if (pos > start && A->i[pos - 1] == ti[k]) {
                    A->map[k] = (int)(pos - 1);
                } else {
                    A->i[pos] = ti[k];
                    A->map[k] = (int)pos;
                    pos++;
                }
            }
        }
        A->p[nc] = (int)pos;
        A->nnz = pos;
    }
    free(cnt);
    free(p1);
    free(p2);
    if (!ok) {
        csc_free(A);
        return -1;
    }
    return 0;
}

/* ---- the solver object ------------------------------------------------------ */

struct mbs_linsol {
    int kind;
    size_t nv, nl, n;
    double aug;
    mbs_linsol_stats st;
    int analysed;
    /* pattern of the last analysis */
    size_t pm_n, pb_n;
    size_t *pm_r, *pm_c, *pb_r, *pb_c;
    /* triplet index lists (int) of the current pattern */
    int *ti, *tj;
    size_t tcap;
    /* dense */
    gsl_matrix *K;
    gsl_permutation *perm;
    gsl_vector *rhs, *sol;
    /* umfpack: KKT in CSC */
    csc Kc;
    void *sym, *num;
    double ctrl[UMFPACK_CONTROL], info[UMFPACK_INFO];
    int *Wi;
    double *W, *kb, *kx;
    /* cholmod */
    cholmod_common cc;
    int cc_on;
    csc Ac;   /* upper triangle of A = M (+ w B^T B) */
    csc Br;   /* B^T in CSC = B by rows (nv x nl) */
    csc Bc;   /* B in CSC (nl x nv) */
    size_t nzt_m; /* triplets of M in Ac (the rest are B^T B products) */
    int *bt_pair; /* for each B^T B triplet: positions (in B triplets) of its two factors */
    double wgt;   /* augmentation weight actually used */
    cholmod_factor *LA, *LS;
    int *Sp, *Si, *Sp0, *Si0;
    double *Sx;
    size_t Scap, Snz, Snz0;
    cholmod_dense *bd, *XA, *YA, *EA, *XS, *YS, *ES, *Xc, *Yc, *Ec;
    cholmod_sparse *bset, *xset;
    double *acc, *tv, *rl;
    int *mark, *list, *mark2;
    int *Yp, *Yi, *Yrp, *Yrc; /* Y = L^-1 P B^T by columns and rows */
    double *Yx, *Yrx;
    size_t Ycap;
};

const char *mbs_linsol_name(int kind)
{
    switch (kind) {
    case MBS_LS_DENSE:
        return "dense";
    case MBS_LS_UMFPACK:
        return "umfpack";
    case MBS_LS_CHOLMOD:
        return "cholmod";
    default:
        return "?";
    }
}

void mbs_linsol_free(mbs_linsol **lsp)
{
    if (!lsp || !*lsp)
        return;
    mbs_linsol *ls = *lsp;
    free(ls->pm_r);
    free(ls->pm_c);
    free(ls->pb_r);
    free(ls->pb_c);
    free(ls->ti);
    free(ls->tj);
    if (ls->K)
        gsl_matrix_free(ls->K);
    if (ls->perm)
        gsl_permutation_free(ls->perm);
    if (ls->rhs)
        gsl_vector_free(ls->rhs);
    if (ls->sol)
        gsl_vector_free(ls->sol);
    csc_free(&ls->Kc);
    if (ls->num)
        umfpack_di_free_numeric(&ls->num);
    if (ls->sym)
        umfpack_di_free_symbolic(&ls->sym);
    free(ls->Wi);
    free(ls->W);
    free(ls->kb);
    free(ls->kx);
    csc_free(&ls->Ac);
    csc_free(&ls->Br);
    csc_free(&ls->Bc);
    free(ls->bt_pair);
    free(ls->Sp);
    free(ls->Si);
    free(ls->Sp0);
    free(ls->Si0);
    free(ls->Sx);
    free(ls->acc);
    free(ls->tv);
    free(ls->rl);
    free(ls->mark);
    free(ls->list);
    free(ls->mark2);
    free(ls->Yp);
    free(ls->Yi);
    free(ls->Yrp);
    free(ls->Yrc);
    free(ls->Yx);
    free(ls->Yrx);
    if (ls->cc_on) {
        cholmod_common *c = &ls->cc;
        cholmod_free_factor(&ls->LA, c);
        cholmod_free_factor(&ls->LS, c);
        cholmod_dense **d[] = {&ls->bd, &ls->XA, &ls->YA, &ls->EA, &ls->XS,
                               &ls->YS, &ls->ES, &ls->Xc, &ls->Yc, &ls->Ec};
        for (size_t k = 0; k < sizeof d / sizeof d[0]; k++)
            cholmod_free_dense(d[k], c);
        cholmod_free_sparse(&ls->bset, c);
        cholmod_free_sparse(&ls->xset, c);
        cholmod_finish(c);
    }
    free(ls);
    *lsp = NULL;
}

int mbs_linsol_alloc(mbs_linsol **out, int kind, size_t nv, size_t nl, double aug_weight)
{
    *out = NULL;
    if (kind < MBS_LS_DENSE || kind > MBS_LS_CHOLMOD || nv == 0 || !(aug_weight >= 0.0) ||
        nv + nl > (size_t)1 << 30)
        return MBS_BAD_INPUT;
    mbs_linsol *ls = calloc(1, sizeof *ls);
    if (!ls)
        return MBS_NO_MEMORY;
    ls->kind = kind;
    ls->nv = nv;
    ls->nl = nl;
    ls->n = nv + nl;
    ls->aug = kind == MBS_LS_CHOLMOD ? aug_weight : 0.0;
    ls->st.rcond = NAN;
    int ok = 1;
    if (kind == MBS_LS_DENSE) {
        ls->K = mbs_matrix_alloc(ls->n, ls->n);
        ls->perm = gsl_permutation_alloc(ls->n);
        ls->rhs = gsl_vector_alloc(ls->n);
        ls->sol = gsl_vector_alloc(ls->n);
        ok = ls->K && ls->perm && ls->rhs && ls->sol;
    } else if (kind == MBS_LS_UMFPACK) {
        umfpack_di_defaults(ls->ctrl);
        ls->ctrl[UMFPACK_PRL] = 0;
        ls->Wi = malloc(ls->n * sizeof *ls->Wi);
        ls->W = malloc(5 * ls->n * sizeof *ls->W);
        ls->kb = malloc(ls->n * sizeof *ls->kb);
        ls->kx = malloc(ls->n * sizeof *ls->kx);
        ok = ls->Wi && ls->W && ls->kb && ls->kx;
    } else {
        size_t nlc = nl ? nl : 1;
        if (!cholmod_start(&ls->cc)) {
            free(ls);
            return MBS_LIBRARY_FAILURE;
        }
        ls->cc_on = 1;
        ls->cc.print = 0;
        ls->cc.supernodal = CHOLMOD_SIMPLICIAL; /* sparse-pattern solves (Bset) */
        ls->cc.final_ll = 0;
        ls->bd = cholmod_zeros(nv, 1, CHOLMOD_REAL, &ls->cc);
        ls->bset = cholmod_allocate_sparse(nv, 1, nv, 0, 1, 0, CHOLMOD_PATTERN, &ls->cc);
        ls->acc = calloc(nlc, sizeof *ls->acc);
        ls->tv = malloc(nv * sizeof *ls->tv);
        ls->rl = malloc(nlc * sizeof *ls->rl);
        ls->mark = malloc((nv > nlc ? nv : nlc) * sizeof *ls->mark);
        ls->list = malloc(nlc * sizeof *ls->list);
        ls->mark2 = malloc(nv * sizeof *ls->mark2);
        ls->Yrp = malloc((nv + 1) * sizeof *ls->Yrp);
        ok = ls->bd && ls->bset && ls->acc && ls->tv && ls->rl && ls->mark && ls->list &&
             ls->mark2 && ls->Yrp;
        if (ok) {
            for (size_t k = 0; k < (nv > nlc ? nv : nlc); k++)
                ls->mark[k] = -1;
        }
    }
    if (!ok) {
        mbs_linsol_free(&ls);
        return MBS_NO_MEMORY;
    }
    *out = ls;
    return MBS_OK;
}

static int same_pattern(size_t n, const size_t *r, const size_t *c, const mbs_triplets *T)
{
    if (n != T->nnz)
        return 0;
    return n == 0 || (memcmp(r, T->row, n * sizeof *r) == 0 &&
                      memcmp(c, T->col, n * sizeof *c) == 0);
}

static int save_pattern(size_t *n, size_t **r, size_t **c, const mbs_triplets *T)
{
    size_t m = T->nnz ? T->nnz : 1;
    size_t *nr = realloc(*r, m * sizeof *nr);
    if (!nr)
        return -1;
    *r = nr;
    size_t *nc = realloc(*c, m * sizeof *nc);
    if (!nc)
        return -1;
    *c = nc;
    if (T->nnz) {
        memcpy(*r, T->row, T->nnz * sizeof **r);
        memcpy(*c, T->col, T->nnz * sizeof **c);
    }
    *n = T->nnz;
    return 0;
}

static int reserve_tij(mbs_linsol *ls, size_t n)
{
    if (n <= ls->tcap)
        return 0;
    int *a = realloc(ls->ti, n * sizeof *a);
    if (!a)
        return -1;
    ls->ti = a;
    int *b = realloc(ls->tj, n * sizeof *b);
    if (!b)
        return -1;
    ls->tj = b;
    ls->tcap = n;
    return 0;
}

static int check_triplets(const mbs_linsol *ls, const mbs_triplets *M, const mbs_triplets *B,
                          char *msg, size_t len)
{
    for (size_t k = 0; k < M->nnz; k++)
        if (M->row[k] >= ls->nv || M->col[k] >= ls->nv) {
            snprintf(msg, len, "mass triplet %zu at (%zu, %zu) outside %zu x %zu", k,
                     M->row[k], M->col[k], ls->nv, ls->nv);
            return MBS_BAD_INPUT;
        }
    for (size_t k = 0; B && k < B->nnz; k++)
        if (B->row[k] >= ls->nl || B->col[k] >= ls->nv) {
            snprintf(msg, len, "constraint triplet %zu at (%zu, %zu) outside %zu x %zu", k,
                     B->row[k], B->col[k], ls->nl, ls->nv);
            return MBS_BAD_INPUT;
        }
    return MBS_OK;
}

/* ---- dense --------------------------------------------------------------------- */

static int dense_factor(mbs_linsol *ls, const mbs_triplets *M, const mbs_triplets *B,
                        char *msg, size_t len)
{
    size_t nv = ls->nv;
    gsl_matrix_set_zero(ls->K);
    double *K = ls->K->data;
    size_t tda = ls->K->tda;
    for (size_t k = 0; k < M->nnz; k++)
        K[M->row[k] * tda + M->col[k]] += M->val[k];
    for (size_t k = 0; B && k < B->nnz; k++) {
        K[(nv + B->row[k]) * tda + B->col[k]] += B->val[k];
        K[B->col[k] * tda + nv + B->row[k]] += B->val[k];
    }
    int sign;
    ls->st.n = ls->n;
    ls->st.nnz = ls->st.nnz_factor = ls->n * ls->n;
    if (gsl_linalg_LU_decomp(ls->K, ls->perm, &sign) != GSL_SUCCESS) {
        snprintf(msg, len, "dense KKT LU factorization failed");
        return MBS_SINGULAR_MATRIX;
    }
    double umax = 0.0, umin = INFINITY;
    for (size_t i = 0; i < ls->n; i++) {
        double u = fabs(gsl_matrix_get(ls->K, i, i));
        umax = fmax(umax, u);
        umin = fmin(umin, u);
    }
    ls->st.rcond = umax > 0.0 ? umin / umax : 0.0; /* as UMFPACK's estimate */
    if (!(ls->st.rcond > (double)ls->n * DBL_EPSILON)) {
        snprintf(msg, len, "singular KKT matrix (dense LU, pivot ratio %.2g)", ls->st.rcond);
        return MBS_SINGULAR_MATRIX;
    }
    return MBS_OK;
}

static int dense_solve(mbs_linsol *ls, const double *f, const double *gam, double *a,
                       double *lambda, char *msg, size_t len)
{
    for (size_t i = 0; i < ls->nv; i++)
        gsl_vector_set(ls->rhs, i, f[i]);
    for (size_t i = 0; i < ls->nl; i++)
        gsl_vector_set(ls->rhs, ls->nv + i, gam[i]);
    if (gsl_linalg_LU_solve(ls->K, ls->perm, ls->rhs, ls->sol) != GSL_SUCCESS) {
        snprintf(msg, len, "singular KKT matrix");
        return MBS_SINGULAR_MATRIX;
    }
    for (size_t i = 0; i < ls->nv; i++)
        a[i] = gsl_vector_get(ls->sol, i);
    for (size_t i = 0; lambda && i < ls->nl; i++)
        lambda[i] = gsl_vector_get(ls->sol, ls->nv + i);
    return MBS_OK;
}

/* ---- umfpack ------------------------------------------------------------------- */

static int umf_analyse(mbs_linsol *ls, const mbs_triplets *M, const mbs_triplets *B,
                       char *msg, size_t len)
{
    size_t nb = B ? B->nnz : 0, nz = M->nnz + 2 * nb, k = 0;
    if (reserve_tij(ls, nz ? nz : 1) != 0)
        return MBS_NO_MEMORY;
    for (size_t m = 0; m < M->nnz; m++, k++) {
        ls->ti[k] = (int)M->row[m];
        ls->tj[k] = (int)M->col[m];
    }
    for (size_t m = 0; m < nb; m++, k += 2) {
        ls->ti[k] = (int)(ls->nv + B->row[m]);
        ls->tj[k] = (int)B->col[m];
        ls->ti[k + 1] = (int)B->col[m];
        ls->tj[k + 1] = (int)(ls->nv + B->row[m]);
    }
    if (csc_build(&ls->Kc, ls->n, ls->n, nz, ls->ti, ls->tj) != 0)
        return MBS_NO_MEMORY;
    if (ls->num)
        umfpack_di_free_numeric(&ls->num);
    if (ls->sym)
        umfpack_di_free_symbolic(&ls->sym);
    int s = umfpack_di_symbolic((int)ls->n, (int)ls->n, ls->Kc.p, ls->Kc.i, NULL, &ls->sym,
                                ls->ctrl, ls->info);
    if (s != UMFPACK_OK) {
        snprintf(msg, len, "UMFPACK symbolic analysis failed (status %d)", s);
        return s == UMFPACK_ERROR_out_of_memory ? MBS_NO_MEMORY : MBS_LIBRARY_FAILURE;
    }
    ls->st.analyses++;
    return MBS_OK;
}

static int umf_factor(mbs_linsol *ls, const mbs_triplets *M, const mbs_triplets *B,
                      char *msg, size_t len)
{
    csc *K = &ls->Kc;
    memset(K->x, 0, K->nnz * sizeof *K->x);
    size_t k = 0;
    for (size_t m = 0; m < M->nnz; m++, k++)
        K->x[K->map[k]] += M->val[m];
    for (size_t m = 0; B && m < B->nnz; m++, k += 2) {
        K->x[K->map[k]] += B->val[m];
        K->x[K->map[k + 1]] += B->val[m];
    }
    if (ls->num)
        umfpack_di_free_numeric(&ls->num);
    int s = umfpack_di_numeric(K->p, K->i, K->x, ls->sym, &ls->num, ls->ctrl, ls->info);
    ls->st.n = ls->n;
    ls->st.nnz = K->nnz;
    ls->st.rcond = ls->info[UMFPACK_RCOND];
    double lnz = ls->info[UMFPACK_LNZ], unz = ls->info[UMFPACK_UNZ];
    if (lnz >= 0 && unz >= 0)
        ls->st.nnz_factor = (size_t)(lnz + unz) + ls->n; /* L, U without diagonal, + diag */
    if (s == UMFPACK_WARNING_singular_matrix ||
        (s == UMFPACK_OK && !(ls->st.rcond > (double)ls->n * DBL_EPSILON))) {
        snprintf(msg, len, "singular KKT matrix (UMFPACK)");
        return MBS_SINGULAR_MATRIX;
    }
    if (s != UMFPACK_OK) {
        snprintf(msg, len, "UMFPACK numeric factorization failed (status %d)", s);
        return s == UMFPACK_ERROR_out_of_memory ? MBS_NO_MEMORY : MBS_LIBRARY_FAILURE;
    }
    return MBS_OK;
}

static int umf_solve(mbs_linsol *ls, const double *f, const double *gam, double *a,
                     double *lambda, char *msg, size_t len)
{
    memcpy(ls->kb, f, ls->nv * sizeof *f);
    if (ls->nl)
        memcpy(ls->kb + ls->nv, gam, ls->nl * sizeof *gam);
    int s = umfpack_di_wsolve(UMFPACK_A, ls->Kc.p, ls->Kc.i, ls->Kc.x, ls->kx, ls->kb, ls->num,
                              ls->ctrl, ls->info, ls->Wi, ls->W);
    if (s != UMFPACK_OK) {
        snprintf(msg, len, "UMFPACK solve failed (status %d)", s);
        return s == UMFPACK_WARNING_singular_matrix ? MBS_SINGULAR_MATRIX : MBS_LIBRARY_FAILURE;
    }
    memcpy(a, ls->kx, ls->nv * sizeof *a);
    if (lambda && ls->nl)
        memcpy(lambda, ls->kx + ls->nv, ls->nl * sizeof *lambda);
    return MBS_OK;
}

/* ---- cholmod (range space) -------------------------------------------------------- */

static cholmod_sparse csc_view(const csc *A, int stype)
{
    cholmod_sparse S;
    memset(&S, 0, sizeof S);
    S.nrow = A->nr;
    S.ncol = A->nc;
    S.nzmax = A->nnz ? A->nnz : 1;
    S.p = A->p;
    S.i = A->i;
    S.x = A->x;
    S.stype = stype;
    S.itype = CHOLMOD_INT;
    S.xtype = CHOLMOD_REAL;
    S.dtype = CHOLMOD_DOUBLE;
    S.sorted = 1;
    S.packed = 1;
    return S;
}

static int chm_status(mbs_linsol *ls, const char *what, char *msg, size_t len)
{
    snprintf(msg, len, "CHOLMOD %s failed (status %d)", what, ls->cc.status);
    return ls->cc.status == CHOLMOD_OUT_OF_MEMORY ? MBS_NO_MEMORY : MBS_LIBRARY_FAILURE;
}

/* A = M (+ w B^T B): upper-triangle triplets; the B^T B products are listed as
 * pairs of B triplets (seed 003 Sect. 2: augmented Lagrangian; any w > 0 leaves
 * the solution unchanged because B a = gamma). */
static int chm_analyse_A(mbs_linsol *ls, const mbs_triplets *M, const mbs_triplets *B,
                         char *msg, size_t len)
{
    size_t nb = B ? B->nnz : 0, nm = 0, npair = 0;
    for (size_t m = 0; m < M->nnz; m++)
        nm += M->row[m] <= M->col[m];
    if (ls->aug > 0.0 && nb > 0) {
        /* pairs within each constraint row: count by rows */
        size_t *rc = calloc(ls->nl + 1, sizeof *rc);
        if (!rc)
            return MBS_NO_MEMORY;
        for (size_t m = 0; m < nb; m++)
            rc[B->row[m]]++;
        for (size_t r = 0; r < ls->nl; r++)
            npair += rc[r] * rc[r];
        free(rc);
    }
    size_t nz = nm + npair;
    if (reserve_tij(ls, nz ? nz : 1) != 0)
        return MBS_NO_MEMORY;
    free(ls->bt_pair);
    ls->bt_pair = malloc((2 * npair + 1) * sizeof *ls->bt_pair);
    if (!ls->bt_pair)
        return MBS_NO_MEMORY;
    size_t k = 0;
    for (size_t m = 0; m < M->nnz; m++)
        if (M->row[m] <= M->col[m]) {
            ls->ti[k] = (int)M->row[m];
            ls->tj[k] = (int)M->col[m];
            k++;
        }
    ls->nzt_m = k;
    if (npair > 0) {
        /* triplets of B sorted by row (counting sort) */
        size_t *rp = calloc(ls->nl + 1, sizeof *rp), *ord = malloc(nb * sizeof *ord);
        if (!rp || !ord) {
            free(rp);
            free(ord);
            return MBS_NO_MEMORY;
        }
        for (size_t m = 0; m < nb; m++)
            rp[B->row[m] + 1]++;
        for (size_t r = 0; r < ls->nl; r++)
            rp[r + 1] += rp[r];
        size_t *fill = malloc((ls->nl + 1) * sizeof *fill);
        if (!fill) {
            free(rp);
            free(ord);
            return MBS_NO_MEMORY;
        }
        memcpy(fill, rp, (ls->nl + 1) * sizeof *fill);
        for (size_t m = 0; m < nb; m++)
            ord[fill[B->row[m]]++] = m;
        free(fill);
        size_t pr = 0;
        for (size_t r = 0; r < ls->nl; r++)
            for (size_t a1 = rp[r]; a1 < rp[r + 1]; a1++)
                for (size_t a2 = rp[r]; a2 < rp[r + 1]; a2++) {
                    size_t m1 = ord[a1], m2 = ord[a2];
                    if (B->col[m1] > B->col[m2])
                        continue;
                    ls->ti[k] = (int)B->col[m1];
                    ls->tj[k] = (int)B->col[m2];
                    ls->bt_pair[2 * pr] = (int)m1;
                    ls->bt_pair[2 * pr + 1] = (int)m2;
                    k++;
                    pr++;
                }
        free(rp);
        free(ord);
    }
    if (csc_build(&ls->Ac, ls->nv, ls->nv, k, ls->ti, ls->tj) != 0)
        return MBS_NO_MEMORY;
    cholmod_sparse A = csc_view(&ls->Ac, 1);
    cholmod_free_factor(&ls->LA, &ls->cc);
    ls->LA = cholmod_analyze(&A, &ls->cc);
    if (!ls->LA)
        return chm_status(ls, "analysis of A", msg, len);
    ls->st.analyses++;
    return MBS_OK;
}

/* B by rows (as B^T in CSC, nv x nl) and by columns (nl x nv). */
static int chm_analyse_B(mbs_linsol *ls, const mbs_triplets *B)
{
    size_t nb = B ? B->nnz : 0;
    if (reserve_tij(ls, nb ? nb : 1) != 0)
        return MBS_NO_MEMORY;
    for (size_t m = 0; m < nb; m++) {
        ls->ti[m] = (int)B->col[m];
        ls->tj[m] = (int)B->row[m];
    }
    if (csc_build(&ls->Br, ls->nv, ls->nl, nb, ls->ti, ls->tj) != 0 ||
        csc_build(&ls->Bc, ls->nl, ls->nv, nb, ls->tj, ls->ti) != 0)
        return MBS_NO_MEMORY;
    return MBS_OK;
}

static int chm_factor_check(mbs_linsol *ls, cholmod_factor *L, const char *what, char *msg,
                            size_t len)
{
    if (ls->cc.status == CHOLMOD_OUT_OF_MEMORY)
        return chm_status(ls, what, msg, len);
    int bad = ls->cc.status == CHOLMOD_NOT_POSDEF || L->minor < L->n;
    if (!bad && !L->is_ll && !L->is_super) {
        /* simplicial LDL^T: D is the first entry of each column */
        const int *Lp = L->p;
        const double *Lx = L->x;
        double dmax = 0.0;
        for (size_t j = 0; j < L->n; j++)
            dmax = fmax(dmax, Lx[Lp[j]]);
        /* a pivot below n eps relative to the largest is a rank defect (exactly
         * dependent rows of B cancel only to rounding in B A^-1 B^T) */
        for (size_t j = 0; j < L->n && !bad; j++)
            bad = !(Lx[Lp[j]] > (double)L->n * DBL_EPSILON * dmax);
    }
    if (bad) {
        snprintf(msg, len, "%s not positive definite (CHOLMOD)", what);
        return MBS_SINGULAR_MATRIX;
    }
    return MBS_OK;
}

static int grow_S(mbs_linsol *ls, size_t need)
{
    if (need <= ls->Scap)
        return 0;
    size_t cap = 2 * need;
    int *i = realloc(ls->Si, cap * sizeof *i);
    if (!i)
        return -1;
    ls->Si = i;
    double *x = realloc(ls->Sx, cap * sizeof *x);
    if (!x)
        return -1;
    ls->Sx = x;
    ls->Scap = cap;
    return 0;
}

static int grow_Y(mbs_linsol *ls, size_t need)
{
    if (need <= ls->Ycap)
        return 0;
    size_t cap = 2 * need;
    int *i = realloc(ls->Yi, cap * sizeof *i);
    if (!i)
        return -1;
    ls->Yi = i;
    double *x = realloc(ls->Yx, cap * sizeof *x);
    if (!x)
        return -1;
    ls->Yx = x;
    int *rc = realloc(ls->Yrc, cap * sizeof *rc);
    if (!rc)
        return -1;
    ls->Yrc = rc;
    double *rx = realloc(ls->Yrx, cap * sizeof *rx);
    if (!rx)
        return -1;
    ls->Yrx = rx;
    ls->Ycap = cap;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int chm_factor(mbs_linsol *ls, const mbs_triplets *M, const mbs_triplets *B,
                      char *msg, size_t len)
{
    cholmod_common *c = &ls->cc;
    size_t nv = ls->nv, nl = ls->nl;
    /* values of B by rows and columns */
    csc *Br = &ls->Br, *Bc = &ls->Bc, *A = &ls->Ac;
    memset(Br->x, 0, (Br->nnz ? Br->nnz : 1) * sizeof *Br->x);
    memset(Bc->x, 0, (Bc->nnz ? Bc->nnz : 1) * sizeof *Bc->x);
    for (size_t m = 0; B && m < B->nnz; m++) {
        Br->x[Br->map[m]] += B->val[m];
        Bc->x[Bc->map[m]] += B->val[m];
    }
    /* A = M + w B^T B */
    memset(A->x, 0, (A->nnz ? A->nnz : 1) * sizeof *A->x);
    double mmax = 0.0, bmax = 0.0;
    size_t ka = 0;
    for (size_t m = 0; m < M->nnz; m++) {
        if (M->row[m] == M->col[m])
            mmax = fmax(mmax, fabs(M->val[m]));
        if (M->row[m] <= M->col[m])
            A->x[A->map[ka++]] += M->val[m];
    }
    ls->wgt = 0.0;
    if (ls->aug > 0.0 && B && B->nnz > 0) {
        for (size_t m = 0; m < B->nnz; m++)
            bmax = fmax(bmax, fabs(B->val[m]));
        ls->wgt = bmax > 0.0 ? ls->aug * (mmax > 0.0 ? mmax : 1.0) / (bmax * bmax) : 0.0;
        for (size_t kk = ls->nzt_m, pr = 0; kk < A->nzt; kk++, pr++)
            A->x[A->map[kk]] +=
                ls->wgt * B->val[ls->bt_pair[2 * pr]] * B->val[ls->bt_pair[2 * pr + 1]];
    }
    cholmod_sparse As = csc_view(A, 1);
    ls->st.factorizations++;
    cholmod_factorize(&As, ls->LA, c);
    int s = chm_factor_check(ls, ls->LA, ls->wgt > 0.0 ? "M + w B^T B" : "mass matrix", msg,
                             len);
    if (s != MBS_OK)
        return s;
    double rc = cholmod_rcond(ls->LA, c);
    size_t nnzL = (size_t)((int *)ls->LA->p)[nv];
    ls->st.n = ls->n;
    ls->st.nnz = A->nnz;
    ls->st.nnz_factor = nnzL;
    ls->st.rcond = rc;
    if (nl == 0)
        return MBS_OK;

    /* S = B A^-1 B^T = Y^T D^-1 Y with A = P^T L D L^T P and Y = L^-1 P B^T:
     * column i of Y is a sparse triangular solve whose pattern is the reach of
     * row i of B in the elimination tree (cholmod_solve2 with Bset), so for
     * block-diagonal M the work is linear in n. */
    const int *perm = ls->LA->Perm;
    int *iperm = ls->mark2;
    for (size_t k = 0; k < nv; k++)
        iperm[perm ? perm[k] : (int)k] = (int)k;
    if (!ls->Sp && !(ls->Sp = malloc((nl + 1) * sizeof *ls->Sp)))
        return MBS_NO_MEMORY;
    if (!ls->Yp && !(ls->Yp = malloc((nl + 1) * sizeof *ls->Yp)))
        return MBS_NO_MEMORY;
    double *bx = ls->bd->x;
    int *bsp = ls->bset->p, *bsi = ls->bset->i;
    size_t ynz = 0;
    for (size_t i = 0; i < nl; i++) {
        size_t cnt = 0;
        for (int q = Br->p[i]; q < Br->p[i + 1]; q++) {
            int pos = iperm[Br->i[q]];
            bx[pos] += Br->x[q];
            bsi[cnt++] = pos;
        }
        bsp[0] = 0;
        bsp[1] = (int)cnt;
        if (!cholmod_solve2(CHOLMOD_L, ls->LA, ls->bd, ls->bset, &ls->Xc, &ls->xset, &ls->Yc,
                            &ls->Ec, c))
            return chm_status(ls, "sparse solve", msg, len);
        for (int q = Br->p[i]; q < Br->p[i + 1]; q++)
            bx[iperm[Br->i[q]]] = 0.0;
        const int *xp = ls->xset->p, *xi = ls->xset->i;
        const double *xx = ls->Xc->x;
        size_t m = (size_t)(xp[1] - xp[0]);
        if (grow_Y(ls, ynz + m) != 0)
            return MBS_NO_MEMORY;
        ls->Yp[i] = (int)ynz;
        for (int q = xp[0]; q < xp[1]; q++) {
            ls->Yi[ynz] = xi[q];
            ls->Yx[ynz++] = xx[xi[q]];
        }
    }
    ls->Yp[nl] = (int)ynz;
    /* Y by rows (counting sort) */
    int *rp = ls->Yrp;
    memset(rp, 0, (nv + 1) * sizeof *rp);
    for (size_t q = 0; q < ynz; q++)
        rp[ls->Yi[q] + 1]++;
    for (size_t k = 0; k < nv; k++)
        rp[k + 1] += rp[k];
    for (size_t i = 0; i < nl; i++)
        for (int q = ls->Yp[i]; q < ls->Yp[i + 1]; q++) {
            int k = ls->Yi[q];
            ls->Yrc[rp[k]] = (int)i;
            ls->Yrx[rp[k]++] = ls->Yx[q];
        }
    for (size_t k = nv; k > 0; k--)
        rp[k] = rp[k - 1];
    rp[0] = 0;
    /* D of the LDL^T factor (1 for LL^T) */
    const int *Lp = ls->LA->p;
    const double *Lx = ls->LA->x;
    size_t snz = 0;
    for (size_t i = 0; i < nl; i++) {
        size_t nlist = 0;
        for (int q = ls->Yp[i]; q < ls->Yp[i + 1]; q++) {
            int k = ls->Yi[q];
            double yk = ls->Yx[q] / (ls->LA->is_ll ? 1.0 : Lx[Lp[k]]);
            for (int r = rp[k]; r < rp[k + 1]; r++) {
                int j = ls->Yrc[r];
                if ((size_t)j > i)
                    continue;
                if (ls->mark[j] != (int)i) {
                    ls->mark[j] = (int)i;
                    ls->acc[j] = 0.0;
                    ls->list[nlist++] = j;
                }
                ls->acc[j] += ls->Yrx[r] * yk;
            }
        }
        qsort(ls->list, nlist, sizeof *ls->list, cmp_int);
        if (grow_S(ls, snz + nlist) != 0)
            return MBS_NO_MEMORY;
        ls->Sp[i] = (int)snz;
        for (size_t q = 0; q < nlist; q++) {
            ls->Si[snz] = ls->list[q];
            ls->Sx[snz++] = ls->acc[ls->list[q]];
        }
    }
    ls->Sp[nl] = (int)snz;
    for (size_t j = 0; j < nl; j++)
        ls->mark[j] = -1;
    ls->Snz = snz;
    csc Sc = {.nr = nl, .nc = nl, .p = ls->Sp, .i = ls->Si, .x = ls->Sx, .nnz = snz};
    cholmod_sparse Ss = csc_view(&Sc, 1);
    int same = ls->LS && ls->Snz0 == snz && memcmp(ls->Sp0, ls->Sp, (nl + 1) * sizeof(int)) == 0 &&
               memcmp(ls->Si0, ls->Si, snz * sizeof(int)) == 0;
    if (!same) {
        cholmod_free_factor(&ls->LS, c);
        ls->LS = cholmod_analyze(&Ss, c);
        if (!ls->LS)
            return chm_status(ls, "analysis of B A^-1 B^T", msg, len);
        ls->st.analyses++;
        free(ls->Sp0);
        free(ls->Si0);
        ls->Sp0 = malloc((nl + 1) * sizeof(int));
        ls->Si0 = malloc((snz ? snz : 1) * sizeof(int));
        if (!ls->Sp0 || !ls->Si0)
            return MBS_NO_MEMORY;
        memcpy(ls->Sp0, ls->Sp, (nl + 1) * sizeof(int));
        memcpy(ls->Si0, ls->Si, snz * sizeof(int));
        ls->Snz0 = snz;
    }
    ls->st.factorizations++;
    cholmod_factorize(&Ss, ls->LS, c);
    if ((s = chm_factor_check(ls, ls->LS, "B A^-1 B^T", msg, len)) != MBS_OK)
        return s;
    ls->st.rcond = fmin(rc, cholmod_rcond(ls->LS, c));
    ls->st.nnz += snz;
    ls->st.nnz_factor += (size_t)((int *)ls->LS->p)[nl];
    return MBS_OK;
}

static int chm_solveA(mbs_linsol *ls, cholmod_factor *L, double *rhs, size_t n,
                      cholmod_dense **X, cholmod_dense **Y, cholmod_dense **E, char *msg,
                      size_t len)
{
    cholmod_dense b;
    memset(&b, 0, sizeof b);
    b.nrow = n;
    b.ncol = 1;
    b.nzmax = n;
    b.d = n;
    b.x = rhs;
    b.xtype = CHOLMOD_REAL;
    b.dtype = CHOLMOD_DOUBLE;
    if (!cholmod_solve2(CHOLMOD_A, L, &b, NULL, X, NULL, Y, E, &ls->cc))
        return chm_status(ls, "solve", msg, len);
    memcpy(rhs, (*X)->x, n * sizeof *rhs);
    return MBS_OK;
}

static int chm_solve(mbs_linsol *ls, const double *f, const double *gam, double *a,
                     double *lambda, char *msg, size_t len)
{
    size_t nv = ls->nv, nl = ls->nl;
    const csc *Br = &ls->Br;
    double *ft = ls->tv; /* f~ = f + w B^T gamma */
    memcpy(ft, f, nv * sizeof *f);
    if (ls->wgt > 0.0)
        for (size_t i = 0; i < nl; i++)
            for (int q = Br->p[i]; q < Br->p[i + 1]; q++)
                ft[Br->i[q]] += ls->wgt * Br->x[q] * gam[i];
    memcpy(a, ft, nv * sizeof *a);
    int s = chm_solveA(ls, ls->LA, a, nv, &ls->XA, &ls->YA, &ls->EA, msg, len);
    if (s != MBS_OK || nl == 0)
        return s;
    /* lambda = S^-1 (B A^-1 f~ - gamma) */
    for (size_t i = 0; i < nl; i++) {
        double r = -gam[i];
        for (int q = Br->p[i]; q < Br->p[i + 1]; q++)
            r += Br->x[q] * a[Br->i[q]];
        ls->rl[i] = r;
    }
    if ((s = chm_solveA(ls, ls->LS, ls->rl, nl, &ls->XS, &ls->YS, &ls->ES, msg, len)) != MBS_OK)
        return s;
    /* a = A^-1 (f~ - B^T lambda) */
    for (size_t i = 0; i < nl; i++)
        for (int q = Br->p[i]; q < Br->p[i + 1]; q++)
            ft[Br->i[q]] -= Br->x[q] * ls->rl[i];
    memcpy(a, ft, nv * sizeof *a);
    if ((s = chm_solveA(ls, ls->LA, a, nv, &ls->XA, &ls->YA, &ls->EA, msg, len)) != MBS_OK)
        return s;
    if (lambda)
        memcpy(lambda, ls->rl, nl * sizeof *lambda);
    return MBS_OK;
}

/* ---- interface ----------------------------------------------------------------- */

int mbs_linsol_factor(mbs_linsol *ls, const mbs_triplets *M, const mbs_triplets *B, char *msg,
                      size_t len)
{
    static const mbs_triplets empty = {0};
    if (!B || ls->nl == 0)
        B = &empty;
    int s = check_triplets(ls, M, B, msg, len);
    if (s != MBS_OK)
        return s;
    int same = ls->analysed && same_pattern(ls->pm_n, ls->pm_r, ls->pm_c, M) &&
               same_pattern(ls->pb_n, ls->pb_r, ls->pb_c, B);
    if (!same) {
        ls->analysed = 0;
        if (ls->kind == MBS_LS_UMFPACK)
            s = umf_analyse(ls, M, B, msg, len);
        else if (ls->kind == MBS_LS_CHOLMOD) {
            s = chm_analyse_B(ls, B);
            if (s == MBS_OK)
                s = chm_analyse_A(ls, M, B, msg, len);
        } else
            ls->st.analyses++;
        if (s == MBS_OK && (save_pattern(&ls->pm_n, &ls->pm_r, &ls->pm_c, M) != 0 ||
                            save_pattern(&ls->pb_n, &ls->pb_r, &ls->pb_c, B) != 0))
            s = MBS_NO_MEMORY;
        if (s != MBS_OK) {
            if (s == MBS_NO_MEMORY)
                snprintf(msg, len, "out of memory in the sparse analysis");
            return s;
        }
        ls->analysed = 1;
    }
    if (ls->kind == MBS_LS_DENSE) {
        ls->st.factorizations++;
        s = dense_factor(ls, M, B, msg, len);
    } else if (ls->kind == MBS_LS_UMFPACK) {
        ls->st.factorizations++;
        s = umf_factor(ls, M, B, msg, len);
    } else {
        s = chm_factor(ls, M, B, msg, len);
    }
    ls->st.fill = ls->st.nnz ? (double)ls->st.nnz_factor / (double)ls->st.nnz : NAN;
    return s;
}

int mbs_linsol_solve(mbs_linsol *ls, const double *f, const double *gam, double *a,
                     double *lambda, char *msg, size_t len)
{
    ls->st.solves++;
    if (ls->kind == MBS_LS_DENSE)
        return dense_solve(ls, f, gam, a, lambda, msg, len);
    if (ls->kind == MBS_LS_UMFPACK)
        return umf_solve(ls, f, gam, a, lambda, msg, len);
    return chm_solve(ls, f, gam, a, lambda, msg, len);
}

void mbs_linsol_get_stats(const mbs_linsol *ls, mbs_linsol_stats *st)
{
    *st = ls->st;
}
