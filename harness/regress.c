/* Baselines and regression comparison (harness/regress.h). */
#include "regress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "io.h"
#include "sweep.h"

/* ---- Mann-Whitney U ---------------------------------------------------------- */

/* Number of orderings of n a's and m b's with exactly u pairs a < b (no ties):
 * c(n, m, u) = c(n, m - 1, u - n) + c(n - 1, m, u), by whether the largest element
 * is a b (above all n a's: n pairs) or an a (no pair).  P(U >= u) = sum / C(n+m, n). */
enum { MW_EXACT = 12 };

static double mw_exact_upper(size_t na, size_t nb, double u_obs)
{
    size_t U = na * nb;
    size_t dm = U + 1, dn = (nb + 1) * dm;
    double *c = calloc((na + 1) * dn, sizeof(double));
    if (!c)
        return 1.0;
    for (size_t n = 0; n <= na; n++)
        for (size_t m = 0; m <= nb; m++)
            for (size_t u = 0; u <= n * m; u++) {
                double v;
                if (n == 0 || m == 0)
                    v = u == 0 ? 1.0 : 0.0;
                else {
                    /* largest element is a b: it exceeds all n a's (n pairs a < b) */
                    v = u >= n ? c[n * dn + (m - 1) * dm + (u - n)] : 0.0;
                    /* largest element is an a: no new pairs */
                    v += c[(n - 1) * dn + m * dm + u];
                }
                c[n * dn + m * dm + u] = v;
            }
    double total = 0.0, upper = 0.0;
    for (size_t u = 0; u <= U; u++) {
        double v = c[na * dn + nb * dm + u];
        total += v;
        if ((double)u >= u_obs - 1e-9)
            upper += v;
    }
    free(c);
    return upper / total;
}

typedef struct mw_item {
    double x;
    int from_b;
} mw_item;

static int mw_cmp(const void *p, const void *q)
{
    double x = ((const mw_item *)p)->x, y = ((const mw_item *)q)->x;
    return (x > y) - (x < y);
}

double mbs_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb)
{
    if (na == 0 || nb == 0)
        return 1.0;
    /* U = #(a_i < b_j) + 1/2 #(a_i = b_j): large when b is larger. */
    double u = 0.0;
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
            u += a[i] < b[j] ? 1.0 : a[i] == b[j] ? 0.5 : 0.0;
    if (na <= MW_EXACT && nb <= MW_EXACT)
        return mw_exact_upper(na, nb, ceil(u - 1e-9));
    /* Normal approximation with tie correction and continuity correction. */
    size_t n = na + nb;
    mw_item *it = malloc(n * sizeof *it);
    if (!it)
        return 1.0;
    for (size_t i = 0; i < na; i++)
        it[i] = (mw_item){a[i], 0};
    for (size_t j = 0; j < nb; j++)
        it[na + j] = (mw_item){b[j], 1};
    qsort(it, n, sizeof *it, mw_cmp);
    double ties = 0.0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && it[j].x == it[i].x)
            j++;
        double t = (double)(j - i);
        ties += t * t * t - t;
        i = j;
    }
    free(it);
    double N = (double)n, mu = (double)na * (double)nb / 2.0;
    double var = (double)na * (double)nb / 12.0 * ((N + 1.0) - ties / (N * (N - 1.0)));
    if (var <= 0.0)
        return 1.0;
    double z = (u - mu - 0.5) / sqrt(var);
    return 0.5 * erfc(z / sqrt(2.0));
}

/* ---- comparison --------------------------------------------------------------- */

/* The work counters, and those of the linear-solver backend (null without one). */
static const char *const counters[] = {
    "counters.steps",          "counters.rejected",       "counters.f_evals",
    "counters.mass_evals",     "counters.g_evals",        "counters.jac_evals",
    "counters.gamma_evals",    "counters.factorizations", "counters.solves",
    "counters.newton_iters",   "counters.jacobians",      "counters.deriv_evals",
    "linsol.analyses",         "linsol.factorizations",   "linsol.solves"};
/* Every error-like measure of a record (docs/results-schema.md); the digits scd and
 * mescd are compared as the errors 10^-digits they stand for. */
static const char *const accuracy[] = {"err.q",        "err.v",          "err.lambda",
                                       "err_max.q",    "err_max.v",      "err_max.lambda",
                                       "err_mixed_qv", "residual.pos_max", "residual.vel_max",
                                       "residual.acc_max", "residual.pos_end",
                                       "residual.vel_end", "energy_drift", "scd", "mescd",
                                       "traj.err_max.q", "traj.err_max.v",
                                       "traj.err_max.lambda", "traj.err_rms.q",
                                       "traj.err_rms.v", "traj.err_rms.lambda"};
static const char *const groups[] = {"q", "v", "lambda"};

