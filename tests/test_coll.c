/* test_coll.c: the collective models (sim/coll.h: the model table, pricing, kernel names) and
 * NCCL's tuner model (sim/nccltune.h)
 * against values computed by hand from their formulas (docs/sources.md#vllm-custom-ar,
 * #vllm-ar-sizes and #nccl-tuner), vLLM's thresholds at their boundaries, the tuner's choice on a
 * synthetic table, and graph vs eager launch through the whole run. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "nccltune.h"
#include "run.h"
#include "scenario.h"

#define KIB 1024.0
#define MIB (1024.0 * 1024.0)

static void assert_near(double got, double want, double tol)
{
    if (fabs(got - want) > tol) fail_msg("got %.9g, want %.9g (tol %g)", got, want, tol);
}

/* lambda 20 us, beta 300 GB/s; custom one-stage 6 us + b / 100 GB/s, two-stage 12 us + b / 150 GB/s
 */
static arcal test_cal(long k)
{
    arcal c;
    memset(&c, 0, sizeof c);
    snprintf(c.path, sizeof c.path, "test");
    snprintf(c.named_at, sizeof c.named_at, "test");
    snprintf(c.hardware, sizeof c.hardware, "H100 SXM");
    c.tp = k;
    c.has_linear = 1;
    c.lambda_s = 20e-6;
    c.beta = 300e9;
    c.custom[0] = (arcal_line){1, 6e-6, 100e9};
    c.custom[1] = (arcal_line){1, 12e-6, 150e9};
    c.custom[2] = (arcal_line){1, 9e-6, 200e9}; /* symm-mem 9 us + b / 200 GB/s */
    return c;
}

static void test_nccl_fit_by_hand(void **state)
{
    (void)state;
    arcal c = test_cal(4);
    coll_setup s = {COLL_NCCL_FIT, &c, 90};
    /* 20 + 2*3/4 * 16384 B / 300 GB/s = 20 + 0.08192 us */
    coll_cost e = coll_allreduce(&s, 16384, 0);
    assert_near(e.total_s * 1e6, 20.08192, 1e-9);
    assert_near(e.latency_s * 1e6, 20.0, 1e-12);
    assert_int_equal(e.copy_in, 0);
    assert_string_equal(e.model, "nccl-fit");
    /* under a graph without graph data: the eager lambda, said so; with graph.lambda_us 7:
     * 7 + 0.08192 */
    assert_near(coll_allreduce(&s, 16384, 1).total_s * 1e6, 20.08192, 1e-9);
    assert_int_equal(coll_allreduce(&s, 16384, 1).eager_in_graph, 1);
    assert_int_equal(coll_allreduce(&s, 16384, 0).eager_in_graph, 0);
    c.has_graph_lambda = 1;
    c.graph_lambda_s = 7e-6;
    assert_near(coll_allreduce(&s, 16384, 1).total_s * 1e6, 7.08192, 1e-9);
    assert_int_equal(coll_allreduce(&s, 16384, 1).eager_in_graph, 0);
    assert_near(coll_allreduce(&s, 16384, 0).total_s * 1e6, 20.08192, 1e-9);
    /* piecewise: the piece holding b; 1 MiB on piece 2 (30 us, 600 GB/s): 30 + 1.5 * 1048576 / 6e5
     */
    c.piecewise = 1;
    c.n_pieces = 2;
    c.pieces[0] = (arcal_piece){0, 10e-6, 100e9};
    c.pieces[1] = (arcal_piece){512 * KIB, 30e-6, 600e9};
    assert_near(coll_allreduce(&s, MIB, 0).total_s * 1e6, 30 + 1.5 * 1048576 / 6e5, 1e-9);
    assert_near(coll_allreduce(&s, 4096, 0).total_s * 1e6, 10 + 1.5 * 4096 / 1e5, 1e-9);
}

