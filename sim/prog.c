/* prog.c: see prog.h. Byte counts are the streamed HBM traffic of each kernel: weights
 * once, activations read and written, the KV cache read by attention for the context. */
#include "prog.h"

#include <math.h>
#include <stdlib.h>

static const char *const prog_names[OPN_COUNT] = {
    [OPN_INPUT_COPY] = "prepare_inputs_h2d",
    [OPN_EMBEDDING] = "embedding",
    [OPN_EMBED_ALLREDUCE] = "embedding_all_reduce",
    [OPN_INPUT_LAYERNORM] = "input_layernorm",
    [OPN_QKV_PROJ] = "qkv_proj",
    [OPN_ROTARY] = "rotary_emb",
    [OPN_CACHE_WRITE] = "reshape_and_cache",
    [OPN_ATTENTION] = "attention",
    [OPN_O_PROJ] = "o_proj",
    [OPN_AR_COPY] = "all_reduce_copy_in",
    [OPN_ALL_REDUCE] = "all_reduce",
    [OPN_POST_LAYERNORM] = "post_attention_layernorm",
    [OPN_GATE_UP] = "gate_up_proj",
    [OPN_SILU_MUL] = "silu_and_mul",
    [OPN_DOWN_PROJ] = "down_proj",
    [OPN_FINAL_NORM] = "final_norm",
    [OPN_LM_HEAD] = "lm_head",
    [OPN_LOGITS_GATHER] = "logits_all_gather",
    [OPN_SAMPLING] = "sampler",
    [OPN_TOKENS_D2H] = "sampled_tokens_d2h",
    [OPN_FP8_QUANT] = "input_quant_fp8",
    [OPN_SHARED_GATE_UP] = "shared_expert_gate_up",
    [OPN_SHARED_SILU_MUL] = "shared_expert_silu_and_mul",
    [OPN_SHARED_DOWN] = "shared_expert_down",
    [OPN_SHARED_GATE] = "shared_expert_gate",
    [OPN_SHARED_SIGMOID] = "shared_expert_sigmoid",
    [OPN_SHARED_MUL] = "shared_expert_mul",
    [OPN_ROUTER] = "router",
    [OPN_TOPK] = "topk_softmax",
    [OPN_MOE_ALIGN] = "moe_align_block_size",
    [OPN_MOE_W13] = "fused_moe_w13",
    [OPN_MOE_SILU_MUL] = "moe_silu_and_mul",
    [OPN_MOE_W2] = "fused_moe_w2",
    [OPN_MOE_SUM] = "moe_sum",
    [OPN_SHARED_ADD] = "shared_expert_add",
    [OPN_MOE_SCALE] = "moe_routed_scale",
    [OPN_QKV_A_PROJ] = "fused_qkv_a_proj",
    [OPN_Q_A_NORM] = "q_a_layernorm",
    [OPN_Q_B_PROJ] = "q_b_proj",
    [OPN_KV_A_NORM] = "kv_a_layernorm",
    [OPN_MLA_Q_ABSORB] = "mla_q_absorb_bmm",
    [OPN_MLA_V_UP] = "mla_v_up_bmm",
    [OPN_AR_COPY_OUT] = "all_reduce_copy_out",
    [OPN_Q_NORM] = "q_norm",
    [OPN_K_NORM] = "k_norm",
    [OPN_PRE_FF_NORM] = "pre_feedforward_layernorm",
    [OPN_POST_FF_NORM] = "post_feedforward_layernorm",
    [OPN_GELU_MUL] = "gelu_tanh_and_mul",
    [OPN_EMBED_SCALE] = "embedding_normalizer",
    [OPN_LOGIT_SOFTCAP] = "logits_softcap",
};

const char *prog_op_name(const prog_op *op) { return prog_names[op->name]; }

size_t prog_graph_runs(const prog *p)
{
    size_t runs = 0;
    for (size_t i = 0; i < p->n; i++)
        runs += p->ops[i].graphable && (i == 0 || !p->ops[i - 1].graphable);
    return runs;
}

size_t prog_eager_ops(const prog *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) n += !p->ops[i].graphable;
    return n;
}

