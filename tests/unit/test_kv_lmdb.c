/*
 * The LMDB sysbench engine (kv/): the shared engine cases (load, statements, index
 * kept consistent under concurrent writers, insert/delete workloads), plus LMDB's own
 * pieces: the memory cgroup (applied when root, skipped with the reason otherwise),
 * the residency report, the page-fault probe, and the prefetch ahead of the writer lock
 * with the connection's waits.
 */
#include "kv/kv.h"

#include "sysbench_engine_cases.h"

#include <fcntl.h>
#include <sys/stat.h>

static void test_memcg(void **state)
{
    if (geteuid() != 0) {
        fprintf(stderr, "skipped: the memory cgroup needs root\n");
        skip();
    }
    char err[512];
    kv_memcg *cg = kv_memcg_enter(64ull << 20, err, sizeof err);
    if (!cg) fprintf(stderr, "kv_memcg_enter: %s\n", err);
    assert_non_null(cg);
    char path[512];
    snprintf(path, sizeof path, "%s", kv_memcg_path(cg));
    /* we are inside: /proc/self/cgroup names it */
    FILE *pf = fopen("/proc/self/cgroup", "r");
    char line[1024];
    bool inside = false;
    const char *leaf = strrchr(path, '/');
    while (fgets(line, sizeof line, pf))
        if (strstr(line, leaf)) inside = true;
    fclose(pf);
    assert_true(inside);
    json_t *j = kv_memcg_json(cg);
    assert_true(json_is_true(json_object_get(j, "applied")));
    assert_int_equal(json_integer_value(json_object_get(j, "limit_bytes")), 64 << 20);
    json_decref(j);
    /* the limit is what the kernel holds */
    char knob[600];
    snprintf(knob, sizeof knob, "%s/%s", path,
             access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0 ? "memory.max"
                                                                    : "memory.limit_in_bytes");
    FILE *kf = fopen(knob, "r");
    if (kf) {
        unsigned long long v = 0;
        assert_int_equal(fscanf(kf, "%llu", &v), 1);
        fclose(kf);
        assert_int_equal(v, 64ull << 20);
    }
    kv_memcg_leave(cg);
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0); /* removed */
}

static void test_residency_and_faults(void **state)
{
    char path[] = "/tmp/appsim-resident-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char buf[4096];
    memset(buf, 1, sizeof buf);
    for (int i = 0; i < 256; i++)
        assert_int_equal(write(fd, buf, sizeof buf), sizeof buf);
    close(fd);
    uint64_t fb = 0;
    int64_t rb = kv_resident_bytes(path, &fb);
    assert_int_equal(fb, 1 << 20);
    assert_true(rb > 0 && rb <= (int64_t)fb);
    assert_int_equal(kv_drop_cache(path), 0);
    rb = kv_resident_bytes(path, &fb);
    assert_true(rb < (int64_t)fb); /* dropped (clean pages go at once) */
    unlink(path);

    void *a = kv_page_fault_probe.snapshot(NULL);
    char *mem = malloc(8 << 20);
    for (int i = 0; i < (8 << 20); i += 4096)
        mem[i] = 1; /* minor faults */
    void *b = kv_page_fault_probe.snapshot(NULL);
    json_t *d = kv_page_fault_probe.delta(NULL, a, b, 1.0, 10);
    assert_true(json_integer_value(json_object_get(d, "minor")) >= 1000);
    assert_non_null(json_object_get(d, "per_unit"));
    json_decref(d);
    free(mem);
    kv_page_fault_probe.free_snapshot(NULL, a);
    kv_page_fault_probe.free_snapshot(NULL, b);
}

/* The prefetch reads the rows and index entries of writes announced ahead: with no
 * transaction open it leaves none (a write transaction can begin), inside a read snapshot
 * it leaves the snapshot readable; rows that are gone and tables that do not exist are
 * passed over, not failures. The connection's waits time the prefetch, the writer lock's
 * hold and the commit, and count the thread's major faults in each; 4 threads announcing their
 * writes keep the tables consistent. */
