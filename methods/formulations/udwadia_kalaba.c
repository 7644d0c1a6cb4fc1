/* Udwadia-Kalaba formulation ([pennestri_coordinate_reduction], Sect. 7.7, Eqs. (82)-(90)) as
 * acceleration evaluators `uk` and `ukb` (with Baumgarte terms, Eq. (90)):
 *     q''_f = M^-1 f                                               (82)
 *     D = B M^-1/2                                                 (86)
 *     v' = q''_f + M^-1/2 D^+ (gamma_bar - B q''_f)                (89), (90)
 * with gamma_bar = gamma (uk) or gamma - 2 alpha (B v + g_t) - beta^2 g (ukb),
 * and D^+ the Moore-Penrose pseudo-inverse from a GSL SVD with the shared rank
 * decision (nullspace.h): it exists for redundant constraints too.
 * M^-1/2: 1/sqrt(m_ii) for a diagonal M (as the appendix code), otherwise from
 * the GSL symmetric eigendecomposition M = E diag(mu) E^T.
 * Multipliers (our sign, M v' = f - B^T lambda): lambda = (B M^-1 B^T)^+ (B q''_f
 * - gamma_bar) = -(D^+)^T w with w = D^+ (gamma_bar - B q''_f), the minimum-norm
 * multipliers (Eq. (84) with the pseudo-inverse). */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/gslalloc.h"
#include "nullspace.h"

enum { P_RANK_TOL, P_ALPHA, P_BETA };

typedef struct uk_ws {
    mbs_ns_diag diag; /* first member: read by mbs_ns_diag_get */
    double rank_tol, alpha, beta;
    size_t rank0; /* rank at the run's first evaluation; (size_t)-1 before it */
    int baumgarte;
    size_t nv, nl;
    gsl_matrix *M, *Mih, *E, *B, *A, *A2; /* A: max x max, A2: max x max */
    gsl_vector *mu, *s, *work;
    gsl_eigen_symmv_workspace *esym;
    double *f, *qf, *e, *t, *wv, *tmp, *gam, *g, *gt;
} uk_ws;

static void uk_free(void *p)
{
    uk_ws *w = p;
    if (!w)
        return;
    gsl_matrix_free(w->M);
    gsl_matrix_free(w->Mih);
    gsl_matrix_free(w->E);
    gsl_matrix_free(w->B);
    gsl_matrix_free(w->A);
    gsl_matrix_free(w->A2);
    gsl_vector_free(w->mu);
    gsl_vector_free(w->s);
    gsl_vector_free(w->work);
    if (w->esym)
        gsl_eigen_symmv_free(w->esym);
    free(w->f);
    free(w->qf);
    free(w->e);
    free(w->t);
    free(w->wv);
    free(w->tmp);
    free(w->gam);
    free(w->g);
    free(w->gt);
    free(w);
}

static int uk_alloc_common(void **out, mbs_ctx *ctx, const mbs_params *p, int baumgarte)
{
    const mbs_problem *pb = ctx->pb;
    *out = NULL;
    if (pb->flags & MBS_PB_SINGULAR_MASS)
        return mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                        "Udwadia-Kalaba needs M^-1/2 (positive definite mass matrix)");
    uk_ws *w = calloc(1, sizeof *w);
    if (!w)
        return MBS_NO_MEMORY;
    size_t nv = pb->nv, nl = pb->nl, nlc = nl ? nl : 1, mx = nv > nlc ? nv : nlc;
    w->nv = nv;
    w->nl = nl;
    w->rank_tol = p->val[P_RANK_TOL];
    w->rank0 = (size_t)-1;
    w->baumgarte = baumgarte;
    if (baumgarte) {
        w->alpha = p->val[P_ALPHA];
        w->beta = p->val[P_BETA];
    }
    w->M = mbs_matrix_alloc(nv, nv);
    w->Mih = mbs_matrix_alloc(nv, nv);
    w->E = mbs_matrix_alloc(nv, nv);
    w->B = mbs_matrix_alloc(nlc, nv);
    w->A = mbs_matrix_alloc(mx, mx);
    w->A2 = mbs_matrix_alloc(mx, mx);
    w->mu = gsl_vector_alloc(nv);
    w->s = gsl_vector_alloc(mx);
    w->work = gsl_vector_alloc(mx);
    w->esym = mbs_eigen_symmv_alloc(nv);
    w->f = malloc(nv * sizeof(double));
    w->qf = malloc(nv * sizeof(double));
    w->e = calloc(nlc, sizeof(double));
    w->t = calloc(mx, sizeof(double));
    w->wv = malloc(nv * sizeof(double));
    w->tmp = malloc(nv * sizeof(double));
    w->gam = calloc(nlc, sizeof(double));
    w->g = calloc(nlc, sizeof(double));
    w->gt = calloc(nlc, sizeof(double));
    if (!(w->M && w->Mih && w->E && w->B && w->A && w->A2 && w->mu && w->s && w->work &&
          w->esym && w->f && w->qf && w->e && w->t && w->wv && w->tmp && w->gam && w->g &&
          w->gt)) {
        uk_free(w);
        return MBS_NO_MEMORY;
    }
    mbs_ns_diag_reset(&w->diag);
    *out = w;
    return MBS_OK;
}

