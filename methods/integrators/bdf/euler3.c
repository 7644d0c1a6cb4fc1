/* Implicit (backward) Euler on the index-3 formulation ([arnold2016dae], Eq. (77)),
 * kept to reproduce Example 9 (variable steps destroy the convergence of lambda).
 * Step t_n -> t_{n+1} = t_n + h_n ([arnold2016dae] Example 9, general M, f, H):
 *     q_{n+1} = q_n + h_n H(q_{n+1}) v_{n+1}   (fixed point in q for H != I),
 *     M(q_{n+1}) (v_{n+1} - v_n) = h_n (f(t_{n+1}, q_{n+1}, v_{n+1}) - B(q_{n+1})^T lambda_{n+1}),
 *     0 = g(t_{n+1}, q_{n+1}),
 * solved for (v_{n+1}, h_n lambda_{n+1}) with q_{n+1} eliminated and the
 * constraint scaled by 1/h_n ([arnold2016dae] Eq. (76) with k = 1, scaling of Eqs.
 * (69)-(70)), so that the iteration matrix
 *     [ M(q)  B(q)^T ]
 *     [ B(q)  0      ]      (the leading blocks of the Jacobian, [arnold2016dae] after Eq. (76))
 * stays bounded as h -> 0.  Newton's method uses this matrix with the upper
 * left block replaced by the full dr1/dv (r1 = M (v - v_n) - h f + B^T h lambda,
 * q = q_n + h H v), by forward differences, so the O(h) terms (f_v, f_q, the
 * derivatives of M and B) are included; the iteration is exact in one step for
 * M = I, f = 0 and linear constraints (Example 9).  It stops when the increment
 * is below newton_tol in RADAU5's index weights (Hairer and Wanner 1996
 * [hairer1996solving], Sect. VII.4: v, index 2, relative to (1 + |v|)/h; lambda,
 * index 3, relative to (1 + |lambda|)/h^2, where round-off through the bounded
 * scaled matrix puts O(eps/h) into v and O(eps/h^2) into lambda), or when it no
 * longer halves within 10 times its round-off floor (the increment that eps times
 * the magnitudes of the residual's terms causes through the iteration matrix:
 * converged); increments that grow above that floor are a divergence.
 *
 * Step sequences (parameter `steps`): constant h; `alternate` h, r h, h, r h, ...;
 * `last`: constant steps h' ~ h and a final step r h landing on t_end (r =
 * hratio).  Example 9: lambda_{n+1} = -(h_n + h_{n-1})/(2 h_n) (C C^T)^{-1} z'' +
 * O(h_n) + O(h_{n-1}^2/h_n), so with h_{n-1} fixed and h_n -> 0 lambda does not
 * converge, and with alternating ratios it converges to a wrong value. */
#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../core/gslalloc.h"
#include "../../framework/method.h"

enum { E_STEPS, E_HRATIO, E_NTOL, E_MAXIT };
enum { STEPS_CONSTANT = 0, STEPS_ALTERNATE = 1, STEPS_LAST = 2 };

static const mbs_param_def euler_params[] = {
    [E_STEPS] = {"steps", STEPS_CONSTANT, 0, 2,
                 "step sequence: constant h; alternate h, r h, ...; last: final step r h "
                 "(Arnold 2016 [arnold2016dae] Example 9)",
                 "constant,alternate,last", 1},
    [E_HRATIO] = {"hratio", 0.5, 1e-9, 1.0, "step ratio r of the alternate/last sequences",
                  NULL, 0},
    [E_NTOL] = {"newton_tol", 1e-13, 1e-16, 1e-2,
                "Newton tolerance on the increments of v and lambda relative to (1 + |value|) "
                "/ h^(index - 1) (RADAU5's weights)", NULL, 0},
    [E_MAXIT] = {"newton_maxit", 20, 1, 100, "maximum Newton iterations per step", NULL, 1},
};

typedef struct euler_state {
    size_t nq, nv, nl, n;
    int steps, maxit;
    double hratio, ntol;
    gsl_matrix *M, *B, *K, *Mp, *Bp;
    gsl_permutation *perm;
    gsl_vector *rhs, *sol;
    double *qn, *vn, *f, *g, *hv, *mu, *vdot;
    double *r1, *r1p, *qp, *vp, *fp; /* residual and its finite-difference copies */
} euler_state;

