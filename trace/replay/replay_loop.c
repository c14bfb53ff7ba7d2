/*
 * trace/replay/replay_loop.c: replays a tr_source on a target through a storage engine, in trace
 * order, with one of three schedules: the captured timestamps (scaled by speed), as
 * fast as possible with at most qd outstanding, or a fixed arrival rate (the curve's
 * points). One thread submits and reaps: the order of submission is the order of
 * the trace, and each I/O's latency runs from when it was due (its intended start) to
 * its completion, so a replay that falls behind shows it in latency and in the
 * submission lag (submit time - due time), reported as p50/p99/max.
 *
 * Invariants: every record of every pass is either issued exactly once or counted in
 * the stats under the reason it was not (zero length, trim on a file); the loop
 * never blocks while an I/O is due, except when qd I/Os are already outstanding.
 */
#include "trace/replay/replay_internal.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

enum { T_READ, T_WRITE, T_FLUSH, T_TRIM };
enum { C_BYTES_READ, C_BYTES_WRITTEN };
static const char *const type_names[] = {"read", "write", "flush", "trim"};
static const char *const counter_names[] = {"bytes_read", "bytes_written"};

void tr_replay_run_config(sim_run_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->type_names = type_names;
    cfg->ntypes = 4;
    cfg->counter_names = counter_names;
    cfg->ncounters = 2;
    cfg->unit = "iops";
    cfg->instances = 1;
}

ST_REGISTER_TARGET_FILES(replay, "replay.data")
ST_REGISTER_TARGET_FILES(io, "io.data")     /* trace/io/io_run.c's IO_DATA_FILE */
ST_REGISTER_TARGET_FILES(vdi, "vdi-*.data") /* trace/vdi/vdi_cmd.c */

void tr_replay_opts_default(tr_replay_opts *o)
{
    memset(o, 0, sizeof *o);
    o->timing = TR_TIMING_ORIGINAL;
    o->speed = 1.0;
    o->qd = 32;
    o->map = TR_MAP_NONE;
    o->file_name = "replay.data";
    o->loops = 1;
    o->seed = 1;
}

typedef struct replay {
    const tr_replay_opts *o;
    tr_source *src;
    sim_run *run;
    sim_meter *meter;
    st_engine *eng;
    tr_place place;
    int fd;
    bool device, buffered;
    bool nowait;    /* the target takes I/O without blocking (st_fd_nowait) */
    int old_policy; /* the submitter's policy before the run, -1 when left as it was */
    unsigned qd;
    uint32_t slot_bytes;
    unsigned char *bufs;
    st_io *ios;
    st_io **free_ios;
    unsigned nfree;
    sim_hist *lag;
    sim_rng rng;
    /* schedule */
    uint64_t t0, next_due, pass_offset, last_time;
    uint64_t win_from, win_to, offered; /* I/Os due inside the measured phase */
    uint64_t passes, max_passes;
    bool looping, src_done, have_rec;
    tr_record rec;
    /* counts */
    uint64_t records, issued, completed, errors, zero_len, trims_skipped;
    uint64_t bytes_read, bytes_written;
    int first_errno;
    int policy; /* the submitter's scheduling policy during the run */
} replay;

static uint64_t due_time(replay *rp, const tr_record *r, uint64_t now)
{
    switch (rp->o->timing) {
    case TR_TIMING_ORIGINAL: {
        double speed = rp->o->speed > 0 ? rp->o->speed : 1.0;
        double t = (double)(r->time_ns + rp->pass_offset) / speed;
        return rp->t0 + (uint64_t)t;
    }
    case TR_TIMING_RATE:
        return rp->next_due;
    default:
        return now; /* afap: due as soon as a slot is free */
    }
}

static void advance_rate(replay *rp)
{
    if (rp->o->timing != TR_TIMING_RATE) return;
    double rate = rp->o->rate > 0 ? rp->o->rate : 1.0;
    rp->next_due += rp->o->uniform ? (uint64_t)(1e9 / rate) : sim_rng_exp_ns(&rp->rng, rate);
}

/* Next record into rp->rec, handling pass ends: TR_NEXT_RECORD, TR_NEXT_END when the
 * source is done, or TR_NEXT_ERROR with err. */
