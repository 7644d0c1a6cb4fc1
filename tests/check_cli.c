/* Command line: `mbsbench COMMAND --help` for every command (exit 0,
 * the command's own usage lines), `--version` (version and git revision, also
 * in every record), and an unknown command named in a one-line error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/cli.h"
#include "../harness/io.h"
#include "../methods/framework/method.h"
#include "testutil.h"

/* Every command of the manual (harness/cli.c), and "references". */
START_TEST(help_for_every_command)
{
    char args[128], out[512], want[64];
    const char *name = _i < (int)mbs_cli_count() ? mbs_cli_at((size_t)_i)->name : "references";
    snprintf(args, sizeof args, "%s --help", name);
    ck_assert_int_eq(mbs_test_cli(args, out, sizeof out), 0);
    snprintf(want, sizeof want, "Usage: mbsbench %s ", strcmp(name, "references") ? name
                                                                                   : "reference");
    ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "%s: %s", args, out);
}
END_TEST

START_TEST(version_and_unknown_command)
{
    char out[512];
    ck_assert_int_eq(mbs_test_cli("--version", out, sizeof out), 0);
    ck_assert_msg(strncmp(out, "mbsbench 0.", 11) == 0 && strstr(out, "(git ") != NULL, "%s",
                  out);
    ck_assert_int_eq(mbs_test_cli("frobnicate --help", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "unknown command 'frobnicate'"));
    ck_assert_int_eq(mbs_test_cli("run -p pendulum -m index1/rk4 --h 0.1 --t-end 1 --format json"
                                  " | grep -c '\"mbsbench\":\"0\\.'",
                                  out, sizeof out),
                     0);
    ck_assert_msg(out[0] == '1', "version not in the record: %s", out);
}
END_TEST

/* `make install PREFIX=tmp`: the installed binary, run from another
 * directory, finds its stored references and reproductions (before: nan errors
 * and an empty `reproduce --list`, exit 0). */
START_TEST(installed_binary_finds_its_data)
{
    char prefix[] = "/tmp/mbs-install-XXXXXX", cmd[1024], out[512];
    ck_assert_ptr_nonnull(mkdtemp(prefix));
    snprintf(cmd, sizeof cmd, "make -s install PREFIX=%s > /dev/null 2>&1", prefix);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "cd / && %s/bin/mbsbench reproduce --list | grep -c 'suite suites/'",
             prefix);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(fgets(out, sizeof out, p));
    pclose(p);
    ck_assert_msg(atoi(out) >= 9, "installed reproduce --list: %s entries", out);
    snprintf(cmd, sizeof cmd,
             "cd / && %s/bin/mbsbench run -p andrews -m index1/rk8pd --tol 1e-8 | grep -c "
             "'^reference      reference'",
             prefix);
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(fgets(out, sizeof out, p));
    pclose(p);
    ck_assert_msg(atoi(out) == 1, "installed binary did not find the andrews reference");
    snprintf(cmd, sizeof cmd, "rm -rf %s", prefix);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* `summary --format md|csv|latex`: one row per run with the status,
 * errors, work and CPU; a bad format is refused. */
