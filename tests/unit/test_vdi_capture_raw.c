/*
 * tests/unit/test_vdi_capture_raw.c: the parts of `appsim trace capture` that do not
 * need root: format-file parsing, decoding of synthetic tracefs ring-buffer pages
 * (small and large events, time extensions, absolute stamps, padding, lost-event
 * flags, foreign events, malformed pages), rwbs strings, and the pairing of issue and
 * complete events into records (FIFO per sector, requeues, flush steps, partitions).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trace/capture/capture_internal.h"

#include <stdlib.h>
#include <string.h>

static const char header_page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
                                  "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
                                  "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
                                  "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static const char issue_fmt[] =
    "name: block_rq_issue\nID: 2104\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
    "\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
    "\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;\n"
    "\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;\n"
    "\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n"
    "\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;\n"
    "\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;\n";

static const char complete_fmt[] =
    "name: block_rq_complete\nID: 2107\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
    "\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
    "\tfield:int error;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;\n"
    "\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n"
    "\tfield:__data_loc char[] cmd;\toffset:44;\tsize:4;\tsigned:0;\n";

static const char requeue_fmt[] =
    "name: block_rq_requeue\nID: 2103\nformat:\n"
    "\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
    "\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
    "\tfield:unsigned short ioprio;\toffset:28;\tsize:2;\tsigned:0;\n"
    "\tfield:char rwbs[10];\toffset:30;\tsize:10;\tsigned:0;\n"
    "\tfield:__data_loc char[] cmd;\toffset:40;\tsize:4;\tsigned:0;\n";

static void layout(cap_layout *l)
{
    memset(l, 0, sizeof *l);
    assert_int_equal(cap_parse_header_page(header_page, l), 0);
    assert_int_equal(cap_parse_event_format(issue_fmt, &l->ev[CAP_ISSUE]), 0);
    assert_int_equal(cap_parse_event_format(complete_fmt, &l->ev[CAP_COMPLETE]), 0);
    assert_int_equal(cap_parse_event_format(requeue_fmt, &l->ev[CAP_REQUEUE]), 0);
}

static void test_formats(void **state)
{
    cap_layout l;
    layout(&l);
    assert_int_equal(l.data.offset, 16);
    assert_int_equal(l.data.size, 4080);
    assert_int_equal(l.commit.offset, 8);
    assert_int_equal(l.ev[CAP_ISSUE].id, 2104);
    assert_int_equal(l.ev[CAP_ISSUE].sector.offset, 16);
    assert_int_equal(l.ev[CAP_ISSUE].rwbs.offset, 34);
    assert_int_equal(l.ev[CAP_ISSUE].rwbs.size, 10);
    assert_int_equal(l.ev[CAP_ISSUE].error.offset, -1);
    assert_int_equal(l.ev[CAP_COMPLETE].error.offset, 28);
    /* "nr_sector" must not be taken for "sector" and vice versa. */
    assert_int_equal(l.ev[CAP_COMPLETE].nr_sector.offset, 24);
    cap_event_fmt f;
    assert_int_equal(cap_parse_event_format("name: x\nformat:\n", &f), -1);
}

static void test_rwbs(void **state)
{
    assert_int_equal(cap_rwbs_op("WS", 10), TR_WRITE);
    assert_int_equal(cap_rwbs_op("FWFS", 10), TR_WRITE);
    assert_int_equal(cap_rwbs_op("RA", 10), TR_READ);
    assert_int_equal(cap_rwbs_op("D", 10), TR_DISCARD);
    assert_int_equal(cap_rwbs_op("FF", 10), TR_FLUSH);
    assert_int_equal(cap_rwbs_op("FN", 10), TR_FLUSH);
    assert_int_equal(cap_rwbs_op("N", 10), -1);
}

/* A page builder. */
typedef struct page {
    unsigned char b[4096];
    size_t pos; /* within data */
} page;

static void put32(page *p, uint32_t v)
{
    memcpy(p->b + 16 + p->pos, &v, 4);
    p->pos += 4;
}

