/* Tree-structured problems in joint coordinates (problems/tree.h) for the
 * recursive O(N) formalism of [arnold2013recursive] Sect. 3 / [arnold2016dae] Table 1.
 *
 * chain-joint: the N-pendulum chain of [arnold2016dae] Example 2 (problems/chain.c) in
 *   joint coordinates q_i = absolute angle of link i from the downward vertical.
 *   Bodies are the point masses (d = 2), p_i = p_{i-1} + l (sin q_i, -cos q_i):
 *   k_i = p_i - p_{i-1} - l (sin q_i, -cos q_i), K_i = I, H_i = -I,
 *   J_i = -l (cos q_i, sin q_i)^T, k_i^(II) = l (sin q_i, -cos q_i) q_i'^2,
 *   M_i = m I, f_i = (0, -m g).  The dense callbacks are the minimal-coordinate
 *   equations of chain.c (M_jk = m l^2 c_jk cos(q_j - q_k), c_jk = N - max(j,k)),
 *   O(N^2), for the index-1 comparison; the tree callback is O(N).  The
 *   multiplier mu_i of the recursion is lambda_i (p_i - p_{i-1}) of the
 *   Cartesian chain.
 * twomass-joint: the two planar point masses of [arnold2013recursive] Sect. 4 (Fig. 3) in the
 *   joint coordinates of the paper: q_i = p_i (n_i = 2, K = I, H = J = -I), and
 *   config=springs: q_j = p_j - p_i (n_j = 2, J_j = -I),
 *   config=constraint: q_j = p_jy - p_iy (n_j = 1, J_j = -(0, 1)^T, p_jx = p_ix + l);
 *   forces and values as problems/twomass.c (spring rest length l).  With
 *   m_i = 0 the projected mass of body i is rank-deficient (Eqs. (34)-(36)). */
#include <gsl/gsl_math.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "problem.h"
#include "tree.h"

/* ---- chain-joint --------------------------------------------------------------- */

enum { C_N, C_M, C_L, C_G, C_ALPHA1, C_ALPHA2 };

static const mbs_param_def chain_params[] = {
    [C_N] = {"N", 10, 1, 1000000, "number of point masses (and rods)", NULL, 1},
    [C_M] = {"m", 1.0, 1e-6, 1e6, "mass of each point [kg]", NULL, 0},
    [C_L] = {"l", 1.0, 1e-3, 1e3, "rod length [m]", NULL, 0},
    [C_G] = {"g", 9.81, 0.0, 1e3, "gravitational acceleration [m/s^2]", NULL, 0},
    /* not horizontal by default: E0 = 0 there up to cos(pi/2) ~ 6e-17, which
     * makes the relative energy drift meaningless */
    [C_ALPHA1] = {"alpha1", 60.0, -180.0, 180.0, "initial angle of rod 1 [deg]", NULL, 0},
    [C_ALPHA2] = {"alpha2", 60.0, -180.0, 180.0, "initial angle of rods 2..N [deg]", NULL,
                  0},
};

#define PAR(i) mbs_pb_param(pb, i)
#define NCHAIN(pb) ((size_t)mbs_pb_param(pb, C_N))

static int chain_dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    *nq = *nv = NCHAIN(pb);
    *nl = 0;
    return MBS_OK;
}

static int chain_initial(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                         int *have_lambda)
{
    (void)lambda0;
    for (size_t i = 0; i < NCHAIN(pb); i++) {
        q0[i] = (i == 0 ? PAR(C_ALPHA1) : PAR(C_ALPHA2)) * M_PI / 180.0;
        v0[i] = 0.0;
    }
    *have_lambda = 1; /* no multipliers */
    return MBS_OK;
}

static int chain_mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)t;
    size_t N = NCHAIN(pb);
    double ml2 = PAR(C_M) * PAR(C_L) * PAR(C_L);
    for (size_t j = 0; j < N; j++)
        for (size_t k = 0; k < N; k++)
            gsl_matrix_set(M, j, k, ml2 * (double)(N - (j > k ? j : k)) * cos(q[j] - q[k]));
    return MBS_OK;
}

