/*
 * oltp/oltp.h: SQL workloads on SQLite (through storage/'s st_db).
 *
 * Commands offered (registered with sim/): `appsim tpcc` and `appsim sysbench`.
 * Each workload is an ops table; the sysbench tables run on more than one database
 * engine (SQLite here, LMDB in kv/), each engine registered by name.
 *
 * Return codes (sim/sim.h): the commands, the engines' open/meta/load functions and
 * everything that decides how a run ends return exit statuses (SIM_EXIT_*); parsers
 * and helpers that only succeed or fail return a status (SIM_OK, or SIM_ERR with a
 * message); statements and transactions of an engine return SB_OK, SB_RETRY or
 * SB_FAIL (below).
 */
#ifndef APPSIM_OLTP_H
#define APPSIM_OLTP_H

#include "sim/sim.h"
#include "storage/storage.h"

/* ===== Options both workloads share (oltp/oltp_opts.c) ===== */

/* `--group-commit on` makes --sync full commits durable with shared WAL syncs on
 * appsim's VFS. Given by name (opts' "group-commit" set) with another --sync or with
 * --buffered it could not apply, so it is refused: SIM_EXIT_USAGE after printing why;
 * otherwise SIM_EXIT_OK (the default "on" then quietly does not apply, and the result
 * says so). */
int oltp_check_group_commit(const sim_opt *opts, const char *group_commit, const char *sync,
                            bool buffered);

/* Option-table entries for the two choices (const char * "on"|"off" at dst_), one help
 * text for both workloads: tpcc's one writer per database and sysbench's one per table
 * file are the same writer lock. */
#define OLTP_OPT_PREFETCH(dst_)                                                                    \
    {                                                                                              \
        .name = "prefetch", .kind = SIM_OPT_CHOICE, .dst = &(dst_), .choices = "on|off",           \
        .help = "a write transaction first reads the pages it is going to change in a read "       \
                "snapshot (SQLite's; LMDB's in sysbench), then queues for the writer lock, so "    \
                "the drive sees concurrent reads (docs/tpcc.md, Concurrency at scale)"             \
    }
#define OLTP_OPT_GROUP_COMMIT(dst_)                                                                \
    {                                                                                              \
        .name = "group-commit", .kind = SIM_OPT_CHOICE, .dst = &(dst_), .choices = "on|off",       \
        .help = "SQLite with --sync full on appsim's VFS: a commit releases the writer lock "      \
                "before its WAL sync, concurrent commits share one sync, and each returns only "   \
                "when durable"                                                                     \
    }

/* ===== Service-level limits (oltp/oltp_slo.c) ===== */

/* One latency limit: the percentile (0 < p < 100) of one transaction type's latency
 * (type: index into the workload's type names), or of all transactions (type -1), at
 * most limit_ms. `source` says where it comes from ("--slo", "TPC-C 5.2.5.3"). */
typedef struct oltp_slo_limit {
    double percentile;
    int type;
    double limit_ms;
    const char *source;
} oltp_slo_limit;

#define OLTP_SLO_MAX 32
typedef struct oltp_slo {
    oltp_slo_limit lim[OLTP_SLO_MAX];
    int n;
} oltp_slo;

/* Appends the limits of `text` ("p99<=20ms,new_order:p90<=5s": [TYPE:]pNN<=TIME, comma
 * separated; p999 = 99.9; TIME needs a unit) to *out. SIM_OK, or SIM_ERR with a message
 * that says what is accepted. */
int oltp_slo_parse(const char *text, const char *const *types, int ntypes, oltp_slo *out, char *err,
                   size_t errlen);
/* [{"percentile", "type" (name or null), "limit_ms", "source"}, ...] */
json_t *oltp_slo_limits_json(const oltp_slo *s, const char *const *types);
/* Whether a point's latency (all: every type; per_type[t]: type t, in ns) meets every
 * limit. A point with no measured transaction does not; a type that ran none is not
 * held against it. */
bool oltp_slo_met(const oltp_slo *s, const sim_hist *all, const sim_hist *const *per_type);

