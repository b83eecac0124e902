/* prog.c: see prog.h. Byte counts are the streamed HBM traffic of each kernel: weights
 * once, activations read and written, the KV cache read by attention for the context. */
#include "prog.h"

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
};

const char *prog_op_name(const prog_op *op) { return prog_names[op->name]; }

static int prog_add(prog *p, prog_kind kind, prog_name name, int layer, double bytes,
                    double flops)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 1024;
        prog_op *grown = realloc(p->ops, cap * sizeof *grown);
        if (!grown) return -1;
        p->ops = grown;
        p->cap = cap;
    }
    int eager_only = name == OPN_INPUT_COPY || name == OPN_LM_HEAD || name == OPN_LOGITS_GATHER ||
                     name == OPN_SAMPLING || name == OPN_TOKENS_D2H;
    p->ops[p->n++] =
        (prog_op){(uint8_t)kind, (uint8_t)name, (int16_t)layer, (uint8_t)!eager_only, bytes, flops, 0.0};
    if (kind == PROG_ALLREDUCE) p->n_allreduce++;
    if (kind == PROG_ALLREDUCE || kind == PROG_ALLGATHER)
        p->n_collectives++;
    else
        p->n_kernels++;
    return 0;
}

/* A GEMM y[B,out] = x[B,in] W[in,out]: weights dominate the bytes at decode batch sizes. */
static int prog_gemm(prog *p, prog_name name, int layer, double batch, double in, double out,
                     double d)
{
    p->weight_bytes += d * in * out;
    return prog_add(p, PROG_KERNEL, name, layer, d * (in * out + batch * (in + out)),
                    2.0 * batch * in * out);
}

/* Fused residual add + RMSNorm: read x and residual, write both, read the weight. */
static int prog_norm(prog *p, prog_name name, int layer, double batch, double hidden, double d)
{
    return prog_add(p, PROG_KERNEL, name, layer, d * (4.0 * batch * hidden + hidden),
                    5.0 * batch * hidden);
}

/* The all-reduce of a layer's output: vLLM copies it into the registered buffer first. */
static int prog_allreduce(prog *p, const prog_opts *o, prog_name name, int layer, double msg)
{
    if (!o->allreduce_no_copy && prog_add(p, PROG_KERNEL, OPN_AR_COPY, layer, 2.0 * msg, 0.0))
        return -1;
    return prog_add(p, PROG_ALLREDUCE, name, layer, msg, 0.0);
}

static int prog_layer(prog *p, const prog_opts *o, const model_arch *m, long tp, double B,
                      double ctx, int layer)
{
    double d = (double)m->dtype_bytes, H = (double)m->hidden, hd = (double)m->head_dim;
    double q_heads = (double)(m->heads / tp), kv_heads = (double)model_kv_heads_per_rank(m, tp);
    double inter = (double)(m->intermediate / tp);
    double qkv_out = (q_heads + 2.0 * kv_heads) * hd, msg = B * H * d;
    int sharded = tp > 1;
    if (prog_norm(p, OPN_INPUT_LAYERNORM, layer, B, H, d) ||
        prog_gemm(p, OPN_QKV_PROJ, layer, B, H, qkv_out, d) ||
        prog_add(p, PROG_KERNEL, OPN_ROTARY, layer, d * 2.0 * B * (q_heads + kv_heads) * hd,
                 3.0 * B * (q_heads + kv_heads) * hd) ||
        prog_add(p, PROG_KERNEL, OPN_CACHE_WRITE, layer, d * 4.0 * B * kv_heads * hd, 0.0) ||
        /* decode attention: read the context's K and V, q in, out out */
        (p->kv_bytes += d * 2.0 * B * ctx * kv_heads * hd, 0) ||
        prog_add(p, PROG_KERNEL, OPN_ATTENTION, layer,
                 d * (2.0 * B * ctx * kv_heads * hd + 2.0 * B * q_heads * hd),
                 4.0 * B * q_heads * hd * ctx) ||
        prog_gemm(p, OPN_O_PROJ, layer, B, q_heads * hd, H, d) ||
        (sharded && prog_allreduce(p, o, OPN_ALL_REDUCE, layer, msg)) ||
        prog_norm(p, OPN_POST_LAYERNORM, layer, B, H, d) ||
        prog_gemm(p, OPN_GATE_UP, layer, B, H, 2.0 * inter, d) ||
        prog_add(p, PROG_KERNEL, OPN_SILU_MUL, layer, d * 3.0 * B * inter, 4.0 * B * inter) ||
        prog_gemm(p, OPN_DOWN_PROJ, layer, B, inter, H, d) ||
        (sharded && prog_allreduce(p, o, OPN_ALL_REDUCE, layer, msg)))
        return -1;
    return 0;
}

int prog_build(prog *p, const model_arch *m, const prog_opts *o, long tp, long batch, long ctx,
               tp_err *err)
{
    *p = (prog){0};
    if (model_check_tp(m, tp, err)) return -1;
    if (batch < 1 || ctx < 1) return tp_err_set(err, "batch and ctx must be >= 1");
    p->tp = tp;
    p->batch = batch;
    p->ctx = ctx;
    double B = (double)batch, d = (double)m->dtype_bytes, H = (double)m->hidden;
    double vocab_shard = (double)(m->vocab / tp);
    int sharded = tp > 1, fail = 0;
    /* token ids, positions, slot mapping, block table, sequence lengths... (8 B each) */
    for (long i = 0; i < o->input_copies && !fail; i++)
        fail = prog_add(p, PROG_H2D, OPN_INPUT_COPY, -1, 8.0 * B, 0.0);
    fail = fail || prog_add(p, PROG_KERNEL, OPN_EMBEDDING, -1, d * 2.0 * B * H, 0.0);
    p->weight_bytes += d * vocab_shard * H; /* the embedding table is sharded by vocab too */
    if (sharded && o->embedding_allreduce)
        fail = fail || prog_allreduce(p, o, OPN_EMBED_ALLREDUCE, -1, B * H * d);
    for (long l = 0; l < m->layers && !fail; l++)
        fail = prog_layer(p, o, m, tp, B, (double)ctx, (int)l);
    fail = fail || prog_norm(p, OPN_FINAL_NORM, -1, B, H, d) ||
           prog_gemm(p, OPN_LM_HEAD, -1, B, H, vocab_shard, d);
    if (sharded && o->logits_gather)
        fail = fail || prog_add(p, PROG_ALLGATHER, OPN_LOGITS_GATHER, -1, B * (double)m->vocab * d, 0.0);
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
    *p = (prog){0};
}
