/*
 * storage/target_files.c: the files inside a directory target, and how appsim opens
 * them.
 *
 * Invariants: a file is written, truncated or deleted only if its name is in the
 * manifest, and the name is recorded there (durably) before the file is created; every
 * open is relative to the target's directory fd with O_NOFOLLOW, so no symlink is ever
 * followed out of the target; once created, a file's inode is recorded in the manifest
 * and every later open checks that the name still holds that file (on the target's
 * filesystem), so a hard link or a copy put in its place is refused too. Libraries that
 * open files by path themselves (SQLite's default VFS, LMDB) get a path only after the
 * same checks (st_target_library_path).
 */
#include "storage/target_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int direct_flag(const st_target *t)
{
    return t->buffered ? 0 : O_DIRECT;
}

static int check_name(const st_target *t, const char *name, char *err, size_t errlen)
{
    if (t->is_device) {
        if (name)
            return st_target_fail(err, errlen, SIM_EXIT_USAGE,
                                  "target %s is a block device: it holds no named files (%s)",
                                  t->path, name);
        return SIM_EXIT_OK;
    }
    if (!name || !st_manifest_name_ok(name))
        return st_target_fail(err, errlen, SIM_EXIT_USAGE,
                              "invalid file name '%s' inside target %s", name ? name : "(null)",
                              t->path);
    return SIM_EXIT_OK;
}

/* The refusal for a name that is a symbolic link: says where it points. */
static int refuse_link(const st_target *t, const char *name, char *err, size_t errlen)
{
    char to[1024];
    ssize_t n = readlinkat(t->dirfd, name, to, sizeof to - 1);
    to[n > 0 ? n : 0] = 0;
    return st_target_fail(
        err, errlen, SIM_EXIT_USAGE,
        "%s/%s is a symbolic link to %s, not the file appsim created there; appsim "
        "never opens a file of its target through a link (it would write outside the "
        "target). Remove the link (appsim did not make it), then run `appsim cleanup "
        "--target %s` and start again, or use an empty target directory",
        t->path, name, n > 0 ? to : "(unreadable)", t->path);
}

/* What `name` holds now (fd >= 0: the open file; else looked up without following a
 * link). Returns 0 or -errno. */
static int stat_id(const st_target *t, const char *name, int fd, mode_t *mode, st_file_id *id)
{
    struct statx sx;
    int rc = fd >= 0
                 ? statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &sx)
                 : statx(t->dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &sx);
    if (rc != 0) return -errno;
    *mode = sx.stx_mode;
    id->dev = (uint64_t)makedev(sx.stx_dev_major, sx.stx_dev_minor);
    id->ino = sx.stx_ino;
    id->btime_ns = (sx.stx_mask & STATX_BTIME)
                       ? (uint64_t)sx.stx_btime.tv_sec * 1000000000u + sx.stx_btime.tv_nsec
                       : 0;
    return 0;
}

/* Checks that the file `name` holds now (mode, id) is the regular file appsim created.
 * A listed file without a recorded identity (a manifest of an older appsim) is recorded
 * now. */
static int check_identity(st_target *t, const char *name, mode_t mode, const st_file_id *now,
                          char *err, size_t errlen)
{
    if (S_ISLNK(mode)) return refuse_link(t, name, err, errlen);
    if (!S_ISREG(mode))
        return st_target_fail(
            err, errlen, SIM_EXIT_USAGE,
            "%s/%s is not a regular file, so appsim did not create it: move it away, "
            "or use an empty target directory",
            t->path, name);
    st_file_id rec;
    int have = st_manifest_identity(t, name, &rec);
    if (have < 0) return SIM_EXIT_OK; /* not listed: opened read-only, identity not ours to check */
    /* Device numbers can change across reboots; the inode on the directory's own
     * filesystem and its birth time cannot. */
    bool same = now->ino == rec.ino && now->dev == (uint64_t)t->dev &&
                (!rec.btime_ns || !now->btime_ns || rec.btime_ns == now->btime_ns);
    if (have == 1 && !same)
        return st_target_fail(
            err, errlen, SIM_EXIT_USAGE,
            "%s/%s is not the file appsim created there (inode %llu born at %llu ns; "
            "the manifest recorded inode %llu born at %llu ns): it was replaced or "
            "linked in since. appsim writes only files it created; move it away, then "
            "run `appsim cleanup --target %s` and start again",
            t->path, name, (unsigned long long)now->ino, (unsigned long long)now->btime_ns,
            (unsigned long long)rec.ino, (unsigned long long)rec.btime_ns, t->path);
    if (have == 0 && now->dev == (uint64_t)t->dev && st_manifest_set_identity(t, name, now) != 0)
        sim_warn("cannot record the identity of %s/%s in the manifest", t->path, name);
    return SIM_EXIT_OK;
}

