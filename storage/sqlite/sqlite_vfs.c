/*
 * storage/sqlite/sqlite_vfs.c: appsim's SQLite VFS. The database file, its WAL and its
 * rollback journal live on the target, opened O_DIRECT, and every byte SQLite reads
 * or writes in them goes through the instance's buffer pool (sqlite_internal.h) and
 * the storage engine. Temporary files SQLite may want (sorts, temp tables) are handed
 * to the default VFS; connections run with temp_store=MEMORY so that does not happen
 * in practice.
 *
 * Write policies, and why:
 *   - WAL: write-back into pool frames marked dirty, flushed as contiguous runs of
 *     whole blocks at xSync (every commit under synchronous=FULL), when the writer
 *     releases the WAL write lock unless sync is off (so a process kill never loses a
 *     transaction SQLite reported committed under full or normal), before database
 *     blocks go to the device (the write-ahead rule: the database file never gets pages
 *     the WAL on the device does not have; asserted where flush_db relies on it, see
 *     wal_written_covers), and when too much is buffered. With sync=off commits are
 *     acknowledged from memory, as a database with its log flush at commit turned
 *     off does. SQLite writes each frame as a 24-byte header and a page at unaligned
 *     offsets; buffering turns that into one aligned write per commit, and the
 *     partially filled last block stays in the pool for the next commit (the "aligned
 *     tail buffer").
 *   - database file: write-back too (only checkpoints write it in WAL mode, on a
 *     background thread, like a database's page flusher). Dirty blocks go out as one
 *     batch of concurrent writes when the batch is full, at SQLITE_FCNTL_CKPT_DONE
 *     (before SQLite publishes how far the checkpoint got, so a reader never skips a WAL
 *     frame whose page is not on the device), at xSync, truncate and close.
 *   - rollback journal (only before WAL mode is set): write-through.
 * Nothing goes through the page cache: the files are O_DIRECT, and file sizes on the
 * device are rounded up to whole blocks while SQLite sees the logical size kept here.
 *
 * Locks: the database-file locks (xLock) and the WAL-index locks (xShmLock) are kept
 * in process memory with the same semantics POSIX advisory locks give different
 * processes in os_unix.c: appsim is the only process using these files, and several
 * connections inside it must exclude each other exactly as separate processes would.
 * The WAL index (-shm) is process memory shared by the connections of the instance,
 * freed when the last one unmaps it (as a new first opener truncates the -shm file in
 * os_unix.c, the next one rebuilds it from the WAL).
 *
 * WAL bound (sqlite_db.c): while the instance's hold_writers is set, the WAL write lock
 * is refused to every connection but the checkpointer's, so writers wait in their
 * busy handlers (holding no read snapshot: SQLite lets go of it before calling the
 * handler) until the checkpointer has restarted the WAL; releases of WAL-index locks
 * wake the checkpointer's busy handler (vf_shm_wait_release). A truncation of the WAL
 * (the restart) keeps its blocks, see vf_truncate.
 */
#include "storage/sqlite/sqlite_internal.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SHM_NLOCK 8
/* Database-file write-back: a flush starts once DB_BATCH_PER_DEPTH times the write
 * depth (vi->db_depth) of blocks are dirty, so that a flush keeps the depth's writes
 * in flight for a few rounds before it drains; the list holds twice the largest batch
 * so one more xWrite fits. */
#define DB_BATCH_PER_DEPTH 4
#define DB_BATCH_MAX (DB_BATCH_PER_DEPTH * VF_DB_DEPTH_MAX)
#define DB_DIRTY_CAP (2 * DB_BATCH_MAX)
/* Each thread's engine holds the deepest flush. */
#define ENGINE_QD VF_DB_DEPTH_MAX

struct vf_shared {
    vf_instance *vi;
    int kind;
    uint32_t file_id;
    char *name;         /* inside the target */
    char *path;         /* as SQLite names it */
    pthread_mutex_t mu; /* everything below */
    int fd;
    int refs;
    /* logical size SQLite sees: changed under mu, read without it (file_size) */
    uint64_t size;
    bool persist_wal;
    /* WAL write-back: byte range holding dirty blocks not yet written. */
    bool pending;
    uint64_t pend_lo, pend_hi;
    /* The write-ahead rule's bookkeeping (see wal_written_covers). WAL: xWrites buffered
     * so far (written under mu, read without it), and how many of the first of them are
     * on the device (or were discarded with the file). Database file: the WAL's
     * buffered count when a block now on the dirty list was last written. */
    uint64_t wal_buffered, wal_written;
    uint64_t wal_needed;
    /* database-file locks, as in os_unix.c's inode info */
    int nshared;
    void *reserved_by, *pending_by, *exclusive_by;
    /* database-file write-back: blocks written since the last flush (may repeat) */
    uint64_t *dirty_blks;
    uint32_t ndirty;
    /* serializes flushes; the bounce buffer gathers a run of dirty blocks, and the
     * database file's flush keeps its I/Os in flush_io */
    pthread_mutex_t flush_mu;
    uint8_t *bounce;
    size_t bounce_len;
    struct db_flush_io *flush_io;
};

/* The database file's flush (flush_db): the blocks it took from the dirty list, and
 * one batch of their writes. Too large for a thread's stack inside SQLite's calls. */
typedef struct db_flush_io {
    uint64_t blks[DB_DIRTY_CAP];
    st_io ios[DB_BATCH_MAX];
    st_io *ptrs[DB_BATCH_MAX], *done[DB_BATCH_MAX];
    uint32_t frames[DB_BATCH_MAX];
    uint64_t sent_ns[DB_BATCH_MAX];
} db_flush_io;

struct vf_shm {
    pthread_mutex_t mu;
    /* A lock was released: release_seq counts releases, so that a busy handler can wait
     * for the next one instead of sleeping a fixed time (vf_shm_wait_release). */
    pthread_cond_t released;
    uint64_t release_seq;
    int waiters;
    int refs;
    int nregions;
    void **regions;
    int nshared[SHM_NLOCK];
    void *excl[SHM_NLOCK];
};

typedef struct vf_file {
    sqlite3_file base;
    vf_shared *sf;
    int lock;
    bool checkpointer; /* VF_FCNTL_CHECKPOINTER: never held back at the WAL's bound */
    /* VF_FCNTL_GROUP_COMMIT: this connection's commits are written by the group-commit
     * leader (vf_wal_durable) instead of when it releases the WAL write lock, so the
     * write is not made under the workload's writer lock. */
    bool defer_wal_flush;
    bool shm_mapped;
    uint16_t shm_shared_mask, shm_excl_mask;
} vf_file;

static const sqlite3_io_methods vf_methods;

static sqlite3_vfs *default_vfs(void)
{
    return sqlite3_vfs_find(NULL);
}

