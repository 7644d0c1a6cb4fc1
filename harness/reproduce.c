/* Paper reproductions (harness/reproduce.h). */
#include "reproduce.h"
#include "reproduce_impl.h"

#include <dirent.h>
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../methods/formulations/index1.h"
#include "html.h"
#include "io.h"
#include "../core/param.h"
#include "reference.h"
#include "results.h"
#include "run.h"
#include "sweep.h"


static void add_err(expect *e, const char *fmt, const char *a, const char *b)
{
    size_t u = strlen(e->err);
    snprintf(e->err + u, sizeof e->err - u, fmt, a, b);
}

/* key = value into dst: a value longer than dst holds is refused, never cut. */
static void set_text(expect *e, const char *key, char *dst, size_t size, const char *value)
{
    size_t len = strlen(value);
    if (len < size) {
        memcpy(dst, value, len + 1);
        return;
    }
    char fmt[96];
    snprintf(fmt, sizeof fmt, "%%s = '%%s': %zu characters, at most %zu\n", len, size - 1);
    add_err(e, fmt, key, value);
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    expect *e = user;
    if (strcmp(section, "reproduction") == 0) {
        if (strcmp(name, "title") == 0)
            set_text(e, "title", e->title, sizeof e->title, value);
        else if (strcmp(name, "citation") == 0)
            set_text(e, "citation", e->citation, sizeof e->citation, value);
        else if (strcmp(name, "suite") == 0)
            set_text(e, "suite", e->suite, sizeof e->suite, value);
        else
            add_err(e, "unknown key '%s' in [reproduction]%s\n", name, "");
        return 1;
    }
    if (strncmp(section, "quantity ", 9) != 0) {
        add_err(e, "unknown section [%s]%s\n", section, "");
        return 1;
    }
    quantity *q = NULL;
    for (int i = 0; i < e->n; i++)
        if (strcmp(e->q[i].name, section + 9) == 0)
            q = &e->q[i];
    if (!q) {
        if (e->n == MAX_QUANT) {
            add_err(e, "too many quantities%s%s\n", "", "");
            return 1;
        }
        if (strlen(section) >= 49) /* inih keeps 49 characters of a section name: a name of 40 may have been cut */
            add_err(e, "[%s...]: quantity names have at most 39 characters%s\n", section, "");
        q = &e->q[e->n++];
        memset(q, 0, sizeof *q);
        q->published = q->rtol = q->atol = q->bound = NAN;
        snprintf(q->name, sizeof q->name, "%s", section + 9);
    }
    double x;
    if (strcmp(name, "run") == 0)
        set_text(e, "run", q->run, sizeof q->run, value);
    else if (strcmp(name, "field") == 0)
        set_text(e, "field", q->field, sizeof q->field, value);
    else if (strcmp(name, "extract") == 0)
        set_text(e, "extract", q->extract, sizeof q->extract, value);
    else if (strcmp(name, "read") == 0)
        set_text(e, "read", q->read, sizeof q->read, value);
    else if (strcmp(name, "rule") == 0)
        set_text(e, "rule", q->rule, sizeof q->rule, value);
    else if (strcmp(name, "with") == 0) {
        if (q->nwith == MAX_WITH)
            add_err(e, "quantity '%s': more than 8 'with' runs%s\n", q->name, "");
        else
            set_text(e, "with", q->with[q->nwith++], sizeof q->with[0], value);
    } else if (strcmp(name, "combine") == 0) {
        if (strcmp(value, "ratio") != 0 && strcmp(value, "spread") != 0)
            add_err(e, "combine = '%s': expected ratio or spread%s\n", value, "");
        else
            snprintf(q->combine, sizeof q->combine, "%s", value);
    } else if (strcmp(name, "relation") == 0) {
        if (strcmp(value, "<") != 0 && strcmp(value, ">") != 0)
            add_err(e, "relation = '%s': expected < or >%s\n", value, "");
        else
            snprintf(q->relation, sizeof q->relation, "%s", value);
    } else if (strcmp(name, "tol_factors") == 0) {
        char buf[512], *save = NULL;
        snprintf(buf, sizeof buf, "%s", value);
        q->nfactors = 0;
        for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
            if (mbs_parse_double(t, &x) != 0 || !(x > 0.0) || !isfinite(x)) {
                add_err(e, "tol_factors: '%s' is not a positive number (in '%s')\n", t, value);
                return 1;
            }
            if (q->nfactors == MAX_FACTORS) {
                add_err(e, "tol_factors = '%s': at most 9 factors%s\n", value, "");
                return 1;
            }
            q->factors[q->nfactors++] = x;
        }
        if (q->nfactors == 0)
            add_err(e, "tol_factors = '%s': no factors%s\n", value, "");
    } else if (strcmp(name, "verdict") == 0) {
        if (strcmp(value, "info") != 0)
            add_err(e, "verdict = '%s': only 'info' is allowed%s\n", value, "");
        else
            q->info = 1;
    }
    else if (strcmp(name, "published") == 0 || strcmp(name, "rtol") == 0 ||
             strcmp(name, "atol") == 0 || strcmp(name, "bound") == 0) {
        if (mbs_parse_double(value, &x) != 0) {
            add_err(e, "'%s' is not a number (%s)\n", value, name);
            return 1;
        }
        if (name[0] == 'p')
            q->published = x;
        else if (name[0] == 'r')
            q->rtol = x;
        else if (name[0] == 'b')
            q->bound = x;
        else
            q->atol = x;
    } else
        add_err(e, "unknown key '%s' in a quantity%s\n", name, "");
    return 1;
}

