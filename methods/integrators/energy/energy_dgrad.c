/* Energy schemes (methods/integrators/energy/energy.c, [bauchau2003selfstabilized]): checks of the applied force
 * (gradient of the potential, constant), its Jacobian, the discrete gradient of
 * the constraints and the potential ([bauchau2003selfstabilized] Eqs. (6), (17)), the average
 * force, and the small LU helpers of the Newton iterations.  Split from
 * energy.c. */
#include <float.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../core/gslalloc.h"
#include "energy_impl.h"
#include "../../formulations/index1.h"

double mbs_energy_inf_norm(const double *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        if (fabs(x[i]) > m || isnan(x[i]))
            m = fabs(x[i]);
    return m;
}

/* Does f equal -grad V, V = energy(t0, q, 0), and not depend on v, at (q0, v0)? */
int mbs_energy_force_is_gradient(mbs_ctx *ctx, energy_ws *w, double t0, const double *q0,
                             const double *v0)
{
    const mbs_problem *pb = ctx->pb;
    size_t n = w->n;
    if (!pb->def->energy)
        return 0;
    if (mbs_force(ctx, t0, q0, v0, w->fg) != MBS_OK ||
        mbs_force(ctx, t0, q0, w->zero, w->fh) != MBS_OK)
        return 0;
    double fs = mbs_energy_inf_norm(w->fg, n);
    for (size_t i = 0; i < n; i++)
        if (fabs(w->fg[i] - w->fh[i]) > 1e-12 * (1.0 + fs))
            return 0;
    memcpy(w->tmp, q0, n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        double d = 1e-5 * (1.0 + fabs(q0[i]));
        w->tmp[i] = q0[i] + d;
        double Vp = pb->def->energy(pb, t0, w->tmp, w->zero);
        w->tmp[i] = q0[i] - d;
        double Vm = pb->def->energy(pb, t0, w->tmp, w->zero);
        w->tmp[i] = q0[i];
        double dV = (Vp - Vm) / (2.0 * d);
        if (!isfinite(dV) || fabs(dV + w->fg[i]) > 1e-6 * (1.0 + fs))
            return 0;
    }
    return 1;
}

/* Does f stay exactly the same when q or v is perturbed (gravity, no load)? */
int mbs_energy_force_is_constant(mbs_ctx *ctx, energy_ws *w, double t0, const double *q0,
                             const double *v0)
{
    size_t n = w->n;
    if (mbs_force(ctx, t0, q0, v0, w->f0) != MBS_OK)
        return 0;
    memcpy(w->qx, q0, n * sizeof(double));
    memcpy(w->vx, v0, n * sizeof(double));
    for (size_t j = 0; j < 2 * n; j++) {
        double *x = j < n ? w->qx + j : w->vx + (j - n);
        double x0 = *x;
        *x = x0 + 1e-3 * (1.0 + fabs(x0));
        int s = mbs_force(ctx, t0, w->qx, w->vx, w->f1);
        *x = x0;
        if (s != MBS_OK || memcmp(w->f0, w->f1, n * sizeof(double)) != 0)
            return 0;
    }
    return 1;
}

/* f_q and f_v at (t, q, v) by forward differences (2 n + 1 force evaluations). */
int mbs_energy_force_jacobian(energy_ws *w, mbs_ctx *ctx, double t, const double *q,
                          const double *v)
{
    size_t n = w->n;
    int s = mbs_force(ctx, t, q, v, w->f0);
    if (s != MBS_OK)
        return s;
    memcpy(w->qx, q, n * sizeof(double));
    memcpy(w->vx, v, n * sizeof(double));
    for (size_t j = 0; j < 2 * n; j++) {
        double *x = j < n ? w->qx + j : w->vx + (j - n);
        double x0 = *x, d = 1.5e-8 * fmax(1.0, fabs(x0));
        *x = x0 + d;
        d = *x - x0;
        s = mbs_force(ctx, t, w->qx, w->vx, w->f1);
        *x = x0;
        if (s != MBS_OK)
            return s;
        gsl_matrix *F = j < n ? w->Fq : w->Fv;
        size_t c = j < n ? j : j - n;
        for (size_t i = 0; i < n; i++)
            gsl_matrix_set(F, i, c, (w->f1[i] - w->f0[i]) / d);
    }
    return MBS_OK;
}

