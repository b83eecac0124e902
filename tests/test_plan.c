/* test_plan.c: the deployment search (plan.h). Bytes and KV-cache room by hand for
 * Llama-3.1-70B on H100 (the closed forms below, from the model's config), tokens/s per GPU
 * and replicas recomputed from each row's own step, the ranking's tie-breaks, the Pareto
 * frontier and the bound/cap classification on hand-made rows. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* Llama-3.1-70B, BF16 (models/llama-3.1-70b.yaml): hidden 8192, 80 layers, 64 heads, 8 KV
 * heads, head_dim 128, intermediate 28672, vocab 128256 (untied lm_head). Per rank at TP k:
 *   layer params = 8192 * ((64 + 2*8)/k * 128 + 64/k * 128 + 2 * 28672/k + 28672/k)
 *   embedding + lm_head = 2 * 128256/k * 8192; bytes = 2 * params (norm weights not counted)
 *   k = 8: 80 * 8192 * 13056 + 2 * 16032 * 8192 = 8,819,048,448 params = 17,638,096,896 B
 *   k = 4: 80 * 8192 * 26112 + 2 * 32064 * 8192 = 17,638,096,896 params = 35,276,193,792 B
 * KV cache of one sequence per rank: 2 (K, V) * 80 layers * (8/k) heads * 128 * 2 B * ctx
 *   k = 8, ctx 2048: 83,886,080 B;  k = 4, ctx 4096: 335,544,320 B */
static void test_bytes_by_hand(void **state)
{
    (void)state;
    scenario *s = calloc(1, sizeof *s);
    tp_err err;
    double w, kv;
    assert_int_equal(scenario_load("scenarios/eager-host-dispatch.yaml", NULL, 0, s, &err), 0);
    assert_int_equal(plan_bytes(s, 8, 2048, &w, &kv, &err), 0);
    assert_true(w == 17638096896.0);
    assert_true(kv == 83886080.0);
    assert_int_equal(plan_bytes(s, 4, 4096, &w, &kv, &err), 0);
    assert_true(w == 35276193792.0);
    assert_true(kv == 335544320.0);
    scenario_free(s);
    free(s);
}

/* Two cells by hand: KV room = 0.9 * HBM - weights - 4.84 GiB, max batch = floor(room /
 * one sequence), HBM as an H100 reports it, 81,559 MiB = 85,520,809,984 B
 * (docs/sources.md#gpu-memory), so 0.9 x HBM = 76,968,728,985.6 B:
 *   TP-4 ctx 2048: 76,968,728,985.6 - 35,276,193,792 - 5,196,910,428.16 = 36,495,624,765.44 B,
 *                  / 167,772,160 = 217.5 -> 217
 *   TP-8 ctx 2048: 76,968,728,985.6 - 17,638,096,896 - 5,196,910,428.16 = 54,133,721,661.44 B,
 *                  / 83,886,080 = 645.3 -> 645, capped at batch_max 600 -> 600
 * and each row's tokens/s per GPU = batch / (step * tp), total = (8 / tp) * batch / step. */
static void test_capacity_and_throughput(void **state)
{
    (void)state;
    scenario *s = calloc(1, sizeof *s);
    tp_err err;
    assert_int_equal(scenario_load("scenarios/eager-host-dispatch.yaml", NULL, 0, s, &err), 0);
    long tps[] = {4, 8}, ctxs[] = {2048};
    plan_spec sp = {.scn = s,
                    .n_scn = 1,
                    .tps = tps,
                    .n_tp = 2,
                    .ctxs = ctxs,
                    .n_ctx = 1,
                    .batch_max = 600,
                    .mem_util = 0.9,
                    .reserve_bytes = 4.84 * GIB,
                    .gpus = 8,
                    .target_s = 0.030,
                    .req = {.tp = -1, .batch = -1, .ctx = -1, .steps = 1},
                    .jobs = 2};
    plan_result r;
    assert_int_equal(plan_search(&sp, &r, &err), 0);
    assert_int_equal(r.n_cfgs, 2);
    assert_true(fabs(r.cfgs[0].kv_free_bytes - 36495624765.44) < 1.0);
    assert_int_equal(r.cfgs[0].max_batch, 217);
    assert_true(fabs(r.cfgs[1].kv_free_bytes - 54133721661.44) < 1.0);
    assert_int_equal(r.cfgs[1].max_batch, 600);
    assert_int_equal(r.n_cells, 217 + 600);
    assert_int_equal(r.n_rows, 217 + 600);
    /* rows in cell order: TP-4 batch 1..217, then TP-8 batch 1..600 */
    const plan_row *a = &r.rows[9], *b = &r.rows[217 + 99];
    assert_int_equal(a->sum.req.tp, 4);
    assert_int_equal(a->sum.req.batch, 10);
    assert_int_equal(b->sum.req.tp, 8);
    assert_int_equal(b->sum.req.batch, 100);
    assert_true(fabs(a->tok_s_gpu - 10.0 / (a->sum.step_mean * 4)) < 1e-9 * a->tok_s_gpu);
    assert_true(fabs(a->tok_s_total - 2 * 10.0 / a->sum.step_mean) < 1e-9 * a->tok_s_total);
    assert_true(fabs(b->tok_s_gpu - 100.0 / (b->sum.step_mean * 8)) < 1e-9 * b->tok_s_gpu);
    assert_true(fabs(b->tok_s_total - 1 * 100.0 / b->sum.step_mean) < 1e-9 * b->tok_s_total);
    /* every pick meets the target and no row of its configuration that meets it does better */
    for (size_t i = 0; i < r.n_cfgs; i++) {
        assert_true(r.cfgs[i].pick >= 0);
        const plan_row *p = &r.rows[r.cfgs[i].pick];
        assert_true(p->sum.step_mean <= 0.030);
        for (size_t k = r.cfgs[i].row0; k < r.cfgs[i].row0 + r.cfgs[i].n_rows; k++) {
            assert_int_equal(r.rows[k].meets, r.rows[k].sum.step_mean <= 0.030);
            if (r.rows[k].meets) assert_true(r.rows[k].tok_s_gpu <= p->tok_s_gpu);
        }
    }
    /* a shard keeps cells c with c % 3 == 1, the same rows */
    plan_result part;
    sp.shard = 1, sp.n_shards = 3;
    assert_int_equal(plan_search(&sp, &part, &err), 0);
    assert_int_equal(part.n_cells, r.n_cells);
    assert_int_equal(part.n_rows, (217 + 600 + 1) / 3);
    for (size_t i = 0; i < part.n_rows; i++) {
        assert_int_equal(part.rows[i].cell, 1 + 3 * i);
        assert_true(part.rows[i].sum.step_mean == r.rows[1 + 3 * i].sum.step_mean);
    }
    plan_free(&part);
    plan_free(&r);
    scenario_free(s);
    free(s);
}

