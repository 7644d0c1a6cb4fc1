/* Radau IIA (s = 3, 5, 7) for methods/integrators/radau/radau5.c: the formulation seen by the
 * integrator (the DAE forms of dae_form.h, or the index-1 ODE), the stage
 * residual of the collocation system, RADAU5's error estimate, the
 * continuous-output update, the predictor for the next step's stages and the
 * error scaling.  Split from radau5.c. */
#include <float.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../core/gslalloc.h"
#include "../../linsol/dense_small.h"
#include "radau5_impl.h"

/* ---- the formulation: the DAE forms of dae_form.h, or the index-1 ODE
 * y = (q, v), y' = (H v, v'(t, q, v)) with v' and lambda from the KKT solve of
 * methods/formulations/index1.h ([arnold2016dae] Eqs. (83)-(84); E = I). */
int mbs_radau_form_mass(radau_state *st, mbs_ctx *ctx, double t, const double *y, gsl_matrix *E)
{
    if (!st->ix)
        return mbs_dae_form_mass(st->form, ctx, t, y, E);
    gsl_matrix_set_identity(E);
    return MBS_OK;
}

int mbs_radau_form_rhs(radau_state *st, mbs_ctx *ctx, double t, const double *y, double *F)
{
    if (!st->ix)
        return mbs_dae_form_rhs(st->form, ctx, t, y, F);
    size_t nq = st->form->nq;
    int s = mbs_qdot(ctx, y, y + nq, F);
    if (s == MBS_OK)
        s = mbs_index1_accel(st->ix, ctx, t, y, y + nq, F + nq, st->lam1);
    return s;
}

/* dF/dy: dae_form's Jacobian, or forward differences of the index-1 ODE. */
int mbs_radau_form_jac(radau_state *st, mbs_ctx *ctx, double t, const double *y, gsl_matrix *J)
{
    if (!st->ix)
        return mbs_dae_form_jac(st->form, ctx, t, y, J);
    size_t n = st->n;
    mbs_count_jacobian(ctx);
    int s = mbs_radau_form_rhs(st, ctx, t, y, st->jf);
    if (s != MBS_OK)
        return s;
    memcpy(st->jy, y, n * sizeof(double));
    for (size_t j = 0; j < n; j++) {
        double d = sqrt(DBL_EPSILON) * fmax(1.0, fabs(y[j]));
        st->jy[j] = y[j] + d;
        d = st->jy[j] - y[j];
        s = mbs_radau_form_rhs(st, ctx, t, st->jy, st->Es_w);
        st->jy[j] = y[j];
        if (s != MBS_OK)
            return s;
        for (size_t i = 0; i < n; i++)
            gsl_matrix_set(J, i, j, (st->Es_w[i] - st->jf[i]) / d);
    }
    return MBS_OK;
}

void mbs_radau_form_from_state(radau_state *st, const double *state, double *y)
{
    if (!st->ix) {
        mbs_dae_form_from_state(st->form, state, y);
        return;
    }
    memcpy(y, state, st->n * sizeof(double));
    memcpy(st->lam1, state + st->n, st->form->nl * sizeof(double));
}

void mbs_radau_form_to_state(radau_state *st, const double *y, double *state)
{
    if (!st->ix) {
        mbs_dae_form_to_state(st->form, y, state);
        return;
    }
    memcpy(state, y, st->n * sizeof(double));
    memcpy(state + st->n, st->lam1, st->form->nl * sizeof(double));
}

/* Stage derivatives Yd_i = (1/h) sum_j (A^-1)_ij Z_j: of q and v only for
 * the DAE forms (E = diag(I, M, 0) never multiplies lambda', mu'); all
 * components for extended problems (the problem's E) and the index-1 ODE. */
void mbs_radau_stage_derivatives(radau_state *st, double h)
{
    size_t len = st->ix || st->form->nx ? st->n : st->form->nq + st->form->nv;
    mbs_radau_kron(st->co->Ainv, st->co->s, st->n, len, st->Z, h, st->Yd);
}

