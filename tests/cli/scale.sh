# scale.sh: --jobs (output byte-identical to --jobs 1, errors too), the progress line
# (only on a terminal, silenced by --quiet), sweep --shard I/N and tpsim merge.
source tests/cli/lib.sh
SCN=scenarios/eager-host-dispatch.yaml
JIT=(--set host.launch.dist=lognormal --set host.launch.cv=0.4 --set host.step.dist=normal
     --set host.step.mean_us=700 --set host.step.cv=0.2)
GRID=(--tp 2,4,8 --batch 1,2,8 --mode eager,graphs --steps 8 "${JIT[@]}")

# --- --jobs: the same bytes whatever the thread count; nothing on stderr off a terminal
expect_ok "sweep jobs 1" "$TPSIM" sweep $SCN "${GRID[@]}" --jobs 1 -o "$TMP/j1.csv"
check "no progress line off a terminal" test ! -s "$TMP/err"
for j in 2 3 7; do
    expect_ok "sweep jobs $j" "$TPSIM" sweep $SCN "${GRID[@]}" --jobs $j -o "$TMP/j$j.csv"
    check "sweep --jobs $j = --jobs 1" cmp -s "$TMP/j1.csv" "$TMP/j$j.csv"
done
expect_ok "sweep default jobs, stdout" "$TPSIM" sweep $SCN "${GRID[@]}"
check "default jobs on stdout = --jobs 1" cmp -s "$TMP/j1.csv" "$TMP/out"
line_count n "$TMP/j1.csv"
check "18 cells" test "$n" -eq 19
# an error in one cell (the offset makes TP-4 and TP-8 steps negative): the same message
# (the first failing cell in grid order) at any thread count
for j in 1 4; do
    expect_fail2 "failing cell, jobs $j" "offset_ms -20 makes the step .* at tp 4 batch 1," \
        "$TPSIM" sweep scenarios/paper-additive.yaml --tp 2,4 --batch 1,2 --set offset_ms=-20 --jobs $j
done
expect_fail2 "jobs 0" "--jobs: .*expected 1\.\.1024" "$TPSIM" sweep $SCN --jobs 0
expect_fail2 "jobs text" "--jobs" "$TPSIM" validate $SCN --jobs x

# (validate --jobs: tests/cli/validate_jobs.sh)

