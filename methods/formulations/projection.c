/* Mass-orthogonal projection ([arnold2016dae], Eqs. (88)-(91)); see projection.h.
 * Also the projected index-1 formulation `proj-index1/...`: the index-1 KKT
 * solve ([arnold2016dae] Eqs. (83)-(84)) with a projection of (q, v) after every
 * accepted step through the accel def's post_step hook; and the projected
 * index-2 formulation `proj-index2/...` of the DAE axis. */
#include "../../core/gslalloc.h"
#include "projection.h"

#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../framework/dae_axis.h"
#include "../framework/ode_axis.h"
#include "dae_form.h"
#include "index1.h"
#include "kkt_eval.h"
#include "../linsol/linsol.h"

struct mbs_projection {
    size_t nq, nv, nl;
    double eps_g;
    int backend;            /* MBS_PROJECT_GSL_LU or an mbs_linsol_kind */
    /* GSL LU path */
    gsl_matrix *M, *B, *K;  /* mass, B = G H, KKT matrix and its LU factors */
    gsl_permutation *perm;
    gsl_vector *rhs, *sol;
    /* mbs_linsol path */
    mbs_linsol *ls;
    mbs_kkt_eval ke;        /* M and B as triplets */
    double *rv, *rl, *sv;   /* right-hand side (n_v | n_l) and solution (n_v) */
    double *g, *gt, *d, *hd, *qn, *qs, *vn; /* constraint, g_t, correction d, H d, q_n,
                                               saved q and v (restored on failure) */
};

void mbs_project_free(mbs_projection *p)
{
    if (!p)
        return;
    if (p->M)
        gsl_matrix_free(p->M);
    if (p->B)
        gsl_matrix_free(p->B);
    if (p->K)
        gsl_matrix_free(p->K);
    if (p->perm)
        gsl_permutation_free(p->perm);
    if (p->rhs)
        gsl_vector_free(p->rhs);
    if (p->sol)
        gsl_vector_free(p->sol);
    mbs_linsol_free(&p->ls);
    mbs_kkt_eval_free(&p->ke);
    free(p->rv);
    free(p->rl);
    free(p->sv);
    free(p->g);
    free(p->gt);
    free(p->d);
    free(p->hd);
    free(p->qn);
    free(p->qs);
    free(p->vn);
    free(p);
}

int mbs_project_alloc(mbs_projection **out, mbs_ctx *ctx, double eps_g)
{
    return mbs_project_alloc_backend(out, ctx, eps_g, MBS_PROJECT_GSL_LU);
}

int mbs_project_alloc_backend(mbs_projection **out, mbs_ctx *ctx, double eps_g, int backend)
{
    const mbs_problem *pb = ctx->pb;
    *out = NULL;
    if (!(isfinite(eps_g) && eps_g > 0.0))
        return mbs_fail(ctx, MBS_BAD_INPUT, pb->t0,
                        "projection tolerance eps_g=%g must be positive and finite", eps_g);
    if (backend != MBS_PROJECT_GSL_LU && backend != MBS_LS_DENSE &&
        backend != MBS_LS_UMFPACK && backend != MBS_LS_CHOLMOD)
        return mbs_fail(ctx, MBS_BAD_INPUT, pb->t0, "projection: unknown KKT backend %d",
                        backend);
    if (pb->flags & MBS_PB_REDUNDANT)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "projection needs full-rank constraints (%s is redundant)",
                        pb->def->name);
    mbs_projection *p = calloc(1, sizeof *p);
    if (!p)
        return MBS_NO_MEMORY;
    size_t nq = pb->nq, nv = pb->nv, nl = pb->nl, nlc = nl ? nl : 1;
    p->nq = nq;
    p->nv = nv;
    p->nl = nl;
    p->eps_g = eps_g;
    p->backend = backend;
    int ok = 1, s = MBS_OK;
    if (backend == MBS_PROJECT_GSL_LU) {
        p->M = mbs_matrix_alloc(nv, nv);
        p->B = mbs_matrix_alloc(nlc, nv);
        p->K = mbs_matrix_alloc(nv + nl, nv + nl);
        p->perm = gsl_permutation_alloc(nv + nl);
        p->rhs = gsl_vector_alloc(nv + nl);
        p->sol = gsl_vector_alloc(nv + nl);
        ok = p->M && p->B && p->K && p->perm && p->rhs && p->sol;
    } else {
        /* M only definite on ker B: the augmented Lagrangian (linsol.h). */
        double aug = (pb->flags & MBS_PB_SINGULAR_MASS) ? 1.0 : 0.0;
        if ((s = mbs_linsol_alloc(&p->ls, backend, nv, nl, aug)) == MBS_OK)
            s = mbs_kkt_eval_init(&p->ke, ctx);
        p->rv = calloc(nv, sizeof(double));
        p->rl = calloc(nlc, sizeof(double));
        p->sv = calloc(nv, sizeof(double));
        ok = s == MBS_OK && p->rv && p->rl && p->sv;
    }
    p->g = calloc(nlc, sizeof(double));
    p->gt = calloc(nlc, sizeof(double));
    p->d = calloc(nv, sizeof(double));
    p->hd = calloc(nq, sizeof(double));
    p->qn = calloc(nq, sizeof(double));
    p->qs = calloc(nq, sizeof(double));
    p->vn = calloc(nv, sizeof(double));
    if (!ok || !p->g || !p->gt || !p->d || !p->hd || !p->qn || !p->qs || !p->vn) {
        mbs_project_free(p);
        return s != MBS_OK ? s : MBS_NO_MEMORY;
    }
    *out = p;
    return MBS_OK;
}

