# trace_phases.sh: trace import derives vLLM's host phases (sim/phase.h) from the Python
# function events of a with_stack trace; the MI300X graph-mode decode trace's prepare_inputs
# is recomputed here from the same file in python; the -o file carries it and a scenario
# takes it through --measured; a bad phase key in a measured file gets one line.
source tests/cli/lib.sh
TR=tests/data/TraceLens__vllm_decode_full_graph_mi300x.json.gz
expect_ok "import json" "$TPSIM" trace import "$TR" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "prepare_inputs = the step's _update_states + _prepare_inputs, derived in python" "$TR" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import gzip, json, sys
ev = json.load(gzip.open(sys.argv[1]))["traceEvents"]
step = [e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("execute_")]
assert len(step) == 1
t0, t1 = step[0]["ts"], step[0]["ts"] + step[0]["dur"]
want = sum(e["dur"] for e in ev if e.get("cat") == "python_function" and t0 <= e["ts"] < t1
           and e["name"].split("): ")[-1] in ("_update_states", "_prepare_inputs")
           and "model_runner" in e["name"])
assert abs(want - 911.876) < 0.01, want          # 265.3 + 646.6 us, the numbers the scenario cites
got = json.load(open(sys.argv[2]))["host_phases_us"]
assert list(got) == ["prepare_inputs"], got      # the trace times no other phase
assert got["prepare_inputs"]["n"] == 1 and abs(got["prepare_inputs"]["mean"] - want) < 0.01, (got, want)
PY
expect_ok "import -o" "$TPSIM" trace import "$TR" -o "$TMP/mi.yaml"
check "text names the phase" match "$TMP/out" '^  prepare_inputs +911\.88 us mean'
check "-o has host.phases.prepare_inputs" match "$TMP/mi.yaml" '^      mean_us: 911.8760$'
check "-o apply list has it" match "$TMP/mi.yaml" '^  - host.phases.prepare_inputs.mean_us=911.8760$'
expect_ok "scenario takes it" "$TPSIM" run scenarios/vllm-graphs.yaml --measured "$TMP/mi.yaml" --format json
# the trace timed the phase at its own batch: its 911.876 us is the whole phase, with no
# per-sequence term of the host model's added on top (that term is 19.125 us at batch 1)
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "run uses the measured phase, and only it" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d["host_phases"]["ms"]["prepare_inputs"] - 0.911876) < 1e-9, d["host_phases"]
keys = {s["key"]: s["value"] for s in d["measured"]["set"]}
assert "host.phases.prepare_inputs.mean_us" in keys, keys
assert keys["host.phases.prepare_inputs.per_seq_us"] == 0, keys

PY
expect_ok "measured phase at batch 16" "$TPSIM" run scenarios/vllm-graphs.yaml --measured "$TMP/mi.yaml" --format json --batch 16
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "batch 16: the measured phase stays the trace's value" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d["host_phases"]["ms"]["prepare_inputs"] - 0.911876) < 1e-9, d["host_phases"]

PY
# the B200 eager trace (with_stack, one 888-token prefill step) times the same phase
B2=tests/data/TraceLens__b200__vllm_tp8_eager_step.json.gz
expect_ok "B200 eager trace" "$TPSIM" trace import "$B2" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "B200 prepare_inputs, derived in python" "$B2" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import gzip, json, sys
ev = json.load(gzip.open(sys.argv[1]))["traceEvents"]
step = [e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("execute_")]
t0, t1 = step[0]["ts"], step[0]["ts"] + step[0]["dur"]
pid = step[0]["pid"]
want = sum(e["dur"] for e in ev if e.get("cat") == "python_function" and t0 <= e["ts"] < t1
           and e.get("pid") == pid and "model_runner" in e["name"]
           and e["name"].split("): ")[-1] in ("_update_states", "_prepare_inputs", "prepare_model_input"))
got = json.load(open(sys.argv[2]))["host_phases_us"]
assert want > 0 and abs(got["prepare_inputs"]["mean"] - want) < 0.01, (got, want)
PY
sed 's/^    prepare_inputs:/    prepare_input:/' "$TMP/mi.yaml" >"$TMP/bad.yaml"
expect_fail2 "bad phase name in a measured file" "bad.yaml:[0-9]+:[0-9]+: .*unknown key 'prepare_input' in host.phases" \
    "$TPSIM" run scenarios/vllm-graphs.yaml --measured "$TMP/bad.yaml"
finish
