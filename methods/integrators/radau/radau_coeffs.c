/* Radau IIA coefficients for s = 3, 5, 7 stages (orders 5, 9, 13), computed
 * rather than tabulated, for the variable-order Radau methods (after
 * Hairer & Wanner's code RADAU, Solving ODEs II, Sect. IV.8 and VII.4; Hairer &
 * Wanner, "Stiff differential equations solved by Radau methods", J. Comput.
 * Appl. Math. 111 (1999) 93-111):
 *   - nodes c_i: the zeros of d^(s-1)/dx^(s-1) [x^(s-1) (x - 1)^s] (Radau right
 *     points, c_s = 1; Hairer & Wanner II, Sect. IV.5), by GSL's companion-matrix
 *     root finder, polished by Newton's method in long double;
 *   - A: the collocation conditions sum_j a_ij c_j^(k-1) = c_i^k / k
 *     (k = 1..s), and A^-1, solved in long double (the s x s Vandermonde system
 *     loses about 4 digits at s = 7 in double; GSL has no long-double LU);
 *   - A^-1 = T diag(u1, [alpha_1 -beta_1; beta_1 alpha_1], ...) T^-1: the
 *     eigenvalues and eigenvectors of A in closed form for collocation (see
 *     radau_transform); for the eigenvalue alpha + i beta (beta > 0) of A^-1
 *     with eigenvector a + i b, the columns (a, -b) give the 2 x 2 block above;
 *     pairs sorted by decreasing beta as in RADAU;
 *   - the embedded error estimate (RADAU's ESTRAV, Hairer & Wanner II, Sect.
 *     IV.8): y^ - y = gamma0 h f(y_n) + sum_j e_j Z_j with gamma0 = 1/u1 and
 *     the order-s quadrature b^ on the nodes (0, c_1..c_s); with h f(Y_i) =
 *     sum_j (A^-1)_ij Z_j, e = (b^ - b)^T A^-1, and dd = u1 e is the
 *     coefficient vector of err = (u1/h E - J)^-1 (F(y_n) + E sum_j dd_j Z_j/h).
 * tests/check_radau.c compares c, u1, alpha, beta and dd with the values
 * printed in RADAU (COERCV) and with RADAU5's closed forms for s = 3. */
#include <complex.h>
#include <gsl/gsl_poly.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "radau5_impl.h"

/* Solve X B = C for X (s x m rows of C, s x s matrix B) in long double by
 * Gaussian elimination with partial pivoting on B^T: X^T = B^-T C^T.  rows
 * independent right-hand sides of length s.  Returns 0 or -1 (singular). */
static int solve_transposed_ld(int s, long double B[RADAU_SMAX][RADAU_SMAX],
                               long double X[RADAU_SMAX][RADAU_SMAX], int rows)
{
    long double M[RADAU_SMAX][RADAU_SMAX + RADAU_SMAX];
    /* augmented [B^T | X^T]: column r of the right part is right-hand side r */
    for (int i = 0; i < s; i++) {
        for (int j = 0; j < s; j++)
            M[i][j] = B[j][i];
        for (int r = 0; r < rows; r++)
            M[i][s + r] = X[r][i];
    }
    for (int k = 0; k < s; k++) {
        int p = k;
        for (int i = k + 1; i < s; i++)
            if (fabsl(M[i][k]) > fabsl(M[p][k]))
                p = i;
        if (M[p][k] == 0.0L)
            return -1;
        if (p != k)
            for (int j = 0; j < s + rows; j++) {
                long double tmp = M[k][j];
                M[k][j] = M[p][j];
                M[p][j] = tmp;
            }
        for (int i = k + 1; i < s; i++) {
            long double f = M[i][k] / M[k][k];
            for (int j = k; j < s + rows; j++)
                M[i][j] -= f * M[k][j];
        }
    }
    for (int r = 0; r < rows; r++)
        for (int i = s - 1; i >= 0; i--) {
            long double sum = M[i][s + r];
            for (int j = i + 1; j < s; j++)
                sum -= M[i][j] * X[r][j];
            X[r][i] = sum / M[i][i];
        }
    return 0;
}

