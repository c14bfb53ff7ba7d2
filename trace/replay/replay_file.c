/*
 * trace/replay/replay_file.c: the data a replay reads and writes. On a device target, the
 * device (opened by storage/, which refuses it without --allow-destroy or while
 * mounted). In a directory target, one file appsim creates (listed in the manifest
 * before it exists) and fills with incompressible data from start to end before the
 * first measured I/O: reads of a hole or of an unwritten extent would be answered by
 * the filesystem without touching the drive.
 *
 * Invariant: when this returns 0 the file has exactly *size bytes, all written.
 */
#include "trace/replay/replay_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILL_CHUNK (4u << 20)

static bool fully_written(int fd, uint64_t size)
{
    off_t hole = lseek(fd, 0, SEEK_HOLE);
    return hole >= 0 && (uint64_t)hole >= size;
}

static int fill(int fd, uint64_t from, uint64_t size, const char *path, char *err, size_t errlen)
{
    unsigned char *buf = st_alloc_aligned(FILL_CHUNK);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return SIM_EXIT_FAIL;
    }
    sim_rng rng;
    sim_rng_seed(&rng, 0x7265706c6179ull, 1);
    for (size_t i = 0; i < FILL_CHUNK; i += 8) {
        uint64_t x = sim_rng_u64(&rng);
        memcpy(buf + i, &x, 8);
    }
    char a[32];
    sim_info("filling %s with %s of data so that reads reach the drive", path,
             sim_format_size(size - from, a, sizeof a));
    for (uint64_t off = from; off < size;) {
        if (sim_interrupted()) {
            st_free_aligned(buf);
            snprintf(err, errlen, "interrupted while filling %s", path);
            return SIM_EXIT_FAIL;
        }
        size_t n = size - off < FILL_CHUNK ? (size_t)(size - off) : FILL_CHUNK;
        /* Vary the chunk so that no two blocks are alike (dedup-capable drives). */
        uint64_t stamp = off;
        memcpy(buf, &stamp, 8);
        ssize_t w = pwrite(fd, buf, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC; /* pwrite returns 0 only when nothing fits */
            sim_fault_note(e, "filling %s at offset %llu", path, (unsigned long long)off);
            snprintf(err, errlen, "filling %s failed at %llu: %s", path, (unsigned long long)off,
                     w < 0 ? strerror(e) : "short write");
            st_free_aligned(buf);
            return SIM_EXIT_FAIL;
        }
        off += (uint64_t)w;
    }
    st_free_aligned(buf);
    if (fdatasync(fd) != 0) {
        int e = errno;
        sim_fault_note(e, "syncing %s after filling it", path);
        snprintf(err, errlen, "fdatasync %s: %s", path, strerror(e));
        return SIM_EXIT_FAIL;
    }
    return SIM_EXIT_OK;
}

uint64_t tr_replay_data_size(const st_target *t, uint64_t want_size)
{
    if (st_target_is_device(t)) return st_target_capacity(t); /* the device up to appsim's mark */
    uint32_t bs = st_target_block_size(t);
    return (want_size + bs - 1) / bs * bs;
}

int tr_replay_open_data(st_target *t, const char *name, uint64_t want_size, int *fd, uint64_t *size,
                        char *err, size_t errlen)
{
    *fd = -1;
    int rc;
    if (st_target_is_device(t)) {
        rc = st_target_create_file(t, NULL, 0, fd, err, errlen);
        if (rc) return rc;
        *size = tr_replay_data_size(t, want_size);
        return SIM_EXIT_OK;
    }
    uint32_t bs = st_target_block_size(t);
    want_size = tr_replay_data_size(t, want_size);
    char path[4096];
    st_target_file_path(t, name, path, sizeof path);
    uint64_t have = 0;
    bool existed = st_target_owns(t, name);
    if (existed) {
        struct stat st;
        if (stat(path, &st) == 0) have = (uint64_t)st.st_size;
    }
    if (want_size > have && (rc = st_target_check_space(t, want_size - have, err, errlen)))
        return rc;
    rc = st_target_create_file(t, name, 0, fd, err, errlen);
    if (rc) return rc;
    if (have > want_size && ftruncate(*fd, (off_t)want_size) != 0) {
        snprintf(err, errlen, "cannot shrink %s: %s", path, strerror(errno));
        goto fail;
    }
    if (have == want_size && fully_written(*fd, want_size)) {
        *size = want_size;
        return SIM_EXIT_OK;
    }
    /* Fill from the first hole (a previous fill that was interrupted) or the end. */
    off_t hole = lseek(*fd, 0, SEEK_HOLE);
    uint64_t from = hole < 0 ? 0 : (uint64_t)hole / bs * bs;
    if (from > want_size) from = want_size;
    if ((rc = fill(*fd, from, want_size, path, err, errlen))) goto fail_rc;
    *size = want_size;
    return SIM_EXIT_OK;
fail:
    rc = SIM_EXIT_FAIL;
fail_rc:
    close(*fd);
    *fd = -1;
    return rc;
}
