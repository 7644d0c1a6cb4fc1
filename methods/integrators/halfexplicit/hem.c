/* Half-explicit Runge-Kutta methods of Brasey and Hairer for the index-2
 * formulation ([arnold2016dae], Eq. (79) and Remark 9):
 *     q' = H(q) v,  M(q) v' = f - B^T lambda,  0 = B(q) v + g_t(t, q).
 * Stage i (i = 2, ..., s+1; stage s+1 is the new step, a_{s+1,j} = b_j, c_{s+1} = 1):
 *     Q_i = q_n + h sum_{j<i} a_ij H(Q_j) V_j                      (explicit),
 *     V_i = v_n + h sum_{j<i} a_ij V'_j,
 *     M(Q_{i-1}) V'_{i-1} = f(Q_{i-1}, V_{i-1}) - B(Q_{i-1})^T Lambda_{i-1},
 *     0 = B(Q_i) V_i + g_t(t_n + c_i h, Q_i),
 * i.e. one linear system per stage for (V'_{i-1}, Lambda_{i-1}):
 *     [ M(Q_{i-1})  B(Q_{i-1})^T ] [ V'_{i-1}      ]   [ f(Q_{i-1}, V_{i-1})                       ]
 *     [ B(Q_i)      0            ] [ Lambda_{i-1}  ] = [ -(B(Q_i) V~_i + g_t) / (h a_{i,i-1})      ]
 * with V~_i = v_n + h sum_{j<i-1} a_ij V'_j ([arnold2016dae] Eq. (81e) with the stage
 * index shifted as in Brasey & Hairer; Hairer & Wanner, Solving ODEs II,
 * Sect. VII.6).  The constraint holds at every stage and at t_{n+1}.
 *
 * Coefficients: V. Brasey, E. Hairer, "Half-explicit Runge-Kutta methods for
 * differential-algebraic systems of index 2", SIAM J. Numer. Anal. 30 (1993)
 * 538-552:
 *   hem3 - Table 2, s = 3, order 3: c = (0, 1/3, 1), a21 = 1/3, a31 = -1, a32 = 2,
 *          b = (0, 3/4, 1/4);
 *   hem4 - Table 5, s = 5, order 4: c = (0, 3/10, (4-sqrt6)/10, (4+sqrt6)/10, 1), see
 *          fill_hem4 (b are the Radau weights on the last three nodes).
 * (Transcribed from the HERK_pick_scheme routine of the "whirl" immersed-boundary
 * library, UCLA SOFIA laboratory, which labels them Brasey-Hairer Tables 2 and 5;
 * not re-checked against the paper itself.  Checked here: the explicit-RK order
 * conditions up to order 3/4 and c_i = sum_j a_ij by hand, and the observed
 * orders 3.0 and 4.0 in q, v, lambda on the pendulum, tests/check_halfexp.c.)
 *
 * Multipliers at t_{n+1}: the stage multipliers Lambda_i belong to the stage
 * times; the reported lambda_{n+1} (and v'_{n+1} for the observer) are those of
 * the index-1 system ([arnold2016dae] Eq. (84c)) at the new point (q_{n+1}, v_{n+1}),
 * one extra KKT solve per step, so lambda inherits the order of (q, v).
 *
 * Fixed step (`index2/hem3`, `index2/hem4`) and adaptive (`index2/hem4-adapt`):
 * local error by step doubling (Richardson, Hairer-Norsett-Wanner I, Sect. II.4):
 * err = ||y_{h/2,h/2} - y_h|| / (2^p - 1) in the RMS norm over q and v with
 * sc_i = atol + rtol max(|y_n,i|, |y_{n+1},i|); the two half steps are kept.
 *
 * Linear algebra (`linsol`): lu (default) assembles the stage matrix
 * densely and factors it with GSL LU.  umfpack and cholmod use the backends of
 * methods/linsol/linsol.h, which factor the symmetric KKT matrix [M B^T; B 0] only,
 * whereas the stage matrix above is not symmetric (B(Q_{i-1})^T above,
 * B(Q_i) below).  They factor K_s = [M(Q_{i-1}) B(Q_i)^T; B(Q_i) 0] once per
 * stage and solve the stage system exactly by the fixed-point iteration
 *     K_s (V'^(k+1), Lambda^(k+1)) = (f + (B(Q_i) - B(Q_{i-1}))^T Lambda^(k), r),
 * whose fixed point is the stage solution; its error map is
 * e -> S^-1 B_i M^-1 (B_i - B_{i-1})^T e with S = B_i M^-1 B_i^T, a contraction
 * of size O(h) (B_i - B_{i-1} = O(h)).  It stops when the increment of Lambda
 * reaches round-off: 4 eps ||Lambda||_inf, or increments that stop halving
 * while below HEM_STALL = 1e-8 ||Lambda||_inf (the round-off floor grows with
 * the conditioning of K_s; measured stagnation on chain:N=2000, h = 0.01:
 * 1.2e-12 .. 3.1e-12 ||Lambda||_inf; a contraction factor of O(h) cannot
 * stall above 1e-8 unless the iteration has stopped contracting).  An
 * iteration that stops contracting above that level returns
 * MBS_NEWTON_DIVERGED (the adaptive variant then halves the step).  Each
 * iteration is one solve (counted).  M and B come as triplets (kkt_eval.h):
 * the problem's triplet callbacks when it has them and H = I (nothing n x n is
 * allocated), else dense -> triplets.  lambda_{n+1} uses index1 on the same
 * backend. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <float.h>

#include "../../../core/gslalloc.h"
#include "../../formulations/index1.h"
#include "../../formulations/kkt_eval.h"
#include "../../linsol/linsol.h"
#include "../../framework/method.h"
#include "../../../problems/triplets.h"

enum { HEM_MAXS = 5, HEM_REFINE_MAXIT = 60 };
/* Stagnation of the stage fixed-point iteration below this relative increment
 * is round-off (see the header); above it, loss of contraction. */
