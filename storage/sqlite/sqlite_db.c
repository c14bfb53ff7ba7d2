/*
 * storage/sqlite/sqlite_db.c: one SQLite database instance on a target (st_db_*): its VFS and
 * buffer pool (sqlite_vfs.c, bufpool.c) or, on a buffered target, SQLite's default
 * VFS; the pragmas every connection gets; the background checkpointer; the result's
 * "db" section and the "db_pool" probe.
 *
 * Checkpointer: workers never checkpoint (no automatic checkpoint on their
 * connections). A WAL hook on every connection tracks how many frames the WAL holds
 * that no checkpoint has copied yet; when they pass checkpoint_wal_bytes (lowered as the
 * WAL nears its restart when the workload asks: checkpoint_taper, vf_ck_due_bytes), a
 * thread with its own connection runs a checkpoint in the configured mode, so commits meet
 * the drive's write-back the way a database's background flusher makes them, not as
 * a stall in the committing thread.
 *
 * WAL bound: a passive checkpoint copies frames but cannot restart the WAL while any
 * reader holds a snapshot that uses it, and with readers always running it never does
 * (checkpoint starvation): the WAL grows by every commit. So once the WAL passes half
 * of wal_limit, the checkpointer runs a TRUNCATE checkpoint: it takes the WAL write
 * lock (writers wait; readers never do: once everything is copied, new readers read
 * the database file alone), copies what the passive checkpoints left, waits for the
 * readers of older snapshots to finish and restarts the WAL from its beginning (the
 * VFS keeps the file's blocks, sqlite_vfs.c). Every writer waits while it does, so a
 * restart first copies the backlog in passive checkpoints (writers going on), leaving
 * little to copy under the hold, and waits for the readers only briefly (25 ms); if
 * they outlast that, it lets writers go on for at least as long as it held them and
 * tries again with twice the wait. If the WAL reaches 7/8 of
 * the bound all the same, writers are held back (the VFS refuses them the WAL write
 * lock) until a restart succeeds, and the restart waits up to 10 s at a time: the WAL
 * passes the bound only by a transaction larger than an eighth of it. The busy
 * handler sleeps until a WAL-index lock is released (vf_shm_wait_release), so writers
 * wait only as long as the slowest older reader, not a polling interval.
 */
#include "storage/sqlite/sqlite_internal.h"

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

/* Pages of SQLite's own cache per connection with appsim's VFS: the pool is the cache
 * that counts, this only saves re-reading the pages of the statement in progress. */
#define CONN_CACHE_PAGES 32
#define MIN_PAGES_PER_CONNECTION 16
#define WAL_FRAME_HEADER 24
#define WAL_HEADER 32
#define CONN_BUSY_MS 10000
#define CHECKPOINT_BUSY_MS 1000
#define MIN_WAL_LIMIT_FRAMES 64
/* A restart before the hold waits this long for readers of the WAL, twice as long after
 * each one that gave up, up to RESTART_WAIT_MAX_MS; at the hold, LIMIT_WAIT_MS. */
#define RESTART_WAIT_MS 25
#define RESTART_WAIT_MAX_MS 400
#define LIMIT_WAIT_MS 10000
/* After a restart gave up, writers go on at least this long, and at least as long as it
 * held them, before the next try. */
#define RESTART_BACKOFF_MS 50
/* A restart first copies what the WAL holds beyond this without holding writers back
 * (passive checkpoints, at most RESTART_CATCHUP_PASSES, each while the one before at
 * least halved the backlog: commits go on meanwhile, so each pass leaves what arrived
 * during the one before). */
#define RESTART_CATCHUP_BYTES (256u << 10)
#define RESTART_CATCHUP_PASSES 4
#define BUSY_SLICE_NS 10000000ull /* the checkpointer's busy wait rechecks its deadline */

/* Sizes of the database file and its WAL on the target (-1: no such file). */
typedef struct db_sizes {
    int64_t db_bytes, wal_bytes;
} db_sizes;

struct st_db {
    st_target *target;
    char *name;
    char *path;
    bool buffered;
    vf_instance *vi;
    uint32_t page_size;
    uint64_t buffer_bytes;
    int max_connections;
    int conn_cache_pages;
    const char *sync;
    const char *engine;
    const char *ck_mode_name;
    int ck_mode;
    uint64_t ck_wal_bytes;
    bool ck_taper;           /* st_db_opts.checkpoint_taper */
    uint64_t wal_limit;      /* the WAL's bound in bytes (0 = none) */
    uint64_t restart_frames; /* frames from which the WAL is restarted (half the bound) */
    uint64_t hold_frames;    /* frames from which writers are held back (7/8 of it) */
    atomic_int connections;
    db_sizes sizes_at_open;

    /* checkpointer */
    sqlite3 *ck_conn;
    pthread_mutex_t ck_conn_mu; /* the checkpoint connection and the two below */
    uint64_t ck_deadline_ns;    /* its busy handler gives up then */
    uint64_t ck_release_seq;    /* WAL-index lock releases it has seen */
    uint64_t ck_locked_wait_ns; /* its busy handler's waits with the WAL write lock held */
    pthread_t ck_thread;
    bool ck_started;
    pthread_mutex_t mu; /* below */
    pthread_cond_t cv;
    bool stop;
    uint64_t hook_seq;
    uint64_t wal_frames;    /* frames in the WAL at the last commit */
    uint64_t ck_backfilled; /* frames of this WAL generation already checkpointed */
    uint64_t wal_frames_max;
    uint64_t ck_count, ck_busy, ck_errors, ck_frames, ck_total_ns, ck_max_ns, ck_manual;
    uint64_t ck_deep_count, ck_deep_ns; /* checkpoints written deeper than the minimum */
    uint64_t wal_gen;                   /* restarts of the WAL seen (new generations) */
    uint64_t gen_last_frames;           /* frames of the generation before the last restart */
    /* restart checkpoints: done, given up (readers held old snapshots past the wait),
     * run at the bound, and how long they held writers back */
    uint64_t rs_done, rs_busy, rs_at_limit, rs_total_ns, rs_max_ns;
    /* how long restarts held writers (from the WAL write lock to the end), of that
     * copying the last frames and waiting for readers of the WAL; the wait the next
     * one gets, and when it may start (after one gave up) */
    uint64_t rs_held_total_ns, rs_held_max_ns, rs_copy_ns, rs_readers_ns;
    uint64_t rs_wait_ms, rs_not_before_ns;
    /* writers held back at the bound: since when (0 = not now), how often, how long */
    uint64_t hold_since_ns, hold_count, hold_total_ns, hold_max_ns;
    char ck_last_error[256];
};

static const char *const sync_names[] = {"off", "normal", "full"};
static const char *const mode_names[] = {"passive", "full", "restart", "truncate"};
static const int mode_values[] = {SQLITE_CHECKPOINT_PASSIVE, SQLITE_CHECKPOINT_FULL,
                                  SQLITE_CHECKPOINT_RESTART, SQLITE_CHECKPOINT_TRUNCATE};

