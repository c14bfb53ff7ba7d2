/*
 * The SQLite sysbench engine (oltp/sysbench_sqlite.c) through st_db: the shared
 * engine cases (load with the k index, sysbench's statements, index and row count
 * consistent under concurrent read_write, insert and delete workloads), then what
 * its file per table adds: writers of different tables hold their writer queues at
 * once, and writers that meet in the opposite table order do not deadlock (the later
 * one is told to retry). Runs on the direct-I/O VFS unless APPSIM_TEST_BUFFERED is set.
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

int main(void)
{
    engine_name = "sqlite";
    target_buffered = getenv("APPSIM_TEST_BUFFERED") != NULL;
    const struct CMUnitTest file_per_table[] = {
        cmocka_unit_test_setup_teardown(test_writers_of_two_tables_at_once, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_opposite_order_is_a_retry, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_per_file, fx_setup, fx_teardown),
    };
    int failed = run_engine_cases();
    return failed + cmocka_run_group_tests(file_per_table, NULL, NULL);
}
