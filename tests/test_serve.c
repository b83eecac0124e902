/* test_serve.c: the serving simulation against cases worked out by hand: a step priced
 * a + b * tokens, so every latency is a sum of known steps. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "serve.h"
#include "servecost.h"

#define A_S 0.010   /* a step's fixed cost */
#define B_S 0.0001  /* and its cost per scheduled token */

typedef struct linear {
    long calls;
    long tokens[64]; /* the first 64 steps' token counts */
} linear;

static int price_linear(void *ctx, const serve_step_shape *sh, double *step_s, tp_err *err)
{
    (void)err;
    linear *l = ctx;
    if (l->calls < 64) l->tokens[l->calls] = sh->tokens;
    l->calls++;
    *step_s = A_S + B_S * (double)sh->tokens;
    return 0;
}

static double step_of(long tokens) { return A_S + B_S * (double)tokens; }

static serve_config base_config(linear *l)
{
    serve_config c;
    memset(&c, 0, sizeof c);
    c.max_num_batched_tokens = 8192;
    c.max_num_seqs = 1024;
    c.block_size = 16;
    c.kv_blocks = 100000;
    c.concurrency = 1;
    c.requests = 1;
    c.isl = 100, c.osl = 5;
    c.seed = 7;
    c.price = price_linear;
    c.price_ctx = l;
    return c;
}

static void assert_near(double got, double want)
{
    assert_true(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12);
}

/* One request alone: TTFT is its prefill step, every later token one decode step. */
static void test_one_request(void **state)
{
    (void)state;
    linear l = {0};
    serve_config c = base_config(&l);
    serve_result r;
    tp_err err = {{0}};
    assert_int_equal(serve_run(&c, &r, &err), 0);
    double ttft = step_of(100), tpot = step_of(1);
    assert_int_equal(r.steps, 5);
    assert_near(r.ttft_sum, ttft);
    assert_near(r.e2e_sum, ttft + 4 * tpot);
    assert_near(r.tpot_sum, tpot);
    assert_int_equal(r.n_itl, 4);
    assert_near(r.itl_sum, 4 * tpot);
    assert_near(r.duration, ttft + 4 * tpot);
    assert_int_equal(r.output_tokens, 5);
    serve_result_free(&r);
}

/* A token budget of 256 splits a 1000-token prompt into 256, 256, 256, 232. */
static void test_chunked_prefill(void **state)
{
    (void)state;
    linear l = {0};
    serve_config c = base_config(&l);
    c.max_num_batched_tokens = 256;
    c.isl = 1000, c.osl = 2;
    serve_result r;
    tp_err err = {{0}};
    assert_int_equal(serve_run(&c, &r, &err), 0);
    const long want[] = {256, 256, 256, 232, 1};
    assert_int_equal(r.steps, 5);
    for (int i = 0; i < 5; i++) assert_int_equal(l.tokens[i], want[i]);
    assert_near(r.ttft_sum, 4 * A_S + 1000 * B_S);
    assert_near(r.tpot_sum, step_of(1));
    serve_result_free(&r);
}

/* N equal requests sent at once run in lock step: one prefill step of N prompts, then
 * decode steps of N tokens. */
static void test_lock_step(void **state)
{
    (void)state;
    linear l = {0};
    serve_config c = base_config(&l);
    c.concurrency = 4, c.requests = 4;
    c.isl = 50, c.osl = 10;
    serve_result r;
    tp_err err = {{0}};
    assert_int_equal(serve_run(&c, &r, &err), 0);
    assert_int_equal(r.steps, 10);
    assert_int_equal(l.tokens[0], 200);
    for (int i = 1; i < 10; i++) assert_int_equal(l.tokens[i], 4);
    assert_near(r.ttft_sum / 4, step_of(200));
    assert_near(r.tpot_sum / 4, step_of(4));
    assert_near(qsketch_quantile(&r.tpot, 0.99), step_of(4));
    assert_int_equal(r.batch_peak, 4);
    serve_result_free(&r);
}

/* A cache of 4 blocks of 16 holds two requests of 16 + 17 tokens (32 positions, 2 blocks
 * each) but not three: by hand, step 1 prefills A, B, C (one block each, 1 left); in step 2
 * A takes the last block, B finds none and the last running request, C, is preempted (its
 * block freed, its first token kept); A and B decode 16 steps and finish at step 17; C
 * recomputes its 17 tokens in step 18 and decodes 15 more: 33 steps, 1 preemption. */
