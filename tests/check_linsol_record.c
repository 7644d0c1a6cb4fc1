/* Linear-solver statistics in the run record: the "linsol" object of
 * the JSON record (docs/results-schema.md) and its CSV columns.  Relations asserted:
 * on the chain (constant sparsity pattern) one symbolic analysis per run and
 * backend matrix; umfpack factorises the KKT matrix once per right-hand-side
 * evaluation (RK4: 4 per step plus the evaluation at t0, i.e. f_evals), cholmod
 * twice (A and the Schur complement); one solve per evaluation; the recorded
 * counts are those of the recorded run only, although the method's backend
 * counts cumulatively over the workspace's life; failed runs keep their
 * statistics; dense paths record null. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../methods/linsol/linsol.h"
#include "../methods/framework/method.h"
#include "testutil.h"

static json_t *cli_json(const char *args)
{
    static char out[1 << 16];
    int st = mbs_test_cli(args, out, sizeof out);
    ck_assert_msg(st == 0, "exit %d: %s", st, out);
    json_error_t e;
    json_t *r = json_loads(out, 0, &e);
    ck_assert_msg(r != NULL, "not JSON (%s): %.200s", e.text, out);
    return r;
}

static long geti(json_t *o, const char *k)
{
    json_t *x = json_object_get(o, k);
    ck_assert_msg(json_is_integer(x), "%s is not an integer", k);
    return (long)json_integer_value(x);
}

/* The command of the issue, for umfpack, cholmod and the dense lu path. */
START_TEST(test_cli_record)
{
    static const char *const ls[] = {"umfpack", "cholmod", "lu"};
    char args[256];
    snprintf(args, sizeof args,
             "run -p chain:N=50 -m index1/rk4:linsol=%s --h 0.01 --t-end 0.1 --format json",
             ls[_i]);
    json_t *r = cli_json(args);
    ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "ok");
    json_t *c = json_object_get(r, "counters"), *d = json_object_get(r, "dims");
    json_t *l = json_object_get(r, "linsol");
    ck_assert_ptr_nonnull(l);
    long steps = geti(c, "steps"), fev = geti(c, "f_evals");
    ck_assert_int_eq(steps, 10);
    ck_assert_int_eq(fev, 4 * steps + 1); /* RK4: 4 stages, first stage at t0 once */
    if (_i == 2) {
        ck_assert_msg(json_is_null(l), "dense lu must record linsol null");
        json_decref(r);
        return;
    }
    ck_assert_str_eq(json_string_value(json_object_get(l, "backend")), ls[_i]);
    long per_eval = _i == 0 ? 1 : 2; /* cholmod: A and S = B A^-1 B^T */
    ck_assert_int_eq(geti(l, "analyses"), per_eval);
    /* cholmod factors the chain's constant A = M once, S at every evaluation */
    ck_assert_int_eq(geti(l, "factorizations"), _i == 0 ? fev : fev + 1);
    ck_assert_int_eq(geti(l, "factorizations"), geti(c, "factorizations"));
    ck_assert_int_eq(geti(l, "solves"), fev);
    ck_assert_int_eq(geti(l, "n"), geti(d, "nv") + geti(d, "nl"));
    long nnz = geti(l, "nnz"), nnzf = geti(l, "nnz_factor");
    ck_assert_int_gt(nnz, 0);
    double fill = json_real_value(json_object_get(l, "fill"));
    double rcond = json_real_value(json_object_get(l, "rcond"));
    ck_assert_msg(fill >= 1.0, "fill %g", fill);
    ck_assert_double_eq_tol(fill, (double)nnzf / (double)nnz, 1e-12);
    ck_assert_msg(rcond > 0.0 && rcond <= 1.0, "rcond %g", rcond);
    json_decref(r);
}
END_TEST

static void run_spec(const char *method, int measure, int repeat, double fail_t,
                     mbs_record *rec)
{
    mbs_run_spec spec = {.problem = "chain:N=20",
                         .method = method,
                         .h = 0.01,
                         .tol = NAN,
                         .t_end = 0.2,
                         .repeat = repeat,
                         .measure = measure,
                         .inject_fail_t = fail_t,
                         .atol = NAN};
    char err[512];
    ck_assert_msg(mbs_run(&spec, rec, err, sizeof err) == MBS_OK, "%s", err);
}

/* Per-run counts: the measuring run, or the first timing run without one, is
 * recorded alone although the timing runs reuse the workspace. */
START_TEST(test_per_run)
{
    for (int measure = 1; measure >= 0; measure--) {
        mbs_record rec;
        run_spec("index1/rk4:linsol=umfpack", measure, 3, 0.0, &rec);
        ck_assert_int_eq(rec.status, MBS_OK);
        ck_assert_int_eq(rec.cnt.steps, 20);
        ck_assert_int_eq(rec.have_linsol, 1);
        ck_assert_int_eq(rec.linsol_kind, MBS_LS_UMFPACK);
        ck_assert_int_eq(rec.linsol.factorizations, 4 * 20 + 1);
        ck_assert_int_eq(rec.linsol.factorizations, rec.cnt.factorizations);
        ck_assert_int_eq(rec.linsol.solves, rec.cnt.solves);
        ck_assert_int_eq(rec.linsol.analyses, 1);
        mbs_record_free(&rec);
    }
}
END_TEST

