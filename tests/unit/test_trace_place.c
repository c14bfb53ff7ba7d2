/*
 * Checked arithmetic in the replay's scan and placement:
 * offsets whose ends pass 2^63 - 1, and volumes whose extents add up past it, are input
 * errors naming file:line; well-formed volumes in a small region are mapped inside it,
 * and a record of a volume the scan did not see, at any offset, lands in a slice.
 */
#include "trace/replay/replay_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

static tr_source *open_msr(const char *text)
{
    tr_open_opts o = {.format = "msr", .volume = -1};
    tr_source *s = NULL;
    char err[512];
    int rc = tr_open_mem(text, strlen(text), "t.csv", &o, &s, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    return s;
}

static void scan_refused(const char *text, const char *where)
{
    tr_source *s = open_msr(text);
    tr_scan scan;
    char err[1024] = "";
    assert_int_equal(tr_scan_source(s, &scan, err, sizeof err), SIM_EXIT_USAGE);
    if (!strstr(err, where)) fprintf(stderr, "message: %s\n", err);
    assert_non_null(strstr(err, where));
    tr_close(s);
}

static void test_offsets_past_the_limit(void **state)
{
    (void)state;
    /* case 5: the end is 2^64 - 1, which rounded up to a block wrapped to 0 */
    scan_refused("128166372003061629,h,0,Write,18446744073709547519,4096,100\n", "t.csv:1: ");
    /* case 4: a read near 2^64 on volume 0 */
    scan_refused("128166372003061629,h,0,Write,265289728,4096,100\n"
                 "128166372003061630,h,0,Read,18446744073708498944,4096,100\n"
                 "128166372003061631,h,1,Write,0,4096,100\n",
                 "t.csv:2: ");
    /* volumes of 2^62 each: the second one takes the sum past 2^63 - 1 */
    scan_refused("128166372003061629,h,0,Write,4611686018427387904,4096,100\n"
                 "128166372003061630,h,1,Write,4611686018427387904,4096,100\n"
                 "128166372003061631,h,2,Write,4611686018427387904,4096,100\n",
                 "t.csv:2: volume 1 reaches");
}

static void test_volumes_inside_region(void **state)
{
    (void)state;
    tr_source *s = open_msr("128166372003061629,h,0,Write,265289728,4096,100\n"
                            "128166372003061630,h,0,Read,536870912,4096,100\n"
                            "128166372003061631,h,1,Write,0,4096,100\n"
                            "128166372003061632,h,1,Write,1048576,4096,100\n");
    tr_scan scan;
    char err[1024];
    assert_int_equal(tr_scan_source(s, &scan, err, sizeof err), 0);
    assert_int_equal(scan.align_bits % 4096, 0); /* every I/O on 4 KiB boundaries */
    const uint64_t lo = 2 << 20, hi = 3 << 20;
    for (int map = TR_MAP_WRAP; map <= TR_MAP_SCALE; map++) {
        tr_place pl;
        assert_int_equal(tr_place_init(&pl, &scan, (tr_map)map, 512, lo, hi - lo, err, sizeof err),
                         0);
        tr_record r;
        assert_int_equal(tr_rewind(s), 0);
        while (tr_next(s, &r) == 1) {
            uint64_t off;
            uint32_t len;
            tr_place_map(&pl, &r, &off, &len); /* scaling may unalign: one block more */
            assert_true(off >= lo && len > 0 && len <= 4096 + 512 && off + len <= hi);
        }
        /* a volume the scan did not see, at an offset near 2^64: still inside (one block
         * more when the folded offset is unaligned) */
        r = (tr_record){.offset = UINT64_MAX - 8192, .length = 4096, .volume = 9, .op = TR_WRITE};
        uint64_t off;
        uint32_t len;
        tr_place_map(&pl, &r, &off, &len);
        assert_true(off >= lo && len > 0 && len <= 4096 + 512 && off + len <= hi);
        assert_int_equal(pl.unknown_volume, 1);
        tr_place_free(&pl);
    }
    /* without mapping the trace does not fit the region: refused, not wrapped */
    tr_place pl;
    assert_int_equal(tr_place_init(&pl, &scan, TR_MAP_NONE, 512, lo, hi - lo, err, sizeof err),
                     SIM_EXIT_USAGE);
    uint64_t need;
    assert_int_equal(tr_replay_needed_size(&scan, 512, &need), 0);
    assert_int_equal(need, (512ull << 20) + 4096 + (1 << 20) + 4096);
    tr_scan_free(&scan);
    tr_close(s);
}

int main(void)
{
    sim_set_quiet(true);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets_past_the_limit),
        cmocka_unit_test(test_volumes_inside_region),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
