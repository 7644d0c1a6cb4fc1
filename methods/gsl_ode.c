/* GSL's embedded explicit Runge-Kutta steppers (rkf45, rk8pd) on the index-1
 * formulation (seed 002, Eqs. (83)-(84)), with GSL's standard step-size control
 * (gsl_odeiv2_control_y_new: |err_i| <= atol + rtol |y_i| over q and v; the
 * multipliers are not integrated and so not error-controlled).
 *
 * The driver loop is ours rather than gsl_odeiv2_evolve_apply so that the
 * derivative at the start of each step, which is computed anyway, also yields
 * the multipliers at the accepted point (no extra index-1 solve). */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index1.h"

enum { P_LINSOL, P_HMIN };
static const mbs_param_def params[] = {
    [P_LINSOL] = MBS_INDEX1_LINSOL_PARAM,
    [P_HMIN] = {"hmin", 1e-14, 0.0, 1.0, "smallest step relative to |t_end - t0|", NULL, 0},
};

typedef struct gsl_ode_state {
    mbs_index1 *ix;
    mbs_ctx *ctx;        /* valid during integrate() */
    int status;          /* status of the last right-hand side */
    size_t n;            /* n_q + n_v */
    double hmin_rel;
    gsl_odeiv2_step *step;
    gsl_odeiv2_control *control;
    gsl_odeiv2_system sys;
    double *y0, *yerr, *dydt;
} gsl_ode_state;

static int rhs(double t, const double y[], double dydt[], void *data)
{
    gsl_ode_state *st = data;
    st->status = mbs_index1_rhs(st->ix, st->ctx, t, y, dydt);
    return st->status == MBS_OK ? GSL_SUCCESS : GSL_EBADFUNC;
}

static void gsl_ode_free(void *p)
{
    gsl_ode_state *st = p;
    if (!st)
        return;
    mbs_index1_free(st->ix);
    if (st->step)
        gsl_odeiv2_step_free(st->step);
    if (st->control)
        gsl_odeiv2_control_free(st->control);
    free(st->y0);
    free(st->yerr);
    free(st->dydt);
    free(st);
}

static int gsl_ode_alloc(const mbs_method_def *m, const mbs_params *p, mbs_ctx *ctx, void **out)
{
    *out = NULL;
    gsl_ode_state *st = calloc(1, sizeof *st);
    if (!st)
        return MBS_NO_MEMORY;
    int s = mbs_index1_alloc(&st->ix, ctx, (int)p->val[P_LINSOL]);
    if (s != MBS_OK) {
        gsl_ode_free(st);
        return s;
    }
    st->n = ctx->pb->nq + ctx->pb->nv;
    st->hmin_rel = p->val[P_HMIN];
    /* variant: address of GSL's stepper-type variable (a constant expression). */
    const gsl_odeiv2_step_type *const *type = m->variant;
    st->step = gsl_odeiv2_step_alloc(*type, st->n);
    st->control = gsl_odeiv2_control_y_new(1e-6, 1e-6);
    st->y0 = malloc(st->n * sizeof(double));
    st->yerr = malloc(st->n * sizeof(double));
    st->dydt = malloc(st->n * sizeof(double));
    if (!st->step || !st->control || !st->y0 || !st->yerr || !st->dydt) {
        gsl_ode_free(st);
        return MBS_NO_MEMORY;
    }
    st->sys = (gsl_odeiv2_system){.function = rhs, .jacobian = NULL, .dimension = st->n,
                                  .params = st};
    *out = st;
    return MBS_OK;
}

static int gsl_ode_integrate(void *p, mbs_ctx *ctx, const mbs_settings *set, double *tp,
                             double *y)
{
    gsl_ode_state *st = p;
    size_t n = st->n, nl = st->ix->nl, nq = st->ix->nq;
    double *lambda = y + n;
    double t = *tp, t_end = set->t_end, span = t_end - t;
    double hmin = st->hmin_rel * fabs(span);
    st->ctx = ctx;
    gsl_odeiv2_step_reset(st->step);
    gsl_odeiv2_control_init(st->control, set->atol, set->rtol, 1.0, 0.0);
    double h = set->h > 0.0 ? set->h : 1e-3 * span * pow(set->rtol, 0.2);
    int s = mbs_index1_rhs(st->ix, ctx, t, y, st->dydt);
    if (s != MBS_OK)
        return s;
    memcpy(lambda, st->ix->lambda, nl * sizeof(double));
    while (t < t_end) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        int last = t + h >= t_end;
        if (last)
            h = t_end - t;
        memcpy(st->y0, y, n * sizeof(double));
        int r = gsl_odeiv2_step_apply(st->step, t, h, y, st->yerr, st->dydt, NULL, &st->sys);
        if (r != GSL_SUCCESS) {
            /* A failed stage (e.g. singular KKT matrix): retry with half the step. */
            memcpy(y, st->y0, n * sizeof(double));
            gsl_odeiv2_step_reset(st->step);
            mbs_count_rejected(ctx);
            h *= 0.5;
            if (h < hmin) {
                s = st->status != MBS_OK ? st->status : MBS_STEP_UNDERFLOW;
                mbs_fail(ctx, s, t, "step size %.3g below hmin after a failed stage: %s", h,
                         ctx->reason[0] ? ctx->reason : "stepper failure");
                break;
            }
            ctx->reason[0] = '\0';
            continue;
        }
        double h_used = h;
        r = gsl_odeiv2_control_hadjust(st->control, st->step, y, st->yerr, st->dydt, &h);
        if (r == GSL_ODEIV_HADJ_DEC) {
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
        if ((s = mbs_index1_rhs(st->ix, ctx, t, y, st->dydt)) != MBS_OK)
            break;
        memcpy(lambda, st->ix->lambda, nl * sizeof(double));
        if ((s = mbs_accept(ctx, t, y, st->dydt + nq)) != MBS_OK)
            break;
    }
    *tp = t;
    st->ctx = NULL;
    return s;
}

static const mbs_method_ops gsl_ode_ops = {
    .alloc = gsl_ode_alloc,
    .integrate = gsl_ode_integrate,
    .free_state = gsl_ode_free,
};

#define GSL_ODE_METHOD(sym, nm, summ, cite, p, stepper)                                \
    const mbs_method_def sym = {                                                        \
        .name = nm,                                                                     \
        .summary = summ,                                                                \
        .citation = cite,                                                               \
        .order = {p, p, p},                                                             \
        .flags = MBS_M_ADAPTIVE | MBS_M_NEEDS_FULL_RANK,                                \
        .params = params,                                                               \
        .n_params = sizeof params / sizeof params[0],                                   \
        .variant = &stepper,                                                            \
        .ops = &gsl_ode_ops,                                                            \
    };

GSL_ODE_METHOD(mbs_method_index1_rkf45, "index1/rkf45",
               "GSL Runge-Kutta-Fehlberg 4(5), adaptive, on the index-1 formulation",
               "seed 002, Eqs. (83)-(84); GSL gsl_odeiv2_step_rkf45", 4,
               gsl_odeiv2_step_rkf45)
GSL_ODE_METHOD(mbs_method_index1_rk8pd, "index1/rk8pd",
               "GSL Prince-Dormand 8(9), adaptive, on the index-1 formulation",
               "seed 002, Eqs. (83)-(84); GSL gsl_odeiv2_step_rk8pd", 8,
               gsl_odeiv2_step_rk8pd)
