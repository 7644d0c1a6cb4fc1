/* Small-mass coupled oscillator ([arnold2013recursive], Sect. 2.2, Eq. (5), Fig. 1): two masses
 * on the x axis, spring c1 and damper d1 from m1 to the ground, spring c2 and
 * damper d2 from m1 to m2, force F(t) on m1.  Absolute coordinates p = (p1, p2):
 *     m1 p1'' = F(t) - d1 p1' - c1 p1 + d2 (p2' - p1') + c2 (p2 - p1),      (5a)
 *     m2 p2'' = -d2 (p2' - p1') - c2 (p2 - p1).                             (5b)
 * At m1 = 0, (5a) is the implicit first-order equation (6): M = diag(0, m2) is
 * singular (flag singular-M) and the problem is a first-order DAE of index 1
 * (d1 + d2 > 0), which BDF methods solve with large steps (Fig. 2).
 * `coords=relative`: q1 = p1, q2 = p2 - p1 (end of Sect. 2.2), for which
 *     M = [[m1 + m2, m2], [m2, m2]],  f = (F - d1 q1' - c1 q1, -d2 q2' - c2 q2),
 * rank 1 at m1 = 0, where q1'' no longer appears in the m1 equation.
 *
 * The paper's parameter values (Burgermeister et al. 2011) are not public; the
 * defaults here are OURS: m2 = 1 kg, c1 = c2 = 1e4 N/m (stiff springs), very
 * light damping d1 = d2 = 1e-6 N s/m (so that the fast oscillation of m1, excited
 * by the initial force imbalance, persists over [0, 1] s for every m1 >= 1e-6 m2:
 * decay time 2 m1/(d1 + d2) >= 1 s; this is what makes an error-controlled
 * integrator take more steps as m1 decreases, Fig. 2), F(t) = F0 sin(2 pi f t)
 * with F0 = 100 N, f = 1 Hz, p1(0) = 0, p2(0) = 0.01 m, p'(0) = 0 for m1 > 0.
 * At m1 = 0 the velocity p1'(0) is not free: it is taken from Eq. (6); with the
 * default values p1 then relaxes to its quasi-static value in an initial layer of
 * time constant (d1 + d2)/(c1 + c2) = 1e-10 s (p1'(0) = 5e7 m/s).
 *
 * Exact solution: the system is linear, y' = A y + b F0 sin(w t) with
 * y = (p1, p2, p1', p2') (m1 > 0) or y = (p1, p2, p2') (m1 = 0, p1' from Eq. (6));
 * y(t) = Re sum_k c_k exp(mu_k (t - t0)) V_k + F0 Im(z exp(i w t)), with the
 * eigenpairs (mu_k, V_k) of A (GSL nonsymmv), (i w I - A) z = b and V c = y0 - F0 Im z.
 * Set-up checks the decomposition reproduces y0 (A defective: rejected). */
#include <gsl/gsl_complex_math.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_math.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/status.h"
#include "problem.h"

enum { P_M1, P_M2, P_C1, P_C2, P_D1, P_D2, P_F0, P_FREQ, P_P10, P_P20, P_COORDS };

static const mbs_param_def params[] = {
    [P_M1] = {"m1", 1e-3, 0.0, 1e3, "small mass [kg] (0: first-order DAE, Eq. (6))", NULL, 0},
    [P_M2] = {"m2", 1.0, 1e-6, 1e6, "large mass [kg]", NULL, 0},
    [P_C1] = {"c1", 1e4, 0.0, 1e9, "spring m1-ground [N/m]", NULL, 0},
    [P_C2] = {"c2", 1e4, 0.0, 1e9, "spring m1-m2 [N/m]", NULL, 0},
    [P_D1] = {"d1", 1e-6, 0.0, 1e6, "damper m1-ground [N s/m]", NULL, 0},
    [P_D2] = {"d2", 1e-6, 0.0, 1e6, "damper m1-m2 [N s/m]", NULL, 0},
    [P_F0] = {"F0", 100.0, 0.0, 1e6, "amplitude of F(t) = F0 sin(2 pi f t) [N]", NULL, 0},
    [P_FREQ] = {"f", 1.0, 0.0, 1e4, "frequency of F(t) [Hz]", NULL, 0},
    [P_P10] = {"p10", 0.0, -1e3, 1e3, "p1(0) [m]", NULL, 0},
    [P_P20] = {"p20", 0.01, -1e3, 1e3, "p2(0) [m]", NULL, 0},
    [P_COORDS] = {"coords", 0, 0, 1, "absolute (p1, p2) or relative (p1, p2 - p1)",
                  "absolute,relative", 1},
};

