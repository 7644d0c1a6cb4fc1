/* The observer of a measuring run (observe.h).  Split from run.c. */
#include "observe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/gslalloc.h"
#include "../methods/formulations/kkt_eval.h"
#include "../problems/triplets.h"
#include "traj.h"


/* max_i |a_i - b_i| / (1 + |b_i|) */
double mbs_max_mixed_diff(const double *a, const double *b, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]) / (1.0 + fabs(b[i]));
        if (d > m || isnan(d))
            m = d;
    }
    return m;
}

double mbs_max_abs_diff(const double *a, const double *b, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        if (d > m || isnan(d))
            m = d;
    }
    return m;
}

/* Time series: the maxima of |g|, |B v + g_t|, |E - E0|/|E0| over bins of t - t0
 * that are log-spaced (50 per decade, from span * 1e-6), written at the last time of
 * each bin, so a run of any length gives at most ~300 lines. */
static void series_flush(observer *o)
{
    if (o->series && o->s_pending)
        fprintf(o->series, "%.10e %.6e %.6e %.6e\n", o->s_t, o->s_g, o->s_gv, o->s_e);
    o->s_pending = 0;
    o->s_g = o->s_gv = o->s_e = 0.0;
}

static void series_add(observer *o, double t, double g, double gv, double e)
{
    if (!o->series)
        return;
    double dt = t - o->pb->t0;
    if (o->s_pending && dt > o->s_next) {
        series_flush(o);
        while (o->s_next < dt)
            o->s_next *= o->s_factor;
    }
    o->s_t = t;
    o->s_g = fmax(o->s_g, g);
    o->s_gv = fmax(o->s_gv, gv);
    o->s_e = isnan(e) ? e : fmax(o->s_e, e);
    o->s_pending = 1;
    if (dt <= 0.0)
        series_flush(o); /* the initial point on its own line */
}

void mbs_observer_free(observer *o)
{
    if (o->series) {
        series_flush(o);
        fclose(o->series);
        o->series = NULL;
    }
    mbs_ctx_free(&o->dctx);
    mbs_traj_free(o->traj);
    o->traj = NULL;
    free(o->ex);
    if (o->B)
        gsl_matrix_free(o->B);
    mbs_triplets_free(&o->Bt);
    free(o->g);
    free(o->gt);
    free(o->gam);
}

int mbs_observer_init(observer *o, const mbs_problem *pb, double t_end)
{
    memset(o, 0, sizeof *o);
    o->pb = pb;
    size_t nlc = pb->nl ? pb->nl : 1;
    if (mbs_ctx_init(&o->dctx, pb) != MBS_OK)
        return MBS_NO_MEMORY;
    o->exact = pb->def->exact != NULL;
    o->ex = calloc(mbs_ny(pb), sizeof(double));
    o->sparse = (pb->flags & MBS_PB_SPARSE) && pb->def->jacobian_sparse && !pb->def->kinematic;
    o->B = o->sparse ? NULL : mbs_matrix_alloc(nlc, pb->nv);
    o->g = calloc(nlc, sizeof(double));
    o->gt = calloc(nlc, sizeof(double));
    o->gam = calloc(nlc, sizeof(double));
    if (!o->ex || (!o->sparse && !o->B) || !o->g || !o->gt || !o->gam) {
        mbs_observer_free(o);
        return MBS_NO_MEMORY;
    }
    o->have_energy = pb->def->energy != NULL;
    o->emax = (mbs_err3){0.0, 0.0, 0.0};
    mbs_drift_init(&o->drift, pb->t0, t_end);
    return MBS_OK;
}

static double inf_norm(const double *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        if (fabs(x[i]) > m || isnan(x[i]))
            m = fabs(x[i]);
    return m;
}

int mbs_observe(void *data, double t, const double *q, const double *v, const double *vdot,
                   const double *lambda)
{
    observer *o = data;
    const mbs_problem *pb = o->pb;
    size_t nq = pb->nq, nv = pb->nv, nl = pb->nl;
    if (o->traj) /* q is the start of the contiguous state q | v | lambda (| x) */
        mbs_traj_step(o->traj, o->mctx, t, q, vdot);
    if (o->exact) {
        if (pb->def->exact(pb, t, o->ex, o->ex + nq, o->ex + nq + nv) != MBS_OK)
            return MBS_CALLBACK_FAILED;
        o->emax.q = fmax(o->emax.q, mbs_max_abs_diff(q, o->ex, nq));
        o->emax.v = fmax(o->emax.v, mbs_max_abs_diff(v, o->ex + nq, nv));
        o->emax.lambda = fmax(o->emax.lambda, mbs_max_abs_diff(lambda, o->ex + nq + nv, nl));
    }
    if (nl > 0) {
        gsl_matrix_view B = {{0}};
        if (!o->sparse)
            B = gsl_matrix_submatrix(o->B, 0, 0, nl, nv);
        if (mbs_constraint(&o->dctx, t, q, o->g) != MBS_OK ||
            mbs_constraint_t(&o->dctx, t, q, o->gt) != MBS_OK ||
            (o->sparse ? mbs_jacobian_sparse(&o->dctx, t, q, &o->Bt)
                       : mbs_constraint_jacobian(&o->dctx, t, q, &B.matrix)) != MBS_OK)
            return MBS_CALLBACK_FAILED;
        o->pos_last = inf_norm(o->g, nl);
        if (o->sparse) {
            mbs_triplets_gemv(&o->Bt, 0, 1.0, v, o->gt); /* g_t + B v */
        } else {
            for (size_t i = 0; i < nl; i++) {
                double r = o->gt[i];
                for (size_t j = 0; j < nv; j++)
                    r += gsl_matrix_get(&B.matrix, i, j) * v[j];
                o->gt[i] = r;
            }
        }
        o->vel_last = inf_norm(o->gt, nl);
        o->pos_max = fmax(o->pos_max, o->pos_last);
        o->vel_max = fmax(o->vel_max, o->vel_last);
        mbs_drift_add(&o->drift, t, o->pos_last);
        if (vdot) {
            if (mbs_gamma(&o->dctx, t, q, v, o->gam) != MBS_OK)
                return MBS_CALLBACK_FAILED;
            for (size_t i = 0; i < nl; i++)
                o->gam[i] = -o->gam[i];
            if (o->sparse)
                mbs_triplets_gemv(&o->Bt, 0, 1.0, vdot, o->gam); /* B v' - gamma */
            else
                for (size_t i = 0; i < nl; i++) {
                    double r = o->gam[i];
                    for (size_t j = 0; j < nv; j++)
                        r += gsl_matrix_get(&B.matrix, i, j) * vdot[j];
                    o->gam[i] = r;
                }
            o->acc_max = fmax(o->acc_max, inf_norm(o->gam, nl));
        } else {
            o->acc_max = NAN;
        }
    }
    if (o->have_energy) {
        double E = pb->def->energy(pb, t, q, v);
        double scale = fabs(o->E0) > 0.0 ? fabs(o->E0) : 1.0;
        o->edrift = fmax(o->edrift, fabs(E - o->E0) / scale);
        series_add(o, t, nl ? o->pos_last : 0.0, nl ? o->vel_last : 0.0,
                   fabs(E - o->E0) / scale);
    } else {
        series_add(o, t, nl ? o->pos_last : 0.0, nl ? o->vel_last : 0.0, NAN);
    }
    return 0;
}

