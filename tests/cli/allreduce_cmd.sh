# allreduce_cmd.sh: `tpsim allreduce` prints what each collective model predicts per size,
# checked against the formulas evaluated here from the calibration files' own numbers, and
# the measured times of an nccl-tests log with --log.
source tests/cli/lib.sh
LOG=tests/data/h100-8gpu-ring-all_reduce_perf.out

# --- nccl-fit against the log: rows are the log's sizes, us = lambda + 2(k-1)/k b/beta
expect_ok "nccl-fit vs log" "$TPSIM" allreduce --tp 8 --model nccl-fit --log "$LOG" --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "nccl-fit rows, measured, error, MAPE" "$TMP/pyq-out$((PYQ_N + 1))" "$LOG" models/allreduce/h100-sxm-tp8.yaml <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
meas = {int(l.split()[0]): float(l.split()[5]) for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")}
y = open(sys.argv[3]).read()
lam = float(re.search(r"^lambda_us: ([0-9.]+)", y, re.M).group(1))
beta = float(re.search(r"^beta_gbps: ([0-9.]+)", y, re.M).group(1))
assert [r["bytes"] for r in d["rows"]] == sorted(meas), "rows are the log's sizes"
ape = []
for r in d["rows"]:
    want = lam + 2 * 7 / 8 * r["bytes"] / (beta * 1e3)
    assert abs(r["us"] - want) < 1e-6 * want, (r, want)
    assert r["measured_us"] == meas[int(r["bytes"])], r
    assert abs(r["error_pct"] - 100 * (want - r["measured_us"]) / r["measured_us"]) < 1e-6, r
    assert r["priced_by"] == "nccl-fit" and r["algo"] == "ring-fit" and r["proto"] == "-", r
    ape.append(abs(want - r["measured_us"]) / r["measured_us"])
assert abs(d["mape_pct"] - 100 * sum(ape) / len(ape)) < 1e-6, d["mape_pct"]
print(f"  nccl-fit vs the 8xH100 log: MAPE {d['mape_pct']:.1f}% over {len(ape)} sizes")
PY

# --- vllm-custom: one-/two-stage by vLLM's thresholds, NCCL from the 8 MiB max size
expect_ok "vllm-custom sizes" "$TPSIM" allreduce --tp 4 --sizes 16K..16M --model vllm-custom --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "vllm-custom by hand" "$TMP/pyq-out$((PYQ_N + 1))" models/allreduce/h100-sxm-tp4.yaml <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1])); y = open(sys.argv[2]).read()
one = re.search(r"one_stage: \{latency_us: ([0-9.]+), gbps: ([0-9.]+)\}", y).groups()
two = re.search(r"two_stage: \{latency_us: ([0-9.]+), gbps: ([0-9.]+)\}", y).groups()
lam = float(re.search(r"^lambda_us: ([0-9.]+)", y, re.M).group(1))
beta = float(re.search(r"^beta_gbps: ([0-9.]+)", y, re.M).group(1))
assert [r["bytes"] for r in d["rows"]] == [16384 * 2 ** i for i in range(11)]
for r in d["rows"]:
    b = r["bytes"]
    if b >= 8 * 2 ** 20:  # NCCL, by NCCL's own model now that the calibration has a tuner block
        assert r["algo"] == "Ring" and r["copy_in"] is False, r
        continue
    elif b < 512 * 1024:
        algo, want = "one-stage", float(one[0]) + b / (float(one[1]) * 1e3)
    else:
        algo, want = "two-stage", float(two[0]) + b / (float(two[1]) * 1e3)
    assert r["algo"] == algo and abs(r["us"] - want) < 1e-6 * want, (r, algo, want)
    assert r["copy_in"], r
    assert "measured_us" not in r
PY

