/*
 * oltp/sysbench_sqlite.c: the "sqlite" engine of `appsim sysbench`: sysbench's sbtest
 * tables in one SQLite database per instance, opened through storage/'s st_db (direct
 * I/O VFS whose buffer pool is --buffer, WAL, checkpoints in the background).
 *
 * Schema and statements are sysbench's oltp_common.lua for a SQL database: table
 * sbtestN(id INTEGER PRIMARY KEY, k, c CHAR(120), pad CHAR(60)) and index k_N on k.
 * Prepare writes both b-trees as pages (storage/sqlite_bulk.c) or, with --load-via sql,
 * inserts the rows and then creates the index, as sysbench does. A connection prepares
 * each table's statements on first use and keeps them. Read snapshots are BEGIN (deferred), write
 * transactions BEGIN IMMEDIATE, so that a writer never has to abandon work because
 * another committed first; SQLITE_BUSY after the busy timeout is a retry.
 * Invariant: after commit or rollback returns, no transaction is open on the
 * connection (a failed COMMIT is rolled back here).
 *
 * Writers queue in arrival order on an in-process FIFO lock (sim_fifo_lock) before
 * BEGIN IMMEDIATE. SQLite admits one writer per database and makes the others poll
 * with sleeps of up to 100 ms (its busy handler), which leaves the lock idle while
 * writers sleep and gives second-long tails that are SQLite's polling, not the drive.
 * Every connection of an instance lives in this process, so a queue here is what a
 * lock manager would do; the busy timeout still covers the checkpointer and readers.
 */
#include "oltp/oltp.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUSY_TIMEOUT_MS 10000
#define LOAD_BATCH_ROWS 200000

typedef struct sq_db {
    st_db *db;
    st_target *target;
    sb_db_opts o;
    sim_fifo_lock *writers; /* FIFO writer queue, see the top of the file */
    /* Bulk load only: one exclusive connection through SQLite's default VFS. */
    sqlite3 *load;
    uint32_t page_size;
    char path[4096];
} sq_db;

enum {
    S_POINT,
    S_SIMPLE,
    S_SUM,
    S_ORDER,
    S_DISTINCT,
    S_UPD_IDX,
    S_UPD_NONIDX,
    S_DELETE,
    S_INSERT,
    S_INSERT_AUTO,
    S_COUNT,
};

/* sysbench's statement texts (oltp_common.lua stmt_defs); %u is the table number. */
static const char *const stmt_sql[S_COUNT] = {
    [S_POINT] = "SELECT c FROM sbtest%u WHERE id=?",
    [S_SIMPLE] = "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?",
    [S_SUM] = "SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?",
    [S_ORDER] = "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
    [S_DISTINCT] = "SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
    [S_UPD_IDX] = "UPDATE sbtest%u SET k=k+1 WHERE id=?",
    [S_UPD_NONIDX] = "UPDATE sbtest%u SET c=? WHERE id=?",
    [S_DELETE] = "DELETE FROM sbtest%u WHERE id=?",
    [S_INSERT] = "INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)",
    [S_INSERT_AUTO] = "INSERT INTO sbtest%u (k, c, pad) VALUES (?, ?, ?)",
};

typedef struct sq_conn {
    sq_db *db;
    sqlite3 *c;
    sqlite3_stmt *begin_r, *begin_w, *commit, *rollback;
    sqlite3_stmt **stmts; /* [tables * S_COUNT], prepared on first use */
    uint32_t tables;
    bool writing; /* holds the writer queue */
    char err[512];
} sq_conn;

static void db_name(int instance, char *buf, size_t len)
{
    snprintf(buf, len, "sbtest-sqlite-i%d.db", instance);
}

static int sq_files(int instance, char names[][64], int max)
{
    /* The database and the companions SQLite or the VFS may keep beside it. */
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    int n = 0;
    for (unsigned i = 0; i < sizeof sfx / sizeof sfx[0] && n < max; i++, n++) {
        char base[48];
        db_name(instance, base, sizeof base);
        snprintf(names[n], 64, "%s%s", base, sfx[i]);
    }
    return n;
}

