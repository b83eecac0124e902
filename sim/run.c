/* run.c: see run.h. */
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

run_request run_defaults(const scenario *s, run_request r)
{
    if (r.tp < 0) r.tp = s->tp;
    if (r.batch < 0) r.batch = s->batch;
    if (r.ctx < 0) r.ctx = s->ctx;
    if (r.steps < 0) r.steps = s->steps;
    if (r.warmup < 0) r.warmup = s->warmup;
    return r;
}

/* One host model per rank: the scenario's and its phases at this batch, plus rank 0's driver
 * work and a slow rank; `collective` is each collective launch's host cost. */
static void run_hosts(const scenario *s, long tp, long batch, dist collective, engine_host *hosts)
{
    for (long r = 0; r < tp; r++) {
        engine_host h = {s->launch, collective, s->step, dist_const(0.0), {{0}}};
        phase_fill(&s->phases, batch, &h); /* every rank runs the step's host phases */
        if (r == 0)
            h.driver = dist_make(s->driver.kind,
                                 s->driver.mean + s->driver_per_peer_s * (double)(tp - 1),
                                 s->driver.cv);
        if (r == s->slow_rank) {
            h.launch = dist_make(h.launch.kind, h.launch.mean * s->slow_launch_factor, h.launch.cv);
            h.collective = dist_make(h.collective.kind, h.collective.mean * s->slow_launch_factor,
                                     h.collective.cv);
            h.step = dist_make(h.step.kind, h.step.mean + s->slow_extra_step_s, h.step.cv);
        }
        hosts[r] = h;
    }
}

/* The summary, folded as steps end: a step's k rank accounts are held until the last
 * rank ends it, then added in rank order (the sums do not depend on which rank ended
 * first). Ranks are at most a few steps apart (collectives tie them), so the ring stays
 * small; it grows if a program lets them drift further. */
typedef struct run_fold {
    const scenario *s;
    long k, warmup;
    engine_step *slot;  /* cap steps x k accounts, step t at (t % cap) */
    long *filled;       /* accounts received per slot */
    long cap, next;     /* next: the oldest step not yet folded */
    double sum, dur_sum;
    run_breakdown b;
    qsketch steps;
    int oom;
    const char *progress; /* run_cell_progress's label, NULL for none */
    long total;           /* steps + warmup */
    double t0, shown;     /* start, last line (monotonic s); shown 0: nothing on screen */
} run_fold;

static double fold_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The progress line (run_cell_progress), checked every 256 folded steps, or every step in a
 * run of at most 1024 (a traced run is at most 100 steps, each seconds long at TP-8). */
static void fold_progress(run_fold *f)
{
    if (!f->progress || (f->total > 1024 && f->next % 256)) return;
    double now = fold_now();
    if (f->shown > 0 && now - f->shown < 0.25) return;
    f->shown = now;
    double eta = (now - f->t0) / (double)f->next * (double)(f->total - f->next);
    fprintf(stderr, "\r%s: %ld/%ld steps  ETA %.0fs   ", f->progress, f->next, f->total, eta);
    fflush(stderr);
}

static void fold_step(run_fold *f, long t)
{
    engine_step *acc = &f->slot[(size_t)(t % f->cap) * (size_t)f->k];
    if (t >= f->warmup) {
        double dur = 0;
        for (long r = 0; r < f->k; r++) {
            const engine_step *st = &acc[r];
            dur += st->dur;
            f->b.host += st->host;
            f->b.compute += st->compute;
            f->b.allreduce += st->allreduce;
            f->b.wait_peers += st->wait_peers;
            f->b.gpu_idle += st->dur - st->compute - st->allreduce - st->wait_peers;
            f->b.step_work_idle += st->step_work_idle;
        }
        double step = dur / (double)f->k + f->s->offset_s;
        f->sum += step;
        if (qsketch_add(&f->steps, step)) f->oom = 1;
    }
    f->filled[t % f->cap] = 0;
}

