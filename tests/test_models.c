/* test_models.c: Hugging Face config.json mapping (incl. GQA replication, biases, vocab
 * padding, tied embeddings), MoE bytes and launches, precision bytes and the FP8 peak, and
 * each hardware file against its datasheet. Expected values are worked out by hand in the
 * comments from the shapes (docs/sources.md#hf-config-fields) and datasheet figures. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost.h"
#include "hw.h"
#include "model.h"
#include "prec.h"
#include "prog.h"

#include "model_testutil.h"

/* the shipped config.json files: the repository's byte-identical copies (tests/cli/models.sh) */
#define SHARED_70B "models/hf/Llama-3.1-70B.json"
#define SHARED_MIXTRAL "models/hf/Mixtral-8x7B-v0.1.json"
#define SHARED_DSV3 "models/hf/DeepSeek-V3.json"

static size_t count_ops(const prog *p, int name, int layer)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) n += p->ops[i].name == name && p->ops[i].layer == layer;
    return n;
}

/* ---- config.json field mapping ------------------------------------------------------ */

/* The shipped Llama-3.1-70B config.json: every field the step uses equals the bundled model
 * (docs/sources.md#llama-configs: 80 layers, hidden 8192, 64/8 heads, head dim 8192/64 = 128,
 * intermediate 28672, vocab 128256, BF16). */
static void test_hf_llama_70b(void **state)
{
    (void)state;
    model_arch j, y;
    tp_err err;
    if (model_load(SHARED_70B, &j, &err)) fail_msg("%s", err.msg);
    assert_int_equal(model_load("models/llama-3.1-70b.yaml", &y, &err), 0);
    assert_int_equal(j.layers, 80);
    assert_int_equal(j.hidden, 8192);
    assert_int_equal(j.heads, 64);
    assert_int_equal(j.kv_heads, 8);
    assert_int_equal(j.head_dim, 128);
    assert_int_equal(j.intermediate, 28672);
    assert_int_equal(j.vocab, 128256);
    assert_int_equal(j.dtype_bytes, 2);
    assert_int_equal(j.qkv_bias + j.o_bias + j.mlp_bias + j.tied_embeddings, 0);
    assert_int_equal(j.sliding_window + j.experts + j.weights_quant, 0);
    /* every field but the name (the file's) agrees with the bundled model */
    const long jf[] = {j.layers, j.hidden, j.heads, j.kv_heads, j.head_dim, j.intermediate,
                       j.vocab, j.dtype_bytes, j.qkv_bias, j.o_bias, j.mlp_bias,
                       j.tied_embeddings, j.sliding_window, j.weights_quant, j.experts,
                       j.experts_per_tok, j.moe_intermediate, j.shared_intermediate, j.shared_gate};
    const long yf[] = {y.layers, y.hidden, y.heads, y.kv_heads, y.head_dim, y.intermediate,
                       y.vocab, y.dtype_bytes, y.qkv_bias, y.o_bias, y.mlp_bias,
                       y.tied_embeddings, y.sliding_window, y.weights_quant, y.experts,
                       y.experts_per_tok, y.moe_intermediate, y.shared_intermediate, y.shared_gate};
    for (size_t i = 0; i < sizeof jf / sizeof jf[0]; i++) assert_int_equal(jf[i], yf[i]);
    /* without _name_or_path the name is the file's; the repository copy is named for it */
    assert_int_equal(model_load("models/hf/Llama-3.1-70B.json", &j, &err), 0);
    assert_string_equal(j.name, "Llama-3.1-70B");
}

/* Qwen2.5-7B (its published config.json, docs/sources.md#hf-config-fields): q/k/v bias,
 * head_dim absent -> 3584/28 = 128, use_sliding_window false -> full attention. */
static const char qwen25_7b[] =
    "{\n  \"architectures\": [\"Qwen2ForCausalLM\"],\n  \"hidden_size\": 3584,\n"
    "  \"intermediate_size\": 18944,\n  \"num_attention_heads\": 28,\n"
    "  \"num_hidden_layers\": 28,\n  \"num_key_value_heads\": 4,\n  \"vocab_size\": 152064,\n"
    "  \"tie_word_embeddings\": false,\n  \"torch_dtype\": \"bfloat16\",\n"
    "  \"use_sliding_window\": false,\n  \"sliding_window\": 131072,\n"
    "  \"max_window_layers\": 28,\n  \"model_type\": \"qwen2\",\n  \"rope_theta\": 1000000.0\n}\n";

static void test_hf_qwen2_bias_and_gqa(void **state)
{
    (void)state;
    char path[256];
    model_arch m;
    tp_err err;
    mtu_write_json(path, sizeof path, "models", "Qwen2.5-7B", qwen25_7b);
    if (model_load(path, &m, &err)) fail_msg("%s", err.msg);
    unlink(path);
    assert_string_equal(strstr(m.name, "Qwen2.5-7B"), "Qwen2.5-7B");
    assert_int_equal(m.head_dim, 128);
    assert_int_equal(m.kv_heads, 4);
    assert_int_equal(m.qkv_bias, 1);
    assert_int_equal(m.o_bias, 0);
    assert_int_equal(m.sliding_window, 0);
    /* KV heads per rank: 4/2 = 2 at TP-2; 4/4 = 1 at TP-4; 28 heads do not split 8 ways */
    assert_int_equal(model_kv_heads_per_rank(&m, 2), 2);
    assert_int_equal(model_kv_heads_per_rank(&m, 4), 1);
    assert_int_equal(model_check_tp(&m, 8, &err), -1);
    assert_non_null(strstr(err.msg, "tp 8"));
    /* qkv_proj at TP-2, batch 1: out = (28/2 + 2*2) * 128 = 2304 columns;
     * weights 3584*2304*2 = 16515072 B, bias 2304*2 = 4608 B, x and y (3584+2304)*2 = 11776 B;
     * FLOPs 2*3584*2304 = 16515072 plus the bias add 2304 */
    prog_opts o = {.input_copies = 0};
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, 2, 1, 16, &err), 0);
    const prog_op *qkv = mtu_find_op(&p, OPN_QKV_PROJ, 0);
    mtu_assert_near(qkv->bytes, 16515072.0 + 4608.0 + 11776.0);
    mtu_assert_near(qkv->flops, 16515072.0 + 2304.0);
    /* o_proj has no bias in Qwen2: in 14*128 = 1792, out 3584 */
    mtu_assert_near(mtu_find_op(&p, OPN_O_PROJ, 0)->bytes, 1792.0 * 3584 * 2 + (1792.0 + 3584) * 2);
    prog_free(&p);
}

