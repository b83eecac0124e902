/* kgrid.c: see kgrid.h. */
#include "kgrid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kcal.h"

int kg_class_dims(int cls, const char *const **names)
{
    static const char *const gemm[] = {"n", "k", "m"};
    static const char *const attn[] = {"kv_bytes", "head_dim", "kv_heads", "q_heads", "context",
                                       "batch"};
    static const char *const pre[] = {"kv_bytes", "head_dim", "kv_heads", "q_heads", "isl",
                                      "batch"};
    const char *const *n = NULL;
    int d = 0;
    if (cls == KC_GEMM || cls == KC_GEMM_FP8) n = gemm, d = 3;
    if (cls == KC_ATTENTION) n = attn, d = 6;
    if (cls == KC_PREFILL_ATTN) n = pre, d = 6;
    if (names) *names = n;
    return d;
}

/* The index of the first axis value >= v (n when none). */
static int kg_lower(const double *a, int n, double v)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* One axis: the distinct values of the points' coordinate d, ascending (each inserted in
 * place: an axis has few values, the points many). */
static int kg_axis(const double (*x)[KG_MAX_DIMS], size_t n, int d, kg_grid *g)
{
    double *a = g->axis[d];
    int m = 0;
    for (size_t i = 0; i < n; i++) {
        double v = x[i][d];
        int at = kg_lower(a, m, v);
        if (at < m && a[at] == v) continue;
        if (m == KG_MAX_AXIS) return -1;
        memmove(a + at + 1, a + at, (size_t)(m - at) * sizeof *a);
        a[at] = v;
        m++;
    }
    g->n[d] = m;
    return 0;
}

int kg_build(const double (*x)[KG_MAX_DIMS], const double *t, size_t n, int dims, kg_grid *g,
             float *cells, size_t cap, size_t *need)
{
    memset(g, 0, sizeof *g);
    *need = 0;
    if (!n || dims < 1 || dims > KG_MAX_DIMS) return -1;
    g->dims = dims;
    for (int d = 0; d < dims; d++)
        if (kg_axis(x, n, d, g)) return -1;
    size_t total = 1;
    for (int d = dims - 1; d >= 0; d--) {
        g->stride[d] = total;
        total *= (size_t)g->n[d];
    }
    *need = total;
    if (total > cap) return -1;
    double *sum = calloc(total, sizeof *sum), *cnt = calloc(total, sizeof *cnt);
    if (!sum || !cnt) {
        free(sum), free(cnt);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        for (int d = 0; d < dims; d++)
            c += (size_t)kg_lower(g->axis[d], g->n[d], x[i][d]) * g->stride[d];
        sum[c] += log(t[i]);
        cnt[c] += 1;
    }
    for (size_t c = 0; c < total; c++) {
        cells[c] = cnt[c] > 0 ? (float)exp(sum[c] / cnt[c]) : NAN;
        g->points += cnt[c] > 0;
    }
    g->cells = total;
    free(sum), free(cnt);
    return 0;
}

/* The time at x over the cells under `base` from axis d on (NaN: no data there). */
static double kg_at(const kg_grid *g, const float *c, int d, size_t base, const double *x)
{
    if (d == g->dims) return (double)c[base];
    const double *a = g->axis[d];
    int n = g->n[d], i = kg_lower(a, n, x[d]);
    size_t s = g->stride[d];
    if (i == 0 && x[d] < a[0]) return kg_at(g, c, d + 1, base, x); /* the edge's floor */
    if (i == n) { /* above the top edge: grows with the work */
        double v = kg_at(g, c, d + 1, base + (size_t)(n - 1) * s, x);
        return v * x[d] / a[n - 1];
    }
    int exact = a[i] == x[d];
    if (exact) {
        double v = kg_at(g, c, d + 1, base + (size_t)i * s, x);
        if (!isnan(v)) return v;
    }
    /* inside the axis: the nearest values with data on both sides, else none here (an
     * outer axis then reads its neighbours) */
    double tl = NAN, th = NAN;
    int il = -1, ih = -1;
    for (int j = i - 1; j >= 0 && il < 0; j--)
        if (!isnan(tl = kg_at(g, c, d + 1, base + (size_t)j * s, x))) il = j;
    for (int j = exact ? i + 1 : i; j < n && ih < 0 && il >= 0; j++)
        if (!isnan(th = kg_at(g, c, d + 1, base + (size_t)j * s, x))) ih = j;
    if (il < 0 || ih < 0) return NAN;
    double w = log(x[d] / a[il]) / log(a[ih] / a[il]);
    return exp((1.0 - w) * log(tl) + w * log(th));
}

double kg_eval(const kg_grid *g, const float *cells, const double *x)
{
    if (!g || g->dims < 1) return NAN;
    return kg_at(g, cells, 0, 0, x);
}
