/*
 * kv/kv_sysbench.c: the "lmdb" engine of `appsim sysbench`: sysbench's sbtest tables
 * in one LMDB environment per instance (one file plus its lock file in the target).
 *
 * Layout per table N: main database "sbtestN" keyed by id (native uint64,
 * MDB_INTEGERKEY) holding the packed row (k, c[119], pad[59]); secondary database
 * "k_N" (MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP) mapping k -> id. Invariant:
 * every write transaction that changes a row's k, removes or adds a row changes both
 * databases, so (k, id) is in k_N exactly when row id has that k.
 *
 * Statements run the way a storage engine executes sysbench's SQL: point select =
 * one get; ranges = a cursor from id to id + range_size - 1 (SUM adds k, ORDER BY c
 * sorts the fetched c values, DISTINCT also drops duplicates); updates and delete/
 * insert maintain both trees. Reads use a read transaction per connection that is
 * reset and renewed (no reader-slot churn); MDB_NOTLS ties slots to transactions.
 * Environment: MDB_NORDAHEAD (random reads must not pull neighbours from the drive),
 * map size from the data size with room to grow, reader table sized for --threads,
 * commits synced per transaction unless --sync says otherwise. The bulk load appends
 * ids in order and the secondary index from sorted (k, id) pairs, committing in
 * batches far below LMDB's dirty-page limit (2^17 pages per transaction).
 *
 * Writers queue in arrival order on an in-process FIFO lock (sim_fifo_lock) before
 * mdb_txn_begin, as the SQLite engine's do. LMDB's writer lock is a plain pthread
 * mutex: a thread that commits and at once begins its next write transaction usually
 * takes it again ahead of threads already asleep on it, so at 32 threads on 2 cores
 * some writers waited 5-7 s while p99 stayed at 72 us (the few winners did nearly all
 * transactions). A lock manager grants in arrival order; the queue makes the wait
 * what it would be there.
 *
 * Prefetch (--prefetch on): LMDB has one writer per environment, so a write transaction
 * whose pages are not in memory would fault them in one at a time under that writer
 * while every other writer waits. Before it queues, a write transaction therefore
 * looks up, in a read snapshot, the rows it will change and the index entries it will
 * delete and insert: the page faults overlap across threads, and the write transaction
 * then finds its pages resident. It only warms the page cache; the writes run in full
 * under the lock.
 */
#include "kv/kv.h"

#include <errno.h>
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Rows per bulk-load transaction: ~5,000 main pages and far fewer index pages. */
#define LOAD_BATCH 100000
#define INDEX_BATCH 1000000

typedef struct __attribute__((packed)) kv_row {
    uint64_t k;
    char c[SB_C_LEN];
    char pad[SB_PAD_LEN];
} kv_row;

typedef struct kv_db {
    MDB_env *env;
    MDB_dbi *main, *sec; /* [tables + 1], index 0 unused */
    MDB_dbi meta;
    uint32_t tables;
    sb_db_opts o;
    char path[4096];
    uint64_t map_size;
    sim_fifo_lock *writers; /* see the top of the file */
    /* at open, for the file's growth over the run: file size and pages in use */
    uint64_t file_at_open, pages_at_open;
} kv_db;

typedef struct kv_conn {
    kv_db *d;
    MDB_txn *rtxn; /* kept across events: reset and renewed */
    MDB_txn *txn;  /* the open transaction (rtxn or a write txn) */
    bool write;
    const char **sortv; /* ORDER BY / DISTINCT scratch */
    size_t sortcap;
    sb_waits waits;       /* lock, held, commit and prefetch times (reads are page faults) */
    uint64_t held_from;   /* when the writer lock was granted */
    uint64_t faults_from; /* the thread's major faults then */
    char err[512];
} kv_conn;

ST_REGISTER_TARGET_FILES(sysbench_lmdb, "sbtest-lmdb-*")

/* The files carry the instance's number from 1, as the text and the result count. */
static void file_names(int instance, char *data, char *lock)
{
    snprintf(data, 64, "sbtest-lmdb-i%d.mdb", instance + 1);
    snprintf(lock, 64, "sbtest-lmdb-i%d.mdb-lock", instance + 1);
}

static int kv_files(int instance, uint32_t table, char names[][64], int max)
{
    if (table || max < 2) return 0; /* every table lives in the one environment */
    file_names(instance, names[0], names[1]);
    return 2;
}

static int lerr(char *err, size_t errlen, const char *what, int rc)
{
    /* ENOSPC, EIO...: fail-stop (sim/fault.c), as in a run (fail) */
    sim_fault_note(rc, "in the LMDB %s", what);
    snprintf(err, errlen, "LMDB %s: %s", what, mdb_strerror(rc));
    return SIM_EXIT_FAIL;
}

/* Bytes the tables take: row + key + node header in the main tree, a dup entry per
 * row in the index, B-tree fill and page overhead. */
static uint64_t estimate_bytes(uint32_t tables, uint64_t rows)
{
    return (uint64_t)tables * rows * ((sizeof(kv_row) + 8 + 8) * 3 / 2 + 24);
}

