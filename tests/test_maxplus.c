/* test_maxplus.c: the max-plus fast path against the event engine (the reference
 * semantics). Both draw each rank's costs in the rank's own program order, so the per-rank
 * step accounts must agree to the bit, not statistically: this is asserted with memcmp over
 * hundreds of random configurations (eager and graphs, broadcast wait, stragglers, queue
 * depths from 1 past the program length, every cost distribution, launch latencies) on
 * synthetic programs, and on the real scenarios through run_cell for every collective
 * model in the tree. Also: the quantile sketch against a full sort, and the folded summary
 * against the one computed from kept steps. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "coll.h"
#include "engine.h"
#include "maxplus.h"
#include "pcg32.h"
#include "qsketch.h"
#include "run.h"
#include "scenario.h"

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Memory flat in steps (first in this binary, so the process peak is still low): 150,000
 * steps folded as they end raise the peak RSS by under 4 MB; the same run keeping every
 * step (run_detail) raises it by at least 9 MB of the 150,000 x 2 x 48 B = 14.4 MB it stores,
 * which shows the measurement can see such growth (with 100,000 steps, 9.6 MB, the margin was
 * too thin once loading the kernel calibration's measured FP8 grid set the peak first). */
static void test_memory_flat_in_steps(void **state)
{
    (void)state;
    scenario *s = calloc(1, sizeof *s);
    tp_err err;
    /* host.step is absent from the scenario (zero per-step host work): named whole here; the
     * 8B model cut to one layer makes each of the many steps cheap (memory is per step, not per
     * op) */
    const char *sets[] = {"execution.mode=graphs", "host.step.dist=lognormal",
                          "host.step.mean_us=0", "host.step.cv=0.2", "model=llama-3.1-8b"};
    assert_int_equal(scenario_load("scenarios/eager-host-dispatch.yaml", sets, 5, s, &err), 0);
    s->model.layers = 1;
    run_request req = {2, 1, 2048, 150000, 0, 3, 0, RUN_REQ_PLAIN};
    run_summary sum;
    run_detail d;
    long before = peak_rss_kb();
    assert_int_equal(run_cell(s, &req, &sum, NULL, &err), 0);
    long folded = peak_rss_kb();
    if (folded - before >= 4096) fail_msg("folded: peak RSS grew %ld KB", folded - before);
    assert_int_equal(run_cell(s, &req, &sum, &d, &err), 0);
    long kept = peak_rss_kb();
    run_release(&d);
    if (kept - folded < 9000) fail_msg("kept steps: peak RSS grew only %ld KB", kept - folded);
    scenario_free(s);
    free(s);
}

static double uni(pcg32 *g, double lo, double hi) { return lo + (hi - lo) * pcg32_unit(g); }

static dist random_dist(pcg32 *g, double mean_hi)
{
    dist_kind kind = (dist_kind)pcg32_bounded(g, 4);
    double mean = pcg32_bounded(g, 5) == 0 ? 0.0 : uni(g, 0, mean_hi);
    double cv_hi = kind == DIST_UNIFORM  ? DIST_UNIFORM_MAX_CV
                   : kind == DIST_NORMAL ? DIST_NORMAL_MAX_CV
                                         : 1.0;
    double cv = pcg32_bounded(g, 4) == 0 ? 0.0 : uni(g, 0, cv_hi);
    return dist_make(kind, mean, cv);
}

/* A random program: kernels, copies and collectives in random order; graphable runs. */
static prog random_prog(pcg32 *g, long tp)
{
    prog p = {0};
    p.n = p.cap = 1 + pcg32_bounded(g, 120);
    p.ops = calloc(p.n, sizeof *p.ops);
    p.tp = tp;
    int graphable = 1;
    for (size_t i = 0; i < p.n; i++) {
        uint32_t roll = pcg32_bounded(g, 10);
        prog_op *o = &p.ops[i];
        o->kind = tp > 1 && roll < 2   ? PROG_ALLREDUCE
                  : tp > 1 && roll < 3 ? PROG_ALLGATHER
                  : roll < 4           ? PROG_H2D
                  : roll < 5           ? PROG_D2H
                                       : PROG_KERNEL;
        if (pcg32_bounded(g, 8) == 0) graphable = !graphable;
        o->graphable = (uint8_t)graphable;
        o->layer = -1;
        o->gpu_s = pcg32_bounded(g, 20) == 0 ? 0.0 : uni(g, 0.5e-6, 60e-6);
        if (prog_is_collective(o)) p.n_collectives++;
        else p.n_kernels++;
    }
    return p;
}

