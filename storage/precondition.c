/*
 * storage/precondition.c: the workload-independent preconditioning of SNIA PTS-E:
 * sequential writes of random data over the whole region, pass after pass, at a fixed
 * queue depth through one of storage's engines (io_uring by default).
 *
 * The queue is kept full: every completion is answered at once by the next block, so
 * the drive sees `queue_depth` writes in flight the whole time, as fio's iodepth does.
 * Offsets wrap at the end of the region; each pass writes the region in order.
 * The data is random so that a compressing or deduplicating drive stores all of it.
 */
#include "storage/storage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct writer {
    const st_precond_job *job;
    st_engine *eng;
    int fd;
    st_io *ios;
    st_io **free_ios;
    unsigned nfree;
    uint64_t submitted, done; /* bytes */
    uint64_t t0, next_checkpoint;
    sim_progress prog;
    int error; /* first -errno, or -EIO for a short write */
} writer;

/* The shared progress line, with the pass and the write rate. */
static void progress(writer *w, uint64_t now, bool last)
{
    const st_precond_job *j = w->job;
    double secs = (double)(now - w->t0) / 1e9;
    char done[32], total[32], detail[160];
    sim_format_size(w->done, done, sizeof done);
    sim_format_size(j->total_bytes, total, sizeof total);
    uint64_t pass = w->done / j->region_bytes + 1;
    if (pass * j->region_bytes > j->total_bytes) pass = (j->total_bytes - 1) / j->region_bytes + 1;
    snprintf(detail, sizeof detail, "%s of %s, pass %llu of %llu, %.1f MiB/s", done, total,
             (unsigned long long)pass,
             (unsigned long long)((j->total_bytes + j->region_bytes - 1) / j->region_bytes),
             secs > 0 ? (double)w->done / secs / 1048576.0 : 0.0);
    sim_progress_line(&w->prog, now, w->done, detail, last);
}

/* Queues the next blocks into every free slot. */
static int fill_queue(writer *w, st_io **batch)
{
    const st_precond_job *j = w->job;
    unsigned nb = 0;
    while (w->nfree > 0 && w->submitted < j->total_bytes) {
        st_io *io = w->free_ios[--w->nfree];
        uint64_t left = j->total_bytes - w->submitted;
        io->op = ST_OP_WRITE;
        io->fd = w->fd;
        io->offset = w->submitted % j->region_bytes;
        io->len = (uint32_t)(left < j->block_bytes ? left : j->block_bytes);
        io->intended_ns = 0;
        w->submitted += io->len;
        batch[nb++] = io;
    }
    return (int)nb;
}

/* Accounts completed writes and returns their slots. */
static void settle(writer *w, st_io **done, int n)
{
    for (int i = 0; i < n; i++) {
        st_io *io = done[i];
        if (io->result == (int64_t)io->len)
            w->done += io->len;
        else if (!w->error)
            w->error = io->result < 0 ? (int)io->result : -EIO;
        w->free_ios[w->nfree++] = io;
    }
}

static void tick(writer *w)
{
    uint64_t now = sim_now_ns();
    if (sim_progress_due(&w->prog, now)) progress(w, now, false);
    if (w->job->checkpoint && now >= w->next_checkpoint) {
        w->job->checkpoint(w->job->ctx, w->done, (double)(now - w->t0) / 1e9);
        w->next_checkpoint = now + 10000000000ull;
    }
}

/* The loop: keep the queue full until everything is written, then drain. */
static int run(writer *w, st_precond_outcome *out)
{
    unsigned qd = w->job->queue_depth;
    st_io **batch = sim_xcalloc(qd, sizeof *batch), **done = sim_xcalloc(qd, sizeof *done);
    int rc = 0;
    for (;;) {
        bool stopping = rc || w->error || sim_interrupted() || sim_fault_noted();
        int nb = stopping ? 0 : fill_queue(w, batch);
        if (nb == 0 && st_engine_inflight(w->eng) == 0) break;
        unsigned taken = 0;
        int n = st_engine_submit_reap(w->eng, batch, (unsigned)nb, &taken, done, qd, 1);
        for (unsigned i = taken; i < (unsigned)nb; i++) { /* not queued: back to the pool */
            w->submitted -= batch[i]->len;
            w->free_ios[w->nfree++] = batch[i];
        }
        if (n < 0 && n != -EINTR) {
            if (!rc) rc = n;
            if (nb == 0) break; /* waiting failed: nothing more comes back */
            continue;           /* submitting failed (refused after a fault): drain first */
        }
        if (n > 0) settle(w, done, n);
        tick(w);
    }
    out->interrupted = sim_interrupted();
    free(batch);
    free(done);
    return rc ? rc : w->error;
}

static void fill_random(uint8_t *buf, size_t len)
{
    sim_rng rng;
    sim_rng_seed(&rng, (uint64_t)sim_now_ns(), 0);
    for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t x = sim_rng_u64(&rng);
        memcpy(buf + i, &x, 8);
    }
}

int st_precondition_write(int fd, const st_precond_job *job, st_precond_outcome *out, char *err,
                          size_t errlen)
{
    memset(out, 0, sizeof *out);
    writer w = {.job = job, .fd = fd};
    w.eng = st_engine_open(job->engine, job->queue_depth, err, errlen);
    if (!w.eng) return SIM_EXIT_FAIL;
    out->engine = st_engine_name(w.eng);
    size_t bufbytes = (size_t)job->queue_depth * job->block_bytes;
    uint8_t *bufs = st_alloc_aligned(bufbytes);
    w.ios = sim_xcalloc(job->queue_depth, sizeof *w.ios);
    w.free_ios = sim_xcalloc(job->queue_depth, sizeof *w.free_ios);
    int rc = 0;
    if (!bufs) {
        snprintf(err, errlen, "out of memory for %u buffers of %u bytes", job->queue_depth,
                 job->block_bytes);
        rc = SIM_EXIT_FAIL;
        goto out;
    }
    fill_random(bufs, bufbytes);
    /* No fixed buffers or files: on a loop device over O_DIRECT they made 128 KiB
     * writes slower, for fio as for appsim (docs/storage.md), and fio's sequential
     * write, the reference, does not use them either. */
    for (unsigned i = 0; i < job->queue_depth; i++) {
        w.ios[i].buf = bufs + (size_t)i * job->block_bytes;
        w.free_ios[w.nfree++] = &w.ios[i];
    }
    sim_progress_start(&w.prog, "precondition", job->total_bytes, job->quiet);
    w.t0 = w.prog.t0;
    w.next_checkpoint = w.t0 + 10000000000ull;
    int e = run(&w, out);
    uint64_t end = sim_now_ns();
    out->bytes_written = w.done;
    out->seconds = (double)(end - w.t0) / 1e9;
    if (!job->quiet) progress(&w, end, true);
    if (e) {
        snprintf(err, errlen, "preconditioning write failed after %llu bytes: %s",
                 (unsigned long long)w.done, strerror(-e));
        rc = SIM_EXIT_FAIL;
    }
out:
    st_engine_close(w.eng);
    st_free_aligned(bufs);
    free(w.ios);
    free(w.free_ios);
    return rc;
}
