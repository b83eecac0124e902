/* test_engine.c: the engine against closed forms it must reproduce exactly, and the
 * 70B step program's shape. Synthetic programs set gpu_s directly, so each expected
 * value is a hand-derivable sum. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "run.h"
#include "scenario.h"

#define REL_TOL 1e-9

static void assert_rel(double got, double want)
{
    double rel = fabs(got - want) / (fabs(want) > 0 ? fabs(want) : 1.0);
    if (rel >= REL_TOL) fail_msg("got %.15g, want %.15g (rel %.3g)", got, want, rel);
}

/* A program of n ops; every `coll_every`-th op (if > 0) is an all-reduce. gpu_s varies
 * so that order mistakes change the sums' rounding and timings. */
static prog synthetic(long tp, size_t n, size_t coll_every)
{
    prog p = {0};
    p.ops = calloc(n, sizeof *p.ops);
    p.n = p.cap = n;
    p.tp = tp;
    for (size_t i = 0; i < n; i++) {
        int coll = coll_every && tp > 1 && i % coll_every == coll_every - 1;
        p.ops[i].kind = coll ? PROG_ALLREDUCE : PROG_KERNEL;
        p.ops[i].name = coll ? OPN_ALL_REDUCE : OPN_QKV_PROJ;
        p.ops[i].layer = -1;
        p.ops[i].graphable = 1;
        p.ops[i].gpu_s = 1e-6 * (3.0 + (double)(i % 7)) + (coll ? 20e-6 : 0);
        if (coll) p.n_collectives++, p.n_allreduce++;
        else p.n_kernels++;
    }
    return p;
}

static double sum_gpu(const prog *p)
{
    double s = 0;
    for (size_t i = 0; i < p->n; i++) s += p->ops[i].gpu_s;
    return s;
}

static engine_config base_config(const prog *p, const engine_host *hosts)
{
    engine_config c = {.program = p, .tp = p->tp, .steps = 4, .warmup = 1, .seed = 1,
                       .host = hosts, .queue_depth = 1024, .launch_latency_s = 0};
    return c;
}

static engine_host zero_host(void)
{
    engine_host h = {dist_const(0), dist_const(0), dist_const(0), dist_const(0), {{0}}};
    return h;
}

/* Host cost zero, one rank, no jitter: the step is the launch latency plus the sum of ops. */
static void test_single_rank_analytic(void **state)
{
    (void)state;
    prog p = synthetic(1, 1000, 0);
    engine_host h = zero_host();
    engine_config c = base_config(&p, &h);
    c.launch_latency_s = 4e-6;
    engine_result r;
    tp_err err;
    assert_int_equal(engine_run(&c, &r, &err), 0);
    for (long s = 0; s < r.steps + r.warmup; s++) {
        const engine_step *st = engine_at(&r, s, 0);
        assert_rel(st->dur, c.launch_latency_s + sum_gpu(&p));
        assert_rel(st->compute, sum_gpu(&p));
    }
    engine_result_free(&r);
    prog_free(&p);
}

/* The same on the real 70B program with the study's cost model, via run_cell. */
static void test_70b_single_rank_analytic(void **state)
{
    (void)state;
    scenario *s = calloc(1, sizeof *s);
    tp_err err;
    const char *sets[] = {"gpu.launch_latency_us=3.5", "gpu.kernel_fixed_us=1.25"};
    assert_int_equal(scenario_load("scenarios/paper-additive.yaml", sets, 2, s, &err), 0);
    run_request req = {1, 4, 2048, 3, 1, 1, 0, RUN_REQ_PLAIN};
    run_summary sum;
    assert_int_equal(run_cell(s, &req, &sum, NULL, &err), 0);
    assert_int_equal(sum.allreduces_per_step, 0);
    assert_rel(sum.step_mean - s->offset_s, 3.5e-6 + sum.analytic.compute_s);
    assert_rel(sum.breakdown.compute, sum.analytic.compute_s);
    scenario_free(s);
    free(s);
}