static int fetch(replay *rp, char *err, size_t errlen)
{
    for (;;) {
        int rc = tr_next(rp->src, &rp->rec);
        if (rc == TR_NEXT_RECORD) {
            rp->last_time = rp->rec.time_ns;
            rp->records++;
            return TR_NEXT_RECORD;
        }
        if (rc < 0) {
            snprintf(err, errlen, "%s", tr_error(rp->src));
            return TR_NEXT_ERROR;
        }
        rp->passes++;
        if (rp->records == 0) {
            snprintf(err, errlen, "the trace holds no I/O records");
            return TR_NEXT_ERROR;
        }
        if (!rp->looping || (rp->max_passes && rp->passes >= rp->max_passes)) return TR_NEXT_END;
        if (tr_rewind(rp->src) < 0) {
            snprintf(err, errlen, "%s", tr_error(rp->src));
            return TR_NEXT_ERROR;
        }
        /* The next pass starts one mean inter-arrival time after this one ended. */
        uint64_t gap = rp->records > 1 ? rp->last_time / (rp->records / rp->passes) : 0;
        rp->pass_offset += rp->last_time + (gap ? gap : 1000);
    }
}

static void complete(replay *rp, st_io *io)
{
    int type = (int)io->tag;
    rp->completed++;
    if (io->result < 0 || (io->len && (uint64_t)io->result != io->len &&
                           (io->op == ST_OP_READ || io->op == ST_OP_WRITE))) {
        if (!rp->first_errno) rp->first_errno = io->result < 0 ? (int)-io->result : EIO;
        rp->errors++;
        sim_meter_error(rp->meter, type);
    } else {
        /* The bytes first: they join the phase the I/O is recorded in. */
        if (io->op == ST_OP_READ) {
            rp->bytes_read += io->len;
            sim_meter_count(rp->meter, C_BYTES_READ, io->len);
        } else if (io->op == ST_OP_WRITE) {
            rp->bytes_written += io->len;
            sim_meter_count(rp->meter, C_BYTES_WRITTEN, io->len);
        }
        /* A timed replay is open-loop: its measured I/Os are those that arrived in the
         * measured phase (a curve point's rate is its arrivals served; a backlog left
         * by the warm-up is not the point's throughput). */
        if (rp->o->timing == TR_TIMING_AFAP)
            sim_meter_record(rp->meter, type, io->intended_ns, io->complete_ns);
        else
            sim_meter_record_arrival(rp->meter, type, io->intended_ns, io->complete_ns);
    }
    rp->free_ios[rp->nfree++] = io;
}

static int reap(replay *rp, unsigned min_wait)
{
    st_io *done[256];
    int n = st_engine_reap(rp->eng, done, 256, min_wait);
    if (n < 0) return n;
    for (int i = 0; i < n; i++)
        complete(rp, done[i]);
    return n;
}

/*
 * Hands the batch to the engine and reaps, waiting for min_wait completions. At QD 1
 * the wait always follows the submission, so both go in one system call (io_uring:
 * one io_uring_enter per I/O instead of two). At higher depths the submission returns
 * first: on a device the kernel serves through its io_uring workers (no NOWAIT
 * support, e.g. zram), the woken worker then takes the CPU while the submitter is
 * still runnable and completes several I/Os before the wait, where submitting and
 * waiting in one call put the submitter to sleep and woke it for each completion
 * (0.97 against 0.72 context switches per I/O at QD 32, docs/io.md).
 * Returns the number reaped or -errno.
 */
static int submit_reap(replay *rp, st_io *const *batch, unsigned nb, unsigned min_wait)
{
    st_io *done[256];
    unsigned off = 0;
    int reaped = 0;
    do {
        unsigned s = 0;
        int n;
        if (rp->qd == 1 || off == nb) {
            n = st_engine_submit_reap(rp->eng, batch + off, nb - off, &s, done, 256, min_wait);
        } else {
            int r = st_engine_submit(rp->eng, batch + off, nb - off);
            if (r < 0) return r;
            s = (unsigned)r;
            n = st_engine_reap(rp->eng, done, 256, min_wait);
        }
        if (n < 0) return n;
        for (unsigned i = off; i < off + s; i++)
            sim_hist_record(rp->lag, batch[i]->submit_ns > batch[i]->intended_ns
                                         ? batch[i]->submit_ns - batch[i]->intended_ns
                                         : 0);
        off += s;
        rp->issued += s;
        for (int i = 0; i < n; i++)
            complete(rp, done[i]);
        reaped += n;
        min_wait = 1; /* the engine was full (cannot happen: nb <= free slots): make room */
    } while (off < nb);
    return reaped;
}

