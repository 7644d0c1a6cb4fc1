/* Reports (harness/report.h). */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brief.h"
#include "cli.h"
#include "html.h"
#include "io.h"
#include "results.h"
#include "report_impl.h"

const char *const mbs_report_groups[3] = {"q", "v", "lambda"};
const char *const mbs_report_group_tex[3] = {"q", "v", "\\lambda"};
const char *const mbs_report_group_gp[3] = {"q", "v", "{/Symbol l}"};

int mbs_report_name_index(names *v, const char *s, int add)
{
    for (int i = 0; i < v->n; i++)
        if (strcmp(v->s[i], s) == 0)
            return i;
    if (!add || v->n == MAXN)
        return -1;
    snprintf(v->s[v->n], sizeof v->s[0], "%.511s", s);
    return v->n++;
}

/* ---- helpers -------------------------------------------------------------------- */

/* Text for a single-quoted gnuplot string in enhanced mode: the characters
 * enhanced text reads as markup (_ ^ @ & ~ { }) are escaped with a backslash,
 * so names print as they are while t_{end} in the surrounding text renders as a
 * subscript; a single quote is doubled. */
static const char *gp_text(const char *s, char *buf, size_t len)
{
    size_t u = 0;
    for (; *s && u + 3 < len; s++) {
        if (strchr("_^@&~{}", *s))
            buf[u++] = '\\';
        else if (*s == '\'')
            buf[u++] = '\'';
        buf[u++] = *s;
    }
    buf[u] = '\0';
    return buf;
}

static int by_x(const void *a, const void *b)
{
    double x = ((const pt *)a)->x, y = ((const pt *)b)->x;
    return (x > y) - (x < y);
}

static void layout(int n, int *rows, int *cols)
{
    *cols = n < 2 ? n : 2;
    if (*cols < 1)
        *cols = 1;
    *rows = (n + *cols - 1) / *cols;
    if (*rows < 1)
        *rows = 1;
}

/* Emit the figure `body` (gnuplot commands) to the script twice: PNG and SVG. */
static void figure(ctx *c, const char *stem, const char *caption, const char *body, int rows,
                   int cols)
{
    int w = 760 * cols, h = 480 * rows;
    fprintf(c->gp, "set terminal pngcairo enhanced size %d,%d font 'DejaVu Sans,10'\n", w, h);
    fprintf(c->gp, "set output '%s.png'\n%s\nunset multiplot\n", stem, body);
    fprintf(c->gp, "set terminal svg enhanced size %d,%d font 'DejaVu Sans,10'\n", w, h);
    fprintf(c->gp, "set output '%s.svg'\n%s\nunset multiplot\nreset\n", stem, body);
    if (c->n_plots < 96) {
        snprintf(c->plots[c->n_plots], sizeof c->plots[0], "%s", stem);
        snprintf(c->captions[c->n_plots], sizeof c->captions[0], "%s", caption);
        c->n_plots++;
    }
}

static FILE *data_file(ctx *c, const char *name)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/data/%s", c->out, name);
    return fopen(path, "w");
}

/* The points (cost, error of group) of one problem/method over its ok runs
 * (at t_end, or every t_end when NaN), sorted by cost. */
int mbs_report_wp_points(ctx *c, int p, int m, double t_end, const char *cost, mbs_err_kind k,
                         const char *group, pt *out)
{
    int n = 0;
    for (size_t i = 0; i < c->r->n && n < 256; i++) {
        json_t *o = c->r->recs[i];
        if (!mbs_rec_ok(o) || strcmp(mbs_jstr(o, "problem_spec"), c->probs.s[p]) ||
            strcmp(mbs_jstr(o, "method_spec"), c->meths.s[m]) ||
            (!isnan(t_end) && mbs_jnum(o, "t_end") != t_end))
            continue;
        double x = mbs_jnum(o, cost), y = mbs_rec_err(o, k, group);
        if (x > 0.0 && y > 0.0 && isfinite(x) && isfinite(y))
            out[n++] = (pt){x, y, (int)mbs_jnum(o, "run")};
    }
    qsort(out, (size_t)n, sizeof *out, by_x);
    return n;
}

