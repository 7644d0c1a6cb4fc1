/* Half-explicit Runge-Kutta method for the index-1 formulation ([arnold2016dae],
 * Remark 10, Eqs. (85a)-(85c)) on the Dormand-Prince 5(4) tableau (Dormand &
 * Prince 1980; coefficients of Hairer, Norsett, Wanner, Solving ODEs I,
 * Table II.5.2), the scheme of the solver MDOP5 cited in Remark 10.
 * Stage i:
 *     Q_i = q_n + h sum_{j<i} a_ij H(Q_j) V_j,   V_i = v_n + h sum_{j<i} a_ij V'_j   (85a)
 *     [ M(Q_i) B(Q_i)^T ] [ V'_i     ]   [ f(Q_i, V_i) ]
 *     [ B(Q_i) 0        ] [ Lambda_i ] = [ gamma_i     ]                        (85b)
 * (gamma_i = -g_qq(V_i, V_i) - ... at t_n + c_i h, problems/problem.h), and the
 * new step (85c) with the weights b.  The 7th stage is at the new point (FSAL):
 * its Lambda_7 and V'_7 are lambda_{n+1} and v'_{n+1}.
 * For H = I this coincides with Dormand-Prince applied to the index-1 ODE (84);
 * it is kept as its own integrator (own stage loop, own controller state) so
 * that the half-explicit formulation of Remark 10 is measurable by name.
 * Variants: `index1/hedopri5` adaptive (embedded 4th-order error estimate,
 * Hairer's PI controller of DOPRI5, RMS norm over q and v with
 * sc_i = atol + rtol max(|y_n,i|, |y_{n+1},i|)); `index1/hedopri5-fixed` with
 * constant steps for convergence studies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../formulations/index1.h"
#include "../../framework/method.h"

enum { NS = 7 };

static const double C[NS] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0, 1.0};
static const double A[NS][NS] = {
    {0},
    {1.0 / 5},
    {3.0 / 40, 9.0 / 40},
    {44.0 / 45, -56.0 / 15, 32.0 / 9},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
    {35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84},
};
/* Error coefficients b - b^ (b^ the embedded 4th-order weights). */
static const double E[NS] = {71.0 / 57600,      0.0,          -71.0 / 16695, 71.0 / 1920,
                             -17253.0 / 339200, 22.0 / 525, -1.0 / 40};

typedef struct hd_variant {
    int adaptive;
} hd_variant;

typedef struct hd_state {
    const hd_variant *var;
    size_t nq, nv, nl;
    mbs_index1 *ix;
    double *Qd[NS], *Vd[NS]; /* H(Q_i) V_i and V'_i */
    double *Qs, *Vs;          /* current stage point */
    double *y1, *lam1, *yerr;
} hd_state;

static void hd_free(void *p)
{
    hd_state *st = p;
    if (!st)
        return;
    mbs_index1_free(st->ix);
    for (int i = 0; i < NS; i++) {
        free(st->Qd[i]);
        free(st->Vd[i]);
    }
    free(st->Qs);
    free(st->Vs);
    free(st->y1);
    free(st->lam1);
    free(st->yerr);
    free(st);
}

static int hd_alloc(const mbs_method_def *m, const mbs_params *p, mbs_ctx *ctx, void **out)
{
    *out = NULL;
    const mbs_problem *pb = ctx->pb;
    hd_state *st = calloc(1, sizeof *st);
    if (!st)
        return MBS_NO_MEMORY;
    st->var = m->variant;
    st->nq = pb->nq;
    st->nv = pb->nv;
    st->nl = pb->nl;
    int s = mbs_index1_alloc(&st->ix, ctx, (int)p->val[0]);
    if (s != MBS_OK) {
        hd_free(st);
        return s;
    }
    int ok = 1;
    for (int i = 0; i < NS; i++) {
        st->Qd[i] = calloc(st->nq, sizeof(double));
        st->Vd[i] = calloc(st->nv, sizeof(double));
        ok = ok && st->Qd[i] && st->Vd[i];
    }
    st->Qs = calloc(st->nq, sizeof(double));
    st->Vs = calloc(st->nv, sizeof(double));
    st->y1 = calloc(st->nq + st->nv, sizeof(double));
    st->lam1 = calloc(st->nl ? st->nl : 1, sizeof(double));
    st->yerr = calloc(st->nq + st->nv, sizeof(double));
    if (!ok || !st->Qs || !st->Vs || !st->y1 || !st->lam1 || !st->yerr) {
        hd_free(st);
        return MBS_NO_MEMORY;
    }
    *out = st;
    return MBS_OK;
}

/* Stage 0 at (t, q, v): V'_0 and lambda (into lam, may be NULL). */
static int first_stage(hd_state *st, mbs_ctx *ctx, double t, const double *q, const double *v,
                       double *lam)
{
    int s = mbs_qdot(ctx, q, v, st->Qd[0]);
    if (s == MBS_OK)
        s = mbs_index1_accel(st->ix, ctx, t, q, v, st->Vd[0], lam);
    return s;
}