static int exec(sqlite3 *c, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(c, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "SQLite: %s: %s", sql, msg ? msg : sqlite3_errmsg(c));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/*
 * The bulk load writes through SQLite's default VFS, not the direct-I/O one: prepare
 * is not measured, and page-cache writes let SQLite build 10M-row tables at its own
 * speed instead of one synchronous 4 KiB direct write per page. st_db creates the
 * files first (manifest, page size, WAL format) and is closed; the loader holds the
 * database exclusively with no journal (nothing to roll back to: an interrupted load
 * leaves the instance marked incomplete), and on close the file is synced and its
 * cached pages dropped, so the run's direct-I/O VFS starts from the drive. The page
 * writer goes around SQLite altogether, with the loader's connection closed meanwhile.
 */

/* The loader's connection (again after a page-level load, which needs it closed). */
static int loader_connect(sq_db *d, char *err, size_t errlen)
{
    /* The default VFS opens by path: only after the files were checked, and never
     * through a symlink. */
    char name[64];
    db_name(d->o.instance, name, sizeof name);
    int rc = st_db_library_path(d->target, name, d->path, sizeof d->path, err, errlen);
    if (rc) return rc;
    if (sqlite3_open_v2(d->path, &d->load,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                        NULL) != SQLITE_OK) {
        snprintf(err, errlen, "SQLite: opening %s for the load: %s", d->path,
                 d->load ? sqlite3_errmsg(d->load) : "out of memory");
        sqlite3_close(d->load);
        d->load = NULL;
        return SIM_EXIT_FAIL;
    }
    char sql[512];
    snprintf(sql, sizeof sql,
             "PRAGMA locking_mode=EXCLUSIVE; PRAGMA page_size=%u; PRAGMA journal_mode=OFF;"
             " PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-262144;"
             " PRAGMA threads=2",
             d->page_size);
    if (exec(d->load, sql, err, errlen)) {
        sqlite3_close(d->load);
        d->load = NULL;
        return SIM_EXIT_FAIL;
    }
    return 0;
}

static int open_loader(sq_db *d, char *err, size_t errlen)
{
    json_t *j = st_db_json(d->db);
    int page = (int)json_integer_value(json_object_get(j, "page_size"));
    json_decref(j);
    d->page_size = page > 0 ? (uint32_t)page : 4096;
    st_db_close(d->db);
    d->db = NULL;
    return loader_connect(d, err, errlen);
}

/* Ends the load: the file durable on the drive, none of it left in the page cache,
 * and the WAL file the VFS expects (SQLite removed it when the journal went off)
 * present again, empty; it is in the manifest, so appsim may write it. */
static void close_loader(sq_db *d)
{
    sqlite3_close(d->load);
    d->load = NULL;
    char name[64], wal[80], err[1024];
    db_name(d->o.instance, name, sizeof name);
    int fd = -1;
    if (st_target_open_file(d->target, name, 0, false, &fd, err, sizeof err) == 0) {
        if (fdatasync(fd)) sim_warn("sync of %s after the load: %s", d->path, strerror(errno));
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    } else {
        sim_warn("after the load: %s", err);
    }
    snprintf(wal, sizeof wal, "%s-wal", name);
    if (st_target_owns(d->target, wal)) {
        if (st_target_create_file(d->target, wal, 0, &fd, err, sizeof err) == 0)
            close(fd);
        else
            sim_warn("after the load: %s", err);
    }
}

static int sq_open(st_target *t, const sb_db_opts *o, bool create, void **out, char *err,
                   size_t errlen)
{
    sq_db *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return SIM_EXIT_FAIL;
    }
    d->target = t;
    d->o = *o;
    d->writers = sim_fifo_lock_new();
    if (!d->writers) {
        free(d);
        snprintf(err, errlen, "out of memory");
        return SIM_EXIT_FAIL;
    }
    char name[64];
    db_name(o->instance, name, sizeof name);
    st_db_opts so = {
        .buffer_bytes = o->buffer_bytes ? o->buffer_bytes : 128ull << 20,
        .sync = o->loading ? "off" : o->sync,
        .checkpoint_wal_bytes = 64ull << 20,
        .checkpoint_mode = "passive",
        .max_connections = o->max_connections + 2,
        .engine = o->io_engine,
        .wal_limit_bytes = o->wal_limit,
    };
    st_target_file_path(t, name, d->path, sizeof d->path);
    int rc = st_db_open(t, name, &so, create, &d->db, err, errlen);
    if (rc == 0 && o->loading) rc = open_loader(d, err, errlen);
    if (rc) {
        if (d->db) st_db_close(d->db);
        sim_fifo_lock_free(d->writers);
        free(d);
        return rc;
    }
    *out = d;
    return 0;
}

