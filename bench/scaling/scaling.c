/* `make bench-scaling`: CPU time of one evaluation of the index-1
 * right-hand side (accelerations and multipliers) of the N-pendulum chain for
 * every linear-solver backend, the recursive O(N) formalism (chain-joint) and
 * the divide-and-conquer algorithm, N = 10 ... 1e5; fitted exponent of time vs
 * N (least squares in log-log over N >= 100); peak resident memory of each
 * measurement (each runs in its own child process, wait4 rusage).  Prints a
 * table and writes DIR/scaling.dat and DIR/scaling.gp (gnuplot log-log plot,
 * rendered to DIR/scaling.png when gnuplot is installed).
 * A second table puts dca and dca-proj side by side on the spatial five-bar and
 * double loop ([dca_augmented_lagrangian] Sects. 4.2-4.3, Figs. 5-7 and 9-11 qualitatively): max
 * constraint errors at position, velocity and acceleration level and the energy
 * drift over 10 s, Dormand-Prince 5(4) at rtol = atol = 1e-6 (the paper: ode45).
 * A third table: CPU time per step of ggl/bdf-fixed (order 1, h = 1e-4,
 * five steps per integration from the consistent initial state, so one KKT
 * factorisation and one index-1 solve for y'_0 per five steps are included)
 * with the structured iteration matrix (methods/formulations/dae_form.h) on linsol = lu
 * (N <= 1000), umfpack and cholmod, with its fitted exponent.
 * A fourth table (after the first): the parallel DCA (methods/recursions/dca_pass.c),
 * wall time per dca/rk4 step on the chain at N = 1e3, 1e4, 1e5 on 1 and 2 threads,
 * measured alternately in one process (minimum over the repetitions), fitted
 * exponents, the speedup, the machine's load average, and the critical path
 * counted from the tree (levels, work, span per pass) with the speedups it
 * projects for P = 8 and 64 (bench/scaling/dcapar.c).
 * Usage: mbsbench-scaling [DIR] [NMAX] [BACKEND]   (BACKEND dcapar: only that table) */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "../../harness/run.h"
#include "../../methods/recursions/dca.h"
#include "../../methods/integrators/explicit/explicit.h"
#include "../../methods/formulations/index1.h"
#include "../../methods/recursions/recursive.h"

void mbs_bench_dcapar(const char *dir, size_t nmax); /* dcapar.c */

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct backend {
    const char *name;
    const char *what;
    size_t nmax; /* largest N that fits in about a minute */
} backend;

static const backend backends[] = {
    {"lu", "index1, dense GSL LU of the KKT matrix", 1000},
    {"chol", "index1, dense block Cholesky (Pennestri & Valentini [pennestri_coordinate_reduction])", 1000},
    {"umfpack", "index1, UMFPACK sparse LU of the KKT matrix", 100000},
    {"cholmod", "index1, CHOLMOD range space", 100000},
    {"recursive", "recursive O(N) formalism, joint coordinates", 100000},
    {"dca", "divide and conquer, augmented Lagrangian", 100000},
};
enum { NB = sizeof backends / sizeof backends[0] };


/* ggl/bdf-fixed backends of the third table. */
static const backend bdf_backends[] = {
    {"lu", "ggl/bdf-fixed:order=1,newton_tol=1e-8,linsol=lu (dense KKT LU)", 1000},
    {"umfpack", "ggl/bdf-fixed:order=1,newton_tol=1e-8,linsol=umfpack", 100000},
    {"cholmod", "ggl/bdf-fixed:order=1,newton_tol=1e-8,linsol=cholmod", 100000},
};
enum { NBDF = sizeof bdf_backends / sizeof bdf_backends[0] };

/* Mean CPU time per ggl/bdf-fixed step on the chain (this child process);
 * *iters = steps timed, *passes = Newton iterations per step (rounded). */