/* Bytes of a WAL holding n frames. */
static uint64_t wal_bytes_of(const st_db *db, uint64_t n)
{
    return n ? WAL_HEADER + n * (db->page_size + WAL_FRAME_HEADER) : 0;
}

static int find_name(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], s)) return i;
    return -1;
}

uint64_t st_db_checkpoint_bytes_for(uint64_t buffer_bytes, uint64_t wal_limit_bytes)
{
    uint64_t base =
        wal_limit_bytes && wal_limit_bytes < buffer_bytes ? wal_limit_bytes : buffer_bytes;
    uint64_t share = base / ST_DB_CHECKPOINT_SHARE;
    if (share > ST_DB_MAX_CHECKPOINT_BYTES) share = ST_DB_MAX_CHECKPOINT_BYTES;
    return share > ST_DB_DEFAULT_CHECKPOINT_WAL_BYTES ? share : 0;
}

uint64_t st_db_min_buffer(const st_db_opts *opts, uint32_t page_size)
{
    int conns = opts->max_connections > 0 ? opts->max_connections : 1;
    /* the checkpointer is one more connection */
    return (uint64_t)(conns + 1) * MIN_PAGES_PER_CONNECTION * page_size;
}

static uint64_t wal_limit_of(const st_db_opts *opts, uint64_t ck_wal_bytes)
{
    if (opts->wal_limit_bytes == UINT64_MAX) return 0; /* no bound */
    if (opts->wal_limit_bytes) return opts->wal_limit_bytes;
    return ck_wal_bytes > ST_DB_DEFAULT_WAL_LIMIT / 4 ? 4 * ck_wal_bytes : ST_DB_DEFAULT_WAL_LIMIT;
}

/* The page size of an existing SQLite database file (its header's bytes 16-17; 1 means
 * 65536), or 0 when the file is absent or holds no SQLite header yet. Never through a
 * link: appsim reads only what the manifest's checks then accept. */
static uint32_t header_page_size(const char *path)
{
    int fd = path ? open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd < 0) return 0;
    unsigned char h[18];
    ssize_t n = pread(fd, h, sizeof h, 0);
    close(fd);
    if (n != (ssize_t)sizeof h || memcmp(h, "SQLite format 3", 16) != 0) return 0;
    uint32_t ps = (uint32_t)h[16] << 8 | h[17];
    return ps == 1 ? 65536 : ps;
}

/* A new database's pages are ST_DB_PAGE_SIZE (8 KiB, the page of SQL Server, the labs'
 * TPC-C engine, and of PostgreSQL: what the drive is asked per read and per page written
 * then matches theirs, docs/fidelity.md), or the device's block if larger, so that
 * O_DIRECT needs no read-modify-write. An existing database keeps its own. */
static uint32_t page_size_for(const st_target *t, const char *name)
{
    char path[PATH_MAX];
    uint32_t have = header_page_size(st_target_file_path(t, name, path, sizeof path));
    if (have >= 512 && have <= 65536 && !(have & (have - 1))) return have;
    uint32_t bs = st_target_block_size(t);
    uint32_t ps = ST_DB_PAGE_SIZE;
    while (ps < bs && ps < 65536)
        ps <<= 1;
    return ps;
}

/* ------------------------------------------------------------------ connections */

/* The backlog that makes a passive checkpoint due with a WAL of n frames: the trigger,
 * tapered when the workload asked (vf_ck_due_bytes). */
static uint64_t due_bytes(const st_db *db, uint64_t n)
{
    if (!db->ck_taper || !db->wal_limit) return db->ck_wal_bytes;
    uint64_t fb = db->page_size + WAL_FRAME_HEADER;
    return vf_ck_due_bytes(db->ck_wal_bytes, db->restart_frames * fb, n * fb);
}

/* Whether the frames no checkpoint has copied make a passive checkpoint due (db->mu held):
 * the WAL hook's wake-up and the checkpointer's own test. */
static bool checkpoint_due(const st_db *db)
{
    uint64_t n = db->wal_frames, done = db->ck_backfilled;
    return n >= done && (n - done) * (db->page_size + WAL_FRAME_HEADER) >= due_bytes(db, n);
}

/* Holds writers back (on) or lets them go; db->mu held. Only the VFS can hold them. */
static void set_hold(st_db *db, bool on)
{
    if (!db->vi || on == (db->hold_since_ns != 0)) return;
    uint64_t now = sim_now_ns();
    if (on) {
        db->hold_since_ns = now;
        db->hold_count++;
    } else {
        uint64_t dt = now - db->hold_since_ns;
        db->hold_total_ns += dt;
        if (dt > db->hold_max_ns) db->hold_max_ns = dt;
        db->hold_since_ns = 0;
    }
    atomic_store(&db->vi->hold_writers, on);
}

static int wal_hook(void *arg, sqlite3 *conn, const char *dbname, int frames)
{
    st_db *db = arg;
    pthread_mutex_lock(&db->mu);
    uint64_t n = (uint64_t)frames;
    if (n < db->wal_frames) { /* the WAL restarted from its beginning */
        db->wal_gen++;
        db->gen_last_frames = db->wal_frames;
    }
    if (n < db->wal_frames || n < db->ck_backfilled) db->ck_backfilled = 0;
    db->wal_frames = n;
    if (n > db->wal_frames_max) db->wal_frames_max = n;
    if (db->wal_limit) set_hold(db, n >= db->hold_frames);
    db->hook_seq++;
    if (checkpoint_due(db) || (db->wal_limit && n >= db->restart_frames))
        pthread_cond_signal(&db->cv);
    pthread_mutex_unlock(&db->mu);
    return SQLITE_OK;
}

static int exec(sqlite3 *c, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(c, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", sql, msg ? msg : sqlite3_errmsg(c));
        sqlite3_free(msg);
        return SIM_EXIT_FAIL;
    }
    return SIM_EXIT_OK;
}

