/* The IFToMM table, reproduction and work-precision figure of a results
 * directory (iftomm.h). */
#include "iftomm.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "io.h"
#include "results.h"
#include "traj.h"

/* The run's IFToMM error (traj.iftomm.err_rel; NaN when not measured). */
static double ift_rel(json_t *rec, double *abs_err, const char **ref)
{
    json_t *ift = json_object_get(json_object_get(rec, "traj"), "iftomm");
    json_t *r = json_object_get(ift, "err_rel"), *a = json_object_get(ift, "err_abs");
    *abs_err = json_is_number(a) ? json_number_value(a) : NAN;
    *ref = json_string_value(json_object_get(ift, "reference"));
    if (!*ref)
        *ref = "-";
    return json_is_number(r) ? json_number_value(r) : NAN;
}

/* The run's step size or tolerance as text. */
static void setting(json_t *rec, char *buf, size_t len)
{
    double h = mbs_jnum(rec, "h"), tol = mbs_jnum(rec, "tol");
    if (isfinite(tol))
        snprintf(buf, len, "tol=%.3g", tol);
    else if (isfinite(h))
        snprintf(buf, len, "h=%.3g", h);
    else
        snprintf(buf, len, "-");
}

/* The machine of the timings: CPU model and cores of meta.json. */
static void machine(const mbs_results *r, char *buf, size_t len)
{
    const char *cpu = r->meta ? json_string_value(json_object_get(r->meta, "cpu")) : NULL;
    double cores = r->meta ? mbs_jnum(r->meta, "cores") : NAN;
    if (isfinite(cores))
        snprintf(buf, len, "%s, %.0f cores", cpu ? cpu : "unknown", cores);
    else
        snprintf(buf, len, "%s", cpu ? cpu : "unknown");
}

static int same_group(json_t *a, json_t *b)
{
    return strcmp(mbs_jstr(a, "problem_spec"), mbs_jstr(b, "problem_spec")) == 0 &&
           mbs_jnum(a, "t_end") == mbs_jnum(b, "t_end");
}

/* The groups (problem spec and t_end) in the order of their first record:
 * first[k] is the index of group k's first record. */
static size_t groups(const mbs_results *r, size_t *first)
{
    size_t ng = 0;
    for (size_t i = 0; i < r->n; i++) {
        size_t k = 0;
        while (k < ng && !same_group(r->recs[first[k]], r->recs[i]))
            k++;
        if (k == ng)
            first[ng++] = i;
    }
    return ng;
}

/* Does group g (first record index) hold a run with an IFToMM error? */
static int measured(const mbs_results *r, size_t g)
{
    for (size_t i = g; i < r->n; i++) {
        double a;
        const char *ref;
        if (same_group(r->recs[i], r->recs[g]) && isfinite(ift_rel(r->recs[i], &a, &ref)))
            return 1;
    }
    return 0;
}

static const struct {
    const char *name;
    double bound;
} classes[] = {{"high", MBS_IFTOMM_HIGH}, {"low", MBS_IFTOMM_LOW}};
enum { NCLASS = 2 };

/* Mark in best[] each method's cheapest run of group g (least median CPU time)
 * that ended ok and meets class c; returns the fastest of them, or r->n. */
static size_t cheapest(const mbs_results *r, size_t g, int c, char *best)
{
    size_t n = r->n, fastest = n;
    memset(best, 0, n);
    for (size_t i = g; i < n; i++) {
        json_t *o = r->recs[i];
        const char *ref;
        double a, e = ift_rel(o, &a, &ref), cpu = mbs_jnum(o, "cpu.median");
        if (!same_group(o, r->recs[g]) || !mbs_rec_ok(o) || !(e <= classes[c].bound) ||
            !isfinite(cpu))
            continue;
        size_t j = g;
        for (; j < n; j++)
            if (best[j] &&
                strcmp(mbs_jstr(r->recs[j], "method_spec"), mbs_jstr(o, "method_spec")) == 0)
                break;
        if (j < n && mbs_jnum(r->recs[j], "cpu.median") <= cpu)
            continue;
        if (j < n)
            best[j] = 0;
        best[i] = 1;
    }
    for (size_t i = g; i < n; i++)
        if (best[i] && (fastest == n || mbs_jnum(r->recs[i], "cpu.median") <
                                            mbs_jnum(r->recs[fastest], "cpu.median")))
            fastest = i;
    return fastest;
}

