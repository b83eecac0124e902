/* trace_kineto.c: see trace_kineto.h. The document is streamed by jscan.h (which reads
 * .json and .json.gz alike); this file knows what a Kineto trace's members and events mean. */
#include "trace_kineto.h"

#include "jscan.h"
#include "trace_stats.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Event categories the analysis reads; everything else is skipped unparsed. */
typedef enum kin_cat {
    KC_SKIP,
    KC_KERNEL,
    KC_MEMCPY,
    KC_MEMSET,
    KC_CALL,
    KC_SPAN,
    KC_OP,
    KC_FLOW,
    KC_PYFN
} kin_cat;

static const struct { const char *name; kin_cat cat; } kin_cats[] = {
    {"kernel", KC_KERNEL},       {"gpu_memcpy", KC_MEMCPY},  {"memcpy", KC_MEMCPY},
    {"gpu_memset", KC_MEMSET},   {"memset", KC_MEMSET},      {"cuda_runtime", KC_CALL},
    {"cuda_driver", KC_CALL},    {"runtime", KC_CALL},       {"driver", KC_CALL},
    {"user_annotation", KC_SPAN}, {"cpu_op", KC_OP},         {"operator", KC_OP},
    {"ac2g", KC_FLOW},
    {"python_function", KC_PYFN}, /* only vLLM's host-phase functions are kept (tr_phase_of) */
};

static kin_cat kin_cat_of(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof kin_cats / sizeof kin_cats[0]; i++)
        if (strlen(kin_cats[i].name) == len && strncasecmp(kin_cats[i].name, s, len) == 0)
            return kin_cats[i].cat;
    return KC_SKIP;
}



typedef struct kin_rank {
    tr_rank *r;
    tr_trace *t;
    int64_t base_ns;
    int have_rank;
    int by_pid; /* distributedInfo.ranks_by_pid: the file holds every rank, pid = rank */
} kin_rank;

/* Microseconds to ns; callers have bounded us (kin_num's TR_TIME_MAX check), so the
 * conversion is defined. */
static int64_t kin_ns(double us) { return (int64_t)llround(us * 1000.0); }

/* A time in µs: a finite number whose ns value is inside +-TR_TIME_MAX (trace_data.h), else
 * *ok = 0 (a float beyond int64 would make the conversion undefined). */
static double kin_num(json_t *o, const char *key, int *ok)
{
    json_t *v = json_object_get(o, key);
    if (!v || !json_is_number(v)) {
        *ok = 0;
        return 0.0;
    }
    double d = json_number_value(v);
    if (!isfinite(d) || !(fabs(d) * 1000.0 <= (double)TR_TIME_MAX)) *ok = 0;
    return d;
}

/* An integer member (ids, pid, tid, stream, bytes): a JSON integer, or a real with an integer
 * value inside int64 (2^63 is exact in a double, so the comparisons are exact); anything else
 * present sets *bad, absent is 0. */
