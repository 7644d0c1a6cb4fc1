/* A user's method as a plugin: RATTLE and symplectic Euler with SHAKE on the
 * index-3 formulation (examples/plugin-method).
 *
 * For q' = v, M v' = f - G^T lambda, 0 = g(t, q) (n_q = n_v, H = I) with
 * a = M^-1 f and W = M^-1 G^T, one step of size h from (q_n, v_n) (Hairer, Lubich
 * & Wanner, Geometric Numerical Integration, 2nd ed., Sect. VII.1.4, Eqs. (1.25)
 * and (1.26), written with a general force f):
 *
 *   index3/rattle (order 2):
 *     v_1/2   = v_n + h/2 (a_n - W_n lambda)
 *     q_n+1   = q_n + h v_1/2,          g(t_n+1, q_n+1) = 0    (SHAKE: lambda)
 *     v_n+1   = v_1/2 + h/2 (a_n+1 - W_n+1 mu),
 *               G_n+1 v_n+1 + g_t = 0                         (RATTLE: mu, linear)
 *   index3/symplectic-euler (order 1):
 *     v_n+1   = v_n + h (a_n - W_n lambda)
 *     q_n+1   = q_n + h v_n+1,          g(t_n+1, q_n+1) = 0    (SHAKE: lambda)
 *
 * The position condition is solved for lambda by Newton's method (Jacobian
 * -c G(q_n+1) W_n with c = h^2/2 or h^2).  The forces at the new point are taken
 * at v_1/2, so for velocity-dependent forces RATTLE stays explicit (and is then
 * not symplectic).  The multipliers reported at t_n+1 are mu (RATTLE) and lambda
 * (symplectic Euler); their order is not claimed (order[2] = 0).
 *
 * Build and run (see Makefile and docs/adding-a-method.md):
 *     make && mbsbench --plugin ./rattle.so converge -p pendulum -m index3/rattle --h0 0.01
 */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mbsbench/mbsbench.h>

typedef struct rattle_variant {
    int rattle; /* 1: RATTLE, 0: symplectic Euler + SHAKE */
} rattle_variant;

enum { R_NTOL, R_MAXIT };

static const mbs_param_def rattle_params[] = {
    [R_NTOL] = {"newton_tol", 1e-14, 1e-16, 1e-4,
                "Newton stops when |g(q_n+1)| <= newton_tol (1 + |q|^2)", NULL, 0},
    [R_MAXIT] = {"newton_maxit", 30, 1, 200, "maximum Newton iterations per step", NULL, 1},
};

typedef struct rattle_state {
    int rattle, maxit;
    double ntol;
    size_t n, m;
    gsl_matrix *M, *G, *G1, *W, *S;
    gsl_permutation *pm, *ps;
    gsl_vector *a, *x, *rhs, *lam, *dl, *g;
    double *q0, *f;
} rattle_state;

static void rattle_free(void *p)
{
    rattle_state *st = p;
    if (!st)
        return;
    gsl_matrix_free(st->M);
    gsl_matrix_free(st->G);
    gsl_matrix_free(st->G1);
    gsl_matrix_free(st->W);
    gsl_matrix_free(st->S);
    gsl_permutation_free(st->pm);
    gsl_permutation_free(st->ps);
    gsl_vector_free(st->a);
    gsl_vector_free(st->x);
    gsl_vector_free(st->rhs);
    gsl_vector_free(st->lam);
    gsl_vector_free(st->dl);
    gsl_vector_free(st->g);
    free(st->q0);
    free(st->f);
    free(st);
}

static int rattle_alloc(const mbs_method_def *m, const mbs_params *p, mbs_ctx *ctx,
                        void **out)
{
    const mbs_problem *pb = ctx->pb;
    *out = NULL;
    if (pb->nq != pb->nv || pb->def->kinematic)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0, "%s needs q' = v (n_q = n_v, H = I)",
                        m->name);
    rattle_state *st = calloc(1, sizeof *st);
    if (!st)
        return MBS_NO_MEMORY;
    size_t n = pb->nv, mc = pb->nl ? pb->nl : 1;
    st->rattle = ((const rattle_variant *)m->variant)->rattle;
    st->ntol = p->val[R_NTOL];
    st->maxit = (int)p->val[R_MAXIT];
    st->n = n;
    st->m = pb->nl;
    st->M = gsl_matrix_alloc(n, n);
    st->G = gsl_matrix_alloc(mc, n);
    st->G1 = gsl_matrix_alloc(mc, n);
    st->W = gsl_matrix_alloc(n, mc);
    st->S = gsl_matrix_alloc(mc, mc);
    st->pm = gsl_permutation_alloc(n);
    st->ps = gsl_permutation_alloc(mc);
    st->a = gsl_vector_alloc(n);
    st->x = gsl_vector_alloc(n);
    st->rhs = gsl_vector_alloc(mc);
    st->lam = gsl_vector_calloc(mc);
    st->dl = gsl_vector_alloc(mc);
    st->g = gsl_vector_alloc(mc);
    st->q0 = calloc(n, sizeof(double));
    st->f = calloc(n, sizeof(double));
    if (!st->M || !st->G || !st->G1 || !st->W || !st->S || !st->pm || !st->ps || !st->a ||
        !st->x || !st->rhs || !st->lam || !st->dl || !st->g || !st->q0 || !st->f) {
        rattle_free(st);
        return MBS_NO_MEMORY;
    }
    *out = st;
    return MBS_OK;
}