/* Fills io from rp->rec; false when the record is not issued (counted). */
static bool prepare(replay *rp, st_io *io)
{
    const tr_record *r = &rp->rec;
    uint64_t off;
    uint32_t len;
    if ((r->op == TR_READ || r->op == TR_WRITE) && r->length == 0) {
        rp->zero_len++;
        return false;
    }
    if (r->op == TR_DISCARD && !rp->device && !rp->o->discard_files) {
        /* A punched hole would make later reads of it skip the drive. */
        rp->trims_skipped++;
        return false;
    }
    tr_place_map(&rp->place, r, &off, &len);
    if (len > rp->slot_bytes)
        len = rp->slot_bytes; /* cannot happen: slots hold the scan's largest I/O */
    io->fd = rp->fd;
    io->offset = off;
    io->len = len;
    io->result = 0;
    switch (r->op) {
    case TR_READ:
        io->op = ST_OP_READ;
        io->tag = T_READ;
        break;
    case TR_WRITE:
        io->op = ST_OP_WRITE;
        io->tag = T_WRITE;
        break;
    case TR_FLUSH:
        io->op = ST_OP_FDATASYNC;
        io->tag = T_FLUSH;
        io->offset = 0;
        io->len = 0;
        break;
    default:
        io->op = ST_OP_DISCARD;
        io->tag = T_TRIM;
        break;
    }
    return true;
}

/*
 * Waits for the next arrival (rate and original timing). Far from it, the wait is the
 * engine's: it returns at the first completion, stamped as it comes, or 50 us before
 * the arrival (a timer wakes 10-30 us late here, so the rest is spun). Nearer, it
 * spins; with I/Os in flight each turn yields the core, because the I/O may be served
 * by an io_uring worker thread of this process on this core (a device without NOWAIT
 * support, e.g. zram), which a spinning submitter would starve. Returns the number of
 * I/Os reaped or -errno.
 */
#define REPLAY_SPIN_NS 60000
static int pause_until(replay *rp, uint64_t due)
{
    uint64_t now = sim_now_ns();
    if (due <= now) return 0;
    if (due - now <= REPLAY_SPIN_NS) {
        if (st_engine_inflight(rp->eng) > 0) sched_yield();
        return 0;
    }
    uint64_t until = due - 50000;
    /* Notice an interruption or the end of the run. */
    if (until - now > 100000000) until = now + 100000000;
    st_io *done[256];
    int n = st_engine_reap_until(rp->eng, done, 256, until);
    for (int i = 0; i < n; i++)
        complete(rp, done[i]);
    return n;
}

/* Buffer slots hold the largest I/O of the trace once aligned, one more block only when
 * an I/O can straddle one (an unaligned offset or length in the trace, or offsets
 * scaled); qd of them at most 1 GiB, checked in 64 bits (a 4 GiB I/O must be refused,
 * not wrapped to a small one). The slots are packed: on the project's virtio disk, 4 KiB
 * reads into slots 8 KiB apart got 17-34 % fewer IOPS than into slots 4 KiB apart, for
 * a reason not found (docs/measurements/io.md, "The I/O buffers' stride"). */
