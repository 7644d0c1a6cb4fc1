/* Heavy top with its tip fixed at the origin (seed 002, Example 6, Eq. (34);
 * Remarks 6-7).  Body-frame angular velocity Omega, inertia about the fixed point
 * Jbar = diag(15.234375, 0.46875, 15.234375) kg m^2, m = 15 kg, centre of mass
 * X = (0, 1, 0) m in the body frame, gravity gamma = (0, 0, -g):
 *     R' = R Omega~,   Jbar Omega' + Omega x Jbar Omega = X x R^T m gamma.    (34)
 * Initial values as printed in Example 6 (slow top): R(0) = Ry(pi/2),
 * Omega(0) = (0, 1.5, -0.0461538) rad/s; `fast=1`: R(0) = I, Omega(0) =
 * (0, 150, -4.61538) rad/s (the Lie-group literature's variant).
 *
 * Parametrisations (`coords`):
 *  euler      q = (phi, theta, psi), R = Rz(phi) Ry(theta) Rz(psi) (Remark 6a; see euler_R),
 *             v = Omega, q' = H0^-1(q) v (Eq. (36)), no constraints; singular at
 *             theta = 0 (so `fast=1`, R(0) = I, is rejected).
 *  quaternion q = p (4), v = Omega (3), q' = H(p) v with H of Eq. (39).
 *  absolute   q = (x, p) (7), v = (u, Omega) (6) with x' = u, p' = H(p) Omega,
 *             M = diag(m I, J), J = Jbar + m X~ X~ (inertia about the centre of
 *             mass), joint constraint 0 = x - R(p) X (index 3), lambda = the
 *             force the joint exerts on the top, with the sign of M v' = f - B^T lambda.
 * |p| = 1 is an invariant of p' = H(p) Omega (seed 002 Eq. (40)).  `norm=1`
 * also states it as the constraint 0 = |p|^2 - 1 of Remark 7c; since
 * B = G H = 2 p^T H(p) = 0 identically, its multiplier is undetermined (we
 * give the minimum-norm value 0) and the problem is flagged redundant, for
 * methods that project q onto the constraint manifold.
 *
 * Independent formulation for references: Eq. (34) itself with R as nine
 * entries (no parametrisation), GSL rk8pd; the angles/quaternion are extracted
 * after every step and kept continuous (2 pi unwrapping, quaternion sign). */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "problem.h"

enum { P_COORDS, P_FAST, P_NORM, P_M, P_G };
enum { C_EULER = 0, C_QUAT = 1, C_ABS = 2 };

static const mbs_param_def params[] = {
    [P_COORDS] = {"coords", C_EULER, 0, 2,
                  "parametrisation: euler (Z-Y-Z, Remark 6), quaternion (Remark 7), "
                  "absolute (x, p with joint constraint x = R X, index 3)",
                  "euler,quaternion,absolute", 1},
    [P_FAST] = {"fast", 0, 0, 1, "1: fast top, R(0) = I, Omega(0) = (0, 150, -4.61538)", NULL,
                1},
    [P_NORM] = {"norm", 0, 0, 1,
                "1: state |p|^2 = 1 as a constraint (B = 0: flagged redundant)", NULL, 1},
    [P_M] = {"m", 15.0, 1e-6, 1e6, "mass [kg]", NULL, 0},
    [P_G] = {"g", 9.81, 0.0, 1e3, "gravitational acceleration [m/s^2]", NULL, 0},
};

static const double JBAR[3] = {15.234375, 0.46875, 15.234375}; /* about the tip */
static const double XC[3] = {0.0, 1.0, 0.0};                   /* centre of mass */

#define PAR(i) mbs_pb_param(pb, i)
#define COORDS(pb) ((int)mbs_pb_param(pb, P_COORDS))
#define NORM(pb) (mbs_pb_param(pb, P_NORM) != 0.0)

