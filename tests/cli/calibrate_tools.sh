#!/usr/bin/env bash
# calibrate_tools.sh: build/tpsim-nccl-sweep and build/tpsim-probe refuse bad arguments and a
# machine without a GPU with one line and status 2, and never hang. Skipped (passing) where
# `make calibrate` cannot build them (no nvcc / NCCL).
source tests/cli/lib.sh
SWEEP=build/tpsim-nccl-sweep
PROBE=build/tpsim-probe

if ! make -s calibrate >"$TMP/make.out" 2>&1; then
    bad "make calibrate failed: $(tail -c 600 "$TMP/make.out")"
    finish
    exit
fi
if grep -q 'calibrate: skipped' "$TMP/make.out" || [ ! -x "$SWEEP" ] || [ ! -x "$PROBE" ]; then
    echo "calibrate_tools.sh: skip: tools not built ($(head -c 300 "$TMP/make.out"))"
    finish
    exit
fi

# Bounded: a tool that hangs fails the test instead of stalling it (status 124).
run() { timeout 120 "$@"; }
quiet() { "$@" >/dev/null 2>&1; }

# --- argument errors come before any CUDA call, so they hold with or without a GPU ----------
expect_fail2 "sweep --gpus 1" "^tpsim-nccl-sweep: --gpus '1'" run "$SWEEP" --gpus 1
expect_fail2 "sweep --gpus x" "^tpsim-nccl-sweep: --gpus 'x'" run "$SWEEP" --gpus x
expect_fail2 "sweep bad size" "^tpsim-nccl-sweep: --min '32Q' is not a size" run "$SWEEP" --min 32Q
expect_fail2 "sweep odd size" "not a whole number of bf16 elements" run "$SWEEP" --min 3
expect_fail2 "sweep min above max" "--min is above --max" run "$SWEEP" --min 1M --max 64K
expect_fail2 "sweep unknown flag" "unknown option '--bogus'" run "$SWEEP" --bogus
expect_fail2 "sweep bad dtype" "--dtype 'int8'" run "$SWEEP" --dtype int8
expect_fail2 "sweep bad iters" "--iters '0'" run "$SWEEP" --iters 0
expect_fail2 "sweep value missing" "--max: missing value" run "$SWEEP" --max
expect_fail2 "probe bad size" "^tpsim-probe: --bytes 'lots' is not a size" run "$PROBE" --bytes lots
expect_fail2 "probe small size" "at least 1G" run "$PROBE" --bytes 64M
expect_fail2 "probe unknown flag" "unknown option '--gpus'" run "$PROBE" --gpus 2
expect_fail2 "probe bad device" "--device '-1'" run "$PROBE" --device -1
expect_fail2 "probe bad nominal" "--nominal-gbps 'fast'" run "$PROBE" --nominal-gbps fast
check "sweep --help" quiet run "$SWEEP" --help
check "probe --help" quiet run "$PROBE" --help

# --- no GPU: one line saying so, status 2, no output file -----------------------------------
if run "$PROBE" --bytes 1G -o "$TMP/hw.yaml" >/dev/null 2>&1; then
    echo "calibrate_tools.sh: a GPU answers here: the no-GPU checks are skipped"
    check "probe wrote a hardware file" has_line "$TMP/hw.yaml" 'kind: hardware'
else
    expect_fail2 "probe without a GPU" "^tpsim-probe: no CUDA device" run "$PROBE" -o "$TMP/hw.yaml"
    check "probe left no file" test ! -e "$TMP/hw.yaml"
    expect_fail2 "sweep without a GPU" "^tpsim-nccl-sweep: no CUDA device" \
        run "$SWEEP" --gpus 2 -o "$TMP/sweep.csv"
    check "sweep left no file" test ! -e "$TMP/sweep.csv"
    # calibrate/on-device.sh (make calibrate, then the whole probe, bounded to 5 minutes)
    expect_fail2 "on-device.sh without a GPU" "^tpsim-probe: no CUDA device" run bash calibrate/on-device.sh "$TMP/od.yaml"
    check "on-device.sh left no file" test ! -e "$TMP/od.yaml"
    check "no temp files" bash -c "! ls -A '$TMP' | grep -q tmp"
fi

# --- the GPU tools take flags the same way (argument errors come before any CUDA call) ----------
if [ -x build/tpsim-nccl-sweep ] && [ -x build/tpsim-probe ]; then
    expect_fail2 "nccl-sweep --gpus=1" "^tpsim-nccl-sweep: --gpus '1'" build/tpsim-nccl-sweep --gpus=1
    expect_fail2 "nccl-sweep --min=32Q" "^tpsim-nccl-sweep: --min '32Q' is not a size" build/tpsim-nccl-sweep --min=32Q
    expect_fail2 "nccl-sweep a unique prefix" "^tpsim-nccl-sweep: --iters '0'" build/tpsim-nccl-sweep --it 0
    expect_fail2 "nccl-sweep missing value" "^tpsim-nccl-sweep: --dtype: missing value$" build/tpsim-nccl-sweep --dtype
    expect_fail2 "nccl-sweep unknown flag" "^tpsim-nccl-sweep: unknown option '--gpu-count'" build/tpsim-nccl-sweep --gpu-count=2
    expect_fail2 "probe an operand" "^tpsim-probe: unexpected argument 'x'" build/tpsim-probe x
    expect_fail2 "probe after --" "^tpsim-probe: unexpected argument '--bytes'" build/tpsim-probe -- --bytes
    expect_fail2 "probe --bytes=512M" "^tpsim-probe: --bytes must be at least 1G" build/tpsim-probe --bytes=512M
    (cd "$TMP" && "$OLDPWD/build/tpsim-probe" -o - >"$TMP/out" 2>"$TMP/err"); rc=$?
    if [ "$rc" -ne 0 ]; then  # no GPU here: it fails before writing, and never a file named -
        check "probe -o - without a GPU: one line" test "$(wc -l <"$TMP/err")" -eq 1
    fi
    check "probe -o -: no file named -" test ! -e "$TMP/-"
fi

finish
