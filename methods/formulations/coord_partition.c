/* Coordinate partitioning (Wehage & Haug 1982; [pennestri_coordinate_reduction], Sect. 7.2, Eqs.
 * (47)-(57)) as the acceleration evaluator `cp`.
 *
 * Partition: q = (u, v) with u the n_lambda dependent coordinates, chosen as the
 * pivot rows of a GSL LU factorisation with partial pivoting of G^T (each
 * constraint takes the coordinate with the largest remaining entry), so that
 * G_u is nonsingular.  Accelerations at (t, q, q'): with X = G_u^-1 G_v and
 * c = G_u^-1 gamma (Eq. (54)), V = [-X; I] (Eq. (22)) and
 *     M_hat v'' = Q_hat                                            (55)-(57)
 * (M_hat = V^T M V, Q_hat = V^T (f - M [c; 0])), u'' = c - X v''; the
 * multipliers from the u rows of the dynamic equations, G_u^T lambda =
 * (f - M q'')_u (Eq. (48)).
 * Independent coordinates drive the solution: after every accepted step the
 * dependent positions are recovered by Newton on g(u, v) = 0 with v fixed
 * (Eq. (50)) and the dependent velocities from G_u u' = -G_v v' - g_t (Eq. (53));
 * the integrator carries u and u' too, but they are overwritten at each step
 * (they still enter its error estimate).  The pivot ratio
 * rho = min_i |U_ii(G_u)| / max |G| is monitored at every accepted step; when it
 * falls below `pivot_ratio` times its value at the last partitioning, the
 * partition is re-chosen (counted in the diagnostics, nullspace.h).
 * Needs q' = v (H = I) and full-rank constraints ([pennestri_coordinate_reduction], footnote 2). */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_permute_vector.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/gslalloc.h"
#include "nullspace.h"

enum { P_RANK_TOL, P_PIVOT_RATIO, P_NEWTON_TOL };

typedef struct cp_ws {
    mbs_ns_diag diag; /* first member: read by mbs_ns_diag_get */
    double rank_tol, pivot_ratio, newton_tol;
    size_t n, nl, F;
    size_t *dep, *ind;  /* dependent (nl) and independent (F) coordinate indices */
    int partitioned;
    double rho0;        /* pivot ratio after the last partitioning */
    gsl_matrix *M, *G, *GT, *Gu, *X, *V, *MV, *Mh;
    gsl_permutation *pT, *pu;
    gsl_vector *rcw;
    double *f, *gam, *c, *xp, *rhs, *a, *rf, *g, *gt, *du;
} cp_ws;

static void cp_free(void *p)
{
    cp_ws *w = p;
    if (!w)
        return;
    free(w->dep);
    free(w->ind);
    gsl_matrix_free(w->M);
    gsl_matrix_free(w->G);
    gsl_matrix_free(w->GT);
    gsl_matrix_free(w->Gu);
    gsl_matrix_free(w->X);
    gsl_matrix_free(w->V);
    gsl_matrix_free(w->MV);
    gsl_matrix_free(w->Mh);
    gsl_permutation_free(w->pT);
    gsl_permutation_free(w->pu);
    gsl_vector_free(w->rcw);
    free(w->f);
    free(w->gam);
    free(w->c);
    free(w->xp);
    free(w->rhs);
    free(w->a);
    free(w->rf);
    free(w->g);
    free(w->gt);
    free(w->du);
    free(w);
}