static inline void ctr_add(uint64_t *c, uint64_t v)
{
    __atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

void vf_counters_get(vf_instance *vi, int kind, vf_counters *out)
{
    const uint64_t *src = (const uint64_t *)&vi->ctr[kind];
    uint64_t *dst = (uint64_t *)out;
    for (size_t i = 0; i < sizeof *out / sizeof(uint64_t); i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ engines */

/*
 * An io_uring ring belongs to the thread that submits on it, and a SQLite connection
 * may be used from different threads over its life (the checkpoint connection is opened
 * on one thread and used on another). So engines are per (thread, instance): each
 * thread caches the engines it uses, and the instance owns them all and closes them
 * when it is freed (a thread that ended earlier leaves its engine there till then).
 */
#define TL_ENGINES 8

typedef struct tl_engine {
    uint64_t instance_id;
    st_engine *e;
} tl_engine;

static __thread tl_engine tl_cache[TL_ENGINES];
static __thread unsigned tl_next;

static st_engine *thread_engine(vf_instance *vi)
{
    for (int i = 0; i < TL_ENGINES; i++)
        if (tl_cache[i].e && tl_cache[i].instance_id == vi->id) return tl_cache[i].e;
    /* Not cached (first use, or pushed out by other instances): the instance's registry
     * may still hold this thread's engine; never open a second one for the thread. */
    pid_t tid = gettid();
    st_engine *e = NULL;
    pthread_mutex_lock(&vi->engines_mu);
    for (size_t i = 0; i < vi->nengines && !e; i++)
        if (vi->engines[i].tid == tid) e = vi->engines[i].e;
    if (!e) {
        char err[512];
        e = st_engine_open(vi->engine, ENGINE_QD, err, sizeof err);
        if (e) {
            vi->engines = sim_xrealloc(vi->engines, sizeof(vf_engine) * (vi->nengines + 1));
            vi->engines[vi->nengines++] = (vf_engine){tid, e};
        } else {
            sqlite3_log(SQLITE_IOERR, "appsim VFS: %s", err);
        }
    }
    pthread_mutex_unlock(&vi->engines_mu);
    if (!e) return NULL;
    tl_cache[tl_next] = (tl_engine){vi->id, e};
    tl_next = (tl_next + 1) % TL_ENGINES;
    return e;
}

/* ------------------------------------------------------------------ per-thread reads */

/* Per thread, so that a transaction's reads can be told from its neighbours'. */
static __thread uint64_t tl_reads[VF_NFILES], tl_dev_reads[VF_NFILES];
/* Time this thread spent in device reads, so that a workload can say how much of a
 * transaction was waiting for the drive (sysbench's wait breakdown). */
static __thread uint64_t tl_dev_read_ns; /* both files */

void st_db_thread_reads_get(st_db_thread_reads *out)
{
    out->db_reads = tl_reads[VF_MAIN];
    out->db_device_reads = tl_dev_reads[VF_MAIN];
    out->wal_reads = tl_reads[VF_WAL];
    out->wal_device_reads = tl_dev_reads[VF_WAL];
    out->device_read_ns = tl_dev_read_ns;
}

/* ------------------------------------------------------------------ device I/O */

/* SQLite's code for a failed write: SQLITE_FULL for a full drive or quota (SQLite then
 * says "database or disk is full"), SQLITE_IOERR_WRITE for the rest. */
static int write_rc(int64_t result)
{
    return result == -ENOSPC || result == -EDQUOT ? SQLITE_FULL : SQLITE_IOERR_WRITE;
}

/* A write of len bytes at off that did not complete (result: its byte count or
 * -errno): a storage fault whatever the reason. The engine has noted a short write or a
 * fatal errno already (storage/engine.c); an error it does not count as one is noted
 * here. The blocks it carried are no longer dirty in the pool, so going on would leave
 * a hole in the file under later writes; with the WAL, a group commit whose cycle found
 * its blocks taken by this write would then be acknowledged without them. */
static int write_failed(const vf_shared *sf, int64_t result, uint64_t off, uint64_t len)
{
    if (result < 0 && !sim_fault_errno_is_fatal((int)-result))
        sim_fault_note(EIO, "writing %s at offset %llu (%llu bytes): %s", sf->path,
                       (unsigned long long)off, (unsigned long long)len, strerror((int)-result));
    return write_rc(result);
}

/* Fail-stop (sim/fault.c): once a storage fault is noted nothing more is written,
 * truncated or deleted, so the files on the device stay as the last good write left
 * them. SQLite rolls the failed transaction back in memory, and the next open
 * recovers the database from its WAL (a checkpoint whose page writes failed is
 * redone then, because the WAL was neither reset nor removed). 0 while writes go on. */
static int refuse_after_fault(void)
{
    int err = sim_fault_noted();
    return err ? write_rc(-err) : SQLITE_OK;
}

typedef struct load_ctx {
    vf_file *f;
} load_ctx;

/* The time an I/O is in flight (sim_now_ns around it), added up over I/Os: divided by
 * the wall time it is the number of this database's I/Os in flight on average, its own
 * queue depth, which the disk's counters cannot give on a disk shared with other
 * processes. */
static int64_t dev_io(vf_file *f, int op, void *buf, uint64_t off, uint32_t len)
{
    st_engine *e = thread_engine(f->sf->vi);
    if (!e) return -ENOMEM;
    st_io io = {0};
    io.op = (uint8_t)op;
    io.fd = f->sf->fd;
    io.buf = buf;
    io.offset = off;
    io.len = len;
    uint64_t t0 = sim_now_ns();
    int64_t n = st_engine_do(e, &io);
    uint64_t dt = sim_now_ns() - t0;
    ctr_add(&f->sf->vi->ctr[f->sf->kind].io_ns, dt);
    if (op == ST_OP_READ) {
        ctr_add(&f->sf->vi->ctr[f->sf->kind].read_ns, dt);
        tl_dev_read_ns += dt;
    }
    return n;
}

static int64_t load_block(void *ctx, uint64_t blk, void *buf)
{
    vf_file *f = ((load_ctx *)ctx)->f;
    uint32_t unit = f->sf->vi->unit;
    int64_t n = dev_io(f, ST_OP_READ, buf, blk * unit, unit);
    /* every load is a miss, whether a read or a partial write needed the block */
    ctr_add(&f->sf->vi->ctr[f->sf->kind].misses, 1);
    tl_dev_reads[f->sf->kind]++;
    if (n >= 0) {
        vf_counters *c = &f->sf->vi->ctr[f->sf->kind];
        ctr_add(&c->dev_reads, 1);
        ctr_add(&c->dev_read_bytes, (uint64_t)n);
    }
    return n;
}

/* Writes the dirty blocks of the WAL in [lo, hi) as runs of contiguous blocks, adding
 * the blocks written to *written; the caller holds sf->flush_mu (flush_pending,
 * wal_write_ahead). */
static int flush_pending_held(vf_file *f, uint64_t *written)
{
    vf_shared *sf = f->sf;
    vf_instance *vi = sf->vi;
    uint32_t unit = vi->unit;
    /* checked once the flush before this one ended: if it failed, the blocks it took are
     * lost, and this one must not succeed with nothing left to write */
    int rc = refuse_after_fault();
    if (rc) return rc;
    pthread_mutex_lock(&sf->mu);
    bool pending = sf->pending;
    uint64_t lo = sf->pend_lo / unit, hi = (sf->pend_hi + unit - 1) / unit;
    uint64_t taken = sf->wal_buffered;
    sf->pending = false;
    /* every flush before this one ended without a fault (checked above): with nothing
     * pending, every buffered write is on the device */
    assert(pending || sf->wal_written == taken);
    pthread_mutex_unlock(&sf->mu);
    if (!pending) return SQLITE_OK;
    uint32_t cap = (uint32_t)(sf->bounce_len / unit);
    uint32_t frames[cap];
    uint32_t n = 0;
    uint64_t run_start = lo;
    for (uint64_t b = lo; b <= hi; b++) {
        bool took =
            b < hi && n < cap &&
            bp_take_dirty(vi->pool, sf->file_id, b, sf->bounce + (size_t)n * unit, &frames[n]);
        if (took) {
            if (n == 0) run_start = b;
            n++;
            if (n < cap) continue;
        }
        if (n > 0) {
            int64_t w = dev_io(f, ST_OP_WRITE, sf->bounce, run_start * unit, n * unit);
            for (uint32_t i = 0; i < n; i++)
                bp_unpin(vi->pool, frames[i]);
            if (w != (int64_t)n * unit) {
                rc = write_failed(sf, w, run_start * unit, (uint64_t)n * unit);
                if (sim_fault_noted()) break; /* nothing more after a storage fault */
            } else {
                ctr_add(&vi->ctr[sf->kind].dev_writes, 1);
                ctr_add(&vi->ctr[sf->kind].dev_write_bytes, (uint64_t)w);
                *written += n;
            }
            n = 0;
            /* a full bounce buffer ended the run, but b itself was taken: keep going */
            if (took) continue;
        }
    }
    if (rc == SQLITE_OK) {
        pthread_mutex_lock(&sf->mu);
        assert(sf->wal_written <= taken); /* flushes are serialized by flush_mu */
        sf->wal_written = taken;
        pthread_mutex_unlock(&sf->mu);
    }
    return rc;
}

static int flush_pending(vf_file *f)
{
    int rc = refuse_after_fault();
    if (rc) return rc;
    uint64_t written = 0;
    pthread_mutex_lock(&f->sf->flush_mu);
    rc = flush_pending_held(f, &written);
    pthread_mutex_unlock(&f->sf->flush_mu);
    return rc;
}

/* Flushes the WAL's buffered commits (called when the writer releases the WAL write
 * lock, from the handle of the database file), and waits for a flush in flight on
 * another thread until the WAL's first `need` buffered writes are on the device. */
static int flush_wal_upto(vf_file *dbf, uint64_t need)
{
    vf_shared *wal = dbf->sf->vi->files[VF_WAL];
    if (!wal) return SQLITE_OK;
    pthread_mutex_lock(&wal->mu);
    bool pending = (wal->pending || wal->wal_written < need) && wal->fd >= 0;
    pthread_mutex_unlock(&wal->mu);
    if (!pending) return SQLITE_OK;
    vf_file tmp = *dbf;
    tmp.sf = wal;
    return flush_pending(&tmp);
}

static int flush_wal_of(vf_file *dbf)
{
    return flush_wal_upto(dbf, 0);
}

/* The WAL's buffered writes so far (the database file's blocks note it, note_dirty). */
static uint64_t wal_buffered_now(const vf_instance *vi)
{
    const vf_shared *wal = vi->files[VF_WAL];
    return wal ? __atomic_load_n(&wal->wal_buffered, __ATOMIC_ACQUIRE) : 0;
}

/*
 * The write-ahead rule (the header's write policies): the database file never gets a
 * page the WAL on the device does not have. A checkpoint copies into the database file
 * pages SQLite read from WAL frames written before; so every database block a flush is
 * about to write was noted dirty (note_dirty) after the WAL writes it may depend on were
 * buffered, and the flush may write it once the WAL's first `need` writes (the count
 * when the last of its blocks was noted) are on the device. A closed or absent WAL has
 * nothing left to write. flush_db asserts this before its first write.
 */
static inline bool wal_written_covers(vf_instance *vi, uint64_t need)
{
    vf_shared *wal = vi->files[VF_WAL];
    if (!wal) return true;
    pthread_mutex_lock(&wal->mu);
    bool ok = wal->fd < 0 || wal->wal_written >= need;
    pthread_mutex_unlock(&wal->mu);
    return ok;
}

/* Blocks of the database file a flush gathers: DB_BATCH_PER_DEPTH times the write
 * depth, at most an eighth of the pool (dirty blocks stay pinned until written). */
static uint32_t db_batch_of(vf_instance *vi)
{
    uint32_t want = DB_BATCH_PER_DEPTH * atomic_load(&vi->db_depth);
    return want < vi->db_batch_cap ? want : vi->db_batch_cap;
}

void vf_set_db_depth(vf_instance *vi, unsigned depth)
{
    if (depth < VF_DB_DEPTH_MIN) depth = VF_DB_DEPTH_MIN;
    if (depth > VF_DB_DEPTH_MAX) depth = VF_DB_DEPTH_MAX;
    atomic_store(&vi->db_depth, depth);
}

/* Writes the database file's dirty blocks: the WAL first (write-ahead rule), then the
 * blocks in batches of concurrent writes through the engine, at most vi->db_depth in
 * flight. */
static int flush_db(vf_file *f)
{
    vf_shared *sf = f->sf;
    vf_instance *vi = sf->vi;
    uint32_t unit = vi->unit;
    int rc = refuse_after_fault();
    if (rc) return rc;
    pthread_mutex_lock(&sf->flush_mu);
    rc = flush_wal_of(f);
    db_flush_io *x = sf->flush_io;
    pthread_mutex_lock(&sf->mu);
    uint32_t n = sf->ndirty;
    memcpy(x->blks, sf->dirty_blks, sizeof(uint64_t) * n);
    sf->ndirty = 0;
    uint64_t need = sf->wal_needed;
    pthread_mutex_unlock(&sf->mu);
    /* a flush of the WAL in flight on another thread when flush_wal_of looked found
     * nothing pending: wait for it (and write what came in since) */
    if (rc == SQLITE_OK && n) rc = flush_wal_upto(f, need);
    assert(rc != SQLITE_OK || !n || wal_written_covers(vi, need));
    st_engine *e = n ? thread_engine(vi) : NULL;
    if (n && !e) rc = SQLITE_IOERR_WRITE;
    uint32_t depth = atomic_load(&vi->db_depth);
    uint32_t i = 0;
    while (rc == SQLITE_OK && i < n) {
        uint32_t k = 0;
        for (; i < n && k < vi->db_batch_cap; i++) {
            /* a block listed twice was taken the first time and is clean now */
            if (!bp_take_dirty(vi->pool, sf->file_id, x->blks[i], sf->bounce + (size_t)k * unit,
                               &x->frames[k]))
                continue;
            x->ios[k] = (st_io){.op = ST_OP_WRITE,
                                .fd = sf->fd,
                                .buf = sf->bounce + (size_t)k * unit,
                                .offset = x->blks[i] * unit,
                                .len = unit};
            x->ptrs[k] = &x->ios[k];
            k++;
        }
        uint32_t submitted = 0, completed = 0;
        /* after a failed write nothing more is sent (fail-stop, sim/fault.c); what is in
         * flight is still reaped before its frames are unpinned */
        while (completed < submitted || (rc == SQLITE_OK && submitted < k)) {
            uint32_t room = depth - (submitted - completed);
            if (rc == SQLITE_OK && submitted < k && room > 0) {
                uint64_t now = sim_now_ns();
                int r = st_engine_submit(e, x->ptrs + submitted,
                                         k - submitted < room ? k - submitted : room);
                if (r < 0) {
                    /* refused (a fault noted by another thread) or failed: what is in
                     * flight is still reaped below, before its frames are unpinned */
                    rc = write_rc(r);
                    continue;
                }
                for (int j = 0; j < r; j++)
                    x->sent_ns[submitted + (uint32_t)j] = now;
                submitted += (uint32_t)r;
            }
            int r = st_engine_reap(e, x->done, DB_BATCH_MAX, 1);
            if (r < 0) {
                /* The engine cannot say when the writes in flight end, and they still
                 * read the bounce buffer: a storage fault (fail-stop), so every later
                 * flush is refused before it would fill that buffer again. */
                sim_fault_note(EIO, "waiting for writes to %s (the I/O engine failed: %s)",
                               sf->path, strerror(-r));
                rc = SQLITE_IOERR_WRITE;
                break;
            }
            uint64_t now = sim_now_ns();
            for (int j = 0; j < r; j++) {
                ctr_add(&vi->ctr[sf->kind].io_ns, now - x->sent_ns[x->done[j] - x->ios]);
                if (x->done[j]->result != (int64_t)unit)
                    rc = write_failed(sf, x->done[j]->result, x->done[j]->offset, unit);
                else
                    ctr_add(&vi->ctr[sf->kind].dev_write_bytes, unit);
                ctr_add(&vi->ctr[sf->kind].dev_writes, 1);
            }
            completed += (uint32_t)r;
        }
        for (uint32_t j = 0; j < k; j++)
            bp_unpin(vi->pool, x->frames[j]);
    }
    pthread_mutex_unlock(&sf->flush_mu);
    return rc;
}

/* Records blocks [b0, b1] of the database file as dirty; flushes a full batch. */
static int note_dirty(vf_file *f, uint64_t b0, uint64_t b1)
{
    vf_shared *sf = f->sf;
    uint64_t wal_now = wal_buffered_now(sf->vi);
    for (uint64_t b = b0; b <= b1; b++) {
        pthread_mutex_lock(&sf->mu);
        if (wal_now > sf->wal_needed) sf->wal_needed = wal_now;
        while (sf->ndirty == DB_DIRTY_CAP) {
            pthread_mutex_unlock(&sf->mu);
            int rc = flush_db(f);
            if (rc) return rc;
            pthread_mutex_lock(&sf->mu);
        }
        sf->dirty_blks[sf->ndirty++] = b;
        pthread_mutex_unlock(&sf->mu);
    }
    pthread_mutex_lock(&sf->mu);
    bool full = sf->ndirty >= db_batch_of(sf->vi);
    pthread_mutex_unlock(&sf->mu);
    return full ? flush_db(f) : SQLITE_OK;
}

/* ------------------------------------------------------------------ io methods */

static int vf_close(sqlite3_file *pf)
{
    vf_file *f = (vf_file *)pf;
    vf_shared *sf = f->sf;
    int rc = SQLITE_OK;
    if (sf->kind == VF_WAL) rc = flush_pending(f);
    if (sf->kind == VF_MAIN) rc = flush_db(f);
    pthread_mutex_lock(&sf->mu);
    if (f->lock >= SQLITE_LOCK_SHARED) sf->nshared--;
    if (sf->reserved_by == f) sf->reserved_by = NULL;
    if (sf->pending_by == f) sf->pending_by = NULL;
    if (sf->exclusive_by == f) sf->exclusive_by = NULL;
    f->lock = SQLITE_LOCK_NONE;
    sf->refs--;
    pthread_mutex_unlock(&sf->mu);
    return rc;
}

/* The logical size, without sf->mu: every read and write asks for it, from every
 * connection, and a lock shared by all of them would be taken twice per page. */
static inline uint64_t file_size(vf_shared *sf)
{
    return __atomic_load_n(&sf->size, __ATOMIC_ACQUIRE);
}

static int vf_read(sqlite3_file *pf, void *buf, int amt, sqlite3_int64 ofst)
{
    vf_file *f = (vf_file *)pf;
    vf_shared *sf = f->sf;
    vf_instance *vi = sf->vi;
    uint32_t unit = vi->unit;
    uint64_t size = file_size(sf);
    uint64_t off = (uint64_t)ofst;
    uint64_t avail = off < size ? size - off : 0;
    if (avail > (uint64_t)amt) avail = (uint64_t)amt;
    load_ctx lc = {f};
    uint8_t *dst = buf;
    uint64_t done = 0;
    while (done < avail) {
        uint64_t pos = off + done;
        uint64_t blk = pos / unit;
        uint32_t in = (uint32_t)(pos % unit);
        uint32_t n = unit - in;
        if (n > avail - done) n = (uint32_t)(avail - done);
        bool hit;
        if (bp_read(vi->pool, sf->file_id, blk, in, dst + done, n, load_block, &lc, &hit))
            return SQLITE_IOERR_READ;
        if (hit) ctr_add(&vi->ctr[sf->kind].hits, 1);
        tl_reads[sf->kind]++;
        done += n;
    }
    if (avail < (uint64_t)amt) {
        memset(dst + avail, 0, (size_t)amt - avail);
        return SQLITE_IOERR_SHORT_READ;
    }
    return SQLITE_OK;
}

static int vf_write(sqlite3_file *pf, const void *buf, int amt, sqlite3_int64 ofst)
{
    vf_file *f = (vf_file *)pf;
    vf_shared *sf = f->sf;
    vf_instance *vi = sf->vi;
    uint32_t unit = vi->unit;
    bool wal = sf->kind == VF_WAL;
    int refused = refuse_after_fault();
    if (refused) return refused;
    uint64_t size = file_size(sf);
    uint64_t off = (uint64_t)ofst;
    const uint8_t *src = buf;
    load_ctx lc = {f};
    const bp_loader loader = {load_block, &lc};
    uint64_t done = 0;
    while (done < (uint64_t)amt) {
        uint64_t pos = off + done;
        uint64_t blk = pos / unit;
        uint32_t in = (uint32_t)(pos % unit);
        uint32_t n = unit - in;
        if (n > (uint64_t)amt - done) n = (uint32_t)((uint64_t)amt - done);
        bp_span at = {.file = sf->file_id, .blk = blk, .off = in, .len = n};
        const bp_loader *old = blk * unit < size ? &loader : NULL; /* the device holds it */
        if (sf->kind != VF_JOURNAL) {
            if (bp_write_back(vi->pool, at, src + done, old)) return SQLITE_IOERR_WRITE;
        } else {
            bp_pinned pin;
            if (bp_write_through(vi->pool, at, src + done, old, &pin)) return SQLITE_IOERR_WRITE;
            int64_t w = dev_io(f, ST_OP_WRITE, pin.data, blk * unit, unit);
            bp_unpin(vi->pool, pin.frame);
            if (w != unit) return write_failed(sf, w, blk * unit, unit);
            ctr_add(&vi->ctr[sf->kind].dev_writes, 1);
            ctr_add(&vi->ctr[sf->kind].dev_write_bytes, unit);
        }
        done += n;
    }
    if (wal) {
        const vf_shared *db = vi->files[VF_MAIN];
        vf_wal_versions_note(vi, sf->file_id, db ? db->file_id : UINT32_MAX, buf, amt, off);
    }
    bool flush = false;
    pthread_mutex_lock(&sf->mu);
    if (off + (uint64_t)amt > sf->size)
        __atomic_store_n(&sf->size, off + (uint64_t)amt, __ATOMIC_RELEASE);
    if (wal) {
        __atomic_store_n(&sf->wal_buffered, sf->wal_buffered + 1, __ATOMIC_RELEASE);
        if (!sf->pending) {
            sf->pending = true;
            sf->pend_lo = off;
            sf->pend_hi = off + (uint64_t)amt;
        } else {
            if (off < sf->pend_lo) sf->pend_lo = off;
            if (off + (uint64_t)amt > sf->pend_hi) sf->pend_hi = off + (uint64_t)amt;
        }
        flush = sf->pend_hi - sf->pend_lo >= vi->wal_flush_bytes;
    }
    pthread_mutex_unlock(&sf->mu);
    if (flush) return flush_pending(f);
    if (sf->kind == VF_MAIN && amt > 0)
        return note_dirty(f, off / unit, (off + (uint64_t)amt - 1) / unit);
    return SQLITE_OK;
}

static int vf_truncate(sqlite3_file *pf, sqlite3_int64 size)
{
    vf_file *f = (vf_file *)pf;
    vf_shared *sf = f->sf;
    uint32_t unit = sf->vi->unit;
    uint64_t sz = (uint64_t)size;
    int frc = refuse_after_fault();
    if (frc) return frc;
    frc = sf->kind == VF_WAL ? flush_pending(f) : sf->kind == VF_MAIN ? flush_db(f) : 0;
    if (frc) return frc;
    /* The pool holds only clean blocks of this file now, each as the device has it, and
     * reads stop at the logical size: only blocks the device loses must leave the pool
     * (were one read back after the file grows again, the device would give zeros). A
     * WAL restart keeps its blocks and a checkpoint's truncation of the database to its
     * own size changes nothing, so neither drops anything, and neither scans the pool (a
     * scan of a 6-GiB pool takes 20-30 ms, while a restart holds writers back). */
    struct stat st;
    if (fstat(sf->fd, &st)) {
        sim_fault_note(errno, "truncating %s", sf->path);
        return SQLITE_IOERR_TRUNCATE;
    }
    uint64_t have = (uint64_t)st.st_size;
    uint64_t dev = (sz + unit - 1) / unit * unit;
    if (sf->kind == VF_WAL) {
        /* A WAL restart (SQLite truncates the WAL at a TRUNCATE checkpoint) keeps the
         * file's blocks up to wal_keep_bytes, as SQLite's journal_size_limit does: the
         * next generation overwrites blocks the filesystem already has instead of
         * allocating them again (metadata commits at every fdatasync of a growing file).
         * Past the logical size SQLite sees, the old frames fail their salt check. */
        uint64_t keep = (sf->vi->wal_keep_bytes + unit - 1) / unit * unit;
        if (dev < keep) dev = keep < have ? keep : have;
    }
    if (dev != have && ftruncate(sf->fd, (off_t)dev)) {
        sim_fault_note(errno, "truncating %s", sf->path);
        return SQLITE_IOERR_TRUNCATE;
    }
    if (dev < have)
        bp_invalidate_range(sf->vi->pool, sf->file_id, dev / unit, (have + unit - 1) / unit);
    pthread_mutex_lock(&sf->mu);
    __atomic_store_n(&sf->size, sz, __ATOMIC_RELEASE);
    if (sf->pending && sf->pend_hi > sz) sf->pend_hi = sz > sf->pend_lo ? sz : sf->pend_lo;
    pthread_mutex_unlock(&sf->mu);
    return SQLITE_OK;
}

static int vf_sync(sqlite3_file *pf, int flags)
{
    vf_file *f = (vf_file *)pf;
    vf_shared *sf = f->sf;
    int frc = sf->kind == VF_WAL ? flush_pending(f) : sf->kind == VF_MAIN ? flush_db(f) : 0;
    if (frc) return frc;
    uint64_t t0 = sim_now_ns();
    int64_t r = dev_io(f, ST_OP_FDATASYNC, NULL, 0, 0);
    if (r < 0) return SQLITE_IOERR_FSYNC;
    vf_counters *c = &sf->vi->ctr[sf->kind];
    ctr_add(&c->syncs, 1);
    ctr_add(&c->sync_ns, sim_now_ns() - t0);
    return SQLITE_OK;
}

/* Group commit. A connection with synchronous=NORMAL leaves its commit's WAL frames in
 * the pool (dirty, readable by every connection) when it releases the WAL write lock;
 * the caller then comes here, after its own writer lock is released, and takes a
 * ticket. A cycle writes the WAL's pending blocks and syncs it (vf_sync) for every
 * ticket taken before it started (their frames were in the pool by then); one sync thus
 * serves every commit that arrived while the previous one ran, and the workload's lock
 * is never held across it.
 *
 * Who runs the cycles: a caller that finds none under way runs one itself (nothing to
 * wake: one connection pays no hand-over). Commits that arrived meanwhile are left to
 * the instance's WAL flusher thread, which then runs cycles back to back for as long as
 * tickets wait, as InnoDB's and MySQL 8's log writer threads do. Handing the next cycle
 * to one of the waiting callers instead would leave the WAL idle between cycles while
 * that thread is woken and scheduled on a busy core, and each commit would wait for
 * several flush latencies. */

/*
 * Ticket order, with gc_mu held (checked by gc_state_ok):
 *   T1. tickets are numbered 1, 2, ... in the order their callers arrived, and a cycle
 *       covers every ticket taken before it started: gc_synced and gc_failed (the last
 *       ticket a finished cycle covered) never pass gc_tickets and never go back;
 *   T2. one cycle at a time: gc_busy is set by whoever runs it, for as long as it runs;
 *   T3. a caller returns SQLITE_OK only once gc_synced reaches its ticket, i.e. a sync
 *       that started after its WAL frames were in the pool has finished.
 */
static inline bool gc_state_ok(const vf_instance *vi)
{
    return vi->gc_synced <= vi->gc_tickets && vi->gc_failed <= vi->gc_tickets &&
           (vi->gc_failed == 0 || vi->gc_rc != SQLITE_OK);
}

/* Tickets a cycle is still owed for: neither synced nor failed. gc_mu held. */
static bool gc_pending(const vf_instance *vi)
{
    uint64_t done = vi->gc_synced > vi->gc_failed ? vi->gc_synced : vi->gc_failed;
    return vi->gc_tickets > done;
}

/* One cycle for every ticket taken so far. Called with gc_mu held and gc_busy set;
 * returns with gc_mu held, the waiters woken. A failed cycle fails its tickets (their
 * callers return its code); later ones get a new cycle. */
static int gc_cycle(vf_instance *vi)
{
    uint64_t upto = vi->gc_tickets;
    assert(vi->gc_busy && gc_state_ok(vi)); /* T1, T2 */
    pthread_mutex_unlock(&vi->gc_mu);
    vf_file tmp = {.sf = vi->files[VF_WAL]};
    int rc = vf_sync(&tmp.base, SQLITE_SYNC_NORMAL);
    pthread_mutex_lock(&vi->gc_mu);
    /* T1: no other cycle ran meanwhile (T2), so none moved past this one's tickets */
    assert(vi->gc_busy && vi->gc_synced <= upto && vi->gc_failed <= upto);
    if (rc == SQLITE_OK) {
        vi->gc_synced = upto;
        vi->gc_syncs++;
    } else {
        vi->gc_failed = upto;
        vi->gc_rc = rc;
    }
    pthread_cond_broadcast(&vi->gc_cv);
    return rc;
}

static void *gc_flusher(void *arg)
{
    vf_instance *vi = arg;
    pthread_mutex_lock(&vi->gc_mu);
    for (;;) {
        while (!vi->gc_stop && (vi->gc_busy || !gc_pending(vi)))
            pthread_cond_wait(&vi->gc_flusher_cv, &vi->gc_mu);
        if (vi->gc_stop) break;
        vi->gc_busy = true;
        while (gc_pending(vi) && gc_cycle(vi) == SQLITE_OK) {
        }
        vi->gc_busy = false;
        pthread_cond_broadcast(&vi->gc_cv); /* a waiter may lead the next one */
    }
    pthread_mutex_unlock(&vi->gc_mu);
    return NULL;
}

/* Leaves the cycles still owed to the flusher (started on first use; without it, the
 * waiting callers lead them as before). gc_mu held. */
static void gc_wake_flusher(vf_instance *vi)
{
    if (!vi->gc_thread_on && !vi->gc_stop)
        vi->gc_thread_on = pthread_create(&vi->gc_thread, NULL, gc_flusher, vi) == 0;
    pthread_cond_signal(&vi->gc_flusher_cv);
}

/* A commit that finds a cycle under way (most often in its fdatasync) writes the WAL's
 * pending blocks itself, while it waits for the next cycle anyway: that cycle then has
 * little left to write before its own sync, so the WAL's writes overlap the syncs
 * instead of following them (a cycle was write + sync; now mostly sync). One commit at
 * a time claims the write ahead; the others leave their blocks to it or to the next
 * cycle. The claimant waits for flush_mu if the cycle is still writing (it then writes
 * what came in meanwhile, during the cycle's sync); a claim that found the WAL busy and
 * gave up at once left about half the blocks to the cycles (measured). The next cycle
 * takes flush_mu after the claimant, so it syncs only once every block written ahead
 * has reached the device. A failed write notes a storage fault (write_failed), and the
 * next cycle then fails its tickets. */
static void wal_write_ahead(vf_shared *wal)
{
    vf_instance *vi = wal->vi;
    bool unclaimed = false;
    if (refuse_after_fault() ||
        !atomic_compare_exchange_strong(&vi->gc_ahead_claimed, &unclaimed, true))
        return;
    vf_file tmp = {.sf = wal};
    uint64_t written = 0;
    pthread_mutex_lock(&wal->flush_mu);
    (void)flush_pending_held(&tmp, &written);
    pthread_mutex_unlock(&wal->flush_mu);
    atomic_store(&vi->gc_ahead_claimed, false);
    if (written) {
        atomic_fetch_add(&vi->gc_writes_ahead, 1);
        atomic_fetch_add(&vi->gc_blocks_ahead, written);
    }
}

int vf_wal_durable(vf_instance *vi)
{
    vf_shared *wal = vi->files[VF_WAL];
    if (!wal) return SQLITE_OK;
    pthread_mutex_lock(&wal->mu);
    bool open = wal->fd >= 0;
    pthread_mutex_unlock(&wal->mu);
    if (!open) return SQLITE_OK; /* no WAL file: nothing was written to it */
    int rc = SQLITE_OK;
    pthread_mutex_lock(&vi->gc_mu);
    uint64_t mine = ++vi->gc_tickets;
    bool wrote_ahead = false;
    while (vi->gc_synced < mine) {
        if (vi->gc_failed >= mine) {
            rc = vi->gc_rc;
            assert(rc != SQLITE_OK);
            break;
        }
        if (vi->gc_busy && !wrote_ahead) {
            wrote_ahead = true;
            pthread_mutex_unlock(&vi->gc_mu);
            wal_write_ahead(wal);
            pthread_mutex_lock(&vi->gc_mu);
            continue;
        }
        if (vi->gc_busy) {
            pthread_cond_wait(&vi->gc_cv, &vi->gc_mu);
            continue;
        }
        vi->gc_busy = true;
        gc_cycle(vi);
        vi->gc_busy = false;
        if (gc_pending(vi)) gc_wake_flusher(vi);
    }
    assert(gc_state_ok(vi) && (rc != SQLITE_OK || vi->gc_synced >= mine)); /* T1, T3 */
    pthread_mutex_unlock(&vi->gc_mu);
    return rc;
}

/* Stops the WAL flusher (no connection is left to take a ticket). */
static void gc_stop_flusher(vf_instance *vi)
{
    pthread_mutex_lock(&vi->gc_mu);
    vi->gc_stop = true;
    pthread_cond_signal(&vi->gc_flusher_cv);
    bool on = vi->gc_thread_on;
    pthread_mutex_unlock(&vi->gc_mu);
    if (on) pthread_join(vi->gc_thread, NULL);
}

static int vf_file_size(sqlite3_file *pf, sqlite3_int64 *size)
{
    *size = (sqlite3_int64)file_size(((vf_file *)pf)->sf);
    return SQLITE_OK;
}

/* The locking protocol of os_unix.c, between the handles of one process. */
static int vf_lock(sqlite3_file *pf, int level)
{
    vf_file *f = (vf_file *)pf;
    vf_shared *sf = f->sf;
    int rc = SQLITE_OK;
    if (f->lock >= level) return SQLITE_OK;
    pthread_mutex_lock(&sf->mu);
    switch (level) {
    case SQLITE_LOCK_SHARED:
        if ((sf->pending_by && sf->pending_by != f) ||
            (sf->exclusive_by && sf->exclusive_by != f)) {
            rc = SQLITE_BUSY;
            break;
        }
        sf->nshared++;
        f->lock = SQLITE_LOCK_SHARED;
        break;
    case SQLITE_LOCK_RESERVED:
        if ((sf->reserved_by && sf->reserved_by != f) || (sf->pending_by && sf->pending_by != f) ||
            (sf->exclusive_by && sf->exclusive_by != f)) {
            rc = SQLITE_BUSY;
            break;
        }
        sf->reserved_by = f;
        f->lock = SQLITE_LOCK_RESERVED;
        break;
    default: /* PENDING or EXCLUSIVE */
        if ((sf->pending_by && sf->pending_by != f) ||
            (sf->exclusive_by && sf->exclusive_by != f) ||
            (sf->reserved_by && sf->reserved_by != f)) {
            rc = SQLITE_BUSY;
            break;
        }
        sf->pending_by = f;
        if (f->lock < SQLITE_LOCK_PENDING) f->lock = SQLITE_LOCK_PENDING;
        if (level == SQLITE_LOCK_EXCLUSIVE) {
            if (sf->nshared > 1) {
                rc = SQLITE_BUSY; /* keep PENDING: no new readers meanwhile */
                break;
            }
            sf->exclusive_by = f;
            f->lock = SQLITE_LOCK_EXCLUSIVE;
        }
        break;
    }
    pthread_mutex_unlock(&sf->mu);
    return rc;
}

static int vf_unlock(sqlite3_file *pf, int level)
{
    vf_file *f = (vf_file *)pf;
    vf_shared *sf = f->sf;
    if (f->lock <= level) return SQLITE_OK;
    pthread_mutex_lock(&sf->mu);
    if (f->lock > SQLITE_LOCK_SHARED) {
        if (sf->reserved_by == f) sf->reserved_by = NULL;
        if (sf->pending_by == f) sf->pending_by = NULL;
        if (sf->exclusive_by == f) sf->exclusive_by = NULL;
    }
    if (level == SQLITE_LOCK_NONE && f->lock >= SQLITE_LOCK_SHARED) sf->nshared--;
    f->lock = level;
    pthread_mutex_unlock(&sf->mu);
    return SQLITE_OK;
}

static int vf_check_reserved(sqlite3_file *pf, int *res)
{
    vf_shared *sf = ((vf_file *)pf)->sf;
    pthread_mutex_lock(&sf->mu);
    *res = sf->reserved_by || sf->pending_by || sf->exclusive_by;
    pthread_mutex_unlock(&sf->mu);
    return SQLITE_OK;
}

static int vf_file_control(sqlite3_file *pf, int op, void *arg)
{
    vf_file *f = (vf_file *)pf;
    switch (op) {
    case SQLITE_FCNTL_VFSNAME:
        *(char **)arg = sqlite3_mprintf("appsim-direct");
        return SQLITE_OK;
    case SQLITE_FCNTL_PERSIST_WAL: {
        int *v = arg;
        pthread_mutex_lock(&f->sf->mu);
        if (*v < 0)
            *v = f->sf->persist_wal;
        else
            f->sf->persist_wal = *v != 0;
        pthread_mutex_unlock(&f->sf->mu);
        return SQLITE_OK;
    }
    case SQLITE_FCNTL_CKPT_DONE:
        /* The backfill loop is over and SQLite is about to publish how far it got:
         * the pages must be on the device before (readers may then skip the WAL). */
        return f->sf->kind == VF_MAIN ? flush_db(f) : SQLITE_OK;
    case SQLITE_FCNTL_SIZE_HINT:
        return SQLITE_OK; /* blocks are allocated as they are written */
    case VF_FCNTL_CHECKPOINTER:
        f->checkpointer = true;
        return SQLITE_OK;
    case VF_FCNTL_GROUP_COMMIT:
        f->defer_wal_flush = true;
        return SQLITE_OK;
    default:
        return SQLITE_NOTFOUND;
    }
}

static int vf_sector_size(sqlite3_file *pf)
{
    return (int)((vf_file *)pf)->sf->vi->unit;
}

static int vf_device_characteristics(sqlite3_file *pf)
{
    /* As os_unix.c by default: a write never damages bytes outside its range. */
    return SQLITE_IOCAP_POWERSAFE_OVERWRITE;
}

/* ------------------------------------------------------------------ WAL index */

static int vf_shm_map(sqlite3_file *pf, int region, int size, int extend, void volatile **pp)
{
    vf_file *f = (vf_file *)pf;
    vf_shm *shm = f->sf->vi->shm;
    int rc = SQLITE_OK;
    pthread_mutex_lock(&shm->mu);
    if (!f->shm_mapped) {
        f->shm_mapped = true;
        shm->refs++;
    }
    *pp = NULL;
    if (region >= shm->nregions) {
        if (!extend) goto out;
        shm->regions = sim_xrealloc(shm->regions, sizeof(void *) * (size_t)(region + 1));
        while (shm->nregions <= region) {
            void *m = NULL;
            /* appsim-alloc: SQLite's shared-memory region; SQLite answers SQLITE_IOERR_NOMEM */
            if (posix_memalign(&m, 4096, (size_t)size)) {
                rc = SQLITE_IOERR_NOMEM;
                goto out;
            }
            memset(m, 0, (size_t)size);
            shm->regions[shm->nregions++] = m;
        }
    }
    *pp = shm->regions[region];
out:
    pthread_mutex_unlock(&shm->mu);
    return rc;
}

/* Called with shm->mu held whenever locks are given back. */
static void note_release(vf_shm *shm)
{
    shm->release_seq++;
    if (shm->waiters) pthread_cond_broadcast(&shm->released);
}

uint64_t vf_shm_release_seq(vf_instance *vi)
{
    pthread_mutex_lock(&vi->shm->mu);
    uint64_t seq = vi->shm->release_seq;
    pthread_mutex_unlock(&vi->shm->mu);
    return seq;
}

void vf_shm_wait_release(vf_instance *vi, uint64_t seq, uint64_t timeout_ns)
{
    vf_shm *shm = vi->shm;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + timeout_ns;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    pthread_mutex_lock(&shm->mu);
    shm->waiters++;
    while (shm->release_seq == seq)
        if (pthread_cond_timedwait(&shm->released, &shm->mu, &ts)) break;
    shm->waiters--;
    pthread_mutex_unlock(&shm->mu);
}

/* The WAL-index lock writers take (SQLite's wal.c: WAL_WRITE_LOCK). */
#define SHM_WRITE_LOCK 0

void vf_ck_write_lock_clear(vf_instance *vi)
{
    atomic_store(&vi->ck_write_lock_ns, 0);
}

uint64_t vf_ck_write_lock_ns(vf_instance *vi)
{
    return atomic_load(&vi->ck_write_lock_ns);
}

static int vf_shm_lock(sqlite3_file *pf, int ofst, int n, int flags)
{
    vf_file *f = (vf_file *)pf;
    vf_shm *shm = f->sf->vi->shm;
    uint16_t mask = (uint16_t)(((1u << (ofst + n)) - 1) & ~((1u << ofst) - 1));
    int rc = SQLITE_OK;
    bool released_writer = false;
    pthread_mutex_lock(&shm->mu);
    if (flags & SQLITE_SHM_UNLOCK) {
        for (int i = ofst; i < ofst + n; i++) {
            uint16_t bit = (uint16_t)(1u << i);
            if (f->shm_shared_mask & bit) shm->nshared[i]--;
            if (f->shm_excl_mask & bit) {
                shm->excl[i] = NULL;
                if (i == 0) released_writer = true;
            }
        }
        f->shm_shared_mask &= (uint16_t)~mask;
        f->shm_excl_mask &= (uint16_t)~mask;
        note_release(shm);
    } else if (flags & SQLITE_SHM_SHARED) {
        for (int i = ofst; i < ofst + n; i++) {
            uint16_t bit = (uint16_t)(1u << i);
            if (f->shm_shared_mask & bit) continue;
            if (shm->excl[i] && shm->excl[i] != f) {
                rc = SQLITE_BUSY;
                break;
            }
        }
        if (rc == SQLITE_OK) {
            for (int i = ofst; i < ofst + n; i++) {
                uint16_t bit = (uint16_t)(1u << i);
                if (!(f->shm_shared_mask & bit)) shm->nshared[i]++;
            }
            f->shm_shared_mask |= mask;
        }
    } else if (ofst == SHM_WRITE_LOCK && !f->checkpointer &&
               atomic_load(&f->sf->vi->hold_writers)) {
        rc = SQLITE_BUSY; /* the WAL is at its bound: no writer until it restarts */
    } else {
        for (int i = ofst; i < ofst + n; i++) {
            uint16_t bit = (uint16_t)(1u << i);
            int others = shm->nshared[i] - ((f->shm_shared_mask & bit) ? 1 : 0);
            if ((shm->excl[i] && shm->excl[i] != f) || others > 0) {
                rc = SQLITE_BUSY;
                break;
            }
        }
        if (rc == SQLITE_OK) {
            for (int i = ofst; i < ofst + n; i++)
                shm->excl[i] = f;
            f->shm_excl_mask |= mask;
        }
        if (f->checkpointer && ofst == SHM_WRITE_LOCK && rc == SQLITE_OK)
            atomic_store(&f->sf->vi->ck_write_lock_ns, sim_now_ns());
    }
    pthread_mutex_unlock(&shm->mu);
    if (released_writer && f->sf->vi->flush_at_commit && !f->defer_wal_flush &&
        flush_wal_of(f) != SQLITE_OK)
        return SQLITE_IOERR_WRITE;
    return rc;
}

static void vf_shm_barrier(sqlite3_file *pf)
{
    vf_shm *shm = ((vf_file *)pf)->sf->vi->shm;
    atomic_thread_fence(memory_order_seq_cst);
    pthread_mutex_lock(&shm->mu);
    pthread_mutex_unlock(&shm->mu);
}

static int vf_shm_unmap(sqlite3_file *pf, int delete_flag)
{
    vf_file *f = (vf_file *)pf;
    vf_shm *shm = f->sf->vi->shm;
    pthread_mutex_lock(&shm->mu);
    if (f->shm_mapped) {
        for (int i = 0; i < SHM_NLOCK; i++) {
            uint16_t bit = (uint16_t)(1u << i);
            if (f->shm_shared_mask & bit) shm->nshared[i]--;
            if (f->shm_excl_mask & bit) shm->excl[i] = NULL;
        }
        f->shm_shared_mask = f->shm_excl_mask = 0;
        f->shm_mapped = false;
        note_release(shm);
        if (--shm->refs == 0) {
            for (int i = 0; i < shm->nregions; i++)
                free(shm->regions[i]);
            free(shm->regions);
            shm->regions = NULL;
            shm->nregions = 0;
        }
    }
    pthread_mutex_unlock(&shm->mu);
    return SQLITE_OK;
}

static const sqlite3_io_methods vf_methods = {
    .iVersion = 2,
    .xClose = vf_close,
    .xRead = vf_read,
    .xWrite = vf_write,
    .xTruncate = vf_truncate,
    .xSync = vf_sync,
    .xFileSize = vf_file_size,
    .xLock = vf_lock,
    .xUnlock = vf_unlock,
    .xCheckReservedLock = vf_check_reserved,
    .xFileControl = vf_file_control,
    .xSectorSize = vf_sector_size,
    .xDeviceCharacteristics = vf_device_characteristics,
    .xShmMap = vf_shm_map,
    .xShmLock = vf_shm_lock,
    .xShmBarrier = vf_shm_barrier,
    .xShmUnmap = vf_shm_unmap,
};

/* ------------------------------------------------------------------ vfs methods */

static vf_shared *shared_for(vf_instance *vi, const char *path)
{
    for (int k = 0; k < VF_NFILES; k++)
        if (vi->files[k] && !strcmp(vi->files[k]->path, path)) return vi->files[k];
    return NULL;
}

/* Opens (creating through the manifest when needed) the file on the target. */
static int open_shared_fd(vf_shared *sf, bool create, char *err, size_t errlen)
{
    st_target *t = sf->vi->target;
    int fd = -1;
    int rc;
    /* Creating goes through st_target_create_file even when the manifest lists the
     * name: a run killed between listing a file and creating it (the manifest entry
     * comes first, so that cleanup always finds what was created) leaves a listed name
     * with no file, which a plain open would fail on for good. */
    if (create)
        rc = st_target_create_file(t, sf->name, 0, &fd, err, errlen);
    else if (st_target_owns(t, sf->name))
        rc = st_target_open_file(t, sf->name, 0, true, &fd, err, errlen);
    else {
        snprintf(err, errlen, "%s does not exist in the target's manifest", sf->name);
        return SQLITE_CANTOPEN;
    }
    if (rc) {
        /* A drive that fails or fills up shows first at the open of the WAL: fail-stop */
        int e = errno;
        sim_fault_note(e, "opening %s (%s)", sf->path, err);
        return SQLITE_CANTOPEN;
    }
    struct stat st;
    if (fstat(fd, &st)) {
        snprintf(err, errlen, "fstat %s: %s", sf->path, strerror(errno));
        close(fd);
        return SQLITE_CANTOPEN;
    }
    sf->fd = fd;
    __atomic_store_n(&sf->size, (uint64_t)st.st_size, __ATOMIC_RELEASE);
    return SQLITE_OK;
}

static int vf_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *pf, int flags, int *out_flags)
{
    vf_instance *vi = vfs->pAppData;
    vf_file *f = (vf_file *)pf;
    memset(f, 0, sizeof *f);
    vf_shared *sf = name ? shared_for(vi, name) : NULL;
    if (!sf) {
        /* Temporary files and anything else SQLite names: the default VFS, but never a
         * file on the target that is not in the manifest. */
        if (name &&
            !(flags & (SQLITE_OPEN_DELETEONCLOSE | SQLITE_OPEN_TEMP_DB | SQLITE_OPEN_TEMP_JOURNAL |
                       SQLITE_OPEN_TRANSIENT_DB | SQLITE_OPEN_SUBJOURNAL))) {
            sqlite3_log(SQLITE_CANTOPEN, "appsim VFS: refusing to open %s", name);
            return SQLITE_CANTOPEN;
        }
        sqlite3_vfs *d = default_vfs();
        return d->xOpen(d, name, pf, flags, out_flags);
    }
    char err[512];
    if (!thread_engine(vi)) return SQLITE_CANTOPEN;
    pthread_mutex_lock(&sf->mu);
    int rc = SQLITE_OK;
    if (sf->fd < 0) rc = open_shared_fd(sf, (flags & SQLITE_OPEN_CREATE) != 0, err, sizeof err);
    if (rc == SQLITE_OK) sf->refs++;
    pthread_mutex_unlock(&sf->mu);
    if (rc) {
        sqlite3_log(rc, "appsim VFS: %s", err);
        return rc;
    }
    f->sf = sf;
    f->base.pMethods = &vf_methods;
    if (out_flags) *out_flags = flags;
    return SQLITE_OK;
}

static int vf_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
    vf_instance *vi = vfs->pAppData;
    vf_shared *sf = shared_for(vi, name);
    if (!sf || sf->kind == VF_MAIN) return SQLITE_IOERR_DELETE;
    if (refuse_after_fault())
        return SQLITE_IOERR_DELETE; /* the WAL may be all that holds the last commits */
    pthread_mutex_lock(&sf->mu);
    bp_invalidate(vi->pool, sf->file_id, 0);
    sf->pending = false;
    sf->wal_written = sf->wal_buffered; /* discarded with the file: nothing waits for them */
    __atomic_store_n(&sf->size, 0, __ATOMIC_RELEASE);
    if (sf->refs == 0 && sf->fd >= 0) {
        close(sf->fd);
        sf->fd = -1;
    }
    int rc = SQLITE_OK;
    if (st_target_owns(vi->target, sf->name)) {
        char err[512];
        if (st_target_remove_file(vi->target, sf->name, err, sizeof err)) {
            sqlite3_log(SQLITE_IOERR_DELETE, "appsim VFS: %s", err);
            rc = SQLITE_IOERR_DELETE;
        }
    }
    pthread_mutex_unlock(&sf->mu);
    return rc;
}

static int vf_access(sqlite3_vfs *vfs, const char *name, int flags, int *res)
{
    struct stat st;
    if (flags == SQLITE_ACCESS_EXISTS) {
        *res = stat(name, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_size > 0);
        /* a WAL whose blocks are still only in the pool exists as far as SQLite goes */
        vf_shared *sf = shared_for(vfs->pAppData, name);
        if (sf && !*res) {
            pthread_mutex_lock(&sf->mu);
            *res = sf->fd >= 0 && sf->size > 0;
            pthread_mutex_unlock(&sf->mu);
        }
    } else {
        *res = access(name, flags == SQLITE_ACCESS_READWRITE ? (R_OK | W_OK) : R_OK) == 0;
    }
    return SQLITE_OK;
}

int vf_abs_path(const char *name, char *out, size_t n)
{
    if (name[0] == '/') {
        if (strlen(name) >= n) return SIM_ERR;
        strcpy(out, name);
        return SIM_OK;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return SIM_ERR;
    const char *rel = strncmp(name, "./", 2) == 0 ? name + 2 : name;
    if ((size_t)snprintf(out, n, "%s/%s", cwd, rel) >= n) return SIM_ERR;
    return SIM_OK;
}

/* The same rule as vf_abs_path, so that the names SQLite opens match the instance's. */
static int vf_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
    return vf_abs_path(name, out, (size_t)n) ? SQLITE_CANTOPEN : SQLITE_OK;
}

static int vf_randomness(sqlite3_vfs *vfs, int n, char *out)
{
    sqlite3_vfs *d = default_vfs();
    return d->xRandomness(d, n, out);
}

static int vf_sleep(sqlite3_vfs *vfs, int us)
{
    sqlite3_vfs *d = default_vfs();
    return d->xSleep(d, us);
}

static int vf_current_time(sqlite3_vfs *vfs, double *t)
{
    sqlite3_vfs *d = default_vfs();
    return d->xCurrentTime(d, t);
}

static int vf_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *t)
{
    sqlite3_vfs *d = default_vfs();
    return d->xCurrentTimeInt64(d, t);
}