static void euler_free(void *p)
{
    euler_state *st = p;
    if (!st)
        return;
    gsl_matrix_free(st->M);
    gsl_matrix_free(st->B);
    gsl_matrix_free(st->K);
    gsl_matrix_free(st->Mp);
    gsl_matrix_free(st->Bp);
    free(st->r1);
    free(st->r1p);
    free(st->qp);
    free(st->vp);
    free(st->fp);
    gsl_permutation_free(st->perm);
    gsl_vector_free(st->rhs);
    gsl_vector_free(st->sol);
    free(st->qn);
    free(st->vn);
    free(st->f);
    free(st->g);
    free(st->hv);
    free(st->mu);
    free(st->vdot);
    free(st);
}

static int euler_alloc(const mbs_method_def *m, const mbs_params *p, mbs_ctx *ctx, void **out)
{
    (void)m;
    *out = NULL;
    const mbs_problem *pb = ctx->pb;
    if (pb->flags & MBS_PB_REDUNDANT)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "index3/euler needs full-rank constraints (%s is redundant)",
                        pb->def->name);
    euler_state *st = calloc(1, sizeof *st);
    if (!st)
        return MBS_NO_MEMORY;
    size_t nq = pb->nq, nv = pb->nv, nl = pb->nl, nlc = nl ? nl : 1;
    st->nq = nq;
    st->nv = nv;
    st->nl = nl;
    st->n = nv + nl;
    st->steps = (int)p->val[E_STEPS];
    st->hratio = p->val[E_HRATIO];
    st->ntol = p->val[E_NTOL];
    st->maxit = (int)p->val[E_MAXIT];
    st->M = mbs_matrix_alloc(nv, nv);
    st->B = mbs_matrix_alloc(nlc, nv);
    st->K = mbs_matrix_alloc(st->n, st->n);
    st->Mp = mbs_matrix_alloc(nv, nv);
    st->Bp = mbs_matrix_alloc(nlc, nv);
    st->r1 = calloc(nv, sizeof(double));
    st->r1p = calloc(nv, sizeof(double));
    st->qp = calloc(nq, sizeof(double));
    st->vp = calloc(nv, sizeof(double));
    st->fp = calloc(nv, sizeof(double));
    st->perm = gsl_permutation_alloc(st->n);
    st->rhs = gsl_vector_alloc(st->n);
    st->sol = gsl_vector_alloc(st->n);
    st->qn = calloc(nq, sizeof(double));
    st->vn = calloc(nv, sizeof(double));
    st->f = calloc(nv, sizeof(double));
    st->g = calloc(nlc, sizeof(double));
    st->hv = calloc(nq, sizeof(double));
    st->mu = calloc(nlc, sizeof(double));
    st->vdot = calloc(nv, sizeof(double));
    if (!st->M || !st->B || !st->K || !st->perm || !st->rhs || !st->sol || !st->qn || !st->vn ||
        !st->f || !st->g || !st->hv || !st->mu || !st->vdot || !st->Mp || !st->Bp || !st->r1 ||
        !st->r1p || !st->qp || !st->vp || !st->fp) {
        euler_free(st);
        return MBS_NO_MEMORY;
    }
    *out = st;
    return MBS_OK;
}

/* q = q_n + h H(q) v: one evaluation for H = I; otherwise fixed-point sweeps
 * from the given q (contraction rate O(h |v| |H'|)) until the update stalls at
 * round-off, so that q(v) is consistent and the finite-difference Jacobian
 * sees dq/dv including dH/dq. */
static int update_q(euler_state *st, mbs_ctx *ctx, double h, const double *v, double *q)
{
    int kin = ctx->pb->def->kinematic != NULL;
    for (int k = 0; k < 50; k++) {
        int s = mbs_qdot(ctx, q, v, st->hv);
        if (s != MBS_OK)
            return s;
        double d = 0.0;
        for (size_t i = 0; i < st->nq; i++) {
            double qi = st->qn[i] + h * st->hv[i];
            d = fmax(d, fabs(qi - q[i]) / (1.0 + fabs(qi)));
            q[i] = qi;
        }
        if (!kin || d <= 1e-15)
            break;
    }
    return MBS_OK;
}

