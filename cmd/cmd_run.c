/* cmd_run.c: `tpsim run`: simulate decode steps of one cell and explain the step time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "domain.h"
#include "jw.h"
#include "locate.h"
#include "num.h"
#include "ofile.h"
#include "prec.h"
#include "run.h"
#include "trace.h"

/* ran, but the weights and KV cache do not fit in HBM (help, README, man page) */
#define RUN_EXIT_NO_FIT 1

static const char run_usage[] = "usage: tpsim run SCENARIO [flags]\n";
static const char run_help_text[] =
    "SCENARIO is a file or a name (scenarios/NAME.yaml; --calib: models/allreduce/NAME.yaml).\n"
    "exit status: 0 done; 1 ran, but the configuration does not fit in HBM (weights + KV\n"
    "cache per rank above the GPU's memory: the report says so); 2 bad input.\n"
    "A long run shows 'run: done/total steps  ETA' on stderr when it is a terminal; --quiet\n"
    "drops it.\n";

/* The trace calibration the scenario took (measured.h): each key it set, with its source:
 * and whether a --set replaced it; each part it left to the scenario, and why. */
static void run_json_measured(jw *w, const scenario *s)
{
    const measured_cal *m = &s->measured;
    const char *borrowed = NULL;
    tp_err ignored;
    (void)scenario_check_measured(s, &borrowed, &ignored); /* run_cell passed it */
    jw_key(w, "measured");
    jw_obj(w);
    jw_kstr(w, "file", m->path);
    jw_kstr(w, "named_by", m->named_by);
    if (m->device[0]) jw_kstr(w, "device", m->device);
    /* why a trace of other hardware is used; null: its own (docs/json.md) */
    jw_kstr(w, "borrowed_by", borrowed);
    jw_key(w, "set");
    jw_arr(w);
    for (int p = 0; p < MEASURED_PARTS; p++) {
        const measured_group *g = &m->parts[p];
        if (g->state == MEASURED_PRICED) continue; /* listed under kept */
        for (int k = 0; k < g->n_keys; k++) {
            double v;
            jw_obj(w);
            jw_kstr(w, "key", g->keys[k]);
            jw_key(w, "value");
            if (num_double(g->values[k], -1e300, 1e300, &v) == NUM_OK)
                jw_num(w, v);
            else
                jw_str(w, g->values[k]);
            jw_kstr(w, "source", g->source);
            jw_kstr(w, "overridden_by", g->overridden_by[k][0] ? g->overridden_by[k] : NULL);
            jw_end_obj(w);
        }
    }
    jw_end_arr(w);
    jw_key(w, "kept");
    jw_arr(w);
    for (int p = 0; p < MEASURED_PARTS; p++) {
        const measured_group *g = &m->parts[p];
        if (g->state == MEASURED_SET) continue;
        /* a phase the trace did not time is not a gap: only with_stack traces time them */
        if (p >= MEASURED_PHASE_SCHEDULE && g->state == MEASURED_ABSENT) continue;
        jw_obj(w);
        jw_kstr(w, "part", g->name);
        jw_kstr(w, "why", g->state == MEASURED_UNMEASURED ? "unmeasured"
                          : g->state == MEASURED_PRICED   ? "kernels"
                                                          : "absent");
        jw_end_obj(w);
    }
    jw_end_arr(w);
    jw_end_obj(w);
}

/* A calibration of other hardware in use: where it was measured, what it stands in for, and
 * how it was borrowed (calibration_from or --allow-foreign-calib). */
static void run_text_foreign(const char *measured_on, const char *used_for, const char *how)
{
    printf("           ** FOREIGN: measured on %s, used for %s (%s) **\n", measured_on, used_for,
           how);
}

