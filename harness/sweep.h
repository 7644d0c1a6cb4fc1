/* Suite files (INI, parsed with libinih) and sweeps over their grids.
 *
 *   [suite]
 *   name = smoke            ; required: names the results directory
 *   description = ...
 *   repeat = 3              ; timing repetitions per run (default 1)
 *   max_steps = 1000000     ; per-run step budget (default 1e7)
 *   max_cpu = 60            ; per-run CPU-time budget in seconds (default 600)
 *   max_wall = 120          ; per-run wall-clock budget in seconds (default 1200)
 *   max_mem = 4e9           ; per-run memory budget in bytes (default: available memory)
 *
 *   [grid NAME]             ; any number of grids
 *   problems = pendulum pendulum:x0=0.2     ; whitespace-separated specs
 *   methods = index1/rk4 index1/rk8pd
 *   h = 0.01 0.005          ; step sizes for fixed-step methods
 *   tol = 1e-6 1e-9         ; tolerances for adaptive methods
 *   atol = 1e-6             ; optional absolute tolerance of adaptive methods (one value
 *                           ; in (0, 1); default: atol = tol, i.e. rtol = atol = tol)
 *   t_end = 10              ; optional override of the problems' t_end
 *   inject_failure = 0.5    ; testing the harness: problem callbacks fail for t >= 0.5
 *
 * Lines are limited to 190 characters; continue a list on indented lines:
 *   problems = pendulum pendulum:x0=0.1
 *              pendulum:x0=0.2
 * Every problem x method x (h for fixed-step | tol for adaptive) combination is
 * one run.  All keys and values are validated before anything runs. */
#ifndef MBS_SWEEP_H
#define MBS_SWEEP_H

#include <stdio.h>

#include "run.h"

typedef struct mbs_suite {
    char name[64];
    char path[1024];
    mbs_run_spec *runs;   /* expanded grid (problem/method strings owned by strs) */
    size_t n_runs;
    char **strs;
    size_t n_strs;
} mbs_suite;

/* Load and validate; on error returns MBS_BAD_INPUT and writes one line per
 * problem (at most errlen bytes) to err. */
int mbs_suite_load(const char *path, mbs_suite *s, char *err, size_t errlen);
/* The same from text in memory (len bytes, may contain NULs); path names it in
 * messages. */
int mbs_suite_parse(const char *data, size_t len, const char *path, mbs_suite *s, char *err,
                    size_t errlen);
void mbs_suite_free(mbs_suite *s);

typedef struct mbs_sweep_options {
    int jobs;       /* worker processes running at once (>= 1) */
    int resume;     /* skip the runs already recorded in outdir/runs.jsonl */
    double budget;  /* wall-clock budget of the sweep in seconds (0: none) */
    int series;     /* write each run's time series to outdir/series/run-<index>.tsv */
    /* Sharding (harness/shard.h; NULL: the whole grid): run only the runs with
     * plan->shard_of[i] == shard; meta.json records the shard and its runs. */
    const struct mbs_shard_plan *plan;
    int shard;
} mbs_sweep_options;

/* Run the suite: one child process per run (at most opt->jobs at once), each
 * appending its complete record to outdir/runs.jsonl; outdir/meta.json (atomic)
 * and outdir/runs.csv (derived at the end, atomic).  Prints the summary table to
 * out.  Returns 0 if every run succeeded, 1 if some run failed or the budget
 * stopped the sweep, 2 on bad input or I/O errors, 128 + signal when
 * interrupted by SIGINT/SIGTERM (complete it with resume). */
int mbs_sweep(const mbs_suite *s, const char *outdir, const mbs_sweep_options *opt,
              FILE *out);


/* runs.csv of a results directory from its runs.jsonl (atomic); 0 or -1. */
int mbs_write_runs_csv(const char *dir);

/* Print the summary table of a results directory's runs.jsonl; *n_failed gets
 * the number of records whose status is not ok.  Returns 0 or 2 (unreadable). */
int mbs_summary(const char *dir, FILE *out, int *n_failed);

/* qsort comparator of parsed JSON records (json_t *) by their "run" index. */
int mbs_json_by_run_index(const void *a, const void *b);

#endif
