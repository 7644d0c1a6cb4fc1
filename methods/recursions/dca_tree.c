/* Structure analysis of the divide-and-conquer formulation ([dca_augmented_lagrangian] Fig. 1;
 * the mathematics at the top of dca.c): bodies = connected components of the
 * pattern of M, the balanced binary tree over them, the node where each row of
 * B is eliminated, the open rows and handle coordinates of every node, and the
 * index maps the passes use.
 *
 * Layout for the passes: nodes are renumbered in postorder and their arrays
 * packed into two pools in that order, with a compact record per node (dpn,
 * one cache line), so a pass streams through memory once and finds a node's
 * children's numbers still in the cache (a level-by-level order touched every
 * level's numbers again one level later: at 1e5 bodies from memory), and a
 * subtree, what one thread runs, is one contiguous stretch.  Every index map
 * a pass needs (the parent's position of a child's open row, the child handle
 * of every row entry and of every handle) is fixed here, so a pass writes only
 * its own node's numbers and its thread's scratch.  The work of every node is
 * counted from the same trip counts as the loops of dca_pass.c (dca.h). */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dca_impl.h"

/* Node arrays before packing are individual allocations; after, pool slices. */
static void free_node_arrays(dnode *n)
{
    free(n->h);
    free(n->o);
    free(n->J);
    free(n->up);
    free(n->jsrc);
    free(n->hsrc);
    free(n->hb);
    n->h = n->o = n->J = n->up = n->jsrc = n->hsrc = n->hb = NULL;
}

void mbs_dca_free_tree(dca_ws *w)
{
    if (!w->ipool)
        for (size_t k = 0; k < w->nn; k++)
            free_node_arrays(&w->nd[k]);
    free(w->nd);
    w->nd = NULL;
    w->nn = 0;
    free(w->ipool);
    free(w->dpool);
    w->ipool = NULL;
    w->dpool = NULL;
    free(w->pn_mem);
    w->pn_mem = NULL;
    w->pn = NULL;
    free(w->lvl_ptr);
    free(w->lvl_node);
    w->lvl_node = NULL;
    free(w->sub_lo);
    free(w->sub_hi);
    free(w->top);
    free(w->srow_ptr);
    free(w->srow);
    free(w->xrow);
    w->lvl_ptr = NULL;
    w->sub_lo = w->sub_hi = NULL;
    w->top = NULL;
    w->srow_ptr = NULL;
    w->srow = w->xrow = NULL;
    w->nsub = w->ntop = w->nxrow = 0;
    w->nlev = 0;
    if (w->scr) {
        for (int t = 0; t < w->nthreads; t++) {
            free(w->scr[t].X);
        }
        free(w->scr);
        w->scr = NULL;
    }
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
    w->analysed = 0;
}

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

static size_t row_len(const dca_ws *w, int r)
{
    return (size_t)(w->rptr[r + 1] - w->rptr[r]);
}

