/*
 * oltp/sysbench_sqlite_load.c: prepare of one sbtest table into its SQLite file, by
 * SQLite's INSERTs (--load-via sql) or by writing the b-tree pages directly
 * (storage/sqlite/sqlite_bulk.c, the default). Both paths draw the same values in the same
 * order, so they load identical tables from one seed. Tables of one file load one after
 * the other (the page writer appends each table's trees after the file's last page);
 * files of their own (--table-files per-table) load in parallel on different threads.
 */
#include "oltp/sysbench_sqlite_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOAD_BATCH_ROWS 200000

int sq_exec(sqlite3 *c, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(c, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "SQLite: %s: %s", sql, msg ? msg : sqlite3_errmsg(c));
        sqlite3_free(msg);
        return SIM_ERR;
    }
    return SIM_OK;
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
static int loader_connect(sq_file *d, st_target *t, char *err, size_t errlen)
{
    /* The default VFS opens by path: only after the files were checked, and never
     * through a symlink. */
    int rc = st_db_library_path(t, d->name, d->path, sizeof d->path, err, errlen);
    if (rc) return rc;
    if (sqlite3_open_v2(d->path, &d->load,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                        st_db_failstop_vfs()) != SQLITE_OK) {
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
    if (sq_exec(d->load, sql, err, errlen)) {
        sqlite3_close(d->load);
        d->load = NULL;
        return SIM_EXIT_FAIL;
    }
    return SIM_EXIT_OK;
}

/* Ends the load: the file durable on the drive, none of it left in the page cache,
 * and the WAL file the VFS expects (SQLite removed it when the journal went off)
 * present again, empty; it is in the manifest, so appsim may write it. */
static int close_loader(sq_file *d, st_target *target, char *err, size_t errlen)
{
    sqlite3_close(d->load);
    d->load = NULL;
    char wal[80];
    int fd = -1;
    if (st_target_open_file(target, d->name, 0, false, &fd, err, errlen)) return SIM_EXIT_FAIL;
    if (fdatasync(fd)) {
        /* not durable: the instance must not be marked complete */
        int e = errno;
        sim_fault_note(e, "syncing %s after the load", d->path);
        snprintf(err, errlen, "syncing %s after the load: %s", d->path, strerror(e));
        close(fd);
        return SIM_EXIT_FAIL;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    snprintf(wal, sizeof wal, "%s-wal", d->name);
    if (st_target_owns(target, wal)) {
        if (st_target_create_file(target, wal, 0, &fd, err, errlen)) return SIM_EXIT_FAIL;
        close(fd);
    }
    return SIM_EXIT_OK;
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
static int load_sql(sq_file *d, uint32_t table, uint64_t rows, sim_rng *rng, char *err,
                    size_t errlen)
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
        if (sq_exec(c, "BEGIN", err, errlen)) goto out;
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
        if (sq_exec(c, "COMMIT", err, errlen)) goto out;
    }
    snprintf(sql, sizeof sql, "CREATE INDEX k_%u ON sbtest%u(k)", table, table);
    if (sq_exec(c, sql, err, errlen)) goto out;
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
            return SIM_ERR;
        }
        uint32_t k = (uint32_t)draw_row(rng, rows, cbuf, pbuf); /* as the SQL path */
        k_of[id - 1] = k;
        st_sqlite_value v[4] = {{.type = ST_SQLITE_NULL}, /* id: the rowid holds it */
                                {.type = ST_SQLITE_INT, .i = k},
                                {.type = ST_SQLITE_TEXT, .text = cbuf, .len = SB_C_LEN},
                                {.type = ST_SQLITE_TEXT, .text = pbuf, .len = SB_PAD_LEN}};
        size_t len = st_sqlite_bulk_record(b, v, 4, rec, sizeof rec);
        if (st_sqlite_bulk_row(b, (int64_t)id, rec, len, err, errlen)) return SIM_ERR;
    }
    return SIM_OK;
}

/* Index entries (k, id) in index order: a counting sort by k, ids ascending within
 * each k since they are visited in order. k is in 1..rows, so this is O(rows). */
static int write_index_pages(st_sqlite_bulk *b, uint64_t rows, const uint32_t *k_of, char *err,
                             size_t errlen)
{
    uint32_t *start = sim_xcalloc(rows + 2, sizeof *start);
    uint32_t *ids = sim_xmalloc(rows * sizeof *ids + 1);
    int rc = -1;
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
 * storage/sqlite/sqlite_bulk.c writes both b-trees page by page, with the connection closed,
 * and SQLite reopens the file and counts the rows through the index and the table.
 * SQLite's INSERT path costs about 1.4 us a row, half of it sorting for CREATE INDEX;
 * this one writes the same records (same draws, same encoding) at several times that
 * rate. Memory: 12 bytes per row for the k index sort.
 */
static int load_pages(sq_file *d, st_target *t, uint32_t table, uint64_t rows, sim_rng *rng,
                      char *err, size_t errlen)
{
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE INDEX k_%u ON sbtest%u(k)", table, table);
    if (sq_exec(d->load, sql, err, errlen)) return SIM_EXIT_FAIL;
    snprintf(sql, sizeof sql, "SELECT rootpage FROM sqlite_schema WHERE name='sbtest%u'", table);
    int64_t root_t = query_int(d->load, sql, 0);
    snprintf(sql, sizeof sql, "SELECT rootpage FROM sqlite_schema WHERE name='k_%u'", table);
    int64_t root_i = query_int(d->load, sql, 0);
    sqlite3_close(d->load);
    d->load = NULL;

    uint32_t *k_of = sim_xmalloc(rows * sizeof *k_of + 1);
    st_sqlite_bulk *b = NULL;
    char why[512] = "";
    int rc = -1;
    if (st_sqlite_bulk_open(d->path, &b, why, sizeof why) == 0 &&
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
    if (loader_connect(d, t, err, errlen)) return SIM_EXIT_FAIL;
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
    return SIM_EXIT_OK;
}

int sq_load_file(sq_file *tbl, st_target *t, const char *via, uint32_t table, uint64_t rows,
                 sim_rng *rng, char *err, size_t errlen)
{
    if (loader_connect(tbl, t, err, errlen)) return SIM_EXIT_FAIL;
    char sql[512];
    snprintf(sql, sizeof sql,
             "DROP TABLE IF EXISTS sbtest%u;"
             "CREATE TABLE sbtest%u(id INTEGER PRIMARY KEY, k INTEGER DEFAULT '0' NOT NULL, "
             "c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL)",
             table, table);
    int rc = SIM_EXIT_FAIL;
    if (sq_exec(tbl->load, sql, err, errlen) == 0)
        rc = via && !strcmp(via, "sql") ? load_sql(tbl, table, rows, rng, err, errlen)
                                        : load_pages(tbl, t, table, rows, rng, err, errlen);
    if (tbl->load) {
        char why[8192];
        int crc = close_loader(tbl, t, why, sizeof why);
        if (crc && !rc) {
            snprintf(err, errlen, "%s", why);
            rc = crc;
        }
    }
    return rc;
}