/* The s roots of the degree-s polynomial sum_k a_k x^k: GSL's companion-matrix
 * solver in double, each root polished by Newton's method in long double. */
static int poly_roots(int s, const long double a[RADAU_SMAX + 1],
                      _Complex long double root[RADAU_SMAX])
{
    double ad[RADAU_SMAX + 1], z[2 * RADAU_SMAX];
    for (int k = 0; k <= s; k++)
        ad[k] = (double)a[k];
    gsl_poly_complex_workspace *w = gsl_poly_complex_workspace_alloc((size_t)s + 1);
    if (!w)
        return MBS_NO_MEMORY;
    int bad = gsl_poly_complex_solve(ad, (size_t)s + 1, w, z) != GSL_SUCCESS;
    gsl_poly_complex_workspace_free(w);
    if (bad)
        return MBS_LIBRARY_FAILURE;
    for (int r = 0; r < s; r++) {
        _Complex long double x = (long double)z[2 * r] + (long double)z[2 * r + 1] * (_Complex long double)I;
        for (int it = 0; it < 8; it++) {
            _Complex long double v = 0.0L, d = 0.0L;
            for (int k = s; k >= 0; k--) {
                d = d * x + v;
                v = v * x + a[k];
            }
            if (d == 0.0L)
                break;
            x -= v / d;
        }
        root[r] = x;
    }
    return MBS_OK;
}

/* Radau right nodes: zeros of p = d^(s-1)/dx^(s-1) [x^(s-1) (x-1)^s]. */
static int radau_nodes(int s, long double c[RADAU_SMAX])
{
    /* coefficients of x^(s-1) (x-1)^s = sum_k binom(s,k) (-1)^(s-k) x^(s-1+k) */
    long double q[2 * RADAU_SMAX] = {0}, p[RADAU_SMAX + 1] = {0}, binom = 1.0L;
    for (int k = 0; k <= s; k++) {
        q[s - 1 + k] = ((s - k) % 2 ? -1.0L : 1.0L) * binom;
        binom = binom * (s - k) / (k + 1);
    }
    for (int m = s - 1; m <= 2 * s - 1; m++) { /* (s-1)-th derivative of x^m */
        long double f = 1.0L;
        for (int r = 0; r < s - 1; r++)
            f *= m - r;
        p[m - (s - 1)] = q[m] * f;
    }
    _Complex long double z[RADAU_SMAX];
    int st = poly_roots(s, p, z);
    if (st != MBS_OK)
        return st;
    for (int i = 0; i < s; i++)
        c[i] = creall(z[i]);
    for (int i = 1; i < s; i++) /* sort ascending (insertion) */
        for (int j = i; j > 0 && c[j - 1] > c[j]; j--) {
            long double tmp = c[j];
            c[j] = c[j - 1];
            c[j - 1] = tmp;
        }
    c[s - 1] = 1.0L;
    for (int i = 0; i < s; i++)
        if (!(c[i] > 0.0L && c[i] <= 1.0L) || (i > 0 && !(c[i] > c[i - 1])))
            return MBS_LIBRARY_FAILURE;
    return MBS_OK;
}

/* T, T^-1 and the eigenvalues of A^-1, without a general eigensolver (GSL's
 * gsl_eigen_nonsymmv_alloc leaks its workspace when an inner allocation
 * fails, which the allocation-failure battery catches).  For collocation,
 * A v = mu v means: the polynomial p of degree s-1 with p(c_i) = v_i has the
 * antiderivative P (P(0) = 0) with P(c_i) = mu p(c_i), i.e. P - mu P' vanishes
 * at the nodes, P - mu P' = omega(x) = prod (x - c_i).  Hence
 * P = sum_(j>=0) mu^j omega^(j), the eigenvalues mu of A are the roots of
 * P(0) = sum_j j! w_j mu^j = 0 (w_j the coefficients of omega) and the
 * eigenvector is v_i = P(c_i) = sum_(j>=1) mu^j omega^(j)(c_i).  The roots come
 * from GSL's polynomial solver, polished by Newton's method in long double;
 * lambda = 1/mu are the eigenvalues of A^-1. */
