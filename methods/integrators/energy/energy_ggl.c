/* Energy schemes (methods/integrators/energy/energy.c, [bauchau2003selfstabilized]): the GGL-stabilised
 * midpoint step of [bauchau2003selfstabilized] Eq. (37).  Split from energy.c. */
#include <float.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../core/gslalloc.h"
#include "energy_impl.h"
#include "../../formulations/index1.h"

/* ---- GGL, [bauchau2003selfstabilized] Eq. (37) ------------------------------------ */

int mbs_energy_ggl_step(void *state, mbs_ctx *ctx, double t, double h, double *y, double *mu)
{
    energy_ws *w = state;
    if (!w || w->ed)
        return mbs_fail(ctx, MBS_BAD_INPUT, t, "the GGL step needs an ep/midpoint workspace");
    if (ctx->pb->nnh > 0)
        return mbs_fail(ctx, MBS_UNSUPPORTED, t,
                        "the GGL step of Eq. (37) is for holonomic constraints only");
    size_t n = w->n, nl = w->nl;
    double tf = t + h, tm = t + 0.5 * h;
    memcpy(w->qi, y, n * sizeof(double));
    memcpy(w->vi, y + n, n * sizeof(double));
    memcpy(w->lam, y + 2 * n, nl * sizeof(double));
    for (size_t k = 0; k < nl; k++)
        mu[k] = 0.0;
    for (size_t i = 0; i < n; i++) {
        w->qf[i] = w->qi[i] + h * w->vi[i];
        w->vf[i] = w->vi[i];
    }
    for (long it = 1;; it++) {
        if (it > w->maxit)
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t, "GGL Newton did not converge");
        mbs_count_newton(ctx);
        int s;
        if ((s = mbs_energy_dgrad(w, ctx, t, w->qi, tf, w->qf, w->Bg, w->ag, w->gf)) != MBS_OK ||
            (s = mbs_energy_fbar(w, ctx, tm, w->qi, w->vi, w->qf, w->vf, w->fg)) != MBS_OK)
            return s;
        for (size_t i = 0; i < n; i++)
            w->qm[i] = 0.5 * (w->qi[i] + w->qf[i]);
        if ((s = mbs_mass(ctx, tm, w->qm, w->M)) != MBS_OK ||
            (nl && (s = mbs_constraint_jacobian(ctx, tf, w->qf, w->Gf)) != MBS_OK))
            return s;
        /* Rows: (4) x h | (37) x h | (9) | (11)/(18); unknowns q_f | v_f | lambda | mu. */
        gsl_matrix_set_zero(w->Jg);
        for (size_t i = 0; i < n; i++) {
            double r1 = -h * w->fg[i];
            double r2 = (w->qf[i] - w->qi[i]) - 0.5 * h * (w->vf[i] + w->vi[i]);
            for (size_t j = 0; j < n; j++) {
                double mij = gsl_matrix_get(w->M, i, j);
                r1 += mij * (w->vf[j] - w->vi[j]);
                gsl_matrix_set(w->Jg, i, n + j, mij);
            }
            for (size_t k = 0; k < nl; k++) {
                double b = gsl_matrix_get(w->Bg, k, i);
                r1 += h * b * w->lam[k];
                r2 += h * b * mu[k];
                gsl_matrix_set(w->Jg, i, 2 * n + k, h * b);
                gsl_matrix_set(w->Jg, n + i, 2 * n + nl + k, h * b);
            }
            gsl_matrix_set(w->Jg, n + i, i, 1.0);
            gsl_matrix_set(w->Jg, n + i, n + i, -0.5 * h);
            gsl_vector_set(w->rg, i, -r1);
            gsl_vector_set(w->rg, n + i, -r2);
        }
        for (size_t k = 0; k < nl; k++) {
            double r4 = w->ag[k] / h;
            for (size_t j = 0; j < n; j++) {
                double b = gsl_matrix_get(w->Bg, k, j);
                r4 += b * 0.5 * (w->vf[j] + w->vi[j]);
                gsl_matrix_set(w->Jg, 2 * n + k, j, gsl_matrix_get(w->Gf, k, j));
                gsl_matrix_set(w->Jg, 2 * n + nl + k, n + j, 0.5 * b);
            }
            gsl_vector_set(w->rg, 2 * n + k, -w->gf[k]);
            gsl_vector_set(w->rg, 2 * n + nl + k, -r4);
        }
        if ((s = mbs_energy_solve(ctx, w->Jg, w->pg, w->rg, w->dg, t)) != MBS_OK)
            return s;
        double d = 0.0;
        for (size_t i = 0; i < n; i++) {
            w->qf[i] += gsl_vector_get(w->dg, i);
            w->vf[i] += gsl_vector_get(w->dg, n + i);
            d = fmax(d, fabs(gsl_vector_get(w->dg, i)));
            d = fmax(d, h * fabs(gsl_vector_get(w->dg, n + i)));
        }
        for (size_t k = 0; k < nl; k++) {
            w->lam[k] += gsl_vector_get(w->dg, 2 * n + k);
            mu[k] += gsl_vector_get(w->dg, 2 * n + nl + k);
            d = fmax(d, h * h * fabs(gsl_vector_get(w->dg, 2 * n + k)) / mbs_energy_mass_scale(w->M));
            d = fmax(d, h * fabs(gsl_vector_get(w->dg, 2 * n + nl + k)));
        }
        if (!isfinite(d))
            return mbs_fail(ctx, MBS_NEWTON_DIVERGED, t, "GGL Newton produced NaN/Inf");
        if (d <= w->tol * (1.0 + mbs_energy_inf_norm(w->qf, n)))
            break;
    }
    memcpy(y, w->qf, n * sizeof(double));
    memcpy(y + n, w->vf, n * sizeof(double));
    memcpy(y + 2 * n, w->lam, nl * sizeof(double));
    return MBS_OK;
}

