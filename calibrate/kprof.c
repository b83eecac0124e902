/* kprof.c: see kprof.h. The byte and FLOP counts mirror prog.c's builders (prog_linear,
 * prog_norm, prog_eltwise, the attention op); tests/test_kfit.c checks them against prog. */
#include "kprof.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "csv.h"
#include "kcal.h"
#include "num.h"
#include "phys.h"
#include "rfile.h"

#define KP_MAX_FIELDS 128
#define KP_CAP (64u << 20)
#define KP_ACT 2.0 /* bf16/fp16 activations and weights */

const char *const kp_op_names[KP_N_OPS] = {
    "emb", "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
    "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add", "attention",
    "gemm", "generation_attention", "context_attention"};
static const int kp_op_class[10] = {KC_EMBEDDING, KC_NORM, KC_GEMM, KC_ROPE, KC_GEMM,
                                    KC_NORM, KC_GEMM, KC_ACTIVATION, KC_GEMM, KC_ADD};

static int kp_push(kp_set *set, kp_sample s)
{
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 4096;
        kp_sample *g = realloc(set->s, cap * sizeof *g);
        if (!g) return -1;
        set->s = g;
        set->cap = cap;
    }
    set->s[set->n++] = s;
    return 0;
}

void kp_free(kp_set *set)
{
    free(set->s);
    memset(set, 0, sizeof *set);
}

typedef struct kp_row {
    const char *path;
    char **f;
    int *lines;
    int n;
} kp_row;

static int kp_col(char **hdr, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(hdr[i], name)) return i;
    return -1;
}

static int kp_num(const kp_row *r, int col, const char *name, double lo, double hi, double *out,
                  tp_err *err)
{
    if (col >= r->n)
        return tp_err_at(err, r->path, r->lines[0], 0, "%d fields, expected a %s column",
                         r->n, name);
    num_status st = num_double(r->f[col], lo, hi, out);
    if (st == NUM_OK) return 0;
    return tp_err_at(err, r->path, r->lines[col], 0, "%s '%s' is %s, expected a number in "
                     "[%g, %g]", name, r->f[col], st == NUM_RANGE ? "out of range" : "not a number",
                     lo, hi);
}

static int kp_whole(const kp_row *r, int col, const char *name, long lo, long hi, long *out,
                    tp_err *err)
{
    if (col >= r->n)
        return tp_err_at(err, r->path, r->lines[0], 0, "%d fields, expected a %s column",
                         r->n, name);
    if (num_long(r->f[col], lo, hi, out) == NUM_OK) return 0;
    return tp_err_at(err, r->path, r->lines[col], 0, "%s '%s', expected a whole number in "
                     "[%ld, %ld]", name, r->f[col], lo, hi);
}

/* prog_linear: weights once, the activations in and out. */
static void kp_linear(double B, double in, double out, double *bytes, double *flops)
{
    *bytes = KP_ACT * in * out + B * (in + out) * KP_ACT;
    *flops = 2.0 * B * in * out;
}

static const char *const vidur_shape[] = {"n_head", "n_kv_head", "n_embd", "n_expanded_embd",
                                          "vocab_size", "use_gated_mlp", "num_tokens",
                                          "num_tensor_parallel_workers"};