static json_t *find_key(const mbs_results *r, const char *key)
{
    char k[1200];
    for (size_t i = 0; i < r->n; i++) {
        mbs_rec_key(r->recs[i], k, sizeof k);
        if (strcmp(k, key) == 0)
            return r->recs[i];
    }
    return NULL;
}

/* Whether a baseline run of the refinement series `series` is missing now: its
 * order is then not judged (the missing run is counted once, as missing). */
static int series_incomplete(const mbs_results *base, const mbs_results *now,
                             const char *series)
{
    char k[1200];
    for (size_t i = 0; i < base->n; i++) {
        mbs_rec_series_key(base->recs[i], k, sizeof k);
        if (strcmp(k, series) != 0)
            continue;
        mbs_rec_key(base->recs[i], k, sizeof k);
        if (!find_key(now, k))
            return 1;
    }
    return 0;
}

/* The suite name and grid digest of a results set's meta ("" when absent). */
static void suite_of(const mbs_results *r, char *buf, size_t len, const char **digest)
{
    snprintf(buf, len, "%s", r->meta ? mbs_jstr(r->meta, "suite") : "");
    const char *d = r->meta ? json_string_value(json_object_get(r->meta, "suite_digest")) : NULL;
    *digest = d ? d : "";
}

/* The table of compare: rows are kept and printed at the end with columns as
 * wide as their widest cell (run keys are long), and the header only when
 * there is a row (a passing compare prints none).  A row with only its first
 * cell set is a note printed under the row before it. */
enum { COLS = 6 };
typedef struct table {
    char *(*cells)[COLS];
    size_t n, cap;
} table;

static void row(table *t, const char *run, const char *check, const char *base,
                const char *now, const char *change, const char *verdict)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        char *(*c)[COLS] = realloc(t->cells, cap * sizeof *c);
        if (!c)
            return;
        t->cells = c;
        t->cap = cap;
    }
    const char *v[COLS] = {run, check, base, now, change, verdict};
    for (int k = 0; k < COLS; k++)
        t->cells[t->n][k] = v[k] ? strdup(v[k]) : NULL;
    t->n++;
}

static void table_print(const table *t, FILE *out)
{
    static const char *const head[COLS] = {"run", "check", "baseline", "now", "change",
                                           "verdict"};
    int w[COLS];
    for (int k = 0; k < COLS; k++)
        w[k] = (int)strlen(head[k]);
    for (size_t i = 0; i < t->n; i++)
        for (int k = 0; k < COLS && t->cells[i][1]; k++)
            if (t->cells[i][k] && (int)strlen(t->cells[i][k]) > w[k])
                w[k] = (int)strlen(t->cells[i][k]);
    for (size_t i = 0; i <= t->n && t->n > 0; i++) {
        char *const *c = i ? t->cells[i - 1] : NULL;
        if (c && !c[1]) { /* a note */
            fprintf(out, "    %s\n", c[0] ? c[0] : "");
            continue;
        }
        for (int k = 0; k < COLS; k++) {
            const char *x = c ? (c[k] ? c[k] : "") : head[k];
            if (k + 1 < COLS)
                fprintf(out, "%-*s | ", w[k], x);
            else
                fprintf(out, "%s\n", x);
        }
        if (!c) {
            int total = 0;
            for (int k = 0; k < COLS; k++)
                total += w[k] + (k + 1 < COLS ? 3 : 0);
            for (int k = 0; k < total; k++)
                fputc('-', out);
            fputc('\n', out);
        }
    }
}

static void table_free(table *t)
{
    for (size_t i = 0; i < t->n; i++)
        for (int k = 0; k < COLS; k++)
            free(t->cells[i][k]);
    free(t->cells);
    *t = (table){0};
}

static void fmt(char *buf, size_t len, double x)
{
    if (isnan(x))
        snprintf(buf, len, "null");
    else
        snprintf(buf, len, "%.4g", x);
}

/* A record keeps at most MBS_CPU_TIMES_MAX CPU times (harness/run.h: the first
 * min(repeats, MAX) timings).  The compare refuses a baseline or results record
 * with more, naming it, rather than judge a part of its times: 1 when refused. */
static int too_many_times(const mbs_results *r, const char *which)
{
    for (size_t i = 0; i < r->n; i++) {
        size_t n = json_array_size(json_object_get(json_object_get(r->recs[i], "cpu"), "times"));
        if (n > MBS_CPU_TIMES_MAX) {
            char key[1200];
            mbs_rec_key(r->recs[i], key, sizeof key);
            fprintf(stderr, "mbsbench: compare: refusing: the %s record %s holds %zu CPU times, "
                            "a record keeps at most %d\n", which, key, n, MBS_CPU_TIMES_MAX);
            return 1;
        }
    }
    return 0;
}

