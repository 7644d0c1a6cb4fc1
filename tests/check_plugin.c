/* Plugins: the two examples (examples/plugin-problem: the four-bar;
 * examples/plugin-method: RATTLE and symplectic Euler with SHAKE), built against
 * the staged public headers (make test-plugins), seen by every command like
 * built-in entries: list, run, converge (observed orders of the plugin method),
 * sweep with -j 2 workers and `plugins =` in a suite, check-problem.  Bad
 * plugins: a missing file, a file that is no shared object, no registration
 * function, another API version, another contract layout, a name clash (with a
 * built-in and between plugins): exit 2 and one line naming the plugin and the bad
 * value; a failed plugin leaves nothing registered. */
#define _DEFAULT_SOURCE /* realpath */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/io.h"
#include "../harness/plugin.h"
#include "../harness/probcheck.h"
#include "testutil.h"

static void plugin_path(const char *name, char *buf, size_t len)
{
    const char *dir = getenv("MBS_PLUGIN_DIR");
    snprintf(buf, len, "%s/%s.so", dir ? dir : "build/plugins", name);
    ck_assert_msg(access(buf, R_OK) == 0, "%s missing: run make test-plugins", buf);
}

/* The observed order of component `what` ("q", "v") in converge's table. */
static double observed_order(const char *text, const char *what)
{
    char key[32];
    snprintf(key, sizeof key, "order %s ", what);
    const char *p = strstr(text, key);
    double p_obs = -1.0;
    ck_assert_msg(p && sscanf(p + strlen(key), "%lf", &p_obs) == 1, "no '%s' in %s", key, text);
    return p_obs;
}

START_TEST(method_plugin_orders)
{
    char pm[1024], args[2048];
    plugin_path("example-method", pm, sizeof pm);
    static const struct {
        const char *method;
        double pq, pv;
    } c[] = {{"index3/rattle", 2.0, 2.0}, {"index3/symplectic-euler", 2.0, 1.0}};
    for (size_t k = 0; k < 2; k++) {
        char *err, *out;
        snprintf(args, sizeof args,
                 "--plugin %s converge -p pendulum -m %s --h0 0.02 --levels 5", pm,
                 c[k].method);
        int st = mbs_test_cli_text(args, &err, &out);
        ck_assert_msg(st == 0, "%s: exit %d: %s", args, st, err);
        double pq = observed_order(out, "q"), pv = observed_order(out, "v");
        fprintf(stderr, "plugin %s on pendulum: observed orders q %.2f, v %.2f\n", c[k].method,
                pq, pv);
        ck_assert_double_eq_tol(pq, c[k].pq, 0.1);
        ck_assert_double_eq_tol(pv, c[k].pv, 0.15);
        free(err);
        free(out);
    }
}
END_TEST

