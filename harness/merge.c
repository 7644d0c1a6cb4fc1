#include "merge.h"

#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli.h"
#include "history.h"
#include "io.h"
#include "results.h"
#include "sweep.h"

typedef struct input {
    const char *dir;
    mbs_results res;
    int loaded;
    int shard, count;   /* shard index and count; count = 0: a whole-grid directory */
    char *assigned;     /* shard inputs: assigned[run] = 1 for the shard's runs */
    const char *host;
} input;

typedef struct slot {
    json_t *rec;        /* borrowed from the input holding it first */
    int from;
} slot;

/* The record without its timing fields, for comparing two runs of one case. */
static json_t *untimed(json_t *rec)
{
    json_t *c = json_deep_copy(rec);
    json_object_del(c, "cpu");
    json_object_del(c, "node");
    return c;
}

/* First top-level field in which two records differ (for the conflict message). */
static const char *first_difference(json_t *a, json_t *b)
{
    const char *k;
    json_t *v;
    json_object_foreach(a, k, v)
    {
        if (strcmp(k, "cpu") != 0 && strcmp(k, "node") != 0 &&
            !json_equal(v, json_object_get(b, k)))
            return k;
    }
    json_object_foreach(b, k, v)
    {
        if (!json_object_get(a, k))
            return k;
    }
    return "?";
}

static const char *env_key(json_t *meta, char *buf, size_t len)
{
    json_t *cores = json_object_get(meta, "cores");
    snprintf(buf, len, "%s | %s | %s | %lld cores", mbs_jstr(meta, "cpu"),
             mbs_jstr(meta, "compiler"), mbs_jstr(meta, "cflags"),
             (long long)json_integer_value(cores));
    return buf;
}

/* Is a running sweep still writing this directory (its flock)? */
static int being_written(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return 0;
    int busy = flock(fd, LOCK_SH | LOCK_NB) != 0;
    close(fd);
    return busy;
}

