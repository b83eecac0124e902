/* trace_out.c: see trace_out.h. */
#include "trace_out.h"

#include <inttypes.h>

#include "csv.h"
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
    for (int k = 0; k < TRC_COUNT; k++)
        jw_knum(w, tr_class_name((tr_class)k), (double)c->class_ns[k] / 1e6);
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
    tr_json_stat(&w, "launch_interval_us", &r->launch_interval);
    tr_json_stat(&w, "host_work_us", &r->host_work);
    jw_knum(&w, "kernel_fixed_us", (double)r->kernel_fixed_ns / 1e3);
    /* vLLM's host phases timed by Python function events (with_stack traces): only those seen */
    jw_key(&w, "host_phases_us");
    jw_obj(&w);
    for (int ph = 0; ph < PHASE_N; ph++)
        if (r->phase[ph].n) tr_json_stat(&w, phase_names[ph], &r->phase[ph]);
    jw_end_obj(&w);
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
    jw_key(&w, "per_step"); /* "steps" is a count elsewhere (docs/json.md) */
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
        /* one number; the top level's host_work_us is its statistics over steps */
        jw_key(&w, "step_host_work_us");
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
    fprintf(f, "  %-22s %8.2f us mean  CV %.2f  p50 %.2f  p99 %.2f  (%zu)\n", what, s->mean / 1e3,
            s->cv, s->p50 / 1e3, s->p99 / 1e3, s->n);
}

void tr_out_text(FILE *f, const tr_trace *t, const tr_report *r)
{
    const tr_counts *c = &r->total;
    fprintf(f, "tpsim trace import: %zu rank%s (", r->ranks, r->ranks == 1 ? "" : "s");
    for (size_t i = 0; i < t->n_ranks; i++)
        fprintf(f, "%s%s rank %ld%s%s", i ? ", " : "", t->ranks[i].file, t->ranks[i].rank,
                t->ranks[i].device[0] ? " on " : "", t->ranks[i].device);
    fprintf(f, ")\n");
    fprintf(f,
            "totals     %zu kernels (%zu collectives), %zu copies/memsets, %zu launches, %zu graph "
            "launches\n",
            c->kernels, c->collectives, c->memcpys, c->launches, c->graph_launches);
    fprintf(f,
            "pairing    %zu GPU activities without a launching call; %zu ac2g flow ends, %zu "
            "unmatched\n",
            c->unpaired, r->flows, r->flows_unmatched);
    fprintf(f, "steps      %zu, found by %s\n\n", r->n_steps, r->step_source);
    fprintf(f, "host, over every step:\n");
    tr_text_stat(f, "launch call", &r->launch_call);
    tr_text_stat(f, "gap between launches", &r->launch_gap);
    tr_text_stat(f, "launch to launch", &r->launch_interval);
    tr_text_stat(f, "per-step host work", &r->host_work);
    for (size_t i = 0; i < r->n_apis && i < 8; i++) {
        char what[40];
        snprintf(what, sizeof what, "  %.20s", tr_name(t, r->apis[i].name));
        tr_text_stat(f, what, &r->apis[i].dur);
    }
    fprintf(f, "  %-22s %8.2f us (5th percentile of non-collective kernel durations)\n",
            "kernel fixed cost", (double)r->kernel_fixed_ns / 1e3);
    int phases = 0;
    for (int ph = 0; ph < PHASE_N; ph++) phases += r->phase[ph].n > 0;
    if (phases) {
        fprintf(f, "\nhost phases per step, from Python function events (sim/phase.h):\n");
        for (int ph = 0; ph < PHASE_N; ph++)
            if (r->phase[ph].n) {
                tr_text_stat(f, phase_names[ph], &r->phase[ph]);
                fprintf(f, "    %-20s (%s)\n", "", tr_phase_functions(ph));
            }
    }
    fprintf(f, "\nGPU time by class, whole trace:\n");
    for (int k = 0; k < TRC_COUNT; k++) {
        fprintf(f, "  %-12s %10.3f ms", tr_class_name((tr_class)k), (double)c->class_ns[k] / 1e6);
        if (c->class_bytes_ns[k] > 0)
            fprintf(f, "  %8.1f GB/s achieved (kernels with recorded shapes)",
                    c->class_bytes[k] / (double)c->class_bytes_ns[k]);
        fprintf(f, "\n");
    }
    fprintf(f, "\n| rank | step | ms | kernels | copies | coll. | graphs | GPU busy ms | GPU idle "
               "ms | launch us (CV) | gap us p50 | host work us |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < r->n_steps; i++) {
        const tr_step *s = &r->steps[i];
        fprintf(f,
                "| %ld | %ld | %.3f | %zu | %zu | %zu | %zu | %.3f | %.3f | %.2f (%.2f) | %.2f | ",
                s->rank, s->index, (double)(s->end - s->start) / 1e6, s->c.kernels, s->c.memcpys,
                s->c.collectives, s->c.graph_launches, (double)s->gpu_busy / 1e6,
                (double)s->gpu_idle / 1e6, s->launch_call.mean / 1e3, s->launch_call.cv,
                s->launch_gap.p50 / 1e3);
        if (s->has_host_work)
            fprintf(f, "%.1f |\n", (double)s->host_work / 1e3);
        else
            fprintf(f, "- |\n");
    }
}

