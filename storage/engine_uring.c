/*
 * storage/engine_uring.c: the io_uring engine. One ring per engine (engines are per
 * submitting thread), sized to the queue depth, so the submission queue can never be
 * full and the completion queue (twice as large) never overflows. Each st_engine_submit
 * is one io_uring_enter for the whole batch; reaping takes every completion already
 * posted in one pass and enters the kernel only to wait.
 *
 * Fixed files and buffers are used when the caller registers them (see storage.h):
 * registered files skip the per-I/O file reference, registered buffers the per-I/O
 * page pinning. Discard on a block device has no portable io_uring opcode in the
 * liburing we build against, so it runs synchronously (BLKDISCARD) and completes
 * at once; on files it is an asynchronous fallocate punch-hole.
 */
#include "storage/engine_internal.h"

#include <errno.h>
#include <linux/falloc.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_FIXED_FILES 64

typedef struct uring {
    struct io_uring ring;
    bool files_ready;
    int fixed[MAX_FIXED_FILES]; /* fd registered at each slot, -1 when free */
    char *buf_base;
    size_t buf_len;
    bool disabled;    /* created disabled: enabled by the first submission */
    st_io **now_done; /* completed during submission (block-device discard) */
    unsigned nnow;
} uring;

static int ur_open(st_engine *e, unsigned qd, char *err, size_t errlen)
{
    uring *u = sim_xcalloc(1, sizeof *u);
    u->now_done = sim_xcalloc(qd, sizeof *u->now_done);
    for (int i = 0; i < MAX_FIXED_FILES; i++)
        u->fixed[i] = -1;
    /* The setup fio uses: a single issuer with deferred task running, so completions
     * are processed in batches when this thread enters the kernel to wait, instead of
     * interrupting it; submit-all keeps a batch whole even if one entry fails. The ring
     * starts disabled and is enabled by the first submission, so the thread that
     * issues becomes its owner even when another thread opened the engine. Older
     * kernels reject some flags: retry with fewer, then plain. */
    static const unsigned tries[] = {
        IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG |
            IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_R_DISABLED,
        IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
        0,
    };
    int r = -EINVAL;
    for (size_t i = 0; i < sizeof tries / sizeof tries[0] && r == -EINVAL; i++) {
        struct io_uring_params p;
        memset(&p, 0, sizeof p);
        p.flags = tries[i];
        r = io_uring_queue_init_params(qd, &u->ring, &p);
        if (r == 0) u->disabled = (tries[i] & IORING_SETUP_R_DISABLED) != 0;
    }
    if (r < 0) {
        snprintf(err, errlen, "io_uring_setup with %u entries failed: %s", qd, strerror(-r));
        free(u->now_done);
        free(u);
        return SIM_ERR;
    }
    e->priv = u;
    return SIM_OK;
}

static void ur_close(st_engine *e)
{
    uring *u = e->priv;
    io_uring_queue_exit(&u->ring);
    free(u->now_done);
    free(u);
}

static int fixed_slot(const uring *u, int fd)
{
    if (!u->files_ready) return -1;
    for (int i = 0; i < MAX_FIXED_FILES; i++)
        if (u->fixed[i] == fd) return i;
    return -1;
}

static int ur_register_file(st_engine *e, int fd)
{
    uring *u = e->priv;
    if (fixed_slot(u, fd) >= 0) return 0;
    if (!u->files_ready) {
        int r = io_uring_register_files_sparse(&u->ring, MAX_FIXED_FILES);
        if (r < 0) return r;
        u->files_ready = true;
    }
    for (int i = 0; i < MAX_FIXED_FILES; i++) {
        if (u->fixed[i] != -1) continue;
        int r = io_uring_register_files_update(&u->ring, (unsigned)i, &fd, 1);
        if (r < 0) return r;
        u->fixed[i] = fd;
        return 0;
    }
    return 0; /* table full: the fd keeps working unregistered */
}

static int ur_unregister_file(st_engine *e, int fd)
{
    uring *u = e->priv;
    int i = fixed_slot(u, fd);
    if (i < 0) return 0;
    int none = -1;
    int r = io_uring_register_files_update(&u->ring, (unsigned)i, &none, 1);
    if (r < 0) return r;
    u->fixed[i] = -1;
    return 0;
}

