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
 *     before creating each file; cleanup removes exactly those that still hold the file
 *     appsim created (inode and birth time as recorded), and leaves, naming them, any
 *     other file put in their place;
 *   - a block device target is opened for writing only with allow_destroy, or when it
 *     carries appsim's mark (left the first time appsim wrote it; capacity ends before
 *     it) and libblkid finds no filesystem or partition table on it; never while it or
 *     one of its partitions is mounted or held, or one of its partitions holds a
 *     filesystem signature (flag or not), whether the kernel registered the partition or
 *     only libblkid reads it in the device's table;
 *   - no output of a command (--json, exports, reports) may be one of the target's own
 *     files (storage/output_guard.c);
 *   - no file of a directory target is opened through a symlink, and a listed name
 *     that no longer holds the file appsim created (inode in the manifest) is refused;
 *   - one appsim per target: a second one is refused at once, naming the holder;
 *   - space is checked before anything is filled.
 * Return codes (sim/sim.h): functions that can fail take (char *err, size_t errlen) and
 * return an exit status: SIM_EXIT_OK, SIM_EXIT_USAGE for a target the user must change,
 * SIM_EXIT_FAIL for an I/O failure, with a message in err that says what to do. Where
 * a function says "0 or -errno" (the I/O engines, the manifest) it passes the kernel's
 * error number up for the caller to word: strerror(-rc) names it.
 */
#ifndef APPSIM_STORAGE_H
#define APPSIM_STORAGE_H

#include "sim/sim.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ targets */

typedef struct st_target st_target;

