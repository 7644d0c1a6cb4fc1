/* Divide-and-conquer algorithm (DCA) with augmented-Lagrangian multipliers and
 * mass-orthogonal projections (seed 003, Sects. 2-3).
 *
 * Bodies are the diagonal blocks of M (connected components of its sparsity
 * pattern); a constraint row couples the bodies its row of B = G H touches.
 * The bodies, in index order, are the leaves of a balanced binary tree
 * (seed 003 Fig. 1); a row whose bodies lie in different subtrees is
 * eliminated at their lowest common node, a row within one body is local.
 *
 * Augmented Lagrangian (seed 003 Eqs. (6)-(8), (17)): every multiplier is
 *     lambda = lambda* + alpha (B v' - gamma),
 * iterated from lambda* = 0 until |B v' - gamma| <= eps_a (Sect. 4.1: 1e-10)
 * or 10 iterations, penalty alpha = 1e6.  Each iteration is one assembly and
 * one disassembly pass, written in the compliance ("inverse inertia") form:
 *   leaf (body b, local rows L, open rows O):
 *     (M_b + alpha B_L^T B_L) v_b' = f_b - B_L^T (lambda*_L - alpha gamma_L) - B_O^T lambda_O,
 *     so v_b' = Phi_b lambda_O + b_b   (Eqs. (9), (10));
 *   node (children 1, 2 joined by rows J, open rows O):
 *     D lambda_J = lambda*_J / alpha - gamma_J + sum_k B_Jk (Phi_k lambda_Ok + b_k),
 *     D = I / alpha - sum_k B_Jk Phi_kJ, symmetric positive definite even when
 *     B_J is rank deficient (the matrix C of Eq. (20)), lambda_J = c_J + E_J lambda_O,
 *     and the handle accelerations of the union follow (Eqs. (21)-(32));
 *   root: no open rows; disassembly from the root gives every lambda_J and,
 *     at the leaves, every v_b' (Sect. 2.3).
 * The dca-proj variant adds after every accepted step the mass-orthogonal
 * projections of Sect. 3 (positions: M dq + B^T s = 0, B dq = -g; velocities:
 * M dv + B^T s = 0, B dv = -(B v + g_t)), solved by the same DCA passes with
 * iteration limits 10 and tolerances eps_p = 1e-14, eps_v = 1e-12 (Sect. 4.1).
 * Sequential; the structure (bodies, tree, row assignment) is analysed at the
 * first evaluation and again only when the pattern of M or B changes.  M and B
 * are kept as triplets: problems with mass_sparse/jacobian_sparse and H = I
 * (chain) are evaluated sparsely, so a pass costs O(N) for a chain; others
 * densely, with the union of the nonzero patterns seen so far as structure. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explicit.h"
#include "../core/gslalloc.h"
#include "method.h"
#include "../problems/triplets.h"

typedef struct dnode {
    int leaf;          /* body index, or -1 */
    int child[2];
    size_t lo, hi;     /* body range */
    int parent;
    int *h;            /* handle coordinates */
    size_t nh;
    int *o;            /* open rows */
    size_t no;
    int *J;            /* rows eliminated here (internal) or local rows (leaf) */
    size_t nJ;
    double *Phi;       /* nh x no */
    double *b;         /* nh */
    double *cJ, *EJ;   /* nJ, nJ x no (internal) */
} dnode;

typedef struct dca_ws {
    size_t nv, nl;
    int proj;
    double alpha, eps_a;
    int maxit;
    int native;            /* triplet callbacks of the problem */
    mbs_triplets Mt, Bt;   /* M and B as triplets (structural) */
    size_t *pm_r, *pm_c, *pb_r, *pb_c, pm_n, pb_n; /* pattern of the analysis */
    gsl_matrix *Md, *Bd;   /* dense fallback */
    unsigned char *patM, *patB;
    int analysed;
    /* bodies */
    size_t nb;
    int *body;          /* body of each coordinate */
    int *bidx;          /* index of a coordinate within its body */
    int *bptr, *bcrd;   /* coordinates of each body (CSR) */
    size_t *boff;       /* offset of each body's block in Mblk */
    double *Mblk;       /* diagonal blocks of M */
    int *mmap;          /* M triplet -> Mblk position */
    /* rows of B (CSR, duplicates allowed) */
    int *rptr, *rcrd;
    double *rval;
    int *bmap;          /* B triplet -> CSR position */
    int *rnode;         /* node where the row is eliminated (-1: touches no coordinate) */
    int *leafnode;      /* node of each body's leaf */
    dnode *nd;
    size_t nn;
    int root;
    /* scratch */
    int *pos, *rpos, *mark;
    double *lam, *lamstar, *f, *gam, *acc, *dq, *qd, *gt;
    gsl_matrix *Dm, *Xm;
    size_t maxJ, maxcols;
    int last_iters;
} dca_ws;

