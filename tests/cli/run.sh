# run.sh: `tpsim run` end to end: the JSON contract, the study's compute and comm columns,
# determinism, and the Perfetto trace.
source tests/cli/lib.sh
SCN=scenarios/paper-additive.yaml

# --- acceptance against the study (docs/sources.md#study, context 2048): one HBM efficiency
# for all cells gives breakdown_ms.compute and .allreduce within 2% of its columns.
while read -r tp batch compute comm; do
    if expect_ok "run tp$tp b$batch" "$TPSIM" run $SCN --tp "$tp" --batch "$batch" --format json; then
        cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
        pyq "tp$tp b$batch compute ${compute} and comm ${comm} within 2%" "$TMP/pyq-out$((PYQ_N + 1))" "$compute" "$comm" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); c, a = float(sys.argv[2]), float(sys.argv[3])
b = d["breakdown_ms"]
ok = abs(b["compute"] / c - 1) < 0.02 and abs(b["allreduce"] / a - 1) < 0.02
print(f"  tp{d['tp']} b{d['batch']}: compute {b['compute']:.3f} (study {c}, {100*(b['compute']/c-1):+.2f}%)"
      f"  allreduce {b['allreduce']:.3f} (study {a}, {100*(b['allreduce']/a-1):+.2f}%)")
sys.exit(0 if ok else 1)
PY
    fi
done <<'EOF2'
2 1 27.62 3.45
2 2 27.77 3.46
2 4 28.06 3.48
2 8 28.64 3.51
4 1 13.81 3.98
4 2 13.89 3.99
4 4 14.04 4.01
4 8 14.33 4.06
EOF2

# --- the JSON contract, and the breakdown summing to the step
JIT=(--set host.launch.dist=lognormal --set host.launch.mean_us=9 --set host.launch.cv=0.5
     --set host.step.dist=normal --set host.step.mean_us=800 --set host.step.cv=0.2)
expect_ok "jittered json" "$TPSIM" run $SCN --tp 4 --batch 2 --steps 12 --seed 7 "${JIT[@]}" --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "json fields, breakdown sums to step" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("tp", "batch", "ctx", "steps", "seed", "kernels_per_step", "allreduces_per_step", "events"):
    assert isinstance(d[k], int), k
assert (d["tp"], d["batch"], d["ctx"], d["steps"], d["seed"]) == (4, 2, 2048, 12, 7)
# 80 layers x 12 kernels + 18 around them: NCCL (nccl-fit, the default) launches no copy-in
assert d["allreduces_per_step"] == 160 and d["kernels_per_step"] == 978 - 160
s, b = d["step_ms"], d["breakdown_ms"]
assert s["min"] <= s["p50"] <= s["p99"] <= s["max"] and s["min"] < s["max"], s
total = b["compute"] + b["allreduce"] + b["wait_peers"] + b["gpu_idle"] + b["offset"]
assert abs(total - s["mean"]) < 1e-6 * s["mean"], (total, s["mean"])
assert b["wait_peers"] > 0 and b["gpu_idle"] > 0 and b["host"] > 0, b
# the back end that ran and why (no trace, known op kinds: the recursion)
assert d["engine"]["name"] == "maxplus" and "models this config" in d["engine"]["why"], d["engine"]
PY

# --- same seed: byte-identical; another seed: a different jittered result
"$TPSIM" run $SCN --tp 4 --seed 11 "${JIT[@]}" --format json >"$TMP/a.json"
"$TPSIM" run $SCN --tp 4 --seed 11 "${JIT[@]}" --format json >"$TMP/b.json"
"$TPSIM" run $SCN --tp 4 --seed 12 "${JIT[@]}" --format json >"$TMP/c.json"
check "same seed, identical bytes" cmp -s "$TMP/a.json" "$TMP/b.json"
pyq "different seed, different step" "$TMP/a.json" "$TMP/c.json" <<'PY'
import json, sys
a, c = (json.load(open(f))["step_ms"]["mean"] for f in sys.argv[1:])
sys.exit(0 if a != c else 1)
PY

# --- text output explains the step
expect_ok "text" "$TPSIM" run $SCN --tp 2 &&
check "text has the breakdown and a verdict" has "$TMP/out" "verdict: GPU-bound"
check "text names the engine and why" match "$TMP/out" "^engine     max-plus recursion \(sim/maxplus.c\): it models this config"
expect_ok "host-bound text" "$TPSIM" run $SCN --tp 4 --set host.launch.mean_us=25 &&
check "host-bound verdict" has "$TMP/out" "verdict: host-bound"

