/* trace.c: see trace.h. Numbers are formatted by hand (integers only: times are integer
 * nanoseconds written as microseconds with three decimals), and every per-op fragment is
 * built once in trace_begin, so a slice costs a few memcpy calls. */
#include "trace.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define TW_STREAM_TID 7
#define TW_MAX_EVENT 1024 /* bytes one slice can take (an event and its flow) */
#define TW_FRAG 96

static void tw_flush(trace_writer *w)
{
    if (w->len && fwrite(w->buf, 1, w->len, w->f) != w->len) w->failed = 1;
    w->len = 0;
}

static char *tw_u64(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) *p++ = tmp[--n];
    return p;
}

static char *tw_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return tw_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return tw_u64(p, (uint64_t)v);
}

/* ns as microseconds, three decimals: 1234567 -> "1234.567" */
static char *tw_us(char *p, int64_t ns)
{
    if (ns < 0) {
        *p++ = '-';
        ns = -ns;
    }
    p = tw_u64(p, (uint64_t)(ns / 1000));
    int f = (int)(ns % 1000);
    *p++ = '.';
    *p++ = (char)('0' + f / 100);
    *p++ = (char)('0' + f / 10 % 10);
    *p++ = (char)('0' + f % 10);
    return p;
}

static char *tw_lit(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

/* A JSON string (quotes included), escaped; at most cap - 8 bytes of input are written. */
static char *tw_str(char *p, const char *s, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    *p++ = '"';
    for (size_t i = 0; s[i] && i + 8 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            *p++ = '\\';
            *p++ = (char)c;
        } else if (c < 0x20) {
            p = tw_lit(p, "\\u00");
            *p++ = hex[c >> 4];
            *p++ = hex[c & 15];
        } else {
            *p++ = (char)c;
        }
    }
    *p++ = '"';
    return p;
}

static int64_t tw_ns(double s) { return (int64_t)llround(s * 1e9); }

static char *tw_room(trace_writer *w)
{
    if (w->len + TW_MAX_EVENT > sizeof w->buf) tw_flush(w);
    return w->buf + w->len;
}

static void tw_meta(trace_writer *w, const char *what, long pid, long tid, const char *name)
{
    char *p = tw_room(w), *s = p;
    p = tw_lit(p, ",\n{\"name\":\"");
    p = tw_lit(p, what);
    p = tw_lit(p, "\",\"ph\":\"M\",\"pid\":");
    p = tw_i64(p, pid);
    p = tw_lit(p, ",\"tid\":");
    p = tw_i64(p, tid);
    p = tw_lit(p, ",\"args\":{\"name\":");
    p = tw_str(p, name, 200);
    p = tw_lit(p, "}}");
    w->len += (size_t)(p - s);
}

/* The op names (for the kernel and the launch) and "layer"/"bytes" args, built once per op. */
static const char *tw_frag(const trace_writer *w, size_t op) { return w->frags + op * TW_FRAG; }

void trace_init(trace_writer *w, FILE *f, const char *title)
{
    memset(w, 0, offsetof(trace_writer, buf));
    w->f = f;
    size_t n = strlen(title);
    if (n >= sizeof w->title) n = sizeof w->title - 1;
    memcpy(w->title, title, n);
    w->title[n] = '\0';
}

