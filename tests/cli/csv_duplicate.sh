#!/usr/bin/env bash
# csv_duplicate.sh: a CSV header naming a column twice is refused by every reader, at the second
# one, as "file:line:col: duplicate column 'x'"; a reader looking columns up by name would
# otherwise take the first and never read the second.
. "$(dirname "$0")/lib.sh"
dup='duplicate column'

# Vidur's mlp.csv: the second column renamed to the first's name (column 20 = after
# "time_stats.emb.min," of 19 characters)
sed '1s/,time_stats.emb.max,/,time_stats.emb.min,/' tests/data/vidur-h100/llama-2-70b-mlp.csv >"$TMP/vidur.csv"
expect_fail2 "vidur" "vidur.csv:1:20: $dup 'time_stats.emb.min' \(also field 1 at line 1 column 1\)" \
    "$TPSIM" fit-kernels "$TMP/vidur.csv"
# an unread column repeated is refused too: it is still a broken export
sed '1s/^time_stats.emb.min,/zz,/;1s/,time_stats.emb.max,/,zz,/' tests/data/vidur-h100/llama-2-70b-mlp.csv >"$TMP/vidur2.csv"
expect_fail2 "vidur, unread column" "vidur2.csv:1:4: $dup 'zz'" "$TPSIM" fit-kernels "$TMP/vidur2.csv"

# tpsim's decode-attention CSV: "source,batch,context,batch,..." (column 22)
sed '1s/^source,batch,context,q_heads/source,batch,context,batch/' tests/data/attention-h100/decode.csv >"$TMP/att.csv"
expect_fail2 "attention" "att.csv:1:22: $dup 'batch' \(also field 2" "$TPSIM" fit-kernels "$TMP/att.csv"

# trace import --kernels' listing: "rank,kind,start_ns,dur_us,bytes,kind" (column 33)
printf 'rank,kind,start_ns,dur_us,bytes,kind\n0,gemm,0,1.0,10,x\n' >"$TMP/tr.csv"
expect_fail2 "kernel listing" "tr.csv:1:33: $dup 'kind' \(also field 2" "$TPSIM" fit-kernels "$TMP/tr.csv"

# AIConfigurator's generation-attention table: its first column repeated at the end
H=$(grep -vn '^#' tests/data/aic/h100-gen-attention-subset.csv | head -1 | cut -d: -f1)
first=$(sed -n "${H}p" tests/data/aic/h100-gen-attention-subset.csv | cut -d, -f1)
awk -v h="$H" -v f="$first" 'NR == h { $0 = $0 "," f } NR > h && !/^#/ { $0 = $0 ",1" } { print }' \
    tests/data/aic/h100-gen-attention-subset.csv >"$TMP/aic.csv"
expect_fail2 "aic attention" "aic.csv:$H:[0-9]+: $dup '$first' \(also field 1" \
    "$TPSIM" fit-kernels "$TMP/aic.csv"

# a measured kernel grid named by a kernel calibration: "n,k,n,us"
mkdir "$TMP/k"
cp models/kernels/h200-sxm.yaml models/kernels/h200-sxm.*.csv "$TMP/k/"
sed -i '1s/^n,k,m,us/n,k,n,us/' "$TMP/k/h200-sxm.gemm.csv"
expect_fail2 "kernel grid" "h200-sxm.gemm.csv:1:5: $dup 'n' \(also field 1" \
    "$TPSIM" run vllm-graphs --set hardware=h200 --set kernels="$TMP/k/h200-sxm.yaml" --tp 4

# validate's measured grid: "config,tp,batch,ctx,measured_ms,tp" (column 33)
sed '1s/^config,tp,batch,ctx,measured_ms,pred_compute_ms/config,tp,batch,ctx,measured_ms,tp/' \
    validate/h100-ctx2048.csv >"$TMP/grid.csv"
expect_fail2 "validate grid" "grid.csv:1:33: $dup 'tp' \(also field 2 at line 1 column 8\)" \
    "$TPSIM" validate scenarios/eager-host-dispatch.yaml --grid "$TMP/grid.csv"

# AIConfigurator's all-reduce table (fit-allreduce --aic): "src" renamed "table"
T=tests/data/aic-allreduce-h100-h200-sxm.csv
AIC=(--vllm 0.19.0 --nccl 2.29.2)
H=$(grep -n '^table,' "$T" | cut -d: -f1)
sed "${H}s/,src\$/,table/" "$T" >"$TMP/ar.csv"
expect_fail2 "aic all-reduce" "ar.csv:$H:[0-9]+: $dup 'table' \(also field 1 at line $H column 1\)" \
    "$TPSIM" fit-allreduce "$TMP/ar.csv" --aic h100_sxm "${AIC[@]}" --tp 2 --hardware "H100 SXM"
finish
