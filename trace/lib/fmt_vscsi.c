/*
 * trace/lib/fmt_vscsi.c: CloudPhysics / VMware vscsi binary traces, little endian.
 *   v1, 32 bytes: u32 serial, u32 length, u32 sg entries, u16 SCSI command, u16 version,
 *                 u64 logical block (512-byte sectors), u64 timestamp (us)
 *   v2, 40 bytes: u16 command, u16 version, u32 serial, u32 length, u32 sg entries,
 *                 u64 logical block, u64 timestamp (us), u64 response time (us)
 * The version's high byte is 1 or 2; the first record decides. READ/WRITE(6/10/12/16)
 * become reads and writes, SYNCHRONIZE CACHE a flush; other commands are non-I/O.
 */
#include "trace/lib/lib_internal.h"

typedef struct vscsi_state {
    int version;
} vscsi_state;

static int version_of(const unsigned char *b, size_t len)
{
    if (len >= 32 && tr_le16(b + 14) >> 8 == 1) return 1;
    if (len >= 40 && tr_le16(b + 2) >> 8 == 2) return 2;
    return 0;
}

static int vscsi_probe(const unsigned char *b, size_t len)
{
    int v = version_of(b, len);
    if (!v) return 0;
    /* A few records of the same version with SCSI opcodes that make sense. */
    size_t rs = v == 1 ? 32 : 40;
    int good = 0;
    for (size_t off = 0; off + rs <= len && good < 8; off += rs) {
        const unsigned char *r = b + off;
        if (version_of(r, rs) != v) return 0;
        uint16_t cmd = v == 1 ? tr_le16(r + 12) : tr_le16(r);
        if (cmd > 0xff) return 0;
        good++;
    }
    return good >= 1 ? 20 + 10 * (good > 4 ? 4 : good) : 0;
}

static int vscsi_parse(tr_parse *p, tr_record *r)
{
    vscsi_state *st = (vscsi_state *)p->state;
    int end;
    size_t avail;
    if (!st->version) {
        const unsigned char *b = tr_parse_peek(p, 40, &avail);
        if (!b && avail == SIZE_MAX) return TR_PARSE_BAD;
        if (!b && avail == 0) return TR_PARSE_END;
        b = p->buf + p->start;
        st->version = version_of(b, p->end - p->start);
        if (!st->version) {
            p->fatal = 1;
            return tr_parse_fail(p, "not a vscsi trace (version byte is neither 1 nor 2)");
        }
    }
    size_t rs = st->version == 1 ? 32 : 40;
    const unsigned char *b = tr_parse_record(p, rs, &end);
    if (!b) return end ? TR_PARSE_END : TR_PARSE_BAD;
    uint16_t cmd, ver;
    uint32_t len;
    uint64_t lbn, ts, rt = TR_LATENCY_UNKNOWN;
    if (st->version == 1) {
        len = tr_le32(b + 4);
        cmd = tr_le16(b + 12);
        ver = tr_le16(b + 14);
        lbn = tr_le64(b + 16);
        ts = tr_le64(b + 24);
    } else {
        cmd = tr_le16(b);
        ver = tr_le16(b + 2);
        len = tr_le32(b + 8);
        lbn = tr_le64(b + 16);
        ts = tr_le64(b + 24);
        rt = tr_le64(b + 32);
    }
    tr_parse_skip(p, rs);
    if (ver >> 8 != st->version)
        return tr_parse_fail(p, "record version %u in a version %d trace", ver >> 8, st->version);
    switch (cmd) {
    case 0x08:
    case 0x28:
    case 0xa8:
    case 0x88:
        r->op = TR_READ;
        break;
    case 0x0a:
    case 0x2a:
    case 0xaa:
    case 0x8a:
        r->op = TR_WRITE;
        break;
    case 0x35:
    case 0x91:
        r->op = TR_FLUSH;
        break;
    default:
        return TR_PARSE_NONE;
    }
    if (lbn > UINT64_MAX / 512 || ts > UINT64_MAX / 1000)
        return tr_parse_fail(p, "block or timestamp out of range");
    r->time_ns = ts * 1000;
    r->offset = r->op == TR_FLUSH ? 0 : lbn * 512;
    r->length = r->op == TR_FLUSH ? 0 : len;
    r->latency_ns =
        rt != TR_LATENCY_UNKNOWN && rt <= UINT64_MAX / 1000 ? rt * 1000 : TR_LATENCY_UNKNOWN;
    r->volume = 0;
    return TR_PARSE_RECORD;
}

static const tr_format vscsi_format = {
    .name = "vscsi",
    .description = "CloudPhysics/VMware vscsi binary, versions 1 and 2",
    .text = false,
    .parse_bin = vscsi_parse,
    .probe = vscsi_probe,
};
TR_REGISTER_FORMAT(vscsi_format);