/* GQA replication: 32 query heads, 4 KV heads. At TP-8 each rank holds 32/8 = 4 query heads
 * and max(1, 4/8) = 1 KV head (replicated, not split): qkv out (4 + 2) * 128 = 768 columns,
 * and the KV cache one rank reads is 2 (K,V) * ctx * 1 * 128 * 2 B per layer. */
static const char gqa_model[] =
    "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"hidden_size\": 4096,\n"
    "  \"intermediate_size\": 11008,\n  \"num_attention_heads\": 32,\n"
    "  \"num_hidden_layers\": 2,\n  \"num_key_value_heads\": 4,\n  \"vocab_size\": 32001,\n"
    "  \"torch_dtype\": \"float16\"\n}\n";

static void test_hf_gqa_replication_and_vocab_padding(void **state)
{
    (void)state;
    char path[256];
    model_arch m;
    tp_err err;
    mtu_write_json(path, sizeof path, "models", "gqa", gqa_model);
    if (model_load(path, &m, &err)) fail_msg("%s", err.msg);
    unlink(path);
    assert_int_equal(model_kv_heads_per_rank(&m, 8), 1);
    assert_int_equal(model_kv_heads_per_rank(&m, 16), 1);
    assert_int_equal(model_kv_heads_per_rank(&m, 2), 2);
    /* vLLM pads 32001 up to a multiple of 64: 32064 */
    assert_int_equal(model_vocab_padded(&m), 32064);
    prog_opts o = {.input_copies = 0};
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, 8, 1, 1000, &err), 0);
    mtu_assert_near(mtu_find_op(&p, OPN_QKV_PROJ, 1)->bytes, 4096.0 * 768 * 2 + (4096.0 + 768) * 2);
    mtu_assert_near(p.kv_bytes, 2 /* layers */ * 2.0 * 1000 * 1 * 128 * 2);
    /* lm_head at TP-8: 32064/8 = 4008 rows of the padded vocab */
    mtu_assert_near(mtu_find_op(&p, OPN_LM_HEAD, -1)->bytes,
                    4096.0 * 4008 * 2 + (4096.0 + 4008) * 2);
    double untied = p.weight_bytes;
    prog_free(&p);
    /* tied embeddings: lm_head holds nothing of its own, 4096*4008*2 B fewer per rank */
    m.tied_embeddings = 1;
    assert_int_equal(prog_build(&p, &m, &o, 8, 1, 1000, &err), 0);
    mtu_assert_near(untied - p.weight_bytes, 4096.0 * 4008 * 2);
    mtu_assert_near(mtu_find_op(&p, OPN_LM_HEAD, -1)->bytes,
                    4096.0 * 4008 * 2 + (4096.0 + 4008) * 2);
    prog_free(&p);
    /* 4 KV heads at TP-8 replicate; 3 KV heads at TP-2 neither divide nor replicate */
    m.heads = 6;
    m.kv_heads = 3;
    assert_int_equal(model_check_tp(&m, 2, &err), -1);
    assert_non_null(strstr(err.msg, "KV heads"));
}

/* Mistral-7B-v0.1 (its config.json): sliding_window 4096, so decode attention reads at most
 * the last 4096 positions: the KV cache read per rank at TP-1 is
 * 32 layers * 2 (K,V) * min(ctx, 4096) * 8 heads * 128 * 2 B. */
static const char mistral_7b[] =
    "{\n  \"architectures\": [\"MistralForCausalLM\"],\n  \"hidden_size\": 4096,\n"
    "  \"intermediate_size\": 14336,\n  \"num_attention_heads\": 32,\n"
    "  \"num_hidden_layers\": 32,\n  \"num_key_value_heads\": 8,\n  \"vocab_size\": 32000,\n"
    "  \"sliding_window\": 4096,\n  \"rope_theta\": 10000.0,\n  \"tie_word_embeddings\": false,\n"
    "  \"torch_dtype\": \"bfloat16\"\n}\n";

static void test_hf_mistral_sliding_window(void **state)
{
    (void)state;
    char path[256];
    model_arch m;
    tp_err err;
    mtu_write_json(path, sizeof path, "models", "Mistral-7B-v0.1", mistral_7b);
    if (model_load(path, &m, &err)) fail_msg("%s", err.msg);
    unlink(path);
    assert_int_equal(m.sliding_window, 4096);
    prog_opts o = {.input_copies = 0};
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, 1, 1, 8192, &err), 0);
    mtu_assert_near(p.kv_bytes, 32.0 * 2 * 4096 * 8 * 128 * 2);
    mtu_assert_near(mtu_find_op(&p, OPN_ATTENTION, 0)->flops, 4.0 * 32 * 128 * 4096);
    /* its bytes: the window's K and V (2 x 4096 x 8 heads x 128 x 2 B = 16,777,216), plus the
     * query read and the output written (2 x 1 token x 32 heads x 128 x 2 B = 16,384) */
    mtu_assert_near(mtu_find_op(&p, OPN_ATTENTION, 0)->bytes, 16777216.0 + 16384.0);
    prog_free(&p);
    /* batch 4: four sequences' windows (67,108,864) and four tokens' q and out (65,536) */
    assert_int_equal(prog_build(&p, &m, &o, 1, 4, 8192, &err), 0);
    mtu_assert_near(mtu_find_op(&p, OPN_ATTENTION, 0)->bytes, 67108864.0 + 65536.0);
    prog_free(&p);
    assert_int_equal(prog_build(&p, &m, &o, 1, 1, 1000, &err), 0);
    mtu_assert_near(p.kv_bytes, 32.0 * 2 * 1000 * 8 * 128 * 2);
    prog_free(&p);
}

