#!/usr/bin/env bash
# CLI tests of a trace calibration loaded into a scenario (sim/measured.c): the B200 trace's
# calibration, written by `tpsim trace import -o` here, taken through the scenario key
# `measured:` and through --measured gives the same run as its apply: list as --set flags;
# the host time follows from launches x the measured mean (derived here, not by tpsim);
# --set beats the measured file; bad files are refused with one line and status 2.
. tests/cli/lib.sh
D=tests/data
B200="$D/TraceLens__b200__vllm_tp8_eager_step.json.gz"
# the trace is of a B200, the scenario an H100: every run borrows it explicitly (section 0)
# Sections 0-2 test how a measured file's values apply, including its GPU knobs, so they run
# a copy of the scenario without its kernel calibration (with one, the GPU knobs are moot and
# reported, not set: section 4), and without the shared host phases (phases:), so that the host
# time is the launches' and the file's measured phase alone
SCN="$TMP/eager-host-dispatch.yaml"
sed -e '/^kernels: /d' -e '/^engine: /d' -e 's/^  launch_latency_us: 4.0 .*/&\n  hbm_efficiency: 0.8941\n  flops_efficiency: 0.7/' \
    scenarios/eager-host-dispatch.yaml >"$SCN"
RUN=(run "$SCN" --tp 2 --steps 2 --format json --allow-foreign-calib)

expect_ok "import with hardware" "$TPSIM" trace import "$B200" --hardware models/hw/b200.yaml -o "$TMP/b200.yaml"
CAL="$TMP/b200.yaml"

# the values as the file states them, read with sed (not tpsim): the launch mean and the
# GEMV/GEMM efficiency under gpu:
LAUNCH_US=$(sed -n '/^  launch:/,/^  [a-z]/s/^    mean_us: //p' "$CAL")
HBM_EFF=$(sed -n 's/^  hbm_efficiency: //p' "$CAL")
check "launch mean read from the file ($LAUNCH_US)" test -n "$LAUNCH_US"
check "hbm efficiency read from the file ($HBM_EFF)" test -n "$HBM_EFF"
check "step host work is unmeasured in a one-step trace" grep -q "^    unmeasured: true" "$CAL"

# 0. the file names the GPU the trace recorded; on another GPU it is refused like a foreign
#    all-reduce calibration, and borrowed only explicitly, with a mark in the report
check "the file names the trace's GPU" grep -q '^device: "NVIDIA B200"' "$CAL"
expect_fail2 "a B200 trace on the H100 scenario is refused" \
    "^tpsim: $CAL:[0-9]+:[0-9]+: the trace calibration was measured on NVIDIA B200, the scenario runs on H100 SXM \(h100-sxm, .*--allow-foreign-calib$" \
    "$TPSIM" run "$SCN" --tp 2 --steps 2 --measured "$CAL"
expect_fail2 "sweep refuses it too" "measured on NVIDIA B200" \
    "$TPSIM" sweep "$SCN" --tp 2 --steps 2 --measured "$CAL"
expect_ok "borrowed by calibration_from" "$TPSIM" run "$SCN" --tp 2 --steps 2 \
    --measured "$CAL" --set "calibration_from=NVIDIA B200"
check "text: FOREIGN, borrowed by calibration_from" grep -qx '           \*\* FOREIGN: measured on NVIDIA B200, used for H100 SXM (calibration_from) \*\*' "$TMP/out"
# (the scenario's H100 kernel calibration borrowed by name: it is the trace calibration's
# own hardware that is checked here)
expect_ok "on a B200 scenario it is its own" "$TPSIM" run "$SCN" --tp 1 --steps 2 \
    --measured "$CAL" --set hardware=b200 --set "calibration_from=H100 SXM" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "json: not foreign on B200" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["measured"]
assert m["borrowed_by"] is None and m["device"] == "NVIDIA B200", m

PY

