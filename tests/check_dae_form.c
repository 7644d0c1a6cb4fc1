/* The DAE formulation layer (methods/formulations/dae_form.h): on the exact pendulum
 * solution the residual E y' - F (y' by central differences) is O(dt^2) in the
 * differential rows and round-off in the algebraic rows, for all four forms;
 * dF/dy matches central differences of F (also for a problem with a
 * q-dependent kinematic matrix H, mass matrix and force); error paths. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../methods/formulations/dae_form.h"
#include "testutil.h"

static const mbs_form_kind kinds[4] = {MBS_FORM_INDEX3, MBS_FORM_INDEX2, MBS_FORM_GGL,
                                       MBS_FORM_BAUMGARTE2};
enum { NMAX = 12 };

typedef struct form_fixture {
    mbs_problem pb;
    mbs_ctx ctx;
    mbs_dae_form *f;
    gsl_matrix *E, *J;
} form_fixture;

static void fixture_open(form_fixture *fx, const char *spec, mbs_form_kind kind)
{
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&fx->pb, spec, err, sizeof err), MBS_OK);
    ck_assert_int_eq(mbs_ctx_init(&fx->ctx, &fx->pb), MBS_OK);
    ck_assert_int_eq(mbs_dae_form_alloc(&fx->f, &fx->ctx, kind), MBS_OK);
    ck_assert(fx->f->n <= NMAX);
    fx->f->h = 0.01;
    fx->f->baumgarte_C = 2.0;
    fx->E = gsl_matrix_alloc(fx->f->n, fx->f->n);
    fx->J = gsl_matrix_alloc(fx->f->n, fx->f->n);
}

static void fixture_close(form_fixture *fx)
{
    gsl_matrix_free(fx->E);
    gsl_matrix_free(fx->J);
    mbs_dae_form_free(fx->f);
    mbs_ctx_free(&fx->ctx);
    mbs_problem_close(&fx->pb);
}

/* y(t) of the form from the exact solution (mu = 0). */
static void exact_y(form_fixture *fx, double t, double *y)
{
    double s[NMAX];
    const mbs_problem *pb = &fx->pb;
    ck_assert_int_eq(pb->def->exact(pb, t, s, s + pb->nq, s + pb->nq + pb->nv), MBS_OK);
    mbs_dae_form_from_state(fx->f, s, y);
}

/* max over t of |(E y' - F)_i| for differential rows (diff) and algebraic rows (alg). */
static void residuals(form_fixture *fx, double dt, double *diff, double *alg)
{
    size_t n = fx->f->n, nd = fx->f->nq + fx->f->nv;
    double y[NMAX], ya[NMAX], yb[NMAX], F[NMAX];
    *diff = *alg = 0.0;
    for (double t = 0.3; t <= 6.0; t += 0.237) {
        exact_y(fx, t, y);
        exact_y(fx, t + dt, ya);
        exact_y(fx, t - dt, yb);
        ck_assert_int_eq(mbs_dae_form_mass(fx->f, &fx->ctx, t, y, fx->E), MBS_OK);
        ck_assert_int_eq(mbs_dae_form_rhs(fx->f, &fx->ctx, t, y, F), MBS_OK);
        for (size_t i = 0; i < n; i++) {
            double r = -F[i];
            for (size_t j = 0; j < n; j++)
                r += gsl_matrix_get(fx->E, i, j) * (ya[j] - yb[j]) / (2.0 * dt);
            if (i < nd)
                *diff = fmax(*diff, fabs(r));
            else
                *alg = fmax(*alg, fabs(r));
        }
    }
}

static void check_residual(const char *spec, mbs_form_kind kind)
{
    form_fixture fx;
    fixture_open(&fx, spec, kind);
    double d1, a1, d2, a2;
    residuals(&fx, 2e-3, &d1, &a1);
    residuals(&fx, 1e-3, &d2, &a2);
    /* Central differences: error ~ dt^2/6 |y'''|, so halving dt divides it by 4. */
    ck_assert_msg(d1 < 1e-2 && d1 > 1e-8, "%s/%s: differential residual %g",
                  spec, mbs_dae_form_kind_name(kind), d1);
    ck_assert_msg(fabs(d1 / d2 - 4.0) < 0.2, "%s/%s: residual ratio %g (expected 4)", spec,
                  mbs_dae_form_kind_name(kind), d1 / d2);
    ck_assert_msg(a1 < 1e-12 && a2 < 1e-12, "%s/%s: algebraic residual %g", spec,
                  mbs_dae_form_kind_name(kind), fmax(a1, a2));
    fixture_close(&fx);
}

START_TEST(residual_on_exact_solution)
{
    static const char *specs[] = {"pendulum", "pendulum:x0=0.2", "pendulum-body"};
    for (size_t p = 0; p < 3; p++)
        check_residual(specs[p], kinds[_i]);
}
END_TEST

