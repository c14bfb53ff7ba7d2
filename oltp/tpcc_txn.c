/*
 * oltp/tpcc_txn.c: the five TPC-C transactions (clause 2.4 to 2.8) over one SQLite
 * connection, with every statement prepared once per connection.
 *
 * Write transactions (New-Order, Payment, Delivery) take the database's in-process
 * writer lock and then BEGIN IMMEDIATE, so SQLite never has to arbitrate between our
 * own connections: the lock is handed over as soon as the previous writer commits,
 * and the wait is part of the response time. Read-only transactions (Order-Status,
 * Stock-Level) run in a deferred transaction beside the writer (WAL snapshots).
 * SQLITE_BUSY / SQLITE_LOCKED from anything else (a checkpoint, another process) is
 * met by a short busy-handler wait, then by restarting the whole transaction; both
 * are counted, and a transaction is abandoned only after MAX_RETRIES restarts.
 */
#include "oltp/tpcc_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_RETRIES 1000
#define BUSY_WAIT_US 100
#define BUSY_WAITS_PER_TRY 2000 /* 0.2 s inside SQLite before restarting */

const char *const tpcc_type_names[TPCC_NTYPES] = {"new_order", "payment", "order_status",
                                                  "delivery", "stock_level"};
const char *const tpcc_counter_names[TPCC_NCOUNTERS] = {
    "rollbacks",       "retries",      "busy_waits",     "remote_order_lines",
    "remote_payments", "by_last_name", "prefetch_failed"};
const double tpcc_p90_limit_s[TPCC_NTYPES] = {5, 5, 5, 5, 20};

struct tpcc_writer_lock {
    sim_fifo_lock *fifo;
};

tpcc_writer_lock *tpcc_writer_lock_new(void)
{
    tpcc_writer_lock *l = sim_xcalloc(1, sizeof *l);
    l->fifo = sim_fifo_lock_new();
    return l;
}

void tpcc_writer_lock_free(tpcc_writer_lock *l)
{
    if (!l) return;
    sim_fifo_lock_free(l->fifo);
    free(l);
}

enum {
    S_BEGIN_W,
    S_BEGIN_R,
    S_COMMIT,
    S_ROLLBACK,
    /* New-Order */
    S_NO_WTAX,
    S_NO_DIST,
    S_NO_CUST,
    S_NO_INS_ORDER,
    S_NO_INS_NEWORDER,
    S_NO_ITEM,
    S_NO_STOCK_UPD,
    S_NO_INS_OL,
    /* Payment */
    S_PAY_WH,
    S_PAY_DIST,
    S_CUST_BY_NAME,
    S_PAY_CUST,
    S_PAY_CUST_UPD,
    S_PAY_CUST_UPD_BC,
    S_PAY_HIST,
    /* Order-Status */
    S_OS_CUST,
    S_OS_ORDER,
    S_OS_LINES,
    /* Delivery */
    S_DL_FIRST,
    S_DL_DELETE,
    S_DL_ORDER,
    S_DL_LINES,
    S_DL_SUM,
    S_DL_CUST,
    /* Stock-Level */
    S_SL_NEXT,
    S_SL_COUNT,
    /* Prefetch (reads of the write transactions' pages, outside the writer lock) */
    S_PF_WH,
    S_PF_STOCK,
    S_PF_ORDER_END,
    S_PF_NEWORDER_END,
    S_PF_LINE_END,
    S_PF_DL_ORDER,
    S_N
};

/* Stock's and customer's integer keys from the bound key columns: (?1, ?2) = (w, i) and
 * (?1, ?2, ?3) = (w, d, c). */
