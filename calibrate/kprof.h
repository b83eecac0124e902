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
 *   NVIDIA AIConfigurator's tables (ms; `#` provenance lines first, kept in kp_set):
 *     GEMM gemm_dtype,m,n,k,latency_ms (bfloat16: class gemm, fp8: gemm_fp8, fp8_block read
 *     and skipped); decode attention batch_size,num_heads,num_key_value_heads,head_dim,
 *     kv_cache_dtype,step,window_size,latency_ms (heads per GPU, step the cached tokens;
 *     window_size 0 fitted, others skipped); prefill attention batch_size,isl,num_heads,
 *     num_key_value_heads,head_dim,kv_cache_dtype,window_size,latency_ms (prefill_attention);
 *     a `version` column is allowed, columns in any order, each exactly once; fold: the row's
 *     shape group (kp_shape_fold), so held-out tests leave whole shapes out;
 *   `tpsim trace import --kernels`' listing: rank,kind,start_ns,dur_us,bytes,name, one row per
 *     GPU activity of a profiler trace. The name says the class (kp_trace_class: vLLM's,
 *     PyTorch's, cuBLAS/hipBLASLt's and NCCL's kernel names); bytes are the launching op's
 *     input bytes (0 when unrecorded), FLOPs and the batch unknown (0), so a trace prices the
 *     byte laws only. Collectives are priced by the collective model, not here, and a name of
 *     no class is no op of tpsim's program: both are skipped and counted, never fitted, and
 *     fit-kernels reports them by name (kp_set.skipped).
 * Each sample carries the bytes and FLOPs tpsim's program (prog.c) gives that op for the
 * row's shape, sharded for its TP degree, so a law fitted here prices prog's ops directly.
 * `fold` groups samples for held-out tests: the TP degree (Vidur), the source (attention,
 * 1000 + its index), the trace's rank (2000 + rank).
 * Every bad row, unit, NaN or missing column: "file:line: what, expected", -1.
 */
#ifndef TPSIM_KPROF_H
#define TPSIM_KPROF_H

#include <stddef.h>

#include "err.h"
#include "kgrid.h"

#define KP_MAX_SOURCES 16

typedef struct kp_sample {
    int cls;          /* kcal_class */
    int op;           /* the profile operator (kp_op_names) */
    int fold;
    long tp, tokens;  /* tp 0: not a TP shard (a single-GPU kernel benchmark) */
    double bytes, flops, batch, us;
    double w;         /* fit weight: 1 / (rows of its class in its token band), kp_weigh */
    int line;
    double gx[KG_MAX_DIMS]; /* its shape on the class's grid axes (kg_class_dims); 0: none */
} kp_sample;

#define KP_MAX_SKIPPED 16

/* Trace kernels not fitted: collectives, and names of no class (the first KP_MAX_SKIPPED
 * names with their counts; `names_over` counts the rows of the names beyond). */
typedef struct kp_skipped {
    size_t collectives, unmapped, names_over;
    char names[KP_MAX_SKIPPED][120];
    size_t counts[KP_MAX_SKIPPED];
    int n_names;
} kp_skipped;

typedef struct kp_set {
    kp_sample *s;
    size_t n, cap;
    kp_skipped skipped;
    int trace_rows;   /* samples read from a trace listing (input bytes, no FLOPs) */
    char sources[KP_MAX_SOURCES][64]; /* attention rows' source names, fold = index + 1000 */
    int n_sources;
    /* AIConfigurator tables: their leading `#` lines (the upstream file and commit), one
     * entry per file, and the rows read but not fitted (fp8_block GEMMs: no tpsim precision;
     * sliding-window attention: a window tpsim's op prices by its context) */
    char provenance[KP_MAX_SOURCES][640];
    int n_provenance;
    size_t aic_skipped;
} kp_set;

/* The held-out group of an AIConfigurator row: its shape (GEMM n x k; attention heads,
 * head size and KV dtype) hashed into one of KP_SHAPE_FOLDS groups, 3000 + the group. */
#define KP_SHAPE_FOLDS 5
int kp_shape_fold(const double *gx, int dims);

#define KP_N_OPS 14 /* Vidur's ten operators, the attention kernel, AIConfigurator's three */
extern const char *const kp_op_names[KP_N_OPS];

int kp_read(const char *path, kp_set *set, tp_err *err);
/* The kcal_class of a trace's GPU activity (kind: "kernel", "memcpy", "memset"), KC_COUNT for
 * a collective, -1 for a name of no class and for a memset (no tpsim op is one). */
int kp_trace_class(const char *kind, const char *name);
/* The token band of a row: 1, 2-16, 17-128, 129-1024, >1024 (KP_BANDS). */
#define KP_BANDS 5
int kp_band(long tokens);
/* Set every sample's w so that each token band of a class weighs the same in a fit: a
 * profile has a few decode-sized rows and hundreds of prefill-sized ones. */
void kp_weigh(kp_set *set);
void kp_free(kp_set *set);

#endif
