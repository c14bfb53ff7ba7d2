/*
 * The LMDB sysbench engine (kv/): the shared engine cases (load, statements, index
 * kept consistent under concurrent writers, insert/delete workloads), plus LMDB's own
 * pieces: the memory cgroup (applied when root, skipped with the reason otherwise),
 * the residency report and the page-fault probe.
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

int main(void)
{
    engine_name = "lmdb";
    const struct CMUnitTest own[] = {
        cmocka_unit_test(test_memcg),
        cmocka_unit_test(test_residency_and_faults),
    };
    int rc = cmocka_run_group_tests(own, NULL, NULL);
    return rc | run_engine_cases();
}
