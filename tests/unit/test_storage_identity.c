/*
 * Identity and device counters on the test machine's own disk: a directory under /tmp
 * resolves to its filesystem and whole disk with the identity fields filled from sysfs
 * (name, capacity, block sizes, rotational, scheduler, transport), unknown fields are
 * listed rather than invented, and the device_io probe, run through a sim/ run, shows at
 * least the N O_DIRECT reads the test issued (other processes can only add to it).
 */
#include "storage/storage.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char root[256];
static st_target *tgt;

static int setup(void **state)
{
    snprintf(root, sizeof root, "/tmp/appsim-test-ident-XXXXXX");
    if (!mkdtemp(root)) return -1;
    char err[1024];
    st_target_opts o = {.path = root};
    if (st_target_open(&o, &tgt, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    char err[1024];
    st_target_cleanup(tgt, err, sizeof err);
    st_target_close(tgt);
    return rmdir(root);
}

static void test_identity_filled(void **state)
{
    json_t *j = st_target_json(tgt);
    char *dump = json_dumps(j, JSON_INDENT(2));
    fprintf(stderr, "%s\n", dump);
    free(dump);
    assert_string_equal(json_string_value(json_object_get(j, "kind")), "directory");
    assert_true(json_is_true(json_object_get(j, "direct_io")));
    json_t *fs = json_object_get(j, "filesystem");
    assert_true(json_is_string(json_object_get(fs, "type")));
    assert_true(json_is_string(json_object_get(fs, "mount_point")));
    json_t *d = json_object_get(j, "device");
    if (!json_is_object(d)) {
        /* /tmp on tmpfs or overlay: no disk, and the note must say so. */
        assert_true(json_is_string(json_object_get(j, "note")));
        skip();
    }
    const char *name = json_string_value(json_object_get(d, "name"));
    assert_non_null(name);
    assert_true(strlen(name) > 0);
    char sys[128];
    snprintf(sys, sizeof sys, "/sys/block/%s", name);
    assert_int_equal(access(sys, F_OK), 0);
    assert_true(json_integer_value(json_object_get(d, "capacity_bytes")) > 0);
    json_int_t lbs = json_integer_value(json_object_get(d, "logical_block_size"));
    json_int_t pbs = json_integer_value(json_object_get(d, "physical_block_size"));
    assert_true(lbs >= 512 && pbs >= lbs);
    assert_true(json_is_boolean(json_object_get(d, "rotational")));
    assert_true(json_is_string(json_object_get(d, "scheduler")));
    assert_true(json_is_string(json_object_get(d, "transport")));
    assert_true(json_is_boolean(json_object_get(d, "virtual")));
    json_t *unknown = json_object_get(d, "unknown");
    assert_true(json_is_array(unknown));
    /* Every identity string is either known or listed as unknown. */
    const char *keys[] = {"model", "serial", "firmware"};
    for (int i = 0; i < 3; i++) {
        json_t *v = json_object_get(d, keys[i]);
        bool listed = false;
        size_t k;
        json_t *u;
        json_array_foreach(unknown, k, u) listed |= !strcmp(json_string_value(u), keys[i]);
        assert_true(json_is_string(v) != listed);
    }
    if (json_is_true(json_object_get(d, "virtual")))
        assert_true(json_is_string(json_object_get(d, "note")));
    /* The target's alignment is at least the disk's logical block size. */
    assert_true(st_target_block_size(tgt) >= (uint32_t)lbs);
    json_decref(j);
}

static void test_device_io_probe_in_a_run(void **state)
{
    json_t *j = st_target_json(tgt);
    bool has_disk = json_is_object(json_object_get(j, "device"));
    json_decref(j);
    if (!has_disk) skip();
    char err[1024];
    int fd;
    enum { N = 300, BLK = 4096 };
    assert_int_equal(st_target_create_file(tgt, "probe.dat", 0, &fd, err, sizeof err), 0);
    uint8_t *buf = st_alloc_aligned((size_t)N * BLK);
    memset(buf, 7, (size_t)N * BLK);
    assert_int_equal(pwrite(fd, buf, (size_t)N * BLK, 0), (ssize_t)N * BLK);
    assert_int_equal(fdatasync(fd), 0);

    static const char *const types[] = {"read"};
    sim_run_config cfg = {.type_names = types, .ntypes = 1, .unit = "iops", .quiet = true};
    sim_run *run = sim_run_new(&cfg);
    sim_run_add_probe(run, &st_device_io_probe, tgt);
    sim_meter *m = sim_run_meter(run, 0);
    st_engine *e = st_engine_open(NULL, 1, err, sizeof err);
    st_engine_set_meter(e, m, 0, -1, -1);
    sim_run_start(run);
    for (int i = 0; i < N; i++) {
        st_io io = {.op = ST_OP_READ,
                    .fd = fd,
                    .buf = buf,
                    .len = BLK,
                    .offset = (uint64_t)((i * 37) % N) * BLK};
        assert_int_equal(st_engine_do(e, &io), BLK);
    }
    sim_run_finish(run);
    assert_int_equal(sim_run_count(run, 0, -1), N);
    json_t *doc = json_object();
    sim_result_put_run(doc, NULL, run);
    json_t *dio = json_object_get(doc, "device_io");
    assert_true(json_is_object(dio));
    assert_true(json_integer_value(json_object_get(dio, "reads")) >= N);
    assert_true(json_integer_value(json_object_get(dio, "read_bytes")) >= (json_int_t)N * BLK);
    json_t *pu = json_object_get(dio, "per_unit");
    assert_non_null(pu);
    assert_true(json_real_value(json_object_get(pu, "reads")) >= 1.0);
    assert_true(json_is_real(json_object_get(dio, "read_latency_avg_us")));
    json_decref(doc);
    sim_run_free(run);
    st_engine_close(e);
    st_free_aligned(buf);
    close(fd);
}

static void test_probe_delta_fields_and_units(void **state)
{
    void *a = st_device_io_probe.snapshot(tgt);
    if (!a) skip();
    json_t *d = st_device_io_probe.delta(tgt, a, a, 2.0, 0);
    assert_int_equal(json_integer_value(json_object_get(d, "reads")), 0);
    assert_null(json_object_get(d, "per_unit")); /* units 0: no per-transaction figures */
    assert_true(json_is_null(json_object_get(d, "read_latency_avg_us")));
    const char *keys[] = {"writes",   "read_bytes", "write_bytes",          "flushes",
                          "discards", "io_time_ms", "write_latency_avg_us", "flush_latency_avg_us"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        assert_non_null(json_object_get(d, keys[i]));
    json_decref(d);
    st_device_io_probe.free_snapshot(tgt, a);
}

/* Every block device the machine has: a whole disk is its own disk at sector 0; a
 * partition names its parent disk and the start and size sysfs gives it. */
static void test_sysfs_partition_places_every_device(void **state)
{
    DIR *d = opendir("/sys/dev/block");
    assert_non_null(d);
    struct dirent *de;
    int seen = 0;
    while ((de = readdir(d))) {
        unsigned ma, mi;
        if (sscanf(de->d_name, "%u:%u", &ma, &mi) != 2) continue;
        dev_t disk;
        uint64_t start = 1, sectors = 1;
        char err[256] = "", p[300], buf[64];
        assert_int_equal(
            st_sysfs_partition(makedev(ma, mi), &disk, &start, &sectors, err, sizeof err), SIM_OK);
        snprintf(p, sizeof p, "/sys/dev/block/%s/partition", de->d_name);
        if (access(p, F_OK) != 0) {
            assert_true(disk == makedev(ma, mi));
            assert_true(start == 0 && sectors == 0);
        } else {
            snprintf(p, sizeof p, "/sys/dev/block/%s/../dev", de->d_name);
            assert_int_equal(st_sysfs_read(p, buf, sizeof buf), SIM_OK);
            char want[64];
            snprintf(want, sizeof want, "%u:%u", major(disk), minor(disk));
            assert_string_equal(buf, want);
            snprintf(p, sizeof p, "/sys/dev/block/%s/start", de->d_name);
            assert_int_equal(st_sysfs_read(p, buf, sizeof buf), SIM_OK);
            assert_true(start == strtoull(buf, NULL, 10));
            assert_true(sectors > 0);
        }
        seen++;
    }
    closedir(d);
    assert_true(seen > 0);
    char buf[8] = "x";
    assert_int_equal(st_sysfs_read("/sys/dev/block/no-such-attribute", buf, sizeof buf), SIM_ERR);
    assert_string_equal(buf, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_filled),
        cmocka_unit_test(test_device_io_probe_in_a_run),
        cmocka_unit_test(test_probe_delta_fields_and_units),
        cmocka_unit_test(test_sysfs_partition_places_every_device),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
