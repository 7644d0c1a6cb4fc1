/* mbsbench command line: list, run, converge, sweep, summary.
 * Exit status: 0 success, 1 a run failed numerically, 2 bad input or I/O error. */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "converge.h"
#include "history.h"
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
#include "../problems/registry.h"
#include "run.h"
#include "shard.h"
#include "slurm.h"
#include "sweep.h"

static const char usage[] =
    "usage: mbsbench --version | --help | COMMAND --help\n"
    "       mbsbench [--plugin PATH.so]... COMMAND ...  (problems and methods of a plugin)\n"
    "       mbsbench list problems|methods [--long | --markdown]\n"
    "       mbsbench run -p PROBLEM[:k=v,...] -m METHOD[:k=v,...] (--h H | --tol TOL)\n"
    "                    [--t-end T] [--repeat K] [--max-steps N] [--max-cpu S]\n"
    "                    [--max-wall S] [--max-mem BYTES]\n"
    "                    [--format table|json|csv] [--inject-failure T]\n"
    "                    [--atol A] [--tol-mode local|global]\n"
    "       mbsbench converge -p P -m M (--h0 H | --tol0 TOL) [--levels L] [--ratio R]\n"
    "                    [--t-end T] [--format table|json] [--tol-mode local|global]\n"
    "                    [--max-steps N] [--max-cpu S] [--max-wall S] [--max-mem BYTES]\n"
    "       mbsbench sweep SUITE [-j N] [--out DIR | --resume DIR] [--budget SECONDS] [--baseline FILE]\n"
    "                    [--series] [--history DB | --no-history] [--max-steps N]\n"
    "                    [--max-cpu S] [--max-wall S] [--max-mem BYTES]\n"
    "                    [--shard I/N [--cost-from DIR]]\n"
    "                    [--slurm --out DIR [--array-size N] [--partition P] [--time T]\n"
    "                     [--account A] [--qos Q] [--cpus-per-task C] [--mem M]\n"
    "                     [--sbatch-option OPT]... [--cost-from DIR] [--submit]]\n"
    "       mbsbench merge OUT DIR... [--partial] [--history DB | --no-history]\n"
    "       mbsbench summary RESULTS_DIR [--brief [--report PATH] | --format table|md|csv|latex]\n"
    "       mbsbench report RESULTS_DIR [--out DIR] [--latex]\n"
    "       mbsbench reproduce --list | --all [--page DIR] | NAME [--results DIR] [--out DIR]\n"
    "                    [-j N] [--dir DIR]\n"
    "       mbsbench baseline bless RESULTS_DIR -o BASELINE.json\n"
    "       mbsbench compare BASELINE.json RESULTS_DIR [--allow-counters] [--cpu-threshold R]\n"
    "                    [--alpha A] [-v]\n"
    "       mbsbench history -p P -m M --metric cpu_median|err_q|order_q [--db FILE]\n"
    "                    [--glob] [--plot [--out FILE.png]]\n"
    "       mbsbench check-problem -p PROBLEM[:k=v,...]\n"
    "       mbsbench reference(s) [-p] PROBLEM[:k=v,...] [--t-end T] [--tol TOL] [--methods A,B]\n"
    "                    [--min-digits D] [--dry-run]\n";

/* After the usage lines of --help and of the commands that take -p/-m. */
static const char params_note[] =
    "PROBLEM and METHOD take parameters after a colon, e.g. heavytop:coords=rotmat,\n"
    "dca/rk4:threads=2, index1/tsit5:linsol=chol; 'mbsbench list problems|methods' shows\n"
    "every problem, method (tsit5, vern6, liegroup/genalpha, ...) and parameter with its\n"
    "default and range.  docs/usage.md and 'man mbsbench' explain each command.\n";

/* Print "mbsbench: message" (one line per line of the message); returns 2. */
static int bad(const char *fmt, const char *a, const char *b);

/* One line on what each command does; `mbsbench COMMAND --help` prints it with
 * the command's own lines of the usage text. */
static const char *const command_doc[][2] = {
    {"list", "list the registered problems or methods with their parameters"},
    {"run", "integrate one problem with one method and print its record"},
    {"converge", "refinement study: observed orders (fixed step) or tolerance proportionality"},
    {"sweep", "run the grid of a suite file, one record per run, into a results directory"},
    {"merge", "put shard directories (sweep --shard, --slurm) together into one results directory"},
    {"summary", "table (or with --brief, the short verdict) of a results directory"},
    {"report", "figures, tables and index.html of a results directory"},
    {"reproduce", "published tables and figures checked against ours"},
    {"baseline", "bless a results directory as the regression baseline"},
    {"compare", "regression check of a results directory against a baseline"},
    {"history", "a case's metric over all recorded sweeps"},
    {"check-problem", "the problem battery: consistency of g, G, gamma, M, energy, initial values"},
    {"reference", "compute and store a reference solution (two independent computations)"},
    {"references", "the same as reference"},
};

