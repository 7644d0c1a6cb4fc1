/* Direct run with separate rtol and atol (see tolrun.h). */
#include "tolrun.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "../methods/integrators/explicit/explicit.h"

typedef struct tol_observer {
    const mbs_problem *pb;
    double *g;
    double res_max;
} tol_observer;

static int tol_observe(void *data, double t, const double *q, const double *v,
                       const double *vdot, const double *lambda)
{
    tol_observer *o = data;
    (void)v, (void)vdot, (void)lambda;
    if (o->pb->nl == 0)
        return 0;
    if (o->pb->def->constraint(o->pb, t, q, o->g) != MBS_OK)
        return 0;
    for (size_t i = 0; i < o->pb->nl; i++)
        o->res_max = fmax(o->res_max, fabs(o->g[i]));
    return 0;
}

int mbs_tolrun_run(const char *problem, const char *method, double rtol, double atol,
                   double t_end, int repeat, mbs_tolrun *out)
{
    memset(out, 0, sizeof *out);
    out->err_q = out->err_v = out->cpu_min = NAN;
    out->status = MBS_BAD_INPUT;
    mbs_problem pb;
    const mbs_method_def *m;
    mbs_params mp;
    if (mbs_problem_open(&pb, problem, out->reason, sizeof out->reason) != MBS_OK)
        return MBS_BAD_INPUT;
    if (mbs_method_parse(method, &m, &mp, out->reason, sizeof out->reason) != MBS_OK ||
        !(rtol > 0.0 && atol > 0.0) || repeat < 0) {
        if (!out->reason[0])
            snprintf(out->reason, sizeof out->reason, "bad tolerances or repeat count");
        mbs_problem_close(&pb);
        return MBS_BAD_INPUT;
    }
    if (m->flags & MBS_M_FIXED_STEP) {
        snprintf(out->reason, sizeof out->reason,
                 "%s is a fixed-step method; tolrun drives adaptive methods", m->name);
        mbs_problem_close(&pb);
        return MBS_BAD_INPUT;
    }
    if (!(t_end > pb.t0) && !isnan(t_end)) {
        snprintf(out->reason, sizeof out->reason, "t_end %g must exceed t0 %g", t_end, pb.t0);
        mbs_problem_close(&pb);
        return MBS_BAD_INPUT;
    }
    if (!isnan(t_end))
        pb.t_end = t_end;
    out->nq = pb.nq;
    out->nv = pb.nv;
    out->nl = pb.nl;
    size_t ny = mbs_ny(&pb), nq = pb.nq, nv = pb.nv;
    double *y0 = calloc(ny, sizeof(double)), *y = calloc(ny, sizeof(double));
    double *ex = calloc(nq + nv, sizeof(double));
    tol_observer obs = {.pb = &pb, .g = calloc(pb.nl ? pb.nl : 1, sizeof(double))};
    mbs_ctx ctx;
    void *state = NULL;
    int ctx_ok = 0, s, have_lambda = 0;
    if (!y0 || !y || !ex || !obs.g) {
        s = MBS_NO_MEMORY;
        goto done;
    }
    if ((s = mbs_ctx_init(&ctx, &pb)) != MBS_OK)
        goto done;
    ctx_ok = 1;
    mbs_ctx_reset(&ctx);
    if ((s = pb.def->initial(&pb, y0, y0 + nq, y0 + nq + nv, &have_lambda)) != MBS_OK)
        goto done;
    if (!have_lambda)
        for (size_t i = 0; i < pb.nl; i++)
            y0[nq + nv + i] = NAN;
    if ((m->flags & MBS_M_NEEDS_FULL_RANK) && (pb.flags & MBS_PB_REDUNDANT)) {
        s = mbs_fail(&ctx, MBS_UNSUPPORTED, pb.t0, "%s needs full-rank constraints", m->name);
        goto done;
    }
    if ((s = m->ops->alloc(m, &mp, &ctx, &state)) != MBS_OK)
        goto done;
    mbs_settings set = {.h = 0.0, .rtol = rtol, .atol = atol, .t_end = pb.t_end};
    /* measuring run */
    memcpy(y, y0, ny * sizeof(double));
    double t = pb.t0;
    tol_observe(&obs, t, y, y + nq, NULL, NULL);
    ctx.observer = tol_observe;
    ctx.observer_data = &obs;
    s = m->ops->integrate(state, &ctx, &set, &t, y);
    ctx.observer = NULL;
    ctx.observer_data = NULL;
    out->t_final = t;
    out->cnt = ctx.cnt;
    out->res_pos_max = obs.res_max;
    memcpy(out->final, y, (ny < 32 ? ny : 32) * sizeof(double));
    const mbs_explicit_variant *ev = m->ops == &mbs_explicit_ops ? m->variant : NULL;
    out->have_diag =
        ev && mbs_ns_diag_get(ev->accel, mbs_explicit_accel_ws(state), &out->diag) == MBS_OK;
    if (s != MBS_OK)
        goto done;
    if (pb.def->exact && pb.def->exact(&pb, t, ex, ex + nq, NULL) == MBS_OK) {
        out->err_q = out->err_v = 0.0;
        for (size_t i = 0; i < nq; i++)
            out->err_q = fmax(out->err_q, fabs(y[i] - ex[i]));
        for (size_t i = 0; i < nv; i++)
            out->err_v = fmax(out->err_v, fabs(y[nq + i] - ex[nq + i]));
    }
    /* timing runs: no observer, the same start each time */
    for (int r = 0; r < repeat; r++) {
        memcpy(y, y0, ny * sizeof(double));
        t = pb.t0;
        mbs_ctx_reset(&ctx);
        double c0 = mbs_cpu_seconds();
        int st = m->ops->integrate(state, &ctx, &set, &t, y);
        double c1 = mbs_cpu_seconds();
        if (st != MBS_OK) {
            s = st;
            break;
        }
        out->cpu_min = r == 0 ? c1 - c0 : fmin(out->cpu_min, c1 - c0);
    }
done:
    out->status = s;
    if (s != MBS_OK && ctx_ok && !out->reason[0])
        snprintf(out->reason, sizeof out->reason, "%s",
                 ctx.reason[0] ? ctx.reason : mbs_status_message(s));
    if (state)
        m->ops->free_state(state);
    if (ctx_ok)
        mbs_ctx_free(&ctx);
    free(y0);
    free(y);
    free(ex);
    free(obs.g);
    mbs_problem_close(&pb);
    return MBS_OK;
}