static void cross(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* R (row-major) from Euler angles q = (phi, theta, psi): R = Rz(phi) Ry(theta) Rz(psi),
 * precession phi about the inertial z axis, nutation theta, spin psi about the
 * body axis.  The extraction of seed 002 Remark 6a prints the factors as
 * Rz(psi) Ry(theta) Rz(phi) next to an H0 (Eq. (35)) whose entries depend on phi;
 * these two are consistent only for the order used here with phi and psi
 * exchanged inside H0 (we checked R^T R' = Omega~ numerically; the battery's
 * kinematic test keeps checking it).  theta, and so the nutation minimum of
 * Remark 6d, is the same in both readings. */
static void euler_R(const double *q, double *R)
{
    double cf = cos(q[0]), sf = sin(q[0]), ct = cos(q[1]), st = sin(q[1]);
    double cp = cos(q[2]), sp = sin(q[2]);
    /* A = Ry(theta) Rz(psi) */
    double A[9] = {ct * cp, -ct * sp, st, sp, cp, 0.0, -st * cp, st * sp, ct};
    for (int j = 0; j < 3; j++) {
        R[0 + j] = cf * A[j] - sf * A[3 + j];
        R[3 + j] = sf * A[j] + cf * A[3 + j];
        R[6 + j] = A[6 + j];
    }
}

/* R(p) of Remark 7b (|p|^2 times a rotation for non-unit p). */
static void quat_R(const double *p, double *R)
{
    double p0 = p[0], p1 = p[1], p2 = p[2], p3 = p[3];
    R[0] = p0 * p0 + p1 * p1 - p2 * p2 - p3 * p3;
    R[1] = 2 * p1 * p2 - 2 * p0 * p3;
    R[2] = 2 * p1 * p3 + 2 * p0 * p2;
    R[3] = 2 * p1 * p2 + 2 * p0 * p3;
    R[4] = p0 * p0 - p1 * p1 + p2 * p2 - p3 * p3;
    R[5] = 2 * p2 * p3 - 2 * p0 * p1;
    R[6] = 2 * p1 * p3 - 2 * p0 * p2;
    R[7] = 2 * p2 * p3 + 2 * p0 * p1;
    R[8] = p0 * p0 - p1 * p1 - p2 * p2 + p3 * p3;
}

static void matvec(const double *R, const double *w, double *out)
{
    for (int i = 0; i < 3; i++)
        out[i] = R[3 * i] * w[0] + R[3 * i + 1] * w[1] + R[3 * i + 2] * w[2];
}

static void matTvec(const double *R, const double *w, double *out)
{
    for (int i = 0; i < 3; i++)
        out[i] = R[i] * w[0] + R[3 + i] * w[1] + R[6 + i] * w[2];
}

/* Rotation part of q (either parametrisation). */
static void rotation(const mbs_problem *pb, const double *q, double *R)
{
    switch (COORDS(pb)) {
    case C_EULER:
        euler_R(q, R);
        break;
    case C_QUAT:
        quat_R(q, R);
        break;
    default:
        quat_R(q + 3, R);
        break;
    }
}

static size_t n_constraints(const mbs_problem *pb)
{
    size_t n = COORDS(pb) == C_ABS ? 3 : 0;
    if (COORDS(pb) != C_EULER && NORM(pb))
        n++;
    return n;
}

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    switch (COORDS(pb)) {
    case C_EULER:
        *nq = 3, *nv = 3;
        break;
    case C_QUAT:
        *nq = 4, *nv = 3;
        break;
    default:
        *nq = 7, *nv = 6;
        break;
    }
    *nl = n_constraints(pb);
    return MBS_OK;
}

static int setup(mbs_problem *pb, char *err, size_t errlen)
{
    if (COORDS(pb) == C_EULER && PAR(P_FAST) != 0.0) {
        snprintf(err, errlen, "heavytop: coords=euler is singular at R(0) = I of fast=1 "
                              "(theta = 0, Remark 6a); use coords=quaternion or absolute");
        return MBS_BAD_INPUT;
    }
    if (COORDS(pb) == C_EULER && NORM(pb)) {
        snprintf(err, errlen, "heavytop: norm=1 needs coords=quaternion or absolute");
        return MBS_BAD_INPUT;
    }
    if (NORM(pb))
        pb->flags |= MBS_PB_REDUNDANT;
    if (COORDS(pb) == C_EULER)
        pb->flags |= MBS_PB_SINGULAR_CONFIG;
    return MBS_OK;
}

static void initial_R_omega(const mbs_problem *pb, double *R, double *W)
{
    if (PAR(P_FAST) != 0.0) {
        static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        memcpy(R, I, sizeof I);
        W[0] = 0.0, W[1] = 150.0, W[2] = -4.61538;
    } else {
        static const double R0[9] = {0, 0, 1, 0, 1, 0, -1, 0, 0}; /* Example 6 */
        memcpy(R, R0, sizeof R0);
        W[0] = 0.0, W[1] = 1.5, W[2] = -0.0461538;
    }
}

