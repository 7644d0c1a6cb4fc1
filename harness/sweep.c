#include "sweep.h"

#include <jansson.h>
#include <math.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "results.h"
#include "io.h"
#include "plugin.h"
#include "shard.h"

/* ---- running a sweep ----------------------------------------------------------
 * Every run executes in its own child process (at most `jobs` at a time), which
 * appends its complete record to runs.jsonl with one write(2) and fsync.  A child
 * killed by a signal is recorded by the parent as a `worker_crashed` run and the
 * sweep goes on.  SIGINT/SIGTERM stop the sweep: no new runs start, the running
 * ones are dropped cleanly (their records are either complete or absent), and
 * `--resume DIR` later completes the set.  runs.csv is derived from runs.jsonl at
 * the end (temp file + rename).  The signal flag is the only process-wide state. */

static volatile sig_atomic_t stop_signal = 0;

static void on_stop(int sig)
{
    stop_signal = sig;
}

static char *spec_key(const char *problem, const char *method, double h, double tol,
                      double atol, int global)
{
    char *k = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&k, &n);
    if (!m)
        return NULL;
    fprintf(m, "%s|%s|%.17g|%.17g", problem, method, isfinite(h) ? h : 0.0,
            isfinite(tol) ? tol : 0.0);
    if (isfinite(atol) && atol > 0.0 && atol != tol) /* set apart from tol (record: "atol") */
        fprintf(m, "|atol=%.17g", atol);
    if (global)
        fprintf(m, "|global");
    fclose(m);
    return k;
}

/* Append one record (as JSON) to the results file. */
static int write_record(int fd, mbs_record *rec, long index)
{
    rec->run_index = index;
    char *line = mbs_record_json(rec);
    int r = line && mbs_append_line(fd, line) == 0 ? 0 : -1;
    free(line);
    return r;
}

/* Child: run one spec and append its record.  Exit 0 (record written, whatever
 * its status), 2 (bad input: cannot happen after validation), 3 (I/O error). */
static int child_run(const mbs_run_spec *r, long index, int fd)
{
    mbs_record rec;
    char msg[512];
    if (mbs_run(r, &rec, msg, sizeof msg) != MBS_OK) {
        fprintf(stderr, "mbsbench: run %ld: %s\n", index, msg);
        return 2;
    }
    int io = write_record(fd, &rec, index);
    mbs_record_free(&rec);
    return io == 0 ? 0 : 3;
}

/* Parent: a failure record for a run whose worker died. */
static int crashed_record(const mbs_run_spec *r, long index, int sig, int fd)
{
    mbs_run_spec probe = *r;
    probe.measure = 0;
    probe.repeat = 0;
    mbs_record rec;
    char msg[512];
    /* Identity fields only: run with nothing to do (measure = repeat = 0). */
    if (mbs_run(&probe, &rec, msg, sizeof msg) != MBS_OK)
        return -1;
    rec.status = MBS_WORKER_CRASHED;
    snprintf(rec.reason, sizeof rec.reason, "worker process killed by signal %d (%s)%s", sig,
             strsignal(sig),
             sig == SIGKILL ? "; the kernel's OOM killer sends SIGKILL when memory runs out "
                              "(see --max-mem)"
                            : "");
    rec.fail_t = NAN;
    rec.cpu_min = rec.cpu_median = rec.cpu_iqr = NAN;
    rec.cpu_repeats = 0;
    int io = write_record(fd, &rec, index);
    mbs_record_free(&rec);
    return io;
}

/* Indices already recorded in runs.jsonl (resume); verifies they belong to this
 * suite.  done[i] = 1 for recorded runs.  Returns 0, or -1 with a message. */
