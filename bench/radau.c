/* Radau IIA work and speed ("Speed"): index2/radau5, ggl/radau5 and
 * index3/radau5 on the pendulum (t_end = 10).  Part 1: rtol = atol = 1e-6 and
 * 1e-9, minimum CPU time over timing runs without observer, the work of the
 * measuring run and the error at t_end.  Part 2: CPU time to reach a position
 * error <= 1e-6 / 1e-9 at t_end (tolerances 10^(-k/4) scanned downwards, the
 * first that reaches the target), the measure of the peer comparison, where
 * Hairer's RADAU5 needs 0.22 / 0.83 ms (index-2), 0.33 / 1.02 ms (GGL) and
 * 0.35 / 0.93 ms (index-3) on that machine.  Nothing here is asserted. */
#include <math.h>
#include <stdio.h>

#include "../harness/run.h"
#include "bench.h"

enum { REPEAT = 20 };

static int run(const char *method, double tol, int repeat, mbs_record *r)
{
    mbs_run_spec spec = {.problem = "pendulum", .method = method, .h = NAN, .tol = tol,
                         .t_end = NAN, .repeat = repeat, .measure = 1};
    char err[512];
    if (mbs_run(&spec, r, err, sizeof err) != MBS_OK) {
        fprintf(stderr, "bench radau: %s\n", err);
        return 1;
    }
    return 0;
}

int mbs_bench_radau(FILE *out)
{
    static const char *methods[] = {"index2/radau5", "ggl/radau5", "index3/radau5"};
    static const double tols[] = {1e-6, 1e-9};
    int bad = 0;
    fprintf(out, "== Radau IIA on pendulum, t_end = 10, rtol = atol = tol, min of %d ==\n",
            REPEAT);
    fprintf(out, "%-14s %7s %11s %7s %6s %8s %8s %8s %10s %10s\n", "method", "tol", "cpu [s]",
            "steps", "rej", "newton", "factor", "f_evals", "err_q", "err_q/tol");
    for (int m = 0; m < 3; m++)
        for (int i = 0; i < 2; i++) {
            mbs_record r;
            if (run(methods[m], tols[i], REPEAT, &r)) {
                bad = 1;
                continue;
            }
            if (r.status != MBS_OK) {
                fprintf(out, "%-14s %7.0e failed: %s\n", methods[m], tols[i], r.reason);
                bad = 1;
            } else {
                fprintf(out, "%-14s %7.0e %11.4e %7ld %6ld %8ld %8ld %8ld %10.3e %10.1f\n",
                        methods[m], tols[i], r.cpu_min, r.cnt.steps, r.cnt.rejected,
                        r.cnt.newton_iters, r.cnt.factorizations, r.cnt.f_evals, r.err.q,
                        r.err.q / tols[i]);
            }
            mbs_record_free(&r);
        }
    static const double targets[] = {1e-6, 1e-9};
    fprintf(out, "CPU time to reach err_q(t_end) <= target (PEERS.md measure):\n");
    fprintf(out, "%-14s %7s %9s %11s %10s\n", "method", "target", "tol", "cpu [s]", "err_q");
    for (int m = 0; m < 3; m++)
        for (int i = 0; i < 2; i++) {
            int found = 0;
            for (int k = 16; k <= 48 && !found; k++) {
                double tol = pow(10.0, -k / 4.0);
                mbs_record r;
                if (run(methods[m], tol, 0, &r)) {
                    bad = 1;
                    break;
                }
                if (r.status == MBS_OK && r.err.q <= targets[i]) {
                    mbs_record_free(&r);
                    if (run(methods[m], tol, REPEAT, &r)) {
                        bad = 1;
                        break;
                    }
                    fprintf(out, "%-14s %7.0e %9.2e %11.4e %10.3e\n", methods[m], targets[i],
                            tol, r.cpu_min, r.err.q);
                    found = 1;
                }
                mbs_record_free(&r);
            }
            if (!found)
                fprintf(out, "%-14s %7.0e not reached for tol >= 1e-12\n", methods[m],
                        targets[i]);
        }
    fprintf(out, "\n");
    return bad;
}
