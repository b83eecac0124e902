/* araic.c: see araic.h. */
#include "araic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "csv.h"
#include "num.h"
#include "rfile.h"

enum { C_TABLE, C_GPU, C_DIR, C_VERSION, C_BACKEND, C_DTYPE, C_GPUS, C_ELEMS, C_BYTES, C_MS,
       C_DEVICE, C_N };
static const char *const araic_names[C_N] = {"table",   "gpu",      "dir_version",
                                             "version", "backend",  "dtype",
                                             "num_gpus", "message_size_elems", "bytes",
                                             "latency_ms", "device"};
#define ARAIC_MAX_FIELDS 64

typedef struct araic_state {
    const char *file;
    const araic_sel *sel;
    int line, n_fields, col[C_N]; /* col: the header index of each named column, -1 if absent */
    araic_table *t;
    araic_point *graph, *nccl;    /* the selection as read, unsorted (vllm_eager: t->vllm) */
    size_t n_graph, n_nccl, cap;
} araic_state;

static int araic_split(char *line, char **f)
{
    int n = 0;
    for (char *p = line;; p++) {
        if (n == ARAIC_MAX_FIELDS) return -1;
        f[n++] = p;
        p = strchr(p, ',');
        if (!p) return n;
        *p = '\0';
    }
}

static int araic_header(araic_state *st, char *line, tp_err *err)
{
    char *f[ARAIC_MAX_FIELDS];
    int n = araic_split(line, f);
    if (n < 0) return tp_err_set(err, "%s:%d: more than %d columns", st->file, st->line,
                                 ARAIC_MAX_FIELDS);
    /* every name once, those araic does not read too: a repeated column is a broken export */
    int lines[ARAIC_MAX_FIELDS], cols[ARAIC_MAX_FIELDS];
    for (int i = 0; i < n; i++) lines[i] = st->line, cols[i] = (int)(f[i] - line) + 1;
    if (csv_unique(st->file, f, lines, cols, n, err)) return -1;
    for (int c = 0; c < C_N; c++) st->col[c] = -1;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < C_N; c++) {
            if (!strcmp(f[i], araic_names[c])) st->col[c] = i;
        }
    for (int c = 0; c < C_DEVICE; c++)
        if (st->col[c] < 0)
            return tp_err_set(err, "%s:%d: no column '%s' in the header, expected "
                              ARAIC_COLUMNS, st->file, st->line, araic_names[c]);
    st->n_fields = n;
    return 0;
}

/* A row's numbers: whole counts, the bytes unit check, a finite positive time. */
static int araic_numbers(araic_state *st, char **f, long *gpus, double *bytes, double *us,
                         tp_err *err)
{
    long elems, b;
    double ms;
    const char *dt = f[st->col[C_DTYPE]];
    int size = !strcmp(dt, "int8") ? 1 : (!strcmp(dt, "bfloat16") || !strcmp(dt, "half")) ? 2 : 0;
    if (!size)
        return tp_err_set(err, "%s:%d: dtype '%s', expected bfloat16, half or int8", st->file,
                          st->line, dt);
    if (num_long(f[st->col[C_GPUS]], 2, 4096, gpus) != NUM_OK)
        return tp_err_set(err, "%s:%d: num_gpus '%s', expected a whole number >= 2", st->file,
                          st->line, f[st->col[C_GPUS]]);
    if (num_long(f[st->col[C_ELEMS]], 1, 1L << 40, &elems) != NUM_OK)
        return tp_err_set(err, "%s:%d: message_size_elems '%s', expected a whole number >= 1",
                          st->file, st->line, f[st->col[C_ELEMS]]);
    if (num_long(f[st->col[C_BYTES]], 1, 1L << 42, &b) != NUM_OK || b != elems * size)
        return tp_err_set(err, "%s:%d: bytes '%s', expected message_size_elems x %d (%s) = %ld",
                          st->file, st->line, f[st->col[C_BYTES]], size, dt, elems * size);
    if (num_double(f[st->col[C_MS]], -1e300, 1e300, &ms) != NUM_OK || !isfinite(ms) || ms <= 0)
        return tp_err_set(err, "%s:%d: latency_ms '%s', expected a finite time > 0 (ms)",
                          st->file, st->line, f[st->col[C_MS]]);
    *bytes = (double)b;
    *us = ms * 1e3;
    return 0;
}

