#!/usr/bin/env bash
# tests/slurm/run.sh (make test-slurm, run by .ci/run): scripts/slurm-sweep.sh on a real
# single-node Slurm. Installs Debian's slurmctld, slurmd, slurm-client and munge if missing
# (needs root: CI and the dev machines run as root), starts munged, slurmctld and slurmd on
# localhost from a private folder (own key, socket, ports, state; nothing under /etc is
# touched), submits a 3-task array sweep with its dependent merge, checks that the merged
# CSV is byte for byte the unsharded sweep, and stops the daemons it started and removes
# its folder whatever happens. Every wait is bounded; the whole test is under `timeout`
# in the Makefile.
set -euo pipefail
cd "$(dirname "$0")/../.."
TPSIM=${TPSIM:-build/tpsim}
PKGS="slurmctld slurmd slurm-client munge"

missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
    [ "$(id -u)" -eq 0 ] || { echo "test-slurm: needs root to install$missing" >&2; exit 1; }
    echo "installing:$missing"
    timeout 300 apt-get update -qq
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

D=$(mktemp -d /tmp/tpsim-slurm.XXXXXX)
chmod 755 "$D"
PIDS=()
cleanup() {
    local rc=$?
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    if [ $rc -ne 0 ]; then
        echo "--- logs" >&2
        tail -n 20 "$D"/*.log "$D"/out.csv.parts/*.out 2>/dev/null >&2 || true
    fi
    rm -rf "$D"
    exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL test-slurm: $*" >&2; exit 1; }
wait_for() { # wait_for SECONDS WHAT CMD...: poll CMD until it succeeds
    local limit=$1 what=$2; shift 2
    for _ in $(seq $((limit * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    fail "$what: not within ${limit}s"
}

# munge: a fresh key and a private socket
mkdir -p "$D/munge"
dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
chmod 711 "$D/munge"
chmod 400 "$D/munge/munge.key"
munged --force --foreground --key-file="$D/munge/munge.key" --socket="$D/munge/sock" \
    --pid-file="$D/munge/pid" --seed-file="$D/munge/seed" >"$D/munged.log" 2>&1 &
PIDS+=($!)
wait_for 20 "munged" test -S "$D/munge/sock"

# slurm: one node (this host), one partition, ports away from the defaults
HOST=$(hostname -s)
CPUS=$(nproc)
PORT=$((20000 + RANDOM % 20000))
mkdir -p "$D/state" "$D/spool"
cat >"$D/slurm.conf" <<CONF
ClusterName=tpsimtest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/sock
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
PlugStackConfig=$D/plugstack.conf
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=10 State=UP
CONF
: >"$D/plugstack.conf"
export SLURM_CONF=$D/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$D/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" >"$D/slurmd.out" 2>&1 &
PIDS+=($!)
node_idle() { sinfo -h -n "$HOST" -o %T | grep -qx idle; }
wait_for 60 "the node to come up idle" node_idle
echo "slurm up: node $HOST, $CPUS CPUs, port $PORT"

# the sweep: 3 array tasks and a merge held on them
# absolute, as slurm-sweep.sh makes it: the rows' calibration column names files by path
SCN=$PWD/scenarios/eager-host-dispatch.yaml
FLAGS=(--tp 2,4,8 --batch 1,8 --mode eager,graphs --steps 6 --set host.launch.dist=lognormal
       --set host.launch.cv=0.3)
"$TPSIM" sweep "$SCN" "${FLAGS[@]}" -o "$D/want.csv"
scripts/slurm-sweep.sh -n 3 -o "$D/out.csv" -t "$TPSIM" -- "$SCN" "${FLAGS[@]}" >"$D/jobs.txt"
cat "$D/jobs.txt"
array=$(awk '$1 == "array" {print $2}' "$D/jobs.txt")
merge=$(awk '$1 == "merge" {print $2}' "$D/jobs.txt")
[ -n "$array" ] && [ -n "$merge" ] || fail "no job ids from slurm-sweep.sh"
queue_empty() { [ -z "$(squeue -h -o %i)" ]; }
wait_for 180 "the array and the merge to finish" queue_empty
test -f "$D/out.csv" || fail "no merged output (merge job $merge)"
for i in 0 1 2; do
    grep -Eqx "$i,3,12,[0-9a-f]{16},[0-9a-f]{16}" "$D/out.csv.parts/part-$i.csv.meta" ||
        fail "part $i is not shard $i/3 (array task ${array}_$i)"
done
cmp "$D/want.csv" "$D/out.csv" || fail "merged CSV differs from the unsharded sweep"
# Slurm's own record (finished jobs stay in slurmctld for MinJobAge, 300 s): three array
# tasks that completed, and a merge that started no earlier than the last of them ended
scontrol -o show job "$array" >"$D/array.txt"
[ "$(grep -c 'JobState=COMPLETED' "$D/array.txt")" -eq 3 ] || fail "expected 3 completed array tasks"
[ "$(grep -o 'ArrayTaskId=[0-9]*' "$D/array.txt" | sort | tr '\n' ' ')" = "ArrayTaskId=0 ArrayTaskId=1 ArrayTaskId=2 " ] ||
    fail "array task ids are not 0, 1, 2"
last_end=$(grep -o 'EndTime=[^ ]*' "$D/array.txt" | cut -d= -f2 | sort | tail -n 1)
merge_start=$(scontrol -o show job "$merge" | grep -o 'StartTime=[^ ]*' | cut -d= -f2)
scontrol -o show job "$merge" | grep -q 'JobState=COMPLETED' || fail "merge job did not complete"
[[ ! "$merge_start" < "$last_end" ]] || fail "merge started $merge_start before the array ended $last_end"
echo "test-slurm: 3-task array + merge = the unsharded sweep ($(($(wc -l <"$D/out.csv") - 1)) rows)"
