/* Andrews' squeezing mechanism (seven-body mechanism) exactly as in the Test Set
 * for IVP Solvers, release 2.4 (Mazzia & Magherini 2008, problem II-13; Fortran
 * andrews.F rev. 1.2), transcribed in the Test Set 2.4 description [testset24]:
 *     M(q) q'' = f(q, q') - G(q)^T lambda,   0 = g(q)      (index 3),
 * q = (beta, Theta, gamma, Phi, delta, Omega, epsilon) in the notation of
 * Hairer & Wanner, Solving ODEs II, Sect. VII.7.  Our sign convention for the
 * multipliers is the published one (the Test Set writes M q'' - f + G^T lambda = 0).
 *
 * Published component order (27): q (7), q' (7), q'' (7), lambda (6); the Test
 * Set scores scd on q only (components 1-7) and mescd on all 27.  Our state is
 * q | v | lambda (20); q'' = M^-1 (f - G^T lambda) is recomputed in published().
 * No parameters: every constant is the published one.  No gravity; the driving
 * torque mom makes the system non-conservative. */
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <string.h>

#include "../core/status.h"
#include "problem.h"

/* Constants of andrews.md Sect. 2 (Test Set 2.4 / andrews.F). */
static const double m1 = 0.04325, m2 = 0.00365, m3 = 0.02373, m4 = 0.00706, m5 = 0.07050,
                    m6 = 0.00706, m7 = 0.05498;
static const double I1 = 2.194e-6, I2 = 4.410e-7, I3 = 5.255e-6, I4 = 5.667e-7, I5 = 1.169e-5,
                    I6 = 5.667e-7, I7 = 1.912e-5;
static const double xa = -0.06934, ya = -0.00227, xb = -0.03635, yb = 0.03273, xc = 0.014,
                    yc = 0.072;
static const double d = 0.028, da = 0.0115, e = 0.02, ea = 0.01421, rr = 0.007, ra = 0.00092;
static const double ss = 0.035, sa = 0.01874, sb = 0.01043, sc = 0.018, sd = 0.02;
static const double ta = 0.02308, tb = 0.00916, u = 0.04, ua = 0.01228, ub = 0.00449;
static const double zf = 0.02, zt = 0.04, fa = 0.01421, c0 = 4530.0, l0 = 0.07785,
                    mom = 0.033;

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = 7;
    *nv = 7;
    *nl = 6;
    return MBS_OK;
}

/* Consistent initial values as published (andrews.md Sect. 3). */
static int initial(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                   int *have_lambda)
{
    (void)pb;
    static const double q[7] = {-0.0617138900142764496358948458001, 0.0,
                                0.455279819163070380255912382449,
                                0.222668390165885884674473185609,
                                0.487364979543842550225598953530,
                                -0.222668390165885884674473185609,
                                1.23054744454982119249735015568};
    memcpy(q0, q, sizeof q);
    for (int i = 0; i < 7; i++)
        v0[i] = 0.0;
    for (int i = 0; i < 6; i++)
        lambda0[i] = 0.0;
    lambda0[0] = 98.5668703962410896057654982170;
    lambda0[1] = -6.12268834425566265503114393122;
    *have_lambda = 1;
    return MBS_OK;
}

static int mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)pb, (void)t;
    double c2 = cos(q[1]), s4 = sin(q[3]), s6 = sin(q[5]);
    double eea = e - ea, zffa = zf - fa;
    gsl_matrix_set_zero(M);
    gsl_matrix_set(M, 0, 0, m1 * ra * ra + m2 * (rr * rr - 2.0 * da * rr * c2 + da * da) + I1 + I2);
    double m12 = m2 * (da * da - da * rr * c2) + I2;
    gsl_matrix_set(M, 1, 0, m12);
    gsl_matrix_set(M, 0, 1, m12);
    gsl_matrix_set(M, 1, 1, m2 * da * da + I2);
    gsl_matrix_set(M, 2, 2, m3 * (sa * sa + sb * sb) + I3);
    gsl_matrix_set(M, 3, 3, m4 * eea * eea + I4);
    double m45 = m4 * (eea * eea + zt * eea * s4) + I4;
    gsl_matrix_set(M, 4, 3, m45);
    gsl_matrix_set(M, 3, 4, m45);
    gsl_matrix_set(M, 4, 4, m4 * (zt * zt + 2.0 * zt * eea * s4 + eea * eea) +
                                m5 * (ta * ta + tb * tb) + I4 + I5);
    gsl_matrix_set(M, 5, 5, m6 * zffa * zffa + I6);
    double m67 = m6 * (zffa * zffa - u * zffa * s6) + I6;
    gsl_matrix_set(M, 6, 5, m67);
    gsl_matrix_set(M, 5, 6, m67);
    gsl_matrix_set(M, 6, 6, m6 * (zffa * zffa - 2.0 * u * zffa * s6 + u * u) +
                                m7 * (ua * ua + ub * ub) + I6 + I7);
    return MBS_OK;
}

