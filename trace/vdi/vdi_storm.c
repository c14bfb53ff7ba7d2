/*
 * trace/vdi/vdi_storm.c: N desktops replaying one desktop trace, composed into one
 * tr_source in time order (see vdi_internal.h for the clone models and layout).
 *
 * Invariants:
 *   - each desktop emits every record of the desktop trace exactly once, in the
 *     trace's order; a linked-clone read that spans written and unwritten grains is
 *     split at grain boundaries into pieces with the same time (counted);
 *   - desktop d starts at d * stagger / N plus a uniform offset within its slot, so
 *     start times cover [0, stagger) evenly without being in lockstep; each gap
 *     between consecutive records is scaled by a random factor in [1-j, 1+j] (mean 1:
 *     the desktop's rate is kept);
 *   - everything random comes from (seed, desktop) streams, so a rewind replays the
 *     same storm; rewind also forgets which grains each desktop has written.
 */
#include "trace/vdi/vdi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct desk {
    size_t idx;     /* next record of the desktop trace */
    uint64_t t;     /* storm time of that record */
    uint64_t start; /* storm time of the desktop's first record */
    sim_rng rng;
} desk;

typedef struct storm {
    tr_source src;
    const vdi_trace *tr;
    const vdi_image *img;
    vdi_storm_opts o;
    desk *d;
    uint32_t *heap; /* desktops with records left, min-heap by (t, desktop) */
    uint32_t nheap;
    uint64_t *written; /* linked: per desktop, one bit per grain of the delta */
    size_t words;      /* 64-bit words per desktop */
    tr_record *pend;   /* pieces of a split read still to emit */
    size_t npend, ipend, pendcap;
    vdi_storm_stats st;
    char err[256];
} storm;

static bool before(const storm *s, uint32_t a, uint32_t b)
{
    uint64_t ta = s->d[a].t, tb = s->d[b].t;
    /* Equal times: the lower desktop first, so the order is deterministic. */
    return ta < tb || (ta == tb && a < b);
}

static void heap_push(storm *s, uint32_t v)
{
    uint32_t i = s->nheap++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!before(s, v, s->heap[p])) break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = v;
}

static uint32_t heap_pop(storm *s)
{
    uint32_t top = s->heap[0];
    uint32_t v = s->heap[--s->nheap];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= s->nheap) break;
        if (c + 1 < s->nheap && before(s, s->heap[c + 1], s->heap[c])) c++;
        if (!before(s, s->heap[c], v)) break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->nheap) s->heap[i] = v;
    return top;
}

static void reset(storm *s)
{
    uint32_t n = s->o.desktops;
    uint64_t slot = s->o.stagger_ns / n;
    s->nheap = 0;
    for (uint32_t i = 0; i < n; i++) {
        desk *k = &s->d[i];
        sim_rng_seed(&k->rng, s->o.seed, i);
        k->idx = 0;
        k->start = (uint64_t)i * slot + (slot ? sim_rng_range(&k->rng, 0, slot - 1) : 0);
        k->t = k->start + s->tr->recs[0].time_ns;
        heap_push(s, i);
    }
    if (s->written) memset(s->written, 0, (size_t)n * s->words * sizeof *s->written);
    s->npend = s->ipend = 0;
    memset(&s->st, 0, sizeof s->st);
}

static void advance(storm *s, uint32_t i)
{
    desk *k = &s->d[i];
    size_t cur = k->idx++;
    if (k->idx == s->tr->n) return;
    uint64_t gap = s->tr->recs[k->idx].time_ns - s->tr->recs[cur].time_ns;
    if (s->o.jitter > 0 && gap > 0) {
        double f = 1.0 + s->o.jitter * (2.0 * sim_rng_double(&k->rng) - 1.0);
        gap = (uint64_t)((double)gap * f + 0.5);
    }
    k->t += gap;
    heap_push(s, i);
}

static bool grain_written(const storm *s, uint32_t d, int64_t dpos)
{
    if (dpos < 0) return false;
    uint64_t g = (uint64_t)dpos / VDI_GRAIN;
    return (s->written[d * s->words + g / 64] >> (g % 64)) & 1;
}

static void mark_written(storm *s, uint32_t d, uint64_t dpos, uint32_t len)
{
    uint64_t first = dpos / VDI_GRAIN, last = (dpos + (len ? len : 1) - 1) / VDI_GRAIN;
    for (uint64_t g = first; g <= last; g++)
        s->written[d * s->words + g / 64] |= 1ull << (g % 64);
}

static void push_piece(storm *s, const tr_record *r)
{
    if (s->npend == s->pendcap) {
        s->pendcap = s->pendcap ? s->pendcap * 2 : 16;
        s->pend = sim_xrealloc(s->pend, s->pendcap * sizeof *s->pend);
    }
    s->pend[s->npend++] = *r;
}

/* Linked clone read: replica for unwritten grains, delta for written ones, split
 * where that changes. The pieces go to s->pend. */
