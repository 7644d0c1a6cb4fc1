/* Mathematical pendulum in Cartesian coordinates ([arnold2016dae], Example 1, Eq. (6)):
 *     m x'' = -x lambda,  m y'' = -m g - y lambda,  0 = (x^2 + y^2 - l^2)/2,
 * with the exact solution through Jacobi elliptic functions (problems/elliptic_pendulum.h),
 * registered with two parameter sets that share every callback below:
 *
 * `pendulum`: initial values as in [arnold2016dae] Example 8: total energy m/2 - m g l, so
 * the speed at the bottom is 1 m/s and every start x0 >= 0 (with x' >= 0) lies on the same
 * orbit up to a phase shift.  `redundant=1` states the constraint twice (rank G = 1 <
 * n_lambda = 2), for the robustness tests of the null-space methods
 * ([pennestri_coordinate_reduction]).
 *
 * `simple-pendulum`: the IFToMM benchmark A01 (González, Dopico, Lugrís and Cuadrado 2006
 * [gonzalez2006benchmarking]): P1 of 1 kg on a rod of 1 m released at rest from the
 * horizontal, x(P1) = +1 m (side = right) or its mirror x = -1 m (side = left, the start
 * of one of the library's public reference files); 2000 s, reference quantity x, y of P1
 * at 4000 output steps.  The libration of amplitude 90 degrees: sin(phi/2) =
 * k sn(omega t + u0 | k^2), k = sin(45 deg), omega = sqrt(g/l), sn(u0) = +-1.  Over 845
 * periods it is a test of phase error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/status.h"
#include "elliptic_pendulum.h"
#include "problem.h"

/* The instance, from either parameter set. */
typedef struct pendulum_data {
    mbs_elliptic_pendulum ep; /* the exact motion */
    double m, l, g;
    size_t rows;   /* the constraint stated once, or twice (redundant=1) */
    double y_zero; /* height of the energy's zero: 0, or -l (the lowest point, so that
                      E = m g l != 0 from the horizontal and the relative drift is defined) */
} pendulum_data;

#define DATA(pb) ((const pendulum_data *)(pb)->data)

/* ---- pendulum ------------------------------------------------------------------- */

enum { P_M, P_L, P_G, P_X0, P_REDUNDANT };

static const mbs_param_def params[] = {
    [P_M] = {"m", 1.0, 1e-6, 1e6, "mass [kg]", NULL, 0},
    [P_L] = {"l", 1.0, 1e-3, 1e3, "rod length [m]", NULL, 0},
    [P_G] = {"g", 9.81, 0.0, 1e3, "gravitational acceleration [m/s^2]", NULL, 0},
    [P_X0] = {"x0", 0.0, 0.0, 1e3, "initial horizontal position [m] (x'(0) >= 0)", NULL, 0},
    [P_REDUNDANT] = {"redundant", 0, 0, 1, "state the constraint twice (rank-deficient G)",
                     NULL, 1},
};

/* ---- simple-pendulum (IFToMM A01) ------------------------------------------------ */

enum { S_M, S_L, S_G, S_SIDE };

static const mbs_param_def simple_params[] = {
    [S_M] = {"m", 1.0, 1e-6, 1e6, "mass of P1 [kg]", NULL, 0},
    [S_L] = {"l", 1.0, 1e-3, 1e3, "rod length [m]", NULL, 0},
    [S_G] = {"g", 9.81, 1e-6, 1e3, "gravitational acceleration along -y [m/s^2]", NULL, 0},
    [S_SIDE] = {"side", 0, 0, 1,
                "start of P1 at rest on the horizontal: right (x = +l, the benchmark) or "
                "left (x = -l, the mirror start)",
                "right,left", 1},
};

#define PAR(i) mbs_pb_param(pb, i)

static int keep(mbs_problem *pb, const pendulum_data *d)
{
    pendulum_data *cached = malloc(sizeof *cached);
    if (!cached)
        return MBS_NO_MEMORY;
    *cached = *d;
    pb->data = cached;
    return MBS_OK;
}

static int setup(mbs_problem *pb, char *err, size_t errlen)
{
    double l = PAR(P_L), g = PAR(P_G), x0 = PAR(P_X0);
    pendulum_data d = {.m = PAR(P_M), .l = l, .g = g, .rows = PAR(P_REDUNDANT) != 0.0 ? 2 : 1};
    if (g <= 0.0) {
        snprintf(err, errlen, "pendulum: g=%g must be positive", g);
        return MBS_BAD_INPUT;
    }
    /* the Example 8 orbit: angle from the downward vertical, bottom angular speed
       1/l = 2 k omega */
    double omega = sqrt(g / l), k = 1.0 / (2.0 * l * omega);
    if (k >= 1.0) {
        snprintf(err, errlen, "pendulum: l=%g, g=%g give a rotating orbit (need 4 g l > 1)", l,
                 g);
        return MBS_BAD_INPUT;
    }
    if (x0 >= l || mbs_ep_init_from_angle(&d.ep, omega, k, pb->t0, asin(x0 / l), +1) != 0) {
        snprintf(err, errlen, "pendulum: x0=%g is beyond the amplitude %.6g of the orbit", x0,
                 l * sin(2.0 * asin(k)));
        return MBS_BAD_INPUT;
    }
    if (d.rows > 1)
        pb->flags |= MBS_PB_REDUNDANT;
    return keep(pb, &d);
}

