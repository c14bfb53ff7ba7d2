/*
 * Fail-stop in the direct-I/O VFS (docs/storage.md): a checkpoint whose database-page
 * writes fail must not corrupt the database. The fault is injected with RLIMIT_FSIZE:
 * the database file may not grow past its size, while the WAL (restarted at offset 0,
 * smaller than the database) still can; a checkpoint then has to append pages and gets
 * EFBIG. The first error is recorded (sim_fault_noted), nothing more is written (the
 * failing flush sends no write after the first failure comes back: at most one queue of
 * them), and after the limit is lifted the reopened database passes integrity_check with
 * every committed row.
 */
#include "storage/sqlite/sqlite.h"
#include "storage/sqlite/sqlite_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

static char root[256];

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

static st_db *open_db(st_target *t, bool create)
{
    char err[1024];
    /* No background checkpoint: the test decides when one runs. */
    st_db_opts o = {
        .buffer_bytes = 16 << 20, .max_connections = 2, .checkpoint_wal_bytes = 1ull << 40};
    st_db *db = NULL;
    int rc = st_db_open(t, "test.db", &o, create, &db, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    return db;
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

static void test_failed_checkpoint_keeps_database(void **state)
{
    (void)state;
    char p[300], err[1024];
    snprintf(p, sizeof p, "%s/t", root);
    st_target_opts to = {.path = p, .create_dir = true};
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
    /* the pages inside the file, then at most one queue of failing appends */
    fprintf(stderr, "database writes sent by the failing checkpoint: %lld\n", sent);
    assert_true(sent > 0);
    assert_true(sent <= VF_DB_DEPTH_MAX + 32);
    assert_non_null(strstr(sim_fault_message(), "test.db"));

    sim_fault_reset();
    db = open_db(t, false);
    c = connect(db);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(c, "PRAGMA integrity_check", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "ok");
    sqlite3_finalize(q);
    assert_int_equal(count_rows(c), 1300); /* every committed row, none of the refused */
    assert_int_equal(insert(c, 1300, 10, 1), SQLITE_OK); /* and writable again */
    sqlite3_close(c);
    st_db_close(db);
    st_target_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_failed_checkpoint_keeps_database, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
