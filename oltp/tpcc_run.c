/*
 * oltp/tpcc_run.c: the measured TPC-C run: virtual users on sim/'s engine, deferred
 * Delivery workers, pacing, and the tpcc section of the result.
 *
 * Each virtual user is a terminal with a home warehouse and district (users are spread
 * evenly: user k of an instance has warehouse k % scale + 1 and district
 * (k / scale) % 10 + 1), its own shuffled deck, and its own random stream (the one the
 * engine passes). A user's next transaction type is drawn when its wait is computed,
 * so that spec pacing can add that type's keying time.
 *
 * Delivery is deferred (clause 2.7.2): the user's transaction only queues the request
 * (its response time is the queueing time), and the instance's delivery workers (one
 * per 8 connections, each with its own connection) take the queue in order. The
 * deferred execution time (queued -> committed) is kept in a separate histogram per
 * instance, recorded when the execution ends inside the measured phase, like every
 * other sample.
 */
#include "oltp/tpcc_cmd_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_TPMC_PER_WAREHOUSE 12.86

typedef struct wl {
    const tpcc_options *o;
    tpcc_instance *inst;
    sim_run *run;
    uint64_t cycle_ns; /* review or --cycle; 0 with spec or off pacing */
} wl;

typedef struct wconn {
    tpcc_deck deck; /* open loop: the connection's own deck (users are only partitions) */
    sqlite3 *db;
    tpcc_conn *c;
    tpcc_instance *I;
    sim_hist *held[TPCC_NTYPES]; /* writer-lock hold per measured write transaction */
} wconn;

static void new_hists(sim_hist *h[TPCC_NTYPES])
{
    for (int ty = 0; ty < TPCC_NTYPES; ty++)
        h[ty] = sim_hist_new();
}

/* A connection's hold-time histograms into its instance's, then freed. */
static void merge_hists(tpcc_instance *I, sim_hist *h[TPCC_NTYPES])
{
    pthread_mutex_lock(&I->dq_mu);
    for (int ty = 0; ty < TPCC_NTYPES; ty++)
        if (h[ty]) sim_hist_merge(I->lock_held[ty], h[ty]);
    pthread_mutex_unlock(&I->dq_mu);
    for (int ty = 0; ty < TPCC_NTYPES; ty++) {
        sim_hist_free(h[ty]);
        h[ty] = NULL;
    }
}

static void report_error(tpcc_instance *I, const char *what, const char *err)
{
    if (atomic_fetch_add(&I->errors_reported, 1) == 0) {
        snprintf(I->first_error, sizeof I->first_error, "%s: %s", what, err);
        sim_warn("tpcc: instance %d: %s failed: %s (further errors are counted, not shown)",
                 I->index + 1, what, err);
    }
}

static bool group_commit_on(const tpcc_options *o, const tpcc_instance *I)
{
    return !strcmp(o->group_commit, "on") && st_db_can_group_commit(I->db);
}

static int commit_durable(void *db, char *err, size_t errlen)
{
    return st_db_commit_durable(db, err, errlen);
}

/* Group commit on: the connection's commits are written but not synced (synchronous
 * NORMAL) and each write transaction calls st_db_commit_durable after the lock. */
static int setup_conn(const tpcc_options *o, tpcc_instance *I, sqlite3 *db, tpcc_conn *c, char *err,
                      size_t errlen)
{
    if (sim_thread_set_cpu_sched(o->cpu_sched, err, errlen)) return SIM_ERR;
    tpcc_conn_set_prefetch(c, !strcmp(o->prefetch, "on"));
    if (!group_commit_on(o, I)) return SIM_OK;
    if (st_db_conn_group_commit(I->db, db, err, errlen)) return SIM_ERR;
    tpcc_conn_set_durable(c, commit_durable, I->db);
    return SIM_OK;
}

static void *worker_open(void *vwl, int instance, int worker)
{
    wl *w = vwl;
    tpcc_instance *I = &w->inst[instance];
    char err[512];
    wconn *wc = sim_xcalloc(1, sizeof *wc);
    wc->I = I;
    new_hists(wc->held);
    if (st_db_connect(I->db, &wc->db, err, sizeof err)) {
        sim_error("tpcc: instance %d, connection %d: %s", instance + 1, worker + 1, err);
        merge_hists(I, wc->held);
        free(wc);
        return NULL;
    }
    wc->c = tpcc_conn_new(wc->db, I->meta.scale, I->lock, err, sizeof err);
    if (!wc->c) {
        sim_error("tpcc: instance %d, connection %d: %s", instance + 1, worker + 1, err);
        sqlite3_close(wc->db);
        merge_hists(I, wc->held);
        free(wc);
        return NULL;
    }
    sim_rng r;
    sim_rng_seed(&r, w->o->seed, 0xdec40000ull + (uint64_t)instance * 4096 + (uint64_t)worker);
    tpcc_deck_init(&wc->deck, &w->o->mixv, &r);
    if (setup_conn(w->o, I, wc->db, wc->c, err, sizeof err)) {
        sim_error("tpcc: instance %d, connection %d: %s", instance + 1, worker + 1, err);
        tpcc_conn_free(wc->c);
        sqlite3_close(wc->db);
        merge_hists(I, wc->held);
        free(wc);
        return NULL;
    }
    return wc;
}

