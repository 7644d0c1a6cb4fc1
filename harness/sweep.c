#include "sweep.h"

#include <ini.h>
#include <jansson.h>
#include <math.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "results.h"
#include "io.h"
#include "shard.h"

enum { MAX_LIST = 128, MAX_GRIDS = 128 };

typedef struct grid {
    char name[64];
    char *problems[MAX_LIST], *methods[MAX_LIST];
    int np, nm;
    double h[MAX_LIST], tol[MAX_LIST];
    int nh, ntol;
    double t_end;
    double inject_fail_t; /* testing the harness: callbacks fail for t >= this */
    double atol;          /* absolute tolerance of adaptive methods; 0: the same as tol */
    int tol_mode;         /* MBS_TOL_LOCAL or MBS_TOL_GLOBAL (run.h) */
    unsigned seen; /* bit per key, to reject duplicates */
    int line[8];   /* line of each key (problems, methods, h, tol, t_end, inject_failure, atol,
                      tol_mode) */
} grid;

typedef struct parse_state {
    const char *path;
    mbs_suite *suite;
    grid grids[MAX_GRIDS];
    int ngrids;
    int repeat;
    long max_steps;
    double max_cpu, max_wall, max_mem;
    unsigned suite_seen;
    int have_name;
    char *err;
    size_t errlen, used;
    int nerr;
    const char *text;   /* the file, to find the line of each key */
    const char *cursor; /* inih reports keys in file order: search from here */
    int line;           /* line of the current key */
    int continuation;   /* the current value is an indented continuation line */
} parse_state;

/* libinih (as packaged by Debian) reads lines of at most 200 characters. */
enum { MAX_LINE = 190 };

/* Advance the cursor to the line holding `name = ...` (or `name : ...`) and set
 * ps->line; inih calls the handler in file order. */
static void locate(parse_state *ps, const char *name)
{
    size_t len = strlen(name);
    const char *p = ps->cursor;
    ps->continuation = 0;
    /* An indented non-empty line right at the cursor continues the previous key. */
    while (p && (*p == '\n' || *p == ';' || *p == '#')) {
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
    if (p && (*p == ' ' || *p == '\t')) {
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q != '\n' && *q != '\0' && *q != ';' && *q != '#') {
            int line = 1;
            for (const char *c = ps->text; c < p; c++)
                line += *c == '\n';
            ps->line = line;
            ps->continuation = 1;
            const char *nl = strchr(p, '\n');
            ps->cursor = nl ? nl + 1 : p + strlen(p);
            return;
        }
    }
    p = ps->cursor;
    while (p && *p) {
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, name, len) == 0) {
            const char *r = q + len;
            while (*r == ' ' || *r == '\t')
                r++;
            if (*r == '=' || *r == ':') {
                int line = 1;
                for (const char *c = ps->text; c < p; c++)
                    line += *c == '\n';
                ps->line = line;
                const char *nl = strchr(p, '\n');
                ps->cursor = nl ? nl + 1 : p + strlen(p);
                return;
            }
        }
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
}