static int open_conn(st_db *db, sqlite3 **out, char *err, size_t errlen)
{
    sqlite3 *c = NULL;
    int flags =
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
    if (db->buffered) {
        /* The default VFS opens by path: check the files again (each connection), and
         * let SQLite refuse a symlink anywhere in the path (its own opens add
         * O_NOFOLLOW). */
        char path[PATH_MAX];
        int rc = st_db_library_path(db->target, db->name, path, sizeof path, err, errlen);
        if (rc) return rc;
        flags |= SQLITE_OPEN_NOFOLLOW;
    }
    int rc = sqlite3_open_v2(db->path, &c, flags, db->vi ? db->vi->vfs_name : st_db_failstop_vfs());
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot open SQLite database %s: %s", db->path,
                 c ? sqlite3_errmsg(c) : sqlite3_errstr(rc));
        sqlite3_close(c);
        return SIM_EXIT_FAIL;
    }
    sqlite3_busy_timeout(c, CONN_BUSY_MS);
    if (db->buffered) {
        /* keep the -wal and -shm files the manifest lists */
        int persist = 1;
        sqlite3_file_control(c, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
    }
    char sql[512];
    snprintf(sql, sizeof sql,
             "PRAGMA page_size=%u; PRAGMA journal_mode=WAL; PRAGMA synchronous=%s; "
             "PRAGMA cache_size=%d; PRAGMA temp_store=MEMORY; PRAGMA mmap_size=0;",
             db->page_size, db->sync, db->conn_cache_pages);
    if (exec(c, sql, err, errlen)) {
        sqlite3_close(c);
        return SIM_EXIT_FAIL;
    }
    /* journal_mode answers the mode in force: make sure it is WAL */
    sqlite3_stmt *st = NULL;
    bool wal = false;
    if (sqlite3_prepare_v2(c, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        wal = !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    if (!wal) {
        snprintf(err, errlen, "SQLite database %s did not switch to WAL mode", db->path);
        sqlite3_close(c);
        return SIM_EXIT_FAIL;
    }
    /* replaces SQLite's automatic checkpoint, which is a wal hook too */
    sqlite3_wal_hook(c, wal_hook, db);
    atomic_fetch_add(&db->connections, 1);
    *out = c;
    return SIM_EXIT_OK;
}

int st_db_connect(st_db *db, sqlite3 **conn, char *err, size_t errlen)
{
    return open_conn(db, conn, err, errlen);
}

/* ------------------------------------------------------------------ group commit */

bool st_db_can_group_commit(const st_db *db)
{
    return db->vi && !strcmp(db->sync, "full");
}

int st_db_conn_group_commit(st_db *db, sqlite3 *conn, char *err, size_t errlen)
{
    if (!st_db_can_group_commit(db)) {
        snprintf(err, errlen, "group commit needs appsim's VFS and sync full");
        return SIM_ERR;
    }
    char *msg = NULL;
    if (sqlite3_exec(conn, "PRAGMA synchronous=NORMAL", NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "PRAGMA synchronous=NORMAL: %s", msg ? msg : "failed");
        sqlite3_free(msg);
        return SIM_ERR;
    }
    if (sqlite3_file_control(conn, "main", VF_FCNTL_GROUP_COMMIT, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "the connection is not on appsim's VFS");
        return SIM_ERR;
    }
    return SIM_OK;
}

int st_db_commit_durable(st_db *db, char *err, size_t errlen)
{
    if (!st_db_can_group_commit(db)) {
        snprintf(err, errlen, "group commit needs appsim's VFS and sync full");
        return SIM_ERR;
    }
    int rc = vf_wal_durable(db->vi);
    if (rc == SQLITE_OK) return SIM_OK;
    snprintf(err, errlen, "syncing the WAL of %s failed: %s", db->path, sqlite3_errstr(rc));
    return SIM_ERR;
}

void st_db_group_commit_stats(st_db *db, st_db_gc_stats *out)
{
    *out = (st_db_gc_stats){0};
    if (!db->vi) return;
    pthread_mutex_lock(&db->vi->gc_mu);
    out->commits = db->vi->gc_synced;
    out->wal_syncs = db->vi->gc_syncs;
    pthread_mutex_unlock(&db->vi->gc_mu);
    out->writes_ahead = atomic_load(&db->vi->gc_writes_ahead);
    out->blocks_ahead = atomic_load(&db->vi->gc_blocks_ahead);
}

/* ------------------------------------------------------------------ checkpoints */

/* The checkpoint connection's busy handler: until its deadline, wait for the next
 * release of a WAL-index lock (the writer's, or an old reader's) and try again. */
static int ck_busy(void *arg, int calls)
{
    st_db *db = arg;
    uint64_t now = sim_now_ns();
    if (now >= db->ck_deadline_ns) return 0;
    if (!db->vi) { /* SQLite's own -shm locks: poll */
        usleep(100);
        return 1;
    }
    /* a release between the failed attempt and the first call: just try again */
    if (calls > 0) {
        uint64_t left = db->ck_deadline_ns - now;
        vf_shm_wait_release(db->vi, db->ck_release_seq,
                            left < BUSY_SLICE_NS ? left : BUSY_SLICE_NS);
        /* with the write lock held, what it waits for is readers of the WAL: the ones
         * whose snapshots keep frames from being copied, then, to restart, every one */
        if (vf_ck_write_lock_ns(db->vi)) db->ck_locked_wait_ns += sim_now_ns() - now;
    }
    db->ck_release_seq = vf_shm_release_seq(db->vi);
    return 1;
}

/* Frames copied by a TRUNCATE checkpoint that succeeded: all of the generation it
 * ended. Called with db->mu held; gen0 and b0 as when it started. */
static void account_truncate(st_db *db, uint64_t gen0, uint64_t b0)
{
    uint64_t last;
    if (db->wal_gen != gen0) {
        /* a commit of the new generation reached the hook first and counted the restart */
        last = db->gen_last_frames;
    } else {
        last = db->wal_frames;
        db->wal_gen++;
        db->gen_last_frames = last;
        db->wal_frames = 0;
        db->ck_backfilled = 0;
    }
    db->ck_frames += last > b0 ? last - b0 : 0;
    set_hold(db, false);
}

uint64_t vf_ck_due_bytes(uint64_t trigger, uint64_t restart_bytes, uint64_t wal_bytes)
{
    if (!restart_bytes || trigger <= ST_DB_DEFAULT_CHECKPOINT_WAL_BYTES) return trigger;
    uint64_t room = wal_bytes < restart_bytes ? (restart_bytes - wal_bytes) / 4 : 0;
    if (room >= trigger) return trigger;
    return room > ST_DB_DEFAULT_CHECKPOINT_WAL_BYTES ? room : ST_DB_DEFAULT_CHECKPOINT_WAL_BYTES;
}

/* Adaptive flushing: the copy speeds up when the drive slows and the backlog grows, as
 * InnoDB's page cleaner flushes harder as its redo log fills, and for the same reason:
 * a WAL restart copies the backlog while writers wait. */
/* The largest backlog (frames) still copied at VF_DB_DEPTH_MIN. */
static uint64_t easy_backlog(uint64_t trigger)
{
    return VF_CK_EASY_TRIGGERS * (trigger ? trigger : 1);
}

unsigned vf_ck_write_depth(bool holds_writers, uint64_t backlog, uint64_t trigger)
{
    if (holds_writers) return VF_DB_DEPTH_MAX;
    uint64_t easy = easy_backlog(trigger);
    if (backlog <= easy) return VF_DB_DEPTH_MIN;
    uint64_t d = VF_DB_DEPTH_MIN * backlog / easy;
    return d < VF_DB_DEPTH_MAX ? (unsigned)d : VF_DB_DEPTH_MAX;
}

/* Frames in one checkpoint trigger with a WAL of n frames (due_bytes). */
static uint64_t trigger_frames(const st_db *db, uint64_t n)
{
    return due_bytes(db, n) / (db->page_size + WAL_FRAME_HEADER);
}

/* Runs one checkpoint on the checkpoint connection and records it; in modes other than
 * passive it waits for locks up to wait_ms. `deep`: writes at the full depth even in
 * passive mode (the catch-up before a restart). */
static int run_checkpoint(st_db *db, int mode, bool manual, bool deep, uint64_t wait_ms, char *err,
                          size_t errlen)
{
    int nlog = 0, nckpt = 0;
    pthread_mutex_lock(&db->mu);
    uint64_t w0 = db->wal_frames, b0 = db->ck_backfilled, gen0 = db->wal_gen;
    pthread_mutex_unlock(&db->mu);
    unsigned depth = vf_ck_write_depth(deep || manual || mode != SQLITE_CHECKPOINT_PASSIVE,
                                       w0 > b0 ? w0 - b0 : 0, trigger_frames(db, w0));
    if (db->vi) vf_set_db_depth(db->vi, depth);
    pthread_mutex_lock(&db->ck_conn_mu);
    uint64_t t0 = sim_now_ns();
    db->ck_deadline_ns = t0 + wait_ms * 1000000ull;
    int rc = sqlite3_wal_checkpoint_v2(db->ck_conn, "main", mode, &nlog, &nckpt);
    uint64_t dt = sim_now_ns() - t0;
    char msg[200];
    snprintf(msg, sizeof msg, "%s", sqlite3_errmsg(db->ck_conn));
    pthread_mutex_unlock(&db->ck_conn_mu);

    pthread_mutex_lock(&db->mu);
    db->ck_count++;
    if (manual) db->ck_manual++;
    db->ck_total_ns += dt;
    if (dt > db->ck_max_ns) db->ck_max_ns = dt;
    if (db->vi && depth > VF_DB_DEPTH_MIN) {
        db->ck_deep_count++;
        db->ck_deep_ns += dt;
    }
    if (rc == SQLITE_BUSY) {
        db->ck_busy++;
    } else if (rc != SQLITE_OK) {
        db->ck_errors++;
        snprintf(db->ck_last_error, sizeof db->ck_last_error, "%s", msg);
    }
    if (rc == SQLITE_OK && mode == SQLITE_CHECKPOINT_TRUNCATE && nlog == 0) {
        /* everything was copied, then the WAL restarted from nothing */
        account_truncate(db, gen0, b0);
    } else if (nlog >= 0 && nckpt >= 0) {
        /* a smaller WAL than before means a writer restarted it meanwhile */
        uint64_t base = (uint64_t)nlog < w0 ? 0 : b0;
        if ((uint64_t)nckpt > base) db->ck_frames += (uint64_t)nckpt - base;
        db->ck_backfilled = (uint64_t)nckpt;
        db->wal_frames = (uint64_t)nlog;
        /* the checkpoint's count is the WAL's own: a hold set by a late hook of the
         * previous generation ends here */
        if (db->wal_limit) set_hold(db, db->wal_frames >= db->hold_frames);
    }
    pthread_mutex_unlock(&db->mu);
    if (rc != SQLITE_OK && err) snprintf(err, errlen, "checkpoint of %s failed: %s", db->path, msg);
    return rc;
}

/* Frames of the WAL not copied yet. */
static uint64_t backlog_frames(st_db *db)
{
    pthread_mutex_lock(&db->mu);
    uint64_t left = db->wal_frames > db->ck_backfilled ? db->wal_frames - db->ck_backfilled : 0;
    pthread_mutex_unlock(&db->mu);
    return left;
}

/* How long the restart that ran from start_ns to end_ns held writers (db->mu held):
 * from the WAL write lock to its end, split into waiting for readers and the rest
 * (copying the last frames, syncing the database file). On SQLite's default VFS the
 * lock is not seen: the whole checkpoint stands for it, for the back-off alone. */
static void account_hold(st_db *db, uint64_t start_ns, uint64_t end_ns, bool gave_up)
{
    uint64_t locked = db->vi ? vf_ck_write_lock_ns(db->vi) : start_ns;
    uint64_t held = locked && locked <= end_ns ? end_ns - locked : 0;
    if (db->vi && held) {
        uint64_t readers = db->ck_locked_wait_ns < held ? db->ck_locked_wait_ns : held;
        db->rs_held_total_ns += held;
        if (held > db->rs_held_max_ns) db->rs_held_max_ns = held;
        db->rs_readers_ns += readers;
        db->rs_copy_ns += held - readers;
    }
    /* a restart that gave up held writers for nothing: let them go on a while */
    if (gave_up && held) {
        uint64_t gap = RESTART_BACKOFF_MS * 1000000ull;
        db->rs_not_before_ns = end_ns + (held > gap ? held : gap);
    }
}

/* Restarts the WAL (see the header): first copies what it can without holding writers
 * back, then a TRUNCATE checkpoint; records how long writers were held back. Before
 * the bound the wait for readers is short (a restart holds every writer while it
 * waits), doubling after each one that gave up; at the bound it is long. */
static void restart_wal(st_db *db, bool at_limit)
{
    uint64_t frame_bytes = db->page_size + WAL_FRAME_HEADER;
    /* more passes only while they converge: when commits outpace the copy, another
     * pass only lets the WAL grow towards the bound, where writers are held anyway */
    uint64_t left = backlog_frames(db), was = UINT64_MAX;
    for (int pass = 0; pass < RESTART_CATCHUP_PASSES; pass++) {
        if (left * frame_bytes < RESTART_CATCHUP_BYTES || left > was / 2) break;
        run_checkpoint(db, SQLITE_CHECKPOINT_PASSIVE, false, true, 0, NULL, 0);
        was = left;
        left = backlog_frames(db);
    }
    pthread_mutex_lock(&db->mu);
    uint64_t wait_ms = at_limit ? LIMIT_WAIT_MS : db->rs_wait_ms;
    pthread_mutex_unlock(&db->mu);
    if (db->vi) vf_ck_write_lock_clear(db->vi);
    db->ck_locked_wait_ns = 0;
    uint64_t t0 = sim_now_ns();
    int rc = run_checkpoint(db, SQLITE_CHECKPOINT_TRUNCATE, false, true, wait_ms, NULL, 0);
    uint64_t end = sim_now_ns(), dt = end - t0;
    pthread_mutex_lock(&db->mu);
    if (rc == SQLITE_OK) db->rs_done++;
    if (rc == SQLITE_BUSY) db->rs_busy++;
    if (rc == SQLITE_OK)
        db->rs_wait_ms = RESTART_WAIT_MS;
    else if (rc == SQLITE_BUSY && !at_limit)
        db->rs_wait_ms =
            2 * db->rs_wait_ms < RESTART_WAIT_MAX_MS ? 2 * db->rs_wait_ms : RESTART_WAIT_MAX_MS;
    /* an error, not readers: let writers go on (the result shows the checkpoint error
     * and the WAL past its bound) rather than stall them for good */
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) set_hold(db, false);
    if (at_limit) db->rs_at_limit++;
    db->rs_total_ns += dt;
    if (dt > db->rs_max_ns) db->rs_max_ns = dt;
    account_hold(db, t0, end, rc == SQLITE_BUSY);
    pthread_mutex_unlock(&db->mu);
}

static void wait_for_work(st_db *db)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 100 * 1000 * 1000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&db->cv, &db->mu, &ts);
}

