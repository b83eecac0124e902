#!/usr/bin/env bash
# fit_allreduce.sh: `tpsim fit-allreduce` on the real nccl-tests log and on bad input.
source tests/cli/lib.sh
LOG=tests/data/h100-8gpu-ring-all_reduce_perf.out

# --- the real log, text ---------------------------------------------------------------------
if expect_ok "text fit" "$TPSIM" fit-allreduce "$LOG"; then
    check "text names k=8" has "$TMP/out" 'k=8'
    check "text has the linear row" match "$TMP/out" '^linear +all +[0-9.]+ +[0-9.]+ +0\.99'
    check "text has pieces" match "$TMP/out" '^  piece 2 '
    check "text has band bias" has "$TMP/out" 'band bias'
fi

# --- JSON -----------------------------------------------------------------------------------
if expect_ok "json fit" "$TPSIM" fit-allreduce "$LOG" --format json --weight rel; then
    for key in lambda_us beta_gbps r2 tp n_points band_bias_pct piecewise pieces; do
        check "json has $key" has "$TMP/out" "\"$key\":"
    done
    check "json tp is 8" has "$TMP/out" '"tp":8,'
    check "json n_points is 14" has "$TMP/out" '"n_points":14,'
    line_count n "$TMP/out"
    check "json is one line" test "$n" -eq 1
    if command -v python3 >/dev/null; then
        cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
        pyq "json parses" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json,sys; d=json.load(open(sys.argv[1]));
assert 300 < d["beta_gbps"] < 400 and d["piecewise"]["n_pieces"] >= 1
PY
    fi
fi

# --- range and sizes ------------------------------------------------------------------------
if expect_ok "whole range" "$TPSIM" fit-allreduce "$LOG" --min 8 --max 8G --format json; then
    check "whole range has 31 points" has "$TMP/out" '"n_points":31,'
fi
expect_ok "sizes with suffixes" "$TPSIM" fit-allreduce "$LOG" --min=1M --max 1GiB

# --- the calibration file -------------------------------------------------------------------
CAL="$TMP/cal.yaml"
if expect_ok "write linear" "$TPSIM" fit-allreduce "$LOG" -o "$CAL" --hardware "H100 SXM" --fit linear; then
    check "file written" test -s "$CAL"
    check "file kind" has_line "$CAL" 'kind: allreduce-calibration'
    check "file fit linear" has_line "$CAL" 'fit: linear'
    check "file tp" has_line "$CAL" 'tp: 8'
    check "file hardware" has_line "$CAL" 'hardware: H100 SXM'
    check "file lambda" match "$CAL" '^(lambda_us: [0-9]+\.[0-9]+)$'
    check "file beta" match "$CAL" '^(beta_gbps: [0-9]+\.[0-9]+)$'
    check "linear file has no pieces" not match "$CAL" '^pieces:'
fi
if expect_ok "write piecewise" "$TPSIM" fit-allreduce "$LOG" -o "$CAL" --fit piecewise; then
    check "file fit piecewise" has_line "$CAL" 'fit: piecewise'
    check "file has pieces" has_line "$CAL" 'pieces:'
    check "file keeps the linear lambda" match "$CAL" '^(lambda_us: [0-9.]+)$'
    check "no temp file left" not has_entry "$TMP" '*tmp*'
fi

# --- a CSV of our own format, k from --tp ---------------------------------------------------
CSV="$TMP/sweep.csv"
{
    echo '# tool: tpsim-nccl-sweep'
    echo 'bytes,count,time_us_mean,time_us_min,algbw_gbps,busbw_gbps'
    awk 'BEGIN { for (b = 32768; b <= 268435456; b *= 2) { t = 22 + b / 310e3
        printf "%d,%d,%.3f,%.3f,%.2f,%.2f\n", b, b / 2, t, t * 0.99, b / t / 1e3, b / t / 1e3 } }'
} >"$CSV"
if expect_ok "csv with --tp" "$TPSIM" fit-allreduce "$CSV" --tp 2 --format json; then
    check "csv lambda 22" match "$TMP/out" '"lambda_us":(21\.9|22[,.])'
    check "csv beta 310" match "$TMP/out" '"beta_gbps":(309\.9|310)'
fi
expect_fail2 "csv without --tp" 'sweep\.csv:2: .*--tp' "$TPSIM" fit-allreduce "$CSV"

# --- bad input: status 2, one line, nothing on stdout, no file -------------------------------
BAD="$TMP/bad.yaml"
no_file() { check "$1: no output file" test ! -e "$BAD"; check "$1: no temp file" not has_entry "$TMP" '.bad*'; }
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
check "old file untouched" has "$BAD" '# old'

