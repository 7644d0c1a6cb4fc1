/* Divide and conquer against a sparse direct solve, serial: CPU seconds per
 * step of dca/rk4:threads=1 ([dca_augmented_lagrangian]; binary-tree assembly
 * and disassembly with the augmented-Lagrangian multiplier iteration) and of
 * index1/rk4:linsol=cholmod (the index-1 KKT system on CHOLMOD) on the chain of
 * N = 1e3, 1e4, 1e5 pendulums started tilted (start=angles, alpha1 = alpha2 =
 * 0.1 rad), at rest, h = 1e-3.  Each method runs K and 2K steps (timing runs
 * without observer: minimum CPU of a few runs after a warm-up); the cost per
 * step is the difference over K, so that what an integration does once (the
 * tree analysis, CHOLMOD's symbolic analysis) is not counted.  The
 * ratio dca / CHOLMOD is compared with the goal
 * <= 5, and the distance between the two final states (max |y_i - y'_i| / (1 +
 * max |y'|) over q, v) shows that both solved the same problem.  On a shared
 * machine the CPU times move with the load; docs/methods.md has the callgrind
 * instruction counts.  Nothing is asserted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mathconst.h"
#include "../harness/run.h"
#include "bench.h"

enum { NMETH = 2 };

static const char *const methods[NMETH] = {"dca/rk4:threads=1", "index1/rk4:linsol=cholmod"};
static const size_t Ns[] = {1000, 10000, 100000};
/* Steps K of the shorter run and timing runs after the warm-up, the same for
 * both methods.  The per-step cost is a difference of two CPU times, each the
 * minimum over the runs (the warm-up run among them, slower by the tree
 * analysis of dca and CHOLMOD's symbolic analysis: 0.6 s of CHOLMOD at
 * N = 1e5, not repeated in later runs), so K and the runs are chosen to make the difference
 * large against the jitter of one run: at N = 1e5 runs of 4 and 8 steps, 3
 * timings each (before: 1 and 2 steps, one timing each, and the ratio moved
 * 4.3 .. 6.6 between two runs on a quiet machine). */
static const long Ks[] = {32, 8, 4};
static const int Reps[] = {3, 3, 3};
static const double H = 1e-3, GOAL = 5.0;

/* Minimum CPU over reps timing runs of steps steps (plus a warm-up run); the
 * final q | v copied to y when y is not NULL.  NaN when the run fails. */
static double timed(const char *spec, const char *method, long steps, int reps, double *y,
                    size_t nqv, char *why, size_t len)
{
    mbs_run_spec rs = {.problem = spec, .method = method, .h = H, .tol = NAN,
                       .t_end = (double)steps * H, .repeat = reps + 1, .measure = 0};
    mbs_record r;
    if (mbs_run(&rs, &r, why, len) != MBS_OK)
        return NAN;
    double c = NAN;
    if (r.status != MBS_OK || r.cnt.steps != steps)
        snprintf(why, len, "%s", r.status != MBS_OK ? r.reason : "step count");
    else
        c = r.cpu_min;
    if (isfinite(c) && y)
        memcpy(y, r.final, nqv * sizeof(double));
    mbs_record_free(&r);
    return c;
}

static void bench_n(const mbs_tee *o, size_t N, long K, int reps)
{
    char spec[160], why[512] = "";
    const double a = 0.1 / MBS_DEG; /* 0.1 rad in degrees */
    snprintf(spec, sizeof spec, "chain:N=%zu,start=angles,alpha1=%.17g,alpha2=%.17g", N, a, a);
    size_t nqv = 4 * N;
    double *y[NMETH] = {malloc(nqv * sizeof(double)), malloc(nqv * sizeof(double))};
    double c1[NMETH], c2[NMETH], per[NMETH];
    int ok = y[0] && y[1];
    for (int i = 0; i < NMETH && ok; i++) {
        c1[i] = timed(spec, methods[i], K, reps, NULL, nqv, why, sizeof why);
        c2[i] = timed(spec, methods[i], 2 * K, reps, y[i], nqv, why, sizeof why);
        per[i] = (c2[i] - c1[i]) / (double)K;
        if (!isfinite(per[i])) {
            mbs_tee_printf(o, "%-8zu %-26s failed: %.100s\n", N, methods[i], why);
            ok = 0;
        }
    }
    if (ok) {
        double d = 0.0, ymax = 0.0;
        for (size_t k = 0; k < nqv; k++) {
            d = fmax(d, fabs(y[0][k] - y[1][k]));
            ymax = fmax(ymax, fabs(y[1][k]));
        }
        double ratio = per[0] / per[1];
        for (int i = 0; i < NMETH; i++)
            mbs_tee_printf(o, "%-8zu %-26s %5ld %4d %11.4e %11.4e %11.4e\n", N, methods[i],
                           2 * K, reps, c1[i], c2[i], per[i]);
        mbs_tee_printf(o, "dca N = %zu: serial per step dca/rk4 / index1/rk4:linsol=cholmod = "
                          "%.2f (<= %.0f: %s); final states differ by %.1e (relative to max "
                          "|y|)\n",
                       N, ratio, GOAL, ratio <= GOAL ? "met" : "MISSED", d / (1.0 + ymax));
    }
    free(y[0]);
    free(y[1]);
}

int mbs_bench_dca(FILE *out)
{
    char path[96];
    mbs_tee o = {.out = out, .file = mbs_bench_results_file("dca.txt", path, sizeof path)};
    mbs_tee_printf(&o, "== divide and conquer vs CHOLMOD, one thread: chain at 0.1 rad, at rest, "
                       "h = %.0e; CPU per step = [cpu(2K) - cpu(K)] / K, each the min of reps runs ==\n",
                   H);
    mbs_tee_printf(&o, "%-8s %-26s %5s %4s %11s %11s %11s\n", "N", "method", "2K", "reps",
                   "cpu(K) [s]", "cpu(2K) [s]", "per step");
    for (size_t k = 0; k < sizeof Ns / sizeof Ns[0]; k++)
        bench_n(&o, Ns[k], Ks[k], Reps[k]);
    mbs_tee_printf(&o, "\n");
    if (o.file) {
        fclose(o.file);
        fprintf(out, "(table written to %s)\n\n", path);
    }
    return 0;
}
