# validate_intervals.sh: `tpsim validate` prediction intervals against their closed form, the
# sensitivity of each assumption against `tpsim run` at the moved value (finite differences
# computed apart), and --scan's objective files.
source tests/cli/lib.sh
EHD=scenarios/eager-host-dispatch.yaml

# --- one free parameter entering additively (R0): the 95% profile moves every prediction by
# +-1.96 cv m_cal, and a new measurement adds 1.96 cv p in quadrature
for cv in 1 2.5; do
    expect_ok "paper-additive --meas-cv $cv" "$TPSIM" validate scenarios/paper-additive.yaml --meas-cv $cv --format json &&
    cp "$TMP/out" "$TMP/cv$cv.json" &&
    pyq "paper-additive intervals = closed form at cv $cv%" "$TMP/cv$cv.json" "$cv" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1])); cv = float(sys.argv[2]) / 100
assert abs(d["meas_cv_pct"] - 100 * cv) < 1e-12
z = 1.959963984540054
m_cal = [c for c in d["cells"] if c["role"] == "calibration"][0]["measured_ms"]
delta = z * cv * m_cal
inside = 0
for c in d["cells"]:
    p = c["predicted_ms"]
    assert abs(c["fit_lo_ms"] - (p - delta)) < 2e-3 * delta and abs(c["fit_hi_ms"] - (p + delta)) < 2e-3 * delta, (c, delta)
    half = math.hypot(delta, z * cv * p)
    assert abs(c["pred_lo_ms"] - (p - half)) < 2e-3 * half and abs(c["pred_hi_ms"] - (p + half)) < 2e-3 * half, c
    if c["role"] == "held-out":
        inside += c["pred_lo_ms"] <= c["measured_ms"] <= c["pred_hi_ms"]
assert d["coverage"]["n_inside"] == inside and d["coverage"]["n_heldout"] == 7, d["coverage"]
PY
done

# --- sensitivity: each assumed number moved by -20% / +20%, fitted values held, equals a
# `tpsim run` with those values set
expect_ok "eager-host-dispatch sensitivity" "$TPSIM" validate $EHD --transfer 2:4 --format json &&
cp "$TMP/out" "$TMP/sens.json" &&
pyq "sensitivity lists every assumption with every held-out cell" "$TMP/sens.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = {s["key"] for s in d["sensitivity"]}
# with kernels: the GPU efficiencies and the hardware file's kernel_fixed_us price nothing;
# the host-phase file's assumed phases are the scenario's assumptions too
import re
phases = {"host." + k for k in re.findall(r"^  - \{key: (phases\.[a-z_.]+), why:",
                                           open("models/host/vllm.yaml").read(), re.M)}
assert len(phases) == 3, phases
assert keys == {"gpu.launch_latency_us", "host.queue_depth"} | phases, keys
for s in d["sensitivity"]:
    assert [(c["tp"], c["batch"]) for c in s["cells"]] == [(4, 1), (4, 2), (4, 4), (4, 8)], s
PY
python3 - "$TMP/sens.json" >"$TMP/fd.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["fitted"]
fixed = f"--set host.launch.mean_us={f['host.launch.mean_us']!r} --set host.collective.mean_us={f['host.launch.mean_us']!r}"
for s in d["sensitivity"]:
    if s["key"] not in ("gpu.launch_latency_us", "host.phases.schedule.mean_us"):
        continue
    for c in s["cells"]:
        for frac, got in ((0.8, c["minus_ms"]), (1.2, c["plus_ms"])):
            print(f"{fixed} --set {s['key']}={s['value'] * frac!r} --tp {c['tp']} --batch {c['batch']}|{got!r}")
PY
n_fd=0
while IFS='|' read -r args want; do
    n_fd=$((n_fd + 1))
    # shellcheck disable=SC2086
    "$TPSIM" run $EHD $args --format json >"$TMP/fd$n_fd.json"
    pyq "sensitivity = tpsim run ($args)" "$TMP/fd$n_fd.json" "$want" <<'PY'
