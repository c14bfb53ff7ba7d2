/*
 * oltp/sysbench_sqlite.c: the "sqlite" engine of `appsim sysbench`: sysbench's sbtest
 * tables in SQLite, each database file opened through storage/'s st_db (direct-I/O VFS
 * with its own buffer pool, WAL and background checkpointer). An instance keeps
 * sbtest-sqlite-i<N>.db for its meta row (tables, size, seed, complete) and its tables
 * in one of two layouts, chosen at prepare (--table-files) and found again by the files
 * present:
 *   shared (default): every table in sbtest-sqlite-i<N>-tables.db, one WAL. A commit
 *     is one WAL write and one sync however many tables it wrote, as a server's commit
 *     is one write and flush of its one redo log (InnoDB, PostgreSQL). Measured beside
 *     them (docs/fidelity.md), this asks a drive for the servers' flushes per
 *     transaction; SQLite's one writer per file costs little, since the writes' pages
 *     are read before the writer queue (prefetch) and the sync is shared (group commit).
 *   per-table: sbtest-sqlite-i<N>-t<T>.db for table T, each with its own WAL (as if
 *     every table had its own log): writers of different tables run at once, and a
 *     commit that wrote three tables syncs three WALs, one after the other.
 *
 * Schema and statements are sysbench's oltp_common.lua for a SQL database: table
 * sbtestN(id INTEGER PRIMARY KEY, k, c CHAR(120), pad CHAR(60)) and index k_N on k
 * (loading: sysbench_sqlite_load.c). A connection of the engine is one SQLite
 * connection per table file, opened and its statements prepared on first use.
 *
 * Transactions: a read snapshot is a deferred BEGIN on each file the reads touch, at
 * its first statement there. A write transaction takes the writer queue (an in-process
 * FIFO lock, sim_fifo_lock: SQLite's own busy handler polls with sleeps of up to
 * 100 ms, leaving the lock idle) of each file it writes, then BEGIN IMMEDIATE there.
 * Locks are taken in ascending table order: the tables planned at begin (plan_writes)
 * all at once; a table written later without a plan is waited for only when it is
 * above every table held, else tried, and a busy one makes the transaction a retry, so
 * no two writers ever wait on each other in a cycle. Commit commits each file in table
 * order: atomic per table file, not across files (SQLite's WAL mode has no
 * multi-file atomic commit); every check of the tables is per table. Invariant: after
 * commit or rollback returns, no transaction is open and no writer queue is held.
 *
 * What keeps a writer queue short (docs/sysbench.md, "Prefetch and group commit"):
 * before its transaction queues, the rows and index entries its writes
 * will change are read in the read snapshot (prefetch_writes), so their page misses
 * overlap across threads instead of being read one at a time under the queue; and
 * with sync full the commit only leaves its WAL frames in the buffer pool under the
 * queue, then waits for a WAL sync shared with every commit of that file that came
 * meanwhile (st_db's group commit), outside it. Each connection times its waits
 * (sb_waits) for the result. In the shared layout there is one file, so one writer
 * queue and one commit per transaction; the per-table rules below reduce to that.
 */
#include "oltp/sysbench_sqlite_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUSY_TIMEOUT_MS 10000
#define META_BUFFER (1ull << 20)

typedef struct sq_db {
    st_target *target;
    sb_db_opts o;
    st_db *meta; /* sbtest-sqlite-i<N>.db: the meta row */
    uint32_t ntables;
    bool shared;     /* every table in one file (else one file per table) */
    uint32_t nfiles; /* 1 (shared) or ntables */
    sq_file *f;      /* f[0] holds every table (shared), or table t is f[t - 1] */
    uint64_t file_buffer;
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
    S_PF_ROW,
    S_PF_INDEX,
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
    /* prefetch_writes: the row's leaf, and the index leaf of entry (k, id) */
    [S_PF_ROW] = "SELECT k FROM sbtest%1$u WHERE id=?",
    [S_PF_INDEX] = "SELECT id FROM sbtest%1$u INDEXED BY k_%1$u WHERE k=? AND id=?",
};

typedef struct sq_fconn { /* one connection's SQLite connection to one file */
    sqlite3 *c;
    sqlite3_stmt *begin_r, *begin_w, *commit, *rollback;
    bool open;    /* a transaction is open on this file */
    bool writing; /* holds the file's writer queue */
    bool durable; /* committed in group-commit mode, not yet synced */
} sq_fconn;

typedef struct sq_conn {
    sq_db *db;
    uint32_t ntables, nfiles;
    sq_fconn *f; /* [nfiles], connected on first use */
    /* [ntables * S_COUNT] on their file's connection, prepared on first use */
    sqlite3_stmt **stmts;
    int mode;       /* 0 no transaction, 1 read snapshot, 2 write */
    uint32_t *plan; /* files (numbered from 1) planned for the next write transaction */
    int nplan;
    uint32_t locked_max; /* highest file number whose writer queue is held (0: none) */
    sb_waits w;
    uint64_t held_since_ns;  /* when the first writer queue of the transaction was taken */
    uint64_t read_mark_ns;   /* the thread's device read time then */
    uint64_t queued_held_ns; /* since then, queued for a later table's writer queue */
    char err[512];
} sq_conn;

ST_REGISTER_TARGET_FILES(sysbench_sqlite, "sbtest-sqlite-*")

