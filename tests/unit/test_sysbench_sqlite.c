/*
 * The SQLite sysbench engine (oltp/sysbench_sqlite.c) through st_db: the shared
 * engine cases (load with the k index, sysbench's statements, index and row count
 * consistent under concurrent read_write, insert and delete workloads) in the default
 * layout (every table in one file), which commits a transaction once however many
 * tables it wrote; then what --table-files per-table adds: writers of different tables
 * hold their writer queues at once, and writers that meet in the opposite table order
 * do not deadlock (the later one is told to retry). Runs on the direct-I/O VFS unless
 * APPSIM_TEST_BUFFERED is set.
 */
#include "sysbench_engine_cases.h"

static void fill(char *cv, char *pad)
{
    memset(cv, '5', SB_C_LEN);
    memset(pad, '6', SB_PAD_LEN);
    cv[SB_C_LEN] = pad[SB_PAD_LEN] = 0;
}

/* One thread, two connections: were the tables' writers one lock, the second begin
 * would wait for ever (the alarm ends the test then). */
static void test_writers_of_two_tables_at_once(void **state)
{
    fixture *f = *state;
    char err[256];
    void *a = f->e->connect(f->db, err, sizeof err), *b = f->e->connect(f->db, err, sizeof err);
    assert_non_null(a);
    assert_non_null(b);
    sb_result r = {0};
    uint32_t t1 = 1, t2 = 2;
    alarm(60);
    f->e->plan_writes(a, &t1, 1);
    assert_int_equal(f->e->begin(a, true), SB_OK);
    assert_int_equal(f->e->update_index(a, 1, 5, &r), SB_OK);
    f->e->plan_writes(b, &t2, 1);
    assert_int_equal(f->e->begin(b, true), SB_OK);
    assert_int_equal(f->e->update_index(b, 2, 5, &r), SB_OK);
    assert_int_equal(f->e->commit(b), SB_OK);
    assert_int_equal(f->e->commit(a), SB_OK);
    alarm(0);
    f->e->disconnect(a);
    f->e->disconnect(b);
    expect_consistent(f, ROWS, ROWS);
}

/* a holds table 2 and then wants table 1, which b holds: a is told to retry (it must
 * not wait: b may be waiting for table 2 next), and after its rollback b goes on. */
static void test_opposite_order_is_a_retry(void **state)
{
    fixture *f = *state;
    char err[256], cv[SB_C_LEN + 1], pad[SB_PAD_LEN + 1];
    fill(cv, pad);
    void *a = f->e->connect(f->db, err, sizeof err), *b = f->e->connect(f->db, err, sizeof err);
    assert_non_null(a);
    assert_non_null(b);
    sb_result r = {0};
    uint32_t t1 = 1;
    alarm(60);
    assert_int_equal(f->e->begin(a, true), SB_OK); /* no plan: tables locked as written */
    assert_int_equal(f->e->delete_row(a, 2, 9, &r), SB_OK);
    f->e->plan_writes(b, &t1, 1);
    assert_int_equal(f->e->begin(b, true), SB_OK);
    assert_int_equal(f->e->delete_row(b, 1, 9, &r), SB_OK);
    assert_int_equal(f->e->update_index(a, 1, 3, &r), SB_RETRY);
    assert_non_null(strstr(f->e->conn_error(a), "busy"));
    f->e->rollback(a);
    /* b now takes table 2 as well (free again), and commits both files */
    assert_int_equal(f->e->delete_row(b, 2, 9, &r), SB_OK);
    assert_int_equal(r.rows, 1);
    assert_int_equal(f->e->commit(b), SB_OK);
    alarm(0);
    f->e->disconnect(a);
    f->e->disconnect(b);
    expect_consistent(f, ROWS - 1, ROWS - 1);
}

/* A read snapshot spans the files it touches and sees neither file change. */
static void test_snapshot_per_file(void **state)
{
    fixture *f = *state;
    char err[256], cv[SB_C_LEN + 1], pad[SB_PAD_LEN + 1];
    fill(cv, pad);
    void *rd = f->e->connect(f->db, err, sizeof err), *wr = f->e->connect(f->db, err, sizeof err);
    sb_result r = {0};
    assert_int_equal(f->e->begin(rd, false), SB_OK);
    assert_int_equal(f->e->point_select(rd, 1, 4, &r), SB_OK);
    assert_int_equal(f->e->point_select(rd, 2, 4, &r), SB_OK);
    assert_int_equal(f->e->begin(wr, true), SB_OK);
    assert_int_equal(f->e->delete_row(wr, 1, 4, &r), SB_OK);
    assert_int_equal(f->e->delete_row(wr, 2, 4, &r), SB_OK);
    assert_int_equal(f->e->commit(wr), SB_OK);
    assert_int_equal(f->e->point_select(rd, 1, 4, &r), SB_OK);
    assert_int_equal(r.rows, 1);
    assert_int_equal(f->e->point_select(rd, 2, 4, &r), SB_OK);
    assert_int_equal(r.rows, 1);
    assert_int_equal(f->e->commit(rd), SB_OK);
    f->e->disconnect(rd);
    f->e->disconnect(wr);
    expect_consistent(f, ROWS - 1, ROWS - 1);
}