/* A file name safe inside a double-quoted YAML scalar. */
static void tr_plain(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    for (; *src && n + 1 < cap; src++)
        dst[n++] = (*src == '"' || *src == '\\' || (unsigned char)*src < 0x20) ? '?' : *src;
    dst[n] = '\0';
}

/* "FILE (rank R), ..." of every rank's file, cut at cap: the files a value came from */
static void tr_calib_files(const tr_trace *t, char *src, size_t cap)
{
    char file[600];
    size_t used = 0;
    src[0] = '\0';
    for (size_t i = 0; i < t->n_ranks && used + 1 < cap; i++) {
        tr_plain(file, sizeof file, t->ranks[i].file);
        int n = snprintf(src + used, cap - used, "%s%s (rank %ld)", i ? ", " : "", file,
                         t->ranks[i].rank);
        if (n < 0) break;
        used += (size_t)n;
        if (used >= cap) used = cap - 1;
    }
}

/* the comment saying how to use the file, its kind, the hardware file and the traced GPU */
static void tr_calib_head(FILE *f, const tr_trace *t, double hbm_bw, const char *hw_path)
{
    fprintf(
        f,
        "# Measured by tpsim trace import from a profiler trace; every value says where it came\n");
    fprintf(
        f, "# from. A scenario takes it with the key measured: THIS.yaml or the flag --measured\n");
    fprintf(f, "# THIS.yaml (a --set still overrides it), or as the --set flags listed under "
               "apply:, e.g.\n");
    fprintf(f, "#   tpsim run SCENARIO $(sed -n 's/^  - /--set /p' THIS.yaml)\n");
    fprintf(f, "kind: trace-calibration\n");
    if (hbm_bw > 0) {
        char hw[600];
        tr_plain(hw, sizeof hw, hw_path);
        fprintf(f, "hardware: \"%s\"   # nominal HBM %.0f GB/s, for the efficiencies\n", hw,
                hbm_bw / 1e9);
    }
    /* the GPU the trace recorded (deviceProperties), so a scenario on another GPU refuses it */
    for (size_t i = 0; i < t->n_ranks; i++)
        if (t->ranks[i].device[0]) {
            char dev[300];
            tr_plain(dev, sizeof dev, t->ranks[i].device);
            fprintf(f, "device: \"%s\"   # the trace's deviceProperties name, rank %ld\n", dev,
                    t->ranks[i].rank);
            break;
        }
}

