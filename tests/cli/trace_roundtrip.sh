#!/usr/bin/env bash
# CLI tests of tpsim's own --trace: Kineto-compatible, streamed, on an integer-nanosecond grid
# with no overlap on a thread; `trace import` reads it back to run's kernels_per_step
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
    check "$mode round trip: kernels per step = run's" python3 - "$TMP/$mode-run.json" "$TMP/out" "$mode" <<'PY'
import json, sys
run, imp, mode = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
assert imp["ranks"] == 2 and len(imp["steps"]) == 2 * 3, (imp["ranks"], len(imp["steps"]))
for s in imp["steps"]:
    assert s["kernels"] + s["memcpys"] - s["collectives"] == run["kernels_per_step"], s
    assert s["collectives"] == run["collectives_per_step"], s
    assert s["unpaired"] == 0, s
    assert s["graph_launches"] == (1 if mode == "graphs" else 0), s
assert imp["flows_unmatched"] == 0
PY
done

# TP-8 with launch jitter (cv 0.3): times on the integer-ns grid, no overlap on any thread
expect_ok "tp8 jittered trace" "$TPSIM" run $SCN --tp 8 --steps 2 --warmup 1 "${JITTER[@]}" --trace "$TMP/t8.json"
check "tp8: integer-ns grid, no two slices on one thread overlap after rounding" python3 - "$TMP/t8.json" <<'PY'
import json, re, sys
from decimal import Decimal
raw = open(sys.argv[1]).read()
for key in ("ts", "dur"):
    vals = re.findall(r'"%s":(-?[0-9.eE+]+)' % key, raw)
    assert vals and all(re.fullmatch(r"[0-9]+\.[0-9]{3}", v) for v in vals), key
ev = json.loads(raw)["traceEvents"]
threads = {}
for e in ev:
    if e["ph"] == "X" and e["cat"] != "user_annotation":  # annotations enclose their step
        ns = lambda v: int(Decimal(str(v)) * 1000)
        threads.setdefault((e["pid"], e["tid"]), []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
assert len(threads) == 16
for key, sl in threads.items():
    sl.sort()
    for (s0, e0), (s1, e1) in zip(sl, sl[1:]):
        assert s1 >= e0, (key, s0, e0, s1)
PY

# the cap counts measured steps: 100 measured after 50 warm-up is allowed, 101 is not
expect_ok "cap: 100 measured + 50 warm-up" "$TPSIM" run scenarios/paper-additive.yaml --tp 2 --steps 100 --warmup 50 --trace "$TMP/cap.json"
check "cap: warm-up not written" python3 -c '
import json, sys
ann = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "user_annotation"]
assert len(ann) == 2 * 100 and max(e["args"]["step"] for e in ann) == 99' "$TMP/cap.json"
expect_fail2 "cap: 101 measured" "--trace: 101 steps, expected at most 100" "$TPSIM" run scenarios/paper-additive.yaml --tp 2 --steps 101 --warmup 0 --trace "$TMP/cap2.json"
check "cap: nothing written" test ! -e "$TMP/cap2.json"

# trace compare: the B200 eager step against tpsim's eager TP-2 trace
expect_ok "compare json" "$TPSIM" trace compare tests/data/TraceLens__b200__vllm_tp8_eager_step.json.gz "$TMP/eager.json" --format json
check "compare: phases and classes, kernels per step from each side" python3 - "$TMP/out" "$TMP/eager-run.json" <<'PY'
import json, sys
d, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert d["real_kernels_per_step"] == 768 and d["real_steps"] == 1, d
assert d["sim_steps"] == 2 * 3, d  # 2 ranks x 3 measured steps
assert set(d["phases"]) == {"step", "host_launch", "gpu_compute", "collectives", "gpu_idle"}
assert set(d["classes"]) == {"gemm", "attention", "norm", "elementwise", "collective", "copy"}
for v in d["phases"].values():
    assert abs(v["sim_ms"] - v["real_ms"] - v["diff_ms"]) < 1e-6  # JSON numbers: 10 significant digits
PY
expect_ok "compare table" "$TPSIM" trace compare tests/data/TraceLens__b200__vllm_tp8_eager_step.json.gz "$TMP/eager.json"
check "compare table has a step row" grep -q '^| step | 87.4' "$TMP/out"
# program.allreduce_copy_out: vLLM's symmetric-memory all-reduce as the B200 trace shows it,
# a DtoD copy in, the all-reduce, a DtoD copy out: one more launch per all-reduce
expect_ok "copy-out run" "$TPSIM" run $SCN --tp 8 --steps 1 --warmup 0 --set program.allreduce_copy_out=true \
    --trace "$TMP/co.json" --format json && cp "$TMP/out" "$TMP/co-run.json"
expect_ok "plain run" "$TPSIM" run $SCN --tp 8 --steps 1 --warmup 0 --format json && cp "$TMP/out" "$TMP/plain-run.json"
check "copy-out: one copy after every all-reduce" python3 - "$TMP/co-run.json" "$TMP/plain-run.json" "$TMP/co.json" <<'PY'
import json, sys
co, plain, tr = (json.load(open(f)) for f in sys.argv[1:4])
assert co["kernels_per_step"] - plain["kernels_per_step"] == co["allreduces_per_step"] == 161, (co, plain)
stream = sorted((e for e in tr["traceEvents"] if e["ph"] == "X" and e["pid"] == 0 and e["tid"] == 7), key=lambda e: e["ts"])
names = [e["name"] for e in stream]
for i, n in enumerate(names):
    if n in ("all_reduce", "embedding_all_reduce"):
        assert names[i + 1] == "all_reduce_copy_out", names[i - 1:i + 2]  # the copy-in is the collective model's
PY
expect_fail2 "compare: one file" "expected REAL SIM" "$TPSIM" trace compare "$TMP/eager.json"
finish