# --- strict parsing: each refusal names its line (tests/data/README.md lists the defects) ----
refuse() { expect_fail2 "$1" "^tpsim: tests/data/arfit-bad-$1\.out:$2: $3" "$TPSIM" fit-allreduce "tests/data/arfit-bad-$1.out"; }
refuse all-gather     "2"      "collective test 'all_gather_perf' is not all_reduce_perf"
refuse redop-none     "18:35"  "redop 'none': not an all-reduce row"
refuse wrong          "19:79"  "#wrong '3' in the out-of-place columns"
refuse wrong-inplace  "20:112" "#wrong '1' in the in-place columns"
refuse failed-footer  "25"     "the run reports out-of-bounds values \('Out of bounds values : 2 FAILED'\)"
refuse nan-time       "18:52"  "out-of-place time 'nan' is not finite"
refuse inf-time       "21:86"  "in-place time 'inf' is not finite"
refuse rank-duplicate "9"      "rank 3 is on host gpu-dp-2jvzl-pqq7p device 2, as rank 2 \(line 8\)"
refuse rank-count     "6"      "7 rank lines, but line 3 says nThread 1 x nGpus 8 per process"
# a FAILED line anywhere (nccl-tests' "Test FAILED" on error) is refused too
sed 's/^# Avg bus bandwidth.*/# Test FAILED at line 42/' "$LOG" >"$TMP/failed.out"
expect_fail2 "Test FAILED line" "failed.out:50: the run reports a failure" "$TPSIM" fit-allreduce "$TMP/failed.out"
# validation off: #wrong N/A is not a failure
sed -E 's/^( +[0-9]+ +[0-9]+ +float +sum +-1 +[0-9.]+ +[0-9.]+ +[0-9.]+) +0 /\1    N\/A /' "$LOG" >"$TMP/na.out"
check "fixture: N/A in #wrong" has "$TMP/na.out" "N/A"
expect_ok "#wrong N/A accepted" "$TPSIM" fit-allreduce "$TMP/na.out"

