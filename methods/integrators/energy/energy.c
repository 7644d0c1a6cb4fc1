/* Energy-preserving and energy-decaying schemes with self-stabilised constraints
 * (Bauchau 2003 [bauchau2003selfstabilized], Int. J. Solids Struct. 40, Sections 3-5).
 *
 * Notation of the problem contract: M v' = f - G^T lambda, q' = v, g(t,q) = 0
 * ([bauchau2003selfstabilized] writes F_I + F_E + B lambda = F_A, Eq. (1); its B is our G^T).
 *
 * ep/midpoint (Sect. 3), one step t_i -> t_f = t_i + h:
 *   M_m (v_f - v_i)/h = fbar - B_m^T lambda_m          (4)
 *   (q_f - q_i)/h = (v_f + v_i)/2                       (5)
 *   g(t_f, q_f) = 0                                     (9)
 * with the discrete constraint gradient B_m and rheonomic term a_m defined by
 *   g(t_f,q_f) - g(t_i,q_i) = B_m (q_f - q_i) + a_m     (6), (17)
 * so that B_m v_m + a_m/h = 0 (Eqs. (11), (18)) holds identically and the
 * constraint forces do the work a_m . lambda_m only (Eqs. (15), (20)-(21)):
 *   E_f - E_i = a_m . lambda_m      (no applied loads; 0 if scleronomic).
 * B_m: Gonzalez's discrete gradient (O. Gonzalez, J. Nonlinear Sci. 6 (1996)) of
 * the time-averaged constraint gbar(q) = (g(t_i,q) + g(t_f,q))/2,
 *   B_k = grad gbar_k(q_m) + [gbar_k(q_f) - gbar_k(q_i) - grad gbar_k(q_m).dq] dq^T/|dq|^2,
 * and a_m = ((g(t_f,q_i) - g(t_i,q_i)) + (g(t_f,q_f) - g(t_i,q_f)))/2.  For
 * quadratic constraints the correction vanishes (B_m = G(q_m), [bauchau2003selfstabilized] Sect.
 * 6.1); for e3 . d1(t) it gives B_m = d1m, a_m = e3m . (d1f - d1i) (Eq. (43)).
 * The correction is added only when Eq. (6) is violated beyond round-off.
 * Non-holonomic constraints A v + a = 0 (problem.h, MBS_PB_NONHOLONOMIC; ep only):
 * Eq. (22), A(q_m) v_m + a(t_m, q_m) = 0 at the midpoint in place of (9) for
 * those rows, B_m = A(q_m); their forces do the work h a_m . lambda_m (0 for
 * a = 0, so energy is preserved).  ed/tdg: the paper gives no formula ("extending
 * ... is straightforward", Sect. 4); we use the analogue of Eq. (29),
 * B_g (q_f - q_j) + B_h (q_j - q_i) + h a_g = 0 with B_g = A(q_g), B_h = A(q_h),
 * for which the constraint work of Eq. (32) is h a_g . lambda_g (0 for a = 0).
 *
 * Forces: with force=gradient the applied force is taken as f = -grad V with
 * V(q) = energy(t, q, 0) and discretised by the same discrete gradient, so its
 * work equals -(V_f - V_i) (Eq. (14)); force=midpoint uses f(t_m, q_m, v_m);
 * force=auto (default) picks gradient when the problem has an energy and its
 * force matches -grad V (central differences) and does not depend on v at the
 * initial point.  Inertial forces: M (v_f - v_i)/h with M evaluated at the
 * midpoint; its work is exactly K_f - K_i (Eq. (13)) when M is constant (all
 * Cartesian/director problems of the suite), otherwise energy is not exactly
 * preserved.
 *
 * ed/tdg (Sect. 4), unknowns q_j, v_j (the state just after t_i: the scheme is
 * the linear time-discontinuous Galerkin method when a = 1, so t_j = t_i^+),
 * q_f, v_f, lambda_g:
 *   M (v_f - v_i)/h = F_g - B_g^T lambda_g                          (23)
 *   M (v_j - v_i)/h = F_h + (1/3)(B_g - B_h)^T lambda_g               (24)
 *   (q_f - q_i)/h = (v_f + v_j)/2                                     (25)
 *   3 (q_j - q_i)/h = -[(v_f - v_i) - a (v_j - v_i)]/2                (26)
 *   g(t_f, q_f) = 0                                                    (9)
 * with B_g, B_h the discrete gradients of Eqs. (27), (28) (B_g carries the
 * rheonomic term a_g between t_j = t_i and t_f), F_g = mbs_energy_fbar(q_j, q_f) and
 *   F_h = (mbs_energy_fbar(q_i, q_j) - mbs_energy_fbar(q_j, q_f))/3 + (a/6)(f(t_i,q_j,v_j) - f(t_i,q_i,v_i)),
 * so that (q_f - q_i).F_g + 3 (q_j - q_i).F_h = -(V_f - V_i) - (a/2) c_E^2 with
 * c_E^2 = (q_j - q_i).(grad V(q_j) - grad V(q_i)) (= |q_j - q_i|_K^2 for a
 * linear spring K, >= 0 for convex V; 0 for gravity).  The garbled Eqs. (24),
 * (26) of the extraction were rederived from the work balance (30)-(32) and
 * from the linear TDG method, which the scheme is for a = 1.  Energy balance:
 *   E_f - E_i = -(a/2)(|v_j - v_i|_M^2 + c_E^2) + a_g . lambda_g     (Eq. (33)).
 * On the linear oscillator (M = 1, K = w^2) the amplification matrix has
 * spectral radius 1 for a = 0 and (1 - a)/(1 + a) as w h -> infinity, local
 * error O(h^4) for a = 1 and a = 0.5 (checked numerically); a in [0, 1].
 *
 * Multipliers: the schemes' own multipliers are mid-step quantities (Sect. 3:
 * "the Lagrange multipliers clearly are mid-point quantities").  Besides the
 * half-step offset they carry an alternating component: with Eq. (11) the
 * end-point residuals c_n = G(q_n) v_n obey c_{n+1} = -c_n + O(h^2) (for
 * quadratic g), so the velocities have an O(h^2) alternating normal part
 * excited by the start, and lambda_m = -(G M^-1 G^T)^-1 G (v_f - v_i)/h an O(h)
 * one (measured: order 1 of lambda_m on rigidbody and pendulum:x0=0.2; order 2
 * on pendulum with x0 = 0, which starts at the bottom of the swing where |v| is
 * stationary and the excitation vanishes; the mean of two consecutive lambda_m
 * converges at order 2 (EP) and 3 (ED) to lambda at the common step point).  lambda=end (default) therefore puts the index-1 multipliers at
 * (t_n, q_n, v_n) into the state (one extra KKT solve per step; second order
 * for EP); lambda=mid the raw mid-step values of the last step.
 *
 * Newton: simplified Newton on the step equations for the increments
 * q_f - q_i (and q_j - q_i), from which the velocities are formed (q_f is
 * rounded to eps |q|, and (q_f - q_i) / h would carry that rounding times 1 / h
 * into v: twomass over [0, 5] at h = 1.25e-4, ed/tdg v 1.8e-10 that way, 1.6e-14
 * from the increments) (iteration matrix with the
 * mass matrix, the discrete gradients, the constraint Jacobian at q_f and, with
 * fjac, force derivatives by finite differences at the predicted midpoint once
 * per step; the curvature of the constraints is neglected, which costs O(h^2)
 * in the contraction rate).  The matrix is factorised at the first iteration
 * of a step and again only when an update is not 4 times smaller than the
 * previous one; iterated until max_i |dq_i|/(1 + |q_i|) and the multiplier
 * update measured as a displacement, (h^2/2)|dlambda|/max M_ii, are below
 * newton_tol, or until the updates stop halving within 10 times a round-off
 * floor that lies above newton_tol (energy_floor: stagnation is convergence);
 * updates that grow above the floor are a divergence. */