static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)pb, (void)t;
    double eea = e - ea, zffa = zf - fa;
    /* each sine and cosine once (the compiler does not merge repeated libm
     * calls; sin and cos of one angle become one sincos) */
    double s2 = sin(q[1]), s3 = sin(q[2]), c3 = cos(q[2]), c4 = cos(q[3]), c6 = cos(q[5]);
    double xd = sd * c3 + sc * s3 + xb, yd = sd * s3 - sc * c3 + yb;
    double L = sqrt((xd - xc) * (xd - xc) + (yd - yc) * (yd - yc));
    double F = -c0 * (L - l0) / L;
    double Fx = F * (xd - xc), Fy = F * (yd - yc);
    f[0] = mom - m2 * da * rr * v[1] * (v[1] + 2.0 * v[0]) * s2;
    f[1] = m2 * da * rr * v[0] * v[0] * s2;
    f[2] = Fx * (sc * c3 - sd * s3) + Fy * (sd * c3 + sc * s3);
    f[3] = m4 * zt * eea * v[4] * v[4] * c4;
    f[4] = -m4 * zt * eea * v[3] * (v[3] + 2.0 * v[4]) * c4;
    f[5] = -m6 * u * zffa * v[6] * v[6] * c6;
    f[6] = m6 * u * zffa * v[5] * (v[5] + 2.0 * v[6]) * c6;
    return MBS_OK;
}

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)pb, (void)t;
    double c1 = cos(q[0]), s1 = sin(q[0]), c12 = cos(q[0] + q[1]), s12 = sin(q[0] + q[1]);
    double cx = rr * c1 - d * c12, cy = rr * s1 - d * s12;
    g[0] = cx - ss * sin(q[2]) - xb;
    g[1] = cy + ss * cos(q[2]) - yb;
    g[2] = cx - e * sin(q[3] + q[4]) - zt * cos(q[4]) - xa;
    g[3] = cy + e * cos(q[3] + q[4]) - zt * sin(q[4]) - ya;
    g[4] = cx - zf * cos(q[5] + q[6]) - u * sin(q[6]) - xa;
    g[5] = cy - zf * sin(q[5] + q[6]) + u * cos(q[6]) - ya;
    return MBS_OK;
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)pb, (void)t;
    double s1 = sin(q[0]), c1 = cos(q[0]), s12 = sin(q[0] + q[1]), c12 = cos(q[0] + q[1]);
    double s45 = sin(q[3] + q[4]), c45 = cos(q[3] + q[4]);
    double s67 = sin(q[5] + q[6]), c67 = cos(q[5] + q[6]);
    /* before the library call below, so that each pair becomes one sincos */
    double s3 = sin(q[2]), c3 = cos(q[2]), s5 = sin(q[4]), c5 = cos(q[4]);
    double s7 = sin(q[6]), c7 = cos(q[6]);
    double g11 = -rr * s1 + d * s12, g12 = d * s12;
    double g21 = rr * c1 - d * c12, g22 = -d * c12;
    gsl_matrix_set_zero(G);
    for (size_t r = 0; r < 6; r += 2) {
        gsl_matrix_set(G, r, 0, g11);
        gsl_matrix_set(G, r, 1, g12);
        gsl_matrix_set(G, r + 1, 0, g21);
        gsl_matrix_set(G, r + 1, 1, g22);
    }
    gsl_matrix_set(G, 0, 2, -ss * c3);
    gsl_matrix_set(G, 1, 2, -ss * s3);
    gsl_matrix_set(G, 2, 3, -e * c45);
    gsl_matrix_set(G, 2, 4, -e * c45 + zt * s5);
    gsl_matrix_set(G, 3, 3, -e * s45);
    gsl_matrix_set(G, 3, 4, -e * s45 - zt * c5);
    gsl_matrix_set(G, 4, 5, zf * s67);
    gsl_matrix_set(G, 4, 6, zf * s67 - u * c7);
    gsl_matrix_set(G, 5, 5, -zf * c67);
    gsl_matrix_set(G, 5, 6, -zf * c67 - u * s7);
    return MBS_OK;
}