/* Distinct t_end values of problem p's runs (of method m when m >= 0). */
static int t_ends(ctx *c, int p, int m, double *out, int max)
{
    int n = 0;
    for (size_t i = 0; i < c->r->n; i++) {
        json_t *o = c->r->recs[i];
        if (strcmp(mbs_jstr(o, "problem_spec"), c->probs.s[p]) ||
            (m >= 0 && strcmp(mbs_jstr(o, "method_spec"), c->meths.s[m])))
            continue;
        double t = mbs_jnum(o, "t_end");
        int seen = 0;
        for (int k = 0; k < n; k++)
            seen |= out[k] == t;
        if (!seen && n < max)
            out[n++] = t;
    }
    return n;
}

/* ---- work-precision ------------------------------------------------------------- */

/* Okabe-Ito colour-blind-safe palette; curve k of a panel: colour k, marker k. */
static const char *const palette[8] = {"#E69F00", "#56B4E9", "#009E73", "#0072B2",
                                       "#D55E00", "#CC79A7", "#000000", "#F0E442"};
enum { CURVES_PER_PANEL = 8, MAX_PANELS = 96 };

typedef struct wp_panel {
    int p;                        /* problem */
    double t_end;
    int m[CURVES_PER_PANEL], nm;  /* methods drawn in it */
    int part, parts;
} wp_panel;

/* Panels of at most 8 curves: one per problem and t_end, split in parts in
 * method order (methods are listed formulation family by family). */
static int wp_panels(ctx *c, const char *cost, mbs_err_kind ek, int g, wp_panel *out)
{
    pt pts[256];
    int n = 0;
    for (int p = 0; p < c->probs.n; p++) {
        double te[16];
        int nte = t_ends(c, p, -1, te, 16);
        for (int k = 0; k < nte; k++) {
            int first = n;
            /* distinct points of the panel being filled (up to 2: a panel needs
             * two; a single point, or methods on one point, is not drawn) */
            pt seen[2];
            int distinct = 0;
            for (int m = 0; m < c->meths.n; m++) {
                int np = mbs_report_wp_points(c, p, m, te[k], cost, ek, mbs_report_groups[g], pts);
                if (np == 0)
                    continue;
                if (n == first || out[n - 1].nm == CURVES_PER_PANEL) {
                    if (n > first && distinct < 2)
                        n--;
                    if (n == MAX_PANELS)
                        return n;
                    out[n++] = (wp_panel){.p = p, .t_end = te[k]};
                    distinct = 0;
                }
                out[n - 1].m[out[n - 1].nm++] = m;
                for (int j = 0; j < np && distinct < 2; j++) /* apart by 0.1% on the plot */
                    if (distinct == 0 || fabs(pts[j].x - seen[0].x) > 1e-3 * seen[0].x ||
                        fabs(pts[j].y - seen[0].y) > 1e-3 * seen[0].y)
                        seen[distinct++] = pts[j];
            }
            if (n > first && distinct < 2)
                n--;
            for (int i = first; i < n; i++) {
                out[i].part = i - first + 1;
                out[i].parts = n - first;
            }
        }
    }
    return n;
}

