/* mbsbench command line: list, run, converge, sweep, summary.
 * Exit status: 0 success, 1 a run failed numerically, 2 bad input or I/O error. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "battery.h"
#include "converge.h"
#include "history.h"
#include "io.h"
#include "refgen.h"
#include "brief.h"
#include "env.h"
#include "regress.h"
#include "report.h"
#include "reproduce.h"
#include "merge.h"
#include "plugin.h"
#include "probcheck.h"
#include "../methods/registry.h"
#include "../problems/mech.h"
#include "../problems/registry.h"
#include "iftomm.h"
#include "io.h"
#include "run.h"
#include "shard.h"
#include "slurm.h"
#include "sweep.h"

/* Print "mbsbench: message" (one line per line of the message); returns 2. */
static int bad(const char *fmt, const char *a, const char *b)
{
    char msg[8192];
    snprintf(msg, sizeof msg, fmt, a, b);
    char *save = NULL;
    for (char *l = strtok_r(msg, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        fprintf(stderr, "mbsbench: %s\n", l);
    return 2;
}

static void print_params(const mbs_param_def *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i].choices) {
            char name[64];
            mbs_choice_name(p[i].choices, (int)p[i].def, name, sizeof name);
            printf("      %-10s = %-10s {%s}  %s\n", p[i].name, name, p[i].choices, p[i].doc);
        } else {
            printf("      %-10s = %-10g [%g, %g]  %s\n", p[i].name, p[i].def, p[i].min,
                   p[i].max, p[i].doc);
        }
    }
}

static void flag_names(unsigned f, const char *const *names, int n, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        if (f & (1u << i)) {
            size_t u = strlen(buf);
            snprintf(buf + u, len - u, "%s%s", u ? "," : "", names[i]);
        }
}

/* `list methods --markdown`: the method table of docs/methods.md.  Which
 * problem classes each method takes is measured, not read from flags: one short
 * run per class (h = 0.01 or tol = 1e-6) and its status: "yes" (ok), "declined"
 * (status unsupported: a record with the reason), or the failure's status. */
static int method_table(void)
{
    static const struct {
        const char *title, *problem;
        double t_end;
    } probe[] = {{"redundant constraints (pendulum:redundant=1)", "pendulum:redundant=1", 1.0},
                 {"singular M (smallmass:m1=0)", "smallmass:m1=0", 0.1},
                 {"extended (wheelset)", "wheelset", 0.05},
                 {"non-holonomic (knifeedge)", "knifeedge", 1.0},
                 {"Lie group (heavytop:coords=rotmat)", "heavytop:coords=rotmat", 0.1}};
    enum { NP = sizeof probe / sizeof *probe };
    printf("| method | orders q/v/lambda | step |");
    for (int k = 0; k < NP; k++)
        printf(" %s |", probe[k].title);
    printf(" source |\n|---|---|---|");
    for (int k = 0; k < NP; k++)
        printf("---|");
    printf("---|\n");
    for (size_t i = 0; i < mbs_method_count(); i++) {
        const mbs_method_def *m = mbs_method_at(i);
        int fixed = (m->flags & MBS_M_FIXED_STEP) != 0;
        printf("| `%s` | %g/%g/%g | %s%s |", m->name, m->order[0], m->order[1], m->order[2],
               fixed ? "fixed" : "adaptive", m->flags & MBS_M_IMPLICIT ? ", implicit" : "");
        for (int k = 0; k < NP; k++) {
            mbs_run_spec spec = {.problem = probe[k].problem, .method = m->name,
                                 .h = fixed ? 0.01 : NAN, .tol = fixed ? NAN : 1e-6,
                                 .t_end = probe[k].t_end, .repeat = 0, .measure = 1,
                                 .max_cpu = 10.0};
            mbs_record rec;
            char err[512];
            const char *cellv;
            if (mbs_run(&spec, &rec, err, sizeof err) != MBS_OK)
                cellv = "bad input";
            else
                cellv = rec.status == MBS_OK            ? "yes"
                        : rec.status == MBS_UNSUPPORTED ? "declined"
                                                        : mbs_status_code(rec.status);
            printf(" %s |", cellv);
            mbs_record_free(&rec);
        }
        printf(" %s |\n", m->citation && *m->citation ? m->citation : "-");
    }
    return 0;
}