static void worker_close(void *vwl, void *conn)
{
    (void)vwl;
    wconn *wc = conn;
    tpcc_conn_free(wc->c);
    sqlite3_close(wc->db);
    merge_hists(wc->I, wc->held);
    free(wc);
}

static void flush_counts(tpcc_conn *c, sim_meter *m)
{
    tpcc_counts k;
    tpcc_conn_take_counts(c, &k);
    for (int i = 0; i < TPCC_NCOUNTERS; i++)
        if (k.v[i]) sim_meter_count(m, i, k.v[i]);
}

static void dq_push(tpcc_instance *I, uint32_t w_id, uint32_t carrier, uint64_t now)
{
    pthread_mutex_lock(&I->dq_mu);
    if (I->dq_len == I->dq_cap) {
        size_t ncap = I->dq_cap ? I->dq_cap * 2 : 256;
        tpcc_dq_item *n = sim_xmalloc(ncap * sizeof *n);
        for (size_t k = 0; k < I->dq_len; k++)
            n[k] = I->dq[(I->dq_head + k) % I->dq_cap];
        free(I->dq);
        I->dq = n;
        I->dq_cap = ncap;
        I->dq_head = 0;
    }
    I->dq[(I->dq_head + I->dq_len) % I->dq_cap] = (tpcc_dq_item){w_id, carrier, now};
    I->dq_len++;
    if (I->dq_len > I->dq_max) I->dq_max = I->dq_len;
    pthread_cond_signal(&I->dq_cv);
    pthread_mutex_unlock(&I->dq_mu);
}

/* Adds one measured transaction's block reads (from the thread's counters before and
 * after it). */
static void note_reads(tpcc_instance *I, int type, const st_db_thread_reads *before,
                       const st_db_thread_reads *now)
{
    atomic_fetch_add(&I->rd_txns[type], 1);
    atomic_fetch_add(&I->rd_blocks[type][0], now->db_reads - before->db_reads);
    atomic_fetch_add(&I->rd_blocks[type][1], now->db_device_reads - before->db_device_reads);
    atomic_fetch_add(&I->rd_blocks[type][2], now->wal_reads - before->wal_reads);
    atomic_fetch_add(&I->rd_blocks[type][3], now->wal_device_reads - before->wal_device_reads);
}

/* Adds one measured transaction's waits (w1 - w0) and its time on the thread; a write
 * transaction's hold of the writer lock goes to held[type]. */
static void note_waits(tpcc_instance *I, int type, const tpcc_waits *w0, const tpcc_waits *w1,
                       uint64_t event_ns, sim_hist *held[TPCC_NTYPES])
{
    atomic_fetch_add(&I->w_txns[type], 1);
    atomic_fetch_add(&I->w_event_ns[type], event_ns);
    for (int p = 0; p < TPCC_W_NPARTS; p++)
        atomic_fetch_add(&I->w_ns[type][p], w1->ns[p] - w0->ns[p]);
    if (w1->txn_held_ns) sim_hist_record(held[type], w1->txn_held_ns);
}

static json_t *waits_json(const tpcc_instance *inst, int n)
{
    tpcc_wait_totals t = {0};
    sim_hist *held[TPCC_NTYPES];
    for (int ty = 0; ty < TPCC_NTYPES; ty++) {
        held[ty] = sim_hist_new();
        for (int i = 0; i < n; i++) {
            t.txns[ty] += atomic_load(&inst[i].w_txns[ty]);
            t.event_ns[ty] += atomic_load(&inst[i].w_event_ns[ty]);
            for (int p = 0; p < TPCC_W_NPARTS; p++)
                t.ns[ty][p] += atomic_load(&inst[i].w_ns[ty][p]);
            if (inst[i].lock_held[ty]) sim_hist_merge(held[ty], inst[i].lock_held[ty]);
        }
    }
    json_t *j = tpcc_waits_json(&t, held);
    for (int ty = 0; ty < TPCC_NTYPES; ty++)
        sim_hist_free(held[ty]);
    return j;
}

/* Per transaction type, over all instances: block reads per measured transaction. */
static json_t *reads_json(const tpcc_instance *inst, int n)
{
    uint64_t txns[TPCC_NTYPES] = {0}, b[TPCC_NTYPES][4] = {{0}};
    for (int ty = 0; ty < TPCC_NTYPES; ty++)
        for (int i = 0; i < n; i++) {
            txns[ty] += atomic_load(&inst[i].rd_txns[ty]);
            for (int k = 0; k < 4; k++)
                b[ty][k] += atomic_load(&inst[i].rd_blocks[ty][k]);
        }
    return tpcc_reads_json(txns, b);
}

