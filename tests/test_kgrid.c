/* test_kgrid.c: the measured-grid law (sim/kgrid.h), AIConfigurator's tables read by
 * calibrate/kprof.h, and the grid priced through kcal and cost. Expected values are derived by
 * hand, by closed forms, or by the awk lines in tests/data/README.md (aic/), never from
 * tpsim's output. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kcal.h"
#include "kfit.h"
#include "kgrid.h"
#include "kprof.h"

#define AIC "tests/data/aic/"

/* t = 2 + m * n * k / 1e9 us on a 3-axis grid: interpolation in (log x, log t) is exact on
 * every grid point, lies between its neighbours, and is monotone along an axis. */
static double synth_t(double n, double k, double m) { return 2.0 + m * n * k / 1e9; }

static void build_synth(kg_grid *g, float *cells, size_t cap, int drop_shape)
{
    static const double ns[] = {256, 1024, 4096}, ks[] = {512, 2048}, ms[] = {1, 8, 64, 512};
    double (*x)[KG_MAX_DIMS] = calloc(24, sizeof *x), *t = calloc(24, sizeof *t);
    size_t n = 0, need;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < 4; c++) {
                if (drop_shape && a == 1 && b == 1) continue; /* n 1024 x k 2048 left out */
                x[n][0] = ns[a], x[n][1] = ks[b], x[n][2] = ms[c];
                t[n++] = synth_t(ns[a], ks[b], ms[c]);
            }
    assert_int_equal(kg_build((const double (*)[KG_MAX_DIMS])x, t, n, 3, g, cells, cap, &need),
                     0);
    assert_int_equal(need, 24);
    assert_int_equal(g->points, n);
    free(x);
    free(t);
}

static void test_grid_exact_and_monotone(void **state)
{
    (void)state;
    kg_grid g;
    float cells[64];
    build_synth(&g, cells, 64, 0);
    double x[3] = {1024, 2048, 8};
    /* exact on grid points (float cells: 1e-6 relative) */
    for (double m = 1; m <= 512; m *= 8) {
        x[2] = m;
        assert_true(fabs(kg_eval(&g, cells, x) / synth_t(1024, 2048, m) - 1) < 1e-6);
    }
    /* between m = 8 and 64 at n 1024, k 2048: t(m) = t8^(1-w) t64^w, w = log(m/8)/log 8 */
    double t8 = synth_t(1024, 2048, 8), t64 = synth_t(1024, 2048, 64), prev = 0;
    for (double m = 8; m <= 64; m += 1) {
        x[2] = m;
        double w = log(m / 8) / log(8), want = exp((1 - w) * log(t8) + w * log(t64));
        double got = kg_eval(&g, cells, x);
        assert_true(fabs(got / want - 1) < 1e-6);
        assert_true(got >= prev); /* monotone between the neighbours */
        prev = got;
    }
    /* halfway in log n between 1024 and 4096 (n = 2048), on grid k and m: the geometric mean */
    x[0] = 2048, x[1] = 512, x[2] = 64;
    double gm = sqrt(synth_t(1024, 512, 64) * synth_t(4096, 512, 64));
    assert_true(fabs(kg_eval(&g, cells, x) / gm - 1) < 1e-6);
    /* beyond the edges: above, in proportion; below, the edge's time */
    x[0] = 1024, x[1] = 2048, x[2] = 1024; /* m twice the largest */
    assert_true(fabs(kg_eval(&g, cells, x) / (2 * synth_t(1024, 2048, 512)) - 1) < 1e-6);
    x[0] = 64, x[2] = 1; /* n a quarter of the smallest */
    assert_true(fabs(kg_eval(&g, cells, x) / synth_t(256, 2048, 1) - 1) < 1e-6);
}

/* A shape left out is read from the shapes around it: n 1024 x k 2048 from n 256 and 4096
 * at k 2048 (the nearest measured n on each side), geometric in log n. */
static void test_grid_missing_shape(void **state)
{
    (void)state;
    kg_grid g;
    float cells[64];
    build_synth(&g, cells, 64, 1);
    assert_int_equal(g.points, 20);
    double x[3] = {1024, 2048, 64};
    double w = log(1024.0 / 256) / log(4096.0 / 256);
    double want = exp((1 - w) * log(synth_t(256, 2048, 64)) + w * log(synth_t(4096, 2048, 64)));
    assert_true(fabs(kg_eval(&g, cells, x) / want - 1) < 1e-6);
}

static void test_grid_too_big(void **state)
{
    (void)state;
    kg_grid g;
    float cells[8];
    double x[2][KG_MAX_DIMS] = {{1, 1, 1}, {2, 2, 2}}, t[2] = {1, 2};
    size_t need;
    assert_int_equal(kg_build((const double (*)[KG_MAX_DIMS])x, t, 2, 3, &g, cells, 7, &need),
                     -1);
    assert_int_equal(need, 8);
}

/* Row counts and sums of the test subsets, by the awk lines of tests/data/README.md (aic/). */
static void sums(const char *path, int cls, size_t *n, double *us, size_t *skipped)
{
    kp_set set = {0};
    tp_err err = {{0}};
    assert_int_equal(kp_read(path, &set, &err), 0);
    *n = 0, *us = 0;
    for (size_t i = 0; i < set.n; i++)
        if (set.s[i].cls == cls) ++*n, *us += set.s[i].us;
    *skipped = set.aic_skipped;
    assert_int_equal(set.n_provenance, 1);
    assert_non_null(strstr(set.provenance[0], "095f58a51c4ca8e61b66ec108d86f223f8d559ce"));
    kp_free(&set);
}