static int kp_vidur(csv_reader *rd, char **hdr, int nh, kp_set *set, tp_err *err)
{
    int tcol[10], scol[8];
    for (int o = 0; o < 10; o++) {
        char name[96];
        snprintf(name, sizeof name, "time_stats.%s.median", kp_op_names[o]);
        if ((tcol[o] = kp_col(hdr, nh, name)) < 0)
            return tp_err_at(err, rd->path, 1, 0, "no %s column, expected Vidur's mlp.csv layout "
                             "(time_stats.OP.median for each of its ten operators)", name);
    }
    for (int i = 0; i < 8; i++)
        if ((scol[i] = kp_col(hdr, nh, vidur_shape[i])) < 0)
            return tp_err_at(err, rd->path, 1, 0, "no %s column, expected Vidur's shape columns "
                             "(n_head, n_kv_head, n_embd, n_expanded_embd, vocab_size, "
                             "use_gated_mlp, num_tokens, num_tensor_parallel_workers)",
                             vidur_shape[i]);
    char *f[KP_MAX_FIELDS];
    int lines[KP_MAX_FIELDS], cols[KP_MAX_FIELDS], n;
    size_t rows = 0;
    while ((n = csv_next(rd, f, lines, cols, KP_MAX_FIELDS, err)) > 0) {
        kp_row r = {rd->path, f, lines, n};
        if (n != nh)
            return tp_err_at(err, rd->path, lines[0], 0, "%d fields, expected %d as in the header",
                             n, nh);
        long heads, kv, H, F, vocab, B, k;
        if (kp_whole(&r, scol[0], "n_head", 1, 1 << 20, &heads, err) ||
            kp_whole(&r, scol[1], "n_kv_head", 1, 1 << 20, &kv, err) ||
            kp_whole(&r, scol[2], "n_embd", 1, 1 << 24, &H, err) ||
            kp_whole(&r, scol[3], "n_expanded_embd", 1, 1 << 26, &F, err) ||
            kp_whole(&r, scol[4], "vocab_size", 1, 1 << 26, &vocab, err) ||
            kp_whole(&r, scol[6], "num_tokens", 1, 1 << 24, &B, err) ||
            kp_whole(&r, scol[7], "num_tensor_parallel_workers", 1, 1024, &k, err))
            return -1;
        /* every timing column is a time, not just the medians read */
        for (int i = 0; i < n; i++) {
            double t;
            if (!strncmp(hdr[i], "time_stats.", 11) && kp_num(&r, i, hdr[i], 0, 1e6, &t, err))
                return -1;
        }
        const char *g = f[scol[5]];
        int gated = !strcmp(g, "True") || !strcmp(g, "true");
        if (!gated && strcmp(g, "False") && strcmp(g, "false"))
            return tp_err_at(err, rd->path, lines[scol[5]], 0, "use_gated_mlp '%s', expected True "
                             "or False", g);
        /* KV heads split over the ranks or replicated on them (model.c's rule): 12 KV heads
         * over 8 ranks are neither, and would be counted as one per rank */
        if (H % heads || heads % k || F % k || heads % kv || (kv % k && k % kv))
            return tp_err_at(err, rd->path, lines[0], 0,
                             "shape n_embd %ld, n_head %ld, n_kv_head %ld, n_expanded_embd %ld "
                             "does not shard over %ld GPUs, expected heads and FFN width "
                             "divisible by the TP degree, KV heads dividing it or divisible by it",
                             H, heads, kv, F, k);
        double b = (double)B, h = (double)H, hd = (double)(H / heads), qh = (double)(heads / k);
        double kvh = kv / k > 0 ? (double)(kv / k) : 1.0, I = (double)(F / k);
        double by[10], fl[10];
        by[0] = KP_ACT * 2.0 * b * h, fl[0] = 0;                          /* embedding */
        by[1] = by[5] = KP_ACT * (4.0 * b * h + h), fl[1] = fl[5] = 5.0 * b * h; /* norms */
        /* the GEMMs' y[B, out] = x[B, in] W, their grid axes n, k, m (0: not a GEMM) */
        double ins[10] = {0, 0, h, 0, qh * hd, 0, h, 0, I, 0};
        double outs[10] = {0, 0, (qh + 2.0 * kvh) * hd, 0, h, 0, gated ? 2.0 * I : I, 0, h, 0};
        kp_linear(b, h, (qh + 2.0 * kvh) * hd, &by[2], &fl[2]);
        by[3] = KP_ACT * 2.0 * b * (qh + kvh) * hd, fl[3] = 3.0 * b * (qh + kvh) * hd;
        kp_linear(b, qh * hd, h, &by[4], &fl[4]);
        kp_linear(b, h, gated ? 2.0 * I : I, &by[6], &fl[6]);
        by[7] = KP_ACT * (gated ? 3.0 : 2.0) * b * I, fl[7] = 4.0 * b * I;
        kp_linear(b, I, h, &by[8], &fl[8]);
        by[9] = KP_ACT * 3.0 * b * h, fl[9] = b * h;
        for (int o = 0; o < 10; o++) {
            double ms;
            char name[96];
            snprintf(name, sizeof name, "time_stats.%s.median (ms)", kp_op_names[o]);
            if (kp_num(&r, tcol[o], name, 1e-6, 1e6, &ms, err)) return -1;
            kp_sample s = {kp_op_class[o], o, (int)k, k, B, by[o], fl[o], b,
                           ms * 1e3, 1.0, lines[0], {outs[o], ins[o], outs[o] > 0 ? b : 0}};
            if (kp_push(set, s)) return tp_err_set(err, "%s: out of memory", rd->path);
        }
        rows++;
    }
    if (n < 0) return -1;
    if (!rows) return tp_err_at(err, rd->path, rd->line, 0, "no data rows, expected one per "
                                "(num_tokens, TP degree)");
    return 0;
}

static const char *const attn_cols[] = {"source", "batch", "context", "q_heads", "kv_heads",
                                        "head_dim", "kv_dtype_bytes", "time_us"};