typedef struct runref {
    char problem[256], method[256];
    double h, tol, t_end, atol;
} runref;

static int parse_run(const char *s, runref *r)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    *r = (runref){.h = NAN, .tol = NAN, .t_end = NAN, .atol = NAN};
    char *save = NULL;
    int k = 0;
    for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save), k++) {
        if (k == 0)
            snprintf(r->problem, sizeof r->problem, "%s", t);
        else if (k == 1)
            snprintf(r->method, sizeof r->method, "%s", t);
        else {
            double *dst = strncmp(t, "h=", 2) == 0       ? &r->h
                          : strncmp(t, "tol=", 4) == 0   ? &r->tol
                          : strncmp(t, "t_end=", 6) == 0 ? &r->t_end
                          : strncmp(t, "atol=", 5) == 0  ? &r->atol
                                                         : NULL;
            if (!dst || mbs_parse_double(strchr(t, '=') + 1, dst) != 0)
                return -1;
        }
    }
    if (isfinite(r->atol) && !isfinite(r->tol))
        return -1;
    return k >= 3 && (isfinite(r->h) != isfinite(r->tol)) ? 0 : -1;
}

int mbs_repro_load_expect(const char *path, expect *e)
{
    memset(e, 0, sizeof *e);
    int line = ini_parse(path, handler, e);
    if (line < 0) {
        snprintf(e->err, sizeof e->err, "cannot read %s\n", path);
        return -1;
    }
    if (line > 0) {
        char l[32];
        snprintf(l, sizeof l, "%d", line);
        add_err(e, "%s: syntax error on line %s\n", path, l);
    }
    if (!e->suite[0])
        add_err(e, "%s: [reproduction] needs suite =%s\n", path, "");
    if (!e->citation[0])
        add_err(e, "%s: [reproduction] needs citation =%s\n", path, "");
    for (int i = 0; i < e->n; i++) {
        quantity *q = &e->q[i];
        runref r;
        if (parse_run(q->run, &r) != 0)
            add_err(e, "quantity '%s': run = PROBLEM METHOD h=H|tol=T [t_end=T] expected, got '%s'\n",
                    q->name, q->run);
        if (!q->field[0] == !q->extract[0])
            add_err(e, "quantity '%s': give exactly one of field = or extract =%s\n", q->name, "");
        if (isnan(q->published) && isnan(q->bound) && !q->info)
            add_err(e, "quantity '%s': published = (what the source printed) or bound = (a "
                       "derived value, with rule =) is required (or verdict = info)%s\n",
                    q->name, "");
        if (!isnan(q->bound) != (q->rule[0] != '\0'))
            add_err(e, "quantity '%s': bound = and rule = (how the bound is derived) go "
                       "together%s\n", q->name, "");
        if (!q->read[0])
            add_err(e, "quantity '%s': read = (how the number was read) is required%s\n", q->name,
                    "");
        for (int j = 0; j < q->nwith; j++)
            if (parse_run(q->with[j], &r) != 0)
                add_err(e, "quantity '%s': with = PROBLEM METHOD h=H|tol=T ... expected, got '%s'\n",
                        q->name, q->with[j]);
        if (!q->combine[0] != (q->nwith == 0))
            add_err(e, "quantity '%s': with = and combine = go together%s\n", q->name, "");
        if (strcmp(q->combine, "ratio") == 0 && q->nwith != 1)
            add_err(e, "quantity '%s': combine = ratio needs exactly one with =%s\n", q->name, "");
        if (!q->info && !q->relation[0] && !(q->rtol >= 0.0) && !(q->atol >= 0.0))
            add_err(e, "quantity '%s': rtol = or atol = (or relation =) is required%s\n", q->name,
                    "");
        if (q->nfactors && strcmp(q->combine, "spread") == 0)
            add_err(e, "quantity '%s': tol_factors does not combine with combine = spread%s\n",
                    q->name, "");
        if (q->relation[0] && (q->rtol >= 0.0 || q->atol >= 0.0))
            add_err(e, "quantity '%s': relation = excludes rtol = and atol =%s\n", q->name, "");
    }
    if (e->n == 0)
        add_err(e, "%s: no [quantity ...] sections%s\n", path, "");
    return e->err[0] ? -1 : 0;
}