/* The files carry the instance's number from 1, as the text and the result count. */
static void meta_name(int instance, char *buf, size_t len)
{
    snprintf(buf, len, "sbtest-sqlite-i%d.db", instance + 1);
}

static void table_name(int instance, uint32_t table, char *buf, size_t len)
{
    snprintf(buf, len, "sbtest-sqlite-i%d-t%u.db", instance + 1, table);
}

static void shared_name(int instance, char *buf, size_t len)
{
    snprintf(buf, len, "sbtest-sqlite-i%d-tables.db", instance + 1);
}

/* A database and the companions SQLite or the VFS may keep beside it, from names[n]. */
static int with_companions(const char *base, char names[][64], int n, int max)
{
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    for (unsigned i = 0; i < sizeof sfx / sizeof sfx[0] && n < max; i++, n++)
        snprintf(names[n], 64, "%s%s", base, sfx[i]);
    return n;
}

/* Table 0: the meta file and the shared tables file; table t: its own file (the
 * per-table layout). Whichever layout is on the target, its files are named. */
static int sq_files(int instance, uint32_t table, char names[][64], int max)
{
    char base[48];
    if (table) {
        table_name(instance, table, base, sizeof base);
        return with_companions(base, names, 0, max);
    }
    meta_name(instance, base, sizeof base);
    int n = with_companions(base, names, 0, max);
    shared_name(instance, base, sizeof base);
    return with_companions(base, names, n, max);
}

/* The file (numbered from 1) that holds table t. */
static uint32_t file_of(const sq_db *d, uint32_t t)
{
    return d->shared ? 1 : t;
}

static int sq_exec_conn(sqlite3 *c, const char *sql, char *err, size_t errlen)
{
    return sq_exec(c, sql, err, errlen) ? SIM_EXIT_FAIL : 0;
}

/* The meta row, or m->complete = false when prepare never got to write it. */
static int read_meta(sq_db *d, sb_meta *m, char *err, size_t errlen)
{
    sqlite3 *c;
    memset(m, 0, sizeof *m);
    if (st_db_connect(d->meta, &c, err, errlen)) return SIM_EXIT_FAIL;
    sqlite3_busy_timeout(c, BUSY_TIMEOUT_MS);
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(c, "SELECT tables, table_size, seed, complete FROM sbtest_meta", -1,
                                &s, NULL);
    if (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
        m->tables = (uint32_t)sqlite3_column_int64(s, 0);
        m->table_size = (uint64_t)sqlite3_column_int64(s, 1);
        m->seed = (uint64_t)sqlite3_column_int64(s, 2);
        m->complete = sqlite3_column_int(s, 3) != 0;
    }
    sqlite3_finalize(s);
    sqlite3_close(c);
    return SIM_EXIT_OK;
}

/* Opens (or, loading, creates then closes again for the loader) file number fn. */
static int open_file(sq_db *d, uint32_t fn, bool create, char *err, size_t errlen)
{
    sq_file *f = &d->f[fn - 1];
    char name[64];
    if (d->shared)
        shared_name(d->o.instance, name, sizeof name);
    else
        table_name(d->o.instance, fn, name, sizeof name);
    if (!create && !st_target_owns(d->target, name)) {
        snprintf(err, errlen,
                 "instance %d has no file %s for its tables: it was prepared by an older "
                 "appsim or only in part; run cleanup and prepare again",
                 d->o.instance + 1, name);
        return SIM_EXIT_USAGE;
    }
    st_db_opts so = {
        .buffer_bytes = d->file_buffer,
        .sync = d->o.loading ? "off" : d->o.sync,
        .checkpoint_wal_bytes = st_db_checkpoint_bytes_for(d->file_buffer, d->o.wal_limit),
        .checkpoint_mode = "passive",
        .max_connections = d->o.max_connections + 2,
        .engine = d->o.io_engine,
        .wal_limit_bytes = d->o.wal_limit,
    };
    snprintf(f->name, sizeof f->name, "%s", name);
    st_target_file_path(d->target, name, f->path, sizeof f->path);
    int rc = st_db_open(d->target, name, &so, create, &f->db, err, errlen);
    if (rc) return rc;
    json_t *j = st_db_json(f->db);
    int page = (int)json_integer_value(json_object_get(j, "page_size"));
    json_decref(j);
    f->page_size = page > 0 ? (uint32_t)page : 4096;
    f->group_commit = !d->o.loading && d->o.group_commit && st_db_can_group_commit(f->db);
    if (d->o.loading) { /* the loader writes it through SQLite's default VFS */
        st_db_close(f->db);
        f->db = NULL;
    }
    return SIM_EXIT_OK;
}

static void sq_close(void *db)
{
    sq_db *d = db;
    if (!d) return;
    for (uint32_t i = 0; d->f && i < d->nfiles; i++) {
        if (d->f[i].db) st_db_close(d->f[i].db);
        sim_fifo_lock_free(d->f[i].writers);
        pthread_mutex_destroy(&d->f[i].load_mu);
    }
    free(d->f);
    if (d->meta) st_db_close(d->meta);
    free(d);
}

/* --buffer is the instance's memory: one pool for the shared file; split evenly over
 * per-table files (sysbench draws tables uniformly, so each file's share of the hot
 * pages is 1/tables), but never below what st_db needs per file; the result shows each
 * file's pool. */