static int check_fd_locked(st_target *t, const char *name, int fd, char *err, size_t errlen)
{
    mode_t mode;
    st_file_id id;
    int e = stat_id(t, name, fd, &mode, &id);
    if (e)
        return st_target_fail(err, errlen, SIM_EXIT_FAIL, "cannot stat %s/%s: %s", t->path, name,
                              strerror(-e));
    return check_identity(t, name, mode, &id, err, errlen);
}

int st_target_check_fd(st_target *t, const char *name, int fd, char *err, size_t errlen)
{
    int rc = check_name(t, name, err, errlen);
    if (rc) return rc;
    pthread_mutex_lock(&t->lock);
    rc = check_fd_locked(t, name, fd, err, errlen);
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* A SQLite companion that another program left beside one of appsim's databases
 * (sqlite3 opening it, even read-only, leaves an empty -wal and a -shm): adopted as
 * appsim's (listed, its identity recorded, a note on stderr) when it is provably
 * harmless to write: a regular file on the target's filesystem with no other link,
 * owned by this user, beside a listed file, and holding nothing: an empty -wal or
 * -journal, or a -shm (SQLite's WAL index, rebuilt by the first connection) beside an
 * absent or empty -wal. True when adopted. Called with the target's lock held. */
static bool adopt_empty_companion(st_target *t, const char *name)
{
    static const char *const suffixes[] = {"-wal", "-journal", "-shm"};
    char base[ST_NAME_MAX + 1] = "";
    bool shm = false;
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        size_t s = strlen(suffixes[i]);
        if (n > s && n - s <= ST_NAME_MAX && !strcmp(name + n - s, suffixes[i])) {
            snprintf(base, sizeof base, "%.*s", (int)(n - s), name);
            shm = i == 2;
        }
    }
    struct stat st, wal;
    char wal_name[ST_NAME_MAX + 8];
    snprintf(wal_name, sizeof wal_name, "%s-wal", base);
    bool wal_empty = fstatat(t->dirfd, wal_name, &wal, AT_SYMLINK_NOFOLLOW) != 0 ||
                     (S_ISREG(wal.st_mode) && wal.st_size == 0);
    if (!base[0] || !st_manifest_contains(t, base) ||
        fstatat(t->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        (shm ? !wal_empty : st.st_size != 0) || st.st_nlink != 1 || st.st_uid != geteuid() ||
        st.st_dev != t->dev)
        return false;
    mode_t mode;
    st_file_id id;
    if (st_manifest_add(t, name) != 0 || stat_id(t, name, -1, &mode, &id) != 0 ||
        st_manifest_set_identity(t, name, &id) != 0)
        return false;
    sim_warn("%s/%s is a file another program left beside %s (sqlite3 leaves one even when "
             "it only reads the database); appsim takes it over, since it holds no data",
             t->path, name, base);
    return true;
}

int st_target_library_path(st_target *t, const char *name, bool must_exist, char *buf, size_t len,
                           char *err, size_t errlen)
{
    int rc = check_name(t, name, err, errlen);
    if (rc) return rc;
    mode_t mode;
    st_file_id id;
    pthread_mutex_lock(&t->lock);
    int e = stat_id(t, name, -1, &mode, &id);
    if (e == 0) {
        if (!S_ISLNK(mode) && !st_manifest_contains(t, name) && !adopt_empty_companion(t, name))
            rc = st_target_fail(
                err, errlen, SIM_EXIT_USAGE,
                "%s/%s exists but appsim did not create it (it is not in %s/%s), and "
                "the library would write it: if a program such as sqlite3 opened the "
                "database, it may hold that program's changes; make sure nothing uses the "
                "database any more, then move the file away (or use an empty target "
                "directory)",
                t->path, name, t->path, ST_MANIFEST_NAME);
        else
            rc = check_identity(t, name, mode, &id, err, errlen);
    } else if (e != -ENOENT) {
        rc = st_target_fail(err, errlen, SIM_EXIT_FAIL, "cannot stat %s/%s: %s", t->path, name,
                            strerror(-e));
    } else if (must_exist) {
        rc = st_target_fail(err, errlen, SIM_EXIT_USAGE,
                            "%s/%s does not exist: run the workload's prepare step first", t->path,
                            name);
    }
    pthread_mutex_unlock(&t->lock);
    if (rc) return rc;
    if ((size_t)snprintf(buf, len, "%s/%s", t->realdir, name) >= len)
        return st_target_fail(err, errlen, SIM_EXIT_USAGE, "path of %s/%s is too long", t->path,
                              name);
    return SIM_EXIT_OK;
}

static int create_device_fd(st_target *t, int extra_flags, int *fd, char *err, size_t errlen)
{
    *fd = open(t->path, O_RDWR | O_CLOEXEC | direct_flag(t) | extra_flags);
    if (*fd < 0)
        return st_target_fail(err, errlen, SIM_EXIT_FAIL, "cannot open %s for writing: %s", t->path,
                              strerror(errno));
    /* Marked when first opened for writing, not at st_target_open: a command that
     * fails its own checks afterwards leaves the device untouched. */
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    if (!t->marked) {
        rc = st_device_mark_write(t->path, t->device_bytes, err, errlen);
        t->marked = rc == 0;
    }
    pthread_mutex_unlock(&t->lock);
    if (rc) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}

/* Lists name before it is created; refuses a name that exists but is not listed. */
static int claim_name(st_target *t, const char *name, bool *listed, char *err, size_t errlen)
{
    *listed = st_manifest_contains(t, name);
    if (*listed) return SIM_EXIT_OK;
    struct stat st;
    if (fstatat(t->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(st.st_mode)) return refuse_link(t, name, err, errlen);
        if (adopt_empty_companion(t, name)) {
            *listed = true;
            return SIM_EXIT_OK;
        }
        return st_target_fail(
            err, errlen, SIM_EXIT_USAGE,
            "%s/%s already exists and appsim did not create it (it is not in %s/%s); "
            "appsim never overwrites files it did not create: use an empty directory, "
            "or move the file away",
            t->path, name, t->path, ST_MANIFEST_NAME);
    }
    int e = st_manifest_add(t, name);
    if (e)
        return st_target_fail(err, errlen, SIM_EXIT_FAIL, "cannot record %s in %s/%s: %s", name,
                              t->path, ST_MANIFEST_NAME, strerror(-e));
    return SIM_EXIT_OK;
}

static int open_error(const st_target *t, const char *name, int e, bool creating, char *err,
                      size_t errlen)
{
    if (e == ELOOP) return refuse_link(t, name, err, errlen);
    if (e == EINVAL && !t->buffered)
        return st_target_fail(
            err, errlen, SIM_EXIT_USAGE,
            "the filesystem of %s (%s) refuses O_DIRECT for %s; pass --buffered to run "
            "through the page cache (the result will say so)",
            t->path, t->fstype[0] ? t->fstype : "unknown type", name);
    if (e == ENOENT && !creating)
        return st_target_fail(err, errlen, SIM_EXIT_USAGE,
                              "%s/%s does not exist: run the workload's prepare step first",
                              t->path, name);
    return st_target_fail(
        err, errlen, e == ENOSPC || e == EROFS || e == EACCES ? SIM_EXIT_USAGE : SIM_EXIT_FAIL,
        "cannot %s %s/%s: %s", creating ? "create" : "open", t->path, name, strerror(e));
}

/* Opens the listed file, creating it (and recording its identity) when absent. */
static int open_or_create(st_target *t, const char *name, int flags, int *fd, char *err,
                          size_t errlen)
{
    *fd = openat(t->dirfd, name, flags);
    if (*fd >= 0) {
        int rc = check_fd_locked(t, name, *fd, err, errlen);
        if (rc) {
            close(*fd);
            *fd = -1;
        }
        return rc;
    }
    if (errno != ENOENT) return -errno;
    *fd = openat(t->dirfd, name, flags | O_CREAT | O_EXCL, 0644);
    if (*fd < 0) return -errno;
    mode_t mode;
    st_file_id id;
    int e = stat_id(t, name, *fd, &mode, &id);
    if (!e) e = st_manifest_set_identity(t, name, &id);
    if (e) {
        close(*fd);
        *fd = -1;
        unlinkat(t->dirfd, name, 0);
        return st_target_fail(err, errlen, SIM_EXIT_FAIL, "cannot record %s in %s/%s: %s", name,
                              t->path, ST_MANIFEST_NAME, strerror(-e));
    }
    return SIM_EXIT_OK;
}

int st_target_create_file(st_target *t, const char *name, int extra_flags, int *fd, char *err,
                          size_t errlen)
{
    *fd = -1;
    int rc = check_name(t, name, err, errlen);
    if (rc) return rc;
    if (t->read_only)
        return st_target_fail(err, errlen, SIM_EXIT_USAGE, "target %s was opened read-only",
                              t->path);
    if (t->is_device) return create_device_fd(t, extra_flags, fd, err, errlen);
    pthread_mutex_lock(&t->lock);
    bool listed = false;
    rc = claim_name(t, name, &listed, err, errlen);
    if (!rc) {
        int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | direct_flag(t) | extra_flags;
        rc = open_or_create(t, name, flags, fd, err, errlen);
        if (rc < 0) {
            int e = -rc;
            if (!listed) st_manifest_remove(t, name); /* undo: nothing was created */
            rc = open_error(t, name, e, true, err, errlen);
        } else if (rc && !listed) {
            st_manifest_remove(t, name);
        }
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int st_target_open_file(st_target *t, const char *name, int extra_flags, bool writable, int *fd,
                        char *err, size_t errlen)
{
    *fd = -1;
    int rc = check_name(t, name, err, errlen);
    if (rc) return rc;
    if (writable && t->read_only)
        return st_target_fail(err, errlen, SIM_EXIT_USAGE, "target %s was opened read-only",
                              t->path);
    int flags =
        (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC | direct_flag(t) | extra_flags;
    if (t->is_device) {
        *fd = open(t->path, flags & ~O_NOFOLLOW);
        if (*fd < 0)
            return st_target_fail(err, errlen, SIM_EXIT_FAIL, "cannot open %s: %s", t->path,
                                  strerror(errno));
        return SIM_EXIT_OK;
    }
    if (writable && !st_target_owns(t, name))
        return st_target_fail(
            err, errlen, SIM_EXIT_USAGE,
            "%s/%s was not created by appsim (it is not in the target's manifest); "
            "appsim writes only files it created",
            t->path, name);
    *fd = openat(t->dirfd, name, flags);
    if (*fd < 0) return open_error(t, name, errno, false, err, errlen);
    rc = st_target_check_fd(t, name, *fd, err, errlen);
    if (rc) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}

bool st_target_owns(const st_target *t, const char *name)
{
    if (t->is_device || !name || !st_manifest_name_ok(name)) return false;
    pthread_mutex_lock((pthread_mutex_t *)&t->lock);
    bool r = st_manifest_contains(t, name);
    pthread_mutex_unlock((pthread_mutex_t *)&t->lock);
    return r;
}

const char *st_target_file_path(const st_target *t, const char *name, char *buf, size_t len)
{
    if (t->is_device || !name)
        snprintf(buf, len, "%s", t->path);
    else
        snprintf(buf, len, "%s/%s", t->path, name);
    return buf;
}

/* Before a listed name is deleted: whether it still holds the file appsim created, as
 * the manifest recorded it (inode on the target's filesystem and birth time), the check
 * every open makes (check_identity). SIM_EXIT_OK (with *gone when nothing is there any more), or
 * SIM_EXIT_USAGE with err saying what the name holds instead; never records anything.
 * Called with the target's lock held. */
static int check_deletable(st_target *t, const char *name, bool *gone, char *err, size_t errlen)
{
    mode_t mode;
    st_file_id now = {0}, rec = {0}; /* zeroed: gcc -O3 cannot tell stat_id fills now */
    int e = stat_id(t, name, -1, &mode, &now);
    *gone = e == -ENOENT;
    if (*gone) return SIM_EXIT_OK;
    if (e)
        return st_target_fail(err, errlen, SIM_EXIT_FAIL, "cannot stat %s/%s: %s", t->path, name,
                              strerror(-e));
    if (S_ISLNK(mode))
        return st_target_fail(err, errlen, SIM_EXIT_USAGE,
                              "%s/%s is a symbolic link, not the file appsim created there",
                              t->path, name);
    if (!S_ISREG(mode) && !S_ISDIR(mode))
        return st_target_fail(err, errlen, SIM_EXIT_USAGE,
                              "%s/%s is not a regular file, so appsim did not create it", t->path,
                              name);
    /* A name listed without an identity (an older appsim's manifest) is accepted, as
     * every open accepts it. */
    if (st_manifest_identity(t, name, &rec) <= 0) return SIM_EXIT_OK;
    bool same = now.ino == rec.ino && now.dev == (uint64_t)t->dev &&
                (!rec.btime_ns || !now.btime_ns || rec.btime_ns == now.btime_ns);
    if (!same)
        return st_target_fail(err, errlen, SIM_EXIT_USAGE,
                              "%s/%s is not the file appsim created there (inode %llu born at "
                              "%llu ns; the manifest recorded inode %llu born at %llu ns): it "
                              "was replaced or linked in since",
                              t->path, name, (unsigned long long)now.ino,
                              (unsigned long long)now.btime_ns, (unsigned long long)rec.ino,
                              (unsigned long long)rec.btime_ns);
    return SIM_EXIT_OK;
}

int st_target_remove_file(st_target *t, const char *name, char *err, size_t errlen)
{
    int rc = check_name(t, name, err, errlen);
    if (rc) return rc;
    if (t->is_device || t->read_only)
        return st_target_fail(err, errlen, SIM_EXIT_USAGE, "cannot remove files from target %s",
                              t->path);
    pthread_mutex_lock(&t->lock);
    if (!st_manifest_contains(t, name)) {
        pthread_mutex_unlock(&t->lock);
        return st_target_fail(
            err, errlen, SIM_EXIT_USAGE,
            "refusing to remove %s/%s: appsim did not create it (not in the manifest)", t->path,
            name);
    }
    bool gone = false;
    rc = check_deletable(t, name, &gone, err, errlen);
    if (rc) {
        pthread_mutex_unlock(&t->lock);
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, "; appsim left it in place (still listed): move it away");
        return rc;
    }
    if (!gone && unlinkat(t->dirfd, name, 0) != 0 && errno != ENOENT) {
        int e = errno;
        pthread_mutex_unlock(&t->lock);
        return st_target_fail(err, errlen, SIM_EXIT_FAIL, "cannot remove %s/%s: %s", t->path, name,
                              strerror(e));
    }
    int e = st_manifest_remove(t, name);
    pthread_mutex_unlock(&t->lock);
    if (e)
        return st_target_fail(err, errlen, SIM_EXIT_FAIL,
                              "removed %s but cannot update the manifest: %s", name, strerror(-e));
    return SIM_EXIT_OK;
}

int st_target_cleanup(st_target *t, char *err, size_t errlen)
{
    if (t->is_device) {
        sim_info("%s is a block device: appsim keeps no files on it, nothing to remove", t->path);
        return SIM_EXIT_OK;
    }
    if (t->read_only)
        return st_target_fail(err, errlen, SIM_EXIT_USAGE, "target %s was opened read-only",
                              t->path);
    pthread_mutex_lock(&t->lock);
    char **names = NULL;
    int e = st_manifest_load(t, &names);
    if (e) {
        pthread_mutex_unlock(&t->lock);
        return st_target_fail(err, errlen, SIM_EXIT_FAIL, "cannot read %s/%s: %s", t->path,
                              ST_MANIFEST_NAME, strerror(-e));
    }
    int failed = 0, removed = 0, left = 0;
    char first_fail[512] = "";
    for (char **n = names; *n; n++) {
        struct stat st;
        bool gone = false;
        char why[1024];
        int rc = check_deletable(t, *n, &gone, why, sizeof why);
        if (gone) {
            st_manifest_remove(t, *n);
            continue;
        }
        if (rc) { /* not appsim's file, or not provably: never deleted */
            sim_warn("left %s; move it away yourself if it is not needed", why);
            left++;
            continue;
        }
        if (fstatat(t->dirfd, *n, &st, AT_SYMLINK_NOFOLLOW) != 0) continue; /* already gone */
        if (unlinkat(t->dirfd, *n, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0) {
            if (!failed++) snprintf(first_fail, sizeof first_fail, "%s: %s", *n, strerror(errno));
            continue;
        }
        char sz[32];
        sim_info("removed %s/%s (%s)", t->path, *n,
                 sim_format_size((uint64_t)st.st_size, sz, sizeof sz));
        removed++;
        st_manifest_remove(t, *n);
    }
    st_manifest_free(names);
    if (!failed && !left) st_manifest_delete(t);
    pthread_mutex_unlock(&t->lock);
    if (left && !failed)
        return st_target_fail(err, errlen, SIM_EXIT_USAGE,
                              "cleanup of %s: %d file(s) removed, %d left because they are not "
                              "the files appsim created there (named above; they stay listed in "
                              "%s/%s until they are gone)",
                              t->path, removed, left, t->path, ST_MANIFEST_NAME);
    if (failed)
        return st_target_fail(
            err, errlen, SIM_EXIT_FAIL,
            "could not remove %d file(s) listed in %s/%s (first: %s); they stay listed", failed,
            t->path, ST_MANIFEST_NAME, first_fail);
    sim_info("cleanup of %s: %d file(s) removed", t->path, removed);
    return SIM_EXIT_OK;
}
