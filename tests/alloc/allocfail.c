/* Allocation-failure injection: for every registered method on the
 * pendulum, make the k-th allocation of its alloc path fail, for k = 1, 2, ...
 * until alloc succeeds; each failure must return a negative status with no
 * state, and leave the heap exactly as it was (glibc mallinfo2).
 *
 * This program replaces malloc/calloc/realloc for the whole process (test-only
 * global state), so it is a separate executable, never built with sanitizers. */
#include <check.h>
#include <gsl/gsl_errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../harness/run.h"
#include "../../methods/framework/method.h"
#include "../../problems/problem.h"

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);

static long fail_at = 0; /* 0: disarmed */
static long count = 0;
static long long bytes = 0; /* usable bytes currently allocated */

static int should_fail(void)
{
    return fail_at > 0 && ++count == fail_at;
}

void *malloc(size_t n)
{
    void *p = should_fail() ? NULL : __libc_malloc(n);
    if (p)
        bytes += (long long)malloc_usable_size(p);
    return p;
}

void *calloc(size_t n, size_t m)
{
    void *p = should_fail() ? NULL : __libc_calloc(n, m);
    if (p)
        bytes += (long long)malloc_usable_size(p);
    return p;
}

void *realloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    long long old = p ? (long long)malloc_usable_size(p) : 0;
    void *q = __libc_realloc(p, n);
    if (q || n == 0)
        bytes += (q ? (long long)malloc_usable_size(q) : 0) - old;
    return q;
}

void free(void *p)
{
    if (p)
        bytes -= (long long)malloc_usable_size(p);
    __libc_free(p);
}

static long long heap_in_use(void)
{
    return bytes;
}

static const char *const problems[] = {"pendulum", "pendulum-body"};

START_TEST(alloc_failures_are_clean)
{
    const mbs_method_def *m = mbs_method_at((size_t)_i);
    if (m->flags & MBS_M_EXTERNAL_ALLOC)
        return; /* peers: failures inside GSL/SUNDIALS allocators are not ours (method.h) */
    for (size_t ip = 0; ip < sizeof problems / sizeof problems[0]; ip++) {
        mbs_problem pb;
        char err[256];
        ck_assert_int_eq(mbs_problem_open(&pb, problems[ip], err, sizeof err), MBS_OK);
        mbs_ctx ctx;
        ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
        mbs_params params;
        ck_assert_int_eq(mbs_params_init(&params, m->params, m->n_params), 0);
        int succeeded = 0;
        for (long k = 1; k <= 100000 && !succeeded; k++) {
            void *state = NULL;
            mbs_ctx_reset(&ctx);
            long long before = heap_in_use();
            count = 0;
            fail_at = k;
            int s = m->ops->alloc(m, &params, &ctx, &state);
            fail_at = 0;
            if (s == MBS_OK) {
                m->ops->free_state(state);
                succeeded = 1;
            } else if (s == MBS_UNSUPPORTED || s == MBS_BAD_INPUT) {
                ck_assert_ptr_null(state);
                if (count < k)
                    break; /* declined without an injected failure: not applicable */
            } else {
                ck_assert_msg(s < 0, "%s: allocation %ld failed, status %d", m->name, k, s);
                ck_assert_msg(state == NULL, "%s: state left after failure %ld", m->name, k);
            }
            long long after = heap_in_use();
            ck_assert_msg(after == before, "%s on %s: %lld bytes leaked when allocation %ld failed",
                          m->name, problems[ip], after - before, k);
        }
        mbs_ctx_free(&ctx);
        mbs_problem_close(&pb);
    }
}
END_TEST

/* an allocation failure while a run is set up (problem, state, context,
 * memory estimate, the method's workspace, the published state) is a record,
 * never a silent exit: mbs_run returns MBS_OK (or MBS_BAD_INPUT with a message
 * when opening the problem itself failed), and a no_memory record says
 * "out-of-memory: ...".  The runs integrate nothing (measure = repeat = 0): GSL
 * 2.7's gsl_linalg_LU_decomp allocates a workspace inside integrate() and
 * dereferences it unchecked, so failures there crash inside GSL. */
static const char *const run_methods[] = {"index1/rk4", "index3/genalpha", "index2/radau5",
                                          "index1/dopri5:linsol=umfpack"};

START_TEST(run_alloc_failures_are_records)
{
    const char *m = run_methods[_i];
    int fixed = _i == 1 || _i == 0;
    long failures = 0, records = 0;
    for (long k = 1; k <= 100000; k++) {
        mbs_run_spec spec = {.problem = "pendulum", .method = m, .h = fixed ? 0.05 : NAN,
                             .tol = fixed ? NAN : 1e-4, .t_end = 1.0, .repeat = 0,
                             .measure = 0};
        mbs_record rec;
        char err[512] = "";
        count = 0;
        fail_at = k;
        int s = mbs_run(&spec, &rec, err, sizeof err);
        fail_at = 0;
        if (count < k) { /* nothing was injected: the run is complete */
            ck_assert_int_eq(s, MBS_OK);
            ck_assert_int_eq(rec.status, MBS_OK);
            mbs_record_free(&rec);
            break;
        }
        failures++;
        if (s == MBS_BAD_INPUT) {
            ck_assert_msg(err[0] != '\0', "%s: allocation %ld: bad input without message", m, k);
            continue;
        }
        ck_assert_msg(s == MBS_OK, "%s: allocation %ld: mbs_run returned %d", m, k, s);
        records++;
        if (rec.status == MBS_NO_MEMORY)
            ck_assert_msg(strncmp(rec.reason, "out-of-memory", 13) == 0,
                          "%s: allocation %ld: reason '%s'", m, k, rec.reason);
        if (rec.status != MBS_OK)
            ck_assert_msg(rec.reason[0] != '\0', "%s: allocation %ld: empty reason", m, k);
        mbs_record_free(&rec);
    }
    printf("allocfail: %s: %ld injected failures, %ld gave records\n", m, failures, records);
    ck_assert_int_gt(records, 0);
}
END_TEST

int main(void)
{
    gsl_set_error_handler_off();
    Suite *s = suite_create("allocfail");
    TCase *tc = tcase_create("allocfail");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, alloc_failures_are_clean, 0, (int)mbs_method_count());
    tcase_add_loop_test(tc, run_alloc_failures_are_records, 0,
                        (int)(sizeof run_methods / sizeof run_methods[0]));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