/* No torch_dtype: float32 (4 B a parameter), as transformers loads such a config; the same
 * config with bfloat16 holds half the weight bytes. Before issue 18 it was refused. */
static void test_hf_default_dtype(void **state)
{
    (void)state;
    static const char *const with =
        "{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 2,\n"
        " \"hidden_size\": 64, \"num_attention_heads\": 8, \"intermediate_size\": 128,\n"
        " \"vocab_size\": 100, \"torch_dtype\": \"bfloat16\"}";
    static const char *const without =
        "{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 2,\n"
        " \"hidden_size\": 64, \"num_attention_heads\": 8, \"intermediate_size\": 128,\n"
        " \"vocab_size\": 100}";
    char path[256];
    model_arch a, b;
    tp_err err;
    mtu_write_json(path, sizeof path, "models", "dtype-bf16", with);
    if (model_load(path, &a, &err)) fail_msg("%s", err.msg);
    unlink(path);
    mtu_write_json(path, sizeof path, "models", "dtype-none", without);
    if (model_load(path, &b, &err)) fail_msg("%s", err.msg);
    unlink(path);
    assert_int_equal(a.dtype_bytes, 2);
    assert_int_equal(b.dtype_bytes, 4);
    prog_opts o = {.input_copies = 0};
    prog pa, pb;
    assert_int_equal(prog_build(&pa, &a, &o, 1, 1, 16, &err), 0);
    assert_int_equal(prog_build(&pb, &b, &o, 1, 1, 16, &err), 0);
    mtu_assert_near(pb.weight_bytes, 2 * pa.weight_bytes);
    prog_free(&pa);
    prog_free(&pb);
}

static void test_hf_refusals(void **state)
{
    (void)state;
    mtu_expect_refused("models",
        "gpt2", "{\n  \"model_type\": \"gpt2\",\n  \"architectures\": [\"GPT2LMHeadModel\"]\n}\n",
        ".json:3:3: architectures: 'GPT2LMHeadModel' is not supported", "LlamaForCausalLM");
    mtu_expect_refused("models", "nohidden",
                   "{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 2}",
                   ":1:1: hidden_size: missing", "expected an integer");
    mtu_expect_refused("models",
        "badkv",
        "{\"architectures\": [\"MistralForCausalLM\"], \"num_hidden_layers\": 2,\n"
        " \"hidden_size\": 64, \"num_attention_heads\": 8, \"intermediate_size\": 128,\n"
        " \"vocab_size\": 100, \"torch_dtype\": \"bfloat16\", \"num_key_value_heads\": 3}",
        ":3:48: num_key_value_heads: 3 does not divide", "(8)");
    mtu_expect_refused("models", "syntax",
                   "{\"architectures\": [\"LlamaForCausalLM\"],\n \"hidden_size\": 4096,,}",
                   ":2:", "expected a JSON config.json");
    mtu_expect_refused("models",
        "dup",
        "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 1, \"hidden_size\": 2}",
        "duplicate", "hidden_size");
    mtu_expect_refused("models", "dtype",
                   "{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 2,\n"
                   " \"hidden_size\": 64, \"num_attention_heads\": 8, \"intermediate_size\": 128,\n"
                   " \"vocab_size\": 100, \"torch_dtype\": \"int8\"}",
                   "torch_dtype: expected bfloat16, float16 or float32", ":3:");
    /* a name longer than the 63 bytes the field holds is refused, not cut */
    mtu_expect_refused("models",
        "longname",
        "{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 2,\n"
        " \"hidden_size\": 64, \"num_attention_heads\": 8, \"intermediate_size\": 128,\n"
        " \"vocab_size\": 100, \"torch_dtype\": \"bfloat16\",\n"
        " \"_name_or_path\": \"org/a-model-name-that-goes-on-and-on-well-past-sixty-three-bytes\"}",
        ":4:2: _name_or_path: 64 bytes", "at most 63"); /* 64 characters */
    mtu_expect_refused("models",
        "sparse_step",
        "{\"architectures\": [\"Qwen2MoeForCausalLM\"], \"num_hidden_layers\": 2,\n"
        " \"hidden_size\": 64, \"num_attention_heads\": 8, \"vocab_size\": 100,\n"
        " \"torch_dtype\": \"bfloat16\", \"num_experts\": 4, \"num_experts_per_tok\": 2,\n"
        " \"moe_intermediate_size\": 32, \"decoder_sparse_step\": 2}",
        ":4:31: decoder_sparse_step: 2 (dense layers between MoE layers) is not modelled",
        "expected 1");
}

/* ---- MoE -------------------------------------------------------------------------------- */

/* Mixtral-8x7B (its config.json): 8 experts of intermediate 14336, top-2, hidden 4096.
 * At TP-2 each rank holds every expert's 14336/2 = 7168 slice:
 *   w13 per expert 4096 * 2*7168 * 2 B = 117440512 B, w2 per expert 7168 * 4096 * 2 B = 58720256 B.
 * Batch 1 touches exactly top_k = 2 experts; batch 4 touches 8 * (1 - (6/8)^4) = 5.46875
 * on average (uniform routing, top-2 distinct experts per token). */
