/* hfconfig.c: see hfconfig.h. Field names and defaults follow transformers' config classes
 * and vLLM's reading of them (vllm/config/model.py, docs/sources.md#hf-config-fields). */
#include "hfconfig.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prec.h"
#include "rfile.h"

typedef struct hf_file {
    const char *path;
    const char *text;
    size_t len;
    json_t *root;
} hf_file;

enum hf_arch {
    HF_LLAMA, HF_MISTRAL, HF_QWEN2, HF_MIXTRAL, HF_QWEN2_MOE, HF_DEEPSEEK_V2, HF_DEEPSEEK_V3,
    HF_N_ARCH
};
static const char *const hf_arch_names[HF_N_ARCH] = {
    "LlamaForCausalLM",    "MistralForCausalLM",     "Qwen2ForCausalLM",      "MixtralForCausalLM",
    "Qwen2MoeForCausalLM", "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM"};

/* Where a top-level key is written ("key" followed by ':' at depth 1), 1-based; 1:1 when
 * it is not in the file (a missing key is reported at the start). */
static void hf_key_pos(const hf_file *f, const char *key, int *line, int *col)
{
    size_t klen = strlen(key), line_start = 0;
    int depth = 0, ln = 1;
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < f->len; i++) {
        char c = f->text[i];
        if (c == '\n') {
            ln++;
            line_start = i + 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == '"') {
            size_t start = i++;
            while (i < f->len && f->text[i] != '"') i += f->text[i] == '\\' ? 2 : 1;
            if (depth != 1 || i - start - 1 != klen || memcmp(f->text + start + 1, key, klen))
                continue;
            size_t j = i + 1;
            while (j < f->len && strchr(" \t\r\n", f->text[j])) j++;
            if (j < f->len && f->text[j] == ':') {
                *line = ln;
                *col = (int)(start - line_start) + 1;
                return;
            }
        }
    }
}