static size_t mbs_count_newlines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void add_error(parse_state *ps, const char *fmt, ...)
{
    ps->nerr++;
    if (ps->used + 2 >= ps->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    /* Room for the message, its newline and the terminating NUL. */
    size_t room = ps->errlen - ps->used - 1;
    int k = vsnprintf(ps->err + ps->used, room, fmt, ap);
    va_end(ap);
    if (k > 0) {
        ps->used += (size_t)k < room - 1 ? (size_t)k : room - 1; /* vsnprintf truncates */
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
    int before = ps->nerr;
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
    if (*n == 0 && ps->nerr == before)
        add_error(ps, "%s: %s: empty list", where, key);
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    parse_state *ps = user;
    char where[1200];
    locate(ps, name);
    snprintf(where, sizeof where, "%s:%d: [%s]", ps->path, ps->line, section);
    if (strcmp(section, "suite") == 0) {
        static const char *const keys[] = {"name",    "description", "repeat", "max_steps",
                                           "max_cpu", "max_wall",    "max_mem"};
        int k = -1;
        for (int i = 0; i < 7; i++)
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
        case 4:
            if (mbs_parse_double(value, &ps->max_cpu) != 0 || !(ps->max_cpu > 0.0)) {
                add_error(ps, "%s: max_cpu '%s' must be a positive number of seconds", where,
                          value);
                ps->max_cpu = 0.0;
            }
            break;
        case 5:
            if (mbs_parse_double(value, &ps->max_wall) != 0 || !(ps->max_wall > 0.0)) {
                add_error(ps, "%s: max_wall '%s' must be a positive number of seconds", where,
                          value);
                ps->max_wall = 0.0;
            }
            break;
        case 6:
            if (mbs_parse_double(value, &ps->max_mem) != 0 || !(ps->max_mem > 0.0)) {
                add_error(ps, "%s: max_mem '%s' must be a positive number of bytes", where,
                          value);
                ps->max_mem = 0.0;
            }
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
    static const char *const keys[] = {"problems", "methods", "h", "tol", "t_end",
                                       "inject_failure", "atol", "tol_mode"};
    int k = -1;
    for (int i = 0; i < 8; i++)
        if (strcmp(name, keys[i]) == 0)
            k = i;
    if (k < 0) {
        add_error(ps, "%s: unknown key '%s'", where, name);
        return 1;
    }
    if ((g->seen & (1u << k)) && !(ps->continuation && k < 4)) {
        add_error(ps, "%s: duplicate key '%s'", where, name);
        return 1;
    }
    if (!(g->seen & (1u << k)))
        g->line[k] = ps->line;
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
    case 5:
        if (mbs_parse_double(value, &g->inject_fail_t) != 0 || !(g->inject_fail_t > 0.0)) {
            add_error(ps, "%s: inject_failure '%s' is not a positive finite time", where, value);
            g->inject_fail_t = 0.0;
        }
        break;
    case 6:
        if (mbs_parse_double(value, &g->atol) != 0 || !(g->atol > 0.0 && g->atol < 1.0)) {
            add_error(ps, "%s: atol '%s' must be a number in (0, 1)", where, value);
            g->atol = 0.0;
        }
        break;
    case 7:
        if (strcmp(value, "global") == 0)
            g->tol_mode = MBS_TOL_GLOBAL;
        else if (strcmp(value, "local") != 0)
            add_error(ps, "%s: tol_mode '%s' is not one of local, global", where, value);
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
    char msg[512];
    const char *path = ps->path, *name = g->name;
    if (!(g->seen & 1u))
        add_error(ps, "%s: [grid %s]: missing key 'problems'", path, name);
    if (!(g->seen & 2u))
        add_error(ps, "%s: [grid %s]: missing key 'methods'", path, name);
    if ((g->seen & 64u) && !(g->seen & 8u))
        add_error(ps, "%s:%d: [grid %s]: 'atol' needs 'tol'", path, g->line[6], name);
    if ((g->seen & 128u) && !(g->seen & 8u))
        add_error(ps, "%s:%d: [grid %s]: 'tol_mode' needs 'tol'", path, g->line[7], name);
    for (int i = 0; i < g->np; i++) {
        mbs_problem pb;
        if (mbs_problem_open(&pb, g->problems[i], msg, sizeof msg) != MBS_OK)
            add_error(ps, "%s:%d: [grid %s]: problems: %s", path, g->line[0], name, msg);
        else
            mbs_problem_close(&pb);
    }
    char where[1200];
    snprintf(where, sizeof where, "%s:%d: [grid %s]", path, g->line[1], name);
    for (int j = 0; j < g->nm; j++) {
        const mbs_method_def *m;
        mbs_params mp;
        if (mbs_method_parse(g->methods[j], &m, &mp, msg, sizeof msg) != MBS_OK) {
            add_error(ps, "%s: methods: %s", where, msg);
            continue;
        }
        int fixed = (m->flags & MBS_M_FIXED_STEP) != 0;
        if (fixed && g->nh == 0 && !(g->seen & 4u))
            add_error(ps, "%s: method %s is fixed-step but the grid has no 'h'", where, m->name);
        if (!fixed && g->ntol == 0 && !(g->seen & 8u))
            add_error(ps, "%s: method %s is adaptive but the grid has no 'tol'", where, m->name);
        for (int i = 0; i < g->np; i++) {
            int n = fixed ? g->nh : g->ntol;
            for (int k = 0; k < n; k++) {
                mbs_run_spec r = {.problem = g->problems[i], .method = g->methods[j],
                                  .h = fixed ? g->h[k] : NAN, .tol = fixed ? NAN : g->tol[k],
                                  .t_end = g->t_end, .repeat = ps->repeat,
                                  .max_steps = ps->max_steps, .max_cpu = ps->max_cpu,
                                  .inject_fail_t = g->inject_fail_t, .measure = 1,
                                  .atol = fixed ? 0.0 : g->atol,
                                  .tol_mode = fixed ? MBS_TOL_LOCAL : g->tol_mode,
                                  .max_wall = ps->max_wall, .max_mem = ps->max_mem};
                if (!fixed && !(g->tol[k] < 1.0)) {
                    add_error(ps, "%s: tol %g must be below 1", where, g->tol[k]);
                    continue;
                }
                /* every run validated before anything runs (issue 17: an h whose
                 * step count does not fit used to give "ok, 0 steps") */
                if (mbs_run_check(&r, msg, sizeof msg) != MBS_OK) {
                    add_error(ps, "%s: %s %s: %s", where, g->problems[i], g->methods[j], msg);
                    continue;
                }
                if (add_run(ps->suite, &r) != 0)
                    add_error(ps, "%s: out of memory", where);
            }
        }
    }
}

/* Line number of an error message "path:LINE: ...", or a large value. */
static long message_line(const char *msg, size_t path_len)
{
    if (strlen(msg) <= path_len || msg[path_len] != ':')
        return 1L << 30;
    char *end;
    long line = strtol(msg + path_len + 1, &end, 10);
    return end != msg + path_len + 1 && *end == ':' ? line : 1L << 30;
}

/* Reorder the accumulated error lines by their line number (stable). */
static void sort_messages(char *err, size_t path_len)
{
    size_t n = 0, len = strlen(err);
    char *copy = malloc(len + 1);
    char **lines = malloc((mbs_count_newlines(err) + 1) * sizeof *lines);
    if (!copy || !lines) {
        free(copy);
        free(lines);
        return;
    }
    memcpy(copy, err, len + 1);
    char *save = NULL;
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    for (size_t i = 1; i < n; i++) /* insertion sort: stable */
        for (size_t j = i; j > 0 && message_line(lines[j - 1], path_len) >
                                        message_line(lines[j], path_len); j--) {
            char *t = lines[j];
            lines[j] = lines[j - 1];
            lines[j - 1] = t;
        }
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(lines[i]);
        memcpy(err + used, lines[i], k);
        used += k;
        err[used++] = '\n';
    }
    err[used] = '\0';
    free(copy);
    free(lines);
}

int mbs_suite_load(const char *path, mbs_suite *s, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = mbs_read_file(path, &len);
    if (!text) {
        memset(s, 0, sizeof *s);
        snprintf(err, errlen, "%s: cannot read suite file\n", path);
        return MBS_BAD_INPUT;
    }
    int r = mbs_suite_parse(text, len, path, s, err, errlen);
    free(text);
    return r;
}

int mbs_suite_parse(const char *data, size_t len, const char *path, mbs_suite *s, char *err,
                    size_t errlen)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    err[0] = '\0';
    parse_state *ps = calloc(1, sizeof *ps);
    char *text = malloc(len + 1);
    if (!ps || !text) {
        free(ps);
        free(text);
        snprintf(err, errlen, "out of memory\n");
        return MBS_BAD_INPUT;
    }
    memcpy(text, data, len);
    text[len] = '\0';
    ps->path = path;
    ps->suite = s;
    ps->repeat = 1;
    ps->err = err;
    ps->errlen = errlen;
    int line_no = 1, too_long = 0;
    for (const char *c = text, *start = text; c <= text + len; c++) {
        if (c == text + len || *c == '\n') {
            if (c - start > MAX_LINE && !too_long) {
                add_error(ps, "%s:%d: line of %ld characters exceeds %d (continue long values "
                              "on indented lines)",
                          path, line_no, (long)(c - start), MAX_LINE);
                too_long = 1;
            }
            line_no++;
            start = c + 1;
        }
    }
    if (strlen(text) != len)
        add_error(ps, "%s: contains NUL bytes (not a text file)", path);
    else if (!too_long) {
        ps->text = ps->cursor = text;
        int line = ini_parse_string(text, handler, ps);
        if (line > 0)
            add_error(ps, "%s:%d: syntax error (expected [section] or key = value)", path, line);
    }
    int parsed = !too_long && strlen(text) == len;
    if (parsed && !ps->have_name && !(ps->suite_seen & 1u))
        add_error(ps, "%s: [suite] name is required", path);
    if (parsed && ps->ngrids == 0)
        add_error(ps, "%s: no [grid NAME] section", path);
    for (int i = 0; i < ps->ngrids; i++)
        expand_grid(ps, &ps->grids[i]);
    int bad = ps->nerr > 0;
    if (bad)
        sort_messages(err, strlen(path));
    free(text);
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

/* ---- running a sweep ----------------------------------------------------------
 * Every run executes in its own child process (at most `jobs` at a time), which
 * appends its complete record to runs.jsonl with one write(2) and fsync.  A child
 * killed by a signal is recorded by the parent as a `worker_crashed` run and the
 * sweep goes on.  SIGINT/SIGTERM stop the sweep: no new runs start, the running
 * ones are dropped cleanly (their records are either complete or absent), and
 * `--resume DIR` later completes the set.  runs.csv is derived from runs.jsonl at
 * the end (temp file + rename).  The signal flag is the only process-wide state. */

static volatile sig_atomic_t stop_signal = 0;

static void on_stop(int sig)
{
    stop_signal = sig;
}

static char *spec_key(const char *problem, const char *method, double h, double tol,
                      double atol, int global)
{
    char *k = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&k, &n);
    if (!m)
        return NULL;
    fprintf(m, "%s|%s|%.17g|%.17g", problem, method, isfinite(h) ? h : 0.0,
            isfinite(tol) ? tol : 0.0);
    if (isfinite(atol) && atol > 0.0 && atol != tol) /* set apart from tol (record: "atol") */
        fprintf(m, "|atol=%.17g", atol);
    if (global)
        fprintf(m, "|global");
    fclose(m);
    return k;
}

/* Append one record (as JSON) to the results file. */
static int write_record(int fd, mbs_record *rec, long index)
{
    rec->run_index = index;
    char *line = mbs_record_json(rec);
    int r = line && mbs_append_line(fd, line) == 0 ? 0 : -1;
    free(line);
    return r;
}

/* Child: run one spec and append its record.  Exit 0 (record written, whatever
 * its status), 2 (bad input: cannot happen after validation), 3 (I/O error). */
static int child_run(const mbs_run_spec *r, long index, int fd)
{
    mbs_record rec;
    char msg[512];
    if (mbs_run(r, &rec, msg, sizeof msg) != MBS_OK) {
        fprintf(stderr, "mbsbench: run %ld: %s\n", index, msg);
        return 2;
    }
    int io = write_record(fd, &rec, index);
    mbs_record_free(&rec);
    return io == 0 ? 0 : 3;
}

/* Parent: a failure record for a run whose worker died. */
static int crashed_record(const mbs_run_spec *r, long index, int sig, int fd)
{
    mbs_run_spec probe = *r;
    probe.measure = 0;
    probe.repeat = 0;
    mbs_record rec;
    char msg[512];
    /* Identity fields only: run with nothing to do (measure = repeat = 0). */
    if (mbs_run(&probe, &rec, msg, sizeof msg) != MBS_OK)
        return -1;
    rec.status = MBS_WORKER_CRASHED;
    snprintf(rec.reason, sizeof rec.reason, "worker process killed by signal %d (%s)%s", sig,
             strsignal(sig),
             sig == SIGKILL ? "; the kernel's OOM killer sends SIGKILL when memory runs out "
                              "(see --max-mem)"
                            : "");
    rec.fail_t = NAN;
    rec.cpu_min = rec.cpu_median = rec.cpu_iqr = NAN;
    rec.cpu_repeats = 0;
    int io = write_record(fd, &rec, index);
    mbs_record_free(&rec);
    return io;
}

/* Indices already recorded in runs.jsonl (resume); verifies they belong to this
 * suite.  done[i] = 1 for recorded runs.  Returns 0, or -1 with a message. */
static int load_done(const mbs_suite *s, const char *path, char *done, char *err,
                     size_t errlen)
{
    char *text = mbs_read_file(path, NULL);
    if (!text)
        return 0;
    int bad = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line && !bad;
         line = strtok_r(NULL, "\n", &save)) {
        json_t *o = json_loads(line, 0, NULL);
        if (!mbs_is_record(o)) { /* reported by cut_partial_line / the readers */
            json_decref(o);
            continue;
        }
        json_t *jr = json_object_get(o, "run");
        long i = json_is_integer(jr) ? (long)json_integer_value(jr) : -1;
        if (i < 0 || (size_t)i >= s->n_runs) {
            snprintf(err, errlen, "%s: record with run index %ld does not belong to suite %s",
                     path, i, s->name);
            bad = 1;
        } else {
            const mbs_run_spec *r = &s->runs[i];
            json_t *h = json_object_get(o, "h"), *tol = json_object_get(o, "tol");
            json_t *at = json_object_get(o, "atol");
            char *a = spec_key(r->problem, r->method, r->h, r->tol, r->atol,
                               r->tol_mode == MBS_TOL_GLOBAL);
            char *b = spec_key(json_string_value(json_object_get(o, "problem_spec")),
                               json_string_value(json_object_get(o, "method_spec")),
                               json_is_number(h) ? json_number_value(h) : NAN,
                               json_is_number(tol) ? json_number_value(tol) : NAN,
                               json_is_number(at) ? json_number_value(at) : NAN,
                               json_is_string(json_object_get(o, "tol_mode")));
            if (!a || !b || strcmp(a, b) != 0) {
                snprintf(err, errlen, "%s: run %ld is '%s', the suite says '%s'", path, i,
                         b ? b : "?", a ? a : "?");
                bad = 1;
            }
            free(a);
            free(b);
            done[i] = 1;
        }
        json_decref(o);
    }
    free(text);
    return bad ? -1 : 0;
}

