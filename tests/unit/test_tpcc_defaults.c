/*
 * tests/unit/test_tpcc_defaults.c: what tpcc gives the database when an option is left
 * at 0: the worker connections grow with the users (one per 64, at least 32, never
 * more than the users or 1,024), with one deferred-delivery worker per 8 of them, and
 * the WAL's bound grows with the database (a sixteenth of its estimate, from 64 MiB, or
 * a smaller buffer's size but at least 16 MiB, to 1 GiB), and so does the background
 * checkpoint's trigger (a sixteenth of the bound and of the buffer, 4 to 64 MiB); an
 * option that is given is taken as it is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "oltp/tpcc_cmd_internal.h"

static st_db_opts opts_with_buffer(uint64_t scale, uint64_t vusers, uint64_t connections,
                                   uint64_t wal_limit, uint64_t buffer)
{
    tpcc_options o = {.scale = scale,
                      .vusers = vusers,
                      .instances = 1,
                      .connections = connections,
                      .buffer = buffer,
                      .wal_limit = wal_limit,
                      .sync = "full"};
    st_db_opts dbo;
    tpcc_db_opts(&o, &dbo);
    return dbo;
}

static st_db_opts opts_for(uint64_t scale, uint64_t vusers, uint64_t connections,
                           uint64_t wal_limit)
{
    return opts_with_buffer(scale, vusers, connections, wal_limit, 64ull << 20);
}

/* max_connections = workers + their delivery workers + the instance's own (meta and checks) */
static int workers_of(uint64_t vusers, uint64_t connections)
{
    tpcc_options o = {.scale = 1, .vusers = vusers, .instances = 1, .connections = connections};
    st_db_opts dbo;
    tpcc_db_opts(&o, &dbo);
    return dbo.max_connections - tpcc_delivery_workers(&o) - 1;
}

static void test_connections_grow_with_users(void **state)
{
    (void)state;
    assert_int_equal(workers_of(1, 0), 1);
    assert_int_equal(workers_of(10, 0), 10);
    assert_int_equal(workers_of(32, 0), 32);
    assert_int_equal(workers_of(1000, 0), 32);
    assert_int_equal(workers_of(2048, 0), 32);
    assert_int_equal(workers_of(2049, 0), 33);
    assert_int_equal(workers_of(5000, 0), 79);
    assert_int_equal(workers_of(15000, 0), 235);
    assert_int_equal(workers_of(1000000, 0), TPCC_MAX_CONNECTIONS);
    /* given, taken as it is */
    assert_int_equal(workers_of(5000, 8), 8);
    tpcc_options o = {.scale = 500, .vusers = 5000, .instances = 1};
    assert_int_equal(tpcc_delivery_workers(&o), 10);
    o.vusers = 15000;
    assert_int_equal(tpcc_delivery_workers(&o), TPCC_MAX_DELIVERY_WORKERS);
}

static void test_wal_limit_grows_with_database(void **state)
{
    (void)state;
    assert_int_equal(opts_for(1, 10, 0, 0).wal_limit_bytes, 64ull << 20);
    uint64_t s100 = opts_for(100, 1000, 0, 0).wal_limit_bytes;
    assert_int_equal(s100, tpcc_estimate_bytes(100) / 16);
    assert_true(s100 > 64ull << 20 && s100 < 1ull << 30);
    assert_int_equal(opts_for(500, 5000, 0, 0).wal_limit_bytes, 1ull << 30);
    assert_int_equal(opts_for(1500, 15000, 0, 0).wal_limit_bytes, 1ull << 30);
    /* a buffer under the 64-MiB floor lowers the floor to its size, not below 16 MiB;
     * never the share of a larger database */
    const uint64_t mib = 1ull << 20;
    assert_int_equal(opts_with_buffer(1, 10, 0, 0, 40 * mib).wal_limit_bytes, 40 * mib);
    assert_int_equal(opts_with_buffer(1, 10, 0, 0, 8 * mib).wal_limit_bytes, TPCC_MIN_WAL_LIMIT);
    assert_int_equal(opts_with_buffer(1, 10, 0, 0, 0).wal_limit_bytes, TPCC_MIN_WAL_LIMIT);
    assert_int_equal(opts_with_buffer(100, 1000, 0, 0, 8 * mib).wal_limit_bytes, s100);
    assert_int_equal(opts_with_buffer(500, 5000, 0, 0, 8 * mib).wal_limit_bytes, 1ull << 30);
    /* given, taken as it is, small or large */
    assert_int_equal(opts_for(500, 5000, 0, 1ull << 20).wal_limit_bytes, 1ull << 20);
    assert_int_equal(opts_for(1, 10, 0, 1ull << 40).wal_limit_bytes, 1ull << 40);
}

static void test_checkpoint_trigger_follows_wal_bound(void **state)
{
    (void)state;
    const uint64_t mib = 1ull << 20, gib = 1ull << 30;
    /* scale 500: a sixteenth of the 1-GiB bound, lowered near the WAL's restart */
    assert_int_equal(opts_with_buffer(500, 5000, 0, 0, 5 * gib).checkpoint_wal_bytes, 64 * mib);
    assert_true(opts_with_buffer(500, 5000, 0, 0, 5 * gib).checkpoint_taper);
    st_db_opts s100 = opts_with_buffer(100, 1000, 0, 0, 2 * gib);
    assert_int_equal(s100.checkpoint_wal_bytes, s100.wal_limit_bytes / 16);
    /* a small buffer keeps uncopied frames in the pool: a sixteenth of it */
    assert_int_equal(opts_with_buffer(500, 5000, 0, 0, 256 * mib).checkpoint_wal_bytes, 16 * mib);
    /* at or under SQLite's 4 MiB, storage's default stands (0), e.g. the quick start */
    assert_int_equal(opts_with_buffer(500, 5000, 0, 0, 64 * mib).checkpoint_wal_bytes, 0);
    assert_int_equal(opts_for(1, 10, 0, 0).checkpoint_wal_bytes, 0);
    assert_int_equal(opts_with_buffer(1, 10, 0, 0, 0).checkpoint_wal_bytes, 0);
    /* a given bound moves it too, never past 64 MiB */
    assert_int_equal(opts_with_buffer(500, 5000, 0, 1ull << 40, 5 * gib).checkpoint_wal_bytes,
                     64 * mib);
    assert_int_equal(opts_with_buffer(500, 5000, 0, 1 * mib, 5 * gib).checkpoint_wal_bytes, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connections_grow_with_users),
        cmocka_unit_test(test_wal_limit_grows_with_database),
        cmocka_unit_test(test_checkpoint_trigger_follows_wal_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