#include "../../../core/gslalloc.h"
#include "energy.h"

#include <float.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_permutation.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../formulations/index1.h"
#include "energy_impl.h"

#define COMMON_PARAMS                                                                        \
    [P_TOL] = {"newton_tol", 1e-12, 1e-15, 1e-3,                                             \
               "Newton stops when max |dq_i|/(1+|q_i|) and (h^2/2)|dlambda|/max M_ii are "  \
               "below newton_tol",                                                           \
               NULL, 0},                                                                     \
    [P_MAXIT] = {"newton_max", 30, 1, 500, "maximum Newton iterations per step", NULL, 1},   \
    [P_FORCE] = {"force", FORCE_AUTO, 0, 2,                                                  \
                 "applied force: auto, gradient (discrete gradient of V = energy(t,q,0)), "  \
                 "midpoint (f at the midpoint)",                                             \
                 "auto,gradient,midpoint", 0},                                               \
    [P_LAMBDA] = {"lambda", LAMBDA_END, 0, 1,                                                \
                  "multipliers in the state: end (index-1 multipliers at (t_n, q_n, v_n)), " \
                  "mid (the scheme's own mid-step multipliers of the last step)",            \
                  "end,mid", 0},                                                             \
    [P_FJAC] = {"fjac", FJAC_AUTO, 0, 2,                                                     \
                "force derivatives in the Newton matrix: auto (finite differences once per " \
                "step unless f is constant), none, fd",                                      \
                "auto,none,fd", 0}

static const mbs_param_def ep_params[] = {COMMON_PARAMS};
static const mbs_param_def ed_params[] = {
    COMMON_PARAMS,
    [P_A] = {"a", 1.0, 0.0, 1.0,
             "dissipation parameter of Bauchau 2003 [bauchau2003selfstabilized] Eq. (26): 1 = TDG (maximal), 0 = none", NULL,
             0},
};

static void ws_free(void *state)
{
    energy_ws *w = state;
    if (!w)
        return;
    gsl_matrix *mats[] = {w->M, w->Bg, w->Bh, w->Gf, w->Gt, w->J, w->Jg, w->Fq, w->Fv};
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
        if (mats[i])
            gsl_matrix_free(mats[i]);
    mbs_index1_free(w->ix);
    if (w->perm)
        gsl_permutation_free(w->perm);
    if (w->pg)
        gsl_permutation_free(w->pg);
    gsl_vector *vecs[] = {w->r, w->dx, w->rg, w->dg};
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
        if (vecs[i])
            gsl_vector_free(vecs[i]);
    double *arr[] = {w->qi, w->vi, w->qf, w->vf, w->qj, w->vj, w->lam, w->lam0,
                     w->qm, w->vm, w->dq, w->zero, w->fg, w->fh, w->ga, w->gb,
                     w->gc, w->gd, w->ag, w->gf, w->tmp, w->acc, w->lend, w->fi, w->fj,
                     w->pf, w->pj, w->dvf, w->dvj,
                     w->f0, w->f1, w->qx, w->vx, w->adiag};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++)
        free(arr[i]);
    free(w);
}

