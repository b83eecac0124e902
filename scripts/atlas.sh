#!/usr/bin/env bash
# scripts/atlas.sh: the what-if atlas (make atlas). Every model x GPU x TP degree x execution
# mode that fits in the GPU's HBM, simulated by `tpsim run`, one CSV row each, and a figure of
# step time and its breakdown (gnuplot).
#   usage: scripts/atlas.sh TPSIM OUTDIR      (writes OUTDIR/atlas.csv, atlas.png, atlas.svg)
# A cell whose weights + KV cache do not fit one rank's HBM is skipped (listed on stderr).
# Each row names its all-reduce calibration file and how it was borrowed when it was measured
# on other hardware (empty: its own or none at TP-1), the kernel calibration that priced its GPU
# ops ("roofline" where the GPU has none: A100) and the engine that priced its host work. H100
# and H200 run on the hypotheses' GPU models (scenarios/atlas-*.yaml say which and why).
# Environment: ATLAS_BATCH (default 1), ATLAS_CTX (default 2048).
set -euo pipefail
tpsim=${1:?usage: scripts/atlas.sh TPSIM OUTDIR}
out=${2:?usage: scripts/atlas.sh TPSIM OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
batch=${ATLAS_BATCH:-1}
ctx=${ATLAS_CTX:-2048}
models="8B:../models/llama-3.1-8b.yaml 70B:../models/llama-3.1-70b.yaml
        405B:../models/llama-3.1-405b.yaml Mixtral-8x7B:../models/hf/Mixtral-8x7B-v0.1.json"
gpus="H100:h100 H200:h200 A100:a100"
mkdir -p "$out"
stage=$(mktemp -d "$out/.atlas.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# `tpsim run --format json` objects, each after a line "@@ MODEL GPU" -> one CSV row each (the
# writer puts one key per line); one awk for them all, as a process costs milliseconds
rows() {
    awk '
        /^@@ / { if (n++) row(); split("", v); sect = ""; model = $2; gpu = $3; next }
        /"step_ms": \{/ { sect = "step"; next }
        /"breakdown_ms": \{/ { sect = "bd"; next }
        /^  \}/ { sect = ""; next }
        {
            line = $0; gsub(/[",]/, "", line); split(line, kv, ": ");
            key = kv[1]; gsub(/ /, "", key); v[sect "." key] = kv[2]
        }
        # a float column prints as a float: "0.0", not the JSON writer'"'"'s "0" (which pandas
        # would type as an integer column)
        function f(x) { return x ~ /^-?[0-9]+$/ ? x ".0" : x }
        END { if (n) row() }
        function row() {
            # the all-reduce calibration by file name, and how it was borrowed ("" if not)
            cal = v[".calibration"]; sub(/.*\//, "", cal); if (cal == "null") cal = ""
            bor = v[".calibration_borrowed"]; if (bor == "null") bor = ""
            kc = v[".kernel_calibration"]; sub(/.*\//, "", kc); if (kc == "null") kc = "roofline"
            printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", model, gpu,
                v[".mode"], v[".tp"], v[".batch"], v[".ctx"], f(v[".weights_gb_per_rank"]),
                f(v[".kv_cache_gb_per_rank"]), v[".ops_per_step"], v[".allreduces_per_step"],
                f(v["step.mean"]), f(v["bd.compute"]), f(v["bd.allreduce"]), f(v["bd.wait_peers"]),
                f(v["bd.gpu_idle"]), f(v["bd.host"]), cal, bor, kc, v[".serving_engine"]
        }' "$1"
}

csv="$stage/atlas.csv"
# sweep's column names where a column is sweep's (hardware, step_ms_mean, ...); model is the
# short name the figure labels its bars with
echo "model,hardware,mode,tp,batch,ctx,weights_gb_per_rank,kv_cache_gb_per_rank,ops_per_step,allreduces_per_step,step_ms_mean,compute_ms,allreduce_ms,wait_peers_ms,gpu_idle_ms,host_ms,calibration,calibration_borrowed,kernel_calibration,serving_engine" > "$csv"
skipped=0
: >"$stage/runs"
for g in $gpus; do
    gname=${g%%:*} scn="$here/../scenarios/atlas-${g#*:}.yaml"
    for m in $models; do
        mname=${m%%:*} mpath=${m#*:}
        for tp in 1 2 4 8; do
            for mode in eager graphs; do
                # exit status 1: it ran, but does not fit in HBM (anything else is an error)
                rc=0
                json=$("$tpsim" run "$scn" --set "model=$mpath" --tp "$tp" --batch "$batch" \
                       --ctx "$ctx" --mode "$mode" --format json 2>"$stage/err") || rc=$?
                if [ "$rc" -gt 1 ]; then cat "$stage/err" >&2; exit "$rc"; fi
                if [ "$rc" -eq 1 ] || [[ $json != *'"fits_in_hbm": true'* ]]; then
                    [ "$mode" = eager ] && echo "atlas: skip $mname on $gname TP-$tp: does not fit in HBM" >&2 \
                        && skipped=$((skipped + 1))
                    continue
                fi
                printf '@@ %s %s\n%s\n' "$mname" "$gname" "$json" >>"$stage/runs"
            done
        done
    done
done
rows "$stage/runs" >>"$csv"

# the figure: one panel per GPU, a stacked bar per (model, TP, mode) cell
for g in $gpus; do
    gname=${g%%:*}
    awk -F, -v gpu="$gname" 'NR > 1 && $2 == gpu {
        printf "\"%s TP%s %s\" %s %s %s %s %s\n", $1, $4, ($3 == "eager" ? "e" : "g"),
               $12, $13, $14, $15, $11 }' "$csv" > "$stage/$gname.dat"
done
cp "$here/atlas.gp" "$stage/atlas.gp"
(cd "$stage" && gnuplot atlas.gp)
mv "$stage/atlas.png" "$stage/atlas.svg" "$out/"
mv "$csv" "$out/atlas.csv"
rows=$(($(wc -l < "$out/atlas.csv") - 1))
echo "atlas: $rows cells (batch $batch, ctx $ctx), $skipped model x GPU x TP skipped (do not fit): $out/atlas.csv $out/atlas.png"
