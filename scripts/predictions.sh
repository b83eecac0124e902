#!/usr/bin/env bash
# scripts/predictions.sh TPSIM OUT: the pre-registered predictions (make predictions), written
# from scenarios/vllm-graphs.yaml as it stands, before any end-to-end benchmark of these cells
# was looked at. Cells: Llama-3.1-70B BF16 under vLLM with CUDA graphs, TP-4, on 4xH100 SXM at
# batch 1 and 16 x context 192..3072, and on 4xH200 at batch 8, context 96; each under the host
# phases serialised (vLLM V0) and overlapped (V1 async scheduling).
# predicted_ms: the scenario as written. Interval: the same cell at the ends of the two ranges
# the sources leave open (both at once, so it is a range, not a confidence level):
#   lo: gpu.hbm_efficiency 0.87 (vidur's H100 GEMM profile at TP-2) and the unmeasured phases
#       (schedule, broadcast) at 0;
#   hi: gpu.hbm_efficiency 0.73 (vidur at TP-8) and schedule + broadcast at the whole bound
#       left by vLLM #6854's ~4 ms host bubble (3.48 ms, 1.74 ms each).
# One token per sequence per decode step, so ms per output token is the step time.
# Deterministic: constant costs, fixed seed; `make predictions` rewrites OUT byte for byte.
set -euo pipefail
tpsim=${1:?usage: scripts/predictions.sh TPSIM OUT}
out=${2:?usage: scripts/predictions.sh TPSIM OUT}
scn=${PRED_SCENARIO:-scenarios/vllm-graphs.yaml}  # PRED_SCENARIO: for the test only
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
lo=(--set gpu.hbm_efficiency=0.87 --set host.phases.schedule.mean_us=0 --set host.phases.broadcast.mean_us=0)
hi=(--set gpu.hbm_efficiency=0.73 --set host.phases.schedule.mean_us=1740 --set host.phases.broadcast.mean_us=1740)
h200=(--set hardware=../models/hw/h200.yaml --set "calibration_from=H100 SXM")
for mode in serialised overlapped; do
    for end in mid lo hi; do
        extra=()
        [ "$end" = lo ] && extra=("${lo[@]}")
        [ "$end" = hi ] && extra=("${hi[@]}")
        "$tpsim" sweep "$scn" --quiet --jobs 1 --tp 4 --batch 1,16 --ctx 192,384,768,1536,3072 \
            --set execution.host_phases=$mode "${extra[@]}" -o "$stage/h100-$mode-$end.csv"
        "$tpsim" sweep "$scn" --quiet --jobs 1 --tp 4 --batch 8 --ctx 96 \
            --set execution.host_phases=$mode "${h200[@]}" "${extra[@]}" -o "$stage/h200-$mode-$end.csv"
    done
done
python3 - "$stage" "$stage/predictions.csv" <<'PY'
import csv, sys
stage, dst = sys.argv[1:]
rows = []
for hw in ("h100", "h200"):
    for mode in ("serialised", "overlapped"):
        tabs = {}
        for end in ("mid", "lo", "hi"):
            with open(f"{stage}/{hw}-{mode}-{end}.csv", newline="") as f:
                tabs[end] = list(csv.DictReader(f))
        for mid, lo, hi in zip(tabs["mid"], tabs["lo"], tabs["hi"]):
            assert (mid["tp"], mid["batch"], mid["ctx"]) == (lo["tp"], lo["batch"], lo["ctx"]) == (hi["tp"], hi["batch"], hi["ctx"])
            assert mid["fits_in_hbm"] == "true", mid
            p, a, b = (float(r["step_ms_mean"]) for r in (mid, lo, hi))
            assert a <= p <= b, (a, p, b)
            settings = ("vLLM CUDA graphs; collective.allreduce auto; host phases " + mode +
                        (" (V0)" if mode == "serialised" else " (V1 async scheduling)"))
            rows.append([mid["scenario"], settings, mid["hardware"], mid["tp"], mid["batch"],
                         mid["ctx"], f"{p:.3f}", f"{a:.3f}", f"{b:.3f}"])
with open(dst, "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["scenario", "engine_settings", "hardware", "tp", "batch", "ctx",
                "predicted_ms_per_token", "interval_lo_ms", "interval_hi_ms"])
    w.writerows(rows)
PY
mv "$stage/predictions.csv" "$out"
