/* The tables of a report (report.h): observed orders and tolerance exponents,
 * tolerance proportionality, digits at fixed cost, drift exponents (Markdown and
 * LaTeX), failures and the environment.
 *
 * The comparison tables compare identical runs: a column is one problem at one
 * t_end, and every method's cell in it comes from the same runs -- the same h or
 * the same tolerance (drift), the same levels of them (orders, tolerance
 * exponents), the same reference cost (digits) -- and names them by their run
 * index, so that each number can be traced to its record. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_impl.h"

/* ---- runs and their settings ------------------------------------------------------ */

static int same_x(double a, double b)
{
    return (isnan(a) && isnan(b)) || fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

static setting setting_of(json_t *o)
{
    double h = mbs_jnum(o, "h");
    setting s = {.adaptive = !isfinite(h), .x = isfinite(h) ? h : mbs_jnum(o, "tol"),
                 .atol = mbs_jnum(o, "atol"),
                 .global = strcmp(mbs_jstr(o, "tol_mode"), "global") == 0};
    return s;
}

static int same_setting(const setting *a, const setting *b)
{
    return a->adaptive == b->adaptive && same_x(a->x, b->x) && same_x(a->atol, b->atol) &&
           a->global == b->global;
}

/* A step size or tolerance as written in suites: 0.005, 1e-06 (not 1e-06 as 0.000001). */
static void num_text(double x, char *buf, size_t len)
{
    snprintf(buf, len, fabs(x) >= 1e-3 && fabs(x) < 1e4 ? "%.4g" : "%.3g", x);
    if (strchr(buf, 'e') == NULL && fabs(x) < 1e-3 && x != 0.0) { /* 0.0001 -> 1e-04 */
        int e = (int)floor(log10(fabs(x)));
        snprintf(buf, len, "%.3ge%+03d", x / pow(10.0, e), e);
    }
}

static void setting_text(const setting *s, char *buf, size_t len)
{
    char x[32], a[32];
    num_text(s->x, x, sizeof x);
    int k = snprintf(buf, len, "%s %s", s->adaptive ? "tol" : "h", x);
    num_text(s->atol, a, sizeof a);
    if (k > 0 && (size_t)k < len && isfinite(s->atol))
        k += snprintf(buf + k, len - (size_t)k, " atol %s", a);
    if (k > 0 && (size_t)k < len && s->global)
        snprintf(buf + k, len - (size_t)k, " (global)");
}

static int rec_in(ctx *c, json_t *o, int p, double t_end, int m)
{
    return !strcmp(mbs_jstr(o, "problem_spec"), c->probs.s[p]) &&
           (m < 0 || !strcmp(mbs_jstr(o, "method_spec"), c->meths.s[m])) &&
           same_x(mbs_jnum(o, "t_end"), t_end);
}

/* The record of problem p, method m at t_end with setting s (the first of
 * duplicates), or NULL. */
static json_t *find_rec(ctx *c, int p, double t_end, int m, const setting *s)
{
    for (size_t i = 0; i < c->r->n; i++) {
        json_t *o = c->r->recs[i];
        if (!rec_in(c, o, p, t_end, m))
            continue;
        setting so = setting_of(o);
        if (same_setting(&so, s))
            return o;
    }
    return NULL;
}

static int by_x_desc(const void *a, const void *b)
{
    double x = ((const setting *)a)->x, y = ((const setting *)b)->x;
    return (x < y) - (x > y);
}

/* Distinct settings of kind `adaptive` of p, m at t_end, decreasing x. */
static int levels_of(ctx *c, int p, double t_end, int m, int adaptive, setting *out)
{
    int n = 0;
    for (size_t i = 0; i < c->r->n && n < MAXLEV; i++) {
        json_t *o = c->r->recs[i];
        if (!rec_in(c, o, p, t_end, m))
            continue;
        setting s = setting_of(o);
        int seen = s.adaptive != adaptive || !(s.x > 0.0);
        for (int k = 0; k < n && !seen; k++)
            seen = same_setting(&out[k], &s);
        if (!seen)
            out[n++] = s;
    }
    qsort(out, (size_t)n, sizeof *out, by_x_desc);
    return n;
}

static int contains(const setting *set, int n, const setting *s)
{
    for (int k = 0; k < n; k++)
        if (same_setting(&set[k], s))
            return 1;
    return 0;
}

/* Does method m have a run at every level of lev? */
static int covers(ctx *c, int p, double t_end, int m, const setting *lev, int n)
{
    if (n == 0)
        return 0;
    for (int k = 0; k < n; k++)
        if (!find_rec(c, p, t_end, m, &lev[k]))
            return 0;
    return 1;
}

/* Common levels of kind `adaptive` at (p, t_end): among the methods' level sets
 * (at least 3 levels) and their pairwise intersections, the one that the most
 * methods have in full; ties: more levels, then the first found. */
static int common_levels(ctx *c, int p, double t_end, int adaptive, setting *out)
{
    setting *lv = malloc((size_t)MAXN * MAXLEV * sizeof *lv);
    int nl[MAXN], best_cov = 0, best_n = 0;
    if (!lv)
        return 0;
    for (int m = 0; m < c->meths.n; m++)
        nl[m] = levels_of(c, p, t_end, m, adaptive, lv + (size_t)m * MAXLEV);
    setting cand[MAXLEV];
    for (int a = 0; a < c->meths.n; a++)
        for (int b = a; b < c->meths.n; b++) {
            int n = 0;
            const setting *la = lv + (size_t)a * MAXLEV, *lb = lv + (size_t)b * MAXLEV;
            for (int k = 0; k < nl[a]; k++)
                if (contains(lb, nl[b], &la[k]))
                    cand[n++] = la[k];
            if (n < 3)
                continue;
            int cov = 0; /* methods with every candidate level among their own */
            for (int m = 0; m < c->meths.n; m++) {
                int all = 1;
                for (int k = 0; k < n && all; k++)
                    all = contains(lv + (size_t)m * MAXLEV, nl[m], &cand[k]);
                cov += all;
            }
            if (cov > best_cov || (cov == best_cov && n > best_n)) {
                best_cov = cov;
                best_n = n;
                memcpy(out, cand, (size_t)n * sizeof *cand);
            }
        }
    free(lv);
    return best_n;
}

/* The setting of kind `adaptive` at (p, t_end) at which the most methods have an
 * ok run with a drift exponent; ties: the smaller h or tol.  x NaN when none. */
static setting common_drift(ctx *c, int p, double t_end, int adaptive)
{
    setting best = {.adaptive = adaptive, .x = NAN, .atol = NAN};
    int best_n = 0;
    for (size_t i = 0; i < c->r->n; i++) {
        json_t *o = c->r->recs[i];
        if (!rec_in(c, o, p, t_end, -1))
            continue;
        setting s = setting_of(o);
        if (s.adaptive != adaptive)
            continue;
        char seen[MAXN] = {0};
        int n = 0;
        for (size_t j = 0; j < c->r->n; j++) { /* the methods with a drift exponent at s */
            json_t *x = c->r->recs[j];
            if (!rec_in(c, x, p, t_end, -1) || !mbs_rec_ok(x) ||
                !isfinite(mbs_jnum(x, "drift_exponent")))
                continue;
            setting sx = setting_of(x);
            int m = mbs_report_name_index(&c->meths, mbs_jstr(x, "method_spec"), 0);
            if (m >= 0 && !seen[m] && same_setting(&sx, &s)) {
                seen[m] = 1;
                n++;
            }
        }
        if (n > best_n || (n == best_n && n > 0 && s.x < best.x)) {
            best_n = n;
            best = s;
        }
    }
    return best;
}

/* "runs 3, 9, 15" of the records at the levels (or one record). */
static void runs_text(json_t *const *recs, int n, char *buf, size_t len)
{
    int k = snprintf(buf, len, "run%s", n > 1 ? "s" : "");
    for (int i = 0; i < n && k > 0 && (size_t)k < len; i++)
        k += snprintf(buf + k, len - (size_t)k, "%s %.0f", i ? "," : "", mbs_jnum(recs[i], "run"));
}

/* ---- orders and tolerance exponents ------------------------------------------------- */

/* Fit of group g over the common levels of kind `adaptive` of column k for
 * method m (the records in recs); 0 when m has every level. */
static int series_fit(ctx *c, const tcol *k, int m, int adaptive, int g, mbs_order_fit *fit,
                      json_t **recs, double *err)
{
    int n = k->nlev[adaptive];
    if (!covers(c, k->p, k->t_end, m, k->lev[adaptive], n))
        return -1;
    double x[MAXLEV];
    for (int i = 0; i < n; i++) {
        recs[i] = find_rec(c, k->p, k->t_end, m, &k->lev[adaptive][i]);
        x[i] = k->lev[adaptive][i].x;
        err[i] = mbs_rec_ok(recs[i]) ? mbs_rec_err(recs[i], c->err, mbs_report_groups[g]) : NAN;
    }
    mbs_fit_order(x, err, (size_t)n, fit);
    return 0;
}

static void order_cell(ctx *c, const tcol *k, int m, char *buf, size_t len, int tex)
{
    int adaptive = covers(c, k->p, k->t_end, m, k->lev[0], k->nlev[0]) ? 0 : 1;
    json_t *recs[MAXLEV];
    double err[MAXLEV];
    mbs_order_fit f;
    if (series_fit(c, k, m, adaptive, 0, &f, recs, err) != 0) {
        snprintf(buf, len, "%s", tex ? "--" : "—");
        return;
    }
    size_t u = (size_t)snprintf(buf, len, "%s", adaptive ? "tol: " : "");
    for (int g = 0; g < 3 && u < len; g++) {
        if (g == 2 && mbs_jnum(recs[0], "dims.nl") == 0)
            continue;
        series_fit(c, k, m, adaptive, g, &f, recs, err);
        char val[16];
        if (f.established)
            snprintf(val, sizeof val, "%.2f", f.p);
        else
            snprintf(val, sizeof val, "n/e");
        if (tex)
            u += (size_t)snprintf(buf + u, len - u, "%s$%s$~%s", g ? " / " : "",
                                  mbs_report_group_tex[g], val);
        else
            u += (size_t)snprintf(buf + u, len - u, "%s%s %s", g ? " / " : "",
                                  mbs_report_groups[g], val);
    }
    char runs[256];
    runs_text(recs, k->nlev[adaptive], runs, sizeof runs);
    if (u < len)
        snprintf(buf + u, len - u, " (%s)", runs);
}

void mbs_report_tol_table(ctx *c, FILE *f)
{
    int rows = 0;
    for (int j = 0; j < c->ncol; j++) {
        const tcol *k = &c->cols[j];
        for (int m = 0; m < c->meths.n; m++) {
            json_t *recs[MAXLEV];
            double err[MAXLEV];
            mbs_order_fit fit;
            if (series_fit(c, k, m, 1, 0, &fit, recs, err) != 0)
                continue;
            if (rows++ == 0)
                fprintf(f, "| problem | method | exponent q [95%% CI] | v | lambda | err_q/tol "
                           "at each tol | runs |\n|---|---|---|---|---|---|---|\n");
            char pname[600];
            snprintf(pname, sizeof pname, "%s%s", c->probs.s[k->p], k->multi ? ", t_end " : "");
            if (k->multi)
                snprintf(pname + strlen(pname), sizeof pname - strlen(pname), "%g", k->t_end);
            fprintf(f, "| %s | `%s` |", pname, c->meths.s[m]);
            for (int g = 0; g < 3; g++) {
                series_fit(c, k, m, 1, g, &fit, recs, err);
                if (g == 2 && mbs_jnum(recs[0], "dims.nl") == 0) {
                    fprintf(f, " — (no multipliers) |");
                    continue;
                }
                if (fit.established) {
                    fprintf(f, " %.2f [%.2f, %.2f] |", fit.p, fit.ci_low, fit.ci_high);
                    continue;
                }
                /* not established: the plain fit over every level, for scale */
                double lx[MAXLEV], ly[MAXLEV], a, p, hw;
                int n = 0;
                for (int i = 0; i < k->nlev[1]; i++)
                    if (err[i] > 0.0 && isfinite(err[i])) {
                        lx[n] = log(k->lev[1][i].x);
                        ly[n++] = log(err[i]);
                    }
                if (n >= 3) {
                    mbs_fit_line(lx, ly, (size_t)n, &a, &p, &hw);
                    fprintf(f, " n/e (all %d levels: %.2f [%.2f, %.2f]) |", n, p, p - hw, p + hw);
                } else
                    fprintf(f, " n/e |");
            }
            series_fit(c, k, m, 1, 0, &fit, recs, err);
            fprintf(f, " ");
            for (int i = 0; i < k->nlev[1]; i++) {
                char e[32];
                if (isfinite(err[i]))
                    snprintf(e, sizeof e, "%.2g", err[i] / k->lev[1][i].x);
                else
                    snprintf(e, sizeof e, "%s", mbs_rec_ok(recs[i]) ? "-" : "failed");
                char x[32];
                num_text(k->lev[1][i].x, x, sizeof x);
                fprintf(f, "%s%s: %s", i ? "; " : "", x, e);
            }
            char runs[256];
            runs_text(recs, k->nlev[1], runs, sizeof runs);
            fprintf(f, " | %s |\n", runs);
        }
    }
    if (rows == 0)
        fprintf(f, "No adaptive method has runs at three or more common tolerances.\n");
    fprintf(f, "\n");
}

/* ---- digits at fixed cost ------------------------------------------------------------ */

/* Reference cost of column k: the geometric mean of f_evals over its ok runs
 * with an error. */
static double ref_cost(ctx *c, const tcol *k)
{
    double s = 0.0;
    int n = 0;
    for (size_t i = 0; i < c->r->n; i++) {
        json_t *o = c->r->recs[i];
        double fe = mbs_jnum(o, "counters.f_evals");
        if (rec_in(c, o, k->p, k->t_end, -1) && mbs_rec_ok(o) && fe > 0.0 &&
            mbs_rec_err(o, c->err, "q") > 0.0) {
            s += log(fe);
            n++;
        }
    }
    return n ? exp(s / n) : NAN;
}

/* -log10 err in q at the reference cost: interpolated (log-log) between the two
 * runs that bracket it; extrapolated from the two nearest when it lies within one
 * level (their cost ratio) outside the runs, and said so; otherwise the nearest
 * run's digits at its own cost. */
static void digits_cell(ctx *c, const tcol *k, int m, char *buf, size_t len, int tex)
{
    pt pts[256];
    int n = mbs_report_wp_points(c, k->p, m, k->t_end, "counters.f_evals", c->err, "q", pts);
    double cost = k->ref_cost;
    const char *dash = tex ? "--" : "—";
    if (n == 0 || !isfinite(cost)) {
        snprintf(buf, len, "%s", dash);
        return;
    }
    for (int i = 0; i < n; i++)
        if (pts[i].x == cost) {
            snprintf(buf, len, "%.1f (run %d)", -log10(pts[i].y), pts[i].run);
            return;
        }
    for (int i = 0; i + 1 < n; i++)
        if (pts[i].x < cost && cost < pts[i + 1].x) {
            double w = (log(cost) - log(pts[i].x)) / (log(pts[i + 1].x) - log(pts[i].x));
            snprintf(buf, len, "%.1f (runs %d, %d)",
                     -((1.0 - w) * log10(pts[i].y) + w * log10(pts[i + 1].y)), pts[i].run,
                     pts[i + 1].run);
            return;
        }
    /* outside the runs: the two nearest, a at the end, b next to it */
    int above = cost > pts[n - 1].x;
    const pt *a = above ? &pts[n - 1] : &pts[0], *b = n > 1 ? (above ? &pts[n - 2] : &pts[1]) : NULL;
    if (b && b->x != a->x && fabs(log(cost / a->x)) <= fabs(log(a->x / b->x))) {
        double w = (log(cost) - log(a->x)) / (log(b->x) - log(a->x));
        snprintf(buf, len, "%.1f extrap. (runs %d, %d)",
                 -((1.0 - w) * log10(a->y) + w * log10(b->y)), above ? b->run : a->run,
                 above ? a->run : b->run);
        return;
    }
    snprintf(buf, len, "%.1f at %.3g f (run %d)", -log10(a->y), a->x, a->run);
}

/* ---- drift ----------------------------------------------------------------------------- */

static json_t *drift_rec(ctx *c, const tcol *k, int m)
{
    for (int a = 0; a < 2; a++) {
        if (isnan(k->one[a].x))
            continue;
        json_t *o = find_rec(c, k->p, k->t_end, m, &k->one[a]);
        if (o && mbs_rec_ok(o) && isfinite(mbs_jnum(o, "drift_exponent")))
            return o;
    }
    return NULL;
}

static void drift_cell(ctx *c, const tcol *k, int m, char *buf, size_t len, int tex)
{
    json_t *o = drift_rec(c, k, m);
    if (!o)
        snprintf(buf, len, "%s", tex ? "--" : "—");
    else if (tex)
        snprintf(buf, len, "%.2f (rms %.2f; run %.0f)", mbs_jnum(o, "drift_exponent"),
                 mbs_jnum(o, "drift_rms"), mbs_jnum(o, "run"));
    else
        snprintf(buf, len, "%.2f (rms %.2f, g_max %.1e; run %.0f)", mbs_jnum(o, "drift_exponent"),
                 mbs_jnum(o, "drift_rms"), mbs_jnum(o, "residual.pos_max"), mbs_jnum(o, "run"));
}

/* ---- columns ---------------------------------------------------------------------------- */

static void cell(ctx *c, table_kind t, const tcol *k, int m, char *buf, size_t len, int tex)
{
    if (t == TABLE_ORDERS)
        order_cell(c, k, m, buf, len, tex);
    else if (t == TABLE_DIGITS)
        digits_cell(c, k, m, buf, len, tex);
    else
        drift_cell(c, k, m, buf, len, tex);
}

/* Does column k have a value for method m? */
static int has_value(ctx *c, table_kind t, const tcol *k, int m)
{
    if (t == TABLE_ORDERS)
        return covers(c, k->p, k->t_end, m, k->lev[0], k->nlev[0]) ||
               covers(c, k->p, k->t_end, m, k->lev[1], k->nlev[1]);
    if (t == TABLE_DRIFT)
        return drift_rec(c, k, m) != NULL;
    pt pts[256];
    return mbs_report_wp_points(c, k->p, m, k->t_end, "counters.f_evals", c->err, "q", pts) > 0;
}

void mbs_report_columns(ctx *c, table_kind t)
{
    c->ncol = 0;
    for (int p = 0; p < c->probs.n; p++) {
        double te[16];
        int nte = 0;
        for (size_t i = 0; i < c->r->n; i++) {
            json_t *o = c->r->recs[i];
            double x = mbs_jnum(o, "t_end");
            int seen = 0;
            for (int j = 0; j < nte; j++)
                seen |= same_x(te[j], x);
            if (!seen && nte < 16 && rec_in(c, o, p, x, -1))
                te[nte++] = x;
        }
        for (int i = 1; i < nte; i++) /* increasing t_end */
            for (int j = i; j > 0 && te[j - 1] > te[j]; j--) {
                double x = te[j];
                te[j] = te[j - 1];
                te[j - 1] = x;
            }
        int first = c->ncol;
        for (int j = 0; j < nte && c->ncol < MAXCOL; j++) {
            tcol *k = &c->cols[c->ncol];
            memset(k, 0, sizeof *k);
            k->p = p;
            k->t_end = te[j];
            for (int a = 0; a < 2; a++) {
                k->one[a] = (setting){.adaptive = a, .x = NAN, .atol = NAN};
                if (t == TABLE_ORDERS)
                    k->nlev[a] = common_levels(c, p, te[j], a, k->lev[a]);
                else if (t == TABLE_DRIFT)
                    k->one[a] = common_drift(c, p, te[j], a);
            }
            k->ref_cost = t == TABLE_DIGITS ? ref_cost(c, k) : NAN;
            int n = 0, interp = 0;
            for (int m = 0; m < c->meths.n; m++) {
                n += has_value(c, t, k, m);
                pt pts[256];
                interp |= t == TABLE_DIGITS &&
                          mbs_report_wp_points(c, p, m, te[j], "counters.f_evals", c->err, "q",
                                               pts) >= 2;
            }
            if (n > 0 && (t != TABLE_DIGITS || interp))
                c->ncol++;
        }
        for (int j = first; j < c->ncol; j++)
            c->cols[j].multi = c->ncol - first > 1;
    }
}

static void col_title(ctx *c, const tcol *k, char *buf, size_t len)
{
    if (k->multi)
        snprintf(buf, len, "%s, t_end %g", c->probs.s[k->p], k->t_end);
    else
        snprintf(buf, len, "%s", c->probs.s[k->p]);
}

void mbs_report_runs_compared(ctx *c, FILE *f, table_kind t)
{
    if (c->ncol == 0)
        return;
    fprintf(f, "Runs compared (one common set per column; each cell names its runs, the "
               "`run` index of runs.jsonl):\n\n");
    for (int j = 0; j < c->ncol; j++) {
        const tcol *k = &c->cols[j];
        fprintf(f, "- %s: t_end = %g", c->probs.s[k->p], k->t_end);
        for (int a = 0; a < 2; a++) {
            char s[96];
            if (t == TABLE_ORDERS && k->nlev[a] > 0) {
                fprintf(f, "; %s =", a ? "tol" : "h");
                for (int i = 0; i < k->nlev[a]; i++) {
                    setting_text(&k->lev[a][i], s, sizeof s);
                    fprintf(f, "%s %s", i ? "," : "", s + (a ? 4 : 2));
                }
            } else if (t == TABLE_DRIFT && isfinite(k->one[a].x)) {
                setting_text(&k->one[a], s, sizeof s);
                fprintf(f, "; %s", s);
            }
        }
        if (t == TABLE_DIGITS)
            fprintf(f, "; reference cost %.0f force evaluations", k->ref_cost);
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}

static void tex_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (strchr("_&%$#{}", *s))
            fprintf(f, "\\%c", *s);
        else if (*s == '~' || *s == '^' || *s == '\\')
            fprintf(f, "\\textasciitilde{}");
        else
            fputc(*s, f);
    }
}

