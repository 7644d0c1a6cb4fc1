/* Generalized-alpha and HHT-alpha for constrained mechanical systems
 * ([arnold2016dae], Section 4.1 and Eqs. (93)-(94)); fixed step, q' = v (H = I).
 *
 *   index3/genalpha - Brüls' form of the generalized-alpha method ([arnold2016dae],
 *       Eq. (64)) applied directly to the index-3 equations of motion (67): the
 *       step is the Newton solve of the scaled system (69) in (Delta q_n, h lambda_{n+1})
 *       with the iteration matrix of Eq. (70),
 *           [ c M(q_n)  G^T(q_n) ]          c = (1 - alpha_m) / (beta (1 - alpha_f)),
 *           [ G(q_n)    0        ],
 *       evaluated at (t_n, q_n) and factorised once per step; if this simplified
 *       iteration contracts slower than 1/2, the step switches once to the full
 *       Jacobian by forward differences (fast motions, stiff forces).  Newton
 *       iterations, factorisations and solves are counted.  Parameters from rho_inf after Chung
 *       and Hulbert ([arnold2016dae] ref. [33]):
 *           alpha_m = (2 rho - 1)/(rho + 1), alpha_f = rho/(rho + 1),
 *           gamma = 1/2 - alpha_m + alpha_f, beta = (gamma + 1/2)^2 / 4,
 *       or given explicitly (second order needs gamma = 1/2 - alpha_m + alpha_f).
 *   index3/hht - HHT-alpha ([arnold2016dae], Eq. (66) and below): alpha_m = 0,
 *       alpha_f = -alpha, gamma = 1/2 - alpha, beta = (1 - alpha)^2/4, alpha in
 *       [-1/3, 0]; for constant M the a-update (64c) is Eq. (66) with the constraint
 *       forces included in q''.  alpha = 0 is the trapezoidal Newmark rule.
 *   ggl/genalpha - the stabilized index-2 (GGL) variant, Eqs. (93)-(94): the
 *       increment carries the correction -G^T(q_n) mu_n, unknowns
 *       (Delta q_n, h lambda_{n+1}, mu_n), and the hidden constraint
 *       G(q_{n+1}) v_{n+1} (+ g_t) = 0 is imposed as well; iteration matrix as printed
 *       after Eq. (94).
 *   liegroup/genalpha, liegroup-ggl/genalpha - the same two methods on a Lie-group
 *       configuration space (problems flagged MBS_PB_LIEGROUP, problem.h): Arnold,
 *       Brüls and Cardona's Lie-group generalized-alpha ([arnold2015liegroup], the
 *       error analysis; the heavy top in SO(3) x R^3 is Brüls and Cardona's
 *       example, [bruls2010liegroup]).  The position update (68b) becomes
 *           q_{n+1} = q_n o exp(h Delta q_n),
 *       Delta q_n in R^{n_v} (the velocity space; v_n, a_n, q''_n are the
 *       velocity, acceleration-like vector and v' in those coordinates), and G is
 *       the velocity-level B = G H (n_lambda x n_v) throughout; (68c-e), (94) and
 *       the equilibrium conditions are unchanged.  The exact Jacobian of
 *       g(q_n o exp(h Delta q)) / h is B(q_{n+1}) T(h Delta q) with the tangent
 *       operator T = I + O(h), so the iteration matrices of Eqs. (70) and (94) hold
 *       with B(q_n) (the O(h) terms are dropped as before; the difference-Jacobian
 *       fallback includes them).  q changes only through exp, so R stays orthogonal
 *       to round-off without a normalisation constraint.  Starting values as
 *       below with the Taylor point q_0 o exp(d v_0 + d^2 v'_0 / 2).  On a problem
 *       with q' = v (H = I) the group is R^n, exp is addition, and both are
 *       index3/genalpha and ggl/genalpha (start=plain, linsol=full).  Problems with
 *       H != I and no Lie-group structure (Euler angles, quaternions) are declined.
 *
 * Starting values ([arnold2016dae], text after Fig. 10): q_0, v_0, q''_0 = q''(t_0) from
 * the index-1 system, and a_0 = q''(t_0 + (alpha_m - alpha_f) h) + O(h^2), evaluated
 * from the index-1 system at the second-order Taylor point at the shifted time.
 *
 * start=corrected (index-3 only) perturbs the starting velocity,
 *     v_0 = v(t_0) + Delta_0,  Delta_0 = h^2 (gamma/2 - beta - 1/12) q'''(t_0),
 * the O(h^2) correction of Arnold, Brüls and Cardona ([arnold2015liegroup]; text after
 * Example 8).  Our derivation: a smooth numerical solution (Q, V, A) of (64a,b)
 * satisfies V = Q' + h^2 (gamma/2 - beta - 1/12) Q''' + O(h^3) and
 * A = Q''(t + (alpha_m - alpha_f) h) + O(h^2); on the index-3 solution g(Q) = 0, so
 * G V = h^2 (gamma/2 - beta - 1/12) G q''' + O(h^3) != 0 whereas G v(t_0) = 0.  The
 * O(h^2) mismatch of the constrained velocity component excites the oscillating
 * mode (double root -rho_inf of beta z^2 + (1/2 - 2 beta + gamma) z
 * + (1/2 + beta - gamma)) of G a_n with amplitude O(h) in lambda: the first-order
 * transient of Fig. 10 (right).  Starting on the smooth solution removes it.
 * q'''(t_0) is a central difference (step h) of the index-1 accelerations at Taylor
 * points, accurate to O(h^2), which suffices because it is multiplied by h^2.
 *
 * Linear algebra (`linsol`): full (default) assembles the iteration
 * matrix densely (n_x x n_x, GSL LU) as above, with the difference-Jacobian
 * fallback.  lu, umfpack and cholmod use the KKT backends of methods/linsol/linsol.h
 * with exactly the same simplified-Newton matrix, which is already a KKT
 * matrix (Eq. (70) drops the stiffness, damping and second-derivative terms):
 *   index3/genalpha, index3/hht: [c M, G^T; G, 0] (Delta q, h lambda) = (r1, r2),
 *       factored as KKT(c M, G);
 *   ggl/genalpha: with Delta q = w - G^T mu the matrix after Eq. (94),
 *       [c M, G^T, c M G^T; G, 0, 0; (gamma/beta) G, 0, (gamma/beta) G G^T],
 *       becomes block triangular:
 *           [c M, G^T; G, 0] (w, h lambda) = (r1, (beta/gamma) r3),
 *           G G^T mu = (beta/gamma) r3 - r2,
 *       and G G^T mu = b is the multiplier part of KKT(I, G): [I G^T; G 0](z, nu)
 *       = (0, b) gives nu = -(G G^T)^-1 b, z = -G^T nu, so mu = -nu and
 *       Delta q = w - z.  Two factorisations per step (KKT(c M, G), KKT(I, G)).
 * The iterates are those of the full path up to round-off.  The backends have
 * no difference-Jacobian fallback (it is dense): an iteration that contracts
 * slowly simply continues, and fails as diverged when the increment is not
 * below the larger of the two previous ones.  Two steps, because the GGL
 * iteration's max-norm increments come in pairs (measured on the pendulum,
 * h = 0.01: 1.50e-4, 1.51e-4, 2.2e-8, 2.3e-8, 3.5e-12; the coupling of the mu
 * and Delta q updates), which the full path's one-step test takes for slow
 * contraction and answers with the difference Jacobian.  M and G come as triplets (kkt_eval.h; the chain's
 * triplet callbacks: nothing n x n is allocated), also in the residual.
 *
 * The observer receives q''_{n+1} as the acceleration.  The steps are all equal:
 * N = ceil((t_end - t_0)/h) steps of (t_end - t_0)/N <= h.  A last step shorter
 * than the others is a step-size change, and after one the method's multipliers
 * go through the transient of a restart ([arnold2016dae], text after Eq. (70) and
 * Example 8: a_n approximates q''(t_n + (alpha_m - alpha_f) h) for the old h):
 * before, on ujoint (t_end = 2 pi) the last steps of 0.10 h .. 0.64 h left
 * lambda(t_end) off by 0.03-0.1 at every h from 5e-3 to 6.25e-4 (|lambda| = 9)
 * while q and v kept order 2. */