static int run_unit(void *vwl, void *conn, int instance, uint32_t vu, sim_rng *rng, sim_meter *m)
{
    wl *w = vwl;
    wconn *wc = conn;
    tpcc_instance *I = &w->inst[instance];
    tpcc_user *u = &I->users[vu];
    /* Open loop: two arrivals for one user may run at once on two connections, so the
     * type comes from the connection's deck; the user gives the home warehouse only. */
    int type;
    if (w->o->rate > 0) {
        type = tpcc_deck_draw(&wc->deck, &w->o->mixv, rng);
    } else {
        type = u->next_type >= 0 ? u->next_type : tpcc_deck_draw(&u->deck, &w->o->mixv, rng);
        u->next_type = -1;
    }
    int64_t scale = I->meta.scale;
    char err[512];
    int rc = 0;
    st_db_thread_reads before;
    st_db_thread_reads_get(&before);
    tpcc_waits w0, w1;
    tpcc_conn_waits(wc->c, &before, &w0);
    uint64_t t0 = sim_now_ns();
    switch (type) {
    case TPCC_NEW_ORDER: {
        tpcc_no_in in;
        bool rb;
        tpcc_gen_new_order(rng, &I->c_run, scale, u->w_id, &in);
        rc = tpcc_new_order(wc->c, &in, &rb, err, sizeof err);
        break;
    }
    case TPCC_PAYMENT: {
        tpcc_pay_in in;
        tpcc_gen_payment(rng, &I->c_run, scale, u->w_id, &in);
        rc = tpcc_payment(wc->c, &in, err, sizeof err);
        break;
    }
    case TPCC_ORDER_STATUS: {
        tpcc_os_in in;
        tpcc_gen_order_status(rng, &I->c_run, u->w_id, &in);
        rc = tpcc_order_status(wc->c, &in, err, sizeof err);
        break;
    }
    case TPCC_DELIVERY: {
        /* Clause 2.7.2.1: the terminal's part ends when the request is queued. */
        tpcc_del_in in;
        tpcc_gen_delivery(rng, u->w_id, &in);
        dq_push(I, in.w_id, in.o_carrier_id, sim_now_ns());
        break;
    }
    default: {
        tpcc_sl_in in;
        int low;
        tpcc_gen_stock_level(rng, u->w_id, u->d_id, &in);
        rc = tpcc_stock_level(wc->c, &in, &low, err, sizeof err);
        break;
    }
    }
    uint64_t event_ns = sim_now_ns() - t0;
    flush_counts(wc->c, m);
    if (!rc && type != TPCC_DELIVERY && sim_run_phase(w->run) == SIM_PHASE_MEASURE) {
        st_db_thread_reads after;
        st_db_thread_reads_get(&after);
        note_reads(I, type, &before, &after);
        tpcc_conn_waits(wc->c, &after, &w1);
        note_waits(I, type, &w0, &w1, event_ns, wc->held);
    }
    if (rc) {
        report_error(I, tpcc_type_names[type], err);
        return -(type + 1);
    }
    return type;
}

static uint64_t next_delay(void *vwl, int instance, uint32_t vu, int last_type, sim_rng *rng)
{
    wl *w = vwl;
    tpcc_user *u = &w->inst[instance].users[vu];
    int next = tpcc_deck_draw(&u->deck, &w->o->mixv, rng);
    u->next_type = (int8_t)next;
    if (w->cycle_ns) return sim_rng_think_ns(rng, w->cycle_ns);
    if (w->o->pacev == TPCC_PACE_OFF) return 0;
    /* Spec: think time after the last transaction, keying time before the next. The
     * first transaction of each user also gets a think time, which spreads the start. */
    int think_of = last_type >= 0 ? last_type : next;
    return sim_rng_think_ns(rng, (uint64_t)(tpcc_think_s[think_of] * 1e9)) +
           (uint64_t)(tpcc_keying_s[next] * 1e9);
}

typedef struct dworker_args {
    wl *w;
    tpcc_instance *I;
} dworker_args;

static void *delivery_worker(void *arg)
{
    dworker_args *a = arg;
    tpcc_instance *I = a->I;
    sim_run *run = a->w->run;
    char err[512];
    sqlite3 *db = NULL;
    tpcc_conn *c = NULL;
    sim_hist *held[TPCC_NTYPES] = {NULL};
    new_hists(held);
    if (st_db_connect(I->db, &db, err, sizeof err) ||
        !(c = tpcc_conn_new(db, I->meta.scale, I->lock, err, sizeof err)) ||
        setup_conn(a->w->o, I, db, c, err, sizeof err)) {
        merge_hists(I, held);
        tpcc_conn_free(c);
        report_error(I, "deferred delivery worker", err);
        if (db) sqlite3_close(db);
        pthread_mutex_lock(&I->dq_mu);
        I->deferred_errors += 1;
        pthread_mutex_unlock(&I->dq_mu);
        return NULL;
    }
    sim_meter *m = sim_run_meter(run, I->index);
    for (;;) {
        pthread_mutex_lock(&I->dq_mu);
        while (!I->dq_len && !I->dq_stop)
            pthread_cond_wait(&I->dq_cv, &I->dq_mu);
        if (I->dq_stop) {
            pthread_mutex_unlock(&I->dq_mu);
            break;
        }
        tpcc_dq_item it = I->dq[I->dq_head];
        I->dq_head = (I->dq_head + 1) % I->dq_cap;
        I->dq_len--;
        pthread_mutex_unlock(&I->dq_mu);

        tpcc_del_in in = {.w_id = it.w_id, .o_carrier_id = it.carrier};
        int skipped = 0;
        st_db_thread_reads before;
        st_db_thread_reads_get(&before);
        tpcc_waits w0, w1;
        tpcc_conn_waits(c, &before, &w0);
        uint64_t start = sim_now_ns();
        int rc = tpcc_delivery(c, &in, &skipped, err, sizeof err);
        st_db_thread_reads after;
        st_db_thread_reads_get(&after);
        if (!rc && sim_run_phase(run) == SIM_PHASE_MEASURE)
            note_reads(I, TPCC_DELIVERY, &before, &after);
        uint64_t end = sim_now_ns();
        flush_counts(c, m);
        /* Its counts and its deferred figures fall in the same phase. */
        bool measured = sim_meter_settle(m, end);
        if (!rc && measured) {
            tpcc_conn_waits(c, &after, &w1);
            note_waits(I, TPCC_DELIVERY, &w0, &w1, end - start, held);
        }
        if (rc) report_error(I, "deferred delivery", err);
        pthread_mutex_lock(&I->dq_mu);
        I->deferred_done_total++;
        if (measured) {
            if (rc)
                I->deferred_errors++;
            else {
                sim_hist_record(I->deferred, end - it.queued_ns);
                I->deferred_skipped += (uint64_t)skipped;
            }
        }
        pthread_mutex_unlock(&I->dq_mu);
    }
    merge_hists(I, held);
    tpcc_conn_free(c);
    sqlite3_close(db);
    return NULL;
}

