/* The simple pendulum of the IFToMM benchmark A01 (González, Dopico, Lugrís and
 * Cuadrado 2006 [gonzalez2006benchmarking]): a point mass P1 of 1 kg on a massless
 * rod of 1 m hinged at the origin, gravity 9.81 along -y, released at rest from
 * the horizontal, x(P1) = +1 m (side = right) or its mirror x = -1 m (side =
 * left, the start of one of the library's public reference files); 2000 s,
 * reference quantity x, y of P1 at 4000 output steps.  Cartesian coordinates,
 *     m x'' = -x lambda,  m y'' = -m g - y lambda,  0 = (x^2 + y^2 - l^2)/2.
 * Exact solution: the libration of amplitude 90 degrees, sin(phi/2) =
 * k sn(omega t + u0 | k^2) with k = sin(45 deg), omega = sqrt(g/l) and sn(u0) = +-1
 * (u0 = +-K(k)), phi from the downward vertical (problems/elliptic_pendulum.h).
 * Over 845 periods it is a test of phase error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/status.h"
#include "elliptic_pendulum.h"
#include "problem.h"

enum { P_M, P_L, P_G, P_SIDE };

static const mbs_param_def params[] = {
    [P_M] = {"m", 1.0, 1e-6, 1e6, "mass of P1 [kg]", NULL, 0},
    [P_L] = {"l", 1.0, 1e-3, 1e3, "rod length [m]", NULL, 0},
    [P_G] = {"g", 9.81, 1e-6, 1e3, "gravitational acceleration along -y [m/s^2]", NULL, 0},
    [P_SIDE] = {"side", 0, 0, 1,
                "start of P1 at rest on the horizontal: right (x = +l, the benchmark) or "
                "left (x = -l, the mirror start)",
                "right,left", 1},
};

#define PAR(i) mbs_pb_param(pb, i)

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = 2;
    *nv = 2;
    *nl = 1;
    return MBS_OK;
}

static int setup(mbs_problem *pb, char *err, size_t errlen)
{
    double phi0 = PAR(P_SIDE) != 0.0 ? -0.5 * MBS_PI : 0.5 * MBS_PI;
    mbs_elliptic_pendulum ep;
    /* at rest at phi0: the amplitude is |phi0|, k = sin(|phi0| / 2) */
    if (mbs_ep_init_from_angle(&ep, sqrt(PAR(P_G) / PAR(P_L)), sin(0.5 * fabs(phi0)), pb->t0,
                               phi0, +1) != 0) {
        snprintf(err, errlen, "simple-pendulum: no libration through phi0 = %g", phi0);
        return MBS_BAD_INPUT;
    }
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
    double m = PAR(P_M), l = PAR(P_L), g = PAR(P_G);
    double phi, dphi;
    mbs_ep_eval(pb->data, t, &phi, &dphi, NULL);
    double s = sin(phi), c = cos(phi);
    if (q) {
        q[0] = l * s;
        q[1] = -l * c;
    }
    if (v) {
        v[0] = l * dphi * c;
        v[1] = l * dphi * s;
    }
    if (lambda) /* x x'' + y y'' = -|v|^2: lambda l^2 = m |v|^2 - m g y */
        lambda[0] = m * dphi * dphi + m * g * c / l;
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
    gsl_matrix_set_identity(M);
    gsl_matrix_scale(M, PAR(P_M));
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
    g[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - PAR(P_L) * PAR(P_L));
    return MBS_OK;
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)pb, (void)t;
    gsl_matrix_set(G, 0, 0, q[0]);
    gsl_matrix_set(G, 0, 1, q[1]);
    return MBS_OK;
}

static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)pb, (void)t, (void)q;
    gam[0] = -(v[0] * v[0] + v[1] * v[1]);
    return MBS_OK;
}

/* The constraint's Hessian is I: d(G^T lambda)/dq = lambda I, d(G w)/dq = w^T. */
static int gtlambda_q(const mbs_problem *pb, double t, const double *q, const double *lam,
                      gsl_matrix *K)
{
    (void)pb, (void)t, (void)q;
    gsl_matrix_set_identity(K);
    gsl_matrix_scale(K, lam[0]);
    return MBS_OK;
}

static int gw_q(const mbs_problem *pb, double t, const double *q, const double *w,
                gsl_matrix *Z)
{
    (void)pb, (void)t, (void)q;
    gsl_matrix_set(Z, 0, 0, w[0]);
    gsl_matrix_set(Z, 0, 1, w[1]);
    return MBS_OK;
}

static double energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    (void)t;
    /* potential energy from the lowest point, so that E = m g l != 0 (relative drift) */
    return 0.5 * PAR(P_M) * (v[0] * v[0] + v[1] * v[1]) + PAR(P_M) * PAR(P_G) * (q[1] + PAR(P_L));
}

/* The benchmark's reference quantity: the position of P1. */
static const char *const reported_names[] = {"x_P1", "y_P1", NULL};

static int reported(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *out)
{
    (void)pb, (void)t, (void)v;
    out[0] = q[0];
    out[1] = q[1];
    return MBS_OK;
}

const mbs_problem_def mbs_problem_simple_pendulum = {
    .name = "simple-pendulum",
    .title = "simple pendulum released from the horizontal (IFToMM A01), Cartesian coordinates",
    .citation = "IFToMM benchmark A01, González, Dopico, Lugrís and Cuadrado 2006 "
                "[gonzalez2006benchmarking]",
    .reference = "exact (Jacobi elliptic functions, amplitude 90 deg, GSL)",
    .flags = MBS_PB_EXACT | MBS_PB_CONSERVATIVE,
    .index = 3,
    .t0 = 0.0,
    .t_end = 2000.0,
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
    .output_steps = 4000,
    .reported_names = reported_names,
    .reported = reported,
};
