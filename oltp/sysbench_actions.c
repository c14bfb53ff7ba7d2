/*
 * oltp/sysbench_actions.c: what `appsim sysbench` does for prepare, run, check and
 * cleanup, for any registered engine.
 *
 * Instance i keeps its own database files (the engine names them after i), so N
 * instances are N independent sets of tables on one target, like N VMs on one drive;
 * each has its own --threads connections, TPS is summed and histograms merged by sim/.
 * Prepare loads in parallel (instances, or tables when the engine keeps each table in
 * its own file; at most one thread per CPU) and marks an instance complete only after
 * all its tables are in, so an interrupted prepare is detected instead of being
 * measured.
 */
#include "oltp/sysbench_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 8

sb_db_opts sb_cmd_db_opts(const sb_cmd *c, int instance, bool loading)
{
    return (sb_db_opts){
        .instance = instance,
        .tables = (uint32_t)c->tables,
        .table_size = c->table_size,
        .buffer_bytes = c->buffer,
        .sync = c->sync,
        .max_connections = (int)c->threads,
        .io_engine = c->io_engine,
        .wal_limit = c->wal_limit,
        .group_commit = c->group_commit && !strcmp(c->group_commit, "on"),
        .loading = loading,
        .load_via = c->load_via,
        .table_files = c->table_files,
    };
}

bool sb_cmd_instance_exists(const sb_cmd *c, int instance)
{
    char names[MAX_FILES][64];
    int n = c->engine->files(instance, 0, names, MAX_FILES);
    return n > 0 && st_target_owns(c->t, names[0]);
}

int sb_action_old_layout(const sb_cmd *c)
{
    char names[MAX_FILES][64];
    if (c->engine->files(-1, 0, names, MAX_FILES) <= 0 || !st_target_owns(c->t, names[0]))
        return SIM_EXIT_OK;
    sim_error("%s holds sysbench %s databases of an older appsim, which numbered the instance "
              "files from 0 (%s); appsim now numbers them from 1, as its text and results do. "
              "Remove them with `appsim sysbench cleanup --engine %s --target %s` (it removes "
              "both numberings) and prepare again",
              c->target, c->engine->name, names[0], c->engine->name, c->target);
    return SIM_EXIT_USAGE;
}

static uint64_t table_files_bytes(const sb_cmd *c, int instance, uint32_t table)
{
    char names[MAX_FILES][64], path[4096];
    int n = c->engine->files(instance, table, names, MAX_FILES);
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(st_target_file_path(c->t, names[i], path, sizeof path), &st) == 0)
            total += (uint64_t)st.st_size;
    }
    return total;
}

static uint64_t files_bytes(const sb_cmd *c, int instance)
{
    uint64_t total = table_files_bytes(c, instance, 0);
    for (uint32_t t = 1; t <= c->tables; t++)
        total += table_files_bytes(c, instance, t);
    return total;
}