/* The numbers of a record's cpu.times, at most MBS_CPU_TIMES_MAX (too_many_times
 * refused longer arrays), into t. */
static int times_of(json_t *rec, double *t)
{
    json_t *a = json_object_get(json_object_get(rec, "cpu"), "times");
    size_t i;
    int n = 0;
    json_t *x;
    json_array_foreach(a, i, x)
    {
        if (json_is_number(x))
            t[n++] = json_number_value(x);
    }
    return n;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_d);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* The CPU tier is hard only between sweeps on the same environment (CPU model,
 * compiler, flags, core count), each started on a quiet machine; otherwise it is
 * advisory and says why. */
static int same_environment(const mbs_results *a, const mbs_results *b, char *why, size_t len)
{
    static const char *const keys[] = {"cpu", "compiler", "cflags", "cores"};
    if (!a->meta || !b->meta) {
        snprintf(why, len, "no environment record in the %s", a->meta ? "new run" : "baseline");
        return 0;
    }
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        char x[256], y[256];
        json_t *ja = json_object_get(a->meta, keys[k]), *jb = json_object_get(b->meta, keys[k]);
        if (json_is_integer(ja) || json_is_integer(jb)) {
            snprintf(x, sizeof x, "%lld", (long long)json_integer_value(ja));
            snprintf(y, sizeof y, "%lld", (long long)json_integer_value(jb));
        } else {
            snprintf(x, sizeof x, "%s", json_string_value(ja) ? json_string_value(ja) : "?");
            snprintf(y, sizeof y, "%s", json_string_value(jb) ? json_string_value(jb) : "?");
        }
        if (strcmp(x, y) != 0) {
            snprintf(why, len, "%s differs: baseline '%s', now '%s'", keys[k], x, y);
            return 0;
        }
    }
    /* a sweep that started with other work on the machine times contention, not code:
     * more than half the cores busy (1-minute load average) makes the tier advisory */
    for (int k = 0; k < 2; k++) {
        json_t *m = k ? b->meta : a->meta;
        double load = mbs_jnum(m, "load_average"), cores = mbs_jnum(m, "cores");
        if (isfinite(load) && cores > 0.0 && load > MBS_REGRESS_BUSY * cores) {
            snprintf(why, len, "the machine was busy when the %s sweep started (load average "
                               "%.2f on %.0f cores; the CPU tier needs at most %.2f)",
                     k ? "new" : "baseline's", load, cores, MBS_REGRESS_BUSY * cores);
            return 0;
        }
    }
    return 1;
}

static double calibration(const mbs_results *r)
{
    json_t *c = r->meta ? json_object_get(r->meta, "calibration_s") : NULL;
    double x = json_is_number(c) ? json_number_value(c) : NAN;
    return x > 0.0 ? x : NAN;
}

static int same_step(double a, double b)
{
    char x[32], y[32];
    snprintf(x, sizeof x, "%.10g", a);
    snprintf(y, sizeof y, "%.10g", b);
    return (isnan(a) && isnan(b)) || strcmp(x, y) == 0;
}

size_t mbs_baseline_budgets(const mbs_results *base, struct mbs_suite *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_runs; i++) {
        mbs_run_spec *r = &s->runs[i];
        for (size_t j = 0; j < base->n; j++) {
            json_t *b = base->recs[j];
            if (strcmp(mbs_jstr(b, "problem_spec"), r->problem) != 0 ||
                strcmp(mbs_jstr(b, "method_spec"), r->method) != 0 ||
                !same_step(mbs_jnum(b, "h"), r->h) || !same_step(mbs_jnum(b, "tol"), r->tol) ||
                (isfinite(r->t_end) && !same_step(mbs_jnum(b, "t_end"), r->t_end)))
                continue;
            double steps = mbs_jnum(b, "counters.steps") + mbs_jnum(b, "counters.rejected");
            double cpu = mbs_jnum(b, "cpu.median");
            if (!isfinite(steps))
                break;
            r->max_steps = (long)fmax(1000.0, 10.0 * steps);
            r->max_cpu = 1.0 + 10.0 * (isfinite(cpu) ? cpu : 0.0);
            r->max_wall = 5.0 + 2.0 * r->max_cpu;
            n++;
            break;
        }
    }
    return n;
}

/* The identity tier: the resolved parameters of a run (problem and method, the
 * defaults included) must be those of the baseline's run, or the two records do
 * not describe the same computation (a changed default, or a record that names
 * its parameters wrongly).  One row per differing parameter; returns how many. */