static void test_prefetch_and_waits(void **state)
{
    fixture *f = *state;
    char err[512];
    void *c = f->e->connect(f->db, err, sizeof err);
    assert_non_null(c);
    sb_waits w;
    f->e->waits(c, &w);
    assert_true(w.prefetch_ns == 0 && w.lock_ns == 0 && w.held_ns == 0 && w.commit_ns == 0);
    const sb_write ahead[] = {
        {.table = 1, .kind = SB_W_UPDATE_K, .id = 5},
        {.table = 2, .kind = SB_W_DELETE_INSERT, .id = 7, .k_new = 3},
        {.table = 1, .kind = SB_W_UPDATE_C, .id = 9},
        {.table = 1, .kind = SB_W_UPDATE_K, .id = ROWS + 100},                /* no such row */
        {.table = 2, .kind = SB_W_DELETE_INSERT, .id = ROWS + 5, .k_new = 4}, /* no such row */
        {.table = 9, .kind = SB_W_UPDATE_K, .id = 5},                         /* no such table */
    };
    int n = (int)(sizeof ahead / sizeof *ahead);
    /* The reopened map has touched only the trees' upper pages: with the file's cached
     * pages dropped, the prefetch's leaves are major faults, counted as the prefetch's. */
    char names[2][64], data[sizeof f->dir + sizeof names[0] + 1];
    assert_int_equal(f->e->files(0, 0, names, 2), 2); /* the environment's data file first */
    snprintf(data, sizeof data, "%s/%s", f->dir, names[0]);
    assert_int_equal(kv_drop_cache(data), 0);
    f->e->prefetch_writes(c, ahead, n);
    f->e->waits(c, &w);
    assert_true(w.faults_prefetch >= 1 && w.faults_held == 0 && w.faults >= w.faults_prefetch);
    sb_result r = {0};
    assert_int_equal(f->e->begin(c, true), SB_OK); /* nothing was left open */
    assert_int_equal(f->e->update_index(c, 1, 5, &r), SB_OK);
    assert_int_equal(r.rows, 1);
    assert_int_equal(f->e->commit(c), SB_OK);
    /* a row no prefetch announced, its leaf dropped: faulted in under the writer lock */
    assert_int_equal(kv_drop_cache(data), 0);
    sb_waits before;
    f->e->waits(c, &before);
    assert_int_equal(f->e->begin(c, true), SB_OK);
    assert_int_equal(f->e->update_index(c, 2, ROWS - 3, &r), SB_OK);
    assert_int_equal(f->e->commit(c), SB_OK);
    f->e->waits(c, &w);
    assert_true(w.faults_held > before.faults_held && w.faults_prefetch == before.faults_prefetch);
    assert_true(w.faults - before.faults >= w.faults_held - before.faults_held);
    assert_int_equal(f->e->begin(c, false), SB_OK);
    f->e->prefetch_writes(c, ahead, n);
    assert_int_equal(f->e->point_select(c, 2, 7, &r), SB_OK); /* the snapshot is still open */
    assert_int_equal(r.rows, 1);
    assert_int_equal(f->e->commit(c), SB_OK);
    f->e->waits(c, &w);
    assert_true(w.prefetch_ns > 0 && w.held_ns > 0 && w.commit_ns > 0 && w.commit_ns <= w.held_ns);
    assert_int_equal(w.prefetch_failed, 0);
    assert_true(w.read_ns == 0 &&
                w.durable_ns == 0); /* page faults are not timed; no group commit */
    f->e->disconnect(c);

    workers_prefetch = true;
    sb_counts m = {0};
    run_threads(f, SB_WL_READ_WRITE, 4, 100, &m);
    workers_prefetch = false;
    expect_consistent(f, ROWS, ROWS);
}

int main(void)
{
    engine_name = "lmdb";
    const struct CMUnitTest own[] = {
        cmocka_unit_test(test_memcg),
        cmocka_unit_test(test_residency_and_faults),
        cmocka_unit_test_setup_teardown(test_prefetch_and_waits, fx_setup, fx_teardown),
    };
    int rc = cmocka_run_group_tests(own, NULL, NULL);
    return rc | run_engine_cases();
}