/* Identical ranks: all-reduces cost exactly their t_AR and nobody waits. */
static void test_tp_ranks_in_lockstep(void **state)
{
    (void)state;
    prog p = synthetic(4, 700, 7);
    engine_host h[4] = {zero_host(), zero_host(), zero_host(), zero_host()};
    engine_config c = base_config(&p, h);
    engine_result r;
    tp_err err;
    assert_int_equal(engine_run(&c, &r, &err), 0);
    double coll = 0;
    for (size_t i = 0; i < p.n; i++)
        if (prog_is_collective(&p.ops[i])) coll += p.ops[i].gpu_s;
    for (long k = 0; k < 4; k++) {
        const engine_step *st = engine_at(&r, 2, k);
        assert_rel(st->dur, sum_gpu(&p));
        assert_rel(st->allreduce, coll);
        assert_true(st->wait_peers == 0);
    }
    engine_result_free(&r);
    prog_free(&p);
}

/* A rank whose host is slower by d per step delays every rank's steps by exactly d, and
 * the others spend exactly d per step waiting for it in collectives. */
static void test_slowest_rank_gates_everyone(void **state)
{
    (void)state;
    const double d = 500e-6;
    prog p = synthetic(4, 420, 6);
    engine_host h[4] = {zero_host(), zero_host(), zero_host(), zero_host()};
    engine_config c = base_config(&p, h);
    engine_result fast, slow;
    tp_err err;
    assert_int_equal(engine_run(&c, &fast, &err), 0);
    h[2].step = dist_const(d);
    assert_int_equal(engine_run(&c, &slow, &err), 0);
    for (long s = 1; s < slow.steps + slow.warmup; s++)
        for (long k = 0; k < 4; k++) {
            assert_rel(engine_at(&slow, s, k)->dur, engine_at(&fast, s, k)->dur + d);
            if (k != 2) assert_rel(engine_at(&slow, s, k)->wait_peers, d);
            else assert_true(engine_at(&slow, s, k)->wait_peers == 0);
        }
    engine_result_free(&fast);
    engine_result_free(&slow);
    prog_free(&p);
}

/* Host-bound: launch cost c larger than any op, so each op runs right after its launch:
 * step = n*c + latency + gpu(last op) + per-step cost. */
static void test_host_bound_closed_form(void **state)
{
    (void)state;
    const double c_launch = 15e-6, lat = 2e-6, step_cost = 300e-6;
    prog p = synthetic(1, 500, 0);
    engine_host h = zero_host();
    h.launch = dist_const(c_launch);
    h.step = dist_const(step_cost);
    engine_config c = base_config(&p, &h);
    c.launch_latency_s = lat;
    engine_result r;
    tp_err err;
    assert_int_equal(engine_run(&c, &r, &err), 0);
    const engine_step *st = engine_at(&r, 3, 0);
    assert_rel(st->dur, (double)p.n * c_launch + lat + p.ops[p.n - 1].gpu_s + step_cost);
    assert_rel(st->host, (double)p.n * c_launch + step_cost);
    engine_result_free(&r);
    prog_free(&p);
}

/* Host phases (phase.h), on a GPU-bound program: launches of c each never block, so the host
 * is done launching at H = n*c and the stream drains at G = c + sum(gpu) (each op is longer
 * than a launch, so the stream runs back to back from the first op's enqueue).
 * Serialised: step = G + step_cost + sum(phases). Overlapped: the phases start at H, so
 * step = max(H + sum(phases), G) + step_cost: free while they fit in G - H. Both back ends.
 * The GPU idles c before the first op (waiting on its launch) and from G to the step's end
 * (waiting out the step work): step_work_idle = step - G, and the rest of the idle is c. */
static void phases_case(int overlap, double phase_each, double want_dur, double want_host,
                        double want_step_work)
{
    const double c_launch = 1e-6, step_cost = 50e-6;
    prog p = synthetic(1, 400, 0);
    engine_host h = zero_host();
    h.launch = dist_const(c_launch);
    h.step = dist_const(step_cost);
    for (int i = 0; i < ENGINE_PHASES; i++) h.phases[i] = dist_const(phase_each * (1 + i));
    engine_config c = base_config(&p, &h);
    c.phases_overlap = overlap;
    for (int m = 0; m < 2; m++) {
        c.method = m ? ENGINE_MAXPLUS : ENGINE_EVENTS;
        engine_result r;
        tp_err err;
        assert_int_equal(engine_run(&c, &r, &err), 0);
        const engine_step *st = engine_at(&r, 2, 0);
        assert_rel(st->dur, want_dur);
        assert_rel(st->host, want_host);
        assert_rel(st->step_work_idle, want_step_work);
        assert_rel(st->dur - st->compute - st->step_work_idle, c_launch);
        engine_result_free(&r);
    }
    prog_free(&p);
}

