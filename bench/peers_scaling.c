/* Chain scaling against IDA + KLU: the N-pendulum chain, N = 100, 1000, 10000,
 * straight with every link at 0.1 rad from the downward vertical
 * (start=angles, alpha1 = alpha2 = 0.1 rad), at rest, rtol = atol = 1e-6,
 * t_end = 1 (CPU seconds are seconds per simulated second).  Our sparse
 * implicit methods (defaults: linsol=auto, the structured KKT Newton on
 * CHOLMOD) against SUNDIALS IDA with SUNLinSol_KLU and the analytic sparse
 * Jacobian (index1/ida and index2/ida with linsol=klu,
 * methods/peers/peer_sundials_klu.h).  Per N: one measuring run per method for
 * the work and the mixed error max |y - ref| / (1 + |ref|) over q and v at
 * t_end against a reference computed here (index2/radau at tol 1e-10; its
 * distance to index2/bdf at tol 1e-10 is printed as the reference's accuracy),
 * then ROUNDS timings of every method taken in turn (so that a change of
 * the machine's load hits all methods alike), the minimum per method; each
 * timing follows mbs_bench_timed (bench.h: a warm-up run, then repetitions
 * covering MBS_BENCH_MIN_CPU of CPU, here from N = 100 on single runs).  Ratio
 * lines: the fastest of ours over the fastest IDA + KLU at the same tolerance,
 * and the fastest of ours whose error is at most that IDA run's; where a
 * standalone IDA + KLU figure exists for this N (a hand-written C driver on the
 * index-1 chain with the analytic sparse Jacobian, idle machine of this kind:
 * 0.013 s at N = 100, 0.185 s at N = 1000 per simulated second; docs/methods.md),
 * the harness's index1/ida:linsol=klu as a multiple of it.  The table also goes
 * to results/bench-<date>/peers-scaling.txt.  Nothing is asserted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mathconst.h"
#include "../harness/run.h"
#include "bench.h"

enum { ROUNDS = 3, NOURS = 4, NPEER = 2, NMETH = NOURS + NPEER };

static const char *const methods[NMETH] = {
    "index2/bdf",           "index2/radau5",        "index2/radau", "index3/radau5",
    "index1/ida:linsol=klu", "index2/ida:linsol=klu",
};
static const size_t Ns[] = {100, 1000, 10000};
/* standalone IDA + KLU, index-1 chain, CPU s per simulated second (NAN: none) */
static const double standalone[] = {0.013, 0.185, NAN};
static const double TOL = 1e-6, T_END = 1.0, TOL_REF = 1e-10;

typedef struct row {
    int ok;
    double err, cpu;
    mbs_counters cnt;
    char reason[512];
} row;

/* A measuring run: status, counters and q | v at t_end (copied to y, may be NULL). */
static int measure(const char *spec, const char *method, double tol, double *y, row *r)
{
    mbs_run_spec rs = {.problem = spec, .method = method, .h = NAN, .tol = tol, .t_end = T_END,
                       .repeat = 0, .measure = 1};
    mbs_record rec;
    char err[512];
    memset(r, 0, sizeof *r);
    r->err = r->cpu = NAN;
    if (mbs_run(&rs, &rec, err, sizeof err) != MBS_OK) {
        snprintf(r->reason, sizeof r->reason, "%s", err);
        return -1;
    }
    r->ok = rec.status == MBS_OK;
    r->cnt = rec.cnt;
    snprintf(r->reason, sizeof r->reason, "%s", rec.reason);
    if (r->ok && y)
        memcpy(y, rec.final, (rec.nq + rec.nv) * sizeof(double));
    mbs_record_free(&rec);
    return r->ok ? 0 : -1;
}

static double mixed(const double *y, const double *ref, size_t n)
{
    double e = 0.0;
    for (size_t i = 0; i < n; i++)
        e = fmax(e, fabs(y[i] - ref[i]) / (1.0 + fabs(ref[i])));
    return e;
}

static int is_peer(int i)
{
    return i >= NOURS;
}

