/* Reductions of mechanism files (mech_reference.h). */
#include "mech_reference.h"

#include <gsl/gsl_sf_ellint.h>
#include <gsl/gsl_sf_elljac.h>
#include <math.h>
#include <string.h>

#include "../core/status.h"
#include "mech_impl.h"

void mbs_nfourbar_branch(double N, double g, double L, double w0, double t, double *theta,
                         double *dtheta)
{
    double kappa = ((N + 1.0) / 2.0 + N) / ((N + 1.0) / 3.0 + N), a = kappa * g / L;
    double c = 0.5 * sqrt(w0 * w0 + 4.0 * a), m = 4.0 * a / (w0 * w0 + 4.0 * a);
    double K = gsl_sf_ellint_Kcomp(sqrt(m), GSL_PREC_DOUBLE);
    /* am(u) = n pi + am(u - 2 n K), am(u) in (-pi/2, pi/2] for |u| <= K */
    double u = K - c * t, n = nearbyint(u / (2.0 * K)), sn, cn, dn;
    gsl_sf_elljac_e(u - 2.0 * K * n, m, &sn, &cn, &dn);
    double am = MBS_PI * n + atan2(sn, cn);
    *theta = 2.0 * am - 0.5 * MBS_PI;
    *dtheta = -2.0 * c * dn; /* (am)' = dn */
}

/* nfourbar.mech: B0 = L (cos theta, sin theta), the top of the first crank. */
static int nfourbar_b0(const mbs_problem *pb, double t, double *out)
{
    int iN = mbs_params_find(&pb->params, "N"), ig = mbs_params_find(&pb->params, "g");
    if (iN < 0 || ig < 0)
        return MBS_UNSUPPORTED;
    double th, dth, L = 1.0;
    mbs_nfourbar_branch(pb->params.val[iN], pb->params.val[ig], L, -1.0, t - pb->t0, &th, &dth);
    out[0] = L * cos(th);
    out[1] = L * sin(th);
    out[2] = -L * sin(th) * dth;
    out[3] = L * cos(th) * dth;
    return MBS_OK;
}

/* nfourbar.mech on its parallelogram branch: q holds the crank tips B_i (x, y),
 * i = 0..N, which start at (i, 1); on the branch B_i = (i + L cos theta, L sin
 * theta) and the configuration's distance from the branch is max_i |B_i - B_0 -
 * (i, 0)| / L (0 for any parallelogram, whatever its phase). */
static int nfourbar_branch(const mbs_problem *pb, double t, const double *q, double *qb,
                           double *vb, double *off)
{
    int iN = mbs_params_find(&pb->params, "N"), ig = mbs_params_find(&pb->params, "g");
    const mech_model *m = pb->data;
    if (iN < 0 || ig < 0 || !m || m->dim != 2)
        return MBS_UNSUPPORTED;
    double N = pb->params.val[iN], th, dth, L = 1.0;
    size_t np = m->nq / 2, k0 = np;
    if (m->nq % 2 || (double)np != N + 1.0)
        return MBS_UNSUPPORTED;
    mbs_nfourbar_branch(N, pb->params.val[ig], L, -1.0, t - pb->t0, &th, &dth);
    for (size_t k = 0; k < np; k++)
        if (fabs(m->q0[2 * k]) < 1e-9 && fabs(m->q0[2 * k + 1] - L) < 1e-9)
            k0 = k; /* B_0 */
    if (k0 == np)
        return MBS_UNSUPPORTED;
    *off = 0.0;
    for (size_t k = 0; k < np; k++) {
        double i = nearbyint(m->q0[2 * k]); /* B_i starts at (i, L) */
        if (fabs(m->q0[2 * k] - i) > 1e-9 || i < 0.0 || i > N ||
            fabs(m->q0[2 * k + 1] - L) > 1e-9)
            return MBS_UNSUPPORTED;
        qb[2 * k] = i + L * cos(th);
        qb[2 * k + 1] = L * sin(th);
        vb[2 * k] = -L * sin(th) * dth;
        vb[2 * k + 1] = L * cos(th) * dth;
        double d = hypot(q[2 * k] - q[2 * k0] - i, q[2 * k + 1] - q[2 * k0 + 1]) / L;
        *off = d > *off || isnan(d) ? d : *off;
    }
    return MBS_OK;
}

static const char *const b0_names[] = {"x_B0", "y_B0", "vx_B0", "vy_B0", NULL};

static const mbs_mech_reference table[] = {
    {"nfourbar-parallelogram", b0_names,
     "parallelogram branch theta'' = -kappa (g/L) cos theta in closed form (Jacobi "
     "elliptic functions, GSL); cranks of L = 1 m turning at -1 rad/s",
     nfourbar_b0, nfourbar_branch},
};

const mbs_mech_reference *mbs_mech_reference_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}