static void test_phases_serialised_and_overlapped(void **state)
{
    (void)state;
    prog p = synthetic(1, 400, 0);
    const double n = (double)p.n, H = n * 1e-6, G = 1e-6 + sum_gpu(&p), step_cost = 50e-6;
    prog_free(&p);
    const double w = 1 + 2 + 3 + 4 + 5; /* phase i costs (1 + i) * each */
    /* small phases: sum 150 us, below G - H (400 ops of 3..9 us against 1 us launches) */
    assert_true(G - H > 150e-6 + 1e-3);
    phases_case(0, 10e-6, G + step_cost + w * 10e-6, H + step_cost + w * 10e-6,
                step_cost + w * 10e-6);
    phases_case(1, 10e-6, G + step_cost, H + step_cost + w * 10e-6, step_cost);
    /* large phases: sum 3 ms, past the GPU: the step grows by the excess only */
    assert_true(H + w * 200e-6 > G);
    phases_case(0, 200e-6, G + step_cost + w * 200e-6, H + step_cost + w * 200e-6,
                step_cost + w * 200e-6);
    phases_case(1, 200e-6, H + w * 200e-6 + step_cost, H + step_cost + w * 200e-6,
                H + w * 200e-6 - G + step_cost);
}

/* Queue depth 1: each op is enqueued when its predecessor ends and waits the latency. */
static void test_queue_depth_one(void **state)
{
    (void)state;
    const double lat = 3e-6;
    prog p = synthetic(1, 300, 0);
    engine_host h = zero_host();
    engine_config c = base_config(&p, &h);
    c.queue_depth = 1;
    c.launch_latency_s = lat;
    engine_result r;
    tp_err err;
    assert_int_equal(engine_run(&c, &r, &err), 0);
    assert_rel(engine_at(&r, 2, 0)->dur, (double)p.n * lat + sum_gpu(&p));
    engine_result_free(&r);
    prog_free(&p);
}

/* CUDA-graph mode: one launch per step, then the whole step back to back. */
static void test_graph_mode(void **state)
{
    (void)state;
    const double g = 40e-6, lat = 2e-6;
    prog p = synthetic(2, 200, 10);
    engine_host h[2] = {zero_host(), zero_host()};
    h[0].launch = h[1].launch = dist_const(50e-6); /* only for ops outside the graph */
    h[0].collective = h[1].collective = dist_const(50e-6);
    engine_config c = base_config(&p, h);
    c.graphs = 1;
    c.graph_launch = dist_const(g);
    c.launch_latency_s = lat;
    engine_result r;
    tp_err err;
    assert_int_equal(engine_run(&c, &r, &err), 0);
    assert_rel(engine_at(&r, 2, 1)->dur, g + lat + sum_gpu(&p));
    assert_rel(engine_at(&r, 2, 1)->host, g);
    engine_result_free(&r);
    /* an eager op before and after the graph (input copy, sampler): each pays its launch */
    p.ops[0].graphable = p.ops[p.n - 1].graphable = 0;
    assert_int_equal(engine_run(&c, &r, &err), 0);
    double launch = 50e-6;
    /* op 0 starts at launch + lat; the graph is launched after it (launch + g), whose ops
     * start behind op 0; the last op is launched once the graph is enqueued */
    double t0 = launch + lat + p.ops[0].gpu_s, graph_enq = launch + g;
    double graph_end = fmax(t0, graph_enq + lat);
    for (size_t i = 1; i + 1 < p.n; i++) graph_end += p.ops[i].gpu_s;
    double last_start = fmax(graph_end, graph_enq + launch + lat);
    assert_rel(engine_at(&r, 2, 1)->dur, last_start + p.ops[p.n - 1].gpu_s);
    assert_rel(engine_at(&r, 2, 1)->host, 2 * launch + g);
    engine_result_free(&r);
    prog_free(&p);
}

