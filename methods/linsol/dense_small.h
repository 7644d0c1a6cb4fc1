/* Tiny dense LU with partial pivoting and its triangular solves, real and
 * complex, for the fixed small blocks of the Radau iteration matrices (order
 * n - n_q: 3 on the pendulum, up to a few tens on the test problems).  The
 * arithmetic is that of GSL 2.7's gsl_linalg_LU_decomp (unblocked Level-2
 * path: pivot = first largest |a_ij| of the column, the column below the
 * pivot scaled by 1/a_jj, rank-1 update), gsl_linalg_complex_LU_decomp
 * (pivot by |re| + |im|, the column scaled by 1/a_jj, rank-1 update) and
 * gslcblas' dtrsv/ztrsv (Golub & Van Loan 2013, Algorithms 3.4.1, 3.1.1,
 * 3.1.2; [golub2013matrix]) operation for operation, so the factors and
 * solutions are the same numbers as GSL's; what it saves is GSL's per-call
 * overhead: a heap-allocated pivot vector per factorisation, views, argument
 * checks and BLAS dispatch, which on an order-3 system cost several times
 * the arithmetic (tests/check_dense_small.c compares against GSL, bench
 * section `small` times both).
 *
 * Matrices are row-major with leading dimension lda (complex: interleaved
 * (re, im) pairs, lda in complex entries).  perm has GSL's convention: row k
 * of P A is row perm[k] of A.  Header-only (static inline) so that the
 * integrators' loops inline it; methods/linsol/ is its one place.  Callers
 * take GSL's routines above MBS_SMALL_NMAX. */
#ifndef MBS_DENSE_SMALL_H
#define MBS_DENSE_SMALL_H

#include <float.h>
#include <math.h>
#include <stddef.h>

/* Largest order for which the kernel is used: GSL 2.7's crossover from its
 * Level-2 to its recursive LU and Cholesky (CROSSOVER_LU, _CHOLESKY = 24 in
 * its linalg), up to which the kernel's numbers are GSL's.  Bench section
 * `small` (factor + 2 solves) measured 0.21 / 0.50 (n = 3), 0.50 / 0.61 (8),
 * 0.78 / 0.76 (16) and 1.12 / 0.82 (32) of GSL's time, real / complex, before
 * the per-order instances below (after them, at load 8: 0.27 / 0.47 (3), 0.27 /
 * 0.62 (8)); 0.60 / 0.79 (17) and 0.71 / 0.81 (24) at load 10, the same
 * sums.  Up to 16 before 2026-11-26: at order 17 (the wheelset's Radau
 * blocks, not reduced) one integration of index2/radau5 at tol 1e-7 took
 * 1.168e9 instructions with GSL's LU and solves, 1.022e9 with the kernel
 * (callgrind), with the same final state bit for bit. */
enum { MBS_SMALL_NMAX = 24 };

/* Orders up to MBS_SMALL_FIXED run an instance of the kernel compiled for
 * that constant order (the same operations in the same order, so the same
 * numbers; the loops of known length unrolled by the compiler): at order 3
 * the loop control and index arithmetic are most of a factorisation's and a
 * solve's instructions.  Forced inline where the compiler allows it, so
 * that the dispatch below instantiates the body per order. */
enum { MBS_SMALL_FIXED = 8 };
#if defined(__GNUC__)
#define MBS_SMALL_INLINE __attribute__((always_inline))
#define MBS_SMALL_UNROLL _Pragma("GCC unroll 8")
#else
#define MBS_SMALL_INLINE
#define MBS_SMALL_UNROLL
#endif

/* [return] f(n, args) as a call with a constant n for n = 1..MBS_SMALL_FIXED
 * (RET: return, or nothing for a void f). */
#define MBS_SMALL_DISPATCH(RET, f, n, ...)                                                      \
    switch (n) {                                                                           \
    case 1: RET f(1, __VA_ARGS__); break;                                            \
    case 2: RET f(2, __VA_ARGS__); break;                                            \
    case 3: RET f(3, __VA_ARGS__); break;                                            \
    case 4: RET f(4, __VA_ARGS__); break;                                            \
    case 5: RET f(5, __VA_ARGS__); break;                                            \
    case 6: RET f(6, __VA_ARGS__); break;                                            \
    case 7: RET f(7, __VA_ARGS__); break;                                            \
    case 8: RET f(8, __VA_ARGS__); break;                                            \
    default: RET f(n, __VA_ARGS__); break;                                            \
    }

/* P A = L U in place (L unit lower, U upper); 0, or 1 when a pivot is zero
 * or not finite (the factors are then those GSL computes, unusable). */
