/*
 * storage/sqlite/sqlite.h: SQLite on appsim's storage, the contract of storage/sqlite/.
 *
 * A database instance is a file on a target opened through appsim's direct-I/O VFS
 * (sqlite_vfs.c) with its own buffer pool (bufpool.c) shared by its connections
 * (sqlite_db.c: open, connections, group commit, checkpoints, the pool's probe), and a
 * bulk writer of SQLite's b-tree pages for loads (sqlite_bulk.c). It sits on
 * storage.h's targets and I/O engines; only the SQL workloads (oltp/) include it, so
 * that the rest of appsim (trace/, kv/, sim/) never sees SQLite.
 *
 * Return codes (sim/sim.h): opening databases and connections returns an exit status
 * (SIM_EXIT_OK, SIM_EXIT_USAGE, SIM_EXIT_FAIL) as storage.h's functions do; the commit
 * helpers and the bulk writer return a status (SIM_OK, or SIM_ERR with err); the VFS
 * answers SQLite in SQLite's own codes (SQLITE_OK, SQLITE_IOERR_*, ...), which
 * sqlite3_errstr(rc) names.
 */
#ifndef APPSIM_STORAGE_SQLITE_H
#define APPSIM_STORAGE_SQLITE_H

#include "storage/storage.h"

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ SQLite databases */

/*
 * One database instance on the target: a file opened through appsim's direct-I/O VFS
 * with one buffer pool of buffer_bytes shared by all its connections (or SQLite's
 * default VFS when the target is buffered, and then the result says the page cache was
 * in play). WAL mode; the WAL index in process memory; checkpoints on a background
 * thread by the policy below.
 */
/* The WAL's bound when nothing larger is asked for (st_db_opts.wal_limit_bytes). */
#define ST_DB_DEFAULT_WAL_LIMIT (64ull << 20)
/* The page size of a database appsim creates (a larger device block wins). */
#define ST_DB_PAGE_SIZE 8192u
/* The background checkpoint's trigger when none is asked for (checkpoint_wal_bytes):
 * SQLite's own 1000-page default. */
#define ST_DB_DEFAULT_CHECKPOINT_WAL_BYTES (4ull << 20)
/* The trigger that fits the buffer (st_db_checkpoint_bytes_for): a sixteenth of the
 * buffer and of the WAL bound, at most 64 MiB. SQLite's checkpoint reads every WAL
 * frame it copies; with a trigger that is a small share of the pool, the frames a
 * checkpoint copies are still resident, as a server's dirty pages are until it writes
 * them. A trigger as large as the pool has each frame read back from the drive, and
 * then the drive's read rate, not the workload's, sets how far checkpoints fall behind
 * (docs/sqlite-vfs.md, "The checkpoint trigger fits the buffer"). Within that, a larger
 * trigger writes a hot page once for the many commits that changed it since the last
 * checkpoint, as a server's checkpoint interval does; SQLite's 4 MiB rewrites the hot
 * pages (tpcc's district and warehouse rows) after nearly every change. */
#define ST_DB_CHECKPOINT_SHARE 16
#define ST_DB_MAX_CHECKPOINT_BYTES (64ull << 20)

typedef struct st_db_opts {
    uint64_t buffer_bytes; /* the database's memory (--buffer) */
    const char *sync;      /* "full" (default), "normal", "off" */
    /* A background checkpoint when the WAL holds this many bytes no checkpoint copied
     * (0 = the default above). */
    uint64_t checkpoint_wal_bytes;
    /* Under a WAL bound, lower that trigger as the WAL nears its restart: no more than a
     * quarter of the room left, at least the default (docs/sqlite-vfs.md). */
    bool checkpoint_taper;
    const char *checkpoint_mode; /* "passive" (default), "full", "restart", "truncate" */
    int max_connections;         /* for the buffer's minimum size check */
    const char *engine;          /* I/O engine name for the VFS (NULL = default) */
    /* The WAL's bound: from half of it on, the checkpointer restarts the WAL from its
     * beginning (holding writers back while the readers of older snapshots finish);
     * from 7/8 of it writers wait until it has (docs/sqlite-vfs.md). 0 = the larger of
     * ST_DB_DEFAULT_WAL_LIMIT and four times checkpoint_wal_bytes; UINT64_MAX = no bound
     * (SQLite's own behaviour, for comparison). */
    uint64_t wal_limit_bytes;
} st_db_opts;

