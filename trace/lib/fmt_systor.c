/*
 * trace/lib/fmt_systor.c: SNIA SYSTOR '17 CSV with its header row:
 *   Timestamp,Response,IOType,LUN,Offset,Size
 * Timestamp in epoch seconds with a fraction (parsed exactly to the ns), Response in
 * seconds, IOType R or W, Offset and Size in bytes. Rows are not strictly in time
 * order: the source's sort window restores it. The volume is the LUN.
 */
#include "trace/lib/lib_internal.h"

#include <strings.h>

static int systor_parse(tr_parse *p, char *line, size_t len, tr_record *r)
{
    char *f[7];
    if (!strncasecmp(line, "Timestamp,Response", 18)) return TR_PARSE_NONE;
    int n = tr_split(line, ',', f, 6);
    if (n != 6)
        return tr_parse_fail(p,
                             "expected 6 comma-separated fields "
                             "(Timestamp,Response,IOType,LUN,Offset,Size), found %s%d",
                             n > 6 ? "more than " : "", n > 6 ? 6 : n);
    uint64_t ts, resp, lun, off, size;
    if (tr_field_decimal(f[0], 1000000000ull, &ts))
        return tr_parse_fail(p, "bad Timestamp '%s' (seconds expected)", f[0]);
    if (f[1][0] == 0)
        resp = TR_LATENCY_UNKNOWN;
    else if (tr_field_decimal(f[1], 1000000000ull, &resp))
        return tr_parse_fail(p, "bad Response '%s' (seconds expected)", f[1]);
    if (!strcasecmp(f[2], "R"))
        r->op = TR_READ;
    else if (!strcasecmp(f[2], "W"))
        r->op = TR_WRITE;
    else
        return tr_parse_fail(p, "bad IOType '%s' (R or W expected)", f[2]);
    if (tr_field_u64(f[3], &lun) || lun > UINT32_MAX) return tr_parse_fail(p, "bad LUN '%s'", f[3]);
    if (tr_field_u64(f[4], &off)) return tr_parse_fail(p, "bad Offset '%s'", f[4]);
    if (tr_field_u64(f[5], &size) || size > UINT32_MAX)
        return tr_parse_fail(p, "bad Size '%s'", f[5]);
    r->time_ns = ts;
    r->latency_ns = resp;
    r->volume = (uint32_t)lun;
    r->offset = off;
    r->length = (uint32_t)size;
    return TR_PARSE_RECORD;
}

static const tr_format systor_format = {
    .name = "systor",
    .description = "SNIA SYSTOR '17 CSV (header row, LUN volumes, unsorted rows)",
    .text = true,
    .parse_line = systor_parse,
};
TR_REGISTER_FORMAT(systor_format);