static int params_differ(table *t, const char *key, json_t *rb, json_t *rn)
{
    static const char *const sides[] = {"problem", "method"};
    json_t *pb = json_object_get(rb, "params"), *pn = json_object_get(rn, "params");
    int n = 0;
    for (size_t g = 0; g < 2; g++) {
        json_t *ob = json_object_get(pb, sides[g]), *on = json_object_get(pn, sides[g]);
        for (int pass = 0; pass < 2; pass++) { /* keys of the baseline, then new keys */
            json_t *o = pass ? on : ob;
            const char *name;
            json_t *val;
            json_object_foreach(o, name, val) {
                json_t *x = json_object_get(ob, name), *y = json_object_get(on, name);
                if ((pass && x) || json_equal(x, y))
                    continue;
                char check[160];
                snprintf(check, sizeof check, "params.%s.%s", sides[g], name);
                char *vb = x ? json_dumps(x, JSON_ENCODE_ANY) : NULL;
                char *vn = y ? json_dumps(y, JSON_ENCODE_ANY) : NULL;
                row(t, key, check, vb ? vb : "missing", vn ? vn : "missing", "",
                    "REGRESSION (parameters)");
                free(vb);
                free(vn);
                n++;
            }
        }
    }
    return n;
}

/* The CPU test of one run: the median and the minimum of the repeat times slower by
 * more than thr, and a one-sided Mann-Whitney U test significant at alpha.  Returns 0
 * when the run is not timed (fewer than 3 repeats either side, or a baseline median
 * under MBS_REGRESS_CPU_MIN), else 1 with the verdict in c->slower. */
typedef struct cpu_test {
    double p, mb, mn; /* p-value; baseline and scaled current medians */
    int slower;
} cpu_test;

static int cpu_slower(json_t *rb, json_t *rn, double scale, double thr, double alpha,
                      cpu_test *c)
{
    double tb[MBS_CPU_TIMES_MAX], tn[MBS_CPU_TIMES_MAX];
    int nb = times_of(rb, tb), nn = times_of(rn, tn);
    for (int k = 0; k < nn; k++)
        tn[k] *= scale;
    if (nb < 3 || nn < 3 || !(mbs_jnum(rb, "cpu.median") >= MBS_REGRESS_CPU_MIN))
        return 0;
    c->p = mbs_mann_whitney_p(tb, (size_t)nb, tn, (size_t)nn);
    c->mb = median(tb, nb);
    c->mn = median(tn, nn); /* (sorts: [0] is the min) */
    /* the minimum must be slower too: a load burst on the machine inflates the
     * median of consecutive repeats, rarely all of them (DiffEqDevTools' min) */
    c->slower = c->mn > (1.0 + thr) * c->mb && tn[0] > (1.0 + thr) * tb[0] && c->p < alpha;
    return 1;
}

