#!/usr/bin/env bash
# json_schema.sh: every command's --format json on the bundled data against its schema in
# docs/schema/ (an unknown key, a missing one or a wrong type fails), the shared vocabulary of
# docs/json.md (a key has one type everywhere). (The CSV files tpsim writes or ships, read with
# Python's csv defaults: tests/cli/csv_pandas.sh.) The checker is tests/cli/jsonschema.py
# (standard library only).
. tests/cli/lib.sh
# the checker (tests/cli/jsonschema.py) by its main, in checks queued with pyq (one Python)
JS='import sys; sys.path.insert(0, "tests/cli"); import jsonschema; st = jsonschema.main(sys.argv[1:])'
S=docs/schema
B200=tests/data/TraceLens__b200__vllm_tp8_eager_step.json.gz
MI=tests/data/TraceLens__vllm_decode_full_graph_mi300x.json.gz
V70=tests/data/vidur-h100/llama-2-70b-mlp.csv
ATT=tests/data/attention-h100/decode.csv
LOG=tests/data/h100-8gpu-ring-all_reduce_perf.out

# schema NAME CASE CMD...: CMD's stdout (status 0, or 1 for plan's unmet target) against
# docs/schema/NAME.json
schema() {
    local name=$1 case=$2; shift 2
    "$@" >"$TMP/$name-$case.json" 2>"$TMP/err"; local rc=$?
    if [ "$rc" -gt 1 ]; then bad "$name $case: exit $rc: $(head -c 300 "$TMP/err")"; return; fi
    pyq "$name $case matches $S/$name.json (why on stderr)" check "$S/$name.json" \
        "$TMP/$name-$case.json" <<<"$JS; sys.exit(st)"
}

# --- the checker itself catches each kind of error --------------------------------------------
cat >"$TMP/s.json" <<'JSON'
{"type": "object", "required": ["tp", "mode"], "additionalProperties": false,
 "properties": {"tp": {"type": "integer"}, "mode": {"type": "string"},
                "calibration": {"type": ["string", "null"]},
                "rows": {"type": "array", "items": {"$ref": "#/$defs/row"}}},
 "$defs": {"row": {"type": "object", "required": ["us"], "additionalProperties": false,
                   "properties": {"us": {"type": "number"}}}}}
JSON
printf '{"tp": 4, "mode": "eager", "calibration": null, "rows": [{"us": 1.5}, {"us": 2}]}' \
    >"$TMP/good.json"
pyq "checker: a matching document passes" check "$TMP/s.json" "$TMP/good.json" <<<"$JS; sys.exit(st)"
i=0
for bad_doc in '{"tp": 4}' '{"tp": 4, "mode": "eager", "k": 4}' '{"tp": 4.5, "mode": "eager"}' \
               '{"tp": true, "mode": "eager"}' '{"tp": 4, "mode": "eager", "calibration": {}}' \
               '{"tp": 4, "mode": "eager", "rows": [{"us": "1"}]}' \
               '{"tp": 4, "mode": "eager", "rows": [{"us": 1, "ms": 1}]}'; do
    i=$((i + 1))
    printf '%s' "$bad_doc" >"$TMP/bad$i.json"
    pyq "checker refuses $bad_doc" check "$TMP/s.json" "$TMP/bad$i.json" \
        <<<"$JS; assert st == 1, st"
done

# --- every output against its schema ----------------------------------------------------------
schema run tp4 "$TPSIM" run eager-host-dispatch --tp 4 --format json
schema run tp1 "$TPSIM" run eager-host-dispatch --tp 1 --steps 2 --format json
schema run graphs "$TPSIM" run vllm-graphs --tp 4 --batch 8 --steps 2 --format json
schema run borrowed "$TPSIM" run eager-host-dispatch --tp 2 --steps 2 --set hardware=h200 \
    --set "calibration_from=H100 SXM" --format json