static const double HEM_STALL = 1e-8;

/* Values of the `linsol` parameter. */
enum { HEM_LS_LU = 0, HEM_LS_UMFPACK = 1, HEM_LS_CHOLMOD = 2 };
static const mbs_param_def hem_params[] = {
    {"linsol", HEM_LS_LU, 0, 2,
     "stage solver: lu (dense nonsymmetric stage matrix, GSL LU), umfpack or cholmod "
     "(symmetric KKT backends of linsol.h with a fixed-point iteration for the "
     "nonsymmetric part)",
     "lu,umfpack,cholmod", 1},
};

typedef struct hem_tab {
    int s, order;
    double c[HEM_MAXS + 1];
    double a[HEM_MAXS + 1][HEM_MAXS]; /* row s holds b */
} hem_tab;

typedef struct hem_variant {
    void (*fill)(hem_tab *tab);
    int adaptive;
} hem_variant;

static void fill_hem3(hem_tab *t)
{
    memset(t, 0, sizeof *t);
    t->s = 3;
    t->order = 3;
    t->c[1] = 1.0 / 3.0;
    t->c[2] = 1.0;
    t->c[3] = 1.0;
    t->a[1][0] = 1.0 / 3.0;
    t->a[2][0] = -1.0;
    t->a[2][1] = 2.0;
    t->a[3][0] = 0.0;
    t->a[3][1] = 0.75;
    t->a[3][2] = 0.25;
}

static void fill_hem4(hem_tab *t)
{
    const double r6 = sqrt(6.0);
    memset(t, 0, sizeof *t);
    t->s = 5;
    t->order = 4;
    t->c[1] = 0.3;
    t->c[2] = (4.0 - r6) / 10.0;
    t->c[3] = (4.0 + r6) / 10.0;
    t->c[4] = 1.0;
    t->c[5] = 1.0;
    t->a[1][0] = 0.3;
    t->a[2][0] = (1.0 + r6) / 30.0;
    t->a[2][1] = (11.0 - 4.0 * r6) / 30.0;
    t->a[3][0] = (-79.0 - 31.0 * r6) / 150.0;
    t->a[3][1] = (-1.0 - 4.0 * r6) / 30.0;
    t->a[3][2] = (24.0 + 11.0 * r6) / 25.0;
    t->a[4][0] = (14.0 + 5.0 * r6) / 6.0;
    t->a[4][1] = (-8.0 + 7.0 * r6) / 6.0;
    t->a[4][2] = (-9.0 - 7.0 * r6) / 4.0;
    t->a[4][3] = (9.0 - r6) / 4.0;
    t->a[5][0] = 0.0;
    t->a[5][1] = 0.0;
    t->a[5][2] = (16.0 - r6) / 36.0;
    t->a[5][3] = (16.0 + r6) / 36.0;
    t->a[5][4] = 1.0 / 9.0;
}

