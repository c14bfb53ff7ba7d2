/*
 * storage/engine.c: the engine registry and the layer every engine shares: queue-depth
 * bound, latency recording into sim/ meters, the synchronous path (st_engine_do), the
 * io_uring -> psync fallback, and aligned buffers.
 *
 * Latency of an I/O = complete_ns - (intended_ns if set, else submit_ns): a caller that
 * knows when the I/O should have started (a trace replay, an open-loop generator) gets
 * queueing counted. Discards are not recorded in the meter (they are neither reads,
 * writes nor syncs); their failures are returned in result like any other.
 */
#include "storage/engine_internal.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

SIM_REGISTRY(engines, st_engine_ops, "I/O engines", 8);

void st_register_engine(const st_engine_ops *ops)
{
    sim_registry_add(&engines, ops);
}

const st_engine_ops *st_find_engine(const char *name)
{
    return sim_registry_find(&engines, name);
}

const char *st_engine_choices(void)
{
    return "io_uring|psync";
}

int st_engine_name_check(const char *name, char *err, size_t errlen)
{
    if (!name || st_find_engine(name)) return SIM_EXIT_OK;
    snprintf(err, errlen, "unknown I/O engine '%s' (choose one of: %s)", name, st_engine_choices());
    return SIM_EXIT_USAGE;
}

static st_engine *try_open(const st_engine_ops *ops, unsigned qd, char *err, size_t errlen)
{
    st_engine *e = sim_xcalloc(1, sizeof *e);
    e->ops = ops;
    e->qd = qd;
    e->read_type = e->write_type = e->sync_type = -1;
    if (ops->open(e, qd, err, errlen) != 0) {
        free(e);
        return NULL;
    }
    return e;
}

st_engine *st_engine_open(const char *name, unsigned queue_depth, char *err, size_t errlen)
{
    if (queue_depth == 0 || queue_depth > 32768) { /* io_uring's ring limit */
        snprintf(err, errlen, "queue depth %u is out of range (1..32768)", queue_depth);
        return NULL;
    }
    if (!name) name = "io_uring";
    const st_engine_ops *ops = st_find_engine(name);
    if (!ops) {
        snprintf(err, errlen, "unknown I/O engine '%s' (choose one of: %s)", name,
                 st_engine_choices());
        return NULL;
    }
    st_engine *e = try_open(ops, queue_depth, err, errlen);
    if (e || strcmp(name, "io_uring") != 0) return e;
    /* Containers and hardened kernels refuse io_uring: keep going synchronously. */
    const st_engine_ops *ps = st_find_engine("psync");
    if (!ps) return NULL;
    char why[512];
    snprintf(why, sizeof why, "%s", err);
    e = try_open(ps, queue_depth, err, errlen);
    if (e)
        sim_warn("io_uring is not available (%s); falling back to the psync engine (one "
                 "synchronous I/O at a time per thread); pass --ioengine psync to choose it "
                 "explicitly",
                 why);
    return e;
}

static int backend_reap(st_engine *e, st_io **done, unsigned max, unsigned min_wait);

void st_engine_close(st_engine *e)
{
    if (!e) return;
    /* A caller that stops on an error may leave I/Os in flight: they are waited for
     * here, so none outlives the buffers its caller frees after closing. */
    while (e->inflight > 0) {
        st_io *d[64];
        if (backend_reap(e, d, 64, 1) <= 0) break;
    }
    e->ops->close(e);
    free(e->stash);
    free(e);
}

const char *st_engine_name(const st_engine *e)
{
    return e->ops->name;
}

unsigned st_engine_queue_depth(const st_engine *e)
{
    return e->qd;
}

unsigned st_engine_inflight(const st_engine *e)
{
    return e->inflight;
}

void st_engine_set_meter(st_engine *e, sim_meter *m, int read_type, int write_type, int sync_type)
{
    e->meter = m;
    e->read_type = read_type;
    e->write_type = write_type;
    e->sync_type = sync_type;
}

int st_engine_register_file(st_engine *e, int fd)
{
    return e->ops->register_file ? e->ops->register_file(e, fd) : 0;
}

int st_engine_unregister_file(st_engine *e, int fd)
{
    return e->ops->unregister_file ? e->ops->unregister_file(e, fd) : 0;
}

int st_engine_register_buffer(st_engine *e, void *buf, size_t len)
{
    return e->ops->register_buffer ? e->ops->register_buffer(e, buf, len) : 0;
}

/* Fail-stop (sim/fault.c), for every caller at once: once a storage fault is noted the
 * engine takes no more writes or discards, so a thread that has not yet seen the fault
 * (a checkpointer, a replay's next batch, another file's writer) cannot send one. Reads
 * and syncs still go: they change nothing on the drive, and a caller may need them to
 * finish what it reports. Returns how many of ios[0..n) may be queued (those before
 * the first write or discard), or the fault as -errno when the first may not. */
