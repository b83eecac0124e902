/* serve.c: see serve.h. */
#include "serve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcg32.h"

typedef struct sreq {
    long id, isl, osl;
    long computed;  /* tokens whose KV is in the cache */
    long out;       /* output tokens sampled */
    long blocks;    /* KV blocks held */
    long preemptions;
    long sched;     /* tokens scheduled in the current step */
    double arrive, first, last;
} sreq;

/* A double-ended queue of request pointers (the waiting queue: preempted requests go back to
 * its head). */
typedef struct sdeque {
    sreq **v;
    size_t cap, head, n;
} sdeque;

typedef struct serve_state {
    const serve_config *c;
    serve_result *r;
    pcg32 rng;
    sreq **running;     /* in admission order */
    size_t n_running, cap_running;
    sdeque waiting;
    long free_blocks;
    long issued, finished;
    double now, next_arrival; /* next_arrival: HUGE_VAL when none is due */
    double kv_area, busy;     /* time-weighted blocks in use, and the steps' total time */
    double tokens_sum;
    int preempted_now;
} serve_state;

static int dq_grow(sdeque *d)
{
    size_t cap = d->cap ? d->cap * 2 : 64;
    sreq **v = malloc(cap * sizeof *v);
    if (!v) return -1;
    for (size_t i = 0; i < d->n; i++) v[i] = d->v[(d->head + i) % d->cap];
    free(d->v);
    d->v = v, d->cap = cap, d->head = 0;
    return 0;
}

static int dq_push_back(sdeque *d, sreq *q)
{
    if (d->n == d->cap && dq_grow(d)) return -1;
    d->v[(d->head + d->n++) % d->cap] = q;
    return 0;
}

static int dq_push_front(sdeque *d, sreq *q)
{
    if (d->n == d->cap && dq_grow(d)) return -1;
    d->head = (d->head + d->cap - 1) % d->cap;
    d->v[d->head] = q;
    d->n++;
    return 0;
}

static sreq *dq_front(const sdeque *d) { return d->n ? d->v[d->head] : NULL; }

static void dq_pop_front(sdeque *d)
{
    d->head = (d->head + 1) % d->cap;
    d->n--;
}

int serve_check(const serve_config *c, tp_err *err)
{
    if (c->max_num_batched_tokens < 1 || c->max_num_seqs < 1 || c->block_size < 1)
        return tp_err_set(err, "serve: max_num_batched_tokens %ld, max_num_seqs %ld, block_size "
                          "%ld: expected each >= 1", c->max_num_batched_tokens, c->max_num_seqs,
                          c->block_size);
    if (c->requests < 1 || c->requests > SERVE_MAX_REQUESTS)
        return tp_err_set(err, "serve: --requests %ld: expected 1..%ld", c->requests,
                          SERVE_MAX_REQUESTS);
    if ((c->concurrency > 0) == (c->rate > 0))
        return tp_err_set(err, "serve: give one load, a concurrency (closed loop) or a rate "
                          "(requests/s)");
    if (c->rate > 0 && !(c->rate <= 1e9))
        return tp_err_set(err, "serve: --rate %g: expected a positive finite rate", c->rate);
    if (!c->price) return tp_err_set(err, "serve: no step pricer");
    long cap_tokens = c->kv_blocks > 0 ? c->kv_blocks * c->block_size : 0;
    size_t n = c->n_lengths ? c->n_lengths : 1;
    for (size_t i = 0; i < n; i++) {
        long isl = c->n_lengths ? c->lengths[i][0] : c->isl;
        long osl = c->n_lengths ? c->lengths[i][1] : c->osl;
        if (isl < 1 || osl < 1)
            return tp_err_set(err, "serve: request lengths isl %ld, osl %ld: expected each >= 1",
                              isl, osl);
        /* the longest context a request reaches: its prompt and every output but the last */
        if (isl + osl - 1 > cap_tokens)
            return tp_err_set(err, "serve: a request of %ld prompt + %ld output tokens needs "
                              "%ld KV blocks of %ld tokens; the cache holds %ld (%ld tokens): "
                              "it could never finish", isl, osl,
                              serve_blocks(isl + osl - 1, c->block_size), c->block_size,
                              c->kv_blocks, cap_tokens);
    }
    return 0;
}

