/* Mechanism files: consistent initial values, the rank defect of G and the
 * initial multipliers.
 *
 * Positions: Gauss-Newton with minimum-norm steps q <- q - G^+ g(t0, q) from
 * the reference configuration (the positions as given).  Velocities: among the
 * v with G v = -g_t, the one nearest (least squares) to the velocities given in
 * the file; coordinates without a given velocity are free (minimum norm where
 * nothing fixes them).  Both by SVD (GSL), so redundant constraints are fine. */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "mech_impl.h"

enum { MAX_DENSE = 3000 };     /* largest n for the dense completion (SVD) */
static const double RANK_TOL = 1e-10; /* singular values below this x the largest are zero */

/* Minimum-norm least-squares solution of K x = r (K is m x n, not modified);
 * *rank gets the numerical rank.  Returns MBS_OK or MBS_NO_MEMORY. */
static int lsq_minnorm(const gsl_matrix *K, const double *r, double *x, size_t *rank)
{
    size_t m = K->size1, n = K->size2, big = m >= n ? m : n, sm = m >= n ? n : m;
    int st = MBS_NO_MEMORY;
    gsl_matrix *U = gsl_matrix_alloc(big, sm), *V = gsl_matrix_alloc(sm, sm);
    gsl_vector *S = gsl_vector_alloc(sm), *w = gsl_vector_alloc(sm), *tmp = gsl_vector_alloc(sm);
    if (!U || !V || !S || !w || !tmp)
        goto done;
    if (m >= n)
        gsl_matrix_memcpy(U, K);
    else
        gsl_matrix_transpose_memcpy(U, K);
    if (gsl_linalg_SV_decomp(U, V, S, w) != 0) {
        st = MBS_SINGULAR_MATRIX;
        goto done;
    }
    double cut = RANK_TOL * gsl_vector_get(S, 0);
    size_t rk = 0;
    for (size_t i = 0; i < sm; i++)
        rk += gsl_vector_get(S, i) > cut;
    if (rank)
        *rank = rk;
    if (x) {
        /* m >= n: K = U S V^T, x = V S^+ U^T r;  m < n: K = V S U^T, x = U S^+ V^T r */
        gsl_vector_const_view rv = gsl_vector_const_view_array(r, m);
        gsl_vector_view xv = gsl_vector_view_array(x, n);
        gsl_blas_dgemv(CblasTrans, 1.0, m >= n ? U : V, &rv.vector, 0.0, tmp);
        for (size_t i = 0; i < sm; i++) {
            double s = gsl_vector_get(S, i);
            gsl_vector_set(tmp, i, s > cut ? gsl_vector_get(tmp, i) / s : 0.0);
        }
        gsl_blas_dgemv(CblasNoTrans, 1.0, m >= n ? V : U, tmp, 0.0, &xv.vector);
    }
    st = MBS_OK;
done:
    gsl_matrix_free(U);
    gsl_matrix_free(V);
    gsl_vector_free(S);
    gsl_vector_free(w);
    gsl_vector_free(tmp);
    return st;
}

static double maxabs(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s = fmax(s, fabs(x[i]));
    return s;
}

static int positions(mech_model *m, const mbs_problem *pb, char *err, size_t errlen)
{
    size_t nq = m->nq, nl = m->nl;
    double *g = malloc((nl + 1) * sizeof *g), *dq = malloc(nq * sizeof *dq);
    double *given = malloc(nq * sizeof *given);
    gsl_matrix *G = NULL;
    int st = MBS_NO_MEMORY;
    if (!g || !dq || !given)
        goto done;
    memcpy(given, m->q0, nq * sizeof *given);
    double tol = 1e-12 * (1.0 + maxabs(m->q0, nq));
    mech_cb_g(pb, m->t0, m->q0, g);
    double res = maxabs(g, nl);
    if (res > tol) {
        if (nq + nl > MAX_DENSE) {
            snprintf(err, errlen, "initial positions violate the constraints by %.3g and the "
                     "model is too large (n_q + n_lambda > %d) for the dense completion",
                     res, MAX_DENSE);
            st = MBS_BAD_INPUT;
            goto done;
        }
        if (!(G = gsl_matrix_alloc(nl, nq)))
            goto done;
        for (int it = 0; it < 50 && res > tol; it++) {
            mech_cb_G(pb, m->t0, m->q0, G);
            if ((st = lsq_minnorm(G, g, dq, NULL)) != MBS_OK)
                goto done;
            for (size_t i = 0; i < nq; i++)
                m->q0[i] -= dq[i];
            mech_cb_g(pb, m->t0, m->q0, g);
            res = maxabs(g, nl);
        }
        if (!(res <= tol)) {
            snprintf(err, errlen, "the initial positions cannot be made consistent: constraint "
                     "residual %.3g after 50 Newton steps", res);
            st = MBS_BAD_INPUT;
            goto done;
        }
    }
    for (size_t i = 0; i < nq; i++)
        dq[i] = m->q0[i] - given[i];
    m->moved_q = maxabs(dq, nq);
    st = MBS_OK;
done:
    free(g);
    free(dq);
    free(given);
    gsl_matrix_free(G);
    return st;
}

