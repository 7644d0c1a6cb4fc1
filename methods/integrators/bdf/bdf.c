/* BDF (backward differentiation formulas) for the index-3, index-2, GGL and
 * index-2 Baumgarte formulations of the equations of motion ([arnold2016dae],
 * Section 4: Remark 8 b), Eqs. (74)-(76); formulations (77), (79), (87), (92)
 * through methods/formulations/dae_form.h).
 *
 * Discretisation.  Variable-coefficient BDF (divided-difference form, the
 * "variable coefficient" strategy of Brenan, Campbell & Petzold, Sect. 5.2):
 * at t_{n+1} the derivative is the derivative of the polynomial interpolating
 * y_{n+1}, y_n, ..., y_{n+1-k} on the actual (non-uniform) grid,
 *     y'_{n+1} = c_0 y_{n+1} + sum_{j=1..k} c_j y_{n+1-j},
 * and the DAE  E(y) y' = F(t, y)  is collocated at t_{n+1} (Eq. (75)).  The
 * predictor extrapolates the polynomial through y_n, ..., y_{n-k}.  With
 * constant steps this is the classical k-step BDF (74)-(75).
 *
 * Newton on the condensed system (Eq. (76)).  The q rows c_0 q - H v (+ G^T mu)
 * = rhs are eliminated with the approximation dq = (rhs - A_qr dr)/c_0 (exact
 * for H = I, where q_{n+1} is an affine function of v_{n+1}), leaving a system
 * in (v, lambda[, mu]) of size n_v + n_lambda (+ n_lambda).  It is scaled as in
 * [arnold2016dae] Eqs. (69)-(70)/(76): v rows by 1/c_0, position-level constraint rows
 * (index-3 and the g rows of GGL) by c_0, multiplier unknowns lambda as
 * lambda/c_0 (~ h lambda), so the iteration matrix tends to the bounded KKT
 * structure [[M, B^T], [G H, 0]] as h -> 0.  Simplified Newton (DASSL): the
 * iteration matrix c_0 E - dF/dy (dE/dq neglected) is kept over steps and
 * refactored only when c_0 moved outside [0.6, 1.67] times its value at the
 * factorisation or Newton failed to converge with an old matrix; increments
 * computed with an old c_0 are multiplied by 2/(1 + c_0/c_0old) (DASSL).
 * Stopping test (DASSL): rate rho = (|d_m|/|d_0|)^(1/m), stop when
 * rho/(1 - rho) |d_m| <= kappa (weighted RMS norm; index-2 components -- the
 * multipliers of the index-2 and GGL forms, mu, and v of the index-3 form --
 * weighted by h as the scaled unknown h lambda of Eq. (76), the index-3
 * multipliers by h^2, so round-off amplified by 1/h, 1/h^2 does not stall the
 * test at small h); the rate used after the first iteration is at least 0.5
 * unless measured in the current step (DASSL carries it over from earlier
 * steps, which accepted insufficiently converged iterates in our tests); at most
 * 4 iterations (20 for the fixed-step methods), rho > 0.9 is divergence.  kappa
 * is the parameter `kappa` (DASSL default 0.33; [arnold2016dae] Section 4.1 after
 * Example 10).  Index-3 form, adaptive: after that test the iteration goes on
 * until the same test holds unweighted, within the iterations left
 * (bdf_newton.c, index3_second_stop; before: pendulum tol 1e-8 v error 1.9e-5,
 * now 2.4e-6).
 *
 * Error estimate (adaptive methods).  LTE ~ (y_{n+1} - y^P) / (c_0 (t_{n+1} -
 * t_{n-k})) (for constant steps this is C_{k+1} h^{k+1} y^(k+1) with the BDF
 * error constant 1/((k+1) sum_{j<=k} 1/j)); weighted RMS norm with
 * w_i = rtol |y_n,i| + atol over the differential components only: the
 * algebraic variables lambda, mu (var_index > 1) are excluded from the error
 * test as [arnold2016dae] Section 4.2 recommends for BDF (after Eq. (92), ref. [70]).
 * For the index-3 form the velocities are index-2 variables of the DAE: their
 * estimate is O(h^k), not O(h^(k+1)), and unscaled it drives h to zero (measured:
 * step underflow at every tol); they are tested scaled by h as RADAU5 scales
 * index-2 components (Hairer & Wanner, Sect. VII.8).  Order and step selection
 * follow DASSL (Brenan, Campbell & Petzold, Sect. 5.2): estimates for orders
 * k-1, k, k+1 from divided differences, order raised only after k+1 steps of
 * constant order, step ratio r = (2 est + 1e-4)^(-1/(k+1)), h doubled if r >= 2,
 * kept if 1 < r < 2, else reduced by a factor in [0.5, 0.9]; after an error
 * test failure factor in [0.25, 0.9], then 0.25, then order 1; initial phase
 * raises the order and doubles h each step; initial step as DASSL,
 * h0 = min(1e-3 span, 0.5 / |y'_0|_W) with y'_0 from the index-1 system; a
 * remainder t_end - t below 2h is split in two equal steps (no tiny last step,
 * whose multipliers would not converge, [arnold2016dae] Example 9).
 *
 * Accuracy versus tolerance (pendulum, t_end = 10, rtol = atol =
 * tol; measured 2026-11-22).  `converge --tol0 1e-3 --levels 8` gives err_q/tol
 * 6.3 4.0 9.7 11 8.2 17 37 24 (index2/bdf) and 3.1 0.4 5.7 8.8 24 21 40 47
 * (ggl/bdf) for tol = 1e-3 .. 1e-10: above a factor 10.  Checked:
 *  - the estimate is the leading term of the local error in y of the
 *    variable-coefficient corrector (defect / c_0 on the actual grid; predictor
 *    through k + 1 points, weighted RMS norm over q, v only); measured by
 *    redoing every accepted step from exact history values (index2/bdf, tol
 *    1e-8, 826 steps): true local error 0.076 on average and 0.59 at most in
 *    the weighted RMS norm, estimate 0.18 on average: no step passes with a
 *    local error above tol;
 *  - it is not DASSL's test: DDASTP (and SUNDIALS IDA) test
 *    max(|alpha_{k+1} + alpha_s - alpha^0|, alpha_{k+1}) |y - y^P| with
 *    alpha_{k+1} = h/(t_{n+1} - t_{n-k}) (Brenan, Campbell & Petzold, Sect.
 *    5.2: the LTE as h times the defect of the formula), for constant steps
 *    H_k = sum_{j<=k} 1/j times (up to 2.28) stricter than ours, compare orders
 *    on (p+1) est(p) and reset the Newton rate when c_0 changes.  All three were
 *    tried: 1.3-1.5x more steps (close to IDA's), max(err_q, err_v)/tol at t_end
 *    15-76 (index2) and 20-63 (ggl) for tol 1e-4..1e-9 instead of 8-38 and 9-41,
 *    index3/bdf 7500 instead of 1600 tol at 1e-9 (smaller h amplifies the
 *    index-3 Newton errors): no gain, not adopted;
 *  - the ratio is accumulated local error: the 826 true local errors at tol
 *    1e-8 sum to 63; the global error (weighted max norm over q, v) is 2.1 at
 *    t = 1.1, 23 at 3.6, 4.7 at 6.0 and 23 at t_end, bounded by that sum and
 *    varying with the phase of the 5 oscillations (with DASSL's constants the
 *    local errors sum to 45 and the global error at t_end is 47).  With
 *    Newton converged tightly (kappa = 1e-3) max(err_q, err_v)/tol at t_end
 *    rises with the number of steps N as 0.05-0.22 N (12 at N = 127, tol 1e-3,
 *    to 257 at N = 1583, tol 1e-10).  SUNDIALS IDA on the same forms
 *    (index2/ida, ggl/ida) ends at 14-60 and 12-51 tol at t_end;
 *    /work/shared/PEERS.md reports 100-1000 for BDF codes.
 * Error-per-step control of a k-step BDF does not bound the global error by tol
 * on this problem; no safety factor is added to hide it.
 *
 * Problems without constraints (n_lambda = 0, e.g. smallmass, [arnold2013recursive] Sect.
 * 2.2) run in every form (the forms reduce to M v' = f).  With a singular mass
 * matrix (smallmass at m1 = 0, Eq. (6)) y'_0 cannot come from the index-1
 * system: v'_0 solves the rows of M v' = f with non-zero mass rows together
 * with the time derivative of the algebraic rows (zero rows of M); M singular
 * without zero rows (smallmass coords=relative, m1 = 0) is declined with
 * MBS_SINGULAR_MATRIX and a reason.  [arnold2013recursive] Fig. 2 trend at tol 1e-6
 * (index2/bdf): 2988, 10532, 34644, 131222 steps for m1/m2 = 1e-1..1e-4, 691
 * at m1 = 0 (tests/check_bdf2.c).
 *
 * Baumgarte2 (Eq. (87), alpha0 = C/h) is registered as a fixed-step method
 * (`baumgarte2/bdf`, order = parameter): [arnold2016dae] recommends it for fixed step
 * sizes.  With error control the constraint alpha0 g + B v = 0 couples v to
 * g/h: as the step controller reduces h, v must jump by ~ C g / h and the
 * error test fails ever more (measured: step underflow on the pendulum at
 * tol <= 1e-4, also with alpha0 frozen at the last accepted step), so no
 * adaptive Baumgarte2 BDF is registered.  (The adaptive code path keeps
 * alpha0 = C/h_n with h_n the last accepted step.)
 *
 * proj-index2/bdf: index2/bdf with the mass-orthogonal projection of
 * methods/formulations/projection.h ([arnold2016dae] Eqs. (88)-(91)) applied to every accepted
 * y_{n+1}; the projected q, v replace y_{n+1} in the BDF history.
 *
 * Linear algebra (parameter `linsol`).  `full` is the condensed
 * dense iteration matrix above with dF/dy (dae_form.h: derivative callbacks or
 * finite differences).  `auto` (default) takes the structured path
 * below where it drops only the Hessian terms (mbs_dae_form_auto_structured),
 * else `full`; the -fixed methods and ggl/bdf keep `full`.
 * `lu`, `umfpack`, `cholmod` use the structured simplified Newton of
 * methods/formulations/dae_form.h (sparse mode; H = I problems only, others are declined
 * with MBS_UNSUPPORTED): f_q, f_v, (B^T lambda)_q, (B v)_q, (G^T mu)_q are
 * dropped, which leaves the KKT matrix [M B^T; B 0] (GGL: also [I G^T; G 0]) on
 * the linsol.h backend.  It does not depend on c0 or h: factorised only where
 * the dense path evaluates a new Jacobian (c0 outside [0.6, 1.67] c0 at the last
 * evaluation, or Newton failure with an old matrix), and the solve uses the
 * current c0 exactly (no 2/(1 + c0/c0old) correction).  Nothing n x n is
 * allocated; y'_0 and the fixed-step starter use index1 on the same backend
 * (lu: dense KKT LU), proj-index2/bdf the projection on that backend.
 * Measured (tests/check_sparse_dae.c, tol 1e-6): pendulum index2/ggl/index3
 * errors at t = 3 of 4.2e-6 / 4.5e-6 / 3.1e-4 against 5.1e-6 / 2.3e-6 / 2.6e-4
 * with full, 2-3 % fewer steps; chain:N=20, t = 1, index2: max(err_q, err_v)
 * 7.4e-5 (full 2.3e-5), at tol 1e-7 and 1e-8 3.6e-6 and 6.0e-7 (full 4.4e-6 and
 * 1.1e-6): the same accuracy, the step sequences differ.
 *
 * Fixed-step fixed-order methods (`bdf-fixed`, order = parameter `order` 1..5):
 * same corrector with N = ceil(T/h) equal steps of T/N and no
 * error test; Newton weights rtol = atol = `newton_tol`, default 1e-15: a
 * Newton error accepted in the index weights above is a perturbation of v of
 * newton_tol/h per step (the multipliers newton_tol/h^2), which adds up over
 * the t_end/h steps (at 1e-12 index3/bdf-fixed on chain stalled at h = 7.8e-5),
 * so the fixed-step methods iterate to round-off, as the generalized-alpha
 * family does (genalpha_step.c): an iteration that stops contracting within 10
 * times its round-off floor (roundoff_floor in bdf_newton.c) has converged.
 * Starting values
 * y_1..y_{k-1} at t0 + j h come from the index-1 formulation (methods/formulations/index1.h)
 * integrated by GSL's rk8pd at rtol = atol = 1e-13 (a one-step method of order
 * 8), with lambda from the index-1 KKT system (mu = 0); these starting points
 * are reported as accepted steps.
 */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../core/gslalloc.h"
