/* The manual in the tool: every option a command's parser accepts is in its
 * --help with meaning, default and range, and in the man page and
 * docs/usage.md; options the parsers do not know are refused.  The options
 * come from the parser's own tables (harness/cli.c: mbs_cli_next accepts
 * nothing else), and a scan of the harness sources finds any option spelled outside
 * them, so an option added later is covered without editing this file. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/cli.h"
#include "../harness/io.h"
#include "../harness/suite.h"
#include "../methods/registry.h"
#include "../problems/registry.h"
#include "testutil.h"

/* Collapse runs of white space into one space (--help wraps its text). */
static char *squeeze(const char *s)
{
    char *o = malloc(strlen(s) + 1), *d = o;
    ck_assert_ptr_nonnull(o);
    int sp = 0;
    for (; *s; s++) {
        if (isspace((unsigned char)*s)) {
            sp = 1;
            continue;
        }
        if (sp && d > o)
            *d++ = ' ';
        sp = 0;
        *d++ = *s;
    }
    *d = '\0';
    return o;
}

static void help_text(const char *name, char **out)
{
    char args[128];
    snprintf(args, sizeof args, "%s --help", name);
    ck_assert_int_eq(mbs_test_cli_text(args, NULL, out), 0);
}

/* The option's entry as --help prints it: "-p, --problem PROBLEM..." then its
 * meaning, then "default: ...; range: ...". */
static void check_listed(const char *cmd, const char *help, const mbs_opt *o)
{
    char want[4096], range[256];
    ck_assert_msg(o->doc && *o->doc && o->def && *o->def,
                  "%s %s: the manual (harness/cli.c) gives no meaning or default", cmd, o->name);
    mbs_cli_range(o, range, sizeof range);
    snprintf(want, sizeof want, "%s%s%s%s%s %s default: %s; range: %s", o->alias ? o->alias : "",
             o->alias ? ", " : "", o->name, o->arg ? " " : "", o->arg ? o->arg : "", o->doc,
             o->def, range);
    char *w = squeeze(want), *h = squeeze(help);
    ck_assert_msg(strstr(h, w) != NULL, "'mbsbench %s --help' lacks the entry of %s:\n%s", cmd,
                  o->name, w);
    free(w);
    free(h);
}

START_TEST(help_lists_every_option)
{
    const mbs_cli_cmd *c = mbs_cli_at((size_t)_i);
    char *help = NULL;
    help_text(c->name, &help);
    size_t nc;
    const mbs_opt *common = mbs_cli_common(&nc);
    for (size_t k = 0; k < c->n_opts; k++)
        check_listed(c->name, help, &c->opts[k]);
    for (size_t k = 0; k < nc; k++)
        check_listed(c->name, help, &common[k]);
    /* test hooks: listed under their own heading, not in the synopsis */
    const char *blank = strstr(help, "\n\n"), *hooks = strstr(help, "Test hooks");
    for (size_t k = 0; k < c->n_opts; k++) {
        if (!c->opts[k].hook)
            continue;
        const char *at = strstr(help, c->opts[k].name);
        ck_assert_msg(at && blank && at > blank, "%s: test hook %s in the synopsis", c->name,
                      c->opts[k].name);
        ck_assert_msg(hooks && at > hooks, "%s: test hook %s not under 'Test hooks'", c->name,
                      c->opts[k].name);
        ck_assert_msg(strstr(c->synopsis, c->opts[k].name) == NULL, "%s: %s in the synopsis",
                      c->name, c->opts[k].name);
    }
    /* no two options of a command share a spelling */
    for (size_t a = 0; a < c->n_opts; a++)
        for (size_t b = a + 1; b < c->n_opts; b++) {
            const mbs_opt *x = &c->opts[a], *y = &c->opts[b];
            ck_assert_msg(strcmp(x->name, y->name) && (!x->alias || !y->alias ||
                                                       strcmp(x->alias, y->alias)),
                          "%s: %s and %s share a spelling", c->name, x->name, y->name);
        }
    free(help);
}
END_TEST

/* Whether word is an option of some command or of every command. */
static int known_option(const char *word)
{
    size_t nc;
    const mbs_opt *common = mbs_cli_common(&nc);
    if (!strcmp(word, "--version") || !strcmp(word, "-V"))
        return 1;
    for (size_t k = 0; k < nc; k++)
        if (!strcmp(word, common[k].name) || (common[k].alias && !strcmp(word, common[k].alias)))
            return 1;
    for (size_t i = 0; i < mbs_cli_count(); i++) {
        const mbs_cli_cmd *c = mbs_cli_at(i);
        for (size_t k = 0; k < c->n_opts; k++)
            if (!strcmp(word, c->opts[k].name) ||
                (c->opts[k].alias && !strcmp(word, c->opts[k].alias)))
                return 1;
    }
    return 0;
}

/* Every option spelled in the harness sources ("--name" or "-x" as a whole
 * string literal, as a parser compares it) is in the manual: a parser that
 * compares argv against a literal of its own, past the tables, is caught. */
