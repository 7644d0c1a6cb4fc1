/* `make bench`: speed is measured here, never asserted in tests.  Each section
 * prints ratios against a baseline measured in the same run. */
#include "bench.h"

#include <errno.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../harness/run.h"
#include "../problems/mech.h"

/* One mbs_run of a spec: a timing run alone (no measuring run) on a fresh
 * workspace; MBS_OK and the record when it succeeded, else tm->why set (the
 * record freed). */
static int timing_run(const mbs_run_spec *spec, mbs_record *r, mbs_bench_timing *tm)
{
    char err[512];
    if (mbs_run(spec, r, err, sizeof err) != MBS_OK) {
        snprintf(tm->why, sizeof tm->why, "%.200s", err);
        return -1;
    }
    if (r->status != MBS_OK) {
        snprintf(tm->why, sizeof tm->why, "%.200s", r->reason);
        mbs_record_free(r);
        return -1;
    }
    return 0;
}

int mbs_bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int mbs_bench_timed(const char *problem, const char *method, double h, double tol, double t_end,
                    double min_cpu, int min_reps, mbs_bench_timing *tm)
{
    *tm = (mbs_bench_timing){.cpu_min = NAN, .cpu_median = NAN};
    mbs_run_spec spec = {.problem = problem, .method = method, .h = h, .tol = tol,
                         .t_end = t_end, .repeat = 1, .measure = 0};
    mbs_record warm, r;
    if (timing_run(&spec, &warm, tm) != 0)
        return -1;
    /* a run that covers min_cpu alone is its own timing (min_reps <= 1: the
     * long runs of peers_scaling are not run twice) */
    const int alone = warm.cpu_min >= min_cpu && min_reps <= 1;
    double need = min_cpu / fmax(warm.cpu_min, 1e-9);
    int n = alone                        ? 1
            : need >= MBS_BENCH_MAX_REPS ? MBS_BENCH_MAX_REPS
                                         : (int)fmax((double)min_reps, ceil(need));
    double *times = malloc((size_t)n * sizeof *times);
    size_t ny = warm.nq + warm.nv + warm.nl + warm.nx;
    int k = 0;
    if (times && alone)
        times[k++] = warm.cpu_min;
    while (times && k < n && timing_run(&spec, &r, tm) == 0) {
        int same = memcmp(&r.cnt, &warm.cnt, sizeof r.cnt) == 0 &&
                   memcmp(r.final, warm.final, ny * sizeof(double)) == 0;
        times[k] = r.cpu_min;
        mbs_record_free(&r);
        if (!same) {
            snprintf(tm->why, sizeof tm->why,
                     "timed run %d differs from the warm-up run (counters or final state)", k + 1);
            break;
        }
        k++;
    }
    if (!times)
        snprintf(tm->why, sizeof tm->why, "out of memory");
    if (!tm->why[0]) {
        qsort(times, (size_t)n, sizeof *times, mbs_bench_cmp_double);
        tm->cpu_min = times[0];
        tm->cpu_median = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
        tm->reps = n;
        tm->cnt = warm.cnt;
    }
    free(times);
    mbs_record_free(&warm);
    return tm->why[0] ? -1 : 0;
}

void mbs_tee_printf(const mbs_tee *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(o->out, fmt, ap);
    va_end(ap);
    if (o->file) {
        va_start(ap, fmt);
        vfprintf(o->file, fmt, ap);
        va_end(ap);
    }
}

FILE *mbs_bench_results_file(const char *name, char *path, size_t len)
{
    char dir[64];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(dir, sizeof dir, "results/bench-%Y-%m-%d", &tmv);
    if ((mkdir("results", 0777) != 0 && errno != EEXIST) ||
        (mkdir(dir, 0777) != 0 && errno != EEXIST))
        return NULL;
    snprintf(path, len, "%s/%s", dir, name);
    return fopen(path, "w");
}

/* The same arithmetic as index1/rk4 (linsol=lu) on the pendulum, hand-written:
 * four KKT assemblies and GSL LU solves per step, no harness. */
typedef struct bare {
    gsl_matrix *K;
    gsl_permutation *p;
    gsl_vector *rhs, *sol;
    double g;
} bare;

static void bare_rhs(bare *b, const double *y, double *dy)
{
    gsl_matrix_set_zero(b->K);
    gsl_matrix_set(b->K, 0, 0, 1.0);
    gsl_matrix_set(b->K, 1, 1, 1.0);
    gsl_matrix_set(b->K, 2, 0, y[0]);
    gsl_matrix_set(b->K, 0, 2, y[0]);
    gsl_matrix_set(b->K, 2, 1, y[1]);
    gsl_matrix_set(b->K, 1, 2, y[1]);
    gsl_vector_set(b->rhs, 0, 0.0);
    gsl_vector_set(b->rhs, 1, -b->g);
    gsl_vector_set(b->rhs, 2, -(y[2] * y[2] + y[3] * y[3]));
    int sign;
    gsl_linalg_LU_decomp(b->K, b->p, &sign);
    gsl_linalg_LU_solve(b->K, b->p, b->rhs, b->sol);
    dy[0] = y[2];
    dy[1] = y[3];
    dy[2] = gsl_vector_get(b->sol, 0);
    dy[3] = gsl_vector_get(b->sol, 1);
}