/* n_lambda - rank G(t0, q0) by SVD (singular values below 1e-10 of the largest
 * count as zero); -1 when it cannot be computed or the problem is large. */
static long rank_defect(const mbs_problem *pb)
{
    size_t nq = pb->nq, nl = pb->nl;
    if (nl == 0)
        return 0;
    if ((double)nl * (double)nl * (double)nq > 3e8)
        return -1;
    size_t big = nl >= nq ? nl : nq, sm = nl >= nq ? nq : nl;
    long rd = -1;
    double *y = calloc(mbs_ny(pb) + 1, sizeof *y);
    gsl_matrix *G = gsl_matrix_alloc(nl, nq), *U = gsl_matrix_alloc(big, sm),
               *V = gsl_matrix_alloc(sm, sm);
    gsl_vector *S = gsl_vector_alloc(sm), *w = gsl_vector_alloc(sm);
    int have = 0;
    if (y && G && U && V && S && w &&
        pb->def->initial(pb, y, y + nq, y + nq + pb->nv, &have) == MBS_OK &&
        pb->def->jacobian(pb, pb->t0, y, G) == MBS_OK) {
        if (nl >= nq)
            gsl_matrix_memcpy(U, G);
        else
            gsl_matrix_transpose_memcpy(U, G);
        if (gsl_linalg_SV_decomp(U, V, S, w) == 0) {
            size_t rk = 0;
            for (size_t i = 0; i < sm; i++)
                rk += gsl_vector_get(S, i) > 1e-10 * gsl_vector_get(S, 0);
            rd = (long)(nl - rk);
        }
    }
    free(y);
    gsl_matrix_free(G);
    gsl_matrix_free(U);
    gsl_matrix_free(V);
    gsl_vector_free(S);
    gsl_vector_free(w);
    return rd;
}

