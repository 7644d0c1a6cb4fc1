/* The battery's runner (worker processes, resumable results file) and its tables
 * (battery.h). */
#include "battery.h"
#include "env.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../problems/registry.h"
#include "cli.h"
#include "io.h"

typedef struct pair {
    const char *problem, *method;
    size_t pi, mi; /* registry positions: the order of the tables */
} pair;

static long problem_pos(const char *name)
{
    for (size_t i = 0; i < mbs_problem_count(); i++)
        if (strcmp(mbs_problem_at(i)->name, name) == 0)
            return (long)i;
    return -1;
}

static long method_pos(const char *name)
{
    for (size_t i = 0; i < mbs_method_count(); i++)
        if (strcmp(mbs_method_at(i)->name, name) == 0)
            return (long)i;
    return -1;
}

static int selected(const mbs_battery_options *o, const char *problem, const char *method)
{
    int okp = o->n_problems == 0, okm = o->n_methods == 0;
    for (size_t i = 0; i < o->n_problems && !okp; i++)
        okp = strcmp(o->problems[i], problem) == 0;
    for (size_t i = 0; i < o->n_methods && !okm; i++)
        okm = fnmatch(o->methods[i], method, 0) == 0;
    return okp && okm;
}

/* The selected pairs, in table order (method, then problem). */
static pair *list_pairs(const mbs_battery *b, const mbs_battery_options *o, size_t *n)
{
    size_t cap = o->check_only ? b->n_check : mbs_method_count() * b->n_pb;
    pair *ps = calloc(cap ? cap : 1, sizeof *ps);
    *n = 0;
    if (!ps)
        return NULL;
    if (o->check_only) {
        for (size_t i = 0; i < b->n_check; i++)
            if (selected(o, b->check[i][0], b->check[i][1]))
                ps[(*n)++] = (pair){b->check[i][0], b->check[i][1],
                                    (size_t)problem_pos(b->check[i][0]),
                                    (size_t)method_pos(b->check[i][1])};
        return ps;
    }
    for (size_t mi = 0; mi < mbs_method_count(); mi++)
        for (size_t pi = 0; pi < mbs_problem_count(); pi++) {
            const char *pn = mbs_problem_at(pi)->name, *mn = mbs_method_at(mi)->name;
            if (mbs_problem_owner(pi) || !selected(o, pn, mn))
                continue;
            ps[(*n)++] = (pair){pn, mn, pi, mi};
        }
    return ps;
}

static int cmp_result(const void *a, const void *b)
{
    const mbs_battery_result *x = a, *y = b;
    long mx = method_pos(x->method), my = method_pos(y->method);
    if (mx != my)
        return mx < my ? -1 : 1;
    long px = problem_pos(x->problem), py = problem_pos(y->problem);
    return px < py ? -1 : px > py;
}

/* The results in the file (the last line of a pair wins); NULL on I/O error. */
static mbs_battery_result *read_results(const char *path, size_t *n)
{
    *n = 0;
    size_t len = 0;
    char *text = mbs_read_file(path, &len);
    mbs_battery_result *rs = malloc(sizeof *rs);
    if (!rs) {
        free(text);
        return NULL;
    }
    if (!text)
        return rs; /* none yet */
    size_t cap = 1;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        mbs_battery_result r;
        if (mbs_battery_result_parse(l, &r) != 0)
            continue; /* a torn last line of an interrupted run */
        size_t k = 0;
        while (k < *n && (strcmp(rs[k].problem, r.problem) || strcmp(rs[k].method, r.method)))
            k++;
        if (k == *n) {
            if (*n == cap) {
                void *nr = realloc(rs, 2 * cap * sizeof *rs);
                if (!nr) {
                    free(rs);
                    free(text);
                    return NULL;
                }
                rs = nr;
                cap *= 2;
            }
            (*n)++;
        }
        rs[k] = r;
    }
    free(text);
    return rs;
}

static int have(const mbs_battery_result *rs, size_t n, const pair *p)
{
    for (size_t k = 0; k < n; k++)
        if (!strcmp(rs[k].problem, p->problem) && !strcmp(rs[k].method, p->method))
            return 1;
    return 0;
}

