#!/usr/bin/env bash
# models.sh: models and GPUs a user serves, through the command line. A Hugging Face
# config.json as `model:` (the shipped Llama-3.1-70B one gives the bundled model's output to
# the byte), precision.* through --set, refusals as one line, and the atlas.
source tests/cli/lib.sh
SHARED=../shared/data/hf-configs
S=scenarios/eager-host-dispatch.yaml

# the repository's copy is the shipped file, unmodified (checked where ../shared is beside the
# clone, as in CI; the runs below use only the repository's copies)
if [ -d "$SHARED" ]; then
    check "models/hf/Llama-3.1-70B.json is the shipped config.json" \
        cmp -s models/hf/Llama-3.1-70B.json "$SHARED/aiconfigurator__meta-llama--Meta-Llama-3.1-70B_config.json"
    check "models/hf/Mixtral-8x7B-v0.1.json is the shipped config.json" \
        cmp -s models/hf/Mixtral-8x7B-v0.1.json "$SHARED/aiconfigurator__mistralai--Mixtral-8x7B-v0.1_config.json"
    check "models/hf/DeepSeek-V3.json is the shipped config.json" \
        cmp -s models/hf/DeepSeek-V3.json "$SHARED/aiconfigurator__deepseek-ai--DeepSeek-V3_config.json"
    check "models/hf/Qwen3-32B.json is the shipped config.json" \
        cmp -s models/hf/Qwen3-32B.json "$SHARED/aiconfigurator__Qwen--Qwen3-32B_config.json"
else
    echo "models.sh: no $SHARED beside the clone: the copies' provenance check skipped"
fi
# the shipped files under their shipped names (the name is taken from the file name)
cp models/hf/Llama-3.1-70B.json "$TMP/aiconfigurator__meta-llama--Meta-Llama-3.1-70B_config.json"