typedef struct hem_state {
    const hem_variant *var;
    hem_tab tab;
    size_t nq, nv, nl, nlc;
    mbs_index1 *ix;            /* index-1 solve for lambda_{n+1}, v'_{n+1} */
    int kind;                  /* -1: GSL LU; else the mbs_linsol_kind */
    mbs_linsol *ls;            /* backends: K_s of the stage */
    mbs_kkt_eval ke;           /* M(Q_{i-1}) and B(Q_i) as triplets */
    mbs_triplets Bpt;          /* B(Q_{i-1}) as triplets */
    double *rv, *rl, *lk, *ln; /* right-hand side (n_v | n_l), Lambda iterates */
    gsl_matrix *M, *Bp, *Bi, *K;
    gsl_permutation *perm;
    gsl_vector *rhs, *sol;
    double *f, *gt, *vtmp;
    double *Q, *V, *Qd, *Vd, *Lam; /* stage arrays, (s+1) rows */
    double *y0, *yh, *yerr, *vdot; /* adaptive: start, single-step result, error */
} hem_state;

static void hem_free(void *p)
{
    hem_state *st = p;
    if (!st)
        return;
    mbs_index1_free(st->ix);
    mbs_linsol_free(&st->ls);
    mbs_kkt_eval_free(&st->ke);
    mbs_triplets_free(&st->Bpt);
    free(st->rv);
    free(st->rl);
    free(st->lk);
    free(st->ln);
    if (st->M)
        gsl_matrix_free(st->M);
    if (st->Bp)
        gsl_matrix_free(st->Bp);
    if (st->Bi)
        gsl_matrix_free(st->Bi);
    if (st->K)
        gsl_matrix_free(st->K);
    if (st->perm)
        gsl_permutation_free(st->perm);
    if (st->rhs)
        gsl_vector_free(st->rhs);
    if (st->sol)
        gsl_vector_free(st->sol);
    free(st->f);
    free(st->gt);
    free(st->vtmp);
    free(st->Q);
    free(st->V);
    free(st->Qd);
    free(st->Vd);
    free(st->Lam);
    free(st->y0);
    free(st->yh);
    free(st->yerr);
    free(st->vdot);
    free(st);
}

static int hem_alloc(const mbs_method_def *m, const mbs_params *p, mbs_ctx *ctx, void **out)
{
    *out = NULL;
    const mbs_problem *pb = ctx->pb;
    if (pb->flags & MBS_PB_REDUNDANT)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "half-explicit stages need full-rank constraints (%s is redundant)",
                        pb->def->name);
    hem_state *st = calloc(1, sizeof *st);
    if (!st)
        return MBS_NO_MEMORY;
    st->var = m->variant;
    st->var->fill(&st->tab);
    size_t nq = pb->nq, nv = pb->nv, nl = pb->nl, nlc = nl ? nl : 1, s1 = (size_t)st->tab.s + 1;
    st->nq = nq;
    st->nv = nv;
    st->nl = nl;
    st->nlc = nlc;
    int ls = (int)p->val[0];
    st->kind = ls == HEM_LS_UMFPACK ? MBS_LS_UMFPACK : ls == HEM_LS_CHOLMOD ? MBS_LS_CHOLMOD : -1;
    int s = mbs_index1_alloc(&st->ix, ctx,
                             st->kind == MBS_LS_UMFPACK   ? MBS_LINSOL_UMFPACK
                             : st->kind == MBS_LS_CHOLMOD ? MBS_LINSOL_CHOLMOD
                                                          : MBS_LINSOL_LU);
    if (s == MBS_OK && st->kind >= 0) {
        double aug = (pb->flags & MBS_PB_SINGULAR_MASS) ? 1.0 : 0.0;
        if ((s = mbs_linsol_alloc(&st->ls, st->kind, nv, nl, aug)) == MBS_OK)
            s = mbs_kkt_eval_init(&st->ke, ctx);
    }
    if (s != MBS_OK) {
        hem_free(st);
        return s;
    }
    int ok = 1;
    if (st->kind < 0) {
        st->M = mbs_matrix_alloc(nv, nv);
        st->Bp = mbs_matrix_alloc(nlc, nv);
        st->Bi = mbs_matrix_alloc(nlc, nv);
        st->K = mbs_matrix_alloc(nv + nl, nv + nl);
        st->perm = gsl_permutation_alloc(nv + nl);
        st->rhs = gsl_vector_alloc(nv + nl);
        st->sol = gsl_vector_alloc(nv + nl);
        ok = st->M && st->Bp && st->Bi && st->K && st->perm && st->rhs && st->sol;
    } else {
        st->rv = calloc(nv, sizeof(double));
        st->rl = calloc(nlc, sizeof(double));
        st->lk = calloc(nlc, sizeof(double));
        st->ln = calloc(nlc, sizeof(double));
        ok = st->rv && st->rl && st->lk && st->ln;
    }
    st->f = calloc(nv, sizeof(double));
    st->gt = calloc(nlc, sizeof(double));
    st->vtmp = calloc(nv, sizeof(double));
    st->Q = calloc(s1 * nq, sizeof(double));
    st->V = calloc(s1 * nv, sizeof(double));
    st->Qd = calloc(s1 * nq, sizeof(double));
    st->Vd = calloc(s1 * nv, sizeof(double));
    st->Lam = calloc(s1 * nlc, sizeof(double));
    st->y0 = calloc(nq + nv + nl, sizeof(double));
    st->yh = calloc(nq + nv, sizeof(double));
    st->yerr = calloc(nq + nv, sizeof(double));
    st->vdot = calloc(nv, sizeof(double));
    if (!ok || !st->f || !st->gt || !st->vtmp || !st->Q || !st->V || !st->Qd || !st->Vd || !st->Lam || !st->y0 ||
        !st->yh || !st->yerr || !st->vdot) {
        hem_free(st);
        return MBS_NO_MEMORY;
    }
    *out = st;
    return MBS_OK;
}