static void test_random_configs_bit_identical(void **state)
{
    (void)state;
    pcg32 g;
    pcg32_seed(&g, 20261201, 7);
    int n_bcast = 0, n_graphs = 0, n_blocking = 0, n_slow = 0, n_overlap = 0;
    for (int trial = 0; trial < 400; trial++) {
        long tp = 1 + (long)pcg32_bounded(&g, 8);
        prog p = random_prog(&g, tp);
        engine_host *h = calloc((size_t)tp, sizeof *h);
        engine_host base = {random_dist(&g, 30e-6), random_dist(&g, 40e-6),
                            random_dist(&g, 800e-6), dist_const(0), {{0}}};
        int phased = pcg32_bounded(&g, 2) == 0; /* host phases (phase.h), random dists */
        for (int i = 0; phased && i < ENGINE_PHASES; i++) base.phases[i] = random_dist(&g, 400e-6);
        for (long r = 0; r < tp; r++) h[r] = base;
        h[0].driver = random_dist(&g, 1500e-6);
        int slow = pcg32_bounded(&g, 3) == 0;
        if (slow) { /* a straggler: slower launches and extra per-step work on one rank */
            long r = (long)pcg32_bounded(&g, (uint32_t)tp);
            h[r].launch =
                dist_make(base.launch.kind, base.launch.mean * uni(&g, 1, 3), base.launch.cv);
            h[r].step =
                dist_make(base.step.kind, base.step.mean + uni(&g, 0, 500e-6), base.step.cv);
            n_slow++;
        }
        engine_config c = {.program = &p,
                           .tp = tp,
                           .steps = 1 + (long)pcg32_bounded(&g, 6),
                           .warmup = (long)pcg32_bounded(&g, 3),
                           .seed = pcg32_next(&g),
                           .host = h,
                           .graphs = (int)pcg32_bounded(&g, 2),
                           .graph_launch = random_dist(&g, 60e-6),
                           .broadcast_wait = (int)pcg32_bounded(&g, 2),
                           .phases_overlap = phased && pcg32_bounded(&g, 2),
                           .queue_depth = 1 + (long)pcg32_bounded(&g, (uint32_t)p.n + 8),
                           .launch_latency_s = pcg32_bounded(&g, 3) == 0 ? 0.0 : uni(&g, 0, 8e-6)};
        n_bcast += c.broadcast_wait;
        n_graphs += c.graphs;
        n_overlap += c.phases_overlap;
        n_blocking += (size_t)c.queue_depth < p.n;
        engine_result ev, mp;
        tp_err err;
        c.method = ENGINE_EVENTS;
        assert_int_equal(engine_run(&c, &ev, &err), 0);
        c.method = ENGINE_MAXPLUS;
        assert_int_equal(engine_run(&c, &mp, &err), 0);
        assert_int_equal(ev.method, ENGINE_EVENTS);
        assert_int_equal(mp.method, ENGINE_MAXPLUS);
        size_t bytes = (size_t)(c.steps + c.warmup) * (size_t)tp * sizeof *ev.rank_steps;
        if (memcmp(ev.rank_steps, mp.rank_steps, bytes) != 0)
            fail_msg("trial %d (tp %ld, n %zu, qd %ld, graphs %d, bcast %d, overlap %d): accounts "
                     "differ", trial, tp, p.n, c.queue_depth, c.graphs, c.broadcast_wait,
                     c.phases_overlap);
        /* event counts agree except for broadcast ties, which only the event order settles */
        if (!c.broadcast_wait) assert_int_equal(ev.events, mp.events);
        engine_result_free(&ev);
        engine_result_free(&mp);
        free(h);
        prog_free(&p);
    }
    /* the random draw covered every feature many times */
    assert_true(n_bcast > 100 && n_graphs > 100 && n_blocking > 100 && n_slow > 60 &&
                n_overlap > 60);
}

static void count_slice(void *ctx, const engine_slice *sl)
{
    (void)sl;
    ++*(size_t *)ctx;
}