static int fold_grow(run_fold *f)
{
    long cap = f->cap ? 2 * f->cap : 4;
    engine_step *slot = malloc((size_t)cap * (size_t)f->k * sizeof *slot);
    long *filled = calloc((size_t)cap, sizeof *filled);
    if (!slot || !filled) {
        free(slot);
        free(filled);
        return -1;
    }
    for (long t = f->next; t < f->next + f->cap; t++) { /* the open steps keep their order */
        memcpy(&slot[(size_t)(t % cap) * (size_t)f->k],
               &f->slot[(size_t)(t % f->cap) * (size_t)f->k], (size_t)f->k * sizeof *slot);
        filled[t % cap] = f->filled[t % f->cap];
    }
    free(f->slot);
    free(f->filled);
    f->slot = slot;
    f->filled = filled;
    f->cap = cap;
    return 0;
}

static void fold_on_step(void *ctx, long step, long rank, const engine_step *acc)
{
    run_fold *f = ctx;
    if (f->oom) return;
    if (step >= f->next + f->cap && fold_grow(f)) {
        f->oom = 1;
        return;
    }
    f->slot[(size_t)(step % f->cap) * (size_t)f->k + (size_t)rank] = *acc;
    if (++f->filled[step % f->cap] < f->k) return;
    while (f->filled[f->next % f->cap] == f->k) {
        fold_step(f, f->next++);
        fold_progress(f);
    }
}

static int fold_finish(run_fold *f, long steps, uint64_t events, run_summary *out, tp_err *err)
{
    if (f->oom) return tp_err_set(err, "out of memory");
    run_breakdown b = f->b;
    double norm = 1.0 / ((double)steps * (double)f->k);
    b.host *= norm, b.compute *= norm, b.allreduce *= norm, b.wait_peers *= norm;
    b.gpu_idle *= norm;
    b.step_work_idle *= norm;
    /* idle is a difference of sums: drop the last-bit rounding noise, not real idle time */
    if (fabs(b.gpu_idle) < 1e-9 * (b.compute + b.allreduce + b.wait_peers)) b.gpu_idle = 0;
    b.offset = f->s->offset_s;
    out->breakdown = b;
    out->step_mean = f->sum / (double)steps;
    out->step_min = f->steps.min;
    out->step_max = f->steps.max;
    out->step_p50 = qsketch_quantile(&f->steps, 0.50);
    out->step_p99 = qsketch_quantile(&f->steps, 0.99);
    out->events = events;
    return 0;
}

static void fold_free(run_fold *f)
{
    free(f->slot);
    free(f->filled);
    qsketch_free(&f->steps);
}

/* Whether this cell replays CUDA graphs: the scenario's mode unless the request runs eagerly. */
static int run_graphs(const scenario *s, const run_request *req)
{
    return s->graphs && !req->eager;
}

coll_setup run_coll_setup(const scenario *s, const arcal *cal)
{
    return (coll_setup){s->allreduce_model, cal, s->hw.compute_capability};
}

/* What a cell's checks resolve, kept for the run: the all-reduce calibration for its tp (NULL
 * at tp 1), how it is borrowed (NULL, "calibration_from" or "--allow-foreign-calib"), and the
 * collective model over it. */
typedef struct run_resolved {
    const arcal *cal;
    const char *borrowed;
    coll_setup coll;
} run_resolved;

