#!/usr/bin/env bash
# serve.sh: `tpsim serve` end to end: a lone request's decode step is the step `tpsim run`
# prices for that cell (another path through the step model); the reports in every format;
# the trace; determinism; bad input (status 2, one line, nothing written); the registered
# serving predictions regenerate (a sample of their rows, byte for byte).
source tests/cli/lib.sh
S=serve-h100

# one request of 2040 + 2 tokens: its one decode step runs at context 2041, which the step
# cache rounds to 2048: tpsim run's step at batch 1, context 2048 (full graph, padded to 1)
# (the checks in Python are queued: one Python for them all; the files they read kept)
expect_ok "run at batch 1, ctx 2048" "$TPSIM" run $S --batch 1 --ctx 2048 --format json
cp "$TMP/out" "$TMP/run1.json"
expect_ok "serve one request" "$TPSIM" serve $S --concurrency 1 --requests 1 --isl 2040 --osl 2 --format json
cp "$TMP/out" "$TMP/serve1.json"
pyq "the lone request's TPOT is run's step" "$TMP/serve1.json" "$TMP/run1.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); want = json.load(open(sys.argv[2]))["step_ms"]["mean"]
assert abs(j["mean_tpot_ms"] - want) <= 1e-6 * want, (j["mean_tpot_ms"], want)
assert j["requests"] == 1 and j["n_steps"] == 2 and j["preemptions"] == 0, j
# E2E = the prefill step (TTFT) + one decode step
assert abs(j["mean_e2el_ms"] - j["mean_ttft_ms"] - want) <= 1e-6 * want, j
PY

# a load: text as vllm bench serve prints it, JSON and CSV agree
expect_ok "text report" "$TPSIM" serve $S --concurrency 8 --requests 24 --isl 512 --osl 64 --interval
check "the benchmark block" match "$TMP/out" "^============ Serving Benchmark Result ============"
check "TPOT with its interval" match "$TMP/out" "^Mean TPOT \(ms\): +[0-9.]+  \[[0-9.]+, [0-9.]+\]"
check "the scheduler's defaults named" has "$TMP/out" "max_num_batched_tokens 8192, max_num_seqs 1024"
cp "$TMP/out" "$TMP/text1"
expect_ok "the same run again" "$TPSIM" serve $S --concurrency 8 --requests 24 --isl 512 --osl 64 --interval
check "deterministic" cmp -s "$TMP/out" "$TMP/text1"
expect_ok "json" "$TPSIM" serve $S --concurrency 8 --requests 24 --isl 512 --osl 64 --interval --format json
mv "$TMP/out" "$TMP/j"
expect_ok "csv" "$TPSIM" serve $S --concurrency 8 --requests 24 --isl 512 --osl 64 --interval --format csv
mv "$TMP/out" "$TMP/j.csv"
pyq "json and csv agree; the interval holds the mean; Little's law" "$TMP/j" "$TMP/j.csv" <<'PY'
import csv, json, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 1
r = rows[0]
for k in ("mean_ttft_ms", "mean_tpot_ms", "p99_itl_ms", "mean_e2el_ms"):
    assert abs(float(r[k]) - j[k]) <= 1e-5 * abs(j[k]), k
assert j["mean_ttft_lo_ms"] <= j["mean_ttft_ms"] <= j["mean_ttft_hi_ms"]
assert j["mean_tpot_lo_ms"] < j["mean_tpot_ms"] < j["mean_tpot_hi_ms"]
assert j["requests"] == 24 and j["output_tokens"] == 24 * 64 and j["input_tokens"] == 24 * 512
# closed loop: requests/s x mean E2E <= the 8 clients, near it before the last wave drains
l = j["request_throughput"] * j["mean_e2el_ms"] / 1e3
assert 6.0 < l <= 8.0 * (1 + 1e-6), l
PY

