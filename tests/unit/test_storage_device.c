/*
 * Block-device targets on loop devices: a mounted device (or one whose partition is
 * mounted, or one another program holds with O_EXCL) is refused with and without
 * allow_destroy; an unmounted device is refused without allow_destroy and the message
 * names what is on it (filesystem signature, partition table); the device's logical
 * block size is the alignment; identity says "loop" and virtual; the device_io probe
 * counts at least the N 4 KiB O_DIRECT reads the test issued. appsim marks a device the
 * first time it writes it: the mark sits in the last MiB, which the target's capacity
 * excludes, survives a full-capacity write, and lets later opens write without the flag
 * until a signature (swap, filesystem) appears on the device. Needs root (losetup,
 * mkfs, mount): skipped with a reason otherwise.
 */
#include "storage/storage.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEV_BYTES (64ull << 20)
#define MARK_AT (DEV_BYTES - (1ull << 20)) /* the device's last MiB holds appsim's mark */

static char dir[256], backing[300], backing2[300], mnt[300];
static char loopdev[64], loopdev2[64];
static bool can_run;
static const char *skip_reason = "";

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

static int attach(const char *file, const char *extra, char *dev, size_t len)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "losetup -f --show %s %s 2>/dev/null", extra, file);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    dev[0] = 0;
    if (!fgets(dev, (int)len, p)) dev[0] = 0;
    pclose(p);
    dev[strcspn(dev, "\n")] = 0;
    return dev[0] ? 0 : -1;
}

/* A DOS partition table with one partition from sector 2048 to the end. */
static void write_mbr(const char *file)
{
    uint8_t mbr[512] = {0};
    uint8_t *e = mbr + 446;
    e[4] = 0x83;
    uint32_t start = 2048, count = (uint32_t)(DEV_BYTES / 512) - 2048;
    memcpy(e + 8, &start, 4);
    memcpy(e + 12, &count, 4);
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    int fd = open(file, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, mbr, sizeof mbr, 0), 512);
    close(fd);
}

