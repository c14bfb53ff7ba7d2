/*
 * oltp/tpcc_cmd.c: `appsim tpcc [prepare|run|check|cleanup]`: options, the target,
 * preparing instances (space check, parallel loads, pristine copies), checking, and
 * cleaning up. The measured run itself is in tpcc_run.c.
 *
 * A database counts as prepared only when its metadata row says complete and its
 * scale matches; an unfinished load is removed and loaded again. Databases are opened
 * only through st_db (the direct-I/O VFS and its buffer pool) on a directory target.
 */
#include "oltp/tpcc_cmd_internal.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Measured on this project's loader (docs/tpcc.md, bench_tpcc_load): the item table
 * plus 4 KiB-page overheads, and each warehouse's share, as SQLite files after a
 * checkpoint; the margin covers the WAL during the load. */
#define EST_BASE_BYTES (10ull << 20)
#define EST_WH_BYTES (80ull << 20)
#define EST_MARGIN 1.15
/* Growth per completed New-Order (order, new_order, ~10 order lines, history share). */
#define EST_NEW_ORDER_BYTES 1200.0
/* Used to bound run growth when pacing is off (no offered-load bound exists). */
#define EST_OFF_TPS_PER_CONNECTION 2000.0
/* Buffer when --buffer is not given: the reference setup's memory-to-data ratio
 * (48 GB buffer for a 333 GB database, methodology section 1). */
#define REF_BUFFER_RATIO (48.0 / 333.0)
#define MIN_BUFFER (8ull << 20)
#define LOAD_BUFFER_MAX (512ull << 20)

/* This invocation's options at their defaults. Nothing of an invocation is kept in
 * file-level state: suite may run tpcc twice in one process. */
ST_REGISTER_TARGET_FILES(tpcc, "tpcc-*") /* tpcc-N.db, tpcc-N.pristine */

static void tpcc_cli_defaults(tpcc_options *o)
{
    *o = (tpcc_options){
        .scale = 1,
        .vusers = 0,
        .instances = 1,
        .connections = 0,
        .duration_ns = 30ull * 1000000000ull,
        .warmup_ns = 5ull * 1000000000ull,
        .steady_round_ns = SIM_STEADY_DEFAULT_ROUND_NS,
        .steady_max_rounds = SIM_STEADY_DEFAULT_MAX_ROUNDS,
        .pacing = "review",
        .cycle_ns = 0,
        .mix = "45,43,4,4,4",
        .buffer = 0,
        .seed = 1,
        .report_interval_ns = SIM_REPORT_INTERVAL_DEFAULT_NS,
        .json = NULL,
        .sync = "full",
        .integrity = "full",
        .keep_free = 1ull << 30,
        .engine = "io_uring",
        .prefetch = "on",
        .group_commit = "on",
        .cpu_sched = "batch",
    };
}

/* The size of the job: warehouses, users, instances, connections. */
static void size_opts(tpcc_options *o, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "scale",
         .kind = SIM_OPT_U64,
         .dst = &o->scale,
         .min = 1,
         .max = 100000,
         .help = "warehouses per instance (about 73 MiB of database each)"},
        {.name = "vusers",
         .kind = SIM_OPT_STRING,
         .dst = &o->vusers_text,
         .metavar = "N[,N...]",
         .help = "virtual users per instance (default or 0: 10 per warehouse, as in TPC-C); a list "
                 "(100,500,1000) runs one closed-loop point per count with the chosen pacing "
                 "(user steps, docs/tpcc.md)"},
        {.name = "instances",
         .kind = SIM_OPT_U64,
         .dst = &o->instances,
         .min = 1,
         .max = 64,
         .help = "independent databases run at once, each with the full scale and users"},
        {.name = "connections",
         .kind = SIM_OPT_U64,
         .dst = &o->connections,
         .min = 0,
         .max = TPCC_MAX_CONNECTIONS,
         .help = "worker connections per instance (0 = one per 64 users, at least 32, at most one "
                 "per user); one more per 8 of them "
                 "runs deferred deliveries"},
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* The run: its phases, the users' pacing and the transaction mix. */
static void run_opts(tpcc_options *o, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        SIM_VOCAB_DURATION(&o->duration_ns, 0.001, ""),
        SIM_VOCAB_WARMUP(&o->warmup_ns, "; \"steady\": until the TPS is steady (SNIA PTS rule, "
                                        "rounds of --steady-round)"),
        SIM_STEADY_OPTS(&o->steady_round_ns, &o->steady_max_rounds),
        {.name = "pacing",
         .kind = SIM_OPT_CHOICE,
         .dst = &o->pacing,
         .choices = "review|spec|off",
         .help = "review: mean cycle 4.74 s per user (published regime); spec: TPC-C keying and "
                 "think times; off: no waits"},
        {.name = "cycle",
         .kind = SIM_OPT_DURATION,
         .dst = &o->cycle_ns,
         .help = "mean wait between a user's transactions (negative exponential; overrides "
                 "--pacing; 0 = the pacing's own)"},
        {.name = "mix",
         .kind = SIM_OPT_STRING,
         .dst = &o->mix,
         .help = "percent new_order,payment,order_status,delivery,stock_level (shuffled deck)"},
        {.name = "rate",
         .kind = SIM_OPT_DOUBLE,
         .dst = &o->rate,
         .min = 0,
         .max = 1e9,
         .help = "open loop: transactions per second per instance, arriving whatever the "
                 "completions (the TPC-C mix, no user waits; latency from each arrival); 0 = "
                 "closed loop with --pacing"},
        {.name = "uniform",
         .kind = SIM_OPT_FLAG,
         .dst = &o->uniform,
         .help = "open loop (--rate, --curve): evenly spaced arrivals instead of exponential"},
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* The database on the drive, the output and the target. */
static void database_opts(tpcc_options *o, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "buffer",
         .kind = SIM_OPT_SIZE,
         .dst = &o->buffer,
         .help = "database buffer per instance (0 = 14.4 % of the database, the reference "
                 "48 GB : 333 GB ratio)"},
        SIM_VOCAB_SEED(&o->seed, "data and input"),
        SIM_VOCAB_REPORT_INTERVAL(&o->report_interval_ns),
        SIM_VOCAB_JSON(&o->json, NULL),
        {.name = "sync",
         .kind = SIM_OPT_CHOICE,
         .dst = &o->sync,
         .choices = "full|normal|off",
         .help = "SQLite synchronous setting for the run"},
        {.name = "integrity",
         .kind = SIM_OPT_CHOICE,
         .dst = &o->integrity,
         .choices = "full|quick|off",
         .help = "SQLite integrity check done by the check (default full for `check`, off when no "
                 "action is given)"},
        OLTP_OPT_PREFETCH(o->prefetch),
        OLTP_OPT_GROUP_COMMIT(o->group_commit),
        SIM_VOCAB_CPU_SCHED(&o->cpu_sched),
        {.name = "wal-limit",
         .kind = SIM_OPT_SIZE,
         .dst = &o->wal_limit,
         .help = "the SQLite WAL's bound: restarted from half of it on, writers held back from "
                 "7/8 (0 = a sixteenth of the database's estimated size, 64 MiB (or the "
                 "buffer's size if smaller, at least 16 MiB) to 1 GiB; e.g. 1T for "
                 "practically none)"},
        {.name = "keep-pristine",
         .kind = SIM_OPT_FLAG,
         .dst = &o->keep_pristine,
         .help = "keep a copy of the loaded database and restore it before each run"},
        {.name = "keep-free",
         .kind = SIM_OPT_SIZE,
         .dst = &o->keep_free,
         .help = "free space to leave on the target's filesystem: the load needs its estimate "
                 "plus this, and a run stops when less is left (0 = no limit)"},
        SIM_VOCAB_QUIET(&o->quiet, "no progress lines"),
        /* The shared target options without --allow-destroy: tpcc's databases are files,
         * so a block device target is refused whatever the flag says. */
        SIM_VOCAB_TARGET(&o->target.path, "DIR",
                         "directory on the drive to test (created if missing; appsim creates its "
                         "files inside)"),
        ST_OPT_BUFFERED(o->target.buffered),
        ST_OPT_IOENGINE(o->engine, "io-engine"),
        OLTP_CURVE_OPTS(&o->curve),
        SIM_OPT_END,
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* This invocation's options at their defaults, and its option table (pointing into
 * o) in opts[0..n). */
