/* kcal.c: see kcal.h. */
#include "kcal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "csv.h"
#include "fprint.h"
#include "num.h"
#include "phys.h"
#include "prog.h"
#include "rfile.h"

const char *const kcal_class_names[KC_COUNT + 1] = {
    "gemm", "attention", "norm", "rope", "activation", "add", "embedding", "sampler", "copy",
    "gemm_fp8", "prefill_attention", NULL};
const char *const kcal_law_names[KL_COUNT + 1] = {
    "const", "linear", "row", "seq", "roofline", "sum", "smooth", "tiled", "floor", "grid", NULL};

#define KCAL_COLLECTIVE KC_COUNT /* priced by the collective model, not here */

/* Every op prog emits, by what kind of kernel vLLM runs for it. Kernels the profiles have no
 * row for are put with the measured class whose work they resemble: the cache write and the
 * all-reduce copies are copies, top-k, the MoE bookkeeping, FP8 quantisation and the MoE sums
 * are elementwise passes (add), as are Gemma's embedding scale and logit soft-cap; the q/k
 * and Gemma's extra norms are norms, its GELU-and-mul an activation. */
#define M(c) ((c) + 1) /* 0: not in the table */
static const signed char kcal_map[OPN_COUNT] = {
    [OPN_INPUT_COPY] = M(KC_COPY),          [OPN_EMBEDDING] = M(KC_EMBEDDING),
    [OPN_EMBED_ALLREDUCE] = M(KCAL_COLLECTIVE), [OPN_INPUT_LAYERNORM] = M(KC_NORM),
    [OPN_QKV_PROJ] = M(KC_GEMM),            [OPN_ROTARY] = M(KC_ROPE),
    [OPN_CACHE_WRITE] = M(KC_COPY),         [OPN_ATTENTION] = M(KC_ATTENTION),
    [OPN_O_PROJ] = M(KC_GEMM),              [OPN_AR_COPY] = M(KC_COPY),
    [OPN_ALL_REDUCE] = M(KCAL_COLLECTIVE),  [OPN_POST_LAYERNORM] = M(KC_NORM),
    [OPN_GATE_UP] = M(KC_GEMM),             [OPN_SILU_MUL] = M(KC_ACTIVATION),
    [OPN_DOWN_PROJ] = M(KC_GEMM),           [OPN_FINAL_NORM] = M(KC_NORM),
    [OPN_LM_HEAD] = M(KC_GEMM),             [OPN_LOGITS_GATHER] = M(KCAL_COLLECTIVE),
    [OPN_SAMPLING] = M(KC_SAMPLER),         [OPN_TOKENS_D2H] = M(KC_COPY),
    [OPN_FP8_QUANT] = M(KC_ADD),            [OPN_SHARED_GATE_UP] = M(KC_GEMM),
    [OPN_SHARED_SILU_MUL] = M(KC_ACTIVATION), [OPN_SHARED_DOWN] = M(KC_GEMM),
    [OPN_SHARED_GATE] = M(KC_GEMM),         [OPN_SHARED_SIGMOID] = M(KC_ACTIVATION),
    [OPN_SHARED_MUL] = M(KC_ADD),           [OPN_ROUTER] = M(KC_GEMM),
    [OPN_TOPK] = M(KC_ADD),                 [OPN_MOE_ALIGN] = M(KC_ADD),
    [OPN_MOE_W13] = M(KC_GEMM),             [OPN_MOE_SILU_MUL] = M(KC_ACTIVATION),
    [OPN_MOE_W2] = M(KC_GEMM),              [OPN_MOE_SUM] = M(KC_ADD),
    [OPN_SHARED_ADD] = M(KC_ADD),           [OPN_MOE_SCALE] = M(KC_ADD),
    [OPN_QKV_A_PROJ] = M(KC_GEMM),          [OPN_Q_A_NORM] = M(KC_NORM),
    [OPN_Q_B_PROJ] = M(KC_GEMM),            [OPN_KV_A_NORM] = M(KC_NORM),
    [OPN_MLA_Q_ABSORB] = M(KC_GEMM),        [OPN_MLA_V_UP] = M(KC_GEMM),
    [OPN_AR_COPY_OUT] = M(KC_COPY),         [OPN_Q_NORM] = M(KC_NORM),
    [OPN_K_NORM] = M(KC_NORM),              [OPN_PRE_FF_NORM] = M(KC_NORM),
    [OPN_POST_FF_NORM] = M(KC_NORM),        [OPN_GELU_MUL] = M(KC_ACTIVATION),
    [OPN_EMBED_SCALE] = M(KC_ADD),          [OPN_LOGIT_SOFTCAP] = M(KC_ADD),
};
#undef M