static int write_result(int fd, const mbs_battery_result *r)
{
    char *line = mbs_battery_result_json(r);
    int e = line && mbs_append_line(fd, line) == 0 ? 0 : -1;
    free(line);
    return e;
}

/* Child: one pair.  Exit 0 (line written), 2 (bad input), 3 (I/O). */
static int child(const mbs_battery *b, const pair *p, int fd)
{
    mbs_battery_result r;
    char err[512];
    if (mbs_battery_pair(b, p->problem, p->method, &r, err, sizeof err) != MBS_OK) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    return write_result(fd, &r) == 0 ? 0 : 3;
}

static int crashed(const pair *p, int sig, int fd)
{
    mbs_battery_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.problem, sizeof r.problem, "%s", p->problem);
    snprintf(r.method, sizeof r.method, "%s", p->method);
    r.outcome = MBS_BAT_FINDING;
    r.fail_level = 1;
    r.fail_status = MBS_WORKER_CRASHED;
    snprintf(r.fail_reason, sizeof r.fail_reason, "worker killed by signal %d (%s)", sig,
             strsignal(sig));
    snprintf(r.check, sizeof r.check, "unchecked");
    r.x0 = r.t_end = r.ref_digits = r.wall = NAN;
    snprintf(r.revision, sizeof r.revision, "%s", mbs_git_revision());
    for (int g = 0; g < 3; g++)
        r.g[g].p = r.g[g].ci_low = r.g[g].ci_high = r.g[g].nominal = NAN;
    return write_result(fd, &r);
}

static int run_pairs(const mbs_battery *b, const pair *ps, size_t n, int jobs, int fd)
{
    pid_t *pid = calloc((size_t)jobs, sizeof *pid);
    size_t *slot_pair = calloc((size_t)jobs, sizeof *slot_pair);
    if (!pid || !slot_pair) {
        free(pid);
        free(slot_pair);
        return -1;
    }
    int progress = isatty(STDERR_FILENO), io = 0, running = 0;
    size_t next = 0, ended = 0;
    fflush(NULL);
    for (;;) {
        while (running < jobs && next < n) {
            int slot = 0;
            while (pid[slot] > 0)
                slot++;
            pid_t parent = getpid();
            pid_t c = fork();
            if (c == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent) /* the parent died before prctl */
                    _exit(3);
                _exit(child(b, &ps[next], fd));
            }
            if (c < 0) {
                io = -1;
                next = n;
                break;
            }
            pid[slot] = c;
            slot_pair[slot] = next++;
            running++;
        }
        if (running == 0)
            break;
        int st = 0;
        pid_t w = waitpid(-1, &st, 0);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        int slot = 0;
        while (slot < jobs && pid[slot] != w)
            slot++;
        if (slot == jobs)
            continue;
        pid[slot] = 0;
        running--;
        const pair *p = &ps[slot_pair[slot]];
        if (WIFSIGNALED(st) && crashed(p, WTERMSIG(st), fd) != 0)
            io = -1;
        if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
            io = -1;
        if (progress)
            fprintf(stderr, "\r[%zu/%zu] %-20.20s %-26.26s", ++ended, n, p->problem, p->method);
    }
    if (progress)
        fprintf(stderr, "\r%-60s\r", "");
    free(pid);
    free(slot_pair);
    return io;
}

/* DIR/judged.jsonl: one judged record per pair, in table order (atomic). */
static int write_judged(const char *outdir, const mbs_battery_result *rs, size_t m)
{
    char path[4200], *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -1;
    int st = 0;
    for (size_t k = 0; k < m && !st; k++) {
        char *js = mbs_battery_result_json(&rs[k]);
        st = !js || fprintf(f, "%s\n", js) < 0;
        free(js);
    }
    st |= fclose(f) != 0;
    snprintf(path, sizeof path, "%s/judged.jsonl", outdir);
    if (!st)
        st = mbs_write_atomic(path, buf, len) != 0;
    free(buf);
    return st ? -1 : 0;
}