static void test_vllm_custom_by_hand(void **state)
{
    (void)state;
    arcal c = test_cal(4);
    coll_setup s = {COLL_VLLM_CUSTOM, &c, 90};
    assert_int_equal(coll_check(&s, NULL), 0);
    /* one-stage: 6 + 16384 / 100e3 us; eager copies in, a graph does not */
    coll_cost e = coll_allreduce(&s, 16384, 0), g = coll_allreduce(&s, 16384, 1);
    assert_near(e.total_s * 1e6, 6.16384, 1e-9);
    assert_string_equal(e.algo, "one-stage");
    assert_string_equal(e.model, "vllm-custom");
    assert_int_equal(e.copy_in, 1);
    assert_int_equal(g.copy_in, 0);
    assert_near(g.total_s, e.total_s, 1e-15); /* same kernel body */
    /* TP-4 boundary at 512 KiB: below one-stage, at it two-stage 12 + 524288 / 150e3 */
    assert_string_equal(coll_allreduce(&s, 512 * KIB - 16, 0).algo, "one-stage");
    coll_cost two = coll_allreduce(&s, 512 * KIB, 0);
    assert_string_equal(two.algo, "two-stage");
    assert_near(two.total_s * 1e6, 12 + 524288.0 / 150e3, 1e-9);
    /* max_size 8 MiB: just below is custom, at it NCCL (the fit: 20 + 1.5 * 8 MiB / 300e3) */
    assert_string_equal(coll_allreduce(&s, 8 * MIB - 16, 0).model, "vllm-custom");
    coll_cost big = coll_allreduce(&s, 8 * MIB, 0);
    assert_string_equal(big.model, "nccl-fit");
    assert_int_equal(big.copy_in, 0);
    assert_near(big.total_s * 1e6, 20 + 1.5 * 8388608 / 300e3, 1e-9);
    /* not a multiple of 16 bytes: NCCL */
    assert_string_equal(coll_allreduce(&s, 16384 + 8, 0).model, "nccl-fit");
    /* TP-8 and TP-6: 256 KiB; TP-2: always one-stage */
    c.tp = 8;
    assert_string_equal(coll_allreduce(&s, 256 * KIB - 16, 0).algo, "one-stage");
    assert_string_equal(coll_allreduce(&s, 256 * KIB, 0).algo, "two-stage");
    c.tp = 6;
    assert_string_equal(coll_allreduce(&s, 256 * KIB, 0).algo, "two-stage");
    c.tp = 2;
    assert_string_equal(coll_allreduce(&s, 4 * MIB, 0).algo, "one-stage");
    assert_int_equal(coll_vllm_one_stage(4, 512 * KIB - 1), 1);
    assert_int_equal(coll_vllm_one_stage(4, 512 * KIB), 0);
    assert_int_equal(coll_vllm_one_stage(8, 256 * KIB), 0);
}

/* vLLM's dispatch (docs/sources.md#vllm-ar-sizes, #vllm-ar-dispatch), typed from vLLM's
 * tables, not from coll.c: per SM and world size the custom cap min(8 MiB,
 * CUSTOM_ALL_REDUCE_MAX_SIZES) (custom below it), the symm-mem cap SYMM_MEM_ALL_REDUCE_MAX_SIZES
 * (symm-mem up to it inclusive; multimem on 9.0 at 4, 6, 8 and on 10.x at 6, 8), NCCL above. */
static const struct {
    int sm;
    long k;
    double ca, symm; /* symm 0: no symm-mem communicator at (sm, k) */
    const char *symm_algo;
} auto_rules[] = {
    {90, 2, 8 * MIB, 64 * MIB, "symm-mem-two-shot"},
    {90, 4, 8 * MIB, 32 * MIB, "symm-mem-multimem"},
    {90, 6, 512 * KIB, 64 * MIB, "symm-mem-multimem"},
    {90, 8, 256 * KIB, 64 * MIB, "symm-mem-multimem"},
    {100, 2, 2 * MIB, 8 * MIB, "symm-mem-two-shot"},
    {100, 4, 2 * MIB, 32 * MIB, "symm-mem-two-shot"},
    {100, 6, 1 * MIB, 128 * MIB, "symm-mem-multimem"},
    {100, 8, 1 * MIB, 128 * MIB, "symm-mem-multimem"},
    {103, 2, 4 * MIB, 4 * MIB, "symm-mem-two-shot"},
    {103, 4, 4 * MIB, 32 * MIB, "symm-mem-two-shot"},
    {103, 6, 8 * MIB, 32 * MIB, "symm-mem-multimem"},
    {103, 8, 4 * MIB, 64 * MIB, "symm-mem-multimem"},
    {80, 2, 8 * MIB, 0, NULL},
    {80, 4, 8 * MIB, 0, NULL},
    {80, 8, 8 * MIB, 0, NULL},
};

