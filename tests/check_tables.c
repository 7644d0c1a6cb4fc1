/* Fair comparison tables: problems without multipliers report a null lambda
 * error; every comparison table of a report compares identical runs and names
 * them; adaptive methods get tolerance exponents and err/tol; digits at fixed cost
 * never drop the cheapest method; `--error final|traj` in summary, the brief
 * verdict and the report. */
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

/* ---- helpers ------------------------------------------------------------------------ */

/* One synthetic run record (the fields the report, summary and brief read). */
typedef struct fake {
    const char *problem, *method;
    double h, tol, t_end;
    double err, drift, fevals, cpu, mescd;
    double traj; /* traj.err_max.q (and v, lambda); NaN: no traj object */
} fake;

static json_t *num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static void write_fakes(const char *dir, const fake *f, int n, const char *suite)
{
    char path[512];
    snprintf(path, sizeof path, "mkdir -p '%s'", dir);
    ck_assert_int_eq(system(path), 0);
    snprintf(path, sizeof path, "%s/runs.jsonl", dir);
    FILE *o = fopen(path, "w");
    ck_assert_ptr_nonnull(o);
    for (int i = 0; i < n; i++) {
        json_t *r = json_pack(
            "{s:i,s:s,s:s,s:s,s:s,s:o,s:o,s:f,s:f,s:s,s:{s:i,s:i,s:i},s:{s:o,s:o,s:o},s:o,"
            "s:o,s:f,s:{s:f,s:f},s:{s:f,s:f},s:{s:f,s:f}}",
            "run", i, "problem", f[i].problem, "method", f[i].method, "problem_spec",
            f[i].problem, "method_spec", f[i].method, "h", num(f[i].h), "tol", num(f[i].tol),
            "t0", 0.0, "t_end", f[i].t_end, "status", "ok", "dims", "nq", 2, "nv", 2, "nl", 1,
            "err", "q", num(f[i].err), "v", num(f[i].err), "lambda", num(f[i].err),
            "drift_exponent", num(f[i].drift), "mescd", num(f[i].mescd), "drift_rms", 0.1,
            "residual", "pos_max", 1e-9, "vel_max", 1e-9, "counters", "f_evals", f[i].fevals,
            "steps", f[i].fevals / 4.0, "cpu", "median", f[i].cpu, "iqr", 0.0);
        if (isfinite(f[i].traj))
            json_object_set_new(r, "traj",
                                json_pack("{s:i,s:s,s:s,s:{s:f,s:f,s:f}}", "n", 101, "interp",
                                          "hermite", "reference", "exact", "err_max", "q",
                                          f[i].traj, "v", f[i].traj, "lambda", f[i].traj));
        char *s = json_dumps(r, JSON_COMPACT);
        fprintf(o, "%s\n", s);
        free(s);
        json_decref(r);
    }
    fclose(o);
    snprintf(path, sizeof path, "%s/meta.json", dir);
    o = fopen(path, "w");
    ck_assert_ptr_nonnull(o);
    fprintf(o, "{\"suite\": \"%s\", \"suite_digest\": \"0123456789abcdef\"}\n", suite);
    fclose(o);
}

/* The Markdown table after the heading `head` of md: rows x cells (row 0: header). */
enum { TROWS = 48, TCOLS = 16, TLEN = 600 };
typedef struct mdtab {
    int nrow, ncol;
    char c[TROWS][TCOLS][TLEN];
} mdtab;

static mdtab *md_table(const char *md, const char *head)
{
    const char *p = strstr(md, head);
    ck_assert_msg(p != NULL, "no section '%s'", head);
    p = strstr(p, "\n|");
    ck_assert_ptr_nonnull(p);
    mdtab *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(t);
    for (p++; *p == '|'; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
        if (strncmp(p, "|---", 4) == 0)
            continue;
        ck_assert_int_lt(t->nrow, TROWS);
        int k = 0;
        const char *q = p + 1, *end = strchr(p, '\n');
        while (q < end && k < TCOLS) {
            const char *bar = memchr(q, '|', (size_t)(end - q));
            if (!bar)
                break;
            size_t n = (size_t)(bar - q);
            while (n && q[0] == ' ')
                q++, n--;
            while (n && q[n - 1] == ' ')
                n--;
            snprintf(t->c[t->nrow][k++], TLEN, "%.*s", (int)n, q);
            q = bar + 1;
        }
        t->ncol = k;
        t->nrow++;
    }
    return t;
}