/* What the harness subtracts: the backend's counts are cumulative over the
 * workspace's life (two integrate() calls: twice the factorisations, still one
 * analysis), while mbs_ctx_reset clears ctx->linsol. */
START_TEST(test_cumulative_contract)
{
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, "chain:N=20", err, sizeof err), MBS_OK);
    const mbs_method_def *m;
    mbs_params mp;
    ck_assert_int_eq(mbs_method_parse("index1/rk4:linsol=umfpack", &m, &mp, err, sizeof err),
                     MBS_OK);
    mbs_ctx ctx;
    ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
    mbs_ctx_reset(&ctx);
    void *state = NULL;
    ck_assert_int_eq(m->ops->alloc(m, &mp, &ctx, &state), MBS_OK);
    size_t ny = mbs_ny(&pb);
    double *y0 = calloc(ny, sizeof *y0), *y = calloc(ny, sizeof *y);
    int have;
    ck_assert_int_eq(pb.def->initial(&pb, y0, y0 + pb.nq, y0 + pb.nq + pb.nv, &have), MBS_OK);
    mbs_settings set = {.h = 0.01, .t_end = 0.05};
    long first = 0;
    for (int k = 1; k <= 2; k++) {
        mbs_ctx_reset(&ctx);
        ck_assert_int_eq(ctx.linsol_kind, -1);
        memcpy(y, y0, ny * sizeof *y);
        double t = pb.t0;
        ck_assert_int_eq(m->ops->integrate(state, &ctx, &set, &t, y), MBS_OK);
        ck_assert_int_eq(ctx.linsol_kind, MBS_LS_UMFPACK);
        ck_assert_int_eq(ctx.linsol.analyses, 1);
        if (k == 1)
            first = ctx.linsol.factorizations;
        ck_assert_int_eq(ctx.linsol.factorizations, k * first);
        ck_assert_int_eq(first, ctx.cnt.factorizations);
    }
    free(y0);
    free(y);
    m->ops->free_state(state);
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
}
END_TEST

/* A run that fails half-way keeps the statistics of the work it did. */
START_TEST(test_failed_run)
{
    mbs_record rec;
    run_spec("index1/rk4:linsol=cholmod", 1, 0, 0.1, &rec);
    ck_assert_int_eq(rec.status, MBS_CALLBACK_FAILED);
    ck_assert_int_eq(rec.have_linsol, 1);
    ck_assert_int_eq(rec.linsol_kind, MBS_LS_CHOLMOD);
    ck_assert_int_gt(rec.linsol.factorizations, 0);
    ck_assert_int_eq(rec.linsol.factorizations, rec.cnt.factorizations);
    mbs_record_free(&rec);
}
END_TEST

/* CSV: the linsol columns are appended after cpu_repeats, then threads; empty for null. */
START_TEST(test_csv_columns)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    mbs_record_csv_header(f);
    mbs_record rec;
    run_spec("index1/rk4:linsol=lu", 1, 0, 0.0, &rec);
    mbs_record_csv(&rec, f);
    mbs_record_free(&rec);
    run_spec("index1/rk4:linsol=umfpack", 1, 0, 0.0, &rec);
    mbs_record_csv(&rec, f);
    mbs_record_free(&rec);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, ",cpu_repeats,linsol_backend,linsol_analyses,"
                                      "linsol_factorizations,linsol_solves,linsol_n,linsol_nnz,"
                                      "linsol_nnz_factor,linsol_fill,linsol_rcond,threads,jacobians,"
                                      "deriv_evals,traj_n,"));
    char *row1 = strchr(buf, '\n') + 1, *row2 = strchr(row1, '\n') + 1;
    /* nine empty linsol cells and an empty threads cell, then the counters
     * jacobians and deriv_evals, then the trajectory measures (chain:N=20 has
     * no stored trajectory at t_end = 0.2: no errors; h = 0.01 is 5 grid spacings) */
    ck_assert_ptr_nonnull(strstr(row1, ",,,,,,,,,,0,0,101,\"hermite\",\"none\",,,,,,,,,,\"no stored"));
    ck_assert_ptr_nonnull(strstr(row2, ",\"umfpack\",1,81,81,60,"));
    free(buf);
}
END_TEST

Suite *mbs_suite_linsol_record(void)
{
    Suite *s = suite_create("linsol_record");
    TCase *tc = tcase_create("record");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_cli_record, 0, 3);
    tcase_add_test(tc, test_per_run);
    tcase_add_test(tc, test_cumulative_contract);
    tcase_add_test(tc, test_failed_run);
    tcase_add_test(tc, test_csv_columns);
    suite_add_tcase(s, tc);
    return s;
}
