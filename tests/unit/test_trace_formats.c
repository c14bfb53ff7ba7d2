/*
 * Every trace reader on small generated inputs, with the edge cases real captures
 * have: header rows, unsorted rows, zero-length records, trims, flushes, other
 * events, several volumes; auto-detection picks the right format for each; and the
 * shared real samples (../shared/traces) when they are present.
 */
#include "trace/trace.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXR 64

typedef struct got {
    tr_record r[MAXR];
    int n;
    json_t *stats;
    char format[32];
} got;

/* Opens buf (format NULL = detect), reads everything; asserts success. */
static void read_all(const void *buf, size_t len, const char *format, int64_t volume, got *g)
{
    tr_open_opts o = {.format = format, .volume = volume};
    tr_source *s;
    char err[1024];
    int rc = tr_open_mem(buf, len, "t", &o, &s, err, sizeof err);
    if (rc) fail_msg("open: %s", err);
    snprintf(g->format, sizeof g->format, "%s", tr_source_format(s));
    g->n = 0;
    tr_record r;
    while ((rc = tr_next(s, &r)) == 1) {
        assert_true(g->n < MAXR);
        g->r[g->n++] = r;
    }
    if (rc < 0) fail_msg("read: %s", tr_error(s));
    g->stats = tr_source_stats_json(s);
    tr_close(s);
}

static json_int_t stat(const got *g, const char *k)
{
    return json_integer_value(json_object_get(g->stats, k));
}

static void done(got *g)
{
    json_decref(g->stats);
}

static void test_msr(void **state)
{
    const char *t = "128166385295514663,hm,0,Write,9056014336,2048,2833\n"
                    "128166385295515175,hm,1,Read,4096,4096,100\r\n"
                    "128166385295514878,hm,0,Write,512,0,2617\n";
    got g;
    read_all(t, strlen(t), NULL, -1, &g);
    assert_string_equal(g.format, "msr");
    assert_int_equal(g.n, 3);
    /* sorted: 663, 878, 175 */
    assert_int_equal(g.r[0].time_ns, 0);
    assert_int_equal(g.r[1].time_ns, (514878 - 514663) * 100);
    assert_int_equal(g.r[1].length, 0); /* zero-length kept, counted */
    assert_int_equal(g.r[2].volume, 1);
    assert_int_equal(g.r[2].op, TR_READ);
    assert_int_equal(g.r[2].latency_ns, 10000);
    assert_int_equal(g.r[0].latency_ns, 283300);
    assert_int_equal(stat(&g, "reordered"), 1);
    assert_int_equal(stat(&g, "zero_length"), 1);
    done(&g);
    read_all(t, strlen(t), "msr", 1, &g);
    assert_int_equal(g.n, 1);
    assert_int_equal(stat(&g, "other_volumes"), 2);
    done(&g);
}

static void test_systor(void **state)
{
    const char *t = "Timestamp,Response,IOType,LUN,Offset,Size\n"
                    "1456095145.133076000,0.000806000,R,0,899056122368,131072\n"
                    "1456095145.126285000,0.008044000,W,2,4256049987072,122880\n"
                    "1456095145.127398001,,R,0,3772288305664,58368\n";
    got g;
    read_all(t, strlen(t), NULL, -1, &g);
    assert_string_equal(g.format, "systor");
    assert_int_equal(g.n, 3);
    assert_int_equal(g.r[0].op, TR_WRITE);
    assert_int_equal(g.r[0].volume, 2);
    assert_int_equal(g.r[0].latency_ns, 8044000);
    assert_int_equal(g.r[1].time_ns, 1113001); /* exact ns, no float rounding */
    assert_int_equal(g.r[1].latency_ns, TR_LATENCY_UNKNOWN);
    assert_int_equal(g.r[2].time_ns, 6791000);
    assert_int_equal(stat(&g, "reordered"), 2);
    assert_int_equal(stat(&g, "non_io"), 1);
    done(&g);
}

static void test_spc(void **state)
{
    const char *t = "0,20941264,8192,W,0.551706\n"
                    "1,20939840,8192,r,0.554041,extra,fields\n"
                    "0,3436288,0,R,0.555000\n";
    got g;
    read_all(t, strlen(t), NULL, -1, &g);
    assert_string_equal(g.format, "spc");
    assert_int_equal(g.n, 3);
    assert_int_equal(g.r[0].offset, 20941264ull * 512);
    assert_int_equal(g.r[1].op, TR_READ);
    assert_int_equal(g.r[1].volume, 1);
    assert_int_equal(g.r[1].time_ns, 2335000);
    done(&g);
}

