/* Explicit integrators over an acceleration evaluator (see explicit.h):
 *   tableaux (tableau.h: rk4, dopri5, tsit5, vern6, plugins) - one generic
 *            explicit Runge-Kutta stepper.  Fixed step (MBS_M_FIXED_STEP):
 *            steps of h, the last one landing on t_end.  Adaptive: the
 *            embedded pair with Hairer's step-size controller and initial-step
 *            heuristic (Hairer, Norsett, Wanner, Solving ODEs I, Sect. II.4 and
 *            code DOPRI5), RMS error norm with sc_i = atol + rtol max(|y0_i|,
 *            |y1_i|), FSAL when the tableau is.  For Dormand-Prince 5(4) this is
 *            DOPRI5 operation for operation (same sums in the same order).
 *            Dense output (measuring runs) from the tableau's continuous
 *            extension where it has one (dopri5, tsit5; explicit_dense).
 *   rkf45, rk8pd - GSL's embedded steppers with GSL's standard step-size rule
 *            (|err_i| <= atol + rtol |y_i|), driven by our loop so that the
 *            derivative at the start of each step (needed anyway) also yields the
 *            multipliers at the accepted point.
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
    const mbs_tableau *tab; /* NULL for the GSL steppers */
    int fixed;             /* the method is fixed-step (MBS_M_FIXED_STEP) */
    void *ws;              /* formulation workspace */
    mbs_ctx *ctx;          /* valid during integrate() */
    int status;            /* status of the last right-hand side */
    size_t nq, nv, nl, n;  /* n = nq + nv */
    int ns;                /* stage vectors in k */
    double **k, *tmp, *y0, *yerr, *lam;
    double *e;             /* error weights b - bhat (adaptive tableaux) */
    /* dense output of the last accepted step (tableaux with bd, measuring runs):
     * y(t0 + theta h) = ystart + sum_j theta^j dcoef_j, dcoef_j = h sum_i bd_ij k_i */
    double *ystart, *dcoef;
    double dense_t0, dense_h;
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
    for (int i = 0; st->k && i < st->ns; i++)
        free(st->k[i]);
    free(st->k);
    free(st->e);
    free(st->tmp);
    free(st->y0);
    free(st->yerr);
    free(st->lam);
    free(st->ystart);
    free(st->dcoef);
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
    st->tab = st->var->kind == MBS_EXPLICIT_TABLEAU ? st->var->tab : NULL;
    st->fixed = (m->flags & MBS_M_FIXED_STEP) != 0;
    if (st->var->kind == MBS_EXPLICIT_TABLEAU &&
        (!st->tab || (!st->fixed && !st->tab->bhat) || st->tab->stages < 1)) {
        explicit_free(st);
        return mbs_fail(ctx, MBS_BAD_INPUT, NAN, "%s: adaptive without an embedded pair",
                        m->name);
    }
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
    st->ns = st->tab ? st->tab->stages : 1;
    int ok = (st->k = calloc((size_t)st->ns, sizeof *st->k)) != NULL;
    for (int i = 0; ok && i < st->ns; i++)
        ok = (st->k[i] = malloc(st->n * sizeof(double))) != NULL;
    if (ok && st->tab && !st->fixed) {
        /* error weights: e when the tableau gives them exactly, else b - bhat */
        const mbs_tableau *t = st->tab;
        ok = (st->e = malloc((size_t)t->stages * sizeof(double))) != NULL;
        for (int i = 0; ok && i < t->stages; i++)
            st->e[i] = t->e ? t->e[i] : t->b[i] - t->bhat[i];
        if (ok && t->bd)
            ok = (st->ystart = malloc(st->n * sizeof(double))) &&
                 (st->dcoef = malloc((size_t)t->dense_degree * st->n * sizeof(double)));
    }
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

/* out = base + h sum_j w_j k_j over the stages j < m with w_j != 0, summed in
 * the order of j (as a hand-written stage is); base NULL: out = h sum.
 *
 * A tableau with `increments` set and the exact row sum sigma of w given (c_i
 * for row i of A, 1 for b, 0 for e; NAN: none) is evaluated in the equivalent
 * form  base + h (sigma k_1 + sum_{j>1} w_j (k_j - k_1)).  Rounded to doubles,
 * coefficients of large magnitude do not sum to their row sums: Verner's 6(5)
 * pair (entries up to 208) has sum_j a_7j - c_7 = 2.0e-14 in exact arithmetic
 * of its doubles, and with b_7 = -176 the order-2 condition sum_i b_i (A 1)_i
 * = 1/2 holds only to 6.5e-12, an O(h) term of the global error that stopped
 * the tolerance study of the simple pendulum near 1e-8 (t_end = 100) and 1e-6
 * (t_end = 2000).  In the increment form the row sums are the stored c_i
 * exactly, sum_i b_i c_i - 1/2 = 4.2e-15, and the large weights multiply
 * differences of size O(h), not O(1). */