#define REPLAY_BUFFER_CAP (1ull << 30)
static int check_slots(replay *rp, tr_source *src, const tr_scan *scan, const tr_replay_opts *o,
                       uint32_t bs, char *err, size_t errlen)
{
    uint64_t slot = (scan->max_length + bs - 1) / bs * bs;
    bool straddles = o->map == TR_MAP_SCALE || scan->align_bits % bs != 0;
    if (!rp->buffered && bs > 1 && straddles) slot += bs;
    if (slot == 0) slot = bs;
    rp->qd = o->qd;
    if (slot > REPLAY_BUFFER_CAP) {
        char at[600];
        tr_source_where(src, scan->max_pos, scan->max_n, at, sizeof at);
        snprintf(err, errlen,
                 "%s: an I/O of %llu bytes; appsim replays I/Os of up to 1 GiB: split it, or "
                 "leave it out (trace slice)",
                 at, (unsigned long long)scan->max_length);
        return SIM_EXIT_USAGE;
    }
    if (slot * rp->qd > REPLAY_BUFFER_CAP) {
        snprintf(err, errlen,
                 "buffers for %u I/Os of up to %llu bytes exceed 1 GiB: lower %s to %llu or less",
                 rp->qd, (unsigned long long)slot, o->qd_option ? o->qd_option : "--qd",
                 (unsigned long long)(REPLAY_BUFFER_CAP / slot));
        return SIM_EXIT_USAGE;
    }
    rp->slot_bytes = (uint32_t)slot;
    return SIM_EXIT_OK;
}

static int run_loop(replay *rp, char *err, size_t errlen)
{
    st_io *batch[256];
    uint64_t stop_at = rp->o->duration_ns && sim_run_cfg(rp->run)->duration_ns == 0
                           ? rp->t0 + rp->o->duration_ns
                           : UINT64_MAX;
    rp->next_due = rp->t0;
    advance_rate(rp);
    for (;;) {
        bool stopping = sim_run_done(rp->run) || sim_now_ns() >= stop_at;
        unsigned nb = 0;
        uint64_t now = sim_now_ns(), wait_due = 0;
        while (!stopping && nb < 256 && rp->nfree > 0) {
            if (!rp->have_rec && !rp->src_done) {
                int rc = fetch(rp, err, errlen);
                if (rc == TR_NEXT_ERROR) return SIM_EXIT_FAIL;
                rp->have_rec = rc == TR_NEXT_RECORD;
                rp->src_done = rc == TR_NEXT_END;
            }
            if (!rp->have_rec) break;
            uint64_t due = due_time(rp, &rp->rec, now);
            if (due > now) {
                now = sim_now_ns();
                if (due > now) {
                    wait_due = due;
                    break;
                }
            }
            st_io *io = rp->free_ios[rp->nfree - 1];
            rp->have_rec = false;
            if (!prepare(rp, io)) continue;
            rp->nfree--;
            io->intended_ns = rp->o->timing == TR_TIMING_AFAP ? now : due;
            /* The run's window, read live: a steady-state warm-up opens it late. */
            if (due >= sim_run_measure_start_ns(rp->run) && due < sim_run_measure_end_ns(rp->run))
                rp->offered++;
            advance_rate(rp);
            batch[nb++] = io;
        }
        unsigned inflight = st_engine_inflight(rp->eng) + nb;
        bool more = !stopping && (rp->have_rec || !rp->src_done);
        if (!more && inflight == 0) break;
        /* Block for a completion only when nothing else can be done before one. */
        unsigned min_wait = (rp->nfree == 0 || !more) && inflight > 0 ? 1 : 0;
        if (rp->o->timing == TR_TIMING_AFAP && more && rp->nfree > 0) min_wait = 0;
        int n = submit_reap(rp, batch, nb, min_wait);
        if (n < 0) {
            snprintf(err, errlen, "%s I/O failed: %s", nb ? "submitting" : "waiting for",
                     strerror(-n));
            return SIM_EXIT_FAIL;
        }
        if (n == 0 && nb == 0 && wait_due && (n = pause_until(rp, wait_due)) < 0) {
            snprintf(err, errlen, "waiting for I/O failed: %s", strerror(-n));
            return SIM_EXIT_FAIL;
        }
    }
    return SIM_EXIT_OK;
}

static json_t *lag_json(const sim_hist *h)
{
    return json_pack("{s:I, s:f, s:f, s:f, s:f}", "count", (json_int_t)sim_hist_count(h), "p50_us",
                     sim_hist_percentile(h, 50) / 1e3, "p99_us", sim_hist_percentile(h, 99) / 1e3,
                     "max_us", sim_hist_max(h) / 1e3, "mean_us", sim_hist_mean(h) / 1e3);
}

static const char *timing_name(tr_timing t)
{
    return t == TR_TIMING_ORIGINAL ? "original" : t == TR_TIMING_AFAP ? "afap" : "rate";
}