START_TEST(problem_plugin_everywhere)
{
    char pp[1024], pm[1024], args[9000], *err, *out;
    plugin_path("example-problem", pp, sizeof pp);
    plugin_path("example-method", pm, sizeof pm);
    /* list: the entries and where they come from */
    snprintf(args, sizeof args, "--plugin %s list problems", pp);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    ck_assert_msg(strstr(out, "fourbar") && strstr(out, "plugin: /"), "%s", out);
    free(err), free(out);
    /* run: the plugin method on the plugin problem; RATTLE holds g = 0 */
    snprintf(args, sizeof args,
             "--plugin %s run -p fourbar -m index3/rattle --h 0.001 --plugin=%s --format json",
             pp, pm);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    ck_assert_msg(strstr(out, "\"status\": \"ok\"") || strstr(out, "\"status\":\"ok\""), "%s",
                  out);
    free(err), free(out);
    /* check-problem: the four-bar passes the battery */
    snprintf(args, sizeof args, "--plugin %s check-problem -p fourbar", pp);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    ck_assert_msg(strstr(out, " 0 failed") && strstr(out, "ok    energy"), "%s", out);
    free(err), free(out);
    /* sweep with two forked workers, plugins named by the suite (relative path) */
    char *dir = mbs_test_tmpdir(), suite[1024], res[1024];
    char *rp = realpath(pp, NULL), *rm = realpath(pm, NULL);
    ck_assert(rp && rm);
    snprintf(args, sizeof args, "ln -s '%s' '%s/fb.so' && ln -s '%s' '%s/rattle.so'", rp, dir,
             rm, dir);
    ck_assert_int_eq(system(args), 0);
    snprintf(suite, sizeof suite, "%s/p.suite", dir);
    mbs_test_write_text(suite, "[suite]\nname = plugins\nplugins = fb.so rattle.so\n"
                               "[grid g]\nproblems = fourbar pendulum\n"
                               "methods = index3/rattle index1/rk4\nh = 0.01 0.005\n"
                               "t_end = 1\n");
    snprintf(res, sizeof res, "%s/res", dir);
    snprintf(args, sizeof args, "sweep %s -j 2 --out %s --no-history", suite, res);
    int st = mbs_test_cli_text(args, &err, &out);
    ck_assert_msg(st == 0, "sweep: exit %d: %s", st, err);
    free(err), free(out);
    snprintf(args, sizeof args, "%s/runs.jsonl", res);
    char *runs = mbs_read_file(args, NULL);
    ck_assert(runs != NULL);
    ck_assert_int_eq(mbs_count_lines(runs), 8);
    int rattle = 0, ok = 0;
    for (const char *l = runs; (l = strstr(l, "\"method\":\"index3/rattle\"")); l++)
        rattle++;
    for (const char *l = runs; (l = strstr(l, "\"status\":\"ok\"")); l++)
        ok++;
    ck_assert_int_eq(rattle, 4);
    ck_assert_msg(ok == 8, "%d of 8 runs ok: %s", ok, runs);
    free(runs);
    snprintf(args, sizeof args, "%s/meta.json", res);
    char *meta = mbs_read_file(args, NULL);
    ck_assert_msg(meta && strstr(meta, "\"plugins\"") && strstr(meta, rm), "%s", meta);
    free(meta);
    /* a suite naming a plugin that does not exist: the suite's line, the path */
    mbs_test_write_text(suite, "[suite]\nname = plugins\nplugins = nothere.so\n"
                               "[grid g]\nproblems = pendulum\nmethods = index1/rk4\nh = 0.01\n");
    snprintf(args, sizeof args, "sweep %s --out %s/res2 --no-history", suite, dir);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 2);
    ck_assert_msg(strstr(err, "p.suite:3:") && strstr(err, "nothere.so': no such file"), "%s",
                  err);
    free(err), free(out);
    free(rp), free(rm);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* Tableaux through the plugin API (mbs_plugin_add_tableau): Ralston's 3rd-order
 * method at fixed steps shows order 3 for every ODE formulation tried; the
 * Bogacki-Shampine 3(2) pair runs adaptively with errors proportional to tol. */
START_TEST(tableau_plugin)
{
    char pt[1024], args[2048], *err, *out;
    plugin_path("tableau", pt, sizeof pt);
    static const char *const forms[] = {"index1", "qr", "dca"};
    for (size_t k = 0; k < 3; k++) {
        snprintf(args, sizeof args,
                 "--plugin %s converge -p pendulum -m %s/ralston3 --h0 0.02 --levels 5", pt,
                 forms[k]);
        int st = mbs_test_cli_text(args, &err, &out);
        ck_assert_msg(st == 0, "%s: exit %d: %s", args, st, err);
        double pq = observed_order(out, "q"), pv = observed_order(out, "v");
        fprintf(stderr, "plugin tableau %s/ralston3 on pendulum: orders q %.2f, v %.2f\n",
                forms[k], pq, pv);
        ck_assert_double_eq_tol(pq, 3.0, 0.15);
        ck_assert_double_eq_tol(pv, 3.0, 0.15);
        free(err), free(out);
    }
    snprintf(args, sizeof args,
             "--plugin %s converge -p pendulum -m index1/bs32 --tol0 1e-3 --levels 5", pt);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    const char *p = strstr(out, "tol-exponent q ");
    double e = 0.0;
    ck_assert_msg(p && sscanf(p + 15, "%lf", &e) == 1, "%s", out);
    fprintf(stderr, "plugin tableau index1/bs32: tolerance exponent q %.2f\n", e);
    ck_assert_double_eq_tol(e, 1.0, 0.2);
    free(err), free(out);
    /* a tableau that does not have the order it claims is refused */
    plugin_path("badtableau", pt, sizeof pt);
    snprintf(args, sizeof args, "--plugin %s list methods", pt);
    int lines = 0;
    ck_assert_int_eq(mbs_test_cli_lines(args, args, sizeof args, &lines), 2);
    ck_assert_msg(lines == 1 && strstr(args, "ralston4"), "%s", args);
}
END_TEST

