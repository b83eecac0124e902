#!/usr/bin/env bash
# no_clobber.sh: no output may be an input, in every command with -o or an output operand
# (by name, through a symlink, a hard link), and outputs are installed only when the whole
# command succeeded: a report that cannot reach stdout (/dev/full) leaves every output file
# as it was, and validate --plot DIR leaves no DIR it made when it fails or is interrupted.
# Each case failed before the fix (issue 18): the input was replaced by the output, exit 0.
cd "$(dirname "$0")/../.." || exit 2
. tests/cli/lib.sh

# --- trace import FILE -o FILE: JSON, gzip, SQLite, and a symlink to each
for f in trace-synth-rank0.json TraceLens__b200__vllm_tp8_eager_step.json.gz pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite; do
    cp "tests/data/$f" "$TMP/$f"
    expect_fail2 "trace import $f -o itself" "$f: is the input .*$f, refusing to overwrite it" \
        "$TPSIM" trace import "$TMP/$f" -o "$TMP/$f"
    ln -sf "$f" "$TMP/link-$f"
    expect_fail2 "trace import $f -o a symlink to it" "link-$f: is the input .*$f \\(the same file\\)" \
        "$TPSIM" trace import "$TMP/$f" -o "$TMP/link-$f"
    expect_fail2 "trace import via a symlink -o the file" "$f: is the input .*link-$f \\(the same file\\)" \
        "$TPSIM" trace import "$TMP/link-$f" -o "$TMP/$f"
    check "$f intact" cmp -s "tests/data/$f" "$TMP/$f"
    check "link-$f still a link" test -L "$TMP/link-$f"
done
# a second rank file as the output is refused too
cp tests/data/trace-synth-rank1.json "$TMP/r1.json"
expect_fail2 "trace import -o the second rank" "r1.json: is the input" \
    "$TPSIM" trace import tests/data/trace-synth-rank0.json "$TMP/r1.json" -o "$TMP/r1.json"
check "rank 1 intact" cmp -s tests/data/trace-synth-rank1.json "$TMP/r1.json"

# --- outputs an input of another kind: run --trace SCENARIO, sweep -o SCENARIO
cp scenarios/eager-host-dispatch.yaml "$TMP/s.yaml"
expect_fail2 "run --trace the scenario" "s.yaml: is one of this run's inputs" \
    "$TPSIM" run "$TMP/s.yaml" --steps 2 --trace "$TMP/s.yaml"
expect_fail2 "sweep -o the scenario" "s.yaml: is one of this run's inputs" \
    "$TPSIM" sweep "$TMP/s.yaml" --steps 2 -o "$TMP/s.yaml"
check "scenario intact" cmp -s scenarios/eager-host-dispatch.yaml "$TMP/s.yaml"

# --- stdout fails: no output replaced (each file holds its old bytes), exit 2, one line
if [ -w /dev/full ]; then
    echo old >"$TMP/calib.yaml"
    "$TPSIM" trace import tests/data/trace-synth-rank0.json -o "$TMP/calib.yaml" >/dev/full 2>"$TMP/err"
    check "trace import, stdout full: exit 2" test $? -eq 2
    check "trace import, stdout full: one line" test "$(wc -l <"$TMP/err")" -eq 1
    check "trace import, stdout full: calibration not replaced" test "$(cat "$TMP/calib.yaml")" = old
    echo old >"$TMP/t.json"
    "$TPSIM" run scenarios/eager-host-dispatch.yaml --steps 2 --trace "$TMP/t.json" >/dev/full 2>"$TMP/err"
    check "run --trace, stdout full: exit 2" test $? -eq 2
    check "run --trace, stdout full: trace not replaced" test "$(cat "$TMP/t.json")" = old
    mkdir -p "$TMP/figs"; echo old >"$TMP/figs/breakdown.png"
    "$TPSIM" validate scenarios/paper-additive.yaml --plot "$TMP/figs" >/dev/full 2>"$TMP/err"
    check "validate --plot, stdout full: exit 2" test $? -eq 2
    check "validate --plot, stdout full: figures not replaced" test "$(cat "$TMP/figs/breakdown.png")" = old
    "$TPSIM" validate scenarios/paper-additive.yaml --plot "$TMP/newfigs" >/dev/full 2>"$TMP/err"
    check "validate --plot, stdout full: no DIR made" test ! -e "$TMP/newfigs"
    check "no temporary files left" test -z "$(find "$TMP" -name '*.tmp.*' -o -name '.plot.*')"
fi
# a successful run still installs everything
expect_ok "trace import -o" "$TPSIM" trace import tests/data/trace-synth-rank0.json -o "$TMP/calib.yaml"
check "calibration written" has "$TMP/calib.yaml" 'tpsim trace import'

# --- validate --plot DIR interrupted: the DIR it made is gone (retried when the run ends first)
for try in 1 2 3 4 5; do
    rm -rf "$TMP/sig"
    "$TPSIM" validate scenarios/paper-additive.yaml --plot "$TMP/sig/figs" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 200); do [ -d "$TMP/sig/figs" ] && break; sleep 0.01; done
    kill -TERM "$pid" 2>/dev/null
    wait "$pid"; rc=$?
    [ "$rc" -eq 143 ] && break
done
if [ "$rc" -eq 143 ]; then
    # whole or nothing: a signal after the set was installed (while the run exits) leaves it
    if [ -e "$TMP/sig/figs/breakdown.png" ]; then
        check "interrupted --plot after the install: the whole set, no staging left" \
            test "$(find "$TMP/sig" -mindepth 1 | wc -l)" -eq 13
    else
        check "interrupted --plot: no DIR left, nor the folder made above it" test ! -e "$TMP/sig"
    fi
else
    bad "validate --plot finished before every signal ($try tries)"
fi

# --- validate --scan DIR / --plot DIR: a figure's file named like an input is refused, as -o is,
# the input intact and no figure installed (the report, printed before figures install, stays)
# refused NAME PATTERN CMD...: exit 2, one stderr line matching PATTERN
refused() {
    local name=$1 pat=$2; shift 2
    "$@" >/dev/null 2>"$TMP/err"; local rc=$?
    check "$name: exit $rc, expected 2" test "$rc" -eq 2
    check "$name: $(head -c 300 "$TMP/err")" grep -Eq "$pat" "$TMP/err"
}
mkdir -p "$TMP/sc" "$TMP/pl"
cp validate/h100-ctx2048.csv "$TMP/sc/objective.csv"
refused "--scan over the grid kept as DIR/objective.csv" \
    "plot: .*sc/objective.csv: is one of this run's inputs, refusing to overwrite it" \
    "$TPSIM" validate eager-host-dispatch --grid "$TMP/sc/objective.csv" --scan "$TMP/sc" --quiet
check "--scan: the grid intact" cmp -s validate/h100-ctx2048.csv "$TMP/sc/objective.csv"
check "--scan: no figure installed" test ! -e "$TMP/sc/objective.gp"
cp scenarios/paper-additive.yaml "$TMP/pl/breakdown.gp"
refused "--plot over the scenario named DIR/breakdown.gp" \
    "plot: .*pl/breakdown.gp: is one of this run's inputs, refusing to overwrite it" \
    "$TPSIM" validate "$TMP/pl/breakdown.gp" --plot "$TMP/pl" --quiet
check "--plot: the scenario intact" cmp -s scenarios/paper-additive.yaml "$TMP/pl/breakdown.gp"
check "--plot: no figure installed" test ! -e "$TMP/pl/breakdown.png"
finish