START_TEST(no_option_outside_the_manual)
{
    DIR *d = opendir("harness");
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    int files = 0, literals = 0;
    char problems[4096] = "";
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 3 || strcmp(e->d_name + n - 2, ".c") != 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "harness/%s", e->d_name);
        char *src = mbs_read_file(path, NULL);
        ck_assert_ptr_nonnull(src);
        files++;
        int line = 1;
        for (const char *p = src; *p; p++) {
            if (*p == '\n')
                line++;
            if (*p == '\'' && p[1] && p[2] == '\'') { /* a character literal such as '"' */
                p += 2;
                continue;
            }
            if (*p != '"' || (p > src && p[-1] == '\\'))
                continue;
            const char *q = p + 1;
            size_t len = strcspn(q, "\"\n");
            if (q[len] != '"') {
                p = q + len - 1;
                continue;
            }
            int opt = len >= 2 && q[0] == '-' && (isalpha((unsigned char)q[1]) ||
                                                  (q[1] == '-' && len >= 3 &&
                                                   isalpha((unsigned char)q[2])));
            for (size_t k = 1; opt && k < len; k++)
                opt = isalnum((unsigned char)q[k]) || q[k] == '-';
            if (opt) {
                char word[64];
                snprintf(word, sizeof word, "%.*s", (int)len, q);
                literals++;
                if (!known_option(word)) {
                    size_t u = strlen(problems);
                    snprintf(problems + u, sizeof problems - u, "\n  %s:%d: %s", path, line,
                             word);
                }
            }
            p = q + len;
        }
        free(src);
    }
    closedir(d);
    ck_assert_int_gt(files, 20);
    ck_assert_int_gt(literals, 50);
    ck_assert_msg(problems[0] == '\0',
                  "options not in the manual (add them to their command's table in "
                  "harness/cli.c):%s", problems);
}
END_TEST

/* Each option outside its range is refused: exit 2, one line naming the option
 * as typed and the value (the ranges --help prints are the ones enforced). */
START_TEST(ranges_are_enforced)
{
    const mbs_cli_cmd *c = mbs_cli_at((size_t)_i);
    const char *pre = strcmp(c->name, "baseline") == 0 ? " bless" : "";
    for (size_t k = 0; k < c->n_opts; k++) {
        const mbs_opt *o = &c->opts[k];
        if (o->kind != MBS_OPT_NUM && o->kind != MBS_OPT_INT)
            continue;
        double bad[2] = {o->lo_open ? o->lo : o->lo - 1, o->hi_open ? o->hi : o->hi * 2 + 1};
        for (int b = 0; b < 2; b++) {
            if (bad[b] < -1e300 || bad[b] > 1e300)
                continue;
            char args[256], val[64], out[1024];
            snprintf(val, sizeof val, "%.17g", bad[b]);
            snprintf(args, sizeof args, "%s%s %s %s", c->name, pre, o->name, val);
            int lines = 0;
            ck_assert_int_eq(mbs_test_cli_lines(args, out, sizeof out, &lines), 2);
            ck_assert_msg(lines == 1 && strstr(out, o->name) && strstr(out, val),
                          "'%s': %d lines: %s", args, lines, out);
        }
    }
    /* and an unknown option */
    char args[128], out[512];
    snprintf(args, sizeof args, "%s%s --no-such-option", c->name, pre);
    ck_assert_int_eq(mbs_test_cli(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "unknown option '--no-such-option'"), "%s: %s", args, out);
}
END_TEST

/* The part of a document about one command: from its heading to the next. */
static char *section(const char *doc, const char *start, const char *next_prefix)
{
    const char *a = strstr(doc, start);
    if (!a)
        return NULL;
    const char *b = strstr(a + strlen(start), next_prefix);
    size_t n = b ? (size_t)(b - a) : strlen(a);
    char *s = malloc(n + 1);
    memcpy(s, a, n);
    s[n] = '\0';
    return s;
}

/* The man page (one .SS per command) and docs/usage.md (one ### per command)
 * name every option of the command; the man page with the same default. */
START_TEST(man_page_and_usage_agree)
{
    const mbs_cli_cmd *c = mbs_cli_at((size_t)_i);
    char *man = mbs_read_file("docs/mbsbench.1", NULL), *usage = mbs_read_file("docs/usage.md",
                                                                               NULL);
    ck_assert_ptr_nonnull(man);
    ck_assert_ptr_nonnull(usage);
    char head[128];
    snprintf(head, sizeof head, ".SS %s\n", c->name);
    char *ms = section(man, head, "\n.S");
    ck_assert_msg(ms != NULL, "docs/mbsbench.1: no '.SS %s'", c->name);
    snprintf(head, sizeof head, "### `mbsbench %s", c->name);
    char *us = section(usage, head, "\n##");
    ck_assert_msg(us != NULL, "docs/usage.md: no '%s'", head);
    for (size_t k = 0; k < c->n_opts; k++) {
        const mbs_opt *o = &c->opts[k];
        char esc[128], *d = esc;
        for (const char *p = o->name; *p && d < esc + sizeof esc - 3; p++) {
            if (*p == '-')
                *d++ = '\\';
            *d++ = *p;
        }
        *d = '\0';
        ck_assert_msg(strstr(ms, esc), "docs/mbsbench.1, .SS %s: option %s missing", c->name,
                      o->name);
        char def[512];
        snprintf(def, sizeof def, "default: %s", o->def);
        char *md = squeeze(ms), *wd = squeeze(def);
        /* troff escapes the dashes of the default text too */
        for (char *p = md, *q = md; ; p++) {
            if (p[0] == '\\' && p[1] == '-')
                continue;
            *q++ = *p;
            if (!*p)
                break;
        }
        ck_assert_msg(strstr(md, wd), "docs/mbsbench.1, .SS %s, %s: '%s' missing", c->name,
                      o->name, wd);
        free(md);
        free(wd);
        char tick[128];
        snprintf(tick, sizeof tick, "`%s", o->name);
        ck_assert_msg(strstr(us, tick), "docs/usage.md, %s: option %s missing", head, o->name);
    }
    free(ms);
    free(us);
    free(man);
    free(usage);
}
END_TEST

