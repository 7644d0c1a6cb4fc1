/* Divide-and-conquer algorithm (DCA) with augmented-Lagrangian multipliers and
 * mass-orthogonal projections ([dca_augmented_lagrangian], Sects. 2-3).
 *
 * Bodies are the diagonal blocks of M (connected components of its sparsity
 * pattern); a constraint row couples the bodies its row of B = G H touches.
 * The bodies, in index order, are the leaves of a balanced binary tree
 * ([dca_augmented_lagrangian] Fig. 1); a row whose bodies lie in different subtrees is
 * eliminated at their lowest common node, a row within one body is local.
 *
 * Augmented Lagrangian ([dca_augmented_lagrangian] Eqs. (6)-(8), (17)): every multiplier is
 *     lambda = lambda* + alpha (B v' - gamma),
 * iterated from lambda* = 0 (warm=1: from the previous acceleration solve's
 * lambda), at most 10 iterations.  The paper stops at the absolute
 * |B v' - gamma| <= eps_a = 1e-10 (Sect. 4.1; its runs: ode45 at tolerance
 * 1e-6); that leaves an error independent of the step (rk4 on the five-bar:
 * q 1.5e-8 at every h <= 2.5e-3), so by default the iteration runs to the
 * round-off level of the residual relative to its terms (rtol_a) or until the
 * residual stops falling (dca_solve).  Penalty: the paper's alpha = 1e6 (its
 * range 1e5 .. 1e7, Sect. 4.4) contracts the residual by 1 / (1 + alpha s) per
 * iteration on an eigenvector of B M^-1 B^T with eigenvalue s; on the chain
 * s_min falls like 1/N^2 (0.29 per iteration at N = 1000, 0.95 at N = 1e4,
 * where 10 iterations leave |B v' - gamma| at 4e-3 of its terms), so the
 * default is alpha = 1e12: the first pass is then already the constrained
 * solution up to a relative 1/(alpha s) and the second reaches the round-off
 * floor (N = 1e3 .. 1e5).  Where that alpha's rounding spoils the solve (the
 * dynamic equations' residual, or with redundant rows a stalled multiplier
 * iteration: dca_eval), alpha is lowered by 1e3 at a time, down to 1e6, for
 * the rest of the integration.  Each iteration is one assembly and
 * one disassembly pass, written in the compliance ("inverse inertia") form:
 *   leaf (body b, local rows L, open rows O):
 *     (M_b + alpha B_L^T B_L) v_b' = f_b - B_L^T (lambda*_L - alpha gamma_L) - B_O^T lambda_O,
 *     so v_b' = Phi_b lambda_O + b_b   (Eqs. (9), (10));
 *   node (children 1, 2 joined by rows J, open rows O):
 *     D lambda_J = lambda*_J / alpha - gamma_J + sum_k B_Jk (Phi_k lambda_Ok + b_k),
 *     D = I / alpha - sum_k B_Jk Phi_kJ, symmetric positive definite even when
 *     B_J is rank deficient (the matrix C of Eq. (20)), lambda_J = c_J + E_J lambda_O,
 *     and the handle accelerations of the union follow (Eqs. (21)-(32));
 *   root: no open rows; disassembly from the root gives every lambda_J and,
 *     at the leaves, every v_b' (Sect. 2.3).
 * The dca-proj variant adds after every accepted step the mass-orthogonal
 * projections of Sect. 3 (positions: M dq + B^T s = 0, B dq = -g; velocities:
 * M dv + B^T s = 0, B dv = -(B v + g_t)), solved by the same DCA passes with
 * iteration limits 10 and tolerances eps_p = 1e-14 (Sect. 4.1) and, for the
 * velocities, the round-off of B v + g_t (rtol_a relative to its terms; the
 * paper's eps_v = 1e-12 left steps unprojected, dca_post).
 * The structure (bodies, tree, row assignment; dca_tree.c) is analysed at the
 * first evaluation and again only when the pattern of M or B changes.  The
 * passes (dca_pass.c) run on `threads` OpenMP threads: subtrees
 * below the top few nodes in parallel, with results independent of the thread
 * count bit for bit.  M and B
 * are kept as triplets: problems with mass_sparse/jacobian_sparse and H = I
 * (chain) are evaluated sparsely, so a pass costs O(N) for a chain; others
 * densely, with the union of the nonzero patterns seen so far as structure. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../framework/ode_axis.h"
#include "../../core/gslalloc.h"
#include "dca_impl.h"

/* the largest relative residual of M v' + B^T lambda = f (and, with redundant
 * rows, of B v' = gamma) accepted before the penalty is lowered (dca_eval) */