/* Unit quaternion of a rotation matrix (Shepperd's method), sign chosen
 * closest to `prev` (or p0 >= 0 when prev is NULL). */
static void R_to_quat(const double *R, const double *prev, double *p)
{
    double tr = R[0] + R[4] + R[8];
    double c[4] = {1 + tr, 1 + 2 * R[0] - tr, 1 + 2 * R[4] - tr, 1 + 2 * R[8] - tr};
    int k = 0;
    for (int i = 1; i < 4; i++)
        if (c[i] > c[k])
            k = i;
    double s = 0.5 * sqrt(c[k]);
    double f = 0.25 / s;
    switch (k) {
    case 0:
        p[0] = s, p[1] = (R[7] - R[5]) * f, p[2] = (R[2] - R[6]) * f, p[3] = (R[3] - R[1]) * f;
        break;
    case 1:
        p[1] = s, p[0] = (R[7] - R[5]) * f, p[2] = (R[1] + R[3]) * f, p[3] = (R[2] + R[6]) * f;
        break;
    case 2:
        p[2] = s, p[0] = (R[2] - R[6]) * f, p[1] = (R[1] + R[3]) * f, p[3] = (R[5] + R[7]) * f;
        break;
    default:
        p[3] = s, p[0] = (R[3] - R[1]) * f, p[1] = (R[2] + R[6]) * f, p[2] = (R[5] + R[7]) * f;
        break;
    }
    double dot = prev ? prev[0] * p[0] + prev[1] * p[1] + prev[2] * p[2] + prev[3] * p[3] : p[0];
    if (dot < 0.0)
        for (int i = 0; i < 4; i++)
            p[i] = -p[i];
}

static double unwrap(double a, double prev)
{
    return a + 2.0 * M_PI * round((prev - a) / (2.0 * M_PI));
}

/* Euler angles of R = Rz(phi) Ry(theta) Rz(psi), theta in (0, pi): row 3 of R is
 * (-st cp, st sp, ct), column 3 is (cf st, sf st, ct); continuous with prev. */
static void R_to_euler(const double *R, const double *prev, double *q)
{
    double th = acos(fmax(-1.0, fmin(1.0, R[8])));
    double phi = atan2(R[5], R[2]), psi = atan2(R[7], -R[6]);
    q[0] = prev ? unwrap(phi, prev[0]) : phi;
    q[1] = th;
    q[2] = prev ? unwrap(psi, prev[2]) : psi;
}

/* q, v of the chosen parametrisation from (R, Omega); prev: continuity. */
static void from_R(const mbs_problem *pb, const double *R, const double *W, const double *prev,
                   double *q, double *v)
{
    switch (COORDS(pb)) {
    case C_EULER:
        R_to_euler(R, prev, q);
        memcpy(v, W, 3 * sizeof *W);
        break;
    case C_QUAT:
        R_to_quat(R, prev, q);
        memcpy(v, W, 3 * sizeof *W);
        break;
    default: {
        double wx[3];
        matvec(R, XC, q);
        R_to_quat(R, prev ? prev + 3 : NULL, q + 3);
        cross(W, XC, wx);
        matvec(R, wx, v); /* x' = R Omega~ X */
        memcpy(v + 3, W, 3 * sizeof *W);
        break;
    }
    }
}

static int top_rhs(double t, const double y[], double dy[], void *ode);

typedef struct top_ode {
    double m, g;
} top_ode;

/* Multipliers at (R, Omega) for coords=absolute: m u' = m gamma - lambda with
 * u' = R (Omega x (Omega x X) + Omega' x X), Omega' from Eq. (34b); the
 * normalisation multiplier (norm=1) is the minimum-norm value 0. */
static void joint_lambda(const mbs_problem *pb, const double *y, double *lambda)
{
    top_ode o = {PAR(P_M), PAR(P_G)};
    double dy[12], a[3], b[3], c[3], d[3], Ra[3];
    top_rhs(0.0, y, dy, &o);
    cross(y + 9, XC, a);
    cross(y + 9, a, b);
    cross(dy + 9, XC, c);
    for (int i = 0; i < 3; i++)
        d[i] = b[i] + c[i];
    matvec(y, d, Ra);
    for (int i = 0; i < 3; i++)
        lambda[i] = (i == 2 ? -o.m * o.g : 0.0) - o.m * Ra[i];
    if (NORM(pb))
        lambda[3] = 0.0;
}

