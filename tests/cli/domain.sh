# domain.sh: run and sweep say whether a cell lies inside what its scenario was validated on
# (validated:, sim/domain.h), and mark each extrapolation in words; a bad validated: block
# gets one line.
source tests/cli/lib.sh
S=scenarios/eager-host-dispatch.yaml
expect_ok "inside: run json" "$TPSIM" run "$S" --tp 4 --batch 8 --steps 1 --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "inside: no marks, the validated domain echoed" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["domain"]
assert d["inside"] is True and d["marks"] == [], d
v = d["validated"]
assert v["tp"] == [2, 4] and v["modes"] == ["eager"] and v["batch"] == [1, 8] and v["ctx"] == [2048, 2048], v
assert v["hardware"] == "H100 SXM" and v["grid"] == "validate/h100-ctx2048.csv" and "PASS-NO-SKILL" in v["verdict"], v
assert v["model"] == "Llama-3.1-70B", v

PY
expect_ok "outside: run json" "$TPSIM" run "$S" --tp 8 --batch 16 --ctx 4096 --mode graphs --steps 1 --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "outside: one mark per dimension" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["domain"]
assert d["inside"] is False, d
assert d["marks"] == ["TP-8 is outside the validated TP {2, 4}", "graph mode was never validated",
                      "batch 16 is outside the validated batch 1..8",
                      "context 4096 is outside the validated context 2048..2048"], d["marks"]

PY
expect_ok "outside: run text" "$TPSIM" run "$S" --tp 8 --steps 1
check "text marks the extrapolation" grep -q '^domain     \*\* OUTSIDE what eager-host-dispatch was tested on: TP-8 is outside the validated TP {2, 4} \*\*$' "$TMP/out"
expect_ok "other hardware" "$TPSIM" run "$S" --tp 4 --steps 1 --set hardware=../models/hw/h200.yaml --set "calibration_from=H100 SXM" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "H200 was never validated" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["domain"]
assert d["marks"] == ["H200 SXM was never validated (only H100 SXM)"], d
PY
expect_ok "never validated" "$TPSIM" run scenarios/vllm-graphs.yaml --steps 1 --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "a scenario without validated: says so" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["domain"]
assert d == {"inside": False, "marks": ["this scenario was never validated"], "validated": None}, d
PY
# another model is outside too (a --set model= or --model run of this scenario)
expect_ok "another model: run json" "$TPSIM" run "$S" --tp 4 --steps 1 --set model=Mixtral-8x7B-v0.1 --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "another model is marked, by name" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["domain"]
assert d["inside"] is False and d["marks"] == ["model Mixtral-8x7B-v0.1 was never validated (only Llama-3.1-70B)"], d
PY
expect_ok "another model: run text" "$TPSIM" run "$S" --tp 4 --steps 1 --set model=Mixtral-8x7B-v0.1
check "text marks the model" grep -q '^domain     \*\* OUTSIDE what eager-host-dispatch was tested on: model Mixtral-8x7B-v0.1 was never validated (only Llama-3.1-70B) \*\*$' "$TMP/out"
expect_ok "another model: sweep" "$TPSIM" sweep "$S" --tp 4 --steps 1 --set model=Mixtral-8x7B-v0.1 --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "sweep marks the model" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))[0]
assert r["in_domain"] is False and r["domain_marks"] == "model Mixtral-8x7B-v0.1 was never validated (only Llama-3.1-70B)", r
PY
expect_ok "sweep json" "$TPSIM" sweep "$S" --tp 2,8 --mode eager,graphs --steps 1 --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "sweep rows: in_domain and marks per row" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
got = [(r["tp"], r["mode"], r["in_domain"], r["domain_marks"]) for r in rows]
assert got == [(2, "eager", True, ""), (8, "eager", False, "TP-8 is outside the validated TP {2, 4}"),
               (2, "graphs", False, "graph mode was never validated"),
               (8, "graphs", False, "TP-8 is outside the validated TP {2, 4}; graph mode was never validated")], got