/* Stages 1..6 of a step of size h from y = (q, v) whose stage 0 is already in
 * Qd[0], Vd[0]; the new point goes to st->y1, its multipliers to st->lam1 and
 * its derivatives to Qd[6], Vd[6]. */
static int hd_step(hd_state *st, mbs_ctx *ctx, double t, double h, const double *y)
{
    size_t nq = st->nq, nv = st->nv;
    const double *q = y, *v = y + nq;
    int s;
    for (int i = 1; i < NS; i++) {
        double *Qi = i == NS - 1 ? st->y1 : st->Qs;
        double *Vi = i == NS - 1 ? st->y1 + nq : st->Vs;
        for (size_t k = 0; k < nq; k++) {
            double acc = 0.0;
            for (int j = 0; j < i; j++)
                acc += A[i][j] * st->Qd[j][k];
            Qi[k] = q[k] + h * acc;
        }
        for (size_t k = 0; k < nv; k++) {
            double acc = 0.0;
            for (int j = 0; j < i; j++)
                acc += A[i][j] * st->Vd[j][k];
            Vi[k] = v[k] + h * acc;
        }
        if ((s = mbs_qdot(ctx, Qi, Vi, st->Qd[i])) != MBS_OK ||
            (s = mbs_index1_accel(st->ix, ctx, t + C[i] * h, Qi, Vi, st->Vd[i],
                                  i == NS - 1 ? st->lam1 : NULL)) != MBS_OK)
            return s;
    }
    /* Embedded error estimate h sum (b_i - b^_i) k_i. */
    for (size_t k = 0; k < nq + nv; k++) {
        double acc = 0.0;
        for (int i = 0; i < NS; i++)
            acc += E[i] * (k < nq ? st->Qd[i][k] : st->Vd[i][k - nq]);
        st->yerr[k] = h * acc;
    }
    return MBS_OK;
}

/* Take the new point: y <- y1, lambda <- lam1, stage 0 <- stage 6 (FSAL). */
static void take(hd_state *st, double *y)
{
    size_t nq = st->nq, nv = st->nv;
    memcpy(y, st->y1, (nq + nv) * sizeof(double));
    memcpy(y + nq + nv, st->lam1, st->nl * sizeof(double));
    double *sw = st->Qd[0];
    st->Qd[0] = st->Qd[NS - 1];
    st->Qd[NS - 1] = sw;
    sw = st->Vd[0];
    st->Vd[0] = st->Vd[NS - 1];
    st->Vd[NS - 1] = sw;
}

static int integrate_fixed(hd_state *st, mbs_ctx *ctx, const mbs_settings *set, double *tp,
                           double *y)
{
    double t0 = *tp, t = t0, h = set->h, span = set->t_end - t0;
    long nsteps = (long)ceil(span / h * (1.0 - 1e-12));
    int s = first_stage(st, ctx, t, y, y + st->nq, NULL);
    for (long i = 1; s == MBS_OK && i <= nsteps; i++) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        double tn = i == nsteps ? set->t_end : t0 + (double)i * h;
        if ((s = hd_step(st, ctx, t, tn - t, y)) != MBS_OK)
            break;
        take(st, y);
        t = tn;
        s = mbs_accept(ctx, t, y, st->Vd[0]);
    }
    *tp = t;
    return s;
}

static double rms_norm(const hd_state *st, const double *e, const double *ya, const double *yb,
                       const mbs_settings *set)
{
    size_t n = st->nq + st->nv;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double sc = set->atol + set->rtol * fmax(fabs(ya[i]), fabs(yb[i]));
        sum += (e[i] / sc) * (e[i] / sc);
    }
    return sqrt(sum / (double)n);
}

/* Initial step: Hairer's HINIT for order 5 (one extra stage evaluation). */
static int initial_step(hd_state *st, mbs_ctx *ctx, const mbs_settings *set, double t,
                        const double *y, double span, double *h)
{
    size_t nq = st->nq, nv = st->nv, n = nq + nv;
    double d0 = 0.0, d1 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double sc = set->atol + set->rtol * fabs(y[i]);
        double f = i < nq ? st->Qd[0][i] : st->Vd[0][i - nq];
        d0 += (y[i] / sc) * (y[i] / sc);
        d1 += (f / sc) * (f / sc);
    }
    d0 = sqrt(d0 / (double)n);
    d1 = sqrt(d1 / (double)n);
    double h0 = (d0 < 1e-10 || d1 < 1e-10) ? 1e-6 : 0.01 * d0 / d1;
    h0 = fmin(h0, span);
    for (size_t i = 0; i < nq; i++)
        st->Qs[i] = y[i] + h0 * st->Qd[0][i];
    for (size_t i = 0; i < nv; i++)
        st->Vs[i] = y[nq + i] + h0 * st->Vd[0][i];
    int s;
    if ((s = mbs_qdot(ctx, st->Qs, st->Vs, st->Qd[1])) != MBS_OK ||
        (s = mbs_index1_accel(st->ix, ctx, t + h0, st->Qs, st->Vs, st->Vd[1], NULL)) != MBS_OK)
        return s;
    double d2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double sc = set->atol + set->rtol * fabs(y[i]);
        double df = i < nq ? st->Qd[1][i] - st->Qd[0][i] : st->Vd[1][i - nq] - st->Vd[0][i - nq];
        d2 += (df / sc) * (df / sc);
    }
    d2 = sqrt(d2 / (double)n) / h0;
    double dm = fmax(d1, d2);
    double h1 = dm <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dm, 0.2);
    *h = fmin(fmin(100.0 * h0, h1), span);
    return MBS_OK;
}