/* The stage system on an mbs_linsol backend: K_s = [M(Q_{i-1}) B_i^T; B_i 0]
 * factored once, the nonsymmetric part B_i - B_{i-1} by the fixed-point
 * iteration of the header.  On entry ke.M = M(Q_{i-1}), ke.B = B(Q_i),
 * Bpt = B(Q_{i-1}), st->f and st->rl (constraint rows) are set and lk holds the
 * starting Lambda.  Result: a (n_v) and lk. */
static int stage_solve_ls(hem_state *st, mbs_ctx *ctx, double t, int stage, double *a)
{
    size_t nv = st->nv, nl = st->nl;
    int s = mbs_kkt_factor(st->ls, st->kind, ctx, t, &st->ke.M, &st->ke.B,
                           "half-explicit stage");
    if (s != MBS_OK)
        return s;
    double prev = INFINITY;
    for (int it = 0; it < HEM_REFINE_MAXIT; it++) {
        /* f + (B_i - B_{i-1})^T Lambda^(k) */
        memcpy(st->rv, st->f, nv * sizeof(double));
        mbs_triplets_gemv(&st->ke.B, 1, 1.0, st->lk, st->rv);
        mbs_triplets_gemv(&st->Bpt, 1, -1.0, st->lk, st->rv);
        if ((s = mbs_kkt_solve(st->ls, st->kind, ctx, t, st->rv, st->rl, a, st->ln,
                               "half-explicit stage")) != MBS_OK)
            return s;
        double d = 0.0, sc = 0.0;
        for (size_t k = 0; k < nl; k++) {
            d = fmax(d, fabs(st->ln[k] - st->lk[k]));
            sc = fmax(sc, fabs(st->ln[k]));
        }
        memcpy(st->lk, st->ln, nl * sizeof(double));
        if (!isfinite(d))
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                            "half-explicit stage %d: non-finite multiplier iterate", stage);
        if (d <= 4.0 * DBL_EPSILON * sc)
            return MBS_OK;
        if (d > 0.5 * prev) {
            if (d <= HEM_STALL * sc)
                return MBS_OK; /* stagnation at round-off */
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                            "half-explicit stage %d: the fixed-point iteration for the "
                            "nonsymmetric stage matrix does not contract (increment %.3g -> "
                            "%.3g, |Lambda| %.3g); use linsol=lu or a smaller step",
                            stage, prev, d, sc);
        }
        prev = d;
    }
    return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                    "half-explicit stage %d: fixed-point iteration for the nonsymmetric stage "
                    "matrix not converged in %d iterations",
                    stage, HEM_REFINE_MAXIT);
}

/* hem_step on a backend (same stages, M and B as triplets). */
/* Q_i = q + h sum_{j<i} a_ij Q'_j: stage positions from the known stage
 * velocities ([arnold2016dae] Eqs. (81), half-explicit). */
