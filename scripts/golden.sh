#!/usr/bin/env bash
# golden.sh TPSIM DIR: writes into DIR the outputs tests/cli/golden.sh compares byte for byte
# (tests/data/golden/README.md): run, sweep, validate and plan on the bundled data, text, JSON
# and CSV, small enough to keep in the repository. `make golden` writes tests/data/golden/ with
# it, for a change whose point is to change these outputs (the commit says which and why).
set -euo pipefail
T=$1 D=$2
mkdir -p "$D"
S=scenarios/eager-host-dispatch.yaml
J=(--jobs 1 --quiet)
# validate lists every file it read with the fingerprint of its bytes, and run's JSON echoes
# those its scenario's validated: block records: masked here, so an edit of a scenario or model
# file elsewhere is not a change of these answers (tests/cli/fingerprint.sh and domain.sh check
# the fingerprints themselves)
fpmask() { sed -E 's/(^|[^0-9a-f])[0-9a-f]{16}([^0-9a-f]|$)/\1<fingerprint>\2/g'; }
"$T" run $S --tp 4 >"$D/run-tp4.txt"
"$T" run $S --tp 8 --batch 8 --mode graphs --format json | fpmask >"$D/run-tp8-graphs.json"
"$T" run $S --tp 4 --set host.launch.dist=lognormal --set host.launch.cv=0.3 --steps 20 \
    --format json | fpmask >"$D/run-tp4-jitter.json"
"$T" run scenarios/eager-broadcast.yaml --tp 8 >"$D/run-broadcast-tp8.txt"
"$T" sweep $S --tp 2,4,8 --batch 1,8 --mode eager,graphs "${J[@]}" -o "$D/sweep.csv"
"$T" sweep $S --tp 2,4 --batch 1,16 --format json "${J[@]}" -o "$D/sweep.json"
"$T" validate scenarios/paper-additive.yaml | fpmask >"$D/validate-paper-additive.txt"
"$T" validate $S --transfer 2:4 "${J[@]}" | fpmask >"$D/validate-transfer-2-4.txt"
"$T" validate $S --transfer 2:4 "${J[@]}" --format json | fpmask >"$D/validate-transfer-2-4.json"
"$T" plan $S --gpus 8 --tpot-ms 30 --batch-max 32 --top 5 "${J[@]}" >"$D/plan.txt"
"$T" plan $S --gpus 8 --tpot-ms 40 --tp 4,8 --batch-max 6 --top 3 --format json "${J[@]}" \
    >"$D/plan.json"
"$T" plan $S --gpus 8 --tpot-ms 40 --tp 4,8 --batch-max 8 --no-intervals --format csv "${J[@]}" \
    >"$D/plan.csv"
# the cross-source agreement docs/calibrate.md reports: the AIConfigurator-fitted H100 calibration
# pricing Vidur's 70B and 7B profiles, per class and TP degree
"$T" fit-kernels --test tests/data/vidur-h100/llama-2-70b-mlp.csv \
    --calib models/kernels/h100-sxm-aic.yaml >"$D/fitk-test-aic-70b.txt"
"$T" fit-kernels --test tests/data/vidur-h100/llama-2-7b-mlp.csv \
    --calib models/kernels/h100-sxm-aic.yaml >"$D/fitk-test-aic-7b.txt"