/* R_i = E(Y_i) Yd_i - F(t + c_i h, Y_i)  ([arnold2016dae] Eq. (73d)); instantiated
 * per n up to MBS_SMALL_FIXED (dense_small.h) below.  without_e: R_i =
 * -F(t + c_i h, Y_i) (dense DAE forms only: st->cmass). */
static inline MBS_SMALL_INLINE int radau_residual_n(size_t n, radau_state *st, mbs_ctx *ctx,
                                                    double t, double h, int without_e)
{
    int s;
    if (!without_e)
        mbs_radau_stage_derivatives(st, h);
    double *restrict Ys = st->Ys;
    const double *restrict y = st->y;
    const size_t ns = (size_t)st->co->s;
    if (!st->ix && !st->form->nx) { /* E(Y_i) Yd_i without forming E (bit for bit
                                        the dense product: E = diag(I, M, 0)),
                                        all stages in one call */
        double ti[RADAU_SMAX];
        for (size_t i = 0; i < ns; i++) {
            const double *restrict Zi = st->Z + i * n;
            double *restrict Yi = Ys + i * n;
            ti[i] = t + st->co->c[i] * h;
            MBS_SMALL_UNROLL
            for (size_t k = 0; k < n; k++)
                Yi[k] = y[k] + Zi[k];
        }
        return mbs_dae_form_residual_stages(st->form, ctx, ns, ti, Ys, without_e ? NULL : st->Yd,
                                            st->R);
    }
    for (size_t i = 0; i < ns; i++) {
        double ti = t + st->co->c[i] * h, *Ri = st->R + i * n, *Ydi = st->Yd + i * n;
        const double *restrict Zi = st->Z + i * n;
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < n; k++)
            Ys[k] = y[k] + Zi[k];
        if (st->ix) { /* index-1 ODE: E = I */
            if ((s = mbs_radau_form_rhs(st, ctx, ti, st->Ys, Ri)) != MBS_OK)
                return s;
            for (size_t k = 0; k < n; k++)
                Ri[k] = Ydi[k] - Ri[k];
            continue;
        }
        if ((s = mbs_radau_form_mass(st, ctx, ti, st->Ys, st->Es)) != MBS_OK ||
            (s = mbs_radau_form_rhs(st, ctx, ti, st->Ys, Ri)) != MBS_OK)
            return s;
        const double *Es = st->Es->data;
        const size_t te = st->Es->tda;
        for (size_t k = 0; k < n; k++) {
            double e = 0.0;
            for (size_t l = 0; l < n; l++)
                e += Es[k * te + l] * Ydi[l];
            Ri[k] = e - Ri[k];
        }
    }
    return MBS_OK;
}

int mbs_radau_residual(radau_state *st, mbs_ctx *ctx, double t, double h)
{
    MBS_SMALL_DISPATCH(return, radau_residual_n, st->n, st, ctx, t, h, 0)
}

int mbs_radau_stage_rhs(radau_state *st, mbs_ctx *ctx, double t, double h)
{
    MBS_SMALL_DISPATCH(return, radau_residual_n, st->n, st, ctx, t, h, 1)
}

/* Instantiated per block length n up to MBS_SMALL_FIXED (dense_small.h):
 * the inner loop unrolled, the same sum in the same order. */
static inline MBS_SMALL_INLINE double radau_rms_n(size_t n, const double *x, const double *scal,
                                                  size_t len)
{
    double sum = 0.0; /* len is a multiple of n: blocks of n, no i % n */
    for (size_t b = 0; b < len; b += n) {
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < n; k++) {
            double r = x[b + k] / scal[k];
            sum += r * r;
        }
    }
    return sqrt(sum / (double)len);
}

double mbs_radau_rms_scaled(const double *x, const double *scal, size_t len, size_t n)
{
    MBS_SMALL_DISPATCH(return, radau_rms_n, n, x, scal, len)
}

/* RADAU5's ESTRAD (RADAU's ESTRAV for s = 5, 7): embedded error estimate
 * (scaled RMS norm). */