/* See energy.h.  Uses w->qm, w->dq, w->Gt, w->ga..gd. */
int mbs_energy_dgrad(energy_ws *w, mbs_ctx *ctx, double ta, const double *qa, double tb,
                 const double *qb, gsl_matrix *B, double *a, double *gbout)
{
    size_t n = w->n, nl = w->nl;
    if (nl == 0)
        return MBS_OK;
    int split = w->rheo && tb != ta;
    gsl_matrix_view Bv = gsl_matrix_submatrix(B, 0, 0, nl, n);
    gsl_matrix_view Gv = gsl_matrix_submatrix(w->Gt, 0, 0, nl, n);
    double dq2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        w->qm[i] = 0.5 * (qa[i] + qb[i]);
        w->dq[i] = qb[i] - qa[i];
        dq2 += w->dq[i] * w->dq[i];
    }
    int s;
    if ((s = mbs_constraint_jacobian(ctx, ta, w->qm, &Bv.matrix)) != MBS_OK)
        return s;
    /* ga = g(ta,qa), gb = g(tb,qb), gc = g(tb,qa), gd = g(ta,qb) */
    if ((s = mbs_constraint(ctx, ta, qa, w->ga)) != MBS_OK ||
        (s = mbs_constraint(ctx, tb, qb, w->gb)) != MBS_OK)
        return s;
    if (split) {
        if ((s = mbs_constraint_jacobian(ctx, tb, w->qm, &Gv.matrix)) != MBS_OK ||
            (s = mbs_constraint(ctx, tb, qa, w->gc)) != MBS_OK ||
            (s = mbs_constraint(ctx, ta, qb, w->gd)) != MBS_OK)
            return s;
        gsl_matrix_add(&Bv.matrix, &Gv.matrix);
        gsl_matrix_scale(&Bv.matrix, 0.5);
    }
    size_t nh0 = nl - ctx->pb->nnh; /* rows nh0.. are non-holonomic (Eq. (22) below) */
    for (size_t k = 0; k < nh0; k++) {
        double gbar_a = split ? 0.5 * (w->ga[k] + w->gc[k]) : w->ga[k];
        double gbar_b = split ? 0.5 * (w->gd[k] + w->gb[k]) : w->gb[k];
        if (a)
            a[k] = split ? 0.5 * ((w->gc[k] - w->ga[k]) + (w->gb[k] - w->gd[k])) : 0.0;
        double num = gbar_b - gbar_a, scale = fabs(gbar_a) + fabs(gbar_b);
        for (size_t j = 0; j < n; j++) {
            double t = gsl_matrix_get(&Bv.matrix, k, j) * w->dq[j];
            num -= t;
            scale += fabs(t);
        }
        /* Gonzalez correction only where Eq. (6) fails beyond round-off. */
        if (dq2 > 0.0 && fabs(num) > 64.0 * DBL_EPSILON * scale) {
            double c = num / dq2;
            for (size_t j = 0; j < n; j++)
                gsl_matrix_set(&Bv.matrix, k, j, gsl_matrix_get(&Bv.matrix, k, j) + c * w->dq[j]);
        }
    }
    if (nh0 < nl) {
        /* Non-holonomic rows A(t,q) v + a(t,q) = 0 (problem.h; [bauchau2003selfstabilized] Sect. 3.3,
         * Eq. (22)): B_k = A_k at the midpoint (the jacobian rows, averaged over
         * ta, tb when rheonomic: second order), a_k = (tb - ta) a_k(t_m, q_m), and
         * the "g(tb, qb)" handed back is (tb - ta) times the Eq. (22) residual,
         *     B_k (qb - qa) + a_k = (tb - ta) (A_k(q_m) v_m + a_k(t_m, q_m)),
         * v_m = (qb - qa)/(tb - ta), so that the step equation g_f = 0 enforces
         * Eq. (22) and the work of these forces is a . lambda as for rheonomic
         * constraints (Eqs. (20), (21); 0 when a = 0).  No Gonzalez correction. */
        double hs = tb - ta;
        if ((s = mbs_constraint_t(ctx, ta + 0.5 * hs, w->qm, w->gc)) != MBS_OK)
            return s;
        for (size_t k = nh0; k < nl; k++) {
            double ak = hs * w->gc[k], r = ak;
            for (size_t j = 0; j < n; j++)
                r += gsl_matrix_get(&Bv.matrix, k, j) * w->dq[j];
            if (a)
                a[k] = ak;
            w->gb[k] = r;
        }
    }
    if (gbout)
        memcpy(gbout, w->gb, nl * sizeof(double));
    return MBS_OK;
}