int mbs_battery_run(const mbs_battery *b, const mbs_battery_options *o, FILE *out)
{
    char path[4200];
    if (mbs_mkdir_p(o->outdir) != 0) {
        fprintf(stderr, "mbsbench: battery: cannot create %s\n", o->outdir);
        return 2;
    }
    snprintf(path, sizeof path, "%s/battery.jsonl", o->outdir);
    size_t n = 0, nr = 0;
    pair *ps = list_pairs(b, o, &n);
    mbs_battery_result *rs = read_results(path, &nr);
    if (!ps || !rs) {
        free(ps);
        free(rs);
        return 2;
    }
    size_t todo = 0;
    for (size_t i = 0; i < n; i++)
        if (!have(rs, nr, &ps[i]))
            ps[todo++] = ps[i];
    free(rs);
    int io = 0;
    if (!o->rejudge) {
        int fd = mbs_open_append(path);
        if (fd < 0) {
            free(ps);
            fprintf(stderr, "mbsbench: battery: cannot write %s\n", path);
            return 2;
        }
        io = run_pairs(b, ps, todo, o->jobs > 0 ? o->jobs : 1, fd);
        close(fd);
    }
    free(ps);
    rs = read_results(path, &nr);
    ps = list_pairs(b, o, &n);
    if (!rs || !ps || io != 0) {
        free(rs);
        free(ps);
        fprintf(stderr, "mbsbench: battery: a worker failed (see above)\n");
        return 2;
    }
    /* The selected pairs' results, in table order.  A pair recorded more than
     * once (a rerun appended to, or merged into, the file) counts by its last
     * record. */
    size_t m = 0;
    for (size_t k = 0; k < nr; k++) {
        int sel = 0;
        for (size_t i = 0; i < n && !sel; i++)
            sel = !strcmp(rs[k].problem, ps[i].problem) && !strcmp(rs[k].method, ps[i].method);
        for (size_t j = k + 1; j < nr && sel; j++)
            sel = strcmp(rs[k].problem, rs[j].problem) || strcmp(rs[k].method, rs[j].method);
        if (sel)
            rs[m++] = rs[k];
    }
    free(ps);
    for (size_t k = 0; k < m; k++)
        mbs_battery_judge(b, &rs[k]);
    qsort(rs, m, sizeof *rs, cmp_result);
    /* The judged records (the rules of this build applied), for summaries. */
    if (write_judged(o->outdir, rs, m) != 0)
        fprintf(stderr, "mbsbench: battery: cannot write %s/judged.jsonl\n", o->outdir);
    char *md = NULL;
    size_t mdlen = 0;
    FILE *mf = open_memstream(&md, &mdlen);
    if (mf) {
        mbs_battery_markdown(b, rs, m, mf);
        fclose(mf);
    }
    snprintf(path, sizeof path, "%s/battery.md", o->outdir);
    int wrote = md && mbs_write_atomic(path, md, mdlen) == 0;
    free(md);
    size_t count[MBS_BAT_FINDING + 1] = {0};
    double wall = 0.0;
    for (size_t k = 0; k < m; k++) {
        count[rs[k].outcome]++;
        wall += isfinite(rs[k].wall) ? rs[k].wall : 0.0;
    }
    fprintf(out, "battery: %zu pairs (%.0f s of worker time):", m, wall);
    for (int k = 0; k <= MBS_BAT_FINDING; k++)
        fprintf(out, " %zu %s%s", count[k], mbs_battery_outcome_name((mbs_battery_outcome)k),
                k < MBS_BAT_FINDING ? "," : "\n");
    for (size_t k = 0; k < m; k++) {
        const mbs_battery_result *r = &rs[k];
        if (mbs_battery_ok(r))
            continue;
        fprintf(out, "finding: %s on %s:", r->method, r->problem);
        if (r->fail_level)
            fprintf(out, " level %d %s: %s (%s %s)", r->fail_level,
                    mbs_status_code(r->fail_status), r->fail_reason, r->check, r->check_note);
        static const char *const gn[3] = {"q", "v", "lambda"};
        for (int g = 0; g < 3; g++) {
            if (r->g[g].state == MBS_GRP_NONE)
                fprintf(out, " %s not established;", gn[g]);
            else if (r->g[g].state >= MBS_GRP_LOW && r->adaptive)
                fprintf(out, " %s exponent %.2f [%.2f, %.2f] (the error does not fall with tol);",
                        gn[g], r->g[g].p, r->g[g].ci_low, r->g[g].ci_high);
            else if (r->g[g].state >= MBS_GRP_LOW)
                fprintf(out, " %s order %.2f (nominal %g);", gn[g], r->g[g].p, r->g[g].nominal);
        }
        fputc('\n', out);
    }
    fprintf(out, "battery: %s\n", wrote ? path : "battery.md not written");
    free(rs);
    return count[MBS_BAT_FINDING] ? 1 : 0;
}

