/*
 * storage/sqlite/sqlite_internal.h: private contract between the buffer pool (bufpool.c), the
 * direct-I/O SQLite VFS (sqlite_vfs.c) and the database instance (sqlite_db.c).
 *
 * The pool caches fixed-size blocks ("units", the database page size, a multiple of
 * the target's logical block size) of the files of one database instance: the
 * database file and its WAL. A block is identified by (file id, block number).
 * Frame ownership, the invariants the pool keeps (bufpool.c asserts P1-P5 after every
 * change to a frame, frame_ok, and over the whole pool when it is freed, pool_ok):
 *   P1. at most one frame holds a given block: a frame is on its block's hash chain
 *       exactly while it is LOADING or VALID; an EMPTY frame is unpinned and clean;
 *   P2. a frame being loaded is visible (LOADING) and pinned by its loader, so that
 *       nobody loads the block twice and no write lands before the load completes and
 *       is then overwritten by it;
 *   P3. a pinned or dirty frame is never evicted: a pinned frame is being written to
 *       the device from its memory, a dirty frame holds bytes not yet on the device;
 *       only a VALID frame is dirty;
 *   P4. every pin is released by one bp_unpin (or by the loader), so no frame is
 *       pinned when the pool is freed;
 *   P5. each shard's dirty count is the number of its dirty frames;
 *   P6. frame memory is aligned for O_DIRECT, so a whole block goes to and from the
 *       device without a bounce copy.
 */
#ifndef APPSIM_STORAGE_SQLITE_INTERNAL_H
#define APPSIM_STORAGE_SQLITE_INTERNAL_H

#include "storage/sqlite/sqlite.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* ------------------------------------------------------------------ buffer pool */

typedef struct bp_pool bp_pool;

/* Reads block `blk` of the caller's file into buf (one unit, aligned). Returns the
 * number of bytes read (short or 0 past the end of the file) or -errno. */
typedef int64_t (*bp_load_fn)(void *ctx, uint64_t blk, void *buf);

typedef struct bp_stats {
    uint64_t hits;
    uint64_t misses;
    uint64_t evictions;    /* valid blocks replaced to make room */
    uint64_t write_allocs; /* blocks that entered the pool by a write (no device read) */
    uint64_t waits;        /* times a caller waited for a loading or pinned frame */
    uint64_t frames;
    uint64_t unit;
    uint64_t dirty; /* current number of dirty frames */
} bp_stats;

/* nframes >= 2; unit a power of two >= 512. NULL when memory cannot be allocated. */
bp_pool *bp_new(uint64_t nframes, uint32_t unit);
void bp_free(bp_pool *p);
uint32_t bp_unit(const bp_pool *p);
void bp_get_stats(bp_pool *p, bp_stats *out);

/* Copies len bytes at offset off of block blk of file into dst, loading the block on
 * a miss. *hit says whether it was in the pool. Returns 0 or -errno (load failed). */
int bp_read(bp_pool *p, uint32_t file, uint64_t blk, uint32_t off, void *dst, uint32_t len,
            bp_load_fn load, void *ctx, bool *hit);

/* Where a write lands: len bytes at offset off of block blk of file (off + len <= unit). */
typedef struct bp_span {
    uint32_t file;
    uint64_t blk;
    uint32_t off, len;
} bp_span;
/* Reads a block's old content: for a partial write of a block the device holds. */
typedef struct bp_loader {
    bp_load_fn load;
    void *ctx;
} bp_loader;
/* A frame returned pinned, and its memory (one unit). */
typedef struct bp_pinned {
    uint32_t frame;
    void *data;
} bp_pinned;

/*
 * Stores src at `at`. A block absent from the pool is loaded through `old` first when
 * the write covers only part of it and `old` is given (the device holds the block);
 * otherwise it starts zeroed. Write-back: the frame becomes dirty, for a flush to take
 * (bp_take_dirty), and nothing stays pinned. Write-through: the frame is returned pinned
 * in *out, for the caller to write out->data to the device and then bp_unpin.
 * Both return 0 or -errno (the load failed).
 */
int bp_write_back(bp_pool *p, bp_span at, const void *src, const bp_loader *old);
int bp_write_through(bp_pool *p, bp_span at, const void *src, const bp_loader *old, bp_pinned *out);
void bp_unpin(bp_pool *p, uint32_t frame);

/* If block blk of file is dirty: copies it to dst, clears dirty, pins the frame
 * (returned in *frame) and returns true. The caller writes dst and then bp_unpin. */
bool bp_take_dirty(bp_pool *p, uint32_t file, uint64_t blk, void *dst, uint32_t *frame);

