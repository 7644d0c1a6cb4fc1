/* Closed-loop mechanisms of [dca_augmented_lagrangian], Sects. 4.1-4.3: the five-bar mechanism
 * (one pentagonal loop, bodies 1-4 and the ground) and the double-loop
 * mechanism (two pentagonal loops sharing body 3, bodies 1-8), every joint
 * revolute with its axis normal to the plane of motion.  All bars have length
 * a = 0.2 m, mass m = 1 kg, central inertia J' = diag(0.25) kg m^2 (Sect. 4.1);
 * released at rest under gravity, 10 s.
 *
 * Geometry (the paper's Figs. 4 and 8 are missing from the extraction, so this
 * is our reconstruction from the text): the joints sit at the apexes of a
 * regular pentagon of side a; the ground link joins apexes P1 = (0, 0) and
 * P5 = (a, 0); body k joins P_k and P_{k+1} (k = 1..4).  For the double loop
 * the second pentagon is the mirror image of the first in body 3's side P3-P4;
 * body 3 carries joints 3 and 4 (upper loop) and 6 and 10 (lower loop), bodies
 * 5-8 run P4 -> R1 -> R2 -> R3 -> P3 (joints 6..10).  Parameter `hang` (default
 * 1) puts the pentagon below its ground link, so that the second loop hangs
 * below the first (Sect. 4.3's "upper" and "lower" loops); hang=0 stands it on
 * the ground link.  Gravity acts along -y.
 *
 * Singular configurations: with every bar and the ground link of length a, the
 * constraint Jacobian of a pentagonal loop loses rank only when its five joints
 * are collinear, which would need four steps of +-a to add up to a: impossible.
 * So, unlike the paper's Fig. 4 suggests for its geometry, our mechanisms never
 * pass a singular configuration (besides the permanent redundancy of the
 * spatial joints); measured smallest singular value of the planar G along the
 * 10 s motions >= 0.04 (bars of 0.2 m), so MBS_PB_SINGULAR_CONFIG is not set.
 * The standing five-bar (hang=0) is chaotic: index1/rk8pd and index1/dopri5 at
 * tol 1e-13 agree to 8 digits up to t = 4 s, to none at 10 s (no reference).
 *
 * Two formulations, one problem each:
 *  - planar (fivebar, doubleloop): body coordinates (x, y, theta) per body, two
 *    equations per revolute joint; full rank away from singular configurations
 *    (five-bar: 12 coordinates, 10 constraints, 2 degrees of freedom);
 *  - spatial (fivebar3d, doubleloop3d), as in the paper: body coordinates
 *    q_i = (r_i, p_i) with Euler parameters p_i (Sect. 2), velocities
 *    v_i = (r_i', omega'_i) with body-frame angular velocity, kinematic matrix
 *    p_i' = 1/2 [-e^T; e0 I + e~] omega'_i, revolute joints with five equations
 *    each (spherical part and two perpendicularity conditions), plus one
 *    normalisation constraint p_i^T p_i = 1 per body.  Mobility count
 *    6*4 - 5*5 = -1 for the five-bar with 2 true degrees of freedom: three
 *    redundant joint equations (six for the double loop: 6*8 - 5*10 = -2 with 4
 *    degrees of freedom).  The normalisation rows of B = G H vanish identically
 *    (the kinematic matrix preserves |p|), so rank B = n_lambda - 3 - n_bodies
 *    (five-bar) resp. n_lambda - 6 - n_bodies (double loop).  With the
 *    isotropic inertia the gyroscopic term omega' x J' omega' vanishes.
 * Multipliers at t0 are the minimum-norm solution of the index-1 system (SVD),
 * so they are defined for the redundant formulations too. */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_math.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/gslalloc.h"
#include "../core/status.h"
#include "problem.h"

enum { P_A, P_M, P_J, P_G, P_HANG };