# --- the kernel calibration that priced the GPU ops, named; borrowed ones marked FOREIGN
expect_ok "kernels named" "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 4 --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "kernel_calibration is the scenario's, not borrowed" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["kernel_calibration"].endswith("models/kernels/h100-sxm.yaml") and d["kernel_calibration_borrowed"] is None))
PY
expect_ok "roofline: no kernel calibration" "$TPSIM" run $SCN --tp 2 --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "kernel_calibration null" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["kernel_calibration"] is not None)
PY
expect_ok "kernels borrowed" "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 4 --allow-foreign-calib \
    --set hardware=../models/hw/h200.yaml --set kernels=h100-sxm &&
check "the borrowed kernel calibration is FOREIGN in the text" bash -c 'grep -A1 "^kernels    .*h100-sxm.yaml: H100 SXM" "$1" | grep -q "FOREIGN: measured on H100 SXM, used for H200 SXM (--allow-foreign-calib)"' _ "$TMP/out"

expect_ok "sweep names the kernel calibration per row" "$TPSIM" sweep scenarios/eager-host-dispatch.yaml \
    --tp 2 --batch 1 --steps 2 --allow-foreign-calib --set hardware=../models/hw/h200.yaml \
    --set kernels=h100-sxm --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "sweep row: kernel_calibration and how it was borrowed" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json,sys; r=json.load(open(sys.argv[1]))[0]; sys.exit(not (r["kernel_calibration"].endswith("models/kernels/h100-sxm.yaml") and r["kernel_calibration_borrowed"] == "--allow-foreign-calib"))
PY

# --- one rule for what limits a step (run_bound_of): the GPU's idle split into the serialised
# per-step host work and the launch wait. vllm-graphs at TP-4 batch 1 is GPU-bound with vLLM's
# host phases serialised after the stream drains: the GPU idles for them (their sum is
# host_phases.total_ms), which is step work, not a launch wait; overlapped, they hide.
G=scenarios/vllm-graphs.yaml
expect_ok "graphs json" "$TPSIM" run $G --tp 4 --batch 1 --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "serialised phases: GPU-bound; the engine's step-work idle is the phases' sum" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); b = d["breakdown_ms"]; ph = d["host_phases"]["total_ms"]
sp = d["gpu_idle_split_ms"]
assert d["bound"] == "GPU-bound", d["bound"]
# constant phases, no driver: the GPU waits them out after the drain, exactly their sum
assert abs(sp["step_work"] - ph) < 1e-6, (sp, ph)
assert abs(sp["step_work"] + sp["launch_wait"] - b["gpu_idle"]) < 1e-6, (sp, b)
# graph mode: the launch wait is the graph launch and the few eager ops around it
assert sp["launch_wait"] < 0.05 * d["step_ms"]["mean"], sp
PY
expect_ok "graphs text" "$TPSIM" run $G --tp 4 --batch 1 &&
check "the verdict names the step work and what V1 would do" match "$TMP/out" "^verdict: GPU-bound: .*the per-step host work idles the GPU another .*--set execution.host_phases=overlapped shows what that saves"
expect_ok "graphs overlapped" "$TPSIM" run $G --tp 4 --batch 1 --set execution.host_phases=overlapped --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "overlapped phases: no step work left, still GPU-bound" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); assert d["bound"] == "GPU-bound", d["bound"]
assert d["breakdown_ms"]["gpu_idle"] < 0.05 * d["step_ms"]["mean"], d["breakdown_ms"]
PY
# rank 0's driver (scheduling and broadcast, eager-broadcast) idles every GPU at TP-8: step
# work, which CUDA graphs would not remove, so not host-bound in either mode
for mode in eager graphs; do
    expect_ok "broadcast TP-8 $mode" "$TPSIM" run scenarios/eager-broadcast.yaml --tp 8 --mode $mode --format json &&
    cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
    pyq "broadcast TP-8 $mode: step-work-bound" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["bound"] != "step-work-bound")
PY
done
expect_ok "step work outlasts the GPU" "$TPSIM" run $G --tp 4 --batch 1 --format json --set host.phases.schedule.mean_us=40000 &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "step-work-bound" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["bound"] != "step-work-bound")
PY

