#include "sweep.h"

#include <ini.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "env.h"
#include "io.h"

enum { MAX_LIST = 128, MAX_GRIDS = 128 };

typedef struct grid {
    char name[64];
    char *problems[MAX_LIST], *methods[MAX_LIST];
    int np, nm;
    double h[MAX_LIST], tol[MAX_LIST];
    int nh, ntol;
    double t_end;
    unsigned seen; /* bit per key, to reject duplicates */
} grid;

typedef struct parse_state {
    const char *path;
    mbs_suite *suite;
    grid grids[MAX_GRIDS];
    int ngrids;
    int repeat;
    long max_steps;
    unsigned suite_seen;
    int have_name;
    char *err;
    size_t errlen, used;
    int nerr;
} parse_state;

static void add_error(parse_state *ps, const char *fmt, ...)
{
    ps->nerr++;
    if (ps->used + 2 >= ps->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(ps->err + ps->used, ps->errlen - ps->used - 1, fmt, ap);
    va_end(ap);
    if (k > 0) {
        ps->used += (size_t)k < ps->errlen - ps->used - 1 ? (size_t)k : ps->errlen - ps->used - 1;
        ps->err[ps->used++] = '\n';
        ps->err[ps->used] = '\0';
    }
}

static char *keep(parse_state *ps, const char *s)
{
    mbs_suite *su = ps->suite;
    char **n = realloc(su->strs, (su->n_strs + 1) * sizeof *n);
    if (!n)
        return NULL;
    su->strs = n;
    char *c = strdup(s);
    if (c)
        su->strs[su->n_strs++] = c;
    return c;
}

/* Split on whitespace into kept strings. */
static int split_words(parse_state *ps, const char *value, char **out, int *n,
                       const char *where, const char *key)
{
    char buf[8192];
    if (strlen(value) >= sizeof buf) {
        add_error(ps, "%s: %s: value too long", where, key);
        return -1;
    }
    strcpy(buf, value);
    char *save = NULL;
    for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (*n >= MAX_LIST) {
            add_error(ps, "%s: %s: more than %d entries", where, key, MAX_LIST);
            return -1;
        }
        out[(*n)++] = keep(ps, w);
    }
    if (*n == 0)
        add_error(ps, "%s: %s: empty list", where, key);
    return 0;
}

static void split_numbers(parse_state *ps, const char *value, double *out, int *n,
                          const char *where, const char *key)
{
    char buf[8192];
    if (strlen(value) >= sizeof buf) {
        add_error(ps, "%s: %s: value too long", where, key);
        return;
    }
    strcpy(buf, value);
    char *save = NULL;
    for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        double x;
        if (*n >= MAX_LIST) {
            add_error(ps, "%s: %s: more than %d entries", where, key, MAX_LIST);
            return;
        }
        if (mbs_parse_double(w, &x) != 0 || !(x > 0.0)) {
            add_error(ps, "%s: %s: '%s' is not a positive finite number", where, key, w);
            continue;
        }
        out[(*n)++] = x;
    }
    if (*n == 0)
        add_error(ps, "%s: %s: empty list", where, key);
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    parse_state *ps = user;
    char where[1200];
    snprintf(where, sizeof where, "%s: [%s]", ps->path, section);
    if (strcmp(section, "suite") == 0) {
        static const char *const keys[] = {"name", "description", "repeat", "max_steps"};
        int k = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(name, keys[i]) == 0)
                k = i;
        if (k < 0) {
            add_error(ps, "%s: unknown key '%s'", where, name);
            return 1;
        }
        if (ps->suite_seen & (1u << k)) {
            add_error(ps, "%s: duplicate key '%s'", where, name);
            return 1;
        }
        ps->suite_seen |= 1u << k;
        long x;
        switch (k) {
        case 0:
            if (*value == '\0' || strlen(value) >= sizeof ps->suite->name ||
                strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
                    strlen(value))
                add_error(ps, "%s: name '%s' must be 1-63 characters of [A-Za-z0-9._-]", where,
                          value);
            else {
                snprintf(ps->suite->name, sizeof ps->suite->name, "%s", value);
                ps->have_name = 1;
            }
            break;
        case 1:
            break;
        case 2:
            if (mbs_parse_long(value, &x) != 0 || x < 0 || x > 100000)
                add_error(ps, "%s: repeat '%s' must be an integer in [0, 100000]", where, value);
            else
                ps->repeat = (int)x;
            break;
        case 3:
            if (mbs_parse_long(value, &x) != 0 || x <= 0)
                add_error(ps, "%s: max_steps '%s' must be a positive integer", where, value);
            else
                ps->max_steps = x;
            break;
        }
        return 1;
    }
    if (strncmp(section, "grid ", 5) != 0 || section[5] == '\0') {
        add_error(ps, "%s: unknown section (expected [suite] or [grid NAME])", where);
        return 1;
    }
    grid *g = NULL;
    for (int i = 0; i < ps->ngrids; i++)
        if (strcmp(ps->grids[i].name, section + 5) == 0)
            g = &ps->grids[i];
    if (!g) {
        if (ps->ngrids >= MAX_GRIDS) {
            add_error(ps, "%s: more than %d grids", where, MAX_GRIDS);
            return 1;
        }
        g = &ps->grids[ps->ngrids++];
        memset(g, 0, sizeof *g);
        snprintf(g->name, sizeof g->name, "%s", section + 5);
        g->t_end = NAN;
    }
    static const char *const keys[] = {"problems", "methods", "h", "tol", "t_end"};
    int k = -1;
    for (int i = 0; i < 5; i++)
        if (strcmp(name, keys[i]) == 0)
            k = i;
    if (k < 0) {
        add_error(ps, "%s: unknown key '%s'", where, name);
        return 1;
    }
    if (g->seen & (1u << k)) {
        add_error(ps, "%s: duplicate key '%s'", where, name);
        return 1;
    }
    g->seen |= 1u << k;
    switch (k) {
    case 0:
        split_words(ps, value, g->problems, &g->np, where, name);
        break;
    case 1:
        split_words(ps, value, g->methods, &g->nm, where, name);
        break;
    case 2:
        split_numbers(ps, value, g->h, &g->nh, where, name);
        break;
    case 3:
        split_numbers(ps, value, g->tol, &g->ntol, where, name);
        break;
    case 4:
        if (mbs_parse_double(value, &g->t_end) != 0 || !(g->t_end > 0.0)) {
            add_error(ps, "%s: t_end '%s' is not a positive finite number", where, value);
            g->t_end = NAN;
        }
        break;
    }
    return 1;
}