#define LOOP_PARAMS(hang_default)                                                        \
    {                                                                                    \
        [P_A] = {"a", 0.2, 1e-3, 1e3, "bar length = pentagon side [m]", NULL, 0},         \
        [P_M] = {"m", 1.0, 1e-6, 1e6, "mass of each bar [kg]", NULL, 0},                  \
        [P_J] = {"J", 0.25, 1e-9, 1e6, "central moment of inertia of each bar [kg m^2]",  \
                 NULL, 0},                                                               \
        [P_G] = {"g", 9.81, 0.0, 1e3, "gravitational acceleration along -y [m/s^2]",      \
                 NULL, 0},                                                               \
        [P_HANG] = {"hang", hang_default, 0, 1,                                          \
                    "pentagon above (0, chaotic) or below (1) its ground link", NULL, 1},         \
    }

static const mbs_param_def params_fivebar[] = LOOP_PARAMS(1);
static const mbs_param_def params_doubleloop[] = LOOP_PARAMS(1);

#define PAR(i) mbs_pb_param(pb, i)

/* ---- topology ------------------------------------------------------------ */

enum { MAX_BODIES = 8, MAX_JOINTS = 10, MAX_VERT = 8 };

typedef struct topology {
    size_t nb, nj;
    int body[MAX_BODIES][2];  /* vertex at the bar's end -a/2 and +a/2 */
    int joint[MAX_JOINTS][4]; /* body A (1-based, 0 = ground), end of A (0: -a/2,
                                 1: +a/2), body B, end of B */
} topology;

static const topology topo_fivebar = {
    .nb = 4,
    .nj = 5,
    .body = {{0, 1}, {1, 2}, {2, 3}, {3, 4}},
    .joint = {{0, 0, 1, 0}, {1, 1, 2, 0}, {2, 1, 3, 0}, {3, 1, 4, 0}, {4, 1, 0, 0}},
};

static const topology topo_doubleloop = {
    .nb = 8,
    .nj = 10,
    .body = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {3, 5}, {5, 6}, {6, 7}, {7, 2}},
    .joint = {{0, 0, 1, 0},
              {1, 1, 2, 0},
              {2, 1, 3, 0},
              {3, 1, 4, 0},
              {4, 1, 0, 0},
              {3, 1, 5, 0},
              {5, 1, 6, 0},
              {6, 1, 7, 0},
              {7, 1, 8, 0},
              {8, 1, 3, 0}},
};

typedef struct loops {
    const topology *tp;
    int spatial;
    double a, m, J, g;
    double vert[MAX_VERT][2];
    double ground[MAX_JOINTS][2]; /* fixed joint position where a body meets ground */
} loops;

static const loops *L_(const mbs_problem *pb)
{
    return pb->data;
}

/* Local position of an end of a bar (along the body x axis). */
static double end_x(const loops *d, int end)
{
    return end ? 0.5 * d->a : -0.5 * d->a;
}

static int setup_common(mbs_problem *pb, const topology *tp, int spatial, char *err,
                        size_t errlen)
{
    (void)err, (void)errlen;
    loops *d = calloc(1, sizeof *d);
    if (!d)
        return MBS_NO_MEMORY;
    d->tp = tp;
    d->spatial = spatial;
    d->a = PAR(P_A);
    d->m = PAR(P_M);
    d->J = PAR(P_J);
    d->g = PAR(P_G);
    /* Regular pentagon of side a on P1 = (0,0), P5 = (a,0): circumradius
     * R = a / (2 sin 36deg), apex angles 234deg - 72deg (k - 1) about the centre. */
    double a = d->a, R = a / (2.0 * sin(M_PI / 5.0));
    double cx = 0.5 * a, cy = R * cos(M_PI / 5.0);
    for (int k = 0; k < 5; k++) {
        double phi = (234.0 - 72.0 * k) * M_PI / 180.0;
        d->vert[k][0] = cx + R * cos(phi);
        d->vert[k][1] = cy + R * sin(phi);
    }
    d->vert[0][0] = d->vert[0][1] = d->vert[4][1] = 0.0; /* exact */
    d->vert[4][0] = a;
    /* Second pentagon: mirror images of P5, P1, P2 in the line P3-P4. */
    const double *p3 = d->vert[2], *p4 = d->vert[3];
    double ux = p4[0] - p3[0], uy = p4[1] - p3[1], un = hypot(ux, uy);
    ux /= un, uy /= un;
    const int src[3] = {4, 0, 1};
    for (int k = 0; k < 3; k++) {
        double rx = d->vert[src[k]][0] - p3[0], ry = d->vert[src[k]][1] - p3[1];
        double s = rx * ux + ry * uy;
        d->vert[5 + k][0] = p3[0] + 2.0 * s * ux - rx;
        d->vert[5 + k][1] = p3[1] + 2.0 * s * uy - ry;
    }
    if (PAR(P_HANG) != 0.0)
        for (int k = 0; k < MAX_VERT; k++)
            d->vert[k][1] = -d->vert[k][1];
    for (size_t j = 0; j < tp->nj; j++) {
        int b = tp->joint[j][0] ? tp->joint[j][0] : tp->joint[j][2];
        int e = tp->joint[j][0] ? tp->joint[j][1] : tp->joint[j][3];
        const double *v = d->vert[tp->body[b - 1][e]];
        d->ground[j][0] = v[0];
        d->ground[j][1] = v[1];
    }
    pb->data = d;
    return MBS_OK;
}

