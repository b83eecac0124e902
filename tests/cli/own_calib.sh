# own_calib.sh: docs/calibrate.md's GPU recipe works end to end on the matching scenario without a
# foreign flag (tpsim-nccl-sweep's or nccl-tests' log -> fit-allreduce -> run --calib), walked
# on the shipped 8 x H100 nccl-tests log: the file says the device name nccl-tests printed
# (NVIDIA H100 80GB HBM3), which models/hw/h100-sxm.yaml lists among its aliases. A --calib
# for a TP degree the command does not run is refused; sweep rows and the atlas say which
# calibration each row used and how a borrowed one was borrowed; names not found get a hint.
source tests/cli/lib.sh
LOG=tests/data/h100-8gpu-ring-all_reduce_perf.out
SCN=scenarios/eager-host-dispatch.yaml
# a fit-allreduce file times NCCL only; the scenario runs vLLM's custom all-reduce (auto),
# which such a file cannot price, so the recipe asks for nccl-fit with it (docs/calibrate.md)
NCCL=(--set collective.allreduce=nccl-fit)

# --- the recipe, as docs/calibrate.md writes it (no --hardware flag) -------------------------
expect_ok "fit-allreduce on the H100 log" "$TPSIM" fit-allreduce $LOG -o "$TMP/my-tp8.yaml"
check "the file names the log's device" grep -qx 'hardware: NVIDIA H100 80GB HBM3' "$TMP/my-tp8.yaml"
check "the log's rank lines name that device" grep -q '\] NVIDIA H100 80GB HBM3$' $LOG
check "the hardware file lists it as an alias" grep -q '^aliases: .*"NVIDIA H100 80GB HBM3"' models/hw/h100-sxm.yaml
expect_ok "fit json" "$TPSIM" fit-allreduce $LOG --format json && cp "$TMP/out" "$TMP/fit.json"
expect_ok "run --calib on the H100 scenario, no foreign flag" "$TPSIM" run $SCN "${NCCL[@]}" --tp 8 --calib "$TMP/my-tp8.yaml" --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "not foreign; the per-call cost is the fitted model's" "$TMP/pyq-out$((PYQ_N + 1))" "$TMP/fit.json" "$TMP/my-tp8.yaml" <<'PY'
import json, sys
r, f = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
a = r["allreduce_call"]
assert r["calibration_borrowed"] is None, r
assert a["calibration_hardware"] == "NVIDIA H100 80GB HBM3" and a["calibration_tp"] == 8, a
assert r["calibration"] == sys.argv[3], r
# the file's chosen fit (piecewise, lower BIC): the piece that holds 16 KiB
k, b = 8, 8192 * 2
p = [q for q in f["piecewise"]["pieces"] if q["from_bytes"] <= b][-1]
want = p["lambda_us"] + 2 * (k - 1) / k * b / (p["beta_gbps"] * 1e9) * 1e6
assert abs(r["allreduce_call"]["us"] - want) < 1e-6 * want, (r["allreduce_call"]["us"], want)
PY
expect_ok "text report" "$TPSIM" run $SCN "${NCCL[@]}" --tp 8 --calib "$TMP/my-tp8.yaml"
check "text: the calibration line names the file and device" grep -q "^calibration $TMP/my-tp8.yaml: NVIDIA H100 80GB HBM3, tp 8" "$TMP/out"
check "text: no FOREIGN mark" bash -c "! grep -q FOREIGN '$TMP/out'"

# names fold case and punctuation: the file's id and name are the GPU too; another GPU is not
for hw in h100-sxm "h100 sxm" "H100_SXM" "nvidia h100 80gb hbm3" "NVIDIA-H100-80GB-HBM3"; do
    sed "s/^hardware: .*/hardware: \"$hw\"/" "$TMP/my-tp8.yaml" >"$TMP/alias.yaml"
    expect_ok "hardware: '$hw' is the H100" "$TPSIM" run $SCN "${NCCL[@]}" --tp 8 --calib "$TMP/alias.yaml" --steps 2
done
sed 's/^hardware: .*/hardware: NVIDIA H100 PCIe/' "$TMP/my-tp8.yaml" >"$TMP/pcie.yaml"
expect_fail2 "an H100 PCIe calibration is another GPU" \
    "^tpsim: --calib $TMP/pcie\.yaml: the tp 8 all-reduce calibration was measured on NVIDIA H100 PCIe, the scenario runs on H100 SXM \(h100-sxm, NVIDIA H100 80GB HBM3, H100 80GB HBM3, H100 SXM5 80GB\); .*--allow-foreign-calib$" \
    "$TPSIM" run $SCN "${NCCL[@]}" --tp 8 --calib "$TMP/pcie.yaml"

