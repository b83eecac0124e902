/* test_gpukernels.c: one GPU model per GPU. Every op kind tpsim's program emits, for every
 * architecture family (dense Llama, Qwen3's q/k norms, MoE, DeepSeek's MLA), in bf16 and FP8,
 * is priced on the bundled H100 and H200 calibrations by a class measured on that GPU (or,
 * for the sampler and copies no profile measures, by a class the file declares assumed): never
 * by another class's law without the file saying so. And H200 differs from H100 by what was
 * measured: on a memory-bound GEMM the ratio of the two prices is the ratio of the two tables'
 * rows, read here from the verbatim AIConfigurator subsets with a parser of this file's own.
 * cost_apply prices an op repeated across layers once: each op's price in the step is its
 * price alone. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "decl.h"
#include "kcal.h"
#include "model.h"
#include "prec.h"
#include "prog.h"

static const char *const calibs[] = {"models/kernels/h100-sxm.yaml",
                                     "models/kernels/h100-sxm-aic.yaml",
                                     "models/kernels/h200-sxm.yaml"};
static const char *const models[] = {
    "models/llama-3.1-70b.yaml",         /* dense Llama */
    "models/hf/Qwen3-8B.json",           /* q_norm, k_norm */
    "models/hf/Mixtral-8x7B-v0.1.json",  /* FusedMoE */
    "models/hf/Qwen3-30B-A3B.json",      /* FusedMoE with q/k norms */
    "models/hf/DeepSeek-V3.json",        /* MLA, dense then routed + shared experts */
};

/* The class cost_apply prices op with on calibration c (cost.c's rule, restated): the FP8
 * GEMMs by gemm_fp8 where the calibration has it. */
static int class_used(const kcal *c, const prog_op *op)
{
    int k = kcal_class_of(op->name);
    if (op->fp8 && k == KC_GEMM && c->cls[KC_GEMM_FP8].valid) return KC_GEMM_FP8;
    return k;
}

static void check_program(const kcal *c, const char *model, int fp8, int tp)
{
    model_arch m;
    tp_err err;
    if (model_load(model, &m, &err)) fail_msg("%s", err.msg);
    prog p;
    prog_opts o = {.embedding_allreduce = 1, .logits_gather = 1};
    if (fp8) {
        o.prec_weights = PREC_FP8;
        o.w8a8 = 1;
    }
    if (prog_build(&p, &m, &o, tp, 8, 2048, &err)) fail_msg("%s: %s", model, err.msg);
    size_t fp8_gemms = 0;
    for (size_t i = 0; i < p.n; i++) {
        const prog_op *op = &p.ops[i];
        if (prog_is_collective(op)) continue;
        int k = class_used(c, op);
        if (k < 0 || k >= KC_COUNT || !c->cls[k].valid)
            fail_msg("%s: %s op %s has no class", c->path, model, prog_op_name(op));
        /* an FP8 GEMM is never priced by the bf16 GEMM law at the FP8 peak */
        if (op->fp8 && kcal_class_of(op->name) == KC_GEMM) {
            if (k != KC_GEMM_FP8)
                fail_msg("%s: %s FP8 op %s not on gemm_fp8", c->path, model, prog_op_name(op));
            fp8_gemms++;
        }
        const kcal_entry *e = &c->cls[k];
        if (e->from < 0) continue; /* measured: its own rows fitted it */
        /* copied from another class: only the sampler and copies, declared in the file */
        char key[96];
        snprintf(key, sizeof key, "classes.%s.t0_us", kcal_class_names[k]);
        if ((k != KC_SAMPLER && k != KC_COPY) || !decl_find(&c->assumed, key))
            fail_msg("%s: %s op %s priced by %s's law, not declared", c->path, model,
                     prog_op_name(op), kcal_class_names[e->from]);
    }
    if (fp8 && !fp8_gemms) fail_msg("%s: no FP8 GEMM in the W8A8 program", model);
    prog_free(&p);
}

/* Every op kind of every architecture family, bf16 and W8A8, at TP 1 and 8, on each bundled
 * H100 and H200 calibration. */