static void run_text_measured(const scenario *s)
{
    const measured_cal *m = &s->measured;
    const char *borrowed = NULL;
    tp_err ignored;
    (void)scenario_check_measured(s, &borrowed, &ignored); /* run_cell passed it */
    printf("measured   %s (named by %s), a trace calibration:\n", m->path, m->named_by);
    if (borrowed) run_text_foreign(m->device[0] ? m->device : m->hardware, s->hw.name, borrowed);
    for (int p = 0; p < MEASURED_PARTS; p++) {
        const measured_group *g = &m->parts[p];
        if (p >= MEASURED_PHASE_SCHEDULE && g->state == MEASURED_ABSENT) continue;
        if (g->state == MEASURED_PRICED) {
            printf("           %s: not applied, the kernels: calibration prices every GPU op\n",
                   g->name);
            continue;
        }
        if (g->state != MEASURED_SET) {
            printf("           %s: %s, the scenario's value kept\n", g->name,
                   g->state == MEASURED_UNMEASURED ? "unmeasured in the trace" : "not in the file");
            continue;
        }
        printf("          ");
        for (int k = 0; k < g->n_keys; k++) {
            printf(" %s=%s", g->keys[k], g->values[k]);
            if (g->overridden_by[k][0]) printf(" (replaced by %s)", g->overridden_by[k]);
        }
        printf("\n             source: %s\n", g->source);
    }
}

/* The cell against the scenario's validated domain (domain.h). */
static void run_domain(const scenario *s, const run_summary *r, domain_report *d)
{
    domain_cell c = {r->req.tp, r->req.batch, r->req.ctx, s->graphs, s->hw.name, s->model.name};
    domain_check(s, &c, d);
}

/* The keys only tpsim validate --write-domain writes, echoed with the file's own names. */
static void run_json_written(jw *w, const scenario_domain *v)
{
    jw_key(w, "precision");
    jw_obj(w);
    jw_kstr(w, "weights", v->weights);
    jw_kstr(w, "kv_cache", v->kv_cache);
    jw_end_obj(w);
    jw_kstr(w, "allreduce", v->allreduce);
    jw_kstr(w, "host_phases", v->host_phases);
    if (v->graph_mode[0]) jw_kstr(w, "graph_mode", v->graph_mode);
    jw_kint(w, "queue_depth", v->queue_depth);
    jw_knum(w, "kill_switch_pct", v->kill_switch_pct);
    jw_kstr(w, "heldout_protocol", v->heldout_protocol);
    jw_kint(w, "heldout_cells", v->heldout_cells);
    if (v->heldout_cells) {
        jw_knum(w, "heldout_mape_pct", v->heldout_mape_pct);
        jw_knum(w, "heldout_rms_pct", v->heldout_rms_pct);
    }
    jw_key(w, "inputs");
    jw_arr(w);
    for (int i = 0; i < v->n_inputs; i++) {
        jw_obj(w);
        jw_kstr(w, "file", v->inputs[i].path);
        jw_kstr(w, "fp", v->inputs[i].fp);
        jw_end_obj(w);
    }
    jw_end_arr(w);
}

static void run_json_domain(jw *w, const scenario *s, const run_summary *r)
{
    domain_report d;
    run_domain(s, r, &d);
    jw_key(w, "domain");
    jw_obj(w);
    jw_kbool(w, "inside", d.inside);
    jw_key(w, "marks");
    jw_arr(w);
    for (int i = 0; i < d.n_marks; i++) jw_str(w, d.marks[i]);
    jw_end_arr(w);
    const scenario_domain *v = &s->domain;
    jw_key(w, "validated");
    if (!v->present) {
        jw_num(w, 0.0 / 0.0); /* null */
    } else {
        jw_obj(w);
        jw_key(w, "tp");
        jw_arr(w);
        for (int i = 0; i < v->n_tp; i++) jw_int(w, v->tp[i]);
        jw_end_arr(w);
        jw_key(w, "modes");
        jw_arr(w);
        if (v->eager) jw_str(w, "eager");
        if (v->graphs) jw_str(w, "graphs");
        jw_end_arr(w);
        jw_key(w, "batch");
        jw_arr(w);
        jw_int(w, v->batch_lo);
        jw_int(w, v->batch_hi);
        jw_end_arr(w);
        jw_key(w, "ctx");
        jw_arr(w);
        jw_int(w, v->ctx_lo);
        jw_int(w, v->ctx_hi);
        jw_end_arr(w);
        jw_kstr(w, "hardware", v->hardware);
        jw_kstr(w, "model", v->model);
        if (v->engine[0]) jw_kstr(w, "engine", v->engine);
        jw_kstr(w, "grid", v->grid);
        jw_kstr(w, "verdict", v->verdict);
        if (v->written) run_json_written(w, v);
        jw_end_obj(w);
    }
    jw_end_obj(w);
}

