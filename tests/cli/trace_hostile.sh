#!/usr/bin/env bash
# trace_hostile.sh: trace import on the inputs of issue 18, each of which failed before its
# fix: a Chrome bare-array trace (was refused), a training trace's ProfilerStep#N steps (were
# ignored: idle gaps), traces with no GPU activity (imported with exit 0), numbers beyond
# int64 or the time range (signed overflow / a float-to-int conversion out of range, UB: the
# plain build wrote a kernel cost of 5e15 us), Nsight int64 extremes, and a file of 4,000
# processes split by pid (rank lookup by hash; its speed at 40,000 is in make bench).
. tests/cli/lib.sh
D=tests/data

# --- a bare array of events (the Chrome trace format's other form) = the same events in an
# object: same kernels, copies, collectives, steps (timestamps lose baseTimeNanoseconds only)
python3 - "$D/trace-synth-streams.json" "$TMP/bare.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
json.dump(d["traceEvents"], open(sys.argv[2], "w"))
PY
expect_ok "object form" "$TPSIM" trace import "$D/trace-synth-streams.json" --format json
cp "$TMP/out" "$TMP/obj.out"
expect_ok "bare array" "$TPSIM" trace import "$TMP/bare.json" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "bare array = object form" "$TMP/obj.out" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for k in ("kernels", "memcpys", "collectives", "launches", "unpaired"):
    assert a[k] == b[k], (k, a[k], b[k])
assert [s["kernels"] for s in a["per_step"]] == [s["kernels"] for s in b["per_step"]]
assert [s["duration_ms"] for s in a["per_step"]] == [s["duration_ms"] for s in b["per_step"]]
PY
gzip -c "$TMP/bare.json" >"$TMP/bare.json.gz"
expect_ok "bare array, gzip" "$TPSIM" trace import "$TMP/bare.json.gz"
printf '[{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":1,"ts":1,"dur":1}] x' >"$TMP/tail.json"
expect_fail2 "data after the array" "tail.json:1:[0-9]+: data after the trace array" "$TPSIM" trace import "$TMP/tail.json"