static int setup(void **state)
{
    if (geteuid() != 0) {
        skip_reason = "not root: loop devices need root";
        return 0;
    }
    snprintf(dir, sizeof dir, "/tmp/appsim-test-device-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(backing, sizeof backing, "%s/disk.img", dir);
    snprintf(backing2, sizeof backing2, "%s/parted.img", dir);
    snprintf(mnt, sizeof mnt, "%s/mnt", dir);
    mkdir(mnt, 0755);
    if (sh("truncate -s %llu %s %s", DEV_BYTES, backing, backing2) != 0) return -1;
    write_mbr(backing2);
    if (attach(backing, "--direct-io=on", loopdev, sizeof loopdev) != 0 ||
        attach(backing2, "-P", loopdev2, sizeof loopdev2) != 0) {
        skip_reason = "losetup could not attach a loop device";
        return 0;
    }
    can_run = true;
    return 0;
}

static int teardown(void **state)
{
    if (!dir[0]) return 0;
    umount2(mnt, MNT_DETACH);
    char rdir[320];
    snprintf(rdir, sizeof rdir, "%s/ramfs", dir);
    umount2(rdir, MNT_DETACH);
    if (loopdev[0]) sh("losetup -d %s", loopdev);
    if (loopdev2[0]) sh("losetup -d %s", loopdev2);
    return sh("rm -rf %s", dir);
}

#define NEED_ROOT()                                                                                \
    do {                                                                                           \
        if (!can_run) {                                                                            \
            fprintf(stderr, "skipped: %s\n", skip_reason);                                         \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

static int open_dev(const char *dev, bool allow, bool ro, st_target **t, char *err, size_t len)
{
    st_target_opts o = {.path = dev, .allow_destroy = allow, .read_only = ro};
    *t = NULL;
    return st_target_open(&o, t, err, len);
}

/* No signature and no appsim mark. */
static void blank(const char *dev)
{
    sh("wipefs -q -a %s", dev);
    sh("dd if=/dev/zero of=%s bs=1M seek=%llu count=1 oflag=direct status=none", dev,
       MARK_AT >> 20);
}

static void test_unmarked_device_needs_flag(void **state)
{
    NEED_ROOT();
    blank(loopdev);
    char err[2048];
    st_target *t;
    assert_int_equal(open_dev(loopdev, false, false, &t, err, sizeof err), SIM_EXIT_USAGE);
    assert_null(t);
    assert_non_null(strstr(err, "--allow-destroy"));
    assert_non_null(strstr(err, "no filesystem signature"));
    /* Reading (info) needs no flag. */
    assert_int_equal(open_dev(loopdev, false, true, &t, err, sizeof err), 0);
    assert_true(st_target_is_device(t));
    int fd;
    assert_int_equal(st_target_create_file(t, NULL, 0, &fd, err, sizeof err), SIM_EXIT_USAGE);
    st_target_close(t);
    assert_int_equal(open_dev(loopdev, true, false, &t, err, sizeof err), 0);
    assert_int_equal(st_target_capacity(t), MARK_AT);
    assert_int_equal(st_target_block_size(t), 512);
    char e2[256];
    assert_int_equal(st_target_check_space(t, MARK_AT, e2, sizeof e2), 0);
    assert_int_equal(st_target_check_space(t, MARK_AT + 1, e2, sizeof e2), SIM_EXIT_USAGE);
    assert_non_null(strstr(e2, "66060288 bytes"));
    assert_non_null(strstr(e2, "66060289 bytes"));
    assert_int_equal(st_target_create_file(t, NULL, 0, &fd, err, sizeof err), 0);
    assert_true(fcntl(fd, F_GETFL) & O_DIRECT);
    close(fd);
    /* Named files do not exist on a device. */
    assert_int_equal(st_target_create_file(t, "x", 0, &fd, err, sizeof err), SIM_EXIT_USAGE);
    st_target_close(t);
}

static void test_filesystem_named_and_mounted_refused(void **state)
{
    NEED_ROOT();
    assert_int_equal(sh("mkfs.ext4 -q -F -L appsimtest %s >/dev/null 2>&1", loopdev), 0);
    char err[2048];
    st_target *t;
    assert_int_equal(open_dev(loopdev, false, false, &t, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "ext4"));
    assert_non_null(strstr(err, "appsimtest"));
    assert_int_equal(mount(loopdev, mnt, "ext4", 0, NULL), 0);
    /* Mounted: refused whatever the flag. */
    assert_int_equal(open_dev(loopdev, true, false, &t, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "mounted"));
    assert_non_null(strstr(err, mnt));
    assert_int_equal(open_dev(loopdev, false, false, &t, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "mounted"));
    /* The filesystem on it still reads as a target directory. */
    st_target_opts o = {.path = mnt};
    assert_int_equal(st_target_open(&o, &t, err, sizeof err), 0);
    json_t *j = st_target_json(t);
    const char *devname = strrchr(loopdev, '/') + 1;
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "device"), "name")),
                        devname);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(j, "filesystem"), "type")), "ext4");
    json_decref(j);
    st_target_close(t);
    assert_int_equal(umount(mnt), 0);
    /* Held by another program's exclusive open. */
    int excl = open(loopdev, O_RDONLY | O_EXCL);
    assert_true(excl >= 0);
    assert_int_equal(open_dev(loopdev, true, false, &t, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "in use"));
    close(excl);
    /* While appsim holds it, nobody can mount it. */
    assert_int_equal(open_dev(loopdev, true, false, &t, err, sizeof err), 0);
    assert_int_not_equal(mount(loopdev, mnt, "ext4", 0, NULL), 0);
    st_target_close(t);
}

static void test_partitions_named_and_partition_mount_refused(void **state)
{
    NEED_ROOT();
    char err[2048];
    st_target *t;
    /* libblkid reads the table itself, whether or not the kernel parsed it. */
    assert_int_equal(open_dev(loopdev2, false, false, &t, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "dos partition table with 1 partition(s)"));
    assert_non_null(strstr(err, "#1 (63.0 MiB"));
    char part[80];
    snprintf(part, sizeof part, "%sp1", loopdev2);
    struct stat st;
    if (stat(part, &st) != 0) {
        fprintf(stderr,
                "note: partition-mount half not run: this kernel made no %s node "
                "(no partition table support)\n",
                part);
        return;
    }
    assert_int_equal(sh("mkfs.ext4 -q -F %s >/dev/null 2>&1", part), 0);
    assert_int_equal(open_dev(loopdev2, false, false, &t, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "ext4"));
    assert_int_equal(mount(part, mnt, "ext4", 0, NULL), 0);
    assert_int_equal(open_dev(loopdev2, true, false, &t, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "mounted"));
    assert_non_null(strstr(err, strrchr(part, '/') + 1));
    assert_int_equal(umount(mnt), 0);
    assert_int_equal(open_dev(loopdev2, true, false, &t, err, sizeof err), 0);
    st_target_close(t);
}

