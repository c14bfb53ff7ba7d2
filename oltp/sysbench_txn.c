/*
 * oltp/sysbench_txn.c: one sysbench event (transaction) of each oltp_* workload, the
 * same for every engine.
 *
 * The statement order, the table drawn per statement group and the ids follow
 * sysbench's oltp_common.lua and oltp_<workload>.lua: each group (point selects, each
 * range kind, index updates, non-index updates, delete/inserts) draws its table
 * uniformly once, then its ids with --rand-type (the three write groups draw their
 * tables together before the first write). Range ends are id + range_size - 1.
 *
 * Transactions: the selects of an event run in one read snapshot and its writes in one
 * write transaction, committed at the end. That is what InnoDB's REPEATABLE READ gives
 * sysbench (consistent reads from a snapshot, writes to the latest rows), and it lets
 * both engines run the reads of many threads concurrently (SQLite and LMDB admit one
 * writer at a time). BEGIN and COMMIT count as two "other" queries per event, as in
 * sysbench, for the workloads that issue them. With skip_trx every statement is its
 * own transaction and no "other" queries are counted.
 */
#include "oltp/oltp.h"

#include <string.h>

static const char *const wl_names[SB_WL_COUNT] = {
    [SB_WL_READ_WRITE] = "oltp_read_write",
    [SB_WL_READ_ONLY] = "oltp_read_only",
    [SB_WL_WRITE_ONLY] = "oltp_write_only",
    [SB_WL_POINT_SELECT] = "oltp_point_select",
    [SB_WL_UPDATE_INDEX] = "oltp_update_index",
    [SB_WL_UPDATE_NON_INDEX] = "oltp_update_non_index",
    [SB_WL_INSERT] = "oltp_insert",
    [SB_WL_DELETE] = "oltp_delete",
};

const char *sb_workload_name(sb_workload w)
{
    return (unsigned)w < SB_WL_COUNT ? wl_names[w] : "?";
}

int sb_workload_parse(const char *name, sb_workload *w)
{
    for (int i = 0; i < SB_WL_COUNT; i++) {
        /* Accept the name with or without sysbench's "oltp_" prefix. */
        if (!strcmp(name, wl_names[i]) || !strcmp(name, wl_names[i] + 5)) {
            *w = (sb_workload)i;
            return SIM_OK;
        }
    }
    return SIM_ERR;
}

/* Which statement groups an event of each workload issues. */
typedef struct wl_shape {
    bool reads, writes, trx;
} wl_shape;

static wl_shape shape_of(sb_workload w, const sb_mix *m)
{
    wl_shape s = {0};
    switch (w) {
    case SB_WL_READ_WRITE:
        s = (wl_shape){true, true, !m->skip_trx};
        break;
    case SB_WL_READ_ONLY:
        s = (wl_shape){true, false, !m->skip_trx};
        break;
    case SB_WL_WRITE_ONLY:
        s = (wl_shape){false, true, !m->skip_trx};
        break;
    default:
        break;
    }
    return s;
}

static uint64_t range_reads(const sb_mix *m)
{
    return m->range_selects
               ? (uint64_t)m->simple_ranges + m->sum_ranges + m->order_ranges + m->distinct_ranges
               : 0;
}

sb_counts sb_expected_counts(sb_workload w, const sb_mix *m)
{
    sb_counts c = {0};
    wl_shape s = shape_of(w, m);
    switch (w) {
    case SB_WL_POINT_SELECT:
        c.reads = 1;
        break; /* oltp_point_select forces 1 */
    case SB_WL_UPDATE_INDEX:
        c.writes = m->index_updates;
        break;
    case SB_WL_UPDATE_NON_INDEX:
        c.writes = m->non_index_updates;
        break;
    case SB_WL_INSERT:
        c.writes = 1;
        break;
    case SB_WL_DELETE:
        c.writes = 1;
        break;
    default:
        if (s.reads) c.reads = m->point_selects + range_reads(m);
        if (s.writes)
            c.writes = (uint64_t)m->index_updates + m->non_index_updates + 2ull * m->delete_inserts;
        if (s.trx) c.other = 2;
        break;
    }
    return c;
}

/* State of one attempt: which engine transaction is open. */
typedef struct attempt {
    const sb_event_cfg *cfg;
    void *conn;
    sim_rng *rng;
    sb_counts n; /* statements of this attempt */
    int open;    /* 0 none, 1 read, 2 write */
    bool autocommit;
} attempt;

static uint32_t draw_table(attempt *a)
{
    return (uint32_t)sim_rng_range(a->rng, 1, a->cfg->tables);
}

static uint64_t draw_id(attempt *a)
{
    return sb_dist_next(&a->cfg->dist, a->rng, 1, a->cfg->table_size);
}