/* one-stage below 512 KiB at k <= 4 and below 256 KiB at k 6, 8; always at k 2 */
static const char *expect_stage(long k, double b)
{
    return k == 2 || b < (k <= 4 ? 512 * KIB : 256 * KIB) ? "one-stage" : "two-stage";
}

static void expect_algo(coll_setup *s, double b, const char *algo)
{
    coll_cost e = coll_allreduce(s, b, 0);
    if (strcmp(e.algo, algo))
        fail_msg("sm %d k %ld at %.0f bytes: %s, want %s", s->sm, s->cal->tp, b, e.algo, algo);
}

static void test_auto_rules(void **state)
{
    (void)state;
    arcal c = test_cal(8);
    coll_setup s = {COLL_AUTO, &c, 90};
    for (size_t i = 0; i < sizeof auto_rules / sizeof auto_rules[0]; i++) {
        c.tp = auto_rules[i].k;
        s.sm = auto_rules[i].sm;
        double ca = auto_rules[i].ca, sy = auto_rules[i].symm;
        assert_int_equal(coll_check(&s, NULL), 0);
        expect_algo(&s, ca - 16, expect_stage(c.tp, ca - 16)); /* just below the custom cap */
        expect_algo(&s, ca, sy > 0 ? auto_rules[i].symm_algo : "ring-fit");
        if (sy > 0) {
            expect_algo(&s, sy, auto_rules[i].symm_algo); /* the symm cap is inclusive */
            expect_algo(&s, sy + 16, "ring-fit");
            expect_algo(&s, 16 * KIB + 4, auto_rules[i].symm_algo); /* % 16 != 0, % 4 == 0 */
        }
        expect_algo(&s, 16 * KIB + 2, "ring-fit"); /* % 4 != 0: NCCL */
        /* the stage switch, where the custom cap lets it happen */
        double st = c.tp <= 4 ? 512 * KIB : 256 * KIB;
        if (c.tp > 2 && st < ca) {
            expect_algo(&s, st - 16, "one-stage");
            expect_algo(&s, st, "two-stage");
        }
    }
    /* symm-mem is priced by its line, without the eager copy: 9 + 262144 / 200e3 us */
    c.tp = 8;
    s.sm = 90;
    coll_cost e = coll_allreduce(&s, 256 * KIB, 0);
    assert_near(e.total_s * 1e6, 9 + 262144 / 200e3, 1e-9);
    assert_int_equal(e.copy_in, 0);
    assert_string_equal(e.model, "vllm-custom");
    s.model = COLL_VLLM_CUSTOM; /* the custom all-reduce on its own (symm-mem off): to 8 MiB */
    expect_algo(&s, 256 * KIB, "two-stage");
    expect_algo(&s, 8 * MIB - 16, "two-stage");
    expect_algo(&s, 8 * MIB, "ring-fit");
    s.model = COLL_AUTO;
    assert_near(coll_vllm_custom_max(4, 90, 1), 8 * MIB, 0);
    assert_near(coll_vllm_symm_max(8, 90), 64 * MIB, 0);
    assert_near(coll_vllm_symm_max(3, 90), 0, 0);
    c.tp = 3; /* vLLM's custom all-reduce runs at 2, 4, 6, 8 only */
    assert_int_equal(coll_check(&s, NULL), 0);
    assert_string_equal(coll_allreduce(&s, 16384, 0).model, "nccl-fit");
    s.model = COLL_VLLM_CUSTOM;
    tp_err err;
    assert_int_equal(coll_check(&s, &err), -1);
    assert_non_null(strstr(err.msg, "runs at tp 2, 4, 6 or 8, not 3"));
    /* GPU names */
    assert_int_equal(coll_sm_of("H200 SXM"), 90);
    assert_int_equal(coll_sm_of("B200"), 100);
    assert_int_equal(coll_sm_of("A100 SXM"), 80);
    assert_int_equal(coll_sm_of("MI300X"), 0);
}