#define DCA_DYN_RTOL 1e-10
/* the lowest penalty dca_eval lowers alpha to: the paper's ([dca_augmented_lagrangian] Sect. 4.1) */
#define DCA_ALPHA_FLOOR 1e6

static void dca_free(void *p)
{
    dca_ws *w = p;
    if (!w)
        return;
    mbs_dca_free_tree(w);
    mbs_triplets_free(&w->Mt);
    mbs_triplets_free(&w->Bt);
    free(w->pm_r);
    free(w->pm_c);
    free(w->pb_r);
    free(w->pb_c);
    if (w->Md)
        gsl_matrix_free(w->Md);
    if (w->Bd)
        gsl_matrix_free(w->Bd);
    free(w->patM);
    free(w->patB);
    free(w->body);
    free(w->pos);
    free(w->rpos);
    free(w->mark);
    free(w->lam);
    free(w->lamstar);
    free(w->lamwarm);
    free(w->rres);
    free(w->f);
    free(w->gam);
    free(w->acc);
    free(w->dq);
    free(w->qd);
    free(w->gt);
    free(w->gs);
    free(w);
}

enum { P_ALPHA, P_MAXIT, P_EPSA, P_RTOLA, P_THREADS, P_MU, P_OMEGA, P_WARM };

/* Threads of the passes: threads=N when given; threads=0 (the default) takes
 * OMP_NUM_THREADS when it is set in the environment (omp_get_max_threads, which
 * also honours omp_set_num_threads) and 1 otherwise, so that sweeps, which run
 * one worker per core, stay sequential unless asked.  Without OpenMP: 1. */
static int dca_threads(double param)
{
#ifdef _OPENMP
    if (param >= 1.0)
        return (int)param;
    return getenv("OMP_NUM_THREADS") ? omp_get_max_threads() : 1;
#else
    (void)param;
    return 1;
#endif
}

