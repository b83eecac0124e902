#!/usr/bin/env bash
# hfarch.sh: the Hugging Face architectures of issue 18 through the command line. Each shipped
# config runs by name; against a tpsim YAML twin with the same shapes (the Llama layout), its
# output differs only by the launches the architecture adds, and its weights per rank equal the
# figures derived by hand in tests/test_hfarch.c. Refusals are one line at file:line:col.
source tests/cli/lib.sh
S=scenarios/eager-host-dispatch.yaml

num() { sed -n "s/^  \"$1\": \\([0-9.]*\\),\$/\\1/p" "$TMP/out"; }

# twin NAME LAYERS HIDDEN HEADS KV HEAD_DIM INTER VOCAB TIED: a tpsim model file
twin() {
    cat >"$TMP/$1.yaml" <<EOF
name: $1
layers: $2
hidden: $3
heads: $4
kv_heads: $5
head_dim: $6
intermediate: $7
vocab: $8
dtype_bytes: 2
tie_embeddings: $9
source: "test twin of a models/hf config.json (tests/cli/hfarch.sh)"
EOF
}

# Qwen3-8B: q_norm and k_norm in each of 36 layers, nothing else different (TP-2: qkv
# 4096 x (16+8)*128 ...: 8190427136 B a rank, tests/test_hfarch.c)
twin q3twin 36 4096 32 8 128 12288 151936 false
expect_ok "Qwen3-8B by name" "$TPSIM" run $S --tp 2 --set model=Qwen3-8B --format json
check "Qwen3-8B: its name" has "$TMP/out" '"model": "Qwen3-8B"'
check "Qwen3-8B: 8190427136 B a rank" test "$(num weights_gb_per_rank)" = 8.190427136
q3ops=$(num ops_per_step)
expect_ok "Qwen3-8B twin" "$TPSIM" run $S --tp 2 --set "model=$TMP/q3twin.yaml" --format json
check "Qwen3-8B: the twin's weights" test "$(num weights_gb_per_rank)" = 8.190427136
check "Qwen3-8B: twin's launches + 36*2 (q_norm, k_norm)" \
    test "$q3ops" -eq $(($(num ops_per_step) + 72))

# Qwen3-30B-A3B: 30544494592 B a rank at TP-2; a layer is the MoE layer plus q/k norm
expect_ok "Qwen3-30B-A3B by name" "$TPSIM" run $S --tp 2 --set model=Qwen3-30B-A3B \
    --format json
check "Qwen3-30B-A3B: 30544494592 B a rank" test "$(num weights_gb_per_rank)" = 30.54449459

# gemma-2-9b-it: tied, head_dim 256; 42 layers each 2 norms more (post-attention without the
# residual, post-feedforward), the embedding scale and 3 soft-cap kernels; the same weights
# (9241100288 B a rank). ctx 2048 is inside the 4096 window, so the KV cache read is the twin's.
twin g2twin 42 3584 16 8 256 14336 256000 true
expect_ok "gemma-2-9b-it" "$TPSIM" run $S --tp 2 --set model=gemma-2-9b-it --format json
check "gemma-2-9b-it: 9241100288 B a rank" test "$(num weights_gb_per_rank)" = 9.241100288
g2ops=$(num ops_per_step)
g2kv=$(num kv_cache_gb_per_rank)
expect_ok "gemma-2-9b-it twin" "$TPSIM" run $S --tp 2 --set "model=$TMP/g2twin.yaml" --format json
check "gemma-2-9b-it: twin's launches + 42*2 + 1 + 3" \
    test "$g2ops" -eq $(($(num ops_per_step) + 88))
check "gemma-2-9b-it: twin's KV cache at ctx 2048" test "$g2kv" = "$(num kv_cache_gb_per_rank)"
# at ctx 8192 half the layers read 4096 positions: 21 * 2 * 4 heads * 256 * 2 B * (4096 + 8192)
expect_ok "gemma-2-9b-it ctx 8192" "$TPSIM" run $S --tp 2 --ctx 8192 --set model=gemma-2-9b-it \
    --format json
check "gemma-2-9b-it: sliding layers read 4096" test "$(num kv_cache_gb_per_rank)" = 1.056964608

# phi-4: the twin's output to the byte but for the name (its window 16384 > ctx 2048)
twin phi4twin 40 5120 40 10 128 17920 100352 false
expect_ok "phi-4" "$TPSIM" run $S --tp 2 --set model=phi-4 --format json
check "phi-4: 14659092480 B a rank" test "$(num weights_gb_per_rank)" = 14.65909248
sed 's|microsoft/phi-4|phi4twin|g' "$TMP/out" >"$TMP/phi4"   # the name, and in the domain's mark
expect_ok "phi-4 twin" "$TPSIM" run $S --tp 2 --set "model=$TMP/phi4twin.yaml" --format json
check "phi-4: the twin's output" cmp -s "$TMP/phi4" "$TMP/out"

