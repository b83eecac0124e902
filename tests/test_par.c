/* test_par.c: the thread pool (base/par.h): every index runs once, a failure reports the lowest
 * failing index as a serial run would, and a team started once serves many batches with the
 * same results as par_map. Expected values are the indices themselves (i * i, by hand). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "par.h"

typedef struct sq_job {
    long out[200];
    int runs[200];
    size_t fail_from; /* indices >= this fail (SIZE_MAX: none) */
    int fail_every;   /* with fail_from: only multiples of it fail */
} sq_job;

static int sq(void *ctx, size_t i, tp_err *err)
{
    sq_job *j = ctx;
    j->runs[i]++;
    j->out[i] = (long)(i * i);
    if (i >= j->fail_from && (j->fail_every <= 1 || i % (size_t)j->fail_every == 0))
        return tp_err_set(err, "job %zu failed", i);
    return 0;
}

static void check_all(const sq_job *j, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(j->runs[i], 1);
        assert_int_equal(j->out[i], (long)(i * i));
    }
}

static void test_map_every_index_once(void **state)
{
    (void)state;
    for (int jobs = 1; jobs <= 4; jobs++) {
        sq_job j;
        memset(&j, 0, sizeof j);
        j.fail_from = SIZE_MAX;
        tp_err err = {0};
        assert_int_equal(par_map(200, jobs, sq, &j, NULL, &err), 0);
        check_all(&j, 200);
    }
}

static void test_map_lowest_failure(void **state)
{
    (void)state;
    sq_job j;
    memset(&j, 0, sizeof j);
    j.fail_from = 30;
    j.fail_every = 7; /* 35, 42, ... fail: 35 is the lowest */
    tp_err err = {0};
    assert_int_equal(par_map(200, 3, sq, &j, NULL, &err), -1);
    assert_string_equal(err.msg, "job 35 failed");
}

/* One team, many batches of different sizes (0, 1, fewer and more jobs than threads): each
 * batch runs every index once, and a failure in one batch does not leak into the next. */
static void test_team_many_batches(void **state)
{
    (void)state;
    par_team *t = par_team_new(3);
    assert_non_null(t);
    static const size_t sizes[] = {5, 0, 1, 2, 200, 3, 17};
    for (int rep = 0; rep < 50; rep++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            sq_job j;
            memset(&j, 0, sizeof j);
            j.fail_from = SIZE_MAX;
            tp_err err = {0};
            assert_int_equal(par_team_map(t, sizes[s], sq, &j, NULL, &err), 0);
            check_all(&j, sizes[s]);
        }
    sq_job j;
    memset(&j, 0, sizeof j);
    j.fail_from = 10;
    tp_err err = {0};
    assert_int_equal(par_team_map(t, 100, sq, &j, NULL, &err), -1);
    assert_string_equal(err.msg, "job 10 failed");
    memset(&j, 0, sizeof j);
    j.fail_from = SIZE_MAX;
    assert_int_equal(par_team_map(t, 100, sq, &j, NULL, &err), 0);
    check_all(&j, 100);
    par_team_free(t);
    par_team_free(NULL);
}

/* par_team_map_w: each job once, told a worker index in 0..size-1; no two jobs at once on
 * one index (each index's scratch counter is entered by one job at a time). */
typedef struct w_job {
    int size;
    int busy[8];   /* jobs running on each worker index now */
    int clash;     /* a worker index in use twice at once */
    int bad_index;
    int runs[300];
} w_job;

static int w_fn(void *ctx, size_t i, int worker, tp_err *err)
{
    w_job *j = ctx;
    (void)err;
    if (worker < 0 || worker >= j->size) {
        j->bad_index = 1;
        return 0;
    }
    if (__atomic_add_fetch(&j->busy[worker], 1, __ATOMIC_SEQ_CST) != 1) j->clash = 1;
    volatile double x = 0;
    for (int k = 0; k < 2000; k++) x = x + k * 1e-9; /* long enough to overlap */
    __atomic_sub_fetch(&j->busy[worker], 1, __ATOMIC_SEQ_CST);
    j->runs[i]++;
    return 0;
}

static void test_team_worker_index(void **state)
{
    (void)state;
    par_team *t = par_team_new(3);
    assert_non_null(t);
    assert_int_equal(par_team_size(t), 3);
    for (int rep = 0; rep < 20; rep++) {
        static w_job j;
        memset(&j, 0, sizeof j);
        j.size = par_team_size(t);
        tp_err err = {0};
        assert_int_equal(par_team_map_w(t, 300, w_fn, &j, &err), 0);
        assert_false(j.bad_index);
        assert_false(j.clash);
        for (int i = 0; i < 300; i++) assert_int_equal(j.runs[i], 1);
    }
    par_team_free(t);
    par_team *one = par_team_new(1);
    assert_int_equal(par_team_size(one), 1);
    par_team_free(one);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_every_index_once),
        cmocka_unit_test(test_map_lowest_failure),
        cmocka_unit_test(test_team_many_batches),
        cmocka_unit_test(test_team_worker_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