static void test_check_needs_blocks(void **state)
{
    (void)state;
    arcal c = test_cal(4);
    tp_err err;
    coll_setup s = {COLL_NCCL_TUNER, &c, 90};
    assert_int_equal(coll_check(&s, &err), -1);
    assert_non_null(strstr(err.msg, "no tuner block"));
    c.custom[1].valid = 0;
    s.model = COLL_AUTO;
    assert_int_equal(coll_check(&s, &err), -1);
    assert_non_null(strstr(err.msg, "no custom two_stage"));
    c.tp = 2; /* TP-2 never runs two-stage */
    assert_int_equal(coll_check(&s, &err), 0);
    c.tp = 8; /* Hopper TP-8 under auto: no two-stage (custom cap 256 KiB), symm-mem needed */
    assert_int_equal(coll_check(&s, &err), 0);
    c.custom[2].valid = 0;
    assert_int_equal(coll_check(&s, &err), -1);
    assert_non_null(strstr(err.msg, "no custom symm_mem"));
    s.sm = 80; /* Ampere: no symm-mem, custom to 8 MiB: two-stage needed, symm-mem not */
    c.custom[1].valid = 1;
    assert_int_equal(coll_check(&s, &err), 0);
}

/* A synthetic table: 2.27.3 constants, k 8, 16 channels x 20 GB/s, NVLS bus 480 GB/s.
 * By hand (section 3.2):
 *   Ring LL     bus min(141, 320*0.5) = 141,  algBw 141*8/14,   lat 6.6 + 14*0.6 = 15.0
 *   Ring LL128  bus min(294.4, 16*36.7) = 294.4, algBw 294.4*8/14, lat 14 + 14*1.9 = 40.6
 *   Ring Simple bus 320,   algBw 320*8/14,   lat 8.4 + 14*3.4 = 56.0
 *   Tree LL     bus min(294.4/3.8, 141), algBw /2, lat 6.8 + 2*7*0.6 = 15.2
 *   Tree LL128  bus min(294.4*7/9, 16*36.7), algBw /2, lat 14 + 2*7*1.25 = 31.5
 *   Tree Simple bus min(320*0.92, 16*38.7) = 294.4, algBw /2, lat 8.4 + 2*7*4 = 64.4
 *   NVLS Simple algBw 480*5/6 = 400, lat 25
 * Crossovers: Ring LL = NVLS at b = 10 / (1/80571.43 - 1/400000) = 1,008,950 B; with Ring only,
 * LL = LL128 at 25.6 / (1/80571.43 - 1/168228.6) = 3,958,600 B and LL128 = Simple at
 * 15.4 / (1/168228.6 - 1/182857.1) = 32.38 MB. */
