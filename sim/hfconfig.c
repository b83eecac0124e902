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
    HF_QWEN3, HF_QWEN3_MOE, HF_GEMMA2, HF_GEMMA3, HF_PHI3, HF_N_ARCH
};
static const char *const hf_arch_names[HF_N_ARCH] = {
    "LlamaForCausalLM",    "MistralForCausalLM",     "Qwen2ForCausalLM",      "MixtralForCausalLM",
    "Qwen2MoeForCausalLM", "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM", "Gemma2ForCausalLM",     "Gemma3ForCausalLM",     "Phi3ForCausalLM"};
/* The model_type transformers writes beside each class (its config class's model_type). */
static const char *const hf_model_types[HF_N_ARCH] = {
    "llama", "mistral", "qwen2", "mixtral", "qwen2_moe", "deepseek_v2", "deepseek_v3",
    "qwen3", "qwen3_moe", "gemma2", "gemma3_text", "phi3"};

/* The classes issue 18 added, read by hf_family (the others by hf_classic). */
static int hf_new_class(int arch)
{
    return arch == HF_QWEN3 || arch == HF_QWEN3_MOE || arch == HF_GEMMA2 || arch == HF_GEMMA3 ||
           arch == HF_PHI3;
}

/* The classes whose every key is accounted for (hf_check_keys): the decode step tpsim builds
 * for them uses the key, or the key provably does not change that step. Not DeepSeek's: its
 * shipped config carries grouped top-k routing (n_group, topk_group), which tpsim prices as
 * topk_softmax, and the multi-token-prediction layer, which a plain decode step does not run. */
static int hf_strict(int arch) { return arch != HF_DEEPSEEK_V2 && arch != HF_DEEPSEEK_V3; }

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
        if (required)
            return hf_error(f, key, err, "missing, expected an integer in %ld..%ld", lo, hi);
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
    char list[512] = "";
    for (int i = 0; i < HF_N_ARCH; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 hf_arch_names[i]);
    return hf_error(f, "architectures", err, "'%.80s' is not supported, expected one of %s", name,
                    list);
}

/* model_type, when present, must be one tpsim knows and the one its class writes. */
static int hf_model_type(const hf_file *f, int arch, tp_err *err)
{
    json_t *v = json_object_get(f->root, "model_type");
    if (!v) return 0;
    const char *t = json_is_string(v) ? json_string_value(v) : "";
    for (int i = 0; i < HF_N_ARCH; i++)
        if (!strcmp(t, hf_model_types[i])) {
            if (i == arch) return 0;
            return hf_error(f, "model_type", err, "'%s' is %s's, but architectures names %s; "
                            "expected '%s'", t, hf_arch_names[i], hf_arch_names[arch],
                            hf_model_types[arch]);
        }
    char list[256] = "";
    for (int i = 0; i < HF_N_ARCH; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 hf_model_types[i]);
    return hf_error(f, "model_type", err, "'%.60s' is not known, expected one of %s", t, list);
}

/* Keys that provably do not change the decode step tpsim builds (docs/sources.md#hf-config-
 * fields): dropout (off at inference); token ids; training-only settings (initialisation,
 * the router's auxiliary loss); transformers' and generate()'s bookkeeping; constants inside
 * kernels the step launches anyway (the norm's epsilon, the rotary base, the attention's
 * scale); the top-level original_max_position_embeddings (read by longrope only, which is
 * refused; max_position_embeddings is read: hf_max_positions); norm_topk_prob, a flag of vLLM's
 * fused top-k kernel (renormalize); sliding_window_size, read by neither transformers'
 * Gemma2Config nor vLLM (they read sliding_window); pretraining_tp, which vLLM does not read
 * (transformers only splits the same matmuls by it); router_jitter_noise, training noise. */
static const char *const hf_inert_keys[] = {
    "attention_dropout", "embd_pdrop", "resid_pdrop", "bos_token_id", "eos_token_id",
    "pad_token_id", "initializer_range", "router_aux_loss_coef", "output_router_logits",
    "transformers_version", "use_cache", "cache_implementation", "auto_map", "rms_norm_eps",
    "rope_theta", "query_pre_attn_scalar", "original_max_position_embeddings", "norm_topk_prob",
    "sliding_window_size", "pretraining_tp", "router_jitter_noise", "rope_local_base_freq", NULL};
