# plan.sh: tpsim plan. A plan whose answer is known by construction (only one configuration
# fits in memory, its batch fixed by hand), nothing meeting the target (status 1 with the
# closest configuration), the CSV's columns (sweep's first) and JSON, --jobs, and every bad
# input as one line with status 2.
source tests/cli/lib.sh
SCN=scenarios/eager-host-dispatch.yaml
FAST=(--steps 2 --warmup 0 --quiet)

# --- by construction: on 8 H100s (85,520,809,984 B of HBM as the GPU reports it,
# docs/sources.md#gpu-memory) with a 54.98 GiB reserve per GPU, the KV cache has
# 0.9 * 85,520,809,984 - 17,638,096,896 (TP-8 weights, tests/test_plan.c) - 54.98 * 2^30
# = 296,306,606.08 B per GPU, room for floor(296,306,606.08 / 83,886,080) = 3 sequences of
# 2048 tokens; TP-4's
# 35.3 GB of weights leave it none. With a 1000 ms target the only configuration is TP-8
# eager at batch 3, memory-capped.
expect_ok "plan by construction" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 1000 --tp 4,8 --mode eager \
    --reserve-gib 54.98 "${FAST[@]}"
check "one of two configurations meets" has "$TMP/out" "1 of 2 configurations meet 1000.00 ms"
check "the winner is TP-8 eager batch 3" has "$TMP/out" "winner:    H100 SXM TP-8 eager batch 3: "
check "memory-capped at 3 sequences" has "$TMP/out" "memory-capped: 3 sequences of 2048 tokens"
check "TP-4 does not fit" has "$TMP/out" "does not fit: H100 SXM TP-4 eager: weights 35.3 GB"
check "no runner-up" not has "$TMP/out" runner-up
check "one ranked row, 1 replica" match "$TMP/out" "^  1    H100 SXM +eager +8 +1 +3 "

# --- nothing meets 10 ms (TP-8 graphs at batch 1 is the fastest row): status 1, closest shown
"$TPSIM" plan $SCN --gpus 8 --tpot-ms 10 "${FAST[@]}" >"$TMP/out" 2>"$TMP/err"
check "nothing meets: status 1" test $? -eq 1
check "nothing meets: one line on stderr" test "$(<"$TMP/err")" = "tpsim: plan: at some context no configuration meets 10 ms per token (the closest is shown)"
# (with the kernel calibration TP-8 graphs at batch 1 and 2 are within 0.3% of each other:
# the closest is TP-8 graphs). Which row is closest is recomputed apart, from every row the
# same plan lists in its CSV: the least step time of all; and that step is no faster than
# the weights' read alone, 141.1 GB of BF16 over 8 ranks at H100's 3.35 TB/s
# (docs/sources.md#gpu-datasheets) = 5.27 ms, and misses the 10 ms target.
check "closest configuration shown" match "$TMP/out" "nothing meets the target; closest: H100 SXM TP-8 graphs batch [0-9]+ at"
cb=
[[ $(<"$TMP/out") =~ closest:\ H100\ SXM\ TP-8\ graphs\ batch\ ([0-9]*)\ at\ ([0-9.]*)\ ms ]] &&
    cb="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
"$TPSIM" plan $SCN --gpus 8 --tpot-ms 10 "${FAST[@]}" --format csv -o "$TMP/all.csv" 2>/dev/null
pyq "closest = the least step of the plan's rows, over 5.27 and 10 ms ($cb)" "$TMP/all.csv" "$cb" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
best = min(rows, key=lambda r: float(r["step_ms_mean"]))
batch, ms = sys.argv[2].split()
assert (best["tp"], best["mode"], best["batch"]) == ("8", "graphs", batch), best
assert "%.2f" % float(best["step_ms_mean"]) == ms, (best["step_ms_mean"], ms)
assert 141.1e9 / 8 / 3.35e12 * 1e3 < float(ms) and float(ms) > 10, ms
PY

# --- CSV: sweep's columns first (the same names), every cell once; JSON parses
expect_ok "sweep header" "$TPSIM" sweep $SCN --tp 4 --batch 1 --steps 2
IFS= read -r sweep_hdr <"$TMP/out"
expect_ok "plan csv" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --tp 4,8 --batch-max 16 "${FAST[@]}" \
    --format csv -o "$TMP/plan.csv"