PY

# every answer states the validated domain and its verdict, inside or outside (issue 16 item
# 5): sweep's CSV and JSON rows, plan's header and rows; built here from the scenario's own
# validated: block, read with a regex, not from tpsim
python3 - "$S" >"$TMP/want.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
blk = t[t.index("\nvalidated:\n"):]
g = lambda k: re.search(r"^  %s: (.*)$" % k, blk, re.M).group(1)
tp = ", ".join(x.strip() for x in g("tp").strip("[]").split(","))
b, c = (g(k).strip("[]").replace(", ", "..") for k in ("batch", "ctx"))
print(f"TP {{{tp}}}, {g('modes').strip('[]')}, batch {b}, ctx {c}, {g('hardware')}, {g('model')}; {g('grid')}: {g('verdict').strip(chr(34))}")
PY
expect_ok "sweep csv" "$TPSIM" sweep "$S" --tp 4,8 --steps 1 -o "$TMP/dom.csv"
pyq "sweep csv: validated_domain on the inside and the outside row" "$TMP/dom.csv" "$TMP/want.txt" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
want = open(sys.argv[2]).read().rstrip("\n")
assert [(r["tp"], r["in_domain"]) for r in rows] == [("4", "true"), ("8", "false")], rows
assert all(r["validated_domain"] == want for r in rows), (rows[0]["validated_domain"], want)
assert "MISFIT" in want and "TP {2, 4}" in want, want
PY
expect_ok "sweep json, never validated" "$TPSIM" sweep scenarios/vllm-graphs.yaml --tp 4 --steps 1 --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "sweep json: validated_domain null when never validated" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))[0]
assert r["validated_domain"] is None and r["domain_marks"] == "this scenario was never validated", r
PY
expect_ok "plan text" "$TPSIM" plan "$S" --gpus 8 --tpot-ms 40 --tp 4 --mode eager --batch-max 4 --steps 1 --warmup 0 --quiet --no-intervals
# in the text header the verdict's words are spelled out for a reader, the grid "against"
python3 - "$TMP/want.txt" >"$TMP/words.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read().rstrip("\n")
head, grid_verdict = t.split("; ", 1)
grid, verdict = grid_verdict.split(": ", 1)
words = {"PASS-NO-SKILL": "passed, no better than a constant", "MISFIT": "did not fit",
         "UNTESTED": "untested", "PASS": "passed", "FAIL": "failed"}
verdict = re.sub(r"\b(PASS-NO-SKILL|MISFIT|UNTESTED|PASS|FAIL)\b(?!-)", lambda m: words[m.group(1)], verdict)
print(f"{head} against {grid}: {verdict}")
PY
check "plan states what it was tested on once, the verdict in words" grep -qxF "tested: eager-host-dispatch was tested on $(cat "$TMP/words.txt") (each row's marks: where it lies outside)" "$TMP/out"
check "plan's header: no verdict code" grep -q "^tested: .*did not fit at TP-2" "$TMP/out"
expect_ok "plan csv" "$TPSIM" plan "$S" --gpus 8 --tpot-ms 40 --tp 4,8 --mode eager --batch-max 2 --steps 1 --warmup 0 --quiet --no-intervals --format csv -o "$TMP/plan.csv"
pyq "plan csv rows carry it, in and out of the domain" "$TMP/plan.csv" "$TMP/want.txt" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
want = open(sys.argv[2]).read().rstrip("\n")
assert {r["in_domain"] for r in rows} == {"true", "false"}, rows
assert all(r["validated_domain"] == want for r in rows), rows[0]
PY

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
bad "missing model" "bad.yaml:[0-9]+:[0-9]+: .*model" '/^  model: Llama/d'
bad "unknown key" "bad.yaml:[0-9]+:[0-9]+: .*unknown key 'protocol' in validated" 's/^  grid: /  protocol: within\n  grid: /'
finish