static int add_run(mbs_suite *s, const mbs_run_spec *r)
{
    mbs_run_spec *n = realloc(s->runs, (s->n_runs + 1) * sizeof *n);
    if (!n)
        return -1;
    s->runs = n;
    s->runs[s->n_runs++] = *r;
    return 0;
}

/* Validate one grid and expand it into runs. */
static void expand_grid(parse_state *ps, const grid *g)
{
    char where[1200], msg[512];
    snprintf(where, sizeof where, "%s: [grid %s]", ps->path, g->name);
    if (g->np == 0)
        add_error(ps, "%s: missing key 'problems'", where);
    if (g->nm == 0)
        add_error(ps, "%s: missing key 'methods'", where);
    for (int i = 0; i < g->np; i++) {
        mbs_problem pb;
        if (mbs_problem_open(&pb, g->problems[i], msg, sizeof msg) != MBS_OK)
            add_error(ps, "%s: problems: %s", where, msg);
        else
            mbs_problem_close(&pb);
    }
    for (int j = 0; j < g->nm; j++) {
        const mbs_method_def *m;
        mbs_params mp;
        if (mbs_method_parse(g->methods[j], &m, &mp, msg, sizeof msg) != MBS_OK) {
            add_error(ps, "%s: methods: %s", where, msg);
            continue;
        }
        int fixed = (m->flags & MBS_M_FIXED_STEP) != 0;
        if (fixed && g->nh == 0)
            add_error(ps, "%s: method %s is fixed-step but the grid has no 'h'", where, m->name);
        if (!fixed && g->ntol == 0)
            add_error(ps, "%s: method %s is adaptive but the grid has no 'tol'", where, m->name);
        for (int i = 0; i < g->np; i++) {
            int n = fixed ? g->nh : g->ntol;
            for (int k = 0; k < n; k++) {
                mbs_run_spec r = {.problem = g->problems[i], .method = g->methods[j],
                                  .h = fixed ? g->h[k] : NAN, .tol = fixed ? NAN : g->tol[k],
                                  .t_end = g->t_end, .repeat = ps->repeat,
                                  .max_steps = ps->max_steps, .measure = 1};
                if (!fixed && !(g->tol[k] < 1.0)) {
                    add_error(ps, "%s: tol %g must be below 1", where, g->tol[k]);
                    continue;
                }
                if (add_run(ps->suite, &r) != 0)
                    add_error(ps, "%s: out of memory", where);
            }
        }
    }
}