static void free_nodes(dca_ws *w)
{
    for (size_t k = 0; k < w->nn; k++) {
        dnode *n = &w->nd[k];
        free(n->h);
        free(n->o);
        free(n->J);
        free(n->Phi);
        free(n->b);
        free(n->cJ);
        free(n->EJ);
    }
    free(w->nd);
    w->nd = NULL;
    w->nn = 0;
    free(w->bptr);
    free(w->bcrd);
    free(w->rptr);
    free(w->rcrd);
    free(w->rnode);
    free(w->leafnode);
    free(w->bidx);
    free(w->boff);
    free(w->Mblk);
    free(w->mmap);
    free(w->rval);
    free(w->bmap);
    w->bptr = w->bcrd = w->rptr = w->rcrd = w->rnode = w->leafnode = NULL;
    w->bidx = w->mmap = w->bmap = NULL;
    w->boff = NULL;
    w->Mblk = w->rval = NULL;
    if (w->Dm)
        gsl_matrix_free(w->Dm);
    if (w->Xm)
        gsl_matrix_free(w->Xm);
    w->Dm = w->Xm = NULL;
}

static void dca_free(void *p)
{
    dca_ws *w = p;
    if (!w)
        return;
    free_nodes(w);
    mbs_triplets_free(&w->Mt);
    mbs_triplets_free(&w->Bt);
    free(w->pm_r);
    free(w->pm_c);
    free(w->pb_r);
    free(w->pb_c);
    if (w->Md)
        gsl_matrix_free(w->Md);
    if (w->Bd)
        gsl_matrix_free(w->Bd);
    free(w->patM);
    free(w->patB);
    free(w->body);
    free(w->pos);
    free(w->rpos);
    free(w->mark);
    free(w->lam);
    free(w->lamstar);
    free(w->f);
    free(w->gam);
    free(w->acc);
    free(w->dq);
    free(w->qd);
    free(w->gt);
    free(w);
}

enum { P_ALPHA, P_MAXIT, P_EPSA };

static int dca_alloc_common(void **out, mbs_ctx *ctx, const mbs_params *p, int proj)
{
    const mbs_problem *pb = ctx->pb;
    *out = NULL;
    dca_ws *w = calloc(1, sizeof *w);
    if (!w)
        return MBS_NO_MEMORY;
    size_t nv = pb->nv, nl = pb->nl, nlc = nl ? nl : 1;
    w->nv = nv;
    w->nl = nl;
    w->proj = proj;
    w->alpha = p->val[P_ALPHA];
    w->maxit = (int)p->val[P_MAXIT];
    w->eps_a = p->val[P_EPSA];
    w->native = pb->def->mass_sparse && pb->def->jacobian_sparse && !pb->def->kinematic;
    if (!w->native) {
        w->Md = mbs_matrix_alloc(nv, nv);
        w->Bd = mbs_matrix_alloc(nlc, nv);
        w->patM = calloc(nv * nv, 1);
        w->patB = calloc(nlc * nv, 1);
        if (!w->Md || !w->Bd || !w->patM || !w->patB) {
            dca_free(w);
            return MBS_NO_MEMORY;
        }
    }
    w->body = malloc(nv * sizeof *w->body);
    w->pos = malloc(nv * sizeof *w->pos);
    w->rpos = malloc(nlc * sizeof *w->rpos);
    w->mark = malloc((nv > nlc ? nv : nlc) * sizeof *w->mark);
    w->lam = calloc(nlc, sizeof *w->lam);
    w->lamstar = calloc(nlc, sizeof *w->lamstar);
    w->f = malloc(nv * sizeof *w->f);
    w->gam = calloc(nlc, sizeof *w->gam);
    w->acc = malloc(nv * sizeof *w->acc);
    w->dq = malloc(nv * sizeof *w->dq);
    w->qd = malloc(pb->nq * sizeof *w->qd);
    w->gt = calloc(nlc, sizeof *w->gt);
    if (!w->body || !w->pos || !w->rpos || !w->mark || !w->lam || !w->lamstar || !w->f ||
        !w->gam || !w->acc || !w->dq || !w->qd || !w->gt) {
        dca_free(w);
        return MBS_NO_MEMORY;
    }
    *out = w;
    return MBS_OK;
}

/* ---- structure analysis -------------------------------------------------------- */

static int find(int *par, int i)
{
    while (par[i] != i) {
        par[i] = par[par[i]];
        i = par[i];
    }
    return i;
}

static int build_tree(dca_ws *w, size_t lo, size_t hi, int parent)
{
    int k = (int)w->nn++;
    dnode *n = &w->nd[k];
    n->lo = lo, n->hi = hi, n->parent = parent;
    if (hi - lo == 1) {
        n->leaf = (int)lo;
        n->child[0] = n->child[1] = -1;
        w->leafnode[lo] = k;
        return k;
    }
    n->leaf = -1;
    size_t mid = lo + (hi - lo) / 2;
    int c0 = build_tree(w, lo, mid, k);
    int c1 = build_tree(w, mid, hi, k);
    w->nd[k].child[0] = c0;
    w->nd[k].child[1] = c1;
    return k;
}