static int cmd_list(int argc, char **argv)
{
    const mbs_cli_cmd *cmd = mbs_cli_find("list");
    const char *what = NULL;
    int longform = 0, markdown = 0;
    for (int i = 2; i < argc; i++) {
        mbs_cli_arg a;
        int k = mbs_cli_next(cmd, argc, argv, &i, &a);
        if (k < 0)
            return 2;
        if (k == 0 && what)
            return bad("list: unexpected argument '%s'%s", a.str, "");
        if (k == 0)
            what = a.str;
        else if (mbs_cli_is(&a, "--long"))
            longform = 1;
        else if (mbs_cli_is(&a, "--markdown"))
            markdown = 1;
    }
    if (!what)
        return bad("list: expected 'problems' or 'methods' [--long | --markdown]%s%s", "", "");
    if (longform && markdown)
        return bad("list: give --long or --markdown, not both%s%s", "", "");
    if (markdown && strcmp(what, "methods") != 0)
        return bad("list: --markdown goes with 'list methods' (the table of docs/methods.md)%s%s",
                   "", "");
    if (markdown)
        return method_table();
    if (strcmp(what, "problems") == 0) {
        static const char *const fl[] = {"exact",     "conservative", "sparse",  "redundant",
                                         "singular-M", "rheonomic",   "singular-config",
                                         "extended",  "nonholonomic", "liegroup", "constant-M"};
        printf("%-16s %4s %4s %4s %5s  %-30s %s\n", "problem", "n_q", "n_v", "n_l", "index",
               "flags", "title");
        for (size_t i = 0; i < mbs_problem_count(); i++) {
            const mbs_problem_def *d = mbs_problem_at(i);
            mbs_problem pb;
            char err[256], flags[256];
            if (mbs_problem_open(&pb, d->name, err, sizeof err) != MBS_OK) {
                printf("%-16s (cannot open: %s)\n", d->name, err);
                continue;
            }
            flag_names(pb.flags, fl, sizeof fl / sizeof fl[0], flags, sizeof flags);
            printf("%-16s %4zu %4zu %4zu %5d  %-30s %s\n", d->name, pb.nq, pb.nv, pb.nl,
                   d->index, flags, d->title);
            if (longform)
                printf("      source: %s; t = [%g, %g]\n", d->citation, d->t0, d->t_end);
            /* a reference text shared by several problems names the file as <name> */
            const char *ref = d->reference ? d->reference : "none (no reference)";
            const char *ph = strstr(ref, "<name>");
            if (longform && ph)
                printf("      reference: %.*s%s%s\n", (int)(ph - ref), ref, d->name, ph + 6);
            else if (longform)
                printf("      reference: %s\n", ref);
            if (mbs_problem_owner(i))
                printf("      plugin: %s\n", mbs_problem_owner(i));
            char desc[512];
            long rd = rank_defect(&pb);
            if (mbs_mech_describe(&pb, desc, sizeof desc) == MBS_OK)
                printf("      mechanism: %s\n", desc);
            else if (rd >= 0)
                printf("      rank defect of G at t0: %ld\n", rd);
            else
                printf("      rank defect of G at t0: not computed\n");
            print_params(d->params, d->n_params);
            mbs_problem_close(&pb);
        }
        return 0;
    }
    if (strcmp(what, "methods") == 0) {
        static const char *const fl[] = {"fixed-step",      "adaptive",      "implicit",
                                         "full-rank-G",     "regular-M",     "sparse",
                                         "energy-conserving", "energy-decaying", "projecting"};
        printf("%-22s %5s %5s %5s  %-28s %s\n", "method", "p_q", "p_v", "p_lam", "flags",
               "summary");
        for (size_t i = 0; i < mbs_method_count(); i++) {
            const mbs_method_def *m = mbs_method_at(i);
            char flags[256];
            flag_names(m->flags, fl, 9, flags, sizeof flags);
            printf("%-22s %5g %5g %5g  %-28s %s\n", m->name, m->order[0], m->order[1],
                   m->order[2], flags, m->summary);
            if (longform) /* source: author, year, references.bib key, equations */
                printf("      source: %s\n", m->citation && *m->citation ? m->citation : "-");
            if (mbs_method_owner(i))
                printf("      plugin: %s\n", mbs_method_owner(i));
            print_params(m->params, m->n_params);
        }
#ifndef MBS_HAVE_SUNDIALS
        printf("(SUNDIALS not found at build time: the peer methods index1/cvode-*, "
               "index1/arkode-*, */ida are not registered)\n");
#endif
        return 0;
    }
    return bad("list: unknown list '%s' (expected problems or methods)%s", what, "");
}

typedef struct cli {
    const char *problem, *method, *format, *out, *resume, *history, *baseline, *trajectory;
    int series, no_history;
    int tol_mode; /* MBS_TOL_LOCAL / MBS_TOL_GLOBAL (harness/run.h) */
    double h, tol, atol, t_end, h0, tol0, ratio, max_cpu, budget, inject, max_wall, max_mem;
    int ratio_given;
    long repeat, levels, max_steps, jobs, output_steps;
    const char *positional;
} cli;

/* The options of run, converge and sweep (each accepts those of its table in
 * cli.c, with their ranges checked there); every bad option is reported, one
 * line each.  Sweep's cluster options go to co (NULL for run and converge). */
