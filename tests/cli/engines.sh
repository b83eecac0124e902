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
js() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$TMP/out" "$1"; }
for e in vllm-v0 vllm-v1 vllm-v1-async; do
    for b in 1 16; do
        expect_ok "$e b$b" "$TPSIM" run "$S" --set engine=$e --batch $b --format json
        with=$(js 'd["step_ms"]["mean"]'); idle=$(js 'd["gpu_idle_split_ms"]["step_work"]')
        expect_ok "$e b$b no phases" "$TPSIM" run "$S" --set engine=$e --batch $b --format json "${ZERO[@]}"
        without=$(js 'd["step_ms"]["mean"]'); idle0=$(js 'd["gpu_idle_split_ms"]["step_work"]')
        check "$e b$b: the next step's first launch waits the serialised phases, none of the overlapped" \
            python3 - "models/host/$e.yaml" "$b" "$with" "$without" "$idle" "$idle0" <<'PY'
import re, sys
path, b = sys.argv[1], int(sys.argv[2])
w, wo, idle, idle0 = map(float, sys.argv[3:])
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
check "v1 and v1-async: the same phases" bash -c "diff <(grep -E '^  [a-z_]+: \{' models/host/vllm-v1.yaml) <(grep -E '^  [a-z_]+: \{' models/host/vllm-v1-async.yaml)"
check "v0: the old host-phase file's numbers" bash -c "diff <(grep -E '^  [a-z_]+: \{' models/host/vllm.yaml) <(grep -E '^  [a-z_]+: \{' models/host/vllm-v0.yaml)"

# CUDA-graph modes: launches per step from the architecture (Llama-3.1-70B: 80 layers)
for m in eager:0 graphs:1 full:1 piecewise:81; do
    expect_ok "mode ${m%%:*}" "$TPSIM" run "$S" --set execution.mode=${m%%:*} --format json
    check "mode ${m%%:*}: ${m##*:} graph launches" python3 -c "import json; d=json.load(open('$TMP/out')); assert d['graph_launches_per_step'] == ${m##*:}, d['graph_launches_per_step']"
done
check "the MI300X full-graph trace: one hipGraphLaunch in its decode step" python3 -c "
import gzip, json
ev = json.load(gzip.open('tests/data/TraceLens__vllm_decode_full_graph_mi300x.json.gz'))['traceEvents']
assert sum(e.get('name') == 'hipGraphLaunch' for e in ev) == 1"
expect_ok "piecewise text" "$TPSIM" run "$S" --set execution.mode=piecewise
check "text: 81 launches, the attention ops eager" grep -q "^graphs     81 cudaGraphLaunches per step .* 177 ops launched eagerly$" "$TMP/out"
check "text: PIECEWISE named" grep -q "^serving    vllm-v0 (models/host/vllm-v0.yaml): host phases serialised, PIECEWISE CUDA graphs$" "$TMP/out"

# the engine named in every output
expect_ok "run text" "$TPSIM" run "$S" --set engine=vllm-v1-async
check "run text names it" grep -q "^serving    vllm-v1-async (models/host/vllm-v1-async.yaml): host phases overlapped, FULL CUDA graph$" "$TMP/out"
expect_ok "run json" "$TPSIM" run "$S" --set engine=vllm-v1 --format json
check "run json names it" python3 -c "import json; d=json.load(open('$TMP/out')); assert (d['serving_engine'], d['graph_mode'], d['serving_engine_file']) == ('vllm-v1', 'full', 'models/host/vllm-v1.yaml'), d"
expect_ok "sweep csv" "$TPSIM" sweep "$S" --set engine=vllm-v1 --tp 4 --batch 1 --steps 2
check "sweep csv column" python3 -c "import csv; r=list(csv.DictReader(open('$TMP/out'))); assert r[0]['serving_engine'] == 'vllm-v1' and r[0]['graph_mode'] == 'full', r"
expect_ok "validate text" "$TPSIM" validate scenarios/eager-host-dispatch.yaml --grid validate/h100-ctx2048.csv --within --set engine=vllm-v1
check "validate names it" grep -q "^engine vllm-v1 (models/host/vllm-v1.yaml): host phases serialised$" "$TMP/out"
expect_ok "plan text" "$TPSIM" plan scenarios/eager-host-dispatch.yaml --gpus 8 --tpot-ms 30 --batch 1 --steps 1 --set engine=vllm-v1-async
check "plan names it" grep -q "^engine: vllm-v1-async prices every row's host work" "$TMP/out"
# a scenario validated under one engine (its validated: block's engine: vllm-v0), run under
# another: marked
expect_ok "validated engine, inside" "$TPSIM" run scenarios/eager-host-dispatch.yaml --format json
check "inside under its engine" python3 -c "import json; d=json.load(open('$TMP/out')); assert d['domain']['inside'] and d['domain']['validated']['engine'] == 'vllm-v0', d['domain']"
expect_ok "validated engine, another" "$TPSIM" run scenarios/eager-host-dispatch.yaml --format json --set engine=vllm-v1
check "marked under another" python3 -c "import json; d=json.load(open('$TMP/out')); assert 'engine vllm-v1 was never validated (only vllm-v0)' in d['domain']['marks'], d['domain']"

# host.collective: measured: the calibration's eager dispatch (18.26 us at H100 TP-4) less the
# copy-in's own launch (8 us in vllm-graphs) where the eager custom all-reduce copies in
sed "s|^  collective: {dist: constant, mean_us: 8}|  collective: measured|; /key: host.collective.mean_us/d; s|\.\./models|$PWD/models|g" "$S" >"$TMP/meas.yaml"
expect_ok "measured dispatch, eager" "$TPSIM" run "$TMP/meas.yaml" --set execution.mode=eager --format json
check "18.26 - 8 us" python3 -c "import json; d=json.load(open('$TMP/out')); assert abs(d['collective_host_us'] - 10.26) < 1e-9, d['collective_host_us']"
expect_ok "measured dispatch, text" "$TPSIM" run "$TMP/meas.yaml" --set execution.mode=eager
check "text says so" grep -q "^collective host 10.26 us per launch: the calibration's measured eager dispatch" "$TMP/out"

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