/* Blocks [from_blk, to_blk) of file, where cached, become the next victims (usage count
 * zero): they hold page versions no new reader asks for. Nothing is dropped; a reader
 * that still wants one (an older snapshot) finds it until the hand comes round. */
void bp_demote(bp_pool *p, uint32_t file, uint64_t from_blk, uint64_t to_blk);

/* Drops every block of file numbered >= from_blk (truncation, deletion). Waits for
 * pinned frames of those blocks. Dirty frames are dropped too. */
void bp_invalidate(bp_pool *p, uint32_t file, uint64_t from_blk);
/* The same for blocks [from_blk, to_blk) only. */
void bp_invalidate_range(bp_pool *p, uint32_t file, uint64_t from_blk, uint64_t to_blk);

/* ------------------------------------------------------------------ VFS */

enum { VF_MAIN, VF_WAL, VF_JOURNAL, VF_NFILES };

/* Per-file-kind counters kept by the VFS (relaxed atomics). */
typedef struct vf_counters {
    uint64_t hits, misses; /* pool lookups by blocks */
    uint64_t dev_reads, dev_read_bytes;
    uint64_t dev_writes, dev_write_bytes;
    uint64_t syncs;
    uint64_t sync_ns; /* total time in fdatasync */
    uint64_t io_ns;   /* reads and writes: the sum of their times in flight */
    uint64_t read_ns; /* the reads' share of io_ns */
} vf_counters;

typedef struct vf_shared vf_shared;
/* An engine opened by thread `tid` for an instance (io_uring rings are single-issuer). */
typedef struct vf_engine {
    pid_t tid;
    st_engine *e;
} vf_engine;
typedef struct vf_shm vf_shm;
typedef struct vf_instance vf_instance;

/* SQLite's file formats store integers big-endian (database header, b-tree cells, WAL
 * headers). */
static inline uint32_t st_get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The WAL's newest frame of each page (wal_versions.c): open addressing, pgno 0 = empty. */
typedef struct vf_wal_versions {
    pthread_mutex_t mu;
    uint32_t page_size; /* from the WAL header; 0 until one was written */
    uint32_t cap, n;
    uint64_t end; /* the end of the generation's furthest frame */
    uint32_t *pgno;
    uint64_t *off;
} vf_wal_versions;

/*
 * One VFS instance per database: its own sqlite3_vfs (registered under a unique name)
 * whose pAppData is this, so that every connection of the database shares the pool,
 * the files and the in-memory WAL index.
 */
struct vf_instance {
    sqlite3_vfs vfs;
    uint64_t id; /* unique for the life of the process */
    char vfs_name[48];
    st_target *target;
    char *main_path; /* full path SQLite uses for the database file */
    char *main_name; /* name inside the target */
    const char *engine;
    bp_pool *pool;
    uint32_t unit;
    uint64_t wal_flush_bytes; /* flush pending WAL bytes when this many are buffered */
    bool flush_at_commit;     /* write the WAL when the writer unlocks (sync != off) */
    uint32_t db_batch_cap;    /* dirty database blocks a flush gathers at most */
    /* The database file's writes in flight at most: VF_DB_DEPTH_MIN unless the
     * checkpointer asks for more (vf_set_db_depth). */
    atomic_uint db_depth;
    uint64_t wal_keep_bytes; /* a WAL truncation keeps this much of the file (restarts) */
    /* Set while the WAL is at its bound: the WAL write lock is refused (SQLITE_BUSY, the
     * writer's busy handler waits) to every connection but the checkpointer's. */
    atomic_bool hold_writers;
    /* When the checkpointer last got the WAL write lock: writers are held back from
     * then to the end of its checkpoint (the restart's account, sqlite_db.c). */
    _Atomic uint64_t ck_write_lock_ns;
    vf_shared *files[VF_NFILES];
    vf_shm *shm;
    vf_counters ctr[VF_NFILES];
    pthread_mutex_t engines_mu; /* the engines threads opened for this instance */
    vf_engine *engines;
    size_t nengines;
    /* group commit (vf_wal_durable): tickets taken, tickets covered by a finished
     * WAL sync, tickets of the last failed cycle and its code, whether a cycle is under
     * way, the syncs done; the WAL flusher thread (started on first use) */
    pthread_mutex_t gc_mu;
    pthread_cond_t gc_cv, gc_flusher_cv;
    uint64_t gc_tickets, gc_synced, gc_failed, gc_syncs;
    int gc_rc;
    bool gc_busy, gc_thread_on, gc_stop;
    pthread_t gc_thread;
    /* a waiting commit is writing the WAL ahead of the next cycle; the writes made so,
     * and their blocks */
    atomic_bool gc_ahead_claimed;
    _Atomic uint64_t gc_writes_ahead, gc_blocks_ahead;
    vf_wal_versions wal_versions;
};