static double measure_bdf(int k, size_t N, long *iters, int *passes)
{
    char spec[128], err[256];
    snprintf(spec, sizeof spec, "chain:N=%zu,start=angles,alpha1=30,alpha2=10", N);
    mbs_problem pb;
    if (mbs_problem_open(&pb, spec, err, sizeof err) != MBS_OK)
        return NAN;
    mbs_ctx ctx;
    if (mbs_ctx_init(&ctx, &pb) != MBS_OK)
        return NAN;
    mbs_ctx_reset(&ctx);
    size_t ny = mbs_ny(&pb);
    double *y0 = calloc(ny, sizeof *y0), *y = calloc(ny, sizeof *y);
    double *a = calloc(pb.nv, sizeof *a);
    int have;
    if (!y0 || !y || !a || pb.def->initial(&pb, y0, y0 + pb.nq, y0 + pb.nq + pb.nv, &have))
        return NAN;
    /* consistent lambda_0 on the sparse backend */
    mbs_index1 *ix = NULL;
    if (mbs_index1_alloc(&ix, &ctx, MBS_LINSOL_UMFPACK) != MBS_OK ||
        mbs_index1_accel(ix, &ctx, 0.0, y0, y0 + pb.nq, a, y0 + pb.nq + pb.nv) != MBS_OK)
        return NAN;
    mbs_index1_free(ix);
    char mspec[128];
    snprintf(mspec, sizeof mspec, "ggl/bdf-fixed:order=1,newton_tol=1e-8,linsol=%s",
             bdf_backends[k].name);
    const mbs_method_def *m;
    mbs_params prm;
    void *st = NULL;
    if (mbs_method_parse(mspec, &m, &prm, err, sizeof err) != MBS_OK ||
        m->ops->alloc(m, &prm, &ctx, &st) != MBS_OK)
        return NAN;
    mbs_settings set = {.h = 1e-4, .rtol = 0.0, .atol = 0.0, .t_end = 5e-4};
    double t0 = 0.0, total = 0.0;
    long steps = 0, newton = 0;
    for (long rep = -1;; rep++) { /* rep -1: warm-up (symbolic analysis) */
        memcpy(y, y0, ny * sizeof *y);
        double t = 0.0;
        mbs_ctx_reset(&ctx);
        double c0 = cpu_now();
        int s = m->ops->integrate(st, &ctx, &set, &t, y);
        double c1 = cpu_now();
        if (s != MBS_OK) {
            fprintf(stderr, "%s on %s: %s\n", mspec, spec, ctx.reason);
            return NAN;
        }
        if (rep < 0) {
            t0 = c1;
            continue;
        }
        total += c1 - c0;
        steps += ctx.cnt.steps;
        newton += ctx.cnt.newton_iters;
        if ((c1 - t0 > 0.5 && rep >= 2) || c1 - t0 > 30.0)
            break;
    }
    *iters = steps;
    *passes = steps ? (int)lround((double)newton / (double)steps) : 0;
    m->ops->free_state(st);
    free(y0), free(y), free(a);
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
    return total / (double)steps;
}

/* One measurement in this (child) process: mean CPU time per evaluation; for
 * dca also the augmented-Lagrangian passes of the last evaluation. */