static void test_tuner_synthetic_table(void **state)
{
    (void)state;
    nt_inputs in = {nt_find("2.27.3"), 8, 16, 20, 480, NT_ALL_ALGOS};
    double lat;
    assert_non_null(in.table);
    double ll = 141.0 * 8 / 14, ll128 = 294.4 * 8 / 14, simple = 320.0 * 8 / 14;
    assert_near(nt_time(&in, NT_RING, NT_LL, 16384, &lat), 15.0 + 16384 / (1000 * ll), 1e-9);
    assert_near(lat, 15.0, 1e-12);
    assert_near(nt_time(&in, NT_RING, NT_LL128, 1e6, &lat), 40.6 + 1e6 / (1000 * ll128), 1e-9);
    assert_near(nt_time(&in, NT_RING, NT_SIMPLE, 1e6, &lat), 56.0 + 1e6 / (1000 * simple), 1e-9);
    assert_near(nt_time(&in, NT_TREE, NT_LL, 1e6, &lat), 15.2 + 1e6 / (1000 * (294.4 / 3.8 / 2)),
                1e-9);
    assert_near(nt_time(&in, NT_TREE, NT_LL128, 1e6, &lat),
                31.5 + 1e6 / (1000 * (294.4 * 7 / 9 / 2)), 1e-9);
    assert_near(nt_time(&in, NT_TREE, NT_SIMPLE, 1e6, &lat), 64.4 + 1e6 / (1000 * 147.2), 1e-9);
    assert_near(nt_time(&in, NT_NVLS, NT_SIMPLE, 1e6, &lat), 25 + 1e6 / (1000 * 400.0), 1e-9);
    assert_true(nt_time(&in, NT_NVLS, NT_LL, 1e6, &lat) < 0); /* NVLS is Simple only */
    /* the minimum-time pair per size */
    nt_choice c = nt_pick(&in, 16384);
    assert_int_equal(c.algo, NT_RING);
    assert_int_equal(c.proto, NT_LL);
    c = nt_pick(&in, 1008950 - 1000);
    assert_int_equal(c.algo, NT_RING);
    c = nt_pick(&in, 1008950 + 1000);
    assert_int_equal(c.algo, NT_NVLS);
    assert_int_equal(c.proto, NT_SIMPLE);
    in.algos = NT_ALGO_BIT(NT_RING);
    assert_int_equal(nt_pick(&in, 3958600 - 1000).proto, NT_LL);
    assert_int_equal(nt_pick(&in, 3958600 + 1000).proto, NT_LL128);
    assert_int_equal(nt_pick(&in, 32.38e6 - 1e5).proto, NT_LL128);
    assert_int_equal(nt_pick(&in, 32.38e6 + 1e5).proto, NT_SIMPLE);
    /* 2.30.7 scales NVLS by k/(2(k-1)) instead of 5/6: 25 + 1e6 / (480 * 8/14 * 1000) */
    in = (nt_inputs){nt_find("2.30.7"), 8, 16, 20, 480, NT_ALL_ALGOS};
    assert_near(nt_time(&in, NT_NVLS, NT_SIMPLE, 1e6, &lat), 25 + 1e6 / (480.0 * 8 / 14 * 1000),
                1e-9);
    /* 2.21.5: Tree Simple has base latency 0 and NVLink latency 28: 0 + 2*7*28 = 392 */
    in.table = nt_find("2.21.5");
    nt_time(&in, NT_TREE, NT_SIMPLE, 0, &lat);
    assert_near(lat, 392, 1e-9);
    /* no NVLS at 2 GPUs */
    in.k = 2;
    assert_true(nt_time(&in, NT_NVLS, NT_SIMPLE, 1e6, &lat) < 0);
    assert_null(nt_find("2.99.0"));
}

/* nccl-tuner through coll: the tuner's pair plus the calibration's per-call overhead, eager
 * (launch_us 10) or under a graph (graph_launch_us 2); vllm-custom falls back to it above 8 MiB. */
static void test_tuner_through_coll(void **state)
{
    (void)state;
    arcal c = test_cal(8);
    c.tuner = (arcal_tuner){1, "2.27.3", NT_ALGO_BIT(NT_RING), 16, 20, 0, 10e-6, 2e-6};
    coll_setup s = {COLL_NCCL_TUNER, &c, 90};
    assert_int_equal(coll_check(&s, NULL), 0);
    double ring_ll = 15.0 + 16384 / (1000 * (141.0 * 8 / 14));
    coll_cost e = coll_allreduce(&s, 16384, 0), g = coll_allreduce(&s, 16384, 1);
    assert_string_equal(e.model, "nccl-tuner");
    assert_string_equal(e.algo, "Ring");
    assert_string_equal(e.proto, "LL");
    assert_near(e.total_s * 1e6, ring_ll + 10, 1e-9);
    assert_near(e.latency_s * 1e6, 15.0 + 10, 1e-9);
    assert_near(g.total_s * 1e6, ring_ll + 2, 1e-9);
    assert_int_equal(g.eager_in_graph, 0);
    c.tuner.graph_launch_s = -1; /* not measured: the eager overhead, flagged */
    g = coll_allreduce(&s, 16384, 1);
    assert_near(g.total_s * 1e6, ring_ll + 10, 1e-9);
    assert_int_equal(g.eager_in_graph, 1);
    s.model = COLL_VLLM_CUSTOM;
    assert_string_equal(coll_allreduce(&s, 8 * MIB, 0).model, "nccl-tuner");
    s.model = COLL_NCCL_FIT; /* nccl-fit ignores the tuner block */
    assert_string_equal(coll_allreduce(&s, 16384, 0).model, "nccl-fit");
}