/* Opens the transaction kind a statement needs (once per event unless autocommit). */
static int need(attempt *a, int kind)
{
    const sb_engine_ops *e = a->cfg->engine;
    if (a->open == kind) return SB_OK;
    if (a->open) {
        int rc = e->commit(a->conn);
        a->open = 0;
        if (rc != SB_OK) return rc;
    }
    int rc = e->begin(a->conn, kind == 2);
    if (rc == SB_OK) a->open = kind;
    return rc;
}

static int done_stmt(attempt *a, int rc)
{
    if (rc != SB_OK || !a->autocommit || !a->open) return rc;
    rc = a->cfg->engine->commit(a->conn);
    a->open = 0;
    return rc;
}

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != SB_OK) return rc_;                                                              \
    } while (0)

static int do_point_selects(attempt *a, uint32_t count)
{
    const sb_engine_ops *e = a->cfg->engine;
    uint32_t t = draw_table(a);
    for (uint32_t i = 0; i < count; i++) {
        sb_result r = {0};
        TRY(need(a, 1));
        TRY(done_stmt(a, e->point_select(a->conn, t, draw_id(a), &r)));
        a->n.reads++;
    }
    return SB_OK;
}

static int do_ranges(attempt *a, sb_range_kind kind, uint32_t count)
{
    const sb_engine_ops *e = a->cfg->engine;
    uint32_t t = draw_table(a);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t lo = draw_id(a);
        sb_result r = {0};
        TRY(need(a, 1));
        TRY(done_stmt(a, e->range(a->conn, t, kind, lo, lo + a->cfg->mix.range_size - 1, &r)));
        a->n.reads++;
    }
    return SB_OK;
}

static int do_reads(attempt *a)
{
    const sb_mix *m = &a->cfg->mix;
    TRY(do_point_selects(a, m->point_selects));
    if (!m->range_selects) return SB_OK;
    TRY(do_ranges(a, SB_RANGE_SIMPLE, m->simple_ranges));
    TRY(do_ranges(a, SB_RANGE_SUM, m->sum_ranges));
    TRY(do_ranges(a, SB_RANGE_ORDER, m->order_ranges));
    return do_ranges(a, SB_RANGE_DISTINCT, m->distinct_ranges);
}

static int do_index_updates(attempt *a, uint32_t t, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        sb_result r = {0};
        TRY(need(a, 2));
        TRY(done_stmt(a, a->cfg->engine->update_index(a->conn, t, draw_id(a), &r)));
        a->n.writes++;
    }
    return SB_OK;
}

static int do_non_index_updates(attempt *a, uint32_t t, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        char c[SB_C_LEN + 1];
        sb_gen_c(a->rng, c);
        c[SB_C_LEN] = '\0';
        uint64_t id = draw_id(a);
        sb_result r = {0};
        TRY(need(a, 2));
        TRY(done_stmt(a, a->cfg->engine->update_non_index(a->conn, t, id, c, &r)));
        a->n.writes++;
    }
    return SB_OK;
}

static int do_delete_inserts(attempt *a, uint32_t t, uint32_t count)
{
    const sb_engine_ops *e = a->cfg->engine;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t id = draw_id(a);
        uint64_t k = draw_id(a);
        char c[SB_C_LEN + 1], pad[SB_PAD_LEN + 1];
        sb_gen_c(a->rng, c);
        sb_gen_pad(a->rng, pad);
        c[SB_C_LEN] = pad[SB_PAD_LEN] = '\0';
        sb_result r = {0};
        TRY(need(a, 2));
        TRY(done_stmt(a, e->delete_row(a->conn, t, id, &r)));
        a->n.writes++;
        TRY(need(a, 2));
        TRY(done_stmt(a, e->insert_row(a->conn, t, id, k, c, pad, &r)));
        a->n.writes++;
    }
    return SB_OK;
}

/* The rows the write groups are going to change, drawn from a copy of the stream in
 * the order the statements below draw them (ids, then c, pad and k as they come), so
 * that the statements then draw the same values. At most max; returns how many. */
static int preview_writes(const attempt *a, const uint32_t t[3], const uint32_t counts[3],
                          sb_write *w, int max)
{
    sim_rng copy = *a->rng;
    attempt p = *a;
    p.rng = &copy;
    char c[SB_C_LEN], pad[SB_PAD_LEN];
    int n = 0;
    for (uint32_t i = 0; i < counts[0] && n < max; i++)
        w[n++] = (sb_write){.table = t[0], .kind = SB_W_UPDATE_K, .id = draw_id(&p)};
    for (uint32_t i = 0; i < counts[1] && n < max; i++) {
        sb_gen_c(&copy, c);
        w[n++] = (sb_write){.table = t[1], .kind = SB_W_UPDATE_C, .id = draw_id(&p)};
    }
    for (uint32_t i = 0; i < counts[2] && n < max; i++) {
        uint64_t id = draw_id(&p);
        uint64_t k = draw_id(&p);
        sb_gen_c(&copy, c);
        sb_gen_pad(&copy, pad);
        w[n++] = (sb_write){.table = t[2], .kind = SB_W_DELETE_INSERT, .id = id, .k_new = k};
    }
    return n;
}

