/* prog.h: the program of one decode step: the GPU operations each rank launches, in
 * vLLM's eager launch order (docs/sources.md#vllm-eager-step), sharded for TP degree k.
 *
 * Contract: prog_build fills a caller-owned prog (free with prog_free) with one entry per
 * launch: kernels with the HBM bytes and FLOPs they move, host<->device copies with their
 * bytes, and collectives with their message size. Per decoder layer, with k > 1:
 *   input_layernorm qkv_proj rotary_emb reshape_and_cache attention o_proj
 *   ar_copy all_reduce post_attention_layernorm gate_up_proj silu_and_mul down_proj
 *   ar_copy all_reduce                                  (14 launches, 2 all-reduces)
 * (ar_copy is vLLM's custom all-reduce copying its input into the registered buffer in
 * eager mode; absent with allreduce_no_copy. With allreduce_copy_out, each all-reduce is
 * followed by ar_copy_out: PyTorch's symmetric-memory all-reduce, which vLLM uses on B200,
 * copies its result back out of the symmetric buffer; the vLLM B200 trace in tests/data
 * shows Memcpy DtoD, multimem_all_reduce_kernel, Memcpy DtoD for every all-reduce.)
 * (ar_copy is vLLM's custom all-reduce copying its input into the registered buffer.)
 * A mixture-of-experts layer replaces gate_up_proj silu_and_mul down_proj with vLLM's
 * FusedMoE sequence (after the shared expert, when the model has one):
 *   [shared_expert gate_up silu down, shared_expert_gate, sigmoid, mul]
 *   router topk_softmax moe_align_block_size fused_moe_w13 silu_and_mul fused_moe_w2
 *   moe_sum [shared_expert_add]
 * Experts are sharded over TP as vLLM does (each rank holds every expert's 1/k slice of the
 * intermediate dimension; no expert parallelism). The experts' weight bytes a step reads are
 * those of the experts its B tokens touch: ASSUMED uniform routing, each token picking
 * top_k distinct experts of E at random, so the expected number touched is
 * E * (1 - (1 - top_k/E)^B) (exactly top_k at B = 1).
 * A multi-head latent attention layer (DeepSeek-V2/V3, vLLM's MLA decode with absorbed
 * weights) replaces input_layernorm .. o_proj with:
 *   input_layernorm fused_qkv_a_proj q_a_layernorm q_b_proj kv_a_layernorm rotary_emb
 *   mla_q_absorb_bmm reshape_and_cache attention mla_v_up_bmm o_proj
 * (no q LoRA: q_proj and kv_a_proj for the first four); the a-projections are replicated,
 * q_b and o sharded by heads, the latent KV cache (kv_lora_rank + qk_rope_dim per token)
 * held whole by every rank, W_UK/W_UV in the model's dtype (vLLM dequantises them at load).
 * A routed_scale model scales the experts' sum (moe_routed_scale) before the shared add.
 * Qwen3 and Gemma-3 (qk_norm) add q_norm k_norm (RMSNorm of each head of q and of k, vLLM
 * qwen3.py) between qkv_proj and rotary_emb. Gemma-2 (vllm gemma2.py; sandwich_norms) runs
 *   input_layernorm qkv_proj rotary_emb reshape_and_cache attention o_proj [ar_copy
 *   all_reduce] post_attention_layernorm pre_feedforward_layernorm gate_up_proj
 *   gelu_tanh_and_mul down_proj [ar_copy all_reduce] post_feedforward_layernorm
 * (post_attention_layernorm and post_feedforward_layernorm without a residual, the other two
 * fused with the residual add), scales the embedding by sqrt(hidden) (embedding_normalizer,
 * in the graph) and soft-caps the logits: logits_softcap three times (divide, tanh,
 * multiply; vLLM's LogitsProcessor), eager, after the gather and before the sampler. Its
 * attention soft-cap is inside the attention kernel (3 more FLOPs a score). A layer that
 * slides (model_layer_slides) reads at most sliding_window positions, the others the whole
 * context.
 * Precision (prog_opts): weights of the decoder layers' projections and experts in
 * prec_weights (embedding, lm_head and router stay in the model's dtype, as vLLM's fp8 and
 * GPTQ methods leave them); with w8a8 (FP8 weights on a GPU with FP8 tensor cores) each such
 * GEMM is preceded by vLLM's per-token dynamic FP8 quantisation of its input and runs at the
 * FP8 peak (op.fp8); without it, FP8 weights are weight-only (Marlin W8A16) at the BF16 peak.
 * Around the layers: the step's input copies, the embedding (plus its all-reduce when
 * enabled), the final norm, lm_head (plus the logits all-gather when enabled), sampling
 * kernels, and the copy of the sampled tokens back to the host. The model forward, from
 * the embedding to the final norm, is what vLLM captures in a CUDA graph (graphable);
 * input copies, lm_head and its gather, the sampler and the token copy run eagerly around
 * it (vLLM computes logits outside the graph). With piecewise (vLLM's PIECEWISE cudagraph_mode,
 * whose splitting op is the attention custom op), each layer's attention op is launched
 * eagerly between graph pieces: reshape_and_cache and attention (MLA: mla_q_absorb_bmm,
 * reshape_and_cache, attention, mla_v_up_bmm), so a step replays layers + 1 pieces.
 * Costs are filled later
 * by cost_apply; prog only describes the work. Each dense GEMM (the layers' projections, the
 * lm_head) and each grouped-query attention also carries its shape (prog.shape), which a
 * calibration's measured grid prices.
 */
#ifndef TPSIM_PROG_H
#define TPSIM_PROG_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "kgrid.h"
#include "model.h"
#include "prec.h"

