/* test_kfit.c: kernel cost laws (sim/kcal.h), the per-operator profile reader
 * (calibrate/kprof.h) and the fits (calibrate/kfit.h). Expected values are derived by hand or
 * by the Python in tests/data/vidur-h100/README.md, never from tpsim's output. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kcal.h"
#include "kfit.h"
#include "kprof.h"
#include "model.h"
#include "prog.h"
#include "arcal.h"
#include "coll.h"
#include "cost.h"

#define V70B "tests/data/vidur-h100/llama-2-70b-mlp.csv"

/* Synthetic samples from a known roofline t = 4 us + max(bytes / 3 TB/s, flops / 700 TF),
 * over 4 folds (TP degrees) and sizes from memory- to compute-bound. */
static void synth(kp_set *set, int kind)
{
    memset(set, 0, sizeof *set);
    set->cap = 4 * 40;
    set->s = calloc(set->cap, sizeof *set->s);
    for (int f = 0; f < 4; f++)
        for (int i = 0; i < 40; i++) {
            double B = (double)(1 << (i % 13)), w = 1e8 / (f + 1) * (1 + i % 3);
            double bytes = w + B * 1e4, flops = 2.0 * B * w / 2.0;
            double mem = bytes / 3e12, math = flops / 700e12;
            double t = 4e-6 + (kind == KL_ROOFLINE ? fmax(mem, math) : mem);
            set->s[set->n++] = (kp_sample){KC_GEMM, 2, f, 1L << f, (long)B, bytes, flops, B,
                                           t * 1e6, 1.0, i, {0}};
        }
}

static void test_roofline_recovered(void **state)
{
    (void)state;
    kp_set set;
    synth(&set, KL_ROOFLINE);
    const kp_sample **rows = malloc(set.n * sizeof *rows);
    for (size_t i = 0; i < set.n; i++) rows[i] = &set.s[i];
    kcal_law l;
    assert_int_equal(kf_fit_law(rows, set.n, KL_ROOFLINE, &l), 0);
    assert_true(fabs(l.t0_s - 4e-6) < 4e-6 * 1e-3);
    assert_true(fabs(1.0 / l.s_per_byte - 3e12) < 3e12 * 1e-3);
    assert_true(fabs(1.0 / l.s_per_flop - 700e12) < 700e12 * 1e-3);
    /* the class fit prefers it, by held-out error, to the byte-only laws */
    kf_class_fit c;
    assert_int_equal(kf_fit_class(&set, KC_GEMM, &c), 0);
    assert_int_equal(c.law.kind, KL_ROOFLINE);
    assert_int_equal(c.n_folds, 4);
    assert_true(c.heldout_pct[KL_ROOFLINE] < 0.1);
    assert_true(c.heldout_pct[KL_LINEAR] > 1.0);
    free(rows);
    kp_free(&set);
}

/* Synthetic samples from a known tiled law: 4 us + ((bytes / 3 TB/s)^2.5 + (padded flops /
 * 700 TF)^2.5)^(1/2.5), the batch padded to 64 rows; the ridge is crossed at every size. */
static void synth_tiled(kp_set *set)
{
    memset(set, 0, sizeof *set);
    set->cap = 4 * 40;
    set->s = calloc(set->cap, sizeof *set->s);
    for (int f = 0; f < 4; f++)
        for (int i = 0; i < 40; i++) {
            double B = (double)(1 << (i % 13)) + (i % 2 ? 8 : 0), w = 1e8 / (f + 1) * (1 + i % 3);
            double bytes = w + B * 1e4, flops = 2.0 * B * w / 2.0;
            double pad = ceil(B / 64.0) * 64.0 / B;
            double mem = bytes / 3e12, math = flops * pad / 700e12;
            double t = 4e-6 + pow(pow(mem, 2.5) + pow(math, 2.5), 1.0 / 2.5);
            set->s[set->n++] = (kp_sample){KC_GEMM, 2, f, 1L << f, (long)B, bytes, flops, B,
                                           t * 1e6, 1.0, i, {0}};
        }
}