static void work_precision(ctx *c, const char *cost, const char *cost_label, mbs_err_kind ek,
                           int g)
{
    pt pts[256];
    wp_panel *pan = malloc(MAX_PANELS * sizeof *pan);
    char *body = NULL;
    size_t blen = 0;
    FILE *b = pan ? open_memstream(&body, &blen) : NULL;
    if (!b) {
        free(pan);
        return;
    }
    int panels = wp_panels(c, cost, ek, g, pan);
    if (panels == 0) {
        fclose(b);
        free(body);
        free(pan);
        return;
    }
    int rows, cols;
    layout(panels, &rows, &cols);
    char stem[96], dname[160];
    snprintf(stem, sizeof stem, "wp-%s-%s%s%s", strcmp(cost, "cpu.median") ? "fevals" : "cpu",
             mbs_report_groups[g], ek == MBS_ERR_TRAJ ? "-" : "",
             ek == MBS_ERR_TRAJ ? "traj" : ""); /* wp-fevals-q or wp-fevals-q-traj */
    fprintf(b, "set multiplot layout %d,%d\nset logscale xy\nset grid\n", rows, cols);
    fprintf(b, "set format x '10^{%%L}'\nset format y '10^{%%L}'\n");
    fprintf(b, "set key outside right top vertical font ',8'\n");
    if (ek == MBS_ERR_TRAJ)
        fprintf(b, "set xlabel '%s'\nset ylabel 'mixed error in %s along the trajectory (max)'\n",
                cost_label, mbs_report_group_gp[g]);
    else
        fprintf(b, "set xlabel '%s'\nset ylabel 'error in %s at t_{end} (max-norm)'\n",
                cost_label, mbs_report_group_gp[g]);
    for (int k = 0; k < panels; k++) {
        const wp_panel *w = &pan[k];
        snprintf(dname, sizeof dname, "%s-%d.dat", stem, k);
        FILE *d = data_file(c, dname);
        if (!d)
            continue;
        char part[32] = "", name[1100], text[1100];
        if (w->parts > 1)
            snprintf(part, sizeof part, " (%d/%d)", w->part, w->parts);
        /* all points at one cost (or one error): a range around it, not gnuplot's
         * "empty x range" */
        double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
        for (int i = 0; i < w->nm; i++) {
            int n = mbs_report_wp_points(c, w->p, w->m[i], w->t_end, cost, ek,
                                         mbs_report_groups[g], pts);
            for (int j = 0; j < n; j++) {
                xlo = fmin(xlo, pts[j].x), xhi = fmax(xhi, pts[j].x);
                ylo = fmin(ylo, pts[j].y), yhi = fmax(yhi, pts[j].y);
            }
        }
        fprintf(b, "set autoscale xy\n");
        if (xlo == xhi)
            fprintf(b, "set xrange [%.8e:%.8e]\n", xlo / 2.0, xhi * 2.0);
        if (ylo == yhi)
            fprintf(b, "set yrange [%.8e:%.8e]\n", ylo / 2.0, yhi * 2.0);
        fprintf(b, "set title '%s, t_{end} = %g s%s'\nplot ",
                gp_text(c->probs.s[w->p], name, sizeof name), w->t_end, part);
        for (int i = 0; i < w->nm; i++) {
            int n = mbs_report_wp_points(c, w->p, w->m[i], w->t_end, cost, ek,
                                         mbs_report_groups[g], pts);
            fprintf(d, "# %s\n", c->meths.s[w->m[i]]);
            for (int j = 0; j < n; j++)
                fprintf(d, "%.8e %.8e\n", pts[j].x, pts[j].y);
            fprintf(d, "\n\n");
            fprintf(b, "%s'data/%s' index %d with linespoints lw 2 pt %d ps 1.2 lc rgb '%s' "
                       "title '%s'",
                    i ? ", \\\n     " : "", dname, i, 1 + i, palette[i],
                    gp_text(c->meths.s[w->m[i]], text, sizeof text));
        }
        fprintf(b, "\n");
        fclose(d);
    }
    fclose(b);
    char cap[256];
    snprintf(cap, sizeof cap, "Work-precision: %s in %s against %s; one panel per problem and "
                              "t_end, at most 8 methods each.",
             ek == MBS_ERR_TRAJ ? "mixed error along the trajectory (max over the grid)"
                                : "error at t_end",
             mbs_report_groups[g], cost_label);
    figure(c, stem, cap, body, rows, cols);
    free(body);
    free(pan);
}

/* ---- convergence ---------------------------------------------------------------- */

/* Series of fixed-step runs of problem p with at least 2 usable levels: their
 * count (o_want NULL), or 1 when the record o_want starts series number want. */
static int conv_series(ctx *c, int p, const char *f, json_t *o_want, int want)
{
    names seen = {.n = 0};
    int count = 0;
    for (size_t i = 0; i < c->r->n; i++) {
        json_t *o = c->r->recs[i];
        if (strcmp(mbs_jstr(o, "problem_spec"), c->probs.s[p]) || !isfinite(mbs_jnum(o, "h")))
            continue;
        char k1[1200], k2[1200];
        mbs_rec_series_key(o, k1, sizeof k1);
        if (mbs_report_name_index(&seen, k1, 0) >= 0 || mbs_report_name_index(&seen, k1, 1) < 0)
            continue;
        int n = 0;
        for (size_t j = 0; j < c->r->n; j++) {
            mbs_rec_series_key(c->r->recs[j], k2, sizeof k2);
            n += !strcmp(k1, k2) && mbs_rec_ok(c->r->recs[j]) &&
                 mbs_jnum(c->r->recs[j], "h") > 0.0 && mbs_jnum(c->r->recs[j], f) > 0.0;
        }
        if (n < 2)
            continue;
        if (o_want == o)
            return count == want;
        count++;
    }
    return o_want ? 0 : count;
}

