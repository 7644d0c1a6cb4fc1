#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "traj.h"

static void ref_path(const char *problem, const char *ext, char *buf, size_t len)
{
    /* $MBSBENCH_REFDIR, else problems/ref found as harness/io.h says */
    const char *dir = getenv("MBSBENCH_REFDIR");
    if (dir && *dir) {
        snprintf(buf, len, "%s/%s.%s", dir, problem, ext);
        return;
    }
    char rel[1024];
    snprintf(rel, sizeof rel, "problems/ref/%s.%s", problem, ext);
    mbs_data_path(rel, buf, len);
}

void mbs_reference_path(const char *problem, char *buf, size_t len)
{
    ref_path(problem, "ref", buf, len);
}

void mbs_reference_traj_path(const char *problem, char *buf, size_t len)
{
    ref_path(problem, "traj", buf, len);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

/* Walk the entries of a reference text; calls fn for each complete entry until
 * fn returns non-zero.  Returns fn's last value. */
typedef int (*entry_fn)(void *data, const char *params, double t_end, const char *prov,
                        const char *y, const char *begin, const char *end);

static int walk(char *text, entry_fn fn, void *data)
{
    char params[1024] = "", prov[1024] = "";
    double t_end = NAN;
    const char *begin = text;
    char *line = text;
    while (line && *line) {
        char *next = strchr(line, '\n');
        if (next)
            *next = '\0';
        char *l = trim(line);
        char *eq = strchr(l, '=');
        if (*l != '#' && eq) {
            *eq = '\0';
            char *key = trim(l), *val = trim(eq + 1);
            if (strcmp(key, "params") == 0)
                snprintf(params, sizeof params, "%s", val);
            else if (strcmp(key, "t_end") == 0)
                t_end = strtod(val, NULL);
            else if (strcmp(key, "provenance") == 0)
                snprintf(prov, sizeof prov, "%s", val);
            else if (strcmp(key, "y") == 0) {
                int r = fn(data, params, t_end, prov, val, begin, next ? next + 1 : line + strlen(line));
                if (r)
                    return r;
                params[0] = prov[0] = '\0';
                t_end = NAN;
                begin = next ? next + 1 : line + strlen(line);
            }
        }
        line = next ? next + 1 : NULL;
    }
    return 0;
}

typedef struct find_data {
    const char *params;
    double t_end;
    double *y;
    size_t n;
    char *prov;
    size_t provlen;
} find_data;

static int matches(const char *params, double t_end, const find_data *d)
{
    return strcmp(params, d->params) == 0 &&
           fabs(t_end - d->t_end) <= 1e-12 * fmax(1.0, fabs(d->t_end));
}

static int find_fn(void *data, const char *params, double t_end, const char *prov,
                   const char *y, const char *begin, const char *end)
{
    (void)begin, (void)end;
    find_data *d = data;
    if (!matches(params, t_end, d))
        return 0;
    const char *p = y;
    for (size_t i = 0; i < d->n; i++) {
        char *e;
        d->y[i] = strtod(p, &e);
        if (e == p)
            return 0;
        p = e;
    }
    if (d->prov)
        snprintf(d->prov, d->provlen, "%s", prov);
    return 1;
}

int mbs_reference_find(const mbs_problem *pb, double t_end, double *y, char *prov,
                       size_t provlen)
{
    char path[1024], params[1024];
    mbs_reference_path(pb->def->name, path, sizeof path);
    char *text = mbs_read_file(path, NULL);
    if (!text)
        return 0;
    mbs_params_format(&pb->params, 1, params, sizeof params);
    find_data d = {params, t_end, y, mbs_ny(pb), prov, provlen};
    int r = walk(text, find_fn, &d);
    free(text);
    return r;
}

double mbs_reference_digits(const char *provenance, double *digits_q)
{
    double d = NAN;
    const char *a = provenance ? strstr(provenance, "agree to ") : NULL;
    if (a) {
        char *e;
        d = strtod(a + 9, &e);
        if (e == a + 9 || strncmp(e, " digits", 7) != 0 || !(d > 0.0))
            d = NAN;
    }
    if (digits_q) {
        *digits_q = d;
        const char *q = isnan(d) ? NULL : strstr(a, "(q: ");
        if (q) {
            char *e;
            double dq = strtod(q + 4, &e);
            if (e != q + 4 && dq > 0.0)
                *digits_q = dq;
        }
    }
    return d;
}

typedef struct keep_data {
    find_data find;
    FILE *out;
    const char *base; /* the text walk() parses (and modifies in place) */
    const char *orig; /* an unmodified copy: kept entries are written from it */
} keep_data;

static int keep_fn(void *data, const char *params, double t_end, const char *prov,
                   const char *y, const char *begin, const char *end)
{
    (void)prov, (void)y;
    keep_data *k = data;
    if (!matches(params, t_end, &k->find))
        fwrite(k->orig + (begin - k->base), 1, (size_t)(end - begin), k->out);
    return 0;
}

int mbs_reference_store(const mbs_problem *pb, double t_end, const double *y,
                        const char *provenance)
{
    char path[1024], params[1024];
    mbs_reference_path(pb->def->name, path, sizeof path);
    mbs_params_format(&pb->params, 1, params, sizeof params);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return -1;
    char *text = mbs_read_file(path, NULL);
    if (text) {
        char *orig = strdup(text);
        if (!orig) {
            free(text);
            fclose(out);
            free(buf);
            return -1;
        }
        keep_data k = {{params, t_end, NULL, 0, NULL, 0}, out, text, orig};
        walk(text, keep_fn, &k);
        free(orig);
        free(text);
    } else {
        fprintf(out, "# Reference solutions of problem %s (see harness/reference.h).\n",
                pb->def->name);
    }
    fprintf(out, "params = %s\nt_end = %.17g\nprovenance = %s\ny =", params, t_end, provenance);
    for (size_t i = 0; i < mbs_ny(pb); i++)
        fprintf(out, " %.17g", y[i]);
    fputc('\n', out);
    fclose(out);
    int r = mbs_write_atomic(path, buf, len);
    free(buf);
    return r;
}

/* ---- stored trajectories (problems/ref/<name>.traj) ---------------------------- */

/* One entry of a .traj text: its header and where its text lies. */
typedef struct traj_entry {
    char params[1024], prov[1024];
    double t_end, horizon;
    long steps, rows;
    const char *data;        /* first row line (rows > 0) */
    const char *begin, *end; /* the entry's text */
} traj_entry;

static const char *next_line(const char *p)
{
    const char *e = strchr(p, '\n');
    return e ? e + 1 : p + strlen(p);
}

/* Parse the entry starting at *p (skipping comments and blank lines); 1 and *p
 * after it, or 0 at the end of the text or on a malformed entry. */
static int traj_next(const char **p, traj_entry *e)
{
    memset(e, 0, sizeof *e);
    e->t_end = e->horizon = NAN;
    e->steps = -1;
    e->begin = *p;
    const char *l = *p;
    while (*l) {
        const char *n = next_line(l);
        char line[1100];
        size_t len = (size_t)(n - l);
        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, l, len);
        line[len] = '\0';
        char *t = trim(line), *eq = strchr(t, '=');
        size_t tl = strlen(t);
        if (tl && t[tl - 1] == '\n')
            t[--tl] = '\0';
        l = n;
        if (*t == '#' || !eq)
            continue;
        *eq = '\0';
        char *key = trim(t), *val = trim(eq + 1);
        if (strcmp(key, "params") == 0)
            snprintf(e->params, sizeof e->params, "%s", val);
        else if (strcmp(key, "t_end") == 0)
            e->t_end = strtod(val, NULL);
        else if (strcmp(key, "steps") == 0)
            e->steps = strtol(val, NULL, 10);
        else if (strcmp(key, "provenance") == 0)
            snprintf(e->prov, sizeof e->prov, "%s", val);
        else if (strcmp(key, "horizon") == 0) {
            e->horizon = strtod(val, NULL);
            *p = e->end = l;
            return 1;
        } else if (strcmp(key, "rows") == 0) {
            e->rows = strtol(val, NULL, 10);
            e->data = l;
            for (long k = 0; k < e->rows && *l; k++)
                l = next_line(l);
            *p = e->end = l;
            return e->rows > 0;
        }
    }
    *p = l;
    return 0;
}

