#!/usr/bin/env bash
# run_errors.sh: `tpsim run` on bad input. Every bad value in a scenario, model, hardware or
# calibration file, flag or --set override gets status 2, exactly one stderr line
# "tpsim: file:line:col: ..." at the real position, nothing on stdout, and no output file.
source tests/cli/lib.sh
ROOT=$PWD
BASE=scenarios/paper-additive.yaml

# copy SRC DST: SRC with the scenario's relative model paths made absolute (same line numbers).
copy() { sed "s#\.\./models/#$ROOT/models/#" "$1" >"$2"; }
# edit SRC DST LINE TEXT: a copy of SRC with line LINE replaced by TEXT (numbers stay put).
# (in the shell, as awk 'NR == n { print TEXT; next } { print }' writes it: every line ended by
# a newline; a LINE past the end changes nothing)
edit() {
    local src=$1 dst=$2 line=$3 text=$4
    local -a lines
    mapfile -t lines <"$src"
    [ "$line" -ge 1 ] && [ "$line" -le "${#lines[@]}" ] && lines[line - 1]=$text
    if [ "${#lines[@]}" -gt 0 ]; then printf '%s\n' "${lines[@]}" >"$dst"; else : >"$dst"; fi
}
# scn NAME LINE TEXT: $TMP/NAME.yaml, the bundled scenario with line LINE replaced.
scn() { edit "$TMP/base.yaml" "$TMP/$1.yaml" "$2" "$3"; }

copy "$BASE" "$TMP/base.yaml"
S=$TMP/base.yaml
expect_ok "the unedited copy runs" "$TPSIM" run "$S"

# --- the scenario file ------------------------------------------------------------------------
scn unknown 24 '  flops_eff: 0.7'
expect_fail2 "unknown key" "^tpsim: $TMP/unknown\.yaml:24:3: unknown key 'flops_eff' in gpu, expected one of: hbm_efficiency, " \
    "$TPSIM" run "$TMP/unknown.yaml"
scn unknown_root 36 'offset_us: -3.30'
expect_fail2 "unknown top-level key" "^tpsim: $TMP/unknown_root\.yaml:36:1: unknown key 'offset_us', expected one of: .*offset_ms" \
    "$TPSIM" run "$TMP/unknown_root.yaml"
scn type_list 23 '  hbm_efficiency: [0.756]'
expect_fail2 "list for a number" "^tpsim: $TMP/type_list\.yaml:23:19: gpu\.hbm_efficiency: expected a number in \[0\.001, 1\], got a list" \
    "$TPSIM" run "$TMP/type_list.yaml"
scn type_scalar 19 'defaults: 5'
expect_fail2 "scalar for a mapping" "^tpsim: $TMP/type_scalar\.yaml:19:11: defaults: is a scalar, expected a mapping" \
    "$TPSIM" run "$TMP/type_scalar.yaml"
scn type_quoted 36 'offset_ms: "-3.30"'
expect_fail2 "quoted number" "^tpsim: $TMP/type_quoted\.yaml:36:12: offset_ms: .*quoted string" \
    "$TPSIM" run "$TMP/type_quoted.yaml"
scn type_bool 28 '  embedding_allreduce: no'
expect_fail2 "bad bool" "^tpsim: $TMP/type_bool\.yaml:28:24: program\.embedding_allreduce: expected true or false" \
    "$TPSIM" run "$TMP/type_bool.yaml"
scn missing_name 11 '# (no name)'
expect_fail2 "missing name" "^tpsim: $TMP/missing_name\.yaml:12:1: missing required key 'name'" \
    "$TPSIM" run "$TMP/missing_name.yaml"
scn missing_mean 31 '  launch: {dist: constant}'
expect_fail2 "missing mean_us" "^tpsim: $TMP/missing_mean\.yaml:31:11: host\.launch: missing required key 'mean_us'" \
    "$TPSIM" run "$TMP/missing_mean.yaml"
