/* test_memo.c: validate/memo.h keys compare bit for bit (parameters and the ordered
 * calibration cells), a hit returns the value kept, and the table grows without losing any. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "memo.h"

static void exact_keys(void **state)
{
    (void)state;
    vmemo *m = vmemo_new();
    assert_non_null(m);
    const double x[2] = {24.5, 1.5};
    const size_t cal[3] = {0, 4, 9}, cal_swapped[3] = {4, 0, 9};
    double v = 0;
    assert_int_equal(vmemo_get(m, x, 2, cal, 3, &v), 0); /* empty */
    assert_int_equal(vmemo_put(m, x, 2, cal, 3, 0.125), 0);
    assert_int_equal(vmemo_get(m, x, 2, cal, 3, &v), 1);
    assert_true(v == 0.125);
    /* a hair off in a parameter, the cells in another order (another summation order),
     * fewer cells or fewer parameters: other keys */
    const double near[2] = {nextafter(24.5, 25.0), 1.5};
    assert_int_equal(vmemo_get(m, near, 2, cal, 3, &v), 0);
    assert_int_equal(vmemo_get(m, x, 2, cal_swapped, 3, &v), 0);
    assert_int_equal(vmemo_get(m, x, 2, cal, 2, &v), 0);
    assert_int_equal(vmemo_get(m, x, 1, cal, 3, &v), 0);
    /* 0 and -0 compare equal as doubles but are different inputs */
    const double zero[1] = {0.0}, negzero[1] = {-0.0};
    assert_int_equal(vmemo_put(m, zero, 1, cal, 1, 1.0), 0);
    assert_int_equal(vmemo_get(m, negzero, 1, cal, 1, &v), 0);
    assert_int_equal(vmemo_hits(m), 1);
    assert_int_equal(vmemo_size(m), 2);
    /* putting a key again keeps one entry */
    assert_int_equal(vmemo_put(m, x, 2, cal, 3, 0.125), 0);
    assert_int_equal(vmemo_size(m), 2);
    vmemo_free(m);
}

static void grows_without_loss(void **state)
{
    (void)state;
    vmemo *m = vmemo_new();
    assert_non_null(m);
    const size_t cal[2] = {1, 2};
    enum { N = 5000 }; /* past several doublings of the 256-slot start */
    for (int i = 0; i < N; i++) {
        double x[2] = {i * 0.1, -i * 0.01};
        assert_int_equal(vmemo_put(m, x, 2, cal, 2, (double)i), 0);
    }
    assert_int_equal(vmemo_size(m), N);
    for (int i = 0; i < N; i++) {
        double x[2] = {i * 0.1, -i * 0.01}, v = -1;
        assert_int_equal(vmemo_get(m, x, 2, cal, 2, &v), 1);
        assert_true(v == (double)i);
    }
    vmemo_free(m);
    /* NULL is no memo: nothing kept, nothing found */
    double v = 0, x[1] = {1};
    assert_int_equal(vmemo_put(NULL, x, 1, cal, 1, 2.0), 0);
    assert_int_equal(vmemo_get(NULL, x, 1, cal, 1, &v), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_keys),
        cmocka_unit_test(grows_without_loss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
