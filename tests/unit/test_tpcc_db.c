/*
 * tests/unit/test_tpcc_db.c: the TPC-C loader, transactions and consistency checks on a
 * plain SQLite file (no st_db): one warehouse is loaded once, checked (all twelve
 * conditions), driven with every transaction type, and checked again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "oltp/tpcc_internal.h"

static char dbpath[256];
static sqlite3 *db;

static int setup(void **state)
{
    (void)state;
    snprintf(dbpath, sizeof dbpath, "/tmp/test_tpcc_db.%ld.db", (long)getpid());
    unlink(dbpath);
    if (sqlite3_open(dbpath, &db) != SQLITE_OK) return -1;
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536",
                 NULL, NULL, NULL);
    char err[256];
    tpcc_load_opts o = {.scale = 1, .seed = 42, .quiet = true};
    tpcc_load_stats st;
    if (tpcc_load(db, &o, &st, err, sizeof err)) {
        fprintf(stderr, "load: %s\n", err);
        return -1;
    }
    fprintf(stderr, "loaded %llu rows in %.2f s\n", (unsigned long long)st.rows, st.seconds);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sqlite3_close(db);
    char p[300];
    unlink(dbpath);
    snprintf(p, sizeof p, "%s-wal", dbpath);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", dbpath);
    unlink(p);
    return 0;
}

static int64_t count(const char *sql)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void test_cardinalities(void **state)
{
    (void)state;
    assert_int_equal(count("SELECT count(*) FROM item"), 100000);
    assert_int_equal(count("SELECT count(*) FROM warehouse"), 1);
    assert_int_equal(count("SELECT count(*) FROM district"), 10);
    assert_int_equal(count("SELECT count(*) FROM customer"), 30000);
    assert_int_equal(count("SELECT count(*) FROM history"), 30000);
    assert_int_equal(count("SELECT count(*) FROM orders"), 30000);
    assert_int_equal(count("SELECT count(*) FROM new_order"), 9000);
    assert_int_equal(count("SELECT count(*) FROM stock"), 100000);
    int64_t ol = count("SELECT count(*) FROM order_line");
    assert_true(ol > 290000 && ol < 310000);
    /* About 10 % of items and stock rows say ORIGINAL; 10 % of customers have bad credit. */
    int64_t orig = count("SELECT count(*) FROM item WHERE i_data LIKE '%ORIGINAL%'");
    assert_true(orig > 9000 && orig < 11000);
    int64_t bc = count("SELECT count(*) FROM customer WHERE c_credit = 'BC'");
    assert_true(bc > 2600 && bc < 3400);
    /* Customers 1..1000 of each district carry the 1000 syllable names. */
    assert_int_equal(count("SELECT count(DISTINCT c_last) FROM customer WHERE c_id <= 1000"), 1000);
    assert_int_equal(count("SELECT count(*) FROM customer WHERE c_id = 1 AND c_last = 'BARBARBAR'"),
                     10);
    tpcc_meta m;
    char err[256];
    assert_int_equal(tpcc_meta_read(db, &m, err, sizeof err), 0);
    assert_true(m.complete);
    assert_true(m.fresh);
    assert_int_equal(m.scale, 1);
    assert_int_equal(m.seed, 42);
}

/* Stock and customer rows are wide: their trees must keep only keys above the leaves
 * (rowid tables), not whole rows as WITHOUT ROWID tables do (at one warehouse those had
 * 626 and 549 interior pages, 8 % and 15 % of the leaves, 5 and 6 levels). dbstat is in
 * Debian's SQLite. */