static int kp_attention(csv_reader *rd, char **hdr, int nh, kp_set *set, tp_err *err)
{
    if (nh != 8)
        return tp_err_at(err, rd->path, 1, 0, "%d columns, expected %s", nh,
                         "source,batch,context,q_heads,kv_heads,head_dim,kv_dtype_bytes,time_us");
    for (int i = 0; i < 8; i++)
        if (strcmp(hdr[i], attn_cols[i]))
            return tp_err_at(err, rd->path, 1, 0, "column %d is '%s', expected '%s' (source,batch,"
                             "context,q_heads,kv_heads,head_dim,kv_dtype_bytes,time_us)", i + 1,
                             hdr[i], attn_cols[i]);
    char *f[KP_MAX_FIELDS];
    int lines[KP_MAX_FIELDS], cols[KP_MAX_FIELDS], n;
    size_t rows = 0;
    while ((n = csv_next(rd, f, lines, cols, KP_MAX_FIELDS, err)) > 0) {
        kp_row r = {rd->path, f, lines, n};
        if (n != 8) return tp_err_at(err, rd->path, lines[0], 0, "%d fields, expected 8", n);
        long B, ctx, qh, kvh, hd, kvb;
        double us;
        if (!f[0][0] || strlen(f[0]) >= sizeof set->sources[0])
            return tp_err_at(err, rd->path, lines[0], 0, "source '%s', expected a name of 1..63 "
                             "characters", f[0]);
        if (kp_whole(&r, 1, "batch", 1, 1 << 20, &B, err) ||
            kp_whole(&r, 2, "context", 1, 1 << 24, &ctx, err) ||
            kp_whole(&r, 3, "q_heads", 1, 1 << 16, &qh, err) ||
            kp_whole(&r, 4, "kv_heads", 1, 1 << 16, &kvh, err) ||
            kp_whole(&r, 5, "head_dim", 1, 1 << 12, &hd, err) ||
            kp_whole(&r, 6, "kv_dtype_bytes", 1, 8, &kvb, err) ||
            kp_num(&r, 7, "time_us", 1e-3, 1e9, &us, err))
            return -1;
        if (qh % kvh)
            return tp_err_at(err, rd->path, lines[4], 0, "kv_heads %ld does not divide q_heads "
                             "%ld, expected grouped-query heads", kvh, qh);
        int src = -1;
        for (int i = 0; i < set->n_sources; i++)
            if (!strcmp(set->sources[i], f[0])) src = i;
        if (src < 0) {
            if (set->n_sources == KP_MAX_SOURCES)
                return tp_err_at(err, rd->path, lines[0], 0, "more than %d sources, expected at "
                                 "most that many", KP_MAX_SOURCES);
            src = set->n_sources++;
            snprintf(set->sources[src], sizeof set->sources[src], "%s", f[0]);
        }
        /* prog.c's attention op: the context's K and V, q in and out out */
        double b = (double)B, c = (double)ctx, q = (double)qh, kvn = (double)kvh, d = (double)hd;
        double bytes = (double)kvb * 2.0 * b * c * kvn * d + KP_ACT * 2.0 * b * q * d;
        kp_sample s = {KC_ATTENTION, 10, 1000 + src, 0, B, bytes, 4.0 * b * q * d * c, b, us,
                       1.0, lines[0], {(double)kvb, d, kvn, q, c, b}};
        if (kp_push(set, s)) return tp_err_set(err, "%s: out of memory", rd->path);
        rows++;
    }
    if (n < 0) return -1;
    if (!rows)
        return tp_err_at(err, rd->path, rd->line, 0, "no data rows, expected one per kernel");
    return 0;
}

/* tpsim-probe's hardware file: measured.gemv_tpK_LAYER_bB_gbps, cuBLAS bf16 GEMV bandwidth
 * on Llama-3.1-70B's per-rank linear layers (calibrate/probe_gemv.c's shapes: hidden 8192,
 * 64 query and 8 KV heads of 128, intermediate 28672, vocab 128256), bytes moved per call =
 * weights + 2 * B * (in + out), so time = bytes / bandwidth. */
static const char *const kp_probe_layers[] = {"qkv_proj", "o_proj", "gate_up_proj",
                                               "down_proj", "lm_head"};

/* A whole number at *p: 1..18 digits (a long holds it; the caller checks its range), no sign
 * or leading zero, then the text `end` ('\0': the key's end); *p moves past `end`. -1 when the
 * form is not that. */
static int kp_probe_count(const char **p, const char *end, long *out)
{
    size_t d = strspn(*p, "0123456789"), e = strlen(end);
    if (d < 1 || d > 18 || ((*p)[0] == '0' && d > 1) || strncmp(*p + d, end, e ? e : 1))
        return -1;
    char buf[19];
    memcpy(buf, *p, d);
    buf[d] = '\0';
    if (num_long(buf, 0, 999999999999999999L, out) != NUM_OK) return -1;
    *p += d + e;
    return 0;
}

