/* The nightly regression net: coverage of every registry entry by a
 * nightly case that runs, per-case budgets derived from the baseline, and the
 * tiers of `compare` (exact counters, errors, final state, CPU hard only on a
 * matching environment and advisory otherwise).  The coverage checks read the
 * committed suites/nightly.suite and baselines/nightly.json. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>

#include "../harness/io.h"
#include "../harness/regress.h"
#include "../harness/suite.h"
#include "../harness/sweep.h"
#include "../methods/framework/method.h"
#include "../problems/problem.h"
#include "testutil.h"

static const char nightly_suite[] = "suites/nightly.suite";
static const char nightly_base[] = "baselines/nightly.json";

static void load_base(mbs_results *r)
{
    char err[512];
    ck_assert_msg(mbs_baseline_load(nightly_base, r, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(r->n_bad, 0);
}

/* a baseline record that ran (status other than unsupported) */
static int ran(json_t *rec)
{
    return strcmp(mbs_jstr(rec, "status"), "unsupported") != 0;
}

/* Every suite file shipped in suites/ parses: a make target or a reproduction
 * that names one must not meet a syntax error first (suites/iftomm.suite once
 * carried a line of 201 characters and `make iftomm` stopped at it). */
START_TEST(every_shipped_suite_parses)
{
    char dir[4096];
    mbs_data_path("suites", dir, sizeof dir);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".suite") != 0)
            continue;
        char path[8192], err[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        mbs_suite s;
        ck_assert_msg(mbs_suite_load(path, &s, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(s.n_runs > 0, "%s: no runs", path);
        mbs_suite_free(&s);
        n++;
    }
    closedir(d);
    ck_assert_int_ge(n, 20);
}
END_TEST

START_TEST(every_method_and_problem_covered)
{
    mbs_results b;
    load_base(&b);
    for (size_t i = 0; i < mbs_method_count(); i++) {
        const char *name = mbs_method_at(i)->name;
        int seen = 0;
        for (size_t j = 0; j < b.n && !seen; j++)
            seen = strcmp(mbs_jstr(b.recs[j], "method"), name) == 0 && ran(b.recs[j]);
        ck_assert_msg(seen, "method %s has no nightly case that runs", name);
    }
    for (size_t i = 0; i < mbs_problem_count(); i++) {
        const char *name = mbs_problem_at(i)->name;
        int seen = 0;
        for (size_t j = 0; j < b.n && !seen; j++)
            seen = strcmp(mbs_jstr(b.recs[j], "problem"), name) == 0 && ran(b.recs[j]);
        ck_assert_msg(seen, "problem %s has no nightly case that runs", name);
    }
    /* every linear-solver backend offered by some method's `linsol` parameter */
    for (size_t i = 0; i < mbs_method_count(); i++) {
        const mbs_method_def *m = mbs_method_at(i);
        for (size_t k = 0; k < m->n_params; k++) {
            if (strcmp(m->params[k].name, "linsol") != 0 || !m->params[k].choices)
                continue;
            char choices[256];
            snprintf(choices, sizeof choices, "%s", m->params[k].choices);
            for (char *c = strtok(choices, ","); c; c = strtok(NULL, ",")) {
                int seen = 0;
                for (size_t j = 0; j < b.n && !seen; j++) {
                    json_t *ls = json_object_get(
                        json_object_get(json_object_get(b.recs[j], "params"), "method"), "linsol");
                    seen = json_is_string(ls) && strcmp(json_string_value(ls), c) == 0 &&
                           ran(b.recs[j]);
                }
                ck_assert_msg(seen, "linear solver %s (of %s) has no nightly case", c, m->name);
            }
        }
    }
    mbs_results_free(&b);
}
END_TEST

/* The committed baseline is that of the committed suite: every case of the
 * suite has its baseline record (otherwise the coverage above is stale). */
START_TEST(baseline_matches_suite)
{
    mbs_suite s;
    char err[4096];
    ck_assert_msg(mbs_suite_load(nightly_suite, &s, err, sizeof err) == MBS_OK, "%s", err);
    mbs_results b;
    load_base(&b);
    ck_assert_uint_eq(mbs_baseline_budgets(&b, &s), s.n_runs);
    ck_assert_uint_eq(b.n, s.n_runs);
    mbs_results_free(&b);
    mbs_suite_free(&s);
}
END_TEST

/* A case whose method went wrong is stopped by its baseline-derived budget. */
START_TEST(budget_from_baseline)
{
    mbs_suite s;
    char err[4096];
    ck_assert_msg(mbs_suite_load(nightly_suite, &s, err, sizeof err) == MBS_OK, "%s", err);
    mbs_results b;
    load_base(&b);
    /* pretend the baseline needed 40 steps for the long rk4 drift case (5000) */
    size_t hit = 0;
    for (size_t j = 0; j < b.n; j++)
        if (strcmp(mbs_jstr(b.recs[j], "method_spec"), "index1/rk4") == 0 &&
            mbs_jnum(b.recs[j], "t_end") == 50.0) {
            json_object_set_new(json_object_get(b.recs[j], "counters"), "steps", json_integer(40));
            hit++;
        }
    ck_assert_uint_eq(hit, 1);
    mbs_baseline_budgets(&b, &s);
    mbs_run_spec *r = NULL;
    for (size_t i = 0; i < s.n_runs; i++)
        if (strcmp(s.runs[i].method, "index1/rk4") == 0 && s.runs[i].t_end == 50.0)
            r = &s.runs[i];
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->max_steps, 1000);
    r->repeat = 1;
    mbs_record rec;
    ck_assert_int_eq(mbs_run(r, &rec, err, sizeof err), MBS_OK);
    ck_assert_int_eq(rec.status, MBS_TOO_MANY_STEPS);
    ck_assert_msg(strncmp(rec.reason, "budget:", 7) == 0, "%s", rec.reason);
    mbs_record_free(&rec);
    mbs_results_free(&b);
    mbs_suite_free(&s);
}
END_TEST