int kcal_class_of(int name)
{
    if (name < 0 || name >= OPN_COUNT || !kcal_map[name]) return -1;
    return kcal_map[name] - 1; /* KC_COUNT: a collective */
}

int kcal_check_names(const kcal *c, tp_err *err)
{
    for (int n = 0; n < OPN_COUNT; n++) {
        prog_op op = {.name = (uint8_t)n};
        int k = kcal_class_of(n);
        if (k < 0)
            return tp_err_set(
                err,
                "%s: tpsim's op '%s' maps to no kernel class, expected one of "
                "gemm, attention, norm, rope, activation, add, embedding, sampler, copy",
                c ? c->path : "kernel calibration", prog_op_name(&op));
        if (c && k < KC_COUNT && !c->cls[k].valid)
            return tp_err_set(err, "%s: no '%s' class, which tpsim's op '%s' needs", c->path,
                              kcal_class_names[k], prog_op_name(&op));
    }
    return 0;
}

double kcal_qnorm(double a, double b, double q)
{
    double m = a > b ? a : b, r = a > b ? b / a : a / b; /* the larger side's ratio is 1 */
    if (m <= 0) return 0;
    return m * pow(1.0 + pow(r, q), 1.0 / q); /* scaled: no overflow */
}

double kcal_padded_flops(const kcal_law *l, double flops, double batch)
{
    if (l->kind != KL_TILED || l->tile_m <= 0 || batch <= 0) return flops;
    return flops * ceil(batch / l->tile_m) * l->tile_m / batch;
}

double kcal_law_time(const kcal_law *l, double bytes, double flops, double batch)
{
    double mem = bytes * l->s_per_byte, math = kcal_padded_flops(l, flops, batch) * l->s_per_flop;
    double t = l->t0_s + l->s_per_seq * batch + (batch > 0 ? flops / batch * l->s_per_row_flop : 0);
    if (l->kind == KL_SMOOTH || l->kind == KL_TILED) return t + kcal_qnorm(mem, math, l->q);
    if (l->kind == KL_FLOOR) return t - l->t0_s + kcal_qnorm(l->t0_s, mem, l->q);
    return t + (l->kind == KL_ROOFLINE ? (mem > math ? mem : math) : mem + math);
}

double kcal_time(const kcal *c, int cls, double bytes, double flops, double batch,
                 const double *gx)
{
    const kcal_entry *e = &c->cls[cls];
    if (gx && e->grid >= 0) {
        tp_err ignored;
        if (kcal_need(c, cls, &ignored)) return NAN;
        const kcal_grid *gr = &c->grids->grid[e->grid];
        double us = kg_eval(&gr->g, gr->cells, gx);
        if (!isnan(us)) return us * 1e-6;
    }
    return kcal_law_time(&e->law, bytes, flops, batch);
}

static const char *const kcal_keys[] = {"kind", "hardware", "source", "classes", "fitted_on",
                                        "laws_compared", "assumed", "fingerprint", NULL};
static const char *const entry_keys[] = {
    "law", "t0_us", "gbps", "tflops", "seq_us", "row_gflops", "q", "tile_m",
    "from", "n", "r2", "mape_pct", "heldout_mape_pct", "source", "grid", "fallback",
    "fallback_heldout_mape_pct", "grid_fp", NULL};

/* A rate (GB/s, TFLOP/s, GFLOP/s) as seconds per unit; absent or 0 means the term is absent,
 * else it is in lo..hi (phys.h: a rate near 0 would price a kernel at 10^290 s). */
static int kcal_rate(const cfg_node *e, const char *key, double unit, double lo, double hi,
                     double *out, tp_err *err)
{
    double v = 0;
    if (cfg_double(e, key, 0, 0, hi, &v, err)) return -1;
    if (v > 0 && v < lo)
        return cfg_error(cfg_get(e, key), err, "%g is below the physical range, expected 0 (no "
                         "such term) or %g..%g (docs/sources.md#physical-bounds)", v, lo, hi);
    *out = v > 0 ? 1.0 / (v * unit) : 0.0;
    return 0;
}

