/* test_zig.c: the ziggurat normal (sim/zig.h) against the closed form. Its tables are
 * checked against their definition (recomputed here in long double from exp and erfc), its
 * draws against N(0, 1): moments, a Kolmogorov-Smirnov distance, a chi-square over 1,000
 * equiprobable bins (finer than a layer: 256 layers), the tail beyond r (drawn by its own
 * method) by count and conditional mean. Fixed seeds: deterministic checks; the bounds are
 * 5-sigma (or the 0.1% critical value) of the statistic under the null, derived below. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "zig.h"

static long double zf(long double x) { return expl(-0.5L * x * x); }
static double phi_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

static void test_tables_match_definition(void **state)
{
    (void)state;
    const long double r = zig_r, v = zig_v, two52 = 4503599627370496.0L;
    /* the base layer: r f(r) plus the tail's area sqrt(pi/2) erfc(r / sqrt 2) */
    long double tail = sqrtl(acosl(-1.0L) / 2) * erfcl(r / sqrtl(2.0L));
    assert_true(fabsl(r * zf(r) + tail - v) < 1e-15L);
    assert_true(fabsl((long double)zig_w[0] * two52 - v / zf(r)) < 1e-15L * v / zf(r));
    assert_true(fabsl((long double)zig_w[1] * two52 - r) < 1e-15L);
    assert_true(zig_f[ZIG_LAYERS] == 1.0);
    for (int i = 1; i < ZIG_LAYERS; i++) {
        long double x = (long double)zig_w[i] * two52;
        long double xn = i + 1 < ZIG_LAYERS ? (long double)zig_w[i + 1] * two52 : 0.0L;
        assert_true(xn < x);
        assert_true(fabsl(zig_f[i] - zf(x)) < 1e-15L); /* f is exp(-x^2/2) at the edge */
        /* every layer has area v (the last ends at f = 1 above x = 0) */
        long double fn = i + 1 < ZIG_LAYERS ? zf(xn) : 1.0L;
        assert_true(fabsl(x * (fn - zf(x)) - v) < 1e-9L * v);
    }
    for (int i = 0; i < ZIG_LAYERS; i++) {
        long double x = (long double)zig_w[i] * two52;
        long double xn = i + 1 < ZIG_LAYERS ? (long double)zig_w[i + 1] * two52 : 0.0L;
        /* k[i] / 2^52 is the share of layer i's width that lies under the curve */
        assert_true(fabsl((long double)zig_k[i] - xn / x * two52) <= 1.0L);
        assert_true((long double)zig_k[i] <= xn / x * two52); /* never over: exactness */
    }
}