static void *checkpointer(void *arg)
{
    st_db *db = arg;
    uint64_t seen_seq = UINT64_MAX;
    pthread_mutex_lock(&db->mu);
    while (!db->stop) {
        bool holding = db->hold_since_ns != 0;
        /* past half the bound, unless backing off after a give-up; at 7/8 always */
        bool restart = holding || (db->wal_limit && db->wal_frames >= db->restart_frames &&
                                   sim_now_ns() >= db->rs_not_before_ns);
        bool due = restart || checkpoint_due(db);
        /* a checkpoint that could not progress is retried after the next commit, or,
         * while writers are held back (no commits), after a pause */
        if (!due || (db->hook_seq == seen_seq && !holding)) {
            wait_for_work(db);
            continue;
        }
        if (db->hook_seq == seen_seq) wait_for_work(db);
        uint64_t before = db->ck_backfilled, gen = db->wal_gen;
        uint64_t seq = db->hook_seq;
        bool at_limit = holding;
        pthread_mutex_unlock(&db->mu);
        if (restart)
            restart_wal(db, at_limit);
        else
            run_checkpoint(db, db->ck_mode, false, false, CHECKPOINT_BUSY_MS, NULL, 0);
        pthread_mutex_lock(&db->mu);
        bool progressed = db->ck_backfilled != before || db->wal_gen != gen;
        seen_seq = progressed ? UINT64_MAX : seq;
    }
    pthread_mutex_unlock(&db->mu);
    return NULL;
}

