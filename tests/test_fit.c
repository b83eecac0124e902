/* test_fit.c: the bounded minimiser finds known minima, respects bounds, reports objective
 * errors, and stops by its stated rules (fit.h): converged when no neighbour at a step under
 * FIT_TOL_STEP of each range is lower, else at its evaluation cap, saying which. */
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
    assert_int_equal(fit_minimize(1, &lo, &hi, quad1, NULL, &x, &f, &evals, NULL), 0);
    assert_true(fabs(x - 3.217) < 1e-5);
    assert_true(evals < 200);
    assert_int_equal(fit_minimize(1, &lo, &hi, two_minima, NULL, &x, &f, &evals, NULL), 0);
    assert_true(fabs(x - 5) < 1e-5);
}

static void test_bound_respected(void **state)
{
    (void)state;
    double lo = 4, hi = 9, x, f;
    assert_int_equal(fit_minimize(1, &lo, &hi, quad1, NULL, &x, &f, NULL, NULL), 0);
    assert_true(x >= 4 && fabs(x - 4) < 1e-5); /* the minimum 3.217 is outside: stop at 4 */
}

static void test_2d(void **state)
{
    (void)state;
    double lo[2] = {-5, -100}, hi[2] = {5, 100}, x[2], f;
    assert_int_equal(fit_minimize(2, lo, hi, rosen_box, NULL, x, &f, NULL, NULL), 0);
    assert_true(fabs(x[0] - 0.7) < 1e-3);
    assert_true(fabs(x[1] + 12) < 0.05);
}

/* A flat objective: nothing is ever lower, so every phase runs its course, counted by hand.
 * Box [0,1]^2, grid spacing h = 1/8: the grid reads 9 x 9 = 81 points, the first (0,0) stays
 * best (a tie is no gain). The simplex (0,0), (h,0), (0,h) reads 2 more; each of its steps
 * reads the reflection (h,-h), clamped to (h,0), no better than the worst, then the inside
 * contraction (h/4,h/2), no better either, then shrinks the two other vertices halfway to
 * (0,0): 4 reads that halve the simplex. It stops once its spread h/2^i is at most 1e-4 of
 * the range: h/2^10 = 9.8e-4 h is above 1e-4 = 8e-4 h, h/2^11 = 4.9e-4 h is not, so i = 11
 * steps, 2 + 44 = 46 reads. The compass starts at the power-of-two step that covers that
 * spread, h/2^11 (under 1e-4 of the range), at (0,0): -x and -y fall back onto the point and
 * are skipped, +x and +y are read, neither is lower: converged after 2 reads.
 * 81 + 46 + 2 = 129. */
static double flat(const double *x, void *ctx, int *fail)
{
    (void)x, (void)ctx, (void)fail;
    return 1.0;
}

static void test_flat_converges_counted(void **state)
{
    (void)state;
    double lo[2] = {0, 0}, hi[2] = {1, 1}, x[2], f;
    int evals;
    fit_stop why = FIT_STOP_NONE;
    assert_int_equal(fit_minimize(2, lo, hi, flat, NULL, x, &f, &evals, &why), 0);
    assert_int_equal(why, FIT_STOP_STEP);
    assert_int_equal(evals, 129);
    assert_true(x[0] == 0 && x[1] == 0 && f == 1.0);
}

/* A bowl whose minimum sits on no power-of-two lattice the search walks: it converges by the
 * stated rule, and the rule pins where. The last compass round, at steps t_d under 1e-4 of
 * each range, found neither x_d + t_d nor x_d - t_d lower; for w_d (x_d - a_d)^2 that means
 * |x_d - a_d| <= t_d / 2 (plus the millionth-of-the-objective gain a move must beat, ~0 at
 * the minimum): within 0.5e-4 of the range of the minimum, on each axis. */
static double bowl(const double *x, void *ctx, int *fail)
{
    (void)ctx, (void)fail;
    double a = x[0] - 17.3217, b = x[1] - 0.61803;
    return 3 * a * a + 500 * b * b + 0.25;
}

static void test_bowl_converges_within_rule(void **state)
{
    (void)state;
    double lo[2] = {0, 0}, hi[2] = {60, 3}, x[2], f;
    int evals;
    fit_stop why = FIT_STOP_NONE;
    assert_int_equal(fit_minimize(2, lo, hi, bowl, NULL, x, &f, &evals, &why), 0);
    assert_int_equal(why, FIT_STOP_STEP);
    assert_true(fabs(x[0] - 17.3217) <= 0.5e-4 * 60 * (1 + 1e-3));
    assert_true(fabs(x[1] - 0.61803) <= 0.5e-4 * 3 * (1 + 1e-3));
    assert_true(evals > 81 && evals < 81 + 200); /* the simplex converged before its guard */
}