static int open_dbis(kv_db *d, bool create, char *err, size_t errlen)
{
    MDB_txn *txn;
    int rc = mdb_txn_begin(d->env, NULL, 0, &txn);
    if (rc) return lerr(err, errlen, "begin", rc);
    unsigned cflag = create ? MDB_CREATE : 0;
    rc = mdb_dbi_open(txn, "meta", cflag, &d->meta);
    for (uint32_t t = 1; rc == 0 && t <= d->tables; t++) {
        char name[32];
        snprintf(name, sizeof name, "sbtest%u", t);
        rc = mdb_dbi_open(txn, name, cflag | MDB_INTEGERKEY, &d->main[t]);
        if (rc) break;
        snprintf(name, sizeof name, "k_%u", t);
        rc = mdb_dbi_open(txn, name,
                          cflag | MDB_INTEGERKEY | MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP,
                          &d->sec[t]);
    }
    if (rc) {
        mdb_txn_abort(txn);
        if (rc == MDB_NOTFOUND) {
            snprintf(err, errlen,
                     "the LMDB database has fewer tables than --tables %u; "
                     "run prepare with these options (after cleanup)",
                     d->tables);
            return SIM_EXIT_USAGE;
        }
        return lerr(err, errlen, "opening the tables", rc);
    }
    rc = mdb_txn_commit(txn);
    return rc ? lerr(err, errlen, "commit", rc) : 0;
}

/*
 * LMDB opens its data and lock files by path itself, with no O_NOFOLLOW. So before it
 * does, both must be the files appsim created (no symlink, the manifest's inodes), the
 * lock file created by appsim if it is missing; the path handed over goes through the
 * target's resolved directory. Afterwards the environment's data descriptor and the
 * lock file's name are checked again, so a file swapped in meanwhile is refused before
 * any page is written.
 */
static int lmdb_files_checked(st_target *t, const char *data, const char *lock, char *path,
                              size_t len, char *err, size_t errlen)
{
    int rc = st_target_library_path(t, data, true, path, len, err, errlen);
    if (rc) return rc;
    int fd = -1;
    rc = st_target_create_file(t, lock, 0, &fd, err, errlen);
    if (rc) return rc;
    close(fd);
    char lock_path[4200];
    return st_target_library_path(t, lock, true, lock_path, sizeof lock_path, err, errlen);
}

static int lmdb_fds_checked(st_target *t, MDB_env *env, const char *data, const char *lock,
                            char *err, size_t errlen)
{
    int fd = -1;
    if (mdb_env_get_fd(env, &fd) != 0 || fd < 0)
        return lerr(err, errlen, "getting the data file descriptor", EBADF);
    int rc = st_target_check_fd(t, data, fd, err, errlen);
    char lock_path[4200];
    if (!rc) rc = st_target_library_path(t, lock, true, lock_path, sizeof lock_path, err, errlen);
    return rc;
}

/* Frees what kv_open made so far (the environment when it was created). */
static void open_failed(kv_db *d)
{
    if (d->env) mdb_env_close(d->env);
    free(d->main);
    free(d->sec);
    free(d);
}

/* The environment: its map sized for the data with room to grow, its sync mode, and
 * reader slots for every connection. An exit status. */
static int open_env(kv_db *d, const sb_db_opts *o, uint64_t file, char *err, size_t errlen)
{
    int rc = mdb_env_create(&d->env);
    if (rc) {
        d->env = NULL;
        return lerr(err, errlen, "env", rc);
    }
    uint64_t est = estimate_bytes(o->tables, o->table_size);
    uint64_t base = est > file ? est : file;
    /* Room to grow (inserts, page splits from updates): twice the data plus 1 GiB. The
     * map is address space, not memory or disk. */
    d->map_size = ((base * 2 + (1ull << 30)) + 0xfffff) & ~0xfffffull;
    unsigned flags = MDB_NOSUBDIR | MDB_NORDAHEAD | MDB_NOTLS;
    if (o->loading || !strcmp(o->sync, "off"))
        flags |= MDB_NOSYNC;
    else if (!strcmp(o->sync, "normal"))
        flags |= MDB_NOMETASYNC;
    if ((rc = mdb_env_set_mapsize(d->env, d->map_size)) ||
        (rc = mdb_env_set_maxdbs(d->env, 2 * o->tables + 2)) ||
        (rc = mdb_env_set_maxreaders(d->env, (unsigned)o->max_connections + 16)) ||
        (rc = mdb_env_open(d->env, d->path, flags, 0644)))
        return lerr(err, errlen, "opening the environment", rc);
    return SIM_EXIT_OK;
}

static int kv_open(st_target *t, const sb_db_opts *o, bool create, void **out, char *err,
                   size_t errlen)
{
    char data[64], lock[64];
    file_names(o->instance, data, lock);
    if (create) {
        for (int i = 0; i < 2; i++) {
            int fd = -1;
            int rc = st_target_create_file(t, i ? lock : data, 0, &fd, err, errlen);
            if (rc) return rc;
            close(fd);
        }
    }
    kv_db *d = sim_xcalloc(1, sizeof *d);
    int rc = lmdb_files_checked(t, data, lock, d->path, sizeof d->path, err, errlen);
    if (rc) {
        free(d);
        return rc;
    }
    d->o = *o;
    d->tables = o->tables;
    d->main = sim_xcalloc(o->tables + 1, sizeof *d->main);
    d->sec = sim_xcalloc(o->tables + 1, sizeof *d->sec);
    struct stat st;
    uint64_t file = stat(d->path, &st) == 0 ? (uint64_t)st.st_size : 0;
    if ((rc = open_env(d, o, file, err, errlen)) ||
        (rc = lmdb_fds_checked(t, d->env, data, lock, err, errlen))) {
        open_failed(d);
        return rc;
    }
    MDB_envinfo at_open;
    mdb_env_info(d->env, &at_open);
    d->file_at_open = file;
    d->pages_at_open = (uint64_t)at_open.me_last_pgno + 1;
    /* Reader slots left by a process that was killed would pin old pages forever. */
    int dead = 0;
    mdb_reader_check(d->env, &dead);
    if (dead) sim_warn("lmdb: cleared %d reader slot(s) of dead processes in %s", dead, d->path);
    if ((rc = open_dbis(d, create, err, errlen))) {
        open_failed(d);
        return rc;
    }
    d->writers = sim_fifo_lock_new();
    *out = d;
    return SIM_EXIT_OK;
}