static void teardown(mbs_problem *pb)
{
    free(pb->data);
    pb->data = NULL;
}

static int setup_fivebar(mbs_problem *pb, char *err, size_t errlen)
{
    return setup_common(pb, &topo_fivebar, 0, err, errlen);
}
static int setup_doubleloop(mbs_problem *pb, char *err, size_t errlen)
{
    return setup_common(pb, &topo_doubleloop, 0, err, errlen);
}
static int setup_fivebar3d(mbs_problem *pb, char *err, size_t errlen)
{
    return setup_common(pb, &topo_fivebar, 1, err, errlen);
}
static int setup_doubleloop3d(mbs_problem *pb, char *err, size_t errlen)
{
    return setup_common(pb, &topo_doubleloop, 1, err, errlen);
}

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    const loops *d = L_(pb);
    size_t nb = d->tp->nb, nj = d->tp->nj;
    if (d->spatial) {
        *nq = 7 * nb;
        *nv = 6 * nb;
        *nl = 5 * nj + nb;
    } else {
        *nq = 3 * nb;
        *nv = 3 * nb;
        *nl = 2 * nj;
    }
    return MBS_OK;
}

/* ---- planar formulation ---------------------------------------------------- */

/* Global position of the end `e` of body b (1-based) and R'(theta) s. */
static void planar_point(const loops *d, const double *q, int b, int e, double *p, double *dp)
{
    const double *qb = q + 3 * (b - 1);
    double s = end_x(d, e), c = cos(qb[2]), sn = sin(qb[2]);
    p[0] = qb[0] + c * s;
    p[1] = qb[1] + sn * s;
    if (dp) {
        dp[0] = -sn * s;
        dp[1] = c * s;
    }
}

static int planar_g(const mbs_problem *pb, const double *q, double *g)
{
    const loops *d = L_(pb);
    for (size_t j = 0; j < d->tp->nj; j++) {
        const int *jt = d->tp->joint[j];
        double pa[2], pbp[2];
        if (jt[0])
            planar_point(d, q, jt[0], jt[1], pa, NULL);
        else
            pa[0] = d->ground[j][0], pa[1] = d->ground[j][1];
        if (jt[2])
            planar_point(d, q, jt[2], jt[3], pbp, NULL);
        else
            pbp[0] = d->ground[j][0], pbp[1] = d->ground[j][1];
        g[2 * j] = pa[0] - pbp[0];
        g[2 * j + 1] = pa[1] - pbp[1];
    }
    return MBS_OK;
}

static int planar_G(const mbs_problem *pb, const double *q, gsl_matrix *G)
{
    const loops *d = L_(pb);
    gsl_matrix_set_zero(G);
    for (size_t j = 0; j < d->tp->nj; j++) {
        const int *jt = d->tp->joint[j];
        for (int side = 0; side < 2; side++) {
            int b = jt[2 * side], e = jt[2 * side + 1];
            if (!b)
                continue;
            double sg = side ? -1.0 : 1.0, p[2], dp[2];
            size_t c = 3 * (size_t)(b - 1);
            planar_point(d, q, b, e, p, dp);
            gsl_matrix_set(G, 2 * j, c, sg);
            gsl_matrix_set(G, 2 * j + 1, c + 1, sg);
            gsl_matrix_set(G, 2 * j, c + 2, sg * dp[0]);
            gsl_matrix_set(G, 2 * j + 1, c + 2, sg * dp[1]);
        }
    }
    return MBS_OK;
}