/* --plugin given to `sweep --slurm` reaches the array tasks (absolute paths in the
 * sbatch script); the tasks run as Slurm would start them, the shards merge, and
 * `report` draws the merged plugin results. */
START_TEST(plugin_slurm_and_report)
{
    char pp[1024], pm[1024], args[4096], path[1200], *err, *out;
    plugin_path("example-problem", pp, sizeof pp);
    plugin_path("example-method", pm, sizeof pm);
    char *dir = mbs_test_tmpdir(), *rm = realpath(pm, NULL);
    ck_assert(rm != NULL);
    snprintf(path, sizeof path, "%s/s.suite", dir);
    mbs_test_write_text(path, "[suite]\nname = pslurm\n[grid g]\nproblems = fourbar pendulum\n"
                              "methods = index3/rattle\nh = 0.01 0.005\nt_end = 1\n");
    snprintf(args, sizeof args, "--plugin %s --plugin %s sweep %s --slurm --array-size 2 --out %s/sl",
             pp, pm, path, dir);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    free(err), free(out);
    snprintf(path, sizeof path, "%s/sl/sweep.sbatch", dir);
    char *script = mbs_read_file(path, NULL);
    snprintf(args, sizeof args, "--plugin '%s'", rm);
    ck_assert_msg(script && strstr(script, args), "%s", script);
    free(script);
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, "cd %s && SLURM_ARRAY_TASK_ID=%d sh sl/sweep.sbatch >/dev/null",
                 dir, k);
        ck_assert_int_eq(system(args), 0);
    }
    snprintf(args, sizeof args, "merge %s/m %s/sl/shard-0 %s/sl/shard-1 --no-history", dir, dir,
             dir);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    free(err), free(out);
    snprintf(path, sizeof path, "%s/m/runs.jsonl", dir);
    char *runs = mbs_read_file(path, NULL);
    int ok = 0;
    for (const char *l = runs; l && (l = strstr(l, "\"status\":\"ok\"")); l++)
        ok++;
    ck_assert_msg(ok == 4, "%d of 4 runs ok: %s", ok, runs);
    free(runs);
    snprintf(args, sizeof args, "report %s/m --out %s/rep", dir, dir);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 0);
    free(err), free(out);
    snprintf(path, sizeof path, "%s/rep/index.md", dir);
    char *md = mbs_read_file(path, NULL);
    ck_assert_msg(md && strstr(md, "index3/rattle") && strstr(md, "fourbar"), "%s", md);
    free(md);
    free(rm);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* Bad plugins: exit 2, exactly one line naming the plugin and the bad value. */
START_TEST(bad_plugins)
{
    char path[1024], args[2048], out[1024], fb2[64], vers[128];
    snprintf(vers, sizeof vers, "built for mbsbench API version %d, this mbsbench has API version %d",
             MBS_API_VERSION + 1, MBS_API_VERSION);
    const struct {
        const char *name, *want;
    } c[] = {
        {"noinit", "defines no mbs_plugin_init()"},
        {"badversion", vers},
        {"badlayout", "sizeof(mbs_problem_def) = "},
        {"badext", "sizeof(mbs_extension) = "},
        {"clash", "problem 'pendulum' is already registered (built-in)"},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        plugin_path(c[k].name, path, sizeof path);
        snprintf(args, sizeof args, "--plugin %s list methods", path);
        int lines = 0;
        ck_assert_int_eq(mbs_test_cli_lines(args, out, sizeof out, &lines), 2);
        ck_assert_int_eq(lines, 1);
        ck_assert_msg(strstr(out, path) && strstr(out, c[k].want), "%s: %s", c[k].name, out);
    }
    int lines = 0;
    ck_assert_int_eq(mbs_test_cli_lines("run --plugin /nonexistent/x.so -p pendulum "
                                        "-m index1/rk4 --h 0.1", out, sizeof out, &lines), 2);
    ck_assert_msg(lines == 1 && strstr(out, "plugin '/nonexistent/x.so': no such file"), "%s",
                  out);
    ck_assert_int_eq(mbs_test_cli_lines("--plugin README.md list problems", out, sizeof out,
                                        &lines), 2);
    ck_assert_msg(lines == 1 && strstr(out, "plugin 'README.md': cannot load"), "%s", out);
    ck_assert_int_eq(mbs_test_cli_lines("list problems --plugin", out, sizeof out, &lines), 2);
    ck_assert_msg(strstr(out, "--plugin needs a value"), "%s", out);
    /* the same problem name from two plugins */
    plugin_path("example-problem", path, sizeof path);
    snprintf(fb2, sizeof fb2, "/tmp/mbs-fb2-%d.so", (int)getpid());
    snprintf(args, sizeof args, "cp %s %s", path, fb2);
    ck_assert_int_eq(system(args), 0);
    snprintf(args, sizeof args, "--plugin %s --plugin %s list problems", path, fb2);
    ck_assert_int_eq(mbs_test_cli_lines(args, out, sizeof out, &lines), 2);
    ck_assert_msg(lines == 1 && strstr(out, fb2) &&
                      strstr(out, "problem 'fourbar' is already registered (by plugin /"),
                  "%s", out);
    remove(fb2);
}
END_TEST

