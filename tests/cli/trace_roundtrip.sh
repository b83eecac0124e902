#!/usr/bin/env bash
# CLI tests of tpsim's own --trace: Kineto-compatible, streamed, on a 2^-10 us grid with no
# overlap on a thread as a viewer computes it (IEEE double ts + dur); NCCL / vLLM kernel
# names for collectives; correlation and flow ids unique in the file; gzip for .gz; `trace import` reads it back to run's kernels_per_step
# (the round trip); the trace-step cap counts measured steps only; `trace compare`.
. tests/cli/lib.sh
SCN=scenarios/eager-host-dispatch.yaml
JITTER=(--set host.launch.dist=lognormal --set host.launch.cv=0.3 --set host.collective.dist=lognormal --set host.collective.cv=0.3)

# round trip, eager and graphs: per step and rank, kernels + copies - collectives = run's
# kernels_per_step, collectives = run's collectives_per_step; warm-up steps are not written
for mode in eager graphs; do
    expect_ok "$mode run" "$TPSIM" run $SCN --tp 2 --steps 3 --warmup 2 --mode $mode "${JITTER[@]}" \
        --trace "$TMP/$mode.json" --format json || continue
    cp "$TMP/out" "$TMP/$mode-run.json"
    expect_ok "$mode import" "$TPSIM" trace import "$TMP/$mode.json" --format json || continue
    cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
    pyq "$mode round trip: kernels per step = run's" "$TMP/$mode-run.json" "$TMP/pyq-out$((PYQ_N + 1))" "$mode" <<'PY'
import json, sys
run, imp, mode = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
assert imp["ranks"] == 2 and len(imp["per_step"]) == 2 * 3, (imp["ranks"], len(imp["per_step"]))
for s in imp["per_step"]:
    assert s["kernels"] + s["memcpys"] - s["collectives"] == run["kernels_per_step"], s
    assert s["collectives"] == run["collectives_per_step"], s
    assert s["unpaired"] == 0, s
    assert s["graph_launches"] == (1 if mode == "graphs" else 0), s
assert imp["flows_unmatched"] == 0
PY
done

# TP-8 with launch jitter (cv 0.3), eager and graphs: every slice on a thread either ends
# before the next begins or holds it whole, computed as a viewer does (IEEE double: the
# parsed ts plus the parsed dur; Python's float is that double), the step annotations
# included; times are exact multiples of 2^-10 us. Before issue 18, 65850.956 + 79.433 =
# 65930.38900000001 > the next ts 65930.389, and speedscope drew a staircase.
for mode in eager graphs; do
expect_ok "tp8 jittered trace ($mode)" "$TPSIM" run $SCN --tp 8 --steps 3 --warmup 1 --mode $mode "${JITTER[@]}" --trace "$TMP/t8-$mode.json"
pyq "tp8 $mode: no overlap or sticking out in IEEE double, on the 2^-10 us grid" "$TMP/t8-$mode.json" <<'PY'
import json, re, sys
raw = open(sys.argv[1]).read()
for key in ("ts", "dur"):
    vals = re.findall(r'"%s":(-?[0-9.eE+]+)' % key, raw)
    assert vals, key
    # a decimal of 1 to 10 places F is a whole number of 2^-10 us when F * 1024 / 10^len(F)
    # is whole: exact in integers (Fraction, the same test, took a second per file)
    for v in set(vals):
        m = re.fullmatch(r"[0-9]+\.([0-9]{1,10})", v)
        assert m and int(m.group(1)) * 1024 % 10 ** len(m.group(1)) == 0, (key, v)
ev = json.loads(raw)["traceEvents"]
threads = {}
for e in ev:
    if e["ph"] == "X":
        threads.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
assert len(threads) == 16
depth_max = 0
for key, sl in threads.items():
    sl.sort(key=lambda s: (s[0], -s[1]))
    stack = []  # open slices (their viewer-computed ends), as a flame chart nests them
    for ts, end, name in sl:
        while stack and ts >= stack[-1]:
            stack.pop()
        assert not stack or end <= stack[-1], (key, name, ts, end, stack[-1])
        stack.append(end)
        depth_max = max(depth_max, len(stack))