static int chain_force(const mbs_problem *pb, double t, const double *q, const double *v,
                       double *f)
{
    (void)t;
    size_t N = NCHAIN(pb);
    double m = PAR(C_M), l = PAR(C_L), g = PAR(C_G);
    for (size_t j = 0; j < N; j++) {
        double r = -m * g * l * (double)(N - j) * sin(q[j]);
        for (size_t k = 0; k < N; k++)
            r -= m * l * l * (double)(N - (j > k ? j : k)) * sin(q[j] - q[k]) * v[k] * v[k];
        f[j] = r;
    }
    return MBS_OK;
}

static int no_constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)pb, (void)t, (void)q, (void)g;
    return MBS_OK;
}

static int no_jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)pb, (void)t, (void)q, (void)G;
    return MBS_OK;
}

static int no_gamma(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)pb, (void)t, (void)q, (void)v, (void)gam;
    return MBS_OK;
}

static double chain_energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    (void)t;
    size_t N = NCHAIN(pb);
    double m = PAR(C_M), l = PAR(C_L), g = PAR(C_G);
    double y = 0.0, vx = 0.0, vy = 0.0, E = 0.0;
    for (size_t i = 0; i < N; i++) {
        y -= l * cos(q[i]);
        vx += l * cos(q[i]) * v[i];
        vy += l * sin(q[i]) * v[i];
        E += 0.5 * m * (vx * vx + vy * vy) + m * g * y;
    }
    return E;
}

const mbs_problem_def mbs_problem_chain_joint = {
    .name = "chain-joint",
    .title = "chain of N pendulums in joint coordinates (link angles), tree description",
    .citation = "Arnold 2016 [arnold2016dae], Example 2/3 (N links); Arnold 2013 [arnold2013recursive], Sect. 3.1",
    .reference = "none (compare chain: same motion in Cartesian coordinates)",
    .flags = MBS_PB_CONSERVATIVE,
    .index = 0,
    .t0 = 0.0,
    .t_end = 5.0,
    .params = chain_params,
    .n_params = sizeof chain_params / sizeof chain_params[0],
    .dims = chain_dims,
    .initial = chain_initial,
    .mass = chain_mass,
    .force = chain_force,
    .constraint = no_constraint,
    .jacobian = no_jacobian,
    .gamma = no_gamma,
    .energy = chain_energy,
};

static size_t chain_nbodies(const mbs_problem *pb)
{
    return NCHAIN(pb);
}

static int chain_topology(const mbs_problem *pb, int *parent, size_t *n, size_t *off)
{
    for (size_t i = 0; i < NCHAIN(pb); i++) {
        parent[i] = (int)i - 1;
        n[i] = 1;
        off[i] = i;
    }
    return MBS_OK;
}

static int chain_tree_eval(const mbs_problem *pb, double t, const double *q, const double *v,
                           mbs_tree_body *b)
{
    (void)t;
    size_t N = NCHAIN(pb);
    double m = PAR(C_M), l = PAR(C_L), g = PAR(C_G);
    for (size_t i = 0; i < N; i++) {
        mbs_tree_body *e = &b[i];
        double s = sin(q[i]), c = cos(q[i]);
        /* d = 2: row-major 2 x 2 */
        e->M[0] = m, e->M[1] = 0.0, e->M[2] = 0.0, e->M[3] = m;
        e->K[0] = 1.0, e->K[1] = 0.0, e->K[2] = 0.0, e->K[3] = 1.0;
        e->H[0] = -1.0, e->H[1] = 0.0, e->H[2] = 0.0, e->H[3] = -1.0;
        e->J[0] = -l * c; /* 2 x 1 */
        e->J[1] = -l * s;
        e->k2[0] = l * s * v[i] * v[i];
        e->k2[1] = -l * c * v[i] * v[i];
        e->f[0] = 0.0;
        e->f[1] = -m * g;
    }
    return MBS_OK;
}

static const mbs_tree_def tree_chain = {
    .problem = &mbs_problem_chain_joint,
    .d = 2,
    .nbodies = chain_nbodies,
    .topology = chain_topology,
    .eval = chain_tree_eval,
};

/* ---- twomass-joint ----------------------------------------------------------- */

enum { T_CONFIG, T_MI, T_MJ, T_C, T_D, T_L, T_X0, T_Y0 };