static int cp_alloc(void **out, mbs_ctx *ctx, const mbs_params *p)
{
    const mbs_problem *pb = ctx->pb;
    *out = NULL;
    if (pb->flags & MBS_PB_REDUNDANT)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "coordinate partitioning needs full-rank constraints (%s is "
                        "redundant); use qr, svd, zeroeig, schur or uk",
                        pb->def->name);
    if (pb->def->kinematic || pb->nq != pb->nv)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "coordinate partitioning needs q' = v (no kinematic matrix H)");
    if (pb->nl == 0 || pb->nl >= pb->nv)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "coordinate partitioning needs 0 < n_lambda < n_v (have %zu, %zu)",
                        pb->nl, pb->nv);
    if (pb->flags & MBS_PB_SINGULAR_MASS)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "coordinate partitioning needs M positive definite (Cholesky of "
                        "M_hat)");
    cp_ws *w = calloc(1, sizeof *w);
    if (!w)
        return MBS_NO_MEMORY;
    size_t n = pb->nv, nl = pb->nl, F = n - nl;
    w->n = n;
    w->nl = nl;
    w->F = F;
    w->rank_tol = p->val[P_RANK_TOL];
    w->pivot_ratio = p->val[P_PIVOT_RATIO];
    w->newton_tol = p->val[P_NEWTON_TOL];
    w->dep = malloc(nl * sizeof *w->dep);
    w->ind = malloc(F * sizeof *w->ind);
    w->M = mbs_matrix_alloc(n, n);
    w->G = mbs_matrix_alloc(nl, n);
    w->GT = mbs_matrix_alloc(n, nl);
    w->Gu = mbs_matrix_alloc(nl, nl);
    w->X = mbs_matrix_alloc(nl, F);
    w->V = mbs_matrix_alloc(n, F);
    w->MV = mbs_matrix_alloc(n, F);
    w->Mh = mbs_matrix_alloc(F, F);
    w->pT = gsl_permutation_alloc(n);
    w->pu = gsl_permutation_alloc(nl);
    w->rcw = gsl_vector_alloc(3 * F);
    w->f = malloc(n * sizeof(double));
    w->gam = malloc(nl * sizeof(double));
    w->c = malloc(nl * sizeof(double));
    w->xp = malloc(n * sizeof(double));
    w->rhs = malloc(F * sizeof(double));
    w->a = malloc(F * sizeof(double));
    w->rf = malloc(n * sizeof(double));
    w->g = malloc(nl * sizeof(double));
    w->gt = malloc(nl * sizeof(double));
    w->du = malloc(nl * sizeof(double));
    if (!(w->dep && w->ind && w->M && w->G && w->GT && w->Gu && w->X && w->V && w->MV &&
          w->Mh && w->pT && w->pu && w->rcw && w->f && w->gam && w->c && w->xp && w->rhs &&
          w->a && w->rf && w->g && w->gt && w->du)) {
        cp_free(w);
        return MBS_NO_MEMORY;
    }
    mbs_ns_diag_reset(&w->diag);
    *out = w;
    return MBS_OK;
}

static double max_abs(const gsl_matrix *A)
{
    double mn, mx;
    gsl_matrix_minmax(A, &mn, &mx);
    return fmax(fabs(mn), fabs(mx));
}

/* LU of G_u = G(:, dep) (w->G current); pivot ratio into *rho. */
static int factor_gu(cp_ws *w, mbs_ctx *ctx, double t, double *rho)
{
    size_t nl = w->nl;
    for (size_t k = 0; k < nl; k++)
        for (size_t i = 0; i < nl; i++)
            gsl_matrix_set(w->Gu, i, k, gsl_matrix_get(w->G, i, w->dep[k]));
    int sig;
    mbs_count_factorization(ctx);
    if (gsl_linalg_LU_decomp(w->Gu, w->pu, &sig) != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_LIBRARY_FAILURE, t, "GSL LU of G_u failed");
    double umin = INFINITY, gmax = max_abs(w->G);
    for (size_t i = 0; i < nl; i++)
        umin = fmin(umin, fabs(gsl_matrix_get(w->Gu, i, i)));
    *rho = gmax > 0.0 ? umin / gmax : 0.0;
    if (!(*rho > w->rank_tol))
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                        "cp: dependent block G_u singular (pivot ratio %.3g <= rank_tol)",
                        *rho);
    return MBS_OK;
}

/* Choose the partition from the LU with partial pivoting of G^T (w->G current). */
static int choose_partition(cp_ws *w, mbs_ctx *ctx, double t)
{
    size_t n = w->n, nl = w->nl;
    gsl_matrix_transpose_memcpy(w->GT, w->G);
    int sig;
    mbs_count_factorization(ctx);
    if (gsl_linalg_LU_decomp(w->GT, w->pT, &sig) != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_LIBRARY_FAILURE, t, "GSL LU of G^T failed");
    double gmax = max_abs(w->G);
    size_t rank = 0;
    for (size_t i = 0; i < nl; i++)
        if (fabs(gsl_matrix_get(w->GT, i, i)) > w->rank_tol * gmax)
            rank++;
    if (rank < nl)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                        "cp: rank-deficient constraint Jacobian (rank %zu < %zu), no "
                        "nonsingular partition",
                        rank, nl);
    /* pivot rows of G^T = dependent coordinates; the rest, in order, independent */
    for (size_t k = 0; k < nl; k++)
        w->dep[k] = gsl_permutation_get(w->pT, k);
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        int isdep = 0;
        for (size_t k = 0; k < nl && !isdep; k++)
            isdep = w->dep[k] == i;
        if (!isdep)
            w->ind[j++] = i;
    }
    w->partitioned = 1;
    return factor_gu(w, ctx, t, &w->rho0);
}

static int cp_start(void *p, mbs_ctx *ctx, double t0, const double *q, const double *v)
{
    cp_ws *w = p;
    (void)v;
    mbs_ns_diag_reset(&w->diag);
    int s = mbs_constraint_jacobian(ctx, t0, q, w->G);
    if (s != MBS_OK)
        return s;
    return choose_partition(w, ctx, t0);
}

