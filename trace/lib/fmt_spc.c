/*
 * trace/lib/fmt_spc.c: SPC / UMass trace repository CSV:
 *   ASU,LBA,Size,Opcode,Timestamp[,more fields ignored]
 * LBA in 512-byte sectors, Size in bytes, Opcode r/R or w/W, Timestamp in seconds with
 * a fraction. The volume is the ASU (application specific unit).
 */
#include "trace/lib/lib_internal.h"

#include <strings.h>

static int spc_parse(tr_parse *p, char *line, size_t len, tr_record *r)
{
    char *f[9];
    if (!strncasecmp(line, "ASU,", 4)) return TR_PARSE_NONE;
    int n = tr_split(line, ',', f, 8);
    if (n < 5)
        return tr_parse_fail(p,
                             "expected at least 5 comma-separated fields "
                             "(ASU,LBA,Size,Opcode,Timestamp), found %d",
                             n);
    uint64_t asu, lba, size, ts;
    if (tr_field_u64(f[0], &asu) || asu > UINT32_MAX) return tr_parse_fail(p, "bad ASU '%s'", f[0]);
    if (tr_field_u64(f[1], &lba) || lba > UINT64_MAX / 512)
        return tr_parse_fail(p, "bad LBA '%s'", f[1]);
    if (tr_field_u64(f[2], &size) || size > UINT32_MAX)
        return tr_parse_fail(p, "bad Size '%s'", f[2]);
    if (!strcasecmp(f[3], "r"))
        r->op = TR_READ;
    else if (!strcasecmp(f[3], "w"))
        r->op = TR_WRITE;
    else
        return tr_parse_fail(p, "bad Opcode '%s' (r or w expected)", f[3]);
    if (tr_field_decimal(f[4], 1000000000ull, &ts))
        return tr_parse_fail(p, "bad Timestamp '%s' (seconds expected)", f[4]);
    r->volume = (uint32_t)asu;
    r->offset = lba * 512;
    r->length = (uint32_t)size;
    r->time_ns = ts;
    return TR_PARSE_RECORD;
}

static const tr_format spc_format = {
    .name = "spc",
    .description = "SPC / UMass CSV (ASU,LBA,Size,Opcode,Timestamp; ASU volumes)",
    .text = true,
    .parse_line = spc_parse,
};
TR_REGISTER_FORMAT(spc_format);
