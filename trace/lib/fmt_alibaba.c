/*
 * trace/lib/fmt_alibaba.c: Alibaba cloud block trace CSV (2020 release):
 *   device_id,opcode,offset,length,timestamp
 * opcode R or W, offset and length in bytes, timestamp in microseconds. The volume is
 * the device id.
 */
#include "trace/lib/lib_internal.h"

#include <strings.h>

static int alibaba_parse(tr_parse *p, char *line, size_t len, tr_record *r)
{
    char *f[6];
    if (!strncasecmp(line, "device_id,", 10)) return TR_PARSE_NONE;
    int n = tr_split(line, ',', f, 5);
    if (n != 5)
        return tr_parse_fail(p,
                             "expected 5 comma-separated fields "
                             "(device_id,opcode,offset,length,timestamp), found %s%d",
                             n > 5 ? "more than " : "", n > 5 ? 5 : n);
    uint64_t dev, off, size, ts;
    if (tr_field_u64(f[0], &dev) || dev > UINT32_MAX)
        return tr_parse_fail(p, "bad device_id '%s'", f[0]);
    if (!strcasecmp(f[1], "R"))
        r->op = TR_READ;
    else if (!strcasecmp(f[1], "W"))
        r->op = TR_WRITE;
    else
        return tr_parse_fail(p, "bad opcode '%s' (R or W expected)", f[1]);
    if (tr_field_u64(f[2], &off)) return tr_parse_fail(p, "bad offset '%s'", f[2]);
    if (tr_field_u64(f[3], &size) || size > UINT32_MAX)
        return tr_parse_fail(p, "bad length '%s'", f[3]);
    if (tr_field_u64(f[4], &ts) || ts > UINT64_MAX / 1000)
        return tr_parse_fail(p, "bad timestamp '%s' (microseconds expected)", f[4]);
    r->volume = (uint32_t)dev;
    r->offset = off;
    r->length = (uint32_t)size;
    r->time_ns = ts * 1000;
    return TR_PARSE_RECORD;
}

static const tr_format alibaba_format = {
    .name = "alibaba",
    .description = "Alibaba block trace CSV (device_id,opcode,offset,length,timestamp us)",
    .text = true,
    .parse_line = alibaba_parse,
};
TR_REGISTER_FORMAT(alibaba_format);
