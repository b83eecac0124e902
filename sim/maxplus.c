/* maxplus.c: see maxplus.h. Each line that updates a clock mirrors one step of engine.c's
 * state machines; the comments name which. */
#include "maxplus.h"

#include <stdlib.h>
#include <string.h>

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
    if (c->trace) return "a trace was asked for, and only the event engine writes one";
    if (!(c->launch_latency_s >= 0)) return "a negative launch latency, which the recursion does not model";
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

/* engine.c host_spend: a positive cost is host time and one event. The event count is a
 * local the caller adds up (its address never escapes, so it stays in a register across
 * the draws' calls). */
static inline double mp_spend(double now, double cost, engine_step *acc, unsigned *events)
{
    if (cost <= 0) return now;
    acc->host += cost;
    ++*events;
    return now + cost;
}

int maxplus_run(const engine_config *c, engine_result *out, tp_err *err)
{
    const prog *p = c->program;
    const size_t k = (size_t)c->tp, n = p->n;
    /* the queue can fill only when it is shallower than the step */
    const size_t depth = (size_t)c->queue_depth < n ? (size_t)c->queue_depth : 0;
    const double lat = c->launch_latency_s;
    const long total = c->steps + c->warmup;
    mp_op *ops = malloc(n * sizeof *ops);
    double *host = calloc(k, sizeof *host), *prev_end = calloc(k, sizeof *prev_end);
    double *arrival = calloc(k, sizeof *arrival);
    double *ring = depth ? malloc(k * depth * sizeof *ring) : NULL;
    engine_step *acc = calloc(k, sizeof *acc);
    dist_rng *rng = calloc(k, sizeof *rng);
    int rc = -1;
    if (!ops || !host || !prev_end || !arrival || (depth && !ring) || !acc || !rng) {
        tp_err_set(err, "engine: out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const prog_op *o = &p->ops[i];
        ops[i].gpu_s = o->gpu_s;
        ops[i].coll = prog_is_collective(o);
        ops[i].entry = !(c->graphs && o->graphable)          ? MP_EAGER
                       : i == 0 || !p->ops[i - 1].graphable ? MP_GRAPH_OPEN
                                                             : MP_GRAPH_NODE;
    }
    for (size_t r = 0; r < k; r++) dist_rng_seed(&rng[r], c->seed, (uint64_t)r);
    uint64_t events = 0;
    for (long s = 0; s < total; s++) {
        unsigned ev = 0; /* this step's events: fits, as a step has < 2^32 / 4 ops x ranks */
        /* PH_BEGIN: rank 0's driver work, then (PH_DRIVER_DONE) the broadcast */
        for (size_t r = 0; r < k; r++) {
            memset(&acc[r], 0, sizeof acc[r]);
            acc[r].start = host[r];
        }
        host[0] = mp_spend(host[0], dist_sample(&c->host[0].driver, &rng[0]), &acc[0], &ev);
        if (c->broadcast_wait)
            for (size_t r = 1; r < k; r++)
                if (host[r] < host[0]) { /* PH_WAIT_BCAST, woken by one event at the broadcast */
                    host[r] = host[0];
                    ev++;
                }
        for (size_t i = 0; i < n; i++) {
            const mp_op *o = &ops[i];
            double latest = 0;
            for (size_t r = 0; r < k; r++) {
                double h = host[r];
                if (o->entry == MP_EAGER) { /* PH_LAUNCH, then PH_ENQUEUE */
                    const dist *d = o->coll ? &c->host[r].collective : &c->host[r].launch;
                    h = mp_spend(h, dist_sample(d, &rng[r]), &acc[r], &ev);
                    if (depth && i >= depth) { /* blocked until op i - depth leaves the queue */
                        double freed = ring[r * depth + (i - depth) % depth];
                        if (freed > h) h = freed;
                    }
                } else if (o->entry == MP_GRAPH_OPEN) { /* PH_LAUNCH of a graph, PH_GRAPH_DONE */
                    h = mp_spend(h, dist_sample(&c->graph_launch, &rng[r]), &acc[r], &ev);
                }
                host[r] = h;
                /* stream_kick: at max(enqueue, previous end); an event if the op is not ready */
                double ready = h + lat, pe = prev_end[r], kick = h > pe ? h : pe;
                double start = kick;
                if (ready > kick) {
                    start = ready;
                    ev++;
                }
                if (!o->coll) { /* stream_start_op, then EV_OP_END */
                    acc[r].compute += o->gpu_s;
                    prev_end[r] = start + o->gpu_s;
                    if (depth) ring[r * depth + i % depth] = prev_end[r];
                    ev++;
                } else {
                    arrival[r] = start;
                    if (r == 0 || start > latest) latest = start;
                }
            }
            if (o->coll) { /* the last arrival: everyone ends together */
                double end = latest + o->gpu_s;
                for (size_t r = 0; r < k; r++) {
                    acc[r].wait_peers += latest - arrival[r];
                    acc[r].allreduce += o->gpu_s;
                    prev_end[r] = end;
                    if (depth) ring[r * depth + i % depth] = end;
                }
                ev += (unsigned)k;
            }
        }
        /* PH_DRAIN until the stream is empty, then the per-step host work; PH_STEP_DONE */
        for (size_t r = 0; r < k; r++) {
            double h = host[r];
            if (c->phases_overlap) /* PH_LAUNCH at the end: the phases before the drain */
                h = mp_spend(h, engine_phases_sample(&c->host[r], &rng[r]), &acc[r], &ev);
            if (prev_end[r] > h) h = prev_end[r];
            double cost = dist_sample(&c->host[r].step, &rng[r]);
            if (!c->phases_overlap) cost += engine_phases_sample(&c->host[r], &rng[r]);
            h = mp_spend(h, cost, &acc[r], &ev);
            host[r] = h;
            acc[r].dur = h - acc[r].start;
            engine_deliver(c, out, s, (long)r, &acc[r]);
        }
        events += ev;
    }
    out->events = events;
    rc = 0;
out:
    free(ops);
    free(host);
    free(prev_end);
    free(arrival);
    free(ring);
    free(acc);
    free(rng);
    return rc;
}
