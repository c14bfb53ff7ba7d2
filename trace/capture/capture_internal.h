/*
 * trace/capture/capture_internal.h: `appsim trace capture`, private to
 * trace/capture/capture_*.c and their tests.
 *
 * Contract of trace/capture/: it offers the `capture` subcommand of `appsim trace`
 * (registered with TR_REGISTER_SUBCOMMAND) and nothing else. Return codes (sim/sim.h):
 * the subcommand returns an exit status (SIM_EXIT_*); the functions below return a
 * status (SIM_OK, or SIM_ERR with err). Includes: trace/trace.h (records and the
 * writers), sim/sim.h and storage/storage.h (the sysfs readers); never another folder
 * of trace/.
 *
 * The kernel's block tracepoints are read from a dedicated tracefs instance in the
 * binary per-CPU ring-buffer pages (trace_pipe_raw) rather than the text trace_pipe:
 * timestamps stay in nanoseconds (text prints microseconds), the kernel does not
 * format every event into text, the page header says when events were lost, and the
 * layout comes from the kernel's own format files, so field offsets are never
 * guessed.
 */
#ifndef APPSIM_CAPTURE_INTERNAL_H
#define APPSIM_CAPTURE_INTERNAL_H

#include "trace/trace.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where one field of an event lies in the event's data (from its format file). */
typedef struct cap_field {
    int offset; /* -1 = absent */
    int size;
} cap_field;

typedef enum cap_kind { CAP_ISSUE, CAP_COMPLETE, CAP_REQUEUE, CAP_NKINDS } cap_kind;

typedef struct cap_event_fmt {
    int id;                                        /* common_type of the event, -1 = not known */
    cap_field dev, sector, nr_sector, rwbs, error; /* error: completions only */
} cap_event_fmt;

/* The ring-buffer page header and the three block events. */
typedef struct cap_layout {
    cap_field ts, commit, data; /* from events/header_page */
    cap_event_fmt ev[CAP_NKINDS];
} cap_layout;

/* Fills f from the text of a format file ("ID: n" and "field:... offset:..;
 * size:..;" lines). Returns SIM_OK, or SIM_ERR when a needed field is missing. */
int cap_parse_event_format(const char *text, cap_event_fmt *f);
/* Fills the page-header fields from the text of events/header_page. */
int cap_parse_header_page(const char *text, cap_layout *l);

/* One decoded block event. */
typedef struct cap_event {
    uint64_t ts;     /* trace clock (mono: CLOCK_MONOTONIC), ns */
    uint64_t sector; /* 512-byte sectors */
    uint32_t nr_sector;
    uint32_t dev;  /* kernel dev_t encoding: major << 20 | minor */
    int32_t error; /* completion status (0 = success) */
    uint8_t kind;  /* cap_kind */
    uint8_t op;    /* tr_op */
} cap_event;

/* The operation a rwbs string ("WS", "FWFS", "R", "D", "FN", ...) names. */
int cap_rwbs_op(const char *rwbs, size_t len);

typedef int (*cap_sink)(void *ctx, const cap_event *ev);

/*
 * Decodes one ring-buffer page (as read from trace_pipe_raw): every block event in
 * it goes to sink in order; other events are skipped. *missed is increased when the
 * page says events were lost before it (by the stored count, or by 1 when the kernel
 * only flags it). Returns SIM_OK, or SIM_ERR on a page that is not well formed.
 */
int cap_decode_page(const cap_layout *l, const unsigned char *page, size_t len, cap_sink sink,
                    void *ctx, uint64_t *missed);

/* Per-I/O records from a stream of events: issue and complete paired per (sector,
 * operation) in issue order; a requeue withdraws the issue it matches. */
typedef struct cap_pair_stats {
    uint64_t issued, completed;
    uint64_t incomplete;          /* issued, not seen completing (latency unknown) */
    uint64_t unmatched_completes; /* completion of an I/O issued before the capture */
    uint64_t requeued;
    uint64_t errors;      /* completions with a non-zero error */
    uint64_t flush_steps; /* zero-sector data events of a flush sequence (skipped) */
} cap_pair_stats;

/* Sorts events by time and pairs them into records (time from the first issue,
 * latency = complete - issue). sector_base/sector_len select a partition's sectors of
 * the disk (len 0 = all) and rebase offsets to the partition. *out is malloc'd. */
void cap_pair(cap_event *ev, size_t nev, uint64_t sector_base, uint64_t sector_len, tr_record **out,
              size_t *nout, cap_pair_stats *st);

/* ------------------------------------------------------------------ tracefs session */

/* A dedicated tracefs instance recording the block events of one disk. */
typedef struct cap_session {
    char inst[512]; /* the instance directory */
    int ncpu;
    int *fds; /* per-CPU trace_pipe_raw, non-blocking */
    cap_layout layout;
    unsigned char *buf;
    size_t bufsize;
    cap_event *ev; /* every block event read so far */
    size_t nev, cap;
    size_t max_events; /* memory bound: past it, events are counted as lost */
    uint64_t over_limit;
    uint64_t missed_in_pages; /* losses the ring-buffer pages reported */
    uint64_t bad_pages;
} cap_session;

/* Mounts tracefs when needed, creates the instance, filters the block events to
 * kernel dev_t kdev and starts tracing. SIM_OK, or SIM_ERR with err. */
int cap_session_open(cap_session *s, uint32_t kdev, unsigned buffer_kb, size_t max_events,
                     char *err, size_t errlen);
/* Reads whatever the per-CPU buffers hold; waits up to wait_ms for data first. */
int cap_session_poll(cap_session *s, int wait_ms, char *err, size_t errlen);
/* Stops tracing, drains the buffers, and sums the kernel's per-CPU overrun and
 * dropped-event counters into *lost_kernel. */
int cap_session_stop(cap_session *s, uint64_t *lost_kernel, char *err, size_t errlen);
/* Closes the pipes and removes the instance. Safe after a failed open. */
void cap_session_close(cap_session *s);

#endif
