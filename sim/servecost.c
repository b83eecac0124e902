/* servecost.c: see servecost.h. */
#include "servecost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "run.h"

long scost_capture_pad(long n, long max)
{
    if (n < 1 || n > max) return 0;
    if (n <= 2) return n;
    if (n <= 4) return 4;
    if (n < 256) return (n + 7) / 8 * 8; /* 8, 16, .. 248; 249..255 go to 256 */
    return (n + 15) / 16 * 16 <= max ? (n + 15) / 16 * 16 : 0;
}

void scost_server_defaults(const scenario *s, long *max_tokens, long *max_seqs)
{
    int big = s->hw.hbm_bytes >= SCOST_BIG_GPU_GIB * 1024.0 * 1024.0 * 1024.0 &&
              !strstr(s->hw.name, "A100");
    *max_tokens = big ? SCOST_TOKENS_BIG : SCOST_TOKENS_SMALL;
    *max_seqs = big ? SCOST_SEQS_BIG : SCOST_SEQS_SMALL;
}

long scost_capture_max(long max_tokens, long max_seqs)
{
    long m = 2 * max_seqs < SCOST_CAPTURE_CAP ? 2 * max_seqs : SCOST_CAPTURE_CAP;
    return m < max_tokens ? m : max_tokens;
}

int scost_init(scost *c, const scenario *s, long tp, long capture_max, tp_err *err)
{
    memset(c, 0, sizeof *c);
    c->s = s, c->tp = tp, c->capture_max = capture_max;
    c->steps = 4, c->warmup = 1, c->seed = s->seed;
    c->cap = 1024;
    if (!(c->slot = calloc(c->cap, sizeof *c->slot))) return tp_err_set(err, "out of memory");
    const char *borrowed = NULL;
    if (run_check_tp(s, tp, err) || scenario_kernels(s, &c->kernels, &borrowed, err)) return -1;
    /* prefill attention is priced where no error can be returned: its grid parsed here */
    return c->kernels ? kcal_need(c->kernels, KC_PREFILL_ATTN, err) : 0;
}

void scost_free(scost *c)
{
    free(c->slot);
    memset(c, 0, sizeof *c);
}

static uint64_t key_hash(const scost_key *k)
{
    const long v[6] = {k->tokens, k->seqs, k->decode_seqs, k->decode_ctx, k->prefill_seqs,
                       k->prefill_len};
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 6; i++) {
        h ^= (uint64_t)v[i];
        h *= 1099511628211ULL;
        h ^= h >> 29;
    }
    return h;
}

static int key_eq(const scost_key *a, const scost_key *b)
{
    return a->tokens == b->tokens && a->seqs == b->seqs && a->decode_seqs == b->decode_seqs &&
           a->decode_ctx == b->decode_ctx && a->prefill_seqs == b->prefill_seqs &&
           a->prefill_len == b->prefill_len;
}

static scost_slot *cache_find(scost *c, const scost_key *k)
{
    size_t i = (size_t)key_hash(k) & (c->cap - 1);
    while (c->slot[i].used && !key_eq(&c->slot[i].key, k)) i = (i + 1) & (c->cap - 1);
    return &c->slot[i];
}

static int cache_grow(scost *c)
{
    scost_slot *old = c->slot;
    size_t n = c->cap;
    if (!(c->slot = calloc(2 * n, sizeof *c->slot))) {
        c->slot = old;
        return -1;
    }
    c->cap = 2 * n;
    for (size_t i = 0; i < n; i++)
        if (old[i].used) *cache_find(c, &old[i].key) = old[i];
    free(old);
    return 0;
}

/* What the step's attention and logits cost, for run's reprice hook. */
typedef struct scost_mix {
    const scost *c;
    const prog *logits;  /* a program of the step's requests: its logits, sampler, copy */
    const prog *decode;  /* a program of the decoding requests, or NULL */
    long prefill_seqs;
    double prefill_len, prefill_pairs;
    int piecewise;       /* attention and the cache write launched between graph pieces */
} scost_mix;

static int scost_is_logits(int name)
{
    return name == OPN_LM_HEAD || name == OPN_LOGITS_GATHER || name == OPN_SAMPLING ||
           name == OPN_TOKENS_D2H || name == OPN_LOGIT_SOFTCAP;
}

/* One layer's prefill attention over the chunks (seconds). */
static double scost_prefill_attn(const scost_mix *m, const prog_shape *sh)
{
    const scenario *s = m->c->s;
    double kvb = sh->x[0], hd = sh->x[1], kvh = sh->x[2], qh = sh->x[3];
    double act = prec_elem_bytes(s->program.prec_activations, s->model.dtype_bytes);
    double n = (double)m->prefill_seqs, len = m->prefill_len;
    /* q in and out out per new token, K and V of every position read once; 4 hd FLOPs a
     * query-key pair a head (scores and the weighted sum), as the decode op counts them */
    double bytes = act * 2.0 * n * len * qh * hd + kvb * 2.0 * n * len * kvh * hd;
    double flops = 4.0 * hd * qh * m->prefill_pairs;
    const kcal *kernels = m->c->kernels;
    if (kernels && kernels->cls[KC_PREFILL_ATTN].valid) {
        double x[KG_MAX_DIMS] = {kvb, hd, kvh, qh, len, n};
        return kcal_time(kernels, KC_PREFILL_ATTN, bytes, flops, n, x);
    }
    double mem = bytes / (s->hw.hbm_bw * s->hbm_eff);
    double math = flops / (s->hw.peak_flops * s->flops_eff);
    return (mem > math ? mem : math) + s->kernel_fixed_s;
}