static void sq_close(void *db)
{
    sq_db *d = db;
    if (!d) return;
    if (d->load) close_loader(d);
    if (d->db) st_db_close(d->db);
    sim_fifo_lock_free(d->writers);
    free(d);
}

static int connect_raw(sq_db *d, sqlite3 **c, char *err, size_t errlen)
{
    if (d->load) { /* prepare: the loader's connection, closed by release() */
        *c = d->load;
        return 0;
    }
    int rc = st_db_connect(d->db, c, err, errlen);
    if (rc) return rc;
    sqlite3_busy_timeout(*c, BUSY_TIMEOUT_MS);
    return 0;
}

static void release(sq_db *d, sqlite3 *c)
{
    if (c != d->load) sqlite3_close(c);
}

static int sq_meta_get(void *db, sb_meta *m, char *err, size_t errlen)
{
    sq_db *d = db;
    sqlite3 *c;
    memset(m, 0, sizeof *m);
    if (connect_raw(d, &c, err, errlen)) return SIM_EXIT_FAIL;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(c, "SELECT tables, table_size, seed, complete FROM sbtest_meta", -1,
                                &s, NULL);
    if (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
        m->tables = (uint32_t)sqlite3_column_int64(s, 0);
        m->table_size = (uint64_t)sqlite3_column_int64(s, 1);
        m->seed = (uint64_t)sqlite3_column_int64(s, 2);
        m->complete = sqlite3_column_int(s, 3) != 0;
    }
    /* No meta table: a database prepare never got to describe (m stays incomplete). */
    sqlite3_finalize(s);
    release(d, c);
    return 0;
}

static int sq_meta_put(void *db, const sb_meta *m, char *err, size_t errlen)
{
    sq_db *d = db;
    sqlite3 *c;
    if (connect_raw(d, &c, err, errlen)) return SIM_EXIT_FAIL;
    char sql[512];
    snprintf(sql, sizeof sql,
             "CREATE TABLE IF NOT EXISTS sbtest_meta(tables INTEGER, table_size INTEGER, "
             "seed INTEGER, complete INTEGER);"
             "DELETE FROM sbtest_meta;"
             "INSERT INTO sbtest_meta VALUES (%u, %llu, %llu, %d);",
             m->tables, (unsigned long long)m->table_size, (unsigned long long)m->seed,
             m->complete ? 1 : 0);
    int rc = exec(c, sql, err, errlen);
    release(d, c);
    return rc ? SIM_EXIT_FAIL : 0;
}

/* One row's draws, in the order both load paths make them (so that they load equal
 * tables from one seed): c, pad, then k. */
static uint64_t draw_row(sim_rng *rng, uint64_t rows, char c[SB_C_LEN], char pad[SB_PAD_LEN])
{
    sb_gen_c(rng, c);
    sb_gen_pad(rng, pad);
    return sim_rng_range(rng, 1, rows);
}