static int push(int **a, size_t *n, int v)
{
    int *p = realloc(*a, (*n + 1) * sizeof **a);
    if (!p)
        return -1;
    p[(*n)++] = v;
    *a = p;
    return 0;
}

static int analyse(dca_ws *w)
{
    size_t nv = w->nv, nl = w->nl;
    const mbs_triplets *M = &w->Mt, *B = &w->Bt;
    free_nodes(w);
    /* bodies: connected components of the pattern of M */
    int *par = malloc(nv * sizeof *par);
    if (!par)
        return MBS_NO_MEMORY;
    for (size_t i = 0; i < nv; i++)
        par[i] = (int)i;
    for (size_t k = 0; k < M->nnz; k++)
        if (M->row[k] != M->col[k]) {
            int x = find(par, (int)M->row[k]), y = find(par, (int)M->col[k]);
            if (x != y)
                par[x > y ? x : y] = x < y ? x : y;
        }
    for (size_t i = 0; i < nv; i++)
        w->mark[i] = -1;
    w->nb = 0;
    for (size_t i = 0; i < nv; i++) {
        int r = find(par, (int)i);
        if (w->mark[r] < 0)
            w->mark[r] = (int)w->nb++;
        w->body[i] = w->mark[r];
    }
    free(par);
    size_t nb = w->nb, nlc = nl ? nl : 1;
    w->bptr = calloc(nb + 1, sizeof *w->bptr);
    w->bcrd = malloc(nv * sizeof *w->bcrd);
    w->bidx = malloc(nv * sizeof *w->bidx);
    w->boff = malloc((nb + 1) * sizeof *w->boff);
    w->mmap = malloc((M->nnz ? M->nnz : 1) * sizeof *w->mmap);
    w->rptr = calloc(nlc + 1, sizeof *w->rptr);
    w->rcrd = malloc((B->nnz ? B->nnz : 1) * sizeof *w->rcrd);
    w->rval = calloc(B->nnz ? B->nnz : 1, sizeof *w->rval);
    w->bmap = malloc((B->nnz ? B->nnz : 1) * sizeof *w->bmap);
    w->rnode = malloc(nlc * sizeof *w->rnode);
    w->leafnode = malloc(nb * sizeof *w->leafnode);
    w->nd = calloc(2 * nb, sizeof *w->nd);
    if (!w->bptr || !w->bcrd || !w->bidx || !w->boff || !w->mmap || !w->rptr || !w->rcrd ||
        !w->rval || !w->bmap || !w->rnode || !w->leafnode || !w->nd)
        return MBS_NO_MEMORY;
    for (size_t i = 0; i < nv; i++)
        w->bptr[w->body[i] + 1]++;
    for (size_t b = 0; b < nb; b++)
        w->bptr[b + 1] += w->bptr[b];
    for (size_t b = 0; b < nb; b++)
        w->mark[b] = w->bptr[b];
    for (size_t i = 0; i < nv; i++) {
        int b = w->body[i];
        w->bidx[i] = w->mark[b] - w->bptr[b];
        w->bcrd[w->mark[b]++] = (int)i;
    }
    w->boff[0] = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t d = (size_t)(w->bptr[b + 1] - w->bptr[b]);
        w->boff[b + 1] = w->boff[b] + d * d;
    }
    w->Mblk = calloc(w->boff[nb] ? w->boff[nb] : 1, sizeof *w->Mblk);
    if (!w->Mblk)
        return MBS_NO_MEMORY;
    for (size_t k = 0; k < M->nnz; k++) {
        size_t i = M->row[k], j = M->col[k];
        int b = w->body[i];
        size_t d = (size_t)(w->bptr[b + 1] - w->bptr[b]);
        w->mmap[k] = (int)(w->boff[b] + (size_t)w->bidx[i] * d + (size_t)w->bidx[j]);
    }
    /* rows of B in CSR */
    for (size_t k = 0; k < B->nnz; k++)
        w->rptr[B->row[k] + 1]++;
    for (size_t r = 0; r < nl; r++)
        w->rptr[r + 1] += w->rptr[r];
    for (size_t r = 0; r < nl; r++)
        w->mark[r] = w->rptr[r];
    for (size_t k = 0; k < B->nnz; k++) {
        int q = w->mark[B->row[k]]++;
        w->rcrd[q] = (int)B->col[k];
        w->bmap[k] = q;
    }
    w->nn = 0;
    w->root = build_tree(w, 0, nb, -1);
    /* row assignment: lowest common node of the bodies a row touches */
    for (size_t r = 0; r < nl; r++) {
        int bmin = (int)nb, bmax = -1;
        for (int k = w->rptr[r]; k < w->rptr[r + 1]; k++) {
            int b = w->body[w->rcrd[k]];
            bmin = b < bmin ? b : bmin;
            bmax = b > bmax ? b : bmax;
        }
        if (bmax < 0) {
            w->rnode[r] = -1;
            continue;
        }
        int k = w->root;
        while (w->nd[k].leaf < 0) {
            dnode *n = &w->nd[k];
            size_t mid = w->nd[n->child[0]].hi;
            if ((size_t)bmax < mid)
                k = n->child[0];
            else if ((size_t)bmin >= mid)
                k = n->child[1];
            else
                break;
        }
        w->rnode[r] = k;
        if (push(&w->nd[k].J, &w->nd[k].nJ, (int)r) != 0)
            return MBS_NO_MEMORY;
        /* open in every node from the touched leaves up to k (exclusive) */
        for (int q = w->rptr[r]; q < w->rptr[r + 1]; q++) {
            int x = w->leafnode[w->body[w->rcrd[q]]];
            while (x != k) {
                dnode *n = &w->nd[x];
                if (n->no == 0 || n->o[n->no - 1] != (int)r)
                    if (push(&n->o, &n->no, (int)r) != 0)
                        return MBS_NO_MEMORY;
                x = n->parent;
            }
        }
    }
    /* handles: leaf = the body's coordinates; node = coordinates of its open rows */
    size_t maxJ = 1, maxcols = 1;
    for (size_t i = 0; i < nv; i++)
        w->mark[i] = -1;
    for (size_t k = 0; k < w->nn; k++) {
        dnode *n = &w->nd[k];
        if (n->leaf >= 0) {
            for (int q = w->bptr[n->leaf]; q < w->bptr[n->leaf + 1]; q++)
                if (push(&n->h, &n->nh, w->bcrd[q]) != 0)
                    return MBS_NO_MEMORY;
        } else {
            for (size_t a = 0; a < n->no; a++) {
                int r = n->o[a];
                for (int q = w->rptr[r]; q < w->rptr[r + 1]; q++) {
                    int c = w->rcrd[q];
                    size_t b = (size_t)w->body[c];
                    if (b >= n->lo && b < n->hi && w->mark[c] != (int)k) {
                        w->mark[c] = (int)k; /* stamp: node k */
                        if (push(&n->h, &n->nh, c) != 0)
                            return MBS_NO_MEMORY;
                    }
                }
            }
        }
        size_t nh1 = n->nh ? n->nh : 1, no1 = n->no ? n->no : 1, nJ1 = n->nJ ? n->nJ : 1;
        n->Phi = malloc(nh1 * no1 * sizeof *n->Phi);
        n->b = malloc(nh1 * sizeof *n->b);
        n->cJ = malloc(nJ1 * sizeof *n->cJ);
        n->EJ = malloc(nJ1 * no1 * sizeof *n->EJ);
        if (!n->Phi || !n->b || !n->cJ || !n->EJ)
            return MBS_NO_MEMORY;
        size_t dJ = n->leaf >= 0 ? (size_t)(w->bptr[n->leaf + 1] - w->bptr[n->leaf]) : n->nJ;
        maxJ = dJ > maxJ ? dJ : maxJ;
        maxcols = n->no + 1 > maxcols ? n->no + 1 : maxcols;
    }
    w->maxJ = maxJ;
    w->maxcols = maxcols;
    w->Dm = mbs_matrix_alloc(maxJ, maxJ);
    w->Xm = mbs_matrix_alloc(maxJ, maxcols);
    if (!w->Dm || !w->Xm)
        return MBS_NO_MEMORY;
    w->analysed = 1;
    return MBS_OK;
}