# 1. the apply: flags, the flag and the scenario key give the same run
mapfile -t SETS < <(sed -n 's/^  - /--set\n/p' "$CAL")
expect_ok "run with the apply: flags" "$TPSIM" "${RUN[@]}" "${SETS[@]}" && cp "$TMP/out" "$TMP/apply.json"
expect_ok "run with --measured" "$TPSIM" "${RUN[@]}" --measured "$CAL" && cp "$TMP/out" "$TMP/flag.json"
sed 's#^name: .*#&\nmeasured: b200.yaml\ncalibration_from: NVIDIA B200#' "$SCN" >"$TMP/with-measured.yaml"
KEY_LINE=$(grep -n '^measured:' "$TMP/with-measured.yaml" | cut -d: -f1)
expect_ok "run with measured: in the scenario" "$TPSIM" run "$TMP/with-measured.yaml" --tp 2 --steps 2 --format json \
    && cp "$TMP/out" "$TMP/key.json"
pyq "flag, key and apply: flags give the same step" "$TMP/apply.json" "$TMP/flag.json" "$TMP/key.json" "$KEY_LINE" <<'PY'
import json, sys
a, f, k = (json.load(open(p)) for p in sys.argv[1:4])
for x in (f, k):
    assert x["step_ms"] == a["step_ms"], (x["step_ms"], a["step_ms"])
    assert x["breakdown_ms"] == a["breakdown_ms"], (x["breakdown_ms"], a["breakdown_ms"])
assert "measured" not in a
assert f["measured"]["named_by"] == "--measured", f["measured"]
assert f["measured"]["borrowed_by"] == "--allow-foreign-calib", f["measured"]
assert k["measured"]["borrowed_by"] == "calibration_from", k["measured"]
assert k["measured"]["named_by"].endswith("with-measured.yaml:%s:11" % sys.argv[4]), k["measured"]
assert k["measured"]["file"].endswith("/b200.yaml"), k["measured"]
PY
pyq "the report names the file, each key it set with its source, and the step it kept" "$TMP/flag.json" "$CAL" "$LAUNCH_US" "$HBM_EFF" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["measured"]
launch, eff = float(sys.argv[3]), float(sys.argv[4])
assert m["file"] == sys.argv[2], m["file"]
got = {s["key"]: s["value"] for s in m["set"]}
want = {"host.launch.dist": "lognormal", "host.launch.mean_us": launch,
        "host.collective.dist": "lognormal", "host.collective.mean_us": launch,
        "gpu.hbm_efficiency": eff}
for key, v in want.items():
    assert got[key] == v, (key, got.get(key), v)
# the B200 trace (with_stack) also times input preparation: host.phases.prepare_inputs
assert set(got) == set(want) | {"host.launch.cv", "host.collective.cv", "gpu.kernel_fixed_us",
                                "host.phases.prepare_inputs.dist", "host.phases.prepare_inputs.mean_us",
                                "host.phases.prepare_inputs.cv",
                                "host.phases.prepare_inputs.per_seq_us"}, got
assert all("TraceLens__b200__vllm_tp8_eager_step.json.gz (rank 0)" in s["source"] for s in m["set"]), m["set"]
assert all(s["overridden_by"] is None for s in m["set"]), m["set"]
assert m["kept"] == [{"part": "host.step", "why": "unmeasured"}], m["kept"]
PY
# the step host work the trace could not measure: the scenario's own 0 us stays
expect_ok "text report" "$TPSIM" run "$SCN" --tp 2 --steps 2 --measured "$CAL" --allow-foreign-calib
check "text report names the file" grep -q "^measured   $CAL (named by --measured), a trace calibration:" "$TMP/out"
check "text report keeps the step, says why" grep -q "host.step: unmeasured in the trace, the scenario's value kept" "$TMP/out"
check "text report gives the launch keys" grep -q " host.launch.mean_us=$LAUNCH_US " "$TMP/out"