/* Compares an instance's meta with the options; 0, or a usage error with a message. */
static int meta_matches(const sb_cmd *c, int instance, const sb_meta *m)
{
    if (!m->complete) {
        sim_error("instance %d's tables are incomplete (prepare was interrupted or failed): run "
                  "`appsim sysbench cleanup --engine %s --target %s` and prepare again",
                  instance + 1, c->engine->name, c->target);
        return SIM_EXIT_USAGE;
    }
    if (m->tables != c->tables || m->table_size != c->table_size) {
        sim_error("instance %d was prepared with --tables %u --table-size %llu, not --tables %llu "
                  "--table-size %llu: pass those, or cleanup and prepare again",
                  instance + 1, m->tables, (unsigned long long)m->table_size,
                  (unsigned long long)c->tables, (unsigned long long)c->table_size);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

int sb_action_needs_prepare(sb_cmd *c, int *needs)
{
    int present = 0;
    for (int i = 0; i < (int)c->instances; i++)
        present += sb_cmd_instance_exists(c, i);
    if (present == 0) {
        *needs = 1;
        return SIM_EXIT_OK;
    }
    if (present != (int)c->instances) {
        sim_error("only %d of %llu instances are prepared in %s: run cleanup, then prepare with "
                  "--instances %llu",
                  present, (unsigned long long)c->instances, c->target,
                  (unsigned long long)c->instances);
        return SIM_EXIT_USAGE;
    }
    *needs = 0;
    return SIM_EXIT_OK;
}

/* ------------------------------------------------------------------ prepare */

/*
 * Loading: the databases of all instances are opened (created) first and marked
 * incomplete; then threads, at most one per CPU, take work items: one table each
 * when the engine keeps tables in separate files (parallel_tables), else one whole
 * instance. An instance is marked complete by the main thread once every one of its
 * tables loaded (each engine makes its files durable before load_table returns).
 */
typedef struct loader {
    sb_cmd *c;
    void **dbs;
    uint64_t items;
    atomic_uint_fast64_t next; /* next work item */
    atomic_uint_fast64_t rows;
    atomic_int rc;
    atomic_int threads_done; /* loader threads that have returned */
    pthread_mutex_t lock;
    char err[1024];
} loader;

static void load_fail(loader *l, int rc, const char *msg)
{
    pthread_mutex_lock(&l->lock);
    if (!atomic_load(&l->rc)) {
        atomic_store(&l->rc, rc);
        snprintf(l->err, sizeof l->err, "%s", msg);
    }
    pthread_mutex_unlock(&l->lock);
}

static int load_one(loader *l, int inst, uint32_t t)
{
    sb_cmd *c = l->c;
    char err[1024];
    if (sim_interrupted() || atomic_load(&l->rc)) return SIM_ERR;
    sim_info("%s: instance %d: loading sbtest%u (%llu rows)", c->engine->name, inst + 1, t,
             (unsigned long long)c->table_size);
    sim_rng rng;
    sim_rng_seed(&rng, c->seed, (uint64_t)inst << 32 | t);
    int rc = c->engine->load_table(l->dbs[inst], t, c->table_size, &rng, err, sizeof err);
    if (rc == 0)
        atomic_fetch_add(&l->rows, c->table_size);
    else
        load_fail(l, rc, sim_interrupted() ? "interrupted" : err);
    return rc;
}

static void *loader_main(void *arg)
{
    loader *l = arg;
    uint64_t item;
    bool per_table = l->c->engine->parallel_tables;
    while ((item = atomic_fetch_add(&l->next, 1)) < l->items) {
        if (per_table) {
            load_one(l, (int)(item / l->c->tables), (uint32_t)(item % l->c->tables) + 1);
            continue;
        }
        for (uint32_t t = 1; t <= l->c->tables; t++)
            if (load_one(l, (int)item, t)) break;
    }
    if (sim_interrupted()) load_fail(l, SIM_EXIT_FAIL, "interrupted");
    atomic_fetch_add(&l->threads_done, 1);
    return NULL;
}

/* While the loader threads work: the shared progress line, by tables loaded (a table is
 * counted when it is whole). */
static void watch_load(loader *l, int threads)
{
    sb_cmd *c = l->c;
    uint64_t tables = c->instances * c->tables;
    sim_progress prog;
    sim_progress_start(&prog, "sysbench: loading", tables, c->quiet);
    while (atomic_load(&l->threads_done) < threads) {
        struct timespec pause = {.tv_nsec = 100000000L};
        nanosleep(&pause, NULL);
        uint64_t now = sim_now_ns();
        uint64_t rows = atomic_load(&l->rows), done = rows / c->table_size;
        if (!done || !sim_progress_due(&prog, now)) continue;
        char detail[128];
        snprintf(detail, sizeof detail, "%llu of %llu tables, %.0f rows/s",
                 (unsigned long long)done, (unsigned long long)tables,
                 (double)rows / ((double)(now - prog.t0) / 1e9));
        sim_progress_line(&prog, now, done, detail, false);
    }
    sim_progress_clear(&prog);
}

/* Opens every instance for loading and writes its incomplete meta row. */
static int open_for_load(loader *l)
{
    sb_cmd *c = l->c;
    char err[1024];
    for (int i = 0; i < (int)c->instances; i++) {
        sb_db_opts o = sb_cmd_db_opts(c, i, true);
        int rc = c->engine->open(c->t, &o, true, &l->dbs[i], err, sizeof err);
        sb_meta m = {.tables = (uint32_t)c->tables, .table_size = c->table_size, .seed = c->seed};
        if (rc == 0) rc = c->engine->meta_put(l->dbs[i], &m, err, sizeof err);
        if (rc) {
            load_fail(l, rc, err);
            return rc;
        }
    }
    return SIM_EXIT_OK;
}

/* Loads with up to one thread per CPU; returns the threads used. */
static int load_all(loader *l)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t max = cpus > 0 ? (uint64_t)cpus : 1;
    if (max > 256) max = 256;
    int nthreads = (int)(l->items < max ? l->items : max);
    pthread_t th[256];
    int started = 0;
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&th[started], NULL, loader_main, l) == 0) started++;
    if (!started) loader_main(l);
    watch_load(l, started);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    return started ? started : 1;
}

/* Marks every instance complete (after all tables loaded) and closes them. */
static void close_after_load(loader *l)
{
    sb_cmd *c = l->c;
    char err[1024];
    for (int i = 0; i < (int)c->instances; i++) {
        if (!l->dbs[i]) continue;
        if (!atomic_load(&l->rc)) {
            sb_meta m = {.tables = (uint32_t)c->tables,
                         .table_size = c->table_size,
                         .seed = c->seed,
                         .complete = true};
            int rc = c->engine->meta_put(l->dbs[i], &m, err, sizeof err);
            if (rc) load_fail(l, rc, err);
        }
        c->engine->close(l->dbs[i]);
    }
}