/* run_check_tp's checks, resolving the calibration and the collective model once. */
static int run_resolve(const scenario *s, long tp, run_resolved *res, tp_err *err)
{
    const char *measured_borrowed;
    *res = (run_resolved){NULL, NULL, run_coll_setup(s, NULL)};
    if (model_check_tp(&s->model, tp, err) || scenario_check_measured(s, &measured_borrowed, err))
        return -1;
    if (tp > 1 && scenario_allreduce(s, tp)) {
        if (scenario_calibration(s, tp, &res->cal, &res->borrowed, err)) return -1;
        res->coll = run_coll_setup(s, res->cal);
        if (coll_check(&res->coll, err)) return -1;
    }
    if (tp > 1 && !scenario_allreduce(s, tp)) {
        char have[128] = "";
        size_t used = 0;
        for (int i = 0; i < s->n_cals && used < sizeof have - 8; i++)
            used += (size_t)snprintf(have + used, sizeof have - used, "%s%ld", i ? ", " : "",
                                     s->cals[i].tp);
        return tp_err_set(err,
                          "%s: no all-reduce calibration for tp %ld (have: %s); add one to its "
                          "allreduce list or pass --calib FILE (made by tpsim fit-allreduce)",
                          s->path, tp, used ? have : "none");
    }
    if (s->slow_rank >= tp)
        return tp_err_set(err,
                          "%s: host.slow_rank.rank: %ld is not a rank at tp %ld, expected 0..%ld",
                          s->slow_rank_at, s->slow_rank, tp, tp - 1);
    return 0;
}

int run_check_tp(const scenario *s, long tp, tp_err *err)
{
    run_resolved res;
    return run_resolve(s, tp, &res, err);
}

int run_cell(const scenario *s, const run_request *req, run_summary *out, run_detail *detail,
             tp_err *err)
{
    return run_cell_on(s, req, ENGINE_AUTO, out, detail, err);
}

static int run_cell_with(const scenario *s, const run_request *req, engine_method method,
                         run_summary *out, run_detail *detail, const char *progress, tp_err *err);

int run_cell_on(const scenario *s, const run_request *req, engine_method method, run_summary *out,
                run_detail *detail, tp_err *err)
{
    return run_cell_with(s, req, method, out, detail, NULL, err);
}

int run_cell_progress(const scenario *s, const run_request *req, run_summary *out,
                      const char *progress, tp_err *err)
{
    return run_cell_with(s, req, ENGINE_AUTO, out, NULL, progress, err);
}

/* The cell's step program with each op's GPU time (the cost model over the resolved
 * collective model), and the summary's all-reduce fields. On error nothing is left allocated. */
static int run_program(const scenario *s, const run_request *req, const run_resolved *res,
                       run_summary *out, prog *p, tp_err *err)
{
    prog_opts po = s->program;
    po.piecewise = run_graphs(s, req) && s->piecewise;
    if (res->cal) {
        /* the copy-in is launched only where vLLM's custom all-reduce runs eagerly */
        double msg = (double)req->batch * (double)s->model.hidden *
                     prec_elem_bytes(s->program.prec_activations, s->model.dtype_bytes);
        out->allreduce_call = coll_allreduce(&res->coll, msg, run_graphs(s, req));
        po.allreduce_no_copy = !out->allreduce_call.copy_in;
    }
    out->calibration = res->cal;
    out->calibration_borrowed = res->borrowed;
    if (prog_build(p, &s->model, &po, req->tp, req->batch, req->ctx, err)) return -1;
    int graphs = run_graphs(s, req);
    cost_params cp = {s->hw.hbm_bw,     s->hbm_eff,        s->hw.peak_flops, s->flops_eff,
                      s->hw.pcie_bw,    s->kernel_fixed_s, graphs ? s->graph_node_s : 0.0,
                      graphs,           res->coll,         s->hw.fp8_peak_flops, NULL, 0};
    cp.kernel_err_sign = s->kernel_err_sign;
    if (scenario_kernels(s, &cp.kernels, &out->kernels_borrowed, err) ||
        cost_apply(p, &cp, &out->analytic, err) ||
        (req->reprice && req->reprice(req->reprice_ctx, p, err))) {
        prog_free(p);
        return -1;
    }
    out->kernels = cp.kernels;
    return 0;
}

