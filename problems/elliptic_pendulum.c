#include "elliptic_pendulum.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_sf_ellint.h>
#include <gsl/gsl_sf_elljac.h>
#include <math.h>

int mbs_ep_init_from_angle(mbs_elliptic_pendulum *ep, double omega, double k, double t0,
                           double phi0, int direction)
{
    double s = sin(0.5 * phi0);
    if (!(k >= 0.0 && k < 1.0) || fabs(s) > k * (1.0 + 1e-15) || !(omega > 0.0))
        return -1;
    ep->omega = omega;
    ep->k = k;
    ep->t0 = t0;
    if (k == 0.0) {
        ep->u0 = 0.0;
        return 0;
    }
    /* sn(u0) = s / k; with cn(u0) >= 0 the angle increases (u0 in [-K, K]). */
    double ratio = GSL_MAX(-1.0, GSL_MIN(1.0, s / k));
    gsl_sf_result F;
    if (gsl_sf_ellint_F_e(asin(ratio), k, GSL_PREC_DOUBLE, &F) != GSL_SUCCESS)
        return -1;
    double u0 = F.val;
    if (direction < 0) {
        /* Same sn, cn < 0: reflect about the turning point u = +-K. */
        double K = gsl_sf_ellint_Kcomp(k, GSL_PREC_DOUBLE);
        u0 = (u0 >= 0.0 ? 2.0 * K : -2.0 * K) - u0;
    }
    ep->u0 = u0;
    return 0;
}

void mbs_ep_eval(const mbs_elliptic_pendulum *ep, double t, double *phi, double *dphi,
                 double *ddphi)
{
    double sn = 0.0, cn = 1.0, dn = 1.0;
    double k = ep->k;
    if (k > 0.0)
        gsl_sf_elljac_e(ep->omega * (t - ep->t0) + ep->u0, k * k, &sn, &cn, &dn);
    double sin_half = k * sn;  /* sin(phi/2) */
    double cos_half = dn;      /* cos(phi/2) = sqrt(1 - k^2 sn^2) = dn */
    if (phi)
        *phi = 2.0 * atan2(sin_half, cos_half);
    if (dphi)
        *dphi = 2.0 * k * ep->omega * cn;
    if (ddphi)
        *ddphi = -ep->omega * ep->omega * 2.0 * sin_half * cos_half; /* -w^2 sin(phi) */
}