#include "../../framework/dae_axis.h"
#include "../../framework/odesolve.h"
#include "../../formulations/dae_form.h"
#include "../../formulations/index1.h"
#include "../../framework/method.h"
#include "../../formulations/projection.h"
#include "bdf_impl.h"

/* ---- starter of the fixed-step methods ----------------------------------------- */

static int starter_rhs(void *data, double t, const double *y, double *dydt)
{
    bdf_state *st = data;
    return mbs_index1_rhs(st->ix, st->ctx, t, y, dydt);
}

/* y (full BDF vector) at t1 from the index-1 ODE started at the newest point. */
static int starter_step(bdf_state *st, double t1)
{
    size_t nq = st->nq, nv = st->nv;
    double t = st->ht[0];
    memcpy(st->sy, st->hy[0], (nq + nv) * sizeof(double));
    int r = mbs_ode_solve(st->starter, t, t1, st->sy, 1e-13, st->starter_h, NULL);
    if (r != 0) {
        int s = r > 0 || r < -1 ? r : MBS_STEP_UNDERFLOW;
        if (st->ctx->reason[0] == '\0')
            mbs_fail(st->ctx, s, t, "rk8pd starter failed (status %d)", r);
        return s;
    }
    memset(st->y, 0, st->n * sizeof(double));
    memcpy(st->y, st->sy, (nq + nv) * sizeof(double));
    int s = mbs_index1_accel(st->ix, st->ctx, t1, st->sy, st->sy + nq, st->svd, st->y + nq + nv);
    if (s != MBS_OK)
        return s;
    /* v' for the observer's acceleration residual */
    memset(st->yp, 0, st->n * sizeof(double));
    memcpy(st->yp + nq, st->svd, nv * sizeof(double));
    st->kdense = st->order; /* dense output through the points there are (at most order) */
    return MBS_OK;
}

