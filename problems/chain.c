/* Chain of N mathematical pendulums in Cartesian coordinates ([arnold2016dae], Example 2,
 * Eq. (7)) and its special case N = 2, the double pendulum (Examples 2-3).
 *
 *     m x_i'' = -(x_i - x_{i-1}) lambda_i + (x_{i+1} - x_i) lambda_{i+1},
 *     m y_i'' = -m g - (y_i - y_{i-1}) lambda_i + (y_{i+1} - y_i) lambda_{i+1},
 *     0 = ((x_i - x_{i-1})^2 + (y_i - y_{i-1})^2 - l^2) / 2,     (x_0, y_0) = (0, 0),
 *
 * q = (x_1, y_1, ..., x_N, y_N), n_lambda = N, M = m I (block diagonal), G sparse
 * with the entries printed after Eq. (7e); gamma_i = -|v_i - v_{i-1}|^2.
 * Initial values: at rest with link angles alpha_i from the downward vertical
 * ([arnold2016dae] Example 3: x_i = x_{i-1} + l sin alpha_i, y_i = y_{i-1} - l cos alpha_i);
 * `start=horizontal` is the straight horizontal chain (alpha_i = 90 deg),
 * `start=angles` uses alpha_1 = alpha1 and alpha_i = alpha2 for i >= 2.
 *
 * Independent formulation for references: the minimal angle coordinates of
 * Example 3 generalised to N links (an unconstrained ODE):
 *     sum_k c_jk [cos(a_j - a_k) a_k'' + sin(a_j - a_k) a_k'^2] = -(g/l) c_jj sin a_j,
 * c_jk = N + 1 - max(j, k) (number of masses beyond both links).  For N = 2 this
 * is the system printed in Example 3.  Integrated with GSL rk8pd. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/gslalloc.h"
#include "../core/status.h"
#include "problem.h"
#include "triplets.h"

typedef struct chain_data {
    size_t N;
    double m, l, g;
    double alpha1, alpha2; /* radians */
    int horizontal;        /* straight horizontal start: exact x_i = i l, y_i = 0 */
} chain_data;

/* ---- chain ------------------------------------------------------------------ */

enum { C_N, C_M, C_L, C_G, C_START, C_ALPHA1, C_ALPHA2 };

static const mbs_param_def chain_params[] = {
    [C_N] = {"N", 10, 1, 100000, "number of point masses (and rods)", NULL, 1},
    [C_M] = {"m", 1.0, 1e-6, 1e6, "mass of each point [kg]", NULL, 0},
    [C_L] = {"l", 1.0, 1e-3, 1e3, "rod length [m]", NULL, 0},
    [C_G] = {"g", 9.81, 0.0, 1e3, "gravitational acceleration [m/s^2]", NULL, 0},
    [C_START] = {"start", 0, 0, 1,
                 "initial shape, at rest: horizontal (straight) or angles (alpha1, alpha2)",
                 "horizontal,angles", 1},
    [C_ALPHA1] = {"alpha1", 5.0, -180.0, 180.0, "start=angles: angle of rod 1 [deg]", NULL, 0},
    [C_ALPHA2] = {"alpha2", 0.0, -180.0, 180.0, "start=angles: angle of rods 2..N [deg]",
                  NULL, 0},
};

/* ---- double pendulum ----------------------------------------------------------- */

enum { D_M, D_L, D_G, D_ALPHA1, D_ALPHA2 };

static const mbs_param_def dp_params[] = {
    [D_M] = {"m", 1.0, 1e-6, 1e6, "mass of each point [kg]", NULL, 0},
    [D_L] = {"l", 1.0, 1e-3, 1e3, "rod length [m]", NULL, 0},
    [D_G] = {"g", 9.81, 0.0, 1e3, "gravitational acceleration [m/s^2]", NULL, 0},
    [D_ALPHA1] = {"alpha1", 5.0, -180.0, 180.0, "initial angle of rod 1 [deg]", NULL, 0},
    [D_ALPHA2] = {"alpha2", 0.0, -180.0, 180.0, "initial angle of rod 2 [deg]", NULL, 0},
};

