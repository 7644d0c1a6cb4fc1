/* Results history in SQLite (harness/history.h). */
#include "history.h"

#include <fnmatch.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "io.h"
#include "fit.h"
#include "results.h"

int mbs_history_default_path(const char *results_dir, char *buf, size_t len)
{
    char d[4096];
    mbs_path_copy_trimmed(results_dir, d, sizeof d);
    char *slash = strrchr(d, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    const char *parent = strrchr(d, '/');
    parent = parent ? parent + 1 : d;
    if (strcmp(parent, "results") != 0)
        return -1;
    snprintf(buf, len, "%s/history.sqlite", d);
    return 0;
}

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS sweeps(id INTEGER PRIMARY KEY, suite TEXT, results_dir TEXT,"
    " date TEXT, revision TEXT, host TEXT, cpu TEXT, compiler TEXT, environment TEXT);"
    "CREATE TABLE IF NOT EXISTS runs(sweep_id INTEGER NOT NULL REFERENCES sweeps(id),"
    " run INTEGER, problem TEXT, method TEXT, problem_spec TEXT, method_spec TEXT,"
    " h REAL, tol REAL, t_end REAL, status TEXT, err_q REAL, err_v REAL, err_lambda REAL,"
    " scd REAL, drift_exponent REAL, cpu_median REAL, steps INTEGER, f_evals INTEGER,"
    " record TEXT);"
    "CREATE INDEX IF NOT EXISTS runs_pm ON runs(problem, method);";

static int open_db(const char *path, sqlite3 **db, char *err, size_t errlen)
{
    if (sqlite3_open(path, db) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open %s: %s", path, *db ? sqlite3_errmsg(*db) : "no memory");
        sqlite3_close(*db);
        *db = NULL;
        return -1;
    }
    sqlite3_busy_timeout(*db, 60000);
    char *msg = NULL;
    /* Two sweeps creating the database at once: switching to WAL takes an
     * exclusive lock that the busy handler does not wait for (SQLITE_BUSY
     * straight away), so retry for up to 10 s. */
    int rc = SQLITE_BUSY;
    for (int attempt = 0; attempt < 200; attempt++) {
        sqlite3_free(msg);
        msg = NULL;
        rc = sqlite3_exec(*db, "PRAGMA journal_mode=WAL;", NULL, NULL, &msg);
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(*db, schema, NULL, NULL, &msg);
        if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
            break;
        struct timespec pause = {0, 50000000};
        nanosleep(&pause, NULL);
    }
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, msg ? msg : sqlite3_errmsg(*db));
        sqlite3_free(msg);
        sqlite3_close(*db);
        *db = NULL;
        return -1;
    }
    return 0;
}

static void bind_num(sqlite3_stmt *st, int i, double x)
{
    if (isfinite(x))
        sqlite3_bind_double(st, i, x);
    else
        sqlite3_bind_null(st, i);
}

static const char *meta_str(json_t *meta, const char *k)
{
    json_t *env = json_object_get(meta, "environment");
    const char *s = json_string_value(json_object_get(env ? env : meta, k));
    if (!s)
        s = json_string_value(json_object_get(meta, k));
    return s ? s : "";
}

