/* Mathematical pendulum in Cartesian coordinates ([arnold2016dae], Example 1, Eq. (6)):
 *     m x'' = -x lambda,  m y'' = -m g - y lambda,  0 = (x^2 + y^2 - l^2)/2.
 * Initial values as in [arnold2016dae] Example 8: total energy m/2 - m g l, so the speed
 * at the bottom is 1 m/s and every start x0 >= 0 (with x' >= 0) lies on the same
 * orbit up to a phase shift.  Exact solution through Jacobi elliptic functions.
 * `redundant=1` states the constraint twice (rank G = 1 < n_lambda = 2), for the
 * robustness tests of the null-space methods ([pennestri_coordinate_reduction]). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/status.h"
#include "elliptic_pendulum.h"
#include "problem.h"

enum { P_M, P_L, P_G, P_X0, P_REDUNDANT };

static const mbs_param_def params[] = {
    [P_M] = {"m", 1.0, 1e-6, 1e6, "mass [kg]", NULL, 0},
    [P_L] = {"l", 1.0, 1e-3, 1e3, "rod length [m]", NULL, 0},
    [P_G] = {"g", 9.81, 0.0, 1e3, "gravitational acceleration [m/s^2]", NULL, 0},
    [P_X0] = {"x0", 0.0, 0.0, 1e3, "initial horizontal position [m] (x'(0) >= 0)", NULL, 0},
    [P_REDUNDANT] = {"redundant", 0, 0, 1, "state the constraint twice (rank-deficient G)",
                     NULL, 1},
};

#define PAR(i) mbs_pb_param(pb, i)

static size_t n_constraints(const mbs_problem *pb)
{
    return PAR(P_REDUNDANT) != 0.0 ? 2 : 1;
}

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    *nq = 2;
    *nv = 2;
    *nl = n_constraints(pb);
    return MBS_OK;
}

/* The exact motion: angle from the downward vertical on the Example 8 orbit. */
static int orbit(const mbs_problem *pb, mbs_elliptic_pendulum *ep)
{
    double l = PAR(P_L), g = PAR(P_G);
    double omega = sqrt(g / l);
    double k = 1.0 / (2.0 * l * omega); /* bottom angular speed 1/l = 2 k omega */
    double x0 = PAR(P_X0);
    if (x0 >= l)
        return -1;
    return mbs_ep_init_from_angle(ep, omega, k, pb->t0, asin(x0 / l), +1);
}

static int setup(mbs_problem *pb, char *err, size_t errlen)
{
    mbs_elliptic_pendulum ep;
    if (PAR(P_G) <= 0.0) {
        snprintf(err, errlen, "pendulum: g=%g must be positive", PAR(P_G));
        return MBS_BAD_INPUT;
    }
    if (1.0 / (2.0 * PAR(P_L) * sqrt(PAR(P_G) / PAR(P_L))) >= 1.0) {
        snprintf(err, errlen, "pendulum: l=%g, g=%g give a rotating orbit (need 4 g l > 1)",
                 PAR(P_L), PAR(P_G));
        return MBS_BAD_INPUT;
    }
    if (orbit(pb, &ep) != 0) {
        double l = PAR(P_L), k = 1.0 / (2.0 * l * sqrt(PAR(P_G) / l));
        snprintf(err, errlen, "pendulum: x0=%g is beyond the amplitude %.6g of the orbit",
                 PAR(P_X0), l * sin(2.0 * asin(k)));
        return MBS_BAD_INPUT;
    }
    if (PAR(P_REDUNDANT) != 0.0)
        pb->flags |= MBS_PB_REDUNDANT;
    mbs_elliptic_pendulum *cached = malloc(sizeof *cached);
    if (!cached)
        return MBS_NO_MEMORY;
    *cached = ep;
    pb->data = cached;
    return MBS_OK;
}

static void teardown(mbs_problem *pb)
{
    free(pb->data);
    pb->data = NULL;
}

static int exact(const mbs_problem *pb, double t, double *q, double *v, double *lambda)
{
    const mbs_elliptic_pendulum *ep = pb->data;
    double m = PAR(P_M), l = PAR(P_L), g = PAR(P_G);
    double phi, dphi;
    mbs_ep_eval(ep, t, &phi, &dphi, NULL);
    double s = sin(phi), c = cos(phi);
    if (q) {
        q[0] = l * s;
        q[1] = -l * c;
    }
    if (v) {
        v[0] = l * dphi * c;
        v[1] = l * dphi * s;
    }
    if (lambda) {
        /* From x x'' + y y'' = -|v|^2: lambda l^2 = m |v|^2 - m g y. */
        double lam = m * dphi * dphi + m * g * c / l;
        if (PAR(P_REDUNDANT) != 0.0) {
            lambda[0] = 0.5 * lam; /* minimum-norm multipliers of the doubled row */
            lambda[1] = 0.5 * lam;
        } else {
            lambda[0] = lam;
        }
    }
    return MBS_OK;
}