/* At (t, q, v): G (into Gout), a = M^-1 f and W = M^-1 G^T. */
static int eval(rattle_state *st, mbs_ctx *ctx, double t, const double *q, const double *v,
                gsl_matrix *Gout)
{
    size_t n = st->n, m = st->m;
    int s, sign;
    if ((s = mbs_mass(ctx, t, q, st->M)) != MBS_OK || (s = mbs_force(ctx, t, q, v, st->f)) != MBS_OK)
        return s;
    if (m && (s = mbs_constraint_jacobian(ctx, t, q, Gout)) != MBS_OK)
        return s;
    mbs_count_factorization(ctx);
    if (gsl_linalg_LU_decomp(st->M, st->pm, &sign) != GSL_SUCCESS ||
        fabs(gsl_linalg_LU_det(st->M, sign)) == 0.0)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "singular mass matrix");
    for (size_t i = 0; i < n; i++)
        gsl_vector_set(st->a, i, st->f[i]);
    mbs_count_solve(ctx);
    gsl_linalg_LU_svx(st->M, st->pm, st->a);
    for (size_t k = 0; k < m; k++) {
        gsl_vector_view col = gsl_matrix_column(st->W, k);
        gsl_vector_const_view row = gsl_matrix_const_row(Gout, k);
        gsl_vector_memcpy(&col.vector, &row.vector);
        mbs_count_solve(ctx);
        gsl_linalg_LU_svx(st->M, st->pm, &col.vector);
    }
    return MBS_OK;
}

/* Solve A x = b for the m x m matrix A (overwritten), x into b. */
static int small_solve(rattle_state *st, mbs_ctx *ctx, double t, gsl_matrix *A, gsl_vector *b)
{
    int sign;
    mbs_count_factorization(ctx);
    mbs_count_solve(ctx);
    if (gsl_linalg_LU_decomp(A, st->ps, &sign) != GSL_SUCCESS ||
        fabs(gsl_linalg_LU_det(A, sign)) == 0.0 || gsl_linalg_LU_svx(A, st->ps, b) != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "singular G M^-1 G^T");
    return MBS_OK;
}