int mbs_compare_results(const mbs_results *base, const mbs_results *now,
                        const mbs_compare_opts *opt, FILE *out, mbs_compare_summary *sum)
{
    mbs_compare_summary s = {0};
    if (sum)
        *sum = s;
    if (too_many_times(base, "baseline") || too_many_times(now, "results") ||
        (opt && opt->confirm && too_many_times(opt->confirm, "second sweep's")))
        return 2;
    double thr = opt && opt->cpu_threshold > 0.0 ? opt->cpu_threshold : 0.25;
    double alpha = opt && opt->alpha > 0.0 ? opt->alpha : 0.01;
    int allow = opt && opt->allow_counters, verbose = opt && opt->verbose;
    double srtol = opt && opt->state_rtol > 0.0 ? opt->state_rtol : 1e-8;
    char key[1200], b[64], n[64], ch[64], why[600];
    int cpu_hard = same_environment(base, now, why, sizeof why);
    /* CPU times in units of each machine's calibration loop when both have one */
    double cal_b = calibration(base), cal_n = calibration(now);
    double cpu_scale = isfinite(cal_b) && isfinite(cal_n) ? cal_b / cal_n : 1.0;
    const mbs_results *confirm = opt ? opt->confirm : NULL;
    double cal_c = confirm ? calibration(confirm) : NAN;
    double confirm_scale = isfinite(cal_b) && isfinite(cal_c) ? cal_b / cal_c : 1.0;
    if (cpu_hard)
        fprintf(out, "CPU tier: hard (same environment)%s\n",
                isfinite(cal_b) && isfinite(cal_n) ? "; times normalised by the calibration loop"
                                                   : "");
    else
        fprintf(out, "CPU tier: advisory only (%s)%s\n", why,
                isfinite(cal_b) && isfinite(cal_n) ? "; times normalised by the calibration loop"
                                                   : "");
    char sb[256], sn[256];
    const char *db_, *dn_;
    suite_of(base, sb, sizeof sb, &db_);
    suite_of(now, sn, sizeof sn, &dn_);
    if (*db_ && *dn_ && strcmp(db_, dn_) != 0)
        fprintf(out, "suite: the baseline holds suite %s (grid digest %s), the results suite %s "
                     "(grid digest %s): the grids differ, so runs can be missing or new\n",
                sb, db_, sn, dn_);
    table t = {0};
    for (size_t i = 0; i < base->n; i++) {
        json_t *rb = base->recs[i];
        mbs_rec_key(rb, key, sizeof key);
        json_t *rn = find_key(now, key);
        s.checks++;
        if (!rn) { /* counted once, as missing (not again as a lost order) */
            s.missing++;
            row(&t, key, "coverage", mbs_jstr(rb, "status"), "missing", "", "MISSING");
            continue;
        }
        if (json_object_get(rb, "params")) { /* not in baselines older than the field */
            s.checks++;
            if (params_differ(&t, key, rb, rn) > 0) {
                s.regressions++;
                continue;
            }
        }
        int ok_b = mbs_rec_ok(rb), ok_n = mbs_rec_ok(rn);
        if (ok_b && !ok_n) {
            s.regressions++;
            row(&t, key, "status", "ok", mbs_jstr(rn, "status"), "", "REGRESSION (newly failing)");
            char note[1200];
            snprintf(note, sizeof note, "reason: %s", mbs_jstr(rn, "reason"));
            row(&t, note, NULL, NULL, NULL, NULL, NULL);
            continue;
        }
        if (!ok_b) {
            if (ok_n)
                s.fixed++;
            if (verbose || ok_n)
                row(&t, key, "status", mbs_jstr(rb, "status"), mbs_jstr(rn, "status"), "",
                    ok_n ? "fixed" : "still failing");
            continue;
        }
        /* exact tier */
        for (size_t k = 0; k < sizeof counters / sizeof *counters; k++) {
            const char *path = counters[k];
            double x = mbs_jnum(rb, path), y = mbs_jnum(rn, path);
            s.checks++;
            if (x == y || (isnan(x) && isnan(y))) {
                if (verbose) {
                    fmt(b, sizeof b, x);
                    row(&t, key, path, b, b, "", "ok");
                }
                continue;
            }
            s.counter_changes++;
            if (!allow)
                s.regressions++;
            fmt(b, sizeof b, x);
            fmt(n, sizeof n, y);
            snprintf(ch, sizeof ch, "%+.0f", y - x);
            row(&t, key, path, b, n, ch, allow ? "changed (allowed)" : "REGRESSION (counter)");
        }
        /* tolerance tier: errors */
        double tol = mbs_jnum(rb, "tol");
        for (size_t k = 0; k < sizeof accuracy / sizeof *accuracy; k++) {
            int digits = accuracy[k][0] == 's' || accuracy[k][0] == 'm'; /* scd, mescd */
            double x = mbs_jnum(rb, accuracy[k]), y = mbs_jnum(rn, accuracy[k]);
            if (isnan(x))
                continue; /* not measured in the baseline */
            s.checks++;
            fmt(b, sizeof b, x);
            fmt(n, sizeof n, y);
            if (digits ? isnan(y) : !isfinite(y)) {
                s.regressions++;
                row(&t, key, accuracy[k], b, n, "", "REGRESSION (NaN/Inf)");
                continue;
            }
            if (digits) { /* d digits: the error 10^-d */
                x = pow(10.0, -x);
                y = pow(10.0, -y);
            }
            double limit = fmax(2.0 * x, MBS_REGRESS_FLOOR);
            if (isfinite(tol))
                limit = fmax(limit, tol);
            if (digits)
                snprintf(ch, sizeof ch, "%+.2f", log10(x / y));
            else
                snprintf(ch, sizeof ch, "x%.3g", x > 0.0 ? y / x : (y > 0.0 ? INFINITY : 1.0));
            if (y > limit) {
                s.regressions++;
                row(&t, key, accuracy[k], b, n, ch,
                    digits ? "REGRESSION (digits lost)" : "REGRESSION (error grew)");
            } else if (verbose) {
                row(&t, key, accuracy[k], b, n, ch, "ok");
            }
        }
        /* drift exponent in both directions (round-off level residuals carry no
         * exponent): a rise is faster growth of the constraint violation; a fall
         * changes the drift law too, e.g. larger early residuals flatten the fit
         * while the maximum stays (docs/nightly.md) */
        double db = mbs_jnum(rb, "drift_exponent"), dn = mbs_jnum(rn, "drift_exponent");
        double pb = mbs_jnum(rb, "residual.pos_max"), pn = mbs_jnum(rn, "residual.pos_max");
        if (isfinite(db) && !(pb <= 1e-12 && pn <= 1e-12)) {
            s.checks++;
            fmt(b, sizeof b, db);
            fmt(n, sizeof n, dn);
            snprintf(ch, sizeof ch, "%+.2f", dn - db);
            if (!isfinite(dn) || dn > db + 0.3 || dn < db - 0.3) {
                s.regressions++;
                row(&t, key, "drift_exponent", b, n, ch,
                    dn < db - 0.3 ? "REGRESSION (drift exponent fell)"
                                  : "REGRESSION (drift exponent rose)");
            } else if (verbose) {
                row(&t, key, "drift_exponent", b, n, ch, "ok");
            }
        }
        /* final-state tier: the state at t_end itself, so that a change is seen
         * also where no reference measures an error and no counter moves
         * (fixed-step methods on problems without a reference) */
        json_t *fb = json_object_get(rb, "final"), *fn = json_object_get(rn, "final");
        if (json_is_object(fb)) {
            static const char *const parts[] = {"q", "v", "lambda", "x"};
            s.checks++;
            double dmax = 0.0;
            char worst[32] = "";
            int bad = !json_is_object(fn);
            for (size_t p = 0; p < 4 && !bad; p++) {
                json_t *ab = json_object_get(fb, parts[p]), *an = json_object_get(fn, parts[p]);
                if (!ab)
                    continue;
                size_t nf = json_array_size(ab);
                if (!json_is_array(an) || json_array_size(an) != nf) {
                    bad = 1;
                    break;
                }
                for (size_t k = 0; k < nf; k++) {
                    json_t *jx = json_array_get(ab, k), *jy = json_array_get(an, k);
                    double x = json_is_number(jx) ? json_number_value(jx) : NAN;
                    double y = json_is_number(jy) ? json_number_value(jy) : NAN;
                    double d = fabs(y - x) / (1.0 + fabs(x));
                    if (isnan(x) && isnan(y))
                        d = 0.0;
                    if (!(d <= dmax)) {
                        dmax = isfinite(d) ? d : INFINITY;
                        snprintf(worst, sizeof worst, "%s[%zu]", parts[p], k);
                    }
                }
            }
            fmt(n, sizeof n, dmax);
            if (bad || dmax > srtol) {
                s.regressions++;
                row(&t, key, "final state", worst, bad ? "size" : n, "",
                    "REGRESSION (state changed)");
            } else if (verbose) {
                row(&t, key, "final state", worst, n, "", "ok");
            }
        }
        /* statistical tier: CPU */
        cpu_test c;
        if (cpu_slower(rb, rn, cpu_scale, thr, alpha, &c)) {
            s.checks++;
            char v[96] = "";
            /* the second sweep is consulted only for a run the first found slower */
            cpu_test c2 = {0};
            json_t *rc = c.slower && confirm ? find_key(confirm, key) : NULL;
            int confirmed = !confirm || (rc && mbs_rec_ok(rc) &&
                                         cpu_slower(rb, rc, confirm_scale, thr, alpha, &c2) &&
                                         c2.slower);
            fmt(b, sizeof b, c.mb);
            fmt(n, sizeof n, c.mn);
            snprintf(ch, sizeof ch, "x%.3g", c.mb > 0.0 ? c.mn / c.mb : 1.0);
            if (!c.slower) {
                if (verbose)
                    snprintf(v, sizeof v, "ok (p = %.2g)", c.p);
            } else if (!confirmed) {
                s.cpu_unconfirmed++;
                if (rc && c2.mb > 0.0)
                    snprintf(v, sizeof v, "not confirmed (second sweep x%.3g, p = %.2g)",
                             c2.mn / c2.mb, c2.p);
                else /* absent, failed, or timed fewer than 3 times there */
                    snprintf(v, sizeof v, "not confirmed (run %s)",
                             !rc                 ? "absent from the second sweep"
                             : !mbs_rec_ok(rc)   ? "failed in the second sweep"
                                                 : "not timed in the second sweep: fewer "
                                                   "than 3 repeats");
            } else if (cpu_hard) {
                s.regressions++;
                if (confirm)
                    snprintf(v, sizeof v, "REGRESSION (slower, p = %.2g; second sweep x%.3g)",
                             c.p, c2.mn / c2.mb);
                else
                    snprintf(v, sizeof v, "REGRESSION (slower, p = %.2g)", c.p);
            } else {
                s.cpu_advisory++;
                snprintf(v, sizeof v, "advisory (slower, p = %.2g)", c.p);
            }
            if (*v)
                row(&t, key, "cpu.median [s]", b, n, ch, v);
        }
    }
    /* observed orders per refinement series */
    char done_keys[256][256];
    int n_done = 0;
    for (size_t i = 0; i < base->n; i++) {
        json_t *rb = base->recs[i];
        if (!isfinite(mbs_jnum(rb, "h")))
            continue;
        mbs_rec_series_key(rb, key, sizeof key);
        int seen = 0;
        for (int d = 0; d < n_done; d++)
            seen |= strncmp(done_keys[d], key, 255) == 0;
        if (seen || n_done >= 256)
            continue;
        snprintf(done_keys[n_done++], 256, "%.255s", key);
        if (series_incomplete(base, now, key))
            continue;
        for (int g = 0; g < 3; g++) {
            mbs_order_fit fb, fn;
            size_t lb, ln;
            if (mbs_results_order(base, rb, groups[g], &fb, &lb) != 0 || !fb.established)
                continue;
            json_t *rn = NULL;
            for (size_t j = 0; j < now->n && !rn; j++) {
                char k2[1200];
                mbs_rec_series_key(now->recs[j], k2, sizeof k2);
                if (strcmp(k2, key) == 0)
                    rn = now->recs[j];
            }
            char check[32];
            snprintf(check, sizeof check, "order %s", groups[g]);
            s.checks++;
            fmt(b, sizeof b, fb.p);
            if (!rn || mbs_results_order(now, rn, groups[g], &fn, &ln) != 0 || !fn.established) {
                s.regressions++;
                row(&t, key, check, b, "n/e", "", "REGRESSION (order not established)");
                continue;
            }
            fmt(n, sizeof n, fn.p);
            snprintf(ch, sizeof ch, "%+.2f", fn.p - fb.p);
            if (fn.p < fb.p - 0.3) {
                s.regressions++;
                row(&t, key, check, b, n, ch, "REGRESSION (order dropped)");
            } else if (verbose) {
                row(&t, key, check, b, n, ch, "ok");
            }
        }
    }
    /* runs that are new (not in the baseline): information only */
    for (size_t j = 0; j < now->n; j++) {
        mbs_rec_key(now->recs[j], key, sizeof key);
        if (!find_key(base, key)) {
            s.new_runs++;
            if (verbose)
                row(&t, key, "coverage", "absent", mbs_jstr(now->recs[j], "status"), "", "new");
        }
    }
    size_t rows = t.n;
    table_print(&t, out);
    table_free(&t);
    fprintf(out, "%s%d checks: %d regressions, %d missing runs, %d counter changes%s, "
                 "%d new runs, %d fixed\n",
            rows ? "\n" : "", s.checks, s.regressions, s.missing, s.counter_changes,
            allow ? " (allowed)" : "", s.new_runs, s.fixed);
    if (s.cpu_advisory)
        fprintf(out, "%d CPU slow-downs reported as advisory: %s\n", s.cpu_advisory, why);
    if (s.cpu_unconfirmed)
        fprintf(out, "%d CPU slow-downs not confirmed by the second sweep (not regressions)\n",
                s.cpu_unconfirmed);
    int failed = s.regressions > 0 || s.missing > 0;
    fprintf(out, "%s\n", s.regressions ? "REGRESSION" : s.missing ? "REGRESSION (runs missing)"
                                                                 : "no regression");
    if (sum)
        *sum = s;
    return failed ? 1 : 0;
}

