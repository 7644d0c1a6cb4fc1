/* Radau IIA for methods/integrators/radau/radau5.c: RADAU5's s = 3 collocation coefficients and
 * transformation to one real and one complex system (Hairer & Wanner II,
 * Sect. IV.8; s = 5, 7 in radau_coeffs.c), and the linear systems of the
 * simplified Newton iteration: the full dense path (real and complex LU of
 * E/h - J blocks) and the structured KKT path (dae_form.h backends).  Split
 * from radau5.c. */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_complex_math.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../core/gslalloc.h"
#include "../../linsol/dense_small.h"
#include "radau5_impl.h"

/* Radau IIA (s = 3) coefficients (Hairer & Wanner II, Table IV.5.6) and the
 * constants of RADAU5's error estimate. */
int mbs_radau_tableau(radau_coeffs *st)
{
    memset(st, 0, sizeof *st);
    st->s = 3;
    const double s6 = sqrt(6.0);
    double A[9] = {(88.0 - 7.0 * s6) / 360.0,       (296.0 - 169.0 * s6) / 1800.0,
                   (-2.0 + 3.0 * s6) / 225.0,       (296.0 + 169.0 * s6) / 1800.0,
                   (88.0 + 7.0 * s6) / 360.0,       (-2.0 - 3.0 * s6) / 225.0,
                   (16.0 - s6) / 36.0,              (16.0 + s6) / 36.0,
                   1.0 / 9.0};
    /* A^-1 = adj(A) / det(A) (3 x 3, no allocation: GSL's LU may allocate). */
    double Ai[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
            Ai[3 * i + j] = A[3 * r0 + c0] * A[3 * r1 + c1] - A[3 * r0 + c1] * A[3 * r1 + c0];
        }
    double det = A[0] * Ai[0] + A[1] * Ai[3] + A[2] * Ai[6];
    if (!(fabs(det) > 0.0))
        return MBS_LIBRARY_FAILURE;
    for (int k = 0; k < 9; k++)
        Ai[k] /= det;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            st->Ainv[i][j] = Ai[3 * i + j];
    st->c[0] = (4.0 - s6) / 10.0;
    st->c[1] = (4.0 + s6) / 10.0;
    st->c[2] = 1.0;
    st->u1 = 30.0 / (6.0 + cbrt(81.0) - cbrt(9.0)); /* real eigenvalue of A^-1 */
    st->dd[0] = -(13.0 + 7.0 * s6) / 3.0;
    st->dd[1] = (-13.0 + 7.0 * s6) / 3.0;
    st->dd[2] = -1.0 / 3.0;
    /* RADAU5's transformation matrices (T and T^-1 to 20 digits, Hairer &
     * Wanner, code RADAU5): T^-1 A^-1 T = diag(u1, [alpha -beta; beta alpha]).
     * The block structure is checked here rather than trusted. */
    static const double T0[3][3] = {
        {9.1232394870892942792e-02, -0.14125529502095420843, -3.0029194105147424492e-02},
        {0.24171793270710701896, 0.20412935229379993199, 0.38294211275726193779},
        {0.96604818261509293619, 1.0, 0.0}};
    static const double TI0[3][3] = {
        {4.3255798900631553510, 0.33919925181580986954, 0.54177053993587487119},
        {-4.1787185915519047273, -0.32768282076106238708, 0.47662355450055045196},
        {-0.50287263494578687595, 2.5719269498556054292, -0.59603920482822492497}};
    double L[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            st->Tm[i][j] = T0[i][j];
            st->TI[i][j] = TI0[i][j];
            double sum = 0.0;
            for (int k = 0; k < 3; k++)
                for (int l = 0; l < 3; l++)
                    sum += TI0[i][k] * st->Ainv[k][l] * T0[l][j];
            L[i][j] = sum;
        }
    st->alpha[0] = L[1][1];
    st->beta[0] = L[2][1];
    const double tol = 1e-12 * 10.0;
    if (fabs(L[0][0] - st->u1) > tol || fabs(L[0][1]) > tol || fabs(L[0][2]) > tol ||
        fabs(L[1][0]) > tol || fabs(L[2][0]) > tol || fabs(L[2][2] - L[1][1]) > tol ||
        fabs(L[1][2] + L[2][1]) > tol)
        return MBS_LIBRARY_FAILURE;
    return MBS_OK;
}


/* Row and column scaling of the Newton systems (index-3 scaling, [arnold2016dae]
 * Eqs. (69)-(70)): unknowns (dq / h, dv, h dlambda, dmu); rows: q 1, v h,
 * position-level constraints 1/h, velocity-level constraints 1. */
void mbs_radau_scaling(const mbs_dae_form *f, double h, double *rs, double *cs)
{
    size_t nq = f->nq, nv = f->nv, nl = f->nl;
    for (size_t i = 0; i < f->n; i++) {
        if (i < nq) {
            rs[i] = 1.0;
            cs[i] = h;
        } else if (i < nq + nv) {
            rs[i] = h;
            cs[i] = 1.0;
        } else {
            rs[i] = mbs_dae_form_position_row(f, i) ? 1.0 / h : 1.0;
            cs[i] = i < nq + nv + nl ? 1.0 / h : 1.0;
        }
    }
}

