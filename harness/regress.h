/* Nightly accuracy regression: baselines (`mbsbench baseline bless`) and their
 * comparison with a results directory (`mbsbench compare`).  Three tiers:
 *  - exact: deterministic counters (steps, evaluations, Newton iterations...);
 *    a change is reported and fails unless allowed;
 *  - tolerance: an error (err.*, err_max.*, err_mixed_qv, residual.*, energy_drift,
 *    and scd, mescd as the errors 10^-digits) may not grow beyond max(2x, the run's
 *    tolerance, MBS_REGRESS_FLOOR); an observed order (fit over the h levels of a
 *    series) may not drop by more than 0.3; a drift exponent may not move by more
 *    than 0.3 either way;
 *  - statistical: CPU median and minimum slower by more than a threshold AND
 *    significant by a one-sided Mann-Whitney U test over the repeat times
 *    (cpu.times); only runs whose baseline median is at least MBS_REGRESS_CPU_MIN;
 *    with a second sweep (--confirm), only when that sweep's run is slower too: the
 *    repeats of one run are consecutive, so one load burst can slow all of them.
 * NaN/Inf where the baseline had a number and a newly failing run are
 * regressions; a baseline run missing from the results is counted once, as
 * missing (its series' orders are not judged), and fails the compare too. */
#ifndef MBS_REGRESS_H
#define MBS_REGRESS_H

#include <stddef.h>
#include <stdio.h>

#include "results.h"

#define MBS_REGRESS_FLOOR 1e-13 /* errors below this are round-off: never a regression */
#define MBS_REGRESS_BUSY 0.5     /* a sweep started at a load average above this many per
                                  * core has its CPU tier advisory (the machine was busy) */
#define MBS_REGRESS_CPU_MIN 5e-3 /* runs faster than this (baseline median, s) are not timed:
                                  * the clock's resolution and cache effects dominate */

typedef struct mbs_compare_opts {
    double cpu_threshold;  /* relative slow-down flagged, e.g. 0.25 (0: default 0.25) */
    double alpha;          /* significance level of the Mann-Whitney test (0: 0.01) */
    int allow_counters;    /* counter changes are reported but do not fail */
    int verbose;           /* print passing checks too */
    double state_rtol;     /* final-state tier: |dy_i| <= state_rtol (1 + |y_i|) (0: 1e-8) */
    const mbs_results *confirm; /* a second sweep of the same suite, or NULL: a CPU
                                 * slow-down is then a regression only when the second
                                 * sweep's run is slower too (by the same test) */
} mbs_compare_opts;

typedef struct mbs_compare_summary {
    int checks, regressions, counter_changes, new_runs, fixed;
    int missing;           /* baseline runs absent from the results (not in regressions) */
    int cpu_advisory;      /* CPU slow-downs reported as advisory (environments differ) */
    int cpu_unconfirmed;   /* CPU slow-downs the second sweep (opts.confirm) did not show */
} mbs_compare_summary;

/* Compare; prints the table to out (only the rows that fail, or with verbose
 * all; no table when none).  Returns 0, or 1 on a regression or a missing run, or 2
 * (one line on stderr) when a record holds more CPU times than a record keeps. */
int mbs_compare_results(const mbs_results *base, const mbs_results *now,
                        const mbs_compare_opts *opt, FILE *out, mbs_compare_summary *sum);

/* Per-case budgets from a baseline: every run of the suite that the
 * baseline holds (same problem and method specs, h or tol, and t_end when the
 * run sets one) gets max_steps = max(1000, 10 x its baseline steps + rejected),
 * max_cpu = 1 s + 10 x its baseline CPU median, max_wall = 5 s + 2 x max_cpu.
 * A case whose method went wrong then ends as a failed run with a `budget:`
 * reason, which compare reports as a regression.  Returns the number of runs
 * that received a budget. */
struct mbs_suite;
size_t mbs_baseline_budgets(const mbs_results *base, struct mbs_suite *s);

/* Write a baseline file from a results directory; 0 or 2 (message on stderr). */
int mbs_baseline_bless(const char *results_dir, const char *out_path, const char *name);
/* Load a baseline file as results; 0 or -1 with a message. */
int mbs_baseline_load(const char *path, mbs_results *r, char *err, size_t errlen);

/* One-sided Mann-Whitney U test: p-value of H0 against "b is stochastically
 * larger than a" (exact distribution for na, nb <= 12, normal approximation with
 * tie correction otherwise).  Returns 1 when either sample is empty. */
double mbs_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb);

/* CLI: `mbsbench baseline bless DIR -o FILE`, `mbsbench compare BASELINE DIR`. */
int mbs_cmd_baseline(int argc, char **argv);
int mbs_cmd_compare(int argc, char **argv);

#endif
