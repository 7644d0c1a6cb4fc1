/* Reading results directories (harness/results.h). */
#include "results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "sweep.h"

static int push(mbs_results *r, size_t *cap, json_t *o)
{
    if (r->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        json_t **nr = realloc(r->recs, nc * sizeof *nr);
        if (!nr)
            return -1;
        r->recs = nr;
        *cap = nc;
    }
    r->recs[r->n++] = o;
    return 0;
}

int mbs_is_record(json_t *o)
{
    return json_is_object(o) && json_is_string(json_object_get(o, "problem_spec")) &&
           json_is_string(json_object_get(o, "method_spec")) &&
           json_is_string(json_object_get(o, "status"));
}

/* Note one unreadable line: "FILE:LINE: why". */
static void add_bad(mbs_results *r, const char *path, size_t line, const char *why)
{
    r->n_bad++;
    size_t old = r->bad ? strlen(r->bad) : 0;
    char msg[1400];
    int k = snprintf(msg, sizeof msg, "%s:%zu: unreadable line skipped: %s\n", path, line, why);
    if (k < 0)
        return;
    char *nb = realloc(r->bad, old + (size_t)k + 1);
    if (!nb)
        return;
    memcpy(nb + old, msg, (size_t)k + 1);
    r->bad = nb;
}

void mbs_results_report_bad(const mbs_results *r, FILE *f)
{
    if (!r->n_bad || !r->bad)
        return;
    const char *p = r->bad;
    for (int shown = 0; *p && shown < 20; shown++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        fprintf(f, "mbsbench: %.*s\n", (int)len, p);
        p = nl ? nl + 1 : p + len;
    }
    if (r->n_bad > 20)
        fprintf(f, "mbsbench: ... and %zu more unreadable lines\n", r->n_bad - 20);
    fprintf(f, "mbsbench: %zu unreadable line%s skipped\n", r->n_bad, r->n_bad == 1 ? "" : "s");
}

int mbs_results_load_quiet(const char *dir, mbs_results *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    char path[4096];
    snprintf(path, sizeof path, "%s/runs.jsonl", dir);
    size_t len = 0;
    char *text = mbs_read_file(path, &len);
    if (!text) {
        snprintf(err, errlen, "cannot read %s", path);
        return -1;
    }
    size_t cap = 0, line_no = 0;
    char *p = text, *end = text + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        line_no++;
        int torn = nl == NULL;
        if (nl)
            *nl = '\0';
        char *line = p;
        p = nl ? nl + 1 : end;
        if (strspn(line, " \t\r") == strlen(line) && !torn)
            continue; /* blank line */
        if (strlen(line) != (size_t)((nl ? nl : end) - line)) {
            add_bad(r, path, line_no, "NUL bytes in the line");
            continue;
        }
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        char why[512];
        if (!o || !mbs_is_record(o) || torn) {
            if (torn)
                snprintf(why, sizeof why, "partial last line (%zu bytes, no newline: an "
                                          "interrupted write)", strlen(line));
            else if (!o)
                snprintf(why, sizeof why, "not JSON (%s at column %d)", je.text, je.column);
            else
                snprintf(why, sizeof why,
                         "not a run record (needs problem_spec, method_spec, status)");
            add_bad(r, path, line_no, why);
            json_decref(o);
            continue;
        }
        if (push(r, &cap, o) != 0) {
            json_decref(o);
            free(text);
            mbs_results_free(r);
            snprintf(err, errlen, "out of memory reading %s", path);
            return -1;
        }
    }
    free(text);
    if (r->n)
        qsort(r->recs, r->n, sizeof *r->recs, mbs_json_by_run_index);
    snprintf(path, sizeof path, "%s/meta.json", dir);
    r->meta = json_load_file(path, 0, NULL);
    return 0;
}

int mbs_results_load(const char *dir, mbs_results *r, char *err, size_t errlen)
{
    int s = mbs_results_load_quiet(dir, r, err, errlen);
    if (s == 0)
        mbs_results_report_bad(r, stderr);
    return s;
}

int mbs_results_from_array(json_t *meta, json_t *array, mbs_results *r)
{
    memset(r, 0, sizeof *r);
    size_t cap = 0, i;
    json_t *o;
    json_array_foreach(array, i, o)
    {
        if (!mbs_is_record(o)) {
            add_bad(r, "baseline records", i + 1,
                    "not a run record (needs problem_spec, method_spec, status)");
            continue;
        }
        if (push(r, &cap, json_incref(o)) != 0) {
            json_decref(o);
            mbs_results_free(r);
            return -1;
        }
    }
    r->meta = meta ? json_incref(meta) : NULL;
    return 0;
}

void mbs_results_free(mbs_results *r)
{
    for (size_t i = 0; i < r->n; i++)
        json_decref(r->recs[i]);
    free(r->recs);
    json_decref(r->meta);
    free(r->bad);
    memset(r, 0, sizeof *r);
}