static uint64_t buffer_per_file(const sb_db_opts *o, uint32_t nfiles)
{
    uint64_t total = o->buffer_bytes ? o->buffer_bytes : 128ull << 20;
    uint64_t per = total / nfiles;
    st_db_opts so = {.max_connections = o->max_connections + 2};
    uint64_t min = st_db_min_buffer(&so, ST_DB_PAGE_SIZE);
    if (per < min) {
        if (!o->loading)
            sim_warn("--buffer over %u table files gives each less than SQLite's minimum; "
                     "each gets %llu bytes (%llu in all)",
                     nfiles, (unsigned long long)min, (unsigned long long)min * nfiles);
        per = min;
    }
    return per;
}

/* The layout: prepare's choice (shared unless --table-files per-table); an existing
 * instance's is the one its files show, and asking for the other is refused. */
static int choose_layout(sq_db *d, bool create, char *err, size_t errlen)
{
    const char *want = d->o.table_files;
    if (create) {
        d->shared = !want || strcmp(want, "per-table") != 0;
        return SIM_EXIT_OK;
    }
    char name[64];
    shared_name(d->o.instance, name, sizeof name);
    d->shared = st_target_owns(d->target, name);
    const char *have = d->shared ? "shared" : "per-table";
    if (want && strcmp(want, have)) {
        snprintf(err, errlen,
                 "instance %d was prepared with --table-files %s; run it without "
                 "--table-files (or with %s), or cleanup and prepare again with "
                 "--table-files %s",
                 d->o.instance + 1, have, have, want);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

static int sq_open(st_target *t, const sb_db_opts *o, bool create, void **out, char *err,
                   size_t errlen)
{
    sq_db *d = sim_xcalloc(1, sizeof *d);
    d->target = t;
    d->o = *o;
    d->ntables = o->tables;
    char name[64];
    meta_name(o->instance, name, sizeof name);
    st_db_opts so = {
        .buffer_bytes = META_BUFFER, .sync = "full", .max_connections = 2, .engine = o->io_engine};
    int rc = st_db_open(t, name, &so, create, &d->meta, err, errlen);
    sb_meta m = {0};
    if (rc == 0 && !create) rc = read_meta(d, &m, err, errlen);
    /* Without a complete meta row for these tables, the caller refuses the instance
     * (sysbench_actions.c) before any table is used: leave the tables closed. */
    bool tables = create || (m.complete && m.tables == o->tables);
    if (rc == 0 && tables) rc = choose_layout(d, create, err, errlen);
    d->nfiles = !tables ? 0 : d->shared ? 1 : (o->tables ? o->tables : 1);
    d->f = d->nfiles ? sim_xcalloc(d->nfiles, sizeof *d->f) : NULL;
    for (uint32_t i = 0; i < d->nfiles; i++)
        pthread_mutex_init(&d->f[i].load_mu, NULL);
    if (d->nfiles) d->file_buffer = buffer_per_file(o, d->nfiles);
    for (uint32_t i = 1; rc == 0 && i <= d->nfiles; i++) {
        d->f[i - 1].writers = sim_fifo_lock_new();
        rc = open_file(d, i, create, err, errlen);
    }
    if (rc) {
        sq_close(d);
        return rc;
    }
    *out = d;
    return SIM_EXIT_OK;
}

static int sq_meta_get(void *db, sb_meta *m, char *err, size_t errlen)
{
    return read_meta(db, m, err, errlen);
}

/* Written with synchronous=FULL: prepare marks an instance complete only after every
 * table file was synced, and this row is what says so. */
static int sq_meta_put(void *db, const sb_meta *m, char *err, size_t errlen)
{
    sq_db *d = db;
    sqlite3 *c;
    if (st_db_connect(d->meta, &c, err, errlen)) return SIM_EXIT_FAIL;
    sqlite3_busy_timeout(c, BUSY_TIMEOUT_MS);
    char sql[512];
    snprintf(sql, sizeof sql,
             "BEGIN; CREATE TABLE IF NOT EXISTS sbtest_meta(tables INTEGER, table_size INTEGER, "
             "seed INTEGER, complete INTEGER);"
             "DELETE FROM sbtest_meta;"
             "INSERT INTO sbtest_meta VALUES (%u, %llu, %llu, %d); COMMIT;",
             m->tables, (unsigned long long)m->table_size, (unsigned long long)m->seed,
             m->complete ? 1 : 0);
    int rc = sq_exec_conn(c, sql, err, errlen);
    sqlite3_close(c);
    return rc;
}

static int sq_load_table(void *db, uint32_t table, uint64_t rows, sim_rng *rng, char *err,
                         size_t errlen)
{
    sq_db *d = db;
    if (!d->o.loading || table < 1 || table > d->ntables || !d->nfiles) {
        snprintf(err, errlen, "sbtest%u: the database was not opened for loading it", table);
        return SIM_EXIT_FAIL;
    }
    sq_file *f = &d->f[file_of(d, table) - 1];
    pthread_mutex_lock(&f->load_mu);
    int rc = sq_load_file(f, d->target, d->o.load_via, table, rows, rng, err, errlen);
    pthread_mutex_unlock(&f->load_mu);
    return rc;
}

static void *sq_connect(void *db, char *err, size_t errlen)
{
    sq_db *d = db;
    sq_conn *k = sim_xcalloc(1, sizeof *k);
    uint32_t nf = d->nfiles ? d->nfiles : 1, nt = d->ntables ? d->ntables : 1;
    k->f = sim_xcalloc(nf, sizeof *k->f);
    k->stmts = sim_xcalloc((size_t)nt * S_COUNT, sizeof *k->stmts);
    k->plan = sim_xcalloc(nf, sizeof *k->plan);
    k->db = d;
    k->ntables = d->ntables;
    k->nfiles = d->nfiles;
    return k;
}

static int status(sq_conn *k, sqlite3 *c, int rc, const char *what);

/* File fn's connection, opened with its transaction statements on first use. */
static sq_fconn *fconn(sq_conn *k, uint32_t fn)
{
    sq_fconn *fc = &k->f[fn - 1];
    if (fc->c) return fc;
    sq_file *f = &k->db->f[fn - 1];
    if (!f->db) {
        snprintf(k->err, sizeof k->err, "%s is not open", f->name);
        return NULL;
    }
    if (st_db_connect(f->db, &fc->c, k->err, sizeof k->err)) {
        fc->c = NULL;
        return NULL;
    }
    sqlite3_busy_timeout(fc->c, BUSY_TIMEOUT_MS);
    if (f->group_commit && st_db_conn_group_commit(f->db, fc->c, k->err, sizeof k->err)) {
        sqlite3_close(fc->c);
        fc->c = NULL;
        return NULL;
    }
    if (sqlite3_prepare_v2(fc->c, "BEGIN", -1, &fc->begin_r, NULL) ||
        sqlite3_prepare_v2(fc->c, "BEGIN IMMEDIATE", -1, &fc->begin_w, NULL) ||
        sqlite3_prepare_v2(fc->c, "COMMIT", -1, &fc->commit, NULL) ||
        sqlite3_prepare_v2(fc->c, "ROLLBACK", -1, &fc->rollback, NULL)) {
        snprintf(k->err, sizeof k->err, "SQLite: %s", sqlite3_errmsg(fc->c));
        sqlite3_finalize(fc->begin_r);
        sqlite3_finalize(fc->begin_w);
        sqlite3_finalize(fc->commit);
        sqlite3_close(fc->c);
        memset(fc, 0, sizeof *fc);
        return NULL;
    }
    return fc;
}

/* The number of the file that holds table t, 0 (with k->err) when there is no such
 * table. */
static uint32_t table_file(sq_conn *k, uint32_t t)
{
    if (t < 1 || t > k->ntables || !k->nfiles) {
        snprintf(k->err, sizeof k->err, "table sbtest%u does not exist (tables 1..%u)", t,
                 k->ntables);
        return 0;
    }
    return file_of(k->db, t);
}

static int step_simple(sq_conn *k, sqlite3 *c, sqlite3_stmt *s, const char *what)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return status(k, c, rc, what);
}

static void release_writer(sq_conn *k, uint32_t fn)
{
    sq_fconn *fc = &k->f[fn - 1];
    if (fc->writing) {
        fc->writing = false;
        sim_fifo_lock_release(k->db->f[fn - 1].writers);
    }
}

static uint64_t thread_read_ns(void)
{
    st_db_thread_reads r;
    st_db_thread_reads_get(&r);
    return r.device_read_ns;
}

/* The transaction took its first writer queue. */
static void note_held(sq_conn *k)
{
    if (k->held_since_ns) return;
    k->held_since_ns = sim_now_ns();
    k->read_mark_ns = thread_read_ns();
    k->queued_held_ns = 0;
}

/* It released its last one. The time it queued for a later table while holding an
 * earlier one counts as queueing only (sb_waits' parts are disjoint). */
static void note_released(sq_conn *k)
{
    if (!k->held_since_ns) return;
    k->w.held_ns += sim_now_ns() - k->held_since_ns - k->queued_held_ns;
    k->w.read_held_ns += thread_read_ns() - k->read_mark_ns;
    k->held_since_ns = 0;
}

/* Ends a file's transaction: COMMIT (timed) or ROLLBACK. A failed COMMIT is rolled
 * back so that no transaction stays open. */
static int end_one(sq_conn *k, uint32_t fn, bool commit)
{
    sq_fconn *fc = &k->f[fn - 1];
    int rc = SB_FAIL;
    if (commit) {
        uint64_t t0 = sim_now_ns();
        rc = step_simple(k, fc->c, fc->commit, "COMMIT");
        if (fc->writing) k->w.commit_ns += sim_now_ns() - t0;
    }
    if (rc != SB_OK && !sqlite3_get_autocommit(fc->c)) {
        char keep[sizeof k->err];
        memcpy(keep, k->err, sizeof keep);
        step_simple(k, fc->c, fc->rollback, "ROLLBACK");
        memcpy(k->err, keep, sizeof keep);
    }
    fc->durable = rc == SB_OK && fc->writing && k->db->f[fn - 1].group_commit;
    fc->open = false;
    return rc;
}

/* Group commit: after the writer queues are released, waits until every file this
 * transaction committed is synced (one WAL sync serves all commits of a file that
 * came while the previous sync ran). */
static int make_durable(sq_conn *k)
{
    int rc = SB_OK;
    uint64_t t0 = 0;
    for (uint32_t fn = 1; fn <= k->nfiles; fn++) {
        sq_fconn *fc = &k->f[fn - 1];
        if (!fc->durable) continue;
        if (!t0) t0 = sim_now_ns();
        fc->durable = false;
        char err[sizeof k->err];
        if (st_db_commit_durable(k->db->f[fn - 1].db, err, sizeof err) && rc == SB_OK) {
            memcpy(k->err, err, sizeof err);
            rc = SB_FAIL;
        }
    }
    if (t0) k->w.durable_ns += sim_now_ns() - t0;
    return rc;
}

/* Ends every open file transaction (commit = false: rolls back), in file order,
 * releases the writer queues, then (group commit) waits for the WAL syncs. Returns the
 * first failure. */
static int end_all(sq_conn *k, bool commit)
{
    int first = SB_OK;
    char keep[sizeof k->err] = "";
    for (uint32_t fn = 1; fn <= k->nfiles; fn++) {
        if (k->f[fn - 1].open) {
            int rc = end_one(k, fn, commit && first == SB_OK);
            if (rc != SB_OK && first == SB_OK && commit) {
                first = rc;
                memcpy(keep, k->err, sizeof keep);
            }
        }
        release_writer(k, fn);
    }
    note_released(k);
    k->mode = 0;
    k->locked_max = 0;
    int durable = make_durable(k);
    if (first == SB_OK && durable != SB_OK) return durable;
    if (first != SB_OK) memcpy(k->err, keep, sizeof keep);
    return first;
}

static void sq_disconnect(void *conn)
{
    sq_conn *k = conn;
    if (!k) return;
    end_all(k, false);
    for (size_t i = 0; i < (size_t)k->ntables * S_COUNT; i++)
        sqlite3_finalize(k->stmts[i]);
    for (uint32_t fn = 0; fn < k->nfiles; fn++) {
        sq_fconn *fc = &k->f[fn];
        if (!fc->c) continue;
        sqlite3_finalize(fc->begin_r);
        sqlite3_finalize(fc->begin_w);
        sqlite3_finalize(fc->commit);
        sqlite3_finalize(fc->rollback);
        sqlite3_close(fc->c);
    }
    free(k->f);
    free(k->stmts);
    free(k->plan);
    free(k);
}

static const char *sq_conn_error(void *conn)
{
    return ((sq_conn *)conn)->err;
}

/* Maps an SQLite result to SB_*: busy and locked are transient. */
static int status(sq_conn *k, sqlite3 *c, int rc, const char *what)
{
    int prim = rc & 0xff;
    if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return SB_OK;
    snprintf(k->err, sizeof k->err, "SQLite %s: %s (%d)", what, sqlite3_errmsg(c), rc);
    return prim == SQLITE_BUSY || prim == SQLITE_LOCKED ? SB_RETRY : SB_FAIL;
}

/* Joins the file of table t into the open transaction: a deferred BEGIN for a read
 * snapshot; for a write, the file's writer queue (waited for only above every queue
 * held, see the top of the file) and BEGIN IMMEDIATE. */
static int join(sq_conn *k, uint32_t t, sq_fconn **out)
{
    uint32_t fn = table_file(k, t);
    sq_fconn *fc = fn ? fconn(k, fn) : NULL;
    if (!fc) return SB_FAIL;
    *out = fc;
    if (fc->open) return SB_OK;
    if (k->mode == 0) {
        snprintf(k->err, sizeof k->err, "statement on sbtest%u outside a transaction", t);
        return SB_FAIL;
    }
    if (k->mode == 1) {
        int rc = step_simple(k, fc->c, fc->begin_r, "BEGIN");
        fc->open = rc == SB_OK;
        return rc;
    }
    sim_fifo_lock *w = k->db->f[fn - 1].writers;
    if (fn > k->locked_max) {
        uint64_t t0 = sim_now_ns();
        sim_fifo_lock_acquire(w);
        uint64_t dt = sim_now_ns() - t0;
        k->w.lock_ns += dt;
        if (k->held_since_ns) k->queued_held_ns += dt;
        k->locked_max = fn;
    } else if (!sim_fifo_lock_try(w)) {
        snprintf(k->err, sizeof k->err,
                 "sbtest%u's writer is busy and this transaction holds a later table's", t);
        return SB_RETRY;
    }
    fc->writing = true;
    note_held(k);
    int rc = step_simple(k, fc->c, fc->begin_w, "BEGIN IMMEDIATE");
    fc->open = rc == SB_OK;
    if (rc != SB_OK) release_writer(k, fn);
    return rc;
}

/* The planned tables' files, ascending, without duplicates. The plan holds a table of
 * each file: join takes the file's queue through it. */
static void sq_plan_writes(void *conn, const uint32_t *tables, int n)
{
    sq_conn *k = conn;
    k->nplan = 0;
    for (int i = 0; i < n; i++) {
        if (tables[i] < 1 || tables[i] > k->ntables || !k->nfiles) continue; /* reported later */
        uint32_t fn = file_of(k->db, tables[i]);
        int j = k->nplan;
        while (j > 0 && file_of(k->db, k->plan[j - 1]) > fn) /* insertion sort */
            j--;
        if (j > 0 && file_of(k->db, k->plan[j - 1]) == fn) continue;
        memmove(&k->plan[j + 1], &k->plan[j], (size_t)(k->nplan - j) * sizeof *k->plan);
        k->plan[j] = tables[i];
        k->nplan++;
    }
}

static int sq_begin(void *conn, bool write)
{
    sq_conn *k = conn;
    if (k->mode) end_all(k, false);
    k->mode = write ? 2 : 1;
    int rc = SB_OK;
    for (int i = 0; write && rc == SB_OK && i < k->nplan; i++) {
        sq_fconn *fc;
        rc = join(k, k->plan[i], &fc);
    }
    k->nplan = 0;
    if (rc != SB_OK) {
        char keep[sizeof k->err];
        memcpy(keep, k->err, sizeof keep);
        end_all(k, false);
        memcpy(k->err, keep, sizeof keep);
    }
    return rc;
}

static int sq_commit(void *conn)
{
    return end_all(conn, true);
}

static void sq_rollback(void *conn)
{
    sq_conn *k = conn;
    char keep[sizeof k->err];
    memcpy(keep, k->err, sizeof keep); /* the caller reports the original error */
    end_all(k, false);
    memcpy(k->err, keep, sizeof keep);
}

/* Statement `which` of table t, on its file's connection joined to the open
 * transaction. */
static sqlite3_stmt *stmt(sq_conn *k, uint32_t t, int which, int *rc, sqlite3 **c)
{
    sq_fconn *fc;
    *rc = join(k, t, &fc);
    if (*rc != SB_OK) return NULL;
    *c = fc->c;
    sqlite3_stmt **slot = &k->stmts[(size_t)(t - 1) * S_COUNT + (size_t)which];
    if (!*slot) {
        char sql[256];
        snprintf(sql, sizeof sql, stmt_sql[which], t);
        if (sqlite3_prepare_v3(fc->c, sql, -1, SQLITE_PREPARE_PERSISTENT, slot, NULL) !=
            SQLITE_OK) {
            snprintf(k->err, sizeof k->err, "SQLite: %s: %s", sql, sqlite3_errmsg(fc->c));
            *slot = NULL;
            *rc = SB_FAIL;
        }
    }
    return *slot;
}

/* Runs a bound SELECT to the end, counting rows and summing column 0 as an integer
 * (the SUM(k) statement returns one row). */
static int run_select(sq_conn *k, sqlite3 *c, sqlite3_stmt *s, sb_result *r, bool sum)
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
    return status(k, c, rc, "SELECT");
}

