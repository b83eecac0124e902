/* engine.c: see engine.h. Each rank is a host state machine plus one stream; events only
 * mark the ends of timed activities, and zero-length activities proceed inline, so a run
 * with zero host costs costs about one event per op and rank. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "evq.h"
#include "maxplus.h"

enum { EV_HOST, EV_STREAM_START, EV_OP_END };

typedef enum host_phase {
    PH_BEGIN,
    PH_DRIVER_DONE,
    PH_WAIT_BCAST,
    PH_GRAPH_DONE,
    PH_LAUNCH,
    PH_ENQUEUE,
    PH_DRAIN,
    PH_STEP_DONE,
    PH_FINISHED
} host_phase;

typedef struct eng_stream {
    uint32_t *fifo;   /* program indices, ring buffer */
    double *enq_time;
    size_t head, count, cap;
    int running, start_pending;
} eng_stream;

typedef struct eng_rank {
    dist_rng rng;
    host_phase phase;
    size_t pc;
    long step;
    double wait_since;  /* when the host began waiting (queue, broadcast, drain) */
    int waiting;        /* the host is blocked: a state change must wake it */
    engine_step acc;    /* the current step's account */
    eng_stream st;
} eng_rank;

typedef struct eng {
    const engine_config *cfg;
    const prog *p;
    eng_rank *ranks;
    evq q;
    long total_steps;
    long bcast_step;      /* last step rank 0 has broadcast, -1 before the first */
    long coll_arrived;    /* the one open collective: ranks cannot be a collective apart */
    double coll_latest;
    double *coll_arrival;
    engine_result *res;
} eng;

static void eng_slice(eng *e, uint32_t rank, engine_track track, engine_label label, int32_t op,
                      double start, double dur)
{
    const engine_sink *sink = e->cfg->trace;
    if (!sink) return;
    engine_slice s = {start, dur, rank, (uint32_t)e->ranks[rank].step, op, (uint8_t)track, (uint8_t)label};
    sink->slice(sink->ctx, &s);
}

static int eng_push(eng *e, double t, int type, uint32_t rank)
{
    return evq_push(&e->q, t, (uint32_t)type, rank);
}

/* ---- stream ----------------------------------------------------------------------- */

static int stream_start_op(eng *e, uint32_t r, double now)
{
    eng_stream *st = &e->ranks[r].st;
    uint32_t idx = st->fifo[st->head];
    const prog_op *op = &e->p->ops[idx];
    st->running = 1;
    if (!prog_is_collective(op)) {
        e->ranks[r].acc.compute += op->gpu_s;
        eng_slice(e, r, TRACK_STREAM, SL_OP, (int32_t)idx, now, op->gpu_s);
        return eng_push(e, now + op->gpu_s, EV_OP_END, r);
    }
    e->coll_arrival[r] = now;
    if (e->coll_arrived == 0 || now > e->coll_latest) e->coll_latest = now;
    if (++e->coll_arrived < e->cfg->tp) return 0;
    /* the last rank has arrived: everyone finishes together */
    double end = e->coll_latest + op->gpu_s;
    for (uint32_t q = 0; q < (uint32_t)e->cfg->tp; q++) {
        double wait = e->coll_latest - e->coll_arrival[q];
        e->ranks[q].acc.wait_peers += wait;
        e->ranks[q].acc.allreduce += op->gpu_s;
        if (wait > 0) eng_slice(e, q, TRACK_STREAM, SL_WAIT_PEERS, (int32_t)idx, e->coll_arrival[q], wait);
        eng_slice(e, q, TRACK_STREAM, SL_OP, (int32_t)idx, e->coll_latest, op->gpu_s);
        if (eng_push(e, end, EV_OP_END, q)) return -1;
    }
    e->coll_arrived = 0;
    return 0;
}

static int stream_kick(eng *e, uint32_t r, double now)
{
    eng_stream *st = &e->ranks[r].st;
    if (st->running || st->start_pending || st->count == 0) return 0;
    double ready = st->enq_time[st->head] + e->cfg->launch_latency_s;
    if (ready > now) {
        st->start_pending = 1;
        return eng_push(e, ready, EV_STREAM_START, r);
    }
    return stream_start_op(e, r, now);
}