/* Input that used to be accepted: each now one line naming the option as typed
 * and the value, exit 2, nothing run or created. */
START_TEST(bad_input_is_refused)
{
    static const char *const cases[][2] = {
        {"run -p pendulum -m index1/rk4 --h 0.01 --max-steps 0", "--max-steps 0 must lie in"},
        {"run -p pendulum -m index1/rk4 --h 0.01 --max-steps -5", "--max-steps -5 must lie in"},
        {"converge -p pendulum -m index1/rk8pd --tol0 0", "--tol0 0 must lie in (0, 1)"},
        {"reproduce -j 0 --list", "-j 0 must lie in [1, 256]"},
        {"compare --alpha 50 a b", "--alpha 50 must lie in (0, 0.5]"},
        {"run -p pendulum -m index1/rk4 --h 0.01 --tol 1e-6",
         "index1/rk4 is fixed-step: --tol applies to adaptive methods only"},
        {"run -p pendulum -m index1/rk4 --h 0.01 --atol 1e-6", "--atol applies to adaptive"},
        {"run -p pendulum:x0=0.2,x0=0.3 -m index1/rk4 --h 0.01", "parameter x0 given twice"},
        {"run -p pendulum -m index1/rk4:linsol=lu,linsol=chol --h 0.01",
         "parameter linsol given twice"},
        {"run -p pendulum -m index1/rk4 --h 0.01 --levels 3", "unknown option '--levels'"},
        {"converge -p pendulum -m index1/rk4 --h0 0.01 --repeat 3", "unknown option '--repeat'"},
        {"list problems --markdown", "--markdown goes with 'list methods'"},
        {"summary /tmp --report x", "--report goes with --brief"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char out[1024];
        int lines = 0;
        ck_assert_int_eq(mbs_test_cli_lines(cases[k][0], out, sizeof out, &lines), 2);
        ck_assert_msg(lines == 1 && strncmp(out, "mbsbench: ", 10) == 0 &&
                          strstr(out, cases[k][1]),
                      "'%s': %d lines: %s", cases[k][0], lines, out);
    }
}
END_TEST

/* sweep --resume of a directory that does not exist: nothing to resume; it is
 * not created and nothing runs. */
START_TEST(resume_of_a_missing_directory)
{
    char *d = mbs_test_tmpdir(), args[4200], out[1024];
    snprintf(args, sizeof args, "sweep suites/smoke.suite --resume %s/none --no-history", d);
    ck_assert_int_eq(mbs_test_cli(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--resume") && strstr(out, "/none") &&
                      strstr(out, "nothing to resume"), "%s", out);
    snprintf(args, sizeof args, "%s/none", d);
    ck_assert_int_ne(access(args, F_OK), 0);
    mbs_test_remove_tree(d);
    free(d);
}
END_TEST

/* A sweep outside results/ says on stderr that it stays out of the history. */
START_TEST(sweep_outside_results_says_so)
{
    char *d = mbs_test_tmpdir(), args[4200], *err = NULL, *out = NULL;
    snprintf(args, sizeof args, "%s/one.suite", d);
    mbs_test_write_text(args, "[suite]\nname = one\n[grid g]\nproblems = pendulum\n"
                              "methods = index1/rk4\nh = 0.1\nt_end = 0.2\n");
    snprintf(args, sizeof args, "sweep %s/one.suite --out %s/r", d, d);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    ck_assert_msg(strstr(err, "stays out of the results history"), "%s", err);
    free(err);
    free(out);
    snprintf(args, sizeof args, "sweep %s/one.suite --out %s/r2 --no-history", d, d);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    ck_assert_msg(err[0] == '\0', "--no-history: %s", err);
    free(err);
    free(out);
    mbs_test_remove_tree(d);
    free(d);
}
END_TEST

/* check-problem lists the checks a problem cannot take, with why. */
START_TEST(check_problem_lists_skipped_checks)
{
    char *err = NULL, *out = NULL;
    ck_assert_int_eq(mbs_test_cli_text("check-problem -p crank", &err, &out), 0);
    static const char *const want[] = {
        "  skip  sparse   no sparse callbacks", "  skip  exact    no exact solution",
        "  skip  energy   no energy callback",
        "  skip  deriv    force_q: callback not given",
        "  skip  const-M  not flagged MBS_PB_CONSTANT_MASS (M changes with t, q",
        "7 checks, 0 failed, 8 skipped"};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++)
        ck_assert_msg(strstr(out, want[k]), "crank: '%s' missing:\n%s", want[k], out);
    free(err);
    free(out);
    /* the pendulum takes every check but sparse */
    ck_assert_int_eq(mbs_test_cli_text("check-problem -p pendulum", &err, &out), 0);
    ck_assert_msg(strstr(out, "  ok    energy") && strstr(out, "  ok    exact") &&
                      strstr(out, "  ok    const-M") &&
                      strstr(out, "  skip  sparse") && strstr(out, " 2 skipped"),
                  "%s", out);
    free(err);
    free(out);
}
END_TEST

/* compare as a reader sees it: a pass prints no table; a run missing from the
 * results is one row "MISSING" (its series' order is not judged again as
 * "n/e"); a different grid is named by its digest; the table's columns line up
 * whatever the width of the run keys. */
START_TEST(compare_output_reads_at_a_glance)
{
    char *d = mbs_test_tmpdir(), args[4400], *err = NULL, *out = NULL;
    static const char *const suites[2] = {"h = 0.1 0.05 0.025 0.0125\n", "h = 0.1 0.05 0.025\n"};
    for (int k = 0; k < 2; k++) {
        char text[512];
        snprintf(text, sizeof text, "[suite]\nname = cmp\nrepeat = 0\n[grid g]\n"
                                    "problems = pendulum:x0=0.2\nmethods = index1/rk4\n%s"
                                    "t_end = 1\n", suites[k]);
        snprintf(args, sizeof args, "%s/s%d.suite", d, k);
        mbs_test_write_text(args, text);
        snprintf(args, sizeof args, "sweep %s/s%d.suite --out %s/r%d --no-history", d, k, d, k);
        ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
        free(err);
        free(out);
    }
    snprintf(args, sizeof args, "baseline bless %s/r0 -o %s/base.json", d, d);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    free(err);
    free(out);
    /* a pass: the summary line and the verdict, no table header */
    snprintf(args, sizeof args, "compare %s/base.json %s/r0", d, d);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    ck_assert_msg(!strstr(out, "| check") && !strstr(out, "---") &&
                      strstr(out, "no regression"), "%s", out);
    free(err);
    free(out);
    /* one level missing: one MISSING row, no order regression, the digests named */
    snprintf(args, sizeof args, "compare %s/base.json %s/r1", d, d);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 1);
    ck_assert_msg(strstr(out, "MISSING") && !strstr(out, "n/e") &&
                      !strstr(out, "order not established") &&
                      strstr(out, "0 regressions, 1 missing runs") &&
                      strstr(out, "grid digest") && strstr(out, "the grids differ"),
                  "%s", out);
    int rows = 0, bar = -1;
    for (const char *l = out; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        const char *e = strchr(l, '\n'), *p = strstr(l, " | ");
        if (!p || (e && p > e))
            continue;
        rows++;
        if (bar < 0)
            bar = (int)(p - l);
        ck_assert_msg((int)(p - l) == bar, "columns do not line up:\n%s", out);
    }
    ck_assert_int_eq(rows, 2); /* the header and the missing run */
    free(err);
    free(out);
    /* the verdict of make run says what its numbers are */
    snprintf(args, sizeof args, "summary %s/r0 --brief", d);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    ck_assert_msg(strstr(out, "(ms)") && strstr(out, "f = calls of the problem's force"), "%s",
                  out);
    free(err);
    free(out);
    /* summary --format latex: every number of a row is \num{} (or -- where absent) */
    snprintf(args, sizeof args, "summary %s/r0 --format latex", d);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    int cells = 0;
    for (const char *l = strstr(out, "\\texttt{"); l; l = strstr(l + 1, "\n\\texttt{")) {
        const char *c = l;
        for (int k = 0; k < 13 && c; k++, c = strstr(c, " & ")) {
            if (k > 0)
                c += 3;
            if (k < 2 || k == 5) /* problem, method, status */
                continue;
            cells++;
            ck_assert_msg(strncmp(c, "\\num{", 5) == 0 || strncmp(c, "--", 2) == 0,
                          "latex cell %d not \\num{}: %.40s", k, c);
        }
    }
    ck_assert_int_ge(cells, 4 * 10);
    /* the tabular's column spec has as many columns as the header row and every row
     * (one & fewer than columns), problem and method left, t_end, h and tol right,
     * status left, every measure right */
    const char *spec = strstr(out, "\\begin{tabular}{");
    ck_assert_ptr_nonnull(spec);
    spec += strlen("\\begin{tabular}{");
    size_t ncol = strcspn(spec, "}");
    ck_assert_msg(strncmp(spec, "llrrrl", 6) == 0 && strspn(spec + 6, "r") == ncol - 6,
                  "column spec %.*s", (int)ncol, spec);
    int lines = 0;
    for (const char *l = strstr(spec, "\n") + 1; *l && strncmp(l, "\\bottomrule", 11) != 0;
         l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        if (strncmp(l, "\\toprule", 8) == 0)
            continue;
        size_t amps = 0, len = strcspn(l, "\n");
        for (size_t k = 0; k < len; k++)
            amps += l[k] == '&';
        ck_assert_msg(amps + 1 == ncol, "%zu columns in the spec, %zu in: %.*s", ncol, amps + 1,
                      (int)len, l);
        lines++;
    }
    ck_assert_int_ge(lines, 2); /* the header and the runs */
    free(err);
    free(out);
    /* meta.json: the compile flags, not the link line */
    snprintf(args, sizeof args, "%s/r0/meta.json", d);
    char *meta = mbs_read_file(args, NULL);
    ck_assert_ptr_nonnull(meta);
    const char *cf = strstr(meta, "\"cflags\"");
    ck_assert_ptr_nonnull(cf);
    char flags[2048];
    ck_assert_int_eq(sscanf(cf, "\"cflags\": \"%2047[^\"]", flags), 1);
    ck_assert_msg(strstr(flags, "-std=c11") && strstr(flags, "-Wall") &&
                      strncmp(flags, "cc ", 3) != 0 && !strstr(flags, "-rdynamic") &&
                      !strstr(flags, "-MMD"), "cflags: %s", flags);
    free(meta);
    mbs_test_remove_tree(d);
    free(d);
}
END_TEST