/* gamma = R(theta_A) s_A theta_A'^2 - R(theta_B) s_B theta_B'^2 per joint. */
static int planar_gamma(const mbs_problem *pb, const double *q, const double *v, double *gam)
{
    const loops *d = L_(pb);
    for (size_t j = 0; j < d->tp->nj; j++) {
        const int *jt = d->tp->joint[j];
        gam[2 * j] = gam[2 * j + 1] = 0.0;
        for (int side = 0; side < 2; side++) {
            int b = jt[2 * side], e = jt[2 * side + 1];
            if (!b)
                continue;
            const double *qb = q + 3 * (b - 1);
            double s = end_x(d, e), w2 = v[3 * (b - 1) + 2] * v[3 * (b - 1) + 2];
            double sg = side ? -1.0 : 1.0;
            gam[2 * j] += sg * cos(qb[2]) * s * w2;
            gam[2 * j + 1] += sg * sin(qb[2]) * s * w2;
        }
    }
    return MBS_OK;
}

/* ---- spatial formulation with Euler parameters ------------------------------ */


static void cross(const double *a, const double *b, double *c)
{
    double c0 = a[1] * b[2] - a[2] * b[1], c1 = a[2] * b[0] - a[0] * b[2],
           c2 = a[0] * b[1] - a[1] * b[0];
    c[0] = c0, c[1] = c1, c[2] = c2;
}

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* A(p) s = (e0^2 - e.e) s + 2 e (e.s) + 2 e0 (e x s): the rotation s -> p s p*. */
static void rot(const double *p, const double *s, double *out)
{
    const double *e = p + 1;
    double exs[3], es = dot3(e, s), k = p[0] * p[0] - dot3(e, e);
    cross(e, s, exs);
    for (int i = 0; i < 3; i++)
        out[i] = k * s[i] + 2.0 * e[i] * es + 2.0 * p[0] * exs[i];
}

/* D = d(A(p) s)/dp (3 x 4): [2 (e0 s + e x s), 2 (-s e^T + e s^T + (e.s) I - e0 s~)]. */
static void rot_dp(const double *p, const double *s, double D[3][4])
{
    const double *e = p + 1;
    double exs[3], es = dot3(e, s);
    cross(e, s, exs);
    /* s~ x = s x x; (s~)_{ij} */
    const double st[3][3] = {{0, -s[2], s[1]}, {s[2], 0, -s[0]}, {-s[1], s[0], 0}};
    for (int i = 0; i < 3; i++) {
        D[i][0] = 2.0 * (p[0] * s[i] + exs[i]);
        for (int j = 0; j < 3; j++)
            D[i][1 + j] = 2.0 * (-s[i] * e[j] + e[i] * s[j] + (i == j ? es : 0.0) -
                                 p[0] * st[i][j]);
    }
}

static const double *pos_of(const double *q, int b)
{
    return q + 7 * (b - 1);
}
static const double *eul_of(const double *q, int b)
{
    return q + 7 * (b - 1) + 3;
}
static const double *omega_of(const double *v, int b)
{
    return v + 6 * (b - 1) + 3;
}

static const double ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};

/* Body-fixed vector s of body b in global coordinates (ground: s itself). */
static void glob(const double *q, int b, const double *s, double *out)
{
    if (b)
        rot(eul_of(q, b), s, out);
    else
        memcpy(out, s, 3 * sizeof(double));
}

static void joint_point(const loops *d, const double *q, size_t j, int side, double *p)
{
    const int *jt = d->tp->joint[j];
    int b = jt[2 * side];
    if (!b) {
        p[0] = d->ground[j][0], p[1] = d->ground[j][1], p[2] = 0.0;
        return;
    }
    double s[3] = {end_x(d, jt[2 * side + 1]), 0, 0}, as[3];
    rot(eul_of(q, b), s, as);
    for (int i = 0; i < 3; i++)
        p[i] = pos_of(q, b)[i] + as[i];
}