static void stage_position(const hem_tab *tb, int i, double h, const double *q, const double *Qd,
                           size_t nq, double *Qi)
{
    for (size_t k = 0; k < nq; k++) {
        double acc = 0.0;
        for (int j = 0; j < i; j++)
            acc += tb->a[i][j] * Qd[(size_t)j * nq + k];
        Qi[k] = q[k] + h * acc;
    }
}

static int hem_step_ls(hem_state *st, mbs_ctx *ctx, double t, double h, const double *q,
                       const double *v)
{
    const hem_tab *tb = &st->tab;
    size_t nq = st->nq, nv = st->nv, nl = st->nl;
    double *Q = st->Q, *V = st->V, *Qd = st->Qd, *Vd = st->Vd, *Lam = st->Lam;
    int s;
    memcpy(Q, q, nq * sizeof(double));
    memcpy(V, v, nv * sizeof(double));
    if ((s = mbs_qdot(ctx, Q, V, Qd)) != MBS_OK ||
        (s = mbs_kkt_eval_jacobian(&st->ke, ctx, t, Q)) != MBS_OK)
        return s;
    if (mbs_triplets_copy_scaled(&st->Bpt, &st->ke.B, 1.0) != 0)
        return mbs_fail(ctx, MBS_NO_MEMORY, t, "half-explicit step: out of memory");
    memset(st->lk, 0, st->nlc * sizeof(double));
    for (int i = 1; i <= tb->s; i++) {
        int im = i - 1;
        double tim = t + tb->c[im] * h, ti = t + tb->c[i] * h, aii = tb->a[i][im];
        double *Qi = Q + (size_t)i * nq, *Qim = Q + (size_t)im * nq, *Vim = V + (size_t)im * nv;
        if ((s = mbs_kkt_eval_mass(&st->ke, ctx, tim, Qim)) != MBS_OK ||
            (s = mbs_force(ctx, tim, Qim, Vim, st->f)) != MBS_OK)
            return s;
        stage_position(tb, i, h, q, Qd, nq, Qi);
        if (nl > 0 && ((s = mbs_kkt_eval_jacobian(&st->ke, ctx, ti, Qi)) != MBS_OK ||
                       (s = mbs_constraint_t(ctx, ti, Qi, st->gt)) != MBS_OK))
            return s;
        for (size_t k = 0; k < nv; k++) {
            double acc = 0.0;
            for (int j = 0; j < im; j++)
                acc += tb->a[i][j] * Vd[(size_t)j * nv + k];
            st->vtmp[k] = v[k] + h * acc;
        }
        /* constraint rows -(B(Q_i) V~_i + g_t) / (h a_{i,i-1}) ([arnold2016dae] Eq. (81e)) */
        memcpy(st->rl, st->gt, nl * sizeof(double));
        mbs_triplets_gemv(&st->ke.B, 0, 1.0, st->vtmp, st->rl);
        for (size_t k = 0; k < nl; k++)
            st->rl[k] = -st->rl[k] / (h * aii);
        double *Vdim = Vd + (size_t)im * nv, *Vi = V + (size_t)i * nv;
        if ((s = stage_solve_ls(st, ctx, t, i, Vdim)) != MBS_OK)
            return s;
        for (size_t k = 0; k < nv; k++)
            Vi[k] = st->vtmp[k] + h * aii * Vdim[k];
        memcpy(Lam + (size_t)im * st->nlc, st->lk, nl * sizeof(double));
        if (i < tb->s) {
            if ((s = mbs_qdot(ctx, Qi, Vi, Qd + (size_t)i * nq)) != MBS_OK)
                return s;
            if (mbs_triplets_copy_scaled(&st->Bpt, &st->ke.B, 1.0) != 0)
                return mbs_fail(ctx, MBS_NO_MEMORY, t, "half-explicit step: out of memory");
        }
    }
    for (size_t k = 0; k < nq + nv; k++)
        if (!isfinite(k < nq ? Q[(size_t)tb->s * nq + k] : V[(size_t)tb->s * nv + k - nq]))
            return mbs_fail(ctx, MBS_NAN_STATE, t, "half-explicit step produced NaN/Inf");
    return MBS_OK;
}

/* One half-explicit step of size h from (t, q, v); the result is left in
 * Q[s], V[s] (q and v are not modified). */