static int uk_alloc(void **out, mbs_ctx *ctx, const mbs_params *p)
{
    return uk_alloc_common(out, ctx, p, 0);
}

static int ukb_alloc(void **out, mbs_ctx *ctx, const mbs_params *p)
{
    return uk_alloc_common(out, ctx, p, 1);
}

static int uk_start(void *p, mbs_ctx *ctx, double t0, const double *q, const double *v)
{
    (void)ctx, (void)t0, (void)q, (void)v;
    mbs_ns_diag_reset(&((uk_ws *)p)->diag);
    ((uk_ws *)p)->rank0 = (size_t)-1;
    return MBS_OK;
}

/* Mih = M^-1/2 (Eq. (85)). */
static int inverse_sqrt_mass(uk_ws *w, mbs_ctx *ctx, double t)
{
    size_t nv = w->nv;
    int diagonal = 1;
    for (size_t i = 0; i < nv && diagonal; i++)
        for (size_t j = 0; j < nv; j++)
            if (i != j && gsl_matrix_get(w->M, i, j) != 0.0) {
                diagonal = 0;
                break;
            }
    gsl_matrix_set_zero(w->Mih);
    if (diagonal) {
        for (size_t i = 0; i < nv; i++) {
            double m = gsl_matrix_get(w->M, i, i);
            if (!(m > 0.0))
                return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                                "mass matrix not positive definite (m_%zu%zu = %g)", i, i, m);
            gsl_matrix_set(w->Mih, i, i, 1.0 / sqrt(m));
        }
        return MBS_OK;
    }
    mbs_count_factorization(ctx);
    if (gsl_eigen_symmv(w->M, w->mu, w->E, w->esym) != GSL_SUCCESS) /* destroys M */
        return mbs_fail(ctx, MBS_LIBRARY_FAILURE, t, "GSL symmetric eigensolver of M failed");
    for (size_t k = 0; k < nv; k++) {
        double mu = gsl_vector_get(w->mu, k);
        if (!(mu > 0.0))
            return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                            "mass matrix not positive definite (eigenvalue %g)", mu);
        double c = 1.0 / sqrt(mu);
        for (size_t i = 0; i < nv; i++)
            for (size_t j = 0; j < nv; j++)
                *gsl_matrix_ptr(w->Mih, i, j) +=
                    c * gsl_matrix_get(w->E, i, k) * gsl_matrix_get(w->E, j, k);
    }
    return MBS_OK;
}