static void kv_close(void *db)
{
    kv_db *d = db;
    if (!d) return;
    if (d->o.loading) mdb_env_sync(d->env, 1); /* the load ran without syncs */
    mdb_env_close(d->env);
    sim_fifo_lock_free(d->writers);
    free(d->main);
    free(d->sec);
    free(d);
}

typedef struct meta_rec {
    uint64_t tables, table_size, seed, complete;
} meta_rec;

static int kv_meta_get(void *db, sb_meta *m, char *err, size_t errlen)
{
    kv_db *d = db;
    memset(m, 0, sizeof *m);
    MDB_txn *txn;
    int rc = mdb_txn_begin(d->env, NULL, MDB_RDONLY, &txn);
    if (rc) return lerr(err, errlen, "begin", rc);
    MDB_val key = {5, "shape"}, val;
    rc = mdb_get(txn, d->meta, &key, &val);
    if (rc == 0 && val.mv_size == sizeof(meta_rec)) {
        meta_rec r;
        memcpy(&r, val.mv_data, sizeof r);
        m->tables = (uint32_t)r.tables;
        m->table_size = r.table_size;
        m->seed = r.seed;
        m->complete = r.complete != 0;
    }
    mdb_txn_abort(txn);
    return SIM_EXIT_OK;
}

static int kv_meta_put(void *db, const sb_meta *m, char *err, size_t errlen)
{
    kv_db *d = db;
    MDB_txn *txn;
    int rc = mdb_txn_begin(d->env, NULL, 0, &txn);
    if (rc) return lerr(err, errlen, "begin", rc);
    meta_rec r = {m->tables, m->table_size, m->seed, m->complete};
    MDB_val key = {5, "shape"}, val = {sizeof r, &r};
    rc = mdb_put(txn, d->meta, &key, &val, 0);
    if (rc) {
        mdb_txn_abort(txn);
        return lerr(err, errlen, "writing meta", rc);
    }
    rc = mdb_txn_commit(txn);
    if (rc) return lerr(err, errlen, "commit", rc);
    rc = mdb_env_sync(d->env, 1);
    return rc ? lerr(err, errlen, "sync", rc) : 0;
}

/* LSD radix sort of 64-bit values, 16 bits per pass; passes over bits that are zero
 * in every value are skipped (k and id rarely need more than 32 bits). */