#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../core/gslalloc.h"
#include "../../formulations/index1.h"
#include "../../formulations/kkt_eval.h"
#include "../../linsol/linsol.h"
#include "../../framework/method.h"
#include "../../../problems/triplets.h"
#include "genalpha_impl.h"

/* ---- parameters ---------------------------------------------------------------- */

enum { GP_RHO, GP_AM, GP_AF, GP_BETA, GP_GAMMA, GP_START, GP_NTOL, GP_NMAXIT, GP_LINSOL };
enum { HP_ALPHA, HP_START, HP_NTOL, HP_NMAXIT, HP_LINSOL };
enum { SP_RHO, SP_AM, SP_AF, SP_BETA, SP_GAMMA, SP_NTOL, SP_NMAXIT, SP_LINSOL };

#define GA_RHO_PARAM                                                                    \
    {"rho_inf", 0.9, 0.0, 1.0, "spectral radius at infinity; gives alpha_m, alpha_f, "  \
     "beta, gamma (Chung-Hulbert)", NULL, 0}
#define GA_EXPLICIT_PARAMS                                                              \
    {"alpha_m", 0.0, -1.0, 1.0, "explicit alpha_m (instead of rho_inf; needs alpha_f)", \
     NULL, 0},                                                                          \
    {"alpha_f", 0.0, 0.0, 1.0, "explicit alpha_f (instead of rho_inf; needs alpha_m)",  \
     NULL, 0},                                                                          \
    {"beta", 0.25, 1e-6, 10.0, "explicit beta (default (gamma + 1/2)^2/4)", NULL, 0},   \
    {"gamma", 0.5, 0.0, 10.0, "explicit gamma (must be 1/2 - alpha_m + alpha_f)", NULL, 0}