static int command_help(const char *cmd)
{
    const char *doc = NULL;
    for (size_t i = 0; i < sizeof command_doc / sizeof *command_doc; i++)
        if (strcmp(command_doc[i][0], cmd) == 0)
            doc = command_doc[i][1];
    if (!doc)
        return bad("unknown command '%s' (mbsbench --help lists them)%s", cmd, "");
    printf("mbsbench %s: %s\n", cmd, doc);
    const char *key = strcmp(cmd, "references") == 0 ? "reference" : cmd;
    int in = 0;
    for (const char *l = usage; *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        const char *m = strstr(l, "mbsbench ");
        if (m && m < l + n) { /* a command's first line */
            size_t k = strlen(key);
            in = strncmp(m + 9, key, k) == 0 && (m[9 + k] == ' ' || m[9 + k] == '(' ||
                                                 m[9 + k] == '\n');
        }
        if (in)
            printf("%.*s\n", (int)n, l);
        l += n + (e ? 1 : 0);
    }
    if (!strcmp(key, "run") || !strcmp(key, "converge") || !strcmp(key, "list") ||
        !strcmp(key, "check-problem") || !strcmp(key, "reference"))
        fputs(params_note, stdout);
    return 0;
}

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

static int cmd_list(int argc, char **argv)
{
    int longform = argc == 4 && strcmp(argv[3], "--long") == 0;
    int markdown = argc == 4 && strcmp(argv[3], "--markdown") == 0;
    if (argc != 3 && !longform && !markdown)
        return bad("list: expected 'problems' or 'methods' [--long | --markdown]%s%s", "", "");
    if (markdown && strcmp(argv[2], "methods") == 0)
        return method_table();
    if (strcmp(argv[2], "problems") == 0) {
        static const char *const fl[] = {"exact",     "conservative", "sparse",  "redundant",
                                         "singular-M", "rheonomic",   "singular-config",
                                         "extended"};
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
            flag_names(pb.flags, fl, 8, flags, sizeof flags);
            printf("%-16s %4zu %4zu %4zu %5d  %-30s %s\n", d->name, pb.nq, pb.nv, pb.nl,
                   d->index, flags, d->title);
            printf("      source: %s; t = [%g, %g]\n", d->citation, d->t0, d->t_end);
            printf("      reference: %s\n", d->reference ? d->reference : "none (no reference)");
            if (mbs_problem_owner(i))
                printf("      plugin: %s\n", mbs_problem_owner(i));
            print_params(d->params, d->n_params);
            mbs_problem_close(&pb);
        }
        return 0;
    }
    if (strcmp(argv[2], "methods") == 0) {
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
            if (longform) /* source: seed and equation numbers (references.bib) */
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
    return bad("list: unknown list '%s' (expected problems or methods)%s", argv[2], "");
}

typedef struct cli {
    const char *problem, *method, *format, *out, *resume, *history, *baseline;
    int series, no_history;
    int tol_mode; /* MBS_TOL_LOCAL / MBS_TOL_GLOBAL (harness/run.h) */
    double h, tol, atol, t_end, h0, tol0, ratio, max_cpu, budget, inject, max_wall, max_mem;
    int ratio_given;
    long repeat, levels, max_steps, jobs;
    const char *positional;
} cli;

static int number(const char *opt, const char *val, double *out)
{
    if (!val)
        return bad("%s needs a value%s", opt, "");
    if (mbs_parse_double(val, out) != 0)
        return bad("%s: '%s' is not a finite number", opt, val);
    return 0;
}

static int integer(const char *opt, const char *val, long *out)
{
    if (!val)
        return bad("%s needs a value%s", opt, "");
    if (mbs_parse_long(val, out) != 0)
        return bad("%s: '%s' is not an integer", opt, val);
    return 0;
}