static int vf_last_error(sqlite3_vfs *vfs, int n, char *out)
{
    sqlite3_vfs *d = default_vfs();
    return d->xGetLastError(d, n, out);
}

/* ------------------------------------------------------------------ instance */

static atomic_uint_fast64_t instance_seq = 1;

static vf_shared *shared_new(vf_instance *vi, int kind, const char *suffix)
{
    vf_shared *sf = sim_xcalloc(1, sizeof *sf);
    sf->vi = vi;
    sf->kind = kind;
    sf->file_id = (uint32_t)kind + 1;
    sf->fd = -1;
    sf->name = sim_xasprintf("%s%s", vi->main_name, suffix);
    sf->path = sim_xasprintf("%s%s", vi->main_path, suffix);
    sf->bounce_len = kind == VF_WAL    ? 1u << 20
                     : kind == VF_MAIN ? (size_t)vi->db_batch_cap * vi->unit
                                       : 0;
    if (kind == VF_MAIN) {
        sf->dirty_blks = sim_xcalloc(DB_DIRTY_CAP, sizeof(uint64_t));
        sf->flush_io = sim_xmalloc(sizeof *sf->flush_io);
    }
    /* appsim-alloc: an eighth of the pool, sized from --buffer: vf_instance_new then
     * says to lower --buffer instead of ending the process */
    if (sf->bounce_len && posix_memalign((void **)&sf->bounce, 4096, sf->bounce_len))
        sf->bounce = NULL;
    pthread_mutex_init(&sf->mu, NULL);
    pthread_mutex_init(&sf->flush_mu, NULL);
    if (sf->bounce_len && !sf->bounce) {
        free(sf->dirty_blks);
        free(sf->flush_io);
        free(sf->name);
        free(sf->path);
        free(sf->bounce);
        free(sf);
        return NULL;
    }
    return sf;
}

