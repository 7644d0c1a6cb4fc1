/* Sweeps beyond one machine: the shard plan (deterministic, the same
 * for a reordered suite file, within the LPT bound), shard sweeps merged back
 * equal to a local sweep, merge's missing-shard, incomplete-shard, conflict and
 * other-grid reports, resume of the wrong shard refused, bad cluster options,
 * and the sbatch script (its options, a stand-in sbatch, the script itself run
 * as three array tasks without Slurm).  The real Slurm test is tests/slurm/run.sh
 * (make check-slurm). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/io.h"
#include "../harness/results.h"
#include "../harness/shard.h"
#include "../harness/sweep.h"
#include "testutil.h"

static const char suite_text[] =
    "[suite]\nname = shardtest\n\n"
    "[grid fixed]\nproblems = pendulum pendulum:x0=0.2\nmethods = index1/rk4 index3/genalpha\n"
    "h = 0.01 0.005\nt_end = 1\n\n"
    "[grid adaptive]\nproblems = pendulum\nmethods = index1/dopri5 index2/radau5\n"
    "tol = 1e-5 1e-7\nt_end = 1\n";

/* The same grid, lists and grids in another order. */
static const char suite_reordered[] =
    "[suite]\nname = shardtest\n\n"
    "[grid adaptive]\nproblems = pendulum\nmethods = index2/radau5 index1/dopri5\n"
    "tol = 1e-7 1e-5\nt_end = 1\n\n"
    "[grid fixed]\nproblems = pendulum:x0=0.2 pendulum\nmethods = index3/genalpha index1/rk4\n"
    "h = 0.005 0.01\nt_end = 1\n";

static void load_suite(const char *text, mbs_suite *s)
{
    char err[2000];
    ck_assert_msg(mbs_suite_parse(text, strlen(text), "test.suite", s, err, sizeof err) == 0,
                  "%s", err);
}

static char *run_cli(const char *fmt, const char *a, const char *b, const char *c, int *st)
{
    char args[8000], *err = NULL, *out = NULL;
    snprintf(args, sizeof args, fmt, a, b, c);
    *st = mbs_test_cli_text(args, &err, &out);
    size_t n = strlen(err) + strlen(out) + 2;
    char *all = malloc(n);
    snprintf(all, n, "%s\n%s", err, out);
    free(err);
    free(out);
    return all;
}

/* The records of a results directory without their timings, in run order. */
static json_t *untimed_records(const char *dir)
{
    mbs_results r;
    char err[512];
    ck_assert_msg(mbs_results_load_quiet(dir, &r, err, sizeof err) == 0, "%s", err);
    json_t *a = json_array();
    for (size_t i = 0; i < r.n; i++) {
        json_t *c = json_deep_copy(r.recs[i]);
        json_object_del(c, "cpu");
        json_object_del(c, "node");
        json_array_append_new(a, c);
    }
    mbs_results_free(&r);
    return a;
}

static void assert_same_records(const char *a, const char *b)
{
    json_t *x = untimed_records(a), *y = untimed_records(b);
    ck_assert_int_eq((int)json_array_size(x), (int)json_array_size(y));
    ck_assert_msg(json_equal(x, y), "records of %s and %s differ", a, b);
    json_decref(x);
    json_decref(y);
}

/* A suite file, its local sweep and its three shards in a new directory. */
static char *shard_fixture(void)
{
    char *d = mbs_test_tmpdir(), path[4200];
    snprintf(path, sizeof path, "%s/test.suite", d);
    mbs_test_write_text(path, suite_text);
    int st;
    free(run_cli("sweep %s/test.suite -j 2 --out %s/local --no-history", d, d, "", &st));
    ck_assert_int_eq(st, 0);
    for (int i = 0; i < 3; i++) {
        char sh[16];
        snprintf(sh, sizeof sh, "%d/3", i);
        free(run_cli("sweep %s/test.suite --shard %s --out %s/s --no-history", d, sh, d, &st));
        ck_assert_int_eq(st, 0);
        char from[4200], to[4200];
        snprintf(from, sizeof from, "%s/s", d);
        snprintf(to, sizeof to, "%s/s%d", d, i);
        ck_assert_int_eq(rename(from, to), 0);
    }
    return d;
}