static int parse_cli(int argc, char **argv, cli *c)
{
    *c = (cli){.h = NAN, .tol = NAN, .atol = NAN, .t_end = NAN, .h0 = NAN, .tol0 = NAN, .ratio = 2.0,
               .repeat = 1, .levels = 6, .format = "table", .jobs = 1};
    int errors = 0; /* every bad option is reported, one line each */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int r = 0, used = 1;
        if (strcmp(a, "--series") == 0 || strcmp(a, "--no-history") == 0) {
            *(a[2] == 's' ? &c->series : &c->no_history) = 1; /* flags without value */
            continue;
        }
        if (strcmp(a, "-p") == 0 || strcmp(a, "--problem") == 0)
            c->problem = v;
        else if (strcmp(a, "--history") == 0)
            c->history = v;
        else if (strcmp(a, "-m") == 0 || strcmp(a, "--method") == 0)
            c->method = v;
        else if (strcmp(a, "--format") == 0)
            c->format = v;
        else if (strcmp(a, "--out") == 0)
            c->out = v;
        else if (strcmp(a, "--resume") == 0)
            c->resume = v;
        else if (strcmp(a, "--baseline") == 0)
            c->baseline = v;
        else if (strcmp(a, "--max-cpu") == 0)
            r = number(a, v, &c->max_cpu);
        else if (strcmp(a, "--max-wall") == 0)
            r = number(a, v, &c->max_wall);
        else if (strcmp(a, "--max-mem") == 0)
            r = number(a, v, &c->max_mem);
        else if (strcmp(a, "--budget") == 0)
            r = number(a, v, &c->budget);
        else if (strcmp(a, "--inject-failure") == 0)
            r = number(a, v, &c->inject);
        else if (strcmp(a, "--h") == 0)
            r = number(a, v, &c->h);
        else if (strcmp(a, "--tol") == 0)
            r = number(a, v, &c->tol);
        else if (strcmp(a, "--atol") == 0)
            r = number(a, v, &c->atol);
        else if (strcmp(a, "--tol-mode") == 0) {
            if (v && strcmp(v, "local") == 0)
                c->tol_mode = MBS_TOL_LOCAL;
            else if (v && strcmp(v, "global") == 0)
                c->tol_mode = MBS_TOL_GLOBAL;
            else
                r = bad("--tol-mode '%s' is not one of local, global%s", v ? v : "", "");
        }
        else if (strcmp(a, "--t-end") == 0)
            r = number(a, v, &c->t_end);
        else if (strcmp(a, "--h0") == 0)
            r = number(a, v, &c->h0);
        else if (strcmp(a, "--tol0") == 0)
            r = number(a, v, &c->tol0);
        else if (strcmp(a, "--ratio") == 0)
            r = number(a, v, &c->ratio), c->ratio_given = 1;
        else if (strcmp(a, "--repeat") == 0)
            r = integer(a, v, &c->repeat);
        else if (strcmp(a, "--levels") == 0)
            r = integer(a, v, &c->levels);
        else if (strcmp(a, "--max-steps") == 0)
            r = integer(a, v, &c->max_steps);
        else if (strcmp(a, "-j") == 0 || strcmp(a, "--jobs") == 0)
            r = integer(a, v, &c->jobs);
        else if (a[0] != '-' && !c->positional) {
            c->positional = a;
            used = 0;
        } else {
            errors += bad("unknown option '%s'%s", a, "") != 0;
            continue;
        }
        if (r) {
            errors++;
            if (v)
                i++;
            continue;
        }
        if (used) {
            if (!v) {
                errors += bad("%s needs a value%s", a, "") != 0;
                continue;
            }
            i++;
        }
    }
    if (c->max_steps < 0)
        errors += bad("--max-steps %s must be positive%s", "(negative)", "") != 0;
    if (c->max_cpu < 0.0)
        errors += bad("--max-cpu must be positive%s%s", "", "") != 0;
    if (c->max_wall < 0.0)
        errors += bad("--max-wall must be positive%s%s", "", "") != 0;
    if (c->max_mem < 0.0)
        errors += bad("--max-mem must be positive%s%s", "", "") != 0;
    if (c->budget < 0.0)
        errors += bad("--budget must be positive%s%s", "", "") != 0;
    if (c->inject < 0.0)
        errors += bad("--inject-failure must be a positive time%s%s", "", "") != 0;
    if (!isnan(c->atol) && !(c->atol > 0.0 && c->atol < 1.0))
        errors += bad("--atol must lie in (0, 1)%s%s", "", "") != 0;
    return errors ? 2 : 0;
}