static int initial(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                   int *have_lambda)
{
    double R[9], W[3];
    initial_R_omega(pb, R, W);
    from_R(pb, R, W, NULL, q0, v0);
    if (COORDS(pb) == C_EULER) {
        /* exact values of R0 = Ry(pi/2) (acos/atan2 round-off avoided) */
        if (PAR(P_FAST) == 0.0)
            q0[0] = 0.0, q0[1] = 0.5 * M_PI, q0[2] = 0.0;
    }
    if (pb->nl > 0 && NORM(pb) && COORDS(pb) == C_QUAT) {
        lambda0[0] = 0.0; /* B = 0: minimum-norm multiplier */
        *have_lambda = 1;
    } else if (COORDS(pb) == C_ABS) {
        double y[12];
        initial_R_omega(pb, y, y + 9);
        joint_lambda(pb, y, lambda0);
        *have_lambda = 1;
    } else {
        *have_lambda = 0;
    }
    return MBS_OK;
}

static int mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)t, (void)q;
    gsl_matrix_set_zero(M);
    if (COORDS(pb) == C_ABS) {
        double m = PAR(P_M);
        for (int i = 0; i < 3; i++)
            gsl_matrix_set(M, (size_t)i, (size_t)i, m);
        /* J = Jbar + m X~ X~, X~ X~ = X X^T - |X|^2 I */
        double X2 = XC[0] * XC[0] + XC[1] * XC[1] + XC[2] * XC[2];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                gsl_matrix_set(M, (size_t)(3 + i), (size_t)(3 + j),
                               (i == j ? JBAR[i] - m * X2 : 0.0) + m * XC[i] * XC[j]);
    } else {
        for (int i = 0; i < 3; i++)
            gsl_matrix_set(M, (size_t)i, (size_t)i, JBAR[i]);
    }
    return MBS_OK;
}

static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)t;
    double m = PAR(P_M), mg[3] = {0.0, 0.0, -m * PAR(P_G)};
    if (COORDS(pb) == C_ABS) {
        const double *W = v + 3;
        double JW[3], X2 = XC[0] * XC[0] + XC[1] * XC[1] + XC[2] * XC[2];
        for (int i = 0; i < 3; i++) {
            JW[i] = (JBAR[i] - m * X2) * W[i] +
                    m * XC[i] * (XC[0] * W[0] + XC[1] * W[1] + XC[2] * W[2]);
            f[i] = mg[i];
        }
        cross(W, JW, f + 3);
        for (int i = 3; i < 6; i++)
            f[i] = -f[i];
        return MBS_OK;
    }
    double R[9], RtG[3], JW[3], a[3], b[3];
    rotation(pb, q, R);
    matTvec(R, mg, RtG);
    for (int i = 0; i < 3; i++)
        JW[i] = JBAR[i] * v[i];
    cross(v, JW, a);
    cross(XC, RtG, b);
    for (int i = 0; i < 3; i++)
        f[i] = b[i] - a[i]; /* Eq. (34b) */
    return MBS_OK;
}

/* H(p) of Eq. (39) into rows r0.. and columns c0.. of H. */
static void quat_H(const double *p, gsl_matrix *H, size_t r0, size_t c0)
{
    double p0 = p[0], p1 = p[1], p2 = p[2], p3 = p[3];
    double h[12] = {-p1, -p2, -p3, p0, -p3, p2, p3, p0, -p1, -p2, p1, p0};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++)
            gsl_matrix_set(H, r0 + i, c0 + j, 0.5 * h[3 * i + j]);
}