json_t *tpcc_p90_json(const sim_hist *h, double limit_s)
{
    double p90 = (double)sim_hist_percentile(h, 90) / 1e9;
    bool have = sim_hist_count(h) > 0;
    json_t *j = json_object();
    json_object_set_new(j, "limit_s", json_real(limit_s));
    json_object_set_new(j, "p90_s", have ? json_real(p90) : json_null());
    json_object_set_new(j, "pass", have ? json_boolean(p90 <= limit_s) : json_null());
    return j;
}

json_t *tpcc_deferred_json(const sim_hist *h, uint64_t errors, uint64_t skipped, uint64_t pending)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "count", (json_int_t)sim_hist_count(h),
                     "errors", (json_int_t)errors, "skipped_districts", (json_int_t)skipped,
                     "pending_at_end", (json_int_t)pending, "latency_us", sim_hist_summary_json(h),
                     "p90_limit", tpcc_p90_json(h, TPCC_DELIVERY_DEFERRED_P90_LIMIT_S), "histogram",
                     sim_hist_to_json(h));
}

/* tpmC, NOPM and efficiency of instance i (or all when i < 0, over `ranks` ranks' instances). */
static json_t *rates_json(const sim_run *run, const tpcc_options *o, int i, int ranks)
{
    double minutes = sim_run_measured_seconds(run) / 60.0;
    uint64_t no = sim_run_count(run, TPCC_NEW_ORDER, i);
    uint64_t rb = sim_run_counter(run, TPCC_CNT_ROLLBACKS, i);
    /* Under mpirun the job's figures hold every rank's instances (docs/mpi.md). */
    double wh = (double)o->scale * (i < 0 ? (double)o->instances * ranks : 1.0);
    double tpmc = minutes > 0 ? (double)no / minutes : 0;
    double nopm = minutes > 0 ? (double)(no >= rb ? no - rb : 0) / minutes : 0;
    return json_pack("{s:f, s:f, s:f, s:f, s:I, s:I}", "tpmC", tpmc, "nopm", nopm, "efficiency_pct",
                     100.0 * tpmc / (SPEC_TPMC_PER_WAREHOUSE * wh), "warehouses", wh, "new_orders",
                     (json_int_t)no, "rolled_back", (json_int_t)rb);
}

/* Where the connections' time went, and the writer lock's hold per write transaction. */
static void print_waits(FILE *out, const json_t *w)
{
    const json_t *sh = json_object_get(w, "share");
#define SH(k) (100.0 * json_number_value(json_object_get(sh, k)))
    fprintf(out,
            "  connections' time: writer lock queue %.1f %%, hand-over %.1f %%, held %.1f %% "
            "(reads %.1f %%, commit %.1f %%), group-commit sync %.1f %%, reads outside %.1f "
            "%%, other %.1f %%\n",
            SH("writer_lock_queue"), SH("writer_lock_handover"), SH("writer_lock_held"),
            SH("reads_under_writer_lock"), SH("commit_under_writer_lock"), SH("group_commit_sync"),
            SH("reads_outside_writer_lock"), SH("other"));
#undef SH
    const json_t *all = json_object_get(json_object_get(w, "writer_lock_hold_us"), "all_writes");
    fprintf(out, "  writer lock held per write transaction: mean %.3f ms, p99 %.3f ms\n",
            json_number_value(json_object_get(all, "mean_us")) / 1000,
            json_number_value(json_object_get(all, "p99_us")) / 1000);
}

