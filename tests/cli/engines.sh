# engines.sh: the vLLM engine files (models/host/vllm-v0, vllm-v1, vllm-v1-async; sim/phase.h):
# which phases delay the next step's first launch and by how much, in closed form from the
# files' own numbers; CUDA-graph modes by launch count; the engine named in every output;
# --set engine= swaps it; host.collective: measured takes the calibration's eager dispatch.
source tests/cli/lib.sh
S=scenarios/vllm-graphs.yaml   # graph mode: the GPU's work after the one launch is ms long
ZERO=()
for p in schedule broadcast prepare_inputs sampler_sync output_processing; do
    ZERO+=(--set "host.phases.$p.mean_us=0" --set "host.phases.$p.per_seq_us=0")
done
# (each run's JSON kept, read by a queued check: one Python for them all)
for e in vllm-v0 vllm-v1 vllm-v1-async; do
    for b in 1 16; do
        expect_ok "$e b$b" "$TPSIM" run "$S" --set engine=$e --batch $b --format json
        cp "$TMP/out" "$TMP/$e-b$b.json"
        expect_ok "$e b$b no phases" "$TPSIM" run "$S" --set engine=$e --batch $b --format json "${ZERO[@]}"
        cp "$TMP/out" "$TMP/$e-b$b-0.json"
        pyq "$e b$b: the next step's first launch waits the serialised phases, none of the overlapped" \
            "models/host/$e.yaml" "$b" "$TMP/$e-b$b.json" "$TMP/$e-b$b-0.json" <<'PY'
import json, re, sys
path, b = sys.argv[1], int(sys.argv[2])
d, d0 = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
w, wo = d["step_ms"]["mean"], d0["step_ms"]["mean"]
idle, idle0 = d["gpu_idle_split_ms"]["step_work"], d0["gpu_idle_split_ms"]["step_work"]
text = open(path).read()
mode = re.search(r"^host_phases: (\w+)", text, re.M).group(1)
total = 0.0   # mean_us + per_seq_us x batch of each phase, from the file
for m in re.finditer(r"^  (schedule|broadcast|prepare_inputs|sampler_sync|output_processing): \{(.*)\}", text, re.M):
    f = dict(kv.split(": ") for kv in m.group(2).split(", "))
    total += float(f["mean_us"]) + float(f.get("per_seq_us", 0)) * b
want = total / 1000 if mode == "serialised" else 0.0   # overlapped: hidden behind the GPU's ms
assert abs((w - wo) - want) < 1e-6, (mode, w, wo, want)
assert abs((idle - idle0) - want) < 1e-6, (mode, idle, idle0, want)
PY
    done
done
# V1's phases are V1-async's, only placed differently
phase_lines='import re, sys
a, b = ([l for l in open(f).read().split("\n") if re.match(r"  [a-z_]+: \{", l)] for f in sys.argv[1:])
assert a == b, (a, b)'
pyq "v1 and v1-async: the same phases" models/host/vllm-v1.yaml models/host/vllm-v1-async.yaml <<<"$phase_lines"
pyq "v0: the old host-phase file's numbers" models/host/vllm.yaml models/host/vllm-v0.yaml <<<"$phase_lines"

# CUDA-graph modes: launches per step from the architecture (Llama-3.1-70B: 80 layers)
for m in eager:0 graphs:1 full:1 piecewise:81; do
    expect_ok "mode ${m%%:*}" "$TPSIM" run "$S" --set execution.mode=${m%%:*} --format json
    cp "$TMP/out" "$TMP/mode-${m%%:*}.json"
    pyq "mode ${m%%:*}: ${m##*:} graph launches" "$TMP/mode-${m%%:*}.json" "${m##*:}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['graph_launches_per_step'] == int(sys.argv[2]), d['graph_launches_per_step']
PY
done
pyq "the MI300X full-graph trace: one hipGraphLaunch in its decode step" <<'PY'
import gzip, json
ev = json.load(gzip.open('tests/data/TraceLens__vllm_decode_full_graph_mi300x.json.gz'))['traceEvents']
assert sum(e.get('name') == 'hipGraphLaunch' for e in ev) == 1
PY
expect_ok "piecewise text" "$TPSIM" run "$S" --set execution.mode=piecewise
check "text: 81 launches, the attention ops eager" match "$TMP/out" "^graphs     81 cudaGraphLaunches per step .* 177 ops launched eagerly$"
check "text: PIECEWISE named" has_line "$TMP/out" "serving    vllm-v0 (models/host/vllm-v0.yaml): host phases serialised, PIECEWISE CUDA graphs"

