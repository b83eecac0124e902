#!/usr/bin/env bash
# calib_hostile.sh: a kernel calibration, hardware file or all-reduce calibration edited into
# something no fit produces is refused at its line: a class whose n leaves its error unknown,
# a from: that is not its source's law or that chains, a rate or time outside phys.h's range.
. "$(dirname "$0")/lib.sh"
K=models/kernels/h100-sxm.yaml
SK=scenarios/eager-host-dispatch.yaml
kal() { sed "$1" "$K" >"$TMP/k.yaml"; }
cp models/kernels/h100-sxm.*.csv "$TMP/" # the grids the file names, beside the copy
ln() { grep -n "^  $1: {law" "$K" | cut -d: -f1; } # a class's line in the bundled file
runk() { "$TPSIM" run "$SK" --set kernels="$TMP/k.yaml" --tp 4; }

expect_ok "the bundled calibration loads" "$TPSIM" run "$SK" --set kernels="$K" --tp 4

# --- n: one row more than the law's parameters (const 1, linear 2, row 3, tiled 4) ------------
kal '/^  add:/s/n: 1044/n: 2/'
expect_fail2 "linear on 2 rows" "k.yaml:$(ln add):[0-9]+: classes.add.n: 2 rows for law linear's 2 parameters: its error is unknown .*expected n >= 3" runk
kal '/^  add:/s/n: 1044/n: 3/'
expect_ok "linear on 3 rows" runk
kal '/^  gemm:/s/n: 4176/n: 4/'
expect_fail2 "tiled on 4 rows" "k.yaml:$(ln gemm):[0-9]+: classes.gemm.n: 4 rows for law tiled's 4 parameters.*expected n >= 5" runk
kal '/^  rope:/s/n: 1044/n: 1/'
expect_fail2 "row on 1 row" "k.yaml:$(ln rope):[0-9]+: classes.rope.n: 1 rows for law row's 3 parameters.*expected n >= 4" runk

# fit-kernels on one measured row of a class: refused, not written with mape_pct 0.00
head -2 tests/data/attention-h100/decode.csv >"$TMP/one.csv"
expect_fail2 "fit on one row" "fit-kernels: the 'attention' class has 1 row, too few for any law: .* expected at least 2" \
    "$TPSIM" fit-kernels "$TMP/one.csv"
head -3 tests/data/attention-h100/decode.csv >"$TMP/two.csv"
if expect_ok "fit on two rows" "$TPSIM" fit-kernels "$TMP/two.csv" --format json; then
    check "two rows: the constant law, its error not 0" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["classes"]["attention"]
# by hand: rows 15.060 and 17.903 us, weights equal; the least-relative-squares constant
# t = (1/a + 1/b) / (1/a^2 + 1/b^2) misses each row by a few percent
a, b = 15.060, 17.903
t = (1 / a + 1 / b) / (1 / a**2 + 1 / b**2)
want = 50 * (abs(t - a) / a + abs(t - b) / b)
assert c["law"] == "const" and c["n"] == 2, c
assert abs(c["t0_us"] - t) < 1e-3 and abs(c["mape_pct"] - want) < 1e-2 and want > 5, (c, t, want)
' "$TMP/out"
fi

# --- from: the copy is its source's law, term for term; its source is measured ----------------
kal '/^  copy:/s/gbps: 3864.89/gbps: 3864.90/'
expect_fail2 "from: a different rate" "k.yaml:$(ln copy):[0-9]+: classes.copy.from: the law differs from add's, which it copies" runk
kal '/^  copy:/s/law: linear, t0_us: 1.3021, gbps: 3864.89/law: const, t0_us: 1.3021/;/classes.copy.gbps/d'
expect_fail2 "from: a different law" "k.yaml:[0-9]+:[0-9]+: classes.copy.from: the law differs from add's" runk
kal '/^  copy:/s/from: add/from: sampler/'
expect_fail2 "from: a chain" "k.yaml:$(ln copy):[0-9]+: classes.copy.from: class 'sampler' copies 'add' in turn, expected a measured class \(no chain or cycle of from:\)" runk
kal '/^  copy:/s/from: add/from: sampler/;/^  sampler:/s/from: add/from: copy/'
expect_fail2 "from: a cycle" "k.yaml:$(ln sampler):[0-9]+: classes.sampler.from: class 'copy' copies 'sampler' in turn" runk