static void test_preemption_by_hand(void **state)
{
    (void)state;
    linear l = {0};
    serve_config c = base_config(&l);
    c.kv_blocks = 4;
    c.concurrency = 3, c.requests = 3;
    c.isl = 16, c.osl = 17;
    serve_result r;
    tp_err err = {{0}};
    assert_int_equal(serve_run(&c, &r, &err), 0);
    assert_int_equal(r.preemptions, 1);
    assert_int_equal(r.steps, 33);
    assert_int_equal(l.tokens[0], 48);
    assert_int_equal(l.tokens[1], 2);  /* A and B decode; C was preempted */
    assert_int_equal(l.tokens[17], 17); /* step 18: C's recompute */
    assert_int_equal(l.tokens[18], 1);
    /* everyone's first token came in step 1 */
    assert_near(r.ttft_sum, 3 * step_of(48));
    double t17 = step_of(48) + 16 * step_of(2);
    double end = t17 + step_of(17) + 15 * step_of(1);
    assert_near(r.duration, end);
    assert_near(r.e2e_sum, 2 * t17 + end);
    assert_near(r.kv_peak, 1.0);
    serve_result_free(&r);
}

/* Little's law on the closed loop: N clients always in the system, so throughput x mean
 * latency = N, less the final drain (when fewer than N requests remain). */
static void test_littles_law(void **state)
{
    (void)state;
    linear l = {0};
    serve_config c = base_config(&l);
    c.concurrency = 8, c.requests = 4000;
    c.isl = 64, c.osl = 32;
    serve_result r;
    tp_err err = {{0}};
    assert_int_equal(serve_run(&c, &r, &err), 0);
    double x = (double)r.requests / r.duration, w = r.e2e_sum / (double)r.requests;
    assert_true(fabs(x * w - 8.0) / 8.0 < 0.01);
    serve_result_free(&r);
}

/* Poisson arrivals and drawn lengths: the same seed gives the same run, another seed another. */
static void test_seeded(void **state)
{
    (void)state;
    const long lengths[3][2] = {{100, 20}, {300, 5}, {50, 60}};
    double d[3];
    long in[3];
    for (int i = 0; i < 3; i++) {
        linear l = {0};
        serve_config c = base_config(&l);
        c.concurrency = 0, c.rate = 5.0, c.requests = 300;
        c.lengths = lengths, c.n_lengths = 3;
        c.seed = i < 2 ? 11 : 12;
        serve_result r;
        tp_err err = {{0}};
        assert_int_equal(serve_run(&c, &r, &err), 0);
        d[i] = r.duration, in[i] = r.input_tokens;
        serve_result_free(&r);
    }
    assert_true(d[0] == d[1] && in[0] == in[1]);
    assert_true(d[0] != d[2]);
    /* at 5 requests/s, 300 requests span about 60 s of arrivals */
    assert_true(d[0] > 40 && d[0] < 80);
}

static void test_refusals(void **state)
{
    (void)state;
    linear l = {0};
    serve_config c = base_config(&l);
    serve_result r;
    tp_err err = {{0}};
    c.kv_blocks = 5; /* 80 tokens; a request reaches 100 + 100 - 1 */
    c.isl = 100, c.osl = 100;
    assert_int_equal(serve_run(&c, &r, &err), -1);
    assert_non_null(strstr(err.msg, "could never finish"));
    c = base_config(&l);
    c.rate = 2.0; /* and a concurrency: two loads */
    assert_int_equal(serve_check(&c, &err), -1);
    c.rate = 0, c.concurrency = 0;
    assert_int_equal(serve_check(&c, &err), -1);
    c = base_config(&l);
    c.osl = 0;
    assert_int_equal(serve_check(&c, &err), -1);
}

/* vLLM's capture sizes: 1, 2, 4, then 8..248 by 8, then 256.. by 16 up to the largest. */
static void test_capture_pad(void **state)
{
    (void)state;
    assert_int_equal(scost_capture_pad(1, 512), 1);
    assert_int_equal(scost_capture_pad(2, 512), 2);
    assert_int_equal(scost_capture_pad(3, 512), 4);
    assert_int_equal(scost_capture_pad(5, 512), 8);
    assert_int_equal(scost_capture_pad(9, 512), 16);
    assert_int_equal(scost_capture_pad(248, 512), 248);
    assert_int_equal(scost_capture_pad(249, 512), 256);
    assert_int_equal(scost_capture_pad(257, 512), 272);
    assert_int_equal(scost_capture_pad(512, 512), 512);
    assert_int_equal(scost_capture_pad(513, 512), 0);
    assert_int_equal(scost_capture_pad(100, 64), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_request),       cmocka_unit_test(test_chunked_prefill),
        cmocka_unit_test(test_lock_step),         cmocka_unit_test(test_preemption_by_hand),
        cmocka_unit_test(test_littles_law),       cmocka_unit_test(test_seeded),
        cmocka_unit_test(test_refusals),          cmocka_unit_test(test_capture_pad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
