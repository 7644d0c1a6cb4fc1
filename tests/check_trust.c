/* Numbers users can trust: Test Set digit measures, bounded runs and
 * no silent success, memory budget, results files (torn lines, unreadable lines,
 * one writer), history keys.  Each test failed on the code before these checks. */
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/io.h"
#include "../harness/reference.h"
#include "../harness/results.h"
#include "../harness/sweep.h"
#include "../methods/framework/method.h"
#include "testutil.h"

#define cli mbs_test_cli_text

#define write_text mbs_test_write_text
#define make_tmpdir mbs_test_tmpdir
#define remove_tree mbs_test_remove_tree

/* ---- measures ----------------------------------------------------------------- */

/* The Test Set definition on a hand-made vector (andrews in [testset24],
 * Sect. 5): scd over the listed components, skipping exact zeros of the
 * reference; mescd over all components. */
START_TEST(testset_digits_by_hand)
{
    const double y[4] = {1.0, 2.0, 0.5, 10.0}, ref[4] = {1.001, 2.0, 0.0, 10.1};
    const size_t subset[2] = {0, 2};
    double scd, mescd;
    mbs_testset_digits(y, ref, 4, subset, 2, &scd, &mescd);
    /* scd: component 0 only (component 2 has ref 0): |0.001| / 1.001 */
    ck_assert_double_eq_tol(scd, -log10(0.001 / 1.001), 1e-9);
    /* mescd: all four, the largest is component 2 (0.5 / 1) */
    ck_assert_double_eq_tol(mescd, -log10(0.5), 1e-12);
    /* an exact match counts as error 1e-16 (16 digits), not +Inf */
    mbs_testset_digits(ref, ref, 4, NULL, 0, &scd, &mescd);
    ck_assert_double_eq_tol(scd, 16.0, 1e-12);
    ck_assert_double_eq_tol(mescd, 16.0, 1e-12);
}
END_TEST

/* A record's scd and mescd recomputed by hand from its stored final_published
 * and the stored reference: mescd over ALL published components (27 andrews, 24
 * crank), scd over the subset the problem files list. */
typedef struct digits_case {
    const char *problem;
    size_t n;          /* published components */
    size_t scd[10];    /* 0-based scd components (andrews.md, crank.md Sect. 5) */
    size_t n_scd;
} digits_case;

static const digits_case digits_cases[] = {
    {"andrews", 27, {0, 1, 2, 3, 4, 5, 6}, 7},
    {"crank", 24, {0, 1, 2, 3, 4, 5, 6, 21, 22, 23}, 10},
};

START_TEST(mescd_over_all_components)
{
    const digits_case *dc = &digits_cases[_i];
    mbs_record rec;
    mbs_test_run(dc->problem, "index1/dopri5", NAN, 1e-6, NAN, &rec);
    ck_assert_int_eq(rec.status, MBS_OK);
    char *line = mbs_record_json(&rec);
    json_t *o = json_loads(line, 0, NULL);
    free(line);
    ck_assert_ptr_nonnull(o);
    json_t *fp = json_object_get(o, "final_published");
    ck_assert_uint_eq(json_array_size(fp), dc->n);
    /* the reference in published order */
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, dc->problem, err, sizeof err), MBS_OK);
    double ref[64], pref[64];
    ck_assert(mbs_reference_find(&pb, pb.t_end, ref, NULL, 0));
    size_t n = dc->n;
    ck_assert_int_eq(pb.def->published(&pb, pb.t_end, ref, pref, &n), MBS_OK);
    ck_assert_uint_eq(n, dc->n);
    double mixed = 0.0, rel = 0.0, mixed_sub = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(json_number_value(json_array_get(fp, i)) - pref[i]);
        mixed = fmax(mixed, e / (1.0 + fabs(pref[i])));
    }
    for (size_t k = 0; k < dc->n_scd; k++) {
        size_t i = dc->scd[k];
        double e = fabs(json_number_value(json_array_get(fp, i)) - pref[i]);
        if (fabs(pref[i]) >= 1e-200)
            rel = fmax(rel, e / fabs(pref[i]));
        mixed_sub = fmax(mixed_sub, e / (1.0 + fabs(pref[i])));
    }
    double mescd = -log10(mixed), scd = -log10(rel);
    double rec_mescd = json_number_value(json_object_get(o, "mescd"));
    double rec_scd = json_number_value(json_object_get(o, "scd"));
    printf("trust: %-8s dopri5 1e-6: mescd %.3f (over the scd subset it would be %.3f), "
           "scd %.3f\n", dc->problem, mescd, -log10(mixed_sub), scd);
    ck_assert_msg(fabs(rec_mescd - mescd) < 1e-9, "%s: record mescd %.6f, by hand %.6f",
                  dc->problem, rec_mescd, mescd);
    ck_assert_msg(fabs(rec_scd - scd) < 1e-9, "%s: record scd %.6f, by hand %.6f", dc->problem,
                  rec_scd, scd);
    json_decref(o);
    mbs_problem_close(&pb);
    mbs_record_free(&rec);
}
END_TEST