/* host: the launch and collective costs, the per-step host work, the timed phases */
static void tr_calib_host(FILE *f, const tr_report *r, const char *src, double launch_us,
                          double step_us)
{
    int have_launch = r->launch_interval.n > 0, have_step = r->host_work.n > 0;
    fprintf(f, "host:\n");
    fprintf(f, "  launch:\n");
    if (have_launch) {
        fprintf(f, "    dist: lognormal\n");
        fprintf(f, "    mean_us: %.4f\n", launch_us);
        fprintf(f, "    cv: %.4f\n", r->launch_interval.cv);
        fprintf(f, "    call_mean_us: %.4f   # of which the API call itself\n",
                r->launch_call.mean / 1e3);
        fprintf(f,
                "    source: {files: \"%s\", steps: %zu, launches: %zu, how: \"start to start of "
                "consecutive launch calls on one thread inside a step: mean and CV\"}\n",
                src, r->n_steps, r->launch_interval.n);
    } else {
        fprintf(f, "    unmeasured: true   # needs two consecutive launches in a step\n");
    }
    fprintf(f, "  collective:\n"); /* a collective's launch is a launch call like any other */
    if (have_launch) {
        fprintf(f, "    dist: lognormal\n");
        fprintf(f, "    mean_us: %.4f\n", launch_us);
        fprintf(f, "    cv: %.4f\n", r->launch_interval.cv);
        fprintf(f,
                "    source: {files: \"%s\", steps: %zu, launches: %zu, how: \"host.launch's "
                "values: a collective's launch is a launch call like any other\"}\n",
                src, r->n_steps, r->launch_interval.n);
    } else {
        fprintf(f, "    unmeasured: true   # needs two consecutive launches in a step\n");
    }
    fprintf(f, "  step:\n");
    if (have_step) {
        fprintf(f, "    dist: constant\n");
        fprintf(f, "    mean_us: %.4f\n", step_us);
        fprintf(f,
                "    source: {files: \"%s\", steps: %zu, how: \"last GPU activity of a step to the "
                "next step's first launch, mean (0 if they overlap)\"}\n",
                src, r->host_work.n);
    } else {
        fprintf(f, "    unmeasured: true   # needs two consecutive steps in one rank\n");
    }
    int n_phases = 0;
    for (int ph = 0; ph < PHASE_N; ph++) n_phases += r->phase[ph].n > 0;
    if (n_phases) { /* the phases the trace timed; the others stay the scenario's */
        fprintf(f, "  phases:\n");
        for (int ph = 0; ph < PHASE_N; ph++) {
            if (!r->phase[ph].n) continue;
            fprintf(f, "    %s:\n", phase_names[ph]);
            fprintf(f, "      dist: constant\n");
            fprintf(f, "      mean_us: %.4f\n", r->phase[ph].mean / 1e3);
            fprintf(f,
                    "      source: {files: \"%s\", steps: %zu, how: \"summed durations of the "
                    "step's Python function events %s, mean over steps\"}\n",
                    src, r->phase[ph].n, tr_phase_functions(ph));
        }
    }
}

/* gpu: the fixed kernel cost, the HBM efficiency and each class's achieved bandwidth;
 * returns the HBM efficiency written, 0 for none */
static double tr_calib_gpu(FILE *f, const tr_report *r, const char *src, double hbm_bw,
                           double fixed_us)
{
    fprintf(f, "gpu:\n");
    if (r->kernel_dur.n) {
        fprintf(f, "  kernel_fixed_us: %.4f\n", fixed_us);
        fprintf(f,
                "  kernel_fixed_source: {files: \"%s\", kernels: %zu, how: \"5th percentile of "
                "non-collective kernel durations\"}\n",
                src, r->kernel_dur.n);
    } else {
        fprintf(f, "  # kernel_fixed_us: unmeasured (no non-collective kernel)\n");
    }
    /* the GEMV/GEMM class's efficiency is what the cost model's hbm_efficiency scales */
    double hbm_eff = 0;
    if (hbm_bw > 0 && r->total.class_bytes_ns[TRC_GEMM] > 0) {
        double eff = r->total.class_bytes[TRC_GEMM] / (double)r->total.class_bytes_ns[TRC_GEMM] *
                     1e9 / hbm_bw;
        hbm_eff = eff > 1 ? 1.0 : eff < 0.001 ? 0.001 : eff;
        fprintf(f, "  hbm_efficiency: %.4f\n", hbm_eff);
        fprintf(f,
                "  hbm_efficiency_source: {files: \"%s\", how: \"achieved_gbps.gemm's efficiency "
                "(GEMV/GEMM kernels with recorded shapes over the hardware file's hbm_gbps), "
                "clamped to [0.001, 1]\"}\n",
                src);
    }
    fprintf(f, "  achieved_gbps:\n");
    int any = 0;
    for (int k = 0; k < TRC_COUNT; k++) {
        if (r->total.class_bytes_ns[k] <= 0) continue;
        any = 1;
        double gbps = r->total.class_bytes[k] / (double)r->total.class_bytes_ns[k];
        fprintf(f, "    %s: {value: %.2f", tr_class_name((tr_class)k), gbps);
        int eff = hbm_bw > 0 && k != TRC_COPY; /* copies are mostly host<->device, over PCIe */
        if (eff) fprintf(f, ", efficiency: %.4f", gbps * 1e9 / hbm_bw);
        fprintf(f,
                ", source: {files: \"%s\", how: \"input bytes of the launching op / kernel "
                "time%s\"}}\n",
                src, eff ? "; efficiency: over the hardware file's hbm_gbps" : "");
    }
    if (!any) fprintf(f, "    {}   # no op recorded its input shapes\n");
    return hbm_eff;
}