static int dca_alloc_common(void **out, mbs_ctx *ctx, const mbs_params *p, int proj)
{
    const mbs_problem *pb = ctx->pb;
    *out = NULL;
    dca_ws *w = calloc(1, sizeof *w);
    if (!w)
        return MBS_NO_MEMORY;
    size_t nv = pb->nv, nl = pb->nl, nlc = nl ? nl : 1;
    w->nv = nv;
    w->nl = nl;
    w->proj = proj;
    w->alpha = w->alpha0 = p->val[P_ALPHA];
    w->alpha_min = fmin(w->alpha0, DCA_ALPHA_FLOOR);
    w->redundant = (pb->flags & MBS_PB_REDUNDANT) != 0;
    w->maxit = (int)p->val[P_MAXIT];
    w->eps_a = p->val[P_EPSA];
    w->rtol_a = p->val[P_RTOLA];
    w->nthreads = dca_threads(p->val[P_THREADS]);
    w->mu = p->val[P_MU];
    w->omega = p->val[P_OMEGA];
    w->warm = (int)p->val[P_WARM];
    w->native = pb->def->mass_sparse && pb->def->jacobian_sparse && !pb->def->kinematic;
    if (!w->native) {
        w->Md = mbs_matrix_alloc(nv, nv);
        w->Bd = mbs_matrix_alloc(nlc, nv);
        w->patM = calloc(nv * nv, 1);
        w->patB = calloc(nlc * nv, 1);
        if (!w->Md || !w->Bd || !w->patM || !w->patB) {
            dca_free(w);
            return MBS_NO_MEMORY;
        }
    }
    w->body = malloc(nv * sizeof *w->body);
    w->pos = malloc(nv * sizeof *w->pos);
    w->rpos = malloc(nlc * sizeof *w->rpos);
    w->mark = malloc((nv > nlc ? nv : nlc) * sizeof *w->mark);
    w->lam = calloc(nlc, sizeof *w->lam);
    w->lamstar = calloc(nlc, sizeof *w->lamstar);
    w->lamwarm = calloc(nlc, sizeof *w->lamwarm);
    w->rres = calloc(nlc, sizeof *w->rres);
    w->f = malloc(nv * sizeof *w->f);
    w->gam = calloc(nlc, sizeof *w->gam);
    w->acc = malloc(nv * sizeof *w->acc);
    w->dq = malloc(nv * sizeof *w->dq);
    w->qd = malloc((pb->nq > nv ? pb->nq : nv) * sizeof *w->qd);
    w->gt = calloc(nlc, sizeof *w->gt);
    w->gs = calloc(nlc, sizeof *w->gs);
    if (!w->gs || !w->rres || !w->body || !w->pos || !w->rpos || !w->mark || !w->lam || !w->lamstar || !w->lamwarm || !w->f ||
        !w->gam || !w->acc || !w->dq || !w->qd || !w->gt) {
        dca_free(w);
        return MBS_NO_MEMORY;
    }
    *out = w;
    return MBS_OK;
}

/* The augmented-Lagrangian iteration around the passes: v' (w->acc) and lambda
 * (w->lam) for the current M, B, f, gamma, from lambda* = lam0 (NULL: 0).  After
 * a pass, M v' = f - B^T lambda holds exactly ((M + alpha B^T B) v' = f -
 * B^T (lambda* - alpha gamma) with lambda = lambda* + alpha (B v' - gamma)), so
 * the residual r = B v' - gamma is the whole error of the iterate.  The
 * iteration is Richardson's on the multipliers (Uzawa's for the augmented
 * Lagrangian, [dca_augmented_lagrangian] Eq. (17)): with S = B M^-1 B^T,
 * r_{k+1} = (I + alpha S)^-1 r_k, a symmetric contraction, so the 2-norm of r
 * falls at every iteration in exact arithmetic (rate 1 / (1 + alpha s) on the
 * eigenvector of S with eigenvalue s; unchanged only on the null space of
 * B^T, i.e. a part of gamma that redundant rows cannot meet and that exerts
 * no force).  Stops when max |r| <= eps (absolute: the paper's test), when
 * max |r| <= rtol times the size of its terms (relative: rtol near round-off),
 * when |r|_2 does not fall (the floor of the passes' arithmetic, or only the
 * unattainable part left), when the contraction jumps from below 1/4 to above
 * 1/2 (the ratios |r_k| / |r_k-1| of a symmetric contraction grow slowly
 * towards its largest eigenvalue; a jump is the round-off floor reached: chain
 * N = 1e3, alpha = 1e10: 1.8e-5, 7.0e-10, 5.8e-11, 5.7e-11), or after maxit.
 * |r|_2 is summed in row order after the pass, the same for any thread count. */
static int dca_solve(dca_ws *w, mbs_ctx *ctx, double t, double eps, double rtol,
                     const double *lam0)
{
    size_t nl = w->nl;
    if (lam0)
        memcpy(w->lamstar, lam0, nl * sizeof *w->lamstar);
    else
        memset(w->lamstar, 0, (nl ? nl : 1) * sizeof *w->lamstar);
    double prev = HUGE_VAL, prev2 = HUGE_VAL;
    for (int it = 1; it <= w->maxit; it++) {
        double res, mag, ss;
        int s = mbs_dca_passes(w, &res, &mag, &ss);
        if (s != MBS_OK)
            return mbs_fail(ctx, s, t, "DCA: singular %s", "leaf or interface matrix");
        w->last_iters = it;
        w->last_rres = mag > 0.0 ? res / mag : res;
        if (res <= eps || res <= rtol * mag || ss >= prev ||
            (it > 2 && 4.0 * ss > prev && 16.0 * prev < prev2))
            break;
        prev2 = prev;
        prev = ss;
    }
    return MBS_OK;
}