# 2. host time = launches x the measured mean (cv set to 0 so every launch costs the mean;
#    the step host work stays the scenario's 0): a --set beats the measured file
expect_ok "--set over --measured" "$TPSIM" "${RUN[@]}" --measured "$CAL" --set host.launch.cv=0 --set host.collective.cv=0 \
    --set host.launch.dist=constant --set host.collective.dist=constant
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "host time is launches x the measured mean" "$TMP/pyq-out$((PYQ_N + 1))" "$LAUNCH_US" <<'PY'
import json, sys
d, mean_us = json.load(open(sys.argv[1])), float(sys.argv[2])
launches = d["kernels_per_step"] + d["collectives_per_step"]
phase_ms = d["host_phases"]["total_ms"]          # the measured prepare_inputs, once a step
assert abs(phase_ms - 3.597428) < 1e-9, d["host_phases"]
want = launches * mean_us / 1e3 + phase_ms
assert abs(d["breakdown_ms"]["host"] - want) < 1e-6, (launches, mean_us, d["breakdown_ms"])
over = {s["key"]: s["overridden_by"] for s in d["measured"]["set"]}
assert over["host.launch.cv"] == "--set" and over["host.launch.mean_us"] is None, over
PY
expect_ok "--set mean over --measured" "$TPSIM" "${RUN[@]}" --measured "$CAL" --set host.launch.mean_us=5 \
    --set host.collective.mean_us=5 --set host.launch.dist=constant --set host.collective.dist=constant \
    --set host.launch.cv=0 --set host.collective.cv=0
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "a --set mean replaces the measured one" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
launches = d["kernels_per_step"] + d["collectives_per_step"]
assert abs(d["breakdown_ms"]["host"] - (launches * 0.005 + 3.597428)) < 1e-6, d["breakdown_ms"]
PY
# the flag replaces the scenario key's file: the synthetic trace's 10 us launches, 159 us step
expect_ok "synthetic import" "$TPSIM" trace import "$D/trace-synth-streams.json" -o "$TMP/synth.yaml"
expect_ok "--measured replaces measured:" "$TPSIM" run "$TMP/with-measured.yaml" --tp 2 --steps 2 --format json --measured "$TMP/synth.yaml"
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "the flag's file, with its measured step work" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
launches = d["kernels_per_step"] + d["collectives_per_step"]
# 10 us launch to launch, cv 0; 159 us of per-step host work (tests/cli/trace_import.sh)
assert abs(d["breakdown_ms"]["host"] - (launches * 0.010 + 0.159)) < 1e-6, d["breakdown_ms"]
assert d["measured"]["kept"] == [{"part": "gpu.hbm_efficiency", "why": "absent"}], d["measured"]
PY
expect_ok "sweep takes --measured" "$TPSIM" sweep "$SCN" --tp 2 --steps 2 --measured "$TMP/synth.yaml" --format json -o -
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "sweep's host time from the file" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))[0]
launches = r["kernels_per_step"] + r["allreduces_per_step"] + 1  # + the logits gather
assert abs(r["host_ms"] - (launches * 0.010 + 0.159)) < 1e-6, r
PY

# 3. bad files: one line, status 2
sed 's/^kind: trace-calibration/kind: allreduce-calibration/' "$CAL" >"$TMP/kind.yaml"
expect_fail2 "wrong kind" "kind.yaml:[0-9]+:7: kind: 'allreduce-calibration', expected trace-calibration" \
    "$TPSIM" "${RUN[@]}" --measured "$TMP/kind.yaml"
sed 's/^  launch:/  launch_typo:/' "$CAL" >"$TMP/unknown.yaml"
expect_fail2 "unknown key" "unknown.yaml:[0-9]+:3: .*launch_typo" "$TPSIM" "${RUN[@]}" --measured "$TMP/unknown.yaml"
sed '0,/^    mean_us: .*/s//    mean_us: nan/' "$CAL" >"$TMP/nan.yaml"
expect_fail2 "NaN" "nan.yaml:[0-9]+:14: host.launch.mean_us: 'nan' is not a number" "$TPSIM" "${RUN[@]}" --measured "$TMP/nan.yaml"
sed '0,/^    mean_us: .*/s//    mean_us: 5e8/' "$CAL" >"$TMP/slow.yaml"
expect_fail2 "a launch past a second (phys.h)" "slow.yaml:[0-9]+:14: host.launch.mean_us: 5e\+08 is out of range" "$TPSIM" "${RUN[@]}" --measured "$TMP/slow.yaml"
sed 's/^  hbm_efficiency: .*/  hbm_efficiency: 1.5/' "$CAL" >"$TMP/eff.yaml"
expect_fail2 "efficiency above 1" "eff.yaml:[0-9]+:19: gpu.hbm_efficiency: 1.5 is out of range" "$TPSIM" "${RUN[@]}" --measured "$TMP/eff.yaml"
sed '0,/^    cv: .*/s//    cv: 0.9/; 0,/^    dist: lognormal/s//    dist: uniform/' "$CAL" >"$TMP/uniform.yaml"
expect_fail2 "a value the scenario refuses points into the measured file" "uniform.yaml:[0-9]+:[0-9]+: host.launch.cv: .*too wide for a uniform" \
    "$TPSIM" "${RUN[@]}" --measured "$TMP/uniform.yaml"