scn missing_cv 31 '  launch: {dist: lognormal, mean_us: 5}'
expect_fail2 "lognormal without cv" "^tpsim: $TMP/missing_cv\.yaml:31:11: host\.launch: missing required key 'cv'" \
    "$TPSIM" run "$TMP/missing_cv.yaml"
scn dup 29 '  embedding_allreduce: true'
expect_fail2 "duplicate key" "^tpsim: $TMP/dup\.yaml:29:3: duplicate key 'embedding_allreduce' \(first at line 28\)" \
    "$TPSIM" run "$TMP/dup.yaml"
scn hbm 23 '  hbm_efficiency: 1.5'
expect_fail2 "hbm_efficiency 1.5" "^tpsim: $TMP/hbm\.yaml:23:19: gpu\.hbm_efficiency: 1\.5 is out of range, expected a number in \[0\.001, 1\]" \
    "$TPSIM" run "$TMP/hbm.yaml"
scn negmean 32 '  collective: {dist: constant, mean_us: -1}'
expect_fail2 "negative mean_us" "^tpsim: $TMP/negmean\.yaml:32:41: host\.collective\.mean_us: -1 is out of range" \
    "$TPSIM" run "$TMP/negmean.yaml"
scn qdepth 34 '  queue_depth: 0'
expect_fail2 "queue_depth 0" "^tpsim: $TMP/qdepth\.yaml:34:16: host\.queue_depth: 0 is out of range, expected an integer in \[1, " \
    "$TPSIM" run "$TMP/qdepth.yaml"
scn tp0 19 'defaults: {tp: 0, batch: 1, ctx: 2048, steps: 10, warmup: 1, seed: 1}'
expect_fail2 "defaults.tp 0" "^tpsim: $TMP/tp0\.yaml:19:16: defaults\.tp: 0 is out of range" \
    "$TPSIM" run "$TMP/tp0.yaml"
scn garbage 36 'offset_ms: 12abc'
expect_fail2 "garbage number" "^tpsim: $TMP/garbage\.yaml:36:12: offset_ms: '12abc' is not a number" \
    "$TPSIM" run "$TMP/garbage.yaml"
scn huge 36 'offset_ms: 1e999'
expect_fail2 "1e999" "^tpsim: $TMP/huge\.yaml:36:12: offset_ms: '1e999' is not a number" \
    "$TPSIM" run "$TMP/huge.yaml"
scn nan 36 'offset_ms: nan'
expect_fail2 "nan" "^tpsim: $TMP/nan\.yaml:36:12: offset_ms: 'nan' is not a number" \
    "$TPSIM" run "$TMP/nan.yaml"
scn dist 33 '  step: {dist: gamma, mean_us: 0}'
expect_fail2 "bad dist name" "^tpsim: $TMP/dist\.yaml:33:16: host\.step\.dist: 'gamma' is not allowed, expected one of: constant, uniform, normal, lognormal" \
    "$TPSIM" run "$TMP/dist.yaml"
scn mode 36 'execution: {mode: turbo}'
expect_fail2 "bad execution mode" "^tpsim: $TMP/mode\.yaml:36:19: execution\.mode: 'turbo' is not allowed, expected one of: eager, graphs" \
    "$TPSIM" run "$TMP/mode.yaml"
scn syntax 31 '  launch: {dist: constant, mean_us: 0'
expect_fail2 "YAML syntax error" "^tpsim: $TMP/syntax\.yaml:32:[0-9]+: YAML syntax error" \
    "$TPSIM" run "$TMP/syntax.yaml"
scn tab 31 $'\tlaunch: {dist: constant, mean_us: 0}'
expect_fail2 "tab indentation, named as a tab" "^tpsim: $TMP/tab\.yaml:31:1: a tab: YAML indents with spaces only, expected spaces here$" \
    "$TPSIM" run "$TMP/tab.yaml"
