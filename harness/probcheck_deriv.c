/* The analytic derivatives of the problem contract (problems/problem.h: force_q,
 * force_v, gtlambda_q, gw_q) against central differences of the plain
 * callbacks (probcheck.h).  Moved here from tests/check_derivs.c so that
 * `mbsbench check-problem` checks them on any problem, plugins included. */
#include "probcheck.h"

#include <math.h>
#include <stdlib.h>

#include "../core/gslalloc.h"
#include "../core/status.h"

static const char *const names[MBS_DERIV_COUNT] = {"force_q", "force_v", "gtlambda_q", "gw_q"};

const char *mbs_deriv_name(int which)
{
    return which >= 0 && which < MBS_DERIV_COUNT ? names[which] : "?";
}

int mbs_deriv_point(const mbs_problem *pb, double *q, double *v, double *lam, double *w)
{
    int have = 0;
    size_t nlx = pb->nl + pb->nx;
    double *l0 = calloc(nlx ? nlx : 1, sizeof(double));
    if (!l0)
        return MBS_NO_MEMORY;
    int s = pb->def->initial(pb, q, v, l0, &have);
    free(l0);
    if (s != MBS_OK)
        return s;
    for (size_t i = 0; i < pb->nq; i++) {
        q[i] += 1e-2 * sin(1.3 * (double)i + 0.4);
        w[i] = cos(0.7 * (double)i + 0.2);
    }
    for (size_t i = 0; i < pb->nv; i++)
        v[i] += 0.5 * sin(0.9 * (double)i + 1.1);
    for (size_t i = 0; i < pb->nl; i++)
        lam[i] = 1.0 + 0.5 * cos(1.7 * (double)i);
    return MBS_OK;
}

/* Value whose derivative callback `which` gives: f (n_v), G^T lambda (n_q) or
 * G w (n_l) at (q, v). */
static int value(const mbs_problem *pb, int which, double t, const double *q, const double *v,
                 const double *lam, const double *w, gsl_matrix *G, double *out)
{
    if (which == MBS_DERIV_FORCE_Q || which == MBS_DERIV_FORCE_V)
        return pb->def->force(pb, t, q, v, out);
    int s = pb->def->jacobian(pb, t, q, G);
    if (s != MBS_OK)
        return s;
    if (which == MBS_DERIV_GTLAMBDA_Q) {
        for (size_t j = 0; j < pb->nq; j++) {
            out[j] = 0.0;
            for (size_t i = 0; i < pb->nl; i++)
                out[j] += gsl_matrix_get(G, i, j) * lam[i];
        }
    } else {
        for (size_t i = 0; i < pb->nl; i++) {
            out[i] = 0.0;
            for (size_t j = 0; j < pb->nq; j++)
                out[i] += gsl_matrix_get(G, i, j) * w[j];
        }
    }
    return MBS_OK;
}

double mbs_deriv_mismatch(const mbs_problem *pb0, const mbs_problem_def *def, int which,
                          mbs_deriv_worst *worst, char *err, size_t errlen)
{
    mbs_problem pbv = *pb0;
    pbv.def = def;
    const mbs_problem *pb = &pbv;
    int has = which == MBS_DERIV_FORCE_Q      ? def->force_q != NULL
              : which == MBS_DERIV_FORCE_V    ? def->force_v != NULL
              : which == MBS_DERIV_GTLAMBDA_Q ? def->gtlambda_q != NULL
                                              : def->gw_q != NULL;
    if (!has || ((which == MBS_DERIV_GTLAMBDA_Q || which == MBS_DERIV_GW_Q) && pb->nl == 0))
        return -1.0;
    size_t nq = pb->nq, nv = pb->nv, nl = pb->nl;
    size_t rows = which == MBS_DERIV_GTLAMBDA_Q ? nq : which == MBS_DERIV_GW_Q ? nl : nv;
    size_t cols = which == MBS_DERIV_FORCE_V ? nv : nq;
    double *q = calloc(nq, sizeof(double)), *v = calloc(nv, sizeof(double));
    double *lam = calloc(nl + 1, sizeof(double)), *w = calloc(nq, sizeof(double));
    double *a = calloc(rows, sizeof(double)), *b = calloc(rows, sizeof(double));
    gsl_matrix *D = mbs_matrix_alloc(rows, cols), *G = mbs_matrix_alloc(nl ? nl : 1, nq);
    double t = pb->t0 + 0.137, dmax = 0.0, emax = 0.0, result = -2.0;
    int s = MBS_NO_MEMORY;
    if (!q || !v || !lam || !w || !a || !b || !D || !G)
        goto fail;
    if ((s = mbs_deriv_point(pb, q, v, lam, w)) != MBS_OK)
        goto fail;
    s = which == MBS_DERIV_FORCE_Q      ? def->force_q(pb, t, q, v, D)
        : which == MBS_DERIV_FORCE_V    ? def->force_v(pb, t, q, v, D)
        : which == MBS_DERIV_GTLAMBDA_Q ? def->gtlambda_q(pb, t, q, lam, D)
                                        : def->gw_q(pb, t, q, w, D);
    if (s != MBS_OK)
        goto fail;
    double *x = which == MBS_DERIV_FORCE_V ? v : q;
    for (size_t j = 0; j < cols; j++) {
        double xj = x[j], h = 1e-5 * (1.0 + fabs(xj));
        x[j] = xj + h;
        s = value(pb, which, t, q, v, lam, w, G, a);
        x[j] = xj - h;
        if (s == MBS_OK)
            s = value(pb, which, t, q, v, lam, w, G, b);
        x[j] = xj;
        if (s != MBS_OK)
            goto fail;
        for (size_t i = 0; i < rows; i++) {
            double fd = (a[i] - b[i]) / (2.0 * h), e = fabs(gsl_matrix_get(D, i, j) - fd);
            dmax = fmax(dmax, fabs(fd));
            if (e > emax || (i == 0 && j == 0)) {
                emax = e;
                if (worst)
                    *worst = (mbs_deriv_worst){i, j, gsl_matrix_get(D, i, j), fd};
            }
        }
    }
    result = emax / (1.0 + dmax);
fail:
    if (result == -2.0)
        snprintf(err, errlen, "%s: a callback failed at t = %g: %s", mbs_deriv_name(which), t,
                 mbs_status_message(s));
    free(q), free(v), free(lam), free(w), free(a), free(b);
    if (D)
        gsl_matrix_free(D);
    if (G)
        gsl_matrix_free(G);
    return result;
}