static int kinematic(const mbs_problem *pb, const double *q, gsl_matrix *H)
{
    gsl_matrix_set_zero(H);
    switch (COORDS(pb)) {
    case C_EULER: {
        /* H0^-1 (Eq. (36)) for R = Rz(phi) Ry(theta) Rz(psi): Omega = phi' (-cp st,
         * sp st, ct) + theta' (sp, cp, 0) + psi' (0, 0, 1), so
         * phi' = (-cp W1 + sp W2)/st, theta' = sp W1 + cp W2, psi' = W3 - ct phi'. */
        double cf = cos(q[2]), sf = sin(q[2]), ct = cos(q[1]), st = sin(q[1]);
        if (st == 0.0)
            return MBS_CALLBACK_FAILED;
        gsl_matrix_set(H, 0, 0, -cf / st);
        gsl_matrix_set(H, 0, 1, sf / st);
        gsl_matrix_set(H, 1, 0, sf);
        gsl_matrix_set(H, 1, 1, cf);
        gsl_matrix_set(H, 2, 0, ct * cf / st);
        gsl_matrix_set(H, 2, 1, -ct * sf / st);
        gsl_matrix_set(H, 2, 2, 1.0);
        break;
    }
    case C_QUAT:
        quat_H(q, H, 0, 0);
        break;
    default:
        for (size_t i = 0; i < 3; i++)
            gsl_matrix_set(H, i, i, 1.0);
        quat_H(q + 3, H, 3, 3);
        break;
    }
    return MBS_OK;
}

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)t;
    size_t k = 0;
    if (COORDS(pb) == C_ABS) {
        double R[9], RX[3];
        quat_R(q + 3, R);
        matvec(R, XC, RX);
        for (int i = 0; i < 3; i++)
            g[k++] = q[i] - RX[i];
    }
    if (NORM(pb)) {
        const double *p = COORDS(pb) == C_ABS ? q + 3 : q;
        g[k] = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3] - 1.0;
    }
    return MBS_OK;
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)t;
    gsl_matrix_set_zero(G);
    size_t k = 0;
    if (COORDS(pb) == C_ABS) {
        /* d(R(p) w)/dp, R(p) w = (p0^2 - pv.pv) w + 2 (pv.w) pv + 2 p0 pv x w:
         * d/dp0 = 2 p0 w + 2 pv x w,
         * d/dpv = 2 ((pv.w) I + pv w^T - w pv^T - p0 w~). */
        const double *p = q + 3, *pv = q + 4, *w = XC;
        double pw = pv[0] * w[0] + pv[1] * w[1] + pv[2] * w[2], pxw[3];
        cross(pv, w, pxw);
        double wt[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
        for (size_t i = 0; i < 3; i++) {
            gsl_matrix_set(G, i, i, 1.0);
            gsl_matrix_set(G, i, 3, -(2 * p[0] * w[i] + 2 * pxw[i]));
            for (size_t j = 0; j < 3; j++) {
                double d = 2 * ((i == j ? pw : 0.0) + pv[i] * w[j] - w[i] * pv[j] -
                                p[0] * wt[3 * i + j]);
                gsl_matrix_set(G, i, 4 + j, -d);
            }
        }
        k = 3;
    }
    if (NORM(pb)) {
        size_t off = COORDS(pb) == C_ABS ? 3 : 0;
        for (size_t j = 0; j < 4; j++)
            gsl_matrix_set(G, k, off + j, 2.0 * q[off + j]);
    }
    return MBS_OK;
}

static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)t;
    size_t k = 0;
    if (COORDS(pb) == C_ABS) {
        /* B v = u + R(p) (X x Omega); d/dt at fixed v: R(p) (Omega x (X x Omega)). */
        const double *W = v + 3;
        double R[9], a[3], b[3], c[3];
        quat_R(q + 3, R);
        cross(XC, W, a);
        cross(W, a, b);
        matvec(R, b, c);
        for (int i = 0; i < 3; i++)
            gam[k++] = -c[i];
    }
    if (NORM(pb))
        gam[k] = 0.0; /* B = 2 p^T H(p) = 0 identically */
    return MBS_OK;
}

static double energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    (void)t;
    double m = PAR(P_M), g = PAR(P_G);
    if (COORDS(pb) == C_ABS) {
        const double *W = v + 3;
        double X2 = XC[0] * XC[0] + XC[1] * XC[1] + XC[2] * XC[2];
        double XW = XC[0] * W[0] + XC[1] * W[1] + XC[2] * W[2], T = 0.0;
        for (int i = 0; i < 3; i++)
            T += 0.5 * m * v[i] * v[i] + 0.5 * (JBAR[i] - m * X2) * W[i] * W[i];
        T += 0.5 * m * XW * XW;
        return T + m * g * q[2];
    }
    double R[9], RX[3], T = 0.0;
    rotation(pb, q, R);
    matvec(R, XC, RX);
    for (int i = 0; i < 3; i++)
        T += 0.5 * JBAR[i] * v[i] * v[i];
    return T + m * g * RX[2];
}

