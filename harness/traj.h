/* Errors along the trajectory (docs/results-schema.md, `traj`).
 *
 * The measuring run's observer fills the output grid
 *     t_k = t0 + k (t_end - t0) / N,   k = 0..N   (N output steps, t_N = t_end)
 * with the method's state at each t_k, taken, in this order of preference:
 *   grid    - the accepted step lands on t_k (to 64 ulp): its own values;
 *   dense   - the method's dense output of the step that covers t_k
 *             (mbs_ctx.dense, methods/framework/method.h); where it gives q and
 *             v only (MBS_DENSE_QV: explicit Runge-Kutta, index1/radau5, CVODE),
 *             lambda as below for hermite, at the dense (t_k, q, v);
 *   hermite - interpolation between the two accepted steps around t_k:
 *             cubic Hermite on q with q' = H(q) v and on v with v' (the method's
 *             accelerations; where it gives none, v' of the index-1 system at
 *             the step's ends, else v linear); lambda as the index-1 multipliers
 *             of the interpolated (t, q, v) plus the method's own defect
 *             lambda_n - lambda1(t_n, q_n, v_n) interpolated linearly between the
 *             two steps (so the method's multipliers are kept at the steps and
 *             its lambda error is not replaced by that of the index-1 system);
 *             lambda linear where the index-1 system is not available
 *             (redundant constraints, extended problems), x linear.
 * The record's `interp` names the least accurate kind used for k >= 1.
 * Nothing here touches the method's state or counters: the index-1 solves and
 * H(q) run on the observer's own context.
 *
 * Each grid value is compared with the reference trajectory: the exact
 * solution where the problem has one, else a stored one (harness/reference.h,
 * problems/ref/<name>.traj) for the instance's parameters, t_end and N; per
 * group (q, v, lambda; not the extra variables x of extended problems)
 *     e_k = max_i |y_i(t_k) - yref_i(t_k)| / (1 + |yref_i(t_k)|),
 *     err_max = max_k e_k,  err_rms = sqrt(mean_k e_k^2),
 *     digits = -log10 err_max  (an err_max of exactly 0 counts as 1e-16).
 *
 * The IFToMM error (González et al. 2006 [gonzalez2006benchmarking]): for a
 * problem with reported quantities x_j (problem.h) and a reference of them -
 * reported(exact state) where there is an exact solution, else the problem's
 * reported_reference (an independent reduction), else reported(stored state) -
 *     ift_abs = max_k max_j |x_j(t_k) - x_ref_j(t_k)|,
 *     ift_rel = max_k max_j |x_j(t_k) - x_ref_j(t_k)| / max(|x_ref_j(t_k)|, 1e-3)
 * (MBS_IFTOMM_FLOOR); the precision classes (mbs_iftomm_class) use ift_rel. */
#define MBS_IFTOMM_FLOOR 1e-3
/* The IFToMM precision classes: "high" for a relative error <= 1e-3, "low" for
 * <= 1e-1, else NULL (also for NaN). */
#define MBS_IFTOMM_HIGH 1e-3
#define MBS_IFTOMM_LOW 1e-1
const char *mbs_iftomm_class(double err_rel);
/* |x - x_ref| / max(|x_ref|, MBS_IFTOMM_FLOOR). */
double mbs_iftomm_rel(double x, double x_ref);
#ifndef MBS_TRAJ_H
#define MBS_TRAJ_H

#include <stddef.h>

#include "../methods/framework/method.h"
#include "run.h"

typedef struct mbs_traj mbs_traj;

/* The number of output steps of a run: override > 0, else the problem's
 * output_steps, else MBS_OUTPUT_STEPS. */
long mbs_traj_steps(const mbs_problem *pb, long override);

/* Grid time k of N output steps on [t0, t_end] (t_N = t_end exactly). */
double mbs_traj_time(double t0, double t_end, long steps, long k);

/* Set up the measurement of pb (its t_end is the run's) on `steps` output
 * steps, keeping every grid state when keep_rows (for mbs_traj_write_csv).
 * Looks up the reference.  MBS_OK or MBS_NO_MEMORY. */
int mbs_traj_init(mbs_traj **out, const mbs_problem *pb, long steps, int keep_rows);
void mbs_traj_free(mbs_traj *tr);

/* One accepted step (the first call is the initial state at t0): y = q | v |
 * lambda (| x), vdot may be NULL; mctx is the method's context (its dense
 * output).  Returns 0: a failure of the measurement (the exact solution's
 * callback) leaves it unmeasured, never stops the run. */
int mbs_traj_step(mbs_traj *tr, const mbs_ctx *mctx, double t, const double *y,
                  const double *vdot);

/* The record's fields: measured only when every grid time was reached. */
void mbs_traj_result(const mbs_traj *tr, mbs_traj_rec *out);

/* Write `t,q1..,v1..,lambda1..(,x1..)(,reported names)` and one row per grid
 * time reached, atomically.  0, or -1 with a message in err. */
int mbs_traj_write_csv(const mbs_traj *tr, const char *path, char *err, size_t errlen);

/* The cubic Hermite interpolant on [0, h] of (ya, ya') at 0 and (yb, yb') at
 * h, at theta h (theta in [0, 1]). */
double mbs_hermite3(double ya, double dya, double yb, double dyb, double h, double theta);

#endif