/* Traces and op kinds the recursion does not know go to the event engine. */
static void test_fallback(void **state)
{
    size_t n_slices = 0;
    engine_sink sink = {NULL, count_slice, &n_slices};
    (void)state;
    pcg32 g;
    pcg32_seed(&g, 3, 3);
    prog p = random_prog(&g, 2);
    engine_host h[2] = {{dist_const(5e-6), dist_const(5e-6), dist_const(0), dist_const(0), {{0}}},
                        {dist_const(5e-6), dist_const(5e-6), dist_const(0), dist_const(0), {{0}}}};
    engine_config c = {.program = &p, .tp = 2, .steps = 2, .host = h, .queue_depth = 4};
    engine_result r;
    tp_err err;
    assert_true(maxplus_supports(&c));
    assert_null(maxplus_refusal(&c));
    assert_int_equal(engine_run(&c, &r, &err), 0);
    assert_int_equal(r.method, ENGINE_MAXPLUS);
    assert_non_null(strstr(r.method_why, "models this config"));
    engine_result_free(&r);
    c.trace = &sink;
    assert_false(maxplus_supports(&c));
    assert_non_null(strstr(maxplus_refusal(&c), "trace"));
    assert_int_equal(engine_run(&c, &r, &err), 0);
    assert_int_equal(r.method, ENGINE_EVENTS);
    assert_ptr_equal(r.method_why, maxplus_refusal(&c)); /* says why, not only which */
    assert_true(n_slices > 0);
    engine_result_free(&r);
    c.method = ENGINE_MAXPLUS;
    assert_int_equal(engine_run(&c, &r, &err), -1);
    c.trace = NULL;
    assert_non_null(strstr(err.msg, "trace")); /* the refusal names its reason */
    c.method = ENGINE_EVENTS; /* asked for: it runs, and says it was asked for */
    assert_int_equal(engine_run(&c, &r, &err), 0);
    assert_int_equal(r.method, ENGINE_EVENTS);
    assert_non_null(strstr(r.method_why, "asked for"));
    engine_result_free(&r);
    c.method = ENGINE_AUTO;
    p.ops[0].kind = 200; /* a kind added after the recursion was written */
    assert_false(maxplus_supports(&c));
    assert_non_null(strstr(maxplus_refusal(&c), "op kind"));
    prog_free(&p);
}

/* The real scenarios at TP 2/4/8, eager and graphs, with and without jitter, stragglers,
 * broadcast waits and a shallow queue, a MoE model and FP8 weights and KV cache, under
 * every collective model the program knows
 * (coll_model_names, so a model added later is covered): the summary from the fast path
 * with folded steps equals, to the bit, the one from the event engine's kept steps, and
 * so do the per-rank accounts. */
static const char *const scenario_files[] = {
    "scenarios/paper-additive.yaml",  "scenarios/eager-host-dispatch.yaml",
    "scenarios/eager-straggler.yaml", "scenarios/eager-broadcast.yaml",
    "scenarios/cuda-graphs.yaml",     "tests/bench/peer-tp8.yaml"};
static const char *const calibrations[] = {"models/allreduce/h100-sxm-tp2.yaml",
                                           "models/allreduce/h100-sxm-tp4.yaml",
                                           "models/allreduce/h100-sxm-tp8.yaml"};

/* The calibrations, each with a tuner block (nccl-tuner's inputs): a file in the tree
 * that has none gets one with test values, not measurements. Written to a temporary
 * folder; paths in out. */
static void tuner_calibrations(char *dir, char (*out)[512])
{
    strcpy(dir, "/tmp/test_maxplus.XXXXXX");
    assert_non_null(mkdtemp(dir));
    for (size_t c = 0; c < sizeof calibrations / sizeof *calibrations; c++) {
        FILE *in = fopen(calibrations[c], "r");
        assert_non_null(in);
        snprintf(out[c], 512, "%s/cal%zu.yaml", dir, c);
        FILE *f = fopen(out[c], "w");
        assert_non_null(f);
        char buf[65536];
        size_t n = fread(buf, 1, sizeof buf - 1, in);
        assert_true(n < sizeof buf - 1);
        buf[n] = '\0';
        fwrite(buf, 1, n, f);
        if (!strstr(buf, "\ntuner:"))
            fprintf(
                f,
                "tuner:\n  nccl_version: \"2.21.5\"\n  algorithms: [ring, tree]\n  channels: 16\n"
                "  bw_per_channel_gbps: 20\n  launch_us: 6\n  graph_launch_us: 3\n"
                "  source: \"test values (tests/test_maxplus.c), not a measurement\"\n");
        fclose(f);
        fclose(in);
    }
}

