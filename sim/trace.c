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
#define TW_KNAME 160

static char *tw_lit(char *p, const char *s);

/* Writes the buffer (deflated when gzip; `finish` ends the gzip stream). */
static void tw_write(trace_writer *w, int finish)
{
    if (!w->gzip) {
        if (w->len && fwrite(w->buf, 1, w->len, w->f) != w->len) w->failed = 1;
        w->len = 0;
        return;
    }
    unsigned char out[16384];
    w->z.next_in = (unsigned char *)w->buf;
    w->z.avail_in = (uInt)w->len;
    int rc;
    do {
        w->z.next_out = out;
        w->z.avail_out = sizeof out;
        rc = deflate(&w->z, finish ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_ERROR) {
            w->failed = 1;
            break;
        }
        size_t n = sizeof out - w->z.avail_out;
        if (n && fwrite(out, 1, n, w->f) != n) w->failed = 1;
    } while (w->z.avail_out == 0 || (finish && rc != Z_STREAM_END));
    w->len = 0;
}

static void tw_flush(trace_writer *w) { tw_write(w, 0); }

int trace_gzip(trace_writer *w)
{
    memset(&w->z, 0, sizeof w->z);
    /* 15 + 16: a gzip header and trailer around the deflate stream */
    if (deflateInit2(&w->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    w->gzip = 1;
    return 0;
}

void trace_collectives(trace_writer *w, const coll_setup *c, double elem_bytes)
{
    w->coll = *c;
    w->elem_bytes = elem_bytes;
    w->have_coll = 1;
}

/* "RING", "LL128", "SIMPLE": NCCL's spelling in kernel names, from the tuner's "Ring"... */
/* The kernel a real run shows for collective op o (trace.h), into out (TW_KNAME bytes): the
 * name the collective model that priced it gives (coll.h), NCCL's ring when none priced it. */
static void tw_coll_name(const trace_writer *w, const prog_op *o, int graphs, char *out)
{
    double eb = w->elem_bytes > 0 ? w->elem_bytes : 2;
    if (o->kind == PROG_ALLGATHER) {
        snprintf(out, TW_KNAME,
                 "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
        return;
    }
    coll_cost c = {.priced_by = COLL_NCCL_FIT};
    if (w->have_coll && w->coll.cal) c = coll_allreduce(&w->coll, o->bytes, graphs);
    coll_models[c.priced_by].kernel_name(&c, w->tp, eb, out, TW_KNAME);
}

/* The collective's args after the kernel name: what tpsim calls it and what priced it. */
static char *tw_coll_args(char *p, const trace_writer *w, const prog_op *o, int graphs)
{
    p = tw_lit(p, ",\"op\":\"");
    p = tw_lit(p, prog_op_name(o));
    p = tw_lit(p, o->kind == PROG_ALLGATHER ? "\",\"collective\":\"all_gather\""
                                            : "\",\"collective\":\"all_reduce\"");
    coll_cost c = {0};
    if (o->kind == PROG_ALLREDUCE && w->have_coll && w->coll.cal)
        c = coll_allreduce(&w->coll, o->bytes, graphs);
    p = tw_lit(p, ",\"priced_by\":\"");
    p = tw_lit(p, c.model ? c.model : "none");
    *p++ = '"';
    int assumed = !c.model || !coll_models[c.priced_by].algo_known;
    return tw_lit(p, assumed ? ",\"algo_assumed\":true" : ",\"algo_assumed\":false");
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

/* A time in ticks of 2^-10 us, written exactly in decimal microseconds (a multiple of 2^-10
 * has at most ten decimals: 1 tick = 0.0009765625): 1536 -> "1.5". A viewer parses each to
 * that exact double, and ts + dur is then exact too (both are multiples of 2^-10 below 2^43),
 * so back-to-back slices end exactly where the next begins and a nested one never sticks
 * out, whatever order the viewer adds in. */
static char *tw_us(char *p, int64_t t)
{
    if (t < 0) {
        *p++ = '-';
        t = -t;
    }
    p = tw_u64(p, (uint64_t)t >> 10);
    uint64_t f = ((uint64_t)t & 1023u) * 9765625u; /* 10^10 / 2^10: ten decimal digits */
    char d[10];
    for (int i = 9; i >= 0; i--, f /= 10) d[i] = (char)('0' + f % 10);
    int n = 10;
    while (n > 1 && d[n - 1] == '0') n--;
    *p++ = '.';
    memcpy(p, d, (size_t)n);
    return p + n;
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

/* Seconds to ticks of 2^-10 us (0.98 ns), the grid every time is written on. */
static int64_t tw_tick(trace_writer *w, double s)
{
    double t = s * 1e6 * 1024.0;
    if (!(fabs(t) <= TRACE_MAX_TICKS)) { /* NaN too */
        if (w->out_of_range_s == 0) w->out_of_range_s = s != 0 ? s : 1;
        return 0;
    }
    return (int64_t)llround(t);
}
/* Ticks to integer ns (for wait_peers_ns). */
static int64_t tw_tick_ns(int64_t t) { return (int64_t)llround((double)t * (1000.0 / 1024.0)); }

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

void trace_identify(trace_writer *w, const char *device, const char *model)
{
    snprintf(w->device, sizeof w->device, "%s", device ? device : "");
    snprintf(w->model, sizeof w->model, "%s", model ? model : "");
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
    w->knames = malloc(p->n * TW_KNAME);
    w->graphs = graphs;
    if (!w->corr_base || !w->ranks || !w->frags || !w->knames) {
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
        w->knames[i * TW_KNAME] = '\0';
        if (prog_is_collective(&p->ops[i]))
            tw_coll_name(w, &p->ops[i], graphs, w->knames + i * TW_KNAME);
    }
    for (long r = 0; r < tp; r++) w->ranks[r] = (trace_rank){0, 0, -1};
    char *q = w->buf;
    q = tw_lit(q, "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":0,\n"
                  "\"distributedInfo\":{\"backend\":\"tpsim\",\"rank\":0,\"world_size\":");
    q = tw_i64(q, tp);
    q = tw_lit(q, ",\"ranks_by_pid\":true},\n\"otherData\":{\"tool\":\"tpsim\",\"run\":");
    q = tw_str(q, title, 400);
    if (w->model[0]) {
        q = tw_lit(q, ",\"model\":");
        q = tw_str(q, w->model, 100);
    }
    q = tw_lit(q, "},\n");
    if (w->device[0]) {
        q = tw_lit(q, "\"deviceProperties\":[{\"id\":0,\"name\":");
        q = tw_str(q, w->device, 100);
        q = tw_lit(q, "}],\n");
    }
    q = tw_lit(q, "\"traceEvents\":[\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":0,"
                  "\"tid\":0,\"args\":{\"sort_index\":0}}");
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
        return op && (op->kind == PROG_H2D || op->kind == PROG_D2H) ? "cudaMemcpyAsync"
                                                                    : "cudaLaunchKernel";
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

static char *tw_head(char *p, const char *cat, const char *name, uint32_t rank, int tid, int64_t ts,
                     int64_t dur)
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
    return tw_lit(p, start ? ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}"
                           : ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
}

/* A correlation (and flow) id unique in the file: per-rank ids interleaved by rank. */
static uint64_t tw_flow_id(const trace_writer *w, uint64_t corr, uint32_t rank)
{
    return (corr - 1) * (uint64_t)w->tp + rank + 1;
}

void trace_slice(void *ctx, const engine_slice *s)
{
    trace_writer *w = ctx;
    if ((long)s->step < w->warmup || (long)s->rank >= w->tp) return;
    trace_rank *tr = &w->ranks[s->rank];
    uint64_t step = (uint64_t)((long)s->step - w->warmup);
    int64_t start = tw_tick(w, s->start), end = tw_tick(w, s->start + s->dur);
    const prog_op *op = s->op >= 0 && (size_t)s->op < w->p->n ? &w->p->ops[s->op] : NULL;
    /* unique in the file across ranks, and the ac2g flow's id as in Kineto (flow id =
     * correlation id), so viewers that bind flows by id across the file pair each right */
    uint64_t corr = op ? tw_flow_id(w, step * (w->p->n + 1) + w->corr_base[s->op] + 1, s->rank) : 0;
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
        const char *kn = w->knames + (size_t)s->op * TW_KNAME;
        const char *name = copy    ? (op->kind == PROG_H2D ? "Memcpy HtoD (Pinned -> Device)"
                                                           : "Memcpy DtoH (Device -> Pinned)")
                           : kn[0] ? kn
                                   : prog_op_name(op);
        char *p = tw_room(w), *b = p;
        p = tw_head(p, copy ? "gpu_memcpy" : "kernel", name, s->rank, TW_STREAM_TID, start,
                    end - start);
        p = tw_lit(p, ",\"args\":{\"correlation\":");
        p = tw_u64(p, corr);
        p = tw_lit(p, ",\"stream\":7,\"step\":");
        p = tw_u64(p, step);
        if (copy) p = tw_op_arg(p, op);
        if (kn[0]) p = tw_coll_args(p, w, op, w->graphs);
        p = tw_lit(p, tw_frag(w, (size_t)s->op));
        if (wait > 0) {
            p = tw_lit(p, ",\"wait_peers_ns\":");
            p = tw_i64(p, tw_tick_ns(wait));
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
    tw_write(w, 1);
    int failed = w->failed || ferror(w->f);
    double far = w->out_of_range_s;
    trace_abort(w);
    if (far != 0)
        return tp_err_set(err,
                          "--trace: a simulated time of %g s is beyond what a trace holds "
                          "exactly (2^53 ticks of 2^-10 us, 8.8e6 s); expected times of a step "
                          "(check the kernel calibration's rates and the host costs)",
                          far);
    return failed ? tp_err_set(err, "--trace: write failed") : 0;
}

void trace_abort(trace_writer *w)
{
    free(w->corr_base);
    free(w->ranks);
    free(w->frags);
    free(w->knames);
    if (w->gzip) deflateEnd(&w->z);
    w->gzip = 0;
    w->corr_base = NULL;
    w->ranks = NULL;
    w->frags = NULL;
    w->knames = NULL;
}
