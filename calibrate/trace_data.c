/* trace_data.c: see trace_data.h. */
#include "trace_data.h"

#include <stdlib.h>
#include <string.h>

tr_rank *tr_add_rank(tr_trace *t, const char *file)
{
    /* `file` may be another rank's name, inside the array the realloc below frees */
    char name[sizeof t->ranks->file];
    size_t n = strlen(file);
    if (n >= sizeof name) n = sizeof name - 1;
    memcpy(name, file, n);
    name[n] = '\0';
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

static int tr_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

#define TR_MOVE(dst, src, field, want)                                                          \
    for (size_t m = 0; m < (src)->field.n; m++)                                                 \
        if ((src)->field.v[m].pid == (want) && tr_push_##field##_item(dst, &(src)->field.v[m])) \
            goto oom;

static int tr_push_gpu_item(tr_rank *r, const tr_gpu *g) { return tr_push_gpu(r, g); }
static int tr_push_calls_item(tr_rank *r, const tr_call *c) { return tr_push_call(r, c); }
static int tr_push_spans_item(tr_rank *r, const tr_span *s) { return tr_push_span(r, s); }
static int tr_push_flows_item(tr_rank *r, const tr_flow *f) { return tr_push_flow(r, f); }

int tr_split_by_pid(tr_trace *t, size_t i)
{
    tr_rank *src = &t->ranks[i];
    size_t n = src->gpu.n + src->calls.n + src->spans.n + src->flows.n, k = 0;
    int32_t *pids = malloc((n + 1) * sizeof *pids);
    if (!pids) return -1;
    for (size_t j = 0; j < src->gpu.n; j++) pids[k++] = src->gpu.v[j].pid;
    for (size_t j = 0; j < src->calls.n; j++) pids[k++] = src->calls.v[j].pid;
    for (size_t j = 0; j < src->spans.n; j++) pids[k++] = src->spans.v[j].pid;
    for (size_t j = 0; j < src->flows.n; j++) pids[k++] = src->flows.v[j].pid;
    if (k > 1) qsort(pids, k, sizeof *pids, tr_cmp_i32);
    size_t first = t->n_ranks;
    for (size_t j = 0; j < k; j++) {
        if (j > 0 && pids[j] == pids[j - 1]) continue;
        tr_rank *dst = tr_add_rank(t, t->ranks[i].file); /* it copies the name first */
        if (!dst) goto oom;
        src = &t->ranks[i]; /* tr_add_rank may move the ranks */
        dst->rank = pids[j];
        dst->world_size = src->world_size;
        memcpy(dst->device, src->device, sizeof dst->device);
        TR_MOVE(dst, src, gpu, pids[j])
        TR_MOVE(dst, src, calls, pids[j])
        TR_MOVE(dst, src, spans, pids[j])
        TR_MOVE(dst, src, flows, pids[j])
        for (size_t o = 0; o < src->ops.n; o++)
            if (tr_push_op(dst, &src->ops.v[o])) goto oom;
    }
    free(pids);
    if (t->n_ranks == first) return 0; /* no records: keep the rank as it is */
    /* drop the source rank, keeping the order of the others */
    tr_rank gone = t->ranks[i];
    memmove(&t->ranks[i], &t->ranks[i + 1], (t->n_ranks - i - 1) * sizeof *t->ranks);
    t->ranks[t->n_ranks - 1] = gone;
    tr_truncate(t, t->n_ranks - 1);
    return 0;
oom:
    free(pids);
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