static void shared_free(vf_shared *sf)
{
    if (!sf) return;
    if (sf->fd >= 0) close(sf->fd);
    pthread_mutex_destroy(&sf->mu);
    pthread_mutex_destroy(&sf->flush_mu);
    free(sf->name);
    free(sf->path);
    free(sf->bounce);
    free(sf->dirty_blks);
    free(sf->flush_io);
    free(sf);
}

/* An instance's memory: its names, batch bounds, shared-memory state, buffer pool and
 * shared files. False when the pool or a bounce buffer could not be allocated or the
 * path does not resolve (vi is then half made:
 * vf_instance_free releases it). */
static bool instance_alloc(vf_instance *vi, st_target *t, const char *name, uint64_t buffer_bytes,
                           uint32_t unit)
{
    char pbuf[PATH_MAX];
    vi->main_name = sim_xstrdup(name);
    char abs[PATH_MAX];
    if (vf_abs_path(st_target_file_path(t, name, pbuf, sizeof pbuf), abs, sizeof abs) == 0)
        vi->main_path = sim_xstrdup(abs);
    /* Buffered WAL bytes stay pinned in the pool: bound them to a quarter of it. */
    vi->wal_flush_bytes = buffer_bytes / 4 < (1u << 20) ? buffer_bytes / 4 : (1u << 20);
    if (vi->wal_flush_bytes < unit) vi->wal_flush_bytes = unit;
    /* Dirty database blocks stay pinned too: at most an eighth of the pool. */
    uint64_t frames = buffer_bytes / unit;
    vi->db_batch_cap = frames / 8 < DB_BATCH_MAX ? (uint32_t)(frames / 8) : DB_BATCH_MAX;
    if (vi->db_batch_cap < 1) vi->db_batch_cap = 1;
    atomic_init(&vi->db_depth, VF_DB_DEPTH_MIN);
    pthread_mutex_init(&vi->engines_mu, NULL);
    pthread_mutex_init(&vi->gc_mu, NULL);
    pthread_mutex_init(&vi->wal_versions.mu, NULL);
    pthread_cond_init(&vi->gc_cv, NULL);
    pthread_cond_init(&vi->gc_flusher_cv, NULL);
    vi->shm = sim_xcalloc(1, sizeof *vi->shm);
    vi->pool = bp_new(buffer_bytes / unit, unit);
    pthread_mutex_init(&vi->shm->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&vi->shm->released, &ca);
    pthread_condattr_destroy(&ca);
    static const char *suffix[VF_NFILES] = {"", "-wal", "-journal"};
    bool ok = vi->main_path && vi->pool; /* no path: the name does not resolve */
    for (int k = 0; ok && k < VF_NFILES; k++)
        ok = (vi->files[k] = shared_new(vi, k, suffix[k])) != NULL;
    return ok;
}

