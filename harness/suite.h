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
 *   plugins = my.so         ; plugins (harness/plugin.h) loaded before the grids are
 *                           ; checked; a relative path is relative to the suite file
 *
 *   [grid NAME]             ; any number of grids
 *   problems = pendulum pendulum:x0=0.2     ; whitespace-separated specs
 *   methods = index1/rk4 index1/rk8pd
 *   h = 0.01 0.005          ; step sizes for fixed-step methods
 *   tol = 1e-6 1e-9         ; tolerances for adaptive methods
 *   atol = 1e-6             ; optional absolute tolerance of adaptive methods (one value
 *                           ; in (0, 1); default: atol = tol, i.e. rtol = atol = tol)
 *   t_end = 10              ; optional override of the problems' t_end
 *   output_steps = 4000     ; optional output grid of the trajectory measures (default:
 *                           ; the problem's, 100 unless it sets another)
 *   inject_failure = 0.5    ; testing the harness: problem callbacks fail for t >= 0.5
 *
 * Lines are limited to 190 characters; continue a list on indented lines:
 *   problems = pendulum pendulum:x0=0.1
 *              pendulum:x0=0.2
 * Every problem x method x (h for fixed-step | tol for adaptive) combination is
 * one run.  All keys and values are validated before anything runs. */
#ifndef MBS_SUITE_H
#define MBS_SUITE_H

#include <stddef.h>

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
/* The keys a suite file may hold: of [suite] (in_grid = 0) or of a [grid NAME]
 * (in_grid = 1); n receives their number. */
const char *const *mbs_suite_keys(int in_grid, size_t *n);

#endif