/* The normwise relative residual of the dynamic equations M v' + B^T lambda = f
 * at the iterate (w->acc, w->lam): max_i |M v' + B^T lambda - f|_i over the
 * largest term.  In exact arithmetic it is 0 after every pass (dca_solve); in
 * floating point the leaf factors of M_b + alpha B_L^T B_L and the interface
 * matrices I / alpha - B Phi carry the rounding eps times their condition,
 * which grows with alpha, into it. */
static double dynamic_residual(dca_ws *w)
{
    size_t nv = w->nv;
    double *r = w->dq, *m = w->qd; /* scratch: dq has n_v entries, qd max(n_q, n_v) */
    for (size_t i = 0; i < nv; i++)
        r[i] = -w->f[i], m[i] = fabs(w->f[i]);
    for (size_t k = 0; k < w->Mt.nnz; k++) {
        double x = w->Mt.val[k] * w->acc[w->Mt.col[k]];
        r[w->Mt.row[k]] += x;
        m[w->Mt.row[k]] += fabs(x);
    }
    for (size_t row = 0; row < w->nl; row++)
        for (int k = w->rptr[row]; k < w->rptr[row + 1]; k++) {
            double x = w->rval[k] * w->lam[row];
            r[w->rcrd[k]] += x;
            m[w->rcrd[k]] += fabs(x);
        }
    double rmax = 0.0, mmax = 0.0;
    for (size_t i = 0; i < nv; i++) {
        if (!isfinite(r[i]) || !isfinite(m[i]))
            return HUGE_VAL; /* a pass broke down (bricard at alpha = 1e12, h = 0.02) */
        rmax = fmax(rmax, fabs(r[i])), mmax = fmax(mmax, m[i]);
    }
    return mmax > 0.0 ? rmax / mmax : 0.0;
}

static int same_pattern(size_t n, const size_t *r, const size_t *c, const mbs_triplets *T)
{
    return n == T->nnz && (n == 0 || (memcmp(r, T->row, n * sizeof *r) == 0 &&
                                      memcmp(c, T->col, n * sizeof *c) == 0));
}

static int save_pattern(size_t *n, size_t **r, size_t **c, const mbs_triplets *T)
{
    size_t m = T->nnz ? T->nnz : 1;
    size_t *a = realloc(*r, m * sizeof *a);
    if (!a)
        return -1;
    *r = a;
    size_t *b = realloc(*c, m * sizeof *b);
    if (!b)
        return -1;
    *c = b;
    if (T->nnz) {
        memcpy(*r, T->row, T->nnz * sizeof **r);
        memcpy(*c, T->col, T->nnz * sizeof **c);
    }
    *n = T->nnz;
    return 0;
}

/* M and B at (t, q) as triplets; (re-)analyse when the pattern changed; values
 * into the body blocks and the row storage. */