/* J against central differences of F at the point y. */
static void check_jacobian_at(form_fixture *fx, double t, const double *y, const char *what)
{
    size_t n = fx->f->n;
    double yp[NMAX], Fa[NMAX], Fb[NMAX];
    ck_assert_int_eq(mbs_dae_form_jac(fx->f, &fx->ctx, t, y, fx->J), MBS_OK);
    for (size_t j = 0; j < n; j++) {
        double d = 1e-5 * fmax(1.0, fabs(y[j]));
        memcpy(yp, y, n * sizeof *yp);
        yp[j] = y[j] + d;
        ck_assert_int_eq(mbs_dae_form_rhs(fx->f, &fx->ctx, t, yp, Fa), MBS_OK);
        yp[j] = y[j] - d;
        ck_assert_int_eq(mbs_dae_form_rhs(fx->f, &fx->ctx, t, yp, Fb), MBS_OK);
        for (size_t i = 0; i < n; i++) {
            double fd = (Fa[i] - Fb[i]) / (2.0 * d), an = gsl_matrix_get(fx->J, i, j);
            ck_assert_msg(fabs(fd - an) <= 1e-6 * (1.0 + fabs(fd)),
                          "%s/%s: J[%zu][%zu] = %.10g, central differences %.10g", what,
                          mbs_dae_form_kind_name(fx->f->kind), i, j, an, fd);
        }
    }
}

START_TEST(jacobian_matches_differences)
{
    static const char *specs[] = {"pendulum", "pendulum-body"};
    for (size_t p = 0; p < 2; p++) {
        form_fixture fx;
        fixture_open(&fx, specs[p], kinds[_i]);
        double y[NMAX];
        for (double t = 0.1; t < 3.0; t += 0.7) {
            exact_y(&fx, t, y);
            check_jacobian_at(&fx, t, y, specs[p]);
            /* off the manifold, with mu != 0 */
            for (size_t i = 0; i < fx.f->n; i++)
                y[i] += 0.05 * sin(3.0 * (double)i + t);
            check_jacobian_at(&fx, t, y, specs[p]);
        }
        fixture_close(&fx);
    }
}
END_TEST

/* ---- a synthetic problem with q-dependent H, M and force (no exact solution):
 * q = (x, y), H(q) = diag(1 + x^2, 1), M(q) = diag(1 + y^2, 2),
 * f = (sin(x) v1, -9.81 + v0^2), g = (x^2 + y^2 - 1)/2, rheonomic g_t = t x. */
static int k_dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = 2;
    *nv = 2;
    *nl = 1;
    return MBS_OK;
}
static int k_initial(const mbs_problem *pb, double *q0, double *v0, double *l0, int *have)
{
    (void)pb;
    q0[0] = 0.0, q0[1] = -1.0, v0[0] = 1.0, v0[1] = 0.0, l0[0] = 0.0;
    *have = 0;
    return MBS_OK;
}
static int k_mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)pb, (void)t;
    gsl_matrix_set_zero(M);
    gsl_matrix_set(M, 0, 0, 1.0 + q[1] * q[1]);
    gsl_matrix_set(M, 1, 1, 2.0);
    return MBS_OK;
}
static int k_force(const mbs_problem *pb, double t, const double *q, const double *v,
                   double *f)
{
    (void)pb, (void)t;
    f[0] = sin(q[0]) * v[1];
    f[1] = -9.81 + v[0] * v[0];
    return MBS_OK;
}
static int k_g(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)pb, (void)t;
    g[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - 1.0);
    return MBS_OK;
}
static int k_G(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)pb, (void)t;
    gsl_matrix_set(G, 0, 0, q[0]);
    gsl_matrix_set(G, 0, 1, q[1]);
    return MBS_OK;
}
static int k_gt(const mbs_problem *pb, double t, const double *q, double *gt)
{
    (void)pb;
    gt[0] = t * q[0];
    return MBS_OK;
}
static int k_gamma(const mbs_problem *pb, double t, const double *q, const double *v,
                   double *gam)
{
    (void)pb, (void)t, (void)q, (void)v;
    gam[0] = 0.0; /* not used by the DAE forms */
    return MBS_OK;
}
static int k_H(const mbs_problem *pb, const double *q, gsl_matrix *H)
{
    (void)pb;
    gsl_matrix_set_zero(H);
    gsl_matrix_set(H, 0, 0, 1.0 + q[0] * q[0]);
    gsl_matrix_set(H, 1, 1, 1.0);
    return MBS_OK;
}
static const mbs_problem_def kin_def = {
    .name = "test-kinematic",
    .title = "synthetic problem with q-dependent H",
    .flags = MBS_PB_RHEONOMIC,
    .index = 3,
    .t_end = 1.0,
    .dims = k_dims,
    .initial = k_initial,
    .mass = k_mass,
    .force = k_force,
    .constraint = k_g,
    .jacobian = k_G,
    .constraint_t = k_gt,
    .gamma = k_gamma,
    .kinematic = k_H,
};

