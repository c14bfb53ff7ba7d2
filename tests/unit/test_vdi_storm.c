/*
 * tests/unit/test_vdi_storm.c: VDI storm composition on small synthetic desktop
 * traces: full clones touch N disjoint regions, linked clones read the replica and
 * write only their deltas (a read after a write goes to the delta), stagger spreads
 * start times as asked, totals equal N times the desktop trace, rewind replays the
 * same storm, and the login models keep their published mix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trace/vdi/vdi_internal.h"

#include <stdlib.h>
#include <string.h>

#define MiB (1ull << 20)

static tr_record rec(uint64_t t_ms, int op, uint64_t off, uint32_t len)
{
    tr_record r = {.time_ns = t_ms * 1000000ull,
                   .offset = off,
                   .length = len,
                   .op = (uint8_t)op,
                   .latency_ns = TR_LATENCY_UNKNOWN};
    return r;
}

/* A desktop touching chunks 0, 1, 7 and 100 (gaps in between), reads and writes. */
static void synthetic(vdi_trace *t)
{
    static tr_record r[12];
    int n = 0;
    r[n++] = rec(0, TR_READ, 0, 65536);
    r[n++] = rec(1, TR_READ, MiB - 4096, 8192); /* spans chunks 0 and 1 */
    r[n++] = rec(2, TR_WRITE, 7 * MiB + 8192, 4096);
    r[n++] = rec(3, TR_READ, 100 * MiB, 16384);
    r[n++] = rec(4, TR_WRITE, 100 * MiB + 32768, 8192);
    r[n++] = rec(5, TR_FLUSH, 0, 0);
    r[n++] = rec(6, TR_READ, 7 * MiB + 8192, 4096);    /* read after write */
    r[n++] = rec(7, TR_READ, 100 * MiB + 32768, 8192); /* read after write */
    r[n++] = rec(9, TR_WRITE, 0, 4096);
    r[n++] = rec(12, TR_READ, 4096, 4096); /* never written: replica */
    memset(t, 0, sizeof *t);
    t->recs = malloc((size_t)n * sizeof *r);
    memcpy(t->recs, r, (size_t)n * sizeof *r);
    t->n = (size_t)n;
    strcpy(t->origin, "synthetic");
}

static void geometry(vdi_trace *t, vdi_image *img)
{
    synthetic(t);
    const vdi_trace *tt[1] = {t};
    char err[256];
    assert_int_equal(vdi_image_build(tt, 1, img, err, sizeof err), 0);
}

static void test_image_packing(void **state)
{
    vdi_trace t;
    vdi_image img;
    geometry(&t, &img);
    assert_int_equal(img.nchunks, 4); /* 0, 1, 7, 100 */
    assert_int_equal(img.image_bytes, 4 * MiB);
    assert_int_equal(img.nwchunks, 3); /* 0, 7, 100 */
    assert_int_equal(vdi_image_map(&img, 7 * MiB + 8192), 2 * MiB + 8192);
    assert_int_equal(vdi_image_map(&img, 100 * MiB), 3 * MiB);
    assert_int_equal(vdi_image_map(&img, 5 * MiB), -1);
    assert_int_equal(vdi_delta_map(&img, 100 * MiB + 32768), 2 * MiB + 32768);
    assert_int_equal(vdi_layout_bytes(&img, VDI_FULL, 5), 20 * MiB);
    assert_int_equal(vdi_layout_bytes(&img, VDI_LINKED, 5), 4 * MiB + 15 * MiB);
    vdi_image_free(&img);
    vdi_trace_free(&t);
}

static tr_source *open_storm(const vdi_trace *t, const vdi_image *img, vdi_clones c, uint32_t n,
                             uint64_t stagger_ns)
{
    vdi_storm_opts o = {.clones = c,
                        .desktops = n,
                        .stagger_ns = stagger_ns,
                        .jitter = 0.1,
                        .seed = 42,
                        .base = 0,
                        .volume_per_desktop = true};
    tr_source *s = NULL;
    char err[256];
    assert_int_equal(vdi_storm_open(t, img, &o, &s, err, sizeof err), 0);
    return s;
}

static void test_full_clones_disjoint(void **state)
{
    vdi_trace t;
    vdi_image img;
    geometry(&t, &img);
    const uint32_t N = 6;
    tr_source *s = open_storm(&t, &img, VDI_FULL, N, 50000000);
    tr_record r;
    size_t seen[6] = {0};
    uint64_t prev_t = 0;
    while (tr_next(s, &r) == 1) {
        assert_true(r.volume < N);
        assert_true(r.time_ns >= prev_t);
        prev_t = r.time_ns;
        const tr_record *in = &t.recs[seen[r.volume]++];
        assert_int_equal(r.op, in->op);
        assert_int_equal(r.length, in->length);
        if (r.op == TR_FLUSH) continue;
        uint64_t lo = (uint64_t)r.volume * img.image_bytes, hi = lo + img.image_bytes;
        assert_true(r.offset >= lo && r.offset + r.length <= hi);
        assert_int_equal(r.offset - lo, vdi_image_map(&img, in->offset));
    }
    for (uint32_t d = 0; d < N; d++)
        assert_int_equal(seen[d], t.n);
    tr_close(s);
    vdi_image_free(&img);
    vdi_trace_free(&t);
}