/* ---- integrators --------------------------------------------------------------- */

static int integrate_fixed(bdf_state *st, const mbs_settings *set, double *tp)
{
    mbs_ctx *ctx = st->ctx;
    /* N = ceil(T/h) equal steps of T/N, as the fixed-step Radau IIA and
     * generalized-alpha methods take: a last, shorter step is a step change, after
     * which the index-3 (and index-2) multipliers of a fixed-coefficient BDF do not
     * converge ([arnold2016dae] Example 9; ujoint, T = 2 pi, h = 0.01 .. 6.25e-4:
     * lambda 0.55, 0.021, 0.12, 0.065, 0.072, not established; now order 1.88) */
    double t0 = *tp, span = set->t_end - t0;
    long nsteps = (long)ceil(span / set->h * (1.0 - 1e-12));
    double h = span / (double)nsteps;
    int k = st->order, s;
    double t = t0;
    st->hbaum = h;
    if ((s = mbs_bdf_initial_derivative(st, t, st->hy[0])) != MBS_OK)
        return s;
    mbs_bdf_set_weights(st, st->hy[0], st->newton_tol, st->newton_tol);
    st->starter_h = h / 16.0;
    for (long i = 1; i <= nsteps; i++) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        double tn = i == nsteps ? set->t_end : t0 + (double)i * h;
        if (i < k) {
            s = starter_step(st, tn);
        } else {
            double err;
            mbs_bdf_set_weights(st, st->hy[0], st->newton_tol, st->newton_tol);
            s = mbs_bdf_attempt(st, tn - t, k, &err);
        }
        if (s != MBS_OK) {
            if (s > 0)
                mbs_count_rejected(ctx);
            if (ctx->reason[0] == '\0')
                mbs_fail(ctx, s, tn, "fixed-step BDF%d failed at h=%.3g", k, h);
            break;
        }
        t = tn;
        mbs_bdf_push_history(st, t);
        if ((s = mbs_bdf_report(st, t)) != MBS_OK)
            break;
    }
    *tp = st->ht[0];
    return s;
}