static double measure(int k, size_t N, long *iters, int *passes)
{
    char spec[128], err[256];
    const char *name = backends[k].name;
    int joint = strcmp(name, "recursive") == 0;
    snprintf(spec, sizeof spec, "%s:N=%zu,%s", joint ? "chain-joint" : "chain", N,
             joint ? "alpha1=30,alpha2=10" : "start=angles,alpha1=30,alpha2=10");
    mbs_problem pb;
    if (mbs_problem_open(&pb, spec, err, sizeof err) != MBS_OK)
        return NAN;
    mbs_ctx ctx;
    if (mbs_ctx_init(&ctx, &pb) != MBS_OK)
        return NAN;
    mbs_ctx_reset(&ctx);
    double *q = calloc(pb.nq, sizeof *q), *v = calloc(pb.nv, sizeof *v);
    double *l = calloc(pb.nl + 1, sizeof *l), *a = calloc(pb.nv, sizeof *a);
    int have;
    if (!q || !v || !l || !a || pb.def->initial(&pb, q, v, l, &have) != MBS_OK)
        return NAN;
    for (size_t i = 0; i < pb.nv; i++)
        v[i] = 0.1 * sin((double)i);
    mbs_index1 *ix = NULL;
    mbs_recursive *rec = NULL;
    const mbs_accel_def *acc = NULL;
    void *ws = NULL;
    char msg[256];
    int s;
    if (joint) {
        s = mbs_recursive_alloc(&rec, mbs_tree_find(pb.def), &pb);
    } else if (strcmp(name, "dca") == 0) {
        const mbs_method_def *m;
        mbs_params p;
        s = mbs_method_parse("dca/rk4", &m, &p, err, sizeof err);
        if (s == MBS_OK) {
            acc = ((const mbs_explicit_variant *)m->variant)->accel;
            s = acc->alloc(&ws, &ctx, &p);
        }
    } else {
        int kind = strcmp(name, "lu") == 0        ? MBS_LINSOL_LU
                   : strcmp(name, "chol") == 0    ? MBS_LINSOL_CHOL
                   : strcmp(name, "umfpack") == 0 ? MBS_LINSOL_UMFPACK
                                                  : MBS_LINSOL_CHOLMOD;
        s = mbs_index1_alloc(&ix, &ctx, kind);
    }
    if (s != MBS_OK)
        return NAN;
    double t0 = 0.0, total = 0.0;
    long n = 0;
    for (long rep = -1;; rep++) { /* rep -1: warm-up (symbolic analysis) */
        double c0 = cpu_now();
        if (joint)
            s = mbs_recursive_eval(rec, 0.0, q, v, a, msg, sizeof msg);
        else if (acc)
            s = acc->eval(ws, &ctx, 0.0, q, v, a, l);
        else
            s = mbs_index1_accel(ix, &ctx, 0.0, q, v, a, l);
        double c1 = cpu_now();
        if (s != MBS_OK)
            return NAN;
        if (rep < 0) {
            t0 = c1;
            continue;
        }
        total += c1 - c0;
        n++;
        if ((c1 - t0 > 0.5 && n >= 3) || c1 - t0 > 30.0)
            break;
    }
    *iters = n;
    *passes = ws ? mbs_dca_last_iterations(ws) : 1;
    /* process exits right after: no cleanup needed for the measurement, but be
     * tidy for valgrind users */
    if (rec)
        mbs_recursive_free(rec);
    if (ws)
        acc->free_ws(ws);
    if (ix)
        mbs_index1_free(ix);
    free(q), free(v), free(l), free(a);
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
    return total / (double)n;
}

