/* Robustness: malformed suite files, kill -9 and --resume, SIGINT,
 * injected failures.  These drive the mbsbench executable through /bin/sh. */
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/io.h"
#include "../harness/run.h"
#include "../harness/sweep.h"
#include "../problems/mech.h"
#include "testutil.h"

static const struct {
    const char *name, *text, *needle;
} malformed[] = {
    {"empty", "", "name is required"},
    {"binary", "\x7f" "ELF\x01\x02\x00\x00garbage\xff\xfe", "not a text file"},
    {"duplicate key", "[suite]\nname = a\nname = b\n[grid g]\nproblems = pendulum\n"
                      "methods = index1/rk4\nh = 0.1\n", ":3: [suite]: duplicate key 'name'"},
    {"unknown section", "[suite]\nname = a\n[gird g]\nproblems = pendulum\n",
     ":4: [gird g]: unknown section"},
    {"unknown key", "[suite]\nname = a\n[grid g]\nproblem = pendulum\nmethods = index1/rk4\n"
                    "h = 0.1\n", ":4: [grid g]: unknown key 'problem'"},
    {"huge number", "[suite]\nname = a\n[grid g]\nproblems = pendulum\nmethods = index1/rk4\n"
                    "h = 1e999\n", ":6: [grid g]: h: '1e999' is not a positive finite number"},
    {"negative count", "[suite]\nname = a\nrepeat = -3\n[grid g]\nproblems = pendulum\n"
                       "methods = index1/rk4\nh = 0.1\n", ":3: [suite]: repeat '-3'"},
    {"missing =", "[suite]\nname a\n", ":2: syntax error"},
    {"unterminated section", "[suite]\nname = a\n[grid g\nproblems = pendulum", ":3: syntax error"},
    {"trailing junk", "[suite]\nname = a\n[grid g]\nproblems = pendulum\nmethods = index1/rk4\n"
                      "h = 0.1x\n", "'0.1x' is not a positive finite number"},
    {"nan", "[suite]\nname = a\n[grid g]\nproblems = pendulum\nmethods = index1/rk4\n"
            "h = nan\n", "'nan' is not a positive finite number"},
    {"bad parameter", "[suite]\nname = a\n[grid g]\nproblems = pendulum:x0=-1\n"
                      "methods = index1/rk4\nh = 0.1\n", ":4: [grid g]: problems: pendulum: parameter x0=-1"},
    {"long line", NULL, "exceeds 190"},
};

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
}

START_TEST(malformed_suite_files)
{
    char path[64], args[256], out[1024];
    snprintf(path, sizeof path, "/tmp/mbs-malformed-%d.suite", (int)getpid());
    if (malformed[_i].text) {
        size_t len = strlen(malformed[_i].text);
        if (strcmp(malformed[_i].name, "binary") == 0)
            len = sizeof "\x7f" "ELF\x01\x02\x00\x00garbage\xff\xfe" - 1; /* with NULs */
        write_text(path, malformed[_i].text, len);
    } else {
        size_t n = 1 << 20;
        char *big = malloc(n + 64);
        strcpy(big, "[suite]\nname = a\nproblems = ");
        size_t k = strlen(big);
        memset(big + k, 'p', n);
        big[k + n] = '\n';
        write_text(path, big, k + n + 1);
        free(big);
    }
    snprintf(args, sizeof args, "sweep %s --out /tmp/mbs-malformed-out-%d", path, (int)getpid());
    int st = mbs_test_cli(args, out, sizeof out);
    ck_assert_msg(st == 2, "%s: exit %d", malformed[_i].name, st);
    ck_assert_msg(strstr(out, malformed[_i].needle) != NULL, "%s: '%s' lacks '%s'",
                  malformed[_i].name, out, malformed[_i].needle);
    remove(path);
}
END_TEST

/* Shell: wait (at most 120 s) until the sweep writing to directory %s has recorded
 * its first run.  A fixed sleep is not enough on a loaded machine: an asynchronous
 * command of a non-interactive shell starts with SIGINT ignored, and a signal sent
 * before the sweep installs its handler is lost (the sweep then ran to the end). */
#define WAIT_FIRST_RECORD                                                               \
    "for i in $(seq 2400); do [ -s %s/runs.jsonl ] && break; sleep 0.05; done; "

/* A suite of 8 runs of about 0.5 s each. */
enum { LONG_RUNS = 8 };
static void write_long_suite(const char *path, const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text,
             "[suite]\nname = robust\nrepeat = 1\n[grid g]\n"
             "problems = pendulum pendulum:x0=0.1\n"
             "methods = index1/rk4\n"
             "h = 3e-5 3.1e-5 3.2e-5 3.3e-5\nt_end = 10\n%s",
             extra);
    write_text(path, text, strlen(text));
}