static void radix_sort(uint64_t *a, uint64_t *tmp, size_t n)
{
    uint64_t all = 0;
    for (size_t i = 0; i < n; i++)
        all |= a[i];
    size_t *count = sim_xmalloc(65536 * sizeof *count);
    for (int shift = 0; shift < 64; shift += 16) {
        if (!((all >> shift) & 0xffff)) continue;
        memset(count, 0, 65536 * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[(a[i] >> shift) & 0xffff]++;
        size_t sum = 0;
        for (size_t b = 0; b < 65536; b++) {
            size_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[(a[i] >> shift) & 0xffff]++] = a[i];
        memcpy(a, tmp, n * sizeof *a);
    }
    free(count);
}

static int drop_table(kv_db *d, uint32_t table, char *err, size_t errlen)
{
    MDB_txn *txn;
    int rc = mdb_txn_begin(d->env, NULL, 0, &txn);
    if (rc) return lerr(err, errlen, "begin", rc);
    if ((rc = mdb_drop(txn, d->main[table], 0)) || (rc = mdb_drop(txn, d->sec[table], 0))) {
        mdb_txn_abort(txn);
        return lerr(err, errlen, "emptying a table", rc);
    }
    rc = mdb_txn_commit(txn);
    return rc ? lerr(err, errlen, "commit", rc) : 0;
}

/* The rows 1..rows of sbtest<table> in id order (appends), LOAD_BATCH per transaction;
 * each row's (k, id) goes to pairs[id - 1] for the index. An exit status. */
static int load_rows(kv_db *d, uint32_t table, uint64_t rows, sim_rng *rng, uint64_t *pairs,
                     char *err, size_t errlen)
{
    kv_row row;
    uint64_t id = 1;
    int rc = 0;
    while (id <= rows) {
        if (sim_interrupted()) { /* Ctrl-C: stop between batches, table incomplete */
            snprintf(err, errlen, "interrupted while loading sbtest%u", table);
            return SIM_EXIT_FAIL;
        }
        MDB_txn *txn;
        MDB_cursor *cur;
        if ((rc = mdb_txn_begin(d->env, NULL, 0, &txn))) break;
        if ((rc = mdb_cursor_open(txn, d->main[table], &cur))) {
            mdb_txn_abort(txn);
            break;
        }
        for (uint64_t end = id + LOAD_BATCH; id <= rows && id < end; id++) {
            row.k = sim_rng_range(rng, 1, rows);
            sb_gen_c(rng, row.c);
            sb_gen_pad(rng, row.pad);
            pairs[id - 1] = row.k << 32 | id;
            MDB_val key = {sizeof id, &id}, val = {sizeof row, &row};
            if ((rc = mdb_cursor_put(cur, &key, &val, MDB_APPEND))) break;
        }
        mdb_cursor_close(cur);
        if (rc) {
            mdb_txn_abort(txn);
            break;
        }
        if ((rc = mdb_txn_commit(txn))) break;
    }
    return rc ? lerr(err, errlen, "loading rows", rc) : SIM_EXIT_OK;
}

/* The secondary index from the (k, id) pairs, sorted here: appends only. An exit
 * status. */
static int build_index(kv_db *d, uint32_t table, uint64_t *pairs, uint64_t rows, char *err,
                       size_t errlen)
{
    uint64_t *tmp = sim_xmalloc(rows * sizeof *tmp);
    radix_sort(pairs, tmp, rows);
    free(tmp);
    size_t i = 0;
    int rc = 0;
    while (i < rows) {
        MDB_txn *txn;
        MDB_cursor *cur;
        if ((rc = mdb_txn_begin(d->env, NULL, 0, &txn))) break;
        if ((rc = mdb_cursor_open(txn, d->sec[table], &cur))) {
            mdb_txn_abort(txn);
            break;
        }
        for (size_t end = i + INDEX_BATCH; i < rows && i < end; i++) {
            uint64_t k = pairs[i] >> 32, v = pairs[i] & 0xffffffffu;
            MDB_val key = {sizeof k, &k}, val = {sizeof v, &v};
            if ((rc = mdb_cursor_put(cur, &key, &val, MDB_APPENDDUP))) break;
        }
        mdb_cursor_close(cur);
        if (rc) {
            mdb_txn_abort(txn);
            break;
        }
        if ((rc = mdb_txn_commit(txn))) break;
    }
    return rc ? lerr(err, errlen, "building the k index", rc) : SIM_EXIT_OK;
}

static int kv_load_table(void *db, uint32_t table, uint64_t rows, sim_rng *rng, char *err,
                         size_t errlen)
{
    kv_db *d = db;
    if (table < 1 || table > d->tables) {
        snprintf(err, errlen, "table %u out of range", table);
        return SIM_EXIT_FAIL;
    }
    if (rows >= (1ull << 32)) {
        snprintf(err, errlen, "--table-size must be below 2^32");
        return SIM_EXIT_USAGE;
    }
    int rc = drop_table(d, table, err, errlen);
    if (rc) return rc;
    uint64_t *pairs = sim_xmalloc(rows * sizeof *pairs);
    rc = load_rows(d, table, rows, rng, pairs, err, errlen);
    if (!rc) rc = build_index(d, table, pairs, rows, err, errlen);
    free(pairs);
    return rc;
}

/* ------------------------------------------------------------------ connections */

static void *kv_connect(void *db, char *err, size_t errlen)
{
    kv_conn *k = sim_xcalloc(1, sizeof *k);
    k->d = db;
    return k;
}

static void kv_disconnect(void *conn)
{
    kv_conn *k = conn;
    if (!k) return;
    if (k->txn && k->txn != k->rtxn) {
        mdb_txn_abort(k->txn);
        sim_fifo_lock_release(k->d->writers);
    }
    if (k->rtxn) mdb_txn_abort(k->rtxn);
    free(k->sortv);
    free(k);
}

static const char *kv_conn_error(void *conn)
{
    return ((kv_conn *)conn)->err;
}

static int fail(kv_conn *k, const char *what, int rc)
{
    /* ENOSPC, EIO...: fail-stop (sim/fault.c); LMDB's commit left the last good meta. */
    sim_fault_note(rc, "in the LMDB %s of %s", what, k->d->path);
    snprintf(k->err, sizeof k->err, "LMDB %s: %s%s", what, mdb_strerror(rc),
             rc == MDB_MAP_FULL       ? " (the data outgrew the map; run cleanup and prepare again)"
             : rc == MDB_READERS_FULL ? " (reader table full)"
                                      : "");
    return SB_FAIL;
}

/* The calling thread's major page faults so far. The engine's reads are faults of its
 * memory map, which no timer sees; counting them per thread where the writer lock is
 * held, in the prefetch and in all tells whether the reads left the writer's hold.
 * RUSAGE_THREAD has been in Linux since 2.6.26; 0 where it fails. */
static uint64_t thread_major_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_majflt : 0;
}

/* Lets the next writer in, counting the hold and the faults taken during it. */
static void release_writer(kv_conn *k)
{
    sim_fifo_lock_release(k->d->writers);
    k->waits.held_ns += sim_now_ns() - k->held_from;
    k->waits.faults_held += thread_major_faults() - k->faults_from;
}

/* The connection's read snapshot: its one read transaction renewed (created the first
 * time), and reset when it ends, so reader slots are not churned. */
static int snapshot_open(kv_conn *k)
{
    int rc =
        k->rtxn ? mdb_txn_renew(k->rtxn) : mdb_txn_begin(k->d->env, NULL, MDB_RDONLY, &k->rtxn);
    if (!rc) k->txn = k->rtxn;
    return rc;
}

static void snapshot_close(kv_conn *k)
{
    mdb_txn_reset(k->rtxn);
    k->txn = NULL;
}

static int kv_begin(void *conn, bool write)
{
    kv_conn *k = conn;
    int rc;
    if (write) {
        if (sim_fault_noted()) return fail(k, "begin", sim_fault_noted()); /* write no more */
        uint64_t t0 = sim_now_ns();
        sim_fifo_lock_acquire(k->d->writers);
        k->held_from = sim_now_ns();
        k->faults_from = thread_major_faults();
        k->waits.lock_ns += k->held_from - t0;
        rc = mdb_txn_begin(k->d->env, NULL, 0, &k->txn);
        if (rc) {
            release_writer(k);
            return fail(k, "begin", rc);
        }
    } else if ((rc = snapshot_open(k))) {
        return fail(k, "begin read", rc);
    }
    k->write = write;
    return SB_OK;
}

static int kv_commit(void *conn)
{
    kv_conn *k = conn;
    if (!k->txn) return SB_OK;
    int rc = 0;
    if (k->write) {
        uint64_t t0 = sim_now_ns();
        rc = mdb_txn_commit(k->txn); /* frees the txn even when it fails */
        k->waits.commit_ns += sim_now_ns() - t0;
        release_writer(k);
    } else {
        snapshot_close(k);
    }
    k->txn = NULL;
    return rc ? fail(k, "commit", rc) : SB_OK;
}

