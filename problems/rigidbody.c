/* Free rigid body in director form ([bauchau2003selfstabilized], Sect. 6.1, Eqs. (39)-(41)).
 *
 * q = d = (u, e1, e2, e3) (12 coordinates): u the position of the reference
 * point O, e_k the body-attached orthonormal basis; a material point with body
 * coordinates s is at u + s_k e_k.  Kinetic energy K = 1/2 d'^T M d' with the
 * constant mass matrix of Eq. (39), M = [M_ab I_3] (a, b = 0..3), M00 the mass,
 * M0k = int rho s_k dV, Mkl = int rho s_k s_l dV; no applied forces.
 * Constraints, Eq. (40):
 *   g = ((e1.e1 - 1)/2, (e2.e2 - 1)/2, (e3.e3 - 1)/2, e2.e3, e1.e3, e1.e2),
 * all quadratic, so the midpoint Jacobian is the discrete gradient of Eq. (6).
 *
 * Data ([bauchau2003selfstabilized] Sect. 6.1): M00 = 1.8, (M01, M02, M03) = (0.18, 0.72, 0.54),
 * (M11, M22, M33) = (0.2, 0.7, 0.4), (M12, M13, M23) = (0.012, 0.015, 0.023),
 * u'(0) = (5, 0, 0) m/s, omega(0) = (0, 4, 0) rad/s, 5 s, h = 0.0125.
 * Sign reading: the extraction may have lost minus signs of the first moments
 * and of the products.  All 64 sign readings give a positive-definite 4x4
 * matrix [M_ab] (smallest eigenvalue between 0.015 and 0.12), so positive
 * definiteness does not decide; we take the values as printed (all positive:
 * smallest eigenvalue 0.1216, centre of mass at (0.1, 0.4, 0.3) in the body
 * frame).  Initial state: u = 0, e_k = i_k, u' = v0 (the velocity of the
 * reference point O), e_k' = omega0 x e_k; setup() rejects parameters whose
 * [M_ab] is not positive definite.
 *
 * Independent formulation (reference): the centre of mass moves uniformly and
 * the rotation R = [e1 e2 e3] obeys R' = R Omega~, J_c Omega' = -Omega x J_c
 * Omega with J_c = tr(S_c) I - S_c, S_c = [Mkl] - M00 c c^T the second moments
 * about the centre of mass c = M0k/M00 (Euler's equations); GSL rk8pd. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/status.h"
#include "problem.h"

enum {
    P_M00, P_M01, P_M02, P_M03, P_M11, P_M22, P_M33, P_M12, P_M13, P_M23,
    P_V1, P_V2, P_V3, P_W1, P_W2, P_W3, P_COUNT
};

static const mbs_param_def params[] = {
    [P_M00] = {"M00", 1.8, 1e-6, 1e6, "mass [kg]", NULL, 0},
    [P_M01] = {"M01", 0.18, -1e6, 1e6, "first moment int rho s1 dV [kg m]", NULL, 0},
    [P_M02] = {"M02", 0.72, -1e6, 1e6, "first moment int rho s2 dV [kg m]", NULL, 0},
    [P_M03] = {"M03", 0.54, -1e6, 1e6, "first moment int rho s3 dV [kg m]", NULL, 0},
    [P_M11] = {"M11", 0.2, 0.0, 1e6, "second moment int rho s1^2 dV [kg m^2]", NULL, 0},
    [P_M22] = {"M22", 0.7, 0.0, 1e6, "second moment int rho s2^2 dV [kg m^2]", NULL, 0},
    [P_M33] = {"M33", 0.4, 0.0, 1e6, "second moment int rho s3^2 dV [kg m^2]", NULL, 0},
    [P_M12] = {"M12", 0.012, -1e6, 1e6, "second moment int rho s1 s2 dV [kg m^2]", NULL, 0},
    [P_M13] = {"M13", 0.015, -1e6, 1e6, "second moment int rho s1 s3 dV [kg m^2]", NULL, 0},
    [P_M23] = {"M23", 0.023, -1e6, 1e6, "second moment int rho s2 s3 dV [kg m^2]", NULL, 0},
    [P_V1] = {"v1", 5.0, -1e3, 1e3, "initial velocity of O along i1 [m/s]", NULL, 0},
    [P_V2] = {"v2", 0.0, -1e3, 1e3, "initial velocity of O along i2 [m/s]", NULL, 0},
    [P_V3] = {"v3", 0.0, -1e3, 1e3, "initial velocity of O along i3 [m/s]", NULL, 0},
    [P_W1] = {"w1", 0.0, -1e3, 1e3, "initial angular velocity along i1 [rad/s]", NULL, 0},
    [P_W2] = {"w2", 4.0, -1e3, 1e3, "initial angular velocity along i2 [rad/s]", NULL, 0},
    [P_W3] = {"w3", 0.0, -1e3, 1e3, "initial angular velocity along i3 [rad/s]", NULL, 0},
};

#define PAR(i) mbs_pb_param(pb, i)

/* The 4x4 matrix [M_ab]. */
static void mab(const mbs_problem *pb, double m[4][4])
{
    m[0][0] = PAR(P_M00);
    m[0][1] = m[1][0] = PAR(P_M01);
    m[0][2] = m[2][0] = PAR(P_M02);
    m[0][3] = m[3][0] = PAR(P_M03);
    m[1][1] = PAR(P_M11);
    m[2][2] = PAR(P_M22);
    m[3][3] = PAR(P_M33);
    m[1][2] = m[2][1] = PAR(P_M12);
    m[1][3] = m[3][1] = PAR(P_M13);
    m[2][3] = m[3][2] = PAR(P_M23);
}

