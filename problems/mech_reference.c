/* Reductions of mechanism files (mech_reference.h). */
#include "mech_reference.h"

#include <gsl/gsl_sf_ellint.h>
#include <gsl/gsl_sf_elljac.h>
#include <math.h>
#include <string.h>

#include "../core/status.h"

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

static const char *const b0_names[] = {"x_B0", "y_B0", "vx_B0", "vy_B0", NULL};

static const mbs_mech_reference table[] = {
    {"nfourbar-parallelogram", b0_names,
     "parallelogram branch theta'' = -kappa (g/L) cos theta in closed form (Jacobi "
     "elliptic functions, GSL); cranks of L = 1 m turning at -1 rad/s",
     nfourbar_b0},
};

const mbs_mech_reference *mbs_mech_reference_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}
