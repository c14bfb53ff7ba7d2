/*
 * `appsim io`'s definitions: transfer-size forms (vdbench's and fio's) parse to the
 * distribution they say and refuse what they cannot mean; every built-in profile draws,
 * over 1M records, its size distribution, read share and random share within 1 % (of
 * all draws) of its definition; random offsets stay aligned inside the section and
 * sequential ones continue one stream and wrap; a limited source ends.
 */
#include "trace/io/io_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define DRAWS 1000000
#define SECTION (1ull << 40) /* large: a random offset almost never equals the stream's next */

static void test_xfer_forms(void **state)
{
    io_xfer x;
    char err[256];
    assert_int_equal(io_xfer_parse("4k", &x, err, sizeof err), 0);
    assert_int_equal(x.kind, IO_XFER_FIXED);
    assert_int_equal(x.size[0], 4096);
    assert_int_equal(io_xfer_parse("(8k)", &x, err, sizeof err), 0);
    assert_int_equal(x.size[0], 8192);
    assert_int_equal(io_xfer_parse("(4k,70,8k,30)", &x, err, sizeof err), 0);
    assert_int_equal(x.kind, IO_XFER_SPLIT);
    assert_int_equal(x.nbins, 2);
    assert_int_equal(x.size[1], 8192);
    assert_true(fabs(x.pct[1] - 30) < 1e-9);
    assert_true(fabs(io_xfer_mean(&x) - (0.7 * 4096 + 0.3 * 8192)) < 1e-6);
    assert_int_equal(io_xfer_parse("(4k,64k,4k)", &x, err, sizeof err), 0);
    assert_int_equal(x.kind, IO_XFER_RANGE);
    assert_int_equal(io_xfer_min(&x), 4096);
    assert_int_equal(io_xfer_max(&x), 65536);
    /* fio bssplit; an empty share takes what the others leave */
    assert_int_equal(io_xfer_parse("4k/50:8k/:64k/", &x, err, sizeof err), 0);
    assert_int_equal(x.nbins, 3);
    assert_true(fabs(x.pct[2] - 25) < 1e-9);
    char buf[128];
    io_xfer_parse("(4k,70,1m,30)", &x, err, sizeof err);
    io_xfer_format(&x, buf, sizeof buf);
    assert_string_equal(buf, "(4k,70,1m,30)");
    /* refused, each with a reason */
    const char *bad[] = {"",           "4q",  "(4k,70,8k,20)", "(4k,70,8k)",  "(4k,70",
                         "(4k,6k,4k)", "100", "32m",           "4k/70:8k/40", "(4k,x,8k,30)"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = 0;
        assert_int_equal(io_xfer_parse(bad[i], &x, err, sizeof err), -1);
        assert_true(err[0] != 0);
    }
}

static void test_range_draws(void **state)
{
    io_xfer x;
    char err[256];
    assert_int_equal(io_xfer_parse("(4k,16k,4k)", &x, err, sizeof err), 0);
    sim_rng rng;
    sim_rng_seed(&rng, 3, 0);
    int seen[4] = {0};
    for (int i = 0; i < 40000; i++) {
        uint32_t v = io_xfer_draw(&x, &rng);
        assert_true(v >= 4096 && v <= 16384 && v % 4096 == 0);
        seen[v / 4096 - 1]++;
    }
    for (int i = 0; i < 4; i++)
        assert_true(abs(seen[i] - 10000) < 500);
}

/* Draws DRAWS records of a spec; checks shares against the definition. */
static void check_spec(const char *name, const io_spec *s)
{
    tr_source *src;
    char err[256];
    assert_int_equal(io_source_open(s, SECTION, 0, 42, &src, err, sizeof err), 0);
    uint64_t bins[IO_MAX_BINS] = {0}, reads = 0, sequential = 0, seq_next = 0;
    tr_record r;
    for (int i = 0; i < DRAWS; i++) {
        assert_int_equal(tr_next(src, &r), 1);
        assert_true(r.offset + r.length <= SECTION);
        int b = 0;
        while (b < s->xfer.nbins && s->xfer.size[b] != r.length)
            b++;
        assert_true(b < s->xfer.nbins);
        bins[b]++;
        reads += r.op == TR_READ;
        uint64_t expect = seq_next + r.length > SECTION ? 0 : seq_next;
        if (r.offset == expect) {
            sequential++;
            seq_next = r.offset + r.length;
        } else {
            assert_int_equal(r.offset % r.length, 0); /* aligned to its own size */
        }
    }
    tr_close(src);
    for (int b = 0; b < s->xfer.nbins; b++) {
        double got = 100.0 * (double)bins[b] / DRAWS;
        if (fabs(got - s->xfer.pct[b]) > 1.0)
            fail_msg("%s: %u bytes %.3f %% drawn, %.3f %% defined", name, s->xfer.size[b], got,
                     s->xfer.pct[b]);
    }
    double read = 100.0 * (double)reads / DRAWS;
    double random = 100.0 - 100.0 * (double)sequential / DRAWS;
    if (fabs(read - s->read_pct) > 1.0)
        fail_msg("%s: %.3f %% reads drawn, %.3f %% defined", name, read, s->read_pct);
    if (fabs(random - s->random_pct) > 1.0)
        fail_msg("%s: %.3f %% random drawn, %.3f %% defined", name, random, s->random_pct);
}

