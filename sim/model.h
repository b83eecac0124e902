/* model.h: a transformer's architecture as the decode step sees it: a tpsim model file
 * (models/NAME.yaml) or a Hugging Face config.json (models/hf/NAME.json, read by hfconfig).
 *
 * Contract: model_load reads and validates one model file into a caller-owned value (no
 * pointers inside); a path ending in ".json" is a Hugging Face config.json. Zero in the
 * optional fields means the plain dense Llama layout (no biases, untied embeddings, full
 * attention, no experts). model_check_tp says whether a TP degree can shard it as vLLM does:
 * heads, the MLP (or each expert's) intermediate and the padded vocab divide by k; KV heads
 * divide by k, or are replicated when k > kv_heads (then k must be a multiple of kv_heads).
 */
#ifndef TPSIM_MODEL_H
#define TPSIM_MODEL_H

#include "decl.h"
#include "err.h"

/* vLLM pads the vocabulary of its embedding and lm_head to a multiple of this
 * (vllm/model_executor/layers/vocab_parallel_embedding.py, DEFAULT_VOCAB_PADDING_SIZE). */
#define MODEL_VOCAB_PAD 64

typedef struct model_arch {
    char name[64];
    long layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, dtype_bytes;
    int qkv_bias;          /* bias on the q, k, v projections (Qwen2) */
    /* bias on o_proj / on the MLP projections (Llama attention_bias, mlp_bias) */
    int o_bias, mlp_bias;
    int tied_embeddings;   /* lm_head reuses the embedding table: stored once */
    long sliding_window;   /* attention reads at most this many positions; 0: all */
    long max_positions;    /* the longest context it serves: vLLM's max_model_len derived from a
                              config.json (max_position_embeddings, times a rope_scaling factor);
                              0: not stated (a tpsim model file) */
    char max_positions_at[192]; /* "file:line:col" of max_position_embeddings, for errors */
    long window_period;    /* with sliding_window: layer l (0-based) reads the whole context when
                              (l + 1) % window_period == 0 (Gemma-2: 2); 0: every layer slides */
    int qk_norm;           /* per-head RMSNorm of q and of k after qkv_proj (Qwen3, Gemma-3) */
    int sandwich_norms;    /* norms after attention and after the MLP too: 4 a layer (Gemma) */
    int gelu_tanh;         /* the gated MLP's activation is GELU, tanh approximation (Gemma) */
    int embed_scale;       /* the embedding's output is multiplied by sqrt(hidden) (Gemma) */
    int attn_softcap;      /* attention scores soft-capped, cap * tanh(s / cap), in the kernel */
    int logit_softcap;     /* logits soft-capped by three elementwise kernels (Gemma-2) */
    int weights_quant;     /* prec_kind of the published weights (quantization_config), 0: dtype */
    /* mixture of experts; experts == 0: every layer is a dense MLP */
    long experts, experts_per_tok, moe_intermediate;
    long shared_intermediate; /* shared expert(s) of every MoE layer, 0: none */
    int shared_gate;          /* the shared expert's output scaled by sigmoid(x W_g), Qwen2-MoE */
    long dense_layers;        /* the first N layers keep a dense MLP (first_k_dense_replace) */
    int routed_scale;         /* the routed experts' sum is scaled (routed_scaling_factor != 1) */
    /* multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank == 0: none. q_lora_rank 0:
     * queries projected directly (V2-Lite) */
    long q_lora_rank, kv_lora_rank, qk_nope_dim, qk_rope_dim, v_head_dim;
    decl_list assumed;     /* a model file's assumed: numbers (decl.h); none in a config.json */
    char note[384];        /* "" or one line "file:line:col: key: ignored: why" for a config.json
                              key accepted because it cannot change the step; the command
                              shows it on stderr */
} model_arch;

int model_load(const char *path, model_arch *out, tp_err *err);
int model_check_tp(const model_arch *m, long tp, tp_err *err);
/* Refuses a context longer than max_positions, as vLLM refuses a max_model_len beyond the one
 * it derives from config.json: "file:line:col: max_position_embeddings: ...". */
int model_check_ctx(const model_arch *m, long ctx, tp_err *err);
/* KV heads each rank holds at TP k: max(1, kv_heads / k) (replicated when k > kv_heads);
 * 1 under MLA, whose latent cache every rank holds whole ("during decode it becomes MQA"). */
long model_kv_heads_per_rank(const model_arch *m, long tp);
/* The vocabulary as vLLM allocates it: rounded up to MODEL_VOCAB_PAD. */
long model_vocab_padded(const model_arch *m);
/* The checkpoint's parameters as transformers counts them (every tensor: embedding, lm_head
 * unless tied, each layer's projections, biases, norms, router and experts, the final norm;
 * the vocabulary unpadded), and those one token uses (routed experts: experts_per_tok of
 * them; everything else whole). */
void model_params(const model_arch *m, double *total, double *active);
/* Whether layer l's attention reads only the last sliding_window positions. */
int model_layer_slides(const model_arch *m, long layer);

#endif
