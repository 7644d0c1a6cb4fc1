/* Body pendulum of [pennestri_coordinate_reduction], Sect. 8 (and its appendix code): a rigid bar with
 * centre of mass at distance L from the pivot, q = (x, y, theta),
 *     Psi = (x - L cos(theta), y - L sin(theta)) = 0,
 *     M = diag(m, m, I_g), Q = (0, -m g, 0),
 *     gamma = (-L theta'^2 cos(theta), -L theta'^2 sin(theta)).
 * Released at rest at theta0 = -45 degrees; g = 9.8 as in the appendix code.
 * Exact solution: phi = theta + pi/2 obeys phi'' = -(m g L / (I_g + m L^2)) sin(phi),
 * solved in closed form by Jacobi elliptic functions. */
#include <gsl/gsl_math.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/status.h"
#include "elliptic_pendulum.h"
#include "problem.h"

enum { P_M, P_L, P_IG, P_G, P_THETA0 };

static const mbs_param_def params[] = {
    [P_M] = {"m", 10.0, 1e-6, 1e6, "mass [kg]", NULL, 0},
    [P_L] = {"L", 0.5, 1e-3, 1e3, "pivot to centre of mass [m]", NULL, 0},
    [P_IG] = {"Ig", 0.1, 0.0, 1e6, "moment of inertia about the centre of mass [kg m^2]",
              NULL, 0},
    [P_G] = {"g", 9.8, 1e-6, 1e3, "gravitational acceleration [m/s^2]", NULL, 0},
    [P_THETA0] = {"theta0", -45.0, -269.0, 89.0,
                  "initial angle from the x axis [deg], released at rest", NULL, 0},
};

#define PAR(i) mbs_pb_param(pb, i)

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = 3;
    *nv = 3;
    *nl = 2;
    return MBS_OK;
}

static int setup(mbs_problem *pb, char *err, size_t errlen)
{
    double m = PAR(P_M), L = PAR(P_L);
    double omega = sqrt(m * PAR(P_G) * L / (PAR(P_IG) + m * L * L));
    double phi0 = PAR(P_THETA0) * M_PI / 180.0 + 0.5 * M_PI;
    mbs_elliptic_pendulum *ep = malloc(sizeof *ep);
    if (!ep)
        return MBS_NO_MEMORY;
    /* Released at rest: phi0 is the amplitude, sn(u0) = sign(phi0). */
    if (mbs_ep_init_from_angle(ep, omega, fabs(sin(0.5 * phi0)), pb->t0, phi0, +1) != 0) {
        snprintf(err, errlen, "pendulum-body: theta0=%g gives no libration",
                 PAR(P_THETA0));
        free(ep);
        return MBS_BAD_INPUT;
    }
    pb->data = ep;
    return MBS_OK;
}

static void teardown(mbs_problem *pb)
{
    free(pb->data);
    pb->data = NULL;
}

static int exact(const mbs_problem *pb, double t, double *q, double *v, double *lambda)
{
    double m = PAR(P_M), L = PAR(P_L), g = PAR(P_G);
    double phi, dphi, ddphi;
    mbs_ep_eval(pb->data, t, &phi, &dphi, &ddphi);
    double th = phi - 0.5 * M_PI;
    double s = sin(th), c = cos(th);
    if (q) {
        q[0] = L * c;
        q[1] = L * s;
        q[2] = th;
    }
    if (v) {
        v[0] = -L * s * dphi;
        v[1] = L * c * dphi;
        v[2] = dphi;
    }
    if (lambda) {
        double ax = -L * s * ddphi - L * c * dphi * dphi;
        double ay = L * c * ddphi - L * s * dphi * dphi;
        lambda[0] = -m * ax;
        lambda[1] = -m * g - m * ay;
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
    gsl_matrix_set_zero(M);
    gsl_matrix_set(M, 0, 0, PAR(P_M));
    gsl_matrix_set(M, 1, 1, PAR(P_M));
    gsl_matrix_set(M, 2, 2, PAR(P_IG));
    return MBS_OK;
}

static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)t, (void)q, (void)v;
    f[0] = 0.0;
    f[1] = -PAR(P_M) * PAR(P_G);
    f[2] = 0.0;
    return MBS_OK;
}

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)t;
    g[0] = q[0] - PAR(P_L) * cos(q[2]);
    g[1] = q[1] - PAR(P_L) * sin(q[2]);
    return MBS_OK;
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)t;
    double L = PAR(P_L);
    gsl_matrix_set_zero(G);
    gsl_matrix_set(G, 0, 0, 1.0);
    gsl_matrix_set(G, 0, 2, L * sin(q[2]));
    gsl_matrix_set(G, 1, 1, 1.0);
    gsl_matrix_set(G, 1, 2, -L * cos(q[2]));
    return MBS_OK;
}

static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)t;
    double L = PAR(P_L), w2 = v[2] * v[2];
    gam[0] = -L * w2 * cos(q[2]);
    gam[1] = -L * w2 * sin(q[2]);
    return MBS_OK;
}

static double energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    (void)t;
    double m = PAR(P_M);
    return 0.5 * m * (v[0] * v[0] + v[1] * v[1]) + 0.5 * PAR(P_IG) * v[2] * v[2] +
           m * PAR(P_G) * q[1];
}

const mbs_problem_def mbs_problem_pendulum_body = {
    .name = "pendulum-body",
    .title = "body pendulum (x, y, theta) of the coordinate-reduction review",
    .citation = "Pennestri & Valentini [pennestri_coordinate_reduction], Sect. 8 and appendix code",
    .reference = "exact (Jacobi elliptic functions, GSL)",
    .flags = MBS_PB_EXACT | MBS_PB_CONSERVATIVE | MBS_PB_CONSTANT_MASS,
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
};