static inline MBS_SMALL_INLINE int mbs_small_lu_n(size_t n, double *A, size_t lda, size_t *perm)
{
    int bad = 0;
    MBS_SMALL_UNROLL
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    MBS_SMALL_UNROLL
    for (size_t j = 0; j < n; j++) {
        size_t piv = j;
        double amax = fabs(A[j * lda + j]);
        MBS_SMALL_UNROLL
        for (size_t i = j + 1; i < n; i++) {
            double a = fabs(A[i * lda + j]);
            if (a > amax) { /* the first of equal maxima, as idamax */
                amax = a;
                piv = i;
            }
        }
        if (piv != j) {
            double *rj = A + j * lda, *rp = A + piv * lda;
            MBS_SMALL_UNROLL
            for (size_t k = 0; k < n; k++) {
                double tmp = rj[k];
                rj[k] = rp[k];
                rp[k] = tmp;
            }
            size_t tp = perm[j];
            perm[j] = perm[piv];
            perm[piv] = tp;
        }
        const double *rj = A + j * lda;
        const double ajj = rj[j];
        if (!(ajj != 0.0 && isfinite(ajj)))
            bad = 1;
        if (fabs(ajj) >= DBL_MIN) {
            const double r = 1.0 / ajj;
            MBS_SMALL_UNROLL
            for (size_t i = j + 1; i < n; i++)
                A[i * lda + j] *= r;
        } else {
            MBS_SMALL_UNROLL
            for (size_t i = j + 1; i < n; i++)
                A[i * lda + j] /= ajj;
        }
        MBS_SMALL_UNROLL
        for (size_t i = j + 1; i < n; i++) {
            double *ri = A + i * lda;
            const double l = -ri[j]; /* dger with alpha = -1: a_ik += u_jk (-l_ij) */
            MBS_SMALL_UNROLL
            for (size_t k = j + 1; k < n; k++)
                ri[k] += rj[k] * l;
        }
    }
    return bad;
}

/* x = U^-1 L^-1 x on the factors of mbs_small_lu (x already permuted: x_k =
 * b[perm[k]]). */
static inline MBS_SMALL_INLINE void mbs_small_lu_solve_n(size_t n, const double *LU, size_t lda, double *x)
{
    MBS_SMALL_UNROLL
    for (size_t i = 1; i < n; i++) {
        const double *ri = LU + i * lda;
        double tmp = x[i];
        MBS_SMALL_UNROLL
        for (size_t j = 0; j < i; j++)
            tmp -= ri[j] * x[j];
        x[i] = tmp;
    }
    if (n == 0)
        return;
    x[n - 1] = x[n - 1] / LU[(n - 1) * lda + (n - 1)];
    MBS_SMALL_UNROLL
    for (size_t i = n - 1; i-- > 0;) {
        const double *ri = LU + i * lda;
        double tmp = x[i];
        MBS_SMALL_UNROLL
        for (size_t j = i + 1; j < n; j++)
            tmp -= ri[j] * x[j];
        x[i] = tmp / ri[i];
    }
}

/* The complex P A = L U (A: n x n interleaved (re, im), lda complex
 * entries); 0, or 1 when a pivot is zero or not finite. */