# --- auto on Hopper TP-8 (vLLM's defaults, docs/sources.md#vllm-ar-dispatch): its custom
# all-reduce below 256 KiB (CUSTOM_ALL_REDUCE_MAX_SIZES), torch symm-mem (multimem) from 256 KiB
# up to 64 MiB inclusive (SYMM_MEM_ALL_REDUCE_MAX_SIZES), NCCL (here the tuner) above. The
# symm-mem time is the file's line, read here with python: latency + b / gbps.
expect_ok "auto tp8" "$TPSIM" allreduce --tp 8 --sizes 128K,256K,64M,128M --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "auto: custom, symm-mem, NCCL at TP-8" "$TMP/pyq-out$((PYQ_N + 1))" models/allreduce/h100-sxm-tp8.yaml <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1])); r = d["rows"]
m = re.search(r"symm_mem: \{latency_us: ([0-9.]+), gbps: ([0-9.]+)\}", open(sys.argv[2]).read())
lat, gbps = float(m.group(1)), float(m.group(2))
assert (r[0]["priced_by"], r[0]["algo"]) == ("vllm-custom", "one-stage"), r[0]
for row, b in ((r[1], 262144), (r[2], 64 << 20)):
    assert row["algo"] == "symm-mem-multimem" and not row["copy_in"], row
    assert abs(row["us"] - (lat + b / (gbps * 1e3))) < 1e-6 * row["us"], row
assert r[3]["priced_by"] == "nccl-tuner" and r[3]["algo"] == "Ring" and r[3]["proto"] in ("LL", "LL128", "Simple"), r[3]
ed = float(re.search(r"\n  eager_dispatch_us: ([0-9.]+)", open(sys.argv[2]).read()).group(1))
assert d["eager_dispatch_us"] == ed, d["eager_dispatch_us"]

PY
# eager dispatch is host work: shown, and the GPU time is the line alone in both modes
expect_ok "auto tp8 eager text" "$TPSIM" allreduce --tp 8 --sizes 256K
ED=$(sed -n 's/^  eager_dispatch_us: //p' models/allreduce/h100-sxm-tp8.yaml)
SED=$(sed -n 's/^  symm_mem_eager_dispatch_us: //p' models/allreduce/h100-sxm-tp8.yaml)
check "eager dispatch shown" has "$TMP/out" "(host, not GPU time): custom $ED us, symm-mem $SED us"
# 9.455 + 262144 B / 205.12 GB/s = 10.733 us, the line alone (by hand from the file)
check "not in the GPU time" match "$TMP/out" "256K +262144 +vllm-custom symm-mem-multimem +- +10.73$"

# --- graphs: nccl-fit uses the calibration's graph lambda (TP-2: 7 us); vllm-custom drops the copy
expect_ok "graphs tp2" "$TPSIM" allreduce --tp 2 --sizes 16K --model nccl-fit --mode graphs --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "graph lambda 7 us" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
want = 7.0 + 2 * 1 / 2 * 16384 / (307.6 * 1e3)
assert abs(r["us"] - want) < 1e-9, (r, want)

PY
expect_ok "text table" "$TPSIM" allreduce --tp 8 --sizes 16K..64K --model nccl-tuner --log "$LOG"
check "text has algo, proto, measured and MAPE" bash -c "grep -Eq '^ +16K +16384 +nccl-tuner +Ring +LL +[0-9.]+ +36.61 +[-+][0-9.]+%' '$TMP/out' && grep -q '^MAPE .* over 3 measured sizes' '$TMP/out'"

# --- refusals: one line, status 2
expect_fail2 "no --tp" "--tp K is required" "$TPSIM" allreduce --sizes 16K
expect_fail2 "no sizes" "give --sizes" "$TPSIM" allreduce --tp 4
expect_fail2 "bad model" "--model: 'nccl', expected nccl-fit" "$TPSIM" allreduce --tp 4 --sizes 16K --model nccl
expect_fail2 "bad range" "--sizes: '1M..16K', expected A..B" "$TPSIM" allreduce --tp 4 --sizes 1M..16K
expect_fail2 "bad size" "--sizes" "$TPSIM" allreduce --tp 4 --sizes 16Q
expect_fail2 "calibration for another k" "a calibration for tp 4, expected one for --tp 8" \
    "$TPSIM" allreduce --tp 8 --sizes 16K --calib models/allreduce/h100-sxm-tp4.yaml
