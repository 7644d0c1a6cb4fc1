/* Results history: every sweep appended to a SQLite database (WAL mode, one
 * transaction per sweep, busy timeout so concurrent sweeps wait for each other)
 * together with its environment record; `mbsbench history` prints or plots the
 * trend of a metric over past sweeps.
 *
 * Tables: sweeps(id, suite, results_dir, date, revision, host, cpu, compiler,
 * environment = meta.json text), runs(sweep_id, run, problem, method, problem_spec,
 * method_spec, h, tol, t_end, status, err_q, err_v, err_lambda, scd,
 * drift_exponent, cpu_median, steps, f_evals, record = the JSON record). */
#ifndef MBS_HISTORY_H
#define MBS_HISTORY_H

#include <stddef.h>

/* The default database of a results directory inside a directory named `results`:
 * results/history.sqlite (the default results/<suite>-<time>/ and any
 * --out .../results/NAME).  Returns -1 for results directories elsewhere (tests,
 * scratch sweeps), which go into the history only with --history FILE. */
int mbs_history_default_path(const char *results_dir, char *buf, size_t len);

/* Append the sweep in results_dir (meta.json + runs.jsonl) to db_path, creating
 * the database if needed.  Returns 0, or -1 with a one-line message in err. */
int mbs_history_append(const char *db_path, const char *results_dir, char *err, size_t errlen);

/* CLI: `mbsbench history -p P -m M --metric cpu_median|err_q|order_q [--db FILE]
 * [--glob] [--plot [--out FILE.png]]`.  P and M match the problem and method specs
 * exactly, or as fnmatch(3) patterns with --glob; each printed series is one case
 * (suite, specs, h or tol, tolerance mode, atol, t_end). */
int mbs_cmd_history(int argc, char **argv);

#endif