double mbs_jnum(json_t *rec, const char *path)
{
    char a[64];
    json_t *x = rec;
    for (const char *p = path;;) { /* one object level per '.' */
        const char *dot = strchr(p, '.');
        if (!dot) {
            x = json_object_get(x, p);
            break;
        }
        size_t n = (size_t)(dot - p);
        if (n >= sizeof a)
            return NAN;
        memcpy(a, p, n);
        a[n] = '\0';
        x = json_object_get(x, a);
        p = dot + 1;
    }
    return json_is_number(x) ? json_number_value(x) : NAN;
}

int mbs_err_kind_parse(const char *s, mbs_err_kind *k)
{
    if (s && strcmp(s, "final") == 0)
        *k = MBS_ERR_FINAL;
    else if (s && strcmp(s, "traj") == 0)
        *k = MBS_ERR_TRAJ;
    else
        return -1;
    return 0;
}

double mbs_rec_err(json_t *rec, mbs_err_kind k, const char *group)
{
    char f[48];
    snprintf(f, sizeof f, k == MBS_ERR_TRAJ ? "traj.err_max.%s" : "err.%s", group);
    return mbs_jnum(rec, f);
}

double mbs_rec_err_mixed(json_t *rec, mbs_err_kind k)
{
    if (k == MBS_ERR_FINAL) {
        double d = mbs_jnum(rec, "mescd");
        return isfinite(d) ? pow(10.0, -d) : NAN;
    }
    static const char *const g[3] = {"q", "v", "lambda"};
    double e = NAN;
    for (int i = 0; i < 3; i++) { /* null groups (no multipliers) do not count */
        double x = mbs_rec_err(rec, k, g[i]);
        if (isfinite(x))
            e = isfinite(e) ? fmax(e, x) : x;
    }
    return e;
}

int mbs_results_have_traj(const mbs_results *r)
{
    for (size_t i = 0; i < r->n; i++) /* a traj object with reference none measured nothing */
        if (isfinite(mbs_rec_err_mixed(r->recs[i], MBS_ERR_TRAJ)))
            return 1;
    return 0;
}

const char *mbs_jstr(json_t *rec, const char *key)
{
    const char *s = json_string_value(json_object_get(rec, key));
    return s ? s : "";
}

int mbs_rec_ok(json_t *rec)
{
    return strcmp(mbs_jstr(rec, "status"), "ok") == 0;
}

void mbs_rec_series_key(json_t *rec, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s t_end=%.10g", mbs_jstr(rec, "problem_spec"),
             mbs_jstr(rec, "method_spec"), mbs_jnum(rec, "t_end"));
}

void mbs_rec_key(json_t *rec, char *buf, size_t len)
{
    double h = mbs_jnum(rec, "h"), tol = mbs_jnum(rec, "tol");
    char step[64];
    if (isfinite(h))
        snprintf(step, sizeof step, "h=%.10g", h);
    else
        snprintf(step, sizeof step, "tol=%.10g%s", tol,
                 strcmp(mbs_jstr(rec, "tol_mode"), "global") == 0 ? " global" : "");
    snprintf(buf, len, "%s %s %s t_end=%.10g", mbs_jstr(rec, "problem_spec"),
             mbs_jstr(rec, "method_spec"), step, mbs_jnum(rec, "t_end"));
}

typedef struct hx {
    double h, e;
} hx;

static int by_h_desc(const void *a, const void *b)
{
    double x = ((const hx *)a)->h, y = ((const hx *)b)->h;
    return (x < y) - (x > y);
}

int mbs_results_order(const mbs_results *r, json_t *rec, const char *group, mbs_order_fit *fit,
                      size_t *n_levels)
{
    char key[1200], k2[1200], field[32];
    mbs_rec_series_key(rec, key, sizeof key);
    snprintf(field, sizeof field, "err.%s", group);
    hx *pts = malloc((r->n ? r->n : 1) * sizeof *pts);
    size_t n = 0;
    if (!pts)
        return -1;
    for (size_t i = 0; i < r->n; i++) {
        double h = mbs_jnum(r->recs[i], "h");
        if (!isfinite(h))
            continue;
        mbs_rec_series_key(r->recs[i], k2, sizeof k2);
        if (strcmp(key, k2) != 0)
            continue;
        int dup = 0;
        for (size_t j = 0; j < n; j++)
            dup |= pts[j].h == h;
        if (dup)
            continue;
        pts[n].h = h;
        pts[n].e = mbs_rec_ok(r->recs[i]) ? mbs_jnum(r->recs[i], field) : NAN;
        n++;
    }
    *n_levels = n;
    if (n < 3) {
        free(pts);
        return -1;
    }
    qsort(pts, n, sizeof *pts, by_h_desc);
    double *h = malloc(2 * n * sizeof(double));
    if (!h) {
        free(pts);
        return -1;
    }
    double *e = h + n;
    for (size_t i = 0; i < n; i++) {
        h[i] = pts[i].h;
        e[i] = pts[i].e;
    }
    mbs_fit_order(h, e, n, fit);
    free(h);
    free(pts);
    return 0;
}