static void run_text_domain(const scenario *s, const run_summary *r)
{
    domain_report d;
    run_domain(s, r, &d);
    char buf[DOMAIN_MAX_MARKS * DOMAIN_MARK_MAX], what[DOMAIN_STATEMENT_MAX];
    domain_join(&d, buf, sizeof buf);
    if (!domain_statement_words(s, what, sizeof what)) {
        printf("domain     ** OUTSIDE: %s; no measurement backs this cell **\n", buf);
        return;
    }
    if (d.inside)
        printf("domain     inside what %s was tested on", s->name);
    else
        printf("domain     ** OUTSIDE what %s was tested on: %s **\n          ", s->name, buf);
    printf(" (%s)\n", what);
}

/* The all-reduce: the calibration that priced it (its path and how it was borrowed, null at
 * TP-1, as in sweep's rows) and one call's cost under the scenario's collective model. */
static void run_json_allreduce(jw *w, const scenario *s, const run_summary *r, const arcal *cal)
{
    jw_kstr(w, "calibration", cal ? cal->path : NULL);
    jw_kstr(w, "calibration_borrowed", r->calibration_borrowed);
    /* the kernel calibration that priced every GPU op (null: the roofline), and how borrowed */
    jw_kstr(w, "kernel_calibration", r->kernels ? r->kernels->path : NULL);
    jw_kstr(w, "kernel_calibration_borrowed", r->kernels_borrowed);
    if (!cal) return;
    const coll_cost *cc = &r->allreduce_call;
    jw_key(w, "allreduce_call"); /* "allreduce" is the breakdown's ms */
    jw_obj(w);
    jw_kstr(w, "collective_model", coll_model_names[s->allreduce_model]);
    jw_kstr(w, "priced_by", cc->model);
    jw_kstr(w, "algo", cc->algo);
    jw_kstr(w, "proto", cc->proto);
    jw_kbool(w, "copy_in", cc->copy_in);
    jw_knum(w, "latency_us", cc->latency_s * 1e6);
    jw_knum(w, "body_us", cc->body_s * 1e6);
    jw_knum(w, "us", cc->total_s * 1e6);
    jw_kbool(w, "eager_in_graph", cc->eager_in_graph);
    jw_kstr(w, "calibration_hardware", cal->hardware);
    jw_kint(w, "calibration_tp", cal->tp);
    jw_end_obj(w);
}