static void tpcc_cli_init(tpcc_options *o, sim_opt *opts, size_t n)
{
    tpcc_cli_defaults(o);
    oltp_curve_cli_defaults(&o->curve);
    size_t at = 0;
    size_opts(o, opts, n, &at);
    run_opts(o, opts, n, &at);
    database_opts(o, opts, n, &at);
}

static const char usage_text[] =
    "appsim tpcc [prepare|run|check|cleanup] --target DIR [options]\n"
    "  TPC-C-like OLTP on SQLite. No action: prepare (if no complete database of this\n"
    "  scale is in the target), run, then check.";

void tpcc_db_name(int instance, char *buf, size_t len)
{
    snprintf(buf, len, "tpcc-%d.db", instance + 1);
}

void tpcc_pristine_name(int instance, char *buf, size_t len)
{
    snprintf(buf, len, "tpcc-%d.pristine", instance + 1);
}

/* The marker of a load under way: created before the database, removed once its
 * completion is durable. The load writes with no journal, so a load that was
 * interrupted, failed or killed can leave a file SQLite cannot even read ("malformed");
 * the marker tells that file from a database that was damaged after it was complete. */
static void loading_marker_name(int instance, char *buf, size_t len)
{
    snprintf(buf, len, "tpcc-%d.db-loading", instance + 1);
}

static bool load_unfinished(const st_target *t, int instance)
{
    char marker[64];
    loading_marker_name(instance, marker, sizeof marker);
    return st_target_owns(t, marker);
}

/* A usage error: instance i's load did not finish; says what to do. */
static int refuse_unfinished(const tpcc_options *o, st_target *t, int i, const char *action)
{
    sim_error("tpcc %s: instance %d's database is incomplete: its load was interrupted or "
              "failed; run `appsim tpcc prepare --target %s --scale %llu` to load it again "
              "(or `appsim tpcc cleanup --target %s` to remove it)",
              action, i + 1, st_target_path(t), (unsigned long long)o->scale, st_target_path(t));
    return SIM_EXIT_USAGE;
}

uint64_t tpcc_estimate_bytes(uint64_t scale)
{
    return (uint64_t)((double)(EST_BASE_BYTES + EST_WH_BYTES * scale) * EST_MARGIN);
}

uint64_t tpcc_connections_of(const tpcc_options *o, uint64_t vusers)
{
    if (o->connections) return o->connections;
    uint64_t n = (vusers + TPCC_USERS_PER_CONNECTION - 1) / TPCC_USERS_PER_CONNECTION;
    if (n < TPCC_MIN_DEFAULT_CONNECTIONS) n = TPCC_MIN_DEFAULT_CONNECTIONS;
    if (n > TPCC_MAX_CONNECTIONS) n = TPCC_MAX_CONNECTIONS;
    return vusers < n ? vusers : n;
}

/* --wal-limit, or the default that grows with the database (TPCC_WAL_LIMIT_SHARE); its
 * floor is the buffer's size where that is under storage's default floor
 * (TPCC_MIN_WAL_LIMIT at least). */
static uint64_t wal_limit_of(const tpcc_options *o, uint64_t buffer_bytes)
{
    if (o->wal_limit) return o->wal_limit;
    uint64_t floor = ST_DB_DEFAULT_WAL_LIMIT;
    if (buffer_bytes < floor)
        floor = buffer_bytes > TPCC_MIN_WAL_LIMIT ? buffer_bytes : TPCC_MIN_WAL_LIMIT;
    uint64_t limit = tpcc_estimate_bytes(o->scale) / TPCC_WAL_LIMIT_SHARE;
    if (limit < floor) limit = floor;
    if (limit > TPCC_MAX_WAL_LIMIT) limit = TPCC_MAX_WAL_LIMIT;
    return limit;
}

int tpcc_delivery_workers(const tpcc_options *o)
{
    uint64_t conns = tpcc_connections_of(o, o->vusers);
    uint64_t n =
        (conns + TPCC_CONNECTIONS_PER_DELIVERY_WORKER - 1) / TPCC_CONNECTIONS_PER_DELIVERY_WORKER;
    if (n < 1) n = 1;
    if (n > TPCC_MAX_DELIVERY_WORKERS) n = TPCC_MAX_DELIVERY_WORKERS;
    return (int)n;
}

void tpcc_db_opts(const tpcc_options *o, st_db_opts *dbo)
{
    memset(dbo, 0, sizeof *dbo);
    uint64_t buf = o->buffer;
    if (!buf) {
        buf = (uint64_t)((double)tpcc_estimate_bytes(o->scale) / EST_MARGIN * REF_BUFFER_RATIO);
        /* The reference ratio cannot be kept where the machine lacks the memory: all
         * instances' buffers together stay within half of physical memory (the rest
         * is the process, the VUs and the OS), and the result records the size. */
        uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
        uint64_t cap = phys / 2 / (o->instances ? o->instances : 1);
        if (phys && buf > cap) buf = cap;
        if (buf < MIN_BUFFER) buf = MIN_BUFFER;
    }
    dbo->buffer_bytes = buf;
    dbo->sync = o->sync;
    dbo->checkpoint_mode = "passive";
    dbo->max_connections = (int)tpcc_connections_of(o, o->vusers) + tpcc_delivery_workers(o) + 1;
    dbo->engine = o->engine;
    dbo->wal_limit_bytes = wal_limit_of(o, buf);
    dbo->checkpoint_wal_bytes = st_db_checkpoint_bytes_for(buf, dbo->wal_limit_bytes);
    dbo->checkpoint_taper = true;
}

