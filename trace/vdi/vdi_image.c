/*
 * trace/vdi/vdi_image.c: desktop traces in memory and the packed image/delta geometry
 * (see vdi_internal.h). Invariants: chunk lists are sorted and unique; a mapped
 * offset keeps its position inside its chunk.
 */
#include "trace/vdi/vdi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *vdi_phase_name(vdi_phase p)
{
    static const char *const names[] = {"boot", "initial-login", "monday-login"};
    return p < VDI_NPHASES ? names[p] : "?";
}

const char *vdi_clones_name(vdi_clones c)
{
    return c == VDI_FULL ? "full" : "linked";
}

void vdi_trace_free(vdi_trace *t)
{
    free(t->recs);
    t->recs = NULL;
    t->n = 0;
}

int vdi_trace_load(const char *path, size_t max_records, vdi_trace *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    tr_open_opts oo = {.format = NULL, .skip_bad = false, .volume = -1, .sort_window = 0};
    tr_source *src = NULL;
    if (tr_open(path, &oo, &src, err, errlen) != 0) return SIM_ERR;
    size_t cap = 4096;
    out->recs = sim_xmalloc(cap * sizeof *out->recs);
    tr_record r;
    int rc;
    while ((rc = src->ops->next(src, &r)) == TR_NEXT_RECORD) {
        if (out->n == max_records) {
            snprintf(err, errlen,
                     "%s: more than %zu records; a desktop trace is one phase of one "
                     "desktop (slice it with `appsim trace slice`)",
                     path, max_records);
            rc = -1;
            break;
        }
        if (out->n == cap) {
            cap *= 2;
            out->recs = sim_xrealloc(out->recs, cap * sizeof *out->recs);
        }
        out->recs[out->n++] = r;
    }
    if (rc < 0 && src->ops->error && !err[0])
        snprintf(err, errlen, "%s: %s", path, src->ops->error(src));
    src->ops->close(src);
    if (rc < 0) {
        vdi_trace_free(out);
        return SIM_ERR;
    }
    if (out->n == 0) {
        snprintf(err, errlen, "%s: the trace has no records", path);
        vdi_trace_free(out);
        return SIM_ERR;
    }
    uint64_t t0 = out->recs[0].time_ns;
    for (size_t i = 0; i < out->n; i++)
        out->recs[i].time_ns -= t0 <= out->recs[i].time_ns ? t0 : out->recs[i].time_ns;
    snprintf(out->origin, sizeof out->origin, "%s", path);
    return SIM_OK;
}

void vdi_trace_stats_of(const vdi_trace *t, vdi_trace_stats *st)
{
    memset(st, 0, sizeof *st);
    for (size_t i = 0; i < t->n; i++) {
        const tr_record *r = &t->recs[i];
        switch (r->op) {
        case TR_READ:
            st->reads++;
            st->read_bytes += r->length;
            break;
        case TR_WRITE:
            st->writes++;
            st->write_bytes += r->length;
            break;
        case TR_FLUSH:
            st->flushes++;
            break;
        default:
            st->discards++;
            break;
        }
    }
    if (t->n) st->duration_ns = t->recs[t->n - 1].time_ns - t->recs[0].time_ns;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts and removes duplicates; returns the new count. */
static size_t uniq(uint64_t *v, size_t n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_u64);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[k - 1]) v[k++] = v[i];
    return k;
}

/* Appends the chunks [offset, offset+length) spans; grows *v as needed. */
static void add_span(uint64_t **v, size_t *n, size_t *cap, uint64_t offset, uint32_t length)
{
    uint64_t first = offset / VDI_CHUNK;
    uint64_t last = (offset + (length ? length : 1) - 1) / VDI_CHUNK;
    for (uint64_t c = first; c <= last; c++) {
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 1024;
            *v = sim_xrealloc(*v, nc * sizeof **v);
            *cap = nc;
        }
        (*v)[(*n)++] = c;
    }
}

int vdi_image_build(const vdi_trace *const *traces, int ntraces, vdi_image *img, char *err,
                    size_t errlen)
{
    memset(img, 0, sizeof *img);
    size_t cap = 0, wcap = 0;
    for (int t = 0; t < ntraces; t++) {
        if (!traces[t]) continue;
        for (size_t i = 0; i < traces[t]->n; i++) {
            const tr_record *r = &traces[t]->recs[i];
            if (r->op == TR_FLUSH) continue;
            add_span(&img->chunks, &img->nchunks, &cap, r->offset, r->length);
            /* Reads may land in the delta too, but only on blocks that were written. */
            if (r->op != TR_READ)
                add_span(&img->wchunks, &img->nwchunks, &wcap, r->offset, r->length);
        }
        /* Keep memory at the number of distinct chunks, not of records. */
        img->nchunks = uniq(img->chunks, img->nchunks);
        img->nwchunks = uniq(img->wchunks, img->nwchunks);
    }
    if (img->nchunks == 0) {
        snprintf(err, errlen, "the desktop traces touch no data (only flushes)");
        vdi_image_free(img);
        return SIM_ERR;
    }
    img->image_bytes = (uint64_t)img->nchunks * VDI_CHUNK;
    img->delta_bytes = (uint64_t)(img->nwchunks ? img->nwchunks : 1) * VDI_CHUNK;
    return SIM_OK;
}

void vdi_image_free(vdi_image *img)
{
    free(img->chunks);
    free(img->wchunks);
    memset(img, 0, sizeof *img);
}

static int64_t map_in(const uint64_t *v, size_t n, uint64_t offset)
{
    uint64_t c = offset / VDI_CHUNK;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n || v[lo] != c) return -1;
    return (int64_t)(lo * (uint64_t)VDI_CHUNK + offset % VDI_CHUNK);
}

int64_t vdi_image_map(const vdi_image *img, uint64_t offset)
{
    return map_in(img->chunks, img->nchunks, offset);
}

int64_t vdi_delta_map(const vdi_image *img, uint64_t offset)
{
    return map_in(img->wchunks, img->nwchunks, offset);
}

uint64_t vdi_layout_bytes(const vdi_image *img, vdi_clones clones, uint32_t desktops)
{
    if (clones == VDI_FULL) return img->image_bytes * desktops;
    return img->image_bytes + img->delta_bytes * desktops;
}