/* What the service-level choice needs of each point of a curve. */
typedef struct oltp_point_outcome {
    double offered;  /* open loop: the offered rate; 0 for closed-loop points */
    double achieved; /* transactions per second measured */
    bool sustained;  /* kept up with its arrivals (closed loop: true) */
    bool met;        /* met every limit */
    bool complete;   /* ran to its end: not interrupted, not failed */
} oltp_point_outcome;

/* The point that gives the service-level throughput, or -1 when none does. A rate
 * curve (rate_kind): point 0 (the saturation run) when it met the limits and no
 * open-loop point at or below its achieved rate missed them or fell behind, else the
 * open-loop point of the highest offered rate that was sustained and met them. A user
 * curve: the point of the highest achieved rate that met them. Points cut short
 * (complete false) never count. */
int oltp_service_level_pick(const oltp_point_outcome *p, int n, bool rate_kind);
/* A rate curve's bracket for refinement: the offered rate of the picked open-loop point
 * (*lo) and the lowest offered rate above it whose complete point failed (*hi). False
 * when there is none (no point passed, point 0 did, or none above failed). */
bool oltp_service_level_bracket(const oltp_point_outcome *p, int n, double *lo, double *hi);

/* ===== Curves: rate curves and user steps (oltp/oltp_curve.c) ===== */

/*
 * A curve is a series of points, each a run of its own (warm-up, then a measured
 * phase) on the same open databases, which carry on from point to point (nothing is
 * restored in between). A rate curve first runs the saturation point (closed loop, as
 * fast as the workload goes), then open-loop points at percentages of its achieved
 * rate, then up to `refine` points bisecting the service level. A user curve runs one
 * closed-loop point per user count. The driver writes the result's "curve" and
 * "service_level" sections and prints the curve's table (docs/result-schema.md).
 */
typedef struct oltp_curve_req {
    int index;
    bool saturation;  /* point 0 of a rate curve: closed loop, no waits */
    bool closed_loop; /* saturation and user points */
    uint64_t users;   /* user points: users (threads) per instance; else 0 */
    double rate;      /* open loop: offered transactions/s over every instance */
    bool uniform;     /* open loop: evenly spaced arrivals */
    uint64_t warmup_ns, duration_ns, seed;
} oltp_curve_req;

/* What one point's run left, filled by the workload. */
typedef struct oltp_point_run {
    sim_run *run; /* finished; the driver frees it */
    sim_vu_stats vs;
    uint64_t vusers;  /* users (tpcc) or threads (sysbench) per instance of the point */
    uint64_t users;   /* closed loop: users over every instance (N of N = X (R + Z)) */
    uint64_t workers; /* connections over every instance */
    double think_s;   /* closed loop: the users' mean wait between transactions (Z) */
} oltp_point_run;

typedef struct oltp_curve_ops {
    const char *const *type_names;
    int ntypes;
    bool per_type; /* points carry per_type figures */
    /* Runs one point. With doc non-NULL (point 0) the workload also puts its usual run
     * sections into doc and prints its summary. An exit status; on SIM_EXIT_OK out->run
     * is set. */
    int (*run_point)(void *ctx, const oltp_curve_req *req, json_t *doc, oltp_point_run *out);
} oltp_curve_ops;

typedef struct oltp_curve_cfg {
    bool users_kind;
    const double *percents; /* rate curve: percent of the saturation rate */
    int npercents;
    const uint64_t *users; /* user curve: users (threads) per instance of each point */
    int nusers;
    uint64_t warmup_ns, duration_ns, seed;
    bool uniform;
    const oltp_slo *slo; /* NULL or no limits: no service level */
    int refine;          /* rate curve: most extra points bisecting the service level */
    bool quiet;
    const char *json_path; /* --json: "-" prints no table */
} oltp_curve_cfg;

/* Open-loop points must complete this share of their measured arrivals (or all but one
 * per connection), and their queue must grow by no more than the rest, to count as
 * sustained. */
#define OLTP_CURVE_SUSTAINED 0.98
/* The most points a curve holds, refinement included. */
#define OLTP_CURVE_MAX_POINTS 128

