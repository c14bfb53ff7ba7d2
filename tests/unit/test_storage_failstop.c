/*
 * Fail-stop in the direct-I/O VFS (docs/storage.md): a checkpoint whose database-page
 * writes fail must not corrupt the database. The fault is injected with RLIMIT_FSIZE:
 * the database file may not grow past its size, while the WAL (restarted at offset 0,
 * smaller than the database) still can; a checkpoint then has to append pages and gets
 * EFBIG. The first error is recorded (sim_fault_noted), nothing more is written (the
 * failing flush sends no write after the first failure comes back: at most one queue of
 * them), and after the limit is lifted the reopened database passes integrity_check with
 * every committed row. The same holds through SQLite's own VFS on a buffered target
 * (storage/sqlite/sqlite_failstop.c).
 *
 * An I/O engine that fails while database-page writes are in flight (a reap error: the
 * engine can no longer say when they end, and they still read the flush's buffer) is a
 * storage fault too: the checkpoint stops, nothing more is written, and the database
 * reopens intact. The engine is the test's own ("reapfail", registered by name like
 * the real ones): psync underneath, but while told to it refuses to give back the
 * writes it has run.
 */
#include "storage/engine_internal.h"
#include "storage/sqlite/sqlite.h"
#include "storage/sqlite/sqlite_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

static char root[256];

/* ------------------------------------------------------------------ the failing engine */

/* psync underneath; the writes it has run and not yet given back are counted so that a
 * reap can refuse while one is among them. */
typedef struct reapfail {
    st_engine *inner;
    unsigned writes;
} reapfail;

static atomic_bool fail_write_reaps;

static int rf_open(st_engine *e, unsigned qd, char *err, size_t errlen)
{
    reapfail *p = calloc(1, sizeof *p);
    if (p) p->inner = st_engine_open("psync", qd, err, errlen);
    if (!p || !p->inner) {
        free(p);
        return -1;
    }
    e->priv = p;
    return 0;
}

static void rf_close(st_engine *e)
{
    reapfail *p = e->priv;
    st_engine_close(p->inner);
    free(p);
}

static int rf_submit(st_engine *e, st_io *const *ios, unsigned n)
{
    reapfail *p = e->priv;
    int r = st_engine_submit(p->inner, ios, n);
    for (int i = 0; i < r; i++)
        p->writes += ios[i]->op == ST_OP_WRITE;
    return r;
}

static int rf_reap(st_engine *e, st_io **done, unsigned max, unsigned min_wait)
{
    reapfail *p = e->priv;
    if (p->writes && atomic_load(&fail_write_reaps)) return -EBADR;
    int r = st_engine_reap(p->inner, done, max, min_wait);
    for (int i = 0; i < r; i++)
        p->writes -= done[i]->op == ST_OP_WRITE;
    return r;
}

static const st_engine_ops reapfail_ops = {
    .name = "reapfail",
    .description = "test: psync that refuses to reap finished writes when told to",
    .open = rf_open,
    .close = rf_close,
    .submit = rf_submit,
    .reap = rf_reap,
};
ST_REGISTER_ENGINE(reapfail_ops)

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/appsim-test-failstop-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd);
}