/* A new request arriving at `at`. */
static int st_issue(serve_state *st, double at, tp_err *err)
{
    const serve_config *c = st->c;
    sreq *q = calloc(1, sizeof *q);
    if (!q) return tp_err_set(err, "out of memory");
    q->id = st->issued++;
    if (c->n_lengths) {
        size_t i = c->n_lengths > 1 ? pcg32_bounded(&st->rng, (uint32_t)c->n_lengths) : 0;
        q->isl = c->lengths[i][0], q->osl = c->lengths[i][1];
    } else {
        q->isl = c->isl, q->osl = c->osl;
    }
    q->arrive = at;
    if (dq_push_back(&st->waiting, q)) {
        free(q);
        return tp_err_set(err, "out of memory");
    }
    st->r->input_tokens += q->isl;
    return 0;
}

static double st_gap(serve_state *st)
{
    double u = pcg32_unit(&st->rng);
    return -log1p(-u) / st->c->rate;
}

/* Requests that have arrived by now join the waiting queue. */
static int st_arrivals(serve_state *st, tp_err *err)
{
    while (st->next_arrival <= st->now && st->issued < st->c->requests) {
        if (st_issue(st, st->next_arrival, err)) return -1;
        st->next_arrival = st->issued < st->c->requests ? st->next_arrival + st_gap(st)
                                                         : HUGE_VAL;
    }
    return 0;
}

/* Grow q's blocks to hold `tokens` computed tokens: 0, or -1 when the pool lacks them. */
static int st_alloc(serve_state *st, sreq *q, long tokens)
{
    long need = serve_blocks(tokens, st->c->block_size) - q->blocks;
    if (need <= 0) return 0;
    if (need > st->free_blocks) return -1;
    st->free_blocks -= need;
    q->blocks += need;
    return 0;
}

static void st_release(serve_state *st, sreq *q)
{
    st->free_blocks += q->blocks;
    q->blocks = 0;
}

/* Preempt the last running request (recompute): it gives its blocks back and waits at the
 * head of the queue. */
static int st_preempt_last(serve_state *st, tp_err *err)
{
    sreq *q = st->running[--st->n_running];
    st_release(st, q);
    q->computed = 0;
    q->sched = 0;
    q->preemptions++;
    st->r->preemptions++;
    st->preempted_now = 1;
    if (dq_push_front(&st->waiting, q)) return tp_err_set(err, "out of memory");
    return 0;
}

static int st_push_running(serve_state *st, sreq *q, tp_err *err)
{
    if (st->n_running == st->cap_running) {
        size_t cap = st->cap_running ? st->cap_running * 2 : 64;
        sreq **v = realloc(st->running, cap * sizeof *v);
        if (!v) return tp_err_set(err, "out of memory");
        st->running = v, st->cap_running = cap;
    }
    st->running[st->n_running++] = q;
    return 0;
}

/* The tokens q still has to compute: its prompt and every sampled token but the newest. */
static long st_uncomputed(const sreq *q) { return q->isl + q->out - q->computed; }

/* Scheduler step 1: the running requests, in order. */
static int st_schedule_running(serve_state *st, long *budget, tp_err *err)
{
    for (size_t i = 0; i < st->n_running && *budget > 0;) {
        sreq *q = st->running[i];
        long n = st_uncomputed(q);
        if (n > *budget) n = *budget;
        int scheduled = 1;
        while (st_alloc(st, q, q->computed + n)) {
            int self = st->running[st->n_running - 1] == q;
            if (st_preempt_last(st, err)) return -1;
            if (self) {
                scheduled = 0;
                break;
            }
        }
        if (!scheduled) break;
        q->sched = n;
        *budget -= n;
        i++;
    }
    return 0;
}