#define STOCK_KEY TPCC_STOCK_KEY_SQL("?1", "?2")
#define CUSTOMER_KEY TPCC_CUSTOMER_KEY_SQL("?1", "?2", "?3")
static const char *const sql_text[S_N] = {
    [S_BEGIN_W] = "BEGIN IMMEDIATE",
    [S_BEGIN_R] = "BEGIN",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_NO_WTAX] = "SELECT w_tax FROM warehouse WHERE w_id = ?1",
    [S_NO_DIST] = "UPDATE district SET d_next_o_id = d_next_o_id + 1"
                  " WHERE d_w_id = ?1 AND d_id = ?2 RETURNING d_tax, d_next_o_id - 1",
    [S_NO_CUST] = "SELECT c_discount, c_last, c_credit FROM customer"
                  " WHERE c_key = " CUSTOMER_KEY,
    [S_NO_INS_ORDER] = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d,"
                       " o_carrier_id, o_ol_cnt, o_all_local)"
                       " VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6, ?7)",
    [S_NO_INS_NEWORDER] = "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?1, ?2, ?3)",
    [S_NO_ITEM] = "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?1",
    [S_NO_STOCK_UPD] =
        "UPDATE stock SET s_quantity = CASE WHEN s_quantity - ?3 >= 10 THEN s_quantity - ?3"
        " ELSE s_quantity - ?3 + 91 END, s_ytd = s_ytd + ?3, s_order_cnt = s_order_cnt + 1,"
        " s_remote_cnt = s_remote_cnt + ?4 WHERE s_key = " STOCK_KEY
        " RETURNING s_quantity, s_data, CASE ?5 WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02"
        " WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05"
        " WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08"
        " WHEN 9 THEN s_dist_09 ELSE s_dist_10 END",
    [S_NO_INS_OL] = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id,"
                    " ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)"
                    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7, ?8, ?9)",
    [S_PAY_WH] = "UPDATE warehouse SET w_ytd = w_ytd + ?2 WHERE w_id = ?1"
                 " RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip",
    [S_PAY_DIST] = "UPDATE district SET d_ytd = d_ytd + ?3 WHERE d_w_id = ?1 AND d_id = ?2"
                   " RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip",
    [S_CUST_BY_NAME] = "SELECT c_id FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2"
                       " AND c_last = ?3 ORDER BY c_first",
    [S_PAY_CUST] = "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city,"
                   " c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount,"
                   " c_balance, c_data FROM customer"
                   " WHERE c_key = " CUSTOMER_KEY,
    [S_PAY_CUST_UPD] = "UPDATE customer SET c_balance = c_balance - ?4,"
                       " c_ytd_payment = c_ytd_payment + ?4, c_payment_cnt = c_payment_cnt + 1"
                       " WHERE c_key = " CUSTOMER_KEY,
    [S_PAY_CUST_UPD_BC] = "UPDATE customer SET c_balance = c_balance - ?4,"
                          " c_ytd_payment = c_ytd_payment + ?4,"
                          " c_payment_cnt = c_payment_cnt + 1, c_data = ?5"
                          " WHERE c_key = " CUSTOMER_KEY,
    [S_PAY_HIST] = "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date,"
                   " h_amount, h_data) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [S_OS_CUST] = "SELECT c_balance, c_first, c_middle, c_last FROM customer"
                  " WHERE c_key = " CUSTOMER_KEY,
    /* Without statistics SQLite's planner prefers the primary key here, for its order,
     * and walks the district's orders backwards until it meets the customer: about half
     * of the district's orders, ten leaves or more, where the index needs one; and
     * New-Order's prefetch (which runs this to bring in the orders_customer leaf its
     * insert goes to) would miss that leaf. */
    [S_OS_ORDER] = "SELECT o_id, o_entry_d, o_carrier_id FROM orders INDEXED BY orders_customer"
                   " WHERE o_w_id = ?1 AND o_d_id = ?2 AND o_c_id = ?3 ORDER BY o_id DESC LIMIT 1",
    [S_OS_LINES] = "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d"
                   " FROM order_line WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id = ?3",
    [S_DL_FIRST] = "SELECT no_o_id FROM new_order WHERE no_w_id = ?1 AND no_d_id = ?2"
                   " ORDER BY no_o_id LIMIT 1",
    [S_DL_DELETE] = "DELETE FROM new_order WHERE no_w_id = ?1 AND no_d_id = ?2 AND no_o_id = ?3",
    [S_DL_ORDER] = "UPDATE orders SET o_carrier_id = ?4 WHERE o_w_id = ?1 AND o_d_id = ?2"
                   " AND o_id = ?3 RETURNING o_c_id",
    [S_DL_LINES] = "UPDATE order_line SET ol_delivery_d = ?4 WHERE ol_w_id = ?1"
                   " AND ol_d_id = ?2 AND ol_o_id = ?3",
    [S_DL_SUM] = "SELECT sum(ol_amount) FROM order_line WHERE ol_w_id = ?1 AND ol_d_id = ?2"
                 " AND ol_o_id = ?3",
    [S_DL_CUST] = "UPDATE customer SET c_balance = c_balance + ?4,"
                  " c_delivery_cnt = c_delivery_cnt + 1"
                  " WHERE c_key = " CUSTOMER_KEY,
    [S_SL_NEXT] = "SELECT d_next_o_id FROM district WHERE d_w_id = ?1 AND d_id = ?2",
    [S_SL_COUNT] = "SELECT count(DISTINCT s_i_id) FROM order_line, stock"
                   " WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id < ?3 AND ol_o_id >= ?4"
                   " AND s_key = " TPCC_STOCK_KEY_SQL("?1", "ol_i_id") " AND s_quantity < ?5",
    [S_PF_WH] = "SELECT w_name FROM warehouse WHERE w_id = ?1",
    [S_PF_STOCK] = "SELECT s_quantity FROM stock WHERE s_key = " STOCK_KEY,
    /* the b-tree leaves where New-Order appends its order, new_order and lines */
    [S_PF_ORDER_END] = "SELECT o_id FROM orders WHERE o_w_id = ?1 AND o_d_id = ?2"
                       " ORDER BY o_id DESC LIMIT 1",
    [S_PF_NEWORDER_END] = "SELECT no_o_id FROM new_order WHERE no_w_id = ?1 AND no_d_id = ?2"
                          " ORDER BY no_o_id DESC LIMIT 1",
    [S_PF_LINE_END] = "SELECT ol_o_id FROM order_line WHERE ol_w_id = ?1 AND ol_d_id = ?2"
                      " ORDER BY ol_o_id DESC LIMIT 1",
    [S_PF_DL_ORDER] = "SELECT o_c_id FROM orders WHERE o_w_id = ?1 AND o_d_id = ?2 AND o_id = ?3",
};

/* What New-Order reads of an item (clause 2.4.2.2): whether the id is used, the
 * price, and whether i_data says ORIGINAL. */
typedef struct no_item {
    bool found, original;
    int64_t price;
} no_item;

/* What a write transaction's prefetch read that no transaction ever changes, so that
 * the part under the writer lock need not read it again (docs/tpcc.md, "How
 * transactions run"): New-Order's items (the item table is never written), the
 * warehouse's w_tax and the customer's c_discount; the customer Payment picks by last
 * name (names and ids never change). Valid only for the transaction in progress, and
 * only when its prefetch succeeded. */