/* ---------------------------------------------------------------- prepare */

/* Loading and checking are not measured: give them room, so that the load's
 * checkpoints copy WAL frames still in the pool instead of reading them back
 * (measured: 2.6 s -> 0.5 s per warehouse on the test VM) and the checks' scans are
 * not paced by a pool sized for the run; up to the database's size or
 * LOAD_BUFFER_MAX. */
static void bulk_db_opts(const tpcc_options *o, st_db_opts *dbo)
{
    tpcc_db_opts(o, dbo);
    uint64_t want = tpcc_estimate_bytes(o->scale);
    if (want > LOAD_BUFFER_MAX) want = LOAD_BUFFER_MAX;
    uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t cap = phys / 4 / (o->instances ? o->instances : 1); /* instances load at once */
    if (phys && want > cap) want = cap;
    if (dbo->buffer_bytes < want) dbo->buffer_bytes = want;
}

typedef struct load_job {
    const tpcc_options *o;
    st_target *t;
    int instance;
    tpcc_load_stats st;
    double checkpoint_seconds; /* the synced checkpoints after the rows are in */
    json_t *db_json;
    int rc;
    char err[512];
} load_job;

/*
 * The rows go in through SQLite's default VFS, not the direct-I/O one: the load is
 * not measured, and writing through the page cache with no journal lets SQLite build
 * the tables at its own speed instead of writing every page twice (WAL, then
 * checkpoint) with synchronous direct I/O (measured: 0.2-0.4 warehouses/s per
 * instance through the VFS). st_db creates the files first (manifest, page size, WAL
 * format). An interrupted load leaves no completion marker, and an unreadable or
 * unmarked database is loaded again, so no journal is needed.
 */
static int bulk_load(const char *path, int page_size, const tpcc_load_opts *lo, tpcc_load_stats *st,
                     char *err, size_t errlen)
{
    sqlite3 *c = NULL;
    if (sqlite3_open_v2(path, &c,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                        st_db_failstop_vfs()) != SQLITE_OK) {
        snprintf(err, errlen, "SQLite: opening %.300s for the load: %s", path,
                 c ? sqlite3_errmsg(c) : "out of memory");
        sqlite3_close(c);
        return SIM_EXIT_FAIL;
    }
    char sql[320];
    snprintf(sql, sizeof sql,
             "PRAGMA locking_mode=EXCLUSIVE; PRAGMA page_size=%d; PRAGMA journal_mode=OFF;"
             " PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-262144",
             page_size > 0 ? page_size : 4096);
    int rc = tpcc_exec(c, sql, err, errlen) ? SIM_EXIT_FAIL : 0;
    if (!rc && tpcc_load(c, lo, st, err, errlen)) rc = SIM_EXIT_FAIL;
    if (sqlite3_close(c) != SQLITE_OK && !rc) {
        snprintf(err, errlen, "SQLite: closing %.300s after the load failed", path);
        rc = SIM_EXIT_FAIL;
    }
    return rc;
}

/* After the load: the file durable on the drive and none of it left in the page cache
 * (the run's direct-I/O VFS starts from the drive), and the WAL file the VFS expects
 * present again, empty (SQLite removed it when the journal went off; it is in the
 * manifest, so appsim may create it). */