static const mbs_param_def tm_params[] = {
    [T_CONFIG] = {"config", 0, 0, 1,
                  "Fig. 3 upper (springs, Eq. (33)) or lower (constraint, Eq. (36))",
                  "springs,constraint", 1},
    [T_MI] = {"mi", 0.01, 0.0, 1e6, "mass of body i [kg] (may be 0)", NULL, 0},
    [T_MJ] = {"mj", 1.0, 1e-6, 1e6, "mass of body j [kg]", NULL, 0},
    [T_C] = {"c", 100.0, 0.0, 1e9, "spring constants [N/m]", NULL, 0},
    [T_D] = {"d", 10.0, 1e-9, 1e6, "damping constants [N s/m]", NULL, 0},
    [T_L] = {"l", 1.0, 0.0, 1e3, "distance of j from i in x [m]", NULL, 0},
    [T_X0] = {"x0", 0.1, -1e3, 1e3, "p_ix(0) [m]", NULL, 0},
    [T_Y0] = {"y0", 0.1, -1e3, 1e3, "p_iy(0) [m]", NULL, 0},
};

#define TM_CONSTR(pb) (mbs_pb_param(pb, T_CONFIG) == 1.0)

static int tm_dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    *nq = *nv = TM_CONSTR(pb) ? 3 : 4;
    *nl = 0;
    return MBS_OK;
}

static int tm_setup(mbs_problem *pb, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    if (PAR(T_MI) == 0.0)
        pb->flags |= MBS_PB_SINGULAR_MASS;
    return MBS_OK;
}

/* Absolute p = (p_ix, p_iy, p_jx, p_jy) and p' from the joint state. */
static void tm_absolute(const mbs_problem *pb, const double *q, const double *v, double *p,
                        double *pd)
{
    p[0] = q[0], p[1] = q[1], pd[0] = v[0], pd[1] = v[1];
    if (TM_CONSTR(pb)) {
        p[2] = q[0] + PAR(T_L), p[3] = q[1] + q[2];
        pd[2] = v[0], pd[3] = v[1] + v[2];
    } else {
        p[2] = q[0] + q[2], p[3] = q[1] + q[3];
        pd[2] = v[0] + v[2], pd[3] = v[1] + v[3];
    }
}

/* Applied forces on i and j (as problems/twomass.c). */
static void tm_forces(const mbs_problem *pb, const double *p, const double *pd, double *fi,
                      double *fj)
{
    double c = PAR(T_C), d = PAR(T_D), l = PAR(T_L);
    fi[0] = -d * pd[0] - c * p[0];
    fi[1] = -d * pd[1] - c * p[1];
    fj[0] = fj[1] = 0.0;
    if (!TM_CONSTR(pb)) {
        double s = d * (pd[2] - pd[0]) + c * (p[2] - p[0] - l);
        fi[0] += s;
        fj[0] -= s;
    }
}

static int tm_initial(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                      int *have_lambda)
{
    (void)lambda0;
    double c = PAR(T_C), d = PAR(T_D), l = PAR(T_L), x0 = PAR(T_X0), y0 = PAR(T_Y0);
    /* the absolute initial values of problems/twomass.c */
    double pi_y = -c * y0 / d, pjy = 1.0;
    q0[0] = x0, q0[1] = y0, v0[1] = pi_y;
    if (TM_CONSTR(pb)) {
        v0[0] = 0.0;
        q0[2] = -y0, v0[2] = pjy - pi_y;
    } else {
        double pjx = l, vjx = 0.0;
        v0[0] = (-c * x0 + d * vjx + c * (pjx - x0 - l)) / (2.0 * d);
        q0[2] = pjx - x0, q0[3] = -y0;
        v0[2] = vjx - v0[0], v0[3] = pjy - pi_y;
    }
    *have_lambda = 1;
    return MBS_OK;
}

