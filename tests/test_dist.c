/* test_dist.c: dist_exp (sim/dist.h) against the C library's exp, bit for bit (0 ulp), and
 * its table against its definition; a lognormal cost per rank drawn the batched way
 * (exponents rank by rank, then dist_exp_n) against dist_sample drawn rank by rank.
 * The expectations are independent of dist_exp's code: libm's exp, and 2^(j/128) from
 * exp2l in long double. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"

#define LN2 0.693147180559945309417232121458176568 /* ln 2 to 36 digits */

static uint64_t bits_of(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static double double_of(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* the same bits, or both NaN */
static void assert_exp_equal(double x)
{
    double want = exp(x), got = dist_exp(x);
    if (isnan(want) && isnan(got)) return;
    if (bits_of(want) != bits_of(got))
        fail_msg("dist_exp(%a) = %a, exp gives %a", x, got, want);
}

/* 2^(j/128) in binary128 (__float128: its + - * / are libgcc's, exact to 2^-113): the
 * product of 2^(2^b/128) over j's set bits b, each factor a square root of the next (Newton
 * from a double seed), so the value is within about 2^-110 of 2^(j/128), beyond a double
 * tail's last bit (2^-107 and below). */
typedef __float128 quad;

static quad quad_sqrt(quad a)
{
    quad x = (quad)sqrt((double)a);
    for (int i = 0; i < 3; i++) x = (x + a / x) / 2;
    return x;
}

static quad quad_exp2_frac(int j)
{
    quad f[7], v = 1;
    f[6] = quad_sqrt(2); /* 2^(64/128) */
    for (int b = 5; b >= 0; b--) f[b] = quad_sqrt(f[b + 1]);
    for (int b = 0; b < 7; b++)
        if (j >> b & 1) v *= f[b];
    return v;
}

/* scale_j (tab[2j+1] + j << 45) is 2^(j/N) rounded to the nearest double, and tail_j the
 * nearest double to (2^(j/N) - scale_j) / scale_j: within half an ulp of it, give or take
 * 2^-109 for the quad's own error (some tails lie within 1/100 ulp of a tie, j = 2; the
 * smallest are 2^-60, whose ulp is 2^-112). A wrong last bit in a tail larger than 2^-56
 * fails here; below that it moves no result of exp by more than 2^-56 ulp. */
static void test_table_matches_definition(void **state)
{
    (void)state;
    for (int j = 0; j < DIST_EXP_N; j++) {
        quad want = quad_exp2_frac(j);
        double scale = double_of(dist_exp_tab[2 * j + 1] + ((uint64_t)j << 45));
        double tail = double_of(dist_exp_tab[2 * j]);
        quad t = (want - scale) / scale, ulp = (quad)nextafter(tail, 1.0) - tail, d = t - tail;
        if (scale != (double)want || (d < 0 ? -d : d) > ulp / 2 + (quad)0x1p-109)
            fail_msg("table entry %d: scale %a tail %a, want %a %a", j, scale, tail,
                     (double)want, (double)t);
        /* and against libm's long double, independently of the square roots above */
        assert_true(fabsl(scale + (long double)scale * tail - exp2l((long double)j / 128)) <=
                    4 * LDBL_EPSILON);
    }
    /* N / ln2 and ln2 / N split in two: the split's sum is ln2 / N to long double precision */
    const long double ln2 = 0.693147180559945309417232121458176568L;
    assert_true(fabsl(dist_exp_c[DIST_EXP_INVLN2N] - DIST_EXP_N / ln2) <= 2e-14L);
    long double ln2n = -(long double)dist_exp_c[DIST_EXP_NEGLN2HIN];
    ln2n -= dist_exp_c[DIST_EXP_NEGLN2LON];
    assert_true(fabsl(ln2n - ln2 / DIST_EXP_N) <= 1e-20L * ln2 / DIST_EXP_N);
    /* 1 + r + C2 r^2 + ... is exp's Taylor series to ~2^-14 in each coefficient */
    assert_true(fabs(dist_exp_c[DIST_EXP_C2] - 1.0 / 2) < 1e-9);
    assert_true(fabs(dist_exp_c[DIST_EXP_C3] - 1.0 / 6) < 1e-9);
    assert_true(fabs(dist_exp_c[DIST_EXP_C4] - 1.0 / 24) < 1e-7);
    assert_true(fabs(dist_exp_c[DIST_EXP_C5] - 1.0 / 120) < 1e-7);
}

static void test_exp_special_values(void **state)
{
    (void)state;
    const double v[] = {0.0,        -0.0,      1.0,       -1.0,     0x1p-54,  -0x1p-54,
                        0x1p-55,    0x1.fffffffffffffp-55,        512.0,    -512.0,
                        0x1.fffffffffffffp8,   -0x1.fffffffffffffp8,          709.78,   709.79,
                        -708.39,    -708.4,    -745.13,   -745.14,  -1000.0,  1000.0,
                        INFINITY,   -INFINITY, NAN,       DBL_MIN,  -DBL_MIN, 5e-324,
                        DBL_MAX,    -DBL_MAX,  LN2,       -LN2,      1e-300,   -11.33};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        assert_exp_equal(v[i]);
        assert_exp_equal(nextafter(v[i], INFINITY));
        assert_exp_equal(nextafter(v[i], -INFINITY));
    }
}

/* Random arguments: the lognormal costs' range (mean 1 ns .. 10 s, cv up to 3, z to +-9)
 * densely, exp's whole finite range, and the edges of every table interval (x near k ln2 /
 * 128, where the rounding of k changes). */
static void test_exp_matches_libm(void **state)
{
    (void)state;
    pcg32 g;
    pcg32_seed(&g, 20260601, 3);
    for (long i = 0; i < 3000000; i++) {
        double u = pcg32_unit(&g);
        assert_exp_equal(-40.0 + 43.0 * u);                       /* lognormal costs */
        assert_exp_equal(-746.0 + 1456.0 * pcg32_unit(&g));       /* the whole range */
        /* any double, by its bits: tiny, huge, subnormal, NaN, infinities */
        assert_exp_equal(double_of(((uint64_t)pcg32_next(&g) << 32) | pcg32_next(&g)));
    }
    for (long k = -200000; k <= 200000; k++) {
        double x = (double)k * (LN2 / DIST_EXP_N) + 0.5 * (LN2 / DIST_EXP_N);
        assert_exp_equal(x);
        assert_exp_equal(nextafter(x, INFINITY));
        assert_exp_equal(nextafter(x, -INFINITY));
    }
}

/* dist_exp_n over mixed arguments (fast path and exp's special cases) equals dist_exp on each */
static void test_exp_n(void **state)
{
    (void)state;
    const double v[] = {-11.3, 0.0, 3.0, -1e-300, 800.0, -800.0, NAN, -9.8, 1e-20, -14.2, 2.5};
    const size_t nv = sizeof v / sizeof v[0];
    for (size_t n = 0; n <= nv; n++) {
        double x[sizeof v / sizeof v[0] + 1];
        memcpy(x, v, n * sizeof *x);
        x[n] = 42.0; /* past the end: untouched */
        dist_exp_n(x, n);
        for (size_t i = 0; i < n; i++)
            assert_true(bits_of(x[i]) == bits_of(dist_exp(v[i])) || (isnan(x[i]) && isnan(v[i])));
        assert_true(x[n] == 42.0);
    }
}

/* The batched lognormal draw: k ranks' exponents drawn rank by rank (each from its own
 * stream), then one dist_exp_n, gives each rank the values dist_sample draws, and libm's exp
 * of mu + sigma z with z the ziggurat's normal from a third copy of the stream. */
static void test_batched_lognormal_draws(void **state)
{
    (void)state;
    enum { K = 8, OPS = 20000 };
    dist d[K];
    dist_rng a[K], b[K], c[K];
    for (int r = 0; r < K; r++) {
        d[r] = dist_make(DIST_LOGNORMAL, (6 + r) * 1e-6, 0.1 + 0.3 * r);
        dist_rng_seed(&a[r], 99, (uint64_t)r);
        dist_rng_seed(&b[r], 99, (uint64_t)r);
        dist_rng_seed(&c[r], 99, (uint64_t)r);
    }
    for (int op = 0; op < OPS; op++) {
        double cost[K];
        for (int r = 0; r < K; r++) cost[r] = dist_lognormal_exponent(&d[r], &a[r]);
        dist_exp_n(cost, K);
        for (int r = 0; r < K; r++) {
            double want = dist_sample(&d[r], &b[r]);
            double libm = exp(d[r].a + d[r].b * zig_normal(&c[r].pcg));
            if (bits_of(cost[r]) != bits_of(want) || bits_of(want) != bits_of(libm))
                fail_msg("op %d rank %d: batched %a, one by one %a, libm %a", op, r, cost[r],
                         want, libm);
        }
    }
    for (int r = 0; r < K; r++)
        assert_true(a[r].pcg.state == b[r].pcg.state && b[r].pcg.state == c[r].pcg.state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_matches_definition),
        cmocka_unit_test(test_exp_special_values),
        cmocka_unit_test(test_exp_matches_libm),
        cmocka_unit_test(test_exp_n),
        cmocka_unit_test(test_batched_lognormal_draws),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
