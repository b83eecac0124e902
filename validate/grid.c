/* grid.c: see grid.h. */
#include "grid.h"

#include "csv.h"
#include "num.h"
#include "rfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { COL_CONFIG, COL_TP, COL_BATCH, COL_CTX, COL_MEASURED, COL_COMPUTE, COL_COMM, COL_FULL,
       COL_ERROR, COL_COUNT };
static const char *const grid_columns[COL_COUNT] = {
    "config", "tp", "batch", "ctx", "measured_ms", "pred_compute_ms", "pred_comm_ms",
    "full_pred_ms", "error_pct"};
#define GRID_REQUIRED 5 /* the first five columns */
#define GRID_MAX_FIELDS 32
#define GRID_MAX_CELLS 4096 /* each cell is a simulation; the duplicate check is quadratic */

static int grid_header(const char *path, int line, char **f, const int *col, int nf, int *map,
                       tp_err *err)
{
    int have[COL_COUNT];
    for (int c = 0; c < COL_COUNT; c++) have[c] = -1;
    for (int i = 0; i < nf; i++) {
        int c = 0;
        while (c < COL_COUNT && strcmp(f[i], grid_columns[c])) c++;
        if (c == COL_COUNT)
            return tp_err_at(err, path, line, col[i],
                             "unknown column '%s', expected config, tp, batch, ctx, measured_ms "
                             "[, pred_compute_ms, pred_comm_ms, full_pred_ms, error_pct]",
                             f[i]);
        have[c] = i;
        map[i] = c;
    }
    for (int c = 0; c < GRID_REQUIRED; c++)
        if (have[c] < 0)
            return tp_err_at(err, path, line, 0, "missing column '%s'", grid_columns[c]);
    return 0;
}

static int grid_number(const char *path, int line, int at, const char *col, const char *text,
                       double lo, double hi, double *out, tp_err *err)
{
    double v;
    char sb[TP_SHORT_MAX];
    if (num_double(text, -HUGE_VAL, HUGE_VAL, &v) != NUM_OK)
        return tp_err_at(err, path, line, at, "%s: '%s' is not a number", col,
                         tp_shorten(text, sb));
    if (v < lo || v > hi)
        return tp_err_at(err, path, line, at, "%s: %g is out of range, expected %g..%g", col, v,
                         lo, hi);
    *out = v;
    return 0;
}

static int grid_row(const char *path, int line, char **f, const int *at, int nf, const int *map,
                    grid_cell *c, tp_err *err)
{
    static const double lo[COL_COUNT] = {0, 1, 1, 1, 1e-6, 0, 0, -1e6, -1e6};
    static const double hi[COL_COUNT] = {0, 1024, 1 << 20, 1 << 24, 1e7, 1e7, 1e7, 1e7, 1e6};
    memset(c, 0, sizeof *c);
    c->line = line;
    c->pred_compute_ms = c->pred_comm_ms = c->full_pred_ms = c->error_pct = NAN;
    double *num[COL_COUNT] = {NULL, NULL, NULL, NULL, &c->measured_ms, &c->pred_compute_ms,
                              &c->pred_comm_ms, &c->full_pred_ms, &c->error_pct};
    double v = 0;
    for (int i = 0; i < nf; i++) {
        int col = map[i];
        if (col == COL_CONFIG) {
            if (!f[i][0] || strlen(f[i]) >= sizeof c->config)
                return tp_err_at(err, path, line, at[i],
                                 "config: expected a name like 'H100 TP-2'");
            snprintf(c->config, sizeof c->config, "%s", f[i]);
            continue;
        }
        if (grid_number(path, line, at[i], grid_columns[col], f[i], lo[col], hi[col], &v, err))
            return -1;
        if (col <= COL_CTX) {
            if (v != floor(v))
                return tp_err_at(err, path, line, at[i], "%s: %g is not an integer",
                                 grid_columns[col], v);
            long *target = col == COL_TP ? &c->tp : col == COL_BATCH ? &c->batch : &c->ctx;
            *target = (long)v;
        } else {
            *num[col] = v;
        }
    }
    /* the config names its TP degree: "H100 TP-2" with tp 2 */
    int config_at = 1;
    for (int i = 0; i < nf; i++)
        if (map[i] == COL_CONFIG) config_at = at[i];
    const char *tp_at = strstr(c->config, " TP-");
    long k = -1;
    if (!tp_at || tp_at == c->config || num_long(tp_at + 4, 1, 1024, &k) != NUM_OK || k != c->tp)
        return tp_err_at(
            err, path, line, config_at,
            "unknown config '%s' for tp %ld, expected 'NAME TP-%ld' (e.g. 'H100 TP-%ld')",
            c->config, c->tp, c->tp, c->tp);
    return 0;
}

