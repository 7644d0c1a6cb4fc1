/* Test plugin: a pendulum with a wrong constraint Jacobian entry (G[0][1] off by
 * 1%), a wrong analytic derivative (force_v = 0.1 I for a force that does not
 * depend on v) and the flag MBS_PB_CONSTANT_MASS on a mass matrix that depends on
 * q, for check-problem: the battery must name all three. */
#include <math.h>

#include <mbsbench/mbsbench.h>

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = *nv = 2;
    *nl = 1;
    return MBS_OK;
}
static int initial(const mbs_problem *pb, double *q, double *v, double *l, int *have)
{
    (void)pb, (void)l;
    q[0] = sin(0.3), q[1] = -cos(0.3), v[0] = v[1] = 0.0;
    *have = 0;
    return MBS_OK;
}
static int mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)pb, (void)t;
    gsl_matrix_set_identity(M);
    gsl_matrix_set(M, 0, 0, 1.0 + 0.5 * q[0] * q[0]); /* the bug: flagged constant */
    return MBS_OK;
}
static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)pb, (void)t, (void)q, (void)v;
    f[0] = 0.0, f[1] = -9.81;
    return MBS_OK;
}
static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)pb, (void)t;
    g[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - 1.0);
    return MBS_OK;
}
static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)pb, (void)t;
    gsl_matrix_set(G, 0, 0, q[0]);
    gsl_matrix_set(G, 0, 1, 1.01 * q[1]); /* the bug */
    return MBS_OK;
}
static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *g)
{
    (void)pb, (void)t, (void)q;
    g[0] = -(v[0] * v[0] + v[1] * v[1]);
    return MBS_OK;
}

static int force_v(const mbs_problem *pb, double t, const double *q, const double *v,
                   gsl_matrix *D)
{
    (void)pb, (void)t, (void)q, (void)v;
    gsl_matrix_set_identity(D);
    gsl_matrix_scale(D, 0.1); /* the bug */
    return MBS_OK;
}

static const mbs_problem_def broken = {
    .name = "broken-pendulum", .title = "pendulum with a wrong G (test fixture)",
    .flags = MBS_PB_CONSTANT_MASS, .index = 3, .t_end = 1.0, .dims = dims, .initial = initial,
    .mass = mass, .force = force, .constraint = constraint, .jacobian = jacobian, .gamma = gamma_fn,
    .force_v = force_v};

MBS_PLUGIN_DEFINE_ABI();

int mbs_plugin_init(mbs_plugin_host *host)
{
    return mbs_plugin_add_problem(host, &broken);
}
