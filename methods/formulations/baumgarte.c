/* Baumgarte-stabilised index-1 formulation ([pennestri_coordinate_reduction], Section 4, Eqs. (9)-(10);
 * Baumgarte 1972): the acceleration constraint B v' = gamma of the index-1 KKT
 * system ([arnold2016dae] Eqs. (83)-(84)) is replaced by
 *     B v' = gamma - 2 alpha Phi' - beta^2 Phi,   Phi = g(t, q), Phi' = B v + g_t,
 * so that the constraint residual obeys Phi'' + 2 alpha Phi' + beta^2 Phi = 0
 * instead of Phi'' = 0 (no quadratic drift, [arnold2016dae] Fig. 14).  The exact
 * solution of the original problem is a solution of the stabilised ODE, so the
 * integrator keeps its order.  [pennestri_coordinate_reduction] notes that alpha = beta is the usual
 * choice (critical damping); the defaults are alpha = beta = 10 [1/s].  The
 * solve reuses mbs_index1 through its alpha/beta fields. */
#include <math.h>
#include <stdlib.h>

#include "../framework/ode_axis.h"
#include "index1.h"

enum { BG_ALPHA, BG_BETA, BG_LINSOL };
static const mbs_param_def baumgarte_params[] = {
    [BG_ALPHA] = {"alpha", 10.0, 0.0, 1e6,
                  "Baumgarte damping gain alpha [1/s] >= 0 (term -2 alpha Phi', Pennestri & Valentini [pennestri_coordinate_reduction] Eq. (9))",
                  NULL, 0},
    [BG_BETA] = {"beta", 10.0, 0.0, 1e6,
                 "Baumgarte stiffness gain beta [1/s] >= 0 (term -beta^2 Phi, Pennestri & Valentini [pennestri_coordinate_reduction] Eq. (9))",
                 NULL, 0},
    [BG_LINSOL] = MBS_INDEX1_LINSOL_PARAM,
};

static int bg_alloc(void **ws, mbs_ctx *ctx, const mbs_params *p)
{
    double alpha = p->val[BG_ALPHA], beta = p->val[BG_BETA];
    *ws = NULL;
    if (!(isfinite(alpha) && alpha >= 0.0) || !(isfinite(beta) && beta >= 0.0))
        return mbs_fail(ctx, MBS_BAD_INPUT, ctx->pb->t0,
                        "Baumgarte gains must be finite and >= 0 (alpha=%g, beta=%g)", alpha,
                        beta);
    mbs_index1 *w = NULL;
    int s = mbs_index1_alloc(&w, ctx, (int)p->val[BG_LINSOL]);
    if (s != MBS_OK)
        return s;
    w->alpha = alpha;
    w->beta = beta;
    *ws = w;
    return MBS_OK;
}

static int bg_eval(void *ws, mbs_ctx *ctx, double t, const double *q, const double *v,
                   double *vdot, double *lambda)
{
    return mbs_index1_accel(ws, ctx, t, q, v, vdot, lambda);
}

static void bg_finish(void *ws, mbs_ctx *ctx)
{
    mbs_index1_report(ctx, ws);
}

static void bg_free(void *ws)
{
    mbs_index1_free(ws);
}

const mbs_accel_def mbs_accel_baumgarte = {
    .name = "baumgarte",
    .alloc = bg_alloc,
    .eval = bg_eval,
    .finish = bg_finish,
    .free_ws = bg_free,
};

#define CITE "Pennestri & Valentini [pennestri_coordinate_reduction], Eqs. (9)-(10); Arnold 2016 [arnold2016dae], Eqs. (83)-(84)"
const mbs_ode_formulation mbs_ode_formulation_baumgarte = {
    .name = "baumgarte",
    .accel = &mbs_accel_baumgarte,
    .summary = "on the Baumgarte-stabilised index-1 formulation",
    .citation = CITE,
    .flags = MBS_M_NEEDS_FULL_RANK,
    .lambda = 1,
    .params = baumgarte_params,
    .n_params = sizeof baumgarte_params / sizeof baumgarte_params[0],
};