static int sq_point_select(void *conn, uint32_t table, uint64_t id, sb_result *r)
{
    sq_conn *k = conn;
    int rc;
    sqlite3 *c;
    sqlite3_stmt *s = stmt(k, table, S_POINT, &rc, &c);
    if (!s) return rc;
    sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
    return run_select(k, c, s, r, false);
}

static int sq_range(void *conn, uint32_t table, sb_range_kind kind, uint64_t lo, uint64_t hi,
                    sb_result *r)
{
    static const int which[] = {[SB_RANGE_SIMPLE] = S_SIMPLE,
                                [SB_RANGE_SUM] = S_SUM,
                                [SB_RANGE_ORDER] = S_ORDER,
                                [SB_RANGE_DISTINCT] = S_DISTINCT};
    sq_conn *k = conn;
    int rc;
    sqlite3 *c;
    sqlite3_stmt *s = stmt(k, table, which[kind], &rc, &c);
    if (!s) return rc;
    sqlite3_bind_int64(s, 1, (sqlite3_int64)lo);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)hi);
    return run_select(k, c, s, r, kind == SB_RANGE_SUM);
}

static int run_write(sq_conn *k, sqlite3 *c, sqlite3_stmt *s, sb_result *r, const char *what)
{
    int rc = step_simple(k, c, s, what);
    r->rows = (uint64_t)sqlite3_changes(c);
    return rc;
}