static int stream_enqueue(eng *e, uint32_t r, uint32_t idx, double now)
{
    eng_stream *st = &e->ranks[r].st;
    size_t tail = (st->head + st->count) % st->cap;
    st->fifo[tail] = idx;
    st->enq_time[tail] = now;
    st->count++;
    return stream_kick(e, r, now);
}

/* ---- host ------------------------------------------------------------------------- */

/* Spend `cost` of host time ending in `next`; returns 1 if an event now marks its end. */
static int host_spend(eng *e, uint32_t r, double now, double cost, host_phase next,
                      engine_label label, int32_t op, int *fail)
{
    eng_rank *h = &e->ranks[r];
    h->phase = next;
    if (cost <= 0) { /* a free launch is still a launch: the trace pairs its op with it */
        if (label == SL_LAUNCH || label == SL_GRAPH_LAUNCH) eng_slice(e, r, TRACK_HOST, label, op, now, 0.0);
        return 0;
    }
    h->acc.host += cost;
    eng_slice(e, r, TRACK_HOST, label, op, now, cost);
    if (eng_push(e, now + cost, EV_HOST, r)) *fail = 1;
    return 1;
}

static void host_block(eng *e, uint32_t r, double now)
{
    e->ranks[r].waiting = 1;
    e->ranks[r].wait_since = now;
}

static void host_unblock(eng *e, uint32_t r, engine_label label, double now)
{
    eng_rank *h = &e->ranks[r];
    if (now > h->wait_since) eng_slice(e, r, TRACK_HOST, label, -1, h->wait_since, now - h->wait_since);
    h->waiting = 0;
}

static void host_finish_step(eng *e, uint32_t r, double now)
{
    eng_rank *h = &e->ranks[r];
    h->acc.dur = now - h->acc.start;
    eng_slice(e, r, TRACK_HOST, SL_STEP, -1, h->acc.start, h->acc.dur);
    engine_deliver(e->cfg, e->res, h->step, (long)r, &h->acc);
    h->step++;
    h->phase = h->step == e->total_steps ? PH_FINISHED : PH_BEGIN;
}

