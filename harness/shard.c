#include "shard.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/param.h"
#include "results.h"

int mbs_shard_parse(const char *arg, int *index, int *count)
{
    const char *slash = arg ? strchr(arg, '/') : NULL;
    long i = -1, n = -1;
    char head[32];
    if (slash && (size_t)(slash - arg) < sizeof head) {
        memcpy(head, arg, (size_t)(slash - arg));
        head[slash - arg] = '\0';
        if (mbs_parse_long(head, &i) != 0 || mbs_parse_long(slash + 1, &n) != 0)
            i = n = -1;
    }
    if (n < 1 || n > 100000 || i < 0 || i >= n) {
        fprintf(stderr, "mbsbench: --shard '%s' is not I/N with 0 <= I < N <= 100000 "
                        "(I counts from 0, as SLURM_ARRAY_TASK_ID of --array=0-(N-1))\n",
                arg ? arg : "");
        return 2;
    }
    *index = (int)i;
    *count = (int)n;
    return 0;
}

char *mbs_spec_identity(const mbs_run_spec *r)
{
    char *k = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&k, &n);
    if (!m)
        return NULL;
    fprintf(m, "%s|%s", r->problem, r->method);
    if (isfinite(r->h))
        fprintf(m, "|h=%.17g", r->h);
    if (isfinite(r->tol))
        fprintf(m, "|tol=%.17g", r->tol);
    if (isfinite(r->atol) && r->atol > 0.0 && r->atol != r->tol)
        fprintf(m, "|atol=%.17g", r->atol);
    if (r->tol_mode == MBS_TOL_GLOBAL)
        fprintf(m, "|global");
    if (isfinite(r->t_end))
        fprintf(m, "|t_end=%.17g", r->t_end);
    fclose(m);
    return k;
}