/* The SQL path: sysbench's INSERTs in batched transactions, then CREATE INDEX. */
static int load_sql(sq_db *d, uint32_t table, uint64_t rows, sim_rng *rng, char *err, size_t errlen)
{
    sqlite3 *c = d->load;
    char sql[512];
    int rc = SIM_EXIT_FAIL;
    sqlite3_stmt *ins = NULL;
    snprintf(sql, sizeof sql, "INSERT INTO sbtest%u(id, k, c, pad) VALUES (?, ?, ?, ?)", table);
    if (sqlite3_prepare_v2(c, sql, -1, &ins, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "SQLite: %s", sqlite3_errmsg(c));
        goto out;
    }
    char cbuf[SB_C_LEN], pbuf[SB_PAD_LEN];
    for (uint64_t id = 1; id <= rows;) {
        if (sim_interrupted()) { /* Ctrl-C: stop between batches, table incomplete */
            snprintf(err, errlen, "interrupted while loading sbtest%u", table);
            goto out;
        }
        if (exec(c, "BEGIN", err, errlen)) goto out;
        uint64_t end = id + LOAD_BATCH_ROWS;
        for (; id <= rows && id < end; id++) {
            uint64_t k = draw_row(rng, rows, cbuf, pbuf);
            sqlite3_bind_int64(ins, 1, (sqlite3_int64)id);
            sqlite3_bind_int64(ins, 2, (sqlite3_int64)k);
            sqlite3_bind_text(ins, 3, cbuf, SB_C_LEN, SQLITE_STATIC);
            sqlite3_bind_text(ins, 4, pbuf, SB_PAD_LEN, SQLITE_STATIC);
            if (sqlite3_step(ins) != SQLITE_DONE) {
                snprintf(err, errlen, "SQLite: loading sbtest%u: %s", table, sqlite3_errmsg(c));
                goto out;
            }
            sqlite3_reset(ins);
        }
        if (exec(c, "COMMIT", err, errlen)) goto out;
    }
    snprintf(sql, sizeof sql, "CREATE INDEX k_%u ON sbtest%u(k)", table, table);
    if (exec(c, sql, err, errlen)) goto out;
    rc = 0;
out:
    sqlite3_finalize(ins);
    return rc;
}