static int eval_matrices(dca_ws *w, mbs_ctx *ctx, double t, const double *q)
{
    size_t nv = w->nv, nl = w->nl;
    int s, changed = !w->analysed;
    if (w->native) {
        if ((s = mbs_mass_sparse(ctx, t, q, &w->Mt)) != MBS_OK)
            return s;
        w->Bt.nnz = 0;
        if (nl > 0 && (s = mbs_jacobian_sparse(ctx, t, q, &w->Bt)) != MBS_OK)
            return s;
        changed = changed || !same_pattern(w->pm_n, w->pm_r, w->pm_c, &w->Mt) ||
                  !same_pattern(w->pb_n, w->pb_r, w->pb_c, &w->Bt);
    } else {
        if ((s = mbs_mass(ctx, t, q, w->Md)) != MBS_OK)
            return s;
        if (nl > 0) {
            gsl_matrix_view B = gsl_matrix_submatrix(w->Bd, 0, 0, nl, nv);
            if ((s = mbs_constraint_jacobian(ctx, t, q, &B.matrix)) != MBS_OK)
                return s;
        }
        for (size_t i = 0; i < nv * nv; i++)
            if (w->Md->data[i] != 0.0 && !w->patM[i])
                changed = 1, w->patM[i] = 1;
        for (size_t r = 0; r < nl; r++)
            for (size_t j = 0; j < nv; j++)
                if (gsl_matrix_get(w->Bd, r, j) != 0.0 && !w->patB[r * nv + j])
                    changed = 1, w->patB[r * nv + j] = 1;
        if (changed) { /* triplets of the union pattern */
            size_t nm = 0, nbz = 0;
            for (size_t i = 0; i < nv * nv; i++)
                nm += w->patM[i];
            for (size_t i = 0; i < nl * nv; i++)
                nbz += w->patB[i];
            w->Mt.nnz = w->Bt.nnz = 0;
            if (mbs_triplets_reserve(&w->Mt, nm) != 0 || mbs_triplets_reserve(&w->Bt, nbz) != 0)
                return MBS_NO_MEMORY;
            for (size_t i = 0; i < nv; i++)
                for (size_t j = 0; j < nv; j++)
                    if (w->patM[i * nv + j])
                        mbs_triplets_push(&w->Mt, i, j, 0.0);
            for (size_t r = 0; r < nl; r++)
                for (size_t j = 0; j < nv; j++)
                    if (w->patB[r * nv + j])
                        mbs_triplets_push(&w->Bt, r, j, 0.0);
        }
        for (size_t k = 0; k < w->Mt.nnz; k++)
            w->Mt.val[k] = gsl_matrix_get(w->Md, w->Mt.row[k], w->Mt.col[k]);
        for (size_t k = 0; k < w->Bt.nnz; k++)
            w->Bt.val[k] = gsl_matrix_get(w->Bd, w->Bt.row[k], w->Bt.col[k]);
    }
    if (changed) {
        if ((s = mbs_dca_analyse(w)) != MBS_OK ||
            save_pattern(&w->pm_n, &w->pm_r, &w->pm_c, &w->Mt) != 0 ||
            save_pattern(&w->pb_n, &w->pb_r, &w->pb_c, &w->Bt) != 0)
            return mbs_fail(ctx, s != MBS_OK ? s : MBS_NO_MEMORY, t,
                            "DCA: structure analysis failed");
    }
    w->factored = 0; /* new M, B: the next pass factors again */
    memset(w->Mblk, 0, (w->boff[w->nb] ? w->boff[w->nb] : 1) * sizeof *w->Mblk);
    for (size_t k = 0; k < w->Mt.nnz; k++)
        w->Mblk[w->mmap[k]] += w->Mt.val[k];
    for (size_t k = 0; k < w->Bt.nnz; k++)
        w->rval[w->bmap[k]] = w->Bt.val[k];
    return MBS_OK;
}