/* gamma = -(G v)_q v: minus the velocity-quadratic part of g'' ([arnold2016dae] Eq. (17)). */
static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)pb, (void)t;
    double w1 = v[0] * v[0], w12 = (v[0] + v[1]) * (v[0] + v[1]);
    double w3 = v[2] * v[2], w45 = (v[3] + v[4]) * (v[3] + v[4]), w5 = v[4] * v[4];
    double w67 = (v[5] + v[6]) * (v[5] + v[6]), w7 = v[6] * v[6];
    double c1 = cos(q[0]), s1 = sin(q[0]), c12 = cos(q[0] + q[1]), s12 = sin(q[0] + q[1]);
    double ax = rr * c1 * w1 - d * c12 * w12, ay = rr * s1 * w1 - d * s12 * w12;
    gam[0] = ax - ss * sin(q[2]) * w3;
    gam[1] = ay + ss * cos(q[2]) * w3;
    gam[2] = ax - e * sin(q[3] + q[4]) * w45 - zt * cos(q[4]) * w5;
    gam[3] = ay + e * cos(q[3] + q[4]) * w45 - zt * sin(q[4]) * w5;
    gam[4] = ax - zf * cos(q[5] + q[6]) * w67 - u * sin(q[6]) * w7;
    gam[5] = ay - zf * sin(q[5] + q[6]) * w67 + u * cos(q[6]) * w7;
    return MBS_OK;
}

/* ---- derivatives (problem.h), differentiated from force() and
 * jacobian() above; checked against central differences by tests/check_derivs.c */

static int force_q(const mbs_problem *pb, double t, const double *q, const double *v,
                   gsl_matrix *K)
{
    (void)pb, (void)t;
    double eea = e - ea, zffa = zf - fa;
    gsl_matrix_set_zero(K);
    double c2 = cos(q[1]);
    gsl_matrix_set(K, 0, 1, -m2 * da * rr * v[1] * (v[1] + 2.0 * v[0]) * c2);
    gsl_matrix_set(K, 1, 1, m2 * da * rr * v[0] * v[0] * c2);
    /* spring: f2 = F (a P + b Q), a, b = D - C, (P, Q) = dD/dq3, F = -c0 (1 - l0/L) */
    double s3 = sin(q[2]), c3 = cos(q[2]);
    double a = sd * c3 + sc * s3 + xb - xc, b = sd * s3 - sc * c3 + yb - yc;
    double P = sc * c3 - sd * s3, Q = sd * c3 + sc * s3;
    double L = sqrt(a * a + b * b), F = -c0 * (L - l0) / L, dL = (a * P + b * Q) / L;
    double dF = -c0 * l0 / (L * L) * dL;
    gsl_matrix_set(K, 2, 2, dF * (a * P + b * Q) + F * (P * P + Q * Q - a * Q + b * P));
    double s4 = sin(q[3]), s6 = sin(q[5]);
    gsl_matrix_set(K, 3, 3, -m4 * zt * eea * v[4] * v[4] * s4);
    gsl_matrix_set(K, 4, 3, m4 * zt * eea * v[3] * (v[3] + 2.0 * v[4]) * s4);
    gsl_matrix_set(K, 5, 5, m6 * u * zffa * v[6] * v[6] * s6);
    gsl_matrix_set(K, 6, 5, -m6 * u * zffa * v[5] * (v[5] + 2.0 * v[6]) * s6);
    return MBS_OK;
}