static void check_cell(const scenario *s, long tp, long batch, const char *what)
{
    run_request req = {tp, batch, 2048, 5, 2, 11, 0, RUN_REQ_PLAIN};
    run_summary a, b;
    run_detail da, db;
    tp_err err;
    if (run_cell_on(s, &req, ENGINE_EVENTS, &a, &da, &err)) fail_msg("%s: %s", what, err.msg);
    assert_int_equal(run_cell_on(s, &req, ENGINE_MAXPLUS, &b, &db, &err), 0);
    size_t bytes = (size_t)(req.steps + req.warmup) * (size_t)tp * sizeof *da.result.rank_steps;
    if (memcmp(da.result.rank_steps, db.result.rank_steps, bytes))
        fail_msg("%s tp %ld batch %ld: accounts differ", what, tp, batch);
    run_summary c;
    assert_int_equal(run_cell(s, &req, &c, NULL, &err), 0); /* fast path, folded steps */
    assert_int_equal(c.method, ENGINE_MAXPLUS);
    double ga[] = {a.step_mean,
                   a.step_p50,
                   a.step_p99,
                   a.step_min,
                   a.step_max,
                   a.breakdown.host,
                   a.breakdown.compute,
                   a.breakdown.allreduce,
                   a.breakdown.wait_peers,
                   a.breakdown.gpu_idle};
    double gc[] = {c.step_mean,
                   c.step_p50,
                   c.step_p99,
                   c.step_min,
                   c.step_max,
                   c.breakdown.host,
                   c.breakdown.compute,
                   c.breakdown.allreduce,
                   c.breakdown.wait_peers,
                   c.breakdown.gpu_idle};
    if (memcmp(ga, gc, sizeof ga))
        fail_msg("%s tp %ld batch %ld: summaries differ", what, tp, batch);
    run_release(&da);
    run_release(&db);
}

static void test_scenarios_bit_identical(void **state)
{
    (void)state;
    scenario *s = calloc(1, sizeof *s);
    tp_err err;
    const char *variants[][5] = {
        {"execution.mode=eager", NULL},
        {"execution.mode=graphs", NULL},
        {"host.launch.dist=lognormal", "host.launch.mean_us=9", "host.launch.cv=0.4",
         "host.queue_depth=3", NULL},
        {"host.step.dist=normal", "host.step.mean_us=900", "host.step.cv=0.2",
         "host.broadcast_wait=true", NULL},
        /* MoE (vLLM's FusedMoE sequence) and per-tensor precision: ops the models work adds */
        {"model=Mixtral-8x7B-v0.1", "host.launch.dist=lognormal", "host.launch.cv=0.3",
         "host.queue_depth=5", NULL},
        {"precision.weights=fp8", "precision.kv_cache=fp8", "execution.mode=graphs", NULL},
        /* issue 18's op kinds: q/k norm, Gemma's extra norms, GELU, embedding scale, logit
         * soft-cap (eager, after the gather) and per-layer sliding windows */
        {"model=gemma-2-9b-it", "host.launch.dist=lognormal", "host.launch.cv=0.3", NULL},
        {"model=Qwen3-30B-A3B", "execution.mode=graphs", NULL},
        /* each engine file and graph mode; drawn phases so their order of draws is checked */
        {"engine=vllm-v1", "execution.mode=piecewise", "host.phases.schedule.dist=lognormal",
         "host.phases.schedule.cv=0.5", NULL},
        {"engine=vllm-v1-async", "execution.mode=full", "host.phases.prepare_inputs.dist=normal",
         "host.phases.prepare_inputs.cv=0.2", NULL},
        {"engine=vllm-v1-async", "execution.mode=eager", "host.phases.schedule.dist=lognormal",
         "host.phases.schedule.cv=0.5", NULL},
        {"engine=vllm-v0", "execution.mode=piecewise", "host.phases.output_processing.dist=uniform",
         "host.phases.output_processing.cv=0.3", NULL},
    };
    int checked[16] = {0}, n_models = 0;
    char dir[64], cals[3][512];
    tuner_calibrations(dir, cals);
    while (coll_model_names[n_models]) n_models++;
    assert_true(n_models >= 4 && n_models <= 16);
    for (int m = 0; m < n_models; m++)
        for (size_t f = 0; f < sizeof scenario_files / sizeof *scenario_files; f++)
            for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
                const char *sets[6];
                char model_set[96];
                int n = 0;
                while (variants[v][n]) sets[n] = variants[v][n], n++;
                snprintf(model_set, sizeof model_set, "collective.allreduce=%s",
                         coll_model_names[m]);
                sets[n++] = model_set;
                scenario_free(s);
                if (scenario_load(scenario_files[f], sets, n, s, &err))
                    fail_msg("%s: %s", scenario_files[f], err.msg);
                for (size_t c = 0; c < sizeof calibrations / sizeof *calibrations; c++)
                    if (scenario_add_allreduce(s, cals[c], &err))
                        fail_msg("%s: %s", cals[c], err.msg);
                for (long tp = 2; tp <= 8; tp *= 2) {
                    char what[256];
                    snprintf(what, sizeof what, "%s [%s] %s", scenario_files[f], variants[v][0],
                             model_set);
                    if (run_check_tp(s, tp, &err)) fail_msg("%s tp %ld: %s", what, tp, err.msg);
                    check_cell(s, tp, tp == 4 ? 8 : 1, what);
                    checked[m]++;
                }
            }
    for (int m = 0; m < n_models; m++)
        assert_int_equal(checked[m], (int)(sizeof scenario_files / sizeof *scenario_files *
                                           (sizeof variants / sizeof *variants) * 3));
    for (size_t c = 0; c < sizeof calibrations / sizeof *calibrations; c++) remove(cals[c]);
    rmdir(dir);
    scenario_free(s);
    free(s);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double exact_quantile(const double *sorted, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n) return sorted[n - 1];
    return sorted[i] + (pos - (double)i) * (sorted[i + 1] - sorted[i]);
}