static int araic_add(araic_state *st, araic_point **v, size_t *n, const char *what, double bytes,
                     double us, tp_err *err)
{
    for (size_t i = 0; i < *n; i++)
        if ((*v)[i].bytes == bytes)
            return tp_err_set(err, "%s:%d: %s at %.0f bytes repeats line %d, expected one row "
                              "per size", st->file, st->line, what, bytes, (*v)[i].line);
    if (*n == st->cap) return tp_err_set(err, "%s:%d: more than %zu selected rows", st->file,
                                         st->line, st->cap);
    (*v)[(*n)++] = (araic_point){bytes, us, -1, st->line};
    return 0;
}

/* One version column value for all the selected rows of a kind. */
static int araic_version(araic_state *st, char *dst, size_t len, const char *v, tp_err *err)
{
    if (!dst[0]) snprintf(dst, len, "%s", v);
    else if (strcmp(dst, v))
        return tp_err_set(err, "%s:%d: version '%s', expected '%s' as the rows before", st->file,
                          st->line, v, dst);
    return 0;
}

static int araic_row(araic_state *st, char *line, tp_err *err)
{
    char *f[ARAIC_MAX_FIELDS];
    int n = araic_split(line, f);
    long gpus = 0;
    double bytes = 0, us = 0;
    if (n != st->n_fields)
        return tp_err_set(err, "%s:%d: %d fields, expected %d (the header's)", st->file,
                          st->line, n < 0 ? ARAIC_MAX_FIELDS : n, st->n_fields);
    const char *table = f[st->col[C_TABLE]], *be = f[st->col[C_BACKEND]];
    int custom = !strcmp(table, "custom_allreduce_perf");
    if (!custom && strcmp(table, "nccl_perf"))
        return tp_err_set(err, "%s:%d: table '%s', expected custom_allreduce_perf or nccl_perf",
                          st->file, st->line, table);
    if (araic_numbers(st, f, &gpus, &bytes, &us, err)) return -1;
    st->t->rows++;
    const araic_sel *s = st->sel;
    if (strcmp(f[st->col[C_GPU]], s->gpu) || gpus != s->tp) return 0;
    const char *dir = f[st->col[C_DIR]], *ver = f[st->col[C_VERSION]];
    if (!custom) {
        if (strcmp(dir, s->nccl_dir) || strcmp(f[st->col[C_DTYPE]], "half")) return 0;
        return araic_version(st, st->t->nccl_version, sizeof st->t->nccl_version, ver, err) ||
               araic_add(st, &st->nccl, &st->n_nccl, "nccl_perf", bytes, us, err);
    }
    int graph = !strcmp(be, "vllm_graph");
    if (strcmp(dir, s->vllm_dir) || (!graph && strcmp(be, "vllm_eager"))) return 0;
    if (strcmp(f[st->col[C_DTYPE]], "bfloat16"))
        return tp_err_set(err, "%s:%d: dtype '%s' for %s, expected bfloat16", st->file,
                          st->line, f[st->col[C_DTYPE]], be);
    if (st->col[C_DEVICE] >= 0 && !st->t->device[0])
        arfit_copy_plain(st->t->device, sizeof st->t->device, f[st->col[C_DEVICE]]);
    return araic_version(st, st->t->vllm_version, sizeof st->t->vllm_version, ver, err) ||
           araic_add(st, graph ? &st->graph : &st->t->vllm, graph ? &st->n_graph : &st->t->n_vllm,
                     be, bytes, us, err);
}

static int araic_by_bytes(const void *a, const void *b)
{
    double x = ((const araic_point *)a)->bytes, y = ((const araic_point *)b)->bytes;
    return (x > y) - (x < y);
}