static int integrate_adaptive(hd_state *st, mbs_ctx *ctx, const mbs_settings *set, double *tp,
                              double *y)
{
    double t = *tp, t_end = set->t_end, span = t_end - t;
    double hmin = 1e-14 * fabs(span), facold = 1e-4, h;
    const double safe = 0.9, beta = 0.04, expo1 = 0.2 - beta * 0.75, facc1 = 5.0, facc2 = 0.1;
    int s = first_stage(st, ctx, t, y, y + st->nq, NULL), reject = 0;
    if (s != MBS_OK)
        return s;
    if (set->h > 0.0)
        h = set->h;
    else if ((s = initial_step(st, ctx, set, t, y, span, &h)) != MBS_OK)
        return s;
    while (t < t_end) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        int last = t + 1.01 * h >= t_end;
        if (last)
            h = t_end - t;
        s = hd_step(st, ctx, t, h, y);
        if (s != MBS_OK) {
            /* A failed stage solve (e.g. singular KKT matrix): halve the step. */
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
            continue;
        }
        double err = rms_norm(st, st->yerr, y, st->y1, set);
        double fac11 = pow(err, expo1);
        double fac = fmax(facc2, fmin(facc1, fac11 / pow(facold, beta) / safe));
        double hnew = h / fac;
        if (err <= 1.0) {
            facold = fmax(err, 1e-4);
            t = last ? t_end : t + h;
            take(st, y);
            if ((s = mbs_accept(ctx, t, y, st->Vd[0])) != MBS_OK)
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
        if (t < t_end && h < hmin) {
            s = mbs_fail(ctx, MBS_STEP_UNDERFLOW, t, "step size %.3g below hmin %.3g", h, hmin);
            break;
        }
    }
    *tp = t;
    return s;
}

static int hd_integrate(void *p, mbs_ctx *ctx, const mbs_settings *set, double *tp, double *y)
{
    hd_state *st = p;
    int s = st->var->adaptive ? integrate_adaptive(st, ctx, set, tp, y)
                              : integrate_fixed(st, ctx, set, tp, y);
    mbs_index1_report(ctx, st->ix);
    return s;
}

static const mbs_method_ops hd_ops = {
    .alloc = hd_alloc,
    .integrate = hd_integrate,
    .free_state = hd_free,
};

static const mbs_param_def hd_params[] = {MBS_INDEX1_LINSOL_PARAM};
static const hd_variant hd_adaptive = {.adaptive = 1};
static const hd_variant hd_fixed = {.adaptive = 0};

#define CITE "Arnold 2016 [arnold2016dae], Remark 10, Eqs. (85a)-(85c); Dormand & Prince (1980); MDOP5"

const mbs_method_def mbs_method_index1_hedopri5 = {
    .name = "index1/hedopri5",
    .summary = "half-explicit Dormand-Prince 5(4) on the index-1 formulation (Remark 10), "
               "adaptive",
    .citation = CITE,
    .order = {5, 5, 5},
    .flags = MBS_M_ADAPTIVE | MBS_M_NEEDS_FULL_RANK,
    .params = hd_params,
    .n_params = sizeof hd_params / sizeof hd_params[0],
    .variant = &hd_adaptive,
    .ops = &hd_ops,
};

const mbs_method_def mbs_method_index1_hedopri5_fixed = {
    .name = "index1/hedopri5-fixed",
    .summary = "half-explicit Dormand-Prince 5 on the index-1 formulation (Remark 10), fixed "
               "step",
    .citation = CITE,
    .order = {5, 5, 5},
    .flags = MBS_M_FIXED_STEP | MBS_M_NEEDS_FULL_RANK,
    .params = hd_params,
    .n_params = sizeof hd_params / sizeof hd_params[0],
    .variant = &hd_fixed,
    .ops = &hd_ops,
};

/* The methods of this file, for methods/registry.def (MBS_METHODS). */
const mbs_method_def *const mbs_methods_hedopri5[] = {
    &mbs_method_index1_hedopri5,
    &mbs_method_index1_hedopri5_fixed,
    NULL};