/* list --long: every problem and method names a source a reader can look up
 * (author, year and references.bib key, no "seed 00N", no tracker numbers, no
 * path outside the clone) and the reference placeholder is filled. */
START_TEST(list_long_cites_what_a_reader_can_look_up)
{
    static const char *const what[2] = {"list problems --long", "list methods --long"};
    char *bib = mbs_read_file("references.bib", NULL);
    ck_assert_ptr_nonnull(bib);
    for (int k = 0; k < 2; k++) {
        char *err = NULL, *out = NULL;
        ck_assert_int_eq(mbs_test_cli_text(what[k], &err, &out), 0);
        int sources = 0;
        for (const char *l = out; (l = strstr(l, "      source: ")) != NULL; l++)
            sources++;
        ck_assert_int_eq(sources, k ? (int)mbs_method_count() : (int)mbs_problem_count());
        static const char *const banned[] = {"seed 0", "Seed 0", "issue ", "<name>", "shared/",
                                             "ref. ["};
        for (size_t b = 0; b < sizeof banned / sizeof *banned; b++)
            ck_assert_msg(!strstr(out, banned[b]), "%s: '%s' in:\n%.300s", what[k], banned[b],
                          strstr(out, banned[b]));
        /* every [key] cited is an entry of references.bib */
        for (const char *p = out; (p = strchr(p, '[')) != NULL; p++) {
            size_t n = strspn(p + 1, "abcdefghijklmnopqrstuvwxyz0123456789_");
            if (n < 6 || p[1 + n] != ']')
                continue;
            char entry[128];
            snprintf(entry, sizeof entry, "{%.*s,", (int)n, p + 1);
            ck_assert_msg(strstr(bib, entry), "%s cites [%.*s], not in references.bib", what[k],
                          (int)n, p + 1);
        }
        free(err);
        free(out);
    }
    free(bib);
}
END_TEST

