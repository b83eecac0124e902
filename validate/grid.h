/* grid.h: measured decode grids (validate/NAME.csv): one row per (config, tp, batch, ctx).
 *
 * Contract: grid_load reads an RFC 4180 CSV (csv.h: quoted fields, CRLF, a UTF-8 byte order
 * mark) whose '#' lines are provenance comments and whose first
 * other line is a header naming at least config, tp, batch, ctx, measured_ms (any order);
 * pred_compute_ms, pred_comm_ms, full_pred_ms and error_pct are optional (a study's own
 * predictions, for reproduction checks; NAN when absent). A config is "NAME TP-K" with K
 * equal to the row's tp. Refused with "file:line: message": a missing or unknown or
 * repeated column, a wrong field count, a non-numeric or out-of-range value, a duplicate
 * cell, an unknown config, no rows. The grid owns its rows; free with grid_free.
 */
#ifndef TPSIM_GRID_H
#define TPSIM_GRID_H

#include <stddef.h>

#include "err.h"

typedef struct grid_cell {
    char config[48];
    long tp, batch, ctx;
    double measured_ms;
    double pred_compute_ms, pred_comm_ms, full_pred_ms, error_pct; /* NAN if absent */
    int line;
} grid_cell;

typedef struct grid {
    char path[512];
    grid_cell *cells;
    size_t n;
} grid;

int grid_load(const char *path, grid *out, tp_err *err);
void grid_free(grid *g);
/* The cell (tp, batch, ctx), or NULL. */
const grid_cell *grid_find(const grid *g, long tp, long batch, long ctx);

#endif
