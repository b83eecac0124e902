# domain.sh: run and sweep say whether a cell lies inside what its scenario was validated on
# (validated:, sim/domain.h), and mark each extrapolation in words; a bad validated: block
# gets one line. Every bundled block is what tpsim validate --write-domain writes now; a changed
# input (precision, collective model, engine, graph mode, queue depth, a file's bytes) is
# marked; a hand-written block still loads, marked as such.
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
assert v["hardware"] == "H100 SXM" and v["grid"] == "../validate/h100-ctx2048.csv" and "PASS-NO-SKILL" in v["verdict"], v
assert v["model"] == "Llama-3.1-70B" and v["engine"] == "vllm-v0", v
assert v["precision"] == {"weights": "bf16", "kv_cache": "bf16"} and v["allreduce"] == "auto", v
assert v["host_phases"] == "serialised" and v["queue_depth"] == 1024 and "graph_mode" not in v, v
assert v["heldout_protocol"] == "within" and v["heldout_cells"] == 4, v
assert v["heldout_rms_pct"] >= v["heldout_mape_pct"] > 0, v
files = [x["file"] for x in v["inputs"]]
assert files[0] == "eager-host-dispatch.yaml" and files[-1] == "../validate/h100-ctx2048.csv", files
assert "../models/kernels/h100-sxm.yaml" in files and "../models/host/vllm-v0.yaml" in files, files

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
check "text marks the extrapolation" match "$TMP/out" '^domain     \*\* OUTSIDE what eager-host-dispatch was tested on: TP-8 is outside the validated TP \{2, 4\} \*\*$'
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
check "text marks the model" match "$TMP/out" '^domain     \*\* OUTSIDE what eager-host-dispatch was tested on: model Mixtral-8x7B-v0.1 was never validated \(only Llama-3.1-70B\) \*\*$'
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
print(f"TP {{{tp}}}, {g('modes').strip('[]')}, batch {b}, ctx {c}, {g('hardware')}, {g('model')}, engine {g('engine')}; {g('grid')}: {g('verdict').strip(chr(34))}")
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
check "plan's header: no verdict code" match "$TMP/out" "^tested: .*did not fit at H100 TP-2"
# (under the engine it was validated with: plan prices host work with vLLM V1 by default)
expect_ok "plan csv" "$TPSIM" plan "$S" --gpus 8 --tpot-ms 40 --tp 4,8 --mode eager --batch-max 2 --steps 1 --warmup 0 --quiet --no-intervals --format csv -o "$TMP/plan.csv" --set engine=vllm-v0
pyq "plan csv rows carry it, in and out of the domain" "$TMP/plan.csv" "$TMP/want.txt" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
want = open(sys.argv[2]).read().rstrip("\n")
assert {r["in_domain"] for r in rows} == {"true", "false"}, rows
assert all(r["validated_domain"] == want for r in rows), rows[0]
PY

# bad blocks: one line, status 2
sed "s|\.\./models|$PWD/models|g" "$S" >"$TMP/s.yaml"
badblock() { # NAME PATTERN SED
    sed "$3" "$TMP/s.yaml" >"$TMP/bad.yaml"
    expect_fail2 "$1" "$2" "$TPSIM" run "$TMP/bad.yaml" --steps 1
}
badblock "range lo > hi" "bad.yaml:[0-9]+:[0-9]+: .*8 > 1, expected lo <= hi" 's/^  batch: \[1, 8\]/  batch: [8, 1]/'
badblock "range of one" "bad.yaml:[0-9]+:[0-9]+: .*expected \[lo, hi\], two whole numbers" 's/^  ctx: \[2048, 2048\]/  ctx: [2048]/'
badblock "unknown mode" "bad.yaml:[0-9]+:[0-9]+: .*'async' is not allowed, expected one of: eager, graphs" 's/^  modes: \[eager\]/  modes: [async]/'
badblock "missing verdict" "bad.yaml:[0-9]+:[0-9]+: .*verdict" '/^  verdict:/d'
badblock "missing model" "bad.yaml:[0-9]+:[0-9]+: .*model" '/^  model: Llama/d'
badblock "unknown key" "bad.yaml:[0-9]+:[0-9]+: .*unknown key 'protocol' in validated" 's/^  grid: /  protocol: within\n  grid: /'
# what only a block tpsim validate wrote holds: each bad value is one line too
badblock "fingerprint not hex" "bad.yaml:[0-9]+:[0-9]+: .*'e0bdd47a2f81e72X', expected 16 lowercase hex digits" \
    '0,/fp: "[0-9a-f]*"/s//fp: "e0bdd47a2f81e72X"/'