/* On demand (after a load, before a copy): whatever --sync says, the result is on the
 * drive when this returns, so callers may mark a load complete after it. */
int st_db_checkpoint(st_db *db, char *err, size_t errlen)
{
    pthread_mutex_lock(&db->ck_conn_mu);
    sqlite3_exec(db->ck_conn, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
    pthread_mutex_unlock(&db->ck_conn_mu);
    int rc =
        run_checkpoint(db, SQLITE_CHECKPOINT_TRUNCATE, true, true, CHECKPOINT_BUSY_MS, err, errlen);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA synchronous=%s", db->sync);
    pthread_mutex_lock(&db->ck_conn_mu);
    sqlite3_exec(db->ck_conn, sql, NULL, NULL, NULL);
    pthread_mutex_unlock(&db->ck_conn_mu);
    return rc == SQLITE_OK ? 0 : SIM_EXIT_FAIL;
}

/* ------------------------------------------------------------------ open / close */

static int64_t file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -1 : (int64_t)st.st_size;
}

static void measure_sizes(const st_db *db, db_sizes *out)
{
    char wal[PATH_MAX];
    snprintf(wal, sizeof wal, "%s-wal", db->path);
    out->db_bytes = file_bytes(db->path);
    out->wal_bytes = file_bytes(wal);
}

/* Buffered target: the default VFS opens the files itself; list them in the manifest
 * and create them first (recording which files they are), so that appsim still writes
 * only what it recorded and SQLite finds each of them already there. */
static int create_buffered_files(st_db *db, bool create, char *err, size_t errlen)
{
    static const char *const suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char name[PATH_MAX];
        snprintf(name, sizeof name, "%s%s", db->name, suffix[i]);
        if (!create && i == 0 && !st_target_owns(db->target, name)) {
            snprintf(err, errlen, "database %s is not in the target's manifest", name);
            return SIM_EXIT_USAGE;
        }
        int fd = -1;
        int rc = st_target_create_file(db->target, name, 0, &fd, err, errlen);
        if (rc) return rc;
        close(fd);
    }
    return SIM_EXIT_OK;
}

int st_db_library_path(st_target *t, const char *name, char *path, size_t len, char *err,
                       size_t errlen)
{
    /* SQLite opens these beside the database on its own (rollback journal, WAL, WAL
     * index): none may be a link or a file appsim did not create. */
    static const char *const sidecar[] = {"-journal", "-wal", "-shm"};
    char side[PATH_MAX], ignored[PATH_MAX];
    for (int i = 0; i < 3; i++) {
        snprintf(side, sizeof side, "%s%s", name, sidecar[i]);
        int rc = st_target_library_path(t, side, false, ignored, sizeof ignored, err, errlen);
        if (rc) return rc;
    }
    return st_target_library_path(t, name, true, path, len, err, errlen);
}

/* The options of st_db_open checked against the target: the sync and checkpoint mode
 * (their indexes into *si, *mi), the name, and the WAL and buffer minimums for the
 * target's page size (*ps). SIM_EXIT_OK or SIM_EXIT_USAGE with err. */
