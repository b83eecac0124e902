#!/usr/bin/env bash
# names.sh: one GPU name is taken everywhere a GPU is named (the hardware file's id or a
# prefix of it, its name:, an alias such as nvidia-smi's), and a misspelled flag or file gets
# the closest existing name as a hint, by edit distance on the name alone.
source tests/cli/lib.sh
S=scenarios/eager-host-dispatch.yaml
# --set hardware=: each of H100's names runs the scenario on models/hw/h100-sxm.yaml
expect_ok "hardware by file" "$TPSIM" run $S --tp 2 --steps 1 --set hardware=h100-sxm --format json
cp "$TMP/out" "$TMP/want"
for h in h100 "H100 SXM" "NVIDIA H100 80GB HBM3"; do
    expect_ok "--set hardware=$h" "$TPSIM" run $S --tp 2 --steps 1 --set "hardware=$h" --format json
    check "--set hardware=$h: the same run" cmp -s "$TMP/want" "$TMP/out"
done
expect_fail2 "--set hardware=nope" "hardware: 'nope' not found" \
    "$TPSIM" run $S --set hardware=nope
# plan --hardware and trace import --hardware take the same names
for h in h100 h100-sxm "NVIDIA H100 80GB HBM3"; do
    expect_ok "plan --hardware $h" "$TPSIM" plan $S --gpus 8 --tpot-ms 40 --tp 4 --mode eager \
        --batch-max 2 --steps 1 --warmup 0 --quiet --no-intervals --hardware "$h"
    check "plan --hardware $h: H100 SXM" has "$TMP/out" "H100 SXM"
done
for h in b200 "NVIDIA B200" models/hw/b200.yaml; do
    expect_ok "trace import --hardware $h" "$TPSIM" trace import tests/data/trace-synth-rank0.json \
        --hardware "$h" -o "$TMP/cal.yaml"
    check "trace import --hardware $h: B200's HBM" has "$TMP/cal.yaml" "nominal HBM 7700 GB/s"
done
# flags: the closest flag, or the one the typed word extends by a '-' part
expect_fail2 "--batch-size" "^tpsim: run: unknown option '--batch-size'; did you mean --batch\? " \
    "$TPSIM" run $S --batch-size 3
expect_fail2 "--modes" "^tpsim: sweep: unknown option '--modes'; did you mean --mode\? " \
    "$TPSIM" sweep $S --modes eager
expect_fail2 "--stpes" "; did you mean --steps\? " "$TPSIM" run $S --stpes 3
expect_fail2 "no hint when none is close" "^tpsim: run: unknown option '--zzzz' \(see " \
    "$TPSIM" run $S --zzzz
# files: the closest name in the same folder
expect_fail2 "misspelled scenario" \
    "^tpsim: scenarios/eager-host-dispach\.yaml: cannot open: No such file or directory; did you mean scenarios/eager-host-dispatch\.yaml\?$" \
    "$TPSIM" run scenarios/eager-host-dispach.yaml
expect_fail2 "misspelled model file" "Qwen3-8b\.json: cannot open: .*; did you mean .*models/hf/Qwen3-8B\.json\?$" \
    "$TPSIM" run $S --model models/hf/Qwen3-8b.json
expect_fail2 "no hint when none is close" "^tpsim: scenarios/zzzz\.yaml: cannot open: No such file or directory$" \
    "$TPSIM" run scenarios/zzzz.yaml
finish