static void test_linked_clones(void **state)
{
    vdi_trace t;
    vdi_image img;
    geometry(&t, &img);
    const uint32_t N = 5;
    tr_source *s = open_storm(&t, &img, VDI_LINKED, N, 20000000);
    tr_record r;
    size_t seen[5] = {0};
    /* Per desktop: where its writes went (by original offset). */
    uint64_t wrote_at[5][2] = {{0}};
    while (tr_next(s, &r) == 1) {
        const tr_record *in = &t.recs[seen[r.volume]++];
        if (r.op == TR_FLUSH) continue;
        uint64_t d0 = img.image_bytes + (uint64_t)r.volume * img.delta_bytes;
        if (r.op == TR_WRITE) {
            /* Writes only to the desktop's own delta. */
            assert_true(r.offset >= d0 && r.offset + r.length <= d0 + img.delta_bytes);
            assert_int_equal(r.offset - d0, vdi_delta_map(&img, in->offset));
            if (in->offset == 7 * MiB + 8192) wrote_at[r.volume][0] = r.offset;
            if (in->offset == 100 * MiB + 32768) wrote_at[r.volume][1] = r.offset;
            continue;
        }
        if (in->time_ns == 6000000) { /* read after write: the delta, same place */
            assert_int_equal(r.offset, wrote_at[r.volume][0]);
        } else if (in->time_ns == 7000000) {
            assert_int_equal(r.offset, wrote_at[r.volume][1]);
        } else {
            /* Never written by this desktop: the shared replica. */
            assert_true(r.offset + r.length <= img.image_bytes);
            assert_int_equal(r.offset, vdi_image_map(&img, in->offset));
        }
    }
    for (uint32_t d = 0; d < N; d++)
        assert_int_equal(seen[d], t.n);
    vdi_storm_stats st;
    vdi_storm_stats_get(s, &st);
    assert_int_equal(st.delta_reads, 2 * N);
    assert_int_equal(st.replica_reads, 4 * N);
    assert_int_equal(st.writes, 3 * N);
    assert_int_equal(st.split_reads, 0);
    tr_close(s);
    vdi_image_free(&img);
    vdi_trace_free(&t);
}

/* A read spanning a written grain and an unwritten one is split at the grain. */
static void test_linked_split_read(void **state)
{
    vdi_trace t = {0};
    t.recs = calloc(2, sizeof *t.recs);
    t.recs[0] = rec(0, TR_WRITE, 8192, 4096);
    t.recs[1] = rec(1, TR_READ, 4096, 12288); /* grains 1 (replica), 2 (delta), 3 */
    t.n = 2;
    vdi_image img;
    const vdi_trace *tt[1] = {&t};
    char err[256];
    assert_int_equal(vdi_image_build(tt, 1, &img, err, sizeof err), 0);
    tr_source *s = open_storm(&t, &img, VDI_LINKED, 1, 0);
    tr_record r[4];
    int n = 0;
    while (n < 4 && tr_next(s, &r[n]) == 1)
        n++;
    assert_int_equal(n, 4); /* the write, then three pieces */
    assert_int_equal(r[1].offset, 4096);
    assert_int_equal(r[1].length, 4096);
    assert_int_equal(r[2].offset, img.image_bytes + 8192);
    assert_int_equal(r[2].length, 4096);
    assert_int_equal(r[3].offset, 12288);
    assert_int_equal(r[3].length, 4096);
    assert_int_equal(r[1].time_ns, r[3].time_ns);
    vdi_storm_stats st;
    vdi_storm_stats_get(s, &st);
    assert_int_equal(st.split_reads, 1);
    tr_close(s);
    vdi_image_free(&img);
    vdi_trace_free(&t);
}

