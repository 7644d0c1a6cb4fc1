/* Knife edge (skate) on an inclined plane: the classic non-holonomic system
 * ([bauchau2003selfstabilized] Sect. 3.3 for the class; e.g. Neimark & Fufaev, Dynamics of
 * Nonholonomic Systems, Ch. I; Greenwood, Advanced Dynamics, Sect. 2.6).
 *
 * q = (x, y, theta): contact point in the plane (x down the slope) and heading;
 * M = diag(m, m, J), applied force f = (m s, 0, 0) with s = g sin(alpha) the
 * slope acceleration (potential V = -m s x), and the non-holonomic constraint
 * "no sideways slip"
 *     A(q) v = -sin(theta) x' + cos(theta) y' = 0      (n_l = n_nh = 1, a = 0),
 *     m x'' = m s + sin(theta) lambda,  m y'' = -cos(theta) lambda,  J theta'' = 0.
 * The contract's rows (problem.h, MBS_PB_NONHOLONOMIC): constraint() = 0,
 * jacobian() = A, gamma = -(A_q v) v = theta' (cos(theta) x' + sin(theta) y').
 *
 * Exact solution (t0 = 0, x0 = y0 = theta0 = 0, speed u0 along the blade, spin
 * w = theta'): theta = w t, the speed along the blade u obeys u' = s cos(theta),
 *     u = u0 + (s/w) sin(w t),
 *     x = (u0/w) sin(w t) + (s/(2 w^2)) sin^2(w t),
 *     y = (u0/w) (1 - cos(w t)) + (s/(2 w)) (t - sin(2 w t)/(2 w)),
 *     lambda = -m s sin(theta) - m u w      (normal component of M v' = f - A^T lambda):
 * the skate does not slide down the slope on average but drifts sideways.
 * Energy m |(x', y')|^2/2 + J w^2/2 - m s x is conserved (the constraint force
 * is normal to the velocity and does no work). */
#include <math.h>
#include <stdio.h>

#include "../core/status.h"
#include "problem.h"

enum { P_M, P_J, P_S, P_U0, P_W };

static const mbs_param_def params[] = {
    [P_M] = {"m", 1.0, 1e-6, 1e6, "mass [kg]", NULL, 0},
    [P_J] = {"J", 0.1, 1e-6, 1e6, "moment of inertia about the vertical [kg m^2]", NULL, 0},
    [P_S] = {"s", 1.0, 0.0, 1e3, "slope acceleration g sin(alpha) along x [m/s^2]", NULL, 0},
    [P_U0] = {"u0", 1.0, -1e3, 1e3, "initial speed along the blade [m/s]", NULL, 0},
    [P_W] = {"w", 2.0, 1e-3, 1e3, "spin rate theta' (constant) [rad/s]", NULL, 0},
};

#define PAR(i) mbs_pb_param(pb, i)

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = 3;
    *nv = 3;
    *nl = 1;
    return MBS_OK;
}

static int nonholonomic_dims(const mbs_problem *pb, size_t *nnh)
{
    (void)pb;
    *nnh = 1;
    return MBS_OK;
}

static int exact(const mbs_problem *pb, double t, double *q, double *v, double *lambda)
{
    double m = PAR(P_M), s = PAR(P_S), u0 = PAR(P_U0), w = PAR(P_W);
    double tau = t - pb->t0, th = w * tau, sn = sin(th), cs = cos(th);
    double u = u0 + s / w * sn;
    if (q) {
        q[0] = u0 / w * sn + s / (2.0 * w * w) * sn * sn;
        q[1] = u0 / w * (1.0 - cs) + s / (2.0 * w) * (tau - sin(2.0 * th) / (2.0 * w));
        q[2] = th;
    }
    if (v) {
        v[0] = u * cs;
        v[1] = u * sn;
        v[2] = w;
    }
    if (lambda)
        lambda[0] = -m * s * sn - m * u * w;
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
    gsl_matrix_set(M, 2, 2, PAR(P_J));
    return MBS_OK;
}

static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)t, (void)q, (void)v;
    f[0] = PAR(P_M) * PAR(P_S);
    f[1] = 0.0;
    f[2] = 0.0;
    return MBS_OK;
}

/* No position-level constraint (problem.h, MBS_PB_NONHOLONOMIC). */
static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)pb, (void)t, (void)q;
    g[0] = 0.0;
    return MBS_OK;
}

/* A(q) = (-sin theta, cos theta, 0). */
static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)pb, (void)t;
    gsl_matrix_set(G, 0, 0, -sin(q[2]));
    gsl_matrix_set(G, 0, 1, cos(q[2]));
    gsl_matrix_set(G, 0, 2, 0.0);
    return MBS_OK;
}

static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)pb, (void)t;
    gam[0] = v[2] * (cos(q[2]) * v[0] + sin(q[2]) * v[1]);
    return MBS_OK;
}

static double energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    (void)t;
    double m = PAR(P_M);
    return 0.5 * m * (v[0] * v[0] + v[1] * v[1]) + 0.5 * PAR(P_J) * v[2] * v[2] -
           m * PAR(P_S) * q[0];
}

const mbs_problem_def mbs_problem_knifeedge = {
    .name = "knifeedge",
    .title = "knife edge on an inclined plane (non-holonomic, no sideways slip)",
    .citation = "Bauchau 2003 [bauchau2003selfstabilized] Sect. 3.3 (non-holonomic constraints); Neimark & Fufaev Ch. I",
    .reference = "exact (closed form: constant spin, speed u0 + (s/w) sin(w t))",
    .flags = MBS_PB_EXACT | MBS_PB_CONSERVATIVE | MBS_PB_NONHOLONOMIC,
    .index = 2,
    .t0 = 0.0,
    .t_end = 10.0,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .dims = dims,
    .initial = initial,
    .mass = mass,
    .force = force,
    .constraint = constraint,
    .jacobian = jacobian,
    .gamma = gamma_fn,
    .energy = energy,
    .exact = exact,
    .nonholonomic_dims = nonholonomic_dims,
};