expect_ok "trace import -o" "$TPSIM" trace import "$B200" --hardware models/hw/b200.yaml \
    -o "$TMP/b200.yaml"
schema run measured "$TPSIM" run eager-host-dispatch --tp 1 --steps 2 --measured "$TMP/b200.yaml" \
    --set hardware=b200 --set "calibration_from=H100 SXM" --format json
schema run measured-foreign "$TPSIM" run eager-host-dispatch --tp 2 --steps 2 \
    --measured "$TMP/b200.yaml" --allow-foreign-calib --format json
schema sweep grid "$TPSIM" sweep eager-host-dispatch --tp 1,4 --batch 1,8 --mode eager,graphs \
    --steps 2 --quiet --format json
schema validate within "$TPSIM" validate paper-additive --format json
schema validate transfer "$TPSIM" validate eager-host-dispatch --transfer 2:4 --quiet --format json
schema validate graphs "$TPSIM" validate cuda-graphs --quiet --format json
schema validate no-baseline "$TPSIM" validate vllm-graphs --quiet --format json
schema plan intervals "$TPSIM" plan eager-host-dispatch --gpus 8 --tpot-ms 30 --ctx 2048 \
    --batch-max 16 --quiet --format json
schema plan unmet "$TPSIM" plan eager-host-dispatch --gpus 8 --tpot-ms 8 --ctx 2048 \
    --batch-max 4 --no-intervals --quiet --format json
schema serve load "$TPSIM" serve serve-h100 --concurrency 4 --requests 8 --isl 256 --osl 16 --interval --format json
schema serve rate "$TPSIM" serve serve-h100 --rate 2 --requests 4 --isl 128 --osl 4 --format json
schema allreduce log "$TPSIM" allreduce --tp 8 --model nccl-fit --log "$LOG" --format json
schema allreduce auto "$TPSIM" allreduce --tp 4 --sizes 16K..1M --format json
schema allreduce tuner "$TPSIM" allreduce --tp 8 --model nccl-tuner --sizes 16K..1M --format json
schema fit-allreduce log "$TPSIM" fit-allreduce "$LOG" --format json
schema fit-allreduce tuner "$TPSIM" fit-allreduce "$LOG" --tuner 2.26.2 --format json
schema fit-allreduce output "$TPSIM" fit-allreduce "$LOG" --format json -o "$TMP/ar.yaml"
schema fit-kernels fit "$TPSIM" fit-kernels "$V70" "$ATT" --format json
schema fit-kernels probe "$TPSIM" fit-kernels tests/data/kfit/probe-synthetic.yaml --format json
expect_ok "fit-kernels -o" "$TPSIM" fit-kernels "$V70" "$ATT" --hardware "H100 SXM" -o "$TMP/k.yaml"
schema fit-kernels-test 7b "$TPSIM" fit-kernels --test tests/data/vidur-h100/llama-2-7b-mlp.csv \
    --calib "$TMP/k.yaml" --format json
schema trace-import b200 "$TPSIM" trace import "$B200" --format json
expect_ok "trace import --kernels" "$TPSIM" trace import "$B200" --kernels "$TMP/kern.csv"
schema fit-kernels trace "$TPSIM" fit-kernels "$TMP/kern.csv" --format json
schema trace-import mi300x "$TPSIM" trace import "$MI" --format json
schema trace-import two-ranks "$TPSIM" trace import tests/data/trace-synth-rank0.json \
    tests/data/trace-synth-rank1.json --format json
schema trace-import nsys "$TPSIM" trace import \
    tests/data/pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite --format json
schema trace-import hta "$TPSIM" trace import \
    tests/data/HTA__nccl_parser_config__nccl_data_a100_2rank.json.gz --format json
expect_ok "run --trace" "$TPSIM" run eager-host-dispatch --tp 2 --steps 2 --trace "$TMP/sim.json"
schema trace-compare b200 "$TPSIM" trace compare "$B200" "$TMP/sim.json" --format json