/* nt_fit recovers the inputs of times it generated. Channels x bandwidth is what the times
 * show; the channel count itself only where the LL128 per-channel cap (36.7 GB/s) binds. */
static void fit_generated(double channels, double bw, double launch_true, nt_inputs *fit,
                          double *launch, double *mae)
{
    nt_inputs truth = {nt_find("2.26.2"), 8, channels, bw, 0, NT_ALGO_BIT(NT_RING)};
    double bytes[20], us[20];
    for (int i = 0; i < 20; i++) {
        bytes[i] = 32768.0 * pow(2, i);
        us[i] = nt_pick(&truth, bytes[i]).time_us + launch_true;
    }
    *fit = (nt_inputs){truth.table, 8, 1, 1, 0, truth.algos};
    *mae = nt_fit(fit, bytes, us, 20, launch);
}

static void test_tuner_fit_recovers(void **state)
{
    (void)state;
    nt_inputs fit;
    double launch, mae;
    /* 12 x 25 = 300 GB/s: LL128's cap 12 x 36.7 does not bind (300 * 0.92 = 276), so any
     * count from ceil(276 / 36.7) = 8 fits as well; the fewest is reported */
    fit_generated(12, 25, 5, &fit, &launch, &mae);
    assert_true(mae < 1e-4);
    assert_near(fit.channels * fit.bw_per_channel_gbps, 300, 1e-2);
    assert_near(fit.channels, 8, 0);
    assert_near(launch, 5, 1e-3);
    /* 2 x 80 = 160 GB/s and no overhead: the product and a zero overhead come back */
    fit_generated(2, 80, 0, &fit, &launch, &mae);
    assert_true(mae < 1e-4);
    assert_near(fit.channels * fit.bw_per_channel_gbps, 160, 1e-2);
    assert_near(launch, 0, 1e-3);
}

/* Through the whole run: vLLM's custom all-reduce launches its copy-in only in eager mode, and
 * the all-reduce op costs the same kernel body in both. */
static void test_graph_vs_eager_run(void **state)
{
    (void)state;
    static const char *eager[] = {"collective.allreduce=vllm-custom", "execution.mode=eager"};
    static const char *graphs[] = {"collective.allreduce=vllm-custom", "execution.mode=graphs"};
    static const char *nccl[] = {"collective.allreduce=nccl-fit", "execution.mode=eager"};
    scenario *s = calloc(1, sizeof *s);
    tp_err err;
    run_summary re, rg, rn;
    run_request req = {4, 1, 2048, 1, 0, 1, 0, RUN_REQ_PLAIN};
    assert_int_equal(scenario_load("scenarios/eager-host-dispatch.yaml", eager, 2, s, &err), 0);
    assert_int_equal(run_cell(s, &req, &re, NULL, &err), 0);
    scenario_free(s);
    assert_int_equal(scenario_load("scenarios/eager-host-dispatch.yaml", graphs, 2, s, &err), 0);
    assert_int_equal(run_cell(s, &req, &rg, NULL, &err), 0);
    scenario_free(s);
    assert_int_equal(scenario_load("scenarios/eager-host-dispatch.yaml", nccl, 2, s, &err), 0);
    assert_int_equal(run_cell(s, &req, &rn, NULL, &err), 0);
    /* 161 all-reduces (80 layers x 2 + the embedding's), one copy-in each in eager mode */
    assert_int_equal(re.allreduces_per_step, 161);
    assert_int_equal(re.kernels_per_step - rg.kernels_per_step, 161);
    assert_int_equal(re.kernels_per_step - rn.kernels_per_step, 161);
    assert_int_equal(re.allreduce_call.copy_in, 1);
    assert_int_equal(rg.allreduce_call.copy_in, 0);
    /* models/allreduce/h100-sxm-tp4.yaml: one-stage 6.455 us + 16384 B / 132.46 GB/s */
    assert_near(re.allreduce_call.total_s * 1e6, 6.455 + 16384 / 132.46e3, 1e-9);
    assert_near(rg.allreduce_call.total_s, re.allreduce_call.total_s, 1e-15);
    /* NCCL fit: 24.79 + 1.5 * 16384 / 342.6e3 */
    assert_near(rn.allreduce_call.total_s * 1e6, 24.79 + 1.5 * 16384 / 342.6e3, 1e-9);
    scenario_free(s);
    free(s);
}