static int spatial_g(const mbs_problem *pb, const double *q, double *g)
{
    const loops *d = L_(pb);
    size_t nj = d->tp->nj;
    for (size_t j = 0; j < nj; j++) {
        const int *jt = d->tp->joint[j];
        double pa[3], pbp[3], za[3], xb[3], yb[3];
        joint_point(d, q, j, 0, pa);
        joint_point(d, q, j, 1, pbp);
        glob(q, jt[0], ez, za);
        glob(q, jt[2], ex, xb);
        glob(q, jt[2], ey, yb);
        for (int i = 0; i < 3; i++)
            g[5 * j + i] = pa[i] - pbp[i];
        g[5 * j + 3] = dot3(za, xb);
        g[5 * j + 4] = dot3(za, yb);
    }
    for (size_t b = 1; b <= d->tp->nb; b++) {
        const double *p = eul_of(q, (int)b);
        g[5 * nj + b - 1] = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3] - 1.0;
    }
    return MBS_OK;
}

static int spatial_G(const mbs_problem *pb, const double *q, gsl_matrix *G)
{
    const loops *d = L_(pb);
    size_t nj = d->tp->nj;
    gsl_matrix_set_zero(G);
    for (size_t j = 0; j < nj; j++) {
        const int *jt = d->tp->joint[j];
        for (int side = 0; side < 2; side++) {
            int b = jt[2 * side];
            if (!b)
                continue;
            double sg = side ? -1.0 : 1.0, D[3][4];
            double s[3] = {end_x(d, jt[2 * side + 1]), 0, 0};
            size_t c = 7 * (size_t)(b - 1);
            rot_dp(eul_of(q, b), s, D);
            for (size_t i = 0; i < 3; i++) {
                gsl_matrix_set(G, 5 * j + i, c + i, sg);
                for (size_t k = 0; k < 4; k++)
                    gsl_matrix_set(G, 5 * j + i, c + 3 + k, sg * D[i][k]);
            }
        }
        /* (A_A z).(A_B x) and (A_A z).(A_B y). */
        int A = jt[0], B = jt[2];
        double za[3], xb[3], yb[3];
        glob(q, A, ez, za);
        glob(q, B, ex, xb);
        glob(q, B, ey, yb);
        const double *other[2] = {xb, yb}, *loc[2] = {ex, ey};
        for (size_t r = 0; r < 2; r++) {
            double D[3][4];
            if (A) {
                rot_dp(eul_of(q, A), ez, D);
                for (size_t k = 0; k < 4; k++)
                    gsl_matrix_set(G, 5 * j + 3 + r, 7 * (size_t)(A - 1) + 3 + k,
                                   other[r][0] * D[0][k] + other[r][1] * D[1][k] +
                                       other[r][2] * D[2][k]);
            }
            if (B) {
                rot_dp(eul_of(q, B), loc[r], D);
                for (size_t k = 0; k < 4; k++)
                    gsl_matrix_set(G, 5 * j + 3 + r, 7 * (size_t)(B - 1) + 3 + k,
                                   za[0] * D[0][k] + za[1] * D[1][k] + za[2] * D[2][k]);
            }
        }
    }
    for (size_t b = 0; b < d->tp->nb; b++)
        for (size_t k = 0; k < 4; k++)
            gsl_matrix_set(G, 5 * nj + b, 7 * b + 3 + k, 2.0 * q[7 * b + 3 + k]);
    return MBS_OK;
}

/* H = blockdiag(I3, 1/2 [-e^T; e0 I + e~]): p' = 1/2 p (x) (0, omega'). */
static int spatial_H(const mbs_problem *pb, const double *q, gsl_matrix *H)
{
    const loops *d = L_(pb);
    gsl_matrix_set_zero(H);
    for (size_t b = 0; b < d->tp->nb; b++) {
        const double *p = q + 7 * b + 3;
        size_t r = 7 * b, c = 6 * b;
        for (size_t i = 0; i < 3; i++)
            gsl_matrix_set(H, r + i, c + i, 1.0);
        const double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
        const double Hp[4][3] = {{-e1, -e2, -e3}, {e0, -e3, e2}, {e3, e0, -e1}, {-e2, e1, e0}};
        for (size_t i = 0; i < 4; i++)
            for (size_t k = 0; k < 3; k++)
                gsl_matrix_set(H, r + 3 + i, c + 3 + k, 0.5 * Hp[i][k]);
    }
    return MBS_OK;
}

