/* test_evq.c: the event queue pops in (time, insertion) order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "evq.h"
#include "pcg32.h"

static void test_equal_times_fifo(void **state)
{
    (void)state;
    evq q;
    assert_int_equal(evq_init(&q, 2), 0);
    /* same time pushed in order 0..99, interleaved with earlier and later events */
    for (uint32_t i = 0; i < 100; i++) {
        assert_int_equal(evq_push(&q, 1.0, 0, i), 0);
        assert_int_equal(evq_push(&q, 2.0, 1, i), 0);
        assert_int_equal(evq_push(&q, 0.5, 2, i), 0);
    }
    evq_event ev;
    for (uint32_t pass = 0; pass < 3; pass++)
        for (uint32_t i = 0; i < 100; i++) {
            assert_int_equal(evq_pop(&q, &ev), 0);
            assert_int_equal(ev.type, pass == 0 ? 2 : pass == 1 ? 0 : 1);
            assert_int_equal(ev.entity, i);
        }
    assert_int_equal(evq_pop(&q, &ev), -1);
    assert_int_equal(q.pushed, 300);
    evq_free(&q);
}

static void test_random_order(void **state)
{
    (void)state;
    evq q;
    pcg32 r;
    pcg32_seed(&r, 99, 1);
    assert_int_equal(evq_init(&q, 1), 0);
    for (uint32_t i = 0; i < 5000; i++)
        assert_int_equal(evq_push(&q, (double)pcg32_bounded(&r, 50), 0, i), 0); /* many ties */
    evq_event prev = {-1, 0, 0, 0}, ev;
    size_t n = 0;
    /* interleave pops and pushes later than anything popped, as a simulation does */
    while (evq_pop(&q, &ev) == 0) {
        assert_true(ev.time > prev.time || (ev.time == prev.time && ev.seq > prev.seq));
        if (n++ < 1000) assert_int_equal(evq_push(&q, ev.time + 1.0, 1, 0), 0);
        prev = ev;
    }
    assert_int_equal(n, 6000);
    evq_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_times_fifo),
        cmocka_unit_test(test_random_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
