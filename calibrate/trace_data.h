/* trace_data.h: a profiler trace held in memory, as the importers read it and the analysis
 * consumes it: per rank, the host API calls (CUDA/HIP runtime and driver), the GPU
 * activities (kernels, copies, memsets), the host annotations (step markers), and the
 * input sizes of the framework ops (to give kernels their bytes).
 *
 * Contract: times are int64 NANOSECONDS on one absolute clock (Kineto: baseTimeNanoseconds
 * + ts; Nsight: its session clock), so ranks from several files line up. Names are
 * interned in the trace's string table (tr_name returns them). A tr_trace owns all its
 * memory; free it with tr_free. Correlation id 0 means "none recorded".
 * Every time the readers store is checked on the way in (tr_time_ok): |ts| <= TR_TIME_MAX
 * and 0 <= dur <= TR_TIME_MAX, so ts + dur and the difference of two such ends stay inside
 * int64 (|x| <= 2^62 + 2^61) and the analysis does plain arithmetic on them without
 * overflow; sums over many records saturate (tr_add_sat).
 */
#ifndef TPSIM_TRACE_DATA_H
#define TPSIM_TRACE_DATA_H

#include <stddef.h>
#include <stdint.h>

typedef enum tr_gpu_kind { TR_KERNEL, TR_MEMCPY, TR_MEMSET } tr_gpu_kind;

/* A GPU activity on one stream. */
typedef struct tr_gpu {
    int64_t ts, dur;
    int64_t corr;     /* correlation id of the launching call, 0 if none */
    int64_t ext;      /* framework op id (Kineto "External id"), 0 if none */
    int64_t flow_tid; /* thread/stream the activity sits on (for ac2g flow matching) */
    double bytes;     /* copies: bytes moved; kernels: from the launching op's inputs, or 0 */
    uint32_t name;
    uint32_t stream;
    int32_t pid;      /* the event's process (a file holding several ranks splits on it) */
    uint8_t kind;     /* tr_gpu_kind */
} tr_gpu;

/* A host API call (cudaLaunchKernel, cuLaunchKernelEx, hipGraphLaunch, cudaMemcpyAsync...). */
typedef struct tr_call {
    int64_t ts, dur;
    int64_t corr, ext;
    int64_t tid;
    uint32_t name;
    int32_t pid;
} tr_call;

/* A host annotation (user_annotation range). */
typedef struct tr_span {
    int64_t ts, dur;
    uint32_t name;
    int32_t pid;
} tr_span;

/* A framework op's input bytes, keyed by its External id. */
typedef struct tr_op {
    int64_t ext;
    double bytes;
} tr_op;

/* An ac2g flow end: "s" on the launching call, "f" on the GPU activity. */
typedef struct tr_flow {
    int64_t id, ts, tid;
    int32_t pid;
    uint8_t start; /* 1: "s", 0: "f" */
} tr_flow;

/* 2^61 ns, 73 years: epoch times (about 1.8e18 ns in 2026) fit, with room for a duration. */
#define TR_TIME_MAX ((int64_t)1 << 61)
static inline int tr_time_ok(int64_t ts, int64_t dur)
{
    return ts >= -TR_TIME_MAX && ts <= TR_TIME_MAX && dur >= 0 && dur <= TR_TIME_MAX;
}
/* a + b clamped to int64 (totals over many records cannot overflow). */
static inline int64_t tr_add_sat(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
    return a + b;
}

#define TR_VEC(T) struct { T *v; size_t n, cap; }

typedef struct tr_rank {
    long rank;          /* distributed rank (file order when the trace does not say) */
    long world_size;    /* 0 when unknown */
    char file[512];
    char device[128];   /* the GPU's name when recorded */
    char model[64];     /* the LLM's name when recorded (tpsim's otherData.model) */
    TR_VEC(tr_gpu) gpu;
    TR_VEC(tr_call) calls;
    TR_VEC(tr_span) spans;
    TR_VEC(tr_op) ops;
    TR_VEC(tr_flow) flows;
} tr_rank;

typedef struct tr_trace {
    tr_rank *ranks;
    size_t n_ranks, cap_ranks;
    /* string table: open-addressing hash of interned names */
    char **names;
    size_t n_names, cap_names;
    uint32_t *slots;    /* 1 + name index, 0 = empty */
    size_t n_slots;
} tr_trace;

/* At most this many ranks in one import: 2^17, more than the largest GPU clusters built (about
 * 100,000 GPUs; assumed) and about 200 MB of ranks; every pass over them is linear or n log n. */
#define TR_MAX_RANKS 131072
/* A new rank appended to t (zeroed, file recorded), or NULL when out of memory or at
 * TR_MAX_RANKS (tr_oom_why says which). */
tr_rank *tr_add_rank(tr_trace *t, const char *file);
/* Why a reader's allocation failed: the rank bound when t is at it, else out of memory. */
const char *tr_oom_why(const tr_trace *t);
/* The id of the name (len bytes, need not be NUL-terminated); UINT32_MAX on no memory. */
uint32_t tr_intern(tr_trace *t, const char *s, size_t len);
static inline const char *tr_name(const tr_trace *t, uint32_t id) { return t->names[id]; }
/* Append helpers: 0, or -1 when out of memory. */
int tr_push_gpu(tr_rank *r, const tr_gpu *g);
int tr_push_call(tr_rank *r, const tr_call *c);
int tr_push_span(tr_rank *r, const tr_span *s);
int tr_push_op(tr_rank *r, const tr_op *o);
int tr_push_flow(tr_rank *r, const tr_flow *f);
/* Splits rank i into one rank per process id found in its records (rank number = pid),
 * for a file that holds every rank of a job (tpsim's own --trace). 0, or -1 no memory. */
int tr_split_by_pid(tr_trace *t, size_t i);
/* An int64 key -> size_t map (open addressing, grown at half full): how ranks are found by
 * pid or rank number in O(1), so a file of 40,000 processes imports in linear time. */
typedef struct tr_idmap {
    int64_t *keys;
    size_t *vals; /* 1 + value; 0 = empty slot */
    size_t mask, n;
} tr_idmap;
/* The value stored for key, or -1 (as a long) when absent. */
long tr_idmap_get(const tr_idmap *m, int64_t key);
/* Stores key -> val (val < LONG_MAX); 0, or -1 when out of memory. */
int tr_idmap_put(tr_idmap *m, int64_t key, size_t val);
void tr_idmap_free(tr_idmap *m);
/* Drops ranks n.. (a reader's partial work on failure). */
void tr_truncate(tr_trace *t, size_t n);
void tr_free(tr_trace *t);

#endif