static int64_t query_int(sqlite3 *c, const char *sql, int64_t fallback)
{
    sqlite3_stmt *s = NULL;
    int64_t v = fallback;
    if (sqlite3_prepare_v2(c, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

/* Rows in id order into the table's b-tree; k of each id kept for the index. */
static int write_table_pages(st_sqlite_bulk *b, uint32_t table, uint64_t rows, sim_rng *rng,
                             uint32_t *k_of, char *err, size_t errlen)
{
    char cbuf[SB_C_LEN], pbuf[SB_PAD_LEN];
    uint8_t rec[64 + SB_C_LEN + SB_PAD_LEN];
    for (uint64_t id = 1; id <= rows; id++) {
        if ((id & 0xffff) == 0 && sim_interrupted()) {
            snprintf(err, errlen, "interrupted while loading sbtest%u", table);
            return -1;
        }
        uint32_t k = (uint32_t)draw_row(rng, rows, cbuf, pbuf); /* as the SQL path */
        k_of[id - 1] = k;
        st_sqlite_value v[4] = {{.type = ST_SQLITE_NULL}, /* id: the rowid holds it */
                                {.type = ST_SQLITE_INT, .i = k},
                                {.type = ST_SQLITE_TEXT, .text = cbuf, .len = SB_C_LEN},
                                {.type = ST_SQLITE_TEXT, .text = pbuf, .len = SB_PAD_LEN}};
        size_t len = st_sqlite_bulk_record(b, v, 4, rec, sizeof rec);
        if (st_sqlite_bulk_row(b, (int64_t)id, rec, len, err, errlen)) return -1;
    }
    return 0;
}

/* Index entries (k, id) in index order: a counting sort by k, ids ascending within
 * each k since they are visited in order. k is in 1..rows, so this is O(rows). */
static int write_index_pages(st_sqlite_bulk *b, uint64_t rows, const uint32_t *k_of, char *err,
                             size_t errlen)
{
    uint32_t *start = calloc(rows + 2, sizeof *start);
    uint32_t *ids = malloc(rows * sizeof *ids + 1);
    int rc = -1;
    if (!start || !ids) {
        snprintf(err, errlen, "out of memory sorting the k index (%llu rows)",
                 (unsigned long long)rows);
        goto out;
    }
    for (uint64_t i = 0; i < rows; i++)
        start[k_of[i] + 1]++;
    for (uint64_t k = 1; k <= rows + 1; k++)
        start[k] += start[k - 1];
    for (uint64_t i = 0; i < rows; i++)
        ids[start[k_of[i]]++] = (uint32_t)(i + 1);
    uint8_t rec[32];
    for (uint64_t i = 0; i < rows; i++) {
        st_sqlite_value v[2] = {{.type = ST_SQLITE_INT, .i = k_of[ids[i] - 1]},
                                {.type = ST_SQLITE_INT, .i = ids[i]}};
        size_t len = st_sqlite_bulk_record(b, v, 2, rec, sizeof rec);
        if (st_sqlite_bulk_entry(b, rec, len, err, errlen)) goto out;
    }
    rc = 0;
out:
    free(start);
    free(ids);
    return rc;
}

/*
 * The pages path: SQLite creates the table and the (empty) index, then
 * storage/sqlite_bulk.c writes both b-trees page by page, with the connection closed,
 * and SQLite reopens the file and counts the rows through the index and the table.
 * SQLite's INSERT path costs about 1.4 us a row, half of it sorting for CREATE INDEX;
 * this one writes the same records (same draws, same encoding) at several times that
 * rate. Memory: 12 bytes per row for the k index sort.
 */
static int load_pages(sq_db *d, uint32_t table, uint64_t rows, sim_rng *rng, char *err,
                      size_t errlen)
{
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE INDEX k_%u ON sbtest%u(k)", table, table);
    if (exec(d->load, sql, err, errlen)) return SIM_EXIT_FAIL;
    snprintf(sql, sizeof sql, "SELECT rootpage FROM sqlite_schema WHERE name='sbtest%u'", table);
    int64_t root_t = query_int(d->load, sql, 0);
    snprintf(sql, sizeof sql, "SELECT rootpage FROM sqlite_schema WHERE name='k_%u'", table);
    int64_t root_i = query_int(d->load, sql, 0);
    sqlite3_close(d->load);
    d->load = NULL;

    uint32_t *k_of = malloc(rows * sizeof *k_of + 1);
    st_sqlite_bulk *b = NULL;
    char why[512] = "";
    int rc = -1;
    if (!k_of)
        snprintf(why, sizeof why, "out of memory (%llu rows)", (unsigned long long)rows);
    else if (st_sqlite_bulk_open(d->path, &b, why, sizeof why) == 0 &&
             st_sqlite_bulk_begin(b, false, (uint32_t)root_t, why, sizeof why) == 0 &&
             write_table_pages(b, table, rows, rng, k_of, why, sizeof why) == 0 &&
             st_sqlite_bulk_end(b, why, sizeof why) == 0 &&
             st_sqlite_bulk_begin(b, true, (uint32_t)root_i, why, sizeof why) == 0 &&
             write_index_pages(b, rows, k_of, why, sizeof why) == 0 &&
             st_sqlite_bulk_end(b, why, sizeof why) == 0)
        rc = 0;
    char cwhy[256] = "";
    if (b && st_sqlite_bulk_close(b, cwhy, sizeof cwhy) && rc == 0) {
        snprintf(why, sizeof why, "%s", cwhy);
        rc = -1;
    }
    free(k_of);
    if (loader_connect(d, err, errlen)) return SIM_EXIT_FAIL;
    if (rc) {
        if (sim_interrupted())
            snprintf(err, errlen, "%s", why);
        else
            snprintf(err, errlen,
                     "loading sbtest%u as pages: %s (--load-via sql loads "
                     "through SQLite instead)",
                     table, why);
        return SIM_EXIT_FAIL;
    }
    /* SQLite counts through the k index (its smallest b-tree) and the table. */
    snprintf(sql, sizeof sql, "SELECT count(*) FROM sbtest%u", table);
    int64_t by_index = query_int(d->load, sql, -1);
    snprintf(sql, sizeof sql, "SELECT max(id) FROM sbtest%u", table);
    int64_t max_id = query_int(d->load, sql, -1);
    if (by_index != (int64_t)rows || max_id != (int64_t)rows) {
        snprintf(err, errlen,
                 "sbtest%u written as pages reads back %lld rows up to id %lld, not %llu; "
                 "please report this, and use --load-via sql",
                 table, (long long)by_index, (long long)max_id, (unsigned long long)rows);
        return SIM_EXIT_FAIL;
    }
    return 0;
}

static int sq_load_table(void *db, uint32_t table, uint64_t rows, sim_rng *rng, char *err,
                         size_t errlen)
{
    sq_db *d = db;
    if (!d->load) {
        snprintf(err, errlen, "sbtest%u: the database was not opened for loading", table);
        return SIM_EXIT_FAIL;
    }
    char sql[512];
    snprintf(sql, sizeof sql,
             "DROP TABLE IF EXISTS sbtest%u;"
             "CREATE TABLE sbtest%u(id INTEGER PRIMARY KEY, k INTEGER DEFAULT '0' NOT NULL, "
             "c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL)",
             table, table);
    if (exec(d->load, sql, err, errlen)) return SIM_EXIT_FAIL;
    if (d->o.load_via && !strcmp(d->o.load_via, "sql"))
        return load_sql(d, table, rows, rng, err, errlen);
    return load_pages(d, table, rows, rng, err, errlen);
}

static void *sq_connect(void *db, char *err, size_t errlen)
{
    sq_db *d = db;
    sq_conn *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    k->db = d;
    k->tables = d->o.tables;
    k->stmts = calloc((size_t)k->tables * S_COUNT, sizeof *k->stmts);
    if (!k->stmts || connect_raw(d, &k->c, err, errlen)) {
        free(k->stmts);
        free(k);
        return NULL;
    }
    if (sqlite3_prepare_v2(k->c, "BEGIN", -1, &k->begin_r, NULL) ||
        sqlite3_prepare_v2(k->c, "BEGIN IMMEDIATE", -1, &k->begin_w, NULL) ||
        sqlite3_prepare_v2(k->c, "COMMIT", -1, &k->commit, NULL) ||
        sqlite3_prepare_v2(k->c, "ROLLBACK", -1, &k->rollback, NULL)) {
        snprintf(err, errlen, "SQLite: %s", sqlite3_errmsg(k->c));
        sqlite3_finalize(k->begin_r);
        sqlite3_finalize(k->begin_w);
        sqlite3_finalize(k->commit);
        sqlite3_close(k->c);
        free(k->stmts);
        free(k);
        return NULL;
    }
    return k;
}

static int step_simple(sq_conn *k, sqlite3_stmt *s, const char *what);
static void release_writer(sq_conn *k);

static void sq_disconnect(void *conn)
{
    sq_conn *k = conn;
    if (!k) return;
    if (!sqlite3_get_autocommit(k->c)) step_simple(k, k->rollback, "ROLLBACK");
    release_writer(k);
    for (size_t i = 0; i < (size_t)k->tables * S_COUNT; i++)
        sqlite3_finalize(k->stmts[i]);
    sqlite3_finalize(k->begin_r);
    sqlite3_finalize(k->begin_w);
    sqlite3_finalize(k->commit);
    sqlite3_finalize(k->rollback);
    sqlite3_close(k->c);
    free(k->stmts);
    free(k);
}

static const char *sq_conn_error(void *conn)
{
    return ((sq_conn *)conn)->err;
}

/* Maps an SQLite result to SB_*: busy and locked are transient. */
static int status(sq_conn *k, int rc, const char *what)
{
    int prim = rc & 0xff;
    if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return SB_OK;
    snprintf(k->err, sizeof k->err, "SQLite %s: %s (%d)", what, sqlite3_errmsg(k->c), rc);
    return prim == SQLITE_BUSY || prim == SQLITE_LOCKED ? SB_RETRY : SB_FAIL;
}

static int step_simple(sq_conn *k, sqlite3_stmt *s, const char *what)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return status(k, rc, what);
}

static sqlite3_stmt *stmt(sq_conn *k, uint32_t table, int which)
{
    if (table < 1 || table > k->tables) {
        snprintf(k->err, sizeof k->err, "table sbtest%u does not exist (tables 1..%u)", table,
                 k->tables);
        return NULL;
    }
    sqlite3_stmt **slot = &k->stmts[(size_t)(table - 1) * S_COUNT + which];
    if (!*slot) {
        char sql[256];
        snprintf(sql, sizeof sql, stmt_sql[which], table);
        if (sqlite3_prepare_v3(k->c, sql, -1, SQLITE_PREPARE_PERSISTENT, slot, NULL) != SQLITE_OK) {
            snprintf(k->err, sizeof k->err, "SQLite: %s: %s", sql, sqlite3_errmsg(k->c));
            *slot = NULL;
        }
    }
    return *slot;
}

static void release_writer(sq_conn *k)
{
    if (k->writing) {
        k->writing = false;
        sim_fifo_lock_release(k->db->writers);
    }
}

static int sq_begin(void *conn, bool write)
{
    sq_conn *k = conn;
    if (!write) return step_simple(k, k->begin_r, "BEGIN");
    sim_fifo_lock_acquire(k->db->writers);
    k->writing = true;
    int rc = step_simple(k, k->begin_w, "BEGIN IMMEDIATE");
    if (rc != SB_OK) release_writer(k);
    return rc;
}

static int sq_commit(void *conn)
{
    sq_conn *k = conn;
    int rc = step_simple(k, k->commit, "COMMIT");
    if (rc != SB_OK && !sqlite3_get_autocommit(k->c)) {
        char keep[sizeof k->err];
        memcpy(keep, k->err, sizeof keep);
        step_simple(k, k->rollback, "ROLLBACK");
        memcpy(k->err, keep, sizeof keep);
    }
    release_writer(k);
    return rc;
}

static void sq_rollback(void *conn)
{
    sq_conn *k = conn;
    if (!sqlite3_get_autocommit(k->c)) {
        char keep[sizeof k->err];
        memcpy(keep, k->err, sizeof keep); /* the caller reports the original error */
        step_simple(k, k->rollback, "ROLLBACK");
        memcpy(k->err, keep, sizeof keep);
    }
    release_writer(k);
}

/* Runs a bound SELECT to the end, counting rows and summing column 0 as an integer
 * (the SUM(k) statement returns one row). */
static int run_select(sq_conn *k, sqlite3_stmt *s, sb_result *r, bool sum)
{
    int rc;
    uint64_t rows = 0;
    int64_t total = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (sum)
            total += sqlite3_column_int64(s, 0);
        else
            (void)sqlite3_column_text(s, 0); /* fetch the value as a client would */
        rows++;
    }
    sqlite3_reset(s);
    r->rows = rows;
    r->sum = total;
    return status(k, rc, "SELECT");
}

static int sq_point_select(void *conn, uint32_t table, uint64_t id, sb_result *r)
{
    sq_conn *k = conn;
    sqlite3_stmt *s = stmt(k, table, S_POINT);
    if (!s) return SB_FAIL;
    sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
    return run_select(k, s, r, false);
}

static int sq_range(void *conn, uint32_t table, sb_range_kind kind, uint64_t lo, uint64_t hi,
                    sb_result *r)
{
    static const int which[] = {[SB_RANGE_SIMPLE] = S_SIMPLE,
                                [SB_RANGE_SUM] = S_SUM,
                                [SB_RANGE_ORDER] = S_ORDER,
                                [SB_RANGE_DISTINCT] = S_DISTINCT};
    sq_conn *k = conn;
    sqlite3_stmt *s = stmt(k, table, which[kind]);
    if (!s) return SB_FAIL;
    sqlite3_bind_int64(s, 1, (sqlite3_int64)lo);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)hi);
    return run_select(k, s, r, kind == SB_RANGE_SUM);
}

