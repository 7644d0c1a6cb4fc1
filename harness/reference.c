#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

void mbs_reference_path(const char *problem, char *buf, size_t len)
{
    /* $MBSBENCH_REFDIR, else problems/ref found as harness/io.h says */
    const char *dir = getenv("MBSBENCH_REFDIR");
    if (dir && *dir) {
        snprintf(buf, len, "%s/%s.ref", dir, problem);
        return;
    }
    char rel[1024];
    snprintf(rel, sizeof rel, "problems/ref/%s.ref", problem);
    mbs_data_path(rel, buf, len);
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