static int radau_transform(radau_coeffs *k, const long double c[RADAU_SMAX])
{
    const int s = k->s;
    long double w[RADAU_SMAX + 1] = {1.0L}, fact = 1.0L;
    for (int i = 0; i < s; i++) /* omega = prod (x - c_i), coefficients w_0..w_s */
        for (int j = i + 1; j >= 0; j--)
            w[j] = (j > 0 ? w[j - 1] : 0.0L) - c[i] * w[j];
    long double chil[RADAU_SMAX + 1] = {0};
    for (int j = 0; j <= s; j++) { /* chi(mu) = sum_j j! w_j mu^j */
        chil[j] = fact * w[j];
        fact *= j + 1;
    }
    _Complex long double roots[RADAU_SMAX];
    int st = poly_roots(s, chil, roots);
    if (st != MBS_OK)
        return st;
    /* the real eigenvalue first, then the pairs by decreasing Im(lambda) > 0
     * (Im(mu) < 0), as in RADAU */
    _Complex long double mu[RADAU_SMAX];
    int nreal = 0, npair = 0;
    for (int r = 0; r < s; r++) {
        _Complex long double m = roots[r];
        if (fabsl(cimagl(m)) <= 1e-12L * cabsl(m)) {
            if (nreal++ == 0)
                mu[0] = creall(m);
        } else if (cimagl(m) < 0.0L && 1 + npair < s) {
            mu[1 + npair++] = m;
        }
    }
    if (nreal != 1 || 1 + 2 * npair != s)
        return MBS_LIBRARY_FAILURE;
    for (int a = 2; a < 1 + npair; a++) /* insertion sort by decreasing Im(1/mu) */
        for (int b = a; b > 1 && cimagl(1.0L / mu[b]) > cimagl(1.0L / mu[b - 1]); b--) {
            _Complex long double tmp = mu[b];
            mu[b] = mu[b - 1];
            mu[b - 1] = tmp;
        }
    long double T[RADAU_SMAX][RADAU_SMAX], TI[RADAU_SMAX][RADAU_SMAX];
    for (int e = 0; e < 1 + npair; e++) {
        _Complex long double v[RADAU_SMAX];
        long double vmax = 0.0L;
        for (int i = 0; i < s; i++) { /* v_i = sum_(j>=1) mu^j omega^(j)(c_i) */
            _Complex long double sum = 0.0L, muj = 1.0L;
            long double dj[RADAU_SMAX + 1];
            memcpy(dj, w, sizeof dj);
            for (int j = 1; j <= s; j++) {
                for (int l = 0; l + j <= s; l++) /* dj = coefficients of omega^(j) */
                    dj[l] = (l + 1) * dj[l + 1];
                long double val = 0.0L;
                for (int l = s - j; l >= 0; l--)
                    val = val * c[i] + dj[l];
                muj *= mu[e];
                sum += muj * val;
            }
            v[i] = sum;
            vmax = fmaxl(vmax, cabsl(sum));
        }
        if (!(vmax > 0.0L))
            return MBS_LIBRARY_FAILURE;
        _Complex long double lam = 1.0L / mu[e];
        for (int i = 0; i < s; i++) {
            v[i] /= vmax;
            if (e == 0) {
                T[i][0] = creall(v[i]);
            } else { /* columns (a, -b) of v = a + i b: block [alpha -beta; beta alpha] */
                T[i][2 * e - 1] = creall(v[i]);
                T[i][2 * e] = -cimagl(v[i]);
            }
        }
        if (e == 0) {
            k->u1 = (double)creall(lam);
        } else {
            k->alpha[e - 1] = (double)creall(lam);
            k->beta[e - 1] = (double)cimagl(lam);
        }
    }
    for (int r = 0; r < s; r++) /* T^-1: X T = I */
        for (int j = 0; j < s; j++)
            TI[r][j] = r == j ? 1.0L : 0.0L;
    if (solve_transposed_ld(s, T, TI, s) != 0)
        return MBS_LIBRARY_FAILURE;
    for (int i = 0; i < s; i++)
        for (int j = 0; j < s; j++) {
            k->Tm[i][j] = (double)T[i][j];
            k->TI[i][j] = (double)TI[i][j];
        }
    return MBS_OK;
}

