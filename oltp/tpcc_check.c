/*
 * oltp/tpcc_check.c: the consistency conditions of TPC-C clause 3.3.2, each one SQL
 * statement that counts the warehouses, districts, customers, orders or order lines
 * that break it (0 = the condition holds), plus SQLite's own integrity check.
 *
 * Money is in integer cents (see tpcc_internal.h), so the equalities are exact.
 * Per-row conditions (5, 6, 7) and per-customer ones (10, 12) read whole tables; the
 * statements are written so that SQLite scans each table once in key order and joins
 * through primary keys or grouped subqueries, never a correlated scan of history.
 */
#include "oltp/tpcc_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct cond {
    const char *what;
    const char *sql;
} cond;

static const cond conds[12] = {
    {"W_YTD = sum(D_YTD) per warehouse",
     "SELECT count(*) FROM warehouse LEFT JOIN (SELECT d_w_id, sum(d_ytd) s FROM district"
     " GROUP BY d_w_id) ON d_w_id = w_id WHERE s IS NULL OR w_ytd != s"},
    {"D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district",
     "SELECT count(*) FROM district WHERE d_next_o_id - 1 IS NOT (SELECT max(o_id) FROM orders"
     " WHERE o_w_id = d_w_id AND o_d_id = d_id) OR d_next_o_id - 1 != coalesce((SELECT"
     " max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id),"
     " d_next_o_id - 1)"},
    {"max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER per district",
     "SELECT count(*) FROM (SELECT max(no_o_id) - min(no_o_id) + 1 AS span, count(*) AS n"
     " FROM new_order GROUP BY no_w_id, no_d_id) WHERE span != n"},
    {"sum(O_OL_CNT) = rows in ORDER-LINE per district",
     "SELECT count(*) FROM (SELECT o_w_id AS w, o_d_id AS d, sum(o_ol_cnt) AS s FROM orders"
     " GROUP BY o_w_id, o_d_id) a LEFT JOIN (SELECT ol_w_id AS w, ol_d_id AS d, count(*) AS n"
     " FROM order_line GROUP BY ol_w_id, ol_d_id) b ON a.w = b.w AND a.d = b.d"
     " WHERE b.n IS NULL OR a.s != b.n"},
    {"O_CARRIER_ID is null exactly when the order is in NEW-ORDER",
     "SELECT count(*) FROM orders LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id"
     " AND no_o_id = o_id WHERE (o_carrier_id IS NULL) != (no_o_id IS NOT NULL)"},
    {"O_OL_CNT = rows in ORDER-LINE per order",
     "SELECT count(*) FROM orders WHERE o_ol_cnt != (SELECT count(*) FROM order_line"
     " WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id)"},
    {"OL_DELIVERY_D is null exactly when O_CARRIER_ID is null",
     "SELECT count(*) FROM order_line JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id"
     " AND o_id = ol_o_id WHERE (ol_delivery_d IS NULL) != (o_carrier_id IS NULL)"},
    {"W_YTD = sum(H_AMOUNT) per warehouse",
     "SELECT count(*) FROM warehouse LEFT JOIN (SELECT h_w_id, sum(h_amount) s FROM history"
     " GROUP BY h_w_id) ON h_w_id = w_id WHERE w_ytd != coalesce(s, 0)"},
    {"D_YTD = sum(H_AMOUNT) per district",
     "SELECT count(*) FROM district LEFT JOIN (SELECT h_w_id, h_d_id, sum(h_amount) s"
     " FROM history GROUP BY h_w_id, h_d_id) ON h_w_id = d_w_id AND h_d_id = d_id"
     " WHERE d_ytd != coalesce(s, 0)"},
    {"C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer",
     "WITH ol AS (SELECT o_w_id AS w, o_d_id AS d, o_c_id AS c, sum(ol_amount) AS s"
     " FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id"
     " AND ol_o_id = o_id WHERE ol_delivery_d IS NOT NULL GROUP BY 1, 2, 3),"
     " h AS (SELECT h_c_w_id AS w, h_c_d_id AS d, h_c_id AS c, sum(h_amount) AS s"
     " FROM history GROUP BY 1, 2, 3)"
     " SELECT count(*) FROM customer LEFT JOIN ol ON ol.w = c_w_id AND ol.d = c_d_id"
     " AND ol.c = c_id LEFT JOIN h ON h.w = c_w_id AND h.d = c_d_id AND h.c = c_id"
     " WHERE c_balance != coalesce(ol.s, 0) - coalesce(h.s, 0)"},
    {"rows in ORDER - rows in NEW-ORDER = 2100 per district (only right after load)",
     "SELECT count(*) FROM district WHERE (SELECT count(*) FROM orders WHERE o_w_id = d_w_id"
     " AND o_d_id = d_id) - (SELECT count(*) FROM new_order WHERE no_w_id = d_w_id"
     " AND no_d_id = d_id) != 2100"},
    {"C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) per customer",
     "WITH ol AS (SELECT o_w_id AS w, o_d_id AS d, o_c_id AS c, sum(ol_amount) AS s"
     " FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id"
     " AND ol_o_id = o_id WHERE ol_delivery_d IS NOT NULL GROUP BY 1, 2, 3)"
     " SELECT count(*) FROM customer LEFT JOIN ol ON ol.w = c_w_id AND ol.d = c_d_id"
     " AND ol.c = c_id WHERE c_balance + c_ytd_payment != coalesce(ol.s, 0)"},
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A check statement on a database of tens of GB runs for minutes, and SQLite's
 * integrity check is one virtual-machine step that no progress handler interrupts: a
 * watcher thread polls every WATCH_POLL_MS, calls sqlite3_interrupt on Ctrl-C (the
 * statement then ends with SQLITE_INTERRUPT at once) and prints a progress line every
 * WATCH_LINE_S. The integrity check reads every page of the database once, so its line
 * is the shared progress line (sim_progress) over the bytes this process has read
 * against the database's size, with an ETA; the page cache or appsim's buffer pool may
 * serve some pages, so the ETA errs long, never short. A condition's statement has no
 * known length: its line gives the time so far. */
#define WATCH_POLL_MS 100
#define WATCH_LINE_S 10.0

typedef struct watch {
    sqlite3 *db;
    const char *what;
    double start;
    uint64_t db_bytes, read0; /* the integrity check's total, and the reads before it */
    char label[64];
    sim_progress prog;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, started;
    pthread_t th;
} watch;

/* The integrity check's progress: bytes read of the database's size. */
static void bytes_line(watch *w)
{
    uint64_t now = sim_now_ns();
    st_own_io io;
    if (!sim_progress_due(&w->prog, now) || st_own_io_read(&io)) return;
    uint64_t done = io.read_bytes > w->read0 ? io.read_bytes - w->read0 : 0;
    if (done > w->db_bytes) done = w->db_bytes; /* pages read twice: the estimate's limit */
    char a[32], b[32], detail[160];
    snprintf(detail, sizeof detail, "%s of %s read", sim_format_size(done, a, sizeof a),
             sim_format_size(w->db_bytes, b, sizeof b));
    sim_progress_line(&w->prog, now, done, detail, false);
}

static void *watch_main(void *arg)
{
    watch *w = arg;
    double next_line = w->start + WATCH_LINE_S;
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += WATCH_POLL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cv, &w->mu, &until);
        if (w->done) break;
        if (sim_interrupted()) sqlite3_interrupt(w->db);
        if (w->db_bytes) {
            bytes_line(w);
            continue;
        }
        double now = mono_s();
        if (now >= next_line) {
            sim_info("tpcc check: %s: %.0f s so far (Ctrl-C stops it)", w->what, now - w->start);
            next_line = now + WATCH_LINE_S;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* db_bytes: the bytes the statement reads (0: not known). */
static void watch_begin(sqlite3 *db, watch *w, const char *what, uint64_t db_bytes)
{
    w->db = db;
    w->what = what;
    w->start = mono_s();
    w->done = false;
    st_own_io io;
    w->db_bytes = db_bytes && !st_own_io_read(&io) ? db_bytes : 0;
    w->read0 = w->db_bytes ? io.read_bytes : 0;
    snprintf(w->label, sizeof w->label, "tpcc check: %s (Ctrl-C stops it)", what);
    sim_progress_start(&w->prog, w->label, w->db_bytes, sim_quiet());
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    /* without the thread the check still runs, only without progress and Ctrl-C */
    w->started = pthread_create(&w->th, NULL, watch_main, w) == 0;
}

static void watch_end(watch *w)
{
    pthread_mutex_lock(&w->mu);
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (w->started) pthread_join(w->th, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
}

int tpcc_check_run(sqlite3 *db, int first, int last, bool fresh, tpcc_check_result *res, char *err,
                   size_t errlen)
{
    int n = 0;
    if (first < 1) first = 1;
    if (last > 12) last = 12;
    /* One read transaction: every condition sees the same snapshot. */
    if (tpcc_exec(db, "BEGIN", err, errlen)) return -1;
    for (int k = first; k <= last; k++) {
        tpcc_check_result *r = &res[n++];
        memset(r, 0, sizeof *r);
        r->number = k;
        r->what = conds[k - 1].what;
        if (k == 11 && !fresh) {
            r->skipped = true;
            r->pass = true;
            continue;
        }
        double t0 = mono_s();
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, conds[k - 1].sql, -1, &st, NULL) != SQLITE_OK) {
            snprintf(err, errlen, "condition %d: %s", k, sqlite3_errmsg(db));
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
        char what[32];
        snprintf(what, sizeof what, "condition %d of 12", k);
        watch w;
        watch_begin(db, &w, what, 0);
        int rc = sqlite3_step(st);
        watch_end(&w);
        if (rc != SQLITE_ROW) {
            if (sim_interrupted())
                snprintf(err, errlen, "check interrupted (condition %d)", k);
            else
                snprintf(err, errlen, "condition %d: %s", k, sqlite3_errmsg(db));
            sqlite3_finalize(st);
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
        r->violations = sqlite3_column_int64(st, 0);
        r->pass = r->violations == 0;
        sqlite3_finalize(st);
        r->seconds = mono_s() - t0;
        if (sim_interrupted()) {
            snprintf(err, errlen, "check interrupted");
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    return n;
}

/* The main database's size (page_count x page_size), or 0. */
static uint64_t db_size(sqlite3 *db)
{
    sqlite3_stmt *st;
    uint64_t bytes = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT page_count * page_size FROM pragma_page_count(), "
                           "pragma_page_size()",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        bytes = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return bytes;
}

int tpcc_integrity(sqlite3 *db, bool quick, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, quick ? "PRAGMA quick_check" : "PRAGMA integrity_check", -1, &st,
                           NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return SIM_ERR;
    }
    watch w;
    watch_begin(db, &w, quick ? "quick_check" : "integrity_check", db_size(db));
    int rc = sqlite3_step(st), result;
    watch_end(&w);
    if (w.db_bytes) sim_progress_clear(&w.prog);
    if (rc != SQLITE_ROW) {
        if (sim_interrupted())
            snprintf(err, errlen, "check interrupted");
        else
            snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        result = SIM_ERR;
    } else {
        const char *line = (const char *)sqlite3_column_text(st, 0);
        result = line && !strcmp(line, "ok") ? TPCC_INTEGRITY_OK : TPCC_INTEGRITY_PROBLEMS;
        if (result) snprintf(err, errlen, "%s", line ? line : "(no answer)");
    }
    sqlite3_finalize(st);
    return result;
}