/* hand-made rows: cfg i's pick is row i */
static void fake(plan_result *r, plan_cfg *cfgs, plan_row *rows, size_t n, const long *tp,
                 const double *tok, const double *step)
{
    memset(r, 0, sizeof *r);
    r->cfgs = cfgs, r->rows = rows, r->n_cfgs = n, r->n_rows = n;
    for (size_t i = 0; i < n; i++) {
        memset(&cfgs[i], 0, sizeof cfgs[i]);
        memset(&rows[i], 0, sizeof rows[i]);
        cfgs[i].tp = tp[i], cfgs[i].ctx = 2048, cfgs[i].pick = (long)i;
        cfgs[i].row0 = i, cfgs[i].n_rows = 1;
        rows[i].cfg = i, rows[i].tok_s_gpu = tok[i], rows[i].sum.step_mean = step[i];
        rows[i].sum.req.tp = tp[i];
    }
}

/* More tokens/s per GPU first; equal: the lower step; equal too: the smaller TP; all
 * equal: the configuration order. A configuration without a pick is not ranked. */
static void test_rank_ties(void **state)
{
    (void)state;
    plan_cfg cfgs[6];
    plan_row rows[6];
    plan_result r;
    long tp[] = {8, 4, 4, 2, 4, 1};
    double tok[] = {100, 100, 100, 120, 100, 500},
           step[] = {0.020, 0.020, 0.010, 0.025, 0.020, 0.001};
    fake(&r, cfgs, rows, 6, tp, tok, step);
    cfgs[5].pick = -1; /* nothing of it meets the target */
    size_t order[6], want[] = {3, 2, 1, 4, 0};
    assert_int_equal(plan_rank(&r, 2048, order), 5);
    for (int i = 0; i < 5; i++) assert_int_equal(order[i], want[i]);
    assert_int_equal(plan_rank(&r, 4096, order), 0); /* another context */
    assert_true(plan_cmp(&r, 1, 4) < 0 && plan_cmp(&r, 4, 1) > 0 && plan_cmp(&r, 1, 1) == 0);
}

/* (step ms, tokens/s per GPU): (10,5) (12,4) (15,20) (15,25) (20,25) (30,40): the frontier
 * is (10,5), (15,25), (30,40); (12,4) is beaten by (10,5), (15,20) by (15,25), and (20,25) is
 * slower for the same throughput. */
static void test_pareto(void **state)
{
    (void)state;
    plan_cfg cfgs[6];
    plan_row rows[6];
    plan_result r;
    long tp[] = {8, 8, 4, 4, 2, 2};
    double tok[] = {25, 5, 4, 40, 20, 25}, step[] = {0.020, 0.010, 0.012, 0.030, 0.015, 0.015};
    fake(&r, cfgs, rows, 6, tp, tok, step);
    size_t front[6];
    assert_int_equal(plan_pareto(&r, 2048, front), 3);
    assert_int_equal(front[0], 1);
    assert_int_equal(front[1], 5);
    assert_int_equal(front[2], 3);
}