/* ---- bounded runs, no silent success ------------------------------------------ */

static const char *const fixed_methods[] = {"index1/rk4", "index3/genalpha", "index2/hem4",
                                            "ep/midpoint"};

START_TEST(fixed_step_count_must_fit)
{
    const char *m = fixed_methods[_i];
    mbs_run_spec spec = {.problem = "pendulum", .method = m, .h = 1e-300, .tol = NAN,
                         .t_end = NAN, .repeat = 1, .measure = 1};
    mbs_record rec;
    char err[512] = "";
    ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_BAD_INPUT);
    ck_assert_msg(strstr(err, "--h 1e-300") != NULL, "%s: '%s'", m, err);
    spec.h = 0.01;
    spec.t_end = 1e308;
    ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_BAD_INPUT);
    ck_assert_msg(strstr(err, "1e+308") != NULL, "%s: '%s'", m, err);
    /* command line: run and converge exit 2 with one line naming the value */
    char args[512], *e;
    snprintf(args, sizeof args, "run -p pendulum -m %s --h 1e-300", m);
    ck_assert_int_eq(cli(args, &e, NULL), 2);
    ck_assert_int_eq(mbs_count_lines(e), 1);
    ck_assert_msg(strstr(e, "1e-300") != NULL, "%s", e);
    free(e);
    snprintf(args, sizeof args, "run -p pendulum -m %s --h 0.01 --t-end 1e308", m);
    ck_assert_int_eq(cli(args, &e, NULL), 2);
    ck_assert_msg(strstr(e, "1e+308") != NULL, "%s", e);
    free(e);
    snprintf(args, sizeof args, "converge -p pendulum -m %s --h0 1e-300 --levels 2", m);
    ck_assert_int_eq(cli(args, &e, NULL), 2);
    ck_assert_msg(strstr(e, "1e-300") != NULL, "%s", e);
    free(e);
}
END_TEST

START_TEST(suite_step_count_must_fit)
{
    char *dir = make_tmpdir(), path[4200], args[9000], *e;
    snprintf(path, sizeof path, "%s/big.suite", dir);
    write_text(path, "[suite]\nname = big\n[grid a]\nproblems = pendulum\n"
                     "methods = index1/rk4 index2/hem4\nh = 0.01 1e-300\n");
    mbs_suite s;
    char err[4096];
    ck_assert_int_eq(mbs_suite_load(path, &s, err, sizeof err), MBS_BAD_INPUT);
    ck_assert_msg(strstr(err, "1e-300") != NULL, "%s", err);
    snprintf(args, sizeof args, "sweep %s --out %s/r --no-history", path, dir);
    ck_assert_int_eq(cli(args, &e, NULL), 2);
    ck_assert_msg(strstr(e, "1e-300") != NULL, "%s", e);
    free(e);
    snprintf(path, sizeof path, "%s/r/runs.jsonl", dir);
    ck_assert_int_ne(access(path, F_OK), 0); /* nothing ran */
    remove_tree(dir);
    free(dir);
}
END_TEST

