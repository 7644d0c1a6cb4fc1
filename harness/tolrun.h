/* A direct run with separate relative and absolute tolerances (the harness's
 * mbs_run uses rtol = atol = tol), used by the [pennestri_coordinate_reduction] Table 2 reproduction
 * (bench/table2.c, MATLAB's ode45 defaults rtol = 1e-4, atol = 1e-6) and the
 * null-space tests.  One measuring run with an observer (max |g(q)| over the
 * accepted steps; final errors against the problem's exact solution), then
 * `repeat` timing runs without observer (minimum process CPU time); the
 * diagnostics of the null-space family (methods/formulations/nullspace.h) when available. */
#ifndef MBS_TOLRUN_H
#define MBS_TOLRUN_H

#include "../methods/formulations/nullspace.h"

typedef struct mbs_tolrun {
    int status;            /* mbs_status of the measuring run (or of the setup) */
    char reason[256];
    double t_final;
    double err_q, err_v;   /* max-norm errors at t_final vs the exact solution (NaN: none) */
    double res_pos_max;    /* max over accepted steps of max_i |g_i(q)| */
    double cpu_min;        /* minimum CPU seconds over the timing runs (NaN: none) */
    mbs_counters cnt;      /* of the measuring run */
    int have_diag;         /* 1: diag holds the method's mbs_ns_diag (measuring run) */
    mbs_ns_diag diag;
    size_t nq, nv, nl;
    double final[32];      /* q | v | lambda at t_final (first 32 values) */
} mbs_tolrun;

/* problem, method: specs as on the command line; t_end NaN = problem default;
 * repeat >= 0 timing runs; adaptive methods only.  Returns MBS_OK or
 * MBS_BAD_INPUT (bad specs, fixed-step method, t_end <= t0; message in
 * out->reason); the run's own status is out->status. */
int mbs_tolrun_run(const char *problem, const char *method, double rtol, double atol,
                   double t_end, int repeat, mbs_tolrun *out);

#endif
