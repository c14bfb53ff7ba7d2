/*
 * Issue/completion pairing (blktrace, blkparse): records leave in issue order; each
 * waits for its completion, but not beyond the horizon (5 s of trace time) nor beyond
 * 4,096 waiting, so a lost completion never holds the trace back or grows memory.
 */
#include "trace/lib/pair_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static tr_record rec(uint64_t t, uint64_t sector)
{
    tr_record r = {t, sector * 512, 4096, 8, TR_READ, TR_LATENCY_UNKNOWN, 0};
    return r;
}

static void test_order_and_latency(void **state)
{
    tr_pair *pr = NULL;
    assert_non_null(tr_pair_get(&pr));
    tr_record a = rec(100, 1), b = rec(200, 2), out;
    assert_int_equal(tr_pair_issue(pr, &a, 1), 0);
    assert_int_equal(tr_pair_issue(pr, &b, 2), 0);
    assert_int_equal(tr_pair_next(pr, &out, false), 0); /* nothing complete yet */
    assert_int_equal(tr_pair_complete(pr, 8, 2, 260), 1);
    assert_int_equal(tr_pair_next(pr, &out, false), 0);   /* b is done, a is not: order */
    assert_int_equal(tr_pair_complete(pr, 8, 9, 270), 0); /* no such issue */
    assert_int_equal(tr_pair_complete(pr, 9, 1, 270), 0); /* other device */
    assert_int_equal(tr_pair_complete(pr, 8, 1, 300), 1);
    assert_int_equal(tr_pair_next(pr, &out, false), 1);
    assert_int_equal(out.time_ns, 100);
    assert_int_equal(out.latency_ns, 200);
    assert_int_equal(tr_pair_next(pr, &out, false), 1);
    assert_int_equal(out.latency_ns, 60);
    assert_int_equal(tr_pair_next(pr, &out, true), 0);
    tr_pair_free(&pr);
    assert_null(pr);
}

static void test_horizon_and_cap(void **state)
{
    tr_pair *pr = NULL;
    assert_non_null(tr_pair_get(&pr));
    tr_record a = rec(0, 1), out;
    assert_int_equal(tr_pair_issue(pr, &a, 1), 0); /* never completed */
    tr_record b = rec(6000000000ull, 2);
    assert_int_equal(tr_pair_issue(pr, &b, 2), 0);
    assert_int_equal(tr_pair_next(pr, &out, false), 1); /* a is past the horizon */
    assert_int_equal(out.latency_ns, TR_LATENCY_UNKNOWN);
    assert_int_equal(tr_pair_next(pr, &out, false), 0); /* b waits */
    /* 4,096 waiting: the oldest goes without its completion. */
    for (uint64_t i = 1; i < 4096; i++) {
        tr_record r = rec(6000000000ull + i, 100 + i);
        assert_int_equal(tr_pair_issue(pr, &r, 100 + i), 0);
    }
    assert_int_equal(tr_pair_next(pr, &out, false), 1);
    assert_int_equal(out.time_ns, 6000000000ull);
    assert_int_equal(tr_pair_next(pr, &out, false), 0);
    int left = 0;
    while (tr_pair_next(pr, &out, true) == 1)
        left++;
    assert_int_equal(left, 4095);
    tr_pair_free(&pr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_latency),
        cmocka_unit_test(test_horizon_and_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
