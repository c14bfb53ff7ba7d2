/*
 * tests/unit/test_storage_foreign_io.c: the rule that tells appsim's own I/O from the
 * rest of a disk's traffic (storage/foreign_io.c), and the /proc/<pid>/io parser.
 */
#include "storage/storage.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#define MiB (1ull << 20)

static void test_parse(void **state)
{
    const char *text = "rchar: 1000\nwchar: 2000\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\n"
                       "write_bytes: 8192\ncancelled_write_bytes: 512\n";
    st_own_io o;
    assert_int_equal(st_own_io_parse(text, &o), 0);
    assert_int_equal(o.read_bytes, 4096);
    assert_int_equal(o.write_bytes, 8192); /* not cancelled_write_bytes' value */
    assert_int_equal(o.cancelled_write_bytes, 512);
    /* A kernel without task I/O accounting has only the char counters. */
    assert_int_equal(st_own_io_parse("rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\n", &o), -1);
    assert_int_equal(st_own_io_parse("", &o), -1);
}

/* Buffered writes are charged when the pages are dirtied: 1 MiB written to a file in
 * the working directory (the build tree, on a disk) shows in write_bytes at once. */
static void test_reading_own_process(void **state)
{
    st_own_io a, b;
    if (st_own_io_read(&a) != 0) skip(); /* CONFIG_TASK_IO_ACCOUNTING off */
    struct statfs fs;
    if (statfs(".", &fs) == 0 && fs.f_type == TMPFS_MAGIC) skip(); /* no writeback */
    char name[] = "foreign_io_XXXXXX";
    int fd = mkstemp(name);
    assert_true(fd >= 0);
    unlink(name);
    static char buf[1 << 20];
    memset(buf, 'x', sizeof buf);
    assert_int_equal(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
    assert_int_equal(st_own_io_read(&b), 0);
    close(fd);
    assert_true(b.write_bytes - a.write_bytes >= sizeof buf);
}

static void test_all_own(void **state)
{
    st_own_io a = {100 * MiB, 50 * MiB, 0}, b = {200 * MiB, 150 * MiB, 0};
    st_foreign_io f = st_foreign_io_judge(100 * MiB, 100 * MiB, &a, &b);
    assert_int_equal(f.own_read_bytes, 100 * MiB);
    assert_int_equal(f.own_write_bytes, 100 * MiB);
    assert_int_equal(f.read_bytes, 0);
    assert_int_equal(f.write_bytes, 0);
    assert_true(f.share == 0);
    assert_false(f.warn);
}

static void test_other_process_reads(void **state)
{
    /* The 1,541-reads-per-transaction case: the disk read 40x what appsim read. */
    st_own_io a = {0, 0, 0}, b = {10 * MiB, 10 * MiB, 0};
    st_foreign_io f = st_foreign_io_judge(400 * MiB, 10 * MiB, &a, &b);
    assert_int_equal(f.read_bytes, 390 * MiB);
    assert_int_equal(f.write_bytes, 0);
    assert_true(f.share > 0.95 && f.share < 0.96); /* 390 of 410 */
    assert_true(f.warn);
}

static void test_directions_do_not_offset(void **state)
{
    /* appsim wrote more than the disk did (writeback not yet done), and someone else
     * read: the extra own writes must not hide the foreign reads. */
    st_own_io a = {0, 0, 0}, b = {0, 100 * MiB, 0};
    st_foreign_io f = st_foreign_io_judge(50 * MiB, 20 * MiB, &a, &b);
    assert_int_equal(f.read_bytes, 50 * MiB);
    assert_int_equal(f.write_bytes, 0);
    assert_true(f.warn);
}

static void test_cancelled_writes_never_reached_the_disk(void **state)
{
    st_own_io a = {0, 0, 0}, b = {0, 100 * MiB, 60 * MiB};
    st_foreign_io f = st_foreign_io_judge(0, 100 * MiB, &a, &b);
    assert_int_equal(f.own_write_bytes, 40 * MiB);
    assert_int_equal(f.write_bytes, 60 * MiB);
    assert_true(f.warn);
}

static void test_thresholds(void **state)
{
    st_own_io a = {0, 0, 0};
    /* Exactly the share: no warning; just above with enough bytes: a warning. */
    st_own_io b = {0, 95 * MiB, 0};
    assert_false(st_foreign_io_judge(0, 100 * MiB, &a, &b).warn); /* 5 % */
    b.write_bytes = 94 * MiB;
    assert_true(st_foreign_io_judge(0, 100 * MiB, &a, &b).warn); /* 6 %, 6 MiB */
    /* A large share of a small run (a few journal blocks): no warning. */
    b.write_bytes = 1 * MiB;
    st_foreign_io f = st_foreign_io_judge(0, 2 * MiB, &a, &b);
    assert_true(f.share > 0.49 && f.share < 0.51);
    assert_false(f.warn);
    /* An idle disk has no share. */
    b.write_bytes = 0;
    f = st_foreign_io_judge(0, 0, &a, &b);
    assert_true(f.share == 0);
    assert_false(f.warn);
}

/* One rank's device_io over a window: the disk moved `disk` bytes written, the rank
 * wrote `own` of them. */
static json_t *rank_section(const char *disk, uint64_t disk_w, uint64_t own_w)
{
    st_foreign_io f = st_foreign_io_of(0, disk_w, 0, own_w);
    json_t *j =
        json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "disk", disk, "read_bytes",
                  (json_int_t)0, "write_bytes", (json_int_t)disk_w, "own_read_bytes", (json_int_t)0,
                  "own_write_bytes", (json_int_t)own_w, "foreign_read_bytes", (json_int_t)0,
                  "foreign_write_bytes", (json_int_t)f.write_bytes, "foreign_io_share", f.share);
    if (f.warn) json_object_set_new(j, "warning", json_string("not appsim's"));
    return j;
}