static void put_block_event(page *p, int id, uint64_t delta, uint32_t dev, uint64_t sector,
                            uint32_t nr, const char *rwbs, int32_t error, bool big)
{
    unsigned char d[68] = {0};
    uint16_t t = (uint16_t)id;
    memcpy(d, &t, 2);
    memcpy(d + 8, &dev, 4);
    memcpy(d + 16, &sector, 8);
    memcpy(d + 24, &nr, 4);
    if (id == 2107) memcpy(d + 28, &error, 4);
    memcpy(d + 34, rwbs, strlen(rwbs));
    if (big) { /* type_len 0: length word, then data */
        put32(p, (uint32_t)(delta << 5));
        put32(p, (uint32_t)sizeof d + 4);
    } else {
        put32(p, (uint32_t)(delta << 5) | (uint32_t)(sizeof d / 4));
    }
    memcpy(p->b + 16 + p->pos, d, sizeof d);
    p->pos += sizeof d;
}

static void finish(page *p, uint64_t ts, uint64_t flags)
{
    memcpy(p->b, &ts, 8);
    uint64_t commit = p->pos | flags;
    memcpy(p->b + 8, &commit, 8);
}

typedef struct sink_buf {
    cap_event ev[16];
    int n;
} sink_buf;

static int collect(void *ctx, const cap_event *ev)
{
    sink_buf *s = ctx;
    if (s->n < 16) s->ev[s->n++] = *ev;
    return 0;
}

static void test_decode_page(void **state)
{
    cap_layout l;
    layout(&l);
    page p = {0};
    put_block_event(&p, 2104, 5, 7u << 20, 80, 8, "WS", 0, false);
    /* A time extension: 3 << 27 ns plus 7. */
    put32(&p, (uint32_t)(7u << 5) | 30u);
    put32(&p, 3);
    put_block_event(&p, 2107, 100, 7u << 20, 80, 8, "WS", 0, true);
    /* An event of another kind (sched_switch-like id) is skipped. */
    put32(&p, (0u << 5) | 2u);
    put32(&p, 999);
    put32(&p, 0);
    /* A discarded event (padding with a delta) is skipped, its time not added. */
    put32(&p, (9u << 5) | 29u);
    put32(&p, 12); /* bytes after the header word */
    put32(&p, 0);
    put32(&p, 0);
    put_block_event(&p, 2104, 1, 7u << 20, 0, 0, "FF", 0, false);
    /* End-of-page padding. */
    put32(&p, 29u);
    finish(&p, 1000, 0);
    sink_buf s = {0};
    uint64_t missed = 0;
    assert_int_equal(cap_decode_page(&l, p.b, sizeof p.b, collect, &s, &missed), 0);
    assert_int_equal(missed, 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.ev[0].ts, 1005);
    assert_int_equal(s.ev[0].kind, CAP_ISSUE);
    assert_int_equal(s.ev[0].op, TR_WRITE);
    assert_int_equal(s.ev[0].sector, 80);
    assert_int_equal(s.ev[0].nr_sector, 8);
    assert_int_equal(s.ev[0].dev, 7u << 20);
    assert_int_equal(s.ev[1].ts, 1005 + 7 + (3ull << 27) + 100);
    assert_int_equal(s.ev[1].kind, CAP_COMPLETE);
    assert_int_equal(s.ev[2].ts, s.ev[1].ts + 1);
    assert_int_equal(s.ev[2].op, TR_FLUSH);

    /* Lost events: the stored count after the data, or just the flag. */
    page q = {0};
    put_block_event(&q, 2104, 1, 1, 8, 8, "R", 0, false);
    uint64_t lost = 42;
    memcpy(q.b + 16 + q.pos, &lost, 8);
    finish(&q, 0, (1ull << 31) | (1ull << 30));
    missed = 0;
    s.n = 0;
    assert_int_equal(cap_decode_page(&l, q.b, sizeof q.b, collect, &s, &missed), 0);
    assert_int_equal(missed, 42);
    assert_int_equal(s.n, 1);
    finish(&q, 0, 1ull << 31);
    missed = 0;
    assert_int_equal(cap_decode_page(&l, q.b, sizeof q.b, collect, &s, &missed), 0);
    assert_int_equal(missed, 1);

    /* An absolute time stamp replaces the running time. */
    page a = {0};
    put32(&a, (5u << 5) | 31u);
    put32(&a, 2);
    put_block_event(&a, 2104, 4, 1, 16, 8, "R", 0, false);
    finish(&a, 999999, 0);
    s.n = 0;
    assert_int_equal(cap_decode_page(&l, a.b, sizeof a.b, collect, &s, &missed), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.ev[0].ts, 5 + (2ull << 27) + 4);

    /* Malformed: a commit larger than the page, an event running past the data. */
    finish(&a, 0, 5000);
    assert_int_equal(cap_decode_page(&l, a.b, sizeof a.b, collect, &s, &missed), -1);
    page m = {0};
    put32(&m, 20u); /* claims 80 bytes of data */
    finish(&m, 0, 0);
    assert_int_equal(cap_decode_page(&l, m.b, sizeof m.b, collect, &s, &missed), -1);
    assert_int_equal(cap_decode_page(&l, m.b, 8, collect, &s, &missed), -1);
}