static void test_moe_mixtral_bytes(void **state)
{
    (void)state;
    model_arch m;
    tp_err err;
    if (model_load(SHARED_MIXTRAL, &m, &err)) fail_msg("%s", err.msg);
    assert_int_equal(m.experts, 8);
    assert_int_equal(m.experts_per_tok, 2);
    assert_int_equal(m.moe_intermediate, 14336);
    prog_opts o = {.embedding_allreduce = 1, .logits_gather = 1, .input_copies = 8,
                   .sampling_kernels = 6};
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, 2, 1, 1, &err), 0);
    /* batch 1: 2 experts; activations: 2 routed rows of x (4096) in and 2*7168 out, 2 B each */
    mtu_assert_near(p.experts_touched, 2.0);
    mtu_assert_near(mtu_find_op(&p, OPN_MOE_W13, 0)->bytes,
                    2 * 117440512.0 + 2 * (4096 + 14336) * 2.0);
    mtu_assert_near(mtu_find_op(&p, OPN_MOE_W13, 0)->flops, 2.0 * 2 * 4096 * 14336);
    mtu_assert_near(mtu_find_op(&p, OPN_MOE_W2, 31)->bytes,
                    2 * 58720256.0 + 2 * (7168 + 4096) * 2.0);
    /* the router is replicated (not sharded): 4096 x 8 */
    mtu_assert_near(mtu_find_op(&p, OPN_ROUTER, 0)->bytes, 4096.0 * 8 * 2 + (4096.0 + 8) * 2);
    /* launches per MoE layer at TP-2: norm qkv rope cache attention o ar_copy ar norm router
     * topk align w13 silu w2 sum ar_copy ar = 18; plus 8 copies, embedding, its ar_copy + ar,
     * final norm, lm_head, gather, 6 sampler kernels, token copy = 21 */
    assert_int_equal(p.n, 32 * 18 + 21);
    assert_int_equal(p.n_allreduce, 32 * 2 + 1);
    assert_int_equal(count_ops(&p, OPN_GATE_UP, 0), 0);
    prog_free(&p);
    assert_int_equal(prog_build(&p, &m, &o, 2, 4, 1, &err), 0);
    mtu_assert_near(p.experts_touched, 5.46875);
    mtu_assert_near(mtu_find_op(&p, OPN_MOE_W13, 5)->bytes,
                5.46875 * 117440512.0 + 8 * (4096 + 14336) * 2.0);
    prog_free(&p);
    /* weights held at TP-1: per layer qkv 4096*(4096+2*1024) + o 4096*4096 + router 4096*8
     * + 8 experts * 3 * 4096*14336 = 1451261952 params; 32 layers, plus embedding and lm_head
     * 2 * 32000*4096; at 2 B: 93405052928 B (Mixtral's 46.7B parameters) */
    assert_int_equal(prog_build(&p, &m, &o, 1, 1, 1, &err), 0);
    mtu_assert_near(p.weight_bytes, 2.0 * (32.0 * 1451261952 + 2.0 * 32000 * 4096));
    prog_free(&p);
    /* the experts' intermediate must split: 14336 / 3 does not */
    assert_int_equal(prog_build(&p, &m, &o, 3, 1, 1, &err), -1);
}

/* Qwen2-MoE layout (Qwen1.5-MoE-A2.7B's config.json): 60 experts of 1408, top-4, and a
 * shared expert of 5632 behind a sigmoid gate. One MoE layer at TP-2 launches 18 + the
 * shared expert's gate_up silu down, its gate GEMM, sigmoid, mul, and the final add = 25. */
static const char qwen_moe[] =
    "{\n  \"architectures\": [\"Qwen2MoeForCausalLM\"],\n  \"hidden_size\": 2048,\n"
    "  \"intermediate_size\": 5632,\n  \"moe_intermediate_size\": 1408,\n"
    "  \"shared_expert_intermediate_size\": 5632,\n  \"num_experts\": 60,\n"
    "  \"num_experts_per_tok\": 4,\n  \"decoder_sparse_step\": 1,\n  \"mlp_only_layers\": [],\n"
    "  \"num_attention_heads\": 16,\n  \"num_key_value_heads\": 16,\n"
    "  \"num_hidden_layers\": 24,\n  \"vocab_size\": 151936,\n  \"torch_dtype\": \"bfloat16\",\n"
    "  \"tie_word_embeddings\": false,\n  \"use_sliding_window\": false\n}\n";

static void test_moe_qwen_shared_expert(void **state)
{
    (void)state;
    char path[256];
    model_arch m;
    tp_err err;
    mtu_write_json(path, sizeof path, "models", "Qwen1.5-MoE-A2.7B", qwen_moe);
    if (model_load(path, &m, &err)) fail_msg("%s", err.msg);
    unlink(path);
    assert_int_equal(m.experts, 60);
    assert_int_equal(m.shared_intermediate, 5632);
    assert_int_equal(m.shared_gate, 1);
    assert_int_equal(m.qkv_bias, 1);
    prog_opts o = {.input_copies = 0};
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, 2, 1, 1, &err), 0);
    size_t in_layer = 0;
    for (size_t i = 0; i < p.n; i++) in_layer += p.ops[i].layer == 7;
    assert_int_equal(in_layer, 25);
    /* batch 1: 4 experts of 2048 x 2*704 (w13) at 2 B; the shared expert is a dense MLP of
     * 5632/2 = 2816 per rank: gate_up 2048 x 5632 */
    mtu_assert_near(mtu_find_op(&p, OPN_MOE_W13, 7)->bytes,
                4 * 2048.0 * 1408 * 2 + 4 * (2048 + 1408) * 2.0);
    mtu_assert_near(mtu_find_op(&p, OPN_SHARED_GATE_UP, 7)->bytes,
                    2048.0 * 5632 * 2 + (2048 + 5632) * 2.0);
    prog_free(&p);
}