/* T = diag(rs) ((1/h) A^-1 (x) E - I (x) J) diag(cs)  (s n x s n). */
void mbs_radau_assemble(const radau_coeffs *co, size_t n, const gsl_matrix *E0,
                     const gsl_matrix *J0, const double *rs, const double *cs, double h,
                     gsl_matrix *T)
{
    const double *E = E0->data, *J = J0->data;
    const size_t te = E0->tda, tj = J0->tda, tt = T->tda, s = (size_t)co->s;
    for (size_t bi = 0; bi < s; bi++)
        for (size_t bj = 0; bj < s; bj++) {
            double a = co->Ainv[bi][bj] / h;
            for (size_t k = 0; k < n; k++) {
                double *Trow = T->data + (bi * n + k) * tt + bj * n;
                for (size_t l = 0; l < n; l++) {
                    double v = a * E[k * te + l];
                    if (bi == bj)
                        v -= J[k * tj + l];
                    Trow[l] = rs[k] * v * cs[l];
                }
            }
        }
}

int mbs_radau_lu_singular(const gsl_matrix *LU)
{
    for (size_t i = 0; i < LU->size1; i++) {
        double d = gsl_matrix_get(LU, i, i);
        if (d == 0.0 || !isfinite(d))
            return 1;
    }
    return 0;
}

/* RADAU5's second-order structure (Hairer & Wanner's code RADAU5, M1 = M2 =
 * n_q; Solving ODEs II, Sect. IV.8, "second order systems"): when the q rows
 * read q' = v, i.e. E's q rows are (I 0), J's q rows are (0 I 0) and E has
 * no q columns below them (H = I: the index-3, index-2 and Baumgarte forms;
 * not GGL, whose q rows hold G^T mu), every Newton system
 *     [gamma I  -I 0; -J_2q  A_22] (x_q, x_2) = (b_q, b_2)
 * has x_q = (b_q + x_v)/gamma, and x_2 solves the system of order n - n_q
 *     (A_22 - J_2q [I 0]/gamma) x_2 = b_2 + J_2q b_q / gamma,
 * the same solution in exact arithmetic with an LU of order n - n_q (3 instead
 * of 5 on the pendulum; 12 instead of 17 on the wheelset, an extended problem
 * whose E and dF/dy have these q rows too).  Checked on E0, J0 (exact zeros and
 * ones, as the forms set them) after every Jacobian evaluation (st->red,
 * radau5.c); 0 keeps the full system. */
int mbs_radau_reducible(const radau_state *st)
{
    const size_t n = st->n, nq = st->form->nq;
    if (!st->p1r || nq == 0 || 2 * nq > n)
        return 0;
    /* dF/dy from the derivative callbacks (H = I, dae_form_deriv.c) sets the q
     * rows of J to exactly (0 I 0) in every form but GGL, and E =
     * diag(I, M, 0) (mbs_dae_form_mass): reducible by construction, without
     * the test below (the index-1 ODE's Jacobian is a finite difference) */
    if (!st->ix && st->form->deriv && st->form->kind != MBS_FORM_GGL)
        return 1;
    const double *E = st->E0->data, *J = st->J0->data;
    const size_t te = st->E0->tda, tj = st->J0->tda;
    for (size_t k = 0; k < nq; k++) { /* q rows: E (e_k, 0), J (0, e_k, 0) */
        const double *Ek = E + k * te, *Jk = J + k * tj;
        for (size_t l = 0; l < n; l++)
            if (Ek[l] != (l == k ? 1.0 : 0.0) || Jk[l] != (l == nq + k ? 1.0 : 0.0))
                return 0;
    }
    for (size_t k = nq; k < n; k++) { /* no q columns of E below */
        const double *Ek = E + k * te;
        for (size_t l = 0; l < nq; l++)
            if (Ek[l] != 0.0)
                return 0;
    }
    return 1;
}

/* LU of the real (cplx = 0) or complex m x m block at a (leading dimension
 * lda): the tiny dense kernel of methods/linsol/dense_small.h up to
 * MBS_SMALL_NMAX (GSL's arithmetic without its per-call allocation and
 * checks), GSL's LU above; 1 for a zero or non-finite pivot. */
static int radau_lu(size_t m, double *a, size_t lda, int cplx, gsl_permutation *p, double *zd)
{
    if (m <= MBS_SMALL_NMAX && cplx) {
        if (mbs_small_zlu(m, a, lda, p->data))
            return 1;
        mbs_small_zlu_diag(m, a, lda, zd);
        return 0;
    }
    if (m <= MBS_SMALL_NMAX)
        return mbs_small_lu(m, a, lda, p->data);
    int sign;
    if (!cplx) {
        gsl_matrix A = {.size1 = m, .size2 = m, .tda = lda, .data = a, .block = NULL, .owner = 0};
        return gsl_linalg_LU_decomp(&A, p, &sign) != GSL_SUCCESS || mbs_radau_lu_singular(&A);
    }
    gsl_matrix_complex A = {.size1 = m, .size2 = m, .tda = lda, .data = a, .block = NULL,
                            .owner = 0};
    if (gsl_linalg_complex_LU_decomp(&A, p, &sign) != GSL_SUCCESS)
        return 1;
    for (size_t k = 0; k < m; k++, a += 2 * (lda + 1)) /* |d| > 0 without hypot */
        if (!(isfinite(a[0]) && isfinite(a[1]) && (a[0] != 0.0 || a[1] != 0.0)))
            return 1;
    return 0;
}

/* x = U^-1 L^-1 x on the factors of radau_lu (x permuted, complex: interleaved;
 * zd: the diagonal's factors radau_lu took). */
