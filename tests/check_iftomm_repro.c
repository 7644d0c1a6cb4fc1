/* `mbsbench reproduce iftomm` (harness/iftomm.h): the IFToMM scoring of a
 * results directory (González, Dopico, Lugrís and Cuadrado 2006
 * [gonzalez2006benchmarking]) checked against a selection computed here from the
 * records, on a small sweep of A01 (20 s and 2000 s, an injected failure):
 * per problem and class each method's cheapest run that meets the class on the
 * relative reading, the fastest marked, a class no run meets with the run of
 * least error, the failed run with its reason, missing runs, the page and its
 * work-precision figure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/io.h"
#include "../harness/results.h"
#include "../harness/traj.h"
#include "testutil.h"

static const char *const suite_text =
    "[suite]\nname = iftomm-test\nrepeat = 1\n\n"
    "[grid adaptive]\nproblems = simple-pendulum\nmethods = proj-index1/rk8pd index2/radau5\n"
    "tol = 1e-5 1e-8 1e-10\nt_end = 20\noutput_steps = 40\n\n"
    "[grid fixed]\nproblems = simple-pendulum\nmethods = index3/genalpha\nh = 1e-2\n"
    "t_end = 20\noutput_steps = 40\n\n"
    "[grid failing]\nproblems = simple-pendulum\nmethods = proj-index1/dopri5\ntol = 1e-6\n"
    "t_end = 20\noutput_steps = 40\ninject_failure = 5\n\n"
    "[grid long]\nproblems = simple-pendulum\nmethods = proj-index1/rk8pd\ntol = 1e-6\n";

static double rel_of(json_t *o)
{
    return mbs_jnum(o, "traj.iftomm.err_rel");
}

/* The row this test expects for record o (prefix up to the accuracy). */
static void row(json_t *o, const char *cls, const char *mark, char *buf, size_t len)
{
    char set[64];
    if (isfinite(mbs_jnum(o, "tol")))
        snprintf(set, sizeof set, "tol=%.3g", mbs_jnum(o, "tol"));
    else
        snprintf(set, sizeof set, "h=%.3g", mbs_jnum(o, "h"));
    snprintf(buf, len, "| simple-pendulum (%g s) | %s | %s%s | %s | %.3g | %.3g |",
             mbs_jnum(o, "t_end"), cls, mark, mbs_jstr(o, "method_spec"), set, rel_of(o),
             mbs_jnum(o, "traj.iftomm.err_abs"));
}

static int count(const char *s, const char *sub)
{
    int n = 0;
    for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub))
        n++;
    return n;
}