/* DeepSeek-V3 (its config.json): MLA with kv_lora_rank 512, q_lora_rank 1536, qk dims
 * 128 + 64, v 128; 256 routed experts of 2048, top-8, one shared expert of 2048, the first 3
 * of 61 layers dense (18432), routed_scaling_factor 2.5, FP8 weights. */
static void test_mla_deepseek_v3(void **state)
{
    (void)state;
    model_arch m;
    tp_err err;
    if (model_load(SHARED_DSV3, &m, &err)) fail_msg("%s", err.msg);
    assert_int_equal(m.kv_lora_rank, 512);
    assert_int_equal(m.q_lora_rank, 1536);
    assert_int_equal(m.qk_nope_dim + m.qk_rope_dim, 192);
    assert_int_equal(m.v_head_dim, 128);
    assert_int_equal(m.head_dim, 576); /* vLLM's MLA head size: 512 + 64 */
    assert_int_equal(m.experts, 256);
    assert_int_equal(m.experts_per_tok, 8);
    assert_int_equal(m.moe_intermediate, 2048);
    assert_int_equal(m.shared_intermediate, 2048);
    assert_int_equal(m.dense_layers, 3);
    assert_int_equal(m.intermediate, 18432);
    assert_int_equal(m.routed_scale, 1);
    assert_int_equal(m.weights_quant, PREC_FP8);
    assert_int_equal(model_kv_heads_per_rank(&m, 8), 1); /* the latent cache, whole on every rank */
    prog_opts o = {.prec_kv_cache = PREC_BF16, .allreduce_no_copy = 1}; /* NCCL: no copy-in */
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, 8, 1, 1000, &err), 0);
    /* KV cache per rank: 61 layers * 1000 tokens * 576 latent values * 2 B */
    mtu_assert_near(p.kv_bytes, 61.0 * 1000 * 576 * 2);
    /* 128/8 = 16 heads a rank; q into the latent: W_UK 16 x 128 x 512 at 2 B, q 128 in,
     * 512 out per head */
    mtu_assert_near(mtu_find_op(&p, OPN_MLA_Q_ABSORB, 5)->bytes,
                2.0 * 16 * 128 * 512 + 2.0 * 16 * (128 + 512));
    /* attention reads 1000 x 576 latent values, q (576) in and the latent output (512) out */
    mtu_assert_near(mtu_find_op(&p, OPN_ATTENTION, 5)->bytes,
                    2.0 * 1000 * 576 + 2.0 * 16 * (576 + 512));
    /* fused_qkv_a_proj is replicated: 7168 x (1536 + 512 + 64) in FP8 + one scale */
    mtu_assert_near(mtu_find_op(&p, OPN_QKV_A_PROJ, 5)->bytes,
                    7168.0 * 2112 + 4 + (7168.0 + 2112) * 2);
    /* launches at TP-8 without W8A8: MLA 11 (norm qkv_a q_a_norm q_b kv_a_norm rope absorb
     * cache attention v_up o), all-reduce, norm; a dense layer's MLP 3, a MoE layer's shared
     * expert 3 + router topk align w13 silu w2 sum scale add 9; all-reduce */
    size_t dense = 0, moe = 0;
    for (size_t i = 0; i < p.n; i++) {
        dense += p.ops[i].layer == 1;
        moe += p.ops[i].layer == 40;
    }
    assert_int_equal(dense, 11 + 2 + 3 + 1);
    assert_int_equal(moe, 11 + 2 + 3 + 9 + 1);
    assert_int_equal(count_ops(&p, OPN_MOE_W13, 2), 0);
    assert_int_equal(count_ops(&p, OPN_MOE_W13, 3), 1);
    prog_free(&p);
    assert_int_equal(prog_build(&p, &m, &o, 3, 1, 1000, &err), -1); /* 128 heads / 3 */
}

/* The MoE w2 GEMM at batch > 1 reads the experts the tokens touch, not one per routed row:
 * Mixtral at TP-2 batch 4 routes 4 x 2 = 8 rows over 8 * (1 - (1 - 2/8)^4) = 5.46875 experts
 * (uniform routing); w2 per expert 7168 x 4096 x 2 B = 58720256 B; activations 8 rows of
 * 7168 in and 4096 out, 2 B each. At batch 8: 8 * (1 - 0.75^8) = 7.19848... experts. */
static void test_moe_bytes_batch(void **state)
{
    (void)state;
    model_arch m;
    tp_err err;
    if (model_load("models/hf/Mixtral-8x7B-v0.1.json", &m, &err)) fail_msg("%s", err.msg);
    prog_opts o = {.input_copies = 0};
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, 2, 4, 1, &err), 0);
    mtu_assert_near(mtu_find_op(&p, OPN_MOE_W2, 3)->bytes,
                    5.46875 * 58720256.0 + 8 * (7168 + 4096) * 2.0);
    mtu_assert_near(mtu_find_op(&p, OPN_MOE_W2, 3)->flops, 2.0 * 8 * 7168 * 4096);
    prog_free(&p);
    double touched8 = 8.0 * (1.0 - 0.75 * 0.75 * 0.75 * 0.75 * 0.75 * 0.75 * 0.75 * 0.75);
    assert_int_equal(prog_build(&p, &m, &o, 2, 8, 1, &err), 0);
    mtu_assert_near(p.experts_touched, touched8);
    mtu_assert_near(mtu_find_op(&p, OPN_MOE_W2, 0)->bytes,
                touched8 * 58720256.0 + 16 * (7168 + 4096) * 2.0);
    mtu_assert_near(mtu_find_op(&p, OPN_MOE_W13, 0)->bytes,
                touched8 * 117440512.0 + 16 * (4096 + 14336) * 2.0);
    prog_free(&p);
}