#define PAR(i) mbs_pb_param(pb, i)
#define RELATIVE(pb) (mbs_pb_param(pb, P_COORDS) != 0.0)

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = 2;
    *nv = 2;
    *nl = 0;
    return MBS_OK;
}

static double F(const mbs_problem *pb, double t)
{
    return PAR(P_F0) * sin(2.0 * M_PI * PAR(P_FREQ) * t);
}

/* Data of the exact solution (see the header). */
typedef struct sm_exact {
    size_t n;
    gsl_complex mu[4], c[4], z[4], V[16]; /* V row-major n x n, columns = eigenvectors */
    double a1[3], b1, dd;                 /* m1 = 0: p1' = a1 . y + b1 F(t) */
} sm_exact;

/* Absolute state y of the first-order form at t. */
static void exact_y(const mbs_problem *pb, const sm_exact *e, double t, double *y)
{
    double w = 2.0 * M_PI * PAR(P_FREQ);
    gsl_complex ew = gsl_complex_polar(1.0, w * t);
    for (size_t i = 0; i < e->n; i++) {
        double r = PAR(P_F0) * GSL_IMAG(gsl_complex_mul(e->z[i], ew));
        for (size_t k = 0; k < e->n; k++) {
            gsl_complex ek = gsl_complex_exp(gsl_complex_mul_real(e->mu[k], t - pb->t0));
            r += GSL_REAL(gsl_complex_mul(e->c[k], gsl_complex_mul(ek, e->V[i * e->n + k])));
        }
        y[i] = r;
    }
}

static int initial(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                   int *have_lambda);