int mbs_suite_load(const char *path, mbs_suite *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    parse_state *ps = calloc(1, sizeof *ps);
    if (!ps) {
        snprintf(err, errlen, "out of memory");
        return MBS_BAD_INPUT;
    }
    ps->path = path;
    ps->suite = s;
    ps->repeat = 1;
    ps->err = err;
    ps->errlen = errlen;
    err[0] = '\0';
    size_t len = 0;
    char *text = mbs_read_file(path, &len);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read suite file\n", path);
        free(ps);
        return MBS_BAD_INPUT;
    }
    if (strlen(text) != len)
        add_error(ps, "%s: contains NUL bytes (not a text file)", path);
    else {
        int line = ini_parse_string(text, handler, ps);
        if (line > 0)
            add_error(ps, "%s:%d: syntax error (expected [section] or key = value)", path, line);
    }
    free(text);
    if (ps->nerr == 0 && !ps->have_name)
        add_error(ps, "%s: [suite] name is required", path);
    if (ps->nerr == 0 && ps->ngrids == 0)
        add_error(ps, "%s: no [grid NAME] section", path);
    if (ps->nerr == 0)
        for (int i = 0; i < ps->ngrids; i++)
            expand_grid(ps, &ps->grids[i]);
    int bad = ps->nerr > 0;
    free(ps);
    if (bad) {
        mbs_suite_free(s);
        return MBS_BAD_INPUT;
    }
    return MBS_OK;
}

void mbs_suite_free(mbs_suite *s)
{
    for (size_t i = 0; i < s->n_strs; i++)
        free(s->strs[i]);
    free(s->strs);
    free(s->runs);
    s->strs = NULL;
    s->runs = NULL;
    s->n_strs = s->n_runs = 0;
}

/* Run the runs with index % jobs == worker; returns the number of failed runs
 * or -1 on an I/O error. */
static int worker(const mbs_suite *s, int jsonl, int csv, int job, int jobs, int progress)
{
    int failed = 0;
    for (size_t i = (size_t)job; i < s->n_runs; i += (size_t)jobs) {
        const mbs_run_spec *r = &s->runs[i];
        if (progress)
            fprintf(stderr, "\r[%zu/%zu] %s %s %-20s", i + 1, s->n_runs, r->problem, r->method,
                    "");
        mbs_record rec;
        char msg[512];
        if (mbs_run(r, &rec, msg, sizeof msg) != MBS_OK) {
            fprintf(stderr, "mbsbench: run %zu: %s\n", i, msg);
            failed++;
            continue;
        }
        rec.run_index = (long)i;
        char *line = mbs_record_json(&rec);
        char *cbuf = NULL;
        size_t clen = 0;
        FILE *mem = open_memstream(&cbuf, &clen);
        if (mem) {
            mbs_record_csv(&rec, mem);
            fclose(mem);
            if (clen > 0 && cbuf[clen - 1] == '\n')
                cbuf[clen - 1] = '\0';
        }
        int io = !line || !cbuf || mbs_append_line(jsonl, line) != 0 ||
                 mbs_append_line(csv, cbuf) != 0;
        free(line);
        free(cbuf);
        if (rec.status != MBS_OK)
            failed++;
        mbs_record_free(&rec);
        if (io)
            return -1;
    }
    return failed;
}