START_TEST(budget_ends_run_with_reason)
{
    /* defaults: every run has a step, CPU and wall-clock budget */
    mbs_problem pb;
    char err[512];
    ck_assert_int_eq(mbs_problem_open(&pb, "pendulum", err, sizeof err), MBS_OK);
    mbs_ctx ctx;
    ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
    ck_assert(ctx.max_steps == MBS_DEFAULT_MAX_STEPS && ctx.max_steps > 0);
    ck_assert(isfinite(ctx.max_cpu) && ctx.max_cpu > 0.0);
    ck_assert(isfinite(ctx.max_wall) && ctx.max_wall > 0.0);
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
    /* --h 1e-9 fits (1e10 steps) and runs into the budget: a failed run, reason budget */
    mbs_run_spec spec = {.problem = "pendulum", .method = "index1/rk4", .h = 1e-9, .tol = NAN,
                         .t_end = NAN, .repeat = 1, .measure = 1, .max_wall = 0.2};
    mbs_record rec;
    ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_OK);
    ck_assert_int_eq(rec.status, MBS_WALL_LIMIT);
    ck_assert_msg(strncmp(rec.reason, "budget:", 7) == 0, "%s", rec.reason);
    ck_assert(rec.cnt.steps > 0 && isnan(rec.err.q) && isnan(rec.cpu_median));
    mbs_record_free(&rec);
    spec.max_wall = 0.0;
    spec.max_steps = 1000;
    ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_OK);
    ck_assert_int_eq(rec.status, MBS_TOO_MANY_STEPS);
    ck_assert_msg(strncmp(rec.reason, "budget:", 7) == 0, "%s", rec.reason);
    ck_assert_int_eq(rec.cnt.steps, 1000);
    mbs_record_free(&rec);
    /* command line: --max-wall, exit 1, the record says budget */
    char *out;
    ck_assert_int_eq(cli("run -p pendulum -m index3/genalpha --h 1e-9 --max-wall 0.2 --format "
                         "json", NULL, &out),
                     1);
    ck_assert_msg(strstr(out, "\"reason\":\"budget: wall-clock") != NULL, "%s", out);
    free(out);
    ck_assert_int_eq(cli("run -p pendulum -m index1/rk4 --h 0.01 --max-wall -1", NULL, NULL), 2);
}
END_TEST

/* Testing hook: methods that claim success without integrating. */
static int lazy_alloc(const mbs_method_def *m, const mbs_params *p, mbs_ctx *ctx, void **state)
{
    (void)m;
    (void)p;
    (void)ctx;
    *state = NULL;
    return MBS_OK;
}
static int jump_integrate(void *state, mbs_ctx *ctx, const mbs_settings *s, double *t, double *y)
{
    (void)state;
    (void)ctx;
    (void)y;
    *t = s->t_end; /* "reached" t_end without a step */
    return MBS_OK;
}
static int stay_integrate(void *state, mbs_ctx *ctx, const mbs_settings *s, double *t, double *y)
{
    (void)state;
    (void)s;
    return mbs_accept(ctx, *t, y, NULL); /* one step, t never advances */
}
static void lazy_free(void *state)
{
    (void)state;
}
static const mbs_method_ops jump_ops = {lazy_alloc, jump_integrate, lazy_free};
static const mbs_method_ops stay_ops = {lazy_alloc, stay_integrate, lazy_free};
static const mbs_method_def jump_def = {.name = "test/jump", .summary = "claims success",
                                        .order = {1, 1, 1}, .flags = MBS_M_FIXED_STEP,
                                        .ops = &jump_ops};