static int velocities(mech_model *m, const mbs_problem *pb, const double *obs, size_t nobs,
                      char *err, size_t errlen)
{
    size_t nq = m->nq, nl = m->nl, n = nq + nl;
    double *gt = calloc(nl + 1, sizeof *gt), *r = NULL, *x = NULL, *res = NULL;
    int *count = calloc(nq, sizeof *count);
    gsl_matrix *G = NULL, *K = NULL;
    int st = MBS_NO_MEMORY, simple = 1;
    if (!gt || !count)
        goto done;
    if (m->rheonomic)
        mech_cb_gt(pb, m->t0, m->q0, gt);
    /* every coordinate given once, absolutely: that v if it is consistent */
    memset(m->v0, 0, nq * sizeof *m->v0);
    for (size_t k = 0; k < nobs; k++) {
        size_t i = (size_t)obs[3 * k];
        if (obs[3 * k + 1] >= 0 || count[i]++)
            simple = 0;
        else
            m->v0[i] = obs[3 * k + 2];
    }
    for (size_t i = 0; i < nq && simple; i++)
        simple = count[i] == 1 || (nobs == 0);
    if (!(res = malloc((nl + 1) * sizeof *res)) || !(G = gsl_matrix_alloc(nl ? nl : 1, nq)))
        goto done;
    double scale = 1.0 + maxabs(m->v0, nq) + maxabs(gt, nl);
    double tol = 1e-12 * scale * (1.0 + maxabs(m->q0, nq));
    if (simple && nl > 0) {
        /* G v + g_t through the rows: G v = sum over terms, as in the callbacks */
        mech_cb_G(pb, m->t0, m->q0, G);
        gsl_vector_view vv = gsl_vector_view_array(m->v0, nq), rv = gsl_vector_view_array(res, nl);
        gsl_blas_dgemv(CblasNoTrans, 1.0, G, &vv.vector, 0.0, &rv.vector);
        for (size_t i = 0; i < nl; i++)
            res[i] += gt[i];
        if (maxabs(res, nl) <= tol) {
            m->moved_v = 0.0;
            st = MBS_OK;
            goto done;
        }
    } else if (simple) {
        m->moved_v = 0.0;
        st = MBS_OK;
        goto done;
    }
    if (n > MAX_DENSE) {
        snprintf(err, errlen, "the initial velocities are not consistent and the model is too "
                 "large (n_q + n_lambda > %d) for the dense completion", MAX_DENSE);
        st = MBS_BAD_INPUT;
        goto done;
    }
    /* [A^T A  G^T; G  0] [v; mu] = [A^T b; -g_t], minimum norm */
    if (!(K = gsl_matrix_calloc(n, n)) || !(r = calloc(n, sizeof *r)) ||
        !(x = calloc(n, sizeof *x)))
        goto done;
    for (size_t k = 0; k < nobs; k++) {
        size_t i = (size_t)obs[3 * k];
        double b = obs[3 * k + 2];
        long j = (long)obs[3 * k + 1];
        *gsl_matrix_ptr(K, i, i) += 1.0;
        r[i] += b;
        if (j >= 0) {
            *gsl_matrix_ptr(K, (size_t)j, (size_t)j) += 1.0;
            *gsl_matrix_ptr(K, i, (size_t)j) -= 1.0;
            *gsl_matrix_ptr(K, (size_t)j, i) -= 1.0;
            r[j] -= b;
        }
    }
    if (nl > 0) {
        mech_cb_G(pb, m->t0, m->q0, G);
        for (size_t i = 0; i < nl; i++) {
            for (size_t j = 0; j < nq; j++) {
                double v = gsl_matrix_get(G, i, j);
                gsl_matrix_set(K, nq + i, j, v);
                gsl_matrix_set(K, j, nq + i, v);
            }
            r[nq + i] = -gt[i];
        }
    }
    if ((st = lsq_minnorm(K, r, x, NULL)) != MBS_OK)
        goto done;
    memcpy(m->v0, x, nq * sizeof *x);
    if (nl > 0) {
        gsl_vector_view vv = gsl_vector_view_array(m->v0, nq), rv = gsl_vector_view_array(res, nl);
        gsl_blas_dgemv(CblasNoTrans, 1.0, G, &vv.vector, 0.0, &rv.vector);
        for (size_t i = 0; i < nl; i++)
            res[i] += gt[i];
        if (!(maxabs(res, nl) <= tol)) {
            snprintf(err, errlen, "the initial velocities cannot satisfy the velocity "
                     "constraints: residual %.3g", maxabs(res, nl));
            st = MBS_BAD_INPUT;
            goto done;
        }
    }
    m->moved_v = 0.0;
    for (size_t k = 0; k < nobs; k++) {
        long j = (long)obs[3 * k + 1];
        double v = m->v0[(size_t)obs[3 * k]] - (j >= 0 ? m->v0[j] : 0.0);
        m->moved_v = fmax(m->moved_v, fabs(v - obs[3 * k + 2]));
    }
    st = MBS_OK;
done:
    free(gt);
    free(count);
    free(r);
    free(x);
    free(res);
    gsl_matrix_free(G);
    gsl_matrix_free(K);
    return st;
}

