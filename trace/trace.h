/*
 * trace/trace.h: block I/O traces. One in-memory record, streaming readers and
 * writers per format (registered by name, auto-detected), and replay of a record
 * stream on a target with the storage engine.
 *
 * Memory stays bounded on traces of any length: readers stream; records out of time
 * order are sorted within a bounded window and counted. Synthetic workloads (`appsim
 * io`, trace/io/io_internal.h) are sources too, and replay through the same loop.
 *
 * Return codes (sim/sim.h): subcommands and every function that decides how a command
 * ends (opening a trace, writers, scan, replay) return exit statuses (SIM_EXIT_*);
 * helpers that only succeed or fail return a status (SIM_OK, or SIM_ERR with err); a
 * source's next() answers TR_NEXT_*, a format's parsers TR_PARSE_* (below).
 *
 * This header is trace/'s one public face: the rest of appsim includes nothing else of
 * trace/. Behind it, one folder per kind of work, each with a header that states its
 * contract, from the ground up:
 *   lib/     the trace library: input, formats, file source, writers, scan, the
 *            `appsim trace` command and its info, convert, slice, merge (lib/lib.h);
 *   replay/  replay of a source on a target and its rate curve, `appsim replay`
 *            (replay/replay_internal.h); it includes lib/lib.h;
 *   io/      `appsim io`, synthetic workloads run through replay (io/io_internal.h);
 *   vdi/     `appsim vdi`, storms composed from desktop traces (vdi/vdi_internal.h);
 *   capture/ `appsim trace capture` from the kernel's block tracepoints
 *            (capture/capture_internal.h).
 * A folder includes its own headers, lib/lib.h, this header and the public headers
 * below trace/ (sim/sim.h, storage/storage.h): never another folder's private header,
 * never a folder above it (tests/integration/trace_layout.sh checks this).
 */
#ifndef APPSIM_TRACE_H
#define APPSIM_TRACE_H

#include "sim/sim.h"
#include "storage/storage.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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
    uint64_t pos;        /* where it came from: line (text) or byte offset (binary) of a
                          * file source, else 0; for messages (tr_source_where) */
} tr_record;

/* The answers of a record source's next() and of the readers under it. */
enum {
    TR_NEXT_ERROR = -1, /* the reason via error() */
    TR_NEXT_END = 0,    /* no more records */
    TR_NEXT_RECORD = 1, /* a record in *out */
};
/* "error", "end", "record"; "unknown" for any other number. */
const char *tr_next_name(int answer);