# the issue's drifts, by name: one calibration type, tp not k, priced_by, sweep's memory
pyq "calibration is a path (or null) in run, sweep, plan and allreduce" "$TMP" <<'PY'
import json, sys
t = sys.argv[1]
run, tp1 = json.load(open(f"{t}/run-tp4.json")), json.load(open(f"{t}/run-tp1.json"))
sweep, ar = json.load(open(f"{t}/sweep-grid.json")), json.load(open(f"{t}/allreduce-auto.json"))
plan = json.load(open(f"{t}/plan-intervals.json"))["contexts"][0]["winner"]
assert run["calibration"].endswith("h100-sxm-tp4.yaml") and tp1["calibration"] is None, run
assert ar["calibration"].endswith("h100-sxm-tp4.yaml") and plan["calibration"].endswith(".yaml")
assert [r["calibration"] is None for r in sweep] == [r["tp"] == 1 for r in sweep], sweep
PY
check "fit-allreduce says tp" has "$TMP/fit-allreduce-log.json" '"tp":8,'
pyq "run's all-reduce is priced_by, as allreduce's rows" "$TMP" <<'PY'
import json, sys
t = sys.argv[1]
run, ar = json.load(open(f"{t}/run-tp4.json")), json.load(open(f"{t}/allreduce-auto.json"))
# (eager-host-dispatch asks for auto, vLLM's custom all-reduce at TP-4's 16 KiB calls)
assert run["allreduce_call"]["priced_by"] == "vllm-custom" and ar["collective_model"] == "auto"
assert {r["priced_by"] for r in ar["rows"]} <= {"vllm-custom", "nccl-fit", "nccl-tuner"}, ar
PY
# weights: 70B's 80 layers x (8192 x (2 x 8192 + 2 x 1024) + 3 x 8192 x 28672) + 2 x 128256 x
# 8192 parameters (plus norms) of 2 bytes over 4 ranks ~ 35.3 GB; KV: 2 x 80 x 1024 / 4 x 2
# bytes x batch x ctx
pyq "sweep rows carry weights and KV cache per rank, as run" "$TMP" <<'PY'
import json, sys
t = sys.argv[1]
run = json.load(open(f"{t}/run-tp4.json"))
rows = [r for r in json.load(open(f"{t}/sweep-grid.json")) if r["tp"] == 4 and r["mode"] == "eager"]
for r in rows:
    kv = 2 * 80 * 1024 / 4 * 2 * r["batch"] * r["ctx"] / 1e9
    assert abs(r["kv_cache_gb_per_rank"] - kv) < 1e-9, (r, kv)
    w = r["weights_gb_per_rank"]
    assert abs(w - run["weights_gb_per_rank"]) < 1e-9 and 35 < w < 35.6, r
PY

# --- the vocabulary: one type per key, the shared keys written down -----------------------------
pyq "one vocabulary (docs/json.md)" vocab "$S" docs/json.md <<<"$JS; sys.exit(st)"
sed 's/^| `tp` | integer |/| `tp` | string |/' docs/json.md >"$TMP/json.md"
pyq "the vocabulary check fails on a key of another type" vocab "$S" "$TMP/json.md" \
    <<<"$JS; assert st == 1, st"
mkdir -p "$TMP/schema" && cp "$S"/*.json "$TMP/schema/"
sed -i 's/"kv_cache_gb_per_rank"/"kv_gb_per_rank"/' "$TMP/schema/sweep.json" "$TMP/schema/plan.json"
pyq "the vocabulary check fails on a shared key missing from the table" vocab "$TMP/schema" \
    docs/json.md <<<"$JS; assert st == 1, st"

# --- CSV files read with Python's csv defaults: tests/cli/csv_pandas.sh checks the same kinds of
# CSV (sweep, plan, trace import --kernels, validate --scan), which it writes for pandas, and
# docs/*.csv and validate/*.csv, with Python's csv defaults beside pandas

finish
