#!/usr/bin/env bash
# fit_kernels.sh: tpsim fit-kernels, fits and --test, and its refusals of bad profiles.
. tests/cli/lib.sh
V70=tests/data/vidur-h100/llama-2-70b-mlp.csv
V7=tests/data/vidur-h100/llama-2-7b-mlp.csv
ATT=tests/data/attention-h100/decode.csv

expect_ok "fit text" "$TPSIM" fit-kernels "$V70" "$ATT"
check "fit text names the gemm law" grep -Eq '^gemm +4176 +4 +tiled' "$TMP/out"
check "fit text: the norms' law is the latency floor" grep -Eq '^norm +2088 +4 +floor' "$TMP/out"
check "fit text: held-out by TP degree" grep -Eq '^  gemm +tp1 +[0-9.]+ +tp2 +[0-9.]+ +tp4 +[0-9.]+ +tp8 +[0-9.]+$' "$TMP/out"
expect_ok "fit json" "$TPSIM" fit-kernels "$V70" "$ATT" --format json
check "json has the gemm class" grep -q '"gemm":{"law":"tiled"' "$TMP/out"
check "json held-out by fold" grep -q '"heldout_by_fold":{"1":' "$TMP/out"
expect_ok "fit -o" "$TPSIM" fit-kernels "$V70" "$ATT" --hardware "H100 SXM" -o "$TMP/k.yaml"
check "calibration written" grep -q '^kind: kernel-calibration' "$TMP/k.yaml"
# the bundled calibration is what the command writes from the bundled profiles
check "bundled calibration is reproducible" cmp -s "$TMP/k.yaml" models/kernels/h100-sxm.yaml
expect_ok "test 7B" "$TPSIM" fit-kernels --test "$V7" --calib "$TMP/k.yaml"
check "test has per-TP columns" grep -Eq '^class +law +all +tp1 +tp2 +tp4 +tp8' "$TMP/out"
check "test prices gemm" grep -Eq '^gemm +tiled ' "$TMP/out"
expect_ok "test json" "$TPSIM" fit-kernels --test "$V7" --calib "$TMP/k.yaml" --format json
check "test json per tp" grep -q '"by_tp":{"1":' "$TMP/out"

head -3 "$V70" > "$TMP/ok.csv"
sed '2s/,0\.112,/,nan,/' "$TMP/ok.csv" > "$TMP/nan.csv"
expect_fail2 "NaN time" 'nan.csv:2: time_stats.input_layernorm.min .nan. is not a number' \
    "$TPSIM" fit-kernels "$TMP/nan.csv"
sed '1s/time_stats.add.median/time_stats.add.med/' "$TMP/ok.csv" > "$TMP/nocol.csv"
expect_fail2 "missing column" 'nocol.csv:1: no time_stats.add.median column' "$TPSIM" fit-kernels "$TMP/nocol.csv"
sed '2s/,True,/,maybe,/' "$TMP/ok.csv" > "$TMP/gated.csv"
expect_fail2 "bad bool" 'gated.csv:2: use_gated_mlp .maybe., expected True or False' "$TPSIM" fit-kernels "$TMP/gated.csv"
sed '2s/,4096,1$/,4096,3/' "$TMP/ok.csv" > "$TMP/tp3.csv"
expect_fail2 "unshardable" 'tp3.csv:2: shape .* does not shard over 3 GPUs' "$TPSIM" fit-kernels "$TMP/tp3.csv"
sed '2s/,4096,1$/,4096/' "$TMP/ok.csv" > "$TMP/short.csv"
expect_fail2 "short row" 'short.csv:2: [0-9]+ fields, expected' "$TPSIM" fit-kernels "$TMP/short.csv"
sed '2s/^0\.213,/-1,/' "$TMP/ok.csv" > "$TMP/neg.csv"
expect_fail2 "negative time" 'neg.csv:2: time_stats.emb.min .-1. is out of range' "$TPSIM" fit-kernels "$TMP/neg.csv"
head -1 "$V70" > "$TMP/hdr.csv"
expect_fail2 "no rows" 'hdr.csv:.*no data rows' "$TPSIM" fit-kernels "$TMP/hdr.csv"
: > "$TMP/empty.csv"
expect_fail2 "empty" 'empty.csv:1: empty' "$TPSIM" fit-kernels "$TMP/empty.csv"
printf 'a,b\n1,2\n' > "$TMP/other.csv"
expect_fail2 "unknown layout" "other.csv:1: header starts 'a'" "$TPSIM" fit-kernels "$TMP/other.csv"
printf 'source,batch,context,q_heads,kv_heads,head_dim,kv_dtype_bytes,time_us\nx,64,32,64,6,128,2,15\n' > "$TMP/gqa.csv"
expect_fail2 "kv heads" 'gqa.csv:2: kv_heads 6 does not divide q_heads 64' "$TPSIM" fit-kernels "$TMP/gqa.csv"
printf 'source,batch,context,q_heads,kv_heads,head_dim,kv_dtype_bytes,time_us\nx,64,32,64,8,128,2,1e999\n' > "$TMP/inf.csv"
expect_fail2 "huge time" 'inf.csv:2: time_us' "$TPSIM" fit-kernels "$TMP/inf.csv"
expect_fail2 "-o needs hardware" '-o needs --hardware' "$TPSIM" fit-kernels "$V70" -o "$TMP/x.yaml"
expect_fail2 "-o needs every class" "no profile row measures the 'attention' class" \
    "$TPSIM" fit-kernels "$V70" --hardware "H100 SXM" -o "$TMP/x.yaml"