static cap_event ev(uint64_t ts, int kind, int op, uint64_t sector, uint32_t nr)
{
    cap_event e = {
        .ts = ts, .sector = sector, .nr_sector = nr, .kind = (uint8_t)kind, .op = (uint8_t)op};
    return e;
}

static void test_pairing(void **state)
{
    cap_event e[] = {
        ev(5000, CAP_COMPLETE, TR_READ, 8, 8), /* issued before the capture */
        ev(1000, CAP_ISSUE, TR_WRITE, 80, 8),
        ev(1100, CAP_ISSUE, TR_READ, 16, 128),
        ev(1200, CAP_ISSUE, TR_WRITE, 80, 8), /* same sector again: FIFO */
        ev(1300, CAP_COMPLETE, TR_WRITE, 80, 8),
        ev(1400, CAP_COMPLETE, TR_READ, 16, 128),
        ev(1500, CAP_COMPLETE, TR_WRITE, 80, 8),
        ev(1600, CAP_ISSUE, TR_READ, 400, 8),
        ev(1650, CAP_REQUEUE, TR_READ, 400, 8),
        ev(1700, CAP_ISSUE, TR_READ, 400, 8),
        ev(1900, CAP_COMPLETE, TR_READ, 400, 8),
        ev(2000, CAP_ISSUE, TR_FLUSH, 0, 0),
        ev(2100, CAP_COMPLETE, TR_FLUSH, UINT64_MAX, 0), /* flushes report sector -1 */
        ev(2150, CAP_COMPLETE, TR_WRITE, 80, 0),         /* end of a FUA sequence */
        ev(2200, CAP_ISSUE, TR_WRITE, 900, 8),           /* never completes */
    };
    size_t n = sizeof e / sizeof *e;
    tr_record *r;
    size_t nr;
    cap_pair_stats st;
    cap_pair(e, n, 0, 0, &r, &nr, &st);
    assert_int_equal(nr, 6);
    assert_int_equal(r[0].time_ns, 0);
    assert_int_equal(r[0].op, TR_WRITE);
    assert_int_equal(r[0].offset, 80 * 512);
    assert_int_equal(r[0].length, 4096);
    assert_int_equal(r[0].latency_ns, 300);
    assert_int_equal(r[1].op, TR_READ);
    assert_int_equal(r[1].length, 65536);
    assert_int_equal(r[1].latency_ns, 300);
    assert_int_equal(r[2].time_ns, 200);
    assert_int_equal(r[2].latency_ns, 300);
    assert_int_equal(r[3].time_ns, 700); /* the re-issue after the requeue */
    assert_int_equal(r[3].latency_ns, 200);
    assert_int_equal(r[4].op, TR_FLUSH);
    assert_int_equal(r[4].latency_ns, 100);
    assert_int_equal(r[5].latency_ns, TR_LATENCY_UNKNOWN);
    assert_int_equal(st.issued, 6);
    assert_int_equal(st.completed, 5);
    assert_int_equal(st.incomplete, 1);
    assert_int_equal(st.unmatched_completes, 1);
    assert_int_equal(st.requeued, 1);
    assert_int_equal(st.flush_steps, 1);
    free(r);

    /* A partition: only its sectors, rebased. */
    cap_event p[] = {
        ev(10, CAP_ISSUE, TR_READ, 2048 + 8, 8),
        ev(20, CAP_ISSUE, TR_READ, 100, 8), /* another partition */
        ev(30, CAP_COMPLETE, TR_READ, 2048 + 8, 8),
    };
    cap_pair(p, 3, 2048, 4096, &r, &nr, &st);
    assert_int_equal(nr, 1);
    assert_int_equal(r[0].offset, 8 * 512);
    assert_int_equal(r[0].latency_ns, 20);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_rwbs),
        cmocka_unit_test(test_decode_page),
        cmocka_unit_test(test_pairing),
    };
    return cmocka_run_group_tests(tests, 0, NULL);
}
