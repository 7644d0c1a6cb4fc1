/* Sharding a suite's grid over N independent sweeps: `sweep SUITE
 * --shard I/N` runs shard I (0 <= I < N) of the expanded grid, e.g. as task I
 * of a Slurm job array, and `merge` puts the shard directories back together.
 *
 * The split is deterministic and independent of the order of the suite file:
 * runs are sorted by estimated cost (descending, quantised to 1/20 decade) and
 * then by their identity key (problem, method, h/tol, atol, mode, t_end), and
 * each is given to the least-loaded shard so far (longest-processing-time
 * first).  The cost of a run is its CPU median in a previous results directory
 * (--cost-from DIR, matched by identity key), else an estimate: problem size
 * (n_q + n_v + n_lambda) times the expected number of steps, (t_end - t0) / h
 * for fixed-step methods and (t_end - t0) tol^(-1/p) for adaptive ones (p the
 * method's nominal order in q); runs missing from DIR get the estimate scaled by
 * the median measured/estimated ratio of those found. */
#ifndef MBS_SHARD_H
#define MBS_SHARD_H

#include <stddef.h>

#include "sweep.h"

typedef struct mbs_shard_plan {
    int count;           /* N */
    int *shard_of;       /* shard of each run (index into the suite's runs) */
    double *cost;        /* cost of each run (CPU seconds when measured, else estimate units) */
    double *load;        /* summed cost per shard */
    size_t n_measured;   /* runs whose cost came from --cost-from */
    char source[160];    /* how costs were obtained, for meta.json and messages */
} mbs_shard_plan;

/* Parse "I/N" (0 <= I < N <= 100000).  Returns 0, or 2 after printing a one-line
 * error naming the value. */
int mbs_shard_parse(const char *arg, int *index, int *count);

/* Plan the split of s into count shards; cost_dir (may be NULL) is a results
 * directory with measured costs.  Returns 0, or -1 with a message in err. */
int mbs_shard_plan_make(const mbs_suite *s, int count, const char *cost_dir, mbs_shard_plan *p,
                        char *err, size_t errlen);
void mbs_shard_plan_free(mbs_shard_plan *p);

/* Identity key of a run spec, as stored in records (problem_spec, method_spec,
 * h, tol, atol, tol_mode, t_end; malloc'ed). */
char *mbs_spec_identity(const mbs_run_spec *r);

/* Hex digest (FNV-1a, 64 bits) of a suite's expanded grid: the identity keys of
 * all runs in order.  Two results directories with the same digest hold runs of
 * the same grid with the same run indices.  buf: >= 17 bytes. */
void mbs_suite_digest(const mbs_suite *s, char *buf, size_t len);

#endif