static void test_every_op_measured(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < sizeof calibs / sizeof *calibs; ci++) {
        kcal c;
        tp_err err;
        if (kcal_load(calibs[ci], &c, &err)) fail_msg("%s", err.msg);
        /* the classes a decode step needs are measured on this GPU's file: GEMMs bf16 and
         * FP8 and attention from measured rows, never from: another class */
        assert_int_equal(c.cls[KC_GEMM].from, -1);
        assert_int_equal(c.cls[KC_GEMM_FP8].from, -1);
        assert_true(c.cls[KC_GEMM_FP8].valid);
        assert_int_equal(c.cls[KC_ATTENTION].from, -1);
        for (size_t mi = 0; mi < sizeof models / sizeof *models; mi++)
            for (int fp8 = 0; fp8 <= 1; fp8++) {
                check_program(&c, models[mi], fp8, 1);
                check_program(&c, models[mi], fp8, 8);
            }
        kcal_free(&c);
    }
}

/* One row's latency (ms) of an AIConfigurator GEMM table: gemm_dtype,m,n,k,latency_ms. */
static double aic_row_ms(const char *path, const char *dtype, long m, long n, long k)
{
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    char line[512], d[32];
    double found = -1;
    while (fgets(line, sizeof line, f)) {
        long rm, rn, rk;
        double ms;
        if (line[0] == '#') continue;
        if (sscanf(line, "%31[^,],%ld,%ld,%ld,%lf", d, &rm, &rn, &rk, &ms) != 5) continue;
        if (!strcmp(d, dtype) && rm == m && rn == n && rk == k) {
            if (found >= 0) fail_msg("%s: two rows for %s %ld %ld %ld", path, dtype, m, n, k);
            found = ms;
        }
    }
    fclose(f);
    if (found < 0) fail_msg("%s: no row %s %ld %ld %ld", path, dtype, m, n, k);
    return found;
}

/* The GPU time cost_apply gives Llama-3.1-70B's o_proj at TP-1, batch 1 (n = k = 8192, m = 1:
 * 134 MB of bf16 weights read for 0.13 GFLOP, memory-bound) on calibration path. */
static double o_proj_s(const char *path, int fp8)
{
    kcal c;
    model_arch m;
    tp_err err;
    if (kcal_load(path, &c, &err) || model_load("models/llama-3.1-70b.yaml", &m, &err))
        fail_msg("%s", err.msg);
    prog p;
    prog_opts o = {0};
    if (fp8) {
        o.prec_weights = PREC_FP8;
        o.w8a8 = 1;
    }
    if (prog_build(&p, &m, &o, 1, 1, 2048, &err)) fail_msg("%s", err.msg);
    cost_params cp = {0};
    cp.kernels = &c;
    if (cost_apply(&p, &cp, NULL, &err)) fail_msg("%s", err.msg);
    double s = -1;
    for (size_t i = 0; i < p.n && s < 0; i++)
        if (p.ops[i].name == OPN_O_PROJ) s = p.ops[i].gpu_s;
    prog_free(&p);
    kcal_free(&c);
    assert_true(s > 0);
    return s;
}

/* H200 / H100 on the memory-bound GEMM: the measured rows' ratio, bf16 and FP8. By hand from
 * tests/data/aic/: bf16 m=1 n=k=8192 is 0.047849 ms on H100 and 0.038668 ms on H200 (0.808;
 * FP8 0.027086 and 0.020424, 0.754), a smaller gain than the HBM datasheets' 3.35 / 4.8 = 0.698
 * promises. The grids hold each row in us to six decimals, so the prices' ratio matches to
 * 1e-5 relative. */
static void test_h200_h100_measured_ratio(void **state)
{
    (void)state;
    static const char *const dt[] = {"bfloat16", "fp8"};
    for (int fp8 = 0; fp8 <= 1; fp8++) {
        double h100 = aic_row_ms("tests/data/aic/h100-gemm-subset.csv", dt[fp8], 1, 8192, 8192);
        double h200 = aic_row_ms("tests/data/aic/h200-gemm-subset.csv", dt[fp8], 1, 8192, 8192);
        double want = h200 / h100;
        double got = o_proj_s("models/kernels/h200-sxm.yaml", fp8) /
                     o_proj_s("models/kernels/h100-sxm-aic.yaml", fp8);
        if (fabs(got / want - 1) > 1e-5)
            fail_msg("%s: H200/H100 %.6f, measured %.6f", dt[fp8], got, want);
        /* and each price is its row (us to six decimals in the grid) */
        assert_true(fabs(o_proj_s("models/kernels/h200-sxm.yaml", fp8) * 1e3 / h200 - 1) < 1e-5);
        /* a memory-bound GEMM: H200 is faster, by less than the bandwidths' ratio promises */
        assert_true(want < 1 && want > 3.35 / 4.8);
    }
    /* the H100 FP8 GEMMs of the Vidur-fitted calibration are the same measured grid */
    assert_true(fabs(o_proj_s("models/kernels/h100-sxm.yaml", 1) /
                         o_proj_s("models/kernels/h100-sxm-aic.yaml", 1) - 1) < 1e-12);
}