static inline MBS_SMALL_INLINE int radau_estimate_n(size_t n, radau_state *st, mbs_ctx *ctx,
                                                    double t, double h, int first_or_reject,
                                                    int e0_current, double *errn)
{
    size_t ns = (size_t)st->co->s;
    int s;
    /* Index-3 form: the stages also carry their correction of the position
     * residual g(q_n) that the previous step's Newton iteration left (every
     * stage satisfies g = 0): Z_q ~ g(q_n), Z_v ~ g(q_n)/h, Z_lambda ~
     * g(q_n)/h^2, which the index-3 weights turn into an estimate independent
     * of h (doubleloop-nc, tol 1e-5: 1.69 at every h from 1e-2 to 1e-13, step
     * underflow at t = 2.46).  That response, one stage solve for the residual
     * g(q_n) alone (dZ), is not a local error of the step: the estimate takes
     * Z - dZ. */
    const int drop_g = !st->ix && st->form->kind == MBS_FORM_INDEX3;
    int resp = 0;
    if (drop_g) {
        for (size_t k = 0; k < n; k++)
            resp = resp || (mbs_dae_form_position_row(st->form, k) && st->F0[k] != 0.0);
        if (resp) {
            for (size_t i = 0; i < ns; i++)
                for (size_t k = 0; k < n; k++)
                    st->R[i * n + k] = mbs_dae_form_position_row(st->form, k) ? -st->F0[k] : 0.0;
            if ((s = mbs_radau_solve_stages(st, ctx, t, NULL)) != MBS_OK)
                return s;
        }
    }
    MBS_SMALL_UNROLL
    for (size_t k = 0; k < n; k++) {
        double sum = 0.0;
        for (size_t j = 0; j < ns; j++)
            sum += st->co->dd[j] * (resp ? st->Z[j * n + k] - st->dZ[j * n + k] : st->Z[j * n + k]);
        st->F1[k] = sum / h;
    }
    /* ESTRAD needs E at (t_n, y_n).  E0 is E at the last Jacobian evaluation:
     * stale whenever the Jacobian was kept over accepted steps, which for a
     * q-dependent mass matrix leaves an O(1) term in the estimate (the scaled
     * error stalls and h collapses); then E(y_n) F1 is formed afresh. */
    const gsl_matrix *E = st->E0;
    if (st->ix) { /* index-1 ODE: E = I */
        memcpy(st->F2, st->F1, n * sizeof(double));
        E = NULL;
    } else if (st->Wx || !e0_current) {
        if (!st->form->nx) { /* without forming E */
            if ((s = mbs_dae_form_mass_times(st->form, ctx, t, st->y, st->F1, st->F2)) !=
                MBS_OK)
                return s;
            E = NULL;
        } else {
            if ((s = mbs_radau_form_mass(st, ctx, t, st->y, st->Es)) != MBS_OK)
                return s;
            E = st->Es;
        }
    }
    if (E)
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < n; k++) {
            double e = 0.0;
            MBS_SMALL_UNROLL
            for (size_t l = 0; l < n; l++)
                e += gsl_matrix_get(E, k, l) * st->F1[l];
            st->F2[k] = e;
        }
    /* Index-3 form: the rows g(q_n) of F0 hold the position-constraint residual
     * the previous step's Newton iteration left at y_n, not a local error of
     * this step.  The solve amplifies it by 1/h^2 into the multipliers, whose
     * weight is scal/h^2, so it adds a term independent of h that no step size
     * removes (fivebar, tol 1e-4: |g(q_n)| = 3.4e-7 at t = 7.97 gave a scaled
     * estimate 1.12 at every h from 0.03 down to 1e-13, step underflow).  The
     * estimate takes y_n as consistent: those rows are left out (and in the
     * second estimate only the change g(Ys) - g(q_n) counts). */
    MBS_SMALL_UNROLL
    for (size_t k = 0; k < n; k++)
        st->Es_w[k] =
            st->F2[k] + (drop_g && mbs_dae_form_position_row(st->form, k) ? 0.0 : st->F0[k]);
    if ((s = mbs_radau_solve1(st, ctx, t, st->Es_w, st->err)) != MBS_OK)
        return s;
    double e = fmax(mbs_radau_rms_scaled(st->err, st->scal, n, n), 1e-10);
    if (e >= 1.0 && first_or_reject) {
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < n; k++)
            st->Ys[k] = st->y[k] + st->err[k];
        if ((s = mbs_radau_form_rhs(st, ctx, t, st->Ys, st->F1)) != MBS_OK)
            return s;
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < n; k++)
            st->Es_w[k] = st->F1[k] + st->F2[k] -
                          (drop_g && mbs_dae_form_position_row(st->form, k) ? st->F0[k] : 0.0);
        if ((s = mbs_radau_solve1(st, ctx, t, st->Es_w, st->err)) != MBS_OK)
            return s;
        e = fmax(mbs_radau_rms_scaled(st->err, st->scal, n, n), 1e-10);
    }
    *errn = e;
    return MBS_OK;
}