assert depth_max == 2, depth_max  # a step annotation and its host slices; kernels alone
PY
done
# collectives are named as real traces name them, their op and pricing in args
# (the scenario runs auto, vLLM's custom all-reduce: NCCL's names under nccl-fit)
expect_ok "nccl-fit trace" "$TPSIM" run $SCN --tp 8 --steps 1 --set collective.allreduce=nccl-fit --trace "$TMP/n8.json"
check "NCCL kernel names" grep -q '"name":"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"' "$TMP/n8.json"
expect_ok "vllm-custom trace" "$TPSIM" run $SCN --tp 4 --steps 1 --set collective.allreduce=vllm-custom --trace "$TMP/v4.json"
pyq "vLLM custom all-reduce names, one stage at 16 KiB, ids unique, flows paired" "$TMP/v4.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
k = [e for e in ev if e.get("cat") == "kernel" and e["args"].get("collective") == "all_reduce"]
assert k and all(e["name"] == "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 4>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)" for e in k), {e["name"] for e in k}
assert all(e["args"]["priced_by"] == "vllm-custom" and e["args"]["op"] in ("all_reduce", "embedding_all_reduce") for e in k)
corr = [e["args"]["correlation"] for e in ev if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})]
assert len(corr) == len(set(corr)), "correlation ids repeat across ranks"
starts = [e["id"] for e in ev if e.get("ph") == "s"]
assert len(starts) == len(set(starts)), "flow ids repeat"
ends = {e["id"] for e in ev if e.get("ph") == "f"}
assert ends <= set(starts), "a flow end without its start"
PY
# .gz is gzip, and holds the same JSON as the plain file
expect_ok "gz trace" "$TPSIM" run $SCN --tp 4 --steps 1 --set collective.allreduce=vllm-custom --trace "$TMP/v4.json.gz"
pyq ".gz is gzip" "$TMP/v4.json.gz" "$TMP/v4.json" <<'PY'
import gzip,sys; d=gzip.open(sys.argv[1]).read(); assert d == open(sys.argv[2],"rb").read()
PY
expect_ok "gz trace imports" "$TPSIM" trace import "$TMP/v4.json.gz"

# the cap counts measured steps: 100 measured after 50 warm-up is allowed, 101 is not
# (the 8B model: the cap is about steps, and its trace is 2.5 times smaller than the 70B's; the
# step annotations are counted with grep, as loading the whole JSON took seconds)
expect_ok "cap: 100 measured + 50 warm-up" "$TPSIM" run scenarios/paper-additive.yaml --tp 2 \
    --model llama-3.1-8b --steps 100 --warmup 50 --trace "$TMP/cap.json"
cap_steps() { # "COUNT MAX" of the step annotations in trace $1
    grep -o '"cat":"user_annotation"[^}]*"step":[0-9]*' "$1" | grep -o '[0-9]*$' | sort -n |
        awk '{ n++; m = $1 } END { print n + 0, m + 0 }'
}
check "cap: warm-up not written (2 ranks x 100 steps, the last 99: $(cap_steps "$TMP/cap.json"))" \
    test "$(cap_steps "$TMP/cap.json")" = "200 99"
expect_fail2 "cap: 101 measured" "--trace: 101 steps, expected at most 100" "$TPSIM" run scenarios/paper-additive.yaml --tp 2 --steps 101 --warmup 0 --trace "$TMP/cap2.json"
check "cap: nothing written" test ! -e "$TMP/cap2.json"

# trace compare: the B200 eager step against tpsim's eager TP-2 trace
expect_ok "compare json" "$TPSIM" trace compare tests/data/TraceLens__b200__vllm_tp8_eager_step.json.gz "$TMP/eager.json" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "compare: phases and classes, kernels per step from each side" "$TMP/pyq-out$((PYQ_N + 1))" "$TMP/eager-run.json" <<'PY'
import json, sys
d, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert d["real_kernels_per_step"] == 768 and d["real_steps"] == 1, d
assert d["sim_steps"] == 3 and d["sim_ranks"] == 2 and d["sim_tp"] == 2, d  # steps, not rank-steps
assert d["real_tp"] == 8 and d["real_device"] == "NVIDIA B200" and d["real_model"] is None, d
assert d["sim_device"] == "H100 SXM" and d["sim_model"] == run["model"], d
assert set(d["phases"]) == {"step", "launch_calls", "host_dispatch", "gpu_compute", "collectives",
                            "gpu_idle"}
# a tpsim trace has no launch-call time of its own: its launch slices are the whole host cost
assert d["phases"]["launch_calls"]["sim_ms"] is None and d["phases"]["launch_calls"]["real_ms"] > 0
# a B200 MoE step against an H100 Llama step at TP-2: every difference is named
m = " | ".join(d["mismatches"])
for word in ("device: real ran on NVIDIA B200, sim on H100 SXM", "model: real runs mixture-of-experts",
             "kernels a step: real 768.0", "TP degree: real 8, sim 2"):
    assert word in m, (word, m)
