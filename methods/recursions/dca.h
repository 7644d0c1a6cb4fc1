/* Diagnostics of the divide-and-conquer formulation (methods/recursions/dca.c, [dca_augmented_lagrangian])
 * for benchmarks and tests: the workspace is the `mbs_accel_def` workspace of
 * dca/... and dca-proj/... (mbs_accel_dca.alloc, or mbs_explicit_accel_ws of a
 * dca method's state). */
#ifndef MBS_DCA_H
#define MBS_DCA_H

#include <stddef.h>

/* The critical path of the passes, counted from the analysed tree.
 * Work is counted in multiply-adds of one assembly plus one disassembly pass
 * (the loops' trip counts; a Cholesky factorisation of order n as n^3/6 + n^2/2,
 * one pair of triangular solves as n^2).  Every node of a level (level =
 * height in the tree, leaves 0) is independent of the others, so a pass
 * scheduled level by level on P threads takes at least max(work / P, span) and at most
 * about work / P + span (Brent), span = sum over levels of the largest node. */
typedef struct mbs_dca_stats {
    size_t bodies, nodes, levels;
    double work;      /* all nodes */
    double span;      /* sum over levels of the largest node's work */
    int threads;      /* threads of the passes */
    size_t subtrees;  /* subtrees the passes are split into (0: run sequentially) */
    int last_iters;   /* augmented-Lagrangian iterations of the last solve */
    long passes;      /* assembly + disassembly passes since allocation */
    double pass_wall; /* wall-clock seconds spent in them */
} mbs_dca_stats;

/* 0, or -1 before the first evaluation (no tree yet). */
int mbs_dca_stats_get(void *ws, mbs_dca_stats *st);

/* Level l (0 = leaves): number of nodes, their total work and the largest
 * node's work.  0, or -1 when l is out of range. */
int mbs_dca_level(void *ws, size_t l, size_t *nodes, double *work, double *maxwork);

/* Augmented-Lagrangian iterations of the last solve. */
int mbs_dca_last_iterations(void *ws);

/* The least work (multiply-adds of one pass over the tree) for which the
 * passes are split over the threads (tuning constant of dca_pass.c): smaller
 * trees run on one thread. */
double mbs_dca_par_min_work(void);

#endif
