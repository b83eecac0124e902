#!/usr/bin/env bash
# figures.sh: the figures of sweep --plot (step vs TP degree), allreduce --plot (latency vs
# message size, measured beside modelled) and trace compare --plot (per-class bars, real beside
# simulated): each set written whole (.dat, .gp, .png, .svg), its data the very numbers the
# command's CSV or JSON report, and a figure file named like one of the run's inputs refused.
# (plan's Pareto frontier is checked in plan.sh.) Without gnuplot the test says so and passes.
. tests/cli/lib.sh
if ! command -v gnuplot >/dev/null; then
    echo "figures.sh: gnuplot is not installed (apt-get install gnuplot-nox): skipped" >&2
    finish
    exit
fi
S=scenarios/eager-host-dispatch.yaml
LOG=tests/data/h100-8gpu-ring-all_reduce_perf.out
B200=tests/data/TraceLens__b200__vllm_tp8_eager_step.json.gz

# fail2_after_report NAME PATTERN CMD...: as expect_fail2, but the report went to stdout before
# the figure was refused (a stdout report is written first; only the figures are all or none)
fail2_after_report() {
    local name=$1 pat=$2; shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"; local rc=$?
    if [ "$rc" -ne 2 ]; then bad "$name: exit $rc, expected 2"; return; fi
    if [ "$(wc -l <"$TMP/err")" -ne 1 ]; then bad "$name: stderr not one line: $(head -c 300 "$TMP/err")"; return; fi
    if ! grep -Eq "$pat" "$TMP/err"; then bad "$name: '$(cat "$TMP/err")' does not match /$pat/"; return; fi
    ok
}

whole() { # DIR FIG: the four files, the images whole
    for e in dat gp png svg; do check "$2.$e written" test -s "$1/$2.$e"; done
    check "$2.png is a PNG" test "$(head -c 4 "$1/$2.png" | tail -c 3)" = PNG
    check "$2.svg ends" has "$1/$2.svg" '</svg>'
    check "$2: no staging left" test -z "$(ls -A "$1" | grep '^\.plot')"
}

# --- sweep: one line per (batch, mode) through the TP degrees, the CSV's step_ms_mean
expect_ok "sweep --plot" "$TPSIM" sweep $S --tp 2,4,8 --batch 1,8 --mode eager,graphs --steps 2 \
    --quiet --plot "$TMP/sw" -o "$TMP/sw.csv"
whole "$TMP/sw" step_vs_tp
pyq "sweep figure: each line is the CSV's steps by TP" "$TMP/sw/step_vs_tp.dat" "$TMP/sw.csv" <<'PY'
import csv, sys
blocks = [b for b in open(sys.argv[1]).read().split("\n\n\n") if b.strip()]
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
assert len(blocks) == 4, len(blocks)  # 2 batches x 2 modes
for b in blocks:
    lines = b.strip().splitlines()
    title = [l for l in lines if l.startswith('# "')][0][3:-1]  # "batch 8 graphs"
    _, batch, mode = title.split()
    pts = [tuple(map(float, l.split())) for l in lines if not l.startswith("#")]
    want = [(float(r["tp"]), float(r["step_ms_mean"])) for r in rows
            if r["batch"] == batch and r["mode"] == mode]
    assert [p[0] for p in pts] == [2, 4, 8], pts
    assert all(abs(p[1] - w[1]) <= 1e-6 * w[1] and p[0] == w[0] for p, w in zip(pts, want)), (pts, want)
PY
expect_fail2 "sweep --plot with --shard" "--plot: a shard holds part of the sweep" \
    "$TPSIM" sweep $S --shard 0/2 --plot "$TMP/x" -o "$TMP/x.csv"
# a figure file named like the scenario: refused, nothing installed, -o not written
mkdir -p "$TMP/in"; cp $S "$TMP/in/step_vs_tp.gp"
expect_fail2 "sweep figure over an input" "plot: .*in/step_vs_tp.gp: is one of this run's inputs" \
    "$TPSIM" sweep "$TMP/in/step_vs_tp.gp" --tp 2 --steps 2 --quiet --plot "$TMP/in" -o "$TMP/in.csv"