/* A (w x (w x s)) and A (w x s) for body b with body-frame angular velocity w
 * (zero for the ground). */
static void spin_terms(const double *q, const double *v, int b, const double *s, double *cen,
                       double *vel)
{
    if (!b) {
        cen[0] = cen[1] = cen[2] = 0.0;
        vel[0] = vel[1] = vel[2] = 0.0;
        return;
    }
    const double *w = omega_of(v, b);
    double ws[3], wws[3];
    cross(w, s, ws);
    cross(w, ws, wws);
    rot(eul_of(q, b), wws, cen);
    rot(eul_of(q, b), ws, vel);
}

static int spatial_gamma(const mbs_problem *pb, const double *q, const double *v, double *gam)
{
    const loops *d = L_(pb);
    size_t nj = d->tp->nj;
    for (size_t j = 0; j < nj; j++) {
        const int *jt = d->tp->joint[j];
        int A = jt[0], B = jt[2];
        double sa[3] = {end_x(d, jt[1]), 0, 0}, sb[3] = {end_x(d, jt[3]), 0, 0};
        double ca[3], cb[3], va[3], vb[3];
        spin_terms(q, v, A, sa, ca, va);
        spin_terms(q, v, B, sb, cb, vb);
        /* spherical part: -A_A w x (w x s_A) + A_B w x (w x s_B) */
        for (int i = 0; i < 3; i++)
            gam[5 * j + i] = -ca[i] + cb[i];
        /* perpendicularity: -(z_A'' . u_B + 2 z_A' . u_B' + z_A . u_B'') without the
         * angular-acceleration terms. */
        double za[3], cza[3], vza[3];
        glob(q, A, ez, za);
        spin_terms(q, v, A, ez, cza, vza);
        const double *loc[2] = {ex, ey};
        for (int r = 0; r < 2; r++) {
            double u[3], cu[3], vu[3];
            glob(q, B, loc[r], u);
            spin_terms(q, v, B, loc[r], cu, vu);
            gam[5 * j + 3 + r] = -(dot3(cza, u) + 2.0 * dot3(vza, vu) + dot3(za, cu));
        }
    }
    for (size_t b = 0; b < d->tp->nb; b++)
        gam[5 * nj + b] = 0.0; /* B rows of the normalisation vanish identically */
    return MBS_OK;
}

/* ---- callbacks shared by both formulations ---------------------------------- */

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)t;
    return L_(pb)->spatial ? spatial_g(pb, q, g) : planar_g(pb, q, g);
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)t;
    return L_(pb)->spatial ? spatial_G(pb, q, G) : planar_G(pb, q, G);
}

static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)t;
    return L_(pb)->spatial ? spatial_gamma(pb, q, v, gam) : planar_gamma(pb, q, v, gam);
}

static int mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)t, (void)q;
    const loops *d = L_(pb);
    size_t per = d->spatial ? 6 : 3, nt = d->spatial ? 3 : 2;
    gsl_matrix_set_zero(M);
    for (size_t b = 0; b < d->tp->nb; b++)
        for (size_t i = 0; i < per; i++)
            gsl_matrix_set(M, per * b + i, per * b + i, i < nt ? d->m : d->J);
    return MBS_OK;
}

/* Gravity along -y; no gyroscopic term (isotropic J'). */
static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)t, (void)q, (void)v;
    const loops *d = L_(pb);
    size_t per = d->spatial ? 6 : 3;
    for (size_t b = 0; b < d->tp->nb; b++)
        for (size_t i = 0; i < per; i++)
            f[per * b + i] = i == 1 ? -d->m * d->g : 0.0;
    return MBS_OK;
}