#define GA_START_PARAM                                                                  \
    {"start", GA_START_PLAIN, 0, 1, "starting velocity: plain v(t0) or corrected "      \
     "v(t0) + Delta_0 (O(h^2), Arnold, Bruls & Cardona 2015 [arnold2015liegroup])", "plain,corrected", 1}
#define GA_NEWTON_PARAMS                                                                \
    {"newton_tol", 1e-15, 1e-16, 1e-2, "Newton tolerance on the increments of Delta q, " \
     "lambda, mu relative to (1 + |value|) / h^(index - 1) (RADAU5's weights; the default " \
     "iterates to round-off)", NULL, 0}, \
    {"newton_maxit", 30, 1, 1000, "Newton iterations per step (maximum)", NULL, 1}
#define GA_LINSOL_PARAM                                                                 \
    {"linsol", GA_LS_FULL, 0, 3, "iteration matrix: full (dense n_x x n_x LU with "     \
     "difference-Jacobian fallback) or the KKT form of Eq. (70)/(94) on linsol.h's "    \
     "dense, umfpack or cholmod backend", "full,lu,umfpack,cholmod", 1}

static const mbs_param_def genalpha_params[] = {
    GA_RHO_PARAM, GA_EXPLICIT_PARAMS, GA_START_PARAM, GA_NEWTON_PARAMS, GA_LINSOL_PARAM};
static const mbs_param_def hht_params[] = {
    {"alpha", -0.05, -1.0 / 3.0, 0.0, "HHT alpha in [-1/3, 0] (0: trapezoidal Newmark)",
     NULL, 0},
    GA_START_PARAM, GA_NEWTON_PARAMS, GA_LINSOL_PARAM};