/* Figures: titles in gnuplot's enhanced mode (t_{end} renders as a subscript;
 * names are escaped), no panel of a single point, no "empty x range" warning
 * (one method at one h: f-evals equal), t_end named the same way in titles and
 * legends. */
START_TEST(figures_read_at_a_glance)
{
    char *d = mbs_test_tmpdir(), args[4400], *err = NULL, *out = NULL;
    snprintf(args, sizeof args, "%s/f.suite", d);
    mbs_test_write_text(args, "[suite]\nname = fig\nrepeat = 0\n"
                              "[grid single]\nproblems = pendulum:x0=0.2\n"
                              "methods = index1/rk4 index1/rk4:linsol=chol\nh = 0.01\nt_end = 1\n"
                              "[grid two-ends-a]\nproblems = pendulum\nmethods = index1/rk4\n"
                              "h = 0.02 0.01 0.005\nt_end = 1\n"
                              "[grid two-ends-b]\nproblems = pendulum\nmethods = index1/rk4\n"
                              "h = 0.02 0.01 0.005\nt_end = 2\n");
    snprintf(args, sizeof args, "sweep %s/f.suite --out %s/r --no-history", d, d);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    free(err);
    free(out);
    snprintf(args, sizeof args, "report %s/r --out %s/rep", d, d);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    free(err);
    free(out);
    snprintf(args, sizeof args, "%s/rep/gnuplot.log", d);
    char *log = mbs_read_file(args, NULL);
    ck_assert_msg(log && !strstr(log, "arning"), "gnuplot: %s", log ? log : "(no log)");
    free(log);
    snprintf(args, sizeof args, "%s/rep/report.gp", d);
    char *gp = mbs_read_file(args, NULL);
    ck_assert_ptr_nonnull(gp);
    ck_assert_msg(!strstr(gp, "noenhanced"), "a title or key in noenhanced mode");
    /* the report's text names sources a reader can look up */
    snprintf(args, sizeof args, "%s/rep/index.md", d);
    char *md = mbs_read_file(args, NULL);
    ck_assert_ptr_nonnull(md);
    ck_assert_msg(!strstr(md, "seed") && !strstr(md, "issue ") &&
                      strstr(md, "`mbsbench list problems --long`") &&
                      strstr(md, "`references.bib`"),
                  "report index.md: sources not named as a reader can look them up");
    free(md);
    ck_assert_msg(strstr(gp, "set title 'pendulum, t_{end} = 1 s'") &&
                      strstr(gp, "title 'index1/rk4, t_{end} = 2 s: p = "),
                  "titles and legends name t_end as t_{end} = T s");
    /* force evaluations: rk4 and rk4:linsol=chol lie on one point, no panel */
    const char *fe = strstr(gp, "set output 'wp-fevals-q.png'");
    ck_assert_ptr_nonnull(fe);
    const char *next = strstr(fe + 1, "set output");
    const char *one = strstr(fe, "pendulum:x0=0.2, t_{end}");
    ck_assert_msg(!one || (next && one > next),
                  "a panel of one point (both methods on the same point) is drawn");
    free(gp);
    mbs_test_remove_tree(d);
    free(d);
}
END_TEST

/* Suite-file errors: every line "mbsbench: ...", in file order (a plugin that
 * does not load before the names it would have registered, which then point
 * back to it), each cause once (a bad problem is not repeated for each of its
 * runs; one message shared by several runs once, with their count); a missing
 * file says why it cannot be read. */