sed '/^# NCCL.s own cost model/,$d' models/allreduce/h100-sxm-tp4.yaml >"$TMP/notuner.yaml"
expect_fail2 "tuner without a tuner block" "no tuner block" "$TPSIM" allreduce --tp 4 --sizes 16K --model nccl-tuner --calib "$TMP/notuner.yaml"
expect_fail2 "log of another k" "mixed k" "$TPSIM" allreduce --tp 4 --log "$LOG"
expect_fail2 "strict log" "collective test 'all_gather_perf'" "$TPSIM" allreduce --tp 8 --log tests/data/arfit-bad-all-gather.out
cat >"$TMP/tp3.yaml" <<'Y'
kind: allreduce-calibration
hardware: H100 SXM
tp: 3
fit: linear
lambda_us: 30
beta_gbps: 300
source: {how: "test fixture", where: "tests/cli/allreduce_cmd.sh"}
Y
expect_fail2 "vllm-custom at tp 3" "runs at tp 2, 4, 6 or 8, not 3" \
    "$TPSIM" allreduce --tp 3 --sizes 16K --model vllm-custom --calib "$TMP/tp3.yaml"
expect_ok "auto at tp 3 is NCCL" "$TPSIM" allreduce --tp 3 --sizes 16K --calib "$TMP/tp3.yaml" --format json &&
check "auto tp3 priced by nccl-fit" has "$TMP/out" '"priced_by": "nccl-fit"'

# --- the calibration blocks are checked like every YAML input
base() { printf 'kind: allreduce-calibration\nhardware: H100 SXM\ntp: 8\nfit: linear\nlambda_us: 30\nbeta_gbps: 300\nsource: {how: t, where: t}\n'; }
{ base; printf 'tuner: {nccl_version: "2.99.0", algorithms: [ring], channels: 8, bw_per_channel_gbps: 20, launch_us: 1, source: t}\n'; } >"$TMP/t1.yaml"
expect_fail2 "tuner version" "t1.yaml:8:23: tuner.nccl_version: '2.99.0' is not in the tuner table" \
    "$TPSIM" allreduce --tp 8 --sizes 16K --calib "$TMP/t1.yaml"
{ base; printf 'tuner: {nccl_version: "2.27.3", algorithms: [ring, nvls], channels: 8, bw_per_channel_gbps: 20, launch_us: 1, source: t}\n'; } >"$TMP/t2.yaml"
expect_fail2 "tuner nvls bandwidth" "t2.yaml:8:.*nvls needs nvls_busbw_gbps" \
    "$TPSIM" allreduce --tp 8 --sizes 16K --calib "$TMP/t2.yaml"
{ base; printf 'tuner: {nccl_version: "2.27.3", algorithms: [ring], channels: 8.5, bw_per_channel_gbps: 20, launch_us: 1, source: t}\n'; } >"$TMP/t3.yaml"
expect_fail2 "tuner channels whole" "t3.yaml:8:.*8.5, expected a whole number of channels" \
    "$TPSIM" allreduce --tp 8 --sizes 16K --calib "$TMP/t3.yaml"
{ base; printf 'custom: {vllm: x, source: t}\n'; } >"$TMP/c1.yaml"
expect_fail2 "custom without stages" "c1.yaml:8:.*expected one_stage, two_stage and/or symm_mem" \
    "$TPSIM" allreduce --tp 8 --sizes 16K --calib "$TMP/c1.yaml"
{ base; printf 'graph: {lambda_us: 5}\n'; } >"$TMP/g1.yaml"
expect_fail2 "graph block needs its source" "g1.yaml:8:.*source" \
    "$TPSIM" allreduce --tp 8 --sizes 16K --calib "$TMP/g1.yaml"

# --log without --model judges the log against NCCL (it measured NCCL, not vLLM's custom
# all-reduce): the tuner's model where the calibration has its data, the same report as
# --model nccl-tuner; auto must be asked for
expect_ok "log, default model" "$TPSIM" allreduce --tp 8 --log "$LOG" --format json
cp "$TMP/out" "$TMP/log-default"
expect_ok "log, nccl-tuner" "$TPSIM" allreduce --tp 8 --log "$LOG" --model nccl-tuner --format json
check "log: NCCL's model by default" cmp -s "$TMP/log-default" "$TMP/out"
expect_ok "log, auto asked for" "$TPSIM" allreduce --tp 8 --log "$LOG" --model auto --format json
check "log: auto only when asked" has "$TMP/out" '"collective_model": "auto"'
expect_ok "sizes, default model" "$TPSIM" allreduce --tp 8 --sizes 1K..4K --format json
check "no log: auto by default" has "$TMP/out" '"collective_model": "auto"'
finish
