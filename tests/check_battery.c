/* Defaults that survive a standard study.
 *   - converge leaves levels whose error lies below the stored reference's stated
 *     accuracy out of the fit (reference-limited) and says so; a declined first
 *     level ends the study. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/converge.h"
#include "../harness/io.h"
#include "../harness/reference.h"
#include "testutil.h"

/* fivebar, index1/rk4 from h = 0.02: the stored reference states 8.8 digits
 * (q: 11.0); the errors in v and lambda fall below that accuracy within five
 * levels, and those levels leave the fit. */
START_TEST(converge_reference_limited)
{
    mbs_run_spec base = {.problem = "fivebar", .method = "index1/rk4", .t_end = NAN,
                         .measure = 1};
    mbs_converge *cv = malloc(sizeof *cv);
    ck_assert_ptr_nonnull(cv);
    char err[256];
    ck_assert_int_eq(mbs_converge_run(&base, 0.02, 5, 2.0, cv, err, sizeof err), MBS_OK);
    ck_assert_double_eq_tol(cv->ref_digits, 8.8, 1e-12);
    ck_assert_double_eq_tol(cv->ref_digits_q, 11.0, 1e-12);
    /* the accuracy of v from the reference itself: 10^-8.8 (1 + max |v_ref|) */
    mbs_problem pb;
    ck_assert_int_eq(mbs_problem_open(&pb, "fivebar", err, sizeof err), MBS_OK);
    double *y = calloc(mbs_ny(&pb), sizeof(double));
    char prov[1024];
    ck_assert(mbs_reference_find(&pb, pb.t_end, y, prov, sizeof prov));
    double vmax = 0.0;
    for (size_t k = pb.nq; k < pb.nq + pb.nv; k++)
        vmax = fmax(vmax, fabs(y[k]));
    ck_assert_double_eq_tol(cv->ref_acc[1], pow(10.0, -8.8) * (1.0 + vmax), 1e-20);
    free(y);
    mbs_problem_close(&pb);
    int limited[3] = {0, 0, 0};
    for (int i = 0; i < cv->levels; i++) {
        const double e[3] = {cv->rec[i].err.q, cv->rec[i].err.v, cv->rec[i].err.lambda};
        for (int g = 0; g < 3; g++) {
            ck_assert_int_eq(cv->ref_limited[i][g], e[g] < cv->ref_acc[g]);
            limited[g] += cv->ref_limited[i][g];
            /* no reference-limited level inside a fitted window */
            if (cv->fit[g].established && cv->ref_limited[i][g])
                ck_assert(i < (int)cv->fit[g].first || i > (int)cv->fit[g].last);
        }
    }
    ck_assert_int_ge(limited[1], 2); /* v: measured at levels 4 and 5 */
    ck_assert_int_ge(limited[2], 3); /* lambda: levels 3 to 5 */
    /* v keeps its order on the levels above the reference's accuracy */
    ck_assert(cv->fit[1].established && fabs(cv->fit[1].p - 4.0) <= 0.1);
    char *js = mbs_converge_json(cv);
    ck_assert_ptr_nonnull(strstr(js, "\"reference_limited\":[\"v\",\"lambda\"]"));
    ck_assert_ptr_nonnull(strstr(js, "\"reference_accuracy\":{\"digits\":8.8"));
    free(js);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    mbs_converge_print(cv, f);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(out, "reference-limited: v lambda"));
    ck_assert_ptr_nonnull(strstr(out, "left out of the fit"));
    free(out);
    mbs_converge_free(cv);
    free(cv);
}
END_TEST

/* A declined pair ends after its first level, with the method's reason. */
START_TEST(converge_declined)
{
    mbs_run_spec base = {.problem = "pendulum", .method = "recursive/rk4", .t_end = NAN,
                         .measure = 1};
    mbs_converge *cv = malloc(sizeof *cv);
    ck_assert_ptr_nonnull(cv);
    char err[256];
    ck_assert_int_eq(mbs_converge_run(&base, 0.01, 5, 2.0, cv, err, sizeof err), MBS_OK);
    ck_assert_int_eq(cv->declined, 1);
    ck_assert_int_eq(cv->levels, 1);
    ck_assert_int_eq(cv->rec[0].status, MBS_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(cv->rec[0].reason, "tree description"));
    mbs_converge_free(cv);
    free(cv);
}
END_TEST

Suite *mbs_suite_battery(void)
{
    Suite *s = suite_create("battery");
    TCase *tc = tcase_create("battery");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, converge_reference_limited);
    tcase_add_test(tc, converge_declined);
    suite_add_tcase(s, tc);
    return s;
}