static inline MBS_SMALL_INLINE void radau_lu_solve(size_t m, double *a, size_t lda, int cplx,
                                                   const double *zd, double *x)
{
    if (m <= MBS_SMALL_NMAX) {
        if (cplx)
            mbs_small_zlu_solve_d(m, a, lda, zd, x);
        else
            mbs_small_lu_solve(m, a, lda, x);
        return;
    }
    if (!cplx) {
        gsl_matrix A = {.size1 = m, .size2 = m, .tda = lda, .data = a, .block = NULL, .owner = 0};
        gsl_vector X = {.size = m, .stride = 1, .data = x, .block = NULL, .owner = 0};
        gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasUnit, &A, &X);
        gsl_blas_dtrsv(CblasUpper, CblasNoTrans, CblasNonUnit, &A, &X);
        return;
    }
    gsl_matrix_complex A = {.size1 = m, .size2 = m, .tda = lda, .data = a, .block = NULL,
                            .owner = 0};
    gsl_vector_complex X = {.size = m, .stride = 1, .data = x, .block = NULL, .owner = 0};
    gsl_blas_ztrsv(CblasLower, CblasNoTrans, CblasUnit, &A, &X);
    gsl_blas_ztrsv(CblasUpper, CblasNoTrans, CblasNonUnit, &A, &X);
}

/* The s = 3 reduced blocks of mbs_radau_factor (their operands). */
typedef struct radau_red3 {
    const double *E, *J, *rs;
    size_t te, tj, o;
    double *T1;
    size_t t1;
    double *Tc;
    size_t tc;
    double u1h, ig1, ah, bh, gr, gi;
} radau_red3;

/* T1 = rs (u1/h e - j - jq/gamma1), Tc = rs ((alpha + i beta)/h e - j -
 * jq/gamma) (rows scaled, columns not: mbs_radau_factor), the expressions of mbs_radau_factor's general loop with
 * beta/h hoisted (the same quotient), instantiated per order m up to
 * MBS_SMALL_FIXED (dense_small.h). */
static inline MBS_SMALL_INLINE void radau_red3_m(size_t m, const radau_red3 *r)
{
    const size_t o = r->o;
    MBS_SMALL_UNROLL
    for (size_t k = 0; k < m; k++) {
        const size_t K = o + k;
        const double *Ek = r->E + K * r->te + o, *Jk = r->J + K * r->tj + o,
                     *Jq = r->J + K * r->tj;
        const double rK = r->rs[K];
        double *T1k = r->T1 + k * r->t1, *z = r->Tc + 2 * k * r->tc;
        MBS_SMALL_UNROLL
        for (size_t l = 0; l < m; l++) {
            double e = Ek[l], j = Jk[l];
            double jq = l < o ? Jq[l] : 0.0;
            T1k[l] = rK * (r->u1h * e - j - jq * r->ig1);
            z[2 * l] = rK * (r->ah * e - j - jq * r->gr);
            z[2 * l + 1] = rK * (r->bh * e - jq * r->gi);
        }
    }
}

static void radau_assemble_red3(size_t m, const radau_red3 *r)
{
    MBS_SMALL_DISPATCH(, radau_red3_m, m, r)
}

/* Factor the scaled Newton matrices after RADAU's transformation (Hairer &
 * Wanner II, Sect. IV.8): the real block u1/h E0 - J0 (also the matrix of the
 * error estimate) and the complex blocks (alpha_p + i beta_p)/h E0 - J0,
 * p = 1..(ns-1)/2. */
