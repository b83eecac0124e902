/* model.c: see model.h. */
#include "model.h"

#include <stdio.h>
#include <string.h>

#include "cfg.h"
#include "hfconfig.h"

static const char *const model_keys[] = {
    "name",     "layers",         "hidden",          "heads",       "kv_heads",
    "head_dim", "intermediate",   "vocab",           "dtype_bytes", "qkv_bias",
    "o_bias",   "mlp_bias",       "tie_embeddings",  "sliding_window",
    "experts",  "experts_per_tok", "moe_intermediate", "shared_expert_intermediate",
    "shared_expert_gate", "source", "assumed", NULL};

static int model_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static int model_load_yaml(const char *path, model_arch *out, tp_err *err)
{
    cfg_doc *doc = cfg_load(path, err);
    if (!doc) return -1;
    cfg_node *r = cfg_root(doc);
    const char *name = NULL;
    model_arch m = {0};
    int rc = -1;
    if (cfg_expect_map(r, model_keys, err) ||
        cfg_string_fits(r, "name", 1, sizeof m.name, &name, err) ||
        cfg_long(r, "layers", 1, 1, 1000, &m.layers, err) ||
        cfg_long(r, "hidden", 1, 1, 1L << 20, &m.hidden, err) ||
        cfg_long(r, "heads", 1, 1, 4096, &m.heads, err) ||
        cfg_long(r, "kv_heads", 1, 1, 4096, &m.kv_heads, err) ||
        cfg_long(r, "head_dim", 1, 1, 4096, &m.head_dim, err) ||
        cfg_long(r, "intermediate", 1, 1, 1L << 22, &m.intermediate, err) ||
        cfg_long(r, "vocab", 1, 1, 1L << 24, &m.vocab, err) ||
        cfg_long(r, "dtype_bytes", 1, 1, 8, &m.dtype_bytes, err) ||
        cfg_bool(r, "qkv_bias", 0, &m.qkv_bias, err) || cfg_bool(r, "o_bias", 0, &m.o_bias, err) ||
        cfg_bool(r, "mlp_bias", 0, &m.mlp_bias, err) ||
        cfg_bool(r, "tie_embeddings", 0, &m.tied_embeddings, err) ||
        cfg_long(r, "sliding_window", 0, 1, 1L << 24, &m.sliding_window, err) ||
        cfg_long(r, "experts", 0, 2, 4096, &m.experts, err) ||
        cfg_long(r, "experts_per_tok", m.experts > 0, 1, 4096, &m.experts_per_tok, err) ||
        cfg_long(r, "moe_intermediate", m.experts > 0, 1, 1L << 22, &m.moe_intermediate, err) ||
        cfg_long(r, "shared_expert_intermediate", 0, 1, 1L << 22, &m.shared_intermediate, err) ||
        cfg_bool(r, "shared_expert_gate", 0, &m.shared_gate, err) || cfg_source(r, 1, err) ||
        decl_read(r, &m.assumed, err))
        goto out;
    if (m.experts == 0) {
        static const char *const moe_only[] = {"experts_per_tok", "moe_intermediate",
                                               "shared_expert_intermediate",
                                               "shared_expert_gate", NULL};
        for (int i = 0; moe_only[i]; i++)
            if (cfg_get(r, moe_only[i])) {
                cfg_error(cfg_get(r, moe_only[i]), err,
                          "only a mixture-of-experts model has it, expected 'experts' too");
                goto out;
            }
    }
    if (m.heads % m.kv_heads != 0) {
        cfg_error(cfg_get(r, "kv_heads"), err, "%ld does not divide heads (%ld)", m.kv_heads,
                  m.heads);
        goto out;
    }
    if (m.experts && m.experts_per_tok > m.experts) {
        cfg_error(cfg_get(r, "experts_per_tok"), err, "%ld is more than the %ld experts",
                  m.experts_per_tok, m.experts);
        goto out;
    }
    if (m.shared_gate && !m.shared_intermediate) {
        cfg_error(cfg_get(r, "shared_expert_gate"), err,
                  "a gate needs a shared expert, expected shared_expert_intermediate too");
        goto out;
    }
    snprintf(m.name, sizeof m.name, "%s", name);
    *out = m;
    rc = 0;
out:
    cfg_free(doc);
    return rc;
}