static int run_write(sq_conn *k, sqlite3_stmt *s, sb_result *r, const char *what)
{
    int rc = step_simple(k, s, what);
    r->rows = (uint64_t)sqlite3_changes(k->c);
    return rc;
}

static int sq_update_index(void *conn, uint32_t table, uint64_t id, sb_result *r)
{
    sq_conn *k = conn;
    sqlite3_stmt *s = stmt(k, table, S_UPD_IDX);
    if (!s) return SB_FAIL;
    sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
    return run_write(k, s, r, "UPDATE");
}

static int sq_update_non_index(void *conn, uint32_t table, uint64_t id, const char *c, sb_result *r)
{
    sq_conn *k = conn;
    sqlite3_stmt *s = stmt(k, table, S_UPD_NONIDX);
    if (!s) return SB_FAIL;
    sqlite3_bind_text(s, 1, c, SB_C_LEN, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)id);
    return run_write(k, s, r, "UPDATE");
}

static int sq_delete_row(void *conn, uint32_t table, uint64_t id, sb_result *r)
{
    sq_conn *k = conn;
    sqlite3_stmt *s = stmt(k, table, S_DELETE);
    if (!s) return SB_FAIL;
    sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
    return run_write(k, s, r, "DELETE");
}

static int sq_insert_row(void *conn, uint32_t table, uint64_t id, uint64_t kv, const char *c,
                         const char *pad, sb_result *r)
{
    sq_conn *k = conn;
    sqlite3_stmt *s = stmt(k, table, id ? S_INSERT : S_INSERT_AUTO);
    if (!s) return SB_FAIL;
    int p = 1;
    if (id) sqlite3_bind_int64(s, p++, (sqlite3_int64)id);
    sqlite3_bind_int64(s, p++, (sqlite3_int64)kv);
    sqlite3_bind_text(s, p++, c, SB_C_LEN, SQLITE_STATIC);
    sqlite3_bind_text(s, p, pad, SB_PAD_LEN, SQLITE_STATIC);
    return run_write(k, s, r, "INSERT");
}