int sb_action_prepare(sb_cmd *c, json_t *doc)
{
    for (int i = 0; i < (int)c->instances; i++) {
        if (sb_cmd_instance_exists(c, i)) {
            sim_error("instance %d is already prepared in %s: run `appsim sysbench cleanup "
                      "--engine %s --target %s` first",
                      i + 1, c->target, c->engine->name, c->target);
            return SIM_EXIT_USAGE;
        }
    }
    /* Room for the rows (c, pad, k, id, index entry) with B-tree overhead. */
    uint64_t need = c->instances * c->tables * c->table_size * 400;
    char err[1024];
    int rc = st_target_check_space(c->t, need + c->keep_free, err, sizeof err);
    if (rc) {
        char keep[32];
        sim_error("%s (the need includes --keep-free %s left free)", err,
                  sim_format_size(c->keep_free, keep, sizeof keep));
        return rc;
    }
    loader l = {.c = c};
    l.dbs = sim_xcalloc(c->instances, sizeof *l.dbs);
    l.items = c->engine->parallel_tables ? c->instances * c->tables : c->instances;
    pthread_mutex_init(&l.lock, NULL);
    uint64_t t0 = sim_now_ns();
    int threads = 0;
    if (open_for_load(&l) == 0) threads = load_all(&l);
    close_after_load(&l);
    double secs = (double)(sim_now_ns() - t0) / 1e9;
    pthread_mutex_destroy(&l.lock);
    free(l.dbs);
    uint64_t rows = atomic_load(&l.rows), bytes = 0;
    for (int i = 0; i < (int)c->instances; i++)
        bytes += files_bytes(c, i);
    json_object_set_new(doc, "prepare",
                        json_pack("{s:s, s:I, s:f, s:f, s:I, s:i, s:s, s:b, s:b}", "engine",
                                  c->engine->name, "rows", (json_int_t)rows, "seconds", secs,
                                  "rows_per_s", secs > 0 ? rows / secs : 0.0, "bytes",
                                  (json_int_t)bytes, "loader_threads", threads, "parallel",
                                  c->engine->parallel_tables ? "tables" : "instances", "complete",
                                  atomic_load(&l.rc) == 0, "interrupted", sim_interrupted()));
    if (atomic_load(&l.rc)) {
        sim_error("prepare failed: %s", l.err);
        return atomic_load(&l.rc);
    }
    printf("prepare (%s): %llu rows in %.2f s = %.0f rows/s, %.1f MiB on disk, %d loader "
           "thread(s)\n",
           c->engine->name, (unsigned long long)rows, secs, secs > 0 ? rows / secs : 0.0,
           bytes / 1048576.0, threads);
    fflush(stdout);
    return SIM_EXIT_OK;
}

/* ------------------------------------------------------------------ run */

typedef struct sb_wl {
    sb_cmd *c;
    void **dbs;
    atomic_bool warned;
    pthread_mutex_t lock;
    char first_error[512];
    atomic_int failed_connects;
} sb_wl;

/* The wait counters (CNT_EVENT_NS on) exist only for an engine that times its waits. */
enum {
    CNT_READS,
    CNT_WRITES,
    CNT_OTHER,
    CNT_RETRIES,
    CNT_EVENT_NS,
    CNT_LOCK_NS,
    CNT_HELD_NS,
    CNT_READ_NS,
    CNT_READ_HELD_NS,
    CNT_COMMIT_NS,
    CNT_DURABLE_NS,
    CNT_PREFETCH_NS,
    CNT_PREFETCH_FAILED,
    CNT_FAULTS,
    CNT_FAULTS_HELD,
    CNT_FAULTS_PREFETCH,
    CNT_COUNT
};
static const char *const counter_names[CNT_COUNT] = {"reads",
                                                     "writes",
                                                     "other",
                                                     "retries",
                                                     "event_ns",
                                                     "lock_wait_ns",
                                                     "lock_held_ns",
                                                     "device_read_ns",
                                                     "read_held_ns",
                                                     "commit_ns",
                                                     "durable_wait_ns",
                                                     "prefetch_ns",
                                                     "prefetch_failed",
                                                     "major_faults",
                                                     "major_faults_held",
                                                     "major_faults_prefetch"};

/* An event's waits (after minus before) into the meter, with its time on the thread. */
static void count_waits(sim_meter *m, const sb_waits *a, const sb_waits *b, uint64_t event_ns)
{
    sim_meter_count(m, CNT_EVENT_NS, event_ns);
    sim_meter_count(m, CNT_LOCK_NS, b->lock_ns - a->lock_ns);
    sim_meter_count(m, CNT_HELD_NS, b->held_ns - a->held_ns);
    sim_meter_count(m, CNT_READ_NS, b->read_ns - a->read_ns);
    sim_meter_count(m, CNT_READ_HELD_NS, b->read_held_ns - a->read_held_ns);
    sim_meter_count(m, CNT_COMMIT_NS, b->commit_ns - a->commit_ns);
    sim_meter_count(m, CNT_DURABLE_NS, b->durable_ns - a->durable_ns);
    sim_meter_count(m, CNT_PREFETCH_NS, b->prefetch_ns - a->prefetch_ns);
    sim_meter_count(m, CNT_PREFETCH_FAILED, b->prefetch_failed - a->prefetch_failed);
    sim_meter_count(m, CNT_FAULTS, b->faults - a->faults);
    sim_meter_count(m, CNT_FAULTS_HELD, b->faults_held - a->faults_held);
    sim_meter_count(m, CNT_FAULTS_PREFETCH, b->faults_prefetch - a->faults_prefetch);
}