/* r1 = M(q) (v - v_n) - h f(t, q, v) + B(q)^T mu at q (given), into r1, with
 * M, B, f evaluated into the given buffers. */
static int residual1(euler_state *st, mbs_ctx *ctx, double t, double h, const double *q,
                     const double *v, gsl_matrix *M, gsl_matrix *B, double *f, double *r1)
{
    size_t nv = st->nv, nl = st->nl;
    gsl_matrix_view Bv = gsl_matrix_submatrix(B, 0, 0, nl ? nl : 1, nv);
    int s;
    if ((s = mbs_mass(ctx, t, q, M)) != MBS_OK || (s = mbs_force(ctx, t, q, v, f)) != MBS_OK ||
        (nl && (s = mbs_constraint_jacobian(ctx, t, q, &Bv.matrix)) != MBS_OK))
        return s;
    for (size_t i = 0; i < nv; i++) {
        double r = -h * f[i];
        for (size_t j = 0; j < nv; j++)
            r += gsl_matrix_get(M, i, j) * (v[j] - st->vn[j]);
        for (size_t k = 0; k < nl; k++)
            r += gsl_matrix_get(B, k, i) * st->mu[k];
        r1[i] = r;
    }
    return MBS_OK;
}

/* Increment (dv, d(h lambda)) in RADAU5's index weights at (v, mu = h lambda). */
static double euler_norm(const euler_state *st, double h, const double *v, const double *d)
{
    double dn = 0.0;
    for (size_t i = 0; i < st->nv; i++)
        dn = fmax(dn, h * fabs(d[i]) / (1.0 + fabs(v[i])));
    for (size_t k = 0; k < st->nl; k++)
        dn = fmax(dn, h * h * fabs(d[st->nv + k]) / (h + fabs(st->mu[k])));
    return dn;
}

/* Round-off floor of the increments at the current iterate (M, B, f, r1's
 * terms and q as evaluated there; K holds the LU of the iteration matrix): K^-1
 * applied to eps times |M| |v - v_n| + h |f| + |B^T| |h lambda| (momentum rows)
 * and |B| |q| / h (constraint rows), in euler_norm.  Uses rhs and sol. */
static double euler_floor(euler_state *st, mbs_ctx *ctx, double h, const double *q,
                          const double *v)
{
    size_t nv = st->nv, nl = st->nl;
    for (size_t i = 0; i < nv; i++) {
        double a = h * fabs(st->f[i]);
        for (size_t j = 0; j < nv; j++)
            a += fabs(gsl_matrix_get(st->M, i, j) * (v[j] - st->vn[j]));
        for (size_t k = 0; k < nl; k++)
            a += fabs(gsl_matrix_get(st->B, k, i) * st->mu[k]);
        gsl_vector_set(st->rhs, i, DBL_EPSILON * a);
    }
    double qmax = 0.0; /* q' = H v with n_q != n_v: the magnitude of q */
    for (size_t j = 0; j < st->nq; j++)
        qmax = fmax(qmax, fabs(q[j]));
    for (size_t k = 0; k < nl; k++) {
        double a = 0.0;
        for (size_t j = 0; j < nv; j++)
            a += fabs(gsl_matrix_get(st->B, k, j)) * (st->nq == nv ? fabs(q[j]) : qmax);
        gsl_vector_set(st->rhs, nv + k, DBL_EPSILON * a / h);
    }
    mbs_count_solve(ctx);
    if (gsl_linalg_LU_solve(st->K, st->perm, st->rhs, st->sol) != GSL_SUCCESS)
        return INFINITY;
    return euler_norm(st, h, v, st->sol->data);
}

/* One backward Euler step of size h from y = (q, v, lambda) at t; on success y
 * holds the new state at t + h, on failure y is unchanged. */
