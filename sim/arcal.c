/* arcal.c: see arcal.h. */
#include "arcal.h"

#include <stdio.h>
#include <string.h>

#include "cfg.h"
#include "fprint.h"
#include "nccltune.h"
#include "phys.h"

static const char *const arcal_keys[] = {
    "kind",      "hardware",  "tp",     "fit",           "lambda_us",
    "beta_gbps", "pieces",    "r2",     "band_bias_pct", "n_points",
    "min_bytes", "max_bytes", "weight", "piecewise_r2",  "piecewise_band_bias_pct",
    "source",    "graph",     "tuner",  "custom",        "assumed",   "fingerprint",
    NULL};
static const char *const piece_keys[] = {"from_bytes", "lambda_us", "beta_gbps", NULL};

static const char *const graph_keys[] = {"lambda_us", "source", NULL};
static const char *const tuner_keys[] = {"nccl_version", "algorithms", "channels",
                                         "bw_per_channel_gbps", "nvls_busbw_gbps", "launch_us",
                                         "graph_launch_us", "source", NULL};
static const char *const custom_keys[] = {"vllm",
                                          "one_stage",
                                          "two_stage",
                                          "symm_mem",
                                          "eager_dispatch_us",
                                          "symm_mem_eager_dispatch_us",
                                          "source",
                                          NULL};
static const char *const line_keys[] = {"latency_us", "gbps", NULL};

static int arcal_read_graph(const cfg_node *g, arcal *c, tp_err *err)
{
    double lam = 0;
    if (cfg_expect_map(g, graph_keys, err) ||
        cfg_double(g, "lambda_us", 1, 0, PHYS_TIME_US_MAX, &lam, err) || cfg_source(g, 1, err))
        return -1;
    c->has_graph_lambda = 1;
    c->graph_lambda_s = lam * 1e-6;
    return 0;
}

static int arcal_read_tuner(const cfg_node *t, arcal *c, tp_err *err)
{
    arcal_tuner u = {0};
    const char *ver;
    double launch_us = 0, graph_us = -1;
    cfg_node *an;
    if (cfg_expect_map(t, tuner_keys, err) || cfg_string(t, "nccl_version", 1, &ver, err) ||
        !(an = cfg_need(t, "algorithms", err)) ||
        cfg_double(t, "channels", 1, 1, 64, &u.channels, err) ||
        cfg_double(t, "bw_per_channel_gbps", 1, PHYS_GBPS_MIN, 1e4, &u.bw_per_channel_gbps, err) ||
        cfg_double(t, "nvls_busbw_gbps", 0, 0, PHYS_GBPS_MAX, &u.nvls_busbw_gbps, err) ||
        cfg_double(t, "launch_us", 1, 0, PHYS_TIME_US_MAX, &launch_us, err) ||
        cfg_double(t, "graph_launch_us", 0, 0, PHYS_TIME_US_MAX, &graph_us, err) ||
        cfg_source(t, 1, err))
        return -1;
    if (!nt_find(ver))
        return cfg_error(cfg_get(t, "nccl_version"), err,
                         "'%s' is not in the tuner table, expected "
                         "one of %s",
                         ver, nt_versions());
    if (u.channels != (double)(long)u.channels)
        return cfg_error(cfg_get(t, "channels"), err, "%g, expected a whole number of channels",
                         u.channels);
    if (an->kind != CFG_SEQ || an->n == 0)
        return cfg_error(an, err, "expected a non-empty list of ring, tree, nvls");
    for (size_t i = 0; i < an->n; i++) {
        const char *name;
        if (cfg_as_string(an->vals[i], &name, err)) return -1;
        int a = nt_algo_parse(name);
        if (a < 0) return cfg_error(an->vals[i], err, "'%s', expected ring, tree or nvls", name);
        if (a == NT_NVLS && u.nvls_busbw_gbps <= 0)
            return cfg_error(an->vals[i], err,
                             "nvls needs nvls_busbw_gbps > 0 (its bus bandwidth)");
        u.algos |= NT_ALGO_BIT(a);
    }
    snprintf(u.nccl_version, sizeof u.nccl_version, "%s", ver);
    u.launch_s = launch_us * 1e-6;
    u.graph_launch_s = graph_us < 0 ? -1 : graph_us * 1e-6;
    u.valid = 1;
    c->tuner = u;
    return 0;
}

