/*
 * Group commit (st_db_commit_durable, storage/sqlite/sqlite_vfs.c vf_wal_durable): eight
 * threads commit through connections in group-commit mode, each calling
 * st_db_commit_durable after its commit. When that returns, the WAL on the device (read
 * back through a file descriptor of its own, not the buffer pool) must hold the commit
 * frames of that commit and of every commit before it; every commit is counted as made
 * durable, by fewer syncs than commits. No checkpoints or restarts run, so the WAL only
 * grows and its frames can be counted from the start.
 *
 * A cycle that fails (the WAL may not grow: RLIMIT_FSIZE, EFBIG) fails the commits it
 * was to make durable: every waiting thread wakes with an error (none hangs), and every
 * commit acknowledged before is on the device.
 */
#include "storage/sqlite/sqlite.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define THREADS 8
#define COMMITS 60
#define CHECK_EVERY 7 /* reading the WAL back costs; every 7th commit is checked */

static char root[256];
static st_db *db;
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t committed; /* commits in WAL order (taken under `writer`) */
static atomic_int failures;

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/appsim-test-group-commit-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Commit frames in the WAL file as the device has it: frames are counted from the start
 * while their salts match the header's. */
static uint64_t commits_on_device(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/test.db-wal", root);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    uint8_t hdr[32];
    uint64_t n = 0;
    if (pread(fd, hdr, sizeof hdr, 0) == (ssize_t)sizeof hdr) {
        uint32_t page = be32(hdr + 8);
        uint8_t fh[24];
        for (uint64_t off = 32; pread(fd, fh, sizeof fh, (off_t)off) == (ssize_t)sizeof fh;
             off += 24 + page) {
            if (memcmp(fh + 8, hdr + 16, 8) != 0) break; /* salts: not of this WAL */
            if (be32(fh + 4) != 0) n++;                  /* a commit frame */
        }
    }
    close(fd);
    return n;
}

/* A connection in group-commit mode for thread id; NULL (counted as a failure) if not. */
static sqlite3 *connect_group_commit(int id)
{
    char err[1024];
    sqlite3 *c = NULL;
    if (st_db_connect(db, &c, err, sizeof err) || st_db_conn_group_commit(db, c, err, sizeof err)) {
        fprintf(stderr, "thread %d: %s\n", id, err);
        atomic_fetch_add(&failures, 1);
        sqlite3_close(c);
        return NULL;
    }
    return c;
}

/* THREADS threads running fn(id), joined. */
static void run_committers(void *(*fn)(void *))
{
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, fn, (void *)(intptr_t)i), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
}

static void *committer(void *arg)
{
    int id = (int)(intptr_t)arg;
    char err[1024];
    sqlite3 *c = connect_group_commit(id);
    if (!c) return NULL;
    for (int i = 0; i < COMMITS; i++) {
        char sql[200];
        snprintf(sql, sizeof sql,
                 "BEGIN IMMEDIATE; INSERT INTO t(th, v) VALUES (%d, randomblob(300)); COMMIT", id);
        pthread_mutex_lock(&writer);
        int rc = sqlite3_exec(c, sql, NULL, NULL, NULL);
        uint64_t mine = atomic_fetch_add(&committed, 1) + 1;
        pthread_mutex_unlock(&writer);
        if (rc != SQLITE_OK || st_db_commit_durable(db, err, sizeof err) != SIM_OK) {
            fprintf(stderr, "thread %d: commit %d failed\n", id, i);
            atomic_fetch_add(&failures, 1);
            break;
        }
        if (i % CHECK_EVERY == CHECK_EVERY - 1 || i == COMMITS - 1) {
            uint64_t have = commits_on_device();
            if (have < mine) {
                fprintf(stderr, "thread %d: commit %llu acknowledged, %llu on the device\n", id,
                        (unsigned long long)mine, (unsigned long long)have);
                atomic_fetch_add(&failures, 1);
            }
        }
    }
    sqlite3_close(c);
    return NULL;
}

/* Opens test.db in root with its table, through connection *c; the commits on the
 * device so far (the schema's). No background checkpoint and no bound: the WAL only
 * grows. Skips the test on a target without group commit (buffered). */