static void kv_rollback(void *conn)
{
    kv_conn *k = conn;
    if (!k->txn) return;
    if (k->write) {
        mdb_txn_abort(k->txn);
        release_writer(k);
    } else {
        snapshot_close(k);
    }
    k->txn = NULL;
}

/* Looks up (k, id) in table's k index, or the first entry at or after key kv when id is
 * 0: either way the search faults in the leaf the write will change. */
static int touch_index(kv_conn *k, uint32_t table, uint64_t kv, uint64_t id)
{
    MDB_cursor *cur;
    int rc = mdb_cursor_open(k->txn, k->d->sec[table], &cur);
    if (rc) return rc;
    MDB_val key = {sizeof kv, &kv}, val = {sizeof id, &id};
    rc = mdb_cursor_get(cur, &key, &val, id ? MDB_GET_BOTH : MDB_SET_RANGE);
    mdb_cursor_close(cur);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* The prefetch (see the top of the file): with no transaction open it uses the read
 * snapshot for itself and resets it after; with a read snapshot open it reads in it and
 * leaves it open. A row that is gone needs nothing more (its update changes no row; the
 * insert after a delete goes to the leaf the search passed). */
static void kv_prefetch_writes(void *conn, const sb_write *w, int n)
{
    kv_conn *k = conn;
    if (k->write) return; /* the contract: never inside a write transaction */
    uint64_t t0 = sim_now_ns(), f0 = thread_major_faults();
    bool own = !k->txn;
    int rc = own ? snapshot_open(k) : 0;
    for (int i = 0; i < n && !rc; i++) {
        uint32_t t = w[i].table;
        if (t < 1 || t > k->d->tables) continue;
        uint64_t id = w[i].id;
        MDB_val key = {sizeof id, &id}, val;
        rc = mdb_get(k->txn, k->d->main[t], &key, &val);
        if (rc == MDB_NOTFOUND) {
            rc = w[i].kind == SB_W_DELETE_INSERT ? touch_index(k, t, w[i].k_new, 0) : 0;
            continue;
        }
        if (rc || w[i].kind == SB_W_UPDATE_C || val.mv_size != sizeof(kv_row)) continue;
        uint64_t old;
        memcpy(&old, val.mv_data, sizeof old); /* the row's k */
        rc = touch_index(k, t, old, id);
        if (!rc) rc = touch_index(k, t, w[i].kind == SB_W_UPDATE_K ? old + 1 : w[i].k_new, 0);
    }
    if (rc) k->waits.prefetch_failed++;
    if (own && k->txn) snapshot_close(k);
    k->waits.prefetch_ns += sim_now_ns() - t0;
    k->waits.faults_prefetch += thread_major_faults() - f0;
}

static void kv_waits(void *conn, sb_waits *out)
{
    *out = ((const kv_conn *)conn)->waits;
    out->faults = thread_major_faults();
}

static bool table_ok(kv_conn *k, uint32_t table)
{
    if (table >= 1 && table <= k->d->tables && k->txn) return true;
    snprintf(k->err, sizeof k->err,
             k->txn ? "table sbtest%u does not exist" : "no transaction open", table);
    return false;
}

static int kv_point_select(void *conn, uint32_t table, uint64_t id, sb_result *r)
{
    kv_conn *k = conn;
    if (!table_ok(k, table)) return SB_FAIL;
    MDB_val key = {sizeof id, &id}, val;
    int rc = mdb_get(k->txn, k->d->main[table], &key, &val);
    if (rc == MDB_NOTFOUND) return SB_OK;
    if (rc) return fail(k, "get", rc);
    char c[SB_C_LEN];
    memcpy(c, ((const kv_row *)val.mv_data)->c, sizeof c); /* the client fetches c */
    r->rows = 1;
    return SB_OK;
}

static int cmp_c(const void *a, const void *b)
{
    return memcmp(*(const char *const *)a, *(const char *const *)b, SB_C_LEN);
}

static int kv_range(void *conn, uint32_t table, sb_range_kind kind, uint64_t lo, uint64_t hi,
                    sb_result *r)
{
    kv_conn *k = conn;
    if (!table_ok(k, table)) return SB_FAIL;
    MDB_cursor *cur;
    int rc = mdb_cursor_open(k->txn, k->d->main[table], &cur);
    if (rc) return fail(k, "cursor", rc);
    uint64_t id = lo;
    MDB_val key = {sizeof id, &id}, val;
    uint64_t rows = 0;
    int64_t sum = 0;
    size_t n = 0;
    char c[SB_C_LEN];
    for (rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
        uint64_t kid;
        memcpy(&kid, key.mv_data, sizeof kid);
        if (kid > hi) break;
        const kv_row *row = val.mv_data;
        rows++;
        if (kind == SB_RANGE_SUM) {
            uint64_t kk;
            memcpy(&kk, &row->k, sizeof kk);
            sum += (int64_t)kk;
        } else if (kind == SB_RANGE_SIMPLE) {
            memcpy(c, row->c, sizeof c);
        } else {
            if (n == k->sortcap) {
                size_t cap = k->sortcap ? 2 * k->sortcap : 128;
                k->sortv = sim_xrealloc(k->sortv, cap * sizeof *k->sortv);
                k->sortcap = cap;
            }
            k->sortv[n++] = row->c; /* stable for the life of the transaction */
        }
    }
    mdb_cursor_close(cur);
    if (rc && rc != MDB_NOTFOUND) return fail(k, "range", rc);
    if (kind == SB_RANGE_ORDER || kind == SB_RANGE_DISTINCT) {
        qsort(k->sortv, n, sizeof *k->sortv, cmp_c);
        if (kind == SB_RANGE_DISTINCT) {
            size_t u = 0;
            for (size_t i = 0; i < n; i++)
                if (!u || memcmp(k->sortv[i], k->sortv[u - 1], SB_C_LEN))
                    k->sortv[u++] = k->sortv[i];
            rows = u;
        }
        for (size_t i = 0; i < (size_t)rows; i++)
            memcpy(c, k->sortv[i], sizeof c);
    }
    r->rows = kind == SB_RANGE_SUM ? 1 : rows; /* SUM returns one row, as in SQL */
    r->sum = sum;
    return SB_OK;
}

/* What get_row answers besides SB_FAIL; absent is SB_OK, so that a statement passes it up
 * as "0 rows changed". */
enum { ROW_ABSENT = SB_OK, ROW_FOUND = 1 };

/* Reads row id into *row: ROW_FOUND, ROW_ABSENT or SB_FAIL. */
static int get_row(kv_conn *k, uint32_t table, uint64_t id, kv_row *row)
{
    MDB_val key = {sizeof id, &id}, val;
    int rc = mdb_get(k->txn, k->d->main[table], &key, &val);
    if (rc == MDB_NOTFOUND) return ROW_ABSENT;
    if (rc) return fail(k, "get", rc);
    if (val.mv_size != sizeof *row) {
        snprintf(k->err, sizeof k->err, "row %llu of sbtest%u has %zu bytes, not %zu",
                 (unsigned long long)id, table, val.mv_size, sizeof *row);
        return SB_FAIL;
    }
    memcpy(row, val.mv_data, sizeof *row);
    return ROW_FOUND;
}

static int put_row(kv_conn *k, uint32_t table, uint64_t id, const kv_row *row, unsigned flags)
{
    MDB_val key = {sizeof id, &id}, val = {sizeof *row, (void *)row};
    int rc = mdb_put(k->txn, k->d->main[table], &key, &val, flags);
    if (rc == MDB_KEYEXIST) {
        snprintf(k->err, sizeof k->err, "duplicate id %llu in sbtest%u", (unsigned long long)id,
                 table);
        return SB_FAIL;
    }
    return rc ? fail(k, "put", rc) : SB_OK;
}

static int index_put(kv_conn *k, uint32_t table, uint64_t kv, uint64_t id)
{
    MDB_val key = {sizeof kv, &kv}, val = {sizeof id, &id};
    int rc = mdb_put(k->txn, k->d->sec[table], &key, &val, MDB_NODUPDATA);
    return rc && rc != MDB_KEYEXIST ? fail(k, "index put", rc) : SB_OK;
}

static int index_del(kv_conn *k, uint32_t table, uint64_t kv, uint64_t id)
{
    MDB_val key = {sizeof kv, &kv}, val = {sizeof id, &id};
    int rc = mdb_del(k->txn, k->d->sec[table], &key, &val);
    if (rc == MDB_NOTFOUND) {
        snprintf(k->err, sizeof k->err, "k index of sbtest%u lacks (k=%llu, id=%llu)", table,
                 (unsigned long long)kv, (unsigned long long)id);
        return SB_FAIL;
    }
    return rc ? fail(k, "index delete", rc) : SB_OK;
}

static bool write_ok(kv_conn *k, uint32_t table)
{
    if (!table_ok(k, table)) return false;
    if (k->write) return true;
    snprintf(k->err, sizeof k->err, "write statement outside a write transaction");
    return false;
}

static int kv_update_index(void *conn, uint32_t table, uint64_t id, sb_result *r)
{
    kv_conn *k = conn;
    if (!write_ok(k, table)) return SB_FAIL;
    r->rows = 0;
    kv_row row;
    int rc = get_row(k, table, id, &row);
    if (rc != ROW_FOUND) return rc; /* absent: 0 rows changed */
    uint64_t old;
    memcpy(&old, &row.k, sizeof old);
    uint64_t nk = old + 1;
    memcpy(&row.k, &nk, sizeof nk);
    if ((rc = index_del(k, table, old, id)) || (rc = index_put(k, table, nk, id)) ||
        (rc = put_row(k, table, id, &row, 0)))
        return rc;
    r->rows = 1;
    return SB_OK;
}

static int kv_update_non_index(void *conn, uint32_t table, uint64_t id, const char *c, sb_result *r)
{
    kv_conn *k = conn;
    if (!write_ok(k, table)) return SB_FAIL;
    r->rows = 0;
    kv_row row;
    int rc = get_row(k, table, id, &row);
    if (rc != ROW_FOUND) return rc;
    memcpy(row.c, c, SB_C_LEN);
    if ((rc = put_row(k, table, id, &row, 0))) return rc;
    r->rows = 1;
    return SB_OK;
}

static int kv_delete_row(void *conn, uint32_t table, uint64_t id, sb_result *r)
{
    kv_conn *k = conn;
    if (!write_ok(k, table)) return SB_FAIL;
    r->rows = 0;
    kv_row row;
    int rc = get_row(k, table, id, &row);
    if (rc != ROW_FOUND) return rc;
    uint64_t kv;
    memcpy(&kv, &row.k, sizeof kv);
    MDB_val key = {sizeof id, &id};
    if ((rc = mdb_del(k->txn, k->d->main[table], &key, NULL))) return fail(k, "delete", rc);
    if ((rc = index_del(k, table, kv, id))) return rc;
    r->rows = 1;
    return SB_OK;
}

static int kv_insert_row(void *conn, uint32_t table, uint64_t id, uint64_t kv, const char *c,
                         const char *pad, sb_result *r)
{
    kv_conn *k = conn;
    if (!write_ok(k, table)) return SB_FAIL;
    int rc;
    if (!id) {
        /* Auto-increment: one past the largest id, under the write lock. */
        MDB_cursor *cur;
        if ((rc = mdb_cursor_open(k->txn, k->d->main[table], &cur))) return fail(k, "cursor", rc);
        MDB_val key, val;
        rc = mdb_cursor_get(cur, &key, &val, MDB_LAST);
        id = 1;
        if (rc == 0) {
            memcpy(&id, key.mv_data, sizeof id);
            id++;
        }
        mdb_cursor_close(cur);
        if (rc && rc != MDB_NOTFOUND) return fail(k, "last id", rc);
    }
    kv_row row;
    memcpy(&row.k, &kv, sizeof kv);
    memcpy(row.c, c, SB_C_LEN);
    memcpy(row.pad, pad, SB_PAD_LEN);
    if ((rc = put_row(k, table, id, &row, MDB_NOOVERWRITE)) || (rc = index_put(k, table, kv, id)))
        return rc;
    r->rows = 1;
    return SB_OK;
}

/* ------------------------------------------------------------------ check */

/* Every row's (k, id) is in the index and the index has no other entries: same
 * number of entries (dupsort entries are unique) and each row found. */
static int kv_check(void *db, uint32_t tables, json_t **report, char *err, size_t errlen)
{
    kv_db *d = db;
    MDB_txn *txn;
    int rc = mdb_txn_begin(d->env, NULL, MDB_RDONLY, &txn);
    if (rc) return lerr(err, errlen, "begin", rc);
    json_t *rows = json_array();
    bool ok = true;
    uint64_t missing = 0;
    for (uint32_t t = 1; t <= tables && t <= d->tables && rc == 0; t++) {
        MDB_stat ms, ss;
        if ((rc = mdb_stat(txn, d->main[t], &ms)) || (rc = mdb_stat(txn, d->sec[t], &ss))) break;
        json_array_append_new(rows, json_integer((json_int_t)ms.ms_entries));
        if (ms.ms_entries != ss.ms_entries) ok = false;
        MDB_cursor *mc, *sc;
        if ((rc = mdb_cursor_open(txn, d->main[t], &mc))) break;
        if ((rc = mdb_cursor_open(txn, d->sec[t], &sc))) {
            mdb_cursor_close(mc);
            break;
        }
        MDB_val key, val;
        for (rc = mdb_cursor_get(mc, &key, &val, MDB_FIRST); rc == 0;
             rc = mdb_cursor_get(mc, &key, &val, MDB_NEXT)) {
            uint64_t id, kv;
            memcpy(&id, key.mv_data, sizeof id);
            memcpy(&kv, val.mv_data, sizeof kv);
            MDB_val sk = {sizeof kv, &kv}, sv = {sizeof id, &id};
            if (mdb_cursor_get(sc, &sk, &sv, MDB_GET_BOTH)) {
                ok = false;
                missing++;
            }
        }
        mdb_cursor_close(mc);
        mdb_cursor_close(sc);
        if (rc == MDB_NOTFOUND) rc = 0;
    }
    mdb_txn_abort(txn);
    if (rc) {
        json_decref(rows);
        return lerr(err, errlen, "check", rc);
    }
    *report = json_pack("{s:o, s:b, s:I}", "rows", rows, "index_consistent", ok,
                        "rows_missing_from_index", (json_int_t)missing);
    return ok ? 0 : SIM_EXIT_FAIL;
}

/* ------------------------------------------------------------------ run policy */

static json_t *residency(void *const *dbs, int ndbs)
{
    json_t *a = json_array();
    for (int i = 0; i < ndbs; i++) {
        const kv_db *d = dbs[i];
        uint64_t fb = 0;
        int64_t rb = kv_resident_bytes(d->path, &fb);
        json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:f}", "file", d->path, "file_bytes",
                                           (json_int_t)fb, "resident_bytes", (json_int_t)rb,
                                           "resident_share", fb ? (double)rb / (double)fb : 0.0));
    }
    return a;
}