void mbs_project_report(mbs_ctx *ctx, const mbs_projection *p)
{
    if (p && p->ls)
        mbs_ctx_report_linsol(ctx, p->ls, p->backend);
}

const mbs_linsol *mbs_project_linsol(const mbs_projection *p)
{
    return p ? p->ls : NULL;
}

static double inf_norm(const double *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        if (!(fabs(x[i]) <= m))
            m = fabs(x[i]);
    return m;
}

/* Assemble [M B^T; B 0] from p->M, p->B and LU-factorise it (GSL LU path), or
 * factor the triplets p->ke.M, p->ke.B with the backend. */
static int factor_kkt(mbs_projection *p, mbs_ctx *ctx, double t)
{
    if (p->ls)
        return mbs_kkt_factor(p->ls, p->backend, ctx, t, &p->ke.M, &p->ke.B, "projection");
    size_t nv = p->nv, nl = p->nl;
    gsl_matrix_set_zero(p->K);
    gsl_matrix_view KM = gsl_matrix_submatrix(p->K, 0, 0, nv, nv);
    gsl_matrix_memcpy(&KM.matrix, p->M);
    for (size_t i = 0; i < nl; i++)
        for (size_t j = 0; j < nv; j++) {
            double b = gsl_matrix_get(p->B, i, j);
            gsl_matrix_set(p->K, nv + i, j, b);
            gsl_matrix_set(p->K, j, nv + i, b);
        }
    int sign;
    mbs_count_factorization(ctx);
    if (gsl_linalg_LU_decomp(p->K, p->perm, &sign) != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "projection: KKT LU factorization failed");
    for (size_t i = 0; i < nv + nl; i++)
        if (gsl_matrix_get(p->K, i, i) == 0.0)
            return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "projection: singular KKT matrix");
    return MBS_OK;
}

/* Solve with right-hand side (p->rv, p->rl) (backend) or p->rhs (GSL LU); the
 * velocity part of the solution is left in p->sv or p->sol. */
static int solve_kkt(mbs_projection *p, mbs_ctx *ctx, double t)
{
    if (p->ls)
        return mbs_kkt_solve(p->ls, p->backend, ctx, t, p->rv, p->rl, p->sv, NULL,
                             "projection");
    mbs_count_solve(ctx);
    if (gsl_linalg_LU_solve(p->K, p->perm, p->rhs, p->sol) != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "projection: singular KKT matrix");
    return MBS_OK;
}

static double sol_v(const mbs_projection *p, size_t i)
{
    return p->ls ? p->sv[i] : gsl_vector_get(p->sol, i);
}

static int load_matrices(mbs_projection *p, mbs_ctx *ctx, double t, const double *q)
{
    if (p->ls) {
        int s = mbs_kkt_eval_mass(&p->ke, ctx, t, q);
        return s != MBS_OK ? s : mbs_kkt_eval_jacobian(&p->ke, ctx, t, q);
    }
    int s = mbs_mass(ctx, t, q, p->M);
    if (s != MBS_OK)
        return s;
    gsl_matrix_view B = gsl_matrix_submatrix(p->B, 0, 0, p->nl, p->nv);
    return mbs_constraint_jacobian(ctx, t, q, &B.matrix);
}