/* The run of group g that ended ok with the least IFToMM error (r->n: none). */
static size_t least_error(const mbs_results *r, size_t g)
{
    size_t k = r->n;
    double bestv = INFINITY;
    for (size_t i = g; i < r->n; i++) {
        json_t *o = r->recs[i];
        const char *ref;
        double a, e = ift_rel(o, &a, &ref);
        if (same_group(o, r->recs[g]) && mbs_rec_ok(o) && e < bestv) {
            bestv = e;
            k = i;
        }
    }
    return k;
}

static void run_row(json_t *o, const char *prob, const char *cls, const char *what,
                    const char *mach, FILE *out)
{
    const char *ref;
    double a, e = ift_rel(o, &a, &ref);
    char set[64];
    setting(o, set, sizeof set);
    fprintf(out, "| %s | %s | %s%s | %s | %.3g | %.3g | %.4g | %.0f | %s | %s |\n", prob, cls,
            what, mbs_jstr(o, "method_spec"), set, e, a, mbs_jnum(o, "cpu.median"),
            mbs_jnum(o, "counters.steps"), ref, mach);
}

/* The tables (iftomm.h); 0, or 1 when runs are missing or a failed run has no
 * reason. */
static int tables(const mbs_results *r, const char *dir, FILE *out)
{
    size_t n = r->n;
    char *best = calloc(n ? n : 1, 1);
    size_t *first = calloc(n ? n : 1, sizeof *first);
    if (!best || !first) {
        free(best);
        free(first);
        fprintf(stderr, "mbsbench: out of memory\n");
        return 2;
    }
    char mach[300];
    machine(r, mach, sizeof mach);
    size_t ng = groups(r, first);
    fprintf(out, "IFToMM precision classes of %s (%s, %s; González et al. 2006 "
                 "[gonzalez2006benchmarking])\n"
                 "error (accuracy): max over the output times and the reported quantities of "
                 "|x - x_ref| / max(|x_ref|, 1e-3) (rel; the class verdict) and of |x - x_ref| "
                 "(abs); high <= 1e-3, low <= 1e-1\n"
                 "each method's cheapest run (median CPU time) that ended ok and meets the "
                 "class; * the fastest of the problem and class\n\n",
            dir, r->meta ? mbs_jstr(r->meta, "suite") : "?",
            r->meta ? mbs_jstr(r->meta, "date") : "?");
    fprintf(out, "| problem | class | method | setting | accuracy (rel) | abs | CPU time [s] | "
                 "steps | reference | machine |\n|---|---|---|---|---|---|---|---|---|---|\n");
    int rows = 0;
    for (size_t k = 0; k < ng; k++) {
        size_t g = first[k];
        if (!measured(r, g))
            continue;
        char prob[600];
        snprintf(prob, sizeof prob, "%s (%g s)", mbs_jstr(r->recs[g], "problem_spec"),
                 mbs_jnum(r->recs[g], "t_end"));
        for (int c = 0; c < NCLASS; c++) {
            size_t fastest = cheapest(r, g, c, best);
            if (fastest == n) {
                size_t l = least_error(r, g);
                if (l == n)
                    fprintf(out, "| %s | %s | none meets it (no run ended ok with an error) "
                                 "| | | | | | | |\n", prob, classes[c].name);
                else
                    run_row(r->recs[l], prob, classes[c].name,
                            "none meets it; least error: ", mach, out);
                rows++;
                continue;
            }
            for (size_t i = g; i < n; i++)
                if (best[i]) {
                    run_row(r->recs[i], prob, classes[c].name, i == fastest ? "* " : "", mach,
                            out);
                    rows++;
                }
        }
    }
    if (rows == 0)
        fprintf(out, "(no records with an IFToMM error)\n");
    /* the IFToMM form: the fastest run per problem and class */
    fprintf(out, "\nIFToMM form (the fastest run per problem and class):\n\n"
                 "| problem | class | method | accuracy (rel) | CPU time [s] | machine |\n"
                 "|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < ng; k++) {
        size_t g = first[k];
        if (!measured(r, g))
            continue;
        for (int c = 0; c < NCLASS; c++) {
            size_t f = cheapest(r, g, c, best), l = least_error(r, g);
            const char *ref;
            double a;
            char set[64];
            if (f < n) {
                setting(r->recs[f], set, sizeof set);
                fprintf(out, "| %s (%g s) | %s | %s %s | %.3g | %.4g | %s |\n",
                        mbs_jstr(r->recs[g], "problem_spec"), mbs_jnum(r->recs[g], "t_end"),
                        classes[c].name, mbs_jstr(r->recs[f], "method_spec"), set,
                        ift_rel(r->recs[f], &a, &ref), mbs_jnum(r->recs[f], "cpu.median"),
                        mach);
            } else if (l < n) {
                setting(r->recs[l], set, sizeof set);
                fprintf(out,
                        "| %s (%g s) | %s | not met (least error: %s %s) | %.3g | %.4g | %s |\n",
                        mbs_jstr(r->recs[g], "problem_spec"), mbs_jnum(r->recs[g], "t_end"),
                        classes[c].name, mbs_jstr(r->recs[l], "method_spec"), set,
                        ift_rel(r->recs[l], &a, &ref), mbs_jnum(r->recs[l], "cpu.median"), mach);
            } else {
                fprintf(out, "| %s (%g s) | %s | not met (no run ended ok) | | | |\n",
                        mbs_jstr(r->recs[g], "problem_spec"), mbs_jnum(r->recs[g], "t_end"),
                        classes[c].name);
            }
        }
    }
    /* problems left out, failed runs, missing runs */
    int bad = 0;
    for (size_t k = 0; k < ng; k++)
        if (!measured(r, first[k]))
            fprintf(out, "\n%s (%g s): no run has an IFToMM error (the problem reports no "
                         "quantity with a reference): left out",
                    mbs_jstr(r->recs[first[k]], "problem_spec"),
                    mbs_jnum(r->recs[first[k]], "t_end"));
    size_t nfail = 0;
    for (size_t i = 0; i < n; i++)
        nfail += !mbs_rec_ok(r->recs[i]);
    fprintf(out, "\n\nRuns: %zu recorded, %zu ended ok, %zu failed%s\n", n, n - nfail, nfail,
            nfail ? " (status at t: reason; the budgets of a run stop it with its reason):" : "");
    for (size_t i = 0; i < n; i++) {
        json_t *o = r->recs[i];
        if (mbs_rec_ok(o))
            continue;
        char set[64];
        setting(o, set, sizeof set);
        const char *why = json_string_value(json_object_get(o, "reason"));
        if (!why || !*why)
            bad = 1;
        fprintf(out, "- %s (%g s) %s %s: %s at t = %.4g: %s\n", mbs_jstr(o, "problem_spec"),
                mbs_jnum(o, "t_end"), mbs_jstr(o, "method_spec"), set, mbs_jstr(o, "status"),
                mbs_jnum(o, "fail_t"), why && *why ? why : "NO REASON RECORDED");
    }
    double planned = r->meta ? mbs_jnum(r->meta, "suite_runs") : NAN;
    if (isfinite(planned) && (double)n < planned) {
        fprintf(out, "MISSING: %.0f of the suite's %.0f runs have no record (complete with "
                     "mbsbench sweep SUITE --resume %s)\n",
                planned - (double)n, planned, dir);
        bad = 1;
    }
    free(best);
    free(first);
    return bad;
}

