/* trace_data.c: see trace_data.h. */
#include "trace_data.h"

#include <stdlib.h>
#include <string.h>

tr_rank *tr_add_rank(tr_trace *t, const char *file)
{
    if (t->n_ranks == t->cap_ranks) {
        size_t cap = t->cap_ranks ? 2 * t->cap_ranks : 4;
        tr_rank *g = realloc(t->ranks, cap * sizeof *g);
        if (!g) return NULL;
        t->ranks = g;
        t->cap_ranks = cap;
    }
    tr_rank *r = &t->ranks[t->n_ranks];
    memset(r, 0, sizeof *r);
    r->rank = (long)t->n_ranks;
    size_t n = strlen(file);
    if (n >= sizeof r->file) n = sizeof r->file - 1;
    memcpy(r->file, file, n);
    r->file[n] = '\0';
    t->n_ranks++;
    return r;
}

static uint64_t tr_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static int tr_rehash(tr_trace *t, size_t n_slots)
{
    uint32_t *slots = calloc(n_slots, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < t->n_names; i++) {
        size_t j = tr_hash(t->names[i], strlen(t->names[i])) & (n_slots - 1);
        while (slots[j]) j = (j + 1) & (n_slots - 1);
        slots[j] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->n_slots = n_slots;
    return 0;
}

uint32_t tr_intern(tr_trace *t, const char *s, size_t len)
{
    if (2 * (t->n_names + 1) > t->n_slots && tr_rehash(t, t->n_slots ? 2 * t->n_slots : 256))
        return UINT32_MAX;
    size_t j = tr_hash(s, len) & (t->n_slots - 1);
    for (; t->slots[j]; j = (j + 1) & (t->n_slots - 1)) {
        const char *name = t->names[t->slots[j] - 1];
        if (strncmp(name, s, len) == 0 && name[len] == '\0') return t->slots[j] - 1;
    }
    if (t->n_names == t->cap_names) {
        size_t cap = t->cap_names ? 2 * t->cap_names : 256;
        char **g = realloc(t->names, cap * sizeof *g);
        if (!g) return UINT32_MAX;
        t->names = g;
        t->cap_names = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) return UINT32_MAX;
    memcpy(copy, s, len);
    copy[len] = '\0';
    t->names[t->n_names] = copy;
    t->slots[j] = (uint32_t)t->n_names + 1;
    return (uint32_t)t->n_names++;
}

/* Grow a TR_VEC by one slot; the element size is passed because the vectors differ in type. */
static void *tr_grow(void **v, size_t *n, size_t *cap, size_t size)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 256;
        void *g = realloc(*v, c * size);
        if (!g) return NULL;
        *v = g;
        *cap = c;
    }
    return (char *)*v + (*n)++ * size;
}

#define TR_PUSH(vec, item)                                                                    \
    do {                                                                                      \
        void *slot = tr_grow((void **)&(vec).v, &(vec).n, &(vec).cap, sizeof *(vec).v);       \
        if (!slot) return -1;                                                                 \
        memcpy(slot, (item), sizeof *(vec).v);                                                \
        return 0;                                                                             \
    } while (0)

int tr_push_gpu(tr_rank *r, const tr_gpu *g) { TR_PUSH(r->gpu, g); }
int tr_push_call(tr_rank *r, const tr_call *c) { TR_PUSH(r->calls, c); }
int tr_push_span(tr_rank *r, const tr_span *s) { TR_PUSH(r->spans, s); }
int tr_push_op(tr_rank *r, const tr_op *o) { TR_PUSH(r->ops, o); }
int tr_push_flow(tr_rank *r, const tr_flow *f) { TR_PUSH(r->flows, f); }

void tr_truncate(tr_trace *t, size_t n)
{
    for (size_t i = n; i < t->n_ranks; i++) {
        tr_rank *r = &t->ranks[i];
        free(r->gpu.v);
        free(r->calls.v);
        free(r->spans.v);
        free(r->ops.v);
        free(r->flows.v);
    }
    if (n < t->n_ranks) t->n_ranks = n;
}

void tr_free(tr_trace *t)
{
    tr_truncate(t, 0);
    free(t->ranks);
    for (size_t i = 0; i < t->n_names; i++) free(t->names[i]);
    free(t->names);
    free(t->slots);
    memset(t, 0, sizeof *t);
}
