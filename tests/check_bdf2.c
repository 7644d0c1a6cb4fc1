/* Adaptive BDF (methods/integrators/bdf/bdf.c) on problems without constraints (n_lambda = 0):
 *  - [arnold2013recursive] Fig. 2 trend on `smallmass` ([arnold2013recursive] Sect. 2.2, Eq. (5)):
 *    index2/bdf at tol 1e-6 takes more steps as m1/m2 decreases from 1e-1 to
 *    1e-4 (at least doubling per decade: the fast frequency grows like
 *    m1^(-1/2) and the light damping keeps the fast oscillation alive), and few
 *    steps at m1 = 0, where M = diag(0, m2) is singular and the problem is the
 *    first-order DAE of Eq. (6) (measured: 2988, 10532, 34644, 131222 and 691);
 *    the m1 = 0 solution agrees with the exact solution;
 *  - the m1 = 0 start (v'_0 from the differentiated zero rows of M) works for
 *    every adaptive form; relative coordinates at m1 = 0 (M rank 1 without zero
 *    rows) are declined with a one-line reason instead of crashing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

START_TEST(smallmass_step_trend_bdf)
{
    const double m1[] = {1e-1, 1e-2, 1e-3, 1e-4, 0.0};
    long steps[5];
    for (int k = 0; k < 5; k++) {
        char spec[128];
        snprintf(spec, sizeof spec, "smallmass:m1=%g", m1[k]);
        mbs_record rec;
        mbs_test_run(spec, "index2/bdf", NAN, 1e-6, NAN, &rec);
        ck_assert_msg(rec.status == MBS_OK, "%s: %s", spec, rec.reason);
        steps[k] = rec.cnt.steps;
        if (k == 4) /* the singular-mass DAE is solved, not only survived */
            ck_assert_msg(rec.err.q <= 1e-4, "%s: err_q %.3g", spec, rec.err.q);
        mbs_record_free(&rec);
        printf("bdf2: smallmass m1/m2 = %g: index2/bdf tol 1e-6: %ld steps\n", m1[k], steps[k]);
    }
    for (int k = 1; k < 4; k++)
        ck_assert_msg(steps[k] >= 2 * steps[k - 1], "steps %ld -> %ld", steps[k - 1], steps[k]);
    ck_assert_msg(steps[4] * 3 < steps[0], "m1 = 0: %ld steps, m1 = 0.1: %ld", steps[4],
                  steps[0]);
}
END_TEST

START_TEST(singular_mass_start)
{
    static const char *methods[] = {"ggl/bdf", "index3/bdf", "proj-index2/bdf"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        mbs_record rec;
        mbs_test_run("smallmass:m1=0,d1=1,d2=2", methods[i], NAN, 1e-6, NAN, &rec);
        ck_assert_msg(rec.status == MBS_OK, "%s: %s", methods[i], rec.reason);
        ck_assert_msg(rec.err.q <= 1e-4, "%s: err_q %.3g", methods[i], rec.err.q);
        mbs_record_free(&rec);
    }
    mbs_record rec;
    mbs_test_run("smallmass:coords=relative,m1=0", "index2/bdf", NAN, 1e-6, NAN, &rec);
    ck_assert_int_eq(rec.status, MBS_SINGULAR_MATRIX);
    ck_assert_msg(strstr(rec.reason, "singular-mass DAE") != NULL, "reason: %s", rec.reason);
    ck_assert_ptr_null(strchr(rec.reason, '\n'));
    mbs_record_free(&rec);
}
END_TEST

Suite *mbs_suite_bdf2(void); /* also declared through suites.def */

Suite *mbs_suite_bdf2(void)
{
    Suite *s = suite_create("bdf2");
    TCase *tc = tcase_create("bdf2");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, smallmass_step_trend_bdf);
    tcase_add_test(tc, singular_mass_start);
    suite_add_tcase(s, tc);
    return s;
}