/* RADAU5's estimate above, instantiated per n up to MBS_SMALL_FIXED. */
int mbs_radau_estimate(radau_state *st, mbs_ctx *ctx, double t, double h, int first_or_reject,
                    int e0_current, double *errn)
{
    MBS_SMALL_DISPATCH(return, radau_estimate_n, st->n, st, ctx, t, h, first_or_reject, e0_current,
                       errn)
}

/* After an accepted step: y += Z_s and the divided differences of the
 * collocation polynomial (RADAU5's CONT for s = 3, RADAU's for s = 5, 7) for
 * the next starting values: in x = (t - t_n+1)/h the polynomial through
 * (0, Z_s), (c_(s-1) - 1, Z_(s-1)), ..., (c_1 - 1, Z_1), (-1, 0) is
 * x (cont_1 + (x - (c_(s-1) - 1)) (cont_2 + ... (x - (c_1 - 1)) cont_s)). */
static inline MBS_SMALL_INLINE void radau_update_solution_n(size_t n, radau_state *st)
{
    /* s = 3: RADAU5's closed form (kept: radau5 bit for bit) */
    const double *c = st->co->c;
    st->cont_ns = 3;
    memcpy(st->cont_c, c, sizeof st->cont_c);
    const double c1 = c[0], c2 = c[1], c1m1 = c1 - 1.0, c2m1 = c2 - 1.0, c1mc2 = c1 - c2;
    MBS_SMALL_UNROLL
    for (size_t k = 0; k < n; k++) {
        double z1 = st->Z[k], z2 = st->Z[n + k], z3 = st->Z[2 * n + k];
        st->y[k] += z3;
        double c1k = (z2 - z3) / c2m1;
        double ak = (z1 - z2) / c1mc2;
        double acont3 = (ak - z1 / c1) / c2;
        double c2k = (ak - c1k) / c1m1;
        st->cont[k] = c1k;
        st->cont[n + k] = c2k;
        st->cont[2 * n + k] = c2k - acont3;
    }
}

/* s = 5, 7 of the update above: node x_m (m = 0..s): 0, c_(s-1) - 1, ...,
 * c_1 - 1, -1 with values Z_s, Z_(s-1), ..., Z_1, 0; Newton divided
 * differences over x_0..x_m divided by (x_m - 0) after the first: cont_m =
 * f[x_0..x_m] (m >= 1).  Forced inline with a constant s, the node
 * differences x_m - x_(m-j) taken once (the same values in every component). */