int mbs_radau_factor(radau_state *st, mbs_ctx *ctx, double t, double h)
{
    size_t n = st->n;
    const radau_coeffs *co = st->co;
    const int np = (co->s - 1) / 2;
    mbs_radau_scaling(st->form, h, st->rs, st->cs);
    const double *E = st->E0->data, *J = st->J0->data, *rs = st->rs, *cs = st->cs;
    const size_t te = st->E0->tda, tj = st->J0->tda;
    /* the reduced system: the matrices of order m = n - n_q in the leading
     * block of T1, Tc[p] (views with their row stride) */
    const size_t o = st->red ? st->form->nq : 0, m = n - o;
    gsl_matrix T1 = {.size1 = m, .size2 = m, .tda = st->T1->tda, .data = st->T1->data,
                     .block = st->T1->block, .owner = 0};
    gsl_permutation *p1 = st->red ? st->p1r : st->p1;
    const size_t t1 = T1.tda;
    /* Reduced systems: rows scaled by rs, columns not (sc = rs[K]).  Partial
     * pivoting picks the same pivots under any positive column scaling (every
     * candidate of a column carries the same factor, and the eliminations keep
     * it), so the column scaling (1/h on the lambda columns, 1 on the others
     * of the reduced system) changes the rounding only, and costs a product per
     * unknown in every solve; the unknowns then come out unscaled.  The full
     * systems keep both scalings.
     * The same expressions as sc * (u1/h e - j) etc., with the quotients u1/h
     * and alpha_p/h (the left operand of each product) hoisted; the complex
     * entries written straight into the (re, im) pairs of Tc[p].  Reduced:
     * minus the J_(2q) column of q_l over gamma in the column of v_l, with
     * 1/gamma = h/u1 (real block) or h/(alpha_p + i beta_p) (complex). */
    const double u1h = co->u1 / h;
    st->ig1 = h / co->u1;
    double ah[(RADAU_SMAX - 1) / 2];
    double *tc[(RADAU_SMAX - 1) / 2];
    size_t tt[(RADAU_SMAX - 1) / 2];
    for (int p = 0; p < np; p++) {
        ah[p] = co->alpha[p] / h;
        tc[p] = st->Tc[p]->data;
        tt[p] = st->Tc[p]->tda;
        double ab2 = co->alpha[p] * co->alpha[p] + co->beta[p] * co->beta[p];
        st->igr[p] = h * co->alpha[p] / ab2;
        st->igi[p] = -h * co->beta[p] / ab2;
    }
    if (st->red && np == 1) { /* s = 3, reduced: the instances per order m */
        const radau_red3 r3 = {.E = E, .J = J, .rs = rs, .te = te, .tj = tj, .o = o,
                               .T1 = T1.data, .t1 = t1, .Tc = tc[0], .tc = tt[0], .u1h = u1h,
                               .ig1 = st->ig1, .ah = ah[0], .bh = co->beta[0] / h,
                               .gr = st->igr[0], .gi = st->igi[0]};
        radau_assemble_red3(m, &r3);
    } else {
        for (size_t k = 0; k < m; k++) {
            const size_t K = o + k;
            const double *Ek = E + K * te + o, *Jk = J + K * tj + o, *Jq = J + K * tj;
            double *T1k = T1.data + k * t1;
            for (size_t l = 0; l < m; l++) {
                double e = Ek[l], j = Jk[l], sc = st->red ? rs[K] : rs[K] * cs[o + l];
                if (!st->red) {
                    T1k[l] = sc * (u1h * e - j);
                    for (int p = 0; p < np; p++) {
                        double *z = tc[p] + 2 * (k * tt[p] + l);
                        z[0] = sc * (ah[p] * e - j);
                        z[1] = sc * co->beta[p] / h * e;
                    }
                    continue;
                }
                double jq = l < o ? Jq[l] : 0.0;
                T1k[l] = sc * (u1h * e - j - jq * st->ig1);
                for (int p = 0; p < np; p++) {
                    double *z = tc[p] + 2 * (k * tt[p] + l);
                    z[0] = sc * (ah[p] * e - j - jq * st->igr[p]);
                    z[1] = sc * (co->beta[p] / h * e - jq * st->igi[p]);
                }
            }
        }
    }
    mbs_count_factorization(ctx);
    int bad = radau_lu(m, T1.data, t1, 0, p1, NULL);
    for (int p = 0; p < np && !bad; p++) {
        mbs_count_factorization(ctx);
        bad = radau_lu(m, tc[p], tt[p], 1, st->red ? st->pcr[p] : st->pc[p], st->zdg[p]);
    }
    if (bad)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                        "singular Radau iteration matrix (rank %zu of %zu, h=%.3g)",
                        mbs_lu_rank(&T1), m, h);
    return MBS_OK;
}

/* out = (u1/h E0 - J0)^-1 (sign rhs) on the factors of mbs_radau_factor:
 * x = P b, then the unit-lower and the upper triangular solve
 * (radau_lu_solve, without GSL's copies and repeated singularity checks;
 * the factorisation rejected zero and non-finite pivots), through the row and
 * column scaling; reduced (st->red): the system of order n - n_q, rows
 * scaled only (mbs_radau_factor), and x_q = (b_q + x_v)/gamma
 * (mbs_radau_reducible).  out may be rhs. */
static inline MBS_SMALL_INLINE void radau_solve_real_m(size_t m, radau_state *st, const double *rhs,
                                                       double sign, double *out)
{
    const size_t o = st->n - m; /* 0 unless st->red */
    const size_t *pp = (st->red ? st->p1r : st->p1)->data;
    const double *rs = st->rs, *cs = st->cs;
    double *b = st->b1->data;
    if (!st->red) {
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < m; k++)
            b[k] = sign * rs[pp[k]] * rhs[pp[k]];
    } else { /* b = P (rs r), r = b_2 + J_2q b_q / gamma, row by row */
        const double *J = st->J0->data, ig1 = st->ig1;
        const size_t tj = st->J0->tda;
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < m; k++) {
            const size_t i = pp[k];
            const double *Ji = J + (o + i) * tj;
            double sum = 0.0;
            for (size_t l = 0; l < o; l++)
                sum += Ji[l] * rhs[l];
            b[k] = rs[o + i] * (sign * (rhs[o + i] + sum * ig1));
        }
    }
    radau_lu_solve(m, st->T1->data, st->T1->tda, 0, NULL, b);
    if (!st->red) {
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < m; k++)
            out[k] = cs[k] * b[k];
        return;
    }
    /* x_q = (b_q + x_v)/gamma: entry k reads rhs[k] before it writes out[k]
     * (out may be rhs); x_v goes to the entries from o on */
    for (size_t k = 0; k < o; k++)
        out[k] = (sign * rhs[k] + b[k]) * st->ig1;
    MBS_SMALL_UNROLL
    for (size_t k = 0; k < m; k++)
        out[o + k] = b[k];
}

/* The solve above, instantiated per order m = n - o up to MBS_SMALL_FIXED
 * (loops of constant length, as the kernels'; methods/linsol/dense_small.h). */
static void radau_solve_real(radau_state *st, const double *rhs, double sign, double *out)
{
    const size_t m = st->n - (st->red ? st->form->nq : 0);
    MBS_SMALL_DISPATCH(, radau_solve_real_m, m, st, rhs, sign, out)
}