typedef struct st_db st_db;

/* The background checkpoint's trigger for a database with buffer_bytes of buffer and a
 * WAL bound of wal_limit_bytes (0 = none given): ST_DB_CHECKPOINT_SHARE of the smaller,
 * at most ST_DB_MAX_CHECKPOINT_BYTES; 0 (storage's default, SQLite's 4 MiB) where that
 * is under the default. For st_db_opts.checkpoint_wal_bytes. */
uint64_t st_db_checkpoint_bytes_for(uint64_t buffer_bytes, uint64_t wal_limit_bytes);

/* Opens (create = true: creates and records in the manifest) database `name`. */
int st_db_open(st_target *t, const char *name, const st_db_opts *opts, bool create, st_db **out,
               char *err, size_t errlen);
/* For opening database `name` with SQLite's default VFS (bulk loads): checks that it
 * and its -journal, -wal and -shm files are no symlinks and are the files appsim
 * created (or absent), and returns its path through the target's resolved directory.
 * Open it with SQLITE_OPEN_NOFOLLOW. */
int st_db_library_path(st_target *t, const char *name, char *path, size_t len, char *err,
                       size_t errlen);
/* The VFS to open such a path with (sqlite3_open_v2's last argument): SQLite's default
 * one under appsim's fail-stop rule (sim/fault.c): the first failed write or sync is
 * noted as the process's storage fault and nothing is written after it. A buffered
 * target's connections use it too. NULL (the default VFS, with a warning) if it could
 * not be registered. */
const char *st_db_failstop_vfs(void);
/* A new connection with the VFS and the pragmas applied (WAL, synchronous, a small
 * per-connection cache). Use from one thread at a time. Opened with extended result
 * codes (mask with 0xff to compare with SQLITE_BUSY); busy timeout 10 s; no automatic
 * checkpoints (the instance's background thread does them). Close every connection
 * before st_db_close. */
int st_db_connect(st_db *db, sqlite3 **conn, char *err, size_t errlen);
/*
 * Group commit. st_db_can_group_commit: the database is on appsim's VFS with sync
 * "full". st_db_conn_group_commit then puts a connection in group-commit mode
 * (`synchronous=NORMAL`; its commits stay in the buffer pool, readable by every
 * connection, and are neither written nor synced at commit), and the caller must call
 * st_db_commit_durable after each commit, outside any lock of its own: it returns when
 * everything the connection committed is written and on stable storage, and one WAL
 * write + sync serves every commit that arrived while the previous one ran. A commit
 * is reported to the user only when durable; other connections may read it before (as
 * with InnoDB). SIM_OK, or SIM_ERR with err. st_db_group_commit_stats: what the group
 * commit did so far.
 */
typedef struct st_db_gc_stats {
    uint64_t commits;      /* made durable */
    uint64_t wal_syncs;    /* the cycles' WAL syncs that did it */
    uint64_t writes_ahead; /* WAL writes by commits waiting for a cycle already under way */
    uint64_t blocks_ahead; /* the WAL blocks those writes wrote */
} st_db_gc_stats;
bool st_db_can_group_commit(const st_db *db);
int st_db_conn_group_commit(st_db *db, sqlite3 *conn, char *err, size_t errlen);
int st_db_commit_durable(st_db *db, char *err, size_t errlen);
void st_db_group_commit_stats(st_db *db, st_db_gc_stats *out);
/* Flush the WAL into the database file (after a bulk load, before a copy). */
int st_db_checkpoint(st_db *db, char *err, size_t errlen);
/* {"vfs", "buffered", "buffer_bytes", "page_size", "hits", "misses", "evictions",
 *  "sync", "checkpoint": {...}} */
json_t *st_db_json(const st_db *db);
/* The buffer pool's bytes and the database file's bytes when it was opened (0 when it
 * had none): the cache ratio of a result's "cache" section (sim_result_put_cache). */
uint64_t st_db_buffer_bytes(const st_db *db);
uint64_t st_db_data_bytes_at_open(const st_db *db);
void st_db_close(st_db *db);
/* Blocks the calling thread read through appsim's VFS (any database) since it
 * started: `reads` counts block reads asked of the buffer pool, `device_reads` the
 * pool misses that went to the device (a partial write of an absent block is one
 * too), device_read_ns the time the thread waited for those device reads (both
 * files). A transaction's cost is the difference around it. */