static int settle_loaded_file(st_target *t, const char *name, char *err, size_t errlen)
{
    int fd = -1;
    int rc = st_target_open_file(t, name, 0, false, &fd, err, errlen);
    if (rc) return rc;
    if (fdatasync(fd)) {
        int e = errno;
        sim_fault_note(e, "syncing %s after the load", name);
        snprintf(err, errlen, "syncing %.300s after the load: %s", name, strerror(e));
        close(fd);
        return SIM_EXIT_FAIL;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    char wal_name[80];
    snprintf(wal_name, sizeof wal_name, "%s-wal", name);
    if (st_target_owns(t, wal_name)) {
        rc = st_target_create_file(t, wal_name, 0, &fd, err, errlen);
        if (rc) return rc;
        close(fd);
    }
    return SIM_EXIT_OK;
}

static void *load_instance(void *arg)
{
    load_job *j = arg;
    const tpcc_options *o = j->o;
    char name[64], label[32], path[4096];
    tpcc_db_name(j->instance, name, sizeof name);
    snprintf(label, sizeof label, "instance %d", j->instance + 1);
    st_db_opts dbo;
    bulk_db_opts(o, &dbo);
    st_db *db = NULL;
    sqlite3 *c = NULL;
    char marker[64];
    loading_marker_name(j->instance, marker, sizeof marker);
    int mfd = -1;
    j->rc = st_target_create_file(j->t, marker, 0, &mfd, j->err, sizeof j->err);
    if (j->rc) return NULL;
    close(mfd);
    j->rc = st_db_open(j->t, name, &dbo, true, &db, j->err, sizeof j->err);
    if (j->rc) return NULL;
    json_t *dj = st_db_json(db);
    int page_size = (int)json_integer_value(json_object_get(dj, "page_size"));
    json_decref(dj);
    st_db_close(db);
    db = NULL;
    j->rc = st_db_library_path(j->t, name, path, sizeof path, j->err, sizeof j->err);
    if (j->rc) return NULL;
    tpcc_load_opts lo = {.scale = (int64_t)o->scale,
                         .seed = o->seed,
                         .quiet = o->quiet,
                         .label = o->instances > 1 ? label : NULL,
                         .defer_complete = true};
    j->rc = bulk_load(path, page_size, &lo, &j->st, j->err, sizeof j->err);
    if (!j->rc) j->rc = settle_loaded_file(j->t, name, j->err, sizeof j->err);
    if (j->rc) return NULL;
    /* The completion marker: a durable WAL commit through the VFS, written only after
     * every row is on the drive, then checkpointed into the file. */
    uint64_t t0 = sim_now_ns();
    j->rc = st_db_open(j->t, name, &dbo, false, &db, j->err, sizeof j->err);
    if (!j->rc) j->rc = st_db_connect(db, &c, j->err, sizeof j->err);
    if (!j->rc &&
        tpcc_exec(c, "PRAGMA synchronous=FULL; UPDATE appsim_tpcc SET complete = 1 WHERE id = 1",
                  j->err, sizeof j->err))
        j->rc = SIM_EXIT_FAIL;
    if (!j->rc) j->rc = st_db_checkpoint(db, j->err, sizeof j->err);
    j->checkpoint_seconds = (double)(sim_now_ns() - t0) / 1e9;
    if (!j->rc) j->db_json = st_db_json(db);
    if (c) sqlite3_close(c);
    if (db) st_db_close(db);
    if (!j->rc) j->rc = st_target_remove_file(j->t, marker, j->err, sizeof j->err);
    return NULL;
}

/* What instance_state finds: a complete database of this scale, none (absent or
 * unfinished: load it), or SIM_EXIT_USAGE for one of another scale (err says so). */
enum { INSTANCE_LOADED = 0, INSTANCE_TO_LOAD = 1 };
static_assert((int)INSTANCE_TO_LOAD != (int)SIM_EXIT_USAGE,
              "instance states are told from the usage error");

static int instance_state(st_target *t, const tpcc_options *o, int i, char *err, size_t errlen)
{
    char name[64];
    tpcc_db_name(i, name, sizeof name);
    if (!st_target_owns(t, name) || load_unfinished(t, i)) return INSTANCE_TO_LOAD;
    st_db_opts dbo;
    tpcc_db_opts(o, &dbo);
    st_db *db = NULL;
    sqlite3 *c = NULL;
    int rc = st_db_open(t, name, &dbo, false, &db, err, errlen);
    if (rc) return INSTANCE_TO_LOAD; /* an unreadable leftover of ours: load again */
    rc = st_db_connect(db, &c, err, errlen);
    tpcc_meta m;
    int state = INSTANCE_TO_LOAD;
    int mr = rc ? SIM_ERR : tpcc_meta_read(c, &m, err, errlen);
    if (mr == TPCC_META_OLD) sim_warn("tpcc prepare: %s: %s; loading it again", name, err);
    if (mr == TPCC_META_READ && m.complete) {
        if ((uint64_t)m.scale == o->scale) {
            state = INSTANCE_LOADED;
        } else {
            snprintf(err, errlen,
                     "%s holds a complete TPC-C database of scale %lld, not %llu: pass "
                     "--scale %lld to use it, or remove it with `appsim tpcc cleanup --target "
                     "%s`",
                     name, (long long)m.scale, (unsigned long long)o->scale, (long long)m.scale,
                     st_target_path(t));
            state = SIM_EXIT_USAGE;
        }
    }
    if (c) sqlite3_close(c);
    st_db_close(db);
    return state;
}

static int remove_instance_files(st_target *t, int i, bool pristine_too, char *err, size_t errlen)
{
    char name[64], extra[80];
    tpcc_db_name(i, name, sizeof name);
    const char *suffix[] = {"", "-wal", "-shm", "-journal", "-loading"};
    for (size_t k = 0; k < sizeof suffix / sizeof *suffix; k++) {
        snprintf(extra, sizeof extra, "%s%s", name, suffix[k]);
        if (st_target_owns(t, extra) && st_target_remove_file(t, extra, err, errlen))
            return SIM_EXIT_FAIL;
    }
    tpcc_pristine_name(i, extra, sizeof extra);
    if (pristine_too && st_target_owns(t, extra) && st_target_remove_file(t, extra, err, errlen))
        return SIM_EXIT_FAIL;
    return SIM_EXIT_OK;
}

/* Which instances need a load (need[], their count in *nneed): absent or unfinished
 * ones. An exit status: a database of another scale, or one kept without the pristine
 * copy --keep-pristine needs, is a usage error. */
static int instances_to_load(const tpcc_options *o, st_target *t, bool *need, int *nneed)
{
    char err[1024];
    *nneed = 0;
    for (int i = 0; i < (int)o->instances; i++) {
        int s = instance_state(t, o, i, err, sizeof err);
        if (s == SIM_EXIT_USAGE) {
            sim_error("%s", err);
            return SIM_EXIT_USAGE;
        }
        need[i] = s == INSTANCE_TO_LOAD;
        if (!need[i] && o->keep_pristine) {
            char pr[64];
            tpcc_pristine_name(i, pr, sizeof pr);
            if (!st_target_owns(t, pr)) {
                sim_error("--keep-pristine: instance %d was loaded without a pristine copy, so "
                          "its first state is gone; run `appsim tpcc cleanup --target %s` and "
                          "load again with --keep-pristine",
                          i + 1, st_target_path(t));
                return SIM_EXIT_USAGE;
            }
        }
        *nneed += need[i];
    }
    return SIM_EXIT_OK;
}

/* Loads the needed instances at once, one thread each (after removing what an
 * unfinished load left); each job's outcome is in jobs[i]. An exit status. */
static int load_all(const tpcc_options *o, st_target *t, const bool *need, load_job *jobs)
{
    char err[1024];
    pthread_t th[64];
    bool started[64] = {0};
    int rc = SIM_EXIT_OK;
    for (int i = 0; i < (int)o->instances; i++) {
        if (!need[i]) continue;
        if (remove_instance_files(t, i, true, err, sizeof err)) {
            sim_error("tpcc: cannot remove the unfinished database of instance %d: %s", i + 1, err);
            rc = SIM_EXIT_FAIL;
            break;
        }
        jobs[i] = (load_job){.o = o, .t = t, .instance = i};
        started[i] = pthread_create(&th[i], NULL, load_instance, &jobs[i]) == 0;
        if (!started[i]) {
            jobs[i].rc = SIM_EXIT_FAIL;
            snprintf(jobs[i].err, sizeof jobs[i].err, "cannot start a loader thread");
        }
    }
    for (int i = 0; i < (int)o->instances; i++)
        if (started[i]) pthread_join(th[i], NULL);
    return rc;
}

/* The loads' figures per instance into *per, and the rows loaded in all into *rows;
 * marks the loaded instances in just_loaded[]. The first failure's exit status. */
static int record_loads(const tpcc_options *o, const bool *need, load_job *jobs, json_t **per,
                        uint64_t *rows, bool *just_loaded, json_t *errors)
{
    int rc = SIM_EXIT_OK;
    *rows = 0;
    *per = json_array();
    for (int i = 0; i < (int)o->instances; i++) {
        if (!need[i]) continue;
        if (jobs[i].rc) {
            sim_error("tpcc: loading instance %d failed: %s", i + 1, jobs[i].err);
            json_array_append_new(errors,
                                  json_pack("{s:i, s:s}", "instance", i + 1, "error", jobs[i].err));
            rc = rc ? rc : (sim_interrupted() ? SIM_EXIT_FAIL : jobs[i].rc);
            json_decref(jobs[i].db_json);
            continue;
        }
        *rows += jobs[i].st.rows;
        just_loaded[i] = true;
        json_t *pj = (json_pack("{s:i, s:I, s:f, s:f, s:f, s:f, s:f}", "instance", i + 1, "rows",
                                (json_int_t)jobs[i].st.rows, "seconds", jobs[i].st.seconds,
                                "checkpoint_seconds", jobs[i].checkpoint_seconds,
                                "warehouses_per_s", (double)o->scale / jobs[i].st.seconds,
                                "generator_busy_s", jobs[i].st.gen_busy_seconds, "writer_wait_s",
                                jobs[i].st.writer_wait_seconds));
        if (jobs[i].db_json) json_object_set_new(pj, "database", jobs[i].db_json);
        json_array_append_new(*per, pj);
    }
    return rc;
}

/* --keep-pristine: a copy of each freshly loaded database, recorded in prep. */
static int save_pristine(const tpcc_options *o, st_target *t, const bool *need, json_t *prep)
{
    char err[1024];
    json_t *pr = json_array();
    json_object_set_new(prep, "pristine", pr);
    for (int i = 0; i < (int)o->instances; i++) {
        if (!need[i]) continue;
        json_t *info = json_object();
        json_array_append_new(pr, info);
        int rc = tpcc_pristine_save(t, i, info, err, sizeof err);
        if (rc) {
            sim_error("tpcc: keeping the pristine copy of instance %d: %s", i + 1, err);
            return rc;
        }
    }
    return SIM_EXIT_OK;
}

static int do_prepare(const tpcc_options *o, st_target *t, json_t *doc, bool *just_loaded)
{
    char err[1024];
    int n = (int)o->instances;
    bool need[64] = {0};
    int nneed;
    int rc = instances_to_load(o, t, need, &nneed);
    if (rc) return rc;
    json_t *prep = json_object();
    json_object_set_new(doc, "prepare", prep);
    if (!nneed) {
        sim_info("tpcc: %d instance(s) of scale %llu already prepared in %s", n,
                 (unsigned long long)o->scale, st_target_path(t));
        json_object_set_new(prep, "loaded", json_false());
        return SIM_EXIT_OK;
    }
    uint64_t est = tpcc_estimate_bytes(o->scale) * (uint64_t)nneed * (o->keep_pristine ? 2 : 1);
    char estbuf[32];
    rc = st_target_check_space(t, est + o->keep_free, err, sizeof err);
    if (rc) {
        char keepbuf[32];
        sim_error("tpcc: %d instance(s) of scale %llu need an estimated %s, plus --keep-free %s "
                  "left free: %s",
                  nneed, (unsigned long long)o->scale, sim_format_size(est, estbuf, sizeof estbuf),
                  sim_format_size(o->keep_free, keepbuf, sizeof keepbuf), err);
        return rc;
    }
    sim_info("tpcc: loading %d instance(s) of %llu warehouse(s) into %s (estimated %s)", nneed,
             (unsigned long long)o->scale, st_target_path(t),
             sim_format_size(est, estbuf, sizeof estbuf));
    load_job jobs[64];
    uint64_t t0 = sim_now_ns();
    /* Until every load is complete the result says so: a load that was interrupted or
     * failed leaves its instance marked unfinished (load_unfinished), not loaded. */
    json_object_set_new(prep, "loaded", json_false());
    json_object_set_new(prep, "complete", json_false());
    json_object_set_new(prep, "instances_loaded", json_integer(0));
    json_object_set_new(prep, "interrupted", json_boolean(sim_interrupted()));
    if ((rc = load_all(o, t, need, jobs))) return rc;
    double secs = (double)(sim_now_ns() - t0) / 1e9;
    json_object_set_new(prep, "seconds", json_real(secs));
    json_t *per, *errors = json_array();
    uint64_t rows;
    rc = record_loads(o, need, jobs, &per, &rows, just_loaded, errors);
    int loaded = nneed - (int)json_array_size(errors);
    json_object_set_new(prep, "loaded", json_boolean(!rc));
    json_object_set_new(prep, "complete", json_boolean(!rc));
    json_object_set_new(prep, "instances_loaded", json_integer(loaded));
    json_object_set_new(prep, "interrupted", json_boolean(sim_interrupted()));
    if (json_array_size(errors))
        json_object_set_new(prep, "errors", errors);
    else
        json_decref(errors);
    json_object_set_new(prep, "rows", json_integer((json_int_t)rows));
    json_object_set_new(prep, "warehouses_per_s_per_instance", json_real((double)o->scale / secs));
    json_object_set_new(prep, "estimated_bytes", json_integer((json_int_t)est));
    json_object_set_new(prep, "per_instance", per);
    if (rc) return rc;
    int first = 0;
    while (!need[first])
        first++;
    sim_info("tpcc: loaded %d x %llu warehouse(s) in %.1f s (%.2f warehouses/s per instance; "
             "instance %d: rows %.1f s, final checkpoint %.1f s)",
             nneed, (unsigned long long)o->scale, secs, (double)o->scale / secs, first + 1,
             jobs[first].st.seconds, jobs[first].checkpoint_seconds);
    return o->keep_pristine ? save_pristine(o, t, need, prep) : SIM_EXIT_OK;
}

/* ---------------------------------------------------------------- check */

/* Opens instance i's database for the check, its metadata in *m: an exit status, the
 * message printed. */
static int open_for_check(const tpcc_options *o, st_target *t, int i, const char *name, st_db **db,
                          sqlite3 **c, tpcc_meta *m)
{
    char err[1024];
    if (!st_target_owns(t, name)) {
        sim_error("tpcc check: no database for instance %d in %s; run `appsim tpcc prepare "
                  "--target %s` first",
                  i + 1, st_target_path(t), st_target_path(t));
        return SIM_EXIT_USAGE;
    }
    if (load_unfinished(t, i)) return refuse_unfinished(o, t, i, "check");
    st_db_opts dbo;
    bulk_db_opts(o, &dbo);
    int rc = st_db_open(t, name, &dbo, false, db, err, sizeof err);
    if (rc) {
        sim_error("tpcc check: instance %d: %s", i + 1, err);
        return rc;
    }
    if ((rc = st_db_connect(*db, c, err, sizeof err))) {
        sim_error("tpcc check: instance %d: %s", i + 1, err);
        st_db_close(*db);
        return rc;
    }
    int mr = tpcc_meta_read(*c, m, err, sizeof err);
    if (mr != TPCC_META_READ || !m->complete) {
        sim_error("tpcc check: instance %d (%s) is not a completely loaded TPC-C database%s%s; "
                  "run `appsim tpcc prepare`",
                  i + 1, name, err[0] ? ": " : "", err);
        sqlite3_close(*c);
        st_db_close(*db);
        return SIM_EXIT_FAIL;
    }
    return SIM_EXIT_OK;
}

/* SQLite's integrity check (--integrity full or quick), printed and recorded in ji. An
 * exit status: a database error or interruption fails, a failed check only clears
 * *all_pass. */
static int check_integrity(const tpcc_options *o, sqlite3 *c, json_t *ji, bool *all_pass)
{
    char err[1024];
    uint64_t t0 = sim_now_ns();
    int ir = tpcc_integrity(c, !strcmp(o->integrity, "quick"), err, sizeof err);
    double s = (double)(sim_now_ns() - t0) / 1e9;
    printf("  %-4s %-72s %s (%.2f s)\n", "",
           o->integrity[0] == 'q' ? "SQLite quick_check" : "SQLite integrity_check",
           ir == TPCC_INTEGRITY_OK                ? "pass"
           : (ir == SIM_ERR && sim_interrupted()) ? "interrupted"
                                                  : "FAIL",
           s);
    if (ir) printf("       %s\n", err);
    json_object_set_new(ji, "integrity",
                        json_pack("{s:s, s:b, s:s?}", "mode", o->integrity, "pass",
                                  ir == TPCC_INTEGRITY_OK, "problem", ir ? err : NULL));
    if (ir) *all_pass = false;
    return ir == SIM_ERR ? SIM_EXIT_FAIL : SIM_EXIT_OK;
}

/* The consistency conditions' outcomes, printed and recorded in conds. */
static void report_conditions(const tpcc_check_result *res, int n, json_t *conds, bool *all_pass)
{
    for (int k = 0; k < n; k++) {
        const tpcc_check_result *r = &res[k];
        if (r->skipped)
            printf("  %2d.  %-72s skipped (holds only before any Delivery)\n", r->number, r->what);
        else
            printf("  %2d.  %-72s %s", r->number, r->what, r->pass ? "pass" : "FAIL");
        if (!r->skipped && !r->pass) printf(" (%lld violations)", (long long)r->violations);
        if (!r->skipped) printf(" (%.2f s)\n", r->seconds);
        json_array_append_new(conds, json_pack("{s:i, s:s, s:b, s:b, s:I, s:f}", "number",
                                               r->number, "condition", r->what, "skipped",
                                               r->skipped, "pass", r->pass, "violations",
                                               (json_int_t)r->violations, "seconds", r->seconds));
        if (!r->pass) *all_pass = false;
    }
}

static int check_one(const tpcc_options *o, st_target *t, int i, json_t *out, bool *all_pass)
{
    char name[64], err[1024];
    tpcc_db_name(i, name, sizeof name);
    st_db *db = NULL;
    sqlite3 *c = NULL;
    tpcc_meta m;
    int rc = open_for_check(o, t, i, name, &db, &c, &m);
    if (rc) return rc;
    printf("instance %d (%s, scale %lld%s):\n", i + 1, name, (long long)m.scale,
           m.fresh ? ", as loaded" : ", after transactions");
    json_t *ji = json_object();
    json_object_set_new(ji, "instance", json_integer(i + 1));
    json_object_set_new(ji, "fresh", json_boolean(m.fresh));
    json_array_append_new(out, ji);
    if (strcmp(o->integrity, "off")) rc = check_integrity(o, c, ji, all_pass);
    tpcc_check_result res[12];
    int n = rc ? -1 : tpcc_check_run(c, 1, 12, m.fresh, res, err, sizeof err);
    if (n < 0 && !rc) {
        sim_error("tpcc check: instance %d: %s", i + 1, err);
        rc = SIM_EXIT_FAIL;
    }
    json_t *conds = json_array();
    json_object_set_new(ji, "conditions", conds);
    report_conditions(res, n, conds, all_pass);
    sqlite3_close(c);
    st_db_close(db);
    return rc;
}

static int do_check(const tpcc_options *o, st_target *t, json_t *doc)
{
    json_t *arr = json_array();
    bool all_pass = true;
    int rc = 0;
    for (int i = 0; i < (int)o->instances && !rc; i++)
        rc = check_one(o, t, i, arr, &all_pass);
    json_object_set_new(doc, "check",
                        json_pack("{s:b, s:b, s:o}", "pass", all_pass && !rc, "interrupted",
                                  sim_interrupted(), "instances", arr));
    if (rc) return rc;
    printf("consistency: %s\n", all_pass ? "all conditions pass" : "FAILED");
    return all_pass ? 0 : SIM_EXIT_FAIL;
}

/* ---------------------------------------------------------------- cleanup */

static int do_cleanup(st_target *t)
{
    char err[1024];
    int removed = 0;
    /* Instances are numbered from 1 without gaps; look well past the last one in case
     * an earlier run used more instances. */
    for (int i = 0; i < 1024; i++) {
        char name[64], pr[64];
        tpcc_db_name(i, name, sizeof name);
        tpcc_pristine_name(i, pr, sizeof pr);
        bool any = st_target_owns(t, name) || st_target_owns(t, pr);
        char wal[80];
        snprintf(wal, sizeof wal, "%s-wal", name);
        any |= st_target_owns(t, wal) || load_unfinished(t, i);
        if (!any) continue;
        if (remove_instance_files(t, i, true, err, sizeof err)) {
            sim_error("tpcc cleanup: %s", err);
            return SIM_EXIT_FAIL;
        }
        removed++;
    }
    printf("tpcc cleanup: removed %d instance database(s) from %s\n", removed, st_target_path(t));
    return SIM_EXIT_OK;
}

/* ---------------------------------------------------------------- run */

/* just_loaded[i]: instance i was loaded by this invocation, so its pristine copy equals
 * the database and need not be restored. */
static int open_instances(const tpcc_options *o, st_target *t, tpcc_instance *inst, json_t *doc,
                          const bool *just_loaded)
{
    char err[1024];
    st_db_opts dbo;
    tpcc_db_opts(o, &dbo);
    for (int i = 0; i < (int)o->instances; i++) {
        inst[i].index = i;
        if (load_unfinished(t, i)) return refuse_unfinished(o, t, i, "run");
        if (o->keep_pristine && !just_loaded[i]) {
            inst[i].pristine = json_object();
            int rc = tpcc_pristine_restore(t, i, inst[i].pristine, err, sizeof err);
            if (rc) {
                sim_error("tpcc: instance %d: %s", i + 1, err);
                return rc;
            }
        }
        char name[64];
        tpcc_db_name(i, name, sizeof name);
        if (!st_target_owns(t, name)) {
            sim_error("tpcc run: no database for instance %d in %s; run `appsim tpcc prepare "
                      "--target %s --scale %llu` first (or run `appsim tpcc` without an action)",
                      i + 1, st_target_path(t), st_target_path(t), (unsigned long long)o->scale);
            return SIM_EXIT_USAGE;
        }
        int rc = st_db_open(t, name, &dbo, false, &inst[i].db, err, sizeof err);
        if (rc) {
            sim_error("tpcc: instance %d: %s", i + 1, err);
            return rc;
        }
        sqlite3 *c = NULL;
        if ((rc = st_db_connect(inst[i].db, &c, err, sizeof err))) {
            sim_error("tpcc: instance %d: %s", i + 1, err);
            return rc;
        }
        int mr = tpcc_meta_read(c, &inst[i].meta, err, sizeof err);
        if (mr != TPCC_META_READ || !inst[i].meta.complete) {
            sqlite3_close(c);
            sim_error("tpcc run: instance %d (%s) is not a completely loaded database%s%s; run "
                      "`appsim tpcc prepare --target %s --scale %llu`",
                      i + 1, name, err[0] ? ": " : "", err, st_target_path(t),
                      (unsigned long long)o->scale);
            return SIM_EXIT_USAGE;
        }
        if ((uint64_t)inst[i].meta.scale != o->scale) {
            sqlite3_close(c);
            sim_error("tpcc run: instance %d holds scale %lld, not %llu: pass --scale %lld", i + 1,
                      (long long)inst[i].meta.scale, (unsigned long long)o->scale,
                      (long long)inst[i].meta.scale);
            return SIM_EXIT_USAGE;
        }
        /* From here on condition 11 no longer applies (Delivery runs). */
        if (tpcc_meta_set_fresh(c, false, err, sizeof err)) {
            sqlite3_close(c);
            sim_error("tpcc: instance %d: %s", i + 1, err);
            return SIM_EXIT_FAIL;
        }
        sqlite3_close(c);
    }
    (void)doc;
    return SIM_EXIT_OK;
}

static void close_instances(const tpcc_options *o, tpcc_instance *inst)
{
    for (int i = 0; i < (int)o->instances; i++) {
        if (inst[i].db) st_db_close(inst[i].db);
        inst[i].db = NULL;
        json_decref(inst[i].pristine);
        inst[i].pristine = NULL;
    }
}

static int validate(tpcc_options *o, const char *action, char *err, size_t errlen)
{
    if (tpcc_mix_parse(o->mix, &o->mixv, err, errlen)) return SIM_EXIT_USAGE;
    o->pacev = !strcmp(o->pacing, "spec")  ? TPCC_PACE_SPEC
               : !strcmp(o->pacing, "off") ? TPCC_PACE_OFF
                                           : TPCC_PACE_REVIEW;
    if (!o->vusers) o->vusers = 10 * o->scale;
    if (o->vusers > 1000000) {
        snprintf(err, errlen, "--vusers %llu per instance is more than the engine holds (1000000)",
                 (unsigned long long)o->vusers);
        return SIM_EXIT_USAGE;
    }
    if (o->duration_ns == 0 && (!action || !strcmp(action, "run"))) {
        snprintf(err, errlen, "--duration must be more than 0 (e.g. --duration 30s)");
        return SIM_EXIT_USAGE;
    }
    if (o->connections > o->vusers) {
        snprintf(err, errlen,
                 "--connections %llu is more than the %llu virtual users per instance; at most "
                 "one connection per user can be busy",
                 (unsigned long long)o->connections, (unsigned long long)o->vusers);
        return SIM_EXIT_USAGE;
    }
    if (!o->connections) o->connections = tpcc_connections_of(o, o->vusers);
    uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t ninst = o->instances ? o->instances : 1;
    if (o->buffer && phys && o->buffer > phys / ninst) {
        char a[32], b[32], c[32];
        snprintf(err, errlen,
                 "--buffer %s per instance (x %llu) is more than this machine's %s of memory: "
                 "give at most %s per instance (half of it leaves room for the rest), or leave "
                 "--buffer out to use the reference ratio within half of the memory",
                 sim_format_size(o->buffer, a, sizeof a), (unsigned long long)ninst,
                 sim_format_size(phys, b, sizeof b),
                 sim_format_size(phys / 2 / ninst, c, sizeof c));
        return SIM_EXIT_USAGE;
    }
    if (!o->buffer) {
        st_db_opts dbo;
        tpcc_db_opts(o, &dbo);
        uint64_t ref =
            (uint64_t)((double)tpcc_estimate_bytes(o->scale) / EST_MARGIN * REF_BUFFER_RATIO);
        if (dbo.buffer_bytes < ref && dbo.buffer_bytes > MIN_BUFFER) {
            char a[32], b[32];
            sim_warn("tpcc: the reference memory ratio (14.4 %% of the database, %s per "
                     "instance) does not fit in half of this machine's memory; using %s per "
                     "instance (set --buffer to choose)",
                     sim_format_size(ref, a, sizeof a),
                     sim_format_size(dbo.buffer_bytes, b, sizeof b));
        }
    }
    return SIM_EXIT_OK;
}

/* --rate runs open loop: the users' waits do not apply, and --uniform needs arrivals. */
static int check_open_loop(const tpcc_options *o, const sim_opt *opts)
{
    if (o->rate > 0 && (sim_opts_find(opts, "pacing")->set || sim_opts_find(opts, "cycle")->set)) {
        sim_error("tpcc: --rate runs open loop (transactions arrive at the rate, no user waits); "
                  "--pacing and --cycle set the users' waits of a closed-loop run: give one or "
                  "the other");
        return SIM_EXIT_USAGE;
    }
    if (o->uniform && o->rate <= 0 && !o->curve.curve) {
        sim_error("tpcc: --uniform spaces open-loop arrivals evenly: it needs --rate or --curve");
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* --vusers (a count or a list of them) and the curve options; a curve's limits start
 * with TPC-C's 90th-percentile limits (clause 5.2.5.3), then --slo's. */
static int check_curve(tpcc_options *o, const sim_opt *opts)
{
    static const char *const single_only[] = {"duration",          "warmup", "rate", "steady-round",
                                              "steady-max-rounds", NULL};
    oltp_curve_cli *c = &o->curve;
    for (int ty = 0; ty < TPCC_NTYPES; ty++)
        c->limits.lim[c->limits.n++] = (oltp_slo_limit){.percentile = 90,
                                                        .type = ty,
                                                        .limit_ms = tpcc_p90_limit_s[ty] * 1000,
                                                        .source = "TPC-C 5.2.5.3"};
    char deflt[32];
    snprintf(deflt, sizeof deflt, "%llu", (unsigned long long)(10 * o->scale));
    /* "--vusers 0" is the default, as it always was */
    const char *users = o->vusers_text && strcmp(o->vusers_text, "0") ? o->vusers_text : deflt;
    int rc = oltp_curve_cli_resolve("tpcc", opts, c, users, "vusers", 1000000, single_only,
                                    tpcc_type_names, TPCC_NTYPES);
    if (rc) return rc;
    if (c->curve && sim_opts_find(opts, "pacing")->set && strcmp(o->pacing, "off")) {
        sim_error("tpcc: a curve's saturation point runs without waits and its other points "
                  "open loop: --pacing %s does not apply (user steps, --vusers 10,20,40, run "
                  "with a pacing)",
                  o->pacing);
        return SIM_EXIT_USAGE;
    }
    if (c->curve && sim_opts_find(opts, "cycle")->set) {
        sim_error("tpcc: a curve's points run without user waits: --cycle does not apply");
        return SIM_EXIT_USAGE;
    }
    /* the largest count sizes the checks of the users (connections, memory) */
    o->vusers = c->steps[0];
    for (int i = 1; i < c->nsteps; i++)
        if (c->steps[i] > o->vusers) o->vusers = c->steps[i];
    o->connections_auto = o->connections == 0;
    return SIM_EXIT_OK;
}

/* Parses and checks the command line into opt and *action (NULL: prepare if needed,
 * run, check). SIM_EXIT_OK, SIM_OPTS_HELP_SHOWN or SIM_EXIT_USAGE (message printed). */
static int parse_cli(int argc, char **argv, tpcc_options *opt, sim_opt *opts, const char **action)
{
    char *pos[2];
    int npos = 0;
    int rc = sim_opts_parse("tpcc", opts, argc, argv, pos, 1, &npos, usage_text);
    if (rc) return rc;
    if ((rc = sim_steady_opts_check("tpcc", opts, opt->warmup_ns))) return rc;
    if ((rc = oltp_check_group_commit(opts, opt->group_commit, opt->sync, opt->target.buffered)))
        return rc;
    *action = npos ? pos[0] : NULL;
    const char *a = *action;
    if (a && strcmp(a, "prepare") && strcmp(a, "run") && strcmp(a, "check") &&
        strcmp(a, "cleanup")) {
        static const char *const actions[] = {"prepare", "run", "check", "cleanup", NULL};
        return sim_refuse_unknown("tpcc action", a, actions,
                                  "use prepare, run, check or cleanup (or none: prepare if "
                                  "needed, run, check)");
    }
    sim_set_quiet(opt->quiet);
    /* Without an action the check after the run tests the consistency conditions only,
     * unless --integrity is given: SQLite's integrity check reads the whole database
     * (about 10 s per warehouse-scale-1 file on the test VM), which the default job
     * should not pay. `appsim tpcc check` does the full one by default. */
    if (!a && !sim_opts_find(opts, "integrity")->set) opt->integrity = "off";
    if ((rc = check_open_loop(opt, opts)) || (rc = check_curve(opt, opts))) return rc;
    char err[1024];
    if ((rc = validate(opt, a, err, sizeof err))) {
        sim_error("tpcc: %s", err);
        return rc;
    }
    return SIM_EXIT_OK;
}

/* The target directory (created if missing, unless checking or cleaning up); a block device is
 * refused, before and after resolving the path. An exit status, the message printed. */
static int open_target(tpcc_options *opt, const char *action, st_target **t)
{
    bool readonly = action && !strcmp(action, "check");
    opt->target.read_only = false; /* check opens SQLite read-write: WAL recovery after a crash */
    opt->target.existing_only = readonly || (action && !strcmp(action, "cleanup"));
    struct stat tst;
    if (opt->target.path && stat(opt->target.path, &tst) == 0 && S_ISBLK(tst.st_mode)) {
        sim_error("tpcc needs a directory on the drive's filesystem (its databases are files); "
                  "%s is a block device: make a filesystem on it, mount it, and pass a "
                  "directory on it as --target",
                  opt->target.path);
        return SIM_EXIT_USAGE;
    }
    char err[1024];
    int rc = st_target_open(&opt->target, t, err, sizeof err);
    if (rc) {
        sim_error("%s", err);
        return rc;
    }
    if (st_target_is_device(*t)) {
        sim_error("tpcc needs a directory on the drive's filesystem (its databases are files); "
                  "%s is a block device: make a filesystem on it, mount it, and pass the mount "
                  "point as --target",
                  st_target_path(*t));
        st_target_close(*t);
        *t = NULL;
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* prepare, run and check as the action asks, into doc (saved as --json says). */
static int run_actions(tpcc_options *opt, st_target *t, const char *action, json_t *doc)
{
    bool just_loaded[64] = {false};
    int rc = SIM_EXIT_OK;
    if (!action || !strcmp(action, "prepare")) rc = do_prepare(opt, t, doc, just_loaded);
    if (!rc && (!action || !strcmp(action, "run"))) {
        tpcc_instance *inst = sim_xcalloc(opt->instances, sizeof *inst);
        rc = open_instances(opt, t, inst, doc, just_loaded);
        if (!rc)
            rc = oltp_curve_cli_active(&opt->curve) ? tpcc_run_curve(opt, t, inst, doc)
                                                    : tpcc_run_measure(opt, t, inst, doc);
        close_instances(opt, inst);
        free(inst);
    }
    /* The run's result is on disk before the check starts: the check of a large
     * database takes minutes and may be interrupted, and must never cost the result.
     * The file is written again with the check's section when it ends. */
    bool checking = !rc && !sim_interrupted() && (!action || !strcmp(action, "check"));
    if (opt->json && !sim_json_on_stdout(opt->json) && !action && checking) {
        if (sim_result_write(doc, opt->json))
            rc = SIM_EXIT_FAIL;
        else
            sim_info("tpcc: run result written to %s; checking consistency", opt->json);
    }
    if (!rc && checking) rc = do_check(opt, t, doc);
    /* A refusal (a target or option the user must change) is not a result. */
    if (rc != SIM_EXIT_USAGE && sim_result_save(doc, opt->json) && !rc) rc = SIM_EXIT_FAIL;
    return rc;
}

static int tpcc_main(int argc, char **argv)
{
    tpcc_options opt;
    sim_opt opts[64];
    tpcc_cli_init(&opt, opts, sizeof opts / sizeof *opts);
    const char *action = NULL;
    int rc = parse_cli(argc, argv, &opt, opts, &action);
    if (rc) return sim_opts_exit_status(rc);
    st_target *t = NULL;
    if ((rc = open_target(&opt, action, &t))) return rc;
    if (action && !strcmp(action, "cleanup")) {
        rc = do_cleanup(t);
        st_target_close(t);
        return rc;
    }
    json_t *doc = sim_result_new("tpcc", argc, argv, opts);
    json_object_set_new(doc, "action", json_string(action ? action : "prepare+run+check"));
    oltp_curve_cli_config(doc, "vusers", &opt.curve);
    json_object_set_new(doc, "target", st_target_json(t));
    rc = run_actions(&opt, t, action, doc);
    json_decref(doc);
    st_target_close(t);
    return rc;
}

static const char *const *tpcc_actions(void)
{
    static const char *const actions[] = {"prepare", "run", "check", "cleanup", NULL};
    return actions;
}

static const sim_command tpcc_command = {
    .name = "tpcc",
    .summary = "TPC-C-like OLTP on SQLite: TPS, tpmC and latency per transaction type",
    .main = tpcc_main,
    .actions = tpcc_actions,
};
SIM_REGISTER_COMMAND(tpcc_command)
