/*
 * trace/trace.h: block I/O traces. One in-memory record, streaming readers and
 * writers per format (registered by name, auto-detected), and replay of a record
 * stream on a target with the storage engine.
 *
 * Memory stays bounded on traces of any length: readers stream; records out of time
 * order are sorted within a bounded window and counted.
 */
#ifndef APPSIM_TRACE_H
#define APPSIM_TRACE_H

#include "sim/sim.h"
#include "storage/storage.h"
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tr_op {
    TR_READ,
    TR_WRITE,
    TR_FLUSH,
    TR_DISCARD,
} tr_op;

#define TR_LATENCY_UNKNOWN UINT64_MAX

typedef struct tr_record {
    uint64_t time_ns;    /* issue time since the trace's first record */
    uint64_t offset;     /* bytes */
    uint32_t length;     /* bytes (0 for flush) */
    uint32_t volume;     /* stream / disk number / LUN / device id */
    uint8_t op;          /* tr_op */
    uint64_t latency_ns; /* captured response time, or TR_LATENCY_UNKNOWN */
} tr_record;

/* A source of records in time order: a file reader, a composed VDI storm, ... */
typedef struct tr_source tr_source;
typedef struct tr_source_ops {
    /* 1 = a record in *out, 0 = end, -1 = error (message via error()). */
    int (*next)(tr_source *s, tr_record *out);
    /* Back to the first record (for --loop and curve points); 0 or -1. */
    int (*rewind)(tr_source *s);
    const char *(*error)(const tr_source *s);
    void (*close)(tr_source *s);
} tr_source_ops;
struct tr_source {
    const tr_source_ops *ops;
    void *ctx;
};

typedef struct tr_open_opts {
    const char *format;   /* NULL = auto-detect */
    bool skip_bad;        /* count and skip malformed records instead of failing */
    int64_t volume;       /* -1 = all volumes */
    uint32_t sort_window; /* records held to restore time order (0 = default) */
} tr_open_opts;

/* Opens a trace file (compressed or not) as a source. */
int tr_open(const char *path, const tr_open_opts *opts, tr_source **out, char *err,
            size_t errlen);
/* Counts kept by a file source: records, skipped bad, reordered, aligned... */
json_t *tr_source_stats_json(const tr_source *s);


/* ------------------------------------------------------------------ subcommands */

/* `appsim trace <sub> ...` dispatches to subcommands registered by name (info,
 * convert, slice, merge, capture, ...), each in its own file. argv[0] is the
 * subcommand name; returns an exit status. */
typedef struct tr_subcommand {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv);
} tr_subcommand;
void tr_register_subcommand(const tr_subcommand *sub);
#define TR_REGISTER_SUBCOMMAND(var)                                                        \
    __attribute__((constructor)) static void tr_register_##var(void)                       \
    {                                                                                      \
        tr_register_subcommand(&(var));                                                    \
    }

/* ------------------------------------------------------------------ replay */

/* The replay contract (timing, placement, queue depth, rate, curve) is declared here
 * by trace/replay*.c: a tr_source replayed on an st_target through an st_engine,
 * measured in a sim_run. Composed sources (VDI storms) use the same entry points. */

#ifdef __cplusplus
}
#endif
#endif