static void test_alibaba(void **state)
{
    const char *t = "device_id,opcode,offset,length,timestamp\n"
                    "3,R,126976,4096,1577808144000000\n"
                    "3,W,0,512,1577808144000100\n"
                    "7,R,8192,4096,1577808144000050\n";
    got g;
    read_all(t, strlen(t), NULL, -1, &g);
    assert_string_equal(g.format, "alibaba");
    assert_int_equal(g.n, 3);
    assert_int_equal(g.r[1].volume, 7);
    assert_int_equal(g.r[1].time_ns, 50000);
    assert_int_equal(g.r[2].op, TR_WRITE);
    done(&g);
}

static void test_tencent(void **state)
{
    const char *t = "1538323200,2048,8,1,1283\n"
                    "1538323200,4096,16,0,1283\n"
                    "1538323199,0,1,0,77\n";
    got g;
    read_all(t, strlen(t), NULL, -1, &g);
    assert_string_equal(g.format, "tencent");
    assert_int_equal(g.n, 3);
    assert_int_equal(g.r[0].volume, 77);
    assert_int_equal(g.r[0].length, 512);
    assert_int_equal(g.r[1].time_ns, 1000000000ull);
    assert_int_equal(g.r[1].offset, 2048 * 512);
    assert_int_equal(g.r[1].op, TR_WRITE);
    assert_int_equal(stat(&g, "reordered"), 1);
    done(&g);
}

static void test_fio(void **state)
{
    const char *v2 = "fio version 2 iolog\n"
                     "/dev/sdb add\n/dev/sdb open\n"
                     "/dev/sdb write 0 4096\n"
                     "/dev/sdb wait 1500 0\n"
                     "/dev/sdb read 8192 4096\n"
                     "/dev/sdc add\n"
                     "/dev/sdc trim 4096 65536\n"
                     "/dev/sdb sync 0 0\n"
                     "/dev/sdb close\n";
    got g;
    read_all(v2, strlen(v2), NULL, -1, &g);
    assert_string_equal(g.format, "fio-v2");
    assert_int_equal(g.n, 4);
    assert_int_equal(g.r[1].time_ns, 1500000);
    assert_int_equal(g.r[2].op, TR_DISCARD);
    assert_int_equal(g.r[2].volume, 1);
    assert_int_equal(g.r[3].op, TR_FLUSH);
    assert_int_equal(g.r[3].length, 0);
    done(&g);
    const char *v3 = "fio version 3 iolog\n"
                     "0 f add\n1 f open\n"
                     "10 f read 4096 4096\n"
                     "30 f datasync\n"
                     "20 f write 0 512\n"
                     "40 f close\n";
    read_all(v3, strlen(v3), NULL, -1, &g);
    assert_string_equal(g.format, "fio-v3");
    assert_int_equal(g.n, 3);
    assert_int_equal(g.r[1].op, TR_WRITE);
    assert_int_equal(g.r[1].time_ns, 10000);
    assert_int_equal(g.r[2].op, TR_FLUSH);
    done(&g);
}

static void test_blkparse(void **state)
{
    const char *t =
        "  8,0    3        1     0.000000000   697  Q  WS 1234 + 8 [jbd2/sda1-8]\n"
        "  8,0    3        2     0.000001000   697  G  WS 1234 + 8 [jbd2/sda1-8]\n"
        "  8,0    3        3     0.000010000   697  D  WS 1234 + 8 [jbd2/sda1-8]\n"
        "  8,16   0        1     0.000020000   100  D   R 64 + 16 [fio]\n"
        "  8,0    1        4     0.000030000   100  D  FN [kworker/1:1H]\n"
        "  8,0    1        5     0.000040000   100  D   D 2048 + 2048 [fstrim]\n"
        "  8,0    0        6     0.000200000     0  C  WS 1234 + 8 [0]\n"
        "CPU0 (8,0):\n"
        " Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB\n"
        "Total (8,0):\n";
    got g;
    read_all(t, strlen(t), NULL, -1, &g);
    assert_string_equal(g.format, "blkparse");
    assert_int_equal(g.n, 4);
    assert_int_equal(g.r[0].op, TR_WRITE);
    assert_int_equal(g.r[0].offset, 1234 * 512);
    assert_int_equal(g.r[0].length, 4096);
    assert_int_equal(g.r[1].op, TR_READ);
    assert_int_equal(g.r[1].volume, 8u << 20 | 16);
    assert_int_equal(g.r[2].op, TR_FLUSH);
    assert_int_equal(g.r[3].op, TR_DISCARD);
    assert_int_equal(g.r[3].length, 2048 * 512);
    /* The completion of sector 1234 gives the first issue its response time; the
     * others were never completed in this excerpt. */
    assert_int_equal(g.r[0].latency_ns, 190000);
    assert_int_equal(g.r[1].latency_ns, TR_LATENCY_UNKNOWN);
    done(&g);
}