/* A write to the WAL (pool file wal_file) at off: a frame header makes the versions of
 * its page that it supersedes (the previous frame, the blocks in pool file db_file, or
 * UINT32_MAX for none) the pool's next victims; the WAL header starts over.
 * vf_wal_versions_free: at the instance's end. */
void vf_wal_versions_note(vf_instance *vi, uint32_t wal_file, uint32_t db_file, const void *buf,
                          int amt, uint64_t off);
void vf_wal_versions_free(vf_instance *vi);

/* An absolute path for name (relative to the working directory); SIM_OK or SIM_ERR (too long). */
int vf_abs_path(const char *name, char *out, size_t n);
/* Builds and registers the VFS for database file `name` of target t. */
int vf_instance_new(st_target *t, const char *name, uint64_t buffer_bytes, uint32_t unit,
                    const char *engine, vf_instance **out, char *err, size_t errlen);
/* sqlite3_file_control op on the checkpoint connection's database file: its WAL write
 * lock is never refused by hold_writers (it is the connection that ends the hold). */
#define VF_FCNTL_CHECKPOINTER 0x61707301
/* A group-commit connection: see vf_file.defer_wal_flush. */
#define VF_FCNTL_GROUP_COMMIT 0x61707302
/* Adaptive flushing: the checkpointer's database writes in flight. It sets the depth
 * before each checkpoint from how far it is behind the WAL (sqlite_db.c); a deeper
 * queue copies faster but makes every other read of the drive wait longer, so the
 * steady state stays at the minimum. Clamped to [VF_DB_DEPTH_MIN, VF_DB_DEPTH_MAX]. */
#define VF_DB_DEPTH_MIN 32u
#define VF_DB_DEPTH_MAX 128u
void vf_set_db_depth(vf_instance *vi, unsigned depth);
/* The depth for a checkpoint (sqlite_db.c): VF_DB_DEPTH_MAX when it holds writers back
 * (a restart and the passive catch-up just before it, a manual checkpoint, the modes
 * other than passive); else VF_DB_DEPTH_MIN while its backlog of frames not yet copied
 * is at most VF_CK_EASY_TRIGGERS checkpoint triggers of `trigger` frames, deeper in
 * proportion beyond that (twice the backlog, twice the depth), up to the maximum. */
#define VF_CK_EASY_TRIGGERS 2
unsigned vf_ck_write_depth(bool holds_writers, uint64_t backlog, uint64_t trigger);
/* The backlog (WAL bytes no checkpoint copied) that makes a passive checkpoint due when
 * the WAL holds wal_bytes and restarts at restart_bytes (0 = no bound): `trigger`, but
 * no more than a quarter of the room left before the restart, and never under SQLite's
 * default (ST_DB_DEFAULT_CHECKPOINT_WAL_BYTES; a trigger at or under it is kept). A large
 * trigger lets a checkpoint write a page once for many commits early in each generation
 * of the WAL, and the restart still finds little to copy while it holds writers (a fixed
 * large trigger leaves up to a whole trigger of frames for the restart to copy with
 * writers held; docs/tpcc.md, "The WAL and its checkpoints"). */
uint64_t vf_ck_due_bytes(uint64_t trigger, uint64_t restart_bytes, uint64_t wal_bytes);
/* Releases of WAL-index locks so far; and a wait (at most timeout_ns) until the count
 * passes seq: a busy handler's wait for the lock holder, woken when it lets go. */
uint64_t vf_shm_release_seq(vf_instance *vi);
void vf_shm_wait_release(vf_instance *vi, uint64_t seq, uint64_t timeout_ns);
/* When the checkpointer got the WAL write lock (vf_instance.ck_write_lock_ns): cleared
 * before a checkpoint, read during or after it (0: not yet). */
void vf_ck_write_lock_clear(vf_instance *vi);
uint64_t vf_ck_write_lock_ns(vf_instance *vi);
/* Unregisters and frees; every connection must be closed. */
void vf_instance_free(vf_instance *vi);
void vf_counters_get(vf_instance *vi, int kind, vf_counters *out);
/* Makes every WAL byte written before the call durable: one fdatasync of the WAL serves
 * all the callers that arrived before it started (group commit). SQLITE_OK or an
 * SQLite I/O error code. */
int vf_wal_durable(vf_instance *vi);

/* ------------------------------------------------------------------ fail-stop VFS */

/* Registers (once, not as the default) the VFS that wraps SQLite's default one with the
 * fail-stop rule (sqlite_failstop.c); SQLITE_OK or SQLite's error. */
int vf_failstop_register(void);
const char *vf_failstop_name(void);

#endif