/* The complex block p: (wr + i wi) = -((alpha_p + i beta_p)/h E0 - J0)^-1
 * (Wr + i Wi), as radau_solve_real. */
static inline MBS_SMALL_INLINE void radau_solve_complex_m(size_t m, radau_state *st, int p,
                                                          const double *Wr, const double *Wi,
                                                          double *wr, double *wi)
{
    const size_t o = st->n - m; /* 0 unless st->red */
    const size_t *pp = (st->red ? st->pcr[p] : st->pc[p])->data;
    const double *rs = st->rs, *cs = st->cs;
    double *b = st->bc->data;
    if (!st->red) {
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < m; k++) { /* b = P (-rs W), LU_solve's permutation */
            size_t i = pp[k];
            b[2 * k] = -rs[i] * Wr[i];
            b[2 * k + 1] = -rs[i] * Wi[i];
        }
    } else { /* b = P (rs r), r = -(W_2 + J_2q W_q / gamma), row by row */
        const double *J = st->J0->data, gr = st->igr[p], gi = st->igi[p];
        const size_t tj = st->J0->tda;
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < m; k++) {
            const size_t i = pp[k];
            const double *Ji = J + (o + i) * tj;
            double sr = 0.0, si = 0.0;
            for (size_t l = 0; l < o; l++) {
                sr += Ji[l] * Wr[l];
                si += Ji[l] * Wi[l];
            }
            b[2 * k] = rs[o + i] * -(Wr[o + i] + (sr * gr - si * gi));
            b[2 * k + 1] = rs[o + i] * -(Wi[o + i] + (sr * gi + si * gr));
        }
    }
    radau_lu_solve(m, st->Tc[p]->data, st->Tc[p]->tda, 1, st->zdg[p], b);
    if (!st->red) {
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < m; k++) {
            wr[k] = cs[k] * b[2 * k];
            wi[k] = cs[k] * b[2 * k + 1];
        }
        return;
    }
    /* x_q = (-W_q + x_v)/gamma: entry k read before it is written (wr, wi may
     * be Wr, Wi); x_v from o on */
    const double gr = st->igr[p], gi = st->igi[p];
    for (size_t k = 0; k < o; k++) {
        double ar = -Wr[k] + b[2 * k], ai = -Wi[k] + b[2 * k + 1];
        wr[k] = ar * gr - ai * gi;
        wi[k] = ar * gi + ai * gr;
    }
    MBS_SMALL_UNROLL
    for (size_t k = 0; k < m; k++) {
        wr[o + k] = b[2 * k];
        wi[o + k] = b[2 * k + 1];
    }
}

/* Forced inline: its two callers (mbs_radau_solve_stages and
 * mbs_radau_solve_transformed) each keep their copy, as when it had one. */
static inline MBS_SMALL_INLINE void radau_solve_complex(radau_state *st, int p, const double *Wr,
                                                        const double *Wi, double *wr, double *wi)
{
    const size_t m = st->n - (st->red ? st->form->nq : 0);
    MBS_SMALL_DISPATCH(, radau_solve_complex_m, m, st, p, Wr, Wi, wr, wi)
}

static void radau_kron_any(const double M[RADAU_SMAX][RADAU_SMAX], int s, size_t n, size_t len,
                           const double *x, double d, double *y, double *yadd);

/* The dense path's block solves on W (n per stage): the real block on W_1,
 * the complex blocks on W_2p + i W_2p+1; the solutions overwrite W (forced
 * inline: both iterations keep their own copy). */
static inline MBS_SMALL_INLINE void radau_solve_blocks(radau_state *st, mbs_ctx *ctx, size_t n,
                                                       int np)
{
    mbs_count_solve(ctx);
    radau_solve_real(st, st->W, -1.0, st->W);
    for (int p = 0; p < np; p++) {
        double *Wr = st->W + (1 + 2 * p) * n;
        mbs_count_solve(ctx);
        radau_solve_complex(st, p, Wr, Wr + n, Wr, Wr + n);
    }
}

/* dZ = (T (x) I) w and Z += dZ for s = 3 in one pass over the components
 * (radau_kron3's sums, then the Newton update of radau_add: the same numbers);
 * instantiated per n up to MBS_SMALL_FIXED. */
static inline MBS_SMALL_INLINE void radau_back3_add(size_t n, const double M[RADAU_SMAX][RADAU_SMAX],
                                                    const double *restrict w,
                                                    double *restrict dZ, double *restrict Z)
{
    const double a00 = M[0][0], a01 = M[0][1], a02 = M[0][2], a10 = M[1][0], a11 = M[1][1],
                 a12 = M[1][2], a20 = M[2][0], a21 = M[2][1], a22 = M[2][2];
    MBS_SMALL_UNROLL
    for (size_t k = 0; k < n; k++) {
        const double u = w[k], v = w[n + k], x = w[2 * n + k];
        const double d0 = a00 * u + a01 * v + a02 * x, d1 = a10 * u + a11 * v + a12 * x,
                     d2 = a20 * u + a21 * v + a22 * x;
        dZ[k] = d0;
        dZ[n + k] = d1;
        dZ[2 * n + k] = d2;
        Z[k] += d0;
        Z[n + k] += d1;
        Z[2 * n + k] += d2;
    }
}

