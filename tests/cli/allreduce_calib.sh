# allreduce_calib.sh: calibrations are per hardware and k. A scenario on other hardware than
# its all-reduce calibration is refused (one line, status 2) unless it borrows explicitly
# (calibration_from: HW, or --allow-foreign-calib), and then every report says so.
source tests/cli/lib.sh
H200="$TMP/h200.yaml"
sed -e 's|\.\./models|'"$PWD"'/models|g' -e 's|hw/h100-sxm.yaml|hw/h200.yaml|' \
    scenarios/eager-host-dispatch.yaml >"$H200"
grep -q 'hw/h200.yaml' "$H200" || bad "fixture: the H200 scenario was not made"

# --- refused: the calibration says H100 SXM, the hardware H200 SXM
expect_fail2 "foreign calibration refused" \
    "h200.yaml:[0-9]+:[0-9]+: the tp 4 all-reduce calibration was measured on H100 SXM, the scenario runs on H200 SXM \(h200, NVIDIA H200, H200\); .*calibration_from: H100 SXM.*--allow-foreign-calib" \
    "$TPSIM" run "$H200" --tp 4
expect_fail2 "validate refuses it too" "measured on H100 SXM" "$TPSIM" validate "$H200" \
    --grid validate/h100-ctx2048.csv
expect_fail2 "sweep refuses it too" "measured on H100 SXM" "$TPSIM" sweep "$H200" --tp 2,4
expect_ok "sweep takes --allow-foreign-calib" "$TPSIM" sweep "$H200" --tp 2,4 --steps 2 --allow-foreign-calib --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "sweep: both rows on H200" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["tp"] for r in rows] == [2, 4] and all(r["hardware"] == "H200 SXM" for r in rows), rows

PY
# borrowing from the wrong hardware is still refused
expect_fail2 "calibration_from names other hardware" "measured on H100 SXM" \
    "$TPSIM" run "$H200" --tp 4 --set calibration_from=A100

# --- the explicit override: calibration_from in the scenario
expect_ok "calibration_from" "$TPSIM" run "$H200" --tp 4 --set "calibration_from=H100 SXM" --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "json says foreign, borrowed by calibration_from" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a = d["allreduce_call"]
assert d["hardware"] == "H200 SXM", d["hardware"]
assert (a["calibration_hardware"], a["calibration_tp"]) == ("H100 SXM", 4), a
assert a["collective_model"] == "auto", a   # the scenario's
assert d["calibration"].endswith("models/allreduce/h100-sxm-tp4.yaml"), d
assert d["calibration_borrowed"] == "calibration_from", d
PY
expect_ok "calibration_from text" "$TPSIM" run "$H200" --tp 4 --set "calibration_from=H100 SXM"
check "text report says FOREIGN" grep -q "FOREIGN: measured on H100 SXM, used for H200 SXM (calibration_from)" "$TMP/out"

# --- the flag
expect_ok "--allow-foreign-calib" "$TPSIM" run "$H200" --tp 2 --allow-foreign-calib --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "json: borrowed by the flag" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["calibration_borrowed"] == "--allow-foreign-calib", d
assert d["allreduce_call"]["calibration_tp"] == 2, d

PY

# --- its own hardware: not foreign, and the block names the collective model in use
expect_ok "own hardware" "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 8 \
    --set collective.allreduce=vllm-custom --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "json: own calibration, model vllm-custom" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); a = d["allreduce_call"]
assert d["calibration_borrowed"] is None and a["collective_model"] == "vllm-custom", d
assert (a["calibration_hardware"], a["calibration_tp"]) == ("H100 SXM", 8), a

PY

# --- a --calib file measured elsewhere is refused at its path
cat >"$TMP/a100-tp4.yaml" <<'Y'
kind: allreduce-calibration
hardware: A100 SXM
tp: 4
fit: linear
lambda_us: 30
beta_gbps: 200
source: {how: "test fixture", where: "tests/cli/allreduce_calib.sh"}
Y
expect_fail2 "--calib from other hardware" "a100-tp4.yaml: the tp 4 all-reduce calibration was measured on A100 SXM, the scenario runs on H100 SXM" \
    "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 4 --calib "$TMP/a100-tp4.yaml"
expect_ok "--calib foreign allowed" "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 4 \
    --calib "$TMP/a100-tp4.yaml" --allow-foreign-calib --format json --set collective.allreduce=nccl-fit &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "json: the A100 calibration, foreign" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); a = d["allreduce_call"]
assert a["calibration_hardware"] == "A100 SXM", a
assert d["calibration_borrowed"] == "--allow-foreign-calib", d
assert abs(a["us"] - (30 + 2 * 3 / 4 * 16384 / 200e9 * 1e6)) < 1e-6, d

PY

# --- a message outside the calibration's fitted range is called extrapolated
expect_ok "tp8 16 KiB" "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 8 --set collective.allreduce=nccl-fit
check "16 KiB below the TP-8 fit's 32K..256M" grep -q "(16384 bytes is outside the fit's range 32768..268435456: extrapolated)" "$TMP/out"
expect_ok "tp4 16 KiB" "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 4 --set collective.allreduce=nccl-fit
check "16 KiB inside the TP-4 fit's range" bash -c "! grep -q extrapolated '$TMP/out'"

finish