static void *vu_open(void *wlp, int instance, int worker)
{
    sb_wl *wl = wlp;
    char err[512];
    if (sim_thread_set_cpu_sched(wl->c->cpu_sched, err, sizeof err)) {
        sim_error("instance %d connection %d: %s", instance + 1, worker, err);
        atomic_fetch_add(&wl->failed_connects, 1);
        return NULL;
    }
    void *conn = wl->c->engine->connect(wl->dbs[instance], err, sizeof err);
    if (!conn) {
        sim_error("instance %d connection %d: %s", instance + 1, worker, err);
        atomic_fetch_add(&wl->failed_connects, 1);
    }
    return conn;
}

static void vu_close(void *wlp, void *conn)
{
    sb_wl *wl = wlp;
    wl->c->engine->disconnect(conn);
}

static int vu_unit(void *wlp, void *conn, int instance, uint32_t vu, sim_rng *rng, sim_meter *m)
{
    sb_wl *wl = wlp;
    sb_counts n = {0};
    char err[512];
    const sb_engine_ops *e = wl->c->engine;
    sb_waits w0 = {0}, w1 = {0};
    if (e->waits) e->waits(conn, &w0);
    uint64_t t0 = sim_now_ns();
    int rc = sb_event(&wl->c->ev, conn, rng, &n, err, sizeof err);
    if (e->waits) {
        e->waits(conn, &w1);
        count_waits(m, &w0, &w1, sim_now_ns() - t0);
    }
    sim_meter_count(m, CNT_READS, n.reads);
    sim_meter_count(m, CNT_WRITES, n.writes);
    sim_meter_count(m, CNT_OTHER, n.other);
    sim_meter_count(m, CNT_RETRIES, n.retries);
    if (rc == SB_OK) return SIM_OK;
    if (!atomic_exchange(&wl->warned, true)) {
        pthread_mutex_lock(&wl->lock);
        snprintf(wl->first_error, sizeof wl->first_error, "%s", err);
        pthread_mutex_unlock(&wl->lock);
        sim_warn("instance %d: transaction failed: %s (further errors are counted only)",
                 instance + 1, err);
    }
    return SIM_ERR;
}

static json_t *mix_json(const sb_mix *m)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:b}", "point_selects",
                     (json_int_t)m->point_selects, "simple_ranges", (json_int_t)m->simple_ranges,
                     "sum_ranges", (json_int_t)m->sum_ranges, "order_ranges",
                     (json_int_t)m->order_ranges, "distinct_ranges", (json_int_t)m->distinct_ranges,
                     "index_updates", (json_int_t)m->index_updates, "non_index_updates",
                     (json_int_t)m->non_index_updates, "delete_inserts",
                     (json_int_t)m->delete_inserts, "range_size", (json_int_t)m->range_size,
                     "range_selects", m->range_selects, "skip_trx", m->skip_trx);
}

static json_t *sysbench_section(const sb_cmd *c, const sim_run *run)
{
    const sb_event_cfg *ev = &c->ev;
    double secs = sim_run_measured_seconds(run);
    uint64_t r = sim_run_counter(run, CNT_READS, -1), w = sim_run_counter(run, CNT_WRITES, -1);
    uint64_t o = sim_run_counter(run, CNT_OTHER, -1), rt = sim_run_counter(run, CNT_RETRIES, -1);
    uint64_t txn = sim_run_count(run, -1, -1), errs = sim_run_errors(run, -1, -1);
    sb_counts per = sb_expected_counts(ev->workload, &ev->mix);
    double q = secs > 0 ? 1.0 / secs : 0;
    uint64_t done = txn + errs;
    return json_pack(
        "{s:s, s:s, s:I, s:I, s:s, s:s, s:o, s:{s:I, s:I, s:I}, s:{s:I, s:I, s:I, s:I},"
        " s:{s:f, s:f, s:f, s:f}, s:{s:f, s:f, s:f}, s:I, s:I, s:s}",
        "engine", c->engine->name, "workload", sb_workload_name(ev->workload), "tables",
        (json_int_t)ev->tables, "table_size", (json_int_t)ev->table_size, "rand_type",
        sb_rand_type_name(ev->dist.type), "rand_type_note",
        "uniform is the default of sysbench 1.1; sysbench 1.0.x defaults to special", "mix",
        mix_json(&ev->mix), "expected_per_transaction", "reads", (json_int_t)per.reads, "writes",
        (json_int_t)per.writes, "other", (json_int_t)per.other, "queries", "reads", (json_int_t)r,
        "writes", (json_int_t)w, "other", (json_int_t)o, "total", (json_int_t)(r + w + o), "qps",
        "read", r * q, "write", w * q, "other", o * q, "total", (r + w + o) * q, "per_transaction",
        "reads", done ? (double)r / done : 0.0, "writes", done ? (double)w / done : 0.0, "other",
        done ? (double)o / done : 0.0, "retries", (json_int_t)rt, "errors", (json_int_t)errs,
        "transactions",
        c->skip_trx ? "autocommit per statement"
                    : "reads in one snapshot, then writes in one write transaction");
}

/* An engine reading through page faults: the threads' major faults per transaction
 * where they were taken. Disjoint: holding the writer lock, in the prefetch, elsewhere
 * (reads of read-only transactions and statements outside both); total = their sum. */
