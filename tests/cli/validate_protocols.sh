# validate_protocols.sh: `tpsim validate` protocols (within, --transfer A:B, --loo), the null
# baselines beside every hypothesis, skill and verdicts, --strict, and their input errors.
# Expected values are re-derived here (python) from the grid and the rules, not copied.
source tests/cli/lib.sh
GRID=validate/h100-ctx2048.csv
EHD=scenarios/eager-host-dispatch.yaml

# The verdict rule, applied to the JSON's own numbers: every config of a report must agree.
cat >"$TMP/rules.py" <<'PY'
import json, math, sys
def check(d):
    ks = d["kill_switch_pct"]
    misfit = {i + 1: f["misfit"] for i, f in enumerate(d["folds"])}
    for c in d["configs"]:
        held = c["heldout_mape_pct"]
        b = [v for v in c["baselines"].values() if v is not None]
        best = min(b) if b else None
        if not c["tested"]: want = "UNTESTED"
        elif misfit[c["fold"]]: want = "MISFIT"
        elif held > ks: want = "FAIL"
        elif best and held <= 0.5 * best and held < best: want = "SUPPORTED"
        else: want = "PASS-NO-SKILL"
        assert c["verdict"] == want, (c, want)
        if c["tested"] and best:
            assert abs(c["skill"] - (1 - held / best)) < 1e-9, c
PY

# --- the acceptance case: fit on TP-2 only, judge TP-4, with baselines, skill and intervals
expect_ok "transfer 2:4" "$TPSIM" validate $EHD --transfer 2:4 --format json &&
check "transfer 2:4: TP-4 judged with baselines, skill, verdict, intervals; TP-2 only calibrates" \
    python3 - "$TMP/out" "$GRID" "$TMP/rules.py" <<'PY'
import csv, json, sys
exec(open(sys.argv[3]).read())
d = json.load(open(sys.argv[1]))
grid = [r for r in csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith("#"))]
assert d["protocol"] == "transfer 2:4", d["protocol"]
assert len(d["folds"]) == 1
cal = d["folds"][0]["calibration_cells"]
assert sorted((c["tp"], c["batch"]) for c in cal) == [(2, 1), (2, 8)], cal  # fit.cells of TP-2
cf = {c["tp"]: c for c in d["configs"]}
assert not cf[2]["judged"] and cf[2]["verdict"] == "UNTESTED", cf[2]
t4 = cf[4]
assert t4["judged"] and t4["heldout_cells"] == 4, t4
assert set(t4["baselines"]) == {"constant", "additive"} and t4["verdict"] in (
    "SUPPORTED", "PASS-NO-SKILL", "FAIL", "MISFIT"), t4
# constant baseline: TP-4 has no calibration cell, so the mean of TP-2's calibration cells
m = {(int(r["tp"]), int(r["batch"])): float(r["measured_ms"]) for r in grid}
const = (m[(2, 1)] + m[(2, 8)]) / 2
want = sum(abs(const - m[(4, b)]) / m[(4, b)] for b in (1, 2, 4, 8)) / 4 * 100
assert abs(t4["baselines"]["constant"] - want) < 1e-6, (t4["baselines"], want)
for c in d["cells"]:
    assert c["pred_lo"] <= c["predicted_ms"] <= c["pred_hi"], c
    assert c["role"] == ("held-out" if c["tp"] == 4 else "calibration" if c["batch"] in (1, 8) else "unused"), c
    if c["tp"] == 4:
        assert abs(c["baselines_ms"]["constant"] - const) < 1e-9, c
check(d)
print(f"  transfer 2:4: TP-4 held-out {t4['heldout_mape_pct']:.2f}%, constant {t4['baselines']['constant']:.2f}%, "
      f"additive {t4['baselines']['additive']:.2f}%, {t4['verdict']}")
PY

# --- transfer never reads the judged degree: scale every TP-4 measurement, the fit stays
python3 - "$GRID" "$TMP/tp4x.csv" <<'PY'
import sys
out = open(sys.argv[2], "w")
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split(",")
    if not line.startswith("#") and f[1] == "4":
        f[4] = repr(float(f[4]) * 1.7)
    out.write(",".join(f) + "\n")