static const mbs_method_def stay_def = {.name = "test/stay", .summary = "claims success",
                                        .order = {1, 1, 1}, .flags = MBS_M_FIXED_STEP,
                                        .ops = &stay_ops};

START_TEST(no_ok_without_steps)
{
    const mbs_method_def *defs[2] = {&jump_def, &stay_def};
    for (int k = 0; k < 2; k++) {
        mbs_run_spec spec = {.problem = "pendulum", .method = defs[k]->name, .h = 0.01,
                             .tol = NAN, .t_end = NAN, .repeat = 1, .measure = 1,
                             .method_def = defs[k]};
        mbs_record rec;
        char err[512];
        ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_OK);
        ck_assert_msg(rec.status == MBS_NO_PROGRESS, "%s: status %s", defs[k]->name,
                      mbs_status_code(rec.status));
        ck_assert(rec.reason[0] != '\0');
        ck_assert(isnan(rec.err.q) && isnan(rec.scd) && isnan(rec.cpu_median));
        mbs_record_free(&rec);
    }
}
END_TEST

/* ---- memory ------------------------------------------------------------------- */

START_TEST(dense_method_refused_for_memory)
{
    /* chain:N=20000 needs a dense 60000 x 60000 KKT matrix (28.8 GB) with linsol=lu;
     * a 4 GB budget makes the refusal independent of the machine. */
    mbs_run_spec spec = {.problem = "chain:N=20000", .method = "index1/rk4", .h = 0.01,
                         .tol = NAN, .t_end = 0.02, .repeat = 1, .measure = 1, .max_mem = 4e9};
    mbs_record rec;
    char err[512];
    ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_OK);
    ck_assert_int_eq(rec.status, MBS_NO_MEMORY);
    ck_assert_msg(strncmp(rec.reason, "out-of-memory:", 14) == 0, "%s", rec.reason);
    ck_assert_msg(strstr(rec.reason, "28.8 GB") && strstr(rec.reason, "linsol=umfpack"), "%s",
                  rec.reason);
    mbs_record_free(&rec);
    /* the sparse backend is not refused */
    spec.problem = "chain:N=200";
    spec.method = "index1/rk4:linsol=umfpack";
    spec.max_mem = 1e6;
    ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_OK);
    ck_assert_int_eq(rec.status, MBS_OK);
    mbs_record_free(&rec);
    /* command line: one line naming the size and the remedy, exit 2 */
    char *e;
    ck_assert_int_eq(cli("run -p chain:N=20000 -m index1/rk4 --h 0.01 --t-end 0.02 --max-mem "
                         "4e9",
                         &e, NULL),
                     2);
    ck_assert_int_eq(mbs_count_lines(e), 1);
    ck_assert_msg(strstr(e, "28.8 GB") && strstr(e, "linsol=umfpack"), "%s", e);
    free(e);
    /* sweep: a record with the reason, not an empty one */
    char *dir = make_tmpdir(), path[4200], args[9000];
    snprintf(path, sizeof path, "%s/mem.suite", dir);
    write_text(path, "[suite]\nname = mem\nmax_mem = 4e9\n[grid a]\nproblems = chain:N=20000\n"
                     "methods = index1/rk4\nh = 0.01\nt_end = 0.02\n");
    snprintf(args, sizeof args, "sweep %s --out %s/r --no-history", path, dir);
    ck_assert_int_eq(cli(args, NULL, NULL), 1);
    snprintf(path, sizeof path, "%s/r", dir);
    mbs_results res;
    ck_assert_int_eq(mbs_results_load_quiet(path, &res, err, sizeof err), 0);
    ck_assert_uint_eq(res.n, 1);
    ck_assert_str_eq(mbs_jstr(res.recs[0], "status"), "no_memory");
    ck_assert(strncmp(mbs_jstr(res.recs[0], "reason"), "out-of-memory:", 14) == 0);
    mbs_results_free(&res);
    remove_tree(dir);
    free(dir);
}
END_TEST