/* A measured class carries its fit quality: mape_pct is the error its ops' intervals take
 * (kcal_error_pct), so a missing one would silently price them as exact. A class that copies
 * another's law (from:) takes that class's quality and has none of its own. */
static int kcal_quality(const cfg_node *e, const cfg_node *law, int from, tp_err *err)
{
    static const char *const keys[] = {"n", "r2", "mape_pct", "heldout_mape_pct"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        cfg_node *q = cfg_get(e, keys[i]);
        if (from < 0 && !q && i < 3)
            return cfg_error(law, err, "a measured class needs %s (its fit quality), expected "
                             "it, or from: CLASS", keys[i]);
        if (from >= 0 && q)
            return cfg_error(q, err, "the class copies %s's law and its fit quality, expected "
                             "no %s of its own", kcal_class_names[from], keys[i]);
    }
    return 0;
}


#define KCAL_GRID_CAP (64u << 20)

/* One row of a grid CSV: the class's axes (> 0) and the time (us, > 0). */
static int kcal_grid_row(const char *path, char **f, const int *lines, const int *cols, int n,
                         int dims, double *x, double *t, tp_err *err)
{
    if (n != dims + 1)
        return tp_err_at(err, path, lines[0], 0, "%d fields, expected %d as in the header", n,
                         dims + 1);
    for (int i = 0; i <= dims; i++) {
        double v;
        double hi = i < dims ? 1e12 : PHYS_TIME_US_MAX; /* a time: phys.h */
        if (num_double(f[i], 1e-9, hi, &v) != NUM_OK)
            return tp_err_at(
                err, path, lines[i], cols[i],
                "'%s' is not a number in (0, %g], "
                "expected a positive %s",
                f[i], hi, i < dims ? "coordinate" : "time (us, docs/sources.md#physical-bounds)");
        if (i < dims) x[i] = v;
        else *t = v;
    }
    return 0;
}

/* The grid of the points into gr (its own cells). */
static int kcal_grid_build(const double (*x)[KG_MAX_DIMS], const double *t, size_t rows,
                           int dims, kcal_grid *gr, tp_err *err)
{
    size_t need = 0;
    /* sized by a first pass with no room: kg_build says how many cells the points take */
    if (kg_build(x, t, rows, dims, &gr->g, NULL, 0, &need) && (!need || need > KCAL_POOL))
        return tp_err_set(err, "%s: a grid of %zu cells (axes of at most %d values), expected "
                          "at most %d cells", gr->path, need, KG_MAX_AXIS, KCAL_POOL);
    if (!(gr->cells = malloc(need * sizeof *gr->cells)))
        return tp_err_set(err, "%s: out of memory", gr->path);
    if (kg_build(x, t, rows, dims, &gr->g, gr->cells, need, &need))
        return tp_err_set(err, "%s: out of memory", gr->path); /* not reached: sized above */
    if (gr->g.points != rows)
        return tp_err_set(err, "%s: %zu rows but %zu distinct points, expected each point once",
                          gr->path, rows, gr->g.points);
    return 0;
}

/* The header of a grid CSV: the class's axes, then us. The number of fields, or -1. */
static int kcal_grid_header(csv_reader *rd, const char *path, int k, tp_err *err)
{
    const char *const *names;
    int dims = kg_class_dims(k, &names), n, lines[KG_MAX_DIMS + 2], cols[KG_MAX_DIMS + 2];
    char *f[KG_MAX_DIMS + 2];
    if ((n = csv_header(rd, f, lines, cols, KG_MAX_DIMS + 2, err)) < 0) return -1;
    for (int i = 0; i <= dims; i++)
        if (n != dims + 1 || strcmp(f[i], i < dims ? names[i] : "us"))
            return tp_err_at(err, path, n > 0 ? lines[0] : 1, 0, "header is not the %s grid's, "
                             "expected %s%s%s%s%s%s,us", kcal_class_names[k], names[0],
                             dims > 3 ? ",kv_bytes..." : "", dims > 3 ? "" : ",",
                             dims > 3 ? "" : names[1], dims > 3 ? "" : ",",
                             dims > 3 ? names[dims - 1] : names[2]);
    return dims;
}

