/*
 * The sysbench event logic against a recording mock engine: for every workload the
 * statements per event match sysbench's mix (and sb_expected_counts), every count
 * option is honoured, statements only run inside the right kind of transaction, every
 * transaction is closed, retries re-run the event and are counted, failures roll back.
 */
#include "oltp/oltp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

typedef struct mock {
    int open; /* 0 none, 1 read, 2 write */
    unsigned begins_r, begins_w, commits, rollbacks;
    unsigned point, ranges[4], upd_idx, upd_nonidx, del, ins, ins_auto;
    unsigned range_len_bad, outside, wrong_kind;
    uint64_t max_id;
    uint32_t max_table;
    int retry_next; /* make the n-th write statement return SB_RETRY */
    int fail_next;  /* make the n-th write statement return SB_FAIL */
    bool retry_always;
    unsigned writes_seen;
    uint32_t range_size;
    /* prefetch_writes: the writes announced, and how the statements matched them */
    sb_write pf[SB_PREFETCH_MAX];
    int pf_n, pf_at;
    unsigned pf_calls, pf_mismatch, pf_in_write;
} mock;

static mock M;

static int mk_begin(void *c, bool w)
{
    if (M.open) M.outside++; /* nested begin */
    M.open = w ? 2 : 1;
    w ? M.begins_w++ : M.begins_r++;
    return SB_OK;
}
static int mk_commit(void *c)
{
    if (!M.open) M.outside++;
    M.open = 0;
    M.commits++;
    return SB_OK;
}
static void mk_rollback(void *c)
{
    M.open = 0;
    M.rollbacks++;
}
static const char *mk_err(void *c)
{
    return "mock failure";
}
static void note(uint32_t t, uint64_t id, int kind)
{
    if (M.open != kind) kind == 1 && M.open == 2 ? (void)0 : (void)M.wrong_kind++;
    if (!M.open) M.outside++;
    if (t > M.max_table) M.max_table = t;
    if (id > M.max_id) M.max_id = id;
}
/* A write statement against the next announced write (advance: it is the write's last
 * statement). Nothing to match until prefetch_writes was called. */
static void match_pf(uint32_t t, uint64_t id, sb_write_kind kind, uint64_t k, bool advance)
{
    if (!M.pf_calls) return;
    const sb_write *w = M.pf_at < M.pf_n ? &M.pf[M.pf_at] : NULL;
    if (!w || w->table != t || w->id != id || w->kind != kind ||
        (kind == SB_W_DELETE_INSERT && advance && w->k_new != k))
        M.pf_mismatch++;
    if (advance) M.pf_at++;
}
static void mk_prefetch(void *c, const sb_write *w, int n)
{
    if (M.open == 2) M.pf_in_write++;
    if (M.pf_calls && M.pf_at != M.pf_n) M.pf_mismatch++; /* the last set not all written */
    memcpy(M.pf, w, (size_t)n * sizeof *w);
    M.pf_n = n;
    M.pf_at = 0;
    M.pf_calls++;
}

static int write_status(void)
{
    M.writes_seen++;
    if (M.retry_always) return SB_RETRY;
    if (M.retry_next && (int)M.writes_seen == M.retry_next) return SB_RETRY;
    if (M.fail_next && (int)M.writes_seen == M.fail_next) return SB_FAIL;
    return SB_OK;
}
static int mk_point(void *c, uint32_t t, uint64_t id, sb_result *r)
{
    note(t, id, 1);
    M.point++;
    return SB_OK;
}
static int mk_range(void *c, uint32_t t, sb_range_kind k, uint64_t lo, uint64_t hi, sb_result *r)
{
    note(t, lo, 1);
    if (hi - lo + 1 != M.range_size) M.range_len_bad++;
    M.ranges[k]++;
    return SB_OK;
}
static int mk_upd_idx(void *c, uint32_t t, uint64_t id, sb_result *r)
{
    note(t, id, 2);
    match_pf(t, id, SB_W_UPDATE_K, 0, true);
    M.upd_idx++;
    return write_status();
}
static int mk_upd_nonidx(void *c, uint32_t t, uint64_t id, const char *cv, sb_result *r)
{
    note(t, id, 2);
    assert_int_equal(strlen(cv), SB_C_LEN);
    match_pf(t, id, SB_W_UPDATE_C, 0, true);
    M.upd_nonidx++;
    return write_status();
}
static int mk_del(void *c, uint32_t t, uint64_t id, sb_result *r)
{
    note(t, id, 2);
    match_pf(t, id, SB_W_DELETE_INSERT, 0, false);
    M.del++;
    return write_status();
}
static int mk_ins(void *c, uint32_t t, uint64_t id, uint64_t k, const char *cv, const char *pad,
                  sb_result *r)
{
    note(t, id, 2);
    assert_int_equal(strlen(pad), SB_PAD_LEN);
    if (id) match_pf(t, id, SB_W_DELETE_INSERT, k, true);
    id ? M.ins++ : M.ins_auto++;
    return write_status();
}