static int initial(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                   int *have_lambda)
{
    *have_lambda = 1;
    return exact(pb, pb->t0, q0, v0, lambda0);
}

static int mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)t, (void)q;
    double m = PAR(P_M);
    gsl_matrix_set(M, 0, 0, m);
    gsl_matrix_set(M, 0, 1, 0.0);
    gsl_matrix_set(M, 1, 0, 0.0);
    gsl_matrix_set(M, 1, 1, m);
    return MBS_OK;
}

static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)t, (void)q, (void)v;
    f[0] = 0.0;
    f[1] = -PAR(P_M) * PAR(P_G);
    return MBS_OK;
}

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)t;
    double l = PAR(P_L);
    for (size_t i = 0; i < n_constraints(pb); i++)
        g[i] = 0.5 * (q[0] * q[0] + q[1] * q[1] - l * l);
    return MBS_OK;
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)t;
    for (size_t i = 0; i < n_constraints(pb); i++) {
        gsl_matrix_set(G, i, 0, q[0]);
        gsl_matrix_set(G, i, 1, q[1]);
    }
    return MBS_OK;
}

static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)t, (void)q;
    for (size_t i = 0; i < n_constraints(pb); i++)
        gam[i] = -(v[0] * v[0] + v[1] * v[1]);
    return MBS_OK;
}

/* Derivatives (problem.h): constant forces, and every constraint row
 * g_i = (x^2 + y^2 - l^2)/2 has G_i = q^T and the Hessian I. */
static int gtlambda_q(const mbs_problem *pb, double t, const double *q, const double *lam,
                      gsl_matrix *K)
{
    (void)t, (void)q;
    double s = 0.0;
    for (size_t i = 0; i < n_constraints(pb); i++)
        s += lam[i];
    gsl_matrix_set_identity(K);
    gsl_matrix_scale(K, s);
    return MBS_OK;
}

static int gw_q(const mbs_problem *pb, double t, const double *q, const double *w,
                gsl_matrix *Z)
{
    (void)t, (void)q;
    for (size_t i = 0; i < n_constraints(pb); i++) {
        gsl_matrix_set(Z, i, 0, w[0]);
        gsl_matrix_set(Z, i, 1, w[1]);
    }
    return MBS_OK;
}

static double energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    (void)t;
    double m = PAR(P_M);
    return 0.5 * m * (v[0] * v[0] + v[1] * v[1]) + m * PAR(P_G) * q[1];
}

/* Reported quantities (problem.h): the point mass P, as the IFToMM benchmark A01
 * reports it (position and velocity), and the angle from the downward vertical. */
static const char *const reported_names[] = {"x_P", "y_P", "vx_P", "vy_P", "phi", NULL};

static int reported(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *out)
{
    (void)pb, (void)t;
    out[0] = q[0];
    out[1] = q[1];
    out[2] = v[0];
    out[3] = v[1];
    out[4] = atan2(q[0], -q[1]);
    return MBS_OK;
}

const mbs_problem_def mbs_problem_pendulum = {
    .name = "pendulum",
    .title = "mathematical pendulum, Cartesian coordinates",
    .citation = "Arnold 2016 [arnold2016dae], Example 1, Eq. (6); initial values of Example 8",
    .reference = "exact (Jacobi elliptic functions, GSL)",
    .flags = MBS_PB_EXACT | MBS_PB_CONSERVATIVE,
    .index = 3,
    .t0 = 0.0,
    .t_end = 10.0,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .dims = dims,
    .setup = setup,
    .teardown = teardown,
    .initial = initial,
    .mass = mass,
    .force = force,
    .constraint = constraint,
    .jacobian = jacobian,
    .gamma = gamma_fn,
    .energy = energy,
    .exact = exact,
    .force_q = mbs_zero_force_derivative,
    .force_v = mbs_zero_force_derivative,
    .gtlambda_q = gtlambda_q,
    .gw_q = gw_q,
    .reported_names = reported_names,
    .reported = reported,
};
