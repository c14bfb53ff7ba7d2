/*
 * oltp/tpcc_load.c: the initial database population of clause 4.3.3.1.
 *
 * Two threads per database: a generator fills batches of rows (one table per batch,
 * values in a flat array, text in the batch's arena) and hands them to the calling
 * thread, which binds and inserts them with one prepared statement per table. The
 * generator runs while SQLite writes, so on two cores the load costs about the
 * larger of the two rather than their sum. Instances load in parallel because each
 * runs its own pair.
 *
 * Invariants: rows of each table are generated in primary-key order (the b-trees are
 * built by appending); each warehouse's data comes from its own random stream, so a
 * seed and a scale determine the database; the metadata row with complete = 1 is
 * written by the last transaction, after the indexes.
 */
#include "oltp/tpcc_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    T_ITEM,
    T_WAREHOUSE,
    T_STOCK,
    T_DISTRICT,
    T_CUSTOMER,
    T_HISTORY,
    T_ORDERS,
    T_ORDER_LINE,
    T_NEW_ORDER,
    T_NTABLES
};

/* Column lists in the order the generator emits values (the spec's order); stock's and
 * customer's integer keys are made from the values of their key columns. */
#define STOCK_KEY_OF_ROW TPCC_STOCK_KEY_SQL("?2", "?1")
#define CUSTOMER_KEY_OF_ROW TPCC_CUSTOMER_KEY_SQL("?3", "?2", "?1")
static const char *const insert_sql[T_NTABLES] = {
    [T_ITEM] = "INSERT INTO item (i_id, i_im_id, i_name, i_price, i_data) VALUES (?,?,?,?,?)",
    [T_WAREHOUSE] = "INSERT INTO warehouse (w_id, w_name, w_street_1, w_street_2, w_city,"
                    " w_state, w_zip, w_tax, w_ytd) VALUES (?,?,?,?,?,?,?,?,?)",
    [T_STOCK] = "INSERT INTO stock (s_key, s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02,"
                " s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09,"
                " s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data)"
                " VALUES (" STOCK_KEY_OF_ROW ", ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
                " ?12, ?13, ?14, ?15, ?16, ?17)",
    [T_DISTRICT] = "INSERT INTO district (d_id, d_w_id, d_name, d_street_1, d_street_2, d_city,"
                   " d_state, d_zip, d_tax, d_ytd, d_next_o_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    [T_CUSTOMER] = "INSERT INTO customer (c_key, c_id, c_d_id, c_w_id, c_first, c_middle,"
                   " c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since,"
                   " c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment,"
                   " c_payment_cnt, c_delivery_cnt, c_data)"
                   " VALUES (" CUSTOMER_KEY_OF_ROW ", ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,"
                   " ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
    [T_HISTORY] = "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date,"
                  " h_amount, h_data) VALUES (?,?,?,?,?,?,?,?)",
    [T_ORDERS] = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id,"
                 " o_ol_cnt, o_all_local) VALUES (?,?,?,?,?,?,?,?)",
    [T_ORDER_LINE] = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id,"
                     " ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)"
                     " VALUES (?,?,?,?,?,?,?,?,?,?)",
    [T_NEW_ORDER] = "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?,?,?)",
};
static const char *const table_name[T_NTABLES] = {"item",     "warehouse",  "stock",
                                                  "district", "customer",   "history",
                                                  "orders",   "order_line", "new_order"};
static const int ncols[T_NTABLES] = {5, 9, 17, 11, 21, 8, 8, 10, 3};

#define MAX_COLS 21
#define ROW_TEXT_MAX 704 /* the widest row's text (customer) plus terminators */
#define NBATCHES 8
#define COMMIT_EVERY_ROWS 200000

enum { V_NULL, V_INT, V_REAL, V_TEXT };
typedef struct val {
    uint8_t kind;
    uint16_t len;
    uint32_t off; /* V_TEXT: offset in the arena */
    union {
        int64_t i;
        double d;
    };
} val;

typedef struct batch {
    int table;
    int nrows;
    int cap;
    val *v; /* cap * MAX_COLS */
    char *arena;
    size_t used;
    struct batch *next;
    bool last; /* end of data */
} batch;

typedef struct queue {
    batch *head, *tail;
} queue;

typedef struct loader {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    queue free_q, full_q;
    bool stop; /* writer gave up */
    int64_t scale;
    uint64_t seed;
    int batch_rows;
    int64_t now;
    /* generator side */
    batch *cur;
    int col;
    double gen_busy;
} loader;

static void q_push(queue *q, batch *b)
{
    b->next = NULL;
    if (q->tail)
        q->tail->next = b;
    else
        q->head = b;
    q->tail = b;
}

static batch *q_pop(queue *q)
{
    batch *b = q->head;
    if (b) {
        q->head = b->next;
        if (!q->head) q->tail = NULL;
    }
    return b;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- generator side */

/* Hands the current batch over and takes an empty one. false when the writer stopped. */
static bool flush(loader *L, bool last)
{
    double t0 = mono_s();
    pthread_mutex_lock(&L->mu);
    if (last && !L->cur) {
        /* The end marker needs a batch to travel in. */
        while (!L->stop && !L->free_q.head)
            pthread_cond_wait(&L->cv, &L->mu);
        L->cur = q_pop(&L->free_q);
        if (L->cur) L->cur->nrows = 0;
    }
    if (L->cur) {
        L->cur->last = last;
        q_push(&L->full_q, L->cur);
        L->cur = NULL;
        pthread_cond_broadcast(&L->cv);
    }
    while (!last && !L->stop && !L->free_q.head)
        pthread_cond_wait(&L->cv, &L->mu);
    bool ok = !L->stop;
    if (!last && ok) L->cur = q_pop(&L->free_q);
    pthread_mutex_unlock(&L->mu);
    L->gen_busy -= mono_s() - t0; /* waiting is not generating */
    return ok;
}

static bool row_begin(loader *L, int table)
{
    if (L->cur && (L->cur->table != table || L->cur->nrows == L->cur->cap) && L->cur->nrows > 0)
        if (!flush(L, false)) return false;
    if (!L->cur && !flush(L, false)) return false;
    if (L->cur->nrows == 0) {
        L->cur->table = table;
        L->cur->used = 0;
    }
    L->col = 0;
    return true;
}

static inline val *next_val(loader *L)
{
    batch *b = L->cur;
    return &b->v[(size_t)b->nrows * MAX_COLS + (size_t)L->col++];
}

static inline void row_end(loader *L)
{
    L->cur->nrows++;
}

static inline void put_int(loader *L, int64_t i)
{
    val *v = next_val(L);
    v->kind = V_INT;
    v->i = i;
}

static inline void put_real(loader *L, double d)
{
    val *v = next_val(L);
    v->kind = V_REAL;
    v->d = d;
}

static inline void put_null(loader *L)
{
    next_val(L)->kind = V_NULL;
}

static inline void put_text(loader *L, const char *s, int len)
{
    batch *b = L->cur;
    val *v = next_val(L);
    v->kind = V_TEXT;
    v->off = (uint32_t)b->used;
    v->len = (uint16_t)len;
    memcpy(b->arena + b->used, s, (size_t)len);
    b->used += (size_t)len;
}

/* Generates text straight into the arena. */
static inline char *text_slot(loader *L, val **v)
{
    batch *b = L->cur;
    *v = next_val(L);
    (*v)->kind = V_TEXT;
    (*v)->off = (uint32_t)b->used;
    return b->arena + b->used;
}

static inline void text_done(loader *L, val *v, int len)
{
    v->len = (uint16_t)len;
    L->cur->used += (size_t)len;
}

#define PUT_GEN(L, fn, ...)                                                                        \
    do {                                                                                           \
        val *v_;                                                                                   \
        char *p_ = text_slot(L, &v_);                                                              \
        text_done(L, v_, fn(__VA_ARGS__));                                                         \
    } while (0)

static int gen_state(sim_rng *r, char *buf)
{
    buf[0] = (char)('A' + sim_rng_range(r, 0, 25));
    buf[1] = (char)('A' + sim_rng_range(r, 0, 25));
    return 2;
}

static int gen_zip(sim_rng *r, char *buf)
{
    tpcc_nstring(r, buf, 4, 4);
    memcpy(buf + 4, "11111", 5);
    return 9;
}

/* Street 1, street 2, city, state, zip (clause 4.3.3.1's address). */
static void put_address(loader *L, sim_rng *r)
{
    PUT_GEN(L, tpcc_astring, r, p_, 10, 20);
    PUT_GEN(L, tpcc_astring, r, p_, 10, 20);
    PUT_GEN(L, tpcc_astring, r, p_, 10, 20);
    PUT_GEN(L, gen_state, r, p_);
    PUT_GEN(L, gen_zip, r, p_);
}

static double rand_rate(sim_rng *r, int max_ten_thousandths)
{
    return (double)sim_rng_range(r, 0, (uint64_t)max_ten_thousandths) / 10000.0;
}

static bool gen_items(loader *L)
{
    sim_rng r;
    sim_rng_seed(&r, L->seed, 0);
    for (int i = 1; i <= TPCC_ITEMS; i++) {
        if (!row_begin(L, T_ITEM)) return false;
        put_int(L, i);
        put_int(L, (int64_t)sim_rng_range(&r, 1, 10000));
        PUT_GEN(L, tpcc_astring, &r, p_, 14, 24);
        put_int(L, (int64_t)sim_rng_range(&r, 100, 10000)); /* cents */
        PUT_GEN(L, tpcc_data_string, &r, p_, 26, 50);
        row_end(L);
    }
    return true;
}

/* The warehouse's row, in the order the generator draws its random numbers. */
static bool gen_warehouse_row(loader *L, int64_t w, sim_rng *r)
{
    if (!row_begin(L, T_WAREHOUSE)) return false;
    put_int(L, w);
    PUT_GEN(L, tpcc_astring, r, p_, 6, 10);
    put_address(L, r);
    put_real(L, rand_rate(r, 2000));
    put_int(L, 30000000); /* 300,000.00 */
    row_end(L);
    return true;
}

/* The warehouse's stock: one row per item. */
static bool gen_stock(loader *L, int64_t w, sim_rng *r)
{
    for (int i = 1; i <= TPCC_STOCK_PER_WH; i++) {
        if (!row_begin(L, T_STOCK)) return false;
        put_int(L, i);
        put_int(L, w);
        put_int(L, (int64_t)sim_rng_range(r, 10, 100));
        for (int d = 0; d < 10; d++)
            PUT_GEN(L, tpcc_astring, r, p_, 24, 24);
        put_int(L, 0);
        put_int(L, 0);
        put_int(L, 0);
        PUT_GEN(L, tpcc_data_string, r, p_, 26, 50);
        row_end(L);
    }
    return true;
}

static bool gen_districts(loader *L, int64_t w, sim_rng *r)
{
    for (int d = 1; d <= TPCC_DIST_PER_WH; d++) {
        if (!row_begin(L, T_DISTRICT)) return false;
        put_int(L, d);
        put_int(L, w);
        PUT_GEN(L, tpcc_astring, r, p_, 6, 10);
        put_address(L, r);
        put_real(L, rand_rate(r, 2000));
        put_int(L, 3000000); /* 30,000.00 */
        put_int(L, TPCC_ORD_PER_DIST + 1);
        row_end(L);
    }
    return true;
}

/* District d's customers (last names in order for the first 1000, from NURand with
 * C-Load after), then one history row each. */
static bool gen_customers(loader *L, int64_t w, int d, const tpcc_consts *cl, sim_rng *r)
{
    char last[16];
    for (int c = 1; c <= TPCC_CUST_PER_DIST; c++) {
        if (!row_begin(L, T_CUSTOMER)) return false;
        put_int(L, c);
        put_int(L, d);
        put_int(L, w);
        PUT_GEN(L, tpcc_astring, r, p_, 8, 16);
        put_text(L, "OE", 2);
        uint32_t num = c <= 1000 ? (uint32_t)(c - 1) : tpcc_nurand(r, 255, cl->c_last, 0, 999);
        int last_len = tpcc_lastname(num, last);
        put_text(L, last, last_len);
        put_address(L, r);
        PUT_GEN(L, tpcc_nstring, r, p_, 16, 16);
        put_int(L, L->now);
        put_text(L, sim_rng_range(r, 1, 100) <= 10 ? "BC" : "GC", 2);
        put_int(L, 5000000); /* 50,000.00 */
        put_real(L, rand_rate(r, 5000));
        put_int(L, -1000); /* -10.00 */
        put_int(L, 1000);  /* 10.00 */
        put_int(L, 1);
        put_int(L, 0);
        PUT_GEN(L, tpcc_astring, r, p_, 300, 500);
        row_end(L);
    }
    for (int c = 1; c <= TPCC_CUST_PER_DIST; c++) {
        if (!row_begin(L, T_HISTORY)) return false;
        put_int(L, c);
        put_int(L, d);
        put_int(L, w);
        put_int(L, d);
        put_int(L, w);
        put_int(L, L->now);
        put_int(L, 1000);
        PUT_GEN(L, tpcc_astring, r, p_, 12, 24);
        row_end(L);
    }
    return true;
}

/* District d's orders (customers in a random permutation), their lines, and a new-order
 * row for each order from TPCC_NEW_ORD_START on (the undelivered ones). */
static bool gen_orders(loader *L, int64_t w, int d, sim_rng *r)
{
    static __thread uint16_t perm[TPCC_ORD_PER_DIST];
    static __thread uint8_t olcnt[TPCC_ORD_PER_DIST + 1];
    for (int i = 0; i < TPCC_ORD_PER_DIST; i++)
        perm[i] = (uint16_t)(i + 1);
    for (int i = TPCC_ORD_PER_DIST - 1; i > 0; i--) {
        int j = (int)sim_rng_range(r, 0, (uint64_t)i);
        uint16_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int o = 1; o <= TPCC_ORD_PER_DIST; o++) {
        if (!row_begin(L, T_ORDERS)) return false;
        olcnt[o] = (uint8_t)sim_rng_range(r, TPCC_MIN_ORDER_LINES, TPCC_MAX_ORDER_LINES);
        put_int(L, o);
        put_int(L, d);
        put_int(L, w);
        put_int(L, perm[o - 1]);
        put_int(L, L->now);
        if (o < TPCC_NEW_ORD_START)
            put_int(L, (int64_t)sim_rng_range(r, 1, 10));
        else
            put_null(L);
        put_int(L, olcnt[o]);
        put_int(L, 1);
        row_end(L);
    }
    for (int o = 1; o <= TPCC_ORD_PER_DIST; o++) {
        for (int n = 1; n <= olcnt[o]; n++) {
            if (!row_begin(L, T_ORDER_LINE)) return false;
            put_int(L, o);
            put_int(L, d);
            put_int(L, w);
            put_int(L, n);
            put_int(L, (int64_t)sim_rng_range(r, 1, TPCC_ITEMS));
            put_int(L, w);
            if (o < TPCC_NEW_ORD_START) {
                put_int(L, L->now);
                put_int(L, 5);
                put_int(L, 0);
            } else {
                put_null(L);
                put_int(L, 5);
                put_int(L, (int64_t)sim_rng_range(r, 1, 999999));
            }
            PUT_GEN(L, tpcc_astring, r, p_, 24, 24);
            row_end(L);
        }
    }
    for (int o = TPCC_NEW_ORD_START; o <= TPCC_ORD_PER_DIST; o++) {
        if (!row_begin(L, T_NEW_ORDER)) return false;
        put_int(L, o);
        put_int(L, d);
        put_int(L, w);
        row_end(L);
    }
    return true;
}

static bool gen_warehouse(loader *L, int64_t w, const tpcc_consts *cl)
{
    sim_rng r;
    sim_rng_seed(&r, L->seed, (uint64_t)w);
    if (!gen_warehouse_row(L, w, &r) || !gen_stock(L, w, &r) || !gen_districts(L, w, &r))
        return false;
    for (int d = 1; d <= TPCC_DIST_PER_WH; d++)
        if (!gen_customers(L, w, d, cl, &r)) return false;
    for (int d = 1; d <= TPCC_DIST_PER_WH; d++)
        if (!gen_orders(L, w, d, &r)) return false;
    return true;
}

typedef struct gen_args {
    loader *L;
    tpcc_consts c_load;
} gen_args;

static void *generator(void *arg)
{
    gen_args *g = arg;
    loader *L = g->L;
    double t0 = mono_s();
    bool ok = gen_items(L);
    for (int64_t w = 1; ok && w <= L->scale; w++)
        ok = gen_warehouse(L, w, &g->c_load);
    L->gen_busy += mono_s() - t0;
    if (ok) flush(L, true);
    return NULL;
}

/* ---------------------------------------------------------------- writer side */

static int insert_batch(sqlite3 *db, sqlite3_stmt *st, const batch *b, char *err, size_t errlen)
{
    int nc = ncols[b->table];
    for (int r = 0; r < b->nrows; r++) {
        const val *v = &b->v[(size_t)r * MAX_COLS];
        for (int c = 0; c < nc; c++) {
            switch (v[c].kind) {
            case V_NULL:
                sqlite3_bind_null(st, c + 1);
                break;
            case V_INT:
                sqlite3_bind_int64(st, c + 1, v[c].i);
                break;
            case V_REAL:
                sqlite3_bind_double(st, c + 1, v[c].d);
                break;
            default:
                sqlite3_bind_text(st, c + 1, b->arena + v[c].off, v[c].len, SQLITE_STATIC);
                break;
            }
        }
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) {
            snprintf(err, errlen, "inserting into %s: %s", table_name[b->table],
                     sqlite3_errmsg(db));
            return SIM_ERR;
        }
    }
    return SIM_OK;
}

/* The batches the generator fills and the writer empties, all on the free queue. */
static int alloc_batches(loader *L, batch *bs, char *err, size_t errlen)
{
    for (int i = 0; i < NBATCHES; i++) {
        bs[i] = (batch){.cap = L->batch_rows};
        bs[i].v = sim_xmalloc(sizeof(val) * (size_t)L->batch_rows * MAX_COLS);
        bs[i].arena = sim_xmalloc((size_t)L->batch_rows * ROW_TEXT_MAX);
        q_push(&L->free_q, &bs[i]);
    }
    return SIM_OK;
}

/* The writer's side of the queue: the next full batch (waiting for the generator). */
static batch *take_full(loader *L, tpcc_load_stats *st)
{
    double tw = mono_s();
    pthread_mutex_lock(&L->mu);
    while (!L->full_q.head)
        pthread_cond_wait(&L->cv, &L->mu);
    batch *b = q_pop(&L->full_q);
    pthread_mutex_unlock(&L->mu);
    st->writer_wait_seconds += mono_s() - tw;
    return b;
}

static void give_back(loader *L, batch *b)
{
    b->nrows = 0;
    b->last = false;
    pthread_mutex_lock(&L->mu);
    q_push(&L->free_q, b);
    pthread_cond_broadcast(&L->cv);
    pthread_mutex_unlock(&L->mu);
}

/* Inserts the generator's batches until its last, committing every COMMIT_EVERY_ROWS
 * rows (a transaction is open on entry and on return) with the shared progress line
 * (warehouses done of the scale, rows per second, ETA). */
static int write_batches(sqlite3 *db, loader *L, sqlite3_stmt *const *ins, const tpcc_load_opts *o,
                         tpcc_load_stats *st, double t0, char *err, size_t errlen)
{
    uint64_t since_commit = 0;
    int64_t wh_done = 0;
    char what[128];
    snprintf(what, sizeof what, "tpcc: %s%sloading", o->label ? o->label : "",
             o->label ? ": " : "");
    sim_progress prog;
    sim_progress_start(&prog, what, (uint64_t)o->scale, o->quiet);
    for (;;) {
        if (sim_interrupted()) {
            snprintf(err, errlen, "load interrupted");
            return SIM_ERR;
        }
        batch *b = take_full(L, st);
        bool last = b->last;
        int table = b->table;
        if (b->nrows > 0) {
            if (insert_batch(db, ins[b->table], b, err, errlen)) return SIM_ERR;
            st->rows += (uint64_t)b->nrows;
            since_commit += (uint64_t)b->nrows;
        }
        give_back(L, b);
        if (last) {
            sim_progress_clear(&prog);
            return SIM_OK;
        }
        if (table == T_WAREHOUSE)
            wh_done++; /* counts warehouses started; progress is approximate by one */
        if (since_commit >= COMMIT_EVERY_ROWS) {
            if (tpcc_exec(db, "COMMIT; BEGIN", err, errlen)) return SIM_ERR;
            since_commit = 0;
            uint64_t now = sim_now_ns();
            if (sim_progress_due(&prog, now) && wh_done > 1) {
                /* wh_done counts warehouses started: the one under way is not done */
                char detail[128];
                snprintf(detail, sizeof detail, "%lld of %lld warehouses, %.0f rows/s",
                         (long long)wh_done - 1, (long long)o->scale,
                         (double)st->rows / (mono_s() - t0));
                sim_progress_line(&prog, now, (uint64_t)wh_done - 1, detail, false);
            }
        }
    }
}

/* After the rows: the indexes, and the metadata row that marks the load (complete
 * unless the caller completes it later). */
static int finish_load(sqlite3 *db, const tpcc_load_opts *o, const tpcc_consts *c_load, int64_t now,
                       char *err, size_t errlen)
{
    if (tpcc_exec(db, "COMMIT", err, errlen)) return SIM_ERR;
    if (tpcc_exec(db, "BEGIN", err, errlen) || tpcc_schema_indexes(db, err, errlen)) return SIM_ERR;
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO appsim_tpcc VALUES (1, %d, %lld, %lld, %u, %u, %u, %d, 1, %lld);"
             "COMMIT",
             TPCC_FORMAT, (long long)o->scale, (long long)o->seed, c_load->c_last, c_load->c_id,
             c_load->ol_i_id, o->defer_complete ? 0 : 1, (long long)now);
    return tpcc_exec(db, sql, err, errlen);
}

