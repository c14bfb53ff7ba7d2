/*
 * trace/scan.c: one pass over a source to learn what placement needs before the first
 * I/O: the volumes and how far into each the trace reaches, the largest I/O, the
 * duration. Memory grows with the number of volumes only.
 */
#include "trace/trace_internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_vol(const void *a, const void *b)
{
    const tr_volume_span *x = a, *y = b;
    return x->volume < y->volume ? -1 : x->volume > y->volume;
}

int tr_scan_source(tr_source *src, tr_scan *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (tr_rewind(src) < 0) {
        snprintf(err, errlen, "%s", tr_error(src));
        return SIM_EXIT_FAIL;
    }
    tr_volmap map = {0};
    uint32_t cap = 0;
    tr_record r;
    int rc;
    while ((rc = tr_next(src, &r)) == TR_NEXT_RECORD) {
        out->records++;
        out->duration_ns = r.time_ns;
        if (r.length > out->max_length) {
            out->max_length = r.length;
            out->max_pos = r.pos;
            out->max_n = out->records;
        }
        uint32_t i = tr_volmap_get(&map, r.volume);
        if (i == UINT32_MAX) goto oom;
        if (i == out->nvolumes) {
            if (i == cap) {
                cap = cap ? cap * 2 : 16;
                tr_volume_span *v = realloc(out->volumes, cap * sizeof *v);
                if (!v) goto oom;
                out->volumes = v;
            }
            out->volumes[i] = (tr_volume_span){r.volume, 0, 0, 0};
            out->nvolumes++;
        }
        if (r.op == TR_FLUSH) continue;
        if (r.offset > TR_MAX_EXTENT || r.length > TR_MAX_EXTENT - r.offset) {
            char at[600];
            tr_source_where(src, r.pos, out->records, at, sizeof at);
            snprintf(err, errlen,
                     "%s: an I/O of %u bytes at offset %llu reaches past %llu bytes, the most a "
                     "file or device can address: the trace is damaged or not in this format",
                     at, r.length, (unsigned long long)r.offset, (unsigned long long)TR_MAX_EXTENT);
            rc = SIM_EXIT_USAGE;
            break;
        }
        uint64_t end = r.offset + r.length;
        if (end > out->volumes[i].end)
            out->volumes[i] = (tr_volume_span){r.volume, end, r.pos, out->records};
    }
    if (rc == SIM_EXIT_USAGE) {
        tr_volmap_free(&map);
        tr_scan_free(out);
        return rc;
    }
    tr_volmap_free(&map);
    if (rc < 0) {
        snprintf(err, errlen, "%s", tr_error(src));
        tr_scan_free(out);
        return SIM_EXIT_USAGE;
    }
    if (out->nvolumes > 1) qsort(out->volumes, out->nvolumes, sizeof *out->volumes, cmp_vol);
    for (uint32_t i = 0; i < out->nvolumes; i++) {
        const tr_volume_span *v = &out->volumes[i];
        if (v->end > TR_MAX_EXTENT - out->span) {
            char at[600];
            tr_source_where(src, v->end_pos, v->end_n, at, sizeof at);
            snprintf(err, errlen,
                     "%s: volume %u reaches %llu bytes, and with the trace's other volumes laid "
                     "side by side the trace needs more than %llu bytes, the most a file or "
                     "device can address: replay one volume (--volume) or fix the trace",
                     at, v->volume, (unsigned long long)v->end, (unsigned long long)TR_MAX_EXTENT);
            tr_scan_free(out);
            return SIM_EXIT_USAGE;
        }
        out->span += v->end;
    }
    if (tr_rewind(src) < 0) {
        snprintf(err, errlen, "%s", tr_error(src));
        tr_scan_free(out);
        return SIM_EXIT_FAIL;
    }
    return SIM_EXIT_OK;
oom:
    tr_volmap_free(&map);
    tr_scan_free(out);
    snprintf(err, errlen, "out of memory while scanning the trace");
    return SIM_EXIT_FAIL;
}

void tr_scan_free(tr_scan *s)
{
    free(s->volumes);
    memset(s, 0, sizeof *s);
}