static int simple_setup(mbs_problem *pb, char *err, size_t errlen)
{
    double l = PAR(S_L), g = PAR(S_G);
    double phi0 = PAR(S_SIDE) != 0.0 ? -0.5 * MBS_PI : 0.5 * MBS_PI;
    pendulum_data d = {.m = PAR(S_M), .l = l, .g = g, .rows = 1, .y_zero = -l};
    /* at rest at phi0: the amplitude is |phi0|, k = sin(|phi0| / 2) */
    if (mbs_ep_init_from_angle(&d.ep, sqrt(g / l), sin(0.5 * fabs(phi0)), pb->t0, phi0, +1) !=
        0) {
        snprintf(err, errlen, "simple-pendulum: no libration through phi0 = %g", phi0);
        return MBS_BAD_INPUT;
    }
    return keep(pb, &d);
}

/* ---- the shared callbacks -------------------------------------------------------- */

static void teardown(mbs_problem *pb)
{
    free(pb->data);
    pb->data = NULL;
}

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    *nq = 2;
    *nv = 2;
    *nl = DATA(pb)->rows;
    return MBS_OK;
}

static int exact(const mbs_problem *pb, double t, double *q, double *v, double *lambda)
{
    const pendulum_data *d = DATA(pb);
    double m = d->m, l = d->l, g = d->g;
    double phi, dphi;
    mbs_ep_eval(&d->ep, t, &phi, &dphi, NULL);
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
        if (d->rows > 1) {
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
    double m = DATA(pb)->m;
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
    f[1] = -DATA(pb)->m * DATA(pb)->g;
    return MBS_OK;
}

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)t;
    double l = DATA(pb)->l;
    for (size_t i = 0; i < DATA(pb)->rows; i++)
        g[i] = 0.5 * (q[0] * q[0] + q[1] * q[1] - l * l);
    return MBS_OK;
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)t;
    for (size_t i = 0; i < DATA(pb)->rows; i++) {
        gsl_matrix_set(G, i, 0, q[0]);
        gsl_matrix_set(G, i, 1, q[1]);
    }
    return MBS_OK;
}

static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)t, (void)q;
    for (size_t i = 0; i < DATA(pb)->rows; i++)
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
    for (size_t i = 0; i < DATA(pb)->rows; i++)
        s += lam[i];
    /* s I (set entry by entry: no library calls on this 2 x 2 block) */
    gsl_matrix_set(K, 0, 0, s);
    gsl_matrix_set(K, 0, 1, 0.0);
    gsl_matrix_set(K, 1, 0, 0.0);
    gsl_matrix_set(K, 1, 1, s);
    return MBS_OK;
}

static int gw_q(const mbs_problem *pb, double t, const double *q, const double *w,
                gsl_matrix *Z)
{
    (void)t, (void)q;
    for (size_t i = 0; i < DATA(pb)->rows; i++) {
        gsl_matrix_set(Z, i, 0, w[0]);
        gsl_matrix_set(Z, i, 1, w[1]);
    }
    return MBS_OK;
}

static double energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    (void)t;
    const pendulum_data *d = DATA(pb);
    return 0.5 * d->m * (v[0] * v[0] + v[1] * v[1]) + d->m * d->g * (q[1] - d->y_zero);
}

/* Reported quantities (problem.h): the point mass, as the IFToMM benchmark A01 reports it
 * (pendulum: position and velocity of P and the angle from the downward vertical;
 * simple-pendulum: the benchmark's reference quantity, the position of P1). */
static const char *const reported_names[] = {"x_P", "y_P", "vx_P", "vy_P", "phi", NULL};
static const char *const simple_reported_names[] = {"x_P1", "y_P1", NULL};

static int reported(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *out)
{
    (void)t;
    out[0] = q[0];
    out[1] = q[1];
    if (pb->n_reported > 2) {
        out[2] = v[0];
        out[3] = v[1];
        out[4] = atan2(q[0], -q[1]);
    }
    return MBS_OK;
}

/* The fields both parameter sets share. */
#define PENDULUM_CALLBACKS                                                                       \
    .flags = MBS_PB_EXACT | MBS_PB_CONSERVATIVE | MBS_PB_CONSTANT_MASS, .index = 3, .t0 = 0.0,  \
    .dims = dims,                                                                              \
    .teardown = teardown, .initial = initial, .mass = mass, .force = force,                    \
    .constraint = constraint, .jacobian = jacobian, .gamma = gamma_fn, .energy = energy,       \
    .exact = exact, .force_q = mbs_zero_force_derivative,                                      \
    .force_v = mbs_zero_force_derivative, .gtlambda_q = gtlambda_q, .gw_q = gw_q,              \
    .reported = reported

const mbs_problem_def mbs_problem_pendulum = {
    .name = "pendulum",
    .title = "mathematical pendulum, Cartesian coordinates",
    .citation = "Arnold 2016 [arnold2016dae], Example 1, Eq. (6); initial values of Example 8",
    .reference = "exact (Jacobi elliptic functions, GSL)",
    .t_end = 10.0,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .setup = setup,
    .reported_names = reported_names,
    PENDULUM_CALLBACKS,
};

const mbs_problem_def mbs_problem_simple_pendulum = {
    .name = "simple-pendulum",
    .title = "simple pendulum released from the horizontal (IFToMM A01), Cartesian coordinates",
    .citation = "IFToMM benchmark A01, González, Dopico, Lugrís and Cuadrado 2006 "
                "[gonzalez2006benchmarking]",
    .reference = "exact (Jacobi elliptic functions, amplitude 90 deg, GSL)",
    .t_end = 2000.0,
    .output_steps = 4000,
    .params = simple_params,
    .n_params = sizeof simple_params / sizeof simple_params[0],
    .setup = simple_setup,
    .reported_names = simple_reported_names,
    PENDULUM_CALLBACKS,
};
