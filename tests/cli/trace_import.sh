#!/usr/bin/env bash
# CLI tests of `tpsim trace import`: the shipped traces against counts derived by
# tests/data/trace_expected.py (python3, no tpsim), the hand-made synthetic traces against
# the hand-derived values in tests/data/README.md, and bad traces (one line, status 2).
. tests/cli/lib.sh
D=tests/data

# compare NAME FILE [--step-marker RE]: tpsim's totals and per-step kernels = the python derivation
# (tests/data/trace_expected.py FILE [--step-marker RE], run inside the queued check; tpsim's
# report is kept as $TMP/import-NAME.json)
compare() {
    local name=$1 file=$2; shift 2
    if ! expect_ok "$name import" "$TPSIM" trace import "$file" "$@" --format json; then return; fi
    cp "$TMP/out" "$TMP/import-$name.json"
    pyq "$name: counts match the python derivation" "$TMP/import-$name.json" "$D/trace_expected.py" "$file" "$@" <<'PY'
import contextlib, io, json, runpy, sys
t = json.load(open(sys.argv[1]))
derived = io.StringIO()
sys.argv = sys.argv[2:]  # trace_expected.py FILE [--step-marker RE]
with contextlib.redirect_stdout(derived):
    runpy.run_path(sys.argv[0])
p = json.loads(derived.getvalue())
for k in ("kernels", "memcpys", "collectives", "graph_launches"):
    assert t[k] == p[k], (k, t[k], p[k])
assert len(t["per_step"]) == p["steps"], (len(t["per_step"]), p["steps"])
assert [s["kernels"] for s in t["per_step"]] == p["kernels_per_step"]
if p["cudaLaunchKernel_mean_us"] is not None:
    got = [a["mean_us"] for a in t["launch_apis"] if a["name"] == "cudaLaunchKernel"][0]
    assert abs(got - p["cudaLaunchKernel_mean_us"]) < 1e-3 * max(1, got), (got, p)
PY
}

compare b200 "$D/TraceLens__b200__vllm_tp8_eager_step.json.gz"
compare mi300x-graph "$D/TraceLens__vllm_decode_full_graph_mi300x.json.gz"
compare hta "$D/HTA__nccl_parser_config__nccl_data_a100_2rank.json.gz" --step-marker '^ProfilerStep'
compare nsys "$D/pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite" --step-marker '^saxpy$'

# the literal figures of tests/data/README.md (same derivation, written down once), on the
# reports compare kept (the same commands)
pyq "b200: 768 kernels, 161 copies, 74 collectives, 1 step" "$TMP/import-b200.json" <<'PY'
import json,sys; d=json.load(open(sys.argv[1]))
assert (d["kernels"], d["memcpys"], d["collectives"], len(d["per_step"])) == (768, 161, 74, 1), d
PY
pyq "mi300x: one graph launch, 425 kernels" "$TMP/import-mi300x-graph.json" <<'PY'
import json,sys; d=json.load(open(sys.argv[1]))
assert (d["graph_launches"], d["kernels"], d["per_step"][0]["graph_launches"]) == (1, 425, 1), d
PY

# synthetic: two streams with overlapping kernels, a kernel paired only through its ac2g
# flow, one with no launch, a skipped event quoting "cat": "kernel", two steps
expect_ok "synthetic streams" "$TPSIM" trace import "$D/trace-synth-streams.json" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "synthetic streams: hand-derived values" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s0, s1 = d["per_step"]
assert (d["kernels"], d["memcpys"], d["collectives"], d["unpaired"], d["launches"]) == (4, 1, 1, 1, 4), d
assert (s0["kernels"], s0["collectives"], s0["unpaired"], s0["launches"]) == (4, 1, 1, 3), s0
assert abs(s0["gpu_busy_ms"] - 0.021) < 1e-12, s0  # union 15..30 + 40..45 + 50..51 us
assert abs(s0["gpu_idle_ms"] - 0.079) < 1e-12, s0  # step span 0..100 us
assert abs(s0["duration_ms"] - 0.100) < 1e-12, s0
assert s0["launch_gap_us"]["n"] == 2 and s0["launch_gap_us"]["mean"] == 8, s0
assert s0["step_host_work_us"] == 159 and s1["step_host_work_us"] is None, (s0, s1)  # 51 us -> 210 us
assert s0["start_ns"] == 1000000000 and s1["start_ns"] == 1000200000, (s0, s1)
assert s1["memcpys"] == 1 and d["class_gbps"]["copy"] == 100, d  # 1 MB in 10 us
assert d["flows"] == 2 and d["flows_unmatched"] == 0, d
PY