static uint64_t open_test_db(st_target **t, sqlite3 **c)
{
    char err[1024];
    st_target_opts to = {.path = root};
    assert_int_equal(st_target_open(&to, t, err, sizeof err), 0);
    st_db_opts o = {.buffer_bytes = 16 << 20,
                    .max_connections = THREADS + 1,
                    .sync = "full",
                    .checkpoint_wal_bytes = 1ull << 40,
                    .wal_limit_bytes = UINT64_MAX};
    int rc = st_db_open(*t, "test.db", &o, true, &db, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    if (!st_db_can_group_commit(db)) { /* a buffered target: nothing to test */
        st_db_close(db);
        st_target_close(*t);
        skip();
    }
    assert_int_equal(st_db_connect(db, c, err, sizeof err), 0);
    assert_int_equal(sqlite3_exec(*c, "CREATE TABLE t(id INTEGER PRIMARY KEY, th INT, v BLOB)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    uint64_t base = commits_on_device();
    atomic_store(&committed, base);
    return base;
}

static void test_durable_commits_are_on_the_device(void **state)
{
    (void)state;
    char err[1024];
    st_target *t = NULL;
    sqlite3 *c = NULL;
    uint64_t base = open_test_db(&t, &c);
    run_committers(committer);
    assert_int_equal(atomic_load(&failures), 0);
    st_db_gc_stats gc;
    st_db_group_commit_stats(db, &gc);
    uint64_t commits = gc.commits;
    assert_int_equal(commits, THREADS * COMMITS);
    assert_true(gc.wal_syncs >= 1 && gc.wal_syncs < commits);
    /* a write ahead is a commit's, so there are no more of them than commits, and each
     * wrote at least one block */
    assert_true(gc.writes_ahead <= commits);
    assert_true(gc.blocks_ahead >= gc.writes_ahead);
    assert_int_equal(commits_on_device(), base + THREADS * COMMITS);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(c, "SELECT count(*) FROM t", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), THREADS * COMMITS);
    sqlite3_finalize(st);
    sqlite3_close(c);
    st_db_close(db);
    st_target_cleanup(t, err, sizeof err);
    st_target_close(t);
}

/* Commits until one fails; the highest commit number acknowledged durable in acked[id]. */
static uint64_t acked[THREADS];
static atomic_int ended_with_error;

static void *committer_until_failure(void *arg)
{
    int id = (int)(intptr_t)arg;
    char err[1024];
    sqlite3 *c = connect_group_commit(id);
    if (!c) return NULL;
    for (int i = 0; i < COMMITS * 10; i++) {
        pthread_mutex_lock(&writer);
        int rc = sqlite3_exec(
            c, "BEGIN IMMEDIATE; INSERT INTO t(th, v) VALUES (0, randomblob(300)); COMMIT", NULL,
            NULL, NULL);
        uint64_t mine = rc == SQLITE_OK ? atomic_fetch_add(&committed, 1) + 1 : 0;
        pthread_mutex_unlock(&writer);
        if (rc != SQLITE_OK || st_db_commit_durable(db, err, sizeof err) != SIM_OK) {
            if (rc != SQLITE_OK) sqlite3_exec(c, "ROLLBACK", NULL, NULL, NULL);
            atomic_fetch_add(&ended_with_error, 1);
            break;
        }
        acked[id] = mine;
    }
    sqlite3_close(c);
    return NULL;
}

static void test_a_failed_sync_fails_its_commits(void **state)
{
    (void)state;
    char err[1024];
    st_target *t = NULL;
    sqlite3 *c = NULL;
    uint64_t base = open_test_db(&t, &c);
    /* the WAL may grow by 64 KiB more: about fifteen commits, then its writes fail */
    char wal[400];
    snprintf(wal, sizeof wal, "%s/test.db-wal", root);
    struct stat st;
    assert_int_equal(stat(wal, &st), 0);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)st.st_size + (64 << 10);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    alarm(60); /* a thread that never wakes ends the test (SIGALRM) instead of hanging it */
    run_committers(committer_until_failure);
    alarm(0);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_int_equal(atomic_load(&failures), 0);
    assert_int_equal(atomic_load(&ended_with_error), THREADS); /* each woke with the error */
    /* the limit refuses a write (EFBIG) or cuts it short (noted as EIO) */
    assert_true(sim_fault_noted() == EFBIG || sim_fault_noted() == EIO);
    uint64_t on_device = commits_on_device(), most = base;
    for (int i = 0; i < THREADS; i++)
        if (acked[i] > most) most = acked[i];
    fprintf(stderr, "commits acknowledged up to %llu, on the device %llu (from %llu)\n",
            (unsigned long long)most, (unsigned long long)on_device, (unsigned long long)base);
    assert_true(most > base);       /* some were made durable before the limit */
    assert_true(most <= on_device); /* and every one acknowledged is there */
    sqlite3_close(c);
    st_db_close(db);
    st_target_cleanup(t, err, sizeof err);
    st_target_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_durable_commits_are_on_the_device, setup, teardown),
        /* last: a storage fault stops every later write of the process (fail-stop) */
        cmocka_unit_test_setup_teardown(test_a_failed_sync_fails_its_commits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