static inline MBS_SMALL_INLINE void radau_update_dd(size_t s, radau_state *st)
{
    const size_t n = st->n;
    const double *c = st->co->c;
    double x[RADAU_SMAX + 1], dx[RADAU_SMAX + 1][RADAU_SMAX + 1];
    for (size_t m = 0; m < s; m++)
        x[m] = c[s - 1 - m] - 1.0;
    x[s] = -1.0;
    for (size_t j = 1; j <= s; j++)
        for (size_t m = j; m <= s; m++)
            dx[j][m] = x[m] - x[m - j];
    for (size_t k = 0; k < n; k++) {
        double d[RADAU_SMAX + 1];
        MBS_SMALL_UNROLL
        for (size_t m = 0; m < s; m++)
            d[m] = st->Z[(s - 1 - m) * n + k];
        d[s] = 0.0;
        st->y[k] += d[0];
        MBS_SMALL_UNROLL
        for (size_t j = 1; j <= s; j++)
            MBS_SMALL_UNROLL
            for (size_t m = s; m >= j; m--)
                d[m] = (d[m] - d[m - 1]) / dx[j][m];
        MBS_SMALL_UNROLL
        for (size_t m = 1; m <= s; m++)
            st->cont[(m - 1) * n + k] = d[m];
    }
}

/* Instantiated per n up to MBS_SMALL_FIXED (dense_small.h). */
void mbs_radau_update_solution(radau_state *st)
{
    const int s = st->co->s;
    if (s == 3) {
        MBS_SMALL_DISPATCH(, radau_update_solution_n, st->n, st)
        return;
    }
    st->cont_ns = s;
    memcpy(st->cont_c, st->co->c, sizeof st->cont_c);
    if (s == 5)
        radau_update_dd(5, st);
    else if (s == 7)
        radau_update_dd(7, st);
    else
        radau_update_dd((size_t)s, st);
}

/* y'(t_n) of the differential components from E0 y' = F0 (q' = F0_q,
 * M v' = F0_v with the state's multipliers), for the first step's starting
 * values Z_i = c_i h y'_n.  Zero starting values make the first simplified
 * Newton iterates of the index-3 form oscillate (the linearisation about the
 * tangent misses the O(h) normal velocity), which this predictor avoids.  A
 * singular M (allowed on ker B) falls back to zero velocities' derivatives. */
void mbs_radau_first_derivative(radau_state *st, mbs_ctx *ctx, double t)
{
    const mbs_dae_form *f = st->form;
    size_t nq = f->nq, nv = f->nv;
    memset(st->yd0, 0, st->n * sizeof(double));
    memcpy(st->yd0, st->F0, nq * sizeof(double));
    if (st->ix0) {
        /* structured path: v' of the index-1 KKT solve (consistent multipliers
         * into lam1, a scratch here); on failure zero, as below */
        if (mbs_index1_accel(st->ix0, ctx, t, st->y, st->y + nq, st->yd0 + nq, st->lam1) !=
            MBS_OK) {
            memset(st->yd0 + nq, 0, nv * sizeof(double));
            ctx->reason[0] = '\0';
        }
        return;
    }
    gsl_matrix_const_view M = gsl_matrix_const_submatrix(st->E0, nq, nq, nv, nv);
    gsl_matrix_memcpy(st->Mw, &M.matrix);
    int sign;
    mbs_count_factorization(ctx);
    if (gsl_linalg_LU_decomp(st->Mw, st->pm, &sign) != GSL_SUCCESS || mbs_radau_lu_singular(st->Mw))
        return;
    for (size_t i = 0; i < nv; i++)
        gsl_vector_set(st->bm, i, st->F0[nq + i]);
    mbs_count_solve(ctx);
    if (gsl_linalg_LU_solve(st->Mw, st->pm, st->bm, st->xm) != GSL_SUCCESS)
        return;
    for (size_t i = 0; i < nv; i++)
        st->yd0[nq + i] = gsl_vector_get(st->xm, i);
}

/* Starting values: first step c_i h y'_n, later the previous collocation
 * polynomial (cont, with the nodes it was built on) extrapolated to the
 * current nodes (RADAU5; RADAU after an order change too). */