/* gr's CSV read (its bytes fingerprinted) and its rows built into its cells. */
static int kcal_grid_parse(kcal_grid *gr, tp_err *err)
{
    int dims, n, lines[KG_MAX_DIMS + 2], cols[KG_MAX_DIMS + 2];
    char *f[KG_MAX_DIMS + 2], *text;
    size_t len;
    if (rfile_read(gr->path, KCAL_GRID_CAP, "a measured kernel grid (CSV)", &text, &len, err))
        return -1;
    fp_hex(fp_bytes(FP_SEED, text, len), gr->now);
    csv_reader rd;
    csv_init(&rd, gr->path, text, len);
    if ((dims = kcal_grid_header(&rd, gr->path, gr->cls, err)) < 0) {
        free(text);
        return -1;
    }
    /* sized once by the text's lines (a row per line at most): growing by doubling copied
     * megabytes and touched twice the pages of a table read on every load */
    size_t rows = 0, cap = 1;
    for (const char *p = text; (p = memchr(p, '\n', len - (size_t)(p - text))); p++) cap++;
    double (*x)[KG_MAX_DIMS] = malloc(cap * sizeof *x), *t = malloc(cap * sizeof *t);
    int rc = -1;
    if (!x || !t) {
        tp_err_set(err, "%s: out of memory", gr->path);
        goto out;
    }
    while ((n = csv_next(&rd, f, lines, cols, KG_MAX_DIMS + 2, err)) > 0) {
        if (rows == cap) { /* not reached: a row takes a line */
            tp_err_at(err, gr->path, lines[0], 0, "more rows than lines");
            goto out;
        }
        if (kcal_grid_row(gr->path, f, lines, cols, n, dims, x[rows], &t[rows], err)) goto out;
        rows++;
    }
    if (n < 0) goto out;
    if (!rows) {
        tp_err_at(err, gr->path, rd.line, 0, "no data rows, expected one per measured point");
        goto out;
    }
    rc = kcal_grid_build((const double (*)[KG_MAX_DIMS])x, t, rows, dims, gr, err);
out:
    free(x);
    free(t);
    free(text);
    return rc;
}

int kcal_need(const kcal *c, int cls, tp_err *err)
{
    if (cls < 0 || cls >= KC_COUNT || !c->cls[cls].valid || c->cls[cls].grid < 0) return 0;
    kcal_grid *gr = &c->grids->grid[c->cls[cls].grid];
    int st = atomic_load_explicit(&gr->state, memory_order_acquire);
    if (st == KCAL_GRID_PENDING) {
        pthread_mutex_lock(&c->grids->lock);
        st = atomic_load_explicit(&gr->state, memory_order_relaxed);
        if (st == KCAL_GRID_PENDING) {
            tp_err e = {{0}};
            st = kcal_grid_parse(gr, &e) ? KCAL_GRID_FAILED : KCAL_GRID_READY;
            snprintf(gr->fail, sizeof gr->fail, "%s", e.msg);
            atomic_store_explicit(&gr->state, st, memory_order_release);
        }
        pthread_mutex_unlock(&c->grids->lock);
    }
    return st == KCAL_GRID_READY ? 0 : tp_err_set(err, "%s", gr->fail);
}

int kcal_need_all(const kcal *c, tp_err *err)
{
    for (int k = 0; k < KC_COUNT; k++)
        if (kcal_need(c, k, err)) return -1;
    return 0;
}

void kcal_grids_vouch(kcal *c)
{
    for (int i = 0; c->grids && i < c->grids->n && !c->fp_why[0]; i++) {
        const kcal_grid *gr = &c->grids->grid[i];
        if (gr->want[0] && gr->now[0] && strcmp(gr->want, gr->now))
            snprintf(c->fp_why, sizeof c->fp_why, "%.300s's bytes are not those fit-kernels "
                     "wrote (grid_fp %.16s, now %s)", gr->path, gr->want, gr->now);
    }
}

/* grid: FILE.csv, resolved against the calibration's folder: a new grid of c's shared grids
 * (made on the first), checked to be a readable file; kcal_need reads it. */