static void test_identity_and_accounting(void **state)
{
    NEED_ROOT();
    char err[2048];
    st_target *t;
    assert_int_equal(open_dev(loopdev, true, false, &t, err, sizeof err), 0);
    json_t *j = st_target_json(t);
    json_t *d = json_object_get(j, "device");
    assert_string_equal(json_string_value(json_object_get(d, "transport")), "loop");
    assert_true(json_is_true(json_object_get(d, "virtual")));
    assert_string_equal(json_string_value(json_object_get(d, "backing_file")), backing);
    assert_int_equal(json_integer_value(json_object_get(d, "capacity_bytes")), DEV_BYTES);
    json_decref(j);

    int fd;
    assert_int_equal(st_target_open_file(t, NULL, 0, false, &fd, err, sizeof err), 0);
    st_engine *e = st_engine_open("io_uring", 8, err, sizeof err);
    assert_non_null(e);
    uint8_t *buf = st_alloc_aligned(4096);
    enum { N = 200 };
    void *a = st_device_io_probe.snapshot(t);
    assert_non_null(a);
    for (int i = 0; i < N; i++) {
        st_io io = {.op = ST_OP_READ,
                    .fd = fd,
                    .buf = buf,
                    .len = 4096,
                    .offset = (uint64_t)((i * 7919) % (DEV_BYTES / 4096)) * 4096};
        assert_int_equal(st_engine_do(e, &io), 4096);
    }
    /* The kernel may post the last completion a moment before it adds that read to
     * the disk's counters (seen: 199 of 200 about one run in six): read the counters
     * again for up to 100 ms before holding them to N. */
    void *b = NULL;
    json_t *dj = NULL;
    for (int tries = 0; tries < 50; tries++) {
        if (b) {
            st_device_io_probe.free_snapshot(t, b);
            json_decref(dj);
            usleep(2000);
        }
        b = st_device_io_probe.snapshot(t);
        assert_non_null(b);
        dj = st_device_io_probe.delta(t, a, b, 1.0, N);
        if (json_integer_value(json_object_get(dj, "reads")) >= N) break;
    }
    assert_true(json_integer_value(json_object_get(dj, "reads")) >= N);
    assert_true(json_integer_value(json_object_get(dj, "read_bytes")) >= N * 4096);
    json_t *pu = json_object_get(dj, "per_unit");
    assert_non_null(pu);
    assert_true(json_real_value(json_object_get(pu, "reads")) >= 1.0);
    json_decref(dj);
    st_device_io_probe.free_snapshot(t, a);
    st_device_io_probe.free_snapshot(t, b);
    close(fd);

    /* Discard on the device: BLKDISCARD, then the range reads as zeros. */
    assert_int_equal(st_target_create_file(t, NULL, 0, &fd, err, sizeof err), 0);
    memset(buf, 0xab, 4096);
    st_io w = {.op = ST_OP_WRITE, .fd = fd, .buf = buf, .len = 4096, .offset = 1 << 20};
    assert_int_equal(st_engine_do(e, &w), 4096);
    st_io dc = {.op = ST_OP_DISCARD, .fd = fd, .len = 1 << 20, .offset = 1 << 20};
    assert_int_equal(st_engine_do(e, &dc), 0);
    st_io r = {.op = ST_OP_READ, .fd = fd, .buf = buf, .len = 4096, .offset = 1 << 20};
    assert_int_equal(st_engine_do(e, &r), 4096);
    assert_int_equal(buf[0], 0);
    assert_int_equal(buf[4095], 0);
    close(fd);
    st_free_aligned(buf);
    st_engine_close(e);
    st_target_close(t);
}

static void expect_open_without_flag(int want, const char *in_err)
{
    char err[2048] = "";
    st_target *t = NULL;
    int rc = open_dev(loopdev, false, false, &t, err, sizeof err);
    if (rc != want) fail_msg("open without --allow-destroy: %d, want %d (%s)", rc, want, err);
    if (in_err && !strstr(err, in_err)) fail_msg("'%s' not in: %s", in_err, err);
    st_target_close(t);
}

