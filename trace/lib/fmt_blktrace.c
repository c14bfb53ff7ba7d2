/*
 * trace/lib/fmt_blktrace.c: blktrace's binary event stream (struct blk_io_trace, 48
 * bytes, followed by pdu_len bytes of payload), in either byte order: the magic
 * 0x65617407 (magic 0x656174 plus version 7) tells which. As for blkparse text, only
 * issue events (__BLK_TA_ISSUE) become records, with the operation from the category
 * bits, and their completions (__BLK_TA_COMPLETE) give the captured response time
 * (trace/lib/pair.c); notify events, other actions and their payloads are skipped.
 * Layout: u32 magic, u32 sequence, u64 time (ns), u64 sector, u32 bytes, u32 action,
 * u32 pid, u32 device, u32 cpu, u16 error, u16 pdu_len.
 */
#include "trace/lib/pair_internal.h"

#include <string.h>

#define BLK_MAGIC 0x65617400u
#define BLK_VERSION 0x07u
#define TA_ISSUE 7u
#define TA_COMPLETE 8u
#define TC_READ (1u << 0)
#define TC_WRITE (1u << 1)
#define TC_FLUSH (1u << 2)
#define TC_NOTIFY (1u << 10)
#define TC_DISCARD (1u << 13)

typedef struct blktrace_state {
    int order; /* 0 = unknown, 1 = little endian, 2 = big endian */
    tr_pair *pair;
} blktrace_state;

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t ld32(int order, const unsigned char *p)
{
    return order == 2 ? be32(p) : tr_le32(p);
}

static uint64_t ld64(int order, const unsigned char *p)
{
    return order == 2 ? (uint64_t)be32(p) << 32 | be32(p + 4) : tr_le64(p);
}

static uint16_t ld16(int order, const unsigned char *p)
{
    return order == 2 ? (uint16_t)(p[0] << 8 | p[1]) : tr_le16(p);
}

static int byte_order(const unsigned char *b)
{
    if (tr_le32(b) == (BLK_MAGIC | BLK_VERSION)) return 1;
    if (be32(b) == (BLK_MAGIC | BLK_VERSION)) return 2;
    return 0;
}

static int blktrace_probe(const unsigned char *b, size_t len)
{
    return len >= 48 && byte_order(b) ? 100 : 0;
}

static int blktrace_parse(tr_parse *p, tr_record *r)
{
    blktrace_state *st = (blktrace_state *)p->state;
    int end;
    const unsigned char *b = tr_parse_record(p, 48, &end);
    if (!b) return end ? TR_PARSE_END : TR_PARSE_BAD;
    int order = byte_order(b);
    if (!order) {
        p->fatal = 1; /* without the magic we cannot find the next event */
        return tr_parse_fail(p, "bad blktrace magic 0x%08x (expected 0x%08x)", tr_le32(b),
                             BLK_MAGIC | BLK_VERSION);
    }
    if (!st->order) st->order = order;
    uint16_t pdu = ld16(order, b + 46);
    if (!tr_parse_record(p, 48u + pdu, &end)) {
        if (!p->fatal) p->fatal = 1, tr_parse_fail(p, "truncated event payload");
        return TR_PARSE_BAD;
    }
    b = tr_parse_record(p, 48u + pdu, &end);
    uint64_t time = ld64(order, b + 8), sector = ld64(order, b + 16);
    uint32_t bytes = ld32(order, b + 24), action = ld32(order, b + 28);
    uint32_t dev = ld32(order, b + 36);
    tr_parse_skip(p, 48u + pdu);
    uint32_t act = action & 0xffff, cat = action >> 16;
    if (cat & TC_NOTIFY) return TR_PARSE_NONE;
    if (act == TA_COMPLETE) {
        /* The response time of the issue it completes (trace/lib/pair.c). */
        if (st->pair) tr_pair_complete(st->pair, dev, sector, time);
        return TR_PARSE_NONE;
    }
    if (act != TA_ISSUE) return TR_PARSE_NONE;
    if (cat & TC_DISCARD)
        r->op = TR_DISCARD;
    else if (cat & TC_WRITE)
        r->op = TR_WRITE;
    else if (bytes == 0 && (cat & TC_FLUSH))
        r->op = TR_FLUSH;
    else if (cat & TC_READ || bytes > 0)
        r->op = TR_READ;
    else
        return TR_PARSE_NONE;
    if (sector > UINT64_MAX / 512)
        return tr_parse_fail(p, "sector %llu out of range", (unsigned long long)sector);
    r->time_ns = time;
    r->offset = sector * 512;
    r->length = r->op == TR_FLUSH ? 0 : bytes;
    r->volume = dev;
    if (r->offset > UINT64_MAX - r->length)
        return tr_parse_fail(p, "I/O of %u bytes at sector %llu is out of range", bytes,
                             (unsigned long long)sector);
    if (tr_pair_issue(tr_pair_get(&st->pair), r, sector) < 0)
        return TR_PARSE_RECORD; /* too many held to pair: it goes out without its response time */
    return TR_PARSE_HELD;
}

static int blktrace_held(tr_parse *p, tr_record *out, bool end)
{
    return tr_pair_next(((blktrace_state *)p->state)->pair, out, end);
}

static void blktrace_reset(tr_parse *p)
{
    tr_pair_free(&((blktrace_state *)p->state)->pair);
}

static const tr_format blktrace_format = {
    .name = "blktrace",
    .description = "blktrace binary events (struct blk_io_trace, issue events)",
    .text = false,
    .parse_bin = blktrace_parse,
    .probe = blktrace_probe,
    .held = blktrace_held,
    .reset = blktrace_reset,
};
TR_REGISTER_FORMAT(blktrace_format);
