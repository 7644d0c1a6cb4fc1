#define _XOPEN_SOURCE 700 /* realpath */
#include "slurm.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "io.h"
#include "plugin.h"
#include "../core/param.h"
#include "shard.h"

/* #SBATCH values go into the script verbatim: one word, no quotes or
 * shell/line specials. */
static int sbatch_word(const char *opt, const char *v)
{
    if (!v || !*v || strpbrk(v, " \t\n\r'\"`$\\;&|<>")) {
        fprintf(stderr, "mbsbench: %s '%s' must be one word without quotes, spaces or shell "
                        "characters\n", opt, v ? v : "");
        return -1;
    }
    return 0;
}

void mbs_cluster_opts_init(mbs_cluster_opts *o)
{
    *o = (mbs_cluster_opts){.array_size = 4, .cpus_per_task = 1};
}

int mbs_cluster_option(const mbs_cli_arg *a, mbs_cluster_opts *o)
{
    const char *v = a->str;
    if (mbs_cli_is(a, "--slurm"))
        o->slurm = 1;
    else if (mbs_cli_is(a, "--submit"))
        o->submit = 1;
    else if (mbs_cli_is(a, "--shard"))
        o->shard = v;
    else if (mbs_cli_is(a, "--cost-from"))
        o->cost_from = v;
    else if (mbs_cli_is(a, "--array-size"))
        o->array_size = a->integer;
    else if (mbs_cli_is(a, "--cpus-per-task"))
        o->cpus_per_task = a->integer;
    else if (mbs_cli_is(a, "--partition"))
        return sbatch_word(a->opt->name, v) ? -1 : (o->partition = v, 1);
    else if (mbs_cli_is(a, "--time"))
        return sbatch_word(a->opt->name, v) ? -1 : (o->time = v, 1);
    else if (mbs_cli_is(a, "--account"))
        return sbatch_word(a->opt->name, v) ? -1 : (o->account = v, 1);
    else if (mbs_cli_is(a, "--qos"))
        return sbatch_word(a->opt->name, v) ? -1 : (o->qos = v, 1);
    else if (mbs_cli_is(a, "--mem"))
        return sbatch_word(a->opt->name, v) ? -1 : (o->mem = v, 1);
    else if (mbs_cli_is(a, "--sbatch-option")) {
        if (v[0] != '-') {
            fprintf(stderr, "mbsbench: --sbatch-option '%s' must be an sbatch option such as "
                            "--constraint=avx2\n", v);
            return -1;
        }
        if (o->n_extra >= MBS_SLURM_MAX_EXTRA) {
            fprintf(stderr, "mbsbench: more than %d --sbatch-option\n", MBS_SLURM_MAX_EXTRA);
            return -1;
        }
        if (sbatch_word(a->opt->name, v))
            return -1;
        o->extra[o->n_extra++] = v;
    } else
        return 0;
    return 1;
}

int mbs_cluster_opts_check(const mbs_cluster_opts *o)
{
    int errors = 0;
    if (o->submit && !o->slurm)
        errors++, fprintf(stderr, "mbsbench: --submit goes with --slurm\n");
    if (o->shard && o->slurm)
        errors++, fprintf(stderr, "mbsbench: --shard and --slurm exclude each other (the "
                                  "script gives each array task its --shard)\n");
    return errors ? 2 : 0;
}

/* Absolute path of an existing file or directory (buf), or -1 with a message. */
static int absolute(const char *what, const char *path, char *buf)
{
    if (!realpath(path, buf)) {
        fprintf(stderr, "mbsbench: cannot resolve %s '%s'\n", what, path);
        return -1;
    }
    if (strpbrk(buf, " \t\n'\"`$\\")) {
        fprintf(stderr, "mbsbench: %s '%s' contains spaces or quotes, which the sbatch script "
                        "cannot carry; use a plain path\n", what, buf);
        return -1;
    }
    return 0;
}

