#!/bin/bash
# table.sh TPSIM OUTDIR: the validation table (README, `make run`): every hypothesis under the
# within, transfer 2:4, transfer 4:2 and leave-one-out protocols on the study's grid, one
# markdown row per judged config (tpsim validate --summary), two runs at a time; OUTDIR keeps each run's rows.
set -euo pipefail
tpsim=$1 out=$2
mkdir -p "$out"
runs=() i=0
for s in paper-additive eager-host-dispatch eager-straggler eager-broadcast cuda-graphs; do
    for p in --within --transfer=2:4 --transfer=4:2 --loo; do
        runs+=("$(printf '%02d' $i)" "scenarios/$s.yaml" "$p")
        i=$((i + 1))
    done
done
printf '%s\n' "${runs[@]}" | xargs -P 2 -n 3 sh -c '"$0" validate "$3" "$4" --summary >"$1/$2.md"' "$tpsim" "$out" ||
    { echo "table.sh: a validation failed" >&2; exit 1; }
echo "| scenario | protocol | judged config | held-out MAPE | best null baseline (MAPE) | skill | verdict | held-out inside its interval | identified (parameters' 95% spread) |"
echo "|---|---|---|---|---|---|---|---|---|"
for ((k = 0; k < i; k++)); do
    f=$(printf '%02d' $k)
    [ -s "$out/$f.md" ] || { echo "table.sh: run $f gave no rows" >&2; exit 1; }
    cat "$out/$f.md"
done