IFS= read -r plan_hdr <"$TMP/plan.csv"
check "csv starts with sweep's columns" test "${plan_hdr:0:${#sweep_hdr}+1}" = "$sweep_hdr,"
line_count n "$TMP/plan.csv"
check "csv: 2 TP x 2 modes x 16 batches" test "$n" -eq 65
check "csv: the plan's columns" has "$TMP/plan.csv" ",gpus,replicas,target_ms,meets_target,tokens_per_s_per_gpu,tokens_per_s_total,"
expect_ok "plan json" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --tp 4,8 --batch-max 16 "${FAST[@]}" --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "json: winner with interval, sweep's keys" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["contexts"][0]
w = c["winner"]
assert c["ctx"] == 2048 and w["place"] == 1, c
for k in ("scenario", "hardware", "mode", "tp", "batch", "step_ms_mean", "fits_in_hbm",
          "tokens_per_s_per_gpu", "replicas", "pred_lo_ms", "pred_hi_ms"):
    assert k in w, k
assert w["pred_lo_ms"] < w["step_ms_mean"] < w["pred_hi_ms"], w
assert abs(w["tokens_per_s_per_gpu"] - w["batch"] / (w["step_ms_mean"] * 1e-3 * w["tp"])) < 1e-6 * w["tokens_per_s_per_gpu"]
assert w["replicas"] == 8 // w["tp"]
assert isinstance(c["separable"], bool) and ("beats" in c["separation"] or "ties" in c["separation"])
steps = [p["step_ms_mean"] for p in c["pareto"]]
assert steps == sorted(steps) and len(steps) >= 1
PY

# --- intervals, in closed form from other paths. TP-4 eager batch 8 ctx 2048 is a cell of the
# bundled grid. Without a kernel calibration (the scenario priced by gpu.hbm_efficiency), plan's
# interval there (the scenario's default steps) is p -+ sqrt((p - f)^2 + (q cv p)^2): p and f from `tpsim run` at the fitted
# value and at the ends of its 95% profile range (validate's fitted and fitted_95; the fit block
# sets host.collective.mean_us with it, also:), cv the calibration cells' misfit (runs against
# the grid file's measured column) over 4 - 1 degrees of freedom, at least the declared 1%, q
# Student's t(3) at 95% = 3.182. The same with the bundled kernel calibration (kernels:), whose
# fit lands elsewhere.
sed -e '/^kernels: /d' -e 's#\.\./models#'"$PWD"'/models#g' \
    -e 's/^  launch_latency_us: 4.0 .*/&\n  hbm_efficiency: 0.8941\n  flops_efficiency: 0.7/' \
    -e 's/^assumed:$/&\n  - {key: gpu.hbm_efficiency, why: test}\n  - {key: gpu.flops_efficiency, why: test}/' \
    $SCN >"$TMP/nokernels.yaml"