static int integrate_adaptive(bdf_state *st, const mbs_settings *set, double *tp)
{
    mbs_ctx *ctx = st->ctx;
    double t = *tp, t_end = set->t_end, span = t_end - t;
    double hmin = 1e-14 * fmax(fabs(t), fabs(t_end)) + 1e-300;
    double rtol = set->rtol, atol = set->atol;
    int s;
    if ((s = mbs_bdf_initial_derivative(st, t, st->hy[0])) != MBS_OK)
        return s;
    mbs_bdf_set_weights(st, st->hy[0], rtol, atol);
    double h = set->h;
    if (!(h > 0.0)) {
        h = 1e-3 * span;
        st->hnow = h;
        double ypn = mbs_bdf_wnorm(st, st->y0p, st->errmask);
        if (ypn > 0.5 / h)
            h = 0.5 / ypn;
    }
    int k = 1, phase = 0, nconst = 0, nfail_err = 0, nfail = 0;
    st->hbaum = h;
    while (t < t_end) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        /* land on t_end; split a remainder below 2h in two (no tiny last step) */
        int last = t + h >= t_end;
        if (last)
            h = t_end - t;
        else if (t + 2.0 * h > t_end)
            h = 0.5 * (t_end - t);
        mbs_bdf_set_weights(st, st->hy[0], rtol, atol);
        double err = 0.0;
        s = mbs_bdf_attempt(st, h, k, &err);
        if (s < 0)
            break;
        if (s > 0) {
            /* Newton failure or singular matrix: quarter the step. */
            mbs_count_rejected(ctx);
            if (++nfail > BDF_MAXFAIL || 0.25 * h < hmin) {
                char why[sizeof ctx->reason];
                memcpy(why, ctx->reason, sizeof why);
                mbs_fail(ctx, s, t, "%d consecutive failed steps, h=%.3g; last: %s", nfail, h,
                         why);
                break;
            }
            ctx->reason[0] = '\0';
            st->jac_fresh = 0;
            h *= 0.25;
            phase = 1;
            nconst = 0;
            continue;
        }
        if (err > 1.0) {
            mbs_count_rejected(ctx);
            nfail_err++;
            nfail++;
            phase = 1;
            nconst = 0;
            double r;
            int knew = k;
            if (nfail_err == 1) {
                /* lower the order if the order k-1 estimate (with the rejected
                 * candidate as newest point) is smaller */
                double est = err;
                if (k > 1 && st->nhist >= k) {
                    double *ys[BDF_NHIST];
                    double ts[BDF_NHIST];
                    ys[0] = st->y;
                    ts[0] = t + h;
                    for (int j = 1; j <= k; j++) {
                        ys[j] = st->hy[j - 1];
                        ts[j] = st->ht[j - 1];
                    }
                    double ekm1 = mbs_bdf_order_estimate(st, ys, ts, k - 1, h);
                    if (ekm1 < err) {
                        knew = k - 1;
                        est = ekm1;
                    }
                }
                r = 0.9 * pow(2.0 * est + 1e-4, -1.0 / (knew + 1));
                r = fmax(0.25, fmin(0.9, r));
            } else if (nfail_err == 2) {
                r = 0.25;
            } else {
                knew = 1;
                r = 0.25;
            }
            if (nfail > BDF_MAXFAIL || r * h < hmin) {
                s = mbs_fail(ctx, MBS_STEP_UNDERFLOW, t,
                             "error test failed %d times, step %.3g below hmin", nfail_err,
                             r * h);
                break;
            }
            k = knew;
            h *= r;
            continue;
        }
        /* accepted */
        t = last ? t_end : t + h;
        mbs_bdf_push_history(st, t);
        if ((s = mbs_bdf_report(st, t)) != MBS_OK)
            break;
        nfail = nfail_err = 0;
        nconst++;
        st->hbaum = h;
        int kmax_avail = st->nhist - 1 < st->maxord ? st->nhist - 1 : st->maxord;
        double hnew;
        if (phase == 0) {
            double est;
            int knew = mbs_bdf_select_order(st, k, err, h, k + 1, &est);
            if (knew < k || k >= st->maxord) {
                phase = 1;
                k = knew;
                double r = pow(2.0 * est + 1e-4, -1.0 / (k + 1));
                hnew = r >= 2.0 ? 2.0 * h : r <= 1.0 ? h * fmax(0.5, fmin(0.9, r)) : h;
            } else {
                /* initial phase: raise the order and double the step */
                if (k < kmax_avail)
                    k++;
                hnew = 2.0 * h;
                nconst = 0;
            }
        } else {
            double est;
            int knew = mbs_bdf_select_order(st, k, err, h, nconst, &est);
            if (knew > kmax_avail)
                knew = kmax_avail;
            if (knew != k)
                nconst = 0;
            k = knew;
            double r = pow(2.0 * est + 1e-4, -1.0 / (k + 1));
            if (r >= 2.0)
                hnew = 2.0 * h;
            else if (r <= 1.0)
                hnew = h * fmax(0.5, fmin(0.9, r));
            else
                hnew = h;
        }
        if (hnew != h)
            nconst = 0;
        if (last)
            break;
        h = fmin(hnew, span);
    }
    *tp = st->ht[0];
    return s;
}