typedef struct pf_kept {
    bool valid;
    no_item items[TPCC_MAX_ORDER_LINES];
    double w_tax, c_discount;
    uint32_t c_id;
} pf_kept;

struct tpcc_conn {
    sqlite3 *db;
    int64_t scale;
    tpcc_writer_lock *lock;
    sqlite3_stmt *st[S_N];
    tpcc_counts counts;
    bool prefetch;           /* write transactions read their pages before taking the lock */
    tpcc_durable_fn durable; /* group commit: makes a commit durable after the lock */
    void *durable_arg;
    int busy_in_try; /* busy-handler calls in the current attempt */
    tpcc_waits w;
    uint64_t held_since_ns, read_mark_ns, cpu_mark_ns; /* while holding the writer lock */
    pf_kept kept;
    char cdata[512]; /* Payment's new c_data for bad-credit customers */
};

/* Waits a little and lets SQLite retry, up to a bound per attempt; counted. */
static int busy_handler(void *arg, int ncalls)
{
    tpcc_conn *c = arg;
    (void)ncalls;
    c->counts.v[TPCC_CNT_BUSY_WAITS]++;
    if (++c->busy_in_try > BUSY_WAITS_PER_TRY) return 0;
    struct timespec ts = {0, BUSY_WAIT_US * 1000L};
    nanosleep(&ts, NULL);
    return 1;
}

tpcc_conn *tpcc_conn_new(sqlite3 *db, int64_t scale, tpcc_writer_lock *lock, char *err,
                         size_t errlen)
{
    tpcc_conn *c = sim_xcalloc(1, sizeof *c);
    c->db = db;
    c->scale = scale;
    c->lock = lock;
    for (int i = 0; i < S_N; i++) {
        if (sqlite3_prepare_v3(db, sql_text[i], -1, SQLITE_PREPARE_PERSISTENT, &c->st[i], NULL) !=
            SQLITE_OK) {
            snprintf(err, errlen, "preparing \"%.60s...\": %s", sql_text[i], sqlite3_errmsg(db));
            tpcc_conn_free(c);
            return NULL;
        }
    }
    sqlite3_busy_handler(db, busy_handler, c);
    return c;
}

void tpcc_conn_set_prefetch(tpcc_conn *c, bool on)
{
    c->prefetch = on;
}

void tpcc_conn_set_durable(tpcc_conn *c, tpcc_durable_fn durable, void *arg)
{
    c->durable = durable;
    c->durable_arg = arg;
}

void tpcc_conn_free(tpcc_conn *c)
{
    if (!c) return;
    for (int i = 0; i < S_N; i++)
        sqlite3_finalize(c->st[i]);
    sqlite3_busy_handler(c->db, NULL, NULL);
    free(c);
}

sqlite3 *tpcc_conn_db(const tpcc_conn *c)
{
    return c->db;
}

static uint64_t thread_read_ns(void)
{
    st_db_thread_reads r;
    st_db_thread_reads_get(&r);
    return r.device_read_ns;
}

void tpcc_conn_waits(const tpcc_conn *c, const st_db_thread_reads *reads, tpcc_waits *out)
{
    *out = c->w;
    out->ns[TPCC_W_READS] = reads->device_read_ns;
}

/* Queues for the writer lock, timing the queue and the hand-over. */
static void writer_lock_take(tpcc_conn *c)
{
    uint64_t t0 = sim_now_ns();
    uint64_t handover = sim_fifo_lock_acquire_handover(c->lock->fifo);
    c->held_since_ns = sim_now_ns();
    c->read_mark_ns = thread_read_ns();
    c->cpu_mark_ns = sim_thread_cpu_ns();
    uint64_t waited = c->held_since_ns - t0;
    handover = handover < waited ? handover : waited;
    c->w.ns[TPCC_W_LOCK_QUEUE] += waited - handover;
    c->w.ns[TPCC_W_HANDOVER] += handover;
}

/* The hold ends before the release: a waiter woken by it may run first on this core,
 * and that time is the next owner's, not this one's. */
static void writer_lock_give(tpcc_conn *c)
{
    uint64_t held = sim_now_ns() - c->held_since_ns;
    c->w.ns[TPCC_W_READS_HELD] += thread_read_ns() - c->read_mark_ns;
    c->w.ns[TPCC_W_HELD_CPU] += sim_thread_cpu_ns() - c->cpu_mark_ns;
    sim_fifo_lock_release(c->lock->fifo);
    c->w.ns[TPCC_W_HELD] += held;
    c->w.txn_held_ns += held;
    c->held_since_ns = 0;
}

void tpcc_conn_take_counts(tpcc_conn *c, tpcc_counts *out)
{
    *out = c->counts;
    memset(&c->counts, 0, sizeof c->counts);
}

/* ---------------------------------------------------------------- statement helpers */

static sqlite3_stmt *B(tpcc_conn *c, int s)
{
    sqlite3_stmt *st = c->st[s];
    sqlite3_reset(st);
    return st;
}

#define BI(st, i, v) sqlite3_bind_int64((st), (i), (sqlite3_int64)(v))

/* Runs a statement expected to produce no row (or ignores rows). */
static int run_done(sqlite3_stmt *st)
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        ;
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Runs statement s to its end; its time goes to wait part `part` while the writer
 * lock is held. */
static int run_timed(tpcc_conn *c, int s, int part)
{
    uint64_t t0 = c->held_since_ns ? sim_now_ns() : 0;
    int rc = run_done(B(c, s));
    if (t0) c->w.ns[part] += sim_now_ns() - t0;
    return rc;
}

