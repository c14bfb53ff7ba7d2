/*
 * storage/sqlite/sqlite_bulk.c against SQLite itself: trees written page by page must pass
 * PRAGMA integrity_check and read back exactly the rows and index entries given, for
 * every tree shape: empty, a root leaf, and each level's last page ending with one
 * child (the held-page fix-ups), over page sizes from 512 to 65536 bytes and reserved
 * bytes. Rows come out equal to those SQLite's own INSERT stores, record by record.
 */
#include "storage/sqlite/sqlite.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/appsim-test-bulk-XXXXXX";
/* SQLite's lock-byte offset as this process has it (moved by one test). */
static uint64_t pending_byte = 0x40000000;

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static void exec_ok(sqlite3 *c, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(c, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) fail_msg("%s: %s", sql, msg);
}

static int64_t one_int(sqlite3 *c, const char *sql)
{
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(c, sql, -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

static uint32_t root_of(sqlite3 *c, const char *name)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT rootpage FROM sqlite_schema WHERE name='%s'", name);
    return (uint32_t)one_int(c, sql);
}

/* Row i's values: k in a small range (many duplicates in the index), and text whose
 * length varies with i, so that cells differ in size. */
static int64_t row_k(uint64_t i, uint64_t n)
{
    uint64_t x = i * 2654435761u;
    int64_t k = (int64_t)(x % (n / 3 + 2));
    return (i % 97 == 0) ? -k * 100000 : k; /* some negative and wide values */
}

static void row_text(uint64_t i, char *buf, size_t *len, size_t maxlen)
{
    *len = (i * 7) % maxlen;
    for (size_t j = 0; j < *len; j++)
        buf[j] = (char)('a' + (i + j) % 26);
}

typedef struct ki {
    int64_t k;
    int64_t id;
} ki;

static int cmp_ki(const void *a, const void *b)
{
    const ki *x = a, *y = b;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Builds t(id INTEGER PRIMARY KEY, k, c) with n rows and index on k; checks it. */
static void build_and_check(uint32_t page_size, int reserved, uint64_t n, size_t maxtext)
{
    char path[256], sql[256];
    snprintf(path, sizeof path, "%s/t-%u-%d-%llu.db", dir, page_size, reserved,
             (unsigned long long)n);
    unlink(path);
    sqlite3 *c = NULL;
    assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
    /* No syncs: the file's content is under test, not its durability (and fsyncs on a
     * busy disk made this test take a minute). */
    snprintf(sql, sizeof sql,
             "PRAGMA page_size=%u; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", page_size);
    exec_ok(c, sql);
    if (reserved) {
        assert_int_equal(sqlite3_file_control(c, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserved),
                         SQLITE_OK);
    }
    exec_ok(c, "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER NOT NULL, c TEXT);"
               "CREATE INDEX ki ON t(k); CREATE TABLE other(x); INSERT INTO other VALUES(42)");
    uint32_t rt = root_of(c, "t"), ri = root_of(c, "ki");
    sqlite3_close(c);

    char err[256] = "";
    st_sqlite_bulk *b = NULL;
    assert_int_equal(st_sqlite_bulk_open(path, &b, err, sizeof err), 0);
    st_sqlite_bulk_set_pending_byte(b, pending_byte);
    assert_int_equal(st_sqlite_bulk_begin(b, false, rt, err, sizeof err), 0);
    ki *pairs = malloc((n + 1) * sizeof *pairs);
    assert_non_null(pairs);
    char text[4096];
    uint8_t rec[4200];
    for (uint64_t i = 1; i <= n; i++) {
        size_t len;
        row_text(i, text, &len, maxtext);
        st_sqlite_value v[3] = {{.type = ST_SQLITE_NULL},
                                {.type = ST_SQLITE_INT, .i = row_k(i, n)},
                                {.type = ST_SQLITE_TEXT, .text = text, .len = len}};
        size_t rl = st_sqlite_bulk_record(b, v, 3, rec, sizeof rec);
        assert_true(rl > 0);
        int64_t rowid = (int64_t)(i * 3); /* gaps, and varint lengths that grow */
        if (st_sqlite_bulk_row(b, rowid, rec, rl, err, sizeof err)) fail_msg("%s", err);
        pairs[i - 1] = (ki){row_k(i, n), rowid};
    }
    assert_int_equal(st_sqlite_bulk_end(b, err, sizeof err), 0);
    qsort(pairs, n, sizeof *pairs, cmp_ki);
    assert_int_equal(st_sqlite_bulk_begin(b, true, ri, err, sizeof err), 0);
    for (uint64_t i = 0; i < n; i++) {
        st_sqlite_value v[2] = {{.type = ST_SQLITE_INT, .i = pairs[i].k},
                                {.type = ST_SQLITE_INT, .i = pairs[i].id}};
        size_t rl = st_sqlite_bulk_record(b, v, 2, rec, sizeof rec);
        if (st_sqlite_bulk_entry(b, rec, rl, err, sizeof err)) fail_msg("%s", err);
    }
    assert_int_equal(st_sqlite_bulk_end(b, err, sizeof err), 0);
    assert_int_equal(st_sqlite_bulk_close(b, err, sizeof err), 0);

    assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
    exec_ok(c, "PRAGMA synchronous=OFF");
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(c, "PRAGMA integrity_check", -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    const char *ic = (const char *)sqlite3_column_text(s, 0);
    if (strcmp(ic, "ok"))
        fail_msg("page %u reserved %d rows %llu: %s", page_size, reserved, (unsigned long long)n,
                 ic);
    sqlite3_finalize(s);
    assert_int_equal(one_int(c, "SELECT x FROM other"), 42);
    assert_int_equal(one_int(c, "SELECT count(*) FROM t NOT INDEXED"), (int64_t)n);
    assert_int_equal(one_int(c, "SELECT count(*) FROM t INDEXED BY ki"), (int64_t)n);

    /* Every row as given, in rowid order, and each record as SQLite would store it. */
    assert_int_equal(sqlite3_prepare_v2(c, "SELECT id, k, c FROM t ORDER BY id", -1, &s, NULL),
                     SQLITE_OK);
    for (uint64_t i = 1; i <= n; i++) {
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        size_t len;
        row_text(i, text, &len, maxtext);
        assert_int_equal(sqlite3_column_int64(s, 0), (int64_t)(i * 3));
        assert_int_equal(sqlite3_column_int64(s, 1), row_k(i, n));
        assert_int_equal((size_t)sqlite3_column_bytes(s, 2), len);
        assert_memory_equal(sqlite3_column_text(s, 2), text, len);
    }
    assert_int_equal(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);

    /* The index in its order, through the index. */
    assert_int_equal(
        sqlite3_prepare_v2(c, "SELECT k, id FROM t INDEXED BY ki ORDER BY k, id", -1, &s, NULL),
        SQLITE_OK);
    for (uint64_t i = 0; i < n; i++) {
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int64(s, 0), pairs[i].k);
        assert_int_equal(sqlite3_column_int64(s, 1), pairs[i].id);
    }
    sqlite3_finalize(s);

    /* SQLite can go on writing the trees it was given. */
    exec_ok(c, "INSERT INTO t(k, c) VALUES (5, 'new'); DELETE FROM t WHERE id % 5 = 0;"
               "UPDATE t SET k = k + 1 WHERE id % 7 = 0");
    assert_int_equal(sqlite3_prepare_v2(c, "PRAGMA integrity_check", -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(s, 0), "ok");
    sqlite3_finalize(s);
    sqlite3_close(c);
    free(pairs);
    unlink(path);
}

static void every_small_shape(void **state)
{
    (void)state;
    /* 512-byte pages hold a handful of cells, so a few thousand rows reach three and
     * four levels and every way a level can end. */
    for (uint64_t n = 0; n <= 1200; n += (n < 300 ? 1 : 7))
        build_and_check(512, 0, n, 40);
}

static void page_sizes_and_reserved_bytes(void **state)
{
    (void)state;
    uint32_t sizes[] = {1024, 4096, 16384, 65536};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        build_and_check(sizes[i], 0, 20000, 300);
        build_and_check(sizes[i], 0, 1, 300);
    }
    build_and_check(4096, 32, 5000, 300);
    build_and_check(512, 8, 3000, 40);
}

static void large_rows_near_the_local_limit(void **state)
{
    (void)state;
    build_and_check(1024, 0, 2000, 980); /* rows up to usable - 35 - overhead */
}

/* Files past SQLite's lock-byte offset (2^30 in real files, moved down here with
 * SQLite's test control so that files of a few hundred KiB cross it): the page that
 * holds the lock bytes stays out of every tree, wherever in a level's run of pages it
 * falls, and SQLite goes on writing across it. A tree that put a page there would fail
 * to read back once the file passed 1 GiB (the 5th 1M-row sbtest table). */
static void trees_across_the_lock_byte_page(void **state)
{
    (void)state;
    uint64_t offsets[] = {0x10000, 0x18200};
    for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
        pending_byte = offsets[o];
        sqlite3_test_control(SQLITE_TESTCTRL_PENDING_BYTE, (unsigned)pending_byte);
        /* 512-byte pages: the lock page is page 129 or 194; these row counts put it at
         * every position in the run of leaves and interior pages around it. */
        for (uint64_t n = 600; n <= 4000; n += 67)
            build_and_check(512, 0, n, 40);
        build_and_check(4096, 0, 3000, 300); /* lock page 17 or 25 */
        build_and_check(1024, 8, 2500, 120);
    }
    pending_byte = 0x40000000;
    sqlite3_test_control(SQLITE_TESTCTRL_PENDING_BYTE, (unsigned)pending_byte);
}

/* Records the writer cannot place are refused, not written as corrupt pages. */
static void refusals(void **state)
{
    (void)state;
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/refuse.db", dir);
    sqlite3 *c = NULL;
    assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
    exec_ok(c, "PRAGMA page_size=1024; CREATE TABLE t(id INTEGER PRIMARY KEY, c TEXT)");
    uint32_t rt = root_of(c, "t");
    sqlite3_close(c);
    st_sqlite_bulk *b = NULL;
    assert_int_equal(st_sqlite_bulk_open(path, &b, err, sizeof err), 0);
    assert_int_not_equal(st_sqlite_bulk_begin(b, false, 1, err, sizeof err), 0);
    assert_int_equal(st_sqlite_bulk_begin(b, false, rt, err, sizeof err), 0);
    uint8_t big[2000] = {0};
    assert_int_not_equal(st_sqlite_bulk_row(b, 1, big, sizeof big, err, sizeof err), 0);
    assert_non_null(strstr(err, "overflow"));
    uint8_t rec[8] = {2, 0};
    assert_int_equal(st_sqlite_bulk_row(b, 5, rec, 2, err, sizeof err), 0);
    assert_int_not_equal(st_sqlite_bulk_row(b, 5, rec, 2, err, sizeof err), 0);
    /* Closed without end: the file is left as SQLite wrote it. */
    assert_int_not_equal(st_sqlite_bulk_close(b, err, sizeof err), 0);
    assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
    assert_int_equal(one_int(c, "SELECT count(*) FROM t"), 0);
    sqlite3_close(c);

    snprintf(path, sizeof path, "%s/autovacuum.db", dir);
    assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
    exec_ok(c, "PRAGMA auto_vacuum=FULL; CREATE TABLE t(x)");
    sqlite3_close(c);
    assert_int_not_equal(st_sqlite_bulk_open(path, &b, err, sizeof err), 0);
    assert_non_null(strstr(err, "auto-vacuum"));

    snprintf(path, sizeof path, "%s/not-a-db", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("hello, this is not a database file, but long enough to have a header ........"
          "..............................................",
          f);
    fclose(f);
    assert_int_not_equal(st_sqlite_bulk_open(path, &b, err, sizeof err), 0);
    assert_non_null(strstr(err, "not a SQLite database"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_small_shape),
        cmocka_unit_test(page_sizes_and_reserved_bytes),
        cmocka_unit_test(large_rows_near_the_local_limit),
        cmocka_unit_test(refusals),
        cmocka_unit_test(trees_across_the_lock_byte_page),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
