/* test_domain.c: domain_check against a hand-stated validated domain: inside cells get no
 * mark, each dimension outside gets its own words, a scenario without the block one mark. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll.h"
#include "domain.h"
#include "prec.h"

/* The study's domain as tpsim validate --write-domain writes it, and a scenario that runs
 * exactly that: bf16 weights and KV cache (a 2-byte model), vLLM's all-reduce (auto), V0's
 * serialised host phases, queue depth 1024. */
static scenario *study_domain(void)
{
    scenario *s = calloc(1, sizeof *s);
    scenario_domain *d = &s->domain;
    d->present = 1;
    d->tp[0] = 2, d->tp[1] = 4, d->n_tp = 2;
    d->eager = 1;
    d->batch_lo = 1, d->batch_hi = 8, d->ctx_lo = 2048, d->ctx_hi = 2048;
    strcpy(d->hardware, "H100 SXM");
    strcpy(d->model, "Llama-3.1-70B");
    strcpy(d->engine, "vllm-v0");
    d->written = 1;
    strcpy(d->weights, "bf16");
    strcpy(d->kv_cache, "bf16");
    strcpy(d->allreduce, "auto");
    strcpy(d->host_phases, "serialised");
    d->queue_depth = 1024;
    strcpy(s->engine, "vllm-v0");
    s->model.dtype_bytes = 2;
    s->allreduce_model = COLL_AUTO;
    s->queue_depth = 1024;
    return s;
}

static void test_inside(void **state)
{
    (void)state;
    scenario *s = study_domain();
    domain_report r;
    for (long tp = 2; tp <= 4; tp += 2)
        for (long b = 1; b <= 8; b++) {
            domain_cell c = {tp, b, 2048, 0, "H100 SXM", "Llama-3.1-70B"};
            domain_check(s, &c, &r);
            assert_int_equal(r.inside, 1);
            assert_int_equal(r.n_marks, 0);
        }
    char buf[64];
    domain_join(&r, buf, sizeof buf);
    assert_string_equal(buf, "");
    free(s);
}

static void test_each_dimension_marked(void **state)
{
    (void)state;
    scenario *s = study_domain();
    domain_report r;
    domain_cell c = {8, 16, 192, 1, "H200 SXM", "Mixtral-8x7B-v0.1"};
    domain_check(s, &c, &r);
    assert_int_equal(r.inside, 0);
    assert_int_equal(r.n_marks, 6);
    assert_string_equal(r.marks[0], "TP-8 is outside the validated TP {2, 4}");
    assert_string_equal(r.marks[1], "graph mode was never validated");
    assert_string_equal(r.marks[2], "batch 16 is outside the validated batch 1..8");
    assert_string_equal(r.marks[3], "context 192 is outside the validated context 2048..2048");
    assert_string_equal(r.marks[4], "H200 SXM was never validated (only H100 SXM)");
    assert_string_equal(r.marks[5],
                        "model Mixtral-8x7B-v0.1 was never validated (only Llama-3.1-70B)");
    char buf[1024];
    domain_join(&r, buf, sizeof buf);
    assert_non_null(strstr(buf, "{2, 4}; graph mode was never validated; batch 16"));
    /* the context range's both ends: above it is outside as below it is; a range's ends are
     * inside (512..4096: 512 and 4096 in, 511 and 4097 out) */
    domain_cell longer = {4, 1, 4096, 0, "H100 SXM", "Llama-3.1-70B"};
    domain_check(s, &longer, &r);
    assert_int_equal(r.n_marks, 1);
    assert_string_equal(r.marks[0], "context 4096 is outside the validated context 2048..2048");
    s->domain.ctx_lo = 512, s->domain.ctx_hi = 4096;
    const long ctxs[] = {511, 512, 4096, 4097};
    const int marks[] = {1, 0, 0, 1};
    for (int i = 0; i < 4; i++) {
        domain_cell at = {4, 1, ctxs[i], 0, "H100 SXM", "Llama-3.1-70B"};
        domain_check(s, &at, &r);
        assert_int_equal(r.n_marks, marks[i]);
    }
    s->domain.ctx_lo = 2048, s->domain.ctx_hi = 2048;
    /* one dimension at a time: only its mark */
    domain_cell one = {4, 9, 2048, 0, "H100 SXM", "Llama-3.1-70B"};
    domain_check(s, &one, &r);
    assert_int_equal(r.n_marks, 1);
    assert_string_equal(r.marks[0], "batch 9 is outside the validated batch 1..8");
    /* another model alone; the same name in other case is the same model */
    domain_cell gemma = {4, 1, 2048, 0, "H100 SXM", "gemma-2-9b-it"};
    domain_check(s, &gemma, &r);
    assert_int_equal(r.n_marks, 1);
    assert_string_equal(r.marks[0], "model gemma-2-9b-it was never validated (only Llama-3.1-70B)");
    domain_cell folded = {4, 1, 2048, 0, "H100 SXM", "llama-3.1-70b"};
    domain_check(s, &folded, &r);
    assert_int_equal(r.n_marks, 0);
    /* a graphs-only domain marks eager cells */
    s->domain.eager = 0, s->domain.graphs = 1;
    domain_cell eager = {2, 1, 2048, 0, "H100 SXM", "Llama-3.1-70B"};
    domain_check(s, &eager, &r);
    assert_int_equal(r.n_marks, 1);
    assert_string_equal(r.marks[0], "eager mode was never validated");
    free(s);
}