/* Every problem and method the reproduction names is registered. */
int mbs_repro_available(const expect *e, char *why, size_t len)
{
    for (int i = 0; i < e->n; i++)
        for (int j = -1; j < e->q[i].nwith; j++) {
            runref r;
            char err[512];
            mbs_problem pb;
            const mbs_method_def *m;
            mbs_params mp;
            if (parse_run(j < 0 ? e->q[i].run : e->q[i].with[j], &r) != 0)
                return 0;
            if (mbs_problem_open(&pb, r.problem, err, sizeof err) != MBS_OK) {
                snprintf(why, len, "%s", err);
                return 0;
            }
            mbs_problem_close(&pb);
            if (mbs_method_parse(r.method, &m, &mp, err, sizeof err) != MBS_OK) {
                snprintf(why, len, "%s", err);
                return 0;
            }
        }
    return 1;
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

static json_t *find_run(const mbs_results *res, const runref *r)
{
    for (size_t i = 0; i < res->n; i++) {
        json_t *o = res->recs[i];
        if (strcmp(mbs_jstr(o, "problem_spec"), r->problem) != 0 ||
            strcmp(mbs_jstr(o, "method_spec"), r->method) != 0)
            continue;
        if (isfinite(r->h) && !close_to(r->h, mbs_jnum(o, "h")))
            continue;
        if (isfinite(r->tol) && !close_to(r->tol, mbs_jnum(o, "tol")))
            continue;
        if (isfinite(r->t_end) && !close_to(r->t_end, mbs_jnum(o, "t_end")))
            continue;
        double atol = mbs_jnum(o, "atol"); /* present only when set apart from tol */
        if (isfinite(r->atol) != isfinite(atol) || (isfinite(atol) && !close_to(r->atol, atol)))
            continue; /* atol= named exactly when the record has its own atol */
        return o;
    }
    return NULL;
}

/* ---- extractors --------------------------------------------------------------- */

typedef struct minq {
    size_t i;
    double min, tmin;
    /* want_g: max_g over rows lo..hi of g instead (pb, g set by extract_min) */
    int want_g;
    size_t lo, hi;
    const mbs_problem *pb;
    double *g, gmax;
    int gstatus;
    /* want_h: the smallest step overlapping [h0, h1], the last step (which may be
     * shortened to land on t_end) excluded */
    int want_h;
    double h0, h1, hmin, t_prev, t_end;
} minq;

static int observe_min(void *data, double t, const double *q, const double *v,
                       const double *vdot, const double *lambda)
{
    (void)v;
    (void)vdot;
    (void)lambda;
    minq *m = data;
    if (m->want_h) {
        if (t > m->h0 && m->t_prev < m->h1 && t < m->t_end * (1.0 - 1e-12))
            m->hmin = fmin(m->hmin, t - m->t_prev);
        m->t_prev = t;
        return 0;
    }
    if (m->g) { /* the problem's g directly: the observer does no counted work */
        int s = m->pb->def->constraint(m->pb, t, q, m->g);
        if (s != MBS_OK)
            m->gstatus = s;
        for (size_t r = m->lo; r <= m->hi && s == MBS_OK; r++)
            m->gmax = fmax(m->gmax, fabs(m->g[r]));
        return 0;
    }
    if (q[m->i] < m->min) {
        m->min = q[m->i];
        m->tmin = t;
    }
    return 0;
}

/* Integrate run r again, observing the minimum of q_idx, or (mq->want_g) the
 * maximum of |g_r| over rows mq->lo..mq->hi at the initial values and every
 * accepted step. */
static int extract_min(const runref *r, minq *mq, char *err, size_t errlen)
{
    size_t idx = mq->i;
    int want_g = mq->want_g;
    mq->g = NULL;
    mbs_problem pb;
    const mbs_method_def *m;
    mbs_params mp;
    if (mbs_problem_open(&pb, r->problem, err, errlen) != MBS_OK)
        return -1;
    int range = want_g ? mq->lo <= mq->hi && mq->hi < pb.nl : idx < pb.nq;
    if (mbs_method_parse(r->method, &m, &mp, err, errlen) != MBS_OK || !range) {
        if (!range && want_g)
            snprintf(err, errlen, "constraint rows %zu-%zu out of range (n_lambda = %zu)", mq->lo,
                     mq->hi, pb.nl);
        else if (!range)
            snprintf(err, errlen, "coordinate index %zu out of range (n_q = %zu)", idx, pb.nq);
        mbs_problem_close(&pb);
        return -1;
    }
    if (isfinite(r->t_end))
        pb.t_end = r->t_end;
    size_t ny = mbs_ny(&pb);
    double *y = calloc(ny, sizeof(double));
    double *g = want_g ? calloc(pb.nl, sizeof(double)) : NULL;
    mbs_ctx ctx;
    void *state = NULL;
    int s = -1, have_lambda = 0, ctx_ok = 0;
    if (!y || (want_g && !g) || mbs_ctx_init(&ctx, &pb) != MBS_OK) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    ctx_ok = 1;
    mbs_ctx_reset(&ctx);
    s = pb.def->initial(&pb, y, y + pb.nq, y + pb.nq + pb.nv, &have_lambda);
    if (s == MBS_OK && !have_lambda && pb.nl > 0) {
        mbs_index1 *ix = NULL;
        double *vdot = malloc(pb.nv * sizeof(double));
        s = vdot ? mbs_index1_alloc(&ix, &ctx, MBS_LINSOL_LU) : MBS_NO_MEMORY;
        if (s == MBS_OK)
            s = mbs_index1_accel(ix, &ctx, pb.t0, y, y + pb.nq, vdot, y + pb.nq + pb.nv);
        mbs_index1_free(ix);
        free(vdot);
    }
    if (s == MBS_OK) {
        mbs_ctx_reset(&ctx);
        s = m->ops->alloc(m, &mp, &ctx, &state);
    }
    if (s == MBS_OK) {
        mbs_settings set = {.h = isfinite(r->h) ? r->h : 0.0,
                            .rtol = isfinite(r->tol) ? r->tol : 0.0,
                            .atol = isfinite(r->atol)  ? r->atol
                                    : isfinite(r->tol) ? r->tol
                                                       : 0.0,
                            .t_end = pb.t_end};
        mq->min = idx < pb.nq ? y[idx] : NAN;
        mq->tmin = pb.t0;
        mq->pb = &pb;
        mq->gmax = 0.0;
        mq->gstatus = MBS_OK;
        mq->hmin = INFINITY;
        mq->t_prev = pb.t0;
        mq->t_end = pb.t_end;
        double t = pb.t0;
        if (want_g) {
            mq->g = g;
            observe_min(mq, t, y, y + pb.nq, NULL, NULL); /* the initial values */
        }
        mbs_ctx_reset(&ctx);
        ctx.observer = observe_min;
        ctx.observer_data = mq;
        s = m->ops->integrate(state, &ctx, &set, &t, y);
        if (s == MBS_OK && mq->gstatus != MBS_OK) {
            s = mq->gstatus;
            snprintf(ctx.reason, sizeof ctx.reason, "the constraint callback failed");
        }
        mq->g = NULL;
        mq->pb = NULL;
    }
    if (s != MBS_OK)
        snprintf(err, errlen, "run failed: %s", ctx.reason[0] ? ctx.reason : "status != ok");
out:
    if (state)
        m->ops->free_state(state);
    if (ctx_ok)
        mbs_ctx_free(&ctx);
    free(y);
    free(g);
    mbs_problem_close(&pb);
    return s == MBS_OK ? 0 : -1;
}

/* The range LO-HI of the extractors max_g:, min_h: and err_v: (the text after their
 * 6-character name in ex, a quantity's extract): copied whole into lo (as large as
 * extract, so it holds any range: the loader refuses a longer extract), which then
 * ends at the first dash and holds LO; *hi points at HI in ex.  A range without a
 * dash after a non-empty LO is refused with one line naming the extractor and the
 * form expected. */
enum { RANGE_MAX = sizeof ((quantity *)0)->extract };

static int split_range(const char *ex, const char *form, char *lo, size_t size, const char **hi,
                       char *err, size_t errlen)
{
    const char *range = ex + 6;
    snprintf(lo, size, "%s", range);
    const char *dash = strchr(lo, '-');
    size_t n = dash ? (size_t)(dash - lo) : 0;
    if (n == 0) {
        snprintf(err, errlen, "extractor '%s': expected %s", ex, form);
        return -1;
    }
    lo[n] = '\0'; /* LO ends at its dash */
    *hi = range + n + 1;
    return 0;
}

static int extract(const quantity *q, const runref *r, double *val, char *err, size_t errlen)
{
    long idx, hi;
    const char *colon = strchr(q->extract, ':');
    if (strncmp(q->extract, "max_g:", 6) == 0) {
        char lo_s[RANGE_MAX];
        const char *hi_s;
        if (split_range(q->extract, "max_g:LO-HI", lo_s, sizeof lo_s, &hi_s, err, errlen) != 0)
            return -1;
        if (mbs_parse_long(lo_s, &idx) != 0 || mbs_parse_long(hi_s, &hi) != 0 || idx < 0 ||
            hi < idx) {
            snprintf(err, errlen, "extractor '%s': expected max_g:LO-HI, 0 <= LO <= HI",
                     q->extract);
            return -1;
        }
        minq mq = {.want_g = 1, .lo = (size_t)idx, .hi = (size_t)hi};
        if (extract_min(r, &mq, err, errlen) != 0)
            return -1;
        *val = mq.gmax;
        return 0;
    }
    if (strncmp(q->extract, "min_h:", 6) == 0) {
        char lo_s[RANGE_MAX];
        const char *hi_s;
        minq mq = {.want_h = 1};
        if (split_range(q->extract, "min_h:T0-T1, T0 < T1", lo_s, sizeof lo_s, &hi_s, err,
                        errlen) != 0)
            return -1;
        if (mbs_parse_double(lo_s, &mq.h0) != 0 || mbs_parse_double(hi_s, &mq.h1) != 0 ||
            !(mq.h0 < mq.h1)) {
            snprintf(err, errlen, "extractor '%s': expected min_h:T0-T1, T0 < T1", q->extract);
            return -1;
        }
        if (extract_min(r, &mq, err, errlen) != 0)
            return -1;
        if (!isfinite(mq.hmin)) {
            snprintf(err, errlen, "extractor '%s': no step overlaps [%g, %g]", q->extract, mq.h0,
                     mq.h1);
            return -1;
        }
        *val = mq.hmin;
        return 0;
    }
    if (!colon || mbs_parse_long(colon + 1, &idx) != 0 || idx < 0) {
        snprintf(err, errlen, "extractor '%s': expected min_q:I or argmin_q:I", q->extract);
        return -1;
    }
    if (strncmp(q->extract, "min_q:", 6) == 0 || strncmp(q->extract, "argmin_q:", 9) == 0) {
        minq mq = {.i = (size_t)idx};
        if (extract_min(r, &mq, err, errlen) != 0)
            return -1;
        *val = q->extract[0] == 'm' ? mq.min : mq.tmin;
        return 0;
    }
    snprintf(err, errlen,
             "unknown extractor '%s' (min_q:I, argmin_q:I, max_g:LO-HI, min_h:T0-T1, "
             "relerr_q:I, err_v:LO-HI)",
             q->extract);
    return -1;
}

/* relerr_q:I: |q_I - ref_I| / |ref_I| at the record's t_end, q_I from the record's
 * final state, ref from the stored reference of the run's problem (exactly its
 * parameters and t_end, harness/reference.h); no integration.
 * err_v:LO-HI: max |v_i - ref_i| over the velocity components LO..HI (0-based in v),
 * from the same two sources. */
static int extract_relerr(json_t *rec, const runref *r, const char *ex, double *val, char *err,
                          size_t errlen)
{
    int is_v = strncmp(ex, "err_v:", 6) == 0;
    long idx, hi;
    char lo_s[RANGE_MAX];
    const char *hi_s = NULL;
    if (is_v && split_range(ex, "err_v:LO-HI, 0 <= LO <= HI", lo_s, sizeof lo_s, &hi_s, err,
                            errlen) != 0)
        return -1;
    if (is_v ? (mbs_parse_long(lo_s, &idx) != 0 || mbs_parse_long(hi_s, &hi) != 0 || idx < 0 ||
                hi < idx)
             : (mbs_parse_long(ex + 9, &idx) != 0 || idx < 0)) {
        snprintf(err, errlen, "extractor '%s': expected %s", ex,
                 is_v ? "err_v:LO-HI, 0 <= LO <= HI" : "relerr_q:I");
        return -1;
    }
    if (!is_v)
        hi = idx;
    json_t *a = json_object_get(json_object_get(rec, "final"), is_v ? "v" : "q");
    for (long i = hi; i >= idx; i--) /* the highest missing component is named */
        if (!json_is_array(a) || !json_is_number(json_array_get(a, (size_t)i))) {
            snprintf(err, errlen, "extractor '%s': the record has no final %s_%ld", ex,
                     is_v ? "v" : "q", i);
            return -1;
        }
    mbs_problem pb;
    if (mbs_problem_open(&pb, r->problem, err, errlen) != MBS_OK)
        return -1;
    double *y = calloc(mbs_ny(&pb), sizeof(double));
    char prov[1024];
    int found = y && mbs_reference_find(&pb, mbs_jnum(rec, "t_end"), y, prov, sizeof prov) == 1;
    const double *ref = y ? y + (is_v ? pb.nq : 0) : NULL;
    int rc = -1;
    if (!found)
        snprintf(err, errlen, "extractor '%s': no stored reference for %s at t_end = %g", ex,
                 r->problem, mbs_jnum(rec, "t_end"));
    else if (!is_v && !(fabs(ref[idx]) > 0.0))
        snprintf(err, errlen, "extractor '%s': reference q_%ld is zero", ex, idx);
    else {
        double e = 0.0;
        for (long i = idx; i <= hi; i++)
            e = fmax(e, fabs(json_number_value(json_array_get(a, (size_t)i)) - ref[i]));
        *val = is_v ? e : e / fabs(ref[idx]);
        rc = 0;
    }
    free(y);
    mbs_problem_close(&pb);
    return rc;
}

/* The value of quantity q from one run (run = runstr, its tol or h multiplied
 * by factor) of the results. */
static double run_value(const mbs_results *res, const quantity *q, const char *runstr,
                        double factor, char *note, size_t notelen)
{
    runref r;
    char err[1024];
    double ours = NAN;
    parse_run(runstr, &r);
    r.tol *= factor; /* NAN stays NAN */
    r.h *= factor;
    json_t *rec = find_run(res, &r);
    if (!rec && factor != 1.0)
        snprintf(note, notelen, "run not in the results: %s at %s x %g", runstr,
                 isfinite(r.tol) ? "tol" : "h", factor);
    else if (!rec)
        snprintf(note, notelen, "run not in the results: %s", runstr);
    else if (!mbs_rec_ok(rec))
        snprintf(note, notelen, "run failed: %s", mbs_jstr(rec, "reason"));
    else if (strncmp(q->extract, "relerr_q:", 9) == 0 || strncmp(q->extract, "err_v:", 6) == 0) {
        if (extract_relerr(rec, &r, q->extract, &ours, err, sizeof err) != 0)
            snprintf(note, notelen, "%s", err);
    } else if (q->extract[0]) {
        if (extract(q, &r, &ours, err, sizeof err) != 0)
            snprintf(note, notelen, "%s", err);
    } else if (strncmp(q->field, "order.", 6) == 0) {
        mbs_order_fit fit;
        size_t nl;
        if (mbs_results_order(res, rec, q->field + 6, &fit, &nl) != 0)
            snprintf(note, notelen, "fewer than 3 h levels for %s", q->field);
        else if (!fit.established)
            snprintf(note, notelen, "order not established (p = %.2f)", fit.p);
        else
            ours = fit.p;
    } else {
        ours = mbs_jnum(rec, q->field);
        if (isnan(ours))
            snprintf(note, notelen, "field %s is null or absent", q->field);
    }
    return ours;
}

/* The value of q at one tol (h) factor: its run's value, or combined over run
 * and the with runs: ratio = value(run) / value(with), spread = (max - min) /
 * |mean|. */
static double value_at(const mbs_results *res, const quantity *q, double factor, char *note,
                       size_t notelen)
{
    double v = run_value(res, q, q->run, factor, note, notelen);
    if (!q->combine[0] || !isfinite(v))
        return v;
    double lo = v, hi = v, sum = v, w = NAN;
    for (int j = 0; j < q->nwith; j++) {
        w = run_value(res, q, q->with[j], factor, note, notelen);
        if (!isfinite(w))
            return NAN;
        lo = fmin(lo, w);
        hi = fmax(hi, w);
        sum += w;
    }
    if (strcmp(q->combine, "ratio") == 0) {
        if (w == 0.0)
            snprintf(note, notelen, "ratio: the value of %s is 0", q->with[0]);
        return w != 0.0 ? v / w : NAN;
    }
    double mean = sum / (q->nwith + 1);
    if (mean == 0.0)
        snprintf(note, notelen, "spread: the mean over the runs is 0");
    return mean != 0.0 ? (hi - lo) / fabs(mean) : NAN;
}

/* The value of q; with tol_factors the geometric mean of its values at the
 * factors (a quantity that scatters under small changes of TOL, e.g. an error
 * at round-off-sensitive step-size sequences, is judged by its level, not by
 * one draw); the note gives their range. */
static double quantity_value(const mbs_results *res, const quantity *q, char *note,
                             size_t notelen)
{
    if (!q->nfactors)
        return value_at(res, q, 1.0, note, notelen);
    double slog = 0.0, lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < q->nfactors; k++) {
        double v = value_at(res, q, q->factors[k], note, notelen);
        if (!isfinite(v))
            return NAN;
        if (!(v > 0.0)) {
            snprintf(note, notelen, "tol_factors: value %g at factor %g (geometric mean needs > 0)",
                     v, q->factors[k]);
            return NAN;
        }
        slog += log(v);
        lo = fmin(lo, v);
        hi = fmax(hi, v);
    }
    snprintf(note, notelen, "geometric mean over %d factors %g..%g of tol: values %.3g .. %.3g",
             q->nfactors, q->factors[0], q->factors[q->nfactors - 1], lo, hi);
    return exp(slog / q->nfactors);
}