START_TEST(plan_is_deterministic_reorder_stable_and_balanced)
{
    mbs_suite a, b;
    load_suite(suite_text, &a);
    load_suite(suite_reordered, &b);
    ck_assert_int_eq((int)a.n_runs, 12);
    ck_assert_int_eq((int)b.n_runs, 12);
    char err[512];
    for (int n = 1; n <= 5; n++) {
        mbs_shard_plan pa, pb;
        ck_assert_int_eq(mbs_shard_plan_make(&a, n, NULL, &pa, err, sizeof err), 0);
        ck_assert_int_eq(mbs_shard_plan_make(&b, n, NULL, &pb, err, sizeof err), 0);
        double total = 0.0, cmax = 0.0, lmax = 0.0;
        for (size_t i = 0; i < a.n_runs; i++) {
            ck_assert(pa.shard_of[i] >= 0 && pa.shard_of[i] < n);
            total += pa.cost[i];
            cmax = fmax(cmax, pa.cost[i]);
            char *ka = mbs_spec_identity(&a.runs[i]);
            int found = 0;
            for (size_t j = 0; j < b.n_runs; j++) {
                char *kb = mbs_spec_identity(&b.runs[j]);
                if (strcmp(ka, kb) == 0) { /* the same case: the same shard */
                    ck_assert_msg(pa.shard_of[i] == pb.shard_of[j], "%s: shard %d vs %d", ka,
                                  pa.shard_of[i], pb.shard_of[j]);
                    found++;
                }
                free(kb);
            }
            ck_assert_int_eq(found, 1);
            free(ka);
        }
        for (int k = 0; k < n; k++)
            lmax = fmax(lmax, pa.load[k]);
        /* longest-processing-time first: max load <= mean load + largest run */
        ck_assert_msg(lmax <= total / n + cmax + 1e-9 * total, "N = %d: max load %g, mean %g, "
                      "largest run %g", n, lmax, total / n, cmax);
        mbs_shard_plan_free(&pa);
        mbs_shard_plan_free(&pb);
    }
    mbs_suite_free(&a);
    mbs_suite_free(&b);
}
END_TEST

START_TEST(shards_merge_into_the_local_sweep)
{
    char *d = shard_fixture(), out[4200];
    int st, total = 0;
    for (int i = 0; i < 3; i++) {
        char meta[4200];
        snprintf(meta, sizeof meta, "%s/s%d/meta.json", d, i);
        json_t *m = json_load_file(meta, 0, NULL);
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq((int)json_integer_value(json_object_get(json_object_get(m, "shard"),
                                                                 "index")), i);
        total += (int)json_array_size(json_object_get(json_object_get(m, "shard"), "runs"));
        json_decref(m);
    }
    ck_assert_int_eq(total, 12);
    char *txt = run_cli("merge %s/merged %s/s0 %s/s1 --no-history", d, d, d, &st);
    ck_assert_int_eq(st, 1); /* shard 2 missing */
    free(txt);
    char shards[4200];
    snprintf(shards, sizeof shards, "%s/s0 %s/s1 %s/s2", d, d, d);
    txt = run_cli("merge %s/merged %s --no-history%s", d, shards, "", &st);
    ck_assert_msg(st == 0, "%s", txt);
    ck_assert_ptr_nonnull(strstr(txt, "12 of 12 runs"));
    free(txt);
    snprintf(out, sizeof out, "%s/merged", d);
    char local[4200];
    snprintf(local, sizeof local, "%s/local", d);
    assert_same_records(out, local);
    /* the local directory among the inputs: every run twice, identical, kept once */
    txt = run_cli("merge %s/merged2 %s %s/local --no-history", d, shards, d, &st);
    ck_assert_msg(st == 0, "%s", txt);
    ck_assert_ptr_nonnull(strstr(txt, "12 duplicate records dropped"));
    free(txt);
    snprintf(out, sizeof out, "%s/merged2", d);
    assert_same_records(out, local);
    /* summary and compare work on the merged directory as on the local one */
    txt = run_cli("baseline bless %s/local -o %s/base.json%s", d, d, "", &st);
    ck_assert_int_eq(st, 0);
    free(txt);
    txt = run_cli("compare %s/base.json %s/merged", d, d, "", &st);
    ck_assert_msg(st == 0 && strstr(txt, "no regression"), "%s", txt);
    free(txt);
    mbs_test_remove_tree(d);
    free(d);
}
END_TEST