static json_t *first_with(mbs_results *r, const char *method, const char *field)
{
    for (size_t j = 0; j < r->n; j++)
        if (strcmp(mbs_jstr(r->recs[j], "method_spec"), method) == 0 &&
            mbs_rec_ok(r->recs[j]) && (!field || json_object_get(r->recs[j], field)))
            return r->recs[j];
    return NULL;
}

/* Each tier catches its change: a counter, an error, the final state; the
 * unchanged baseline compares clean. */
START_TEST(tiers_catch_changes)
{
    mbs_results b, n;
    mbs_compare_summary sum;
    FILE *devnull = fopen("/dev/null", "w");
    ck_assert_ptr_nonnull(devnull);
    for (int tier = 0; tier < 4; tier++) {
        load_base(&b);
        load_base(&n);
        json_t *rec = first_with(&n, "ep/midpoint", "final");
        ck_assert_ptr_nonnull(rec);
        if (tier == 1)
            json_object_set_new(json_object_get(rec, "counters"), "f_evals",
                                json_real(mbs_jnum(rec, "counters.f_evals") + 1.0));
        else if (tier == 2)
            json_object_set_new(json_object_get(rec, "err"), "q",
                                json_real(3.0 * mbs_jnum(rec, "err.q") + 1e-9));
        else if (tier == 3) {
            json_t *f = json_object_get(json_object_get(rec, "final"), "q");
            double y0 = json_number_value(json_array_get(f, 0));
            json_array_set_new(f, 0, json_real(y0 + 1e-7 * (1.0 + fabs(y0))));
        }
        int rc = mbs_compare_results(&b, &n, NULL, devnull, &sum);
        ck_assert_msg(rc == (tier > 0), "tier %d: compare returned %d", tier, rc);
        mbs_results_free(&b);
        mbs_results_free(&n);
    }
    fclose(devnull);
}
END_TEST

/* CPU: a 3x slow-down is a regression on the same environment and advisory
 * (exit 0, counted, with the reason) when the CPU model differs. */
START_TEST(cpu_advisory_on_other_environment)
{
    FILE *devnull = fopen("/dev/null", "w");
    ck_assert_ptr_nonnull(devnull);
    for (int other = 0; other < 2; other++) {
        mbs_results b, n;
        load_base(&b);
        load_base(&n);
        ck_assert_ptr_nonnull(n.meta);
        ck_assert_ptr_nonnull(b.meta);
        if (other)
            json_object_set_new(n.meta, "cpu", json_string("another CPU"));
        /* quiet machines for both sweeps, whatever load the baseline was
         * blessed at (a busy start makes every slow-down advisory) */
        json_object_set_new(b.meta, "load_average", json_real(0.0));
        json_object_set_new(n.meta, "load_average", json_real(0.0));
        size_t slowed = 0;
        for (size_t j = 0; j < n.n; j++) {
            if (!(mbs_jnum(n.recs[j], "cpu.median") >= MBS_REGRESS_CPU_MIN))
                continue;
            json_t *ts = json_object_get(json_object_get(n.recs[j], "cpu"), "times");
            size_t k;
            json_t *t;
            json_array_foreach(ts, k, t) json_array_set_new(ts, k,
                                                            json_real(3.0 * json_number_value(t)));
            slowed++;
        }
        ck_assert_uint_gt(slowed, 0);
        mbs_compare_summary sum;
        int rc = mbs_compare_results(&b, &n, NULL, devnull, &sum);
        if (other) {
            ck_assert_int_eq(rc, 0);
            ck_assert_int_gt(sum.cpu_advisory, 0);
        } else {
            ck_assert_int_eq(rc, 1);
            ck_assert_int_gt(sum.regressions, 0);
        }
        mbs_results_free(&b);
        mbs_results_free(&n);
    }
    fclose(devnull);
}
END_TEST

Suite *mbs_suite_nightly(void)
{
    Suite *s = suite_create("nightly");
    TCase *tc = tcase_create("nightly");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_method_and_problem_covered);

    tcase_add_test(tc, every_shipped_suite_parses);
    tcase_add_test(tc, baseline_matches_suite);
    tcase_add_test(tc, budget_from_baseline);
    tcase_add_test(tc, tiers_catch_changes);
    tcase_add_test(tc, cpu_advisory_on_other_environment);
    suite_add_tcase(s, tc);
    return s;
}
