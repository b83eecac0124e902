/* trace_out.c: see trace_out.h. */
#include "trace_out.h"

#include "jw.h"

static void tr_json_stat(jw *w, const char *key, const tr_dstat *s)
{
    jw_key(w, key);
    jw_obj(w);
    jw_kint(w, "n", (int64_t)s->n);
    jw_knum(w, "mean", s->mean / 1e3);
    jw_knum(w, "cv", s->cv);
    jw_knum(w, "p50", s->p50 / 1e3);
    jw_knum(w, "p99", s->p99 / 1e3);
    jw_end_obj(w);
}

static void tr_json_counts(jw *w, const tr_counts *c)
{
    jw_kint(w, "kernels", (int64_t)c->kernels);
    jw_kint(w, "memcpys", (int64_t)c->memcpys);
    jw_kint(w, "graph_launches", (int64_t)c->graph_launches);
    jw_kint(w, "collectives", (int64_t)c->collectives);
    jw_kint(w, "launches", (int64_t)c->launches);
    jw_kint(w, "unpaired", (int64_t)c->unpaired);
    jw_key(w, "class_ms");
    jw_obj(w);
    for (int k = 0; k < TRC_COUNT; k++) jw_knum(w, tr_class_name((tr_class)k), (double)c->class_ns[k] / 1e6);
    jw_end_obj(w);
    jw_key(w, "class_gbps"); /* achieved bytes/s where the ops recorded shapes, else null */
    jw_obj(w);
    for (int k = 0; k < TRC_COUNT; k++) {
        jw_key(w, tr_class_name((tr_class)k));
        if (c->class_bytes_ns[k] > 0)
            jw_num(w, c->class_bytes[k] / (double)c->class_bytes_ns[k]);
        else
            jw_num(w, 0.0 / 0.0);
    }
    jw_end_obj(w);
}