/* Keys tpsim reads for every strict architecture, then each one's own. max_window_layers
 * matters only with use_sliding_window, which is refused for Qwen3. */
static const char *const hf_read_keys[] = {
    "architectures", "model_type", "_name_or_path", "num_hidden_layers", "hidden_size",
    "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size",
    "torch_dtype", "dtype", "tie_word_embeddings", "quantization_config", "hidden_act",
    "attention_bias", "sliding_window", "layer_types", "rope_scaling", "max_position_embeddings",
    NULL};
static const char *const hf_qwen3_keys[] = {"use_sliding_window", "max_window_layers", NULL};
static const char *const hf_qwen3_moe_keys[] = {
    "use_sliding_window", "max_window_layers", "num_experts", "num_experts_per_tok",
    "moe_intermediate_size", "decoder_sparse_step", "mlp_only_layers", NULL};
static const char *const hf_gemma3_keys[] = {"attn_logit_softcapping", "final_logit_softcapping",
                                             "hidden_activation", "sliding_window_pattern", NULL};
static const char *const hf_llama_keys[] = {"mlp_bias", NULL};
static const char *const hf_qwen2_keys[] = {"use_sliding_window", "max_window_layers", "use_mrope",
                                            NULL};
static const char *const hf_mixtral_keys[] = {"num_local_experts", "num_experts_per_tok", NULL};
static const char *const hf_qwen2_moe_keys[] = {
    "use_sliding_window", "max_window_layers", "num_experts", "num_experts_per_tok",
    "moe_intermediate_size", "shared_expert_intermediate_size", "decoder_sparse_step",
    "mlp_only_layers", NULL};
static const char *const hf_gemma2_keys[] = {"attn_logit_softcapping", "final_logit_softcapping",
                                             "hidden_activation", NULL};

static int hf_in(const char *key, const char *const *list)
{
    for (int i = 0; list && list[i]; i++)
        if (!strcmp(key, list[i])) return 1;
    return 0;
}

/* A strict architecture's config: every key read, or known not to change the step. */
/* rope_scaling types whose vLLM class only changes the cos/sin table it precomputes, so the
 * step launches the same rotary kernel (vllm/model_executor/layers/rotary_embedding: linear,
 * dynamic NTK, Llama 3, YaRN); others (longrope, mrope...) run other kernels. */
static int hf_rope_scaling(const hf_file *f, int arch, tp_err *err)
{
    static const char *const same_kernel[] = {"default", "linear", "dynamic", "llama3", "yarn",
                                              NULL};
    json_t *rs = json_object_get(f->root, "rope_scaling");
    if (!rs || json_is_null(rs)) return 0;
    json_t *t = json_is_object(rs) ? json_object_get(rs, "rope_type") : NULL;
    if (!t && json_is_object(rs)) t = json_object_get(rs, "type");
    if (json_is_string(t) && hf_in(json_string_value(t), same_kernel)) return 0;
    return hf_error(f, "rope_scaling", err, "rope type '%.40s' is not modelled for %s (vLLM runs "
                    "other kernels for it), expected null or one of default, linear, dynamic, "
                    "llama3, yarn", json_is_string(t) ? json_string_value(t) : "?",
                    hf_arch_names[arch]);
}

/* A strict class's config: every key read, or known not to change the step. A key with a
 * leading '_' is transformers' own bookkeeping (PretrainedConfig keeps _attn_implementation,
 * _commit_hash and the like under that prefix; a saved config sometimes carries one): vLLM
 * reads none of them, so it is accepted and m->note says so, once, for the caller to show. */
