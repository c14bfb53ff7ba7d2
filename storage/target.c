/*
 * storage/target.c: opening a target (directory or block device), its accessors, space
 * checks, and the file operations that go through the manifest.
 *
 * Invariants: nothing is left behind when opening fails (a directory it made is removed
 * again); a target is locked (target_lock.c) for as long as it is
 * open; a device target is writable only with allow_destroy, or with appsim's mark and
 * nothing put on it since, after the safety checks of device_safety.c passed. The files
 * inside a directory target are opened by target_files.c.
 */
#include "storage/target_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

int st_target_fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return status;
}

static uint32_t read_u32_attr(const char *disk, const char *attr)
{
    char p[256], buf[64];
    snprintf(p, sizeof p, "/sys/block/%s/queue/%s", disk, attr);
    if (st_sysfs_read(p, buf, sizeof buf) != 0) return 0;
    return (uint32_t)strtoul(buf, NULL, 10);
}

/* Probe O_DIRECT with an unnamed temporary file: it never appears in the directory, so
 * the probe writes nothing the user could see. Returns 0 (works or cannot be probed:
 * create_file will find out), or an exit status. */
static int probe_direct(st_target *t, char *err, size_t errlen)
{
    int fd = openat(t->dirfd, ".", O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EINVAL)
            return st_target_fail(
                err, errlen, SIM_EXIT_USAGE,
                "the filesystem of %s (%s) refuses O_DIRECT; pass --buffered to run "
                "through the page cache (the result will then say the page cache "
                "was in play), or choose a target on a filesystem with direct I/O",
                t->path, t->fstype[0] ? t->fstype : "unknown type");
        return SIM_EXIT_OK; /* O_TMPFILE unsupported: checked when the first file is created */
    }
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN) &&
        sx.stx_dio_offset_align) {
        if (sx.stx_dio_offset_align > t->block_size) t->block_size = sx.stx_dio_offset_align;
        t->dio_mem_align = sx.stx_dio_mem_align;
    }
    close(fd);
    return SIM_EXIT_OK;
}