int trace_start(void *ctx, const engine_config *c)
{
    trace_writer *w = ctx;
    const prog *p = c->program;
    long tp = c->tp;
    int graphs = c->graphs;
    const char *title = w->title;
    w->p = p;
    w->tp = tp;
    w->warmup = c->warmup;
    w->corr_base = malloc(p->n * sizeof *w->corr_base);
    w->ranks = malloc((size_t)tp * sizeof *w->ranks);
    w->frags = malloc(p->n * TW_FRAG);
    if (!w->corr_base || !w->ranks || !w->frags) {
        trace_abort(w);
        w->failed = 1;
        return -1;
    }
    w->started = 1;
    for (size_t i = 0; i < p->n; i++) {
        /* a graph replays a run of graphable ops: they share the launch of its first op */
        int joined = graphs && i > 0 && p->ops[i].graphable && p->ops[i - 1].graphable;
        w->corr_base[i] = joined ? w->corr_base[i - 1] : (uint32_t)i;
        char *q = w->frags + i * TW_FRAG;
        q = tw_lit(q, ",\"layer\":");
        q = tw_i64(q, p->ops[i].layer);
        q = tw_lit(q, ",\"bytes\":");
        /* bytes are whole numbers by construction (element counts x element size) */
        q = tw_i64(q, (int64_t)llround(p->ops[i].bytes));
        *q = '\0';
    }
    for (long r = 0; r < tp; r++) w->ranks[r] = (trace_rank){0, 0, -1};
    char *q = w->buf;
    q = tw_lit(q, "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":0,\n"
                  "\"distributedInfo\":{\"backend\":\"tpsim\",\"rank\":0,\"world_size\":");
    q = tw_i64(q, tp);
    q = tw_lit(q, ",\"ranks_by_pid\":true},\n\"otherData\":{\"tool\":\"tpsim\",\"run\":");
    q = tw_str(q, title, 400);
    q = tw_lit(q, "},\n\"traceEvents\":[\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"sort_index\":0}}");
    w->len = (size_t)(q - w->buf);
    char name[32];
    for (long r = 0; r < tp; r++) {
        char *n = tw_lit(name, "rank ");
        *tw_i64(n, r) = '\0';
        tw_meta(w, "process_name", r, 0, name);
        tw_meta(w, "thread_name", r, 0, "host (dispatch)");
        tw_meta(w, "thread_name", r, TW_STREAM_TID, "stream 7 (compute)");
    }
    return 0;
}

/* ,"op":"NAME": the program op a host slice or copy belongs to */
static char *tw_op_arg(char *p, const prog_op *op)
{
    p = tw_lit(p, ",\"op\":\"");
    p = tw_lit(p, prog_op_name(op));
    *p++ = '"';
    return p;
}

static const char *tw_host_name(const engine_slice *s, const prog_op *op, const char **cat)
{
    *cat = "cpu_op";
    switch ((engine_label)s->label) {
    case SL_LAUNCH:
        *cat = "cuda_runtime";
        return op && (op->kind == PROG_H2D || op->kind == PROG_D2H) ? "cudaMemcpyAsync" : "cudaLaunchKernel";
    case SL_GRAPH_LAUNCH: *cat = "cuda_runtime"; return "cudaGraphLaunch";
    case SL_SYNC: *cat = "cuda_runtime"; return "cudaStreamSynchronize";
    case SL_QUEUE_FULL: return "blocked: launch queue full";
    case SL_DRIVER: return "driver: schedule + broadcast";
    case SL_BCAST_WAIT: return "wait for rank 0 broadcast";
    case SL_STEP_HOST: return "step host work";
    case SL_STEP: *cat = "user_annotation"; return "execute_step";
    default: return "?";
    }
}

static char *tw_head(char *p, const char *cat, const char *name, uint32_t rank, int tid, int64_t ts, int64_t dur)
{
    p = tw_lit(p, ",\n{\"ph\":\"X\",\"cat\":\"");
    p = tw_lit(p, cat);
    p = tw_lit(p, "\",\"name\":\"");
    p = tw_lit(p, name);
    p = tw_lit(p, "\",\"pid\":");
    p = tw_u64(p, rank);
    p = tw_lit(p, ",\"tid\":");
    p = tw_i64(p, tid);
    p = tw_lit(p, ",\"ts\":");
    p = tw_us(p, ts);
    p = tw_lit(p, ",\"dur\":");
    return tw_us(p, dur);
}

static char *tw_flow(char *p, int start, uint64_t id, uint32_t rank, int tid, int64_t ts)
{
    p = tw_lit(p, start ? ",\n{\"ph\":\"s\",\"id\":" : ",\n{\"ph\":\"f\",\"id\":");
    p = tw_u64(p, id);
    p = tw_lit(p, ",\"pid\":");
    p = tw_u64(p, rank);
    p = tw_lit(p, ",\"tid\":");
    p = tw_i64(p, tid);
    p = tw_lit(p, ",\"ts\":");
    p = tw_us(p, ts);
    return tw_lit(p, start ? ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}" : ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
}