static int load_input(input *in, const char *dir)
{
    char err[1024];
    in->dir = dir;
    if (being_written(dir)) {
        fprintf(stderr, "mbsbench: merge: '%s' is being written by a running sweep (locked); "
                        "merge after it ends\n", dir);
        return 2;
    }
    if (mbs_results_load(dir, &in->res, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: merge: %s\n", err);
        return 2;
    }
    in->loaded = 1;
    if (in->res.n_bad > 0) {
        fprintf(stderr, "mbsbench: merge: '%s' has %zu unreadable lines (listed above); "
                        "`mbsbench sweep SUITE --resume %s` cuts a torn last line\n",
                dir, in->res.n_bad, dir);
        return 2;
    }
    json_t *m = in->res.meta;
    if (!m || !json_is_string(json_object_get(m, "suite_digest")) ||
        !json_is_integer(json_object_get(m, "suite_runs"))) {
        fprintf(stderr, "mbsbench: merge: '%s' has no meta.json with suite_digest and "
                        "suite_runs (a sweep of an older mbsbench); rerun it\n",
                dir);
        return 2;
    }
    in->host = mbs_jstr(m, "host");
    json_t *sh = json_object_get(m, "shard");
    if (json_is_object(sh)) {
        in->shard = (int)json_integer_value(json_object_get(sh, "index"));
        in->count = (int)json_integer_value(json_object_get(sh, "count"));
        size_t n = (size_t)json_integer_value(json_object_get(m, "suite_runs"));
        in->assigned = calloc(n ? n : 1, 1);
        if (!in->assigned)
            return 2;
        size_t i;
        json_t *x;
        json_array_foreach(json_object_get(sh, "runs"), i, x)
        {
            json_int_t r = json_integer_value(x);
            if (r >= 0 && (size_t)r < n)
                in->assigned[r] = 1;
        }
    }
    return 0;
}

static void print_runs(FILE *f, const long *list, size_t n)
{
    for (size_t k = 0; k < n && k < 12; k++)
        fprintf(f, "%s%ld", k ? ", " : "", list[k]);
    if (n > 12)
        fprintf(f, ", ... (%zu more)", n - 12);
}

/* meta.json of the merged directory. */
static json_t *merged_meta(input *in, int n_in, size_t *n_env)
{
    json_t *meta = json_deep_copy(in[0].res.meta);
    json_object_del(meta, "shard");
    json_t *from = json_array();
    char envs[64][600], k[600];
    size_t ne = 0;
    for (int i = 0; i < n_in; i++) {
        json_t *m = in[i].res.meta, *o = json_object();
        json_object_set_new(o, "dir", json_string(in[i].dir));
        if (in[i].count > 0) {
            char s[48];
            snprintf(s, sizeof s, "%d/%d", in[i].shard, in[i].count);
            json_object_set_new(o, "shard", json_string(s));
        }
        static const char *const keys[] = {"host", "cpu", "cores", "compiler", "cflags",
                                           "kernel", "revision", "date", "calibration_s",
                                           "load_average"};
        for (size_t j = 0; j < sizeof keys / sizeof *keys; j++) {
            json_t *v = json_object_get(m, keys[j]);
            if (v)
                json_object_set(o, keys[j], v);
        }
        json_object_set_new(o, "runs", json_integer((json_int_t)in[i].res.n));
        json_array_append_new(from, o);
        env_key(m, k, sizeof k);
        size_t e = 0;
        while (e < ne && strcmp(envs[e], k) != 0)
            e++;
        if (e == ne && ne < 64)
            snprintf(envs[ne++], sizeof envs[0], "%s", k);
    }
    json_object_set_new(meta, "merged_from", from);
    json_object_set_new(meta, "environments", json_integer((json_int_t)ne));
    if (ne > 1) { /* CPU times of several machines: compare keeps them advisory */
        char s[128];
        snprintf(s, sizeof s, "mixed: %zu environments (see merged_from)", ne);
        json_object_set_new(meta, "cpu", json_string(s));
        json_object_del(meta, "calibration_s");
    }
    *n_env = ne;
    return meta;
}

static int copy_file(const char *from, const char *to)
{
    size_t len = 0;
    char *data = mbs_read_file(from, &len);
    if (!data)
        return 0; /* no series for this run */
    int r = mbs_write_atomic(to, data, len);
    free(data);
    return r;
}

static int write_merged(const char *out, input *in, int n_in, slot *slots, size_t n,
                        size_t *n_env)
{
    char path[4400], from[4400];
    if (mbs_mkdir_p(out) != 0) {
        fprintf(stderr, "mbsbench: merge: cannot create '%s'\n", out);
        return 2;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return 2;
    int series = 0;
    for (size_t r = 0; r < n; r++) {
        if (!slots[r].rec)
            continue;
        json_t *c = json_deep_copy(slots[r].rec);
        json_object_set_new(c, "node", json_string(in[slots[r].from].host));
        char *line = json_dumps(c, JSON_COMPACT | JSON_REAL_PRECISION(17));
        json_decref(c);
        if (!line) {
            fclose(m);
            free(buf);
            return 2;
        }
        fprintf(m, "%s\n", line);
        free(line);
        snprintf(from, sizeof from, "%s/series/run-%zu.tsv", in[slots[r].from].dir, r);
        if (access(from, R_OK) == 0) {
            snprintf(path, sizeof path, "%s/series", out);
            if (!series && mbs_mkdir_p(path) != 0)
                return fclose(m), free(buf), 2;
            series = 1;
            snprintf(path, sizeof path, "%s/series/run-%zu.tsv", out, r);
            if (copy_file(from, path) != 0)
                return fclose(m), free(buf), 2;
        }
    }
    fclose(m);
    json_t *meta = merged_meta(in, n_in, n_env);
    char *mt = json_dumps(meta, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(meta);
    snprintf(path, sizeof path, "%s/meta.json", out);
    int bad = !mt || mbs_write_atomic(path, mt, strlen(mt)) != 0;
    free(mt);
    snprintf(path, sizeof path, "%s/runs.jsonl", out);
    bad = bad || mbs_write_atomic(path, buf, len) != 0;
    free(buf);
    bad = bad || mbs_write_runs_csv(out) != 0;
    if (bad) {
        fprintf(stderr, "mbsbench: merge: cannot write into '%s'\n", out);
        return 2;
    }
    return 0;
}

/* Check the inputs against each other and fill slots; returns the number of
 * conflicts (reported), or -1 on bad input (reported). */
static long collect(input *in, int n_in, slot *slots, size_t n, size_t *dups)
{
    long conflicts = 0;
    char key[1200];
    for (int i = 0; i < n_in; i++) {
        json_t *m = in[i].res.meta, *m0 = in[0].res.meta;
        if (strcmp(mbs_jstr(m, "suite_digest"), mbs_jstr(m0, "suite_digest")) != 0 ||
            strcmp(mbs_jstr(m, "suite"), mbs_jstr(m0, "suite")) != 0) {
            fprintf(stderr, "mbsbench: merge: '%s' holds suite %s (grid digest %s), '%s' suite "
                            "%s (digest %s): runs of different grids cannot be merged\n",
                    in[i].dir, mbs_jstr(m, "suite"), mbs_jstr(m, "suite_digest"), in[0].dir,
                    mbs_jstr(m0, "suite"), mbs_jstr(m0, "suite_digest"));
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (in[i].count && in[j].count && in[i].count != in[j].count) {
                fprintf(stderr, "mbsbench: merge: '%s' is shard %d/%d, '%s' shard %d/%d: "
                                "splits into different numbers of shards cannot be merged\n",
                        in[i].dir, in[i].shard, in[i].count, in[j].dir, in[j].shard,
                        in[j].count);
                return -1;
            }
        for (int j = 0; j < i && in[i].count; j++) /* two plans must not claim one run */
            if (in[j].count && in[j].shard != in[i].shard)
                for (size_t r = 0; r < n; r++)
                    if (in[i].assigned[r] && in[j].assigned[r]) {
                        fprintf(stderr, "mbsbench: merge: run %zu is in shard %d ('%s') and in "
                                        "shard %d ('%s'): the shards were planned differently "
                                        "(another --cost-from?)\n",
                                r, in[j].shard, in[j].dir, in[i].shard, in[i].dir);
                        return -1;
                    }
        for (size_t k = 0; k < in[i].res.n; k++) {
            json_t *rec = in[i].res.recs[k];
            double x = mbs_jnum(rec, "run");
            if (!(x >= 0.0 && x < (double)n) || x != floor(x)) {
                fprintf(stderr, "mbsbench: merge: '%s': a record with run index %g, outside the "
                                "suite's %zu runs\n", in[i].dir, x, n);
                return -1;
            }
            size_t r = (size_t)x;
            mbs_rec_key(rec, key, sizeof key);
            if (in[i].count && !in[i].assigned[r]) {
                fprintf(stderr, "mbsbench: merge: '%s' (shard %d/%d) holds run %zu (%s), which "
                                "is not in its shard\n", in[i].dir, in[i].shard, in[i].count, r,
                        key);
                conflicts++;
                continue;
            }
            if (!slots[r].rec) {
                slots[r] = (slot){rec, i};
                continue;
            }
            json_t *a = untimed(slots[r].rec), *b = untimed(rec);
            int same = json_equal(a, b);
            if (same)
                ++*dups;
            else {
                const char *f = first_difference(a, b);
                char *va = json_dumps(json_object_get(a, f), JSON_COMPACT | JSON_ENCODE_ANY);
                char *vb = json_dumps(json_object_get(b, f), JSON_COMPACT | JSON_ENCODE_ANY);
                fprintf(stderr, "mbsbench: merge: conflict: run %zu (%s): '%s' and '%s' differ "
                                "in %s (%.60s vs %.60s)\n", r, key, in[slots[r].from].dir,
                        in[i].dir, f, va ? va : "absent", vb ? vb : "absent");
                free(va);
                free(vb);
                conflicts++;
            }
            json_decref(a);
            json_decref(b);
        }
    }
    return conflicts;
}

/* Missing shards and runs, named with the command completing them; returns how
 * many runs are missing. */
static size_t report_missing(input *in, int n_in, slot *slots, size_t n)
{
    int count = 0;
    for (int i = 0; i < n_in; i++)
        if (in[i].count)
            count = in[i].count;
    const char *suite = mbs_jstr(in[0].res.meta, "suite_path");
    long *list = malloc((n ? n : 1) * sizeof *list);
    char *covered = calloc(n ? n : 1, 1);
    size_t missing = 0;
    if (!list || !covered) {
        free(list);
        free(covered);
        return n;
    }
    for (int s = 0; s < count; s++) {
        int have = -1;
        for (int i = 0; i < n_in && have < 0; i++)
            if (in[i].count && in[i].shard == s)
                have = i;
        if (have < 0)
            continue;
        size_t k = 0, total = 0;
        for (size_t r = 0; r < n; r++) {
            if (!in[have].assigned[r])
                continue;
            covered[r] = 1;
            total++;
            if (!slots[r].rec)
                list[k++] = (long)r;
        }
        if (k) {
            fprintf(stderr, "mbsbench: merge: shard %d/%d ('%s'): %zu of %zu runs missing (runs ",
                    s, count, in[have].dir, k, total);
            print_runs(stderr, list, k);
            fprintf(stderr, "); complete with: mbsbench sweep %s --shard %d/%d --resume %s\n",
                    suite, s, count, in[have].dir);
            missing += k;
        }
    }
    for (int s = 0; s < count; s++) {
        int have = 0;
        for (int i = 0; i < n_in; i++)
            have |= in[i].count && in[i].shard == s;
        if (!have)
            fprintf(stderr, "mbsbench: merge: shard %d/%d missing: none of the directories given "
                            "holds it (run it with: mbsbench sweep %s --shard %d/%d --out DIR)\n",
                    s, count, suite, s, count);
    }
    size_t k = 0;
    for (size_t r = 0; r < n; r++)
        if (!covered[r] && !slots[r].rec)
            list[k++] = (long)r;
    if (k) {
        if (count == 0) {
            fprintf(stderr, "mbsbench: merge: %zu of %zu runs of suite %s missing (runs ", k, n,
                    mbs_jstr(in[0].res.meta, "suite"));
            print_runs(stderr, list, k);
            fprintf(stderr, ")\n");
        }
        missing += k;
    }
    free(list);
    free(covered);
    return missing;
}

int mbs_cmd_merge(int argc, char **argv)
{
    const char *out = NULL, *history = NULL;
    const char **dirs = calloc((size_t)argc, sizeof *dirs);
    int n_in = 0, partial = 0, no_history = 0;
    if (!dirs)
        return 2;
    const mbs_cli_cmd *cmd = mbs_cli_find("merge");
    for (int i = 2; i < argc; i++) {
        mbs_cli_arg a;
        int k = mbs_cli_next(cmd, argc, argv, &i, &a);
        if (k < 0) {
            free(dirs);
            return 2;
        }
        if (mbs_cli_is(&a, "--partial"))
            partial = 1;
        else if (mbs_cli_is(&a, "--no-history"))
            no_history = 1;
        else if (mbs_cli_is(&a, "--history"))
            history = a.str;
        else if (!out)
            out = a.str;
        else
            dirs[n_in++] = a.str;
    }
    if (!out || n_in == 0) {
        fprintf(stderr, "mbsbench: merge: usage: mbsbench merge OUT DIR... [--partial] [--history DB | --no-history]\n");
        free(dirs);
        return 2;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/runs.jsonl", out);
    if (access(path, F_OK) == 0) {
        fprintf(stderr, "mbsbench: merge: '%s' already holds results; merge into a new "
                        "directory\n", out);
        free(dirs);
        return 2;
    }
    input *in = calloc((size_t)n_in, sizeof *in);
    int st = in ? 0 : 2;
    for (int i = 0; i < n_in && st == 0; i++)
        st = load_input(&in[i], dirs[i]);
    size_t n = st == 0 ? (size_t)json_integer_value(json_object_get(in[0].res.meta,
                                                                    "suite_runs")) : 0;
    slot *slots = st == 0 ? calloc(n ? n : 1, sizeof *slots) : NULL;
    size_t dups = 0, n_env = 0;
    if (st == 0 && !slots)
        st = 2;
    if (st == 0) {
        long c = collect(in, n_in, slots, n, &dups);
        if (c != 0) {
            if (c > 0)
                fprintf(stderr, "mbsbench: merge: %ld conflicting records; nothing written\n", c);
            st = 2;
        }
    }
    size_t missing = 0, have = 0;
    if (st == 0) {
        missing = report_missing(in, n_in, slots, n);
        for (size_t r = 0; r < n; r++)
            have += slots[r].rec != NULL;
        if (missing && !partial) {
            fprintf(stderr, "mbsbench: merge: %zu of %zu runs missing; nothing written (--partial "
                            "writes the %zu there are)\n", missing, n, have);
            st = 1;
        }
    }
    if (st == 0 && (st = write_merged(out, in, n_in, slots, n, &n_env)) == 0) {
        printf("merged %d directories into %s: %zu of %zu runs%s, %zu duplicate records "
               "dropped, %zu environment%s%s\n", n_in, out, have, n, missing ? " (PARTIAL)" : "",
               dups, n_env, n_env == 1 ? "" : "s",
               n_env > 1 ? " (CPU times compare only within one; see meta.json merged_from)"
                         : "");
        st = missing ? 1 : 0;
        char db[4200], err[1024]; /* like a local sweep: into the results history */
        int use = !no_history && !missing;
        if (use && history)
            snprintf(db, sizeof db, "%s", history);
        else if (use && mbs_history_default_path(out, db, sizeof db) != 0) {
            use = 0;
            fprintf(stderr, "mbsbench: %s lies outside a results/ directory: the merge stays "
                            "out of the results history (--history DB records it)\n", out);
        }
        if (use && mbs_history_append(db, out, err, sizeof err) != 0)
            fprintf(stderr, "mbsbench: history not updated: %s\n", err);
    }
    for (int i = 0; in && i < n_in; i++) {
        if (in[i].loaded)
            mbs_results_free(&in[i].res);
        free(in[i].assigned);
    }
    free(slots);
    free(in);
    free(dirs);
    return st;
}