START_TEST(merge_names_what_is_missing)
{
    char *d = shard_fixture(), path[4200];
    int st;
    char *txt = run_cli("merge %s/m %s/s0 %s/s2 --no-history", d, d, d, &st);
    ck_assert_int_eq(st, 1);
    ck_assert_msg(strstr(txt, "shard 1/3 missing"), "%s", txt);
    ck_assert_ptr_nonnull(strstr(txt, "nothing written"));
    free(txt);
    snprintf(path, sizeof path, "%s/m/runs.jsonl", d);
    ck_assert_int_ne(access(path, F_OK), 0);
    /* drop the last record of shard 2: named, with the command that completes it */
    snprintf(path, sizeof path, "%s/s2/runs.jsonl", d);
    char *text = mbs_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    size_t n = strlen(text);
    ck_assert(n > 1);
    n--;
    while (n > 0 && text[n - 1] != '\n')
        n--;
    json_t *last = json_loads(text + n, 0, NULL);
    long lost = (long)json_integer_value(json_object_get(last, "run"));
    json_decref(last);
    text[n] = '\0';
    mbs_test_write_text(path, text);
    free(text);
    char runs[64];
    snprintf(runs, sizeof runs, "runs %ld)", lost);
    txt = run_cli("merge %s/m %s/s0 %s/s1 --no-history", d, d, d, &st);
    free(txt);
    char ins[4200];
    snprintf(ins, sizeof ins, "%s/s0 %s/s1 %s/s2", d, d, d);
    txt = run_cli("merge %s/m %s --no-history%s", d, ins, "", &st);
    ck_assert_int_eq(st, 1);
    ck_assert_msg(strstr(txt, "shard 2/3") && strstr(txt, runs) &&
                      strstr(txt, "--shard 2/3 --resume"), "%s", txt);
    free(txt);
    txt = run_cli("merge %s/m %s --partial --no-history%s", d, ins, "", &st);
    ck_assert_int_eq(st, 1);
    ck_assert_msg(strstr(txt, "11 of 12 runs (PARTIAL)"), "%s", txt);
    free(txt);
    mbs_test_remove_tree(d);
    free(d);
}
END_TEST

