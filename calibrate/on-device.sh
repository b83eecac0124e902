#!/usr/bin/env bash
# calibrate/on-device.sh: the whole GPU probe on one GPU, bounded to 5 minutes.
#   calibrate/on-device.sh [OUT.yaml]     (default models/hw/h200-measured.yaml)
# Builds the calibration tools (make calibrate), then runs build/tpsim-probe on device 0:
# launch cost, kernel fixed cost, CUDA-graph launch and per-node cost, sync costs, HBM read
# bandwidth, and cuBLAS bf16 GEMV bandwidth on Llama-3.1-70B's per-rank shapes at TP 1/2/4/8 x
# batch 1..16 (calibrate/README.md). The hardware file is written whole or not at all. Exit
# status: the probe's (2 with one line on stderr when there is no GPU or no CUDA toolkit).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${1:-models/hw/h200-measured.yaml}
if ! make -s calibrate >/tmp/tpsim-on-device-make.$$ 2>&1; then
    echo "on-device.sh: make calibrate failed: $(tail -c 300 /tmp/tpsim-on-device-make.$$ | tr '\n' ' ')" >&2
    rm -f /tmp/tpsim-on-device-make.$$
    exit 2
fi
if [ ! -x build/tpsim-probe ]; then
    echo "on-device.sh: build/tpsim-probe was not built: $(tr '\n' ' ' </tmp/tpsim-on-device-make.$$ | head -c 300)" >&2
    rm -f /tmp/tpsim-on-device-make.$$
    exit 2
fi
rm -f /tmp/tpsim-on-device-make.$$
start=$(date +%s)
timeout 300 build/tpsim-probe --timeout 60 -o "$OUT"
rc=$?
[ "$rc" -eq 124 ] && { echo "on-device.sh: the probe ran past 5 minutes" >&2; exit 2; }
[ "$rc" -eq 0 ] && echo "on-device.sh: wrote $OUT in $(( $(date +%s) - start )) s" >&2
exit "$rc"