static int step(rattle_state *st, mbs_ctx *ctx, double t, double h, double *y)
{
    size_t n = st->n, m = st->m;
    double *q = y, *v = y + n, *lam_out = y + 2 * n, t1 = t + h;
    double c = st->rattle ? 0.5 * h * h : h * h;
    int s;
    memcpy(st->q0, q, n * sizeof(double));
    if ((s = eval(st, ctx, t, q, v, st->G)) != MBS_OK)
        return s;
    /* q_n+1(lambda) = q_n + h v_n + c (a_n - W_n lambda); Newton on g(q_n+1) = 0,
     * starting from the last step's multiplier. */
    for (int it = 0;; it++) {
        double qn = 0.0, gn = 0.0;
        for (size_t i = 0; i < n; i++) {
            double wl = 0.0;
            for (size_t k = 0; k < m; k++)
                wl += gsl_matrix_get(st->W, i, k) * gsl_vector_get(st->lam, k);
            q[i] = st->q0[i] + h * v[i] + c * (gsl_vector_get(st->a, i) - wl);
            qn = fmax(qn, fabs(q[i]));
        }
        if (m == 0)
            break;
        if ((s = mbs_constraint(ctx, t1, q, st->g->data)) != MBS_OK)
            return s;
        for (size_t k = 0; k < m; k++)
            gn = fmax(gn, fabs(gsl_vector_get(st->g, k)));
        if (!isfinite(gn))
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t1, "SHAKE: non-finite constraint");
        if (gn <= st->ntol * (1.0 + qn * qn))
            break;
        if (it >= st->maxit)
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t1,
                            "SHAKE: |g| = %.3g after %d Newton iterations", gn, it);
        /* d g / d lambda = -c G(q_n+1) W_n */
        mbs_count_newton(ctx);
        gsl_matrix_view G1 = gsl_matrix_submatrix(st->G1, 0, 0, m, n);
        if ((s = mbs_constraint_jacobian(ctx, t1, q, &G1.matrix)) != MBS_OK)
            return s;
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, c, &G1.matrix, st->W, 0.0, st->S);
        gsl_vector_memcpy(st->dl, st->g);
        if ((s = small_solve(st, ctx, t1, st->S, st->dl)) != MBS_OK)
            return s;
        gsl_vector_add(st->lam, st->dl); /* g(lambda + dl) ~ g - c G W dl = 0 */
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (q[i] - st->q0[i]) / h; /* v_n+1 (Euler) or v_1/2 (RATTLE) */
    if (!st->rattle) {
        for (size_t k = 0; k < m; k++)
            lam_out[k] = gsl_vector_get(st->lam, k);
        return MBS_OK;
    }
    /* RATTLE's second half: v = v_1/2 + h/2 (a - W mu) with G v + g_t = 0. */
    if ((s = eval(st, ctx, t1, q, v, st->G)) != MBS_OK)
        return s;
    if (m) {
        gsl_vector_view gt = gsl_vector_subvector(st->rhs, 0, m);
        if ((s = mbs_constraint_t(ctx, t1, q, gt.vector.data)) != MBS_OK)
            return s;
        for (size_t i = 0; i < n; i++)
            gsl_vector_set(st->x, i, v[i] + 0.5 * h * gsl_vector_get(st->a, i));
        gsl_blas_dgemv(CblasNoTrans, 1.0, st->G, st->x, 1.0, st->rhs); /* G x + g_t */
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 0.5 * h, st->G, st->W, 0.0, st->S);
        if ((s = small_solve(st, ctx, t1, st->S, st->rhs)) != MBS_OK)
            return s;
    }
    for (size_t i = 0; i < n; i++) {
        double wm = 0.0;
        for (size_t k = 0; k < m; k++)
            wm += gsl_matrix_get(st->W, i, k) * gsl_vector_get(st->rhs, k);
        v[i] += 0.5 * h * (gsl_vector_get(st->a, i) - wm);
    }
    for (size_t k = 0; k < m; k++)
        lam_out[k] = gsl_vector_get(st->rhs, k);
    return MBS_OK;
}

static int rattle_integrate(void *p, mbs_ctx *ctx, const mbs_settings *set, double *tp,
                            double *y)
{
    rattle_state *st = p;
    double t = *tp, t_end = set->t_end, h = set->h, span = t_end - t;
    int s = MBS_OK;
    for (size_t k = 0; k < st->m; k++) /* Newton's first guess: lambda_0 */
        gsl_vector_set(st->lam, k, y[2 * st->n + k]);
    while (t < t_end) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        double tn = t + h;
        if (tn >= t_end - 1e-12 * span)
            tn = t_end;
        if ((s = step(st, ctx, t, tn - t, y)) != MBS_OK)
            break;
        t = tn;
        if ((s = mbs_accept(ctx, t, y, NULL)) != MBS_OK)
            break;
    }
    *tp = t;
    return s;
}

static const mbs_method_ops rattle_ops = {
    .alloc = rattle_alloc,
    .integrate = rattle_integrate,
    .free_state = rattle_free,
};

static const rattle_variant v_rattle = {.rattle = 1}, v_euler = {.rattle = 0};

static const mbs_method_def methods[] = {
    {
        .name = "index3/rattle",
        .summary = "RATTLE (SHAKE positions, velocity projection), fixed step (plugin example)",
        .citation = "Hairer, Lubich & Wanner, GNI, Sect. VII.1.4, Eq. (1.26)",
        .order = {2, 2, 0},
        .flags = MBS_M_FIXED_STEP | MBS_M_NEEDS_FULL_RANK | MBS_M_NEEDS_REGULAR_MASS,
        .params = rattle_params,
        .n_params = sizeof rattle_params / sizeof rattle_params[0],
        .variant = &v_rattle,
        .ops = &rattle_ops,
    },
    {
        .name = "index3/symplectic-euler",
        .summary = "symplectic Euler with SHAKE, fixed step (plugin example)",
        .citation = "Hairer, Lubich & Wanner, GNI, Sect. VII.1.4, Eq. (1.25)",
        .order = {2, 1, 0}, /* positions: a leapfrog (Stoermer-Verlet) sequence */
        .flags = MBS_M_FIXED_STEP | MBS_M_NEEDS_FULL_RANK | MBS_M_NEEDS_REGULAR_MASS,
        .params = rattle_params,
        .n_params = sizeof rattle_params / sizeof rattle_params[0],
        .variant = &v_euler,
        .ops = &rattle_ops,
    },
};

MBS_PLUGIN_DEFINE_ABI();

int mbs_plugin_init(mbs_plugin_host *host)
{
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        int s = mbs_plugin_add_method(host, &methods[i]);
        if (s != MBS_OK)
            return s;
    }
    return MBS_OK;
}