/* Broadcast: rank 0's driver work D gates the workers' launches each step. */
static void test_broadcast_gates_workers(void **state)
{
    (void)state;
    const double D = 700e-6;
    prog p = synthetic(2, 100, 0); /* no collective: only the broadcast couples the ranks */
    engine_host h[2] = {zero_host(), zero_host()};
    h[0].driver = dist_const(D);
    engine_config c = base_config(&p, h);
    c.broadcast_wait = 1;
    engine_result r;
    tp_err err;
    assert_int_equal(engine_run(&c, &r, &err), 0);
    assert_rel(engine_at(&r, 2, 0)->dur, D + sum_gpu(&p));
    assert_rel(engine_at(&r, 2, 1)->dur, D + sum_gpu(&p));
    assert_rel(engine_at(&r, 2, 1)->start, engine_at(&r, 2, 0)->start);
    /* free launches, no step work at the end: every rank's idle is the D it waited out (rank 0
     * driving, rank 1 waiting for the broadcast), all of it per-step host work */
    for (int rank = 0; rank < 2; rank++) {
        const engine_step *st = engine_at(&r, 2, rank);
        assert_rel(st->step_work_idle, D);
        assert_rel(st->dur - st->compute, D);
    }
    engine_result_free(&r);
    prog_free(&p);
}

/* A sink that keeps every slice (the engine hands them over one at a time). */
typedef struct slice_log {
    engine_slice *v;
    size_t n, cap;
    int started;
} slice_log;

static int log_start(void *ctx, const engine_config *c)
{
    (void)c;
    ((slice_log *)ctx)->started = 1;
    return 0;
}

static void log_slice(void *ctx, const engine_slice *s)
{
    slice_log *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        assert_non_null(l->v);
    }
    l->v[l->n++] = *s;
}

/* The stream's trace slices never overlap, and their gaps inside a step are exactly the
 * step's GPU idle time (duration - compute - allreduce - wait_peers); each step's SL_STEP
 * slice is its account's start and duration. */
static void test_idle_matches_trace(void **state)
{
    (void)state;
    prog p = synthetic(2, 300, 5);
    engine_host h[2] = {zero_host(), zero_host()};
    h[0].launch = dist_make(DIST_LOGNORMAL, 6e-6, 0.5);
    h[1].launch = dist_make(DIST_LOGNORMAL, 6e-6, 0.5);
    h[0].step = h[1].step = dist_const(200e-6);
    engine_config c = base_config(&p, h);
    c.launch_latency_s = 1e-6;
    slice_log log = {0};
    engine_sink sink = {log_start, log_slice, &log};
    c.trace = &sink;
    engine_result r;
    tp_err err;
    assert_int_equal(engine_run(&c, &r, &err), 0);
    assert_true(log.started);
    for (long k = 0; k < 2; k++)
        for (long s = 0; s < r.steps + r.warmup; s++) {
            const engine_step *st = engine_at(&r, s, k);
            double busy = 0, last_end = st->start;
            int steps_seen = 0;
            for (size_t i = 0; i < log.n; i++) {
                const engine_slice *sl = &log.v[i];
                if (sl->rank != (uint32_t)k || sl->step != (uint32_t)s) continue;
                if (sl->label == SL_STEP) {
                    steps_seen++;
                    assert_true(sl->start == st->start && sl->dur == st->dur);
                }
                if (sl->track != TRACK_STREAM) continue;
                assert_true(sl->start >= last_end - 1e-15);
                busy += sl->dur;
                last_end = sl->start + sl->dur;
            }
            double idle = st->dur - st->compute - st->allreduce - st->wait_peers;
            assert_true(idle > 0);
            assert_true(fabs((st->dur - busy) - idle) < 1e-12);
            assert_int_equal(steps_seen, 1);
        }
    free(log.v);
    engine_result_free(&r);
    prog_free(&p);
}

/* Same seed, same result to the bit; another seed, another jittered result; adding a
 * rank does not change rank 0's host draws. */
static void test_determinism_and_streams(void **state)
{
    (void)state;
    prog p = synthetic(2, 200, 4);
    engine_host h[2] = {zero_host(), zero_host()};
    h[0].launch = h[1].launch = dist_make(DIST_LOGNORMAL, 8e-6, 0.4);
    engine_config c = base_config(&p, h);
    engine_result a, b, other;
    tp_err err;
    assert_int_equal(engine_run(&c, &a, &err), 0);
    assert_int_equal(engine_run(&c, &b, &err), 0);
    size_t bytes = (size_t)(a.steps + a.warmup) * 2 * sizeof *a.rank_steps;
    assert_memory_equal(a.rank_steps, b.rank_steps, bytes);
    c.seed = 2;
    assert_int_equal(engine_run(&c, &other, &err), 0);
    assert_true(memcmp(a.rank_steps, other.rank_steps, bytes) != 0);
    engine_result_free(&a);
    engine_result_free(&b);
    engine_result_free(&other);
    prog_free(&p);
}