/* In process: a failed plugin leaves nothing registered, loading twice is a
 * no-op, unloading restores the built-in registries. */
START_TEST(registry_rollback)
{
    char path[1024], err[1024];
    size_t np = mbs_problem_count(), nm = mbs_method_count();
    plugin_path("clash", path, sizeof path);
    ck_assert_int_eq(mbs_plugin_load(path, err, sizeof err), MBS_BAD_INPUT);
    ck_assert_ptr_null(mbs_problem_find("clash-first"));
    ck_assert_uint_eq(mbs_problem_count(), np);
    ck_assert_uint_eq(mbs_plugin_count(), 0);
    plugin_path("example-method", path, sizeof path);
    ck_assert_msg(mbs_plugin_load(path, err, sizeof err) == MBS_OK, "%s", err);
    ck_assert_msg(mbs_plugin_load(path, err, sizeof err) == MBS_OK, "%s", err);
    ck_assert_uint_eq(mbs_plugin_count(), 1);
    ck_assert_uint_eq(mbs_method_count(), nm + 2);
    ck_assert_ptr_nonnull(mbs_method_find("index3/rattle"));
    /* a plugin method runs in process like a built-in one */
    mbs_record rec;
    mbs_test_run("pendulum", "index3/rattle", 1e-3, NAN, 1.0, &rec);
    ck_assert_msg(rec.status == MBS_OK, "%s", rec.reason);
    ck_assert_double_le(rec.res_pos_max, 1e-12); /* SHAKE holds g = 0 */
    ck_assert_double_le(rec.err.q, 1e-5);
    mbs_record_free(&rec);
    mbs_plugin_unload_all();
    ck_assert_uint_eq(mbs_method_count(), nm);
    ck_assert_ptr_null(mbs_method_find("index3/rattle"));
}
END_TEST

/* check-problem names the component that is wrong (exit 1). */
START_TEST(check_problem_finds_the_bug)
{
    char path[1024], args[2048], *err, *out;
    plugin_path("broken", path, sizeof path);
    snprintf(args, sizeof args, "--plugin %s check-problem -p broken-pendulum", path);
    ck_assert_int_eq(mbs_test_cli_text(args, &err, &out), 1);
    ck_assert_msg(strstr(out, "FAIL  G ") && strstr(out, "G[0][1] = "), "%s", out);
    ck_assert_msg(strstr(out, "FAIL  deriv    force_v[0][0] = 0.1, finite difference 0"), "%s",
                  out);
    ck_assert_msg(strstr(out, "FAIL  const-M  flagged MBS_PB_CONSTANT_MASS, but M[0][0] = "),
                  "%s", out);
    ck_assert_msg(strstr(out, "ok    initial") && strstr(out, "ok    M "), "%s", out);
    free(err), free(out);
    ck_assert_int_eq(mbs_test_cli_text("check-problem -p nosuch", &err, &out), 2);
    ck_assert_msg(strstr(err, "unknown problem 'nosuch'"), "%s", err);
    free(err), free(out);
}
END_TEST

Suite *mbs_suite_plugin(void)
{
    Suite *s = suite_create("plugin");
    TCase *tc = tcase_create("plugin");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, method_plugin_orders);
    tcase_add_test(tc, problem_plugin_everywhere);
    tcase_add_test(tc, tableau_plugin);
    tcase_add_test(tc, plugin_slurm_and_report);
    tcase_add_test(tc, bad_plugins);
    tcase_add_test(tc, registry_rollback);
    tcase_add_test(tc, check_problem_finds_the_bug);
    suite_add_tcase(s, tc);
    return s;
}