/* runs.csv from runs.jsonl, sorted by run index, atomically. */
int mbs_write_runs_csv(const char *dir)
{
    mbs_results res;
    char err[512], path[4096];
    if (mbs_results_load_quiet(dir, &res, err, sizeof err) != 0)
        return -1;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int r = -1;
    if (m) {
        mbs_record_csv_header(m);
        for (size_t i = 0; i < res.n; i++)
            mbs_csv_row_json(res.recs[i], m);
        fclose(m);
        snprintf(path, sizeof path, "%s/runs.csv", dir);
        r = mbs_write_atomic(path, buf, len);
    }
    free(buf);
    mbs_results_free(&res);
    return r;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One writer per results directory (issue 17: two --resume runs on one
 * directory duplicated records): an exclusive flock on the directory, held
 * until the sweep ends (workers inherit it).  Returns the fd, -1 when another
 * sweep holds it, -2 on other errors. */
static int lock_results_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -2;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int busy = errno == EWOULDBLOCK;
        close(fd);
        return busy ? -1 : -2;
    }
    return fd;
}

/* Resume after a kill: cut runs.jsonl back to its last complete line (a torn
 * last line would otherwise glue the next record onto it). */
static int cut_partial_line(const char *path)
{
    size_t len = 0;
    char *text = mbs_read_file(path, &len);
    if (!text)
        return 0;
    size_t keep = len;
    while (keep > 0 && text[keep - 1] != '\n')
        keep--;
    free(text);
    if (keep == len)
        return 0;
    if (truncate(path, (off_t)keep) != 0) {
        fprintf(stderr, "mbsbench: cannot cut the partial last line of '%s'\n", path);
        return -1;
    }
    fprintf(stderr,
            "mbsbench: %s: dropped a partial last line (%zu bytes, an interrupted write); "
            "its run is redone\n",
            path, len - keep);
    return 0;
}