static const sb_engine_ops mock_ops = {
    .name = "mock",
    .conn_error = mk_err,
    .begin = mk_begin,
    .commit = mk_commit,
    .rollback = mk_rollback,
    .prefetch_writes = mk_prefetch, /* called only when a test turns prefetch on */
    .point_select = mk_point,
    .range = mk_range,
    .update_index = mk_upd_idx,
    .update_non_index = mk_upd_nonidx,
    .delete_row = mk_del,
    .insert_row = mk_ins,
};

static sb_event_cfg cfg_for(sb_workload w)
{
    sb_event_cfg c = {
        .engine = &mock_ops, .workload = w, .tables = 3, .table_size = 1000, .max_retries = 5};
    c.mix = (sb_mix){10, 1, 1, 1, 1, 1, 1, 1, 100, true, false};
    char err[128];
    assert_int_equal(sb_dist_init(&c.dist, "uniform", 12, 1, 75, 0.2, 0.8, err, sizeof err), 0);
    return c;
}

static void run_events(const sb_event_cfg *c, int n, sb_counts *out)
{
    memset(&M, 0, sizeof M);
    M.range_size = c->mix.range_size;
    sim_rng rng;
    sim_rng_seed(&rng, 42, 0);
    char err[256];
    for (int i = 0; i < n; i++)
        assert_int_equal(sb_event(c, NULL, &rng, out, err, sizeof err), SB_OK);
    assert_int_equal(M.open, 0);
    assert_int_equal(M.outside, 0);
    assert_int_equal(M.wrong_kind, 0);
    assert_int_equal(M.range_len_bad, 0);
    assert_true(M.max_table <= c->tables && M.max_id <= c->table_size);
}

static void test_read_write_mix(void **state)
{
    sb_event_cfg c = cfg_for(SB_WL_READ_WRITE);
    sb_counts n = {0};
    run_events(&c, 100, &n);
    assert_int_equal(M.point, 1000);
    for (int k = 0; k < 4; k++)
        assert_int_equal(M.ranges[k], 100);
    assert_int_equal(M.upd_idx, 100);
    assert_int_equal(M.upd_nonidx, 100);
    assert_int_equal(M.del, 100);
    assert_int_equal(M.ins, 100);
    assert_int_equal(M.ins_auto, 0);
    /* one read snapshot then one write transaction per event */
    assert_int_equal(M.begins_r, 100);
    assert_int_equal(M.begins_w, 100);
    assert_int_equal(n.reads, 1400);
    assert_int_equal(n.writes, 400);
    assert_int_equal(n.other, 200);
    assert_int_equal(n.retries, 0);
    sb_counts e = sb_expected_counts(SB_WL_READ_WRITE, &c.mix);
    assert_int_equal(e.reads, 14);
    assert_int_equal(e.writes, 4);
    assert_int_equal(e.other, 2);
}

