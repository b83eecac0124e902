#!/usr/bin/env bash
# bench-jobs.sh: validate --jobs speed-up (make bench). Times `tpsim validate` on
# eager-straggler with --jobs 1 and --jobs 2 (best of REPS runs each, interleaved), checks the
# two outputs are byte-identical, and prints the speed-up beside the machine's load, since
# on shared cores the figure says more about the neighbours than about the pool.
#   usage: scripts/bench-jobs.sh TPSIM [REPS]        (goal: >= 1.6x on two idle cores)
set -euo pipefail
tpsim=${1:?usage: scripts/bench-jobs.sh TPSIM [REPS]}
reps=${2:-3}
scn=scenarios/eager-straggler.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
best1=inf best2=inf
for r in $(seq "$reps"); do
    for j in 1 2; do
        t0=$(now)
        "$tpsim" validate "$scn" --jobs "$j" --format json >"$tmp/out$j" 2>"$tmp/err$j" || {
            echo "bench-jobs: validate --jobs $j failed: $(head -c 300 "$tmp/err$j")" >&2; exit 1; }
        t1=$(now)
        prev=best$j
        eval "best$j=$(awk -v a="${!prev}" -v t0="$t0" -v t1="$t1" \
            'BEGIN { s = t1 - t0; print (a == "inf" || s < a + 0) ? s : a }')"
    done
    cmp -s "$tmp/out1" "$tmp/out2" || { echo "bench-jobs: --jobs 1 and --jobs 2 outputs differ" >&2; exit 1; }
done
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?")
awk -v a="$best1" -v b="$best2" -v c="$(nproc)" -v l="$load" -v r="$reps" 'BEGIN {
    printf "validate_jobs: eager-straggler --jobs 1 %.2f s, --jobs 2 %.2f s (best of %d), speed-up %.2fx, outputs byte-identical (goal >= 1.6x on two idle cores; %d cores online, load %s)\n", a, b, r, a / b, c, l }'