# Poisson arrivals, lengths from a file: seeded
printf 'isl,osl,note\n128,16,a\n512,32,b\n' >"$TMP/len.csv"
expect_ok "rate and lengths" "$TPSIM" serve $S --rate 4 --requests 20 --lengths "$TMP/len.csv" --format json --seed 3
mv "$TMP/out" "$TMP/r3"
expect_ok "another seed" "$TPSIM" serve $S --rate 4 --requests 20 --lengths "$TMP/len.csv" --format json --seed 4
check "another seed, another run" not cmp -s "$TMP/out" "$TMP/r3"
pyq "the drawn lengths" "$TMP/r3" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
# each request is 128+16 or 512+32: the totals are a mix of the two
n512 = (j["input_tokens"] - 128 * 20) // (512 - 128)
assert 0 < n512 < 20 and j["output_tokens"] == 16 * (20 - n512) + 32 * n512, j
PY

# the trace: steps, requests as async slices, counters
expect_ok "trace" "$TPSIM" serve $S --concurrency 4 --requests 8 --isl 256 --osl 8 --trace "$TMP/t.json"
pyq "a Perfetto trace" "$TMP/t.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
steps = [e for e in ev if e["name"] == "step"]
req = [e for e in ev if e.get("cat") == "request" and e["name"] == "request"]
assert len(steps) > 0 and len(req) == 16, (len(steps), len(req))
assert sorted(e["ph"] for e in req) == ["b"] * 8 + ["e"] * 8
assert all(e["dur"] > 0 for e in steps)
assert any(e["ph"] == "C" for e in ev)
PY

# bad input
expect_fail2 "no load" "^tpsim: serve: give one load" "$TPSIM" serve $S
expect_fail2 "two loads" "^tpsim: serve: give one load" "$TPSIM" serve $S --concurrency 2 --rate 1
expect_fail2 "bad concurrency" "^tpsim: --concurrency: " "$TPSIM" serve $S --concurrency 0
expect_fail2 "bad format" "^tpsim: --format: 'yaml', expected text, json or csv" "$TPSIM" serve $S --concurrency 2 --format yaml
expect_fail2 "lengths and isl" "^tpsim: serve: --lengths and --isl/--osl" "$TPSIM" serve $S --concurrency 2 --lengths "$TMP/len.csv" --isl 4
expect_fail2 "a prompt longer than the KV cache" "^tpsim: serve: a request of 500000 prompt \+ 10 output tokens needs [0-9]+ KV blocks of 16 tokens; the cache holds [0-9]+ .*never finish" \
    "$TPSIM" serve $S --concurrency 2 --isl 500000 --osl 10
expect_fail2 "no room for a KV cache" "^tpsim: serve: Llama-3.1-70B at TP-1 leaves no room for a KV cache" \
    "$TPSIM" serve $S --concurrency 2 --tp 1 --set precision.weights=fp8
printf 'isl,osl\n128,x\n' >"$TMP/bad1.csv"
expect_fail2 "a bad length" "^tpsim: $TMP/bad1.csv:2:5: osl: 'x' is not an integer" "$TPSIM" serve $S --concurrency 2 --lengths "$TMP/bad1.csv"
printf 'isl,out\n128,4\n' >"$TMP/bad2.csv"
expect_fail2 "no osl column" "^tpsim: $TMP/bad2.csv:1:1: header lacks osl" "$TPSIM" serve $S --concurrency 2 --lengths "$TMP/bad2.csv"
printf 'isl,osl,isl\n128,4,5\n' >"$TMP/bad3.csv"
expect_fail2 "a duplicate column" "^tpsim: $TMP/bad3.csv:1:9: duplicate column 'isl'" "$TPSIM" serve $S --concurrency 2 --lengths "$TMP/bad3.csv"
printf 'isl,osl\n' >"$TMP/bad4.csv"
expect_fail2 "no rows" "^tpsim: $TMP/bad4.csv: no rows" "$TPSIM" serve $S --concurrency 2 --lengths "$TMP/bad4.csv"
mkdir "$TMP/dir"
expect_fail2 "a trace into a folder" "^tpsim: " "$TPSIM" serve $S --concurrency 2 --requests 2 --trace "$TMP/dir"
check "no trace left by a refused run" not compgen -G "$TMP/dir/*"