/* Records of a results directory by run index, with the cpu object removed. */
static json_t *load_records(const char *dir, int *n_lines)
{
    char path[256];
    snprintf(path, sizeof path, "%s/runs.jsonl", dir);
    char *text = mbs_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    json_t *by_run = json_object();
    *n_lines = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_error_t e;
        json_t *o = json_loads(line, 0, &e);
        ck_assert_msg(o != NULL, "unparsable line in %s: %s", path, e.text);
        (*n_lines)++;
        json_object_del(o, "cpu");
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_object_get(o, "run")));
        ck_assert_msg(json_object_get(by_run, key) == NULL, "run %s recorded twice", key);
        json_object_set_new(by_run, key, o);
    }
    free(text);
    return by_run;
}

START_TEST(kill9_then_resume_equals_clean_run)
{
    char suite[64], clean[64], cut[64], cmd[1024], out[1024];
    int pid = (int)getpid();
    snprintf(suite, sizeof suite, "/tmp/mbs-robust-%d.suite", pid);
    snprintf(clean, sizeof clean, "/tmp/mbs-robust-clean-%d", pid);
    snprintf(cut, sizeof cut, "/tmp/mbs-robust-cut-%d", pid);
    write_long_suite(suite, "");
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", clean, cut);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "sweep %s --out %s", suite, clean);
    ck_assert_int_eq(mbs_test_cli(cmd, out, sizeof out), 0);
    /* Start a sweep in the background and kill -9 it part-way. */
    const char *bin = getenv("MBSBENCH") ? getenv("MBSBENCH") : "bin/mbsbench";
    snprintf(cmd, sizeof cmd,
             "%s sweep %s --out %s -j 2 >/dev/null 2>&1 & p=$!; " WAIT_FIRST_RECORD
             "kill -9 $p; wait $p",
             bin, suite, cut, cut);
    int st = system(cmd);
    (void)st;
    int n_cut = 0, n_clean = 0, n_done = 0;
    json_t *partial = load_records(cut, &n_cut);
    json_decref(partial);
    ck_assert_msg(n_cut < LONG_RUNS, "the sweep finished before the kill (%d records)", n_cut);
    snprintf(cmd, sizeof cmd, "sweep %s --resume %s -j 2", suite, cut);
    ck_assert_int_eq(mbs_test_cli(cmd, out, sizeof out), 0);
    json_t *a = load_records(clean, &n_clean), *b = load_records(cut, &n_done);
    ck_assert_int_eq(n_clean, LONG_RUNS);
    ck_assert_int_eq(n_done, LONG_RUNS);
    ck_assert_msg(json_equal(a, b), "resumed record set differs from the clean run");
    json_decref(a);
    json_decref(b);
    snprintf(cmd, sizeof cmd, "rm -rf %s %s %s", clean, cut, suite);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(sigint_leaves_whole_lines)
{
    char suite[64], dir[64], cmd[1024];
    int pid = (int)getpid();
    snprintf(suite, sizeof suite, "/tmp/mbs-sigint-%d.suite", pid);
    snprintf(dir, sizeof dir, "/tmp/mbs-sigint-out-%d", pid);
    write_long_suite(suite, "");
    const char *bin = getenv("MBSBENCH") ? getenv("MBSBENCH") : "bin/mbsbench";
    snprintf(cmd, sizeof cmd,
             "rm -rf %s; %s sweep %s --out %s -j 2 >%s.out 2>&1 & p=$!; " WAIT_FIRST_RECORD
             "kill -INT $p; wait $p; exit $?",
             dir, bin, suite, dir, dir, dir);
    int st = system(cmd);
    ck_assert_int_eq(WEXITSTATUS(st), 130);
    int n = 0;
    json_t *recs = load_records(dir, &n); /* fails on any torn line */
    ck_assert(n < LONG_RUNS);
    json_decref(recs);
    /* The message counts what runs.jsonl holds (qa: it once said 108 with 109
     * records: a worker stopped right after writing its record). */
    char outp[80];
    snprintf(outp, sizeof outp, "%s.out", dir);
    char *text = mbs_read_file(outp, NULL);
    ck_assert_ptr_nonnull(text);
    const char *msg = strstr(text, "interrupted by signal 2: ");
    ck_assert_msg(msg != NULL, "no interruption message in %s", text);
    int said = -1;
    ck_assert_int_eq(sscanf(msg, "interrupted by signal 2: %d of", &said), 1);
    ck_assert_msg(said == n, "message says %d runs recorded, runs.jsonl holds %d", said, n);
    free(text);
    snprintf(cmd, sizeof cmd, "rm -rf %s %s %s.out", dir, suite, dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(injected_failure_is_recorded_and_sweep_goes_on)
{
    char suite[64], dir[64], cmd[512], out[1024];
    int pid = (int)getpid();
    snprintf(suite, sizeof suite, "/tmp/mbs-inject-%d.suite", pid);
    snprintf(dir, sizeof dir, "/tmp/mbs-inject-out-%d", pid);
    const char text[] = "[suite]\nname = inject\n"
                        "[grid good]\nproblems = pendulum\nmethods = index1/rk4\nh = 0.01 0.02\n"
                        "[grid bad]\nproblems = pendulum\nmethods = index1/rk4\nh = 0.01\n"
                        "inject_failure = 0.5\n"
                        "[grid after]\nproblems = pendulum-body\nmethods = index1/dopri5\n"
                        "tol = 1e-6\n";
    write_text(suite, text, sizeof text - 1);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "sweep %s --out %s", suite, dir);
    ck_assert_int_eq(mbs_test_cli(cmd, out, sizeof out), 1);
    int n = 0;
    json_t *recs = load_records(dir, &n);
    ck_assert_int_eq(n, 4);
    for (int i = 0; i < 4; i++) {
        char key[8];
        snprintf(key, sizeof key, "%d", i);
        json_t *r = json_object_get(recs, key);
        const char *status = json_string_value(json_object_get(r, "status"));
        if (i == 2) {
            ck_assert_str_eq(status, "callback_failed");
            double t = json_real_value(json_object_get(r, "fail_t"));
            ck_assert(t >= 0.5 && t <= 0.51);
            ck_assert(json_is_null(json_object_get(json_object_get(r, "cpu"), "median")) ||
                      json_object_get(r, "cpu") == NULL);
        } else {
            ck_assert_str_eq(status, "ok");
        }
    }
    json_decref(recs);
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", dir, suite);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A worker killed by a signal becomes a `worker_crashed` record and the sweep
 * goes on to complete every other run. */
START_TEST(killed_worker_is_recorded)
{
    char suite[64], dir[64], cmd[1024];
    int pid = (int)getpid();
    snprintf(suite, sizeof suite, "/tmp/mbs-crash-%d.suite", pid);
    snprintf(dir, sizeof dir, "/tmp/mbs-crash-out-%d", pid);
    write_long_suite(suite, "");
    const char *bin = getenv("MBSBENCH") ? getenv("MBSBENCH") : "bin/mbsbench";
    /* Kill the running workers (children of the sweep) once, as soon as one runs
     * (polled: a fixed sleep was flaky on a loaded machine). */
    snprintf(cmd, sizeof cmd,
             "rm -rf %s; %s sweep %s --out %s >/dev/null 2>&1 & p=$!; k=0; n=0; "
             "while [ $k = 0 ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n+1)); "
             "for d in /proc/[0-9]*; do read -r c x y pp rest < $d/stat 2>/dev/null || continue; "
             "[ \"$pp\" = \"$p\" ] && kill -9 $c && k=1; done; done; wait $p; exit $?",
             dir, bin, suite, dir);
    int st = system(cmd);
    ck_assert_int_eq(WEXITSTATUS(st), 1);
    int n = 0, crashed = 0;
    json_t *recs = load_records(dir, &n);
    ck_assert_int_eq(n, LONG_RUNS);
    const char *key;
    json_t *r;
    json_object_foreach(recs, key, r) {
        const char *status = json_string_value(json_object_get(r, "status"));
        if (strcmp(status, "worker_crashed") == 0) {
            crashed++;
            ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(r, "reason")),
                                         "signal 9"));
        } else {
            ck_assert_str_eq(status, "ok");
        }
    }
    ck_assert_int_ge(crashed, 1);
    json_decref(recs);
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", dir, suite);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Inputs that once crashed a fuzzer target (fuzz/regressions/suite-*, spec-*, mech-*)
 * are parsed again: a clean status, never a crash. */
START_TEST(fuzz_regressions_replay)
{
    DIR *d = opendir("fuzz/regressions");
    if (!d)
        return; /* none kept (the directory holds only a README in that case) */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[512];
        snprintf(path, sizeof path, "fuzz/regressions/%s", e->d_name);
        size_t len = 0;
        if (strncmp(e->d_name, "suite-", 6) == 0) {
            char *data = mbs_read_file(path, &len);
            ck_assert_ptr_nonnull(data);
            mbs_suite s;
            char err[4096];
            if (mbs_suite_parse(data, len, path, &s, err, sizeof err) == MBS_OK)
                mbs_suite_free(&s);
            free(data);
        } else if (strncmp(e->d_name, "mech-", 5) == 0) {
            char *data = mbs_read_file(path, &len), err[4096];
            ck_assert_ptr_nonnull(data);
            (void)mbs_mech_check_text(data, len, path, err, sizeof err);
            free(data);
        } else if (strncmp(e->d_name, "spec-", 5) == 0) {
            char *data = mbs_read_file(path, &len);
            ck_assert_ptr_nonnull(data);
            char *method = strchr(data, '\n'), err[512];
            if (method)
                *method++ = '\0';
            mbs_problem pb;
            if (mbs_problem_open(&pb, data, err, sizeof err) == MBS_OK)
                mbs_problem_close(&pb);
            if (method) {
                const mbs_method_def *m;
                mbs_params p;
                (void)mbs_method_parse(method, &m, &p, err, sizeof err);
            }
            free(data);
        }
    }
    closedir(d);
}
END_TEST