/* Generalised mass and forces in joint coordinates (p = A q + const). */
static int tm_mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)t, (void)q;
    double mi = PAR(T_MI), mj = PAR(T_MJ);
    gsl_matrix_set_zero(M);
    if (TM_CONSTR(pb)) {
        gsl_matrix_set(M, 0, 0, mi + mj);
        gsl_matrix_set(M, 1, 1, mi + mj);
        gsl_matrix_set(M, 1, 2, mj);
        gsl_matrix_set(M, 2, 1, mj);
        gsl_matrix_set(M, 2, 2, mj);
    } else {
        for (size_t k = 0; k < 2; k++) {
            gsl_matrix_set(M, k, k, mi + mj);
            gsl_matrix_set(M, k, k + 2, mj);
            gsl_matrix_set(M, k + 2, k, mj);
            gsl_matrix_set(M, k + 2, k + 2, mj);
        }
    }
    return MBS_OK;
}

static int tm_force(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *f)
{
    (void)t;
    double p[4], pd[4], fi[2], fj[2];
    tm_absolute(pb, q, v, p, pd);
    tm_forces(pb, p, pd, fi, fj);
    f[0] = fi[0] + fj[0];
    f[1] = fi[1] + fj[1];
    if (TM_CONSTR(pb)) {
        f[2] = fj[1];
    } else {
        f[2] = fj[0];
        f[3] = fj[1];
    }
    return MBS_OK;
}

const mbs_problem_def mbs_problem_twomass_joint = {
    .name = "twomass-joint",
    .title = "two planar point masses in joint coordinates (Arnold 2013 [arnold2013recursive] Fig. 3), tree description",
    .citation = "Arnold 2013 [arnold2013recursive], Sect. 4, Fig. 3, Eqs. (33)-(36); values as twomass",
    .reference = "none (compare twomass: absolute coordinates)",
    .flags = 0,
    .index = 0,
    .t0 = 0.0,
    .t_end = 5.0,
    .params = tm_params,
    .n_params = sizeof tm_params / sizeof tm_params[0],
    .dims = tm_dims,
    .setup = tm_setup,
    .initial = tm_initial,
    .mass = tm_mass,
    .force = tm_force,
    .constraint = no_constraint,
    .jacobian = no_jacobian,
    .gamma = no_gamma,
};

static size_t tm_nbodies(const mbs_problem *pb)
{
    (void)pb;
    return 2;
}

static int tm_topology(const mbs_problem *pb, int *parent, size_t *n, size_t *off)
{
    parent[0] = -1, n[0] = 2, off[0] = 0;
    parent[1] = 0, n[1] = TM_CONSTR(pb) ? 1 : 2, off[1] = 2;
    return MBS_OK;
}

static int tm_tree_eval(const mbs_problem *pb, double t, const double *q, const double *v,
                        mbs_tree_body *b)
{
    (void)t;
    double p[4], pd[4];
    tm_absolute(pb, q, v, p, pd);
    double mass[2] = {PAR(T_MI), PAR(T_MJ)};
    for (int k = 0; k < 2; k++) {
        mbs_tree_body *e = &b[k];
        for (int i = 0; i < 4; i++)
            e->M[i] = e->K[i] = e->H[i] = e->J[i] = 0.0;
        e->k2[0] = e->k2[1] = 0.0;
        e->M[0] = e->M[3] = mass[k];
        e->K[0] = e->K[3] = 1.0;
        e->H[0] = e->H[3] = -1.0;
    }
    tm_forces(pb, p, pd, b[0].f, b[1].f);
    b[0].J[0] = -1.0, b[0].J[3] = -1.0; /* 2 x 2 */
    if (TM_CONSTR(pb)) {
        b[1].J[0] = 0.0, b[1].J[1] = -1.0; /* 2 x 1: -(0, 1)^T */
    } else {
        b[1].J[0] = -1.0, b[1].J[3] = -1.0;
    }
    return MBS_OK;
}

static const mbs_tree_def tree_twomass = {
    .problem = &mbs_problem_twomass_joint,
    .d = 2,
    .nbodies = tm_nbodies,
    .topology = tm_topology,
    .eval = tm_tree_eval,
};

const mbs_tree_def *mbs_tree_find(const mbs_problem_def *def)
{
    static const mbs_tree_def *const trees[] = {&tree_chain, &tree_twomass};
    for (size_t i = 0; i < sizeof trees / sizeof trees[0]; i++)
        if (trees[i]->problem == def)
            return trees[i];
    return NULL;
}