/* Scheduler step 2: admit waiting requests. */
static int st_schedule_waiting(serve_state *st, long *budget, tp_err *err)
{
    while (!st->preempted_now && *budget > 0 && st->waiting.n &&
           (long)st->n_running < st->c->max_num_seqs) {
        sreq *q = dq_front(&st->waiting);
        long n = st_uncomputed(q);
        if (n > *budget) n = *budget;
        if (st_alloc(st, q, q->computed + n)) break;
        dq_pop_front(&st->waiting);
        q->sched = n;
        *budget -= n;
        if (st_push_running(st, q, err)) return -1;
    }
    return 0;
}

/* The shape of the step just scheduled. */
static serve_step_shape st_shape(const serve_state *st)
{
    serve_step_shape sh = {0, 0, 0, 0, 0, 0.0};
    double ctx_sum = 0;
    for (size_t i = 0; i < st->n_running; i++) {
        const sreq *q = st->running[i];
        if (!q->sched) continue;
        sh.tokens += q->sched;
        sh.seqs++;
        if (q->computed >= q->isl && q->sched == 1 && st_uncomputed(q) == 1) {
            sh.decode_seqs++;
            ctx_sum += (double)q->computed + 1.0; /* the new token attends to itself too */
        } else {
            double c = (double)q->sched, p = (double)q->computed;
            sh.prefill_seqs++;
            sh.prefill_pairs += c * (p + (c + 1.0) / 2.0);
        }
    }
    sh.decode_ctx = sh.decode_seqs ? lround(ctx_sum / (double)sh.decode_seqs) : 0;
    return sh;
}

static void st_record(serve_state *st, sreq *q)
{
    serve_result *r = st->r;
    double ttft = q->first - q->arrive, e2e = q->last - q->arrive;
    qsketch_add(&r->ttft, ttft);
    qsketch_add(&r->e2e, e2e);
    r->ttft_sum += ttft;
    r->e2e_sum += e2e;
    if (q->osl > 1) {
        double tpot = (e2e - ttft) / (double)(q->osl - 1);
        qsketch_add(&r->tpot, tpot);
        r->tpot_sum += tpot;
        r->n_tpot++;
    }
    r->requests++;
    r->output_tokens += q->osl;
    if (st->c->observe && st->c->observe->request) {
        serve_req_info info = {q->id, q->isl, q->osl, q->preemptions, q->arrive, q->first,
                               q->last};
        st->c->observe->request(st->c->observe->ctx, &info);
    }
}

/* The step has run: tokens computed, one sampled by each request that computed all of its,
 * finished requests leave (and, in a closed loop, are replaced at once). */
static int st_complete(serve_state *st, tp_err *err)
{
    size_t kept = 0;
    for (size_t i = 0; i < st->n_running; i++) {
        sreq *q = st->running[i];
        long n = q->sched;
        q->sched = 0;
        if (n) {
            q->computed += n;
            if (st_uncomputed(q) == 0) {
                q->out++;
                if (q->out == 1) {
                    q->first = st->now;
                } else {
                    double gap = st->now - q->last;
                    qsketch_add(&st->r->itl, gap);
                    st->r->itl_sum += gap;
                    st->r->n_itl++;
                }
                q->last = st->now;
            }
        }
        if (q->out >= q->osl) {
            st_release(st, q);
            st_record(st, q);
            free(q);
            st->finished++;
            if (st->c->concurrency > 0 && st->issued < st->c->requests &&
                st_issue(st, st->now, err))
                return -1;
            continue;
        }
        st->running[kept++] = q;
    }
    st->n_running = kept;
    return 0;
}

static long st_kv_used(const serve_state *st) { return st->c->kv_blocks - st->free_blocks; }