scn badutf 12 $'description: caf\xe9'
expect_fail2 "bad UTF-8 at its line" "^tpsim: $TMP/badutf\.yaml:12:[0-9]+: YAML syntax error: .*UTF-8" \
    "$TPSIM" run "$TMP/badutf.yaml"
# the second document is reported at its first line after the --- marker
{ cat "$S"; printf -- '---\nname: second\n'; } >"$TMP/twodocs.yaml"
expect_fail2 "two documents" "^tpsim: $TMP/twodocs\.yaml:$(($(wc -l <"$S") + 2)):1: a second YAML document" \
    "$TPSIM" run "$TMP/twodocs.yaml"
: >"$TMP/empty.yaml"
expect_fail2 "empty file" "^tpsim: $TMP/empty\.yaml:1:1: empty file" "$TPSIM" run "$TMP/empty.yaml"
printf -- '- a\n- b\n' >"$TMP/list.yaml"
expect_fail2 "root is a list" "^tpsim: $TMP/list\.yaml:1:1: the top level must be a mapping" \
    "$TPSIM" run "$TMP/list.yaml"

# --- referenced files -------------------------------------------------------------------------
scn nomodel 14 'model: /nonexistent/m.yaml'
expect_fail2 "missing model file" "^tpsim: $TMP/nomodel\.yaml:14:8: model: /nonexistent/m\.yaml: cannot open" \
    "$TPSIM" run "$TMP/nomodel.yaml"
scn nohw 15 'hardware: no-such-hw.yaml'
expect_fail2 "missing hardware file (relative)" "^tpsim: $TMP/nohw\.yaml:15:11: hardware: $TMP/no-such-hw\.yaml: cannot open" \
    "$TPSIM" run "$TMP/nohw.yaml"
scn dirmodel 14 "model: $ROOT/models"
expect_fail2 "model is a directory" "^tpsim: $TMP/dirmodel\.yaml:14:8: model: $ROOT/models: cannot open: is a directory" \
    "$TPSIM" run "$TMP/dirmodel.yaml"
scn nocal 18 '  - /nonexistent/cal.yaml'
expect_fail2 "missing calibration file" "^tpsim: $TMP/nocal\.yaml:18:5: allreduce\.1: /nonexistent/cal\.yaml: cannot open" \
    "$TPSIM" run "$TMP/nocal.yaml"

edit models/llama-3.1-70b.yaml "$TMP/m_heads.yaml" 5 'heads: 0'
scn use_m_heads 14 "model: $TMP/m_heads.yaml"
expect_fail2 "model heads 0" "^tpsim: $TMP/m_heads\.yaml:5:8: heads: 0 is out of range" \
    "$TPSIM" run "$TMP/use_m_heads.yaml"
edit models/llama-3.1-70b.yaml "$TMP/m_kv.yaml" 6 'kv_heads: 7'
scn use_m_kv 14 "model: $TMP/m_kv.yaml"
expect_fail2 "model kv_heads 7" "^tpsim: $TMP/m_kv\.yaml:6:11: kv_heads: 7 does not divide heads \(64\)" \
    "$TPSIM" run "$TMP/use_m_kv.yaml"
edit models/llama-3.1-70b.yaml "$TMP/m_key.yaml" 3 'layer: 80'
scn use_m_key 14 "model: $TMP/m_key.yaml"
expect_fail2 "model unknown key" "^tpsim: $TMP/m_key\.yaml:3:1: unknown key 'layer', expected one of: name, layers" \
    "$TPSIM" run "$TMP/use_m_key.yaml"
edit models/llama-3.1-70b.yaml "$TMP/m_src.yaml" 11 '# (no source)'
scn use_m_src 14 "model: $TMP/m_src.yaml"
expect_fail2 "model without source" "^tpsim: $TMP/m_src\.yaml:2:1: missing required key 'source'" \
    "$TPSIM" run "$TMP/use_m_src.yaml"

