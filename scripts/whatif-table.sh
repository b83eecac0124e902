#!/usr/bin/env bash
# scripts/whatif-table.sh: the what-if table of docs/results.md ("Models, precisions and GPUs";
# make docs writes it there), regenerated.
#   usage: scripts/whatif-table.sh TPSIM      (prints the Markdown table on stdout)
# Each row is one `tpsim run` of an atlas scenario (batch 1 unless said, ctx 2048), eager and
# CUDA-graph mode, with the step's mean in ms, the weights per rank and what priced the GPU ops
# (the kernel calibration, or "roofline"); a row that does not fit in HBM says so. H100 and H200
# run on their own measured calibrations (atlas-h100, atlas-h200: the hypotheses' GPU models);
# A100, L40S and B200 have none, so they run from atlas-a100.yaml, the roofline, and say so.
# L40S runs over PCIe with nccl-fit (vLLM's custom all-reduce needs NVLink or P2P, and the L40S
# files carry no custom block); everything else keeps its scenario's model.
set -euo pipefail
tpsim=${1:?usage: scripts/whatif-table.sh TPSIM}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

# one cell: label, tp, then the run's flags
row() {
    local label=$1 tp=$2; shift 2
    local e g w fits
    e=$("$tpsim" run "$@" --tp "$tp" --mode eager --format json 2>/dev/null || true)
    g=$("$tpsim" run "$@" --tp "$tp" --mode graphs --format json 2>/dev/null || true)
    python3 - "$label" "$tp" "$e" "$g" <<'PY'
import json, sys
label, tp, e, g = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
if not e or not g:
    sys.exit(f"whatif-table: {label} TP-{tp}: tpsim run failed")
e, g = json.loads(e), json.loads(g)
k = e["kernel_calibration"]
gpu = "roofline" if k is None else k.rsplit("/", 1)[-1].removesuffix(".yaml")
if not e["fits_in_hbm"]:
    print(f"| {label} | {tp} | does not fit ({e['weights_gb_per_rank']:.1f} GB a rank) | | | {gpu} |")
else:
    print(f"| {label} | {tp} | {e['step_ms']['mean']:.2f} | {g['step_ms']['mean']:.2f} | "
          f"{e['weights_gb_per_rank']:.1f} | {gpu} |")
PY
}

H=scenarios/atlas-h100.yaml
H200=scenarios/atlas-h200.yaml
R=scenarios/atlas-a100.yaml   # the roofline: GPUs with no measured kernel calibration
L40S=(--set hardware=../models/hw/l40s.yaml --set collective.allreduce=nccl-fit)
echo "| model, setting | TP | eager step (ms) | graphs step (ms) | weights/rank (GB) | GPU ops priced by |"
echo "|---|---|---|---|---|---|"
row "Mixtral-8x7B" 2 $H --model Mixtral-8x7B-v0.1
row "Mixtral-8x7B" 4 $H --model Mixtral-8x7B-v0.1
row "Mixtral-8x7B, batch 8" 4 $H --model Mixtral-8x7B-v0.1 --batch 8
row "Llama-3.1-8B" 1 $H --model llama-3.1-8b
row "Llama-3.1-8B" 2 $H --model llama-3.1-8b
row "Llama-3.1-405B BF16" 8 $H --model llama-3.1-405b
row "Llama-3.1-405B FP8 (W8A8)" 8 $H --model llama-3.1-405b --set precision.weights=fp8
row "Llama-3.1-405B int4" 8 $H --model llama-3.1-405b --set precision.weights=int4
row "Llama-3.1-70B BF16, batch 8" 4 $H --batch 8
row "Llama-3.1-70B FP8 (W8A8), batch 8" 4 $H --batch 8 --set precision.weights=fp8
row "Llama-3.1-70B BF16, H200, batch 8" 4 $H200 --batch 8
row "Llama-3.1-70B FP8 (W8A8), H200, batch 8" 4 $H200 --batch 8 --set precision.weights=fp8
row "DeepSeek-V3 FP8 (MLA, MoE), H200" 8 $H200 --model DeepSeek-V3
row "DeepSeek-V3 FP8, H200, batch 8" 8 $H200 --model DeepSeek-V3 --batch 8
row "Llama-3.1-70B BF16, L40S (PCIe)" 4 $R "${L40S[@]}" --calib models/allreduce/l40s-pcie-tp4.yaml
row "Llama-3.1-70B BF16, L40S (PCIe)" 8 $R "${L40S[@]}" --calib models/allreduce/l40s-pcie-tp8.yaml
row "Mixtral-8x7B, L40S (PCIe)" 4 $R --model Mixtral-8x7B-v0.1 "${L40S[@]}" \
    --calib models/allreduce/l40s-pcie-tp4.yaml
row "Llama-3.1-70B BF16, B200" 1 $R --set hardware=../models/hw/b200.yaml
row "Llama-3.1-70B FP8, B200" 1 $R --set hardware=../models/hw/b200.yaml --set precision.weights=fp8