static int sweep_locked(const mbs_suite *s, const char *outdir, const mbs_sweep_options *opt,
                        FILE *out);

static size_t shard_size(const mbs_suite *s, const mbs_sweep_options *opt)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n_runs; i++)
        k += opt->plan->shard_of[i] == opt->shard;
    return k;
}

/* meta.json's "shard": which shard of how many, its runs and their estimated cost. */
static json_t *shard_json(const mbs_suite *s, const mbs_sweep_options *opt)
{
    const mbs_shard_plan *p = opt->plan;
    json_t *o = json_object(), *runs = json_array();
    double load = 0.0;
    for (size_t i = 0; i < s->n_runs; i++)
        if (p->shard_of[i] == opt->shard) {
            json_array_append_new(runs, json_integer((json_int_t)i));
            load += p->cost[i];
        }
    json_object_set_new(o, "index", json_integer(opt->shard));
    json_object_set_new(o, "count", json_integer(p->count));
    json_object_set_new(o, "runs", runs);
    json_object_set_new(o, "cost", json_real(load));
    json_object_set_new(o, "cost_source", json_string(p->source));
    return o;
}

/* --resume into a directory written for another grid or another shard would mix
 * record sets: refuse.  (Directories from before the digest have none: only the
 * record check of load_done applies.) */