START_TEST(merge_reports_conflicts_and_other_grids)
{
    char *d = shard_fixture(), path[4200];
    int st;
    /* a copy of shard 0 whose first record has another error in q */
    char cmd[9000], *txt;
    snprintf(cmd, sizeof cmd, "cp -r '%s/s0' '%s/s0b'", d, d);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/s0b/runs.jsonl", d);
    char *text = mbs_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    char *nl = strchr(text, '\n');
    ck_assert_ptr_nonnull(nl);
    *nl = '\0';
    json_t *r = json_loads(text, 0, NULL);
    long run = (long)json_integer_value(json_object_get(r, "run"));
    json_t *e = json_object_get(r, "err");
    json_object_set_new(e, "q", json_real(mbs_jnum(r, "err.q") * 1.5 + 1e-300));
    char *line = json_dumps(r, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(r);
    size_t len = strlen(line) + strlen(nl + 1) + 2;
    char *mod = malloc(len);
    snprintf(mod, len, "%s\n%s", line, nl + 1);
    mbs_test_write_text(path, mod);
    free(mod);
    free(line);
    free(text);
    char ins[4200], want[64];
    snprintf(ins, sizeof ins, "%s/s0 %s/s1 %s/s2", d, d, d);
    snprintf(want, sizeof want, "conflict: run %ld", run);
    txt = run_cli("merge %s/m %s %s/s0b --no-history", d, ins, d, &st);
    ck_assert_int_eq(st, 2);
    ck_assert_msg(strstr(txt, want) && strstr(txt, "differ in err"), "%s", txt);
    free(txt);
    snprintf(path, sizeof path, "%s/m/runs.jsonl", d);
    ck_assert_int_ne(access(path, F_OK), 0);
    /* a directory of another grid */
    snprintf(path, sizeof path, "%s/other.suite", d);
    mbs_test_write_text(path, "[suite]\nname = shardtest\n[grid g]\nproblems = pendulum\n"
                              "methods = index1/rk4\nh = 0.01\nt_end = 0.1\n");
    txt = run_cli("sweep %s/other.suite --out %s/other --no-history%s", d, d, "", &st);
    ck_assert_int_eq(st, 0);
    free(txt);
    txt = run_cli("merge %s/m %s/s0 %s/other --no-history", d, d, d, &st);
    ck_assert_int_eq(st, 2);
    ck_assert_msg(strstr(txt, "different grids"), "%s", txt);
    free(txt);
    mbs_test_remove_tree(d);
    free(d);
}
END_TEST

START_TEST(resume_refuses_another_shard)
{
    char *d = shard_fixture();
    int st;
    char *txt = run_cli("sweep %s/test.suite --shard 1/3 --resume %s/s0 --no-history", d, d, "",
                        &st);
    ck_assert_int_eq(st, 2);
    ck_assert_msg(strstr(txt, "holds shard 0/3") && strstr(txt, "not shard 1/3"), "%s", txt);
    free(txt);
    txt = run_cli("sweep %s/test.suite --resume %s/s0 --no-history%s", d, d, "", &st);
    ck_assert_int_eq(st, 2);
    ck_assert_msg(strstr(txt, "not the whole grid"), "%s", txt);
    free(txt);
    txt = run_cli("sweep %s/test.suite --shard 0/3 --resume %s/s0 --no-history", d, d, "", &st);
    ck_assert_msg(st == 0 && strstr(txt, "shard 0/3"), "%s", txt); /* nothing left to do */
    free(txt);
    mbs_test_remove_tree(d);
    free(d);
}
END_TEST

static const char *const bad_options[][2] = {
    {"--shard 3/3", "--shard '3/3'"},
    {"--shard x", "--shard 'x'"},
    {"--shard 1/0", "--shard '1/0'"},
    {"--shard -1/2", "--shard '-1/2'"},
    {"--shard 0/50", "50 shards exceed the 18 runs"},
    {"--slurm", "--out DIR required"},
    {"--submit --out /tmp/x", "--submit goes with --slurm"},
    {"--slurm --out /tmp/x --partition 'a b'", "--partition 'a b'"},
    {"--slurm --out /tmp/x --array-size 0", "--array-size 0 must lie in [1, 100000]"},
    {"--slurm --out /tmp/x --time '1;rm'", "--time '1;rm'"},
    {"--cost-from /tmp", "--cost-from goes with --shard or --slurm"},
    {"--shard 0/2 --cost-from /nonexistent-dir", "--cost-from"},
};

START_TEST(bad_cluster_options)
{
    int st;
    char *txt = run_cli("sweep suites/smoke.suite %s --no-history%s%s", bad_options[_i][0], "",
                        "", &st);
    ck_assert_msg(st == 2 && strstr(txt, bad_options[_i][1]), "%s: exit %d: %s",
                  bad_options[_i][0], st, txt);
    free(txt);
}
END_TEST

START_TEST(slurm_script_runs_as_an_array)
{
    char *d = mbs_test_tmpdir(), path[4200], cmd[12000];
    snprintf(path, sizeof path, "%s/test.suite", d);
    mbs_test_write_text(path, suite_text);
    /* a stand-in sbatch: records its arguments, answers a job id like --parsable */
    snprintf(path, sizeof path, "%s/bin", d);
    ck_assert_int_eq(mbs_mkdir_p(path), 0);
    snprintf(path, sizeof path, "%s/bin/sbatch", d);
    mbs_test_write_text(path, "#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/args\"\n"
                              "echo '4242;testcluster'\n");
    chmod(path, 0755);
    int st;
    char opts[2000];
    snprintf(opts, sizeof opts, "--slurm --array-size 3 --partition p1 --account acc --qos q "
                                "--cpus-per-task 2 --mem 1G --time 1:00:00 --sbatch-option "
                                "--constraint=avx2 --submit --out %s/array", d);
    char *txt;
    snprintf(cmd, sizeof cmd, "PATH=%s/bin:$PATH %s sweep %s/test.suite %s > %s/out.txt 2>&1",
             d, getenv("MBSBENCH") ? getenv("MBSBENCH") : "bin/mbsbench", d, opts, d);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/out.txt", d);
    char *out = mbs_read_file(path, NULL);
    ck_assert_msg(out && strstr(out, "submitted job array 4242 (3 tasks)"), "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/array/slurm-job", d);
    char *id = mbs_read_file(path, NULL);
    ck_assert_str_eq(id, "4242\n");
    free(id);
    snprintf(path, sizeof path, "%s/array/sweep.sbatch", d);
    char *script = mbs_read_file(path, NULL);
    ck_assert_ptr_nonnull(script);
    static const char *const want[] = {
        "#!/bin/sh\n", "#SBATCH --array=0-2\n", "#SBATCH --cpus-per-task=2\n",
        "#SBATCH --requeue\n", "#SBATCH --partition=p1\n", "#SBATCH --time=1:00:00\n",
        "#SBATCH --account=acc\n", "#SBATCH --qos=q\n", "#SBATCH --mem=1G\n",
        "#SBATCH --constraint=avx2\n", "--shard \"${SLURM_ARRAY_TASK_ID}/3\"",
        "shard-${SLURM_ARRAY_TASK_ID}\" -j 2 --no-history"};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++)
        ck_assert_msg(strstr(script, want[k]), "sweep.sbatch lacks '%s':\n%s", want[k], script);
    free(script);
    snprintf(cmd, sizeof cmd, "sh -n '%s/array/sweep.sbatch'", d);
    ck_assert_int_eq(system(cmd), 0);
    /* the script as Slurm would run it: three array tasks, here one after another */
    for (int t = 0; t < 3; t++) {
        snprintf(cmd, sizeof cmd, "SLURM_ARRAY_TASK_ID=%d sh '%s/array/sweep.sbatch' > "
                                  "/dev/null 2>&1", t, d);
        ck_assert_int_eq(system(cmd), 0);
    }
    txt = run_cli("merge %s/merged %s/array/shard-0 %s/array/shard-1 --no-history", d, d, d,
                  &st);
    ck_assert_int_eq(st, 1);
    free(txt);
    char ins[4200];
    snprintf(ins, sizeof ins, "%s/array/shard-0 %s/array/shard-1 %s/array/shard-2", d, d, d);
    txt = run_cli("merge %s/merged %s --no-history%s", d, ins, "", &st);
    ck_assert_msg(st == 0, "%s", txt);
    free(txt);
    txt = run_cli("sweep %s/test.suite -j 2 --out %s/local --no-history", d, d, "", &st);
    ck_assert_int_eq(st, 0);
    free(txt);
    char a[4200], b[4200];
    snprintf(a, sizeof a, "%s/merged", d);
    snprintf(b, sizeof b, "%s/local", d);
    assert_same_records(a, b);
    /* sbatch refusing is an error naming it */
    snprintf(path, sizeof path, "%s/bin/sbatch", d);
    mbs_test_write_text(path, "#!/bin/sh\necho 'sbatch: error: invalid partition specified: p1'"
                              "\nexit 1\n");
    snprintf(cmd, sizeof cmd, "PATH=%s/bin:$PATH %s sweep %s/test.suite --slurm --out %s/a2 "
                              "--submit > %s/out2.txt 2>&1",
             d, getenv("MBSBENCH") ? getenv("MBSBENCH") : "bin/mbsbench", d, d, d);
    int rc = system(cmd);
    ck_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
    snprintf(path, sizeof path, "%s/out2.txt", d);
    out = mbs_read_file(path, NULL);
    ck_assert_msg(out && strstr(out, "invalid partition"), "%s", out);
    free(out);
    mbs_test_remove_tree(d);
    free(d);
}
END_TEST