static void radau_back3_add_any(size_t n, const double M[RADAU_SMAX][RADAU_SMAX],
                                const double *w, double *dZ, double *Z)
{
    MBS_SMALL_DISPATCH(, radau_back3_add, n, M, w, dZ, Z)
}

/* dZ = -T^-1 R: W = (T^-1 (x) I) R, one real and (ns-1)/2 complex scaled
 * solves, dZ = (T (x) I) dW (RADAU's SLVRAR/SLVRAI with our row/column
 * scaling); Zadd (or NULL) += dZ, the Newton update, in the same pass. */
int mbs_radau_solve_stages(radau_state *st, mbs_ctx *ctx, double t, double *Zadd)
{
    size_t n = st->n;
    const radau_coeffs *co = st->co;
    const int np = (co->s - 1) / 2;
    mbs_radau_kron(co->TI, co->s, n, n, st->R, 1.0, st->W);
    double *w = st->Wx;
    if (w) {
        /* structured path (dae_form.h, sparse mode): w1 = -(u1/h E - J~)^-1 W1,
         * w2p + i w3p = -((alpha_p + i beta_p)/h E - J~)^-1 (W2p + i W3p), all
         * on the one real KKT factorisation and in one multi-column solve
         * (mbs_dae_form_kkt_solve_stages); no row/column scaling (the KKT
         * matrices do not depend on h) */
        double h = st->form->h, cr[3], ci[3];
        for (int p = 0; p < np; p++) {
            cr[p] = co->alpha[p] / h;
            ci[p] = co->beta[p] / h;
        }
        int sv = mbs_dae_form_kkt_solve_stages(st->form, ctx, t, co->u1 / h, (size_t)np, cr, ci,
                                               n, st->W, w);
        if (sv != MBS_OK)
            return sv;
    } else {
        w = st->W; /* dense path: the solutions overwrite W */
        radau_solve_blocks(st, ctx, n, np);
    }
    if (Zadd && co->s == 3) {
        radau_back3_add_any(n, co->Tm, w, st->dZ, Zadd);
        return MBS_OK;
    }
    if (co->s == 3) /* no Zadd */
        mbs_radau_kron(co->Tm, 3, n, n, w, 1.0, st->dZ);
    else
        radau_kron_any(co->Tm, co->s, n, n, w, 1.0, st->dZ, Zadd);
    return MBS_OK;
}

/* RADAU5's transformed simplified Newton iteration for a constant E (radau5.f
 * RADCOR label 40 and SLVRAD, Hairer & Wanner 1996 [hairer1996solving], Sect.
 * IV.8): with E Yd_i = (1/h) ((A^-1 (x) E) Z)_i and T^-1 A^-1 T = Lambda =
 * diag(u1, [alpha_p -beta_p; beta_p alpha_p]), the transformed residual of the
 * stage equations E Yd_i - F(Y_i) is
 *     W = (T^-1 (x) I) R + (Lambda/h (x) E) F,   R_i = -F(Y_i),  F = (T^-1 (x) I) Z,
 * so the iteration keeps F, evaluates no stage derivatives and no mass matrix
 * at the stages, solves the blocks for w as mbs_radau_solve_stages does, and
 * updates F += w, Z = (T (x) I) F: two s x s transformations per iteration
 * where the other form has three (A^-1 Z / h, T^-1 R, T w).  E = diag(I, M, 0)
 * of the dense DAE forms (dae_form.h), E0 of the last Jacobian; exact when M
 * is constant (problem flag MBS_PB_CONSTANT_MASS). */

/* W += (Lambda/h (x) E0) F for s stages, E0 = diag(I_nq, M, 0) (the v rows
 * read M from E0's rows nq .. nq + nv - 1, columns likewise); per q row and
 * per v row the s products E0 F_j first, then the block combinations. */
static inline MBS_SMALL_INLINE void radau_lam_e(size_t s, size_t nv, radau_state *st, double h)
{
    const size_t n = st->n, nq = st->form->nq, np = (s - 1) / 2;
    const radau_coeffs *co = st->co;
    const double *restrict F = st->Fz, *E = st->E0->data;
    double *restrict W = st->W;
    const size_t te = st->E0->tda;
    double a[(RADAU_SMAX - 1) / 2], b[(RADAU_SMAX - 1) / 2];
    const double u = co->u1 / h;
    MBS_SMALL_UNROLL
    for (size_t p = 0; p < np; p++) {
        a[p] = co->alpha[p] / h;
        b[p] = co->beta[p] / h;
    }
    for (size_t k = 0; k < nq + nv; k++) {
        double e[RADAU_SMAX];
        if (k < nq) {
            MBS_SMALL_UNROLL
            for (size_t j = 0; j < s; j++)
                e[j] = F[j * n + k];
        } else {
            const double *Ek = E + k * te + nq;
            MBS_SMALL_UNROLL
            for (size_t j = 0; j < s; j++) {
                const double *Fj = F + j * n + nq;
                double sum = Ek[0] * Fj[0]; /* nv >= 1 here (k >= nq) */
                MBS_SMALL_UNROLL
                for (size_t l = 1; l < nv; l++)
                    sum += Ek[l] * Fj[l];
                e[j] = sum;
            }
        }
        W[k] += u * e[0];
        MBS_SMALL_UNROLL
        for (size_t p = 0; p < np; p++) {
            const double x = e[1 + 2 * p], y = e[2 + 2 * p];
            W[(1 + 2 * p) * n + k] += a[p] * x - b[p] * y;
            W[(2 + 2 * p) * n + k] += b[p] * x + a[p] * y;
        }
    }
}

