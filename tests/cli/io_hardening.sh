#!/usr/bin/env bash
# io_hardening.sh: the I/O rules every command keeps: numbers are plain decimals everywhere
# (one parser, sim/num.c); outputs are replaced atomically, devices and FIFOs written in
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
check "hex log fixture differs" bash -c "! cmp -s '$LOG' '$TMP/hex.out'"
expect_fail2 "nccl log hex time" "hex\.out:[0-9]+:[0-9]+: .*'?0x1p5'? is not" "$TPSIM" fit-allreduce "$TMP/hex.out"
if [ -x build/tpsim-probe ] && [ -x build/tpsim-nccl-sweep ]; then
    expect_fail2 "probe hex float" "^tpsim-probe: --nominal-gbps '0x1p10' is not a number" \
        build/tpsim-probe --nominal-gbps 0x1p10
    expect_fail2 "probe +device" "^tpsim-probe: --device '\+0' is not a whole number" build/tpsim-probe --device +0
    expect_fail2 "sweep timeout inf" "^tpsim-nccl-sweep: --timeout 'inf' is not a number" \
        build/tpsim-nccl-sweep --timeout inf
fi

finish
