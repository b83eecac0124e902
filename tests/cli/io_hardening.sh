#!/usr/bin/env bash
# io_hardening.sh: the I/O rules every command keeps: numbers are plain decimals everywhere
# (one parser, base/num.c); outputs are replaced atomically, devices and FIFOs written in
# place, symlinks written through, inputs never overwritten, the umask honoured, temp files
# removed on signals; inputs are read with a size cap and a time bound; a failed stdout
# write is an error; messages show long values shortened with a marker and escape control
# characters.
source tests/cli/lib.sh
S=scenarios/paper-additive.yaml
GRID=validate/h100-ctx2048.csv
LOG=tests/data/h100-8gpu-ring-all_reduce_perf.out

# --- one number parser: a leading '+', hex floats, spaces are refused in every place -----
expect_fail2 "fit-allreduce --tp +8" "^(tpsim: )?fit-allreduce: --tp '\+8' is not a whole number" \
    "$TPSIM" fit-allreduce "$LOG" --tp +8
expect_fail2 "fit-allreduce --tp ' 8'" "--tp ' 8' is not a whole number" "$TPSIM" fit-allreduce "$LOG" --tp ' 8'
expect_fail2 "fit-allreduce --min hex" "--min '0x8000' is not a size" "$TPSIM" fit-allreduce "$LOG" --min 0x8000
expect_fail2 "run --tp +2" "^tpsim: --tp: '\+2' is not an integer" "$TPSIM" run "$S" --tp +2
expect_fail2 "run --seed +1" "^tpsim: --seed: '\+1' is not a non-negative integer" "$TPSIM" run "$S" --seed +1
expect_fail2 "validate --kill-switch hex" "^tpsim: --kill-switch: '0x1p4' is not a number" \
    "$TPSIM" validate "$S" --kill-switch 0x1p4
expect_fail2 "--set +0.5" "^tpsim: --set:1:[0-9]+: gpu.hbm_efficiency: '\+0.5' is not a number" \
    "$TPSIM" run "$S" --set gpu.hbm_efficiency=+0.5
expect_fail2 "--set hex integer" "queue_depth: '0x10' is not an integer" \
    "$TPSIM" run "$S" --set host.queue_depth=0x10
expect_fail2 "--set list index +0" "'\+0'|index" "$TPSIM" run "$S" --set allreduce.+0=x.yaml
sed 's/^H100 TP-2,2,1,2048,27.77,/H100 TP-2,2,1,2048,+27.77,/' "$GRID" >"$TMP/plus.csv"
expect_fail2 "grid +27.77" "plus\.csv:[0-9]+:[0-9]+: measured_ms: '\+27.77' is not a number" \
    "$TPSIM" validate "$S" --grid "$TMP/plus.csv"
sed 's/^H100 TP-2,2,1,2048,27.77,/H100 TP-2,2,1,2048,0x1.bcp4,/' "$GRID" >"$TMP/hex.csv"
expect_fail2 "grid hex float" "measured_ms: '0x1.bcp4' is not a number" "$TPSIM" validate "$S" --grid "$TMP/hex.csv"
sed 's/^H100 TP-2,2,1,/H100 TP-+2,2,1,/' "$GRID" >"$TMP/cfg.csv"
expect_fail2 "grid config TP-+2" "unknown config 'H100 TP-\+2'" "$TPSIM" validate "$S" --grid "$TMP/cfg.csv"
sed -E 's/^( +32768 +8192 +float +sum +-1 +)36\.86/\10x1p5/' "$LOG" >"$TMP/hex.out"
check "hex log fixture differs" not cmp -s "$LOG" "$TMP/hex.out"
expect_fail2 "nccl log hex time" "hex\.out:[0-9]+:[0-9]+: .*'?0x1p5'? is not" "$TPSIM" fit-allreduce "$TMP/hex.out"
if [ -x build/tpsim-probe ] && [ -x build/tpsim-nccl-sweep ]; then
    expect_fail2 "probe hex float" "^tpsim-probe: --nominal-gbps '0x1p10' is not a number" \
        build/tpsim-probe --nominal-gbps 0x1p10
    expect_fail2 "probe +device" "^tpsim-probe: --device '\+0' is not a whole number" build/tpsim-probe --device +0
    expect_fail2 "sweep timeout inf" "^tpsim-nccl-sweep: --timeout 'inf' is not a number" \
        build/tpsim-nccl-sweep --timeout inf
