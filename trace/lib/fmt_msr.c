/*
 * trace/lib/fmt_msr.c: SNIA MSR Cambridge CSV, no header:
 *   Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
 * Timestamp and ResponseTime in Windows FILETIME ticks (100 ns); Type Read or Write;
 * Offset and Size in bytes. The volume is the disk number.
 */
#include "trace/lib/lib_internal.h"

#include <strings.h>

static int msr_parse(tr_parse *p, char *line, size_t len, tr_record *r)
{
    char *f[8];
    if (!strncasecmp(line, "Timestamp,", 10)) return TR_PARSE_NONE; /* a header some tools add */
    int n = tr_split(line, ',', f, 7);
    if (n != 7)
        return tr_parse_fail(p,
                             "expected 7 comma-separated fields "
                             "(Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), "
                             "found %s%d",
                             n > 7 ? "more than " : "", n > 7 ? 7 : n);
    uint64_t ts, disk, off, size, resp;
    if (tr_field_u64(f[0], &ts) || ts > UINT64_MAX / 100)
        return tr_parse_fail(p, "bad Timestamp '%s' (FILETIME ticks expected)", f[0]);
    if (tr_field_u64(f[2], &disk) || disk > UINT32_MAX)
        return tr_parse_fail(p, "bad DiskNumber '%s'", f[2]);
    if (!strcasecmp(f[3], "Read"))
        r->op = TR_READ;
    else if (!strcasecmp(f[3], "Write"))
        r->op = TR_WRITE;
    else
        return tr_parse_fail(p, "bad Type '%s' (Read or Write expected)", f[3]);
    if (tr_field_u64(f[4], &off)) return tr_parse_fail(p, "bad Offset '%s'", f[4]);
    if (tr_field_u64(f[5], &size) || size > UINT32_MAX)
        return tr_parse_fail(p, "bad Size '%s'", f[5]);
    if (tr_field_u64(f[6], &resp) || resp > UINT64_MAX / 100)
        return tr_parse_fail(p, "bad ResponseTime '%s'", f[6]);
    r->time_ns = ts * 100;
    r->volume = (uint32_t)disk;
    r->offset = off;
    r->length = (uint32_t)size;
    r->latency_ns = resp * 100;
    return TR_PARSE_RECORD;
}

static const tr_format msr_format = {
    .name = "msr",
    .description = "SNIA MSR Cambridge CSV (FILETIME ticks, DiskNumber volumes)",
    .text = true,
    .parse_line = msr_parse,
};
TR_REGISTER_FORMAT(msr_format);