static int uk_eval(void *p, mbs_ctx *ctx, double t, const double *q, const double *v,
                   double *vdot, double *lambda)
{
    uk_ws *w = p;
    size_t nv = w->nv, nl = w->nl;
    int s;
    if ((s = mbs_mass(ctx, t, q, w->M)) != MBS_OK ||
        (s = mbs_force(ctx, t, q, v, w->f)) != MBS_OK)
        return s;
    if ((s = inverse_sqrt_mass(w, ctx, t)) != MBS_OK)
        return s;
    /* q''_f = M^-1/2 (M^-1/2 f)  (Eq. (82)) */
    gsl_vector_view f = gsl_vector_view_array(w->f, nv);
    gsl_vector_view qf = gsl_vector_view_array(w->qf, nv);
    gsl_vector_view tmp = gsl_vector_view_array(w->tmp, nv);
    gsl_blas_dgemv(CblasNoTrans, 1.0, w->Mih, &f.vector, 0.0, &tmp.vector);
    gsl_blas_dgemv(CblasNoTrans, 1.0, w->Mih, &tmp.vector, 0.0, &qf.vector);
    gsl_vector_view vd = gsl_vector_view_array(vdot, nv);
    gsl_vector_memcpy(&vd.vector, &qf.vector);
    if (nl == 0) {
        mbs_ns_diag_note(&w->diag, 0, 1.0);
        return MBS_OK;
    }
    gsl_matrix_view B = gsl_matrix_submatrix(w->B, 0, 0, nl, nv);
    if ((s = mbs_constraint_jacobian(ctx, t, q, &B.matrix)) != MBS_OK ||
        (s = mbs_gamma(ctx, t, q, v, w->gam)) != MBS_OK)
        return s;
    gsl_vector_view e = gsl_vector_view_array(w->e, nl);
    gsl_vector_view gam = gsl_vector_view_array(w->gam, nl);
    gsl_vector_memcpy(&e.vector, &gam.vector);
    if (w->baumgarte) {
        /* Eq. (90): gamma - 2 alpha Psi' - beta^2 Psi, Psi' = B v + g_t */
        if ((s = mbs_constraint(ctx, t, q, w->g)) != MBS_OK ||
            (s = mbs_constraint_t(ctx, t, q, w->gt)) != MBS_OK)
            return s;
        gsl_vector_const_view vv = gsl_vector_const_view_array(v, nv);
        gsl_vector_view gt = gsl_vector_view_array(w->gt, nl);
        gsl_blas_dgemv(CblasNoTrans, 1.0, &B.matrix, &vv.vector, 1.0, &gt.vector);
        for (size_t i = 0; i < nl; i++)
            w->e[i] -= 2.0 * w->alpha * w->gt[i] + w->beta * w->beta * w->g[i];
    }
    gsl_blas_dgemv(CblasNoTrans, -1.0, &B.matrix, &qf.vector, 1.0, &e.vector); /* - B q''_f */
    /* SVD of D = B M^-1/2 (Eq. (86)); with D = P S R^T: D^+ = R S^+ P^T. GSL needs
     * rows >= columns: decompose D^T = U S W^T (P = W, R = U) when nl <= nv, else
     * D = U S W^T (P = U, R = W). */
    size_t ns = nl <= nv ? nl : nv;
    gsl_matrix_view Pm, Rm;
    gsl_vector_view sv = gsl_vector_subvector(w->s, 0, ns);
    gsl_vector_view wk = gsl_vector_subvector(w->work, 0, ns);
    int st;
    mbs_count_factorization(ctx);
    if (nl <= nv) {
        gsl_matrix_view A = gsl_matrix_submatrix(w->A, 0, 0, nv, nl); /* D^T = M^-1/2 B^T */
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, w->Mih, &B.matrix, 0.0, &A.matrix);
        gsl_matrix_view A2 = gsl_matrix_submatrix(w->A2, 0, 0, nl, nl);
        st = gsl_linalg_SV_decomp(&A.matrix, &A2.matrix, &sv.vector, &wk.vector);
        Pm = A2;
        Rm = A;
    } else {
        gsl_matrix_view A = gsl_matrix_submatrix(w->A, 0, 0, nl, nv); /* D */
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &B.matrix, w->Mih, 0.0, &A.matrix);
        gsl_matrix_view A2 = gsl_matrix_submatrix(w->A2, 0, 0, nv, nv);
        st = gsl_linalg_SV_decomp(&A.matrix, &A2.matrix, &sv.vector, &wk.vector);
        Pm = A;
        Rm = A2;
    }
    if (st != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_LIBRARY_FAILURE, t, "GSL SVD of B M^-1/2 failed (%s)",
                        gsl_strerror(st));
    const double *sd = w->s->data;
    /* never above the rank at q0 (sorted: the cut moves), as in nullspace.c */
    size_t r = mbs_ns_rank_capped(sd, ns, w->rank_tol, w->rank0);
    if (w->rank0 == (size_t)-1)
        w->rank0 = r;
    mbs_ns_diag_note(&w->diag, r, r > 0 ? (sd[0] / sd[r - 1]) * (sd[0] / sd[r - 1]) : 1.0);
    if (r == 0) {
        if (lambda)
            memset(lambda, 0, nl * sizeof *lambda);
        return MBS_OK;
    }
    /* t = S^+ P^T e,  w = R t  (= D^+ e),  v' = q''_f + M^-1/2 w   (Eq. (89)) */
    gsl_matrix_view P = gsl_matrix_submatrix(&Pm.matrix, 0, 0, nl, r);
    gsl_matrix_view R = gsl_matrix_submatrix(&Rm.matrix, 0, 0, nv, r);
    gsl_vector_view tv = gsl_vector_view_array(w->t, r);
    gsl_vector_view wv = gsl_vector_view_array(w->wv, nv);
    mbs_count_solve(ctx);
    gsl_blas_dgemv(CblasTrans, 1.0, &P.matrix, &e.vector, 0.0, &tv.vector);
    for (size_t i = 0; i < r; i++)
        w->t[i] /= sd[i];
    gsl_blas_dgemv(CblasNoTrans, 1.0, &R.matrix, &tv.vector, 0.0, &wv.vector);
    gsl_blas_dgemv(CblasNoTrans, 1.0, w->Mih, &wv.vector, 1.0, &vd.vector);
    if (lambda) {
        /* lambda = -(D^+)^T w = -P S^+ R^T w = -P S^+ t  (R^T R = I) */
        gsl_vector_view lam = gsl_vector_view_array(lambda, nl);
        for (size_t i = 0; i < r; i++)
            w->t[i] /= sd[i];
        gsl_blas_dgemv(CblasNoTrans, -1.0, &P.matrix, &tv.vector, 0.0, &lam.vector);
    }
    return MBS_OK;
}

