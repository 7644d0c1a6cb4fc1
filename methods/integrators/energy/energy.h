/* Energy-preserving (EP) and energy-decaying (ED) schemes with self-stabilised
 * constraints (Bauchau 2003 [bauchau2003selfstabilized], Sections 3-5): ep/midpoint and ed/tdg.
 *
 * Both are fixed-step, implicit (Newton with counted iterations) and need
 * q' = v (no kinematic matrix H).  The multiplier they produce is a mid-step
 * quantity; the `lambda` parameter chooses what the state carries (see
 * methods/integrators/energy/energy.c).  This header exposes the pieces the tests need besides the
 * registered methods. */
#ifndef MBS_ENERGY_H
#define MBS_ENERGY_H

#include <gsl/gsl_matrix.h>

#include "../../framework/method.h"

extern const mbs_method_def mbs_method_ep_midpoint;
extern const mbs_method_def mbs_method_ed_tdg;

/* The discrete constraint gradient of [bauchau2003selfstabilized] Eqs. (6), (17): B (n_lambda x n)
 * and a (n_lambda) with  g(tb, qb) - g(ta, qa) = B (qb - qa) + a  to round-off.
 * B is the Gonzalez discrete gradient of the time-averaged constraint
 * (g(ta, .) + g(tb, .))/2 (midpoint Jacobian plus a rank-one correction that
 * vanishes for quadratic constraints); a = ((g(tb,qa) - g(ta,qa)) +
 * (g(tb,qb) - g(ta,qb)))/2 is the rheonomic part (0 when ta = tb or the
 * problem is scleronomic).  `state` is an ep/midpoint or ed/tdg workspace
 * (sized for ctx->pb); gb gets g(tb, qb) (may be NULL). */
int mbs_energy_discrete_gradient(void *state, mbs_ctx *ctx, double ta, const double *qa,
                                 double tb, const double *qb, gsl_matrix *B, double *a,
                                 double *gb);

/* Energy balance of the last accepted step of ep/midpoint or ed/tdg (call it
 * from an observer): work = a . lambda, the work of the rheonomic constraints
 * ([bauchau2003selfstabilized] Eqs. (20), (32); 0 for scleronomic ones), and dissipation =
 * (a/2)(|v_j - v_i|_M^2 + c_E^2) of the ED scheme (Eqs. (30)-(33); 0 for EP), so
 * that E_f - E_i = work - dissipation for loads with a potential.  Recomputed
 * from the stored step (counted evaluations). */
int mbs_energy_last_step(void *state, mbs_ctx *ctx, double *work, double *dissipation);

/* One step of the GGL system discretised as [bauchau2003selfstabilized] Eq. (37):
 *   M (v_f - v_i)/h = f_m - B_m^T lambda,   (q_f - q_i)/h - v_m + B_m^T mu = 0,
 *   g(t_f, q_f) = 0,   B_m v_m + a_m/h = 0,
 * solved for (q_f, v_f, lambda, mu) without using mu = 0.  `state` must be an
 * ep/midpoint workspace; y (q | v | lambda) is advanced from t to t + h in
 * place (lambda = the midpoint multiplier); mu (n_lambda) gets the auxiliary
 * multiplier.  Returns an mbs_status (reason in ctx). */
int mbs_energy_ggl_step(void *state, mbs_ctx *ctx, double t, double h, double *y, double *mu);

#endif