static void combine(const explicit_state *st, const double *w, int m, double h, double sigma,
                    const double *base, double *out)
{
    int nz[MBS_TABLEAU_MAX_STAGES], cnt = 0;
    for (int j = 0; j < m; j++)
        if (w[j] != 0.0)
            nz[cnt++] = j;
    double *const *k = st->k;
    if (st->tab && st->tab->increments && !isnan(sigma)) {
        for (size_t r = 0; r < st->n; r++) {
            double acc = sigma * k[0][r];
            for (int q = 0; q < cnt; q++)
                if (nz[q] > 0)
                    acc += w[nz[q]] * (k[nz[q]][r] - k[0][r]);
            out[r] = base ? base[r] + h * acc : h * acc;
        }
        return;
    }
    if (cnt == 0) {
        for (size_t r = 0; r < st->n; r++)
            out[r] = base ? base[r] : 0.0;
        return;
    }
    for (size_t r = 0; r < st->n; r++) {
        double acc = w[nz[0]] * k[nz[0]][r];
        for (int q = 1; q < cnt; q++)
            acc += w[nz[q]] * k[nz[q]][r];
        out[r] = base ? base[r] + h * acc : h * acc;
    }
}

/* Fixed steps of size h; a last, shorter step lands exactly on t_end.  A FSAL
 * tableau's last stage has weight 0 and is the next step's first: it is not
 * computed twice. */
static int integrate_rk_fixed(explicit_state *st, const mbs_settings *set, double *tp,
                              double *y)
{
    const mbs_tableau *tab = st->tab;
    int ns = tab->fsal ? tab->stages - 1 : tab->stages;
    double *lambda = y + st->n, **k = st->k;
    double t0 = *tp, h = set->h, span = set->t_end - t0;
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
        for (int j = 1; j < ns && s == MBS_OK; j++) {
            combine(st, tab->A + (size_t)j * (size_t)tab->stages, j, hs, tab->c[j], y, st->tmp);
            double c = tab->c[j];
            s = rhs(st, c == 1.0 ? tn : t + c * hs, st->tmp, k[j]);
        }
        if (s != MBS_OK)
            break;
        combine(st, tab->b, ns, hs, 1.0, y, y);
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

/* Dense output (mbs_dense_fn, method.h): the tableau's continuous extension
 * (tableau.h, bd) of the step just accepted, q and v (MBS_DENSE_QV; lambda is
 * not integrated).  With a post-step hook (projection, coordinate partitioning)
 * it is the extension of the step as computed, from the accepted start value
 * to the unprojected end value: it meets the accepted state at t_n+1 only up
 * to the hook's correction, of the size of the local error. */
static int explicit_dense(void *p, double t, double *y)
{
    const explicit_state *st = p;
    const size_t n = st->n, deg = (size_t)st->tab->dense_degree;
    const double theta = (t - st->dense_t0) / st->dense_h;
    for (size_t r = 0; r < n; r++) {
        double acc = 0.0;
        for (size_t j = deg; j-- > 0;)
            acc = (acc + st->dcoef[j * n + r]) * theta;
        y[r] = st->ystart[r] + acc;
    }
    return MBS_DENSE_QV;
}

/* Before an accepted step from (t, y) of size h replaces y: keep y and the
 * coefficients of the continuous extension for explicit_dense, in measuring
 * runs only (an observer is set): the dense output evaluates stored values. */
static void dense_prepare(explicit_state *st, double t, double h, const double *y)
{
    const mbs_tableau *tab = st->tab;
    const size_t n = st->n, deg = (size_t)tab->dense_degree;
    double w[MBS_TABLEAU_MAX_STAGES];
    memcpy(st->ystart, y, n * sizeof(double));
    for (size_t j = 0; j < deg; j++) {
        for (int i = 0; i < tab->stages; i++)
            w[i] = tab->bd[(size_t)i * deg + j];
        combine(st, w, tab->stages, h, NAN, NULL, st->dcoef + j * n);
    }
    st->dense_t0 = t;
    st->dense_h = h;
    st->ctx->dense = explicit_dense;
    st->ctx->dense_data = st;
}

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

/* Initial step (Hairer's HINIT for a method of order p), one extra evaluation. */
static int initial_step(explicit_state *st, const mbs_settings *set, double t, const double *y,
                        const double *f0, double span, int p, double *h)
{
    double d0 = rms_norm(st, y, y, NULL, set), d1 = rms_norm(st, f0, y, NULL, set);
    double h0 = (d0 < 1e-10 || d1 < 1e-10) ? 1e-6 : 0.01 * d0 / d1;
    h0 = fmin(h0, span);
    for (size_t i = 0; i < st->n; i++)
        st->tmp[i] = y[i] + h0 * f0[i];
    int s = rhs(st, t + h0, st->tmp, st->y0);
    if (s != MBS_OK)
        return s;
    for (size_t i = 0; i < st->n; i++)
        st->yerr[i] = st->y0[i] - f0[i];
    double d2 = rms_norm(st, st->yerr, y, NULL, set) / h0;
    double dm = fmax(d1, d2);
    double h1 = dm <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dm, 1.0 / p);
    *h = fmin(fmin(100.0 * h0, h1), span);
    return MBS_OK;
}