# identical run output, text and JSON, eager and graphs, TP-1..8 (TP-1 on B200: 141 GB fits;
# the scenario's H100 kernel calibration borrowed there)
# The domain's marks aside: the config.json is a file the validation did not read (its
# validated: block fingerprints the model file it read), which the marks say (below).
nodomain() { # VAR FILE: VAR = FILE's lines without run's domain lines (text) or "domain" object
    # (JSON), each line ended by a newline (in the shell: the tests ran an awk per output)
    local -a _nd_lines
    local _nd_l _nd_t _nd_out= _nd_skip=0 _nd_obj=0 _nd_ind=
    mapfile -t _nd_lines <"$2"
    for _nd_l in "${_nd_lines[@]}"; do
        if [[ $_nd_l == "domain     "* ]]; then _nd_skip=1; continue; fi
        if [ $_nd_skip = 1 ] && [[ $_nd_l == "           ("* ]]; then _nd_skip=0; continue; fi
        _nd_skip=0
        _nd_t=${_nd_l#"${_nd_l%%[! ]*}"} # the line less its leading blanks
        if [[ $_nd_t == '"domain": {'* ]]; then
            _nd_ind=${_nd_l%"$_nd_t"} _nd_obj=1
            continue
        fi
        if [ $_nd_obj = 1 ]; then
            [[ $_nd_l == "$_nd_ind}," || $_nd_l == "$_nd_ind}" ]] && _nd_obj=0
            continue
        fi
        _nd_out+=$_nd_l$'\n'
    done
    printf -v "$1" %s "$_nd_out"
}
for args in "--tp 1 --set hardware=../models/hw/b200.yaml --allow-foreign-calib" "--tp 2 --batch 4" "--tp 4 --mode graphs" "--tp 8 --batch 8 --ctx 4096"; do
    for fmt in text json; do
        yaml= json=
        expect_ok "yaml $args $fmt" "$TPSIM" run $S $args --format $fmt && nodomain yaml "$TMP/out"
        expect_ok "json $args $fmt" "$TPSIM" run $S $args --format $fmt \
            --set model=../models/hf/Llama-3.1-70B.json && nodomain json "$TMP/out"
        check "config.json gives the bundled model's output ($args, $fmt)" test "$yaml" = "$json"
        check "the output is whole but for the domain ($args, $fmt)" test "${json/kernel/}" != "$json"
    done
done
check "the config.json is marked: not the model file validated" has "$TMP/out" \
    '"read but never validated: ../models/hf/Llama-3.1-70B.json"'
# the shared copy's only difference is its name (taken from the file name)
expect_ok "shared config.json" "$TPSIM" run $S --tp 4 --format json \
    --set "model=$TMP/aiconfigurator__meta-llama--Meta-Llama-3.1-70B_config.json"
# (and its domain: another model name is another model to the validated domain, which marks it)
sed 's/"model": "aiconfigurator__meta-llama--Meta-Llama-3.1-70B"/"model": "Llama-3.1-70B"/' "$TMP/out" >"$TMP/shared"
expect_ok "yaml tp4" "$TPSIM" run $S --tp 4 --format json
cp "$TMP/out" "$TMP/pyq-out$((PYQ_N + 1))" &&
pyq "shared config.json: same numbers as the bundled model" "$TMP/shared" "$TMP/pyq-out$((PYQ_N + 1))" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a.pop("domain")["marks"] == ["model aiconfigurator__meta-llama--Meta-Llama-3.1-70B was never validated (only Llama-3.1-70B)"]
assert b.pop("domain")["inside"] is True
assert a == b
PY

ops() { # VAR: VAR = $TMP/out's "ops_per_step" (sed -n 's/^  "ops_per_step": \([0-9]*\),$/\1/p')
    local _op_l _op_v=
    while IFS= read -r _op_l; do
        [[ $_op_l =~ ^\ \ \"ops_per_step\":\ ([0-9]*),$ ]] && _op_v+=${_op_v:+$'\n'}${BASH_REMATCH[1]}
    done <"$TMP/out"
    printf -v "$1" %s "$_op_v"
}
# a bare model name finds models/hf/NAME.json when there is no models/NAME.yaml
expect_ok "model by name" "$TPSIM" run $S --tp 2 --set model=Mixtral-8x7B-v0.1 --format json
check "model by name: Mixtral" has "$TMP/out" '"model": "Mixtral-8x7B-v0.1"'
expect_fail2 "unknown model name" "model: .*no-such-model" "$TPSIM" run $S --set model=no-such-model

# Mixtral: 32 layers like Llama-3.1-8B, each MoE MLP 4 launches longer than a dense one
# (router topk align w13 silu w2 sum vs gate_up silu down), the rest identical
expect_ok "8b tp2" "$TPSIM" run $S --tp 2 --set model=../models/llama-3.1-8b.yaml --format json
ops ops8b
expect_ok "mixtral tp2" "$TPSIM" run $S --tp 2 --set model=../models/hf/Mixtral-8x7B-v0.1.json --format json
ops n
check "mixtral: 8B's launches + 32*4" test "$n" -eq $((ops8b + 32 * 4))
check "mixtral: 46.7 GB per rank at TP-2" has "$TMP/out" '"weights_gb_per_rank": 46.70'

# precision through --set: FP8 weights on H100 run W8A8 (4 quantisation kernels per layer)
expect_ok "bf16 weights" "$TPSIM" run $S --tp 2 --format json
ops ops70
expect_ok "fp8 weights" "$TPSIM" run $S --tp 2 --set precision.weights=fp8 --format json
ops n
check "fp8: 80*4 more launches" test "$n" -eq $((ops70 + 80 * 4))
check "fp8: weights 80*(427819008+16) + 2101346304 B" has "$TMP/out" '"weights_gb_per_rank": 36.32686'
expect_ok "fp8 kv" "$TPSIM" run $S --tp 2 --set precision.kv_cache=fp8 --format json
check "fp8 kv: half the KV cache" has "$TMP/out" '"kv_cache_gb_per_rank": 0.16777216,'
# on A100 (no FP8 tensor cores) FP8 weights are weight-only: no extra launches
expect_ok "bf16 on A100" "$TPSIM" run scenarios/atlas-a100.yaml --tp 2 --format json
ops opsa100
expect_ok "fp8 on A100" "$TPSIM" run scenarios/atlas-a100.yaml --tp 2 --set precision.weights=fp8 --format json
ops n
check "fp8 on A100: bf16's launches" test "$n" -eq "$opsa100"
expect_ok "int4 on A100" "$TPSIM" run scenarios/atlas-a100.yaml --tp 2 --set precision.weights=int4 --format json
check "int4: 80*220594176 + 2101346304 B" has "$TMP/out" '"weights_gb_per_rank": 19.74888'

# refusals: one line each, status 2
printf '{\n  "architectures": ["GPT2LMHeadModel"],\n  "n_embd": 768\n}\n' >"$TMP/gpt2.json"
expect_fail2 "unsupported architecture" \
    "^tpsim: $TMP/gpt2\.json:2:3: architectures: 'GPT2LMHeadModel' is not supported, expected one of LlamaForCausalLM" \
    "$TPSIM" run $S --set "model=$TMP/gpt2.json"
# DeepSeek-V3 (MLA + 256 experts, FP8 weights): 8 x H200 holds it, 8 x H100 does not (exit 1):
# 85.2 GB of weights a rank + 4.84 GiB reserve > H100's 85.5 GB (it would pass the capacity alone)
expect_ok "DeepSeek-V3 on 8 x H200" "$TPSIM" run scenarios/atlas-h200.yaml --tp 8 --format json \
    --set "model=$PWD/models/hf/DeepSeek-V3.json"
check "DeepSeek-V3 fits on H200" has "$TMP/out" '"fits_in_hbm": true'
"$TPSIM" run scenarios/atlas-h100.yaml --tp 8 --set model=../models/hf/DeepSeek-V3.json >/dev/null 2>"$TMP/err"
check "DeepSeek-V3 on 8 x H100: exit 1, does not fit" test $? -eq 1
check "DeepSeek-V3 on 8 x H100: says so" has "$TMP/err" "does not fit in HBM"
expect_fail2 "bad weights precision" "precision\.weights: .*expected one of: bf16, fp8, int4" \
    "$TPSIM" run $S --set precision.weights=fp4
expect_fail2 "activations are bf16 only" "precision\.activations: .*expected one of: bf16" \
    "$TPSIM" run $S --set precision.activations=fp8
expect_fail2 "int4 KV cache refused" "precision\.kv_cache: .*expected one of: bf16, fp8" \
    "$TPSIM" run $S --set precision.kv_cache=int4
expect_fail2 "unknown precision key" "unknown key 'weight' in precision" \
    "$TPSIM" run $S --set precision.weight=fp8
expect_fail2 "missing config.json" "cannot open" "$TPSIM" run $S --set "model=$TMP/none.json"
expect_fail2 "mixtral at TP-3" "tp 3 does not shard Mixtral-8x7B-v0.1" \
    "$TPSIM" run $S --tp 3 --set model=../models/hf/Mixtral-8x7B-v0.1.json

# a PCIe-only GPU with its own (assumed) calibration: accepted as the L40S's, not foreign; over
# PCIe vLLM runs NCCL (its custom all-reduce needs NVLink or P2P, and the L40S files have no
# custom block, so `auto` is refused for them until nccl-fit is asked for). No kernel calibration
# measured on L40S exists: H100's is not lent to it (refused), the roofline file runs it and says so
expect_fail2 "L40S under auto: no custom block" "l40s-pcie-tp4.yaml: collective.allreduce is auto, .* no custom one_stage" \
    "$TPSIM" run scenarios/atlas-h100.yaml --tp 4 --set hardware=../models/hw/l40s.yaml \
    --calib models/allreduce/l40s-pcie-tp4.yaml
expect_fail2 "L40S: H100's kernels not lent" "kernel calibration was measured on H100 SXM, the scenario runs on L40S" \
    "$TPSIM" run scenarios/atlas-h100.yaml --tp 4 --set hardware=../models/hw/l40s.yaml \
    --set collective.allreduce=nccl-fit
expect_ok "L40S TP-4" "$TPSIM" run scenarios/atlas-a100.yaml --tp 4 --set hardware=../models/hw/l40s.yaml \
    --set collective.allreduce=nccl-fit --calib models/allreduce/l40s-pcie-tp4.yaml --format json
check "L40S: 70B fits in 4 x 48 GB" has "$TMP/out" '"fits_in_hbm": true'
check "L40S: the roofline, said" has "$TMP/out" '"kernel_calibration": null'
expect_ok "L40S TP-4 text" "$TPSIM" run scenarios/atlas-a100.yaml --tp 4 --set hardware=../models/hw/l40s.yaml \
    --set collective.allreduce=nccl-fit
check "L40S text: the roofline, said" match "$TMP/out" '^kernels    none: every GPU op from the roofline of L40S'

# the atlas: 15 of the 4 x 3 x 4 model/GPU/TP cells do not fit, by BF16 weights alone, in the
# capacity the GPU reports less vLLM's 4.84 GiB reserve (docs/sources.md#gpu-memory: H100
# 80.3 GB, A100 80.7 GB, H200 145.6 GB): on H100 and A100 70B (141 GB) and Mixtral (93 GB) at
# TP-1 and 405B (810 GB, 101 GB a rank even at TP-8) at every TP = 6 each; on H200 405B at
# TP-1, 2, 4 = 3 (70B at TP-1, 141.1 GB + 0.7 GB of KV cache, fits its 145.6). So
# 2 modes x (48 - 15) = 66 rows.
expect_ok "atlas" scripts/atlas.sh "$TPSIM" "$TMP/atlas"
line_count n "$TMP/atlas/atlas.csv"
check "atlas: 66 rows + header" test "$n" -eq 67
count_matches n "$TMP/atlas/atlas.csv" '^405B,H100'
check "atlas: no 405B on H100" test "$n" -eq 0
count_matches n "$TMP/atlas/atlas.csv" '^405B,H200,[a-z]*,8,'
check "atlas: 405B on H200 at TP-8 only" test "$n" -eq 2
count_matches n "$TMP/atlas/atlas.csv" '^70B,H200,[a-z]*,1,'
check "atlas: 70B on one H200 (141.1 + 0.7 GB within 145.6)" test "$n" -eq 2
check "atlas: a figure" test -s "$TMP/atlas/atlas.png"
# --- compute capability is the hardware file's key (vLLM's size limits depend on it) --------
grep -v '^compute_capability' models/hw/h100-sxm.yaml > "$TMP/h100-nocc.yaml"
expect_fail2 "auto without compute_capability" \
    "collective.allreduce is auto, whose custom all-reduce size limit depends on the GPU, but its hardware file has no compute_capability; expected e.g. compute_capability: 9.0$" \
    "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 2 --set hardware="$TMP/h100-nocc.yaml" \
    --set collective.allreduce=auto
expect_ok "nccl-fit needs no compute_capability" "$TPSIM" run scenarios/eager-host-dispatch.yaml \
    --tp 2 --set hardware="$TMP/h100-nocc.yaml" --set collective.allreduce=nccl-fit
sed 's/^compute_capability: 9.0/compute_capability: 0.5/' models/hw/h100-sxm.yaml > "$TMP/h100-badcc.yaml"
expect_fail2 "compute_capability out of range" "h100-badcc.yaml:17:21: .*" \
    "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp 2 --set hardware="$TMP/h100-badcc.yaml"

finish
