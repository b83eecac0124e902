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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "pcg32.h"

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

/* Every plain decimal reads as strtod reads it (strtod is correctly rounded: glibc's is
 * exact), bit for bit: the short decimals a measured table holds, the edges of the fast
 * path (2^53, 22 fraction digits) and past them, signs, leading and trailing zeros. */
static void test_double_as_strtod(void **state)
{
    (void)state;
    static const char *const edges[] = {
        "9007199254740992",   "9007199254740993",   "0.9007199254740992", "900719925474099.3",
        "0.0000000000000000000001", "0.00000000000000000000001", "1234567890.1234567",
        "-0", "-0.0", "0.", "-.5", "00000000000000000000000000001.5", "4.346667", "1e22",
        "0.1", "0.3", "-123.456e-7", "1.7976931348623157e308", "5e-324", "1e-320"};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        double got = 0, want = strtod(edges[i], NULL);
        if (num_double(edges[i], -DBL_MAX, DBL_MAX, &got) == NUM_OK &&
            memcmp(&got, &want, sizeof got))
            fail_msg("%s: %.17g, strtod %.17g", edges[i], got, want);
    }
    pcg32 g;
    pcg32_seed(&g, 20261204u, 7u);
    char text[48];
    for (int i = 0; i < 200000; i++) {
        /* up to 20 integer and 24 fraction digits, some zeros, some signs */
        int ni = (int)pcg32_bounded(&g, 21), nf = (int)pcg32_bounded(&g, 25), at = 0;
        if (pcg32_bounded(&g, 4) == 0) text[at++] = '-';
        for (int k = 0; k < ni; k++) text[at++] = (char)('0' + pcg32_bounded(&g, 10));
        if (nf || !ni) {
            text[at++] = '.';
            for (int k = 0; k < nf || (!ni && !k); k++)
                text[at++] = (char)('0' + pcg32_bounded(&g, 10));
        }
        text[at] = '\0';
        double got = 0, want = strtod(text, NULL);
        assert_int_equal(num_double(text, -DBL_MAX, DBL_MAX, &got), NUM_OK);
        if (memcmp(&got, &want, sizeof got)) fail_msg("%s: %.17g, strtod %.17g", text, got, want);
    }
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
        cmocka_unit_test(test_double_range),
        cmocka_unit_test(test_double_as_strtod), cmocka_unit_test(test_long),
        cmocka_unit_test(test_u64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