static inline MBS_SMALL_INLINE int mbs_small_zlu_n(size_t n, double *A, size_t lda, size_t *perm)
{
    int bad = 0;
    const size_t ld = 2 * lda;
    MBS_SMALL_UNROLL
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    MBS_SMALL_UNROLL
    for (size_t j = 0; j < n; j++) {
        size_t piv = j;
        double amax = fabs(A[j * ld + 2 * j]) + fabs(A[j * ld + 2 * j + 1]);
        MBS_SMALL_UNROLL
        for (size_t i = j + 1; i < n; i++) {
            double a = fabs(A[i * ld + 2 * j]) + fabs(A[i * ld + 2 * j + 1]);
            if (a > amax) { /* izamax: |re| + |im| */
                amax = a;
                piv = i;
            }
        }
        if (piv != j) {
            double *rj = A + j * ld, *rp = A + piv * ld;
            MBS_SMALL_UNROLL
            for (size_t k = 0; k < 2 * n; k++) {
                double tmp = rj[k];
                rj[k] = rp[k];
                rp[k] = tmp;
            }
            size_t tp = perm[j];
            perm[j] = perm[piv];
            perm[piv] = tp;
        }
        const double *rj = A + j * ld;
        const double ar = rj[2 * j], ai = rj[2 * j + 1];
        if (!(isfinite(ar) && isfinite(ai) && (ar != 0.0 || ai != 0.0)))
            bad = 1;
        /* 1/a_jj as gsl_complex_inverse: s = 1/|a|, ((ar s) s, -(ai s) s) */
        const double s = 1.0 / hypot(ar, ai);
        const double rr = (ar * s) * s, ri_ = -(ai * s) * s;
        MBS_SMALL_UNROLL
        for (size_t i = j + 1; i < n; i++) { /* zscal: (xr rr - xi ri, xr ri + xi rr) */
            double *x = A + i * ld + 2 * j;
            const double xr = x[0], xi = x[1];
            x[0] = rr * xr - ri_ * xi;
            x[1] = rr * xi + ri_ * xr;
        }
        MBS_SMALL_UNROLL
        for (size_t i = j + 1; i < n; i++) { /* zgeru, alpha = -1: a_ik += (-l_ij) u_jk */
            double *ri = A + i * ld;
            const double lr = -ri[2 * j] - 0.0 * ri[2 * j + 1],
                         li = -ri[2 * j + 1] + 0.0 * ri[2 * j];
            MBS_SMALL_UNROLL
            for (size_t k = j + 1; k < n; k++) {
                const double ur = rj[2 * k], ui = rj[2 * k + 1];
                ri[2 * k] += ur * lr - ui * li;
                ri[2 * k + 1] += ur * li + ui * lr;
            }
        }
    }
    return bad;
}

/* |x + iy| as gslcblas' xhypot (not libm's hypot: max sqrt(1 + (min/max)^2)),
 * which ztrsv divides by. */
static inline double mbs_small_cblas_hypot(double x, double y)
{
    const double xa = fabs(x), ya = fabs(y);
    const double mn = xa < ya ? xa : ya, mx = xa < ya ? ya : xa;
    if (mn == 0.0)
        return mx;
    const double u = mn / mx;
    return mx * sqrt(1.0 + u * u);
}

/* The divisions by u_ii of mbs_small_zlu_solve depend on the factors alone:
 * d[3 i .. 3 i + 2] = (s, re u_ii / s, im u_ii / s), s = |u_ii| as gslcblas'
 * xhypot.  Taken once per factorisation, they spare every solve the hypot and
 * two of its four divisions per row (mbs_small_zlu_solve_d: the same numbers
 * as mbs_small_zlu_solve). */
static inline void mbs_small_zlu_diag(size_t n, const double *LU, size_t lda, double *d)
{
    for (size_t i = 0; i < n; i++) {
        const double ar = LU[2 * (i * lda + i)], ai = LU[2 * (i * lda + i) + 1];
        const double s = mbs_small_cblas_hypot(ar, ai);
        d[3 * i] = s;
        d[3 * i + 1] = ar / s;
        d[3 * i + 2] = ai / s;
    }
}

/* x = U^-1 L^-1 x on the factors of mbs_small_zlu (x interleaved, already
 * permuted); the division by u_ii as gslcblas' ztrsv, with the diagonal's
 * factors d of mbs_small_zlu_diag (have_d, a constant) or taken here. */
static inline MBS_SMALL_INLINE void mbs_small_zlu_solve_core(size_t n, const double *LU,
                                                             size_t lda, int have_d,
                                                             const double *d, double *x)
{
    const size_t ld = 2 * lda;
    MBS_SMALL_UNROLL
    for (size_t i = 1; i < n; i++) {
        const double *ri = LU + i * ld;
        double tr = x[2 * i], ti = x[2 * i + 1];
        MBS_SMALL_UNROLL
        for (size_t j = 0; j < i; j++) {
            const double ar = ri[2 * j], ai = ri[2 * j + 1];
            tr -= ar * x[2 * j] - ai * x[2 * j + 1];
            ti -= ar * x[2 * j + 1] + ai * x[2 * j];
        }
        x[2 * i] = tr;
        x[2 * i + 1] = ti;
    }
    MBS_SMALL_UNROLL
    for (size_t i = n; i-- > 0;) {
        const double *ri = LU + i * ld;
        double tr = x[2 * i], ti = x[2 * i + 1];
        MBS_SMALL_UNROLL
        for (size_t j = i + 1; j < n; j++) {
            const double ar = ri[2 * j], ai = ri[2 * j + 1];
            tr -= ar * x[2 * j] - ai * x[2 * j + 1];
            ti -= ar * x[2 * j + 1] + ai * x[2 * j];
        }
        double s, br, bi;
        if (have_d) {
            s = d[3 * i];
            br = d[3 * i + 1];
            bi = d[3 * i + 2];
        } else {
            const double ar = ri[2 * i], ai = ri[2 * i + 1];
            s = mbs_small_cblas_hypot(ar, ai);
            br = ar / s;
            bi = ai / s;
        }
        x[2 * i] = (tr * br + ti * bi) / s;
        x[2 * i + 1] = (ti * br - tr * bi) / s;
    }
}