/* Registers the instance's own SQLite VFS, named appsim-direct-<id>. */
static int register_vfs(vf_instance *vi)
{
    vi->id = atomic_fetch_add(&instance_seq, 1);
    snprintf(vi->vfs_name, sizeof vi->vfs_name, "appsim-direct-%llu", (unsigned long long)vi->id);
    sqlite3_vfs *d = default_vfs();
    vi->vfs.iVersion = 2;
    vi->vfs.szOsFile = d->szOsFile > (int)sizeof(vf_file) ? d->szOsFile : (int)sizeof(vf_file);
    vi->vfs.mxPathname = PATH_MAX;
    vi->vfs.zName = vi->vfs_name;
    vi->vfs.pAppData = vi;
    vi->vfs.xOpen = vf_open;
    vi->vfs.xDelete = vf_delete;
    vi->vfs.xAccess = vf_access;
    vi->vfs.xFullPathname = vf_full_pathname;
    vi->vfs.xRandomness = vf_randomness;
    vi->vfs.xSleep = vf_sleep;
    vi->vfs.xCurrentTime = vf_current_time;
    vi->vfs.xGetLastError = vf_last_error;
    vi->vfs.xCurrentTimeInt64 = vf_current_time64;
    return sqlite3_vfs_register(&vi->vfs, 0);
}

