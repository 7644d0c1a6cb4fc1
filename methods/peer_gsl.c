/* GSL's ODE steppers not wrapped by methods/explicit.c, as peers on the index-1
 * formulation (seed 002, Eqs. (83)-(84); the KKT solve of methods/index1.h):
 *   index1/gsl-rkck    - Cash-Karp 4(5), explicit;
 *   index1/gsl-msadams - variable-order Adams (orders 1-12), predictor-corrector
 *                        with functional iteration;
 *   index1/gsl-msbdf   - variable-order BDF (orders 1-5), Newton with our
 *                        finite-difference Jacobian of the index-1 right-hand side;
 *   index1/gsl-bsimp   - Bader-Deuflhard semi-implicit extrapolation (same
 *                        finite-difference Jacobian).
 * GSL's own driver (gsl_odeiv2_driver, required by msadams/msbdf) with its
 * standard controller |err_i| <= atol + rtol |y_i| (rtol = atol = tol) is
 * stepped with gsl_odeiv2_evolve_apply, one accepted step per call, so every
 * accepted step is reported (mbs_accept) with the multipliers of an index-1
 * solve at the accepted point (one extra right-hand side per step, counted).
 * Counters: steps (accepted), rejected (GSL's failed_steps), f_evals and the
 * rest through the counting wrappers; GSL does not expose its Newton
 * iterations or factorisations, so those stay 0. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index1.h"

typedef struct peer_gsl_state {
    const gsl_odeiv2_step_type *T;
    mbs_index1 *w;
    mbs_ctx *ctx;          /* valid during integrate() */
    int status;            /* status of the last failed right-hand side */
    size_t nq, nv, nl, n;  /* n = nq + nv */
    double *f0, *f1, *yp, *vdot;
    gsl_odeiv2_system sys;
    gsl_odeiv2_driver *drv;
} peer_gsl_state;

/* y = (q, v) -> (H v, v').  A recoverable failure (singular KKT matrix) is
 * returned as GSL_EFAILED, which makes GSL retry with a smaller step; a fatal
 * one as GSL_EBADFUNC, which stops the integration. */
static int gsl_rhs(double t, const double y[], double dydt[], void *data)
{
    peer_gsl_state *st = data;
    int s = mbs_index1_rhs(st->w, st->ctx, t, y, dydt);
    if (s == MBS_OK)
        return GSL_SUCCESS;
    st->status = s;
    return s > 0 ? GSL_EFAILED : GSL_EBADFUNC;
}

/* Forward differences of the index-1 right-hand side (n + 2 evaluations):
 * dfdy (row-major n x n) and dfdt. */
static int gsl_jac(double t, const double y[], double *dfdy, double dfdt[], void *data)
{
    peer_gsl_state *st = data;
    size_t n = st->n;
    int r = gsl_rhs(t, y, st->f0, st);
    if (r != GSL_SUCCESS)
        return r;
    memcpy(st->yp, y, n * sizeof(double));
    for (size_t j = 0; j < n; j++) {
        double d = 1.5e-8 * fmax(1.0, fabs(y[j]));
        st->yp[j] = y[j] + d;
        if ((r = gsl_rhs(t, st->yp, st->f1, st)) != GSL_SUCCESS)
            return r;
        st->yp[j] = y[j];
        for (size_t i = 0; i < n; i++)
            dfdy[i * n + j] = (st->f1[i] - st->f0[i]) / d;
    }
    double dt = 1.5e-8 * fmax(1.0, fabs(t));
    if ((r = gsl_rhs(t + dt, y, st->f1, st)) != GSL_SUCCESS)
        return r;
    for (size_t i = 0; i < n; i++)
        dfdt[i] = (st->f1[i] - st->f0[i]) / dt;
    return GSL_SUCCESS;
}

static void peer_gsl_free(void *p)
{
    peer_gsl_state *st = p;
    if (!st)
        return;
    mbs_index1_free(st->w);
    free(st->f0);
    free(st->f1);
    free(st->yp);
    free(st->vdot);
    if (st->drv)
        gsl_odeiv2_driver_free(st->drv);
    free(st);
}

static int peer_gsl_alloc(const gsl_odeiv2_step_type *T, const mbs_params *p, mbs_ctx *ctx,
                          void **out)
{
    *out = NULL;
    peer_gsl_state *st = calloc(1, sizeof *st);
    if (!st)
        return MBS_NO_MEMORY;
    const mbs_problem *pb = ctx->pb;
    st->T = T;
    st->nq = pb->nq;
    st->nv = pb->nv;
    st->nl = pb->nl;
    st->n = pb->nq + pb->nv;
    int s = mbs_index1_alloc(&st->w, ctx, (int)p->val[0]);
    if (s != MBS_OK) {
        peer_gsl_free(st);
        return s;
    }
    st->f0 = malloc(st->n * sizeof(double));
    st->f1 = malloc(st->n * sizeof(double));
    st->yp = malloc(st->n * sizeof(double));
    st->vdot = malloc(st->n * sizeof(double));
    st->sys = (gsl_odeiv2_system){.function = gsl_rhs, .jacobian = gsl_jac,
                                  .dimension = st->n, .params = st};
    /* Tolerances are reset per run (gsl_odeiv2_control_init in integrate). */
    if (st->f0 && st->f1 && st->yp && st->vdot)
        st->drv = gsl_odeiv2_driver_alloc_y_new(&st->sys, st->T, 1e-3, 1e-6, 1e-6);
    if (!st->drv) {
        peer_gsl_free(st);
        return MBS_NO_MEMORY;
    }
    *out = st;
    return MBS_OK;
}

