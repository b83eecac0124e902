# domain.sh: run and sweep say whether a cell lies inside what its scenario was validated on
# (validated:, sim/domain.h), and mark each extrapolation in words; a bad validated: block
# gets one line.
source tests/cli/lib.sh
S=scenarios/eager-host-dispatch.yaml
expect_ok "inside: run json" "$TPSIM" run "$S" --tp 4 --batch 8 --steps 1 --format json
check "inside: no marks, the validated domain echoed" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["domain"]
assert d["inside"] is True and d["marks"] == [], d
v = d["validated"]
assert v["tp"] == [2, 4] and v["modes"] == ["eager"] and v["batch"] == [1, 8] and v["ctx"] == [2048, 2048], v
assert v["hardware"] == "H100 SXM" and v["grid"] == "validate/h100-ctx2048.csv" and "PASS-NO-SKILL" in v["verdict"], v
' "$TMP/out"
expect_ok "outside: run json" "$TPSIM" run "$S" --tp 8 --batch 16 --ctx 4096 --mode graphs --steps 1 --format json
check "outside: one mark per dimension" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["domain"]
assert d["inside"] is False, d
assert d["marks"] == ["TP-8 is outside the validated TP {2, 4}", "graph mode was never validated",
                      "batch 16 is outside the validated batch 1..8",
                      "context 4096 is outside the validated context 2048..2048"], d["marks"]
' "$TMP/out"
expect_ok "outside: run text" "$TPSIM" run "$S" --tp 8 --steps 1
check "text marks the extrapolation" grep -q '^domain     \*\* OUTSIDE what eager-host-dispatch was validated on: TP-8 is outside the validated TP {2, 4} \*\*$' "$TMP/out"
expect_ok "other hardware" "$TPSIM" run "$S" --tp 4 --steps 1 --set hardware=../models/hw/h200.yaml --set "calibration_from=H100 SXM" --format json
check "H200 was never validated" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["domain"]
assert d["marks"] == ["H200 SXM was never validated (only H100 SXM)"], d' "$TMP/out"
expect_ok "never validated" "$TPSIM" run scenarios/vllm-graphs.yaml --steps 1 --format json
check "a scenario without validated: says so" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["domain"]
assert d == {"inside": False, "marks": ["this scenario was never validated"], "validated": None}, d' "$TMP/out"
expect_ok "sweep json" "$TPSIM" sweep "$S" --tp 2,8 --mode eager,graphs --steps 1 --format json
check "sweep rows: in_domain and marks per row" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
got = [(r["tp"], r["mode"], r["in_domain"], r["domain_marks"]) for r in rows]
assert got == [(2, "eager", True, ""), (8, "eager", False, "TP-8 is outside the validated TP {2, 4}"),
               (2, "graphs", False, "graph mode was never validated"),
               (8, "graphs", False, "TP-8 is outside the validated TP {2, 4}; graph mode was never validated")], got
' "$TMP/out"

# bad blocks: one line, status 2
sed "s|\.\./models|$PWD/models|g" "$S" >"$TMP/s.yaml"
bad() { # NAME PATTERN SED
    sed "$3" "$TMP/s.yaml" >"$TMP/bad.yaml"
    expect_fail2 "$1" "$2" "$TPSIM" run "$TMP/bad.yaml" --steps 1
}
bad "range lo > hi" "bad.yaml:[0-9]+:[0-9]+: .*8 > 1, expected lo <= hi" 's/^  batch: \[1, 8\]/  batch: [8, 1]/'
bad "range of one" "bad.yaml:[0-9]+:[0-9]+: .*expected \[lo, hi\], two whole numbers" 's/^  ctx: \[2048, 2048\]/  ctx: [2048]/'
bad "unknown mode" "bad.yaml:[0-9]+:[0-9]+: .*'async' is not allowed, expected one of: eager, graphs" 's/^  modes: \[eager\]/  modes: [async]/'
bad "missing verdict" "bad.yaml:[0-9]+:[0-9]+: .*verdict" '/^  verdict:/d'
bad "unknown key" "bad.yaml:[0-9]+:[0-9]+: .*unknown key 'protocol' in validated" 's/^  grid: /  protocol: within\n  grid: /'
finish