# both engines: the event engine (a trace forces it) gives the max-plus engine's step
mean() { sed -n 's/^    "mean": \([0-9.]*\),$/\1/p' "$TMP/out" | head -1; }
expect_ok "gemma maxplus" "$TPSIM" run $S --tp 4 --mode graphs --set model=gemma-2-9b-it \
    --format json
check "gemma: max-plus engine" has "$TMP/out" '"name": "maxplus"'
mp=$(mean)
expect_ok "gemma event engine" "$TPSIM" run $S --tp 4 --mode graphs --set model=gemma-2-9b-it \
    --format json --trace "$TMP/g2.json"
check "gemma: event engine with a trace" has "$TMP/out" '"name": "events"'
check "gemma: both engines, one step time" test -n "$mp" -a "$mp" = "$(mean)"
check "gemma: the trace names the soft-cap" grep -q '"logits_softcap"' "$TMP/g2.json"

# --model: a file from the current folder (a --set model= path is the scenario folder's), or
# a name; the same run as --set model=, and it wins over a --set model=
expect_ok "--set model=" "$TPSIM" run $S --tp 2 --set model=../models/hf/Qwen3-8B.json --format json
cp "$TMP/out" "$TMP/setmodel"
expect_ok "--model FILE" "$TPSIM" run $S --tp 2 --model models/hf/Qwen3-8B.json --format json
check "--model FILE: --set model='s output" cmp -s "$TMP/setmodel" "$TMP/out"
expect_ok "--model NAME over --set" "$TPSIM" run $S --tp 2 --set model=phi-4 --model Qwen3-8B \
    --format json
check "--model NAME: --set model='s output" cmp -s "$TMP/setmodel" "$TMP/out"
(cd "$TMP" && cp "$OLDPWD/models/hf/Qwen3-8B.json" q3.json &&
    "$OLDPWD/$TPSIM" run "$OLDPWD/$S" --tp 2 --model q3.json --format json >"$TMP/out2")
check "--model q3.json in another folder" has "$TMP/out2" '"model": "q3"'
expect_fail2 "--model twice" "^tpsim: --model phi-4: a second model, expected one$" \
    "$TPSIM" run $S --model Qwen3-8B --model phi-4
expect_fail2 "--model missing file" "^tpsim: --model: .*/models/hf/nope\.json: cannot open" \
    "$TPSIM" run $S --model models/hf/nope.json
expect_fail2 "--model unknown name" "^tpsim: --model: 'nope' not found" "$TPSIM" run $S --model nope

# Configs as published but for what a user adds (tests/data/hf/README.md). A key with a
# leading '_' (transformers' own setting, as Gemma-2's _attn_implementation) is accepted with
# one note on stderr naming it at its line and column; the run is the published config's.
G2=tests/data/hf/gemma-2-9b-it-attn-impl.json
expect_ok "Gemma-2 with _attn_implementation" "$TPSIM" run $S --tp 2 --model $G2 --format json
check "_attn_implementation: one note line" test "$(wc -l <"$TMP/err")" -eq 1
check "_attn_implementation: the note names it" \
    grep -q "^tpsim: note: .*gemma-2-9b-it-attn-impl\.json:2:3: _attn_implementation: ignored" \
    "$TMP/err"
sed 's|gemma-2-9b-it-attn-impl|gemma-2-9b-it|g' "$TMP/out" >"$TMP/g2impl"
expect_ok "gemma-2-9b-it as published" "$TPSIM" run $S --tp 2 --model gemma-2-9b-it --format json
check "_attn_implementation: the same run" cmp -s "$TMP/g2impl" "$TMP/out"
check "gemma-2-9b-it as published: no note" test ! -s "$TMP/err"

# Qwen2.5-72B-Instruct with its model card's yarn rope_scaling (factor 4) but without
# original_max_position_embeddings: transformers' default, max_position_embeddings (32768),
# is yarn's base, so 4 x 32768 = 131072 positions serve and one more is refused. Its
# parameters are the checkpoint's 72,706,203,648 (tests/data/hf/README.md).
Q72=tests/data/hf/Qwen2.5-72B-Instruct-yarn.json
expect_ok "Qwen2.5-72B yarn, ctx 131072" "$TPSIM" run $S --tp 8 --ctx 131072 --model $Q72 \
    --format json
check "Qwen2.5-72B: 72706203648 parameters" has "$TMP/out" '"params_total": 72706203648,'
check "Qwen2.5-72B: dense, all active" has "$TMP/out" '"params_active": 72706203648,'
expect_fail2 "Qwen2.5-72B yarn, ctx 131073" \
    "Qwen2.5-72B-Instruct-yarn\.json:12:3: max_position_embeddings: .* at most 131072 positions" \
    "$TPSIM" run $S --tp 8 --ctx 131073 --model $Q72