PY
cp "$TMP/out" "$TMP/a.json"   # the acceptance run above
"$TPSIM" validate $EHD --transfer 2:4 --grid "$TMP/tp4x.csv" --format json >"$TMP/b.json"
check "transfer 2:4 never reads TP-4: same fit, same predictions; the verdict moves" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["fitted"] == b["fitted"] and a["folds"][0]["fitted_95"] == b["folds"][0]["fitted_95"]
assert [c["predicted_ms"] for c in a["cells"]] == [c["predicted_ms"] for c in b["cells"]]
assert a["configs"][1]["heldout_mape_pct"] != b["configs"][1]["heldout_mape_pct"]' "$TMP/a.json" "$TMP/b.json"
# ... while TP-4 moves the fit of the opposite direction (R0 fitted on TP-4's cells)
"$TPSIM" validate scenarios/paper-additive.yaml --transfer 4:2 --format json >"$TMP/c.json"
"$TPSIM" validate scenarios/paper-additive.yaml --transfer 4:2 --grid "$TMP/tp4x.csv" --format json >"$TMP/d.json"
check "transfer 4:2 does read TP-4, all of it when fit.cells names none of it" python3 -c '
import json, sys
c, d = (json.load(open(f)) for f in sys.argv[1:])
assert c["fitted"]["offset_ms"] != d["fitted"]["offset_ms"]
assert c["folds"][0]["all_cells_of_fitted_degrees"] and len(c["folds"][0]["calibration_cells"]) == 4' "$TMP/c.json" "$TMP/d.json"

# --- a grid where the constant baseline is exact: nothing may be SUPPORTED
python3 - "$GRID" "$TMP/flat.csv" <<'PY'
import sys
out = open(sys.argv[2], "w")
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split(",")
    if not line.startswith("#") and f[0] != "config":
        f[4] = "27.00" if f[1] == "2" else "25.00"
    out.write(",".join(f[:5]) + "\n")
PY
for proto in --within --loo; do
    "$TPSIM" validate $EHD --grid "$TMP/flat.csv" $proto --strict --format json >"$TMP/out" 2>"$TMP/err"
    check "--strict exits 1 without SUPPORTED ($proto)" test $? -eq 1
    check "flat grid $proto: the constant baseline is exact within, nothing SUPPORTED" \
        python3 - "$TMP/out" "$TMP/rules.py" "$proto" <<'PY'
import json, sys
exec(open(sys.argv[2]).read())
d = json.load(open(sys.argv[1]))
check(d)
for c in d["configs"]:
    assert c["verdict"] != "SUPPORTED", c
    if sys.argv[3] == "--within":
        assert c["baselines"]["constant"] == 0, c
PY
done

# --- MISFIT: a calibration cell the model cannot reach (200 ms at TP-2 batch 1: the host at
# 60 us per launch and the GPU at 60% HBM stay far below it)
sed 's/^H100 TP-2,2,1,2048,27.77/H100 TP-2,2,1,2048,200.0/' $GRID >"$TMP/misfit.csv"
expect_ok "misfit grid" "$TPSIM" validate $EHD --grid "$TMP/misfit.csv" --format json &&
check "unreachable calibration cell: MISFIT, nothing passes" python3 - "$TMP/out" "$TMP/rules.py" <<'PY'
import json, sys
exec(open(sys.argv[2]).read())
d = json.load(open(sys.argv[1]))
check(d)
f = d["folds"][0]
assert f["misfit"] and f["calibration_max_error_pct"] > d["kill_switch_pct"] / 3, f
for c in d["configs"]:
    assert c["verdict"] == "MISFIT" and not c["pass"], c
PY

# --- the additive baseline is the study's Equation 2: beside the study's own column
expect_ok "paper-additive within" "$TPSIM" validate scenarios/paper-additive.yaml --format json &&
check "additive baseline = the study's full prediction (1.5%), R0 fitted on the same cell" \
    python3 - "$TMP/out" "$GRID" "$TMP/rules.py" <<'PY'
import csv, json, sys
exec(open(sys.argv[3]).read())
d = json.load(open(sys.argv[1]))
check(d)
study = {(int(r["tp"]), int(r["batch"])): float(r["full_pred_ms"])
         for r in csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith("#"))}
for c in d["cells"]:
    assert abs(c["baselines_ms"]["additive"] / study[(c["tp"], c["batch"])] - 1) < 0.015, c
# the scenario is Equation 2 itself: it has no skill over it
cf = {c["tp"]: c for c in d["configs"]}
assert abs(cf[2]["skill"]) < 1e-6 and cf[2]["verdict"] == "PASS-NO-SKILL", cf[2]
assert cf[4]["verdict"] == "FAIL", cf[4]
PY

# --- leave one config out: one fold per config, never calibrating on the config it judges
expect_ok "loo" "$TPSIM" validate $EHD --loo --format json &&
check "loo: two folds, each judged config absent from its fold's calibration cells" \
    python3 - "$TMP/out" "$TMP/rules.py" <<'PY'
import json, sys
exec(open(sys.argv[2]).read())
d = json.load(open(sys.argv[1]))
check(d)
assert d["protocol"] == "loo" and len(d["folds"]) == 2
for c in d["configs"]:
    cal = d["folds"][c["fold"] - 1]["calibration_cells"]
    assert cal and all(x["tp"] != c["tp"] for x in cal), (c, cal)
    assert c["judged"] and c["heldout_cells"] == 4, c
