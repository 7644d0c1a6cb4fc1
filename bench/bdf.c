/* BDF work and speed ("Speed"): ggl/bdf and index2/bdf on the pendulum
 * (t_end = 10) at rtol = atol = 1e-6 and 1e-9: minimum CPU time over timing
 * runs without observer, and the work of the measuring run (steps, rejected
 * steps, Newton iterations, factorisations of the iteration matrix, residual
 * evaluations) with the error at t_end.  Nothing here is asserted. */
#include <math.h>
#include <stdio.h>

#include "../harness/run.h"
#include "bench.h"

int mbs_bench_bdf(FILE *out)
{
    static const char *methods[] = {"ggl/bdf", "index2/bdf"};
    static const double tols[] = {1e-6, 1e-9};
    enum { REPEAT = 20 };
    int bad = 0;
    fprintf(out, "== BDF on pendulum, t_end = 10, rtol = atol = tol, min of %d ==\n", REPEAT);
    fprintf(out, "%-12s %7s %11s %7s %6s %8s %8s %8s %10s %10s\n", "method", "tol", "cpu [s]",
            "steps", "rej", "newton", "factor", "f_evals", "err_q", "err_q/tol");
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < 2; i++) {
            mbs_run_spec spec = {.problem = "pendulum", .method = methods[m], .h = NAN,
                                 .tol = tols[i], .t_end = NAN, .repeat = REPEAT,
                                 .measure = 1};
            mbs_record r;
            char err[512];
            if (mbs_run(&spec, &r, err, sizeof err) != MBS_OK) {
                fprintf(stderr, "bench bdf: %s\n", err);
                bad = 1;
                continue;
            }
            if (r.status != MBS_OK) {
                fprintf(out, "%-12s %7.0e failed: %s\n", methods[m], tols[i], r.reason);
                bad = 1;
            } else {
                fprintf(out, "%-12s %7.0e %11.4e %7ld %6ld %8ld %8ld %8ld %10.3e %10.1f\n",
                        methods[m], tols[i], r.cpu_min, r.cnt.steps, r.cnt.rejected,
                        r.cnt.newton_iters, r.cnt.factorizations, r.cnt.f_evals, r.err.q,
                        r.err.q / tols[i]);
            }
            mbs_record_free(&r);
        }
    fprintf(out, "\n");
    return bad;
}