START_TEST(merge_flags_several_environments)
{
    char *d = shard_fixture(), path[4200];
    int st;
    snprintf(path, sizeof path, "%s/s1/meta.json", d);
    json_t *m = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(m);
    json_object_set_new(m, "cpu", json_string("Another CPU model"));
    json_object_set_new(m, "host", json_string("node17"));
    ck_assert_int_eq(json_dump_file(m, path, JSON_INDENT(2)), 0);
    json_decref(m);
    char ins[4200];
    snprintf(ins, sizeof ins, "%s/s0 %s/s1 %s/s2", d, d, d);
    char *txt = run_cli("merge %s/m %s --no-history%s", d, ins, "", &st);
    ck_assert_msg(st == 0 && strstr(txt, "2 environments"), "%s", txt);
    free(txt);
    snprintf(path, sizeof path, "%s/m/meta.json", d);
    m = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(strstr(mbs_jstr(m, "cpu"), "mixed"));
    ck_assert_int_eq((int)json_array_size(json_object_get(m, "merged_from")), 3);
    json_decref(m);
    mbs_results r;
    char err[512], dir[4200];
    snprintf(dir, sizeof dir, "%s/m", d);
    ck_assert_int_eq(mbs_results_load_quiet(dir, &r, err, sizeof err), 0);
    int on17 = 0;
    for (size_t i = 0; i < r.n; i++)
        on17 += strcmp(mbs_jstr(r.recs[i], "node"), "node17") == 0;
    ck_assert_int_gt(on17, 0);
    mbs_results_free(&r);
    txt = run_cli("baseline bless %s/local -o %s/base.json%s", d, d, "", &st);
    free(txt);
    txt = run_cli("compare %s/base.json %s/m", d, d, "", &st);
    ck_assert_msg(strstr(txt, "CPU tier: advisory only (cpu differs"), "%s", txt);
    free(txt);
    txt = run_cli("report %s/m --out %s/rep", d, d, "", &st);
    ck_assert_int_eq(st, 0);
    free(txt);
    snprintf(path, sizeof path, "%s/rep/index.md", d);
    char *md = mbs_read_file(path, NULL);
    ck_assert_msg(md && strstr(md, "CPU times come from 2 different environments") &&
                      strstr(md, "node17"), "report does not flag the machines");
    free(md);
    mbs_test_remove_tree(d);
    free(d);
}
END_TEST

Suite *mbs_suite_cluster(void)
{
    Suite *s = suite_create("cluster");
    TCase *tc = tcase_create("cluster");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, plan_is_deterministic_reorder_stable_and_balanced);
    tcase_add_test(tc, shards_merge_into_the_local_sweep);
    tcase_add_test(tc, merge_names_what_is_missing);
    tcase_add_test(tc, merge_reports_conflicts_and_other_grids);
    tcase_add_test(tc, resume_refuses_another_shard);
    tcase_add_loop_test(tc, bad_cluster_options, 0,
                        (int)(sizeof bad_options / sizeof *bad_options));
    tcase_add_test(tc, slurm_script_runs_as_an_array);
    tcase_add_test(tc, merge_flags_several_environments);
    suite_add_tcase(s, tc);
    return s;
}
