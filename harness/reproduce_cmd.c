/* `mbsbench reproduce` (harness/reproduce.h): lists the reproductions, runs each
 * one's suite and checks it with mbs_reproduce_check (reproduce.c), and with
 * --page writes the page of all reproductions. */
#include "reproduce.h"
#include "reproduce_impl.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "html.h"
#include "iftomm.h"
#include "io.h"
#include "shard.h"
#include "sweep.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted names of the .expect files in dir (malloc'ed array of malloc'ed names). */
static char **list_names(const char *dir, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **names = NULL;
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len <= 7 || strcmp(de->d_name + len - 7, ".expect") != 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn)
                break;
            names = nn;
        }
        names[*n] = strndup(de->d_name, len - 7);
        if (names[*n])
            (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(names, *n, sizeof *names, cmp_str);
    return names;
}

/* --results DIR must hold this reproduction's suite: refused (one line) when its
 * meta.json names another suite, or the same suite with another grid (suite_digest,
 * harness/shard.h).  A directory without meta.json cannot be told apart: checked
 * run by run as before. */
static int check_results_suite(const expect *e, const char *rdir)
{
    char path[4200], suite_path[4096], err[8192];
    snprintf(path, sizeof path, "%s/meta.json", rdir);
    json_t *m = json_load_file(path, 0, NULL);
    if (!m)
        return 0;
    mbs_suite s;
    mbs_data_path(e->suite, suite_path, sizeof suite_path);
    if (mbs_suite_load(suite_path, &s, err, sizeof err) != MBS_OK) {
        fputs(err, stderr);
        json_decref(m);
        return -1;
    }
    char digest[32];
    mbs_suite_digest(&s, digest, sizeof digest);
    const char *name = json_string_value(json_object_get(m, "suite"));
    const char *d = json_string_value(json_object_get(m, "suite_digest"));
    int bad = 0;
    if (name && strcmp(name, s.name) != 0) {
        fprintf(stderr, "mbsbench: reproduce: '%s' holds results of suite %s, not %s (%s)\n",
                rdir, name, s.name, e->suite);
        bad = 1;
    } else if (d && strcmp(d, digest) != 0) {
        fprintf(stderr, "mbsbench: reproduce: '%s' holds results of another version of suite %s "
                        "(grid digest %s, %s gives %s)\n",
                rdir, s.name, d, e->suite, digest);
        bad = 1;
    }
    mbs_suite_free(&s);
    json_decref(m);
    return bad ? -1 : 0;
}

/* Run the suite file `suite` (relative to the data directory) into outdir, or
 * into results/reproduce-NAME-STAMP; the directory goes to rdir.  0, or 2 when
 * the suite cannot be read or the sweep fails as a whole (one line on stderr). */
static int run_suite(const char *suite, const char *name, const char *outdir, int jobs,
                     FILE *out, char *rdir, size_t rlen)
{
    mbs_suite s;
    char err[8192];
    char suite_path[4096];
    mbs_data_path(suite, suite_path, sizeof suite_path);
    if (mbs_suite_load(suite_path, &s, err, sizeof err) != MBS_OK) {
        mbs_print_prefixed(stderr, err);
        return 2;
    }
    if (outdir)
        snprintf(rdir, rlen, "%s", outdir);
    else {
        char stamp[32];
        mbs_dir_stamp(stamp, sizeof stamp);
        snprintf(rdir, rlen, "results/reproduce-%s-%s", name, stamp);
    }
    fprintf(out, "running %s into %s ...\n", suite, rdir);
    fflush(out);
    FILE *sink = fopen("/dev/null", "w");
    mbs_sweep_options opt = {.jobs = jobs};
    int st = mbs_sweep(&s, rdir, &opt, sink ? sink : out);
    if (sink)
        fclose(sink);
    mbs_suite_free(&s);
    return st == 2 || st >= 128 ? 2 : 0;
}

/* The IFToMM reproduction (harness/iftomm.h): not an .expect file, since the
 * library publishes classes and submissions, not values to compare with; it
 * scores the runs of its suite.  Not in --all (its suite runs for hours). */