static int ws_alloc(const mbs_method_def *m, const mbs_params *params, mbs_ctx *ctx,
                    void **state)
{
    const mbs_problem *pb = ctx->pb;
    *state = NULL;
    if (pb->def->kinematic || pb->nq != pb->nv)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "%s needs q' = v (no kinematic matrix H); %s has n_q=%zu, n_v=%zu",
                        m->name, pb->def->name, pb->nq, pb->nv);
    energy_ws *w = calloc(1, sizeof *w);
    if (!w)
        return MBS_NO_MEMORY;
    w->ed = m == &mbs_method_ed_tdg;
    w->tol = params->val[P_TOL];
    w->maxit = (long)params->val[P_MAXIT];
    w->lambda_end = (int)params->val[P_LAMBDA] == LAMBDA_END;
    if (w->ed) {
        w->a = params->val[P_A];
        if (!(w->a >= 0.0 && w->a <= 1.0)) {
            ws_free(w);
            return mbs_fail(ctx, MBS_BAD_INPUT, pb->t0, "%s: a=%g must lie in [0, 1]",
                            m->name, w->a);
        }
    }
    w->rheo = pb->def->constraint_t != NULL || (pb->flags & MBS_PB_RHEONOMIC);
    size_t n = pb->nq, nl = pb->nl, nlc = nl ? nl : 1;
    w->n = n;
    w->nl = nl;
    w->nlc = nlc;
    w->nx = (w->ed ? 2 * n : n) + nl;
    size_t ng = 2 * n + 2 * nl;
    w->M = mbs_matrix_alloc(n, n);
    w->Bg = mbs_matrix_alloc(nlc, n);
    w->Bh = mbs_matrix_alloc(nlc, n);
    w->Gf = mbs_matrix_alloc(nlc, n);
    w->Gt = mbs_matrix_alloc(nlc, n);
    w->J = mbs_matrix_alloc(w->nx, w->nx);
    w->Fq = mbs_matrix_alloc(n, n);
    w->Fv = mbs_matrix_alloc(n, n);
    w->perm = gsl_permutation_alloc(w->nx);
    w->r = gsl_vector_alloc(w->nx);
    w->dx = gsl_vector_alloc(w->nx);
    if (!w->ed) {
        w->Jg = mbs_matrix_alloc(ng, ng);
        w->pg = gsl_permutation_alloc(ng);
        w->rg = gsl_vector_alloc(ng);
        w->dg = gsl_vector_alloc(ng);
    }
    int fail = !w->Fq || !w->Fv || !w->M || !w->Bg || !w->Bh || !w->Gf || !w->Gt || !w->J ||
               !w->perm || !w->r ||
               !w->dx || (!w->ed && (!w->Jg || !w->pg || !w->rg || !w->dg));
    double **nv_arr[] = {&w->qi, &w->vi, &w->qf, &w->vf, &w->qj, &w->vj, &w->qm,
                         &w->vm, &w->dq, &w->zero, &w->fg, &w->fh, &w->tmp, &w->acc,
                         &w->fi, &w->fj, &w->f0, &w->f1, &w->qx, &w->vx,
                         &w->pf, &w->pj, &w->dvf, &w->dvj};
    for (size_t i = 0; i < sizeof nv_arr / sizeof nv_arr[0]; i++)
        fail |= !(*nv_arr[i] = calloc(n, sizeof(double)));
    double **nl_arr[] = {&w->lam, &w->lam0, &w->ga, &w->gb, &w->gc, &w->gd,
                         &w->ag, &w->gf, &w->lend, &w->adiag};
    for (size_t i = 0; i < sizeof nl_arr / sizeof nl_arr[0]; i++)
        fail |= !(*nl_arr[i] = calloc(nlc, sizeof(double)));
    if (fail) {
        ws_free(w);
        return MBS_NO_MEMORY;
    }
    if (w->lambda_end) {
        int s = mbs_index1_alloc(&w->ix, ctx, MBS_LINSOL_LU);
        if (s != MBS_OK) {
            ws_free(w);
            return s;
        }
    }
    /* Resolve force=auto at the problem's initial point. */
    int mode = (int)params->val[P_FORCE];
    if (mode == FORCE_GRADIENT && !pb->def->energy) {
        ws_free(w);
        return mbs_fail(ctx, MBS_BAD_INPUT, pb->t0,
                        "%s: force=gradient needs the energy callback, %s has none", m->name,
                        pb->def->name);
    }
    if (mode == FORCE_AUTO) {
        int have_lambda = 0;
        int s = pb->def->initial(pb, w->qf, w->vf, w->lam, &have_lambda);
        w->gradient = s == MBS_OK && mbs_energy_force_is_gradient(ctx, w, pb->t0, w->qf, w->vf);
        ctx->reason[0] = '\0';
    } else {
        w->gradient = mode == FORCE_GRADIENT;
    }
    int fj = (int)params->val[P_FJAC];
    w->use_fjac = fj == FJAC_FD;
    if (fj == FJAC_AUTO) {
        int have_lambda = 0;
        int s = pb->def->initial(pb, w->qf, w->vf, w->lam, &have_lambda);
        w->use_fjac = s != MBS_OK || !mbs_energy_force_is_constant(ctx, w, pb->t0, w->qf, w->vf);
        ctx->reason[0] = '\0';
    }
    *state = w;
    return MBS_OK;
}