/* DeepSeek's shared experts: n_shared_experts of moe_intermediate_size each run as one dense
 * MLP of n * 2048 (vllm deepseek_v2.py, DeepseekV2MoE). The shipped config has 1; with 3 the
 * shared MLP is 6144 wide: 768 a rank at TP-8, gate_up 7168 x 2*768 in FP8 (1 B) plus its
 * per-tensor scale (4 B), x (7168) in and 2*768 out at 2 B. */
static void test_deepseek_shared_experts(void **state)
{
    (void)state;
    FILE *f = fopen("models/hf/DeepSeek-V3.json", "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *at = strstr(text, "\"n_shared_experts\": 1,");
    assert_non_null(at);
    at[strlen("\"n_shared_experts\": ")] = '3';
    char path[256];
    model_arch m;
    tp_err err;
    mtu_write_json(path, sizeof path, "models", "DeepSeek-V3-3shared", text);
    if (model_load(path, &m, &err)) fail_msg("%s", err.msg);
    unlink(path);
    assert_int_equal(m.moe_intermediate, 2048);
    assert_int_equal(m.shared_intermediate, 3 * 2048);
    prog_opts o = {.prec_kv_cache = PREC_BF16, .allreduce_no_copy = 1};
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, 8, 1, 16, &err), 0);
    mtu_assert_near(mtu_find_op(&p, OPN_SHARED_GATE_UP, 10)->bytes,
                7168.0 * 1536 + 4 + (7168.0 + 1536) * 2);
    mtu_assert_near(mtu_find_op(&p, OPN_SHARED_DOWN, 10)->bytes,
                    768.0 * 7168 + 4 + (768.0 + 7168) * 2);
    prog_free(&p);
}

/* A config.json without num_key_value_heads is multi-head attention: as many KV heads as
 * query heads (transformers' LlamaConfig default). 16 heads of 2048/16 = 128: at TP-2 qkv
 * out is (8 + 2 * 8) * 128 = 3072 columns, and each rank caches 16 / 2 = 8 KV heads. */
static const char mha_model[] =
    "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"hidden_size\": 2048,\n"
    "  \"intermediate_size\": 5504,\n  \"num_attention_heads\": 16,\n"
    "  \"num_hidden_layers\": 2,\n  \"vocab_size\": 32000,\n  \"torch_dtype\": \"bfloat16\"\n}\n";

static void test_hf_default_kv_heads(void **state)
{
    (void)state;
    char path[256];
    model_arch m;
    tp_err err;
    mtu_write_json(path, sizeof path, "models", "mha-2L", mha_model);
    if (model_load(path, &m, &err)) fail_msg("%s", err.msg);
    unlink(path);
    assert_int_equal(m.heads, 16);
    assert_int_equal(m.kv_heads, 16);
    assert_int_equal(model_kv_heads_per_rank(&m, 2), 8);
    prog_opts o = {.input_copies = 0};
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, 2, 1, 100, &err), 0);
    /* weights 2048 x 3072 x 2 B, x and y (2048 + 3072) x 2 B */
    mtu_assert_near(mtu_find_op(&p, OPN_QKV_PROJ, 0)->bytes,
                    2048.0 * 3072 * 2 + (2048.0 + 3072) * 2);
    /* KV cache per rank: 2 (K, V) x 2 layers x 100 tokens x 8 heads x 128 x 2 B */
    mtu_assert_near(p.kv_bytes, 2.0 * 2 * 100 * 8 * 128 * 2);
    prog_free(&p);
}

/* ---- precision -------------------------------------------------------------------------- */

static void test_precision_matrix_bytes(void **state)
{
    (void)state;
    /* [8192 in, 1024 out]: bf16 2 B each; fp8 1 B each + one float32 scale; int4 half a byte
     * each + a 2-B scale per 128 inputs per output column: 8192/128 = 64 groups x 1024 */
    mtu_assert_near(prec_matrix_bytes(PREC_BF16, 2, 8192, 1024), 16777216.0);
    mtu_assert_near(prec_matrix_bytes(PREC_FP8, 2, 8192, 1024), 8388608.0 + 4);
    mtu_assert_near(prec_matrix_bytes(PREC_INT4, 2, 8192, 1024), 4194304.0 + 2.0 * 64 * 1024);
    mtu_assert_near(prec_matrix_bytes(PREC_INT4, 2, 200, 10), 1000.0 + 2.0 * 2 * 10); /* 2 groups */
    mtu_assert_near(prec_matrix_bytes(PREC_MODEL, 4, 10, 10), 400.0);
    assert_int_equal(prec_parse("fp8"), PREC_FP8);
    assert_int_equal(prec_parse("int4"), PREC_INT4);
    assert_int_equal(prec_parse("fp4"), -1);
}

/* Llama-3.1-70B at TP-2: per layer the rank holds qkv 8192 x (32+2*4)*128, o 4096 x 8192,
 * gate_up 8192 x 2*14336, down 14336 x 8192 = 427819008 parameters; embedding and lm_head
 * stay BF16: 2 * 128256/2 * 8192 * 2 B = 2101346304 B. */