int grid_load(const char *path, grid *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", path);
    char *text;
    size_t text_len;
    if (rfile_read(path, (size_t)16 << 20, "a CSV grid", &text, &text_len, err)) return -1;
    if (text_len == 0) {
        free(text);
        return tp_err_at(err, path, 1, 0,
                         "empty file, expected config,tp,batch,ctx,measured_ms,...");
    }
    /* RFC 4180 records (quoted fields, CRLF, a byte order mark), '#' comment lines */
    csv_reader rd;
    csv_init(&rd, path, text, text_len);
    char *fields[GRID_MAX_FIELDS];
    int lines[GRID_MAX_FIELDS], cols[GRID_MAX_FIELDS], map[GRID_MAX_FIELDS], ncols = 0, line = 1,
        rc = -1, nf;
    size_t cap = 0;
    while ((nf = csv_next(&rd, fields, lines, cols, GRID_MAX_FIELDS, err)) > 0) {
        line = lines[0];
        if (!ncols) {
            if (csv_unique(path, fields, lines, cols, nf, err) ||
                grid_header(path, line, fields, cols, nf, map, err))
                goto out;
            ncols = nf;
            continue;
        }
        if (nf != ncols) {
            tp_err_at(err, path, line, 0, "%d fields, expected %d as in the header", nf, ncols);
            goto out;
        }
        if (out->n == GRID_MAX_CELLS) {
            tp_err_at(err, path, line, 0, "more than %d cells, expected a measured grid",
                      GRID_MAX_CELLS);
            goto out;
        }
        if (out->n == cap) {
            cap = cap ? 2 * cap : 16;
            grid_cell *grown = realloc(out->cells, cap * sizeof *grown);
            if (!grown) {
                tp_err_set(err, "%s: out of memory", path);
                goto out;
            }
            out->cells = grown;
        }
        grid_cell *c = &out->cells[out->n];
        if (grid_row(path, line, fields, cols, nf, map, c, err)) goto out;
        const grid_cell *dup = grid_find(out, c->tp, c->batch, c->ctx);
        if (dup) {
            tp_err_at(err, path, line, 0,
                      "duplicate cell tp %ld batch %ld ctx %ld (first at line %d)", c->tp, c->batch,
                      c->ctx, dup->line);
            goto out;
        }
        out->n++;
    }
    if (nf < 0) {
        /* err set by the reader */
    } else if (!ncols) {
        tp_err_at(err, path, rd.line > 1 ? rd.line - 1 : 1, 0,
                  "no header line, expected config,tp,batch,ctx,measured_ms,...");
    } else if (out->n == 0) {
        tp_err_at(err, path, line, 0, "no data rows");
    } else {
        rc = 0;
    }
out:
    free(text);
    if (rc) grid_free(out);
    return rc;
}

void grid_free(grid *g)
{
    free(g->cells);
    g->cells = NULL;
    g->n = 0;
}

const grid_cell *grid_find(const grid *g, long tp, long batch, long ctx)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->cells[i].tp == tp && g->cells[i].batch == batch && g->cells[i].ctx == ctx)
            return &g->cells[i];
    return NULL;
}