static int check_open(st_target *t, const char *name, const st_db_opts *opts, int *si, int *mi,
                      uint32_t *ps, char *err, size_t errlen)
{
    const char *sync = opts->sync ? opts->sync : "full";
    const char *mode = opts->checkpoint_mode ? opts->checkpoint_mode : "passive";
    *si = find_name(sync_names, 3, sync);
    *mi = find_name(mode_names, 4, mode);
    if (*si < 0) {
        snprintf(err, errlen, "--sync %s: expected full, normal or off", sync);
        return SIM_EXIT_USAGE;
    }
    if (*mi < 0) {
        snprintf(err, errlen, "checkpoint mode %s: expected passive, full, restart or truncate",
                 mode);
        return SIM_EXIT_USAGE;
    }
    if (!name || !*name || strchr(name, '/')) {
        snprintf(err, errlen, "database name '%s' must be a plain file name", name ? name : "");
        return SIM_EXIT_USAGE;
    }
    if (st_target_is_device(t)) {
        snprintf(err, errlen,
                 "%s is a block device: SQLite workloads need a directory on a filesystem of "
                 "the drive (make one, mount it, and pass the directory)",
                 st_target_path(t));
        return SIM_EXIT_USAGE;
    }
    *ps = page_size_for(t, name);
    uint64_t min_limit = (uint64_t)MIN_WAL_LIMIT_FRAMES * (*ps + WAL_FRAME_HEADER);
    if (opts->wal_limit_bytes && opts->wal_limit_bytes < min_limit) {
        char a[32], b[32];
        snprintf(err, errlen,
                 "WAL limit %s is too small: the minimum is %s (%d frames of %u-byte pages)",
                 sim_format_size(opts->wal_limit_bytes, a, sizeof a),
                 sim_format_size(min_limit, b, sizeof b), MIN_WAL_LIMIT_FRAMES, *ps);
        return SIM_EXIT_USAGE;
    }
    uint64_t min = st_db_min_buffer(opts, *ps);
    if (opts->buffer_bytes < min) {
        char a[32], b[32];
        snprintf(err, errlen,
                 "--buffer %s is too small: the minimum is %s (%d pages of %u bytes for each "
                 "of %d connections and the checkpointer)",
                 sim_format_size(opts->buffer_bytes, a, sizeof a),
                 sim_format_size(min, b, sizeof b), MIN_PAGES_PER_CONNECTION, *ps,
                 opts->max_connections > 0 ? opts->max_connections : 1);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* A database's settings from checked options; its name and path are NULL when they did
 * not fit (the caller says so). */
static st_db *new_db(st_target *t, const char *name, const st_db_opts *opts, int si, int mi,
                     uint32_t ps)
{
    st_db *db = sim_xcalloc(1, sizeof *db);
    char pbuf[PATH_MAX];
    db->target = t;
    db->name = sim_xstrdup(name);
    char abs[PATH_MAX];
    /* absolute, as the VFS names its files (a target may be given relative) */
    if (vf_abs_path(st_target_file_path(t, name, pbuf, sizeof pbuf), abs, sizeof abs) == 0)
        db->path = sim_xstrdup(abs);
    db->buffered = st_target_buffered(t);
    db->page_size = ps;
    db->buffer_bytes = opts->buffer_bytes;
    db->max_connections = opts->max_connections > 0 ? opts->max_connections : 1;
    db->sync = sync_names[si];
    db->engine = opts->engine;
    db->ck_mode_name = mode_names[mi];
    db->ck_mode = mode_values[mi];
    db->ck_wal_bytes = opts->checkpoint_wal_bytes ? opts->checkpoint_wal_bytes
                                                  : ST_DB_DEFAULT_CHECKPOINT_WAL_BYTES;
    db->ck_taper = opts->checkpoint_taper;
    db->wal_limit = wal_limit_of(opts, db->ck_wal_bytes);
    db->restart_frames = db->wal_limit / 2 / (ps + WAL_FRAME_HEADER);
    db->hold_frames = db->wal_limit / 8 * 7 / (ps + WAL_FRAME_HEADER);
    pthread_mutex_init(&db->mu, NULL);
    db->rs_wait_ms = RESTART_WAIT_MS;
    pthread_mutex_init(&db->ck_conn_mu, NULL);
    pthread_cond_init(&db->cv, NULL);
    return db;
}

/* The database's files: SQLite's own on a buffered target (listed in the manifest
 * first), else an instance of appsim's VFS with its buffer pool. An exit status. */
static int attach_files(st_db *db, const st_db_opts *opts, bool create, int si, char *err,
                        size_t errlen)
{
    st_target *t = db->target;
    if (db->buffered) {
        /* The database's memory is SQLite's own cache, split over its connections;
         * the page cache comes on top of it (the result says so). */
        uint64_t pages = opts->buffer_bytes / db->page_size / (uint64_t)(db->max_connections + 1);
        db->conn_cache_pages = pages > INT_MAX ? INT_MAX : (int)pages;
        int rc = create_buffered_files(db, create, err, errlen);
        char lp[PATH_MAX];
        if (!rc) rc = st_db_library_path(t, db->name, lp, sizeof lp, err, errlen);
        if (!rc) {
            free(db->path);
            db->path = sim_xstrdup(lp); /* through the resolved directory: no symlink in it */
        }
        return rc;
    }
    db->conn_cache_pages = CONN_CACHE_PAGES;
    if (!create && !st_target_owns(t, db->name)) {
        snprintf(err, errlen, "database %s is not in the target's manifest (create it first)",
                 db->path);
        return SIM_EXIT_USAGE;
    }
    int rc = vf_instance_new(t, db->name, opts->buffer_bytes, db->page_size, opts->engine, &db->vi,
                             err, errlen);
    if (rc == SIM_EXIT_OK) {
        db->vi->flush_at_commit = si != 0;
        db->vi->wal_keep_bytes = db->wal_limit;
    }
    return rc;
}

/* The checkpointer's connection and thread. An exit status. */
static int start_checkpointer(st_db *db, char *err, size_t errlen)
{
    int rc = open_conn(db, &db->ck_conn, err, errlen);
    if (rc) return rc;
    /* full/restart/truncate checkpoints hold the WAL write lock while they wait for
     * readers: give up (recorded as busy) well before a waiting writer would. */
    sqlite3_busy_handler(db->ck_conn, ck_busy, db);
    if (db->vi) sqlite3_file_control(db->ck_conn, "main", VF_FCNTL_CHECKPOINTER, NULL);
    measure_sizes(db, &db->sizes_at_open);
    if (pthread_create(&db->ck_thread, NULL, checkpointer, db)) {
        snprintf(err, errlen, "cannot start the checkpoint thread");
        return SIM_EXIT_FAIL;
    }
    db->ck_started = true;
    return SIM_EXIT_OK;
}

/* SQLite's process-wide settings, made once before its first use (sqlite3_config is
 * refused after sqlite3_initialize). Memory statistics off: with them on (SQLite's
 * default) every allocation of every connection takes one process-wide mutex, and
 * Debian's build has no lookaside (SQLITE_OMIT_LOOKASIDE), so statements allocate
 * often. At 16 connections (tpcc scale 100, three pairs) it took 4-22 % off the CPU
 * per transaction and 6-28 % off the writer lock's holds, for 2-6 % more TPS
 * (docs/tpcc.md). appsim reads no SQLite memory statistic. */
static bool failstop_registered;

static void sqlite_global_init(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    /* after the configuration: registering a VFS initializes SQLite */
    failstop_registered = vf_failstop_register() == SQLITE_OK;
    if (!failstop_registered)
        sim_warn("SQLite's fail-stop VFS could not be registered: through SQLite's own VFS a "
                 "storage error may not stop the run");
}

static void sqlite_init_once(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, sqlite_global_init);
}

const char *st_db_failstop_vfs(void)
{
    sqlite_init_once();
    return failstop_registered ? vf_failstop_name() : NULL;
}

int st_db_open(st_target *t, const char *name, const st_db_opts *opts, bool create, st_db **out,
               char *err, size_t errlen)
{
    sqlite_init_once();
    *out = NULL;
    int si, mi;
    uint32_t ps;
    int rc = check_open(t, name, opts, &si, &mi, &ps, err, errlen);
    if (rc) return rc;
    st_db *db = new_db(t, name, opts, si, mi, ps);
    if (!db->name || !db->path) {
        snprintf(err, errlen, "path of database %s in %s is too long", name, st_target_path(t));
        rc = SIM_EXIT_USAGE;
    } else {
        rc = attach_files(db, opts, create, si, err, errlen);
    }
    if (rc == SIM_EXIT_OK) rc = start_checkpointer(db, err, errlen);
    if (rc) {
        st_db_close(db);
        return rc;
    }
    *out = db;
    return SIM_EXIT_OK;
}

void st_db_close(st_db *db)
{
    if (!db) return;
    if (db->ck_started) {
        pthread_mutex_lock(&db->mu);
        db->stop = true;
        pthread_cond_broadcast(&db->cv);
        pthread_mutex_unlock(&db->mu);
        pthread_join(db->ck_thread, NULL);
    }
    if (db->ck_conn) sqlite3_close(db->ck_conn);
    vf_instance_free(db->vi);
    pthread_mutex_destroy(&db->mu);
    pthread_mutex_destroy(&db->ck_conn_mu);
    pthread_cond_destroy(&db->cv);
    free(db->name);
    free(db->path);
    free(db);
}

/* ------------------------------------------------------------------ results */

typedef struct db_snap {
    bp_stats pool;
    vf_counters ctr[VF_NFILES];
    uint64_t ck_count, ck_frames;
    uint64_t wal_frames, wal_gen;
} db_snap;

static void take_snap(const st_db *cdb, db_snap *s)
{
    st_db *db = (st_db *)cdb;
    memset(s, 0, sizeof *s);
    if (db->vi) {
        bp_get_stats(db->vi->pool, &s->pool);
        for (int k = 0; k < VF_NFILES; k++)
            vf_counters_get(db->vi, k, &s->ctr[k]);
    }
    pthread_mutex_lock(&db->mu);
    s->ck_count = db->ck_count;
    s->ck_frames = db->ck_frames;
    s->wal_frames = db->wal_frames;
    s->wal_gen = db->wal_gen;
    pthread_mutex_unlock(&db->mu);
}

static json_t *file_json(const vf_counters *c)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f}", "hits", (json_int_t)c->hits, "misses",
                     (json_int_t)c->misses, "device_reads", (json_int_t)c->dev_reads,
                     "device_read_bytes", (json_int_t)c->dev_read_bytes, "device_writes",
                     (json_int_t)c->dev_writes, "device_write_bytes",
                     (json_int_t)c->dev_write_bytes, "syncs", (json_int_t)c->syncs, "sync_avg_us",
                     c->syncs ? (double)c->sync_ns / (double)c->syncs / 1e3 : 0.0);
}