badblock "unknown precision" "bad.yaml:[0-9]+:[0-9]+: .*'fp7' is not allowed" 's/{weights: bf16,/{weights: fp7,/'
badblock "rms below mape" "bad.yaml:[0-9]+:[0-9]+: .*1 is below heldout_mape_pct .*, expected the root-mean-square" \
    's/^  heldout_rms_pct: .*/  heldout_rms_pct: 1/'
badblock "half a written block" "bad.yaml:[0-9]+:[0-9]+: .*missing 'inputs': a block tpsim validate --write-domain wrote" \
    '/^  inputs:/,$d'
badblock "graph_mode without graphs" "bad.yaml:[0-9]+:[0-9]+: .*graph_mode without graphs in modes" \
    's/^  kill_switch_pct: 15$/&\n  graph_mode: full/'
badblock "a file twice" "bad.yaml:[0-9]+:[0-9]+: .*'../validate/h100-ctx2048.csv' is listed twice" \
    's|^    - {file: \.\./validate/h100-ctx2048.csv, fp: "[0-9a-f]*"}|&\n&|'

# --- every bundled block is what validate says now: each scenario validated again under the
# protocols its verdict names (one run each, --summary: no sensitivity runs), the would-be file
# written elsewhere (--write-domain-to) and compared byte for byte with the committed one
# (one awk for every file: FILE, then the flags of the protocols its verdict's clauses name)
n=0
while read -r f flags; do
    n=$((n + 1))
    check "$f: its block names its protocols" test -n "$flags"
    expect_ok "$f: validate --write-domain-to" "$TPSIM" validate "$f" $flags --summary --quiet --jobs 1 \
        --write-domain-to "$TMP/current-${f##*/}"
    check "$f: its validated: block is what tpsim validate writes now (rerun: tpsim validate $f $flags --summary --write-domain)" \
        cmp -s "$f" "$TMP/current-${f##*/}"
done < <(awk '/^validated:/{blk = 1; next} /^[a-z]/{blk = 0}
    blk && /^  verdict: "/ { v = substr($0, 13, length($0) - 13); k = split(v, c, "; "); f = ""
        for (i = 1; i <= k; i++) { p = substr(c[i], 1, index(c[i], ": ") - 1)
            sub(/^transfer /, "transfer=", p); if (p != "") f = f " --" p }
        print FILENAME f }' scenarios/*.yaml)
check "the bundled scenarios with a block (6, found $n)" test "$n" -eq 6