static void test_precision_70b(void **state)
{
    (void)state;
    model_arch m;
    tp_err err;
    assert_int_equal(model_load("models/llama-3.1-70b.yaml", &m, &err), 0);
    prog_opts o = {.input_copies = 0};
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, 2, 1, 2048, &err), 0);
    mtu_assert_near(p.weight_bytes, 80 * 427819008.0 * 2 + 2101346304.0);
    /* KV cache read per rank: 80 layers * 2 (K,V) * 2048 * 4 heads * 128 * 2 B */
    mtu_assert_near(p.kv_bytes, 80 * 2.0 * 2048 * 4 * 128 * 2);
    size_t n_bf16 = p.n;
    prog_free(&p);

    /* FP8 weights, weight-only (no FP8 tensor cores): 1 B per parameter + 4 scales a layer */
    o.prec_weights = PREC_FP8;
    assert_int_equal(prog_build(&p, &m, &o, 2, 1, 2048, &err), 0);
    mtu_assert_near(p.weight_bytes, 80 * (427819008.0 + 4 * 4) + 2101346304.0);
    assert_int_equal(p.n, n_bf16);
    for (size_t i = 0; i < p.n; i++) assert_int_equal(p.ops[i].fp8, 0);
    prog_free(&p);

    /* W8A8 (an FP8 GPU): a quantisation kernel before each of the 4 GEMMs of a layer; the
     * GEMMs read x in FP8 and run on the FP8 tensor cores */
    o.w8a8 = 1;
    assert_int_equal(prog_build(&p, &m, &o, 2, 1, 2048, &err), 0);
    assert_int_equal(p.n, n_bf16 + 80 * 4);
    assert_int_equal(mtu_find_op(&p, OPN_QKV_PROJ, 3)->fp8, 1);
    assert_int_equal(mtu_find_op(&p, OPN_LM_HEAD, -1)->fp8, 0);
    /* qkv at batch 1: weights 8192*5120 + scale 4, x 8192 B in FP8, y 5120*2 B */
    mtu_assert_near(mtu_find_op(&p, OPN_QKV_PROJ, 3)->bytes, 8192.0 * 5120 + 4 + 8192 + 5120 * 2);
    /* quantising x: read 8192*2, write 8192*1 + one float32 scale */
    mtu_assert_near(mtu_find_op(&p, OPN_FP8_QUANT, 3)->bytes, 8192.0 * 2 + 8192 + 4);
    prog_free(&p);

    /* int4 group-scaled: qkv 8192*5120/2 + 2*64*5120, o 4096*8192/2 + 2*32*8192,
     * gate_up 8192*28672/2 + 2*64*28672, down 14336*8192/2 + 2*112*8192 = 220594176 B a layer */
    o = (prog_opts){.prec_weights = PREC_INT4};
    assert_int_equal(prog_build(&p, &m, &o, 2, 1, 2048, &err), 0);
    mtu_assert_near(p.weight_bytes, 80 * 220594176.0 + 2101346304.0);
    prog_free(&p);

    /* FP8 KV cache: the cache read halves */
    o = (prog_opts){.prec_kv_cache = PREC_FP8};
    assert_int_equal(prog_build(&p, &m, &o, 2, 1, 2048, &err), 0);
    mtu_assert_near(p.kv_bytes, 80 * 2.0 * 2048 * 4 * 128 * 1);
    /* the new token's K and V: read 2*4*128 values at 2 B, write them at 1 B */
    mtu_assert_near(mtu_find_op(&p, OPN_CACHE_WRITE, 0)->bytes, 2.0 * 4 * 128 * (2 + 1));
    prog_free(&p);
}

/* The FP8 peak applies to ops marked fp8 only: a compute-bound op of 1e12 FLOPs at a BF16
 * peak of 1e15 and an FP8 peak of 2e15 (efficiency 1) takes 1 ms and 0.5 ms. */
static void test_cost_fp8_peak(void **state)
{
    (void)state;
    prog_op ops[2] = {{.kind = PROG_KERNEL, .flops = 1e12},
                      {.kind = PROG_KERNEL, .fp8 = 1, .flops = 1e12}};
    prog p = {.ops = ops, .n = 2, .tp = 1};
    cost_params c = {.hbm_bw = 1e12, .hbm_eff = 1, .peak_flops = 1e15, .flops_eff = 1,
                     .pcie_bw = 1e9, .fp8_peak_flops = 2e15};
    tp_err err;
    assert_int_equal(cost_apply(&p, &c, NULL, &err), 0);
    mtu_assert_near(ops[0].gpu_s, 1e-3);
    mtu_assert_near(ops[1].gpu_s, 0.5e-3);
    c.fp8_peak_flops = 0; /* no FP8 tensor cores: the BF16 peak */
    assert_int_equal(cost_apply(&p, &c, NULL, &err), 0);
    mtu_assert_near(ops[1].gpu_s, 1e-3);
}

/* ---- hardware files against their datasheets ------------------------------------------------ */

typedef struct datasheet {
    const char *file;
    double hbm_gb, hbm_tbps, bf16_dense_tflops, fp8_dense_tflops, pcie_one_way_gbps;
    long sms;
    double reported_mib; /* nvidia-smi's total (docs/sources.md#gpu-memory); 0: bytes below */
    double reported_bytes;
} datasheet;