/* linsol.h backend of a structured `linsol` choice. */
static int bdf_ls_kind(int lsk)
{
    return lsk == BDF_LS_UMFPACK ? MBS_LS_UMFPACK
           : lsk == BDF_LS_CHOLMOD ? MBS_LS_CHOLMOD
                                   : MBS_LS_DENSE;
}

/* Index-3 form: error-test only the velocities the constraints see as index-2
 * variables (scaled by h), the others unscaled (methods/formulations/dae_form.h). */
static int index3_velocity_classes(bdf_state *st, double t, const double *state)
{
    size_t nq = st->form->nq, nv = st->form->nv;
    int *seen = malloc(nv * sizeof(int));
    if (!seen)
        return MBS_NO_MEMORY;
    int s = mbs_dae_form_index2_velocities(st->form, st->ctx, t, state, seen);
    for (size_t j = 0; s == MBS_OK && j < nv; j++)
        st->errmask[nq + j] = st->newtmask[nq + j] = seen[j] ? 2 : 1;
    free(seen);
    return s;
}

static int bdf_integrate(void *p, mbs_ctx *ctx, const mbs_settings *set, double *tp, double *y)
{
    bdf_state *st = p;
    st->ctx = ctx;
    st->nhist = 1;
    st->ht[0] = *tp;
    st->c0f = 0.0;
    st->jac_fresh = 0;
    st->snewt = 100.0;
    mbs_dae_form_from_state(st->form, y, st->hy[0]);
    if (st->var->kind == MBS_FORM_INDEX3 && !st->var->fixed && st->form->nl > 0) {
        int s0 = index3_velocity_classes(st, *tp, y);
        if (s0 != MBS_OK) {
            st->ctx = NULL;
            return s0;
        }
    }
    int s = st->var->fixed ? integrate_fixed(st, set, tp) : integrate_adaptive(st, set, tp);
    mbs_dae_form_to_state(st->form, st->hy[0], y);
    if (st->lsk != BDF_LS_FULL) {
        int kind = bdf_ls_kind(st->lsk);
        mbs_ctx_report_linsol(ctx, mbs_dae_form_linsol(st->form, 0), kind);
        mbs_ctx_report_linsol(ctx, mbs_dae_form_linsol(st->form, 1), kind);
        mbs_ctx_report_linsol(ctx, mbs_index1_linsol(st->ix), kind);
        mbs_project_report(ctx, st->proj);
    }
    st->ctx = NULL;
    return s;
}