START_TEST(suite_errors_cause_first_once_each)
{
    char *d = mbs_test_tmpdir(), args[4400], *err = NULL, *out = NULL;
    snprintf(args, sizeof args, "sweep %s/none.suite", d);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 2);
    ck_assert_msg(strstr(err, "mbsbench: ") == err && strstr(err, "No such file or directory") &&
                      mbs_count_lines(err) == 1, "%s", err);
    free(err);
    free(out);
    snprintf(args, sizeof args, "%s/bad.suite", d);
    mbs_test_write_text(args, "[suite]\nname = bad\nplugins = nope.so\n[grid a]\n"
                              "problems = pendulum pendlum pendulum:x0=0.2\n"
                              "methods = index1/rk4 myplug/m index1/rk8pd\n"
                              "h = 0.5\ntol = 1e-6\nt_end = 0.2\n");
    snprintf(args, sizeof args, "sweep %s/bad.suite", d);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 2);
    int lines = mbs_count_lines(err), prefixed = 0;
    for (const char *l = err; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
        prefixed += strncmp(l, "mbsbench: ", 10) == 0;
    ck_assert_msg(prefixed == lines && lines == 4, "%d lines, %d prefixed:\n%s", lines, prefixed,
                  err);
    const char *plug = strstr(err, "plugins:"), *prob = strstr(err, "'pendlum'"),
               *meth = strstr(err, "'myplug/m'"), *h = strstr(err, "h 0.5 exceeds");
    ck_assert_msg(plug && prob && meth && h && plug < prob && prob < meth,
                  "not in file order:\n%s", err);
    ck_assert_msg(!strstr(prob + 1, "'pendlum'") && strstr(meth, "did not load"),
                  "a cause repeated, or the method not pointed to the plugin:\n%s", err);
    ck_assert_msg(strstr(h, "(2 runs, the first pendulum index1/rk4)"), "%s", err);
    free(err);
    free(out);
    mbs_test_remove_tree(d);
    free(d);
}
END_TEST

/* The -p option of every command that takes a problem spec names the
 * mechanism files (-p NAME for mechanisms/NAME.mech, -p model:file=PATH) in
 * --help and in the man page, and both spellings run. */
START_TEST(problem_option_names_mechanism_files)
{
    char *man = mbs_read_file("docs/mbsbench.1", NULL);
    ck_assert_ptr_nonnull(man);
    int commands = 0;
    for (size_t i = 0; i < mbs_cli_count(); i++) {
        const mbs_cli_cmd *c = mbs_cli_at(i);
        for (size_t k = 0; k < c->n_opts; k++) {
            const mbs_opt *o = &c->opts[k];
            if (strcmp(o->name, "--problem") != 0 || !o->arg ||
                strncmp(o->arg, "PROBLEM[:", 9) != 0)
                continue;
            commands++;
            char *help = NULL, range[512];
            help_text(c->name, &help);
            mbs_cli_range(o, range, sizeof range);
            char *h = squeeze(help);
            ck_assert_msg(strstr(range, "mechanisms/NAME.mech") &&
                              strstr(range, "model:file=PATH.mech") && strstr(h, "model:file="),
                          "mbsbench %s --help: -p does not name the mechanism files", c->name);
            free(h);
            free(help);
            char head[128];
            snprintf(head, sizeof head, ".SS %s\n", c->name);
            char *ms = section(man, head, "\n.SS");
            ck_assert_ptr_nonnull(ms);
            ck_assert_msg(strstr(ms, "model:file=PATH.mech") && strstr(ms, "mechanisms/NAME.mech"),
                          "docs/mbsbench.1, .SS %s: -p does not name the mechanism files",
                          c->name);
            free(ms);
        }
    }
    ck_assert_int_ge(commands, 4); /* run, converge, check-problem, reference, history */
    char *spec = section(man, ".SH PROBLEM AND METHOD SPECS", "\n.SH");
    ck_assert_msg(spec && strstr(spec, "model:file=") && strstr(spec, "mechanisms/NAME.mech"),
                  "docs/mbsbench.1: no section PROBLEM AND METHOD SPECS naming mechanism files");
    free(spec);
    free(man);
    /* both spellings are problems: a file of mechanisms/ by name, any file by path */
    char out[1024];
    ck_assert_int_eq(mbs_test_cli("run -p fourbar-nc -m index1/rk4 --h 0.01 --t-end 0.02", out,
                                  sizeof out), 0);
    ck_assert_int_eq(mbs_test_cli("run -p model:file=mechanisms/fourbar-nc.mech,g=1 -m index1/rk4 "
                                  "--h 0.01 --t-end 0.02", out, sizeof out), 0);
}
END_TEST

/* docs/suite-format.md documents every key a suite file may hold (the
 * parser's own key lists), both section kinds, the budgets and what a grid
 * with both h and tol runs; its complete example is a valid suite of as many
 * runs as the text says. */
