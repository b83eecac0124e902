/* test_fit.c: the bounded minimiser finds known minima, respects bounds, and reports
 * objective errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "fit.h"

static double quad1(const double *x, void *ctx, int *fail)
{
    (void)ctx, (void)fail;
    return (x[0] - 3.217) * (x[0] - 3.217);
}

static double rosen_box(const double *x, void *ctx, int *fail)
{
    (void)ctx, (void)fail;
    /* a tilted, anisotropic bowl with its minimum at (0.7, -12) */
    double a = x[0] - 0.7, b = (x[1] + 12) / 40;
    return a * a + b * b + 0.5 * a * b;
}

static double two_minima(const double *x, void *ctx, int *fail)
{
    (void)ctx, (void)fail;
    /* a shallow local minimum at -2 and the global one at 5: the grid must find 5 */
    return fmin((x[0] + 2) * (x[0] + 2) + 1.0, (x[0] - 5) * (x[0] - 5));
}

static double failing(const double *x, void *ctx, int *fail)
{
    int *calls = ctx;
    if (++*calls == 7) *fail = 1;
    return x[0];
}

static void test_1d(void **state)
{
    (void)state;
    double lo = -10, hi = 10, x, f;
    int evals;
    assert_int_equal(fit_minimize(1, &lo, &hi, quad1, NULL, &x, &f, &evals), 0);
    assert_true(fabs(x - 3.217) < 1e-5);
    assert_true(evals < 200);
    assert_int_equal(fit_minimize(1, &lo, &hi, two_minima, NULL, &x, &f, &evals), 0);
    assert_true(fabs(x - 5) < 1e-5);
}

static void test_bound_respected(void **state)
{
    (void)state;
    double lo = 4, hi = 9, x, f;
    assert_int_equal(fit_minimize(1, &lo, &hi, quad1, NULL, &x, &f, NULL), 0);
    assert_true(x >= 4 && fabs(x - 4) < 1e-5); /* the minimum 3.217 is outside: stop at 4 */
}

static void test_2d(void **state)
{
    (void)state;
    double lo[2] = {-5, -100}, hi[2] = {5, 100}, x[2], f;
    assert_int_equal(fit_minimize(2, lo, hi, rosen_box, NULL, x, &f, NULL), 0);
    assert_true(fabs(x[0] - 0.7) < 1e-3);
    assert_true(fabs(x[1] + 12) < 0.05);
}

static void test_objective_failure_stops(void **state)
{
    (void)state;
    double lo = 0, hi = 1, x = -1, f;
    int calls = 0, evals;
    assert_int_equal(fit_minimize(1, &lo, &hi, failing, &calls, &x, &f, &evals), -1);
    assert_int_equal(calls, 7); /* no evaluations after the failure */
    assert_true(x == -1);       /* and no result written */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_1d),
        cmocka_unit_test(test_bound_respected),
        cmocka_unit_test(test_2d),
        cmocka_unit_test(test_objective_failure_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