static void run_print_json(const scenario *s, const run_summary *r)
{
    const arcal *cal = r->calibration;
    const run_breakdown *b = &r->breakdown;
    jw w;
    jw_init(&w, stdout, 1);
    jw_obj(&w);
    jw_kstr(&w, "scenario", s->name);
    jw_kstr(&w, "model", s->model.name);
    jw_kstr(&w, "hardware", s->hw.name);
    jw_kstr(&w, "mode", s->graphs ? "graphs" : "eager");
    jw_kstr(&w, "graph_mode", scenario_graph_mode(s, s->graphs));
    jw_kstr(&w, "serving_engine", s->engine);
    jw_kstr(&w, "serving_engine_file", s->engine_path[0] ? s->engine_path : NULL);
    jw_kint(&w, "tp", r->req.tp);
    jw_kint(&w, "batch", r->req.batch);
    jw_kint(&w, "ctx", r->req.ctx);
    jw_kint(&w, "steps", r->req.steps);
    jw_kint(&w, "warmup", r->req.warmup);
    jw_kuint(&w, "seed", r->req.seed);
    double params, active; /* the checkpoint's, and those one token uses (MoE: fewer) */
    model_params(&s->model, &params, &active);
    jw_kint(&w, "params_total", (int64_t)llround(params));
    jw_kint(&w, "params_active", (int64_t)llround(active));
    jw_kint(&w, "ops_per_step", (int64_t)r->ops_per_step);
    jw_kint(&w, "kernels_per_step", (int64_t)r->kernels_per_step);
    jw_kint(&w, "allreduces_per_step", (int64_t)r->allreduces_per_step);
    jw_kint(&w, "collectives_per_step", (int64_t)r->collectives_per_step);
    jw_kint(&w, "graph_launches_per_step", (int64_t)r->graph_launches_per_step);
    jw_knum(&w, "collective_host_us", r->collective_dispatch_s * 1e6);
    jw_kint(&w, "events", (int64_t)r->events);
    jw_key(&w, "engine");
    jw_obj(&w);
    jw_kstr(&w, "name", r->method == ENGINE_MAXPLUS ? "maxplus" : "events");
    jw_kstr(&w, "why", r->method_why ? r->method_why : "");
    jw_end_obj(&w);
    jw_knum(&w, "weights_gb_per_rank", r->weight_bytes / 1e9);
    jw_knum(&w, "kv_cache_gb_per_rank", r->kv_bytes / 1e9);
    jw_kbool(&w, "fits_in_hbm", r->fits_in_hbm);
    run_json_allreduce(&w, s, r, cal);
    jw_key(&w, "step_ms");
    jw_obj(&w);
    jw_knum(&w, "mean", r->step_mean * 1e3);
    jw_knum(&w, "p50", r->step_p50 * 1e3);
    jw_knum(&w, "p99", r->step_p99 * 1e3);
    jw_knum(&w, "min", r->step_min * 1e3);
    jw_knum(&w, "max", r->step_max * 1e3);
    jw_end_obj(&w);
    cmd_json_breakdown(&w, "breakdown_ms", b);
    jw_kstr(&w, "bound", run_bound_name(run_bound_of(r)));
    double work, wait; /* gpu_idle split as the engine measured it (run_idle_split) */
    run_idle_split(r, &work, &wait);
    jw_key(&w, "gpu_idle_split_ms");
    jw_obj(&w);
    jw_knum(&w, "step_work", work * 1e3);
    jw_knum(&w, "launch_wait", wait * 1e3);
    jw_end_obj(&w);
    if (s->measured.path[0]) run_json_measured(&w, s);
    run_json_domain(&w, s, r);
    if (phase_total_s(&s->phases, r->req.batch) > 0) {
        jw_key(&w, "host_phases");
        jw_obj(&w);
        jw_kstr(&w, "timing", phase_mode_name(s->phases.overlap));
        jw_key(&w, "ms");
        jw_obj(&w);
        for (int i = 0; i < PHASE_N; i++)
            jw_knum(&w, phase_names[i], phase_at(&s->phases, i, r->req.batch).mean * 1e3);
        jw_end_obj(&w);
        jw_knum(&w, "total_ms", phase_total_s(&s->phases, r->req.batch) * 1e3);
        jw_end_obj(&w);
    }
    jw_end_obj(&w);
    jw_done(&w);
}

static void run_line(const char *what, double s, double step, const char *note)
{
    printf("  %-22s %9.3f ms %6.1f%%  %s\n", what, s * 1e3, step > 0 ? 100.0 * s / step : 0.0,
           note);
}

/* The all-reduce line and the calibration that priced it. */
static void run_text_allreduce(const scenario *s, const run_summary *r, const arcal *cal)
{
    const coll_cost *cc = &r->allreduce_call;
    int has_proto = strcmp(cc->proto, "-") != 0;
    printf("all-reduce %.2f us per layer call (collective.allreduce %s: %s %s%s%s; %s)\n",
           cc->total_s * 1e6, coll_model_names[s->allreduce_model], cc->model, cc->algo,
           has_proto ? "/" : "", has_proto ? cc->proto : "",
           cc->copy_in ? "eager copy-in launched as its own op" : "no copy-in op");
    double msg = (double)r->req.batch * (double)s->model.hidden * (double)s->model.dtype_bytes;
    if (cc->priced_by == COLL_NCCL_FIT && cal->min_bytes > 0 &&
        (msg < cal->min_bytes || (cal->max_bytes > 0 && msg > cal->max_bytes)))
        printf("           (%.0f bytes is outside the fit's range %.0f..%.0f: extrapolated)\n",
               msg, cal->min_bytes, cal->max_bytes);
    if (cc->eager_in_graph)
        printf("           (no graph-mode NCCL data in the calibration: its eager latency is "
               "used under the graph)\n");
    printf("calibration %s: %s, tp %ld", cal->path, cal->hardware, cal->tp);
    if (cal->has_linear)
        printf(", lambda %.2f us, beta %.1f GB/s%s", cal->lambda_s * 1e6, cal->beta / 1e9,
               cal->piecewise ? ", piecewise fit used" : "");
    printf("\n");
    if (r->calibration_borrowed)
        run_text_foreign(cal->hardware, s->hw.name, r->calibration_borrowed);
}