static int64_t kin_int(json_t *o, const char *key, int *bad)
{
    json_t *v = o ? json_object_get(o, key) : NULL;
    if (v && json_is_integer(v)) return (int64_t)json_integer_value(v);
    if (v && json_is_real(v)) {
        double d = json_real_value(v);
        if (isfinite(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
            d == floor(d))
            return (int64_t)d;
        *bad = 1;
    }
    return 0;
}

/* A process id as the records keep it (int32); out of range sets *bad. */
static int32_t kin_pid(json_t *o, int *bad)
{
    int64_t p = kin_int(o, "pid", bad);
    if (p < INT32_MIN || p > INT32_MAX) *bad = 1;
    return *bad ? 0 : (int32_t)p;
}

/* Bytes of one element of a PyTorch dtype as the profiler names it, 0 when unknown. */
static double kin_dtype_bytes(const char *t)
{
    static const struct { const char *name; double bytes;
    } types[] = {
        {"float", 4},
        {"c10::BFloat16", 2},
        {"c10::Half", 2},
        {"double", 8},
        {"int", 4},
        {"long int", 8},
        {"long", 8},
        {"bool", 1},
        {"unsigned char", 1},
        {"signed char", 1},
        {"short int", 2},
        {"c10::Float8_e4m3fn", 1},
        {"c10::Float8_e5m2", 1},
        {"c10::Float8_e4m3fnuz", 1},
        {"c10::complex<float>", 8},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(types[i].name, t) == 0) return types[i].bytes;
    return 0;
}

/* Sum over an op's tensor inputs of elements x element size ("Input Dims", "Input type"). */
static double kin_input_bytes(json_t *args)
{
    json_t *dims = json_object_get(args, "Input Dims"),
           *types = json_object_get(args, "Input type");
    if (!json_is_array(dims) || !json_is_array(types)) return 0;
    double total = 0;
    size_t n = json_array_size(dims);
    for (size_t i = 0; i < n && i < json_array_size(types); i++) {
        json_t *d = json_array_get(dims, i), *ty = json_array_get(types, i);
        if (!json_is_array(d) || json_array_size(d) == 0 || !json_is_string(ty)) continue;
        double el = kin_dtype_bytes(json_string_value(ty)), count = 1;
        for (size_t j = 0; j < json_array_size(d); j++) {
            json_t *x = json_array_get(d, j);
            count *=
                json_is_integer(x) && json_integer_value(x) > 0 ? (double)json_integer_value(x) : 0;
        }
        total += el * count;
    }
    return total;
}

/* An ac2g flow start or end ("s", "f"; other phases are ignored): 0 kept or ignored, 1 an
 * integer out of range, -1 refused (reported) or out of memory. */
static int kin_event_flow(jscan *k, kin_rank *kr, json_t *ev, const char *ph, size_t off)
{
    int ok = 1, bad = 0;
    if (strcmp(ph, "s") && strcmp(ph, "f")) return 0;
    double ts = kin_num(ev, "ts", &ok);
    json_t *id = json_object_get(ev, "id");
    if (!ok || !id) {
        jscan_fail(k, off, "an ac2g flow without a numeric ts or an id, expected both");
        return -1;
    }
    tr_flow f = {json_is_integer(id) ? (int64_t)json_integer_value(id) : kin_int(ev, "id", &bad),
                 kin_ns(ts), kin_int(ev, "tid", &bad), kin_pid(ev, &bad), (uint8_t)(ph[0] == 's')};
    if (bad) return 1;
    return tr_push_flow(kr->r, &f);
}

/* A complete event's record for its category: 0 kept or not wanted, 1 an integer out of
 * range, -1 out of memory. */
static int kin_event_record(kin_rank *kr, json_t *ev, json_t *args, kin_cat cat, double ts,
                            double dur, uint32_t nid, const char *name)
{
    int rc, bad = 0;
    switch (cat) {
    case KC_KERNEL:
    case KC_MEMCPY:
    case KC_MEMSET: {
        json_t *st = args ? json_object_get(args, "stream") : NULL;
        tr_gpu g = {kin_ns(ts),
                    kin_ns(dur),
                    kin_int(args, "correlation", &bad),
                    kin_int(args, "External id", &bad),
                    kin_int(ev, "tid", &bad),
                    cat == KC_KERNEL ? 0.0 : (double)kin_int(args, "bytes", &bad),
                    nid,
                    (uint32_t)(st ? kin_int(args, "stream", &bad) : kin_int(ev, "tid", &bad)),
                    kin_pid(ev, &bad),
                    (uint8_t)(cat == KC_KERNEL   ? TR_KERNEL
                              : cat == KC_MEMCPY ? TR_MEMCPY
                                                 : TR_MEMSET)};
        rc = bad ? 1 : tr_push_gpu(kr->r, &g);
        break;
    }
    case KC_CALL: {
        tr_call c = {kin_ns(ts),
                     kin_ns(dur),
                     kin_int(args, "correlation", &bad),
                     kin_int(args, "External id", &bad),
                     kin_int(ev, "tid", &bad),
                     nid,
                     kin_pid(ev, &bad)};
        rc = bad ? 1 : tr_push_call(kr->r, &c);
        break;
    }
    case KC_SPAN: {
        tr_span s = {kin_ns(ts), kin_ns(dur), nid, kin_pid(ev, &bad)};
        rc = bad ? 1 : tr_push_span(kr->r, &s);
        break;
    }
    case KC_PYFN: { /* a host phase's function: kept as a span the step analysis times */
        tr_span s = {kin_ns(ts), kin_ns(dur), nid, kin_pid(ev, &bad)};
        rc = bad ? 1 : tr_phase_of(name) >= 0 ? tr_push_span(kr->r, &s) : 0;
        break;
    }
    case KC_OP: {
        double bytes = args ? kin_input_bytes(args) : 0;
        int64_t ext = kin_int(args, "External id", &bad);
        rc = bad ? 1 : bytes > 0 && ext ? tr_push_op(kr->r, &(tr_op){ext, bytes}) : 0;
        break;
    }
    default:
        rc = 0;
    }
    return rc;
}

static int kin_event(jscan *k, kin_rank *kr, kin_cat cat, size_t off, size_t len)
{
    json_error_t je;
    json_t *ev = json_loadb(k->buf + off, len, 0, &je);
    if (!ev) {
        char msg[300];
        snprintf(msg, sizeof msg, "bad JSON in a trace event: %s, expected a JSON object", je.text);
        return jscan_fail(k, off + (je.position > 0 ? (size_t)je.position - 1 : 0), msg);
    }
    int rc = -1, ok = 1;
    if (!json_is_object(ev)) {
        jscan_fail(k, off, "a trace event that is not an object, expected {\"ph\": ..., ...}");
        goto out;
    }
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    if (!ph) ph = "";
    json_t *args = json_object_get(ev, "args");
    if (args && !json_is_object(args)) args = NULL;
    if (cat == KC_FLOW) {
        rc = kin_event_flow(k, kr, ev, ph, off);
        if (rc > 0) goto range;
        goto out;
    }
    if (strcmp(ph, "X") != 0) { /* only complete events carry the activities */
        rc = 0;
        goto out;
    }
    double ts = kin_num(ev, "ts", &ok), dur = kin_num(ev, "dur", &ok);
    if (!ok || dur < 0) {
        jscan_fail(k, off, "a complete event without a numeric ts and a dur >= 0 (in µs, within "
                         "+-2.3e15), expected both");
        goto out;
    }
    const char *name = json_string_value(json_object_get(ev, "name"));
    if (!name) name = "";
    uint32_t nid = tr_intern(kr->t, name, strlen(name));
    if (nid == UINT32_MAX) goto oom;
    rc = kin_event_record(kr, ev, args, cat, ts, dur, nid, name);
    if (rc == 0) goto out;
    if (rc > 0) goto range;
oom:
    tp_err_set(k->err, "%s: out of memory reading the trace", k->path);
    rc = -1;
    goto out;
range:
    jscan_fail(k, off,
             "an id, pid, tid, stream or bytes that is not an integer in range (pid: int32, "
             "the others: int64), expected integers");
    rc = -1;
out:
    json_decref(ev);
    return rc;
}

/* A top-level member we read whole: baseTimeNanoseconds, distributedInfo, deviceProperties,
 * otherData (tpsim's names the model). */
static int kin_member(jscan *k, kin_rank *kr, const char *key, size_t len)
{
    json_error_t je;
    json_t *v = json_loadb(k->buf + k->pos, len, JSON_DECODE_ANY, &je);
    if (!v) return jscan_fail(k, k->pos, "bad JSON in a top-level member, expected valid JSON");
    int rc = 0;
    if (!strcmp(key, "baseTimeNanoseconds")) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > TR_TIME_MAX)
            rc = jscan_fail(k, k->pos,
                          "baseTimeNanoseconds is not an integer 0..2^61, expected nanoseconds");
        else
            kr->base_ns = (int64_t)json_integer_value(v);
    } else if (!strcmp(key, "distributedInfo") && json_is_object(v)) {
        json_t *rank = json_object_get(v, "rank"), *ws = json_object_get(v, "world_size");
        if (rank && (!json_is_integer(rank) || json_integer_value(rank) < 0 ||
                     json_integer_value(rank) > 100000))
            rc = jscan_fail(
                k, k->pos,
                "distributedInfo.rank is not an integer 0..100000, expected the process rank");
        else if (rank) {
            kr->r->rank = (long)json_integer_value(rank);
            kr->have_rank = 1;
        }
        if (json_is_integer(ws)) kr->r->world_size = (long)json_integer_value(ws);
        kr->by_pid = json_is_true(json_object_get(v, "ranks_by_pid"));
    } else if (!strcmp(key, "deviceProperties") && json_is_array(v) && json_array_size(v) > 0) {
        const char *name = json_string_value(json_object_get(json_array_get(v, 0), "name"));
        if (name) snprintf(kr->r->device, sizeof kr->r->device, "%s", name);
    } else if (!strcmp(key, "otherData") && json_is_object(v)) {
        const char *model = json_string_value(json_object_get(v, "model"));
        if (model) snprintf(kr->r->model, sizeof kr->r->model, "%s", model);
    }
    json_decref(v);
    return rc;
}