int model_load(const char *path, model_arch *out, tp_err *err)
{
    if (model_ends_with(path, ".json")) return hfconfig_load(path, out, err);
    return model_load_yaml(path, out, err);
}

long model_vocab_padded(const model_arch *m)
{
    return (m->vocab + MODEL_VOCAB_PAD - 1) / MODEL_VOCAB_PAD * MODEL_VOCAB_PAD;
}

int model_check_tp(const model_arch *m, long tp, tp_err *err)
{
    if (tp < 1) return tp_err_set(err, "tp %ld: expected a TP degree >= 1", tp);
    long mlp = m->experts ? m->moe_intermediate : m->intermediate;
    if (m->heads % tp || mlp % tp || model_vocab_padded(m) % tp ||
        (m->experts && m->dense_layers && m->intermediate % tp) ||
        (m->shared_intermediate && m->shared_intermediate % tp))
        return tp_err_set(err,
                          "tp %ld does not shard %s: heads (%ld), %s (%ld)%s and padded vocab "
                          "(%ld) must divide by it",
                          tp, m->name, m->heads,
                          m->experts ? "each expert's intermediate" : "intermediate", mlp,
                          m->shared_intermediate ? ", the shared expert's intermediate" : "",
                          model_vocab_padded(m));
    if (!m->kv_lora_rank && m->kv_heads % tp && tp % m->kv_heads)
        return tp_err_set(err, "tp %ld does not shard %s's %ld KV heads: expected a divisor or a "
                          "multiple of it", tp, m->name, m->kv_heads);
    return 0;
}

int model_check_ctx(const model_arch *m, long ctx, tp_err *err)
{
    if (!m->max_positions || ctx <= m->max_positions) return 0;
    return tp_err_set(err, "%s: max_position_embeddings: %s serves at most %ld positions, but "
                      "ctx is %ld; expected a ctx of at most %ld", m->max_positions_at, m->name,
                      m->max_positions, ctx, m->max_positions);
}

long model_kv_heads_per_rank(const model_arch *m, long tp)
{
    if (m->kv_lora_rank) return 1;
    return m->kv_heads >= tp ? m->kv_heads / tp : 1;
}

int model_layer_slides(const model_arch *m, long layer)
{
    if (!m->sliding_window) return 0;
    return m->window_period ? (layer + 1) % m->window_period != 0 : 1;
}

/* One decoder layer's attention tensors: projections, biases, the q/k norms. */
static double model_attn_params(const model_arch *m)
{
    double H = (double)m->hidden, n = (double)m->heads;
    if (m->kv_lora_rank) { /* MLA: q (through q LoRA or direct), kv_a + norm, kv_b, o */
        double L = (double)m->kv_lora_rank, R = (double)m->qk_rope_dim;
        double N = (double)m->qk_nope_dim, V = (double)m->v_head_dim, QL = (double)m->q_lora_rank;
        double q = QL > 0 ? H * QL + QL + QL * n * (N + R) : H * n * (N + R);
        return q + H * (L + R) + L + L * n * (N + V) + n * V * H;
    }
    double hd = (double)m->head_dim, qkv = (n + 2.0 * (double)m->kv_heads) * hd;
    return H * qkv + n * hd * H + (m->qkv_bias ? qkv : 0.0) + (m->o_bias ? H : 0.0) +
           (m->qk_norm ? 2.0 * hd : 0.0);
}

void model_params(const model_arch *m, double *total, double *active)
{
    double H = (double)m->hidden, V = (double)m->vocab;
    double norms = (m->sandwich_norms ? 4.0 : 2.0) * H;
    double dense = 3.0 * H * (double)m->intermediate +
                   (m->mlp_bias ? 2.0 * (double)m->intermediate + H : 0.0);
    double expert = 3.0 * H * (double)m->moe_intermediate;
    double shared = 3.0 * H * (double)m->shared_intermediate + (m->shared_gate ? H : 0.0);
    double router = H * (double)m->experts;
    double t = V * H * (m->tied_embeddings ? 1.0 : 2.0) + H, a = t;
    for (long l = 0; l < m->layers; l++) {
        double common = model_attn_params(m) + norms;
        if (m->experts && l >= m->dense_layers) {
            t += common + router + shared + (double)m->experts * expert;
            a += common + router + shared + (double)m->experts_per_tok * expert;
        } else {
            t += common + dense;
            a += common + dense;
        }
    }
    *total = t;
    *active = a;
}