#define PAR(i) mbs_pb_param(pb, i)
#define DATA(pb) ((const chain_data *)(pb)->data)

static int chain_setup(mbs_problem *pb, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    chain_data *d = malloc(sizeof *d);
    if (!d)
        return MBS_NO_MEMORY;
    d->N = (size_t)PAR(C_N);
    d->m = PAR(C_M);
    d->l = PAR(C_L);
    d->g = PAR(C_G);
    d->horizontal = PAR(C_START) == 0.0;
    if (d->horizontal) {
        d->alpha1 = d->alpha2 = 0.5 * M_PI;
    } else {
        d->alpha1 = PAR(C_ALPHA1) * M_PI / 180.0;
        d->alpha2 = PAR(C_ALPHA2) * M_PI / 180.0;
    }
    pb->data = d;
    return MBS_OK;
}

static int dp_setup(mbs_problem *pb, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    chain_data *d = malloc(sizeof *d);
    if (!d)
        return MBS_NO_MEMORY;
    d->N = 2;
    d->m = PAR(D_M);
    d->l = PAR(D_L);
    d->g = PAR(D_G);
    d->alpha1 = PAR(D_ALPHA1) * M_PI / 180.0;
    d->alpha2 = PAR(D_ALPHA2) * M_PI / 180.0;
    d->horizontal = 0;
    pb->data = d;
    return MBS_OK;
}

static void teardown(mbs_problem *pb)
{
    free(pb->data);
    pb->data = NULL;
}

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    size_t N = DATA(pb)->N;
    *nq = 2 * N;
    *nv = 2 * N;
    *nl = N;
    return MBS_OK;
}

/* Cartesian positions and velocities from link angles a and rates da. */
static void from_angles(const chain_data *d, const double *a, const double *da, double *q,
                        double *v)
{
    double x = 0.0, y = 0.0, vx = 0.0, vy = 0.0;
    for (size_t i = 0; i < d->N; i++) {
        double s = sin(a[i]), c = cos(a[i]);
        x += d->l * s;
        y -= d->l * c;
        q[2 * i] = x;
        q[2 * i + 1] = y;
        if (v) {
            double w = da ? da[i] : 0.0;
            vx += d->l * c * w;
            vy += d->l * s * w;
            v[2 * i] = vx;
            v[2 * i + 1] = vy;
        }
    }
}

static double initial_angle(const chain_data *d, size_t i)
{
    return i == 0 ? d->alpha1 : d->alpha2;
}

static int initial(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                   int *have_lambda)
{
    (void)lambda0;
    const chain_data *d = DATA(pb);
    double x = 0.0, y = 0.0;
    for (size_t i = 0; i < d->N; i++) {
        double a = initial_angle(d, i);
        x += d->horizontal ? d->l : d->l * sin(a);
        y -= d->horizontal ? 0.0 : d->l * cos(a); /* cos(pi/2) != 0 in floating point */
        q0[2 * i] = x;
        q0[2 * i + 1] = y;
        v0[2 * i] = v0[2 * i + 1] = 0.0;
    }
    *have_lambda = 0; /* the harness solves the index-1 system */
    return MBS_OK;
}

static int mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)t, (void)q;
    gsl_matrix_set_identity(M);
    gsl_matrix_scale(M, DATA(pb)->m);
    return MBS_OK;
}

static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)t, (void)q, (void)v;
    const chain_data *d = DATA(pb);
    for (size_t i = 0; i < d->N; i++) {
        f[2 * i] = 0.0;
        f[2 * i + 1] = -d->m * d->g;
    }
    return MBS_OK;
}

/* Difference of point i and its predecessor (the origin for i = 0). */
static inline double dx(const double *q, size_t i)
{
    return i == 0 ? q[0] : q[2 * i] - q[2 * i - 2];
}