/* A valley flat along one axis (y moves nothing): a simplex never shrinks across a tie, so
 * it runs to its guard; the compass must still converge, x within the rule's half step. */
static double valley(const double *x, void *ctx, int *fail)
{
    (void)ctx, (void)fail;
    return (x[0] - 1.2345) * (x[0] - 1.2345);
}

static void test_flat_direction_converges(void **state)
{
    (void)state;
    double lo[2] = {-5, 0}, hi[2] = {5, 1}, x[2], f;
    fit_stop why = FIT_STOP_NONE;
    assert_int_equal(fit_minimize(2, lo, hi, valley, NULL, x, &f, NULL, &why), 0);
    assert_int_equal(why, FIT_STOP_STEP);
    assert_true(fabs(x[0] - 1.2345) <= 0.5e-4 * 10 * (1 + 1e-3));
    assert_true(x[1] >= 0 && x[1] <= 1);
}

/* Noise that always improves: every value read is lower than all before, so nothing
 * converges and the compass stops at its cap, saying so. Every read is a new low, so the
 * answer is the last point read and its value minus the count; the compass, which moves on
 * every read, reads its whole cap of 400. */
static double always_lower(const double *x, void *ctx, int *fail)
{
    (void)x, (void)fail;
    int *calls = ctx;
    return -(double)++*calls;
}

static void test_noise_stops_at_cap(void **state)
{
    (void)state;
    double lo[2] = {0, 0}, hi[2] = {1, 1}, x[2], f;
    int calls = 0, evals;
    fit_stop why = FIT_STOP_NONE;
    assert_int_equal(fit_minimize(2, lo, hi, always_lower, &calls, x, &f, &evals, &why), 0);
    assert_int_equal(why, FIT_STOP_CAP);
    assert_int_equal(evals, calls);
    assert_true(f == -(double)evals);
    assert_true(evals >= 81 + 400 && evals <= 81 + 200 + 400);
    assert_string_equal(fit_stop_name(why), "cap");
    assert_string_equal(fit_stop_name(FIT_STOP_STEP), "step");
    assert_null(fit_stop_name(FIT_STOP_NONE));
}

/* One parameter: golden-section says it bracketed. */
static void test_1d_says_bracket(void **state)
{
    (void)state;
    double lo = -10, hi = 10, x, f;
    fit_stop why = FIT_STOP_NONE;
    assert_int_equal(fit_minimize(1, &lo, &hi, quad1, NULL, &x, &f, NULL, &why), 0);
    assert_int_equal(why, FIT_STOP_BRACKET);
}

static void test_objective_failure_stops(void **state)
{
    (void)state;
    double lo = 0, hi = 1, x = -1, f;
    int calls = 0, evals;
    fit_stop why = FIT_STOP_STEP;
    assert_int_equal(fit_minimize(1, &lo, &hi, failing, &calls, &x, &f, &evals, &why), -1);
    assert_int_equal(why, FIT_STOP_NONE);
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
    assert_int_equal(fit_minimize_many(2, lo, hi, rosen_many, &one, 1, x1, &f1, &e1, NULL), 0);
    assert_int_equal(fit_minimize_many(2, lo, hi, rosen_many, &four, 4, x4, &f4, &e4, NULL), 0);
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
    assert_int_equal(fit_minimize_many(2, lo, hi, rosen_many, &spec, 4, x4, &f4, &e4, NULL), 0);
    assert_true(x1[0] == x4[0] && x1[1] == x4[1] && e1 == e4);
    /* a point the one-at-a-time search reaches fails: the fit fails either way */
    static recorder late1, late4;
    late1.has_fail = late4.has_fail = 1;
    late1.fail_at[0] = late4.fail_at[0] = one.pts[one.n - 3][0];
    late1.fail_at[1] = late4.fail_at[1] = one.pts[one.n - 3][1];
    assert_int_equal(fit_minimize_many(2, lo, hi, rosen_many, &late1, 1, x4, &f4, &e4, NULL), -1);
    assert_int_equal(fit_minimize_many(2, lo, hi, rosen_many, &late4, 4, x4, &f4, &e4, NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_1d),
        cmocka_unit_test(test_bound_respected),
        cmocka_unit_test(test_2d),
        cmocka_unit_test(test_flat_converges_counted),
        cmocka_unit_test(test_bowl_converges_within_rule),
        cmocka_unit_test(test_flat_direction_converges),
        cmocka_unit_test(test_noise_stops_at_cap),
        cmocka_unit_test(test_1d_says_bracket),
        cmocka_unit_test(test_objective_failure_stops),
        cmocka_unit_test(test_ahead_same_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
