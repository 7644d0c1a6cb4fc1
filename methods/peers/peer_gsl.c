/* GSL's ODE steppers not wrapped by methods/integrators/explicit/explicit.c, as peers on the index-1
 * formulation ([arnold2016dae], Eqs. (83)-(84); the KKT solve of methods/formulations/index1.h):
 *   index1/gsl-rkck    - Cash-Karp 4(5), explicit;
 *   index1/gsl-msadams - variable-order Adams (orders 1-12), predictor-corrector
 *                        with functional iteration;
 *   index1/gsl-msbdf   - variable-order BDF (orders 1-5), Newton with our
 *                        finite-difference Jacobian of the index-1 right-hand side;
 *   index1/gsl-bsimp   - Bader-Deuflhard semi-implicit extrapolation (same
 *                        finite-difference Jacobian).
 * GSL's step, control and evolve objects linked by a gsl_odeiv2_driver (which
 * msadams/msbdf require) with GSL's standard controller |err_i| <= atol +
 * rtol |y_i| (rtol = atol = tol) are stepped with gsl_odeiv2_evolve_apply,
 * one accepted step per call, so every
 * accepted step is reported (mbs_accept) with the multipliers of an index-1
 * solve at the accepted point (one extra right-hand side per step, counted).
 * Counters: steps (accepted), rejected (GSL's failed_steps), f_evals and the
 * rest through the counting wrappers; GSL does not expose its Newton
 * iterations or factorisations, so those stay 0.
 * The controller is GSL's standard one (ode-initval2/control.c,
 * std_control_hadjust/std_control_errlevel with a_y = 1, a_dydt = 0) written
 * out as a gsl_odeiv2_control_type, and the driver struct is filled in here:
 * gsl_odeiv2_control_standard_new and gsl_odeiv2_driver_alloc_* crash when an
 * allocation fails (GSL 2.7; see methods/integrators/explicit/explicit.c).  GSL 2.7's msadams and
 * msbdf allocators leak (40 bytes) and bsimp's crashes when one of their own
 * allocations fails: those three carry MBS_M_EXTERNAL_ALLOC (method.h). */
#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../formulations/index1.h"

typedef struct peer_gsl_state {
    const gsl_odeiv2_step_type *T;
    mbs_index1 *w;
    mbs_ctx *ctx;          /* valid during integrate() */
    int status;            /* status of the last failed right-hand side */
    size_t nq, nv, nl, n;  /* n = nq + nv */
    double *f0, *f1, *yp, *vdot;
    gsl_odeiv2_system sys;
    gsl_odeiv2_driver drv; /* links step, control and evolve (msadams/msbdf need it) */
} peer_gsl_state;

/* GSL's standard step-size control, a_y = 1, a_dydt = 0. */
typedef struct std_control {
    double eps_abs, eps_rel;
} std_control;

static void *std_alloc(void)
{
    return calloc(1, sizeof(std_control));
}

static int std_init(void *vs, double eps_abs, double eps_rel, double a_y, double a_dydt)
{
    (void)a_y;
    (void)a_dydt;
    std_control *c = vs;
    if (eps_abs < 0.0 || eps_rel < 0.0)
        return GSL_EINVAL;
    c->eps_abs = eps_abs;
    c->eps_rel = eps_rel;
    return GSL_SUCCESS;
}

static int std_hadjust(void *vs, size_t dim, unsigned int ord, const double y[],
                       const double yerr[], const double yp[], double *h)
{
    (void)yp;
    const std_control *c = vs;
    const double S = 0.9, h_old = *h;
    double rmax = DBL_MIN;
    for (size_t i = 0; i < dim; i++)
        rmax = fmax(rmax, fabs(yerr[i]) / (c->eps_rel * fabs(y[i]) + c->eps_abs));
    if (rmax > 1.1) {
        /* decrease by no more than a factor of 5, but a fraction S of the estimate */
        *h = h_old * fmax(S / pow(rmax, 1.0 / ord), 0.2);
        return GSL_ODEIV_HADJ_DEC;
    }
    if (rmax < 0.5) {
        *h = h_old * fmin(fmax(S / pow(rmax, 1.0 / (ord + 1.0)), 1.0), 5.0);
        return GSL_ODEIV_HADJ_INC;
    }
    return GSL_ODEIV_HADJ_NIL;
}