/* One op of p as a program of its own (same tp, batch, context), priced alone. */
static double price_alone(const prog *p, const prog_op *op, const prog_shape *x,
                          const cost_params *cp)
{
    prog one = *p;
    prog_op o = *op;
    prog_shape sh = *x;
    one.ops = &o;
    one.shape = &sh;
    one.n = one.cap = 1;
    one.n_allreduce = one.n_collectives = 0;
    tp_err err;
    if (cost_apply(&one, cp, NULL, &err)) fail_msg("%s", err.msg);
    return o.gpu_s;
}

/* cost_apply prices each distinct op once and copies the time to its repeats: every op of
 * every family's program gets, bit for bit, the price it gets alone; and ops equal in name
 * and bytes but not in FLOPs, grid shape or graph flag are told apart. */
static void test_repeats_priced_as_alone(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < sizeof calibs / sizeof calibs[0]; ci++) {
        kcal c;
        tp_err err;
        if (kcal_load(calibs[ci], &c, &err)) fail_msg("%s", err.msg);
        cost_params cp = {0};
        cp.kernels = &c;
        cp.graph_node_s = 0.6e-6;
        for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
            model_arch m;
            if (model_load(models[mi], &m, &err)) fail_msg("%s", err.msg);
            prog p;
            prog_opts o = {0};
            if (prog_build(&p, &m, &o, 1, 8, 2048, &err)) fail_msg("%s", err.msg);
            if (cost_apply(&p, &cp, NULL, &err)) fail_msg("%s", err.msg);
            for (size_t i = 0; i < p.n; i++)
                if (p.ops[i].gpu_s != price_alone(&p, &p.ops[i], &p.shape[i], &cp))
                    fail_msg("%s %s: op %zu (%s) priced %.17g in the step", calibs[ci],
                             models[mi], i, prog_op_name(&p.ops[i]), p.ops[i].gpu_s);
            prog_free(&p);
        }
        /* o_proj's twin right after it: more FLOPs (compute-bound), another m on the grid, or
         * not graphable; each in a program of its own, so the memo holds o_proj when it comes */
        model_arch m;
        if (model_load("models/llama-3.1-70b.yaml", &m, &err)) fail_msg("%s", err.msg);
        for (int t = 1; t <= 3; t++) {
            prog p;
            prog_opts o = {0};
            if (prog_build(&p, &m, &o, 1, 8, 2048, &err)) fail_msg("%s", err.msg);
            size_t at = p.n;
            for (size_t i = 0; i < p.n && at == p.n; i++)
                if (p.ops[i].name == OPN_O_PROJ) at = i;
            assert_true(at + 1 < p.n);
            p.ops[at + 1] = p.ops[at];
            p.shape[at + 1] = p.shape[at];
            if (t == 1) p.ops[at + 1].flops *= 1000;
            if (t == 2) p.shape[at + 1].x[2] *= 64; /* a GEMM's grid axes are n, k, m (kgrid.h) */
            if (t == 3) p.ops[at + 1].graphable = !p.ops[at].graphable;
            if (cost_apply(&p, &cp, NULL, &err)) fail_msg("%s", err.msg);
            /* a law reads no shape, a grid no FLOPs */
            if (t == 3 || (t == 2) == (c.cls[KC_GEMM].grid >= 0))
                assert_true(p.ops[at + 1].gpu_s != p.ops[at].gpu_s);
            double alone = price_alone(&p, &p.ops[at + 1], &p.shape[at + 1], &cp);
            assert_true(p.ops[at + 1].gpu_s == alone);
            prog_free(&p);
        }
        kcal_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_op_measured),
        cmocka_unit_test(test_h200_h100_measured_ratio),
        cmocka_unit_test(test_repeats_priced_as_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