static int sq_update_index(void *conn, uint32_t table, uint64_t id, sb_result *r)
{
    sq_conn *k = conn;
    int rc;
    sqlite3 *c;
    sqlite3_stmt *s = stmt(k, table, S_UPD_IDX, &rc, &c);
    if (!s) return rc;
    sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
    return run_write(k, c, s, r, "UPDATE");
}

static int sq_update_non_index(void *conn, uint32_t table, uint64_t id, const char *cv,
                               sb_result *r)
{
    sq_conn *k = conn;
    int rc;
    sqlite3 *c;
    sqlite3_stmt *s = stmt(k, table, S_UPD_NONIDX, &rc, &c);
    if (!s) return rc;
    sqlite3_bind_text(s, 1, cv, SB_C_LEN, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)id);
    return run_write(k, c, s, r, "UPDATE");
}

static int sq_delete_row(void *conn, uint32_t table, uint64_t id, sb_result *r)
{
    sq_conn *k = conn;
    int rc;
    sqlite3 *c;
    sqlite3_stmt *s = stmt(k, table, S_DELETE, &rc, &c);
    if (!s) return rc;
    sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
    return run_write(k, c, s, r, "DELETE");
}

static int sq_insert_row(void *conn, uint32_t table, uint64_t id, uint64_t kv, const char *cv,
                         const char *pad, sb_result *r)
{
    sq_conn *k = conn;
    int rc;
    sqlite3 *c;
    sqlite3_stmt *s = stmt(k, table, id ? S_INSERT : S_INSERT_AUTO, &rc, &c);
    if (!s) return rc;
    int p = 1;
    if (id) sqlite3_bind_int64(s, p++, (sqlite3_int64)id);
    sqlite3_bind_int64(s, p++, (sqlite3_int64)kv);
    sqlite3_bind_text(s, p++, cv, SB_C_LEN, SQLITE_STATIC);
    sqlite3_bind_text(s, p, pad, SB_PAD_LEN, SQLITE_STATIC);
    return run_write(k, c, s, r, "INSERT");
}