/* Runs the curve into doc; SIM_EXIT_OK (also when interrupted: the points so far are
 * in the result, marked), or the failing point's status. */
int oltp_curve_run(const oltp_curve_cfg *cfg, const oltp_curve_ops *ops, void *ctx, json_t *doc);
/* --curve-points or --vusers/--threads lists: "10,50,90" into out[0..max), percentages
 * (0 < p <= 1000) or whole counts (1..max_count); the count, or -1. */
int oltp_curve_parse_percents(const char *s, double *out, int max);
int oltp_curve_parse_counts(const char *s, uint64_t max_count, uint64_t *out, int max);

/* ===== Curve options (oltp/oltp_curve_opts.c) ===== */

/* The curve options as parsed; a command keeps one and adds OLTP_CURVE_OPTS to its table. */
typedef struct oltp_curve_cli {
    bool curve;
    const char *points; /* --curve-points */
    uint64_t point_warmup_ns, point_duration_ns;
    const char *slo;     /* --slo, NULL = none */
    uint64_t slo_refine; /* --slo-refine */
    /* resolved by oltp_curve_cli_resolve */
    double percents[64];
    int npercents;
    uint64_t steps[64]; /* --vusers / --threads list */
    int nsteps;
    oltp_slo limits;
} oltp_curve_cli;

#define OLTP_CURVE_DEFAULT_WARMUP_NS 5000000000ull
#define OLTP_CURVE_DEFAULT_DURATION_NS 20000000000ull
#define OLTP_CURVE_DEFAULT_REFINE 3

/* Option-table entries for a command's curve options into c (defaults set by
 * oltp_curve_cli_defaults). */
#define OLTP_CURVE_OPTS(c)                                                                         \
    {.name = "curve",                                                                              \
     .kind = SIM_OPT_FLAG,                                                                         \
     .dst = &(c)->curve,                                                                           \
     .help = "rate curve: a saturation run (closed loop, no waits), then open-loop points at "     \
             "percents of its rate (docs/result-schema.md, \"curve\")"},                           \
        SIM_VOCAB_CURVE_POINTS(&(c)->points, NULL),                                                \
        {.name = "point-warmup",                                                                   \
         .kind = SIM_OPT_DURATION,                                                                 \
         .dst = &(c)->point_warmup_ns,                                                             \
         .help = "curve and user steps: warm-up of each point"},                                   \
        {.name = "point-duration",                                                                 \
         .kind = SIM_OPT_DURATION,                                                                 \
         .dst = &(c)->point_duration_ns,                                                           \
         .min = 0.001,                                                                             \
         .help = "curve and user steps: measured interval of each point"},                         \
        {.name = "slo",                                                                            \
         .kind = SIM_OPT_STRING,                                                                   \
         .dst = &(c)->slo,                                                                         \
         .metavar = "LIMIT,...",                                                                   \
         .help = "curve and user steps: latency limits, [TYPE:]pNN<=TIME, e.g. p99<=20ms; the "    \
                 "result gives the highest rate served within them"},                              \
    {                                                                                              \
        .name = "slo-refine", .kind = SIM_OPT_U64, .dst = &(c)->slo_refine, .min = 0, .max = 32,   \
        .help = "curve: most extra points bisecting the service level between the two points "     \
                "that bracket it (0 = none)"                                                       \
    }

void oltp_curve_cli_defaults(oltp_curve_cli *c);
/* Checks the combination and resolves the lists: `counts` is the --vusers/--threads
 * text (users_opt names it; a list of more than one runs user steps), its counts go to
 * c->steps (at most max_count each); `single_only` (NULL-ended) are the options of a
 * single run that a curve or steps set themselves (--duration, --warmup, --rate...).
 * Refuses (SIM_EXIT_USAGE, message printed) anything accepted and not applied. */
int oltp_curve_cli_resolve(const char *command, const sim_opt *opts, oltp_curve_cli *c,
                           const char *counts, const char *users_opt, uint64_t max_count,
                           const char *const *single_only, const char *const *types, int ntypes);