printf 'kind: trace-calibration\nhost:\n  step: {unmeasured: true, mean_us: 3}\n' >"$TMP/both.yaml"
expect_fail2 "unmeasured and a value" "both.yaml:3:9: host.step: unmeasured: true and a value" "$TPSIM" "${RUN[@]}" --measured "$TMP/both.yaml"
printf 'kind: trace-calibration\nhost:\n  launch: {dist: constant, mean_us: 3}\n' >"$TMP/nosrc.yaml"
expect_fail2 "a value without its source" "nosrc.yaml:3:11: .*source" "$TPSIM" "${RUN[@]}" --measured "$TMP/nosrc.yaml"
mkfifo "$TMP/in.fifo"
expect_fail2 "FIFO with no writer" "in.fifo" timeout 20 "$TPSIM" "${RUN[@]}" --measured "$TMP/in.fifo"
expect_fail2 "missing file by flag" "nope.yaml: cannot open" "$TPSIM" "${RUN[@]}" --measured "$TMP/nope.yaml"
sed 's#^name: .*#&\nmeasured: nope.yaml#' scenarios/eager-host-dispatch.yaml >"$TMP/missing.yaml"
expect_fail2 "missing file by key, at the key" "missing.yaml:$KEY_LINE:11: measured: .*nope.yaml" "$TPSIM" run "$TMP/missing.yaml"
expect_fail2 "--set measured refused" "--set:1:1: measured: .*--measured FILE" "$TPSIM" "${RUN[@]}" --set measured=x.yaml
# validate fits host.launch.mean_us and host.step.mean_us: a measured value there would be lost
expect_fail2 "validate refuses a measured fit parameter" \
    "synth.yaml:[0-9]+:[0-9]+: host.launch.mean_us: measured, but a free parameter of .*eager-host-dispatch.yaml's fit" \
    "$TPSIM" validate "$SCN" --quiet --measured "$TMP/synth.yaml"
# a measured value is sourced (by the file): validate takes it without a sourced:/assumed: entry
# (cuda-graphs fits nothing; host.launch.cv and host.step come only from the file)
expect_ok "validate takes measured values as sourced" "$TPSIM" validate scenarios/cuda-graphs.yaml --quiet --measured "$TMP/synth.yaml" --format json
expect_fail2 "two --measured" "a second measured file" "$TPSIM" "${RUN[@]}" --measured "$CAL" --measured "$CAL"
# 4. with the scenario's kernel calibration every GPU op's time is measured: the file's GPU
#    knobs (gpu.hbm_efficiency, gpu.kernel_fixed_us) are reported as not applied, its host
#    values still set; the same knobs as --set are refused, never ignored
expect_ok "kernels: run with --measured" "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 2 --steps 2 \
    --format json --allow-foreign-calib --measured "$CAL"
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "kernels: GPU knobs kept, why kernels; host launch set" "$TMP/pyq-out$((PYQ_N + 1))" "$LAUNCH_US" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["measured"]
got = {s["key"]: s["value"] for s in m["set"]}
assert got["host.launch.mean_us"] == float(sys.argv[2]), got
assert not any(k.startswith("gpu.") for k in got), got
kept = {k["part"]: k["why"] for k in m["kept"]}
assert kept["gpu.hbm_efficiency"] == "kernels" and kept["gpu.kernel_fixed_us"] == "kernels", kept
PY
expect_ok "kernels: text report" "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 2 --steps 2 \
    --allow-foreign-calib --measured "$CAL"
check "kernels: text says the knob is not applied" \
    grep -qx '           gpu.hbm_efficiency: not applied, the kernels: calibration prices every GPU op' "$TMP/out"
expect_fail2 "kernels: --set gpu.hbm_efficiency refused" \
    "^tpsim: --set:1:[0-9]+: gpu.hbm_efficiency has no effect with kernels: .*expected it removed$" \
    "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 2 --set gpu.hbm_efficiency=0.5

finish