static int check_resumed_meta(const mbs_suite *s, const char *outdir, const char *digest,
                              const mbs_sweep_options *opt, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.json", outdir);
    json_t *m = json_load_file(path, 0, NULL);
    if (!m)
        return 0;
    int bad = 0;
    const char *d = json_string_value(json_object_get(m, "suite_digest"));
    json_t *sh = json_object_get(m, "shard");
    int had = json_is_object(sh);
    int hi = had ? (int)json_integer_value(json_object_get(sh, "index")) : -1;
    int hn = had ? (int)json_integer_value(json_object_get(sh, "count")) : 0;
    if (d && strcmp(d, digest) != 0) {
        snprintf(err, errlen, "'%s' holds results of another version of suite %s (grid digest "
                 "%s, the suite file now gives %s); use another directory", outdir, s->name, d,
                 digest);
        bad = 1;
    } else if (had != (opt->plan != NULL) ||
               (had && (hi != opt->shard || hn != opt->plan->count))) {
        char was[64], now[64];
        snprintf(was, sizeof was, had ? "shard %d/%d" : "the whole grid", hi, hn);
        snprintf(now, sizeof now, opt->plan ? "shard %d/%d" : "the whole grid", opt->shard,
                 opt->plan ? opt->plan->count : 0);
        snprintf(err, errlen, "'%s' holds %s of suite %s, not %s; resume it with the same "
                 "--shard", outdir, was, s->name, now);
        bad = 1;
    }
    json_decref(m);
    return bad ? -1 : 0;
}