# ranks with clock offsets: rank 1's base is 0.5 ms earlier and its ts 500 us later
expect_ok "ranks merged" "$TPSIM" trace import "$D/trace-synth-rank1.json" "$D/trace-synth-rank0.json" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "ranks merged on absolute time" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ranks"] == 2 and d["collectives"] == 2, d
st = {s["rank"]: s for s in d["per_step"]}
assert st[0]["start_ns"] == st[1]["start_ns"] == 2001000000, st
PY
expect_fail2 "same rank twice" "rank 0 again" "$TPSIM" trace import "$D/trace-synth-rank0.json" "$D/trace-synth-rank0.json"

# a huge event (4 MiB name: larger than the 1 MiB read window) is read whole (the same Python
# writes empty.sqlite, a database without kernels, for the bad traces below)
python3 -c '
import json, sqlite3, sys
big = {"ph": "X", "cat": "kernel", "name": "k" * (4 << 20), "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"correlation": 1}}
json.dump({"traceEvents": [big, dict(big, name="small", ts=5)]}, open(sys.argv[1], "w"))
sqlite3.connect(sys.argv[2]).execute("create table t(x)")' "$TMP/huge.json" "$TMP/empty.sqlite"
expect_ok "huge event" "$TPSIM" trace import "$TMP/huge.json" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "huge event counted" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json,sys; assert json.load(open(sys.argv[1]))["kernels"] == 2
PY

# -o writes a calibration whose values carry their source
expect_ok "calibration" "$TPSIM" trace import "$D/trace-synth-streams.json" -o "$TMP/calib.yaml"
check "calibration has sources" has "$TMP/calib.yaml" "source: {files: \"$D/trace-synth-streams.json (rank 0)\""
# launches start at 10, 20, 30 us: 10 us launch to launch; step 0's last GPU end 51 us to
# step 1's first launch 210 us: 159 us of per-step host work; kernel fixed = 5th percentile of
# 1, 10, 10 us = 1 + 0.1 x 9 = 1.9 us
check "calibration launch 10 us" has_line "$TMP/calib.yaml" "  - host.launch.mean_us=10.0000"
check "calibration step 159 us" has_line "$TMP/calib.yaml" "  - host.step.mean_us=159.0000"
check "calibration kernel fixed 1.9 us" has_line "$TMP/calib.yaml" "  - gpu.kernel_fixed_us=1.9000"
# with --hardware: the GEMV's 2098.79 GB/s over H200's 4800 GB/s (tests/data/README.md)
expect_ok "calibration with hardware" "$TPSIM" trace import "$D/trace-synth-streams.json" --hardware models/hw/h200.yaml -o "$TMP/calib-hw.yaml"
check "gemm efficiency 0.4372" has "$TMP/calib-hw.yaml" "gemm: {value: 2098.79, efficiency: 0.4372,"
check "hbm_efficiency applied" has_line "$TMP/calib-hw.yaml" "  - gpu.hbm_efficiency=0.4372"
expect_fail2 "hardware without -o" "--hardware: only with -o" "$TPSIM" trace import "$D/trace-synth-streams.json" --hardware models/hw/h200.yaml
expect_fail2 "bad hardware file" "nope.yaml" "$TPSIM" trace import "$D/trace-synth-streams.json" --hardware "$TMP/nope.yaml" -o "$TMP/never2.yaml"
check "no calibration written on a bad hardware file" test ! -e "$TMP/never2.yaml"
# a scenario takes it: the apply: list as --set flags
mapfile -t SETS < <(sed -n 's/^  - /--set\n/p' "$TMP/calib.yaml")
# (on a copy without the kernel calibration: with kernels: the list's gpu.kernel_fixed_us would
# change nothing and is refused, below)
sed -e '/^kernels: /d' -e 's/^  launch_latency_us: 4.0 .*/&\n  hbm_efficiency: 0.8941\n  flops_efficiency: 0.7/' \
    scenarios/eager-host-dispatch.yaml >"$TMP/nokernels.yaml"
expect_fail2 "the apply: list on a kernels: scenario" \
    "^tpsim: --set:[0-9]+:[0-9]+: gpu.kernel_fixed_us has no effect with kernels: .*expected it removed$" \
    "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 2 --steps 2 "${SETS[@]}"
expect_ok "scenario runs on the calibration" "$TPSIM" run "$TMP/nokernels.yaml" --tp 2 --steps 2 "${SETS[@]}" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "the run used the calibrated launch cost" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
# 980 launches per step at 10 us (9.8 ms) + 159 us of step work, not the scenario 22.39 us,
# plus the host phases of models/host/vllm.yaml at batch 1: 870 + 870 + 300 + 19.125 + 0 +
# 96.77 + 103.23 us = 2.259125 ms
launches = d["kernels_per_step"] + d["collectives_per_step"]
assert abs(d["host_phases"]["total_ms"] - 2.259125) < 1e-9, d["host_phases"]
assert abs(d["breakdown_ms"]["host"] - (launches * 0.010 + 0.159 + 2.259125)) < 1e-6, (launches, d["breakdown_ms"])
PY

# bad traces: one line, status 2, no output file
head -c 200000 "$D/TraceLens__b200__vllm_tp8_eager_step.json.gz" >"$TMP/cut.json.gz"
expect_fail2 "truncated gz" "cut.json.gz.*(truncated|unexpected end)" "$TPSIM" trace import "$TMP/cut.json.gz" -o "$TMP/never.yaml"
check "no calibration written on error" test ! -e "$TMP/never.yaml"
printf 'hello\n' >"$TMP/text.json"
expect_fail2 "not json" "text.json:1:1: unexpected character" "$TPSIM" trace import "$TMP/text.json"
printf '{"a": 1}' >"$TMP/noev.json"
expect_fail2 "no traceEvents" "noev.json: no traceEvents" "$TPSIM" trace import "$TMP/noev.json"
printf '{"traceEvents": [\n {"ph": "X", "cat": "kernel", "ts": "x", "dur": 1}]}' >"$TMP/badts.json"
expect_fail2 "string ts" "badts.json:2:2: .*ts" "$TPSIM" trace import "$TMP/badts.json"
printf '{"traceEvents": [\n  {"ph": "X", "cat": "kernel", "ts": 1, "dur": 1,}]}' >"$TMP/comma.json"
expect_fail2 "trailing comma in an event" "comma.json:2:[0-9]+: bad JSON" "$TPSIM" trace import "$TMP/comma.json"
printf '{"traceEvents": [1]}' >"$TMP/num.json"
expect_fail2 "non-object event" "num.json:1:18: .*not an object" "$TPSIM" trace import "$TMP/num.json"
printf '{"traceEvents": []} x' >"$TMP/tail.json"
expect_fail2 "data after the object" "tail.json:1:21: data after" "$TPSIM" trace import "$TMP/tail.json"
printf '{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "dur": -3}]}' >"$TMP/neg.json"
expect_fail2 "negative dur" "neg.json:1:18: .*dur >= 0" "$TPSIM" trace import "$TMP/neg.json"
printf '{"traceEvents": [' >"$TMP/open.json"
expect_fail2 "unterminated array" "open.json:1:18: unexpected end" "$TPSIM" trace import "$TMP/open.json"
expect_fail2 "sqlite without kernels" "empty.sqlite: no CUPTI_ACTIVITY_KIND_KERNEL" "$TPSIM" trace import "$TMP/empty.sqlite"
expect_fail2 "missing file" "nope.json: cannot open" "$TPSIM" trace import "$TMP/nope.json"
expect_fail2 "bad regex" "step-marker '\(': .*expected an extended regular expression" "$TPSIM" trace import "$D/trace-synth-streams.json" --step-marker '('
expect_fail2 "no file" "no FILE given" "$TPSIM" trace import
expect_fail2 "unknown subcommand" "unknown subcommand 'x'" "$TPSIM" trace x
finish