static int hf_error(const hf_file *f, const char *key, tp_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int hf_error(const hf_file *f, const char *key, tp_err *err, const char *fmt, ...)
{
    char body[TP_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    int line, col;
    hf_key_pos(f, key, &line, &col);
    return tp_err_at(err, f->path, line, col, "%s: %s", key, body);
}

/* An integer field; absent: -1 (and an error when required). */
static int hf_long(const hf_file *f, const char *key, int required, long lo, long hi,
                   long *out, tp_err *err)
{
    json_t *v = json_object_get(f->root, key);
    if (!v || json_is_null(v)) {
        if (required) return hf_error(f, key, err, "missing, expected an integer in %ld..%ld", lo, hi);
        *out = -1;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return hf_error(f, key, err, "expected an integer in %ld..%ld", lo, hi);
    *out = (long)json_integer_value(v);
    return 0;
}

static int hf_bool(const hf_file *f, const char *key, int *out, tp_err *err)
{
    json_t *v = json_object_get(f->root, key);
    if (!v) return 0; /* the config class's default stays */
    if (!json_is_boolean(v)) return hf_error(f, key, err, "expected true or false");
    *out = json_is_true(v);
    return 0;
}

/* The first of several spellings present (vLLM's order), or NULL. */
static const char *hf_first_key(const hf_file *f, const char *const *keys)
{
    for (int i = 0; keys[i]; i++)
        if (json_object_get(f->root, keys[i]) && !json_is_null(json_object_get(f->root, keys[i])))
            return keys[i];
    return NULL;
}

static int hf_read(const char *path, hf_file *f, tp_err *err)
{
    char *buf;
    size_t n;
    if (rfile_read(path, HFCONFIG_MAX_BYTES, "a config.json", &buf, &n, err)) return -1;
    f->path = path;
    f->text = buf;
    f->len = n;
    return 0;
}

/* The model's name; one longer than the field is refused, not cut (as the YAML files' are). */
static int hf_name(const hf_file *f, char *out, size_t cap, tp_err *err)
{
    json_t *v = json_object_get(f->root, "_name_or_path");
    if (json_is_string(v) && json_string_length(v) > 0) {
        if (json_string_length(v) >= cap)
            return hf_error(f, "_name_or_path", err, "%zu bytes, expected at most %zu",
                            json_string_length(v), cap - 1);
        snprintf(out, cap, "%s", json_string_value(v));
        return 0;
    }
    const char *slash = strrchr(f->path, '/'), *base = slash ? slash + 1 : f->path;
    size_t n = strlen(base) - strlen(".json");
    const char *suffixes[] = {"_config", "-config", "config"};
    for (int i = 0; i < 3; i++) {
        size_t k = strlen(suffixes[i]);
        if (n >= k && !strncmp(base + n - k, suffixes[i], k)) {
            n -= k;
            break;
        }
    }
    if (n == 0 && slash) { /* ".../NAME/config.json": the folder names it */
        const char *dir = slash;
        while (dir > f->path && dir[-1] != '/') dir--;
        base = dir;
        n = (size_t)(slash - dir);
    }
    if (n >= cap)
        return tp_err_at(err, f->path, 1, 1, "the model's name from the file name is %zu bytes, "
                         "expected at most %zu: rename the file or set _name_or_path", n, cap - 1);
    snprintf(out, cap, "%.*s", (int)n, base);
    if (!out[0]) snprintf(out, cap, "config");
    return 0;
}

static int hf_arch(const hf_file *f, int *arch, tp_err *err)
{
    json_t *a = json_object_get(f->root, "architectures");
    if (!json_is_array(a) || json_array_size(a) < 1 || !json_is_string(json_array_get(a, 0)))
        return hf_error(f, "architectures", err, "%s, expected a list naming the model class",
                        a ? "not a list of strings" : "missing");
    const char *name = json_string_value(json_array_get(a, 0));
    for (int i = 0; i < HF_N_ARCH; i++)
        if (!strcmp(name, hf_arch_names[i])) {
            *arch = i;
            return 0;
        }
    char list[256] = "";
    for (int i = 0; i < HF_N_ARCH; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 hf_arch_names[i]);
    return hf_error(f, "architectures", err, "'%.80s' is not supported, expected one of %s", name,
                    list);
}

static int hf_dtype(const hf_file *f, long *bytes, tp_err *err)
{
    static const char *const keys[] = {"torch_dtype", "dtype", NULL};
    const char *key = hf_first_key(f, keys);
    if (!key) { /* transformers' PretrainedConfig has torch_dtype None: it loads float32 */
        *bytes = 4;
        return 0;
    }
    json_t *v = json_object_get(f->root, key);
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    if (!strcmp(s, "bfloat16") || !strcmp(s, "float16"))
        *bytes = 2;
    else if (!strcmp(s, "float32"))
        *bytes = 4;
    else
        return hf_error(f, key, err, "expected bfloat16, float16 or float32");
    return 0;
}

/* The published weights' format: fp8 checkpoints, or 4-bit GPTQ/AWQ with group size 128. */
static int hf_quant(const hf_file *f, int *quant, tp_err *err)
{
    json_t *q = json_object_get(f->root, "quantization_config");
    if (!q || json_is_null(q)) return 0;
    json_t *method = json_object_get(q, "quant_method");
    const char *m = json_is_string(method) ? json_string_value(method) : "";
    if (!strcmp(m, "fp8")) {
        *quant = PREC_FP8;
        return 0;
    }
    json_t *bits = json_object_get(q, "bits"), *group = json_object_get(q, "group_size");
    if ((!strcmp(m, "gptq") || !strcmp(m, "awq")) && json_is_integer(bits) &&
        json_integer_value(bits) == 4 && json_is_integer(group) &&
        json_integer_value(group) == PREC_INT4_GROUP) {
        *quant = PREC_INT4;
        return 0;
    }
    return hf_error(f, "quantization_config", err,
                    "quant_method '%.40s' is not modelled, expected fp8, or gptq/awq with bits 4 "
                    "and group_size %d (or drop it and set precision.weights in the scenario)",
                    m, PREC_INT4_GROUP);
}

static int hf_moe(const hf_file *f, int arch, model_arch *m, tp_err *err)
{
    if (arch == HF_MIXTRAL) {
        /* Mixtral: every layer's MLP is num_local_experts experts of intermediate_size */
        m->moe_intermediate = m->intermediate;
        return hf_long(f, "num_local_experts", 1, 2, 4096, &m->experts, err) ||
               hf_long(f, "num_experts_per_tok", 1, 1, m->experts, &m->experts_per_tok, err);
    }
    long step = 1, shared = -1;
    json_t *mlp_only = json_object_get(f->root, "mlp_only_layers");
    if (hf_long(f, "num_experts", 1, 2, 4096, &m->experts, err) ||
        hf_long(f, "num_experts_per_tok", 1, 1, m->experts, &m->experts_per_tok, err) ||
        hf_long(f, "moe_intermediate_size", 1, 1, 1L << 22, &m->moe_intermediate, err) ||
        hf_long(f, "shared_expert_intermediate_size", 0, 0, 1L << 22, &shared, err) ||
        hf_long(f, "decoder_sparse_step", 0, 1, 1000, &step, err))
        return -1;
    if (step > 1)
        return hf_error(f, "decoder_sparse_step", err,
                        "%ld (dense layers between MoE layers) is not modelled, expected 1", step);
    if (mlp_only && (!json_is_array(mlp_only) || json_array_size(mlp_only) > 0))
        return hf_error(f, "mlp_only_layers", err,
                        "dense layers among MoE layers are not modelled, expected []");
    m->shared_intermediate = shared > 0 ? shared : 0;
    m->shared_gate = m->shared_intermediate > 0; /* Qwen2MoeSparseMoeBlock.shared_expert_gate */
    return 0;
}

/* DeepSeek-V2/V3: MLA attention, n_routed_experts behind first_k_dense_replace dense layers,
 * n_shared_experts of moe_intermediate_size each (vllm deepseek_v2.py). */
static int hf_deepseek(const hf_file *f, model_arch *m, tp_err *err)
{
    long shared = 0, freq = 1, q_lora = -1;
    if (hf_long(f, "kv_lora_rank", 1, 1, 1L << 16, &m->kv_lora_rank, err) ||
        hf_long(f, "q_lora_rank", 0, 1, 1L << 16, &q_lora, err) ||
        hf_long(f, "qk_nope_head_dim", 1, 1, 4096, &m->qk_nope_dim, err) ||
        hf_long(f, "qk_rope_head_dim", 1, 1, 4096, &m->qk_rope_dim, err) ||
        hf_long(f, "v_head_dim", 1, 1, 4096, &m->v_head_dim, err) ||
        hf_long(f, "n_routed_experts", 1, 2, 4096, &m->experts, err) ||
        hf_long(f, "num_experts_per_tok", 1, 1, m->experts, &m->experts_per_tok, err) ||
        hf_long(f, "moe_intermediate_size", 1, 1, 1L << 22, &m->moe_intermediate, err) ||
        hf_long(f, "n_shared_experts", 0, 0, 64, &shared, err) ||
        hf_long(f, "first_k_dense_replace", 0, 0, m->layers, &m->dense_layers, err) ||
        hf_long(f, "moe_layer_freq", 0, 1, 1000, &freq, err))
        return -1;
    if (freq > 1)
        return hf_error(f, "moe_layer_freq", err,
                        "%ld (dense layers between MoE layers) is not modelled, expected 1", freq);
    json_t *scale = json_object_get(f->root, "routed_scaling_factor");
    if (scale && !json_is_null(scale) && !json_is_number(scale))
        return hf_error(f, "routed_scaling_factor", err, "expected a number");
    m->routed_scale = scale && json_is_number(scale) && json_number_value(scale) != 1.0;
    m->q_lora_rank = q_lora > 0 ? q_lora : 0;
    m->dense_layers = m->dense_layers > 0 ? m->dense_layers : 0;
    m->shared_intermediate = shared > 0 ? shared * m->moe_intermediate : 0;
    /* vLLM's MLA head size: kv_lora_rank + qk_rope_head_dim (docs/sources.md#hf-config-fields) */
    m->head_dim = m->kv_lora_rank + m->qk_rope_dim;
    return 0;
}

static int hf_bind(const hf_file *f, model_arch *out, tp_err *err)
{
    model_arch m = {0};
    int arch = 0;
    long head_dim = -1, window = -1;
    static const char *const kv_keys[] = {"n_head_kv", "num_kv_heads", "num_key_value_heads",
                                          "multi_query_group_num", NULL};
    const char *kv_key;
    if (hf_arch(f, &arch, err) || hf_long(f, "num_hidden_layers", 1, 1, 1000, &m.layers, err) ||
        hf_long(f, "hidden_size", 1, 1, 1L << 20, &m.hidden, err) ||
        hf_long(f, "num_attention_heads", 1, 1, 4096, &m.heads, err) ||
        hf_long(f, "intermediate_size", arch != HF_QWEN2_MOE, 1, 1L << 22, &m.intermediate, err) ||
        hf_long(f, "vocab_size", 1, 1, 1L << 24, &m.vocab, err) ||
        hf_long(f, "head_dim", 0, 1, 4096, &head_dim, err) || hf_dtype(f, &m.dtype_bytes, err) ||
        hf_bool(f, "tie_word_embeddings", &m.tied_embeddings, err) ||
        hf_quant(f, &m.weights_quant, err))
        return -1;
    /* total KV heads: the first spelling present, else one per attention head (MHA) */
    kv_key = hf_first_key(f, kv_keys);
    m.kv_heads = m.heads;
    if (kv_key && hf_long(f, kv_key, 1, 1, m.heads, &m.kv_heads, err)) return -1;
    if (m.heads % m.kv_heads)
        return hf_error(f, kv_key, err, "%ld does not divide num_attention_heads (%ld)",
                        m.kv_heads, m.heads);
    if (head_dim > 0) {
        m.head_dim = head_dim;
    } else if (m.hidden % m.heads) {
        return hf_error(f, "hidden_size", err, "%ld does not divide by num_attention_heads (%ld) "
                        "and head_dim is not given, expected head_dim", m.hidden, m.heads);
    } else {
        m.head_dim = m.hidden / m.heads;
    }
    if (arch == HF_QWEN2 || arch == HF_QWEN2_MOE) {
        m.qkv_bias = 1; /* Qwen2's q/k/v projections carry a bias (vLLM qwen2.py: bias=True) */
        int use_window = 0;
        if (hf_bool(f, "use_sliding_window", &use_window, err)) return -1;
        if (use_window && hf_long(f, "sliding_window", 1, 1, 1L << 24, &window, err)) return -1;
    } else {
        int attn_bias = 0;
        if (hf_bool(f, "attention_bias", &attn_bias, err) ||
            hf_bool(f, "mlp_bias", &m.mlp_bias, err) ||
            hf_long(f, "sliding_window", 0, 1, 1L << 24, &window, err))
            return -1;
        m.qkv_bias = m.o_bias = attn_bias; /* LlamaAttention: bias on q, k, v and o */
    }
    m.sliding_window = window > 0 ? window : 0;
    if ((arch == HF_MIXTRAL || arch == HF_QWEN2_MOE) && hf_moe(f, arch, &m, err)) return -1;
    if ((arch == HF_DEEPSEEK_V2 || arch == HF_DEEPSEEK_V3) && hf_deepseek(f, &m, err)) return -1;
    if (arch == HF_QWEN2_MOE && m.intermediate < 0) m.intermediate = m.moe_intermediate;
    if (hf_name(f, m.name, sizeof m.name, err)) return -1;
    *out = m;
    return 0;
}

int hfconfig_load(const char *path, model_arch *out, tp_err *err)
{
    hf_file f = {0};
    if (hf_read(path, &f, err)) return -1;
    json_error_t je;
    f.root = json_loadb(f.text, f.len, JSON_REJECT_DUPLICATES, &je);
    int rc = -1;
    if (!f.root) {
        tp_err_at(err, path, je.line > 0 ? je.line : 1, je.column > 0 ? je.column : 1,
                  "%s, expected a JSON config.json", je.text);
    } else if (!json_is_object(f.root)) {
        tp_err_at(err, path, 1, 1, "expected a JSON object (a config.json)");
    } else {
        rc = hf_bind(&f, out, err);
    }
    json_decref(f.root);
    free((void *)f.text);
    return rc;
}