static int parse_cli(const char *name, int argc, char **argv, cli *c, mbs_cluster_opts *co)
{
    const mbs_cli_cmd *cmd = mbs_cli_find(name);
    *c = (cli){.h = NAN, .tol = NAN, .atol = NAN, .t_end = NAN, .h0 = NAN, .tol0 = NAN, .ratio = 2.0,
               .repeat = 1, .levels = 6, .format = "table", .jobs = 1};
    if (co)
        mbs_cluster_opts_init(co);
    int errors = 0;
    for (int i = 2; i < argc; i++) {
        mbs_cli_arg a;
        int k = mbs_cli_next(cmd, argc, argv, &i, &a);
        if (k < 0) {
            errors++;
            continue;
        }
        if (k == 0) {
            if (c->positional)
                errors += bad("%s: unexpected argument '%s'", name, a.str) != 0;
            else
                c->positional = a.str;
            continue;
        }
        int r = co ? mbs_cluster_option(&a, co) : 0;
        if (r < 0)
            errors++;
        if (r != 0)
            continue;
        if (mbs_cli_is(&a, "--series"))
            c->series = 1;
        else if (mbs_cli_is(&a, "--no-history"))
            c->no_history = 1;
        else if (mbs_cli_is(&a, "--problem"))
            c->problem = a.str;
        else if (mbs_cli_is(&a, "--history"))
            c->history = a.str;
        else if (mbs_cli_is(&a, "--method"))
            c->method = a.str;
        else if (mbs_cli_is(&a, "--format"))
            c->format = a.str;
        else if (mbs_cli_is(&a, "--out"))
            c->out = a.str;
        else if (mbs_cli_is(&a, "--resume"))
            c->resume = a.str;
        else if (mbs_cli_is(&a, "--baseline"))
            c->baseline = a.str;
        else if (mbs_cli_is(&a, "--trajectory"))
            c->trajectory = a.str;
        else if (mbs_cli_is(&a, "--output-steps"))
            c->output_steps = a.integer;
        else if (mbs_cli_is(&a, "--max-cpu"))
            c->max_cpu = a.num;
        else if (mbs_cli_is(&a, "--max-wall"))
            c->max_wall = a.num;
        else if (mbs_cli_is(&a, "--max-mem"))
            c->max_mem = a.num;
        else if (mbs_cli_is(&a, "--budget"))
            c->budget = a.num;
        else if (mbs_cli_is(&a, "--inject-failure"))
            c->inject = a.num;
        else if (mbs_cli_is(&a, "--h"))
            c->h = a.num;
        else if (mbs_cli_is(&a, "--tol"))
            c->tol = a.num;
        else if (mbs_cli_is(&a, "--atol"))
            c->atol = a.num;
        else if (mbs_cli_is(&a, "--tol-mode")) {
            if (strcmp(a.str, "local") == 0)
                c->tol_mode = MBS_TOL_LOCAL;
            else if (strcmp(a.str, "global") == 0)
                c->tol_mode = MBS_TOL_GLOBAL;
            else
                errors += bad("--tol-mode '%s' is not one of local, global%s", a.str, "") != 0;
        } else if (mbs_cli_is(&a, "--t-end"))
            c->t_end = a.num;
        else if (mbs_cli_is(&a, "--h0"))
            c->h0 = a.num;
        else if (mbs_cli_is(&a, "--tol0"))
            c->tol0 = a.num;
        else if (mbs_cli_is(&a, "--ratio"))
            c->ratio = a.num, c->ratio_given = 1;
        else if (mbs_cli_is(&a, "--repeat"))
            c->repeat = a.integer;
        else if (mbs_cli_is(&a, "--levels"))
            c->levels = a.integer;
        else if (mbs_cli_is(&a, "--max-steps"))
            c->max_steps = a.integer;
        else if (mbs_cli_is(&a, "--jobs"))
            c->jobs = a.integer;
        else
            errors += bad("%s: option %s is in the manual but not handled", name, a.opt->name) != 0;
    }
    if (co && !errors && mbs_cluster_opts_check(co) != 0)
        errors++;
    return errors ? 2 : 0;
}

static int cmd_run(int argc, char **argv)
{
    cli c;
    int r = parse_cli("run", argc, argv, &c, NULL);
    if (r)
        return r;
    if (!c.problem || !c.method)
        return bad("run: -p PROBLEM and -m METHOD are required%s%s", "", "");
    if (c.positional)
        return bad("run: unexpected argument '%s'%s", c.positional, "");
    if (strcmp(c.format, "table") && strcmp(c.format, "json") && strcmp(c.format, "csv"))
        return bad("--format '%s' is not one of table, json, csv%s", c.format, "");
    const mbs_method_def *m;
    mbs_params mp;
    char err[512];
    if (mbs_method_parse(c.method, &m, &mp, err, sizeof err) != MBS_OK)
        return bad("%s%s", err, "");
    if ((m->flags & MBS_M_FIXED_STEP) && (!isnan(c.tol) || !isnan(c.atol)))
        return bad("run: %s is fixed-step: %s applies to adaptive methods only (give --h alone)",
                   m->name, isnan(c.tol) ? "--atol" : "--tol");
    mbs_run_spec spec = {.problem = c.problem, .method = c.method, .h = c.h, .tol = c.tol,
                         .t_end = c.t_end, .repeat = (int)c.repeat, .max_steps = c.max_steps,
                         .max_cpu = c.max_cpu, .inject_fail_t = c.inject, .measure = 1,
                         .atol = c.atol, .tol_mode = c.tol_mode, .max_wall = c.max_wall,
                         .max_mem = c.max_mem, .output_steps = c.output_steps,
                         .trajectory = c.trajectory};
    mbs_record rec;
    if (mbs_run(&spec, &rec, err, sizeof err) != MBS_OK)
        return bad("%s%s", err, "");
    if (strcmp(c.format, "json") == 0) {
        char *s = mbs_record_json(&rec);
        puts(s ? s : "null");
        free(s);
    } else if (strcmp(c.format, "csv") == 0) {
        mbs_record_csv_header(stdout);
        mbs_record_csv(&rec, stdout);
    } else {
        mbs_record_print_long(&rec, stdout);
    }
    int status = rec.status == MBS_OK ? 0 : 1;
    if (rec.status == MBS_NO_MEMORY) { /* refused or failed for memory: say so, exit 2 */
        fprintf(stderr, "mbsbench: %s\n", rec.reason);
        status = 2;
    }
    mbs_record_free(&rec);
    return status;
}