/* Four ranks writing 25 MiB each to one disk: each alone sees 75 % foreign I/O; counted
 * together, none. A rank on another host with a disk of the same name is apart. */
static void test_ranks_on_one_disk(void **state)
{
    json_t *s[5];
    for (int i = 0; i < 4; i++)
        s[i] = rank_section("vda", 100 * MiB, 25 * MiB);
    s[4] = rank_section("vda", 10 * MiB, 10 * MiB);
    assert_non_null(json_object_get(s[0], "warning"));
    const char *hosts[5] = {"a", "a", "a", "a", "b"};
    st_device_io_ranks_adjust(s, hosts, 5);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(json_integer_value(json_object_get(s[i], "foreign_write_bytes")), 0);
        assert_true(json_real_value(json_object_get(s[i], "foreign_io_share")) == 0);
        assert_null(json_object_get(s[i], "warning"));
        assert_int_equal(json_integer_value(json_object_get(s[i], "ranks_on_disk")), 4);
        assert_int_equal(json_integer_value(json_object_get(s[i], "ranks_own_write_bytes")),
                         100 * MiB);
        assert_int_equal(json_integer_value(json_object_get(s[i], "own_write_bytes")), 25 * MiB);
    }
    assert_null(json_object_get(s[4], "ranks_on_disk"));
    for (int i = 0; i < 5; i++)
        json_decref(s[i]);
}

/* Something else on the disk still shows: 4 ranks of 20 MiB on a disk that moved 100. */
static void test_ranks_and_another_process(void **state)
{
    json_t *s[4];
    for (int i = 0; i < 4; i++)
        s[i] = rank_section("vda", 100 * MiB, 20 * MiB);
    json_t *other_disk = rank_section("vdb", 5 * MiB, 5 * MiB);
    json_decref(s[3]);
    s[3] = other_disk; /* on another disk of the same host: not counted with these */
    const char *hosts[4] = {"a", "a", "a", "a"};
    st_device_io_ranks_adjust(s, hosts, 4);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(json_integer_value(json_object_get(s[i], "foreign_write_bytes")),
                         40 * MiB);
        assert_true(json_real_value(json_object_get(s[i], "foreign_io_share")) > 0.39);
        const char *w = json_string_value(json_object_get(s[i], "warning"));
        assert_non_null(w);
        assert_non_null(strstr(w, "3 ranks"));
    }
    assert_int_equal(json_integer_value(json_object_get(s[3], "foreign_write_bytes")), 0);
    assert_null(json_object_get(s[3], "ranks_on_disk"));
    for (int i = 0; i < 4; i++)
        json_decref(s[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranks_on_one_disk),
        cmocka_unit_test(test_ranks_and_another_process),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_reading_own_process),
        cmocka_unit_test(test_all_own),
        cmocka_unit_test(test_other_process_reads),
        cmocka_unit_test(test_directions_do_not_offset),
        cmocka_unit_test(test_cancelled_writes_never_reached_the_disk),
        cmocka_unit_test(test_thresholds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