static void test_tiled_recovered(void **state)
{
    (void)state;
    kp_set set;
    synth_tiled(&set);
    const kp_sample **rows = malloc(set.n * sizeof *rows);
    for (size_t i = 0; i < set.n; i++) rows[i] = &set.s[i];
    kcal_law l;
    assert_int_equal(kf_fit_law(rows, set.n, KL_TILED, &l), 0);
    assert_true(fabs(l.t0_s - 4e-6) < 4e-6 * 1e-3);
    assert_true(fabs(1.0 / l.s_per_byte - 3e12) < 3e12 * 1e-4);
    assert_true(fabs(1.0 / l.s_per_flop - 700e12) < 700e12 * 1e-4);
    assert_true(fabs(l.q - 2.5) < 1e-3);
    assert_true(l.tile_m == 64.0);
    /* the class fit prefers it, by held-out error, to the roofline, the sum and the untiled */
    kf_class_fit c;
    assert_int_equal(kf_fit_class(&set, KC_GEMM, &c), 0);
    assert_int_equal(c.law.kind, KL_TILED);
    assert_true(c.heldout_pct[KL_TILED] < 0.01);
    assert_true(c.heldout_pct[KL_SMOOTH] > 1.0);
    assert_true(c.heldout_pct[KL_ROOFLINE] > 1.0);
    for (int f = 0; f < 4; f++) assert_true(c.fold_pct[KL_TILED][f] < 0.01);
    free(rows);
    kp_free(&set);
}

/* The laws price more work no lower: a fused add + RMSNorm of hidden h moves 2(4Bh + h) bytes
 * (the weight once, whatever B) and does 5Bh FLOPs; its time under each law must not fall as
 * the batch grows. The row law once took bytes / B as the row's width, which counts the weight
 * against every row and fell from B = 1 to 2: the TP-8 graph step was faster at batch 2. */
static void test_monotone_in_batch(void **state)
{
    (void)state;
    const double h = 8192;
    kcal_law laws[] = {
        {KL_ROW, 0, 1.0 / 3.4e12, 0, 0, 1e-9 / 13.66, 0, 0},
        {KL_FLOOR, 6e-6, 1.0 / 2.6e12, 0, 0, 0, 4.8, 0},
        {KL_TILED, 4.8e-6, 1.0 / 3.3e12, 1.0 / 712e12, 0, 0, 1.68, 64},
        {KL_LINEAR, 5e-6, 1.0 / 3.6e12, 0, 0, 0, 0, 0},
    };
    for (size_t k = 0; k < sizeof laws / sizeof laws[0]; k++) {
        double prev = 0;
        for (double B = 1; B <= 4096; B++) {
            double t = kcal_law_time(&laws[k], 2.0 * (4 * B * h + h), 5 * B * h, B);
            if (t < prev) fail_msg("law %s: %.6g us at B %g below %.6g at B %g",
                                   kcal_law_names[laws[k].kind], t * 1e6, B, prev * 1e6, B - 1);
            prev = t;
        }
    }
    /* the bundled calibration on the 70B program at TP-8: no op's time falls with the batch */
    kcal c;
    tp_err err;
    model_arch m;
    if (kcal_load("models/kernels/h100-sxm.yaml", &c, &err)) fail_msg("%s", err.msg);
    if (model_load("models/llama-3.1-70b.yaml", &m, &err)) fail_msg("%s", err.msg);
    arcal ar;
    if (arcal_load("models/allreduce/h100-sxm-tp8.yaml", &ar, &err)) fail_msg("%s", err.msg);
    prog p[2];
    prog_opts o = {0};
    cost_params cp = {0};
    cp.kernels = &c;
    cp.allreduce = (coll_setup){COLL_NCCL_FIT, &ar, 90};
    cp.graphs = 1;
    for (long B = 1; B < 256; B++) {
        for (int i = 0; i < 2; i++) {
            assert_int_equal(prog_build(&p[i], &m, &o, 8, B + i, 2048, &err), 0);
            assert_int_equal(cost_apply(&p[i], &cp, NULL, &err), 0);
        }
        assert_int_equal(p[0].n, p[1].n);
        for (size_t j = 0; j < p[0].n; j++)
            if (!prog_is_collective(&p[0].ops[j]) && p[1].ops[j].gpu_s < p[0].ops[j].gpu_s)
                fail_msg("op %s: %.6g us at batch %ld, %.6g at %ld", prog_op_name(&p[0].ops[j]),
                         p[1].ops[j].gpu_s * 1e6, B + 1, p[0].ops[j].gpu_s * 1e6, B);
        prog_free(&p[0]);
        prog_free(&p[1]);
    }
    kcal_free(&c);
}