START_TEST(jacobian_kinematic)
{
    form_fixture fx;
    memset(&fx, 0, sizeof fx);
    fx.pb.def = &kin_def;
    fx.pb.nq = fx.pb.nv = 2;
    fx.pb.nl = 1;
    fx.pb.flags = kin_def.flags;
    ck_assert_int_eq(mbs_ctx_init(&fx.ctx, &fx.pb), MBS_OK);
    ck_assert_int_eq(mbs_dae_form_alloc(&fx.f, &fx.ctx, kinds[_i]), MBS_OK);
    fx.f->h = 0.01;
    fx.f->baumgarte_C = 2.0;
    size_t n = fx.f->n;
    fx.E = gsl_matrix_alloc(n, n);
    fx.J = gsl_matrix_alloc(n, n);
    double y[NMAX] = {0.3, -0.9, 0.7, -0.2, 1.5, -0.4};
    check_jacobian_at(&fx, 0.4, y, "test-kinematic");
    /* E = diag(I, M(q), 0) and F's first block is H v (- G^T mu for GGL). */
    double F[NMAX];
    ck_assert_int_eq(mbs_dae_form_mass(fx.f, &fx.ctx, 0.4, y, fx.E), MBS_OK);
    ck_assert_double_eq(gsl_matrix_get(fx.E, 0, 0), 1.0);
    ck_assert_double_eq_tol(gsl_matrix_get(fx.E, 2, 2), 1.81, 1e-15);
    ck_assert_double_eq(gsl_matrix_get(fx.E, 3, 3), 2.0);
    ck_assert_double_eq(gsl_matrix_get(fx.E, 4, 4), 0.0);
    ck_assert_int_eq(mbs_dae_form_rhs(fx.f, &fx.ctx, 0.4, y, F), MBS_OK);
    double mu = kinds[_i] == MBS_FORM_GGL ? y[5] : 0.0;
    ck_assert_double_eq_tol(F[0], 1.09 * 0.7 - 0.3 * mu, 1e-15);
    ck_assert_double_eq_tol(F[1], -0.2 + 0.9 * mu, 1e-15);
    /* last row: B v + g_t with B = G H = (x (1 + x^2), y) */
    double bv = 0.3 * 1.09 * 0.7 + 0.9 * 0.2 + 0.4 * 0.3;
    double g = 0.5 * (0.09 + 0.81 - 1.0);
    double expect = kinds[_i] == MBS_FORM_INDEX3       ? g
                    : kinds[_i] == MBS_FORM_BAUMGARTE2 ? bv + 2.0 / 0.01 * g
                                                       : bv;
    ck_assert_double_eq_tol(F[n - 1], expect, 1e-14);
    gsl_matrix_free(fx.E);
    gsl_matrix_free(fx.J);
    mbs_dae_form_free(fx.f);
    mbs_ctx_free(&fx.ctx);
}
END_TEST

START_TEST(layout_and_errors)
{
    form_fixture fx;
    fixture_open(&fx, "pendulum", MBS_FORM_GGL);
    ck_assert_uint_eq(fx.f->n, 6);
    ck_assert_uint_eq(fx.f->nmu, 1);
    static const int idx[6] = {1, 1, 1, 1, 2, 2};
    for (size_t i = 0; i < 6; i++)
        ck_assert_int_eq(fx.f->var_index[i], idx[i]);
    ck_assert(mbs_dae_form_position_row(fx.f, 4) && !mbs_dae_form_position_row(fx.f, 5));
    double s[5] = {1, 2, 3, 4, 5}, y[6], back[5];
    mbs_dae_form_from_state(fx.f, s, y);
    ck_assert_double_eq(y[5], 0.0);
    y[5] = 7.0;
    mbs_dae_form_to_state(fx.f, y, back);
    ck_assert_mem_eq(s, back, sizeof s);
    fixture_close(&fx);

    fixture_open(&fx, "pendulum", MBS_FORM_INDEX3);
    ck_assert_int_eq(fx.f->var_index[4], 3);
    ck_assert_uint_eq(fx.f->n, 5);
    fixture_close(&fx);

    /* Baumgarte2 without a step size is bad input with a reason. */
    fixture_open(&fx, "pendulum", MBS_FORM_BAUMGARTE2);
    double F[6];
    fx.f->h = 0.0;
    exact_y(&fx, 0.0, y);
    ck_assert_int_eq(mbs_dae_form_rhs(fx.f, &fx.ctx, 0.0, y, F), MBS_BAD_INPUT);
    ck_assert(strstr(fx.ctx.reason, "baumgarte2") != NULL);
    mbs_dae_form *bad = NULL;
    ck_assert_int_eq(mbs_dae_form_alloc(&bad, &fx.ctx, (mbs_form_kind)17), MBS_BAD_INPUT);
    ck_assert_ptr_null(bad);
    fixture_close(&fx);
    mbs_dae_form_free(NULL);
}
END_TEST

Suite *mbs_suite_dae_form(void)
{
    Suite *s = suite_create("dae_form");
    TCase *tc = tcase_create("dae_form");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, residual_on_exact_solution, 0, 4);
    tcase_add_loop_test(tc, jacobian_matches_differences, 0, 4);
    tcase_add_loop_test(tc, jacobian_kinematic, 0, 4);
    tcase_add_test(tc, layout_and_errors);
    suite_add_tcase(s, tc);
    return s;
}