check "no partial file" test ! -e "$TMP/x.yaml"
expect_fail2 "test needs calib" '--test PROFILE and --calib FILE go together' "$TPSIM" fit-kernels --test "$V7"
expect_fail2 "no profile" 'no profile given' "$TPSIM" fit-kernels
sed 's/law: tiled, t0_us: \([0-9.]*\), gbps: \([0-9.]*\), tflops: [0-9.]*, q: [0-9.]*, tile_m: 64/law: linear, t0_us: \1, gbps: \2, tflops: 5/' \
    "$TMP/k.yaml" > "$TMP/badlaw.yaml"
expect_fail2 "law term refused" 'badlaw.yaml:[0-9]+:[0-9]+: classes.gemm.tflops: law linear has no tflops term' \
    "$TPSIM" fit-kernels --test "$V7" --calib "$TMP/badlaw.yaml"
sed 's/, q: [0-9.]*, tile_m: 64/, tile_m: 64/' "$TMP/k.yaml" > "$TMP/noq.yaml"
expect_fail2 "tiled needs q" 'noq.yaml:[0-9]+:[0-9]+: classes.gemm.law: law tiled needs q' \
    "$TPSIM" fit-kernels --test "$V7" --calib "$TMP/noq.yaml"
sed 's/, q: [0-9.]*, tile_m: 64/, q: 0.5, tile_m: 64/' "$TMP/k.yaml" > "$TMP/lowq.yaml"
expect_fail2 "q below 1" 'lowq.yaml:[0-9]+:[0-9]+: classes.gemm.q' \
    "$TPSIM" fit-kernels --test "$V7" --calib "$TMP/lowq.yaml"
grep -v -e '^  copy:' -e 'classes.copy' "$TMP/k.yaml" > "$TMP/nocopy.yaml"
expect_fail2 "unmapped class" "no 'copy' class, which tpsim's op 'prepare_inputs_h2d' needs" \
    "$TPSIM" fit-kernels --test "$V7" --calib "$TMP/nocopy.yaml"
PROBE=tests/data/kfit/probe-synthetic.yaml
expect_ok "probe output" "$TPSIM" fit-kernels "$PROBE" --format json
check "probe: three gemm samples" grep -q '"samples":3' "$TMP/out"
sed 's/gemv_tp2_qkv_proj_b1_gbps/gemv_tp2_qkv_b1_gbps/' "$PROBE" > "$TMP/p.yaml"
expect_fail2 "probe: unknown layer" 'p.yaml:[0-9]+:[0-9]+: measured.gemv_tp2_qkv_b1_gbps: expected a key gemv_tpK_LAYER_bB_gbps' "$TPSIM" fit-kernels "$TMP/p.yaml"
sed 's/gemv_tp2_qkv_proj_b1_gbps: 2500.0/gemv_tp2_qkv_proj_b1_gbps: fast/' "$PROBE" > "$TMP/p2.yaml"
expect_fail2 "probe: not a number" 'p2.yaml:[0-9]+:[0-9]+: measured.gemv_tp2_qkv_proj_b1_gbps' "$TPSIM" fit-kernels "$TMP/p2.yaml"
sed 's/^kind: hardware/kind: model/' "$PROBE" > "$TMP/p3.yaml"
expect_fail2 "probe: kind" "p3.yaml:[0-9]+:[0-9]+: kind: 'model', expected tpsim-probe's kind: hardware" "$TPSIM" fit-kernels "$TMP/p3.yaml"
finish