/* Position stage, Eq. (89): simplified Newton with the matrix frozen at q_n. */
static int project_position(mbs_projection *p, mbs_ctx *ctx, double t, double *q)
{
    size_t nq = p->nq, nv = p->nv, nl = p->nl;
    int s = mbs_constraint(ctx, t, q, p->g);
    if (s != MBS_OK)
        return s;
    double res = inf_norm(p->g, nl);
    if (res <= p->eps_g)
        return MBS_OK;
    if ((s = load_matrices(p, ctx, t, q)) != MBS_OK || (s = factor_kkt(p, ctx, t)) != MBS_OK)
        return s;
    memcpy(p->qn, q, nq * sizeof(double));
    memset(p->d, 0, nv * sizeof(double));
    for (int k = 1; k <= MBS_PROJECT_MAXIT; k++) {
        mbs_count_newton(ctx);
        /* rhs = -(M d, g(q^(k))) */
        if (p->ls) {
            memset(p->rv, 0, nv * sizeof(double));
            mbs_triplets_gemv(&p->ke.M, 0, -1.0, p->d, p->rv);
            for (size_t i = 0; i < nl; i++)
                p->rl[i] = -p->g[i];
        } else {
            for (size_t i = 0; i < nv; i++) {
                double md = 0.0;
                for (size_t j = 0; j < nv; j++)
                    md += gsl_matrix_get(p->M, i, j) * p->d[j];
                gsl_vector_set(p->rhs, i, -md);
            }
            for (size_t i = 0; i < nl; i++)
                gsl_vector_set(p->rhs, nv + i, -p->g[i]);
        }
        if ((s = solve_kkt(p, ctx, t)) != MBS_OK)
            return s;
        double inc = 0.0, qmax = 0.0;
        for (size_t i = 0; i < nv; i++) {
            p->d[i] += sol_v(p, i);
            inc = fmax(inc, fabs(sol_v(p, i)));
        }
        for (size_t i = 0; i < nq; i++)
            qmax = fmax(qmax, fabs(p->qn[i]));
        /* q^ = q_n + H(q_n) d */
        if ((s = mbs_qdot(ctx, p->qn, p->d, p->hd)) != MBS_OK)
            return s;
        for (size_t i = 0; i < nq; i++)
            q[i] = p->qn[i] + p->hd[i];
        if ((s = mbs_constraint(ctx, t, q, p->g)) != MBS_OK)
            return s;
        double r = inf_norm(p->g, nl);
        if (r <= p->eps_g)
            return MBS_OK;
        /* A correction at the rounding of q moves q by nothing representable:
         * ||g|| is at its round-off floor, which eps_g may lie below. */
        if (isfinite(r) && k >= 2 && inc <= 16.0 * DBL_EPSILON * (1.0 + qmax))
            return MBS_OK;
        if (!isfinite(r) || (k >= 2 && r > res))
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                            "projection: simplified Newton diverged (||g|| %.3g -> %.3g)", res,
                            r);
        res = r;
    }
    return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                    "projection: ||g|| = %.3g > eps_g = %.3g after %d simplified Newton "
                    "iterations",
                    res, p->eps_g, MBS_PROJECT_MAXIT);
}

/* Velocity stage, Eq. (91), at the projected q. */
static int project_velocity(mbs_projection *p, mbs_ctx *ctx, double t, const double *q,
                            double *v)
{
    size_t nv = p->nv, nl = p->nl;
    int s;
    if ((s = load_matrices(p, ctx, t, q)) != MBS_OK ||
        (s = mbs_constraint_t(ctx, t, q, p->gt)) != MBS_OK || (s = factor_kkt(p, ctx, t)) != MBS_OK)
        return s;
    if (p->ls) {
        memset(p->rv, 0, nv * sizeof(double));
        for (size_t i = 0; i < nl; i++)
            p->rl[i] = 0.0;
        mbs_triplets_gemv(&p->ke.B, 0, 1.0, v, p->rl);
        for (size_t i = 0; i < nl; i++)
            p->rl[i] = -(p->gt[i] + p->rl[i]);
    } else {
        for (size_t i = 0; i < nv; i++)
            gsl_vector_set(p->rhs, i, 0.0);
        for (size_t i = 0; i < nl; i++) {
            double r = p->gt[i];
            for (size_t j = 0; j < nv; j++)
                r += gsl_matrix_get(p->B, i, j) * v[j];
            gsl_vector_set(p->rhs, nv + i, -r);
        }
    }
    if ((s = solve_kkt(p, ctx, t)) != MBS_OK)
        return s;
    for (size_t i = 0; i < nv; i++)
        v[i] += sol_v(p, i);
    return MBS_OK;
}

