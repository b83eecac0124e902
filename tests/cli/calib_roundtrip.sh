# calib_roundtrip.sh: a calibration written by `tpsim fit-allreduce -o` drives `tpsim run`
# unchanged, linear and piecewise, and the run charges exactly the fitted cost per call.
source tests/cli/lib.sh
LOG=tests/data/h100-8gpu-ring-all_reduce_perf.out
SCN=scenarios/eager-host-dispatch.yaml

for fit in linear piecewise; do
    expect_ok "fit $fit" "$TPSIM" fit-allreduce $LOG --fit $fit --hardware "H100 SXM" -o "$TMP/tp8-$fit.yaml" --format json
    cp "$TMP/out" "$TMP/fit-$fit.json"
    expect_ok "run with $fit calibration" "$TPSIM" run $SCN --tp 8 --calib "$TMP/tp8-$fit.yaml" --format json \
        --set collective.allreduce=nccl-fit &&
    cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
    pyq "$fit: per-call all-reduce cost is the fitted model's" "$TMP/fit-$fit.json" "$TMP/pyq-out$((PYQ_N + 1))" "$fit" <<'PY'
import json, sys
f, r, kind = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
k, b = 8, 8192 * 2            # 70B hidden x BF16 at batch 1
def t(lam, beta): return lam + 2 * (k - 1) / k * b / (beta * 1e9) * 1e6
if kind == "linear":
    ar = t(f["lambda_us"], f["beta_gbps"])
else:
    pieces = f["piecewise"]["pieces"]
    p = [q for q in pieces if q["from_bytes"] <= b][-1]
    ar = t(p["lambda_us"], p["beta_gbps"])
assert r["allreduces_per_step"] == 161 and r["tp"] == 8
assert abs(r["allreduce_call"]["us"] - ar) < 1e-6 * ar, (r["allreduce_call"]["us"], ar)
print(f"  {kind}: {r['allreduce_call']['us']:.3f} us per collective at TP-8, "
      f"step {r['step_ms']['mean']:.3f} ms")
PY
done
# the bundled TP-8 calibration is that same fit
pyq "bundled tp8 calibration = fit of the shipped log" "$TMP/fit-linear.json" models/allreduce/h100-sxm-tp8.yaml <<'PY'
import json, re, sys
f, text = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
lam = float(re.search(r"^lambda_us: (\S+)", text, re.M).group(1))
beta = float(re.search(r"^beta_gbps: (\S+)", text, re.M).group(1))
assert abs(lam - f["lambda_us"]) < 1e-3 and abs(beta - f["beta_gbps"]) < 1e-2, (lam, beta, f)
PY

# fixes found by review: each refused with one line and status 2
expect_fail2 "slow rank outside tp" '^tpsim: --set:1:21: host.slow_rank.rank: 5 is not a rank at tp 2' \
    "$TPSIM" run scenarios/paper-additive.yaml --tp 2 --set host.slow_rank.rank=5
expect_fail2 "--mode does not shift --set numbers" '^tpsim: --set:1:20: gpu.hbm_efficiency' \
    "$TPSIM" run scenarios/paper-additive.yaml --mode graphs --set gpu.hbm_efficiency=2
expect_fail2 "trace capped at 100 steps" 'at most 100 with a trace' \
    "$TPSIM" run scenarios/paper-additive.yaml --steps 200 --trace "$TMP/big.json"
check "no capped trace file" test ! -e "$TMP/big.json"
expect_fail2 "hex float refused" "'0x1p-1' is not a number" \
    "$TPSIM" run scenarios/paper-additive.yaml --set gpu.hbm_efficiency=0x1p-1
expect_fail2 "an offset that makes the step negative" 'offset_ms -100 makes the step -6[0-9.]+ ms' \
    "$TPSIM" run scenarios/paper-additive.yaml --set offset_ms=-100
expect_fail2 "a uniform too wide to stay positive" "host.launch.cv: 0.9 is too wide for a uniform" \
    "$TPSIM" run scenarios/paper-additive.yaml --set host.launch.dist=uniform --set host.launch.mean_us=5 --set host.launch.cv=0.9
expect_fail2 "a normal too wide for its clamp" "host.step.cv: 0.5 is too wide for a normal" \
    "$TPSIM" run scenarios/paper-additive.yaml --set host.step.dist=normal --set host.step.mean_us=5 --set host.step.cv=0.5
# jitter survives a mean that run.c adds to (driver per peer): p99 > p50 with mean_us 0
expect_ok "driver jitter with a zero base" "$TPSIM" run scenarios/eager-broadcast.yaml --tp 4 --steps 50 \
    --set host.driver.dist=lognormal --set host.driver.mean_us=0 --set host.driver.cv=1 --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "driver jitter kept when the base mean is 0" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["step_ms"]
assert s["p99"] > s["p50"] * 1.05, s
PY
expect_fail2 "seed with a hidden sign" "--seed: ' -1' is not a non-negative integer" \
    "$TPSIM" run scenarios/paper-additive.yaml --seed " -1"
expect_fail2 "tp written with a plus" "--tp: '\+2' is not an integer" "$TPSIM" run scenarios/paper-additive.yaml --tp +2
expect_fail2 "YAML integer with a plus" "defaults.tp: '\+2' is not an integer" \
    "$TPSIM" run scenarios/paper-additive.yaml --set defaults.tp=+2
expect_fail2 "hex size" "'0x10K' is not a size" "$TPSIM" fit-allreduce $LOG --min 0x10K
expect_ok "slow rank inside tp" "$TPSIM" run scenarios/paper-additive.yaml --tp 2 --set host.slow_rank.rank=1 --set host.slow_rank.extra_step_us=500 --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "slow rank adds its 0.5 ms to every rank's step" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d["step_ms"]["mean"] - (27.745 + 0.5)) < 0.01 and abs(d["breakdown_ms"]["wait_peers"] - 0.25) < 1e-6, d
PY

finish
