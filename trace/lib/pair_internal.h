/*
 * trace/lib/pair_internal.h: issue/completion pairing for the blktrace formats
 * (trace/lib/pair.c). Private to trace/lib/ (the library's contract is lib.h).
 */
#ifndef APPSIM_TRACE_PAIR_INTERNAL_H
#define APPSIM_TRACE_PAIR_INTERNAL_H

#include "trace/lib/lib_internal.h"

typedef struct tr_pair tr_pair;

/* The pairing state of a parser, created on first use in *slot (a pointer kept in the
 * parser's state). */
tr_pair *tr_pair_get(tr_pair **slot);
/* An issue: the record is held until its completion or the horizon. SIM_OK, or SIM_ERR
 * when too many are held. */
int tr_pair_issue(tr_pair *pr, const tr_record *r, uint64_t sector);
/* A completion of (device, sector) at time_ns: the oldest matching held issue gets its
 * latency. True when one matched. */
bool tr_pair_complete(tr_pair *pr, uint32_t device, uint64_t sector, uint64_t time_ns);
/* The next record that may leave: its completion seen, or older than the horizon, or
 * too many held, or end. TR_PARSE_RECORD (in *out) or TR_PARSE_NONE: a format's held(). */
int tr_pair_next(tr_pair *pr, tr_record *out, bool end);
void tr_pair_free(tr_pair **slot);

#endif