fi

# --- outputs ------------------------------------------------------------------------------
# (functions for the commands that need a redirection or a step before tpsim: what bash -c
# "... && exec tpsim ..." did, without a bash process for each)
cp_then() { cp "$1" "$2" && shift 2 && "$@"; }          # cp SRC DST, then CMD...
with_umask() { (umask "$1" && shift && exec "$@"); }  # CMD... under umask MASK, in a subshell
to_full() { "$@" >/dev/full; }                         # CMD... with stdout /dev/full
from_file() { local f=$1; shift; "$@" <"$f"; }          # CMD... with stdin FILE
# a scenario in $TMP naming the repository's models by absolute path
ROOT=$(pwd)
sed "s#\.\./models#$ROOT/models#" "$S" >"$TMP/s.yaml"
cp "$TMP/s.yaml" "$TMP/s.orig"
SW=(sweep "$TMP/s.yaml" --tp 2 --batch 1 --steps 2 --warmup 0)
expect_fail2 "sweep S -o S" "^tpsim: $TMP/s\.yaml: is one of this run's inputs, refusing to overwrite it" \
    "$TPSIM" "${SW[@]}" -o "$TMP/s.yaml"
check "scenario untouched" cmp -s "$TMP/s.yaml" "$TMP/s.orig"
ln -s "$ROOT/models/llama-3.1-70b.yaml" "$TMP/model-link.yaml"
expect_fail2 "sweep -o a link to the model" "model-link\.yaml: is one of this run's inputs" \
    "$TPSIM" "${SW[@]}" -o "$TMP/model-link.yaml"
check "model still a file" test -f "$ROOT/models/llama-3.1-70b.yaml" -a -L "$TMP/model-link.yaml"
expect_fail2 "validate --grid G, sweep -o G via --fit" "g\.csv: is one of this run's inputs" \
    cp_then "$GRID" "$TMP/g.csv" "$TPSIM" "${SW[@]}" --fit "$TMP/g.csv" -o "$TMP/g.csv"
expect_fail2 "fit-allreduce LOG -o LOG" "log\.out: is one of this run's inputs" \
    cp_then "$LOG" "$TMP/log.out" "$TPSIM" fit-allreduce "$TMP/log.out" -o "$TMP/log.out"
check "the log is untouched" cmp -s "$LOG" "$TMP/log.out"
expect_fail2 "run S --trace S" "s\.yaml: is one of this run's inputs" "$TPSIM" run "$TMP/s.yaml" --trace "$TMP/s.yaml"
check "scenario untouched by --trace" cmp -s "$TMP/s.yaml" "$TMP/s.orig"
expect_fail2 "sweep -o /dev/full" "^tpsim: /dev/full: cannot write: No space left on device" \
    "$TPSIM" "${SW[@]}" -o /dev/full
check "/dev/full still a device" test -c /dev/full
expect_ok "sweep -o /dev/null" "$TPSIM" "${SW[@]}" -o /dev/null
check "/dev/null still a device" test -c /dev/null
echo old >"$TMP/real.csv"
ln -s real.csv "$TMP/link.csv"
expect_ok "sweep -o a symlink" "$TPSIM" "${SW[@]}" -o "$TMP/link.csv"
check "link stays a link" test -L "$TMP/link.csv"
check "written through the link" match "$TMP/real.csv" '^scenario,'
expect_ok "sweep under umask 077" with_umask 077 "$TPSIM" "${SW[@]}" -o "$TMP/private.csv"
check "umask 077 gives 600" test "$(stat -c %a "$TMP/private.csv")" = 600
expect_ok "sweep under umask 002" with_umask 002 "$TPSIM" "${SW[@]}" -o "$TMP/shared.csv"
check "umask 002 gives 664" test "$(stat -c %a "$TMP/shared.csv")" = 664
mkfifo "$TMP/out.fifo"
expect_fail2 "output FIFO with no reader" "out\.fifo: cannot write: a FIFO with no reader" \
    timeout 20 "$TPSIM" "${SW[@]}" -o "$TMP/out.fifo"
check "no temporary files left" not has_entry "$TMP" '*.tmp.*'