static json_t *faults_json(const sim_run *run, uint64_t txn)
{
    double all = (double)sim_run_counter(run, CNT_FAULTS, -1);
    double held = (double)sim_run_counter(run, CNT_FAULTS_HELD, -1);
    double pre = (double)sim_run_counter(run, CNT_FAULTS_PREFETCH, -1);
    double t = txn ? (double)txn : 1.0;
    double elsewhere = all - held - pre;
    return json_pack("{s:f, s:f, s:f, s:f}", "under_writer_lock", held / t, "prefetch", pre / t,
                     "elsewhere", (elsewhere > 0 ? elsewhere : 0) / t, "total", all / t);
}

/* Where the threads' time in transactions went (the engine's waits, measured phase):
 * each part as a share of that time and in ms per transaction. Disjoint: queued for
 * writer locks; holding them (of which device reads, and COMMIT, which with sync full
 * and no group commit writes and syncs the WAL); waiting for a group commit's sync
 * after them; device reads outside them; the rest (SQL work, waiting for a CPU). */
static json_t *waits_json(const sim_run *run, bool reads_timed)
{
    double ev = (double)sim_run_counter(run, CNT_EVENT_NS, -1);
    uint64_t txn = sim_run_count(run, -1, -1) + sim_run_errors(run, -1, -1);
    double v[CNT_COUNT] = {0};
    for (int i = CNT_LOCK_NS; i < CNT_PREFETCH_FAILED; i++)
        v[i] = (double)sim_run_counter(run, i, -1);
    double outside = v[CNT_READ_NS] - v[CNT_READ_HELD_NS];
    double rest = ev - v[CNT_LOCK_NS] - v[CNT_HELD_NS] - v[CNT_DURABLE_NS] - outside;
    const char *name[] = {"writer_lock_queue",
                          "writer_lock_held",
                          "reads_under_writer_lock",
                          "commit_under_writer_lock",
                          "group_commit_sync",
                          "reads_outside_writer_lock",
                          "prefetch",
                          "other"};
    double part[] = {v[CNT_LOCK_NS],    v[CNT_HELD_NS], v[CNT_READ_HELD_NS], v[CNT_COMMIT_NS],
                     v[CNT_DURABLE_NS], outside,        v[CNT_PREFETCH_NS],  rest};
    json_t *share = json_object(), *ms = json_object();
    for (size_t i = 0; i < sizeof part / sizeof *part; i++) {
        json_object_set_new(share, name[i], json_real(ev > 0 ? part[i] / ev : 0));
        json_object_set_new(ms, name[i], json_real(txn ? part[i] / 1e6 / (double)txn : 0));
    }
    double secs = sim_run_measured_seconds(run);
    json_t *w = json_pack(
        "{s:f, s:f, s:o, s:o, s:I, s:s}", "thread_seconds", ev / 1e9, "own_reads_in_flight",
        secs > 0 ? v[CNT_READ_NS] / 1e9 / secs : 0.0, "share", share, "ms_per_transaction", ms,
        "prefetch_failed", (json_int_t)sim_run_counter(run, CNT_PREFETCH_FAILED, -1), "note",
        reads_timed ? "threads' time in transactions; writer_lock_held includes "
                      "reads_under_writer_lock and commit_under_writer_lock; prefetch includes its "
                      "reads, which are in reads_outside_writer_lock; other = SQL work and waiting "
                      "for a CPU"
                    : "threads' time in transactions; the engine reads through page faults, which "
                      "are not timed (reads_* are 0): they are in writer_lock_held, prefetch and "
                      "other (major_faults_per_transaction counts them where they were taken); "
                      "writer_lock_held includes commit_under_writer_lock; prefetch is also in "
                      "other");
    if (!reads_timed) json_object_set_new(w, "major_faults_per_transaction", faults_json(run, txn));
    return w;
}

/* The "sysbench" section of run with the first error and the user scheduler's figures. */
static json_t *run_section(const sb_cmd *c, const sim_run *run, const sb_wl *wl,
                           const sim_vu_stats *stats)
{
    json_t *sb = sysbench_section(c, run);
    if (wl->first_error[0]) json_object_set_new(sb, "first_error", json_string(wl->first_error));
    if (c->engine->waits) json_object_set_new(sb, "waits", waits_json(run, c->engine->on_vfs));
    json_object_set_new(sb, "prefetch", c->prefetch ? json_string(c->prefetch) : json_null());
    json_object_set_new(sb, "cpu_sched", json_string(c->cpu_sched));
    json_object_set_new(sb, "scheduler",
                        json_pack("{s:I, s:I, s:I}", "max_queue", (json_int_t)stats->max_queue,
                                  "wake_late_p99_ns", (json_int_t)stats->wake_late_p99_ns,
                                  "wake_late_max_ns", (json_int_t)stats->wake_late_max_ns));
    return sb;
}

/* A job of several ranks (docs/mpi.md): the queries, rates and retries of the job's
 * section are already the sums of the ranks' (its run's counters are); the first error
 * is the first rank's that had one, and the scheduler's worst queue and lateness are
 * over the ranks (a percentile of lateness is each rank's own: ranks[].sysbench). */