# --- ProfilerStep#N are the steps of a training trace without --step-marker: 3 steps of
# 900 kernels each (tests/data/README.md, derived with trace_expected.py --step-marker)
expect_ok "HTA default steps" "$TPSIM" trace import "$D/HTA__nccl_parser_config__nccl_data_a100_2rank.json.gz" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "ProfilerStep#N: 3 steps of 900, by marker" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json,sys; d=json.load(open(sys.argv[1]))
assert d["step_source"] == "marker" and [s["kernels"] for s in d["per_step"]] == [900, 900, 900], d["per_step"]
PY
# vLLM's execute_* still wins where both are present; "ProfilerStep#x" is no step
python3 - "$TMP/both.json" "$TMP/notstep.json" <<'PY'
import json, sys
def k(ts): return {"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 7, "ts": ts, "dur": 1, "args": {"stream": 7}}
def a(name, ts, dur): return {"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}
both = [a("ProfilerStep#0", 0, 1000), a("execute_model", 10, 100), a("execute_model", 200, 100), k(20), k(210)]
json.dump({"traceEvents": both}, open(sys.argv[1], "w"))
json.dump({"traceEvents": [a("ProfilerStep#x", 0, 1000), a("ProfilerStep#", 0, 1000), k(20), k(210)]}, open(sys.argv[2], "w"))
PY
expect_ok "execute_ and ProfilerStep" "$TPSIM" trace import "$TMP/both.json" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "execute_* are the steps (2)" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json,sys; d=json.load(open(sys.argv[1])); assert len(d["per_step"]) == 2, d
PY
expect_ok "malformed ProfilerStep names" "$TPSIM" trace import "$TMP/notstep.json" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "no marker steps from ProfilerStep#x" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json,sys; d=json.load(open(sys.argv[1])); assert d["step_source"] == "idle gaps", d
PY

# --- nothing on the GPU: refused, one line, status 2
echo '{"traceEvents":[]}' >"$TMP/empty.json"
expect_fail2 "no events" "empty.json: no GPU activity" "$TPSIM" trace import "$TMP/empty.json"
echo '[]' >"$TMP/empty-arr.json"
expect_fail2 "empty array" "empty-arr.json: no GPU activity" "$TPSIM" trace import "$TMP/empty-arr.json"
echo '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":5}]}' >"$TMP/cpu.json"
expect_fail2 "CPU only" "cpu.json: no GPU activity" "$TPSIM" trace import "$TMP/cpu.json"
expect_fail2 "CPU only, compare" "cpu.json: no GPU activity" "$TPSIM" trace compare "$TMP/cpu.json" "$D/trace-synth-streams.json"
head -c 200000 /dev/zero | tr '\0' ' ' | gzip -c >"$TMP/ws.json.gz"
expect_fail2 "whitespace gzip" "ws.json.gz:1:200001: unexpected end of file" "$TPSIM" trace import "$TMP/ws.json.gz"

# --- numbers out of range: one line each, never a cast or an add beyond int64
ev() { printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":%s,"tid":1,"ts":%s,"dur":%s,"args":{"correlation":%s}}]%s}' "$@"; }
ev 1e300 1 1 1 '' >"$TMP/pid.json"
expect_fail2 "pid 1e300" "pid.json:1:17: an id, pid, tid, stream or bytes that is not an integer in range" "$TPSIM" trace import "$TMP/pid.json"
ev 4294967296 1 1 1 '' >"$TMP/pid32.json"
expect_fail2 "pid beyond int32" "pid32.json:1:17: an id, pid" "$TPSIM" trace import "$TMP/pid32.json"
ev 1 1 1 1e19 '' >"$TMP/corr.json"
expect_fail2 "correlation 1e19" "corr.json:1:17: an id, pid" "$TPSIM" trace import "$TMP/corr.json"
ev 1 1 1 -1.5 '' >"$TMP/frac.json"
expect_fail2 "fractional id" "frac.json:1:17: an id, pid" "$TPSIM" trace import "$TMP/frac.json"
ev 1 5e15 1 1 '' >"$TMP/ts.json"
expect_fail2 "ts 5e15 us" "ts.json:1:17: a complete event without a numeric ts and a dur >= 0" "$TPSIM" trace import "$TMP/ts.json"
ev 1 1 1e300 1 '' >"$TMP/dur.json"
expect_fail2 "dur 1e300" "dur.json:1:17: a complete event" "$TPSIM" trace import "$TMP/dur.json"
ev 1 2e15 1 1 ',"baseTimeNanoseconds":2000000000000000000' >"$TMP/base.json"
expect_fail2 "base + ts beyond 2^61" "base.json: baseTimeNanoseconds \+ ts beyond 2\^61 ns" "$TPSIM" trace import "$TMP/base.json"
ev 1 1 1 1 ',"baseTimeNanoseconds":9223372036854775807' >"$TMP/base2.json"
expect_fail2 "base int64 max" "base2.json:1:[0-9]+: baseTimeNanoseconds is not an integer 0..2\^61" "$TPSIM" trace import "$TMP/base2.json"
# the largest times that are in range still import (epoch ns of 2026, 1.8e18)
ev 1 1 1 1 ',"baseTimeNanoseconds":1800000000000000000' >"$TMP/epoch.json"
expect_ok "epoch base" "$TPSIM" trace import "$TMP/epoch.json"

# Nsight Systems int64 extremes (sqlite3 from Python's standard library): each case's copy is
# n1/x.sqlite, n2/x.sqlite, n3/x.sqlite, all made (with y.sqlite and the 4,000-process trace
# below) by one Python
CASES=("-9223372036854775808 9223372036854775807" "9223372036854775000 9223372036854775807" "0 9223372036854775807")
mkdir "$TMP/n1" "$TMP/n2" "$TMP/n3"
python3 - "$D/pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite" "$TMP" "${CASES[@]}" <<'PY'
import shutil, sqlite3, sys
src, tmp = sys.argv[1:3]
for i, case in enumerate(sys.argv[3:], 1):
    start, end = map(int, case.split())
    shutil.copyfile(src, f"{tmp}/n{i}/x.sqlite")
    c = sqlite3.connect(f"{tmp}/n{i}/x.sqlite")
    c.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = ?, end = ? WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)", (start, end))
    c.commit()
shutil.copyfile(src, f"{tmp}/y.sqlite")
c = sqlite3.connect(f"{tmp}/y.sqlite")
c.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = -9223372036854775808, globalTid = -9223372036854775808 WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME)")
c.commit()
# one file holding 4,000 processes (below)
import json
n = 4000; ev = []
for p in range(n):
    ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": n - 1 - p, "tid": 7, "ts": 1000.0 + p, "dur": 0.5, "args": {"stream": 7, "correlation": p + 1}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": n - 1 - p, "tid": 1, "ts": 999.0 + p, "dur": 0.5, "args": {"correlation": p + 1}})
json.dump({"distributedInfo": {"ranks_by_pid": True, "world_size": n}, "traceEvents": ev}, open(f"{tmp}/pids.json", "w"))
PY
for i in 1 2 3; do
    expect_fail2 "nsys kernel at ${CASES[i - 1]}" "x.sqlite: a GPU activity at -?[0-9]+..[0-9]+ ns, beyond \+-2\^61 ns" "$TPSIM" trace import "$TMP/n$i/x.sqlite"
done
expect_ok "nsys: a call of a process without GPU work is skipped (negative globalTid)" "$TPSIM" trace import "$TMP/y.sqlite"

# --- one file holding 4,000 processes (ranks_by_pid): 4,000 ranks, one kernel and one launch
# each, every kernel paired with its launch (pids.json, written above)
expect_ok "4,000 pids" "$TPSIM" trace import "$TMP/pids.json" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "4,000 ranks, 4,000 kernels, all paired" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json,sys; d=json.load(open(sys.argv[1]))
assert (d["ranks"], d["kernels"], d["launches"], d["unpaired"]) == (4000, 4000, 4000, 0), {k: d[k] for k in ("ranks","kernels","launches","unpaired")}
assert [f.split(" rank ")[-1] for f in d["files"][:1]] is not None
PY
# two files claiming the same rank are still refused
expect_fail2 "same rank twice" "rank 0 again" "$TPSIM" trace import "$D/trace-synth-rank0.json" "$D/trace-synth-rank0.json"
finish
