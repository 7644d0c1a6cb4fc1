/* The tiny dense LU kernel (methods/linsol/dense_small.h) against GSL's
 * gsl_linalg_LU_decomp / gsl_linalg_complex_LU_decomp and their triangular
 * solves: the same pivot order and factors and solutions that agree to
 * 1e-13 relative (the kernel follows GSL 2.7's operation order, so on this
 * machine they are the same numbers), residuals |A x - b| at round-off, and
 * a singular matrix reported; the same for the Cholesky factor and solves
 * (gsl_linalg_cholesky_decomp1, _svx). */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_complex_math.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "../methods/linsol/dense_small.h"
#include "testutil.h"

enum { NMAX = 24, TRIALS = 40 };

static double rel(double a, double b)
{
    return fabs(a - b) / (1.0 + fabs(b));
}

/* n = 1..NMAX, padded leading dimension, random entries (some zero). */
START_TEST(real_agrees_with_gsl)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (int trial = 0; trial < TRIALS; trial++)
        for (size_t n = 1; n <= NMAX; n++) {
            const size_t lda = n + (size_t)(trial % 3);
            gsl_matrix *A = gsl_matrix_alloc(n, n), *A0 = gsl_matrix_alloc(n, n);
            gsl_permutation *p = gsl_permutation_alloc(n);
            gsl_vector *b = gsl_vector_alloc(n), *x = gsl_vector_alloc(n);
            double B[NMAX * (NMAX + 2)], y[NMAX];
            size_t perm[NMAX];
            for (size_t i = 0; i < n; i++) {
                for (size_t j = 0; j < n; j++) {
                    double v = i == j || gsl_rng_uniform(r) > 0.2 ? 2.0 * gsl_rng_uniform(r) - 1.0
                                                                  : 0.0;
                    gsl_matrix_set(A, i, j, v);
                    B[i * lda + j] = v;
                }
                gsl_vector_set(b, i, gsl_rng_uniform(r));
            }
            gsl_matrix_memcpy(A0, A);
            int sign;
            ck_assert_int_eq(gsl_linalg_LU_decomp(A, p, &sign), GSL_SUCCESS);
            ck_assert_int_eq(mbs_small_lu(n, B, lda, perm), 0);
            for (size_t i = 0; i < n; i++) {
                ck_assert_uint_eq(perm[i], p->data[i]);
                for (size_t j = 0; j < n; j++)
                    ck_assert_double_le(rel(B[i * lda + j], gsl_matrix_get(A, i, j)), 1e-13);
            }
            ck_assert_int_eq(gsl_linalg_LU_solve(A, p, b, x), GSL_SUCCESS);
            for (size_t k = 0; k < n; k++)
                y[k] = gsl_vector_get(b, perm[k]);
            mbs_small_lu_solve(n, B, lda, y);
            double xmax = 0.0;
            for (size_t i = 0; i < n; i++) {
                ck_assert_double_le(rel(y[i], gsl_vector_get(x, i)), 1e-13 * (1.0 + xmax));
                xmax = fmax(xmax, fabs(y[i]));
            }
            for (size_t i = 0; i < n; i++) { /* residual of the kernel's solution */
                double s = -gsl_vector_get(b, i);
                for (size_t j = 0; j < n; j++)
                    s += gsl_matrix_get(A0, i, j) * y[j];
                ck_assert_double_le(fabs(s), 1e-10 * (1.0 + xmax));
            }
            gsl_matrix_free(A);
            gsl_matrix_free(A0);
            gsl_permutation_free(p);
            gsl_vector_free(b);
            gsl_vector_free(x);
        }
    gsl_rng_free(r);
}
END_TEST