static int hf_check_keys(const hf_file *f, int arch, model_arch *m, tp_err *err)
{
    const char *const *own = arch == HF_QWEN3       ? hf_qwen3_keys
                             : arch == HF_QWEN3_MOE ? hf_qwen3_moe_keys
                             : arch == HF_GEMMA2    ? hf_gemma2_keys
                             : arch == HF_GEMMA3    ? hf_gemma3_keys
                             : arch == HF_LLAMA     ? hf_llama_keys
                             : arch == HF_QWEN2     ? hf_qwen2_keys
                             : arch == HF_MIXTRAL   ? hf_mixtral_keys
                             : arch == HF_QWEN2_MOE ? hf_qwen2_moe_keys
                                                    : NULL;
    const char *key;
    json_t *v;
    int n_private = 0;
    json_object_foreach(f->root, key, v) {
        (void)v;
        if (hf_in(key, hf_read_keys) || hf_in(key, own) || hf_in(key, hf_inert_keys)) continue;
        if (key[0] == '_') { /* transformers' own setting: noted, not refused */
            if (n_private++ == 0) {
                int line, col;
                hf_key_pos(f, key, &line, &col);
                snprintf(m->note, sizeof m->note, "%s:%d:%d: %.60s: ignored: a transformers-"
                         "internal setting (leading '_') that vLLM does not read; the decode "
                         "step is the same", f->path, line, col, key);
            }
            continue;
        }
        return hf_error(f, key, err, "not modelled for %s (it may change the decode step), "
                        "expected it absent", hf_arch_names[arch]);
    }
    if (n_private > 1) {
        size_t len = strlen(m->note);
        snprintf(m->note + len, sizeof m->note - len, " (and %d more such keys)", n_private - 1);
    }
    json_t *mrope = json_object_get(f->root, "use_mrope");
    if (mrope && !json_is_false(mrope))
        return hf_error(f, "use_mrope", err, "multimodal rotary embedding is not modelled, "
                        "expected false");
    return hf_rope_scaling(f, arch, err);
}

/* The MLP's activation: SiLU for every class but Gemma's GELU (tanh approximation), which
 * vLLM's Gemma2MLP insists on in both hidden_act and hidden_activation. */
static int hf_activation(const hf_file *f, int arch, tp_err *err)
{
    int gemma = arch == HF_GEMMA2 || arch == HF_GEMMA3;
    const char *want = gemma ? "gelu_pytorch_tanh" : "silu";
    static const char *const keys[] = {"hidden_act", "hidden_activation"};
    for (int i = 0; i < 2; i++) {
        json_t *v = json_object_get(f->root, keys[i]);
        if (v && (!json_is_string(v) || strcmp(json_string_value(v), want)))
            return hf_error(f, keys[i], err, "%s runs the MLP with %s, expected \"%s\"",
                            hf_arch_names[arch], want, want);
    }
    return 0;
}

/* layer_types (transformers >= 4.53 writes it): "sliding_attention" or "full_attention" per
 * layer, which tpsim holds as a period (model.h window_period): every layer sliding (0), or
 * the full ones exactly those with (l + 1) % P == 0. *slides: whether any layer slides. */
static int hf_layer_types(const hf_file *f, long layers, long *period, int *slides, tp_err *err)
{
    json_t *a = json_object_get(f->root, "layer_types");
    *slides = -1; /* not given */
    if (!a || json_is_null(a)) return 0;
    if (!json_is_array(a) || (long)json_array_size(a) != layers)
        return hf_error(f, "layer_types", err, "expected a list of %ld entries (one a layer)",
                        layers);
    char full[1000];
    long n_full = 0;
    for (long l = 0; l < layers; l++) {
        json_t *e = json_array_get(a, (size_t)l);
        const char *t = json_is_string(e) ? json_string_value(e) : "";
        if (strcmp(t, "full_attention") && strcmp(t, "sliding_attention"))
            return hf_error(f, "layer_types", err, "entry %ld is not \"full_attention\" or "
                            "\"sliding_attention\"", l);
        full[l] = !strcmp(t, "full_attention");
        n_full += full[l];
    }
    *slides = n_full < layers;
    *period = 0;
    if (n_full == 0 || n_full == layers) return 0;
    for (long p = 2; p <= layers; p++) {
        long l = 0;
        while (l < layers && full[l] == ((l + 1) % p == 0)) l++;
        if (l == layers) {
            *period = p;
            return 0;
        }
    }
    return hf_error(f, "layer_types", err, "full-attention layers that are not every Nth layer "
                    "(layer N-1, 2N-1, ...) are not modelled");
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

/* A soft-cap: a positive number, null (none), or absent (the config class's default). */
static int hf_softcap(const hf_file *f, const char *key, int absent_on, int *on, tp_err *err)
{
    json_t *v = json_object_get(f->root, key);
    *on = v ? 0 : absent_on;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_number(v) || json_number_value(v) <= 0)
        return hf_error(f, key, err, "expected a positive number (the cap) or null");
    *on = 1;
    return 0;
}