static void bench_n(const mbs_tee *o, size_t N, double alone)
{
    char spec[160];
    const double a = 0.1 / MBS_DEG; /* 0.1 rad in degrees */
    snprintf(spec, sizeof spec, "chain:N=%zu,start=angles,alpha1=%.17g,alpha2=%.17g", N, a, a);
    size_t nqv = 4 * N;
    double *ref = malloc(nqv * sizeof(double)), *chk = malloc(nqv * sizeof(double));
    double *y = malloc(nqv * sizeof(double));
    row rows[NMETH], rr = {0};
    if (!ref || !chk || !y || measure(spec, "index2/radau", TOL_REF, ref, &rr) != 0) {
        mbs_tee_printf(o, "-- N = %zu: reference run failed: %s\n\n", N, rr.reason);
        free(ref);
        free(chk);
        free(y);
        return;
    }
    double refacc = measure(spec, "index2/bdf", TOL_REF, chk, &rr) == 0 ? mixed(chk, ref, nqv)
                                                                         : NAN;
    for (int i = 0; i < NMETH; i++)
        if (measure(spec, methods[i], TOL, y, &rows[i]) == 0)
            rows[i].err = mixed(y, ref, nqv);
    for (int k = 0; k < ROUNDS; k++)
        for (int i = 0; i < NMETH; i++) {
            if (!rows[i].ok)
                continue;
            mbs_bench_timing tm;
            if (mbs_bench_timed(spec, methods[i], NAN, TOL, T_END, MBS_BENCH_MIN_CPU, 1, &tm) !=
                0) {
                rows[i].ok = 0;
                snprintf(rows[i].reason, sizeof rows[i].reason, "timing: %s", tm.why);
            } else if (!(tm.cpu_min >= rows[i].cpu)) {
                rows[i].cpu = tm.cpu_min;
            }
        }
    mbs_tee_printf(o, "-- chain N = %zu (n_q = %zu, n_l = %zu), t_end 1, tol %.0e; reference "
                      "index2/radau tol %.0e (index2/bdf tol %.0e differs by %.1e) --\n",
                   N, 2 * N, N, TOL, TOL_REF, TOL_REF, refacc);
    mbs_tee_printf(o, "%-24s %-5s %11s %10s %7s %6s %7s %7s %8s\n", "method", "class",
                   "cpu [s]", "err", "steps", "rej", "newton", "LU", "/IDA+KLU");
    int bo = -1, bp = -1;
    for (int i = 0; i < NMETH; i++) {
        if (!rows[i].ok || !isfinite(rows[i].cpu))
            continue;
        int *b = is_peer(i) ? &bp : &bo;
        if (*b < 0 || rows[i].cpu < rows[*b].cpu)
            *b = i;
    }
    /* the fastest of ours no less accurate than the fastest IDA + KLU run */
    int be = -1;
    for (int i = 0; i < NOURS && bp >= 0; i++)
        if (rows[i].ok && isfinite(rows[i].cpu) && rows[i].err <= rows[bp].err &&
            (be < 0 || rows[i].cpu < rows[be].cpu))
            be = i;
    for (int i = 0; i < NMETH; i++) {
        const row *r = &rows[i];
        const char *cl = is_peer(i) ? "peer" : "ours";
        if (!r->ok) {
            mbs_tee_printf(o, "%-24s %-5s failed: %.100s\n", methods[i], cl, r->reason);
            continue;
        }
        char ratio[16] = "-";
        if (bp >= 0)
            snprintf(ratio, sizeof ratio, "%.2f", r->cpu / rows[bp].cpu);
        mbs_tee_printf(o, "%-24s %-5s %11.4e %10.2e %7ld %6ld %7ld %7ld %8s\n", methods[i], cl,
                       r->cpu, r->err, r->cnt.steps, r->cnt.rejected, r->cnt.newton_iters,
                       r->cnt.factorizations, ratio);
    }
    if (bo >= 0 && bp >= 0)
        mbs_tee_printf(o, "scaling N = %zu: best ours / best IDA+KLU = %s / %s = %.2f (%.3g s vs "
                          "%.3g s per simulated second; errors %.1e, %.1e)\n",
                       N, methods[bo], methods[bp], rows[bo].cpu / rows[bp].cpu, rows[bo].cpu,
                       rows[bp].cpu, rows[bo].err, rows[bp].err);
    if (be >= 0)
        mbs_tee_printf(o, "scaling N = %zu: at no larger error: %s / %s = %.2f\n", N, methods[be],
                       methods[bp], rows[be].cpu / rows[bp].cpu);
    else if (bp >= 0)
        mbs_tee_printf(o, "scaling N = %zu: none of ours reaches the error of %s (%.1e) at tol "
                          "%.0e\n",
                       N, methods[bp], rows[bp].err, TOL);
    if (isfinite(alone) && rows[4].ok && isfinite(rows[4].cpu))
        mbs_tee_printf(o, "scaling N = %zu: %s %.3g s against the standalone IDA + KLU %.3g s "
                          "per simulated second: %.2fx (within 1.5x: %s)\n",
                       N, methods[4], rows[4].cpu, alone, rows[4].cpu / alone,
                       rows[4].cpu <= 1.5 * alone ? "yes" : "NO");
    mbs_tee_printf(o, "\n");
    free(ref);
    free(chk);
    free(y);
}

int mbs_bench_peers_scaling(FILE *out)
{
    char path[96];
    mbs_tee o = {.out = out, .file = mbs_bench_results_file("peers-scaling.txt", path,
                                                            sizeof path)};
    mbs_tee_printf(&o, "== chain scaling vs IDA + KLU: links at 0.1 rad, at rest; CPU min of %d "
                       "rounds over the methods in turn, each the min over runs covering "
                       ">= %.2g s CPU ==\n",
                   ROUNDS, MBS_BENCH_MIN_CPU);
    for (size_t k = 0; k < sizeof Ns / sizeof Ns[0]; k++)
        bench_n(&o, Ns[k], standalone[k]);
    if (o.file) {
        fclose(o.file);
        fprintf(out, "(table written to %s)\n\n", path);
    }
    return 0;
}
