/* trace_data.c: see trace_data.h. */
#include "trace_data.h"

#include <stdlib.h>
#include <string.h>

static int tr_cmp_rank(const void *a, const void *b)
{
    long x = ((const tr_rank *)a)->rank, y = ((const tr_rank *)b)->rank;
    return (x > y) - (x < y);
}

tr_rank *tr_add_rank(tr_trace *t, const char *file)
{
    /* `file` may be another rank's name, inside the array the realloc below frees */
    char name[sizeof t->ranks->file];
    size_t n = strlen(file);
    if (n >= sizeof name) n = sizeof name - 1;
    memcpy(name, file, n);
    name[n] = '\0';
    if (t->n_ranks >= TR_MAX_RANKS) return NULL;
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
    memcpy(r->file, name, n + 1);
    t->n_ranks++;
    return r;
}

const char *tr_oom_why(const tr_trace *t)
{
    return t->n_ranks >= TR_MAX_RANKS ? "more than 131072 ranks (processes), expected at most "
                                        "131072 in one import"
                                      : "out of memory";
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

static size_t tr_idmap_slot(const tr_idmap *m, int64_t key)
{
    return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ULL) >> 17) & m->mask;
}

long tr_idmap_get(const tr_idmap *m, int64_t key)
{
    if (!m->vals) return -1;
    for (size_t s = tr_idmap_slot(m, key);; s = (s + 1) & m->mask) {
        if (!m->vals[s]) return -1;
        if (m->keys[s] == key) return (long)(m->vals[s] - 1);
    }
}

int tr_idmap_put(tr_idmap *m, int64_t key, size_t val)
{
    if (!m->vals || 2 * (m->n + 1) > m->mask + 1) { /* grow (or start) at half full */
        size_t cap = m->vals ? 2 * (m->mask + 1) : 64;
        tr_idmap g = {calloc(cap, sizeof *g.keys), calloc(cap, sizeof *g.vals), cap - 1, 0};
        if (!g.keys || !g.vals) {
            tr_idmap_free(&g);
            return -1;
        }
        for (size_t s = 0; m->vals && s <= m->mask; s++)
            if (m->vals[s]) {
                size_t d = tr_idmap_slot(&g, m->keys[s]);
                while (g.vals[d]) d = (d + 1) & g.mask;
                g.keys[d] = m->keys[s], g.vals[d] = m->vals[s], g.n++;
            }
        tr_idmap_free(m);
        *m = g;
    }
    size_t s = tr_idmap_slot(m, key);
    while (m->vals[s] && m->keys[s] != key) s = (s + 1) & m->mask;
    if (!m->vals[s]) m->n++;
    m->keys[s] = key;
    m->vals[s] = val + 1;
    return 0;
}

void tr_idmap_free(tr_idmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* Every record of src goes to the rank its pid maps to: one pass per record kind. */
#define TR_SPLIT(field, push)                                                                  \
    for (size_t m = 0; m < t->ranks[i].field.n; m++) {                                         \
        size_t d = (size_t)tr_idmap_get(&map, t->ranks[i].field.v[m].pid);                     \
        if (push(&t->ranks[d], &t->ranks[i].field.v[m])) goto oom;                             \
    }

int tr_split_by_pid(tr_trace *t, size_t i)
{
    tr_idmap map = {0};
    size_t first = t->n_ranks;
    /* the ranks in the order of their first record (gpu, calls, spans, flows), as before
     * sorted by pid: sort the new ranks afterwards */
#define TR_SEEN(field)                                                                         \
    for (size_t m = 0; m < t->ranks[i].field.n; m++) {                                         \
        int32_t pid = t->ranks[i].field.v[m].pid;                                              \
        if (tr_idmap_get(&map, pid) >= 0) continue;                                            \
        if (tr_idmap_put(&map, pid, t->n_ranks)) goto oom;                                     \
        tr_rank *dst = tr_add_rank(t, t->ranks[i].file); /* it copies the name first */        \
        if (!dst) goto oom;                                                                    \
        dst->rank = pid;                                                                       \
    }
    TR_SEEN(gpu)
    TR_SEEN(calls)
    TR_SEEN(spans)
    TR_SEEN(flows)
#undef TR_SEEN
    if (t->n_ranks == first) return 0; /* no records: keep the rank as it is */
    /* the new ranks by pid (the order the split always had) and the map to match */
    qsort(&t->ranks[first], t->n_ranks - first, sizeof *t->ranks, tr_cmp_rank);
    for (size_t d = first; d < t->n_ranks; d++) {
        if (tr_idmap_put(&map, t->ranks[d].rank, d)) goto oom;
        t->ranks[d].world_size = t->ranks[i].world_size;
        memcpy(t->ranks[d].device, t->ranks[i].device, sizeof t->ranks[d].device);
        memcpy(t->ranks[d].model, t->ranks[i].model, sizeof t->ranks[d].model);
        for (size_t o = 0; o < t->ranks[i].ops.n; o++)
            if (tr_push_op(&t->ranks[d], &t->ranks[i].ops.v[o])) goto oom;
    }
    /* each new rank's vectors sized exactly first: 40,000 ranks of a few records each would
     * otherwise hold 40,000 x 256-slot vectors */
#define TR_RESERVE(field)                                                                          \
    for (size_t m = 0; m < t->ranks[i].field.n; m++)                                               \
        t->ranks[tr_idmap_get(&map, t->ranks[i].field.v[m].pid)].field.cap++;                      \
    for (size_t d = first; d < t->n_ranks; d++)                                                    \
        if (t->ranks[d].field.cap &&                                                               \
            !(t->ranks[d].field.v =                                                                \
                  malloc(t->ranks[d].field.cap * sizeof *t->ranks[d].field.v))) {                  \
            t->ranks[d].field.cap = 0;                                                             \
            goto oom;                                                                              \
        }
    TR_RESERVE(gpu)
    TR_RESERVE(calls)
    TR_RESERVE(spans)
    TR_RESERVE(flows)
#undef TR_RESERVE
    TR_SPLIT(gpu, tr_push_gpu)
    TR_SPLIT(calls, tr_push_call)
    TR_SPLIT(spans, tr_push_span)
    TR_SPLIT(flows, tr_push_flow)
    tr_idmap_free(&map);
    /* drop the source rank, keeping the order of the others */
    tr_rank gone = t->ranks[i];
    memmove(&t->ranks[i], &t->ranks[i + 1], (t->n_ranks - i - 1) * sizeof *t->ranks);
    t->ranks[t->n_ranks - 1] = gone;
    tr_truncate(t, t->n_ranks - 1);
    return 0;
oom:
    tr_idmap_free(&map);
    tr_truncate(t, first);
    return -1;
}

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
