#!/usr/bin/env bash
# slurm-sweep.sh: run a tpsim sweep on a Slurm cluster as a job array with a dependent merge.
#
#   scripts/slurm-sweep.sh -n N -o OUT.csv [-d PARTS_DIR] [-t TPSIM] [-s "SBATCH OPTS"] \
#                          -- SCENARIO [tpsim sweep flags...]
#
# Submits an array of N tasks (--array=0-(N-1)); task I runs
#   tpsim sweep SCENARIO FLAGS --shard I/N -o PARTS_DIR/part-I.csv
# (a plain CSV, with its shard and the sweep's fingerprint in the sidecar part-I.csv.meta)
# with I = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN and N = SLURM_ARRAY_TASK_COUNT, then a
# merge job, held until every task succeeded (--dependency=afterok), that runs
#   tpsim merge OUT.csv PARTS_DIR/part-0.csv ... part-(N-1).csv
# so OUT.csv is byte for byte what `tpsim sweep /ABS/SCENARIO FLAGS -o OUT.csv` writes on one
# machine. Prints "array JOBID" and "merge JOBID". PARTS_DIR (default OUT.csv.parts) and
# OUT must be on a file system every node sees; paths are made absolute before submitting
# (so the rows' calibration column names its file by an absolute path too).
# Extra sbatch options (partition, time limit, account) go in -s, word-split.
set -euo pipefail

if [ "${1:-}" = "--task" ]; then # inside Slurm: one array task, or the merge
    shift
    kind=$1 tpsim=$2 parts=$3; shift 3
    if [ "$kind" = sweep ]; then
        : "${SLURM_ARRAY_TASK_ID:?not in a Slurm array task}" "${SLURM_ARRAY_TASK_COUNT:?}"
        i=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))
        exec "$tpsim" sweep "$@" --quiet --shard "$i/$SLURM_ARRAY_TASK_COUNT" -o "$parts/part-$i.csv"
    fi
    out=$1 n=$2
    files=()
    for ((i = 0; i < n; i++)); do files+=("$parts/part-$i.csv"); done
    exec "$tpsim" merge "$out" "${files[@]}"
fi

usage() { echo "usage: $0 -n N -o OUT.csv [-d PARTS_DIR] [-t TPSIM] [-s SBATCH_OPTS] -- SCENARIO [sweep flags]" >&2; exit 2; }
n="" out="" parts="" tpsim="" extra=""
while getopts "n:o:d:t:s:" opt; do
    case $opt in
    n) n=$OPTARG ;; o) out=$OPTARG ;; d) parts=$OPTARG ;; t) tpsim=$OPTARG ;; s) extra=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ -n "$n" ] && [ -n "$out" ] && [ $# -ge 1 ] || usage
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "$0: -n '$n', expected a task count >= 1" >&2; exit 2; }
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
here=$(cd "$(dirname "$0")" && pwd)
tpsim=$(abs "${tpsim:-$(command -v tpsim || echo "$here/../build/tpsim")}")
out=$(abs "$out")
parts=$(abs "${parts:-$out.parts}")
[ -x "$tpsim" ] || { echo "$0: no tpsim at $tpsim (pass -t)" >&2; exit 2; }
scenario=$(abs "$1"); shift
mkdir -p "$parts"
rm -f "$parts"/part-*.csv "$parts"/part-*.csv.meta
# shellcheck disable=SC2086 # $extra is a list of sbatch options
array=$(sbatch --parsable $extra --job-name=tpsim-sweep --array=0-$((n - 1)) \
    --output="$parts/slurm-%A_%a.out" "$here/slurm-sweep.sh" --task sweep "$tpsim" "$parts" \
    "$scenario" "$@")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable $extra --job-name=tpsim-merge --dependency=afterok:"$array" \
    --output="$parts/slurm-merge-%j.out" "$here/slurm-sweep.sh" --task merge "$tpsim" "$parts" \
    "$out" "$n")
echo "array ${array}"
echo "merge ${merge%%;*}"
