/* bench_trace.c: `make bench`, the trace half: (1) tpsim's --trace writer, streamed and
 * formatted by hand, against the writer it replaced (every slice kept in memory, then
 * printed field by field through jw/printf), on the same TP-8 70B run; (2) `trace import`
 * speed on uncompressed Kineto JSON: the shipped B200 vLLM and HTA A100 traces, their events
 * repeated to over 100 MB, read and analysed on one core.
 * A benchmark, not a test: it asserts nothing about speed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <zlib.h>

#include "jw.h"
#include "run.h"
#include "scenario.h"
#include "trace.h"
#include "trace_kineto.h"
#include "trace_stats.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the replaced writer: slices buffered, then jw (printf %.10g) per field ---------- */
typedef struct kept {
    engine_slice *v;
    size_t n, cap;
    const prog *p;
} kept;

static int kept_start(void *ctx, const engine_config *c)
{
    ((kept *)ctx)->p = c->program;
    return 0;
}

static void kept_slice(void *ctx, const engine_slice *s)
{
    kept *k = ctx;
    if (k->n == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 4096;
        engine_slice *g = realloc(k->v, k->cap * sizeof *g);
        if (!g) abort();
        k->v = g;
    }
    k->v[k->n++] = *s;
}

static void old_write(FILE *f, const kept *k)
{
    jw w;
    char buf[96];
    jw_init(&w, f, 0);
    jw_obj(&w);
    jw_key(&w, "traceEvents");
    jw_arr(&w);
    for (size_t i = 0; i < k->n; i++) {
        const engine_slice *s = &k->v[i];
        const char *op = s->op >= 0 ? prog_op_name(&k->p->ops[s->op]) : "";
        snprintf(buf, sizeof buf, "launch %s", op);
        jw_obj(&w);
        jw_kstr(&w, "name", s->track == TRACK_HOST ? buf : op);
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
            jw_kint(&w, "layer", k->p->ops[s->op].layer);
            jw_knum(&w, "bytes", k->p->ops[s->op].bytes);
        }
        jw_end_obj(&w);
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    jw_end_obj(&w);
    jw_done(&w);
}

static int bench_writer(void)
{
    const char *sets[] = {"host.launch.dist=lognormal", "host.launch.mean_us=6",
                          "host.launch.cv=0.3",         "host.collective.dist=lognormal",
                          "host.collective.mean_us=10", "host.collective.cv=0.3"};
    scenario *s = calloc(1, sizeof *s);
    tp_err err;
    if (!s || scenario_load("scenarios/eager-host-dispatch.yaml", sets, 6, s, &err)) {
        fprintf(stderr, "bench-trace: %s\n", s ? err.msg : "out of memory");
        return 2;
    }
    FILE *null = fopen("/dev/null", "w");
    if (!null) return 2;
    run_request req = {8, 1, 2048, 20, 0, 42, NULL, RUN_REQ_PLAIN};
    run_summary sum;
    double t_old = 1e30, t_new = 1e30, t_none = 1e30;
    size_t slices = 0;
    long out_bytes = 0;
    for (int rep = 0; rep < 3; rep++) {
        kept k = {0};
        engine_sink ks = {kept_start, kept_slice, &k};
        req.trace = &ks;
        run_detail d; /* the old writer ran after the engine: it needed the program kept */
        double t0 = now_s();
        if (run_cell(s, &req, &sum, &d, &err)) goto fail;
        k.p = &d.program;
        old_write(null, &k);
        fflush(null);
        run_release(&d);
        double dt = now_s() - t0;
        if (dt < t_old) t_old = dt;
        slices = k.n;
        free(k.v);

        trace_writer *tw = malloc(sizeof *tw);
        if (!tw) goto fail;
        FILE *tmp = tmpfile();
        trace_init(tw, tmp ? tmp : null, "bench");
        engine_sink ns = {trace_start, trace_slice, tw};
        req.trace = &ns;
        t0 = now_s();
        if (run_cell(s, &req, &sum, NULL, &err) || trace_end(tw, &err)) goto fail;
        fflush(tmp ? tmp : null);
        dt = now_s() - t0;
        if (dt < t_new) t_new = dt;
        if (tmp) {
            out_bytes = ftell(tmp);
            fclose(tmp);
        }
        free(tw);

        req.trace = NULL;
        t0 = now_s();
        if (run_cell(s, &req, &sum, NULL, &err)) goto fail;
        dt = now_s() - t0;
        if (dt < t_none) t_none = dt;
    }
    printf("trace workload: Llama-3.1-70B TP-8 eager, launch jitter cv 0.3, 20 steps x 8 ranks, "
           "%zu slices\n",
           slices);
    printf("trace_before_s: %.3f   (slices kept in memory, then jw/printf per field)\n", t_old);
    printf("trace_after_s: %.3f    (streamed, hand-formatted integer ns; includes writing %.1f MB "
           "to a temp file)\n",
           t_new, (double)out_bytes / 1e6);
    printf("no_trace_s: %.3f\n", t_none);
    printf("trace_speedup: %.2f\n", t_old / t_new);
    printf("trace_slices_per_s: %.0f\n", (double)slices / t_new);
    fclose(null);
    scenario_free(s);
    free(s);
    return 0;
fail:
    fprintf(stderr, "bench-trace: %s\n", err.msg);
    return 2;
}

