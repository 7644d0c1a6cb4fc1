/* Two planar point masses i and j ([arnold2013recursive], Sect. 4, Fig. 3), absolute
 * coordinates q = (p_ix, p_iy, p_jx, p_jy).  Body i is tied to the ground by
 * spring-dampers (c, d) parallel to the x and y axes; body j moves freely in y.
 *  config=springs (upper plot, Eq. (33)): i and j joined by a spring-damper
 *     parallel to x (rest length l, ours; the paper's spring has rest length 0):
 *         m_i p_ix'' = -d p_ix' - c p_ix + d (p_jx' - p_ix') + c (p_jx - p_ix - l),
 *         m_i p_iy'' = -d p_iy' - c p_iy,
 *         m_j p_jx'' = -d (p_jx' - p_ix') - c (p_jx - p_ix - l),   m_j p_jy'' = 0.
 *  config=constraint (lower plot, Eq. (36)): the scalar constraint
 *     0 = p_jx - p_ix - l with multiplier lambda = mu_jx of Eq. (36), i.e.
 *         m_i p_ix'' - lambda = -d p_ix' - c p_ix,  m_j p_jx'' + lambda = 0.
 * m_i may be 0 (rank-deficient M, flag singular-M): then the equations of body i
 * are implicit first-order equations (Eq. (34); for the constraint case
 * (m_i + m_j) p_ix'' = -d p_ix' - c p_ix and 0 = -d p_iy' - c p_iy).
 *
 * Values (ours; the paper gives none): m_i = 0.01 kg, m_j = 1 kg, c = 100 N/m,
 * d = 10 N s/m, l = 1 m.  Initial values p_i = (x0, y0) = (0.1, 0.1) m,
 * p_j = (l, 0) (springs) or (x0 + l, 0) (constraint), p_j' = (0, 1) m/s (springs)
 * or (p_ix', 1) (constraint), and p_i' from the first-order equations of the
 * m_i = 0 limit, so the same initial values are consistent for every m_i. */
#include <math.h>
#include <stdio.h>

#include "../core/status.h"
#include "problem.h"

enum { P_CONFIG, P_MI, P_MJ, P_C, P_D, P_L, P_X0, P_Y0 };
enum { CFG_SPRINGS = 0, CFG_CONSTRAINT = 1 };

static const mbs_param_def params[] = {
    [P_CONFIG] = {"config", CFG_SPRINGS, 0, 1,
                  "Fig. 3 upper (springs, Eq. (33)) or lower (constraint, Eq. (36))",
                  "springs,constraint", 1},
    [P_MI] = {"mi", 0.01, 0.0, 1e6, "mass of body i [kg] (may be 0)", NULL, 0},
    [P_MJ] = {"mj", 1.0, 1e-6, 1e6, "mass of body j [kg]", NULL, 0},
    [P_C] = {"c", 100.0, 0.0, 1e9, "spring constants [N/m]", NULL, 0},
    [P_D] = {"d", 10.0, 1e-9, 1e6, "damping constants [N s/m]", NULL, 0},
    [P_L] = {"l", 1.0, 0.0, 1e3, "distance of j from i in x [m]", NULL, 0},
    [P_X0] = {"x0", 0.1, -1e3, 1e3, "p_ix(0) [m]", NULL, 0},
    [P_Y0] = {"y0", 0.1, -1e3, 1e3, "p_iy(0) [m]", NULL, 0},
};

#define PAR(i) mbs_pb_param(pb, i)
#define CONSTRAINED(pb) (mbs_pb_param(pb, P_CONFIG) == CFG_CONSTRAINT)

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    *nq = 4;
    *nv = 4;
    *nl = CONSTRAINED(pb) ? 1 : 0;
    return MBS_OK;
}

static int setup(mbs_problem *pb, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    if (PAR(P_MI) == 0.0)
        pb->flags |= MBS_PB_SINGULAR_MASS;
    return MBS_OK;
}

static int initial(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                   int *have_lambda)
{
    double c = PAR(P_C), d = PAR(P_D), l = PAR(P_L), x0 = PAR(P_X0), y0 = PAR(P_Y0);
    q0[0] = x0;
    q0[1] = y0;
    v0[1] = -c * y0 / d; /* 0 = -d p_iy' - c p_iy */
    v0[3] = 1.0;
    q0[3] = 0.0;
    if (CONSTRAINED(pb)) {
        q0[2] = x0 + l;
        v0[0] = 0.0; /* second order in x even for m_i = 0 */
        v0[2] = v0[0];
        /* (m_i + m_j) p_ix'' = -d p_ix' - c p_ix and m_j p_jx'' = -lambda (Eq. (36)):
         * lambda0 in closed form, also for m_i = 0 where the KKT matrix is singular. */
        lambda0[0] = PAR(P_MJ) * (d * v0[0] + c * x0) / (PAR(P_MI) + PAR(P_MJ));
        *have_lambda = 1;
        return MBS_OK;
    } else {
        q0[2] = l;
        v0[2] = 0.0;
        /* Eq. (34) first row: 0 = -d p_ix' - c p_ix + d (p_jx' - p_ix') + c (p_jx - p_ix - l) */
        v0[0] = (-c * x0 + d * v0[2] + c * (q0[2] - x0 - l)) / (2.0 * d);
    }
    *have_lambda = 0;
    return MBS_OK;
}

static int mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)t, (void)q;
    gsl_matrix_set_zero(M);
    gsl_matrix_set(M, 0, 0, PAR(P_MI));
    gsl_matrix_set(M, 1, 1, PAR(P_MI));
    gsl_matrix_set(M, 2, 2, PAR(P_MJ));
    gsl_matrix_set(M, 3, 3, PAR(P_MJ));
    return MBS_OK;
}

static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)t;
    double c = PAR(P_C), d = PAR(P_D), l = PAR(P_L);
    f[0] = -d * v[0] - c * q[0];
    f[1] = -d * v[1] - c * q[1];
    f[2] = 0.0;
    f[3] = 0.0;
    if (!CONSTRAINED(pb)) {
        double s = d * (v[2] - v[0]) + c * (q[2] - q[0] - l);
        f[0] += s;
        f[2] -= s;
    }
    return MBS_OK;
}

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)t;
    if (CONSTRAINED(pb))
        g[0] = q[2] - q[0] - PAR(P_L);
    return MBS_OK;
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)t, (void)q;
    if (CONSTRAINED(pb)) {
        gsl_matrix_set_zero(G);
        gsl_matrix_set(G, 0, 0, -1.0);
        gsl_matrix_set(G, 0, 2, 1.0);
    }
    return MBS_OK;
}

static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)t, (void)q, (void)v;
    if (CONSTRAINED(pb))
        gam[0] = 0.0; /* linear constraint */
    return MBS_OK;
}

const mbs_problem_def mbs_problem_twomass = {
    .name = "twomass",
    .title = "two planar point masses, spring-damper or constraint joint (m_i -> 0)",
    .citation = "Arnold 2013 [arnold2013recursive], Sect. 4, Fig. 3, Eqs. (33)-(36); parameter values ours",
    .reference = "stored: index1/rk8pd vs index1/dopri5, problems/ref/twomass.ref",
    .flags = 0,
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
};