static int setup(mbs_problem *pb, char *err, size_t errlen)
{
    double m[4][4];
    mab(pb, m);
    gsl_matrix_view A = gsl_matrix_view_array(&m[0][0], 4, 4);
    if (gsl_linalg_cholesky_decomp1(&A.matrix) != GSL_SUCCESS) {
        snprintf(err, errlen, "rigidbody: the matrix [M_ab] (Eq. (39)) is not positive definite "
                              "(not the moments of a body)");
        return MBS_BAD_INPUT;
    }
    return MBS_OK;
}

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = 12;
    *nv = 12;
    *nl = 6;
    return MBS_OK;
}

static void cross(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static int initial(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                   int *have_lambda)
{
    (void)lambda0;
    *have_lambda = 0;
    double w[3] = {PAR(P_W1), PAR(P_W2), PAR(P_W3)};
    memset(q0, 0, 12 * sizeof *q0);
    for (int k = 0; k < 3; k++) {
        double e[3] = {0, 0, 0};
        e[k] = 1.0;
        memcpy(q0 + 3 + 3 * k, e, sizeof e);
        cross(w, e, v0 + 3 + 3 * k);
    }
    v0[0] = PAR(P_V1);
    v0[1] = PAR(P_V2);
    v0[2] = PAR(P_V3);
    return MBS_OK;
}

static int mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)t, (void)q;
    double m[4][4];
    mab(pb, m);
    gsl_matrix_set_zero(M);
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int i = 0; i < 3; i++)
                gsl_matrix_set(M, (size_t)(3 * a + i), (size_t)(3 * b + i), m[a][b]);
    return MBS_OK;
}

static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)pb, (void)t, (void)q, (void)v;
    memset(f, 0, 12 * sizeof *f);
    return MBS_OK;
}

/* Constraint pairs (a, b) of Eq. (40): g = e_a . e_b - delta_ab, halved when a = b. */
static const int PAIR[6][2] = {{1, 1}, {2, 2}, {3, 3}, {2, 3}, {1, 3}, {1, 2}};

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)pb, (void)t;
    for (int k = 0; k < 6; k++) {
        const double *ea = q + 3 * PAIR[k][0], *eb = q + 3 * PAIR[k][1];
        g[k] = k < 3 ? 0.5 * (dot(ea, ea) - 1.0) : dot(ea, eb);
    }
    return MBS_OK;
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)pb, (void)t;
    gsl_matrix_set_zero(G);
    for (size_t k = 0; k < 6; k++) {
        int a = PAIR[k][0], b = PAIR[k][1];
        for (int i = 0; i < 3; i++) {
            if (a == b) {
                gsl_matrix_set(G, k, (size_t)(3 * a + i), q[3 * a + i]);
            } else {
                gsl_matrix_set(G, k, (size_t)(3 * a + i), q[3 * b + i]);
                gsl_matrix_set(G, k, (size_t)(3 * b + i), q[3 * a + i]);
            }
        }
    }
    return MBS_OK;
}

static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)pb, (void)t, (void)q;
    for (int k = 0; k < 6; k++) {
        const double *va = v + 3 * PAIR[k][0], *vb = v + 3 * PAIR[k][1];
        gam[k] = k < 3 ? -dot(va, va) : -2.0 * dot(va, vb);
    }
    return MBS_OK;
}

static double energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    (void)t, (void)q;
    double m[4][4], K = 0.0;
    mab(pb, m);
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            K += 0.5 * m[a][b] * dot(v + 3 * a, v + 3 * b);
    return K;
}

/* ---- independent formulation ----------------------------------------------- */

typedef struct body_ode {
    double Jc[3][3], Jinv[3][3];
} body_ode;