/* The selection into the table: graph rows paired with their eager rows, NCCL as a sweep. */
static int araic_finish(araic_state *st, tp_err *err)
{
    araic_table *t = st->t;
    const araic_sel *s = st->sel;
    if (!st->n_graph || !st->n_nccl)
        return tp_err_set(err, "%s: no %s rows for gpu %s, num_gpus %d, dir_version %s, "
                          "expected some", st->file, st->n_graph ? "nccl_perf (half)" :
                          "vllm_graph", s->gpu, s->tp, st->n_graph ? s->nccl_dir : s->vllm_dir);
    for (size_t i = 0; i < st->n_graph; i++) {
        araic_point *g = &st->graph[i];
        for (size_t j = 0; j < t->n_vllm; j++)
            if (t->vllm[j].bytes == g->bytes) g->eager_us = t->vllm[j].graph_us;
        if (g->eager_us < 0)
            return tp_err_set(err, "%s:%d: vllm_graph at %.0f bytes has no vllm_eager row, "
                              "expected one per size", st->file, g->line, g->bytes);
    }
    qsort(st->graph, st->n_graph, sizeof *st->graph, araic_by_bytes);
    qsort(st->nccl, st->n_nccl, sizeof *st->nccl, araic_by_bytes);
    arfit_sweep *sw = &t->nccl;
    sw->points = calloc(st->n_nccl, sizeof *sw->points);
    if (!sw->points) return tp_err_set(err, "out of memory");
    for (size_t i = 0; i < st->n_nccl; i++) {
        const araic_point *p = &st->nccl[i];
        sw->points[i] = (arfit_point){p->bytes, p->graph_us, p->line, p->graph_us, -1};
    }
    sw->n = st->n_nccl;
    sw->k = s->tp;
    sw->format = ARFIT_FORMAT_AIC;
    arfit_copy_plain(sw->gpu, sizeof sw->gpu, t->device);
    arfit_copy_plain(sw->file, sizeof sw->file, st->file);
    free(t->vllm);
    t->vllm = st->graph;
    t->n_vllm = st->n_graph;
    st->graph = NULL;
    return 0;
}

int araic_read(const char *text, const char *file, const araic_sel *sel, araic_table *out,
               tp_err *err)
{
    memset(out, 0, sizeof *out);
    size_t rows = 1;
    for (const char *p = text; *p; p++) rows += *p == '\n';
    araic_state st = {file, sel, 0, 0, {0}, out, malloc(rows * sizeof(araic_point)),
                      malloc(rows * sizeof(araic_point)), 0, 0, rows};
    out->vllm = malloc(rows * sizeof(araic_point)); /* the eager rows while reading */
    char *buf = strdup(text);
    int rc = !st.graph || !st.nccl || !out->vllm || !buf ? tp_err_set(err, "out of memory") : 0;
    for (char *line = buf, *next; !rc && line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        st.line++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        if (!len || line[0] == '#') continue;
        rc = st.n_fields ? araic_row(&st, line, err) : araic_header(&st, line, err);
    }
    if (!rc && !st.n_fields) rc = tp_err_set(err, "%s: no header row, expected " ARAIC_COLUMNS,
                                             file);
    if (!rc) rc = araic_finish(&st, err);
    free(buf);
    free(st.graph);
    free(st.nccl);
    if (rc) araic_free(out);
    return rc ? -1 : 0;
}

int araic_read_file(const char *path, const araic_sel *sel, araic_table *out, tp_err *err)
{
    char *text = NULL;
    size_t len;
    if (rfile_read(path, (size_t)64 << 20, "an all-reduce table", &text, &len, err)) return -1;
    int rc = araic_read(text, path, sel, out, err);
    free(text);
    return rc;
}

void araic_free(araic_table *t)
{
    free(t->vllm);
    arfit_sweep_free(&t->nccl);
    t->vllm = NULL;
    t->n_vllm = 0;
}

int araic_fit_line(const double *bytes, const double *us, size_t n, araic_line *out)
{
    double s0 = 0, s1 = 0, s2 = 0, sy = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double w = 1.0 / (us[i] * us[i]);
        s0 += w, s1 += w * bytes[i], s2 += w * bytes[i] * bytes[i];
        sy += w * us[i], sxy += w * bytes[i] * us[i];
    }
    double det = s0 * s2 - s1 * s1;
    *out = (araic_line){0};
    if (n < 2 || !(det > 0)) return -1;
    double a = (sy * s2 - s1 * sxy) / det, slope = (s0 * sxy - s1 * sy) / det;
    if (!(a >= 0) || !(slope > 0)) return -1;
    *out = (araic_line){1, (int)n, a, 1e-3 / slope, bytes[0], bytes[n - 1], 0};
    for (size_t i = 0; i < n; i++) {
        double e = 100.0 * fabs(a + slope * bytes[i] - us[i]) / us[i];
        if (e > out->max_err_pct) out->max_err_pct = e;
    }
    return 0;
}

