/* engine_rules.h: the decisions both engine back ends make, written once (engine.h's model).
 *
 * Contract: the event engine (engine_events.c) and the max-plus recursion (maxplus.c) include this
 * header and take every decision below from it rather than restating it, so the two stay
 * bit-identical by construction: the same draws in the same order per rank, the same
 * floating-point operations in the same order. Each function is static inline (no call in the
 * event loop or the recursion's inner loop) and touches only the arguments it is given.
 * Included by the back ends only; no other module needs it.
 *
 * It also holds the compile-time check of engine_config's fields (ENGINE_BACKEND_FIELDS):
 * each back end states which fields it honours and which it refuses, and one that is in
 * neither list does not build.
 */
#ifndef TPSIM_ENGINE_RULES_H
#define TPSIM_ENGINE_RULES_H

#include <stddef.h>
#include <string.h>

#include "engine.h"

/* ---- engine_config: which back end honours which field ------------------------------ */

/* Honoured once for both back ends: method by engine_run (which back end runs), on_step and
 * on_step_ctx by engine_deliver (where each step's account goes). */
#define ENGINE_SHARED_FIELDS(X) X(method) X(on_step) X(on_step_ctx)
/* A back end that refuses no field passes this as its refusal list. */
#define ENGINE_REFUSES_NONE(X)

#define ENGINE_FIELD_LISTED(name) engine_field_listed_##name,
#define ENGINE_FIELD_REFUSED(name, why) engine_field_listed_##name,
#define ENGINE_FIELD_EXISTS(name)                                                                  \
    _Static_assert(sizeof(((engine_config *)0)->name) > 0, "a listed field of engine_config");