/* Series (method_spec + t_end) of fixed-step runs of problem p: one curve each. */
static void convergence(ctx *c, int g)
{
    char *body = NULL;
    size_t blen = 0;
    FILE *b = open_memstream(&body, &blen);
    if (!b)
        return;
    char f[32];
    snprintf(f, sizeof f, "err.%s", mbs_report_groups[g]);
    /* panels: (problem, chunk of at most 8 series) */
    int panels = 0, pidx[MAX_PANELS], pchunk[MAX_PANELS];
    for (int p = 0; p < c->probs.n && panels < MAX_PANELS; p++) {
        int nser = conv_series(c, p, f, NULL, 0);
        for (int k = 0; k * CURVES_PER_PANEL < nser && panels < MAX_PANELS; k++) {
            pidx[panels] = p;
            pchunk[panels++] = k;
        }
    }
    if (panels == 0) {
        fclose(b);
        free(body);
        return;
    }
    int rows, cols;
    layout(panels, &rows, &cols);
    char stem[96], dname[128];
    snprintf(stem, sizeof stem, "conv-%s", mbs_report_groups[g]);
    fprintf(b, "set multiplot layout %d,%d\nset logscale xy\nset grid\n", rows, cols);
    fprintf(b, "set format x '10^{%%L}'\nset format y '10^{%%L}'\n");
    fprintf(b, "set key outside right top vertical font ',8'\n");
    fprintf(b, "set xlabel 'step size h [s]'\nset ylabel 'error in %s at t_{end} (max-norm)'\n",
            mbs_report_group_gp[g]);
    for (int k = 0; k < panels; k++) {
        int p = pidx[k], chunk = pchunk[k], si = -1;
        int nchunks = (conv_series(c, p, f, NULL, 0) + CURVES_PER_PANEL - 1) / CURVES_PER_PANEL;
        snprintf(dname, sizeof dname, "%s-%d.dat", stem, k);
        FILE *d = data_file(c, dname);
        if (!d)
            continue;
        char part[32] = "";
        if (nchunks > 1)
            snprintf(part, sizeof part, " (%d/%d)", chunk + 1, nchunks);
        char name[1100];
        fprintf(b, "set title '%s%s'\nplot ", gp_text(c->probs.s[p], name, sizeof name), part);
        names series = {.n = 0};
        int blk = 0;
        for (size_t i = 0; i < c->r->n; i++) {
            json_t *o = c->r->recs[i];
            if (strcmp(mbs_jstr(o, "problem_spec"), c->probs.s[p]) || !isfinite(mbs_jnum(o, "h")))
                continue;
            char key[1200];
            mbs_rec_series_key(o, key, sizeof key);
            if (mbs_report_name_index(&series, key, 0) >= 0 || mbs_report_name_index(&series, key, 1) < 0)
                continue;
            /* the points of this series */
            pt pts[256];
            int n = 0;
            for (size_t j = 0; j < c->r->n && n < 256; j++) {
                char k2[1200];
                mbs_rec_series_key(c->r->recs[j], k2, sizeof k2);
                double h = mbs_jnum(c->r->recs[j], "h"), e = mbs_jnum(c->r->recs[j], f);
                if (!strcmp(k2, key) && mbs_rec_ok(c->r->recs[j]) && h > 0.0 && e > 0.0)
                    pts[n++] = (pt){h, e, (int)mbs_jnum(c->r->recs[j], "run")};
            }
            if (n < 2)
                continue;
            si++;
            if (si / CURVES_PER_PANEL != chunk)
                continue;
            int col = si % CURVES_PER_PANEL;
            qsort(pts, (size_t)n, sizeof *pts, by_x);
            mbs_order_fit fit;
            size_t nl;
            char label[1400];
            int have_fit = mbs_results_order(c->r, o, mbs_report_groups[g], &fit, &nl) == 0 && fit.established;
            char ms[1100];
            gp_text(mbs_jstr(o, "method_spec"), ms, sizeof ms);
            char tend[48] = ""; /* as the titles of the work-precision panels say it */
            double te[16];
            if (t_ends(c, p, -1, te, 16) > 1)
                snprintf(tend, sizeof tend, ", t_{end} = %g s", mbs_jnum(o, "t_end"));
            if (have_fit)
                snprintf(label, sizeof label, "%s%s: p = %.2f [%.2f, %.2f]", ms, tend, fit.p,
                         fit.ci_low, fit.ci_high);
            else
                snprintf(label, sizeof label, "%s%s: order not established", ms, tend);
            fprintf(d, "# %s\n", label);
            for (int i2 = 0; i2 < n; i2++)
                fprintf(d, "%.8e %.8e\n", pts[i2].x, pts[i2].y);
            fprintf(d, "\n\n");
            fprintf(b, "%s'data/%s' index %d with points pt %d ps 1.3 lc rgb '%s' title '%s'",
                    blk ? ", \\\n     " : "", dname, blk, 1 + col, palette[col], label);
            blk++;
            if (have_fit) {
                /* fitted line C h^p over the window (log C: mean of log e - p log h) */
                double lc = 0.0, hmin = INFINITY, hmax = 0.0;
                int nw = 0;
                for (int i2 = 0; i2 < n; i2++) {
                    lc += log(pts[i2].y) - fit.p * log(pts[i2].x);
                    nw++;
                    hmin = fmin(hmin, pts[i2].x);
                    hmax = fmax(hmax, pts[i2].x);
                }
                /* restrict to the fit window when it is known */
                size_t lo = fit.first, hi = fit.last;
                if (hi < (size_t)n && lo <= hi && nl == (size_t)n) {
                    lc = 0.0;
                    nw = 0;
                    hmin = INFINITY;
                    hmax = 0.0;
                    /* the fit's levels are ordered by decreasing h */
                    for (size_t w = lo; w <= hi; w++) {
                        const pt *q = &pts[(size_t)n - 1 - w];
                        lc += log(q->y) - fit.p * log(q->x);
                        nw++;
                        hmin = fmin(hmin, q->x);
                        hmax = fmax(hmax, q->x);
                    }
                }
                lc /= nw;
                fprintf(d, "%.8e %.8e\n%.8e %.8e\n\n\n", hmin, exp(lc) * pow(hmin, fit.p), hmax,
                        exp(lc) * pow(hmax, fit.p));
                fprintf(b, ", \\\n     'data/%s' index %d with lines lw 2 dt 2 lc rgb '%s' notitle",
                        dname, blk++, palette[col]);
            }
        }
        if (blk == 0)
            fprintf(b, "NaN notitle");
        fprintf(b, "\n");
        fclose(d);
    }
    fclose(b);
    char cap[256];
    snprintf(cap, sizeof cap, "Convergence: error in %s at t_end against h; dashed: least-squares "
                              "fit over the asymptotic window, order p with its 95%% CI.",
             mbs_report_groups[g]);
    figure(c, stem, cap, body, rows, cols);
    free(body);
}