edit models/hw/h100-sxm.yaml "$TMP/hw_bw.yaml" 7 'hbm_gbps: fast'
scn use_hw_bw 15 "hardware: $TMP/hw_bw.yaml"
expect_fail2 "hardware hbm_gbps garbage" "^tpsim: $TMP/hw_bw\.yaml:7:11: hbm_gbps: 'fast' is not a number" \
    "$TPSIM" run "$TMP/use_hw_bw.yaml"
edit models/hw/h100-sxm.yaml "$TMP/hw_kind.yaml" 2 'kind: model'
scn use_hw_kind 15 "hardware: $TMP/hw_kind.yaml"
expect_fail2 "hardware wrong kind" "^tpsim: $TMP/hw_kind\.yaml:2:7: kind: 'model' is not allowed, expected one of: hardware" \
    "$TPSIM" run "$TMP/use_hw_kind.yaml"

CAL2=models/allreduce/h100-sxm-tp2.yaml
edit "$CAL2" "$TMP/cal_beta.yaml" 8 'beta_gbps: 0'
scn use_cal_beta 17 "  - $TMP/cal_beta.yaml"
expect_fail2 "calibration beta 0" "^tpsim: $TMP/cal_beta\.yaml:8:12: beta_gbps: 0 is out of range" \
    "$TPSIM" run "$TMP/use_cal_beta.yaml"
edit "$CAL2" "$TMP/cal_fit.yaml" 6 'fit: cubic'
scn use_cal_fit 17 "  - $TMP/cal_fit.yaml"
expect_fail2 "calibration bad fit" "^tpsim: $TMP/cal_fit\.yaml:6:6: fit: 'cubic' is not allowed, expected one of: linear, piecewise" \
    "$TPSIM" run "$TMP/use_cal_fit.yaml"
edit "$CAL2" "$TMP/cal_pw.yaml" 6 'fit: piecewise'
scn use_cal_pw 17 "  - $TMP/cal_pw.yaml"
expect_fail2 "piecewise without pieces" "^tpsim: $TMP/cal_pw\.yaml:6:6: fit: .*no pieces" \
    "$TPSIM" run "$TMP/use_cal_pw.yaml"
scn twocal 18 "  - $ROOT/$CAL2"
expect_fail2 "two calibrations for one tp" "^tpsim: $TMP/twocal\.yaml:18:5: allreduce\.1: a second calibration for tp 2" \
    "$TPSIM" run "$TMP/twocal.yaml"
expect_fail2 "--calib bad file" "^tpsim: $TMP/cal_beta\.yaml:8:12: beta_gbps: 0 is out of range" \
    "$TPSIM" run "$S" --calib "$TMP/cal_beta.yaml"
expect_fail2 "--calib missing file" "^tpsim: $TMP/nope\.yaml: cannot open" \
    "$TPSIM" run "$S" --calib "$TMP/nope.yaml"

# --- the cell: tp against calibrations and the model ------------------------------------------
expect_fail2 "no calibration for --tp 8" "^tpsim: $TMP/base\.yaml: no all-reduce calibration for tp 8 \(have: 2, 4\)" \
    "$TPSIM" run "$S" --tp 8
edit "$CAL2" "$TMP/cal3.yaml" 5 'tp: 3'
expect_fail2 "--tp 3 does not shard the model" "^tpsim: tp 3 does not shard Llama-3\.1-70B: heads \(64\)" \
    "$TPSIM" run "$S" --tp 3 --calib "$TMP/cal3.yaml"

# --- --set ------------------------------------------------------------------------------------
expect_fail2 "--set out of range" "^tpsim: --set:1:20: gpu\.hbm_efficiency: 2 is out of range" \
    "$TPSIM" run "$S" --set gpu.hbm_efficiency=2