static int force_v(const mbs_problem *pb, double t, const double *q, const double *v,
                   gsl_matrix *D)
{
    (void)pb, (void)t;
    double eea = e - ea, zffa = zf - fa;
    double k0 = m2 * da * rr * sin(q[1]), k3 = m4 * zt * eea * cos(q[3]),
           k5 = m6 * u * zffa * cos(q[5]);
    gsl_matrix_set_zero(D);
    gsl_matrix_set(D, 0, 0, -2.0 * k0 * v[1]);
    gsl_matrix_set(D, 0, 1, -2.0 * k0 * (v[1] + v[0]));
    gsl_matrix_set(D, 1, 0, 2.0 * k0 * v[0]);
    gsl_matrix_set(D, 3, 4, 2.0 * k3 * v[4]);
    gsl_matrix_set(D, 4, 3, -2.0 * k3 * (v[3] + v[4]));
    gsl_matrix_set(D, 4, 4, -2.0 * k3 * v[3]);
    gsl_matrix_set(D, 5, 6, -2.0 * k5 * v[6]);
    gsl_matrix_set(D, 6, 5, 2.0 * k5 * (v[5] + v[6]));
    gsl_matrix_set(D, 6, 6, 2.0 * k5 * v[5]);
    return MBS_OK;
}

/* dG[i][k][j] = d G_ik / d q_j (6 x 7 x 7). */
static void jacobian_q(const double *q, double dG[6][7][7])
{
    memset(dG, 0, 6 * 7 * 7 * sizeof(double));
    double s1 = sin(q[0]), c1 = cos(q[0]), s12 = sin(q[0] + q[1]), c12 = cos(q[0] + q[1]);
    double s45 = sin(q[3] + q[4]), c45 = cos(q[3] + q[4]);
    double s67 = sin(q[5] + q[6]), c67 = cos(q[5] + q[6]);
    for (size_t r = 0; r < 6; r += 2) {
        dG[r][0][0] = -rr * c1 + d * c12; /* G_r0 = -rr s1 + d s12 */
        dG[r][0][1] = d * c12;
        dG[r][1][0] = dG[r][1][1] = d * c12; /* G_r1 = d s12 */
        dG[r + 1][0][0] = -rr * s1 + d * s12; /* G_r+1,0 = rr c1 - d c12 */
        dG[r + 1][0][1] = d * s12;
        dG[r + 1][1][0] = dG[r + 1][1][1] = d * s12; /* G_r+1,1 = -d c12 */
    }
    dG[0][2][2] = ss * sin(q[2]);
    dG[1][2][2] = -ss * cos(q[2]);
    dG[2][3][3] = dG[2][3][4] = e * s45;
    dG[2][4][3] = e * s45;
    dG[2][4][4] = e * s45 + zt * cos(q[4]);
    dG[3][3][3] = dG[3][3][4] = -e * c45;
    dG[3][4][3] = -e * c45;
    dG[3][4][4] = -e * c45 + zt * sin(q[4]);
    dG[4][5][5] = dG[4][5][6] = zf * c67;
    dG[4][6][5] = zf * c67;
    dG[4][6][6] = zf * c67 + u * sin(q[6]);
    dG[5][5][5] = dG[5][5][6] = zf * s67;
    dG[5][6][5] = zf * s67;
    dG[5][6][6] = zf * s67 - u * cos(q[6]);
}

static int gtlambda_q(const mbs_problem *pb, double t, const double *q, const double *lam,
                      gsl_matrix *K)
{
    (void)pb, (void)t;
    double dG[6][7][7];
    jacobian_q(q, dG);
    for (size_t k = 0; k < 7; k++)
        for (size_t j = 0; j < 7; j++) {
            double s = 0.0;
            for (size_t i = 0; i < 6; i++)
                s += lam[i] * dG[i][k][j];
            gsl_matrix_set(K, k, j, s);
        }
    return MBS_OK;
}

static int gw_q(const mbs_problem *pb, double t, const double *q, const double *w,
                gsl_matrix *Z)
{
    (void)pb, (void)t;
    double dG[6][7][7];
    jacobian_q(q, dG);
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 7; j++) {
            double s = 0.0;
            for (size_t k = 0; k < 7; k++)
                s += dG[i][k][j] * w[k];
            gsl_matrix_set(Z, i, j, s);
        }
    return MBS_OK;
}