/* A failure reason that quotes the cause (mbs_fail with ctx->reason as an
 * argument) keeps the cause: before, vsnprintf into its own source printed the
 * new text twice and lost "mass callback failed". */
static const char *const reason_methods[] = {"index1/dopri5", "index2/hem4-adapt",
                                             "index1/hedopri5"};

START_TEST(failure_reason_keeps_its_cause)
{
    mbs_run_spec spec = {.problem = "pendulum", .method = reason_methods[_i], .h = NAN,
                         .tol = 1e-6, .t_end = 1.0, .repeat = 0, .measure = 1,
                         .inject_fail_t = 0.5};
    mbs_record rec;
    char err[512];
    ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_OK);
    ck_assert_int_ne(rec.status, MBS_OK);
    ck_assert_msg(strstr(rec.reason, "callback failed (injected at t >= 0.5)"), "%s: %s",
                  reason_methods[_i], rec.reason);
    const char *first = strstr(rec.reason, "below hmin");
    ck_assert_msg(!first || !strstr(first + 1, "below hmin"), "%s: %s", reason_methods[_i],
                  rec.reason);
    mbs_record_free(&rec);
}
END_TEST

/* --resume of a directory another suite wrote: refused naming both suites,
 * before its runs.jsonl is touched (qa: the message named a mismatching run,
 * and a torn last line was cut first). */
