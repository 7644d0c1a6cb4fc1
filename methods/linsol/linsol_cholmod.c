/* The CHOLMOD backend of linsol.h: the KKT system solved in the range space,
 * M = L L^T (CHOLMOD), the Schur complement S = B M^-1 B^T from Y = L^-1 P B^T
 * by columns and rows, factored again by CHOLMOD ([pennestri_coordinate_reduction], Eqs. (3)-(8) in
 * sparse form).  Split from linsol.c. */
#include <float.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/status.h"
#include "../../core/gslalloc.h"
#include "linsol_impl.h"

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

/* A = M (+ w B^T B): upper-triangle triplets (stored transposed, as the lower
 * triangle); the B^T B products are listed as
 * pairs of B triplets ([dca_augmented_lagrangian] Sect. 2: augmented Lagrangian; any w > 0 leaves
 * the solution unchanged because B a = gamma). */
int mbs_ls_chm_analyse_A(mbs_linsol *ls, const mbs_triplets *M, const mbs_triplets *B,
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
    if (mbs_ls_reserve_tij(ls, nz ? nz : 1) != 0)
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
    /* stored as the lower triangle (the upper-triangle triplets transposed):
     * cholmod_factorize then forms triu(P A P') with one transpose instead of
     * two; the matrix it factors, and so the factor, is the same */
    if (mbs_csc_build(&ls->Ac, ls->nv, ls->nv, k, ls->tj, ls->ti) != 0)
        return MBS_NO_MEMORY;
    cholmod_sparse A = csc_view(&ls->Ac, -1);
    cholmod_free_factor(&ls->LA, &ls->cc);
    ls->LA_ok = ls->LA_unit = 0;
    ls->LA = cholmod_analyze(&A, &ls->cc);
    if (!ls->LA)
        return chm_status(ls, "analysis of A", msg, len);
    ls->st.analyses++;
    return MBS_OK;
}