/* Whether this invocation runs a curve or user steps. */
bool oltp_curve_cli_active(const oltp_curve_cli *c);
/* The result's config: `name` as a count or, for steps, the list of counts. */
void oltp_curve_cli_config(json_t *doc, const char *name, const oltp_curve_cli *c);
/* The driver's configuration from the command line. */
oltp_curve_cfg oltp_curve_cli_cfg(const oltp_curve_cli *c, uint64_t seed, bool uniform, bool quiet,
                                  const char *json_path);

/* ===== TPC-C (oltp/tpcc_*.c) ===== */

/*
 * `appsim tpcc [prepare|run|check|cleanup] --target DIR [options]` registers itself
 * with sim/ (SIM_REGISTER_COMMAND); nothing else in appsim calls into it, so it offers
 * no functions here. Its contract is the command line (docs/tpcc.md) and the result
 * document, which holds, beside sim/'s run sections (summary, per_type, intervals,
 * histograms, warmup, instances, device_io):
 *   "target"   st_target_json of the target;
 *   "database" one st_db_json (VFS, buffer pool counters, checkpoints) per instance;
 *   "prepare"  whether a load happened, its rows, seconds and warehouses/s;
 *   "tpcc"     setup (resolved users, connections, pacing, cycle, mix, buffer),
 *              rates (tpmC, nopm, efficiency_pct against 12.86 tpmC per warehouse),
 *              p90_limits per type (clause 5.2.5.3, pass/fail), delivery_deferred
 *              (deferred execution latency, histogram, skipped districts),
 *              per_instance figures, vu_engine statistics;
 *   "check"    integrity check and the twelve clause 3.3.2 conditions per instance;
 *   "curve", "service_level"  with --curve or a --vusers list (the Curves section below).
 * Transaction types (per_type keys): new_order, payment, order_status, delivery
 * (the queueing response), stock_level. Counters: rollbacks, retries, busy_waits,
 * remote_order_lines, remote_payments, by_last_name.
 * Database files in the target: tpcc-<n>.db (and -wal), tpcc-<n>.pristine.
 */

/* ===== sysbench tables (oltp/sysbench_*.c) ===== */

/*
 * `appsim sysbench` runs sysbench's oltp_* workloads (oltp_common.lua of sysbench 1.x)
 * on a database engine chosen by name: "sqlite" (oltp/sysbench_sqlite.c, through st_db)
 * and "lmdb" (kv/, which registers itself). The transaction mix, random ids and row
 * contents are generated here once for every engine; an engine only executes the
 * logical statements below. Tables are numbered 1..tables and ids 1..table_size, as
 * sbtest1..N in sysbench.
 */

/* c is ten groups of eleven random digits joined by '-' (119 characters), pad five
 * groups (59), stored as CHAR(120) / CHAR(60) by sysbench. */
#define SB_C_LEN 119
#define SB_PAD_LEN 59

void sb_gen_c(sim_rng *rng, char out[SB_C_LEN]);
void sb_gen_pad(sim_rng *rng, char out[SB_PAD_LEN]);

/* --rand-type: how ids are drawn (sysbench's sb_rand_default). */
typedef enum sb_rand_type {
    SB_RAND_UNIFORM,
    SB_RAND_GAUSSIAN,
    SB_RAND_SPECIAL,
    SB_RAND_PARETO,
    SB_RAND_ZIPFIAN,
} sb_rand_type;

typedef struct sb_dist {
    sb_rand_type type;
    unsigned spec_iter;  /* --rand-spec-iter (gaussian and special) */
    unsigned spec_pct;   /* --rand-spec-pct */
    unsigned spec_res;   /* --rand-spec-res */
    double pareto_h;     /* --rand-pareto-h */
    double zipf_exp;     /* --rand-zipfian-exp */
    double pareto_power; /* derived by sb_dist_init */
    double zipf_s, zipf_hx1;
} sb_dist;

/* Validates the parameters and derives the constants; SIM_OK or SIM_ERR with a message. */
int sb_dist_init(sb_dist *d, const char *type, unsigned spec_iter, unsigned spec_pct,
                 unsigned spec_res, double pareto_h, double zipf_exp, char *err, size_t errlen);
