/* maxplus.c: see maxplus.h. Every rule that moves a clock or fills an account comes from
 * engine_rules.h, shared with engine_events.c's state machines; the comments name the event
 * engine's phase or function each step of the recursion stands for. */
#include "maxplus.h"

#include <stdlib.h>
#include <string.h>

#include "engine_rules.h"

/* The fields of engine_config the recursion honours, and those it refuses whenever they are
 * set (maxplus_refusal returns the reason given here). A new field goes into one of the two
 * lists, or the build stops. launch_latency_s is honoured, except that maxplus_refusal
 * refuses a negative one. */
#define MP_HONOURS(X)                                                                              \
    X(program) X(tp) X(steps) X(warmup) X(seed) X(host) X(graphs) X(graph_launch)                  \
        X(broadcast_wait) X(phases_overlap) X(queue_depth) X(launch_latency_s)
#define MP_REFUSES(X) X(trace, "a trace was asked for, and only the event engine writes one")
ENGINE_BACKEND_FIELDS(MP_HONOURS, MP_REFUSES)

/* how the host reaches an op: its own eager launch, the graph launch that opens a run of
 * graphable ops, or nothing more (a later node of that graph, enqueued with the first) */
enum { MP_EAGER, MP_GRAPH_OPEN, MP_GRAPH_NODE };

typedef struct mp_op {
    double gpu_s;
    int coll;
    int entry;
} mp_op;

const char *maxplus_refusal(const engine_config *c)
{
#define MP_REFUSE_SET(name, why)                                                                   \
    if (c->name) return why;
    MP_REFUSES(MP_REFUSE_SET)
#undef MP_REFUSE_SET
    if (!(c->launch_latency_s >= 0))
        return "a negative launch latency, which the recursion does not model";
    for (size_t i = 0; i < c->program->n; i++)
        switch (c->program->ops[i].kind) {
        case PROG_KERNEL:
        case PROG_H2D:
        case PROG_D2H:
        case PROG_ALLREDUCE:
        case PROG_ALLGATHER: break;
        default: /* a kind added later: only the event engine knows its semantics */
            return "the program has an op kind the recursion does not know";
        }
    return NULL;
}

int maxplus_supports(const engine_config *c) { return maxplus_refusal(c) == NULL; }

/* The recursion's state: per rank the host clock, the stream's last end, the collective
 * arrival, a ring of the last `depth` op ends (depth 0: the queue never fills), the step's
 * account and the draws. */
typedef struct mp {
    const engine_config *c;
    size_t k, n, depth;
    mp_op *ops;
    int lognormal[2]; /* every rank's launch (0) or collective (1) cost is a lognormal */
    double *host, *prev_end, *arrival, *ring, *cost;
    engine_step *acc;
    dist_rng *rng;
} mp;

static void mp_free(mp *m)
{
    free(m->ops);
    free(m->host);
    free(m->prev_end);
    free(m->arrival);
    free(m->ring);
    free(m->cost);
    free(m->acc);
    free(m->rng);
}

