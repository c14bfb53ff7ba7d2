/*
 * trace/lib/pair.c: pairs blktrace issue events with their completions, so that the
 * records of blktrace and blkparse traces carry the captured response time.
 *
 * Issues wait in a FIFO, in trace order, until their completion arrives (matched on
 * device and start sector, oldest first); a record leaves when every record before it
 * has left and it is complete, or when it is older than the horizon (5 s of trace
 * time) or more than 4,096 are waiting (a lost completion, a trace cut before it):
 * then its latency stays unknown. Order is kept, memory is bounded by the cap.
 */
#include "trace/lib/pair_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define CAP 4096u
#define HORIZON_NS 5000000000ull

typedef struct held {
    tr_record r;
    uint64_t sector;
    bool done;
} held;

struct tr_pair {
    held ring[CAP];
    uint32_t head, n;
    uint64_t last_time; /* latest event time seen */
};

tr_pair *tr_pair_get(tr_pair **slot)
{
    if (!*slot) *slot = sim_xcalloc(1, sizeof **slot);
    return *slot;
}

int tr_pair_issue(tr_pair *pr, const tr_record *r, uint64_t sector)
{
    if (pr->n == CAP) return SIM_ERR; /* the caller lets the head go first (tr_pair_next) */
    held *h = &pr->ring[(pr->head + pr->n++) % CAP];
    h->r = *r;
    h->r.latency_ns = TR_LATENCY_UNKNOWN;
    h->sector = sector;
    h->done = false;
    if (r->time_ns > pr->last_time) pr->last_time = r->time_ns;
    return SIM_OK;
}

bool tr_pair_complete(tr_pair *pr, uint32_t device, uint64_t sector, uint64_t time_ns)
{
    if (time_ns > pr->last_time) pr->last_time = time_ns;
    for (uint32_t i = 0; i < pr->n; i++) {
        held *h = &pr->ring[(pr->head + i) % CAP];
        if (!h->done && h->r.volume == device && h->sector == sector && time_ns >= h->r.time_ns) {
            h->r.latency_ns = time_ns - h->r.time_ns;
            h->done = true;
            return true;
        }
    }
    return false;
}

int tr_pair_next(tr_pair *pr, tr_record *out, bool end)
{
    if (!pr || pr->n == 0) return TR_PARSE_NONE;
    assert(pr->n <= CAP && pr->head < CAP);
    held *h = &pr->ring[pr->head];
    bool stale = pr->last_time > h->r.time_ns + HORIZON_NS;
    if (!(h->done || end || stale || pr->n == CAP)) return TR_PARSE_NONE;
    *out = h->r;
    pr->head = (pr->head + 1) % CAP;
    pr->n--;
    return TR_PARSE_RECORD;
}

void tr_pair_free(tr_pair **slot)
{
    free(*slot);
    *slot = NULL;
}