/* The verdict line: what limits the step (run_bound_of) and what would help. */
static void run_text_verdict(const scenario *s, const run_summary *r)
{
    const run_breakdown *b = &r->breakdown;
    double raw = r->step_mean - b->offset, work, wait;
    run_idle_split(r, &work, &wait);
    if (raw <= 0) {
        printf("verdict: empty step\n");
        return;
    }
    run_bound bound = run_bound_of(r);
    printf("verdict: %s: ", run_bound_name(bound));
    switch (bound) {
    case RUN_BOUND_HOST:
        printf("the GPU waits on launches %.0f%% of the step; a faster GPU would not help, %s "
               "would", 100.0 * wait / raw,
               s->graphs ? "fewer or cheaper launches outside the graph"
                         : "fewer launches (CUDA graphs)");
        break;
    case RUN_BOUND_STRAGGLER:
        printf("ranks wait %.0f%% of the step for the slowest peer", 100.0 * b->wait_peers / raw);
        break;
    case RUN_BOUND_STEP_WORK:
        printf("the GPU waits out the per-step host work (the driver's scheduling and broadcast, "
               "the host phases, host.step) %.0f%% of the step, more than on launches (%.0f%%) "
               "or peers", 100.0 * work / raw, 100.0 * wait / raw);
        break;
    default:
        printf("the stream is busy %.0f%% of the step (%.0f%% compute, %.0f%% all-reduce)",
               100.0 * (b->compute + b->allreduce) / raw, 100.0 * b->compute / raw,
               100.0 * b->allreduce / raw);
    }
    if (bound != RUN_BOUND_STEP_WORK && work > 0.05 * raw)
        printf("; the per-step host work idles the GPU another %.0f%%", 100.0 * work / raw);
    /* what overlapping would save is the engine's to say, not a guess here: name the option */
    if (work > 0.05 * raw && !s->phases.overlap && phase_total_s(&s->phases, r->req.batch) > 0 &&
        bound != RUN_BOUND_HOST)
        printf(" (vLLM V1 overlaps the host phases with the GPU's remaining work: --set "
               "execution.host_phases=overlapped shows what that saves)");
    printf(".\n");
}

/* Where one step goes. */
static void run_text_breakdown(const run_summary *r)
{
    const run_breakdown *b = &r->breakdown;
    double step = r->step_mean;
    printf("\nwhere one step goes (mean over steps and %ld rank%s):\n", r->req.tp,
           r->req.tp > 1 ? "s" : "");
    run_line("GPU compute", b->compute, step, "kernels and copies on the stream");
    run_line(r->collectives_per_step > r->allreduces_per_step ? "all-reduce + gather"
                                                              : "all-reduce",
             b->allreduce, step, "collective transfers, from the calibration for this k");
    run_line("wait for peers", b->wait_peers, step,
             "collective started, slowest rank not there yet");
    run_line("GPU idle", b->gpu_idle, step, "stream empty: waiting on the host");
    if (b->offset != 0) run_line("offset", b->offset, step, "scenario constant (the study's R0)");
    printf("  %-22s %9.3f ms\n", "= step", step * 1e3);
    run_line("host busy", b->host, step, "launches + per-step work (overlaps the GPU)");
    printf("\n");
}