enum { N_DRAWS = 1000000 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_moments_and_ks(void **state)
{
    (void)state;
    double *x = malloc(N_DRAWS * sizeof *x);
    assert_non_null(x);
    pcg32 g;
    pcg32_seed(&g, 2026, 21);
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
    for (int i = 0; i < N_DRAWS; i++) {
        double z = x[i] = zig_normal(&g);
        s1 += z, s2 += z * z, s3 += z * z * z, s4 += z * z * z * z;
    }
    const double n = N_DRAWS, m = s1 / n, var = s2 / n - m * m;
    /* standard errors under N(0,1): mean 1/sqrt(n), E z^2 sqrt(2/n), E z^3 sqrt(15/n),
     * E z^4 sqrt(96/n) (Var z^4 = E z^8 - 9 = 105 - 9) */
    assert_true(fabs(m) < 5 / sqrt(n));
    assert_true(fabs(var - 1) < 5 * sqrt(2 / n));
    assert_true(fabs(s3 / n) < 5 * sqrt(15 / n));
    assert_true(fabs(s4 / n - 3) < 5 * sqrt(96 / n));
    /* Kolmogorov-Smirnov: sqrt(n) D exceeds 1.95 with probability 0.001 */
    qsort(x, N_DRAWS, sizeof *x, cmp_double);
    double d = 0;
    for (int i = 0; i < N_DRAWS; i++) {
        double c = phi_cdf(x[i]), lo = c - i / n, hi = (i + 1) / n - c;
        if (lo > d) d = lo;
        if (hi > d) d = hi;
    }
    assert_true(sqrt(n) * d < 1.95);
    free(x);
}

static void test_chi_square_fine_bins(void **state)
{
    (void)state;
    enum { BINS = 1000, N = 4000000 };
    long *count = calloc(BINS, sizeof *count);
    assert_non_null(count);
    pcg32 g;
    pcg32_seed(&g, 7, 3);
    for (long i = 0; i < N; i++) {
        int b = (int)(phi_cdf(zig_normal(&g)) * BINS);
        count[b < BINS ? b : BINS - 1]++;
    }
    double chi2 = 0, e = (double)N / BINS;
    for (int b = 0; b < BINS; b++) chi2 += (count[b] - e) * (count[b] - e) / e;
    /* chi-square with 999 degrees of freedom: mean 999, sd sqrt(2 * 999) = 44.7 */
    assert_true(chi2 < 999 + 5 * 44.7);
    free(count);
}

static void test_tail(void **state)
{
    (void)state;
    pcg32 g;
    pcg32_seed(&g, 99, 1);
    const long n = 4000000;
    long hits = 0, neg = 0;
    double sum = 0;
    for (long i = 0; i < n; i++) {
        double z = zig_normal(&g);
        if (fabs(z) > zig_r) {
            hits++;
            neg += z < 0;
            sum += fabs(z);
        }
    }
    /* P(|z| > r) = erfc(r / sqrt 2); a binomial count, 5 sigma */
    double p = erfc(zig_r / sqrt(2.0)), e = p * (double)n;
    assert_true(fabs((double)hits - e) < 5 * sqrt(e));
    assert_true(labs(2 * neg - hits) < 5 * (long)sqrt((double)hits) + 1); /* both sides */
    /* E[z | z > r] = phi(r) / (1 - Phi(r)); Var[z | z > r] < 1/r^2 ~ 0.075, 5 sigma */
    double cond =
        exp(-0.5 * zig_r * zig_r) / sqrt(2 * acos(-1.0)) / (0.5 * erfc(zig_r / sqrt(2.0)));
    assert_true(fabs(sum / (double)hits - cond) < 5 * sqrt(0.075 / (double)hits));
}

/* The tail sampler alone (layer 0 of zig_normal_slow): Marsaglia's r + a, a ~ Exp(r), kept
 * with probability exp(-a^2 / 2), must draw Z conditioned on Z > r. Closed forms: the mean
 * E[Z | Z > r] = phi(r) / Q(r), and P(Z > r + d | Z > r) = Q(r + d) / Q(r), Q(x) = erfc(x /
 * sqrt 2) / 2. 200,000 draws put the mean within 5 sigma (Var < 1 / r^2) of it; without the
 * acceptance test (every a kept) the mean is r + 1/r, 0.019 higher: 29 sigma. */
static void test_tail_sampler(void **state)
{
    (void)state;
    pcg32 g;
    pcg32_seed(&g, 7, 3);
    const long n = 200000;
    const double d[3] = {0.1, 0.3, 0.6};
    long over[3] = {0, 0, 0};
    double sum = 0;
    for (long i = 0; i < n; i++) {
        double z = zig_normal_slow(&g, 0, 0, 0);
        assert_true(z > zig_r);
        sum += z;
        for (int k = 0; k < 3; k++) over[k] += z > zig_r + d[k];
    }
    double q = 0.5 * erfc(zig_r / sqrt(2.0));
    double mean = exp(-0.5 * zig_r * zig_r) / sqrt(2 * acos(-1.0)) / q;
    assert_true(fabs(sum / (double)n - mean) < 5 * sqrt(1 / (zig_r * zig_r) / (double)n));
    for (int k = 0; k < 3; k++) {
        double p = 0.5 * erfc((zig_r + d[k]) / sqrt(2.0)) / q, e = p * (double)n;
        assert_true(fabs((double)over[k] - e) < 5 * sqrt(e * (1 - p)));
    }
    /* the sign flag mirrors it */
    assert_true(zig_normal_slow(&g, 0, 0, 1) < -zig_r);
}

static void test_reproducible(void **state)
{
    (void)state;
    pcg32 a, b;
    pcg32_seed(&a, 5, 5);
    pcg32_seed(&b, 5, 5);
    for (int i = 0; i < 10000; i++) assert_true(zig_normal(&a) == zig_normal(&b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_match_definition), cmocka_unit_test(test_moments_and_ks),
        cmocka_unit_test(test_chi_square_fine_bins),   cmocka_unit_test(test_tail),
        cmocka_unit_test(test_tail_sampler),
        cmocka_unit_test(test_reproducible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
