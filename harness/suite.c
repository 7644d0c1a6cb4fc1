/* Suite files: INI parsing (libinih), validation and expansion of the grids
 * into runs (suite.h).  Split from sweep.c, which runs them. */
#include "suite.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "plugin.h"

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
    long output_steps;    /* output grid of the trajectory measures; 0: the problems' */
    unsigned seen; /* bit per key, to reject duplicates */
    int line[9];   /* line of each key (problems, methods, h, tol, t_end, inject_failure, atol,
                      tol_mode, output_steps) */
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
    int plugin_failed;  /* a plugin of `plugins =` did not load (the cause of unknown names) */
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

/* The keys of [suite] and of [grid NAME], in the order of their bits in
 * suite_seen and grid.seen (docs/suite-format.md documents each). */
static const char *const suite_keys[] = {"name",    "description", "repeat",  "max_steps",
                                         "max_cpu", "max_wall",    "max_mem", "plugins"};
static const char *const grid_keys[] = {"problems", "methods", "h", "tol", "t_end",
                                        "inject_failure", "atol", "tol_mode", "output_steps"};
#define N_SUITE_KEYS (sizeof suite_keys / sizeof *suite_keys)
#define N_GRID_KEYS (sizeof grid_keys / sizeof *grid_keys)

const char *const *mbs_suite_keys(int in_grid, size_t *n)
{
    *n = in_grid ? N_GRID_KEYS : N_SUITE_KEYS;
    return in_grid ? grid_keys : suite_keys;
}

/* Index of name in keys[0..n), or -1. */
static int key_index(const char *name, const char *const *keys, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(name, keys[i]) == 0)
            return i;
    return -1;
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

/* A budget key (max_cpu, max_wall, max_mem): its value when it is a positive
 * number, else 0 (no budget from the suite) and an error naming the value. */