/* What every builder below needs: the shapes, the precisions, the batch. */
typedef struct prog_ctx {
    prog *p;
    const model_arch *m;
    const prog_opts *o;
    long tp;
    double B, ctx;
    int wprec, w8a8;
    double act, kv; /* bytes per activation / KV-cache value */
} prog_ctx;

static int prog_add_fp8(prog *p, prog_kind kind, prog_name name, int layer, double bytes,
                        double flops, int fp8)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 1024;
        prog_op *grown = realloc(p->ops, cap * sizeof *grown);
        if (!grown) return -1;
        p->ops = grown;
        prog_shape *sh = realloc(p->shape, cap * sizeof *sh);
        if (!sh) return -1;
        p->shape = sh;
        p->cap = cap;
    }
    p->shape[p->n] = (prog_shape){{0}};
    int eager_only = name == OPN_INPUT_COPY || name == OPN_LM_HEAD || name == OPN_LOGITS_GATHER ||
                     name == OPN_SAMPLING || name == OPN_TOKENS_D2H || name == OPN_LOGIT_SOFTCAP;
    /* PIECEWISE graphs split at vLLM's attention custom op: what runs inside it is eager */
    if (p->piecewise && (name == OPN_CACHE_WRITE || name == OPN_ATTENTION ||
                         name == OPN_MLA_Q_ABSORB || name == OPN_MLA_V_UP))
        eager_only = 1;
    p->ops[p->n++] = (prog_op){(uint8_t)kind, (uint8_t)name, (int16_t)layer,
                               (uint8_t)!eager_only, (uint8_t)fp8, bytes, flops, 0.0};
    if (kind == PROG_ALLREDUCE) p->n_allreduce++;
    if (kind == PROG_ALLREDUCE || kind == PROG_ALLGATHER)
        p->n_collectives++;
    else
        p->n_kernels++;
    return 0;
}

static int prog_add(prog *p, prog_kind kind, prog_name name, int layer, double bytes,
                    double flops)
{
    return prog_add_fp8(p, kind, name, layer, bytes, flops, 0);
}

/* vLLM's per-token dynamic FP8 quantisation of a GEMM input: read rows x in activations,
 * write them as FP8 plus one float32 scale per row. */
static int prog_quant(prog_ctx *c, int layer, double rows, double in)
{
    return prog_add(c->p, PROG_KERNEL, OPN_FP8_QUANT, layer, rows * (in * c->act + in + 4.0),
                    2.0 * rows * in);
}

/* A GEMM y[B,out] = x[B,in] W[in,out] (+ bias[out]) on the layers' weights, in their
 * precision: weights dominate the bytes at decode batch sizes. */
static int prog_linear(prog_ctx *c, prog_name name, int layer, double in, double out, int bias)
{
    double w = prec_matrix_bytes(c->wprec, c->m->dtype_bytes, in, out);
    double b = bias ? out * (double)c->m->dtype_bytes : 0.0;
    c->p->weight_bytes += w + b;
    if (c->w8a8 && prog_quant(c, layer, c->B, in)) return -1;
    double x_bytes = c->w8a8 ? 1.0 : c->act;
    if (prog_add_fp8(c->p, PROG_KERNEL, name, layer, w + b + c->B * (in * x_bytes + out * c->act),
                     2.0 * c->B * in * out + (bias ? c->B * out : 0.0), c->w8a8))
        return -1;
    c->p->shape[c->p->n - 1] = (prog_shape){{out, in, c->B}};
    return 0;
}

/* A GEMM left in the model's dtype (embedding-tied lm_head, the router). */
static int prog_gemm_native(prog_ctx *c, prog_name name, int layer, double in, double out,
                            int holds)
{
    double d = (double)c->m->dtype_bytes;
    if (holds) c->p->weight_bytes += d * in * out;
    if (prog_add(c->p, PROG_KERNEL, name, layer, d * in * out + c->act * c->B * (in + out),
                 2.0 * c->B * in * out))
        return -1;
    c->p->shape[c->p->n - 1] = (prog_shape){{out, in, c->B}};
    return 0;
}

/* Fused residual add + RMSNorm: read x and residual, write both, read the weight. */
static int prog_norm(prog_ctx *c, prog_name name, int layer)
{
    double H = (double)c->m->hidden;
    return prog_add(c->p, PROG_KERNEL, name, layer, c->act * (4.0 * c->B * H + H),
                    5.0 * c->B * H);
}