/* A source of records in time order: a file reader, a composed VDI storm, ... */
typedef struct tr_source tr_source;
typedef struct tr_source_ops {
    /* TR_NEXT_RECORD, TR_NEXT_END or TR_NEXT_ERROR (message via error()). */
    int (*next)(tr_source *s, tr_record *out);
    /* Back to the first record (for --loop and curve points); SIM_OK or SIM_ERR. */
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
int tr_open(const char *path, const tr_open_opts *opts, tr_source **out, char *err, size_t errlen);
/* Counts kept by a file source: records, skipped bad, reordered, aligned... */
json_t *tr_source_stats_json(const tr_source *s);

/* Same, over a buffer in memory (the caller keeps it alive until close); name is used in
 * messages. For fuzzing and tests. */
int tr_open_mem(const void *buf, size_t len, const char *name, const tr_open_opts *opts,
                tr_source **out, char *err, size_t errlen);
/* Where a record came from, for messages: "name:line" or "name: byte offset N" (pos =
 * the record's pos) for a file source, "record N of the trace" (n, 1-based) for others. */
void tr_source_where(const tr_source *s, uint64_t pos, uint64_t n, char *buf, size_t len);
/* Name of the format a file source was opened with ("msr", "fio-v3", ...). */
const char *tr_source_format(const tr_source *s);
/* Convenience wrappers over the ops table. */
static inline int tr_next(tr_source *s, tr_record *r)
{
    return s->ops->next(s, r);
}
static inline int tr_rewind(tr_source *s)
{
    return s->ops->rewind(s);
}
static inline const char *tr_error(const tr_source *s)
{
    return s->ops->error(s);
}
static inline void tr_close(tr_source *s)
{
    if (s) s->ops->close(s);
}
const char *tr_op_name(int op); /* "read", "write", "flush", "trim" */

/* ------------------------------------------------------------------ formats */

/* A format: a parser for lines (text formats) or binary records, an optional writer,
 * and a probe for auto-detection. Each format lives in its own file (trace/lib/fmt_*.c)
 * and registers itself with TR_REGISTER_FORMAT. Parsers produce records whose
 * time_ns is the format's absolute clock in ns; tr_open sorts and rebases them. */
typedef struct tr_parse tr_parse; /* parser state owned by trace/ (trace_internal.h) */
/* The answers of a format's parsers (parse_line, parse_bin) and of held(). */
enum {
    TR_PARSE_BAD = -1,   /* malformed (reason set with tr_parse_fail) */
    TR_PARSE_NONE = 0,   /* no I/O here (header, comment, other event); held(): none ready */
    TR_PARSE_RECORD = 1, /* a record in *out */
    TR_PARSE_END = 2,    /* binary formats: the end of the stream */
    TR_PARSE_HELD = 3,   /* an I/O kept back to be paired with a later event */
};
/* "bad", "none", "record", "end", "held"; "unknown" for any other number. */
const char *tr_parse_name(int answer);
typedef struct tr_emit tr_emit; /* writer state owned by trace/ */
typedef struct tr_format {
    const char *name;        /* "fio-v3", "msr", ... (for --format / --to) */
    const char *description; /* one line for `appsim trace formats` */
    bool text;               /* line-oriented (parse_line) or binary (parse_bin) */
    bool sorted;             /* records are in time order by construction */
    /* Text: TR_PARSE_RECORD, TR_PARSE_NONE (a line that holds no I/O) or TR_PARSE_BAD.
     * line is NUL-terminated. */
    int (*parse_line)(tr_parse *p, char *line, size_t len, tr_record *out);
    /* Binary: TR_PARSE_RECORD, TR_PARSE_NONE, TR_PARSE_BAD or TR_PARSE_END. */
    int (*parse_bin)(tr_parse *p, tr_record *out);
    /* Optional: 0..100, how sure the format is that the stream starts this way (binary
     * formats). Text formats without it are probed by parsing their first lines. */
    int (*probe)(const unsigned char *buf, size_t len);
    /* Writer (optional): header, one record, trailer; SIM_OK or SIM_ERR (errno set). */
    int (*write_begin)(tr_emit *e);
    int (*write_record)(tr_emit *e, const tr_record *r);
    int (*write_end)(tr_emit *e);
    /* Optional, for formats that hold records back to pair them with later events
     * (blktrace issue + completion = the captured response time): a parser returns
     * TR_PARSE_HELD for an I/O it kept; held() hands kept records out, in order, before
     * each new line or record is parsed and, with end = true, after the last one until
     * it returns TR_PARSE_NONE (none ready); TR_PARSE_RECORD = a record in *out. reset() frees what
     * the format allocated (rewind, close). */
    int (*held)(tr_parse *p, tr_record *out, bool end);
    void (*reset)(tr_parse *p);
} tr_format;
void tr_register_format(const tr_format *f);
const tr_format *tr_find_format(const char *name);
/* Registered formats sorted by name; NULL-terminated. */
const tr_format *const *tr_formats(void);
#define TR_REGISTER_FORMAT(var)                                                                    \
    __attribute__((constructor)) static void tr_register_fmt_##var(void)                           \
    {                                                                                              \
        tr_register_format(&(var));                                                                \
    }

/* ------------------------------------------------------------------ writers */

typedef struct tr_writer tr_writer;
typedef struct tr_writer_opts {
    const char *fio_file; /* fio iolog: the file name written in the log (the target) */
    bool overwrite;       /* replace an existing file; false: refuse it (SIM_EXIT_USAGE) */
} tr_writer_opts;
/* path "-" = stdout. A ".gz" or ".zst" suffix compresses. The file is written under a
 * temporary name and renamed over `path` on a successful close. With o == NULL an
 * existing file is replaced (callers that decided so already, e.g. a capture that
 * checked its output before recording); the CLI passes the user's --force. */
int tr_writer_open(const char *path, const char *format, const tr_writer_opts *o, tr_writer **out,
                   char *err, size_t errlen);
int tr_writer_put(tr_writer *w, const tr_record *r);
/* Flushes and closes; 0, or SIM_EXIT_USAGE when the format refused a record (the
 * message says why and what to do), or SIM_EXIT_FAIL (I/O error). A failed output is
 * removed. Always frees w. */
int tr_writer_close(tr_writer *w, char *err, size_t errlen);
/* Gives up: the output is removed (nothing is left under its name). Frees w. */
void tr_writer_abort(tr_writer *w);

/* ------------------------------------------------------------------ scan */

/* One pass over a source (it is rewound before and after): what placement and replay
 * need to know before the first I/O. */
typedef struct tr_volume_span {
    uint32_t volume;
    uint64_t end;            /* highest offset + length seen on that volume, bytes */
    uint64_t end_pos, end_n; /* the record that reaches end (tr_source_where) */
} tr_volume_span;
typedef struct tr_scan {
    uint64_t records;
    uint64_t duration_ns;    /* time of the last record */
    uint64_t max_length;     /* largest I/O, bytes */
    uint64_t max_pos, max_n; /* the record of the largest I/O (tr_source_where) */
    uint64_t span;           /* sum of the volumes' ends (identity layout size) */
    uint32_t nvolumes;       /* distinct volumes, sorted by id in volumes[] */
    tr_volume_span *volumes;
    /* The OR of every read's, write's and discard's offset and length: a block size
     * that divides it divides them all, so no I/O of the trace straddles a block. */
    uint64_t align_bits;
} tr_scan;
/* Offsets are checked: a record reaching TR_MAX_EXTENT or beyond, or volumes whose
 * ends add up past it, are an input error (SIM_EXIT_USAGE, naming file:line). */
#define TR_MAX_EXTENT ((uint64_t)INT64_MAX) /* off_t cannot address more */
int tr_scan_source(tr_source *src, tr_scan *out, char *err, size_t errlen);
void tr_scan_free(tr_scan *s);

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
#define TR_REGISTER_SUBCOMMAND(var)                                                                \
    __attribute__((constructor)) static void tr_register_##var(void)                               \
    {                                                                                              \
        tr_register_subcommand(&(var));                                                            \
    }

/* Lists the registered subcommands on out (for `appsim trace --help`). */
void tr_subcommands_help(FILE *out);

/* ------------------------------------------------------------------ replay */

/* A tr_source replayed on an st_target through an st_engine, measured in a sim_run.
 * Composed sources (VDI storms) use the same entry points: the source is rewound for
 * --loop and for every curve point. I/O order is kept in every timing mode. */

typedef enum tr_timing {
    TR_TIMING_ORIGINAL, /* the captured timestamps, divided by speed */
    TR_TIMING_AFAP,     /* as fast as possible with at most qd outstanding */
    TR_TIMING_RATE,     /* a fixed arrival rate (curve points), trace timestamps ignored */
} tr_timing;

typedef enum tr_map {
    TR_MAP_NONE,  /* offsets kept; refused when the trace does not fit the region */
    TR_MAP_WRAP,  /* offsets modulo the volume's share of the region */
    TR_MAP_SCALE, /* offsets scaled from the volume's span to its share */
} tr_map;

typedef struct tr_replay_opts {
    tr_timing timing;
    double speed; /* original: 2 = twice as fast (default 1) */
    double rate;  /* TR_TIMING_RATE: I/Os per second */
    bool uniform; /* TR_TIMING_RATE: even spacing instead of exponential */
    unsigned qd;  /* most I/Os outstanding (default 32) */
    /* The caller's option that sets qd, as messages name it (NULL = "--qd"; io:
     * "--threads"). */
    const char *qd_option;
    const char *engine; /* st_engine name; NULL = default */
    uint64_t region_offset;
    uint64_t region_length; /* 0 = from region_offset to the end of the data file/device */
    tr_map map;
    uint64_t file_size;    /* directory target: size of the data file (0 = trace span) */
    const char *file_name; /* directory target: data file name (default "replay.data") */
    uint64_t loops;        /* passes over the source (0 = 1; with duration: until then) */
    uint64_t duration_ns;  /* stop after this long, looping the source (0 = one pass x loops) */
    bool discard_files;    /* punch holes for trims on a file target (default: skip, counted) */
    /* afap on a target served by io_uring worker threads: keep the submitter's wake-up
     * preemption (by default it runs as SCHED_BATCH there, docs/io.md). The curve's
     * maximum-rate run sets it, so that its points, which must wake on time, are
     * fractions of a rate a paced submitter can reach. */
    bool timely_wakeups;
    uint64_t seed;
    const tr_scan *scan; /* optional: a scan of src done by the caller */
} tr_replay_opts;
void tr_replay_opts_default(tr_replay_opts *o);

/* The run config a replay records into: types read, write, flush, trim (in tr_op
 * order) and counters bytes_read, bytes_written. Fill warmup_ns / duration_ns /
 * report_interval_ns / quiet yourself; instances = 1. */
void tr_replay_run_config(sim_run_config *cfg);

/*
 * Replays src on target t. The run must be created with tr_replay_run_config() and
 * not yet started: tr_replay prepares the data file (created and filled once, so
 * reads reach the drive), then starts the run, replays, and finishes the run.
 * *stats (caller frees, set on success) gets {"timing","speed","rate","qd","engine",
 * "records","issued","completed","errors","zero_length_skipped","trims_skipped",
 * "bytes_read","bytes_written","passes","data_bytes","submission_lag_us":{count,
 * p50_us,p99_us,max_us,mean_us},"placement":{map,aligned,wrapped,scaled,clipped,
 * layout...},"source":{reader counts},"offered_in_measure" (timed and rate modes),
 * "first_error" (when some I/O failed),"target_nowait","submitter_policy"}. docs/trace.md
 * describes every field.
 * Returns SIM_EXIT_OK, SIM_EXIT_USAGE (does not fit, bad region) or SIM_EXIT_FAIL, with err.
 */
int tr_replay(sim_run *run, tr_source *src, st_target *t, const tr_replay_opts *o, json_t **stats,
              char *err, size_t errlen);

typedef struct tr_curve_opts {
    const double *fractions; /* of the maximum rate, e.g. 0.1 .. 1.2; NULL = default */
    int nfractions;
    uint64_t warmup_ns;  /* per point (default 5 s) */
    uint64_t measure_ns; /* per point (default 20 s) */
    bool quiet;
    uint64_t report_interval_ns; /* interval reports inside each point (0 = none) */
} tr_curve_opts;

/* A point kept up when it completed at least this share of the I/Os that arrived in
 * its measured interval; below it the point is "saturated" (a queue built up). */
#define TR_CURVE_KEPT_UP 0.98

/*
 * Rate curve: first a run at maximum rate (afap, o->qd), then one run per fraction
 * at fraction x max IOPS with exponential arrivals (uniform when o->uniform); the
 * source is rewound for each point and looped within it. *curve (caller frees) =
 * {"max_iops","warmup_s","measure_s","exponential","points":[{"fraction",
 *  "target_iops","offered_iops","saturated","iops","mbps","mean_us","p50_us","p99_us",
 *  "p999_us","max_us","seconds","read":{count,iops,mbps,mean_us,p50_us,p99_us,p999_us,
 *  max_us,errors}, "write":{...}, "lag_us":{...}, "replay":{tr_replay stats},
 *  "run":{sim result of the point}}...], "peak":{"point","fraction","iops","mean_us",
 *  "p99_us","max_rate_run"}}; point 0 is the maximum-rate run (its fraction and target
 * are 0); the peak is vdbench's: the highest rate of a point that kept up.
 */
int tr_replay_curve(tr_source *src, st_target *t, const tr_replay_opts *o, const tr_curve_opts *c,
                    json_t **curve, char *err, size_t errlen);

/* --curve-points "10,20,50" (percent, each in (0, 1000]) into fractions in out[0..max);
 * the count, or -1 when a value is not a number, out of range, or there are more than
 * max of them. */
int tr_curve_parse_points(const char *s, double *out, int max);

#ifdef __cplusplus
}
#endif
#endif