/* Steps prefetch statement `which` of table t bound to v[0..n): 1 with column 0 in
 * *col0 when it found a row, 0 when none, -1 when it failed. */
static int pf_step(sq_conn *k, uint32_t t, int which, const int64_t *v, int n, int64_t *col0)
{
    int rc;
    sqlite3 *c;
    sqlite3_stmt *s = stmt(k, t, which, &rc, &c);
    if (!s) return -1;
    for (int i = 0; i < n; i++)
        sqlite3_bind_int64(s, i + 1, v[i]);
    int st = sqlite3_step(s);
    if (st == SQLITE_ROW) *col0 = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return st == SQLITE_ROW ? 1 : st == SQLITE_DONE ? 0 : -1;
}

/* One write's pages: the row's leaf and its index entry's; for an insert, also the
 * index leaf where its new entry goes (an UPDATE of k puts k + 1 beside k). */
static bool prefetch_one(sq_conn *k, const sb_write *w)
{
    int64_t kv = 0, unused;
    int found = pf_step(k, w->table, S_PF_ROW, (const int64_t[]){(int64_t)w->id}, 1, &kv);
    if (found < 0) return false;
    if (found && w->kind != SB_W_UPDATE_C &&
        pf_step(k, w->table, S_PF_INDEX, (const int64_t[]){kv, (int64_t)w->id}, 2, &unused) < 0)
        return false;
    return w->kind != SB_W_DELETE_INSERT ||
           pf_step(k, w->table, S_PF_INDEX, (const int64_t[]){(int64_t)w->k_new, (int64_t)w->id}, 2,
                   &unused) >= 0;
}

