/*
 * trace/lib/fmt_tencent.c: Tencent CBS block trace CSV (SNIA IOTTA 2018 release):
 *   Timestamp,Offset,Size,IOType,VolumeID
 * Timestamp in epoch seconds, Offset and Size in 512-byte sectors, IOType 0 = read and
 * 1 = write. Rows are not in time order within a second; the sort window handles it.
 */
#include "trace/lib/lib_internal.h"

#include <strings.h>

static int tencent_parse(tr_parse *p, char *line, size_t len, tr_record *r)
{
    char *f[6];
    if (!strncasecmp(line, "Timestamp,Offset", 16)) return TR_PARSE_NONE;
    int n = tr_split(line, ',', f, 5);
    if (n != 5)
        return tr_parse_fail(p,
                             "expected 5 comma-separated fields "
                             "(Timestamp,Offset,Size,IOType,VolumeID), found %s%d",
                             n > 5 ? "more than " : "", n > 5 ? 5 : n);
    uint64_t ts, off, size, type, vol;
    if (tr_field_u64(f[0], &ts) || ts > UINT64_MAX / 1000000000ull)
        return tr_parse_fail(p, "bad Timestamp '%s' (epoch seconds expected)", f[0]);
    if (tr_field_u64(f[1], &off) || off > UINT64_MAX / 512)
        return tr_parse_fail(p, "bad Offset '%s' (sectors expected)", f[1]);
    if (tr_field_u64(f[2], &size) || size > UINT32_MAX / 512)
        return tr_parse_fail(p, "bad Size '%s' (sectors expected)", f[2]);
    if (tr_field_u64(f[3], &type) || type > 1)
        return tr_parse_fail(p, "bad IOType '%s' (0 = read, 1 = write)", f[3]);
    if (tr_field_u64(f[4], &vol) || vol > UINT32_MAX)
        return tr_parse_fail(p, "bad VolumeID '%s'", f[4]);
    r->time_ns = ts * 1000000000ull;
    r->offset = off * 512;
    r->length = (uint32_t)(size * 512);
    r->op = type ? TR_WRITE : TR_READ;
    r->volume = (uint32_t)vol;
    return TR_PARSE_RECORD;
}

static const tr_format tencent_format = {
    .name = "tencent",
    .description = "Tencent CBS CSV (Timestamp s,Offset,Size sectors,IOType 0/1,VolumeID)",
    .text = true,
    .parse_line = tencent_parse,
};
TR_REGISTER_FORMAT(tencent_format);