static void stop_generator(loader *L, pthread_t gen)
{
    pthread_mutex_lock(&L->mu);
    L->stop = true;
    pthread_cond_broadcast(&L->cv);
    pthread_mutex_unlock(&L->mu);
    pthread_join(gen, NULL);
}

int tpcc_load(sqlite3 *db, const tpcc_load_opts *o, tpcc_load_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    double t0 = mono_s();
    loader L = {.scale = o->scale,
                .seed = o->seed,
                .batch_rows = o->batch_rows > 0 ? o->batch_rows : 1000,
                .now = tpcc_now_unix()};
    pthread_mutex_init(&L.mu, NULL);
    pthread_cond_init(&L.cv, NULL);
    batch bs[NBATCHES];
    if (alloc_batches(&L, bs, err, errlen)) return SIM_ERR;
    sqlite3_stmt *ins[T_NTABLES] = {0};
    int rc = SIM_ERR;
    bool gen_started = false;
    pthread_t gen;
    gen_args ga = {.L = &L};
    sim_rng crng;
    sim_rng_seed(&crng, o->seed, UINT64_C(1) << 40);
    tpcc_consts_load(&ga.c_load, &crng);

    if (tpcc_schema_create(db, err, errlen)) goto out;
    for (int t = 0; t < T_NTABLES; t++)
        if (sqlite3_prepare_v2(db, insert_sql[t], -1, &ins[t], NULL) != SQLITE_OK) {
            snprintf(err, errlen, "%s", sqlite3_errmsg(db));
            goto out;
        }
    if (pthread_create(&gen, NULL, generator, &ga)) {
        snprintf(err, errlen, "cannot start the generator thread");
        goto out;
    }
    gen_started = true;
    if (tpcc_exec(db, "BEGIN", err, errlen)) goto out;
    if (write_batches(db, &L, ins, o, st, t0, err, errlen)) goto out;
    rc = finish_load(db, o, &ga.c_load, L.now, err, errlen);
out:
    if (rc) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    if (gen_started) stop_generator(&L, gen);
    for (int t = 0; t < T_NTABLES; t++)
        sqlite3_finalize(ins[t]);
    for (int i = 0; i < NBATCHES; i++) {
        free(bs[i].v);
        free(bs[i].arena);
    }
    pthread_mutex_destroy(&L.mu);
    pthread_cond_destroy(&L.cv);
    st->seconds = mono_s() - t0;
    st->gen_busy_seconds = L.gen_busy;
    return rc;
}
