/* kgrid.h: a measured-grid kernel cost law: times read from a table of measured points by
 * interpolation, not from a fitted formula.
 *
 * Contract: a kg_grid is a dense grid over up to KG_MAX_DIMS axes (each ascending, values
 * > 0), its cells (times, us; NaN where nothing was measured) in a caller-owned float array.
 * kg_build makes one from scattered points (duplicates of a point: their geometric mean).
 * kg_eval reads a time at x by nested interpolation, axis 0 outermost: on each axis the
 * nearest values below and above x whose cells (under the axes already fixed) hold data are
 * interpolated linearly in (log x, log t), so the grid is exact on its points and monotone
 * between two neighbouring points when their times are; where one side has no data there
 * (a shape not measured), the outer axis reads its neighbours instead. Beyond an axis's
 * edge: above its largest value the time grows in proportion to x (t_edge * x / x_edge: the
 * work of a GEMM's m, n, k or attention's batch, context and heads grows so); below its
 * smallest it is the edge's time (a kernel no smaller than the smallest measured costs no
 * less: a latency floor). NaN when no data brackets x (the caller prices by its law).
 * The axes per kernel class (kg_class_dims): gemm n, k, m (y[m,n] = x[m,k] W^T); decode
 * attention kv_bytes, head_dim, kv_heads, q_heads, context, batch (heads per GPU); prefill
 * attention the same with the new tokens per sequence for the context. Pure functions.
 */
#ifndef TPSIM_KGRID_H
#define TPSIM_KGRID_H

#include <stddef.h>

#define KG_MAX_DIMS 6
#define KG_MAX_AXIS 320

typedef struct kg_grid {
    int dims;                           /* 0: no grid */
    int n[KG_MAX_DIMS];                 /* values on each axis */
    size_t stride[KG_MAX_DIMS];         /* cells between neighbours on each axis */
    size_t off, cells;                  /* its cells: pool[off .. off + cells) */
    size_t points;                      /* cells that hold a measured time */
    double axis[KG_MAX_DIMS][KG_MAX_AXIS];
} kg_grid;

/* The axes of a kernel class's grid (kcal_class): their count and names, 0 for a class with
 * no grid. */
int kg_class_dims(int cls, const char *const **names);
/* Build g from n points x[i][0..dims-1] (> 0) with times t[i] (us, > 0) into cells[0..cap):
 * 0, or -1 when an axis would have more than KG_MAX_AXIS values or the cells exceed cap
 * (*need says how many it takes). g->off is 0. */
int kg_build(const double (*x)[KG_MAX_DIMS], const double *t, size_t n, int dims, kg_grid *g,
             float *cells, size_t cap, size_t *need);
/* The time (us) at x[0..dims-1], cells being the grid's own (pool + g->off). */
double kg_eval(const kg_grid *g, const float *cells, const double *x);

#endif