static int cmd_run(int argc, char **argv)
{
    cli c;
    int r = parse_cli(argc, argv, &c);
    if (r)
        return r;
    if (!c.problem || !c.method)
        return bad("run: -p PROBLEM and -m METHOD are required%s%s", "", "");
    if (c.positional)
        return bad("run: unexpected argument '%s'%s", c.positional, "");
    if (strcmp(c.format, "table") && strcmp(c.format, "json") && strcmp(c.format, "csv"))
        return bad("--format '%s' is not one of table, json, csv%s", c.format, "");
    if (c.repeat < 1 || c.repeat > 100000)
        return bad("--repeat must lie in [1, 100000]%s%s", "", "");
    mbs_run_spec spec = {.problem = c.problem, .method = c.method, .h = c.h, .tol = c.tol,
                         .t_end = c.t_end, .repeat = (int)c.repeat, .max_steps = c.max_steps,
                         .max_cpu = c.max_cpu, .inject_fail_t = c.inject, .measure = 1,
                         .atol = c.atol, .tol_mode = c.tol_mode, .max_wall = c.max_wall,
                         .max_mem = c.max_mem};
    mbs_record rec;
    char err[512];
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
    int r = parse_cli(argc, argv, &c);
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
    if (c.levels < 2 || c.levels > MBS_MAX_LEVELS)
        return bad("--levels must lie in [2, 40]%s%s", "", "");
    mbs_run_spec base = {.problem = c.problem, .method = c.method, .t_end = c.t_end,
                         .repeat = 0, .max_steps = c.max_steps, .max_cpu = c.max_cpu,
                         .measure = 1, .tol_mode = c.tol_mode, .max_wall = c.max_wall,
                         .max_mem = c.max_mem};
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
    int r = mbs_cluster_take_options(&argc, argv, &co);
    r |= parse_cli(argc, argv, &c);
    if (r)
        return 2;
    int shard = 0, shards = 0;
    if (co.shard && mbs_shard_parse(co.shard, &shard, &shards) != 0)
        return 2;
    if (co.cost_from && !co.shard && !co.slurm)
        return bad("sweep: --cost-from goes with --shard or --slurm%s%s", "", "");
    if (!c.positional)
        return bad("sweep: SUITE file required%s%s", "", "");
    if (c.jobs < 1 || c.jobs > 256) {
        char jobs[32];
        snprintf(jobs, sizeof jobs, "%ld", (long)c.jobs);
        return bad("-j %s must lie in [1, 256]%s", jobs, "");
    }
    mbs_suite s;
    char err[8192];
    if (mbs_suite_load(c.positional, &s, err, sizeof err) != MBS_OK) {
        /* one line per problem found */
        fputs(err, stderr);
        return 2;
    }
    if (c.baseline) { /* per-case budgets from the baseline (issue 17) */
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
    if (c.out && c.resume) {
        mbs_suite_free(&s);
        return bad("sweep: give --out or --resume, not both%s%s", "", "");
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
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
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
    }
    return st;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    /* plugins first (any position): every command sees their entries */
    if (mbs_plugin_take_options(&argc, argv) != 0)
        return 2;
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("mbsbench %s\n", mbs_version_string());
        return 0;
    }
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return command_help(argv[1]);
    if (strcmp(argv[1], "list") == 0)
        return cmd_list(argc, argv);
    if (strcmp(argv[1], "run") == 0)
        return cmd_run(argc, argv);
    if (strcmp(argv[1], "converge") == 0)
        return cmd_converge(argc, argv);
    if (strcmp(argv[1], "sweep") == 0)
        return cmd_sweep(argc, argv);
    if (strcmp(argv[1], "check-problem") == 0)
        return mbs_cmd_check_problem(argc, argv);
    if (strcmp(argv[1], "merge") == 0)
        return mbs_cmd_merge(argc, argv);
    if (strcmp(argv[1], "reference") == 0 || strcmp(argv[1], "references") == 0)
        return mbs_cmd_reference(argc, argv);
    if (strcmp(argv[1], "report") == 0)
        return mbs_cmd_report(argc, argv);
    if (strcmp(argv[1], "reproduce") == 0)
        return mbs_cmd_reproduce(argc, argv);
    if (strcmp(argv[1], "baseline") == 0)
        return mbs_cmd_baseline(argc, argv);
    if (strcmp(argv[1], "compare") == 0)
        return mbs_cmd_compare(argc, argv);
    if (strcmp(argv[1], "history") == 0)
        return mbs_cmd_history(argc, argv);
    if (strcmp(argv[1], "summary") == 0) {
        const char *dir = NULL, *report = NULL, *format = NULL;
        int brief = 0;
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--brief") == 0)
                brief = 1;
            else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
                format = argv[++i];
            else if (strcmp(argv[i], "--report") == 0 && i + 1 < argc)
                report = argv[++i];
            else if (argv[i][0] != '-' && !dir)
                dir = argv[i];
            else
                return bad("summary: unexpected argument '%s'%s", argv[i], "");
        }
        if (!dir)
            return bad("summary: RESULTS_DIR required%s%s", "", "");
        if (brief)
            return mbs_brief_summary(dir, report, stdout);
        if (format && strcmp(format, "table") != 0)
            return mbs_summary_table(dir, format, stdout);
        int n_failed;
        return mbs_summary(dir, stdout, &n_failed);
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, stdout);
        fputs(params_note, stdout);
        return 0;
    }
    fprintf(stderr, "mbsbench: unknown command '%s'\n%s", argv[1], usage);
    return 2;
}