static int linked_read(storm *s, uint32_t d, const tr_record *in, const tr_record *base,
                       tr_record *out)
{
    const vdi_image *img = s->img;
    uint64_t delta0 = s->o.base + img->image_bytes + (uint64_t)d * img->delta_bytes;
    uint64_t end = in->offset + in->length;
    uint64_t pos = in->offset;
    s->npend = s->ipend = 0;
    while (pos < end || (pos == end && in->length == 0)) {
        bool w = grain_written(s, d, vdi_delta_map(img, pos));
        uint64_t stop = pos;
        do {
            stop = (stop / VDI_GRAIN + 1) * VDI_GRAIN;
        } while (stop < end && grain_written(s, d, vdi_delta_map(img, stop)) == w);
        if (stop > end) stop = end;
        tr_record p = *base;
        p.offset = w ? delta0 + (uint64_t)vdi_delta_map(img, pos)
                     : s->o.base + (uint64_t)vdi_image_map(img, pos);
        p.length = (uint32_t)(stop - pos);
        if (w)
            s->st.delta_reads++;
        else
            s->st.replica_reads++;
        push_piece(s, &p);
        if (in->length == 0) break;
        pos = stop;
    }
    if (s->npend > 1) s->st.split_reads++;
    *out = s->pend[s->ipend++];
    return SIM_OK;
}

static int storm_next(tr_source *src, tr_record *out)
{
    storm *s = src->ctx;
    if (s->ipend < s->npend) {
        *out = s->pend[s->ipend++];
        s->st.records++;
        return TR_NEXT_RECORD;
    }
    if (s->nheap == 0) return TR_NEXT_END;
    uint32_t d = heap_pop(s);
    const tr_record *in = &s->tr->recs[s->d[d].idx];
    uint64_t t = s->d[d].t;
    s->st.source_records++;
    tr_record r = *in;
    r.time_ns = t;
    r.volume = s->o.volume_per_desktop ? d : 0;
    r.latency_ns = TR_LATENCY_UNKNOWN;
    const vdi_image *img = s->img;
    if (r.op == TR_FLUSH) {
        r.offset = 0;
        r.length = 0;
    } else if (s->o.clones == VDI_FULL) {
        r.offset =
            s->o.base + (uint64_t)d * img->image_bytes + (uint64_t)vdi_image_map(img, in->offset);
        if (r.op == TR_READ)
            s->st.own_reads++;
        else
            s->st.writes++;
    } else if (r.op == TR_READ) {
        tr_record base = r;
        if (linked_read(s, d, in, &base, &r) != 0) return TR_NEXT_ERROR;
    } else {
        int64_t dpos = vdi_delta_map(img, in->offset);
        r.offset = s->o.base + img->image_bytes + (uint64_t)d * img->delta_bytes + (uint64_t)dpos;
        mark_written(s, d, (uint64_t)dpos, in->length);
        s->st.writes++;
    }
    advance(s, d);
    s->st.records++;
    *out = r;
    return TR_NEXT_RECORD;
}

static int storm_rewind(tr_source *src)
{
    reset(src->ctx);
    return SIM_OK;
}

static const char *storm_error(const tr_source *src)
{
    const storm *s = src->ctx;
    return s->err;
}

static void storm_close(tr_source *src)
{
    storm *s = src->ctx;
    free(s->d);
    free(s->heap);
    free(s->written);
    free(s->pend);
    free(s);
}

static const tr_source_ops storm_ops = {
    .next = storm_next,
    .rewind = storm_rewind,
    .error = storm_error,
    .close = storm_close,
};

int vdi_storm_open(const vdi_trace *trace, const vdi_image *img, const vdi_storm_opts *opts,
                   tr_source **out, char *err, size_t errlen)
{
    if (!trace->n || opts->desktops == 0) {
        snprintf(err, errlen, "a storm needs at least one desktop and one record");
        return SIM_ERR;
    }
    /* Every data record must fall in the image (it was built from these traces). */
    for (size_t i = 0; i < trace->n; i++) {
        const tr_record *r = &trace->recs[i];
        if (r->op == TR_FLUSH) continue;
        if (vdi_image_map(img, r->offset) < 0 ||
            (r->op != TR_READ && vdi_delta_map(img, r->offset) < 0)) {
            snprintf(err, errlen, "%s: record %zu lies outside the image geometry", trace->origin,
                     i);
            return SIM_ERR;
        }
    }
    storm *s = sim_xcalloc(1, sizeof *s);
    s->tr = trace;
    s->img = img;
    s->o = *opts;
    s->d = sim_xcalloc(opts->desktops, sizeof *s->d);
    s->heap = sim_xcalloc(opts->desktops, sizeof *s->heap);
    if (opts->clones == VDI_LINKED) {
        s->words = (img->delta_bytes / VDI_GRAIN + 63) / 64;
        s->written = sim_xcalloc((size_t)opts->desktops * s->words, sizeof *s->written);
    }
    reset(s);
    s->src.ops = &storm_ops;
    s->src.ctx = s;
    *out = &s->src;
    return SIM_OK;
}

void vdi_storm_stats_get(const tr_source *src, vdi_storm_stats *st)
{
    const storm *s = src->ctx;
    *st = s->st;
}

uint64_t vdi_storm_start_ns(const tr_source *src, uint32_t d)
{
    const storm *s = src->ctx;
    return d < s->o.desktops ? s->d[d].start : 0;
}
