/* A user's problem as a plugin: the planar four-bar mechanism in natural
 * coordinates (examples/plugin-problem).
 *
 * Ground pivots A = (0, 0) and D = (d, 0); crank AB (length a), coupler BC
 * (length b), rocker DC (length c), uniform bars of mass rho x length.  The
 * coordinates are the two moving joints, q = (x_B, y_B, x_C, y_C), so the
 * constraints are the three bar lengths (n_q = n_v = 4, n_lambda = 3, one degree of
 * freedom):
 *     g = ( (|B|^2 - a^2)/2, (|C - B|^2 - b^2)/2, (|C - D|^2 - c^2)/2 ).
 * With linear interpolation along each bar the mass matrix is constant: a bar
 * between P1 and P2 contributes m/6 [[2I, I], [I, 2I]], a bar with one fixed end
 * m/3 I to its moving end (Garcia de Jalon & Bayo, "Kinematic and dynamic
 * simulation of multibody systems", 1994, Ch. 3, natural coordinates).  Gravity
 * acts on the bars' centres: f = -grad V, V = g sum m_i y_centre_i.  No friction:
 * the total energy is conserved.
 *
 * The default lengths (a, b, c, d) = (1, 4, 3, 4) make a Grashof crank-rocker
 * whose transmission angle stays in [48, 90] degrees, so G has full rank
 * everywhere.  Initial values: crank angle phi0 and angular velocity omega0; C on
 * the upper branch of the intersection of the circles about B and D, and its
 * velocity from the velocity constraints (consistent by construction).
 *
 * Build and run (see Makefile and docs/adding-a-problem.md):
 *     make && mbsbench --plugin ./fourbar.so run -p fourbar -m index1/rk4 --h 0.01
 *     mbsbench --plugin ./fourbar.so check-problem -p fourbar
 */
#include <math.h>
#include <stdio.h>

#include <mbsbench/mbsbench.h>

enum { P_A, P_B, P_C, P_D, P_RHO, P_G, P_PHI0, P_OMEGA0 };

static const mbs_param_def params[] = {
    [P_A] = {"a", 1.0, 1e-3, 1e3, "crank length AB [m]", NULL, 0},
    [P_B] = {"b", 4.0, 1e-3, 1e3, "coupler length BC [m]", NULL, 0},
    [P_C] = {"c", 3.0, 1e-3, 1e3, "rocker length DC [m]", NULL, 0},
    [P_D] = {"d", 4.0, 1e-3, 1e3, "ground length AD [m]", NULL, 0},
    [P_RHO] = {"rho", 1.0, 1e-6, 1e6, "mass per length of the bars [kg/m]", NULL, 0},
    [P_G] = {"g", 9.81, 0.0, 1e3, "gravitational acceleration [m/s^2]", NULL, 0},
    [P_PHI0] = {"phi0", 0.5, -10.0, 10.0, "initial crank angle [rad]", NULL, 0},
    [P_OMEGA0] = {"omega0", 5.0, -1e3, 1e3, "initial crank angular velocity [rad/s]", NULL, 0},
};

#define PAR(i) mbs_pb_param(pb, i)

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = 4;
    *nv = 4;
    *nl = 3;
    return MBS_OK;
}

/* Position of C for crank angle phi (upper branch); -1 when it does not assemble. */
static int assemble(const mbs_problem *pb, double phi, double *q)
{
    double a = PAR(P_A), b = PAR(P_B), c = PAR(P_C), d = PAR(P_D);
    double xb = a * cos(phi), yb = a * sin(phi);
    double ex = d - xb, ey = -yb, e = hypot(ex, ey);
    if (!(e > fabs(b - c) && e < b + c))
        return -1;
    double l = (b * b - c * c + e * e) / (2.0 * e), h = sqrt(b * b - l * l);
    double ux = ex / e, uy = ey / e;
    q[0] = xb;
    q[1] = yb;
    q[2] = xb + l * ux - h * uy; /* left normal of B -> D: the upper branch */
    q[3] = yb + l * uy + h * ux;
    return 0;
}

static int setup(mbs_problem *pb, char *err, size_t errlen)
{
    double q[4];
    if (assemble(pb, PAR(P_PHI0), q) != 0) {
        snprintf(err, errlen, "fourbar: the bars (a, b, c, d) = (%g, %g, %g, %g) do not "
                 "assemble at phi0 = %g", PAR(P_A), PAR(P_B), PAR(P_C), PAR(P_D), PAR(P_PHI0));
        return MBS_BAD_INPUT;
    }
    return MBS_OK;
}