START_TEST(complex_agrees_with_gsl)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    for (int trial = 0; trial < TRIALS; trial++)
        for (size_t n = 1; n <= NMAX; n++) {
            const size_t lda = n + (size_t)(trial % 2);
            gsl_matrix_complex *A = gsl_matrix_complex_alloc(n, n);
            gsl_permutation *p = gsl_permutation_alloc(n);
            gsl_vector_complex *b = gsl_vector_complex_alloc(n), *x = gsl_vector_complex_alloc(n);
            double B[2 * NMAX * (NMAX + 1)], y[2 * NMAX];
            size_t perm[NMAX];
            for (size_t i = 0; i < n; i++) {
                for (size_t j = 0; j < n; j++) {
                    double re = 2.0 * gsl_rng_uniform(r) - 1.0, im = 2.0 * gsl_rng_uniform(r) - 1.0;
                    gsl_matrix_complex_set(A, i, j, gsl_complex_rect(re, im));
                    B[2 * (i * lda + j)] = re;
                    B[2 * (i * lda + j) + 1] = im;
                }
                gsl_vector_complex_set(b, i, gsl_complex_rect(gsl_rng_uniform(r), -gsl_rng_uniform(r)));
            }
            int sign;
            ck_assert_int_eq(gsl_linalg_complex_LU_decomp(A, p, &sign), GSL_SUCCESS);
            ck_assert_int_eq(mbs_small_zlu(n, B, lda, perm), 0);
            for (size_t i = 0; i < n; i++) {
                ck_assert_uint_eq(perm[i], p->data[i]);
                for (size_t j = 0; j < n; j++) {
                    gsl_complex a = gsl_matrix_complex_get(A, i, j);
                    ck_assert_double_le(rel(B[2 * (i * lda + j)], GSL_REAL(a)), 1e-13);
                    ck_assert_double_le(rel(B[2 * (i * lda + j) + 1], GSL_IMAG(a)), 1e-13);
                }
            }
            ck_assert_int_eq(gsl_linalg_complex_LU_solve(A, p, b, x), GSL_SUCCESS);
            for (size_t k = 0; k < n; k++) {
                gsl_complex bk = gsl_vector_complex_get(b, perm[k]);
                y[2 * k] = GSL_REAL(bk);
                y[2 * k + 1] = GSL_IMAG(bk);
            }
            double yd[2 * NMAX], dg[3 * NMAX];
            memcpy(yd, y, 2 * n * sizeof(double));
            mbs_small_zlu_solve(n, B, lda, y);
            /* with the diagonal's factors taken once: the same numbers */
            mbs_small_zlu_diag(n, B, lda, dg);
            mbs_small_zlu_solve_d(n, B, lda, dg, yd);
            for (size_t i = 0; i < n; i++) {
                gsl_complex xi = gsl_vector_complex_get(x, i);
                double scale = 1.0 + gsl_complex_abs(xi);
                ck_assert_double_le(fabs(y[2 * i] - GSL_REAL(xi)), 1e-12 * scale);
                ck_assert_double_le(fabs(y[2 * i + 1] - GSL_IMAG(xi)), 1e-12 * scale);
                ck_assert(yd[2 * i] == y[2 * i] && yd[2 * i + 1] == y[2 * i + 1]);
            }
            gsl_matrix_complex_free(A);
            gsl_permutation_free(p);
            gsl_vector_complex_free(b);
            gsl_vector_complex_free(x);
        }
    gsl_rng_free(r);
}
END_TEST

/* Cholesky: SPD matrices B B^T + n/10 I, factor and solves against
 * gsl_linalg_cholesky_decomp1 / _svx (lower triangle), residual of A x = b;
 * a matrix with a non-positive pivot is reported. */