START_TEST(resume_of_another_suites_directory)
{
    char dir[64], path[96], cmd[160], out[512];
    snprintf(dir, sizeof dir, "/tmp/mbs-resume-other-%d", (int)getpid());
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/meta.json", dir);
    static const char meta[] = "{\"suite\": \"default\"}\n";
    write_text(path, meta, sizeof meta - 1);
    snprintf(path, sizeof path, "%s/runs.jsonl", dir);
    static const char torn[] = "{\"run\": 0, \"problem\": \"pend";
    write_text(path, torn, sizeof torn - 1);
    int lines = 0;
    snprintf(cmd, sizeof cmd, "sweep suites/smoke.suite --resume %s", dir);
    ck_assert_int_eq(mbs_test_cli_lines(cmd, out, sizeof out, &lines), 2);
    ck_assert_int_eq(lines, 1);
    ck_assert_msg(strstr(out, "holds results of suite default, not smoke") != NULL, "%s", out);
    size_t len = 0;
    char *text = mbs_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(len == sizeof torn - 1, "runs.jsonl was changed (%zu bytes)", len);
    free(text);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *mbs_suite_robust(void)
{
    Suite *s = suite_create("robust");
    TCase *tc = tcase_create("robust");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, malformed_suite_files, 0,
                        (int)(sizeof malformed / sizeof malformed[0]));
    tcase_add_test(tc, kill9_then_resume_equals_clean_run);
    tcase_add_test(tc, sigint_leaves_whole_lines);
    tcase_add_test(tc, injected_failure_is_recorded_and_sweep_goes_on);
    tcase_add_test(tc, fuzz_regressions_replay);
    tcase_add_test(tc, killed_worker_is_recorded);
    tcase_add_test(tc, resume_of_another_suites_directory);
    tcase_add_loop_test(tc, failure_reason_keeps_its_cause, 0,
                        (int)(sizeof reason_methods / sizeof *reason_methods));
    suite_add_tcase(s, tc);
    return s;
}
