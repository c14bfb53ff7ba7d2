/*
 * trace/lib/footprint.c: unique bytes touched by a trace, in bounded memory.
 *
 * Exact first: a set of [start, end) extents per volume, merged when the array fills.
 * When merging no longer frees half of it (a large random trace), the set switches to
 * an estimate: every 4 KiB block touched is hashed, and a block is kept when its hash
 * is below a threshold that halves whenever the kept set fills (adaptive sampling, as
 * in distinct-count estimators). The estimate is kept/(threshold/2^64) blocks of 4 KiB;
 * its relative error is about 1/sqrt(kept), 0.1 % at the cap. The method and the
 * sampling rate are reported, so an estimate is never shown as exact.
 */
#include "trace/lib/footprint_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define EXT_CAP (1u << 20)
#define SET_CAP (1u << 20) /* kept hashes; the table has twice as many slots */
#define BLOCK 4096u

static int cmp_ext(const void *a, const void *b)
{
    const tr_extent *x = a, *y = b;
    if (x->volume != y->volume) return x->volume < y->volume ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void compact(tr_footprint *f)
{
    qsort(f->ext, f->next, sizeof *f->ext, cmp_ext);
    uint32_t w = 0;
    for (uint32_t i = 0; i < f->next; i++) {
        if (w > 0 && f->ext[w - 1].volume == f->ext[i].volume &&
            f->ext[i].start <= f->ext[w - 1].end) {
            if (f->ext[i].end > f->ext[w - 1].end) f->ext[w - 1].end = f->ext[i].end;
        } else {
            f->ext[w++] = f->ext[i];
        }
    }
    f->next = w;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Inserts h (never 0: 0 marks a free slot). */
static void set_put(tr_footprint *f, uint64_t h)
{
    assert(h != 0 && f->kept < 2 * SET_CAP); /* a free slot remains: the loop ends */
    uint32_t mask = 2 * SET_CAP - 1, i = (uint32_t)h & mask;
    while (f->set[i]) {
        if (f->set[i] == h) return;
        i = (i + 1) & mask;
    }
    f->set[i] = h;
    f->kept++;
}

static void halve(tr_footprint *f)
{
    f->threshold >>= 1;
    uint64_t *old = f->set;
    f->set = sim_xcalloc(2 * SET_CAP, sizeof *f->set);
    f->kept = 0;
    for (uint32_t i = 0; i < 2 * SET_CAP; i++)
        if (old[i] && old[i] <= f->threshold) set_put(f, old[i]);
    free(old);
}

static void add_blocks(tr_footprint *f, uint32_t volume, uint64_t start, uint64_t end)
{
    for (uint64_t b = start / BLOCK; b * BLOCK < end; b++) {
        uint64_t h = mix(b * 0x9e3779b97f4a7c15ull ^ mix(volume + 1)) | 1;
        if (h > f->threshold) continue;
        set_put(f, h);
        while (f->kept >= SET_CAP)
            halve(f);
    }
}

void tr_footprint_init(tr_footprint *f)
{
    memset(f, 0, sizeof *f);
    f->cap = EXT_CAP;
    f->ext = sim_xmalloc((size_t)f->cap * sizeof *f->ext);
}

void tr_footprint_add(tr_footprint *f, uint32_t volume, uint64_t off, uint64_t len)
{
    if (len == 0) return;
    if (f->set) {
        add_blocks(f, volume, off, off + len);
        return;
    }
    if (f->next == f->cap) {
        compact(f);
        if (f->next > f->cap / 2) {
            /* Too many separate extents to keep exactly: switch to the estimate. */
            f->set = sim_xcalloc(2 * SET_CAP, sizeof *f->set);
            f->threshold = UINT64_MAX;
            for (uint32_t i = 0; i < f->next; i++)
                add_blocks(f, f->ext[i].volume, f->ext[i].start, f->ext[i].end);
            free(f->ext);
            f->ext = NULL;
            f->next = 0;
            add_blocks(f, volume, off, off + len);
            return;
        }
    }
    f->ext[f->next++] = (tr_extent){volume, off, off + len};
}

json_t *tr_footprint_json(tr_footprint *f)
{
    if (!f->set) {
        compact(f);
        uint64_t bytes = 0;
        for (uint32_t i = 0; i < f->next; i++)
            bytes += f->ext[i].end - f->ext[i].start;
        return json_pack("{s:I, s:s}", "bytes", (json_int_t)bytes, "method", "exact");
    }
    double rate = ((double)f->threshold + 1.0) / 18446744073709551616.0;
    double bytes = f->kept / rate * BLOCK;
    return json_pack("{s:I, s:s, s:f}", "bytes", (json_int_t)bytes, "method",
                     "estimated from sampled 4 KiB blocks", "sampling_rate", rate);
}

void tr_footprint_free(tr_footprint *f)
{
    free(f->ext);
    free(f->set);
    memset(f, 0, sizeof *f);
}
