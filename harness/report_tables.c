/* The tables of a report (report.h): observed orders, digits at fixed cost,
 * drift exponents (Markdown and LaTeX), failures and the environment.  Split
 * from report.c. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_impl.h"

/* ---- tables --------------------------------------------------------------------- */

/* The record of problem p, method m with the most levels in its series (orders). */
static json_t *order_rec(ctx *c, int p, int m, size_t *levels)
{
    json_t *best = NULL;
    size_t bl = 0;
    for (size_t i = 0; i < c->r->n; i++) {
        json_t *o = c->r->recs[i];
        if (strcmp(mbs_jstr(o, "problem_spec"), c->probs.s[p]) ||
            strcmp(mbs_jstr(o, "method_spec"), c->meths.s[m]) || !isfinite(mbs_jnum(o, "h")))
            continue;
        mbs_order_fit f;
        size_t nl = 0;
        mbs_results_order(c->r, o, "q", &f, &nl);
        if (nl > bl) {
            bl = nl;
            best = o;
        }
    }
    *levels = bl;
    return best;
}

void mbs_report_order_cell(ctx *c, int p, int m, char *buf, size_t len, int tex)
{
    size_t nl;
    json_t *o = order_rec(c, p, m, &nl);
    if (!o || nl < 3) {
        snprintf(buf, len, "%s", tex ? "--" : "—");
        return;
    }
    buf[0] = '\0';
    for (int g = 0; g < 3; g++) {
        mbs_order_fit f;
        size_t n2;
        char one[64];
        if (mbs_results_order(c->r, o, mbs_report_groups[g], &f, &n2) != 0)
            continue;
        if (g == 2 && mbs_jnum(o, "dims.nl") == 0)
            continue;
        char val[16];
        if (f.established)
            snprintf(val, sizeof val, "%.2f", f.p);
        else
            snprintf(val, sizeof val, "n/e");
        if (tex)
            snprintf(one, sizeof one, "%s$%s$~%s", g ? " / " : "", mbs_report_group_tex[g], val);
        else
            snprintf(one, sizeof one, "%s%s %s", g ? " / " : "", mbs_report_groups[g], val);
        size_t u = strlen(buf);
        snprintf(buf + u, len - u, "%s", one);
    }
}

/* Reference cost of problem p: the geometric mean of f_evals over its ok runs with
 * an error; digits = -log10 err.q interpolated (log-log) at that cost. */
double mbs_report_ref_cost(ctx *c, int p)
{
    double s = 0.0;
    int n = 0;
    for (size_t i = 0; i < c->r->n; i++) {
        json_t *o = c->r->recs[i];
        double fe = mbs_jnum(o, "counters.f_evals");
        if (!strcmp(mbs_jstr(o, "problem_spec"), c->probs.s[p]) && mbs_rec_ok(o) && fe > 0.0 &&
            mbs_jnum(o, "err.q") > 0.0) {
            s += log(fe);
            n++;
        }
    }
    return n ? exp(s / n) : NAN;
}

static double digits_at(ctx *c, int p, int m, double cost)
{
    pt pts[256];
    int n = mbs_report_wp_points(c, p, m, NAN, "counters.f_evals", "q", pts);
    for (int i = 0; i + 1 < n; i++)
        if (pts[i].x <= cost && cost <= pts[i + 1].x && pts[i + 1].x > pts[i].x) {
            double w = (log(cost) - log(pts[i].x)) / (log(pts[i + 1].x) - log(pts[i].x));
            return -((1.0 - w) * log10(pts[i].y) + w * log10(pts[i + 1].y));
        }
    for (int i = 0; i < n; i++)
        if (pts[i].x == cost)
            return -log10(pts[i].y);
    return NAN;
}

/* Drift exponent of the longest, finest run of p, m. */
static json_t *drift_rec(ctx *c, int p, int m)
{
    json_t *best = NULL;
    for (size_t i = 0; i < c->r->n; i++) {
        json_t *o = c->r->recs[i];
        if (strcmp(mbs_jstr(o, "problem_spec"), c->probs.s[p]) ||
            strcmp(mbs_jstr(o, "method_spec"), c->meths.s[m]) || !mbs_rec_ok(o) ||
            !isfinite(mbs_jnum(o, "drift_exponent")))
            continue;
        if (!best) {
            best = o;
            continue;
        }
        double t = mbs_jnum(o, "t_end"), tb = mbs_jnum(best, "t_end");
        double s = isfinite(mbs_jnum(o, "h")) ? mbs_jnum(o, "h") : mbs_jnum(o, "tol");
        double sb = isfinite(mbs_jnum(best, "h")) ? mbs_jnum(best, "h") : mbs_jnum(best, "tol");
        if (t > tb || (t == tb && s < sb))
            best = o;
    }
    return best;
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


void mbs_report_digits_cell(ctx *c, int p, int m, char *buf, size_t len, int tex)
{
    double d = digits_at(c, p, m, mbs_report_ref_cost(c, p));
    if (isfinite(d))
        snprintf(buf, len, "%.1f", d);
    else
        snprintf(buf, len, "%s", tex ? "--" : "—");
}

void mbs_report_drift_cell(ctx *c, int p, int m, char *buf, size_t len, int tex)
{
    json_t *o = drift_rec(c, p, m);
    if (!o)
        snprintf(buf, len, "%s", tex ? "--" : "—");
    else if (tex)
        snprintf(buf, len, "%.2f (rms %.2f)", mbs_jnum(o, "drift_exponent"),
                 mbs_jnum(o, "drift_rms"));
    else
        snprintf(buf, len, "%.2f (rms %.2f, g_max %.1e)", mbs_jnum(o, "drift_exponent"),
                 mbs_jnum(o, "drift_rms"), mbs_jnum(o, "residual.pos_max"));
}

void mbs_report_md_table(ctx *c, FILE *f, cell_fn cell)
{
    fprintf(f, "| method |");
    for (int p = 0; p < c->probs.n; p++)
        fprintf(f, " %s |", c->probs.s[p]);
    fprintf(f, "\n|---|");
    for (int p = 0; p < c->probs.n; p++)
        fprintf(f, "---|");
    fprintf(f, "\n");
    for (int m = 0; m < c->meths.n; m++) {
        fprintf(f, "| `%s` |", c->meths.s[m]);
        for (int p = 0; p < c->probs.n; p++) {
            char buf[256];
            cell(c, p, m, buf, sizeof buf, 0);
            fprintf(f, " %s |", buf);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}

void mbs_report_tex_table(ctx *c, FILE *f, cell_fn cell, const char *caption, const char *label)
{
    fprintf(f, "\\begin{table}\n\\centering\n\\caption{");
    tex_escape(f, caption);
    fprintf(f, "}\n\\label{%s}\n\\begin{tabular}{l", label);
    for (int p = 0; p < c->probs.n; p++)
        fprintf(f, "l");
    fprintf(f, "}\n\\toprule\nmethod");
    for (int p = 0; p < c->probs.n; p++) {
        fprintf(f, " & ");
        tex_escape(f, c->probs.s[p]);
    }
    fprintf(f, " \\\\\n\\midrule\n");
    for (int m = 0; m < c->meths.n; m++) {
        fprintf(f, "\\texttt{");
        tex_escape(f, c->meths.s[m]);
        fprintf(f, "}");
        for (int p = 0; p < c->probs.n; p++) {
            char buf[256];
            cell(c, p, m, buf, sizeof buf, 1);
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

