/* engine.h: the discrete-event simulation of TP decode steps.
 *
 * Model (per rank r of k, all ranks running the same step program):
 *  - a HOST thread walks the program: rank 0 first spends its driver cost (scheduling,
 *    broadcasting the step's inputs); with broadcast_wait the other ranks wait for that
 *    broadcast. Then, per op, the host spends a launch cost (collective launches have their
 *    own) and enqueues the op, blocking while queue_depth ops are in flight on the stream.
 *    After the last op it waits for the stream to drain (the sampled tokens copied back)
 *    and spends the per-step host cost (and the host phases, unless phases_overlap spent
 *    them before the drain); that ends the step. In graph mode each run of
 *    graphable ops is one graph: the host spends one graph-launch cost and enqueues the
 *    run at once; the other ops are launched one by one as in eager mode.
 *  - a COMPUTE STREAM runs ops FIFO: an op starts when enqueued + launch_latency has passed
 *    and its predecessor has finished, and runs for its gpu_s.
 *  - a COLLECTIVE is one op on every rank's stream: a rank arrives when its op would start;
 *    all ranks finish at (latest arrival) + gpu_s. Early ranks wait for peers.
 * Per rank and step the GPU time splits exactly into compute + allreduce + wait_peers +
 * gpu_idle = the step's duration (idle is the remainder). Time is a double in SECONDS.
 * Each rank draws from its own PCG32 stream (seed, stream = rank), so adding a rank does
 * not shift another rank's draws. All memory is allocated before the event loop.
 * Two back ends compute this: the event engine (engine_events.c, engine_events.h: the reference
 * semantics, and the only one that traces) and maxplus.h's recursion, bit-identical on every
 * config it accepts and an order of magnitude faster. engine_run (engine.c) is the one
 * caller that chooses between them (ENGINE_AUTO: the recursion whenever it applies); neither
 * back end calls the other or the dispatcher. The decisions both make (step accounting, host
 * costs and phases, queue-full blocking, op and collective start) are written once, in
 * engine_rules.h, and a field of engine_config that a back end neither honours nor refuses
 * does not build (ENGINE_CONFIG_FIELDS below).
 * Step accounts go to cfg->on_step as each rank ends a step (memory O(k + program)), or,
 * without on_step, into engine_result.rank_steps (O(steps * k)).
 */
#ifndef TPSIM_ENGINE_H
#define TPSIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "dist.h"
#include "err.h"
#include "prog.h"

#define ENGINE_PHASES 5 /* the named per-step host phases (phase.h) */

typedef struct engine_host {
    dist launch;     /* per kernel or copy launch */
    dist collective; /* per collective launch */
    dist step;       /* per step after the drain: schedule, prepare inputs, sample */
    dist driver;     /* per step before launching; meaningful on rank 0 */
    dist phases[ENGINE_PHASES]; /* per-step host phases, spent as engine_config.phases_overlap
                                   says (engine_rules.h draws them) */
} engine_host;

/* One rank's account of one step. */
typedef struct engine_step {
    double start, dur;                     /* on this rank: from its step start to its end */
    double host;                           /* host busy: launches, driver, per-step work */
    double compute, allreduce, wait_peers; /* GPU stream time by kind */
    double step_work_idle; /* GPU idle while the host does per-step work: before its first
                              launch (driver, broadcast wait) and after its last op ends
                              (phases, host.step); the rest of the idle waits on launches */
} engine_step;

/* Receives each rank's step as it ends (warm-up steps included, step counted from 0).
 * Ranks end a step in any order, but a rank's steps arrive in order. */
typedef void (*engine_step_fn)(void *ctx, long step, long rank, const engine_step *acc);

typedef enum engine_method {
    ENGINE_AUTO,    /* the max-plus recursion when it applies, else the event engine */
    ENGINE_EVENTS,  /* the event engine */
    ENGINE_MAXPLUS  /* the recursion, or an error where it does not apply */
} engine_method;

/* engine_config's fields, one X(type, name) each: the struct below is generated from this
 * list. Each back end lists the fields it honours (engine_rules.h ENGINE_BACKEND_FIELDS: the
 * event engine in engine_events.c, the recursion in maxplus.c, which may instead refuse a field in
 * maxplus_refusal); a field added here that a back end neither honours nor refuses is a build
 * error in that back end ("'engine_field_listed_NAME' undeclared"), so no back end ignores
 * one silently. method, on_step and on_step_ctx are honoured once for both
 * (ENGINE_SHARED_FIELDS: engine_run and engine_deliver). */