/* Allocates the state, classifies the ops and seeds each rank's draws; -1: out of memory. */
static int mp_init(mp *m, const engine_config *c)
{
    const prog *p = c->program;
    const size_t k = (size_t)c->tp, n = p->n, depth = engine_queue_window(c->queue_depth, n);
    *m = (mp){.c = c, .k = k, .n = n, .depth = depth};
    m->ops = malloc(n * sizeof *m->ops);
    m->host = calloc(k, sizeof *m->host);
    m->prev_end = calloc(k, sizeof *m->prev_end);
    m->arrival = calloc(k, sizeof *m->arrival);
    m->ring = depth ? malloc(k * depth * sizeof *m->ring) : NULL;
    m->cost = malloc(k * sizeof *m->cost);
    m->acc = calloc(k, sizeof *m->acc);
    m->rng = calloc(k, sizeof *m->rng);
    if (!m->ops || !m->host || !m->prev_end || !m->arrival || (depth && !m->ring) || !m->cost ||
        !m->acc || !m->rng)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const prog_op *o = &p->ops[i];
        m->ops[i].gpu_s = o->gpu_s;
        m->ops[i].coll = prog_is_collective(o);
        m->ops[i].entry = !engine_in_graph(c, o)                ? MP_EAGER
                          : i == 0 || !p->ops[i - 1].graphable ? MP_GRAPH_OPEN
                                                                : MP_GRAPH_NODE;
    }
    m->lognormal[0] = m->lognormal[1] = 1;
    for (size_t r = 0; r < k; r++) {
        dist_rng_seed(&m->rng[r], c->seed, (uint64_t)r);
        for (int coll = 0; coll < 2; coll++)
            m->lognormal[coll] &=
                engine_launch_dist(&c->host[r], coll)->draw == DIST_DRAW_LOGNORMAL;
    }
    return 0;
}

/* engine_events.c host_spend: a positive cost is host time and one event. The event count is a
 * local the caller adds up (its address never escapes, so it stays in a register across
 * the draws' calls). */
static inline double mp_spend(double now, double cost, engine_step *acc, unsigned *events)
{
    if (!engine_host_cost(acc, cost)) return now;
    ++*events;
    return now + cost;
}

/* PH_BEGIN on every rank: rank 0's driver work, then (PH_DRIVER_DONE) its broadcast, which
 * ranks waiting for it reach by one event (PH_WAIT_BCAST). Returns the events. */
static inline unsigned mp_step_begin(const mp *m)
{
    const engine_config *c = m->c;
    double *host = m->host;
    unsigned ev = 0;
    for (size_t r = 0; r < m->k; r++) engine_step_begin(&m->acc[r], host[r]);
    host[0] = mp_spend(host[0], engine_driver_cost(&c->host[0], 0, &m->rng[0]), &m->acc[0], &ev);
    for (size_t r = 1; r < m->k; r++)
        if (engine_waits_broadcast(c, (long)r) && host[r] < host[0]) {
            host[r] = host[0];
            ev++;
        }
    for (size_t r = 0; r < m->k; r++) engine_step_launching(&m->acc[r], host[r]);
    return ev;
}

/* The host costs of op o's launch on every rank (PH_LAUNCH, or the graph launch opening a
 * run; a later node of a graph draws nothing), drawn in one pass before the recursion visits
 * the ranks: a rank draws from its own stream in its own program order, so this order of
 * the draws gives each rank the same values as the event engine, and the recursion's pass
 * over the ranks makes no call. Where every rank's cost is a lognormal, the pass draws the
 * exponents and one dist_exp_n takes their exps (dist_sample's values, dist.h). */
static inline void mp_draw(const mp *m, const mp_op *o, double *cost)
{
    const engine_config *c = m->c;
    dist_rng *rng = m->rng;
    if (o->entry == MP_GRAPH_NODE) return;
    const int eager = o->entry == MP_EAGER;
    const int lognormal =
        eager ? m->lognormal[o->coll] : c->graph_launch.draw == DIST_DRAW_LOGNORMAL;
    for (size_t r = 0; r < m->k; r++) {
        const dist *d = eager ? engine_launch_dist(&c->host[r], o->coll) : &c->graph_launch;
        cost[r] = lognormal ? dist_lognormal_exponent(d, &rng[r]) : dist_sample(d, &rng[r]);
    }
    if (lognormal) dist_exp_n(cost, m->k);
}

/* The step's ops, each on every rank in rank order: its launch (PH_LAUNCH, then PH_ENQUEUE,
 * blocked while the queue is full; or the graph launch opening a run, then PH_GRAPH_DONE),
 * its start (stream_kick: an event where it is not ready when the stream is free) and its end
 * (stream_start_op, EV_OP_END); a collective ends on every rank at once after the last
 * arrival. Returns the events. One function for the whole loop, so that the state below is
 * loaded once a step, not once an op. */