/* Gemma-2 and Gemma-3 (vllm gemma2.py, gemma3.py): four norms a layer, GELU-tanh MLP, the
 * embedding scaled by sqrt(hidden), the lm_head tied to the embedding (vLLM asserts it).
 * Gemma-2 soft-caps attention scores and logits (Gemma2Config's defaults 50 and 30 when
 * absent); Gemma-3 adds q/k norm and soft-caps only the logits when final_logit_softcapping
 * says so (Gemma3TextConfig's default: none; vLLM passes its attention no soft-cap, whatever
 * attn_logit_softcapping says). */
static int hf_gemma(const hf_file *f, int arch, model_arch *m, tp_err *err)
{
    int g2 = arch == HF_GEMMA2, attn_cap = 0;
    m->sandwich_norms = m->gelu_tanh = m->embed_scale = 1;
    m->qk_norm = !g2;
    if (hf_softcap(f, "attn_logit_softcapping", g2, &attn_cap, err) ||
        hf_softcap(f, "final_logit_softcapping", g2, &m->logit_softcap, err))
        return -1;
    m->attn_softcap = g2 && attn_cap;
    if (!m->tied_embeddings)
        return hf_error(f, "tie_word_embeddings", err, "%s's lm_head is its embedding (vLLM "
                        "asserts it), expected true", hf_arch_names[arch]);
    return 0;
}

/* Gemma-3's sliding_window_pattern: one layer in N reads everything (default 6). */
static int hf_gemma3_period(const hf_file *f, long *period, tp_err *err)
{
    long p = -1;
    if (hf_long(f, "sliding_window_pattern", 0, 1, 1000, &p, err)) return -1;
    *period = p > 0 ? p : 6;
    return 0;
}

/* Qwen3 and Qwen3-MoE (q/k norm; attention_bias on q, k, v only: vllm qwen3.py's o_proj has
 * none; sliding layers refused), Gemma-2 (every other layer slides: layer_types, else
 * Gemma2Config's (l + 1) % 2 rule, window 4096 when absent), Gemma-3 (layer l slides unless
 * (l + 1) % sliding_window_pattern == 0, or as layer_types says) and Phi-3 (Llama's layout with
 * fused qkv_proj and gate_up_proj, which vLLM runs as the same GEMMs; its sliding_window on
 * every layer, as tpsim reads Mistral's). */
static int hf_family(const hf_file *f, int arch, model_arch *m, tp_err *err)
{
    long window = -1, period = 0;
    int slides = -1, attn_bias = 0, use = 0;
    if (hf_bool(f, "attention_bias", &attn_bias, err) ||
        hf_long(f, "sliding_window", 0, 1, 1L << 24, &window, err) ||
        hf_layer_types(f, m->layers, &period, &slides, err))
        return -1;
    if (arch == HF_QWEN3 || arch == HF_QWEN3_MOE) {
        if (hf_bool(f, "use_sliding_window", &use, err)) return -1;
        if (use)
            return hf_error(f, "use_sliding_window", err, "sliding layers from "
                            "max_window_layers on are not modelled for %s, expected false",
                            hf_arch_names[arch]);
        if (slides == 1)
            return hf_error(f, "layer_types", err, "sliding layers are not modelled for %s, "
                            "expected every entry \"full_attention\"", hf_arch_names[arch]);
        m->qk_norm = 1;
        m->qkv_bias = attn_bias;
        window = -1; /* read only with use_sliding_window */
    } else {
        m->qkv_bias = m->o_bias = attn_bias;
    }
    if (arch == HF_GEMMA2 || arch == HF_GEMMA3) {
        if (hf_gemma(f, arch, m, err)) return -1;
        if (!json_object_get(f->root, "sliding_window")) window = 4096;
        if (slides < 0) {
            period = 2;
            if (arch == HF_GEMMA3 && hf_gemma3_period(f, &period, err)) return -1;
            if (period == 1) slides = 0; /* every layer full */
        }
    }
    if (slides == 1 && window <= 0)
        return hf_error(f, "sliding_window", err, "missing, but layer_types has sliding layers; "
                        "expected the window");
    m->sliding_window = window > 0 && slides != 0 ? window : 0;
    m->window_period = period;
    return 0;
}