/* A key gemv_tpK_LAYER_bB_gbps read exactly, every character: its TP, layer and batch. -1 when
 * the form differs (a layer by its whole name, not a prefix). The ranges are the caller's. */
static int kp_probe_key(const char *key, long *tp, int *layer, long *b)
{
    const char *p = key + 7; /* after "gemv_tp" */
    if (kp_probe_count(&p, "_", tp)) return -1;
    *layer = -1;
    for (int l = 0; l < 5 && *layer < 0; l++) {
        size_t n = strlen(kp_probe_layers[l]);
        if (!strncmp(p, kp_probe_layers[l], n) && !strncmp(p + n, "_b", 2)) *layer = l, p += n + 2;
    }
    if (*layer < 0 || kp_probe_count(&p, "_gbps", b)) return -1;
    return *p ? -1 : 0;
}

static int kp_probe(const char *path, kp_set *set, tp_err *err)
{
    cfg_doc *doc = cfg_load(path, err);
    if (!doc) return -1;
    cfg_node *r = cfg_root(doc), *m;
    const char *kind = NULL;
    int rc = -1;
    size_t got = 0;
    if (cfg_string(r, "kind", 1, &kind, err)) goto out;
    if (strcmp(kind, "hardware")) {
        cfg_error(cfg_get(r, "kind"), err, "'%s', expected tpsim-probe's kind: hardware file",
                  kind);
        goto out;
    }
    if (!(m = cfg_need(r, "measured", err))) goto out;
    if (m->kind != CFG_MAP) {
        cfg_error(m, err, "expected a map of tpsim-probe's measurements");
        goto out;
    }
    static const int ops[] = {2, 4, 6, 8, 2};
    for (size_t i = 0; i < m->n; i++) {
        const char *key = m->keys[i];
        size_t kl = strlen(key);
        long tp = 0, b = 0;
        int L = -1;
        /* a GEMV bandwidth is a gemv_tp... key ending _gbps; the probe's other gemv_tp keys
         * (an efficiency) are not samples */
        if (strncmp(key, "gemv_tp", 7) || kl < 5 || strcmp(key + kl - 5, "_gbps")) continue;
        if (kp_probe_key(key, &tp, &L, &b)) {
            cfg_error(m->vals[i], err, "expected a key gemv_tpK_LAYER_bB_gbps with LAYER one of "
                      "qkv_proj, o_proj, gate_up_proj, down_proj, lm_head");
            goto out;
        }
        /* 64 query heads (the probe's Llama-3.1-70B shapes); a batch as fit-kernels' others */
        if (tp < 1 || tp > 64 || 64 % tp || b < 1 || b > (1L << 24)) {
            cfg_error(m->vals[i], err, "TP %ld and batch %ld, expected a TP degree dividing 64 "
                      "heads and a batch of 1..%ld", tp, b, 1L << 24);
            goto out;
        }
        double gbps;
        if (cfg_double(m, key, 1, PHYS_GBPS_MIN, PHYS_GBPS_MAX, &gbps, err)) goto out;
        double q = 64.0 / tp, kvh = 8 / tp > 0 ? 8.0 / tp : 1.0, H = 8192, hd = 128;
        double in[] = {H, q * hd, H, 28672.0 / tp, H};
        double outw[] = {(q + 2 * kvh) * hd, H, 2 * 28672.0 / tp, H, 128256.0 / tp};
        double bytes, flops;
        kp_linear((double)b, in[L], outw[L], &bytes, &flops);
        kp_sample s = {KC_GEMM, ops[L], tp, tp, b, bytes, flops, (double)b,
                       bytes / (gbps * 1e9) * 1e6, 1.0, m->vals[i]->line, {outw[L], in[L], b}};
        if (kp_push(set, s)) {
            tp_err_set(err, "%s: out of memory", path);
            goto out;
        }
        got++;
    }
    if (!got) {
        cfg_error(m, err, "no gemv_tpK_LAYER_bB_gbps entries, expected tpsim-probe's GEMV "
                  "measurements");
        goto out;
    }
    rc = 0;
out:
    cfg_free(doc);
    return rc;
}

/* Kernel names to classes, first match wins (the order matters: "fused_add_rms_norm" is a
 * norm, "_matmul_ogs_..._swiglu" a GEMM, "rotary_embedding" a rope). Each class is the one
 * kcal_map gives the tpsim op those kernels run: the KV-cache write and the tensor copies are
 * copies; FP8 quantisation, MoE routing, top-k and sums are elementwise passes (add). */