static int load_done(const mbs_suite *s, const char *path, char *done, char *err,
                     size_t errlen)
{
    char *text = mbs_read_file(path, NULL);
    if (!text)
        return 0;
    int bad = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line && !bad;
         line = strtok_r(NULL, "\n", &save)) {
        json_t *o = json_loads(line, 0, NULL);
        if (!mbs_is_record(o)) { /* reported by cut_partial_line / the readers */
            json_decref(o);
            continue;
        }
        json_t *jr = json_object_get(o, "run");
        long i = json_is_integer(jr) ? (long)json_integer_value(jr) : -1;
        if (i < 0 || (size_t)i >= s->n_runs) {
            snprintf(err, errlen, "%s: record with run index %ld does not belong to suite %s",
                     path, i, s->name);
            bad = 1;
        } else {
            const mbs_run_spec *r = &s->runs[i];
            json_t *h = json_object_get(o, "h"), *tol = json_object_get(o, "tol");
            json_t *at = json_object_get(o, "atol");
            char *a = spec_key(r->problem, r->method, r->h, r->tol, r->atol,
                               r->tol_mode == MBS_TOL_GLOBAL);
            char *b = spec_key(json_string_value(json_object_get(o, "problem_spec")),
                               json_string_value(json_object_get(o, "method_spec")),
                               json_is_number(h) ? json_number_value(h) : NAN,
                               json_is_number(tol) ? json_number_value(tol) : NAN,
                               json_is_number(at) ? json_number_value(at) : NAN,
                               json_is_string(json_object_get(o, "tol_mode")));
            if (!a || !b || strcmp(a, b) != 0) {
                snprintf(err, errlen, "%s: run %ld is '%s', the suite says '%s'", path, i,
                         b ? b : "?", a ? a : "?");
                bad = 1;
            }
            free(a);
            free(b);
            done[i] = 1;
        }
        json_decref(o);
    }
    free(text);
    return bad ? -1 : 0;
}

/* runs.csv from runs.jsonl, sorted by run index, atomically. */
int mbs_write_runs_csv(const char *dir)
{
    mbs_results res;
    char err[512], path[4096];
    if (mbs_results_load_quiet(dir, &res, err, sizeof err) != 0)
        return -1;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int r = -1;
    if (m) {
        mbs_record_csv_header(m);
        for (size_t i = 0; i < res.n; i++)
            mbs_csv_row_json(res.recs[i], m);
        fclose(m);
        snprintf(path, sizeof path, "%s/runs.csv", dir);
        r = mbs_write_atomic(path, buf, len);
    }
    free(buf);
    mbs_results_free(&res);
    return r;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One writer per results directory (two --resume runs on one
 * directory duplicated records): an exclusive flock on the directory, held
 * until the sweep ends (workers inherit it).  Returns the fd, -1 when another
 * sweep holds it, -2 on other errors. */
static int lock_results_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -2;
    /* A sweep killed with -9 releases the lock only when its workers have died
     * of PR_SET_PDEATHSIG, a few milliseconds after the parent: wait up to
     * LOCK_GRACE_S for that before calling the directory busy. */
    enum { LOCK_GRACE_S = 3, LOCK_POLLS_PER_S = 20 };
    for (int attempt = 0;; attempt++) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return fd;
        if (errno != EWOULDBLOCK || attempt >= LOCK_GRACE_S * LOCK_POLLS_PER_S) {
            int busy = errno == EWOULDBLOCK;
            close(fd);
            return busy ? -1 : -2;
        }
        struct timespec pause = {0, 1000000000L / LOCK_POLLS_PER_S};
        nanosleep(&pause, NULL);
    }
}

/* Resume after a kill: cut runs.jsonl back to its last complete line (a torn
 * last line would otherwise glue the next record onto it). */
static int cut_partial_line(const char *path)
{
    size_t len = 0;
    char *text = mbs_read_file(path, &len);
    if (!text)
        return 0;
    size_t keep = len;
    while (keep > 0 && text[keep - 1] != '\n')
        keep--;
    free(text);
    if (keep == len)
        return 0;
    if (truncate(path, (off_t)keep) != 0) {
        fprintf(stderr, "mbsbench: cannot cut the partial last line of '%s'\n", path);
        return -1;
    }
    fprintf(stderr,
            "mbsbench: %s: dropped a partial last line (%zu bytes, an interrupted write); "
            "its run is redone\n",
            path, len - keep);
    return 0;
}