static st_db *open_db_with(st_target *t, bool create, const char *engine)
{
    char err[1024];
    /* No background checkpoint: the test decides when one runs. */
    st_db_opts o = {.buffer_bytes = 16 << 20,
                    .max_connections = 2,
                    .checkpoint_wal_bytes = 1ull << 40,
                    .engine = engine};
    st_db *db = NULL;
    int rc = st_db_open(t, "test.db", &o, create, &db, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    return db;
}

static st_db *open_db(st_target *t, bool create)
{
    return open_db_with(t, create, NULL);
}

static sqlite3 *connect(st_db *db)
{
    char err[1024];
    sqlite3 *c = NULL;
    assert_int_equal(st_db_connect(db, &c, err, sizeof err), 0);
    return c;
}

/* n rows of 2 KiB from id `from`, in `commits` transactions; the sqlite3_exec status. */
static int insert(sqlite3 *c, int from, int n, int commits)
{
    int rc = SQLITE_OK;
    for (int k = 0; k < commits && rc == SQLITE_OK; k++) {
        char sql[200];
        int lo = from + k * n / commits, hi = from + (k + 1) * n / commits;
        snprintf(sql, sizeof sql,
                 "BEGIN; WITH RECURSIVE s(i) AS (SELECT %d UNION ALL SELECT i + 1 FROM s WHERE "
                 "i + 1 < %d) INSERT INTO t SELECT i, randomblob(2048) FROM s; COMMIT;",
                 lo, hi);
        rc = sqlite3_exec(c, sql, NULL, NULL, NULL);
        if (rc != SQLITE_OK) sqlite3_exec(c, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}

static long long count_rows(sqlite3 *c)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(c, "SELECT count(*) FROM t", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* Writes the database file has sent to the device so far (failed ones included). */
static long long db_writes(st_db *db)
{
    json_t *j = st_db_json(db);
    long long n =
        json_integer_value(json_object_get(json_object_get(j, "db_file"), "device_writes"));
    json_decref(j);
    return n;
}

/* After the fault is lifted: the database reopens with the default engine, passes
 * integrity_check with `rows` rows and takes writes again. */
static void expect_intact(st_target *t, long long rows)
{
    st_db *db = open_db(t, false);
    sqlite3 *c = connect(db);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(c, "PRAGMA integrity_check", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "ok");
    sqlite3_finalize(q);
    assert_int_equal(count_rows(c), rows);
    assert_int_equal(insert(c, (int)rows, 10, 1), SQLITE_OK); /* and writable again */
    sqlite3_close(c);
    st_db_close(db);
}

/* A checkpoint whose page appends fail with EFBIG, on appsim's VFS or (buffered) on
 * SQLite's own under the fail-stop wrapper. */
static void failed_checkpoint(bool buffered)
{
    char p[300], err[1024];
    snprintf(p, sizeof p, "%s/t", root);
    st_target_opts to = {.path = p, .buffered = buffered};
    st_target *t = NULL;
    assert_int_equal(st_target_open(&to, &t, err, sizeof err), 0);
    st_db *db = open_db(t, true);
    sqlite3 *c = connect(db);
    assert_int_equal(
        sqlite3_exec(c, "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)", NULL, NULL, NULL),
        SQLITE_OK);
    assert_int_equal(insert(c, 0, 1000, 1), SQLITE_OK);
    assert_int_equal(st_db_checkpoint(db, err, sizeof err), 0);
    /* 300 more rows (a page each): WAL frames for pages past the database file's end,
     * more than twice the deepest queue, so a flush that went on after the first failure
     * would send them all. */
    assert_int_equal(insert(c, 1000, 300, 3), SQLITE_OK);
    assert_true(300 > 2 * VF_DB_DEPTH_MAX);
    char dbpath[400];
    snprintf(dbpath, sizeof dbpath, "%s/test.db", p);
    struct stat st;
    assert_int_equal(stat(dbpath, &st), 0);

    signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of the signal */
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)st.st_size;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    long long writes0 = db_writes(db);
    st_db_checkpoint(db, err, sizeof err); /* its page writes fail (SQLite may not say so) */
    int fault = sim_fault_noted();
    long long sent = db_writes(db) - writes0;
    int after = insert(c, 1300, 10, 1); /* refused: nothing is written after a fault */
    sqlite3_close(c);
    st_db_close(db);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_int_equal(fault, EFBIG);
    assert_int_not_equal(after, SQLITE_OK);
    if (!buffered) {
        /* the pages inside the file, then at most one queue of failing appends */
        fprintf(stderr, "database writes sent by the failing checkpoint: %lld\n", sent);
        assert_true(sent > 0);
        assert_true(sent <= VF_DB_DEPTH_MAX + 32);
    }
    assert_non_null(strstr(sim_fault_message(), "test.db"));

    sim_fault_reset();
    expect_intact(t, 1300); /* every committed row, none of the refused */
    st_target_close(t);
}

static void test_failed_checkpoint_keeps_database(void **state)
{
    (void)state;
    failed_checkpoint(false);
}

/* Through the page cache (--buffered): SQLite's default VFS answered the same EFBIG with
 * an error per transaction and took the next writes. */
static void test_buffered_failed_checkpoint_keeps_database(void **state)
{
    (void)state;
    failed_checkpoint(true);
}

static void test_engine_failure_stops_writes(void **state)
{
    (void)state;
    char p[300], err[1024];
    snprintf(p, sizeof p, "%s/e", root);
    st_target_opts to = {.path = p};
    st_target *t = NULL;
    assert_int_equal(st_target_open(&to, &t, err, sizeof err), 0);
    st_db *db = open_db_with(t, true, "reapfail");
    sqlite3 *c = connect(db);
    assert_int_equal(
        sqlite3_exec(c, "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)", NULL, NULL, NULL),
        SQLITE_OK);
    assert_int_equal(insert(c, 0, 500, 5), SQLITE_OK);

    atomic_store(&fail_write_reaps, true);
    st_db_checkpoint(db, err, sizeof err); /* its first batch of page writes is never reaped */
    int fault = sim_fault_noted();
    int after = insert(c, 500, 10, 1); /* refused: nothing is written after a fault */
    atomic_store(&fail_write_reaps, false);
    sqlite3_close(c);
    st_db_close(db);
    assert_int_equal(fault, EIO);
    assert_int_not_equal(after, SQLITE_OK);
    assert_non_null(strstr(sim_fault_message(), "test.db"));
    assert_non_null(strstr(sim_fault_message(), "I/O engine failed"));

    sim_fault_reset();
    expect_intact(t, 500); /* every committed row, none of the refused */
    st_target_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_failed_checkpoint_keeps_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_buffered_failed_checkpoint_keeps_database, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_engine_failure_stops_writes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