/* The GPU time of the next op named `name` at or after *at in p (advancing *at past it), or
 * -1 when none is left. The programs differ in length (an all-reduce's copy-in depends on its
 * message), so ops are matched by name and order, not by index. */
static double scost_next(const prog *p, size_t *at, int name)
{
    while (*at < p->n && p->ops[*at].name != name) (*at)++;
    return *at < p->n ? p->ops[(*at)++].gpu_s : -1.0;
}

static int scost_reprice(void *ctx, prog *p, tp_err *err)
{
    const scost_mix *m = ctx;
    size_t at_decode = 0, at_logits[OPN_COUNT] = {0};
    for (size_t i = 0; i < p->n; i++) {
        prog_op *op = &p->ops[i];
        if (op->name == OPN_ATTENTION) {
            double t = m->decode ? scost_next(m->decode, &at_decode, OPN_ATTENTION) : 0.0;
            if (t < 0)
                return tp_err_set(err, "serve: the decode program lacks a layer's attention");
            if (m->prefill_seqs > 0 && p->shape && p->shape[i].x[0] > 0)
                t += scost_prefill_attn(m, &p->shape[i]);
            else if (m->prefill_seqs > 0) /* MLA: no grid shape; the decode op per token */
                t += op->gpu_s * m->prefill_pairs / ((double)p->batch * (double)p->ctx);
            op->gpu_s = t;
        } else if (scost_is_logits(op->name)) {
            double t = scost_next(m->logits, &at_logits[op->name], op->name);
            if (t < 0)
                return tp_err_set(err, "serve: the logits program lacks '%s'", prog_op_name(op));
            op->gpu_s = t;
        }
        if (m->piecewise && (op->name == OPN_ATTENTION || op->name == OPN_CACHE_WRITE))
            op->graphable = 0;
    }
    return 0;
}

/* The mean equivalent prefill length: L with L (L + 1) / 2 = the mean chunk's pairs. */
static double scost_prefill_len(const serve_step_shape *sh)
{
    if (sh->prefill_seqs <= 0) return 0.0;
    double pairs = sh->prefill_pairs / (double)sh->prefill_seqs;
    return (-1.0 + sqrt(1.0 + 8.0 * pairs)) / 2.0;
}

static int scost_compute(scost *c, const serve_step_shape *sh, const scost_key *k, double *step_s,
                         tp_err *err)
{
    const scenario *s = c->s;
    long pad = s->graphs ? scost_capture_pad(sh->tokens, c->capture_max) : 0;
    int eager = pad == 0, piecewise = !eager && sh->prefill_seqs > 0;
    long m_tokens = eager ? sh->tokens : pad;
    long ctx = k->decode_ctx > 0 ? k->decode_ctx : 1;
    if (eager) c->eager_steps++;
    else if (piecewise) c->piecewise_steps++;
    else c->full_steps++;
    run_request base = {c->tp, sh->seqs, ctx, 1, 0, c->seed, NULL, 0, eager, NULL, NULL};
    prog logits, decode;
    memset(&decode, 0, sizeof decode);
    if (run_program_costed(s, &base, &logits, err)) return -1;
    int rc = -1;
    if (sh->decode_seqs > 0) {
        base.batch = sh->decode_seqs;
        if (run_program_costed(s, &base, &decode, err)) goto out;
    }
    /* the prefill priced from the key (its rounded length), so one key has one price */
    double len = k->prefill_len > 0 ? (double)k->prefill_len : 1.0;
    scost_mix mix = {c, &logits, sh->decode_seqs > 0 ? &decode : NULL, sh->prefill_seqs, len,
                     (double)sh->prefill_seqs * len * (len + 1.0) / 2.0, piecewise};
    run_request req = {c->tp, m_tokens, ctx, c->steps, c->warmup, c->seed, NULL, sh->seqs,
                       eager, scost_reprice, &mix};
    run_summary sum;
    if (run_cell(s, &req, &sum, NULL, err) || run_check_step(s, &sum, err)) goto out;
    *step_s = sum.step_mean;
    rc = 0;
out:
    prog_free(&logits);
    prog_free(&decode);
    return rc;
}

int scost_price(void *ctx, const serve_step_shape *sh, double *step_s, tp_err *err)
{
    scost *c = ctx;
    long q = SCOST_CTX_QUANTUM;
    scost_key k = {sh->tokens, sh->seqs, sh->decode_seqs,
                   sh->decode_seqs > 0 ? (sh->decode_ctx + q / 2) / q * q : 0,
                   sh->prefill_seqs, lround(scost_prefill_len(sh))};
    if (k.decode_seqs > 0 && k.decode_ctx < q) k.decode_ctx = q;
    scost_slot *sl = cache_find(c, &k);
    if (sl->used) {
        c->hits++;
        *step_s = sl->step_s;
        return 0;
    }
    c->misses++;
    double t;
    if (scost_compute(c, sh, &k, &t, err)) return -1;
    if (2 * (c->n + 1) > c->cap) {
        if (cache_grow(c)) return tp_err_set(err, "out of memory");
        sl = cache_find(c, &k);
    }
    sl->key = k, sl->step_s = t, sl->used = 1;
    c->n++;
    *step_s = t;
    return 0;
}

int scost_kv_blocks(const scenario *s, long tp, long block_size, double mem_util,
                    double reserve_bytes, double *weights, long *blocks, tp_err *err)
{
    double w, kv_block;
    if (plan_bytes(s, tp, block_size, &w, &kv_block, err)) return -1;
    double room = mem_util * s->hw.hbm_bytes - w - reserve_bytes;
    *weights = w;
    *blocks = room > 0 && kv_block > 0 ? (long)floor(room / kv_block) : 0;
    return 0;
}