static int std_errlevel(void *vs, const double y, const double dydt, const double h,
                        const size_t ind, double *errlev)
{
    (void)dydt;
    (void)h;
    (void)ind;
    const std_control *c = vs;
    *errlev = c->eps_rel * fabs(y) + c->eps_abs;
    return *errlev > 0.0 ? GSL_SUCCESS : GSL_ESANITY;
}

static int std_set_driver(void *vs, const gsl_odeiv2_driver *d)
{
    (void)vs;
    (void)d;
    return GSL_SUCCESS;
}

static void std_free(void *vs)
{
    free(vs);
}

static const gsl_odeiv2_control_type std_control_type = {
    .name = "standard",
    .alloc = std_alloc,
    .init = std_init,
    .hadjust = std_hadjust,
    .errlevel = std_errlevel,
    .set_driver = std_set_driver,
    .free = std_free,
};

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
    if (st->drv.s)
        gsl_odeiv2_step_free(st->drv.s);
    if (st->drv.c)
        gsl_odeiv2_control_free(st->drv.c);
    if (st->drv.e)
        gsl_odeiv2_evolve_free(st->drv.e);
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
    /* Tolerances are set per run (gsl_odeiv2_control_init in integrate). */
    int ok = st->f0 && st->f1 && st->yp && st->vdot;
    gsl_odeiv2_driver *d = &st->drv;
    d->sys = &st->sys;
    d->hmax = DBL_MAX;
    ok = ok && (d->s = gsl_odeiv2_step_alloc(T, st->n)) != NULL;
    ok = ok && (d->c = gsl_odeiv2_control_alloc(&std_control_type)) != NULL;
    ok = ok && (d->e = gsl_odeiv2_evolve_alloc(st->n)) != NULL;
    if (!ok || gsl_odeiv2_step_set_driver(d->s, d) != GSL_SUCCESS ||
        gsl_odeiv2_control_set_driver(d->c, d) != GSL_SUCCESS ||
        gsl_odeiv2_evolve_set_driver(d->e, d) != GSL_SUCCESS) {
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
    gsl_odeiv2_driver *d = &st->drv;
    size_t n = st->n;
    double *lambda = y + n, t = *tp, t_end = set->t_end, span = t_end - t;
    st->ctx = ctx;
    st->status = MBS_OK;
    double h = set->h > 0.0 ? set->h : 1e-3 * span * pow(set->rtol, 0.2);
    int s = MBS_OK;
    if (gsl_odeiv2_control_init(d->c, set->atol, set->rtol, 1.0, 0.0) != GSL_SUCCESS ||
        gsl_odeiv2_evolve_reset(d->e) != GSL_SUCCESS || gsl_odeiv2_step_reset(d->s) != GSL_SUCCESS) {
        st->ctx = NULL;
        mbs_index1_report(ctx, st->w);
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
    mbs_index1_report(ctx, st->w);
    *tp = t;
    st->ctx = NULL;
    return s;
}

static const mbs_param_def peer_gsl_params[] = {MBS_INDEX1_LINSOL_PARAM};

#define CITE "Arnold 2016 [arnold2016dae], Eqs. (83)-(84); GSL 2.7 gsl_odeiv2_step_"
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
         msadams, 0, MBS_M_EXTERNAL_ALLOC)
PEER_GSL(mbs_method_index1_gsl_msbdf, "index1/gsl-msbdf",
         "peer: GSL variable-order BDF 1-5, FD Jacobian, on the index-1 formulation", msbdf, 0,
         MBS_M_IMPLICIT | MBS_M_EXTERNAL_ALLOC)
PEER_GSL(mbs_method_index1_gsl_bsimp, "index1/gsl-bsimp",
         "peer: GSL Bader-Deuflhard extrapolation, FD Jacobian, on the index-1 formulation",
         bsimp, 0, MBS_M_IMPLICIT | MBS_M_EXTERNAL_ALLOC)

/* The methods of this file, for methods/registry.def (MBS_METHODS). */
const mbs_method_def *const mbs_methods_peer_gsl[] = {
    &mbs_method_index1_gsl_rk8pd,
    &mbs_method_index1_gsl_rkck,
    &mbs_method_index1_gsl_msadams,
    &mbs_method_index1_gsl_msbdf,
    &mbs_method_index1_gsl_bsimp,
    NULL};