/* Round-off floor of the Newton increments in the norm of the steps (positions
 * relative to 1 + |q|, multipliers as displacements (h^2/2)|dlambda|/max M_ii):
 * the increment that perturbations eps |M| |q| + eps (h^2/2) |B^T| |lambda| of the
 * momentum rows and eps |G| |q_f| of the constraint rows cause through the
 * current factorisation (M, B_g, G_f as last evaluated).  Uses w->r and w->dx.
 * An iteration that no longer halves within 10 times this floor, when the floor
 * lies above newton_tol, has converged: stagnation at round-off. */
static int energy_floor(energy_ws *w, mbs_ctx *ctx, double t, double c, double ms, double *out)
{
    size_t n = w->n, nl = w->nl, nb = w->ed ? 2 : 1;
    double *r = w->r->data, *z = w->dx->data;
    for (size_t b = 0; b < nb; b++) {
        const double *x = b ? w->qj : w->qf;
        for (size_t i = 0; i < n; i++) {
            double a = 0.0;
            for (size_t j = 0; j < n; j++)
                a += fabs(gsl_matrix_get(w->M, i, j) * x[j]);
            for (size_t k = 0; k < nl; k++)
                a += c * fabs(gsl_matrix_get(w->Bg, k, i) * w->lam[k]);
            r[b * n + i] = DBL_EPSILON * a;
        }
    }
    for (size_t k = 0; k < nl; k++) {
        double a = 0.0;
        for (size_t j = 0; j < n; j++)
            a += fabs(gsl_matrix_get(w->Gf, k, j) * w->qf[j]);
        r[nb * n + k] = DBL_EPSILON * a;
    }
    int s = mbs_energy_lu_solve(ctx, w->J, w->perm, w->r, w->dx, t);
    if (s != MBS_OK)
        return s;
    double e = 0.0;
    for (size_t b = 0; b < nb; b++)
        for (size_t i = 0; i < n; i++)
            e = fmax(e, fabs(z[b * n + i]) / (1.0 + fabs((b ? w->qj : w->qf)[i])));
    for (size_t k = 0; k < nl; k++)
        e = fmax(e, c * fabs(z[nb * n + k]) / ms);
    *out = e;
    return MBS_OK;
}

/* The stopping test of both steps after an update of scaled size dn (previous
 * prev): *done = 1 when converged (below newton_tol, or stagnating within 10
 * times a round-off floor that lies above newton_tol).  Returns MBS_OK or the
 * failure status of a divergence: growth with a matrix factorised in this
 * iteration (fresh; with an older one the next iteration refactorises). */
static int energy_converged(energy_ws *w, mbs_ctx *ctx, double t, double h, double c,
                            double ms, double dn, double prev, long it, int fresh, int *done)
{
    *done = dn <= w->tol;
    if (*done || it < 2 || dn < 0.5 * prev)
        return MBS_OK;
    double fl;
    int s = energy_floor(w, ctx, t, c, ms, &fl);
    if (s != MBS_OK)
        return s;
    *done = fl > w->tol && dn <= 10.0 * fl;
    if (!*done && fresh && it >= 3 && dn > 2.0 * prev && prev > 0.0)
        return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                        "Newton iteration diverged at t=%g (h=%g): contraction rate %.3g, "
                        "scaled increment %.3g above its round-off floor %.3g",
                        t, h, dn / prev, dn, fl);
    return MBS_OK;
}

/* Eq. (5) in increments: the Newton unknown is pf = q_f - q_i, and
 * v_f = v_i + 2 (pf - h v_i) / h, q_f = q_i + pf (see ed_velocities below). */
static void ep_velocities(energy_ws *w, double h)
{
    for (size_t i = 0; i < w->n; i++) {
        w->dvf[i] = 2.0 * (w->pf[i] - h * w->vi[i]) / h;
        w->qf[i] = w->qi[i] + w->pf[i];
        w->vf[i] = w->vi[i] + w->dvf[i];
    }
}

