/* test_trace.c: the trace modules' pure parts: the statistics and kernel classes of
 * calibrate/trace_stats.c (values worked by hand), and sim/trace.c's number formatting and
 * rounding (slices fed to the writer directly, the output parsed back). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "trace_data.h"
#include "trace_stats.h"

/* n = 5 values 1..5: mean 3, population sd sqrt(2), p50 3, p99 at rank 0.99*4 = 3.96 -> 4.96 */
static void test_stats_by_hand(void **state)
{
    (void)state;
    double v[] = {5, 1, 4, 2, 3};
    tr_dstat s = tr_stats(v, 5);
    assert_int_equal(s.n, 5);
    assert_true(fabs(s.mean - 3.0) < 1e-12);
    assert_true(fabs(s.cv - sqrt(2.0) / 3.0) < 1e-12);
    assert_true(fabs(s.p50 - 3.0) < 1e-12);
    assert_true(fabs(s.p99 - 4.96) < 1e-12);
    tr_dstat one = tr_stats((double[]){7}, 1);
    assert_true(one.mean == 7 && one.cv == 0 && one.p50 == 7 && one.p99 == 7);
    tr_dstat none = tr_stats(NULL, 0);
    assert_int_equal(none.n, 0);
}

/* Kernel names as the shipped traces spell them. */
static void test_classes(void **state)
{
    (void)state;
    static const struct { const char *name; tr_class c;
    } k[] = {
        {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", TRC_COLLECTIVE},
        {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
         TRC_COLLECTIVE},
        {"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, "
         "16>(c10::BFloat16*)",
         TRC_COLLECTIVE},
        {"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(...)", TRC_COLLECTIVE},
        {"all_reduce_copy_in", TRC_ELEMENTWISE},
        {"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext",
         TRC_ATTENTION},
        {"void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>>", TRC_ATTENTION},
        {"void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(...)", TRC_NORM},
        {"nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", TRC_GEMM},
        {"Cijk_Alik_Bljk_BBS_BH_MT64x16x256_MI16x16x1", TRC_GEMM},
        {"qkv_proj", TRC_GEMM},
        {"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(...)", TRC_ELEMENTWISE},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        assert_int_equal(tr_classify(k[i].name, TR_KERNEL), k[i].c);
    assert_int_equal(tr_classify("ncclKernel_whatever", TR_MEMCPY), TRC_COPY);
}

/* A one-op program, enough for the writer. */
static prog one_op(void)
{
    prog p = {0};
    p.ops = calloc(1, sizeof *p.ops);
    assert_non_null(p.ops);
    p.ops[0] = (prog_op){
        .kind = PROG_KERNEL, .name = OPN_QKV_PROJ, .layer = 3, .graphable = 1, .bytes = 1234.0};
    p.n = p.cap = 1;
    p.tp = 1;
    return p;
}

/* Times round once to a tick of 2^-10 us and print exactly as decimal microseconds; a slice
 * that would start before its thread's last end (after rounding) starts at that end. The
 * expected ticks, by hand: t_us * 1024 rounded to the nearest integer. */
static void test_writer_grid(void **state)
{
    (void)state;
    prog p = one_op();
    engine_config c = {.program = &p, .tp = 1, .steps = 1, .warmup = 1};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    trace_writer *w = malloc(sizeof *w);
    assert_non_null(w);
    trace_init(w, f, "t \"q\"");
    assert_int_equal(trace_start(w, &c), 0);
    /* warm-up step 0: not written */
    trace_slice(w, &(engine_slice){0.5, 1e-6, 0, 0, 0, TRACK_STREAM, SL_OP});
    /* starts 1.0000000004 s: 1024000000.4096 -> 1024000000 ticks (1000000 us); ends
     * 1.0000012346 s: 1024001264.2304 -> 1024001264 ticks, dur 1264 ticks = 1.234375 us */
    trace_slice(w, &(engine_slice){1.0000000004, 0.0000012342, 0, 1, 0, TRACK_STREAM, SL_OP});
    /* starts 1.0000012338 s: 1024001263.4112 -> 1024001263 ticks, before that end, so moved
     * to 1024001264 (1000001 + 240/1024 = 1000001.234375 us); ends 1.0000022338 s:
     * 1024002287.4112 -> 1024002287, dur 1023 ticks = 0.9990234375 us */
    trace_slice(w, &(engine_slice){1.0000012338, 0.000001, 0, 1, 0, TRACK_STREAM, SL_OP});
    tp_err err;
    assert_int_equal(trace_end(w, &err), 0);
    free(w);
    fclose(f);
    assert_null(strstr(text, "\"ts\":500000.0"));
    assert_non_null(strstr(text, "\"ts\":1000000.0,\"dur\":1.234375,"));
    assert_non_null(strstr(text, "\"ts\":1000001.234375,\"dur\":0.9990234375,"));
    assert_non_null(strstr(text, "\"run\":\"t \\\"q\\\"\""));
    assert_non_null(strstr(text, "\"layer\":3,\"bytes\":1234"));
    /* first measured step (0), op 0: correlation step * (n + 1) + op + 1 = 1 */
    assert_non_null(strstr(text, "\"ph\":\"f\",\"id\":1,"));
    free(text);
    free(p.ops);
}

/* A rank added under another rank's name while the array is full: the name lives in the array
 * that growing it frees (found by fuzz_trace: tr_split_by_pid on a trace with 4 pids). */
static void test_add_rank_own_name(void **state)
{
    (void)state;
    tr_trace t;
    memset(&t, 0, sizeof t);
    assert_non_null(tr_add_rank(&t, "ranks.json"));
    while (t.n_ranks < t.cap_ranks) assert_non_null(tr_add_rank(&t, "other.json"));
    tr_rank *r = tr_add_rank(&t, t.ranks[0].file);
    assert_non_null(r);
    assert_string_equal(r->file, "ranks.json");
    assert_string_equal(t.ranks[0].file, "ranks.json");
    tr_free(&t);
}

/* The rank bound: the last rank fits, the next is refused, and the reason names the bound.
 * The array is calloc'd whole and only its last ranks touched (their pages alone get memory). */
static void test_rank_bound(void **state)
{
    (void)state;
    tr_trace t;
    memset(&t, 0, sizeof t);
    t.ranks = calloc(TR_MAX_RANKS, sizeof *t.ranks);
    assert_non_null(t.ranks);
    t.cap_ranks = TR_MAX_RANKS;
    t.n_ranks = TR_MAX_RANKS - 1;
    assert_string_equal(tr_oom_why(&t), "out of memory");
    assert_non_null(tr_add_rank(&t, "many.json"));
    assert_int_equal(t.n_ranks, 131072);
    assert_null(tr_add_rank(&t, "many.json"));
    assert_int_equal(t.n_ranks, 131072);
    assert_non_null(strstr(tr_oom_why(&t), "more than 131072 ranks"));
    t.n_ranks = 0; /* nothing of theirs to free */
    tr_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_rank_own_name),
        cmocka_unit_test(test_rank_bound),
        cmocka_unit_test(test_stats_by_hand),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_writer_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