int mbs_iftomm_table(const char *dir, FILE *out)
{
    mbs_results r;
    char err[1024];
    if (mbs_results_load(dir, &r, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    int st = tables(&r, dir, out);
    mbs_results_free(&r);
    return st == 2 ? 2 : 0;
}

/* ---- the work-precision figure --------------------------------------------------- */

/* Okabe-Ito's eight colours and four more: curve k of a panel has colour and
 * marker k. */
static const char *const palette[] = {"#E69F00", "#56B4E9", "#009E73", "#0072B2",
                                      "#D55E00", "#CC79A7", "#000000", "#F0E442",
                                      "#999999", "#882255", "#44AA99", "#332288"};
enum { CURVES = sizeof palette / sizeof *palette };

typedef struct wpt {
    double x, y;
} wpt;

static int by_x(const void *a, const void *b)
{
    double x = ((const wpt *)a)->x, y = ((const wpt *)b)->x;
    return (x > y) - (x < y);
}

/* The points (median CPU time, IFToMM error rel or abs) of method m in group g:
 * its runs that ended ok with both measured, sorted by CPU time; malloc'ed. */
static wpt *points(const mbs_results *r, size_t g, const char *m, int use_abs, size_t *np)
{
    wpt *p = malloc((r->n ? r->n : 1) * sizeof *p);
    *np = 0;
    if (!p)
        return NULL;
    for (size_t i = g; i < r->n; i++) {
        json_t *o = r->recs[i];
        const char *ref;
        double a, e = ift_rel(o, &a, &ref), x = mbs_jnum(o, "cpu.median"), y = use_abs ? a : e;
        if (same_group(o, r->recs[g]) && mbs_rec_ok(o) &&
            strcmp(mbs_jstr(o, "method_spec"), m) == 0 &&
            x > 0.0 && y > 0.0 && isfinite(x) && isfinite(y))
            p[(*np)++] = (wpt){x, y};
    }
    qsort(p, *np, sizeof *p, by_x);
    return p;
}

/* Write the figure's data files and its gnuplot commands (to gp) for the
 * relative (use_abs 0) or absolute error: one panel per measured group, one
 * curve per method, the class bounds as dashed lines.  Returns the number of
 * panels, or -1 when a data file cannot be written. */
static int figure(const mbs_results *r, const size_t *first, size_t ng, const char *page,
                  int use_abs, FILE *gp)
{
    const char *stem = use_abs ? "wp-iftomm-abs" : "wp-iftomm-rel";
    int panels = 0;
    for (size_t k = 0; k < ng; k++)
        panels += measured(r, first[k]);
    if (panels == 0)
        return 0;
    int cols = panels < 2 ? 1 : 2, rows = (panels + cols - 1) / cols;
    char *body = NULL;
    size_t blen = 0;
    FILE *b = open_memstream(&body, &blen);
    if (!b)
        return -1;
    fprintf(b, "set multiplot layout %d,%d\nset logscale xy\nset grid\n"
               "set format x '10^{%%L}'\nset format y '10^{%%L}'\n"
               "set key outside right top vertical font ',8' noenhanced\n"
               "set xlabel 'CPU time [s] (median over the timing runs)'\n",
            rows, cols);
    if (use_abs)
        fprintf(b, "set ylabel 'IFToMM error, absolute: max |x - x_{ref}|'\n");
    else
        fprintf(b, "set ylabel 'IFToMM error: max |x - x_{ref}| / max(|x_{ref}|, 10^{-3})'\n");
    int st = 0, panel = 0;
    for (size_t k = 0; k < ng && st == 0; k++) {
        size_t g = first[k];
        if (!measured(r, g))
            continue;
        /* the methods of the group with points, in record order */
        const char *meth[CURVES];
        int nm = 0, more = 0;
        for (size_t i = g; i < r->n; i++) {
            if (!same_group(r->recs[i], r->recs[g]))
                continue;
            const char *m = mbs_jstr(r->recs[i], "method_spec");
            int seen = 0;
            for (int j = 0; j < nm; j++)
                seen |= strcmp(meth[j], m) == 0;
            size_t np;
            wpt *p = seen ? NULL : points(r, g, m, use_abs, &np);
            if (p && np > 0) {
                if (nm < CURVES)
                    meth[nm++] = m;
                else
                    more++;
            }
            free(p);
        }
        char *data = NULL;
        size_t dlen = 0;
        FILE *d = open_memstream(&data, &dlen);
        if (!d) {
            st = -1;
            break;
        }
        double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
        for (int j = 0; j < nm; j++) {
            size_t np;
            wpt *p = points(r, g, meth[j], use_abs, &np);
            fprintf(d, "# %s\n", meth[j]);
            for (size_t q = 0; p && q < np; q++) {
                fprintf(d, "%.8e %.8e\n", p[q].x, p[q].y);
                xlo = fmin(xlo, p[q].x), xhi = fmax(xhi, p[q].x);
                ylo = fmin(ylo, p[q].y), yhi = fmax(yhi, p[q].y);
            }
            fprintf(d, "\n\n");
            free(p);
        }
        fclose(d);
        char dname[64], path[4200];
        snprintf(dname, sizeof dname, "data/%s-%d.dat", stem, panel);
        snprintf(path, sizeof path, "%s/%s", page, dname);
        if (mbs_write_atomic(path, data ? data : "", dlen) != 0)
            st = -1;
        free(data);
        fprintf(b, "set autoscale xy\n");
        if (nm == 0 || !(xlo < xhi)) /* one cost (or none): a range around it */
            fprintf(b, "set xrange [%.8e:%.8e]\n", nm ? xlo / 2.0 : 1e-3, nm ? xhi * 2.0 : 1.0);
        fprintf(b, "set title '%s, t_end = %g s%s' noenhanced\n",
                mbs_jstr(r->recs[g], "problem_spec"), mbs_jnum(r->recs[g], "t_end"),
                more ? " (the first 12 methods)" : "");
        if (!use_abs) /* both class bounds inside the panel, not on its border */
            fprintf(b, "set yrange [%.8e:%.8e]\n", fmin(nm ? ylo : 1.0, MBS_IFTOMM_HIGH) / 3.0,
                    fmax(nm ? yhi : 1.0, MBS_IFTOMM_LOW) * 3.0);
        else if (nm && !(ylo < yhi))
            fprintf(b, "set yrange [%.8e:%.8e]\n", ylo / 2.0, yhi * 2.0);
        if (!use_abs) /* the class bounds across the panel, named at its left */
            fprintf(b, "set arrow 1 from graph 0, first 1e-1 to graph 1, first 1e-1 nohead "
                       "dt 2 lc rgb '#555555'\n"
                       "set arrow 2 from graph 0, first 1e-3 to graph 1, first 1e-3 nohead "
                       "dt 2 lc rgb '#555555'\n"
                       "set label 1 'low' at graph 0.01, first 1.4e-1 font ',8'\n"
                       "set label 2 'high' at graph 0.01, first 1.4e-3 font ',8'\n");
        fprintf(b, "plot ");
        for (int j = 0; j < nm; j++)
            fprintf(b, "%s'%s' index %d with linespoints lw 2 pt %d ps 1.2 lc rgb '%s' "
                       "title '%s'",
                    j ? ", \\\n     " : "", dname, j, 1 + j, palette[j], meth[j]);
        if (nm == 0 && use_abs)
            fprintf(b, "NaN notitle");
        fprintf(b, "\n");
        panel++;
    }
    fclose(b);
    int w = 760 * cols, h = 480 * rows;
    if (st == 0)
        fprintf(gp, "set terminal pngcairo enhanced size %d,%d font 'DejaVu Sans,10'\n"
                    "set output '%s.png'\n%s\nunset multiplot\n"
                    "set terminal svg enhanced size %d,%d font 'DejaVu Sans,10'\n"
                    "set output '%s.svg'\n%s\nunset multiplot\nreset\n",
                w, h, stem, body, w, h, stem, body);
    free(body);
    return st == 0 ? panels : -1;
}

/* The page: iftomm.md / iftomm.html with the tables and the figures,
 * iftomm.gp and data/ (written atomically, then gnuplot run in page). */
static int write_page(const mbs_results *r, const char *dir, const char *page,
                      const char *table)
{
    char path[4200], dpath[4200];
    snprintf(dpath, sizeof dpath, "%s/data", page);
    if (mbs_mkdir_p(dpath) != 0) {
        fprintf(stderr, "mbsbench: reproduce iftomm: cannot create %s\n", dpath);
        return 2;
    }
    size_t *first = calloc(r->n ? r->n : 1, sizeof *first);
    char *gtext = NULL, *mtext = NULL;
    size_t glen = 0, mlen = 0;
    FILE *gp = first ? open_memstream(&gtext, &glen) : NULL;
    if (!gp) {
        free(first);
        fprintf(stderr, "mbsbench: out of memory\n");
        return 2;
    }
    size_t ng = groups(r, first);
    fprintf(gp, "# generated by mbsbench reproduce iftomm from %s; run in this directory\n",
            dir);
    int n_rel = figure(r, first, ng, page, 0, gp), n_abs = figure(r, first, ng, page, 1, gp);
    fclose(gp);
    free(first);
    int st = n_rel < 0 || n_abs < 0 ? 2 : 0;
    snprintf(path, sizeof path, "%s/iftomm.gp", page);
    if (st == 0 && mbs_write_atomic(path, gtext ? gtext : "", glen) != 0)
        st = 2;
    free(gtext);
    if (st == 0 && n_rel > 0) {
        char cmd[9000];
        snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot iftomm.gp > iftomm-gnuplot.log 2>&1", page);
        if (system(cmd) != 0) {
            fprintf(stderr, "mbsbench: gnuplot failed (see %s/iftomm-gnuplot.log)\n", page);
            st = 2;
        }
    }
    if (st) {
        fprintf(stderr, "mbsbench: reproduce iftomm: cannot write the figures in %s\n", page);
        return st;
    }
    FILE *md = open_memstream(&mtext, &mlen);
    if (!md)
        return 2;
    char mach[300];
    machine(r, mach, sizeof mach);
    fprintf(md, "# IFToMM benchmark problems: precision classes and CPU time\n\n"
                "Results `%s` (suite `%s`, revision %s, %s), machine: %s.  The library of "
                "González, Dopico, Lugrís and Cuadrado 2006 [gonzalez2006benchmarking] scores a "
                "submission by its accuracy (the error of the reference quantities at the "
                "problem's output steps) and its CPU time.  The class verdict uses the "
                "relative reading with the threshold 1e-3 as floor of the denominator; the "
                "absolute error is printed beside it (why: reproductions/iftomm.md).\n\n",
            dir, r->meta ? mbs_jstr(r->meta, "suite") : "?",
            r->meta ? mbs_jstr(r->meta, "revision") : "?",
            r->meta ? mbs_jstr(r->meta, "date") : "?", mach);
    fprintf(md, "```\n%s```\n\n", table);
    if (n_rel > 0)
        fprintf(md, "## Work-precision\n\nThe IFToMM error (relative reading, the class "
                    "bounds dashed) against the median CPU time, one panel per problem, every "
                    "run that ended ok; below it the absolute error.  gnuplot script "
                    "`iftomm.gp`, data in `data/`.\n\n![wp-iftomm-rel](wp-iftomm-rel.png)\n\n"
                    "![wp-iftomm-abs](wp-iftomm-abs.png)\n");
    fclose(md);
    snprintf(path, sizeof path, "%s/iftomm.md", page);
    st = mbs_write_atomic(path, mtext ? mtext : "", mlen) != 0 ? 2 : 0;
    free(mtext);
    char html[4200];
    snprintf(html, sizeof html, "%s/iftomm.html", page);
    if (st == 0 && mbs_md_to_html(path, html, "mbsbench: IFToMM benchmark problems") != 0)
        st = 2;
    if (st)
        fprintf(stderr, "mbsbench: reproduce iftomm: cannot write %s\n", path);
    return st;
}

int mbs_iftomm_reproduce(const char *dir, const char *page, FILE *out)
{
    mbs_results r;
    char err[1024];
    if (mbs_results_load(dir, &r, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    int st = mem ? tables(&r, dir, mem) : 2;
    if (mem)
        fclose(mem);
    if (st != 2) {
        fputs(text ? text : "", out);
        if (page) {
            int ps = write_page(&r, dir, page, text ? text : "");
            if (ps)
                st = ps;
            else
                fprintf(out, "\npage: %s/iftomm.html (figures wp-iftomm-rel, wp-iftomm-abs)\n",
                        page);
        }
    }
    free(text);
    mbs_results_free(&r);
    return st;
}