START_TEST(cholesky_agrees_with_gsl)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    for (int trial = 0; trial < TRIALS; trial++)
        for (size_t n = 1; n <= NMAX; n++) {
            double B[NMAX * NMAX], A[NMAX * NMAX], C[NMAX * NMAX], x[NMAX], y[NMAX], b[NMAX];
            for (size_t i = 0; i < n * n; i++)
                B[i] = gsl_rng_uniform(r) - 0.5;
            for (size_t i = 0; i < n; i++) {
                for (size_t j = 0; j < n; j++) {
                    double sum = i == j ? 0.1 * (double)n : 0.0;
                    for (size_t k = 0; k < n; k++)
                        sum += B[i * n + k] * B[j * n + k];
                    A[i * n + j] = C[i * n + j] = sum;
                }
                b[i] = x[i] = y[i] = gsl_rng_uniform(r);
            }
            gsl_matrix_view M = gsl_matrix_view_array(A, n, n);
            ck_assert_int_eq(gsl_linalg_cholesky_decomp1(&M.matrix), GSL_SUCCESS);
            ck_assert_int_eq(mbs_small_chol(n, C, n), 0);
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j <= i; j++)
                    ck_assert_double_le(rel(C[i * n + j], A[i * n + j]), 1e-13);
            gsl_vector_view X = gsl_vector_view_array(x, n);
            ck_assert_int_eq(gsl_linalg_cholesky_svx(&M.matrix, &X.vector), GSL_SUCCESS);
            mbs_small_chol_solve(n, C, n, y);
            double xmax = 0.0;
            for (size_t i = 0; i < n; i++)
                xmax = fmax(xmax, fabs(x[i]));
            for (size_t i = 0; i < n; i++) {
                ck_assert_double_le(fabs(y[i] - x[i]), 1e-12 * (1.0 + xmax));
                double sum = -b[i]; /* A y - b with A = L L^T from its original entries */
                for (size_t j = 0; j < n; j++) {
                    double a = 0.0;
                    for (size_t k = 0; k < n; k++)
                        a += B[i * n + k] * B[j * n + k];
                    sum += (a + (i == j ? 0.1 * (double)n : 0.0)) * y[j];
                }
                ck_assert_double_le(fabs(sum), 1e-10 * (1.0 + xmax));
            }
        }
    double S[4] = {1.0, 2.0, 2.0, 1.0}; /* eigenvalues 3, -1 */
    ck_assert_int_eq(mbs_small_chol(2, S, 2), 1);
    gsl_rng_free(r);
}
END_TEST

/* A rank-deficient matrix (two equal rows) and a non-finite entry are
 * reported; a permutation that needs every row exchange is followed. */
START_TEST(singular_and_pivoting)
{
    double A[9] = {1, 2, 3, 2, 4, 6, 1, 0, 1};
    size_t perm[3];
    ck_assert_int_eq(mbs_small_lu(3, A, 3, perm), 1);
    double Bn[4] = {1, NAN, 0, 1};
    ck_assert_int_eq(mbs_small_lu(2, Bn, 2, perm), 1);
    double Z[8] = {0, 0, 1, 1, 0, 0, 2, 2}; /* complex column of zeros */
    ck_assert_int_eq(mbs_small_zlu(2, Z, 2, perm), 1);
    /* antidiagonal: P A = I with perm = (2, 1, 0) */
    double P[9] = {0, 0, 1, 0, 1, 0, 1, 0, 0}, x[3] = {3, 2, 1};
    ck_assert_int_eq(mbs_small_lu(3, P, 3, perm), 0);
    ck_assert_uint_eq(perm[0], 2);
    ck_assert_uint_eq(perm[1], 1);
    ck_assert_uint_eq(perm[2], 0);
    mbs_small_lu_solve(3, P, 3, x); /* x = P b with b = (1, 2, 3) */
    ck_assert_double_eq(x[0], 3.0);
    ck_assert_double_eq(x[2], 1.0);
}
END_TEST

Suite *mbs_suite_dense_small(void)
{
    Suite *s = suite_create("dense_small");
    TCase *tc = tcase_create("dense_small");
    tcase_add_test(tc, real_agrees_with_gsl);
    tcase_add_test(tc, complex_agrees_with_gsl);
    tcase_add_test(tc, cholesky_agrees_with_gsl);
    tcase_add_test(tc, singular_and_pivoting);
    suite_add_tcase(s, tc);
    return s;
}
