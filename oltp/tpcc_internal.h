/*
 * oltp/tpcc_internal.h: the TPC-C workload's private contract between its files.
 *
 * Everything here works over a plain `sqlite3 *`, so the loader, the five
 * transactions and the consistency checks can be tested on an ordinary SQLite file;
 * only tpcc_cmd.c / tpcc_run.c know about st_target and st_db.
 *
 * Money is stored as INTEGER cents (w_ytd, d_ytd, c_balance, c_ytd_payment,
 * c_credit_lim, h_amount, i_price, ol_amount): sums are exact, so the clause 3.3.2
 * equalities hold exactly and third-party consistency SQL with `=` works unchanged.
 * Rates (w_tax, d_tax, c_discount) are REAL. Dates are INTEGER Unix seconds.
 */
#ifndef APPSIM_TPCC_INTERNAL_H
#define APPSIM_TPCC_INTERNAL_H

#include "sim/sim.h"
#include "storage/sqlite/sqlite.h"

#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------------ constants */

#define TPCC_DIST_PER_WH 10
#define TPCC_CUST_PER_DIST 3000
#define TPCC_ORD_PER_DIST 3000
#define TPCC_ITEMS 100000
#define TPCC_STOCK_PER_WH 100000
#define TPCC_NEW_ORD_START 2101 /* orders >= this are undelivered after load */

/* The layout of the tables (appsim_tpcc.format): a database of another layout is
 * loaded again by prepare and refused by run and check. 2: stock and customer are
 * rowid tables keyed by the integers below (1: WITHOUT ROWID on the composite key). */
#define TPCC_FORMAT 2

/* Stock (about 310 bytes a row) and customer (about 650) are keyed by one integer made
 * from the composite key, in the same order, instead of being WITHOUT ROWID tables on
 * it: those keep whole rows in their interior pages too (12 and 7 children a page,
 * trees of 8 and 9 levels at 500 warehouses, 2.4 GB of interior pages), where a rowid
 * table's interior cell is a child and an integer (hundreds a page: 4 levels), as the
 * clustered indexes of SQL Server and InnoDB keep only keys above the leaves. SQLite's
 * own advice is WITHOUT ROWID only for rows under a twentieth of a page. The key is SQL
 * text over SQL operands, so statements bind the spec's columns as before. */
#define TPCC_SQL_NUM_(x) #x
#define TPCC_SQL_NUM(x) TPCC_SQL_NUM_(x)
#define TPCC_STOCK_KEY_SQL(w, i) "((" w ") - 1) * " TPCC_SQL_NUM(TPCC_STOCK_PER_WH) " + (" i ")"
#define TPCC_CUSTOMER_KEY_SQL(w, d, c)                                                             \
    "(((" w ") - 1) * " TPCC_SQL_NUM(TPCC_DIST_PER_WH) " + (" d ") - 1) * " TPCC_SQL_NUM(          \
        TPCC_CUST_PER_DIST) " + (" c ")"

enum tpcc_type {
    TPCC_NEW_ORDER,
    TPCC_PAYMENT,
    TPCC_ORDER_STATUS,
    TPCC_DELIVERY,
    TPCC_STOCK_LEVEL,
    TPCC_NTYPES
};
extern const char *const tpcc_type_names[TPCC_NTYPES];

/* Per-run counters (sim_run counter indexes). */
enum tpcc_counter {
    TPCC_CNT_ROLLBACKS,       /* New-Orders rolled back on the unused item (1 %) */
    TPCC_CNT_RETRIES,         /* transactions restarted after SQLITE_BUSY/LOCKED */
    TPCC_CNT_BUSY_WAITS,      /* busy-handler waits inside SQLite */
    TPCC_CNT_REMOTE_LINES,    /* order lines supplied by a remote warehouse */
    TPCC_CNT_REMOTE_PAYMENTS, /* payments of a remote customer */
    TPCC_CNT_BY_NAME,         /* Payment / Order-Status selecting by last name */
    TPCC_CNT_PREFETCH_FAILED, /* prefetch read transactions that ended in an error */
    TPCC_NCOUNTERS
};
extern const char *const tpcc_counter_names[TPCC_NCOUNTERS];

/* Clause 5.2.5.3: 90th-percentile response-time limits, seconds. */
extern const double tpcc_p90_limit_s[TPCC_NTYPES];
#define TPCC_DELIVERY_DEFERRED_P90_LIMIT_S 80.0

/* ------------------------------------------------------------------ random inputs */