START_TEST(summary_formats)
{
    char dir[] = "/tmp/mbs-sumfmt-XXXXXX", cmd[1024], out[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "sweep suites/smoke.suite --out %s/r --no-history", dir);
    ck_assert_int_le(mbs_test_cli(cmd, out, sizeof out), 1);
    static const char *const fmt[3] = {"md", "csv", "latex"};
    static const char *const head[3] = {"| problem | method | t_end |",
                                        "problem,method,t_end,h,tol,status",
                                        "problem & method & t\\_end"};
    for (int k = 0; k < 3; k++) {
        snprintf(cmd, sizeof cmd, "summary %s/r --format %s | grep -c -F '%s'", dir, fmt[k],
                 head[k]);
        ck_assert_int_eq(mbs_test_cli(cmd, out, sizeof out), 0);
        ck_assert_msg(out[0] == '1', "%s header: %s", fmt[k], out);
        /* one line per record (plus header lines) */
        snprintf(cmd, sizeof cmd, "summary %s/r --format %s | grep -c -e pendulum", dir, fmt[k]);
        ck_assert_int_eq(mbs_test_cli(cmd, out, sizeof out), 0);
        ck_assert_msg(atoi(out) >= 10, "%s: %s rows", fmt[k], out);
    }
    snprintf(cmd, sizeof cmd, "summary %s/r --format xml", dir);
    ck_assert_int_eq(mbs_test_cli(cmd, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "'xml'"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* `reproduce --all --page DIR`: a page with each reproduction's
 * table, the published value beside ours. */
START_TEST(reproduce_page)
{
    char dir[] = "/tmp/mbs-repro-XXXXXX", cmd[1024], out[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "reproduce --all --page %s/page --out %s/res > /dev/null", dir,
             dir);
    ck_assert_int_eq(mbs_test_cli(cmd, out, sizeof out), 0);
    /* --out DIR: each reproduction's results in DIR/NAME (none in the working tree) */
    snprintf(cmd, sizeof cmd, "%s/res/table2/runs.jsonl", dir);
    ck_assert_msg(access(cmd, R_OK) == 0, "reproduce --all --out: no %s", cmd);
    snprintf(cmd, sizeof cmd, "%s/page/index.html", dir);
    char *html = mbs_read_file(cmd, NULL);
    ck_assert_ptr_nonnull(html);
    int sections = 0, tables = 0;
    for (const char *q = html; (q = strstr(q, "<h2 id=")) != NULL; q++)
        sections++;
    for (const char *q = html; (q = strstr(q, "| published  | bound      | ours")) != NULL; q++)
        tables++;
    ck_assert_int_ge(sections, 9);
    ck_assert_int_ge(tables, 9);
    free(html);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* `list methods --long`: every registered method names its source. */
START_TEST(list_methods_long_sources)
{
    char out[512];
    ck_assert_int_eq(mbs_test_cli("list methods --long | grep -c '^      source: [^-]'", out,
                                  sizeof out),
                     0);
    ck_assert_int_eq(atoi(out), (int)mbs_method_count());
}
END_TEST

/* docs/methods.md's method table is the measured `list methods --markdown`
 * (per method, which problem classes it handles and what it records
 * otherwise); a method whose behaviour changes must change the doc too. */
START_TEST(method_table_in_docs_is_current)
{
    const char *bin = getenv("MBSBENCH") ? getenv("MBSBENCH") : "bin/mbsbench";
    char cmd[600], path[64];
    snprintf(path, sizeof path, "/tmp/mbs-method-table.%d.md", (int)getpid());
    snprintf(cmd, sizeof cmd, "%s list methods --markdown > %s", bin, path);
    ck_assert_int_eq(system(cmd), 0);
    char *gen = mbs_read_file(path, NULL);
    char *doc = mbs_read_file("docs/methods.md", NULL);
    ck_assert_ptr_nonnull(gen);
    ck_assert_ptr_nonnull(doc);
    const char *a = strstr(doc, "<!-- method table begin -->\n");
    const char *b = strstr(doc, "<!-- method table end -->");
    ck_assert(a && b && b > a);
    a += strlen("<!-- method table begin -->\n");
    ck_assert_msg((size_t)(b - a) == strlen(gen) && strncmp(a, gen, strlen(gen)) == 0,
                  "docs/methods.md: the method table differs from `mbsbench list methods "
                  "--markdown`; regenerate it");
    free(gen);
    free(doc);
    remove(path);
}
END_TEST

/* --help and the help of the commands taking -p/-m say how parameters are
 * given and where they are listed (qa: threads=, coords=rotmat, tsit5 appeared
 * in no help text). */
START_TEST(help_says_where_parameters_are)
{
    static const char *const args[] = {"--help", "run --help", "converge --help",
                                       "check-problem --help"};
    char cmd[128], out[512];
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
        snprintf(cmd, sizeof cmd,
                 "%s | grep -c -e 'heavytop:coords=rotmat' -e 'list problems|methods. shows'",
                 args[i]);
        ck_assert_int_eq(mbs_test_cli(cmd, out, sizeof out), 0);
        ck_assert_msg(atoi(out) == 2, "'%s': %s of the 2 lines on parameters", args[i], out);
    }
}
END_TEST

/* README.md states how many problems and methods there are; it said 95 methods
 * after tsit5/vern6 had made them 125 (qa). */
START_TEST(readme_counts_are_current)
{
    char *readme = mbs_read_file("README.md", NULL);
    ck_assert_ptr_nonnull(readme);
    const char *at = strstr(readme, "The suite has ");
    ck_assert_msg(at != NULL, "README.md: 'The suite has N problems and M methods' not found");
    int np = -1, nm = -1;
    ck_assert_int_eq(sscanf(at, "The suite has %d problems and %d methods", &np, &nm), 2);
    ck_assert_msg(np == (int)mbs_problem_count() && nm == (int)mbs_method_count(),
                  "README.md says %d problems and %d methods; the registries hold %zu and %zu",
                  np, nm, mbs_problem_count(), mbs_method_count());
    free(readme);
}
END_TEST

Suite *mbs_suite_cli(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_add_loop_test(tc, help_for_every_command, 0, (int)mbs_cli_count() + 1);
    tcase_add_test(tc, version_and_unknown_command);
    tcase_add_test(tc, installed_binary_finds_its_data);
    tcase_add_test(tc, summary_formats);
    tcase_add_test(tc, reproduce_page);
    tcase_add_test(tc, list_methods_long_sources);
    tcase_add_test(tc, method_table_in_docs_is_current);
    tcase_add_test(tc, readme_counts_are_current);
    tcase_add_test(tc, help_says_where_parameters_are);
    tcase_set_timeout(tc, 300); /* wall clock: make install and reproduce --all at load 15 on 2 cores took over 120 s */
    suite_add_tcase(s, tc);
    return s;
}