static inline double dy(const double *q, size_t i)
{
    return i == 0 ? q[1] : q[2 * i + 1] - q[2 * i - 1];
}

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)t;
    const chain_data *d = DATA(pb);
    for (size_t i = 0; i < d->N; i++) {
        double a = dx(q, i), b = dy(q, i);
        g[i] = 0.5 * (a * a + b * b - d->l * d->l);
    }
    return MBS_OK;
}

/* [arnold2016dae], entries after Eq. (7e): row i has (dx_i, dy_i) at point i and
 * -(dx_i, dy_i) at point i-1. */
static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)t;
    const chain_data *d = DATA(pb);
    gsl_matrix_set_zero(G);
    for (size_t i = 0; i < d->N; i++) {
        double a = dx(q, i), b = dy(q, i);
        gsl_matrix_set(G, i, 2 * i, a);
        gsl_matrix_set(G, i, 2 * i + 1, b);
        if (i > 0) {
            gsl_matrix_set(G, i, 2 * i - 2, -a);
            gsl_matrix_set(G, i, 2 * i - 1, -b);
        }
    }
    return MBS_OK;
}

static int jacobian_sparse(const mbs_problem *pb, double t, const double *q, mbs_triplets *G)
{
    (void)t;
    const chain_data *d = DATA(pb);
    G->nnz = 0;
    if (mbs_triplets_reserve(G, 4 * d->N) != 0)
        return MBS_NO_MEMORY;
    /* the entries of mbs_triplets_push, written through local pointers (the
     * solvers call this once per residual: the store to G->nnz per entry
     * cost a third of the callback) */
    size_t *restrict r = G->row, *restrict c = G->col, k = 0;
    double *restrict v = G->val;
    for (size_t i = 0; i < d->N; i++) {
        double a = dx(q, i), b = dy(q, i);
        if (i > 0) {
            r[k] = i, c[k] = 2 * i - 2, v[k++] = -a;
            r[k] = i, c[k] = 2 * i - 1, v[k++] = -b;
        }
        r[k] = i, c[k] = 2 * i, v[k++] = a;
        r[k] = i, c[k] = 2 * i + 1, v[k++] = b;
    }
    G->nnz = k;
    return MBS_OK;
}

/* Derivatives (problem.h).  The forces are constant: f_q = f_v = 0
 * (mbs_zero_force_derivative). */
/* g_i = |p_i - p_{i-1}|^2/2 - l^2/2 has the Hessian D_i^T D_i (x) I_2 (D_i: the
 * difference p_i - p_{i-1}), so G^T lambda has the blocks (lambda_k +
 * lambda_{k+1}) I on the diagonal and -lambda_k I, -lambda_{k+1} I beside it. */
static int gtlambda_q(const mbs_problem *pb, double t, const double *q, const double *lam,
                      gsl_matrix *K)
{
    (void)t, (void)q;
    size_t N = DATA(pb)->N;
    gsl_matrix_set_zero(K);
    for (size_t k = 0; k < N; k++)
        for (size_t c = 0; c < 2; c++) {
            double next = k + 1 < N ? lam[k + 1] : 0.0;
            gsl_matrix_set(K, 2 * k + c, 2 * k + c, lam[k] + next);
            if (k > 0)
                gsl_matrix_set(K, 2 * k + c, 2 * k - 2 + c, -lam[k]);
            if (k + 1 < N)
                gsl_matrix_set(K, 2 * k + c, 2 * k + 2 + c, -next);
        }
    return MBS_OK;
}

/* (G w)_i = (p_i - p_{i-1}) . (w_i - w_{i-1}): derivative (w_i - w_{i-1}) at
 * point i and its negative at point i-1. */