/* A value in [lo, hi] (lo <= hi). */
uint64_t sb_dist_next(const sb_dist *d, sim_rng *rng, uint64_t lo, uint64_t hi);
const char *sb_rand_type_name(sb_rand_type t);

/* Statement results, for checks and tests: rows returned (SUM: one) or changed, and
 * SUM(k). Engines set rows for every statement they run. */
typedef struct sb_result {
    uint64_t rows;
    int64_t sum;
} sb_result;

typedef enum sb_range_kind {
    SB_RANGE_SIMPLE,   /* SELECT c ... WHERE id BETWEEN ? AND ? */
    SB_RANGE_SUM,      /* SELECT SUM(k) ... */
    SB_RANGE_ORDER,    /* SELECT c ... ORDER BY c */
    SB_RANGE_DISTINCT, /* SELECT DISTINCT c ... ORDER BY c */
} sb_range_kind;

/* Engine status codes: SB_RETRY = a transient conflict (busy, snapshot moved); the
 * caller rolls back and runs the transaction again, counting a retry. */
enum { SB_OK = 0, SB_RETRY = 1, SB_FAIL = -1 };
/* "ok", "retry", "fail"; "unknown" for any other number. */
const char *sb_status_name(int status);

/* What prepare left in one instance's database. */
typedef struct sb_meta {
    uint32_t tables;
    uint64_t table_size;
    uint64_t seed;
    bool complete; /* false when prepare did not finish */
} sb_meta;

/* A row a write transaction is going to change, for prefetch_writes: an UPDATE of k
 * (k_new unused), of c, or a DELETE then INSERT of the same id with k = k_new. */
typedef enum sb_write_kind { SB_W_UPDATE_K, SB_W_UPDATE_C, SB_W_DELETE_INSERT } sb_write_kind;
typedef struct sb_write {
    uint32_t table;
    sb_write_kind kind;
    uint64_t id, k_new;
} sb_write;
/* The most writes of one transaction an engine is told of ahead (the default mix has 4). */
#define SB_PREFETCH_MAX 64

/* Where a connection's time went, cumulative (ns): queued for tables' writer locks,
 * holding at least one (and not queued for another), device reads of its thread (all
 * of them) and the part of them made while holding a writer lock, COMMIT statements
 * (with sync full and no group commit: the WAL write and sync, under the lock),
 * waiting for a group commit's WAL sync after the lock, and reading ahead for the
 * writes (prefetch_writes), with the prefetches that failed. Callers take differences
 * around an event, on the thread that runs it. */
typedef struct sb_waits {
    uint64_t lock_ns, held_ns, read_ns, read_held_ns, commit_ns, durable_ns, prefetch_ns;
    uint64_t prefetch_failed;
    /* An engine that reads through page faults (no timer sees them) counts the calling
     * thread's major faults instead: all of them so far, those taken while holding the
     * writer lock, and those in prefetch_writes. 0 for an engine that times its reads. */
    uint64_t faults, faults_held, faults_prefetch;
} sb_waits;

/* One instance's database set as an engine opens it. */
typedef struct sb_db_opts {
    int instance;    /* 0-based; the file names carry instance + 1 ("-i1") */
    uint32_t tables; /* for sizing (LMDB map size, named databases) */
    uint64_t table_size;
    uint64_t buffer_bytes;   /* --buffer; 0 = the engine's default */
    const char *sync;        /* "full" | "normal" | "off" */
    int max_connections;     /* --threads (readers, pool sizing) */
    const char *io_engine;   /* storage I/O engine for a VFS (NULL = default) */
    uint64_t wal_limit;      /* SQLite: the WAL's bound (0 = storage's default) */
    bool group_commit;       /* SQLite: group commit when sync is full on the VFS */
    bool loading;            /* opened for prepare: bulk-load settings */
    const char *load_via;    /* SQLite prepare: "pages" (default) or "sql" */
    const char *table_files; /* SQLite: "shared", "per-table", or NULL: as prepared (shared) */
} sb_db_opts;