/* Run rank r's host from `now` until it starts a timed activity or blocks. */
static int host_run(eng *e, uint32_t r, double now)
{
    eng_rank *h = &e->ranks[r];
    const engine_config *c = e->cfg;
    const engine_host *hc = &c->host[r];
    int fail = 0;
    for (;;) {
        switch (h->phase) {
        case PH_BEGIN:
            memset(&h->acc, 0, sizeof h->acc);
            h->acc.start = now;
            if (host_spend(e, r, now, r == 0 ? dist_sample(&hc->driver, &h->rng) : 0.0,
                           PH_DRIVER_DONE, SL_DRIVER, -1, &fail))
                return -fail;
            break;
        case PH_DRIVER_DONE:
            if (r == 0) {
                e->bcast_step = h->step;
                for (uint32_t q = 1; q < (uint32_t)c->tp; q++)
                    if (e->ranks[q].phase == PH_WAIT_BCAST && eng_push(e, now, EV_HOST, q))
                        return -1;
            } else if (c->broadcast_wait && e->bcast_step < h->step) {
                h->phase = PH_WAIT_BCAST;
                host_block(e, r, now);
                return 0;
            }
            h->phase = PH_LAUNCH;
            h->pc = 0;
            break;
        case PH_WAIT_BCAST:
            if (e->bcast_step < h->step) return 0;
            host_unblock(e, r, SL_BCAST_WAIT, now);
            h->phase = PH_LAUNCH;
            h->pc = 0;
            break;
        case PH_LAUNCH:
            if (h->pc == e->p->n) {
                h->phase = PH_DRAIN;
                if (c->phases_overlap && host_spend(e, r, now, engine_phases_sample(hc, &h->rng),
                                                    PH_DRAIN, SL_STEP_HOST, -1, &fail))
                    return -fail;
                break;
            }
            if (c->graphs && e->p->ops[h->pc].graphable) {
                if (host_spend(e, r, now, dist_sample(&c->graph_launch, &h->rng), PH_GRAPH_DONE,
                               SL_GRAPH_LAUNCH, (int32_t)h->pc, &fail))
                    return -fail;
                break;
            } else {
                const prog_op *op = &e->p->ops[h->pc];
                const dist *d = prog_is_collective(op) ? &hc->collective : &hc->launch;
                if (host_spend(e, r, now, dist_sample(d, &h->rng), PH_ENQUEUE, SL_LAUNCH,
                               (int32_t)h->pc, &fail))
                    return -fail;
            }
            break;
        case PH_GRAPH_DONE: /* the graph is one launch: its nodes enter the stream together */
            for (; h->pc < e->p->n && e->p->ops[h->pc].graphable; h->pc++)
                if (stream_enqueue(e, r, (uint32_t)h->pc, now)) return -1;
            h->phase = PH_LAUNCH;
            break;
        case PH_ENQUEUE:
            if (h->st.count >= (size_t)c->queue_depth) {
                if (!h->waiting) host_block(e, r, now);
                return 0;
            }
            if (h->waiting) host_unblock(e, r, SL_QUEUE_FULL, now);
            if (stream_enqueue(e, r, (uint32_t)h->pc, now)) return -1;
            h->pc++;
            h->phase = PH_LAUNCH;
            break;
        case PH_DRAIN:
            if (h->st.count > 0) {
                if (!h->waiting) host_block(e, r, now);
                return 0;
            }
            if (h->waiting) host_unblock(e, r, SL_SYNC, now);
            double cost = dist_sample(&hc->step, &h->rng);
            if (!c->phases_overlap) cost += engine_phases_sample(hc, &h->rng);
            if (host_spend(e, r, now, cost, PH_STEP_DONE, SL_STEP_HOST, -1, &fail))
                return -fail;
            break;
        case PH_STEP_DONE:
            host_finish_step(e, r, now);
            break;
        case PH_FINISHED: return 0;
        }
    }
}

static int on_op_end(eng *e, uint32_t r, double now)
{
    eng_rank *h = &e->ranks[r];
    eng_stream *st = &h->st;
    st->head = (st->head + 1) % st->cap;
    st->count--;
    st->running = 0;
    if (stream_kick(e, r, now)) return -1;
    if (h->waiting && (h->phase == PH_ENQUEUE || (h->phase == PH_DRAIN && st->count == 0)))
        return host_run(e, r, now);
    return 0;
}

/* ---- setup and loop ----------------------------------------------------------------- */

static int eng_check(const engine_config *c, tp_err *err)
{
    if (!c->program || !c->host) return tp_err_set(err, "engine: no program or host model");
    if (c->tp < 1 || c->tp != c->program->tp)
        return tp_err_set(err, "engine: tp %ld does not match the program's %ld", c->tp,
                          c->program->tp);
    if (c->steps < 1 || c->warmup < 0) return tp_err_set(err, "engine: steps must be >= 1");
    if (c->queue_depth < 1) return tp_err_set(err, "engine: queue_depth must be >= 1");
    if (c->program->n == 0 || c->program->n > UINT32_MAX)
        return tp_err_set(err, "engine: empty program");
    return 0;
}

void engine_deliver(const engine_config *c, engine_result *r, long step, long rank,
                    const engine_step *acc)
{
    if (c->on_step)
        c->on_step(c->on_step_ctx, step, rank, acc);
    else
        r->rank_steps[(size_t)step * (size_t)c->tp + (size_t)rank] = *acc;
}

static int eng_run_events(const engine_config *c, engine_result *out, tp_err *err);