/* ---- one assembly/disassembly pass for given M, B, f, gamma, lambda* ------------ */

/* Solve D X = R in place (R: n x m in Xm), D in Dm (n x n), symmetric positive
 * definite: D = I / alpha + B_J C B_J^T with the children's compliances C. */
static int small_solve(dca_ws *w, size_t n, size_t m)
{
    gsl_matrix_view D = gsl_matrix_submatrix(w->Dm, 0, 0, n, n);
    if (gsl_linalg_cholesky_decomp1(&D.matrix) != GSL_SUCCESS)
        return MBS_SINGULAR_MATRIX;
    for (size_t j = 0; j < m; j++) {
        gsl_vector_view x = gsl_matrix_subcolumn(w->Xm, j, 0, n);
        if (gsl_linalg_cholesky_svx(&D.matrix, &x.vector) != GSL_SUCCESS)
            return MBS_SINGULAR_MATRIX;
    }
    return MBS_OK;
}

static int assemble_leaf(dca_ws *w, dnode *n)
{
    size_t d = n->nh, no = n->no;
    double al = w->alpha;
    const double *Mb = w->Mblk + w->boff[n->leaf];
    /* A = M_b + alpha B_L^T B_L into Dm; right-hand sides [f~ | -B_O^T] into Xm */
    for (size_t i = 0; i < d; i++) {
        for (size_t j = 0; j < d; j++)
            gsl_matrix_set(w->Dm, i, j, Mb[i * d + j]);
        gsl_matrix_set(w->Xm, i, 0, w->f[n->h[i]]);
        for (size_t a = 0; a < no; a++)
            gsl_matrix_set(w->Xm, i, a + 1, 0.0);
    }
    for (size_t l = 0; l < n->nJ; l++) {
        int r = n->J[l];
        double coef = w->lamstar[r] - al * w->gam[r];
        for (int p = w->rptr[r]; p < w->rptr[r + 1]; p++) {
            size_t i = (size_t)w->bidx[w->rcrd[p]];
            gsl_matrix_set(w->Xm, i, 0, gsl_matrix_get(w->Xm, i, 0) - w->rval[p] * coef);
            for (int p2 = w->rptr[r]; p2 < w->rptr[r + 1]; p2++) {
                size_t j = (size_t)w->bidx[w->rcrd[p2]];
                gsl_matrix_set(w->Dm, i, j,
                               gsl_matrix_get(w->Dm, i, j) + al * w->rval[p] * w->rval[p2]);
            }
        }
    }
    for (size_t a = 0; a < no; a++) {
        int r = n->o[a];
        for (int p = w->rptr[r]; p < w->rptr[r + 1]; p++)
            if (w->body[w->rcrd[p]] == n->leaf) {
                size_t i = (size_t)w->bidx[w->rcrd[p]];
                gsl_matrix_set(w->Xm, i, a + 1, gsl_matrix_get(w->Xm, i, a + 1) - w->rval[p]);
            }
    }
    gsl_matrix_view A = gsl_matrix_submatrix(w->Dm, 0, 0, d, d);
    if (gsl_linalg_cholesky_decomp1(&A.matrix) != GSL_SUCCESS)
        return MBS_SINGULAR_MATRIX;
    for (size_t j = 0; j <= no; j++) {
        gsl_vector_view x = gsl_matrix_subcolumn(w->Xm, j, 0, d);
        gsl_linalg_cholesky_svx(&A.matrix, &x.vector);
    }
    for (size_t i = 0; i < d; i++) {
        n->b[i] = gsl_matrix_get(w->Xm, i, 0);
        for (size_t a = 0; a < no; a++)
            n->Phi[i * no + a] = gsl_matrix_get(w->Xm, i, a + 1);
    }
    return MBS_OK;
}