static int open_dir(st_target *t, const struct stat *st, char *err, size_t errlen)
{
    t->dirfd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (t->dirfd < 0)
        return st_target_fail(err, errlen, SIM_EXIT_USAGE, "cannot open target directory %s: %s",
                              t->path, strerror(errno));
    t->dev = st->st_dev;
    /* Libraries that open by path (SQLite's default VFS, LMDB) get this one: it holds
     * no symlink, so SQLite's "no symlink anywhere" open flag can be used. */
    char fdpath[64];
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", t->dirfd);
    if (!realpath(fdpath, t->realdir) && !realpath(t->path, t->realdir))
        return st_target_fail(err, errlen, SIM_EXIT_USAGE, "cannot resolve target directory %s: %s",
                              t->path, strerror(errno));
    if (t->allow_destroy)
        sim_warn("--allow-destroy has no effect on a directory target (%s): appsim only "
                 "writes the files it creates there",
                 t->path);
    st_mount_of(t->path, t->dev, t->fstype, sizeof t->fstype, t->mount_point, sizeof t->mount_point,
                t->mount_source, sizeof t->mount_source);
    if (st_sysfs_disk_of(t->dev, t->disk, sizeof t->disk, t->part, sizeof t->part) != 0 &&
        !strncmp(t->mount_source, "/dev/", 5)) {
        /* btrfs and friends report an anonymous st_dev: use the mount's source. */
        struct stat src;
        if (stat(t->mount_source, &src) == 0 && S_ISBLK(src.st_mode))
            st_sysfs_disk_of(src.st_rdev, t->disk, sizeof t->disk, t->part, sizeof t->part);
    }
    if (!t->read_only) {
        struct statvfs vfs;
        if (fstatvfs(t->dirfd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
            return st_target_fail(
                err, errlen, SIM_EXIT_USAGE,
                "target %s is on a read-only filesystem (mounted at %s): choose a "
                "directory on a writable filesystem of the drive to test",
                t->path, t->mount_point[0] ? t->mount_point : "?");
        if (faccessat(t->dirfd, ".", W_OK | X_OK, AT_EACCESS) != 0)
            return st_target_fail(
                err, errlen, SIM_EXIT_USAGE,
                "target directory %s is not writable (%s): choose a directory you "
                "may write to, or run with the needed permissions",
                t->path, strerror(errno));
    }
    int lrc = st_target_lock(t, err, errlen);
    if (lrc) return lrc;
    t->block_size = t->disk[0] ? read_u32_attr(t->disk, "logical_block_size") : 0;
    if (!t->buffered && !t->read_only) {
        int rc = probe_direct(t, err, errlen);
        if (rc) return rc;
    }
    if (t->block_size == 0)
        t->block_size = 4096; /* unknown: the largest common logical block size */
    if (t->dio_mem_align == 0) t->dio_mem_align = t->block_size;
    return SIM_EXIT_OK;
}

static int open_device(st_target *t, const struct stat *st, char *err, size_t errlen)
{
    t->is_device = true;
    t->dev = st->st_rdev;
    st_sysfs_disk_of(t->dev, t->disk, sizeof t->disk, t->part, sizeof t->part);
    int fd = open(t->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return st_target_fail(err, errlen, SIM_EXIT_USAGE, "cannot open block device %s: %s%s",
                              t->path, strerror(errno),
                              errno == EACCES ? " (run appsim as root)" : "");
    int lbs = 0, pbs = 0, ro = 0;
    uint64_t size = 0;
    if (ioctl(fd, BLKGETSIZE64, &size) != 0 || ioctl(fd, BLKSSZGET, &lbs) != 0) {
        int e = errno;
        close(fd);
        return st_target_fail(err, errlen, SIM_EXIT_USAGE, "cannot query block device %s: %s",
                              t->path, strerror(e));
    }
    (void)ioctl(fd, BLKPBSZGET, &pbs);
    (void)ioctl(fd, BLKROGET, &ro);
    close(fd);
    t->device_bytes = size;
    t->block_size = lbs > 0 ? (uint32_t)lbs : 512;
    t->dio_mem_align = t->block_size;
    /* Before the other checks: a second appsim learns who holds the device, rather
     * than only that it is busy. */
    int lrc = st_target_lock(t, err, errlen);
    if (lrc || t->read_only) return lrc;
    if (ro)
        return st_target_fail(err, errlen, SIM_EXIT_USAGE,
                              "block device %s is read-only: choose a writable device", t->path);
    /* Mounted or held is refused whatever the flags say. */
    int rc = st_device_check_unused(t->path, t->dev, &t->excl_fd, err, errlen);
    if (!rc) rc = st_device_check_partitions(t->path, t->dev, err, errlen);
    if (rc) return rc;
    char what[2048], when[64];
    bool holds = st_device_describe(t->path, what, sizeof what);
    t->marked = st_device_mark_read(t->path, size, when, sizeof when);
    if (!t->allow_destroy) {
        /* A device appsim marked, with nothing put on it since, needs no flag. */
        if (t->marked && !holds) {
            sim_info("%s carries appsim's mark (written %s) and no filesystem or partition "
                     "table: writing it without --allow-destroy",
                     t->path, when);
            return SIM_EXIT_OK;
        }
        return st_target_fail(
            err, errlen, SIM_EXIT_USAGE,
            "refusing to write to block device %s without --allow-destroy: it holds "
            "%s%s. appsim overwrites the whole device; if nothing on it is needed, "
            "pass --allow-destroy, otherwise give a directory on it instead",
            t->path, what,
            t->marked ? " (it carries appsim's mark, but that was put on it since)" : "");
    }
    return SIM_EXIT_OK;
}

int st_target_open(const st_target_opts *o, st_target **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!o || !o->path || !o->path[0])
        return st_target_fail(
            err, errlen, SIM_EXIT_USAGE,
            "no target given: pass --target DIR (a directory on the drive to test) "
            "or --target /dev/DEVICE");
    st_target *t = sim_xcalloc(1, sizeof *t);
    t->dirfd = t->excl_fd = t->lock_fd = -1;
    t->buffered = o->buffered;
    t->read_only = o->read_only;
    t->allow_destroy = o->allow_destroy;
    pthread_mutex_init(&t->lock, NULL);
    size_t n = strlen(o->path);
    while (n > 1 && o->path[n - 1] == '/')
        n--;
    if (n >= sizeof t->path) {
        st_target_close(t);
        return st_target_fail(err, errlen, SIM_EXIT_USAGE, "target path is too long");
    }
    memcpy(t->path, o->path, n);
    t->path[n] = 0;

    struct stat st;
    if (stat(t->path, &st) != 0) {
        int e = errno;
        if (e == ENOENT && !o->existing_only && !o->read_only) {
            char why[1024];
            if (sim_target_creatable(t->path, why, sizeof why)) {
                st_target_close(t);
                return st_target_fail(err, errlen, SIM_EXIT_USAGE, "target %s", why);
            }
            if (mkdir(t->path, 0755) != 0) {
                e = errno;
                st_target_close(t);
                return st_target_fail(err, errlen, SIM_EXIT_USAGE,
                                      "target %s does not exist and cannot be created (%s): "
                                      "create it, or give a directory appsim may write",
                                      o->path, strerror(e));
            }
            t->made_dir = true;
            stat(t->path, &st);
        } else {
            st_target_close(t);
            if (e == ENOENT)
                return st_target_fail(
                    err, errlen, SIM_EXIT_USAGE,
                    "target %s does not exist: nothing there to read or remove (a command that "
                    "writes, such as prepare, creates it)",
                    o->path);
            return st_target_fail(err, errlen, SIM_EXIT_USAGE, "cannot access target %s: %s",
                                  o->path, strerror(e));
        }
    }
    int rc;
    if (S_ISDIR(st.st_mode))
        rc = open_dir(t, &st, err, errlen);
    else if (S_ISBLK(st.st_mode))
        rc = open_device(t, &st, err, errlen);
    else if (S_ISREG(st.st_mode))
        rc = st_target_fail(
            err, errlen, SIM_EXIT_USAGE,
            "target %s is a regular file; --target expects a directory (appsim creates "
            "its files inside it) or a block device",
            o->path);
    else
        rc = st_target_fail(err, errlen, SIM_EXIT_USAGE,
                            "target %s is neither a directory nor a block device", o->path);
    if (rc) {
        st_target_close(t); /* removes the directory it made, which is still empty */
        return rc;
    }
    *out = t;
    return SIM_EXIT_OK;
}

void st_target_close(st_target *t)
{
    if (!t) return;
    st_target_unlock(t);
    if (t->dirfd >= 0) close(t->dirfd);
    if (t->excl_fd >= 0) close(t->excl_fd);
    /* A directory made for this run and left empty (a refusal, or a cleanup) goes
     * again: refusals leave nothing behind. rmdir removes only an empty one. */
    if (t->made_dir) rmdir(t->path);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

bool st_target_is_device(const st_target *t)
{
    return t->is_device;
}

bool st_target_buffered(const st_target *t)
{
    return t->buffered;
}

const char *st_target_path(const st_target *t)
{
    return t->path;
}

uint32_t st_target_block_size(const st_target *t)
{
    return t->block_size;
}

uint64_t st_target_capacity(const st_target *t)
{
    if (t->is_device) { /* up to appsim's mark, which no workload may overwrite */
        uint64_t mark = st_device_mark_offset(t->device_bytes);
        return mark ? mark : t->device_bytes;
    }
    struct statvfs vfs;
    if (fstatvfs(t->dirfd, &vfs) != 0) return 0;
    return (uint64_t)vfs.f_bavail * vfs.f_frsize;
}

int st_target_check_space(const st_target *t, uint64_t bytes, char *err, size_t errlen)
{
    uint64_t cap = st_target_capacity(t);
    if (bytes <= cap) return SIM_EXIT_OK;
    char need[32], have[32];
    sim_format_size(bytes, need, sizeof need);
    sim_format_size(cap, have, sizeof have);
    if (t->is_device)
        return st_target_fail(
            err, errlen, SIM_EXIT_USAGE,
            "not enough space: this needs %s (%llu bytes) but device %s holds only %s "
            "(%llu bytes); choose a smaller size or a larger device",
            need, (unsigned long long)bytes, t->path, have, (unsigned long long)cap);
    return st_target_fail(
        err, errlen, SIM_EXIT_USAGE,
        "not enough space: this needs %s (%llu bytes) but only %s (%llu bytes) is "
        "free on the filesystem of %s; free some space, choose a smaller size, or "
        "pick another target",
        need, (unsigned long long)bytes, have, (unsigned long long)cap, t->path);
}

bool st_space_guard_check(void *ctx, char *why, size_t whylen)
{
    const st_space_guard *g = ctx;
    if (!g->keep_free || g->t->is_device) return false;
    struct statvfs vfs;
    if (fstatvfs(g->t->dirfd, &vfs) != 0) return false;
    uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    if (avail >= g->keep_free) return false;
    char have[32], keep[32];
    sim_format_size(avail, have, sizeof have);
    sim_format_size(g->keep_free, keep, sizeof keep);
    snprintf(why, whylen,
             "only %s (%llu bytes) is free on the filesystem of %s, below --keep-free %s "
             "(%llu bytes)",
             have, (unsigned long long)avail, g->t->path, keep, (unsigned long long)g->keep_free);
    return true;
}
