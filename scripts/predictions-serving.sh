#!/usr/bin/env bash
# scripts/predictions-serving.sh TPSIM OUT [EVERY]: the serving predictions (make predictions),
# one row per cell of docs/serving-cells.csv (NVIDIA's measured vLLM serving runs, whose TTFT
# and TPOT are held back), written by `tpsim serve` from the bundled scenarios as they stand,
# before any of those measurements was seen. EVERY N (for the test): every Nth cell only.
# Per cell: scenarios/serve-h100.yaml or serve-h200.yaml by GPU; Llama-3.1-70B is the bundled
# model file, Qwen3-32B its Hugging Face config (models/hf/Qwen3-32B.json); fp8 = FP8 weights
# with FP8 math (vLLM's per-tensor fp8), the KV cache and all-reduces in bf16; a closed loop of
# `concurrency` clients, 10 requests per client (ASSUMED: the source does not say how many
# prompts each run sent), isl/osl fixed; vLLM's default server settings for an H100/H200
# (docs/serve.md#defaults). Interval: tpsim serve --interval, every kernel class's time at
# (1 -/+ its held-out error): the GPU calibration's error only; the host model's is not in it.
# A cell tpsim refuses (the model and its KV cache do not fit) is a row with the reason.
# Deterministic (constant costs, fixed seed): `make predictions` rewrites OUT byte for byte.
set -euo pipefail
tpsim=${1:?usage: scripts/predictions-serving.sh TPSIM OUT [EVERY]}
out=${2:?usage: scripts/predictions-serving.sh TPSIM OUT [EVERY]}
every=${3:-1}
registered=2026-12-03
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
  echo "model,precision,gpu,vllm_version,tp,isl,osl,concurrency,registered,scenario,requests,mean_ttft_ms,mean_ttft_lo_ms,mean_ttft_hi_ms,mean_tpot_ms,mean_tpot_lo_ms,mean_tpot_hi_ms,preemptions,status"
  n=0
  grep -v '^#' docs/serving-cells.csv | tail -n +2 | while IFS=, read -r model prec gpu ver tp isl osl conc; do
    n=$((n + 1))
    [ $(((n - 1) % every)) -eq 0 ] || continue
    case $gpu in h100_sxm) scn=serve-h100 ;; h200_sxm) scn=serve-h200 ;; *) echo "unknown gpu $gpu" >&2; exit 2 ;; esac
    args=()
    case $model in
      meta-llama/Llama-3.1-70B) ;;
      Qwen/Qwen3-32B) args+=(--model Qwen3-32B) ;;
      *) echo "unknown model $model" >&2; exit 2 ;;
    esac
    case $prec in bf16) ;; fp8) args+=(--set precision.weights=fp8) ;; *) echo "unknown precision $prec" >&2; exit 2 ;; esac
    row="$model,$prec,$gpu,$ver,$tp,$isl,$osl,$conc,$registered,$scn"
    if "$tpsim" serve "$scn" "${args[@]}" --tp "$tp" --isl "$isl" --osl "$osl" \
         --concurrency "$conc" --interval --quiet --format json >"$tmp" 2>"$tmp.err"; then
      /usr/bin/python3 - "$tmp" "$row" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
f = lambda k: "%.3f" % j[k]
print(",".join([sys.argv[2], str(j["requests"]), f("mean_ttft_ms"), f("mean_ttft_lo_ms"),
                f("mean_ttft_hi_ms"), f("mean_tpot_ms"), f("mean_tpot_lo_ms"),
                f("mean_tpot_hi_ms"), str(j["preemptions"]), "predicted"]))
PY
    else
      reason=$(sed 's/^tpsim: //; s/"/'"'"'/g' "$tmp.err" | head -1)
      echo "$row,,,,,,,,,\"refused: $reason\""
    fi
    rm -f "$tmp.err"
  done
} >"$out.part"
mv "$out.part" "$out"