/* s = 3 with n_q = n_v (H = I), per n_v up to MBS_SMALL_FIXED: W = (T^-1 (x) I) R
 * + (Lambda/h (x) E0) F in one pass over the components (the T^-1 sums as
 * radau_kron3's, then the Lambda/h E0 F term of radau_lam_e added). */
static inline MBS_SMALL_INLINE void radau_w3_n(size_t nv, radau_state *st, double h)
{
    const size_t n = st->n, nq = nv;
    const double(*TI)[RADAU_SMAX] = st->co->TI;
    const double t00 = TI[0][0], t01 = TI[0][1], t02 = TI[0][2], t10 = TI[1][0], t11 = TI[1][1],
                 t12 = TI[1][2], t20 = TI[2][0], t21 = TI[2][1], t22 = TI[2][2];
    const double u = st->co->u1 / h, a = st->co->alpha[0] / h, b = st->co->beta[0] / h;
    const double *restrict R0 = st->R, *restrict R1 = R0 + n, *restrict R2 = R1 + n;
    const double *restrict F0 = st->Fz, *restrict F1 = F0 + n, *restrict F2 = F1 + n;
    double *restrict W0 = st->W, *restrict W1 = W0 + n, *restrict W2 = W1 + n;
    const double *E = st->E0->data;
    const size_t te = st->E0->tda;
    MBS_SMALL_UNROLL
    for (size_t k = 0; k < nq + nv; k++) {
        const double r0 = R0[k], r1 = R1[k], r2 = R2[k];
        double e0, e1, e2;
        if (k < nq) {
            e0 = F0[k], e1 = F1[k], e2 = F2[k];
        } else {
            const double *Ek = E + k * te + nq;
            e0 = Ek[0] * F0[nq], e1 = Ek[0] * F1[nq], e2 = Ek[0] * F2[nq];
            MBS_SMALL_UNROLL
            for (size_t l = 1; l < nv; l++) {
                e0 += Ek[l] * F0[nq + l];
                e1 += Ek[l] * F1[nq + l];
                e2 += Ek[l] * F2[nq + l];
            }
        }
        W0[k] = (t00 * r0 + t01 * r1 + t02 * r2) + u * e0;
        W1[k] = (t10 * r0 + t11 * r1 + t12 * r2) + (a * e1 - b * e2);
        W2[k] = (t20 * r0 + t21 * r1 + t22 * r2) + (b * e1 + a * e2);
    }
    for (size_t k = nq + nv; k < n; k++) { /* E's zero rows */
        const double r0 = R0[k], r1 = R1[k], r2 = R2[k];
        W0[k] = t00 * r0 + t01 * r1 + t02 * r2;
        W1[k] = t10 * r0 + t11 * r1 + t12 * r2;
        W2[k] = t20 * r0 + t21 * r1 + t22 * r2;
    }
}

/* F += w, Z = (T (x) I) F in one pass over the components (s constant). */
static inline MBS_SMALL_INLINE void radau_fz_update(size_t s, size_t n,
                                                    const double M[RADAU_SMAX][RADAU_SMAX],
                                                    const double *restrict w, double *restrict F,
                                                    double *restrict Z)
{
    for (size_t k = 0; k < n; k++) {
        double f[RADAU_SMAX];
        MBS_SMALL_UNROLL
        for (size_t j = 0; j < s; j++)
            f[j] = F[j * n + k] += w[j * n + k];
        MBS_SMALL_UNROLL
        for (size_t i = 0; i < s; i++) {
            double sum = M[i][0] * f[0];
            MBS_SMALL_UNROLL
            for (size_t j = 1; j < s; j++)
                sum += M[i][j] * f[j];
            Z[i * n + k] = sum;
        }
    }
}

int mbs_radau_solve_transformed(radau_state *st, mbs_ctx *ctx, double h)
{
    const size_t n = st->n, nv = st->form->nv;
    const radau_coeffs *co = st->co;
    const int np = (co->s - 1) / 2;
    if (co->s == 3 && st->form->nq == nv) {
        MBS_SMALL_DISPATCH(, radau_w3_n, nv, st, h)
    } else {
        mbs_radau_kron(co->TI, co->s, n, n, st->R, 1.0, st->W);
        if (co->s == 3)
            radau_lam_e(3, nv, st, h);
        else if (co->s == 5)
            radau_lam_e(5, nv, st, h);
        else
            radau_lam_e(7, nv, st, h);
    }
    double *w = st->W; /* the solutions overwrite W */
    radau_solve_blocks(st, ctx, n, np);
    /* s constant, n not: the copies per n with the loop over k unrolled took
     * 1.3% more instructions on the pendulum (tol 1e-10) */
    if (co->s == 3)
        radau_fz_update(3, n, co->Tm, w, st->Fz, st->Z);
    else if (co->s == 5)
        radau_fz_update(5, n, co->Tm, w, st->Fz, st->Z);
    else
        radau_fz_update(7, n, co->Tm, w, st->Fz, st->Z);
    return MBS_OK;
}