const mbs_accel_def mbs_accel_uk = {
    .name = "uk",
    .alloc = uk_alloc,
    .eval = uk_eval,
    .free_ws = uk_free,
    .start = uk_start,
};

const mbs_accel_def mbs_accel_ukb = {
    .name = "ukb",
    .alloc = ukb_alloc,
    .eval = uk_eval,
    .free_ws = uk_free,
    .start = uk_start,
};

static const mbs_param_def uk_params[] = {MBS_NS_RANK_TOL_PARAM};
static const mbs_param_def ukb_params[] = {
    [P_RANK_TOL] = MBS_NS_RANK_TOL_PARAM,
    [P_ALPHA] = {"alpha", 10.0, 0.0, 1e6, "Baumgarte velocity gain (2 alpha Psi', Eq. (90))",
                 NULL, 0},
    [P_BETA] = {"beta", 10.0, 0.0, 1e6, "Baumgarte position gain (beta^2 Psi, Eq. (90))", NULL,
                0},
};

#define UK_METHODS(fm, acc, prm, title, cite) MBS_NS_FORMULATION(fm, acc, prm, title, cite, 0)

UK_METHODS(uk, mbs_accel_uk, uk_params,
           "Udwadia-Kalaba with the pseudo-inverse of B M^-1/2 (GSL SVD)",
           "Pennestri & Valentini [pennestri_coordinate_reduction], Eqs. (82)-(89); Udwadia & Kalaba (1996)")
UK_METHODS(ukb, mbs_accel_ukb, ukb_params,
           "Udwadia-Kalaba with Baumgarte terms (GSL SVD)",
           "Pennestri & Valentini [pennestri_coordinate_reduction], Eq. (90); Baumgarte (1972)")

/* The formulations of this file, for methods/registry.def (MBS_ODE_FORMULATIONS). */
const mbs_ode_formulation *const mbs_ode_formulations_udwadia_kalaba[] = {
    &mbs_ode_formulation_uk, &mbs_ode_formulation_ukb, NULL};
