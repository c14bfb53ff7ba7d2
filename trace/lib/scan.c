/*
 * trace/lib/scan.c: one pass over a source to learn what placement needs before the first
 * I/O: the volumes and how far into each the trace reaches, the largest I/O, the
 * duration, whether every I/O is aligned. Memory grows with the number of volumes only.
 */
#include "trace/lib/lib_internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_vol(const void *a, const void *b)
{
    const tr_volume_span *x = a, *y = b;
    return x->volume < y->volume ? -1 : x->volume > y->volume;
}

/* The scan's index of a volume (a new one gets its slot). */
static uint32_t volume_slot(tr_scan *out, tr_volmap *map, uint32_t *cap, uint32_t volume)
{
    uint32_t i = tr_volmap_get(map, volume);
    if (i < out->nvolumes) return i;
    if (i == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        out->volumes = sim_xrealloc(out->volumes, *cap * sizeof *out->volumes);
    }
    out->volumes[i] = (tr_volume_span){volume, 0, 0, 0};
    out->nvolumes++;
    return i;
}

/* Every record once: counts, the largest I/O, each volume's end. An exit status with
 * err: an I/O past TR_MAX_EXTENT or an unreadable trace is the user's to fix. */
static int scan_records(tr_source *src, tr_scan *out, char *err, size_t errlen)
{
    tr_volmap map = {0};
    uint32_t cap = 0;
    tr_record r;
    int got = TR_NEXT_END, rc = SIM_EXIT_OK;
    while (rc == SIM_EXIT_OK && (got = tr_next(src, &r)) == TR_NEXT_RECORD) {
        out->records++;
        out->duration_ns = r.time_ns;
        if (r.length > out->max_length) {
            out->max_length = r.length;
            out->max_pos = r.pos;
            out->max_n = out->records;
        }
        uint32_t i = volume_slot(out, &map, &cap, r.volume);
        if (r.op == TR_FLUSH) {
            continue;
        } else if (r.offset > TR_MAX_EXTENT || r.length > TR_MAX_EXTENT - r.offset) {
            char at[600];
            tr_source_where(src, r.pos, out->records, at, sizeof at);
            snprintf(err, errlen,
                     "%s: an I/O of %u bytes at offset %llu reaches past %llu bytes, the most a "
                     "file or device can address: the trace is damaged or not in this format",
                     at, r.length, (unsigned long long)r.offset, (unsigned long long)TR_MAX_EXTENT);
            rc = SIM_EXIT_USAGE;
        } else {
            out->align_bits |= r.offset | r.length;
            if (r.offset + r.length > out->volumes[i].end)
                out->volumes[i] =
                    (tr_volume_span){r.volume, r.offset + r.length, r.pos, out->records};
        }
    }
    tr_volmap_free(&map);
    if (rc == SIM_EXIT_OK && got == TR_NEXT_ERROR) {
        snprintf(err, errlen, "%s", tr_error(src));
        rc = SIM_EXIT_USAGE;
    }
    return rc;
}

/* The volumes side by side in id order (the identity layout): their ends must add up
 * to an addressable size. SIM_EXIT_OK or SIM_EXIT_USAGE with err. */
static int lay_out_volumes(tr_source *src, tr_scan *out, char *err, size_t errlen)
{
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
            return SIM_EXIT_USAGE;
        }
        out->span += v->end;
    }
    return SIM_EXIT_OK;
}

int tr_scan_source(tr_source *src, tr_scan *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (tr_rewind(src) < 0) {
        snprintf(err, errlen, "%s", tr_error(src));
        return SIM_EXIT_FAIL;
    }
    int rc = scan_records(src, out, err, errlen);
    if (!rc) rc = lay_out_volumes(src, out, err, errlen);
    if (!rc && tr_rewind(src) < 0) {
        snprintf(err, errlen, "%s", tr_error(src));
        rc = SIM_EXIT_FAIL;
    }
    if (rc) tr_scan_free(out);
    return rc;
}

void tr_scan_free(tr_scan *s)
{
    free(s->volumes);
    memset(s, 0, sizeof *s);
}
