/* Run context, counting wrappers and step acceptance (see method.h). */
#include <gsl/gsl_blas.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../core/gslalloc.h"
#include "method.h"

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int mbs_ctx_init(mbs_ctx *ctx, const mbs_problem *pb)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->pb = pb;
    ctx->max_steps = MBS_DEFAULT_MAX_STEPS;
    ctx->max_cpu = MBS_DEFAULT_MAX_CPU;
    ctx->max_wall = MBS_DEFAULT_MAX_WALL;
    ctx->inject_fail_t = NAN;
    ctx->linsol_kind = -1;
    if (pb->def->kinematic) {
        ctx->G_full = mbs_matrix_alloc(pb->nl ? pb->nl : 1, pb->nq);
        ctx->H = mbs_matrix_alloc(pb->nq, pb->nv);
        if (!ctx->G_full || !ctx->H) {
            mbs_ctx_free(ctx);
            return MBS_NO_MEMORY;
        }
    } else if (pb->nq != pb->nv) {
        return MBS_BAD_INPUT;
    }
    return MBS_OK;
}

void mbs_ctx_free(mbs_ctx *ctx)
{
    if (ctx->G_full)
        gsl_matrix_free(ctx->G_full);
    if (ctx->H)
        gsl_matrix_free(ctx->H);
    ctx->G_full = ctx->H = NULL;
}

void mbs_ctx_reset(mbs_ctx *ctx)
{
    memset(&ctx->cnt, 0, sizeof ctx->cnt);
    ctx->linsol_kind = -1;
    memset(&ctx->linsol, 0, sizeof ctx->linsol);
    ctx->threads = 0;
    ctx->dense = NULL;
    ctx->dense_data = NULL;
    ctx->fail_t = NAN;
    ctx->reason[0] = '\0';
    ctx->cpu_start = cpu_now();
    ctx->wall_start = wall_now();
}

void mbs_ctx_report_linsol(mbs_ctx *ctx, const mbs_linsol *ls, int kind)
{
    if (!ls)
        return;
    mbs_linsol_stats st;
    mbs_linsol_get_stats(ls, &st);
    mbs_ctx_report_linsol_stats(ctx, &st, kind);
}

void mbs_ctx_report_linsol_stats(mbs_ctx *ctx, const mbs_linsol_stats *stp, int kind)
{
    const mbs_linsol_stats st = *stp;
    mbs_linsol_stats *a = &ctx->linsol;
    int first = ctx->linsol_kind < 0;
    ctx->linsol_kind = kind;
    a->analyses += st.analyses;
    a->factorizations += st.factorizations;
    a->solves += st.solves;
    if (first || st.n > a->n) {
        a->n = st.n;
        a->nnz = st.nnz;
        a->nnz_factor = st.nnz_factor;
        a->fill = st.fill;
    }
    a->rcond = first ? st.rcond : fmin(a->rcond, st.rcond);
}

int mbs_fail(mbs_ctx *ctx, int status, double t, const char *fmt, ...)
{
    /* Formatted apart first: callers pass ctx->reason itself as an argument
     * ("...: %s", ctx->reason), and vsnprintf into its own source is undefined
     * (it printed the new text twice and lost the cause). */
    char msg[sizeof ctx->reason];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(ctx->reason, msg, sizeof msg);
    ctx->fail_t = t;
    return status;
}

/* A failed (or injected-failure) callback: the reason and the status to return. */
static int callback_failed(mbs_ctx *ctx, int status, double t, const char *what)
{
    if (status == MBS_OK)
        return mbs_fail(ctx, MBS_CALLBACK_FAILED, t, "%s callback failed (injected at t >= %g)",
                        what, ctx->inject_fail_t);
    if (ctx->reason[0] == '\0')
        mbs_fail(ctx, status, t, "%s callback of %s returned %s", what, ctx->pb->def->name,
                 mbs_status_code(status));
    return status < 0 ? status : MBS_CALLBACK_FAILED;
}

/* The status of a problem callback as the wrappers return it: the test of
 * the common case inline in each wrapper, the rest out of line. */
static inline int callback(mbs_ctx *ctx, int status, double t, const char *what)
{
    if (status == MBS_OK && !(t >= ctx->inject_fail_t))
        return MBS_OK;
    return callback_failed(ctx, status, t, what);
}

int mbs_mass(mbs_ctx *ctx, double t, const double *q, gsl_matrix *M)
{
    ctx->cnt.mass_evals++;
    return callback(ctx, ctx->pb->def->mass(ctx->pb, t, q, M), t, "mass");
}

