/*
 * trace/replay/replay_internal.h: what the replay pieces share: the placement of a
 * trace's volumes in the target region (replay_place.c) and the data file preparation
 * (replay_file.c), used by the replay loop (replay_loop.c) and the curve
 * (replay_curve.c). Private to trace/replay/ and its tests.
 *
 * Contract of trace/replay/: it offers the replay of any tr_source on a target and its
 * rate curve (tr_replay, tr_replay_curve and their options, declared in trace/trace.h,
 * which io/ and vdi/ run their workloads through) and the `appsim replay` command.
 * Return codes (sim/sim.h): replay, the curve, placement and the data file return exit
 * statuses (SIM_EXIT_*) with err; tr_replay_needed_size returns a status (SIM_OK or
 * SIM_ERR). Includes: trace/lib/lib.h (for the common trace options), trace/trace.h,
 * sim/sim.h and storage/storage.h; never io/, vdi/ or capture/, which stand above it.
 */
#ifndef APPSIM_TRACE_REPLAY_INTERNAL_H
#define APPSIM_TRACE_REPLAY_INTERNAL_H

#include "trace/lib/lib.h"

/* Where each volume of the trace goes: [base, base + size) of the data file. */
typedef struct tr_place_vol {
    uint32_t volume;
    uint64_t base, size, span;
} tr_place_vol;

typedef struct tr_place {
    tr_map map;
    uint32_t block; /* alignment (1 when buffered) */
    uint32_t nvol;
    tr_place_vol *vols;
    uint32_t last; /* index of the last volume looked up (traces repeat volumes) */
    /* counts */
    uint64_t aligned, wrapped, scaled, clipped, unknown_volume;
} tr_place;

/* Builds the layout of scan's volumes in [region_offset, region_offset + region_length).
 * With TR_MAP_NONE it refuses (SIM_EXIT_USAGE) a region smaller than the trace's span. */
int tr_place_init(tr_place *pl, const tr_scan *scan, tr_map map, uint32_t block,
                  uint64_t region_offset, uint64_t region_length, char *err, size_t errlen);
/* Target offset and length of a record (length 0 for flushes). The I/O always lies in
 * its volume's slice, whatever the record's offset and length (no arithmetic wraps). */
void tr_place_map(tr_place *pl, const tr_record *r, uint64_t *off, uint32_t *len);
json_t *tr_place_json(const tr_place *pl);
void tr_place_free(tr_place *pl);

/* The replay's data file on a target: the device itself, or a file in the directory
 * target created (recorded in the manifest) and filled with data once, so that reads
 * reach the drive instead of a hole. Reused when it already has the size and no
 * holes. *size = the usable size. */
int tr_replay_open_data(st_target *t, const char *name, uint64_t want_size, int *fd, uint64_t *size,
                        char *err, size_t errlen);
/* The usable size tr_replay_open_data will give for want_size, known before anything is
 * created: the device's capacity, or want_size rounded up to whole blocks. */
uint64_t tr_replay_data_size(const st_target *t, uint64_t want_size);

/* The size the data file needs for a trace of this scan: the span, block-aligned, in
 * *out; -1 when it would exceed TR_MAX_EXTENT (an input error). */
int tr_replay_needed_size(const tr_scan *scan, uint32_t block, uint64_t *out);

#endif