int mbs_energy_discrete_gradient(void *state, mbs_ctx *ctx, double ta, const double *qa,
                                 double tb, const double *qb, gsl_matrix *B, double *a,
                                 double *gb)
{
    return mbs_energy_dgrad(state, ctx, ta, qa, tb, qb, B, a, gb);
}

/* Applied force between (qa, va) and (qb, vb) at time t (see the head comment):
 * out = f(t, q_m, v_m), plus with force=gradient the correction that makes
 * (qb - qa) . out = -(V(qb) - V(qa)).  Uses w->tmp as q_m, w->vm. */
int mbs_energy_fbar(energy_ws *w, mbs_ctx *ctx, double t, const double *qa, const double *va,
                const double *qb, const double *vb, double *out)
{
    const mbs_problem *pb = ctx->pb;
    size_t n = w->n;
    double dq2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        w->tmp[i] = 0.5 * (qa[i] + qb[i]);
        w->vm[i] = 0.5 * (va[i] + vb[i]);
        double d = qb[i] - qa[i];
        dq2 += d * d;
    }
    int s = mbs_force(ctx, t, w->tmp, w->vm, out);
    if (s != MBS_OK || !w->gradient)
        return s;
    double Va = pb->def->energy(pb, t, qa, w->zero), Vb = pb->def->energy(pb, t, qb, w->zero);
    double num = -(Vb - Va), scale = fabs(Va) + fabs(Vb);
    for (size_t i = 0; i < n; i++) {
        double p = out[i] * (qb[i] - qa[i]);
        num -= p;
        scale += fabs(p);
    }
    if (dq2 > 0.0 && fabs(num) > 64.0 * DBL_EPSILON * scale) {
        double c = num / dq2;
        for (size_t i = 0; i < n; i++)
            out[i] += c * (qb[i] - qa[i]);
    }
    return MBS_OK;
}

int mbs_energy_factor(mbs_ctx *ctx, gsl_matrix *J, gsl_permutation *p, double t)
{
    int sign;
    mbs_count_factorization(ctx);
    if (gsl_linalg_LU_decomp(J, p, &sign) != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                        "LU factorisation of the Newton matrix failed");
    for (size_t i = 0; i < J->size1; i++)
        if (gsl_matrix_get(J, i, i) == 0.0 || !isfinite(gsl_matrix_get(J, i, i)))
            return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t,
                            "singular Newton matrix (redundant constraints or singular mass?)");
    return MBS_OK;
}

int mbs_energy_lu_solve(mbs_ctx *ctx, const gsl_matrix *LU, const gsl_permutation *p,
                    const gsl_vector *r, gsl_vector *dx, double t)
{
    mbs_count_solve(ctx);
    if (gsl_linalg_LU_solve(LU, p, r, dx) != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t, "LU solve of the Newton system failed");
    return MBS_OK;
}

int mbs_energy_solve(mbs_ctx *ctx, gsl_matrix *J, gsl_permutation *p, const gsl_vector *r,
                 gsl_vector *dx, double t)
{
    int s = mbs_energy_factor(ctx, J, p, t);
    return s == MBS_OK ? mbs_energy_lu_solve(ctx, J, p, r, dx, t) : s;
}

double mbs_energy_mass_scale(const gsl_matrix *M)
{
    double s = 0.0;
    for (size_t i = 0; i < M->size1; i++)
        s = fmax(s, fabs(gsl_matrix_get(M, i, i)));
    return s > 0.0 ? s : 1.0;
}