static int build_exact(mbs_problem *pb, sm_exact *e)
{
    double m1 = PAR(P_M1), m2 = PAR(P_M2), c1 = PAR(P_C1), c2 = PAR(P_C2), d1 = PAR(P_D1),
           d2 = PAR(P_D2), w = 2.0 * M_PI * PAR(P_FREQ);
    size_t n = m1 > 0.0 ? 4 : 3;
    double A[16] = {0}, b[4] = {0};
    e->n = n;
    if (m1 > 0.0) {
        A[0 * 4 + 2] = 1.0;
        A[1 * 4 + 3] = 1.0;
        A[2 * 4 + 0] = -(c1 + c2) / m1, A[2 * 4 + 1] = c2 / m1;
        A[2 * 4 + 2] = -(d1 + d2) / m1, A[2 * 4 + 3] = d2 / m1;
        A[3 * 4 + 0] = c2 / m2, A[3 * 4 + 1] = -c2 / m2;
        A[3 * 4 + 2] = d2 / m2, A[3 * 4 + 3] = -d2 / m2;
        b[2] = 1.0 / m1;
    } else {
        /* y = (p1, p2, v2); Eq. (6): p1' = (F - (c1 + c2) p1 + c2 p2 + d2 v2)/(d1 + d2) */
        double dd = d1 + d2;
        e->dd = dd;
        e->a1[0] = -(c1 + c2) / dd, e->a1[1] = c2 / dd, e->a1[2] = d2 / dd;
        e->b1 = 1.0 / dd;
        A[0 * 3 + 0] = e->a1[0], A[0 * 3 + 1] = e->a1[1], A[0 * 3 + 2] = e->a1[2];
        A[1 * 3 + 2] = 1.0;
        /* m2 v2' = -d2 (v2 - p1') - c2 (p2 - p1) */
        A[2 * 3 + 0] = (c2 + d2 * e->a1[0]) / m2;
        A[2 * 3 + 1] = (-c2 + d2 * e->a1[1]) / m2;
        A[2 * 3 + 2] = (-d2 + d2 * e->a1[2]) / m2;
        b[0] = e->b1;
        b[2] = d2 * e->b1 / m2;
    }
    int st = MBS_NO_MEMORY;
    gsl_matrix *Am = gsl_matrix_alloc(n, n);
    gsl_vector_complex *ev = gsl_vector_complex_alloc(n);
    gsl_matrix_complex *V = gsl_matrix_complex_alloc(n, n), *K = gsl_matrix_complex_alloc(n, n);
    gsl_vector_complex *rhs = gsl_vector_complex_alloc(n), *x = gsl_vector_complex_alloc(n);
    gsl_permutation *perm = gsl_permutation_alloc(n);
    gsl_eigen_nonsymmv_workspace *ws = gsl_eigen_nonsymmv_alloc(n);
    if (!Am || !ev || !V || !K || !rhs || !x || !perm || !ws)
        goto done;
    st = MBS_BAD_INPUT;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            gsl_matrix_set(Am, i, j, A[i * n + j]);
    if (gsl_eigen_nonsymmv(Am, ev, V, ws) != GSL_SUCCESS)
        goto done;
    int sg;
    /* particular solution: (i w I - A) z = b */
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++)
            gsl_matrix_complex_set(K, i, j, gsl_complex_rect(-A[i * n + j], i == j ? w : 0.0));
        gsl_vector_complex_set(rhs, i, gsl_complex_rect(b[i], 0.0));
    }
    if (gsl_linalg_complex_LU_decomp(K, perm, &sg) != GSL_SUCCESS ||
        gsl_linalg_complex_LU_solve(K, perm, rhs, x) != GSL_SUCCESS)
        goto done;
    for (size_t i = 0; i < n; i++) {
        e->z[i] = gsl_vector_complex_get(x, i);
        e->mu[i] = gsl_vector_complex_get(ev, i);
    }
    /* homogeneous part: V c = y0 - F0 Im(z exp(i w t0)) */
    double q0[2], v0[2], y0[4];
    int have;
    initial(pb, q0, v0, NULL, &have);
    double p1 = q0[0], p2 = RELATIVE(pb) ? q0[0] + q0[1] : q0[1];
    double pv1 = v0[0], pv2 = RELATIVE(pb) ? v0[0] + v0[1] : v0[1];
    y0[0] = p1, y0[1] = p2;
    if (n == 4)
        y0[2] = pv1, y0[3] = pv2;
    else
        y0[2] = pv2;
    gsl_complex ew = gsl_complex_polar(1.0, w * pb->t0);
    for (size_t i = 0; i < n; i++) {
        double yp = PAR(P_F0) * GSL_IMAG(gsl_complex_mul(e->z[i], ew));
        gsl_vector_complex_set(rhs, i, gsl_complex_rect(y0[i] - yp, 0.0));
        for (size_t j = 0; j < n; j++) {
            e->V[i * n + j] = gsl_matrix_complex_get(V, i, j);
            gsl_matrix_complex_set(K, i, j, e->V[i * n + j]);
        }
    }
    if (gsl_linalg_complex_LU_decomp(K, perm, &sg) != GSL_SUCCESS ||
        gsl_linalg_complex_LU_solve(K, perm, rhs, x) != GSL_SUCCESS)
        goto done;
    for (size_t i = 0; i < n; i++)
        e->c[i] = gsl_vector_complex_get(x, i);
    /* the decomposition must reproduce y0 (fails for a defective A) */
    double y[4], scale = 1.0;
    exact_y(pb, e, pb->t0, y);
    for (size_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(y0[i]));
    st = MBS_OK;
    for (size_t i = 0; i < n; i++)
        if (!(fabs(y[i] - y0[i]) <= 1e-10 * scale))
            st = MBS_BAD_INPUT;
done:
    if (ws)
        gsl_eigen_nonsymmv_free(ws);
    if (perm)
        gsl_permutation_free(perm);
    if (x)
        gsl_vector_complex_free(x);
    if (rhs)
        gsl_vector_complex_free(rhs);
    if (K)
        gsl_matrix_complex_free(K);
    if (V)
        gsl_matrix_complex_free(V);
    if (ev)
        gsl_vector_complex_free(ev);
    if (Am)
        gsl_matrix_free(Am);
    return st;
}

static int setup(mbs_problem *pb, char *err, size_t errlen)
{
    if (PAR(P_M1) == 0.0) {
        if (PAR(P_D1) + PAR(P_D2) <= 0.0) {
            snprintf(err, errlen, "smallmass: m1 = 0 needs d1 + d2 > 0 (Eq. (6) must be "
                                  "an ODE for p1)");
            return MBS_BAD_INPUT;
        }
        pb->flags |= MBS_PB_SINGULAR_MASS;
    }
    sm_exact *e = calloc(1, sizeof *e);
    if (!e)
        return MBS_NO_MEMORY;
    int st = build_exact(pb, e);
    if (st != MBS_OK) {
        free(e);
        if (st == MBS_BAD_INPUT)
            snprintf(err, errlen, "smallmass: these parameters make the system matrix "
                                  "defective (no eigenvector basis for the exact solution)");
        return st;
    }
    pb->data = e;
    return MBS_OK;
}