static void test_every_workload_matches_expected(void **state)
{
    for (int w = 0; w < SB_WL_COUNT; w++) {
        sb_event_cfg c = cfg_for((sb_workload)w);
        /* Unusual counts so that each option's effect is visible. */
        c.mix = (sb_mix){3, 2, 4, 1, 5, 2, 3, 2, 7, true, false};
        sb_counts n = {0};
        run_events(&c, 50, &n);
        sb_counts e = sb_expected_counts((sb_workload)w, &c.mix);
        assert_int_equal(n.reads, e.reads * 50);
        assert_int_equal(n.writes, e.writes * 50);
        assert_int_equal(n.other, e.other * 50);
        assert_true(e.reads + e.writes > 0);
        switch (w) {
        case SB_WL_POINT_SELECT:
            assert_int_equal(e.reads, 1);
            assert_int_equal(M.point, 50);
            break;
        case SB_WL_READ_ONLY:
            assert_int_equal(e.reads, 3 + 2 + 4 + 1 + 5);
            assert_int_equal(M.ranges[SB_RANGE_DISTINCT], 250);
            assert_int_equal(M.begins_w, 0);
            break;
        case SB_WL_WRITE_ONLY:
            assert_int_equal(e.writes, 2 + 3 + 4);
            assert_int_equal(M.begins_r, 0);
            break;
        case SB_WL_UPDATE_INDEX:
            assert_int_equal(M.upd_idx, 100);
            assert_int_equal(e.other, 0);
            break;
        case SB_WL_UPDATE_NON_INDEX:
            assert_int_equal(M.upd_nonidx, 150);
            break;
        case SB_WL_INSERT:
            assert_int_equal(M.ins_auto, 50);
            assert_int_equal(M.ins, 0);
            break;
        case SB_WL_DELETE:
            assert_int_equal(M.del, 50);
            assert_int_equal(M.ins, 0);
            break;
        default:
            break;
        }
    }
}

static void test_range_selects_off_and_skip_trx(void **state)
{
    sb_event_cfg c = cfg_for(SB_WL_READ_WRITE);
    c.mix.range_selects = false;
    c.mix.skip_trx = true;
    sb_counts n = {0};
    run_events(&c, 10, &n);
    for (int k = 0; k < 4; k++)
        assert_int_equal(M.ranges[k], 0);
    assert_int_equal(n.reads, 100);
    assert_int_equal(n.other, 0);
    /* autocommit: one transaction per statement */
    assert_int_equal(M.commits, 10 * (10 + 4));
    sb_counts e = sb_expected_counts(SB_WL_READ_WRITE, &c.mix);
    assert_int_equal(e.reads, 10);
    assert_int_equal(e.other, 0);
}

static void test_retry_and_failure(void **state)
{
    sb_event_cfg c = cfg_for(SB_WL_WRITE_ONLY);
    sb_counts n = {0};
    memset(&M, 0, sizeof M);
    M.range_size = 100;
    M.retry_next = 2; /* the non-index update of the first attempt */
    sim_rng rng;
    sim_rng_seed(&rng, 1, 0);
    char err[256];
    assert_int_equal(sb_event(&c, NULL, &rng, &n, err, sizeof err), SB_OK);
    assert_int_equal(n.retries, 1);
    assert_int_equal(M.rollbacks, 1);
    assert_int_equal(M.open, 0);
    /* first attempt ran 1 write before the conflict, the retry all 4 */
    assert_int_equal(n.writes, 1 + 4);
    assert_int_equal(n.other, 2);

    sb_counts f = {0};
    memset(&M, 0, sizeof M);
    M.range_size = 100;
    M.fail_next = 1;
    assert_int_equal(sb_event(&c, NULL, &rng, &f, err, sizeof err), SB_FAIL);
    assert_string_equal(err, "mock failure");
    assert_int_equal(M.rollbacks, 1);
    assert_int_equal(M.open, 0);
    assert_int_equal(f.retries, 0);

    /* retries exhausted: every attempt conflicts */
    c.max_retries = 2;
    sb_counts g = {0};
    memset(&M, 0, sizeof M);
    M.range_size = 100;
    M.retry_always = true;
    assert_int_equal(sb_event(&c, NULL, &rng, &g, err, sizeof err), SB_FAIL);
    assert_non_null(strstr(err, "gave up after retries"));
    assert_int_equal(g.retries, 2);
    assert_int_equal(M.rollbacks, 3);
    assert_int_equal(M.open, 0);
}