# --- a changed input is marked, in words: run's text and JSON, one change at a time
marked() { # NAME MARK ARGS...: run text shows the mark; JSON: outside, that mark alone
    local name=$1 mark=$2; shift 2
    expect_ok "$name: text" "$TPSIM" run "$S" --tp 4 --steps 1 "$@"
    check "$name: text marks it" grep -qF "OUTSIDE what eager-host-dispatch was tested on: $mark **" "$TMP/out"
    "$TPSIM" run "$S" --tp 4 --steps 1 --format json "$@" >"$TMP/marked-$PYQ_N.json" 2>"$TMP/err"
    check "$name: json" test $? -eq 0
    pyq "$name: json outside, the mark alone" "$TMP/marked-$PYQ_N.json" "$mark" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["domain"]
assert d["inside"] is False and d["marks"] == [sys.argv[2]], d["marks"]
PY
}
marked "FP8 weights" "weights in fp8 were never validated (only bf16)" --set precision.weights=fp8
marked "FP8 KV cache" "a KV cache in fp8 was never validated (only bf16)" --set precision.kv_cache=fp8
marked "collective model" "all-reduce model nccl-fit was never validated (only auto)" --set collective.allreduce=nccl-fit
marked "queue depth" "queue depth 2 was never validated (only 1024)" --set host.queue_depth=2
marked "engine" "engine vllm-v1 was never validated (only vllm-v0)" --set engine=vllm-v1
marked "overlapped phases" "overlapped host phases were never validated (only serialised)" --set execution.host_phases=overlapped
marked "graph mode on an eager block" "graph mode was never validated" --mode graphs

# a kernel calibration: the same files copied beside the scenario keep it inside; one number
# edited is marked with both fingerprints, the one now computed here (fprint.h's hash, written
# out in Python) and the block's; another file named by --set is one the block does not name
T=$TMP/tree
mkdir "$T" && cp --parents "$S" scenarios/cuda-graphs.yaml \
    $(sed -n 's|^    - {file: \.\./\([^,]*\),.*|\1|p' "$S" scenarios/cuda-graphs.yaml | sort -u) "$T"
expect_ok "copied tree: run json" "$TPSIM" run "$T/scenarios/eager-host-dispatch.yaml" --tp 4 --steps 1 --format json
cp "$TMP/out" "$TMP/tree-same.json"
sed -i '0,/t0_us: 4.8252/s//t0_us: 1.0/' "$T/models/kernels/h100-sxm.yaml"
expect_ok "edited kernel calibration: run json" "$TPSIM" run "$T/scenarios/eager-host-dispatch.yaml" --tp 4 --steps 1 --format json
cp "$TMP/out" "$TMP/tree-edited.json"
cp "$T/models/kernels/h100-sxm.yaml" "$TMP/edited-kernels.yaml" # (restored below)
expect_ok "edited kernel calibration: run text" "$TPSIM" run "$T/scenarios/eager-host-dispatch.yaml" --tp 4 --steps 1
check "text marks the edited file" match "$TMP/out" "OUTSIDE .*: \.\./models/kernels/h100-sxm.yaml changed since validation \(fingerprint [0-9a-f]{16}, validated [0-9a-f]{16}\) \*\*"
expect_ok "--set kernels=: run json" "$TPSIM" run "$S" --tp 4 --steps 1 --format json --set "kernels=$T/models/kernels/h100-sxm.yaml"
cp "$TMP/out" "$TMP/kernels-set.json"
pyq "a kernel calibration: copied inside, edited or another file marked" "$S" "$TMP/edited-kernels.yaml" \
    "$TMP/tree-same.json" "$TMP/tree-edited.json" "$TMP/kernels-set.json" <<'PY'
import json, re, sys
def fp(path):  # base/fprint.h: 64-bit words, little-endian, the tail zero-padded, then the length
    b, h, M = open(path, "rb").read(), 0x9e3779b97f4a7c15, (1 << 64) - 1
    def mix(h, w):
        h = ((h ^ w) * 0xbf58476d1ce4e5b9) & M
        return h ^ (h >> 31)
    for i in range(0, len(b), 8):
        h = mix(h, int.from_bytes(b[i:i + 8].ljust(8, b"\0"), "little"))
    return "%016x" % mix(h, len(b))