static int euler_step(euler_state *st, mbs_ctx *ctx, double t, double h, double *y)
{
    size_t nq = st->nq, nv = st->nv, nl = st->nl, n = st->n;
    double *q = y, *v = y + nq, *lam = y + nq + nv, tn = t + h;
    int s;
    memcpy(st->qn, q, nq * sizeof(double));
    memcpy(st->vn, v, nv * sizeof(double));
    for (size_t i = 0; i < nl; i++)
        st->mu[i] = h * lam[i]; /* predictor: v_n, h lambda_n */
    double prev = INFINITY;
    for (int it = 1; it <= st->maxit; it++) {
        mbs_count_newton(ctx);
        if ((s = update_q(st, ctx, h, v, q)) != MBS_OK)
            goto fail;
        if ((s = residual1(st, ctx, tn, h, q, v, st->M, st->B, st->f, st->r1)) != MBS_OK ||
            (nl && (s = mbs_constraint(ctx, tn, q, st->g)) != MBS_OK))
            goto fail;
        /* Iteration matrix [dr1/dv B^T; B 0]; dr1/dv by forward differences
         * through q = q_n + h H v ([arnold2016dae] after Eq. (76): alpha_0 M + O(h)). */
        gsl_matrix_set_zero(st->K);
        memcpy(st->vp, v, nv * sizeof(double));
        for (size_t j = 0; j < nv; j++) {
            double dv = 1e-7 * fmax(1.0, fabs(v[j]));
            st->vp[j] = v[j] + dv;
            memcpy(st->qp, q, nq * sizeof(double));
            if ((s = update_q(st, ctx, h, st->vp, st->qp)) != MBS_OK ||
                (s = residual1(st, ctx, tn, h, st->qp, st->vp, st->Mp, st->Bp, st->fp,
                               st->r1p)) != MBS_OK)
                goto fail;
            for (size_t i = 0; i < nv; i++)
                gsl_matrix_set(st->K, i, j, (st->r1p[i] - st->r1[i]) / dv);
            st->vp[j] = v[j];
        }
        for (size_t i = 0; i < nv; i++) {
            for (size_t k = 0; k < nl; k++) {
                double b = gsl_matrix_get(st->B, k, i);
                gsl_matrix_set(st->K, i, nv + k, b);
                gsl_matrix_set(st->K, nv + k, i, b);
            }
            gsl_vector_set(st->rhs, i, -st->r1[i]);
        }
        for (size_t k = 0; k < nl; k++)
            gsl_vector_set(st->rhs, nv + k, -st->g[k] / h);
        int sign;
        mbs_count_factorization(ctx);
        if (gsl_linalg_LU_decomp(st->K, st->perm, &sign) != GSL_SUCCESS) {
            s = mbs_fail(ctx, MBS_SINGULAR_MATRIX, tn, "backward Euler: LU failed");
            goto fail;
        }
        for (size_t i = 0; i < n; i++)
            if (gsl_matrix_get(st->K, i, i) == 0.0) {
                s = mbs_fail(ctx, MBS_SINGULAR_MATRIX, tn, "backward Euler: singular matrix");
                goto fail;
            }
        mbs_count_solve(ctx);
        if (gsl_linalg_LU_solve(st->K, st->perm, st->rhs, st->sol) != GSL_SUCCESS) {
            s = mbs_fail(ctx, MBS_SINGULAR_MATRIX, tn, "backward Euler: singular matrix");
            goto fail;
        }
        for (size_t i = 0; i < n; i++) {
            double d = gsl_vector_get(st->sol, i);
            if (i < nv)
                v[i] += d;
            else
                st->mu[i - nv] += d;
        }
        double dn = euler_norm(st, h, v, st->sol->data);
        if (!isfinite(dn)) {
            s = mbs_fail(ctx, MBS_NEWTON_DIVERGED, tn, "backward Euler: non-finite iterate");
            goto fail;
        }
        /* Converged; or no longer halving within 10 times the round-off floor
         * (stagnation at round-off is convergence). */
        double fl = NAN;
        if (it >= 2 && dn >= 0.5 * prev)
            fl = euler_floor(st, ctx, h, q, v);
        if (dn <= st->ntol || (!isnan(fl) && dn <= 10.0 * fmax(st->ntol, fl))) {
            if ((s = update_q(st, ctx, h, v, q)) != MBS_OK)
                goto fail;
            for (size_t k = 0; k < nl; k++)
                lam[k] = st->mu[k] / h;
            for (size_t i = 0; i < nv; i++)
                st->vdot[i] = (v[i] - st->vn[i]) / h;
            return MBS_OK;
        }
        if (it >= 3 && dn > 2.0 * prev) {
            s = mbs_fail(ctx, MBS_NEWTON_DIVERGED, tn,
                         "backward Euler: Newton iteration diverged (contraction rate %.3g, "
                         "scaled increment %.3g above its round-off floor %.3g)",
                         dn / prev, dn, fl);
            goto fail;
        }
        prev = dn;
    }
    s = mbs_fail(ctx, MBS_NEWTON_DIVERGED, tn,
                 "backward Euler: no convergence in %d Newton iterations (h = %.3g)", st->maxit,
                 h);
fail:
    memcpy(q, st->qn, nq * sizeof(double));
    memcpy(v, st->vn, nv * sizeof(double));
    return s;
}