#define ENGINE_FIELD_REFUSED_EXISTS(name, why) ENGINE_FIELD_EXISTS(name)
#define ENGINE_FIELD_COVERED(type, name)                                                           \
    _Static_assert(engine_field_listed_##name >= 0,                                                \
                   "engine_config." #name " is neither honoured nor refused by this back end");
/* At file scope in a back end's .c file: HONOURS(X) calls X(field) for each field it
 * honours, REFUSES(X) X(field, why) for each it refuses whenever set (its refusal function
 * returns `why`). One enumerator per listed field; then every field of ENGINE_CONFIG_FIELDS
 * must name one of them, or the build stops at "'engine_field_listed_NAME' undeclared". A
 * field listed twice is a redeclared enumerator, and a listed name that is no field fails
 * its sizeof: both are build errors too. */
#define ENGINE_BACKEND_FIELDS(HONOURS, REFUSES)                                                    \
    enum {                                                                                         \
        ENGINE_SHARED_FIELDS(ENGINE_FIELD_LISTED) HONOURS(ENGINE_FIELD_LISTED)                     \
            REFUSES(ENGINE_FIELD_REFUSED) engine_fields_listed_end                                 \
    };                                                                                             \
    HONOURS(ENGINE_FIELD_EXISTS)                                                                   \
    REFUSES(ENGINE_FIELD_REFUSED_EXISTS)                                                           \
    ENGINE_CONFIG_FIELDS(ENGINE_FIELD_COVERED)

/* ---- step accounting ------------------------------------------------------------------ */

/* A rank's step starts: an empty account opened at `now`. */
static inline void engine_step_begin(engine_step *acc, double now)
{
    memset(acc, 0, sizeof *acc);
    acc->start = now;
}

/* Host time: a positive cost is host busy time and one timed activity (an event in the event
 * engine); a cost <= 0 takes no time and is not counted. Returns whether it is timed. */
static inline int engine_host_cost(engine_step *acc, double cost)
{
    if (cost <= 0) return 0;
    acc->host += cost;
    return 1;
}

/* A kernel or copy ran gpu_s on the rank's stream. */
static inline void engine_account_compute(engine_step *acc, double gpu_s) { acc->compute += gpu_s; }

/* A collective ended on a rank that arrived at `arrival`: it waited for its peers until the
 * latest arrival, then ran gpu_s. Returns the wait. */
static inline double engine_account_collective(engine_step *acc, double latest, double arrival,
                                               double gpu_s)
{
    double wait = latest - arrival;
    acc->wait_peers += wait;
    acc->allreduce += gpu_s;
    return wait;
}

/* A rank's host is ready to launch the step's first op at `now`: the stream has been empty
 * since the step began (the last one drained it), so the time since is per-step host work the
 * GPU waited out. */
static inline void engine_step_launching(engine_step *acc, double now)
{
    acc->step_work_idle += now - acc->start;
}

/* A rank's step ends at `now`, its last op having ended at `last_end`: the stream has been
 * empty since, while the host did the step's closing work. */
static inline void engine_step_end(engine_step *acc, double now, double last_end)
{
    if (last_end > acc->start && now > last_end) acc->step_work_idle += now - last_end;
    acc->dur = now - acc->start;
}

/* Hands one rank's ended step to on_step, or to rank_steps when there is none. */
static inline void engine_deliver(const engine_config *c, engine_result *r, long step, long rank,
                                  const engine_step *acc)
{
    if (c->on_step)
        c->on_step(c->on_step_ctx, step, rank, acc);
    else
        r->rank_steps[(size_t)step * (size_t)c->tp + (size_t)rank] = *acc;
}

/* ---- host costs and phases, in the order each rank draws them ------------------------- */

/* The step opens with rank 0's driver work (scheduling, broadcasting the inputs); the other
 * ranks have none and draw nothing. */
static inline double engine_driver_cost(const engine_host *h, long rank, dist_rng *rng)
{
    return rank == 0 ? dist_sample(&h->driver, rng) : 0.0;
}

/* With broadcast_wait, a rank > 0 launches nothing before rank 0's broadcast. */
static inline int engine_waits_broadcast(const engine_config *c, long rank)
{
    return rank > 0 && c->broadcast_wait;
}

/* Is this op launched in a graph (one graph launch enqueues a run of graphable ops at once)
 * rather than on its own? */
static inline int engine_in_graph(const engine_config *c, const prog_op *op)
{
    return c->graphs && op->graphable;
}

/* Which cost an op launched on its own draws: collectives have their own. */
static inline const dist *engine_launch_dist(const engine_host *h, int collective)
{
    return collective ? &h->collective : &h->launch;
}

/* The step's host phases, drawn in order and summed. */
static inline double engine_phases_sample(const engine_host *h, dist_rng *rng)
{
    double t = 0;
    for (int i = 0; i < ENGINE_PHASES; i++) t += dist_sample(&h->phases[i], rng);
    return t;
}

/* After the last launch, before the drain: the host phases when they overlap the GPU's
 * remaining work (phases_overlap, vLLM V1), else nothing (no draw). */
static inline double engine_pre_drain_cost(const engine_config *c, const engine_host *h,
                                           dist_rng *rng)
{
    return c->phases_overlap ? engine_phases_sample(h, rng) : 0.0;
}

/* After the drain: the per-step host work, then the phases unless they overlapped (V0). */
static inline double engine_post_drain_cost(const engine_config *c, const engine_host *h,
                                            dist_rng *rng)
{
    double cost = dist_sample(&h->step, rng);
    if (!c->phases_overlap) cost += engine_phases_sample(h, rng);
    return cost;
}

/* ---- the launch queue and the stream --------------------------------------------------- */

/* Queue-full blocking: a launched op enters the stream's queue only while fewer than
 * queue_depth ops are in flight there (an op holds its slot until it ends); graph nodes enter
 * with their graph's launch and never block. */
static inline int engine_queue_full(size_t in_flight, long queue_depth)
{
    return in_flight >= (size_t)queue_depth;
}

/* The same rule over a step's n ops in program order, for a stream that ends them in order:
 * op i enters once op i - depth has ended. The depth is 0 where the queue never fills
 * (queue_depth >= n: fewer than n ops are ever in flight, the drain empties the stream). */
static inline size_t engine_queue_window(long queue_depth, size_t n)
{
    return (size_t)queue_depth < n ? (size_t)queue_depth : 0;
}

/* A blocked launch enters the queue when the op holding its slot ends (`freed`). */
static inline double engine_queue_admit(double launched, double freed)
{
    return freed > launched ? freed : launched;
}

/* An op can start launch_latency_s after it was enqueued, and once its predecessor on the
 * stream has ended (FIFO). */
static inline double engine_op_ready(double enqueued, double launch_latency_s)
{
    return enqueued + launch_latency_s;
}

/* A collective starts on every rank at the latest arrival (a rank arrives when its op would
 * start): fold one arrival into the latest so far (`first`: the first rank to arrive). */
static inline double engine_coll_latest(double latest, double arrival, int first)
{
    return first || arrival > latest ? arrival : latest;
}

/* ... and ends on every rank gpu_s after it. */
static inline double engine_coll_end(double latest, double gpu_s) { return latest + gpu_s; }

#endif