expect_fail2 "--set garbage, second flag" "^tpsim: --set:2:18: host\.queue_depth: 'many' is not an integer" \
    "$TPSIM" run "$S" --set gpu.hbm_efficiency=0.5 --set host.queue_depth=many
expect_fail2 "--set unknown key" "^tpsim: --set:1:1: unknown key 'hbm' in gpu, expected one of: hbm_efficiency" \
    "$TPSIM" run "$S" --set gpu.hbm=1
expect_fail2 "--set unknown top-level key" "^tpsim: --set:1:1: unknown key 'nosuch', expected one of: " \
    "$TPSIM" run "$S" --set nosuch=1
expect_fail2 "--set on a mapping" "^tpsim: --set:1:6: host: is a mapping, --set overrides only scalars" \
    "$TPSIM" run "$S" --set host=1
expect_fail2 "--set through a scalar" "^tpsim: --set:1:1: name\.x: 'name' is a scalar" \
    "$TPSIM" run "$S" --set name.x=1
expect_fail2 "--set list index out of range" "^tpsim: --set:1:1: allreduce\.5: 'allreduce' is a list of 2" \
    "$TPSIM" run "$S" --set allreduce.5=x.yaml
expect_fail2 "--set empty component" "^tpsim: --set:1:1: gpu\.\.hbm_efficiency=1: empty key component" \
    "$TPSIM" run "$S" --set gpu..hbm_efficiency=1
expect_fail2 "--set without =" "^tpsim: --set gpu\.hbm_efficiency: expected dotted\.key=value" \
    "$TPSIM" run "$S" --set gpu.hbm_efficiency
expect_fail2 "--set without value" "^tpsim: --set: missing value" "$TPSIM" run "$S" --set
expect_fail2 "--set dist choice" "^tpsim: --set:1:16: host\.step\.dist: 'gamma' is not allowed" \
    "$TPSIM" run "$S" --set host.step.dist=gamma
if expect_ok "--set a good value" "$TPSIM" run "$S" --set offset_ms=0 --format json; then
    check "--set took effect" match "$TMP/out" '"offset": ?0([,}]|$)'
fi
expect_fail2 "--mode bad" "^tpsim: --mode: 'turbo', expected eager or graphs" "$TPSIM" run "$S" --mode turbo

# --- flags ------------------------------------------------------------------------------------
expect_fail2 "unknown flag" "^tpsim: run: unknown option '--bogus'" "$TPSIM" run "$S" --bogus
expect_fail2 "flag missing its value" "^tpsim: --tp: missing value" "$TPSIM" run "$S" --tp
expect_fail2 "--batch missing its value" "^tpsim: --batch: missing value" "$TPSIM" run "$S" --batch
expect_fail2 "non-integer --tp" "^tpsim: --tp: 'two' is not an integer, expected 1\.\.1024" "$TPSIM" run "$S" --tp two
expect_fail2 "fractional --tp" "^tpsim: --tp: '2\.0' is not an integer" "$TPSIM" run "$S" --tp 2.0
expect_fail2 "empty --tp" "^tpsim: --tp: '' is not an integer" "$TPSIM" run "$S" --tp ''
expect_fail2 "--tp 0" "^tpsim: --tp: 0 is out of range, expected 1\.\.1024" "$TPSIM" run "$S" --tp 0
expect_fail2 "--tp huge" "^tpsim: --tp: 99999999999999999999 is out of range, expected 1..1024" "$TPSIM" run "$S" --tp 99999999999999999999
expect_fail2 "--steps 0" "^tpsim: --steps: 0 is out of range" "$TPSIM" run "$S" --steps 0
expect_fail2 "--seed negative" "^tpsim: --seed: '-1' is not a non-negative integer" "$TPSIM" run "$S" --seed -1
expect_fail2 "bad --format" "^tpsim: --format: 'xml', expected text or json" "$TPSIM" run "$S" --format xml
expect_fail2 "second positional" "^tpsim: run: a second scenario 'extra', expected one" "$TPSIM" run "$S" extra
expect_fail2 "nonexistent scenario" "^tpsim: $TMP/none\.yaml: cannot open: " "$TPSIM" run "$TMP/none.yaml"
expect_fail2 "no scenario" "^tpsim: run: missing SCENARIO" "$TPSIM" run
expect_fail2 "unknown command" "^tpsim: unknown command 'runn'" "$TPSIM" runn "$S"