static void run_print_text(const scenario *s, const run_summary *r)
{
    const arcal *cal = r->calibration;
    double step = r->step_mean;
    printf("tpsim run %s: %s on %s, TP-%ld, batch %ld, ctx %ld, %s mode\n", s->name, s->model.name,
           s->hw.name, r->req.tp, r->req.batch, r->req.ctx, s->graphs ? "CUDA-graph" : "eager");
    printf("step time  %.3f ms mean  (p50 %.3f, p99 %.3f, min %.3f, max %.3f; %ld step%s after %ld "
           "warm-up, seed %llu)\n",
           step * 1e3, r->step_p50 * 1e3, r->step_p99 * 1e3, r->step_min * 1e3, r->step_max * 1e3,
           r->req.steps, r->req.steps == 1 ? "" : "s", r->req.warmup,
           (unsigned long long)r->req.seed);
    double params, active;
    model_params(&s->model, &params, &active);
    if (s->model.experts)
        printf("model      %.2f B parameters, %.2f B active per token (%ld of %ld experts a "
               "token)\n", params / 1e9, active / 1e9, s->model.experts_per_tok,
               s->model.experts);
    else
        printf("model      %.2f B parameters\n", params / 1e9);
    printf("per step   %zu GPU ops on each rank: %zu kernel/copy launches, %zu all-reduces",
           r->ops_per_step, r->kernels_per_step, r->allreduces_per_step);
    if (r->collectives_per_step > r->allreduces_per_step)
        printf(", %zu other collectives", r->collectives_per_step - r->allreduces_per_step);
    printf("\n");
    printf("serving    %s (%s): host phases %s, %s\n", s->engine,
           s->engine_path[0] ? s->engine_path : "the scenario's own host model",
           phase_mode_name(s->phases.overlap),
           s->graphs ? (s->piecewise ? "PIECEWISE CUDA graphs" : "FULL CUDA graph")
                     : "no CUDA graphs (eager)");
    printf("engine     %s: %s\n",
           r->method == ENGINE_MAXPLUS ? "max-plus recursion (sim/maxplus.c)"
                                       : "event engine (sim/engine_events.c)",
           r->method_why ? r->method_why : "");
    printf("memory     %.1f GB weights + %.2f GB KV cache per rank of %.1f GB HBM less %.2f GiB "
           "reserve%s\n",
           r->weight_bytes / 1e9, r->kv_bytes / 1e9, s->hw.hbm_bytes / 1e9, RUN_RESERVE_GIB,
           r->fits_in_hbm ? "" : "  ** DOES NOT FIT: this cell cannot run as configured **");
    if (s->graphs)
        printf("graphs     %zu cudaGraphLaunch%s per step (%.1f us host each) + %.2f us GPU per "
               "node; %zu ops launched eagerly\n", r->graph_launches_per_step,
               r->graph_launches_per_step == 1 ? "" : "es", s->graph_launch.mean * 1e6,
               s->graph_node_s * 1e6, r->eager_launches_per_step);
    if (s->collective_measured && r->calibration)
        printf("collective host %.2f us per launch: the calibration's measured eager dispatch "
               "(host.collective: measured)\n", r->collective_dispatch_s * 1e6);
    if (phase_total_s(&s->phases, r->req.batch) > 0) {
        printf("host phases %s per step (ms at batch %ld):", phase_mode_name(s->phases.overlap),
               r->req.batch);
        for (int i = 0; i < PHASE_N; i++)
            printf("%s %s %.3f", i ? " +" : "", phase_names[i],
                   phase_at(&s->phases, i, r->req.batch).mean * 1e3);
        printf(" = %.3f\n", phase_total_s(&s->phases, r->req.batch) * 1e3);
    }
    if (cal) run_text_allreduce(s, r, cal);
    if (r->kernels) {
        printf("kernels    %s: %s, every GPU op's time from its fitted laws (tpsim fit-kernels)\n",
               r->kernels->path, r->kernels->hardware);
        if (r->kernels_borrowed)
            run_text_foreign(r->kernels->hardware, s->hw.name, r->kernels_borrowed);
    } else {
        /* no kernel calibration: say so, so a roofline answer is never read as measured */
        printf("kernels    none: every GPU op from the roofline of %s (HBM efficiency %.3g, "
               "FLOPs efficiency %.3g), no measured kernel times\n", s->hw.name, s->hbm_eff,
               s->flops_eff);
    }
    run_text_domain(s, r);
    if (s->measured.path[0]) run_text_measured(s);
    run_text_breakdown(r);
    run_text_verdict(s, r);
}

/* What one run command line asks for (run_parse). */
typedef struct run_opts {
    run_request req;
    const char *path, *trace_path;
    int json, have_seed, quiet;
} run_opts;