static int peer_gsl_integrate(void *p, mbs_ctx *ctx, const mbs_settings *set, double *tp,
                              double *y)
{
    peer_gsl_state *st = p;
    gsl_odeiv2_driver *d = st->drv;
    size_t n = st->n;
    double *lambda = y + n, t = *tp, t_end = set->t_end, span = t_end - t;
    st->ctx = ctx;
    st->status = MBS_OK;
    double h = set->h > 0.0 ? set->h : 1e-3 * span * pow(set->rtol, 0.2);
    int s = MBS_OK;
    if (gsl_odeiv2_control_init(d->c, set->atol, set->rtol, 1.0, 0.0) != GSL_SUCCESS ||
        gsl_odeiv2_driver_reset_hstart(d, h) != GSL_SUCCESS) {
        st->ctx = NULL;
        return mbs_fail(ctx, MBS_LIBRARY_FAILURE, t, "GSL driver reset failed");
    }
    unsigned long failed0 = d->e->failed_steps;
    while (t < t_end) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        int r = gsl_odeiv2_evolve_apply(d->e, d->c, d->s, &st->sys, &t, t_end, &h, y);
        if (r != GSL_SUCCESS) {
            s = st->status != MBS_OK ? st->status : MBS_STEP_UNDERFLOW;
            if (s > 0)
                s = MBS_STEP_UNDERFLOW;
            mbs_fail(ctx, s, t, "GSL %s: %s%s%s", st->T->name, gsl_strerror(r),
                     ctx->reason[0] ? ": " : "", ctx->reason);
            break;
        }
        /* accelerations and multipliers at the accepted point */
        if ((s = mbs_index1_accel(st->w, ctx, t, y, y + st->nq, st->vdot, lambda)) != MBS_OK ||
            (s = mbs_accept(ctx, t, y, st->vdot)) != MBS_OK)
            break;
    }
    ctx->cnt.rejected += (long)(d->e->failed_steps - failed0);
    *tp = t;
    st->ctx = NULL;
    return s;
}

static const mbs_param_def peer_gsl_params[] = {MBS_INDEX1_LINSOL_PARAM};

#define CITE "seed 002, Eqs. (83)-(84); GSL 2.7 gsl_odeiv2_step_"
/* gsl_odeiv2_step_* are `const gsl_odeiv2_step_type *` variables, not constant
 * expressions, so each method has a small alloc wrapper that passes its type. */
#define PEER_GSL(sym, nm, summ, stepper, p, extra)                                         \
    static int sym##_alloc(const mbs_method_def *m, const mbs_params *prm, mbs_ctx *ctx,   \
                           void **out)                                                     \
    {                                                                                      \
        (void)m;                                                                           \
        return peer_gsl_alloc(gsl_odeiv2_step_##stepper, prm, ctx, out);                   \
    }                                                                                      \
    static const mbs_method_ops sym##_ops = {                                              \
        .alloc = sym##_alloc,                                                              \
        .integrate = peer_gsl_integrate,                                                   \
        .free_state = peer_gsl_free,                                                       \
    };                                                                                     \
    const mbs_method_def sym = {                                                           \
        .name = nm,                                                                        \
        .summary = summ,                                                                   \
        .citation = CITE #stepper " with gsl_odeiv2_driver/evolve",                        \
        .order = {p, p, p},                                                                \
        .flags = MBS_M_ADAPTIVE | MBS_M_NEEDS_FULL_RANK | (extra),                         \
        .params = peer_gsl_params,                                                         \
        .n_params = sizeof peer_gsl_params / sizeof peer_gsl_params[0],                    \
        .variant = NULL,                                                                   \
        .ops = &sym##_ops,                                                                 \
    };

PEER_GSL(mbs_method_index1_gsl_rk8pd, "index1/gsl-rk8pd",
         "peer: GSL Prince-Dormand 8(9) with GSL's own driver on the index-1 formulation", rk8pd,
         8, 0)
PEER_GSL(mbs_method_index1_gsl_rkck, "index1/gsl-rkck",
         "peer: GSL Cash-Karp 4(5) (gsl_odeiv2 driver) on the index-1 formulation", rkck, 4, 0)
PEER_GSL(mbs_method_index1_gsl_msadams, "index1/gsl-msadams",
         "peer: GSL variable-order Adams 1-12 (gsl_odeiv2 driver) on the index-1 formulation",
         msadams, 0, 0)
PEER_GSL(mbs_method_index1_gsl_msbdf, "index1/gsl-msbdf",
         "peer: GSL variable-order BDF 1-5, FD Jacobian, on the index-1 formulation", msbdf, 0,
         MBS_M_IMPLICIT)
PEER_GSL(mbs_method_index1_gsl_bsimp, "index1/gsl-bsimp",
         "peer: GSL Bader-Deuflhard extrapolation, FD Jacobian, on the index-1 formulation",
         bsimp, 0, MBS_M_IMPLICIT)