static int write_script(const mbs_suite *s, const char *bin, const char *suite, const char *out,
                        const char *cwd, const mbs_cluster_opts *o,
                        const mbs_slurm_passthrough *p, const char *cost_from, char *path,
                        size_t pathlen)
{
    char *buf = NULL, digest[32];
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return -1;
    mbs_suite_digest(s, digest, sizeof digest);
    long n = o->array_size;
    fprintf(m, "#!/bin/sh\n"
               "# Written by mbsbench %s (sweep --slurm): suite %s, %zu runs (grid digest %s),\n"
               "# as %ld shards, one per array task.  Each task resumes its own directory, so a\n"
               "# requeued task keeps the runs it finished.  When every task has ended:\n"
               "#   %s merge %s/merged %s/shard-*\n",
            mbs_version_string(), s->name, s->n_runs, digest, n, bin, out, out);
    fprintf(m, "#SBATCH --job-name=mbsbench-%s\n#SBATCH --array=0-%ld\n", s->name, n - 1);
    fprintf(m, "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=%ld\n", o->cpus_per_task);
    fprintf(m, "#SBATCH --requeue\n#SBATCH --open-mode=append\n");
    fprintf(m, "#SBATCH --output=%s/slurm-%%A_%%a.out\n#SBATCH --chdir=%s\n", out, cwd);
    const char *names[] = {"partition", "time", "account", "qos", "mem"};
    const char *vals[] = {o->partition, o->time, o->account, o->qos, o->mem};
    for (int k = 0; k < 5; k++)
        if (vals[k])
            fprintf(m, "#SBATCH --%s=%s\n", names[k], vals[k]);
    for (int k = 0; k < o->n_extra; k++)
        fprintf(m, "#SBATCH %s\n", o->extra[k]);
    /* --resume needs the directory: the task's first start creates it */
    fprintf(m, "\nmkdir -p \"%s/shard-${SLURM_ARRAY_TASK_ID}\" || exit 1\n", out);
    fprintf(m, "'%s' sweep '%s' --shard \"${SLURM_ARRAY_TASK_ID}/%ld\" \\\n"
               "    --resume \"%s/shard-${SLURM_ARRAY_TASK_ID}\" -j %ld --no-history",
            bin, suite, n, out, o->cpus_per_task);
    for (size_t i = 0; i < mbs_plugin_count(); i++) /* absolute paths (realpath) */
        fprintf(m, " \\\n    --plugin '%s'", mbs_plugin_path(i));
    if (cost_from)
        fprintf(m, " \\\n    --cost-from '%s'", cost_from);
    if (p->baseline)
        fprintf(m, " \\\n    --baseline '%s'", p->baseline);
    if (p->series)
        fprintf(m, " --series");
    if (p->budget > 0.0)
        fprintf(m, " --budget %.17g", p->budget);
    if (p->max_steps > 0)
        fprintf(m, " --max-steps %ld", p->max_steps);
    if (p->max_cpu > 0.0)
        fprintf(m, " --max-cpu %.17g", p->max_cpu);
    if (p->max_wall > 0.0)
        fprintf(m, " --max-wall %.17g", p->max_wall);
    if (p->max_mem > 0.0)
        fprintf(m, " --max-mem %.17g", p->max_mem);
    /* exit 1 means "some run failed numerically": a result, recorded; the task
     * itself succeeded.  Signals (requeue, time limit) and I/O errors pass. */
    fprintf(m, "\nst=$?\n[ \"$st\" -le 1 ] && exit 0\nexit \"$st\"\n");
    fclose(m);
    snprintf(path, pathlen, "%s/sweep.sbatch", out);
    int r = mbs_write_atomic(path, buf, len);
    free(buf);
    return r;
}