static double energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    (void)t;
    const loops *d = L_(pb);
    size_t per = d->spatial ? 6 : 3, nt = d->spatial ? 3 : 2, pq = d->spatial ? 7 : 3;
    double E = 0.0;
    for (size_t b = 0; b < d->tp->nb; b++) {
        for (size_t i = 0; i < per; i++) {
            double w = v[per * b + i];
            E += 0.5 * (i < nt ? d->m : d->J) * w * w;
        }
        E += d->m * d->g * q[pq * b + 1];
    }
    return E;
}

/* Minimum-norm multipliers of the index-1 system at (q, v):
 * (B M^-1 B^T) lambda = B M^-1 f - gamma, pseudo-inverse by SVD (cut-off
 * 1e-10 relative to the largest singular value). */
static int min_norm_lambda(const mbs_problem *pb, const double *q, const double *v,
                           double *lambda)
{
    size_t nq = pb->nq, nv = pb->nv, nl = pb->nl;
    int s = MBS_NO_MEMORY;
    gsl_matrix *G = mbs_matrix_alloc(nl, nq), *H = mbs_matrix_alloc(nq, nv);
    gsl_matrix *B = mbs_matrix_alloc(nl, nv), *BM = mbs_matrix_alloc(nl, nv);
    gsl_matrix *S = mbs_matrix_alloc(nl, nl), *V = mbs_matrix_alloc(nl, nl);
    gsl_matrix *M = mbs_matrix_alloc(nv, nv);
    gsl_vector *sv = gsl_vector_alloc(nl), *work = gsl_vector_alloc(nl);
    gsl_vector *rhs = gsl_vector_alloc(nl), *tmp = gsl_vector_alloc(nl);
    double *f = malloc(nv * sizeof *f), *gam = malloc(nl * sizeof *gam);
    if (!G || !H || !B || !BM || !S || !V || !M || !sv || !work || !rhs || !tmp || !f || !gam)
        goto done;
    jacobian(pb, pb->t0, q, G);
    if (L_(pb)->spatial)
        spatial_H(pb, q, H);
    else
        gsl_matrix_set_identity(H);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, G, H, 0.0, B);
    mass(pb, pb->t0, q, M);
    force(pb, pb->t0, q, v, f);
    gamma_fn(pb, pb->t0, q, v, gam);
    gsl_matrix_memcpy(BM, B);
    for (size_t j = 0; j < nv; j++) {
        gsl_vector_view col = gsl_matrix_column(BM, j);
        gsl_vector_scale(&col.vector, 1.0 / gsl_matrix_get(M, j, j)); /* M is diagonal */
    }
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, BM, B, 0.0, S);
    for (size_t i = 0; i < nl; i++) {
        double r = -gam[i];
        for (size_t j = 0; j < nv; j++)
            r += gsl_matrix_get(BM, i, j) * f[j];
        gsl_vector_set(rhs, i, r);
    }
    if (gsl_linalg_SV_decomp(S, V, sv, work) != 0) {
        s = MBS_SINGULAR_MATRIX;
        goto done;
    }
    /* lambda = V diag(1/sigma) U^T rhs over sigma > cut. */
    double cut = 1e-10 * gsl_vector_get(sv, 0);
    gsl_blas_dgemv(CblasTrans, 1.0, S, rhs, 0.0, tmp);
    for (size_t i = 0; i < nl; i++) {
        double sg = gsl_vector_get(sv, i);
        gsl_vector_set(tmp, i, sg > cut ? gsl_vector_get(tmp, i) / sg : 0.0);
    }
    gsl_vector_view lam = gsl_vector_view_array(lambda, nl);
    gsl_blas_dgemv(CblasNoTrans, 1.0, V, tmp, 0.0, &lam.vector);
    s = MBS_OK;
done:
    gsl_matrix_free(G);
    gsl_matrix_free(H);
    gsl_matrix_free(B);
    gsl_matrix_free(BM);
    gsl_matrix_free(S);
    gsl_matrix_free(V);
    gsl_matrix_free(M);
    gsl_vector_free(sv);
    gsl_vector_free(work);
    gsl_vector_free(rhs);
    gsl_vector_free(tmp);
    free(f);
    free(gam);
    return s;
}