/* Steps to the first row: SQLITE_ROW, SQLITE_DONE (no row) or an error. The caller
 * reads columns and then resets (B() resets before the next use too). */
static int run_row(sqlite3_stmt *st)
{
    return sqlite3_step(st);
}

static bool retryable(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

static void reset_all(tpcc_conn *c)
{
    for (int i = S_NO_WTAX; i < S_N; i++)
        sqlite3_reset(c->st[i]);
}

typedef int (*body_fn)(tpcc_conn *c, const void *in, void *out);

/*
 * Reads outside the writer lock (docs/tpcc.md, "How transactions run"). SQLite has one writer
 * per database, so a write transaction that missed the buffer pool under the lock
 * would read its pages one at a time while every other writer waits: the drive would
 * see queue depth 1 whatever the number of connections. So before it queues for the
 * lock, a write transaction reads the rows it is going to read and the b-tree leaves
 * where it is going to insert, in a read transaction on a WAL snapshot; the pages come
 * into the shared pool concurrently with the other connections and with the writer.
 * This only warms the pool: the transaction then runs whole under the lock, reads
 * everything again and writes, so nothing is skipped and isolation is SQLite's. A
 * prefetch that fails (a busy snapshot) is counted and the transaction runs anyway.
 */
static int touch(tpcc_conn *c, int s, const int64_t *v, int n)
{
    sqlite3_stmt *st = B(c, s);
    for (int i = 0; i < n; i++)
        BI(st, i + 1, v[i]);
    return run_done(st);
}
#define TOUCH(c, s, ...)                                                                           \
    touch((c), (s), (const int64_t[]){__VA_ARGS__},                                                \
          (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

/* Column 0 of statement s's first row as a double; SQLITE_NOTFOUND without a row. */
static int read_real(tpcc_conn *c, int s, double *out, const int64_t *v, int n)
{
    sqlite3_stmt *st = B(c, s);
    for (int i = 0; i < n; i++)
        BI(st, i + 1, v[i]);
    int rc = run_row(st);
    if (rc == SQLITE_ROW) *out = sqlite3_column_double(st, 0);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? SQLITE_OK : rc == SQLITE_DONE ? SQLITE_NOTFOUND : rc;
}
#define READ_REAL(c, s, out, ...)                                                                  \
    read_real((c), (s), (out), (const int64_t[]){__VA_ARGS__},                                     \
              (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

static void prefetch(tpcc_conn *c, body_fn reads, const void *in)
{
    uint64_t t0 = sim_now_ns();
    c->busy_in_try = 0;
    int rc = run_done(B(c, S_BEGIN_R));
    if (rc == SQLITE_OK) {
        rc = reads(c, in, NULL);
        reset_all(c);
    }
    if (sqlite3_get_autocommit(c->db) == 0) {
        int end = run_done(B(c, rc == SQLITE_OK ? S_COMMIT : S_ROLLBACK));
        if (rc == SQLITE_OK) rc = end;
        if (sqlite3_get_autocommit(c->db) == 0) run_done(B(c, S_ROLLBACK));
    }
    if (rc != SQLITE_OK) {
        c->counts.v[TPCC_CNT_PREFETCH_FAILED]++;
        c->kept.valid = false;
    }
    c->w.ns[TPCC_W_PREFETCH] += sim_now_ns() - t0;
}

/* Group commit's wait for the WAL sync, after the writer lock. */
static int make_durable(tpcc_conn *c, char *err, size_t errlen)
{
    uint64_t t0 = sim_now_ns();
    int rc = c->durable(c->durable_arg, err, errlen);
    c->w.ns[TPCC_W_DURABLE] += sim_now_ns() - t0;
    return rc;
}

/*
 * Runs body inside a transaction (a write transaction when `reads` is given, which
 * prefetches its pages first) until it commits (TXN_COMMITTED) or rolls back by request
 * (body returns SQLITE_ABORT, after which ROLLBACK is issued: TXN_ROLLED_BACK); SIM_ERR
 * with err on a database error.
 */
enum { TXN_COMMITTED = SIM_OK, TXN_ROLLED_BACK = 1 };
static int run_txn(tpcc_conn *c, body_fn reads, body_fn body, const void *in, void *out, char *err,
                   size_t errlen)
{
    bool write = reads != NULL;
    c->w.txn_held_ns = 0;
    c->kept.valid = false;
    if (write && c->prefetch) prefetch(c, reads, in);
    for (int attempt = 0;; attempt++) {
        c->busy_in_try = 0;
        if (write && c->lock) writer_lock_take(c);
        int rc = run_timed(c, write ? S_BEGIN_W : S_BEGIN_R, TPCC_W_BEGIN_HELD);
        bool requested_rollback = false;
        if (rc == SQLITE_OK) {
            rc = body(c, in, out);
            /* A statement left on a row keeps its read snapshot open past COMMIT, and the
             * next BEGIN IMMEDIATE on a stale snapshot fails with SQLITE_BUSY_SNAPSHOT
             * (no busy handler can help): reset them all before ending. */
            reset_all(c);
            if (rc == SQLITE_ABORT) {
                requested_rollback = true;
                rc = run_done(B(c, S_ROLLBACK));
            } else if (rc == SQLITE_OK) {
                rc = run_timed(c, S_COMMIT, TPCC_W_COMMIT_HELD);
            }
        }
        if (rc != SQLITE_OK && sqlite3_get_autocommit(c->db) == 0) {
            /* Keep the first error's message: ROLLBACK may replace it. */
            char msg[256];
            snprintf(msg, sizeof msg, "%s", sqlite3_errmsg(c->db));
            run_done(B(c, S_ROLLBACK));
            snprintf(err, errlen, "%s", msg);
        } else if (rc != SQLITE_OK) {
            snprintf(err, errlen, "%s", sqlite3_errmsg(c->db));
        }
        if (rc == SQLITE_NOTFOUND)
            snprintf(err, errlen,
                     "a row the transaction reads is missing (is the database"
                     " complete? `appsim tpcc check` tests it)");
        if (write && c->lock) writer_lock_give(c);
        /* Group commit: the commit is written but not yet synced; the next writer
         * already runs while this one waits for the (shared) WAL sync. */
        if (rc == SQLITE_OK && write && !requested_rollback && c->durable &&
            make_durable(c, err, errlen))
            return SIM_ERR;
        if (rc == SQLITE_OK) return requested_rollback ? TXN_ROLLED_BACK : TXN_COMMITTED;
        if (!retryable(rc) || attempt >= MAX_RETRIES) {
            if (attempt >= MAX_RETRIES)
                snprintf(err + strlen(err), errlen - strlen(err), " (gave up after %d restarts)",
                         attempt);
            return SIM_ERR;
        }
        c->counts.v[TPCC_CNT_RETRIES]++;
    }
}

/* Clause 2.5.2.2 / 2.6.2.2: the customer in the middle of those with this last name,
 * sorted by first name (position ceil(n / 2), 1-based). */
static int customer_by_name(tpcc_conn *c, uint32_t w, uint32_t d, const char *last, uint32_t *c_id)
{
    sqlite3_stmt *st = B(c, S_CUST_BY_NAME);
    BI(st, 1, w);
    BI(st, 2, d);
    sqlite3_bind_text(st, 3, last, -1, SQLITE_STATIC);
    uint32_t ids[TPCC_CUST_PER_DIST];
    int n = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (n < TPCC_CUST_PER_DIST) ids[n++] = (uint32_t)sqlite3_column_int(st, 0);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return rc;
    if (n == 0) return SQLITE_NOTFOUND;
    *c_id = ids[(n - 1) / 2];
    return SQLITE_OK;
}

/* ---------------------------------------------------------------- New-Order 2.4 */

typedef struct no_out {
    bool rolled_back;
    char brand_generic[15];
    double total;
} no_out;

/* New-Order's reads of the warehouse's and district's taxes, the district's next order
 * id (then taken) and the customer's discount. An SQLite code. */
static int no_read_header(tpcc_conn *c, const tpcc_no_in *in, double *w_tax, double *d_tax,
                          int64_t *o_id, double *c_discount)
{
    int rc;
    if (c->kept.valid)
        *w_tax = c->kept.w_tax;
    else if ((rc = READ_REAL(c, S_NO_WTAX, w_tax, in->w_id)) != SQLITE_OK)
        return rc;

    sqlite3_stmt *st = B(c, S_NO_DIST);
    BI(st, 1, in->w_id);
    BI(st, 2, in->d_id);
    if ((rc = run_row(st)) != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_NOTFOUND : rc;
    *d_tax = sqlite3_column_double(st, 0);
    *o_id = sqlite3_column_int64(st, 1);
    if ((rc = run_done(st)) != SQLITE_OK) return rc;

    if (c->kept.valid) {
        *c_discount = c->kept.c_discount;
        return SQLITE_OK;
    }
    return READ_REAL(c, S_NO_CUST, c_discount, in->w_id, in->d_id, in->c_id);
}

/* The order row and its new-order row. An SQLite code. */
static int no_insert_order(tpcc_conn *c, const tpcc_no_in *in, int64_t o_id, int64_t now)
{
    bool all_local = true;
    for (uint32_t i = 0; i < in->ol_cnt; i++)
        all_local &= in->supply_w_id[i] == in->w_id;
    int rc;
    sqlite3_stmt *st = B(c, S_NO_INS_ORDER);
    BI(st, 1, o_id);
    BI(st, 2, in->d_id);
    BI(st, 3, in->w_id);
    BI(st, 4, in->c_id);
    BI(st, 5, now);
    BI(st, 6, in->ol_cnt);
    BI(st, 7, all_local ? 1 : 0);
    if ((rc = run_done(st)) != SQLITE_OK) return rc;
    st = B(c, S_NO_INS_NEWORDER);
    BI(st, 1, o_id);
    BI(st, 2, in->d_id);
    BI(st, 3, in->w_id);
    return run_done(st);
}

/* Reads item `id` (its row's price and data). An SQLite code. */
static int no_read_item(tpcc_conn *c, uint32_t id, no_item *it)
{
    sqlite3_stmt *st = B(c, S_NO_ITEM);
    BI(st, 1, id);
    int rc = run_row(st);
    *it = (no_item){.found = rc == SQLITE_ROW};
    if (rc == SQLITE_ROW) {
        it->price = sqlite3_column_int64(st, 0);
        it->original = strstr((const char *)sqlite3_column_text(st, 2), "ORIGINAL");
    }
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Order line i: the item's price, the stock's update, the line's row; its amount is
 * added to *total_cents. SQLITE_ABORT for an unused item id (the order rolls back).
 * The item comes from the prefetch when it read it: no transaction writes the item
 * table, so the row read before the writer lock is the row under it, and reading it
 * again there would only lengthen the hold every other writer waits for. */
static int no_line(tpcc_conn *c, const tpcc_no_in *in, uint32_t i, int64_t o_id, no_out *out,
                   int64_t *total_cents)
{
    no_item it;
    int rc = SQLITE_OK;
    if (c->kept.valid)
        it = c->kept.items[i];
    else if ((rc = no_read_item(c, in->i_id[i], &it)) != SQLITE_OK)
        return rc;
    if (!it.found) {
        /* Clause 2.4.2.3: an unused item id rolls the whole order back. */
        out->rolled_back = true;
        return SQLITE_ABORT;
    }
    sqlite3_stmt *st = B(c, S_NO_STOCK_UPD);
    BI(st, 1, in->supply_w_id[i]);
    BI(st, 2, in->i_id[i]);
    BI(st, 3, in->qty[i]);
    BI(st, 4, in->supply_w_id[i] != in->w_id ? 1 : 0);
    BI(st, 5, in->d_id);
    if ((rc = run_row(st)) != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_NOTFOUND : rc;
    bool stock_original = strstr((const char *)sqlite3_column_text(st, 1), "ORIGINAL");
    char dist_info[25];
    snprintf(dist_info, sizeof dist_info, "%s", (const char *)sqlite3_column_text(st, 2));
    /* Clause 2.4.2.2: brand-generic is "B" when item and stock data both say
     * ORIGINAL; it is only displayed, but the work is part of the transaction. */
    out->brand_generic[i] = it.original && stock_original ? 'B' : 'G';
    if ((rc = run_done(st)) != SQLITE_OK) return rc;

    int64_t amount = (int64_t)in->qty[i] * it.price;
    *total_cents += amount;
    st = B(c, S_NO_INS_OL);
    BI(st, 1, o_id);
    BI(st, 2, in->d_id);
    BI(st, 3, in->w_id);
    BI(st, 4, i + 1);
    BI(st, 5, in->i_id[i]);
    BI(st, 6, in->supply_w_id[i]);
    BI(st, 7, in->qty[i]);
    BI(st, 8, amount);
    sqlite3_bind_text(st, 9, dist_info, -1, SQLITE_TRANSIENT);
    return run_done(st);
}

static int new_order_body(tpcc_conn *c, const void *vin, void *vout)
{
    const tpcc_no_in *in = vin;
    no_out *out = vout;
    int64_t now = tpcc_now_unix();
    double w_tax = 0, d_tax = 0, c_discount = 0;
    int64_t o_id = 0;
    int rc = no_read_header(c, in, &w_tax, &d_tax, &o_id, &c_discount);
    if (rc != SQLITE_OK) return rc;
    if ((rc = no_insert_order(c, in, o_id, now)) != SQLITE_OK) return rc;
    int64_t total_cents = 0;
    for (uint32_t i = 0; i < in->ol_cnt; i++)
        if ((rc = no_line(c, in, i, o_id, out, &total_cents)) != SQLITE_OK) return rc;
    out->total = (double)total_cents / 100.0 * (1 - c_discount) * (1 + w_tax + d_tax);
    return SQLITE_OK;
}

/* New-Order's pages: warehouse (w_tax kept), district, customer (c_discount kept), each
 * item (kept) and stock row, and the ends of the district's orders, new_order and order_line ranges
 * and of the customer's orders in orders_customer, where the inserts go. */
static int new_order_reads(tpcc_conn *c, const void *vin, void *unused)
{
    const tpcc_no_in *in = vin;
    (void)unused;
    int rc = READ_REAL(c, S_NO_WTAX, &c->kept.w_tax, in->w_id);
    if (!rc) rc = TOUCH(c, S_SL_NEXT, in->w_id, in->d_id);
    if (!rc) rc = READ_REAL(c, S_NO_CUST, &c->kept.c_discount, in->w_id, in->d_id, in->c_id);
    if (!rc) rc = TOUCH(c, S_PF_ORDER_END, in->w_id, in->d_id);
    if (!rc) rc = TOUCH(c, S_OS_ORDER, in->w_id, in->d_id, in->c_id);
    if (!rc) rc = TOUCH(c, S_PF_NEWORDER_END, in->w_id, in->d_id);
    if (!rc) rc = TOUCH(c, S_PF_LINE_END, in->w_id, in->d_id);
    for (uint32_t i = 0; i < in->ol_cnt && !rc; i++) {
        rc = no_read_item(c, in->i_id[i], &c->kept.items[i]);
        if (!rc) rc = TOUCH(c, S_PF_STOCK, in->supply_w_id[i], in->i_id[i]);
    }
    c->kept.valid = rc == SQLITE_OK;
    return rc;
}

int tpcc_new_order(tpcc_conn *c, const tpcc_no_in *in, bool *rolled_back, char *err, size_t errlen)
{
    no_out out = {0};
    int rc = run_txn(c, new_order_reads, new_order_body, in, &out, err, errlen);
    *rolled_back = rc == TXN_ROLLED_BACK;
    if (rc == TXN_ROLLED_BACK) c->counts.v[TPCC_CNT_ROLLBACKS]++;
    if (rc != SIM_ERR)
        for (uint32_t i = 0; i < in->ol_cnt; i++)
            c->counts.v[TPCC_CNT_REMOTE_LINES] += in->supply_w_id[i] != in->w_id;
    return rc == SIM_ERR ? SIM_ERR : SIM_OK;
}

/* ---------------------------------------------------------------- Payment 2.5 */

static int payment_body(tpcc_conn *c, const void *vin, void *vout)
{
    const tpcc_pay_in *in = vin;
    (void)vout;
    sqlite3_stmt *st;
    int rc;
    char w_name[11], d_name[11];

    st = B(c, S_PAY_WH);
    BI(st, 1, in->w_id);
    BI(st, 2, in->h_amount_cents);
    if ((rc = run_row(st)) != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_NOTFOUND : rc;
    snprintf(w_name, sizeof w_name, "%s", (const char *)sqlite3_column_text(st, 0));
    if ((rc = run_done(st)) != SQLITE_OK) return rc;

    st = B(c, S_PAY_DIST);
    BI(st, 1, in->w_id);
    BI(st, 2, in->d_id);
    BI(st, 3, in->h_amount_cents);
    if ((rc = run_row(st)) != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_NOTFOUND : rc;
    snprintf(d_name, sizeof d_name, "%s", (const char *)sqlite3_column_text(st, 0));
    if ((rc = run_done(st)) != SQLITE_OK) return rc;

    uint32_t c_id = in->c_id;
    if (in->by_name && c->kept.valid)
        c_id = c->kept.c_id;
    else if (in->by_name && (rc = customer_by_name(c, in->c_w_id, in->c_d_id, in->c_last, &c_id)))
        return rc;

    st = B(c, S_PAY_CUST);
    BI(st, 1, in->c_w_id);
    BI(st, 2, in->c_d_id);
    BI(st, 3, c_id);
    if ((rc = run_row(st)) != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_NOTFOUND : rc;
    bool bad_credit = !strcmp((const char *)sqlite3_column_text(st, 10), "BC");
    if (bad_credit) {
        /* Clause 2.5.2.2: the payment's ids and amount in front of the old c_data, the
         * whole kept to 500 characters. */
        int n = snprintf(c->cdata, sizeof c->cdata, "%u %u %u %u %u %.2f ", c_id, in->c_d_id,
                         in->c_w_id, in->d_id, in->w_id, (double)in->h_amount_cents / 100.0);
        snprintf(c->cdata + n, 501 - (size_t)n, "%s", (const char *)sqlite3_column_text(st, 14));
    }
    sqlite3_reset(st);

    st = B(c, bad_credit ? S_PAY_CUST_UPD_BC : S_PAY_CUST_UPD);
    BI(st, 1, in->c_w_id);
    BI(st, 2, in->c_d_id);
    BI(st, 3, c_id);
    BI(st, 4, in->h_amount_cents);
    if (bad_credit) sqlite3_bind_text(st, 5, c->cdata, -1, SQLITE_STATIC);
    if ((rc = run_done(st)) != SQLITE_OK) return rc;

    char h_data[32];
    snprintf(h_data, sizeof h_data, "%s    %s", w_name, d_name);
    st = B(c, S_PAY_HIST);
    BI(st, 1, c_id);
    BI(st, 2, in->c_d_id);
    BI(st, 3, in->c_w_id);
    BI(st, 4, in->d_id);
    BI(st, 5, in->w_id);
    BI(st, 6, tpcc_now_unix());
    BI(st, 7, in->h_amount_cents);
    sqlite3_bind_text(st, 8, h_data, -1, SQLITE_TRANSIENT);
    return run_done(st);
}

/* Payment's pages: warehouse, district, the customer (through the last-name index when
 * by name; the customer it picks is kept). The history insert appends to the table's last leaf,
 * which stays hot. */
static int payment_reads(tpcc_conn *c, const void *vin, void *unused)
{
    const tpcc_pay_in *in = vin;
    (void)unused;
    int rc = TOUCH(c, S_PF_WH, in->w_id);
    if (!rc) rc = TOUCH(c, S_SL_NEXT, in->w_id, in->d_id);
    uint32_t c_id = in->c_id;
    if (!rc && in->by_name) rc = customer_by_name(c, in->c_w_id, in->c_d_id, in->c_last, &c_id);
    if (!rc) rc = TOUCH(c, S_PAY_CUST, in->c_w_id, in->c_d_id, c_id);
    c->kept.c_id = c_id;
    c->kept.valid = rc == SQLITE_OK;
    return rc;
}

int tpcc_payment(tpcc_conn *c, const tpcc_pay_in *in, char *err, size_t errlen)
{
    int rc = run_txn(c, payment_reads, payment_body, in, NULL, err, errlen);
    if (rc != SIM_ERR) {
        c->counts.v[TPCC_CNT_REMOTE_PAYMENTS] += in->c_w_id != in->w_id;
        c->counts.v[TPCC_CNT_BY_NAME] += in->by_name;
    }
    return rc == SIM_ERR ? SIM_ERR : SIM_OK;
}

/* ---------------------------------------------------------------- Order-Status 2.6 */

static int order_status_body(tpcc_conn *c, const void *vin, void *vout)
{
    const tpcc_os_in *in = vin;
    (void)vout;
    sqlite3_stmt *st;
    int rc;
    uint32_t c_id = in->c_id;
    if (in->by_name && (rc = customer_by_name(c, in->w_id, in->d_id, in->c_last, &c_id))) return rc;
    st = B(c, S_OS_CUST);
    BI(st, 1, in->w_id);
    BI(st, 2, in->d_id);
    BI(st, 3, c_id);
    if ((rc = run_row(st)) != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_NOTFOUND : rc;
    sqlite3_reset(st);

    st = B(c, S_OS_ORDER);
    BI(st, 1, in->w_id);
    BI(st, 2, in->d_id);
    BI(st, 3, c_id);
    rc = run_row(st);
    if (rc == SQLITE_DONE) /* every loaded customer has an order; keep it safe anyway */
        return SQLITE_OK;
    if (rc != SQLITE_ROW) return rc;
    int64_t o_id = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);

    st = B(c, S_OS_LINES);
    BI(st, 1, in->w_id);
    BI(st, 2, in->d_id);
    BI(st, 3, o_id);
    return run_done(st);
}

int tpcc_order_status(tpcc_conn *c, const tpcc_os_in *in, char *err, size_t errlen)
{
    int rc = run_txn(c, NULL, order_status_body, in, NULL, err, errlen);
    if (rc != SIM_ERR) c->counts.v[TPCC_CNT_BY_NAME] += in->by_name;
    return rc == SIM_ERR ? SIM_ERR : SIM_OK;
}

/* ---------------------------------------------------------------- Delivery 2.7 */

static int delivery_body(tpcc_conn *c, const void *vin, void *vout)
{
    const tpcc_del_in *in = vin;
    int *skipped = vout;
    sqlite3_stmt *st;
    int rc;
    int64_t now = tpcc_now_unix();
    *skipped = 0;
    for (uint32_t d = 1; d <= TPCC_DIST_PER_WH; d++) {
        st = B(c, S_DL_FIRST);
        BI(st, 1, in->w_id);
        BI(st, 2, d);
        rc = run_row(st);
        if (rc == SQLITE_DONE) {
            (*skipped)++; /* clause 2.7.4.2: no outstanding order, skip the district */
            continue;
        }
        if (rc != SQLITE_ROW) return rc;
        int64_t o_id = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);

        st = B(c, S_DL_DELETE);
        BI(st, 1, in->w_id);
        BI(st, 2, d);
        BI(st, 3, o_id);
        if ((rc = run_done(st)) != SQLITE_OK) return rc;
        st = B(c, S_DL_ORDER);
        BI(st, 1, in->w_id);
        BI(st, 2, d);
        BI(st, 3, o_id);
        BI(st, 4, in->o_carrier_id);
        if ((rc = run_row(st)) != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_NOTFOUND : rc;
        int64_t c_id = sqlite3_column_int64(st, 0);
        if ((rc = run_done(st)) != SQLITE_OK) return rc;
        st = B(c, S_DL_LINES);
        BI(st, 1, in->w_id);
        BI(st, 2, d);
        BI(st, 3, o_id);
        BI(st, 4, now);
        if ((rc = run_done(st)) != SQLITE_OK) return rc;
        st = B(c, S_DL_SUM);
        BI(st, 1, in->w_id);
        BI(st, 2, d);
        BI(st, 3, o_id);
        if ((rc = run_row(st)) != SQLITE_ROW) return rc;
        int64_t sum = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        st = B(c, S_DL_CUST);
        BI(st, 1, in->w_id);
        BI(st, 2, d);
        BI(st, 3, c_id);
        BI(st, 4, sum);
        if ((rc = run_done(st)) != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

/* Delivery's pages: per district the oldest new order, its order, lines and customer. */
static int delivery_reads(tpcc_conn *c, const void *vin, void *unused)
{
    const tpcc_del_in *in = vin;
    (void)unused;
    int rc = SQLITE_OK;
    for (uint32_t d = 1; d <= TPCC_DIST_PER_WH && !rc; d++) {
        sqlite3_stmt *st = B(c, S_DL_FIRST);
        BI(st, 1, in->w_id);
        BI(st, 2, d);
        if ((rc = run_row(st)) != SQLITE_ROW) {
            rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
            continue;
        }
        int64_t o_id = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        st = B(c, S_PF_DL_ORDER);
        BI(st, 1, in->w_id);
        BI(st, 2, d);
        BI(st, 3, o_id);
        if ((rc = run_row(st)) != SQLITE_ROW) {
            rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
            continue;
        }
        int64_t c_id = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        rc = TOUCH(c, S_DL_SUM, in->w_id, d, o_id);
        if (!rc) rc = TOUCH(c, S_OS_CUST, in->w_id, d, c_id);
    }
    return rc;
}

int tpcc_delivery(tpcc_conn *c, const tpcc_del_in *in, int *skipped, char *err, size_t errlen)
{
    int rc = run_txn(c, delivery_reads, delivery_body, in, skipped, err, errlen);
    return rc == SIM_ERR ? SIM_ERR : SIM_OK;
}

/* ---------------------------------------------------------------- Stock-Level 2.8 */

static int stock_level_body(tpcc_conn *c, const void *vin, void *vout)
{
    const tpcc_sl_in *in = vin;
    int *low = vout;
    sqlite3_stmt *st;
    int rc;
    st = B(c, S_SL_NEXT);
    BI(st, 1, in->w_id);
    BI(st, 2, in->d_id);
    if ((rc = run_row(st)) != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_NOTFOUND : rc;
    int64_t next = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    st = B(c, S_SL_COUNT);
    BI(st, 1, in->w_id);
    BI(st, 2, in->d_id);
    BI(st, 3, next);
    BI(st, 4, next - 20);
    BI(st, 5, in->threshold);
    if ((rc = run_row(st)) != SQLITE_ROW) return rc;
    *low = sqlite3_column_int(st, 0);
    sqlite3_reset(st);
    return SQLITE_OK;
}

int tpcc_stock_level(tpcc_conn *c, const tpcc_sl_in *in, int *low_stock, char *err, size_t errlen)
{
    int rc = run_txn(c, NULL, stock_level_body, in, low_stock, err, errlen);
    return rc == SIM_ERR ? SIM_ERR : SIM_OK;
}