typedef struct st_db_thread_reads {
    uint64_t db_reads, db_device_reads;   /* database file */
    uint64_t wal_reads, wal_device_reads; /* its WAL */
    uint64_t device_read_ns;
} st_db_thread_reads;
void st_db_thread_reads_get(st_db_thread_reads *out);
/* Smallest buffer_bytes st_db_open accepts: 16 pages per connection (max_connections,
 * at least 1, plus the checkpointer's). */
uint64_t st_db_min_buffer(const st_db_opts *opts, uint32_t page_size);
/* The pool's and VFS's counters as a sim/ probe named "db_pool": hits, misses,
 * evictions, hit_ratio, the device reads and writes the VFS issued (db_reads,
 * wal_reads, db_writes, wal_writes, syncs), io_in_flight (this database's reads and
 * writes in flight on average: their summed durations over the wall time, the queue
 * depth it gave the drive whatever else shares the disk; reads_in_flight the reads'
 * part), checkpoints, and per unit when units > 0
 * (misses_per_unit, device_reads_per_unit, device_writes_per_unit). ctx is the st_db.
 * On a buffered target it only says the page cache was in play. */
extern const sim_probe_ops st_db_pool_probe;

/* ------------------------------------------------------------------ SQLite bulk pages */

/*
 * Writes a rowid table's b-tree and an index b-tree directly in SQLite's file format,
 * pages packed full, for bulk loads where SQLite's single writer is too slow.
 * Contract: the caller created the table and index with SQL (so their roots are the
 * empty leaves SQLite wrote), no connection has the file open, and the WAL is empty.
 * Per tree: begin, then rows in strictly increasing rowid order (table) or records in
 * the index's sort order (index; not checked: an unordered index is corrupt), then end.
 * close() writes the roots and the header only if every tree ended; otherwise the file
 * is truncated back and its trees stay empty. Records must fit on one page (no overflow
 * pages): rows up to the usable size - 35 bytes, index records up to 64 bytes. Refuses
 * files with auto-vacuum or a non-UTF-8 encoding (the caller then loads through SQL).
 * Not thread-safe; one writer per file.
 */
typedef struct st_sqlite_bulk st_sqlite_bulk;

typedef enum { ST_SQLITE_NULL, ST_SQLITE_INT, ST_SQLITE_TEXT } st_sqlite_type;
typedef struct st_sqlite_value {
    st_sqlite_type type;
    int64_t i;        /* ST_SQLITE_INT */
    const char *text; /* ST_SQLITE_TEXT, UTF-8, not terminated */
    size_t len;
} st_sqlite_value;

int st_sqlite_bulk_open(const char *path, st_sqlite_bulk **out, char *err, size_t errlen);
/* Encodes a record as SQLite does (smallest integer serial types; 0 and 1 as constants
 * in schema format 4). Returns its length, 0 if it does not fit in cap. An INTEGER
 * PRIMARY KEY column is NULL in its table's record (the rowid holds it). */
size_t st_sqlite_bulk_record(const st_sqlite_bulk *b, const st_sqlite_value *vals, int n,
                             uint8_t *out, size_t cap);
/* The offset of SQLite's lock bytes (PENDING_BYTE, 2^30 unless the process moved it
 * with sqlite3_test_control(SQLITE_TESTCTRL_PENDING_BYTE), as tests do to cross it in
 * a small file). The page holding it is never used; open() sets 2^30. */
void st_sqlite_bulk_set_pending_byte(st_sqlite_bulk *b, uint64_t offset);
int st_sqlite_bulk_begin(st_sqlite_bulk *b, bool index, uint32_t root, char *err, size_t errlen);
int st_sqlite_bulk_row(st_sqlite_bulk *b, int64_t rowid, const uint8_t *rec, size_t len, char *err,
                       size_t errlen);
int st_sqlite_bulk_entry(st_sqlite_bulk *b, const uint8_t *rec, size_t len, char *err,
                         size_t errlen);
int st_sqlite_bulk_end(st_sqlite_bulk *b, char *err, size_t errlen);
/* Pages appended so far (all trees). */
uint64_t st_sqlite_bulk_pages(const st_sqlite_bulk *b);
int st_sqlite_bulk_close(st_sqlite_bulk *b, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