/* ---- import ------------------------------------------------------------------------- */

static char *gunzip_file(const char *path, size_t *len)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz) return NULL;
    size_t cap = 1 << 24, n = 0;
    char *buf = malloc(cap);
    int got;
    while (buf && (got = gzread(gz, buf + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap) {
            char *g = realloc(buf, cap *= 2);
            if (!g) {
                free(buf);
                buf = NULL;
            }
            buf = g;
        }
    }
    gzclose(gz);
    *len = n;
    return buf;
}

static int bench_import(const char *src)
{
    size_t len;
    char *doc = gunzip_file(src, &len);
    if (!doc) return 2;
    /* the traceEvents array, re-printed by jansson with Kineto's kind of indentation */
    json_t *root = json_loadb(doc, len, 0, NULL);
    free(doc);
    json_t *events = root ? json_object_get(root, "traceEvents") : NULL;
    char *text = events ? json_dumps(events, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    if (!text) return 2;
    char *open = strchr(text, '['), *close = strrchr(text, ']');
    if (!open || !close || close <= open) return 2;
    char path[] = "/tmp/tpsim-bench-trace-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) return 2;
    size_t body = (size_t)(close - open - 1), reps = (100u << 20) / body + 1;
    fputs("{\"baseTimeNanoseconds\": 1767189312000000000, \"traceEvents\": [", f);
    for (size_t i = 0; i < reps; i++) {
        if (i) fputc(',', f);
        fwrite(open + 1, 1, body, f);
    }
    fputs("]}\n", f);
    long size = ftell(f);
    fclose(f);
    free(text);
    double best = 1e30;
    size_t kernels = 0;
    for (int rep = 0; rep < 3; rep++) {
        tr_trace t = {0};
        tr_report r;
        tp_err err;
        double t0 = now_s();
        if (tr_kineto_read(&t, path, &err) || tr_analyze(&t, &(tr_options){NULL}, &r, &err)) {
            fprintf(stderr, "bench-trace: %s\n", err.msg);
            unlink(path);
            return 2;
        }
        double dt = now_s() - t0;
        if (dt < best) best = dt;
        kernels = r.total.kernels;
        tr_report_free(&r);
        tr_free(&t);
    }
    unlink(path);
    printf("import workload: %s events x %zu, %.1f MB uncompressed Kineto JSON, %zu kernels\n", src,
           reps, (double)size / 1e6, kernels);
    printf("import_s: %.3f\n", best);
    printf("import_mb_per_s: %.1f\n", (double)size / 1e6 / best);
    return 0;
}

int main(void)
{
    int rc = bench_import("tests/data/TraceLens__b200__vllm_tp8_eager_step.json.gz");
    if (!rc) rc = bench_import("tests/data/HTA__nccl_parser_config__nccl_data_a100_2rank.json.gz");
    return rc ? rc : bench_writer();
}