/* ---- tables --------------------------------------------------------------------- */

static const char *status_abbrev(int s)
{
    switch (s) {
    case MBS_NEWTON_DIVERGED: return "nd";
    case MBS_STEP_UNDERFLOW: return "su";
    case MBS_NAN_STATE: return "nan";
    case MBS_LEFT_BRANCH: return "br";
    case MBS_SINGULAR_MATRIX: return "sm";
    case MBS_ERROR_TEST: return "et";
    case MBS_TOO_MANY_STEPS: return "ms";
    case MBS_CPU_LIMIT: return "cpu";
    case MBS_WALL_LIMIT: return "wall";
    case MBS_WORKER_CRASHED: return "crash";
    default: return mbs_status_code(s);
    }
}

/* The group furthest below its target (the nominal order; adaptive: the lowest
 * tolerance exponent), among the judged ones with a fit. */
static int worst_group(const mbs_battery_result *r)
{
    int w = -1;
    double dw = -INFINITY;
    for (int g = 0; g < 3; g++) {
        if (r->g[g].state == MBS_GRP_SKIP || !isfinite(r->g[g].p))
            continue;
        double d = (r->adaptive ? 1.0 : r->g[g].nominal) - r->g[g].p;
        if (d > dw) {
            dw = d;
            w = g;
        }
    }
    return w;
}

/* Adaptive: every judged group tolerance proportional. */
static int proportional(const mbs_battery_result *r)
{
    int n = 0;
    for (int g = 0; g < 3; g++) {
        if (r->g[g].state == MBS_GRP_SKIP)
            continue;
        if (!r->g[g].proportional)
            return 0;
        n++;
    }
    return r->adaptive && n > 0;
}

static void cell(const mbs_battery_result *r, char *buf, size_t len)
{
    int w = worst_group(r);
    switch (r->outcome) {
    case MBS_BAT_DECLINED:
        snprintf(buf, len, "-");
        return;
    case MBS_BAT_FAILED:
        snprintf(buf, len, "%s", status_abbrev(r->fail_status));
        return;
    case MBS_BAT_LIMITED:
        snprintf(buf, len, "lim");
        return;
    case MBS_BAT_EXPECTED:
        snprintf(buf, len, "e");
        return;
    case MBS_BAT_PASS:
        if (w >= 0)
            snprintf(buf, len, "%.1f%s", r->g[w].p, proportional(r) ? " ∝" : "");
        else
            snprintf(buf, len, "ok");
        return;
    case MBS_BAT_FINDING:
        if (r->fail_level)
            snprintf(buf, len, "**%s!**", status_abbrev(r->fail_status));
        else if (w >= 0)
            snprintf(buf, len, "**%.1f**", r->g[w].p);
        else
            snprintf(buf, len, "**?**");
        return;
    }
}