# --- progress: on a terminal (a pseudo-terminal as stderr, tests/cli/ttyrun.py) every command
# that can take more than a couple of seconds draws "label: done/total" and an ETA, cleared at
# the end; --quiet prints nothing, and neither does a pipe or a file; stdout is the same
# either way. A long run (issue 18: a 200,000-step run was silent; past 1024 steps run checks
# every 256th, and the first check draws: 1100 steps are a long run), a traced run (at most 100
# steps, each long at TP-8), trace import and compare (megabytes read), fit-kernels (profiles
# read, classes fitted). All the terminal runs in one Python.
LONG=(run $SCN --tp 8 --steps 1100 "${JIT[@]}")
B200=tests/data/TraceLens__b200__vllm_tp8_eager_step.json.gz
KP=(tests/data/vidur-h100/llama-2-70b-mlp.csv tests/data/attention-h100/decode.csv)
expect_ok "a trace to compare" "$TPSIM" run $SCN --tp 2 --steps 2 --trace "$TMP/sim.json"
T=()
tty_job() { # tty_job NAME CMD...: CMD on a pty, stdout to $TMP/tty-NAME.out, stderr's text to .err
    local name=$1; shift
    [ ${#T[@]} -eq 0 ] || T+=(---)
    T+=("$TMP/tty-$name.out" "$TMP/tty-$name.err" "$@")
}
tty_job sweep "$TPSIM" sweep $SCN "${GRID[@]}" --jobs 2
tty_job sweep-q "$TPSIM" sweep $SCN "${GRID[@]}" --quiet
tty_job run "$TPSIM" "${LONG[@]}"
tty_job run-q "$TPSIM" "${LONG[@]}" --quiet
tty_job validate "$TPSIM" validate scenarios/eager-host-dispatch.yaml --jobs 2
tty_job trace "$TPSIM" run $SCN --tp 2 --steps 3 --trace "$TMP/tty-trace.json"
tty_job trace-q "$TPSIM" run $SCN --tp 2 --steps 3 --trace "$TMP/tty-trace-q.json" --quiet
tty_job import "$TPSIM" trace import "$B200"
tty_job import-q "$TPSIM" trace import "$B200" --quiet
tty_job import2 "$TPSIM" trace import tests/data/trace-synth-rank0.json tests/data/trace-synth-rank1.json
tty_job compare "$TPSIM" trace compare "$B200" "$TMP/sim.json"
tty_job fitk "$TPSIM" fit-kernels "${KP[@]}"
tty_job fitk-q "$TPSIM" fit-kernels "${KP[@]}" --quiet
python3 tests/cli/ttyrun.py "${T[@]}" || bad "tests/cli/ttyrun.py failed"
# tty_check NAME PATTERN: the job exited 0 and its terminal showed PATTERN (an extended regex);
# the same command off a terminal (stderr to a file) printed nothing there and the same stdout
tty_check() {
    local name=$1 pat=$2 rc=
    IFS= read -r rc <"$TMP/tty-$name.err.rc"
    check "$name on a terminal: status 0 (got $rc)" test "$rc" = 0
    check "$name: progress on a terminal" match "$TMP/tty-$name.err" "$pat"
}
tty_quiet() { # tty_quiet NAME: the --quiet job exited 0 and drew nothing
    local rc=
    IFS= read -r rc <"$TMP/tty-$1.err.rc"
    check "$1 on a terminal: status 0 (got $rc)" test "$rc" = 0
    check "$1: --quiet, nothing on the terminal" test ! -s "$TMP/tty-$1.err"
}
tty_check sweep 'sweep: 18/18'
check "progress has an ETA" match "$TMP/tty-sweep.err" 'sweep: [0-9]+/18  ETA [0-9]+s'
check "stdout is only the CSV" cmp -s "$TMP/j1.csv" "$TMP/tty-sweep.out"
tty_quiet sweep-q
tty_check run 'run: 256/1[0-9]{3} steps  ETA [0-9]+s'
expect_ok "the same run off a terminal" "$TPSIM" "${LONG[@]}"
check "off a terminal: no progress" test ! -s "$TMP/err"
check "run on a terminal: the same report" cmp -s "$TMP/out" "$TMP/tty-run.out"
tty_quiet run-q
tty_check validate 'validate: [0-9]+/[0-9]+'
tty_check trace 'run: [0-9]+/5 steps'
check "run --trace on a terminal: the trace written" test -s "$TMP/tty-trace.json"
tty_quiet trace-q
expect_ok "run --trace off a terminal" "$TPSIM" run $SCN --tp 2 --steps 3 --trace "$TMP/pipe.json"
check "run --trace off a terminal: no progress" test ! -s "$TMP/err"
check "run --trace: the same trace on and off a terminal" cmp -s "$TMP/pipe.json" "$TMP/tty-trace.json"
tty_check import 'trace import: [0-9.]+/[0-9.]+ MB'
tty_quiet import-q
check "trace import on a terminal: the same report" cmp -s "$TMP/tty-import.out" "$TMP/tty-import-q.out"
tty_check import2 'trace import \(file 2 of 2\): [0-9.]+/[0-9.]+ MB'
tty_check compare 'trace compare: [0-9.]+/[0-9.]+ MB'
tty_check fitk 'fit-kernels: [0-9]+/2 profiles read.*fit-kernels: [0-9]+/[0-9]+ classes fitted'
tty_quiet fitk-q
check "fit-kernels on a terminal: the same report" cmp -s "$TMP/tty-fitk.out" "$TMP/tty-fitk-q.out"
expect_ok "trace import off a terminal" "$TPSIM" trace import "$B200"
check "trace import off a terminal: no progress" test ! -s "$TMP/err"
expect_ok "trace compare off a terminal" "$TPSIM" trace compare "$B200" "$TMP/sim.json"
check "trace compare off a terminal: no progress" test ! -s "$TMP/err"
expect_ok "fit-kernels off a terminal" "$TPSIM" fit-kernels "${KP[@]}"
check "fit-kernels off a terminal: no progress" test ! -s "$TMP/err"
check "fit-kernels off a terminal: the same report" cmp -s "$TMP/out" "$TMP/tty-fitk.out"

# --- shards: each part alone, merged in any order, is the unsharded CSV byte for byte
for i in 0 1 2 3; do
    expect_ok "shard $i/4" "$TPSIM" sweep $SCN "${GRID[@]}" --shard $i/4 --jobs 2 -o "$TMP/part$i.csv"
done
# a part is a plain CSV (the sweep's header first); its shard, the grid's size and the
# fingerprints are in its sidecar PART.meta
IFS= read -r h2 <"$TMP/part2.csv"; IFS= read -r h <"$TMP/j1.csv"
check "part: the sweep's header first" test "$h2" = "$h"
IFS= read -r h <"$TMP/part2.csv.meta"
check "sidecar header" test "$h" = "shard,n_shards,cells,sweep,part"
check "sidecar row" match "$TMP/part2.csv.meta" '^(2,4,18,[0-9a-f]{16},[0-9a-f]{16})$'
fps=
for i in 0 1 2 3; do
    { IFS= read -r _; IFS=, read -r _ _ _ fp _; } <"$TMP/part$i.csv.meta"
    [[ " $fps " == *" $fp "* ]] || fps+=${fps:+ }$fp
done
check "one fingerprint for the parts of one sweep ($fps)" test -n "$fps" -a "${fps// /}" = "$fps"
line_count n "$TMP/part1.csv"
check "part 1 has cells 1,5,9,13,17" test "$n" -eq 6
line_count n "$TMP/part3.csv"
check "part 3 has cells 3,7,11,15" test "$n" -eq 5
# the sidecar's part sum is FNV-1a 64 of the part's bytes, recomputed here
pyq "sidecar: the part's FNV-1a 64" "$TMP/part3.csv" <<'PY'
import sys
h = 0xcbf29ce484222325
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 0x100000001b3) & (2**64 - 1)
meta = open(sys.argv[1] + ".meta").read().splitlines()[1].split(",")
assert meta[4] == "%016x" % h, (meta, "%016x" % h)
PY
expect_ok "merge" "$TPSIM" merge "$TMP/merged.csv" "$TMP"/part{2,0,3,1}.csv
check "merge = unsharded" cmp -s "$TMP/merged.csv" "$TMP/j1.csv"
expect_ok "merge to stdout" "$TPSIM" merge - "$TMP"/part{0,1,2,3}.csv
check "merge - = unsharded" cmp -s "$TMP/out" "$TMP/j1.csv"
# more shards than cells: empty parts still join
for i in 0 1 2 3 4; do
    expect_ok "shard $i/5 of 2" "$TPSIM" sweep $SCN --tp 2,4 --steps 3 --shard $i/5 -o "$TMP/small$i.csv"
done
expect_ok "unsharded small" "$TPSIM" sweep $SCN --tp 2,4 --steps 3 -o "$TMP/small.csv"
expect_ok "merge small" "$TPSIM" merge "$TMP/small-m.csv" "$TMP"/small{4,3,2,1,0}.csv
check "small merge = unsharded" cmp -s "$TMP/small-m.csv" "$TMP/small.csv"
# refusals: one line, status 2, no output file
expect_fail2 "missing shard" "shard 1/4 is missing: 3 of 4 parts" "$TPSIM" merge "$TMP/m.csv" "$TMP"/part{0,2,3}.csv
expect_fail2 "repeated shard" "part1.csv.meta:2:1: shard 1/4 repeated" "$TPSIM" merge "$TMP/m.csv" "$TMP"/part{0,1,2,3,1}.csv
# a part edited or cut after its sidecar was written fails the sidecar's sum; with a sidecar
# made to match (fnvmeta), the part's own checks speak
fnvmeta() { # PART...: a sidecar for each PART as shard 1/4 of 18 cells of part1's sweep
    /usr/bin/python3 - "$@" <<'PY'
import sys
for p in sys.argv[1:]:
    h = 0xcbf29ce484222325
    for b in open(p, "rb").read():
        h = ((h ^ b) * 0x100000001b3) & (2**64 - 1)
    fp = open(p.rsplit("/", 1)[0] + "/part1.csv.meta").read().splitlines()[1].split(",")[3]
    open(p + ".meta", "w").write("shard,n_shards,cells,sweep,part\n1,4,18,%s,%016x\n" % (fp, h))
PY
}
# (the parts with a sidecar made to match, made at once, one Python: cut.csv, short.csv, hdr.csv;
# the cut part with part1's own sidecar is orig/cut.csv)
{ head -n 3 "$TMP/part1.csv"; sed -n 4p "$TMP/part1.csv" | head -c 20; } >"$TMP/cut.csv"
head -n 3 "$TMP/part1.csv" >"$TMP/short.csv"
sed '1s/^scenario/scenariox/' "$TMP/part1.csv" >"$TMP/hdr.csv"
fnvmeta "$TMP/cut.csv" "$TMP/short.csv" "$TMP/hdr.csv"
mkdir "$TMP/orig"
cp "$TMP/cut.csv" "$TMP/orig/cut.csv"
cp "$TMP/part1.csv.meta" "$TMP/orig/cut.csv.meta"
expect_fail2 "cut part: not its sidecar's" "cut.csv: not the part its sidecar .*cut.csv.meta describes" "$TPSIM" merge "$TMP/m.csv" "$TMP"/part{0,2,3}.csv "$TMP/orig/cut.csv"
expect_fail2 "cut part" "cut.csv:4:21: line cut short" "$TPSIM" merge "$TMP/m.csv" "$TMP"/part{0,2,3}.csv "$TMP/cut.csv"
expect_fail2 "short part" "short.csv:4:1: 2 rows, expected 5 for shard 1/4" "$TPSIM" merge "$TMP/m.csv" "$TMP"/part{0,2,3}.csv "$TMP/short.csv"
expect_fail2 "not a part (no sidecar)" "j1.csv: no sidecar .*j1.csv.meta beside it, expected a tpsim sweep part" "$TPSIM" merge "$TMP/m.csv" "$TMP/j1.csv"
cp "$TMP/j1.csv" "$TMP/j2.csv"; head -2 "$TMP/j1.csv" >"$TMP/j2.csv.meta"
expect_fail2 "not a sidecar" "j2.csv.meta:1:1: not a tpsim sweep part's sidecar" "$TPSIM" merge "$TMP/m.csv" "$TMP/j2.csv"
cp "$TMP/part1.csv" "$TMP/p1.csv"; printf 'shard,n_shards,cells,sweep,part\n1,4,18,xyz,0\n' >"$TMP/p1.csv.meta"
expect_fail2 "bad sidecar row" "p1.csv.meta:2:1: expected one row 'I,N,T,FP,SUM'" "$TPSIM" merge "$TMP/m.csv" "$TMP/p1.csv"
expect_fail2 "other sweep" "small1.csv.meta:2:1: part 1/5 of 2 cells, but .* of 18 cells" "$TPSIM" merge "$TMP/m.csv" "$TMP"/part{0,2,3}.csv "$TMP/small1.csv"
expect_fail2 "other header" "hdr.csv:1:1: CSV header differs" "$TPSIM" merge "$TMP/m.csv" "$TMP"/part{0,2,3}.csv "$TMP/hdr.csv"
expect_fail2 "no such part" "nope.csv: cannot open" "$TPSIM" merge "$TMP/m.csv" "$TMP/nope.csv"
expect_fail2 "no parts" "merge: expected OUT and at least one PART" "$TPSIM" merge "$TMP/m.csv"
# a part's shard count is bounded as --shard's N is (4096): a forged count is one line, not
# an allocation of N entries ("out of memory", or an abort under ASan)
printf 'scenario\na\n' >"$TMP/many.csv"
for n in 4097 1099511627776 100000000000000000; do
    printf 'shard,n_shards,cells,sweep,part\n0,%s,1,0123456789abcdef,4fcf44cb26c75a90\n' "$n" >"$TMP/many.csv.meta"
    expect_fail2 "$n shards" "many.csv.meta:2:1: $n shards, expected at most 4096" "$TPSIM" merge "$TMP/m.csv" "$TMP/many.csv"
done
# parts of another sweep (other --steps, --seed, --set, grid, scenario bytes) are refused by the
# fingerprint in every part's sidecar, although their shape (N, T, header) is the same
for extra in "--steps 4" "--seed 7" "--set host.launch.cv=0.2" "--batch 1,2,16"; do
    # shellcheck disable=SC2086
    expect_ok "foreign part ($extra)" "$TPSIM" sweep $SCN "${GRID[@]}" $extra --shard 1/4 -o "$TMP/foreign.csv"
    expect_fail2 "foreign part refused ($extra)" "foreign.csv.meta:2:1: sweep [0-9a-f]{16}, but .*part0.csv is a part of sweep [0-9a-f]{16}: not one sweep" \
        "$TPSIM" merge "$TMP/m.csv" "$TMP"/part{0,2,3}.csv "$TMP/foreign.csv"
done
cp "$SCN" "$TMP/copy.yaml"; echo "# another file" >>"$TMP/copy.yaml"
expect_ok "part of another scenario file" "$TPSIM" sweep "$TMP/copy.yaml" "${GRID[@]}" --shard 1/4 -o "$TMP/foreign.csv"
expect_fail2 "other scenario bytes refused" "foreign.csv.meta:2:1: sweep .* not one sweep" "$TPSIM" merge "$TMP/m.csv" "$TMP"/part{0,2,3}.csv "$TMP/foreign.csv"
# the same sweep with other -o, --jobs, --quiet is the same sweep
expect_ok "same sweep, other jobs" "$TPSIM" sweep $SCN "${GRID[@]}" --shard 1/4 --jobs 1 --quiet -o "$TMP/again.csv"
check "same part" cmp -s "$TMP/again.csv" "$TMP/part1.csv"
check "same fingerprint" cmp -s "$TMP/again.csv.meta" "$TMP/part1.csv.meta"
# OUT may not be a part: not by its name, a symlink to it, a hard link, or ./ spelling
cp "$TMP/part0.csv" "$TMP/keep0.csv"
expect_fail2 "OUT is a part" "part0.csv: is the input .*part0.csv, refusing to overwrite it" "$TPSIM" merge "$TMP/part0.csv" "$TMP"/part{0,1,2,3}.csv
ln -sf "$TMP/part0.csv" "$TMP/link.csv"
expect_fail2 "OUT a symlink to a part" "link.csv: is the input .*part0.csv \(the same file\)" "$TPSIM" merge "$TMP/link.csv" "$TMP"/part{0,1,2,3}.csv
ln -f "$TMP/part0.csv" "$TMP/hard.csv"
expect_fail2 "OUT a hard link to a part" "hard.csv: is the input" "$TPSIM" merge "$TMP/hard.csv" "$TMP"/part{0,1,2,3}.csv
check "the part is intact" cmp -s "$TMP/part0.csv" "$TMP/keep0.csv"
check "link still a link" test -L "$TMP/link.csv"
cp "$TMP/part0.csv.meta" "$TMP/keep0.meta"
expect_fail2 "OUT is a sidecar" "part0.csv.meta: is the input .*part0.csv.meta, refusing to overwrite it" "$TPSIM" merge "$TMP/part0.csv.meta" "$TMP"/part{0,1,2,3}.csv
check "the sidecar is intact" cmp -s "$TMP/part0.csv.meta" "$TMP/keep0.meta"
check "no output file after refusals" test ! -e "$TMP/m.csv"
expect_fail2 "shard out of range" "--shard I: 4 is out of range, expected 0\.\.3" "$TPSIM" sweep $SCN --shard 4/4
expect_fail2 "shard no slash" "--shard: '2', expected I/N" "$TPSIM" sweep $SCN --shard 2
expect_fail2 "shard zero" "--shard N" "$TPSIM" sweep $SCN --shard 0/0
expect_fail2 "shard to stdout" "--shard: a part goes to a file with its sidecar FILE.meta, expected -o FILE" "$TPSIM" sweep $SCN --shard 0/2
# the sidecar is an output too: one named like an input is refused, and nothing is written
cp "$SCN" "$TMP/in.csv.meta"
expect_fail2 "sidecar is the scenario" "in.csv.meta: is one of this run's inputs" "$TPSIM" sweep "$TMP/in.csv.meta" --tp 2 --steps 2 --shard 0/2 -o "$TMP/in.csv"
check "sidecar refused: no part written" test ! -e "$TMP/in.csv"
check "sidecar refused: the scenario intact" cmp -s "$SCN" "$TMP/in.csv.meta"

finish
