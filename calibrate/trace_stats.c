/* trace_stats.c: see trace_stats.h. */
#include "trace_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tr_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double tr_quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo + 1 >= n) return v[n - 1];
    return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

/* qsort, bsearch: an empty vector's NULL pointer must not reach them */
static void tr_sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1) qsort(v, n, size, cmp);
}

static void *tr_find(const void *key, const void *v, size_t n, size_t size,
                     int (*cmp)(const void *, const void *))
{
    return n ? bsearch(key, v, n, size, cmp) : NULL;
}

tr_dstat tr_stats(double *v, size_t n)
{
    tr_dstat s = {0};
    if (n == 0) return s;
    tr_sort(v, n, sizeof *v, tr_cmp_double);
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) sum += v[i];
    s.n = n;
    s.mean = sum / (double)n;
    for (size_t i = 0; i < n; i++) sq += (v[i] - s.mean) * (v[i] - s.mean);
    s.cv = n > 1 && s.mean != 0 ? sqrt(sq / (double)n) / fabs(s.mean) : 0;
    s.p50 = tr_quantile(v, n, 0.50);
    s.p99 = tr_quantile(v, n, 0.99);
    return s;
}

#define TR_SORT_BY_TS(T)                                                                      \
    static int tr_cmp_##T(const void *a, const void *b)                                       \
    {                                                                                         \
        const T *x = a, *y = b;                                                               \
        return (x->ts > y->ts) - (x->ts < y->ts);                                             \
    }
TR_SORT_BY_TS(tr_gpu)
TR_SORT_BY_TS(tr_call)
TR_SORT_BY_TS(tr_span)