static const mbs_param_def ggl_params[] = {GA_RHO_PARAM, GA_EXPLICIT_PARAMS,
                                           GA_NEWTON_PARAMS, GA_LINSOL_PARAM};
/* liegroup/ variants: ggl_params without linsol (full only): same positions SP_*. */
static const mbs_param_def lie_params[] = {GA_RHO_PARAM, GA_EXPLICIT_PARAMS,
                                           GA_NEWTON_PARAMS};

static int is_set(const mbs_params *p, int i)
{
    return (p->set_mask >> i) & 1UL;
}

/* alpha_m, alpha_f, beta, gamma from rho_inf or the explicit values (index3 and
 * ggl tables share the first five positions). */
static int coefficients_from_table(ga_state *st, const mbs_params *p, mbs_ctx *ctx,
                                   const char *name)
{
    int explicit_ = is_set(p, GP_AM) || is_set(p, GP_AF) || is_set(p, GP_BETA) ||
                    is_set(p, GP_GAMMA);
    if (!explicit_) {
        double rho = p->val[GP_RHO];
        st->am = (2.0 * rho - 1.0) / (rho + 1.0);
        st->af = rho / (rho + 1.0);
        st->gamma = 0.5 - st->am + st->af;
        st->beta = 0.25 * (st->gamma + 0.5) * (st->gamma + 0.5);
        return MBS_OK;
    }
    if (is_set(p, GP_RHO))
        return mbs_fail(ctx, MBS_BAD_INPUT, NAN,
                        "%s: give rho_inf or alpha_m/alpha_f[/beta/gamma], not both", name);
    if (!is_set(p, GP_AM) || !is_set(p, GP_AF))
        return mbs_fail(ctx, MBS_BAD_INPUT, NAN,
                        "%s: explicit parameters need both alpha_m and alpha_f", name);
    st->am = p->val[GP_AM];
    st->af = p->val[GP_AF];
    double g2 = 0.5 - st->am + st->af;
    st->gamma = is_set(p, GP_GAMMA) ? p->val[GP_GAMMA] : g2;
    if (fabs(st->gamma - g2) > 1e-12)
        return mbs_fail(ctx, MBS_BAD_INPUT, NAN,
                        "%s: gamma=%g must equal 1/2 - alpha_m + alpha_f = %g (second order)",
                        name, st->gamma, g2);
    st->beta = is_set(p, GP_BETA) ? p->val[GP_BETA]
                                   : 0.25 * (st->gamma + 0.5) * (st->gamma + 0.5);
    if (!(st->am < 1.0 && st->af < 1.0))
        return mbs_fail(ctx, MBS_BAD_INPUT, NAN, "%s: alpha_m and alpha_f must be < 1", name);
    if (!(st->am <= st->af && st->af <= 0.5 &&
          st->beta >= 0.25 + 0.5 * (st->af - st->am) - 1e-12))
        return mbs_fail(ctx, MBS_BAD_INPUT, NAN,
                        "%s: alpha_m=%g, alpha_f=%g, beta=%g are not unconditionally stable "
                        "(need alpha_m <= alpha_f <= 1/2, beta >= 1/4 + (alpha_f - alpha_m)/2)",
                        name, st->am, st->af, st->beta);
    return MBS_OK;
}

/* ---- workspace ----------------------------------------------------------------- */