/* Table rows and the k index agree: same row count and SUM(k) through the table and
 * through the index, plus SQLite's own quick_check of the file's structure. */
static int sq_check(void *db, uint32_t tables, json_t **report, char *err, size_t errlen)
{
    sq_db *d = db;
    sqlite3 *c;
    if (connect_raw(d, &c, err, errlen)) return SIM_EXIT_FAIL;
    json_t *rows = json_array();
    bool ok = true;
    int rc = 0;
    for (uint32_t t = 1; t <= tables && rc == 0; t++) {
        char sql[512];
        snprintf(sql, sizeof sql,
                 "SELECT (SELECT count(*) FROM sbtest%u NOT INDEXED),"
                 " (SELECT total(k) FROM sbtest%u NOT INDEXED),"
                 " (SELECT count(*) FROM sbtest%u INDEXED BY k_%u WHERE k > -9223372036854775807),"
                 " (SELECT total(k) FROM sbtest%u INDEXED BY k_%u WHERE k > -9223372036854775807)",
                 t, t, t, t, t, t);
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(c, sql, -1, &s, NULL) != SQLITE_OK ||
            sqlite3_step(s) != SQLITE_ROW) {
            snprintf(err, errlen, "SQLite check of sbtest%u: %s", t, sqlite3_errmsg(c));
            rc = SIM_EXIT_FAIL;
        } else {
            int64_t n = sqlite3_column_int64(s, 0), ni = sqlite3_column_int64(s, 2);
            double sk = sqlite3_column_double(s, 1), ski = sqlite3_column_double(s, 3);
            json_array_append_new(rows, json_integer(n));
            if (n != ni || sk != ski) ok = false;
        }
        sqlite3_finalize(s);
    }
    if (rc == 0) {
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(c, "PRAGMA quick_check", -1, &s, NULL) == SQLITE_OK &&
            sqlite3_step(s) == SQLITE_ROW) {
            const char *q = (const char *)sqlite3_column_text(s, 0);
            if (!q || strcmp(q, "ok")) ok = false;
            json_t *rep = json_pack("{s:o, s:b, s:s}", "rows", rows, "index_consistent", ok,
                                    "quick_check", q ? q : "");
            rows = NULL;
            *report = rep;
        } else {
            snprintf(err, errlen, "SQLite quick_check: %s", sqlite3_errmsg(c));
            rc = SIM_EXIT_FAIL;
        }
        sqlite3_finalize(s);
    }
    json_decref(rows);
    release(d, c);
    if (rc) return rc;
    return ok ? 0 : SIM_EXIT_FAIL;
}

static json_t *sq_json(void *db)
{
    sq_db *d = db;
    json_t *j = st_db_json(d->db);
    if (!j) j = json_object();
    json_object_set_new(
        j, "transactions",
        json_string(
            "reads in a deferred snapshot; writers queue FIFO in process, then BEGIN IMMEDIATE"));
    return j;
}

static const sb_engine_ops sqlite_engine = {
    .name = "sqlite",
    .description = "SQLite through appsim's direct-I/O VFS (buffer pool = --buffer)",
    .files = sq_files,
    .open = sq_open,
    .close = sq_close,
    .meta_get = sq_meta_get,
    .meta_put = sq_meta_put,
    .load_table = sq_load_table,
    .connect = sq_connect,
    .disconnect = sq_disconnect,
    .conn_error = sq_conn_error,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .point_select = sq_point_select,
    .range = sq_range,
    .update_index = sq_update_index,
    .update_non_index = sq_update_non_index,
    .delete_row = sq_delete_row,
    .insert_row = sq_insert_row,
    .check = sq_check,
    .json = sq_json,
};
SB_REGISTER_ENGINE(sqlite_engine)