static int arcal_read_line(const cfg_node *m, const char *key, arcal_line *out, tp_err *err)
{
    cfg_node *n = cfg_get(m, key);
    double lat = 0, gbps = 0;
    if (!n) return 0;
    if (cfg_expect_map(n, line_keys, err) ||
        cfg_double(n, "latency_us", 1, 0, PHYS_TIME_US_MAX, &lat, err) ||
        cfg_double(n, "gbps", 1, PHYS_GBPS_MIN, PHYS_GBPS_MAX, &gbps, err))
        return -1;
    *out = (arcal_line){1, lat * 1e-6, gbps * 1e9};
    return 0;
}

static int arcal_read_custom(const cfg_node *m, arcal *c, tp_err *err)
{
    const char *ver;
    double ed = -1, sed = -1;
    if (cfg_expect_map(m, custom_keys, err) || cfg_string(m, "vllm", 1, &ver, err) ||
        arcal_read_line(m, "one_stage", &c->custom[0], err) ||
        arcal_read_line(m, "two_stage", &c->custom[1], err) ||
        arcal_read_line(m, "symm_mem", &c->custom[2], err) ||
        cfg_double(m, "eager_dispatch_us", 0, 0, PHYS_TIME_US_MAX, &ed, err) ||
        cfg_double(m, "symm_mem_eager_dispatch_us", 0, 0, PHYS_TIME_US_MAX, &sed, err) ||
        cfg_source(m, 1, err))
        return -1;
    if (!c->custom[0].valid && !c->custom[1].valid && !c->custom[2].valid)
        return cfg_error(m, err,
                         "expected one_stage, two_stage and/or symm_mem {latency_us, gbps}");
    c->eager_dispatch_s = ed < 0 ? -1 : ed * 1e-6;
    c->symm_eager_dispatch_s = sed < 0 ? -1 : sed * 1e-6;
    snprintf(c->custom_vllm, sizeof c->custom_vllm, "%s", ver);
    return 0;
}

static int arcal_read_pieces(const cfg_node *seq, arcal *c, tp_err *err)
{
    if (seq->kind != CFG_SEQ || seq->n == 0)
        return cfg_error(seq, err,
                         "expected a non-empty list of {from_bytes, lambda_us, beta_gbps}");
    if (seq->n > ARCAL_MAX_PIECES)
        return cfg_error(seq, err, "%zu pieces, expected at most %d", seq->n, ARCAL_MAX_PIECES);
    for (size_t i = 0; i < seq->n; i++) {
        const cfg_node *p = seq->vals[i];
        double from = 0, lam = 0, beta = 0;
        if (cfg_expect_map(p, piece_keys, err) ||
            cfg_double(p, "from_bytes", 1, 0, 1e15, &from, err) ||
            cfg_double(p, "lambda_us", 1, 0, PHYS_TIME_US_MAX, &lam, err) ||
            cfg_double(p, "beta_gbps", 1, PHYS_GBPS_MIN, PHYS_GBPS_MAX, &beta, err))
            return -1;
        if (i == 0 && from != 0)
            return cfg_error(cfg_get(p, "from_bytes"), err, "the first piece must start at 0");
        if (i > 0 && from <= c->pieces[i - 1].from_bytes)
            return cfg_error(cfg_get(p, "from_bytes"), err,
                             "%g is not above the previous piece's %g, expected increasing",
                             from, c->pieces[i - 1].from_bytes);
        c->pieces[i] = (arcal_piece){from, lam * 1e-6, beta * 1e9};
    }
    c->n_pieces = (int)seq->n;
    return 0;
}

int arcal_load(const char *path, arcal *out, tp_err *err)
{
    return arcal_load_set(path, NULL, out, err);
}