/* With sync full and group commit (on appsim's VFS), 4 concurrent read_write threads
 * announcing their writes ahead: every file commit made durable by WAL syncs that
 * served one or more each, the connection's waits timed, the tables consistent. */
static void test_group_commit_and_prefetch(void **state)
{
    fixture *f = *state;
    char err[512];
    f->e->close(f->db);
    sb_db_opts o = {.tables = 2,
                    .table_size = ROWS,
                    .sync = "full",
                    .max_connections = 8,
                    .group_commit = true,
                    .table_files = table_files};
    assert_int_equal(f->e->open(f->t, &o, false, &f->db, err, sizeof err), 0);
    workers_prefetch = true;
    sb_counts n = {0};
    run_threads(f, SB_WL_READ_WRITE, 4, 100, &n);
    workers_prefetch = false;
    json_t *j = f->e->json(f->db);
    const json_t *gc = json_object_get(j, "group_commit");
    bool on = json_is_true(json_object_get(gc, "on"));
    assert_true(on == !target_buffered);
    if (on) {
        json_int_t commits = json_integer_value(json_object_get(gc, "commits"));
        json_int_t syncs = json_integer_value(json_object_get(gc, "wal_syncs"));
        assert_true(commits >= 4 * 100); /* each transaction writes one or two files */
        assert_true(syncs > 0 && syncs <= commits);
    }
    json_decref(j);
    expect_consistent(f, ROWS, ROWS);

    /* one connection's waits over a few events */
    void *c = f->e->connect(f->db, err, sizeof err);
    sb_event_cfg cfg = {.engine = f->e,
                        .workload = SB_WL_READ_WRITE,
                        .tables = 2,
                        .table_size = ROWS,
                        .max_retries = 10,
                        .prefetch = true};
    cfg.mix = (sb_mix){10, 1, 1, 1, 1, 1, 1, 1, 100, true, false};
    sb_dist_init(&cfg.dist, "uniform", 12, 1, 75, 0.2, 0.8, err, sizeof err);
    sim_rng rng;
    sim_rng_seed(&rng, 5, 0);
    sb_counts m = {0};
    for (int i = 0; i < 20; i++)
        assert_int_equal(sb_event(&cfg, c, &rng, &m, err, sizeof err), SB_OK);
    sb_waits w;
    f->e->waits(c, &w);
    assert_true(w.prefetch_ns > 0 && w.held_ns > 0 && w.commit_ns > 0);
    assert_true(on ? w.durable_ns > 0 : w.durable_ns == 0);
    assert_int_equal(w.prefetch_failed, 0);
    f->e->disconnect(c);
}

/* The shared layout: one file, and one commit for a transaction that wrote both
 * tables (the group commit counts commits per file). A run asking for the other layout
 * than prepare made is refused as a usage error. */
static void test_shared_file_commits_once(void **state)
{
    fixture *f = *state;
    char err[512];
    f->e->close(f->db);
    sb_db_opts o = {.tables = 2,
                    .table_size = ROWS,
                    .sync = "full",
                    .max_connections = 8,
                    .group_commit = true};
    assert_int_equal(f->e->open(f->t, &o, false, &f->db, err, sizeof err), 0);
    json_t *j = f->e->json(f->db);
    assert_string_equal(json_string_value(json_object_get(j, "table_files")), "shared");
    assert_int_equal(json_array_size(json_object_get(j, "files")), 1);
    json_decref(j);
    void *c = f->e->connect(f->db, err, sizeof err);
    uint32_t both[] = {2, 1};
    sb_result r = {0};
    f->e->plan_writes(c, both, 2);
    assert_int_equal(f->e->begin(c, true), SB_OK);
    assert_int_equal(f->e->update_index(c, 1, 7, &r), SB_OK);
    assert_int_equal(f->e->update_index(c, 2, 7, &r), SB_OK);
    assert_int_equal(f->e->commit(c), SB_OK);
    f->e->disconnect(c);
    j = f->e->json(f->db);
    const json_t *gc = json_object_get(j, "group_commit");
    if (json_is_true(json_object_get(gc, "on")))
        assert_int_equal(json_integer_value(json_object_get(gc, "commits")), 1);
    json_decref(j);
    f->e->close(f->db);
    f->db = NULL;
    o.table_files = "per-table";
    assert_int_equal(f->e->open(f->t, &o, false, &f->db, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "--table-files shared"));
    o.table_files = NULL;
    assert_int_equal(f->e->open(f->t, &o, false, &f->db, err, sizeof err), 0);
}

static int per_table(void **state)
{
    (void)state;
    table_files = "per-table";
    return 0;
}

int main(void)
{
    engine_name = "sqlite";
    target_buffered = getenv("APPSIM_TEST_BUFFERED") != NULL;
    const struct CMUnitTest shared[] = {
        cmocka_unit_test_setup_teardown(test_shared_file_commits_once, fx_setup, fx_teardown),
    };
    const struct CMUnitTest file_per_table[] = {
        cmocka_unit_test_setup_teardown(test_writers_of_two_tables_at_once, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_opposite_order_is_a_retry, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_per_file, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_group_commit_and_prefetch, fx_setup, fx_teardown),
    };
    int failed = run_engine_cases();
    failed += cmocka_run_group_tests(shared, NULL, NULL);
    return failed + cmocka_run_group_tests(file_per_table, per_table, NULL);
}