/*
 * A database engine for the sbtest tables. A db is one instance's database set; a conn
 * is used by one thread at a time. Statement functions return SB_OK, SB_RETRY or
 * SB_FAIL (then conn_error says why). Transactions: begin(write=false) opens a read
 * snapshot for selects, begin(write=true) a write transaction; commit ends either.
 * After commit (even a failed one) or rollback returns, no transaction is open.
 */
typedef struct sb_engine_ops {
    const char *name;
    const char *description;
    /* Files instance `instance` (0-based) keeps in the target, in names[0..n) (n
     * returned), named with instance + 1: for table 0 the instance's own files (names[0]
     * marks the instance as present), for table t >= 1 the files that hold table t
     * alone (none when tables share a file). Instance -1 names the "-i0" files of an
     * older appsim, which numbered them from 0 (sb_action_old_layout). */
    int (*files)(int instance, uint32_t table, char names[][64], int max);
    /* load_table may run for different tables of one db on different threads at once
     * (each table in its own file with its own writer). */
    bool parallel_tables;
    /* Capabilities, so that commands ask what an engine does rather than its name:
     * on_vfs: its files go through appsim's VFS and buffer pool (--ioengine, --buffered,
     * --wal-limit and --load-via apply); otherwise it reads through the page cache
     * (mmap) and --buffer is a memory limit. */
    bool on_vfs;
    int (*open)(st_target *t, const sb_db_opts *o, bool create, void **db, char *err,
                size_t errlen);
    void (*close)(void *db);
    int (*meta_get)(void *db, sb_meta *m, char *err, size_t errlen);
    int (*meta_put)(void *db, const sb_meta *m, char *err, size_t errlen);
    /* Creates table `table` with `rows` rows (ids 1..rows, k uniform in 1..rows, c and
     * pad from sb_gen_*) and its secondary index on k; rng seeded by the caller. */
    int (*load_table)(void *db, uint32_t table, uint64_t rows, sim_rng *rng, char *err,
                      size_t errlen);
    void *(*connect)(void *db, char *err, size_t errlen);
    void (*disconnect)(void *conn);
    const char *(*conn_error)(void *conn);
    int (*begin)(void *conn, bool write);
    /* Optional: the tables the next begin(write=true) will write, so that an engine
     * with one writer lock per table takes them all at begin, in one global order
     * (no deadlock, no retry). Writes to other tables are still allowed. */
    void (*plan_writes)(void *conn, const uint32_t *tables, int n);
    int (*commit)(void *conn);
    void (*rollback)(void *conn);
    /* Optional: reads, outside any writer lock, the pages the writes w[0..n) will need
     * (their rows and index entries), so that they are in the engine's cache before
     * the write transaction takes its writer locks. Called with no transaction or a
     * read snapshot open, and leaves it so (a snapshot may then cover more tables).
     * Only warms the cache: the writes then run in full; a failure is counted
     * (waits), never an error. */
    void (*prefetch_writes)(void *conn, const sb_write *w, int n);
    /* Optional: the connection's wait times so far (sb_waits), called on the thread that
     * runs the connection's events. */
    void (*waits)(void *conn, sb_waits *out);
    int (*point_select)(void *conn, uint32_t table, uint64_t id, sb_result *r);
    int (*range)(void *conn, uint32_t table, sb_range_kind kind, uint64_t lo, uint64_t hi,
                 sb_result *r);
    int (*update_index)(void *conn, uint32_t table, uint64_t id, sb_result *r);
    int (*update_non_index)(void *conn, uint32_t table, uint64_t id, const char *c, sb_result *r);
    int (*delete_row)(void *conn, uint32_t table, uint64_t id, sb_result *r);
    /* id 0: the next id after the largest (sysbench's auto-increment insert). */
    int (*insert_row)(void *conn, uint32_t table, uint64_t id, uint64_t k, const char *c,
                      const char *pad, sb_result *r);
    /* Consistency of tables 1..tables: {"rows":[...], "index_consistent":bool, ...} in
     * *report; returns SIM_EXIT_OK when consistent, SIM_EXIT_FAIL otherwise (or on error). */
    int (*check)(void *db, uint32_t tables, json_t **report, char *err, size_t errlen);
    /* Around the measured run, for every instance at once: memory policy (LMDB's
     * memory cgroup), probes. `section` is the engine's object in the result, which
     * run_end completes. Optional (NULL). */
    /* run_begin may leave state for run_end in *run_state (per run: nothing is kept in
     * the engine between runs, which may follow each other in one process). */
    int (*run_begin)(void *const *dbs, int ndbs, const sb_db_opts *o, sim_run *run, json_t *section,
                     void **run_state, char *err, size_t errlen);
    void (*run_end)(void *const *dbs, int ndbs, void *run_state, json_t *section);
    /* Engine facts for the result (one object per instance). */
    json_t *(*json)(void *db);
    /* Optional: the smallest --buffer (per instance) the engine runs with at
     * `connections` connections per instance, and why; a smaller one is refused before
     * anything is opened. */
    uint64_t (*min_buffer)(uint64_t connections);
    const char *min_buffer_why;
    /* The memory the engine gives this instance's data (0: no bound of appsim's) and the
     * data set's bytes, called after open and before the run: the result's "cache"
     * section (sim_result_put_cache), with `buffer_is` saying what the memory is. */
    void (*cache)(void *db, uint64_t *buffer_bytes, uint64_t *data_bytes);
    const char *buffer_is;
} sb_engine_ops;