/* s = 5, 7: one pass over k, the s entries x_j[k] loaded once for all i;
 * each entry summed in the order ((0 + M_i0 x_0) + M_i1 x_1) + ... of a loop
 * over j (the same numbers).  Forced inline with a constant s (5, 7), so the
 * loops over i and j are unrolled and x_j[k] stay in registers; yadd (or
 * NULL) += y in the same pass (the Newton update Z += dZ of
 * mbs_radau_solve_stages, the same numbers as a second loop). */
static inline MBS_SMALL_INLINE void radau_kron_pass(const double M[RADAU_SMAX][RADAU_SMAX],
                                                    size_t s, size_t n, size_t len,
                                                    const double *restrict x, double d,
                                                    double *restrict y, double *restrict yadd)
{
    const int div = d != 1.0;
    for (size_t k = 0; k < len; k++) {
        double xk[RADAU_SMAX];
        MBS_SMALL_UNROLL
        for (size_t j = 0; j < s; j++)
            xk[j] = x[j * n + k];
        MBS_SMALL_UNROLL
        for (size_t i = 0; i < s; i++) {
            double sum = 0.0;
            MBS_SMALL_UNROLL
            for (size_t j = 0; j < s; j++)
                sum += M[i][j] * xk[j];
            if (div)
                sum = sum / d;
            y[i * n + k] = sum;
            if (yadd)
                yadd[i * n + k] += sum;
        }
    }
}

/* radau_kron_pass for s = 5, 7 (constant s) or any other s; yadd as there. */
static void radau_kron_any(const double M[RADAU_SMAX][RADAU_SMAX], int s, size_t n, size_t len,
                           const double *x, double d, double *y, double *yadd)
{
    if (s == 5) {
        if (yadd)
            radau_kron_pass(M, 5, n, len, x, d, y, yadd);
        else
            radau_kron_pass(M, 5, n, len, x, d, y, NULL);
    } else if (s == 7) {
        if (yadd)
            radau_kron_pass(M, 7, n, len, x, d, y, yadd);
        else
            radau_kron_pass(M, 7, n, len, x, d, y, NULL);
    } else { /* not reached: s is 3, 5 or 7 (kept for any s) */
        for (size_t k = 0; k < len; k++)
            for (size_t i = 0; i < (size_t)s; i++) {
                double sum = 0.0;
                for (size_t j = 0; j < (size_t)s; j++)
                    sum += M[i][j] * x[j * n + k];
                y[i * n + k] = d != 1.0 ? sum / d : sum;
                if (yadd)
                    yadd[i * n + k] += y[i * n + k];
            }
    }
}

/* y = (M (x) I_n) x / d for s blocks of length n (the transformations T,
 * T^-1 and the stage derivatives A^-1 Z / h), only the first len <= n
 * components of each block (the others of y untouched). */
/* s = 3 (RADAU5): all three blocks in one pass over k (small n: no
 * per-block loop overhead); instantiated per len up to MBS_SMALL_FIXED below. */
static inline MBS_SMALL_INLINE void radau_kron3(size_t len, const double M[RADAU_SMAX][RADAU_SMAX],
                                                size_t n, const double *x, double d, double *y)
{
    const double a00 = M[0][0], a01 = M[0][1], a02 = M[0][2], a10 = M[1][0], a11 = M[1][1],
                 a12 = M[1][2], a20 = M[2][0], a21 = M[2][1], a22 = M[2][2];
    const double *restrict x0 = x, *restrict x1 = x + n, *restrict x2 = x + 2 * n;
    double *restrict y0 = y, *restrict y1 = y + n, *restrict y2 = y + 2 * n;
    if (d == 1.0) {
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < len; k++) {
            const double u = x0[k], v = x1[k], w = x2[k];
            y0[k] = a00 * u + a01 * v + a02 * w;
            y1[k] = a10 * u + a11 * v + a12 * w;
            y2[k] = a20 * u + a21 * v + a22 * w;
        }
        return;
    }
    MBS_SMALL_UNROLL
    for (size_t k = 0; k < len; k++) {
        const double u = x0[k], v = x1[k], w = x2[k];
        y0[k] = (a00 * u + a01 * v + a02 * w) / d;
        y1[k] = (a10 * u + a11 * v + a12 * w) / d;
        y2[k] = (a20 * u + a21 * v + a22 * w) / d;
    }
}

static void radau_kron3_any(const double M[RADAU_SMAX][RADAU_SMAX], size_t n, size_t len,
                            const double *x, double d, double *y)
{
    MBS_SMALL_DISPATCH(, radau_kron3, len, M, n, x, d, y)
}

void mbs_radau_kron(const double M[RADAU_SMAX][RADAU_SMAX], int s, size_t n, size_t len,
                    const double *x, double d, double *y)
{
    if (s == 3) {
        radau_kron3_any(M, n, len, x, d, y);
        return;
    }
    radau_kron_any(M, s, n, len, x, d, y, NULL);
}

/* err = (u1/h E0 - J0)^-1 rhs, through the scaled system. */
int mbs_radau_solve1(radau_state *st, mbs_ctx *ctx, double t, const double *rhs, double *e)
{
    size_t n = st->n;
    if (st->Wx) { /* structured path: kkt_solve gives -(u1/h E - J~)^-1 (-rhs) */
        for (size_t i = 0; i < n; i++)
            st->Wx[i] = -rhs[i];
        return mbs_dae_form_kkt_solve(st->form, ctx, t, st->co->u1 / st->form->h, st->Wx, e);
    }
    mbs_count_solve(ctx);
    radau_solve_real(st, rhs, 1.0, e);
    return MBS_OK;
}