static inline MBS_SMALL_INLINE void mbs_small_zlu_solve_n(size_t n, const double *LU, size_t lda,
                                                          double *x)
{
    mbs_small_zlu_solve_core(n, LU, lda, 0, NULL, x);
}

/* mbs_small_zlu_solve with the diagonal's factors d of mbs_small_zlu_diag. */
static inline MBS_SMALL_INLINE void mbs_small_zlu_solve_d_n(size_t n, const double *LU, size_t lda,
                                                            const double *d, double *x)
{
    mbs_small_zlu_solve_core(n, LU, lda, 1, d, x);
}

/* The kernels above, dispatched on the order (MBS_SMALL_DISPATCH). */
static inline int mbs_small_lu(size_t n, double *A, size_t lda, size_t *perm)
{
    MBS_SMALL_DISPATCH(return, mbs_small_lu_n, n, A, lda, perm)
}

static inline void mbs_small_lu_solve(size_t n, const double *LU, size_t lda, double *x)
{
    MBS_SMALL_DISPATCH(, mbs_small_lu_solve_n, n, LU, lda, x)
}

static inline int mbs_small_zlu(size_t n, double *A, size_t lda, size_t *perm)
{
    MBS_SMALL_DISPATCH(return, mbs_small_zlu_n, n, A, lda, perm)
}

static inline void mbs_small_zlu_solve(size_t n, const double *LU, size_t lda, double *x)
{
    MBS_SMALL_DISPATCH(, mbs_small_zlu_solve_n, n, LU, lda, x)
}

static inline void mbs_small_zlu_solve_d(size_t n, const double *LU, size_t lda, const double *d,
                                         double *x)
{
    MBS_SMALL_DISPATCH(, mbs_small_zlu_solve_d_n, n, LU, lda, d, x)
}

/* A = L L^T in place (L in the lower triangle; the strict upper triangle is
 * left as it is), with the arithmetic of GSL 2.7's
 * gsl_linalg_cholesky_decomp1 below its recursive crossover (n <= 24):
 * column j = (a_ij - sum_k l_ik l_jk) times 1/sqrt(a_jj - ...), the sums as
 * gslcblas' dgemv forms them (Golub & Van Loan 2013, Algorithm 4.2.1;
 * [golub2013matrix]).  0, or 1 when a pivot is <= 0 (GSL's GSL_EDOM; as
 * there, a NaN pivot is not caught here). */
static inline int mbs_small_chol(size_t n, double *A, size_t lda)
{
    for (size_t j = 0; j < n; j++) {
        const double *rj = A + j * lda;
        for (size_t i = j; i < n; i++) {
            double *ri = A + i * lda, temp = 0.0;
            for (size_t k = 0; k < j; k++)
                temp += ri[k] * rj[k];
            ri[j] += -1.0 * temp;
        }
        double ajj = rj[j];
        if (ajj <= 0.0)
            return 1;
        const double r = 1.0 / sqrt(ajj);
        for (size_t i = j; i < n; i++)
            A[i * lda + j] *= r;
    }
    return 0;
}

/* x = (L L^T)^-1 x on a Cholesky factor L (lower triangle of A, as GSL's
 * gsl_linalg_cholesky_decomp1 leaves it): the two triangular solves of
 * gsl_linalg_cholesky_svx (gslcblas dtrsv, lower, then lower transposed). */
static inline void mbs_small_chol_solve(size_t n, const double *L, size_t lda, double *x)
{
    if (n == 0)
        return;
    x[0] = x[0] / L[0];
    for (size_t i = 1; i < n; i++) {
        const double *ri = L + i * lda;
        double tmp = x[i];
        for (size_t j = 0; j < i; j++)
            tmp -= ri[j] * x[j];
        x[i] = tmp / ri[i];
    }
    x[n - 1] = x[n - 1] / L[(n - 1) * lda + (n - 1)];
    for (size_t i = n - 1; i-- > 0;) {
        double tmp = x[i];
        for (size_t j = i + 1; j < n; j++)
            tmp -= L[j * lda + i] * x[j];
        x[i] = tmp / L[i * lda + i];
    }
}

#endif