int arcal_load_set(const char *path, const char *assignment, arcal *out, tp_err *err)
{
    cfg_doc *doc = cfg_load(path, err);
    if (!doc) return -1;
    if (assignment && cfg_set_at(doc, assignment, "sensitivity", 1, 1, err)) {
        cfg_free(doc);
        return -1;
    }
    cfg_node *r = cfg_root(doc);
    static const char *const kinds[] = {"allreduce-calibration", NULL};
    static const char *const fits[] = {"linear", "piecewise", NULL};
    arcal c = {0};
    c.eager_dispatch_s = c.symm_eager_dispatch_s = -1;
    const char *hw = NULL;
    int kind = 0, rc = -1;
    double lam = -1, beta = -1, ignored;
    cfg_node *kn = cfg_need(r, "kind", err), *fn = NULL, *pn;
    if (cfg_expect_map(r, arcal_keys, err) || !kn || cfg_as_choice(kn, kinds, &kind, err) ||
        cfg_string(r, "hardware", 1, &hw, err) || cfg_long(r, "tp", 1, 2, 1024, &c.tp, err) ||
        !(fn = cfg_need(r, "fit", err)) || cfg_as_choice(fn, fits, &c.piecewise, err) ||
        cfg_double(r, "lambda_us", !c.piecewise, 0, PHYS_TIME_US_MAX, &lam, err) ||
        cfg_double(r, "beta_gbps", !c.piecewise, PHYS_GBPS_MIN, PHYS_GBPS_MAX, &beta, err) ||
        cfg_double(r, "r2", 0, -1e9, 1, &ignored, err) ||
        cfg_double(r, "band_bias_pct", 0, -1e6, 1e6, &ignored, err) ||
        cfg_double(r, "piecewise_r2", 0, -1e9, 1, &ignored, err) ||
        cfg_double(r, "piecewise_band_bias_pct", 0, -1e6, 1e6, &ignored, err) ||
        cfg_double(r, "n_points", 0, 0, 1e9, &ignored, err) ||
        cfg_double(r, "min_bytes", 0, 0, 1e15, &c.min_bytes, err) ||
        cfg_double(r, "max_bytes", 0, 0, 1e15, &c.max_bytes, err) || cfg_source(r, 1, err) ||
        decl_read(r, &c.assumed, err) || fp_verify(r, &c.fp, err))
        goto out;
    if (c.fp.state == FP_MISMATCH)
        snprintf(c.fp_why, sizeof c.fp_why, "its numbers are not those fit-allreduce wrote "
                 "(fingerprint %s, now %s)", c.fp.recorded, c.fp.computed);
    if ((lam < 0) != (beta < 0)) {
        cfg_error(r, err, "lambda_us and beta_gbps must be given together");
        goto out;
    }
    c.has_linear = lam >= 0;
    c.lambda_s = lam * 1e-6;
    c.beta = beta * 1e9;
    pn = cfg_get(r, "pieces");
    if (c.piecewise && !pn) {
        cfg_error(fn, err, "fit is piecewise but the file has no pieces list");
        goto out;
    }
    if (pn && arcal_read_pieces(pn, &c, err)) goto out;
    if (((pn = cfg_get(r, "graph")) && arcal_read_graph(pn, &c, err)) ||
        ((pn = cfg_get(r, "tuner")) && arcal_read_tuner(pn, &c, err)) ||
        ((pn = cfg_get(r, "custom")) && arcal_read_custom(pn, &c, err)))
        goto out;
    snprintf(c.path, sizeof c.path, "%s", path);
    snprintf(c.named_at, sizeof c.named_at, "%s", path);
    snprintf(c.hardware, sizeof c.hardware, "%s", hw);
    *out = c;
    rc = 0;
out:
    cfg_free(doc);
    return rc;
}

static void arcal_coeffs(const arcal *c, double bytes, double *lambda_s, double *beta)
{
    if (!c->piecewise) {
        *lambda_s = c->lambda_s;
        *beta = c->beta;
        return;
    }
    int i = c->n_pieces - 1;
    while (i > 0 && bytes < c->pieces[i].from_bytes) i--;
    *lambda_s = c->pieces[i].lambda_s;
    *beta = c->pieces[i].beta;
}

double arcal_allreduce_time(const arcal *c, double bytes)
{
    double lambda_s, beta, k = (double)c->tp;
    arcal_coeffs(c, bytes, &lambda_s, &beta);
    return lambda_s + 2.0 * (k - 1.0) / k * bytes / beta;
}

double arcal_allreduce_lambda(const arcal *c, double bytes)
{
    double lambda_s, beta;
    arcal_coeffs(c, bytes, &lambda_s, &beta);
    return lambda_s;
}

double arcal_allgather_time(const arcal *c, double bytes)
{
    double lambda_s, beta, k = (double)c->tp;
    arcal_coeffs(c, bytes, &lambda_s, &beta);
    return lambda_s + (k - 1.0) / k * bytes / beta;
}