static void ga_free(void *p)
{
    ga_state *st = p;
    if (!st)
        return;
    gsl_matrix *mats[] = {st->M, st->G, st->M0, st->G0, st->K};
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
        if (mats[i])
            gsl_matrix_free(mats[i]);
    if (st->perm)
        gsl_permutation_free(st->perm);
    if (st->F)
        gsl_vector_free(st->F);
    if (st->dx)
        gsl_vector_free(st->dx);
    if (st->F0)
        gsl_vector_free(st->F0);
    double *vecs[] = {st->x,  st->xold, st->qn, st->vn, st->qddn, st->an, st->lam,
                      st->q1, st->v1,   st->qdd1, st->a1, st->w,  st->f,  st->g,
                      st->gt, st->y,    st->tq, st->tv, st->acc1, st->acc2, st->hx};
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
        free(vecs[i]);
    mbs_index1_free(st->ix);
    mbs_linsol_free(&st->ls);
    mbs_linsol_free(&st->ls2);
    mbs_kkt_eval_free(&st->ke);
    mbs_kkt_eval_free(&st->ke0);
    mbs_triplets_free(&st->cM);
    mbs_triplets_free(&st->Id);
    double *lsv[] = {st->r1, st->r2, st->sa, st->sl, st->z, st->nu};
    for (size_t i = 0; i < sizeof lsv / sizeof lsv[0]; i++)
        free(lsv[i]);
    free(st);
}