/* An elementwise kernel over n activations read and m written. */
static int prog_eltwise(prog_ctx *c, prog_name name, int layer, double n_read, double n_written,
                        double flops)
{
    return prog_add(c->p, PROG_KERNEL, name, layer, c->act * (n_read + n_written), flops);
}

/* The all-reduce of a layer's output: vLLM copies it into the registered buffer first. */
static int prog_allreduce(prog *p, const prog_opts *o, prog_name name, int layer, double msg)
{
    if (!o->allreduce_no_copy && prog_add(p, PROG_KERNEL, OPN_AR_COPY, layer, 2.0 * msg, 0.0))
        return -1;
    if (prog_add(p, PROG_ALLREDUCE, name, layer, msg, 0.0)) return -1;
    /* symmetric memory: the result is copied back out (B200 trace: ops 23, 34, 48, ...) */
    return o->allreduce_copy_out ? prog_add(p, PROG_KERNEL, OPN_AR_COPY_OUT, layer, 2.0 * msg, 0.0)
                                 : 0;
}

/* The dense MLP (or a shared expert): gate_up, the activation-and-mul (SiLU: 4 FLOPs an
 * element; GELU-tanh: x^3, two multiply-adds, tanh, +1, two multiplies and the gate's, 10),
 * down. */
static int prog_mlp(prog_ctx *c, int layer, double inter, prog_name gate_up, prog_name act,
                    prog_name down, int bias)
{
    double H = (double)c->m->hidden, B = c->B, act_flops = act == OPN_GELU_MUL ? 10.0 : 4.0;
    return prog_linear(c, gate_up, layer, H, 2.0 * inter, bias) ||
           prog_eltwise(c, act, layer, 2.0 * B * inter, B * inter, act_flops * B * inter) ||
           prog_linear(c, down, layer, inter, H, bias);
}

double prog_experts_touched(double experts, double top_k, double batch)
{
    return experts * (1.0 - pow(1.0 - top_k / experts, batch));
}

/* vLLM's FusedMoE on one rank: router, top-k, the two grouped GEMMs over the experts the
 * tokens touch (every expert's 1/k intermediate slice lives on each rank). */
static int prog_moe(prog_ctx *c, int layer)
{
    const model_arch *m = c->m;
    double H = (double)m->hidden, B = c->B, E = (double)m->experts;
    double k = (double)m->experts_per_tok, I = (double)(m->moe_intermediate / c->tp);
    double routed = B * k, touched = prog_experts_touched(E, k, B);
    double w13 = prec_matrix_bytes(c->wprec, m->dtype_bytes, H, 2.0 * I);
    double w2 = prec_matrix_bytes(c->wprec, m->dtype_bytes, I, H);
    double x_bytes = c->w8a8 ? 1.0 : c->act;
    c->p->experts_touched = touched;
    c->p->weight_bytes += E * (w13 + w2);
    if (m->shared_intermediate) {
        double SI = (double)(m->shared_intermediate / c->tp);
        if (prog_mlp(c, layer, SI, OPN_SHARED_GATE_UP, OPN_SHARED_SILU_MUL, OPN_SHARED_DOWN, 0))
            return -1;
        if (m->shared_gate &&
            (prog_gemm_native(c, OPN_SHARED_GATE, layer, H, 1.0, 1) ||
             prog_eltwise(c, OPN_SHARED_SIGMOID, layer, B, B, 4.0 * B) ||
             prog_eltwise(c, OPN_SHARED_MUL, layer, B * H + B, B * H, B * H)))
            return -1;
    }
    if (prog_gemm_native(c, OPN_ROUTER, layer, H, E, 1) ||
        /* softmax over E logits, top-k ids (int32) and weights (float32) out */
        prog_add(c->p, PROG_KERNEL, OPN_TOPK, layer, c->act * B * E + 8.0 * routed, 5.0 * B * E) ||
        /* sort the (token, expert) pairs by expert: ids in, sorted ids and offsets out */
        prog_add(c->p, PROG_KERNEL, OPN_MOE_ALIGN, layer, 4.0 * routed * 2.0 + 4.0 * (E + 1),
                 0.0) ||
        (c->w8a8 && prog_quant(c, layer, B, H)) ||
        prog_add_fp8(c->p, PROG_KERNEL, OPN_MOE_W13, layer,
                     touched * w13 + routed * (H * x_bytes + 2.0 * I * c->act),
                     2.0 * routed * H * 2.0 * I, c->w8a8) ||
        prog_eltwise(c, OPN_MOE_SILU_MUL, layer, 2.0 * routed * I, routed * I, 4.0 * routed * I) ||
        (c->w8a8 && prog_quant(c, layer, routed, I)) ||
        prog_add_fp8(c->p, PROG_KERNEL, OPN_MOE_W2, layer,
                     touched * w2 + routed * (I * x_bytes + H * c->act), 2.0 * routed * I * H,
                     c->w8a8) ||
        /* weighted sum of each token's top-k expert outputs */
        prog_eltwise(c, OPN_MOE_SUM, layer, routed * H, B * H, 2.0 * routed * H))
        return -1;
    if (m->routed_scale && prog_eltwise(c, OPN_MOE_SCALE, layer, B * H, B * H, B * H)) return -1;
    if (m->shared_intermediate && prog_eltwise(c, OPN_SHARED_ADD, layer, 2.0 * B * H, B * H, B * H))
        return -1;
    return 0;
}

