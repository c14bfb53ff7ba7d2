/*
 * storage/storage.h: the target drive. What may be written, how I/O is issued, which
 * drive it is, and what the drive did during a run.
 *
 * storage/ never knows what a transaction is. It records per-I/O latency into sim/
 * meters when asked, and offers the block-layer counters as a sim/ probe.
 *
 * Safety contract (the worst bug a benchmark can have is destroying a user's data):
 *   - in a directory target appsim creates, writes and deletes only files listed in
 *     the target's manifest (".appsim-manifest" in the directory), which it writes
 *     before creating each file; cleanup removes exactly those;
 *   - a block device target is opened for writing only with allow_destroy, or when it
 *     carries appsim's mark (left the first time appsim wrote it; capacity ends before
 *     it) and libblkid finds no filesystem or partition table on it; never while it or
 *     one of its partitions is mounted or held, or one of its partitions holds a
 *     filesystem signature (flag or not);
 *   - no file of a directory target is opened through a symlink, and a listed name
 *     that no longer holds the file appsim created (inode in the manifest) is refused;
 *   - one appsim per target: a second one is refused at once, naming the holder;
 *   - space is checked before anything is filled.
 * Functions that can fail take (char *err, size_t errlen) and return 0 on success or
 * an exit status (SIM_EXIT_USAGE for a target the user must change, SIM_EXIT_FAIL
 * for an I/O failure) with a message in err that says what to do.
 */
#ifndef APPSIM_STORAGE_H
#define APPSIM_STORAGE_H

#include "sim/sim.h"
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ targets */

typedef struct st_target st_target;

typedef struct st_target_opts {
    const char *path;   /* directory on the drive's filesystem, or a block device */
    bool allow_destroy; /* a block device may be written */
    bool buffered;      /* no O_DIRECT: the page cache is in play (recorded) */
    bool create_dir;    /* create the directory (not its parents) if missing */
    bool read_only;     /* only reading will be done (info, check) */
} st_target_opts;

int st_target_open(const st_target_opts *opts, st_target **out, char *err, size_t errlen);
void st_target_close(st_target *t);
bool st_target_is_device(const st_target *t);
bool st_target_buffered(const st_target *t);
const char *st_target_path(const st_target *t);
/* Logical block size: the alignment for O_DIRECT offsets, lengths and buffers. */
uint32_t st_target_block_size(const st_target *t);
/* Bytes available for new data (free space of the filesystem, or device size). */
uint64_t st_target_capacity(const st_target *t);
/* Refuses with both numbers when `bytes` more do not fit. */
int st_target_check_space(const st_target *t, uint64_t bytes, char *err, size_t errlen);

/* Files inside a directory target (names are relative, no '/'). Creating records the
 * name in the manifest first. Opened O_RDWR | O_DIRECT unless buffered; extra_flags
 * may add O_DSYNC and the like. For a device target, name must be NULL: the device. */
int st_target_create_file(st_target *t, const char *name, int extra_flags, int *fd, char *err,
                          size_t errlen);
/* Opens an existing file; only files in the manifest may be opened for writing. */
int st_target_open_file(st_target *t, const char *name, int extra_flags, bool writable, int *fd,
                        char *err, size_t errlen);
bool st_target_owns(const st_target *t, const char *name);
/* Checks that fd (opened by the caller inside the target) is the regular file the
 * manifest recorded for name: refused (SIM_EXIT_USAGE, saying what was found) otherwise. */
int st_target_check_fd(st_target *t, const char *name, int fd, char *err, size_t errlen);
/* For libraries that open files by path themselves (SQLite's default VFS, LMDB): checks
 * that name is not a symlink and is the file the manifest recorded (or, unless
 * must_exist, absent), and returns its path through the target directory's
 * resolved path (no symlink in it). The library must still open it without following
 * links (SQLITE_OPEN_NOFOLLOW), or the caller checks the library's fd afterwards. */
int st_target_library_path(st_target *t, const char *name, bool must_exist, char *buf, size_t len,
                           char *err, size_t errlen);
/* Full path of a file inside the target (for sqlite3_open and messages). */
const char *st_target_file_path(const st_target *t, const char *name, char *buf, size_t len);
int st_target_remove_file(st_target *t, const char *name, char *err, size_t errlen);
/* Removes every manifest file (and the manifest); reports what it removed. */
int st_target_cleanup(st_target *t, char *err, size_t errlen);

/* Drive identity for the result's "target" section: path, kind, filesystem, device
 * chain (partition -> disk), model, serial, firmware, capacity, block sizes,
 * rotational, scheduler, NVMe identify data when available, "virtual" note. */
json_t *st_target_json(const st_target *t);

/* ------------------------------------------------------------------ preconditioning */