static int sweep_locked(const mbs_suite *s, const char *outdir, const mbs_sweep_options *opt,
                        FILE *out);

static size_t shard_size(const mbs_suite *s, const mbs_sweep_options *opt)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n_runs; i++)
        k += opt->plan->shard_of[i] == opt->shard;
    return k;
}

/* meta.json's "shard": which shard of how many, its runs and their estimated cost. */
static json_t *shard_json(const mbs_suite *s, const mbs_sweep_options *opt)
{
    const mbs_shard_plan *p = opt->plan;
    json_t *o = json_object(), *runs = json_array();
    double load = 0.0;
    for (size_t i = 0; i < s->n_runs; i++)
        if (p->shard_of[i] == opt->shard) {
            json_array_append_new(runs, json_integer((json_int_t)i));
            load += p->cost[i];
        }
    json_object_set_new(o, "index", json_integer(opt->shard));
    json_object_set_new(o, "count", json_integer(p->count));
    json_object_set_new(o, "runs", runs);
    json_object_set_new(o, "cost", json_real(load));
    json_object_set_new(o, "cost_source", json_string(p->source));
    return o;
}

/* --resume into a directory written for another grid or another shard would mix
 * record sets: refuse.  (Directories from before the digest have none: only the
 * record check of load_done applies.) */
static int check_resumed_meta(const mbs_suite *s, const char *outdir, const char *digest,
                              const mbs_sweep_options *opt, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.json", outdir);
    json_t *m = json_load_file(path, 0, NULL);
    if (!m)
        return 0;
    int bad = 0;
    const char *d = json_string_value(json_object_get(m, "suite_digest"));
    const char *name = json_string_value(json_object_get(m, "suite"));
    json_t *sh = json_object_get(m, "shard");
    int had = json_is_object(sh);
    int hi = had ? (int)json_integer_value(json_object_get(sh, "index")) : -1;
    int hn = had ? (int)json_integer_value(json_object_get(sh, "count")) : 0;
    if (name && strcmp(name, s->name) != 0) {
        snprintf(err, errlen, "'%s' holds results of suite %s, not %s; use another directory",
                 outdir, name, s->name);
        bad = 1;
    } else if (d && strcmp(d, digest) != 0) {
        snprintf(err, errlen, "'%s' holds results of another version of suite %s (grid digest "
                 "%s, the suite file now gives %s); use another directory", outdir, s->name, d,
                 digest);
        bad = 1;
    } else if (had != (opt->plan != NULL) ||
               (had && (hi != opt->shard || hn != opt->plan->count))) {
        char was[64], now[64];
        snprintf(was, sizeof was, had ? "shard %d/%d" : "the whole grid", hi, hn);
        snprintf(now, sizeof now, opt->plan ? "shard %d/%d" : "the whole grid", opt->shard,
                 opt->plan ? opt->plan->count : 0);
        snprintf(err, errlen, "'%s' holds %s of suite %s, not %s; resume it with the same "
                 "--shard", outdir, was, s->name, now);
        bad = 1;
    }
    json_decref(m);
    return bad ? -1 : 0;
}

int mbs_sweep(const mbs_suite *s, const char *outdir, const mbs_sweep_options *opt, FILE *out)
{
    if (mbs_mkdir_p(outdir) != 0) {
        fprintf(stderr, "mbsbench: cannot create results directory '%s'\n", outdir);
        return 2;
    }
    int lock = lock_results_dir(outdir);
    if (lock < 0) {
        if (lock == -1)
            fprintf(stderr, "mbsbench: results directory '%s' is locked by another sweep "
                            "writing to it; wait for it to end or use another --out\n",
                    outdir);
        else
            fprintf(stderr, "mbsbench: cannot lock results directory '%s'\n", outdir);
        return 2;
    }
    int st = sweep_locked(s, outdir, opt, out);
    close(lock);
    return st;
}