static int hem_step(hem_state *st, mbs_ctx *ctx, double t, double h, const double *q,
                    const double *v)
{
    if (st->ls)
        return hem_step_ls(st, ctx, t, h, q, v);
    const hem_tab *tb = &st->tab;
    size_t nq = st->nq, nv = st->nv, nl = st->nl;
    double *Q = st->Q, *V = st->V, *Qd = st->Qd, *Vd = st->Vd, *Lam = st->Lam;
    int s;
    gsl_matrix_view Bp = gsl_matrix_submatrix(st->Bp, 0, 0, st->nlc, nv);
    gsl_matrix_view Bi = gsl_matrix_submatrix(st->Bi, 0, 0, st->nlc, nv);
    memcpy(Q, q, nq * sizeof(double));
    memcpy(V, v, nv * sizeof(double));
    if ((s = mbs_qdot(ctx, Q, V, Qd)) != MBS_OK ||
        (s = mbs_constraint_jacobian(ctx, t, Q, &Bp.matrix)) != MBS_OK)
        return s;
    for (int i = 1; i <= tb->s; i++) {
        int im = i - 1;
        double tim = t + tb->c[im] * h, ti = t + tb->c[i] * h, aii = tb->a[i][im];
        double *Qi = Q + (size_t)i * nq, *Qim = Q + (size_t)im * nq, *Vim = V + (size_t)im * nv;
        if ((s = mbs_mass(ctx, tim, Qim, st->M)) != MBS_OK ||
            (s = mbs_force(ctx, tim, Qim, Vim, st->f)) != MBS_OK)
            return s;
        /* Q_i explicit from the known stage velocities. */
        stage_position(tb, i, h, q, Qd, nq, Qi);
        if (nl > 0 && ((s = mbs_constraint_jacobian(ctx, ti, Qi, &Bi.matrix)) != MBS_OK ||
                       (s = mbs_constraint_t(ctx, ti, Qi, st->gt)) != MBS_OK))
            return s;
        for (size_t k = 0; k < nv; k++) {
            double acc = 0.0;
            for (int j = 0; j < im; j++)
                acc += tb->a[i][j] * Vd[(size_t)j * nv + k];
            st->vtmp[k] = v[k] + h * acc;
        }
        /* KKT system of the stage ([arnold2016dae] Eq. (81e)). */
        gsl_matrix_set_zero(st->K);
        for (size_t r = 0; r < nv; r++) {
            for (size_t c = 0; c < nv; c++)
                gsl_matrix_set(st->K, r, c, gsl_matrix_get(st->M, r, c));
            gsl_vector_set(st->rhs, r, st->f[r]);
        }
        for (size_t r = 0; r < nl; r++) {
            double bv = st->gt[r];
            for (size_t c = 0; c < nv; c++) {
                gsl_matrix_set(st->K, c, nv + r, gsl_matrix_get(st->Bp, r, c));
                gsl_matrix_set(st->K, nv + r, c, gsl_matrix_get(st->Bi, r, c));
                bv += gsl_matrix_get(st->Bi, r, c) * st->vtmp[c];
            }
            gsl_vector_set(st->rhs, nv + r, -bv / (h * aii));
        }
        int sign;
        mbs_count_factorization(ctx);
        if (gsl_linalg_LU_decomp(st->K, st->perm, &sign) != GSL_SUCCESS)
            return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "half-explicit stage %d: LU failed", i);
        for (size_t r = 0; r < nv + nl; r++)
            if (gsl_matrix_get(st->K, r, r) == 0.0)
                return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                                "half-explicit stage %d: singular stage matrix", i);
        mbs_count_solve(ctx);
        if (gsl_linalg_LU_solve(st->K, st->perm, st->rhs, st->sol) != GSL_SUCCESS)
            return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                            "half-explicit stage %d: singular stage matrix", i);
        double *Vdim = Vd + (size_t)im * nv, *Vi = V + (size_t)i * nv;
        for (size_t k = 0; k < nv; k++) {
            Vdim[k] = gsl_vector_get(st->sol, k);
            Vi[k] = st->vtmp[k] + h * aii * Vdim[k];
        }
        for (size_t k = 0; k < nl; k++)
            Lam[(size_t)im * st->nlc + k] = gsl_vector_get(st->sol, nv + k);
        if (i < tb->s) {
            if ((s = mbs_qdot(ctx, Qi, Vi, Qd + (size_t)i * nq)) != MBS_OK)
                return s;
            gsl_matrix_memcpy(st->Bp, st->Bi); /* B(Q_i) is the next stage's B(Q_{i-1}) */
        }
    }
    for (size_t k = 0; k < nq + nv; k++)
        if (!isfinite(k < nq ? Q[(size_t)tb->s * nq + k] : V[(size_t)tb->s * nv + k - nq]))
            return mbs_fail(ctx, MBS_NAN_STATE, t, "half-explicit step produced NaN/Inf");
    return MBS_OK;
}