static int ur_register_buffer(st_engine *e, void *buf, size_t len)
{
    uring *u = e->priv;
    if (u->buf_base) {
        io_uring_unregister_buffers(&u->ring);
        u->buf_base = NULL;
        u->buf_len = 0;
    }
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    int r = io_uring_register_buffers(&u->ring, &iov, 1);
    if (r < 0) return r;
    u->buf_base = buf;
    u->buf_len = len;
    return 0;
}

static bool in_fixed_buf(const uring *u, const st_io *io)
{
    const char *b = io->buf;
    return u->buf_base && b >= u->buf_base && b + io->len <= u->buf_base + u->buf_len;
}

static bool is_blockdev(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISBLK(st.st_mode);
}

/* Prepares the batch and enters the kernel once; with wait_nr > 0 the same system call
 * also waits until that many completions are posted. */
/*
 * At most this many entries go to the kernel per io_uring_enter. The kernel plugs a
 * multi-entry submission and hands the I/Os to the device only when the batch is
 * issued, so a large batch holds back its first I/Os: at QD 32 on a virtio disk,
 * submitting every freed slot at once (about 11 per call) gave 18 % fewer IOPS than
 * fio's one-per-call, while chunks of 4 matched fio with a third less CPU per I/O
 * (tests/bench/storage_randread.sh, docs/measurements/storage.md).
 */
#define SUBMIT_CHUNK 4

/* Hands the prepared entries to the kernel, waiting for wait_nr completions. */
static int flush_sqes(uring *u, unsigned wait_nr)
{
    for (;;) {
        /* After an interruption the entries already consumed are not resubmitted
         * (liburing submits only what the kernel has not taken); reap does the wait. */
        int r = wait_nr ? io_uring_submit_and_wait(&u->ring, wait_nr) : io_uring_submit(&u->ring);
        if (r >= 0) return 0;
        if (r == -EINTR || r == -ETIME) {
            wait_nr = 0;
            continue;
        }
        if (r != -EAGAIN) return r;
    }
}

static int ur_submit_wait(st_engine *e, st_io *const *ios, unsigned n, unsigned wait_nr)
{
    uring *u = e->priv;
    if (u->disabled) {
        /* Raw system call: Debian's liburing 2.3 declares io_uring_enable_rings but does
         * not export it. */
        if (syscall(__NR_io_uring_register, u->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL,
                    0) < 0)
            return -errno;
        u->disabled = false;
    }
    uint64_t now = sim_now_ns();
    unsigned queued = 0;
    for (unsigned i = 0; i < n; i++) {
        st_io *io = ios[i];
        io->submit_ns = now;
        if (io->op == ST_OP_DISCARD && is_blockdev(io->fd)) {
            io->result = st_discard_sync(io->fd, io->offset, io->len);
            io->complete_ns = sim_now_ns();
            u->now_done[u->nnow++] = io;
            continue;
        }
        struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
        if (!sqe) { /* cannot happen: the ring holds qd entries and inflight <= qd */
            n = i;
            break;
        }
        int slot = fixed_slot(u, io->fd);
        int fd = slot >= 0 ? slot : io->fd;
        switch (io->op) {
        case ST_OP_READ:
            if (in_fixed_buf(u, io))
                io_uring_prep_read_fixed(sqe, fd, io->buf, io->len, io->offset, 0);
            else
                io_uring_prep_read(sqe, fd, io->buf, io->len, io->offset);
            break;
        case ST_OP_WRITE:
            if (in_fixed_buf(u, io))
                io_uring_prep_write_fixed(sqe, fd, io->buf, io->len, io->offset, 0);
            else
                io_uring_prep_write(sqe, fd, io->buf, io->len, io->offset);
            break;
        case ST_OP_FSYNC:
            io_uring_prep_fsync(sqe, fd, 0);
            break;
        case ST_OP_FDATASYNC:
            io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
            break;
        case ST_OP_DISCARD:
            io_uring_prep_fallocate(sqe, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, io->offset,
                                    io->len);
            break;
        default:
            io_uring_prep_nop(sqe);
            break;
        }
        if (slot >= 0) sqe->flags |= IOSQE_FIXED_FILE;
        io_uring_sqe_set_data(sqe, io);
        if (io->op > ST_OP_DISCARD)
            io->result = -EINVAL; /* the nop completes it; reap keeps the error */
        queued++;
        if (queued == SUBMIT_CHUNK && i + 1 < n) {
            int r = flush_sqes(u, 0);
            if (r < 0) return r;
            queued = 0;
        }
    }
    if (u->nnow) wait_nr = 0; /* something is already complete: do not sleep for more */
    if (queued) {
        int r = flush_sqes(u, wait_nr);
        if (r < 0) return r;
    }
    return (int)n;
}

