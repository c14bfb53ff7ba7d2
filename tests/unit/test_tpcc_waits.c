/*
 * tests/unit/test_tpcc_waits.c: tpcc.waits from known totals: the top-level shares add
 * up to the thread time, "other" is what the named parts leave, reads outside the
 * writer lock are all reads less those under it, ms per transaction divides by the
 * transactions, the hold-time summary comes from the write types' histograms only, and
 * a section read back (a job's merge of ranks) gives the same figures twice over.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "oltp/tpcc_cmd_internal.h"

static double num(const json_t *o, const char *a, const char *b)
{
    return json_number_value(json_object_get(json_object_get(o, a), b));
}

static void fill(tpcc_wait_totals *t, sim_hist *held[TPCC_NTYPES])
{
    *t = (tpcc_wait_totals){0};
    /* 10 New-Orders over 1 s of thread time; 4 Stock-Levels over 0.2 s. */
    t->txns[TPCC_NEW_ORDER] = 10;
    t->event_ns[TPCC_NEW_ORDER] = 1000000000;
    uint64_t *no = t->ns[TPCC_NEW_ORDER];
    no[TPCC_W_LOCK_QUEUE] = 300000000;
    no[TPCC_W_HANDOVER] = 50000000;
    no[TPCC_W_HELD] = 200000000;
    no[TPCC_W_BEGIN_HELD] = 10000000;
    no[TPCC_W_READS_HELD] = 40000000;
    no[TPCC_W_COMMIT_HELD] = 20000000;
    no[TPCC_W_DURABLE] = 100000000;
    no[TPCC_W_READS] = 140000000; /* 100 ms outside the lock */
    no[TPCC_W_PREFETCH] = 120000000;
    t->txns[TPCC_STOCK_LEVEL] = 4;
    t->event_ns[TPCC_STOCK_LEVEL] = 200000000;
    t->ns[TPCC_STOCK_LEVEL][TPCC_W_READS] = 50000000;
    for (int ty = 0; ty < TPCC_NTYPES; ty++)
        held[ty] = sim_hist_new();
    for (int i = 0; i < 10; i++)
        sim_hist_record(held[TPCC_NEW_ORDER], 20000000);
    sim_hist_record(held[TPCC_STOCK_LEVEL], 999000000); /* read-only: never summarised */
}

static void check(const json_t *w, int k)
{
    const json_t *no = json_object_get(json_object_get(w, "by_type"), "new_order");
    assert_float_equal(num(no, "share", "writer_lock_queue"), 0.30, 1e-9);
    assert_float_equal(num(no, "share", "reads_outside_writer_lock"), 0.10, 1e-9);
    /* 1 - 0.30 - 0.05 - 0.20 - 0.10 (sync) - 0.10 (reads outside) */
    assert_float_equal(num(no, "share", "other"), 0.25, 1e-9);
    assert_float_equal(num(no, "ms_per_transaction", "writer_lock_held"), 20.0, 1e-9);
    assert_float_equal(num(no, "ms_per_transaction", "reads_under_writer_lock"), 4.0, 1e-9);
    /* All types: 1.2 s over 14 transactions; Stock-Level adds 50 ms of reads outside. */
    assert_float_equal(json_number_value(json_object_get(w, "thread_seconds")), 1.2 * k, 1e-9);
    assert_float_equal(num(w, "share", "reads_outside_writer_lock"), 0.15 / 1.2, 1e-9);
    double top = 0;
    const char *parts[] = {"writer_lock_queue", "writer_lock_handover",      "writer_lock_held",
                           "group_commit_sync", "reads_outside_writer_lock", "other"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        top += num(w, "share", parts[i]);
    assert_float_equal(top, 1.0, 1e-9);
    const json_t *hold = json_object_get(w, "writer_lock_hold_us");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(hold, "all_writes"), "count")), 10 * k);
    assert_float_equal(num(hold, "new_order", "mean_us"), 20000.0, 1.0);
    assert_null(json_object_get(hold, "stock_level"));
}

static void test_figures_and_merge(void **state)
{
    (void)state;
    tpcc_wait_totals t;
    sim_hist *held[TPCC_NTYPES];
    fill(&t, held);
    json_t *w = tpcc_waits_json(&t, held);
    check(w, 1);
    /* Two ranks with these figures: shares unchanged, counts doubled. */
    tpcc_wait_totals m = {0};
    sim_hist *mh[TPCC_NTYPES];
    for (int ty = 0; ty < TPCC_NTYPES; ty++)
        mh[ty] = sim_hist_new();
    tpcc_waits_add_json(w, &m, mh);
    tpcc_waits_add_json(w, &m, mh);
    json_t *w2 = tpcc_waits_json(&m, mh);
    check(w2, 2);
    assert_int_equal(json_integer_value(json_object_get(w2, "transactions")), 28);
    assert_int_equal(m.ns[TPCC_NEW_ORDER][TPCC_W_PREFETCH], 240000000);
    assert_int_equal(sim_hist_count(mh[TPCC_NEW_ORDER]), 20);
    json_decref(w);
    json_decref(w2);
    for (int ty = 0; ty < TPCC_NTYPES; ty++) {
        sim_hist_free(held[ty]);
        sim_hist_free(mh[ty]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figures_and_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