/* Copy the step result into y = q | v and complete lambda, v' at t. */
static int finish(hem_state *st, mbs_ctx *ctx, double t, double *y)
{
    size_t nq = st->nq, nv = st->nv, s = (size_t)st->tab.s;
    memcpy(y, st->Q + s * nq, nq * sizeof(double));
    memcpy(y + nq, st->V + s * nv, nv * sizeof(double));
    return mbs_index1_accel(st->ix, ctx, t, y, y + nq, st->vdot, y + nq + nv);
}

static int integrate_fixed(hem_state *st, mbs_ctx *ctx, const mbs_settings *set, double *tp,
                           double *y)
{
    size_t nq = st->nq;
    double t0 = *tp, t = t0, h = set->h, span = set->t_end - t0;
    long nsteps = (long)ceil(span / h * (1.0 - 1e-12));
    int s = MBS_OK;
    for (long i = 1; i <= nsteps; i++) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        double tn = i == nsteps ? set->t_end : t0 + (double)i * h;
        if ((s = hem_step(st, ctx, t, tn - t, y, y + nq)) != MBS_OK)
            break;
        if ((s = finish(st, ctx, tn, y)) != MBS_OK)
            break;
        t = tn;
        if ((s = mbs_accept(ctx, t, y, st->vdot)) != MBS_OK)
            break;
    }
    *tp = t;
    return s;
}

static double rms_norm(const hem_state *st, const double *e, const double *ya,
                       const double *yb, const mbs_settings *set)
{
    size_t n = st->nq + st->nv;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double sc = set->atol + set->rtol * fmax(fabs(ya[i]), fabs(yb[i]));
        sum += (e[i] / sc) * (e[i] / sc);
    }
    return sqrt(sum / (double)n);
}

/* Step doubling: one step h into yh, two steps h/2 into y (on success). */
static int double_step(hem_state *st, mbs_ctx *ctx, double t, double h, double *y)
{
    size_t nq = st->nq, nv = st->nv, s = (size_t)st->tab.s;
    int r;
    if ((r = hem_step(st, ctx, t, h, y, y + nq)) != MBS_OK)
        return r;
    memcpy(st->yh, st->Q + s * nq, nq * sizeof(double));
    memcpy(st->yh + nq, st->V + s * nv, nv * sizeof(double));
    if ((r = hem_step(st, ctx, t, 0.5 * h, y, y + nq)) != MBS_OK)
        return r;
    memcpy(y, st->Q + s * nq, nq * sizeof(double));
    memcpy(y + nq, st->V + s * nv, nv * sizeof(double));
    return hem_step(st, ctx, t + 0.5 * h, 0.5 * h, y, y + nq);
}

static int integrate_adaptive(hem_state *st, mbs_ctx *ctx, const mbs_settings *set,
                              double *tp, double *y)
{
    size_t nq = st->nq, nv = st->nv, ny = nq + nv + st->nl, n = nq + nv;
    double t = *tp, t_end = set->t_end, span = t_end - t;
    double hmin = 1e-14 * fabs(span), p = st->tab.order;
    double h = set->h > 0.0 ? set->h : fmin(span, 0.1 * pow(set->rtol, 1.0 / (p + 1.0)));
    double denom = pow(2.0, p) - 1.0;
    int s = MBS_OK, reject = 0;
    while (t < t_end) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        int last = t + 1.01 * h >= t_end;
        if (last)
            h = t_end - t;
        memcpy(st->y0, y, ny * sizeof(double));
        int r = double_step(st, ctx, t, h, y);
        if (r != MBS_OK) {
            /* A failed stage solve: restore and halve the step. */
            memcpy(y, st->y0, ny * sizeof(double));
            mbs_count_rejected(ctx);
            h *= 0.5;
            if (h < hmin) {
                s = mbs_fail(ctx, r < 0 ? r : MBS_STEP_UNDERFLOW, t,
                             "step size %.3g below hmin after a failed stage: %s", h,
                             ctx->reason);
                break;
            }
            ctx->reason[0] = '\0';
            reject = 1;
            continue;
        }
        size_t sN = (size_t)st->tab.s;
        memcpy(y, st->Q + sN * nq, nq * sizeof(double));
        memcpy(y + nq, st->V + sN * nv, nv * sizeof(double));
        for (size_t i = 0; i < n; i++)
            st->yerr[i] = (y[i] - st->yh[i]) / denom;
        double err = rms_norm(st, st->yerr, st->y0, y, set);
        double fac = err > 0.0 ? 0.9 * pow(err, -1.0 / (p + 1.0)) : 5.0;
        fac = fmin(5.0, fmax(0.2, fac));
        if (err <= 1.0) {
            t = last ? t_end : t + h;
            if ((s = mbs_index1_accel(st->ix, ctx, t, y, y + nq, st->vdot, y + nq + nv)) !=
                    MBS_OK ||
                (s = mbs_accept(ctx, t, y, st->vdot)) != MBS_OK)
                break;
            if (reject)
                fac = fmin(fac, 1.0);
            reject = 0;
        } else {
            memcpy(y, st->y0, ny * sizeof(double));
            mbs_count_rejected(ctx);
            reject = 1;
        }
        h *= fac;
        if (t < t_end && h < hmin) {
            s = mbs_fail(ctx, MBS_STEP_UNDERFLOW, t, "step size %.3g below hmin %.3g", h, hmin);
            break;
        }
    }
    *tp = t;
    return s;
}