/* ---- independent formulation: Eq. (34) with R in R^9 ------------------------ */

static int top_rhs(double t, const double y[], double dy[], void *ode)
{
    (void)t;
    const top_ode *o = ode;
    const double *R = y, *W = y + 9;
    /* R' = R Omega~ */
    double Wt[9] = {0, -W[2], W[1], W[2], 0, -W[0], -W[1], W[0], 0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            dy[3 * i + j] = R[3 * i] * Wt[j] + R[3 * i + 1] * Wt[3 + j] + R[3 * i + 2] * Wt[6 + j];
    double mg[3] = {0.0, 0.0, -o->m * o->g}, RtG[3], JW[3], a[3], b[3];
    matTvec(R, mg, RtG);
    for (int i = 0; i < 3; i++)
        JW[i] = JBAR[i] * W[i];
    cross(W, JW, a);
    cross(XC, RtG, b);
    for (int i = 0; i < 3; i++)
        dy[9 + i] = (b[i] - a[i]) / JBAR[i];
    return GSL_SUCCESS;
}

static int independent(const mbs_problem *pb, double t_end, double tol, double *q, double *v,
                       double *lambda, int *have_lambda, char *what, size_t whatlen)
{
    top_ode o = {PAR(P_M), PAR(P_G)};
    gsl_odeiv2_system sys = {top_rhs, NULL, 12, &o};
    gsl_odeiv2_step *st = gsl_odeiv2_step_alloc(gsl_odeiv2_step_rk8pd, 12);
    gsl_odeiv2_control *ct = gsl_odeiv2_control_y_new(tol, tol);
    gsl_odeiv2_evolve *ev = gsl_odeiv2_evolve_alloc(12);
    int s = MBS_NO_MEMORY;
    if (st && ct && ev) {
        double y[12], t = pb->t0, h = 1e-4;
        initial_R_omega(pb, y, y + 9);
        double qp[7];
        initial(pb, qp, v, lambda, have_lambda);
        s = MBS_OK;
        long n = 0;
        while (t < t_end) {
            int r = gsl_odeiv2_evolve_apply(ev, ct, st, &sys, &t, t_end, &h, y);
            if (r != GSL_SUCCESS || ++n > 100000000) {
                snprintf(what, whatlen, "rotation-matrix ODE: GSL rk8pd failed at t=%g", t);
                s = MBS_LIBRARY_FAILURE;
                break;
            }
            from_R(pb, y, y + 9, qp, q, v); /* continuity of angles / quaternion sign */
            memcpy(qp, q, pb->nq * sizeof *q);
        }
        if (s == MBS_OK) {
            *have_lambda = 1;
            if (COORDS(pb) == C_ABS)
                joint_lambda(pb, y, lambda);
            else if (NORM(pb))
                lambda[0] = 0.0;
            snprintf(what, whatlen,
                     "rotation-matrix ODE (seed 002 Eq. (34), R in R^9), GSL rk8pd rtol=atol=%g",
                     tol);
        }
    }
    if (ev)
        gsl_odeiv2_evolve_free(ev);
    if (ct)
        gsl_odeiv2_control_free(ct);
    if (st)
        gsl_odeiv2_step_free(st);
    return s;
}

const mbs_problem_def mbs_problem_heavytop = {
    .name = "heavytop",
    .title = "heavy top: Euler angles, quaternions or absolute coordinates",
    .citation = "seed 002, Example 6, Eq. (34), Remarks 6-7",
    .reference = "stored: rotation-matrix ODE (Eq. (34), GSL rk8pd) vs index1/rk8pd, "
                 "problems/ref/heavytop.ref",
    .flags = MBS_PB_CONSERVATIVE,
    .index = 3,
    .t0 = 0.0,
    .t_end = 2.0,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .dims = dims,
    .setup = setup,
    .initial = initial,
    .mass = mass,
    .force = force,
    .constraint = constraint,
    .jacobian = jacobian,
    .gamma = gamma_fn,
    .kinematic = kinematic,
    .energy = energy,
    .independent = independent,
};