/* ---- descriptors ------------------------------------------------------------- */

static void bdf_free(void *p)
{
    bdf_state *st = p;
    if (!st)
        return;
    mbs_dae_form_free(st->form);
    mbs_project_free(st->proj);
    mbs_index1_free(st->ix);
    for (int j = 0; j < BDF_NHIST; j++) {
        free(st->hy[j]);
        free(st->dd[j]);
    }
    free(st->y);
    free(st->yp);
    free(st->ypred);
    free(st->base);
    free(st->R);
    free(st->F);
    free(st->dy);
    free(st->w);
    free(st->lte);
    free(st->y0p);
    free(st->tmp);
    free(st->ydense);
    free(st->state);
    free(st->errmask);
    free(st->newtmask);
    free(st->plainmask);
    free(st->rs);
    free(st->cs);
    free(st->sy);
    free(st->svd);
    if (st->E)
        gsl_matrix_free(st->E);
    if (st->J)
        gsl_matrix_free(st->J);
    if (st->S)
        gsl_matrix_free(st->S);
    if (st->perm)
        gsl_permutation_free(st->perm);
    if (st->rhs)
        gsl_vector_free(st->rhs);
    mbs_ode_free(st->starter);
    free(st);
}

static double param_or(const mbs_params *p, const char *name, double def)
{
    int i = mbs_params_find(p, name);
    return i >= 0 ? p->val[i] : def;
}

/* The settings of method m, a pair of the DAE axis. */
static void bdf_variant_of(const mbs_method_def *m, bdf_variant *v)
{
    const mbs_dae_method *dm = m->variant;
    *v = (bdf_variant){.kind = dm->formulation->kind,
                       .fixed = (dm->integrator->flags & MBS_M_FIXED_STEP) != 0,
                       .project = (dm->formulation->provides & MBS_DAE_PROJECTION) != 0};
}