/* The run indices a cell names ("run 3", "runs 3, 9, 15"): their count. */
static int cell_runs(const char *cell, int *runs, int max)
{
    const char *p = strstr(cell, "run");
    int n = 0;
    if (!p)
        return 0;
    p += strspn(p, "runs");
    while (n < max) {
        char *e;
        long x = strtol(p, &e, 10);
        if (e == p)
            break;
        runs[n++] = (int)x;
        p = e + strspn(e, ", ");
    }
    return n;
}

static json_t *rec_of(const mbs_results *r, int run)
{
    for (size_t i = 0; i < r->n; i++)
        if ((int)mbs_jnum(r->recs[i], "run") == run)
            return r->recs[i];
    ck_abort_msg("run %d not in the results", run);
    return NULL;
}

/* Every cell of table `head` in md names its runs, and within each column the
 * runs are identical up to the method: one t_end, and per kind (fixed step or
 * tolerance) the same h / tol values.  Returns the number of cells checked. */
static int check_identical(const mbs_results *r, const char *md, const char *head)
{
    mdtab *t = md_table(md, head);
    int cells = 0;
    for (int j = 1; j < t->ncol; j++) {
        double t_end = NAN;
        double ref[2][32];
        int nref[2] = {-1, -1};
        for (int i = 1; i < t->nrow; i++) {
            const char *c = t->c[i][j];
            if (strcmp(c, "—") == 0)
                continue;
            int runs[32], n = cell_runs(c, runs, 32);
            ck_assert_msg(n > 0, "%s: cell '%s' names no run", head, c);
            double x[32];
            int kind = -1;
            for (int k = 0; k < n; k++) {
                json_t *o = rec_of(r, runs[k]);
                double te = mbs_jnum(o, "t_end"), h = mbs_jnum(o, "h");
                if (isnan(t_end))
                    t_end = te;
                ck_assert_msg(te == t_end, "%s column %s: t_end %g next to %g", head, t->c[0][j],
                              te, t_end);
                kind = isfinite(h) ? 0 : 1;
                x[k] = isfinite(h) ? h : mbs_jnum(o, "tol");
            }
            cells++;
            if (strstr(head, "Digits")) /* each method's own runs at the reference cost */
                continue;
            if (nref[kind] < 0) {
                nref[kind] = n;
                memcpy(ref[kind], x, (size_t)n * sizeof *x);
                continue;
            }
            ck_assert_msg(n == nref[kind], "%s column %s: %d runs next to %d", head,
                          t->c[0][j], n, nref[kind]);
            for (int k = 0; k < n; k++)
                ck_assert_msg(x[k] == ref[kind][k], "%s column %s: %s %g next to %g", head,
                              t->c[0][j], kind ? "tol" : "h", x[k], ref[kind][k]);
        }
    }
    free(t);
    return cells;
}

static const char *row_cell(const mdtab *t, const char *method, const char *colhead)
{
    char m[600];
    snprintf(m, sizeof m, "`%s`", method);
    for (int i = 1; i < t->nrow; i++)
        if (strcmp(t->c[i][0], m) == 0)
            for (int j = 1; j < t->ncol; j++)
                if (strcmp(t->c[0][j], colhead) == 0)
                    return t->c[i][j];
    ck_abort_msg("no cell %s / %s", method, colhead);
    return NULL;
}

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

/* ---- report tables -------------------------------------------------------------------- */

/* Methods A (fixed step, drift study at t_end 100 and series at t_end 10), B (the
 * same series at t_end 10 only) and C (adaptive, err = 5 tol, cheaper than the
 * others: its runs lie below the reference cost). */
static const fake table_runs[] = {
    {"pendulum", "index1/rk4", 0.02, NAN, 10, 1e-2, 1.5, 1000, 1e-3, 6, NAN},
    {"pendulum", "index1/rk4", 0.01, NAN, 10, 6.25e-4, 1.5, 2000, 2e-3, 7, NAN},
    {"pendulum", "index1/rk4", 0.005, NAN, 10, 3.90625e-5, 1.5, 4000, 4e-3, 8, NAN},
    {"pendulum", "index1/rk4", 0.01, NAN, 100, 1e-3, 3.0, 20000, 2e-2, 5, NAN},
    {"pendulum", "index1/rk4:linsol=chol", 0.02, NAN, 10, 1e-2, 1.5, 1000, 1e-3, 6, NAN},
    {"pendulum", "index1/rk4:linsol=chol", 0.01, NAN, 10, 6.25e-4, 1.5, 2000, 2e-3, 7, NAN},
    {"pendulum", "index1/rk4:linsol=chol", 0.005, NAN, 10, 3.90625e-5, 1.5, 4000, 4e-3, 8,
     NAN},
    {"pendulum", "index1/dopri5", NAN, 1e-4, 10, 5e-4, 2.0, 150, 1e-4, 4, NAN},
    {"pendulum", "index1/dopri5", NAN, 1e-6, 10, 5e-6, 2.0, 300, 2e-4, 6, NAN},
    {"pendulum", "index1/dopri5", NAN, 1e-8, 10, 5e-8, 2.0, 600, 4e-4, 8, NAN},
};