/* Opens the database file now, so that a filesystem refusing O_DIRECT is reported
 * before any connection exists. SIM_EXIT_OK, or SIM_EXIT_USAGE with err saying what
 * to do. */
static int open_main_file(vf_instance *vi, char *err, size_t errlen)
{
    vf_shared *m = vi->files[VF_MAIN];
    char e2[512] = "";
    pthread_mutex_lock(&m->mu);
    int rc = open_shared_fd(m, true, e2, sizeof e2);
    pthread_mutex_unlock(&m->mu);
    if (rc != SQLITE_OK) {
        /* The target's own message says what was found (a symlink, a replaced file,
         * O_DIRECT refused) and what to do. */
        snprintf(err, errlen, "%s", e2);
        return SIM_EXIT_USAGE;
    }
    /* The WAL and the journal are opened later, by SQLite, where a refusal can only say
     * "unable to open database file": a link, a foreign file or a replaced one in their
     * place is named here, before any connection exists. */
    for (int k = VF_MAIN + 1; k < VF_NFILES; k++) {
        char ignored[PATH_MAX];
        int crc = st_target_library_path(vi->target, vi->files[k]->name, false, ignored,
                                         sizeof ignored, err, errlen);
        if (crc) return crc;
    }
    /* Some filesystems accept O_DIRECT at open and refuse it at the first I/O. */
    void *probe = NULL;
    /* appsim-alloc: without the buffer the probe is left out; the first I/O then tells */
    if (posix_memalign(&probe, 4096, vi->unit) == 0) {
        if (pread(m->fd, probe, vi->unit, 0) < 0) {
            snprintf(e2, sizeof e2, "read: %s", strerror(errno));
            rc = SQLITE_CANTOPEN;
        }
        free(probe);
    }
    if (rc != SQLITE_OK) {
        snprintf(err, errlen,
                 "cannot use database file %s with O_DIRECT (%s); if the filesystem refuses "
                 "direct I/O (tmpfs on old kernels, ramfs, some network filesystems), rerun "
                 "with --buffered (the page cache is then in play, and the result says so)",
                 vi->main_path, e2);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

int vf_instance_new(st_target *t, const char *name, uint64_t buffer_bytes, uint32_t unit,
                    const char *engine, vf_instance **out, char *err, size_t errlen)
{
    vf_instance *vi = sim_xcalloc(1, sizeof *vi);
    vi->target = t;
    vi->unit = unit;
    vi->engine = engine;
    if (!instance_alloc(vi, t, name, buffer_bytes, unit)) {
        vf_instance_free(vi);
        uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
        uint64_t avail = (uint64_t)sysconf(_SC_AVPHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
        snprintf(err, errlen,
                 "cannot allocate a buffer pool of %llu bytes (this machine has %llu bytes of "
                 "memory, %llu free): lower --buffer",
                 (unsigned long long)buffer_bytes, (unsigned long long)phys,
                 (unsigned long long)avail);
        return SIM_EXIT_FAIL;
    }
    if (register_vfs(vi) != SQLITE_OK) {
        vf_instance_free(vi);
        snprintf(err, errlen, "cannot register the SQLite VFS");
        return SIM_EXIT_FAIL;
    }
    int rc = open_main_file(vi, err, errlen);
    if (rc) {
        vf_instance_free(vi);
        return rc;
    }
    *out = vi;
    return SIM_EXIT_OK;
}

void vf_instance_free(vf_instance *vi)
{
    if (!vi) return;
    gc_stop_flusher(vi);
    if (vi->vfs.zName) sqlite3_vfs_unregister(&vi->vfs);
    /* First the engines: closing one waits for its I/Os still in flight (a flush that
     * stopped on an engine error leaves some), which read the files' buffers and the
     * pool's frames freed below. */
    for (size_t i = 0; i < vi->nengines; i++)
        st_engine_close(vi->engines[i].e);
    for (int k = 0; k < VF_NFILES; k++)
        shared_free(vi->files[k]);
    if (vi->shm) {
        for (int i = 0; i < vi->shm->nregions; i++)
            free(vi->shm->regions[i]);
        free(vi->shm->regions);
        pthread_mutex_destroy(&vi->shm->mu);
        pthread_cond_destroy(&vi->shm->released);
        free(vi->shm);
    }
    bp_free(vi->pool);
    free(vi->engines);
    pthread_mutex_destroy(&vi->engines_mu);
    pthread_mutex_destroy(&vi->gc_mu);
    vf_wal_versions_free(vi);
    pthread_cond_destroy(&vi->gc_cv);
    pthread_cond_destroy(&vi->gc_flusher_cv);
    free(vi->main_name);
    free(vi->main_path);
    free(vi);
}