/* Run measure() in a child; time per evaluation and peak RSS [MB]. */
static int run_child(int k, size_t N, double *t, double *mb, long *iters, int *passes, int bdf)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(fd[0]);
        gsl_set_error_handler_off();
        long it = 0;
        int ps = 0;
        double r[3];
        r[0] = bdf ? measure_bdf(k, N, &it, &ps) : measure(k, N, &it, &ps);
        r[1] = (double)it;
        r[2] = (double)ps;
        if (write(fd[1], r, sizeof r) != (ssize_t)sizeof r)
            _exit(2);
        _exit(0);
    }
    close(fd[1]);
    double r[3] = {NAN, 0, 0};
    ssize_t got = read(fd[0], r, sizeof r);
    close(fd[0]);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    *t = got == (ssize_t)sizeof r ? r[0] : NAN;
    *iters = (long)r[1];
    *passes = (int)r[2];
    *mb = (double)ru.ru_maxrss / 1024.0;
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "results/scaling";
    size_t nmax = argc > 2 ? (size_t)atof(argv[2]) : 100000;
    const char *only = argc > 3 ? argv[3] : NULL;
    static const size_t Ns[] = {10, 100, 1000, 10000, 100000};
    enum { NN = sizeof Ns / sizeof Ns[0] };
    double T[NB][NN], MB[NB][NN];
    int PS[NB][NN];
    char path[512];
    snprintf(path, sizeof path, "mkdir -p '%s'", dir);
    if (system(path) != 0)
        return 1;
    if (only && strcmp(only, "dcapar") == 0) { /* the parallel DCA table alone */
        mbs_bench_dcapar(dir, nmax);
        return 0;
    }
    printf("bench-scaling: chain of N pendulums, CPU time per index-1 right-hand side "
           "(accelerations + multipliers), mean over >= 0.5 s after a warm-up\n");
    printf("%-10s", "N");
    for (int k = 0; k < NB; k++)
        printf(" %21s", backends[k].name);
    printf("\n%-10s", "");
    for (int k = 0; k < NB; k++)
        printf(" %21s", "s/eval (peak MB)");
    printf("\n");
    for (int j = 0; j < NN; j++) {
        printf("%-10zu", Ns[j]);
        fflush(stdout);
        for (int k = 0; k < NB; k++) {
            T[k][j] = MB[k][j] = NAN;
            long it = 0;
            PS[k][j] = 0;
            if (Ns[j] <= backends[k].nmax && Ns[j] <= nmax &&
                (!only || strcmp(only, backends[k].name) == 0))
                run_child(k, Ns[j], &T[k][j], &MB[k][j], &it, &PS[k][j], 0);
            if (isnan(T[k][j]))
                printf(" %21s", "-");
            else
                printf(" %11.3e (%6.0f)", T[k][j], MB[k][j]);
            fflush(stdout);
        }
        printf("\n");
    }
    /* fitted exponents over N >= 100 */
    printf("%-10s", "exponent");
    double expo[NB];
    for (int k = 0; k < NB; k++) {
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        int m = 0;
        for (int j = 1; j < NN; j++)
            if (isfinite(T[k][j]) && T[k][j] > 0) {
                double x = log10((double)Ns[j]), y = log10(T[k][j]);
                sx += x, sy += y, sxx += x * x, sxy += x * y, m++;
            }
        expo[k] = m >= 2 ? (m * sxy - sx * sy) / (m * sxx - sx * sx) : NAN;
        printf(" %21.3f", expo[k]);
    }
    printf("  (least squares of log t vs log N, N >= 100)\n");
    for (int k = 0; k < NB; k++)
        printf("  %-10s %s\n", backends[k].name, backends[k].what);
    int idca = NB - 1;
    printf("dca: augmented-Lagrangian passes per evaluation (alpha = 1e12, <= 10) and time per pass:");
    for (int j = 0; j < NN; j++)
        if (isfinite(T[idca][j]))
            printf("  N=%zu: %d, %.2e s", Ns[j], PS[idca][j], T[idca][j] / PS[idca][j]);
    printf("\n");
    if (!only || strcmp(only, "dcapar") == 0)
        mbs_bench_dcapar(dir, nmax);
    int last = NN - 1;
    int ium = 2, irec = 4;
    if (isfinite(T[irec][last]) && isfinite(T[ium][last]))
        printf("recursive / umfpack at N = %zu: %.2f\n", Ns[last], T[irec][last] / T[ium][last]);
    /* data and gnuplot script */
    snprintf(path, sizeof path, "%s/scaling.dat", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    fprintf(f, "# N");
    for (int k = 0; k < NB; k++)
        fprintf(f, " %s_s %s_MB", backends[k].name, backends[k].name);
    fprintf(f, "\n");
    for (int j = 0; j < NN; j++) {
        fprintf(f, "%zu", Ns[j]);
        for (int k = 0; k < NB; k++)
            fprintf(f, " %.6e %.1f", T[k][j], MB[k][j]);
        fprintf(f, "\n");
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/scaling.gp", dir);
    f = fopen(path, "w");
    if (!f)
        return 1;
    fprintf(f, "set terminal pngcairo size 900,600\nset output 'scaling.png'\n"
               "set logscale xy\nset format y '%%.0e'\nset xlabel 'N (pendulums)'\n"
               "set ylabel 'CPU time per right-hand side [s]'\nset key left top\n"
               "set title 'mbsbench: chain, index-1 right-hand side vs N'\nplot ");
    for (int k = 0; k < NB; k++)
        fprintf(f, "%s'scaling.dat' using 1:%d with linespoints title '%s (p=%.2f)'",
                k ? ", " : "", 2 + 2 * k, backends[k].name, expo[k]);
    fprintf(f, "\n");
    fclose(f);
    snprintf(path, sizeof path, "cd '%s' && command -v gnuplot >/dev/null && gnuplot scaling.gp",
             dir);
    if (system(path) == 0)
        printf("plot: %s/scaling.png\n", dir);
    printf("data: %s/scaling.dat, gnuplot script: %s/scaling.gp\n", dir, dir);
    /* one GGL/BDF step per backend (structured KKT simplified Newton) */
    printf("\nbench-scaling: chain, CPU time per ggl/bdf-fixed step (order 1, h = 1e-4, "
           "5 steps per integration incl. one KKT factorisation), mean over >= 0.5 s\n");
    printf("%-10s", "N");
    for (int k = 0; k < NBDF; k++)
        printf(" %27s", bdf_backends[k].name);
    printf("\n%-10s", "");
    for (int k = 0; k < NBDF; k++)
        printf(" %27s", "s/step (peak MB, newton/st)");
    printf("\n");
    double TB[NBDF][NN];
    for (int j = 0; j < NN; j++) {
        printf("%-10zu", Ns[j]);
        fflush(stdout);
        for (int k = 0; k < NBDF; k++) {
            double mb = NAN;
            long it = 0;
            int ps = 0;
            TB[k][j] = NAN;
            if (Ns[j] <= bdf_backends[k].nmax && Ns[j] <= nmax &&
                (!only || strcmp(only, bdf_backends[k].name) == 0))
                run_child(k, Ns[j], &TB[k][j], &mb, &it, &ps, 1);
            if (isnan(TB[k][j]))
                printf(" %27s", "-");
            else
                printf(" %11.3e (%6.0f, %5d)", TB[k][j], mb, ps);
            fflush(stdout);
        }
        printf("\n");
    }
    printf("%-10s", "exponent");
    for (int k = 0; k < NBDF; k++) {
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        int m = 0;
        for (int j = 1; j < NN; j++)
            if (isfinite(TB[k][j]) && TB[k][j] > 0) {
                double x = log10((double)Ns[j]), yv = log10(TB[k][j]);
                sx += x, sy += yv, sxx += x * x, sxy += x * yv, m++;
            }
        printf(" %27.3f", m >= 2 ? (m * sxy - sx * sy) / (m * sxx - sx * sx) : NAN);
    }
    printf("  (least squares of log t vs log N, N >= 100)\n");
    for (int k = 0; k < NBDF; k++)
        printf("  %-10s %s\n", bdf_backends[k].name, bdf_backends[k].what);
    if (only)
        return 0;
    /* DCA with and without projections, [dca_augmented_lagrangian] Sects. 4.2-4.3 */
    printf("\nDCA side by side ([dca_augmented_lagrangian] Figs. 5-7, 9-11): 10 s, dopri5 rtol = atol = 1e-6\n");
    printf("%-14s %-16s %10s %10s %10s %10s %8s %8s\n", "problem", "method", "|g| max",
           "|Bv| max", "|Bv'-c|", "drift", "steps", "cpu s");
    static const char *const probs[] = {"fivebar3d", "doubleloop3d"};
    static const char *const meths[] = {"dca/dopri5", "dca-proj/dopri5"};
    gsl_set_error_handler_off();
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            mbs_run_spec spec = {.problem = probs[i], .method = meths[j], .h = NAN, .tol = 1e-6,
                                 .t_end = 10.0, .repeat = 1, .measure = 1};
            mbs_record rec;
            char err[256];
            if (mbs_run(&spec, &rec, err, sizeof err) != MBS_OK) {
                printf("%-14s %-16s %s\n", probs[i], meths[j], err);
                continue;
            }
            if (rec.status != MBS_OK)
                printf("%-14s %-16s failed: %s\n", probs[i], meths[j], rec.reason);
            else
                printf("%-14s %-16s %10.2e %10.2e %10.2e %10.2e %8ld %8.3f\n", probs[i],
                       meths[j], rec.res_pos_max, rec.res_vel_max, rec.res_acc_max,
                       rec.energy_drift, rec.cnt.steps, rec.cpu_min);
            mbs_record_free(&rec);
        }
    return 0;
}