/* One EP step from (w->qi, w->vi) at t; result in w->qf, w->vf, w->lam. */
static int ep_step(energy_ws *w, mbs_ctx *ctx, double t, double h)
{
    size_t n = w->n, nl = w->nl;
    double tf = t + h, tm = t + 0.5 * h, c = 0.5 * h * h;
    for (size_t i = 0; i < n; i++) {
        w->pf[i] = h * w->vi[i];
        w->qm[i] = w->qi[i] + 0.5 * h * w->vi[i];
    }
    int s0, refresh = 1;
    double prev = INFINITY;
    if (w->use_fjac && (s0 = mbs_energy_force_jacobian(w, ctx, tm, w->qm, w->vi)) != MBS_OK)
        return s0;
    for (long it = 1;; it++) {
        if (it > w->maxit)
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                            "Newton did not converge in %ld iterations (step h=%g)", w->maxit, h);
        mbs_count_newton(ctx);
        int s;
        ep_velocities(w, h);
        if ((s = mbs_energy_dgrad(w, ctx, t, w->qi, tf, w->qf, w->Bg, w->ag, w->gf)) != MBS_OK ||
            (s = mbs_energy_fbar(w, ctx, tm, w->qi, w->vi, w->qf, w->vf, w->fg)) != MBS_OK)
            return s;
        for (size_t i = 0; i < n; i++)
            w->qm[i] = 0.5 * (w->qi[i] + w->qf[i]);
        if ((s = mbs_mass(ctx, tm, w->qm, w->M)) != MBS_OK)
            return s;
        if (refresh && nl && (s = mbs_constraint_jacobian(ctx, tf, w->qf, w->Gf)) != MBS_OK)
            return s;
        /* Residual (4) x h^2/2 with (5) inserted, and (9). */
        for (size_t i = 0; i < n; i++) {
            double r = -c * w->fg[i];
            for (size_t j = 0; j < n; j++)
                r += gsl_matrix_get(w->M, i, j) * (w->pf[j] - h * w->vi[j]);
            for (size_t k = 0; k < nl; k++)
                r += c * gsl_matrix_get(w->Bg, k, i) * w->lam[k];
            gsl_vector_set(w->r, i, -r);
        }
        for (size_t k = 0; k < nl; k++)
            gsl_vector_set(w->r, n + k, -w->gf[k]);
        if (refresh) {
            gsl_matrix_set_zero(w->J);
            /* d fbar / d q_f = f_q/2 + f_v/h (q_m = (q_i+q_f)/2, v_m = (q_f-q_i)/h) */
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                    gsl_matrix_set(w->J, i, j,
                                   gsl_matrix_get(w->M, i, j) -
                                       (w->use_fjac ? c * (0.5 * gsl_matrix_get(w->Fq, i, j) +
                                                           gsl_matrix_get(w->Fv, i, j) / h)
                                                    : 0.0));
            /* constraint rows: G(t_f, q_f) for g_f = 0 (9); for non-holonomic rows
             * the derivative of h (A_m v_m + a_m) with respect to q_f, A(q_m) with
             * the derivative of A_m itself neglected (as the curvature above) */
            size_t nh0 = nl - ctx->pb->nnh;
            for (size_t k = 0; k < nl; k++)
                for (size_t j = 0; j < n; j++) {
                    gsl_matrix_set(w->J, j, n + k, c * gsl_matrix_get(w->Bg, k, j));
                    gsl_matrix_set(w->J, n + k, j,
                                   gsl_matrix_get(k < nh0 ? w->Gf : w->Bg, k, j));
                }
            if ((s = mbs_energy_factor(ctx, w->J, w->perm, t)) != MBS_OK)
                return s;
        }
        double ms = mbs_energy_mass_scale(w->M);
        if ((s = mbs_energy_lu_solve(ctx, w->J, w->perm, w->r, w->dx, t)) != MBS_OK)
            return s;
        double dqn = 0.0, dln = 0.0;
        for (size_t i = 0; i < n; i++) {
            w->pf[i] += gsl_vector_get(w->dx, i);
            dqn = fmax(dqn, fabs(gsl_vector_get(w->dx, i)) / (1.0 + fabs(w->qi[i] + w->pf[i])));
        }
        for (size_t k = 0; k < nl; k++) {
            w->lam[k] += gsl_vector_get(w->dx, n + k);
            dln = fmax(dln, fabs(gsl_vector_get(w->dx, n + k)));
        }
        if (!isfinite(dqn) || !isfinite(dln))
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t, "Newton produced NaN/Inf (h=%g)", h);
        /* Componentwise |dq_i| / (1 + |q_i|) and the multiplier update as a
         * displacement, (h^2/2) |dlambda| / max M_ii. */
        double dn = fmax(dqn, c * dln / ms);
        int done, cs = energy_converged(w, ctx, t, h, c, ms, dn, prev, it, refresh, &done);
        if (cs != MBS_OK)
            return cs;
        if (done)
            break;
        /* Modified Newton: keep the factorisation while it contracts fast. */
        refresh = dn > 0.25 * prev;
        prev = dn;
    }
    ep_velocities(w, h);
    return MBS_OK;
}

/* Velocities of the ED scheme from Eqs. (25), (26) in increments: pf = q_f - q_i,
 * pj = q_j - q_i (the Newton unknowns) give dvj = v_j - v_i, dvf = v_f - v_i, and
 * q_f = q_i + pf, q_j = q_i + pj for the evaluations.  Formed from the increments,
 * not from the rounded q_f, q_j: (q_f - q_i) / h would carry their rounding eps |q|
 * times 1 / h into the velocities (a floor that grows as h falls). */