static int kv_run_begin(void *const *dbs, int ndbs, const sb_db_opts *o, sim_run *run,
                        json_t *section, void **run_state, char *err, size_t errlen)
{
    kv_memcg *run_cg = NULL; /* this run's memory cgroup, left by kv_run_end */
    sim_run_add_probe(run, &kv_page_fault_probe, NULL);
    json_t *mem = json_object();
    if (o->buffer_bytes) {
        /* Each instance stands for a machine with --buffer of memory. */
        uint64_t limit = o->buffer_bytes * (uint64_t)ndbs;
        char why[512];
        run_cg = kv_memcg_enter(limit, why, sizeof why);
        if (run_cg) {
            /* Cached pages from prepare or a previous run belong to another cgroup and
             * would answer reads beyond the limit: flush and drop them. */
            for (int i = 0; i < ndbs; i++) {
                const kv_db *d = dbs[i];
                mdb_env_sync(d->env, 1);
                kv_drop_cache(d->path);
            }
            json_decref(mem);
            mem = kv_memcg_json(run_cg);
            json_object_set_new(mem, "page_cache_dropped_at_start", json_true());
            sim_info("lmdb: memory cgroup %s limited to %llu bytes", kv_memcg_path(run_cg),
                     (unsigned long long)limit);
        } else {
            sim_warn("lmdb: --buffer NOT applied: %s; the page cache may answer reads "
                     "(the result reports the resident share of the data file)",
                     why);
            json_object_set_new(mem, "applied", json_false());
            json_object_set_new(mem, "reason", json_string(why));
        }
    } else {
        json_object_set_new(mem, "applied", json_false());
        json_object_set_new(mem, "reason",
                            json_string("no --buffer given: the page cache may hold all the data"));
    }
    json_object_set_new(mem, "resident_at_start", residency(dbs, ndbs));
    json_object_set_new(section, "memory", mem);
    *run_state = run_cg;
    (void)err;
    (void)errlen;
    return SIM_EXIT_OK;
}