static void test_stagger(void **state)
{
    vdi_trace t;
    vdi_image img;
    geometry(&t, &img);
    const uint32_t N = 200;
    const uint64_t S = 10000000000ull; /* 10 s */
    tr_source *s = open_storm(&t, &img, VDI_FULL, N, S);
    uint64_t lo = UINT64_MAX, hi = 0;
    int quarter[4] = {0};
    for (uint32_t d = 0; d < N; d++) {
        uint64_t st = vdi_storm_start_ns(s, d);
        assert_true(st < S);
        lo = st < lo ? st : lo;
        hi = st > hi ? st : hi;
        quarter[st / (S / 4)]++;
    }
    /* Spread over the whole window, evenly. */
    assert_true(lo < S / 50);
    assert_true(hi > S - S / 50);
    for (int q = 0; q < 4; q++)
        assert_int_equal(quarter[q], N / 4);
    /* The first record of each desktop comes at its start time; not in lockstep. */
    tr_record r;
    bool first[200] = {false};
    int distinct = 0;
    uint64_t last = UINT64_MAX;
    while (tr_next(s, &r) == 1) {
        if (!first[r.volume]) {
            first[r.volume] = true;
            assert_int_equal(r.time_ns, vdi_storm_start_ns(s, r.volume));
            distinct += r.time_ns != last;
            last = r.time_ns;
        }
    }
    assert_true(distinct > (int)N - 5);
    tr_close(s);

    /* No stagger: every desktop starts at 0. */
    s = open_storm(&t, &img, VDI_FULL, 8, 0);
    for (uint32_t d = 0; d < 8; d++)
        assert_int_equal(vdi_storm_start_ns(s, d), 0);
    tr_close(s);
    vdi_image_free(&img);
    vdi_trace_free(&t);
}

static void totals_for(vdi_clones c)
{
    vdi_trace t;
    vdi_image img;
    geometry(&t, &img);
    vdi_trace_stats one;
    vdi_trace_stats_of(&t, &one);
    const uint32_t N = 7;
    tr_source *s = open_storm(&t, &img, c, N, 30000000);
    uint64_t cnt[4] = {0}, bytes[4] = {0};
    tr_record r;
    while (tr_next(s, &r) == 1) {
        cnt[r.op]++;
        bytes[r.op] += r.length;
    }
    assert_int_equal(cnt[TR_READ], N * one.reads);
    assert_int_equal(cnt[TR_WRITE], N * one.writes);
    assert_int_equal(cnt[TR_FLUSH], N * one.flushes);
    assert_int_equal(bytes[TR_READ], N * one.read_bytes);
    assert_int_equal(bytes[TR_WRITE], N * one.write_bytes);

    /* Rewind: the same storm again, record for record. */
    assert_int_equal(tr_rewind(s), 0);
    tr_source *s2 = open_storm(&t, &img, c, N, 30000000);
    tr_record a, b;
    int ra, rb;
    do {
        ra = tr_next(s, &a);
        rb = tr_next(s2, &b);
        assert_int_equal(ra, rb);
        if (ra == 1) {
            assert_int_equal(a.time_ns, b.time_ns);
            assert_int_equal(a.offset, b.offset);
            assert_int_equal(a.volume, b.volume);
        }
    } while (ra == 1);
    tr_close(s);
    tr_close(s2);
    vdi_image_free(&img);
    vdi_trace_free(&t);
}

static void test_totals_full(void **state)
{
    totals_for(VDI_FULL);
}

static void test_totals_linked(void **state)
{
    totals_for(VDI_LINKED);
}

static void test_login_models(void **state)
{
    vdi_trace t;
    vdi_image img;
    geometry(&t, &img);
    char err[256];
    vdi_trace m;
    for (int p = VDI_INITIAL_LOGIN; p <= VDI_MONDAY_LOGIN; p++) {
        assert_int_equal(vdi_model_build((vdi_phase)p, &img, 2000, 7, &m, err, sizeof err), 0);
        assert_true(m.modeled);
        vdi_trace_stats st;
        vdi_trace_stats_of(&m, &st);
        assert_int_equal(m.n, 21000); /* 10.5 IOPS x 2000 s */
        double rs = (double)st.reads / (double)m.n;
        double want = p == VDI_INITIAL_LOGIN ? 0.50 : 0.65;
        assert_true(rs > want - 0.02 && rs < want + 0.02);
        assert_int_equal(st.read_bytes, st.reads * 36864);
        double wmean = (double)st.write_bytes / (double)st.writes;
        assert_true(wmean > 10240 - 300 && wmean < 10240 + 300);
        double iops = (double)m.n / ((double)st.duration_ns / 1e9);
        assert_true(iops > 10.0 && iops < 11.0);
        for (size_t i = 0; i < m.n; i++) {
            assert_true(vdi_image_map(&img, m.recs[i].offset) >= 0);
            assert_int_equal(m.recs[i].offset % 4096, 0);
            assert_int_equal(m.recs[i].offset / VDI_CHUNK,
                             (m.recs[i].offset + m.recs[i].length - 1) / VDI_CHUNK);
        }
        vdi_trace_free(&m);
    }
    assert_int_not_equal(vdi_model_build(VDI_BOOT, &img, 10, 1, &m, err, sizeof err), 0);
    vdi_image_free(&img);
    vdi_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_image_packing), cmocka_unit_test(test_full_clones_disjoint),
        cmocka_unit_test(test_linked_clones), cmocka_unit_test(test_linked_split_read),
        cmocka_unit_test(test_stagger),       cmocka_unit_test(test_totals_full),
        cmocka_unit_test(test_totals_linked), cmocka_unit_test(test_login_models),
    };
    return cmocka_run_group_tests(tests, 0, NULL);
}
