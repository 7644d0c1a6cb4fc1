/* Benchmark sections (bench/sections.def). */
#ifndef MBS_BENCH_H
#define MBS_BENCH_H

#include <stdio.h>

#include "../methods/framework/method.h"

#define MBS_BENCH(fn) int fn(FILE *out);
#include "sections.def"
#undef MBS_BENCH

/* The timing rule of every timed run of make bench: one warm-up run, then
 * n = max(min_reps, ceil(MBS_BENCH_MIN_CPU / warm-up time)) timed runs (at most
 * MBS_BENCH_MAX_REPS; with min_reps <= 1 a warm-up run that took
 * MBS_BENCH_MIN_CPU or more is the timing itself), so that the repetitions of a short run cover at least
 * MBS_BENCH_MIN_CPU seconds of CPU time and one preemption or cache refill
 * cannot set its time.  Each run is an mbs_run of its own (problem opened and
 * workspace allocated afresh, outside the timed integration), so every timed
 * run is the first integration on its workspace, the one a measuring run
 * makes: repetitions inside one mbs_run reuse the workspace, and caches that
 * outlive an integration change what the later ones do (the CHOLMOD backend
 * keeps the factor of a constant mass matrix: on chain N = 10 every later
 * repetition did one factorisation fewer).  The time reported is the minimum
 * over the n runs: the runs are deterministic (checked: every timed run's
 * counters and final state equal the warm-up run's bit for bit), so the CPU
 * time of one is its cost plus what other work on the machine added to it
 * (cache and TLB refills after a preemption, a busy sibling core), never
 * less; the minimum is the estimate with the least of that, the median shows
 * how much a typical run got. */
#define MBS_BENCH_MIN_CPU 0.2
#define MBS_BENCH_MAX_REPS 10000

typedef struct mbs_bench_timing {
    double cpu_min, cpu_median; /* CPU seconds per run over the repetitions (NaN: failed) */
    int reps;                   /* timed runs (the warm-up not counted) */
    mbs_counters cnt;           /* counters of the runs (all equal) */
    char why[256];              /* why the timing failed ("" when it did not) */
} mbs_bench_timing;

/* Time a spec by the rule above with min_cpu in place of MBS_BENCH_MIN_CPU
 * (a caller that times in rounds passes its share; h or tol NaN when not
 * given, t_end NaN: the problem's).  Returns 0, or -1 with tm->why set when
 * the run fails or a repetition differs from the warm-up run. */
int mbs_bench_timed(const char *problem, const char *method, double h, double tol, double t_end,
                    double min_cpu, int min_reps, mbs_bench_timing *tm);

/* qsort comparison of doubles, ascending. */
int mbs_bench_cmp_double(const void *a, const void *b);

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