assert set(d["classes"]) == {"gemm", "attention", "norm", "elementwise", "collective", "copy"}
for v in d["phases"].values():
    if v["sim_ms"] is not None:
        assert abs(v["sim_ms"] - v["real_ms"] - v["diff_ms"]) < 1e-6  # JSON numbers: 10 significant digits
PY
# a trace against itself: like for like, nothing to say. At TP-8 the host is the bottleneck (the
# launch queue never fills), so its host time per launch is the scenario's host.launch.mean_us
# (20.105 us, on the trace's 2^-10 us grid) and host_dispatch a step 1141 such launches (one
# step: the figures are per step; the 3-step comparison above averages steps)
expect_ok "TP-8 trace" "$TPSIM" run $SCN --tp 8 --steps 1 --trace "$TMP/e8.json"
expect_ok "compare with itself" "$TPSIM" trace compare "$TMP/e8.json" "$TMP/e8.json" --format json
cp "$TMP/out" "$TMP/e8-compare.json"
pyq "compare with itself: no mismatch, 20.105 us a launch" "$TMP/e8-compare.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["mismatches"] == [], d["mismatches"]
assert abs(d["sim_host_per_launch_us"] - 20.105) < 1e-3, d["sim_host_per_launch_us"]
assert d["real_launches_per_step"] == d["sim_launches_per_step"] == 1141, d
assert abs(d["phases"]["host_dispatch"]["sim_ms"] - 1141 * 20.105e-3) < 1e-3, d["phases"]["host_dispatch"]
PY
expect_ok "compare table" "$TPSIM" trace compare tests/data/TraceLens__b200__vllm_tp8_eager_step.json.gz "$TMP/eager.json"
check "compare table has a step row" match "$TMP/out" '^\| step \| 87.4'
check "compare table: a tpsim trace has no launch-call time" match "$TMP/out" '^\| launch_calls \| 8.853 \| - \|'
check "compare table: says the GPUs differ" match "$TMP/out" '^\*\* NOT LIKE FOR LIKE: device: real ran on NVIDIA B200, sim on H100 SXM$'
# program.allreduce_copy_out: vLLM's symmetric-memory all-reduce as the B200 trace shows it,
# a DtoD copy in, the all-reduce, a DtoD copy out: one more launch per all-reduce
expect_ok "copy-out run" "$TPSIM" run $SCN --tp 8 --steps 1 --warmup 0 --set program.allreduce_copy_out=true \
    --trace "$TMP/co.json" --format json && cp "$TMP/out" "$TMP/co-run.json"
expect_ok "plain run" "$TPSIM" run $SCN --tp 8 --steps 1 --warmup 0 --format json && cp "$TMP/out" "$TMP/plain-run.json"
pyq "copy-out: one copy after every all-reduce" "$TMP/co-run.json" "$TMP/plain-run.json" "$TMP/co.json" <<'PY'
import json, sys
co, plain, tr = (json.load(open(f)) for f in sys.argv[1:4])
assert co["kernels_per_step"] - plain["kernels_per_step"] == co["allreduces_per_step"] == 161, (co, plain)
stream = sorted((e for e in tr["traceEvents"] if e["ph"] == "X" and e["pid"] == 0 and e["tid"] == 7), key=lambda e: e["ts"])
names = [e["name"] for e in stream]
for i, n in enumerate(names):
    if stream[i]["args"].get("op") in ("all_reduce", "embedding_all_reduce"):
        assert names[i + 1] == "all_reduce_copy_out", names[i - 1:i + 2]  # the copy-in is the collective model's
PY
expect_fail2 "compare: one file" "expected REAL SIM" "$TPSIM" trace compare "$TMP/eager.json"
# a time past what a trace holds exactly (2^53 ticks of 2^-10 us = 8.8e6 s) is refused, not
# written rounded or wrapped: 1,141 launches of 1,000 s each make a step of 1.14e6 s, and the
# eighth step ends past 8.8e6 s (host.launch.mean_us's own bound is 1e9 us)
expect_fail2 "a time beyond the trace's range" "^tpsim: --trace: a simulated time of .* s is beyond what a trace holds exactly" \
    "$TPSIM" run $SCN --tp 2 --steps 10 --warmup 0 --set host.launch.mean_us=1e9 --trace "$TMP/far.json"
check "beyond the range: no trace file" test ! -e "$TMP/far.json"

finish
