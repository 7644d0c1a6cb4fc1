/* Heavy top with its tip fixed at the origin ([arnold2016dae], Example 6, Eq. (34);
 * Remarks 6-7).  Body-frame angular velocity Omega, inertia about the fixed point
 * Jbar = diag(15.234375, 0.46875, 15.234375) kg m^2, m = 15 kg, centre of mass
 * X = (0, 1, 0) m in the body frame, gravity gamma = (0, 0, -g):
 *     R' = R Omega~,   Jbar Omega' + Omega x Jbar Omega = X x R^T m gamma.    (34)
 * Initial values as printed in Example 6 (slow top): R(0) = Ry(pi/2),
 * Omega(0) = (0, 1.5, -0.0461538) rad/s; `fast=1`: R(0) = I, Omega(0) =
 * (0, 150, -4.61538) rad/s (the Lie-group literature's variant).
 *
 * Parametrisations (`coords`):
 *  euler      q = (phi, theta, psi), R = Rz(phi) Ry(theta) Rz(psi) (Remark 6a),
 *             v = Omega, q' = H0^-1(q) v (Eq. (36)), no constraints; singular at
 *             theta = 0 (so `fast=1`, R(0) = I, is rejected).
 *  quaternion q = p (4), v = Omega (3), q' = H(p) v with H of Eq. (39).
 *  absolute   q = (x, p) (7), v = (u, Omega) (6) with x' = u, p' = H(p) Omega,
 *             M = diag(m I, J), J = Jbar + m X~ X~ (inertia about the centre of
 *             mass), joint constraint 0 = x - R(p) X (index 3), lambda = the
 *             force the joint exerts on the top, with the sign of M v' = f - B^T lambda.
 *  rotmat     the Lie-group form on SO(3) x R^3 ([arnold2016dae] Remark 5a-b, Eq. (33);
 *             Brüls and Cardona [bruls2010liegroup]): q = (x, R) (12, R row-major),
 *             v = (u, Omega) (6) with x' = u, R' = R Omega~, M and the joint
 *             constraint 0 = x - R X as for `absolute` (the same lambda).  Flagged
 *             MBS_PB_LIEGROUP: (x, R) o exp(w) = (x + w_u, R exp(w_Omega~)) keeps
 *             R orthogonal (liegroup/genalpha); methods that treat q as a vector
 *             integrate R' = R Omega~ in R^9 and lose orthogonality at the size of
 *             their local errors.
 * |p| = 1 is an invariant of p' = H(p) Omega ([arnold2016dae] Eq. (40)).  `norm=1`
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
#include "so3.h"

enum { P_COORDS, P_FAST, P_NORM, P_M, P_G };
enum { C_EULER = 0, C_QUAT = 1, C_ABS = 2, C_ROT = 3 };

static const mbs_param_def params[] = {
    [P_COORDS] = {"coords", C_EULER, 0, 3,
                  "parametrisation: euler (Z-Y-Z, Remark 6), quaternion (Remark 7), "
                  "absolute (x, p with joint constraint x = R X, index 3), rotmat (x, R "
                  "on the Lie group SO(3) x R^3, same constraint)",
                  "euler,quaternion,absolute,rotmat", 1},
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

/* R (row-major) from Euler angles q = (phi, theta, psi): R = Rz(phi) Ry(theta) Rz(psi),
 * precession phi about the inertial z axis, nutation theta, spin psi about the
 * body axis.  The extraction of [arnold2016dae] Remark 6a prints the factors as
 * Rz(psi) Ry(theta) Rz(phi) next to an H0 (Eq. (35)) whose entries depend on phi;
 * these two are consistent only for the order used here with phi and psi
 * exchanged inside H0 (we checked R^T R' = Omega~ numerically; the battery's
 * kinematic test keeps checking it).  theta, and so the nutation minimum of
 * Remark 6d, is the same in both readings.  (mbs_euler_zyz_to_R, problems/so3.c, is
 * that R; rotation() below gives R for every parametrisation.) */