static void test_never_validated(void **state)
{
    (void)state;
    scenario *s = calloc(1, sizeof *s);
    domain_report r;
    domain_cell c = {4, 1, 2048, 1, "H100 SXM", "Llama-3.1-70B"};
    domain_check(s, &c, &r);
    assert_int_equal(r.inside, 0);
    assert_int_equal(r.n_marks, 1);
    assert_string_equal(r.marks[0], "this scenario was never validated");
    free(s);
}

static void test_join_truncates(void **state)
{
    (void)state;
    scenario *s = study_domain();
    domain_report r;
    domain_cell c = {8, 16, 192, 1, "H200 SXM", "Mixtral-8x7B-v0.1"};
    domain_check(s, &c, &r);
    char buf[20];
    domain_join(&r, buf, sizeof buf);
    assert_int_equal(strlen(buf), sizeof buf - 1); /* cut, still terminated */
    free(s);
}

/* domain_statement: the block in words, written out here by hand from study_domain's values */
static void test_statement(void **state)
{
    (void)state;
    scenario *s = study_domain();
    strcpy(s->domain.grid, "validate/h100-ctx2048.csv");
    strcpy(s->domain.verdict, "within: MISFIT");
    char buf[DOMAIN_STATEMENT_MAX];
    assert_int_equal(domain_statement(s, buf, sizeof buf), 1);
    assert_string_equal(buf, "TP {2, 4}, eager, batch 1..8, ctx 2048..2048, H100 SXM, "
                             "Llama-3.1-70B, engine vllm-v0; validate/h100-ctx2048.csv: within: "
                             "MISFIT");
    s->domain.graphs = 1;
    domain_statement(s, buf, sizeof buf);
    assert_non_null(strstr(buf, "}, eager/graphs, batch"));
    s->domain.present = 0;
    assert_int_equal(domain_statement(s, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    free(s);
}

/* Each input validate records, changed alone: its own mark, in words (domain.h). */
static void test_inputs_marked(void **state)
{
    (void)state;
    scenario *s = study_domain(), *base = study_domain();
    domain_report r;
    domain_cell c = {4, 1, 2048, 0, "H100 SXM", "Llama-3.1-70B"};
    int n = 0;
#define CASE(body, text)                                                                       \
    do {                                                                                       \
        *s = *base;                                                                            \
        body;                                                                                  \
        domain_check(s, &c, &r);                                                               \
        assert_int_equal(r.inside, 0);                                                         \
        assert_int_equal(r.n_marks, 1);                                                        \
        assert_string_equal(r.marks[0], text);                                                 \
        n++;                                                                                   \
    } while (0)
    CASE(s->program.prec_weights = PREC_FP8, "weights in fp8 were never validated (only bf16)");
    CASE(s->model.weights_quant = PREC_INT4, "weights in int4 were never validated (only bf16)");
    CASE(s->program.prec_kv_cache = PREC_FP8,
         "a KV cache in fp8 was never validated (only bf16)");
    CASE(s->allreduce_model = COLL_NCCL_FIT,
         "all-reduce model nccl-fit was never validated (only auto)");
    CASE(s->phases.overlap = 1, "overlapped host phases were never validated (only serialised)");
    CASE(s->queue_depth = 2, "queue depth 2 was never validated (only 1024)");
    CASE(strcpy(s->engine, "vllm-v1"), "engine vllm-v1 was never validated (only vllm-v0)");
    /* the files' marks, as domain_inputs_check left them in the scenario */
    CASE((s->input_marks.checked = 1, s->input_marks.n = 1,
          strcpy(s->input_marks.marks[0], "../models/kernels/h100-sxm.yaml changed since "
                                          "validation (fingerprint 1, validated 2)")),
         "../models/kernels/h100-sxm.yaml changed since validation (fingerprint 1, validated 2)");
#undef CASE
    assert_int_equal(n, 8);
    /* not compared (a bind alone): no file mark */
    *s = *base;
    s->input_marks.n = 1;
    strcpy(s->input_marks.marks[0], "x");
    domain_check(s, &c, &r);
    assert_int_equal(r.n_marks, 0);
    /* graphs: the graph mode validated against the one the scenario runs */
    *s = *base;
    s->domain.graphs = 1;
    strcpy(s->domain.graph_mode, "full");
    domain_cell g = {4, 1, 2048, 1, "H100 SXM", "Llama-3.1-70B"};
    domain_check(s, &g, &r);
    assert_int_equal(r.n_marks, 0);
    s->piecewise = 1;
    domain_check(s, &g, &r);
    assert_int_equal(r.n_marks, 1);
    assert_string_equal(r.marks[0], "piecewise graphs were never validated (only full)");
    domain_check(s, &c, &r); /* an eager cell has no graph mode to compare */
    assert_int_equal(r.n_marks, 0);
    free(s);
    free(base);
}

/* A block written by hand: one more mark, and its statement says so; none of the inputs
 * validate records is compared (it records none). */
static void test_hand_written(void **state)
{
    (void)state;
    scenario *s = study_domain();
    s->domain.written = 0;
    s->queue_depth = 2;
    strcpy(s->domain.grid, "g.csv");
    strcpy(s->domain.verdict, "PASS");
    domain_report r;
    domain_cell c = {4, 1, 2048, 0, "H100 SXM", "Llama-3.1-70B"};
    domain_check(s, &c, &r);
    assert_int_equal(r.n_marks, 1);
    assert_string_equal(r.marks[0],
                        "the validated: block was not written by tpsim validate --write-domain");
    char buf[DOMAIN_STATEMENT_MAX];
    domain_statement(s, buf, sizeof buf);
    assert_string_equal(buf, "TP {2, 4}, eager, batch 1..8, ctx 2048..2048, H100 SXM, "
                             "Llama-3.1-70B, engine vllm-v0; g.csv: PASS (hand-written, not by "
                             "tpsim validate --write-domain)");
    domain_statement_words(s, buf, sizeof buf);
    assert_string_equal(buf, "TP {2, 4}, eager, batch 1..8, ctx 2048..2048, H100 SXM, "
                             "Llama-3.1-70B, engine vllm-v0 against g.csv: passed (hand-written, "
                             "not by tpsim validate --write-domain)");
    free(s);
}

/* Paths relative to the scenario's folder, from the repository root the tests run in. */
static void test_relpath(void **state)
{
    (void)state;
    char out[256];
    assert_int_equal(domain_relpath("scenarios/cuda-graphs.yaml", "models/hw/h100-sxm.yaml", out,
                                    sizeof out), 0);
    assert_string_equal(out, "../models/hw/h100-sxm.yaml");
    assert_int_equal(domain_relpath("scenarios/cuda-graphs.yaml",
                                    "scenarios/../scenarios/eager-sourced.yaml", out, sizeof out),
                     0);
    assert_string_equal(out, "eager-sourced.yaml");
    assert_int_equal(domain_relpath("sim/domain.c", "simulated-nothing", out, sizeof out), -1);
    assert_int_equal(domain_relpath("scenarios/x.yaml", "models/hw/h100-sxm.yaml", out, 8), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inputs_marked),
        cmocka_unit_test(test_hand_written),
        cmocka_unit_test(test_relpath),
        cmocka_unit_test(test_inside),
        cmocka_unit_test(test_each_dimension_marked),
        cmocka_unit_test(test_never_validated),
        cmocka_unit_test(test_join_truncates),
        cmocka_unit_test(test_statement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