int mbs_history_append(const char *db_path, const char *results_dir, char *err, size_t errlen)
{
    mbs_results r;
    if (mbs_results_load(results_dir, &r, err, errlen) != 0)
        return -1;
    sqlite3 *db;
    if (open_db(db_path, &db, err, errlen) != 0) {
        mbs_results_free(&r);
        return -1;
    }
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE;", NULL, NULL, NULL);
    sqlite3_stmt *ss = NULL, *rs = NULL;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "INSERT INTO sweeps(suite, results_dir, date, revision, host, cpu,"
                                " compiler, environment) VALUES(?,?,?,?,?,?,?,?);",
                                -1, &ss, NULL);
    char *env = r.meta ? json_dumps(r.meta, JSON_COMPACT) : NULL;
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(ss, 1, meta_str(r.meta, "suite"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ss, 2, results_dir, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ss, 3, meta_str(r.meta, "date"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ss, 4, meta_str(r.meta, "revision"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ss, 5, meta_str(r.meta, "host"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ss, 6, meta_str(r.meta, "cpu"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ss, 7, meta_str(r.meta, "compiler"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ss, 8, env ? env : "{}", -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(ss) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    free(env);
    sqlite3_int64 id = sqlite3_last_insert_rowid(db);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "INSERT INTO runs VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?);",
                                -1, &rs, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < r.n; i++) {
        json_t *o = r.recs[i];
        char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
        sqlite3_reset(rs);
        sqlite3_bind_int64(rs, 1, id);
        sqlite3_bind_int64(rs, 2, (sqlite3_int64)mbs_jnum(o, "run"));
        sqlite3_bind_text(rs, 3, mbs_jstr(o, "problem"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(rs, 4, mbs_jstr(o, "method"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(rs, 5, mbs_jstr(o, "problem_spec"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(rs, 6, mbs_jstr(o, "method_spec"), -1, SQLITE_TRANSIENT);
        bind_num(rs, 7, mbs_jnum(o, "h"));
        bind_num(rs, 8, mbs_jnum(o, "tol"));
        bind_num(rs, 9, mbs_jnum(o, "t_end"));
        sqlite3_bind_text(rs, 10, mbs_jstr(o, "status"), -1, SQLITE_TRANSIENT);
        bind_num(rs, 11, mbs_jnum(o, "err.q"));
        bind_num(rs, 12, mbs_jnum(o, "err.v"));
        bind_num(rs, 13, mbs_jnum(o, "err.lambda"));
        bind_num(rs, 14, mbs_jnum(o, "scd"));
        bind_num(rs, 15, mbs_jnum(o, "drift_exponent"));
        bind_num(rs, 16, mbs_jnum(o, "cpu.median"));
        bind_num(rs, 17, mbs_jnum(o, "counters.steps"));
        bind_num(rs, 18, mbs_jnum(o, "counters.f_evals"));
        sqlite3_bind_text(rs, 19, text ? text : "null", -1, SQLITE_TRANSIENT);
        free(text);
        rc = sqlite3_step(rs) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT;", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", db_path, sqlite3_errmsg(db));
        sqlite3_exec(db, "ROLLBACK;", NULL, NULL, NULL);
    }
    sqlite3_finalize(ss);
    sqlite3_finalize(rs);
    sqlite3_close(db);
    mbs_results_free(&r);
    return rc == SQLITE_OK ? 0 : -1;
}

/* ---- history command ---------------------------------------------------------- */

typedef struct point {
    long sweep;
    char date[32], rev[48], series[512];
    double x, value; /* x: h or tol of the run (order_q: unused) */
} point;

typedef struct pts {
    point *p;
    size_t n, cap;
} pts;

static int add_point(pts *v, const point *p)
{
    if (v->n == v->cap) {
        size_t nc = v->cap ? 2 * v->cap : 64;
        point *np = realloc(v->p, nc * sizeof *np);
        if (!np)
            return -1;
        v->p = np;
        v->cap = nc;
    }
    v->p[v->n++] = *p;
    return 0;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? (const char *)s : "";
}

static double col_num(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* Does a spec match the -p / -m argument?  Exactly by default; as a shell glob
 * (fnmatch) with --glob (names used to match every spec of the problem
 * or method, like a prefix). */
static int spec_match(const char *spec, const char *want, int glob)
{
    return glob ? fnmatch(want, spec, 0) == 0 : strcmp(spec, want) == 0;
}

/* Rows of (problem, method) ordered by sweep; metric cpu_median or err_q gives one
 * point per run, order_q one per sweep and refinement series (fit over h).  A
 * series is one case: suite, problem and method specs, t_end, tolerance mode and
 * atol, and h or tol (order_q: without h). */
static int query(sqlite3 *db, const char *p, const char *m, int glob, const char *metric,
                 pts *out)
{
    sqlite3_stmt *st;
    const char *sql =
        "SELECT s.id, s.date, s.revision, r.problem_spec, r.method_spec, r.h, r.tol,"
        " r.t_end, r.status, r.err_q, r.cpu_median, s.suite,"
        " json_extract(r.record, '$.tol_mode'), json_extract(r.record, '$.atol')"
        " FROM runs r JOIN sweeps s ON s.id = r.sweep_id"
        " ORDER BY s.id, s.suite, r.problem_spec, r.method_spec, r.t_end, r.h DESC, r.tol DESC;";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int order = strcmp(metric, "order_q") == 0;
    /* order_q: collect (h, err) of one series, fit when the series changes */
    double hs[64], es[64];
    size_t nh = 0;
    point cur = {0};
    int rc = 0;
    for (;;) {
        int step = sqlite3_step(st);
        point pt = {0};
        if (step == SQLITE_ROW) {
            if (!spec_match(col_text(st, 3), p, glob) || !spec_match(col_text(st, 4), m, glob))
                continue;
            pt.sweep = (long)sqlite3_column_int64(st, 0);
            snprintf(pt.date, sizeof pt.date, "%s", col_text(st, 1));
            snprintf(pt.rev, sizeof pt.rev, "%s", col_text(st, 2));
            double h = col_num(st, 5), tol = col_num(st, 6), t_end = col_num(st, 7);
            int ok = strcmp(col_text(st, 8), "ok") == 0;
            pt.x = isfinite(h) ? h : tol;
            char mode[64] = "";
            double atol = col_num(st, 13);
            if (strcmp(col_text(st, 12), "global") == 0)
                snprintf(mode, sizeof mode, " global");
            if (isfinite(atol))
                snprintf(mode + strlen(mode), sizeof mode - strlen(mode), " atol=%g", atol);
            if (order) {
                if (!isfinite(h))
                    continue;
                snprintf(pt.series, sizeof pt.series, "[%.60s] %.120s %.120s t_end=%g",
                         col_text(st, 11), col_text(st, 3), col_text(st, 4), t_end);
            } else {
                snprintf(pt.series, sizeof pt.series, "[%.60s] %.120s %.120s %s=%g%s t_end=%g",
                         col_text(st, 11), col_text(st, 3), col_text(st, 4),
                         isfinite(h) ? "h" : "tol", pt.x, mode, t_end);
            }
            pt.value = !ok ? NAN : strcmp(metric, "cpu_median") == 0 ? col_num(st, 10)
                                                                      : col_num(st, 9);
        } else if (step != SQLITE_DONE) {
            rc = -1;
            break;
        }
        if (!order) {
            if (step == SQLITE_DONE)
                break;
            if (add_point(out, &pt) != 0) {
                rc = -1;
                break;
            }
            continue;
        }
        int flush = step == SQLITE_DONE || pt.sweep != cur.sweep ||
                    strcmp(pt.series, cur.series) != 0;
        if (flush && nh >= 3) {
            mbs_order_fit f;
            mbs_fit_order(hs, es, nh, &f);
            cur.value = f.established ? f.p : NAN;
            if (add_point(out, &cur) != 0) {
                rc = -1;
                break;
            }
        }
        if (step == SQLITE_DONE)
            break;
        if (flush) {
            cur = pt;
            nh = 0;
        }
        if (nh < 64) {
            hs[nh] = pt.x;
            es[nh] = pt.value;
            nh++;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

static int plot(const pts *v, const char *metric, const char *p, const char *m,
                const char *png)
{
    char dat[4200], gp[4200];
    snprintf(dat, sizeof dat, "%s.dat", png);
    snprintf(gp, sizeof gp, "%s.gp", png);
    FILE *f = fopen(dat, "w"), *g = fopen(gp, "w");
    if (!f || !g) {
        if (f)
            fclose(f);
        if (g)
            fclose(g);
        return -1;
    }
    /* one gnuplot data block per series (separated by two blank lines) */
    char series[64][512];
    int ns = 0;
    for (size_t i = 0; i < v->n && ns < 64; i++) {
        int seen = 0;
        for (int k = 0; k < ns; k++)
            seen |= strcmp(series[k], v->p[i].series) == 0;
        if (!seen)
            snprintf(series[ns++], sizeof series[0], "%s", v->p[i].series);
    }
    for (int k = 0; k < ns; k++) {
        fprintf(f, "# %s\n", series[k]);
        for (size_t i = 0; i < v->n; i++)
            if (strcmp(series[k], v->p[i].series) == 0 && isfinite(v->p[i].value))
                fprintf(f, "%ld %.10e\n", v->p[i].sweep, v->p[i].value);
        fprintf(f, "\n\n");
    }
    fclose(f);
    const char *ylabel = strcmp(metric, "cpu_median") == 0 ? "median CPU time [s]"
                         : strcmp(metric, "err_q") == 0    ? "error in q at t_{end} (max-norm)"
                                                           : "observed order in q";
    fprintf(g, "set terminal pngcairo size 900,560 font 'DejaVu Sans,10'\nset output '%s'\n",
            png);
    fprintf(g, "set title 'history of %s: %s, %s' noenhanced\n", metric, p, m);
    fprintf(g, "set xlabel 'sweep number (history.sqlite id)'\nset ylabel '%s'\n", ylabel);
    fprintf(g, "set key outside bottom center horizontal noenhanced\nset grid\n");
    long smin = v->n ? v->p[0].sweep : 0, smax = v->n ? v->p[v->n - 1].sweep : 0;
    if (smax - smin <= 25) /* sweep ids are integers */
        fprintf(g, "set xtics 1\nset xrange [%ld:%ld]\n", smin - 1 > 0 ? smin - 1 : 0, smax + 1);
    if (strcmp(metric, "order_q") != 0)
        fprintf(g, "set logscale y\nset format y '10^{%%L}'\n");
    fprintf(g, "plot ");
    for (int k = 0; k < ns; k++)
        fprintf(g, "%s'%s' index %d using 1:2 with linespoints lw 2 title '%s'", k ? ", " : "",
                dat, k, series[k]);
    fprintf(g, "\n");
    fclose(g);
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "gnuplot '%s' 2>&1", gp);
    return system(cmd) == 0 ? 0 : -1;
}

int mbs_cmd_history(int argc, char **argv)
{
    const char *p = NULL, *m = NULL, *metric = "err_q", *dbp = "results/history.sqlite",
               *png = NULL;
    int do_plot = 0, glob = 0;
    const mbs_cli_cmd *cmd = mbs_cli_find("history");
    for (int i = 2; i < argc; i++) {
        mbs_cli_arg a;
        int k = mbs_cli_next(cmd, argc, argv, &i, &a);
        if (k < 0)
            return 2;
        if (mbs_cli_is(&a, "--plot"))
            do_plot = 1;
        else if (mbs_cli_is(&a, "--glob"))
            glob = 1;
        else if (mbs_cli_is(&a, "--problem"))
            p = a.str;
        else if (mbs_cli_is(&a, "--method"))
            m = a.str;
        else if (mbs_cli_is(&a, "--metric"))
            metric = a.str;
        else if (mbs_cli_is(&a, "--db"))
            dbp = a.str;
        else if (mbs_cli_is(&a, "--out"))
            png = a.str;
        else {
            fprintf(stderr, "mbsbench: history: unexpected argument '%s'\n", a.str);
            return 2;
        }
    }
    if (metric && strcmp(metric, "cpu_median") && strcmp(metric, "err_q") &&
        strcmp(metric, "order_q")) {
        fprintf(stderr, "mbsbench: history: --metric '%s' is not one of cpu_median, err_q, "
                        "order_q\n", metric);
        return 2;
    }
    if (!p || !m || !metric) {
        fprintf(stderr, "mbsbench: usage: mbsbench history -p P -m M --metric "
                        "cpu_median|err_q|order_q [--db FILE] [--glob] [--plot [--out "
                        "FILE.png]]\n");
        return 2;
    }
    FILE *probe = fopen(dbp, "r");
    if (!probe) {
        fprintf(stderr, "mbsbench: no history database %s (sweeps create it)\n", dbp);
        return 2;
    }
    fclose(probe);
    sqlite3 *db;
    char err[1024];
    if (open_db(dbp, &db, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    pts v = {0};
    int order = strcmp(metric, "order_q") == 0;
    int rc = query(db, p, m, glob, metric, &v);
    sqlite3_close(db);
    if (rc != 0) {
        fprintf(stderr, "mbsbench: history query failed\n");
        free(v.p);
        return 2;
    }
    if (v.n == 0) {
        fprintf(stderr, "mbsbench: no runs of %s on %s in %s%s%s\n", m, p, dbp,
                order ? " with at least 3 step sizes in one sweep (order_q)" : "",
                glob ? "" : " (exact specs; --glob for patterns)");
        free(v.p);
        return 2;
    }
    printf("%-6s %-20s %-22s %-60s %12s %9s\n", "sweep", "date", "revision", "series", metric,
           "vs first");
    /* a series wider than its column is printed in full (it is the case's key) */
    for (size_t i = 0; i < v.n; i++) {
        double first = NAN;
        for (size_t j = 0; j < i + 1 && isnan(first); j++)
            if (strcmp(v.p[j].series, v.p[i].series) == 0)
                first = v.p[j].value;
        char val[32], rel[32] = "";
        if (isfinite(v.p[i].value))
            snprintf(val, sizeof val, "%.4g", v.p[i].value);
        else
            snprintf(val, sizeof val, "n/a");
        if (isfinite(first) && isfinite(v.p[i].value)) {
            if (strcmp(metric, "order_q") == 0)
                snprintf(rel, sizeof rel, "%+.2f", v.p[i].value - first);
            else if (first > 0.0)
                snprintf(rel, sizeof rel, "x%.3g", v.p[i].value / first);
        }
        printf("%-6ld %-20.20s %-22.22s %-60s %12s %9s\n", v.p[i].sweep, v.p[i].date,
               v.p[i].rev, v.p[i].series, val, rel);
    }
    int st = 0;
    if (do_plot) {
        char def[512];
        if (!png) {
            snprintf(def, sizeof def, "history-%s.png", metric);
            png = def;
        }
        if (plot(&v, metric, p, m, png) != 0) {
            fprintf(stderr, "mbsbench: gnuplot failed for %s\n", png);
            st = 2;
        } else {
            printf("plot: %s\n", png);
        }
    }
    free(v.p);
    return st;
}