void sb_register_engine(const sb_engine_ops *ops);
const sb_engine_ops *sb_find_engine(const char *name);
/* "lmdb|sqlite" (registered names, sorted, '|' separated). */
const char *sb_engine_names(void);

#define SB_REGISTER_ENGINE(var)                                                                    \
    __attribute__((constructor)) static void sb_register_##var(void)                               \
    {                                                                                              \
        sb_register_engine(&(var));                                                                \
    }

/* The eight workloads of sysbench's oltp_*.lua. */
typedef enum sb_workload {
    SB_WL_READ_WRITE,
    SB_WL_READ_ONLY,
    SB_WL_WRITE_ONLY,
    SB_WL_POINT_SELECT,
    SB_WL_UPDATE_INDEX,
    SB_WL_UPDATE_NON_INDEX,
    SB_WL_INSERT,
    SB_WL_DELETE,
    SB_WL_COUNT,
} sb_workload;

const char *sb_workload_name(sb_workload w);
int sb_workload_parse(const char *name, sb_workload *w); /* SIM_OK or SIM_ERR */

/* The statement mix (sysbench's count options). */
typedef struct sb_mix {
    uint32_t point_selects, simple_ranges, sum_ranges, order_ranges, distinct_ranges;
    uint32_t index_updates, non_index_updates, delete_inserts;
    uint32_t range_size;
    bool range_selects; /* false: no range selects at all */
    bool skip_trx;      /* autocommit every statement, no BEGIN/COMMIT */
} sb_mix;

/* Statements run per event: reads (SELECT), writes (UPDATE/DELETE/INSERT) and other
 * (BEGIN/COMMIT), counted the way sysbench counts queries. */
typedef struct sb_counts {
    uint64_t reads, writes, other, retries;
} sb_counts;

/* The statements one event of workload w issues with mix m (what sb_event counts on a
 * successful first attempt). */
sb_counts sb_expected_counts(sb_workload w, const sb_mix *m);

typedef struct sb_event_cfg {
    const sb_engine_ops *engine;
    sb_workload workload;
    sb_mix mix;
    sb_dist dist;
    uint32_t tables;
    uint64_t table_size;
    uint32_t max_retries; /* attempts after the first on SB_RETRY */
    bool prefetch;        /* tell the engine the writes ahead (prefetch_writes) */
} sb_event_cfg;

/* Runs one event (sysbench's event(): one transaction of the workload) on conn,
 * retrying on SB_RETRY; adds what ran to *c. Returns SB_OK or SB_FAIL with a message. */
int sb_event(const sb_event_cfg *cfg, void *conn, sim_rng *rng, sb_counts *c, char *err,
             size_t errlen);

#endif