static void ed_velocities(energy_ws *w, double h)
{
    double a = w->a;
    for (size_t i = 0; i < w->n; i++) {
        double u = 2.0 * (w->pf[i] - h * w->vi[i]) / h;
        w->dvj[i] = (u + 6.0 * w->pj[i] / h) / (1.0 + a);
        w->dvf[i] = u - w->dvj[i];
        w->qf[i] = w->qi[i] + w->pf[i];
        w->qj[i] = w->qi[i] + w->pj[i];
        w->vj[i] = w->vi[i] + w->dvj[i];
        w->vf[i] = w->vi[i] + w->dvf[i];
    }
}

/* One ED step; unknowns x = (q_f - q_i, q_j - q_i, lambda_g). */
static int ed_step(energy_ws *w, mbs_ctx *ctx, double t, double h)
{
    size_t n = w->n, nl = w->nl;
    double tf = t + h, tm = t + 0.5 * h, c = 0.5 * h * h, a = w->a;
    for (size_t i = 0; i < n; i++) {
        w->pf[i] = h * w->vi[i];
        w->pj[i] = 0.0;
    }
    int s0;
    if (a > 0.0 && (s0 = mbs_force(ctx, t, w->qi, w->vi, w->fi)) != MBS_OK)
        return s0;
    for (size_t i = 0; i < n; i++)
        w->qm[i] = w->qi[i] + 0.5 * h * w->vi[i];
    if (w->use_fjac && (s0 = mbs_energy_force_jacobian(w, ctx, tm, w->qm, w->vi)) != MBS_OK)
        return s0;
    int refresh = 1;
    double prev = INFINITY;
    for (long it = 1;; it++) {
        if (it > w->maxit)
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t,
                            "Newton did not converge in %ld iterations (step h=%g)", w->maxit, h);
        mbs_count_newton(ctx);
        int s;
        ed_velocities(w, h);
        /* B_g between (t_j = t_i, q_j) and (t_f, q_f): Eq. (27); B_h between q_i and
         * q_j at t_i: Eq. (28). */
        if ((s = mbs_energy_dgrad(w, ctx, t, w->qj, tf, w->qf, w->Bg, w->ag, w->gf)) != MBS_OK ||
            (s = mbs_energy_dgrad(w, ctx, t, w->qi, t, w->qj, w->Bh, NULL, NULL)) != MBS_OK)
            return s;
        if ((s = mbs_energy_fbar(w, ctx, t, w->qi, w->vi, w->qj, w->vj, w->fh)) != MBS_OK ||
            (s = mbs_energy_fbar(w, ctx, tm, w->qj, w->vj, w->qf, w->vf, w->fg)) != MBS_OK)
            return s;
        if (a > 0.0 && (s = mbs_force(ctx, t, w->qj, w->vj, w->fj)) != MBS_OK)
            return s;
        for (size_t i = 0; i < n; i++) {
            w->fh[i] = (w->fh[i] - w->fg[i]) / 3.0;
            if (a > 0.0) /* elastic dissipation term c_E of Eq. (31) */
                w->fh[i] += a / 6.0 * (w->fj[i] - w->fi[i]);
            w->qm[i] = 0.5 * (w->qj[i] + w->qf[i]);
        }
        if ((s = mbs_mass(ctx, tm, w->qm, w->M)) != MBS_OK)
            return s;
        if (refresh && nl && (s = mbs_constraint_jacobian(ctx, tf, w->qf, w->Gf)) != MBS_OK)
            return s;
        /* Residuals (23), (24) times h^2/2, and (9). */
        for (size_t i = 0; i < n; i++) {
            double r1 = -c * w->fg[i], r2 = -c * w->fh[i];
            for (size_t j = 0; j < n; j++) {
                double mij = gsl_matrix_get(w->M, i, j);
                r1 += 0.5 * h * mij * w->dvf[j];
                r2 += 0.5 * h * mij * w->dvj[j];
            }
            for (size_t k = 0; k < nl; k++) {
                double bg = gsl_matrix_get(w->Bg, k, i), bh = gsl_matrix_get(w->Bh, k, i);
                r1 += c * bg * w->lam[k];
                r2 -= c / 3.0 * (bg - bh) * w->lam[k];
            }
            gsl_vector_set(w->r, i, -r1);
            gsl_vector_set(w->r, n + i, -r2);
        }
        /* (9); non-holonomic rows: the ED form of Eq. (22) suggested by Eq. (29),
         * B_g (q_f - q_j) + B_h (q_j - q_i) + h a_g = 0 (gf holds the B_g part and
         * h a_g, see dgrad), so that their work (Eq. (32)) is h a_g . lambda_g. */
        size_t nh0 = nl - ctx->pb->nnh;
        for (size_t k = 0; k < nl; k++) {
            double rk = w->gf[k];
            for (size_t j = 0; k >= nh0 && j < n; j++)
                rk += gsl_matrix_get(w->Bh, k, j) * w->pj[j];
            gsl_vector_set(w->r, 2 * n + k, -rk);
        }
        if (refresh) {
            gsl_matrix_set_zero(w->J);
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++) {
                    double mij = gsl_matrix_get(w->M, i, j) / (1.0 + a);
                    double j11 = a * mij, j12 = -3.0 * mij, j21 = mij, j22 = 3.0 * mij;
                    if (w->use_fjac) {
                        /* derivatives of F_g, F_h with respect to p = q_f - q_i and
                         * s = q_j - q_i through q_g, v_g, q_h, v_h and f(q_j, v_j) */
                        double fq = gsl_matrix_get(w->Fq, i, j), fv = gsl_matrix_get(w->Fv, i, j);
                        double b = 1.0 / (h * (1.0 + a));
                        j11 -= c * (0.5 * fq + fv / h);
                        j12 -= c * 0.5 * fq;
                        j21 -= c * ((fv * b - 0.5 * fq - fv / h) / 3.0 + a / 3.0 * fv * b);
                        j22 -= c * (a / 6.0 * fq + fv / h);
                    }
                    gsl_matrix_set(w->J, i, j, j11);
                    gsl_matrix_set(w->J, i, n + j, j12);
                    gsl_matrix_set(w->J, n + i, j, j21);
                    gsl_matrix_set(w->J, n + i, n + j, j22);
                }
            for (size_t k = 0; k < nl; k++)
                for (size_t j = 0; j < n; j++) {
                    double bg = gsl_matrix_get(w->Bg, k, j), bh = gsl_matrix_get(w->Bh, k, j);
                    gsl_matrix_set(w->J, j, 2 * n + k, c * bg);
                    gsl_matrix_set(w->J, n + j, 2 * n + k, -c / 3.0 * (bg - bh));
                    if (k < nh0) {
                        gsl_matrix_set(w->J, 2 * n + k, j, gsl_matrix_get(w->Gf, k, j));
                    } else { /* d/dq_f = B_g, d/dq_j = B_h - B_g (B_g, B_h frozen) */
                        gsl_matrix_set(w->J, 2 * n + k, j, bg);
                        gsl_matrix_set(w->J, 2 * n + k, n + j, bh - bg);
                    }
                }
            if ((s = mbs_energy_factor(ctx, w->J, w->perm, t)) != MBS_OK)
                return s;
        }
        double ms = mbs_energy_mass_scale(w->M);
        if ((s = mbs_energy_lu_solve(ctx, w->J, w->perm, w->r, w->dx, t)) != MBS_OK)
            return s;
        double dqn = 0.0, dln = 0.0;
        for (size_t i = 0; i < n; i++) {
            w->pf[i] += gsl_vector_get(w->dx, i);
            w->pj[i] += gsl_vector_get(w->dx, n + i);
            double qf = w->qi[i] + w->pf[i], qj = w->qi[i] + w->pj[i];
            dqn = fmax(dqn, fmax(fabs(gsl_vector_get(w->dx, i)) / (1.0 + fabs(qf)),
                                 fabs(gsl_vector_get(w->dx, n + i)) / (1.0 + fabs(qj))));
        }
        for (size_t k = 0; k < nl; k++) {
            w->lam[k] += gsl_vector_get(w->dx, 2 * n + k);
            dln = fmax(dln, fabs(gsl_vector_get(w->dx, 2 * n + k)));
        }
        if (!isfinite(dqn) || !isfinite(dln))
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t, "Newton produced NaN/Inf (h=%g)", h);
        double dn = fmax(dqn, c * dln / ms);
        int done, cs = energy_converged(w, ctx, t, h, c, ms, dn, prev, it, refresh, &done);
        if (cs != MBS_OK)
            return cs;
        if (done)
            break;
        refresh = dn > 0.25 * prev;
        prev = dn;
    }
    ed_velocities(w, h);
    return MBS_OK;
}