/* Checks the region against the data's size and places the volumes in it. */
static int place_region(replay *rp, const tr_scan *scan, uint32_t align, uint64_t size, char *err,
                        size_t errlen)
{
    const tr_replay_opts *o = rp->o;
    if (o->region_offset >= size) {
        snprintf(err, errlen, "--region starts at %llu, beyond the end of the data (%llu)",
                 (unsigned long long)o->region_offset, (unsigned long long)size);
        return SIM_EXIT_USAGE;
    }
    uint64_t rlen = o->region_length ? o->region_length : size - o->region_offset;
    if (rlen > size - o->region_offset) {
        snprintf(err, errlen,
                 "--region of %llu bytes from %llu ends beyond the end of the data (%llu)",
                 (unsigned long long)rlen, (unsigned long long)o->region_offset,
                 (unsigned long long)size);
        return SIM_EXIT_USAGE;
    }
    return tr_place_init(&rp->place, scan, o->map, align, o->region_offset, rlen, err, errlen);
}

/* Places the trace's volumes in the region, then opens (or sizes) the data file or
 * device; *size = bytes of data. The placement is checked against the size the data
 * will have before the file is created or resized, so that a refusal leaves the target
 * as it was. */
static int place_data(replay *rp, st_target *t, const tr_scan *scan, uint64_t need, uint32_t align,
                      uint64_t *size, char *err, size_t errlen)
{
    const tr_replay_opts *o = rp->o;
    uint64_t want = o->file_size ? o->file_size : need;
    *size = tr_replay_data_size(t, want);
    int rc = place_region(rp, scan, align, *size, err, errlen);
    if (rc) return rc;
    uint64_t planned = *size;
    rc = tr_replay_open_data(t, o->file_name ? o->file_name : "replay.data", want, &rp->fd, size,
                             err, errlen);
    if (rc) return rc;
    if (*size != planned) { /* the device's capacity cannot change while it is held */
        snprintf(err, errlen, "the data is %llu bytes, not the %llu planned",
                 (unsigned long long)*size, (unsigned long long)planned);
        return SIM_EXIT_FAIL;
    }
    return SIM_EXIT_OK;
}

/* The I/O slots (buffers filled from the seeded generator) and the engine. */
static int open_slots(replay *rp, char *err, size_t errlen)
{
    const tr_replay_opts *o = rp->o;
    rp->bufs = st_alloc_aligned((size_t)rp->slot_bytes * rp->qd);
    rp->ios = sim_xcalloc(rp->qd, sizeof *rp->ios);
    rp->free_ios = sim_xcalloc(rp->qd, sizeof *rp->free_ios);
    rp->lag = sim_hist_new();
    if (!rp->bufs) {
        snprintf(err, errlen,
                 "cannot allocate %u I/O buffers of %u bytes: lower --iodepth or the block size",
                 rp->qd, rp->slot_bytes);
        return SIM_EXIT_FAIL;
    }
    sim_rng_seed(&rp->rng, o->seed, 7);
    for (size_t i = 0; i < (size_t)rp->slot_bytes * rp->qd; i += 8) {
        uint64_t x = sim_rng_u64(&rp->rng);
        memcpy(rp->bufs + i, &x, 8);
    }
    for (unsigned i = 0; i < rp->qd; i++) {
        rp->ios[i].buf = rp->bufs + (size_t)i * rp->slot_bytes;
        rp->free_ios[rp->nfree++] = &rp->ios[i];
    }
    rp->eng = st_engine_open(o->engine, rp->qd, err, errlen);
    if (!rp->eng) {
        return SIM_EXIT_FAIL;
    }
    /* Fixed file and buffers are speed-ups only: failing to register is not an error. */
    st_engine_register_file(rp->eng, rp->fd);
    st_engine_register_buffer(rp->eng, rp->bufs, (size_t)rp->slot_bytes * rp->qd);
    return SIM_EXIT_OK;
}