static int traj_matches(const traj_entry *e, const char *params, double t_end, long steps)
{
    return strcmp(e->params, params) == 0 && e->steps == steps &&
           fabs(e->t_end - t_end) <= 1e-12 * fmax(1.0, fabs(t_end));
}

int mbs_reference_traj_find(const mbs_problem *pb, double t_end, long steps, double *rows,
                            double *horizon, char *prov, size_t provlen)
{
    char path[1024], params[1024];
    mbs_reference_traj_path(pb->def->name, path, sizeof path);
    char *text = mbs_read_file(path, NULL);
    if (!text)
        return MBS_REFTRAJ_NONE;
    mbs_params_format(&pb->params, 1, params, sizeof params);
    size_t ny = mbs_ny(pb);
    int found = MBS_REFTRAJ_NONE;
    traj_entry e;
    for (const char *p = text; found == MBS_REFTRAJ_NONE && traj_next(&p, &e);) {
        if (!traj_matches(&e, params, t_end, steps))
            continue;
        if (!isnan(e.horizon)) {
            *horizon = e.horizon;
            found = MBS_REFTRAJ_HORIZON;
        } else if (e.rows == steps + 1) {
            int ok = 1;
            const char *r = e.data;
            for (long k = 0; ok && k <= steps; k++) {
                char *x;
                strtod(r, &x); /* t_k */
                ok = x != r;
                for (size_t i = 0; ok && i < ny; i++) {
                    const char *a = x;
                    rows[(size_t)k * ny + i] = strtod(a, &x);
                    ok = x != a;
                }
                r = next_line(r);
            }
            found = ok ? MBS_REFTRAJ_ROWS : MBS_REFTRAJ_NONE;
        }
        if (found && prov)
            snprintf(prov, provlen, "%s", e.prov);
    }
    free(text);
    return found;
}