static void details(const mbs_battery *b, const mbs_battery_result *r, FILE *out)
{
    static const char *const gn[3] = {"q", "v", "lambda"};
    fprintf(out, "- `%s` on %s (%s %g", r->method, r->problem, r->adaptive ? "tol0" : "h0",
            r->x0);
    if (isfinite(r->t_end))
        fprintf(out, ", t_end %g", r->t_end);
    if (!r->adaptive && r->levels > 1 && fabs(r->x[0] / r->x[1] - b->ratio) > 1e-6)
        fprintf(out, ", ratio %.3g", r->x[0] / r->x[1]);
    fprintf(out, "): **%s**", mbs_battery_outcome_name(r->outcome));
    for (int g = 0; g < 3; g++) {
        if (r->g[g].state == MBS_GRP_SKIP || r->g[g].state == MBS_GRP_PASS)
            continue;
        fprintf(out, "; %s ", gn[g]);
        if (isfinite(r->g[g].p)) {
            fprintf(out, "%s %.2f [%.2f, %.2f] (levels %d..%d", r->adaptive ? "exponent" : "order",
                    r->g[g].p, r->g[g].ci_low, r->g[g].ci_high, r->g[g].first, r->g[g].last);
            if (!r->adaptive)
                fprintf(out, ", nominal %g", r->g[g].nominal);
            else
                fprintf(out, ", err/tol %.2g..%.2g", r->g[g].et_lo, r->g[g].et_hi);
            fputc(')', out);
            if (r->adaptive && r->g[g].state == MBS_GRP_OFF)
                fprintf(out, ", the error does not fall with tol");
        } else
            fprintf(out, "not established (%d usable levels)", r->g[g].usable);
        if (r->g[g].state == MBS_GRP_EXPECTED && r->g[g].expect >= 0 &&
            (size_t)r->g[g].expect < b->n_ex)
            fprintf(out, ", expected: %s", b->ex[r->g[g].expect].source);
        else if (r->g[g].state == MBS_GRP_LIMITED && r->stability_bound)
            fprintf(out, ", limited: the step is set by stability, not by tol (steps %ld..%ld)",
                    r->steps[0], r->steps[r->levels - 1]);
        else if (r->g[g].state == MBS_GRP_LIMITED && isfinite(r->ref_digits))
            fprintf(out, ", limited by round-off or the reference (stated accuracy %.1f digits)",
                    r->ref_digits);
        else if (r->g[g].state == MBS_GRP_LIMITED)
            fprintf(out, ", limited by round-off (exact reference)");
    }
    if (r->fail_level)
        fprintf(out, "; level %d (%s %g) %s: %s; check: %s%s%s", r->fail_level,
                r->adaptive ? "tol" : "h", r->x[r->fail_level - 1],
                mbs_status_code(r->fail_status), r->fail_reason, r->check,
                *r->check_note ? ", " : "", r->check_note);
    fputc('\n', out);
}

/* One group of an adaptive pair: "0.93 [0.81, 1.05] | 2.1..9.8" (exponent with its
 * CI, err/tol over the usable levels). */
static void exponent_cells(const mbs_battery_result *r, int g, FILE *out)
{
    if (!isfinite(r->g[g].p)) {
        fprintf(out, " %s | |", r->g[g].state == MBS_GRP_LIMITED ? "lim" : "n/e");
        return;
    }
    fprintf(out, " %.2f [%.2f, %.2f]%s | %.2g..%.2g |", r->g[g].p, r->g[g].ci_low,
            r->g[g].ci_high, r->g[g].state == MBS_GRP_OFF ? " **does not fall**" : "",
            r->g[g].et_lo, r->g[g].et_hi);
}

/* Every adaptive pair that ran: its tolerance exponents (judged: q, v), err/tol
 * and proportionality (recorded). */
static void adaptive_table(const mbs_battery_result *r, size_t n, FILE *out)
{
    int rows = 0;
    for (size_t k = 0; k < n; k++) {
        const mbs_battery_result *c = &r[k];
        if (!c->adaptive || c->outcome == MBS_BAT_DECLINED || c->fail_level)
            continue;
        if (rows++ == 0)
            fprintf(out, "\nAdaptive methods: the tolerance exponent (least-squares slope of log "
                         "err against log tol over the usable levels, 95%% CI) and err/tol "
                         "over those levels; q and v judged (pass: exponent >= 0.5, CI above "
                         "0), lambda recorded; proportional: every judged group's exponent "
                         "within 0.3 of 1 and err/tol within a factor 10.\n\n"
                         "| method | problem | outcome | q exponent [95%% CI] | err_q/tol | "
                         "v exponent | err_v/tol | lambda exponent | err_lambda/tol | "
                         "proportional |\n|---|---|---|---|---|---|---|---|---|---|\n");
        fprintf(out, "| `%s` | %s | %s |", c->method, c->problem,
                mbs_battery_outcome_name(c->outcome));
        for (int g = 0; g < 3; g++)
            exponent_cells(c, g, out);
        fprintf(out, " %s |\n", proportional(c) ? "yes" : "no");
    }
}