int mbs_mass_sparse(mbs_ctx *ctx, double t, const double *q, mbs_triplets *T)
{
    ctx->cnt.mass_evals++;
    return callback(ctx, ctx->pb->def->mass_sparse(ctx->pb, t, q, T), t, "mass_sparse");
}

int mbs_jacobian_sparse(mbs_ctx *ctx, double t, const double *q, mbs_triplets *T)
{
    ctx->cnt.jac_evals++;
    return callback(ctx, ctx->pb->def->jacobian_sparse(ctx->pb, t, q, T), t, "jacobian_sparse");
}

int mbs_force(mbs_ctx *ctx, double t, const double *q, const double *v, double *f)
{
    ctx->cnt.f_evals++;
    return callback(ctx, ctx->pb->def->force(ctx->pb, t, q, v, f), t, "force");
}

int mbs_force_q(mbs_ctx *ctx, double t, const double *q, const double *v, gsl_matrix *K)
{
    ctx->cnt.deriv_evals++;
    return callback(ctx, ctx->pb->def->force_q(ctx->pb, t, q, v, K), t, "force_q");
}

int mbs_force_v(mbs_ctx *ctx, double t, const double *q, const double *v, gsl_matrix *D)
{
    ctx->cnt.deriv_evals++;
    return callback(ctx, ctx->pb->def->force_v(ctx->pb, t, q, v, D), t, "force_v");
}

int mbs_gtlambda_q(mbs_ctx *ctx, double t, const double *q, const double *lambda,
                   gsl_matrix *K)
{
    ctx->cnt.deriv_evals++;
    return callback(ctx, ctx->pb->def->gtlambda_q(ctx->pb, t, q, lambda, K), t, "gtlambda_q");
}

int mbs_gw_q(mbs_ctx *ctx, double t, const double *q, const double *w, gsl_matrix *Z)
{
    ctx->cnt.deriv_evals++;
    return callback(ctx, ctx->pb->def->gw_q(ctx->pb, t, q, w, Z), t, "gw_q");
}

int mbs_ext_mass(mbs_ctx *ctx, double t, const double *y, gsl_matrix *E)
{
    ctx->cnt.mass_evals++;
    if (!ctx->pb->def->ext)
        return mbs_fail(ctx, MBS_UNSUPPORTED, t, "%s is not an extended problem",
                        ctx->pb->def->name);
    return callback(ctx, ctx->pb->def->ext->mass(ctx->pb, t, y, E), t, "extended mass");
}

int mbs_ext_rhs(mbs_ctx *ctx, double t, const double *y, double *F)
{
    ctx->cnt.f_evals++;
    if (!ctx->pb->def->ext)
        return mbs_fail(ctx, MBS_UNSUPPORTED, t, "%s is not an extended problem",
                        ctx->pb->def->name);
    return callback(ctx, ctx->pb->def->ext->rhs(ctx->pb, t, y, F), t, "extended rhs");
}

int mbs_ext_has_jac(const mbs_ctx *ctx)
{
    const mbs_extension *e = ctx->pb->def->ext;
    return e && e->jac;
}

int mbs_ext_jac(mbs_ctx *ctx, double t, const double *y, gsl_matrix *J)
{
    ctx->cnt.deriv_evals++;
    if (!mbs_ext_has_jac(ctx))
        return mbs_fail(ctx, MBS_UNSUPPORTED, t, "%s has no extended Jacobian",
                        ctx->pb->def->name);
    return callback(ctx, ctx->pb->def->ext->jac(ctx->pb, t, y, J), t, "extended jac");
}

size_t mbs_ext_n_switch(const mbs_ctx *ctx)
{
    const mbs_extension *e = ctx->pb->def->ext;
    return e && e->switches ? e->n_switch : 0;
}

int mbs_ext_switches(mbs_ctx *ctx, double t, const double *y, double *sw)
{
    ctx->cnt.f_evals++;
    if (!mbs_ext_n_switch(ctx))
        return mbs_fail(ctx, MBS_UNSUPPORTED, t, "%s has no switching functions",
                        ctx->pb->def->name);
    return callback(ctx, ctx->pb->def->ext->switches(ctx->pb, t, y, sw), t, "switches");
}

int mbs_constraint(mbs_ctx *ctx, double t, const double *q, double *g)
{
    ctx->cnt.g_evals++;
    return callback(ctx, ctx->pb->def->constraint(ctx->pb, t, q, g), t, "constraint");
}