/* B by rows (as B^T in CSC, nv x nl) and by columns (nl x nv). */
int mbs_ls_chm_analyse_B(mbs_linsol *ls, const mbs_triplets *B)
{
    size_t nb = B ? B->nnz : 0;
    if (mbs_ls_reserve_tij(ls, nb ? nb : 1) != 0)
        return MBS_NO_MEMORY;
    for (size_t m = 0; m < nb; m++) {
        ls->ti[m] = (int)B->col[m];
        ls->tj[m] = (int)B->row[m];
    }
    if (mbs_csc_build(&ls->Br, ls->nv, ls->nl, nb, ls->ti, ls->tj) != 0 ||
        mbs_csc_build(&ls->Bc, ls->nl, ls->nv, nb, ls->tj, ls->ti) != 0)
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

int mbs_ls_chm_factor(mbs_linsol *ls, const mbs_triplets *M, const mbs_triplets *B,
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
    /* A bit for bit as at the last factorisation (a constant mass matrix, and
     * for A = M + w B^T B an unchanged B): keep LA.  Only S = B A^-1 B^T below
     * is factored again; the counts say so (one factorisation, of S). */
    int s;
    double rc;
    size_t anz = A->nnz ? A->nnz : 1;
    if (ls->LA_ok && memcmp(ls->Ax0, A->x, anz * sizeof *A->x) == 0) {
        rc = ls->rcA;
    } else {
        cholmod_sparse As = csc_view(A, -1);
        ls->LA_ok = ls->LA_unit = 0;
        ls->st.factorizations++;
        cholmod_factorize(&As, ls->LA, c);
        s = chm_factor_check(ls, ls->LA, ls->wgt > 0.0 ? "M + w B^T B" : "mass matrix", msg,
                             len);
        if (s != MBS_OK)
            return s;
        rc = cholmod_rcond(ls->LA, c);
        if (anz > ls->Ax0cap) {
            double *x = realloc(ls->Ax0, anz * sizeof *x);
            if (!x)
                return MBS_NO_MEMORY;
            ls->Ax0 = x;
            ls->Ax0cap = anz;
        }
        memcpy(ls->Ax0, A->x, anz * sizeof *A->x);
        ls->rcA = rc;
        ls->LA_ok = 1;
        const int *Lnz = ls->LA->nz;
        ls->LA_unit = !ls->LA->is_ll && !ls->LA->is_super && Lnz != NULL;
        for (size_t j = 0; j < nv && ls->LA_unit; j++)
            ls->LA_unit = Lnz[j] == 1;
        if (ls->LA_unit) { /* D in the original order, for the solves */
            if (!ls->dA && !(ls->dA = malloc(nv * sizeof *ls->dA))) {
                ls->LA_ok = 0;
                return MBS_NO_MEMORY;
            }
            const int *Perm = ls->LA->Perm, *Lp = ls->LA->p;
            const double *Lx = ls->LA->x;
            for (size_t k = 0; k < nv; k++)
                ls->dA[Perm ? (size_t)Perm[k] : k] = Lx[Lp[k]];
        }
    }
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
        if (ls->LA_unit) {
            /* L = I: column i of Y is P times row i of B, as the sparse solve
             * below returns it (the solve leaves b unchanged; its Xset lists a
             * diagonal L's reach in the reverse order of Bset) */
            size_t m = (size_t)(Br->p[i + 1] - Br->p[i]);
            if (grow_Y(ls, ynz + m) != 0)
                return MBS_NO_MEMORY;
            ls->Yp[i] = (int)ynz;
            for (int q = Br->p[i + 1] - 1; q >= Br->p[i]; q--) {
                ls->Yi[ynz] = iperm[Br->i[q]];
                ls->Yx[ynz++] = 0.0 + Br->x[q];
            }
            continue;
        }
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

/* CHOLMOD 3.0's simplicial solve asks for its workspace Y as 4 x n (blocks of
 * up to four right-hand sides) but leaves it shaped k x n after a block of k < 4
 * columns, so cholmod_ensure_dense frees and reallocates Y on every later call
 * (two mallocs per solve, a sixth of the chain's radau5 run).  Restoring the
 * shape it was allocated with (its storage, nzmax >= 4 n, is unchanged) keeps
 * the workspace. */
static void keep_workspace(cholmod_dense *Y, size_t n)
{
    if (Y && Y->ncol == n && Y->nzmax >= 4 * n && Y->xtype == CHOLMOD_REAL) {
        Y->nrow = 4;
        Y->d = 4;
    }
}

/* rhs (k columns of length n, overwritten) = (L L^T)^-1 rhs with the solution
 * and workspace handles X, Y, E of this factor and column count. */
static int chm_solveA(mbs_linsol *ls, cholmod_factor *L, double *rhs, size_t n, size_t k,
                      cholmod_dense **X, cholmod_dense **Y, cholmod_dense **E, char *msg,
                      size_t len)
{
    cholmod_dense b;
    memset(&b, 0, sizeof b);
    b.nrow = n;
    b.ncol = k;
    b.nzmax = n * k;
    b.d = n;
    b.x = rhs;
    b.xtype = CHOLMOD_REAL;
    b.dtype = CHOLMOD_DOUBLE;
    keep_workspace(*Y, n);
    if (!cholmod_solve2(CHOLMOD_A, L, &b, NULL, X, NULL, Y, E, &ls->cc))
        return chm_status(ls, "solve", msg, len);
    memcpy(rhs, (*X)->x, n * k * sizeof *rhs);
    return MBS_OK;
}

/* rhs (k columns of length nv, overwritten) = A^-1 rhs: CHOLMOD's LDL^T solve,
 * or for L = I its arithmetic without the call (each entry divided by its D;
 * the permutation and the unit triangular solves change nothing). */
static int solve_A(mbs_linsol *ls, double *rhs, size_t k, cholmod_dense **XA, char *msg,
                   size_t len)
{
    size_t nv = ls->nv;
    if (!ls->LA_unit)
        return chm_solveA(ls, ls->LA, rhs, nv, k, XA, &ls->YA, &ls->EA, msg, len);
    const double *d = ls->dA;
    for (size_t c = 0; c < k; c++)
        for (size_t i = 0; i < nv; i++)
            rhs[c * nv + i] /= d[i];
    return MBS_OK;
}

/* Range-space solve of k <= MBS_LINSOL_MAX_RHS columns (see linsol.h); the
 * columns share each CHOLMOD call. */
int mbs_ls_chm_solve(mbs_linsol *ls, size_t k, const double *f, const double *gam, double *a,
                     double *lambda, char *msg, size_t len)
{
    size_t nv = ls->nv, nl = ls->nl;
    const csc *Br = &ls->Br;
    double *ft = ls->tv, *rl = ls->rl; /* f~ = f + w B^T gamma (k columns) */
    cholmod_dense **XA = &ls->XAk[k - 1], **XS = &ls->XSk[k - 1];
    memcpy(ft, f, k * nv * sizeof *f);
    if (ls->wgt > 0.0)
        for (size_t c = 0; c < k; c++)
            for (size_t i = 0; i < nl; i++)
                for (int q = Br->p[i]; q < Br->p[i + 1]; q++)
                    ft[c * nv + (size_t)Br->i[q]] += ls->wgt * Br->x[q] * gam[c * nl + i];
    memcpy(a, ft, k * nv * sizeof *a);
    int s = solve_A(ls, a, k, XA, msg, len);
    if (s != MBS_OK || nl == 0)
        return s;
    /* lambda = S^-1 (B A^-1 f~ - gamma) */
    for (size_t c = 0; c < k; c++)
        for (size_t i = 0; i < nl; i++) {
            double r = -gam[c * nl + i];
            for (int q = Br->p[i]; q < Br->p[i + 1]; q++)
                r += Br->x[q] * a[c * nv + (size_t)Br->i[q]];
            rl[c * nl + i] = r;
        }
    if ((s = chm_solveA(ls, ls->LS, rl, nl, k, XS, &ls->YS, &ls->ES, msg, len)) != MBS_OK)
        return s;
    /* a = A^-1 (f~ - B^T lambda) */
    for (size_t c = 0; c < k; c++)
        for (size_t i = 0; i < nl; i++)
            for (int q = Br->p[i]; q < Br->p[i + 1]; q++)
                ft[c * nv + (size_t)Br->i[q]] -= Br->x[q] * rl[c * nl + i];
    memcpy(a, ft, k * nv * sizeof *a);
    if ((s = solve_A(ls, a, k, XA, msg, len)) != MBS_OK)
        return s;
    if (lambda)
        memcpy(lambda, rl, k * nl * sizeof *lambda);
    return MBS_OK;
}