static int integrate(void *state, mbs_ctx *ctx, const mbs_settings *set, double *tp, double *y)
{
    energy_ws *w = state;
    size_t n = w->n, nl = w->nl;
    double t0 = *tp, h = set->h, span = set->t_end - t0;
    if (!(h > 0.0) || !(span > 0.0))
        return mbs_fail(ctx, MBS_BAD_INPUT, t0, "step h=%g and interval %g must be positive", h,
                        span);
    long nsteps = (long)ceil(span / h * (1.0 - 1e-12));
    memcpy(w->lam, y + 2 * n, nl * sizeof(double));
    double t = t0;
    int s = MBS_OK;
    for (long i = 1; i <= nsteps; i++) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        double tn = i == nsteps ? set->t_end : t0 + (double)i * h;
        double hs = tn - t;
        memcpy(w->qi, y, n * sizeof(double));
        memcpy(w->vi, y + n, n * sizeof(double));
        memcpy(w->lam0, w->lam, nl * sizeof(double));
        w->t_last = t;
        w->h_last = hs;
        s = w->ed ? ed_step(w, ctx, t, hs) : ep_step(w, ctx, t, hs);
        if (s != MBS_OK) {
            memcpy(w->lam, w->lam0, nl * sizeof(double));
            break;
        }
        /* lambda=end: the end-point multipliers of the index-1 system (a
         * post-processing; the scheme's mid-step lambda carries an O(h)
         * alternating component excited at the start, see the head comment). */
        if (w->lambda_end &&
            (s = mbs_index1_accel(w->ix, ctx, tn, w->qf, w->vf, w->acc, w->lend)) != MBS_OK) {
            memcpy(w->lam, w->lam0, nl * sizeof(double));
            break;
        }
        memcpy(y, w->qf, n * sizeof(double));
        memcpy(y + n, w->vf, n * sizeof(double));
        memcpy(y + 2 * n, w->lambda_end ? w->lend : w->lam, nl * sizeof(double));
        t = tn;
        if ((s = mbs_accept(ctx, t, y, w->lambda_end ? w->acc : NULL)) != MBS_OK)
            break;
    }
    *tp = t;
    return s;
}

