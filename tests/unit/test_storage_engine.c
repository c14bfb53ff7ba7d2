/*
 * I/O engines: io_uring and psync give identical data (each reads what the other
 * wrote), batched submission is bounded by the queue depth, fixed files and buffers
 * change nothing in the data, the synchronous path keeps other I/Os' completions,
 * syncs and discard (punch-hole) work, errors come back as -errno, and completed I/Os
 * land in the sim/ meter under the right types. Files live in an O_DIRECT target
 * under /tmp.
 */
#include "storage/storage.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define BLK 4096
#define NBLK 256
#define QD 16

static char root[256];
static st_target *tgt;

static int setup(void **state)
{
    snprintf(root, sizeof root, "/tmp/appsim-test-engine-XXXXXX");
    if (!mkdtemp(root)) return -1;
    char err[1024];
    st_target_opts o = {.path = root};
    if (st_target_open(&o, &tgt, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    char err[1024];
    st_target_cleanup(tgt, err, sizeof err);
    st_target_close(tgt);
    return rmdir(root);
}

static void pattern(uint8_t *b, uint32_t blk, uint32_t salt)
{
    for (uint32_t i = 0; i < BLK; i += 4) {
        uint32_t v = (blk * 2654435761u) ^ (i * 40503u) ^ salt;
        memcpy(b + i, &v, 4);
    }
}

static int new_file(const char *name)
{
    char err[1024];
    int fd;
    assert_int_equal(st_target_create_file(tgt, name, 0, &fd, err, sizeof err), 0);
    assert_int_equal(ftruncate(fd, (off_t)NBLK * BLK), 0);
    return fd;
}

/* Writes every block (pattern salted by `salt`) in random order with engine e, using
 * the full queue depth, then syncs. */
static void write_all(st_engine *e, int fd, uint8_t *bufs, uint32_t salt)
{
    st_io ios[NBLK];
    uint32_t order[NBLK];
    for (uint32_t i = 0; i < NBLK; i++)
        order[i] = i;
    srand(salt);
    for (uint32_t i = NBLK - 1; i > 0; i--) {
        uint32_t j = (uint32_t)rand() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (uint32_t i = 0; i < NBLK; i++) {
        uint32_t b = order[i];
        pattern(bufs + (size_t)b * BLK, b, salt);
        ios[i] = (st_io){.op = ST_OP_WRITE,
                         .fd = fd,
                         .buf = bufs + (size_t)b * BLK,
                         .offset = (uint64_t)b * BLK,
                         .len = BLK,
                         .tag = b};
    }
    unsigned next = 0, done = 0;
    while (done < NBLK) {
        st_io *batch[QD];
        unsigned n = 0;
        while (next + n < NBLK && n < QD)
            batch[n] = &ios[next + n], n++;
        int s = n ? st_engine_submit(e, batch, n) : 0;
        assert_true(s >= 0);
        assert_true(st_engine_inflight(e) <= st_engine_queue_depth(e));
        next += (unsigned)s;
        st_io *out[QD];
        int r = st_engine_reap(e, out, QD, 1);
        assert_true(r >= 1);
        for (int k = 0; k < r; k++) {
            assert_int_equal(out[k]->result, BLK);
            assert_true(out[k]->complete_ns >= out[k]->submit_ns);
            assert_true(out[k]->submit_ns > 0);
        }
        done += (unsigned)r;
    }
    st_io sync = {.op = ST_OP_FDATASYNC, .fd = fd};
    assert_int_equal(st_engine_do(e, &sync), 0);
}

static void read_check(st_engine *e, int fd, uint32_t salt)
{
    uint8_t *rb = st_alloc_aligned((size_t)QD * BLK);
    uint8_t want[BLK];
    for (uint32_t b = 0; b < NBLK; b += QD) {
        st_io ios[QD], *p[QD];
        for (int i = 0; i < QD; i++) {
            ios[i] = (st_io){.op = ST_OP_READ,
                             .fd = fd,
                             .buf = rb + (size_t)i * BLK,
                             .offset = (uint64_t)(b + i) * BLK,
                             .len = BLK};
            p[i] = &ios[i];
        }
        assert_int_equal(st_engine_submit(e, p, QD), QD);
        int got = 0;
        while (got < QD) {
            st_io *out[QD];
            int r = st_engine_reap(e, out, QD, 1);
            assert_true(r > 0);
            got += r;
        }
        for (int i = 0; i < QD; i++) {
            assert_int_equal(ios[i].result, BLK);
            pattern(want, b + (uint32_t)i, salt);
            assert_memory_equal(rb + (size_t)i * BLK, want, BLK);
        }
    }
    st_free_aligned(rb);
}

static st_engine *open_engine(const char *name)
{
    char err[1024];
    st_engine *e = st_engine_open(name, QD, err, sizeof err);
    if (!e) fprintf(stderr, "engine %s: %s\n", name, err);
    assert_non_null(e);
    assert_string_equal(st_engine_name(e), name);
    assert_int_equal(st_engine_queue_depth(e), QD);
    return e;
}

static void test_engines_identical_data(void **state)
{
    int fd = new_file("cross.dat");
    uint8_t *bufs = st_alloc_aligned((size_t)NBLK * BLK);
    st_engine *ur = open_engine("io_uring"), *ps = open_engine("psync");
    write_all(ur, fd, bufs, 1);
    read_check(ps, fd, 1);
    read_check(ur, fd, 1);
    write_all(ps, fd, bufs, 2);
    read_check(ur, fd, 2);
    read_check(ps, fd, 2);
    st_engine_close(ur);
    st_engine_close(ps);
    st_free_aligned(bufs);
    close(fd);
}

static void test_fixed_files_and_buffers(void **state)
{
    int fd = new_file("fixed.dat");
    uint8_t *bufs = st_alloc_aligned((size_t)NBLK * BLK);
    st_engine *ur = open_engine("io_uring");
    assert_int_equal(st_engine_register_file(ur, fd), 0);
    assert_int_equal(st_engine_register_buffer(ur, bufs, (size_t)NBLK * BLK), 0);
    write_all(ur, fd, bufs, 3);
    st_engine *ps = open_engine("psync");
    read_check(ps, fd, 3);
    /* Reads into the registered region, through the fixed file. */
    memset(bufs, 0, (size_t)NBLK * BLK);
    st_io io = {.op = ST_OP_READ, .fd = fd, .buf = bufs, .offset = 7 * BLK, .len = BLK};
    assert_int_equal(st_engine_do(ur, &io), BLK);
    uint8_t want[BLK];
    pattern(want, 7, 3);
    assert_memory_equal(bufs, want, BLK);
    assert_int_equal(st_engine_unregister_file(ur, fd), 0);
    assert_int_equal(st_engine_do(ur, &io), BLK);
    st_engine_close(ur);
    st_engine_close(ps);
    st_free_aligned(bufs);
    close(fd);
}

static void test_queue_depth_bound_and_sync_path(void **state)
{
    int fd = new_file("qd.dat");
    uint8_t *bufs = st_alloc_aligned((size_t)(QD + 1) * BLK);
    st_engine *e = open_engine("io_uring");
    st_io ios[QD + 1], *p[QD + 1];
    for (int i = 0; i <= QD; i++) {
        ios[i] = (st_io){.op = ST_OP_READ,
                         .fd = fd,
                         .buf = bufs + (size_t)i * BLK,
                         .offset = (uint64_t)i * BLK,
                         .len = BLK,
                         .tag = (uint64_t)i};
        p[i] = &ios[i];
    }
    /* More than the depth: only QD are taken. */
    assert_int_equal(st_engine_submit(e, p, QD + 1), QD);
    assert_int_equal(st_engine_inflight(e), QD);
    assert_int_equal(st_engine_submit(e, p + QD, 1), 0);
    /* The synchronous path waits for its own I/O and keeps the others for reap. */
    assert_int_equal(st_engine_do(e, &ios[QD]), BLK);
    int seen = 0;
    bool mark[QD] = {0};
    while (seen < QD) {
        st_io *out[QD];
        int r = st_engine_reap(e, out, QD, 1);
        assert_true(r > 0);
        for (int k = 0; k < r; k++) {
            assert_true(out[k]->tag < QD);
            assert_false(mark[out[k]->tag]);
            mark[out[k]->tag] = true;
        }
        seen += r;
    }
    assert_int_equal(st_engine_inflight(e), 0);
    st_io *out[1];
    assert_int_equal(st_engine_reap(e, out, 1, 1), 0); /* nothing left: no hang */
    st_engine_close(e);
    st_free_aligned(bufs);
    close(fd);
}

static void test_sync_discard_and_errors(void **state)
{
    const char *names[] = {"io_uring", "psync"};
    for (int n = 0; n < 2; n++) {
        char fname[32];
        snprintf(fname, sizeof fname, "discard-%d.dat", n);
        int fd = new_file(fname);
        uint8_t *bufs = st_alloc_aligned((size_t)NBLK * BLK);
        st_engine *e = open_engine(names[n]);
        write_all(e, fd, bufs, 9);
        st_io s = {.op = ST_OP_FSYNC, .fd = fd};
        assert_int_equal(st_engine_do(e, &s), 0);
        st_io d = {.op = ST_OP_DISCARD, .fd = fd, .offset = 4 * BLK, .len = 2 * BLK};
        assert_int_equal(st_engine_do(e, &d), 0);
        st_io r = {.op = ST_OP_READ, .fd = fd, .buf = bufs, .offset = 4 * BLK, .len = 2 * BLK};
        assert_int_equal(st_engine_do(e, &r), 2 * BLK);
        for (int i = 0; i < 2 * BLK; i++)
            assert_int_equal(bufs[i], 0);
        /* A neighbour survives the hole. */
        r.offset = 6 * BLK;
        r.len = BLK;
        assert_int_equal(st_engine_do(e, &r), BLK);
        uint8_t want[BLK];
        pattern(want, 6, 9);
        assert_memory_equal(bufs, want, BLK);
        /* Misaligned O_DIRECT read and a bad descriptor: -errno, not a crash. */
        st_io bad = {.op = ST_OP_READ, .fd = fd, .buf = bufs, .offset = 100, .len = BLK};
        assert_int_equal(st_engine_do(e, &bad), -EINVAL);
        st_io badfd = {.op = ST_OP_READ, .fd = 987, .buf = bufs, .offset = 0, .len = BLK};
        assert_int_equal(st_engine_do(e, &badfd), -EBADF);
        st_engine_close(e);
        st_free_aligned(bufs);
        close(fd);
    }
}

/* A write that moves fewer bytes than asked is a storage fault (EIO) for every user of
 * the engine, with what happened; the caller still gets the count. The write is cut
 * short by a file size limit, as a filling filesystem would cut it. A short read (the
 * tail of a file) is not a fault: the caller judges it. */
static void test_short_writes_are_faults(void **state)
{
    const char *names[] = {"io_uring", "psync"};
    signal(SIGXFSZ, SIG_IGN);
    for (int n = 0; n < 2; n++) {
        char fname[32];
        snprintf(fname, sizeof fname, "short-%d.dat", n);
        int fd = new_file(fname);
        uint8_t *bufs = st_alloc_aligned(2 * BLK);
        st_engine *e = open_engine(names[n]);
        st_io r = {
            .op = ST_OP_READ, .fd = fd, .buf = bufs, .offset = (NBLK - 1) * BLK, .len = 2 * BLK};
        assert_int_equal(st_engine_do(e, &r), BLK);
        assert_int_equal(sim_fault_noted(), 0);

        struct rlimit old, lim;
        getrlimit(RLIMIT_FSIZE, &old);
        lim = old;
        lim.rlim_cur = (rlim_t)(NBLK + 1) * BLK;
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        memset(bufs, 7, 2 * BLK);
        st_io w = {.op = ST_OP_WRITE, .fd = fd, .buf = bufs, .offset = NBLK * BLK, .len = 2 * BLK};
        int64_t got = st_engine_do(e, &w);
        setrlimit(RLIMIT_FSIZE, &old);
        assert_int_equal(got, BLK);
        assert_int_equal(sim_fault_noted(), EIO);
        assert_non_null(strstr(sim_fault_message(), "short write to"));
        assert_non_null(strstr(sim_fault_message(), fname));
        assert_non_null(strstr(sim_fault_message(), "4096 of 8192 bytes"));
        /* fail-stop: nothing more is written */
        assert_int_equal(st_engine_do(e, &w), -EIO);
        sim_fault_reset();
        st_engine_close(e);
        st_free_aligned(bufs);
        close(fd);
    }
}

/* Fail-stop in the engine: once a fault is noted no write or discard is taken, by any
 * path (batched, synchronous); reads and syncs still are, and the I/Os before the first
 * write of a batch go. Closing with I/Os in flight waits for them. */
static void test_writes_refused_after_fault(void **state)
{
    const char *names[] = {"io_uring", "psync"};
    for (int n = 0; n < 2; n++) {
        char fname[32];
        snprintf(fname, sizeof fname, "failstop-%d.dat", n);
        int fd = new_file(fname);
        uint8_t *bufs = st_alloc_aligned((size_t)NBLK * BLK);
        st_engine *e = open_engine(names[n]);
        write_all(e, fd, bufs, 11);
        sim_fault_note(EIO, "writing a test file");
        st_io r0 = {.op = ST_OP_READ, .fd = fd, .buf = bufs, .offset = 0, .len = BLK};
        st_io r1 = {.op = ST_OP_READ, .fd = fd, .buf = bufs + BLK, .offset = BLK, .len = BLK};
        st_io w = {.op = ST_OP_WRITE, .fd = fd, .buf = bufs + 2 * BLK, .offset = 0, .len = BLK};
        st_io *batch[] = {&r0, &r1, &w};
        assert_int_equal(st_engine_submit(e, batch, 3), 2); /* the reads, not the write */
        st_io *done[4];
        unsigned got = 0;
        while (got < 2) {
            int k = st_engine_reap(e, done, 4, 1);
            assert_true(k > 0);
            got += (unsigned)k;
        }
        assert_int_equal(r0.result, BLK);
        assert_int_equal(st_engine_submit(e, batch + 2, 1), -EIO);
        unsigned taken = 99;
        assert_int_equal(st_engine_submit_reap(e, batch + 2, 1, &taken, done, 4, 0), -EIO);
        assert_int_equal(st_engine_do(e, &w), -EIO);
        st_io d = {.op = ST_OP_DISCARD, .fd = fd, .offset = 0, .len = BLK};
        assert_int_equal(st_engine_do(e, &d), -EIO);
        st_io s = {.op = ST_OP_FSYNC, .fd = fd};
        assert_int_equal(st_engine_do(e, &s), 0);
        /* The block the refused writes aimed at still holds what write_all put there. */
        assert_int_equal(st_engine_do(e, &r0), BLK);
        uint8_t want[BLK];
        pattern(want, 0, 11);
        assert_memory_equal(bufs, want, BLK);
        /* Reads left in flight at close are waited for. */
        assert_int_equal(st_engine_submit(e, batch, 2), 2);
        st_engine_close(e);
        sim_fault_reset();
        st_free_aligned(bufs);
        close(fd);
    }
}

static void test_latency_into_meter(void **state)
{
    static const char *const types[] = {"read", "write", "sync"};
    sim_run_config cfg = {.type_names = types, .ntypes = 3, .unit = "iops", .quiet = true};
    sim_run *run = sim_run_new(&cfg);
    sim_meter *m = sim_run_meter(run, 0);
    sim_run_start(run);
    int fd = new_file("meter.dat");
    uint8_t *bufs = st_alloc_aligned((size_t)NBLK * BLK);
    const char *names[] = {"io_uring", "psync"};
    for (int n = 0; n < 2; n++) {
        st_engine *e = open_engine(names[n]);
        st_engine_set_meter(e, m, 0, 1, 2);
        write_all(e, fd, bufs, 5); /* NBLK writes + 1 sync */
        read_check(e, fd, 5);      /* NBLK reads */
        /* intended_ns in the past: the latency includes the wait before submission. */
        st_io r = {.op = ST_OP_READ,
                   .fd = fd,
                   .buf = bufs,
                   .len = BLK,
                   .intended_ns = sim_now_ns() - 50000000ull};
        assert_int_equal(st_engine_do(e, &r), BLK);
        st_io bad = {.op = ST_OP_READ, .fd = fd, .buf = bufs, .offset = 1, .len = BLK};
        st_engine_do(e, &bad);
        st_engine_close(e);
    }
    sim_run_finish(run);
    assert_int_equal(sim_run_count(run, 0, -1), 2 * (NBLK + 1));
    assert_int_equal(sim_run_count(run, 1, -1), 2 * NBLK);
    assert_int_equal(sim_run_count(run, 2, -1), 2);
    assert_int_equal(sim_run_errors(run, 0, -1), 2);
    sim_hist *h = sim_run_merged_hist(run, 0, -1);
    assert_true(sim_hist_max(h) >= 50000000ull);
    sim_hist_free(h);
    sim_run_free(run);
    st_free_aligned(bufs);
    close(fd);
}

/* The generator loop in one call per step: every block read exactly once, data right. */
static void test_submit_reap_loop(void **state)
{
    int fd = new_file("loop.dat");
    uint8_t *bufs = st_alloc_aligned((size_t)NBLK * BLK);
    const char *names[] = {"io_uring", "psync"};
    for (int n = 0; n < 2; n++) {
        st_engine *e = open_engine(names[n]);
        write_all(e, fd, bufs, 11 + (uint32_t)n);
        memset(bufs, 0, (size_t)NBLK * BLK);
        st_io ios[NBLK], *pend[NBLK], *done[QD];
        for (uint32_t b = 0; b < NBLK; b++) {
            ios[b] = (st_io){.op = ST_OP_READ,
                             .fd = fd,
                             .buf = bufs + (size_t)b * BLK,
                             .offset = (uint64_t)b * BLK,
                             .len = BLK,
                             .tag = b};
            pend[b] = &ios[b];
        }
        unsigned next = 0, reaped = 0;
        bool seen[NBLK] = {0};
        while (reaped < NBLK) {
            unsigned sub = 0;
            int r = st_engine_submit_reap(e, pend + next, NBLK - next, &sub, done, QD, 1);
            assert_true(r >= 1);
            assert_true(st_engine_inflight(e) <= QD);
            next += sub;
            for (int k = 0; k < r; k++) {
                assert_int_equal(done[k]->result, BLK);
                assert_false(seen[done[k]->tag]);
                seen[done[k]->tag] = true;
            }
            reaped += (unsigned)r;
        }
        assert_int_equal(next, NBLK);
        uint8_t want[BLK];
        for (uint32_t b = 0; b < NBLK; b++) {
            pattern(want, b, 11 + (uint32_t)n);
            assert_memory_equal(bufs + (size_t)b * BLK, want, BLK);
        }
        st_engine_close(e);
    }
    st_free_aligned(bufs);
    close(fd);
}

/* The open-loop wait: with nothing in flight it sleeps to the deadline; with an I/O in
 * flight it returns that I/O as soon as it completes, long before a far deadline, and
 * 0 at a near deadline it cannot meet. */
static void test_reap_until(void **state)
{
    int fd = new_file("until.dat");
    uint8_t *buf = st_alloc_aligned(BLK);
    const char *names[] = {"io_uring", "psync"};
    for (int n = 0; n < 2; n++) {
        st_engine *e = open_engine(names[n]);
        st_io *done[QD];
        uint64_t t0 = sim_now_ns();
        assert_int_equal(st_engine_reap_until(e, done, QD, t0 + 3000000), 0);
        assert_true(sim_now_ns() >= t0 + 3000000);
        st_io io = {.op = ST_OP_READ, .fd = fd, .buf = buf, .len = BLK, .offset = 2 * BLK};
        st_io *one[1] = {&io};
        assert_int_equal(st_engine_submit(e, one, 1), 1);
        int got = 0;
        t0 = sim_now_ns();
        while (got == 0) {
            got = st_engine_reap_until(e, done, QD, t0 + 5000000000ull);
            assert_true(got >= 0);
            assert_true(sim_now_ns() < t0 + 5000000000ull);
        }
        assert_int_equal(got, 1);
        assert_ptr_equal(done[0], &io);
        assert_int_equal(io.result, BLK);
        assert_int_equal(st_engine_inflight(e), 0);
        /* A deadline already past returns at once. */
        assert_int_equal(st_engine_reap_until(e, done, QD, sim_now_ns() - 1), 0);
        st_engine_close(e);
    }
    st_free_aligned(buf);
    close(fd);
}

typedef struct {
    st_engine *e;
    int fd;
    int64_t result;
} thread_arg;

static void *use_engine(void *p)
{
    thread_arg *a = p;
    uint8_t *b = st_alloc_aligned(BLK);
    st_io io = {.op = ST_OP_READ, .fd = a->fd, .buf = b, .len = BLK, .offset = BLK};
    a->result = st_engine_do(a->e, &io);
    st_free_aligned(b);
    return NULL;
}

/* An engine opened by one thread and then used only by another (a worker pool opening
 * connections up front): the issuing thread becomes the ring's owner. */
static void test_engine_handed_to_another_thread(void **state)
{
    int fd = new_file("thread.dat");
    thread_arg a = {.e = open_engine("io_uring"), .fd = fd};
    assert_int_equal(st_engine_register_file(a.e, fd), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, use_engine, &a), 0);
    pthread_join(th, NULL);
    assert_int_equal(a.result, BLK);
    st_engine_close(a.e);
    close(fd);
}

/* The NOWAIT probe: a file on the test's O_DIRECT target takes I/O without blocking
 * (ext4, XFS, btrfs); procfs never does; an fd that cannot be read at an offset (a
 * pipe) fails for another reason and is not taken for one without NOWAIT. */
static void test_nowait_probe(void **state)
{
    int fd = new_file("nowait.dat");
    assert_true(st_fd_nowait(fd, BLK));
    close(fd);
    fd = open("/proc/self/stat", O_RDONLY);
    assert_true(fd >= 0);
    assert_false(st_fd_nowait(fd, BLK));
    close(fd);
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_true(st_fd_nowait(p[0], BLK));
    close(p[0]);
    close(p[1]);
}

static void test_bad_engine_requests(void **state)
{
    char err[1024];
    assert_null(st_engine_open("aio", 8, err, sizeof err));
    assert_non_null(strstr(err, "io_uring|psync"));
    assert_null(st_engine_open("psync", 0, err, sizeof err));
    assert_non_null(st_find_engine("psync"));
    assert_non_null(st_find_engine("io_uring"));
    /* Default is io_uring on this machine. */
    st_engine *e = st_engine_open(NULL, 4, err, sizeof err);
    assert_non_null(e);
    assert_string_equal(st_engine_name(e), "io_uring");
    st_engine_close(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engines_identical_data),
        cmocka_unit_test(test_fixed_files_and_buffers),
        cmocka_unit_test(test_queue_depth_bound_and_sync_path),
        cmocka_unit_test(test_sync_discard_and_errors),
        cmocka_unit_test(test_short_writes_are_faults),
        cmocka_unit_test(test_writes_refused_after_fault),
        cmocka_unit_test(test_latency_into_meter),
        cmocka_unit_test(test_submit_reap_loop),
        cmocka_unit_test(test_reap_until),
        cmocka_unit_test(test_engine_handed_to_another_thread),
        cmocka_unit_test(test_nowait_probe),
        cmocka_unit_test(test_bad_engine_requests),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