START_TEST(suite_format_is_complete)
{
    char *doc = mbs_read_file("docs/suite-format.md", NULL);
    ck_assert_ptr_nonnull(doc);
    const char *suite_part = strstr(doc, "### `[suite]`"), *grid_part = strstr(doc,
                                                                            "### `[grid NAME]`");
    ck_assert_msg(suite_part && grid_part && suite_part < grid_part,
                  "docs/suite-format.md: no '### `[suite]`' then '### `[grid NAME]`'");
    for (int g = 0; g < 2; g++) {
        size_t n;
        const char *const *keys = mbs_suite_keys(g, &n);
        ck_assert_int_ge(n, 8);
        for (size_t k = 0; k < n; k++) {
            char row[64];
            snprintf(row, sizeof row, "\n| `%s` | ", keys[k]);
            const char *at = strstr(g ? grid_part : suite_part, row);
            ck_assert_msg(at && (g || at < grid_part),
                          "docs/suite-format.md: key '%s' of [%s] has no row in its table",
                          keys[k], g ? "grid NAME" : "suite");
        }
    }
    ck_assert_msg(strstr(doc, "A grid with both `h` and `tol`"),
                  "docs/suite-format.md: what a grid with both h and tol runs");
    /* the complete example parses, into the number of runs the text states */
    const char *ex = strstr(doc, "## A complete example\n```ini\n");
    ck_assert_ptr_nonnull(ex);
    ex = strchr(ex, '\n') + 1;
    ex = strchr(ex, '\n') + 1;
    const char *end = strstr(ex, "```");
    ck_assert_ptr_nonnull(end);
    int stated = 0;
    const char *runs = strstr(end, " runs its ");
    ck_assert_msg(runs && sscanf(runs, " runs its %d runs", &stated) == 1,
                  "docs/suite-format.md: the example's run count is not stated");
    mbs_suite st;
    char err[4096];
    ck_assert_msg(mbs_suite_parse(ex, (size_t)(end - ex), "example.suite", &st, err,
                                  sizeof err) == 0,
                  "docs/suite-format.md: the example is not a valid suite:\n%s", err);
    ck_assert_int_eq((int)st.n_runs, stated);
    /* every key of the example is one of the documented ones */
    for (const char *l = ex; l < end; l = strchr(l, '\n') + 1) {
        if (*l == '[' || *l == ';' || *l == ' ' || *l == '\n')
            continue;
        size_t klen = strcspn(l, " =");
        char key[64];
        snprintf(key, sizeof key, "\n| `%.*s` | ", (int)klen, l);
        ck_assert_msg(strstr(doc, key), "example key %.*s undocumented", (int)klen, l);
    }
    mbs_suite_free(&st);
    free(doc);
}
END_TEST

/* The members of `struct NAME {...}` in a header: identifiers declared at the
 * top level of the body (a function pointer by its (*name)). */
static int struct_members(const char *src, const char *open, char names[][48], int max)
{
    const char *p = strstr(src, open);
    ck_assert_msg(p != NULL, "'%s' not found", open);
    p = strchr(p, '{') + 1;
    int n = 0, depth = 0;
    char stmt[1024];
    size_t len = 0;
    for (; *p && !(depth == 0 && *p == '}'); p++) {
        if (p[0] == '/' && p[1] == '*') { /* comments out */
            const char *e = strstr(p + 2, "*/");
            ck_assert_ptr_nonnull(e);
            p = e + 1;
            continue;
        }
        if (*p == '(')
            depth++;
        if (*p == ')')
            depth--;
        if (*p != ';' || depth != 0) {
            if (len < sizeof stmt - 1)
                stmt[len++] = *p;
            continue;
        }
        stmt[len] = '\0';
        len = 0;
        const char *fp = strstr(stmt, "(*");
        if (fp) { /* a function pointer */
            size_t k = strspn(fp + 2, "abcdefghijklmnopqrstuvwxyz_0123456789");
            if (n < max)
                snprintf(names[n++], sizeof names[0], "%.*s", (int)k, fp + 2);
            continue;
        }
        /* "double t0, t_end": the last identifier of each declarator */
        for (char *part = strtok(stmt, ","); part; part = strtok(NULL, ",")) {
            char *e = part + strlen(part);
            while (e > part && !(isalnum((unsigned char)e[-1]) || e[-1] == '_'))
                e--;
            char *b = e;
            while (b > part && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
                b--;
            if (e > b && n < max)
                snprintf(names[n++], sizeof names[0], "%.*s", (int)(e - b), b);
        }
    }
    return n;
}

/* docs/adding-a-problem.md documents every member of the problem definition
 * (problems/problem.h) and of a parameter table entry (core/param.h), what
 * .index means for rheonomic problems and plain ODEs, and how to run an
 * installed mbsbench. */
START_TEST(adding_a_problem_is_complete)
{
    char *doc = mbs_read_file("docs/adding-a-problem.md", NULL);
    char *pb = mbs_read_file("problems/problem.h", NULL), *pm = mbs_read_file("core/param.h",
                                                                             NULL);
    ck_assert(doc && pb && pm);
    char names[96][48];
    int n = struct_members(pb, "struct mbs_problem_def {", names, 96);
    ck_assert_int_ge(n, 30);
    for (int k = 0; k < n; k++) {
        char tick[64];
        snprintf(tick, sizeof tick, "`%.47s`", names[k]);
        ck_assert_msg(strstr(doc, tick), "docs/adding-a-problem.md: field %s of mbs_problem_def "
                                         "is not documented", names[k]);
    }
    const char *table = strstr(doc, "### The parameter table");
    ck_assert_ptr_nonnull(table);
    n = struct_members(pm, "typedef struct mbs_param_def {", names, 96);
    ck_assert_int_eq(n, 7); /* name, def, min, max, doc, choices, integer */
    for (int k = 0; k < n; k++) {
        char item[64];
        snprintf(item, sizeof item, "`%.47s`", strcmp(names[k], "def") ? names[k] : "default");
        ck_assert_msg(strstr(table, item), "docs/adding-a-problem.md: the parameter table "
                                           "entry's %s is not documented", names[k]);
    }
    const char *idx = strstr(doc, "| `index` |");
    ck_assert_msg(idx && strstr(idx, "rheonomic") && strstr(idx, "plain ODE"),
                  "docs/adding-a-problem.md: .index for rheonomic problems and ODEs");
    ck_assert_msg(strstr(doc, "## Running mbsbench") && strstr(doc, "PATH") &&
                      strstr(doc, "bin/mbsbench"),
                  "docs/adding-a-problem.md: how to run an installed mbsbench");
    free(doc);
    free(pb);
    free(pm);
}
END_TEST

/* User-facing text names its sources so that a reader of a clone can look
 * them up: no 'seed 00N', no tracker numbers ('issue N'), no paths outside
 * the clone, in the docs, the man page, README, references.bib, the suites,
 * reproductions, stored references, mechanism files, examples, the headers,
 * and in what the commands print about their sources (--help, reproduce
 * --list; list --long is checked above). */
static void no_untraceable_source(const char *what, const char *text)
{
    static const char *const banned[] = {"seed 0",       "seed0",           "seed paper",
                                         "issue #",      "shared/seeds",    "shared/problems",
                                         "/work/"};
    char *low = malloc(strlen(text) + 1);
    ck_assert_ptr_nonnull(low);
    for (size_t i = 0; (low[i] = (char)tolower((unsigned char)text[i])) != '\0'; i++)
        ;
    for (size_t b = 0; b < sizeof banned / sizeof *banned; b++) {
        const char *at = strstr(low, banned[b]);
        ck_assert_msg(!at, "%s: '%s' in '%.60s'", what, banned[b], text + (at - low));
    }
    for (const char *at = low; (at = strstr(at, "issue ")) != NULL; at++)
        ck_assert_msg(!isdigit((unsigned char)at[6]), "%s: a tracker number in '%.60s'", what,
                      text + (at - low));
    free(low);
}

static void scan_dir(const char *dir, const char *suffix, int *files)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "%s", dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        DIR *sub = opendir(path);
        if (sub) {
            closedir(sub);
            scan_dir(path, suffix, files);
            continue;
        }
        size_t n = strlen(e->d_name), m = suffix ? strlen(suffix) : 0;
        if (suffix && (n < m || strcmp(e->d_name + n - m, suffix) != 0))
            continue;
        char *text = mbs_read_file(path, NULL);
        ck_assert_ptr_nonnull(text);
        no_untraceable_source(path, text);
        free(text);
        (*files)++;
    }
    closedir(d);
}

