/*
 * trace/replay/replay_place.c: placement of trace offsets in the target. Each volume of the
 * trace gets its own slice of the region: with --map none a slice as large as the
 * volume's span (so offsets are kept), with wrap or scale a share of the region in
 * proportion to the volume's span. Offsets and lengths are then aligned to the
 * target's logical block size (O_DIRECT needs it) and counted when that changed them.
 *
 * Invariant: a mapped I/O lies entirely inside its volume's slice.
 */
#include "trace/replay/replay_internal.h"

#include <stdlib.h>
#include <string.h>

/* v rounded up to a multiple of a; inputs are at most TR_MAX_EXTENT (< 2^63) and
 * a < 2^32, so this cannot wrap. */
static uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

int tr_replay_needed_size(const tr_scan *scan, uint32_t block, uint64_t *out)
{
    uint64_t total = 0;
    if (block == 0) block = 1;
    for (uint32_t i = 0; i < scan->nvolumes; i++) {
        uint64_t end = scan->volumes[i].end;
        if (end > TR_MAX_EXTENT) return SIM_ERR; /* the scan refuses these */
        uint64_t span = round_up(end ? end : block, block);
        if (span > TR_MAX_EXTENT - total) return SIM_ERR;
        total += span;
    }
    *out = total ? total : block;
    return SIM_OK;
}

int tr_place_init(tr_place *pl, const tr_scan *scan, tr_map map, uint32_t block,
                  uint64_t region_offset, uint64_t region_length, char *err, size_t errlen)
{
    memset(pl, 0, sizeof *pl);
    pl->map = map;
    pl->block = block ? block : 1;
    uint32_t n = scan->nvolumes ? scan->nvolumes : 1;
    pl->vols = sim_xcalloc(n, sizeof *pl->vols);
    pl->nvol = n;
    if (region_offset % pl->block || region_length < pl->block) {
        snprintf(err, errlen,
                 "the region must start on a multiple of the block size (%u) and hold at "
                 "least one block",
                 pl->block);
        tr_place_free(pl);
        return SIM_EXIT_USAGE;
    }
    region_length -= region_length % pl->block;
    uint64_t need;
    if (region_offset > TR_MAX_EXTENT || region_length > TR_MAX_EXTENT - region_offset ||
        tr_replay_needed_size(scan, pl->block, &need)) {
        snprintf(err, errlen,
                 "the trace's volumes or the region reach past %llu bytes, the most a file or "
                 "device can address",
                 (unsigned long long)TR_MAX_EXTENT);
        tr_place_free(pl);
        return SIM_EXIT_USAGE;
    }
    if (map == TR_MAP_NONE && need > region_length) {
        char a[32], b[32];
        snprintf(err, errlen,
                 "the trace reaches %s (the sum of its volumes' extents) but the target "
                 "region holds %s: give a larger target (--file-size), or ask for mapping "
                 "with --map wrap or --map scale",
                 sim_format_size(need, a, sizeof a), sim_format_size(region_length, b, sizeof b));
        tr_place_free(pl);
        return SIM_EXIT_USAGE;
    }
    if (region_length / pl->block < n) {
        snprintf(err, errlen, "the region is too small for %u volumes of one block each", n);
        tr_place_free(pl);
        return SIM_EXIT_USAGE;
    }
    uint64_t base = region_offset, left = region_length;
    for (uint32_t i = 0; i < n; i++) {
        tr_place_vol *v = &pl->vols[i];
        uint64_t end = scan->nvolumes ? scan->volumes[i].end : 0;
        v->volume = scan->nvolumes ? scan->volumes[i].volume : 0;
        v->span = round_up(end ? end : pl->block, pl->block);
        uint64_t size;
        if (map == TR_MAP_NONE) {
            size = v->span;
        } else {
            /* A share in proportion to the span, at least one block; the last volume
             * takes what rounding left. */
            long double share = (long double)region_length * v->span / (long double)need;
            size = (uint64_t)share / pl->block * pl->block;
            uint64_t reserve = (uint64_t)(n - 1 - i) * pl->block;
            if (size < pl->block) size = pl->block;
            if (size > left - reserve) size = left - reserve;
            if (i == n - 1) size = left;
        }
        v->base = base;
        v->size = size;
        base += size;
        left -= size;
    }
    return SIM_EXIT_OK;
}

