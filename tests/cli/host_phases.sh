# host_phases.sh: the per-step host phases (sim/phase.h) through a scenario. Serialised, the
# step grows by their sum (mean_us + per_seq_us x batch, read from the YAML here); overlapped,
# only by their excess over the GPU's time; every phase number must be declared for validate;
# bad keys and values get one line.
source tests/cli/lib.sh
P=models/host/vllm.yaml      # the host-phase file S names (phases:): vLLM V0's phases alone
S="$TMP/vllm-graphs.yaml"    # vllm-graphs naming that file instead of its engine (vllm-v0)
sed "s|^engine: .*|phases: $PWD/$P|; s|\.\./models|$PWD/models|g" scenarios/vllm-graphs.yaml >"$S"
ZERO=()
for p in schedule broadcast prepare_inputs sampler_sync output_processing; do
    ZERO+=(--set "host.phases.$p.mean_us=0")
done
ZERO+=(--set host.phases.prepare_inputs.per_seq_us=0 --set host.phases.output_processing.per_seq_us=0)

# keep NAME: $TMP/out (a run's JSON) kept as $TMP/run-NAME.json for the queued checks, which
# read its mean step with STEP's step(NAME) (one Python for them all)
keep() { cp "$TMP/out" "$TMP/run-$1.json"; }
STEP='import json, sys
step = lambda name: json.load(open("%s/run-%s.json" % (sys.argv[1], name)))["step_ms"]["mean"]'
for b in 1 16; do
    expect_ok "phases b$b" "$TPSIM" run "$S" --batch $b --format json && keep with$b
    expect_ok "no phases b$b" "$TPSIM" run "$S" --batch $b --format json "${ZERO[@]}" && keep without$b
    pyq "serialised b$b: step grows by the phases' sum" "$TMP" "$P" "$b" <<PY
$STEP
import re
path, b, w, wo = sys.argv[2], int(sys.argv[3]), step("with$b"), step("without$b")
total = 0.0
for line in open(path):
    m = re.match(r"\s+(schedule|broadcast|prepare_inputs|sampler_sync|output_processing): \{(.*)\}", line)
    if m:
        f = dict(kv.split(": ") for kv in m.group(2).split(", "))
        total += float(f["mean_us"]) + float(f.get("per_seq_us", 0)) * b
assert total > 2000, total                      # the scenario has ms of phases
assert abs((w - wo) - total / 1000) < 1e-6, (w, wo, total)
PY
    expect_ok "overlapped b$b" "$TPSIM" run "$S" --batch $b --format json --set execution.host_phases=overlapped &&
        keep over$b
    pyq "overlapped b$b: hidden behind the GPU" "$TMP" <<PY
$STEP
over, without = step("over$b"), step("without$b")
assert abs(over - without) < 1e-9, (over, without)
PY
done
# overlapped phases longer than the GPU's step: only the excess shows
expect_ok "overlapped, 40 ms schedule" "$TPSIM" run "$S" --format json --set execution.host_phases=overlapped \
    --set host.phases.schedule.mean_us=40000 && keep big
expect_ok "serialised, 40 ms schedule" "$TPSIM" run "$S" --format json --set host.phases.schedule.mean_us=40000 &&
    keep bigser
pyq "overlapped: step = launches + phases, below serialised by the GPU's time" "$TMP" <<PY
$STEP
big, bigser = step("big"), step("bigser")
tot = 40 + 0.87 + 0.319125 + 0.2
assert tot < big < tot + 1.0, big       # the host's launches before the phases: under 1 ms
assert bigser - big > 10, (bigser, big)
PY
expect_ok "json names the phases" "$TPSIM" run "$S" --format json --batch 16
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "json host_phases" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["host_phases"]
assert h["timing"] == "serialised" and list(h["ms"]) == ["schedule", "broadcast", "prepare_inputs", "sampler_sync", "output_processing"], h
assert abs(h["ms"]["output_processing"] - (0.09677 + 0.10323 * 16)) < 1e-9 and abs(h["total_ms"] - sum(h["ms"].values())) < 1e-12, h