static int cmd_converge(int argc, char **argv)
{
    cli c;
    int r = parse_cli("converge", argc, argv, &c, NULL);
    if (r)
        return r;
    if (!c.problem || !c.method)
        return bad("converge: -p PROBLEM and -m METHOD are required%s%s", "", "");
    if (c.positional)
        return bad("converge: unexpected argument '%s'%s", c.positional, "");
    if (strcmp(c.format, "table") && strcmp(c.format, "json"))
        return bad("--format '%s' is not one of table, json%s", c.format, "");
    if (isnan(c.h0) == isnan(c.tol0))
        return bad("converge: give exactly one of --h0 (fixed-step) or --tol0 (adaptive)%s%s",
                   "", "");
    const mbs_method_def *m;
    mbs_params mp;
    char err[512];
    if (mbs_method_parse(c.method, &m, &mp, err, sizeof err) != MBS_OK)
        return bad("%s%s", err, "");
    int fixed = (m->flags & MBS_M_FIXED_STEP) != 0;
    if (fixed && isnan(c.h0))
        return bad("converge: %s is fixed-step: use --h0%s", m->name, "");
    if (!fixed && isnan(c.tol0))
        return bad("converge: %s is adaptive: use --tol0%s", m->name, "");
    mbs_run_spec base = {.problem = c.problem, .method = c.method, .t_end = c.t_end,
                         .repeat = 0, .max_steps = c.max_steps, .max_cpu = c.max_cpu,
                         .measure = 1, .tol_mode = c.tol_mode, .max_wall = c.max_wall,
                         .max_mem = c.max_mem, .output_steps = c.output_steps};
    if (fixed && c.tol_mode == MBS_TOL_GLOBAL)
        return bad("converge: --tol-mode global needs an adaptive method; %s is fixed-step%s",
                   m->name, "");
    mbs_converge *cv = malloc(sizeof *cv);
    if (!cv)
        return 2;
    /* Tolerance studies default to decades. */
    double ratio = c.ratio_given || fixed ? c.ratio : 10.0;
    if (mbs_converge_run(&base, fixed ? c.h0 : c.tol0, (int)c.levels, ratio, cv, err,
                         sizeof err) != MBS_OK) {
        free(cv);
        return bad("%s%s", err, "");
    }
    if (strcmp(c.format, "json") == 0) {
        char *s = mbs_converge_json(cv);
        puts(s ? s : "null");
        free(s);
    } else {
        mbs_converge_print(cv, stdout);
    }
    int failed = 0;
    for (int i = 0; i < cv->levels; i++)
        failed |= cv->rec[i].status != MBS_OK;
    mbs_converge_free(cv);
    free(cv);
    return failed ? 1 : 0;
}