static int hem_integrate(void *p, mbs_ctx *ctx, const mbs_settings *set, double *tp, double *y)
{
    hem_state *st = p;
    int s = st->var->adaptive ? integrate_adaptive(st, ctx, set, tp, y)
                              : integrate_fixed(st, ctx, set, tp, y);
    if (st->ls)
        mbs_ctx_report_linsol(ctx, st->ls, st->kind);
    mbs_index1_report(ctx, st->ix);
    return s;
}

static const mbs_method_ops hem_ops = {
    .alloc = hem_alloc,
    .integrate = hem_integrate,
    .free_state = hem_free,
};

static const hem_variant hem3_fixed = {.fill = fill_hem3, .adaptive = 0};
static const hem_variant hem4_fixed = {.fill = fill_hem4, .adaptive = 0};
static const hem_variant hem4_adapt = {.fill = fill_hem4, .adaptive = 1};

#define CITE                                                                                \
    "Arnold 2016 [arnold2016dae], Eq. (79), Remark 9, Eq. (81); Brasey & Hairer, SIAM J. Numer. Anal. 30 "     \
    "(1993)"

const mbs_method_def mbs_method_index2_hem3 = {
    .name = "index2/hem3",
    .summary = "half-explicit Runge-Kutta (Brasey-Hairer, 3 stages, order 3), fixed step, on "
               "the index-2 formulation",
    .citation = CITE ", Table 2",
    .order = {3, 3, 3},
    .flags = MBS_M_FIXED_STEP | MBS_M_NEEDS_FULL_RANK,
    .params = hem_params,
    .n_params = sizeof hem_params / sizeof hem_params[0],
    .variant = &hem3_fixed,
    .ops = &hem_ops,
};

const mbs_method_def mbs_method_index2_hem4 = {
    .name = "index2/hem4",
    .summary = "half-explicit Runge-Kutta (Brasey-Hairer, 5 stages, order 4), fixed step, on "
               "the index-2 formulation",
    .citation = CITE ", Table 5",
    .order = {4, 4, 4},
    .flags = MBS_M_FIXED_STEP | MBS_M_NEEDS_FULL_RANK,
    .params = hem_params,
    .n_params = sizeof hem_params / sizeof hem_params[0],
    .variant = &hem4_fixed,
    .ops = &hem_ops,
};

const mbs_method_def mbs_method_index2_hem4_adapt = {
    .name = "index2/hem4-adapt",
    .summary = "half-explicit Runge-Kutta (Brasey-Hairer order 4), adaptive by step doubling, "
               "on the index-2 formulation",
    .citation = CITE ", Table 5; step doubling: Hairer, Norsett, Wanner I, Sect. II.4",
    .order = {4, 4, 4},
    .flags = MBS_M_ADAPTIVE | MBS_M_NEEDS_FULL_RANK,
    .params = hem_params,
    .n_params = sizeof hem_params / sizeof hem_params[0],
    .variant = &hem4_adapt,
    .ops = &hem_ops,
};

/* The methods of this file, for methods/registry.def (MBS_METHODS). */
const mbs_method_def *const mbs_methods_hem[] = {
    &mbs_method_index2_hem3,
    &mbs_method_index2_hem4,
    &mbs_method_index2_hem4_adapt,
    NULL};
