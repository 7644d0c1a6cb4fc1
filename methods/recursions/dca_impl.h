/* Private to methods/dca*.c: the divide-and-conquer workspace,
 * shared by dca.c (method glue: workspace, matrices, augmented-Lagrangian
 * iteration, projections, registration), dca_tree.c (structure analysis: bodies,
 * binary tree, row assignment, handles, postorder layout, work counts) and
 * dca_pass.c (the assembly and disassembly passes, subtrees in parallel with
 * OpenMP).  The mathematics is described at the top of dca.c. */
#ifndef MBS_DCA_IMPL_H
#define MBS_DCA_IMPL_H

#include <gsl/gsl_matrix.h>
#include <stddef.h>

#include "dca.h"
#include "../framework/method.h"
#include "../../problems/triplets.h"

/* A node of the binary tree as the analysis builds it.  Its index arrays and
 * numbers live in the workspace's pools (ipool, dpool), node after node in
 * postorder (children before their parent, a subtree one contiguous stretch).
 * The passes read the compact dpn below instead. */
typedef struct dnode {
    int leaf;          /* body index, or -1 */
    int child[2];
    int parent;
    int level;         /* height: 0 for leaves, 1 + the higher child's otherwise */
    size_t lo, hi;     /* body range */
    int *h;            /* handle coordinates */
    size_t nh;
    int *o;            /* open rows */
    size_t no;
    int *J;            /* rows eliminated here (internal) or local rows (leaf) */
    size_t nJ;
    /* index maps fixed by the analysis (so the passes need no shared scratch): */
    int *up;           /* no: position of each open row in the parent's list [J | O] */
    int *jsrc;         /* internal: per entry of the J rows (CSR order) the child
                          handle it acts on: hh of child 0, or -(hh + 1) of child 1 */
    int *jb;           /* internal: per entry of the J rows, the dpool index of that
                          child handle's b */
    int *hsrc;         /* internal: per handle, the same encoding as jsrc */
    int *hb;           /* internal: per handle hh, hb[hh] .. hb[hh + 1] - 1 index the
                          pairs at hb + 2 nh + 1; hb[nh + 1 + hh] is the dpool index
                          of the child handle's b, and a pair (x, p) is the dpool
                          index x of the child's Phi entry of an open row it
                          eliminates here as row p (the c_J terms of the handle's b) */
    double *L;         /* Cholesky factor of the leaf's M_b + alpha B_L^T B_L (nh x nh)
                          or of the node's D (nJ x nJ), kept for the iterations
                          that change only the right-hand sides */
    double *Phi;       /* nh x no */
    double *b;         /* nh */
    double *cJ, *EJ;   /* nJ, nJ x no (internal) */
    double work;       /* multiply-adds of one assembly + disassembly of this node */
} dnode;

/* What the passes read of a node (dca_pass.c), one cache line: the counts and
 * the offsets of its arrays in ipool (h, then o at h + nh; up; J, then jsrc
 * at J + nJ; jb, hsrc, hb) and in dpool (L, Phi, b, cJ, then E_J at cJ + nJ); the
 * meaning of each as in dnode.  The passes over 1e5 bodies stream the node
 * records from memory, and dnode (176 bytes) took 2.75 cache lines a node. */
typedef struct dpn {
    int leaf, child[2];
    int nh, no, nJ;
    int h, up, J, jb, hsrc, hb;
    int L, Phi, b, cJ;
} dpn;

/* Per-thread scratch of the passes: the right-hand sides X (maxJ x maxcols,
 * column-major). */
typedef struct dca_scratch {
    double *X;
    double res; /* this thread's maximum of |B v' - gamma| */
    double mag; /* and of |gamma| + sum |B_rk v'_k| */
} dca_scratch;

typedef struct dca_ws {
    size_t nv, nl;
    int proj;
    double alpha, eps_a, rtol_a;
    double last_rres;         /* max |B v' - gamma| over its terms after the last solve */
    double alpha0, alpha_min; /* the parameter's penalty and the floor of its lowering (dca_eval) */
    int redundant;            /* the problem has redundant rows (MBS_PB_REDUNDANT) */
    int maxit;
    int nthreads;          /* threads of the passes (1: sequential, no OpenMP team) */
    double mu, omega;      /* stabilisation of the multiplier approximation (0: none) */
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
    /* the tree, numbered in postorder (the assembly runs the nodes in
     * ascending order, the disassembly in descending order); pn[k] is what the
     * passes read of node k; level l (height, leaves 0) holds the nodes
     * lvl_node[lvl_ptr[l] .. lvl_ptr[l + 1] - 1] (statistics) */
    dnode *nd;
    dpn *pn;            /* in pn_mem, on a 64-byte boundary */
    void *pn_mem;
    size_t nn;
    int root;
    size_t nlev;
    size_t *lvl_ptr;
    int *lvl_node;
    /* Split for nthreads > 1 (dca_tree.c, decompose): nsub disjoint subtrees
     * below the top nodes, each run by one thread; subtree s holds the nodes
     * sub_lo[s] .. sub_hi[s] - 1 (contiguous in postorder).  The ntop top
     * nodes (the ancestors of the subtrees, ascending = children first) run on
     * one thread.  nsub = 0: the passes run sequentially (tree too small, or
     * one thread). */
    size_t nsub, ntop;
    size_t *sub_lo, *sub_hi;
    int *top;
    /* rows after a pass: those eliminated inside subtree s are srow[srow_ptr[s]
     * .. srow_ptr[s + 1] - 1] (their coordinates all lie in s), the others (at a
     * top node, or touching no coordinate) xrow[0 .. nxrow - 1] */
    size_t *srow_ptr, nxrow;
    int *srow, *xrow;
    int *ipool;
    double *dpool;
    dca_scratch *scr;   /* nthreads */
    /* scratch of the analysis and of the method glue (sequential parts) */
    int *pos, *rpos, *mark;
    double *lam, *lamstar, *f, *gam, *acc, *dq, *qd, *gt, *gs;
    double *lamwarm; /* warm=1: lambda of the last acceleration solve (have_warm) */
    double *rres;    /* B v' - gamma per row after the last pass (0: zero row) */
    int warm, have_warm;
    int factored;       /* the nodes' L, Phi, E_J belong to the current M, B */
    size_t maxJ, maxcols;
    int last_iters;
    double pass_wall;   /* wall-clock seconds spent in the passes (diagnostics) */
    long passes;        /* assembly + disassembly passes done */
} dca_ws;

/* dca_tree.c */
void mbs_dca_free_tree(dca_ws *w);
int mbs_dca_analyse(dca_ws *w);

/* dca_pass.c: one assembly and one disassembly pass for the current M, B, f,
 * gamma and lambda* (w->lamstar); v' in w->acc, lambda in w->lam, *res =
 * max |B v' - gamma| over the rows that touch a coordinate, *ss = sum of
 * (B v' - gamma)^2 over the rows in row order (the same for any thread count),
 * and lambda* = lambda for the next iteration.  The first pass after M or B changed
 * (w->factored = 0: eval_matrices clears it) factors and forms Phi, E_J; later
 * ones reuse them and recompute only b, c_J (the same numbers bit for bit).
 * Returns MBS_OK or MBS_SINGULAR_MATRIX (a leaf or interface matrix not
 * positive definite). */
int mbs_dca_passes(dca_ws *w, double *res, double *mag, double *ss);

#endif