typedef enum prog_kind {
    PROG_KERNEL,
    PROG_H2D,
    PROG_D2H,
    PROG_ALLREDUCE,
    PROG_ALLGATHER
} prog_kind;

typedef enum prog_name {
    OPN_INPUT_COPY, OPN_EMBEDDING, OPN_EMBED_ALLREDUCE, OPN_INPUT_LAYERNORM, OPN_QKV_PROJ,
    OPN_ROTARY, OPN_CACHE_WRITE, OPN_ATTENTION, OPN_O_PROJ, OPN_AR_COPY, OPN_ALL_REDUCE,
    OPN_POST_LAYERNORM, OPN_GATE_UP, OPN_SILU_MUL, OPN_DOWN_PROJ, OPN_FINAL_NORM, OPN_LM_HEAD,
    OPN_LOGITS_GATHER, OPN_SAMPLING, OPN_TOKENS_D2H, OPN_FP8_QUANT, OPN_SHARED_GATE_UP,
    OPN_SHARED_SILU_MUL, OPN_SHARED_DOWN, OPN_SHARED_GATE, OPN_SHARED_SIGMOID, OPN_SHARED_MUL,
    OPN_ROUTER, OPN_TOPK, OPN_MOE_ALIGN, OPN_MOE_W13, OPN_MOE_SILU_MUL, OPN_MOE_W2, OPN_MOE_SUM,
    OPN_SHARED_ADD, OPN_MOE_SCALE, OPN_QKV_A_PROJ, OPN_Q_A_NORM, OPN_Q_B_PROJ, OPN_KV_A_NORM,
    OPN_MLA_Q_ABSORB, OPN_MLA_V_UP, OPN_AR_COPY_OUT, OPN_Q_NORM, OPN_K_NORM, OPN_PRE_FF_NORM,
    OPN_POST_FF_NORM, OPN_GELU_MUL, OPN_EMBED_SCALE, OPN_LOGIT_SOFTCAP, OPN_COUNT
} prog_name;

typedef struct prog_op {
    uint8_t kind;   /* prog_kind */
    uint8_t name;   /* prog_name */
    int16_t layer;  /* decoder layer, -1 outside the layers */
    uint8_t graphable; /* part of the model forward, which vLLM captures in a CUDA graph */
    uint8_t fp8;       /* its math runs on the FP8 tensor cores (the FP8 peak applies) */
    double bytes;   /* kernel: HBM bytes read+written; copy: bytes copied; collective: message */
    double flops;
    double gpu_s;   /* GPU time, from cost_apply */
} prog_op;

typedef struct prog_opts {
    int embedding_allreduce; /* vLLM's VocabParallelEmbedding all-reduce at k > 1 */
    int logits_gather;       /* the lm_head logits all-gather at k > 1 */
    long input_copies;       /* host->device copies preparing the step's inputs */
    long sampling_kernels;   /* kernels of the sampler (greedy ~6, top-p up to ~20) */
    int allreduce_no_copy;   /* the all-reduce reads its input in place (NCCL, or vLLM's
                                custom all-reduce under a CUDA graph): no ar_copy launch */
    int prec_weights;        /* prec_kind of the layers' weights (PREC_MODEL: the model's) */
    int prec_kv_cache;       /* prec_kind of the KV cache */
    int prec_activations;    /* prec_kind of activations and collectives' messages */
    int w8a8;                /* FP8 weights with FP8 math (the GPU has FP8 tensor cores) */
    int allreduce_copy_out;  /* a copy of the result out of the all-reduce buffer follows
                                each all-reduce (symmetric-memory all-reduce) */
    int piecewise;           /* vLLM's PIECEWISE CUDA graphs: the attention op (its KV-cache
                                write and kernel; MLA's query absorption and value up-projection
                                too) runs eagerly between the graph pieces */
} prog_opts;

/* An op's shape for a measured grid (kgrid.h, kg_class_dims: a GEMM's n, k, m; attention's
 * kv_bytes, head_dim, kv_heads, q_heads, context, batch); x[0] == 0: none (MoE, MLA, the
 * elementwise ops), priced by its class's law. */
typedef struct prog_shape {
    double x[KG_MAX_DIMS];
} prog_shape;

typedef struct prog {
    prog_op *ops;
    prog_shape *shape;   /* one per op, beside ops: only cost_apply reads it */
    size_t n, cap;
    long tp, batch, ctx;
    size_t n_kernels;    /* every non-collective launch: kernels and copies */
    size_t n_allreduce;
    size_t n_collectives;
    double weight_bytes; /* per rank: the weights it holds (every expert, scales included) */
    double kv_bytes;     /* per rank: the KV cache its attention reads */
    double experts_touched; /* expected experts a MoE layer's tokens touch (0: dense) */
    int piecewise;       /* built with prog_opts.piecewise */
} prog;

int prog_build(prog *p, const model_arch *m, const prog_opts *o, long tp, long batch, long ctx,
               tp_err *err);
void prog_free(prog *p);
/* Expected distinct experts that `batch` tokens, each routed to top_k distinct experts of
 * `experts` uniformly at random, touch: experts * (1 - (1 - top_k/experts)^batch). */
double prog_experts_touched(double experts, double top_k, double batch);
const char *prog_op_name(const prog_op *op);
/* The CUDA-graph launches a step makes when graphable ops replay from graphs: one per maximal
 * run of graphable ops (engine.h's rule), so 1 in FULL mode and layers + 1 in PIECEWISE. */
size_t prog_graph_runs(const prog *p);
/* The ops launched one by one in graph mode (the rest replay inside the graphs). */
size_t prog_eager_ops(const prog *p);
static inline int prog_is_collective(const prog_op *op)
{
    return op->kind == PROG_ALLREDUCE || op->kind == PROG_ALLGATHER;
}

#endif