/* RMSNorm of n values per token without a residual: read x and the weight, write y. */
static int prog_norm_n(prog_ctx *c, prog_name name, int layer, double n)
{
    return prog_add(c->p, PROG_KERNEL, name, layer, c->act * (2.0 * c->B * n + n), 4.0 * c->B * n);
}

/* A per-head batched GEMM on weights kept in the model's dtype: heads x [B, in] . [in, out]. */
static int prog_bmm_native(prog_ctx *c, prog_name name, int layer, double heads, double in,
                           double out)
{
    double w = (double)c->m->dtype_bytes * heads * in * out;
    c->p->weight_bytes += w;
    return prog_add(c->p, PROG_KERNEL, name, layer, w + c->act * c->B * heads * (in + out),
                    2.0 * c->B * heads * in * out);
}

/* vLLM's MLA decode (absorbed): queries into the latent space, attention over the latent
 * cache (one "KV head" of kv_lora_rank + rope values per token), values back up, o_proj. */
static int prog_attn_mla(prog_ctx *c, int layer, double ctx)
{
    const model_arch *m = c->m;
    prog *p = c->p;
    double B = c->B, H = (double)m->hidden, Hq = (double)(m->heads / c->tp);
    double L = (double)m->kv_lora_rank, R = (double)m->qk_rope_dim, N = (double)m->qk_nope_dim;
    double V = (double)m->v_head_dim, QL = (double)m->q_lora_rank, qk = N + R;
    double kv_read = c->kv * B * ctx * (L + R);
    p->kv_bytes += kv_read;
    if (prog_norm(c, OPN_INPUT_LAYERNORM, layer)) return -1;
    if (QL > 0 ? prog_linear(c, OPN_QKV_A_PROJ, layer, H, QL + L + R, 0) ||
                     prog_norm_n(c, OPN_Q_A_NORM, layer, QL) ||
                     prog_linear(c, OPN_Q_B_PROJ, layer, QL, Hq * qk, 0)
               : prog_linear(c, OPN_QKV_PROJ, layer, H, Hq * qk, 0) ||
                     prog_linear(c, OPN_QKV_A_PROJ, layer, H, L + R, 0))
        return -1;
    return prog_norm_n(c, OPN_KV_A_NORM, layer, L) ||
           prog_eltwise(c, OPN_ROTARY, layer, B * (Hq + 1) * R, B * (Hq + 1) * R,
                        3.0 * B * (Hq + 1) * R) ||
           prog_bmm_native(c, OPN_MLA_Q_ABSORB, layer, Hq, N, L) ||
           prog_add(p, PROG_KERNEL, OPN_CACHE_WRITE, layer, B * (L + R) * (c->act + c->kv), 0.0) ||
           /* scores over L + R latent dims, the output over L */
           prog_add(p, PROG_KERNEL, OPN_ATTENTION, layer,
                    kv_read + c->act * B * Hq * (L + R + L),
                    2.0 * B * Hq * ctx * (L + R) + 2.0 * B * Hq * ctx * L) ||
           prog_bmm_native(c, OPN_MLA_V_UP, layer, Hq, L, V) ||
           prog_linear(c, OPN_O_PROJ, layer, Hq * V, H, 0);
}