/* Synthetic norm samples from a known floor law: ((6 us)^4 + (bytes / 2.5 TB/s)^4)^(1/4). */
static void test_floor_recovered(void **state)
{
    (void)state;
    kp_set set = {0};
    set.cap = 4 * 40;
    set.s = calloc(set.cap, sizeof *set.s);
    for (int f = 0; f < 4; f++)
        for (int i = 0; i < 40; i++) {
            double B = 1 + 100.0 * i + 7 * f, bytes = 2.0 * (4 * B * 8192 + 8192);
            double t = pow(pow(6e-6, 4) + pow(bytes / 2.5e12, 4), 0.25);
            set.s[set.n++] = (kp_sample){KC_NORM, 1, f, 1L << f, (long)B, bytes, 5 * B * 8192, B,
                                         t * 1e6, 1.0, i, {0}};
        }
    kf_class_fit c;
    assert_int_equal(kf_fit_class(&set, KC_NORM, &c), 0);
    assert_int_equal(c.law.kind, KL_FLOOR);
    assert_true(fabs(c.law.t0_s - 6e-6) < 6e-9);
    assert_true(fabs(1.0 / c.law.s_per_byte - 2.5e12) < 2.5e9);
    assert_true(fabs(c.law.q - 4.0) < 4e-3);
    assert_true(c.heldout_pct[KL_LINEAR] > 1.0);
    kp_free(&set);
}

static void test_linear_recovered(void **state)
{
    (void)state;
    kp_set set;
    synth(&set, KL_LINEAR);
    const kp_sample **rows = malloc(set.n * sizeof *rows);
    for (size_t i = 0; i < set.n; i++) rows[i] = &set.s[i];
    kcal_law l;
    assert_int_equal(kf_fit_law(rows, set.n, KL_LINEAR, &l), 0);
    assert_true(fabs(l.t0_s - 4e-6) < 4e-9);
    assert_true(fabs(1.0 / l.s_per_byte - 3e12) < 3e9);
    assert_true(kf_mape_pct(rows, set.n, &l) < 1e-6);
    assert_true(fabs(kf_r2(rows, set.n, &l) - 1.0) < 1e-9);
    free(rows);
    kp_free(&set);
}

static void test_law_time(void **state)
{
    (void)state;
    /* by hand: 2 us + max(3e9 B / 3e12, 1e12 / 1e15) = 2 us + 1 ms */
    kcal_law r = {KL_ROOFLINE, 2e-6, 1.0 / 3e12, 1.0 / 1e15, 0, 0, 0, 0};
    assert_true(fabs(kcal_law_time(&r, 3e9, 1e12, 1) - 1.002e-3) < 1e-12);
    r.kind = KL_SUM; /* the sum: 2 us + 1 ms + 1 ms */
    assert_true(fabs(kcal_law_time(&r, 3e9, 1e12, 1) - 2.002e-3) < 1e-12);
    kcal_law s = {KL_SEQ, 1e-6, 1e-12, 0, 0.5e-6, 0, 0, 0}; /* 1 + 8 * 0.5 + 1e6 * 1e-6 us */
    assert_true(fabs(kcal_law_time(&s, 1e6, 0, 8) - 6e-6) < 1e-15);
    kcal_law w = {KL_ROW, 0, 0, 0, 0, 1e-9, 0, 0}; /* 8000 FLOPs over 8 rows: 1000 * 1e-9 s */
    assert_true(fabs(kcal_law_time(&w, 0, 8000, 8) - 1e-6) < 1e-15);
    /* floor, q = 2: sqrt(3 us^2 + (4e6 B / 1e12 B/s)^2) = 5 us, no additive t0 */
    kcal_law fl = {KL_FLOOR, 3e-6, 1.0 / 1e12, 0, 0, 0, 2.0, 0};
    assert_true(fabs(kcal_law_time(&fl, 4e6, 0, 1) - 5e-6) < 1e-15);
    /* smooth, q = 2: 2 us + sqrt(3 ms^2 + 4 ms^2) = 2 us + 5 ms */
    kcal_law q = {KL_SMOOTH, 2e-6, 1.0 / 1e12, 1.0 / 1e15, 0, 0, 2.0, 0};
    assert_true(fabs(kcal_law_time(&q, 3e9, 4e12, 16) - 5.002e-3) < 1e-12);
    /* tiled: 16 rows do the math of 64, 4x: sqrt(3^2 + 4^2) ms from 1e12 FLOPs */
    kcal_law t = {KL_TILED, 2e-6, 1.0 / 1e12, 1.0 / 1e15, 0, 0, 2.0, 64};
    assert_true(fabs(kcal_law_time(&t, 3e9, 1e12, 16) - 5.002e-3) < 1e-12);
    /* 64 rows: no padding, sqrt(9 + 1) ms */
    assert_true(fabs(kcal_law_time(&t, 3e9, 1e12, 64) - (2e-6 + sqrt(10.0) * 1e-3)) < 1e-12);
}