/* What `appsim precondition` did to the target, kept with it (on a block device beside
 * appsim's mark in the reserved last MiB; in a directory in the manifest-listed file
 * "appsim-precondition.json"): {"at", "complete", "bytes_written", "region_bytes",
 * "passes", "loops", "block_bytes", "queue_depth", "seconds", "rate_mib_s", "purge",
 * ...}. st_target_json reports it as "preconditioning" (null when there is none). */
int st_precondition_record_write(st_target *t, const json_t *rec, char *err, size_t errlen);
json_t *st_precondition_record_read(const st_target *t); /* NULL: none */

/* Sequential preconditioning writes: `total_bytes` over [0, region_bytes) of fd (so
 * total / region passes), in block_bytes writes of random data with queue_depth in
 * flight through `engine`. Stops early, draining what is in flight, on SIGINT/SIGTERM
 * or a write error. Prints a progress line with the ETA unless quiet; calls
 * checkpoint (when set) about every 10 s with the bytes written so far. */
typedef struct st_precond_job {
    uint64_t region_bytes, total_bytes; /* multiples of block_bytes */
    uint32_t block_bytes;
    unsigned queue_depth;
    const char *engine;
    bool quiet;
    void (*checkpoint)(void *ctx, uint64_t bytes_written, double seconds);
    void *ctx;
} st_precond_job;
typedef struct st_precond_outcome {
    uint64_t bytes_written; /* completed writes, in order of offset within each pass */
    double seconds;         /* first submission to last completion */
    bool interrupted;
    const char *engine; /* the engine that ran */
} st_precond_outcome;
/* 0, or SIM_EXIT_FAIL with err (the outcome still says what was written). */
int st_precondition_write(int fd, const st_precond_job *job, st_precond_outcome *out, char *err,
                          size_t errlen);

/* Block-layer counters of the whole disk under the target, as a sim/ probe named
 * "device_io" (reads, writes, bytes, flushes, discards, io time, device latency per
 * op, and per transaction when units > 0). ctx is the target. */
extern const sim_probe_ops st_device_io_probe;

/* ------------------------------------------------------------------ I/O engines */

typedef enum st_op {
    ST_OP_READ,
    ST_OP_WRITE,
    ST_OP_FSYNC,
    ST_OP_FDATASYNC,
    ST_OP_DISCARD,
} st_op;

/* One I/O. The caller owns it until it comes back from st_engine_reap. */
typedef struct st_io {
    uint8_t op; /* st_op */
    int fd;
    void *buf;            /* aligned to the target's block size under O_DIRECT */
    uint64_t offset;      /* bytes */
    uint32_t len;         /* bytes */
    uint64_t tag;         /* caller's */
    uint64_t intended_ns; /* when it should have started; 0 = at submission */
    uint64_t submit_ns;   /* set by the engine */
    uint64_t complete_ns; /* set by the engine */
    int64_t result;       /* bytes transferred or -errno, set on completion */
} st_io;

typedef struct st_engine st_engine;

/* An engine's ops table; engines register themselves by name ("io_uring", "psync"). */
typedef struct st_engine_ops {
    const char *name;
    const char *description;
    int (*open)(st_engine *e, unsigned queue_depth, char *err, size_t errlen);
    void (*close)(st_engine *e);
    int (*submit)(st_engine *e, st_io *const *ios, unsigned n);
    int (*reap)(st_engine *e, st_io **done, unsigned max, unsigned min_wait);
    /* Optional (NULL = not supported, the calls below then do nothing). */
    int (*register_file)(st_engine *e, int fd);
    int (*unregister_file)(st_engine *e, int fd);
    int (*register_buffer)(st_engine *e, void *buf, size_t len);
    /* Optional: submit, then wait until wait_nr completions are posted, in one step. */
    int (*submit_wait)(st_engine *e, st_io *const *ios, unsigned n, unsigned wait_nr);
} st_engine_ops;
void st_register_engine(const st_engine_ops *ops);
#define ST_REGISTER_ENGINE(var)                                                                    \
    __attribute__((constructor)) static void st_register_##var(void)                               \
    {                                                                                              \
        st_register_engine(&(var));                                                                \
    }

/* Opens an engine for the calling thread (one per submitting thread). name NULL or
 * "io_uring" tries io_uring and falls back to psync with a warning when the kernel
 * refuses the ring; an explicit "psync" uses it directly. */
st_engine *st_engine_open(const char *name, unsigned queue_depth, char *err, size_t errlen);
void st_engine_close(st_engine *e);
const char *st_engine_name(const st_engine *e);
unsigned st_engine_queue_depth(const st_engine *e);
unsigned st_engine_inflight(const st_engine *e);
/* Queues up to n I/Os (never more than the free slots); returns how many were taken,
 * or -errno. */