/* RMSNorm of each of `heads` heads of hd values (q_norm, k_norm): x in, y out, one weight of
 * hd shared by the heads. */
static int prog_head_norm(prog_ctx *c, prog_name name, int layer, double heads, double hd)
{
    return prog_add(c->p, PROG_KERNEL, name, layer, c->act * (2.0 * c->B * heads * hd + hd),
                    4.0 * c->B * heads * hd);
}

/* The decode attention kernel, with its shape for a measured grid. */
static int prog_attn_op(prog_ctx *c, int layer, double bytes, double flops, prog_shape shape)
{
    if (prog_add(c->p, PROG_KERNEL, OPN_ATTENTION, layer, bytes, flops)) return -1;
    c->p->shape[c->p->n - 1] = shape;
    return 0;
}

/* Grouped-query attention: norm, qkv (q/k norms), rotary, cache write, decode attention over
 * ctx positions (the layer's window or the whole context), o_proj. */
static int prog_attn_gqa(prog_ctx *c, int layer, double ctx)
{
    const model_arch *m = c->m;
    prog *p = c->p;
    double B = c->B, H = (double)m->hidden, hd = (double)m->head_dim;
    double q_heads = (double)(m->heads / c->tp);
    double kv_heads = (double)model_kv_heads_per_rank(m, c->tp);
    double qkv_out = (q_heads + 2.0 * kv_heads) * hd;
    double kv_read = c->kv * 2.0 * B * ctx * kv_heads * hd;
    /* scores q.k and the weighted sum of v: 4 hd FLOPs a position a head; a soft-cap adds a
     * divide, a tanh and a multiply per score */
    double attn_flops = (4.0 * hd + (m->attn_softcap ? 3.0 : 0.0)) * B * q_heads * ctx;
    p->kv_bytes += kv_read;
    return prog_norm(c, OPN_INPUT_LAYERNORM, layer) ||
           prog_linear(c, OPN_QKV_PROJ, layer, H, qkv_out, m->qkv_bias) ||
           (m->qk_norm && (prog_head_norm(c, OPN_Q_NORM, layer, q_heads, hd) ||
                           prog_head_norm(c, OPN_K_NORM, layer, kv_heads, hd))) ||
           prog_eltwise(c, OPN_ROTARY, layer, B * (q_heads + kv_heads) * hd,
                        B * (q_heads + kv_heads) * hd, 3.0 * B * (q_heads + kv_heads) * hd) ||
           /* the new token's K and V read, written into the cache in its precision */
           prog_add(p, PROG_KERNEL, OPN_CACHE_WRITE, layer,
                    2.0 * B * kv_heads * hd * (c->act + c->kv), 0.0) ||
           /* decode attention: read the context's K and V, q in, out out */
           prog_attn_op(c, layer, kv_read + c->act * 2.0 * B * q_heads * hd, attn_flops,
                        (prog_shape){{c->kv, hd, kv_heads, q_heads, ctx, B}}) ||
           prog_linear(c, OPN_O_PROJ, layer, q_heads * hd, H, m->o_bias);
}

static int prog_layer(prog_ctx *c, int layer)
{
    const model_arch *m = c->m;
    prog *p = c->p;
    double H = (double)m->hidden, msg = c->B * H * c->act;
    /* a sliding layer's attention reads at most the window */
    double ctx = model_layer_slides(m, layer) && (double)m->sliding_window < c->ctx
                     ? (double)m->sliding_window
                     : c->ctx;
    int sharded = c->tp > 1, sandwich = m->sandwich_norms;
    if (m->kv_lora_rank ? prog_attn_mla(c, layer, ctx) : prog_attn_gqa(c, layer, ctx)) return -1;
    if (sharded && prog_allreduce(p, c->o, OPN_ALL_REDUCE, layer, msg)) return -1;
    /* Gemma: the attention's output normed alone, then the residual add + norm before the MLP */
    if (sandwich ? prog_norm_n(c, OPN_POST_LAYERNORM, layer, H) ||
                       prog_norm(c, OPN_PRE_FF_NORM, layer)
                 : prog_norm(c, OPN_POST_LAYERNORM, layer))
        return -1;
    if (m->experts && layer >= m->dense_layers ? prog_moe(c, layer)
                   : prog_mlp(c, layer, (double)(m->intermediate / c->tp), OPN_GATE_UP,
                              m->gelu_tanh ? OPN_GELU_MUL : OPN_SILU_MUL, OPN_DOWN_PROJ,
                              m->mlp_bias))
        return -1;
    if (sharded && prog_allreduce(p, c->o, OPN_ALL_REDUCE, layer, msg)) return -1;
    return sandwich ? prog_norm_n(c, OPN_POST_FF_NORM, layer, H) : 0;
}

