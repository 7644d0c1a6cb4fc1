/* Explicit integrators over an acceleration evaluator (see explicit.h):
 *   rk4    - classical Runge-Kutta 4, fixed step;
 *   rkf45, rk8pd - GSL's embedded steppers with GSL's standard step-size rule
 *            (|err_i| <= atol + rtol |y_i|), driven by our loop so that the
 *            derivative at the start of each step (needed anyway) also yields the
 *            multipliers at the accepted point;
 *   dopri5 - Dormand-Prince 5(4) (Dormand & Prince 1980) with Hairer's step-size
 *            controller and initial-step heuristic (Hairer, Norsett, Wanner,
 *            Solving ODEs I, Sect. II.4 and code DOPRI5), RMS error norm with
 *            sc_i = atol + rtol max(|y0_i|, |y1_i|), FSAL.
 * Only (q, v) are integrated and error-controlled; lambda is not. */
#include "explicit.h"

#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct explicit_state {
    const mbs_explicit_variant *var;
    void *ws;              /* formulation workspace */
    mbs_ctx *ctx;          /* valid during integrate() */
    int status;            /* status of the last right-hand side */
    size_t nq, nv, nl, n;  /* n = nq + nv */
    double *k[7], *tmp, *y0, *yerr, *lam;
    gsl_odeiv2_step *step;
    gsl_odeiv2_system sys;
} explicit_state;

/* y = (q, v) -> dy = (H v, v'); multipliers into st->lam. */
static int rhs(explicit_state *st, double t, const double *y, double *dy)
{
    int s = mbs_qdot(st->ctx, y, y + st->nq, dy);
    if (s == MBS_OK)
        s = st->var->accel->eval(st->ws, st->ctx, t, y, y + st->nq, dy + st->nq, st->lam);
    st->status = s;
    return s;
}

static int gsl_rhs(double t, const double y[], double dydt[], void *data)
{
    return rhs(data, t, y, dydt) == MBS_OK ? GSL_SUCCESS : GSL_EBADFUNC;
}

static void explicit_free(void *p)
{
    explicit_state *st = p;
    if (!st)
        return;
    if (st->ws)
        st->var->accel->free_ws(st->ws);
    for (int i = 0; i < 7; i++)
        free(st->k[i]);
    free(st->tmp);
    free(st->y0);
    free(st->yerr);
    free(st->lam);
    if (st->step)
        gsl_odeiv2_step_free(st->step);
    free(st);
}

static int explicit_alloc(const mbs_method_def *m, const mbs_params *p, mbs_ctx *ctx,
                          void **out)
{
    *out = NULL;
    explicit_state *st = calloc(1, sizeof *st);
    if (!st)
        return MBS_NO_MEMORY;
    st->var = m->variant;
    const mbs_problem *pb = ctx->pb;
    st->nq = pb->nq;
    st->nv = pb->nv;
    st->nl = pb->nl;
    st->n = pb->nq + pb->nv;
    int s = st->var->accel->alloc(&st->ws, ctx, p);
    if (s != MBS_OK) {
        explicit_free(st);
        return s;
    }
    int ok = 1;
    for (int i = 0; i < 7; i++)
        ok = ok && (st->k[i] = malloc(st->n * sizeof(double)));
    st->tmp = malloc(st->n * sizeof(double));
    st->y0 = malloc(st->n * sizeof(double));
    st->yerr = malloc(st->n * sizeof(double));
    st->lam = calloc(st->nl ? st->nl : 1, sizeof(double));
    ok = ok && st->tmp && st->y0 && st->yerr && st->lam;
    if (ok && (st->var->kind == MBS_EXPLICIT_RKF45 || st->var->kind == MBS_EXPLICIT_RK8PD)) {
        st->step = gsl_odeiv2_step_alloc(st->var->kind == MBS_EXPLICIT_RKF45
                                             ? gsl_odeiv2_step_rkf45
                                             : gsl_odeiv2_step_rk8pd,
                                         st->n);
        ok = st->step != NULL;
        st->sys = (gsl_odeiv2_system){.function = gsl_rhs, .dimension = st->n, .params = st};
    }
    if (!ok) {
        explicit_free(st);
        return MBS_NO_MEMORY;
    }
    *out = st;
    return MBS_OK;
}

/* After an accepted step: optional post-step hook, refresh the derivative at
 * the new point when the hook moved it, store lambda, report the step. */