/* One scheduler iteration and the step it runs. */
static int st_step(serve_state *st, tp_err *err)
{
    const serve_config *c = st->c;
    long budget = c->max_num_batched_tokens;
    st->preempted_now = 0;
    if (st_schedule_running(st, &budget, err) || st_schedule_waiting(st, &budget, err))
        return -1;
    serve_step_shape sh = st_shape(st);
    if (sh.tokens == 0)
        return tp_err_set(err, "serve: the scheduler found nothing to run with %zu running and "
                          "%zu waiting (a request larger than the KV cache?)", st->n_running,
                          st->waiting.n);
    double dt;
    if (c->price(c->price_ctx, &sh, &dt, err)) return -1;
    if (!(dt > 0) || !isfinite(dt))
        return tp_err_set(err, "serve: a step of %ld tokens priced at %g s: expected a positive "
                          "time", sh.tokens, dt);
    long used = st_kv_used(st);
    double start = st->now;
    st->now += dt;
    st->busy += dt;
    st->kv_area += (double)used * dt;
    st->tokens_sum += (double)sh.tokens;
    if ((double)used > st->r->kv_peak) st->r->kv_peak = (double)used;
    if (sh.seqs > st->r->batch_peak) st->r->batch_peak = sh.seqs;
    if (c->observe && c->observe->step) {
        serve_step_info info = {st->r->steps, start, st->now, sh, used, (long)st->n_running,
                                (long)st->waiting.n, st->r->preemptions};
        c->observe->step(c->observe->ctx, &info);
    }
    st->r->steps++;
    return st_complete(st, err);
}

static void st_free(serve_state *st)
{
    for (size_t i = 0; i < st->n_running; i++) free(st->running[i]);
    for (size_t i = 0; i < st->waiting.n; i++) free(st->waiting.v[(st->waiting.head + i) %
                                                                    st->waiting.cap]);
    free(st->running);
    free(st->waiting.v);
}

static int st_start(serve_state *st, tp_err *err)
{
    const serve_config *c = st->c;
    if (c->concurrency > 0) {
        long first = c->concurrency < c->requests ? c->concurrency : c->requests;
        for (long i = 0; i < first; i++)
            if (st_issue(st, 0.0, err)) return -1;
        st->next_arrival = HUGE_VAL;
        return 0;
    }
    st->next_arrival = 0.0; /* the first request arrives at 0 */
    return st_arrivals(st, err);
}

int serve_run(const serve_config *c, serve_result *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    if (serve_check(c, err)) return -1;
    qsketch_init(&out->ttft);
    qsketch_init(&out->tpot);
    qsketch_init(&out->itl);
    qsketch_init(&out->e2e);
    serve_state st;
    memset(&st, 0, sizeof st);
    st.c = c, st.r = out;
    st.free_blocks = c->kv_blocks;
    pcg32_seed(&st.rng, c->seed, SERVE_STREAM);
    int rc = -1;
    if (st_start(&st, err)) goto done;
    while (st.finished < c->requests) {
        if (st_arrivals(&st, err)) goto done;
        if (!st.n_running && !st.waiting.n) { /* idle until the next arrival */
            st.now = st.next_arrival;
            continue;
        }
        if (st_step(&st, err)) goto done;
    }
    out->duration = st.now;
    out->kv_mean = st.busy > 0 ? st.kv_area / st.busy / (double)c->kv_blocks : 0.0;
    out->kv_peak /= (double)c->kv_blocks;
    out->tokens_per_step_mean = out->steps ? st.tokens_sum / (double)out->steps : 0.0;
    rc = 0;
done:
    st_free(&st);
    if (rc) serve_result_free(out);
    return rc;
}

void serve_result_free(serve_result *r)
{
    qsketch_free(&r->ttft);
    qsketch_free(&r->tpot);
    qsketch_free(&r->itl);
    qsketch_free(&r->e2e);
}