/* Bars on the pentagon's sides, at rest ([dca_augmented_lagrangian] Sects. 4.2-4.3). */
static int initial(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                   int *have_lambda)
{
    const loops *d = L_(pb);
    for (size_t b = 0; b < d->tp->nb; b++) {
        const double *p = d->vert[d->tp->body[b][0]], *r = d->vert[d->tp->body[b][1]];
        double x = 0.5 * (p[0] + r[0]), y = 0.5 * (p[1] + r[1]);
        double th = atan2(r[1] - p[1], r[0] - p[0]);
        if (d->spatial) {
            double *qb = q0 + 7 * b;
            qb[0] = x, qb[1] = y, qb[2] = 0.0;
            qb[3] = cos(0.5 * th), qb[4] = 0.0, qb[5] = 0.0, qb[6] = sin(0.5 * th);
        } else {
            double *qb = q0 + 3 * b;
            qb[0] = x, qb[1] = y, qb[2] = th;
        }
    }
    for (size_t i = 0; i < pb->nv; i++)
        v0[i] = 0.0;
    *have_lambda = 1;
    return min_norm_lambda(pb, q0, v0, lambda0);
}

#define LOOP_DEF(sym, nm, ttl, cite, ref, fl, prm, setup_fn, kin)                        \
    const mbs_problem_def sym = {                                                        \
        .name = nm,                                                                      \
        .title = ttl,                                                                    \
        .citation = cite,                                                                \
        .reference = ref,                                                                \
        .flags = MBS_PB_CONSERVATIVE | MBS_PB_CONSTANT_MASS | (fl),                      \
        .index = 3,                                                                      \
        .t0 = 0.0,                                                                       \
        .t_end = 10.0,                                                                   \
        .params = prm,                                                                   \
        .n_params = sizeof prm / sizeof prm[0],                                          \
        .dims = dims,                                                                    \
        .setup = setup_fn,                                                               \
        .teardown = teardown,                                                            \
        .initial = initial,                                                              \
        .mass = mass,                                                                    \
        .force = force,                                                                  \
        .constraint = constraint,                                                        \
        .jacobian = jacobian,                                                            \
        .gamma = gamma_fn,                                                               \
        .kinematic = kin,                                                                \
        .energy = energy,                                                                \
        /* gravity is constant; the joints' Hessian terms by differences */  \
        .force_q = mbs_zero_force_derivative,                                            \
        .force_v = mbs_zero_force_derivative,                                            \
    };

#define REF2D "problems/ref/<name>.ref for the default parameters (index1/rk8pd vs " \
              "index1/dopri5, see its provenance); none for hang=0 (chaotic)"
#define REF3D "problems/ref/<name>.ref for the default parameters (null-space methods " \
              "svd/rk8pd vs qr/dopri5, see its provenance); its planar projection agrees " \
              "with the planar problem's reference to 10.9 (fivebar3d) / 11.3 " \
              "(doubleloop3d) digits"

LOOP_DEF(mbs_problem_fivebar, "fivebar",
         "planar five-bar mechanism, body coordinates (2 dof)",
         "[dca_augmented_lagrangian], Sects. 4.1-4.2 (planar body coordinates, our geometry)", REF2D, 0,
         params_fivebar, setup_fivebar, NULL)
LOOP_DEF(mbs_problem_doubleloop, "doubleloop",
         "planar double-loop mechanism, body coordinates (4 dof)",
         "[dca_augmented_lagrangian], Sects. 4.1, 4.3 (planar body coordinates, our geometry)", REF2D, 0,
         params_doubleloop, setup_doubleloop, NULL)
LOOP_DEF(mbs_problem_fivebar3d, "fivebar3d",
         "spatial five-bar, Euler parameters, 5-equation revolute joints (3 redundant)",
         "[dca_augmented_lagrangian], Sects. 2, 4.1-4.2 (our geometry)", REF3D, MBS_PB_REDUNDANT,
         params_fivebar, setup_fivebar3d, spatial_H)
LOOP_DEF(mbs_problem_doubleloop3d, "doubleloop3d",
         "spatial double loop, Euler parameters, revolute joints (6 redundant)",
         "[dca_augmented_lagrangian], Sects. 2, 4.1, 4.3 (our geometry)", REF3D, MBS_PB_REDUNDANT,
         params_doubleloop, setup_doubleloop3d, spatial_H)