static void print_summary(FILE *out, const json_t *doc, const tpcc_options *o)
{
    sim_result_print(out, doc);
    const json_t *t = json_object_get(doc, "tpcc");
    const json_t *r = json_object_get(t, "rates");
    fprintf(out,
            "  tpmC %.1f  NOPM %.1f  efficiency %.1f %% of 12.86 tpmC per warehouse (%g "
            "warehouses)\n",
            json_number_value(json_object_get(r, "tpmC")),
            json_number_value(json_object_get(r, "nopm")),
            json_number_value(json_object_get(r, "efficiency_pct")),
            json_number_value(json_object_get(r, "warehouses")));
    const json_t *d = json_object_get(t, "delivery_deferred");
    const json_t *dl = json_object_get(d, "latency_us");
    fprintf(out,
            "  deferred delivery: %lld done, mean %.3f ms, p90 %.3f ms, max %.3f ms; %lld "
            "districts skipped, %lld pending at end\n",
            (long long)json_integer_value(json_object_get(d, "count")),
            json_number_value(json_object_get(dl, "mean_us")) / 1000,
            json_number_value(json_object_get(dl, "p90_us")) / 1000,
            json_number_value(json_object_get(dl, "max_us")) / 1000,
            (long long)json_integer_value(json_object_get(d, "skipped_districts")),
            (long long)json_integer_value(json_object_get(d, "pending_at_end")));
    fprintf(out, "  90th percentile limits (clause 5.2.5.3):");
    const json_t *lim = json_object_get(t, "p90_limits");
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)lim, k, v)
    {
        const json_t *pass = json_object_get(v, "pass");
        fprintf(out, " %s %s", k,
                json_is_null(pass)   ? "n/a"
                : json_is_true(pass) ? "pass"
                                     : "FAIL");
    }
    fputc('\n', out);
    fprintf(out, "  device reads per transaction (pool misses, database + WAL):");
    json_object_foreach((json_t *)json_object_get(t, "reads_per_txn"), k, v)
    {
        const json_t *dr = json_object_get(v, "device_reads");
        if (json_is_number(dr)) fprintf(out, " %s %.1f", k, json_number_value(dr));
    }
    fputc('\n', out);
    print_waits(out, json_object_get(t, "waits"));
    const json_t *per = json_object_get(t, "per_instance");
    if (o->instances > 1) {
        size_t i;
        json_array_foreach((json_t *)per, i, v)
        {
            const json_t *rr = json_object_get(v, "rates");
            const json_t *rank = json_object_get(v, "rank"); /* a job's: every rank's */
            if (rank) fprintf(out, "  rank %lld", (long long)json_integer_value(rank));
            fprintf(out, "%sinstance %lld: %.2f tps, tpmC %.1f, mean %.3f ms, p99 %.3f ms\n",
                    rank ? " " : "  ",
                    (long long)json_integer_value(json_object_get(v, "instance")),
                    json_number_value(json_object_get(v, "tps")),
                    json_number_value(json_object_get(rr, "tpmC")),
                    json_number_value(json_object_get(v, "mean_us")) / 1000,
                    json_number_value(json_object_get(v, "p99_us")) / 1000);
        }
    }
}

/* Per-instance run state: writer lock, users (home warehouse and district, deck of
 * transaction types), the deferred-delivery queue and the run's NURand constants. */
static void init_instances(const tpcc_options *o, tpcc_instance *inst, int n)
{
    for (int i = 0; i < n; i++) {
        tpcc_instance *I = &inst[i];
        I->lock = tpcc_writer_lock_new();
        I->users = sim_xcalloc(o->vusers, sizeof *I->users);
        I->deferred = sim_hist_new();
        new_hists(I->lock_held);
        pthread_mutex_init(&I->dq_mu, NULL);
        pthread_cond_init(&I->dq_cv, NULL);
        sim_rng r;
        sim_rng_seed(&r, o->seed, 0xc0c0c0c0ull + (uint64_t)i);
        tpcc_consts_run(&I->c_run, &I->meta.c_load, &r);
        for (uint64_t k = 0; k < o->vusers; k++) {
            tpcc_user *u = &I->users[k];
            u->w_id = (uint32_t)(k % o->scale) + 1;
            u->d_id = (uint32_t)((k / o->scale) % TPCC_DIST_PER_WH) + 1;
            u->next_type = -1;
            tpcc_deck_init(&u->deck, &o->mixv, &r);
        }
    }
}

static void free_instances(tpcc_instance *inst, int n)
{
    for (int i = 0; i < n; i++) {
        tpcc_instance *I = &inst[i];
        tpcc_writer_lock_free(I->lock);
        free(I->users);
        free(I->dq);
        sim_hist_free(I->deferred);
        for (int ty = 0; ty < TPCC_NTYPES; ty++) {
            sim_hist_free(I->lock_held[ty]);
            I->lock_held[ty] = NULL;
        }
        pthread_mutex_destroy(&I->dq_mu);
        pthread_cond_destroy(&I->dq_cv);
        I->lock = NULL;
        I->users = NULL;
        I->dq = NULL;
        I->deferred = NULL;
        /* A curve's next point starts from nothing of this one's. */
        I->dq_cap = I->dq_head = I->dq_len = I->dq_max = 0;
        I->dq_stop = false;
        I->deferred_errors = I->deferred_skipped = I->deferred_done_total = 0;
        for (int ty = 0; ty < TPCC_NTYPES; ty++) {
            atomic_store(&I->rd_txns[ty], 0);
            atomic_store(&I->w_txns[ty], 0);
            atomic_store(&I->w_event_ns[ty], 0);
            for (int k = 0; k < 4; k++)
                atomic_store(&I->rd_blocks[ty][k], 0);
            for (int p = 0; p < TPCC_W_NPARTS; p++)
                atomic_store(&I->w_ns[ty][p], 0);
        }
    }
}