static int cp_eval(void *p, mbs_ctx *ctx, double t, const double *q, const double *v,
                   double *vdot, double *lambda)
{
    cp_ws *w = p;
    size_t n = w->n, nl = w->nl, F = w->F;
    int s;
    double rho;
    if ((s = mbs_mass(ctx, t, q, w->M)) != MBS_OK ||
        (s = mbs_force(ctx, t, q, v, w->f)) != MBS_OK ||
        (s = mbs_constraint_jacobian(ctx, t, q, w->G)) != MBS_OK ||
        (s = mbs_gamma(ctx, t, q, v, w->gam)) != MBS_OK)
        return s;
    if (!w->partitioned && (s = choose_partition(w, ctx, t)) != MBS_OK)
        return s;
    if ((s = factor_gu(w, ctx, t, &rho)) != MBS_OK)
        return s;
    /* X = G_u^-1 G_v, c = G_u^-1 gamma (Eq. (54)) */
    for (size_t j = 0; j < F; j++) {
        gsl_vector_view xj = gsl_matrix_column(w->X, j);
        for (size_t i = 0; i < nl; i++)
            gsl_vector_set(&xj.vector, i, gsl_matrix_get(w->G, i, w->ind[j]));
        mbs_count_solve(ctx);
        gsl_linalg_LU_svx(w->Gu, w->pu, &xj.vector);
    }
    gsl_vector_view c = gsl_vector_view_array(w->c, nl);
    memcpy(w->c, w->gam, nl * sizeof(double));
    mbs_count_solve(ctx);
    gsl_linalg_LU_svx(w->Gu, w->pu, &c.vector);
    /* V = [-X; I] (Eq. (22)) and x_p = [c; 0] in the original ordering */
    gsl_matrix_set_zero(w->V);
    for (size_t j = 0; j < F; j++) {
        gsl_matrix_set(w->V, w->ind[j], j, 1.0);
        for (size_t i = 0; i < nl; i++)
            gsl_matrix_set(w->V, w->dep[i], j, -gsl_matrix_get(w->X, i, j));
    }
    memset(w->xp, 0, n * sizeof(double));
    for (size_t i = 0; i < nl; i++)
        w->xp[w->dep[i]] = w->c[i];
    /* M_hat = V^T M V, Q_hat = V^T (f - M x_p)  (Eqs. (56), (57)) */
    gsl_vector_view xp = gsl_vector_view_array(w->xp, n);
    gsl_vector_view rf = gsl_vector_view_array(w->rf, n);
    gsl_vector_view f = gsl_vector_view_array(w->f, n);
    gsl_vector_view rhs = gsl_vector_view_array(w->rhs, F);
    gsl_vector_view a = gsl_vector_view_array(w->a, F);
    gsl_blas_dsymm(CblasLeft, CblasUpper, 1.0, w->M, w->V, 0.0, w->MV);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, w->V, w->MV, 0.0, w->Mh);
    gsl_vector_memcpy(&rf.vector, &f.vector);
    gsl_blas_dsymv(CblasUpper, -1.0, w->M, &xp.vector, 1.0, &rf.vector);
    gsl_blas_dgemv(CblasTrans, 1.0, w->V, &rf.vector, 0.0, &rhs.vector);
    mbs_count_factorization(ctx);
    if (gsl_linalg_cholesky_decomp1(w->Mh) != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "cp: M_hat not positive definite");
    double rc, cond = INFINITY;
    if (gsl_linalg_cholesky_rcond(w->Mh, &rc, w->rcw) == GSL_SUCCESS && rc > 0.0)
        cond = 1.0 / rc;
    mbs_count_solve(ctx);
    gsl_linalg_cholesky_solve(w->Mh, &rhs.vector, &a.vector);
    /* q'' = x_p + V v''  (v'' = a, u'' = c - X a) */
    gsl_vector_view vd = gsl_vector_view_array(vdot, n);
    gsl_vector_memcpy(&vd.vector, &xp.vector);
    gsl_blas_dgemv(CblasNoTrans, 1.0, w->V, &a.vector, 1.0, &vd.vector);
    mbs_ns_diag_note(&w->diag, nl, cond);
    if (lambda) {
        /* G_u^T lambda = (f - M q'')_u (Eq. (48)); G_u = P^T L U, so
         * U^T L^T (P lambda) = r_u. */
        gsl_vector_memcpy(&rf.vector, &f.vector);
        gsl_blas_dsymv(CblasUpper, -1.0, w->M, &vd.vector, 1.0, &rf.vector);
        gsl_vector_view lam = gsl_vector_view_array(lambda, nl);
        for (size_t i = 0; i < nl; i++)
            lambda[i] = w->rf[w->dep[i]];
        gsl_blas_dtrsv(CblasUpper, CblasTrans, CblasNonUnit, w->Gu, &lam.vector);
        gsl_blas_dtrsv(CblasLower, CblasTrans, CblasUnit, w->Gu, &lam.vector);
        gsl_permute_vector_inverse(w->pu, &lam.vector);
    }
    return MBS_OK;
}