static void test_wide_tables_keep_keys_above_leaves(void **state)
{
    (void)state;
    static const char *const tables[] = {"stock", "customer"};
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *st;
        assert_int_equal(
            sqlite3_prepare_v2(db,
                               "SELECT sum(pagetype = 'leaf'), sum(pagetype = 'internal'),"
                               " max(length(path) - length(replace(path, '/', '')))"
                               " FROM dbstat WHERE name = ?1",
                               -1, &st, NULL),
            SQLITE_OK);
        sqlite3_bind_text(st, 1, tables[i], -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        int64_t leaves = sqlite3_column_int64(st, 0), interior = sqlite3_column_int64(st, 1),
                levels = sqlite3_column_int64(st, 2);
        sqlite3_finalize(st);
        fprintf(stderr, "%s: %lld leaves, %lld interior pages, %lld levels\n", tables[i],
                (long long)leaves, (long long)interior, (long long)levels);
        assert_true(leaves > 1000);
        assert_true(interior * 100 < leaves);
        assert_true(levels <= 3);
    }
}

/* The integer key is the composite key: a row whose key does not match its columns is
 * refused, and so is a second row of the same warehouse and item. */
static void test_row_keys_match_columns(void **state)
{
    (void)state;
    static const char *const refused[] = {
        "INSERT INTO stock (s_key, s_w_id, s_i_id) VALUES (5, 1, 7)",
        "INSERT INTO stock (s_key, s_w_id, s_i_id) VALUES (7, 1, 7)",
        "INSERT INTO customer (c_key, c_w_id, c_d_id, c_id) VALUES (3001, 1, 1, 1)",
        "INSERT INTO customer (c_key, c_w_id, c_d_id, c_id) VALUES (3001, 1, 2, 1)",
        "INSERT INTO stock (s_key, s_w_id, s_i_id) VALUES (NULL, NULL, 7)",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        int rc = sqlite3_exec(db, refused[i], NULL, NULL, NULL);
        assert_int_equal(rc & 0xff, SQLITE_CONSTRAINT);
    }
}