static int gw_q(const mbs_problem *pb, double t, const double *q, const double *w,
                gsl_matrix *Z)
{
    (void)t, (void)q;
    size_t N = DATA(pb)->N;
    gsl_matrix_set_zero(Z);
    for (size_t i = 0; i < N; i++)
        for (size_t c = 0; c < 2; c++) {
            double dw = w[2 * i + c] - (i > 0 ? w[2 * i - 2 + c] : 0.0);
            gsl_matrix_set(Z, i, 2 * i + c, dw);
            if (i > 0)
                gsl_matrix_set(Z, i, 2 * i - 2 + c, -dw);
        }
    return MBS_OK;
}

static int mass_sparse(const mbs_problem *pb, double t, const double *q, mbs_triplets *M)
{
    (void)t, (void)q;
    const chain_data *d = DATA(pb);
    M->nnz = 0;
    if (mbs_triplets_reserve(M, 2 * d->N) != 0)
        return MBS_NO_MEMORY;
    for (size_t i = 0; i < 2 * d->N; i++) { /* as jacobian_sparse: local stores */
        M->row[i] = i;
        M->col[i] = i;
        M->val[i] = d->m;
    }
    M->nnz = 2 * d->N;
    return MBS_OK;
}

static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)t, (void)q;
    const chain_data *d = DATA(pb);
    for (size_t i = 0; i < d->N; i++) {
        double a = dx(v, i), b = dy(v, i);
        gam[i] = -(a * a + b * b);
    }
    return MBS_OK;
}

static double energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    (void)t;
    const chain_data *d = DATA(pb);
    double E = 0.0;
    for (size_t i = 0; i < d->N; i++)
        E += 0.5 * d->m * (v[2 * i] * v[2 * i] + v[2 * i + 1] * v[2 * i + 1]) +
             d->m * d->g * q[2 * i + 1];
    return E;
}

/* ---- minimal coordinates (independent formulation) ------------------------ */

typedef struct angles_ws {
    const chain_data *d;
    gsl_matrix *A;
    gsl_vector *b, *x;
} angles_ws;

/* y = (a_1..a_N, a_1'..a_N'). */
static int angles_rhs(double t, const double y[], double dydt[], void *params)
{
    (void)t;
    angles_ws *w = params;
    size_t N = w->d->N;
    const double *a = y, *da = y + N;
    double gl = w->d->g / w->d->l;
    for (size_t j = 0; j < N; j++) {
        double r = -gl * (double)(N - j) * sin(a[j]);
        for (size_t k = 0; k < N; k++) {
            double c = (double)(N - (j > k ? j : k));
            gsl_matrix_set(w->A, j, k, c * cos(a[j] - a[k]));
            r -= c * sin(a[j] - a[k]) * da[k] * da[k];
        }
        gsl_vector_set(w->b, j, r);
    }
    if (gsl_linalg_cholesky_decomp1(w->A) != GSL_SUCCESS ||
        gsl_linalg_cholesky_solve(w->A, w->b, w->x) != GSL_SUCCESS)
        return GSL_EBADFUNC;
    for (size_t j = 0; j < N; j++) {
        dydt[j] = da[j];
        dydt[N + j] = gsl_vector_get(w->x, j);
    }
    return GSL_SUCCESS;
}