static int euler_integrate(void *p, mbs_ctx *ctx, const mbs_settings *set, double *tp,
                           double *y)
{
    euler_state *st = p;
    double t0 = *tp, t = t0, t_end = set->t_end, h = set->h, span = t_end - t0;
    double r = st->hratio, hc = h;
    long nfull = 0;
    if (st->steps == STEPS_LAST) {
        if (!(span > r * h))
            return mbs_fail(ctx, MBS_BAD_INPUT, t, "steps=last: hratio*h = %g must be below "
                            "t_end - t0 = %g", r * h, span);
        nfull = (long)ceil((span - r * h) / h * (1.0 - 1e-12));
        hc = (span - r * h) / (double)nfull;
    }
    int s = MBS_OK;
    for (long k = 0; t < t_end; k++) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        double hs, tn;
        if (st->steps == STEPS_LAST) {
            tn = k + 1 < nfull ? t0 + (double)(k + 1) * hc : (k + 1 == nfull ? t_end - r * h : t_end);
        } else {
            /* t_{k+1} from t0 and k, not by summing steps: the rounding of the
             * sums left a last step of ~1e-12 before t_end (linear-constraint,
             * h = 1e-5), whose lambda = (h lambda)/h was 3.4e6 off (Arnold 2016
             * [arnold2016dae], Example 9: lambda depends on the step ratio) */
            int alt = st->steps == STEPS_ALTERNATE;
            long m = alt ? (k + 1) / 2 : k + 1;
            tn = t0 + (double)m * (alt ? (1.0 + r) * h : h) + (alt && (k + 1) % 2 ? h : 0.0);
            if (tn >= t_end - 1e-9 * h)
                tn = t_end;
        }
        hs = tn - t;
        if ((s = euler_step(st, ctx, t, hs, y)) != MBS_OK)
            break;
        t = tn;
        if ((s = mbs_accept(ctx, t, y, st->vdot)) != MBS_OK)
            break;
    }
    *tp = t;
    return s;
}

static const mbs_method_ops euler_ops = {
    .alloc = euler_alloc,
    .integrate = euler_integrate,
    .free_state = euler_free,
};

const mbs_method_def mbs_method_index3_euler = {
    .name = "index3/euler",
    .summary = "implicit (backward) Euler on the index-3 formulation, prescribed variable "
               "step sequences (Example 9)",
    .citation = "Arnold 2016 [arnold2016dae], Eq. (77), Eqs. (75)-(76) with k = 1, Example 9",
    .order = {1, 1, 1},
    .flags = MBS_M_FIXED_STEP | MBS_M_IMPLICIT | MBS_M_NEEDS_FULL_RANK,
    .params = euler_params,
    .n_params = sizeof euler_params / sizeof euler_params[0],
    .variant = NULL,
    .ops = &euler_ops,
};

/* The methods of this file, for methods/registry.def (MBS_METHODS). */
const mbs_method_def *const mbs_methods_euler3[] = {&mbs_method_index3_euler, NULL};