static int assemble_node(dca_ws *w, dnode *n)
{
    size_t nJ = n->nJ, no = n->no;
    double al = w->alpha;
    /* positions: rows of J (0..nJ-1) and of O (nJ..) in rpos */
    for (size_t l = 0; l < nJ; l++)
        w->rpos[n->J[l]] = (int)l;
    for (size_t a = 0; a < no; a++)
        w->rpos[n->o[a]] = (int)(nJ + a);
    /* D = I/alpha - sum_k B_Jk Phi_kJ; X = [rhs0 | E] */
    for (size_t i = 0; i < nJ; i++) {
        for (size_t j = 0; j < nJ; j++)
            gsl_matrix_set(w->Dm, i, j, i == j ? 1.0 / al : 0.0);
        gsl_matrix_set(w->Xm, i, 0, w->lamstar[n->J[i]] / al - w->gam[n->J[i]]);
        for (size_t a = 0; a < no; a++)
            gsl_matrix_set(w->Xm, i, a + 1, 0.0);
    }
    for (int t = 0; t < 2; t++) {
        dnode *c = &w->nd[n->child[t]];
        for (size_t hh = 0; hh < c->nh; hh++)
            w->pos[c->h[hh]] = (int)hh;
    }
    size_t mid = w->nd[n->child[0]].hi;
    for (size_t i = 0; i < nJ; i++) {
        int r = n->J[i];
        for (int p = w->rptr[r]; p < w->rptr[r + 1]; p++) {
            double bv = w->rval[p];
            int crd = w->rcrd[p];
            dnode *c = &w->nd[n->child[(size_t)w->body[crd] < mid ? 0 : 1]];
            size_t hh = (size_t)w->pos[crd];
            const double *ph = c->Phi + hh * c->no;
            gsl_matrix_set(w->Xm, i, 0, gsl_matrix_get(w->Xm, i, 0) + bv * c->b[hh]);
            for (size_t a = 0; a < c->no; a++) {
                size_t q = (size_t)w->rpos[c->o[a]];
                if (q < nJ)
                    gsl_matrix_set(w->Dm, i, q, gsl_matrix_get(w->Dm, i, q) - bv * ph[a]);
                else
                    gsl_matrix_set(w->Xm, i, q - nJ + 1,
                                   gsl_matrix_get(w->Xm, i, q - nJ + 1) + bv * ph[a]);
            }
        }
    }
    int s = nJ > 0 ? small_solve(w, nJ, no + 1) : MBS_OK; /* no rows joined here */
    if (s != MBS_OK)
        return s;
    for (size_t i = 0; i < nJ; i++) {
        n->cJ[i] = gsl_matrix_get(w->Xm, i, 0);
        for (size_t a = 0; a < no; a++)
            n->EJ[i * no + a] = gsl_matrix_get(w->Xm, i, a + 1);
    }
    /* handle relations of the union */
    for (size_t hh = 0; hh < n->nh; hh++) {
        int crd = n->h[hh];
        dnode *c = &w->nd[n->child[(size_t)w->body[crd] < mid ? 0 : 1]];
        const double *ph = c->Phi + (size_t)w->pos[crd] * c->no;
        double *out = n->Phi + hh * no;
        for (size_t a = 0; a < no; a++)
            out[a] = 0.0;
        double bb = c->b[w->pos[crd]];
        for (size_t a = 0; a < c->no; a++) {
            size_t p = (size_t)w->rpos[c->o[a]];
            if (p < nJ) {
                bb += ph[a] * n->cJ[p];
                for (size_t e = 0; e < no; e++)
                    out[e] += ph[a] * n->EJ[p * no + e];
            } else {
                out[p - nJ] += ph[a];
            }
        }
        n->b[hh] = bb;
    }
    return MBS_OK;
}