static int kcal_read_grid(const cfg_node *e, const cfg_node *gn, int k, kcal *c, int *gi,
                          tp_err *err)
{
    const char *name, *want = "";
    if (cfg_as_string(gn, &name, err)) return -1;
    if (!kg_class_dims(k, NULL))
        return cfg_error(gn, err, "the %s class has no grid, expected a grid only for gemm, "
                         "gemm_fp8, attention or prefill_attention", kcal_class_names[k]);
    if (!*name || name[0] == '/')
        return cfg_error(gn, err, "'%s', expected a CSV file relative to the calibration", name);
    if (c->grids && c->grids->n == KCAL_MAX_GRIDS)
        return cfg_error(gn, err, "more than %d grids in one calibration", KCAL_MAX_GRIDS);
    /* grid_fp: the bytes fit-kernels wrote; a grid edited since makes the file's numbers
     * assumed (kcal.h), as an edited number does */
    const cfg_node *gf = cfg_get(e, "grid_fp");
    if (gf && cfg_as_string(gf, &want, err)) return -1;
    char path[512];
    const char *slash = strrchr(c->path, '/');
    int dir = slash ? (int)(slash - c->path + 1) : 0;
    if (snprintf(path, sizeof path, "%.*s%s", dir, c->path, name) >= (int)sizeof path)
        return cfg_error(gn, err, "the grid's path is too long");
    if (rfile_check_regular(path, KCAL_GRID_CAP, "a measured kernel grid (CSV)", err)) return -1;
    if (!c->grids) {
        if (!(c->grids = calloc(1, sizeof *c->grids)))
            return tp_err_set(err, "%s: out of memory", path);
        atomic_init(&c->grids->refs, 1);
        pthread_mutex_init(&c->grids->lock, NULL);
    }
    kcal_grid *gr = &c->grids->grid[c->grids->n];
    memset(gr, 0, sizeof *gr);
    gr->cls = k;
    atomic_init(&gr->state, KCAL_GRID_PENDING);
    snprintf(gr->path, sizeof gr->path, "%s", path);
    snprintf(gr->want, sizeof gr->want, "%s", want);
    *gi = c->grids->n++;
    /* the file named, for the files a scenario's predictions rest on (domain.h) */
    int seen = 0;
    for (int i = 0; i < c->n_grid_files; i++) seen |= !strcmp(c->grid_files[i], path);
    if (!seen && c->n_grid_files < KCAL_MAX_GRIDS)
        snprintf(c->grid_files[c->n_grid_files++], sizeof c->grid_files[0], "%s", path);
    return 0;
}

int kcal_law_params(int kind)
{
    switch (kind) {
    case KL_CONST: return 1;                  /* t0 */
    case KL_LINEAR: return 2;                 /* t0, bytes */
    case KL_SMOOTH: case KL_TILED: return 4;  /* t0, bytes, FLOPs, q (tiled's tile is fixed) */
    case KL_GRID: return 0;                   /* its fallback's count is the one that binds */
    default: return 3;                        /* row, seq, roofline, sum; floor: t0, bytes, q */
    }
}

/* A measured class's n: a fit on as many rows as its law has parameters passes through every
 * row, so its in-sample error (mape_pct, which intervals take) reads 0 whatever the truth. */
static int kcal_enough_rows(const cfg_node *e, const kcal_entry *x, tp_err *err)
{
    int p = kcal_law_params(x->law.kind);
    if (x->from >= 0 || x->n >= p + 1) return 0;
    return cfg_error(cfg_get(e, "n"), err, "%g rows for law %s's %d parameter%s: its error is "
                     "unknown (a fit through every row reads 0), expected n >= %d", x->n,
                     kcal_law_names[x->law.kind], p, p > 1 ? "s" : "", p + 1);
}

