/* Sweeps over a suite's grid (suite.h): one child process per run, records
 * appended to a results directory, sharding (shard.h). */
#ifndef MBS_SWEEP_H
#define MBS_SWEEP_H

#include <stdio.h>

#include "results.h"
#include "run.h"
#include "suite.h"

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

/* Print the summary table of a results directory's runs.jsonl with the errors at
 * t_end (MBS_ERR_FINAL) or along the trajectory (MBS_ERR_TRAJ); *n_failed gets the
 * number of records whose status is not ok.  Returns 0, or 2 (unreadable, or traj
 * asked of records without trajectory errors). */
int mbs_summary(const char *dir, FILE *out, mbs_err_kind ek, int *n_failed);

/* qsort comparator of parsed JSON records (json_t *) by their "run" index. */
int mbs_json_by_run_index(const void *a, const void *b);

#endif