/* Stops the delivery workers; pending[i] = deliveries still queued in instance i. */
static uint64_t stop_delivery_workers(tpcc_instance *inst, int n, uint64_t *pending)
{
    uint64_t pending_total = 0;
    for (int i = 0; i < n; i++) {
        tpcc_instance *I = &inst[i];
        pthread_mutex_lock(&I->dq_mu);
        I->dq_stop = true;
        pthread_cond_broadcast(&I->dq_cv);
        pthread_mutex_unlock(&I->dq_mu);
        for (int k = 0; k < I->dworkers_started; k++)
            pthread_join(I->dworkers[k], NULL);
        I->dworkers_started = 0;
        pending[i] = I->dq_len;
        pending_total += I->dq_len;
    }
    return pending_total;
}

/* tpcc.per_instance[i]: rates, latency, deferred deliveries, database and constants. */
static json_t *instance_json(const sim_run *run, const tpcc_options *o, tpcc_instance *I, int i,
                             uint64_t pending)
{
    sim_hist *h = sim_run_merged_hist(run, -1, i);
    double secs = sim_run_measured_seconds(run);
    json_t *one =
        json_pack("{s:i, s:f, s:f, s:f, s:o, s:o, s:o, s:o, s:s?}", "instance", i + 1, "tps",
                  secs > 0 ? (double)sim_run_count(run, -1, i) / secs : 0.0, "mean_us",
                  sim_hist_mean(h) / 1000.0, "p99_us", (double)sim_hist_percentile(h, 99) / 1000.0,
                  "rates", rates_json(run, o, i, 1), "delivery_deferred",
                  tpcc_deferred_json(I->deferred, I->deferred_errors, I->deferred_skipped, pending),
                  "database", I->db ? st_db_json(I->db) : json_null(), "pristine",
                  I->pristine ? json_incref(I->pristine) : json_null(), "first_error",
                  I->first_error[0] ? I->first_error : NULL);
    json_object_set_new(one, "max_delivery_queue", json_integer((json_int_t)I->dq_max));
    if (I->db && group_commit_on(o, I)) {
        st_db_gc_stats gc;
        st_db_group_commit_stats(I->db, &gc);
        json_object_set_new(one, "group_commit",
                            json_pack("{s:I, s:I, s:I, s:I}", "commits", (json_int_t)gc.commits,
                                      "wal_syncs", (json_int_t)gc.wal_syncs, "wal_writes_ahead",
                                      (json_int_t)gc.writes_ahead, "wal_blocks_written_ahead",
                                      (json_int_t)gc.blocks_ahead));
    }
    /* What the database was loaded with, and the NURand constants of this run
     * (clause 2.1.6.1: C-Run's C_LAST differs from C-Load's by 65..119). */
    json_object_set_new(one, "data",
                        json_pack("{s:I, s:I, s:{s:i, s:i, s:i}, s:{s:i, s:i, s:i}}", "scale",
                                  (json_int_t)I->meta.scale, "seed", (json_int_t)I->meta.seed,
                                  "c_load", "c_last", (int)I->meta.c_load.c_last, "c_id",
                                  (int)I->meta.c_load.c_id, "ol_i_id", (int)I->meta.c_load.ol_i_id,
                                  "c_run", "c_last", (int)I->c_run.c_last, "c_id",
                                  (int)I->c_run.c_id, "ol_i_id", (int)I->c_run.ol_i_id));
    sim_hist_free(h);
    return one;
}

/* The "tpcc" section: setup, rates over `ranks` ranks' warehouses, the 90th percentile
 * limits, deferred deliveries, each instance, block reads per transaction, the user
 * scheduler. pending[i]: deliveries still queued in instance i at the end. */