static const struct { const char *pat; int cls; } kp_trace_map[] = {
    {"nccl", KC_COUNT}, {"all_reduce", KC_COUNT}, {"allreduce", KC_COUNT},
    {"cross_device_reduce", KC_COUNT}, {"all_gather", KC_COUNT}, {"AllGather", KC_COUNT},
    {"reduce_scatter", KC_COUNT},
    {"reshape_and_cache", KC_COPY}, {"direct_copy", KC_COPY}, {"CatArrayBatchedCopy", KC_COPY},
    {"paged_attention", KC_ATTENTION}, {"flash_fwd", KC_ATTENTION}, {"flash_attn", KC_ATTENTION},
    {"fmha", KC_ATTENTION}, {"unified_attention", KC_ATTENTION}, {"flashinfer", KC_ATTENTION},
    {"rms_norm", KC_NORM}, {"Rmsnorm", KC_NORM}, {"rmsnorm", KC_NORM}, {"layer_norm", KC_NORM},
    {"rotary", KC_ROPE},
    {"gemm", KC_GEMM}, {"gemv", KC_GEMM}, {"matmul", KC_GEMM}, {"nvjet", KC_GEMM},
    {"cutlass::Kernel", KC_GEMM}, {"cutlass_", KC_GEMM}, {"xmma", KC_GEMM}, {"bmm_", KC_GEMM},
    {"Cijk_", KC_GEMM}, {"wvSplitK", KC_GEMM}, {"sgemm", KC_GEMM},
    {"silu_and_mul", KC_ACTIVATION}, {"act_and_mul", KC_ACTIVATION},
    {"gelu_and_mul", KC_ACTIVATION}, {"gelu_tanh_and_mul", KC_ACTIVATION},
    {"embedding", KC_EMBEDDING}, {"indexSelect", KC_EMBEDDING},
    {"argmax", KC_SAMPLER}, {"sampl", KC_SAMPLER}, {"softmax", KC_SAMPLER},
    {"quant", KC_ADD}, {"topk", KC_ADD}, {"routing", KC_ADD}, {"moe_align", KC_ADD},
    {"moe_sum", KC_ADD}, {"finalize", KC_ADD}, {"Functor_add", KC_ADD}, {"add_kernel", KC_ADD},
};

int kp_trace_class(const char *kind, const char *name)
{
    /* a memcpy is one of tpsim's copies; a memset is no op of tpsim's program (its bytes are
     * written, not read and written), so it is reported by name, never fitted as a copy */
    if (!strcmp(kind, "memcpy")) return KC_COPY;
    if (strcmp(kind, "kernel")) return -1;
    for (size_t i = 0; i < sizeof kp_trace_map / sizeof kp_trace_map[0]; i++)
        if (strstr(name, kp_trace_map[i].pat)) return kp_trace_map[i].cls;
    return -1;
}

static void kp_skip(kp_skipped *k, const char *name)
{
    k->unmapped++;
    for (int i = 0; i < k->n_names; i++)
        if (!strncmp(k->names[i], name, sizeof k->names[i] - 1)) {
            k->counts[i]++;
            return;
        }
    if (k->n_names == KP_MAX_SKIPPED) {
        k->names_over++;
        return;
    }
    snprintf(k->names[k->n_names], sizeof k->names[0], "%s", name);
    k->counts[k->n_names++] = 1;
}

static const char *const trace_cols[] = {"rank", "kind", "start_ns", "dur_us", "bytes", "name"};