void tr_out_json(FILE *f, const tr_trace *t, const tr_report *r)
{
    jw w;
    jw_init(&w, f, 1);
    jw_obj(&w);
    jw_key(&w, "files");
    jw_arr(&w);
    for (size_t i = 0; i < t->n_ranks; i++) jw_str(&w, t->ranks[i].file);
    jw_end_arr(&w);
    jw_kint(&w, "ranks", (int64_t)r->ranks);
    tr_json_counts(&w, &r->total);
    jw_kint(&w, "flows", (int64_t)r->flows);
    jw_kint(&w, "flows_unmatched", (int64_t)r->flows_unmatched);
    jw_kstr(&w, "step_source", r->step_source);
    tr_json_stat(&w, "launch_call_us", &r->launch_call);
    tr_json_stat(&w, "launch_gap_us", &r->launch_gap);
    tr_json_stat(&w, "host_work_us", &r->host_work);
    jw_knum(&w, "kernel_fixed_us", (double)r->kernel_fixed_ns / 1e3);
    jw_key(&w, "launch_apis");
    jw_arr(&w);
    for (size_t i = 0; i < r->n_apis; i++) {
        jw_obj(&w);
        jw_kstr(&w, "name", tr_name(t, r->apis[i].name));
        jw_kint(&w, "count", (int64_t)r->apis[i].dur.n);
        jw_knum(&w, "mean_us", r->apis[i].dur.mean / 1e3);
        jw_knum(&w, "p50_us", r->apis[i].dur.p50 / 1e3);
        jw_knum(&w, "p99_us", r->apis[i].dur.p99 / 1e3);
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    jw_key(&w, "steps");
    jw_arr(&w);
    for (size_t i = 0; i < r->n_steps; i++) {
        const tr_step *s = &r->steps[i];
        jw_obj(&w);
        jw_kint(&w, "rank", s->rank);
        jw_kint(&w, "step", s->index);
        jw_kint(&w, "start_ns", s->start);
        jw_knum(&w, "duration_ms", (double)(s->end - s->start) / 1e6);
        tr_json_counts(&w, &s->c);
        jw_knum(&w, "gpu_busy_ms", (double)s->gpu_busy / 1e6);
        jw_knum(&w, "gpu_idle_ms", (double)s->gpu_idle / 1e6);
        tr_json_stat(&w, "launch_call_us", &s->launch_call);
        tr_json_stat(&w, "launch_gap_us", &s->launch_gap);
        jw_key(&w, "host_work_us");
        jw_num(&w, s->has_host_work ? (double)s->host_work / 1e3 : 0.0 / 0.0);
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    jw_end_obj(&w);
    jw_done(&w);
}

static void tr_text_stat(FILE *f, const char *what, const tr_dstat *s)
{
    if (s->n == 0) {
        fprintf(f, "  %-22s none\n", what);
        return;
    }
    fprintf(f, "  %-22s %8.2f us mean  CV %.2f  p50 %.2f  p99 %.2f  (%zu)\n", what, s->mean / 1e3, s->cv,
            s->p50 / 1e3, s->p99 / 1e3, s->n);
}

void tr_out_text(FILE *f, const tr_trace *t, const tr_report *r)
{
    const tr_counts *c = &r->total;
    fprintf(f, "tpsim trace import: %zu rank%s (", r->ranks, r->ranks == 1 ? "" : "s");
    for (size_t i = 0; i < t->n_ranks; i++)
        fprintf(f, "%s%s rank %ld%s%s", i ? ", " : "", t->ranks[i].file, t->ranks[i].rank,
                t->ranks[i].device[0] ? " on " : "", t->ranks[i].device);
    fprintf(f, ")\n");
    fprintf(f, "totals     %zu kernels (%zu collectives), %zu copies/memsets, %zu launches, %zu graph launches\n",
            c->kernels, c->collectives, c->memcpys, c->launches, c->graph_launches);
    fprintf(f, "pairing    %zu GPU activities without a launching call; %zu ac2g flow ends, %zu unmatched\n",
            c->unpaired, r->flows, r->flows_unmatched);
    fprintf(f, "steps      %zu, found by %s\n\n", r->n_steps, r->step_source);
    fprintf(f, "host, over every step:\n");
    tr_text_stat(f, "launch call", &r->launch_call);
    tr_text_stat(f, "gap between launches", &r->launch_gap);
    tr_text_stat(f, "per-step host work", &r->host_work);
    for (size_t i = 0; i < r->n_apis && i < 8; i++) {
        char what[40];
        snprintf(what, sizeof what, "  %.20s", tr_name(t, r->apis[i].name));
        tr_text_stat(f, what, &r->apis[i].dur);
    }
    fprintf(f, "  %-22s %8.2f us (5th percentile of non-collective kernel durations)\n", "kernel fixed cost",
            (double)r->kernel_fixed_ns / 1e3);
    fprintf(f, "\nGPU time by class, whole trace:\n");
    for (int k = 0; k < TRC_COUNT; k++) {
        fprintf(f, "  %-12s %10.3f ms", tr_class_name((tr_class)k), (double)c->class_ns[k] / 1e6);
        if (c->class_bytes_ns[k] > 0)
            fprintf(f, "  %8.1f GB/s achieved (kernels with recorded shapes)", c->class_bytes[k] / (double)c->class_bytes_ns[k]);
        fprintf(f, "\n");
    }
    fprintf(f, "\n| rank | step | ms | kernels | copies | coll. | graphs | GPU busy ms | GPU idle ms | launch us (CV) | gap us p50 | host work us |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < r->n_steps; i++) {
        const tr_step *s = &r->steps[i];
        fprintf(f, "| %ld | %ld | %.3f | %zu | %zu | %zu | %zu | %.3f | %.3f | %.2f (%.2f) | %.2f | ", s->rank,
                s->index, (double)(s->end - s->start) / 1e6, s->c.kernels, s->c.memcpys, s->c.collectives,
                s->c.graph_launches, (double)s->gpu_busy / 1e6, (double)s->gpu_idle / 1e6,
                s->launch_call.mean / 1e3, s->launch_call.cv, s->launch_gap.p50 / 1e3);
        if (s->has_host_work)
            fprintf(f, "%.1f |\n", (double)s->host_work / 1e3);
        else
            fprintf(f, "- |\n");
    }
}

void tr_out_calib(FILE *f, const tr_trace *t, const tr_report *r)
{
    char src[1024];
    size_t used = 0;
    for (size_t i = 0; i < t->n_ranks && used < sizeof src - 1; i++) {
        int n = snprintf(src + used, sizeof src - used, "%s%s (rank %ld)", i ? ", " : "", t->ranks[i].file,
                         t->ranks[i].rank);
        if (n < 0) break;
        used += (size_t)n;
        if (used >= sizeof src) used = sizeof src - 1;
    }
    fprintf(f, "# Measured by tpsim trace import from a profiler trace. Each value says where it\n");
    fprintf(f, "# came from; apply with --set (e.g. --set host.launch.mean_us=V).\n");
    fprintf(f, "kind: trace-calibration\n");
    fprintf(f, "host:\n");
    fprintf(f, "  launch:\n");
    fprintf(f, "    dist: lognormal\n");
    fprintf(f, "    mean_us: %.4f   # launch call + host gap to the next launch, mean per launch\n",
            (r->launch_call.mean + r->launch_gap.mean) / 1e3);
    fprintf(f, "    cv: %.4f        # CV of the launch call durations\n", r->launch_call.cv);
    fprintf(f, "    call_mean_us: %.4f\n", r->launch_call.mean / 1e3);
    fprintf(f, "    gap_mean_us: %.4f\n", r->launch_gap.mean / 1e3);
    fprintf(f, "    source: {files: \"%s\", steps: %zu, launches: %zu, how: \"mean of launch-call durations plus mean host gap between consecutive launches, in steps\"}\n",
            src, r->n_steps, r->launch_call.n);
    fprintf(f, "  step:\n");
    if (r->host_work.n > 0) {
        fprintf(f, "    dist: constant\n");
        fprintf(f, "    mean_us: %.4f\n", r->host_work.mean > 0 ? r->host_work.mean / 1e3 : 0.0);
        fprintf(f, "    source: {files: \"%s\", steps: %zu, how: \"last GPU activity of a step to the next step's first launch, mean\"}\n",
                src, r->host_work.n);
    } else {
        fprintf(f, "    unmeasured: true   # needs two consecutive steps in one rank\n");
        fprintf(f, "    source: {files: \"%s\", steps: %zu}\n", src, r->n_steps);
    }
    fprintf(f, "gpu:\n");
    fprintf(f, "  kernel_fixed_us: %.4f\n", (double)r->kernel_fixed_ns / 1e3);
    fprintf(f, "  kernel_fixed_source: {files: \"%s\", kernels: %zu, how: \"5th percentile of non-collective kernel durations\"}\n",
            src, r->kernel_dur.n);
    fprintf(f, "  achieved_gbps:\n");
    for (int k = 0; k < TRC_COUNT; k++) {
        if (r->total.class_bytes_ns[k] <= 0) continue;
        fprintf(f, "    %s: {value: %.2f, source: {files: \"%s\", how: \"input bytes of the launching op / kernel time\"}}\n",
                tr_class_name((tr_class)k), r->total.class_bytes[k] / (double)r->total.class_bytes_ns[k], src);
    }
}
