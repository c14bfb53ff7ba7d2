/*
 * libFuzzer harness for replay placement (trace/replay/replay_place.c) and the scan before it
 * (trace/lib/scan.c): arbitrary offsets, lengths, volumes, regions, block sizes and mapping
 * modes, with none of the parsers' limits in between. Input: one byte of mode (map,
 * block size), the region's offset and length (8 bytes each, little-endian), then
 * records of 15 bytes (offset 8, length 4, volume 2, op 1).
 *
 * Whatever the input, the scan and placement either refuse it (an input error) or map
 * every record inside its volume's slice, inside the region, aligned to the block: no
 * arithmetic may wrap, divide by zero, or place an I/O outside the region.
 */
#include "trace/replay/replay_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct mem_records {
    const unsigned char *p;
    size_t n, next;
} mem_records;

enum { HEADER = 17, RECORD = 15 };

static uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int mr_next(tr_source *s, tr_record *r)
{
    mem_records *m = s->ctx;
    if (m->next >= m->n) return 0;
    const unsigned char *p = m->p + m->next * RECORD;
    memset(r, 0, sizeof *r);
    r->time_ns = m->next;
    r->offset = le64(p);
    r->length =
        (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
    r->volume = (uint32_t)(p[12] | p[13] << 8);
    r->op = p[14] % 4;
    r->latency_ns = TR_LATENCY_UNKNOWN;
    r->pos = ++m->next;
    return 1;
}

static int mr_rewind(tr_source *s)
{
    ((mem_records *)s->ctx)->next = 0;
    return 0;
}

static const char *mr_error(const tr_source *s)
{
    (void)s;
    return "no error";
}

static void mr_close(tr_source *s)
{
    (void)s;
}

static const tr_source_ops mr_ops = {mr_next, mr_rewind, mr_error, mr_close};

static void check_all(tr_source *src, tr_place *pl, uint64_t lo, uint64_t hi)
{
    tr_record r;
    while (tr_next(src, &r) == 1) {
        uint64_t off;
        uint32_t len;
        tr_place_map(pl, &r, &off, &len);
        if (r.op == TR_FLUSH) {
            if (len != 0) abort();
            continue;
        }
        if (off < lo || off > hi || len > hi - off) abort(); /* outside the region */
        if (r.length > 0 && len == 0) abort();               /* an I/O lost */
        if (pl->block > 1 && (off % pl->block || len % pl->block)) abort();
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static const uint32_t blocks[] = {1, 512, 4096, 65536};
    if (size < HEADER) return 0;
    tr_map map = (tr_map)(data[0] % 3);
    uint32_t block = blocks[(data[0] >> 2) % 4];
    uint64_t region_offset = le64(data + 1), region_length = le64(data + 9);
    mem_records m = {data + HEADER, (size - HEADER) / RECORD, 0};
    tr_source src = {&mr_ops, &m};
    char err[1024];
    tr_scan scan;
    if (tr_scan_source(&src, &scan, err, sizeof err)) return 0;
    uint64_t need;
    if (tr_replay_needed_size(&scan, block, &need) == 0 && (need == 0 || need % block)) abort();
    tr_place pl;
    if (tr_place_init(&pl, &scan, map, block, region_offset, region_length, err, sizeof err) == 0) {
        /* The usable region: whole blocks from region_offset. */
        uint64_t hi = region_offset + (region_length - region_length % block);
        for (uint32_t i = 0; i < pl.nvol; i++) {
            const tr_place_vol *v = &pl.vols[i];
            if (v->size == 0 || v->base < region_offset || v->base > hi || v->size > hi - v->base)
                abort(); /* a slice outside the region */
        }
        check_all(&src, &pl, region_offset, hi);
        json_decref(tr_place_json(&pl));
        tr_place_free(&pl);
    }
    tr_scan_free(&scan);
    return 0;
}