int engine_run(const engine_config *c, engine_result *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    if (eng_check(c, err)) return -1;
    const char *refused = maxplus_refusal(c);
    int fast = c->method != ENGINE_EVENTS && !refused;
    if (c->method == ENGINE_MAXPLUS && !fast)
        return tp_err_set(err, "engine: the max-plus path does not model this config: %s", refused);
    out->tp = c->tp;
    out->steps = c->steps;
    out->warmup = c->warmup;
    if (!c->on_step) {
        out->rank_steps = calloc((size_t)(c->steps + c->warmup) * (size_t)c->tp, sizeof *out->rank_steps);
        if (!out->rank_steps) return tp_err_set(err, "engine: out of memory");
    }
    if (!fast) {
        out->method_why = c->method == ENGINE_EVENTS ? "asked for (the reference semantics)" : refused;
        return eng_run_events(c, out, err);
    }
    out->method = ENGINE_MAXPLUS;
    out->method_why = c->method == ENGINE_MAXPLUS
                          ? "asked for"
                          : "it models this config (no trace, known op kinds, launch latency >= 0) "
                            "and is bit-identical to the event engine";
    if (maxplus_run(c, out, err) == 0) return 0;
    engine_result_free(out);
    return -1;
}

/* The event engine; out is set up by engine_run. */
static int eng_run_events(const engine_config *c, engine_result *out, tp_err *err)
{
    out->method = ENGINE_EVENTS;
    eng e = {.cfg = c, .p = c->program, .res = out, .bcast_step = -1};
    e.total_steps = c->steps + c->warmup;
    size_t k = (size_t)c->tp, n = c->program->n;
    size_t fifo_cap = (c->graphs || (size_t)c->queue_depth > n ? n : (size_t)c->queue_depth) + 1;
    int rc = -1;
    e.ranks = calloc(k, sizeof *e.ranks);
    e.coll_arrival = calloc(k, sizeof *e.coll_arrival);
    if (!e.ranks || !e.coll_arrival || evq_init(&e.q, 4 * k + 16))
        goto oom;
    if (c->trace && c->trace->start && c->trace->start(c->trace->ctx, c)) goto oom;
    for (size_t r = 0; r < k; r++) {
        eng_stream *st = &e.ranks[r].st;
        st->cap = fifo_cap;
        st->fifo = malloc(fifo_cap * sizeof *st->fifo);
        st->enq_time = malloc(fifo_cap * sizeof *st->enq_time);
        if (!st->fifo || !st->enq_time) goto oom;
        dist_rng_seed(&e.ranks[r].rng, c->seed, (uint64_t)r);
        e.ranks[r].phase = PH_BEGIN;
    }
    for (uint32_t r = 0; r < (uint32_t)k; r++)
        if (host_run(&e, r, 0.0)) goto oom;
    evq_event ev;
    while (evq_pop(&e.q, &ev) == 0) {
        int fail = 0;
        switch (ev.type) {
        case EV_HOST: fail = host_run(&e, ev.entity, ev.time); break;
        case EV_STREAM_START:
            e.ranks[ev.entity].st.start_pending = 0;
            fail = stream_start_op(&e, ev.entity, ev.time);
            break;
        case EV_OP_END: fail = on_op_end(&e, ev.entity, ev.time); break;
        }
        if (fail) goto oom;
    }
    out->events = e.q.pushed;
    for (size_t r = 0; r < k; r++)
        if (e.ranks[r].phase != PH_FINISHED) {
            tp_err_set(err, "engine: rank %zu stopped at step %ld (deadlock)", r, e.ranks[r].step);
            goto fail;
        }
    rc = 0;
    goto done;
oom:
    tp_err_set(err, "engine: out of memory");
fail:
    engine_result_free(out);
done:
    if (e.ranks)
        for (size_t r = 0; r < k; r++) {
            free(e.ranks[r].st.fifo);
            free(e.ranks[r].st.enq_time);
        }
    free(e.ranks);
    free(e.coll_arrival);
    evq_free(&e.q);
    return rc;
}

void engine_result_free(engine_result *r)
{
    free(r->rank_steps);
    memset(r, 0, sizeof *r);
}