/* The constants C of NURand (clause 2.1.6). */
typedef struct tpcc_consts {
    uint32_t c_last;  /* A = 255 */
    uint32_t c_id;    /* A = 1023 */
    uint32_t ol_i_id; /* A = 8191 */
} tpcc_consts;

/* C-Load from a seed. */
void tpcc_consts_load(tpcc_consts *c, sim_rng *rng);
/* C-Run for a database loaded with `load`: same range, and for C_LAST the delta
 * |run - load| lies in [65, 119] and is neither 96 nor 112 (clause 2.1.6.1). */
void tpcc_consts_run(tpcc_consts *run, const tpcc_consts *load, sim_rng *rng);
bool tpcc_consts_valid_delta(uint32_t c_run, uint32_t c_load);

uint32_t tpcc_nurand(sim_rng *rng, uint32_t a, uint32_t c, uint32_t x, uint32_t y);
/* Random alphanumeric string of length [lo, hi] into buf (NUL-terminated); returns
 * length. buf must hold hi + 1. */
int tpcc_astring(sim_rng *rng, char *buf, int lo, int hi);
int tpcc_nstring(sim_rng *rng, char *buf, int lo, int hi);
/* Last name for a number 0..999 from the syllables (clause 4.3.2.3). buf >= 16. */
int tpcc_lastname(uint32_t num, char *buf);
/* a-string of [lo, hi] with "ORIGINAL" at a random position in 10 % of cases. */
int tpcc_data_string(sim_rng *rng, char *buf, int lo, int hi);

/* ------------------------------------------------------------------ schema */

/* Creates the nine tables and the appsim_tpcc metadata table (no secondary indexes). */
int tpcc_schema_create(sqlite3 *db, char *err, size_t errlen);
/* Secondary indexes, created after the bulk load. */
int tpcc_schema_indexes(sqlite3 *db, char *err, size_t errlen);

/* Metadata row stored in the database: what was loaded and whether it finished. */
typedef struct tpcc_meta {
    int64_t scale;
    uint64_t seed;
    tpcc_consts c_load;
    bool complete; /* the loader's last transaction sets it */
    bool fresh;    /* no transaction has run since the load (condition 11 applies) */
    int64_t loaded_at;
} tpcc_meta;

/* What tpcc_meta_read answers besides SIM_ERR (with err). err is left empty unless there
 * is a reason to give (SIM_ERR, TPCC_META_OLD). */
enum {
    TPCC_META_READ = SIM_OK, /* *m filled */
    TPCC_META_NONE = 1,      /* no metadata: not a TPC-C database, or an unfinished one */
    TPCC_META_OLD = 2,       /* another layout (format), err says which: load it again */
};
int tpcc_meta_read(sqlite3 *db, tpcc_meta *m, char *err, size_t errlen);
int tpcc_meta_set_fresh(sqlite3 *db, bool fresh, char *err, size_t errlen);

/* ------------------------------------------------------------------ loader */

typedef struct tpcc_load_opts {
    int64_t scale;       /* warehouses */
    uint64_t seed;       /* data and C-Load */
    int batch_rows;      /* rows per generated batch (0 = default) */
    bool quiet;          /* no progress lines */
    const char *label;   /* "instance 1" in progress lines, may be NULL */
    bool defer_complete; /* leave complete = 0: the caller sets it after syncing */
} tpcc_load_opts;

typedef struct tpcc_load_stats {
    uint64_t rows;
    double seconds;
    double gen_busy_seconds;    /* generator thread CPU-side busy time */
    double writer_wait_seconds; /* writer waiting for generated rows */
} tpcc_load_stats;

/*
 * Loads a complete database on an empty `db` (schema, data, indexes, metadata):
 * a generator thread produces row batches while the calling thread inserts them.
 * The metadata's `complete` is set in the last transaction, so an interrupted load
 * is never taken for a complete one. Returns SIM_OK, or SIM_ERR with err (interrupted: err says
 * so and sim_interrupted() is true).
 */
int tpcc_load(sqlite3 *db, const tpcc_load_opts *o, tpcc_load_stats *st, char *err, size_t errlen);

/* ------------------------------------------------------------------ transactions */

typedef struct tpcc_conn tpcc_conn;

/* Serializes write transactions of one database inside the process, in arrival order
 * (sim_fifo_lock): SQLite allows one writer, and its busy handler would sleep in
 * millisecond steps where the lock hands over at once; a plain mutex would let a
 * connection that just committed take it again ahead of waiting ones. May be NULL
 * (single connection tests). */
