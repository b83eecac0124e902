/* servecost.h: a serving step priced by the step model (run.h), and the KV cache a replica
 * gets, as vLLM sizes them.
 *
 * Contract: scost_price (a serve_price_fn) prices a step of the scheduler's shape on the
 * scenario at tp: one run_cell of a program built for the step's tokens (every GEMM, norm,
 * rotary, cache write and all-reduce at m = tokens), in which
 *  - decode attention is the attention of a program of the decoding requests alone at their
 *    mean context, and prefill attention is the calibration's prefill_attention class at the
 *    chunks' mean equivalent length (L with L (L + 1) / 2 = the chunk's causal pairs), one
 *    sequence per chunk (the roofline of its FLOPs where the calibration has no such class);
 *    the two are added (vLLM runs both in one varlen kernel: ASSUMED additive, an overcount
 *    of one kernel's fixed cost per layer);
 *  - the logits, sampler and the tokens' copy are those of a program of the step's requests
 *    (vLLM computes logits for each request's last token only);
 *  - the host's per-sequence phases count the step's requests;
 *  - CUDA graphs as vLLM V1's default FULL_AND_PIECEWISE runs them (docs/serve.md#graphs):
 *    a decode-only step of at most the largest capture size replays the full graph, padded
 *    to the next capture size; a mixed step of at most that many tokens runs piecewise
 *    (attention and the cache write launched eagerly between graph pieces, tokens padded
 *    likewise); a larger step runs eagerly. A scenario in eager mode runs every step eagerly.
 * Costs are cached by shape (decode context rounded to SCOST_CTX_QUANTUM tokens, prefill
 * length to whole tokens), so a run of thousands of requests prices each shape once.
 * scost_kv_blocks: vLLM's KV cache, (mem_util * HBM - weights - reserve) / block bytes.
 */
#ifndef TPSIM_SERVECOST_H
#define TPSIM_SERVECOST_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "scenario.h"
#include "serve.h"

#define SCOST_CTX_QUANTUM 16 /* tokens: the decode context's rounding in the cache key */

typedef struct scost_key {
    long tokens, seqs, decode_seqs, decode_ctx, prefill_seqs, prefill_len;
} scost_key;

typedef struct scost_slot {
    scost_key key;
    double step_s;
    int used;
} scost_slot;

typedef struct scost {
    const scenario *s;    /* not owned */
    const kcal *kernels;  /* the scenario's kernel calibration (scenario_kernels), or NULL */
    long tp;
    long capture_max;     /* largest CUDA-graph capture size; 0: no graphs */
    long steps, warmup;   /* engine steps per priced shape */
    uint64_t seed;
    scost_slot *slot;     /* open addressing, cap a power of two */
    size_t cap, n;
    long hits, misses;
    long full_steps, piecewise_steps, eager_steps; /* shapes priced in each mode */
} scost;

/* vLLM's default capture sizes: [1, 2, 4] + 8..248 by 8 + 256.. by 16, up to max: the
 * smallest at least n, or 0 when n > max. */
long scost_capture_pad(long n, long max);
int scost_init(scost *c, const scenario *s, long tp, long capture_max, tp_err *err);
int scost_price(void *ctx, const serve_step_shape *shape, double *step_s, tp_err *err);
void scost_free(scost *c);

/* vLLM's defaults for `vllm serve` on a GPU of at least 70 GiB that is not an A100 (H100,
 * H200, B200: EngineArgs.get_batch_defaults, vllm/engine/arg_utils.py; docs/serve.md#defaults),
 * and for the others; the KV block (CacheConfig.block_size); the largest capture size's cap. */
#define SCOST_BIG_GPU_GIB 70.0
#define SCOST_TOKENS_BIG 8192
#define SCOST_SEQS_BIG 1024
#define SCOST_TOKENS_SMALL 2048
#define SCOST_SEQS_SMALL 256
#define SCOST_BLOCK 16
#define SCOST_CAPTURE_CAP 512
/* A load's default length, for serve and plan --workload alike: 10 requests per client of a
 * closed loop (ASSUMED: the serving cells' source does not say how many prompts each run
 * sent), 100 at a rate. */
#define SCOST_REQUESTS_PER_CLIENT 10
#define SCOST_RATE_REQUESTS 100
/* max_num_batched_tokens and max_num_seqs as vLLM defaults them on the scenario's GPU. */
void scost_server_defaults(const scenario *s, long *max_tokens, long *max_seqs);
/* vLLM's largest capture size: min(2 max_num_seqs, 512, max_num_batched_tokens). */
long scost_capture_max(long max_tokens, long max_seqs);

/* Weights per rank and the KV blocks of block_size tokens a replica at tp holds. */
int scost_kv_blocks(const scenario *s, long tp, long block_size, double mem_util,
                    double reserve_bytes, double *weights, long *blocks, tp_err *err);

#endif