static const char *const iftomm_suite = "suites/iftomm.suite";

static void iftomm_list(void)
{
    printf("%-22s %s\n%-22s   %s; scored (no published values; not in --all: make iftomm); "
           "suite %s\n",
           "iftomm", "IFToMM benchmark problems: per problem and precision class each method's "
           "cheapest run, and the work-precision figure", "",
           "González, Dopico, Lugrís & Cuadrado 2006 [gonzalez2006benchmarking], classes "
           "1e-1 and 1e-3 with threshold 1e-3",
           iftomm_suite);
}

/* `reproduce iftomm`: the suite's sweep (or --results DIR, any results
 * directory: the scoring names no runs), the tables, and the page with the
 * figure (--page DIR, default reports/<name of the results directory>). */
static int iftomm_run(const char *results, const char *outdir, const char *page, int jobs,
                      FILE *out)
{
    char rdir[4096], def[4200];
    if (results)
        snprintf(rdir, sizeof rdir, "%s", results);
    else if (run_suite(iftomm_suite, "iftomm", outdir, jobs, out, rdir, sizeof rdir) != 0)
        return 2;
    if (!page) {
        mbs_default_report_dir(rdir, def, sizeof def);
        page = def;
    }
    return mbs_iftomm_reproduce(rdir, page, out);
}

static int run_one(const char *dir, const char *name, const char *results, const char *outdir,
                   int jobs, FILE *out)
{
    char path[4096], rdir[4096], why[512] = "";
    snprintf(path, sizeof path, "%s/%s.expect", dir, name);
    expect *e = malloc(sizeof *e);
    if (!e)
        return 2;
    if (access(path, F_OK) != 0) {
        fprintf(stderr, "mbsbench: unknown reproduction '%s' (see 'mbsbench reproduce --list')\n",
                name);
        free(e);
        return 2;
    }
    if (mbs_repro_load_expect(path, e) != 0) {
        mbs_print_prefixed(stderr, e->err);
        free(e);
        return 2;
    }
    if (!mbs_repro_available(e, why, sizeof why)) {
        fprintf(stderr, "mbsbench: reproduction %s is not available: %s\n", name, why);
        free(e);
        return 2;
    }
    if (results) {
        snprintf(rdir, sizeof rdir, "%s", results);
        if (check_results_suite(e, rdir) != 0) {
            free(e);
            return 2;
        }
    } else if (run_suite(e->suite, name, outdir, jobs, out, rdir, sizeof rdir) != 0) {
        free(e);
        return 2;
    }
    free(e);
    return mbs_reproduce_check(path, rdir, out);
}

