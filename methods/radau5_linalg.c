/* Radau IIA for methods/radau5.c: RADAU5's s = 3 collocation coefficients and
 * transformation to one real and one complex system (Hairer & Wanner II,
 * Sect. IV.8; s = 5, 7 in radau_coeffs.c), and the linear systems of the
 * simplified Newton iteration: the full dense path (real and complex LU of
 * E/h - J blocks) and the structured KKT path (dae_form.h backends).  Split
 * from radau5.c (issue 19). */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_complex_math.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/gslalloc.h"
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


/* Row and column scaling of the Newton systems (index-3 scaling, seed 002
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
    const size_t te = st->E0->tda, tj = st->J0->tda, t1 = st->T1->tda;
    /* the same expressions as sc * (u1/h e - j) etc., with the quotients u1/h
     * and alpha_p/h (the left operand of each product) hoisted; the complex
     * entries written straight into the (re, im) pairs of Tc[p] */
    const double u1h = co->u1 / h;
    double ah[(RADAU_SMAX - 1) / 2];
    double *tc[(RADAU_SMAX - 1) / 2];
    size_t tt[(RADAU_SMAX - 1) / 2];
    for (int p = 0; p < np; p++) {
        ah[p] = co->alpha[p] / h;
        tc[p] = st->Tc[p]->data;
        tt[p] = st->Tc[p]->tda;
    }
    for (size_t k = 0; k < n; k++) {
        const double *Ek = E + k * te, *Jk = J + k * tj;
        double *T1k = st->T1->data + k * t1;
        for (size_t l = 0; l < n; l++) {
            double e = Ek[l], j = Jk[l], sc = rs[k] * cs[l];
            T1k[l] = sc * (u1h * e - j);
            for (int p = 0; p < np; p++) {
                double *z = tc[p] + 2 * (k * tt[p] + l);
                z[0] = sc * (ah[p] * e - j);
                z[1] = sc * co->beta[p] / h * e;
            }
        }
    }
    int sign;
    mbs_count_factorization(ctx);
    int bad = gsl_linalg_LU_decomp(st->T1, st->p1, &sign) != GSL_SUCCESS || mbs_radau_lu_singular(st->T1);
    for (int p = 0; p < np && !bad; p++) {
        mbs_count_factorization(ctx);
        bad = gsl_linalg_complex_LU_decomp(st->Tc[p], st->pc[p], &sign) != GSL_SUCCESS;
        /* a zero or non-finite pivot (|d| > 0 without hypot) */
        const double *d = st->Tc[p]->data;
        for (size_t k = 0; k < n && !bad; k++, d += 2 * (tt[p] + 1))
            bad = !(isfinite(d[0]) && isfinite(d[1]) && (d[0] != 0.0 || d[1] != 0.0));
    }
    if (bad)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                        "singular Radau iteration matrix (rank %zu of %zu, h=%.3g)",
                        mbs_lu_rank(st->T1), st->T1->size1,
                        h);
    return MBS_OK;
}

/* b1 = (u1/h E0 - J0)^-1 scaled: b1 = T1^-1 P (sign rs rhs), i.e. GSL's
 * LU_solve (x = P b, then the unit-lower and the upper triangular solve) on
 * the factors of mbs_radau_factor, without its copies and repeated singularity
 * checks (the factorisation rejected zero and non-finite pivots): the same
 * numbers.  The caller scales by cs. */
static void radau_lu_solve_real(radau_state *st, const double *rhs, double sign)
{
    const size_t n = st->n, *pp = st->p1->data;
    double *b = st->b1->data;
    for (size_t k = 0; k < n; k++)
        b[k] = sign * st->rs[pp[k]] * rhs[pp[k]];
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasUnit, st->T1, st->b1);
    gsl_blas_dtrsv(CblasUpper, CblasNoTrans, CblasNonUnit, st->T1, st->b1);
}