static void test_mark_allows_rewrite_until_a_signature(void **state)
{
    NEED_ROOT();
    blank(loopdev);
    expect_open_without_flag(SIM_EXIT_USAGE, "--allow-destroy");
    char err[2048];
    st_target *t;
    /* Opening with the flag alone writes nothing: the mark comes with the first write. */
    assert_int_equal(open_dev(loopdev, true, false, &t, err, sizeof err), 0);
    st_target_close(t);
    expect_open_without_flag(SIM_EXIT_USAGE, "--allow-destroy");
    assert_int_equal(open_dev(loopdev, true, false, &t, err, sizeof err), 0);
    int fd;
    assert_int_equal(st_target_create_file(t, NULL, 0, &fd, err, sizeof err), 0);
    close(fd);
    st_target_close(t);

    /* Marked and blank: no flag needed; a write of the whole capacity keeps the mark. */
    assert_int_equal(open_dev(loopdev, false, false, &t, err, sizeof err), 0);
    assert_int_equal(st_target_create_file(t, NULL, 0, &fd, err, sizeof err), 0);
    size_t chunk = 1 << 20;
    uint8_t *buf = st_alloc_aligned(chunk);
    memset(buf, 0x5a, chunk);
    for (uint64_t off = 0; off < st_target_capacity(t); off += chunk)
        assert_int_equal(pwrite(fd, buf, chunk, (off_t)off), (ssize_t)chunk);
    st_free_aligned(buf);
    close(fd);
    st_target_close(t);
    expect_open_without_flag(0, NULL);

    /* Something put on the device since takes the permission away. */
    assert_int_equal(sh("mkswap %s >/dev/null 2>&1", loopdev), 0);
    expect_open_without_flag(SIM_EXIT_USAGE, "appsim's mark");
    expect_open_without_flag(SIM_EXIT_USAGE, "swap");
    /* A damaged mark does not count. */
    blank(loopdev);
    assert_int_equal(open_dev(loopdev, true, false, &t, err, sizeof err), 0);
    assert_int_equal(st_target_create_file(t, NULL, 0, &fd, err, sizeof err), 0);
    close(fd);
    st_target_close(t);
    expect_open_without_flag(0, NULL);
    sh("dd if=/dev/zero of=%s bs=1 seek=%llu count=1 conv=notrunc,fsync status=none", loopdev,
       MARK_AT + 30); /* one byte of the mark's text: the checksum fails */
    expect_open_without_flag(SIM_EXIT_USAGE, "--allow-destroy");
    blank(loopdev);
}

/* ramfs has no direct I/O: the target must refuse and name --buffered, create nothing,
 * and work when --buffered is given. */
static void test_no_direct_io_names_buffered(void **state)
{
    NEED_ROOT();
    char rdir[320];
    snprintf(rdir, sizeof rdir, "%s/ramfs", dir);
    mkdir(rdir, 0755);
    if (mount("appsim-ramfs-test", rdir, "ramfs", 0, NULL) != 0) {
        fprintf(stderr, "skipped: cannot mount ramfs\n");
        skip();
    }
    char err[2048];
    st_target *t;
    st_target_opts o = {.path = rdir};
    int rc = st_target_open(&o, &t, err, sizeof err);
    if (rc == 0) {
        /* O_TMPFILE unsupported: the refusal comes with the first file instead. */
        int fd;
        rc = st_target_create_file(t, "x", 0, &fd, err, sizeof err);
        char p[400];
        snprintf(p, sizeof p, "%s/x", rdir);
        assert_int_not_equal(access(p, F_OK), 0);
        st_target_close(t);
    }
    assert_int_equal(rc, SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "O_DIRECT"));
    assert_non_null(strstr(err, "--buffered"));
    o.buffered = true;
    assert_int_equal(st_target_open(&o, &t, err, sizeof err), 0);
    int fd;
    assert_int_equal(st_target_create_file(t, "x", 0, &fd, err, sizeof err), 0);
    close(fd);
    assert_int_equal(st_target_cleanup(t, err, sizeof err), 0);
    st_target_close(t);
    assert_int_equal(umount(rdir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unmarked_device_needs_flag),
        cmocka_unit_test(test_filesystem_named_and_mounted_refused),
        cmocka_unit_test(test_partitions_named_and_partition_mount_refused),
        cmocka_unit_test(test_identity_and_accounting),
        cmocka_unit_test(test_mark_allows_rewrite_until_a_signature),
        cmocka_unit_test(test_no_direct_io_names_buffered),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