static int independent(const mbs_problem *pb, double t_end, double tol, double *q, double *v,
                       double *lambda, int *have_lambda, char *what, size_t whatlen)
{
    (void)lambda;
    const chain_data *d = DATA(pb);
    size_t N = d->N;
    *have_lambda = 0;
    if (N > 200) {
        snprintf(what, whatlen, "minimal coordinates limited to N <= 200 (dense solve)");
        return MBS_UNSUPPORTED;
    }
    angles_ws w = {d, mbs_matrix_alloc(N, N), gsl_vector_alloc(N), gsl_vector_alloc(N)};
    double *y = calloc(2 * N, sizeof(double));
    gsl_odeiv2_system sys = {angles_rhs, NULL, 2 * N, &w};
    gsl_odeiv2_driver *drv =
        w.A && w.b && w.x ? gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-4, tol,
                                                          tol)
                          : NULL;
    int s = MBS_NO_MEMORY;
    if (y && drv) {
        for (size_t i = 0; i < N; i++)
            y[i] = initial_angle(d, i);
        double t = pb->t0;
        gsl_odeiv2_driver_set_nmax(drv, 100000000);
        int r = gsl_odeiv2_driver_apply(drv, &t, t_end, y);
        if (r == GSL_SUCCESS) {
            from_angles(d, y, y + N, q, v);
            snprintf(what, whatlen, "minimal angle coordinates (Arnold 2016 [arnold2016dae] Ex. 3, N links), "
                                    "GSL rk8pd rtol=atol=%g",
                     tol);
            s = MBS_OK;
        } else {
            snprintf(what, whatlen, "minimal coordinates: GSL rk8pd failed at t=%g: %s", t,
                     gsl_strerror(r));
            s = MBS_LIBRARY_FAILURE;
        }
    }
    if (drv)
        gsl_odeiv2_driver_free(drv);
    free(y);
    if (w.A)
        gsl_matrix_free(w.A);
    if (w.b)
        gsl_vector_free(w.b);
    if (w.x)
        gsl_vector_free(w.x);
    return s;
}

const mbs_problem_def mbs_problem_chain = {
    .name = "chain",
    .title = "chain of N pendulums, Cartesian coordinates",
    .citation = "Arnold 2016 [arnold2016dae], Example 2, Eq. (7)",
    .reference = "stored: minimal angle coordinates (GSL rk8pd) vs index1/rk8pd, "
                 "problems/ref/chain.ref (for the parameters stored there)",
    .flags = MBS_PB_CONSERVATIVE | MBS_PB_SPARSE | MBS_PB_CONSTANT_MASS,
    .index = 3,
    .t0 = 0.0,
    .t_end = 5.0,
    .params = chain_params,
    .n_params = sizeof chain_params / sizeof chain_params[0],
    .dims = dims,
    .setup = chain_setup,
    .teardown = teardown,
    .initial = initial,
    .mass = mass,
    .force = force,
    .constraint = constraint,
    .jacobian = jacobian,
    .gamma = gamma_fn,
    .energy = energy,
    .mass_sparse = mass_sparse,
    .jacobian_sparse = jacobian_sparse,
    .independent = independent,
    .force_q = mbs_zero_force_derivative,
    .force_v = mbs_zero_force_derivative,
    .gtlambda_q = gtlambda_q,
    .gw_q = gw_q,
};

const mbs_problem_def mbs_problem_double_pendulum = {
    .name = "double-pendulum",
    .title = "double pendulum, Cartesian coordinates (chain N = 2)",
    .citation = "Arnold 2016 [arnold2016dae], Examples 2-3 (alpha1 = 5 deg, alpha2 = 0)",
    .reference = "stored: minimal angle coordinates (Arnold 2016 [arnold2016dae] Ex. 3, GSL rk8pd) vs "
                 "index1/rk8pd, problems/ref/double-pendulum.ref",
    .flags = MBS_PB_CONSERVATIVE | MBS_PB_SPARSE | MBS_PB_CONSTANT_MASS,
    .index = 3,
    .t0 = 0.0,
    .t_end = 10.0,
    .params = dp_params,
    .n_params = sizeof dp_params / sizeof dp_params[0],
    .dims = dims,
    .setup = dp_setup,
    .teardown = teardown,
    .initial = initial,
    .mass = mass,
    .force = force,
    .constraint = constraint,
    .jacobian = jacobian,
    .gamma = gamma_fn,
    .energy = energy,
    .mass_sparse = mass_sparse,
    .jacobian_sparse = jacobian_sparse,
    .independent = independent,
    .force_q = mbs_zero_force_derivative,
    .force_v = mbs_zero_force_derivative,
    .gtlambda_q = gtlambda_q,
    .gw_q = gw_q,
};