/* dZ = -T^-1 R: W = (T^-1 (x) I) R, one real and (ns-1)/2 complex scaled
 * solves, dZ = (T (x) I) dW (RADAU's SLVRAR/SLVRAI with our row/column
 * scaling). */
int mbs_radau_solve_stages(radau_state *st, mbs_ctx *ctx, double t)
{
    size_t n = st->n;
    const radau_coeffs *co = st->co;
    const int np = (co->s - 1) / 2;
    mbs_radau_kron(co->TI, co->s, n, st->R, 1.0, st->W);
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
        w = st->W; /* dense path: the scaled solutions overwrite W */
        mbs_count_solve(ctx);
        radau_lu_solve_real(st, st->W, -1.0);
        for (int p = 0; p < np; p++) {
            const double *Wr = st->W + (1 + 2 * p) * n, *Wi = Wr + n;
            const size_t *pp = st->pc[p]->data;
            const double *rs = st->rs, *cs = st->cs;
            double *b = st->bc->data;
            for (size_t k = 0; k < n; k++) { /* b = P (-rs W), LU_solve's permutation */
                size_t i = pp[k];
                b[2 * k] = -rs[i] * Wr[i];
                b[2 * k + 1] = -rs[i] * Wi[i];
            }
            mbs_count_solve(ctx);
            gsl_blas_ztrsv(CblasLower, CblasNoTrans, CblasUnit, st->Tc[p], st->bc);
            gsl_blas_ztrsv(CblasUpper, CblasNoTrans, CblasNonUnit, st->Tc[p], st->bc);
            double *wr = w + (1 + 2 * p) * n, *wi = wr + n;
            for (size_t k = 0; k < n; k++) {
                wr[k] = cs[k] * b[2 * k];
                wi[k] = cs[k] * b[2 * k + 1];
            }
        }
        const double *x = st->b1->data;
        for (size_t k = 0; k < n; k++)
            w[k] = st->cs[k] * x[k];
    }
    mbs_radau_kron(co->Tm, co->s, n, w, 1.0, st->dZ);
    return MBS_OK;
}

/* y = (M (x) I_n) x / d for s blocks of length n (the transformations T,
 * T^-1 and the stage derivatives A^-1 Z / h). */
void mbs_radau_kron(const double M[RADAU_SMAX][RADAU_SMAX], int s, size_t n, const double *x,
                    double d, double *y)
{
    if (s == 3) {
        /* RADAU5's s: the three terms of each entry in one expression, in the
         * order of the loop below ((0 + c0 x0) + c1 x1) + c2 x2 (the same
         * numbers), without its per-block loop overhead (small n) */
        const double *restrict x0 = x, *restrict x1 = x + n, *restrict x2 = x + 2 * n;
        for (size_t i = 0; i < 3; i++) {
            const double c0 = M[i][0], c1 = M[i][1], c2 = M[i][2];
            double *restrict yi = y + i * n;
            if (d != 1.0)
                for (size_t k = 0; k < n; k++)
                    yi[k] = (((0.0 + c0 * x0[k]) + c1 * x1[k]) + c2 * x2[k]) / d;
            else
                for (size_t k = 0; k < n; k++)
                    yi[k] = ((0.0 + c0 * x0[k]) + c1 * x1[k]) + c2 * x2[k];
        }
        return;
    }
    for (size_t i = 0; i < (size_t)s; i++) { /* k innermost: contiguous blocks */
        double *restrict yi = y + i * n;
        for (size_t k = 0; k < n; k++)
            yi[k] = 0.0;
        for (size_t j = 0; j < (size_t)s; j++) {
            const double c = M[i][j], *restrict xj = x + j * n;
            for (size_t k = 0; k < n; k++)
                yi[k] += c * xj[k];
        }
        if (d != 1.0)
            for (size_t k = 0; k < n; k++)
                yi[k] /= d;
    }
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
    radau_lu_solve_real(st, rhs, 1.0);
    const double *x = st->b1->data;
    for (size_t i = 0; i < n; i++)
        e[i] = st->cs[i] * x[i];
    return MBS_OK;
}

