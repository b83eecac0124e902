/* engine_events.c: the event engine (engine_events.h). Each rank is a host state machine plus one
 * stream; events only mark the ends of timed activities, and zero-length activities proceed
 * inline, so a run with zero host costs costs about one event per op and rank. Every decision
 * it shares with the max-plus recursion comes from engine_rules.h. */
#include "engine_events.h"

#include <stdlib.h>
#include <string.h>

#include "engine_rules.h"
#include "evq.h"

/* The fields of engine_config this back end honours: all of them (engine.h; method, on_step
 * and on_step_ctx are the shared ones). A new field must be added here, once handled, or the
 * build stops. */
#define EV_HONOURS(X)                                                                              \
    X(program) X(tp) X(steps) X(warmup) X(seed) X(host) X(graphs) X(graph_launch)                  \
        X(broadcast_wait) X(phases_overlap) X(queue_depth) X(launch_latency_s) X(trace)
ENGINE_BACKEND_FIELDS(EV_HONOURS, ENGINE_REFUSES_NONE)

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
    double last_end;  /* when the last op ended */
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
    engine_slice s = {start, dur, rank, (uint32_t)e->ranks[rank].step, op, (uint8_t)track,
                      (uint8_t)label};
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
        engine_account_compute(&e->ranks[r].acc, op->gpu_s);
        eng_slice(e, r, TRACK_STREAM, SL_OP, (int32_t)idx, now, op->gpu_s);
        return eng_push(e, now + op->gpu_s, EV_OP_END, r);
    }
    e->coll_arrival[r] = now;
    e->coll_latest = engine_coll_latest(e->coll_latest, now, e->coll_arrived == 0);
    if (++e->coll_arrived < e->cfg->tp) return 0;
    /* the last rank has arrived: everyone finishes together */
    double end = engine_coll_end(e->coll_latest, op->gpu_s);
    for (uint32_t q = 0; q < (uint32_t)e->cfg->tp; q++) {
        double arrival = e->coll_arrival[q];
        double wait =
            engine_account_collective(&e->ranks[q].acc, e->coll_latest, arrival, op->gpu_s);
        if (wait > 0) eng_slice(e, q, TRACK_STREAM, SL_WAIT_PEERS, (int32_t)idx, arrival, wait);
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
    double ready = engine_op_ready(st->enq_time[st->head], e->cfg->launch_latency_s);
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

/* What one host phase leaves its rank doing: going on to the next phase at once, stopped
 * (a timed activity's event is pushed, or the host is blocked), or out of memory. */
enum { HOST_GO = 0, HOST_STOP = 1, HOST_FAIL = -1 };

/* Spend `cost` of host time ending in `next`: HOST_STOP if an event now marks its end. */
static int host_spend(eng *e, uint32_t r, double now, double cost, host_phase next,
                      engine_label label, int32_t op)
{
    eng_rank *h = &e->ranks[r];
    h->phase = next;
    if (!engine_host_cost(&h->acc, cost)) {
        /* a free launch is still a launch: the trace pairs its op with it */
        if (label == SL_LAUNCH || label == SL_GRAPH_LAUNCH)
            eng_slice(e, r, TRACK_HOST, label, op, now, 0.0);
        return HOST_GO;
    }
    eng_slice(e, r, TRACK_HOST, label, op, now, cost);
    return eng_push(e, now + cost, EV_HOST, r) ? HOST_FAIL : HOST_STOP;
}

static inline int host_block(eng *e, uint32_t r, double now)
{
    e->ranks[r].waiting = 1;
    e->ranks[r].wait_since = now;
    return HOST_STOP;
}

static inline void host_unblock(eng *e, uint32_t r, engine_label label, double now)
{
    eng_rank *h = &e->ranks[r];
    if (now > h->wait_since)
        eng_slice(e, r, TRACK_HOST, label, -1, h->wait_since, now - h->wait_since);
    h->waiting = 0;
}

static void host_finish_step(eng *e, uint32_t r, double now)
{
    eng_rank *h = &e->ranks[r];
    engine_step_end(&h->acc, now, h->st.last_end);
    eng_slice(e, r, TRACK_HOST, SL_STEP, -1, h->acc.start, h->acc.dur);
    engine_deliver(e->cfg, e->res, h->step, (long)r, &h->acc);
    h->step++;
    h->phase = h->step == e->total_steps ? PH_FINISHED : PH_BEGIN;
}

/* PH_DRIVER_DONE: rank 0 broadcasts the step's inputs (waking the ranks that wait for them);
 * with broadcast_wait a rank that has not seen this step's broadcast blocks. */
static int host_driver_done(eng *e, uint32_t r, double now)
{
    eng_rank *h = &e->ranks[r];
    if (r == 0) {
        e->bcast_step = h->step;
        for (uint32_t q = 1; q < (uint32_t)e->cfg->tp; q++)
            if (e->ranks[q].phase == PH_WAIT_BCAST && eng_push(e, now, EV_HOST, q))
                return HOST_FAIL;
    } else if (engine_waits_broadcast(e->cfg, (long)r) && e->bcast_step < h->step) {
        h->phase = PH_WAIT_BCAST;
        return host_block(e, r, now);
    }
    engine_step_launching(&h->acc, now);
    h->phase = PH_LAUNCH;
    h->pc = 0;
    return HOST_GO;
}

/* PH_LAUNCH: after the last op the host phases that overlap the drain, else the next op's
 * launch: a graph's (opening a run of graphable ops) or the op's own. */
static int host_launch(eng *e, uint32_t r, double now)
{
    eng_rank *h = &e->ranks[r];
    const engine_config *c = e->cfg;
    const engine_host *hc = &c->host[r];
    if (h->pc == e->p->n)
        return host_spend(e, r, now, engine_pre_drain_cost(c, hc, &h->rng), PH_DRAIN,
                          SL_STEP_HOST, -1);
    const prog_op *op = &e->p->ops[h->pc];
    if (engine_in_graph(c, op))
        return host_spend(e, r, now, dist_sample(&c->graph_launch, &h->rng), PH_GRAPH_DONE,
                          SL_GRAPH_LAUNCH, (int32_t)h->pc);
    const dist *d = engine_launch_dist(hc, prog_is_collective(op));
    return host_spend(e, r, now, dist_sample(d, &h->rng), PH_ENQUEUE, SL_LAUNCH, (int32_t)h->pc);
}

/* PH_ENQUEUE: the launched op enters the stream, once the queue has room. */
static int host_enqueue(eng *e, uint32_t r, double now)
{
    eng_rank *h = &e->ranks[r];
    if (engine_queue_full(h->st.count, e->cfg->queue_depth))
        return h->waiting ? HOST_STOP : host_block(e, r, now);
    if (h->waiting) host_unblock(e, r, SL_QUEUE_FULL, now);
    if (stream_enqueue(e, r, (uint32_t)h->pc, now)) return HOST_FAIL;
    h->pc++;
    h->phase = PH_LAUNCH;
    return HOST_GO;
}

/* PH_DRAIN: wait for the stream to empty, then the per-step host work. */
static int host_drain(eng *e, uint32_t r, double now)
{
    eng_rank *h = &e->ranks[r];
    if (h->st.count > 0) return h->waiting ? HOST_STOP : host_block(e, r, now);
    if (h->waiting) host_unblock(e, r, SL_SYNC, now);
    double cost = engine_post_drain_cost(e->cfg, &e->cfg->host[r], &h->rng);
    return host_spend(e, r, now, cost, PH_STEP_DONE, SL_STEP_HOST, -1);
}

/* Run rank r's host from `now` until it starts a timed activity or blocks; -1: out of memory. */
static int host_run(eng *e, uint32_t r, double now)
{
    eng_rank *h = &e->ranks[r];
    int rc = HOST_GO;
    while (rc == HOST_GO) {
        switch (h->phase) {
        case PH_BEGIN:
            engine_step_begin(&h->acc, now);
            rc = host_spend(e, r, now, engine_driver_cost(&e->cfg->host[r], (long)r, &h->rng),
                            PH_DRIVER_DONE, SL_DRIVER, -1);
            break;
        case PH_DRIVER_DONE: rc = host_driver_done(e, r, now); break;
        case PH_WAIT_BCAST:
            if (e->bcast_step < h->step) return 0;
            host_unblock(e, r, SL_BCAST_WAIT, now);
            engine_step_launching(&h->acc, now);
            h->phase = PH_LAUNCH;
            h->pc = 0;
            break;
        case PH_LAUNCH: rc = host_launch(e, r, now); break;
        case PH_GRAPH_DONE: /* the graph is one launch: its nodes enter the stream together */
            for (; h->pc < e->p->n && e->p->ops[h->pc].graphable; h->pc++)
                if (stream_enqueue(e, r, (uint32_t)h->pc, now)) return -1;
            h->phase = PH_LAUNCH;
            break;
        case PH_ENQUEUE: rc = host_enqueue(e, r, now); break;
        case PH_DRAIN: rc = host_drain(e, r, now); break;
        case PH_STEP_DONE: host_finish_step(e, r, now); break;
        case PH_FINISHED: return 0;
        }
    }
    return rc == HOST_FAIL ? -1 : 0;
}

static int on_op_end(eng *e, uint32_t r, double now)
{
    eng_rank *h = &e->ranks[r];
    eng_stream *st = &h->st;
    st->head = (st->head + 1) % st->cap;
    st->count--;
    st->running = 0;
    st->last_end = now;
    if (stream_kick(e, r, now)) return -1;
    if (h->waiting && (h->phase == PH_ENQUEUE || (h->phase == PH_DRAIN && st->count == 0)))
        return host_run(e, r, now);
    return 0;
}

/* ---- setup and loop ----------------------------------------------------------------- */

int engine_events_run(const engine_config *c, engine_result *out, tp_err *err)
{
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
            goto done;
        }
    rc = 0;
    goto done;
oom:
    tp_err_set(err, "engine: out of memory");
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