int mbs_project(mbs_projection *p, mbs_ctx *ctx, double t, double *q, double *v)
{
    if (p->nl == 0)
        return MBS_OK;
    memcpy(p->qs, q, p->nq * sizeof(double));
    memcpy(p->vn, v, p->nv * sizeof(double));
    int s = project_position(p, ctx, t, q);
    if (s == MBS_OK)
        s = project_velocity(p, ctx, t, q, v);
    if (s != MBS_OK) { /* leave the state as it was */
        memcpy(q, p->qs, p->nq * sizeof(double));
        memcpy(v, p->vn, p->nv * sizeof(double));
    }
    return s;
}

/* ---- proj-index1: index-1 KKT solve + projection after accepted steps ------ */

enum { PI_LINSOL, PI_EPS };
static const mbs_param_def proj_index1_params[] = {
    [PI_LINSOL] = MBS_INDEX1_LINSOL_PARAM,
    [PI_EPS] = MBS_PROJECT_EPS_PARAM,
};

typedef struct proj_index1_ws {
    mbs_index1 *ix;
    mbs_projection *proj;
} proj_index1_ws;

static void pi_free(void *p)
{
    proj_index1_ws *w = p;
    if (!w)
        return;
    mbs_index1_free(w->ix);
    mbs_project_free(w->proj);
    free(w);
}

static int pi_alloc(void **out, mbs_ctx *ctx, const mbs_params *prm)
{
    *out = NULL;
    proj_index1_ws *w = calloc(1, sizeof *w);
    if (!w)
        return MBS_NO_MEMORY;
    int linsol = (int)prm->val[PI_LINSOL];
    int s = mbs_index1_alloc(&w->ix, ctx, linsol);
    /* The projection's KKT solver follows `linsol`: lu and chol (no Cholesky
     * variant of the projection) keep the GSL LU path. */
    int backend = linsol == MBS_LINSOL_UMFPACK   ? MBS_LS_UMFPACK
                  : linsol == MBS_LINSOL_CHOLMOD ? MBS_LS_CHOLMOD
                                                 : MBS_PROJECT_GSL_LU;
    if (s == MBS_OK)
        s = mbs_project_alloc_backend(&w->proj, ctx, prm->val[PI_EPS], backend);
    if (s != MBS_OK) {
        pi_free(w);
        return s;
    }
    *out = w;
    return MBS_OK;
}

static int pi_eval(void *p, mbs_ctx *ctx, double t, const double *q, const double *v,
                   double *vdot, double *lambda)
{
    proj_index1_ws *w = p;
    return mbs_index1_accel(w->ix, ctx, t, q, v, vdot, lambda);
}

static int pi_post(void *p, mbs_ctx *ctx, double t, double *q, double *v)
{
    proj_index1_ws *w = p;
    return mbs_project(w->proj, ctx, t, q, v);
}

static void pi_finish(void *p, mbs_ctx *ctx)
{
    proj_index1_ws *w = p;
    mbs_index1_report(ctx, w->ix);
    mbs_project_report(ctx, w->proj);
}

const mbs_accel_def mbs_accel_proj_index1 = {
    .name = "proj-index1",
    .alloc = pi_alloc,
    .eval = pi_eval,
    .post_step = pi_post,
    .finish = pi_finish,
    .free_ws = pi_free,
};

#define CITE "Arnold 2016 [arnold2016dae], Eqs. (83)-(84) and projection Eqs. (88)-(91)"
const mbs_ode_formulation mbs_ode_formulation_proj_index1 = {
    .name = "proj-index1",
    .accel = &mbs_accel_proj_index1,
    .summary = "index-1 with projection of q and v after every accepted step",
    .citation = CITE,
    .flags = MBS_M_NEEDS_FULL_RANK | MBS_M_PROJECTING,
    .lambda = 1,
    .params = proj_index1_params,
    .n_params = sizeof proj_index1_params / sizeof proj_index1_params[0],
};

static const mbs_param_def proj_index2_params[] = {MBS_PROJECT_EPS_PARAM};

/* The index-2 form (E, F of dae_form.h) whose integrator projects q and v
 * after every accepted step (mbs_project). */
const mbs_dae_formulation mbs_dae_formulation_proj_index2 = {
    .name = "proj-index2",
    .kind = MBS_FORM_INDEX2,
    .provides = MBS_DAE_EF | MBS_DAE_JACOBIAN | MBS_DAE_KKT | MBS_DAE_EXTENDED |
                MBS_DAE_PROJECTION,
    .index = 2,
    .title = "the index-2 formulation with projection",
    .form = "the index-2 form with projection",
    .eqs = "(79), (88)-(91)",
    .base = &mbs_dae_formulation_index2,
    .projection = "mass-orthogonal projection of q, v after every accepted step",
    .params = MBS_PARAM_LIST(proj_index2_params),
};