void trace_slice(void *ctx, const engine_slice *s)
{
    trace_writer *w = ctx;
    if ((long)s->step < w->warmup || (long)s->rank >= w->tp) return;
    trace_rank *tr = &w->ranks[s->rank];
    uint64_t step = (uint64_t)((long)s->step - w->warmup);
    int64_t start = tw_ns(s->start), end = tw_ns(s->start + s->dur);
    const prog_op *op = s->op >= 0 && (size_t)s->op < w->p->n ? &w->p->ops[s->op] : NULL;
    uint64_t corr = op ? step * (w->p->n + 1) + w->corr_base[s->op] + 1 : 0;
    if (s->track == TRACK_STREAM) {
        if (s->label == SL_WAIT_PEERS) { /* folded into the collective's kernel that follows */
            tr->wait_start = start;
            return;
        }
        if (!op) return;
        int64_t wait = 0;
        if (tr->wait_start >= 0) {
            wait = start - tr->wait_start;
            start = tr->wait_start;
            tr->wait_start = -1;
        }
        if (start < tr->stream_end) start = tr->stream_end;
        if (end < start) end = start;
        tr->stream_end = end;
        int copy = op->kind == PROG_H2D || op->kind == PROG_D2H;
        const char *name = copy ? (op->kind == PROG_H2D ? "Memcpy HtoD (Pinned -> Device)" : "Memcpy DtoH (Device -> Pinned)")
                                : prog_op_name(op);
        char *p = tw_room(w), *b = p;
        p = tw_head(p, copy ? "gpu_memcpy" : "kernel", name, s->rank, TW_STREAM_TID, start, end - start);
        p = tw_lit(p, ",\"args\":{\"correlation\":");
        p = tw_u64(p, corr);
        p = tw_lit(p, ",\"stream\":7,\"step\":");
        p = tw_u64(p, step);
        if (copy) p = tw_op_arg(p, op);
        p = tw_lit(p, tw_frag(w, (size_t)s->op));
        if (wait > 0) {
            p = tw_lit(p, ",\"wait_peers_ns\":");
            p = tw_i64(p, wait);
        }
        p = tw_lit(p, "}}");
        p = tw_flow(p, 0, corr, s->rank, TW_STREAM_TID, start);
        w->len += (size_t)(p - b);
        return;
    }
    const char *cat, *name = tw_host_name(s, op, &cat);
    char step_name[48];
    if (s->label == SL_STEP) { /* "execute_step_N": found by trace import's default marker */
        char *q = tw_lit(step_name, "execute_step_");
        *tw_u64(q, step) = '\0';
        name = step_name;
    }
    if (s->label != SL_STEP) { /* the step annotation encloses the step's host slices */
        if (start < tr->host_end) start = tr->host_end;
        if (end < start) end = start;
        tr->host_end = end;
    }
    char *p = tw_room(w), *b = p;
    p = tw_head(p, cat, name, s->rank, 0, start, end - start);
    p = tw_lit(p, ",\"args\":{\"step\":");
    p = tw_u64(p, step);
    if (s->label != SL_STEP && op) {
        p = tw_op_arg(p, op);
        p = tw_lit(p, tw_frag(w, (size_t)s->op));
    }
    int launch = corr && (s->label == SL_LAUNCH || s->label == SL_GRAPH_LAUNCH);
    if (launch) {
        p = tw_lit(p, ",\"correlation\":");
        p = tw_u64(p, corr);
    }
    p = tw_lit(p, "}}");
    if (launch) p = tw_flow(p, 1, corr, s->rank, 0, start);
    w->len += (size_t)(p - b);
}

int trace_end(trace_writer *w, tp_err *err)
{
    if (!w->started) {
        trace_abort(w);
        return tp_err_set(err, "--trace: the run never started");
    }
    char *p = tw_room(w);
    p = tw_lit(p, "\n]}\n");
    w->len = (size_t)(p - w->buf);
    tw_flush(w);
    int failed = w->failed || ferror(w->f);
    trace_abort(w);
    return failed ? tp_err_set(err, "--trace: write failed") : 0;
}

void trace_abort(trace_writer *w)
{
    free(w->corr_base);
    free(w->ranks);
    free(w->frags);
    w->corr_base = NULL;
    w->ranks = NULL;
    w->frags = NULL;
}