PY
expect_ok "text names the phases" "$TPSIM" run "$S"
check "text host phases line" has_line "$TMP/out" "host phases serialised per step (ms at batch 1): schedule 0.870 + broadcast 0.870 + prepare_inputs 0.319 + sampler_sync 0.000 + output_processing 0.200 = 2.259"
expect_ok "no phases, no line" "$TPSIM" run scenarios/paper-additive.yaml
check "paper-additive has no phases line" not match "$TMP/out" '^host phases'

# validate: a phase number nobody declared is refused at its line (written inline here)
python3 - "$S" "$P" "$TMP/undeclared.yaml" <<'PY'
import re, sys
scn, phases, out = sys.argv[1:]
inline = "  phases:\n" + "".join("  " + l for l in open(phases) if re.match(r"  \w+: \{dist", l))
s = open(scn).read()
s = re.sub(r"^phases: .*\n", "", s, flags=re.M).replace("\nexecution:", "\n" + inline + "execution:")
open(out, "w").write(s)
PY
sed -i "s|\.\./models|$PWD/models|g" "$TMP/undeclared.yaml"
expect_fail2 "undeclared phase" "undeclared.yaml:[0-9]+:[0-9]+: host.phases.schedule.mean_us: a number the grid could inform is neither fitted" \
    "$TPSIM" validate "$TMP/undeclared.yaml" --grid validate/h100-ctx2048.csv
expect_ok "inline phases run" "$TPSIM" run "$TMP/undeclared.yaml" --batch 16 --format json && keep inl
expect_ok "file phases run" "$TPSIM" run "$S" --batch 16 --format json && keep fil
pyq "inline phases = the file's" "$TMP" <<PY
$STEP
inl, fil = step("inl"), step("fil")
assert inl == fil, (inl, fil)
PY

# the host-phase file (phases:): its numbers sourced or assumed in the file, carried to validate
EHD="$TMP/ehd-phases.yaml"   # eager-host-dispatch naming the file (once)
sed "s|\.\./models|$PWD/models|g" scenarios/eager-host-dispatch.yaml >"$EHD"
sed -i "s|^engine: .*|phases: $PWD/$P|" "$EHD"
expect_ok "validate lists the file's declarations" "$TPSIM" validate "$EHD" \
    --grid validate/h100-ctx2048.csv --within
check "an assumed phase gets a sensitivity row" has "$TMP/out" "host.phases.schedule.mean_us"
cp "$P" "$TMP/p-undecl.yaml"
sed -i '/key: phases.broadcast.mean_us/d' "$TMP/p-undecl.yaml"
sed "s|^phases: .*|phases: $TMP/p-undecl.yaml|; s|\.\./models|$PWD/models|g" "$S" >"$TMP/s-undecl.yaml"
line=$(grep -n "^  broadcast:" "$TMP/p-undecl.yaml" | cut -d: -f1)
expect_fail2 "phase file: an undeclared number" "p-undecl.yaml:$line:[0-9]+: phases.broadcast.mean_us: a number neither sourced nor assumed" \
    "$TPSIM" run "$TMP/s-undecl.yaml"
# one number declared twice through a second spelling (a trailing dot) is refused, as is a
# list longer than the numbers it can name (it overflowed a fixed array before: a crash)
sed 's/^  - {key: phases.broadcast.mean_us, why: /  - {key: phases.schedule.mean_us., why: /' "$P" \
    >"$TMP/p-dot.yaml"
sed "s|^phases: .*|phases: $TMP/p-dot.yaml|; s|\.\./models|$PWD/models|g" "$S" >"$TMP/s-dot.yaml"
expect_fail2 "phase file: a key with a trailing dot names no number" \
    "p-dot.yaml:[0-9]+:[0-9]+: assumed.1.key: 'phases.schedule.mean_us.' names no number" \
    "$TPSIM" run "$TMP/s-dot.yaml"
{ sed '/^assumed:/,$d' "$P"; echo "assumed:"
  for i in $(seq 1 30); do echo "  - {key: phases.schedule.mean_us, why: \"copy $i\"}"; done; } \
    >"$TMP/p-many.yaml"