/* Counts and sums from tests/data/vidur-h100/README.md's Python. */
static void test_vidur_reader(void **state)
{
    (void)state;
    kp_set set = {0};
    tp_err err;
    if (kp_read(V70B, &set, &err)) fail_msg("%s", err.msg);
    assert_int_equal(set.n, 1044 * 10);
    double qkv_tp2 = 0, n_tp2 = 0;
    const kp_sample *one = NULL;
    for (size_t i = 0; i < set.n; i++) {
        const kp_sample *s = &set.s[i];
        if (s->op == 2 && s->tp == 2) qkv_tp2 += s->us, n_tp2++;
        if (s->op == 2 && s->tp == 2 && s->tokens == 1) one = s;
    }
    assert_int_equal((int)n_tp2, 261);
    assert_true(fabs(qkv_tp2 - 49650.5) < 1e-6);
    assert_non_null(one);
    /* qkv at TP-2, 1 token: 8192 x (32 + 2*4) * 128 bf16 weights + the token in and out */
    assert_true(one->bytes == 2.0 * 8192 * 5120 + (8192 + 5120) * 2.0);
    assert_true(one->flops == 2.0 * 8192 * 5120);
    assert_true(fabs(one->us - 32.0) < 1e-9);
    kp_free(&set);
}

/* The reader's byte counts are prog's: the 70B program at TP-2, batch 1 has the same qkv. */
static void test_bytes_match_prog(void **state)
{
    (void)state;
    model_arch m;
    tp_err err;
    if (model_load("models/llama-3.1-70b.yaml", &m, &err)) fail_msg("%s", err.msg);
    prog p;
    prog_opts o = {0};
    assert_int_equal(prog_build(&p, &m, &o, 2, 1, 2048, &err), 0);
    int seen = 0;
    for (size_t i = 0; i < p.n; i++) {
        prog_op *op = &p.ops[i];
        if (op->name == OPN_QKV_PROJ && !seen++)
            assert_true(op->bytes == 2.0 * 8192 * 5120 + (8192 + 5120) * 2.0);
        /* every op kind the program emits has a class */
        assert_true(kcal_class_of(op->name) >= 0);
    }
    assert_true(seen > 0);
    prog_free(&p);
    assert_int_equal(kcal_check_names(NULL, &err), 0);
    assert_int_equal(kcal_class_of(OPN_ALL_REDUCE), KC_COUNT);
    assert_int_equal(kcal_class_of(OPN_ATTENTION), KC_ATTENTION);
    assert_int_equal(kcal_class_of(OPN_COUNT), -1);
}

/* The bundled calibration loads, marks the unmeasured classes, and cost_apply prices an op
 * by its class's law: the 70B qkv at TP-1, batch 1, by hand from the file's numbers
 * (tiled: t0 4.8252 us, 3304.89 GB/s, 712.54 TFLOP/s, q 1.6795, one token padded to 64). */
static void test_bundled_and_cost(void **state)
{
    (void)state;
    kcal c;
    tp_err err;
    if (kcal_load("models/kernels/h100-sxm.yaml", &c, &err)) fail_msg("%s", err.msg);
    assert_string_equal(c.hardware, "H100 SXM");
    assert_int_equal(c.cls[KC_GEMM].law.kind, KL_TILED);
    assert_int_equal(c.cls[KC_SAMPLER].from, KC_ADD);
    assert_int_equal(c.cls[KC_GEMM].from, -1);
    assert_true(kcal_error_pct(&c, KC_SAMPLER) == c.cls[KC_ADD].heldout_mape_pct);
    assert_int_equal(c.assumed.n, 4);
    model_arch m;
    if (model_load("models/llama-3.1-70b.yaml", &m, &err)) fail_msg("%s", err.msg);
    prog p;
    prog_opts o = {0};
    assert_int_equal(prog_build(&p, &m, &o, 1, 1, 2048, &err), 0);
    cost_params cp = {0};
    cp.kernels = &c;
    assert_int_equal(cost_apply(&p, &cp, NULL, &err), 0);
    double mem = (2.0 * 8192 * 10240 + 2.0 * (8192 + 10240)) / 3304.89e9;
    double math = 64 * 2.0 * 8192 * 10240 / 712.54e12;
    double want = 4.8252e-6 + pow(pow(mem, 1.6795) + pow(math, 1.6795), 1 / 1.6795);
    int seen = 0;
    for (size_t i = 0; i < p.n; i++)
        if (p.ops[i].name == OPN_QKV_PROJ && !seen++)
            assert_true(fabs(p.ops[i].gpu_s - want) < 1e-12);
    assert_true(seen > 0);
    /* moved by the class's error for validate's bands */
    cp.kernel_err_sign = 1;
    assert_int_equal(cost_apply(&p, &cp, NULL, &err), 0);
    for (size_t i = 0; i < p.n; i++)
        if (p.ops[i].name == OPN_QKV_PROJ) {
            assert_true(fabs(p.ops[i].gpu_s - want * (1 + c.cls[KC_GEMM].heldout_mape_pct / 100)) <
                        1e-12);
            break;
        }
    prog_free(&p);
    kcal_free(&c);
}