static int accept(explicit_state *st, double t, double *y, double *lambda, double *dy)
{
    int s;
    if (st->var->accel->post_step) {
        if ((s = st->var->accel->post_step(st->ws, st->ctx, t, y, y + st->nq)) != MBS_OK)
            return s;
        if ((s = rhs(st, t, y, dy)) != MBS_OK)
            return s;
    }
    memcpy(lambda, st->lam, st->nl * sizeof(double));
    return mbs_accept(st->ctx, t, y, dy + st->nq);
}

static int integrate_rk4(explicit_state *st, const mbs_settings *set, double *tp, double *y)
{
    static const double classical[4] = {1.0 / 6.0, 2.0 / 6.0, 2.0 / 6.0, 1.0 / 6.0};
    const double *b = st->var->rk4_weights ? st->var->rk4_weights : classical;
    size_t n = st->n;
    double *lambda = y + n, **k = st->k;
    double t0 = *tp, h = set->h, span = set->t_end - t0;
    /* Steps of size h; a last, shorter step lands exactly on t_end. */
    long nsteps = (long)ceil(span / h * (1.0 - 1e-12));
    int s = rhs(st, t0, y, k[0]);
    if (s != MBS_OK)
        return s;
    memcpy(lambda, st->lam, st->nl * sizeof(double));
    double t = t0;
    for (long i = 1; i <= nsteps; i++) {
        if ((s = mbs_budget(st->ctx, t)) != MBS_OK)
            break;
        double tn = i == nsteps ? set->t_end : t0 + (double)i * h;
        double hs = tn - t;
        for (size_t j = 0; j < n; j++)
            st->tmp[j] = y[j] + 0.5 * hs * k[0][j];
        if ((s = rhs(st, t + 0.5 * hs, st->tmp, k[1])) != MBS_OK)
            break;
        for (size_t j = 0; j < n; j++)
            st->tmp[j] = y[j] + 0.5 * hs * k[1][j];
        if ((s = rhs(st, t + 0.5 * hs, st->tmp, k[2])) != MBS_OK)
            break;
        for (size_t j = 0; j < n; j++)
            st->tmp[j] = y[j] + hs * k[2][j];
        if ((s = rhs(st, tn, st->tmp, k[3])) != MBS_OK)
            break;
        for (size_t j = 0; j < n; j++)
            y[j] += hs * (b[0] * k[0][j] + b[1] * k[1][j] + b[2] * k[2][j] + b[3] * k[3][j]);
        t = tn;
        /* First stage of the next step: accelerations and multipliers at t_n. */
        if ((s = rhs(st, t, y, k[0])) != MBS_OK || (s = accept(st, t, y, lambda, k[0])) != MBS_OK)
            break;
    }
    *tp = t;
    return s;
}

/* GSL's standard step-size rule (gsl_odeiv2_control_y_new: a_y = 1, a_dydt = 0;
 * ode-initval2/control.c, std_control_hadjust), written out because
 * gsl_odeiv2_control_standard_new crashes when its allocation fails (GSL 2.7).
 * Returns -1 (decrease: reject), +1 (increase) or 0, and adjusts *h. */
static int gsl_standard_hadjust(const explicit_state *st, const mbs_settings *set,
                                const double *y, double *h)
{
    const double S = 0.9;
    double rmax = DBL_MIN;
    for (size_t i = 0; i < st->n; i++) {
        double d0 = set->atol + set->rtol * fabs(y[i]);
        rmax = fmax(fabs(st->yerr[i]) / d0, rmax);
    }
    unsigned ord = gsl_odeiv2_step_order(st->step);
    if (rmax > 1.1) {
        /* decrease by no more than a factor of 5, but a fraction S of the estimate */
        double r = S / pow(rmax, 1.0 / ord);
        *h *= fmax(r, 0.2);
        return -1;
    }
    if (rmax < 0.5) {
        double r = S / pow(rmax, 1.0 / (ord + 1.0));
        *h *= fmin(fmax(r, 1.0), 5.0);
        return 1;
    }
    return 0;
}