static int kp_trace(csv_reader *rd, char **hdr, int nh, kp_set *set, tp_err *err)
{
    for (int i = 0; i < 6; i++)
        if (i >= nh || strcmp(hdr[i], trace_cols[i]))
            return tp_err_at(err, rd->path, 1, 0, "column %d is '%s', expected '%s' (tpsim trace "
                             "import --kernels: rank,kind,start_ns,dur_us,bytes,name)", i + 1,
                             i < nh ? hdr[i] : "", trace_cols[i]);
    if (nh != 6)
        return tp_err_at(err, rd->path, 1, 0, "%d columns, expected 6 (rank,kind,start_ns,dur_us,"
                         "bytes,name)", nh);
    char *f[KP_MAX_FIELDS];
    int lines[KP_MAX_FIELDS], cols[KP_MAX_FIELDS], n;
    size_t rows = 0;
    while ((n = csv_next(rd, f, lines, cols, KP_MAX_FIELDS, err)) > 0) {
        kp_row r = {rd->path, f, lines, n};
        if (n != 6) return tp_err_at(err, rd->path, lines[0], 0, "%d fields, expected 6", n);
        long rank;
        double start, us, bytes;
        if (kp_whole(&r, 0, "rank", 0, 1 << 20, &rank, err) ||
            kp_num(&r, 2, "start_ns", -9.3e18, 9.3e18, &start, err) ||
            kp_num(&r, 3, "dur_us", 0, 1e9, &us, err) ||
            kp_num(&r, 4, "bytes", 0, 1e15, &bytes, err))
            return -1;
        if (strcmp(f[1], "kernel") && strcmp(f[1], "memcpy") && strcmp(f[1], "memset"))
            return tp_err_at(err, rd->path, lines[1], 0, "kind '%s', expected kernel, memcpy or "
                             "memset", f[1]);
        if (!f[5][0]) return tp_err_at(err, rd->path, lines[5], 0, "empty name, expected the "
                                       "kernel's name");
        rows++;
        int cls = kp_trace_class(f[1], f[5]);
        if (cls == KC_COUNT) set->skipped.collectives++;
        if (cls < 0) kp_skip(&set->skipped, f[5]);
        if (cls < 0 || cls == KC_COUNT) continue;
        if (!(us > 0))
            return tp_err_at(err, rd->path, lines[3], 0, "dur_us %s, expected a duration > 0 "
                             "(a relative error needs one)", f[3]);
        kp_sample s = {cls, -1, 2000 + (int)rank, 0, 0, bytes, 0, 0, us, 1.0, lines[0], {0}};
        if (kp_push(set, s)) return tp_err_set(err, "%s: out of memory", rd->path);
        set->trace_rows++;
    }
    if (n < 0) return -1;
    if (!rows) return tp_err_at(err, rd->path, rd->line, 0, "no data rows, expected one per "
                                "GPU activity");
    return 0;
}

/* ------------------------------------------ NVIDIA AIConfigurator's tables (ms) ------- */

int kp_shape_fold(const double *gx, int dims)
{
    unsigned long h = 2166136261u; /* FNV-1a over the shape's whole numbers */
    for (int i = 0; i < dims; i++) {
        unsigned long v = (unsigned long)gx[i];
        for (int b = 0; b < 4; b++) h = ((h ^ ((v >> (8 * b)) & 0xff)) * 16777619u) & 0xffffffffu;
    }
    return 3000 + (int)(h % KP_SHAPE_FOLDS);
}

enum { KP_AIC_GEMM, KP_AIC_GEN, KP_AIC_CTX };
static const char *const kp_aic_cols[3][8] = {
    {"gemm_dtype", "m", "n", "k", "latency_ms", NULL},
    {"batch_size", "num_heads", "num_key_value_heads", "head_dim", "kv_cache_dtype", "step",
     "window_size", "latency_ms"},
    {"batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "kv_cache_dtype",
     "window_size", "latency_ms"}};
static const char *const kp_aic_names[3] = {"GEMM", "generation-attention",
                                            "context-attention"};

/* The header's columns by name (kp_read refused a repeated one): each of the layout's, `version`
 * allowed. */