static int kcal_read_entry(const cfg_node *e, int k, kcal *c, tp_err *err)
{
    kcal_entry x = {.valid = 1, .from = -1, .grid = -1, .n = 0, .r2 = 0,
                    .heldout_mape_pct = -1, .fallback_heldout_mape_pct = -1};
    cfg_node *ln = cfg_need(e, "law", err), *fn, *gn = cfg_get(e, "grid");
    cfg_node *fb = cfg_get(e, "fallback");
    double t0 = 0, seq = 0;
    long tile = 0; /* whole rows: the tile pads the batch to a multiple of it */
    if (cfg_expect_map(e, entry_keys, err) || !ln ||
        cfg_as_choice(ln, kcal_law_names, &x.law.kind, err) ||
        cfg_double(e, "t0_us", 1, 0, PHYS_TIME_US_MAX, &t0, err) ||
        kcal_rate(e, "gbps", 1e9, PHYS_GBPS_MIN, PHYS_GBPS_MAX, &x.law.s_per_byte, err) ||
        kcal_rate(e, "tflops", 1e12, PHYS_TFLOPS_MIN, PHYS_TFLOPS_MAX, &x.law.s_per_flop, err) ||
        kcal_rate(e, "row_gflops", 1e9, PHYS_TFLOPS_MIN * 1e3, PHYS_TFLOPS_MAX * 1e3,
                  &x.law.s_per_row_flop, err) ||
        cfg_double(e, "seq_us", 0, 0, PHYS_TIME_US_MAX, &seq, err) ||
        cfg_double(e, "q", 0, 1, 64, &x.law.q, err) ||
        cfg_long(e, "tile_m", 0, 1, 4096, &tile, err) || cfg_double(e, "n", 0, 0, 1e9, &x.n, err) ||
        cfg_double(e, "r2", 0, -1e9, 1, &x.r2, err) ||
        /* below 100: validate's lower bound prices a class at (1 - error) of its law, which
         * at 100% or more would be a zero or negative kernel time */
        cfg_double(e, "mape_pct", 0, 0, 99.99, &x.mape_pct, err) ||
        cfg_double(e, "heldout_mape_pct", 0, 0, 99.99, &x.heldout_mape_pct, err) ||
        cfg_double(e, "fallback_heldout_mape_pct", 0, 0, 99.99, &x.fallback_heldout_mape_pct,
                   err) ||
        cfg_source(e, 0, err))
        return -1;
    /* law: grid reads the measured grid; its fallback law's terms are the entry's */
    if ((x.law.kind == KL_GRID) != (gn != NULL) || (x.law.kind == KL_GRID) != (fb != NULL))
        return cfg_error(gn ? gn : fb ? fb : ln, err, "law %s, expected grid: FILE.csv and "
                         "fallback: LAW together with law: grid, and neither without it",
                         kcal_law_names[x.law.kind]);
    if (fb) {
        if (cfg_as_choice(fb, kcal_law_names, &x.law.kind, err)) return -1;
        if (x.law.kind == KL_GRID)
            return cfg_error(fb, err, "grid, expected a fitted law (const, linear, ...)");
        if (kcal_read_grid(e, gn, k, c, &x.grid, err)) return -1;
    }
    x.law.t0_s = t0 * 1e-6;
    x.law.s_per_seq = seq * 1e-6;
    x.law.tile_m = (double)tile;
    /* each law names the terms it has: a parameter it does not use is an error, not ignored */
    int kind = x.law.kind;
    int norm = kind == KL_SMOOTH || kind == KL_TILED, qn = norm || kind == KL_FLOOR;
    struct { const char *key; int used; } terms[] = {
        {"gbps", kind != KL_CONST}, {"tflops", kind == KL_ROOFLINE || kind == KL_SUM || norm},
        {"row_gflops", kind == KL_ROW}, {"seq_us", kind == KL_SEQ}, {"q", qn},
        {"tile_m", kind == KL_TILED}};
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++) {
        cfg_node *t = cfg_get(e, terms[i].key);
        if (t && !terms[i].used)
            return cfg_error(t, err, "law %s has no %s term, expected it absent",
                             kcal_law_names[kind], terms[i].key);
        if (!t && terms[i].used)
            return cfg_error(ln, err, "law %s needs %s", kcal_law_names[kind], terms[i].key);
    }
    if ((fn = cfg_get(e, "from"))) {
        int from;
        if (cfg_as_choice(fn, kcal_class_names, &from, err)) return -1;
        if (from == k) return cfg_error(fn, err, "a class cannot copy its own law");
        x.from = from;
    }
    if (kcal_quality(e, ln, x.from, err) || kcal_enough_rows(e, &x, err)) return -1;
    c->cls[k] = x;
    return 0;
}

/* from: the copy states its source's law, term for term, and the source is measured: a chain
 * (or a cycle) would leave the copy's error to a class with none of its own. */
