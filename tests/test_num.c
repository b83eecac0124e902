/* test_num.c: the one number parser: plain decimals accepted and converted exactly as
 * written; every other spelling strtod/strtol would take is refused; bounds and type
 * limits are range errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <limits.h>

#include "num.h"

static void test_double_plain(void **state)
{
    (void)state;
    static const struct { const char *text; double v; } ok[] = {
        {"0", 0}, {"27.77", 27.77}, {"-3.5", -3.5}, {".5", 0.5}, {"5.", 5}, {"1e3", 1000},
        {"1E-3", 0.001}, {"2.5e+2", 250}, {"-0", 0}, {"007", 7}, {"123456789012", 123456789012.0}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        double v = -1;
        assert_int_equal(num_double(ok[i].text, -1e300, 1e300, &v), NUM_OK);
        assert_true(v == ok[i].v);
    }
}

static void test_double_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "+27.77", " 1", "1 ", "\t1", "0x10", "0x1p3", "1p3",
                                      "inf", "-inf", "nan", "NaN", "Infinity", "1e", "1e+",
                                      "e3", ".", "-", "-.", "1.2.3", "1,5", "1_000", "--1",
                                      "1e3.5", "12abc", "1\n", "+.5", "0X1P-2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double v = 42;
        if (num_double(bad[i], -1e300, 1e300, &v) != NUM_SYNTAX)
            fail_msg("'%s' accepted", bad[i]);
        assert_true(v == 42); /* untouched */
    }
    double v = 42;
    assert_int_equal(num_double(NULL, 0, 1, &v), NUM_SYNTAX);
}

static void test_double_range(void **state)
{
    (void)state;
    double v = 42;
    assert_int_equal(num_double("1.5", 0, 1, &v), NUM_RANGE);
    assert_int_equal(num_double("-0.001", 0, 1, &v), NUM_RANGE);
    assert_int_equal(num_double("1e999", -DBL_MAX, DBL_MAX, &v), NUM_RANGE); /* beyond double */
    assert_int_equal(num_double("-1e999", -DBL_MAX, DBL_MAX, &v), NUM_RANGE);
    assert_int_equal(num_double("1e-400", -1, 1, &v), NUM_RANGE); /* underflows to 0 */
    assert_true(v == 42);
    assert_int_equal(num_double("1", 0, 1, &v), NUM_OK); /* bounds are inclusive */
    assert_true(v == 1);
    assert_int_equal(num_double("0", 0, 1, &v), NUM_OK);
    assert_true(v == 0);
}

static void test_long(void **state)
{
    (void)state;
    long v = 42;
    assert_int_equal(num_long("8", 2, 4096, &v), NUM_OK);
    assert_int_equal(v, 8);
    assert_int_equal(num_long("-12", -100, 100, &v), NUM_OK);
    assert_int_equal(v, -12);
    static const char *const bad[] = {"+8", " 8", "8 ", "0x8", "8.0", "8e0", "", "-", "8k",
                                      "08.", "1e3", "٣"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (num_long(bad[i], LONG_MIN, LONG_MAX, &v) != NUM_SYNTAX)
            fail_msg("'%s' accepted", bad[i]);
    assert_int_equal(num_long("1", 2, 4096, &v), NUM_RANGE);
    assert_int_equal(num_long("4097", 2, 4096, &v), NUM_RANGE);
    assert_int_equal(num_long("99999999999999999999", LONG_MIN, LONG_MAX, &v), NUM_RANGE);
    assert_int_equal(num_long("-99999999999999999999", LONG_MIN, LONG_MAX, &v), NUM_RANGE);
    assert_int_equal(v, -12);
    assert_int_equal(num_long("9223372036854775807", LONG_MIN, LONG_MAX, &v), NUM_OK);
    assert_true(v == LONG_MAX);
}

static void test_u64(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_int_equal(num_u64("18446744073709551615", &v), NUM_OK); /* 2^64 - 1 */
    assert_true(v == UINT64_MAX);
    assert_int_equal(num_u64("9223372036854775808", &v), NUM_OK); /* 2^63 */
    assert_true(v == (uint64_t)1 << 63);
    assert_int_equal(num_u64("18446744073709551616", &v), NUM_RANGE); /* 2^64 */
    static const char *const bad[] = {"-1", "-0", "+1", " 1", "0x1", "1.0", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (num_u64(bad[i], &v) != NUM_SYNTAX) fail_msg("'%s' accepted", bad[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double_plain), cmocka_unit_test(test_double_refused),
        cmocka_unit_test(test_double_range), cmocka_unit_test(test_long),
        cmocka_unit_test(test_u64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