static int initial(const mbs_problem *pb, double *q, double *v, double *lambda,
                   int *have_lambda)
{
    (void)lambda;
    double a = PAR(P_A), d = PAR(P_D), phi = PAR(P_PHI0), w = PAR(P_OMEGA0);
    if (assemble(pb, phi, q) != 0)
        return MBS_BAD_INPUT;
    v[0] = -a * w * sin(phi);
    v[1] = a * w * cos(phi);
    /* (C - B).(vC - vB) = 0 and (C - D).vC = 0: a 2x2 system for vC (Cramer). */
    double r1x = q[2] - q[0], r1y = q[3] - q[1], r2x = q[2] - d, r2y = q[3];
    double det = r1x * r2y - r1y * r2x;
    if (fabs(det) < 1e-12)
        return MBS_BAD_INPUT; /* coupler and rocker aligned: a singular start */
    double rhs1 = r1x * v[0] + r1y * v[1];
    v[2] = rhs1 * r2y / det;
    v[3] = -rhs1 * r2x / det;
    *have_lambda = 0; /* the harness solves the index-1 system for lambda0 */
    return MBS_OK;
}

static int mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)t, (void)q;
    double ma = PAR(P_RHO) * PAR(P_A), mb = PAR(P_RHO) * PAR(P_B), mc = PAR(P_RHO) * PAR(P_C);
    gsl_matrix_set_zero(M);
    for (size_t k = 0; k < 2; k++) {
        gsl_matrix_set(M, k, k, ma / 3.0 + mb / 3.0);
        gsl_matrix_set(M, 2 + k, 2 + k, mb / 3.0 + mc / 3.0);
        gsl_matrix_set(M, k, 2 + k, mb / 6.0);
        gsl_matrix_set(M, 2 + k, k, mb / 6.0);
    }
    return MBS_OK;
}

static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)t, (void)q, (void)v;
    double rg = PAR(P_RHO) * PAR(P_G);
    f[0] = 0.0;
    f[1] = -rg * (PAR(P_A) + PAR(P_B)) / 2.0;
    f[2] = 0.0;
    f[3] = -rg * (PAR(P_B) + PAR(P_C)) / 2.0;
    return MBS_OK;
}

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)t;
    double a = PAR(P_A), b = PAR(P_B), c = PAR(P_C), d = PAR(P_D);
    double dx = q[2] - q[0], dy = q[3] - q[1];
    g[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - a * a);
    g[1] = 0.5 * (dx * dx + dy * dy - b * b);
    g[2] = 0.5 * ((q[2] - d) * (q[2] - d) + q[3] * q[3] - c * c);
    return MBS_OK;
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)t;
    double d = PAR(P_D), dx = q[2] - q[0], dy = q[3] - q[1];
    const double row[3][4] = {{q[0], q[1], 0.0, 0.0},
                              {-dx, -dy, dx, dy},
                              {0.0, 0.0, q[2] - d, q[3]}};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 4; j++)
            gsl_matrix_set(G, i, j, row[i][j]);
    return MBS_OK;
}

/* gamma = -(G v)_q v: minus the squared relative speeds of each bar's ends. */
static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)pb, (void)t, (void)q;
    double dx = v[2] - v[0], dy = v[3] - v[1];
    gam[0] = -(v[0] * v[0] + v[1] * v[1]);
    gam[1] = -(dx * dx + dy * dy);
    gam[2] = -(v[2] * v[2] + v[3] * v[3]);
    return MBS_OK;
}

/* T = v^T M v / 2 with the M above, V = -f.q (constant gravity loads). */
static double energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    double ma = PAR(P_RHO) * PAR(P_A), mb = PAR(P_RHO) * PAR(P_B), mc = PAR(P_RHO) * PAR(P_C);
    double f[4];
    force(pb, t, q, v, f);
    double vb2 = v[0] * v[0] + v[1] * v[1], vc2 = v[2] * v[2] + v[3] * v[3];
    double vbc = v[0] * v[2] + v[1] * v[3];
    double T = 0.5 * ((ma + mb) / 3.0 * vb2 + (mb + mc) / 3.0 * vc2 + mb / 3.0 * vbc);
    return T - (f[0] * q[0] + f[1] * q[1] + f[2] * q[2] + f[3] * q[3]);
}

static const mbs_problem_def fourbar = {
    .name = "fourbar",
    .title = "planar four-bar mechanism, natural coordinates (plugin example)",
    .citation = "Garcia de Jalon & Bayo (1994), Ch. 3; examples/plugin-problem",
    .reference = NULL, /* no stored reference: converge uses self-convergence */
    .flags = MBS_PB_CONSERVATIVE,
    .index = 3,
    .t0 = 0.0,
    .t_end = 3.0,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .dims = dims,
    .initial = initial,
    .mass = mass,
    .force = force,
    .constraint = constraint,
    .jacobian = jacobian,
    .gamma = gamma_fn,
    .setup = setup,
    .energy = energy,
};

MBS_PLUGIN_DEFINE_ABI();

int mbs_plugin_init(mbs_plugin_host *host)
{
    return mbs_plugin_add_problem(host, &fourbar);
}