/* The command line into o and so: 0, 1 when --help was printed, -1 with err set. */
static int run_parse(int argc, char **argv, run_opts *o, scn_opts *so, tp_err *err)
{
    const char *v;
    long lv;
    enum { F_HELP, F_TP, F_BATCH, F_CTX, F_STEPS, F_WARMUP, F_SEED, F_FORMAT, F_TRACE, F_QUIET };
    static const cli_flag flags[] = {
        {"help", 'h', 0, NULL, "this help"},
        {"tp", 0, 1, "K", "tensor-parallel degree (default: the scenario's tp)"},
        {"batch", 0, 1, "B", "sequences per decode step (default: the scenario's)"},
        {"ctx", 0, 1, "C", "context length in tokens (default: the scenario's)"},
        {"steps", 0, 1, "N", "decode steps measured (default: the scenario's)"},
        {"warmup", 0, 1, "N", "steps run first and not measured"},
        {"seed", 0, 1, "S", "the random seed (default: the scenario's)"},
        {"format", 0, 1, "text|json", "the report's format (default text)"},
        {"trace", 0, 1, "FILE", "write the timeline as a Chrome/Kineto trace (.gz: gzip);\n"
                                "at most 100 steps"},
        {"quiet", 0, 0, NULL, "no progress line on a terminal"},
        CMD_SCN_FLAGS,
        CLI_END};
    cli_args ca;
    int f;
    run_request *req = &o->req;
    if (cli_begin(&ca, "run", "tpsim run --help", flags, argc, argv, err)) return -1;
    while ((f = cli_next(&ca, &v, err)) != CLI_DONE) {
        long *target = f == F_TP ? &req->tp : f == F_BATCH ? &req->batch : f == F_CTX ? &req->ctx
                     : f == F_STEPS ? &req->steps : f == F_WARMUP ? &req->warmup : NULL;
        if (f == CLI_ERROR) {
            return -1;
        } else if (f == CLI_OPERAND) {
            if (o->path) return tp_err_set(err, "run: a second scenario '%s', expected one", v);
            o->path = v;
        } else if (f == F_HELP) {
            cli_help(stdout, run_usage, flags, run_help_text);
            return 1;
        } else if (target) {
            long lo = f == F_WARMUP ? 0 : 1;
            long hi = f == F_TP ? 1024 : f == F_CTX ? (1L << 24) : 1000000;
            if (cli_long(ca.shown, v, lo, hi, &lv, err)) return -1;
            *target = lv;
        } else if (f == F_SEED) {
            if (cli_u64(ca.shown, v, &req->seed, err)) return -1;
            o->have_seed = 1;
        } else if (f == F_FORMAT) {
            if (strcmp(v, "text") && strcmp(v, "json"))
                return tp_err_set(err, "--format: '%s', expected text or json", v);
            o->json = !strcmp(v, "json");
        } else if (f == F_TRACE) {
            o->trace_path = v;
        } else if (f == F_QUIET) {
            o->quiet = 1;
        } else if (cmd_scn_flag(so, flags[f].name, v, err) < 0) {
            return -1;
        }
    }
    if (!o->path) return tp_err_set(err, "run: missing SCENARIO (see tpsim run --help)");
    return 0;
}

/* --trace: opens the file first, so a bad path fails before any work or output; slices stream
 * into it as the engine makes them. *tw the writer (malloc'd), req->trace its sink. */