static void test_profiles(void **state)
{
    int n = 0;
    for (const io_profile *const *p = io_profiles(); *p; p++, n++) {
        io_spec s;
        char err[256];
        assert_int_equal(io_profile_spec(*p, &s, err, sizeof err), 0);
        assert_true(s.threads >= 1);
        assert_ptr_equal(io_profile_find((*p)->name), *p);
        check_spec((*p)->name, &s);
    }
    assert_int_equal(n, 15);
    assert_null(io_profile_find("no-such-profile"));
    /* the database profiles say they are approximations; the labs' own do not */
    assert_non_null(io_profile_find("oracle-80-20")->approximation);
    assert_null(io_profile_find("4k-random-read")->approximation);
}

static void test_alignment_and_limit(void **state)
{
    io_spec s = {.read_pct = 50, .random_pct = 100, .threads = 1, .align = 512};
    char err[256];
    assert_int_equal(io_xfer_parse("4k", &s.xfer, err, sizeof err), 0);
    tr_source *src;
    assert_int_equal(io_source_open(&s, 1 << 20, 1000, 1, &src, err, sizeof err), 0);
    tr_record r;
    int n = 0, odd = 0;
    while (tr_next(src, &r) == 1) {
        assert_int_equal(r.offset % 512, 0);
        assert_true(r.offset + 4096 <= (1 << 20));
        odd += r.offset % 4096 != 0;
        n++;
    }
    assert_int_equal(n, 1000);
    assert_true(odd > 500); /* 512-byte alignment, not the transfer size */
    tr_close(src);
    /* a section smaller than the largest transfer is refused */
    assert_int_equal(io_source_open(&s, 2048, 0, 1, &src, err, sizeof err), SIM_EXIT_USAGE);
    /* sequential wraps at the end of the section */
    s.random_pct = 0;
    assert_int_equal(io_source_open(&s, 3 * 4096 + 100, 0, 1, &src, err, sizeof err), 0);
    uint64_t want[] = {0, 4096, 8192, 0, 4096};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(tr_next(src, &r), 1);
        assert_int_equal(r.offset, want[i]);
    }
    tr_close(src);
}

/* The scan's align_bits: the lowest set bit is a power of two dividing the offset and
 * the length of every record the source draws (what the replay's buffer size rests
 * on), and no larger one divides them all. */
static void check_scan_alignment(const char *bs, uint32_t align, int random_pct, uint64_t want)
{
    io_spec s = {.read_pct = 50, .random_pct = random_pct, .threads = 1, .align = align};
    char err[256];
    assert_int_equal(io_xfer_parse(bs, &s.xfer, err, sizeof err), 0);
    tr_scan scan;
    assert_int_equal(io_source_scan(&s, 1 << 30, &scan, err, sizeof err), 0);
    uint64_t low = scan.align_bits & -scan.align_bits;
    if (low != want)
        fail_msg("%s align %u: lowest bit %llu, want %llu", bs, align, (unsigned long long)low,
                 (unsigned long long)want);
    tr_source *src;
    assert_int_equal(io_source_open(&s, 1 << 30, 100000, 1, &src, err, sizeof err), 0);
    tr_record r;
    uint64_t seen = 0;
    while (tr_next(src, &r) == 1)
        seen |= r.offset | r.length;
    assert_int_equal(seen & -seen, want);
    tr_close(src);
    tr_scan_free(&scan);
}

static void test_scan_alignment(void **state)
{
    check_scan_alignment("4k", 0, 100, 4096);
    check_scan_alignment("4k", 512, 100, 512);
    check_scan_alignment("128k", 0, 0, 131072);
    check_scan_alignment("4k/70:8k/30", 0, 50, 4096);
    check_scan_alignment("(8k,80,16k,5,128k,10,1m,5)", 0, 80, 8192);
    check_scan_alignment("(4k,64k,4k)", 0, 100, 4096);
    check_scan_alignment("(1536,6k,1536)", 0, 100, 512);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xfer_forms),     cmocka_unit_test(test_range_draws),
        cmocka_unit_test(test_profiles),       cmocka_unit_test(test_alignment_and_limit),
        cmocka_unit_test(test_scan_alignment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
