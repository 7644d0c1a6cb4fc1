/* Core: the pendulum's exact solution, index1/rk4 order, tolerance-driven
 * methods, fitters, and the command line's error paths. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/converge.h"
#include "../harness/fit.h"
#include "../problems/problem.h"
#include "testutil.h"

/* The exact pendulum solution satisfies g = 0, G v = 0, conserves energy to
 * 1e-12, and satisfies the equations of motion (central differences). */
static void check_exact_solution(const char *spec)
{
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, spec, err, sizeof err), MBS_OK);
    size_t nq = pb.nq, nv = pb.nv, nl = pb.nl;
    ck_assert(nq <= 4 && nl <= 2);
    double q[4], v[4], l[2], g[2], f[4], qa[4], va[4], qb[4], vb[4], la[2];
    double Mdata[16], Gdata[8];
    gsl_matrix_view M = gsl_matrix_view_array(Mdata, nv, nv);
    gsl_matrix_view G = gsl_matrix_view_array(Gdata, nl, nq);
    ck_assert_int_eq(pb.def->exact(&pb, 0.0, q, v, l), MBS_OK);
    double E0 = pb.def->energy(&pb, 0.0, q, v);
    const double dt = 1e-4;
    for (double t = 0.0; t <= 10.0; t += 0.0137) {
        ck_assert_int_eq(pb.def->exact(&pb, t, q, v, l), MBS_OK);
        pb.def->constraint(&pb, t, q, g);
        pb.def->jacobian(&pb, t, q, &G.matrix);
        for (size_t i = 0; i < nl; i++) {
            ck_assert_double_le(fabs(g[i]), 1e-12);
            double gv = 0.0;
            for (size_t j = 0; j < nq; j++)
                gv += gsl_matrix_get(&G.matrix, i, j) * v[j];
            ck_assert_double_le(fabs(gv), 1e-12);
        }
        double E = pb.def->energy(&pb, t, q, v);
        ck_assert_double_le(fabs(E - E0), 1e-12 * fabs(E0));
        /* M v' = f - G^T lambda with v' by central differences (error O(dt^2)). */
        pb.def->exact(&pb, t + dt, qa, va, la);
        pb.def->exact(&pb, t - dt, qb, vb, la);
        pb.def->mass(&pb, t, q, &M.matrix);
        pb.def->force(&pb, t, q, v, f);
        for (size_t i = 0; i < nv; i++) {
            double r = -f[i];
            for (size_t j = 0; j < nv; j++)
                r += gsl_matrix_get(&M.matrix, i, j) * (va[j] - vb[j]) / (2 * dt);
            for (size_t k = 0; k < nl; k++)
                r += gsl_matrix_get(&G.matrix, k, i) * l[k];
            ck_assert_msg(fabs(r) < 1e-5 * (1.0 + fabs(f[i])), "%s: EoM residual %g at t=%g",
                          spec, r, t);
            /* q' = v */
            ck_assert_double_le(fabs((qa[i] - qb[i]) / (2 * dt) - v[i]), 1e-6);
        }
    }
    mbs_problem_close(&pb);
}

START_TEST(exact_pendulum)
{
    check_exact_solution("pendulum");
    check_exact_solution("pendulum:x0=0.2");
    check_exact_solution("pendulum-body");
}
END_TEST

START_TEST(rk4_order_four)
{
    mbs_run_spec base = {.problem = "pendulum", .method = "index1/rk4", .t_end = NAN,
                         .measure = 1};
    mbs_converge *cv = malloc(sizeof *cv);
    char err[256];
    ck_assert_int_eq(mbs_converge_run(&base, 0.01, 6, 2.0, cv, err, sizeof err), MBS_OK);
    for (int g = 0; g < 3; g++) {
        ck_assert_msg(cv->fit[g].established, "group %d not established", g);
        ck_assert_double_le(fabs(cv->fit[g].p - 4.0), 0.2);
        ck_assert(cv->fit[g].ci_low <= 4.0 + 0.2 && cv->fit[g].ci_high >= 4.0 - 0.2);
    }
    mbs_converge_free(cv);
    free(cv);
}
END_TEST

START_TEST(chol_equals_lu)
{
    mbs_record a, b;
    mbs_test_run("pendulum-body", "index1/rk4", 0.01, NAN, 2.0, &a);
    mbs_test_run("pendulum-body", "index1/rk4:linsol=chol", 0.01, NAN, 2.0, &b);
    ck_assert_int_eq(a.status, MBS_OK);
    ck_assert_int_eq(b.status, MBS_OK);
    for (size_t i = 0; i < 8; i++)
        ck_assert_double_le(fabs(a.final[i] - b.final[i]), 1e-10 * (1.0 + fabs(a.final[i])));
    mbs_record_free(&a);
    mbs_record_free(&b);
}
END_TEST

Suite *mbs_suite_core(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, exact_pendulum);
    tcase_add_test(tc, rk4_order_four);
    tcase_add_test(tc, chol_equals_lu);
    suite_add_tcase(s, tc);
    return s;
}