static int dca_eval(void *ws, mbs_ctx *ctx, double t, const double *q, const double *v,
                    double *vdot, double *lambda)
{
    dca_ws *w = ws;
    int s;
    if ((s = eval_matrices(w, ctx, t, q)) != MBS_OK ||
        (s = mbs_force(ctx, t, q, v, w->f)) != MBS_OK)
        return s;
    if (w->nl > 0 && (s = mbs_gamma(ctx, t, q, v, w->gam)) != MBS_OK)
        return s;
    if (w->nl > 0 && w->mu > 0.0) {
        /* [dca_augmented_lagrangian] Eqs. (6)-(8): lambda = lambda* + alpha (Phi'' + 2 Omega mu Phi' +
         * mu^2 Phi), i.e. B v' = gamma - 2 Omega mu (B v + g_t) - mu^2 g */
        if ((s = mbs_constraint(ctx, t, q, w->gs)) != MBS_OK ||
            (s = mbs_constraint_t(ctx, t, q, w->gt)) != MBS_OK)
            return s;
        for (size_t r = 0; r < w->nl; r++) {
            double bv = w->gt[r];
            for (int k = w->rptr[r]; k < w->rptr[r + 1]; k++)
                bv += w->rval[k] * v[w->rcrd[k]];
            w->gam[r] -= 2.0 * w->omega * w->mu * bv + w->mu * w->mu * w->gs[r];
        }
    }
    mbs_count_factorization(ctx);
    /* warm=1: lambda* from the last acceleration solve of this integration
     * (the multipliers change by O(h) between stages), reset by dca_start */
    if ((s = dca_solve(w, ctx, t, w->eps_a, w->rtol_a, w->warm && w->have_warm ? w->lamwarm : NULL)) !=
        MBS_OK)
        return s;
    /* The penalty's rounding: where alpha amplifies it into the dynamic
     * equations (pendulum, five-bar and double loop in natural coordinates:
     * relative residual 2e-6 at alpha = 1e12, 2e-9 at 1e9, 3e-12 at 1e6; the
     * chain 1e-16 at any alpha), or, with redundant rows, the multiplier
     * iteration stalls above round-off (bricard at alpha = 1e12: |B v' - gamma|
     * 1e-11 .. 2.5e-7 of its terms, the drift overflowing at t = 0.58 with h =
     * 0.02), lower alpha by 1e3 for the rest of this integration, not below
     * the paper's 1e6 ([dca_augmented_lagrangian] Sect. 4.1), and solve again.
     * Not for the constraint residual without redundant rows: on the chain at
     * rest it sits at 1e-7 of its (small) terms for every alpha in 1e9 .. 1e12
     * and at 3.6e-4 after 10 iterations at 1e6. */
    while (w->alpha > w->alpha_min &&
           (dynamic_residual(w) > DCA_DYN_RTOL || (w->redundant && w->last_rres > DCA_DYN_RTOL))) {
        w->alpha = fmax(w->alpha * 1e-3, w->alpha_min);
        w->factored = 0;
        if ((s = dca_solve(w, ctx, t, w->eps_a, w->rtol_a, NULL)) != MBS_OK)
            return s;
    }
    if (w->warm && w->nl > 0) {
        memcpy(w->lamwarm, w->lam, w->nl * sizeof *w->lamwarm);
        w->have_warm = 1;
    }
    mbs_count_solve(ctx);
    memcpy(vdot, w->acc, w->nv * sizeof *vdot);
    if (lambda)
        memcpy(lambda, w->lam, w->nl * sizeof *lambda);
    return MBS_OK;
}