int run_collective_dispatch(const scenario *s, const run_summary *r, dist *out, tp_err *err)
{
    *out = s->collective;
    if (!s->collective_measured || !r->calibration) return 0;
    const arcal *c = r->calibration;
    double msg = (double)r->req.batch * (double)s->model.hidden *
                 prec_elem_bytes(s->program.prec_activations, s->model.dtype_bytes);
    coll_path path = coll_vllm_path(r->req.tp, s->hw.compute_capability, msg, 1);
    int symm = s->allreduce_model == COLL_AUTO &&
               (path == COLL_PATH_SYMM_MULTIMEM || path == COLL_PATH_SYMM_TWO_SHOT);
    double d = symm ? c->symm_eager_dispatch_s : c->eager_dispatch_s;
    if (d < 0)
        return tp_err_set(err, "%s: host.collective: measured, but the tp %ld calibration %s has "
                          "no measured eager dispatch (custom.%seager_dispatch_us), expected one "
                          "(tpsim fit-allreduce --aic writes it) or a host.collective dist",
                          s->path, r->req.tp, c->path, symm ? "symm_mem_" : "");
    /* the measured call includes the copy into the registered buffer, its own launch here */
    if (r->allreduce_call.copy_in) d -= s->launch.mean;
    *out = dist_const(d > 0 ? d : 0.0);
    return 0;
}

static engine_config run_engine_config(const scenario *s, const run_request *req, const prog *p,
                                       const engine_host *hosts, engine_method method)
{
    return (engine_config){.program = p,
                           .tp = req->tp,
                           .steps = req->steps,
                           .warmup = req->warmup,
                           .seed = req->seed,
                           .host = hosts,
                           .graphs = run_graphs(s, req),
                           .graph_launch = s->graph_launch,
                           .broadcast_wait = s->broadcast_wait,
                           .phases_overlap = s->phases.overlap,
                           .queue_depth = s->queue_depth,
                           .launch_latency_s = s->launch_latency_s,
                           .trace = req->trace,
                           .method = method};
}

/* The summary's fields the program and the engine's result give. */
static void run_fill(const scenario *s, const prog *p, const engine_result *r, run_summary *out)
{
    out->method = r->method;
    out->method_why = r->method_why;
    out->ops_per_step = p->n;
    out->graph_launches_per_step = run_graphs(s, &out->req) ? prog_graph_runs(p) : 0;
    out->eager_launches_per_step = run_graphs(s, &out->req) ? prog_eager_ops(p) : p->n;
    out->kernels_per_step = p->n_kernels;
    out->allreduces_per_step = p->n_allreduce;
    out->collectives_per_step = p->n_collectives;
    out->weight_bytes = p->weight_bytes;
    out->kv_bytes = p->kv_bytes;
    out->fits_in_hbm = p->weight_bytes + p->kv_bytes + RUN_RESERVE_BYTES <= s->hw.hbm_bytes;
}

void run_idle_split(const run_summary *r, double *step_work_s, double *launch_wait_s)
{
    double idle = r->breakdown.gpu_idle > 0 ? r->breakdown.gpu_idle : 0.0;
    double work = r->breakdown.step_work_idle < idle ? r->breakdown.step_work_idle : idle;
    *step_work_s = work > 0 ? work : 0.0;
    *launch_wait_s = idle - *step_work_s;
}

run_bound run_bound_of(const run_summary *r)
{
    const run_breakdown *b = &r->breakdown;
    double raw = r->step_mean - b->offset, work, wait;
    if (raw <= 0) return RUN_BOUND_GPU;
    run_idle_split(r, &work, &wait);
    /* the stream's work is on the critical path unless the host is busy all step long while
     * the GPU idles (then a faster GPU would not shorten the step) */
    int gpu_on_path = b->host < 0.95 * raw || b->gpu_idle <= 0.05 * raw;
    double best = gpu_on_path ? b->compute + b->allreduce : 0.0;
    run_bound k = b->allreduce > b->compute ? RUN_BOUND_ALLREDUCE : RUN_BOUND_GPU;
    if (wait > best) best = wait, k = RUN_BOUND_HOST;
    if (work > best) best = work, k = RUN_BOUND_STEP_WORK;
    if (b->wait_peers > best) k = RUN_BOUND_STRAGGLER;
    return k;
}