# --- a --calib for another TP degree than the command runs: refused, not ignored --------------
expect_fail2 "run: --calib tp 8 at --tp 4" \
    "^tpsim: --calib $TMP/my-tp8\.yaml: a calibration for tp 8, but this runs tp 4; expected a file measured at the TP degree it runs \(its tp: key\)$" \
    "$TPSIM" run $SCN "${NCCL[@]}" --tp 4 --calib "$TMP/my-tp8.yaml"
expect_fail2 "sweep: --calib tp 8 with --tp 2,4" "a calibration for tp 8, but this runs tp 2, 4;" \
    "$TPSIM" sweep $SCN "${NCCL[@]}" --tp 2,4 --steps 2 --calib "$TMP/my-tp8.yaml"
expect_ok "sweep: --calib tp 8 with --tp 4,8" "$TPSIM" sweep $SCN "${NCCL[@]}" --tp 4,8 --steps 2 --calib "$TMP/my-tp8.yaml" &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "sweep rows: each row's calibration, none borrowed" "$TMP/pyq-out$((PYQ_N + 1))" "$TMP/my-tp8.yaml" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert [r["tp"] for r in rows] == ["4", "8"], rows
assert rows[0]["calibration"] == "models/allreduce/h100-sxm-tp4.yaml", rows[0]
assert rows[1]["calibration"] == sys.argv[2], rows[1]
assert [r["calibration_borrowed"] for r in rows] == ["", ""], rows
PY

# --- a borrowed calibration is marked in sweep rows; the atlas runs each GPU on its own -------
sed -e 's#allreduce/h200-sxm-tp#allreduce/h100-sxm-tp#' -e 's#^name: atlas-h200#&\ncalibration_from: H100 SXM#' \
    scenarios/atlas-h200.yaml > "$TMP/h200-borrows.yaml"
expect_ok "sweep on H200 borrowing H100's, calibration_from" "$TPSIM" sweep "$TMP/h200-borrows.yaml" \
    --tp 1,2 --steps 2 --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "json rows: TP-1 none, TP-2 H100's, borrowed by calibration_from" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["tp"] for r in rows] == [1, 2], rows
assert rows[0]["calibration"] is None and rows[0]["calibration_borrowed"] is None, rows[0]
assert rows[1]["calibration"].endswith("models/allreduce/h100-sxm-tp2.yaml"), rows[1]
assert rows[1]["calibration_borrowed"] == "calibration_from", rows[1]

PY
# the atlas: H100 on the hypotheses' files, H200 on its own measured ones, A100 on the roofline,
# every row under vLLM V1, none borrowed
check "atlas rows carry the calibrations and the engine" bash -c '
    head -1 docs/atlas.csv | grep -q ",calibration,calibration_borrowed,kernel_calibration,serving_engine$" &&
    grep -q "^70B,H200,eager,2,.*,h200-sxm-tp2\.yaml,,h200-sxm\.yaml,vllm-v1$" docs/atlas.csv &&
    grep -q "^70B,H100,eager,2,.*,h100-sxm-tp2\.yaml,,h100-sxm\.yaml,vllm-v1$" docs/atlas.csv &&
    grep -q "^70B,A100,eager,2,.*,a100-sxm4-tp2\.yaml,,roofline,vllm-v1$" docs/atlas.csv &&
    grep -q "^8B,H100,eager,1,.*,,,h100-sxm\.yaml,vllm-v1$" docs/atlas.csv &&
    ! grep -q "calibration_from" docs/atlas.csv'

# --- a name not found lists the names that exist and the closest -----------------------------
expect_fail2 "hardware: H2OO -> did you mean h200" \
    "^tpsim: --set:1:10: hardware: 'H2OO' not found: looked for models/hw/H2OO\.yaml in .*; did you mean h200\? \(models/hw there: a100-sxm4-80gb, b200, h100-sxm, h200, l40s\)$" \
    "$TPSIM" run $SCN --set hardware=H2OO
expect_fail2 "a scenario name one letter off" "did you mean eager-host-dispatch\?" "$TPSIM" run eager-host-dispach
expect_fail2 "no near name: only the list" "'zzz' not found: .* \(models/allreduce there: a100-sxm4-tp2, .*h100-sxm-tp4, .*l40s-pcie-tp8\)$" \
    "$TPSIM" run $SCN --calib zzz
finish