sed "s|^phases: .*|phases: $TMP/p-many.yaml|; s|\.\./models|$PWD/models|g" "$S" >"$TMP/s-many.yaml"
expect_fail2 "phase file: 30 assumed entries, refused at the list, no crash" \
    "p-many.yaml:[0-9]+:[0-9]+: assumed: 34 declarations, expected at most 20 in all" \
    "$TPSIM" run "$TMP/s-many.yaml"
sed 's/^kind: host-phases/kind: hardware/' "$P" >"$TMP/p-kind.yaml"
sed "s|^phases: .*|phases: $TMP/p-kind.yaml|; s|\.\./models|$PWD/models|g" "$S" >"$TMP/s-kind.yaml"
expect_fail2 "phase file: another kind" "p-kind.yaml:[0-9]+:[0-9]+: kind: 'hardware', expected host-phases" \
    "$TPSIM" run "$TMP/s-kind.yaml"
sed 's/  schedule: {dist: constant, mean_us: 870}/  schedule: {dist: constant, mean_us: -5}/' "$P" >"$TMP/p-neg.yaml"
sed "s|^phases: .*|phases: $TMP/p-neg.yaml|; s|\.\./models|$PWD/models|g" "$S" >"$TMP/s-neg.yaml"
line=$(grep -n "^  schedule:" "$TMP/p-neg.yaml" | cut -d: -f1)
expect_fail2 "phase file: a bad value, at its line in the file" "p-neg.yaml:$line:[0-9]+: .*mean_us: -5 is out of range" \
    "$TPSIM" run "$TMP/s-neg.yaml"
sed "s|^phases: .*|phases: $TMP/nowhere.yaml|; s|\.\./models|$PWD/models|g" "$S" >"$TMP/s-missing.yaml"
line=$(grep -n "^phases:" "$TMP/s-missing.yaml" | cut -d: -f1)
expect_fail2 "phase file: missing, at the line naming it" "s-missing.yaml:$line:[0-9]+: phases: .*nowhere.yaml" \
    "$TPSIM" run "$TMP/s-missing.yaml"
sed "s|^  collective: {dist: constant, mean_us: 8}|&\n  phases: {schedule: {dist: constant, mean_us: 1}}|; s|\.\./models|$PWD/models|g" "$S" >"$TMP/s-both.yaml"
expect_fail2 "file and inline phases: refused" "s-both.yaml:[0-9]+:[0-9]+: host.phases: the scenario names a host-phase file .* and writes host.phases too" \
    "$TPSIM" run "$TMP/s-both.yaml"
sed "s|^assumed:|assumed:\n  - {key: host.phases.broadcast.mean_us, why: twice}|; s|\.\./models|$PWD/models|g" "$S" >"$TMP/s-twice.yaml"
expect_fail2 "declared in the file and the scenario: refused" "vllm.yaml:[0-9]+:[0-9]+: 'host.phases.broadcast.mean_us' is also fitted or declared by the scenario" \
    "$TPSIM" run "$TMP/s-twice.yaml"
# the file's declarations travel in the document under a key tpsim keeps for itself
sed "s|^assumed:|phases_declared: {0: {key: host.launch.mean_us, note: forged, assumed: 0}}\nassumed:|; s|\.\./models|$PWD/models|g" "$S" >"$TMP/s-forged.yaml"
expect_fail2 "phases_declared in a scenario: refused" "s-forged.yaml:[0-9]+:[0-9]+: phases_declared: a key tpsim keeps for itself" \
    "$TPSIM" run "$TMP/s-forged.yaml"
expect_fail2 "phases_declared by --set: refused" "^tpsim: --set:1:1: phases_declared is tpsim's own record" \
    "$TPSIM" run "$S" --set phases_declared.0.note=forged
