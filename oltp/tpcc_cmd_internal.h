/*
 * oltp/tpcc_cmd_internal.h: what the `appsim tpcc` command's files share: the parsed
 * options, the per-instance state, and the file names inside the target.
 *
 * Instance i (0-based) lives in "tpcc-<i+1>.db" (plus SQLite's "-wal"), and its pristine
 * copy in "tpcc-<i+1>.pristine"; every one is created through st_target, so it is in
 * the manifest and `appsim tpcc cleanup` removes exactly these.
 */
#ifndef APPSIM_TPCC_CMD_INTERNAL_H
#define APPSIM_TPCC_CMD_INTERNAL_H

#include "oltp/oltp.h"
#include "oltp/tpcc_internal.h"

#include <pthread.h>

typedef struct tpcc_options {
    uint64_t scale;
    uint64_t vusers;         /* per instance; 0 = 10 per warehouse */
    const char *vusers_text; /* --vusers: a count or a list (user steps); NULL = default */
    bool connections_auto;   /* --connections 0: from the users of each run */
    oltp_curve_cli curve;    /* --curve, its points and limits; user steps */
    uint64_t instances;
    uint64_t connections; /* per instance; 0 = automatic */
    uint64_t duration_ns;
    uint64_t warmup_ns; /* SIM_WARMUP_STEADY: --warmup steady */
    uint64_t steady_round_ns, steady_max_rounds;
    const char *pacing;
    uint64_t cycle_ns; /* 0 = the pacing mode's own */
    const char *mix;
    double rate;     /* open loop: transactions per second per instance; 0 = closed loop */
    bool uniform;    /* open loop: evenly spaced arrivals instead of exponential */
    uint64_t buffer; /* per instance; 0 = automatic */
    uint64_t seed;
    uint64_t report_interval_ns;
    const char *json;
    const char *sync;
    const char *integrity;
    bool keep_pristine;
    uint64_t keep_free; /* bytes the run and the load leave free on the target */
    uint64_t wal_limit; /* the WAL's bound (0 = grows with the database, tpcc_cmd.c) */
    bool quiet;
    st_target_opts target;
    const char *engine;
    const char *prefetch;     /* on|off: write transactions read outside the writer lock */
    const char *group_commit; /* on|off: WAL syncs after the writer lock, shared */
    const char *cpu_sched;    /* batch|normal: the connections' threads' policy */
    /* derived */
    tpcc_mix mixv;
    tpcc_pacing pacev;
} tpcc_options;

/* Per-instance state during a run. */
typedef struct tpcc_user {
    tpcc_deck deck;
    int8_t next_type;
    uint32_t w_id, d_id; /* home warehouse and district (Stock-Level's district) */
} tpcc_user;

typedef struct tpcc_dq_item {
    uint32_t w_id, carrier;
    uint64_t queued_ns;
} tpcc_dq_item;

/* One deferred-delivery worker per this many worker connections (at least one): a single
 * worker for all cannot keep up with the deliveries thousands of users queue (at scale 500,
 * 5,000 users on 32 connections queue about 24 a second, and one worker serves about 20). */
#define TPCC_CONNECTIONS_PER_DELIVERY_WORKER 8
/* Worker connections when --connections is 0: one per TPCC_USERS_PER_CONNECTION users,
 * at least TPCC_MIN_DEFAULT_CONNECTIONS, at most one per user and TPCC_MAX_CONNECTIONS. At scale
 * the connections, not the users, bound the transactions in flight, and a transaction there spends
 * most of its time waiting for the drive, the writer lock and the WAL sync; a pool that is busy all
 * the time adds its own queue to every user's latency, and many more connections than that only
 * lengthen the queue at the writer lock (docs/tpcc.md, "Choosing scale, users, connections and
 * buffer"). */
#define TPCC_USERS_PER_CONNECTION 64
#define TPCC_MIN_DEFAULT_CONNECTIONS 32
#define TPCC_MAX_CONNECTIONS 1024 /* --connections, and the default's cap */
/* The SQLite WAL's bound when --wal-limit is 0: a sixteenth of the estimated database,
 * from storage's default (ST_DB_DEFAULT_WAL_LIMIT, 64 MiB) to 1 GiB (the cap is
 * PostgreSQL's max_wal_size default). Every restart of the WAL holds writers back while
 * readers of older snapshots finish (tens of ms at scale), so a larger database, with
 * more readers in flight, gets a larger bound and restarts less often. */
#define TPCC_WAL_LIMIT_SHARE 16
#define TPCC_MAX_WAL_LIMIT (1ull << 30)
/* Under a buffer smaller than storage's floor, the bound's floor is the buffer (at least
 * this, four checkpoint triggers): SQLite's checkpoint reads each WAL frame it copies,
 * one read at a time, and frames the pool has evicted come from the drive. A WAL larger
 * than the buffer is therefore read back by the checkpoints, which then fall behind and
 * hold writers at the bound (docs/tpcc.md, "The WAL and its checkpoints"). */
#define TPCC_MIN_WAL_LIMIT (16ull << 20)
#define TPCC_MAX_DELIVERY_WORKERS 16