static void test_aic_reader(void **state)
{
    (void)state;
    size_t n, sk;
    double us;
    sums(AIC "h100-gemm-subset.csv", KC_GEMM, &n, &us, &sk);
    assert_int_equal(n, 32), assert_int_equal(sk, 4);
    assert_true(fabs(us - 1458.927118944) < 1e-6);
    sums(AIC "h100-gemm-subset.csv", KC_GEMM_FP8, &n, &us, &sk);
    assert_int_equal(n, 32);
    assert_true(fabs(us - 1016.088014676) < 1e-6);
    sums(AIC "h200-gemm-subset.csv", KC_GEMM, &n, &us, &sk);
    assert_int_equal(n, 32);
    assert_true(fabs(us - 1365.542194910) < 1e-6);
    sums(AIC "h100-gen-attention-subset.csv", KC_ATTENTION, &n, &us, &sk);
    assert_int_equal(n, 18), assert_int_equal(sk, 18);
    assert_true(fabs(us - 465.882671376) < 1e-6);
    sums(AIC "h200-gen-attention-subset.csv", KC_ATTENTION, &n, &us, &sk);
    assert_int_equal(n, 16), assert_int_equal(sk, 8);
    assert_true(fabs(us - 233.119999369) < 1e-6);
    sums(AIC "h100-ctx-attention-subset.csv", KC_PREFILL_ATTN, &n, &us, &sk);
    assert_int_equal(n, 8), assert_int_equal(sk, 8);
    assert_true(fabs(us - 1334.575993319) < 1e-6);
}

/* A GEMM row's bytes and FLOPs as prog_linear counts them: bf16 2nk + m(2k + 2n); FP8 W8A8
 * nk + 4 (the scale) + m(k + 2n); FLOPs 2mnk. The grid axes are n, k, m. */
static void test_aic_gemm_counts(void **state)
{
    (void)state;
    kp_set set = {0};
    tp_err err = {{0}};
    assert_int_equal(kp_read(AIC "h100-gemm-subset.csv", &set, &err), 0);
    int seen = 0;
    for (size_t i = 0; i < set.n; i++) {
        const kp_sample *s = &set.s[i];
        double n = s->gx[0], k = s->gx[1], m = s->gx[2];
        if (n != 8192 || k != 1024 || m != 64) continue;
        double want = s->cls == KC_GEMM ? 2 * n * k + m * (2 * k + 2 * n)
                                        : n * k + 4 + m * (k + 2 * n);
        assert_true(fabs(s->bytes - want) < 1e-9 * want);
        assert_true(fabs(s->flops - 2 * m * n * k) < 1);
        assert_true(s->fold >= 3000 && s->fold < 3000 + KP_SHAPE_FOLDS);
        seen++;
    }
    assert_int_equal(seen, 2);
    kp_free(&set);
}

/* A held-out row the grid cannot read is priced by the fallback law, as kcal_time prices it,
 * not counted as a 100% miss. Times follow t = 3 + bytes / 2000 us exactly (bytes of a bf16
 * GEMM), a law among the candidates (linear), so the fitted fallback prices every row with no
 * error (closed form). Three folds of gemm shapes n x k: (1024, 1024), (4096, 4096),
 * (1024, 2048); with the third held out the grid has k 1024 and 4096 at n 1024 only the first
 * measured, so (1024, 2048) has no data above it on k and none below 1024 on n: unreadable
 * (kgrid.h). Its fold's grid error is then the fallback's, 0, where a miss would read 100. */
static void test_heldout_unreadable_row_uses_fallback(void **state)
{
    (void)state;
    static const double shapes[3][2] = {{1024, 1024}, {4096, 4096}, {1024, 2048}};
    static const double ms[] = {1, 16, 256};
    kp_sample rows[9];
    kp_set set = {.s = rows, .n = 9, .cap = 9};
    memset(rows, 0, sizeof rows);
    for (int f = 0; f < 3; f++)
        for (int i = 0; i < 3; i++) {
            kp_sample *r = &rows[f * 3 + i];
            double n = shapes[f][0], k = shapes[f][1], m = ms[i];
            r->cls = KC_GEMM, r->fold = f, r->w = 1, r->batch = m;
            r->bytes = 2 * (m * k + k * n + m * n);
            r->flops = 2 * m * n * k;
            r->us = 3 + r->bytes / 2000;
            r->gx[0] = n, r->gx[1] = k, r->gx[2] = m;
        }
    kg_grid *g = malloc(sizeof *g);
    float *cells = NULL;
    const kp_sample *train[6];
    for (int i = 0; i < 6; i++) train[i] = &rows[i];
    assert_int_equal(kf_grid(train, 6, KC_GEMM, g, &cells), 0);
    assert_true(isnan(kg_eval(g, cells, rows[6].gx))); /* the premise: unreadable */
    free(cells);
    free(g);
    kf_class_fit *fit = malloc(sizeof *fit);
    assert_int_equal(kf_fit_class(&set, KC_GEMM, fit), 0);
    assert_int_equal(fit->n_folds, 3);
    assert_int_equal(fit->fold_id[2], 2);
    assert_true(fit->fold_pct[KL_GRID][2] >= 0 && fit->fold_pct[KL_GRID][2] < 1e-6);
    free(fit);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_exact_and_monotone), cmocka_unit_test(test_grid_missing_shape),
        cmocka_unit_test(test_grid_too_big),            cmocka_unit_test(test_aic_reader),
        cmocka_unit_test(test_aic_gemm_counts),
        cmocka_unit_test(test_heldout_unreadable_row_uses_fallback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