static void put32(unsigned char *p, uint32_t v, int be)
{
    for (int i = 0; i < 4; i++)
        p[be ? 3 - i : i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v, int be)
{
    if (be) {
        put32(p, (uint32_t)(v >> 32), 1);
        put32(p + 4, (uint32_t)v, 1);
    } else {
        put32(p, (uint32_t)v, 0);
        put32(p + 4, (uint32_t)(v >> 32), 0);
    }
}

static size_t blk_event(unsigned char *p, int be, uint64_t t, uint64_t sector, uint32_t bytes,
                        uint32_t action, uint16_t pdu)
{
    memset(p, 0, 48 + pdu);
    put32(p, 0x65617407, be);
    put64(p + 8, t, be);
    put64(p + 16, sector, be);
    put32(p + 24, bytes, be);
    put32(p + 28, action, be);
    put32(p + 36, 8u << 20, be);
    p[46] = be ? (unsigned char)(pdu >> 8) : (unsigned char)pdu;
    p[47] = be ? (unsigned char)pdu : (unsigned char)(pdu >> 8);
    return 48 + pdu;
}

static void test_blktrace(void **state)
{
    for (int be = 0; be < 2; be++) {
        unsigned char buf[1024];
        size_t n = 0;
        n += blk_event(buf + n, be, 100, 0, 0, 1u << 10 << 16, 16);              /* notify + pdu */
        n += blk_event(buf + n, be, 200, 64, 4096, 1u | (1u << 16), 0);          /* Q read */
        n += blk_event(buf + n, be, 300, 64, 4096, 7u | (1u << 16), 0);          /* D read */
        n += blk_event(buf + n, be, 400, 128, 8192, 7u | (2u << 16), 0);         /* D write */
        n += blk_event(buf + n, be, 500, 0, 0, 7u | (4u << 16), 0);              /* D flush */
        n += blk_event(buf + n, be, 600, 256, 1 << 20, 7u | (0x2000u << 16), 0); /* discard */
        n += blk_event(buf + n, be, 900, 128, 8192, 8u | (2u << 16), 0);         /* C write */
        n += blk_event(buf + n, be, 950, 64, 4096, 8u | (1u << 16), 0);          /* C read */
        got g;
        read_all(buf, n, NULL, -1, &g);
        assert_string_equal(g.format, "blktrace");
        assert_int_equal(g.n, 4);
        assert_int_equal(g.r[0].op, TR_READ);
        assert_int_equal(g.r[0].offset, 64 * 512);
        assert_int_equal(g.r[1].op, TR_WRITE);
        assert_int_equal(g.r[1].time_ns, 100);
        assert_int_equal(g.r[2].op, TR_FLUSH);
        assert_int_equal(g.r[3].op, TR_DISCARD);
        assert_int_equal(g.r[0].latency_ns, 950 - 300); /* paired with its completion */
        assert_int_equal(g.r[1].latency_ns, 900 - 400);
        assert_int_equal(g.r[2].latency_ns, TR_LATENCY_UNKNOWN);
        assert_int_equal(stat(&g, "non_io"), 4); /* notify, queue, two completions */
        done(&g);
        /* Truncated at the end: an error with the byte offset. */
        tr_open_opts o = {.volume = -1};
        tr_source *s;
        char err[512];
        assert_int_equal(tr_open_mem(buf, n - 10, "bt", &o, &s, err, sizeof err), 0);
        tr_record r;
        int rc;
        while ((rc = tr_next(s, &r)) == 1)
            ;
        assert_int_equal(rc, -1);
        assert_non_null(strstr(tr_error(s), "byte offset"));
        assert_non_null(strstr(tr_error(s), "truncated"));
        tr_close(s);
    }
}

static void vscsi1(unsigned char *p, uint16_t cmd, uint32_t len, uint64_t lbn, uint64_t ts)
{
    memset(p, 0, 32);
    put32(p + 4, len, 0);
    p[12] = (unsigned char)cmd;
    p[15] = 1;
    put64(p + 16, lbn, 0);
    put64(p + 24, ts, 0);
}

static void vscsi2(unsigned char *p, uint16_t cmd, uint32_t len, uint64_t lbn, uint64_t ts,
                   uint64_t rt)
{
    memset(p, 0, 40);
    p[0] = (unsigned char)cmd;
    p[3] = 2;
    put32(p + 8, len, 0);
    put64(p + 16, lbn, 0);
    put64(p + 24, ts, 0);
    put64(p + 32, rt, 0);
}

static void test_vscsi(void **state)
{
    unsigned char b[256];
    vscsi1(b, 0x2a, 4096, 100, 1000);
    vscsi1(b + 32, 0x28, 512, 8, 1500);
    vscsi1(b + 64, 0x35, 0, 0, 1600);  /* synchronize cache: flush */
    vscsi1(b + 96, 0x12, 36, 0, 1700); /* inquiry: not an I/O */
    got g;
    read_all(b, 128, NULL, -1, &g);
    assert_string_equal(g.format, "vscsi");
    assert_int_equal(g.n, 3);
    assert_int_equal(g.r[0].op, TR_WRITE);
    assert_int_equal(g.r[0].offset, 100 * 512);
    assert_int_equal(g.r[1].time_ns, 500000);
    assert_int_equal(g.r[2].op, TR_FLUSH);
    assert_int_equal(stat(&g, "non_io"), 1);
    done(&g);
    vscsi2(b, 0x88, 8192, 16, 10, 250);
    vscsi2(b + 40, 0x8a, 4096, 32, 20, 80);
    read_all(b, 80, NULL, -1, &g);
    assert_string_equal(g.format, "vscsi");
    assert_int_equal(g.n, 2);
    assert_int_equal(g.r[0].latency_ns, 250000);
    assert_int_equal(g.r[1].op, TR_WRITE);
    done(&g);
}

static void test_appsim_roundtrip(void **state)
{
    char path[] = "/tmp/appsim-test-trace-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    tr_writer *w;
    char err[512];
    assert_int_equal(tr_writer_open(path, "appsim", NULL, &w, err, sizeof err), 0);
    tr_record in[5] = {
        {0, 4096, 4096, 0, TR_READ, TR_LATENCY_UNKNOWN, 0},
        {10, 8192, 4096, 0, TR_WRITE, 1234, 0}, /* sequential: offset = previous end */
        {10, 0, 0, 0, TR_FLUSH, TR_LATENCY_UNKNOWN, 0},
        {5000000000ull, 1ull << 40, 1 << 20, 7, TR_DISCARD, TR_LATENCY_UNKNOWN, 0},
        {5000000001ull, 512, 0, 7, TR_READ, 0, 0},
    };
    for (int i = 0; i < 5; i++)
        assert_int_equal(tr_writer_put(w, &in[i]), 0);
    assert_int_equal(tr_writer_close(w, err, sizeof err), 0);
    FILE *f = fopen(path, "rb");
    unsigned char buf[512];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    got g;
    read_all(buf, n, NULL, -1, &g);
    assert_string_equal(g.format, "appsim");
    assert_int_equal(g.n, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(g.r[i].time_ns, in[i].time_ns);
        assert_int_equal(g.r[i].offset, in[i].offset);
        assert_int_equal(g.r[i].length, in[i].length);
        assert_int_equal(g.r[i].volume, in[i].volume);
        assert_int_equal(g.r[i].op, in[i].op);
        assert_int_equal(g.r[i].latency_ns, in[i].latency_ns);
    }
    done(&g);
    /* Header count patched; truncation and a future major version are refused. */
    assert_int_equal(buf[16], 5);
    tr_open_opts o = {.volume = -1};
    tr_source *s;
    tr_record r;
    int rc;
    assert_int_equal(tr_open_mem(buf, n - 3, "cut", &o, &s, err, sizeof err), 0);
    while ((rc = tr_next(s, &r)) == 1)
        ;
    assert_int_equal(rc, -1);
    assert_non_null(strstr(tr_error(s), "truncated"));
    tr_close(s);
    buf[8] = 9;
    assert_int_equal(tr_open_mem(buf, n, "v9", &o, &s, err, sizeof err), 0);
    assert_int_equal(tr_next(s, &r), -1);
    assert_non_null(strstr(tr_error(s), "version 9"));
    tr_close(s);
    /* An existing file is not replaced unless asked; out-of-order records cannot be
     * written. */
    tr_writer_opts keep = {.overwrite = false}, ow = {.overwrite = true};
    assert_int_equal(tr_writer_open(path, "appsim", &keep, &w, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "exists"));
    assert_int_equal(tr_writer_open(path, "appsim", &ow, &w, err, sizeof err), 0);
    assert_int_equal(tr_writer_put(w, &in[3]), 0);
    assert_int_equal(tr_writer_put(w, &in[0]), -1);
    assert_int_not_equal(tr_writer_close(w, err, sizeof err), 0);
    unlink(path);
}

static void test_fio_writer(void **state)
{
    tr_writer *w;
    char err[512];
    char path[] = "/tmp/appsim-test-fio-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    tr_writer_opts wo = {.fio_file = "/dev/nullb0"};
    assert_int_equal(tr_writer_open(path, "fio-v3", &wo, &w, err, sizeof err), 0);
    tr_record a = {2500000, 4096, 4096, 0, TR_WRITE, TR_LATENCY_UNKNOWN, 0};
    tr_record b = {3000000, 0, 0, 0, TR_FLUSH, TR_LATENCY_UNKNOWN, 0};
    assert_int_equal(tr_writer_put(w, &a), 0);
    assert_int_equal(tr_writer_put(w, &b), 0);
    assert_int_equal(tr_writer_close(w, err, sizeof err), 0);
    char text[512] = {0};
    FILE *f = fopen(path, "r");
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    assert_true(n > 0);
    assert_non_null(strstr(text, "fio version 3 iolog\n0 /dev/nullb0 add\n"));
    assert_non_null(strstr(text, "2500 /dev/nullb0 write 4096 4096\n"));
    assert_non_null(strstr(text, "3000 /dev/nullb0 sync 0 0\n"));
    got g;
    read_all(text, n, NULL, -1, &g);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.r[1].op, TR_FLUSH);
    done(&g);
    unlink(path);
}

