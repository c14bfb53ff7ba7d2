/*
 * trace/io/io_internal.h: `appsim io`, the labs' synthetic vdbench battery. A workload is
 * a definition (transfer sizes, read share, random share, outstanding I/Os, alignment);
 * io_source.c turns one into an endless stream of records that the replay loop
 * (replay_loop.c) and its rate curve (replay_curve.c) run on a section of the target, so the
 * synthetic workload and trace replay share one scheduler, one latency rule and one
 * curve. io_xfer.c parses vdbench's and fio's transfer-size forms; io_profiles.c holds
 * the built-in profiles; io_cmd.c is the command.
 *
 * Contract of trace/io/: it offers the `appsim io` command and nothing else to the rest of
 * appsim; this header is private to trace/io/ and its tests. Return codes (sim/sim.h):
 * the command, the source, the fill and a job's run return exit statuses (SIM_EXIT_*)
 * with err; the parsers (io_xfer_parse, io_profile_spec) return a status (SIM_OK, or
 * SIM_ERR with err). Includes: trace/trace.h (records, sources, replay and curve),
 * sim/sim.h and storage/storage.h; never another folder of trace/.
 *
 * Invariants: a parsed transfer-size distribution has 1..IO_MAX_BINS bins whose shares
 * sum to 100 (within 0.01); every size is at least 512 bytes and at most IO_MAX_XFER.
 */
#ifndef APPSIM_TRACE_IO_INTERNAL_H
#define APPSIM_TRACE_IO_INTERNAL_H

#include "trace/trace.h"

#define IO_MAX_BINS 32
#define IO_MAX_XFER (16u << 20)

/* Transfer sizes: one size, a distribution of sizes with shares (vdbench
 * (size,pct,...), fio bssplit), or a uniform range in steps (vdbench (min,max,align)). */
typedef enum io_xfer_kind { IO_XFER_FIXED, IO_XFER_SPLIT, IO_XFER_RANGE } io_xfer_kind;

typedef struct io_xfer {
    io_xfer_kind kind;
    int nbins;                  /* FIXED: 1; SPLIT: bins; RANGE: 0 */
    uint32_t size[IO_MAX_BINS]; /* bytes */
    double pct[IO_MAX_BINS];    /* share in percent; sums to 100 */
    uint32_t min, max, step;    /* RANGE: sizes min, min+step, ..., max */
} io_xfer;

/* "4k"; "(4k,70,8k,30)" (vdbench: size, percent pairs); "(4k,64k,4k)" (vdbench: min,
 * max, step, three values with the last two sizes); "4k/70:8k/30" (fio bssplit; a
 * share left empty takes what is left). SIM_OK or SIM_ERR with the reason in err. */
int io_xfer_parse(const char *s, io_xfer *x, char *err, size_t errlen);
/* One size drawn from the distribution. */
uint32_t io_xfer_draw(const io_xfer *x, sim_rng *rng);
uint32_t io_xfer_max(const io_xfer *x);
uint32_t io_xfer_min(const io_xfer *x);
/* A value whose lowest set bit is the lowest set bit of any size the distribution can
 * draw (the OR of its sizes; for min..max in steps, min | step): a block size that
 * divides it divides every size. */
uint32_t io_xfer_size_bits(const io_xfer *x);
/* The mean transfer size in bytes (for MB/s targets and messages). */
double io_xfer_mean(const io_xfer *x);
/* vdbench's spelling: "4k", "(4k,70,8k,30)", "(4k,64k,4k)". */
void io_xfer_format(const io_xfer *x, char *buf, size_t len);
json_t *io_xfer_json(const io_xfer *x);

/* A workload definition. */
typedef struct io_spec {
    io_xfer xfer;
    double read_pct;   /* 0..100: share of reads (vdbench rdpct, fio rwmixread) */
    double random_pct; /* 0..100: share of random offsets (vdbench seekpct) */
    unsigned threads;  /* outstanding I/Os (vdbench threads, fio iodepth x numjobs) */
    uint32_t align;    /* random offsets on multiples of this; 0 = each I/O's own size */
} io_spec;

/* A built-in profile: the published battery's definitions. */
typedef struct io_profile {
    const char *name;
    const char *description;
    const char *xfer; /* in io_xfer_parse's syntax */
    double read_pct, random_pct;
    unsigned threads;
    /* NULL for the labs' published definitions; otherwise why this is an approximation
     * (the labs do not publish the database profiles; docs/io.md gives the sources). */
    const char *approximation;
} io_profile;

/* Built-in profiles in the labs' order; NULL-terminated. */
const io_profile *const *io_profiles(void);
const io_profile *io_profile_find(const char *name);
/* The definition of a profile (its xfer string parsed). SIM_OK or SIM_ERR with err. */
int io_profile_spec(const io_profile *p, io_spec *out, char *err, size_t errlen);
json_t *io_spec_json(const io_spec *s);

/* The records of a spec on a section of `length` bytes (offsets 0..length, volume 0,
 * placed in the target by the replay). limit 0 = endless; otherwise the source ends
 * after `limit` records. A rewind continues the stream (a synthetic workload has no
 * first record to go back to: every curve point draws new offsets). */
int io_source_open(const io_spec *s, uint64_t length, uint64_t limit, uint64_t seed,
                   tr_source **out, char *err, size_t errlen);
/* The scan the replay needs (span, largest I/O) for a spec on a section; free with
 * tr_scan_free. */
int io_source_scan(const io_spec *s, uint64_t length, tr_scan *out, char *err, size_t errlen);

/* One workload of a run: a built-in profile, or the definition given by options. */
typedef struct io_job {
    const char *name;          /* profile name, or "custom" */
    const char *description;   /* NULL for custom */
    const char *approximation; /* NULL unless the profile is an approximation */
    io_spec spec;
} io_job;

/* What a run does with its jobs, in order: fill the section (when asked), then each
 * job as a rate curve or as one run. */
typedef struct io_plan {
    st_target *t;
    const char *engine;
    uint64_t data_bytes; /* the data file's size, or the device's usable capacity */
    uint64_t section_offset, section_length;
    bool fill;
    uint32_t fill_bs;
    unsigned fill_qd;
    bool curve;
    const double *fractions; /* curve points (NULL = 10 .. 120 %) */
    int nfractions;
    uint64_t warmup_ns; /* SIM_WARMUP_STEADY: one run's steady-state warm-up */
    uint64_t steady_round_ns, steady_max_rounds;
    uint64_t duration_ns, report_interval_ns;
    double rate; /* one run: fixed arrival rate per second; 0 = as fast as possible */
    uint64_t seed;
    bool quiet;
} io_plan;

/* The data file every run of `appsim io` uses in a directory target. */
#define IO_DATA_FILE "io.data"

/* Writes the section end to end (sequential fill_bs writes at fill_qd); *out = what was
 * done {"bytes","block_bytes","qd","seconds","mbps","engine","finished_at"}. */
int io_fill(const io_plan *p, json_t **out, char *err, size_t errlen);
/* Runs one job. entry gets {"profile","description","approximation","definition"} and
 * "curve" (tr_replay_curve's document) or "replay" (the run's replay stats, with the
 * run itself put at the top level of doc, which then holds one job only). */
int io_run_job(const io_plan *p, const io_job *j, json_t *entry, json_t *doc, char *err,
               size_t errlen);
/* What every job ran on: the section, the fill, the target's preconditioning. */
void io_print_head(FILE *out, const json_t *doc);
/* The text summary of one job's entry (curve table or run summary). */
void io_print_entry(FILE *out, const json_t *entry, const json_t *doc);

#endif