/*
 * The submitter's scheduling policy while it replays as fast as possible. On a target
 * without NOWAIT support, io_uring does every I/O in a worker thread of this process,
 * on a CPU: each completion wakes the submitter, which by default preempts the worker
 * for that one completion and gives the core back at its next wait (on zram at QD
 * 32-128, 0.5-0.7 context switches per I/O and a third of the CPU time; docs/io.md).
 * As SCHED_BATCH the submitter does not preempt on wake-up: the worker runs on until
 * its queue is empty or its time slice ends, and the submitter then takes the
 * completions together, stamped when it takes them as always (the latency recorded is
 * the latency it saw). Left alone: timed and rate replays (an arrival must be issued
 * when it is due, not when another task's slice ends), o->timely_wakeups (the curve's
 * maximum-rate run), targets that take I/O without blocking (NVMe, SATA, files on ext4
 * or XFS: no worker runs), psync, and a policy other than the default (the user's).
 */
static void submitter_policy_enter(replay *rp)
{
    rp->old_policy = -1;
    if (rp->nowait || rp->o->timing != TR_TIMING_AFAP || rp->o->timely_wakeups ||
        strcmp(st_engine_name(rp->eng), "io_uring") != 0)
        return;
    int policy = sched_getscheduler(0);
    struct sched_param sp = {0};
    if (policy == SCHED_OTHER && sched_setscheduler(0, SCHED_BATCH, &sp) == 0)
        rp->old_policy = policy;
}

static void submitter_policy_leave(replay *rp)
{
    struct sched_param sp = {0};
    if (rp->old_policy >= 0) sched_setscheduler(0, rp->old_policy, &sp);
}

static const char *policy_name(int policy)
{
    switch (policy) {
    case SCHED_OTHER:
        return "normal";
    case SCHED_BATCH:
        return "batch";
    case SCHED_IDLE:
        return "idle";
    case SCHED_FIFO:
        return "fifo";
    case SCHED_RR:
        return "rr";
    default:
        return "other";
    }
}

/* Starts the run with the first record in hand and replays until done; every issued
 * I/O is reaped before the run finishes. */
static int replay_run(replay *rp, sim_run *run, char *err, size_t errlen)
{
    const tr_replay_opts *o = rp->o;
    int rc;
    rp->meter = sim_run_meter(run, 0);
    rp->looping = o->loops > 1 || o->duration_ns > 0 || sim_run_cfg(run)->duration_ns > 0;
    rp->max_passes = o->duration_ns > 0 || sim_run_cfg(run)->duration_ns > 0
                         ? (o->loops > 1 ? o->loops : 0)
                         : (o->loops ? o->loops : 1);
    /* Timed replay wakes up to 50 us before a due time; the default 50 us timer slack
     * would make every wake-up late. */
    int old_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
    submitter_policy_enter(rp);
    /* The first record before the clock starts: a reader with a sort window parses a
     * window's worth of records to find it, which must not delay the first I/O. */
    rc = fetch(rp, err, errlen);
    rp->have_rec = rc == TR_NEXT_RECORD;
    rp->src_done = rc == TR_NEXT_END;
    if (rc != TR_NEXT_ERROR) {
        sim_run_start(run);
        rp->t0 = sim_now_ns();
        rc = run_loop(rp, err, errlen);
        rp->win_from = sim_run_measure_start_ns(run);
        rp->win_to = sim_run_measure_end_ns(run);
        /* The offered load counts every arrival due in the measured phase, also those
         * a stalled replayer had not issued when the phase ended. */
        if (o->timing == TR_TIMING_RATE && rp->win_to != UINT64_MAX)
            for (; rp->next_due < rp->win_to; advance_rate(rp))
                if (rp->next_due >= rp->win_from) rp->offered++;
    } else {
        rc = SIM_EXIT_FAIL;
        sim_run_start(run); /* finished below, so the run is in a defined state */
    }
    /* Drain what is still in flight so that every issued I/O is accounted. */
    while (st_engine_inflight(rp->eng) > 0 && reap(rp, 1) >= 0)
        ;
    sim_run_finish(run);
    rp->policy = sched_getscheduler(0);
    submitter_policy_leave(rp);
    if (old_slack > 0) prctl(PR_SET_TIMERSLACK, (unsigned long)old_slack, 0, 0, 0);
    return rc;
}