static void merge_ranks(json_t *sb, const json_t *ranks)
{
    json_int_t queue = 0, late = 0;
    json_object_del(sb, "first_error");
    size_t i;
    const json_t *rk;
    json_array_foreach(ranks, i, rk)
    {
        const json_t *own = json_object_get(rk, "sysbench");
        const json_t *sch = json_object_get(own, "scheduler");
        json_int_t q = json_integer_value(json_object_get(sch, "max_queue"));
        json_int_t l = json_integer_value(json_object_get(sch, "wake_late_max_ns"));
        queue = q > queue ? q : queue;
        late = l > late ? l : late;
        const char *e = json_string_value(json_object_get(own, "first_error"));
        if (e && !json_object_get(sb, "first_error"))
            json_object_set_new(sb, "first_error", json_sprintf("rank %zu: %s", i, e));
    }
    json_object_set_new(sb, "scheduler",
                        json_pack("{s:I, s:n, s:I, s:s}", "max_queue", queue, "wake_late_p99_ns",
                                  "wake_late_max_ns", late, "note",
                                  "over the ranks; each rank's lateness p99 is in "
                                  "ranks[].sysbench.scheduler"));
}

/* Opens every prepared instance into dbs[0..n) and checks that its tables are the ones
 * the options describe; an exit status (the message printed). */
static int open_prepared(sb_cmd *c, void **dbs, int n)
{
    char err[1024];
    int rc = SIM_EXIT_OK;
    for (int i = 0; i < n && rc == SIM_EXIT_OK; i++) {
        if (!sb_cmd_instance_exists(c, i)) {
            sim_error("instance %d is not prepared in %s: run `appsim sysbench prepare` with the "
                      "same --engine, --tables, --table-size and --instances",
                      i + 1, c->target);
            return SIM_EXIT_USAGE;
        }
        sb_db_opts o = sb_cmd_db_opts(c, i, false);
        rc = c->engine->open(c->t, &o, false, &dbs[i], err, sizeof err);
        if (rc) {
            sim_error("%s", err);
            return rc;
        }
        sb_meta m;
        rc = c->engine->meta_get(dbs[i], &m, err, sizeof err);
        if (rc)
            sim_error("%s", err);
        else
            rc = meta_matches(c, i, &m);
    }
    return rc;
}

/* The measured run of n instances, with the drive's counters and the space guard; the
 * run keeps type_names (one: the workload's name). */
static sim_run *new_run(const sb_cmd *c, int n, const char *const *type_names,
                        st_space_guard *space)
{
    sim_run_config rc_cfg = {
        .type_names = type_names,
        .ntypes = 1,
        .counter_names = counter_names,
        .ncounters = c->engine->waits ? CNT_COUNT : CNT_EVENT_NS,
        .unit = "tps",
        .duration_ns = c->time_ns,
        .max_units = c->events,
        .report_interval_ns = c->report_ns,
        .instances = n,
        .quiet = c->quiet,
    };
    sim_run_config_warmup(&rc_cfg, c->warmup_ns, c->steady_round_ns, c->steady_max_rounds);
    sim_run *run = sim_run_new(&rc_cfg);
    sim_run_track_lateness(run);
    sim_run_add_probe(run, &st_device_io_probe, c->t);
    sim_run_add_guard(run, st_space_guard_check, space);
    return run;
}

/* The users on the connections, from start to finish of the run; sim_vu_run's status. */
static int run_users(const sb_cmd *c, int n, sim_run *run, sb_wl *wl, sim_vu_stats *stats)
{
    sim_vu_ops ops = {.worker_open = vu_open, .worker_close = vu_close, .run = vu_unit};
    sim_vu_config vc = {
        .instances = n,
        .vusers = (uint32_t)c->threads,
        .workers = (int)c->threads,
        .rate = c->rate,
        .seed = c->seed,
        .uniform = c->uniform,
    };
    sim_info("%s: %s, %llu thread(s) x %d instance(s), %s", c->engine->name,
             sb_workload_name(c->ev.workload), (unsigned long long)c->threads, n,
             c->rate > 0 ? "open loop" : "closed loop");
    sim_run_start(run);
    int vrc = sim_vu_run(run, &vc, &ops, wl, stats);
    sim_run_finish(run);
    return vrc;
}

/* The result's run sections, its "sysbench" section and the engine's; with several
 * ranks, each rank's own beside the job's. */
static void put_results(const sb_cmd *c, json_t *doc, const sim_run *run, json_t *engine,
                        const sb_wl *wl, const sim_vu_stats *stats)
{
    /* Several ranks: this rank's own figures before the run's become the job's. */
    json_t *own = sim_ranks_size() > 1 ? run_section(c, run, wl, stats) : NULL;
    sim_result_put_run(doc, NULL, run);
    json_t *sb = run_section(c, run, wl, stats);
    json_object_set_new(doc, "sysbench", sb);
    json_object_set_new(doc, "engine", engine);
    const json_t *ranks = sim_result_put_rank_detail(doc, "sysbench", own);
    sim_result_put_rank_detail(doc, "engine", engine);
    if (ranks) merge_ranks(sb, ranks);
    json_decref(own);
}