static double bare_rk4(long nsteps, double h, double *yend)
{
    bare b = {gsl_matrix_alloc(3, 3), gsl_permutation_alloc(3), gsl_vector_alloc(3),
              gsl_vector_alloc(3), 9.81};
    double y[4] = {0.0, -1.0, 1.0, 0.0}, k1[4], k2[4], k3[4], k4[4], tmp[4];
    double c0 = mbs_cpu_seconds();
    bare_rhs(&b, y, k1);
    for (long n = 0; n < nsteps; n++) {
        for (int j = 0; j < 4; j++)
            tmp[j] = y[j] + 0.5 * h * k1[j];
        bare_rhs(&b, tmp, k2);
        for (int j = 0; j < 4; j++)
            tmp[j] = y[j] + 0.5 * h * k2[j];
        bare_rhs(&b, tmp, k3);
        for (int j = 0; j < 4; j++)
            tmp[j] = y[j] + h * k3[j];
        bare_rhs(&b, tmp, k4);
        for (int j = 0; j < 4; j++)
            y[j] += h / 6.0 * (k1[j] + 2.0 * (k2[j] + k3[j]) + k4[j]);
        bare_rhs(&b, y, k1);
    }
    double c1 = mbs_cpu_seconds();
    memcpy(yend, y, sizeof y);
    gsl_matrix_free(b.K);
    gsl_permutation_free(b.p);
    gsl_vector_free(b.rhs);
    gsl_vector_free(b.sol);
    return c1 - c0;
}

int mbs_bench_overhead(FILE *out)
{
    const long nsteps = 1000000;
    const double t_end = 10.0, h = t_end / (double)nsteps;
    const int repeat = 5;
    double yend[4], bare_min = INFINITY;
    bare_rk4(nsteps / 10, h, yend); /* warm-up */
    for (int r = 0; r < repeat; r++)
        bare_min = fmin(bare_min, bare_rk4(nsteps, h, yend));
    mbs_bench_timing tm;
    if (mbs_bench_timed("pendulum", "index1/rk4", h, NAN, t_end, MBS_BENCH_MIN_CPU, repeat,
                        &tm) != 0)
        fprintf(stderr, "bench: pendulum index1/rk4: %s\n", tm.why);
    double harness = tm.cpu_min;
    long steps = tm.cnt.steps;
    fprintf(out,
            "== framework overhead: index1/rk4 on pendulum, %ld steps, min of %d (harness: of "
            "%d) ==\n",
            nsteps, repeat, tm.reps);
    fprintf(out, "%-28s %12s %12s\n", "", "cpu [s]", "ns/step");
    fprintf(out, "%-28s %12.4f %12.1f\n", "bare hand-written loop", bare_min,
            1e9 * bare_min / (double)nsteps);
    fprintf(out, "%-28s %12.4f %12.1f\n", "full harness", harness,
            1e9 * harness / (double)steps);
    fprintf(out, "ratio harness/bare: %.3f (target <= 1.2); final y bare = (%.6f, %.6f)\n\n",
            harness / bare_min, yend[0], yend[1]);
    return isfinite(harness) ? 0 : 1;
}

/* A section is selected when no names are given, or when one argument is its
 * function name without the "mbs_bench_" prefix (`mbsbench-bench peers radau`). */
static int selected(const char *fn, int argc, char **argv)
{
    const char *name = strncmp(fn, "mbs_bench_", 10) == 0 ? fn + 10 : fn;
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    char err[1024]; /* the shipped mechanism files, as the executable registers them */
    if (mbs_mech_register_dir("mechanisms", err, sizeof err) > 0)
        fprintf(stderr, "mbsbench-bench: %s\n", err);
    atexit(mbs_mech_unload_all);
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        int ok = 0;
#define MBS_BENCH(fn) ok |= strcmp(argv[i], #fn + 10) == 0;
#include "sections.def"
#undef MBS_BENCH
        if (!ok) {
            fprintf(stderr, "mbsbench-bench: unknown section '%s' (sections:", argv[i]);
#define MBS_BENCH(fn) fprintf(stderr, " %s", #fn + 10);
#include "sections.def"
#undef MBS_BENCH
            fprintf(stderr, ")\n");
            return 2;
        }
    }
#define MBS_BENCH(fn)                                                                              \
    if (selected(#fn, argc, argv))                                                                 \
        bad |= fn(stdout);
#include "sections.def"
#undef MBS_BENCH
    return bad ? 1 : 0;
}