static double positive_budget(parse_state *ps, const char *where, const char *key,
                              const char *value, const char *unit)
{
    double x;
    if (mbs_parse_double(value, &x) != 0 || !(x > 0.0)) {
        add_error(ps, "%s: %s '%s' must be a positive number of %s", where, key, value, unit);
        return 0.0;
    }
    return x;
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

/* `plugins = a.so b.so`: loaded now, before the grids are validated (their
 * names must be known then); a relative path is relative to the suite file. */
static void load_plugins(parse_state *ps, const char *value, const char *where)
{
    char buf[8192];
    if (strlen(value) >= sizeof buf) {
        add_error(ps, "%s: plugins: value too long", where);
        return;
    }
    strcpy(buf, value);
    const char *slash = strrchr(ps->path, '/');
    int dirlen = slash ? (int)(slash - ps->path) : 0;
    char *save = NULL;
    int n = 0;
    for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save), n++) {
        char path[4096], err[1024];
        if (w[0] == '/' || !slash)
            snprintf(path, sizeof path, "%s", w);
        else
            snprintf(path, sizeof path, "%.*s/%s", dirlen, ps->path, w);
        if (mbs_plugin_load(path, err, sizeof err) != MBS_OK) {
            add_error(ps, "%s: plugins: %s", where, err);
            ps->plugin_failed = 1;
        }
    }
    if (n == 0)
        add_error(ps, "%s: plugins: empty list", where);
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    parse_state *ps = user;
    char where[1200];
    locate(ps, name);
    snprintf(where, sizeof where, "%s:%d: [%s]", ps->path, ps->line, section);
    if (strcmp(section, "suite") == 0) {
        const char *const *keys = suite_keys;
        int k = key_index(name, keys, (int)N_SUITE_KEYS);
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
            ps->max_cpu = positive_budget(ps, where, "max_cpu", value, "seconds");
            break;
        case 5:
            ps->max_wall = positive_budget(ps, where, "max_wall", value, "seconds");
            break;
        case 6:
            ps->max_mem = positive_budget(ps, where, "max_mem", value, "bytes");
            break;
        case 7:
            load_plugins(ps, value, where);
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
    const char *const *keys = grid_keys;
    int k = key_index(name, keys, (int)N_GRID_KEYS);
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
    case 8:
        if (mbs_parse_long(value, &g->output_steps) != 0 ||
            !(g->output_steps >= 1 && g->output_steps <= MBS_MAX_OUTPUT_STEPS)) {
            add_error(ps, "%s: output_steps '%s' must be an integer in [1, %ld]", where, value,
                      (long)MBS_MAX_OUTPUT_STEPS);
            g->output_steps = 0;
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
    /* a cause is said once: a bad problem or method spec is not said again
     * for each of its runs, and a run-level message shared by several runs
     * (an h too large for the grid's t_end) once with their count */
    const char *plugin_note = ps->plugin_failed ? " (a plugin of this suite did not load: "
                                                  "see its line above)"
                                                : "";
    int bad_problem[MAX_LIST] = {0};
    for (int i = 0; i < g->np; i++) {
        mbs_problem pb;
        if (mbs_problem_open(&pb, g->problems[i], msg, sizeof msg) != MBS_OK) {
            add_error(ps, "%s:%d: [grid %s]: problems: %s%s", path, g->line[0], name, msg,
                      plugin_note);
            bad_problem[i] = 1;
        } else
            mbs_problem_close(&pb);
    }
    char where[1200];
    snprintf(where, sizeof where, "%s:%d: [grid %s]", path, g->line[1], name);
    enum { MAX_SAID = 16 };
    char said[MAX_SAID][512], first_run[MAX_SAID][400];
    int said_count[MAX_SAID], n_said = 0;
    for (int j = 0; j < g->nm; j++) {
        const mbs_method_def *m;
        mbs_params mp;
        if (mbs_method_parse(g->methods[j], &m, &mp, msg, sizeof msg) != MBS_OK) {
            add_error(ps, "%s: methods: %s%s", where, msg, plugin_note);
            continue;
        }
        int fixed = (m->flags & MBS_M_FIXED_STEP) != 0;
        if (fixed && g->nh == 0 && !(g->seen & 4u))
            add_error(ps, "%s: method %s is fixed-step but the grid has no 'h'", where, m->name);
        if (!fixed && g->ntol == 0 && !(g->seen & 8u))
            add_error(ps, "%s: method %s is adaptive but the grid has no 'tol'", where, m->name);
        for (int i = 0; i < g->np; i++) {
            if (bad_problem[i])
                continue;
            int n = fixed ? g->nh : g->ntol;
            for (int k = 0; k < n; k++) {
                mbs_run_spec r = {.problem = g->problems[i], .method = g->methods[j],
                                  .h = fixed ? g->h[k] : NAN, .tol = fixed ? NAN : g->tol[k],
                                  .t_end = g->t_end, .repeat = ps->repeat,
                                  .max_steps = ps->max_steps, .max_cpu = ps->max_cpu,
                                  .inject_fail_t = g->inject_fail_t, .measure = 1,
                                  .atol = fixed ? 0.0 : g->atol,
                                  .tol_mode = fixed ? MBS_TOL_LOCAL : g->tol_mode,
                                  .max_wall = ps->max_wall, .max_mem = ps->max_mem,
                                  .output_steps = g->output_steps};
                if (!fixed && !(g->tol[k] < 1.0)) {
                    add_error(ps, "%s: tol %g must be below 1", where, g->tol[k]);
                    continue;
                }
                /* every run validated before anything runs (an h whose
                 * step count does not fit used to give "ok, 0 steps") */
                if (mbs_run_check(&r, msg, sizeof msg) != MBS_OK) {
                    /* the run checks speak of command-line options; here they are keys */
                    if (strncmp(msg, "--t-end", 7) == 0)
                        memcpy(msg, "  t_end", 7);
                    if (strncmp(msg, "--", 2) == 0 || strncmp(msg, "  t_end", 7) == 0)
                        memmove(msg, msg + 2, strlen(msg + 2) + 1);
                    int k2 = 0;
                    while (k2 < n_said && strcmp(said[k2], msg) != 0)
                        k2++;
                    if (k2 < n_said) {
                        said_count[k2]++;
                    } else if (n_said < MAX_SAID) {
                        snprintf(said[n_said], sizeof said[0], "%s", msg);
                        snprintf(first_run[n_said], sizeof first_run[0], "%.190s %.190s",
                                 g->problems[i], g->methods[j]);
                        said_count[n_said++] = 1;
                    } else {
                        add_error(ps, "%s: %s %s: %s", where, g->problems[i], g->methods[j],
                                  msg);
                    }
                    continue;
                }
                if (add_run(ps->suite, &r) != 0)
                    add_error(ps, "%s: out of memory", where);
            }
        }
    }
    for (int k = 0; k < n_said; k++) {
        if (said_count[k] == 1)
            add_error(ps, "%s: %s: %s", where, first_run[k], said[k]);
        else
            add_error(ps, "%s: %s (%d runs, the first %s)", where, said[k], said_count[k],
                      first_run[k]);
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
    errno = 0;
    char *text = mbs_read_file(path, &len);
    if (!text) {
        memset(s, 0, sizeof *s);
        snprintf(err, errlen, "%s: cannot read the suite file: %s\n", path,
                 errno ? strerror(errno) : "read error");
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

