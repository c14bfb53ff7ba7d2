/*
 * trace/lib/fmt_appsim.c: appsim's own compact binary trace, for fast repeated replays.
 *
 * Layout (little endian), version 1:
 *   header, 32 bytes: "APPSIMTR", u16 major (1), u16 minor (0), u32 header size (32),
 *                     u64 record count (0 = not known when written), u64 flags (0)
 *   records, each:    u8 tag: bits 0-1 op, bit 2 latency present, bit 3 volume changed,
 *                     bit 4 offset = end of the previous record; bits 5-7 zero
 *                     varint time delta (ns since the previous record)
 *                     [varint volume] [varint offset] varint length [varint latency]
 *   end:              u8 0xff, u64 record count
 * Varints are LEB128 (7 bits a byte, at most 10 bytes). Records are in time order by
 * construction (a delta cannot be negative). A file without its end marker is a
 * truncated file and is reported as such. A reader refuses a major version it does
 * not know; minor versions only add header fields after the 32 bytes.
 */
#include "trace/lib/lib_internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "APPSIMTR"
#define MAJOR 1
#define TAG_LAT 0x04u
#define TAG_VOL 0x08u
#define TAG_SEQ 0x10u
#define TAG_END 0xffu

typedef struct appsim_state {
    int header_done, ended;
    uint64_t time, prev_end, count;
    uint32_t volume;
} appsim_state;

static int appsim_probe(const unsigned char *b, size_t len)
{
    return len >= 8 && !memcmp(b, MAGIC, 8) ? 100 : 0;
}

/* Decodes a varint from [*pp, end); 0 or -1. */
static inline int varint(const unsigned char **pp, const unsigned char *end, uint64_t *v)
{
    const unsigned char *p = *pp;
    uint64_t x = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (p == end) return SIM_ERR;
        unsigned char c = *p++;
        if (shift == 63 && c > 1) return SIM_ERR;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *pp = p;
            *v = x;
            return SIM_OK;
        }
    }
    return SIM_ERR;
}

static int header(tr_parse *p, appsim_state *st)
{
    int end;
    const unsigned char *b = tr_parse_record(p, 32, &end);
    if (!b) {
        p->fatal = 1;
        return end ? tr_parse_fail(p, "empty file: no appsim trace header") : SIM_ERR;
    }
    if (memcmp(b, MAGIC, 8)) {
        p->fatal = 1;
        return tr_parse_fail(p, "not an appsim trace (bad magic)");
    }
    uint16_t major = tr_le16(b + 8);
    uint32_t hsize = tr_le32(b + 12);
    if (major != MAJOR) {
        p->fatal = 1;
        return tr_parse_fail(p,
                             "appsim trace version %u; this appsim reads version %d "
                             "(convert it again with this appsim)",
                             major, MAJOR);
    }
    if (hsize < 32 || hsize > 4096) {
        p->fatal = 1;
        return tr_parse_fail(p, "bad header size %u", hsize);
    }
    if (!tr_parse_record(p, hsize, &end)) {
        p->fatal = 1;
        return tr_parse_fail(p, "truncated header");
    }
    tr_parse_skip(p, hsize);
    st->header_done = 1;
    return SIM_OK;
}

static int appsim_parse(tr_parse *p, tr_record *r)
{
    appsim_state *st = (appsim_state *)p->state;
    if (!st->header_done && header(p, st) < 0) return TR_PARSE_BAD;
    p->rec_offset = p->base + p->start;
    if (st->ended) return TR_PARSE_END;
    size_t avail;
    const unsigned char *b = tr_parse_peek(p, 64, &avail);
    if (!b) {
        if (avail == SIZE_MAX) return TR_PARSE_BAD;
        if (avail == 0) {
            p->fatal = 1;
            return tr_parse_fail(p, "truncated file: no end marker after %llu records",
                                 (unsigned long long)st->count);
        }
        b = p->buf + p->start;
    }
    const unsigned char *e = b + avail, *q = b;
    unsigned tag = *q++;
    if (tag == TAG_END) {
        if (avail < 9) {
            p->fatal = 1;
            return tr_parse_fail(p, "truncated end marker");
        }
        uint64_t n = tr_le64(q);
        tr_parse_skip(p, 9);
        st->ended = 1;
        if (n != st->count) {
            p->fatal = 1;
            return tr_parse_fail(p, "end marker says %llu records, %llu were read",
                                 (unsigned long long)n, (unsigned long long)st->count);
        }
        return TR_PARSE_END;
    }
    p->fatal = 1; /* a broken varint stream cannot be resynchronised */
    if (tag & 0xe0) return tr_parse_fail(p, "bad record tag 0x%02x", tag);
    uint64_t dt, vol = st->volume, off = st->prev_end, len, lat = TR_LATENCY_UNKNOWN;
    if (varint(&q, e, &dt) || dt > UINT64_MAX - st->time) return tr_parse_fail(p, "bad time delta");
    if ((tag & TAG_VOL) && (varint(&q, e, &vol) || vol > UINT32_MAX))
        return tr_parse_fail(p, "bad volume");
    if (!(tag & TAG_SEQ) && varint(&q, e, &off)) return tr_parse_fail(p, "bad offset");
    if (varint(&q, e, &len) || len > UINT32_MAX || off > UINT64_MAX - len)
        return tr_parse_fail(p, "bad length");
    if ((tag & TAG_LAT) && varint(&q, e, &lat)) return tr_parse_fail(p, "bad latency");
    p->fatal = 0;
    tr_parse_skip(p, (size_t)(q - b));
    st->time += dt;
    st->volume = (uint32_t)vol;
    st->prev_end = off + len;
    st->count++;
    r->op = tag & 3;
    r->time_ns = st->time;
    r->volume = (uint32_t)vol;
    r->offset = off;
    r->length = (uint32_t)len;
    r->latency_ns = lat;
    return TR_PARSE_RECORD;
}

