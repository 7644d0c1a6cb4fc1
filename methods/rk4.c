/* Classical Runge-Kutta method of order 4, fixed step, on the index-1
 * formulation (seed 002, Eqs. (83)-(84)).  The multipliers at t_n come from the
 * index-1 solve at (t_n, q_n, v_n), which is also the first stage of the next
 * step (so each step costs four index-1 solves). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index1.h"

enum { P_LINSOL };
static const mbs_param_def params[] = {[P_LINSOL] = MBS_INDEX1_LINSOL_PARAM};

typedef struct rk4_state {
    mbs_index1 *ix;
    size_t n;            /* n_q + n_v */
    double *k1, *k2, *k3, *k4, *tmp;
} rk4_state;

static void rk4_free(void *p)
{
    rk4_state *st = p;
    if (!st)
        return;
    mbs_index1_free(st->ix);
    free(st->k1);
    free(st->k2);
    free(st->k3);
    free(st->k4);
    free(st->tmp);
    free(st);
}

static int rk4_alloc(const mbs_method_def *m, const mbs_params *p, mbs_ctx *ctx, void **out)
{
    (void)m;
    *out = NULL;
    rk4_state *st = calloc(1, sizeof *st);
    if (!st)
        return MBS_NO_MEMORY;
    int s = mbs_index1_alloc(&st->ix, ctx, (int)p->val[P_LINSOL]);
    if (s != MBS_OK) {
        rk4_free(st);
        return s;
    }
    st->n = ctx->pb->nq + ctx->pb->nv;
    st->k1 = malloc(st->n * sizeof(double));
    st->k2 = malloc(st->n * sizeof(double));
    st->k3 = malloc(st->n * sizeof(double));
    st->k4 = malloc(st->n * sizeof(double));
    st->tmp = malloc(st->n * sizeof(double));
    if (!st->k1 || !st->k2 || !st->k3 || !st->k4 || !st->tmp) {
        rk4_free(st);
        return MBS_NO_MEMORY;
    }
    *out = st;
    return MBS_OK;
}

static int rk4_integrate(void *p, mbs_ctx *ctx, const mbs_settings *set, double *tp, double *y)
{
    rk4_state *st = p;
    mbs_index1 *ix = st->ix;
    size_t n = st->n, nl = ix->nl;
    double *lambda = y + n;
    double t0 = *tp, h = set->h, span = set->t_end - t0;
    /* Steps of size h; a last, shorter step lands exactly on t_end. */
    long nsteps = (long)ceil(span / h * (1.0 - 1e-12));
    int s = mbs_index1_rhs(ix, ctx, t0, y, st->k1);
    if (s != MBS_OK)
        return s;
    memcpy(lambda, ix->lambda, nl * sizeof(double));
    double t = t0;
    for (long i = 1; i <= nsteps; i++) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        double tn = i == nsteps ? set->t_end : t0 + (double)i * h;
        double hs = tn - t;
        for (size_t j = 0; j < n; j++)
            st->tmp[j] = y[j] + 0.5 * hs * st->k1[j];
        if ((s = mbs_index1_rhs(ix, ctx, t + 0.5 * hs, st->tmp, st->k2)) != MBS_OK)
            break;
        for (size_t j = 0; j < n; j++)
            st->tmp[j] = y[j] + 0.5 * hs * st->k2[j];
        if ((s = mbs_index1_rhs(ix, ctx, t + 0.5 * hs, st->tmp, st->k3)) != MBS_OK)
            break;
        for (size_t j = 0; j < n; j++)
            st->tmp[j] = y[j] + hs * st->k3[j];
        if ((s = mbs_index1_rhs(ix, ctx, tn, st->tmp, st->k4)) != MBS_OK)
            break;
        for (size_t j = 0; j < n; j++)
            y[j] += hs / 6.0 * (st->k1[j] + 2.0 * (st->k2[j] + st->k3[j]) + st->k4[j]);
        t = tn;
        /* First stage of the next step: accelerations and multipliers at t_n. */
        if ((s = mbs_index1_rhs(ix, ctx, t, y, st->k1)) != MBS_OK)
            break;
        memcpy(lambda, ix->lambda, nl * sizeof(double));
        if ((s = mbs_accept(ctx, t, y, st->k1 + ix->nq)) != MBS_OK)
            break;
    }
    *tp = t;
    return s;
}

static const mbs_method_ops rk4_ops = {
    .alloc = rk4_alloc,
    .integrate = rk4_integrate,
    .free_state = rk4_free,
};

const mbs_method_def mbs_method_index1_rk4 = {
    .name = "index1/rk4",
    .summary = "classical Runge-Kutta 4, fixed step, on the index-1 formulation",
    .citation = "seed 002, Eqs. (83)-(84); Kutta (1901)",
    .order = {4, 4, 4},
    .flags = MBS_M_FIXED_STEP | MBS_M_NEEDS_FULL_RANK,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .ops = &rk4_ops,
};