/* The engine's memory: the cgroup limit applied (or why not), and what stayed cached. */
static void print_memory(const json_t *mem)
{
    if (json_is_true(json_object_get(mem, "applied")))
        printf("  memory: cgroup %s limit %lld bytes (peak %lld)\n",
               json_string_value(json_object_get(mem, "version")),
               (long long)json_integer_value(json_object_get(mem, "limit_bytes")),
               (long long)json_integer_value(json_object_get(mem, "peak_bytes")));
    else
        printf("  memory: NOT limited (%s)\n", json_string_value(json_object_get(mem, "reason")));
    const json_t *res = json_object_get(mem, "resident_at_end");
    size_t i;
    const json_t *v;
    json_array_foreach(res, i, v)
        printf("  resident in page cache at end: %.1f%% of %s\n",
               100.0 * json_real_value(json_object_get(v, "resident_share")),
               json_string_value(json_object_get(v, "file")));
}

/* The text summary: sim's, then the queries, page faults and memory. */
static void print_results(const json_t *doc)
{
    sim_result_print(stdout, doc);
    const json_t *sb = json_object_get(doc, "sysbench");
    const json_t *qps = json_object_get(sb, "qps");
    printf("  queries/s: read %.1f, write %.1f, other %.1f, total %.1f; retries %lld\n",
           json_real_value(json_object_get(qps, "read")),
           json_real_value(json_object_get(qps, "write")),
           json_real_value(json_object_get(qps, "other")),
           json_real_value(json_object_get(qps, "total")),
           (long long)json_integer_value(json_object_get(sb, "retries")));
    const json_t *w = json_object_get(json_object_get(sb, "waits"), "share");
    if (w) {
#define W(k) (100.0 * json_real_value(json_object_get(w, k)))
        printf("  thread time: writer locks queued %.1f%%, held %.1f%% (reads %.1f%%, commit "
               "%.1f%%); group-commit sync %.1f%%; reads outside the locks %.1f%% (prefetch "
               "%.1f%%); other %.1f%%\n",
               W("writer_lock_queue"), W("writer_lock_held"), W("reads_under_writer_lock"),
               W("commit_under_writer_lock"), W("group_commit_sync"),
               W("reads_outside_writer_lock"), W("prefetch"), W("other"));
#undef W
    }
    const json_t *mf =
        json_object_get(json_object_get(sb, "waits"), "major_faults_per_transaction");
    if (mf)
        printf("  major faults per transaction: %.2f under the writer lock, %.2f in prefetch, "
               "%.2f elsewhere\n",
               json_real_value(json_object_get(mf, "under_writer_lock")),
               json_real_value(json_object_get(mf, "prefetch")),
               json_real_value(json_object_get(mf, "elsewhere")));
    const json_t *pf = json_object_get(doc, "page_faults");
    if (json_is_object(pf))
        printf("  page faults: %lld major, %lld minor\n",
               (long long)json_integer_value(json_object_get(pf, "major")),
               (long long)json_integer_value(json_object_get(pf, "minor")));
    const json_t *mem = json_object_get(json_object_get(doc, "engine"), "memory");
    if (json_is_object(mem)) print_memory(mem);
    fflush(stdout);
}

int sb_run_once(sb_cmd *c, void **dbs, int n, st_space_guard *space, json_t *doc, sim_run **out,
                sim_vu_stats *stats)
{
    char err[1024];
    const char *type_names[1] = {sb_workload_name(c->ev.workload)};
    sim_run *run = new_run(c, n, type_names, space);
    json_t *engine =
        json_pack("{s:s, s:s}", "name", c->engine->name, "description", c->engine->description);
    sb_db_opts o0 = sb_cmd_db_opts(c, 0, false);
    if (c->engine->cache && doc) {
        uint64_t buffer = 0, data = 0;
        for (int i = 0; i < n; i++) {
            uint64_t b = 0, d = 0;
            c->engine->cache(dbs[i], &b, &d);
            buffer += b;
            data += d;
        }
        sim_result_put_cache(doc, buffer, data, c->engine->buffer_is);
    }
    void *run_state = NULL;
    if (c->engine->run_begin) {
        int rc = c->engine->run_begin(dbs, n, &o0, run, engine, &run_state, err, sizeof err);
        if (rc) {
            sim_error("%s", err);
            json_decref(engine);
            sim_run_free(run);
            return rc;
        }
    }
    sb_wl wl = {.c = c, .dbs = dbs};
    pthread_mutex_init(&wl.lock, NULL);
    int vrc = run_users(c, n, run, &wl, stats);
    if (c->engine->run_end) c->engine->run_end(dbs, n, run_state, engine);
    if (doc) {
        json_t *inst = json_array();
        for (int i = 0; i < n; i++)
            json_array_append_new(inst, c->engine->json(dbs[i]));
        json_object_set_new(engine, "instances", inst);
        put_results(c, doc, run, engine, &wl, stats);
        print_results(doc);
    } else {
        json_decref(engine);
    }
    pthread_mutex_destroy(&wl.lock);
    *out = run;
    return vrc;
}