static void unite(int *par, int a, int b)
{
    int x = find(par, a), y = find(par, b);
    if (x != y)
        par[x > y ? x : y] = x < y ? x : y;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Whether uniting the components of x and y would make one of their rows
 * (all of rows[0 .. n - 1]; the coordinates of row r are rc[rp[r] .. rp[r + 1]
 * - 1]) local, i.e. touch no other component. */
static int makes_local(const int *rp, const int *rc, int *par, int x, int y, const int *rows, int n)
{
    int rx = find(par, x), ry = find(par, y);
    for (int k = 0; k < n; k++) {
        int r = rows[k], inside = 1;
        for (int p = rp[r]; p < rp[r + 1] && inside; p++) {
            int c = find(par, rc[p]);
            inside = c == rx || c == ry;
        }
        if (inside)
            return 1;
    }
    return 0;
}

/* Components of the pattern of M (in par) that the same rows of B touch, and
 * no others, are united: no row separates them, so a tree node joining them
 * would eliminate no row (nJ = 0) and only copy its children's handle
 * relations.  On the chain (M diagonal) the x and y coordinates of a mass
 * become one body: N + 1 leaves instead of 2N, and as many nodes with nJ = 0
 * go.  Components touched by no row stay as they are, and so do those whose
 * union would make a row local (touching no other component): a leaf's
 * M_b + alpha B_L^T B_L then carries alpha (condition ~ alpha), and on the
 * Bricard mechanism (redundant rows) dca-proj/rk8pd at tol 1e-13 took 43861
 * steps instead of 274 with such leaves (the first mass of the chain, whose row
 * 1 touches it alone, stays two leaves).  Only for structural
 * patterns (triplet callbacks): the dense path's pattern is the union of the
 * nonzeros seen so far, where an entry that vanishes at the start (sin 0) would
 * unite coordinates until it appears.  Candidates are bucketed by their least
 * row and compared row list by row list. */
static int unite_unseparated(const dca_ws *w, int *par)
{
    size_t nv = w->nv, nl = w->nl, nz = w->Bt.nnz;
    const mbs_triplets *B = &w->Bt;
    if (!w->native || nl == 0 || nz == 0)
        return MBS_OK;
    int *cptr = calloc(nv + 1, sizeof *cptr), *crow = malloc(nz * sizeof *crow);
    int *bptr = calloc(nl + 1, sizeof *bptr), *bsrc = malloc(nv * sizeof *bsrc);
    int *fill = malloc((nv > nl ? nv : nl) * sizeof *fill);
    int *rp = calloc(nl + 1, sizeof *rp), *rc = malloc(nz * sizeof *rc);
    if (!cptr || !crow || !bptr || !bsrc || !fill || !rp || !rc) {
        free(cptr), free(crow), free(bptr), free(bsrc), free(fill), free(rp), free(rc);
        return MBS_NO_MEMORY;
    }
    /* coordinates of each row */
    for (size_t k = 0; k < nz; k++)
        rp[B->row[k] + 1]++;
    for (size_t r = 0; r < nl; r++)
        rp[r + 1] += rp[r];
    memcpy(fill, rp, nl * sizeof *fill);
    for (size_t k = 0; k < nz; k++)
        rc[fill[B->row[k]]++] = (int)B->col[k];
    /* rows of each component (at its root), sorted, duplicates removed */
    for (size_t k = 0; k < nz; k++)
        cptr[find(par, (int)B->col[k]) + 1]++;
    for (size_t i = 0; i < nv; i++)
        cptr[i + 1] += cptr[i];
    memcpy(fill, cptr, nv * sizeof *fill);
    for (size_t k = 0; k < nz; k++)
        crow[fill[find(par, (int)B->col[k])]++] = (int)B->row[k];
    for (size_t i = 0; i < nv; i++) {
        int lo = cptr[i], n = cptr[i + 1] - lo, m = 0;
        qsort(crow + lo, (size_t)n, sizeof *crow, cmp_int);
        for (int k = 0; k < n; k++)
            if (m == 0 || crow[lo + k] != crow[lo + m - 1])
                crow[lo + m++] = crow[lo + k];
        fill[i] = m; /* length of the list */
    }
    /* bucket the roots with rows by their least row */
    for (size_t i = 0; i < nv; i++)
        if (par[i] == (int)i && fill[i] > 0)
            bptr[crow[cptr[i]] + 1]++;
    for (size_t r = 0; r < nl; r++)
        bptr[r + 1] += bptr[r];
    int *pos = malloc(nl * sizeof *pos);
    if (!pos) {
        free(cptr), free(crow), free(bptr), free(bsrc), free(fill), free(rp), free(rc);
        return MBS_NO_MEMORY;
    }
    memcpy(pos, bptr, nl * sizeof *pos);
    for (size_t i = 0; i < nv; i++)
        if (par[i] == (int)i && fill[i] > 0)
            bsrc[pos[crow[cptr[i]]]++] = (int)i;
    free(pos);
    for (size_t r = 0; r < nl; r++)
        for (int a = bptr[r]; a < bptr[r + 1]; a++)
            for (int b = bptr[r]; b < a; b++) {
                int x = bsrc[a], y = bsrc[b];
                if (fill[x] == fill[y] &&
                    memcmp(crow + cptr[x], crow + cptr[y], (size_t)fill[x] * sizeof *crow) == 0 &&
                    !makes_local(rp, rc, par, x, y, crow + cptr[x], fill[x])) {
                    unite(par, x, y);
                    break;
                }
            }
    free(cptr), free(crow), free(bptr), free(bsrc), free(fill), free(rp), free(rc);
    return MBS_OK;
}

/* Bodies, the CSR forms of the body blocks and of the rows of B. */
static int analyse_bodies(dca_ws *w)
{
    size_t nv = w->nv, nl = w->nl;
    const mbs_triplets *M = &w->Mt, *B = &w->Bt;
    int *par = malloc(nv * sizeof *par);
    if (!par)
        return MBS_NO_MEMORY;
    for (size_t i = 0; i < nv; i++)
        par[i] = (int)i;
    for (size_t k = 0; k < M->nnz; k++)
        if (M->row[k] != M->col[k])
            unite(par, (int)M->row[k], (int)M->col[k]);
    if (unite_unseparated(w, par) != MBS_OK) {
        free(par);
        return MBS_NO_MEMORY;
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
    return MBS_OK;
}

/* Row assignment (lowest common node of the bodies a row touches), open rows
 * and handles (leaf: the body's coordinates; node: the coordinates of its open
 * rows inside it). */
static int analyse_rows(dca_ws *w)
{
    size_t nl = w->nl, nb = w->nb;
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
    for (size_t i = 0; i < w->nv; i++)
        w->mark[i] = -1;
    for (size_t k = 0; k < w->nn; k++) {
        dnode *n = &w->nd[k];
        if (n->leaf >= 0) {
            for (int q = w->bptr[n->leaf]; q < w->bptr[n->leaf + 1]; q++)
                if (push(&n->h, &n->nh, w->bcrd[q]) != 0)
                    return MBS_NO_MEMORY;
            continue;
        }
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
    return MBS_OK;
}

/* Length of an internal node's hb array (analyse_maps): nh + 1 offsets, nh
 * b sources and two ints per open row of a child, at a handle, that the node
 * eliminates; the children's up and the node's hsrc must be set. */
static size_t hb_len(const dca_ws *w, const dnode *n)
{
    size_t k = 0;
    for (size_t hh = 0; hh < n->nh; hh++) {
        const dnode *c = &w->nd[n->child[n->hsrc[hh] < 0]];
        for (size_t a = 0; a < c->no; a++)
            k += (size_t)c->up[a] < n->nJ;
    }
    return 2 * n->nh + 1 + 2 * k;
}

/* Index maps of the internal nodes: up of both children, jsrc, hsrc, hb. */
static int analyse_maps(dca_ws *w)
{
    for (size_t k = 0; k < w->nn; k++) {
        dnode *n = &w->nd[k];
        if (n->leaf >= 0)
            continue;
        size_t nJ = n->nJ, ne = 0;
        for (size_t l = 0; l < nJ; l++)
            w->rpos[n->J[l]] = (int)l;
        for (size_t a = 0; a < n->no; a++)
            w->rpos[n->o[a]] = (int)(nJ + a);
        for (int t = 0; t < 2; t++) {
            dnode *c = &w->nd[n->child[t]];
            c->up = malloc((c->no ? c->no : 1) * sizeof *c->up);
            if (!c->up)
                return MBS_NO_MEMORY;
            for (size_t a = 0; a < c->no; a++)
                c->up[a] = w->rpos[c->o[a]];
            for (size_t hh = 0; hh < c->nh; hh++)
                w->pos[c->h[hh]] = (int)hh;
        }
        for (size_t l = 0; l < nJ; l++)
            ne += row_len(w, n->J[l]);
        n->jsrc = malloc((ne ? ne : 1) * sizeof *n->jsrc);
        n->hsrc = malloc((n->nh ? n->nh : 1) * sizeof *n->hsrc);
        if (!n->jsrc || !n->hsrc)
            return MBS_NO_MEMORY;
        size_t mid = w->nd[n->child[0]].hi, e = 0;
        for (size_t l = 0; l < nJ; l++)
            for (int p = w->rptr[n->J[l]]; p < w->rptr[n->J[l] + 1]; p++) {
                int crd = w->rcrd[p];
                n->jsrc[e++] = (size_t)w->body[crd] < mid ? w->pos[crd] : -(w->pos[crd] + 1);
            }
        for (size_t hh = 0; hh < n->nh; hh++) {
            int crd = n->h[hh];
            n->hsrc[hh] = (size_t)w->body[crd] < mid ? w->pos[crd] : -(w->pos[crd] + 1);
        }
        /* hb: per handle the (a, p) pairs of the child's open rows a eliminated
         * here (p = up[a] < nJ), in the order of a: hb[0 .. nh] offsets, nh
         * places for the b sources, then the pairs (a becomes a dpool index in
         * analyse_layout) */
        size_t nhb = hb_len(w, n);
        n->hb = malloc(nhb * sizeof *n->hb);
        if (!n->hb)
            return MBS_NO_MEMORY;
        int *pr = n->hb + 2 * n->nh + 1;
        n->hb[0] = 0;
        for (size_t hh = 0; hh < n->nh; hh++) {
            const dnode *c = &w->nd[n->child[n->hsrc[hh] < 0]];
            int m = n->hb[hh];
            for (size_t a = 0; a < c->no; a++)
                if ((size_t)c->up[a] < nJ) {
                    pr[2 * m] = (int)a;
                    pr[2 * m + 1] = c->up[a];
                    m++;
                }
            n->hb[hh + 1] = m;
        }
    }
    return MBS_OK;
}

/* Multiply-adds of one assembly + disassembly of node n (dca.h), from the trip
 * counts of dca_pass.c. */
static double node_work(const dca_ws *w, const dnode *n)
{
    double no = (double)n->no, wk = 0.0;
    if (n->leaf >= 0) {
        double d = (double)n->nh;
        for (size_t l = 0; l < n->nJ; l++) { /* alpha B_L^T B_L and the right-hand side */
            double len = (double)row_len(w, n->J[l]);
            wk += len * (len + 1.0);
        }
        wk += d * d * d / 6.0 + d * d / 2.0 + (no + 1.0) * d * d; /* Cholesky, solves */
        wk += d * no;                                             /* v' = Phi lambda_O + b */
        for (size_t l = 0; l < n->nJ; l++)                        /* local multipliers */
            wk += (double)row_len(w, n->J[l]);
        return wk;
    }
    double nJ = (double)n->nJ;
    size_t e = 0;
    for (size_t l = 0; l < n->nJ; l++)
        for (int p = w->rptr[n->J[l]]; p < w->rptr[n->J[l] + 1]; p++, e++) {
            int s = n->jsrc[e];
            wk += 1.0 + (double)w->nd[n->child[s < 0]].no; /* D and X */
        }
    if (n->nJ > 0)
        wk += nJ * nJ * nJ / 6.0 + nJ * nJ / 2.0 + (no + 1.0) * nJ * nJ;
    for (size_t hh = 0; hh < n->nh; hh++) { /* handle relations of the union */
        const dnode *c = &w->nd[n->child[n->hsrc[hh] < 0]];
        for (size_t a = 0; a < c->no; a++)
            wk += (size_t)c->up[a] < n->nJ ? 1.0 + no : 1.0;
    }
    wk += nJ * no; /* lambda_J = c_J + E_J lambda_O */
    return wk;
}

/* The dpool indices the right-hand-side passes read an internal node's
 * children's numbers from (jb, the b sources and pairs of hb), once the pool
 * is laid out: the same entries as the jsrc and hsrc encodings, without
 * decoding them in every pass. */
static void node_sources(const dca_ws *w, const dnode *nd, dnode *n)
{
    if (n->leaf >= 0)
        return;
    const dnode *ch[2] = {&nd[n->child[0]], &nd[n->child[1]]};
    size_t e = 0;
    for (size_t l = 0; l < n->nJ; l++)
        for (size_t p = 0; p < row_len(w, n->J[l]); p++, e++) {
            int s = n->jsrc[e];
            n->jb[e] = (int)(ch[s < 0]->b + (s < 0 ? -s - 1 : s) - w->dpool);
        }
    int *bsrc = n->hb + n->nh + 1, *pr = bsrc + n->nh;
    for (size_t hh = 0; hh < n->nh; hh++) {
        int s = n->hsrc[hh];
        const dnode *c = ch[s < 0];
        size_t ch_h = (size_t)(s < 0 ? -s - 1 : s);
        bsrc[hh] = (int)(c->b + ch_h - w->dpool);
        for (int k = n->hb[hh]; k < n->hb[hh + 1]; k++)
            pr[2 * k] = (int)(c->Phi + ch_h * c->no + pr[2 * k] - w->dpool);
    }
}

/* Postorder numbers (children 0 then 1, then the node) from node k on. */
static void postorder(const dnode *nd, int k, int *newid, int *next)
{
    if (nd[k].leaf < 0) {
        postorder(nd, nd[k].child[0], newid, next);
        postorder(nd, nd[k].child[1], newid, next);
    }
    newid[k] = (*next)++;
}

/* Renumber the nodes in postorder, pack their arrays into the pools in that
 * order and list the nodes of each level (lvl_node, for the statistics). */
static int analyse_layout(dca_ws *w)
{
    size_t nn = w->nn;
    for (size_t k = nn; k-- > 0;) { /* preorder: children after their parent */
        dnode *n = &w->nd[k];
        if (n->leaf >= 0) {
            n->level = 0;
        } else {
            int a = w->nd[n->child[0]].level, b = w->nd[n->child[1]].level;
            n->level = 1 + (a > b ? a : b);
        }
    }
    w->nlev = (size_t)w->nd[w->root].level + 1;
    w->lvl_ptr = calloc(w->nlev + 1, sizeof *w->lvl_ptr);
    w->lvl_node = malloc(nn * sizeof *w->lvl_node);
    /* pn on a 64-byte boundary, one record per cache line (malloc, which the
     * allocation-failure runner intercepts, and the offset by hand) */
    w->pn_mem = malloc(nn * sizeof *w->pn + 63);
    w->pn = w->pn_mem ? (dpn *)(void *)((char *)w->pn_mem + (64 - (uintptr_t)w->pn_mem % 64) % 64) : NULL;
    int *newid = malloc(nn * sizeof *newid);
    dnode *nd2 = calloc(nn, sizeof *nd2);
    size_t *fill = malloc((w->nlev ? w->nlev : 1) * sizeof *fill);
    if (!w->lvl_ptr || !w->lvl_node || !w->pn || !newid || !nd2 || !fill) {
        free(newid);
        free(nd2);
        free(fill);
        return MBS_NO_MEMORY;
    }
    int next = 0;
    postorder(w->nd, w->root, newid, &next);
    for (size_t k = 0; k < nn; k++)
        w->lvl_ptr[w->nd[k].level + 1]++;
    for (size_t l = 0; l < w->nlev; l++)
        w->lvl_ptr[l + 1] += w->lvl_ptr[l];
    memcpy(fill, w->lvl_ptr, w->nlev * sizeof *fill);
    for (size_t k = 0; k < nn; k++)
        nd2[newid[k]].level = w->nd[k].level;
    for (size_t k = 0; k < nn; k++) /* ascending postorder: left to right within a level */
        w->lvl_node[fill[nd2[k].level]++] = (int)k;
    free(fill);
    size_t ni = 0, ndbl = 0;
    for (size_t k = 0; k < nn; k++) {
        dnode *n = &w->nd[k];
        n->work = node_work(w, n);
        size_t ne = 0;
        for (size_t l = 0; n->leaf < 0 && l < n->nJ; l++)
            ne += row_len(w, n->J[l]);
        ni += n->nh + 2 * n->no + n->nJ + (n->leaf < 0 ? 2 * ne + n->nh + hb_len(w, n) : 0);
        ndbl += n->nh * n->no + n->nh + (n->leaf < 0 ? n->nJ * n->nJ + n->nJ + n->nJ * n->no : n->nh * n->nh);
    }
    int fits = ni <= INT_MAX && ndbl <= INT_MAX; /* pool indices are ints */
    w->ipool = fits ? malloc((ni ? ni : 1) * sizeof *w->ipool) : NULL;
    w->dpool = fits ? malloc((ndbl ? ndbl : 1) * sizeof *w->dpool) : NULL;
    if (!w->ipool || !w->dpool) {
        free(w->ipool);
        free(w->dpool);
        w->ipool = NULL;
        w->dpool = NULL;
        free(newid);
        free(nd2);
        return MBS_NO_MEMORY;
    }
    /* nothing fails from here on */
    for (size_t k = 0; k < nn; k++) {
        dnode n = w->nd[k];
        n.parent = n.parent >= 0 ? newid[n.parent] : -1;
        if (n.leaf >= 0)
            w->leafnode[n.leaf] = newid[k];
        else
            n.child[0] = newid[n.child[0]], n.child[1] = newid[n.child[1]];
        nd2[newid[k]] = n;
    }
    for (size_t r = 0; r < w->nl; r++)
        if (w->rnode[r] >= 0)
            w->rnode[r] = newid[w->rnode[r]];
    w->root = newid[w->root];
    free(newid);
    int *ip = w->ipool;
    double *dp = w->dpool;
#define MOVE_INTS(field, count)                                 \
    do {                                                        \
        if ((count) > 0)                                        \
            memcpy(ip, n->field, (count) * sizeof *ip);         \
        free(n->field);                                         \
        n->field = ip;                                          \
        ip += (count);                                          \
    } while (0)
    for (size_t k = 0; k < nn; k++) {
        dnode *n = &nd2[k];
        size_t ne = 0;
        for (size_t l = 0; n->leaf < 0 && l < n->nJ; l++)
            ne += row_len(w, n->J[l]);
        MOVE_INTS(h, n->nh);
        MOVE_INTS(o, n->no);
        MOVE_INTS(up, n->parent >= 0 ? n->no : 0);
        MOVE_INTS(J, n->nJ);
        if (n->leaf < 0) {
            MOVE_INTS(jsrc, ne);
            n->jb = ip, ip += ne;
            MOVE_INTS(hsrc, n->nh);
            MOVE_INTS(hb, 2 * n->nh + 1 + 2 * (size_t)n->hb[n->nh]);
        }
        n->L = dp, dp += n->leaf >= 0 ? n->nh * n->nh : n->nJ * n->nJ;
        n->Phi = dp, dp += n->nh * n->no;
        n->b = dp, dp += n->nh;
        if (n->leaf < 0) {
            n->cJ = dp, dp += n->nJ;
            n->EJ = dp, dp += n->nJ * n->no;
        }
    }
#undef MOVE_INTS
    for (size_t k = 0; k < nn; k++) {
        const dnode *n = &nd2[k];
        node_sources(w, nd2, &nd2[k]);
        dpn *p = &w->pn[k];
        p->leaf = n->leaf;
        p->child[0] = n->child[0];
        p->child[1] = n->child[1];
        p->nh = (int)n->nh;
        p->no = (int)n->no;
        p->nJ = (int)n->nJ;
        p->h = (int)(n->h - w->ipool);
        p->up = (int)(n->up - w->ipool);
        p->J = (int)(n->J - w->ipool);
        p->jb = n->leaf < 0 ? (int)(n->jb - w->ipool) : 0;
        p->hsrc = n->leaf < 0 ? (int)(n->hsrc - w->ipool) : 0;
        p->hb = n->leaf < 0 ? (int)(n->hb - w->ipool) : 0;
        p->L = (int)(n->L - w->dpool);
        p->Phi = (int)(n->Phi - w->dpool);
        p->b = (int)(n->b - w->dpool);
        p->cJ = n->leaf < 0 ? (int)(n->cJ - w->dpool) : 0;
    }
    free(w->nd);
    w->nd = nd2;
    return MBS_OK;
}

/* Subtrees for the threads: the nodes at depth D (and the leaves above it) with
 * 2^D >= DCA_SUBTREES_PER_THREAD x nthreads, so that the subtrees of a balanced
 * tree have about equal work and a thread delayed by other load leaves its
 * share to the others (dynamic schedule).  Only when the whole tree's work
 * reaches mbs_dca_par_min_work(); otherwise nsub stays 0 (sequential). */
#define DCA_SUBTREES_PER_THREAD 4
static int decompose(dca_ws *w)
{
    double total = 0.0;
    for (size_t k = 0; k < w->nn; k++)
        total += w->nd[k].work;
    if (w->nthreads <= 1 || total < mbs_dca_par_min_work())
        return MBS_OK;
    int D = 0;
    while ((1L << D) < (long)DCA_SUBTREES_PER_THREAD * w->nthreads)
        D++;
    size_t nn = w->nn;
    int *depth = malloc(nn * sizeof *depth), *sub = malloc(nn * sizeof *sub);
    if (!depth || !sub) {
        free(depth);
        free(sub);
        return MBS_NO_MEMORY;
    }
    size_t nsub = 0, ntop = 0;
    for (size_t k = nn; k-- > 0;) { /* parents have higher numbers than children */
        const dnode *n = &w->nd[k];
        depth[k] = n->parent < 0 ? 0 : depth[n->parent] + 1;
        if (depth[k] < D && n->leaf < 0)
            sub[k] = -1, ntop++; /* a top node */
        else if (n->parent < 0 || sub[n->parent] < 0)
            sub[k] = (int)nsub++; /* the root of a subtree */
        else
            sub[k] = sub[n->parent];
    }
    free(depth);
    w->sub_lo = calloc(nsub, sizeof *w->sub_lo);
    w->sub_hi = calloc(nsub, sizeof *w->sub_hi);
    w->top = malloc((ntop ? ntop : 1) * sizeof *w->top);
    size_t nlc = w->nl ? w->nl : 1;
    w->srow_ptr = calloc(nsub + 1, sizeof *w->srow_ptr);
    w->srow = malloc(nlc * sizeof *w->srow);
    w->xrow = malloc(nlc * sizeof *w->xrow);
    if (!w->sub_lo || !w->sub_hi || !w->top || !w->srow_ptr || !w->srow || !w->xrow) {
        free(sub);
        return MBS_NO_MEMORY;
    }
    for (size_t r = 0; r < w->nl; r++) { /* rows by subtree (counting sort), the rest */
        int k = w->rnode[r];
        if (k >= 0 && sub[k] >= 0)
            w->srow_ptr[sub[k] + 1]++;
        else
            w->xrow[w->nxrow++] = (int)r;
    }
    for (size_t s = 0; s < nsub; s++)
        w->srow_ptr[s + 1] += w->srow_ptr[s];
    for (size_t r = 0, *fill = w->srow_ptr; r < w->nl; r++) {
        int k = w->rnode[r];
        if (k >= 0 && sub[k] >= 0)
            w->srow[fill[sub[k]]++] = (int)r;
    }
    for (size_t s = nsub; s > 0; s--) /* undo the fill's advance */
        w->srow_ptr[s] = w->srow_ptr[s - 1];
    w->srow_ptr[0] = 0;
    size_t t = 0;
    for (size_t k = 0; k < nn; k++) { /* postorder: a subtree is a contiguous range */
        if (sub[k] < 0) {
            w->top[t++] = (int)k;
            continue;
        }
        size_t i = (size_t)sub[k];
        if (w->sub_hi[i] == 0)
            w->sub_lo[i] = k;
        w->sub_hi[i] = k + 1;
    }
    free(sub);
    w->nsub = nsub;
    w->ntop = ntop;
    return MBS_OK;
}

int mbs_dca_analyse(dca_ws *w)
{
    int s;
    mbs_dca_free_tree(w);
    if ((s = analyse_bodies(w)) != MBS_OK)
        return s;
    w->nn = 0;
    w->root = build_tree(w, 0, w->nb, -1);
    if ((s = analyse_rows(w)) != MBS_OK || (s = analyse_maps(w)) != MBS_OK ||
        (s = analyse_layout(w)) != MBS_OK)
        return s;
    size_t maxJ = 1, maxcols = 1;
    for (size_t k = 0; k < w->nn; k++) {
        const dnode *n = &w->nd[k];
        size_t dJ = n->leaf >= 0 ? n->nh : n->nJ;
        maxJ = dJ > maxJ ? dJ : maxJ;
        maxcols = n->no + 1 > maxcols ? n->no + 1 : maxcols;
    }
    w->maxJ = maxJ;
    w->maxcols = maxcols;
    w->scr = calloc((size_t)w->nthreads, sizeof *w->scr);
    if (!w->scr || (s = decompose(w)) != MBS_OK)
        return s != MBS_OK ? s : MBS_NO_MEMORY;
    for (int t = 0; t < w->nthreads; t++) {
        w->scr[t].X = malloc(maxJ * maxcols * sizeof *w->scr[t].X);
        if (!w->scr[t].X)
            return MBS_NO_MEMORY;
    }
    w->analysed = 1;
    return MBS_OK;
}