# --set phases=FILE swaps the host model: a file with the schedule at 10 ms adds 9.13 ms
sed 's/  schedule: {dist: constant, mean_us: 870}/  schedule: {dist: constant, mean_us: 10000}/' "$P" >"$TMP/p-slow.yaml"
expect_ok "--set phases=" "$TPSIM" run "$S" --format json --set "phases=$TMP/p-slow.yaml" && keep slow
expect_ok "the file's own" "$TPSIM" run "$S" --format json && keep base
pyq "--set phases= names the spliced file" "$TMP" <<PY
$STEP
slow, base = step("slow"), step("base")
assert abs((slow - base) - 9.13) < 1e-9, (slow, base)
PY
expect_ok "--set over the file's phase" "$TPSIM" run "$S" --format json --set host.phases.schedule.mean_us=10000 && keep setover
pyq "--set beats the phase file" "$TMP" <<PY
$STEP
over, slow = step("setover"), step("slow")
assert abs(over - slow) < 1e-12, (over, slow)
PY

# one host model for both modes: every hypothesis and graph what-if names the same file and
# runs vLLM's all-reduce, and an eager and a graph run of them pay the same phases at a batch
# (V0 for the eager hypotheses and the registered V0-era predictions' vllm-graphs; the what-ifs,
# cuda-graphs and the atlas, run the vLLM of today, V1)
for scn in eager-host-dispatch eager-straggler eager-broadcast vllm-graphs; do
    check "$scn names the shared host model" match "scenarios/$scn.yaml" '^engine: \.\./models/host/vllm-v0\.yaml( |$)'
    check "$scn runs auto" match "scenarios/$scn.yaml" '^  allreduce: auto( |$)'
done
for scn in cuda-graphs atlas-h100 atlas-h200 atlas-a100; do
    check "$scn runs vLLM V1" match "scenarios/$scn.yaml" '^engine: \.\./models/host/vllm-v1\.yaml( |$)'
done
check "cuda-graphs runs auto" match scenarios/cuda-graphs.yaml '^  allreduce: auto( |$)'
expect_ok "eager phases b8" "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 4 --batch 8 --steps 1 --format json &&
    cp "$TMP/out" "$TMP/eager-ph.json"
expect_ok "graph phases b8" "$TPSIM" run scenarios/vllm-graphs.yaml --tp 4 --batch 8 --steps 1 --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "eager and graphs: the same phases, the file's at batch 8" "$TMP/eager-ph.json" "$TMP/pyq-out$((PYQ_N + 1))" "$P" <<'PY'
import json, re, sys
e, g = (json.load(open(p))["host_phases"] for p in sys.argv[1:3])
assert e == g, (e, g)
total = 0.0   # mean_us + per_seq_us x 8 of each phase, read from the file with a regex
for line in open(sys.argv[3]):
    m = re.match(r"\s+(schedule|broadcast|prepare_inputs|sampler_sync|output_processing): \{(.*)\}", line)
    if m:
        f = dict(kv.split(": ") for kv in m.group(2).split(", "))
        total += float(f["mean_us"]) + float(f.get("per_seq_us", 0)) * 8
assert abs(e["total_ms"] - total / 1000) < 1e-9, (e, total)
PY

# bad input: one line, status 2
expect_fail2 "unknown phase" "unknown key 'bogus' in host.phases, expected one of: schedule, broadcast" \
    "$TPSIM" run "$S" --set host.phases.bogus.mean_us=3
expect_fail2 "unknown overlap mode" "execution.host_phases: 'async' is not allowed, expected one of: serialised, overlapped" \
    "$TPSIM" run "$S" --set execution.host_phases=async
expect_fail2 "negative per_seq_us" "per_seq_us: -1 is out of range" \
    "$TPSIM" run "$S" --set host.phases.schedule.per_seq_us=-1
expect_fail2 "phase with a cv on a constant" "a constant has no cv" \
    "$TPSIM" run "$S" --set host.phases.schedule.cv=0.2
finish