int st_engine_submit(st_engine *e, st_io *const *ios, unsigned n);
/* Waits for at least min_wait completions (0 = poll); returns how many were put in
 * done[0..max), or -errno. */
int st_engine_reap(st_engine *e, st_io **done, unsigned max, unsigned min_wait);
/* Submit and reap in one step (one system call under io_uring): queues up to n I/Os
 * like st_engine_submit (*submitted says how many), then reaps like st_engine_reap.
 * The loop of a queue-depth-bound generator. Returns the number reaped or -errno. */
int st_engine_submit_reap(st_engine *e, st_io *const *ios, unsigned n, unsigned *submitted,
                          st_io **done, unsigned max, unsigned min_wait);
/* Submit one I/O and wait for it: the synchronous path (SQLite VFS). Returns result. */
int64_t st_engine_do(st_engine *e, st_io *io);
/* Record each completed I/O's latency in meter m under the given types (read, write,
 * sync; -1 = don't record that kind). */
void st_engine_set_meter(st_engine *e, sim_meter *m, int read_type, int write_type, int sync_type);

/* Speed-ups where the engine has them (io_uring: fixed files and buffers); no-ops
 * returning 0 otherwise. A registered fd must stay open until it is unregistered or
 * the engine is closed (the ring holds its own reference: a reused fd number would
 * otherwise reach the old file). One buffer region per engine; I/Os whose buffers lie
 * inside it use it. Return 0 or -errno. */
int st_engine_register_file(st_engine *e, int fd);
int st_engine_unregister_file(st_engine *e, int fd);
int st_engine_register_buffer(st_engine *e, void *buf, size_t len);
/* An engine's ops by name, or NULL; and "io_uring|psync" for option choices. */
const st_engine_ops *st_find_engine(const char *name);
const char *st_engine_choices(void);
/* 0 when name (NULL = the default) is a registered engine, else SIM_EXIT_USAGE with a
 * message listing the choices: commands check it before creating anything. */
int st_engine_name_check(const char *name, char *err, size_t errlen);

/* The --ioengine entry of the shared vocabulary (sim/sim.h), into the const char *
 * `engine`, which holds "io_uring" before parsing; `deprecated` ("|"-separated or
 * NULL) lists a command's old spellings, still accepted with a note. */
#define ST_OPT_IOENGINE(engine, deprecated_)                                                       \
    {                                                                                              \
        .name = "ioengine", .kind = SIM_OPT_CHOICE, .dst = &(engine), .choices = "io_uring|psync", \
        .deprecated = (deprecated_), .help = "I/O engine (psync where the kernel has no io_uring)" \
    }
/* --target PATH into the const char * `dst`, for commands that take no other target
 * option; `what` is the help text. */
#define ST_OPT_TARGET(dst_, what)                                                                  \
    {                                                                                              \
        .name = "target", .kind = SIM_OPT_STRING, .dst = &(dst_), .metavar = "PATH", .help = what  \
    }
/* --buffered, into the bool `dst`. */
#define ST_OPT_BUFFERED(dst_)                                                                      \
    {                                                                                              \
        .name = "buffered", .kind = SIM_OPT_FLAG, .dst = &(dst_),                                  \
        .help = "go through the page cache instead of O_DIRECT (recorded in the result)"           \
    }

/* Option-table entries shared by every command that takes a target (see sim_opt):
 * --target, --allow-destroy, --buffered into the st_target_opts `o`, and --ioengine
 * into the const char * `engine` (default "io_uring", falling back to psync). */
#define ST_TARGET_OPTIONS(o, engine) ST_TARGET_OPTIONS_OLD(o, engine, NULL)
/* The same, with a command's old spellings of --ioengine (see ST_OPT_IOENGINE). */
#define ST_TARGET_OPTIONS_OLD(o, engine, old_engine_names)                                         \
    {.name = "target",                                                                             \
     .kind = SIM_OPT_STRING,                                                                       \
     .dst = &(o).path,                                                                             \
     .metavar = "PATH",                                                                            \
     .help = "directory on the drive to test (appsim creates its files inside), or a block "       \
             "device"},                                                                            \
        {.name = "allow-destroy",                                                                  \
         .kind = SIM_OPT_FLAG,                                                                     \
         .dst = &(o).allow_destroy,                                                                \
         .help = "allow overwriting a block device target (never a mounted one; not needed "       \
                 "for a blank device appsim marked before)"},                                      \
        ST_OPT_BUFFERED((o).buffered), ST_OPT_IOENGINE(engine, old_engine_names)