static int kp_aic_header(const char *path, char **hdr, const int *hl, int nh, int lay, int *col,
                         tp_err *err)
{
    const char *const *want = kp_aic_cols[lay];
    int nw = lay == KP_AIC_GEMM ? 5 : 8;
    char list[200] = "";
    for (int w = 0; w < nw; w++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", w ? "," : "", want[w]);
    for (int i = 0; i < nh; i++) {
        int known = !strcmp(hdr[i], "version");
        for (int w = 0; w < nw; w++) known |= !strcmp(hdr[i], want[w]);
        if (!known)
            return tp_err_at(err, path, hl[i], 0, "column '%s', expected AIConfigurator's %s "
                             "columns %s (and version)", hdr[i], kp_aic_names[lay], list);
    }
    for (int w = 0; w < nw; w++) {
        col[w] = kp_col(hdr, nh, want[w]);
        if (col[w] < 0)
            return tp_err_at(err, path, hl[0], 0, "no %s column, expected AIConfigurator's %s "
                             "columns %s (times in ms)", want[w], kp_aic_names[lay], list);
    }
    return 0;
}

/* kv_cache_dtype as bytes per value. */
static int kp_kv_bytes(const kp_row *r, int col, long *out, tp_err *err)
{
    const char *v = r->f[col];
    if (!strcmp(v, "bfloat16") || !strcmp(v, "float16")) *out = 2;
    else if (!strcmp(v, "fp8")) *out = 1;
    else
        return tp_err_at(err, r->path, r->lines[col], 0, "kv_cache_dtype '%s', expected "
                         "bfloat16, float16 or fp8", v);
    return 0;
}

/* One GEMM row: y[m, n] = x[m, k] W^T, as prog_linear counts it (FP8: W8A8, the output in
 * bf16, one float32 weight scale). */
static int kp_aic_gemm_row(const kp_row *r, const int *col, kp_set *set, tp_err *err)
{
    long m, n, k;
    double ms;
    const char *dt = r->f[col[0]];
    int fp8 = !strcmp(dt, "fp8"), block = !strcmp(dt, "fp8_block");
    if (!fp8 && !block && strcmp(dt, "bfloat16"))
        return tp_err_at(err, r->path, r->lines[col[0]], 0, "gemm_dtype '%s', expected "
                         "bfloat16, fp8 or fp8_block", dt);
    if (kp_whole(r, col[1], "m", 1, 1 << 24, &m, err) ||
        kp_whole(r, col[2], "n", 1, 1 << 24, &n, err) ||
        kp_whole(r, col[3], "k", 1, 1 << 24, &k, err) ||
        kp_num(r, col[4], "latency_ms", 1e-6, 1e6, &ms, err))
        return -1;
    if (block) return set->aic_skipped++, 0;
    double M = (double)m, N = (double)n, K = (double)k, x = fp8 ? 1.0 : KP_ACT;
    double w = fp8 ? N * K + 4.0 : KP_ACT * N * K;
    kp_sample s = {fp8 ? KC_GEMM_FP8 : KC_GEMM, 11, 0, 0, m, w + M * (K * x + N * KP_ACT),
                   2.0 * M * N * K, M, ms * 1e3, 1.0, r->lines[0], {N, K, M}};
    s.fold = kp_shape_fold(s.gx, 2);
    return kp_push(set, s) ? tp_err_set(err, "%s: out of memory", r->path) : 0;
}

/* One attention row. Decode: step cached tokens, prog's attention op (K and V of the context
 * read, q in, out out). Prefill: isl new tokens each, causal (isl (isl + 1) / 2 scores a
 * head), q k v read, out written, K and V written to the cache. */
static int kp_aic_attn_row(const kp_row *r, const int *col, int lay, kp_set *set, tp_err *err)
{
    int gen = lay == KP_AIC_GEN, c_b = 0, c_len = gen ? 5 : 1, c_q = gen ? 1 : 2;
    int c_kv = c_q + 1, c_hd = c_q + 2, c_dt = gen ? 4 : 5, c_win = 6;
    long B, len, qh, kvh, hd, kvb = 2, win;
    double ms;
    if (kp_whole(r, col[c_b], "batch_size", 1, 1 << 20, &B, err) ||
        kp_whole(r, col[c_len], gen ? "step" : "isl", 1, 1 << 24, &len, err) ||
        kp_whole(r, col[c_q], "num_heads", 1, 1 << 16, &qh, err) ||
        kp_whole(r, col[c_kv], "num_key_value_heads", 1, 1 << 16, &kvh, err) ||
        kp_whole(r, col[c_hd], "head_dim", 1, 1 << 12, &hd, err) ||
        kp_kv_bytes(r, col[c_dt], &kvb, err) ||
        kp_whole(r, col[c_win], "window_size", 0, 1 << 24, &win, err) ||
        kp_num(r, col[7], "latency_ms", 1e-6, 1e6, &ms, err))
        return -1;
    if (qh % kvh)
        return tp_err_at(err, r->path, r->lines[col[c_kv]], 0, "num_key_value_heads %ld does "
                         "not divide num_heads %ld, expected grouped-query heads", kvh, qh);
    if (win) return set->aic_skipped++, 0;
    double b = (double)B, L = (double)len, q = (double)qh, kv = (double)kvh, d = (double)hd;
    double bytes, flops;
    if (gen) {
        bytes = (double)kvb * 2.0 * b * L * kv * d + KP_ACT * 2.0 * b * q * d;
        flops = 4.0 * d * b * q * L;
    } else {
        bytes = KP_ACT * b * L * d * (2.0 * q + 2.0 * kv) + (double)kvb * 2.0 * b * L * kv * d;
        flops = 4.0 * d * b * q * L * (L + 1.0) / 2.0;
    }
    kp_sample s = {gen ? KC_ATTENTION : KC_PREFILL_ATTN, gen ? 12 : 13, 0, 0,
                   gen ? B : B * len, bytes, flops, b, ms * 1e3, 1.0, r->lines[0],
                   {(double)kvb, d, kv, q, L, b}};
    s.fold = kp_shape_fold(s.gx, 4);
    return kp_push(set, s) ? tp_err_set(err, "%s: out of memory", r->path) : 0;
}

static int kp_aic(csv_reader *rd, char **hdr, const int *hl, int nh, int lay, kp_set *set,
                  tp_err *err)
{
    int col[8];
    if (kp_aic_header(rd->path, hdr, hl, nh, lay, col, err)) return -1;
    char *f[KP_MAX_FIELDS];
    int lines[KP_MAX_FIELDS], cols[KP_MAX_FIELDS], n;
    size_t rows = 0;
    while ((n = csv_next(rd, f, lines, cols, KP_MAX_FIELDS, err)) > 0) {
        kp_row r = {rd->path, f, lines, n};
        if (n != nh)
            return tp_err_at(err, rd->path, lines[0], 0, "%d fields, expected %d as in the header",
                             n, nh);
        if (lay == KP_AIC_GEMM ? kp_aic_gemm_row(&r, col, set, err)
                               : kp_aic_attn_row(&r, col, lay, set, err))
            return -1;
        rows++;
    }
    if (n < 0) return -1;
    if (!rows)
        return tp_err_at(err, rd->path, rd->line, 0, "no data rows, expected one per measured "
                         "shape");
    return 0;
}

/* The text's leading `#` lines, joined, as the file's provenance. */
static void kp_provenance(const char *text, kp_set *set)
{
    if (text[0] != '#' || set->n_provenance == KP_MAX_SOURCES) return;
    char *out = set->provenance[set->n_provenance++];
    size_t cap = sizeof set->provenance[0], used = 0;
    out[0] = 0;
    for (const char *p = text; *p == '#';) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *q = p + 1;
        while (q < p + len && *q == ' ') q++;
        used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%.*s",
                                 used ? " " : "", (int)(p + len - q), q);
        if (used >= cap) break;
        if (!e) break;
        p = e + 1;
    }
}