typedef struct tpcc_writer_lock tpcc_writer_lock;
tpcc_writer_lock *tpcc_writer_lock_new(void);
void tpcc_writer_lock_free(tpcc_writer_lock *l);

/* Prepares every statement on db. Returns NULL with err on failure. */
tpcc_conn *tpcc_conn_new(sqlite3 *db, int64_t scale, tpcc_writer_lock *lock, char *err,
                         size_t errlen);
void tpcc_conn_free(tpcc_conn *c); /* does not close db */
/* on: write transactions first read their pages in a read transaction outside the
 * writer lock (the pool warms concurrently; the transaction then runs whole under
 * the lock). Off by default. */
void tpcc_conn_set_prefetch(tpcc_conn *c, bool on);
/* Group commit: after each committed write transaction, once the writer lock is
 * released, `durable(arg, err, errlen)` must make the commit durable (SIM_OK, or SIM_ERR with
 * err: the transaction then fails). NULL: the commit itself was synchronous. */
typedef int (*tpcc_durable_fn)(void *arg, char *err, size_t errlen);
void tpcc_conn_set_durable(tpcc_conn *c, tpcc_durable_fn durable, void *arg);
sqlite3 *tpcc_conn_db(const tpcc_conn *c);

/* Where a connection's time went, cumulative ns, for the result's tpcc.waits
 * (tpcc_waits.c). Callers take differences around a transaction, on the thread that
 * runs it. The writer-lock parts: queued until granted; granted by the previous owner
 * but not yet running (the hand-over: the lock is idle); holding it, which includes
 * BEGIN IMMEDIATE (SQLite's own write lock: waits for a checkpoint's WAL restart), the
 * thread's device reads and COMMIT under it, and the thread's CPU time while holding it
 * (the rest of the hold it was waiting: for a read, a mutex or a core). After it, the group
 * commit's WAL sync. Before it, the prefetch read transaction (its device reads included). READS is
 * every device read of the thread (st_db_thread_reads). */
enum tpcc_wait_part {
    TPCC_W_LOCK_QUEUE,
    TPCC_W_HANDOVER,
    TPCC_W_HELD,
    TPCC_W_BEGIN_HELD,
    TPCC_W_READS_HELD,
    TPCC_W_COMMIT_HELD,
    TPCC_W_HELD_CPU,
    TPCC_W_DURABLE,
    TPCC_W_READS,
    TPCC_W_PREFETCH,
    TPCC_W_NPARTS
};
typedef struct tpcc_waits {
    uint64_t ns[TPCC_W_NPARTS];
    /* The last write transaction's time holding the writer lock, over its attempts
     * (0 for a read-only one): one sample of the hold-time histogram. */
    uint64_t txn_held_ns;
} tpcc_waits;
/* The connection's waits so far; READS from `reads`, the caller's snapshot of this
 * thread's counters (st_db_thread_reads_get), which it also uses for its block counts. */
void tpcc_conn_waits(const tpcc_conn *c, const st_db_thread_reads *reads, tpcc_waits *out);

/* Counts since the last tpcc_conn_take_counts (per connection, single thread). */
typedef struct tpcc_counts {
    uint64_t v[TPCC_NCOUNTERS];
} tpcc_counts;
void tpcc_conn_take_counts(tpcc_conn *c, tpcc_counts *out);

/* Clause 2.4.1.3: a New-Order has 5 to 15 order lines (and the loader's orders too,
 * clause 4.3.3.1). */
#define TPCC_MIN_ORDER_LINES 5
#define TPCC_MAX_ORDER_LINES 15

typedef struct tpcc_no_in {
    uint32_t w_id, d_id, c_id, ol_cnt;
    uint32_t i_id[TPCC_MAX_ORDER_LINES], supply_w_id[TPCC_MAX_ORDER_LINES],
        qty[TPCC_MAX_ORDER_LINES];
    bool rollback; /* last item id is unused */
} tpcc_no_in;

typedef struct tpcc_pay_in {
    uint32_t w_id, d_id, c_w_id, c_d_id, c_id;
    bool by_name;
    char c_last[16];
    int64_t h_amount_cents;
} tpcc_pay_in;

typedef struct tpcc_os_in {
    uint32_t w_id, d_id, c_id;
    bool by_name;
    char c_last[16];
} tpcc_os_in;

typedef struct tpcc_del_in {
    uint32_t w_id, o_carrier_id;
} tpcc_del_in;

typedef struct tpcc_sl_in {
    uint32_t w_id, d_id, threshold;
} tpcc_sl_in;