/* ---- drift ---------------------------------------------------------------------- */

static void drift(ctx *c, const char *results_dir)
{
    for (int p = 0; p < c->probs.n; p++) {
        char *body = NULL;
        size_t blen = 0;
        FILE *b = open_memstream(&body, &blen);
        if (!b)
            return;
        static const char *const ylab[] = {"|g(q)| (max-norm)", "|B v + g_t| (max-norm)",
                                           "|E - E_0| / |E_0|"};
        int n_series = 0;
        char plots[3][8192] = {"", "", ""};
        /* the runs with the longest interval (the drift study), at most 8 */
        double t_max = -INFINITY;
        for (size_t i = 0; i < c->r->n; i++)
            if (!strcmp(mbs_jstr(c->r->recs[i], "problem_spec"), c->probs.s[p]))
                t_max = fmax(t_max, mbs_jnum(c->r->recs[i], "t_end"));
        for (size_t i = 0; i < c->r->n && n_series < CURVES_PER_PANEL; i++) {
            json_t *o = c->r->recs[i];
            if (strcmp(mbs_jstr(o, "problem_spec"), c->probs.s[p]) ||
                mbs_jnum(o, "t_end") != t_max)
                continue;
            /* copied into data/ so that the report directory stands alone */
            char src[4400], name[64], path[128];
            snprintf(src, sizeof src, "%s/series/run-%.0f.tsv", results_dir, mbs_jnum(o, "run"));
            snprintf(name, sizeof name, "series-run-%.0f.tsv", mbs_jnum(o, "run"));
            snprintf(path, sizeof path, "data/%s", name);
            char *text = mbs_read_file(src, NULL);
            FILE *t = text ? data_file(c, name) : NULL;
            if (t)
                fputs(text, t);
            /* columns 2..4 with a positive value somewhere (a log plot of a
             * column that is zero throughout has no point: gnuplot stops) */
            int positive[3] = {0, 0, 0};
            for (const char *l = text; t && l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
                double col[4];
                if (*l != '#' &&
                    sscanf(l, "%lf %lf %lf %lf", &col[0], &col[1], &col[2], &col[3]) == 4)
                    for (int q = 0; q < 3; q++)
                        positive[q] |= col[q + 1] > 0.0;
            }
            free(text);
            if (!t)
                continue;
            fclose(t);
            double h = mbs_jnum(o, "h"), k = mbs_jnum(o, "drift_exponent");
            char label[1400], kk[32];
            if (isfinite(k))
                snprintf(kk, sizeof kk, "k = %.2f", k);
            else
                snprintf(kk, sizeof kk, "k n/a");
            char ms[1100];
            snprintf(label, sizeof label, "%s %s=%g: %s",
                     gp_text(mbs_jstr(o, "method_spec"), ms, sizeof ms), isfinite(h) ? "h" : "tol",
                     isfinite(h) ? h : mbs_jnum(o, "tol"), kk);
            for (int q = 0; q < 3; q++) {
                if (!positive[q])
                    continue;
                size_t u = strlen(plots[q]);
                snprintf(plots[q] + u, sizeof plots[q] - u,
                         "%s'%s' using ($1 - %.17g):($%d > 0 ? $%d : 1/0) with lines lw 2 "
                         "lc rgb '%s' dt %d title '%s'",
                         u ? ", \\\n     " : "", path, mbs_jnum(o, "t0"), q + 2, q + 2,
                         palette[n_series], 1 + n_series % 4, label);
            }
            n_series++;
        }
        if (n_series == 0) {
            fclose(b);
            free(body);
            continue;
        }
        char name[1100];
        fprintf(b, "set multiplot layout 1,3 title '%s: drift-off (k: fit of |g| ~ t^k), "
                   "t_{end} = %g s'\nset logscale xy\nset grid\nset format x '10^{%%L}'\n"
                   "set format y '10^{%%L}'\nset key below font ',8'\n"
                   "set xlabel 't - t_0 [s]'\n",
                gp_text(c->probs.s[p], name, sizeof name), t_max);
        for (int q = 0; q < 3; q++) {
            if (plots[q][0])
                fprintf(b, "set ylabel '%s'\nplot %s\n", ylab[q], plots[q]);
            else /* exactly zero throughout: say so instead of an empty log plot */
                fprintf(b, "set ylabel '%s'\nunset logscale\nset label 9 'zero throughout "
                           "(held exactly)' at graph 0.5,0.5 center\nplot [0:1][0:1] -1 "
                           "notitle\nunset label 9\nset logscale xy\n",
                        ylab[q]);
        }
        fclose(b);
        char stem[96], cap[256];
        snprintf(stem, sizeof stem, "drift-p%d", p);
        snprintf(cap, sizeof cap, "Drift on %s: residuals of position and velocity constraints "
                                  "and relative energy error against t (bin maxima).",
                 c->probs.s[p]);
        figure(c, stem, cap, body, 2, 3); /* 1 x 3 panels, tall for the legend below */
        free(body);
    }
}