static int kin_events(jscan *k, kin_rank *kr)
{
    if (jscan_expect(k, '[', "traceEvents")) return -1;
    for (;;) {
        int p = jscan_peek(k);
        if (p == -2) return -1;
        if (p == ']') {
            k->pos++;
            return 0;
        }
        if (p != '{')
            return jscan_fail(k, k->pos,
                              p < 0 ? "unexpected end of file in traceEvents, expected ']'"
                                    : "a trace event that is not an object, expected '{'");
        jscan_val v;
        if (jscan_value(k, &v)) return -1;
        kin_cat cat = KC_SKIP;
        if (v.escaped) {
            cat = KC_KERNEL; /* unsure: parse it and read cat from the parsed object */
            json_t *ev = json_loadb(k->buf + k->pos, v.len, 0, NULL);
            const char *c = ev ? json_string_value(json_object_get(ev, "cat")) : NULL;
            cat = c ? kin_cat_of(c, strlen(c)) : (ev ? KC_SKIP : KC_KERNEL);
            json_decref(ev);
        } else if (v.has_cat) {
            cat = kin_cat_of(k->buf + k->pos + v.cat_off, v.cat_len);
        }
        /* Python functions are many (with_stack): parse only the few that may time a phase */
        if (cat == KC_PYFN && !tr_phase_maybe(k->buf + k->pos, v.len)) cat = KC_SKIP;
        if (cat != KC_SKIP && kin_event(k, kr, cat, k->pos, v.len)) return -1;
        k->pos += v.len;
        p = jscan_peek(k);
        if (p == -2) return -1;
        if (p == ',') {
            k->pos++;
        } else if (p != ']') {
            return jscan_fail(k, k->pos,
                            p < 0 ? "unexpected end of file in traceEvents, expected ']'"
                                  : "unexpected character after an event, expected ',' or ']'");
        }
    }
}