static int submit(const char *script, const char *out, long n, FILE *o)
{
    char cmd[4400], line[256] = "";
    snprintf(cmd, sizeof cmd, "sbatch --parsable '%s' 2>&1", script);
    FILE *p = popen(cmd, "r");
    if (!p) {
        fprintf(stderr, "mbsbench: cannot start sbatch\n");
        return 2;
    }
    char *got = fgets(line, sizeof line, p);
    int st = pclose(p);
    line[strcspn(line, "\n")] = '\0';
    char *semi = strchr(line, ';'); /* "jobid;cluster" */
    if (semi)
        *semi = '\0';
    long id = -1;
    if (!got || st != 0 || mbs_parse_long(line, &id) != 0 || id <= 0) {
        fprintf(stderr, "mbsbench: sbatch refused %s: %s\n", script,
                got ? line : (st == 127 << 8 ? "sbatch not found in PATH" : "no output"));
        return 2;
    }
    char path[4200], txt[32];
    snprintf(path, sizeof path, "%s/slurm-job", out);
    snprintf(txt, sizeof txt, "%ld\n", id);
    if (mbs_write_atomic(path, txt, strlen(txt)) != 0)
        fprintf(stderr, "mbsbench: cannot write %s (the job is submitted)\n", path);
    fprintf(o, "submitted job array %ld (%ld tasks); follow it with: squeue -j %ld\n", id, n, id);
    return 0;
}

int mbs_slurm_sweep(const mbs_suite *s, const char *suite_path, const char *outdir,
                    const mbs_cluster_opts *o, const mbs_slurm_passthrough *pass, FILE *out)
{
    char bin[PATH_MAX], suite[PATH_MAX], dir[PATH_MAX], cwd[PATH_MAX], cost[PATH_MAX];
    char base[PATH_MAX], script[PATH_MAX + 32];
    if ((size_t)o->array_size > s->n_runs) {
        fprintf(stderr, "mbsbench: --array-size %ld exceeds the %zu runs of suite %s\n",
                o->array_size, s->n_runs, s->name);
        return 2;
    }
    if (mbs_mkdir_p(outdir) != 0) {
        fprintf(stderr, "mbsbench: cannot create '%s'\n", outdir);
        return 2;
    }
    snprintf(script, sizeof script, "%s/sweep.sbatch", outdir);
    if (access(script, F_OK) == 0) {
        fprintf(stderr, "mbsbench: '%s' already holds a Slurm sweep (sweep.sbatch); use another "
                        "--out, or resubmit it with: sbatch %s\n", outdir, script);
        return 2;
    }
    mbs_slurm_passthrough p = *pass;
    if (absolute("executable", "/proc/self/exe", bin) || absolute("suite", suite_path, suite) ||
        absolute("--out", outdir, dir) || !getcwd(cwd, sizeof cwd) ||
        (o->cost_from && absolute("--cost-from", o->cost_from, cost)) ||
        (p.baseline && absolute("--baseline", p.baseline, base)))
        return 2;
    for (size_t i = 0; i < mbs_plugin_count(); i++) { /* passed on with --plugin */
        char plug[PATH_MAX];
        if (absolute("plugin", mbs_plugin_path(i), plug) != 0)
            return 2;
    }
    if (p.baseline)
        p.baseline = base;
    if (write_script(s, bin, suite, dir, cwd, o, &p, o->cost_from ? cost : NULL, script,
                     sizeof script) != 0) {
        fprintf(stderr, "mbsbench: cannot write the sbatch script into '%s'\n", dir);
        return 2;
    }
    fprintf(out, "suite %s: %zu runs as a job array of %ld shards: %s\n", s->name, s->n_runs,
            o->array_size, script);
    if (o->submit) {
        int st = submit(script, dir, o->array_size, out);
        if (st)
            return st;
    } else {
        fprintf(out, "submit it with: sbatch %s\n", script);
    }
    fprintf(out, "when every task has ended: mbsbench merge %s/merged %s/shard-*\n", dir, dir);
    return 0;
}