void mbs_battery_markdown(const mbs_battery *b, const mbs_battery_result *r, size_t n,
                          FILE *out)
{
    /* columns: the problems present, in registry order */
    size_t np = mbs_problem_count();
    char *used = calloc(np ? np : 1, 1);
    if (!used)
        return;
    for (size_t k = 0; k < n; k++) {
        long p = problem_pos(r[k].problem);
        if (p >= 0)
            used[p] = 1;
    }
    fprintf(out, "| method |");
    for (size_t i = 0; i < np; i++)
        if (used[i])
            fprintf(out, " %s |", mbs_problem_at(i)->name);
    fprintf(out, "\n|---|");
    for (size_t i = 0; i < np; i++)
        if (used[i])
            fprintf(out, "---|");
    fputc('\n', out);
    for (size_t k = 0; k < n;) {
        size_t e = k;
        while (e < n && strcmp(r[e].method, r[k].method) == 0)
            e++;
        fprintf(out, "| `%s` |", r[k].method);
        for (size_t i = 0; i < np; i++) {
            if (!used[i])
                continue;
            const mbs_battery_result *c = NULL;
            for (size_t j = k; j < e && !c; j++)
                if (strcmp(r[j].problem, mbs_problem_at(i)->name) == 0)
                    c = &r[j];
            char buf[32] = "";
            if (c)
                cell(c, buf, sizeof buf);
            fprintf(out, " %s |", buf);
        }
        fputc('\n', out);
        k = e;
    }
    free(used);
    int nd = 0;
    for (size_t i = 0; i < b->n_pb; i++)
        if (b->pb[i].defaulted)
            fprintf(out, "%s%s", nd++ ? ", " : "\nProblems without a section of their own (the "
                                                "[battery] h0 and tol0): ",
                    b->pb[i].name);
    if (nd)
        fputc('\n', out);
    adaptive_table(r, n, out);
    fprintf(out, "\nEvery pair that is not a plain pass or declined:\n\n");
    for (size_t k = 0; k < n; k++)
        if (r[k].outcome != MBS_BAT_PASS && r[k].outcome != MBS_BAT_DECLINED)
            details(b, &r[k], out);
}

/* ---- the command ---------------------------------------------------------------- */

int mbs_cmd_battery(int argc, char **argv)
{
    const mbs_cli_cmd *cmd = mbs_cli_find("battery");
    const char *file = NULL, *outdir = NULL;
    const char **probs = calloc((size_t)argc, sizeof *probs);
    const char **meths = calloc((size_t)argc, sizeof *meths);
    mbs_battery_options o = {.jobs = 1, .problems = probs, .methods = meths};
    int st = 2;
    if (!probs || !meths)
        goto done;
    for (int i = 2; i < argc; i++) {
        mbs_cli_arg a;
        int k = mbs_cli_next(cmd, argc, argv, &i, &a);
        if (k < 0)
            goto done;
        if (mbs_cli_is(&a, "--check"))
            o.check_only = 1;
        else if (mbs_cli_is(&a, "--problem"))
            probs[o.n_problems++] = a.str;
        else if (mbs_cli_is(&a, "--method"))
            meths[o.n_methods++] = a.str;
        else if (mbs_cli_is(&a, "--out"))
            outdir = a.str;
        else if (mbs_cli_is(&a, "--rejudge"))
            o.rejudge = 1;
        else if (mbs_cli_is(&a, "--jobs"))
            o.jobs = (int)a.integer;
        else if (k == 0 && !file)
            file = a.str;
        else {
            fprintf(stderr, "mbsbench: battery: unexpected argument '%s'\n", a.str);
            goto done;
        }
    }
    char path[1024], err[1024];
    if (file)
        snprintf(path, sizeof path, "%s", file);
    else
        mbs_data_path("suites/battery.ini", path, sizeof path);
    mbs_battery b;
    if (mbs_battery_load(path, &b, err, sizeof err) != MBS_OK) {
        fprintf(stderr, "mbsbench: %s\n", err);
        goto done;
    }
    for (size_t i = 0; i < o.n_problems; i++)
        if (!mbs_problem_find(probs[i])) {
            fprintf(stderr, "mbsbench: battery: -p %s is not a registered problem\n", probs[i]);
            mbs_battery_free(&b);
            goto done;
        }
    o.outdir = outdir ? outdir : o.check_only ? "results/battery-check" : "results/battery";
    st = mbs_battery_run(&b, &o, stdout);
    mbs_battery_free(&b);
done:
    free(probs);
    free(meths);
    return st;
}