int mbs_sweep(const mbs_suite *s, const char *outdir, int jobs, FILE *out)
{
    char path[4096];
    if (mbs_mkdir_p(outdir) != 0) {
        fprintf(stderr, "mbsbench: cannot create results directory '%s'\n", outdir);
        return 2;
    }
    char *meta = mbs_environment_json(s->name, s->path);
    snprintf(path, sizeof path, "%s/meta.json", outdir);
    int bad = !meta || mbs_write_atomic(path, meta, strlen(meta)) != 0;
    free(meta);
    snprintf(path, sizeof path, "%s/runs.jsonl", outdir);
    int jsonl = mbs_open_append(path);
    snprintf(path, sizeof path, "%s/runs.csv", outdir);
    int csv_exists = access(path, F_OK) == 0;
    int csv = mbs_open_append(path);
    if (bad || jsonl < 0 || csv < 0) {
        fprintf(stderr, "mbsbench: cannot write results into '%s'\n", outdir);
        if (jsonl >= 0)
            close(jsonl);
        if (csv >= 0)
            close(csv);
        return 2;
    }
    if (!csv_exists) {
        char *hbuf = NULL;
        size_t hlen = 0;
        FILE *mem = open_memstream(&hbuf, &hlen);
        if (mem) {
            mbs_record_csv_header(mem);
            fclose(mem);
            hbuf[hlen - 1] = '\0';
            mbs_append_line(csv, hbuf);
        }
        free(hbuf);
    }
    int progress = isatty(STDERR_FILENO);
    int failed = 0, io_error = 0;
    if (jobs <= 1) {
        failed = worker(s, jsonl, csv, 0, 1, progress);
        io_error = failed < 0;
    } else {
        fflush(NULL);
        pid_t *pids = calloc((size_t)jobs, sizeof *pids);
        for (int j = 0; pids && j < jobs; j++) {
            pid_t pid = fork();
            if (pid == 0) {
                int f = worker(s, jsonl, csv, j, jobs, progress && j == 0);
                _exit(f < 0 ? 255 : (f > 0 ? 1 : 0));
            }
            pids[j] = pid;
        }
        for (int j = 0; pids && j < jobs; j++) {
            int st = 0;
            if (pids[j] > 0 && waitpid(pids[j], &st, 0) > 0) {
                if (WIFSIGNALED(st)) {
                    fprintf(stderr, "mbsbench: worker %d killed by signal %d\n", j,
                            WTERMSIG(st));
                    failed++;
                } else if (WEXITSTATUS(st) == 255)
                    io_error = 1;
                else if (WEXITSTATUS(st) != 0)
                    failed++;
            } else {
                failed++;
            }
        }
        free(pids);
    }
    if (progress)
        fprintf(stderr, "\r%-78s\r", "");
    close(jsonl);
    close(csv);
    if (io_error) {
        fprintf(stderr, "mbsbench: error writing results into '%s'\n", outdir);
        return 2;
    }
    fprintf(out, "suite %s: %zu runs, results in %s\n", s->name, s->n_runs, outdir);
    mbs_summary(outdir, out);
    return failed > 0 ? 1 : 0;
}

static double jnum(json_t *o, const char *a, const char *b)
{
    json_t *x = json_object_get(o, a);
    if (b)
        x = json_object_get(x, b);
    return json_is_number(x) ? json_number_value(x) : NAN;
}

static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "?";
}

static int by_run_index(const void *a, const void *b)
{
    double x = jnum(*(json_t *const *)a, "run", NULL);
    double y = jnum(*(json_t *const *)b, "run", NULL);
    return (x > y) - (x < y);
}

int mbs_summary(const char *dir, FILE *out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/runs.jsonl", dir);
    char *text = mbs_read_file(path, NULL);
    if (!text) {
        fprintf(stderr, "mbsbench: cannot read %s\n", path);
        return 2;
    }
    size_t n = 0, cap = 0;
    json_t **recs = NULL;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *o = json_loads(line, 0, NULL);
        if (!o)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            json_t **nr = realloc(recs, cap * sizeof *nr);
            if (!nr) {
                json_decref(o);
                break;
            }
            recs = nr;
        }
        recs[n++] = o;
    }
    free(text);
    qsort(recs, n, sizeof *recs, by_run_index);
    fprintf(out, "%-26s %-26s %-10s %-15s %9s %9s %9s %9s %8s %10s\n", "problem", "method",
            "h|tol", "status", "err_q", "err_v", "err_lam", "|g|max", "steps", "cpu[s]");
    for (size_t i = 0; i < n; i++) {
        json_t *o = recs[i];
        char step[32];
        double h = jnum(o, "h", NULL);
        if (isfinite(h))
            snprintf(step, sizeof step, "h=%.3g", h);
        else
            snprintf(step, sizeof step, "tol=%.0e", jnum(o, "tol", NULL));
        fprintf(out, "%-26.26s %-26.26s %-10s %-15.15s", jstr(o, "problem_spec"),
                jstr(o, "method_spec"), step, jstr(o, "status"));
        const double v[] = {jnum(o, "err", "q"), jnum(o, "err", "v"), jnum(o, "err", "lambda"),
                            jnum(o, "residual", "pos_max")};
        for (int k = 0; k < 4; k++) {
            if (isfinite(v[k]))
                fprintf(out, " %9.2e", v[k]);
            else
                fprintf(out, " %9s", "-");
        }
        fprintf(out, " %8.0f", jnum(o, "counters", "steps"));
        double c = jnum(o, "cpu", "median");
        if (isfinite(c))
            fprintf(out, " %10.3e\n", c);
        else
            fprintf(out, " %10s\n", "-");
        if (strcmp(jstr(o, "status"), "ok") != 0)
            fprintf(out, "    %s at t = %g: %s\n", jstr(o, "status"), jnum(o, "fail_t", NULL),
                    jstr(o, "reason"));
        json_decref(o);
    }
    free(recs);
    return 0;
}