static int integrate_gsl(explicit_state *st, const mbs_settings *set, double *tp, double *y)
{
    mbs_ctx *ctx = st->ctx;
    size_t n = st->n;
    double *lambda = y + n, *dydt = st->k[0];
    double t = *tp, t_end = set->t_end, span = t_end - t;
    double hmin = 1e-14 * fabs(span);
    gsl_odeiv2_step_reset(st->step);
    double h = set->h > 0.0 ? set->h : 1e-3 * span * pow(set->rtol, 0.2);
    int s = rhs(st, t, y, dydt);
    if (s != MBS_OK)
        return s;
    memcpy(lambda, st->lam, st->nl * sizeof(double));
    while (t < t_end) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        int last = t + h >= t_end;
        if (last)
            h = t_end - t;
        memcpy(st->y0, y, n * sizeof(double));
        int r = gsl_odeiv2_step_apply(st->step, t, h, y, st->yerr, dydt, NULL, &st->sys);
        if (r != GSL_SUCCESS) {
            /* A failed stage (e.g. singular matrix): retry with half the step. */
            memcpy(y, st->y0, n * sizeof(double));
            gsl_odeiv2_step_reset(st->step);
            mbs_count_rejected(ctx);
            h *= 0.5;
            if (h < hmin) {
                s = st->status != MBS_OK ? st->status : MBS_STEP_UNDERFLOW;
                mbs_fail(ctx, s, t, "step size %.3g below hmin after a failed stage", h);
                break;
            }
            ctx->reason[0] = '\0';
            continue;
        }
        double h_used = h;
        if (gsl_standard_hadjust(st, set, y, &h) < 0) {
            memcpy(y, st->y0, n * sizeof(double));
            mbs_count_rejected(ctx);
            if (h < hmin) {
                s = mbs_fail(ctx, MBS_STEP_UNDERFLOW, t, "step size %.3g below hmin %.3g", h,
                             hmin);
                break;
            }
            continue;
        }
        t = last ? t_end : t + h_used;
        if ((s = rhs(st, t, y, dydt)) != MBS_OK || (s = accept(st, t, y, lambda, dydt)) != MBS_OK)
            break;
    }
    *tp = t;
    return s;
}

/* Dormand-Prince 5(4) coefficients (Hairer, Norsett, Wanner, Table II.5.2). */
static const double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
static const double a21 = 1.0 / 5;
static const double a31 = 3.0 / 40, a32 = 9.0 / 40;
static const double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
static const double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561,
                    a54 = -212.0 / 729;
static const double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247,
                    a64 = 49.0 / 176, a65 = -5103.0 / 18656;
static const double a71 = 35.0 / 384, a73 = 500.0 / 1113, a74 = 125.0 / 192,
                    a75 = -2187.0 / 6784, a76 = 11.0 / 84;
static const double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920,
                    e5 = -17253.0 / 339200, e6 = 22.0 / 525, e7 = -1.0 / 40;

static double rms_norm(const explicit_state *st, const double *e, const double *ya,
                       const double *yb, const mbs_settings *set)
{
    double sum = 0.0;
    for (size_t i = 0; i < st->n; i++) {
        double sc = set->atol + set->rtol * fmax(fabs(ya[i]), fabs(yb ? yb[i] : ya[i]));
        sum += (e[i] / sc) * (e[i] / sc);
    }
    return sqrt(sum / (double)st->n);
}

/* Initial step (Hairer's HINIT for order 5), one extra evaluation. */
static int initial_step(explicit_state *st, const mbs_settings *set, double t, const double *y,
                        const double *f0, double span, double *h)
{
    double d0 = rms_norm(st, y, y, NULL, set), d1 = rms_norm(st, f0, y, NULL, set);
    double h0 = (d0 < 1e-10 || d1 < 1e-10) ? 1e-6 : 0.01 * d0 / d1;
    h0 = fmin(h0, span);
    for (size_t i = 0; i < st->n; i++)
        st->tmp[i] = y[i] + h0 * f0[i];
    int s = rhs(st, t + h0, st->tmp, st->k[1]);
    if (s != MBS_OK)
        return s;
    for (size_t i = 0; i < st->n; i++)
        st->yerr[i] = st->k[1][i] - f0[i];
    double d2 = rms_norm(st, st->yerr, y, NULL, set) / h0;
    double dm = fmax(d1, d2);
    double h1 = dm <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dm, 0.2);
    *h = fmin(fmin(100.0 * h0, h1), span);
    return MBS_OK;
}

