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

int main(void)
{
    const struct CMUnitTest tests[] = {
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