START_TEST(reproduce_iftomm_selects_and_reports)
{
    char *dir = mbs_test_tmpdir(), path[600], args[2400];
    snprintf(path, sizeof path, "%s/t.suite", dir);
    mbs_test_write_text(path, suite_text);
    snprintf(args, sizeof args, "sweep %s --out %s/r --no-history > /dev/null", path, dir);
    char line[512];
    ck_assert_int_eq(mbs_test_cli(args, line, sizeof line), 1); /* one run failed */
    char *err = NULL, *out = NULL;
    snprintf(args, sizeof args, "reproduce iftomm --results %s/r --page %s/p", dir, dir);
    int st = mbs_test_cli_text(args, &err, &out);
    ck_assert_msg(st == 0, "exit %d: %s", st, err);

    mbs_results r;
    char e[512];
    snprintf(path, sizeof path, "%s/r", dir);
    ck_assert_int_eq(mbs_results_load_quiet(path, &r, e, sizeof e), 0);
    ck_assert_int_eq((int)r.n, 9);
    static const double bound[2] = {1e-3, 1e-1};
    static const char *const cls[2] = {"high", "low"};
    int abs_would_admit = 0;
    for (int c = 0; c < 2; c++) {
        /* 20 s: each method's cheapest ok run with err_rel <= bound, chosen here */
        size_t pick[9], np = 0, fastest = 9;
        for (size_t i = 0; i < r.n; i++) {
            json_t *o = r.recs[i];
            if (mbs_jnum(o, "t_end") != 20.0 || !mbs_rec_ok(o))
                continue;
            double abs_e = mbs_jnum(o, "traj.iftomm.err_abs");
            abs_would_admit += abs_e <= bound[c] && !(rel_of(o) <= bound[c]);
            if (!(rel_of(o) <= bound[c]))
                continue;
            size_t k = 0;
            while (k < np && strcmp(mbs_jstr(r.recs[pick[k]], "method_spec"),
                                    mbs_jstr(o, "method_spec")) != 0)
                k++;
            if (k == np)
                pick[np++] = i;
            else if (mbs_jnum(o, "cpu.median") < mbs_jnum(r.recs[pick[k]], "cpu.median"))
                pick[k] = i;
        }
        ck_assert_msg(np >= 1, "class %s: no run of the fixture meets it", cls[c]);
        for (size_t k = 0; k < np; k++)
            if (fastest == 9 ||
                mbs_jnum(r.recs[pick[k]], "cpu.median") < mbs_jnum(r.recs[fastest], "cpu.median"))
                fastest = pick[k];
        for (size_t k = 0; k < np; k++) {
            char want[800];
            row(r.recs[pick[k]], cls[c], pick[k] == fastest ? "* " : "", want, sizeof want);
            ck_assert_msg(strstr(out, want), "missing row %s in\n%s", want, out);
        }
        char prefix[96];
        snprintf(prefix, sizeof prefix, "| simple-pendulum (20 s) | %s | ", cls[c]);
        /* the rows of the picks, and one row of the IFToMM form */
        ck_assert_int_eq(count(out, prefix), (int)np + 1);
        /* 2000 s: no run meets the class; the row names the least error */
        json_t *lng = r.recs[8];
        ck_assert_double_eq(mbs_jnum(lng, "t_end"), 2000.0);
        ck_assert_msg(rel_of(lng) > 1e-1, "the 2000 s run meets a class: %g", rel_of(lng));
        char want[800];
        row(lng, cls[c], "none meets it; least error: ", want, sizeof want);
        ck_assert_msg(strstr(out, want), "missing row %s in\n%s", want, out);
    }
    /* the fixture tells the readings apart: an absolute reading would admit runs
     * (index2/radau5 tol 1e-5 abs 3e-4 rel 4e-3; index3/genalpha abs 0.02 rel 0.3) */
    ck_assert_int_ge(abs_would_admit, 1);
    /* the failed run with its status, time and reason */
    json_t *f = r.recs[7];
    ck_assert_str_eq(mbs_jstr(f, "status"), "callback_failed");
    char want[900];
    snprintf(want, sizeof want, "- simple-pendulum (20 s) proj-index1/dopri5 tol=1e-06: "
                                "callback_failed at t = %.4g: %s",
             mbs_jnum(f, "fail_t"), mbs_jstr(f, "reason"));
    ck_assert_msg(strstr(out, want), "missing %s in\n%s", want, out);
    ck_assert_ptr_nonnull(strstr(out, "Runs: 9 recorded, 8 ended ok, 1 failed"));

    /* the page: the tables and the figure's data (one point per ok run of the 20 s
     * panel); the PNG and SVG when gnuplot is there */
    snprintf(path, sizeof path, "%s/p/iftomm.md", dir);
    char *md = mbs_read_file(path, NULL);
    ck_assert_ptr_nonnull(md);
    ck_assert_ptr_nonnull(strstr(md, "![wp-iftomm-rel](wp-iftomm-rel.png)"));
    ck_assert_ptr_nonnull(strstr(md, "| simple-pendulum (2000 s) | high | not met (least error"));
    free(md);
    snprintf(path, sizeof path, "%s/p/data/wp-iftomm-rel-0.dat", dir);
    char *dat = mbs_read_file(path, NULL);
    ck_assert_ptr_nonnull(dat);
    int points = 0;
    for (char *p = dat; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        points += *p != '#' && *p != '\n';
    ck_assert_int_eq(points, 7);
    free(dat);
    snprintf(path, sizeof path, "%s/p/iftomm.html", dir);
    ck_assert_int_eq(access(path, F_OK), 0);
    if (system("command -v gnuplot > /dev/null 2>&1") == 0)
        for (int k = 0; k < 4; k++) {
            snprintf(path, sizeof path, "%s/p/wp-iftomm-%s.%s", dir, k / 2 ? "abs" : "rel",
                     k % 2 ? "svg" : "png");
            ck_assert_msg(access(path, F_OK) == 0, "%s missing", path);
        }
    free(err);
    free(out);

    /* a run without its record: exit 1, named */
    snprintf(args, sizeof args, "mkdir -p %s/m && cp %s/r/meta.json %s/m/ && head -n 8 "
                                "%s/r/runs.jsonl > %s/m/runs.jsonl",
             dir, dir, dir, dir, dir);
    ck_assert_int_eq(system(args), 0);
    snprintf(args, sizeof args, "reproduce iftomm --results %s/m --page %s/pm", dir, dir);
    st = mbs_test_cli_text(args, &err, &out);
    ck_assert_msg(st == 1, "exit %d: %s", st, err);
    ck_assert_msg(strstr(out, "MISSING: 1 of the suite's 9 runs have no record"), "%s", out);
    free(err);
    free(out);
    /* bad input: one line naming it, exit 2 */
    int lines = 0;
    snprintf(args, sizeof args, "reproduce iftomm --results %s/none", dir);
    ck_assert_int_eq(mbs_test_cli_lines(args, line, sizeof line, &lines), 2);
    ck_assert_int_eq(lines, 1);
    ck_assert_msg(strstr(line, "/none"), "%s", line);
    snprintf(args, sizeof args, "reproduce table2 --page %s/q", dir);
    ck_assert_int_eq(mbs_test_cli_lines(args, line, sizeof line, &lines), 2);
    ck_assert_int_eq(lines, 1);
    ck_assert_msg(strstr(line, "--page"), "%s", line);
    mbs_results_free(&r);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

Suite *mbs_suite_iftomm_repro(void)
{
    Suite *s = suite_create("iftomm_repro");
    TCase *tc = tcase_create("iftomm_repro");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, reproduce_iftomm_selects_and_reports);
    suite_add_tcase(s, tc);
    return s;
}