#define ENGINE_CONFIG_FIELDS(X)                                                                    \
    X(const prog *, program)         /* ops with gpu_s filled in; not owned */                     \
    X(long, tp)                                                                                    \
    X(long, steps)                   /* measured steps */                                          \
    X(long, warmup)                  /* steps simulated first, left out of the statistics */       \
    X(uint64_t, seed)                                                                              \
    X(const engine_host *, host)     /* tp entries, one per rank; not owned */                     \
    X(int, graphs)                   /* CUDA-graph replay: one launch per step */                  \
    X(dist, graph_launch)                                                                          \
    X(int, broadcast_wait)           /* ranks > 0 wait for rank 0's driver work each step */       \
    X(int, phases_overlap)           /* 0: host phases after the drain, with host.step (vLLM       \
                                        V0); 1: after the last launch, before the drain, so        \
                                        they hide behind the GPU's remaining work (V1 async        \
                                        scheduling) */                                             \
    X(long, queue_depth)             /* launch queue depth per stream, >= 1 */                     \
    X(double, launch_latency_s)                                                                    \
    X(const struct engine_sink *, trace) /* receives every timeline slice as it happens; NULL:     \
                                            none */                                                \
    X(engine_method, method)                                                                       \
    X(engine_step_fn, on_step)       /* NULL: keep every step in engine_result.rank_steps */       \
    X(void *, on_step_ctx)

typedef struct engine_config {
#define ENGINE_FIELD_DECLARE(type, name) type name;
    ENGINE_CONFIG_FIELDS(ENGINE_FIELD_DECLARE)
#undef ENGINE_FIELD_DECLARE
} engine_config;

typedef enum engine_track { TRACK_HOST, TRACK_STREAM } engine_track;
typedef enum engine_label {
    SL_LAUNCH,       /* host: launching op */
    SL_QUEUE_FULL,   /* host: blocked on a full launch queue */
    SL_DRIVER,       /* host: rank 0 driver work (schedule, broadcast) */
    SL_BCAST_WAIT,   /* host: waiting for rank 0's broadcast */
    SL_GRAPH_LAUNCH, /* host: cudaGraphLaunch */
    SL_SYNC,         /* host: waiting for the stream to drain */
    SL_STEP_HOST,    /* host: per-step work */
    SL_OP,           /* stream: op running */
    SL_WAIT_PEERS,   /* stream: collective waiting for the slowest rank */
    SL_STEP          /* host: the whole step (its start to its end), given when it ends */
} engine_label;

typedef struct engine_slice {
    double start, dur;
    uint32_t rank, step;
    int32_t op; /* program index, -1 if none */
    uint8_t track, label;
} engine_slice;

/* Where the timeline goes: slice(ctx, s) is called once per slice, in event order (per
 * thread, in time order); s is only valid during the call. */
struct engine_config;
typedef struct engine_sink {
    /* before the first slice; -1: no memory */
    int (*start)(void *ctx, const struct engine_config *c);
    void (*slice)(void *ctx, const engine_slice *s);
    void *ctx;
} engine_sink;

typedef struct engine_result {
    long tp, steps, warmup;
    engine_step *rank_steps; /* (warmup + steps) * tp, [step * tp + rank]; NULL with on_step */
    uint64_t events;         /* events processed */
    engine_method method;    /* the back end that ran: ENGINE_EVENTS or ENGINE_MAXPLUS */
    const char *method_why;  /* why that one (a static string, one clause) */
} engine_result;

/* Checks cfg, sets up out and runs the back end cfg->method asks for (ENGINE_AUTO: the
 * recursion where maxplus_refusal has no objection, else the event engine); on error out is
 * left empty. Defined in engine.c. */
int engine_run(const engine_config *cfg, engine_result *out, tp_err *err);
void engine_result_free(engine_result *r);
static inline const engine_step *engine_at(const engine_result *r, long step, long rank)
{
    return &r->rank_steps[(size_t)step * (size_t)r->tp + (size_t)rank];
}

#endif