static int kin_document(jscan *k, kin_rank *kr)
{
    int have_events = 0;
    int p0 = jscan_peek(k);
    if (p0 == -2) return -1;
    if (p0 == '[') { /* the Chrome trace format's other form: a bare array of events */
        if (kin_events(k, kr)) return -1;
        int p = jscan_peek(k);
        if (p == -2) return -1;
        if (p >= 0)
            return jscan_fail(k, k->pos,
                              "data after the trace array, expected the end of the file");
        return 0;
    }
    if (jscan_expect(k, '{', "document")) return -1;
    for (int first = 1;; first = 0) {
        int p = jscan_peek(k);
        if (p == -2) return -1;
        if (p == '}' && first) {
            k->pos++;
            break;
        }
        if (p != '"')
            return jscan_fail(k, k->pos,
                            p < 0 ? "unexpected end of file, expected a member name"
                                  : "unexpected character, expected a member name");
        jscan_val v;
        if (jscan_value(k, &v)) return -1;
        char key[64] = "";
        if (v.len >= 2 && v.len - 2 < sizeof key) {
            memcpy(key, k->buf + k->pos + 1, v.len - 2);
            key[v.len - 2] = '\0';
        }
        k->pos += v.len;
        if (jscan_expect(k, ':', "member")) return -1;
        if ((p = jscan_peek(k)) < 0)
            return p == -2 ? -1 : jscan_fail(k, k->pos, "unexpected end of file, expected a value");
        if (!strcmp(key, "traceEvents")) {
            if (kin_events(k, kr)) return -1;
            have_events = 1;
        } else {
            if (jscan_value(k, &v)) return -1;
            if ((!strcmp(key, "baseTimeNanoseconds") || !strcmp(key, "distributedInfo") ||
                 !strcmp(key, "deviceProperties") || !strcmp(key, "otherData")) &&
                kin_member(k, kr, key, v.len))
                return -1;
            k->pos += v.len;
        }
        p = jscan_peek(k);
        if (p == -2) return -1;
        if (p == ',') {
            k->pos++;
            continue;
        }
        if (p == '}') {
            k->pos++;
            break;
        }
        return jscan_fail(k, k->pos, p < 0 ? "unexpected end of file, expected ',' or '}'"
                                        : "unexpected character, expected ',' or '}'");
    }
    int p = jscan_peek(k);
    if (p == -2) return -1;
    if (p >= 0)
        return jscan_fail(k, k->pos, "data after the trace object, expected the end of the file");
    if (!have_events)
        return tp_err_set(k->err,
                          "%s: no traceEvents array, expected a Chrome trace (Kineto) JSON object",
                          k->path);
    return 0;
}