static int cmd_sweep(int argc, char **argv)
{
    cli c;
    mbs_cluster_opts co;
    if (parse_cli("sweep", argc, argv, &c, &co))
        return 2;
    int shard = 0, shards = 0;
    if (co.shard && mbs_shard_parse(co.shard, &shard, &shards) != 0)
        return 2;
    if (co.cost_from && !co.shard && !co.slurm)
        return bad("sweep: --cost-from goes with --shard or --slurm%s%s", "", "");
    if (!c.positional)
        return bad("sweep: SUITE file required%s%s", "", "");
    if (c.out && c.resume)
        return bad("sweep: give --out or --resume, not both%s%s", "", "");
    struct stat st_resume;
    if (c.resume && (stat(c.resume, &st_resume) != 0 || !S_ISDIR(st_resume.st_mode)))
        return bad("sweep: --resume %s: no such directory, nothing to resume (a new sweep "
                   "takes --out %s)", c.resume, c.resume);
    mbs_suite s;
    char err[8192];
    if (mbs_suite_load(c.positional, &s, err, sizeof err) != MBS_OK) {
        mbs_print_prefixed(stderr, err); /* one line per problem found, in file order */
        return 2;
    }
    if (c.baseline) { /* per-case budgets from the baseline */
        mbs_results base;
        char berr[1024];
        if (mbs_baseline_load(c.baseline, &base, berr, sizeof berr) != 0) {
            mbs_suite_free(&s);
            fprintf(stderr, "mbsbench: sweep: --baseline: %s\n", berr);
            return 2;
        }
        size_t nb = mbs_baseline_budgets(&base, &s);
        mbs_results_free(&base);
        fprintf(stderr, "mbsbench: %zu of %zu runs budgeted from %s (10x steps and CPU)\n", nb,
                s.n_runs, c.baseline);
    }
    for (size_t i = 0; i < s.n_runs; i++) { /* command-line budgets override the suite's */
        mbs_run_spec *rs = &s.runs[i];
        if (c.max_steps > 0)
            rs->max_steps = c.max_steps;
        if (c.max_cpu > 0.0)
            rs->max_cpu = c.max_cpu;
        if (c.max_wall > 0.0)
            rs->max_wall = c.max_wall;
        if (c.max_mem > 0.0)
            rs->max_mem = c.max_mem;
    }
    if (co.slurm) {
        if (!c.out) {
            mbs_suite_free(&s);
            return bad("sweep --slurm: --out DIR required (a directory every node can reach)%s%s",
                       "", "");
        }
        mbs_slurm_passthrough pass = {.baseline = c.baseline, .series = c.series,
                                      .budget = c.budget, .max_cpu = c.max_cpu,
                                      .max_wall = c.max_wall, .max_mem = c.max_mem,
                                      .max_steps = c.max_steps};
        int st = mbs_slurm_sweep(&s, c.positional, c.out, &co, &pass, stdout);
        mbs_suite_free(&s);
        return st;
    }
    mbs_shard_plan plan;
    if (co.shard) {
        if ((size_t)shards > s.n_runs) {
            fprintf(stderr, "mbsbench: --shard %s: %d shards exceed the %zu runs of suite %s\n",
                    co.shard, shards, s.n_runs, s.name);
            mbs_suite_free(&s);
            return 2;
        }
        if (mbs_shard_plan_make(&s, shards, co.cost_from, &plan, err, sizeof err) != 0) {
            fprintf(stderr, "mbsbench: sweep --shard: %s\n", err);
            mbs_suite_free(&s);
            return 2;
        }
    }
    char dir[4096];
    if (c.resume)
        snprintf(dir, sizeof dir, "%s", c.resume);
    else if (c.out)
        snprintf(dir, sizeof dir, "%s", c.out);
    else {
        char stamp[32];
        mbs_dir_stamp(stamp, sizeof stamp);
        snprintf(dir, sizeof dir, "results/%s-%s", s.name, stamp);
    }
    mbs_sweep_options opt = {.jobs = (int)c.jobs, .resume = c.resume != NULL,
                             .budget = c.budget, .series = c.series,
                             .plan = co.shard ? &plan : NULL, .shard = shard};
    int st = mbs_sweep(&s, dir, &opt, stdout);
    if (co.shard)
        mbs_shard_plan_free(&plan);
    mbs_suite_free(&s);
    if (st < 2 && !c.no_history) { /* results history (harness/history.h) */
        char db[4200];
        int use = 1;
        if (c.history)
            snprintf(db, sizeof db, "%s", c.history);
        else
            use = mbs_history_default_path(dir, db, sizeof db) == 0;
        if (use && mbs_history_append(db, dir, err, sizeof err) != 0)
            fprintf(stderr, "mbsbench: history not updated: %s\n", err);
        if (!use)
            fprintf(stderr, "mbsbench: %s lies outside a results/ directory: the sweep stays "
                            "out of the results history (--history DB records it)\n", dir);
    }
    return st;
}