int kp_read(const char *path, kp_set *set, tp_err *err)
{
    size_t plen = strlen(path);
    if ((plen > 5 && !strcmp(path + plen - 5, ".yaml")) ||
        (plen > 4 && !strcmp(path + plen - 4, ".yml")))
        return kp_probe(path, set, err);
    char *text;
    size_t len;
    if (rfile_read(path, KP_CAP, "a per-operator profile (CSV)", &text, &len, err)) return -1;
    csv_reader rd;
    csv_init(&rd, path, text, len);
    char *hdr[KP_MAX_FIELDS];
    int lines[KP_MAX_FIELDS], cols[KP_MAX_FIELDS];
    int nh = csv_header(&rd, hdr, lines, cols, KP_MAX_FIELDS, err), rc = -1;
    int lay = nh <= 0 ? -1
              : kp_col(hdr, nh, "gemm_dtype") >= 0 ? KP_AIC_GEMM
              : kp_col(hdr, nh, "step") >= 0 && kp_col(hdr, nh, "batch_size") >= 0 ? KP_AIC_GEN
              : kp_col(hdr, nh, "isl") >= 0 && kp_col(hdr, nh, "batch_size") >= 0 ? KP_AIC_CTX
                                                                                   : -1;
    if (lay >= 0) {
        rc = kp_aic(&rd, hdr, lines, nh, lay, set, err);
        if (rc == 0) kp_provenance(text, set);
    } else if (nh == 0)
        tp_err_at(err, path, 1, 0, "empty, expected a header (Vidur's mlp.csv or tpsim's "
                  "decode-attention CSV)");
    else if (nh > 0 && !strcmp(hdr[0], "source"))
        rc = kp_attention(&rd, hdr, nh, set, err);
    else if (nh > 0 && !strcmp(hdr[0], "rank"))
        rc = kp_trace(&rd, hdr, nh, set, err);
    else if (nh > 0 && kp_col(hdr, nh, "num_tensor_parallel_workers") >= 0)
        rc = kp_vidur(&rd, hdr, nh, set, err);
    else if (nh > 0)
        tp_err_at(err, path, 1, 0, "header starts '%s', expected Vidur's mlp.csv layout "
                  "(time_stats.OP.median ..., num_tensor_parallel_workers) or tpsim's "
                  "decode-attention CSV (source,batch,context,...) or tpsim trace import "
                  "--kernels' listing (rank,kind,start_ns,dur_us,bytes,name) or an "
                  "AIConfigurator table (gemm_dtype,m,n,k,latency_ms; batch_size,...,step,...; "
                  "batch_size,isl,...)", hdr[0]);
    free(text);
    return rc;
}

int kp_band(long tokens)
{
    return tokens <= 1 ? 0 : tokens <= 16 ? 1 : tokens <= 128 ? 2 : tokens <= 1024 ? 3 : 4;
}

void kp_weigh(kp_set *set)
{
    double count[KC_COUNT][KP_BANDS] = {{0}};
    for (size_t i = 0; i < set->n; i++) count[set->s[i].cls][kp_band(set->s[i].tokens)]++;
    for (size_t i = 0; i < set->n; i++)
        set->s[i].w = 1.0 / count[set->s[i].cls][kp_band(set->s[i].tokens)];
}