runms() { # OUT SCENARIO TP BATCH LAUNCH_US: OUT = tpsim run's JSON (its step_ms.mean read below)
    "$TPSIM" run "$2" --tp "$3" --batch "$4" --ctx 2048 --mode eager --set host.launch.mean_us="$5" \
        --set host.collective.mean_us="$5" --set engine=vllm-v1 --format json >"$1"
}
for scn in "$TMP/nokernels.yaml" $SCN; do
    n=${scn##*/}
    expect_ok "plan on a grid cell ($n)" "$TPSIM" plan $scn --gpus 8 --tpot-ms 1000 --tp 4 \
        --mode eager --batch-max 8 --format json --quiet
    cp "$TMP/out" "$TMP/plan_cell-$n.json"
    expect_ok "validate ($n)" "$TPSIM" validate $scn --format json --set engine=vllm-v1
    read -r V LO HI < <(python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["folds"][0]
print(repr(f["fitted"]["host.launch.mean_us"]), *map(repr, f["fitted_95"]["host.launch.mean_us"]))' "$TMP/out")
    # the runs' JSON files, "KIND TP BATCH FILE" a line
    for tb in "2 1" "2 8" "4 1" "4 8"; do
        runms "$TMP/run-$n-${tb/ /-}.json" $scn $tb "$V"
        echo "cal $tb $TMP/run-$n-${tb/ /-}.json"
    done >"$TMP/runs-$n"
    runms "$TMP/run-$n-lo.json" $scn 4 8 "$LO"; echo "end 4 8 $TMP/run-$n-lo.json" >>"$TMP/runs-$n"
    runms "$TMP/run-$n-hi.json" $scn 4 8 "$HI"; echo "end 4 8 $TMP/run-$n-hi.json" >>"$TMP/runs-$n"
    pyq "plan's interval for TP-4 batch 8, closed form ($n)" "$TMP/plan_cell-$n.json" "$TMP/runs-$n" validate/h100-ctx2048.csv "$n" <<'PY'
import csv, json, math, sys
w = json.load(open(sys.argv[1]))["contexts"][0]["winner"]
runs = [l.split() for l in open(sys.argv[2])]
mean = lambda f: json.load(open(f))["step_ms"]["mean"]
cal = {(int(t), int(b)): mean(f) for k, t, b, f in runs if k == "cal"}
ends = [mean(f) for k, _, _, f in runs if k == "end"]
meas = {(int(r["tp"]), int(r["batch"])): float(r["measured_ms"])
        for r in csv.DictReader(l for l in open(sys.argv[3]) if not l.startswith("#"))
        if r["ctx"] == "2048"}
p = cal[(4, 8)]
rms = math.sqrt(sum((cal[k] / meas[k] - 1) ** 2 for k in cal) / (4 - 1))
cv, q = max(0.01, rms), 3.182 if rms > 0.01 else 1.959963984540054
lo = p - math.hypot(p - min(ends + [p]), q * cv * p)
hi = p + math.hypot(max(ends + [p]) - p, q * cv * p)
assert w["tp"] == 4 and w["batch"] == 8, w
tol = 1e-6 * p  # the fitted values as printed, 10 digits
assert abs(w["step_ms_mean"] - p) < tol, (w["step_ms_mean"], p)
assert abs(w["pred_lo_ms"] - lo) < tol and abs(w["pred_hi_ms"] - hi) < tol, (w, lo, hi)
PY
done

# --- separability: the gain in tokens/s per GPU against the two 95% half-widths (relative,
# in quadrature), recomputed here from the rows' own intervals. TP-4 graphs vs TP-8 graphs at
# batch 8 is ~40% apart: not separable under cuda-graphs (no free parameters, so its own
# held-out error, 21% rms, +-42%), nor under eager-host-dispatch, whose within fit misses its
# calibration cells by ~5% per cell, model error that widens every interval; TP-8 eager vs TP-8
# graphs at batch 256 is a fraction of a percent.
sep_check() { # NAME FILE WANT(True|False): a pyq check (FILE copied aside)
    local f=$TMP/sep-$((PYQ_N + 1)).json
    cp "$2" "$f"
    pyq "$1" "$f" "$3" <<'PY'
import json, math, re, sys
c = json.load(open(sys.argv[1]))["contexts"][0]
w, r = c["winner"], c["runner_up"]
def half(x):
    lo = x["batch"] / (x["pred_hi_ms"] * 1e-3 * x["tp"]); hi = x["batch"] / (x["pred_lo_ms"] * 1e-3 * x["tp"])
    return 0.5 * (hi - lo) / x["tokens_per_s_per_gpu"]
ratio = w["tokens_per_s_per_gpu"] / r["tokens_per_s_per_gpu"]
gain, pm = 100 * (ratio - 1), 100 * math.hypot(half(w), half(r)) * ratio
m = re.search(r"by ([0-9.]+)% \u00b1 ([0-9.]+)%: (not separable|separable)$", c["separation"])
assert m, c["separation"]
assert abs(float(m.group(1)) - gain) < 0.051 and abs(float(m.group(2)) - pm) < 0.051, (m.groups(), gain, pm)
assert c["separable"] == (gain > pm) == (sys.argv[2] == "True"), (c["separable"], gain, pm)
assert (m.group(3) == "separable") == c["separable"]
PY
}
expect_ok "separable pair" "$TPSIM" plan scenarios/cuda-graphs.yaml --gpus 8 --tpot-ms 1000 --tp 4,8 --mode graphs \
    --batch-max 8 --format json --quiet
cp "$TMP/out" "$TMP/cg.json"
sep_check "TP-4 vs TP-8 graphs: not separable (cuda-graphs)" "$TMP/cg.json" False

# --- a scenario with no free parameter: its interval is its own held-out error, as its
# validated: block records it (tpsim validate --write-domain): prediction x (1 +- 1.96 x
# heldout_rms_pct / 100), the rms read here from the block's text. A copy under another name
# (the same predictions) gets the same intervals; a copy whose block records another error gets
# that error's; a block without one (written by hand), no interval at all.
sed "s|\.\./models|$PWD/models|g; s|\.\./validate|$PWD/validate|g; s|^name: cuda-graphs|name: twin|" \
    scenarios/cuda-graphs.yaml >"$TMP/twin.yaml"
sed 's/^  heldout_rms_pct: .*/  heldout_rms_pct: 40.00/' "$TMP/twin.yaml" >"$TMP/wide.yaml"
awk '/^[a-z]/{blk = /^validated:/} blk && /^  (engine|precision|allreduce|host_phases|graph_mode|queue_depth|kill_switch_pct|heldout_.*|inputs):/{next}
     blk && /^    /{next} {print}' "$TMP/twin.yaml" >"$TMP/hand.yaml"
for v in twin wide hand; do
    expect_ok "no free parameter: $v" "$TPSIM" plan "$TMP/$v.yaml" --gpus 8 --tpot-ms 1000 --tp 4,8 \
        --mode graphs --batch-max 8 --format json --quiet && cp "$TMP/out" "$TMP/$v.json"
done
pyq "no free parameter: the interval is the block's held-out rms x 1.96, whatever the name" \
    scenarios/cuda-graphs.yaml "$TMP/cg.json" "$TMP/twin.json" "$TMP/wide.json" "$TMP/hand.json" <<'PY'
import json, re, sys
rms = float(re.search(r"^  heldout_rms_pct: ([0-9.]+)$", open(sys.argv[1]).read(), re.M).group(1))
cg, twin, wide, hand = (json.load(open(f)) for f in sys.argv[2:])
def rows(d):
    return [r for c in d["contexts"] for r in c["ranked"]]
for d, pct in ((cg, rms), (twin, rms), (wide, 40.0)):
    assert rows(d), d
    for r in rows(d):
        p, half = r["step_ms_mean"], 1.959963984540054 * pct / 100 * r["step_ms_mean"]
        assert abs(r["pred_lo_ms"] - max(0.0, p - half)) < 1e-9 * p, (r, pct)
        assert abs(r["pred_hi_ms"] - (p + half)) < 1e-9 * p, (r, pct)
    assert "%.2f%%" % pct in d["intervals"] and "no free parameters" in d["intervals"], d["intervals"]
# the twin: the same predictions, the same intervals
key = lambda r: (r["tp"], r["batch"], r["step_ms_mean"], r["pred_lo_ms"], r["pred_hi_ms"])
assert [key(r) for r in rows(cg)] == [key(r) for r in rows(twin)]
assert rows(hand) and all("pred_lo_ms" not in r and "pred_hi_ms" not in r for r in rows(hand)), rows(hand)
assert hand["intervals"].startswith("none: "), hand["intervals"]
assert "by hand" in hand["intervals"], hand["intervals"]
PY
expect_ok "the same pair, model error" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 1000 --tp 4,8 --mode graphs \
    --batch-max 8 --format json --quiet --set engine=vllm-v0
sep_check "TP-4 vs TP-8 graphs: not separable (eager-host-dispatch)" "$TMP/out" False
# (two steps per cell: the rows' own intervals make the verdict, whatever their means)
expect_ok "inseparable pair" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --tp 8 --format json "${FAST[@]}"
sep_check "TP-8 eager vs graphs: not separable" "$TMP/out" False

# --- figures: per context a Pareto plot and a breakdown, PNG and SVG, whole
expect_ok "plan --plot" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --batch-max 24 "${FAST[@]}" \
    --plot "$TMP/fig" --format csv -o "$TMP/fig.csv"
for f in pareto-ctx2048 breakdown-ctx2048; do
    for e in dat gp png svg; do check "$f.$e written" test -s "$TMP/fig/$f.$e"; done
    pyq "$f.png is a whole PNG" "$TMP/fig/$f.png" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n" and b[-12:-4] == b"\x00\x00\x00\x00IEND", b[-12:]
PY
    pyq "$f.svg is a whole SVG" "$TMP/fig/$f.svg" <<'PY'
import sys
assert open(sys.argv[1], "rb").read()[-12:].replace(b"\n", b"")[-6:] == b"</svg>"
PY
done
check "no staging folder left" not compgen -G "$TMP/fig/.plot*"
# every simulated cell is a point: the CSV's rows (TP-2, TP-4 and TP-8 x 2 modes x the batches
# that fit). TP-2 fits: 70,552,387,584 B of weights per GPU (tests/test_plan.c's TP-4 figure x 2)
# < 0.9 x 85,520,809,984 - 4.84 GiB = 71,771,818,557 B, room for 3 sequences of 2048 tokens
# (335,544,320 B each at TP-2).
pyq "pareto data: every cell a faint point" "$TMP/fig/pareto-ctx2048.dat" "$TMP/fig.csv" <<'PY'
import sys
first = open(sys.argv[1]).read().split("\n\n\n")[0]  # the first block
n = sum(1 for l in first.split("\n") if l[:1] in tuple("0123456789"))
assert n == open(sys.argv[2]).read().count("\n") - 1, n
PY
count_matches n "$TMP/fig/breakdown-ctx2048.dat" '^"[12]: H100 SXM TP-'
check "breakdown: winner and runner-up" test "$n" -eq 2
check "pareto: error bars drawn" has "$TMP/fig/pareto-ctx2048.gp" 'with yerrorbars'
check "pareto: target and choice in the key (never clipped)" has "$TMP/fig/pareto-ctx2048.gp" 'title "target 30 ms"'
# the frontier drawn is the rows no other row beats on both step and tokens/s per GPU, found
# here from the CSV alone, and each point's interval is the JSON's (same flags, --format json)
# (--jobs 1: the --jobs check below compares --jobs 3 with this)
expect_ok "plan json, same search" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --batch-max 24 "${FAST[@]}" --format json \
    --jobs 1
cp "$TMP/out" "$TMP/fig.json"
pyq "pareto: the frontier of the CSV's rows, with the JSON's intervals" "$TMP/fig/pareto-ctx2048.dat" "$TMP/fig.csv" "$TMP/fig.json" <<'PY'
import csv, json, sys
blocks = [b for b in open(sys.argv[1]).read().split("\n\n\n") if b.strip()]
num = lambda b: [list(map(float, l.split())) for l in b.strip().splitlines() if not l.startswith("#")]
front = [p for b in blocks[1:-2] for p in num(b)]
rows = [(float(r["step_ms_mean"]), float(r["tokens_per_s_per_gpu"])) for r in csv.DictReader(open(sys.argv[2], newline=""))]
want = sorted((s, t) for s, t in rows if not any((s2 <= s and t2 > t) or (s2 < s and t2 >= t) for s2, t2 in rows))
got = [(p[0], p[1]) for p in front]
assert len(got) == len(want) > 3, (len(got), len(want))
assert all(abs(a[0] - b[0]) < 1e-5 and abs(a[1] - b[1]) < 1e-4 for a, b in zip(got, want)), (got, want)
pareto = json.load(open(sys.argv[3]))["contexts"][0]["pareto"]
assert len(pareto) == len(front), (len(pareto), len(front))
for p, j in zip(front, pareto):
    assert abs(p[0] - j["step_ms_mean"]) < 1e-5, (p, j["step_ms_mean"])
    assert abs(p[2] - j["pred_lo_ms"]) < 1e-5 and abs(p[3] - j["pred_hi_ms"]) < 1e-5, (p, j)
    assert abs(p[4] - j["tokens_per_s_per_gpu_lo"]) < 1e-4 and abs(p[5] - j["tokens_per_s_per_gpu_hi"]) < 1e-4, (p, j)
    assert p[4] <= p[1] <= p[5], p
chosen = num(blocks[-1])[0]
c = json.load(open(sys.argv[3]))["contexts"][0]["winner"]
assert abs(chosen[0] - c["step_ms_mean"]) < 1e-5 and abs(chosen[1] - c["tokens_per_s_per_gpu"]) < 1e-4, (chosen, c)
PY
check "target drawn" has "$TMP/fig/pareto-ctx2048.gp" 'set arrow 1 from 30.000000, graph 0'
check "choice marked" has "$TMP/fig/pareto-ctx2048.gp" 'title "chosen: H100 SXM TP-'
touch "$TMP/afile"
# the report goes first: one that cannot reach stdout leaves no figures and no folder
"$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --batch-max 4 "${FAST[@]}" --plot "$TMP/full/figs" >/dev/full 2>"$TMP/err"
check "plot, stdout full: exit 2" test $? -eq 2
check "plot, stdout full: no folder made" test ! -e "$TMP/full"
# a gnuplot that fails: -o FILE is not replaced, and the folders made for the figures go
mkdir -p "$TMP/badbin"; printf '#!/bin/sh\necho "bad font" >&2\nexit 1\n' >"$TMP/badbin/gnuplot"
chmod +x "$TMP/badbin/gnuplot"; echo old >"$TMP/old.csv"
PATH="$TMP/badbin:$PATH" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --batch-max 4 "${FAST[@]}" \
    --plot "$TMP/new/figs" --format csv -o "$TMP/old.csv" >"$TMP/out" 2>"$TMP/err"
check "gnuplot fails: exit 2" test $? -eq 2
check "gnuplot fails: its message" match "$TMP/err" "gnuplot failed drawing .*bad font"
check "gnuplot fails: -o FILE not replaced" test "$(<"$TMP/old.csv")" = old
check "gnuplot fails: no folder left" test ! -e "$TMP/new"
# several contexts make one set: all their figures, or none
real_gp=$(command -v gnuplot)
printf '#!/bin/sh\ncase "$1" in *ctx4096*) echo "bad ctx" >&2; exit 1;; esac\nexec %s "$@"\n' "$real_gp" \
    >"$TMP/badbin/gnuplot"
PATH="$TMP/badbin:$PATH" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --ctx 2048,4096 --batch-max 4 "${FAST[@]}" \
    --plot "$TMP/two/figs" --format csv -o "$TMP/old.csv" >"$TMP/out" 2>"$TMP/err"
check "second context fails: exit 2" test $? -eq 2
check "second context fails: nothing of the first left" test ! -e "$TMP/two"
expect_ok "two contexts" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --ctx 2048,4096 --batch-max 4 "${FAST[@]}" \
    --plot "$TMP/two/figs" --format csv -o "$TMP/two.csv"
entries n "$TMP/two/figs"
check "two contexts: 16 files, no staging folder" test "$n" -eq 16
expect_fail2 "plot into a file" "plot: " "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --batch-max 4 --quiet --plot "$TMP/afile/x"
expect_fail2 "plot with shard" "--plot: a shard holds part of the search" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --quiet --plot "$TMP/x" --shard 0/2 --format csv
expect_fail2 "shard to stdout" "--shard: a part goes to a file with its sidecar FILE.meta, expected -o FILE" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --quiet --shard 0/2 --format csv

# --- --shard I/N: three parts joined by tpsim merge are the unsharded CSV, byte for byte (the
# unsharded CSV is "plan csv"'s above, $TMP/plan.csv: the same search, 2 x 2 x 16 = 64 cells)
G=(plan $SCN --gpus 8 --tpot-ms 30 --tp 4,8 --batch-max 16 "${FAST[@]}" --format csv)
for i in 0 1 2; do expect_ok "shard $i/3" "$TPSIM" "${G[@]}" --shard $i/3 -o "$TMP/part$i.csv"; done
IFS= read -r h1 <"$TMP/part1.csv"; IFS= read -r hw <"$TMP/plan.csv"
check "part: plan's CSV header first" test "$h1" = "$hw"
check "part sidecar" match "$TMP/part1.csv.meta" "^(1,3,64,[0-9a-f]{16},[0-9a-f]{16})$"
expect_ok "merge" "$TPSIM" merge "$TMP/merged.csv" "$TMP/part2.csv" "$TMP/part0.csv" "$TMP/part1.csv"
check "merged = unsharded" cmp -s "$TMP/plan.csv" "$TMP/merged.csv"
# parts made across an edit of a file the scenario names (not the scenario itself) are two
# searches: the part's fingerprint covers every file read
mkdir -p "$TMP/edit/scenarios" "$TMP/edit/models/kernels"
cp "$SCN" "$TMP/edit/scenarios/s.yaml"
cp models/kernels/h100-sxm.yaml models/kernels/h100-sxm.*.csv "$TMP/edit/models/kernels/"
GE=(plan "$TMP/edit/scenarios/s.yaml" --gpus 8 --tpot-ms 30 --tp 4,8 --batch-max 20 --format csv "${FAST[@]}")
expect_ok "edit: shard 0/2" "$TPSIM" "${GE[@]}" --shard 0/2 -o "$TMP/e0.csv"
sed -i 's/t0_us: 4.8252/t0_us: 4.8253/' "$TMP/edit/models/kernels/h100-sxm.yaml"
expect_ok "edit: shard 1/2 after the kernel file changed" "$TPSIM" "${GE[@]}" --shard 1/2 -o "$TMP/e1.csv"
expect_fail2 "merge across a kernel-file edit" "not one sweep \\(another scenario, a file it names changed" \
    "$TPSIM" merge "$TMP/em.csv" "$TMP/e0.csv" "$TMP/e1.csv"

# --- --jobs: the same bytes (--jobs 1's report is the JSON of "plan json, same search")
expect_ok "jobs 3" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --batch-max 24 "${FAST[@]}" --format json --jobs 3
check "--jobs 3 = --jobs 1" cmp -s "$TMP/fig.json" "$TMP/out"

# --- bad input: one line, status 2, nothing on stdout, no output file
P=(plan $SCN --quiet)
expect_fail2 "no --gpus" "missing --gpus" "$TPSIM" "${P[@]}" --tpot-ms 30
expect_fail2 "no --tpot-ms" "missing --tpot-ms" "$TPSIM" "${P[@]}" --gpus 8
expect_fail2 "target 0" "--tpot-ms: 0 is out of range" "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 0
expect_fail2 "impossible target" "--tpot-ms 2: impossible: the fastest configuration searched, H100 SXM TP-8, needs at least 5\.265 ms" \
    "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 2
expect_fail2 "N not divisible by TP" "--tp: 6 GPUs are not divisible by TP-4" "$TPSIM" "${P[@]}" --gpus 6 --tpot-ms 30 --tp 2,4
expect_fail2 "TP above N" "--tp: TP-8 needs more than the 4 GPUs" "$TPSIM" "${P[@]}" --gpus 4 --tpot-ms 30 --tp 8
expect_fail2 "nothing fits" "no configuration fits: the roomiest, H100 SXM TP-8 at ctx 2048" \
    "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 30 --reserve-gib 70 -o "$TMP/none.txt"
check "nothing fits: no output file" test ! -e "$TMP/none.txt"
# H200 finds its own all-reduce calibrations (models/allreduce/h200-sxm-tpK.yaml) and kernel
# calibration (models/kernels/h200-sxm.yaml), each whose hardware: names H200 SXM: it runs
# without borrowing; B200 has neither, so its cells are refused unless borrowed
expect_ok "H200 on its own calibrations" "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 30 --hardware h200 \
    --format csv --no-intervals --batch-max 8 --steps 2 --warmup 0
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "H200 rows: its own kernels and all-reduce, nothing borrowed" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert rows and all(r["hardware"] == "H200 SXM" for r in rows), rows[:1]
assert all(r["kernel_calibration"] == "models/kernels/h200-sxm.yaml" for r in rows), rows[0]
assert all(r["calibration"].startswith("models/allreduce/h200-sxm-tp") for r in rows if r["tp"] != "1")
assert all(not r["calibration_borrowed"] and not r["kernel_calibration_borrowed"] for r in rows)
PY
expect_fail2 "no calibration for the GPU" "measured on H100 SXM, the scenario runs on B200" \
    "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 30 --hardware b200
# other GPUs: the scenario runs `auto`, whose custom all-reduce A100's bundled calibrations never
# measured, so A100 runs nccl-fit and says so; H200 runs on its own bundled kernel and
# all-reduce calibrations (hardware: H200 SXM)
# (the marks and calibrations of every row, not its interval: --no-intervals)
expect_ok "h100, h200, a100" "$TPSIM" plan $SCN --gpus 8 --tpot-ms 30 --tp 4 --hardware h100,h200,a100 \
    --allow-foreign-calib --no-intervals --format json "${FAST[@]}" &&
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "A100 on nccl-fit, H200 on its own kernels, each row marked" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for c in d["contexts"] for r in c["ranked"]]
by = {}
for r in rows: by.setdefault(r["hardware"], []).append(r["cell_marks"])
assert set(by) == {"H100 SXM", "H200 SXM", "A100 SXM4 80GB"}, set(by)
assert all("all-reduce nccl-fit: A100 SXM4 80GB's calibrations have no custom all-reduce data" in m
           for m in by["A100 SXM4 80GB"]), by["A100 SXM4 80GB"]
assert all("GPU kernels from" not in m for m in by["H200 SXM"]), by["H200 SXM"]
h200 = [r for r in rows if r["hardware"] == "H200 SXM"]
assert all(r["calibration"] == "models/allreduce/h200-sxm-tp4.yaml" and not r["calibration_borrowed"]
           for r in h200), [(r["calibration"], r["calibration_borrowed"]) for r in h200]
assert all("GPU kernels from" not in m and "nccl-fit" not in m for m in by["H100 SXM"]), by["H100 SXM"]
PY
expect_fail2 "no calibration for a TP degree" "no all-reduce calibration for tp 16" \
    "$TPSIM" "${P[@]}" --gpus 16 --tpot-ms 30 --tp 16
expect_fail2 "unknown hardware" \
    "--hardware: hardware 'h300': no models/hw file has that id, name or alias, expected one of a100-sxm4-80gb, b200, h100-sxm, h200, l40s" \
    "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 30 --hardware h100,h300
expect_fail2 "an empty hardware name" "--hardware: 'h100,' has an empty name" \
    "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 30 --hardware h100,
expect_fail2 "the same GPU twice by two names" "--hardware: 'NVIDIA H100 80GB HBM3' listed twice" \
    "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 30 --hardware "h100,NVIDIA H100 80GB HBM3"
# --hardware reads models/hw/ (no list in the program): a GPU file and its own all-reduce
# calibrations in a $TPSIM_PATH folder are found by id, by name and by a unique id prefix, and
# priced with those calibrations (the L40S figures under another name: its rows equal l40s's)
mkdir -p "$TMP/share/models/hw" "$TMP/share/models/allreduce"
sed -e 's/^name: L40S$/name: X40 Test/' -e 's/^aliases: .*$/aliases: ["NVIDIA X40"]/' \
    models/hw/l40s.yaml >"$TMP/share/models/hw/x40-test.yaml"
for k in 2 4 8; do
    sed 's/^hardware: L40S$/hardware: NVIDIA X40/' models/allreduce/l40s-pcie-tp$k.yaml \
        >"$TMP/share/models/allreduce/x40-pcie-tp$k.yaml"
done
XP=("${P[@]}" --gpus 8 --tpot-ms 50 --tp 2,4,8 --no-intervals --allow-foreign-calib --format csv
    --batch-max 8 --steps 2 --warmup 0)
expect_ok "plan --hardware l40s" "$TPSIM" "${XP[@]}" --hardware l40s && cp "$TMP/out" "$TMP/l40s.csv"
for name in x40-test "X40 Test" "NVIDIA X40" x40; do
    expect_ok "a GPU file found in TPSIM_PATH as '$name'" env TPSIM_PATH="$TMP/share" \
        "$TPSIM" "${XP[@]}" --hardware "$name" &&
    check "'$name' priced as l40s with its own calibrations (rows equal but for the name)" \
        cmp -s <(sed -e 's/X40 Test/L40S/g' -e 's#[^,]*/x40-pcie-tp#models/allreduce/l40s-pcie-tp#g' \
                     "$TMP/out") "$TMP/l40s.csv"
done
check "the copy's rows name it and its calibrations" \
    match "$TMP/out" "X40 Test.*$TMP/share/models/allreduce/x40-pcie-tp4.yaml"
expect_fail2 "an ambiguous id prefix" "--hardware: hardware 'h' is ambiguous: .*h100-sxm, h200" \
    "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 30 --hardware h
expect_fail2 "bad ctx range" "--ctx-range: 4096\.\.512, expected A < B" "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 30 --ctx-range 4096..512
expect_fail2 "ctx twice" "the contexts are already given" "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 30 --ctx 2048 --ctx-range 512..1024
expect_fail2 "shard needs csv" "--shard: parts are CSV" "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 30 --shard 0/2
# parts of one plan merge into its CSV; a part of another plan (other --tpot-ms) is refused by
# the fingerprint in its sidecar PART.meta; a small search holds as well as the whole one
Q=("${P[@]}" --gpus 8 --tpot-ms 30 --tp 4,8 --batch-max 16 --no-intervals --format csv)
expect_ok "plan csv" "$TPSIM" "${Q[@]}" -o "$TMP/plan-q.csv"
for i in 0 1; do expect_ok "plan part $i" "$TPSIM" "${Q[@]}" --shard $i/2 -o "$TMP/plan-$i.csv"; done
expect_ok "plan merge" "$TPSIM" merge "$TMP/plan-m.csv" "$TMP/plan-0.csv" "$TMP/plan-1.csv"
check "merged plan = unsharded" cmp -s "$TMP/plan-m.csv" "$TMP/plan-q.csv"
expect_ok "other plan part" "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 40 --tp 4,8 --batch-max 16 \
    --no-intervals --format csv --shard 1/2 -o "$TMP/plan-x.csv"
expect_fail2 "other plan refused" "plan-x.csv.meta:2:1: sweep [0-9a-f]{16}, but .* not one sweep" "$TPSIM" merge "$TMP/plan-m2.csv" "$TMP/plan-0.csv" "$TMP/plan-x.csv"
expect_fail2 "utilization above 1" "--gpu-memory-utilization: 1.5 is out of range" "$TPSIM" "${P[@]}" --gpus 8 --tpot-ms 30 --gpu-memory-utilization 1.5
# --no-intervals skips the intervals, never the fit: a copy whose YAML starts the launch cost
# at 5 us (the fit moves it to ~26 us) gives the same steps with and without the flag
sed 's/mean_us: 26.175/mean_us: 5.0/g' scenarios/eager-host-dispatch.yaml >"$TMP/start5.yaml"
P5=(plan "$TMP/start5.yaml" --gpus 8 --tpot-ms 30 --tp 8 --mode eager --ctx 2048 --batch-max 4 --format csv)
"$TPSIM" "${P5[@]}" -o "$TMP/fit.csv" 2>/dev/null
"$TPSIM" "${P5[@]}" --no-intervals -o "$TMP/nofit.csv" 2>/dev/null
pyq "--no-intervals keeps the fitted parameters" "$TMP/fit.csv" "$TMP/nofit.csv" <<'PY'
import csv, sys
a, b = ([r["step_ms_mean"] for r in csv.DictReader(open(f))] for f in sys.argv[1:3])
assert a and a == b, (a, b)
PY

finish