static void test_rank_stream_stable_under_tp(void **state)
{
    (void)state;
    /* no collectives: rank 0's host time depends only on its own draws */
    prog p2 = synthetic(2, 150, 0), p4 = synthetic(4, 150, 0);
    engine_host h[4] = {zero_host(), zero_host(), zero_host(), zero_host()};
    for (int i = 0; i < 4; i++) h[i].launch = dist_make(DIST_NORMAL, 5e-6, 0.3);
    engine_config c2 = base_config(&p2, h), c4 = base_config(&p4, h);
    engine_result r2, r4;
    tp_err err;
    assert_int_equal(engine_run(&c2, &r2, &err), 0);
    assert_int_equal(engine_run(&c4, &r4, &err), 0);
    for (long s = 0; s < r2.steps + r2.warmup; s++)
        for (long k = 0; k < 2; k++)
            assert_true(engine_at(&r2, s, k)->host == engine_at(&r4, s, k)->host);
    engine_result_free(&r2);
    engine_result_free(&r4);
    prog_free(&p2);
    prog_free(&p4);
}

/* Llama-3.1-70B at TP-2: 80 layers x 2 = 160 all-reduces; 14 launches per layer plus the
 * step's 8 input copies, embedding, final norm, lm_head, 6 sampler kernels, token copy. */
static void test_70b_program_shape(void **state)
{
    (void)state;
    model_arch m;
    tp_err err;
    assert_int_equal(model_load("models/llama-3.1-70b.yaml", &m, &err), 0);
    prog_opts o = {.input_copies = 8, .sampling_kernels = 6};
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, 2, 1, 2048, &err), 0);
    assert_int_equal(p.n_allreduce, 160);
    assert_int_equal(p.n_collectives, 160);
    assert_int_equal(p.n, 80 * 14 + 8 + 1 + 1 + 1 + 6 + 1);
    assert_int_equal(p.n_kernels, p.n - 160);
    prog_free(&p);
    assert_int_equal(prog_build(&p, &m, &o, 1, 1, 2048, &err), 0); /* TP-1: no all-reduce */
    assert_int_equal(p.n_collectives, 0);
    assert_int_equal(p.n, 80 * 10 + 18); /* nor the all-reduce copy-in kernels */
    prog_free(&p);
    o.embedding_allreduce = o.logits_gather = 1;
    assert_int_equal(prog_build(&p, &m, &o, 4, 1, 2048, &err), 0);
    assert_int_equal(p.n_allreduce, 161);
    assert_int_equal(p.n_collectives, 162);
    prog_free(&p);
    assert_int_equal(prog_build(&p, &m, &o, 3, 1, 2048, &err), -1); /* 64 heads / 3 */
    assert_non_null(strstr(err.msg, "tp 3"));
}

/* Weight bytes per rank match the model: ~69.5 GB at TP-2 for 70B (docs/sources.md#study). */
static void test_70b_weight_bytes(void **state)
{
    (void)state;
    model_arch m;
    tp_err err;
    assert_int_equal(model_load("models/llama-3.1-70b.yaml", &m, &err), 0);
    prog_opts o = {.input_copies = 0};
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, 2, 1, 1, &err), 0);
    double gemm = 0;
    for (size_t i = 0; i < p.n; i++)
        if (p.ops[i].name == OPN_QKV_PROJ || p.ops[i].name == OPN_O_PROJ ||
            p.ops[i].name == OPN_GATE_UP || p.ops[i].name == OPN_DOWN_PROJ ||
            p.ops[i].name == OPN_LM_HEAD)
            gemm += p.ops[i].bytes;
    assert_true(fabs(gemm / 69.5e9 - 1) < 0.005);
    prog_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_rank_analytic),
        cmocka_unit_test(test_70b_single_rank_analytic),
        cmocka_unit_test(test_tp_ranks_in_lockstep),
        cmocka_unit_test(test_slowest_rank_gates_everyone),
        cmocka_unit_test(test_host_bound_closed_form),
        cmocka_unit_test(test_phases_serialised_and_overlapped),
        cmocka_unit_test(test_queue_depth_one),
        cmocka_unit_test(test_graph_mode),
        cmocka_unit_test(test_broadcast_gates_workers),
        cmocka_unit_test(test_idle_matches_trace),
        cmocka_unit_test(test_determinism_and_streams),
        cmocka_unit_test(test_rank_stream_stable_under_tp),
        cmocka_unit_test(test_70b_program_shape),
        cmocka_unit_test(test_70b_weight_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