# --- both time columns: --column oop|ip|min, and the report says which -----------------------
expect_ok "column ip" "$TPSIM" fit-allreduce "$LOG" --column ip --min 8 --max 8G --fit linear --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "ip column: the in-place times, named in the report" "$TMP/pyq-out$((PYQ_N + 1))" "$LOG" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [l.split() for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
b = [float(r[0]) for r in rows]; t = [float(r[9]) for r in rows]  # column 10: in-place time
k = 8; x = [2 * (k - 1) / k * v for v in b]
n = len(x); mx = sum(x) / n; mt = sum(t) / n
slope = sum((xi - mx) * (ti - mt) for xi, ti in zip(x, t)) / sum((xi - mx) ** 2 for xi in x)
lam = mt - slope * mx
assert d["column"] == "ip" and d["n_points"] == 31, d
assert abs(d["lambda_us"] - lam) < 1e-3 * lam and abs(d["beta_gbps"] - 1e-3 / slope) < 1e-3 * d["beta_gbps"], (d, lam, 1e-3 / slope)
PY
expect_ok "column min" "$TPSIM" fit-allreduce "$LOG" --column min --min 8 --max 8G --fit linear --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "min column: the smaller time of each row" "$TMP/pyq-out$((PYQ_N + 1))" "$LOG" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [l.split() for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
b = [float(r[0]) for r in rows]; t = [min(float(r[5]), float(r[9])) for r in rows]
k = 8; x = [2 * (k - 1) / k * v for v in b]
n = len(x); mx = sum(x) / n; mt = sum(t) / n
slope = sum((xi - mx) * (ti - mt) for xi, ti in zip(x, t)) / sum((xi - mx) ** 2 for xi in x)
assert d["column"] == "min" and abs(d["lambda_us"] - (mt - slope * mx)) < 1e-3 * d["lambda_us"], d
PY
expect_ok "column text" "$TPSIM" fit-allreduce "$LOG" --column min
check "text names the column" has "$TMP/out" "column min of out-of-place and in-place"
expect_ok "column oop default" "$TPSIM" fit-allreduce "$LOG"
check "text names the default column" has "$TMP/out" "column out-of-place"
expect_fail2 "column bad" "--column 'both' is not oop, ip or min" "$TPSIM" fit-allreduce "$LOG" --column both
printf 'bytes,count,time_us_mean,time_us_min,algbw_gbps,busbw_gbps\n' >"$TMP/ip.csv"
printf '# tp: 2\n' >>"$TMP/ip.csv"
for b in 32768 65536 131072 262144; do printf '%s,1,%s,1,1,1\n' $b $((20 + b / 10000)) >>"$TMP/ip.csv"; done
expect_fail2 "column ip on a CSV" "ip.csv:3: no in-place time column" "$TPSIM" fit-allreduce "$TMP/ip.csv" --column ip

# --- -o writes the lower-BIC fit unless --fit says otherwise ---------------------------------
expect_ok "default fit by BIC" "$TPSIM" fit-allreduce "$LOG" -o "$TMP/bic.yaml" --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "lower BIC chosen and written" "$TMP/pyq-out$((PYQ_N + 1))" "$TMP/bic.yaml" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = "piecewise" if d["piecewise"]["bic"] < d["bic"] else "linear"
assert d["chosen_fit"] == want and d["chosen_by"] == "lower BIC", d
assert d["output"] == sys.argv[2] and "fit" not in d, d  # chosen_fit names it, once
assert ("fit: %s\n" % want) in open(sys.argv[2]).read()
PY
expect_ok "--fit overrides BIC" "$TPSIM" fit-allreduce "$LOG" -o "$TMP/lin.yaml" --fit linear
check "linear written on request" has_line "$TMP/lin.yaml" "fit: linear"
check "report says why" has "$TMP/out" "chosen fit: linear (--fit)"

# --- the decode-band warning: on stderr, the run still succeeds ------------------------------
"$TPSIM" fit-allreduce "$LOG" --min 8 --max 8G --fit linear >"$TMP/out" 2>"$TMP/err"; rc=$?
check "band warning: status 0" test "$rc" -eq 0
check "band warning text" match "$TMP/err" "^tpsim: warning: the linear fit \(--fit\) is \+20.7% off the measured times at 32-256 KiB.*the piecewise fit is -0.2%"
check "band warning: report still on stdout" match "$TMP/out" "^linear"
"$TPSIM" fit-allreduce "$LOG" --min 8 --max 8G >"$TMP/out" 2>"$TMP/err"
check "no warning when the chosen fit is within 10%" test ! -s "$TMP/err"
"$TPSIM" fit-allreduce "$LOG" >"$TMP/out" 2>"$TMP/err"
check "no warning at the default range (linear +1.5%)" test ! -s "$TMP/err"

# --- the tuner fit: its block drives nccl-tuner ---------------------------------------------
expect_ok "tuner fit" "$TPSIM" fit-allreduce "$LOG" --tuner 2.26.2 --hardware "H100 SXM" -o "$TMP/tuner.yaml"
check "tuner block written" match "$TMP/tuner.yaml" '^tuner:'
expect_fail2 "tuner version unknown" "--tuner '2.99.0' is not in the tuner table, expected one of 2.21.5" \
    "$TPSIM" fit-allreduce "$LOG" --tuner 2.99.0
expect_fail2 "tuner nvls without bandwidth" "--algos nvls needs --nvls-busbw" \
    "$TPSIM" fit-allreduce "$LOG" --tuner 2.27.3 --algos ring,nvls

# --- NCCL's own tuning table (NCCL_DEBUG_SUBSYS=INIT,TUNING): channels and bandwidth read ------
TUN=tests/data/nccl-tuning-h100-8gpu-synthetic.log
expect_ok "tuning log" "$TPSIM" fit-allreduce "$LOG" --tuner 2.27.3 --tuning-log "$TUN" --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "read from the table: 16 channels, Ring Simple 182.9 x 2*7/8 / 16, NVLS 400 / (5/6)" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["tuner"]
assert t["from_tuning_log"] is True and t["channels"] == 16, t
assert abs(t["bw_per_channel_gbps"] - 182.9 * 2 * 7 / 8 / 16) < 1e-9, t
assert abs(t["nvls_busbw_gbps"] - 400.0 / (5 / 6)) < 1e-9, t
assert t["algos_mask"] == 1 | 2 | 4, t   # Tree, Ring, NVLS have bandwidth; CollNet is not modelled

PY
expect_ok "tuning log text" "$TPSIM" fit-allreduce "$LOG" --tuner 2.27.3 --tuning-log "$TUN"
check "table latencies match the 2.27.3 constants (1-decimal print)" match "$TMP/out" "differ from NCCL 2.27.3's formula by at most 0.0[0-5] us"
expect_ok "tuning log block" "$TPSIM" fit-allreduce "$LOG" --tuner 2.27.3 --tuning-log "$TUN" -o "$TMP/tun.yaml" --hardware "H100 SXM"
check "block: algorithms and NVLS bandwidth" eval "has '$TMP/tun.yaml' 'algorithms: [tree, ring, nvls]' && has '$TMP/tun.yaml' 'nvls_busbw_gbps: 480.000'"
expect_ok "the block drives nccl-tuner" "$TPSIM" allreduce --tp 8 --calib "$TMP/tun.yaml" --model nccl-tuner --sizes 16K,2M --format json &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "16K Ring LL, 2M NVLS Simple (the crossover is at 1.0 MB)" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["rows"]
assert (r[0]["algo"], r[0]["proto"]) == ("Ring", "LL") and (r[1]["algo"], r[1]["proto"]) == ("NVLS", "Simple"), r

PY
expect_fail2 "tuning log without a table" "no NCCL tuning table" \
    "$TPSIM" fit-allreduce "$LOG" --tuner 2.27.3 --tuning-log "$LOG"
sed 's/ Simple |/ Fast |/' "$TUN" >"$TMP/badproto.log"
expect_fail2 "tuning log: unknown protocol" "badproto.log:4: protocol 'Fast'" \
    "$TPSIM" fit-allreduce "$LOG" --tuner 2.27.3 --tuning-log "$TMP/badproto.log"
sed 's/nRanks 8/nRanks 4/' "$TUN" >"$TMP/k4.log"
expect_fail2 "tuning log of another k" "nRanks 4, the sweep of k 8" \
    "$TPSIM" fit-allreduce "$LOG" --tuner 2.27.3 --tuning-log "$TMP/k4.log"
expect_fail2 "tuning log needs --tuner" "--tuning-log needs --tuner" \
    "$TPSIM" fit-allreduce "$LOG" --tuning-log "$TUN"

finish