int mbs_sweep(const mbs_suite *s, const char *outdir, const mbs_sweep_options *opt, FILE *out)
{
    if (mbs_mkdir_p(outdir) != 0) {
        fprintf(stderr, "mbsbench: cannot create results directory '%s'\n", outdir);
        return 2;
    }
    int lock = lock_results_dir(outdir);
    if (lock < 0) {
        if (lock == -1)
            fprintf(stderr, "mbsbench: results directory '%s' is locked by another sweep "
                            "writing to it; wait for it to end or use another --out\n",
                    outdir);
        else
            fprintf(stderr, "mbsbench: cannot lock results directory '%s'\n", outdir);
        return 2;
    }
    int st = sweep_locked(s, outdir, opt, out);
    close(lock);
    return st;
}

static int sweep_locked(const mbs_suite *s, const char *outdir, const mbs_sweep_options *opt,
                        FILE *out)
{
    char path[4096], err[10000];
    int jobs = opt->jobs > 0 ? opt->jobs : 1;
    snprintf(path, sizeof path, "%s/runs.jsonl", outdir);
    if (opt->resume && cut_partial_line(path) != 0)
        return 2;
    char *done = calloc(s->n_runs ? s->n_runs : 1, 1);
    if (!done)
        return 2;
    if (opt->resume) {
        mbs_results prev; /* report unreadable lines before going on */
        if (access(path, F_OK) == 0 && mbs_results_load(outdir, &prev, err, sizeof err) == 0)
            mbs_results_free(&prev);
        if (load_done(s, path, done, err, sizeof err) != 0) {
            fprintf(stderr, "mbsbench: %s\n", err);
            free(done);
            return 2;
        }
    } else if (access(path, F_OK) == 0) {
        fprintf(stderr, "mbsbench: '%s' already holds results; use --resume %s or another --out\n",
                outdir, outdir);
        free(done);
        return 2;
    }
    char digest[32];
    mbs_suite_digest(s, digest, sizeof digest);
    if (opt->resume && check_resumed_meta(s, outdir, digest, opt, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        free(done);
        return 2;
    }
    if (opt->plan) /* the other shards' runs are not ours */
        for (size_t i = 0; i < s->n_runs; i++)
            done[i] |= opt->plan->shard_of[i] != opt->shard;
    if (!opt->resume || access(path, F_OK) != 0) {
        char *meta = mbs_environment_json(s->name, s->path);
        json_t *mo = meta ? json_loads(meta, 0, NULL) : NULL;
        if (mo) { /* CPU unit of this machine, for compare's normalisation */
            json_object_set_new(mo, "calibration_s", json_real(mbs_calibration_seconds()));
            json_object_set_new(mo, "suite_runs", json_integer((json_int_t)s->n_runs));
            json_object_set_new(mo, "suite_digest", json_string(digest));
            if (opt->plan)
                json_object_set_new(mo, "shard", shard_json(s, opt));
            free(meta);
            meta = json_dumps(mo, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
            json_decref(mo);
        }
        snprintf(err, sizeof err, "%s/meta.json", outdir);
        int bad = !meta || mbs_write_atomic(err, meta, strlen(meta)) != 0;
        free(meta);
        if (bad) {
            fprintf(stderr, "mbsbench: cannot write '%s'\n", err);
            free(done);
            return 2;
        }
    }
    snprintf(err, sizeof err, "%s/series", outdir);
    if (opt->series && mbs_mkdir_p(err) != 0) {
        fprintf(stderr, "mbsbench: cannot create '%s'\n", err);
        free(done);
        return 2;
    }
    int fd = mbs_open_append(path);
    if (fd < 0) {
        fprintf(stderr, "mbsbench: cannot open '%s'\n", path);
        free(done);
        return 2;
    }

    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    stop_signal = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    int progress = isatty(STDERR_FILENO);
    pid_t *pid = calloc((size_t)jobs, sizeof *pid);
    long *slot_run = calloc((size_t)jobs, sizeof *slot_run);
    size_t next = 0, finished = 0, todo = 0, skipped_budget = 0, reaped = 0;
    int failed = 0, io_error = 0, running = 0;
    for (size_t i = 0; i < s->n_runs; i++)
        todo += !done[i];
    double t_start = wall_seconds();
    fflush(NULL);
    while (pid && slot_run) {
        /* Launch while there are free slots and work. */
        while (!stop_signal && running < jobs) {
            while (next < s->n_runs && done[next])
                next++;
            if (next >= s->n_runs)
                break;
            if (opt->budget > 0.0 && wall_seconds() - t_start > opt->budget) {
                for (size_t i = next; i < s->n_runs; i++)
                    skipped_budget += !done[i];
                next = s->n_runs;
                break;
            }
            int slot = 0;
            while (pid[slot] > 0)
                slot++;
            pid_t p = fork();
            if (p == 0) {
                signal(SIGINT, SIG_DFL);
                signal(SIGTERM, SIG_DFL);
                prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphans after kill -9 */
                mbs_run_spec rs = s->runs[next];
                char series[4200];
                if (opt->series) {
                    snprintf(series, sizeof series, "%s/series/run-%zu.tsv", outdir, next);
                    rs.series = series;
                }
                _exit(child_run(&rs, (long)next, fd));
            }
            if (p < 0) {
                fprintf(stderr, "mbsbench: fork failed\n");
                io_error = 1;
                break;
            }
            pid[slot] = p;
            slot_run[slot] = (long)next;
            running++;
            next++;
        }
        if (running == 0)
            break;
        int st = 0;
        pid_t w = waitpid(-1, &st, 0);
        if (w < 0) {
            if (errno == EINTR) {
                if (stop_signal)
                    for (int k = 0; k < jobs; k++)
                        if (pid[k] > 0)
                            kill(pid[k], SIGTERM);
                continue;
            }
            break;
        }
        int slot = 0;
        while (slot < jobs && pid[slot] != w)
            slot++;
        if (slot == jobs)
            continue;
        long idx = slot_run[slot];
        pid[slot] = 0;
        running--;
        if (WIFSIGNALED(st) && !stop_signal) {
            if (crashed_record(&s->runs[idx], idx, WTERMSIG(st), fd) != 0)
                io_error = 1;
            failed++;
            finished++;
        } else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
            finished++;
        } else if (WIFEXITED(st)) {
            io_error |= WEXITSTATUS(st) == 3;
            failed++;
        }
        if (progress) { /* count, elapsed, ETA, failures so far (issue 18) */
            size_t ended = ++reaped;
            double el = wall_seconds() - t_start;
            double eta = ended > 0 ? el * (double)(todo - ended) / (double)ended : NAN;
            fprintf(stderr, "\r[%zu/%zu] %.0fs elapsed, ETA %s%.0fs, %d failed: %-28.28s",
                    ended, todo, el, isfinite(eta) ? "" : "?", isfinite(eta) ? eta : 0.0,
                    failed, s->runs[idx].method);
        }
    }
    if (progress)
        fprintf(stderr, "\r%-78s\r", "");
    free(pid);
    free(slot_run);
    free(done);
    close(fd);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (mbs_write_runs_csv(outdir) != 0)
        io_error = 1;
    if (io_error) {
        fprintf(stderr, "mbsbench: error writing results into '%s'\n", outdir);
        return 2;
    }
    if (opt->plan)
        fprintf(out, "suite %s, shard %d/%d: %zu of %zu runs, results in %s\n", s->name,
                opt->shard, opt->plan->count, shard_size(s, opt), s->n_runs, outdir);
    else
        fprintf(out, "suite %s: %zu runs, results in %s\n", s->name, s->n_runs, outdir);
    int n_failed = 0;
    if (mbs_summary(outdir, out, &n_failed) != 0)
        return 2;
    failed += n_failed;
    char shard_opt[64] = "";
    if (opt->plan)
        snprintf(shard_opt, sizeof shard_opt, " --shard %d/%d", opt->shard, opt->plan->count);
    if (stop_signal) {
        fprintf(out, "interrupted by signal %d: %zu of %zu runs recorded in this sweep; "
                     "complete with: mbsbench sweep %s%s --resume %s\n",
                (int)stop_signal, finished, todo, s->path, shard_opt, outdir);
        return 128 + (int)stop_signal;
    }
    if (skipped_budget > 0) {
        fprintf(out, "wall-clock budget of %g s reached: %zu runs not started; complete with "
                     "--resume %s\n", opt->budget, skipped_budget, outdir);
        return 1;
    }
    return failed > 0 ? 1 : 0;
}

int mbs_json_by_run_index(const void *a, const void *b)
{
    double x = mbs_jnum(*(json_t *const *)a, "run");
    double y = mbs_jnum(*(json_t *const *)b, "run");
    return (x > y) - (x < y);
}

int mbs_summary(const char *dir, FILE *out, int *n_failed)
{
    *n_failed = 0;
    mbs_results res;
    char err[512];
    if (mbs_results_load(dir, &res, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    json_t **recs = res.recs;
    size_t n = res.n;
    fprintf(out, "%-26s %-26s %-10s %-15s %9s %9s %9s %9s %8s %10s\n", "problem", "method",
            "h|tol", "status", "err_q", "err_v", "err_lam", "|g|max", "steps", "cpu[s]");
    for (size_t i = 0; i < n; i++) {
        json_t *o = recs[i];
        char step[32];
        double h = mbs_jnum(o, "h");
        if (isfinite(h))
            snprintf(step, sizeof step, "h=%.3g", h);
        else
            snprintf(step, sizeof step, "tol=%.0e", mbs_jnum(o, "tol"));
        fprintf(out, "%-26.26s %-26.26s %-10s %-15.15s", mbs_jstr(o, "problem_spec"),
                mbs_jstr(o, "method_spec"), step, mbs_jstr(o, "status"));
        const double v[] = {mbs_jnum(o, "err.q"), mbs_jnum(o, "err.v"),
                            mbs_jnum(o, "err.lambda"), mbs_jnum(o, "residual.pos_max")};
        for (int k = 0; k < 4; k++) {
            if (isfinite(v[k]))
                fprintf(out, " %9.2e", v[k]);
            else
                fprintf(out, " %9s", "-");
        }
        fprintf(out, " %8.0f", mbs_jnum(o, "counters.steps"));
        double c = mbs_jnum(o, "cpu.median");
        if (isfinite(c))
            fprintf(out, " %10.3e\n", c);
        else
            fprintf(out, " %10s\n", "-");
        if (!mbs_rec_ok(o)) {
            ++*n_failed;
            fprintf(out, "    %s at t = %g: %s\n", mbs_jstr(o, "status"), mbs_jnum(o, "fail_t"),
                    mbs_jstr(o, "reason"));
        }
    }
    mbs_results_free(&res);
    return 0;
}