/* The writes announced ahead are exactly the ones the statements then make (same
 * tables, ids and new k: drawn from the same stream), announced outside any write
 * transaction, once per event; not at all when off or without transactions. */
static void test_prefetch_announces_the_writes(void **state)
{
    sb_workload wls[] = {SB_WL_READ_WRITE, SB_WL_WRITE_ONLY};
    for (size_t i = 0; i < 2; i++) {
        sb_event_cfg c = cfg_for(wls[i]);
        c.engine = &mock_ops;
        c.prefetch = true;
        c.mix = (sb_mix){3, 1, 1, 1, 1, 2, 3, 2, 10, true, false};
        sb_counts n = {0};
        run_events(&c, 100, &n);
        assert_int_equal(M.pf_calls, 100);
        assert_int_equal(M.pf_n, 2 + 3 + 2);
        assert_int_equal(M.pf_at, M.pf_n);
        assert_int_equal(M.pf_mismatch, 0);
        assert_int_equal(M.pf_in_write, 0);
        assert_int_equal(M.upd_idx, 200);
        assert_int_equal(M.ins, 200);
    }
    sb_event_cfg c = cfg_for(SB_WL_READ_WRITE);
    c.engine = &mock_ops;
    sb_counts n = {0};
    run_events(&c, 10, &n); /* prefetch off */
    assert_int_equal(M.pf_calls, 0);
    c.prefetch = true;
    c.mix.skip_trx = true;
    run_events(&c, 10, &n);
    assert_int_equal(M.pf_calls, 0);
    /* more writes than SB_PREFETCH_MAX: the first ones are announced */
    c = cfg_for(SB_WL_WRITE_ONLY);
    c.engine = &mock_ops;
    c.prefetch = true;
    c.mix.index_updates = SB_PREFETCH_MAX + 5;
    run_events(&c, 1, &n);
    assert_int_equal(M.pf_n, SB_PREFETCH_MAX);
    /* the 5 UPDATEs past the limit, then the non-index UPDATE, DELETE and INSERT */
    assert_int_equal(M.pf_mismatch, 5 + 3);
}

static void test_workload_names(void **state)
{
    sb_workload w;
    assert_int_equal(sb_workload_parse("oltp_read_only", &w), 0);
    assert_int_equal(w, SB_WL_READ_ONLY);
    assert_int_equal(sb_workload_parse("update_non_index", &w), 0);
    assert_int_equal(w, SB_WL_UPDATE_NON_INDEX);
    assert_int_equal(sb_workload_parse("oltp_bogus", &w), -1);
    for (int i = 0; i < SB_WL_COUNT; i++) {
        assert_int_equal(sb_workload_parse(sb_workload_name((sb_workload)i), &w), 0);
        assert_int_equal(w, i);
    }
}

static void test_engines_registered(void **state)
{
    assert_non_null(sb_find_engine("sqlite"));
    assert_non_null(sb_find_engine("lmdb"));
    assert_null(sb_find_engine("mysql"));
    assert_string_equal(sb_engine_names(), "lmdb|sqlite");
}

/* An engine's status codes have names; other numbers are not guessed. */
static void test_status_names(void **state)
{
    assert_string_equal(sb_status_name(SB_OK), "ok");
    assert_string_equal(sb_status_name(SB_RETRY), "retry");
    assert_string_equal(sb_status_name(SB_FAIL), "fail");
    assert_string_equal(sb_status_name(2), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_write_mix),
        cmocka_unit_test(test_every_workload_matches_expected),
        cmocka_unit_test(test_range_selects_off_and_skip_trx),
        cmocka_unit_test(test_retry_and_failure),
        cmocka_unit_test(test_prefetch_announces_the_writes),
        cmocka_unit_test(test_workload_names),
        cmocka_unit_test(test_engines_registered),
        cmocka_unit_test(test_status_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