int tr_kineto_read(tr_trace *t, const char *path, tp_err *err)
{
    return tr_kineto_read_progress(t, path, NULL, err);
}

int tr_kineto_read_progress(tr_trace *t, const char *path, pline *progress, tp_err *err)
{
    jscan k;
    if (jscan_open(&k, path, err)) return -1;
    if (progress) jscan_progress(&k, progress);
    size_t before = t->n_ranks;
    kin_rank kr = {tr_add_rank(t, path), t, 0, 0, 0};
    int rc = -1;
    if (!kr.r) {
        tp_err_set(err, "%s: %s", path, tr_oom_why(t));
    } else if (kin_document(&k, &kr) == 0) {
        tr_rank *r = kr.r;
        for (size_t i = 0; i < r->gpu.n; i++) r->gpu.v[i].ts += kr.base_ns;
        for (size_t i = 0; i < r->calls.n; i++) r->calls.v[i].ts += kr.base_ns;
        for (size_t i = 0; i < r->spans.n; i++) r->spans.v[i].ts += kr.base_ns;
        for (size_t i = 0; i < r->flows.n; i++) r->flows.v[i].ts += kr.base_ns;
        if (!kr.have_rank) r->rank = (long)before;
        rc = 0;
        /* base + ts: both within 2^61, so the sum is defined; the result must be too */
        for (size_t i = 0; i < r->gpu.n && !rc; i++)
            if (!tr_time_ok(r->gpu.v[i].ts, r->gpu.v[i].dur)) rc = -1;
        for (size_t i = 0; i < r->calls.n && !rc; i++)
            if (!tr_time_ok(r->calls.v[i].ts, r->calls.v[i].dur)) rc = -1;
        for (size_t i = 0; i < r->spans.n && !rc; i++)
            if (!tr_time_ok(r->spans.v[i].ts, r->spans.v[i].dur)) rc = -1;
        for (size_t i = 0; i < r->flows.n && !rc; i++)
            if (!tr_time_ok(r->flows.v[i].ts, 0)) rc = -1;
        if (rc)
            tp_err_set(err, "%s: baseTimeNanoseconds + ts beyond 2^61 ns (73 years), expected "
                            "times of one recording", path);
        else if (kr.by_pid && tr_split_by_pid(t, before))
            rc = tp_err_set(err, "%s: %s", path, tr_oom_why(t));
    }
    if (rc) tr_truncate(t, before);
    jscan_close(&k);
    return rc;
}