# SIGINT, SIGTERM, SIGHUP while the trace is written: killed by that signal, no temporary left.
# The signal goes once the temporary file exists (the whole run is ~0.5 s of writing); a run
# that ends before it is seen is reported, not counted.
pyq "signals during a trace write remove the temporary" "$TPSIM" "$TMP" <<'PY'
import glob, os, signal, subprocess, sys, time
tpsim, tmp = sys.argv[1], sys.argv[2]
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    out = f"{tmp}/sig-{sig.name}.json"
    # A loaded machine can let the run finish (rename its temporary into place) between our
    # seeing the temporary and the signal landing: that attempt tests nothing and is retried.
    for attempt in range(8):
        p = subprocess.Popen([tpsim, "run", f"{tmp}/s.yaml", "--tp", "4", "--steps", "99", "--warmup", "1",
                              "--trace", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in
                                                 (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)])
        deadline = time.time() + 30
        while not glob.glob(out + ".tmp.*") and p.poll() is None and time.time() < deadline:
            time.sleep(0.002)
        if p.poll() is not None:
            rc = p.wait()
        else:
            p.send_signal(sig)
            rc = p.wait(timeout=30)
        if os.path.exists(out):          # it finished first: the whole file is there, as it must be
            assert rc in (0, -sig), (sig.name, rc)
            assert not glob.glob(out + ".tmp.*"), (sig.name, "temporary beside a finished file")
            os.unlink(out)
            continue
        assert rc == -sig, (sig.name, rc)
        left = glob.glob(f"{tmp}/sig-*")
        assert not left, (sig.name, left)
        print(f"  {sig.name}: killed by it, temporary removed (attempt {attempt + 1})")
        break
    else:
        print(f"  {sig.name}: the run finished before the signal in 8 attempts; not tested")
PY

# SIGXFSZ: a trace past the file size limit: one line, killed by the signal, nothing left
{ ( ulimit -f 8; exec "$TPSIM" run "$TMP/s.yaml" --trace "$TMP/big.json" ) >"$TMP/out" 2>"$TMP/err"
  rc=$?; } 2>/dev/null # (the shell's own "File size limit exceeded" note)
check "SIGXFSZ kills with the signal (status $rc)" test "$rc" -eq $((128 + 25))
count_matches n "$TMP/err" 'file size limit'
check "SIGXFSZ says one line" test "$n" -eq 1
check "SIGXFSZ leaves no trace and no temporary" not has_entry "$TMP" '*big.json*'

# --- failed stdout writes -------------------------------------------------------------------
for args in "run $TMP/s.yaml --steps 2" "validate $S" "sweep $TMP/s.yaml --steps 2" "--help" \
            "validate --help" "fit-allreduce $LOG"; do
    # shellcheck disable=SC2086
    expect_fail2 "stdout /dev/full: $args" "cannot write to stdout: No space left on device" \
        to_full "$TPSIM" $args
done
expect_fail2 "fit-allreduce -o with stdout /dev/full" "cannot write to stdout" \
    to_full "$TPSIM" fit-allreduce "$LOG" -o "$TMP/cal.yaml"
check "fit-allreduce wrote no -o file" test ! -e "$TMP/cal.yaml"

# --- inputs: a FIFO with no writer ends with one line, for every kind of input ---------------
mkfifo "$TMP/in.fifo"
sed "s#^model: .*#model: $TMP/in.fifo#" "$TMP/s.yaml" >"$TMP/fifo-model.yaml"
sed "s#^hardware: .*#hardware: $TMP/in.fifo#" "$TMP/s.yaml" >"$TMP/fifo-hw.yaml"
kinds=(scenario model hardware calib grid log fit trace)
cmds=("run $TMP/in.fifo" "run $TMP/fifo-model.yaml" "run $TMP/fifo-hw.yaml"
      "run $TMP/s.yaml --calib $TMP/in.fifo" "validate $TMP/s.yaml --grid $TMP/in.fifo"
      "fit-allreduce $TMP/in.fifo" "sweep $TMP/s.yaml --fit $TMP/in.fifo" "trace import $TMP/in.fifo")
start=$SECONDS
for i in "${!kinds[@]}"; do
    # shellcheck disable=SC2086
    ( timeout 30 "$TPSIM" ${cmds[$i]} >"$TMP/fifo.$i.out" 2>"$TMP/fifo.$i.err"; echo $? >"$TMP/fifo.$i.rc" ) &