import json, sys
got, want = json.load(open(sys.argv[1]))["step_ms"]["mean"], float(sys.argv[2])
assert abs(got / want - 1) < 1e-6, (got, want)
PY
done <"$TMP/fd.txt"
check "16 finite differences checked (2 keys x 4 cells x 2 sides)" test "$n_fd" -eq 16
"$TPSIM" validate $EHD --transfer 2:4 >"$TMP/out"
check "text prints the assumptions and their moves" match "$TMP/out" "assumed  gpu.launch_latency_us .*= 4"
check "text: no hardware kernel_fixed_us under kernels:" bash -c "! grep -q kernel_fixed_us '$TMP/out'"
check "text states meas-cv" has "$TMP/out" "intervals from a 1% measurement error per cell (--meas-cv) and the model error"
"$TPSIM" validate scenarios/paper-additive.yaml >"$TMP/out"
check "text: an exact fit's interval is not called 95%" has "$TMP/out" "model error is not estimable (1 calibration cell, 1 free parameter), so the intervals are not 95% ones"

# --- model error: eager-host-dispatch within fits 1 parameter on 4 cells; the scatter of
# those cells about the fit, sqrt(sum((pred/meas - 1)^2) / 3), computed here from the cells,
# sets the scale where it exceeds the declared 1%, with Student's t(3) = 3.182 (a t table);
# each interval is the parameters' range widened in quadrature by q * scale * prediction
expect_ok "within, model error" "$TPSIM" validate $EHD --format json &&
cp "$TMP/out" "$TMP/within.json" &&
pyq "model error from the calibration cells' misfit, folded into pred_lo/pred_hi" "$TMP/within.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
cal = [c for c in d["cells"] if c["role"] == "calibration"]
assert len(cal) == 4, cal
rms = math.sqrt(sum((c["predicted_ms"] / c["measured_ms"] - 1) ** 2 for c in cal) / (4 - 1))
cv = max(0.01, rms)
q = 3.182 if rms > 0.01 else 1.959963984540054
assert rms > 0.01, rms   # the sourced GPU side's TP-2 overshoot far exceeds the declared 1%
sc = d["folds"][0]["error_scale"]
assert abs(sc["cv_pct"] - 100 * cv) < 1e-6 and sc["dof"] == 3 and sc["interval"] == "95%", sc
for c in d["cells"]:
    p, n = c["predicted_ms"], q * cv * c["predicted_ms"]
    lo = p - math.sqrt((p - c["fit_lo_ms"]) ** 2 + n * n)
    hi = p + math.sqrt((c["fit_hi_ms"] - p) ** 2 + n * n)
    assert abs(c["pred_lo_ms"] - lo) < 1e-6 and abs(c["pred_hi_ms"] - hi) < 1e-6, (c, lo, hi)
inside = sum(c["pred_lo_ms"] <= c["measured_ms"] <= c["pred_hi_ms"] for c in d["cells"] if c["role"] == "held-out")
assert d["coverage"]["n_inside"] == inside and d["coverage"]["n_heldout"] == 4, d["coverage"]
print(f"  within: misfit {100 * rms:.2f}% per cell over 3 dof; held-out inside {inside} of 4")
PY

# --- --scan: one parameter, the objective of R0 in closed form ((base + R0) / m - 1)^2
expect_ok "scan paper-additive" "$TPSIM" validate scenarios/paper-additive.yaml --scan "$TMP/scan1" --format json &&
cp "$TMP/out" "$TMP/scan1.json" &&
check "scan files whole" test -s "$TMP/scan1/objective.csv" -a -s "$TMP/scan1/objective.png" -a -s "$TMP/scan1/objective.svg" -a -s "$TMP/scan1/objective.gp"
pyq "1-D scan objective = closed form" "$TMP/scan1.json" "$TMP/scan1/objective.csv" <<'PY'
import csv, json, sys
d = json.load(open(sys.argv[1]))
cal = [c for c in d["cells"] if c["role"] == "calibration"][0]
base = cal["predicted_ms"] - d["fitted"]["offset_ms"]
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 101 and list(rows[0]) == ["offset_ms", "objective", "delta_chi2"], rows[0]
for r in rows:
    o = float(r["offset_ms"])
    want = ((base + o) / cal["measured_ms"] - 1) ** 2
    assert abs(float(r["objective"]) - want) <= 1e-7 * want + 1e-15, (r, want)  # JSON and CSV carry 10 digits
best = min(rows, key=lambda r: float(r["objective"]))
assert abs(float(best["offset_ms"]) - d["fitted"]["offset_ms"]) <= 0.5, best
PY