/* A database of an earlier layout is not read as this one. */
static void test_other_layout_refused(void **state)
{
    (void)state;
    tpcc_meta m;
    char err[256] = "";
    assert_int_equal(sqlite3_exec(db, "UPDATE appsim_tpcc SET format = 1", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(tpcc_meta_read(db, &m, err, sizeof err), TPCC_META_OLD);
    assert_non_null(strstr(err, "format 1"));
    char sql[64];
    snprintf(sql, sizeof sql, "UPDATE appsim_tpcc SET format = %d", TPCC_FORMAT);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(tpcc_meta_read(db, &m, err, sizeof err), TPCC_META_READ);
}

static void check_all(bool fresh)
{
    tpcc_check_result res[12];
    char err[256];
    int n = tpcc_check_run(db, 1, 12, fresh, res, err, sizeof err);
    assert_int_equal(n, 12);
    for (int i = 0; i < n; i++) {
        if (!res[i].pass)
            fprintf(stderr, "condition %d failed: %lld violations\n", res[i].number,
                    (long long)res[i].violations);
        assert_true(res[i].pass);
        assert_int_equal(res[i].skipped, i == 10 && !fresh);
    }
    assert_int_equal(tpcc_integrity(db, false, err, sizeof err), 0);
    assert_int_equal(tpcc_integrity(db, true, err, sizeof err), 0);
}

static void test_checks_after_load(void **state)
{
    (void)state;
    check_all(true);
}

static void test_checks_detect_damage(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(tpcc_exec(db,
                               "SAVEPOINT dmg; UPDATE warehouse SET w_ytd = w_ytd + 1;"
                               " DELETE FROM new_order WHERE no_o_id = 2500 AND no_d_id = 3",
                               err, sizeof err),
                     0);
    tpcc_check_result res[12];
    /* Inside the savepoint the check's BEGIN fails: run the statements directly. */
    assert_int_equal(tpcc_exec(db, "RELEASE dmg", err, sizeof err), 0);
    int n = tpcc_check_run(db, 1, 12, true, res, err, sizeof err);
    assert_int_equal(n, 12);
    assert_false(res[0].pass);  /* W_YTD vs D_YTD */
    assert_false(res[2].pass);  /* gap in NEW-ORDER */
    assert_false(res[4].pass);  /* carrier null but no NEW-ORDER row */
    assert_false(res[7].pass);  /* W_YTD vs history */
    assert_false(res[10].pass); /* 2100 */
    assert_true(res[1].pass);
    assert_true(res[5].pass);
    /* Undo. */
    assert_int_equal(
        tpcc_exec(db,
                  "UPDATE warehouse SET w_ytd = w_ytd - 1;"
                  " INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (2500, 3, 1)",
                  err, sizeof err),
        0);
    check_all(true);
}

/* The last payment went to the customer in the middle (by first name) of those with
 * its last name (clause 2.5.2.2): 1 when so. */
static int paid_middle_customer(const tpcc_pay_in *p)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT c_id FROM customer WHERE c_w_id = ?1 AND"
                                        " c_d_id = ?2 AND c_last = ?3 ORDER BY c_first",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int(st, 1, (int)p->c_w_id);
    sqlite3_bind_int(st, 2, (int)p->c_d_id);
    sqlite3_bind_text(st, 3, p->c_last, -1, SQLITE_STATIC);
    int64_t ids[3000];
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW && n < 3000)
        ids[n++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    assert_true(n > 0);
    return count("SELECT h_c_id FROM history ORDER BY rowid DESC LIMIT 1") == ids[(n - 1) / 2];
}

static void test_transactions(void **state)
{
    (void)state;
    char err[256];
    tpcc_meta m;
    assert_int_equal(tpcc_meta_read(db, &m, err, sizeof err), 0);
    assert_int_equal(tpcc_meta_set_fresh(db, false, err, sizeof err), 0);
    tpcc_conn *c = tpcc_conn_new(db, 1, NULL, err, sizeof err);
    assert_non_null(c);
    sim_rng r;
    sim_rng_seed(&r, 7, 1);
    tpcc_consts run;
    tpcc_consts_run(&run, &m.c_load, &r);
    int64_t next0 = count("SELECT sum(d_next_o_id) FROM district");
    int rolled = 0, ok_no = 0, skipped_total = 0, by_name = 0, by_name_paid = 0;
    for (int i = 0; i < 400; i++) {
        /* Every other transaction prefetches (New-Order then takes its items from it). */
        tpcc_conn_set_prefetch(c, i % 2);
        tpcc_no_in no;
        tpcc_gen_new_order(&r, &run, 1, 1, &no);
        bool rb;
        assert_int_equal(tpcc_new_order(c, &no, &rb, err, sizeof err), 0);
        assert_int_equal(rb, no.rollback);
        rolled += rb;
        ok_no += !rb;
        tpcc_pay_in p;
        tpcc_gen_payment(&r, &run, 1, 1, &p);
        assert_int_equal(tpcc_payment(c, &p, err, sizeof err), 0);
        if (p.by_name) {
            by_name++;
            by_name_paid += paid_middle_customer(&p);
        }
        tpcc_os_in os;
        tpcc_gen_order_status(&r, &run, 1, &os);
        assert_int_equal(tpcc_order_status(c, &os, err, sizeof err), 0);
        tpcc_sl_in sl;
        tpcc_gen_stock_level(&r, 1, (uint32_t)(i % 10) + 1, &sl);
        int low = -1;
        assert_int_equal(tpcc_stock_level(c, &sl, &low, err, sizeof err), 0);
        assert_true(low >= 0 && low <= 300);
        if (i % 10 == 0) {
            tpcc_del_in d;
            tpcc_gen_delivery(&r, 1, &d);
            int skipped = -1;
            assert_int_equal(tpcc_delivery(c, &d, &skipped, err, sizeof err), 0);
            skipped_total += skipped;
        }
    }
    assert_int_equal(skipped_total, 0);
    /* By name, prefetched or not, every payment went to the right customer. */
    assert_true(by_name > 100);
    assert_int_equal(by_name_paid, by_name);
    /* Committed New-Orders advanced d_next_o_id; rolled back ones left no trace. */
    assert_int_equal(count("SELECT sum(d_next_o_id) FROM district") - next0, ok_no);
    /* Every line of the new orders (the loaded ones end at 3000) is priced from its
     * item, prefetched or not. */
    assert_true(count("SELECT count(*) FROM order_line WHERE ol_o_id > 3000") > 1000);
    assert_int_equal(count("SELECT count(*) FROM order_line JOIN item ON i_id = ol_i_id"
                           " WHERE ol_o_id > 3000 AND ol_amount != ol_quantity * i_price"),
                     0);
    assert_true(rolled < 20);
    tpcc_counts cnt;
    tpcc_conn_take_counts(c, &cnt);
    assert_int_equal(cnt.v[TPCC_CNT_ROLLBACKS], rolled);
    assert_true(cnt.v[TPCC_CNT_BY_NAME] > 300 && cnt.v[TPCC_CNT_BY_NAME] < 660);
    /* 40 deliveries of 10 districts each. */
    assert_int_equal(count("SELECT count(*) FROM new_order"), 9000 + ok_no - 400);
    tpcc_conn_free(c);
    check_all(false);
}

/* Every statement the transactions run, prefetch included, does work bounded by the
 * rows it needs: a keyed search and its few rows, not a walk through a district's
 * orders or a table. SQLite's planner has no statistics here (as in a run), so a
 * statement it would answer with a scan or a long range walk fails this test, as the
 * latest-order lookup did before it named orders_customer (a walk back through about
 * half of the district's orders by primary key: thousands of steps a run). */
static void test_statement_work_is_bounded(void **state)
{
    (void)state;
    char err[256];
    tpcc_meta m;
    assert_int_equal(tpcc_meta_read(db, &m, err, sizeof err), 0);
    tpcc_conn *c = tpcc_conn_new(db, 1, NULL, err, sizeof err);
    assert_non_null(c);
    tpcc_conn_set_prefetch(c, true); /* its statements are the connection's too */
    sim_rng r;
    sim_rng_seed(&r, 11, 1);
    enum { RUNS = 50 };
    for (int i = 0; i < RUNS; i++) {
        tpcc_no_in no;
        bool rb;
        tpcc_gen_new_order(&r, &m.c_load, 1, 1, &no);
        assert_int_equal(tpcc_new_order(c, &no, &rb, err, sizeof err), 0);
        tpcc_pay_in p;
        tpcc_gen_payment(&r, &m.c_load, 1, 1, &p);
        assert_int_equal(tpcc_payment(c, &p, err, sizeof err), 0);
        tpcc_os_in os;
        tpcc_gen_order_status(&r, &m.c_load, 1, &os);
        assert_int_equal(tpcc_order_status(c, &os, err, sizeof err), 0);
        tpcc_sl_in sl;
        int low;
        tpcc_gen_stock_level(&r, 1, (uint32_t)(i % 10) + 1, &sl);
        assert_int_equal(tpcc_stock_level(c, &sl, &low, err, sizeof err), 0);
        if (i % 10 == 0) {
            tpcc_del_in d;
            int skipped;
            tpcc_gen_delivery(&r, 1, &d);
            assert_int_equal(tpcc_delivery(c, &d, &skipped, err, sizeof err), 0);
        }
    }
    int checked = 0;
    for (sqlite3_stmt *st = sqlite3_next_stmt(db, NULL); st; st = sqlite3_next_stmt(db, st)) {
        int runs = sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 0);
        if (runs == 0) continue;
        int steps = sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 0);
        const char *sql = sqlite3_sql(st);
        /* Stock-Level's join reads the lines of 20 orders and a stock row for each
         * (about 200 of each: some 2,000 steps); every other statement reads at most
         * an order's 15 lines or a last name's few customers (a few hundred) */
        int bound = strstr(sql, "count(DISTINCT") ? 8000 : 1000;
        if (steps / runs >= bound)
            fail_msg("%d steps a run (bound %d): %s", steps / runs, bound, sql);
        checked++;
    }
    assert_true(checked >= 25);
    tpcc_conn_free(c);
}