/* Check T^-1 A^-1 T = diag(u1, [alpha -beta; beta alpha], ...) to 1e-10
 * relative: the decomposition is verified, not trusted. */
static int radau_check_blocks(const radau_coeffs *k)
{
    int s = k->s;
    double scale = k->u1;
    for (int p = 0; p < (s - 1) / 2; p++)
        scale = fmax(scale, hypot(k->alpha[p], k->beta[p]));
    for (int i = 0; i < s; i++)
        for (int j = 0; j < s; j++) {
            double sum = 0.0;
            for (int a = 0; a < s; a++)
                for (int b = 0; b < s; b++)
                    sum += k->TI[i][a] * k->Ainv[a][b] * k->Tm[b][j];
            double want = 0.0;
            if (i == 0 && j == 0)
                want = k->u1;
            else if (i > 0 && j > 0 && (i - 1) / 2 == (j - 1) / 2) {
                int p = (i - 1) / 2, ri = (i - 1) % 2, rj = (j - 1) % 2;
                want = ri == rj ? k->alpha[p] : (ri == 0 ? -k->beta[p] : k->beta[p]);
            }
            if (!(fabs(sum - want) <= 1e-10 * scale))
                return MBS_LIBRARY_FAILURE;
        }
    return MBS_OK;
}

int mbs_radau_coeffs(int s, radau_coeffs *k)
{
    memset(k, 0, sizeof *k);
    if (s != 3 && s != 5 && s != 7)
        return MBS_BAD_INPUT;
    k->s = s;
    long double c[RADAU_SMAX], V[RADAU_SMAX][RADAU_SMAX], A[RADAU_SMAX][RADAU_SMAX],
        Ai[RADAU_SMAX][RADAU_SMAX];
    int st = radau_nodes(s, c);
    if (st != MBS_OK)
        return st;
    /* A V = C with V_jk = c_j^(k-1), C_ik = c_i^k / k */
    for (int i = 0; i < s; i++) {
        long double pw = 1.0L;
        for (int kk = 0; kk < s; kk++) {
            V[i][kk] = pw;
            pw *= c[i];
            A[i][kk] = pw / (kk + 1);
        }
    }
    if (solve_transposed_ld(s, V, A, s) != 0)
        return MBS_LIBRARY_FAILURE;
    /* A^-1: rows r of the identity solved against A^T (X A = I) */
    for (int r = 0; r < s; r++)
        for (int j = 0; j < s; j++)
            Ai[r][j] = r == j ? 1.0L : 0.0L;
    if (solve_transposed_ld(s, A, Ai, s) != 0)
        return MBS_LIBRARY_FAILURE;
    for (int i = 0; i < s; i++) {
        k->c[i] = (double)c[i];
        for (int j = 0; j < s; j++)
            k->Ainv[i][j] = (double)Ai[i][j];
    }
    if ((st = radau_transform(k, c)) != MBS_OK || (st = radau_check_blocks(k)) != MBS_OK)
        return st;
    /* embedded quadrature of order s on the nodes (0, c) with weight gamma0
     * at 0: sum_i b^_i c_i^(k-1) = 1/k - gamma0 [k = 1], k = 1..s */
    long double gamma0 = 1.0L / (long double)k->u1, bh[RADAU_SMAX][RADAU_SMAX];
    for (int kk = 0; kk < s; kk++)
        bh[0][kk] = 1.0L / (kk + 1) - (kk == 0 ? gamma0 : 0.0L);
    if (solve_transposed_ld(s, V, bh, 1) != 0) /* bh V = rhs: b^ row vector */
        return MBS_LIBRARY_FAILURE;
    /* e_j = sum_i (b^_i - b_i) (A^-1)_ij, b = last row of A (stiffly accurate) */
    for (int j = 0; j < s; j++) {
        long double e = 0.0L;
        for (int i = 0; i < s; i++)
            e += (bh[0][i] - A[s - 1][i]) * Ai[i][j];
        k->dd[j] = (double)(e * (long double)k->u1);
    }
    return MBS_OK;
}