static int assemble(dca_ws *w, int k)
{
    dnode *n = &w->nd[k];
    if (n->leaf >= 0)
        return assemble_leaf(w, n);
    int s;
    if ((s = assemble(w, n->child[0])) != MBS_OK || (s = assemble(w, n->child[1])) != MBS_OK)
        return s;
    return assemble_node(w, n);
}

static void disassemble(dca_ws *w, int k)
{
    dnode *n = &w->nd[k];
    if (n->leaf >= 0) {
        for (size_t i = 0; i < n->nh; i++) {
            double a = n->b[i];
            for (size_t e = 0; e < n->no; e++)
                a += n->Phi[i * n->no + e] * w->lam[n->o[e]];
            w->acc[n->h[i]] = a;
        }
        /* local rows: lambda = lambda* + alpha (B v' - gamma) */
        for (size_t l = 0; l < n->nJ; l++) {
            int r = n->J[l];
            double bv = -w->gam[r];
            for (int p = w->rptr[r]; p < w->rptr[r + 1]; p++)
                bv += w->rval[p] * w->acc[w->rcrd[p]];
            w->lam[r] = w->lamstar[r] + w->alpha * bv;
        }
        return;
    }
    for (size_t i = 0; i < n->nJ; i++) {
        double l = n->cJ[i];
        for (size_t e = 0; e < n->no; e++)
            l += n->EJ[i * n->no + e] * w->lam[n->o[e]];
        w->lam[n->J[i]] = l;
    }
    disassemble(w, n->child[0]);
    disassemble(w, n->child[1]);
}

/* The augmented-Lagrangian iteration around the passes: v' (w->acc) and lambda
 * (w->lam) for the current M, B, f, gamma; stops when |B v' - gamma| <= eps. */
static int dca_solve(dca_ws *w, mbs_ctx *ctx, double t, double eps)
{
    size_t nl = w->nl;
    memset(w->lamstar, 0, (nl ? nl : 1) * sizeof *w->lamstar);
    for (int it = 1; it <= w->maxit; it++) {
        int s = assemble(w, w->root);
        if (s != MBS_OK)
            return mbs_fail(ctx, s, t, "DCA: singular %s", "leaf or interface matrix");
        disassemble(w, w->root);
        for (size_t r = 0; r < nl; r++)
            if (w->rnode[r] < 0) /* a zero row of B exerts no force: lambda = 0 */
                w->lam[r] = 0.0;
        w->last_iters = it;
        double res = 0.0;
        for (size_t r = 0; r < nl; r++) {
            double bv = -w->gam[r];
            for (int q = w->rptr[r]; q < w->rptr[r + 1]; q++)
                bv += w->rval[q] * w->acc[w->rcrd[q]];
            if (w->rnode[r] >= 0)
                res = fmax(res, fabs(bv));
        }
        memcpy(w->lamstar, w->lam, nl * sizeof *w->lam);
        if (res <= eps)
            break;
    }
    return MBS_OK;
}

static int same_pattern(size_t n, const size_t *r, const size_t *c, const mbs_triplets *T)
{
    return n == T->nnz && (n == 0 || (memcmp(r, T->row, n * sizeof *r) == 0 &&
                                      memcmp(c, T->col, n * sizeof *c) == 0));
}