# --- output files: nothing half-written -------------------------------------------------------
mkdir -p "$TMP/tr"
X=$TMP/tr/x.json
no_trace_left() { [ ! -e "$X" ] && ! has_entry "$TMP/tr" '*'; }
expect_fail2 "--trace with a bad scenario" "^tpsim: $TMP/hbm\.yaml:23:19: " "$TPSIM" run "$TMP/hbm.yaml" --trace "$X"
check "no trace after a bad scenario" no_trace_left
expect_fail2 "--trace with --tp 8" "no all-reduce calibration for tp 8" "$TPSIM" run "$S" --tp 8 --trace "$X"
check "no trace after a missing calibration" no_trace_left
expect_fail2 "--trace with --tp 3" "does not shard" "$TPSIM" run "$S" --tp 3 --calib "$TMP/cal3.yaml" --trace "$X"
check "no trace after an unshardable tp" no_trace_left
expect_fail2 "--trace with a bad --set" "^tpsim: --set:1:" "$TPSIM" run "$S" --trace "$X" --set gpu.hbm_efficiency=0
check "no trace after a bad --set" no_trace_left
expect_fail2 "--trace with a bad model" "^tpsim: $TMP/m_heads\.yaml:5:8: " "$TPSIM" run "$TMP/use_m_heads.yaml" --trace "$X"
check "no trace after a bad model" no_trace_left
expect_fail2 "--trace then a bad flag" "^tpsim: --format: " "$TPSIM" run "$S" --trace "$X" --format yaml
check "no trace after a bad flag" no_trace_left
expect_fail2 "--trace into a missing directory" "^tpsim: $TMP/no/such/dir/x\.json: cannot create: " \
    "$TPSIM" run "$S" --trace "$TMP/no/such/dir/x.json"
check "the missing directory was not made" test ! -e "$TMP/no"
expect_fail2 "--trace onto a directory" "^tpsim: $TMP/tr: is a directory" "$TPSIM" run "$S" --trace "$TMP/tr"
expect_fail2 "--trace empty" "^tpsim: empty output path" "$TPSIM" run "$S" --trace ''
expect_fail2 "--trace missing its value" "^tpsim: --trace: missing value" "$TPSIM" run "$S" --trace
check "no trace after any refusal" no_trace_left
if expect_ok "--trace on a good run" "$TPSIM" run "$S" --steps 2 --trace "$X"; then
    check "trace written" test -s "$X"
    pyq "trace is valid JSON" "$X" <<'PY'
import json,sys; json.load(open(sys.argv[1]))
PY
    check "no temp file beside the trace" not has_entry "$TMP/tr" '*tmp*'
    check "the report is on stdout" match "$TMP/out" '^step time'
fi

# --- top level --------------------------------------------------------------------------------
"$TPSIM" >"$TMP/out" 2>"$TMP/err"
check "no arguments exits 2" test $? -eq 2
check "no arguments prints usage on stderr" has "$TMP/err" usage
check "no arguments leaves stdout empty" test ! -s "$TMP/out"
if expect_ok "--help" "$TPSIM" --help; then check "--help on stdout" has "$TMP/out" usage; fi
if expect_ok "--version" "$TPSIM" --version; then check "--version prints it" match "$TMP/out" '^tpsim [0-9]+\.[0-9]+'; fi
if expect_ok "run --help" "$TPSIM" run --help; then check "run --help on stdout" has "$TMP/out" 'usage: tpsim run'; fi

finish