/* The model table is the one list: every row's name is coll_model_names' entry (the choice
 * list scenario files are parsed with), help is one line, every model that prices a call
 * names its kernel, and the help strings' choice list is the table's names in order. */
static void test_model_table(void **state)
{
    (void)state;
    char choices[256] = "";
    for (int m = 0; m < COLL_N; m++) {
        assert_string_equal(coll_models[m].name, coll_model_names[m]);
        assert_non_null(coll_models[m].help);
        assert_null(strchr(coll_models[m].help, '\n'));
        assert_non_null(coll_models[m].check);
        assert_non_null(coll_models[m].price);
        size_t n = strlen(choices);
        const char *sep = m == 0 ? "" : m == COLL_N - 1 ? " or " : ", ";
        snprintf(choices + n, sizeof choices - n, "%s%s", sep, coll_models[m].name);
    }
    assert_null(coll_model_names[COLL_N]);
    assert_string_equal(choices, COLL_MODEL_CHOICES);
    /* the models a call can be priced by (auto hands every call to one of them) name a kernel */
    assert_non_null(coll_models[COLL_NCCL_FIT].kernel_name);
    assert_non_null(coll_models[COLL_NCCL_TUNER].kernel_name);
    assert_non_null(coll_models[COLL_VLLM_CUSTOM].kernel_name);
}

/* The kernel names a trace shows, from the pricing model's row: a fitted ring is NCCL's RING LL
 * (algo unknown), a tuner pick names its algorithm and protocol upper-cased as NCCL's kernels
 * do, and the custom all-reduce its stage and rank count (vLLM's custom_all_reduce.cuh). */
static void test_kernel_names(void **state)
{
    (void)state;
    char out[200];
    coll_cost fit = {.priced_by = COLL_NCCL_FIT, .algo = "ring-fit", .proto = "-"};
    coll_models[COLL_NCCL_FIT].kernel_name(&fit, 4, 2, out, sizeof out);
    assert_string_equal(out, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"
                             "(ncclDevKernelArgsStorage<4096ul>)");
    coll_cost tun = {.priced_by = COLL_NCCL_TUNER, .algo = "nvls", .proto = "simple"};
    coll_models[COLL_NCCL_TUNER].kernel_name(&tun, 8, 4, out, sizeof out);
    assert_string_equal(out, "ncclDevKernel_AllReduce_Sum_f32_NVLS_SIMPLE"
                             "(ncclDevKernelArgsStorage<4096ul>)");
    coll_cost two = {.priced_by = COLL_VLLM_CUSTOM, .algo = "two-stage", .proto = "-"};
    coll_models[COLL_VLLM_CUSTOM].kernel_name(&two, 8, 2, out, sizeof out);
    assert_string_equal(out, "void vllm::cross_device_reduce_2stage<__nv_bfloat16, 8>("
                             "vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, "
                             "int, int)");
    assert_int_equal(coll_models[COLL_NCCL_FIT].algo_known, 0);
    assert_int_equal(coll_models[COLL_NCCL_TUNER].algo_known, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nccl_fit_by_hand),
        cmocka_unit_test(test_vllm_custom_by_hand),
        cmocka_unit_test(test_auto_rules),
        cmocka_unit_test(test_check_needs_blocks),
        cmocka_unit_test(test_tuner_synthetic_table),
        cmocka_unit_test(test_tuner_fit_recovers),
        cmocka_unit_test(test_tuner_through_coll),
        cmocka_unit_test(test_graph_vs_eager_run),
        cmocka_unit_test(test_model_table),
        cmocka_unit_test(test_kernel_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