static void sample(const char *name, const char *format, int records, int reads)
{
    char path[512];
    const char *src = getenv("APPSIM_SRC");
    snprintf(path, sizeof path, "%s/../shared/traces/%s", src ? src : ".", name);
    if (access(path, R_OK) != 0) snprintf(path, sizeof path, "/work/shared/traces/%s", name);
    if (access(path, R_OK) != 0) {
        printf("shared sample %s not present: skipped\n", name);
        return;
    }
    tr_open_opts o = {.volume = -1};
    tr_source *s;
    char err[1024];
    assert_int_equal(tr_open(path, &o, &s, err, sizeof err), 0);
    assert_string_equal(tr_source_format(s), format);
    tr_record r;
    int n = 0, nr = 0, rc;
    uint64_t prev = 0;
    while ((rc = tr_next(s, &r)) == 1) {
        n++;
        nr += r.op == TR_READ;
        assert_true(r.time_ns >= prev);
        prev = r.time_ns;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, records);
    assert_int_equal(nr, reads);
    /* A rewind gives the same records again. */
    assert_int_equal(tr_rewind(s), 0);
    n = 0;
    while (tr_next(s, &r) == 1)
        n++;
    assert_int_equal(n, records);
    tr_close(s);
}

static void test_shared_samples(void **state)
{
    sample("msr-cambridge1-sample.csv", "msr", 1000, 508);
    sample("systor17-traces-sample.csv.gz", "systor", 999, 826);
    sample("cloudPhysicsIO.vscsi", "vscsi", 113872, 46974);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_msr),        cmocka_unit_test(test_systor),
        cmocka_unit_test(test_spc),        cmocka_unit_test(test_alibaba),
        cmocka_unit_test(test_tencent),    cmocka_unit_test(test_fio),
        cmocka_unit_test(test_blkparse),   cmocka_unit_test(test_blktrace),
        cmocka_unit_test(test_vscsi),      cmocka_unit_test(test_appsim_roundtrip),
        cmocka_unit_test(test_fio_writer), cmocka_unit_test(test_shared_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