static int fault_allows(st_io *const *ios, unsigned n)
{
    int err = sim_fault_noted();
    if (!err || n == 0) return (int)n;
    unsigned k = 0;
    while (k < n && ios[k]->op != ST_OP_WRITE && ios[k]->op != ST_OP_DISCARD)
        k++;
    return k ? (int)k : -err;
}

/* Queues up to n I/Os and, where the engine can, waits for wait_nr completions in the
 * same system call. */
static int submit_wait(st_engine *e, st_io *const *ios, unsigned n, unsigned wait_nr)
{
    unsigned room = e->qd - e->inflight;
    if (n > room) n = room;
    if (n == 0) return 0;
    int allowed = fault_allows(ios, n);
    if (allowed < 0) return allowed;
    n = (unsigned)allowed;
    if (wait_nr > e->inflight + n) wait_nr = e->inflight + n;
    int r = e->ops->submit_wait && wait_nr ? e->ops->submit_wait(e, ios, n, wait_nr)
                                           : e->ops->submit(e, ios, n);
    assert(r <= (int)n);
    if (r > 0) e->inflight += (unsigned)r;
    assert(e->inflight <= e->qd);
    return r;
}

int st_engine_submit(st_engine *e, st_io *const *ios, unsigned n)
{
    return submit_wait(e, ios, n, 0);
}

int st_engine_submit_reap(st_engine *e, st_io *const *ios, unsigned n, unsigned *submitted,
                          st_io **done, unsigned max, unsigned min_wait)
{
    unsigned wait = min_wait > e->nstash ? min_wait - e->nstash : 0;
    int s = submit_wait(e, ios, n, wait);
    if (s < 0) return s;
    if (submitted) *submitted = (unsigned)s;
    return st_engine_reap(e, done, max, min_wait);
}

/* The error a completion carries for fail-stop and the meter: its -errno, EIO for a
 * write that moved fewer bytes than asked (the filesystem filled or a size limit was
 * reached partway; the caller still gets the count), else 0. A short read is not one:
 * the VFS reads a file another VFS left without whole blocks, and gets its tail. */
static int completion_error(const st_io *io)
{
    if (io->result < 0) return (int)-io->result;
    return io->op == ST_OP_WRITE && (uint64_t)io->result != io->len ? EIO : 0;
}

/* Fail-stop: the first ENOSPC/EIO-like completion error (completion_error: a short
 * write counts as EIO) is recorded with the file it hit, which stops every run and
 * every further write (sim/fault.c). Every user of the engine gets this, whether or not
 * it also checks the count itself, so that no caller can count a short write as an
 * error and go on writing. */
static void note_fault(const st_io *io, int err)
{
    if (!sim_fault_errno_is_fatal(err) || sim_fault_noted()) return;
    static const char *const verbs[] = {"reading", "writing", "syncing", "syncing",
                                        "discarding in"};
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", io->fd);
    ssize_t len = readlink(link, path, sizeof path - 1);
    if (len < 0) len = snprintf(path, sizeof path, "file descriptor %d", io->fd);
    path[len] = 0;
    const char *verb = io->op < sizeof verbs / sizeof *verbs ? verbs[io->op] : "accessing";
    if (io->result >= 0) /* short */
        sim_fault_note(err, "short write to %s at offset %llu: %lld of %u bytes", path,
                       (unsigned long long)io->offset, (long long)io->result, io->len);
    else if (io->op == ST_OP_FSYNC || io->op == ST_OP_FDATASYNC)
        sim_fault_note(err, "%s %s", verb, path);
    else
        sim_fault_note(err, "%s %s at offset %llu (%u bytes)", verb, path,
                       (unsigned long long)io->offset, io->len);
}

static void record(st_engine *e, st_io **done, int n)
{
    for (int i = 0; i < n; i++) {
        int err = completion_error(done[i]);
        if (err) note_fault(done[i], err);
    }
    sim_meter *m = e->meter;
    if (!m) return;
    for (int i = 0; i < n; i++) {
        const st_io *io = done[i];
        int type;
        switch (io->op) {
        case ST_OP_READ:
            type = e->read_type;
            break;
        case ST_OP_WRITE:
            type = e->write_type;
            break;
        case ST_OP_FSYNC:
        case ST_OP_FDATASYNC:
            type = e->sync_type;
            break;
        default:
            type = -1;
        }
        if (type < 0) continue;
        if (completion_error(io))
            sim_meter_error(m, type);
        else
            sim_meter_record(m, type, io->intended_ns ? io->intended_ns : io->submit_ns,
                             io->complete_ns);
    }
}

/* Reap from the backend, account and record. */
static int backend_reap(st_engine *e, st_io **done, unsigned max, unsigned min_wait)
{
    if (min_wait > e->inflight)
        min_wait = e->inflight; /* never wait for I/Os that were not submitted */
    if (max == 0 || e->inflight == 0) return 0;
    int r = e->ops->reap(e, done, max, min_wait);
    assert(r <= (int)max && (r < 0 || (unsigned)r <= e->inflight)); /* only what was submitted */
    if (r > 0) {
        e->inflight -= (unsigned)r;
        record(e, done, r);
    }
    return r;
}