/* The pages of the coming writes, read outside any writer queue (in the event's read
 * snapshot when one is open, else in one of its own), so that their misses overlap
 * with other threads' instead of being read one at a time under the queues. This only
 * warms the buffer pools: the writes then run in full under their queues. */
static void sq_prefetch_writes(void *conn, const sb_write *w, int n)
{
    sq_conn *k = conn;
    if (k->mode == 2) return;
    uint64_t t0 = sim_now_ns();
    bool own = k->mode == 0, ok = true;
    if (own) sq_begin(k, false);
    for (int i = 0; i < n; i++)
        ok = prefetch_one(k, &w[i]) && ok;
    if (own) ok = end_all(k, true) == SB_OK && ok;
    if (!ok) k->w.prefetch_failed++;
    k->w.prefetch_ns += sim_now_ns() - t0;
}

/* The connection's waits; read_ns is the thread's device read time so far. */
static void sq_waits(void *conn, sb_waits *out)
{
    const sq_conn *k = conn;
    *out = k->w;
    out->read_ns = thread_read_ns();
}

/* One table file: rows and SUM(k) through the table and through the index agree, and
 * SQLite's quick_check of the file passes. Adds the row count to rows. */
static int check_table(sq_db *d, uint32_t t, json_t *rows, bool *ok, char *qc, size_t qclen,
                       char *err, size_t errlen)
{
    sqlite3 *c;
    st_db *db = d->nfiles ? d->f[file_of(d, t) - 1].db : NULL;
    if (!db) {
        snprintf(err, errlen, "sbtest%u's file is not open", t);
        return SIM_EXIT_FAIL;
    }
    if (st_db_connect(db, &c, err, errlen)) return SIM_EXIT_FAIL;
    sqlite3_busy_timeout(c, BUSY_TIMEOUT_MS);
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT (SELECT count(*) FROM sbtest%u NOT INDEXED),"
             " (SELECT total(k) FROM sbtest%u NOT INDEXED),"
             " (SELECT count(*) FROM sbtest%u INDEXED BY k_%u WHERE k > -9223372036854775807),"
             " (SELECT total(k) FROM sbtest%u INDEXED BY k_%u WHERE k > -9223372036854775807)",
             t, t, t, t, t, t);
    int rc = 0;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(c, sql, -1, &s, NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
        snprintf(err, errlen, "SQLite check of sbtest%u: %s", t, sqlite3_errmsg(c));
        rc = SIM_EXIT_FAIL;
    } else {
        int64_t n = sqlite3_column_int64(s, 0), ni = sqlite3_column_int64(s, 2);
        double sk = sqlite3_column_double(s, 1), ski = sqlite3_column_double(s, 3);
        json_array_append_new(rows, json_integer(n));
        if (n != ni || sk != ski) *ok = false;
    }
    sqlite3_finalize(s);
    s = NULL;
    if (rc == 0 && sqlite3_prepare_v2(c, "PRAGMA quick_check", -1, &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
        const char *q = (const char *)sqlite3_column_text(s, 0);
        if (!q || strcmp(q, "ok")) {
            *ok = false;
            if (!strcmp(qc, "ok")) snprintf(qc, qclen, "sbtest%u: %s", t, q ? q : "");
        }
    } else if (rc == 0) {
        snprintf(err, errlen, "SQLite quick_check of sbtest%u: %s", t, sqlite3_errmsg(c));
        rc = SIM_EXIT_FAIL;
    }
    sqlite3_finalize(s);
    sqlite3_close(c);
    return rc;
}