START_TEST(user_facing_text_cites_what_a_reader_can_look_up)
{
    int files = 0;
    static const char *const single[] = {"README.md", "references.bib", "docs/mbsbench.1"};
    for (size_t k = 0; k < sizeof single / sizeof *single; k++) {
        char *text = mbs_read_file(single[k], NULL);
        ck_assert_ptr_nonnull(text);
        no_untraceable_source(single[k], text);
        free(text);
        files++;
    }
    static const char *const dirs[][2] = {
        {"docs", ".md"},        {"suites", NULL},      {"reproductions", NULL},
        {"problems/ref", NULL}, {"mechanisms", NULL},  {"examples", NULL},
        {"core", ".h"},         {"problems", ".h"},    {"methods", ".h"},
        {"harness", ".h"}};
    for (size_t k = 0; k < sizeof dirs / sizeof *dirs; k++)
        scan_dir(dirs[k][0], dirs[k][1], &files);
    ck_assert_int_gt(files, 100);
    char *err = NULL, *out = NULL;
    ck_assert_int_eq(mbs_test_cli_text("reproduce --list", &err, &out), 0);
    no_untraceable_source("reproduce --list", out);
    free(err);
    free(out);
    for (size_t i = 0; i < mbs_cli_count(); i++) {
        char *help = NULL;
        help_text(mbs_cli_at(i)->name, &help);
        no_untraceable_source(mbs_cli_at(i)->name, help);
        free(help);
    }
}
END_TEST

Suite *mbs_suite_manual(void)
{
    Suite *s = suite_create("manual");
    TCase *tc = tcase_create("manual");
    int n = (int)mbs_cli_count();
    tcase_add_loop_test(tc, help_lists_every_option, 0, n);
    tcase_add_test(tc, no_option_outside_the_manual);
    tcase_add_loop_test(tc, ranges_are_enforced, 0, n);
    tcase_add_loop_test(tc, man_page_and_usage_agree, 0, n);
    tcase_add_test(tc, bad_input_is_refused);
    tcase_add_test(tc, resume_of_a_missing_directory);
    tcase_add_test(tc, sweep_outside_results_says_so);
    tcase_add_test(tc, check_problem_lists_skipped_checks);
    tcase_add_test(tc, compare_output_reads_at_a_glance);
    tcase_add_test(tc, list_long_cites_what_a_reader_can_look_up);
    tcase_add_test(tc, figures_read_at_a_glance);
    tcase_add_test(tc, suite_errors_cause_first_once_each);
    tcase_add_test(tc, problem_option_names_mechanism_files);
    tcase_add_test(tc, suite_format_is_complete);
    tcase_add_test(tc, adding_a_problem_is_complete);
    tcase_add_test(tc, user_facing_text_cites_what_a_reader_can_look_up);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
