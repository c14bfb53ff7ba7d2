/*
 * oltp/tpcc_pristine.c: --keep-pristine. A copy of each freshly loaded database file is
 * kept beside it and copied back before every run, as labs restore a backup, so that
 * every run starts from the same state.
 *
 * The copy is a reflink (FICLONE) when the filesystem shares extents (XFS, Btrfs): it
 * costs no space and no time. Otherwise the bytes are copied with aligned 1 MiB
 * O_DIRECT reads and writes (the page cache must not keep the database warm for the
 * run that follows) and fsynced. Both files must be closed by SQLite (checkpointed,
 * no WAL content) while this runs; restoring also removes a left-over WAL, whose
 * frames belong to the state being thrown away.
 */
#include "oltp/tpcc_cmd_internal.h"

#include <errno.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_CHUNK (1u << 20)

/* Copies src_name over dst_name inside the target. *method: "reflink" or "copy". */
static int copy_file(st_target *t, const char *src_name, const char *dst_name, const char **method,
                     uint64_t *bytes, char *err, size_t errlen)
{
    int sfd = -1, dfd = -1, rc;
    if ((rc = st_target_open_file(t, src_name, 0, false, &sfd, err, errlen))) return rc;
    if ((rc = st_target_create_file(t, dst_name, 0, &dfd, err, errlen))) {
        close(sfd);
        return rc;
    }
    struct stat st;
    if (fstat(sfd, &st) != 0 || ftruncate(dfd, 0) != 0) {
        snprintf(err, errlen, "cannot prepare %s: %s", dst_name, strerror(errno));
        rc = SIM_EXIT_FAIL;
        goto out;
    }
    *bytes = (uint64_t)st.st_size;
    if (ioctl(dfd, FICLONE, sfd) == 0) {
        *method = "reflink";
        rc = 0;
        goto out;
    }
    *method = "copy";
    void *buf = st_alloc_aligned(COPY_CHUNK);
    if (!buf) {
        snprintf(err, errlen, "out of memory for the copy buffer");
        rc = SIM_EXIT_FAIL;
        goto out;
    }
    rc = 0;
    for (off_t off = 0; off < st.st_size && !rc;) {
        size_t want = COPY_CHUNK;
        if ((off_t)want > st.st_size - off) want = (size_t)(st.st_size - off);
        /* O_DIRECT lengths must be block multiples; a database file always is one
         * (whole pages), so only a foreign file would fail here. */
        ssize_t n = pread(sfd, buf, (want + 4095) & ~(size_t)4095, off);
        if (n <= 0) {
            snprintf(err, errlen, "reading %s at %lld: %s", src_name, (long long)off,
                     n < 0 ? strerror(errno) : "unexpected end of file");
            rc = SIM_EXIT_FAIL;
            break;
        }
        ssize_t w = pwrite(dfd, buf, (size_t)n, off);
        if (w != n) {
            /* fail-stop (sim/fault.c): a write that did not happen is a storage fault */
            int e = w < 0 ? errno : ENOSPC;
            sim_fault_note(sim_fault_errno_is_fatal(e) ? e : EIO, "copying %s to %s at offset %lld",
                           src_name, dst_name, (long long)off);
            snprintf(err, errlen, "writing %s at %lld: %s", dst_name, (long long)off,
                     w < 0 ? strerror(e) : "short write");
            rc = SIM_EXIT_FAIL;
            break;
        }
        off += n;
    }
    st_free_aligned(buf);
    if (!rc && fsync(dfd) != 0) {
        int e = errno;
        sim_fault_note(sim_fault_errno_is_fatal(e) ? e : EIO, "syncing %s", dst_name);
        snprintf(err, errlen, "fsync %s: %s", dst_name, strerror(e));
        rc = SIM_EXIT_FAIL;
    }
out:
    close(sfd);
    close(dfd);
    return rc;
}

int tpcc_pristine_save(st_target *t, int instance, json_t *info, char *err, size_t errlen)
{
    char db[64], pr[64];
    tpcc_db_name(instance, db, sizeof db);
    tpcc_pristine_name(instance, pr, sizeof pr);
    const char *method = NULL;
    uint64_t bytes = 0;
    uint64_t t0 = sim_now_ns();
    int rc = copy_file(t, db, pr, &method, &bytes, err, errlen);
    if (!rc && info)
        json_object_set_new(info, "saved",
                            json_pack("{s:s, s:I, s:f}", "method", method, "bytes",
                                      (json_int_t)bytes, "seconds",
                                      (double)(sim_now_ns() - t0) / 1e9));
    return rc;
}

int tpcc_pristine_restore(st_target *t, int instance, json_t *info, char *err, size_t errlen)
{
    char db[64], pr[64], wal[80];
    tpcc_db_name(instance, db, sizeof db);
    tpcc_pristine_name(instance, pr, sizeof pr);
    if (!st_target_owns(t, pr)) {
        snprintf(err, errlen,
                 "--keep-pristine: no pristine copy of instance %d in the target; run"
                 " `appsim tpcc prepare --keep-pristine` (after `appsim tpcc cleanup`) so that"
                 " the copy is taken right after the load",
                 instance + 1);
        return SIM_EXIT_USAGE;
    }
    snprintf(wal, sizeof wal, "%s-wal", db);
    if (st_target_owns(t, wal)) {
        int rc = st_target_remove_file(t, wal, err, errlen);
        if (rc) return rc;
    }
    const char *method = NULL;
    uint64_t bytes = 0;
    uint64_t t0 = sim_now_ns();
    int rc = copy_file(t, pr, db, &method, &bytes, err, errlen);
    if (!rc && info)
        json_object_set_new(info, "restored",
                            json_pack("{s:s, s:I, s:f}", "method", method, "bytes",
                                      (json_int_t)bytes, "seconds",
                                      (double)(sim_now_ns() - t0) / 1e9));
    return rc;
}