void tr_out_calib(FILE *f, const tr_trace *t, const tr_report *r, double hbm_bw,
                  const char *hw_path)
{
    char src[1024];
    tr_calib_files(t, src, sizeof src);
    /* the host cost per launch as tpsim models it: one launch to the next (the call and the
     * host work before the next one), from the trace's consecutive launches in steps */
    int have_launch = r->launch_interval.n > 0, have_step = r->host_work.n > 0;
    double launch_us = r->launch_interval.mean / 1e3,
           step_us = r->host_work.mean > 0 ? r->host_work.mean / 1e3 : 0.0;
    double fixed_us = (double)r->kernel_fixed_ns / 1e3;
    tr_calib_head(f, t, hbm_bw, hw_path);
    tr_calib_host(f, r, src, launch_us, step_us);
    double hbm_eff = tr_calib_gpu(f, r, src, hbm_bw, fixed_us);
    fprintf(f, "apply:\n");
    if (have_launch)
        for (int k = 0; k < 2; k++) /* a collective's launch is a launch call like any other */
            fprintf(f,
                    "  - host.%s.dist=lognormal\n  - host.%s.mean_us=%.4f\n  - host.%s.cv=%.4f\n",
                    k ? "collective" : "launch", k ? "collective" : "launch", launch_us,
                    k ? "collective" : "launch", r->launch_interval.cv);
    if (have_step) fprintf(f, "  - host.step.dist=constant\n  - host.step.mean_us=%.4f\n", step_us);
    for (int ph = 0; ph < PHASE_N; ph++)
        if (r->phase[ph].n)
            /* the whole phase at the trace's batch: no per-sequence term on top (measured.h) */
            fprintf(f, "  - host.phases.%s.dist=constant\n  - host.phases.%s.mean_us=%.4f\n"
                       "  - host.phases.%s.per_seq_us=0\n", phase_names[ph], phase_names[ph],
                    r->phase[ph].mean / 1e3, phase_names[ph]);
    if (r->kernel_dur.n) fprintf(f, "  - gpu.kernel_fixed_us=%.4f\n", fixed_us);
    if (hbm_eff > 0) fprintf(f, "  - gpu.hbm_efficiency=%.4f\n", hbm_eff);
}

void tr_out_kernels(FILE *f, const tr_trace *t)
{
    static const char *const kinds[] = {"kernel", "memcpy", "memset"};
    fprintf(f, "rank,kind,start_ns,dur_us,bytes,name\n");
    for (size_t i = 0; i < t->n_ranks; i++)
        for (size_t j = 0; j < t->ranks[i].gpu.n; j++) {
            const tr_gpu *g = &t->ranks[i].gpu.v[j];
            fprintf(f, "%ld,%s,%" PRId64 ",%" PRId64 ".%03d,%.0f,", t->ranks[i].rank,
                    kinds[g->kind <= TR_MEMSET ? g->kind : 0], g->ts, g->dur / 1000,
                    (int)(g->dur % 1000), g->bytes);
            csv_put(f, tr_name(t, g->name));
            fputc('\n', f);
        }
}