int mbs_constraint_jacobian(mbs_ctx *ctx, double t, const double *q, gsl_matrix *B)
{
    const mbs_problem *pb = ctx->pb;
    ctx->cnt.jac_evals++;
    if (pb->nl == 0)
        return MBS_OK;
    if (!pb->def->kinematic)
        return callback(ctx, pb->def->jacobian(pb, t, q, B), t, "jacobian");
    int s = callback(ctx, pb->def->jacobian(pb, t, q, ctx->G_full), t, "jacobian");
    if (s == MBS_OK)
        s = callback(ctx, pb->def->kinematic(pb, q, ctx->H), t, "kinematic");
    if (s == MBS_OK)
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, ctx->G_full, ctx->H, 0.0, B);
    return s;
}

int mbs_constraint_t(mbs_ctx *ctx, double t, const double *q, double *gt)
{
    const mbs_problem *pb = ctx->pb;
    if (!pb->def->constraint_t) {
        for (size_t i = 0; i < pb->nl; i++)
            gt[i] = 0.0;
        return MBS_OK;
    }
    ctx->cnt.g_evals++;
    return callback(ctx, pb->def->constraint_t(pb, t, q, gt), t, "constraint_t");
}

int mbs_gamma(mbs_ctx *ctx, double t, const double *q, const double *v, double *gam)
{
    ctx->cnt.gamma_evals++;
    return callback(ctx, ctx->pb->def->gamma(ctx->pb, t, q, v, gam), t, "gamma");
}

int mbs_qdot(mbs_ctx *ctx, const double *q, const double *v, double *qdot)
{
    const mbs_problem *pb = ctx->pb;
    if (!pb->def->kinematic) {
        memcpy(qdot, v, pb->nv * sizeof *v);
        return MBS_OK;
    }
    int s = callback(ctx, pb->def->kinematic(pb, q, ctx->H), NAN, "kinematic");
    if (s != MBS_OK)
        return s;
    gsl_vector_const_view vv = gsl_vector_const_view_array(v, pb->nv);
    gsl_vector_view qd = gsl_vector_view_array(qdot, pb->nq);
    gsl_blas_dgemv(CblasNoTrans, 1.0, ctx->H, &vv.vector, 0.0, &qd.vector);
    return MBS_OK;
}

int mbs_lie_exp(mbs_ctx *ctx, const double *q, const double *w, double *q1)
{
    const mbs_problem *pb = ctx->pb;
    if (!(pb->flags & MBS_PB_LIEGROUP) || !pb->def->lie)
        return mbs_fail(ctx, MBS_UNSUPPORTED, NAN, "%s is not a Lie-group problem",
                        pb->def->name);
    return callback(ctx, pb->def->lie->compose_exp(pb, q, w, q1), NAN, "compose_exp");
}

int mbs_budget(mbs_ctx *ctx, double t)
{
    long n = ctx->cnt.steps + ctx->cnt.rejected;
    if (n >= ctx->max_steps)
        return mbs_fail(ctx, MBS_TOO_MANY_STEPS, t,
                        "budget: %ld steps (accepted + rejected) used up; raise --max-steps",
                        ctx->max_steps);
    /* The clocks are read every 64 attempts: cheap, and at most 64 steps late. */
    if ((n & 63) == 0) {
        if (cpu_now() - ctx->cpu_start > ctx->max_cpu)
            return mbs_fail(ctx, MBS_CPU_LIMIT, t,
                            "budget: CPU-time limit of %g s exceeded; raise --max-cpu",
                            ctx->max_cpu);
        if (wall_now() - ctx->wall_start > ctx->max_wall)
            return mbs_fail(ctx, MBS_WALL_LIMIT, t,
                            "budget: wall-clock limit of %g s exceeded; raise --max-wall",
                            ctx->max_wall);
    }
    return MBS_OK;
}

int mbs_accept(mbs_ctx *ctx, double t, const double *y, const double *vdot)
{
    const mbs_problem *pb = ctx->pb;
    size_t ny = mbs_ny(pb);
    ctx->cnt.steps++;
    for (size_t i = 0; i < ny; i++)
        if (!isfinite(y[i]))
            return mbs_fail(ctx, MBS_NAN_STATE, t, "non-finite state component %zu", i);
    if (ctx->observer) {
        int s = ctx->observer(ctx->observer_data, t, y, y + pb->nq, vdot, y + pb->nq + pb->nv);
        if (s != 0)
            return mbs_fail(ctx, s, t, "stopped by the observer");
    }
    return MBS_OK;
}

size_t mbs_lu_rank(const gsl_matrix *LU)
{
    size_t n = LU->size1 < LU->size2 ? LU->size1 : LU->size2, r = 0;
    double umax = 0.0;
    for (size_t i = 0; i < n; i++)
        umax = fmax(umax, fabs(LU->data[i * LU->tda + i]));
    for (size_t i = 0; i < n; i++)
        r += fabs(LU->data[i * LU->tda + i]) > 1e-14 * umax;
    return r;
}
