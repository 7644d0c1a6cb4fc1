/* "No reference, no nan": a problem or parameter set without an
 * exact solution or a stored reference (stored references match their exact
 * parameters and t_end only) must not print nan as a result.  `converge` falls
 * back to self-convergence (errors against one more, finer level, flagged);
 * `run` says that no error was measured, why, and the command that computes a
 * reference; `references -p SPEC --t-end T` is that command.  Before: nan
 * errors, "order not established", exit 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/converge.h"
#include "../harness/io.h"
#include "testutil.h"

/* chain:N=4 has no stored reference: rk4 must show order 4 (within 0.3) in q,
 * v and lambda against the next finer level, flagged as self-convergence. */
START_TEST(converge_self_convergence)
{
    mbs_run_spec base = {.problem = "chain:N=4", .method = "index1/rk4", .t_end = 1.0,
                         .measure = 1};
    mbs_converge *cv = malloc(sizeof *cv);
    ck_assert_ptr_nonnull(cv);
    char err[256];
    ck_assert_int_eq(mbs_converge_run(&base, 0.02, 4, 2.0, cv, err, sizeof err), MBS_OK);
    ck_assert_int_eq(cv->self_ref, 1);
    ck_assert_double_eq_tol(cv->x_ref, 0.02 / 16.0, 1e-15);
    for (int g = 0; g < 3; g++) {
        ck_assert_msg(cv->fit[g].established, "group %d: order not established", g);
        ck_assert_msg(fabs(cv->fit[g].p - 4.0) <= 0.3, "group %d: order %.2f", g, cv->fit[g].p);
    }
    for (int i = 0; i < cv->levels; i++) {
        ck_assert(isfinite(cv->rec[i].err.q) && cv->rec[i].err.q > 0.0);
        ck_assert_str_eq(cv->rec[i].ref_kind, "next-level");
    }
    char *js = mbs_converge_json(cv);
    ck_assert_ptr_nonnull(strstr(js, "\"reference\":\"next-level\""));
    free(js);
    mbs_converge_free(cv);
    free(cv);
}
END_TEST

/* The principle, checked against an independent measure: on chain:N=3 at
 * t_end = 5 (a stored reference exists) the difference between the rk4 runs
 * at h and h/16 matches the error against the stored reference within 10%. */
START_TEST(self_error_matches_reference_error)
{
    mbs_record a, b;
    mbs_test_run("chain:N=3", "index1/rk4", 0.01, NAN, NAN, &a);
    mbs_test_run("chain:N=3", "index1/rk4", 0.01 / 16.0, NAN, NAN, &b);
    ck_assert_str_eq(a.ref_kind, "reference");
    double d = 0.0;
    for (size_t k = 0; k < a.nq; k++)
        d = fmax(d, fabs(a.final[k] - b.final[k]));
    ck_assert_msg(fabs(d / a.err.q - 1.0) <= 0.1, "self %.3e vs reference %.3e", d, a.err.q);
    mbs_record_free(&a);
    mbs_record_free(&b);
}
END_TEST

/* `run` without a reference: no "nan" in the table, the reason and the command. */
START_TEST(run_without_reference_says_so)
{
    char out[512];
    int rc = mbs_test_cli("run -p chain:N=4 -m index1/rk4 --h 0.01 --t-end 1 2>&1 | "
                          "grep -c -e nan -e 'mbsbench references -p chain:N=4 --t-end 1'",
                          out, sizeof out);
    (void)rc;
    ck_assert_msg(atoi(out) == 1, "expected the hint and no nan, got %s lines", out);
    rc = mbs_test_cli("run -p chain:N=4 -m index1/rk4 --h 0.01 --t-end 1 | grep -c nan", out,
                      sizeof out);
    ck_assert_msg(atoi(out) == 0, "nan printed %s times", out);
}
END_TEST

/* `run` with a stored reference (errors at t_end only) on a problem without an
 * energy, and an ok run too short for a drift fit: the table says what was not
 * measured instead of printing nan (qa: andrews printed "err max q nan v nan
 * lambda nan" and "energy drift nan" with status ok). */
START_TEST(run_with_stored_reference_prints_no_nan)
{
    static const char *const runs[] = {
        "run -p andrews -m index2/radau5 --tol 1e-5",
        "run -p pendulum -m index1/rk4 --h 5 --t-end 10",
    };
    char cmd[256], out[512];
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        snprintf(cmd, sizeof cmd, "%s | grep -c -e nan -e '^status  *ok' -e 'not measured'",
                 runs[i]);
        mbs_test_cli(cmd, out, sizeof out);
        ck_assert_msg(atoi(out) == (i == 0 ? 3 : 2), "%s: %s lines (ok + not measured, no nan)",
                      runs[i], out);
        snprintf(cmd, sizeof cmd, "%s | grep -c nan", runs[i]);
        mbs_test_cli(cmd, out, sizeof out);
        ck_assert_msg(atoi(out) == 0, "%s: nan printed %s times", runs[i], out);
    }
}
END_TEST

/* A run declined at t0 (pendulum has an exact solution) does not claim that
 * there is no reference nor print the command computing one (qa). */
START_TEST(declined_run_claims_no_missing_reference)
{
    char out[512];
    mbs_test_cli("run -p pendulum:redundant=1 -m cp/dopri5 --tol 1e-6 | "
                 "grep -c -e 'no exact solution' -e 'compute one with' -e 'the run failed'",
                 out, sizeof out);
    ck_assert_msg(atoi(out) == 1, "expected only 'not measured (the run failed)', got %s lines",
                  out);
}
END_TEST

/* `references -p SPEC --t-end T --dry-run` computes a reference from two
 * independent computations and reports their agreement (>= 10 digits). */
START_TEST(references_command)
{
    char out[1024];
    int rc = mbs_test_cli("references -p chain:N=4 --t-end 1 --dry-run", out, sizeof out);
    ck_assert_int_eq(rc, 0);
    const char *p = strstr(out, "agree to ");
    ck_assert_msg(p != NULL, "%s", out);
    ck_assert_msg(atof(p + 9) >= 10.0, "%s", out);
}
END_TEST

Suite *mbs_suite_noref(void)
{
    Suite *s = suite_create("noref");
    TCase *tc = tcase_create("noref");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, converge_self_convergence);
    tcase_add_test(tc, self_error_matches_reference_error);
    tcase_add_test(tc, run_without_reference_says_so);
    tcase_add_test(tc, run_with_stored_reference_prints_no_nan);
    tcase_add_test(tc, declined_run_claims_no_missing_reference);
    tcase_add_test(tc, references_command);
    suite_add_tcase(s, tc);
    return s;
}