static json_t *tpcc_section(const sim_run *run, const tpcc_options *o, uint64_t cycle_ns,
                            tpcc_instance *inst, const uint64_t *pending, const sim_vu_stats *vs,
                            int ranks)
{
    int n = (int)o->instances;
    json_t *tj = json_object();
    st_db_opts dbo;
    tpcc_db_opts(o, &dbo);
    json_object_set_new(
        tj, "setup",
        json_pack("{s:I, s:I, s:I, s:I, s:s, s:f, s:[iiiii], s:I, s:i, s:s, s:b, s:s}", "scale",
                  (json_int_t)o->scale, "vusers_per_instance", (json_int_t)o->vusers, "instances",
                  (json_int_t)n, "connections_per_instance", (json_int_t)o->connections, "pacing",
                  o->rate > 0   ? "none (open loop)"
                  : o->cycle_ns ? "cycle"
                                : o->pacing,
                  "mean_cycle_s", (double)cycle_ns / 1e9, "mix", o->mixv.pct[0], o->mixv.pct[1],
                  o->mixv.pct[2], o->mixv.pct[3], o->mixv.pct[4], "buffer_bytes_per_instance",
                  (json_int_t)dbo.buffer_bytes, "delivery_workers_per_instance",
                  tpcc_delivery_workers(o), "prefetch", o->prefetch, "group_commit",
                  n > 0 && inst[0].db && group_commit_on(o, &inst[0]), "cpu_sched", o->cpu_sched));
    json_t *setup = json_object_get(tj, "setup");
    json_object_set_new(setup, "open_loop", json_boolean(o->rate > 0));
    json_object_set_new(setup, "rate_per_instance", o->rate > 0 ? json_real(o->rate) : json_null());
    json_object_set_new(setup, "arrivals",
                        o->rate > 0 ? json_string(o->uniform ? "uniform" : "exponential")
                                    : json_null());
    json_object_set_new(tj, "rates", rates_json(run, o, -1, ranks));
    json_t *lim = json_object();
    for (int ty = 0; ty < TPCC_NTYPES; ty++) {
        sim_hist *h = sim_run_merged_hist(run, ty, -1);
        json_object_set_new(lim, tpcc_type_names[ty], tpcc_p90_json(h, tpcc_p90_limit_s[ty]));
        sim_hist_free(h);
    }
    sim_hist *dall = sim_hist_new();
    uint64_t derr = 0, dskip = 0, pending_total = 0;
    json_t *per = json_array();
    for (int i = 0; i < n; i++) {
        tpcc_instance *I = &inst[i];
        sim_hist_merge(dall, I->deferred);
        derr += I->deferred_errors;
        dskip += I->deferred_skipped;
        pending_total += pending[i];
        json_array_append_new(per, instance_json(run, o, I, i, pending[i]));
    }
    json_object_set_new(lim, "delivery_deferred",
                        tpcc_p90_json(dall, TPCC_DELIVERY_DEFERRED_P90_LIMIT_S));
    json_object_set_new(tj, "p90_limits", lim);
    json_object_set_new(tj, "delivery_deferred",
                        tpcc_deferred_json(dall, derr, dskip, pending_total));
    json_object_set_new(tj, "per_instance", per);
    json_object_set_new(tj, "reads_per_txn", reads_json(inst, n));
    json_object_set_new(tj, "waits", waits_json(inst, n));
    json_object_set_new(tj, "vu_engine",
                        json_pack("{s:I, s:I, s:f, s:f}", "units", (json_int_t)vs->units,
                                  "max_queue", (json_int_t)vs->max_queue, "wake_late_p99_us",
                                  (double)vs->wake_late_p99_ns / 1000.0, "wake_late_max_us",
                                  (double)vs->wake_late_max_ns / 1000.0));
    sim_hist_free(dall);
    return tj;
}

uint64_t tpcc_mean_wait_ns(const tpcc_options *o)
{
    if (o->rate > 0) return 0; /* open loop: no user waits */
    if (o->cycle_ns) return o->cycle_ns;
    if (o->pacev == TPCC_PACE_REVIEW) return (uint64_t)(TPCC_REVIEW_CYCLE_S * 1e9);
    return 0;
}

double tpcc_mean_think_s(const tpcc_options *o)
{
    if (o->rate > 0) return 0;
    if (o->cycle_ns || o->pacev == TPCC_PACE_REVIEW) return (double)tpcc_mean_wait_ns(o) / 1e9;
    if (o->pacev == TPCC_PACE_OFF) return 0;
    /* spec: the think time of the type just run and the keying time of the next, each
     * type in its share of the mix */
    double z = 0;
    for (int ty = 0; ty < TPCC_NTYPES; ty++)
        z += o->mixv.pct[ty] / 100.0 * (tpcc_think_s[ty] + tpcc_keying_s[ty]);
    return z;
}

/* The measured run of n instances: the drive's counters, the pool's (one instance) and
 * the space guard. */
static sim_run *new_run(const tpcc_options *o, st_target *t, tpcc_instance *inst, int n,
                        st_space_guard *space)
{
    sim_run_config rc = {.type_names = tpcc_type_names,
                         .ntypes = TPCC_NTYPES,
                         .counter_names = tpcc_counter_names,
                         .ncounters = TPCC_NCOUNTERS,
                         .unit = "tps",
                         .duration_ns = o->duration_ns,
                         .report_interval_ns = o->report_interval_ns,
                         .instances = n,
                         .quiet = o->quiet};
    sim_run_config_warmup(&rc, o->warmup_ns, o->steady_round_ns, o->steady_max_rounds);
    sim_run *run = sim_run_new(&rc);
    sim_run_track_lateness(run);
    sim_run_add_probe(run, &st_device_io_probe, t);
    /* The disk's counters include every process on it; the pool probe counts this
     * database's own reads, writes and I/Os in flight (one instance: probes are
     * named, and per-instance totals are in tpcc.per_instance[].database). */
    if (n == 1 && inst[0].db) sim_run_add_probe(run, &st_db_pool_probe, inst[0].db);
    sim_run_add_guard(run, st_space_guard_check, space);
    return run;
}

/* The run from start to finish: each instance's delivery workers beside the users. The
 * deliveries still queued at the end go to pending[]; returns sim_vu_run's status. */