int mbs_report(const char *results_dir, const char *out_dir, int latex, mbs_err_kind ek)
{
    mbs_results r;
    char err[1024], path[4400];
    if (mbs_results_load(results_dir, &r, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    ctx *c = calloc(1, sizeof *c);
    snprintf(path, sizeof path, "%s/data", out_dir);
    if (!c || mbs_mkdir_p(path) != 0) {
        fprintf(stderr, "mbsbench: cannot create %s\n", path);
        free(c);
        mbs_results_free(&r);
        return 2;
    }
    c->r = &r;
    c->out = out_dir;
    c->err = ek;
    int have_traj = mbs_results_have_traj(&r);
    if (ek == MBS_ERR_TRAJ && !have_traj) {
        fprintf(stderr, "mbsbench: report: --error traj: no record in %s has trajectory errors "
                        "(field traj)\n", results_dir);
        free(c);
        mbs_results_free(&r);
        return 2;
    }
    for (size_t i = 0; i < r.n; i++) {
        mbs_report_name_index(&c->probs, mbs_jstr(r.recs[i], "problem_spec"), 1);
        mbs_report_name_index(&c->meths, mbs_jstr(r.recs[i], "method_spec"), 1);
    }
    snprintf(path, sizeof path, "%s/report.gp", out_dir);
    c->gp = fopen(path, "w");
    if (!c->gp) {
        fprintf(stderr, "mbsbench: cannot write %s\n", path);
        free(c);
        mbs_results_free(&r);
        return 2;
    }
    fprintf(c->gp, "# generated by mbsbench report from %s; run in this directory\n",
            results_dir);
    /* both errors: the one of the tables first, the other when measured */
    for (int k = 0; k < 2; k++) {
        mbs_err_kind e = k == 0 ? ek : (mbs_err_kind)(1 - ek);
        if (e == MBS_ERR_TRAJ && !have_traj)
            continue;
        for (int g = 0; g < 3; g++) {
            work_precision(c, "cpu.median", "CPU time [s] (median over repeats)", e, g);
            work_precision(c, "counters.f_evals", "force evaluations", e, g);
        }
    }
    for (int g = 0; g < 3; g++)
        convergence(c, g);
    drift(c, results_dir);
    fclose(c->gp);
    int st = 0;
    if (c->n_plots > 0) {
        char cmd[9000];
        snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot report.gp > gnuplot.log 2>&1", out_dir);
        if (system(cmd) != 0) {
            fprintf(stderr, "mbsbench: gnuplot failed (see %s/gnuplot.log)\n", out_dir);
            st = 2;
        }
    }
    snprintf(path, sizeof path, "%s/index.md", out_dir);
    FILE *md = fopen(path, "w");
    FILE *tex = NULL;
    if (latex) {
        snprintf(path, sizeof path, "%s/tables.tex", out_dir);
        tex = fopen(path, "w");
    }
    if (!md || (latex && !tex)) {
        fprintf(stderr, "mbsbench: cannot write the report in %s\n", out_dir);
        if (md)
            fclose(md);
        if (tex)
            fclose(tex);
        free(c);
        mbs_results_free(&r);
        return 2;
    }
    int nfail = 0;
    for (size_t i = 0; i < r.n; i++)
        nfail += !mbs_rec_ok(r.recs[i]);
    fprintf(md, "# mbsbench report: %s\n\nResults: `%s` (suite `%s`, %s); %zu runs, %d failed; "
                "%d problems, %d methods.\n\n",
            r.meta ? mbs_jstr(r.meta, "suite") : "?", results_dir,
            r.meta ? mbs_jstr(r.meta, "suite_path") : "?", r.meta ? mbs_jstr(r.meta, "date") : "?",
            r.n, nfail, c->probs.n, c->meths.n);
    if (r.meta && mbs_jnum(r.meta, "environments") > 1.0)
        fprintf(md, "**CPU times come from %.0f different environments** (merged shards, see "
                    "the appendix): compare CPU times only between runs of one machine; errors, "
                    "orders and counters do not depend on the machine.\n\n",
                mbs_jnum(r.meta, "environments"));
    const char *errname = ek == MBS_ERR_TRAJ ? "the mixed error along the trajectory (max over "
                                                "the output grid, traj.err_max)"
                                              : "the error at t_end (max-norm, err)";
    fprintf(md, "Every table below compares identical runs: a column is one problem at one "
                "t_end, every cell in it comes from the same runs (the same h or tolerance, or "
                "the same levels of them), and each cell names its runs by their index in "
                "runs.jsonl.  Errors: %s%s.\n\n",
            errname, have_traj ? "; the work-precision figures show both errors" : "");
    fprintf(md, "## Observed orders\n\nFixed-step methods: least-squares slope of log err "
                "against log h; adaptive methods (`tol:`): the tolerance exponent, the slope of "
                "log err against log tol (1: proportional; the next section has its confidence "
                "interval and err/tol).  Over the asymptotic window (harness/fit.h) of the "
                "column's common levels; n/e: not established; —: the method has no run at one "
                "of the common levels.\n\n");
    mbs_report_columns(c, TABLE_ORDERS);
    mbs_report_md_table(c, md, TABLE_ORDERS);
    mbs_report_runs_compared(c, md, TABLE_ORDERS);
    if (tex) {
        fprintf(tex, "%% generated by mbsbench report from %s; needs \\usepackage{booktabs}\n\n",
                results_dir);
        mbs_report_tex_table(c, tex, TABLE_ORDERS,
                             "Observed orders in h, or tolerance exponents (tol:), q / v / lambda",
                             "tab:orders");
    }
    fprintf(md, "## Tolerance proportionality\n\nAdaptive methods over the common tolerances "
                "of each column: the exponent p of err ~ tol^p per group (1: proportional) with "
                "its 95%% confidence interval over the asymptotic window; when no window "
                "qualifies (n/e), the plain least-squares slope over all levels for scale; and "
                "err_q/tol at each tolerance.\n\n");
    mbs_report_tol_table(c, md);
    fprintf(md, "## Digits at fixed cost\n\n-log10 of %s in q, interpolated log-log between the "
                "two runs that bracket a reference cost per column (geometric mean of the force "
                "evaluations of its runs); `extrap.`: extrapolated from the two nearest runs, "
                "the cost lying within one level (their cost ratio) outside the method's runs; "
                "`at C f`: farther outside, the digits of the nearest run at its own cost C.\n\n",
            errname);
    mbs_report_columns(c, TABLE_DIGITS);
    mbs_report_md_table(c, md, TABLE_DIGITS);
    mbs_report_runs_compared(c, md, TABLE_DIGITS);
    if (tex)
        mbs_report_tex_table(c, tex, TABLE_DIGITS, "Correct digits in q at fixed cost",
                             "tab:digits");
    fprintf(md, "## Drift exponents\n\nk of |g(q(t))| ~ C t^k; rms in decades (large: "
                "oscillation rather than growth).  Per column the common h and the common "
                "tolerance at which the most methods ran (ties: the finer).\n\n");
    mbs_report_columns(c, TABLE_DRIFT);
    mbs_report_md_table(c, md, TABLE_DRIFT);
    mbs_report_runs_compared(c, md, TABLE_DRIFT);
    if (tex)
        mbs_report_tex_table(c, tex, TABLE_DRIFT, "Drift exponents", "tab:drift");
    mbs_report_failures(c, md, tex);
    fprintf(md, "## Figures\n\nPNG shown; SVG next to each; gnuplot script `report.gp`, data in "
                "`data/`.\n\n");
    for (int i = 0; i < c->n_plots; i++)
        fprintf(md, "### %s\n\n%s\n\n![%s](%s.png)\n\n", c->plots[i], c->captions[i], c->plots[i],
                c->plots[i]);
    fprintf(md, "## All runs\n\nOne row per run: errors at t_end (max-norm)%s, work, CPU median "
                "and interquartile range over the timing repeats (`mbsbench summary DIR --format "
                "md|csv|latex%s` prints the same table).\n\n",
            have_traj ? " and along the trajectory (traj_err_*: maximum over the output grid of "
                        "the mixed error)" : "",
            have_traj ? " [--error final|traj]" : "");
    mbs_summary_table(results_dir, "md", MBS_SUMMARY_FINAL | (have_traj ? MBS_SUMMARY_TRAJ : 0),
                      md);
    fprintf(md, "\n## Sources\n\nEach method's and problem's source (author, year, "
                "references.bib key, equation or example): `mbsbench list methods --long`, "
                "`mbsbench list problems --long`; the works cited: `references.bib`.\n\n");
    mbs_report_environment(c, md);
    fclose(md);
    if (tex)
        fclose(tex);
    char html[4400], title[300];
    snprintf(path, sizeof path, "%s/index.md", out_dir);
    snprintf(html, sizeof html, "%s/index.html", out_dir);
    snprintf(title, sizeof title, "mbsbench report: %s", r.meta ? mbs_jstr(r.meta, "suite") : "?");
    if (mbs_md_to_html(path, html, title) != 0) {
        fprintf(stderr, "mbsbench: cannot write %s\n", html);
        st = 2;
    }
    printf("report: %s/index.html and index.md (%d figures%s)\n", out_dir, c->n_plots,
           latex ? ", tables.tex" : "");
    free(c);
    mbs_results_free(&r);
    return st;
}

int mbs_cmd_report(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL;
    int latex = 0;
    const mbs_cli_cmd *cmd = mbs_cli_find("report");
    mbs_err_kind ek = MBS_ERR_FINAL;
    for (int i = 2; i < argc; i++) {
        mbs_cli_arg a;
        int k = mbs_cli_next(cmd, argc, argv, &i, &a);
        if (k < 0)
            return 2;
        if (mbs_cli_is(&a, "--latex"))
            latex = 1;
        else if (mbs_cli_is(&a, "--error")) {
            if (mbs_err_kind_parse(a.str, &ek) != 0) {
                fprintf(stderr, "mbsbench: report: --error '%s' must be final or traj\n", a.str);
                return 2;
            }
        } else if (mbs_cli_is(&a, "--out"))
            out = a.str;
        else if (k == 0 && !dir)
            dir = a.str;
        else {
            fprintf(stderr, "mbsbench: report: unexpected argument '%s'\n", a.str);
            return 2;
        }
    }
    if (!dir) {
        fprintf(stderr, "mbsbench: usage: mbsbench report RESULTS_DIR [--out DIR] [--latex] "
                        "[--error final|traj]\n");
        return 2;
    }
    char def[4200];
    if (!out) {
        mbs_default_report_dir(dir, def, sizeof def);
        out = def;
    }
    return mbs_report(dir, out, latex, ek);
}
