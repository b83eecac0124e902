/* evq.h: the event queue of the simulator, a binary min-heap.
 *
 * Contract: events are ordered by (time, insertion sequence): two events at the same
 * time pop in the order they were pushed, so a run is deterministic. Time is a double
 * in SECONDS of simulated time. The queue owns one array, grown geometrically by
 * evq_push only when full; a caller that reserves its worst case with evq_init never
 * allocates in the event loop. An event carries a small type and an entity id whose
 * meaning is the caller's.
 */
#ifndef TPSIM_EVQ_H
#define TPSIM_EVQ_H

#include <stddef.h>
#include <stdint.h>

typedef struct evq_event {
    double time;
    uint64_t seq;
    uint32_t type;
    uint32_t entity;
} evq_event;

typedef struct evq {
    evq_event *heap;
    size_t len, cap;
    uint64_t next_seq;
    uint64_t pushed; /* total pushes: the simulator's event count */
} evq;

/* Returns 0, or -1 when out of memory. */
int evq_init(evq *q, size_t capacity);
void evq_free(evq *q);
int evq_push(evq *q, double time, uint32_t type, uint32_t entity);
/* Pops the earliest event into *out; returns 0, or -1 when empty. */
int evq_pop(evq *q, evq_event *out);
static inline size_t evq_len(const evq *q) { return q->len; }

#endif