/* ---- checking ----------------------------------------------------------------- */

int mbs_reproduce_check(const char *expect_path, const char *results_dir, FILE *out)
{
    expect *e = malloc(sizeof *e);
    if (!e)
        return 2;
    if (mbs_repro_load_expect(expect_path, e) != 0) {
        fputs(e->err, stderr);
        free(e);
        return 2;
    }
    mbs_results res;
    char err[1024];
    if (mbs_results_load(results_dir, &res, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        free(e);
        return 2;
    }
    fprintf(out, "%s\n  %s\n  results: %s\n\n", e->title, e->citation, results_dir);
    /* labels are printed whole: the first column is as wide as the longest */
    int w = (int)strlen("quantity");
    for (int i = 0; i < e->n; i++)
        w = (int)strlen(e->q[i].name) > w ? (int)strlen(e->q[i].name) : w;
    fprintf(out, "%-*s | %-10s | %-10s | %-10s | %-9s | %-10s | %s\n", w, "quantity", "published",
            "bound", "ours", "ratio", "tolerance", "verdict");
    for (int k = 0; k < w + 77; k++)
        fputc('-', out);
    fputc('\n', out);
    int fails = 0, n_info = 0;
    for (int i = 0; i < e->n; i++) {
        quantity *q = &e->q[i];
        double ours = NAN;
        char note[1100] = "";
        ours = quantity_value(&res, q, note, sizeof note);
        /* judged against the derived bound when there is one, else the printed value */
        double ref = isfinite(q->bound) ? q->bound : q->published;
        int within = 0;
        char tol[32];
        if (q->info)
            snprintf(tol, sizeof tol, "-");
        else if (q->relation[0])
            snprintf(tol, sizeof tol, "%s %.4g", q->relation, ref);
        else if (q->rtol >= 0.0)
            snprintf(tol, sizeof tol, "%.0f%%", 100.0 * q->rtol);
        else
            snprintf(tol, sizeof tol, "+-%.3g", q->atol);
        if (isfinite(ours)) {
            if (q->relation[0])
                within = q->relation[0] == '<' ? ours < ref : ours > ref;
            if (q->rtol >= 0.0 && ref != 0.0)
                within |= fabs(ours / ref - 1.0) <= q->rtol;
            if (q->atol >= 0.0)
                within |= fabs(ours - ref) <= q->atol;
        }
        n_info += q->info;
        fails += !within && !q->info;
        /* "-" where the source printed no number; the ratio is ours / published, or
         * ours / bound when nothing was printed, in 3 significant digits */
        char ratio[32] = "-", o[32] = "-", pub[32] = "-", bnd[32] = "-";
        if (isfinite(q->published))
            snprintf(pub, sizeof pub, "%.4g", q->published);
        if (isfinite(q->bound))
            snprintf(bnd, sizeof bnd, "%.4g", q->bound);
        double den = isfinite(q->published) ? q->published : q->bound;
        if (isfinite(ours)) {
            snprintf(o, sizeof o, "%.4g", ours);
            if (isfinite(den) && den != 0.0)
                snprintf(ratio, sizeof ratio, "%.3g", ours / den);
        }
        fprintf(out, "%-*s | %-10s | %-10s | %-10s | %-9s | %-10s | %s\n", w, q->name, pub, bnd, o,
                ratio, tol, q->info ? "info" : within ? "ok" : "OUTSIDE");
        if (note[0])
            fprintf(out, "    %s\n", note);
    }
    fprintf(out, "\nhow the published numbers were read (and the bounds derived):\n");
    for (int i = 0; i < e->n; i++) {
        const quantity *q = &e->q[i];
        fprintf(out, "  %-*s %s (%s%s%s of %s", w, q->name, q->read, q->combine,
                q->combine[0] ? " of " : "", q->extract[0] ? q->extract : q->field, q->run);
        for (int j = 0; j < q->nwith; j++)
            fprintf(out, "; %s", q->with[j]);
        if (q->nfactors) {
            fprintf(out, "; geometric mean over tol x");
            for (int k = 0; k < q->nfactors; k++)
                fprintf(out, " %g", q->factors[k]);
        }
        fprintf(out, ")\n");
        if (q->rule[0])
            fprintf(out, "  %-*s bound %.4g: %s\n", w, "", q->bound, q->rule);
    }
    if (n_info)
        fprintf(out, "\n%d informational quantities (verdict = info) are not judged\n", n_info);
    fprintf(out, "\n%d of %d quantities within tolerance: %s\n", e->n - n_info - fails,
            e->n - n_info, fails ? "NOT REPRODUCED" : "REPRODUCED");
    mbs_results_free(&res);
    free(e);
    return fails ? 1 : 0;
}