static tr_place_vol *find(tr_place *pl, uint32_t volume)
{
    if (pl->vols[pl->last].volume == volume) return &pl->vols[pl->last];
    uint32_t lo = 0, hi = pl->nvol;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (pl->vols[mid].volume < volume)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < pl->nvol && pl->vols[lo].volume == volume) {
        pl->last = lo;
        return &pl->vols[lo];
    }
    return NULL;
}

void tr_place_map(tr_place *pl, const tr_record *r, uint64_t *out_off, uint32_t *out_len)
{
    tr_place_vol *v = find(pl, r->volume);
    if (!v) {
        /* A volume the scan did not see (a source that changed since): its own I/O
         * lands in the first slice, wrapped, and is counted. */
        pl->unknown_volume++;
        v = &pl->vols[0];
    }
    if (r->op == TR_FLUSH) {
        *out_off = 0;
        *out_len = 0;
        return;
    }
    /* No sum below can wrap: every comparison is against v->size - len (v->size is at
     * least one block, len at most v->size), and offsets past the slice are folded
     * into it before anything is added to them. */
    uint64_t off = r->offset, len = r->length;
    if (len > v->size) {
        len = v->size;
        pl->clipped++;
    }
    if (pl->map == TR_MAP_SCALE && v->span != v->size) {
        off = (uint64_t)((unsigned __int128)off * v->size / v->span);
        pl->scaled++;
    }
    if (off > v->size - len) {
        if (pl->map != TR_MAP_SCALE) off %= v->size;
        if (off > v->size - len) off = v->size - len;
        if (pl->map != TR_MAP_SCALE) pl->wrapped++; /* scaled I/Os are counted as such */
    }
    uint64_t b = pl->block;
    if (b > 1 && (off % b || len % b)) {
        uint64_t a_off = off / b * b;
        uint64_t a_end = round_up(off + len, b);
        if (a_end > v->size) {
            a_end = v->size;
            if (a_end - a_off < b) a_off = a_end - b;
        }
        off = a_off;
        len = a_end - a_off;
        /* Counted when the trace's own I/O was unaligned, not when scaling made it so. */
        if (r->offset % b || r->length % b) pl->aligned++;
    }
    *out_off = v->base + off;
    /* The replay refuses traces whose largest I/O, aligned, exceeds its 1 GiB of
     * buffers (replay_loop.c), so this never truncates there; saturate rather than wrap. */
    *out_len = len > UINT32_MAX ? UINT32_MAX / b * b : (uint32_t)len;
}

json_t *tr_place_json(const tr_place *pl)
{
    static const char *maps[] = {"none", "wrap", "scale"};
    json_t *vols = json_array();
    for (uint32_t i = 0; i < pl->nvol && i < 64; i++)
        json_array_append_new(
            vols, json_pack("{s:I, s:I, s:I, s:I}", "volume", (json_int_t)pl->vols[i].volume,
                            "base", (json_int_t)pl->vols[i].base, "size",
                            (json_int_t)pl->vols[i].size, "span", (json_int_t)pl->vols[i].span));
    return json_pack("{s:s, s:I, s:I, s:o, s:I, s:I, s:I, s:I, s:I}", "map", maps[pl->map],
                     "block_size", (json_int_t)pl->block, "volumes", (json_int_t)pl->nvol, "layout",
                     vols, "aligned", (json_int_t)pl->aligned, "wrapped", (json_int_t)pl->wrapped,
                     "scaled", (json_int_t)pl->scaled, "clipped", (json_int_t)pl->clipped,
                     "unknown_volume", (json_int_t)pl->unknown_volume);
}

void tr_place_free(tr_place *pl)
{
    free(pl->vols);
    pl->vols = NULL;
}
