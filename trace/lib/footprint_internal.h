/*
 * trace/lib/footprint_internal.h: unique bytes touched by a trace (trace/lib/footprint.c),
 * for `trace info`. Private to trace/lib/ (the library's contract is lib.h).
 */
#ifndef APPSIM_TRACE_FOOTPRINT_INTERNAL_H
#define APPSIM_TRACE_FOOTPRINT_INTERNAL_H

#include "trace/lib/lib_internal.h"

typedef struct tr_extent {
    uint32_t volume;
    uint64_t start, end;
} tr_extent;

typedef struct tr_footprint {
    tr_extent *ext; /* exact mode */
    uint32_t next, cap;
    uint64_t *set; /* estimate mode: kept block hashes (0 = free slot) */
    uint32_t kept;
    uint64_t threshold;
} tr_footprint;

void tr_footprint_init(tr_footprint *f);
void tr_footprint_add(tr_footprint *f, uint32_t volume, uint64_t off, uint64_t len);
/* {"bytes", "method": "exact"|"estimated ...", "sampling_rate"} */
json_t *tr_footprint_json(tr_footprint *f);
void tr_footprint_free(tr_footprint *f);

#endif