# the engine named in every output
expect_ok "run text" "$TPSIM" run "$S" --set engine=vllm-v1-async
check "run text names it" has_line "$TMP/out" "serving    vllm-v1-async (models/host/vllm-v1-async.yaml): host phases overlapped, FULL CUDA graph"
expect_ok "run json" "$TPSIM" run "$S" --set engine=vllm-v1 --format json
cp "$TMP/out" "$TMP/run-v1.json"
pyq "run json names it" "$TMP/run-v1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert (d['serving_engine'], d['graph_mode'], d['serving_engine_file']) == ('vllm-v1', 'full', 'models/host/vllm-v1.yaml'), d
PY
expect_ok "sweep csv" "$TPSIM" sweep "$S" --set engine=vllm-v1 --tp 4 --batch 1 --steps 2
cp "$TMP/out" "$TMP/sweep-v1.csv"
pyq "sweep csv column" "$TMP/sweep-v1.csv" <<'PY'
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))
assert r[0]['serving_engine'] == 'vllm-v1' and r[0]['graph_mode'] == 'full', r
PY
expect_ok "validate text" "$TPSIM" validate scenarios/eager-host-dispatch.yaml --grid validate/h100-ctx2048.csv --within --set engine=vllm-v1
check "validate names it" has_line "$TMP/out" "engine vllm-v1 (models/host/vllm-v1.yaml): host phases serialised"
expect_ok "plan text" "$TPSIM" plan scenarios/eager-host-dispatch.yaml --gpus 8 --tpot-ms 30 --batch 1 --steps 1 --set engine=vllm-v1-async
check "plan names it" match "$TMP/out" "^engine: vllm-v1-async prices every row's host work"
# a scenario validated under one engine (its validated: block's engine: vllm-v0), run under
# another: marked
expect_ok "validated engine, inside" "$TPSIM" run scenarios/eager-host-dispatch.yaml --format json
cp "$TMP/out" "$TMP/inside.json"
pyq "inside under its engine" "$TMP/inside.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['domain']['inside'] and d['domain']['validated']['engine'] == 'vllm-v0', d['domain']
PY
expect_ok "validated engine, another" "$TPSIM" run scenarios/eager-host-dispatch.yaml --format json --set engine=vllm-v1
cp "$TMP/out" "$TMP/another.json"
pyq "marked under another" "$TMP/another.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert 'engine vllm-v1 was never validated (only vllm-v0)' in d['domain']['marks'], d['domain']
PY

# host.collective: measured: the calibration's eager dispatch (18.26 us at H100 TP-4) less the
# copy-in's own launch (8 us in vllm-graphs) where the eager custom all-reduce copies in
sed "s|^  collective: {dist: constant, mean_us: 8}|  collective: measured|; /key: host.collective.mean_us/d; s|\.\./models|$PWD/models|g" "$S" >"$TMP/meas.yaml"
expect_ok "measured dispatch, eager" "$TPSIM" run "$TMP/meas.yaml" --set execution.mode=eager --format json
cp "$TMP/out" "$TMP/meas.json"
pyq "18.26 - 8 us" "$TMP/meas.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d['collective_host_us'] - 10.26) < 1e-9, d['collective_host_us']
PY
expect_ok "measured dispatch, text" "$TPSIM" run "$TMP/meas.yaml" --set execution.mode=eager
check "text says so" match "$TMP/out" "^collective host 10.26 us per launch: the calibration's measured eager dispatch"

# bad input: one line, status 2
expect_fail2 "unknown engine" "engine: .*vllm-v9" "$TPSIM" run "$S" --set engine=vllm-v9
expect_fail2 "an engine and a phase file" "the scenario names an engine .* and a host-phase file" \
    "$TPSIM" run "$S" --set phases=vllm
expect_fail2 "engine names a host-phase file" "is a host-phase file, expected an engine file" \
    "$TPSIM" run "$S" --set engine=vllm
expect_fail2 "unknown graph mode" "execution.mode: 'cudagraph' is not allowed, expected one of: eager, graphs, full, piecewise" \
    "$TPSIM" run "$S" --set execution.mode=cudagraph
sed 's/^graph_mode: full/graph_mode: partial/' models/host/vllm-v1.yaml >"$TMP/e-bad.yaml"
expect_fail2 "bad graph_mode in an engine file" "e-bad.yaml:[0-9]+:[0-9]+: graph_mode: 'partial' is not allowed" \
    "$TPSIM" run "$S" --set engine=$TMP/e-bad.yaml
sed 's/^name: vllm-v1$/name: "V1 engine"/' models/host/vllm-v1.yaml >"$TMP/e-name.yaml"
expect_fail2 "bad engine name" "e-name.yaml:[0-9]+:[0-9]+: name: 'V1 engine', expected a name of lower-case letters" \
    "$TPSIM" run "$S" --set engine=$TMP/e-name.yaml
sed "s|^execution:|execution:\n  host_phases: overlapped|; s|\.\./models|$PWD/models|g" "$S" >"$TMP/e-hp.yaml"
expect_fail2 "engine and execution.host_phases" "e-hp.yaml:[0-9]+:[0-9]+: .*says how its phases meet the GPU" \
    "$TPSIM" run "$TMP/e-hp.yaml"
expect_fail2 "engine_declared by --set" "^tpsim: --set:1:1: engine_declared is tpsim's own record" \
    "$TPSIM" run "$S" --set engine_declared.name=forged
sed "s|^  collective: {dist: constant, mean_us: 8}|  collective: always|; s|\.\./models|$PWD/models|g" "$S" >"$TMP/e-coll.yaml"
expect_fail2 "host.collective: a word" "e-coll.yaml:[0-9]+:[0-9]+: .*'always', expected a dist .* or measured" \
    "$TPSIM" run "$TMP/e-coll.yaml"
finish