# --- --scan: two parameters on a cheap synthetic scenario (8B, no host cost), contour map
cat >"$TMP/syn.yaml" <<YAML
name: synthetic
model: $PWD/models/llama-3.1-8b.yaml
hardware: $PWD/models/hw/h100-sxm.yaml
allreduce: [$PWD/models/allreduce/h100-sxm-tp2.yaml, $PWD/models/allreduce/h100-sxm-tp4.yaml]
defaults: {tp: 2, batch: 1, ctx: 2048, steps: 1, warmup: 0, seed: 1}
gpu: {hbm_efficiency: 0.8, flops_efficiency: 0.7, kernel_fixed_us: 0, launch_latency_us: 0}
host: {launch: {dist: constant, mean_us: 0}, collective: {dist: constant, mean_us: 0}}
offset_ms: 1.5
fit:
  params: [{key: gpu.hbm_efficiency, min: 0.5, max: 0.98}, {key: offset_ms, min: -5, max: 5}]
  cells: [{tp: 2, batch: 1, ctx: 2048}, {tp: 4, batch: 8, ctx: 2048}]
assumed: [{key: gpu.flops_efficiency, why: t}, {key: gpu.kernel_fixed_us, why: t},
          {key: gpu.launch_latency_us, why: t}, {key: host.launch.mean_us, why: t},
          {key: host.collective.mean_us, why: t}]
YAML
printf 'config,tp,batch,ctx,measured_ms\nS TP-2,2,1,2048,6.0\nS TP-2,2,4,2048,6.3\nS TP-4,4,1,2048,4.6\nS TP-4,4,8,2048,4.9\n' >"$TMP/syn.csv"
expect_ok "scan 2-D" "$TPSIM" validate "$TMP/syn.yaml" --grid "$TMP/syn.csv" --scan "$TMP/scan2" --format json &&
cp "$TMP/out" "$TMP/scan2.json" &&
pyq "2-D scan: 25 x 25 points, min no better than the fit" "$TMP/scan2.json" "$TMP/scan2/objective.csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
lines = [l.strip() for l in open(sys.argv[2])]
assert lines[0] == "gpu.hbm_efficiency,offset_ms,objective,delta_chi2", lines[0]
rows = [l.split(",") for l in lines[1:] if l]
assert len(rows) == 625 and lines.count("") == 24, (len(rows), lines.count(""))
assert min(float(r[2]) for r in rows) >= d["folds"][0]["objective"] * (1 - 1e-9)
PY
check "2-D scan figure" test -s "$TMP/scan2/objective.png" -a -s "$TMP/scan2/objective.svg"
# --- --scan with several folds is one set: a gnuplot failing on the second leaves nothing
mkdir -p "$TMP/badbin"
printf '#!/bin/sh\ncase "$1" in *fold2*) echo "bad fold" >&2; exit 1;; esac\nexec %s "$@"\n' \
    "$(command -v gnuplot)" >"$TMP/badbin/gnuplot"
chmod +x "$TMP/badbin/gnuplot"
PATH="$TMP/badbin:$PATH" "$TPSIM" validate scenarios/paper-additive.yaml --loo --scan "$TMP/folds/scan" \
    >/dev/null 2>"$TMP/err"
check "scan, second fold fails: exit 2" test $? -eq 2
check "scan, second fold fails: its message" has "$TMP/err" "bad fold"
check "scan, second fold fails: no folder, no first fold" test ! -e "$TMP/folds"
PATH="$TMP/badbin:$PATH" "$TPSIM" validate scenarios/paper-additive.yaml --loo --plot "$TMP/both/figs" \
    --scan "$TMP/folds/scan" >/dev/null 2>"$TMP/err"
check "--plot with --scan, a scan figure fails: exit 2" test $? -eq 2
check "--plot with --scan, a scan figure fails: no --plot figures either" test ! -e "$TMP/both"
expect_ok "scan two folds" "$TPSIM" validate scenarios/paper-additive.yaml --loo --scan "$TMP/folds/scan" --quiet
check "scan two folds: both figures" test -s "$TMP/folds/scan/objective-fold1.png" -a -s "$TMP/folds/scan/objective-fold2.svg"
expect_fail2 "scan without parameters" "--scan: .*cuda-graphs.yaml has no free parameters" \
    "$TPSIM" validate scenarios/cuda-graphs.yaml --scan "$TMP/scan3"
check "no scan files" test ! -e "$TMP/scan3/objective.csv"

finish