/* The longest context vLLM serves the model at (vllm/config/model.py _get_and_verify_max_len,
 * which refuses a longer max_model_len): max_position_embeddings, times rope_scaling's factor
 * unless its type is su, longrope or llama3 (their max_position_embeddings already is the long
 * one) or the model is Gemma-3 (its factor scales only the global layers' rotation); for yarn
 * the base is rope_scaling's original_max_position_embeddings. Absent: no limit is known. */
static int hf_max_positions(const hf_file *f, int arch, model_arch *m, tp_err *err)
{
    long n = -1;
    if (hf_long(f, "max_position_embeddings", 0, 1, 1L << 30, &n, err)) return -1;
    if (n < 0) return 0;
    double derived = (double)n;
    json_t *rs = json_object_get(f->root, "rope_scaling");
    json_t *t = json_is_object(rs) ? json_object_get(rs, "rope_type") : NULL;
    if (!t && json_is_object(rs)) t = json_object_get(rs, "type");
    static const char *const long_already[] = {"su", "longrope", "llama3", NULL};
    if (json_is_string(t) && !hf_in(json_string_value(t), long_already) && arch != HF_GEMMA3) {
        json_t *factor = json_object_get(rs, "factor");
        if (factor && !(json_is_number(factor) && json_number_value(factor) > 0))
            return hf_error(f, "rope_scaling", err, "factor: expected a positive number");
        if (!strcmp(json_string_value(t), "yarn")) {
            /* absent: max_position_embeddings, transformers' own default (modeling_rope_utils
             * _compute_yarn_parameters: rope_scaling.get("original_max_position_embeddings")
             * or config.max_position_embeddings; docs/sources.md#hf-config-fields) */
            json_t *orig = json_object_get(rs, "original_max_position_embeddings");
            if (orig && !json_is_null(orig) &&
                (!json_is_integer(orig) || json_integer_value(orig) < 1))
                return hf_error(f, "rope_scaling", err, "original_max_position_embeddings: "
                                "expected a positive integer (yarn's base context)");
            if (json_is_integer(orig)) derived = (double)json_integer_value(orig);
        }
        derived *= factor ? json_number_value(factor) : 1.0;
    }
    if (!(derived >= 1 && derived <= (double)(1L << 30)))
        return hf_error(f, "max_position_embeddings", err, "%g positions with rope_scaling's "
                        "factor, expected 1..%ld", derived, 1L << 30);
    int line, col;
    hf_key_pos(f, "max_position_embeddings", &line, &col);
    snprintf(m->max_positions_at, sizeof m->max_positions_at, "%s:%d:%d", f->path, line, col);
    m->max_positions = (long)derived;
    return 0;
}