static int bdf_alloc(const mbs_method_def *m, const mbs_params *p, mbs_ctx *ctx, void **out)
{
    *out = NULL;
    const mbs_problem *pb = ctx->pb;
    bdf_state *st = calloc(1, sizeof *st);
    if (!st)
        return MBS_NO_MEMORY;
    bdf_variant_of(m, &st->var_store);
    st->var = &st->var_store;
    st->kappa = param_or(p, "kappa", 0.33);
    st->maxord = (int)param_or(p, "maxord", BDF_KMAX);
    st->order = (int)param_or(p, "order", 2);
    st->newton_tol = param_or(p, "newton_tol", 1e-15);
    st->lsk = (int)param_or(p, "linsol", BDF_LS_FULL);
    double C = param_or(p, "C", 1.0), eps_g = param_or(p, "eps_g", 1e-14);
    int s = MBS_OK;
    if (!(st->kappa > 0.0 && st->kappa <= 1.0))
        s = mbs_fail(ctx, MBS_BAD_INPUT, pb->t0, "%s: kappa=%g must lie in (0, 1]", m->name,
                     st->kappa);
    else if (st->order < 1 || st->order > BDF_KMAX || st->maxord < 1 || st->maxord > BDF_KMAX)
        s = mbs_fail(ctx, MBS_BAD_INPUT, pb->t0, "%s: order must lie in 1..5", m->name);
    else if (!(C > 0.0))
        s = mbs_fail(ctx, MBS_BAD_INPUT, pb->t0, "%s: C=%g must be positive", m->name, C);
    else if (st->lsk < BDF_LS_FULL || st->lsk > BDF_LS_AUTO)
        s = mbs_fail(ctx, MBS_BAD_INPUT, pb->t0, "%s: linsol=%d unknown", m->name, st->lsk);
    if (s == MBS_OK && st->lsk == BDF_LS_AUTO) {
        /* not for GGL: there the structured matrix's slower contraction leaves
         * a larger Newton error in g and v under DASSL's test (pendulum tol
         * 1e-7: v error 1.2e-5 against 2.3e-6 with full, |g| 1.14 tol at 1e-6) */
        int kind, a = st->var->fixed || st->var->kind == MBS_FORM_GGL
                          ? 0
                          : mbs_dae_form_auto_structured(ctx, &kind);
        if (a < 0)
            s = MBS_NO_MEMORY;
        st->lsk = a <= 0 ? BDF_LS_FULL : kind == MBS_LS_CHOLMOD ? BDF_LS_CHOLMOD : BDF_LS_LU;
    }
    int full = st->lsk == BDF_LS_FULL;
    if (s == MBS_OK)
        s = full ? mbs_dae_form_alloc(&st->form, ctx, st->var->kind)
                 : mbs_dae_form_alloc_sparse(&st->form, ctx, st->var->kind,
                                             bdf_ls_kind(st->lsk));
    if (s == MBS_OK) {
        /* index-1 solves (y'_0, fixed-step starter) on the same backend */
        st->form->baumgarte_C = C;
        s = mbs_index1_alloc(&st->ix, ctx,
                             st->lsk == BDF_LS_UMFPACK   ? MBS_LINSOL_UMFPACK
                             : st->lsk == BDF_LS_CHOLMOD ? MBS_LINSOL_CHOLMOD
                                                         : MBS_LINSOL_LU);
    }
    if (s == MBS_OK && st->var->project)
        s = full ? mbs_project_alloc(&st->proj, ctx, eps_g)
                 : mbs_project_alloc_backend(&st->proj, ctx, eps_g, bdf_ls_kind(st->lsk));
    if (s != MBS_OK) {
        bdf_free(st);
        return s;
    }
    size_t n = st->form->n;
    st->n = n;
    st->nq = pb->nq;
    st->nv = pb->nv;
    st->nl = pb->nl;
    st->nr = n - pb->nq;
    int ok = 1;
    for (int j = 0; j < BDF_NHIST; j++) {
        ok = ok && (st->hy[j] = calloc(n, sizeof(double)));
        ok = ok && (st->dd[j] = calloc(n, sizeof(double)));
    }
    double **vecs[] = {&st->y, &st->yp,  &st->ypred, &st->base, &st->R,   &st->F,
                       &st->dy, &st->w,  &st->lte,  &st->y0p, &st->tmp, &st->ydense};
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
        ok = ok && (*vecs[i] = calloc(n, sizeof(double)));
    ok = ok && (st->state = calloc(mbs_ny(pb), sizeof(double)));
    ok = ok && (st->errmask = calloc(n, sizeof(int)));
    ok = ok && (st->newtmask = calloc(n, sizeof(int)));
    ok = ok && (st->sy = calloc(pb->nq + pb->nv, sizeof(double)));
    ok = ok && (st->svd = calloc(pb->nv, sizeof(double)));
    if (full) { /* dense iteration matrix (the structured path has nothing n x n) */
        ok = ok && (st->rs = calloc(st->nr, sizeof(double)));
        ok = ok && (st->cs = calloc(st->nr, sizeof(double)));
        ok = ok && (st->E = mbs_matrix_alloc(n, n)) && (st->J = mbs_matrix_alloc(n, n)) &&
             (st->S = mbs_matrix_alloc(st->nr, st->nr)) &&
             (st->perm = gsl_permutation_alloc(st->nr)) && (st->rhs = gsl_vector_alloc(st->nr));
    }
    if (ok && st->var->fixed) {
        ok = (st->starter = mbs_ode_alloc(pb->nq + pb->nv, starter_rhs, st)) != NULL;
    }
    if (!ok) {
        bdf_free(st);
        return MBS_NO_MEMORY;
    }
    /* error test over the differential components ([arnold2016dae] Section 4.2) */
    for (size_t i = 0; i < n; i++)
        st->errmask[i] = st->form->var_index[i] == 1;
    /* In the index-3 form v is an index-2 variable: its error estimate is
     * O(h^k), not O(h^(k+1)); scale it by h as RADAU5 does for index-2
     * components (Hairer & Wanner, Sect. VII.8). */
    for (size_t i = 0; i < n; i++)
        st->newtmask[i] = st->form->var_index[i] < 3 ? st->form->var_index[i] : 3;
    if (st->var->kind == MBS_FORM_INDEX3 && pb->nl > 0)
        for (size_t i = pb->nq; i < pb->nq + pb->nv; i++)
            st->errmask[i] = st->newtmask[i] = 2;
    if (st->var->kind == MBS_FORM_INDEX3 && pb->nl > 0 && !st->var->fixed) {
        if (!(st->plainmask = malloc(n * sizeof(int)))) {
            bdf_free(st);
            return MBS_NO_MEMORY;
        }
        for (size_t i = 0; i < n; i++)
            st->plainmask[i] = 1;
    }
    *out = st;
    return MBS_OK;
}

static const mbs_method_ops bdf_ops = {
    .alloc = bdf_alloc,
    .integrate = bdf_integrate,
    .free_state = bdf_free,
};