void mbs_suite_digest(const mbs_suite *s, char *buf, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a offset basis */
    for (size_t i = 0; i < s->n_runs; i++) {
        char *k = mbs_spec_identity(&s->runs[i]);
        for (const char *c = k ? k : "?"; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
        h = (h ^ '\n') * 1099511628211ull;
        free(k);
    }
    snprintf(buf, len, "%016llx", (unsigned long long)h);
}

/* Estimated cost of a run from its identity record: size x expected steps. */
static double estimate(const mbs_record *id)
{
    double size = (double)(id->nq + id->nv + id->nl);
    double span = fabs(id->t_end - id->t0);
    if (!(span > 0.0))
        span = 1.0;
    double steps;
    if (isfinite(id->h) && id->h > 0.0)
        steps = span / id->h;
    else {
        double p = isfinite(id->order[0]) && id->order[0] >= 1.0 ? id->order[0] : 4.0;
        double tol = isfinite(id->tol) && id->tol > 0.0 ? id->tol : 1e-6;
        steps = span * pow(tol, -1.0 / p);
    }
    return fmax(size, 1.0) * fmax(steps, 1.0);
}

typedef struct order_item {
    size_t run;
    long bucket;  /* cost quantised to 1/20 decade, so that all nodes sort alike */
    char *key;
} order_item;

static int by_cost_then_key(const void *a, const void *b)
{
    const order_item *x = a, *y = b;
    if (x->bucket != y->bucket)
        return x->bucket > y->bucket ? -1 : 1;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return (x->run > y->run) - (x->run < y->run);
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Measured CPU of run i from a previous results directory (NaN: not found). */
static double measured(const mbs_results *prev, const mbs_run_spec *r, const mbs_record *id)
{
    if (!prev)
        return NAN;
    char want[1200], have[1200];
    json_t *o = json_object();
    json_object_set_new(o, "problem_spec", json_string(r->problem));
    json_object_set_new(o, "method_spec", json_string(r->method));
    json_object_set_new(o, "h", isfinite(id->h) ? json_real(id->h) : json_null());
    json_object_set_new(o, "tol", isfinite(id->tol) ? json_real(id->tol) : json_null());
    json_object_set_new(o, "t_end", json_real(id->t_end));
    if (r->tol_mode == MBS_TOL_GLOBAL)
        json_object_set_new(o, "tol_mode", json_string("global"));
    mbs_rec_key(o, want, sizeof want);
    json_decref(o);
    for (size_t j = 0; j < prev->n; j++) {
        mbs_rec_key(prev->recs[j], have, sizeof have);
        if (strcmp(want, have) == 0) {
            double c = mbs_jnum(prev->recs[j], "cpu.median");
            return isfinite(c) && c > 0.0 ? c : NAN;
        }
    }
    return NAN;
}

int mbs_shard_plan_make(const mbs_suite *s, int count, const char *cost_dir, mbs_shard_plan *p,
                        char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    size_t n = s->n_runs;
    p->count = count;
    p->shard_of = calloc(n ? n : 1, sizeof *p->shard_of);
    p->cost = calloc(n ? n : 1, sizeof *p->cost);
    p->load = calloc((size_t)count, sizeof *p->load);
    double *est = calloc(n ? n : 1, sizeof *est);
    double *ratio = calloc(n ? n : 1, sizeof *ratio);
    order_item *it = calloc(n ? n : 1, sizeof *it);
    mbs_results prev, *pv = NULL;
    int st = -1;
    if (!p->shard_of || !p->cost || !p->load || !est || !ratio || !it) {
        snprintf(err, errlen, "out of memory planning %d shards", count);
        goto done;
    }
    if (cost_dir) {
        char e[512];
        if (mbs_results_load(cost_dir, &prev, e, sizeof e) != 0) {
            snprintf(err, errlen, "--cost-from: %s", e);
            goto done;
        }
        pv = &prev;
    }
    size_t n_ratio = 0;
    for (size_t i = 0; i < n; i++) {
        mbs_run_spec probe = s->runs[i];
        probe.measure = 0; /* identity fields only: dimensions, orders, t0, t_end */
        probe.repeat = 0;
        probe.series = NULL;
        mbs_record id;
        char e[512];
        if (mbs_run(&probe, &id, e, sizeof e) != MBS_OK) {
            snprintf(err, errlen, "run %zu: %s", i, e);
            goto done;
        }
        est[i] = estimate(&id);
        p->cost[i] = measured(pv, &s->runs[i], &id);
        mbs_record_free(&id);
        if (isfinite(p->cost[i])) {
            p->n_measured++;
            ratio[n_ratio++] = p->cost[i] / est[i];
        }
    }
    double scale = 1.0;
    if (n_ratio > 0) {
        qsort(ratio, n_ratio, sizeof *ratio, by_double);
        scale = ratio[n_ratio / 2];
    }
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(p->cost[i]))
            p->cost[i] = est[i] * scale;
        it[i].run = i;
        it[i].bucket = lround(20.0 * log10(fmax(p->cost[i], 1e-300)));
        it[i].key = mbs_spec_identity(&s->runs[i]);
        if (!it[i].key) {
            snprintf(err, errlen, "out of memory planning %d shards", count);
            goto done;
        }
    }
    qsort(it, n, sizeof *it, by_cost_then_key);
    for (size_t k = 0; k < n; k++) { /* longest processing time first */
        int best = 0;
        for (int j = 1; j < count; j++)
            if (p->load[j] < p->load[best])
                best = j;
        p->shard_of[it[k].run] = best;
        p->load[best] += p->cost[it[k].run];
    }
    if (cost_dir)
        snprintf(p->source, sizeof p->source, "CPU medians from %s (%zu of %zu runs), the rest "
                 "estimated", cost_dir, p->n_measured, n);
    else
        snprintf(p->source, sizeof p->source, "estimated: (n_q + n_v + n_lambda) x steps");
    st = 0;
done:
    if (it)
        for (size_t i = 0; i < n; i++)
            free(it[i].key);
    free(it);
    free(est);
    free(ratio);
    if (pv)
        mbs_results_free(pv);
    if (st != 0)
        mbs_shard_plan_free(p);
    return st;
}

void mbs_shard_plan_free(mbs_shard_plan *p)
{
    free(p->shard_of);
    free(p->cost);
    free(p->load);
    p->shard_of = NULL;
    p->cost = p->load = NULL;
}