PY

# --- a grid made of the model's own predictions: exact held-out, SUPPORTED, --strict passes
for tp in 2 4; do for b in 1 2 4 8; do
    "$TPSIM" run $EHD --tp $tp --batch $b --format json |
        python3 -c "import json,sys; print('S TP-$tp,$tp,$b,2048,' + repr(json.load(sys.stdin)['step_ms']['mean']))"
done; done >"$TMP/self.rows"
{ echo "config,tp,batch,ctx,measured_ms"; cat "$TMP/self.rows"; } >"$TMP/self.csv"
expect_ok "self grid --strict" "$TPSIM" validate $EHD --grid "$TMP/self.csv" --strict --format json &&
check "own predictions: every config SUPPORTED" python3 - "$TMP/out" "$TMP/rules.py" <<'PY'
import json, sys
exec(open(sys.argv[2]).read())
d = json.load(open(sys.argv[1]))
check(d)
assert all(c["verdict"] == "SUPPORTED" and c["heldout_mape_pct"] < 0.1 for c in d["configs"]), d["configs"]
PY

# --- protocols from the scenario's fit block, and bad protocols
sed 's/^fit:$/fit:\n  protocol: "transfer 2:4"/' $EHD >scenarios/.test-proto-$$.yaml
expect_ok "fit.protocol" "$TPSIM" validate scenarios/.test-proto-$$.yaml --format json &&
check "fit.protocol pre-registers transfer 2:4" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["protocol"] == "transfer 2:4"' "$TMP/out"
expect_ok "--within overrides fit.protocol" "$TPSIM" validate scenarios/.test-proto-$$.yaml --within --summary &&
check "--within row" grep -q "| within | H100 TP-2 |" "$TMP/out"
sed 's/^fit:$/fit:\n  protocol: sideways/' $EHD >scenarios/.test-proto-$$.yaml
expect_fail2 "bad fit.protocol" "^tpsim: scenarios/\.test-proto-$$\.yaml:[0-9]+:13: fit.protocol: protocol 'sideways', expected within, loo or transfer" \
    "$TPSIM" validate scenarios/.test-proto-$$.yaml
rm -f scenarios/.test-proto-$$.yaml
expect_fail2 "--transfer same degree" "--transfer: transfer 2:2: TP-2 is on both sides" "$TPSIM" validate $EHD --transfer 2:2
expect_fail2 "--transfer not degrees" "--transfer: '2,x' is not a list of TP degrees" "$TPSIM" validate $EHD --transfer 2,x:4
expect_fail2 "--transfer not a protocol" "--transfer: protocol 'sideways', expected within, loo or transfer A:B" "$TPSIM" validate $EHD --transfer sideways
expect_fail2 "--transfer absent degree" "transfer 2:8: the grid .* has no cell of the TP degree\(s\) judged" "$TPSIM" validate $EHD --transfer 2:8
expect_fail2 "two protocols" "--loo: a second protocol" "$TPSIM" validate $EHD --transfer 2:4 --loo
expect_fail2 "--meas-cv range" "--meas-cv" "$TPSIM" validate $EHD --meas-cv 0

# --- no undeclared knobs: a number neither fitted, sourced nor assumed is refused where it is
sed 's/^  queue_depth: 1024$/  queue_depth: 1024\n  driver_per_peer_us: 5/' $EHD >scenarios/.test-knob-$$.yaml
line=$(grep -n 'driver_per_peer_us: 5' scenarios/.test-knob-$$.yaml | cut -d: -f1)
expect_fail2 "undeclared knob" "^tpsim: scenarios/\.test-knob-$$\.yaml:$line:23: host.driver_per_peer_us: a number the grid could inform is neither fitted, sourced nor assumed" \
    "$TPSIM" validate scenarios/.test-knob-$$.yaml
expect_ok "a --set number is an assumption" "$TPSIM" validate scenarios/.test-knob-$$.yaml --set host.driver_per_peer_us=5 --format json &&
check "--set key listed in sensitivity" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert any(s["key"] == "host.driver_per_peer_us" and s["why"] == "set on the command line" for s in d["sensitivity"])' "$TMP/out"
sed 's/^  - {key: gpu.flops_efficiency, why/  - {key: gpu.hbm_efficiency, why: "twice"}\n  - {key: gpu.flops_efficiency, why/' $EHD >scenarios/.test-knob-$$.yaml
expect_fail2 "declared and fitted" "assumed.0.key: 'gpu.hbm_efficiency' is already fitted or declared" \
    "$TPSIM" validate scenarios/.test-knob-$$.yaml
rm -f scenarios/.test-knob-$$.yaml

finish