static int run_open_trace(const scenario *s, const char *trace_path, run_request *req,
                          ofile *tf, trace_writer **tw, engine_sink *sink, tp_err *err)
{
    char title[256];
    snprintf(title, sizeof title, "%s tp=%ld batch=%ld ctx=%ld seed=%llu", s->name, req->tp,
             req->batch, req->ctx, (unsigned long long)req->seed);
    if (ofile_open(tf, trace_path, err)) return -1;
    if (!(*tw = malloc(sizeof **tw))) {
        ofile_abort(tf);
        return tp_err_set(err, "out of memory");
    }
    trace_init(*tw, tf->f, title);
    trace_identify(*tw, s->hw.name, s->model.name);
    /* the collectives' kernel names follow the model that prices them (trace.h) */
    const arcal *cal = NULL;
    const char *borrowed = NULL;
    if (req->tp > 1 && scenario_calibration(s, req->tp, &cal, &borrowed, err) == 0) {
        coll_setup cs = run_coll_setup(s, cal);
        trace_collectives(*tw, &cs,
                          prec_elem_bytes(s->program.prec_activations, s->model.dtype_bytes));
    }
    err->msg[0] = '\0'; /* run_cell reports a missing calibration itself */
    size_t pl = strlen(trace_path);
    if (pl > 3 && !strcmp(trace_path + pl - 3, ".gz") && trace_gzip(*tw)) {
        ofile_abort(tf);
        free(*tw);
        *tw = NULL;
        return tp_err_set(err, "out of memory");
    }
    *sink = (engine_sink){trace_start, trace_slice, *tw};
    req->trace = sink;
    return 0;
}

int tpsim_cmd_run(int argc, char **argv)
{
    tp_err err = {{0}};
    scn_opts so;
    memset(&so, 0, sizeof so);
    run_opts o = {{-1, -1, -1, -1, -1, 0, 0, RUN_REQ_PLAIN}, NULL, NULL, 0, 0, 0};
    int parsed = run_parse(argc, argv, &o, &so, &err);
    if (parsed) return parsed > 0 ? 0 : cmd_fail(&err);
    run_request req = o.req;
    const char *path = o.path, *trace_path = o.trace_path;
    char scn_buf[1024]; /* a scenario by name: scenarios/NAME.yaml (locate.h) */
    if (!(path = locate_arg("scenarios", ".yaml", path, scn_buf, sizeof scn_buf, &err)))
        return cmd_fail(&err);
    scenario *s = calloc(1, sizeof *s);
    if (!s) return tp_err_set(&err, "out of memory"), cmd_fail(&err);
    int status = 2;
    run_summary sum;
    ofile tf = {0};
    if (scn_opts_load(path, &so, s, &err)) goto out;
    cmd_notes(s);
    if (!o.have_seed) req.seed = s->seed;
    req = run_defaults(s, req);
    if (scenario_check_flag_calibs(s, &req.tp, 1, &err)) goto out;
    /* a trace is for looking at: the cap counts measured steps (warm-up is not written) */
    if (trace_path && req.steps > 100) {
        tp_err_set(&err, "--trace: %ld steps, expected at most 100 with a trace (use --steps)",
                   req.steps);
        goto out;
    }
    trace_writer *tw = NULL;
    engine_sink sink;
    if (trace_path && run_open_trace(s, trace_path, &req, &tf, &tw, &sink, &err)) goto out;
    /* no detail: the steps are folded as they end, so memory does not grow with --steps */
    /* a long run shows its progress on a terminal, as sweep does (--quiet: never) */
    int ran = run_cell_progress(s, &req, &sum, !o.quiet && isatty(STDERR_FILENO) ? "run" : NULL,
                                &err) == 0 &&
              run_check_step(s, &sum, &err) == 0;
    if (tw) {
        ran = ran ? trace_end(tw, &err) == 0 : (trace_abort(tw), 0);
        free(tw);
        if (!ran) ofile_abort(&tf);
    }
    if (!ran) goto out;
    if (o.json)
        run_print_json(s, &sum);
    else
        run_print_text(s, &sum);
    /* the trace is installed last, once the report reached stdout (ofile_commit) */
    if (trace_path && ofile_commit(&tf, &err)) goto out;
    status = 0;
    if (!sum.fits_in_hbm) { /* a result, not bad input: the report is whole, the status says it */
        fflush(stdout);
        fprintf(stderr, "tpsim: run: the configuration does not fit in HBM: %.1f GB weights + "
                        "%.2f GB KV cache per rank > %.1f GB HBM less %.2f GiB reserve (exit "
                        "status 1)\n",
                sum.weight_bytes / 1e9, sum.kv_bytes / 1e9, s->hw.hbm_bytes / 1e9,
                RUN_RESERVE_GIB);
        status = RUN_EXIT_NO_FIT;
    }
out:
    if (status == 2) cmd_fail(&err);
    scenario_free(s);
    free(s);
    return status;
}
