/* mbsbench merge OUT DIR... [--partial] [--history DB | --no-history]: put the results directories
 * of one suite's shards (sweep --shard, --slurm) -- or any directories holding
 * runs of the same grid (meta.json suite_digest) -- together into OUT, a results
 * directory like a local sweep's: runs.jsonl in run-index order, meta.json,
 * runs.csv and series/.
 *
 *  - A run found in several inputs with identical records (all fields but the
 *    timings "cpu" and "node") is kept once; records that differ are conflicts:
 *    each is reported and nothing is written (exit 2).
 *  - A shard none of the inputs holds, or runs missing from a shard, are named
 *    with the command completing them; nothing is written (exit 1) unless
 *    --partial, which writes the runs there are (and still exits 1).
 *  - Every merged record gets "node": the host it ran on; meta.json gets
 *    "merged_from" (each input's directory, shard and environment) and
 *    "environments" (the number of distinct CPU/compiler/flags/cores).  When
 *    that number exceeds 1, meta.json's cpu says "mixed", so that `compare`
 *    treats CPU times as advisory, and the report lists the machines.
 *  - A complete merge goes into the results history as a local sweep does
 *    (results/history.sqlite for OUT under results/, or --history DB). */
#ifndef MBS_MERGE_H
#define MBS_MERGE_H

int mbs_cmd_merge(int argc, char **argv);

#endif