int mbs_energy_last_step(void *state, mbs_ctx *ctx, double *work, double *dissipation)
{
    energy_ws *w = state;
    size_t n = w->n, nl = w->nl;
    double t = w->t_last, tf = t + w->h_last;
    *work = 0.0;
    *dissipation = 0.0;
    /* rheonomic work a . lambda, Eqs. (20), (32) */
    int s = mbs_energy_dgrad(w, ctx, t, w->ed ? w->qj : w->qi, tf, w->qf, w->Bh, w->adiag, NULL);
    if (s != MBS_OK)
        return s;
    for (size_t k = 0; k < nl; k++)
        *work += w->adiag[k] * w->lam[k];
    if (!w->ed)
        return MBS_OK;
    /* (a/2)(|v_j - v_i|_M^2 + c_E^2), c_E^2 = -(q_j - q_i).(f_j - f_i), Eqs. (30)-(31) */
    for (size_t i = 0; i < n; i++)
        w->qm[i] = 0.5 * (w->qj[i] + w->qf[i]);
    if ((s = mbs_mass(ctx, t + 0.5 * w->h_last, w->qm, w->M)) != MBS_OK ||
        (s = mbs_force(ctx, t, w->qi, w->vi, w->f0)) != MBS_OK ||
        (s = mbs_force(ctx, t, w->qj, w->vj, w->f1)) != MBS_OK)
        return s;
    double kin = 0.0, el = 0.0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++)
            kin += (w->vj[i] - w->vi[i]) * gsl_matrix_get(w->M, i, j) * (w->vj[j] - w->vi[j]);
        el -= (w->qj[i] - w->qi[i]) * (w->f1[i] - w->f0[i]);
    }
    *dissipation = 0.5 * w->a * (kin + el);
    return MBS_OK;
}

static const mbs_method_ops energy_ops = {
    .alloc = ws_alloc,
    .integrate = integrate,
    .free_state = ws_free,
};

const mbs_method_def mbs_method_ep_midpoint = {
    .name = "ep/midpoint",
    .summary = "energy-preserving midpoint scheme with self-stabilised constraints "
               "(discrete constraint gradient), fixed step",
    .citation = "Bauchau 2003 [bauchau2003selfstabilized], Sect. 3, Eqs. (4)-(6), (9), (17)-(21)",
    .order = {2, 2, 2},
    .flags = MBS_M_FIXED_STEP | MBS_M_IMPLICIT | MBS_M_NEEDS_FULL_RANK |
             MBS_M_ENERGY_CONSERVING | MBS_M_NONHOLONOMIC_OK,
    .params = ep_params,
    .n_params = sizeof ep_params / sizeof ep_params[0],
    .variant = NULL,
    .ops = &energy_ops,
};

const mbs_method_def mbs_method_ed_tdg = {
    .name = "ed/tdg",
    .summary = "energy-decaying scheme (time-discontinuous Galerkin form) with "
               "self-stabilised constraints, dissipation a, fixed step",
    .citation = "Bauchau 2003 [bauchau2003selfstabilized], Sect. 4, Eqs. (23)-(29), (33)",
    /* The guaranteed orders: 2 in q, v and lambda.  For a = 1 the scheme is the
     * linear time-discontinuous Galerkin method, of nodal order 3 when its force
     * integrals are exact, but Eqs. (23), (24) evaluate the applied force (and M)
     * at one point per sub-interval: the integral of a force nonlinear in the
     * state is then off by O(h^2), the local error is O(h^3).  Measured: q order 3
     * where the force is linear in the state or constant (gravity, linear springs:
     * pendulum, fivebar, chain, rigidbody, [bauchau2003selfstabilized] Fig. 4 for the free
     * rigid body), 2 otherwise (andrews: q pairwise 2.58, 2.41, 2.26, 2.15, 2.08,
     * 2.04, 2.07 from h = 1e-4; caraxis 1.42, 1.78, 1.90 below h = 7.8e-5; the
     * unconstrained x'' = -sin x with force=midpoint: q 2.00, v 1.99, and 3.00 for
     * x'' = -x).  v: an O(h^2) normal part (G v != 0 at the step ends, e.g.
     * pendulum), lambda=end from (q, v). */
    .order = {2, 2, 2},
    .flags = MBS_M_FIXED_STEP | MBS_M_IMPLICIT | MBS_M_NEEDS_FULL_RANK |
             MBS_M_NEEDS_REGULAR_MASS | MBS_M_ENERGY_DECAYING | MBS_M_NONHOLONOMIC_OK,
    .params = ed_params,
    .n_params = sizeof ed_params / sizeof ed_params[0],
    .variant = NULL,
    .ops = &energy_ops,
};

/* The methods of this file, for methods/registry.def (MBS_METHODS). */
const mbs_method_def *const mbs_methods_energy[] = {
    &mbs_method_ep_midpoint,
    &mbs_method_ed_tdg,
    NULL};
