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

#include "../../core/status.h"
#include "../../core/gslalloc.h"
#include "linsol_impl.h"

void mbs_csc_free(mbs_csc *A)
{
    free(A->p);
    free(A->i);
    free(A->x);
    free(A->map);
    memset(A, 0, sizeof *A);
}

/* Two stable counting sorts (by row, then by column), then duplicates merged. */
int mbs_csc_build(mbs_csc *A, size_t nr, size_t nc, size_t nzt, const int *ti, const int *tj)
{
    mbs_csc_free(A);
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
        mbs_csc_free(A);
        return -1;
    }
    return 0;
}

const char *mbs_linsol_name(int kind)
{
    switch (kind) {
    case MBS_LS_DENSE:
        return "dense";
    case MBS_LS_UMFPACK:
        return "umfpack";
    case MBS_LS_CHOLMOD:
        return "cholmod";
    case MBS_LS_KLU:
        return "klu";
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
    mbs_csc_free(&ls->Kc);
    if (ls->num)
        umfpack_di_free_numeric(&ls->num);
    if (ls->sym)
        umfpack_di_free_symbolic(&ls->sym);
    free(ls->Wi);
    free(ls->W);
    free(ls->kb);
    free(ls->kx);
    mbs_csc_free(&ls->Ac);
    mbs_csc_free(&ls->Br);
    mbs_csc_free(&ls->Bc);
    free(ls->bt_pair);
    free(ls->Ax0);
    free(ls->dA);
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
        cholmod_dense **d[] = {&ls->bd, &ls->YA, &ls->EA, &ls->YS,
                               &ls->ES, &ls->Xc, &ls->Yc, &ls->Ec};
        for (size_t k = 0; k < sizeof d / sizeof d[0]; k++)
            cholmod_free_dense(d[k], c);
        for (size_t k = 0; k < MBS_LINSOL_MAX_RHS; k++) {
            cholmod_free_dense(&ls->XAk[k], c);
            cholmod_free_dense(&ls->XSk[k], c);
        }
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
        ls->tv = malloc(MBS_LINSOL_MAX_RHS * nv * sizeof *ls->tv); /* k columns */
        ls->rl = malloc(MBS_LINSOL_MAX_RHS * nlc * sizeof *ls->rl);
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

int mbs_ls_reserve_tij(mbs_linsol *ls, size_t n)
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
    if (mbs_ls_reserve_tij(ls, nz ? nz : 1) != 0)
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
    if (mbs_csc_build(&ls->Kc, ls->n, ls->n, nz, ls->ti, ls->tj) != 0)
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
            s = mbs_ls_chm_analyse_B(ls, B);
            if (s == MBS_OK)
                s = mbs_ls_chm_analyse_A(ls, M, B, msg, len);
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
        s = mbs_ls_chm_factor(ls, M, B, msg, len);
    }
    ls->st.fill = ls->st.nnz ? (double)ls->st.nnz_factor / (double)ls->st.nnz : NAN;
    return s;
}

int mbs_linsol_solve(mbs_linsol *ls, const double *f, const double *gam, double *a,
                     double *lambda, char *msg, size_t len)
{
    return mbs_linsol_solve_k(ls, 1, f, gam, a, lambda, msg, len);
}

int mbs_linsol_solve_k(mbs_linsol *ls, size_t k, const double *f, const double *gam, double *a,
                       double *lambda, char *msg, size_t len)
{
    if (k < 1 || k > MBS_LINSOL_MAX_RHS) {
        snprintf(msg, len, "%zu right-hand sides (1 to %d supported)", k, MBS_LINSOL_MAX_RHS);
        return MBS_BAD_INPUT;
    }
    ls->st.solves += (long)k;
    if (ls->kind == MBS_LS_CHOLMOD)
        return mbs_ls_chm_solve(ls, k, f, gam, a, lambda, msg, len);
    size_t nv = ls->nv, nl = ls->nl;
    for (size_t c = 0; c < k; c++) {
        double *lc = lambda ? lambda + c * nl : NULL;
        int s = ls->kind == MBS_LS_DENSE
                    ? dense_solve(ls, f + c * nv, gam + c * nl, a + c * nv, lc, msg, len)
                    : umf_solve(ls, f + c * nv, gam + c * nl, a + c * nv, lc, msg, len);
        if (s != MBS_OK)
            return s;
    }
    return MBS_OK;
}

void mbs_linsol_get_stats(const mbs_linsol *ls, mbs_linsol_stats *st)
{
    *st = ls->st;
}