/* ---- results files ------------------------------------------------------------ */

static const char tiny_suite[] = "[suite]\nname = tiny\n[grid a]\nproblems = pendulum\n"
                                 "methods = index1/rk4\nh = 0.02 0.01 0.005\nt_end = 1\n";

/* A sweep of tiny_suite into dir/r; returns the text of runs.jsonl. */
static char *tiny_sweep(const char *dir)
{
    char path[4200], args[9000];
    snprintf(path, sizeof path, "%s/tiny.suite", dir);
    write_text(path, tiny_suite);
    snprintf(args, sizeof args, "sweep %s --out %s/r --no-history", path, dir);
    ck_assert_int_eq(cli(args, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/r/runs.jsonl", dir);
    char *text = mbs_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(mbs_count_lines(text), 3);
    return text;
}

START_TEST(resume_cuts_torn_line)
{
    char *dir = make_tmpdir(), path[4200], args[9000];
    char *text = tiny_sweep(dir);
    /* a kill during the second write: record 1 complete, half of record 2 */
    char *second = strchr(text, '\n') + 1;
    size_t keep = (size_t)(second - text) + (size_t)(strchr(second, '\n') - second) / 2;
    text[keep] = '\0';
    snprintf(path, sizeof path, "%s/r/runs.jsonl", dir);
    write_text(path, text);
    free(text);
    char *e;
    snprintf(args, sizeof args, "sweep %s/tiny.suite --resume %s/r --no-history", dir, dir);
    ck_assert_int_eq(cli(args, &e, NULL), 0);
    ck_assert_msg(strstr(e, "partial last line") != NULL, "%s", e);
    free(e);
    mbs_results res;
    char err[512];
    snprintf(path, sizeof path, "%s/r", dir);
    ck_assert_int_eq(mbs_results_load_quiet(path, &res, err, sizeof err), 0);
    ck_assert_uint_eq(res.n_bad, 0);
    ck_assert_uint_eq(res.n, 3); /* every record readable, none twice */
    for (size_t i = 0; i < 3; i++)
        ck_assert_int_eq((int)mbs_jnum(res.recs[i], "run"), (int)i);
    mbs_results_free(&res);
    remove_tree(dir);
    free(dir);
}
END_TEST

START_TEST(unreadable_lines_reported_and_refused)
{
    char *dir = make_tmpdir(), path[4200], args[9000], err[512];
    char *text = tiny_sweep(dir);
    /* bless the intact file, then damage it: junk, a non-record, a torn line */
    snprintf(args, sizeof args, "baseline bless %s/r -o %s/base.json", dir, dir);
    ck_assert_int_eq(cli(args, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/r/runs.jsonl", dir);
    FILE *f = fopen(path, "a");
    ck_assert_ptr_nonnull(f);
    fputs("junk\n{\"note\": 1}\n{\"run\": 7, \"problem\"", f);
    fclose(f);
    free(text);
    mbs_results res;
    snprintf(path, sizeof path, "%s/r", dir);
    ck_assert_int_eq(mbs_results_load_quiet(path, &res, err, sizeof err), 0);
    ck_assert_uint_eq(res.n, 3);
    ck_assert_uint_eq(res.n_bad, 3);
    ck_assert_ptr_nonnull(strstr(res.bad, "runs.jsonl:4:"));
    ck_assert_ptr_nonnull(strstr(res.bad, "runs.jsonl:5:"));
    ck_assert_ptr_nonnull(strstr(res.bad, "runs.jsonl:6:"));
    mbs_results_free(&res);
    /* summary: reports file:line and the count; no phantom failure */
    char *e, *o;
    snprintf(args, sizeof args, "summary %s/r", dir);
    ck_assert_int_eq(cli(args, &e, &o), 0);
    ck_assert_msg(strstr(e, "runs.jsonl:4:") && strstr(e, "3 unreadable lines"), "%s", e);
    ck_assert_msg(strstr(o, " at t = ") == NULL, "phantom failure: %s", o);
    ck_assert_int_eq(mbs_count_lines(o), 4); /* header + 3 records */
    free(e);
    free(o);
    /* bless and compare refuse */
    snprintf(args, sizeof args, "baseline bless %s/r -o %s/b2.json", dir, dir);
    ck_assert_int_eq(cli(args, &e, NULL), 2);
    ck_assert_msg(strstr(e, "refusing") != NULL, "%s", e);
    free(e);
    snprintf(path, sizeof path, "%s/b2.json", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    snprintf(args, sizeof args, "compare %s/base.json %s/r", dir, dir);
    ck_assert_int_eq(cli(args, &e, NULL), 2);
    ck_assert_msg(strstr(e, "refusing") && strstr(e, "runs.jsonl:5:"), "%s", e);
    free(e);
    remove_tree(dir);
    free(dir);
}
END_TEST

START_TEST(second_writer_refused)
{
    char *dir = make_tmpdir(), path[4200], args[9000];
    free(tiny_sweep(dir));
    /* another writer holds the directory */
    snprintf(path, sizeof path, "%s/r", dir);
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
    char *e;
    snprintf(args, sizeof args, "sweep %s/tiny.suite --resume %s/r --no-history", dir, dir);
    ck_assert_int_eq(cli(args, &e, NULL), 2);
    ck_assert_msg(strstr(e, "locked by another sweep") != NULL, "%s", e);
    free(e);
    close(fd);
    /* two resumes at once: the records are not duplicated */
    snprintf(path, sizeof path, "%s/r/runs.jsonl", dir);
    char *text = mbs_read_file(path, NULL);
    *strchr(text, '\n') = '\0'; /* keep run 0 only: two runs to redo */
    char *line0 = text;
    FILE *f = fopen(path, "w");
    fprintf(f, "%s\n", line0);
    fclose(f);
    free(text);
    char cmd[20000];
    const char *bin = getenv("MBSBENCH") ? getenv("MBSBENCH") : "bin/mbsbench";
    snprintf(cmd, sizeof cmd,
             "(%s %s >/dev/null 2>&1 & %s %s >/dev/null 2>&1 & wait) >/dev/null 2>&1", bin,
             args, bin, args);
    ck_assert_int_eq(system(cmd), 0);
    text = mbs_read_file(path, NULL);
    ck_assert_int_eq(mbs_count_lines(text), 3);
    free(text);
    remove_tree(dir);
    free(dir);
}
END_TEST

/* ---- history ------------------------------------------------------------------ */

/* sweep's command-line budgets apply to every run (they were parsed and ignored
 * before): smoke with --max-steps 10 fails every run on its budget. */
START_TEST(sweep_command_line_budget_applies)
{
    char *d = make_tmpdir(), args[4400], *err = NULL, *out = NULL;
    snprintf(args, sizeof args, "sweep suites/smoke.suite --max-steps 10 --out %s/r --no-history",
             d);
    int st = cli(args, &err, &out);
    ck_assert_int_eq(st, 1);
    char path[4400];
    snprintf(path, sizeof path, "%s/r", d);
    mbs_results r;
    char e[512];
    ck_assert_int_eq(mbs_results_load_quiet(path, &r, e, sizeof e), 0);
    ck_assert_int_eq((int)r.n, 18);
    for (size_t i = 0; i < r.n; i++) {
        ck_assert_str_eq(mbs_jstr(r.recs[i], "status"), "too_many_steps");
        ck_assert(mbs_jnum(r.recs[i], "counters.steps") + mbs_jnum(r.recs[i], "counters.rejected")
                  <= 10.0);
    }
    mbs_results_free(&r);
    free(err);
    free(out);
    remove_tree(d);
    free(d);
}
END_TEST

START_TEST(history_keys_whole_case)
{
    char *dir = make_tmpdir(), path[4200], args[9000];
    const char *names[2] = {"ha", "hb"}, *ends[2] = {"1", "2"};
    for (int k = 0; k < 2; k++) {
        char suite[512];
        snprintf(suite, sizeof suite,
                 "[suite]\nname = %s\n[grid a]\nproblems = pendulum pendulum:x0=0.2\n"
                 "methods = index1/rk4\nh = 0.01\nt_end = %s\n",
                 names[k], ends[k]);
        snprintf(path, sizeof path, "%s/%s.suite", dir, names[k]);
        write_text(path, suite);
        snprintf(args, sizeof args, "sweep %s --out %s/%s --history %s/h.db", path, dir,
                 names[k], dir);
        ck_assert_int_eq(cli(args, NULL, NULL), 0);
    }
    char *o;
    snprintf(args, sizeof args,
             "history -p pendulum -m index1/rk4 --metric err_q --db %s/h.db", dir);
    ck_assert_int_eq(cli(args, NULL, &o), 0);
    /* exact spec: not pendulum:x0=0.2; two cases (suite and t_end differ), each its
     * own series, so each row is its series' first (x1) */
    ck_assert_msg(strstr(o, "x0=0.2") == NULL, "%s", o);
    ck_assert_int_eq(mbs_count_lines(o), 3);
    ck_assert_msg(strstr(o, "[ha] pendulum index1/rk4 h=0.01 t_end=1") != NULL, "%s", o);
    ck_assert_msg(strstr(o, "[hb] pendulum index1/rk4 h=0.01 t_end=2") != NULL, "%s", o);
    const char *p = strchr(o, '\n') + 1;
    for (int r = 0; r < 2; r++) {
        const char *nl = strchr(p, '\n');
        ck_assert_msg(nl - p > 3 && strncmp(nl - 3, " x1", 3) == 0, "row: %.*s", (int)(nl - p),
                      p);
        p = nl + 1;
    }
    free(o);
    /* globs when asked */
    snprintf(args, sizeof args,
             "history -p 'pendulum*' -m 'index1/*' --glob --metric err_q --db %s/h.db", dir);
    ck_assert_int_eq(cli(args, NULL, &o), 0);
    ck_assert_int_eq(mbs_count_lines(o), 5);
    ck_assert_ptr_nonnull(strstr(o, "pendulum:x0=0.2"));
    free(o);
    /* a prefix is not a name */
    snprintf(args, sizeof args, "history -p pend -m index1/rk4 --metric err_q --db %s/h.db",
             dir);
    ck_assert_int_eq(cli(args, NULL, NULL), 2);
    remove_tree(dir);
    free(dir);
}
END_TEST

Suite *mbs_suite_trust(void)
{
    Suite *s = suite_create("trust");
    TCase *tc = tcase_create("trust");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, testset_digits_by_hand);
    tcase_add_loop_test(tc, mescd_over_all_components, 0,
                        (int)(sizeof digits_cases / sizeof digits_cases[0]));
    tcase_add_loop_test(tc, fixed_step_count_must_fit, 0,
                        (int)(sizeof fixed_methods / sizeof fixed_methods[0]));
    tcase_add_test(tc, suite_step_count_must_fit);
    tcase_add_test(tc, budget_ends_run_with_reason);
    tcase_add_test(tc, no_ok_without_steps);
    tcase_add_test(tc, dense_method_refused_for_memory);
    tcase_add_test(tc, resume_cuts_torn_line);
    tcase_add_test(tc, unreadable_lines_reported_and_refused);
    tcase_add_test(tc, second_writer_refused);
    tcase_add_test(tc, history_keys_whole_case);
    tcase_add_test(tc, sweep_command_line_budget_applies);
    suite_add_tcase(s, tc);
    return s;
}