static int integrate_dopri5(explicit_state *st, const mbs_settings *set, double *tp, double *y)
{
    mbs_ctx *ctx = st->ctx;
    size_t n = st->n;
    double *lambda = y + n, **k = st->k, *y1 = st->y0, *tmp = st->tmp;
    double t = *tp, t_end = set->t_end, span = t_end - t;
    double hmin = 1e-14 * fabs(span), facold = 1e-4, h;
    const double safe = 0.9, beta = 0.04, expo1 = 0.2 - beta * 0.75, facc1 = 5.0, facc2 = 0.1;
    int s = rhs(st, t, y, k[0]), reject = 0;
    if (s != MBS_OK)
        return s;
    memcpy(lambda, st->lam, st->nl * sizeof(double));
    if (set->h > 0.0)
        h = set->h;
    else if ((s = initial_step(st, set, t, y, k[0], span, &h)) != MBS_OK)
        return s;
    while (t < t_end) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        int last = t + 1.01 * h >= t_end;
        if (last)
            h = t_end - t;
#define STAGE(dst, cc, expr)                                                                  \
    do {                                                                                      \
        for (size_t i = 0; i < n; i++)                                                        \
            tmp[i] = y[i] + h * (expr);                                                       \
        if ((s = rhs(st, t + (cc) * h, tmp, dst)) != MBS_OK)                                  \
            goto stage_failed;                                                                \
    } while (0)
        STAGE(k[1], c2, a21 * k[0][i]);
        STAGE(k[2], c3, a31 * k[0][i] + a32 * k[1][i]);
        STAGE(k[3], c4, a41 * k[0][i] + a42 * k[1][i] + a43 * k[2][i]);
        STAGE(k[4], c5, a51 * k[0][i] + a52 * k[1][i] + a53 * k[2][i] + a54 * k[3][i]);
        STAGE(k[5], 1.0,
              a61 * k[0][i] + a62 * k[1][i] + a63 * k[2][i] + a64 * k[3][i] + a65 * k[4][i]);
        for (size_t i = 0; i < n; i++)
            y1[i] = y[i] + h * (a71 * k[0][i] + a73 * k[2][i] + a74 * k[3][i] +
                                a75 * k[4][i] + a76 * k[5][i]);
        if ((s = rhs(st, t + h, y1, k[6])) != MBS_OK)
            goto stage_failed;
#undef STAGE
        for (size_t i = 0; i < n; i++)
            st->yerr[i] = h * (e1 * k[0][i] + e3 * k[2][i] + e4 * k[3][i] + e5 * k[4][i] +
                               e6 * k[5][i] + e7 * k[6][i]);
        double err = rms_norm(st, st->yerr, y, y1, set);
        double fac11 = pow(err, expo1);
        double fac = fmax(facc2, fmin(facc1, fac11 / pow(facold, beta) / safe));
        double hnew = h / fac;
        if (err <= 1.0) {
            facold = fmax(err, 1e-4);
            t = last ? t_end : t + h;
            memcpy(y, y1, n * sizeof(double));
            double *swap = k[0];
            k[0] = k[6];
            k[6] = swap; /* FSAL: the last stage is the derivative at the new point */
            if ((s = accept(st, t, y, lambda, k[0])) != MBS_OK)
                break;
            if (reject)
                hnew = fmin(hnew, h);
            reject = 0;
        } else {
            hnew = h / fmin(facc1, fac11 / safe);
            reject = 1;
            mbs_count_rejected(ctx);
        }
        h = hnew;
        if (h < hmin) {
            s = mbs_fail(ctx, MBS_STEP_UNDERFLOW, t, "step size %.3g below hmin %.3g", h, hmin);
            break;
        }
        continue;
    stage_failed:
        /* A stage evaluation failed (e.g. singular matrix): halve the step. */
        mbs_count_rejected(ctx);
        h *= 0.5;
        if (h < hmin) {
            mbs_fail(ctx, s, t, "step size %.3g below hmin after a failed stage: %s", h,
                     ctx->reason);
            break;
        }
        ctx->reason[0] = '\0';
        s = MBS_OK;
        reject = 1;
    }
    *tp = t;
    return s;
}

static int explicit_integrate(void *p, mbs_ctx *ctx, const mbs_settings *set, double *tp,
                              double *y)
{
    explicit_state *st = p;
    st->ctx = ctx;
    int s = MBS_OK;
    if (st->var->accel->start &&
        (s = st->var->accel->start(st->ws, ctx, *tp, y, y + st->nq)) != MBS_OK) {
        if (st->var->accel->finish)
            st->var->accel->finish(st->ws, ctx);
        st->ctx = NULL;
        return s;
    }
    switch (st->var->kind) {
    case MBS_EXPLICIT_RK4:
        s = integrate_rk4(st, set, tp, y);
        break;
    case MBS_EXPLICIT_DOPRI5:
        s = integrate_dopri5(st, set, tp, y);
        break;
    default:
        s = integrate_gsl(st, set, tp, y);
        break;
    }
    if (st->var->accel->finish)
        st->var->accel->finish(st->ws, ctx);
    st->ctx = NULL;
    return s;
}

const mbs_method_ops mbs_explicit_ops = {
    .alloc = explicit_alloc,
    .integrate = explicit_integrate,
    .free_state = explicit_free,
};

void *mbs_explicit_accel_ws(void *state)
{
    return state ? ((explicit_state *)state)->ws : NULL;
}