static void test_hardware_datasheets(void **state)
{
    (void)state;
    const datasheet want[] = {
        /* H100 SXM datasheet: 80 GB HBM3, 3.35 TB/s, BF16 1,979 and FP8 3,958 TFLOPS with
         * sparsity (dense: half), PCIe Gen5 128 GB/s; 132 SMs (docs/sources.md#gpu-datasheets) */
        {"models/hw/h100-sxm.yaml", 80, 3.35, 1979.0 / 2, 3958.0 / 2, 128.0 / 2, 132, 81559, 0},
        /* H200 SXM page: 141 GB HBM3e, 4.8 TB/s, BF16 1,979 / FP8 3,958 with sparsity */
        {"models/hw/h200.yaml", 141, 4.8, 1979.0 / 2, 3958.0 / 2, 128.0 / 2, 132, 143771, 0},
        /* A100 80GB SXM datasheet: 80 GB HBM2e, 2,039 GB/s, BF16 312 (624 sparse), no FP8,
         * PCIe Gen4 64 GB/s; 108 SMs (Ampere whitepaper) */
        {"models/hw/a100-sxm4-80gb.yaml", 80, 2.039, 624.0 / 2, 0, 64.0 / 2, 108, 81920, 0},
        /* HGX B200, per GPU: 180 GB HBM3e, 7.7 TB/s, FP16/BF16 4.5 PFLOPS and FP8 9 PFLOPS
         * with sparsity, PCIe Gen5 128 GB/s; 148 SMs and totalGlobalMem 191,503,138,816 B
         * (numSms and totalGlobalMem in the bundled B200 trace) */
        {"models/hw/b200.yaml", 180, 7.7, 4500.0 / 2, 9000.0 / 2, 128.0 / 2, 148, 0,
         191503138816.0},
        /* L40S datasheet: 48 GB GDDR6, 864 GB/s, BF16 Tensor Core 362.05 dense (733 with
         * sparsity), FP8 1,466 with sparsity, PCIe Gen4 x16 64 GB/s bidirectional; 142 SMs
         * (142 RT cores, one per SM) */
        {"models/hw/l40s.yaml", 48, 0.864, 362.05, 1466.0 / 2, 64.0 / 2, 142, 46068, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        hw_spec h;
        tp_err err;
        if (hw_load(want[i].file, &h, &err)) fail_msg("%s", err.msg);
        /* capacity as the GPU reports it: MiB x 2^20, within 15% above the datasheet's GB */
        double reported = want[i].reported_mib ? want[i].reported_mib * 1048576.0
                                               : want[i].reported_bytes;
        assert_true(h.hbm_bytes == reported);
        assert_int_equal(h.hbm_reported, 1);
        assert_true(h.hbm_bytes > want[i].hbm_gb * 1e9);
        assert_true(h.hbm_bytes < 1.15 * want[i].hbm_gb * 1e9);
        mtu_assert_near(h.hbm_bw, want[i].hbm_tbps * 1e12);
        /* the files round peaks to whole TFLOP/s (H100's 1,979/2 = 989.5 is written 989) */
        assert_true(fabs(h.peak_flops - want[i].bf16_dense_tflops * 1e12) <= 0.5e12);
        assert_true(fabs(h.fp8_peak_flops - want[i].fp8_dense_tflops * 1e12) <= 0.5e12);
        mtu_assert_near(h.pcie_bw, want[i].pcie_one_way_gbps * 1e9);
        assert_int_equal(h.sms, want[i].sms);
    }
}

/* CUDA-graph launch counts per mode, from the architecture: FULL replays the model forward
 * (embedding .. final norm) as one graph; PIECEWISE splits it at each layer's attention op
 * (its KV-cache write and kernel; MLA also its query absorption and value up-projection), so
 * L layers make L + 1 pieces and the attention ops are launched eagerly between them. The
 * eager ops around the graph: 8 input copies, lm_head, the logits gather (tp > 1), 6 sampler
 * kernels, the token copy. The MI300X trace in tests/data (FULL) shows one hipGraphLaunch per
 * decode step. */
static void graph_counts(const char *path, long tp, size_t per_layer_eager)
{
    model_arch m;
    tp_err err;
    if (model_load(path, &m, &err)) fail_msg("%s", err.msg);
    prog_opts o = {.embedding_allreduce = 1, .logits_gather = 1, .input_copies = 8,
                   .sampling_kernels = 6};
    size_t around = 8 + 1 + (tp > 1) + 6 + 1, L = (size_t)m.layers;
    prog p;
    assert_int_equal(prog_build(&p, &m, &o, tp, 4, 1024, &err), 0);
    assert_int_equal(prog_graph_runs(&p), 1);
    assert_int_equal(prog_eager_ops(&p), around);
    prog_free(&p);
    o.piecewise = 1;
    assert_int_equal(prog_build(&p, &m, &o, tp, 4, 1024, &err), 0);
    assert_int_equal(prog_graph_runs(&p), L + 1);
    assert_int_equal(prog_eager_ops(&p), around + per_layer_eager * L);
    prog_free(&p);
}

static void test_graph_mode_launch_counts(void **state)
{
    (void)state;
    graph_counts("models/llama-3.1-70b.yaml", 4, 2);   /* 80 layers: 81 pieces, 160 eager */
    graph_counts("models/llama-3.1-8b.yaml", 1, 2);    /* 32 layers, no gather at tp 1 */
    graph_counts("models/hf/DeepSeek-V3.json", 8, 4);  /* MLA: 61 layers, 4 eager each */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hf_llama_70b),
        cmocka_unit_test(test_graph_mode_launch_counts),
        cmocka_unit_test(test_hf_default_dtype),
        cmocka_unit_test(test_hf_qwen2_bias_and_gqa),
        cmocka_unit_test(test_hf_gqa_replication_and_vocab_padding),
        cmocka_unit_test(test_hf_mistral_sliding_window),
        cmocka_unit_test(test_hf_refusals),
        cmocka_unit_test(test_moe_mixtral_bytes),
        cmocka_unit_test(test_moe_qwen_shared_expert),
        cmocka_unit_test(test_mla_deepseek_v3),
        cmocka_unit_test(test_moe_bytes_batch),
        cmocka_unit_test(test_deepseek_shared_experts),
        cmocka_unit_test(test_hf_default_kv_heads),
        cmocka_unit_test(test_precision_matrix_bytes),
        cmocka_unit_test(test_precision_70b),
        cmocka_unit_test(test_cost_fp8_peak),
        cmocka_unit_test(test_hardware_datasheets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