static int ga_alloc(const mbs_method_def *m, const mbs_params *p, mbs_ctx *ctx, void **out)
{
    *out = NULL;
    const mbs_problem *pb = ctx->pb;
    const ga_variant *var = m->variant;
    int lie = (pb->flags & MBS_PB_LIEGROUP) && pb->def->lie;
    if (lie && !var->lie)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "%s treats q as a vector (q' = v); the configuration of %s is a Lie "
                        "group: use liegroup/genalpha or liegroup-ggl/genalpha", m->name,
                        pb->def->name);
    if (pb->def->kinematic && !lie)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "%s needs q' = v (no kinematic matrix H)%s; %s has H != I", m->name,
                        var->lie ? " or a Lie-group problem (q o exp)" : "", pb->def->name);
    if (pb->nl == 0)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0, "%s: %s has no constraints", m->name,
                        pb->def->name);
    ga_state *st = calloc(1, sizeof *st);
    if (!st)
        return MBS_NO_MEMORY;
    st->kind = var->kind;
    st->lie = lie;
    int s, lsopt;
    if (var->lie) {
        if ((s = coefficients_from_table(st, p, ctx, m->name)) != MBS_OK) {
            ga_free(st);
            return s;
        }
        st->start = GA_START_PLAIN;
        st->ntol = p->val[SP_NTOL];
        st->nmaxit = (long)p->val[SP_NMAXIT];
        lsopt = GA_LS_FULL;
    } else if (var->kind == GA_HHT) {
        double alpha = p->val[HP_ALPHA];
        st->am = 0.0;
        st->af = -alpha;
        st->gamma = 0.5 - alpha;
        st->beta = 0.25 * (1.0 - alpha) * (1.0 - alpha);
        st->start = (int)p->val[HP_START];
        st->ntol = p->val[HP_NTOL];
        st->nmaxit = (long)p->val[HP_NMAXIT];
        lsopt = (int)p->val[HP_LINSOL];
    } else {
        if ((s = coefficients_from_table(st, p, ctx, m->name)) != MBS_OK) {
            ga_free(st);
            return s;
        }
        if (var->kind == GA_INDEX3) {
            st->start = (int)p->val[GP_START];
            st->ntol = p->val[GP_NTOL];
            st->nmaxit = (long)p->val[GP_NMAXIT];
            lsopt = (int)p->val[GP_LINSOL];
        } else {
            st->start = GA_START_PLAIN;
            st->ntol = p->val[SP_NTOL];
            st->nmaxit = (long)p->val[SP_NMAXIT];
            lsopt = (int)p->val[SP_LINSOL];
        }
    }
    size_t n = pb->nv, nl = pb->nl;
    st->n = n;
    st->nq = pb->nq;
    st->nl = nl;
    st->nx = n + (var->kind == GA_GGL ? 2 : 1) * nl;
    st->lskind = lsopt == GA_LS_LU        ? MBS_LS_DENSE
                 : lsopt == GA_LS_UMFPACK ? MBS_LS_UMFPACK
                 : lsopt == GA_LS_CHOLMOD ? MBS_LS_CHOLMOD
                                          : -1;
    int ok = 1;
    if (st->lskind < 0) {
        st->M = mbs_matrix_alloc(n, n);
        st->M0 = mbs_matrix_alloc(n, n);
        st->G = mbs_matrix_alloc(nl, n);
        st->G0 = mbs_matrix_alloc(nl, n);
        st->K = mbs_matrix_alloc(st->nx, st->nx);
        st->perm = gsl_permutation_alloc(st->nx);
        ok = st->M && st->M0 && st->G && st->G0 && st->K && st->perm;
    } else {
        double aug = (pb->flags & MBS_PB_SINGULAR_MASS) ? 1.0 : 0.0;
        s = mbs_linsol_alloc(&st->ls, st->lskind, n, nl, aug);
        if (s == MBS_OK && var->kind == GA_GGL)
            s = mbs_linsol_alloc(&st->ls2, st->lskind, n, nl, 0.0);
        if (s == MBS_OK)
            s = mbs_kkt_eval_init(&st->ke, ctx);
        if (s == MBS_OK)
            s = mbs_kkt_eval_init(&st->ke0, ctx);
        if (s != MBS_OK) {
            ga_free(st);
            return s;
        }
        ok = mbs_triplets_reserve(&st->Id, n) == 0;
        for (size_t i = 0; ok && i < n; i++)
            mbs_triplets_push(&st->Id, i, i, 1.0);
        double **lsv[] = {&st->r1, &st->r2, &st->sa, &st->sl, &st->z, &st->nu};
        for (size_t i = 0; i < sizeof lsv / sizeof lsv[0]; i++)
            ok = ok && (*lsv[i] = calloc(n > nl ? n : nl, sizeof(double)));
    }
    st->F = gsl_vector_alloc(st->nx);
    st->F0 = gsl_vector_alloc(st->nx);
    st->dx = gsl_vector_alloc(st->nx);
    ok = ok && st->F && st->F0 && st->dx;
    double **nvecs[] = {&st->vn, &st->qddn, &st->an, &st->v1,   &st->qdd1, &st->a1,
                        &st->w,  &st->f,    &st->tv, &st->acc1, &st->acc2, &st->hx};
    for (size_t i = 0; i < sizeof nvecs / sizeof nvecs[0]; i++)
        ok = ok && (*nvecs[i] = calloc(n, sizeof(double)));
    double **qvecs[] = {&st->qn, &st->q1, &st->tq};
    for (size_t i = 0; i < sizeof qvecs / sizeof qvecs[0]; i++)
        ok = ok && (*qvecs[i] = calloc(st->nq, sizeof(double)));
    ok = ok && (st->lam = calloc(nl, sizeof(double))) && (st->g = calloc(nl, sizeof(double))) &&
         (st->gt = calloc(nl, sizeof(double))) && (st->x = calloc(st->nx, sizeof(double))) &&
         (st->xold = calloc(st->nx, sizeof(double))) &&
         (st->y = calloc(st->nq + n + nl, sizeof(double)));
    if (!ok) {
        ga_free(st);
        return MBS_NO_MEMORY;
    }
    if ((s = mbs_index1_alloc(&st->ix, ctx,
                              st->lskind == MBS_LS_UMFPACK   ? MBS_LINSOL_UMFPACK
                              : st->lskind == MBS_LS_CHOLMOD ? MBS_LINSOL_CHOLMOD
                                                             : MBS_LINSOL_LU)) != MBS_OK) {
        ga_free(st);
        return s;
    }
    *out = st;
    return MBS_OK;
}

/* ---- starting values ----------------------------------------------------------- */

/* Index-1 accelerations at the second-order Taylor point t0 + d. */
static int accel_at(ga_state *st, mbs_ctx *ctx, double t0, double d, double *acc)
{
    for (size_t i = 0; i < st->n; i++) {
        if (st->lie)
            st->hx[i] = d * st->vn[i] + 0.5 * d * d * st->qddn[i];
        else
            st->tq[i] = st->qn[i] + d * st->vn[i] + 0.5 * d * d * st->qddn[i];
        st->tv[i] = st->vn[i] + d * st->qddn[i];
    }
    int s;
    if (st->lie && (s = mbs_lie_exp(ctx, st->qn, st->hx, st->tq)) != MBS_OK)
        return s;
    return mbs_index1_accel(st->ix, ctx, t0 + d, st->tq, st->tv, acc, NULL);
}

