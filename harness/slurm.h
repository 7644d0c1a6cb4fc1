/* Sweeps beyond one machine: the sweep options for shards and Slurm,
 * and the sbatch script of a job array whose task I runs
 *   mbsbench sweep SUITE --shard I/N --resume OUT/shard-I
 * (--resume: a requeued task continues where it was killed), to be put back
 * together with `mbsbench merge OUT/merged OUT/shard-*`. */
#ifndef MBS_SLURM_H
#define MBS_SLURM_H

#include <stdio.h>

#include "cli.h"
#include "sweep.h"

enum { MBS_SLURM_MAX_EXTRA = 16 };

typedef struct mbs_cluster_opts {
    const char *shard;       /* --shard I/N */
    const char *cost_from;   /* --cost-from DIR */
    int slurm, submit;       /* --slurm, --submit */
    long array_size;         /* --array-size N (shards = array tasks; default 4) */
    long cpus_per_task;      /* --cpus-per-task C (also -j of each task; default 1) */
    const char *partition, *time, *account, *qos, *mem; /* passed to #SBATCH */
    const char *extra[MBS_SLURM_MAX_EXTRA];              /* --sbatch-option OPT (repeatable) */
    int n_extra;
} mbs_cluster_opts;

/* Defaults of the cluster options. */
void mbs_cluster_opts_init(mbs_cluster_opts *o);
/* Take one parsed option of sweep (cli.h) when it is a cluster option: returns 1
 * (taken), 0 (not a cluster option) or -1 after a one-line error. */
int mbs_cluster_option(const mbs_cli_arg *a, mbs_cluster_opts *o);
/* The options that exclude each other; 0, or 2 after one line per conflict. */
int mbs_cluster_opts_check(const mbs_cluster_opts *o);

/* What of the plain sweep options the array tasks repeat (all optional). */
typedef struct mbs_slurm_passthrough {
    const char *baseline;
    int series;
    double budget, max_cpu, max_wall, max_mem;
    long max_steps;
} mbs_slurm_passthrough;

/* Write outdir/sweep.sbatch for suite s (file suite_path) and, with o->submit,
 * submit it with sbatch and print the job id.  Prints what to do next on out.
 * Returns 0, or 2 (bad input, I/O error, sbatch missing or refusing). */
int mbs_slurm_sweep(const mbs_suite *s, const char *suite_path, const char *outdir,
                    const mbs_cluster_opts *o, const mbs_slurm_passthrough *pass, FILE *out);

#endif