typedef struct tpcc_instance {
    int index;
    st_db *db;
    tpcc_writer_lock *lock;
    tpcc_meta meta;
    tpcc_consts c_run;
    tpcc_user *users;
    /* deferred Delivery queue and its workers (the queue servers of clause 2.7.2);
     * dq_mu also guards the deferred_* statistics, which every worker updates */
    pthread_mutex_t dq_mu;
    pthread_cond_t dq_cv;
    tpcc_dq_item *dq;
    size_t dq_cap, dq_head, dq_len, dq_max;
    bool dq_stop;
    pthread_t dworkers[TPCC_MAX_DELIVERY_WORKERS];
    int dworkers_started;
    sim_hist *deferred; /* measured deferred executions (queue to commit) */
    uint64_t deferred_errors, deferred_skipped, deferred_done_total;
    _Atomic uint64_t errors_reported;
    char first_error[64 + 512]; /* "what: " and an error message (err[512]) */
    json_t *pristine;           /* what --keep-pristine did */
    /* Measured transactions' block reads by type, from st_db_thread_reads deltas of
     * the thread that ran them (the delivery worker for Delivery). */
    _Atomic uint64_t rd_txns[TPCC_NTYPES];
    _Atomic uint64_t rd_blocks[TPCC_NTYPES][4]; /* db, db device, wal, wal device */
    /* Measured transactions' waits by type (tpcc_waits parts) and thread time in them;
     * the hold-time histograms of the write types are merged from the connections'
     * when they close (under dq_mu). */
    _Atomic uint64_t w_txns[TPCC_NTYPES], w_event_ns[TPCC_NTYPES];
    _Atomic uint64_t w_ns[TPCC_NTYPES][TPCC_W_NPARTS];
    sim_hist *lock_held[TPCC_NTYPES];
} tpcc_instance;

void tpcc_db_name(int instance, char *buf, size_t len);
void tpcc_pristine_name(int instance, char *buf, size_t len);

int tpcc_pristine_save(st_target *t, int instance, json_t *info, char *err, size_t errlen);
int tpcc_pristine_restore(st_target *t, int instance, json_t *info, char *err, size_t errlen);

/* Worker connections per instance for `vusers` users when --connections is 0. */
uint64_t tpcc_connections_of(const tpcc_options *o, uint64_t vusers);
/* Database options for instance databases from the command's options. */
void tpcc_db_opts(const tpcc_options *o, st_db_opts *dbo);
/* Deferred-delivery workers per instance for these options (1 to
 * TPCC_MAX_DELIVERY_WORKERS, one per TPCC_CONNECTIONS_PER_DELIVERY_WORKER connections). */
int tpcc_delivery_workers(const tpcc_options *o);
/* Estimated bytes of one loaded instance of `scale` warehouses. */
uint64_t tpcc_estimate_bytes(uint64_t scale);

/* tpcc.reads_per_txn from the measured transactions and block reads per type (db,
 * db device, wal, wal device), with those counts ("blocks"). */
json_t *tpcc_reads_json(const uint64_t txns[TPCC_NTYPES], const uint64_t blocks[TPCC_NTYPES][4]);
/* The 90th percentile of h against limit_s (clause 5.2.5.3); pass null when h is empty. */
json_t *tpcc_p90_json(const sim_hist *h, double limit_s);
/* tpcc.delivery_deferred: counts, latency, p90 limit and the histogram. */
json_t *tpcc_deferred_json(const sim_hist *h, uint64_t errors, uint64_t skipped, uint64_t pending);
/* The measured transactions' waits by type, summed over instances (or ranks). */
typedef struct tpcc_wait_totals {
    uint64_t txns[TPCC_NTYPES], event_ns[TPCC_NTYPES];
    uint64_t ns[TPCC_NTYPES][TPCC_W_NPARTS];
} tpcc_wait_totals;
/* tpcc.waits (oltp/tpcc_waits.c): shares of the connections' time in transactions and
 * ms per transaction, overall and by type, and the writer lock's hold time per write
 * transaction from held[] (histograms of ns, indexed by type; the read-only types'
 * are not used), with the raw totals and histograms for merging. */
json_t *tpcc_waits_json(const tpcc_wait_totals *t, sim_hist *const held[TPCC_NTYPES]);
/* Adds a tpcc.waits section's raw totals and histograms to t and held (ranks' merge). */
void tpcc_waits_add_json(const json_t *waits, tpcc_wait_totals *t, sim_hist *held[TPCC_NTYPES]);
/* A job of several ranks (docs/mpi.md): replaces the job's section tj's rank-0 parts
 * (deferred deliveries, reads per transaction, instances, scheduler) by the merge of the
 * ranks' own sections, ranks[i].tpcc (oltp/tpcc_ranks.c). */
void tpcc_merge_ranks(json_t *tj, const json_t *ranks);

/* One run over the prepared instances with o's load; with doc, its sections go into doc
 * and its summary is printed. *run is the finished run (the caller frees it; NULL when
 * the run did not start); an exit status. */
int tpcc_run_point(const tpcc_options *o, st_target *t, tpcc_instance *inst, json_t *doc,
                   sim_run **run, sim_vu_stats *vs);
/* The users' mean wait the engine draws (review, --cycle; 0 for spec, off, open loop),
 * and their mean wait between transactions whatever the pacing (Z of N = X (R + Z)). */
uint64_t tpcc_mean_wait_ns(const tpcc_options *o);
double tpcc_mean_think_s(const tpcc_options *o);
/* The curve or user steps (oltp_curve_run) over the open instances (tpcc_curve.c). */
int tpcc_run_curve(const tpcc_options *o, st_target *t, tpcc_instance *inst, json_t *doc);

/* The measured run over already prepared instances (databases open in inst[i].db).
 * Fills doc; returns an exit status. */
int tpcc_run_measure(const tpcc_options *o, st_target *t, tpcc_instance *inst, json_t *doc);

#endif