static int start(ga_state *st, mbs_ctx *ctx, double t0, double h)
{
    size_t n = st->n;
    int s = mbs_index1_accel(st->ix, ctx, t0, st->qn, st->vn, st->qddn, NULL);
    if (s != MBS_OK)
        return s;
    /* a_0 = q''(t0 + (alpha_m - alpha_f) h) + O(h^2) ([arnold2016dae], after Fig. 10). */
    double d = (st->am - st->af) * h;
    if (d != 0.0) {
        if ((s = accel_at(st, ctx, t0, d, st->an)) != MBS_OK)
            return s;
    } else {
        memcpy(st->an, st->qddn, n * sizeof(double));
    }
    if (st->start == GA_START_CORRECTED) {
        /* Delta_0 = h^2 (gamma/2 - beta - 1/12) q'''(t0) (derivation in the header). */
        if ((s = accel_at(st, ctx, t0, h, st->acc1)) != MBS_OK ||
            (s = accel_at(st, ctx, t0, -h, st->acc2)) != MBS_OK)
            return s;
        double k = h * h * (0.5 * st->gamma - st->beta - 1.0 / 12.0);
        for (size_t i = 0; i < n; i++)
            st->vn[i] += k * (st->acc1[i] - st->acc2[i]) / (2.0 * h);
    }
    return MBS_OK;
}

static int ga_integrate_(ga_state *st, mbs_ctx *ctx, const mbs_settings *set, double *tp,
                         double *y);

static int ga_integrate(void *p, mbs_ctx *ctx, const mbs_settings *set, double *tp, double *y)
{
    ga_state *st = p;
    int s = ga_integrate_(st, ctx, set, tp, y);
    mbs_ctx_report_linsol(ctx, st->ls, st->lskind);
    mbs_ctx_report_linsol(ctx, st->ls2, st->lskind);
    mbs_index1_report(ctx, st->ix);
    return s;
}

static int ga_integrate_(ga_state *st, mbs_ctx *ctx, const mbs_settings *set, double *tp,
                         double *y)
{
    size_t n = st->n, nl = st->nl, nq = st->nq;
    double t0 = *tp, h = set->h, span = set->t_end - t0;
    if (!(h > 0.0) || !(span > 0.0))
        return mbs_fail(ctx, MBS_BAD_INPUT, t0, "need h > 0 and t_end > t0");
    memcpy(st->qn, y, nq * sizeof(double));
    memcpy(st->vn, y + nq, n * sizeof(double));
    memcpy(st->lam, y + nq + n, nl * sizeof(double));
    long nsteps = (long)ceil(span / h * (1.0 - 1e-12));
    h = span / (double)nsteps; /* equal steps (header) */
    int s = start(st, ctx, t0, h);
    if (s != MBS_OK)
        return s;
    double t = t0;
    for (long i = 1; i <= nsteps; i++) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            return s;
        double tn = i == nsteps ? set->t_end : t0 + (double)i * h;
        if ((s = mbs_ga_step(st, ctx, t, tn - t)) != MBS_OK) {
            mbs_count_rejected(ctx);
            return s;
        }
        t = tn;
        memcpy(st->y, st->qn, nq * sizeof(double));
        memcpy(st->y + nq, st->vn, n * sizeof(double));
        memcpy(st->y + nq + n, st->lam, nl * sizeof(double));
        memcpy(y, st->y, (nq + n + nl) * sizeof(double));
        *tp = t;
        if ((s = mbs_accept(ctx, t, st->y, st->qddn)) != MBS_OK)
            return s;
    }
    return MBS_OK;
}

