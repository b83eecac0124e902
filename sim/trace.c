/* trace.c: see trace.h. */
#include "trace.h"

#include "jw.h"

static const char *trace_label(const engine_slice *s, const prog *p, char *buf, size_t cap)
{
    const char *op = s->op >= 0 ? prog_op_name(&p->ops[s->op]) : "";
    switch ((engine_label)s->label) {
    case SL_LAUNCH: snprintf(buf, cap, "launch %s", op); return buf;
    case SL_QUEUE_FULL: return "blocked: launch queue full";
    case SL_DRIVER: return "driver: schedule + broadcast";
    case SL_BCAST_WAIT: return "wait for rank 0 broadcast";
    case SL_GRAPH_LAUNCH: return "cudaGraphLaunch";
    case SL_SYNC: return "sync: wait for sampled tokens";
    case SL_STEP_HOST: return "step host work";
    case SL_WAIT_PEERS: snprintf(buf, cap, "%s: wait for peers", op); return buf;
    case SL_OP: return op;
    }
    return "?";
}

static void trace_meta(jw *w, const char *name, long pid, long tid, const char *value)
{
    jw_obj(w);
    jw_kstr(w, "name", name);
    jw_kstr(w, "ph", "M");
    jw_kint(w, "pid", pid);
    jw_kint(w, "tid", tid);
    jw_key(w, "args");
    jw_obj(w);
    jw_kstr(w, "name", value);
    jw_end_obj(w);
    jw_end_obj(w);
}

void trace_write(FILE *f, const engine_result *res, const prog *p, const char *title)
{
    jw w;
    char buf[96];
    jw_init(&w, f, 0);
    jw_obj(&w);
    jw_kstr(&w, "displayTimeUnit", "ms");
    jw_key(&w, "otherData");
    jw_obj(&w);
    jw_kstr(&w, "tool", "tpsim");
    jw_kstr(&w, "run", title);
    jw_end_obj(&w);
    jw_key(&w, "traceEvents");
    jw_arr(&w);
    for (long r = 0; r < res->tp; r++) {
        snprintf(buf, sizeof buf, "rank %ld", r);
        trace_meta(&w, "process_name", r, 0, buf);
        trace_meta(&w, "thread_name", r, 0, "host (dispatch)");
        trace_meta(&w, "thread_name", r, 1, "stream 0 (compute)");
    }
    for (size_t i = 0; i < res->n_slices; i++) {
        const engine_slice *s = &res->slices[i];
        jw_obj(&w);
        jw_kstr(&w, "name", trace_label(s, p, buf, sizeof buf));
        jw_kstr(&w, "cat", s->track == TRACK_HOST ? "host" : "gpu");
        jw_kstr(&w, "ph", "X");
        jw_knum(&w, "ts", s->start * 1e6);
        jw_knum(&w, "dur", s->dur * 1e6);
        jw_kint(&w, "pid", s->rank);
        jw_kint(&w, "tid", s->track == TRACK_HOST ? 0 : 1);
        jw_key(&w, "args");
        jw_obj(&w);
        jw_kint(&w, "step", s->step);
        if (s->op >= 0) {
            const prog_op *op = &p->ops[s->op];
            jw_kint(&w, "layer", op->layer);
            jw_knum(&w, "bytes", op->bytes);
        }
        jw_end_obj(&w);
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    jw_end_obj(&w);
    jw_done(&w);
}