static void test_bound_and_cap(void **state)
{
    (void)state;
    /* run_bound_of (run.h), by hand: the largest time on the critical path among the stream's
     * busy time (only while the host has slack, under 95% of the step less its offset, or the
     * GPU idles at most 5%), the launch wait, the step work's idle and the wait for peers; the
     * idle splits into the step work's (at most the idle) and the launch wait */
    static const struct {
        double step, offset, compute, allreduce, peers, idle, step_work, host;
        run_bound want;
        double work, wait;
    } cases[] = {
        /* host saturated (9.9 of 10), GPU idle 4: off the path; wait 3 > work 1 */
        {10, 0, 5, 1, 0, 4, 1, 9.9, RUN_BOUND_HOST, 1, 3},
        /* host has slack: busy 2.5 on the path, but the step work's 7 is larger */
        {10, 0, 2, 0.5, 0, 7.5, 7, 8, RUN_BOUND_STEP_WORK, 7, 0.5},
        /* on the path, all-reduce 4 > compute 3, busy 7 > work 3 */
        {10, 0, 3, 4, 0, 3, 3, 3, RUN_BOUND_ALLREDUCE, 3, 0},
        {10, 0, 6, 1, 0, 3, 3, 3, RUN_BOUND_GPU, 3, 0},
        /* host saturated: peers 2 > wait 1 = work 1 */
        {10, 0, 5, 1, 2, 2, 1, 9.8, RUN_BOUND_STRAGGLER, 1, 1},
        /* the step work's idle is capped at the idle */
        {10, 0, 9.8, 0, 0, 0.2, 2, 2, RUN_BOUND_GPU, 0.2, 0},
        /* no step work: all the idle waits on launches */
        {10, 0, 5, 1, 0, 4, 0, 9.9, RUN_BOUND_HOST, 0, 4},
        /* host saturated but the GPU idles only 4%: the stream is on the path */
        {10, 0, 9.6, 0, 0, 0.4, 0, 9.9, RUN_BOUND_GPU, 0, 0.4},
        /* the offset is not step: host 9.6 of the simulated 10 is saturated (of 12 it is not,
         * and the stream's 6 would win) */
        {12, 2, 5, 1, 0, 4, 1, 9.6, RUN_BOUND_HOST, 1, 3},
        /* the two thresholds pinned from both sides (a 0.9 or 0.97 for the host's 95%, a 0.04
         * or 0.06 for the GPU's 5% flips one of these): host 94% has slack, so the stream's 5
         * beats the wait 3; host 96% has none (and the idle 40% is over 5%), so the wait wins */
        {10, 0, 5, 0, 0, 4, 1, 9.4, RUN_BOUND_GPU, 1, 3},
        {10, 0, 5, 0, 0, 4, 1, 9.6, RUN_BOUND_HOST, 1, 3},
        /* host saturated (99%): a GPU idle of 4.5% keeps the stream's 9.5 on the path, one of
         * 5.5% takes it off and the wait (all the idle, no step work) wins */
        {10, 0, 9.5, 0, 0, 0.45, 0, 9.9, RUN_BOUND_GPU, 0, 0.45},
        {10, 0, 9.4, 0, 0, 0.55, 0, 9.9, RUN_BOUND_HOST, 0, 0.55},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_summary s;
        memset(&s, 0, sizeof s);
        s.step_mean = cases[i].step;
        s.breakdown = (run_breakdown){.host = cases[i].host, .compute = cases[i].compute,
                                      .allreduce = cases[i].allreduce,
                                      .wait_peers = cases[i].peers, .gpu_idle = cases[i].idle,
                                      .offset = cases[i].offset,
                                      .step_work_idle = cases[i].step_work};
        double work, wait;
        run_idle_split(&s, &work, &wait);
        assert_true(fabs(work - cases[i].work) < 1e-12 && fabs(wait - cases[i].wait) < 1e-12);
        assert_int_equal(run_bound_of(&s), cases[i].want);
    }
    assert_string_equal(run_bound_name(RUN_BOUND_HOST), "host-bound");
    assert_string_equal(run_bound_name(RUN_BOUND_STEP_WORK), "step-work-bound");
    assert_string_equal(run_bound_name(RUN_BOUND_GPU), "GPU-bound");

    plan_cfg cfgs[1];
    plan_row rows[3];
    plan_result r = {cfgs, 1, rows, 3, 3};
    memset(cfgs, 0, sizeof cfgs);
    memset(rows, 0, sizeof rows);
    for (int b = 0; b < 3; b++) rows[b].sum.req.batch = b + 1;
    cfgs[0].max_batch = 3, cfgs[0].n_rows = 3;
    cfgs[0].pick = 2; /* batch 3: the last that fits */
    assert_int_equal(plan_cap_of(&r, 0, 256), PLAN_MEMORY_CAPPED);
    assert_int_equal(plan_cap_of(&r, 0, 3), PLAN_BATCH_CAPPED);
    cfgs[0].pick = 1; /* batch 2: batch 3 fits but misses the target */
    assert_int_equal(plan_cap_of(&r, 0, 256), PLAN_LATENCY_CAPPED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_by_hand), cmocka_unit_test(test_capacity_and_throughput),
        cmocka_unit_test(test_rank_ties),     cmocka_unit_test(test_pareto),
        cmocka_unit_test(test_bound_and_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
