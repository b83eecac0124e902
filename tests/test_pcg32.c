/* test_pcg32.c: PCG32 against its published reference output, and the distributions'
 * moments (fixed seeds, so these are deterministic checks, not flaky statistics). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "dist.h"
#include "pcg32.h"

/* pcg32-demo (pcg-random.org, pcg-c-basic) prints these for seed 42, stream 54. */
static void test_reference_output(void **state)
{
    (void)state;
    static const uint32_t expect[] = {0xa15c02b7, 0x7b47f409, 0xba1d3330,
                                      0x83d2f293, 0xbfa4784b, 0xcbed606e};
    pcg32 r;
    pcg32_seed(&r, 42, 54);
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
        assert_int_equal(pcg32_next(&r), expect[i]);
}

static void test_streams_independent(void **state)
{
    (void)state;
    pcg32 a, b, a2;
    pcg32_seed(&a, 42, 0);
    pcg32_seed(&b, 42, 1);
    pcg32_seed(&a2, 42, 0);
    int same = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t x = pcg32_next(&a), y = pcg32_next(&b);
        same += x == y;
        assert_int_equal(x, pcg32_next(&a2)); /* re-seeding reproduces */
    }
    assert_true(same < 3);
}

static void test_bounded_unbiased(void **state)
{
    (void)state;
    pcg32 r;
    pcg32_seed(&r, 7, 3);
    long counts[6] = {0};
    for (int i = 0; i < 60000; i++) {
        uint32_t v = pcg32_bounded(&r, 6);
        assert_true(v < 6);
        counts[v]++;
    }
    for (int i = 0; i < 6; i++) assert_true(labs(counts[i] - 10000) < 400); /* ~4 sigma */
    /* a bound near 2^32 exercises the rejection threshold */
    for (int i = 0; i < 1000; i++) assert_true(pcg32_bounded(&r, 0xfffffff0u) < 0xfffffff0u);
    assert_int_equal(pcg32_bounded(&r, 1), 0);
}

static void test_unit_interval(void **state)
{
    (void)state;
    pcg32 r;
    pcg32_seed(&r, 1, 1);
    double sum = 0;
    for (int i = 0; i < 100000; i++) {
        double u = pcg32_unit(&r);
        assert_true(u >= 0.0 && u < 1.0);
        sum += u;
    }
    assert_true(fabs(sum / 100000 - 0.5) < 0.005);
}

static void moments(dist d, uint64_t seed, double *mean, double *cv, double *min)
{
    dist_rng r;
    dist_rng_seed(&r, seed, 0);
    double s = 0, s2 = 0, lo = INFINITY;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double x = dist_sample(&d, &r);
        s += x;
        s2 += x * x;
        if (x < lo) lo = x;
    }
    *mean = s / n;
    *cv = sqrt(s2 / n - *mean * *mean) / *mean;
    *min = lo;
}

static void test_distribution_moments(void **state)
{
    (void)state;
    double mean, cv, min;
    dist_kind kinds[] = {DIST_UNIFORM, DIST_NORMAL, DIST_LOGNORMAL};
    for (size_t i = 0; i < 3; i++) {
        moments(dist_make(kinds[i], 10e-6, 0.25), 11 + i, &mean, &cv, &min);
        assert_true(fabs(mean / 10e-6 - 1) < 0.01);
        assert_true(fabs(cv / 0.25 - 1) < 0.03);
        assert_true(min >= 0);
    }
    /* a wide normal is clamped at zero, never negative */
    moments(dist_make(DIST_NORMAL, 1.0, 2.0), 5, &mean, &cv, &min);
    assert_true(min == 0.0);
    /* lognormal keeps its mean even when skewed */
    moments(dist_make(DIST_LOGNORMAL, 5e-6, 1.0), 9, &mean, &cv, &min);
    assert_true(fabs(mean / 5e-6 - 1) < 0.02);
}

static void test_constant_draws_nothing(void **state)
{
    (void)state;
    dist_rng r;
    pcg32 ref;
    dist_rng_seed(&r, 3, 3);
    pcg32_seed(&ref, 3, 3);
    dist c = dist_const(2.5e-6), zero_cv = dist_make(DIST_LOGNORMAL, 4e-6, 0.0);
    assert_true(dist_sample(&c, &r) == 2.5e-6);
    assert_true(dist_sample(&zero_cv, &r) == 4e-6);
    assert_int_equal(pcg32_next(&r.pcg), pcg32_next(&ref)); /* the stream did not move */
}

static void test_kind_names(void **state)
{
    (void)state;
    dist_kind k;
    assert_int_equal(dist_parse_kind("lognormal", &k), 0);
    assert_int_equal(k, DIST_LOGNORMAL);
    assert_string_equal(dist_kind_name(DIST_UNIFORM), "uniform");
    assert_int_equal(dist_parse_kind("gamma", &k), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_output),   cmocka_unit_test(test_streams_independent),
        cmocka_unit_test(test_bounded_unbiased),   cmocka_unit_test(test_unit_interval),
        cmocka_unit_test(test_distribution_moments), cmocka_unit_test(test_constant_draws_nothing),
        cmocka_unit_test(test_kind_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