/* Up to QSKETCH_EXACT values the quantiles are exact; past it, within QSKETCH_REL_ERR. */
static void test_qsketch(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 2, 1000, QSKETCH_EXACT, QSKETCH_EXACT + 1, 300000};
    const double qs[] = {0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1};
    pcg32 g;
    pcg32_seed(&g, 99, 1);
    for (int sign = 0; sign < 2; sign++)
        for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
            size_t n = sizes[t];
            double *v = malloc(n * sizeof *v);
            qsketch q;
            qsketch_init(&q);
            for (size_t i = 0; i < n; i++) { /* step-like values: 13 ms, wide lognormal tail */
                dist_rng r = {g};
                v[i] = 13e-3 * exp(0.3 * dist_std_normal(&r)) * (sign ? -1 : 1);
                g = r.pcg;
                assert_int_equal(qsketch_add(&q, v[i]), 0);
            }
            qsort(v, n, sizeof *v, cmp_double);
            assert_true(q.min == v[0] && q.max == v[n - 1] && q.n == n);
            for (size_t j = 0; j < sizeof qs / sizeof *qs; j++) {
                double want = exact_quantile(v, n, qs[j]), got = qsketch_quantile(&q, qs[j]);
                if (n <= QSKETCH_EXACT) {
                    if (got != want) fail_msg("n %zu q %g: %.17g, want %.17g", n, qs[j], got, want);
                } else if (fabs(got - want) > QSKETCH_REL_ERR * fabs(want) * (1 + 1e-9)) {
                    fail_msg("n %zu q %g: %.17g, want %.17g (rel %.3g)", n, qs[j], got, want,
                             fabs(got - want) / fabs(want));
                }
            }
            qsketch_free(&q);
            free(v);
        }
}

/* Zeros and both signs in one sketch: the order across the sign stores is right. */
static void test_qsketch_mixed_signs(void **state)
{
    (void)state;
    qsketch q;
    qsketch_init(&q);
    size_t n = QSKETCH_EXACT + 4001;
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        v[i] = i % 3 == 0 ? 0.0 : ((double)(i % 1000) - 500.0) * 1e-3;
        assert_int_equal(qsketch_add(&q, v[i]), 0);
    }
    qsort(v, n, sizeof *v, cmp_double);
    for (double p = 0; p <= 1.0; p += 0.05) {
        double want = exact_quantile(v, n, p), got = qsketch_quantile(&q, p);
        assert_true(fabs(got - want) <= QSKETCH_REL_ERR * fabs(want) * (1 + 1e-9) + 1e-300);
    }
    qsketch_free(&q);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_flat_in_steps),
        cmocka_unit_test(test_random_configs_bit_identical),
        cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_scenarios_bit_identical),
        cmocka_unit_test(test_qsketch),
        cmocka_unit_test(test_qsketch_mixed_signs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