/* After an accepted step: recover u from g(u, v) = 0 (Newton, Eq. (50)) and u'
 * from Eq. (53); re-partition when the pivot ratio has deteriorated. */
static int cp_post_step(void *p, mbs_ctx *ctx, double t, double *q, double *v)
{
    cp_ws *w = p;
    size_t nl = w->nl, F = w->F;
    int s, converged = 0;
    double rho = 0.0, dnorm = INFINITY;
    for (int it = 0; it < 12; it++) {
        if ((s = mbs_constraint(ctx, t, q, w->g)) != MBS_OK ||
            (s = mbs_constraint_jacobian(ctx, t, q, w->G)) != MBS_OK ||
            (s = factor_gu(w, ctx, t, &rho)) != MBS_OK)
            return s;
        gsl_vector_view du = gsl_vector_view_array(w->du, nl);
        memcpy(w->du, w->g, nl * sizeof(double));
        mbs_count_newton(ctx);
        mbs_count_solve(ctx);
        w->diag.newton_iters++;
        gsl_linalg_LU_svx(w->Gu, w->pu, &du.vector);
        double qn = 0.0;
        dnorm = 0.0;
        for (size_t i = 0; i < nl; i++) {
            q[w->dep[i]] -= w->du[i];
            dnorm = fmax(dnorm, fabs(w->du[i]));
            qn = fmax(qn, fabs(q[w->dep[i]]));
        }
        if (dnorm <= w->newton_tol * (1.0 + qn)) {
            converged = 1;
            break;
        }
    }
    if (!converged)
        return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                        "cp: position recovery (Newton on g = 0) did not converge, last "
                        "correction %.3g",
                        dnorm);
    if ((s = mbs_constraint_jacobian(ctx, t, q, w->G)) != MBS_OK ||
        (s = factor_gu(w, ctx, t, &rho)) != MBS_OK)
        return s;
    if (rho < w->pivot_ratio * w->rho0) {
        if ((s = choose_partition(w, ctx, t)) != MBS_OK)
            return s;
        w->diag.repartitions++;
    }
    /* G_u u' = -G_v v' - g_t  (Eq. (53)) */
    if ((s = mbs_constraint_t(ctx, t, q, w->gt)) != MBS_OK)
        return s;
    gsl_vector_view du = gsl_vector_view_array(w->du, nl);
    for (size_t i = 0; i < nl; i++) {
        double r = -w->gt[i];
        for (size_t j = 0; j < F; j++)
            r -= gsl_matrix_get(w->G, i, w->ind[j]) * v[w->ind[j]];
        w->du[i] = r;
    }
    mbs_count_solve(ctx);
    gsl_linalg_LU_svx(w->Gu, w->pu, &du.vector);
    for (size_t i = 0; i < nl; i++)
        v[w->dep[i]] = w->du[i];
    return MBS_OK;
}

const mbs_accel_def mbs_accel_cp = {
    .name = "cp",
    .alloc = cp_alloc,
    .eval = cp_eval,
    .post_step = cp_post_step,
    .free_ws = cp_free,
    .start = cp_start,
};

static const mbs_param_def cp_params[] = {
    [P_RANK_TOL] = MBS_NS_RANK_TOL_PARAM,
    [P_PIVOT_RATIO] = {"pivot_ratio", 0.5, 1e-6, 1.0,
                       "re-partition when min|pivot(G_u)|/max|G| falls below this fraction "
                       "of its value at the last partitioning",
                       NULL, 0},
    [P_NEWTON_TOL] = {"newton_tol", 1e-12, 1e-15, 1e-3,
                      "position recovery: stop when |du| <= newton_tol (1 + |u|)", NULL, 0},
};

#define CITE "Pennestri & Valentini [pennestri_coordinate_reduction], Eqs. (47)-(57); Wehage & Haug (1982)"
const mbs_ode_formulation mbs_ode_formulation_cp = {
    .name = "cp",
    .accel = &mbs_accel_cp,
    .summary = "coordinate partitioning (LU)",
    .citation = CITE,
    .flags = MBS_M_NEEDS_FULL_RANK | MBS_M_PROJECTING,
    .lambda = 1,
    .params = cp_params,
    .n_params = sizeof cp_params / sizeof cp_params[0],
};