/* Input generation (clause 2.x.1) for a terminal with home warehouse w_id. */
void tpcc_gen_new_order(sim_rng *r, const tpcc_consts *c, int64_t scale, uint32_t w_id,
                        tpcc_no_in *in);
void tpcc_gen_payment(sim_rng *r, const tpcc_consts *c, int64_t scale, uint32_t w_id,
                      tpcc_pay_in *in);
void tpcc_gen_order_status(sim_rng *r, const tpcc_consts *c, uint32_t w_id, tpcc_os_in *in);
void tpcc_gen_delivery(sim_rng *r, uint32_t w_id, tpcc_del_in *in);
void tpcc_gen_stock_level(sim_rng *r, uint32_t w_id, uint32_t d_id, tpcc_sl_in *in);

/*
 * The transactions. Each runs to commit (or the spec's rollback for New-Order),
 * retrying on SQLITE_BUSY / SQLITE_LOCKED (counted). Return 0 on success (a
 * New-Order rolled back as the spec asks is a success: *rolled_back = true), -1 on a
 * database error with err filled.
 */
int tpcc_new_order(tpcc_conn *c, const tpcc_no_in *in, bool *rolled_back, char *err, size_t errlen);
int tpcc_payment(tpcc_conn *c, const tpcc_pay_in *in, char *err, size_t errlen);
int tpcc_order_status(tpcc_conn *c, const tpcc_os_in *in, char *err, size_t errlen);
/* skipped: districts without an undelivered order (clause 2.7.4.2). */
int tpcc_delivery(tpcc_conn *c, const tpcc_del_in *in, int *skipped, char *err, size_t errlen);
/* low_stock: the count the transaction reads. */
int tpcc_stock_level(tpcc_conn *c, const tpcc_sl_in *in, int *low_stock, char *err, size_t errlen);

/* ------------------------------------------------------------------ mix and pacing */

#define TPCC_DECK_MAX 100
typedef struct tpcc_mix {
    int pct[TPCC_NTYPES]; /* sums to 100 */
} tpcc_mix;
/* Parses "45,43,4,4,4"; checks the sum and the clause 5.2.3 minima (Payment >= 43,
 * the others >= 4). SIM_OK or SIM_ERR with err. */
int tpcc_mix_parse(const char *s, tpcc_mix *mix, char *err, size_t errlen);

/* A terminal's shuffled deck (clause 5.2.4.2): each card once per pass. */
typedef struct tpcc_deck {
    uint8_t cards[TPCC_DECK_MAX];
    uint8_t pos;
} tpcc_deck;
void tpcc_deck_init(tpcc_deck *d, const tpcc_mix *mix, sim_rng *rng);
int tpcc_deck_draw(tpcc_deck *d, const tpcc_mix *mix, sim_rng *rng);

typedef enum tpcc_pacing { TPCC_PACE_REVIEW, TPCC_PACE_SPEC, TPCC_PACE_OFF } tpcc_pacing;
/* Clause 5.2.5: keying time and mean think time per type, seconds. */
extern const double tpcc_keying_s[TPCC_NTYPES];
extern const double tpcc_think_s[TPCC_NTYPES];
/* The review regime's mean cycle per user (methodology page, section 1). */
#define TPCC_REVIEW_CYCLE_S 4.74

/* ------------------------------------------------------------------ checks */

typedef struct tpcc_check_result {
    int number;       /* 1..12 */
    const char *what; /* one line */
    bool skipped;     /* condition 11 after transactions ran */
    bool pass;
    int64_t violations; /* rows or groups that break it */
    double seconds;
} tpcc_check_result;

/* Runs conditions first..last (1..12); condition 11 is skipped unless `fresh`.
 * res has room for 12. Returns the number run, or -1 on a database error. */
int tpcc_check_run(sqlite3 *db, int first, int last, bool fresh, tpcc_check_result *res, char *err,
                   size_t errlen);
/* PRAGMA integrity_check (full) or quick_check: TPCC_INTEGRITY_OK, TPCC_INTEGRITY_PROBLEMS
 * (the first line in err) or SIM_ERR (a database error, or interrupted; err says). */
enum { TPCC_INTEGRITY_OK = SIM_OK, TPCC_INTEGRITY_PROBLEMS = 1 };
int tpcc_integrity(sqlite3 *db, bool quick, char *err, size_t errlen);

/* ------------------------------------------------------------------ helpers */

/* Executes SQL with no results; -1 with err. */
int tpcc_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);
int64_t tpcc_now_unix(void);

#endif