static int tr_cmp_flow(const void *a, const void *b)
{
    const tr_flow *x = a, *y = b;
    if (x->start != y->start) return x->start - y->start;
    if (x->tid != y->tid) return (x->tid > y->tid) - (x->tid < y->tid);
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static int tr_cmp_op(const void *a, const void *b)
{
    const tr_op *x = a, *y = b;
    return (x->ext > y->ext) - (x->ext < y->ext);
}

/* The flow id at (start, tid, ts), 0 if none. */
static int64_t tr_flow_at(const tr_rank *r, int start, int64_t tid, int64_t ts)
{
    tr_flow key = {0, ts, tid, 0, (uint8_t)start};
    const tr_flow *f = tr_find(&key, r->flows.v, r->flows.n, sizeof key, tr_cmp_flow);
    return f ? f->id : 0;
}

/* corr -> call index (open addressing, keys > 0). */
typedef struct tr_map {
    int64_t *keys;
    size_t *vals;
    size_t mask;
} tr_map;

static int tr_map_init(tr_map *m, size_t n)
{
    size_t cap = 64;
    while (cap < 2 * n + 2) cap *= 2;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = malloc(cap * sizeof *m->vals);
    m->mask = cap - 1;
    return m->keys && m->vals ? 0 : -1;
}

static size_t tr_slot(const tr_map *m, int64_t key)
{
    size_t h = (size_t)((uint64_t)key * 0x9E3779B97F4A7C15ULL >> 17) & m->mask;
    while (m->keys[h] && m->keys[h] != key) h = (h + 1) & m->mask;
    return h;
}

static void tr_map_free(tr_map *m)
{
    free(m->keys);
    free(m->vals);
}

static int tr_is_graph_launch(const char *name) { return strstr(name, "GraphLaunch") != NULL; }

typedef struct tr_work {
    long *gpu_step, *call_step;   /* step index (into the report) per record, -1 none */
    long *gpu_call;               /* paired call per GPU record, -1 none */
    uint8_t *call_launch;         /* call is a launch (paired, or named *Launch*) */
    double *vals;                 /* scratch for stats */
} tr_work;

/* The step (index into steps[first..first+n), sorted by start) whose marker is the last to
 * start at or before key and contains it, or -1: a binary search. */
static long tr_step_at(const tr_step *steps, size_t first, size_t n, int64_t key)
{
    size_t lo = 0, hi = n; /* the first marker starting after key */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (steps[first + mid].start <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return -1;
    const tr_step *st = &steps[first + lo - 1];
    return key <= st->end ? (long)(first + lo - 1) : -1;
}


typedef struct tr_rank_at {
    long rank;
    size_t i;
} tr_rank_at;

static int tr_cmp_rank_at(const void *a, const void *b)
{
    const tr_rank_at *x = a, *y = b;
    if (x->rank != y->rank) return (x->rank > y->rank) - (x->rank < y->rank);
    return (x->i > y->i) - (x->i < y->i);
}

/* The first rank of t numbered `rank`, found in by (t's ranks sorted by number): a search per
 * step, not a scan of every rank (80,000 ranks of one step each were 80,000^2 compares). */
static const tr_rank *tr_rank_numbered(const tr_trace *t, const tr_rank_at *by, long rank)
{
    size_t lo = 0, hi = t->n_ranks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (by[mid].rank < rank) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->n_ranks && by[lo].rank == rank ? &t->ranks[by[lo].i] : NULL;
}

/* Each step's host phases: the Python function events of its rank that start inside it. */
static int tr_step_phases(const tr_trace *t, tr_report *out)
{
    size_t cap = 1;
    for (size_t s = 0; s < out->n_steps; s++) cap++;
    double *v = malloc(cap * sizeof *v);
    tr_rank_at *by = malloc((t->n_ranks + 1) * sizeof *by);
    if (!v || !by) {
        free(v);
        free(by);
        return -1;
    }
    for (size_t i = 0; i < t->n_ranks; i++) by[i] = (tr_rank_at){t->ranks[i].rank, i};
    qsort(by, t->n_ranks, sizeof *by, tr_cmp_rank_at);
    for (size_t s = 0; s < out->n_steps; s++) {
        tr_step *st = &out->steps[s];
        const tr_rank *r = tr_rank_numbered(t, by, st->rank);
        for (size_t i = 0; r && i < r->spans.n; i++) {
            const tr_span *sp = &r->spans.v[i];
            if (sp->ts < st->start || sp->ts >= st->end) continue;
            int ph = tr_phase_of(tr_name(t, sp->name));
            if (ph < 0) continue;
            st->phase_ns[ph] += sp->dur;
            st->has_phase[ph] = 1;
        }
    }
    for (int ph = 0; ph < PHASE_N; ph++) {
        size_t n = 0;
        for (size_t s = 0; s < out->n_steps; s++)
            if (out->steps[s].has_phase[ph]) v[n++] = (double)out->steps[s].phase_ns[ph];
        out->phase[ph] = tr_stats(v, n);
    }
    free(v);
    free(by);
    return 0;
}

static int tr_add_step(tr_report *out, size_t *cap, long rank, long index, int64_t start,
                       int64_t end)
{
    if (out->n_steps == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        tr_step *g = realloc(out->steps, c * sizeof *g);
        if (!g) return -1;
        out->steps = g;
        *cap = c;
    }
    tr_step *s = &out->steps[out->n_steps++];
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->index = index;
    s->start = start;
    s->end = end;
    return 0;
}

/* PyTorch's profiler step annotation, "ProfilerStep#N" (N decimal digits). */
static int tr_is_profiler_step(const char *name)
{
    if (strncmp(name, "ProfilerStep#", 13) != 0 || !name[13]) return 0;
    for (const char *p = name + 13; *p; p++)
        if (*p < '0' || *p > '9') return 0;
    return 1;
}

/* Steps of one rank: from markers (--step-marker; by default vLLM's execute_* annotations,
 * else PyTorch's ProfilerStep#N, so a training trace's steps are its profiler steps), else
 * from idle gaps; fills gpu_step / call_step. */
static int tr_find_steps(const tr_trace *t, const tr_rank *r, const tr_options *o, tr_work *w,
                         tr_report *out, size_t *cap, int *used_marker)
{
    size_t first = out->n_steps;
    long idx = 0;
    for (int pass = 0; pass < (o->marker ? 1 : 2) && out->n_steps == first; pass++)
        for (size_t i = 0; i < r->spans.n; i++) {
            const char *name = tr_name(t, r->spans.v[i].name);
            int hit = o->marker ? regexec(o->marker, name, 0, NULL, 0) == 0
                      : pass == 0 ? strncmp(name, "execute_", 8) == 0
                                  : tr_is_profiler_step(name);
            if (hit && tr_add_step(out, cap, r->rank, idx++, r->spans.v[i].ts,
                                   r->spans.v[i].ts + r->spans.v[i].dur))
                return -1;
        }
    size_t n = out->n_steps - first;
    if (n > 0) {
        *used_marker = 1;
        /* a record's step: the last marker starting at or before its key time that contains it */
        for (size_t j = 0; j < r->calls.n; j++)
            w->call_step[j] = tr_step_at(out->steps, first, n, r->calls.v[j].ts);
        for (size_t i = 0; i < r->gpu.n; i++) {
            long c = w->gpu_call[i];
            if (c >= 0) {
                w->gpu_step[i] = w->call_step[c];
                continue;
            }
            w->gpu_step[i] = tr_step_at(out->steps, first, n, r->gpu.v[i].ts);
        }
        return 0;
    }
    /* idle gaps: the median gap between consecutive GPU activities (sorted by start) */
    if (r->gpu.n == 0) return 0;
    size_t ng = 0;
    int64_t run_end = r->gpu.v[0].ts + r->gpu.v[0].dur;
    for (size_t i = 1; i < r->gpu.n; i++) {
        int64_t gap = r->gpu.v[i].ts - run_end;
        w->vals[ng++] = gap > 0 ? (double)gap : 0.0;
        if (r->gpu.v[i].ts + r->gpu.v[i].dur > run_end) run_end = r->gpu.v[i].ts + r->gpu.v[i].dur;
    }
    double median = 0;
    if (ng) {
        tr_dstat s = tr_stats(w->vals, ng);
        median = s.p50;
    }
    double cut = fmax((double)TR_GAP_MIN_NS, TR_GAP_FACTOR * median);
    run_end = r->gpu.v[0].ts + r->gpu.v[0].dur;
    if (tr_add_step(out, cap, r->rank, idx++, r->gpu.v[0].ts, run_end)) return -1;
    w->gpu_step[0] = (long)out->n_steps - 1;
    for (size_t i = 1; i < r->gpu.n; i++) {
        const tr_gpu *g = &r->gpu.v[i];
        if ((double)(g->ts - run_end) > cut &&
            tr_add_step(out, cap, r->rank, idx++, g->ts, g->ts + g->dur))
            return -1;
        if (g->ts + g->dur > run_end) run_end = g->ts + g->dur;
        w->gpu_step[i] = (long)out->n_steps - 1;
    }
    for (size_t j = 0; j < r->calls.n; j++) w->call_step[j] = -1;
    for (size_t i = 0; i < r->gpu.n; i++)
        if (w->gpu_call[i] >= 0) w->call_step[w->gpu_call[i]] = w->gpu_step[i];
    return 0;
}

/* Class of a GPU activity: copies by kind, kernels by name (classified once per name). */
static tr_class tr_class_of(const uint8_t *name_class, const tr_gpu *g)
{
    return g->kind == TR_KERNEL ? (tr_class)name_class[g->name] : TRC_COPY;
}

static void tr_add_class(tr_counts *c, const uint8_t *name_class, const tr_gpu *g, double bytes)
{
    tr_class k = tr_class_of(name_class, g);
    c->class_ns[k] = tr_add_sat(c->class_ns[k], g->dur);
    /* attention's inputs include the whole paged KV cache and collectives move other bytes
     * than their inputs: no achieved bandwidth for those */
    if (bytes > 0 && k != TRC_ATTENTION && k != TRC_COLLECTIVE) {
        c->class_bytes[k] += bytes;
        c->class_bytes_ns[k] = tr_add_sat(c->class_bytes_ns[k], g->dur);
    }
    if (g->kind == TR_KERNEL) {
        c->kernels++;
        if (k == TRC_COLLECTIVE) c->collectives++;
    } else {
        c->memcpys++;
    }
}

/* A rank's records in time order (calls, spans, flows), ops by external id. */
static void tr_rank_sort(tr_rank *r)
{
    tr_sort(r->gpu.v, r->gpu.n, sizeof *r->gpu.v, tr_cmp_tr_gpu);
    tr_sort(r->calls.v, r->calls.n, sizeof *r->calls.v, tr_cmp_tr_call);
    tr_sort(r->spans.v, r->spans.n, sizeof *r->spans.v, tr_cmp_tr_span);
    tr_sort(r->flows.v, r->flows.n, sizeof *r->flows.v, tr_cmp_flow);
    tr_sort(r->ops.v, r->ops.n, sizeof *r->ops.v, tr_cmp_op);
}

/* Pairing by correlation id (ac2g flows fill in missing ids): w->gpu_call per GPU record,
 * w->call_launch per call; counts the flows and those matching no call. */
static void tr_rank_pair(tr_trace *t, tr_rank *r, tr_map *m, tr_work *w, tr_report *out)
{
    out->flows += r->flows.n;
    for (size_t j = 0; j < r->calls.n; j++) {
        tr_call *c = &r->calls.v[j];
        if (!c->corr) c->corr = tr_flow_at(r, 1, c->tid, c->ts);
        if (!c->corr) continue;
        size_t h = tr_slot(m, c->corr);
        m->keys[h] = c->corr;
        m->vals[h] = j;
        if (strstr(tr_name(t, c->name), "Launch")) w->call_launch[j] = 1;
    }
    size_t matched_flows = 0;
    for (size_t i = 0; i < r->gpu.n; i++) {
        tr_gpu *g = &r->gpu.v[i];
        if (!g->corr) g->corr = tr_flow_at(r, 0, g->flow_tid, g->ts);
        w->gpu_call[i] = -1;
        if (!g->corr) continue;
        size_t h = tr_slot(m, g->corr);
        if (m->keys[h] == g->corr) {
            w->gpu_call[i] = (long)m->vals[h];
            w->call_launch[m->vals[h]] = 1;
        }
    }
    for (size_t f = 0; f < r->flows.n; f++)
        if (m->keys[tr_slot(m, r->flows.v[f].id)] == r->flows.v[f].id) matched_flows++;
    out->flows_unmatched += r->flows.n - matched_flows;
}

/* Per step of one rank (index s - first): the GPU's current busy segment, its last GPU
 * activity and its first launch call. */
typedef struct tr_rank_steps {
    size_t first, n;
    int64_t *seg_s, *seg_e, *first_launch, *last_gpu;
} tr_rank_steps;

/* Totals and per-step GPU accounting: classes, busy time, start and end; an op's input bytes
 * go to its first kernel. */
static void tr_rank_gpu(tr_rank *r, const uint8_t *name_class, const tr_work *w, uint8_t *op_used,
                        tr_rank_steps *rs, tr_report *out)
{
    for (size_t i = 0; i < r->gpu.n; i++) {
        const tr_gpu *g = &r->gpu.v[i];
        double bytes = g->kind == TR_KERNEL ? 0.0 : g->bytes;
        if (g->kind == TR_KERNEL) {
            int64_t ext =
                g->ext ? g->ext : (w->gpu_call[i] >= 0 ? r->calls.v[w->gpu_call[i]].ext : 0);
            tr_op key = {ext, 0};
            tr_op *op = ext ? tr_find(&key, r->ops.v, r->ops.n, sizeof key, tr_cmp_op) : NULL;
            if (op && !op_used[op - r->ops.v]) { /* an op's bytes go to its first kernel */
                op_used[op - r->ops.v] = 1;
                bytes = op->bytes;
            }
        }
        tr_add_class(&out->total, name_class, g, bytes);
        if (w->gpu_call[i] < 0) out->total.unpaired++;
        long sl = w->gpu_step[i];
        if (sl < 0) continue;
        size_t s = (size_t)sl - rs->first;
        tr_step *st = &out->steps[sl];
        tr_add_class(&st->c, name_class, g, bytes);
        if (w->gpu_call[i] < 0) st->c.unpaired++;
        int64_t end = g->ts + g->dur;
        if (g->ts < st->start) st->start = g->ts;
        if (end > st->end) st->end = end;
        if (end > rs->last_gpu[s]) rs->last_gpu[s] = end;
        if (rs->seg_e[s] == INT64_MIN || g->ts > rs->seg_e[s]) { /* a new busy segment */
            if (rs->seg_e[s] != INT64_MIN)
                st->gpu_busy = tr_add_sat(st->gpu_busy, rs->seg_e[s] - rs->seg_s[s]);
            rs->seg_s[s] = g->ts;
            rs->seg_e[s] = end;
        } else if (end > rs->seg_e[s]) {
            rs->seg_e[s] = end;
        }
    }
    for (size_t s = 0; s < rs->n; s++)
        if (rs->seg_e[s] != INT64_MIN)
            out->steps[rs->first + s].gpu_busy =
                tr_add_sat(out->steps[rs->first + s].gpu_busy, rs->seg_e[s] - rs->seg_s[s]);
}

/* The launch samples of every rank, for the trace-wide statistics. */
typedef struct tr_all {
    double *launch_all;
    uint32_t *api_name;
    size_t *n_launch_all;
    double *gap_all, *interval_all;
    size_t *n_gap_all;
    double *host_all;
    size_t *n_host_all;
} tr_all;

/* One step's launch calls (order[from..to), in time order): counts, call durations, the gaps
 * and intervals between consecutive calls of a thread, and the host work before the next
 * step's first launch. */
static void tr_step_launches(tr_trace *t, tr_rank *r, const tr_work *w, const tr_rank_steps *rs,
                             size_t s, const size_t *order, size_t from, size_t to,
                             const tr_all *a, tr_report *out)
{
    tr_step *st = &out->steps[rs->first + s];
    size_t nd = 0, ngp = 0;
    int64_t prev_end = INT64_MIN, prev_start = 0, prev_tid = 0;
    for (size_t q = from; q < to; q++) {
        const tr_call *c = &r->calls.v[order[q]];
        st->c.launches++;
        if (tr_is_graph_launch(tr_name(t, c->name))) st->c.graph_launches++;
        w->vals[nd++] = (double)c->dur;
        a->api_name[*a->n_launch_all] = c->name;
        a->launch_all[(*a->n_launch_all)++] = (double)c->dur;
        if (prev_end != INT64_MIN && c->tid == prev_tid && c->ts >= prev_end) {
            a->gap_all[(*a->n_gap_all)++] = (double)(c->ts - prev_end);
            a->interval_all[*a->n_gap_all - 1] = (double)(c->ts - prev_start);
            ngp++;
        }
        if (c->tid != prev_tid || c->ts + c->dur > prev_end || prev_end == INT64_MIN) {
            prev_end = c->ts + c->dur;
            prev_start = c->ts;
            prev_tid = c->tid;
        }
    }
    st->launch_call = tr_stats(w->vals, nd);
    st->launch_gap = tr_stats(a->gap_all + *a->n_gap_all - ngp, ngp);
    st->gpu_idle = tr_add_sat(st->end - st->start, -st->gpu_busy);
    if (s + 1 < rs->n && rs->last_gpu[s] != INT64_MIN && rs->first_launch[s + 1] != INT64_MAX) {
        st->has_host_work = 1;
        st->host_work = rs->first_launch[s + 1] - rs->last_gpu[s];
        a->host_all[(*a->n_host_all)++] = (double)st->host_work;
    }
}

/* Launches: counts and each step's first launch, then each step's calls in time order (a
 * counting sort by step: one pass, not one per step) to tr_step_launches. */
static int tr_rank_launches(tr_trace *t, tr_rank *r, const tr_work *w, tr_rank_steps *rs,
                            const tr_all *a, tr_report *out)
{
    size_t first = rs->first, nsteps = rs->n;
    for (size_t j = 0; j < r->calls.n; j++) {
        const tr_call *c = &r->calls.v[j];
        if (!w->call_launch[j]) continue;
        out->total.launches++;
        if (tr_is_graph_launch(tr_name(t, c->name))) out->total.graph_launches++;
        long sl = w->call_step[j];
        if (sl < 0) continue;
        if (c->ts < rs->first_launch[sl - (long)first]) rs->first_launch[sl - (long)first] = c->ts;
        if (c->ts < out->steps[sl].start) out->steps[sl].start = c->ts;
    }
    size_t *at = calloc(nsteps + 2, sizeof *at), *order = malloc((r->calls.n + 1) * sizeof *order);
    if (!at || !order) {
        free(at), free(order);
        return -1;
    }
    for (size_t j = 0; j < r->calls.n; j++)
        if (w->call_launch[j] && w->call_step[j] >= 0) at[(size_t)w->call_step[j] - first + 2]++;
    for (size_t s = 0; s < nsteps; s++) at[s + 2] += at[s + 1];
    for (size_t j = 0; j < r->calls.n; j++)
        if (w->call_launch[j] && w->call_step[j] >= 0)
            order[at[(size_t)w->call_step[j] - first + 1]++] = j;
    /* now step s's calls are order[at[s] .. at[s + 1]) */
    for (size_t s = 0; s < nsteps; s++)
        tr_step_launches(t, r, w, rs, s, order, at[s], at[s + 1], a, out);
    free(at), free(order);
    return 0;
}

/* The steps of one rank and what happened in them: pairing, steps, GPU accounting, launches. */
static int tr_rank_analyze(tr_trace *t, const uint8_t *name_class, tr_rank *r, const tr_options *o,
                           tr_report *out, size_t *cap, int *used_marker, double *launch_all,
                           uint32_t *api_name, size_t *n_launch_all, double *gap_all,
                           double *interval_all, size_t *n_gap_all, double *host_all,
                           size_t *n_host_all)
{
    tr_rank_sort(r);
    size_t nmax = r->gpu.n > r->calls.n ? r->gpu.n : r->calls.n;
    tr_work w = {malloc((r->gpu.n + 1) * sizeof(long)), malloc((r->calls.n + 1) * sizeof(long)),
                 malloc((r->gpu.n + 1) * sizeof(long)), calloc(r->calls.n + 1, 1),
                 malloc((nmax + 1) * sizeof(double))};
    uint8_t *op_used = calloc(r->ops.n + 1, 1);
    tr_map m = {0};
    tr_rank_steps rs = {0};
    int rc = -1;
    if (!w.gpu_step || !w.call_step || !w.gpu_call || !w.call_launch || !w.vals || !op_used ||
        tr_map_init(&m, r->calls.n))
        goto out;
    tr_rank_pair(t, r, &m, &w, out);
    rs.first = out->n_steps;
    if (tr_find_steps(t, r, o, &w, out, cap, used_marker)) goto out;
    rs.n = out->n_steps - rs.first;
    size_t nsteps = rs.n;
    rs.seg_s = calloc(nsteps + 1, sizeof *rs.seg_s),
    rs.seg_e = calloc(nsteps + 1, sizeof *rs.seg_e);
    rs.first_launch = malloc((nsteps + 1) * sizeof *rs.first_launch);
    rs.last_gpu = malloc((nsteps + 1) * sizeof *rs.last_gpu);
    if (!rs.seg_s || !rs.seg_e || !rs.first_launch || !rs.last_gpu) goto out;
    for (size_t s = 0; s < nsteps; s++) {
        rs.first_launch[s] = INT64_MAX;
        rs.last_gpu[s] = INT64_MIN;
        rs.seg_e[s] = INT64_MIN;
    }
    tr_rank_gpu(r, name_class, &w, op_used, &rs, out);
    tr_all a = {launch_all,   api_name,  n_launch_all, gap_all,
                interval_all, n_gap_all, host_all,     n_host_all};
    if (tr_rank_launches(t, r, &w, &rs, &a, out)) goto out;
    rc = 0;
out:
    free(rs.seg_s), free(rs.seg_e), free(rs.first_launch), free(rs.last_gpu);
    free(w.gpu_step), free(w.call_step), free(w.gpu_call), free(w.call_launch), free(w.vals);
    free(op_used);
    tr_map_free(&m);
    return rc;
}

/* Launch calls grouped by API name (cudaLaunchKernel, cuLaunchKernelEx, ...), by count. */
static int tr_api_stats(tr_report *out, const double *dur, const uint32_t *name, size_t n)
{
    double *vals = malloc((n + 1) * sizeof *vals);
    uint8_t *done = calloc(n + 1, 1);
    if (!vals || !done) {
        free(vals), free(done);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (done[i]) continue;
        size_t k = 0;
        for (size_t j = i; j < n; j++)
            if (!done[j] && name[j] == name[i]) {
                done[j] = 1;
                vals[k++] = dur[j];
            }
        tr_api *g = realloc(out->apis, (out->n_apis + 1) * sizeof *g);
        if (!g) {
            free(vals), free(done);
            return -1;
        }
        out->apis = g;
        out->apis[out->n_apis++] = (tr_api){name[i], tr_stats(vals, k)};
    }
    free(vals), free(done);
    for (size_t i = 1; i < out->n_apis; i++) /* most calls first; few names, insertion sort */
        for (size_t j = i; j > 0 && out->apis[j].dur.n > out->apis[j - 1].dur.n; j--) {
            tr_api x = out->apis[j];
            out->apis[j] = out->apis[j - 1];
            out->apis[j - 1] = x;
        }
    return 0;
}

static int tr_cmp_step(const void *a, const void *b)
{
    const tr_step *x = a, *y = b;
    if (x->start != y->start) return (x->start > y->start) - (x->start < y->start);
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int tr_analyze(tr_trace *t, const tr_options *o, tr_report *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    out->ranks = t->n_ranks;
    size_t n_calls = 0, cap = 0;
    for (size_t i = 0; i < t->n_ranks; i++) n_calls += t->ranks[i].calls.n;
    double *launch_all = malloc((n_calls + 1) * sizeof(double));
    double *gap_all = malloc((n_calls + 1) * sizeof(double));
    uint32_t *api_name = malloc((n_calls + 1) * sizeof *api_name);
    double *interval_all = malloc((n_calls + 1) * sizeof(double));
    uint8_t *name_class = malloc(t->n_names + 1);
    if (name_class)
        for (size_t i = 0; i < t->n_names; i++)
            name_class[i] = (uint8_t)tr_classify(t->names[i], TR_KERNEL);
    double *host_all = NULL;
    size_t n_launch = 0, n_gap = 0, n_host = 0;
    int used_marker = 0, rc = -1;
    if (!launch_all || !gap_all || !api_name || !name_class || !interval_all) goto out;
    size_t host_cap = 0;
    for (size_t i = 0; i < t->n_ranks; i++) {
        /* grown by doubling: a realloc per rank to a few more than the steps so far copied
         * the whole array each time, quadratic in ranks */
        size_t need = out->n_steps + 1 + t->ranks[i].gpu.n + t->ranks[i].spans.n;
        if (need > host_cap) {
            size_t nc = need > 2 * host_cap ? need : 2 * host_cap;
            double *grown = realloc(host_all, nc * sizeof(double));
            if (!grown) goto out;
            host_all = grown, host_cap = nc;
        }
        if (tr_rank_analyze(t, name_class, &t->ranks[i], o, out, &cap, &used_marker, launch_all,
                            api_name, &n_launch, gap_all, interval_all, &n_gap, host_all, &n_host))
            goto out;
    }
    tr_sort(out->steps, out->n_steps, sizeof *out->steps, tr_cmp_step); /* ranks merged on time */
    out->step_source = used_marker ? "marker" : "idle gaps";
    if (tr_api_stats(out, launch_all, api_name, n_launch)) goto out;
    out->launch_call = tr_stats(launch_all, n_launch);
    out->launch_gap = tr_stats(gap_all, n_gap);
    out->launch_interval = tr_stats(interval_all, n_gap);
    out->host_work = tr_stats(host_all, n_host);
    if (tr_step_phases(t, out)) goto out;
    /* kernel fixed cost: the 5th percentile of non-collective kernel durations in steps */
    {
        size_t nk = 0, cap_k = 0;
        for (size_t i = 0; i < t->n_ranks; i++) cap_k += t->ranks[i].gpu.n;
        double *kd = malloc((cap_k + 1) * sizeof *kd);
        if (!kd) goto out;
        for (size_t i = 0; i < t->n_ranks; i++) {
            const tr_rank *r = &t->ranks[i];
            for (size_t g = 0; g < r->gpu.n; g++)
                if (r->gpu.v[g].kind == TR_KERNEL && name_class[r->gpu.v[g].name] != TRC_COLLECTIVE)
                    kd[nk++] = (double)r->gpu.v[g].dur;
        }
        out->kernel_dur = tr_stats(kd, nk);
        out->kernel_fixed_ns = nk ? (int64_t)llround(tr_quantile(kd, nk, 0.05)) : 0;
        free(kd);
    }
    rc = 0;
out:
    free(launch_all);
    free(gap_all);
    free(api_name);
    free(interval_all);
    free(name_class);
    free(host_all);
    if (rc) {
        tr_report_free(out);
        tp_err_set(err, "out of memory analysing the trace");
    }
    return rc;
}

void tr_report_free(tr_report *r)
{
    free(r->steps);
    free(r->apis);
    memset(r, 0, sizeof *r);
}
