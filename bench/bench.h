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

#endif