static int integrate_rk_adaptive(explicit_state *st, const mbs_settings *set, double *tp,
                                 double *y)
{
    const mbs_tableau *tab = st->tab;
    mbs_ctx *ctx = st->ctx;
    size_t n = st->n;
    int ns = tab->stages, fsal = tab->fsal;
    double *lambda = y + n, **k = st->k, *y1 = st->y0;
    double t = *tp, t_end = set->t_end, span = t_end - t;
    double hmin = 1e-14 * fabs(span), facold = 1e-4, h;
    /* Hairer's PI controller: fac = err^expo1 / facold^beta with expo1 =
     * 1/(q+1) - 0.75 beta, q the lower order of the pair (DOPRI5: q = 4). */
    int q = tab->order < tab->order_emb ? tab->order : tab->order_emb;
    const double safe = 0.9, beta = 0.04, expo1 = 1.0 / (q + 1) - beta * 0.75, facc1 = 5.0,
                 facc2 = 0.1;
    int s = rhs(st, t, y, k[0]), reject = 0;
    if (s != MBS_OK)
        return s;
    memcpy(lambda, st->lam, st->nl * sizeof(double));
    if (set->h > 0.0)
        h = set->h;
    else if ((s = initial_step(st, set, t, y, k[0], span, tab->order, &h)) != MBS_OK)
        return s;
    while (t < t_end) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        int last = t + 1.01 * h >= t_end;
        if (last)
            h = t_end - t;
        for (int i = 1; i < ns; i++) {
            /* a FSAL tableau's last stage is evaluated at the new solution */
            double *dst = fsal && i == ns - 1 ? y1 : st->tmp;
            combine(st, tab->A + (size_t)i * (size_t)ns, i, h, tab->c[i], y, dst);
            if ((s = rhs(st, t + tab->c[i] * h, dst, k[i])) != MBS_OK)
                goto stage_failed;
        }
        if (!fsal)
            combine(st, tab->b, ns, h, 1.0, y, y1);
        combine(st, st->e, ns, h, 0.0, NULL, st->yerr);
        double err = rms_norm(st, st->yerr, y, y1, set);
        double fac11 = pow(err, expo1);
        double fac = fmax(facc2, fmin(facc1, fac11 / pow(facold, beta) / safe));
        double hnew = h / fac;
        if (err <= 1.0) {
            facold = fmax(err, 1e-4);
            if (st->dcoef && ctx->observer)
                dense_prepare(st, t, h, y);
            t = last ? t_end : t + h;
            memcpy(y, y1, n * sizeof(double));
            if (fsal) {
                double *swap = k[0];
                k[0] = k[ns - 1];
                k[ns - 1] = swap; /* the last stage is the derivative at the new point */
            } else if ((s = rhs(st, t, y, k[0])) != MBS_OK) {
                break;
            }
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
    if (!st->tab)
        s = integrate_gsl(st, set, tp, y);
    else if (st->fixed)
        s = integrate_rk_fixed(st, set, tp, y);
    else
        s = integrate_rk_adaptive(st, set, tp, y);
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
