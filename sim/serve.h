/* serve.h: one vLLM replica serving a stream of requests, step by step: the V1 scheduler's
 * continuous batching with chunked prefill over a paged KV cache, each step priced by a
 * caller's function (servecost.h prices it with the step model).
 *
 * Contract: serve_run simulates requests until `requests` have finished and folds their
 * latencies into a caller-owned serve_result (free with serve_result_free). Memory is
 * O(requests in the system), not O(requests served): latencies go into qsketches.
 * The scheduler is vLLM V1's (vllm/v1/core/sched/scheduler.py, Scheduler.schedule; see
 * docs/serve.md#scheduler), FCFS, no prefix caching, no speculative decoding:
 *  1. the running requests in order, each asking for every token it has not computed yet
 *     (1 for a decode, the rest of its prompt for a prefill, capped by the step's remaining
 *     token budget); when its KV blocks cannot be allocated, the last running request is
 *     preempted (its blocks freed, its computed tokens dropped: recompute) and put at the
 *     head of the waiting queue, until the allocation succeeds or the request itself was
 *     preempted;
 *  2. then, only when no request was preempted this step, waiting requests in order while
 *     budget remains and fewer than max_num_seqs run: each gets min(its uncomputed tokens,
 *     budget), and admission stops at the first whose blocks do not fit.
 * A request holds ceil(computed tokens / block_size) blocks. When a step ends, every request
 * scheduled in it has computed its tokens; one whose tokens are all computed samples one
 * token (its first at the end of its last prefill chunk: TTFT) and finishes at osl tokens.
 * Steps run back to back; with nothing to run, the replica idles until the next arrival.
 * Load: a closed loop of `concurrency` clients (each request replaced by a new one the
 * instant it finishes, as `vllm bench serve --max-concurrency` does with every prompt
 * sent at once) or Poisson arrivals at `rate` per second. Lengths: isl/osl fixed, or drawn
 * uniformly from n_lengths pairs. Random draws come from PCG32(seed, SERVE_STREAM): the
 * same seed gives the same run.
 * Metrics as `vllm bench serve` computes them: TTFT = first token - arrival; TPOT = (E2E -
 * TTFT) / (osl - 1) per request with osl > 1; ITL = every gap between a request's
 * consecutive tokens; E2E = last token - arrival.
 */
#ifndef TPSIM_SERVE_H
#define TPSIM_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "qsketch.h"

#define SERVE_STREAM 0x5e7e /* PCG32 stream of serve's draws */
#define SERVE_MAX_REQUESTS 100000000L

/* What determines a step's cost: the work the scheduler put in it. */
typedef struct serve_step_shape {
    long tokens;           /* scheduled tokens: one per decode plus the prefill chunks */
    long seqs;             /* requests in the step */
    long decode_seqs;      /* of them, decoding one token */
    long decode_ctx;       /* the decoding requests' mean context (tokens in the cache) */
    long prefill_seqs;     /* requests computing a prompt chunk */
    double prefill_pairs;  /* causal query-key pairs of the chunks: sum c (p + (c + 1) / 2)
                              for a chunk of c new tokens after p computed ones */
} serve_step_shape;

typedef int (*serve_price_fn)(void *ctx, const serve_step_shape *shape, double *step_s,
                              tp_err *err);

/* One step as it ends, for a timeline: its start and end (s), shape, KV blocks in use. */
typedef struct serve_step_info {
    long step;
    double start, end;
    serve_step_shape shape;
    long kv_used, running, waiting, preempted;
} serve_step_info;
/* One request as it finishes. */
typedef struct serve_req_info {
    long id, isl, osl, preemptions;
    double arrive, first, done;
} serve_req_info;

typedef struct serve_observer {
    void (*step)(void *ctx, const serve_step_info *s);
    void (*request)(void *ctx, const serve_req_info *r);
    void *ctx;
} serve_observer;

typedef struct serve_config {
    long max_num_batched_tokens, max_num_seqs, block_size;
    long kv_blocks;       /* the KV cache: blocks of block_size tokens */
    long concurrency;     /* > 0: closed loop; else rate */
    double rate;          /* requests per second (Poisson) */
    long requests;        /* requests to finish */
    long isl, osl;        /* fixed lengths, used when n_lengths == 0 */
    const long (*lengths)[2]; /* n_lengths (isl, osl) pairs; not owned */
    size_t n_lengths;
    uint64_t seed;
    serve_price_fn price;
    void *price_ctx;
    const serve_observer *observe; /* NULL: none */
} serve_config;

typedef struct serve_result {
    long requests, steps, preemptions;
    long input_tokens, output_tokens;
    double duration;              /* first arrival to last finish, s */
    double kv_peak, kv_mean;      /* blocks in use: the peak and the time-weighted mean over
                                     the steps, as fractions of kv_blocks */
    long batch_peak;              /* most requests in one step */
    double tokens_per_step_mean;  /* scheduled tokens per step */
    qsketch ttft, tpot, itl, e2e; /* seconds */
    double ttft_sum, tpot_sum, itl_sum, e2e_sum;
    long n_tpot, n_itl;
} serve_result;

/* Refuses a configuration that cannot run or never finishes (one line, -1): counts out of
 * range, a request longer than the KV cache holds, neither concurrency nor rate. */
int serve_check(const serve_config *c, tp_err *err);
int serve_run(const serve_config *c, serve_result *out, tp_err *err);
void serve_result_free(serve_result *r);

/* Blocks of bs tokens that n tokens occupy. */
static inline long serve_blocks(long n, long bs) { return (n + bs - 1) / bs; }

#endif