int st_engine_reap(st_engine *e, st_io **done, unsigned max, unsigned min_wait)
{
    unsigned got = 0;
    while (e->nstash && got < max)
        done[got++] = e->stash[--e->nstash];
    if (got >= max) return (int)got;
    unsigned want = min_wait > got ? min_wait - got : 0;
    int r = backend_reap(e, done + got, max - got, want);
    if (r < 0) return got ? (int)got : r;
    return (int)got + r;
}

static void sleep_until(uint64_t deadline_ns)
{
    uint64_t now = sim_now_ns();
    if (deadline_ns <= now) return;
    uint64_t gap = deadline_ns - now;
    struct timespec ts = {(time_t)(gap / 1000000000u), (long)(gap % 1000000000u)};
    nanosleep(&ts, NULL);
}

int st_engine_reap_until(st_engine *e, st_io **done, unsigned max, uint64_t deadline_ns)
{
    int got = st_engine_reap(e, done, max, 0);
    if (got != 0 || max == 0) return got;
    if (e->inflight == 0 || !e->ops->reap_until) {
        /* Nothing can complete before the deadline (engines without an asynchronous
         * wait finish their I/O at submission). */
        sleep_until(deadline_ns);
        return 0;
    }
    if (sim_now_ns() >= deadline_ns) return 0;
    int r = e->ops->reap_until(e, done, max, deadline_ns);
    if (r > 0) {
        e->inflight -= (unsigned)r;
        record(e, done, r);
    }
    return r;
}

/* Keeps an I/O reaped on behalf of another caller until the next st_engine_reap. */
static void stash(st_engine *e, st_io *io)
{
    if (e->nstash == e->stash_cap) {
        e->stash_cap = e->stash_cap ? 2 * e->stash_cap : 16;
        e->stash = sim_xrealloc(e->stash, e->stash_cap * sizeof *e->stash);
    }
    e->stash[e->nstash++] = io;
}

int64_t st_engine_do(st_engine *e, st_io *io)
{
    st_io *one[1] = {io};
    /* One system call: submit and wait for (at least) one completion. */
    for (;;) {
        int s = submit_wait(e, one, 1, 1);
        if (s < 0) return s;
        if (s == 1) break;
        /* Full: make room by reaping others' I/Os into the stash. */
        st_io *d[1];
        int r = backend_reap(e, d, 1, 1);
        if (r < 0) return r;
        if (r == 1) stash(e, d[0]);
    }
    for (;;) {
        st_io *d[1];
        int r = backend_reap(e, d, 1, 1);
        if (r < 0) return r;
        if (r == 0) continue;
        if (d[0] == io) return io->result;
        stash(e, d[0]);
    }
}

void *st_alloc_aligned(size_t len)
{
    void *p = NULL;
    if (len == 0) len = 4096;
    /* appsim-alloc: I/O buffers sized from the user's block size and queue depth; NULL
     * lets the caller say which option to lower (storage.h) */
    if (posix_memalign(&p, 4096, (len + 4095) & ~(size_t)4095) != 0) return NULL;
    return p;
}

void st_free_aligned(void *p)
{
    free(p);
}

int st_discard_sync(int fd, uint64_t off, uint64_t len)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    if (S_ISBLK(st.st_mode)) {
        uint64_t range[2] = {off, len};
        return ioctl(fd, BLKDISCARD, range) == 0 ? 0 : -errno;
    }
    return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) == 0
               ? 0
               : -errno;
}

bool st_fd_nowait(int fd, uint32_t block_size)
{
    if (block_size == 0) block_size = 4096;
    void *buf = st_alloc_aligned(block_size);
    if (!buf) return true; /* unknown: assume the common case */
    struct iovec iov = {.iov_base = buf, .iov_len = block_size};
    /* The kernel checks the file's NOWAIT support before anything else and answers
     * EOPNOTSUPP, the same test io_uring makes before it hands an I/O to a worker. */
    bool nowait = preadv2(fd, &iov, 1, 0, RWF_NOWAIT) >= 0 || errno != EOPNOTSUPP;
    st_free_aligned(buf);
    return nowait;
}

int64_t st_io_sync(const st_io *io)
{
    ssize_t r;
    switch (io->op) {
    case ST_OP_READ:
        r = pread(io->fd, io->buf, io->len, (off_t)io->offset);
        break;
    case ST_OP_WRITE:
        r = pwrite(io->fd, io->buf, io->len, (off_t)io->offset);
        break;
    case ST_OP_FSYNC:
        r = fsync(io->fd);
        break;
    case ST_OP_FDATASYNC:
        r = fdatasync(io->fd);
        break;
    case ST_OP_DISCARD:
        return st_discard_sync(io->fd, io->offset, io->len);
    default:
        return -EINVAL;
    }
    return r < 0 ? -errno : r;
}