static int run_users(wl *w, int n, sim_vu_stats *vs, uint64_t *pending)
{
    const tpcc_options *o = w->o;
    tpcc_instance *inst = w->inst;
    dworker_args da[64];
    char wbuf[64];
    if (o->rate > 0)
        sim_info("tpcc: running %d instance(s) open loop: %.1f transactions/s each (%s "
                 "arrivals) on %llu connections, %s warm-up + %.0f s measured",
                 n, o->rate, o->uniform ? "uniform" : "exponential",
                 (unsigned long long)o->connections,
                 sim_warmup_text(o->warmup_ns, wbuf, sizeof wbuf), (double)o->duration_ns / 1e9);
    else
        sim_info("tpcc: running %d instance(s): %llu users and %llu connections each, pacing %s "
                 "(mean wait %.3f s), %s warm-up + %.0f s measured",
                 n, (unsigned long long)o->vusers, (unsigned long long)o->connections,
                 o->cycle_ns ? "cycle" : o->pacing, (double)w->cycle_ns / 1e9,
                 sim_warmup_text(o->warmup_ns, wbuf, sizeof wbuf), (double)o->duration_ns / 1e9);
    sim_run_start(w->run);
    const int dworkers = tpcc_delivery_workers(o);
    for (int i = 0; i < n; i++) {
        da[i] = (dworker_args){w, &inst[i]};
        for (int k = 0; k < dworkers; k++) {
            if (pthread_create(&inst[i].dworkers[k], NULL, delivery_worker, &da[i])) {
                sim_error("tpcc: cannot start delivery worker %d of instance %d", k + 1, i + 1);
                sim_run_finish(w->run);
                break;
            }
            inst[i].dworkers_started++;
        }
    }
    sim_vu_config vc = {.instances = n,
                        .vusers = (uint32_t)o->vusers,
                        .workers = (int)o->connections,
                        .rate = o->rate,
                        .uniform = o->uniform,
                        .seed = o->seed};
    sim_vu_ops ops = {.worker_open = worker_open,
                      .worker_close = worker_close,
                      .run = run_unit,
                      .next_delay_ns = next_delay};
    int status = sim_vu_run(w->run, &vc, &ops, w, vs);
    sim_run_finish(w->run);
    stop_delivery_workers(inst, n, pending);
    return status;
}

/* The result: sim's run sections, the "tpcc" section and the databases'; with several
 * ranks, each rank's own beside the job's. */
static void put_results(json_t *doc, const sim_run *run, const wl *w, int n,
                        const uint64_t *pending, const sim_vu_stats *vs)
{
    const tpcc_options *o = w->o;
    tpcc_instance *inst = w->inst;
    /* Several ranks: this rank's own detail before the run's figures become the job's. */
    json_t *own =
        sim_ranks_size() > 1 ? tpcc_section(run, o, w->cycle_ns, inst, pending, vs, 1) : NULL;
    sim_result_put_run(doc, NULL, run);
    json_t *tj = tpcc_section(run, o, w->cycle_ns, inst, pending, vs, sim_ranks_size());
    json_object_set_new(doc, "tpcc", tj);
    json_t *dbs = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(dbs, inst[i].db ? st_db_json(inst[i].db) : json_null());
    json_object_set_new(doc, "database", dbs);
    uint64_t buffer = 0, data = 0;
    for (int i = 0; i < n; i++)
        if (inst[i].db) {
            buffer += st_db_buffer_bytes(inst[i].db);
            data += st_db_data_bytes_at_open(inst[i].db);
        }
    sim_result_put_cache(doc, buffer, data,
                         "appsim's buffer pool (--buffer per instance; O_DIRECT, no page cache)");
    const json_t *ranks = sim_result_put_rank_detail(doc, "tpcc", own);
    sim_result_put_rank_detail(doc, "database", dbs);
    if (ranks) tpcc_merge_ranks(tj, ranks);
    json_decref(own);
}

int tpcc_run_point(const tpcc_options *o, st_target *t, tpcc_instance *inst, json_t *doc,
                   sim_run **out, sim_vu_stats *vs)
{
    int n = (int)o->instances;
    /* New orders, order lines, history and the WAL grow the database as the run goes:
     * the run refuses to start, or stops, with less than --keep-free left. */
    st_space_guard space = {.t = t, .keep_free = o->keep_free};
    char why[512];
    if (st_space_guard_check(&space, why, sizeof why)) {
        sim_error("tpcc: refusing to run: %s; free some space or lower --keep-free", why);
        return SIM_EXIT_USAGE;
    }
    wl w = {.o = o, .inst = inst, .cycle_ns = tpcc_mean_wait_ns(o)};
    init_instances(o, inst, n);
    sim_run *run = new_run(o, t, inst, n, &space);
    w.run = run;
    uint64_t pending[64] = {0};
    int status = run_users(&w, n, vs, pending);
    if (doc) {
        put_results(doc, run, &w, n, pending, vs);
        print_summary(stdout, doc, o);
        fflush(stdout);
    }
    free_instances(inst, n);
    *out = run;
    return status;
}

int tpcc_run_measure(const tpcc_options *o, st_target *t, tpcc_instance *inst, json_t *doc)
{
    sim_run *run = NULL;
    sim_vu_stats vs = {0};
    int status = tpcc_run_point(o, t, inst, doc, &run, &vs);
    if (!run) return status;
    /* The result is complete up to the stop, but the run did not last its --duration. */
    if (!status && sim_run_stopped_by(run)) status = SIM_EXIT_FAIL;
    sim_run_free(run);
    return status;
}
