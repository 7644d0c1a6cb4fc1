/* Suite files (INI, parsed with libinih) and sweeps over their grids.
 *
 *   [suite]
 *   name = smoke            ; required: names the results directory
 *   description = ...
 *   repeat = 3              ; timing repetitions per run (default 1)
 *   max_steps = 1000000     ; per-run step budget (default: the harness's)
 *
 *   [grid NAME]             ; any number of grids
 *   problems = pendulum pendulum:x0=0.2     ; whitespace-separated specs
 *   methods = index1/rk4 index1/rk8pd
 *   h = 0.01 0.005          ; step sizes for fixed-step methods
 *   tol = 1e-6 1e-9         ; tolerances for adaptive methods
 *   t_end = 10              ; optional override of the problems' t_end
 *
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
void mbs_suite_free(mbs_suite *s);

/* Run all runs (jobs worker processes), writing outdir/meta.json (atomic),
 * outdir/runs.jsonl and outdir/runs.csv (one complete line per record). Prints
 * the summary table to out.  Returns 0 if every run succeeded, 1 if some run
 * failed, 2 on bad input or I/O errors. */
int mbs_sweep(const mbs_suite *s, const char *outdir, int jobs, FILE *out);

/* Print the summary table of a results directory's runs.jsonl. */
int mbs_summary(const char *dir, FILE *out);

#endif