int mbs_cmd_reproduce(int argc, char **argv)
{
    const char *dir = "reproductions", *results = NULL, *outdir = NULL, *name = NULL, *page = NULL;
    int list = 0, all = 0;
    long jobs = 2;
    const mbs_cli_cmd *cmd = mbs_cli_find("reproduce");
    for (int i = 2; i < argc; i++) {
        mbs_cli_arg a;
        int k = mbs_cli_next(cmd, argc, argv, &i, &a);
        if (k < 0)
            return 2;
        if (mbs_cli_is(&a, "--list"))
            list = 1;
        else if (mbs_cli_is(&a, "--all"))
            all = 1;
        else if (mbs_cli_is(&a, "--dir"))
            dir = a.str;
        else if (mbs_cli_is(&a, "--results"))
            results = a.str;
        else if (mbs_cli_is(&a, "--out"))
            outdir = a.str;
        else if (mbs_cli_is(&a, "--page"))
            page = a.str;
        else if (mbs_cli_is(&a, "--jobs"))
            jobs = a.integer;
        else if (k == 0 && !name)
            name = a.str;
        else {
            fprintf(stderr, "mbsbench: reproduce: unexpected argument '%s'\n", a.str);
            return 2;
        }
    }
    char data_dir[2048];
    if (strcmp(dir, "reproductions") == 0) { /* the default: source tree or installed */
        mbs_data_path(dir, data_dir, sizeof data_dir);
        dir = data_dir;
    }
    if (list + all + (name != NULL) != 1) {
        fprintf(stderr, "mbsbench: usage: mbsbench reproduce --list | --all | NAME "
                        "[--results DIR] [--out DIR] [--dir DIR] [-j N] [--page DIR]\n");
        return 2;
    }
    if (name && strcmp(name, "iftomm") == 0)
        return iftomm_run(results, outdir, page, (int)jobs, stdout);
    if (name && page) {
        fprintf(stderr, "mbsbench: reproduce: --page goes with --all or iftomm, not with %s\n",
                name);
        return 2;
    }
    if (name)
        return run_one(dir, name, results, outdir, (int)jobs, stdout);
    /* --page DIR: index.md and index.html with each reproduction's table (the
     * paper's value and ours side by side), for --all */
    FILE *md = NULL;
    if (page && all) {
        char mdp[4200];
        snprintf(mdp, sizeof mdp, "%s/index.md", page);
        if (mbs_mkdir_p(page) != 0 || !(md = fopen(mdp, "w"))) {
            fprintf(stderr, "mbsbench: reproduce: cannot write %s\n", mdp);
            return 2;
        }
        fprintf(md, "# mbsbench: reproductions of published tables and figures\n\n"
                    "Each table gives the published value, ours, their ratio, the tolerance "
                    "and the verdict; below it, how the published number was read.\n\n");
    }
    size_t n;
    char **names = list_names(dir, &n);
    int worst = 0, n_ok = 0, n_run = 0;
    for (size_t i = 0; i < n; i++) {
        char path[8192], why[512] = "";
        snprintf(path, sizeof path, "%s/%s.expect", dir, names[i]);
        expect *e = malloc(sizeof *e);
        int ok = e && mbs_repro_load_expect(path, e) == 0;
        if (ok && mbs_repro_available(e, why, sizeof why)) {
            if (list)
                printf("%-22s %s\n%-22s   %s; %d quantities; suite %s\n", names[i], e->title, "",
                       e->citation, e->n, e->suite);
            else {
                printf("==== %s\n", names[i]);
                /* the check's text, also kept for the page (--page) */
                char *txt = NULL;
                size_t tlen = 0;
                FILE *mem = page ? open_memstream(&txt, &tlen) : NULL;
                /* --out DIR with --all: each reproduction's sweep into DIR/NAME */
                char sub[4200];
                if (outdir)
                    snprintf(sub, sizeof sub, "%s/%s", outdir, names[i]);
                int st = run_one(dir, names[i], NULL, outdir ? sub : NULL, (int)jobs,
                                 mem ? mem : stdout);
                if (mem) {
                    fclose(mem);
                    fputs(txt ? txt : "", stdout);
                    if (md)
                        fprintf(md, "## %s: %s\n\n%s\n\n```\n%s```\n\n", names[i],
                                st == 0 ? "reproduced" : "NOT reproduced", e->citation,
                                txt ? txt : "");
                    free(txt);
                }
                n_run++;
                n_ok += st == 0;
                worst = st > worst ? st : worst;
                printf("\n");
            }
        } else if (!ok && e) {
            fprintf(stderr, "mbsbench: %s: invalid:\n", path);
            mbs_print_prefixed(stderr, e->err);
            worst = 2;
        }
        free(e);
        free(names[i]);
    }
    free(names);
    if (list)
        iftomm_list();
    if (all)
        printf("%d of %d reproductions reproduced (iftomm is not in --all: make iftomm)\n",
               n_ok, n_run);
    if (md) {
        fprintf(md, "Summary: %d of %d reproductions reproduced.\n", n_ok, n_run);
        fclose(md);
        char mdp[4200], htmlp[4200];
        snprintf(mdp, sizeof mdp, "%s/index.md", page);
        snprintf(htmlp, sizeof htmlp, "%s/index.html", page);
        if (mbs_md_to_html(mdp, htmlp, "mbsbench: reproductions") != 0) {
            fprintf(stderr, "mbsbench: cannot write %s\n", htmlp);
            worst = worst > 2 ? worst : 2;
        } else {
            printf("page: %s\n", htmlp);
        }
    }
    return worst;
}