# plan on serving: each replica is tpsim serve at its share of the load
expect_ok "plan --workload" "$TPSIM" plan $S --gpus 8 --tp 4,8 --mode graphs --tpot-ms 30 --ttft-ms 2000 --workload 1024,128,16 --format csv --quiet
mv "$TMP/out" "$TMP/plan.csv"
expect_ok "plan --workload on one thread" "$TPSIM" plan $S --gpus 8 --tp 4,8 --mode graphs --tpot-ms 30 --ttft-ms 2000 --workload 1024,128,16 --format csv --quiet --jobs 1
check "the same rows on one thread as on many" cmp -s "$TMP/out" "$TMP/plan.csv"
expect_ok "serve at one replica's share" "$TPSIM" serve $S --tp 4 --concurrency 8 --max-num-seqs 8 --isl 1024 --osl 128 --format json
cp "$TMP/out" "$TMP/serve-replica.json"
pyq "plan's TP-4 row is serve's replica of 8 clients; ranked by tokens/s per GPU" "$TMP/plan.csv" "$TMP/serve-replica.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
j = json.load(open(sys.argv[2]))
r = [r for r in rows if r["tp"] == "4" and r["max_num_seqs"] == "8"][0]
assert r["clients"] == "8" and r["requests"] == "80", r
assert abs(float(r["mean_tpot_ms"]) - j["mean_tpot_ms"]) < 1e-5 and abs(float(r["mean_ttft_ms"]) - j["mean_ttft_ms"]) < 1e-5
assert abs(float(r["output_throughput_per_gpu"]) - j["output_throughput_per_gpu"]) < 1e-4
meets = [r["meets"] == "true" for r in rows]
assert meets == sorted(meets, reverse=True)
tp = [float(r["output_throughput_per_gpu"]) for r in rows if r["meets"] == "true"]
assert tp == sorted(tp, reverse=True) and tp
for r in rows:
    assert (r["meets"] == "true") == (float(r["mean_tpot_ms"]) <= 30 and float(r["mean_ttft_ms"]) <= 2000)
PY
"$TPSIM" plan $S --gpus 4 --tp 4 --mode graphs --tpot-ms 1 --workload 1024,128,8 --quiet >"$TMP/out" 2>&1
check "no configuration meets 1 ms: exit 1, the closest shown" eval "[ $? -eq 1 ] && has '$TMP/out' 'none meets'"
expect_fail2 "--ttft-ms without a workload" "^tpsim: --ttft-ms: a TTFT target needs a serving load" "$TPSIM" plan $S --gpus 4 --tpot-ms 30 --ttft-ms 100
expect_fail2 "a bad workload" "^tpsim: --workload: '1024,128', expected ISL,OSL,C" "$TPSIM" plan $S --gpus 4 --tpot-ms 30 --workload 1024,128
expect_fail2 "a bad rate" "^tpsim: --workload: " "$TPSIM" plan $S --gpus 4 --tpot-ms 30 --workload 1024,128,rx
expect_fail2 "json with a workload" "^tpsim: --format: json is not written for --workload" "$TPSIM" plan $S --gpus 4 --tpot-ms 30 --workload 1024,128,4 --format json

# the registered serving predictions: a sample of cells regenerates byte for byte
expect_ok "sample of the serving predictions" scripts/predictions-serving.sh "$TPSIM" "$TMP/ps.csv" 50
pyq "the sample matches the registered rows" "$TMP/ps.csv" docs/predictions-serving.csv docs/serving-cells.csv <<'PY'
import sys
got = open(sys.argv[1]).read().split("\n")
reg = open(sys.argv[2]).read().split("\n")
cells = [l for l in open(sys.argv[3]).read().split("\n") if l and not l.startswith("#")][1:]
assert got[0] == reg[0]
assert len(reg) == len(cells) + 2, "one row per cell"
sample = [reg[1 + i] for i in range(0, len(cells), 50)]
assert got[1:-1] == sample, (got[1:3], sample[:2])
for row, cell in zip(reg[1:-1], cells):
    assert row.startswith(cell.rsplit(",", 0)[0]), (row, cell)
PY
pyq "the first registration is kept: the same cells" docs/predictions-serving-2026-12-03-v1.csv docs/predictions-serving.csv <<'PY'
import csv, sys
old, new = (list(csv.DictReader(open(p, newline=""))) for p in sys.argv[1:])
cell = lambda r: tuple(r[k] for k in ("model", "precision", "gpu", "tp", "isl", "osl", "concurrency"))
assert [cell(r) for r in old] == [cell(r) for r in new]
assert old[0]["mean_tpot_ms"] == "16.604", old[0]
PY
finish