validated = re.search(r'\{file: \.\./models/kernels/h100-sxm.yaml, fp: "([0-9a-f]{16})"\}', open(sys.argv[1]).read()).group(1)
same, edited, other = (json.load(open(f))["domain"] for f in sys.argv[3:])
assert same["inside"] is True and same["marks"] == [], same["marks"]
want = "../models/kernels/h100-sxm.yaml changed since validation (fingerprint %s, validated %s)" % (fp(sys.argv[2]), validated)
assert fp(sys.argv[2]) != validated and edited["marks"] == [want], (edited["marks"], want)
assert other["inside"] is False and len(other["marks"]) == 2, other["marks"]
assert other["marks"][0] == "validated with files not read now: ../models/kernels/h100-sxm.yaml, ../models/kernels/h100-sxm.gemm_fp8.csv", other["marks"]
assert other["marks"][1].startswith("read but never validated: ") and other["marks"][1].endswith("/models/kernels/h100-sxm.gemm_fp8.csv"), other["marks"]
assert "/models/kernels/h100-sxm.yaml, " in other["marks"][1], other["marks"]
PY

# --- the block rewritten in place, on the copied tree (the kernel file restored; cuda-graphs,
# whose validation fits nothing, is the quick one): the same bytes again; without a block,
# appended at the end, every other byte kept; written again, replaced by the same bytes
cp models/kernels/h100-sxm.yaml "$T/models/kernels/h100-sxm.yaml"
TS=$T/scenarios/cuda-graphs.yaml
expect_ok "--write-domain in place" "$TPSIM" validate "$TS" --within --transfer=2:4 --transfer=4:2 --loo --summary --quiet --write-domain
check "in place: the same bytes" cmp -s "$TS" scenarios/cuda-graphs.yaml
awk '/^[a-z]/{blk = /^validated:/} !blk' scenarios/cuda-graphs.yaml | grep -v '^# written by `tpsim validate --write-domain`' >"$TS"
cp "$TS" "$TMP/noblock.yaml"
expect_ok "--write-domain appends" "$TPSIM" validate "$TS" --within --summary --quiet --write-domain
check "appended: the file before it unchanged" cmp -s "$TMP/noblock.yaml" <(head -c "$(wc -c <"$TMP/noblock.yaml")" "$TS")
check "appended: the writer's comment, then the block" test "$(tail -n +$(($(wc -l <"$TMP/noblock.yaml") + 1)) "$TS" | head -2 | cut -c1-40 | tr '\n' '|')" = '# written by `tpsim validate --write-dom|validated:|'
cp "$TS" "$TMP/appended.yaml"
expect_ok "--write-domain replaces" "$TPSIM" validate "$TS" --within --summary --quiet --write-domain
check "replaced: the same bytes" cmp -s "$TS" "$TMP/appended.yaml"
expect_ok "appended block: inside" "$TPSIM" run "$TS" --tp 4 --steps 1
check "appended block: no mark" match "$TMP/out" "^domain     inside what cuda-graphs was tested on"
expect_fail2 "--write-domain with --set" "^tpsim: --write-domain: with --set, expected the scenario as written" \
    "$TPSIM" validate "$TS" --write-domain --set host.queue_depth=2
expect_fail2 "--write-domain-to the scenario" "refusing to overwrite it" \
    "$TPSIM" validate "$TS" --write-domain-to "$TS"
expect_fail2 "two protocols, no --summary nor --write-domain" "a second protocol" \
    "$TPSIM" validate "$TS" --within --loo

# --- a hand-written block (the earlier form) still loads, marked as such in every answer
awk '/^[a-z]/{blk = /^validated:/} blk && /^  (engine|precision|allreduce|host_phases|graph_mode|queue_depth|kill_switch_pct|heldout_.*|inputs):/{next}
     blk && /^    /{next} {print}' "$TMP/s.yaml" >"$TMP/hand.yaml"
expect_ok "hand-written block: run" "$TPSIM" run "$TMP/hand.yaml" --tp 4 --steps 1
check "hand-written block: marked" grep -q "^domain     \*\* OUTSIDE what eager-host-dispatch was tested on: the validated: block was not written by tpsim validate --write-domain \*\*$" "$TMP/out"
check "hand-written block: the statement says so" match "$TMP/out" "\(hand-written, not by tpsim validate --write-domain\)\)$"
finish
