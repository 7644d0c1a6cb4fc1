/* The IFToMM benchmark problems as problems (González, Dopico, Lugrís and Cuadrado 2006
 * [gonzalez2006benchmarking]; docs/problems.md, "IFToMM benchmark problems"): A01 as a
 * parameter set of the pendulum, and the stored references of A03-A05 checked against
 * what they must satisfy independently of the codes that computed them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/reference.h"
#include "../harness/traj.h"
#include "testutil.h"

/* A01 `simple-pendulum` is the pendulum's model under another parameter set: every
 * callback of the model is the pendulum's own (no second copy of the equations), with
 * the benchmark's t_end, output grid and reported quantities; the mirror start
 * side=left moves P1 as the mirror image of side=right (x -> -x, y the same) at the
 * quarter, half and whole period and at the end of the 2000 s. */
START_TEST(a01_parameter_set_of_pendulum)
{
    const mbs_problem_def *p = mbs_problem_find("pendulum"),
                          *s = mbs_problem_find("simple-pendulum");
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(s);
    ck_assert(s->mass == p->mass);
    ck_assert(s->force == p->force);
    ck_assert(s->constraint == p->constraint);
    ck_assert(s->jacobian == p->jacobian);
    ck_assert(s->gamma == p->gamma);
    ck_assert(s->exact == p->exact);
    ck_assert(s->energy == p->energy);
    ck_assert(s->reported == p->reported);
    ck_assert_double_eq(s->t_end, 2000.0);
    ck_assert_int_eq(s->output_steps, 4000);
    mbs_problem r, l;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&r, "simple-pendulum", err, sizeof err), MBS_OK);
    ck_assert_int_eq(mbs_problem_open(&l, "simple-pendulum:side=left", err, sizeof err), MBS_OK);
    ck_assert_int_eq(r.n_reported, 2);
    ck_assert_str_eq(r.reported_names[0], "x_P1");
    ck_assert_str_eq(r.reported_names[1], "y_P1");
    /* the period of the 90-degree libration: 4 K(sin 45 deg) / sqrt(g/l) = 2.3678 s */
    double T = 4.0 * 1.8540746773013719 / sqrt(9.81);
    const double ts[] = {0.25 * T, 0.5 * T, T, 2000.0};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        double qr[2], vr[2], ql[2], vl[2], o[2];
        ck_assert_int_eq(r.def->exact(&r, ts[i], qr, vr, NULL), MBS_OK);
        ck_assert_int_eq(l.def->exact(&l, ts[i], ql, vl, NULL), MBS_OK);
        ck_assert_double_eq_tol(ql[0], -qr[0], 1e-12);
        ck_assert_double_eq_tol(ql[1], qr[1], 1e-12);
        ck_assert_int_eq(r.def->reported(&r, ts[i], qr, vr, o), MBS_OK);
        ck_assert(o[0] == qr[0] && o[1] == qr[1]);
    }
    double q[2], v[2];
    ck_assert_int_eq(r.def->exact(&r, 0.5 * T, q, v, NULL), MBS_OK); /* the far side */
    ck_assert_double_eq_tol(q[0], -1.0, 1e-12);
    ck_assert_double_eq_tol(q[1], 0.0, 1e-12);
    ck_assert_int_eq(r.def->exact(&r, 0.25 * T, q, v, NULL), MBS_OK); /* the bottom */
    ck_assert_double_eq_tol(q[1], -1.0, 1e-12);
    /* energy from the lowest point: m g l at the start, the same at the bottom */
    ck_assert_double_eq_tol(r.def->energy(&r, 0.25 * T, q, v), 9.81, 1e-11);
    mbs_problem_close(&r);
    mbs_problem_close(&l);
}
END_TEST

Suite *mbs_suite_iftomm_problems(void)
{
    Suite *s = suite_create("iftomm_problems");
    TCase *tc = tcase_create("iftomm_problems");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a01_parameter_set_of_pendulum);
    suite_add_tcase(s, tc);
    return s;
}