static int sq_check(void *db, uint32_t tables, json_t **report, char *err, size_t errlen)
{
    sq_db *d = db;
    if (tables > d->ntables) {
        snprintf(err, errlen, "check of %u tables, %u open", tables, d->ntables);
        return SIM_EXIT_FAIL;
    }
    json_t *rows = json_array();
    bool ok = true;
    char qc[512] = "ok";
    int rc = 0;
    for (uint32_t t = 1; t <= tables && rc == 0; t++) {
        if (sim_interrupted()) {
            snprintf(err, errlen, "interrupted");
            rc = SIM_EXIT_FAIL;
            break;
        }
        rc = check_table(d, t, rows, &ok, qc, sizeof qc, err, errlen);
    }
    if (rc) {
        json_decref(rows);
        return rc;
    }
    *report = json_pack("{s:o, s:b, s:s}", "rows", rows, "index_consistent", ok, "quick_check", qc);
    return ok ? 0 : SIM_EXIT_FAIL;
}

static json_t *group_commit_json(const sq_db *d)
{
    bool gc = d->nfiles > 0 && d->f[0].group_commit;
    if (!gc)
        return json_pack("{s:b, s:s}", "on", false, "why",
                         d->o.group_commit ? "needs --sync full on appsim's VFS"
                                           : "--group-commit off");
    uint64_t commits = 0, syncs = 0, ahead = 0, blocks_ahead = 0;
    for (uint32_t i = 0; i < d->nfiles; i++) {
        st_db_gc_stats one;
        st_db_group_commit_stats(d->f[i].db, &one);
        commits += one.commits;
        syncs += one.wal_syncs;
        ahead += one.writes_ahead;
        blocks_ahead += one.blocks_ahead;
    }
    return json_pack("{s:b, s:I, s:I, s:f, s:I, s:I, s:s}", "on", true, "commits",
                     (json_int_t)commits, "wal_syncs", (json_int_t)syncs, "commits_per_sync",
                     syncs ? (double)commits / syncs : 0.0, "wal_writes_ahead", (json_int_t)ahead,
                     "wal_blocks_written_ahead", (json_int_t)blocks_ahead, "note",
                     "commits per file, all files, over the whole run (warm-up included)");
}

static json_t *sq_json(void *db)
{
    sq_db *d = db;
    json_t *files = json_array();
    for (uint32_t i = 0; i < d->nfiles; i++) {
        json_t *j = d->f[i].db ? st_db_json(d->f[i].db) : NULL;
        json_array_append_new(files, j ? j : json_null());
    }
    json_t *j = json_object();
    json_object_set_new(j, "table_files", json_string(d->shared ? "shared" : "per-table"));
    json_object_set_new(j, "layout",
                        json_string(d->shared ? "every table in one database file, "
                                                "one WAL"
                                              : "one database file per table, a "
                                                "WAL each"));
    json_object_set_new(j, "buffer_bytes_per_file", json_integer((json_int_t)d->file_buffer));
    json_object_set_new(j, "files", files);
    json_object_set_new(j, "group_commit", group_commit_json(d));
    json_object_set_new(
        j, "transactions",
        json_string(d->shared ? "reads in a deferred snapshot; writers queue FIFO for the "
                                "file, then BEGIN IMMEDIATE; one atomic commit; with group "
                                "commit the WAL sync is waited for after the queue is released"
                              : "reads in deferred snapshots per table file; writers queue "
                                "FIFO per table file, taken in table order, then BEGIN "
                                "IMMEDIATE; commit atomic per file; with group commit the WAL "
                                "syncs are waited for after the queues are released"));
    return j;
}

static void sq_cache(void *db, uint64_t *buffer_bytes, uint64_t *data_bytes)
{
    sq_db *d = db;
    *buffer_bytes = *data_bytes = 0;
    for (uint32_t i = 0; i < d->nfiles; i++)
        if (d->f[i].db) {
            *buffer_bytes += st_db_buffer_bytes(d->f[i].db);
            *data_bytes += st_db_data_bytes_at_open(d->f[i].db);
        }
}

static const sb_engine_ops sqlite_engine = {
    .name = "sqlite",
    .description = "SQLite through appsim's direct-I/O VFS, the tables in one file with one "
                   "WAL (--table-files per-table: a file and WAL per table, --buffer split "
                   "over them)",
    .files = sq_files,
    .cache = sq_cache,
    .buffer_is = "appsim's buffer pool (--buffer; split over the files with --table-files "
                 "per-table; O_DIRECT, no page cache)",
    .parallel_tables = true,
    .on_vfs = true,
    .open = sq_open,
    .close = sq_close,
    .meta_get = sq_meta_get,
    .meta_put = sq_meta_put,
    .load_table = sq_load_table,
    .connect = sq_connect,
    .disconnect = sq_disconnect,
    .conn_error = sq_conn_error,
    .begin = sq_begin,
    .plan_writes = sq_plan_writes,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .prefetch_writes = sq_prefetch_writes,
    .waits = sq_waits,
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