done
wait
check "FIFO inputs end within the time bound ($((SECONDS - start)) s)" test $((SECONDS - start)) -lt 25
for i in "${!kinds[@]}"; do
    rc=$(<"$TMP/fifo.$i.rc")
    check "FIFO ${kinds[$i]}: status 2 (got $rc)" test "$rc" -eq 2
    line_count n "$TMP/fifo.$i.err"
    check "FIFO ${kinds[$i]}: one line naming the FIFO" \
        eval "[ $n -eq 1 ] && has '$TMP/fifo.$i.err' in.fifo && match '$TMP/fifo.$i.err' 'no input for 5 s|not a regular file'"
done
start=$SECONDS
expect_fail2 "--grid /dev/zero" "^tpsim: /dev/zero: more than 16 MiB of input, expected a CSV grid" \
    timeout 20 "$TPSIM" validate "$S" --grid /dev/zero
check "--grid /dev/zero refused quickly" test $((SECONDS - start)) -lt 5
expect_fail2 "scenario /dev/zero" "^tpsim: /dev/zero: more than 64 MiB of input" timeout 20 "$TPSIM" run /dev/zero
expect_fail2 "nccl log /dev/urandom" "^tpsim: /dev/urandom: |^/dev/urandom" timeout 20 "$TPSIM" fit-allreduce /dev/urandom
expect_ok "scenario from a pipe" from_file "$TMP/s.yaml" "$TPSIM" run /dev/stdin --steps 2
# a live writer slower than the limit in total (7 chunks, 1 s apart) but never idle for 5 s
# is read to its end: the limit is an idle timeout (issue 18; it was a 5 s total)
cat >"$TMP/slow.py" <<'PY'
import sys, time
d = open(sys.argv[1]).read()
n = len(d) // 7 + 1
for i in range(7):
    sys.stdout.write(d[i * n:(i + 1) * n])
    sys.stdout.flush()
    time.sleep(1)
PY
expect_ok "slow live writer" bash -c "python3 '$TMP/slow.py' '$TMP/s.yaml' | '$TPSIM' run /dev/stdin --steps 2"

# --- messages -------------------------------------------------------------------------------
LONG=$(printf '9%.0s' $(seq 100000))
expect_fail2 "--set: a 100000-digit value is shown shortened, with a marker" \
    "hbm_efficiency: '9{48}…\(100000 bytes\)' is not a number, expected a number in \[0.001, 1\]$" \
    "$TPSIM" run "$S" --set "gpu.hbm_efficiency=$LONG"
python3 - "$TMP/s.yaml" "$TMP/longname.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read().replace("name: paper-additive", "name: " + "x" * 100000, 1)
open(sys.argv[2], "w").write(text)
PY
expect_fail2 "a 100000-byte name is refused, shown shortened" \
    "longname\.yaml:[0-9]+:7: name: 'x{48}…\(100000 bytes\)' is longer than 63 bytes" \
    "$TPSIM" run "$TMP/longname.yaml"
DEEP=/nonexistent$(printf '/%0200d' $(seq 10))/s.yaml
expect_fail2 "a 2000-byte path keeps the reason" "^tpsim: /nonexistent/0{100}.*…\([0-9]+ bytes cut\)….*/s\.yaml: cannot open: No such file or directory$" \
    "$TPSIM" run "$DEEP"
check "the cut message is at most 1024 bytes" test "$(stat -c %s "$TMP/err")" -le 1031
ESC_PATH="$TMP/"$'\e[31mred\e[0m'".yaml"
expect_fail2 "escape codes in a path are shown escaped" '\\x1b\[31mred\\x1b\[0m\.yaml: cannot open' \
    "$TPSIM" run "$ESC_PATH"
check "no raw ESC byte on stderr" not has "$TMP/err" $'\e'
expect_fail2 "a newline in a --set value stays on one line" "'1\\\\x0a2' is not a number" \
    "$TPSIM" run "$S" --set "gpu.hbm_efficiency=1"$'\n'"2"

# --- small things ---------------------------------------------------------------------------
expect_ok "seed 2^64-1" "$TPSIM" run "$TMP/s.yaml" --steps 1 --warmup 0 --seed 18446744073709551615 --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "seed >= 2^63 prints unsigned in JSON" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["seed"] == 2**64 - 1, d["seed"]
PY
expect_ok "validate --help" "$TPSIM" validate --help
check "validate --help says 15%, not 15%%" eval "has '$TMP/out' 'kill-switch 15%)' && ! has '$TMP/out' '%%'"

finish