int sb_open_run(sb_cmd *c, st_space_guard *space, void ***dbs_out)
{
    char err[1024];
    int n = (int)c->instances;
    /* Inserts and the WAL grow the files as the run goes: the run refuses to start, or
     * stops, with less than --keep-free left. */
    if (st_space_guard_check(space, err, sizeof err)) {
        sim_error("refusing to run: %s; free some space or lower --keep-free", err);
        return SIM_EXIT_USAGE;
    }
    void **dbs = sim_xcalloc((size_t)n, sizeof *dbs);
    *dbs_out = dbs;
    return open_prepared(c, dbs, n);
}

void sb_close_run(sb_cmd *c, void **dbs)
{
    for (int i = 0; i < (int)c->instances; i++)
        if (dbs && dbs[i]) c->engine->close(dbs[i]);
    free(dbs);
}

int sb_action_run(sb_cmd *c, json_t *doc)
{
    st_space_guard space = {.t = c->t, .keep_free = c->keep_free};
    void **dbs = NULL;
    int rc = sb_open_run(c, &space, &dbs);
    if (!rc) {
        sim_run *run = NULL;
        sim_vu_stats stats = {0};
        rc = sb_run_once(c, dbs, (int)c->instances, &space, doc, &run, &stats);
        /* A guard's stop leaves a complete result, but the run did not last its --time. */
        if (run) rc = rc || sim_run_stopped_by(run) ? SIM_EXIT_FAIL : rc;
        sim_run_free(run);
    }
    sb_close_run(c, dbs);
    return rc;
}

/* ------------------------------------------------------------------ check, cleanup */

int sb_action_check(sb_cmd *c, json_t *doc)
{
    char err[1024];
    json_t *arr = json_array();
    int worst = 0;
    for (int i = 0; i < (int)c->instances; i++) {
        if (!sb_cmd_instance_exists(c, i)) {
            sim_error("instance %d is not prepared in %s", i + 1, c->target);
            worst = SIM_EXIT_USAGE;
            break;
        }
        sb_db_opts o = sb_cmd_db_opts(c, i, false);
        void *db;
        int rc = c->engine->open(c->t, &o, false, &db, err, sizeof err);
        if (rc) {
            sim_error("%s", err);
            worst = rc;
            break;
        }
        json_t *rep = NULL;
        sb_meta m;
        rc = c->engine->meta_get(db, &m, err, sizeof err);
        if (rc == 0) rc = meta_matches(c, i, &m);
        if (rc == 0) {
            rc = c->engine->check(db, (uint32_t)c->tables, &rep, err, sizeof err);
            if (!rep) sim_error("%s", err);
        }
        c->engine->close(db);
        if (rep) {
            json_object_set_new(rep, "instance", json_integer(i + 1));
            bool ok = json_is_true(json_object_get(rep, "index_consistent"));
            printf("check (%s) instance %d: rows per table", c->engine->name, i + 1);
            size_t k;
            json_t *v;
            json_array_foreach(json_object_get(rep, "rows"), k, v)
                printf(" %lld", (long long)json_integer_value(v));
            printf("; secondary index %s\n", ok ? "consistent" : "INCONSISTENT");
            json_array_append_new(arr, rep);
        }
        if (rc && !worst) worst = rc;
    }
    json_object_set_new(doc, "check", arr);
    fflush(stdout);
    return worst;
}

/* Removes the files of one instance's table (0: the instance's own); the count
 * of files of it that were there. */
static int remove_files(sb_cmd *c, int inst, uint32_t table, json_t *arr, json_t *left,
                        int *removed, int *rc)
{
    char names[MAX_FILES][64], err[1024];
    int nf = c->engine->files(inst, table, names, MAX_FILES);
    int here = 0;
    for (int f = 0; f < nf; f++) {
        if (!st_target_owns(c->t, names[f])) continue;
        here++;
        int r = st_target_remove_file(c->t, names[f], err, sizeof err);
        if (r) { /* a file that is not the one appsim created is left, and said so */
            sim_error("%s", err);
            if (*rc != SIM_EXIT_FAIL) *rc = r;
            json_array_append_new(left, json_string(names[f]));
            continue;
        }
        (*removed)++;
        json_array_append_new(arr, json_string(names[f]));
    }
    return here;
}

int sb_action_cleanup(sb_cmd *c, json_t *doc)
{
    int removed = 0, rc = 0;
    json_t *arr = json_array(), *left = json_array();
    /* Every instance and table this engine may have left, whatever --instances and
     * --tables say now: tables are numbered from 1 without gaps, as prepare creates
     * them, so a table with no file ends an instance's tables (past --tables). Instance
     * -1 is the "-i0" files of an older appsim, which numbered instances from 0. */
    for (int i = -1; i < 4096; i++) {
        int here = remove_files(c, i, 0, arr, left, &removed, &rc);
        for (uint32_t t = 1; t < UINT32_MAX; t++) {
            int n = remove_files(c, i, t, arr, left, &removed, &rc);
            here += n;
            if (!n && t > c->tables) break;
        }
        if (!here && i >= (int)c->instances) break;
    }
    size_t nleft = json_array_size(left);
    json_object_set_new(doc, "cleanup", json_pack("{s:o, s:o}", "removed", arr, "left", left));
    printf("cleanup (%s): removed %d file(s) from %s", c->engine->name, removed, c->target);
    if (nleft) printf("; left %zu that are not the files appsim created (named above)", nleft);
    printf("\n");
    return rc;
}