static int cmd_summary(int argc, char **argv)
{
    const mbs_cli_cmd *cmd = mbs_cli_find("summary");
    const char *dir = NULL, *report = NULL, *format = NULL;
    int brief = 0;
    mbs_err_kind ek = MBS_ERR_FINAL;
    for (int i = 2; i < argc; i++) {
        mbs_cli_arg a;
        int k = mbs_cli_next(cmd, argc, argv, &i, &a);
        if (k < 0)
            return 2;
        if (k == 0 && dir)
            return bad("summary: unexpected argument '%s'%s", a.str, "");
        if (k == 0)
            dir = a.str;
        else if (mbs_cli_is(&a, "--brief"))
            brief = 1;
        else if (mbs_cli_is(&a, "--error") && mbs_err_kind_parse(a.str, &ek) != 0)
            return bad("summary: --error '%s' must be final or traj%s", a.str, "");
        else if (mbs_cli_is(&a, "--format"))
            format = a.str;
        else if (mbs_cli_is(&a, "--report"))
            report = a.str;
    }
    if (!dir)
        return bad("summary: RESULTS_DIR required%s%s", "", "");
    if (brief && format)
        return bad("summary: give --brief or --format, not both%s%s", "", "");
    if (report && !brief)
        return bad("summary: --report goes with --brief%s%s", "", "");
    if (brief)
        return mbs_brief_summary(dir, report, ek, stdout);
    if (format && strcmp(format, "iftomm") == 0)
        return mbs_iftomm_table(dir, stdout);
    if (format && strcmp(format, "table") != 0)
        return mbs_summary_table(dir, format,
                                 ek == MBS_ERR_TRAJ ? MBS_SUMMARY_TRAJ : MBS_SUMMARY_FINAL, stdout);
    int n_failed;
    return mbs_summary(dir, stdout, ek, &n_failed);
}

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
} dispatch[] = {
    {"list", cmd_list},
    {"run", cmd_run},
    {"converge", cmd_converge},
    {"battery", mbs_cmd_battery},
    {"sweep", cmd_sweep},
    {"merge", mbs_cmd_merge},
    {"summary", cmd_summary},
    {"report", mbs_cmd_report},
    {"reproduce", mbs_cmd_reproduce},
    {"baseline", mbs_cmd_baseline},
    {"compare", mbs_cmd_compare},
    {"history", mbs_cmd_history},
    {"check-problem", mbs_cmd_check_problem},
    {"reference", mbs_cmd_reference},
    {"references", mbs_cmd_reference},
};

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    /* the shipped mechanism files (mechanisms/ *.mech), then the plugins (any
     * position): every command sees their entries */
    char mdir[4096], merr[1024];
    mbs_data_path("mechanisms", mdir, sizeof mdir);
    if (mbs_mech_register_dir(mdir, merr, sizeof merr) > 0)
        fprintf(stderr, "mbsbench: warning: %s (that mechanism is not available)\n", merr);
    atexit(mbs_mech_unload_all);
    if (argc >= 2 && mbs_plugin_take_options(&argc, argv) != 0)
        return 2;
    if (argc < 2) {
        mbs_cli_help(NULL, stderr);
        return 2;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("mbsbench %s\n", mbs_version_string());
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        mbs_cli_help(NULL, stdout);
        return 0;
    }
    for (size_t k = 0; k < sizeof dispatch / sizeof *dispatch; k++) {
        if (strcmp(argv[1], dispatch[k].name) != 0)
            continue;
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                mbs_cli_help(mbs_cli_find(argv[1]), stdout);
                return 0;
            }
        return dispatch[k].fn(argc, argv);
    }
    fprintf(stderr, "mbsbench: unknown command '%s' ('mbsbench --help' lists the commands)\n",
            argv[1]);
    return 2;
}