/* Rotation part of q (any parametrisation). */
static void rotation(const mbs_problem *pb, const double *q, double *R)
{
    switch (COORDS(pb)) {
    case C_EULER:
        mbs_euler_zyz_to_R(q, R);
        break;
    case C_QUAT:
        mbs_quat_to_R(q, R);
        break;
    case C_ROT:
        memcpy(R, q + 3, 9 * sizeof *R);
        break;
    default:
        mbs_quat_to_R(q + 3, R);
        break;
    }
}

/* Rotation part of q of the coordinates with a joint constraint (absolute, rotmat). */
static void joint_R(const mbs_problem *pb, const double *q, double *R)
{
    if (COORDS(pb) == C_ROT)
        memcpy(R, q + 3, 9 * sizeof *R);
    else
        mbs_quat_to_R(q + 3, R);
}

static size_t n_constraints(const mbs_problem *pb)
{
    size_t n = COORDS(pb) >= C_ABS ? 3 : 0;
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
    case C_ROT:
        *nq = 12, *nv = 6;
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
    if ((COORDS(pb) == C_EULER || COORDS(pb) == C_ROT) && NORM(pb)) {
        snprintf(err, errlen, "heavytop: norm=1 needs coords=quaternion or absolute");
        return MBS_BAD_INPUT;
    }
    if (COORDS(pb) == C_ROT)
        pb->flags |= MBS_PB_LIEGROUP;
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
        mbs_R_to_quat(R, prev, q);
        memcpy(v, W, 3 * sizeof *W);
        break;
    default: {
        double wx[3];
        mbs_matvec3(R, XC, q);
        if (COORDS(pb) == C_ROT)
            memcpy(q + 3, R, 9 * sizeof *R);
        else
            mbs_R_to_quat(R, prev ? prev + 3 : NULL, q + 3);
        mbs_cross(W, XC, wx);
        mbs_matvec3(R, wx, v); /* x' = R Omega~ X */
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
    mbs_cross(y + 9, XC, a);
    mbs_cross(y + 9, a, b);
    mbs_cross(dy + 9, XC, c);
    for (int i = 0; i < 3; i++)
        d[i] = b[i] + c[i];
    mbs_matvec3(y, d, Ra);
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
    } else if (COORDS(pb) >= C_ABS) {
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
    if (COORDS(pb) >= C_ABS) {
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
    if (COORDS(pb) >= C_ABS) {
        const double *W = v + 3;
        double JW[3], X2 = XC[0] * XC[0] + XC[1] * XC[1] + XC[2] * XC[2];
        for (int i = 0; i < 3; i++) {
            JW[i] = (JBAR[i] - m * X2) * W[i] +
                    m * XC[i] * (XC[0] * W[0] + XC[1] * W[1] + XC[2] * W[2]);
            f[i] = mg[i];
        }
        mbs_cross(W, JW, f + 3);
        for (int i = 3; i < 6; i++)
            f[i] = -f[i];
        return MBS_OK;
    }
    double R[9], RtG[3], JW[3], a[3], b[3];
    rotation(pb, q, R);
    mbs_matTvec3(R, mg, RtG);
    for (int i = 0; i < 3; i++)
        JW[i] = JBAR[i] * v[i];
    mbs_cross(v, JW, a);
    mbs_cross(XC, RtG, b);
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
    case C_ROT:
        /* x' = u; R' = R Omega~ = sum_j Omega_j R e_j~: column j of the R rows is
         * R e_j~ (row-major). */
        for (size_t i = 0; i < 3; i++)
            gsl_matrix_set(H, i, i, 1.0);
        for (size_t j = 0; j < 3; j++) {
            double e[3] = {0.0, 0.0, 0.0}, RE[9];
            e[j] = 1.0;
            double E[9] = {0, -e[2], e[1], e[2], 0, -e[0], -e[1], e[0], 0};
            mbs_matmul3(q + 3, E, RE);
            for (size_t r = 0; r < 9; r++)
                gsl_matrix_set(H, 3 + r, 3 + j, RE[r]);
        }
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
    if (COORDS(pb) >= C_ABS) {
        double R[9], RX[3];
        joint_R(pb, q, R);
        mbs_matvec3(R, XC, RX);
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
    if (COORDS(pb) == C_ROT) {
        /* g_i = x_i - sum_l R_il X_l */
        for (size_t i = 0; i < 3; i++) {
            gsl_matrix_set(G, i, i, 1.0);
            for (size_t l = 0; l < 3; l++)
                gsl_matrix_set(G, i, 3 + 3 * i + l, -XC[l]);
        }
        k = 3;
    } else if (COORDS(pb) == C_ABS) {
        /* d(R(p) w)/dp, R(p) w = (p0^2 - pv.pv) w + 2 (pv.w) pv + 2 p0 pv x w:
         * d/dp0 = 2 p0 w + 2 pv x w,
         * d/dpv = 2 ((pv.w) I + pv w^T - w pv^T - p0 w~). */
        const double *p = q + 3, *pv = q + 4, *w = XC;
        double pw = pv[0] * w[0] + pv[1] * w[1] + pv[2] * w[2], pxw[3];
        mbs_cross(pv, w, pxw);
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
    if (COORDS(pb) >= C_ABS) {
        /* B v = u + R (X x Omega); d/dt at fixed v: R (Omega x (X x Omega)). */
        const double *W = v + 3;
        double R[9], a[3], b[3], c[3];
        joint_R(pb, q, R);
        mbs_cross(XC, W, a);
        mbs_cross(W, a, b);
        mbs_matvec3(R, b, c);
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
    if (COORDS(pb) >= C_ABS) {
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
    mbs_matvec3(R, XC, RX);
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
    mbs_matTvec3(R, mg, RtG);
    for (int i = 0; i < 3; i++)
        JW[i] = JBAR[i] * W[i];
    mbs_cross(W, JW, a);
    mbs_cross(XC, RtG, b);
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
        double qp[12];
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
            if (COORDS(pb) >= C_ABS)
                joint_lambda(pb, y, lambda);
            else if (NORM(pb))
                lambda[0] = 0.0;
            snprintf(what, whatlen,
                     "rotation-matrix ODE (Arnold 2016 [arnold2016dae] Eq. (34), R in R^9), GSL rk8pd rtol=atol=%g",
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

/* ---- coords=rotmat: the Lie group SO(3) x R^3 (problem.h, mbs_liegroup) ----- */

/* (x, R) o exp(w) = (x + w_u, R exp(w_Omega~)): the flow of x' = u, R' = R Omega~
 * at constant (u, Omega) = w over unit time ([arnold2016dae] Eq. (33)). */
static int lie_compose_exp(const mbs_problem *pb, const double *q, const double *w, double *q1)
{
    if (COORDS(pb) != C_ROT)
        return MBS_UNSUPPORTED;
    double E[9];
    for (int i = 0; i < 3; i++)
        q1[i] = q[i] + w[i];
    mbs_so3_exp(w + 3, E);
    mbs_matmul3(q + 3, E, q1 + 3);
    return MBS_OK;
}

/* w = log(qa^-1 o qb) = (xb - xa, log(Ra^T Rb)). */
static int lie_log(const mbs_problem *pb, const double *qa, const double *qb, double *w)
{
    if (COORDS(pb) != C_ROT)
        return MBS_UNSUPPORTED;
    const double *A = qa + 3, *B = qb + 3;
    double AtB[9];
    for (int i = 0; i < 3; i++) {
        w[i] = qb[i] - qa[i];
        for (int j = 0; j < 3; j++)
            AtB[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
    }
    mbs_so3_log(AtB, w + 3);
    return MBS_OK;
}

static const mbs_liegroup so3xr3 = {.compose_exp = lie_compose_exp, .log = lie_log};

const mbs_problem_def mbs_problem_heavytop = {
    .name = "heavytop",
    .title = "heavy top: Euler angles, quaternions, absolute coordinates or SO(3) x R^3",
    .citation = "Arnold 2016 [arnold2016dae], Example 6, Eq. (34), Remarks 6-7",
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
    .lie = &so3xr3,
};