/*
 * A run guard (sim_run_add_guard) for directory targets: true, with the reason, when the
 * free space on the target's filesystem (for unprivileged users, statvfs f_bavail) is
 * below keep_free bytes. Workloads that grow their files as they run (TPC-C's orders
 * and history, sysbench's inserts, SQLite's WAL) stop before they fill the user's
 * filesystem. Never true for block devices (their size is fixed), when keep_free is 0,
 * or when statvfs fails.
 */
typedef struct st_space_guard {
    const st_target *t;
    uint64_t keep_free;
} st_space_guard;
bool st_space_guard_check(void *ctx, char *why, size_t whylen);

/* Aligned buffer allocation for O_DIRECT (4096-byte alignment at least). */
void *st_alloc_aligned(size_t len);
void st_free_aligned(void *p);

/* ------------------------------------------------------------------ SQLite databases */

/*
 * One database instance on the target: a file opened through appsim's direct-I/O VFS
 * with one buffer pool of buffer_bytes shared by all its connections (or SQLite's
 * default VFS when the target is buffered, and then the result says the page cache was
 * in play). WAL mode; the WAL index in process memory; checkpoints on a background
 * thread by the policy below.
 */
typedef struct st_db_opts {
    uint64_t buffer_bytes;         /* the database's memory (--buffer) */
    const char *sync;              /* "full" (default), "normal", "off" */
    uint64_t checkpoint_wal_bytes; /* background checkpoint when the WAL passes this */
    const char *checkpoint_mode;   /* "passive" (default), "full", "restart", "truncate" */
    int max_connections;           /* for the buffer's minimum size check */
    const char *engine;            /* I/O engine name for the VFS (NULL = default) */
    /* The WAL's bound: from half of it on, the checkpointer restarts the WAL from its
     * beginning (holding writers back while the readers of older snapshots finish);
     * from 7/8 of it writers wait until it has (docs/sqlite-vfs.md). 0 = the larger of
     * 64 MiB and four times checkpoint_wal_bytes; UINT64_MAX = no bound (SQLite's own
     * behaviour, for comparison). */
    uint64_t wal_limit_bytes;
} st_db_opts;

typedef struct st_db st_db;

/* Opens (create = true: creates and records in the manifest) database `name`. */
int st_db_open(st_target *t, const char *name, const st_db_opts *opts, bool create, st_db **out,
               char *err, size_t errlen);
/* For opening database `name` with SQLite's default VFS (bulk loads): checks that it
 * and its -journal, -wal and -shm files are no symlinks and are the files appsim
 * created (or absent), and returns its path through the target's resolved directory.
 * Open it with SQLITE_OPEN_NOFOLLOW. */
int st_db_library_path(st_target *t, const char *name, char *path, size_t len, char *err,
                       size_t errlen);
/* A new connection with the VFS and the pragmas applied (WAL, synchronous, a small
 * per-connection cache). Use from one thread at a time. Opened with extended result
 * codes (mask with 0xff to compare with SQLITE_BUSY); busy timeout 10 s; no automatic
 * checkpoints (the instance's background thread does them). Close every connection
 * before st_db_close. */
int st_db_connect(st_db *db, sqlite3 **conn, char *err, size_t errlen);
/*
 * Group commit. st_db_can_group_commit: the database is on appsim's VFS with sync
 * "full". A connection may then run with `PRAGMA synchronous=NORMAL` (its commits are
 * written to the WAL when the write lock is released, not synced) and call
 * st_db_commit_durable after each commit, outside any lock of its own: it returns when
 * everything the connection committed is on stable storage, and one WAL sync serves
 * every commit that arrived while the previous sync ran. A commit is reported to the
 * user only when durable; other connections may read it before (as with InnoDB).
 * 0, or -1 with err. st_db_group_commit_stats: commits made durable, WAL syncs.
 */
bool st_db_can_group_commit(const st_db *db);
int st_db_commit_durable(st_db *db, char *err, size_t errlen);
void st_db_group_commit_stats(st_db *db, uint64_t *commits, uint64_t *syncs);
/* Flush the WAL into the database file (after a bulk load, before a copy). */
int st_db_checkpoint(st_db *db, char *err, size_t errlen);
/* {"vfs", "buffered", "buffer_bytes", "page_size", "hits", "misses", "evictions",
 *  "sync", "checkpoint": {...}} */
json_t *st_db_json(const st_db *db);
void st_db_close(st_db *db);
/* Blocks the calling thread read through appsim's VFS (any database) since it
 * started: `reads` counts block reads asked of the buffer pool, `device_reads` the
 * pool misses that went to the device (a partial write of an absent block is one
 * too). A transaction's cost is the difference around it. */
typedef struct st_db_thread_reads {
    uint64_t db_reads, db_device_reads;   /* database file */
    uint64_t wal_reads, wal_device_reads; /* its WAL */
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