/* Mass-orthogonal projections ([dca_augmented_lagrangian] Sect. 3) with the DCA passes. */
static int dca_post(void *ws, mbs_ctx *ctx, double t, double *q, double *v)
{
    dca_ws *w = ws;
    const mbs_problem *pb = ctx->pb;
    size_t nv = w->nv, nl = w->nl;
    int s;
    if (!w->proj || nl == 0)
        return MBS_OK;
    memset(w->f, 0, nv * sizeof *w->f);
    for (int it = 0; it < w->maxit; it++) { /* positions: eps_p = 1e-14 */
        if ((s = mbs_constraint(ctx, t, q, w->gam)) != MBS_OK)
            return s;
        double gmax = 0.0;
        for (size_t r = 0; r < nl; r++)
            if (w->rnode[r] >= 0)
                gmax = fmax(gmax, fabs(w->gam[r]));
        if (gmax <= 1e-14)
            break;
        for (size_t r = 0; r < nl; r++)
            w->gam[r] = -w->gam[r];
        if ((s = eval_matrices(w, ctx, t, q)) != MBS_OK ||
            (s = dca_solve(w, ctx, t, 1e-14, w->rtol_a, NULL)) != MBS_OK)
            return s;
        if ((s = mbs_qdot(ctx, q, w->acc, w->qd)) != MBS_OK)
            return s;
        for (size_t i = 0; i < pb->nq; i++)
            q[i] += w->qd[i];
    }
    /* velocities: to the round-off of B v + g_t (rtol_a relative to its terms).
     * The paper's absolute eps_v = 1e-12 skipped the projection at the steps
     * whose velocity drift stayed below it, so which steps projected changed
     * with h and the error was not smooth in h (doubleloop, rk4 at h =
     * 1.25e-3: q 2.1e-11 from the projection at every step, against an error
     * of 1.9e-10; with it 2.0e-14). */
    if ((s = eval_matrices(w, ctx, t, q)) != MBS_OK ||
        (s = mbs_constraint_t(ctx, t, q, w->gt)) != MBS_OK)
        return s;
    for (int it = 0; it < 2; it++) {
        double vmax = 0.0, vmag = 0.0;
        for (size_t r = 0; r < nl; r++) {
            double bv = w->gt[r], mag = fabs(w->gt[r]);
            for (int k = w->rptr[r]; k < w->rptr[r + 1]; k++) {
                bv += w->rval[k] * v[w->rcrd[k]];
                mag += fabs(w->rval[k] * v[w->rcrd[k]]);
            }
            w->gam[r] = -bv;
            if (w->rnode[r] >= 0) {
                vmax = fmax(vmax, fabs(bv));
                vmag = fmax(vmag, mag);
            }
        }
        if (vmax <= w->rtol_a * vmag)
            break;
        if ((s = dca_solve(w, ctx, t, 1e-12, w->rtol_a, NULL)) != MBS_OK)
            return s;
        for (size_t i = 0; i < nv; i++)
            v[i] += w->acc[i];
    }
    return MBS_OK;
}

static const mbs_param_def dca_params[] = {
    [P_ALPHA] = {"alpha", 1e12, 1.0, 1e12,
                 "penalty of the augmented Lagrangian (the paper's examples: 1e6, [dca_augmented_lagrangian] "
                 "Sect. 4.1)",
                 NULL, 0},
    [P_MAXIT] = {"maxit", 10, 1, 100, "maximum multiplier iterations per solve", NULL, 1},
    [P_EPSA] = {"eps_a", 0.0, 0.0, 1.0,
                "also stop when max |B v' - gamma| <= eps_a (absolute; the paper's test, "
                "1e-10 in its Sect. 4.1); 0: off", NULL, 0},
    [P_RTOLA] = {"rtol_a", 100 * DBL_EPSILON, 0.0, 1.0,
                 "stop when max |B v' - gamma| <= rtol_a max (|gamma| + |B| |v'|), or when its "
                 "2-norm stops falling", NULL, 0},
    [P_MU] = {"mu", 0.0, 0.0, 1e6,
              "constraint stabilisation frequency of the multiplier approximation ([dca_augmented_lagrangian] "
              "Eqs. (6)-(8); its examples: 1); 0: acceleration level only", NULL, 0},
    [P_OMEGA] = {"omega", 1.0, 0.0, 1e3, "damping ratio of that stabilisation ([dca_augmented_lagrangian]: 1)",
                 NULL, 0},
    [P_THREADS] = {"threads", 0, 0, 256,
                   "threads of the assembly/disassembly passes (0: OMP_NUM_THREADS if set, "
                   "else 1); results equal bit for bit for any count", NULL, 1},
    [P_WARM] = {"warm", 0, 0, 1,
                "1: start the multiplier iteration of each acceleration solve from the last "
                "one's lambda instead of 0 (fewer iterations; every run starts cold)", NULL, 1},
};

static int alloc_plain(void **ws, mbs_ctx *ctx, const mbs_params *p)
{
    return dca_alloc_common(ws, ctx, p, 0);
}

static int alloc_proj(void **ws, mbs_ctx *ctx, const mbs_params *p)
{
    return dca_alloc_common(ws, ctx, p, 1);
}