/* ---- baseline files ------------------------------------------------------------ */

int mbs_baseline_bless(const char *results_dir, const char *out_path, const char *name)
{
    mbs_results r;
    char err[512];
    if (mbs_results_load(results_dir, &r, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    if (r.n_bad) { /* never bless a damaged results file */
        fprintf(stderr, "mbsbench: bless: refusing: %zu unreadable lines in %s/runs.jsonl\n",
                r.n_bad, results_dir);
        mbs_results_free(&r);
        return 2;
    }
    if (r.n == 0) {
        fprintf(stderr, "mbsbench: %s holds no runs\n", results_dir);
        mbs_results_free(&r);
        return 2;
    }
    json_t *recs = json_array();
    for (size_t i = 0; i < r.n; i++)
        json_array_append(recs, r.recs[i]);
    char date[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:O?,s:o}", "format", "mbsbench-baseline/1", "name",
                          name, "blessed", date, "source", results_dir, "meta", r.meta,
                          "records", recs);
    char *text = o ? json_dumps(o, JSON_INDENT(1) | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(o);
    mbs_results_free(&r);
    int bad = !text || mbs_write_atomic(out_path, text, strlen(text)) != 0;
    free(text);
    if (bad) {
        fprintf(stderr, "mbsbench: cannot write %s\n", out_path);
        return 2;
    }
    return 0;
}

int mbs_baseline_load(const char *path, mbs_results *r, char *err, size_t errlen)
{
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    if (!o) {
        if (je.line > 0) /* a parse error; jansson says -1 when the file cannot be opened */
            snprintf(err, errlen, "cannot read baseline %s: %s (line %d)", path, je.text,
                     je.line);
        else
            snprintf(err, errlen, "cannot read baseline %s: %s", path, je.text);
        return -1;
    }
    if (strcmp(mbs_jstr(o, "format"), "mbsbench-baseline/1") != 0 ||
        !json_is_array(json_object_get(o, "records"))) {
        snprintf(err, errlen, "%s is not an mbsbench baseline (format mbsbench-baseline/1)", path);
        json_decref(o);
        return -1;
    }
    int st = mbs_results_from_array(json_object_get(o, "meta"), json_object_get(o, "records"), r);
    json_decref(o);
    if (st != 0)
        snprintf(err, errlen, "out of memory");
    return st;
}

/* ---- CLI ---------------------------------------------------------------------- */

int mbs_cmd_baseline(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL;
    if (argc < 3 || strcmp(argv[2], "bless") != 0) {
        fprintf(stderr, "mbsbench: usage: mbsbench baseline bless RESULTS_DIR -o FILE\n");
        return 2;
    }
    const mbs_cli_cmd *cmd = mbs_cli_find("baseline");
    for (int i = 3; i < argc; i++) {
        mbs_cli_arg a;
        int k = mbs_cli_next(cmd, argc, argv, &i, &a);
        if (k < 0)
            return 2;
        if (mbs_cli_is(&a, "--out"))
            out = a.str;
        else if (k == 0 && !dir)
            dir = a.str;
        else {
            fprintf(stderr, "mbsbench: baseline: unexpected argument '%s'\n", a.str);
            return 2;
        }
    }
    if (!dir || !out) {
        fprintf(stderr, "mbsbench: usage: mbsbench baseline bless RESULTS_DIR -o FILE\n");
        return 2;
    }
    const char *slash = strrchr(out, '/');
    char name[256];
    snprintf(name, sizeof name, "%s", slash ? slash + 1 : out);
    char *dot = strrchr(name, '.');
    if (dot)
        *dot = '\0';
    int st = mbs_baseline_bless(dir, out, name);
    if (st == 0)
        printf("blessed %s as baseline %s\n", dir, out);
    return st;
}

int mbs_cmd_compare(int argc, char **argv)
{
    const char *pos[2] = {NULL, NULL}, *confirm_dir = NULL;
    int np = 0;
    mbs_compare_opts opt = {0};
    const mbs_cli_cmd *cmd = mbs_cli_find("compare");
    for (int i = 2; i < argc; i++) {
        mbs_cli_arg a;
        int k = mbs_cli_next(cmd, argc, argv, &i, &a);
        if (k < 0)
            return 2;
        if (mbs_cli_is(&a, "--allow-counters"))
            opt.allow_counters = 1;
        else if (mbs_cli_is(&a, "--verbose"))
            opt.verbose = 1;
        else if (mbs_cli_is(&a, "--cpu-threshold"))
            opt.cpu_threshold = a.num;
        else if (mbs_cli_is(&a, "--alpha"))
            opt.alpha = a.num;
        else if (mbs_cli_is(&a, "--confirm"))
            confirm_dir = a.str;
        else if (k == 0 && np < 2)
            pos[np++] = a.str;
        else {
            fprintf(stderr, "mbsbench: compare: unexpected argument '%s'\n", a.str);
            return 2;
        }
    }
    if (np != 2) {
        fprintf(stderr, "mbsbench: usage: mbsbench compare BASELINE RESULTS_DIR [--allow-counters]"
                        " [--cpu-threshold R] [--alpha A] [--confirm DIR] [-v]\n");
        return 2;
    }
    mbs_results base, now, again;
    char err[1024];
    if (mbs_baseline_load(pos[0], &base, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    if (mbs_results_load(pos[1], &now, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        mbs_results_free(&base);
        return 2;
    }
    if (base.n_bad || now.n_bad) { /* never compare damaged files */
        mbs_results_report_bad(&base, stderr);
        fprintf(stderr, "mbsbench: compare: refusing: %zu unreadable lines in %s, %zu in "
                        "%s/runs.jsonl\n", base.n_bad, pos[0], now.n_bad, pos[1]);
        mbs_results_free(&base);
        mbs_results_free(&now);
        return 2;
    }
    if (confirm_dir) {
        if (mbs_results_load(confirm_dir, &again, err, sizeof err) != 0) {
            fprintf(stderr, "mbsbench: compare: --confirm: %s\n", err);
            mbs_results_free(&base);
            mbs_results_free(&now);
            return 2;
        }
        if (again.n_bad) {
            mbs_results_report_bad(&again, stderr);
            fprintf(stderr, "mbsbench: compare: refusing: %zu unreadable lines in %s/runs.jsonl\n",
                    again.n_bad, confirm_dir);
            mbs_results_free(&base);
            mbs_results_free(&now);
            mbs_results_free(&again);
            return 2;
        }
        opt.confirm = &again;
    }
    int st = mbs_compare_results(&base, &now, &opt, stdout, NULL);
    mbs_results_free(&base);
    mbs_results_free(&now);
    if (confirm_dir)
        mbs_results_free(&again);
    return st;
}