/* tpsim-probe's GEMV bandwidths as GEMM samples: qkv at TP-2, batch 1, 2500 GB/s moves
 * 2*8192*5120 + 2*(8192+5120) = 83,912,704 bytes, so 33.5650816 us (by hand). */
static void test_probe_reader(void **state)
{
    (void)state;
    kp_set set = {0};
    tp_err err;
    if (kp_read("tests/data/kfit/probe-synthetic.yaml", &set, &err)) fail_msg("%s", err.msg);
    assert_int_equal(set.n, 3);
    const kp_sample *q = NULL;
    for (size_t i = 0; i < set.n; i++)
        if (set.s[i].tp == 2 && set.s[i].tokens == 1) q = &set.s[i];
    assert_non_null(q);
    assert_int_equal(q->cls, KC_GEMM);
    assert_true(q->bytes == 83912704.0);
    assert_true(fabs(q->us - 33.5650816) < 1e-9);
    kp_free(&set);
}

/* tests/data/kfit/trace-kernels.csv (hand-made, by hand in tests/data/kfit/README.md): six GPU
 * activities of rank 3; a collective and a name of no class are counted, not fitted. */
static void test_trace_listing(void **state)
{
    (void)state;
    kp_set set = {0};
    tp_err err;
    if (kp_read("tests/data/kfit/trace-kernels.csv", &set, &err)) fail_msg("%s", err.msg);
    assert_int_equal(set.n, 4);
    int want[] = {KC_GEMM, KC_NORM, KC_COPY, KC_GEMM};
    double us[] = {12.5, 4.25, 2.125, 7.5}, bytes[] = {0, 65536, 4096, 0};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(set.s[i].cls, want[i]);
        assert_true(set.s[i].us == us[i] && set.s[i].bytes == bytes[i]);
        assert_int_equal(set.s[i].fold, 2003);
        assert_true(set.s[i].flops == 0 && set.s[i].batch == 0);
    }
    assert_int_equal(set.skipped.collectives, 1);
    assert_int_equal(set.skipped.unmapped, 1);
    assert_int_equal(set.skipped.n_names, 1);
    assert_string_equal(set.skipped.names[0], "triton_poi_fused_0");
    kp_free(&set);
    /* first match wins: a fused add + norm is a norm, a SwiGLU GEMM a GEMM */
    assert_int_equal(kp_trace_class("kernel", "vllm::fused_add_rms_norm_kernel"), KC_NORM);
    assert_int_equal(kp_trace_class("kernel", "_matmul_ogs_NNT_bf16_swiglu"), KC_GEMM);
    assert_int_equal(kp_trace_class("kernel", "vllm::rotary_embedding_kernel"), KC_ROPE);
    assert_int_equal(kp_trace_class("kernel", "vllm::act_and_mul_kernel"), KC_ACTIVATION);
    assert_int_equal(kp_trace_class("memcpy", "Memcpy DtoD (Device -> Device)"), KC_COPY);
    assert_int_equal(kp_trace_class("memset", "Memset (Device)"), -1);
    assert_int_equal(kp_trace_class("kernel", "cross_device_reduce_1stage"), KC_COUNT);
    assert_int_equal(kp_trace_class("kernel", "FillFunctor"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roofline_recovered), cmocka_unit_test(test_linear_recovered),
        cmocka_unit_test(test_law_time),           cmocka_unit_test(test_vidur_reader),
        cmocka_unit_test(test_bytes_match_prog),  cmocka_unit_test(test_bundled_and_cost),
        cmocka_unit_test(test_probe_reader),      cmocka_unit_test(test_tiled_recovered),
        cmocka_unit_test(test_monotone_in_batch), cmocka_unit_test(test_floor_recovered),
        cmocka_unit_test(test_trace_listing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