/* y = (R row-major (9), Omega (3)); R' = R Omega~, Jc Omega' = -Omega x Jc Omega. */
static int body_rhs(double t, const double y[], double dy[], void *data)
{
    (void)t;
    const body_ode *o = data;
    const double *R = y, *W = y + 9;
    double Wt[3][3] = {{0, -W[2], W[1]}, {W[2], 0, -W[0]}, {-W[1], W[0], 0}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            dy[3 * i + j] = R[3 * i] * Wt[0][j] + R[3 * i + 1] * Wt[1][j] + R[3 * i + 2] * Wt[2][j];
    double JW[3], c[3];
    for (int i = 0; i < 3; i++)
        JW[i] = dot(o->Jc[i], W);
    cross(W, JW, c);
    for (int i = 0; i < 3; i++)
        dy[9 + i] = -dot(o->Jinv[i], c);
    return GSL_SUCCESS;
}

static int independent(const mbs_problem *pb, double t_end, double tol, double *q, double *v,
                       double *lambda, int *have_lambda, char *what, size_t whatlen)
{
    (void)lambda;
    *have_lambda = 0;
    double m[4][4];
    mab(pb, m);
    double M0 = m[0][0], c[3] = {m[0][1] / M0, m[0][2] / M0, m[0][3] / M0}, S[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            S[i][j] = m[i + 1][j + 1] - M0 * c[i] * c[j];
    double tr = S[0][0] + S[1][1] + S[2][2];
    body_ode o;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            o.Jc[i][j] = (i == j ? tr : 0.0) - S[i][j];
    /* Inverse of the 3x3 inertia by cofactors. */
    double (*J)[3] = o.Jc;
    double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
                 J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                 J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            int i1 = (j + 1) % 3, i2 = (j + 2) % 3, j1 = (i + 1) % 3, j2 = (i + 2) % 3;
            o.Jinv[i][j] = (J[i1][j1] * J[i2][j2] - J[i1][j2] * J[i2][j1]) / det;
        }
    double q0[12], v0[12], l0[6];
    int hl;
    initial(pb, q0, v0, l0, &hl);
    double y[12], w0[3] = {PAR(P_W1), PAR(P_W2), PAR(P_W3)};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            y[3 * i + k] = q0[3 + 3 * k + i]; /* R = [e1 e2 e3], row-major */
    for (int i = 0; i < 3; i++) /* Omega = R^T omega */
        y[9 + i] = y[i] * w0[0] + y[3 + i] * w0[1] + y[6 + i] * w0[2];
    /* Centre of mass x_c = u + R c, v_c = u' + omega x R c (constant). */
    double Rc0[3], xc0[3], vc[3], wRc[3];
    for (int i = 0; i < 3; i++)
        Rc0[i] = y[3 * i] * c[0] + y[3 * i + 1] * c[1] + y[3 * i + 2] * c[2];
    cross(w0, Rc0, wRc);
    for (int i = 0; i < 3; i++) {
        xc0[i] = q0[i] + Rc0[i];
        vc[i] = v0[i] + wRc[i];
    }
    gsl_odeiv2_system sys = {body_rhs, NULL, 12, &o};
    gsl_odeiv2_driver *drv =
        gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-4, tol, tol);
    if (!drv) {
        snprintf(what, whatlen, "out of memory");
        return MBS_NO_MEMORY;
    }
    gsl_odeiv2_driver_set_nmax(drv, 100000000);
    double t = pb->t0;
    int r = t_end > t ? gsl_odeiv2_driver_apply(drv, &t, t_end, y) : GSL_SUCCESS;
    gsl_odeiv2_driver_free(drv);
    if (r != GSL_SUCCESS) {
        snprintf(what, whatlen, "Euler equations: GSL rk8pd failed at t=%g: %s", t,
                 gsl_strerror(r));
        return MBS_LIBRARY_FAILURE;
    }
    const double *R = y, *W = y + 9;
    double Rc[3], WxC[3], RWxC[3];
    for (int i = 0; i < 3; i++)
        Rc[i] = dot(R + 3 * i, c);
    cross(W, c, WxC);
    for (int i = 0; i < 3; i++)
        RWxC[i] = dot(R + 3 * i, WxC);
    for (int i = 0; i < 3; i++) {
        q[i] = xc0[i] + vc[i] * (t_end - pb->t0) - Rc[i];
        v[i] = vc[i] - RWxC[i];
    }
    for (int k = 0; k < 3; k++) {
        double ek[3] = {0, 0, 0}, Wxe[3];
        ek[k] = 1.0;
        cross(W, ek, Wxe); /* e_k' = R (Omega x i_k) */
        for (int i = 0; i < 3; i++) {
            q[3 + 3 * k + i] = R[3 * i + k];
            v[3 + 3 * k + i] = dot(R + 3 * i, Wxe);
        }
    }
    snprintf(what, whatlen,
             "Euler's equations about the centre of mass with R' = R Omega~ (R in R^9), "
             "GSL rk8pd rtol=atol=%g",
             tol);
    return MBS_OK;
}

const mbs_problem_def mbs_problem_rigidbody = {
    .name = "rigidbody",
    .title = "free rigid body in director form (12 coordinates, 6 constraints)",
    .citation = "Bauchau 2003 [bauchau2003selfstabilized], Sect. 6.1, Eqs. (39)-(41); data as printed (all signs positive)",
    .reference = "stored: Euler's equations + rotation matrix (GSL rk8pd) vs index1/rk8pd, "
                 "problems/ref/rigidbody.ref",
    .flags = MBS_PB_CONSERVATIVE,
    .index = 3,
    .t0 = 0.0,
    .t_end = 5.0,
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
    .energy = energy,
    .independent = independent,
};