static const mbs_method_ops ga_ops = {
    .alloc = ga_alloc,
    .integrate = ga_integrate,
    .free_state = ga_free,
};

static const ga_variant v_index3 = {GA_INDEX3, 0}, v_hht = {GA_HHT, 0}, v_ggl = {GA_GGL, 0};
static const ga_variant v_lie = {GA_INDEX3, 1}, v_lie_ggl = {GA_GGL, 1};

#define GA_FLAGS (MBS_M_FIXED_STEP | MBS_M_IMPLICIT | MBS_M_NEEDS_FULL_RANK)

const mbs_method_def mbs_method_index3_genalpha = {
    .name = "index3/genalpha",
    .summary = "generalized-alpha (Chung-Hulbert, Bruls' form) on the index-3 equations, "
               "scaled Newton",
    .citation = "Arnold 2016 [arnold2016dae], Sect. 4.1, Eqs. (64), (67)-(70), Example 8",
    .order = {2, 2, 2},
    .flags = GA_FLAGS,
    .params = genalpha_params,
    .n_params = sizeof genalpha_params / sizeof genalpha_params[0],
    .variant = &v_index3,
    .ops = &ga_ops,
};

const mbs_method_def mbs_method_index3_hht = {
    .name = "index3/hht",
    .summary = "HHT-alpha on the index-3 equations (alpha = 0: trapezoidal Newmark)",
    .citation = "Arnold 2016 [arnold2016dae], Sect. 4.1, Eqs. (64), (66)-(70)",
    .order = {2, 2, 2},
    .flags = GA_FLAGS,
    .params = hht_params,
    .n_params = sizeof hht_params / sizeof hht_params[0],
    .variant = &v_hht,
    .ops = &ga_ops,
};

const mbs_method_def mbs_method_ggl_genalpha = {
    .name = "ggl/genalpha",
    .summary = "generalized-alpha on the stabilized index-2 (GGL) equations",
    .citation = "Arnold 2016 [arnold2016dae], Eqs. (92)-(94), Fig. 16",
    .order = {2, 2, 2},
    .flags = GA_FLAGS,
    .params = ggl_params,
    .n_params = sizeof ggl_params / sizeof ggl_params[0],
    .variant = &v_ggl,
    .ops = &ga_ops,
};

const mbs_method_def mbs_method_liegroup_genalpha = {
    .name = "liegroup/genalpha",
    .summary = "Lie-group generalized-alpha on the index-3 equations (q_{n+1} = q_n o "
               "exp(h Delta q), no normalisation constraint)",
    .citation = "Arnold 2016 [arnold2016dae], Eqs. (64), (67)-(70), Example 6; Arnold, Bruls & Cardona 2015 [arnold2015liegroup]",
    .order = {2, 2, 2},
    .flags = GA_FLAGS,
    .params = lie_params,
    .n_params = sizeof lie_params / sizeof lie_params[0],
    .variant = &v_lie,
    .ops = &ga_ops,
};

const mbs_method_def mbs_method_liegroup_ggl_genalpha = {
    .name = "liegroup-ggl/genalpha",
    .summary = "Lie-group generalized-alpha on the stabilized index-2 (GGL) equations",
    .citation = "Arnold 2016 [arnold2016dae], Eqs. (92)-(94), Example 6; Arnold, Bruls & Cardona 2015 [arnold2015liegroup]",
    .order = {2, 2, 2},
    .flags = GA_FLAGS,
    .params = lie_params,
    .n_params = sizeof lie_params / sizeof lie_params[0],
    .variant = &v_lie_ggl,
    .ops = &ga_ops,
};

/* The methods of this file, for methods/registry.def (MBS_METHODS). */
const mbs_method_def *const mbs_methods_genalpha[] = {
    &mbs_method_index3_genalpha,
    &mbs_method_index3_hht,
    &mbs_method_ggl_genalpha,
    &mbs_method_liegroup_genalpha,
    &mbs_method_liegroup_ggl_genalpha,
    NULL};
