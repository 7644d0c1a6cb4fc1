/* The tiny dense LU kernel (methods/linsol/dense_small.h) against GSL's LU
 * on the systems the Radau integrators factor and solve every step: real and
 * complex, order n = 3 (the reduced index-2 pendulum), 5, 8, 16, 32; and the
 * Cholesky factor and solves of the divide-and-conquer passes (dca_pass.c).  One
 * factorisation and two solves per repetition (RADAU5's Newton iteration
 * solves about twice per factorisation), CPU time per repetition, minimum of
 * 5 runs; the results of both agree to the last bit here (the kernel follows
 * GSL 2.7's operation order; tests/check_dense_small.c asserts 1e-13).
 * Nothing here is asserted. */
#include <gsl/gsl_complex_math.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../harness/run.h"
#include "../methods/linsol/dense_small.h"
#include "bench.h"

enum { NBIG = 32, RUNS = 5 };

/* A well-conditioned matrix: diagonal 4 + n, entries in [-1, 1) by an LCG. */
static void fill(size_t n, double *a, int cplx, unsigned *seed)
{
    const size_t w = cplx == 1 ? 2 : 1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < w * n; j++) {
            *seed = *seed * 1103515245u + 12345u;
            double v = (double)(*seed >> 8) / 8388608.0 - 1.0;
            a[i * w * n + j] = v + (j == w * i ? 4.0 + (double)n : 0.0);
        }
    if (cplx == 2) /* symmetric for the Cholesky factor */
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < i; j++)
                a[j * n + i] = a[i * n + j];
}

/* CPU seconds per repetition (factor + 2 solves); cplx: 0 real LU, 1 complex
 * LU, 2 Cholesky (lower); which: 0 GSL, 1 kernel. */
static double time_one(size_t n, int cplx, int which, long reps, double *check)
{
    const size_t w = cplx == 1 ? 2 : 1;
    double a0[2 * NBIG * NBIG], a[2 * NBIG * NBIG], b[2 * NBIG], x[2 * NBIG];
    unsigned seed = 12345u;
    fill(n, a0, cplx, &seed);
    for (size_t i = 0; i < w * n; i++)
        b[i] = 1.0 + 0.01 * (double)i;
    gsl_permutation *p = gsl_permutation_alloc(n);
    double best = INFINITY, sum = 0.0;
    for (int run = 0; run < RUNS; run++) {
        double c0 = mbs_cpu_seconds();
        for (long r = 0; r < reps; r++) {
            memcpy(a, a0, w * n * n * sizeof(double));
            int sign;
            if (which == 0 && cplx == 0) {
                gsl_matrix_view A = gsl_matrix_view_array(a, n, n);
                gsl_linalg_LU_decomp(&A.matrix, p, &sign);
                for (int k = 0; k < 2; k++) {
                    memcpy(x, b, n * sizeof(double));
                    gsl_vector_view X = gsl_vector_view_array(x, n);
                    gsl_linalg_LU_svx(&A.matrix, p, &X.vector);
                    sum += x[0];
                }
            } else if (which == 0 && cplx == 1) {
                gsl_matrix_complex_view A = gsl_matrix_complex_view_array(a, n, n);
                gsl_linalg_complex_LU_decomp(&A.matrix, p, &sign);
                for (int k = 0; k < 2; k++) {
                    memcpy(x, b, 2 * n * sizeof(double));
                    gsl_vector_complex_view X = gsl_vector_complex_view_array(x, n);
                    gsl_linalg_complex_LU_svx(&A.matrix, p, &X.vector);
                    sum += x[0];
                }
            } else if (cplx == 2 && which == 0) { /* Cholesky, GSL */
                gsl_matrix_view A = gsl_matrix_view_array(a, n, n);
                gsl_linalg_cholesky_decomp1(&A.matrix);
                for (int k = 0; k < 2; k++) {
                    memcpy(x, b, n * sizeof(double));
                    gsl_vector_view X = gsl_vector_view_array(x, n);
                    gsl_linalg_cholesky_svx(&A.matrix, &X.vector);
                    sum += x[0];
                }
            } else if (cplx == 2) { /* Cholesky, kernel */
                mbs_small_chol(n, a, n);
                for (int k = 0; k < 2; k++) {
                    memcpy(x, b, n * sizeof(double));
                    mbs_small_chol_solve(n, a, n, x);
                    sum += x[0];
                }
            } else {
                size_t *pp = p->data;
                double dg[3 * 32]; /* the complex diagonal's factors (n <= 32) */
                if (cplx) {
                    mbs_small_zlu(n, a, n, pp);
                    mbs_small_zlu_diag(n, a, n, dg);
                } else {
                    mbs_small_lu(n, a, n, pp);
                }
                for (int k = 0; k < 2; k++) {
                    for (size_t i = 0; i < n; i++)
                        for (size_t c = 0; c < w; c++)
                            x[w * i + c] = b[w * pp[i] + c];
                    if (cplx)
                        mbs_small_zlu_solve_d(n, a, n, dg, x);
                    else
                        mbs_small_lu_solve(n, a, n, x);
                    sum += x[0];
                }
            }
        }
        best = fmin(best, (mbs_cpu_seconds() - c0) / (double)reps);
    }
    gsl_permutation_free(p);
    *check = sum;
    return best;
}

int mbs_bench_small(FILE *out)
{
    static const size_t ns[] = {2, 3, 5, 8, 16, 17, 24, 32};
    static const char *kinds[] = {"real", "complex", "chol"};
    fprintf(out, "== tiny dense LU (methods/linsol/dense_small.h) vs GSL: factor + 2 solves, "
                 "min of %d ==\n",
            RUNS);
    fprintf(out, "%-8s %4s %12s %12s %8s\n", "", "n", "GSL [ns]", "kernel [ns]", "ratio");
    for (int cplx = 0; cplx < 3; cplx++)
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            size_t n = ns[k];
            long reps = (long)(2e6 / (double)(n * n * n + 20 * n));
            double s0, s1;
            double tg = time_one(n, cplx, 0, reps, &s0), tk = time_one(n, cplx, 1, reps, &s1);
            fprintf(out, "%-8s %4zu %12.1f %12.1f %8.2f%s\n", kinds[cplx], n,
                    1e9 * tg, 1e9 * tk, tk / tg, s0 == s1 ? "" : "  (results differ)");
        }
    fputc('\n', out);
    return 0;
}
