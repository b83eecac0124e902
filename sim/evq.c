/* evq.c: see evq.h. */
#include "evq.h"

#include <stdlib.h>

static int evq_before(const evq_event *a, const evq_event *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

int evq_init(evq *q, size_t capacity)
{
    q->len = 0;
    q->next_seq = 0;
    q->pushed = 0;
    q->cap = capacity ? capacity : 16;
    q->heap = malloc(q->cap * sizeof *q->heap);
    return q->heap ? 0 : -1;
}

void evq_free(evq *q)
{
    free(q->heap);
    q->heap = NULL;
    q->len = q->cap = 0;
}

int evq_push(evq *q, double time, uint32_t type, uint32_t entity)
{
    if (q->len == q->cap) {
        size_t cap = q->cap * 2;
        evq_event *grown = realloc(q->heap, cap * sizeof *grown);
        if (!grown) return -1;
        q->heap = grown;
        q->cap = cap;
    }
    evq_event ev = {time, q->next_seq++, type, entity};
    q->pushed++;
    size_t i = q->len++;
    while (i > 0) { /* sift up: move parents down until ev fits */
        size_t parent = (i - 1) / 2;
        if (!evq_before(&ev, &q->heap[parent])) break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = ev;
    return 0;
}

int evq_pop(evq *q, evq_event *out)
{
    if (q->len == 0) return -1;
    *out = q->heap[0];
    evq_event last = q->heap[--q->len];
    size_t i = 0, n = q->len;
    for (;;) { /* sift down: move the smaller child up until last fits */
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && evq_before(&q->heap[child + 1], &q->heap[child])) child++;
        if (!evq_before(&q->heap[child], &last)) break;
        q->heap[i] = q->heap[child];
        i = child;
    }
    if (n > 0) q->heap[i] = last;
    return 0;
}