static inline unsigned mp_ops(const mp *m)
{
    const engine_config *c = m->c;
    const size_t k = m->k, n = m->n, depth = m->depth;
    const double lat = c->launch_latency_s;
    /* the state in locals: a draw may call out, and m's fields would then be read again */
    double *host = m->host, *prev_end = m->prev_end, *arrival = m->arrival, *ring = m->ring;
    double *cost = m->cost;
    engine_step *acc = m->acc;
    unsigned ev = 0;
    for (size_t i = 0; i < n; i++) {
        const mp_op *o = &m->ops[i];
        double latest = 0;
        mp_draw(m, o, cost);
        for (size_t r = 0; r < k; r++) {
            double h = host[r];
            if (o->entry != MP_GRAPH_NODE) {
                h = mp_spend(h, cost[r], &acc[r], &ev);
                if (o->entry == MP_EAGER && depth && i >= depth) /* op i - depth holds the slot */
                    h = engine_queue_admit(h, ring[r * depth + (i - depth) % depth]);
            }
            host[r] = h;
            /* stream_kick: at max(enqueue, previous end); an event if the op is not ready */
            double ready = engine_op_ready(h, lat), pe = prev_end[r], kick = h > pe ? h : pe;
            double start = kick;
            if (ready > kick) {
                start = ready;
                ev++;
            }
            if (!o->coll) {
                engine_account_compute(&acc[r], o->gpu_s);
                prev_end[r] = start + o->gpu_s;
                if (depth) ring[r * depth + i % depth] = prev_end[r];
                ev++;
            } else {
                arrival[r] = start;
                latest = engine_coll_latest(latest, start, r == 0);
            }
        }
        if (o->coll) {
            double end = engine_coll_end(latest, o->gpu_s);
            for (size_t r = 0; r < k; r++) {
                engine_account_collective(&acc[r], latest, arrival[r], o->gpu_s);
                prev_end[r] = end;
                if (depth) ring[r * depth + i % depth] = end;
            }
            ev += (unsigned)k;
        }
    }
    return ev;
}

/* After the last op on every rank: the phases that overlap the drain (PH_LAUNCH at the
 * end), PH_DRAIN until the stream is empty, the per-step host work, PH_STEP_DONE; each
 * rank's step goes out. Returns the events. */
static inline unsigned mp_step_end(const mp *m, long s, engine_result *out)
{
    const engine_config *c = m->c;
    unsigned ev = 0;
    for (size_t r = 0; r < m->k; r++) {
        const engine_host *hc = &c->host[r];
        engine_step *acc = &m->acc[r];
        double h = mp_spend(m->host[r], engine_pre_drain_cost(c, hc, &m->rng[r]), acc, &ev);
        if (m->prev_end[r] > h) h = m->prev_end[r];
        h = mp_spend(h, engine_post_drain_cost(c, hc, &m->rng[r]), acc, &ev);
        m->host[r] = h;
        engine_step_end(acc, h, m->prev_end[r]);
        engine_deliver(c, out, s, (long)r, acc);
    }
    return ev;
}

int maxplus_run(const engine_config *c, engine_result *out, tp_err *err)
{
    mp m;
    /* one call each of mp_init and mp_free, so both are inlined and the compiler sees that
     * m's arrays never escape (else each draw's call out would force them to be re-read) */
    int rc = mp_init(&m, c);
    if (rc == 0) {
        const long total = c->steps + c->warmup;
        uint64_t events = 0;
        for (long s = 0; s < total; s++) {
            /* this step's events: fits, as a step has < 2^32 / 4 ops x ranks */
            unsigned ev = mp_step_begin(&m);
            ev += mp_ops(&m);
            events += ev + mp_step_end(&m, s, out);
        }
        out->events = events;
    }
    mp_free(&m);
    return rc ? tp_err_set(err, "engine: out of memory") : 0;
}