# Qwen3-235B-A22B: total and active parameters, by hand. Per layer: attention
# H(64+2*4)128 + 64*128*H + 2*128 (q/k norm), 2 norms of H, router H*128, experts 3*H*1536
# each (128 of them; 8 a token); plus embedding and lm_head V*H each and the final norm H.
H=4096 V=151936
attn=$((H * (64 + 8) * 128 + 64 * 128 * H + 256)) exp=$((3 * H * 1536))
tot=$((94 * (attn + 2 * H + H * 128 + 128 * exp) + 2 * V * H + H))
act=$((94 * (attn + 2 * H + H * 128 + 8 * exp) + 2 * V * H + H))
expect_ok "Qwen3-235B-A22B" "$TPSIM" run $S --tp 8 --model tests/data/hf/Qwen3-235B-A22B.json \
    --format json
check "Qwen3-235B-A22B: $tot parameters" has "$TMP/out" "\"params_total\": $tot,"
check "Qwen3-235B-A22B: $act active" has "$TMP/out" "\"params_active\": $act,"
expect_ok "Qwen3-235B-A22B text" "$TPSIM" run $S --tp 8 --model tests/data/hf/Qwen3-235B-A22B.json
check "Qwen3-235B-A22B text: total and active" grep -qx \
    "model      235.09 B parameters, 22.19 B active per token (8 of 128 experts a token)" \
    "$TMP/out"

# refusals: one line each, at the key, exit 2
sed 's/"model_type": "qwen3",/"model_type": "qwen4",/' models/hf/Qwen3-8B.json >"$TMP/q4.json"
expect_fail2 "unknown model_type" \
    "^tpsim: $TMP/q4\.json:16:3: model_type: 'qwen4' is not known, expected one of llama, .*, \
qwen3, qwen3_moe, gemma2, gemma3_text, phi3$" \
    "$TPSIM" run $S --set "model=$TMP/q4.json"
sed 's/"rope_theta": 250000,/"partial_rotary_factor": 0.75,/' models/hf/phi-4.json >"$TMP/phi.json"
expect_fail2 "unmodelled key" \
    "^tpsim: $TMP/phi\.json:26:3: partial_rotary_factor: not modelled for Phi3ForCausalLM" \
    "$TPSIM" run $S --set "model=$TMP/phi.json"
sed 's/"use_sliding_window": false,/"use_sliding_window": true,/' models/hf/Qwen3-30B-A3B.json \
    >"$TMP/q3w.json"
expect_fail2 "Qwen3 sliding layers" "q3w\.json:36:3: use_sliding_window: sliding layers" \
    "$TPSIM" run $S --set "model=$TMP/q3w.json"
sed 's/"hidden_act": "gelu_pytorch_tanh",/"hidden_act": "silu",/' models/hf/gemma-2-9b-it.json \
    >"$TMP/g2s.json"
expect_fail2 "Gemma-2 with SiLU" \
    "g2s\.json:13:3: hidden_act: Gemma2ForCausalLM runs the MLP with gelu_pytorch_tanh" \
    "$TPSIM" run $S --set "model=$TMP/g2s.json"
printf '{\n  "architectures": ["Gemma3ForConditionalGeneration"],\n  "model_type": "gemma3"\n}\n' \
    >"$TMP/g3.json"
expect_fail2 "Gemma-3 multimodal refused by name" \
    "g3\.json:2:3: architectures: 'Gemma3ForConditionalGeneration' is not supported, expected \
one of .*Gemma2ForCausalLM, Gemma3ForCausalLM, Phi3ForCausalLM$" \
    "$TPSIM" run $S --set "model=$TMP/g3.json"
expect_fail2 "Qwen3-30B-A3B at TP-3" "tp 3 does not shard Qwen3-30B-A3B" \
    "$TPSIM" run $S --tp 3 --set model=Qwen3-30B-A3B
# a context beyond what vLLM serves the model at (gemma-2-9b-it's max_position_embeddings
# 8192, line 18 of its config.json, no rope_scaling) is refused at that key, as vLLM refuses
# such a max_model_len; 8192 itself runs. sweep refuses it before any cell or output file.
expect_ok "gemma-2-9b-it at ctx 8192" "$TPSIM" run $S --tp 2 --ctx 8192 --set model=gemma-2-9b-it
expect_fail2 "gemma-2-9b-it at ctx 8193" \
    "^tpsim: .*models/hf/gemma-2-9b-it\.json:18:3: max_position_embeddings: gemma-2-9b-it serves \
at most 8192 positions, but ctx is 8193; expected a ctx of at most 8192$" \
    "$TPSIM" run $S --tp 2 --ctx 8193 --set model=gemma-2-9b-it
expect_fail2 "sweep: gemma-2-9b-it at ctx 16384" "gemma-2-9b-it\.json:18:3: .* ctx is 16384;" \
    "$TPSIM" sweep $S --tp 2 --ctx 2048,16384 --set model=gemma-2-9b-it -o "$TMP/sweep.csv"
check "sweep: no output file" test ! -e "$TMP/sweep.csv"

finish