static inline MBS_SMALL_INLINE void radau_start_values_n(size_t n, radau_state *st, int first,
                                                         double h, double hold)
{
    size_t s = (size_t)st->co->s;
    if (first || st->cont_ns == 0) {
        for (size_t i = 0; i < s; i++)
            MBS_SMALL_UNROLL
            for (size_t k = 0; k < n; k++)
                st->Z[i * n + k] = st->co->c[i] * h * st->yd0[k];
        return;
    }
    /* from a polynomial of 3 stages (mbs_radau_start_values): RADAU5's form
     * (radau5 bit for bit) */
    const double *cc = st->cont_c, c3q = h / hold;
    const double c1m1 = cc[0] - 1.0, c2m1 = cc[1] - 1.0;
    for (size_t i = 0; i < s; i++) {
        double cq = st->co->c[i] * c3q;
        MBS_SMALL_UNROLL
        for (size_t k = 0; k < n; k++)
            st->Z[i * n + k] =
                cq * (st->cont[k] +
                      (cq - c2m1) * (st->cont[n + k] + (cq - c1m1) * st->cont[2 * n + k]));
    }
}

/* The extrapolation above from a polynomial of sc = 5, 7 stages (forced
 * inline with a constant sc): Z_i = cq val, val by Horner's scheme in the
 * factors cq - (c_(sc-1-l) - 1) of the nodes, taken once per stage (the same
 * values in every component). */
static inline MBS_SMALL_INLINE void radau_start_poly(size_t sc, radau_state *st, double c3q)
{
    const size_t n = st->n, s = (size_t)st->co->s;
    const double *cc = st->cont_c;
    for (size_t i = 0; i < s; i++) {
        const double cq = st->co->c[i] * c3q;
        double fac[RADAU_SMAX];
        for (size_t l = 0; l + 1 < sc; l++) /* node of factor l + 1: c_(s-1-l) - 1 */
            fac[l] = cq - (cc[sc - 2 - l] - 1.0);
        double *Zi = st->Z + i * n;
        for (size_t k = 0; k < n; k++) {
            double val = st->cont[(sc - 1) * n + k];
            MBS_SMALL_UNROLL
            for (size_t l = sc - 1; l-- > 0;)
                val = st->cont[l * n + k] + fac[l] * val;
            Zi[k] = cq * val;
        }
    }
}

/* Instantiated per n up to MBS_SMALL_FIXED (dense_small.h); from a polynomial
 * of 5 or 7 stages per sc. */
void mbs_radau_start_values(radau_state *st, int first, double h, double hold)
{
    const int sc = st->cont_ns;
    if (first || sc == 0 || sc == 3) {
        MBS_SMALL_DISPATCH(, radau_start_values_n, st->n, st, first, h, hold)
        return;
    }
    const double c3q = h / hold;
    if (sc == 5)
        radau_start_poly(5, st, c3q);
    else if (sc == 7)
        radau_start_poly(7, st, c3q);
    else
        radau_start_poly((size_t)sc, st, c3q);
}

/* Error weights: atol + rtol |y_i|, divided by h^(index_i - 1) (RADAU5's
 * NIND2/NIND3 scaling).  The index is the form's var_index, except that in the
 * index-3 form the velocities count as index-2 variables: in Hairer & Wanner's
 * index-3 system y' = f(y, z), z' = k(y, z, u), 0 = g(y) (Solving ODEs II,
 * Sect. VII.4) q is y, v is z (index 2, order h^s) and lambda is u (index 3),
 * and RADAU5 drivers (e.g. the Test Set's andrews) declare them so.  Without
 * it the estimate for v does not vanish as h -> 0 and the step collapses
 * (seen on andrews).  Unconstrained problems (n_lambda = 0) are plain ODEs. */
void mbs_radau_set_scal(radau_state *st, double rtol, double atol, double h, int index_aware)
{
    const mbs_dae_form *f = st->form;
    for (size_t k = 0; k < st->n; k++) {
        double sc = atol + rtol * fabs(st->y[k]);
        if (st->scal1)
            st->scal1[k] = sc;
        int idx = f->var_index[k];
        if (f->kind == MBS_FORM_INDEX3 && f->nl > 0 && k >= f->nq && k < f->nq + f->nv)
            idx = st->v_index2[k - f->nq] ? 2 : 1;
        if (index_aware) {
            if (idx == 2)
                sc /= h;
            else if (idx == 3)
                sc /= h * h;
        }
        st->scal[k] = sc;
    }
}

/* Accepted step: projection (proj- methods), report to the harness. */
