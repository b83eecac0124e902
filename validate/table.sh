#!/bin/bash
# table.sh TPSIM OUTDIR: the validation table (docs/results.md, `make run`, `make docs`): every
# hypothesis under the within, transfer 2:4, transfer 4:2 and leave-one-out protocols on the
# study's grid, one markdown row per judged config (tpsim validate --summary), two scenarios at
# a time; OUTDIR keeps each scenario's rows. A scenario's four protocols run in one tpsim, so a fit on the
# same calibration cells (eager-straggler's, under three of them) is simulated once
# (validate/memo.h).
set -euo pipefail
tpsim=$1 out=$2
mkdir -p "$out"
runs=() i=0
for s in paper-additive eager-host-dispatch eager-straggler eager-broadcast cuda-graphs eager-sourced; do
    runs+=("$(printf '%02d' $i)" "scenarios/$s.yaml")
    i=$((i + 1))
done
printf '%s\n' "${runs[@]}" | xargs -P 2 -n 2 sh -c \
    '"$0" validate "$3" --within --transfer=2:4 --transfer=4:2 --loo --summary >"$1/$2.md"' "$tpsim" "$out" ||
    { echo "table.sh: a validation failed" >&2; exit 1; }
echo "| scenario | protocol | judged config | held-out MAPE | best null baseline (MAPE) | skill | verdict | held-out inside its interval | identified (parameters' 95% spread) |"
echo "|---|---|---|---|---|---|---|---|---|"
for ((k = 0; k < i; k++)); do
    f=$(printf '%02d' $k)
    [ -s "$out/$f.md" ] || { echo "table.sh: run $f gave no rows" >&2; exit 1; }
    cat "$out/$f.md"
done