/* Published order: q, q', q'' = M^-1 (f - G^T lambda), lambda (27 values). */
static int published(const mbs_problem *pb, double t, const double *y, double *out, size_t *n)
{
    *n = 27;
    if (!out)
        return MBS_OK;
    const double *q = y, *v = y + 7, *lam = y + 14;
    double Md[49], Gd[42], f[7];
    gsl_matrix_view M = gsl_matrix_view_array(Md, 7, 7);
    gsl_matrix_view G = gsl_matrix_view_array(Gd, 6, 7);
    mass(pb, t, q, &M.matrix);
    force(pb, t, q, v, f);
    jacobian(pb, t, q, &G.matrix);
    for (size_t i = 0; i < 7; i++)
        for (size_t k = 0; k < 6; k++)
            f[i] -= gsl_matrix_get(&G.matrix, k, i) * lam[k];
    gsl_vector_view fv = gsl_vector_view_array(f, 7);
    if (gsl_linalg_cholesky_decomp1(&M.matrix) != 0 ||
        gsl_linalg_cholesky_svx(&M.matrix, &fv.vector) != 0)
        return MBS_SINGULAR_MATRIX;
    memcpy(out, q, 7 * sizeof(double));
    memcpy(out + 7, v, 7 * sizeof(double));
    memcpy(out + 14, f, 7 * sizeof(double));
    memcpy(out + 21, lam, 6 * sizeof(double));
    return MBS_OK;
}

static const size_t scd_components[] = {0, 1, 2, 3, 4, 5, 6};

/* IFToMM A03 (`andrews-iftomm`): the point F at the tip of the crank OF, F = rr (cos beta,
 * sin beta) from O, whose displacements the public OpenSim port of the library
 * (RehabEngGroup, MBSbenchmarksInOpenSim, A03) compares with the library's reference. */
static const char *const iftomm_reported_names[] = {"x_F", "y_F", NULL};

static int iftomm_reported(const mbs_problem *pb, double t, const double *q, const double *v,
                           double *out)
{
    (void)pb, (void)t, (void)v;
    out[0] = rr * cos(q[0]);
    out[1] = rr * sin(q[0]);
    return MBS_OK;
}

/* The fields both registered definitions share: the Test Set's model as published. */
#define ANDREWS_MODEL                                                                            \
    .flags = 0, .index = 3, .t0 = 0.0, .params = NULL, .n_params = 0, .dims = dims,            \
    .initial = initial, .mass = mass, .force = force, .constraint = constraint,                \
    .jacobian = jacobian, .gamma = gamma_fn, .published = published,                           \
    .published_scd = scd_components,                                                           \
    .n_published_scd = sizeof scd_components / sizeof scd_components[0], .force_q = force_q,   \
    .force_v = force_v, .gtlambda_q = gtlambda_q, .gw_q = gw_q

const mbs_problem_def mbs_problem_andrews = {
    .name = "andrews",
    .title = "Andrews' squeezing mechanism (Test Set for IVP Solvers 2.4, index 3)",
    .citation = "Test Set 2.4 problem II-13 (andrews.F rev. 1.2); Hairer & Wanner II, "
                "Sect. VII.7; Mazzia & Magherini 2008 [testset24]",
    .reference = "problems/ref/andrews.ref (index1/rk8pd vs index1/dopri5, tol 1e-13, see its "
                 "provenance); agrees with the Test Set's PSIDE reference to scd 9.6 on q",
    .t_end = 0.03,
    ANDREWS_MODEL,
};

/* IFToMM A03: the same model over the library's 0.05 s (docs/problems.md, "IFToMM
 * benchmark problems", names the sources), reporting F on 100 output steps. */
const mbs_problem_def mbs_problem_andrews_iftomm = {
    .name = "andrews-iftomm",
    .title = "Andrews' squeezing mechanism over 0.05 s, point F reported (IFToMM A03)",
    .citation = "IFToMM benchmark A03, González, Dopico, Lugrís and Cuadrado 2006 "
                "[gonzalez2006benchmarking]; the model of Test Set 2.4 problem II-13 [testset24]",
    .reference = "stored trajectory problems/ref/andrews-iftomm.traj (see its provenance); at "
                 "t = 0.03 it agrees with the Test Set's published reference",
    .t_end = 0.05,
    .output_steps = 100,
    .reported_names = iftomm_reported_names,
    .reported = iftomm_reported,
    ANDREWS_MODEL,
};