typedef struct st_target_opts {
    const char *path;   /* directory on the drive's filesystem, or a block device */
    bool allow_destroy; /* a block device may be written */
    bool buffered;      /* no O_DIRECT: the page cache is in play (recorded) */
    /* The one rule for a missing directory: opening it to write creates it (not its
     * parents, so that a mistyped path fails at its parent), and closing removes it again
     * if it is still empty. A command that only reads or removes what is there (info,
     * check, cleanup) sets existing_only (read_only implies it) and is refused instead. */
    bool existing_only;
    bool read_only; /* only reading will be done (info, check) */
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
/* The names a workload creates in a directory target, as an fnmatch pattern
 * ("tpcc-*.db"), registered from a constructor (ST_REGISTER_TARGET_FILES) where the
 * names are made: no output path of a command (sim_output_check) may take one of them
 * inside its target, nor a name the manifest lists, nor the manifest or lock, nor a
 * library's companion of any of these (-wal, -journal, -shm, -lock), whether the file
 * exists yet or not. */
void st_register_target_file_names(const char *pattern);
#define ST_REGISTER_TARGET_FILES(var, pattern)                                                     \
    __attribute__((constructor)) static void st_register_files_##var(void)                         \
    {                                                                                              \
        st_register_target_file_names(pattern);                                                    \
    }
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

/* ------------------------------------------------------------------ sysfs */

/* Reads the sysfs attribute at path into buf, trailing newline and spaces stripped.
 * SIM_OK, or SIM_ERR (buf empty) when it is absent or unreadable. */
int st_sysfs_read(const char *path, char *buf, size_t len);
/* Where block device dev lies on its disk, from /sys/dev/block: a partition's whole disk
 * and its first sector and length (512-byte sectors); a whole disk is its own disk,
 * with start 0 and sectors 0. SIM_OK, or SIM_ERR with the attribute it could not read
 * in err. */
int st_sysfs_partition(dev_t dev, dev_t *disk, uint64_t *start, uint64_t *sectors, char *err,
                       size_t errlen);

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
 * op, and per transaction when units > 0; the share of the bytes that were not
 * appsim's own, with a warning when it is large). ctx is the target. */
extern const sim_probe_ops st_device_io_probe;

/* Bytes this process (all its threads) made the block layer read and write, from
 * /proc/self/io; cumulative since the process started. */
typedef struct st_own_io {
    uint64_t read_bytes, write_bytes, cancelled_write_bytes;
} st_own_io;
/* SIM_OK, or SIM_ERR when a field is missing (the kernel does no per-task I/O accounting). */
int st_own_io_parse(const char *text, st_own_io *out);
int st_own_io_read(st_own_io *out);

/* A disk's traffic over a window against appsim's own over the same window: the bytes
 * beyond appsim's, per direction, are another process's (or the filesystem's journal
 * and metadata). warn: more than ST_FOREIGN_IO_WARN_SHARE of the disk's bytes, and at
 * least ST_FOREIGN_IO_WARN_MIN_BYTES (a short run's few journal blocks are not worth
 * a warning), so the per-transaction device figures are not this run's alone. */
#define ST_FOREIGN_IO_WARN_SHARE 0.05
#define ST_FOREIGN_IO_WARN_MIN_BYTES (4ull << 20)
typedef struct st_foreign_io {
    uint64_t own_read_bytes, own_write_bytes; /* appsim's, over the window */
    uint64_t read_bytes, write_bytes;         /* the disk's beyond appsim's */
    double share;                             /* foreign / all bytes of the disk; 0 when idle */
    bool warn;
} st_foreign_io;
st_foreign_io st_foreign_io_judge(uint64_t disk_read_bytes, uint64_t disk_write_bytes,
                                  const st_own_io *own_from, const st_own_io *own_to);
/* The same from the own bytes over the window (e.g. summed over the ranks of a job that
 * share the disk: each rank's own I/O is the others' foreign I/O otherwise). */
st_foreign_io st_foreign_io_of(uint64_t disk_read_bytes, uint64_t disk_write_bytes,
                               uint64_t own_read_bytes, uint64_t own_write_bytes);
/* device_io's ranks_adjust (docs/mpi.md): ranks on one host whose sections name the same
 * disk count each other's own bytes as their own, not as foreign. sections[i] is rank
 * i's device_io (or NULL), hosts[i] its host. */
void st_device_io_ranks_adjust(json_t *const *sections, const char *const *hosts, size_t n);

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
    /* Optional: like reap with min_wait 1, but gives up at deadline_ns (sim_now_ns
     * clock) and then returns what it has, possibly 0. */
    int (*reap_until)(st_engine *e, st_io **done, unsigned max, uint64_t deadline_ns);
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
void st_engine_close(st_engine *e); /* waits for I/Os still in flight first */
const char *st_engine_name(const st_engine *e);
unsigned st_engine_queue_depth(const st_engine *e);
unsigned st_engine_inflight(const st_engine *e);
/* Queues up to n I/Os (never more than the free slots); returns how many were taken,
 * or -errno. Fail-stop: once a storage fault is noted (sim_fault_noted) no write or
 * discard is taken: the I/Os before the first one are, and when it is the first the
 * call returns the fault's -errno (so does st_engine_do for a write); reads and syncs
 * still go. */
int st_engine_submit(st_engine *e, st_io *const *ios, unsigned n);
/* Waits for at least min_wait completions (0 = poll); returns how many were put in
 * done[0..max), or -errno. A completion with a fatal -errno (sim_fault_errno_is_fatal)
 * or a short write (result below len, noted as EIO) notes the storage fault; the
 * I/O's result still holds what the system returned. A short read is the caller's to
 * judge (the tail of a file without whole blocks). */
int st_engine_reap(st_engine *e, st_io **done, unsigned max, unsigned min_wait);
/* Submit and reap in one step (one system call under io_uring): queues up to n I/Os
 * like st_engine_submit (*submitted says how many), then reaps like st_engine_reap.
 * The loop of a queue-depth-bound generator. Returns the number reaped or -errno. */
int st_engine_submit_reap(st_engine *e, st_io *const *ios, unsigned n, unsigned *submitted,
                          st_io **done, unsigned max, unsigned min_wait);
/* Waits until at least one I/O completes or deadline_ns (sim_now_ns clock) passes,
 * whichever is first, without spinning: an open-loop generator's wait for its next
 * arrival that still stamps completions as they come. Returns the number put in
 * done[0..max) (0 at the deadline) or -errno; with nothing in flight it sleeps until
 * the deadline. */
int st_engine_reap_until(st_engine *e, st_io **done, unsigned max, uint64_t deadline_ns);
/* Whether the kernel starts I/O on fd without blocking the caller (it accepts
 * RWF_NOWAIT). Where it does not (zram, bio-based devices without NOWAIT support, some
 * network file systems), io_uring hands every I/O on fd to an io_uring worker thread of
 * the submitting process. Probed with one read of block_size bytes at offset 0 (an empty
 * or write-only file reads nothing and says yes). */
bool st_fd_nowait(int fd, uint32_t block_size);
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
/* --buffered, into the bool `dst` (fio's --direct=0 and --direct=1 accepted). */
#define ST_OPT_BUFFERED(dst_)                                                                      \
    {                                                                                              \
        .name = "buffered", .kind = SIM_OPT_FLAG, .dst = &(dst_), .aliases = "fio:direct=0",       \
        .help = "go through the page cache instead of O_DIRECT (recorded in the result)"           \
    }

/* Option-table entries shared by every command that takes a target (see sim_opt):
 * --target, --allow-destroy, --buffered into the st_target_opts `o`, and --ioengine
 * into the const char * `engine` (default "io_uring", falling back to psync). */
#define ST_TARGET_OPTIONS(o, engine) ST_TARGET_OPTIONS_OLD(o, engine, NULL)
/* The same, with a command's old spellings of --ioengine (see ST_OPT_IOENGINE). */
#define ST_TARGET_OPTIONS_OLD(o, engine, old_engine_names)                                         \
    SIM_VOCAB_TARGET(&(o).path, "PATH",                                                            \
                     "directory on the drive to test (created if missing; appsim creates its "     \
                     "files inside), or a block device"),                                          \
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

/* Aligned buffer allocation for O_DIRECT (4096-byte alignment at least). NULL when
 * out of memory: unlike sim_xmalloc (sim/sim.h, "memory"), since the size often comes
 * from options (block size, queue depth), and the caller says which to lower. */
void *st_alloc_aligned(size_t len);
void st_free_aligned(void *p);

#ifdef __cplusplus
}
#endif
#endif
