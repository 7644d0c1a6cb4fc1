/* Benchmark sections (bench/sections.def). */
#ifndef MBS_BENCH_H
#define MBS_BENCH_H

#include <stdio.h>

#include "../methods/framework/method.h"

#define MBS_BENCH(fn) int fn(FILE *out);
#include "sections.def"
#undef MBS_BENCH

/* Minimum CPU time over `repeat` timed runs of a spec (after a warm-up run);
 * NaN when the run fails.  cnt (may be NULL) gets the counters of a timed run. */
double mbs_bench_time(const char *problem, const char *method, double h, double tol,
                      double t_end, int repeat, mbs_counters *cnt);

/* Output to the bench's stream and a results file (file may be NULL). */
typedef struct mbs_tee {
    FILE *out, *file;
} mbs_tee;

void mbs_tee_printf(const mbs_tee *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* results/bench-<UTC date>/NAME opened for writing (directories created), its
 * path in path; NULL when it cannot be opened. */
FILE *mbs_bench_results_file(const char *name, char *path, size_t len);

#endif
