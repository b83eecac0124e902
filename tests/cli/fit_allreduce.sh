#!/usr/bin/env bash
# fit_allreduce.sh: `tpsim fit-allreduce` on the real nccl-tests log and on bad input.
source tests/cli/lib.sh
LOG=tests/data/h100-8gpu-ring-all_reduce_perf.out

# --- the real log, text ---------------------------------------------------------------------
if expect_ok "text fit" "$TPSIM" fit-allreduce "$LOG"; then
    check "text names k=8" grep -q 'k=8' "$TMP/out"
    check "text has the linear row" grep -Eq '^linear +all +[0-9.]+ +[0-9.]+ +0\.99' "$TMP/out"
    check "text has pieces" grep -Eq '^  piece 2 ' "$TMP/out"
    check "text has band bias" grep -q 'band bias' "$TMP/out"
fi

# --- JSON -----------------------------------------------------------------------------------
if expect_ok "json fit" "$TPSIM" fit-allreduce "$LOG" --format json --weight rel; then
    for key in lambda_us beta_gbps r2 k n_points band_bias_pct piecewise pieces; do
        check "json has $key" grep -q "\"$key\":" "$TMP/out"
    done
    check "json k is 8" grep -q '"k":8,' "$TMP/out"
    check "json n_points is 14" grep -q '"n_points":14,' "$TMP/out"
    check "json is one line" test "$(wc -l <"$TMP/out")" -eq 1
    if command -v python3 >/dev/null; then
        check "json parses" python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
assert 300 < d["beta_gbps"] < 400 and d["piecewise"]["n_pieces"] >= 1' "$TMP/out"
    fi
fi

# --- range and sizes ------------------------------------------------------------------------
if expect_ok "whole range" "$TPSIM" fit-allreduce "$LOG" --min 8 --max 8G --format json; then
    check "whole range has 31 points" grep -q '"n_points":31,' "$TMP/out"
fi
expect_ok "sizes with suffixes" "$TPSIM" fit-allreduce "$LOG" --min=1M --max 1GiB

# --- the calibration file -------------------------------------------------------------------
CAL="$TMP/cal.yaml"
if expect_ok "write linear" "$TPSIM" fit-allreduce "$LOG" -o "$CAL" --hardware "H100 SXM"; then
    check "file written" test -s "$CAL"
    check "file kind" grep -qx 'kind: allreduce-calibration' "$CAL"
    check "file fit linear" grep -qx 'fit: linear' "$CAL"
    check "file tp" grep -qx 'tp: 8' "$CAL"
    check "file hardware" grep -qx 'hardware: H100 SXM' "$CAL"
    check "file lambda" grep -Eqx 'lambda_us: [0-9]+\.[0-9]+' "$CAL"
    check "file beta" grep -Eqx 'beta_gbps: [0-9]+\.[0-9]+' "$CAL"
    check "linear file has no pieces" bash -c "! grep -q '^pieces:' '$CAL'"
fi
if expect_ok "write piecewise" "$TPSIM" fit-allreduce "$LOG" -o "$CAL" --fit piecewise; then
    check "file fit piecewise" grep -qx 'fit: piecewise' "$CAL"
    check "file has pieces" grep -qx 'pieces:' "$CAL"
    check "file keeps the linear lambda" grep -Eqx 'lambda_us: [0-9.]+' "$CAL"
    check "no temp file left" bash -c "! ls -A '$TMP' | grep -q tmp"
fi

# --- a CSV of our own format, k from --tp ---------------------------------------------------
CSV="$TMP/sweep.csv"
{
    echo '# tool: tpsim-nccl-sweep'
    echo 'bytes,count,time_us_mean,time_us_min,algbw_gbps,busbw_gbps'
    b=32768
    while [ "$b" -le 268435456 ]; do
        awk -v b="$b" 'BEGIN { t = 22 + b / 310e3; printf "%d,%d,%.3f,%.3f,%.2f,%.2f\n", b, b / 2, t, t * 0.99, b / t / 1e3, b / t / 1e3 }'
        b=$((b * 2))
    done
} >"$CSV"
if expect_ok "csv with --tp" "$TPSIM" fit-allreduce "$CSV" --tp 2 --format json; then
    check "csv lambda 22" grep -Eq '"lambda_us":(21\.9|22[,.])' "$TMP/out"
    check "csv beta 310" grep -Eq '"beta_gbps":(309\.9|310)' "$TMP/out"
fi
expect_fail2 "csv without --tp" 'sweep\.csv:2: .*--tp' "$TPSIM" fit-allreduce "$CSV"

# --- bad input: status 2, one line, nothing on stdout, no file -------------------------------
BAD="$TMP/bad.yaml"
no_file() { check "$1: no output file" test ! -e "$BAD"; check "$1: no temp file" bash -c "! ls -A '$TMP' | grep -q '^\.bad'"; }
expect_fail2 "mixed k via --tp" "$LOG:6: .*mixed k" "$TPSIM" fit-allreduce "$LOG" --tp 4 -o "$BAD"
no_file "mixed k"
for f in tests/data/arfit-bad-*; do
    expect_fail2 "${f##*/}" "^tpsim: ${f}:[0-9]+(:[0-9]+)?: " "$TPSIM" fit-allreduce "$f" -o "$BAD"
    no_file "${f##*/}"
done
expect_fail2 "too few in range" 'too few points' "$TPSIM" fit-allreduce "$LOG" --min 2G --max 4G -o "$BAD"
no_file "too few"
expect_fail2 "missing file" 'cannot open' "$TPSIM" fit-allreduce "$TMP/nope.out" -o "$BAD"
expect_fail2 "no file" 'no sweep file' "$TPSIM" fit-allreduce
expect_fail2 "unknown flag" "unknown option '--bogus'" "$TPSIM" fit-allreduce "$LOG" --bogus
expect_fail2 "bad size" "--min '32X'" "$TPSIM" fit-allreduce "$LOG" --min 32X
expect_fail2 "bad weight" "--weight 'ols'" "$TPSIM" fit-allreduce "$LOG" --weight ols
expect_fail2 "bad fit" "--fit 'spline'" "$TPSIM" fit-allreduce "$LOG" --fit spline
expect_fail2 "bad format" "--format 'xml'" "$TPSIM" fit-allreduce "$LOG" --format xml
expect_fail2 "bad tp" "--tp 'x'" "$TPSIM" fit-allreduce "$LOG" --tp x
expect_fail2 "min above max" 'above' "$TPSIM" fit-allreduce "$LOG" --min 1M --max 64K
expect_fail2 "value missing" '^tpsim: --max: missing value' "$TPSIM" fit-allreduce "$LOG" --max
expect_fail2 "two files" 'one sweep file' "$TPSIM" fit-allreduce "$LOG" "$LOG"
expect_fail2 "unwritable dir" 'cannot create' "$TPSIM" fit-allreduce "$LOG" -o "$TMP/no/such/dir/x.yaml"
no_file "option errors"

# an error must leave an existing file as it was
echo 'kind: allreduce-calibration # old' >"$BAD"
expect_fail2 "keeps old file" 'mixed k' "$TPSIM" fit-allreduce "$LOG" --tp 2 -o "$BAD"
check "old file untouched" grep -q '# old' "$BAD"

finish