static json_t *size_json(int64_t bytes)
{
    return bytes < 0 ? json_null() : json_integer((json_int_t)bytes);
}

/* Times writers were held back at the bound and for how long (db->mu held). */
static json_t *held_json(const st_db *db)
{
    if (!db->vi) return json_string("never: SQLite's default VFS cannot hold them back");
    uint64_t total = db->hold_total_ns, max = db->hold_max_ns;
    if (db->hold_since_ns) { /* still holding */
        uint64_t dt = sim_now_ns() - db->hold_since_ns;
        total += dt;
        if (dt > max) max = dt;
    }
    return json_pack(
        "{s:I,s:I,s:f,s:f}", "from_bytes", (json_int_t)wal_bytes_of(db, db->hold_frames), "count",
        (json_int_t)db->hold_count, "ms_total", (double)total / 1e6, "ms_max", (double)max / 1e6);
}

/* How long restarts held writers back, what for, and the waits they were given
 * (db->mu held). */
static json_t *restart_held_json(const st_db *db)
{
    if (!db->vi) return json_string("not measured: SQLite's default VFS");
    return json_pack("{s:i,s:i,s:i,s:f,s:f,s:f,s:f}", "readers_wait_ms", RESTART_WAIT_MS,
                     "readers_wait_max_ms", RESTART_WAIT_MAX_MS, "backoff_ms", RESTART_BACKOFF_MS,
                     "ms_total", (double)db->rs_held_total_ns / 1e6, "ms_max",
                     (double)db->rs_held_max_ns / 1e6, "copying_ms", (double)db->rs_copy_ns / 1e6,
                     "waiting_for_readers_ms", (double)db->rs_readers_ns / 1e6);
}

/* The WAL bound and how it was kept (db->mu held). */
static json_t *wal_limit_json(const st_db *db)
{
    if (!db->wal_limit) return json_pack("{s:s}", "policy", "none (SQLite's own: no bound)");
    uint64_t max = wal_bytes_of(db, db->wal_frames_max);
    return json_pack(
        "{s:s,s:I,s:I,s:b,s:I,s:I,s:I,s:I,s:f,s:f,s:o,s:o}", "policy",
        "restart (TRUNCATE checkpoint) from half the limit; writers held back from 7/8",
        "limit_bytes", (json_int_t)db->wal_limit, "restart_from_bytes",
        (json_int_t)wal_bytes_of(db, db->restart_frames), "within_limit", max <= db->wal_limit,
        "wal_restarts", (json_int_t)db->wal_gen, "restart_checkpoints", (json_int_t)db->rs_done,
        "restart_gave_up", (json_int_t)db->rs_busy, "restarts_at_limit",
        (json_int_t)db->rs_at_limit, "restart_ms_total", (double)db->rs_total_ns / 1e6,
        "restart_ms_max", (double)db->rs_max_ns / 1e6, "restart_held", restart_held_json(db),
        "writers_held", held_json(db));
}

/* The checkpointer's write depth (adaptive flushing) and how often it went deeper
 * (db->mu held). */
static json_t *write_depth_json(const st_db *db)
{
    if (!db->vi) return json_string("SQLite's default VFS: the page cache writes back");
    return json_pack("{s:s,s:i,s:i,s:I,s:I,s:f}", "policy",
                     "passive checkpoints deeper as the WAL's uncopied frames grow; those "
                     "that hold writers back at the maximum",
                     "min", (int)VF_DB_DEPTH_MIN, "max", (int)VF_DB_DEPTH_MAX,
                     "from_backlog_frames", (json_int_t)easy_backlog(trigger_frames(db, 0)),
                     "deeper_count", (json_int_t)db->ck_deep_count, "deeper_ms",
                     (double)db->ck_deep_ns / 1e6);
}

uint64_t st_db_buffer_bytes(const st_db *db)
{
    return db->buffer_bytes;
}

uint64_t st_db_data_bytes_at_open(const st_db *db)
{
    return db->sizes_at_open.db_bytes > 0 ? (uint64_t)db->sizes_at_open.db_bytes : 0;
}