int araic_fit_lines(const araic_table *t, int sm, araic_fit *out, tp_err *err)
{
    double *x = malloc(t->n_vllm * sizeof *x), *y = malloc(t->n_vllm * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return tp_err_set(err, "out of memory");
    }
    memset(out, 0, sizeof *out);
    for (int line = 0; line < 3; line++) {
        size_t n = 0;
        double d = 0;
        int nd = 0;
        for (size_t i = 0; i < t->n_vllm; i++) {
            const araic_point *p = &t->vllm[i];
            coll_path cp = coll_vllm_path(t->nccl.k, sm, p->bytes, 1);
            int l = cp == COLL_PATH_ONE_STAGE ? 0 : cp == COLL_PATH_TWO_STAGE ? 1
                  : cp == COLL_PATH_NCCL ? -1 : 2;
            if (l != line) continue;
            x[n] = p->bytes, y[n++] = p->graph_us;
            if (p->graph_us <= p->eager_us / 2) d += p->eager_us - p->graph_us, nd++;
        }
        if (n >= ARFIT_MIN_POINTS) araic_fit_line(x, y, n, &out->line[line]);
        /* the custom path's dispatch pools both stages */
        out->dispatch_n[line == 2] += nd;
        out->dispatch_us[line == 2] += d;
    }
    for (int k = 0; k < 2; k++)
        out->dispatch_us[k] = out->dispatch_n[k] ? out->dispatch_us[k] / out->dispatch_n[k] : -1;
    free(x);
    free(y);
    if (!out->line[0].valid)
        return tp_err_set(err, "%s: the one-stage sizes of vllm_graph at num_gpus %d give no "
                          "line (%d or more sizes, latency >= 0, bandwidth > 0 expected)",
                          t->nccl.file, t->nccl.k, ARFIT_MIN_POINTS);
    return 0;
}

static void araic_write_line(FILE *f, const char *key, const araic_line *l)
{
    if (l->valid) fprintf(f, "  %s: {latency_us: %.3f, gbps: %.2f}\n", key, l->latency_us,
                          l->gbps);
}

int araic_write_custom(FILE *f, const araic_table *t, const araic_fit *fit, const char *file,
                       const araic_sel *sel, int sm)
{
    static const char *const names[] = {"one-stage", "two-stage", "symm-mem"};
    char where[ARFIT_NAME_MAX], ver[32];
    arfit_copy_plain(where, sizeof where, file);
    arfit_copy_plain(ver, sizeof ver, t->vllm_version);
    fprintf(f, "custom:\n  vllm: \"%s (AIConfigurator vllm_graph rows)\"\n", ver);
    araic_write_line(f, "one_stage", &fit->line[0]);
    araic_write_line(f, "two_stage", &fit->line[1]);
    araic_write_line(f, "symm_mem", &fit->line[2]);
    if (fit->dispatch_us[0] >= 0) fprintf(f, "  eager_dispatch_us: %.2f\n", fit->dispatch_us[0]);
    if (fit->dispatch_us[1] >= 0)
        fprintf(f, "  symm_mem_eager_dispatch_us: %.2f\n", fit->dispatch_us[1]);
    fprintf(f, "  source:\n    how: >-\n      Measured: vLLM %s's tensor_model_parallel_all_reduce"
            " in a CUDA graph (5 calls per graph, >= 20 replays), bf16, %d GPUs. Sizes assigned "
            "what vLLM runs (docs/sources.md#vllm-ar-dispatch, SM %d.%d, symm-mem on); each line"
            " t = latency + b / gbps by tpsim fit-allreduce --aic, least squares on relative "
            "error:", ver, t->nccl.k, sm / 10, sm % 10);
    for (int i = 0; i < 3; i++) {
        const araic_line *l = &fit->line[i];
        char lo[32], hi[32];
        arfit_format_size(l->first_bytes, lo, sizeof lo);
        arfit_format_size(l->last_bytes, hi, sizeof hi);
        if (l->valid)
            fprintf(f, " %s %s..%s (%d sizes, max |error| %.1f%%);", names[i], lo, hi, l->n,
                    l->max_err_pct);
    }
    fprintf(f, " eager_dispatch_us (HOST work per call, never GPU time) the mean of the eager "
            "rows minus the graph rows over the sizes where the graph time is at most half the "
            "eager one (custom path %d sizes, symm-mem path %d).\n", fit->dispatch_n[0],
            fit->dispatch_n[1]);
    fprintf(f, "    where: %s (AIConfigurator all-reduce table, gpu %s, num_gpus %d, vLLM "
            "dir_version %s), provenance in tests/data/README.md\n", where, sel->gpu,
            sel->tp, sel->vllm_dir);
    return ferror(f) ? -1 : 0;
}