static void kv_run_end(void *const *dbs, int ndbs, void *run_state, json_t *section)
{
    kv_memcg *run_cg = run_state;
    json_t *mem = json_object_get(section, "memory");
    if (run_cg) {
        json_t *now = kv_memcg_json(run_cg);
        json_object_update(mem, now);
        json_decref(now);
        kv_memcg_leave(run_cg);
    }
    json_object_set_new(mem, "resident_at_end", residency(dbs, ndbs));
}

/* Pages on LMDB's freelist (freed pages waiting for reuse): the data of each record of
 * the free database (dbi 0) is a page list whose first word is its length, as mdb_stat
 * -f counts them. -1 when it cannot be read. */
static int64_t free_pages(MDB_env *env)
{
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)) return -1;
    int64_t n = 0;
    if (mdb_cursor_open(txn, 0, &cur)) {
        n = -1;
    } else {
        MDB_val k, v;
        for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
             rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
            size_t len;
            memcpy(&len, v.mv_data, sizeof len);
            n += (int64_t)len;
        }
        mdb_cursor_close(cur);
    }
    mdb_txn_abort(txn);
    return n;
}

/* How the file grew since open: with a data set that does not grow (updates, delete +
 * insert of the same ids), freed pages are reused and the pages in use stay flat, unless
 * a long read transaction keeps them from being reused. */