static int sweep_locked(const mbs_suite *s, const char *outdir, const mbs_sweep_options *opt,
                        FILE *out)
{
    char path[4096], err[10000];
    int jobs = opt->jobs > 0 ? opt->jobs : 1;
    snprintf(path, sizeof path, "%s/runs.jsonl", outdir);
    char digest[32];
    mbs_suite_digest(s, digest, sizeof digest);
    /* another suite's or shard's directory is refused before anything is touched */
    if (opt->resume && check_resumed_meta(s, outdir, digest, opt, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    if (opt->resume && cut_partial_line(path) != 0)
        return 2;
    char *done = calloc(s->n_runs ? s->n_runs : 1, 1);
    if (!done)
        return 2;
    size_t recorded_before = 0; /* records already in runs.jsonl (resume) */
    if (opt->resume) {
        mbs_results prev; /* report unreadable lines before going on */
        if (access(path, F_OK) == 0 && mbs_results_load(outdir, &prev, err, sizeof err) == 0)
            mbs_results_free(&prev);
        if (load_done(s, path, done, err, sizeof err) != 0) {
            fprintf(stderr, "mbsbench: %s\n", err);
            free(done);
            return 2;
        }
        for (size_t i = 0; i < s->n_runs; i++)
            recorded_before += done[i] != 0;
    } else if (access(path, F_OK) == 0) {
        fprintf(stderr, "mbsbench: '%s' already holds results; use --resume %s or another --out\n",
                outdir, outdir);
        free(done);
        return 2;
    }
    if (opt->plan) /* the other shards' runs are not ours */
        for (size_t i = 0; i < s->n_runs; i++)
            done[i] |= opt->plan->shard_of[i] != opt->shard;
    if (!opt->resume || access(path, F_OK) != 0) {
        char *meta = mbs_environment_json(s->name, s->path);
        json_t *mo = meta ? json_loads(meta, 0, NULL) : NULL;
        if (mo) { /* CPU unit of this machine, for compare's normalisation */
            double load = mbs_load_average(); /* before the calibration loop adds to it */
            if (isfinite(load))
                json_object_set_new(mo, "load_average", json_real(load));
            json_object_set_new(mo, "calibration_s", json_real(mbs_calibration_seconds()));
            json_object_set_new(mo, "suite_runs", json_integer((json_int_t)s->n_runs));
            json_object_set_new(mo, "suite_digest", json_string(digest));
            if (opt->plan)
                json_object_set_new(mo, "shard", shard_json(s, opt));
            if (mbs_plugin_count() > 0) { /* where plugin problems and methods came from */
                json_t *pl = json_array();
                for (size_t i = 0; i < mbs_plugin_count(); i++)
                    json_array_append_new(pl, json_string(mbs_plugin_path(i)));
                json_object_set_new(mo, "plugins", pl);
            }
            free(meta);
            meta = json_dumps(mo, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
            json_decref(mo);
        }
        snprintf(err, sizeof err, "%s/meta.json", outdir);
        int bad = !meta || mbs_write_atomic(err, meta, strlen(meta)) != 0;
        free(meta);
        if (bad) {
            fprintf(stderr, "mbsbench: cannot write '%s'\n", err);
            free(done);
            return 2;
        }
    }
    snprintf(err, sizeof err, "%s/series", outdir);
    if (opt->series && mbs_mkdir_p(err) != 0) {
        fprintf(stderr, "mbsbench: cannot create '%s'\n", err);
        free(done);
        return 2;
    }
    int fd = mbs_open_append(path);
    if (fd < 0) {
        fprintf(stderr, "mbsbench: cannot open '%s'\n", path);
        free(done);
        return 2;
    }

    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    stop_signal = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    int progress = isatty(STDERR_FILENO);
    pid_t *pid = calloc((size_t)jobs, sizeof *pid);
    long *slot_run = calloc((size_t)jobs, sizeof *slot_run);
    size_t next = 0, finished = 0, todo = 0, skipped_budget = 0, reaped = 0;
    int failed = 0, io_error = 0, running = 0;
    for (size_t i = 0; i < s->n_runs; i++)
        todo += !done[i];
    double t_start = wall_seconds();
    fflush(NULL);
    while (pid && slot_run) {
        /* Launch while there are free slots and work. */
        while (!stop_signal && running < jobs) {
            while (next < s->n_runs && done[next])
                next++;
            if (next >= s->n_runs)
                break;
            if (opt->budget > 0.0 && wall_seconds() - t_start > opt->budget) {
                for (size_t i = next; i < s->n_runs; i++)
                    skipped_budget += !done[i];
                next = s->n_runs;
                break;
            }
            int slot = 0;
            while (pid[slot] > 0)
                slot++;
            pid_t parent = getpid();
            pid_t p = fork();
            if (p == 0) {
                signal(SIGINT, SIG_DFL);
                signal(SIGTERM, SIG_DFL);
                prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphans after kill -9 */
                if (getppid() != parent) /* the parent died before prctl */
                    _exit(3);
                mbs_run_spec rs = s->runs[next];
                char series[4200];
                if (opt->series) {
                    snprintf(series, sizeof series, "%s/series/run-%zu.tsv", outdir, next);
                    rs.series = series;
                }
                _exit(child_run(&rs, (long)next, fd));
            }
            if (p < 0) {
                fprintf(stderr, "mbsbench: fork failed\n");
                io_error = 1;
                break;
            }
            pid[slot] = p;
            slot_run[slot] = (long)next;
            running++;
            next++;
        }
        if (running == 0)
            break;
        int st = 0;
        pid_t w = waitpid(-1, &st, 0);
        if (w < 0) {
            if (errno == EINTR) {
                if (stop_signal)
                    for (int k = 0; k < jobs; k++)
                        if (pid[k] > 0)
                            kill(pid[k], SIGTERM);
                continue;
            }
            break;
        }
        int slot = 0;
        while (slot < jobs && pid[slot] != w)
            slot++;
        if (slot == jobs)
            continue;
        long idx = slot_run[slot];
        pid[slot] = 0;
        running--;
        if (WIFSIGNALED(st) && !stop_signal) {
            if (crashed_record(&s->runs[idx], idx, WTERMSIG(st), fd) != 0)
                io_error = 1;
            failed++;
            finished++;
        } else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
            finished++;
        } else if (WIFEXITED(st)) {
            io_error |= WEXITSTATUS(st) == 3;
            failed++;
        }
        if (progress) { /* count, elapsed, ETA, failures so far */
            size_t ended = ++reaped;
            double el = wall_seconds() - t_start;
            double eta = ended > 0 ? el * (double)(todo - ended) / (double)ended : NAN;
            fprintf(stderr, "\r[%zu/%zu] %.0fs elapsed, ETA %s%.0fs, %d failed: %-28.28s",
                    ended, todo, el, isfinite(eta) ? "" : "?", isfinite(eta) ? eta : 0.0,
                    failed, s->runs[idx].method);
        }
    }
    if (progress)
        fprintf(stderr, "\r%-78s\r", "");
    if (stop_signal) {
        /* Count what runs.jsonl holds now: a worker stopped by our SIGTERM just
         * after writing its record is not counted by its exit status. */
        char lerr[512];
        memset(done, 0, s->n_runs);
        size_t now = 0;
        if (load_done(s, path, done, lerr, sizeof lerr) == 0) {
            for (size_t i = 0; i < s->n_runs; i++)
                now += done[i] != 0;
            finished = now > recorded_before ? now - recorded_before : 0;
        }
    }
    free(pid);
    free(slot_run);
    free(done);
    close(fd);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (mbs_write_runs_csv(outdir) != 0)
        io_error = 1;
    if (io_error) {
        fprintf(stderr, "mbsbench: error writing results into '%s'\n", outdir);
        return 2;
    }
    if (opt->plan)
        fprintf(out, "suite %s, shard %d/%d: %zu of %zu runs, results in %s\n", s->name,
                opt->shard, opt->plan->count, shard_size(s, opt), s->n_runs, outdir);
    else
        fprintf(out, "suite %s: %zu runs, results in %s\n", s->name, s->n_runs, outdir);
    int n_failed = 0;
    if (mbs_summary(outdir, out, MBS_ERR_FINAL, &n_failed) != 0)
        return 2;
    failed += n_failed;
    char shard_opt[64] = "";
    if (opt->plan)
        snprintf(shard_opt, sizeof shard_opt, " --shard %d/%d", opt->shard, opt->plan->count);
    if (stop_signal) {
        fprintf(out, "interrupted by signal %d: %zu of %zu runs recorded in this sweep; "
                     "complete with: mbsbench sweep %s%s --resume %s\n",
                (int)stop_signal, finished, todo, s->path, shard_opt, outdir);
        return 128 + (int)stop_signal;
    }
    if (skipped_budget > 0) {
        fprintf(out, "wall-clock budget of %g s reached: %zu runs not started; complete with "
                     "--resume %s\n", opt->budget, skipped_budget, outdir);
        return 1;
    }
    return failed > 0 ? 1 : 0;
}

int mbs_json_by_run_index(const void *a, const void *b)
{
    double x = mbs_jnum(*(json_t *const *)a, "run");
    double y = mbs_jnum(*(json_t *const *)b, "run");
    return (x > y) - (x < y);
}

int mbs_summary(const char *dir, FILE *out, mbs_err_kind ek, int *n_failed)
{
    *n_failed = 0;
    mbs_results res;
    char err[512];
    if (mbs_results_load(dir, &res, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    json_t **recs = res.recs;
    size_t n = res.n;
    if (ek == MBS_ERR_TRAJ && !mbs_results_have_traj(&res)) {
        fprintf(stderr, "mbsbench: summary: --error traj: no record in %s has trajectory "
                        "errors (field traj); use --error final\n", dir);
        mbs_results_free(&res);
        return 2;
    }
    int tj = ek == MBS_ERR_TRAJ; /* traj: the mixed error's maximum over the grid */
    fprintf(out, "%-26s %-26s %-10s %-15s %9s %9s %9s %9s %8s %10s\n", "problem", "method",
            "h|tol", "status", tj ? "traj_q" : "err_q", tj ? "traj_v" : "err_v",
            tj ? "traj_lam" : "err_lam", "|g|max", "steps", "cpu[s]");
    for (size_t i = 0; i < n; i++) {
        json_t *o = recs[i];
        char step[32];
        double h = mbs_jnum(o, "h");
        if (isfinite(h))
            snprintf(step, sizeof step, "h=%.3g", h);
        else
            snprintf(step, sizeof step, "tol=%.0e", mbs_jnum(o, "tol"));
        fprintf(out, "%-26.26s %-26.26s %-10s %-15.15s", mbs_jstr(o, "problem_spec"),
                mbs_jstr(o, "method_spec"), step, mbs_jstr(o, "status"));
        const double v[] = {mbs_rec_err(o, ek, "q"), mbs_rec_err(o, ek, "v"),
                            mbs_rec_err(o, ek, "lambda"), mbs_jnum(o, "residual.pos_max")};
        for (int k = 0; k < 4; k++) {
            if (isfinite(v[k]))
                fprintf(out, " %9.2e", v[k]);
            else
                fprintf(out, " %9s", "-");
        }
        fprintf(out, " %8.0f", mbs_jnum(o, "counters.steps"));
        double c = mbs_jnum(o, "cpu.median");
        if (isfinite(c))
            fprintf(out, " %10.3e\n", c);
        else
            fprintf(out, " %10s\n", "-");
        if (!mbs_rec_ok(o)) {
            ++*n_failed;
            fprintf(out, "    %s at t = %g: %s\n", mbs_jstr(o, "status"), mbs_jnum(o, "fail_t"),
                    mbs_jstr(o, "reason"));
        }
    }
    mbs_results_free(&res);
    return 0;
}