static int kcal_check_from(const cfg_node *cn, const kcal *c, int k, tp_err *err)
{
    const kcal_entry *x = &c->cls[k];
    int f = x->from;
    cfg_node *fn = cfg_get(cfg_get(cn, kcal_class_names[k]), "from");
    if (!c->cls[f].valid)
        return cfg_error(fn, err, "class '%s' is not in the file", kcal_class_names[f]);
    const kcal_entry *s = &c->cls[f];
    if (s->from >= 0)
        return cfg_error(fn, err, "class '%s' copies '%s' in turn, expected a measured class "
                         "(no chain or cycle of from:)", kcal_class_names[f],
                         kcal_class_names[s->from]);
    if (x->grid >= 0)
        return cfg_error(fn, err, "a class that copies %s's law reads no grid of its own, "
                         "expected no grid:", kcal_class_names[f]);
    const kcal_law *a = &x->law, *b = &s->law;
    if (a->kind != b->kind || a->t0_s != b->t0_s || a->s_per_byte != b->s_per_byte ||
        a->s_per_flop != b->s_per_flop || a->s_per_row_flop != b->s_per_row_flop ||
        a->s_per_seq != b->s_per_seq || a->q != b->q || a->tile_m != b->tile_m)
        return cfg_error(fn, err, "the law differs from %s's, which it copies, expected the same "
                         "law and terms (%s%s)", kcal_class_names[f], kcal_law_names[b->kind],
                         s->grid >= 0 ? ", the grid's fallback" : "");
    return 0;
}

double kcal_error_pct(const kcal *c, int cls)
{
    const kcal_entry *e = &c->cls[cls];
    if (e->from >= 0) e = &c->cls[e->from];
    return e->heldout_mape_pct >= 0 ? e->heldout_mape_pct : e->mape_pct;
}

int kcal_load(const char *path, kcal *out, tp_err *err)
{
    return kcal_load_set(path, NULL, 0, out, err);
}

int kcal_load_set(const char *path, const char *const *assign, int n_assign, kcal *out,
                  tp_err *err)
{
    cfg_doc *doc = cfg_load(path, err);
    if (!doc) return -1;
    for (int i = 0; i < n_assign; i++)
        if (cfg_set_at(doc, assign[i], "sensitivity", 1, 1, err)) {
            cfg_free(doc);
            return -1;
        }
    cfg_node *r = cfg_root(doc), *kn, *cn;
    static const char *const kinds[] = {"kernel-calibration", NULL};
    kcal *cp = calloc(1, sizeof *cp);
    if (!cp) {
        cfg_free(doc);
        return tp_err_set(err, "%s: out of memory", path);
    }
    snprintf(cp->path, sizeof cp->path, "%s", path);
    const char *hw = NULL;
    int kind, rc = -1;
    if (cfg_expect_map(r, kcal_keys, err) || !(kn = cfg_need(r, "kind", err)) ||
        cfg_as_choice(kn, kinds, &kind, err) || cfg_string(r, "hardware", 1, &hw, err) ||
        cfg_source(r, 1, err) || decl_read(r, &cp->assumed, err) ||
        fp_verify(r, &cp->fp, err) || !(cn = cfg_need(r, "classes", err)))
        goto out;
    if (cp->fp.state == FP_MISMATCH)
        snprintf(cp->fp_why, sizeof cp->fp_why, "its numbers are not those fit-kernels wrote "
                 "(fingerprint %s, now %s)", cp->fp.recorded, cp->fp.computed);
    if (cfg_expect_map(cn, kcal_class_names, err)) goto out;
    for (int k = 0; k < KC_COUNT; k++) {
        cfg_node *e = cfg_get(cn, kcal_class_names[k]);
        if (e && kcal_read_entry(e, k, cp, err)) goto out;
    }
    for (int k = 0; k < KC_COUNT; k++)
        if (cp->cls[k].valid && cp->cls[k].from >= 0 && kcal_check_from(cn, cp, k, err))
            goto out;
    snprintf(cp->named_at, sizeof cp->named_at, "%s", path);
    snprintf(cp->hardware, sizeof cp->hardware, "%s", hw);
    if (kcal_check_names(cp, err)) goto out;
    *out = *cp;
    cp->grids = NULL; /* out's now */
    rc = 0;
out:
    kcal_free(cp);
    free(cp);
    cfg_free(doc);
    return rc;
}

void kcal_share(kcal *dst, const kcal *src)
{
    memcpy(dst, src, sizeof *dst); /* every byte, padding too: a copy compares equal */
    if (dst->grids) atomic_fetch_add(&dst->grids->refs, 1);
}

void kcal_free(kcal *c)
{
    if (c->grids && atomic_fetch_sub(&c->grids->refs, 1) == 1) {
        for (int i = 0; i < c->grids->n; i++) free(c->grids->grid[i].cells);
        pthread_mutex_destroy(&c->grids->lock);
        free(c->grids);
    }
    c->grids = NULL;
}