/* The engine reads the pages of the writes ahead, before their transaction queues for
 * writer locks (docs/sysbench.md, "Prefetch and group commit"). */
static void prefetch_writes(attempt *a, const uint32_t t[3], const uint32_t counts[3])
{
    const sb_engine_ops *e = a->cfg->engine;
    if (!a->cfg->prefetch || !e->prefetch_writes || a->autocommit || a->open == 2) return;
    sb_write w[SB_PREFETCH_MAX];
    int n = preview_writes(a, t, counts, w, SB_PREFETCH_MAX);
    if (n) e->prefetch_writes(a->conn, w, n);
}

/* The three write groups draw their tables first, so that an engine with a writer
 * per table can take the ones it needs at begin, in one order (plan_writes). */
static int do_writes(attempt *a)
{
    const sb_mix *m = &a->cfg->mix;
    uint32_t t[3];
    for (int i = 0; i < 3; i++) /* in order: initializers are not sequenced */
        t[i] = draw_table(a);
    uint32_t counts[3] = {m->index_updates, m->non_index_updates, m->delete_inserts};
    uint32_t planned[3];
    int n = 0;
    for (int i = 0; i < 3; i++)
        if (counts[i]) planned[n++] = t[i];
    prefetch_writes(a, t, counts);
    if (a->cfg->engine->plan_writes && !a->autocommit && a->open != 2)
        a->cfg->engine->plan_writes(a->conn, planned, n);
    TRY(do_index_updates(a, t[0], counts[0]));
    TRY(do_non_index_updates(a, t[1], counts[1]));
    return do_delete_inserts(a, t[2], counts[2]);
}

static int do_insert(attempt *a)
{
    uint32_t t = draw_table(a);
    uint64_t k = draw_id(a);
    char c[SB_C_LEN + 1], pad[SB_PAD_LEN + 1];
    sb_gen_c(a->rng, c);
    sb_gen_pad(a->rng, pad);
    c[SB_C_LEN] = pad[SB_PAD_LEN] = '\0';
    sb_result r = {0};
    TRY(need(a, 2));
    TRY(done_stmt(a, a->cfg->engine->insert_row(a->conn, t, 0, k, c, pad, &r)));
    a->n.writes++;
    return SB_OK;
}

static int do_delete(attempt *a)
{
    uint32_t t = draw_table(a);
    sb_result r = {0};
    TRY(need(a, 2));
    TRY(done_stmt(a, a->cfg->engine->delete_row(a->conn, t, draw_id(a), &r)));
    a->n.writes++;
    return SB_OK;
}

static int run_attempt(attempt *a)
{
    const sb_event_cfg *cfg = a->cfg;
    wl_shape s = shape_of(cfg->workload, &cfg->mix);
    /* Workloads without BEGIN/COMMIT autocommit every statement, as sysbench does. */
    a->autocommit = !s.trx;
    switch (cfg->workload) {
    case SB_WL_POINT_SELECT:
        TRY(do_point_selects(a, 1));
        break;
    case SB_WL_UPDATE_INDEX:
        TRY(do_index_updates(a, draw_table(a), cfg->mix.index_updates));
        break;
    case SB_WL_UPDATE_NON_INDEX:
        TRY(do_non_index_updates(a, draw_table(a), cfg->mix.non_index_updates));
        break;
    case SB_WL_INSERT:
        TRY(do_insert(a));
        break;
    case SB_WL_DELETE:
        TRY(do_delete(a));
        break;
    default:
        if (s.reads) TRY(do_reads(a));
        if (s.writes) TRY(do_writes(a));
        break;
    }
    if (a->open) {
        int rc = cfg->engine->commit(a->conn);
        a->open = 0;
        TRY(rc);
    }
    if (s.trx) a->n.other += 2;
    return SB_OK;
}

int sb_event(const sb_event_cfg *cfg, void *conn, sim_rng *rng, sb_counts *c, char *err,
             size_t errlen)
{
    for (uint32_t tries = 0;; tries++) {
        attempt a = {.cfg = cfg, .conn = conn, .rng = rng};
        int rc = run_attempt(&a);
        if (rc != SB_OK && a.open) cfg->engine->rollback(conn);
        /* Statements of a failed attempt still ran on the database: sysbench counts
         * them too (its counters are bumped per executed query). */
        c->reads += a.n.reads;
        c->writes += a.n.writes;
        c->other += a.n.other;
        if (rc == SB_OK) return SB_OK;
        if (rc == SB_RETRY && tries < cfg->max_retries) {
            c->retries++;
            continue;
        }
        const char *why = cfg->engine->conn_error(conn);
        snprintf(err, errlen, "%s%s", rc == SB_RETRY ? "gave up after retries: " : "",
                 why && *why ? why : "engine error");
        return SB_FAIL;
    }
}
