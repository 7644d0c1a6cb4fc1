/* Fair comparison tables: problems without multipliers report a null lambda
 * error. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/io.h"
#include "../harness/reproduce.h"
#include "../harness/reproduce_impl.h"
#include "../harness/results.h"
#include "../harness/shard.h"
#include "../harness/suite.h"
#include "testutil.h"

/* ---- lambda of problems without multipliers ------------------------------------------ */

START_TEST(test_lambda_null)
{
    /* smallmass (exact solution) and heavytop (stored reference at t_end = 2) have
     * no multipliers: their lambda errors are null, never 0 */
    static const char *const probs[] = {"smallmass", "heavytop"};
    for (int k = 0; k < 2; k++) {
        mbs_record rec;
        mbs_test_run(probs[k], "index1/dopri5", NAN, 1e-6, NAN, &rec);
        ck_assert_int_eq(rec.status, MBS_OK);
        ck_assert_msg(rec.have_ref, "%s: no reference", probs[k]);
        ck_assert(isfinite(rec.err.q) && isfinite(rec.err.v));
        ck_assert_msg(isnan(rec.err.lambda), "%s: err.lambda %g", probs[k], rec.err.lambda);
        ck_assert(isnan(rec.err_max.lambda));
        char *s = mbs_record_json(&rec);
        json_t *o = json_loads(s, 0, NULL);
        ck_assert(json_is_null(json_object_get(json_object_get(o, "err"), "lambda")));
        ck_assert(json_is_null(json_object_get(json_object_get(o, "err_max"), "lambda")));
        json_decref(o);
        free(s);
        mbs_record_free(&rec);
    }
    /* with multipliers the error is a number */
    mbs_record rec;
    mbs_test_run("pendulum", "index1/dopri5", NAN, 1e-6, 1.0, &rec);
    ck_assert(rec.err.lambda > 0.0 && isfinite(rec.err.lambda));
    mbs_record_free(&rec);
}
END_TEST

Suite *mbs_suite_tables(void)
{
    Suite *s = suite_create("tables");
    TCase *tc = tcase_create("tables");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_lambda_null);
    suite_add_tcase(s, tc);
    return s;
}