# --- the trace opens as Chrome trace-event JSON: a process per rank, host + stream threads
expect_ok "trace" "$TPSIM" run $SCN --tp 2 --steps 1 --warmup 0 --set host.launch.mean_us=5 --trace "$TMP/t.json"
check "a trace runs the event engine, and says so" match "$TMP/out" "^engine     event engine \(sim/engine_events.c\): a trace was asked for"
"$TPSIM" run $SCN --tp 2 --steps 1 --warmup 0 --trace "$TMP/t2.json" --format json >"$TMP/tj.json"
pyq "json: engine events, why the trace" "$TMP/tj.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["engine"]
sys.exit(0 if e["name"] == "events" and "trace" in e["why"] else 1)
PY
pyq "trace structure" "$TMP/t.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
assert t["distributedInfo"]["world_size"] == 2 and t["distributedInfo"]["ranks_by_pid"] is True
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
threads = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert procs == {0: "rank 0", 1: "rank 1"}, procs
assert threads == {(0, 0), (0, 7), (1, 0), (1, 7)}, threads
x = [e for e in ev if e["ph"] == "X"]
ar = [e for e in x if e["tid"] == 7 and e["cat"] == "kernel" and e["args"].get("op") == "all_reduce"]
assert all(e["name"].startswith("ncclDevKernel_AllReduce_Sum_bf16_") for e in ar), {e["name"] for e in ar}
assert len(ar) == 2 * 160, len(ar)
# Kineto fields: every kernel and copy has a launch with its correlation id and an ac2g flow
launches = {(e["pid"], e["args"]["correlation"]) for e in x if e["cat"] == "cuda_runtime" and "correlation" in e["args"]}
gpu = [e for e in x if e["cat"] in ("kernel", "gpu_memcpy")]
assert all((e["pid"], e["args"]["correlation"]) in launches for e in gpu)
flows = {(e["pid"], e["id"], e["ph"]) for e in ev if e.get("cat") == "ac2g"}
assert all((e["pid"], e["args"]["correlation"], "f") in flows for e in gpu)
assert any(e["cat"] == "cuda_runtime" and e["name"] == "cudaLaunchKernel" and e["args"].get("op") == "qkv_proj" for e in x)
assert sum(e["cat"] == "user_annotation" and e["name"] == "execute_step_0" for e in x) == 2
assert all(e["dur"] >= 0 and "step" in e["args"] for e in x)
PY
check "no temp file left" test -z "$(ls "$TMP" | grep '\.tmp\.')"
# a full launch queue adds a slice per launch: nothing may be dropped (every step keeps its sync)
expect_ok "trace, queue depth 1" "$TPSIM" run $SCN --tp 2 --steps 3 --warmup 0 --set host.launch.mean_us=5 --set host.collective.mean_us=5 \
    --set host.queue_depth=1 --set host.step.mean_us=10 --trace "$TMP/q.json"
pyq "queue-full trace complete" "$TMP/q.json" <<'PY'
import json, sys
x = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"]
for rank in (0, 1):
    for step in (0, 1, 2):
        mine = [e for e in x if e["pid"] == rank and e["args"]["step"] == step]
        assert sum(e["name"] == "step host work" for e in mine) == 1, (rank, step)
        assert sum(e["tid"] == 7 and e["args"].get("op") == "all_reduce" for e in mine) == 160, (rank, step)
        assert sum(e["cat"] == "cuda_runtime" and "op" in e["args"] for e in mine) == 978, (rank, step)  # no copy-ins
PY

# --- an override of the calibration file via --calib drives the run
cat >"$TMP/cal8.yaml" <<'Y'
kind: allreduce-calibration
hardware: H100 SXM
tp: 8
fit: linear
lambda_us: 30
beta_gbps: 360
source: {how: "test fixture", where: "tests/cli/run.sh"}
Y
expect_ok "calib tp8" "$TPSIM" run $SCN --tp 8 --calib "$TMP/cal8.yaml" --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "tp8 all-reduce uses the given lambda" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = 30 + 2 * 7 / 8 * 8192 * 2 / 360e9 * 1e6
sys.exit(0 if abs(d["allreduce_call"]["us"] - want) < 1e-6 else 1)
PY

finish