# --- rates and times in their physical range (phys.h) -----------------------------------------
kal '/^  add:/s/gbps: 3864.89/gbps: 1e-290/'
expect_fail2 "a rate near zero" "k.yaml:$(ln add):[0-9]+: classes.add.gbps: 1e-290 is below the physical range, expected 0 \(no such term\) or 0.1..100000" runk
kal '/^  gemm:/s/tflops: 712.54/tflops: 1e7/'
expect_fail2 "a rate past any GPU" "k.yaml:$(ln gemm):[0-9]+: .*tflops.*1e\+07" runk
kal '/^  rope:/s/row_gflops: 13.359490/row_gflops: 1e-7/'
expect_fail2 "a per-row rate near zero" "k.yaml:$(ln rope):[0-9]+: classes.rope.row_gflops: 1e-07 is below the physical range" runk
kal '/^  add:/s/t0_us: 1.3021/t0_us: 2e6/'
expect_fail2 "a fixed time past a second" "k.yaml:$(ln add):[0-9]+: .*t0_us.*2e\+06" runk
sed 's/^hbm_gbps: .*/hbm_gbps: 1e6/' models/hw/h100-sxm.yaml >"$TMP/hw.yaml"
expect_fail2 "hardware: HBM past any GPU" "hw.yaml:[0-9]+:[0-9]+: .*hbm_gbps.*1e\+06" \
    "$TPSIM" run "$SK" --set hardware="$TMP/hw.yaml" --tp 4
A=models/allreduce/h100-sxm-tp4.yaml
sed 's/^beta_gbps: .*/beta_gbps: 0.001/' "$A" >"$TMP/ar.yaml"
sed "s#^  - ../models/allreduce/h100-sxm-tp4.yaml#  - $TMP/ar.yaml#" "$SK" >"$TMP/s.yaml"
expect_fail2 "all-reduce: bandwidth near zero" "ar.yaml:[0-9]+:[0-9]+: .*beta_gbps.*0.001" \
    "$TPSIM" run "$TMP/s.yaml" --tp 4
# --- tpsim-probe keys, read exactly: gemv_tpK_LAYER_bB_gbps, every character, K and B in range --
P=tests/data/kfit/probe-synthetic.yaml
probe() { sed "s/^  gemv_tp2_qkv_proj_b1_gbps:/  $1:/" "$P" >"$TMP/p.yaml"; }
form="p.yaml:[0-9]+:[0-9]+: measured.%s: expected a key gemv_tpK_LAYER_bB_gbps"
probe gemv_tp4294967298_qkv_proj_b1_gbps   # 2^32 + 2: not TP 2
expect_fail2 "probe: TP past a 32-bit int" "measured.gemv_tp4294967298_qkv_proj_b1_gbps: TP 4294967298 and batch 1, expected a TP degree dividing 64" \
    "$TPSIM" fit-kernels "$TMP/p.yaml"
probe gemv_tp2_qkv_proj_b99999999999_gbps
expect_fail2 "probe: batch out of range" "TP 2 and batch 99999999999, expected .* a batch of 1..16777216" \
    "$TPSIM" fit-kernels "$TMP/p.yaml"
for k in gemv_tp2_qkv_proj_b1x_gbps gemv_tp02_qkv_proj_b1_gbps gemv_tp-2_qkv_proj_b1_gbps \
         gemv_tp2_qkv_projx_b1_gbps gemv_tp2_qkv_b1_gbps gemv_tp2_qkv_proj_b_gbps gemv_tp_qkv_proj_b1_gbps; do
    probe "$k"
    expect_fail2 "probe: $k" "$(printf "$form" "$k")" "$TPSIM" fit-kernels "$TMP/p.yaml"
done
probe gemv_tp2_qkv_proj_b1_gbps
expect_ok "probe: the bundled keys" "$TPSIM" fit-kernels "$TMP/p.yaml"
# --- a measured grid is parsed when an op first prices by it, and a bad row is refused then:
# a bf16 run never reads the FP8 GEMM grid; an FP8 run and validate (which vouches for every
# input it lists) stop at the row, one line, before any output
sed -n '1,3p' models/kernels/h100-sxm.gemm_fp8.csv >"$TMP/badfp8.csv"
printf '4096,8192,16,nan\n' >>"$TMP/badfp8.csv"
sed -n '4,$p' models/kernels/h100-sxm.gemm_fp8.csv >>"$TMP/badfp8.csv"
sed 's/grid: h100-sxm.gemm_fp8.csv/grid: badfp8.csv/' "$K" >"$TMP/k.yaml"
check "the copy names the edited grid" has "$TMP/k.yaml" "grid: badfp8.csv"
expect_ok "bf16: the FP8 grid is never read" runk
expect_fail2 "fp8: its bad row refused" "badfp8.csv:4:[0-9]+: 'nan' is not a number" \
    "$TPSIM" run "$SK" --set kernels="$TMP/k.yaml" --tp 4 --set precision.weights=fp8
expect_fail2 "validate reads every grid" "badfp8.csv:4:[0-9]+: 'nan' is not a number" \
    "$TPSIM" validate "$SK" --set kernels="$TMP/k.yaml" --quiet

finish