/* Shapes every class shares: layers, widths, heads, vocabulary, dtype, embeddings. */
static int hf_shapes(const hf_file *f, int arch, model_arch *m, tp_err *err)
{
    long head_dim = -1;
    static const char *const kv_keys[] = {"n_head_kv", "num_kv_heads", "num_key_value_heads",
                                          "multi_query_group_num", NULL};
    int moe_only = arch == HF_QWEN2_MOE || arch == HF_QWEN3_MOE; /* no dense MLP of its own */
    m->tied_embeddings = arch == HF_GEMMA2 || arch == HF_GEMMA3; /* the classes' defaults */
    if (hf_long(f, "num_hidden_layers", 1, 1, 1000, &m->layers, err) ||
        hf_long(f, "hidden_size", 1, 1, 1L << 20, &m->hidden, err) ||
        hf_long(f, "num_attention_heads", 1, 1, 4096, &m->heads, err) ||
        hf_long(f, "intermediate_size", !moe_only, 1, 1L << 22, &m->intermediate, err) ||
        hf_long(f, "vocab_size", 1, 1, 1L << 24, &m->vocab, err) ||
        hf_long(f, "head_dim", 0, 1, 4096, &head_dim, err) || hf_dtype(f, &m->dtype_bytes, err) ||
        hf_bool(f, "tie_word_embeddings", &m->tied_embeddings, err) ||
        hf_quant(f, &m->weights_quant, err) || hf_activation(f, arch, err))
        return -1;
    /* total KV heads: the first spelling present, else one per attention head (MHA) */
    const char *kv_key = hf_first_key(f, kv_keys);
    m->kv_heads = m->heads;
    if (kv_key && hf_long(f, kv_key, 1, 1, m->heads, &m->kv_heads, err)) return -1;
    if (m->heads % m->kv_heads)
        return hf_error(f, kv_key, err, "%ld does not divide num_attention_heads (%ld)",
                        m->kv_heads, m->heads);
    /* head_dim absent: Qwen3Config's default 128, Gemma2Config's 256, else hidden / heads
     * (Qwen3MoeConfig has no head_dim: vLLM's Qwen3MoeAttention takes hidden / heads) */
    if (head_dim < 0 && !json_object_get(f->root, "head_dim"))
        head_dim = arch == HF_QWEN3                         ? 128
                   : arch == HF_GEMMA2 || arch == HF_GEMMA3 ? 256
                                                            : -1;
    if (head_dim > 0) {
        m->head_dim = head_dim;
    } else if (m->hidden % m->heads) {
        return hf_error(f, "hidden_size", err, "%ld does not divide by num_attention_heads (%ld) "
                        "and head_dim is not given, expected head_dim", m->hidden, m->heads);
    } else {
        m->head_dim = m->hidden / m->heads;
    }
    return 0;
}

/* Biases and the sliding window of the classes before issue 18 (their keys not checked). */
static int hf_classic(const hf_file *f, int arch, model_arch *m, tp_err *err)
{
    long window = -1;
    if (arch == HF_QWEN2 || arch == HF_QWEN2_MOE) {
        m->qkv_bias = 1; /* Qwen2's q/k/v projections carry a bias (vLLM qwen2.py: bias=True) */
        int use_window = 0;
        if (hf_bool(f, "use_sliding_window", &use_window, err)) return -1;
        if (use_window && hf_long(f, "sliding_window", 1, 1, 1L << 24, &window, err)) return -1;
    } else {
        int attn_bias = 0;
        if (hf_bool(f, "attention_bias", &attn_bias, err) ||
            hf_bool(f, "mlp_bias", &m->mlp_bias, err) ||
            hf_long(f, "sliding_window", 0, 1, 1L << 24, &window, err))
            return -1;
        m->qkv_bias = m->o_bias = attn_bias; /* LlamaAttention: bias on q, k, v and o */
    }
    m->sliding_window = window > 0 ? window : 0;
    return 0;
}

static int hf_bind(const hf_file *f, model_arch *out, tp_err *err)
{
    model_arch m = {0};
    int arch = 0;
    if (hf_arch(f, &arch, err) || hf_model_type(f, arch, err) ||
        (hf_strict(arch) && hf_check_keys(f, arch, &m, err)) || hf_shapes(f, arch, &m, err) ||
        hf_max_positions(f, arch, &m, err) ||
        (hf_new_class(arch) ? hf_family(f, arch, &m, err) : hf_classic(f, arch, &m, err)))
        return -1;
    int moe = arch == HF_MIXTRAL || arch == HF_QWEN2_MOE || arch == HF_QWEN3_MOE;
    if (moe && hf_moe(f, arch, &m, err)) return -1;
    if ((arch == HF_DEEPSEEK_V2 || arch == HF_DEEPSEEK_V3) && hf_deepseek(f, &m, err)) return -1;
    if (m.intermediate < 0) m.intermediate = m.moe_intermediate; /* an MoE without dense MLP */
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