static int save_pattern(size_t *n, size_t **r, size_t **c, const mbs_triplets *T)
{
    size_t m = T->nnz ? T->nnz : 1;
    size_t *a = realloc(*r, m * sizeof *a);
    if (!a)
        return -1;
    *r = a;
    size_t *b = realloc(*c, m * sizeof *b);
    if (!b)
        return -1;
    *c = b;
    if (T->nnz) {
        memcpy(*r, T->row, T->nnz * sizeof **r);
        memcpy(*c, T->col, T->nnz * sizeof **c);
    }
    *n = T->nnz;
    return 0;
}

/* M and B at (t, q) as triplets; (re-)analyse when the pattern changed; values
 * into the body blocks and the row storage. */
static int eval_matrices(dca_ws *w, mbs_ctx *ctx, double t, const double *q)
{
    size_t nv = w->nv, nl = w->nl;
    int s, changed = !w->analysed;
    if (w->native) {
        if ((s = mbs_mass_sparse(ctx, t, q, &w->Mt)) != MBS_OK)
            return s;
        w->Bt.nnz = 0;
        if (nl > 0 && (s = mbs_jacobian_sparse(ctx, t, q, &w->Bt)) != MBS_OK)
            return s;
        changed = changed || !same_pattern(w->pm_n, w->pm_r, w->pm_c, &w->Mt) ||
                  !same_pattern(w->pb_n, w->pb_r, w->pb_c, &w->Bt);
    } else {
        if ((s = mbs_mass(ctx, t, q, w->Md)) != MBS_OK)
            return s;
        if (nl > 0) {
            gsl_matrix_view B = gsl_matrix_submatrix(w->Bd, 0, 0, nl, nv);
            if ((s = mbs_constraint_jacobian(ctx, t, q, &B.matrix)) != MBS_OK)
                return s;
        }
        for (size_t i = 0; i < nv * nv; i++)
            if (w->Md->data[i] != 0.0 && !w->patM[i])
                changed = 1, w->patM[i] = 1;
        for (size_t r = 0; r < nl; r++)
            for (size_t j = 0; j < nv; j++)
                if (gsl_matrix_get(w->Bd, r, j) != 0.0 && !w->patB[r * nv + j])
                    changed = 1, w->patB[r * nv + j] = 1;
        if (changed) { /* triplets of the union pattern */
            size_t nm = 0, nbz = 0;
            for (size_t i = 0; i < nv * nv; i++)
                nm += w->patM[i];
            for (size_t i = 0; i < nl * nv; i++)
                nbz += w->patB[i];
            w->Mt.nnz = w->Bt.nnz = 0;
            if (mbs_triplets_reserve(&w->Mt, nm) != 0 || mbs_triplets_reserve(&w->Bt, nbz) != 0)
                return MBS_NO_MEMORY;
            for (size_t i = 0; i < nv; i++)
                for (size_t j = 0; j < nv; j++)
                    if (w->patM[i * nv + j])
                        mbs_triplets_push(&w->Mt, i, j, 0.0);
            for (size_t r = 0; r < nl; r++)
                for (size_t j = 0; j < nv; j++)
                    if (w->patB[r * nv + j])
                        mbs_triplets_push(&w->Bt, r, j, 0.0);
        }
        for (size_t k = 0; k < w->Mt.nnz; k++)
            w->Mt.val[k] = gsl_matrix_get(w->Md, w->Mt.row[k], w->Mt.col[k]);
        for (size_t k = 0; k < w->Bt.nnz; k++)
            w->Bt.val[k] = gsl_matrix_get(w->Bd, w->Bt.row[k], w->Bt.col[k]);
    }
    if (changed) {
        if ((s = analyse(w)) != MBS_OK ||
            save_pattern(&w->pm_n, &w->pm_r, &w->pm_c, &w->Mt) != 0 ||
            save_pattern(&w->pb_n, &w->pb_r, &w->pb_c, &w->Bt) != 0)
            return mbs_fail(ctx, s != MBS_OK ? s : MBS_NO_MEMORY, t,
                            "DCA: structure analysis failed");
    }
    memset(w->Mblk, 0, (w->boff[w->nb] ? w->boff[w->nb] : 1) * sizeof *w->Mblk);
    for (size_t k = 0; k < w->Mt.nnz; k++)
        w->Mblk[w->mmap[k]] += w->Mt.val[k];
    for (size_t k = 0; k < w->Bt.nnz; k++)
        w->rval[w->bmap[k]] = w->Bt.val[k];
    return MBS_OK;
}