START_TEST(test_report_identical_runs)
{
    char *dir = mbs_test_tmpdir(), rd[512], cmd[1200], out[512], path[600];
    snprintf(rd, sizeof rd, "%s/r", dir);
    write_fakes(rd, table_runs, (int)(sizeof table_runs / sizeof *table_runs), "t");
    snprintf(cmd, sizeof cmd, "report %s --out %s/rep", rd, dir);
    ck_assert_msg(mbs_test_cli(cmd, out, sizeof out) == 0, "report: %s", out);
    snprintf(path, sizeof path, "%s/rep/index.md", dir);
    char *md = mbs_read_file(path, NULL);
    ck_assert_ptr_nonnull(md);
    mbs_results r;
    char err[512];
    ck_assert_int_eq(mbs_results_load_quiet(rd, &r, err, sizeof err), 0);

    /* drift: one column per t_end; the two RK4 variants side by side on the same
     * run (h = 0.005, t_end = 10), the t_end = 100 study in its own column */
    mdtab *t = md_table(md, "## Drift exponents");
    ck_assert_str_eq(row_cell(t, "index1/rk4", "pendulum, t_end 10"),
                     "1.50 (rms 0.10, g_max 1.0e-09; run 2)");
    ck_assert_str_eq(row_cell(t, "index1/rk4:linsol=chol", "pendulum, t_end 10"),
                     "1.50 (rms 0.10, g_max 1.0e-09; run 6)");
    ck_assert_str_eq(row_cell(t, "index1/rk4", "pendulum, t_end 100"),
                     "3.00 (rms 0.10, g_max 1.0e-09; run 3)");
    ck_assert_str_eq(row_cell(t, "index1/rk4:linsol=chol", "pendulum, t_end 100"), "—");
    free(t);

    /* orders: order 4 of the fixed-step series; the adaptive method's tolerance
     * exponent (err = 5 tol: 1), with err/tol 5 at each tolerance */
    t = md_table(md, "## Observed orders");
    ck_assert_ptr_nonnull(strstr(row_cell(t, "index1/rk4", "pendulum"),
                                 "q 4.00 / v 4.00 / lambda 4.00 (runs 0, 1, 2)"));
    ck_assert_ptr_nonnull(strstr(row_cell(t, "index1/dopri5", "pendulum"),
                                 "tol: q 1.00 / v 1.00 / lambda 1.00 (runs 7, 8, 9)"));
    free(t);
    t = md_table(md, "## Tolerance proportionality");
    ck_assert_int_eq(t->nrow, 2);
    ck_assert_str_eq(t->c[1][1], "`index1/dopri5`");
    ck_assert_str_eq(t->c[1][2], "1.00 [1.00, 1.00]");
    ck_assert_str_eq(t->c[1][5], "1e-04: 5; 1e-06: 5; 1e-08: 5");
    free(t);

    /* digits at fixed cost: the reference cost (geometric mean of f_evals at t_end
     * 10: 1062.7) lies above all of dopri5's runs, within one level of its costliest
     * (600, level ratio 2): extrapolated from 5.30 and 7.30 digits at 300 and 600,
     * 7.30 + 2 log2(1062.7 / 600) = 8.95 */
    t = md_table(md, "## Digits at fixed cost");
    ck_assert_str_eq(row_cell(t, "index1/dopri5", "pendulum"), "9.0 extrap. (runs 8, 9)");
    free(t);

    /* every comparison table compares identical runs and names them */
    ck_assert_int_eq(check_identical(&r, md, "## Observed orders"), 3);
    ck_assert_int_eq(check_identical(&r, md, "## Drift exponents"), 4);
    ck_assert_int_eq(check_identical(&r, md, "## Digits at fixed cost"), 3);
    mbs_results_free(&r);
    free(md);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* ---- --error final|traj ---------------------------------------------------------------- */

/* A: fast, accurate at t_end (mescd 8) but 1e-4 along the trajectory; B: slower,
 * mescd 5 at t_end, 1e-7 along the trajectory. */
static const fake traj_runs[] = {
    {"pendulum", "index1/dopri5", NAN, 1e-6, 10, 1e-8, 2.0, 200, 1e-4, 8, 1e-4},
    {"pendulum", "index2/radau5", NAN, 1e-6, 10, 1e-5, 1.0, 400, 1e-3, 5, 1e-7},
};

START_TEST(test_error_kind)
{
    char *dir = mbs_test_tmpdir(), rd[512], cmd[1200], out[512], path[600];
    char *so = NULL, *se = NULL;
    snprintf(rd, sizeof rd, "%s/r", dir);
    write_fakes(rd, traj_runs, 2, "t");
    /* the verdict: fastest run to a mixed error of 1e-6, at t_end or along the trajectory */
    snprintf(cmd, sizeof cmd, "summary %s --brief", rd);
    ck_assert_int_eq(mbs_test_cli_text(cmd, &se, &so), 0);
    const char *row = strstr(so, "\npendulum ");
    ck_assert_ptr_nonnull(row);
    ck_assert_ptr_nonnull(strstr(row, "index1/dopri5"));
    ck_assert_ptr_null(strstr(row, "index2/radau5"));
    free(so);
    free(se);
    snprintf(cmd, sizeof cmd, "summary %s --brief --error traj", rd);
    ck_assert_int_eq(mbs_test_cli_text(cmd, &se, &so), 0);
    ck_assert_ptr_nonnull(strstr(so, "along the trajectory"));
    row = strstr(so, "\npendulum ");
    ck_assert_ptr_nonnull(row);
    ck_assert_ptr_nonnull(strstr(row, "index2/radau5"));
    free(so);
    free(se);
    /* the paper table and the terminal table */
    snprintf(cmd, sizeof cmd, "summary %s --format csv --error traj", rd);
    ck_assert_int_eq(mbs_test_cli_text(cmd, &se, &so), 0);
    ck_assert_ptr_nonnull(strstr(so, ",traj_err_q,traj_err_v,traj_err_lambda,"));
    ck_assert_ptr_nonnull(strstr(so, ",1e-07,1e-07,1e-07,"));
    free(so);
    free(se);
    snprintf(cmd, sizeof cmd, "summary %s --error traj", rd);
    ck_assert_int_eq(mbs_test_cli_text(cmd, &se, &so), 0);
    ck_assert_ptr_nonnull(strstr(so, "traj_q"));
    ck_assert_ptr_nonnull(strstr(so, "1.00e-04"));
    free(so);
    free(se);
    /* the report: tables in the chosen error, work-precision figures in both */
    snprintf(cmd, sizeof cmd, "report %s --out %s/rep --error traj", rd, dir);
    ck_assert_msg(mbs_test_cli(cmd, out, sizeof out) == 0, "report --error traj: %s", out);
    snprintf(cmd, sizeof cmd, "report %s --out %s/rep2", rd, dir);
    ck_assert_msg(mbs_test_cli(cmd, out, sizeof out) == 0, "report: %s", out);
    static const char *const figs[] = {"rep/wp-fevals-q-traj.png", "rep/wp-fevals-q.png",
                                       "rep2/wp-fevals-q-traj.png", "rep2/wp-fevals-q.png"};
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, figs[k]);
        FILE *f = fopen(path, "r");
        ck_assert_msg(f != NULL, "%s missing", figs[k]);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/rep/index.md", dir);
    char *md = mbs_read_file(path, NULL);
    ck_assert_ptr_nonnull(strstr(md, "Errors: the mixed error along the trajectory"));
    ck_assert_ptr_nonnull(strstr(md, "traj_err_q"));
    free(md);
    /* records without trajectory errors: --error traj is refused in one line; a
     * bad value too */
    static const char *const refused[] = {"summary %s --brief --error traj",
                                          "summary %s --format md --error traj",
                                          "summary %s --error traj",
                                          "report %s --out /tmp/never --error traj",
                                          "summary %s --error trajectory"};
    snprintf(rd, sizeof rd, "%s/plain", dir);
    write_fakes(rd, table_runs, 3, "t");
    for (int k = 0; k < 5; k++) {
        int lines;
        snprintf(cmd, sizeof cmd, refused[k], rd);
        ck_assert_int_eq(mbs_test_cli_lines(cmd, out, sizeof out, &lines), 2);
        ck_assert_msg(lines == 1 && strstr(out, "traj"), "%s: %d lines: %s", cmd, lines, out);
    }
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

Suite *mbs_suite_tables(void)
{
    Suite *s = suite_create("tables");
    TCase *tc = tcase_create("tables");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_lambda_null);
    tcase_add_test(tc, test_report_identical_runs);
    tcase_add_test(tc, test_error_kind);
    suite_add_tcase(s, tc);
    return s;
}