/* The thread count goes into the run record (ctx->threads). */
static void dca_finish(void *ws, mbs_ctx *ctx)
{
    ctx->threads = ((dca_ws *)ws)->nthreads;
}

/* Every integration starts cold (lambda* = 0), so repeated runs agree. */
static int dca_start(void *ws, mbs_ctx *ctx, double t0, const double *q, const double *v)
{
    (void)ctx;
    (void)t0;
    (void)q;
    (void)v;
    dca_ws *w = ws;
    w->have_warm = 0;
    if (w->alpha != w->alpha0)
        w->factored = 0;
    w->alpha = w->alpha0; /* a lowered penalty lasts one integration */
    return MBS_OK;
}

const mbs_accel_def mbs_accel_dca = {
    .name = "dca",
    .alloc = alloc_plain,
    .eval = dca_eval,
    .start = dca_start,
    .free_ws = dca_free,
    .finish = dca_finish,
};

const mbs_accel_def mbs_accel_dca_proj = {
    .name = "dca-proj",
    .alloc = alloc_proj,
    .eval = dca_eval,
    .post_step = dca_post,
    .start = dca_start,
    .free_ws = dca_free,
    .finish = dca_finish,
};

int mbs_dca_last_iterations(void *ws)
{
    return ((dca_ws *)ws)->last_iters;
}

int mbs_dca_stats_get(void *ws, mbs_dca_stats *st)
{
    const dca_ws *w = ws;
    memset(st, 0, sizeof *st);
    st->threads = w->nthreads;
    st->last_iters = w->last_iters;
    st->passes = w->passes;
    st->pass_wall = w->pass_wall;
    if (!w->analysed)
        return -1;
    st->bodies = w->nb;
    st->subtrees = w->nsub;
    st->nodes = w->nn;
    st->levels = w->nlev;
    for (size_t l = 0; l < w->nlev; l++) {
        double mx = 0.0;
        for (size_t i = w->lvl_ptr[l]; i < w->lvl_ptr[l + 1]; i++) {
            st->work += w->nd[w->lvl_node[i]].work;
            mx = fmax(mx, w->nd[w->lvl_node[i]].work);
        }
        st->span += mx;
    }
    return 0;
}

int mbs_dca_level(void *ws, size_t l, size_t *nodes, double *work, double *maxwork)
{
    const dca_ws *w = ws;
    if (!w->analysed || l >= w->nlev)
        return -1;
    *nodes = w->lvl_ptr[l + 1] - w->lvl_ptr[l];
    *work = *maxwork = 0.0;
    for (size_t i = w->lvl_ptr[l]; i < w->lvl_ptr[l + 1]; i++) {
        *work += w->nd[w->lvl_node[i]].work;
        *maxwork = fmax(*maxwork, w->nd[w->lvl_node[i]].work);
    }
    return 0;
}

#define CITE "[dca_augmented_lagrangian], Sects. 2-3 (augmented Lagrangian DCA, mass-orthogonal projections)"
const mbs_ode_formulation mbs_ode_formulation_dca = {
    .name = "dca",
    .accel = &mbs_accel_dca,
    .summary = "on the divide-and-conquer augmented-Lagrangian accelerations",
    .citation = CITE,
    .flags = 0,
    .lambda = 1,
    .params = dca_params,
    .n_params = sizeof dca_params / sizeof dca_params[0],
};

const mbs_ode_formulation mbs_ode_formulation_dca_proj = {
    .name = "dca-proj",
    .accel = &mbs_accel_dca_proj,
    .summary = "on DCA accelerations with mass-orthogonal position/velocity "
               "projections",
    .citation = CITE,
    .flags = MBS_M_PROJECTING,
    .lambda = 1,
    .params = dca_params,
    .n_params = sizeof dca_params / sizeof dca_params[0],
};

/* The formulations of this file, for methods/registry.def (MBS_ODE_FORMULATIONS). */
const mbs_ode_formulation *const mbs_ode_formulations_dca[] = {
    &mbs_ode_formulation_dca, &mbs_ode_formulation_dca_proj, NULL};
