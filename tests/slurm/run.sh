#!/bin/bash
# make check-slurm: a real single-node Slurm on localhost runs
# tests/slurm/cluster.suite (44 runs) as a 4-task job array; the merged record set
# must equal a local `sweep -j 4` of the same suite (same cases, statuses,
# errors, counters to the last digit; only CPU times and the node differ).  One
# task is requeued in the middle of its shard (scontrol requeue): nothing may be
# lost or recorded twice.
#
# Needs root and Debian's slurm-wlm, munge and jq (installed here when missing
# and apt-get works).  Prints SKIP with the reason otherwise, and exits 0 only
# then or on success.  Everything lives in a temporary directory: its own munge
# key and socket, slurm.conf (ports from 16817 up), state and logs; the daemons
# are stopped on exit.
set -eu
BIN=${MBSBENCH:-bin/mbsbench}
SUITE=tests/slurm/cluster.suite
TASKS=4

skip() { echo "check-slurm: SKIP: $*"; exit 0; }
fail() {
    echo "check-slurm: FAIL: $*" >&2
    for f in "$W"/log/*.log; do echo "--- $f" >&2; tail -n 15 "$f" >&2 || true; done
    exit 1
}

[ -x "$BIN" ] || { echo "check-slurm: $BIN not built (make all)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || skip "needs root to start slurmctld/slurmd and munged (run as root, or in CI)"
need=""
for c in slurmctld slurmd munged sbatch jq; do command -v $c >/dev/null 2>&1 || need=1; done
if [ -n "$need" ]; then
    command -v apt-get >/dev/null 2>&1 || skip "slurm-wlm/munge/jq missing and no apt-get"
    echo "check-slurm: installing slurm-wlm munge jq"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        slurm-wlm munge jq) >/dev/null 2>&1 || skip "apt-get could not install slurm-wlm munge jq"
fi

W=$(mktemp -d /tmp/mbsbench-slurm.XXXXXX)
chmod 755 "$W"
stop() {
    set +e
    [ -f "$W/slurmd.pid" ] && kill "$(cat "$W/slurmd.pid")" 2>/dev/null
    [ -f "$W/slurmctld.pid" ] && kill "$(cat "$W/slurmctld.pid")" 2>/dev/null
    [ -f "$W/munge/pid" ] && kill "$(cat "$W/munge/pid")" 2>/dev/null
    sleep 1
    [ -n "${KEEP:-}" ] && echo "check-slurm: kept $W" || rm -rf "$W"
}
trap stop EXIT INT TERM
mkdir -p "$W/munge" "$W/state" "$W/spool" "$W/log"
chmod 755 "$W/munge"
dd if=/dev/urandom of="$W/munge/key" bs=1024 count=1 2>/dev/null
chmod 400 "$W/munge/key"
munged -f --socket="$W/munge/sock" --key-file="$W/munge/key" --pid-file="$W/munge/pid" \
    --seed-file="$W/munge/seed" --log-file="$W/log/munged.log" || skip "munged does not start"

port=16817 # first free pair of ports
while (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null || (echo >/dev/tcp/127.0.0.1/$((port+1))) 2>/dev/null; do
    port=$((port + 2))
done 2>/dev/null || true
host=$(hostname)
mem=$(awk '/MemTotal/ { print int($2 / 1024 * 0.8) }' /proc/meminfo)
cat >"$W/slurm.conf" <<EOF
ClusterName=mbsbench-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$W/munge/sock
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
KillWait=5
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$W/slurm.conf"
slurmctld -c || fail "slurmctld does not start"
slurmd || fail "slurmd does not start"
i=0
until sinfo -h -o %t 2>/dev/null | grep -q idle; do
    i=$((i + 1)); [ $i -lt 60 ] || fail "the node never became idle"; sleep 0.5
done
echo "check-slurm: single-node Slurm up ($(sinfo -h -o '%P %D nodes %c CPUs'), port $port)"

wait_job() { # wait until job $1 has left the queue (at most $2 s)
    n=0
    while [ -n "$(squeue -h -j "$1" 2>/dev/null)" ]; do
        n=$((n + 1)); [ $n -lt $(($2 * 2)) ] || fail "job $1 still queued after $2 s"
        sleep 0.5
    done
}
untimed() { jq -c 'del(.cpu, .node)' "$1/runs.jsonl" | jq -cs 'sort_by(.run)[]'; }

# 1. the reference: a local sweep of the same suite
"$BIN" sweep "$SUITE" -j "$TASKS" --out "$W/local" --no-history >/dev/null || [ $? = 1 ] ||
    fail "local sweep"
nrun=$(wc -l <"$W/local/runs.jsonl")
[ "$nrun" -ge 40 ] || fail "the suite has $nrun runs, the test needs >= 40"

# 2. the job array, one task requeued in the middle of its shard
"$BIN" sweep "$SUITE" --slurm --array-size $TASKS --out "$W/array" --time 10:00 --submit ||
    fail "sweep --slurm --submit"
job=$(cat "$W/array/slurm-job")
n=0
until [ "$(cat "$W/array/shard-1/runs.jsonl" 2>/dev/null | wc -l)" -ge 2 ]; do
    n=$((n + 1)); [ $n -lt 600 ] || fail "task 1 recorded nothing in 60 s"
    sleep 0.1
done
shard1=$(jq '.shard.runs | length' "$W/array/shard-1/meta.json")
before=$(wc -l <"$W/array/shard-1/runs.jsonl")
[ "$before" -lt "$shard1" ] || fail "task 1 finished its $shard1 runs before it could be requeued"
scontrol requeue "${job}_1" || fail "scontrol requeue ${job}_1"
# A requeued job is held for 2 minutes (BeginTime); once it is pending again, let it go.
n=0
until [ "$(squeue -h -j "${job}_1" -o %T 2>/dev/null)" = PENDING ]; do
    n=$((n + 1)); [ $n -lt 300 ] || fail "task 1 not pending after the requeue"
    sleep 0.1
done
scontrol update JobId="${job}_1" StartTime=now || fail "cannot release the requeued task 1"
echo "check-slurm: requeued task 1 after $before of its $shard1 runs"
wait_job "$job" 240
grep -q "DUE TO JOB REQUEUE" "$W/array/slurm-${job}_1.out" ||
    fail "task 1 was not requeued mid-run (its log does not say so)"
dups=$(jq -r .run "$W/array/shard-1/runs.jsonl" | sort | uniq -d | wc -l)
[ "$dups" = 0 ] || fail "shard 1 recorded $dups runs twice"

# 3. merge, and compare with the local sweep
"$BIN" merge "$W/merged" "$W"/array/shard-* --no-history || fail "merge"
untimed "$W/local" >"$W/local.txt"
untimed "$W/merged" >"$W/merged.txt"
if ! cmp -s "$W/local.txt" "$W/merged.txt"; then
    diff "$W/local.txt" "$W/merged.txt" | head -n 10 >&2
    fail "the merged record set differs from the local sweep"
fi
"$BIN" summary "$W/merged" >/dev/null 2>&1 || [ $? = 1 ] || fail "summary of the merged directory"
"$BIN" baseline bless "$W/local" -o "$W/base.json" >/dev/null || fail "bless"
"$BIN" compare "$W/base.json" "$W/merged" >"$W/compare.txt" || fail "compare: $(tail -n 3 "$W/compare.txt")"
echo "check-slurm: PASS: $nrun runs as $TASKS array tasks (task 1 requeued after $before of" \
    "$shard1 runs), merged = local sweep -j $TASKS in every field but CPU time; compare: no regression"
