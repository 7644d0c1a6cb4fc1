/* Linear rheonomic constraint of [arnold2016dae], Example 9:
 *     q'' = -C^T lambda,  0 = g(t, q) = C q - z(t)     (M = I, f = 0),
 * here with n_q = 3, n_lambda = 2,
 *     C = [1 1 0; 0 1 2],   z(t) = a (sin(omega t), cos(omega t)).
 * Differentiating the constraint twice and inserting q'' gives the exact
 * multipliers lambda(t) = -(C C^T)^{-1} z''(t) ([arnold2016dae], Example 9), and
 *     q(t) = C^T (C C^T)^{-1} z(t) + (c0 + c1 t) n,   n = (2, -2, 1)/3 (C n = 0),
 * with c0 = 0.5, c1 = 0.1: the motion in ker C is free and uniform.
 * The hidden constraints are C v - z'(t) = 0 (g_t = -z') and C v' = z''(t),
 * i.e. gamma = -g_tt = z''.  This is the problem on which variable-step
 * backward Euler on the index-3 form fails to converge in lambda
 * (index3/euler, parameter steps). */
#include <math.h>
#include <stdio.h>

#include "../core/status.h"
#include "problem.h"

enum { P_A, P_OMEGA };

static const mbs_param_def params[] = {
    [P_A] = {"a", 1.0, 0.0, 1e3, "amplitude of the prescribed motion z(t)", NULL, 0},
    [P_OMEGA] = {"omega", 2.0, 1e-3, 1e3, "angular frequency of z(t) [1/s]", NULL, 0},
};

#define PAR(i) mbs_pb_param(pb, i)

static const double Cm[2][3] = {{1.0, 1.0, 0.0}, {0.0, 1.0, 2.0}};
/* (C C^T)^{-1} = [5 -1; -1 2] / 9 (C C^T = [2 1; 1 5]). */
static const double CCTinv[2][2] = {{5.0 / 9.0, -1.0 / 9.0}, {-1.0 / 9.0, 2.0 / 9.0}};
static const double nvec[3] = {2.0 / 3.0, -2.0 / 3.0, 1.0 / 3.0};
static const double c0 = 0.5, c1 = 0.1;

/* k-th derivative of z at t (k = 0..2). */
static void zfun(const mbs_problem *pb, double t, int k, double z[2])
{
    double a = PAR(P_A), w = PAR(P_OMEGA), s = sin(w * t), c = cos(w * t);
    switch (k) {
    case 0:
        z[0] = a * s;
        z[1] = a * c;
        break;
    case 1:
        z[0] = a * w * c;
        z[1] = -a * w * s;
        break;
    default:
        z[0] = -a * w * w * s;
        z[1] = -a * w * w * c;
        break;
    }
}

/* x = C^T (C C^T)^{-1} z */
static void pinv(const double z[2], double x[3])
{
    double y0 = CCTinv[0][0] * z[0] + CCTinv[0][1] * z[1];
    double y1 = CCTinv[1][0] * z[0] + CCTinv[1][1] * z[1];
    for (int i = 0; i < 3; i++)
        x[i] = Cm[0][i] * y0 + Cm[1][i] * y1;
}

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = 3;
    *nv = 3;
    *nl = 2;
    return MBS_OK;
}

static int exact(const mbs_problem *pb, double t, double *q, double *v, double *lambda)
{
    double z[2], x[3];
    if (q) {
        zfun(pb, t, 0, z);
        pinv(z, x);
        for (int i = 0; i < 3; i++)
            q[i] = x[i] + (c0 + c1 * t) * nvec[i];
    }
    if (v) {
        zfun(pb, t, 1, z);
        pinv(z, x);
        for (int i = 0; i < 3; i++)
            v[i] = x[i] + c1 * nvec[i];
    }
    if (lambda) {
        zfun(pb, t, 2, z);
        lambda[0] = -(CCTinv[0][0] * z[0] + CCTinv[0][1] * z[1]);
        lambda[1] = -(CCTinv[1][0] * z[0] + CCTinv[1][1] * z[1]);
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
    (void)pb, (void)t, (void)q;
    gsl_matrix_set_identity(M);
    return MBS_OK;
}

static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)pb, (void)t, (void)q, (void)v;
    f[0] = f[1] = f[2] = 0.0;
    return MBS_OK;
}

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    double z[2];
    zfun(pb, t, 0, z);
    for (int i = 0; i < 2; i++)
        g[i] = Cm[i][0] * q[0] + Cm[i][1] * q[1] + Cm[i][2] * q[2] - z[i];
    return MBS_OK;
}

static int constraint_t(const mbs_problem *pb, double t, const double *q, double *gt)
{
    (void)q;
    double z[2];
    zfun(pb, t, 1, z);
    gt[0] = -z[0];
    gt[1] = -z[1];
    return MBS_OK;
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)pb, (void)t, (void)q;
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++)
            gsl_matrix_set(G, i, j, Cm[i][j]);
    return MBS_OK;
}

/* gamma = -(B v)_q v - 2 B_t v - g_tt = z''(t) (B = C constant). */
static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)q, (void)v;
    zfun(pb, t, 2, gam);
    return MBS_OK;
}

const mbs_problem_def mbs_problem_linear_constraint = {
    .name = "linear-constraint",
    .title = "free particle in R^3 on a moving linear constraint C q = z(t) (M = I, f = 0)",
    .citation = "Arnold 2016 [arnold2016dae], Example 9",
    .reference = "exact (closed form)",
    .flags = MBS_PB_EXACT | MBS_PB_RHEONOMIC | MBS_PB_CONSTANT_MASS,
    .index = 3,
    .t0 = 0.0,
    .t_end = 1.0,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .dims = dims,
    .initial = initial,
    .mass = mass,
    .force = force,
    .constraint = constraint,
    .constraint_t = constraint_t,
    .jacobian = jacobian,
    .gamma = gamma_fn,
    .exact = exact,
};