static void teardown(mbs_problem *pb)
{
    free(pb->data);
    pb->data = NULL;
}

static int exact(const mbs_problem *pb, double t, double *q, double *v, double *lambda)
{
    (void)lambda;
    const sm_exact *e = pb->data;
    double y[4];
    exact_y(pb, e, t, y);
    double p1 = y[0], p2 = y[1], pv1, pv2;
    if (e->n == 4) {
        pv1 = y[2], pv2 = y[3];
    } else {
        pv2 = y[2];
        pv1 = e->a1[0] * y[0] + e->a1[1] * y[1] + e->a1[2] * y[2] + e->b1 * F(pb, t);
    }
    if (q) {
        q[0] = p1;
        q[1] = RELATIVE(pb) ? p2 - p1 : p2;
    }
    if (v) {
        v[0] = pv1;
        v[1] = RELATIVE(pb) ? pv2 - pv1 : pv2;
    }
    return MBS_OK;
}

static int initial(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                   int *have_lambda)
{
    (void)lambda0;
    double p1 = PAR(P_P10), p2 = PAR(P_P20), v2 = 0.0, dd = PAR(P_D1) + PAR(P_D2);
    /* m1 = 0: Eq. (6) solved for p1'. */
    double v1 = PAR(P_M1) == 0.0 ? (F(pb, pb->t0) - PAR(P_C1) * p1 + PAR(P_D2) * v2 +
                            PAR(P_C2) * (p2 - p1)) / dd
                         : 0.0;
    if (RELATIVE(pb)) {
        q0[0] = p1, q0[1] = p2 - p1;
        v0[0] = v1, v0[1] = v2 - v1;
    } else {
        q0[0] = p1, q0[1] = p2;
        v0[0] = v1, v0[1] = v2;
    }
    *have_lambda = 1;
    return MBS_OK;
}

static int mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)t, (void)q;
    double m1 = PAR(P_M1), m2 = PAR(P_M2);
    if (RELATIVE(pb)) {
        gsl_matrix_set(M, 0, 0, m1 + m2);
        gsl_matrix_set(M, 0, 1, m2);
        gsl_matrix_set(M, 1, 0, m2);
        gsl_matrix_set(M, 1, 1, m2);
    } else {
        gsl_matrix_set_zero(M);
        gsl_matrix_set(M, 0, 0, m1);
        gsl_matrix_set(M, 1, 1, m2);
    }
    return MBS_OK;
}

static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    double c1 = PAR(P_C1), c2 = PAR(P_C2), d1 = PAR(P_D1), d2 = PAR(P_D2);
    if (RELATIVE(pb)) {
        /* generalised forces: dp/dq1 = (1, 1), dp/dq2 = (0, 1) */
        f[0] = F(pb, t) - d1 * v[0] - c1 * q[0];
        f[1] = -d2 * v[1] - c2 * q[1];
    } else {
        double s = d2 * (v[1] - v[0]) + c2 * (q[1] - q[0]);
        f[0] = F(pb, t) - d1 * v[0] - c1 * q[0] + s; /* (5a) */
        f[1] = -s;                                   /* (5b) */
    }
    return MBS_OK;
}

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)pb, (void)t, (void)q, (void)g;
    return MBS_OK;
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)pb, (void)t, (void)q, (void)G;
    return MBS_OK;
}

static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    (void)pb, (void)t, (void)q, (void)v, (void)gam;
    return MBS_OK;
}

const mbs_problem_def mbs_problem_smallmass = {
    .name = "smallmass",
    .title = "small-mass coupled oscillator (m1 -> 0), absolute or relative coordinates",
    .citation = "Arnold 2013 [arnold2013recursive], Sect. 2.2, Eqs. (5)-(6), Figs. 1-2; parameter values ours",
    .reference = "exact (eigen-decomposition of the linear system, GSL)",
    .flags = MBS_PB_EXACT,
    .index = 0,
    .t0 = 0.0,
    .t_end = 1.0,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .dims = dims,
    .setup = setup,
    .teardown = teardown,
    .initial = initial,
    .mass = mass,
    .force = force,
    .constraint = constraint,
    .jacobian = jacobian,
    .gamma = gamma_fn,
    .exact = exact,
};