/* n_lambda - rank G(q0) (-1 when the model is too large for the SVD). */
static int rank_defect(mech_model *m, const mbs_problem *pb)
{
    size_t nq = m->nq, nl = m->nl, rk;
    if (nl == 0) {
        m->rank_defect = 0;
        return MBS_OK;
    }
    if ((double)nl * (double)nl * (double)nq > 3e8) {
        m->rank_defect = -1;
        return MBS_OK;
    }
    gsl_matrix *G = gsl_matrix_alloc(nl, nq);
    if (!G)
        return MBS_NO_MEMORY;
    mech_cb_G(pb, m->t0, m->q0, G);
    int st = lsq_minnorm(G, NULL, NULL, &rk);
    gsl_matrix_free(G);
    m->rank_defect = st == MBS_OK ? (long)(nl - rk) : -1;
    return st == MBS_SINGULAR_MATRIX ? MBS_OK : st;
}

/* Minimum-norm multipliers: [M G^T; G 0] [v'; lambda] = [f; gamma]. */
static int multipliers(mech_model *m, const mbs_problem *pb)
{
    size_t nq = m->nq, nl = m->nl, n = nq + nl;
    if (n > MAX_DENSE || nl == 0)
        return MBS_OK;
    int st = MBS_NO_MEMORY;
    gsl_matrix *K = gsl_matrix_calloc(n, n), *M = gsl_matrix_alloc(nq, nq),
               *G = gsl_matrix_alloc(nl, nq);
    double *r = calloc(n, sizeof *r), *x = calloc(n, sizeof *x);
    if (!K || !M || !G || !r || !x)
        goto done;
    mech_cb_mass(pb, m->t0, m->q0, M);
    mech_cb_G(pb, m->t0, m->q0, G);
    mech_cb_force(pb, m->t0, m->q0, m->v0, r);
    mech_cb_gamma(pb, m->t0, m->q0, m->v0, r + nq);
    gsl_matrix_view K11 = gsl_matrix_submatrix(K, 0, 0, nq, nq);
    gsl_matrix_memcpy(&K11.matrix, M);
    for (size_t i = 0; i < nl; i++)
        for (size_t j = 0; j < nq; j++) {
            gsl_matrix_set(K, nq + i, j, gsl_matrix_get(G, i, j));
            gsl_matrix_set(K, j, nq + i, gsl_matrix_get(G, i, j));
        }
    if ((st = lsq_minnorm(K, r, x, NULL)) != MBS_OK)
        goto done;
    m->lambda0 = malloc(nl * sizeof *m->lambda0);
    if (!m->lambda0) {
        st = MBS_NO_MEMORY;
        goto done;
    }
    memcpy(m->lambda0, x + nq, nl * sizeof *x);
    st = MBS_OK;
done:
    gsl_matrix_free(K);
    gsl_matrix_free(M);
    gsl_matrix_free(G);
    free(r);
    free(x);
    return st;
}

int mech_complete_initial(mech_model *m, const double *obs, size_t nobs, char *err,
                          size_t errlen)
{
    mbs_problem pb = {.data = m, .nq = m->nq, .nv = m->nq, .nl = m->nl};
    char msg[400] = "";
    int st = positions(m, &pb, msg, sizeof msg);
    if (st == MBS_OK)
        st = velocities(m, &pb, obs, nobs, msg, sizeof msg);
    if (st == MBS_OK)
        st = rank_defect(m, &pb);
    if (st == MBS_OK && (m->rank_defect > 0 || m->singular_mass))
        st = multipliers(m, &pb);
    if (st != MBS_OK)
        snprintf(err, errlen, "%s", msg[0] ? msg : mbs_status_message(st));
    return st;
}