static int ur_submit(st_engine *e, st_io *const *ios, unsigned n)
{
    return ur_submit_wait(e, ios, n, 0);
}

/* Moves the completions already posted (and those finished at submission) into
 * done[*got..max), stamping them now. */
static void harvest(uring *u, st_io **done, unsigned *got, unsigned max)
{
    while (u->nnow && *got < max)
        done[(*got)++] = u->now_done[--u->nnow];
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    uint64_t now = 0;
    io_uring_for_each_cqe(&u->ring, head, cqe)
    {
        if (*got == max) break;
        if (!now) now = sim_now_ns();
        st_io *io = io_uring_cqe_get_data(cqe);
        if (!(io->op > ST_OP_DISCARD)) io->result = cqe->res;
        io->complete_ns = now;
        done[(*got)++] = io;
        seen++;
    }
    if (seen) io_uring_cq_advance(&u->ring, seen);
}

static int ur_reap(st_engine *e, st_io **done, unsigned max, unsigned min_wait)
{
    uring *u = e->priv;
    unsigned got = 0;
    bool flushed = false;
    for (;;) {
        harvest(u, done, &got, max);
        if (got == max) return (int)got;
        if (got >= min_wait) {
            /* With deferred task running, finished I/Os wait for us to enter the
             * kernel before they show in the ring. A poll that found nothing enters
             * once when the kernel flags pending work; a reap that has completions
             * returns them at once, so the freed slots are refilled sooner (the rest
             * show up at the next wait). */
            if (got || flushed || !(IO_URING_READ_ONCE(*u->ring.sq.kflags) & IORING_SQ_TASKRUN))
                return (int)got;
            flushed = true;
            io_uring_get_events(&u->ring);
            continue;
        }
        flushed = true;
        struct io_uring_cqe *cqe;
        int r = io_uring_wait_cqe_nr(&u->ring, &cqe, min_wait - got);
        if (r < 0 && r != -EINTR && r != -EAGAIN && r != -ETIME) return got ? (int)got : r;
    }
}

/* One io_uring_enter that returns at the first completion or at the deadline. Kernels
 * without extended wait arguments (before 5.11) would need a timeout entry in the
 * ring, whose completion is not an st_io: there the wait polls in 50 us steps. */
static int ur_reap_until(st_engine *e, st_io **done, unsigned max, uint64_t deadline_ns)
{
    uring *u = e->priv;
    unsigned got = 0;
    harvest(u, done, &got, max);
    uint64_t now = sim_now_ns();
    if (got || now >= deadline_ns) return (int)got;
    uint64_t gap = deadline_ns - now;
    if (!(u->ring.features & IORING_FEAT_EXT_ARG)) {
        if (gap > 50000) gap = 50000;
        struct timespec ts = {0, (long)gap};
        nanosleep(&ts, NULL);
        return ur_reap(e, done, max, 0);
    }
    struct __kernel_timespec ts = {(long long)(gap / 1000000000u), (long long)(gap % 1000000000u)};
    struct io_uring_cqe *cqe;
    int r = io_uring_wait_cqes(&u->ring, &cqe, 1, &ts, NULL);
    if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN) return r;
    harvest(u, done, &got, max);
    return (int)got;
}

static const st_engine_ops uring_ops = {
    .name = "io_uring",
    .description = "io_uring: batched submission, one ring per thread",
    .open = ur_open,
    .close = ur_close,
    .submit = ur_submit,
    .reap = ur_reap,
    .register_file = ur_register_file,
    .unregister_file = ur_unregister_file,
    .register_buffer = ur_register_buffer,
    .submit_wait = ur_submit_wait,
    .reap_until = ur_reap_until,
};
ST_REGISTER_ENGINE(uring_ops)