json_t *st_db_json(const st_db *cdb)
{
    st_db *db = (st_db *)cdb;
    json_t *j = json_object();
    json_object_set_new(j, "vfs", json_string(db->vi ? "appsim-direct" : "unix (SQLite default)"));
    json_object_set_new(j, "buffered", json_boolean(db->buffered));
    json_object_set_new(j, "page_cache",
                        json_string(db->buffered ? "in play: SQLite's default VFS reads and "
                                                   "writes through the page cache"
                                                 : "bypassed: O_DIRECT on the database and WAL"));
    json_object_set_new(j, "buffer_bytes", json_integer((json_int_t)db->buffer_bytes));
    json_object_set_new(j, "page_size", json_integer(db->page_size));
    json_object_set_new(j, "connection_cache_pages", json_integer(db->conn_cache_pages));
    json_object_set_new(j, "max_connections", json_integer(db->max_connections));
    json_object_set_new(j, "sync", json_string(db->sync));
    json_object_set_new(j, "wal_index",
                        json_string(db->vi ? "process memory" : "-shm file (mmap)"));
    db_snap s;
    take_snap(db, &s);
    if (db->vi) {
        /* the engine actually in use (io_uring may have fallen back to psync) */
        const char *eng = db->engine ? db->engine : "io_uring";
        pthread_mutex_lock(&db->vi->engines_mu);
        if (db->vi->nengines) eng = st_engine_name(db->vi->engines[0].e);
        json_object_set_new(j, "engine", json_string(eng));
        pthread_mutex_unlock(&db->vi->engines_mu);
        json_object_set_new(j, "pool_pages", json_integer((json_int_t)s.pool.frames));
        json_object_set_new(j, "replacement", json_string("clock"));
        json_object_set_new(j, "hits", json_integer((json_int_t)s.pool.hits));
        json_object_set_new(j, "misses", json_integer((json_int_t)s.pool.misses));
        json_object_set_new(j, "evictions", json_integer((json_int_t)s.pool.evictions));
        uint64_t look = s.pool.hits + s.pool.misses;
        json_object_set_new(j, "hit_ratio",
                            json_real(look ? (double)s.pool.hits / (double)look : 0.0));
        json_object_set_new(j, "write_allocs", json_integer((json_int_t)s.pool.write_allocs));
        json_object_set_new(j, "pool_waits", json_integer((json_int_t)s.pool.waits));
        json_object_set_new(j, "db_file", file_json(&s.ctr[VF_MAIN]));
        json_object_set_new(j, "wal_file", file_json(&s.ctr[VF_WAL]));
    } else {
        json_object_set_new(j, "hits", json_null());
        json_object_set_new(j, "misses", json_null());
        json_object_set_new(j, "evictions", json_null());
    }
    pthread_mutex_lock(&db->mu);
    json_t *ck =
        json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:I}", "thread", "background",
                  "mode", db->ck_mode_name, "wal_bytes_trigger", (json_int_t)db->ck_wal_bytes,
                  "count", (json_int_t)db->ck_count, "manual", (json_int_t)db->ck_manual, "busy",
                  (json_int_t)db->ck_busy, "errors", (json_int_t)db->ck_errors, "frames_backfilled",
                  (json_int_t)db->ck_frames, "wal_frames_max", (json_int_t)db->wal_frames_max,
                  "total_ms", (double)db->ck_total_ns / 1e6, "max_ms", (double)db->ck_max_ns / 1e6,
                  "wal_bytes_max", (json_int_t)wal_bytes_of(db, db->wal_frames_max));
    if (db->ck_errors) json_object_set_new(ck, "last_error", json_string(db->ck_last_error));
    if (due_bytes(db, 0) != due_bytes(db, db->restart_frames))
        json_object_set_new(ck, "trigger_near_restart",
                            json_string("a quarter of the room left before the WAL's restart, "
                                        "at least 4 MiB"));
    json_object_set_new(ck, "write_depth", write_depth_json(db));
    json_object_set_new(ck, "wal_limit", wal_limit_json(db));
    pthread_mutex_unlock(&db->mu);
    json_object_set_new(j, "checkpoint", ck);
    db_sizes now;
    measure_sizes(db, &now);
    json_object_set_new(j, "files",
                        json_pack("{s:{s:o,s:o},s:{s:o,s:o}}", "database", "start_bytes",
                                  size_json(db->sizes_at_open.db_bytes), "end_bytes",
                                  size_json(now.db_bytes), "wal", "start_bytes",
                                  size_json(db->sizes_at_open.wal_bytes), "end_bytes",
                                  size_json(now.wal_bytes)));
    return j;
}

/* ------------------------------------------------------------------ probe */

static void *probe_snapshot(void *ctx)
{
    db_snap *s = sim_xmalloc(sizeof *s);
    if (s) take_snap(ctx, s);
    return s;
}

/* The WAL's size at the end of the interval and its restarts during it. */
static void wal_probe_fields(const st_db *db, const db_snap *a, const db_snap *b, json_t *j)
{
    json_object_set_new(j, "wal_bytes", json_integer((json_int_t)wal_bytes_of(db, b->wal_frames)));
    json_object_set_new(j, "wal_restarts", json_integer((json_int_t)(b->wal_gen - a->wal_gen)));
}

static json_t *probe_delta(void *ctx, const void *from, const void *to, double seconds,
                           uint64_t units)
{
    const db_snap *a = from, *b = to;
    st_db *db = ctx;
    json_t *j = json_object();
    if (!db->vi) {
        json_object_set_new(j, "pool", json_string("none: buffered target, page cache in play"));
        json_object_set_new(j, "checkpoints",
                            json_integer((json_int_t)(b->ck_count - a->ck_count)));
        wal_probe_fields(db, a, b, j);
        return j;
    }
    uint64_t hits = b->pool.hits - a->pool.hits, misses = b->pool.misses - a->pool.misses;
    uint64_t ev = b->pool.evictions - a->pool.evictions;
    uint64_t dbr = b->ctr[VF_MAIN].dev_reads - a->ctr[VF_MAIN].dev_reads;
    uint64_t walr = b->ctr[VF_WAL].dev_reads - a->ctr[VF_WAL].dev_reads;
    uint64_t dbw = b->ctr[VF_MAIN].dev_writes - a->ctr[VF_MAIN].dev_writes;
    uint64_t walw = b->ctr[VF_WAL].dev_writes - a->ctr[VF_WAL].dev_writes;
    uint64_t syncs =
        b->ctr[VF_WAL].syncs - a->ctr[VF_WAL].syncs + b->ctr[VF_MAIN].syncs - a->ctr[VF_MAIN].syncs;
    json_object_set_new(j, "hits", json_integer((json_int_t)hits));
    json_object_set_new(j, "misses", json_integer((json_int_t)misses));
    json_object_set_new(j, "evictions", json_integer((json_int_t)ev));
    json_object_set_new(j, "hit_ratio",
                        json_real(hits + misses ? (double)hits / (double)(hits + misses) : 0.0));
    json_object_set_new(j, "db_reads", json_integer((json_int_t)dbr));
    json_object_set_new(j, "wal_reads", json_integer((json_int_t)walr));
    json_object_set_new(j, "db_writes", json_integer((json_int_t)dbw));
    json_object_set_new(j, "wal_writes", json_integer((json_int_t)walw));
    json_object_set_new(j, "syncs", json_integer((json_int_t)syncs));
    json_object_set_new(j, "checkpoints", json_integer((json_int_t)(b->ck_count - a->ck_count)));
    uint64_t io_ns = 0, read_ns = 0;
    for (int k = 0; k < VF_NFILES; k++) {
        io_ns += b->ctr[k].io_ns - a->ctr[k].io_ns;
        read_ns += b->ctr[k].read_ns - a->ctr[k].read_ns;
    }
    json_object_set_new(j, "io_in_flight",
                        json_real(seconds > 0 ? (double)io_ns / (seconds * 1e9) : 0.0));
    json_object_set_new(j, "reads_in_flight",
                        json_real(seconds > 0 ? (double)read_ns / (seconds * 1e9) : 0.0));
    json_object_set_new(j, "frames_backfilled",
                        json_integer((json_int_t)(b->ck_frames - a->ck_frames)));
    wal_probe_fields(db, a, b, j);
    if (units > 0) {
        double u = (double)units;
        json_object_set_new(j, "misses_per_unit", json_real((double)misses / u));
        json_object_set_new(j, "device_reads_per_unit", json_real((double)(dbr + walr) / u));
        json_object_set_new(j, "device_writes_per_unit", json_real((double)(dbw + walw) / u));
    }
    json_object_set_new(j, "seconds", json_real(seconds));
    return j;
}

static void probe_free(void *ctx, void *snap)
{
    free(snap);
}

const sim_probe_ops st_db_pool_probe = {
    .name = "db_pool",
    .snapshot = probe_snapshot,
    .delta = probe_delta,
    .free_snapshot = probe_free,
};