const char *run_bound_name(run_bound b)
{
    static const char *const names[] = {"GPU-bound", "all-reduce-bound", "host-bound",
                                        "step-work-bound", "straggler-bound"};
    return (unsigned)b < sizeof names / sizeof names[0] ? names[b] : "GPU-bound";
}

static int run_cell_with(const scenario *s, const run_request *req, engine_method method,
                         run_summary *out, run_detail *detail, const char *progress, tp_err *err)
{
    memset(out, 0, sizeof *out);
    out->req = *req;
    run_detail d;
    memset(&d, 0, sizeof d);
    run_resolved res; /* the calibration and collective model, resolved once for the cell */
    if (run_resolve(s, req->tp, &res, err) || run_program(s, req, &res, out, &d.program, err))
        return -1;
    engine_host *hosts = calloc((size_t)req->tp, sizeof *hosts);
    run_fold fold = {.s = s, .k = req->tp, .warmup = req->warmup, .progress = progress,
                     .total = req->steps + req->warmup, .t0 = progress ? fold_now() : 0};
    qsketch_init(&fold.steps);
    int rc = -1;
    if (!hosts || fold_grow(&fold)) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    dist coll;
    if (run_collective_dispatch(s, out, &coll, err)) goto out;
    out->collective_dispatch_s = coll.mean;
    run_hosts(s, req->tp, req->seqs > 0 ? req->seqs : req->batch, coll, hosts);
    engine_config ec = run_engine_config(s, req, &d.program, hosts, method);
    if (!detail) { /* nobody keeps the steps: fold them as they end */
        ec.on_step = fold_on_step;
        ec.on_step_ctx = &fold;
    }
    if (engine_run(&ec, &d.result, err)) goto out;
    if (detail) /* the kept steps, folded in order */
        for (long t = 0; t < req->steps + req->warmup; t++)
            for (long r = 0; r < req->tp; r++)
                fold_on_step(&fold, t, r, engine_at(&d.result, t, r));
    if (fold.shown > 0) { /* the progress line goes, as sweep's does */
        fputs("\r                                                            \r", stderr);
        fflush(stderr);
    }
    if (fold_finish(&fold, req->steps, d.result.events, out, err)) goto out;
    run_fill(s, &d.program, &d.result, out);
    rc = 0;
out:
    free(hosts);
    fold_free(&fold);
    if (rc == 0 && detail) {
        *detail = d;
    } else {
        engine_result_free(&d.result);
        prog_free(&d.program);
    }
    return rc;
}

int run_program_costed(const scenario *s, const run_request *req, prog *p, tp_err *err)
{
    run_summary scratch;
    run_resolved res;
    memset(&scratch, 0, sizeof scratch);
    memset(p, 0, sizeof *p);
    return run_resolve(s, req->tp, &res, err) || run_program(s, req, &res, &scratch, p, err)
               ? -1
               : 0;
}

double run_allreduce_call_s(const scenario *s, const run_summary *r)
{
    (void)s;
    return r->calibration ? r->allreduce_call.total_s : 0.0;
}

int run_check_step(const scenario *s, const run_summary *r, tp_err *err)
{
    if (r->step_min > 0) return 0;
    return tp_err_set(err, "%s: offset_ms %g makes the step %.3f ms at tp %ld batch %ld, expected "
                      "a step > 0", s->path, s->offset_s * 1e3, r->step_min * 1e3, r->req.tp,
                      r->req.batch);
}

void run_release(run_detail *d)
{
    engine_result_free(&d->result);
    prog_free(&d->program);
}
