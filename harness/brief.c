/* The short verdict that ends `make run` (`mbsbench summary DIR --brief`): per
 * problem and accuracy level the fastest run that reached it, failures by
 * reason, and where the report is.  The accuracy measure is the mixed error
 * max_i |y_i - yref_i| / (1 + |yref_i|) over all components at t_end, i.e.
 * 10^-mescd with atol/rtol = 1 (Test Set problems: their published mescd). */
#include "brief.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"

enum { N_LEVELS = 3, MAX_PROBLEMS = 64, MAX_REASONS = 16 };
static const double levels[N_LEVELS] = {3.0, 6.0, 9.0};

static int find_or_add(const char **names, int *n, int cap, const char *s)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    if (*n >= cap)
        return -1;
    names[*n] = s;
    return (*n)++;
}

/* No record with trajectory errors: --error traj has nothing to show (one line). */
static int no_traj(const mbs_results *r, const char *dir)
{
    if (mbs_results_have_traj(r))
        return 0;
    fprintf(stderr, "mbsbench: summary: --error traj: no record in %s has trajectory errors "
                    "(field traj); use --error final\n", dir);
    return 1;
}

int mbs_brief_summary(const char *dir, const char *report, mbs_err_kind ek, FILE *out)
{
    mbs_results r;
    char err[1024];
    if (mbs_results_load(dir, &r, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    if (ek == MBS_ERR_TRAJ && no_traj(&r, dir)) {
        mbs_results_free(&r);
        return 2;
    }
    const char *probs[MAX_PROBLEMS];
    int np = 0, n_ok = 0, more_problems = 0;
    json_t *best[MAX_PROBLEMS][N_LEVELS];
    memset(best, 0, sizeof best);
    int scored[MAX_PROBLEMS] = {0};
    const char *reasons[MAX_REASONS];
    int rcount[MAX_REASONS] = {0}, nr = 0;
    for (size_t i = 0; i < r.n; i++) {
        json_t *rec = r.recs[i];
        if (!mbs_rec_ok(rec)) {
            int k = find_or_add(reasons, &nr, MAX_REASONS, mbs_jstr(rec, "status"));
            if (k >= 0)
                rcount[k]++;
            continue;
        }
        n_ok++;
        int p = find_or_add(probs, &np, MAX_PROBLEMS, mbs_jstr(rec, "problem_spec"));
        if (p < 0) {
            more_problems = 1;
            continue;
        }
        double digits = -log10(mbs_rec_err_mixed(rec, ek)), cpu = mbs_jnum(rec, "cpu.median");
        if (!isfinite(digits) || !isfinite(cpu))
            continue;
        scored[p] = 1;
        for (int l = 0; l < N_LEVELS; l++)
            if (digits >= levels[l] &&
                (!best[p][l] || cpu < mbs_jnum(best[p][l], "cpu.median")))
                best[p][l] = rec;
    }
    fprintf(out, "mbsbench: suite %s: %zu runs, %d ok, %zu failed; results in %s\n",
            r.meta ? mbs_jstr(r.meta, "suite") : "?", r.n, n_ok, r.n - (size_t)n_ok, dir);
    fprintf(out, "fastest run reaching a mixed error (max |err|/(1+|ref|) %s) of 1e-3, "
                 "1e-6, 1e-9;\neach cell: the method, its median CPU time per integration "
                 "(ms) and its force\nevaluations (f = calls of the problem's force "
                 "function)\n",
            ek == MBS_ERR_TRAJ ? "along the trajectory" : "at t_end");
    /* cells first, then the columns as wide as their widest cell */
    char(*cells)[N_LEVELS][96] = calloc(np ? (size_t)np : 1, sizeof *cells);
    int w[N_LEVELS + 1] = {(int)strlen("problem"), 4, 4, 4};
    for (int p = 0; cells && p < np; p++) {
        int any = 0;
        for (int l = 0; l < N_LEVELS; l++) {
            json_t *b = best[p][l];
            if (!b) {
                snprintf(cells[p][l], sizeof cells[p][l], "-");
                continue;
            }
            any = 1;
            double ms = 1e3 * mbs_jnum(b, "cpu.median");
            snprintf(cells[p][l], sizeof cells[p][l], ms < 100.0 ? "%s %.2g ms %.0f f"
                                                                 : "%s %.0f ms %.0f f",
                     mbs_jstr(b, "method_spec"), ms, mbs_jnum(b, "counters.f_evals"));
        }
        if (!any)
            snprintf(cells[p][0], sizeof cells[p][0], "%s",
                     scored[p] ? "- (no run reached 1e-3)" : "(no reference: not scored)");
        w[0] = (int)fmax(w[0], (double)strlen(probs[p]));
        for (int l = 0; l < N_LEVELS; l++)
            w[l + 1] = (int)fmax(w[l + 1], (double)strlen(cells[p][l]));
    }
    fprintf(out, "%-*s  %-*s  %-*s  %s\n", w[0], "problem", w[1], "1e-3", w[2], "1e-6", "1e-9");
    for (int p = 0; cells && p < np; p++)
        fprintf(out, "%-*s  %-*s  %-*s  %s\n", w[0], probs[p], w[1], cells[p][0], w[2],
                cells[p][1], cells[p][2]);
    free(cells);
    if (more_problems)
        fprintf(out, "(more than %d problems: see the report)\n", MAX_PROBLEMS);
    if (nr > 0) {
        fprintf(out, "failed runs by status:");
        for (int k = 0; k < nr; k++)
            fprintf(out, " %s %d%s", reasons[k], rcount[k], k + 1 < nr ? "," : "");
        fprintf(out, " (reasons in the report's Failures table)\n");
    }
    if (report)
        fprintf(out, "report: %s\n", report);
    mbs_results_free(&r);
    return 0;
}

/* One cell of the tables below: a number in %.3g, "-" when not measured. */
static void cell(char *buf, size_t len, double x)
{
    if (isfinite(x))
        snprintf(buf, len, "%.3g", x);
    else
        snprintf(buf, len, "-");
}

int mbs_summary_table(const char *dir, const char *format, int kinds, FILE *out)
{
    int fmt = !strcmp(format, "md") ? 0 : !strcmp(format, "csv") ? 1
              : !strcmp(format, "latex") ? 2 : -1;
    if (fmt < 0) {
        fprintf(stderr, "mbsbench: summary: --format '%s' must be md, csv or latex\n", format);
        return 2;
    }
    mbs_results r;
    char err[1024];
    if (mbs_results_load(dir, &r, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    if (kinds == MBS_SUMMARY_TRAJ && no_traj(&r, dir)) {
        mbs_results_free(&r);
        return 2;
    }
    /* the error columns: at t_end (err_*), along the trajectory (traj_err_*: the
     * mixed error's maximum over the grid), or both */
    const char *head[16] = {"problem", "method", "t_end", "h", "tol", "status"};
    const char *ecol[2][3] = {{"err_q", "err_v", "err_lambda"},
                              {"traj_err_q", "traj_err_v", "traj_err_lambda"}};
    int NCOL = 6;
    for (int k = 0; k < 2; k++)
        for (int g = 0; g < 3 && (kinds & (1 << k)); g++)
            head[NCOL++] = ecol[k][g];
    int first_work = NCOL;
    head[NCOL++] = "steps";
    head[NCOL++] = "f_evals";
    head[NCOL++] = "cpu_median_s";
    head[NCOL++] = "cpu_iqr_s";
    const char *sep = fmt == 0 ? " | " : fmt == 1 ? "," : " & ";
    if (fmt == 2) {
        fprintf(out, "%% mbsbench summary of %s; needs \\usepackage{booktabs,siunitx}: every "
                     "number is \\num{...}, -- where not measured\n"
                     "\\begin{tabular}{llrrrl", dir);
        for (int k = 6; k < NCOL; k++)
            fputc('r', out);
        fprintf(out, "}\n\\toprule\n");
    }
    for (int k = 0; k < NCOL; k++) {
        fputs(k ? sep : (fmt == 0 ? "| " : ""), out);
        for (const char *q = head[k]; *q; q++)
            fprintf(out, fmt == 2 && *q == '_' ? "\\%c" : "%c", *q);
    }
    fprintf(out, "%s\n", fmt == 0 ? " |" : fmt == 2 ? " \\\\ \\midrule" : "");
    if (fmt == 0) {
        for (int k = 0; k < NCOL; k++)
            fprintf(out, "|---");
        fprintf(out, "|\n");
    }
    for (size_t i = 0; i < r.n; i++) {
        json_t *o = r.recs[i];
        char c[16][600];
        static const char *const g3[3] = {"q", "v", "lambda"};
        snprintf(c[0], sizeof c[0], "%s", mbs_jstr(o, "problem_spec"));
        snprintf(c[1], sizeof c[1], "%s", mbs_jstr(o, "method_spec"));
        cell(c[2], sizeof c[2], mbs_jnum(o, "t_end"));
        cell(c[3], sizeof c[3], mbs_jnum(o, "h"));
        cell(c[4], sizeof c[4], mbs_jnum(o, "tol"));
        snprintf(c[5], sizeof c[5], "%s", mbs_jstr(o, "status"));
        int j = 6;
        for (int k = 0; k < 2; k++)
            for (int g = 0; g < 3 && (kinds & (1 << k)); g++, j++)
                cell(c[j], sizeof c[j], mbs_rec_err(o, (mbs_err_kind)k, g3[g]));
        for (int k = 0; k <= 1; k++) { /* counts: exact, "-" when absent */
            double x = mbs_jnum(o, k == 0 ? "counters.steps" : "counters.f_evals");
            snprintf(c[first_work + k], sizeof c[0], isfinite(x) ? "%.0f" : "-", x);
        }
        cell(c[first_work + 2], sizeof c[0], mbs_jnum(o, "cpu.median"));
        cell(c[first_work + 3], sizeof c[0], mbs_jnum(o, "cpu.iqr"));
        for (int k = 0; k < NCOL; k++) {
            fputs(k ? sep : (fmt == 0 ? "| " : ""), out);
            if (fmt == 1 && k < 2) /* CSV: quote the specs (they contain commas) */
                fprintf(out, "\"%s\"", c[k]);
            else if (fmt == 2 && k < 2) {
                fputs("\\texttt{", out);
                for (const char *q = c[k]; *q; q++)
                    fprintf(out, strchr("_&%#$", *q) ? "\\%c" : "%c", *q);
                fputs("}", out);
            } else if (fmt == 2 && k == 5) {
                for (const char *q = c[k]; *q; q++)
                    fprintf(out, *q == '_' ? "\\%c" : "%c", *q);
            } else if (fmt == 2) /* numbers: one style for every numeric column */
                fprintf(out, strcmp(c[k], "-") ? "\\num{%s}" : "--", c[k]);
            else
                fputs(c[k], out);
        }
        fprintf(out, "%s\n", fmt == 0 ? " |" : fmt == 2 ? " \\\\" : "");
    }
    if (fmt == 2)
        fprintf(out, "\\bottomrule\n\\end{tabular}\n");
    mbs_results_free(&r);
    return 0;
}