static int dca_eval(void *ws, mbs_ctx *ctx, double t, const double *q, const double *v,
                    double *vdot, double *lambda)
{
    dca_ws *w = ws;
    int s;
    if ((s = eval_matrices(w, ctx, t, q)) != MBS_OK ||
        (s = mbs_force(ctx, t, q, v, w->f)) != MBS_OK)
        return s;
    if (w->nl > 0 && (s = mbs_gamma(ctx, t, q, v, w->gam)) != MBS_OK)
        return s;
    mbs_count_factorization(ctx);
    if ((s = dca_solve(w, ctx, t, w->eps_a)) != MBS_OK)
        return s;
    mbs_count_solve(ctx);
    memcpy(vdot, w->acc, w->nv * sizeof *vdot);
    if (lambda)
        memcpy(lambda, w->lam, w->nl * sizeof *lambda);
    return MBS_OK;
}

/* Mass-orthogonal projections (seed 003 Sect. 3) with the DCA passes. */
static int dca_post(void *ws, mbs_ctx *ctx, double t, double *q, double *v)
{
    dca_ws *w = ws;
    const mbs_problem *pb = ctx->pb;
    size_t nv = w->nv, nl = w->nl;
    int s;
    if (!w->proj || nl == 0)
        return MBS_OK;
    memset(w->f, 0, nv * sizeof *w->f);
    for (int it = 0; it < w->maxit; it++) { /* positions: eps_p = 1e-14 */
        if ((s = mbs_constraint(ctx, t, q, w->gam)) != MBS_OK)
            return s;
        double gmax = 0.0;
        for (size_t r = 0; r < nl; r++)
            if (w->rnode[r] >= 0)
                gmax = fmax(gmax, fabs(w->gam[r]));
        if (gmax <= 1e-14)
            break;
        for (size_t r = 0; r < nl; r++)
            w->gam[r] = -w->gam[r];
        if ((s = eval_matrices(w, ctx, t, q)) != MBS_OK ||
            (s = dca_solve(w, ctx, t, 1e-14)) != MBS_OK)
            return s;
        if ((s = mbs_qdot(ctx, q, w->acc, w->qd)) != MBS_OK)
            return s;
        for (size_t i = 0; i < pb->nq; i++)
            q[i] += w->qd[i];
    }
    /* velocities: eps_v = 1e-12 */
    if ((s = eval_matrices(w, ctx, t, q)) != MBS_OK ||
        (s = mbs_constraint_t(ctx, t, q, w->gt)) != MBS_OK)
        return s;
    for (int it = 0; it < 2; it++) {
        double vmax = 0.0;
        for (size_t r = 0; r < nl; r++) {
            double bv = w->gt[r];
            for (int k = w->rptr[r]; k < w->rptr[r + 1]; k++)
                bv += w->rval[k] * v[w->rcrd[k]];
            w->gam[r] = -bv;
            if (w->rnode[r] >= 0)
                vmax = fmax(vmax, fabs(bv));
        }
        if (vmax <= 1e-12)
            break;
        if ((s = dca_solve(w, ctx, t, 1e-12)) != MBS_OK)
            return s;
        for (size_t i = 0; i < nv; i++)
            v[i] += w->acc[i];
    }
    return MBS_OK;
}

static const mbs_param_def dca_params[] = {
    [P_ALPHA] = {"alpha", 1e6, 1.0, 1e12, "penalty of the augmented Lagrangian (seed 003 Sect. 4.1)",
                 NULL, 0},
    [P_MAXIT] = {"maxit", 10, 1, 100, "maximum multiplier iterations per solve", NULL, 1},
    [P_EPSA] = {"eps_a", 1e-10, 0.0, 1.0,
                "stop when |B v' - gamma| <= eps_a (acceleration level, Sect. 4.1)", NULL, 0},
};

static int alloc_plain(void **ws, mbs_ctx *ctx, const mbs_params *p)
{
    return dca_alloc_common(ws, ctx, p, 0);
}

static int alloc_proj(void **ws, mbs_ctx *ctx, const mbs_params *p)
{
    return dca_alloc_common(ws, ctx, p, 1);
}

const mbs_accel_def mbs_accel_dca = {
    .name = "dca",
    .alloc = alloc_plain,
    .eval = dca_eval,
    .free_ws = dca_free,
};

const mbs_accel_def mbs_accel_dca_proj = {
    .name = "dca-proj",
    .alloc = alloc_proj,
    .eval = dca_eval,
    .post_step = dca_post,
    .free_ws = dca_free,
};

int mbs_dca_last_iterations(void *ws);
int mbs_dca_last_iterations(void *ws)
{
    return ((dca_ws *)ws)->last_iters;
}

#define CITE "seed 003, Sects. 2-3 (augmented Lagrangian DCA, mass-orthogonal projections)"
MBS_ODE_FORMULATION_METHODS(dca, "dca", mbs_accel_dca,
                            "on the divide-and-conquer augmented-Lagrangian accelerations", CITE, 0,
                            1, dca_params)
MBS_ODE_FORMULATION_METHODS(dca_proj, "dca-proj", mbs_accel_dca_proj,
                            "on DCA accelerations with mass-orthogonal position/velocity "
                            "projections", CITE, MBS_M_PROJECTING, 1, dca_params)