/* The connection's waits with this thread's read counters as they are now. */
static void waits_now(const tpcc_conn *c, tpcc_waits *out)
{
    st_db_thread_reads r;
    st_db_thread_reads_get(&r);
    tpcc_conn_waits(c, &r, out);
}

/* Two connections writing in turn: a statement left open on one connection must not
 * leave it on a stale snapshot (SQLITE_BUSY_SNAPSHOT on its next write). */
static void test_two_connections(void **state)
{
    (void)state;
    char err[256];
    sqlite3 *db2;
    assert_int_equal(sqlite3_open(dbpath, &db2), SQLITE_OK);
    tpcc_writer_lock *lock = tpcc_writer_lock_new();
    tpcc_conn *a = tpcc_conn_new(db, 1, lock, err, sizeof err);
    tpcc_conn *b = tpcc_conn_new(db2, 1, lock, err, sizeof err);
    assert_non_null(a);
    assert_non_null(b);
    tpcc_meta m;
    assert_int_equal(tpcc_meta_read(db, &m, err, sizeof err), 0);
    sim_rng r;
    sim_rng_seed(&r, 8, 1);
    for (int i = 0; i < 50; i++) {
        tpcc_conn *x = i % 2 ? a : b;
        tpcc_no_in no;
        bool rb;
        tpcc_gen_new_order(&r, &m.c_load, 1, 1, &no);
        assert_int_equal(tpcc_new_order(x, &no, &rb, err, sizeof err), 0);
        tpcc_os_in os;
        tpcc_gen_order_status(&r, &m.c_load, 1, &os);
        assert_int_equal(tpcc_order_status(x, &os, err, sizeof err), 0);
        tpcc_pay_in p;
        tpcc_gen_payment(&r, &m.c_load, 1, 1, &p);
        assert_int_equal(tpcc_payment(x == a ? b : a, &p, err, sizeof err), 0);
    }
    tpcc_counts k;
    tpcc_conn_take_counts(a, &k);
    assert_int_equal(k.v[TPCC_CNT_RETRIES], 0);
    /* The waits: a write transaction holds the lock (BEGIN and COMMIT under it), a
     * read-only one does not; prefetch is timed when on. */
    tpcc_waits w0, w1;
    waits_now(a, &w0);
    assert_true(w0.ns[TPCC_W_HELD] > 0);
    assert_true(w0.ns[TPCC_W_HELD] >= w0.ns[TPCC_W_BEGIN_HELD] + w0.ns[TPCC_W_COMMIT_HELD]);
    assert_true(w0.ns[TPCC_W_BEGIN_HELD] > 0 && w0.ns[TPCC_W_COMMIT_HELD] > 0);
    assert_int_equal(w0.ns[TPCC_W_PREFETCH], 0);
    tpcc_conn_set_prefetch(a, true);
    tpcc_pay_in p;
    tpcc_gen_payment(&r, &m.c_load, 1, 1, &p);
    assert_int_equal(tpcc_payment(a, &p, err, sizeof err), 0);
    waits_now(a, &w1);
    assert_true(w1.txn_held_ns > 0);
    assert_int_equal(w1.ns[TPCC_W_HELD] - w0.ns[TPCC_W_HELD], w1.txn_held_ns);
    assert_true(w1.ns[TPCC_W_PREFETCH] > 0);
    tpcc_os_in os;
    tpcc_gen_order_status(&r, &m.c_load, 1, &os);
    assert_int_equal(tpcc_order_status(a, &os, err, sizeof err), 0);
    waits_now(a, &w0);
    assert_int_equal(w0.txn_held_ns, 0);
    assert_int_equal(w0.ns[TPCC_W_HELD], w1.ns[TPCC_W_HELD]);
    tpcc_conn_free(a);
    tpcc_conn_free(b);
    tpcc_writer_lock_free(lock);
    sqlite3_close(db2);
    check_all(false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cardinalities),
        cmocka_unit_test(test_wide_tables_keep_keys_above_leaves),
        cmocka_unit_test(test_row_keys_match_columns),
        cmocka_unit_test(test_other_layout_refused),
        cmocka_unit_test(test_checks_after_load),
        cmocka_unit_test(test_checks_detect_damage),
        cmocka_unit_test(test_transactions),
        cmocka_unit_test(test_two_connections),
        cmocka_unit_test(test_statement_work_is_bounded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
