#!/usr/bin/env bash
# kernels_scenario.sh: a scenario naming a kernel calibration (kernels:): every GPU op from
# it, nothing declared about efficiency, other hardware's refused unless borrowed.
. tests/cli/lib.sh
SK=scenarios/eager-host-dispatch.yaml
GRID=validate/h100-ctx2048.csv

# the hypothesis and graph scenarios take their GPU side from the bundled H100 calibration and
# fit host-side parameters only; paper-additive keeps the study's own compute model
# gpu_knob FILE: a line of FILE that is not a comment names a GPU efficiency
# (grep -v '^ *#' FILE | grep -Eq 'hbm_efficiency|kernel_fixed_us|flops_efficiency')
gpu_knob() {
    local l
    while IFS= read -r l; do
        [[ $l =~ ^\ *# ]] && continue
        [[ $l =~ hbm_efficiency|kernel_fixed_us|flops_efficiency ]] && return 0
    done <"$1"
    return 1
}
for s in eager-host-dispatch eager-straggler eager-broadcast cuda-graphs; do
    check "$s names the H100 kernel calibration" has_line "scenarios/$s.yaml" 'kernels: ../models/kernels/h100-sxm.yaml'
    check "$s fits and declares no GPU efficiency" not gpu_knob "scenarios/$s.yaml"
done
check "paper-additive keeps its own compute model" not match scenarios/paper-additive.yaml '^kernels:'

# compute_of VAR: VAR = the first "compute" number of $TMP/out
# (grep -o '"compute": *[0-9.e+-]*' | head -1 | tr -d ' ' | cut -d: -f2)
compute_of() {
    local c
    c=$(<"$TMP/out")
    if [[ $c =~ \"compute\":\ *([0-9.e+-]*) ]]; then printf -v "$1" %s "${BASH_REMATCH[1]}"; else printf -v "$1" %s ""; fi
}
expect_ok "run with kernels" "$TPSIM" run "$SK" --tp 4 --format json
compute_of k
sed -e '/^kernels: /d' -e 's/^  launch_latency_us: 4.0 .*/&\n  hbm_efficiency: 0.8941\n  flops_efficiency: 0.7/' "$SK" > "$TMP/nokernels.yaml"
expect_ok "run without" "$TPSIM" run "$TMP/nokernels.yaml" --tp 4 --format json
compute_of a
check "kernels change the GPU compute ($k vs $a)" test "$k" != "$a"
# the undeclared-number check passes with no gpu efficiency declared
expect_ok "validate" "$TPSIM" validate "$SK" --grid "$GRID"
check "no efficiency declared" not has "$TMP/out" hbm_efficiency
# copies of the bundled calibration keep its measured FP8 GEMM grid beside them (grid: is read
# from the calibration's folder)
cp models/kernels/h100-sxm.gemm_fp8.csv "$TMP/"
sed 's/^hardware: H100 SXM/hardware: A100 SXM4 80GB/' models/kernels/h100-sxm.yaml > "$TMP/a100k.yaml"
sed "s#^kernels: .*#kernels: $TMP/a100k.yaml#" "$SK" > "$TMP/foreign.yaml"
expect_fail2 "foreign kernels refused" 'kernel calibration was measured on A100 SXM4 80GB, the scenario runs on H100 SXM' \
    "$TPSIM" run "$TMP/foreign.yaml" --tp 4
expect_ok "foreign kernels borrowed" "$TPSIM" run "$TMP/foreign.yaml" --tp 4 --allow-foreign-calib
sed -e 's/^  params:$/&\n    - {key: gpu.hbm_efficiency, min: 0.6, max: 0.98}/' \
    -e 's/^  launch_latency_us: 4.0 .*/&\n  hbm_efficiency: 0.9/' "$SK" > "$TMP/dead.yaml"
expect_fail2 "dead gpu knob refused" 'gpu.hbm_efficiency has no effect with kernels:' \
    "$TPSIM" validate "$TMP/dead.yaml" --grid "$GRID"
sed "s#^kernels: .*#kernels: no-such-kernels#" "$SK" > "$TMP/missing.yaml"
expect_fail2 "missing kernels file" 'missing.yaml:[0-9]+:[0-9]+: .*no-such-kernels' "$TPSIM" run "$TMP/missing.yaml"
# the calibration's own error widens the intervals: the same scenario with a calibration
# claiming no error has narrower ones
sed -E 's/(mape_pct|heldout_mape_pct): [0-9.]+/\1: 0/g' models/kernels/h100-sxm.yaml > "$TMP/exact.yaml"
sed "s#^kernels: .*#kernels: $TMP/exact.yaml#" "$SK" > "$TMP/exact-scn.yaml"
expect_ok "validate json" "$TPSIM" validate "$SK" --grid "$GRID" --format json
cp "$TMP/out" "$TMP/real.json"
expect_ok "validate json, exact calibration" "$TPSIM" validate "$TMP/exact-scn.yaml" --grid "$GRID" --format json
cp "$TMP/out" "$TMP/exact.json"
pyq "calibration error widens the intervals" "$TMP/real.json" "$TMP/exact.json" <<'PY'
import json, sys
wr, we = (sum(c["pred_hi_ms"] - c["pred_lo_ms"] for c in json.load(open(f))["cells"]) for f in sys.argv[1:])
assert wr > we + 1, (wr, we)
PY
# more sequences never make the GPU work shorter: the TP-8 graph step was once faster at
# batch 2 than at 1 (the norm's row law counted its weight against every row)
for b in 1 2 3 4; do
    "$TPSIM" run scenarios/cuda-graphs.yaml --tp 8 --batch $b --format json > "$TMP/g$b.json"
done
pyq "TP-8 graph step and compute non-decreasing in batch 1..4" "$TMP"/g[1-4].json <<'PY'
import json, sys
d = [json.load(open(f)) for f in sys.argv[1:]]
for a, b in zip(d, d[1:]):
    assert b["step_ms"]["mean"] >= a["step_ms"]["mean"], (a["step_ms"], b["step_ms"])
    assert b["breakdown_ms"]["compute"] >= a["breakdown_ms"]["compute"], (a["breakdown_ms"], b["breakdown_ms"])
PY
# --set hardware=h200: the scenario's kernels: (h100-sxm, measured on H100) is replaced by the
# bundled calibration measured on H200 (models/kernels/h200-sxm.yaml, hardware: H200 SXM);
# on H100 the scenario's own stays. --allow-foreign-calib: H200 has no all-reduce file here.
expect_ok "h200 picks its own kernels" "$TPSIM" run vllm-graphs --set hardware=h200 --tp 4 \
    --allow-foreign-calib
check "h200: h200-sxm kernels" match "$TMP/out" '^kernels    models/kernels/h200-sxm.yaml: H200 SXM'
expect_ok "h100 keeps the scenario's kernels" "$TPSIM" run vllm-graphs --tp 4
check "h100: h100-sxm kernels" match "$TMP/out" '^kernels    .*models/kernels/h100-sxm.yaml: H100 SXM'
finish