void mbs_report_md_table(ctx *c, FILE *f, table_kind t)
{
    if (c->ncol == 0) {
        fprintf(f, "No values.\n\n");
        return;
    }
    fprintf(f, "| method |");
    for (int j = 0; j < c->ncol; j++) {
        char title[600];
        col_title(c, &c->cols[j], title, sizeof title);
        fprintf(f, " %s |", title);
    }
    fprintf(f, "\n|---|");
    for (int j = 0; j < c->ncol; j++)
        fprintf(f, "---|");
    fprintf(f, "\n");
    for (int m = 0; m < c->meths.n; m++) {
        fprintf(f, "| `%s` |", c->meths.s[m]);
        for (int j = 0; j < c->ncol; j++) {
            char buf[512];
            cell(c, t, &c->cols[j], m, buf, sizeof buf, 0);
            fprintf(f, " %s |", buf);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}

void mbs_report_tex_table(ctx *c, FILE *f, table_kind t, const char *caption, const char *label)
{
    fprintf(f, "\\begin{table}\n\\centering\n\\caption{");
    tex_escape(f, caption);
    fprintf(f, "}\n\\label{%s}\n\\begin{tabular}{l", label);
    for (int j = 0; j < c->ncol; j++)
        fprintf(f, "l");
    fprintf(f, "}\n\\toprule\nmethod");
    for (int j = 0; j < c->ncol; j++) {
        char title[600];
        col_title(c, &c->cols[j], title, sizeof title);
        fprintf(f, " & ");
        tex_escape(f, title);
    }
    fprintf(f, " \\\\\n\\midrule\n");
    for (int m = 0; m < c->meths.n; m++) {
        fprintf(f, "\\texttt{");
        tex_escape(f, c->meths.s[m]);
        fprintf(f, "}");
        for (int j = 0; j < c->ncol; j++) {
            char buf[512];
            cell(c, t, &c->cols[j], m, buf, sizeof buf, 1);
            fprintf(f, " & %s", buf);
        }
        fprintf(f, " \\\\\n");
    }
    fprintf(f, "\\bottomrule\n\\end{tabular}\n\\end{table}\n\n");
}

void mbs_report_failures(ctx *c, FILE *md, FILE *tex)
{
    int n = 0;
    for (size_t i = 0; i < c->r->n; i++)
        n += !mbs_rec_ok(c->r->recs[i]);
    fprintf(md, "## Failures\n\n");
    if (n == 0) {
        fprintf(md, "None: all %zu runs ok.\n\n", c->r->n);
    } else {
        fprintf(md, "%d of %zu runs failed.\n\n| problem | method | h / tol | status | t | reason |\n"
                    "|---|---|---|---|---|---|\n",
                n, c->r->n);
    }
    if (tex && n) {
        fprintf(tex, "\\begin{table}\n\\centering\n\\caption{Failed runs}\n\\label{tab:failures}\n"
                     "\\begin{tabular}{lllllp{6cm}}\n\\toprule\nproblem & method & $h$ / tol & "
                     "status & $t$ & reason \\\\\n\\midrule\n");
    }
    for (size_t i = 0; i < c->r->n; i++) {
        json_t *o = c->r->recs[i];
        if (mbs_rec_ok(o))
            continue;
        double h = mbs_jnum(o, "h");
        char step[48];
        snprintf(step, sizeof step, "%s=%g", isfinite(h) ? "h" : "tol",
                 isfinite(h) ? h : mbs_jnum(o, "tol"));
        fprintf(md, "| %s | `%s` | %s | %s | %g | %s |\n", mbs_jstr(o, "problem_spec"),
                mbs_jstr(o, "method_spec"), step, mbs_jstr(o, "status"), mbs_jnum(o, "fail_t"),
                mbs_jstr(o, "reason"));
        if (tex) {
            const char *cells[] = {mbs_jstr(o, "problem_spec"), mbs_jstr(o, "method_spec"), step,
                                   mbs_jstr(o, "status")};
            for (int k = 0; k < 4; k++) {
                tex_escape(tex, cells[k]);
                fprintf(tex, " & ");
            }
            fprintf(tex, "%g & ", mbs_jnum(o, "fail_t"));
            tex_escape(tex, mbs_jstr(o, "reason"));
            fprintf(tex, " \\\\\n");
        }
    }
    fprintf(md, "\n");
    if (tex && n)
        fprintf(tex, "\\bottomrule\n\\end{tabular}\n\\end{table}\n");
}

void mbs_report_environment(ctx *c, FILE *md)
{
    fprintf(md, "## Appendix: environment\n\n");
    if (!c->r->meta) {
        fprintf(md, "No meta.json in the results directory.\n");
        return;
    }
    const char *k;
    json_t *v, *from = json_object_get(c->r->meta, "merged_from");
    if (json_is_array(from)) { /* merged shards: each ran on its own node */
        size_t i;
        fprintf(md, "Merged from %zu directories (`mbsbench merge`); each record's `node` names "
                    "the host it ran on.\n\n| directory | shard | host | cpu | cores | "
                    "calibration [s] | runs |\n|---|---|---|---|---|---|---|\n",
                json_array_size(from));
        json_array_foreach(from, i, v)
        {
            fprintf(md, "| %s | %s | %s | %s | %.0f | %.4g | %.0f |\n", mbs_jstr(v, "dir"),
                    mbs_jstr(v, "shard"), mbs_jstr(v, "host"), mbs_jstr(v, "cpu"),
                    mbs_jnum(v, "cores"), mbs_jnum(v, "calibration_s"), mbs_jnum(v, "runs"));
        }
        fprintf(md, "\n");
    }
    fprintf(md, "| key | value |\n|---|---|\n");
    json_object_foreach(c->r->meta, k, v)
    {
        if (strcmp(k, "merged_from") == 0)
            continue;
        char *s = json_is_string(v) ? NULL : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        fprintf(md, "| %s | %s |\n", k, s ? s : json_string_value(v));
        free(s);
    }
    fprintf(md, "\n");
}