#define KAPPA_PARAM                                                                        \
    {"kappa", 0.33, 1e-10, 1.0,                                                            \
     "Newton stopping factor: stop when rho/(1-rho)|dy| <= kappa (weighted norm; DASSL "   \
     "default 0.33, Arnold 2016 [arnold2016dae] Sect. 4.1)", NULL, 0}
#define MAXORD_PARAM {"maxord", 5, 1, 5, "maximum BDF order", NULL, 1}
#define ORDER_PARAM {"order", 2, 1, 5, "BDF order k (fixed)", NULL, 1}
#define NTOL_PARAM                                                                         \
    {"newton_tol", 1e-15, 1e-15, 1e-3,                                                     \
     "rtol = atol of the Newton weights of the fixed-step method", NULL, 0}
#define LINSOL_PARAM                                                                       \
    {"linsol", BDF_LS_AUTO, 0, 4,                                                          \
     "iteration matrix: full (dense condensed LU of dF/dy), the structured KKT simplified " \
     "Newton (methods/formulations/dae_form.h; H = I problems) on lu (dense KKT LU), umfpack or "        \
     "cholmod, or auto (default): structured where it drops only the Hessian terms "       \
     "(mbs_dae_form_auto_structured), else full; -fixed methods and ggl/bdf: full",         \
     BDF_LINSOL_CHOICES, 1}

static const mbs_param_def adaptive_params[] = {KAPPA_PARAM, MAXORD_PARAM};
static const mbs_param_def fixed_params[] = {ORDER_PARAM, KAPPA_PARAM, NTOL_PARAM};
static const mbs_param_def linsol_params[] = {LINSOL_PARAM};

#define BDF_CITE "Arnold 2016 [arnold2016dae], Remark 8 b), Eqs. (74)-(76)"
#define BDF_FLAGS (MBS_M_IMPLICIT | MBS_M_NEEDS_FULL_RANK)
#define BDF_ORDERS(p) {[1] = {p, p, p}, [2] = {p, p, p}, [3] = {p, p, p}}

/* "SUMMARY on FORM, NOTE" and "CITATION; Eq(s). EQS".  The note of the
 * adaptive method says how the algebraic components enter its error test: the
 * index-3 form is scaled (Eq. (76)), index-2 components are left out; that of
 * the fixed-step method its orders and start (left out on a formulation that
 * fixes the step, where it is the only BDF).  With a projection: "BASE/bdf
 * with PROJECTION". */
static void bdf_describe(const mbs_dae_integrator *in, const mbs_dae_formulation *f,
                         char *summary, size_t ns, char *citation, size_t nc)
{
    if (f->provides & MBS_DAE_PROJECTION)
        snprintf(summary, ns, "%s/%s with %s", f->base->name, in->name, f->projection);
    else if (in->flags & MBS_M_ADAPTIVE)
        snprintf(summary, ns, "%s on %s%s", in->summary, f->form,
                 f->index == 3 ? " (scaled, Eq. (76))"
                 : f->mu       ? ", lambda, mu not error-tested"
                               : ", lambda not error-tested");
    else
        snprintf(summary, ns, "%s on %s%s", in->summary, f->form,
                 f->provides & MBS_DAE_FIXED_H ? "" : " (orders k; rk8pd start)");
    snprintf(citation, nc, "%s; %s %s", in->citation, mbs_dae_eq_word(f->eqs), f->eqs);
}

/* The BDF integrators of the DAE axis (methods/framework/dae_axis.h); the
 * registry runs each on every DAE formulation that fits. */
const mbs_dae_integrator mbs_dae_integrators_bdf[] = {
    {
        .name = "bdf",
        .runs_on = MBS_DAE_EF,
        .handles = MBS_DAE_PROJECTION,
        .max_index = 3,
        .flags = MBS_M_ADAPTIVE | BDF_FLAGS,
        .order = BDF_ORDERS(5),
        .params = MBS_PARAM_LIST(adaptive_params),
        .form_params = MBS_PARAM_LIST(linsol_params),
        .ops = &bdf_ops,
        .summary = "variable-order (1-5) variable-step BDF",
        .citation = BDF_CITE,
        .describe = bdf_describe,
    },
    {
        .name = "bdf-fixed",
        .fixed_h_name = "bdf",
        .runs_on = MBS_DAE_EF,
        .handles = MBS_DAE_FIXED_H,
        .max_index = 3,
        .flags = MBS_M_FIXED_STEP | BDF_FLAGS,
        .order = BDF_ORDERS(2), /* the default order k */
        .params = MBS_PARAM_LIST(fixed_params),
        .form_params = MBS_PARAM_LIST(linsol_params),
        .ops = &bdf_ops,
        .summary = "fixed-step BDF of order k = `order`",
        .citation = BDF_CITE,
        .describe = bdf_describe,
    },
    {.name = NULL},
};