static int put_varint(FILE *f, uint64_t v)
{
    unsigned char b[10];
    int n = 0;
    do {
        b[n] = v & 0x7f;
        v >>= 7;
        if (v) b[n] |= 0x80;
        n++;
    } while (v);
    return fwrite(b, 1, (size_t)n, f) == (size_t)n ? SIM_OK : SIM_ERR;
}

static void put_le(unsigned char *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static int appsim_begin(tr_emit *e)
{
    unsigned char h[32] = {0};
    memcpy(h, MAGIC, 8);
    put_le(h + 8, MAJOR, 2);
    put_le(h + 10, 0, 2);
    put_le(h + 12, 32, 4);
    e->header_pos = e->seekable ? ftell(e->f) : -1;
    e->prev_time = 0;
    e->prev_end = 0;
    e->prev_volume = 0;
    return fwrite(h, 1, 32, e->f) == 32 ? SIM_OK : SIM_ERR;
}

static int appsim_record(tr_emit *e, const tr_record *r)
{
    if (r->time_ns < e->prev_time) {
        snprintf(e->why, sizeof e->why, "records must be in time order");
        errno = EINVAL;
        return SIM_ERR;
    }
    unsigned tag = r->op & 3;
    if (r->latency_ns != TR_LATENCY_UNKNOWN) tag |= TAG_LAT;
    if (r->volume != e->prev_volume) tag |= TAG_VOL;
    if (r->offset == e->prev_end) tag |= TAG_SEQ;
    if (fputc((int)tag, e->f) == EOF || put_varint(e->f, r->time_ns - e->prev_time)) return SIM_ERR;
    if ((tag & TAG_VOL) && put_varint(e->f, r->volume)) return SIM_ERR;
    if (!(tag & TAG_SEQ) && put_varint(e->f, r->offset)) return SIM_ERR;
    if (put_varint(e->f, r->length)) return SIM_ERR;
    if ((tag & TAG_LAT) && put_varint(e->f, r->latency_ns)) return SIM_ERR;
    e->prev_time = r->time_ns;
    e->prev_end = r->offset + r->length;
    e->prev_volume = r->volume;
    return SIM_OK;
}

static int appsim_end(tr_emit *e)
{
    unsigned char t[9];
    t[0] = TAG_END;
    put_le(t + 1, e->records, 8);
    if (fwrite(t, 1, 9, e->f) != 9) return SIM_ERR;
    if (e->seekable && e->header_pos >= 0) {
        /* The count in the header lets `trace info` say the size before reading. */
        unsigned char c[8];
        put_le(c, e->records, 8);
        long here = ftell(e->f);
        if (fseek(e->f, e->header_pos + 16, SEEK_SET) || fwrite(c, 1, 8, e->f) != 8 ||
            fseek(e->f, here, SEEK_SET))
            return SIM_ERR;
    }
    return SIM_OK;
}

static const tr_format appsim_format = {
    .name = "appsim",
    .description = "appsim compact binary trace, version 1 (fast to replay again)",
    .text = false,
    .sorted = true,
    .parse_bin = appsim_parse,
    .probe = appsim_probe,
    .write_begin = appsim_begin,
    .write_record = appsim_record,
    .write_end = appsim_end,
};
TR_REGISTER_FORMAT(appsim_format);
