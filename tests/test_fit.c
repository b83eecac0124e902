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

/* A many-point objective that records the points it is asked for and fails at one of them. */
#define REC_MAX 4096
typedef struct recorder {
    double pts[REC_MAX][2];
    int n;
    double fail_at[2];
    int has_fail;
} recorder;

static int rosen_many(const double *xs, int m, void *ctx, double *v)
{
    recorder *r = ctx;
    for (int j = 0; j < m; j++) {
        const double *x = xs + 2 * j;
        if (r->n < REC_MAX) r->pts[r->n][0] = x[0], r->pts[r->n][1] = x[1];
        r->n++;
        if (r->has_fail && x[0] == r->fail_at[0] && x[1] == r->fail_at[1]) return j;
        int fail = 0;
        /* a ripple, so the compass search moves by every kind of try */
        v[j] = rosen_box(x, NULL, &fail) + 0.01 * sin(7 * x[0]) * cos(0.3 * x[1]);
    }
    return m;
}

static int seen(const recorder *r, const double *x)
{
    for (int i = 0; i < r->n && i < REC_MAX; i++)
        if (r->pts[i][0] == x[0] && r->pts[i][1] == x[1]) return 1;
    return 0;
}

/* Evaluating ahead changes neither the answer nor the count, and a point it evaluated that
 * the one-at-a-time search never reaches may fail without failing the fit. */
static void test_ahead_same_answer(void **state)
{
    (void)state;
    static recorder one, four;
    double lo[2] = {-5, -100}, hi[2] = {5, 100}, x1[2], x4[2], f1, f4;
    int e1, e4;
    assert_int_equal(fit_minimize_many(2, lo, hi, rosen_many, &one, 1, x1, &f1, &e1), 0);
    assert_int_equal(fit_minimize_many(2, lo, hi, rosen_many, &four, 4, x4, &f4, &e4), 0);
    assert_true(x1[0] == x4[0] && x1[1] == x4[1] && f1 == f4);
    assert_int_equal(e1, e4);
    assert_int_equal(one.n, e1);  /* one at a time: exactly the points counted */
    assert_true(four.n > e4);     /* ahead: more points asked for */
    /* a point asked for only ahead fails: no matter */
    int k = 0;
    while (k < four.n && seen(&one, four.pts[k])) k++;
    assert_true(k < four.n);
    static recorder spec;
    spec.has_fail = 1;
    spec.fail_at[0] = four.pts[k][0], spec.fail_at[1] = four.pts[k][1];
    assert_int_equal(fit_minimize_many(2, lo, hi, rosen_many, &spec, 4, x4, &f4, &e4), 0);
    assert_true(x1[0] == x4[0] && x1[1] == x4[1] && e1 == e4);
    /* a point the one-at-a-time search reaches fails: the fit fails either way */
    static recorder late1, late4;
    late1.has_fail = late4.has_fail = 1;
    late1.fail_at[0] = late4.fail_at[0] = one.pts[one.n - 3][0];
    late1.fail_at[1] = late4.fail_at[1] = one.pts[one.n - 3][1];
    assert_int_equal(fit_minimize_many(2, lo, hi, rosen_many, &late1, 1, x4, &f4, &e4), -1);
    assert_int_equal(fit_minimize_many(2, lo, hi, rosen_many, &late4, 4, x4, &f4, &e4), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_1d),
        cmocka_unit_test(test_bound_respected),
        cmocka_unit_test(test_2d),
        cmocka_unit_test(test_objective_failure_stops),
        cmocka_unit_test(test_ahead_same_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
