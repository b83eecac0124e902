/* kprof.h: per-operator GPU profiles read as samples of tpsim's kernel classes.
 *
 * Contract: kp_read appends one sample per (row, operator) of a profile to a caller-owned
 * kp_set (free with kp_free). Layouts, told apart by the header:
 *   Vidur's mlp.csv: time_stats.OP.median (ms) for OP in emb, input_layernorm, attn_pre_proj,
 *     attn_rope, attn_post_proj, post_attention_layernorm, mlp_up_proj, mlp_act,
 *     mlp_down_proj, add, and the shape columns n_head, n_kv_head, n_embd, n_expanded_embd,
 *     vocab_size, use_gated_mlp, num_tokens, num_tensor_parallel_workers;
 *   tpsim's decode-attention CSV: source,batch,context,q_heads,kv_heads,head_dim,
 *     kv_dtype_bytes,time_us (one row per measured kernel, q_heads/kv_heads per GPU);
 *   tpsim-probe's hardware file (FILE.yaml): measured.gemv_tpK_LAYER_bB_gbps, GEMM samples
 *     on Llama-3.1-70B's per-rank linear layers, time = bytes moved / bandwidth.
 * Each sample carries the bytes and FLOPs tpsim's program (prog.c) gives that op for the
 * row's shape, sharded for its TP degree, so a law fitted here prices prog's ops directly.
 * `fold` groups samples for held-out tests: the TP degree (Vidur), the source (attention).
 * Every bad row, unit, NaN or missing column: "file:line: what, expected", -1.
 */
#ifndef TPSIM_KPROF_H
#define TPSIM_KPROF_H

#include <stddef.h>

#include "err.h"

#define KP_MAX_SOURCES 16

typedef struct kp_sample {
    int cls;          /* kcal_class */
    int op;           /* the profile operator (kp_op_names) */
    int fold;
    long tp, tokens;  /* tp 0: not a TP shard (a single-GPU kernel benchmark) */
    double bytes, flops, batch, us;
    double w;         /* fit weight: 1 / (rows of its class in its token band), kp_weigh */
    int line;
} kp_sample;

typedef struct kp_set {
    kp_sample *s;
    size_t n, cap;
    char sources[KP_MAX_SOURCES][64]; /* attention rows' source names, fold = index + 1000 */
    int n_sources;
} kp_set;

#define KP_N_OPS 11 /* Vidur's ten operators and the attention kernel */
extern const char *const kp_op_names[KP_N_OPS];

int kp_read(const char *path, kp_set *set, tp_err *err);
/* The token band of a row: 1, 2-16, 17-128, 129-1024, >1024 (KP_BANDS). */
#define KP_BANDS 5
int kp_band(long tokens);
/* Set every sample's w so that each token band of a class weighs the same in a fit: a
 * profile has a few decode-sized rows and hundreds of prefill-sized ones. */
void kp_weigh(kp_set *set);
void kp_free(kp_set *set);

#endif