/* A value of a stored trajectory: 13 significant digits, and below 1e-2 in
 * magnitude to the nearest 1e-15 (the mixed error |y - yref| / (1 + |yref|)
 * needs neither more, and the references agree to fewer digits). */
static void put_value(FILE *out, double y)
{
    if (fabs(y) < 1e-2)
        y = nearbyint(y * 1e15) / 1e15;
    fprintf(out, " %.13g", y == 0.0 ? 0.0 : y);
}

int mbs_reference_traj_store(const mbs_problem *pb, double t_end, long steps,
                             const double *rows, double horizon, const char *provenance)
{
    char path[1024], params[1024];
    mbs_reference_traj_path(pb->def->name, path, sizeof path);
    mbs_params_format(&pb->params, 1, params, sizeof params);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return -1;
    char *text = mbs_read_file(path, NULL);
    if (text) { /* keep the leading comments and every other entry */
        const char *p = text;
        while (*p == '#') {
            const char *n = next_line(p);
            fwrite(p, 1, (size_t)(n - p), out);
            p = n;
        }
        traj_entry e;
        while (*p) {
            const char *start = p;
            if (!traj_next(&p, &e))
                break;
            if (!traj_matches(&e, params, t_end, steps))
                fwrite(start, 1, (size_t)(p - start), out);
        }
        free(text);
    } else {
        fprintf(out, "# Reference trajectories of problem %s (see harness/reference.h).\n",
                pb->def->name);
    }
    fprintf(out, "params = %s\nt_end = %.17g\nsteps = %ld\nprovenance = %s\n", params, t_end,
            steps, provenance);
    if (!rows) {
        fprintf(out, "horizon = %.17g\n", horizon);
    } else {
        size_t ny = mbs_ny(pb);
        fprintf(out, "rows = %ld\n", steps + 1);
        for (long k = 0; k <= steps; k++) {
            fprintf(out, "%.15g", mbs_traj_time(pb->t0, t_end, steps, k));
            for (size_t i = 0; i < ny; i++)
                put_value(out, rows[(size_t)k * ny + i]);
            fputc('\n', out);
        }
    }
    fclose(out);
    int r = mbs_write_atomic(path, buf, len);
    free(buf);
    return r;
}
