/* Test plugin: registers a valid-looking problem named "clash-first", then one
 * named "pendulum", which is built in: the load fails and nothing of the plugin
 * stays registered (also not "clash-first").  The callbacks are never run. */
#include <mbsbench/mbsbench.h>

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = *nv = 1;
    *nl = 0;
    return MBS_OK;
}
static int initial(const mbs_problem *pb, double *q, double *v, double *l, int *have)
{
    (void)pb, (void)q, (void)v, (void)l, (void)have;
    return MBS_UNSUPPORTED;
}
static int mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)pb, (void)t, (void)q, (void)M;
    return MBS_UNSUPPORTED;
}
static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)pb, (void)t, (void)q, (void)v, (void)f;
    return MBS_UNSUPPORTED;
}
static int vec(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)pb, (void)t, (void)q, (void)g;
    return MBS_UNSUPPORTED;
}
static int jac(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)pb, (void)t, (void)q, (void)G;
    return MBS_UNSUPPORTED;
}
static int gam(const mbs_problem *pb, double t, const double *q, const double *v, double *g)
{
    (void)pb, (void)t, (void)q, (void)v, (void)g;
    return MBS_UNSUPPORTED;
}

#define DEF(nm)                                                                              \
    {.name = nm, .title = "test fixture", .dims = dims, .initial = initial, .mass = mass,    \
     .force = force, .constraint = vec, .jacobian = jac, .gamma = gam, .t_end = 1.0}
static const mbs_problem_def first = DEF("clash-first"), second = DEF("pendulum");

MBS_PLUGIN_DEFINE_ABI();

int mbs_plugin_init(mbs_plugin_host *host)
{
    int s = mbs_plugin_add_problem(host, &first);
    return s ? s : mbs_plugin_add_problem(host, &second);
}