int prog_build(prog *p, const model_arch *m, const prog_opts *o, long tp, long batch, long ctx,
               tp_err *err)
{
    *p = (prog){0};
    if (model_check_tp(m, tp, err)) return -1;
    if (batch < 1 || ctx < 1) return tp_err_set(err, "batch and ctx must be >= 1");
    if (model_check_ctx(m, ctx, err)) return -1;
    p->tp = tp;
    p->batch = batch;
    p->ctx = ctx;
    p->piecewise = o->piecewise;
    int wprec = o->prec_weights ? o->prec_weights : m->weights_quant;
    prog_ctx c = {p,
                  m,
                  o,
                  tp,
                  (double)batch,
                  (double)ctx,
                  wprec,
                  o->w8a8 && wprec == PREC_FP8,
                  prec_elem_bytes(o->prec_activations, m->dtype_bytes),
                  prec_elem_bytes(o->prec_kv_cache, m->dtype_bytes)};
    double B = c.B, H = (double)m->hidden, d = (double)m->dtype_bytes;
    double vocab_shard = (double)(model_vocab_padded(m) / tp);
    int sharded = tp > 1, fail = 0;
    /* token ids, positions, slot mapping, block table, sequence lengths... (8 B each) */
    for (long i = 0; i < o->input_copies && !fail; i++)
        fail = prog_add(p, PROG_H2D, OPN_INPUT_COPY, -1, 8.0 * B, 0.0);
    fail = fail || prog_add(p, PROG_KERNEL, OPN_EMBEDDING, -1, c.act * 2.0 * B * H, 0.0);
    /* Gemma: hidden_states *= sqrt(hidden) */
    if (m->embed_scale) fail = fail || prog_eltwise(&c, OPN_EMBED_SCALE, -1, B * H, B * H, B * H);
    p->weight_bytes += d * vocab_shard * H; /* the embedding table is sharded by vocab too */
    if (sharded && o->embedding_allreduce)
        fail = fail || prog_allreduce(p, o, OPN_EMBED_ALLREDUCE, -1, B * H * c.act);
    for (long l = 0; l < m->layers && !fail; l++) fail = prog_layer(&c, (int)l);
    /* a tied lm_head streams the embedding table again but holds no weights of its own */
    fail = fail || prog_norm(&c, OPN_FINAL_NORM, -1) ||
           prog_gemm_native(&c, OPN_LM_HEAD, -1, H, vocab_shard, !m->tied_embeddings);
    if (sharded && o->logits_gather)
        fail = fail || prog_add(p, PROG_ALLGATHER, OPN_LOGITS_GATHER, -1,
                                B * (double)model_vocab_padded(m) * c.act, 0.0);
    /* Gemma-2's soft-cap of the logits (the vocabulary unpadded): / cap, tanh, * cap */
    for (int i = 0; i < 3 && m->logit_softcap && !fail; i++)
        fail = prog_eltwise(&c, OPN_LOGIT_SOFTCAP, -1, B * (double)m->vocab, B * (double)m->vocab,
                            B * (double)m->vocab);
    /* the sampler reads the full logits row per sequence (float32) */
    for (long i = 0; i < o->sampling_kernels && !fail; i++)
        fail = prog_add(p, PROG_KERNEL, OPN_SAMPLING, -1, 4.0 * B * (double)m->vocab, 0.0);
    fail = fail || prog_add(p, PROG_D2H, OPN_TOKENS_D2H, -1, 8.0 * B, 0.0);
    if (fail) {
        prog_free(p);
        return tp_err_set(err, "out of memory building the step program");
    }
    return 0;
}

void prog_free(prog *p)
{
    free(p->ops);
    free(p->shape);
    *p = (prog){0};
}