static json_t *replay_stats_json(const replay *rp, tr_source *src, uint64_t size)
{
    const tr_replay_opts *o = rp->o;
    json_t *j = json_pack(
        "{s:s, s:f, s:f, s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}",
        "timing", timing_name(o->timing), "speed", o->speed > 0 ? o->speed : 1.0, "rate",
        o->timing == TR_TIMING_RATE ? o->rate : 0.0, "qd", (json_int_t)rp->qd, "engine",
        st_engine_name(rp->eng), "records", (json_int_t)rp->records, "issued",
        (json_int_t)rp->issued, "completed", (json_int_t)rp->completed, "errors",
        (json_int_t)rp->errors, "zero_length_skipped", (json_int_t)rp->zero_len, "trims_skipped",
        (json_int_t)rp->trims_skipped, "bytes_read", (json_int_t)rp->bytes_read, "bytes_written",
        (json_int_t)rp->bytes_written, "passes", (json_int_t)rp->passes, "data_bytes",
        (json_int_t)size, "submission_lag_us", lag_json(rp->lag), "placement",
        tr_place_json(&rp->place));
    json_object_set_new(j, "source", tr_source_stats_json(src));
    json_object_set_new(j, "target_nowait", json_boolean(rp->nowait));
    json_object_set_new(j, "submitter_policy", json_string(policy_name(rp->policy)));
    json_object_set_new(j, "buffer_bytes", json_integer((json_int_t)rp->slot_bytes));
    if (rp->first_errno)
        json_object_set_new(j, "first_error", json_string(strerror(rp->first_errno)));
    if (o->timing != TR_TIMING_AFAP)
        json_object_set_new(j, "offered_in_measure", json_integer((json_int_t)rp->offered));
    return j;
}

int tr_replay(sim_run *run, tr_source *src, st_target *t, const tr_replay_opts *o, json_t **stats,
              char *err, size_t errlen)
{
    replay rp = {.o = o, .src = src, .run = run, .fd = -1};
    tr_scan own_scan = {0};
    const tr_scan *scan = o->scan;
    int rc;
    *stats = NULL;
    if (o->qd == 0 || o->qd > 4096) {
        snprintf(err, errlen, "queue depth %u is out of range (1..4096)", o->qd);
        return SIM_EXIT_USAGE;
    }
    if (!scan) {
        if ((rc = tr_scan_source(src, &own_scan, err, errlen))) return rc;
        scan = &own_scan;
    } else if ((rc = tr_rewind(src)) < 0) {
        snprintf(err, errlen, "%s", tr_error(src));
        return SIM_EXIT_FAIL;
    }
    if (scan->records == 0) {
        snprintf(err, errlen, "the trace holds no I/O records");
        rc = SIM_EXIT_USAGE;
        goto out;
    }
    rp.device = st_target_is_device(t);
    rp.buffered = st_target_buffered(t);
    uint32_t bs = st_target_block_size(t);
    uint32_t align = rp.buffered ? 1 : bs;
    uint64_t need, size = 0;
    if (tr_replay_needed_size(scan, bs, &need)) {
        snprintf(err, errlen, "the trace's volumes, laid side by side, need more than %llu bytes",
                 (unsigned long long)TR_MAX_EXTENT);
        rc = SIM_EXIT_USAGE;
        goto out;
    }
    if ((rc = check_slots(&rp, src, scan, o, bs, err, errlen))) goto out;
    if ((rc = place_data(&rp, t, scan, need, align, &size, err, errlen))) goto out;
    rp.nowait = st_fd_nowait(rp.fd, bs);
    if ((rc = open_slots(&rp, err, errlen))) goto out;
    rc = replay_run(&rp, run, err, errlen);
    if (rc == 0 && rp.errors > 0 && rp.errors == rp.completed && !sim_fault_noted()) {
        snprintf(err, errlen, "every I/O failed (first error: %s)", strerror(rp.first_errno));
        rc = SIM_EXIT_FAIL;
    }
    json_t *j = replay_stats_json(&rp, src, size);
    if (rc == 0)
        *stats = j;
    else
        json_decref(j); /* the error message says what went wrong */
out:
    if (rp.eng) st_engine_close(rp.eng);
    if (rp.fd >= 0) close(rp.fd);
    tr_place_free(&rp.place);
    st_free_aligned(rp.bufs);
    free(rp.ios);
    free(rp.free_ios);
    if (rp.lag) sim_hist_free(rp.lag);
    tr_scan_free(&own_scan);
    return rc;
}