static json_t *growth_json(const kv_db *d, uint64_t file, const MDB_envinfo *info, uint32_t psize)
{
    uint64_t pages = (uint64_t)info->me_last_pgno + 1;
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:f, s:I}", "file_bytes_start",
                     (json_int_t)d->file_at_open, "file_bytes_end", (json_int_t)file, "pages_start",
                     (json_int_t)d->pages_at_open, "pages_end", (json_int_t)pages, "pages_grown",
                     (json_int_t)(pages - d->pages_at_open), "map_used",
                     info->me_mapsize ? (double)(pages * psize) / (double)info->me_mapsize : 0.0,
                     "free_pages_end", (json_int_t)free_pages(d->env));
}

static json_t *kv_json(void *db)
{
    kv_db *d = db;
    MDB_envinfo info;
    MDB_stat st;
    mdb_env_info(d->env, &info);
    mdb_env_stat(d->env, &st);
    struct stat fs;
    uint64_t file = stat(d->path, &fs) == 0 ? (uint64_t)fs.st_size : 0;
    unsigned flags = 0;
    mdb_env_get_flags(d->env, &flags);
    json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:i, s:s, s:b, s:s, s:s}", "file", d->path,
                          "file_bytes", (json_int_t)file, "map_size", (json_int_t)info.me_mapsize,
                          "last_page", (json_int_t)info.me_last_pgno, "page_size",
                          (json_int_t)st.ms_psize, "max_readers", (int)info.me_maxreaders, "sync",
                          flags & MDB_NOSYNC       ? "off (MDB_NOSYNC)"
                          : flags & MDB_NOMETASYNC ? "normal (MDB_NOMETASYNC)"
                                                   : "full (synced commit per transaction)",
                          "nordahead", (flags & MDB_NORDAHEAD) != 0, "transactions",
                          "reads in a reused read transaction (reset/renew), writes in one write "
                          "transaction",
                          "version", MDB_VERSION_STRING);
    json_object_set_new(j, "growth", growth_json(d, file, &info, st.ms_psize));
    return j;
}

/* LMDB's data set is the pages in use (the file may be longer); its memory is the
 * memory cgroup --buffer sets on the process (page cache of the map and heap). */
static void kv_cache(void *db, uint64_t *buffer_bytes, uint64_t *data_bytes)
{
    kv_db *d = db;
    MDB_stat st;
    *buffer_bytes = d->o.buffer_bytes;
    *data_bytes = mdb_env_stat(d->env, &st) == 0 ? d->pages_at_open * st.ms_psize : d->file_at_open;
}

static const sb_engine_ops lmdb_engine = {
    .name = "lmdb",
    .description = "LMDB (mmap reads; --buffer is a memory cgroup limit)",
    .files = kv_files,
    .cache = kv_cache,
    .buffer_is = "a memory cgroup limit on appsim's process (--buffer; the map's page cache "
                 "and the heap)",
    .open = kv_open,
    .close = kv_close,
    .meta_get = kv_meta_get,
    .meta_put = kv_meta_put,
    .load_table = kv_load_table,
    .connect = kv_connect,
    .disconnect = kv_disconnect,
    .conn_error = kv_conn_error,
    .begin = kv_begin,
    .commit = kv_commit,
    .rollback = kv_rollback,
    .prefetch_writes = kv_prefetch_writes,
    .waits = kv_waits,
    .point_select = kv_point_select,
    .range = kv_range,
    .update_index = kv_update_index,
    .update_non_index = kv_update_non_index,
    .delete_row = kv_delete_row,
    .insert_row = kv_insert_row,
    .check = kv_check,
    .run_begin = kv_run_begin,
    .run_end = kv_run_end,
    .json = kv_json,
    .min_buffer = kv_min_buffer,
    .min_buffer_why = "4 MiB and 512 KiB per connection: the run's memory cgroup holds "
                      "appsim's own memory besides LMDB's cached pages, and below this the "
                      "kernel's OOM killer ends the run",
};
SB_REGISTER_ENGINE(lmdb_engine)