check "sweep: the input intact" cmp -s $S "$TMP/in/step_vs_tp.gp"
check "sweep: no -o file when the figure is refused" test ! -e "$TMP/in.csv"

# --- allreduce --log: the model at every size, the log's times beside it, as its JSON says
expect_ok "allreduce --plot" "$TPSIM" allreduce --tp 8 --log $LOG --plot "$TMP/ar" --format json
cp "$TMP/out" "$TMP/ar.json"
whole "$TMP/ar" allreduce_latency
check "allreduce figure: log-log" has "$TMP/ar/allreduce_latency.gp" 'set logscale y'
pyq "allreduce figure: modelled and measured are the JSON's" "$TMP/ar/allreduce_latency.dat" "$TMP/ar.json" <<'PY'
import json, sys
blocks = [b for b in open(sys.argv[1]).read().split("\n\n\n") if b.strip()]
rows = json.load(open(sys.argv[2]))["rows"]
pts = [[tuple(map(float, l.split())) for l in b.strip().splitlines() if not l.startswith("#")]
       for b in blocks]
assert len(pts) == 2, len(pts)
close = lambda a, b: abs(a - b) <= 1e-6 * abs(b)
assert [p[0] for p in pts[0]] == [r["bytes"] for r in rows]
assert all(close(p[1], r["us"]) for p, r in zip(pts[0], rows))
meas = [r for r in rows if "measured_us" in r]
assert len(meas) == len(pts[1]) > 20, (len(meas), len(pts[1]))
assert all(p[0] == r["bytes"] and close(p[1], r["measured_us"]) for p, r in zip(pts[1], meas))
PY
mkdir -p "$TMP/arin"; cp $LOG "$TMP/arin/allreduce_latency.dat"
fail2_after_report "allreduce figure over the log" "plot: .*arin/allreduce_latency.dat: is one of this run's inputs" \
    "$TPSIM" allreduce --tp 8 --log "$TMP/arin/allreduce_latency.dat" --plot "$TMP/arin"
check "allreduce: the log intact" cmp -s $LOG "$TMP/arin/allreduce_latency.dat"

# --- trace compare: each class's ms per step, real beside simulated, as its JSON says
expect_ok "simulated trace" "$TPSIM" run $S --tp 2 --steps 3 --quiet --trace "$TMP/sim.json"
expect_ok "trace compare --plot" "$TPSIM" trace compare $B200 "$TMP/sim.json" --quiet \
    --format json --plot "$TMP/tc"
cp "$TMP/out" "$TMP/tc.json"
whole "$TMP/tc" trace_compare
pyq "trace figure: the JSON's classes" "$TMP/tc/trace_compare.dat" "$TMP/tc.json" <<'PY'
import json, shlex, sys
cls = json.load(open(sys.argv[2]))["classes"]
rows = [shlex.split(l) for l in open(sys.argv[1]) if not l.startswith("#")]
assert [r[0] for r in rows] == list(cls), ([r[0] for r in rows], list(cls))
for name, real, sim in rows:
    assert abs(float(real) - cls[name]["real_ms"]) <= 1e-6 * max(1e-9, cls[name]["real_ms"]), name
    assert abs(float(sim) - cls[name]["sim_ms"]) <= 1e-6 * max(1e-9, cls[name]["sim_ms"]), name
PY
mkdir -p "$TMP/tcin"; cp "$TMP/sim.json" "$TMP/tcin/trace_compare.svg"
fail2_after_report "trace figure over an input" "plot: .*tcin/trace_compare.svg: is one of this run's inputs" \
    "$TPSIM" trace compare $B200 "$TMP/tcin/trace_compare.svg" --quiet --plot "$TMP/tcin"
check "trace: the input intact" cmp -s "$TMP/sim.json" "$TMP/tcin/trace_compare.svg"
expect_fail2 "--plot on import" "--plot: trace compare's" "$TPSIM" trace import $B200 --plot "$TMP/x"
finish
