/*
 * storage/target_lock.c: one appsim per target. Two runs writing one target corrupt
 * each other's databases (both open the files, neither knows of the other's pages), so
 * a second appsim is refused at once, with the holder's pid and command line.
 *
 * The lock is flock(2) on a small file: the kernel drops it when its holder dies, so a
 * killed run never leaves a stale lock; the file's text (pid, command line, start time)
 * only names the holder for the message. Every command that may write the target takes
 * it (check too: it opens SQLite read-write for WAL recovery); read-only opens (info)
 * take none, so a running benchmark's drive can still be identified. A directory
 * target's lock file is DIR/.appsim-lock, opened without
 * following links and removed again when appsim keeps nothing in DIR; a device target's
 * is /run/lock/appsim-dev-MAJ-MIN.lock (the device node itself is no place to write),
 * removed when the run ends.
 */
#include "storage/target_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define LOCK_RETRIES 8

static void device_lock_path(const st_target *t, char *buf, size_t len)
{
    const char *dir = access("/run/lock", W_OK) == 0 ? "/run/lock" : "/run";
    snprintf(buf, len, "%s/appsim-dev-%u-%u.lock", dir, major(t->dev), minor(t->dev));
}

/* The directory and name the lock file lives under. */
static int lock_dir_fd(const st_target *t, char *name, size_t len)
{
    if (!t->is_device) {
        snprintf(name, len, "%s", ST_LOCK_NAME);
        return t->dirfd;
    }
    char path[256];
    device_lock_path(t, path, sizeof path);
    const char *slash = strrchr(path, '/');
    snprintf(name, len, "%s", slash + 1);
    char dir[256];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* The holder's own words, "pid N (CMD) since T", or a note that it wrote none yet. */
static void describe_holder(int fd, char *buf, size_t len)
{
    char text[1024];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    if (n <= 0) {
        snprintf(buf, len, "another appsim (starting: it has not written its pid yet)");
        return;
    }
    text[n] = 0;
    long pid = 0;
    char cmd[900] = "", since[64] = "";
    sscanf(text, "pid %ld", &pid);
    const char *c = strstr(text, "\ncommand ");
    if (c) sscanf(c + 9, "%899[^\n]", cmd);
    const char *s = strstr(text, "\nsince ");
    if (s) sscanf(s + 7, "%63[^\n]", since);
    if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH))
        /* the text is a dead holder's: the new one has not written its own yet */
        snprintf(buf, len, "another appsim (starting: it has not written its pid yet)");
    else
        snprintf(buf, len, "appsim pid %ld (%s), running since %s", pid, cmd[0] ? cmd : "?",
                 since[0] ? since : "?");
}

static void write_holder(int fd)
{
    char cmd[900] = "";
    int c = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (c >= 0) {
        ssize_t n = read(c, cmd, sizeof cmd - 1);
        close(c);
        for (ssize_t i = 0; i + 1 < n; i++)
            if (!cmd[i]) cmd[i] = ' ';
        cmd[n > 0 ? n : 0] = 0;
    }
    char since[64];
    time_t now = time(NULL);
    struct tm tm;
    strftime(since, sizeof since, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    char text[1100];
    int n =
        snprintf(text, sizeof text, "pid %ld\ncommand %s\nsince %s\n", (long)getpid(), cmd, since);
    if (ftruncate(fd, 0) == 0 && n > 0 && pwrite(fd, text, (size_t)n, 0) < 0) {
        /* only the message of a refused second appsim loses its details */
    }
}

/* What open_lock_file answers instead of a descriptor. */
enum {
    LOCK_FILE_NONE = -1,   /* a device has no lock directory for us */
    LOCK_FILE_FAILED = -2, /* with a message in err */
};

/* Opens (creates) the lock file: its descriptor, or LOCK_FILE_NONE or LOCK_FILE_FAILED. */
static int open_lock_file(const st_target *t, int dfd, const char *name, char *err, size_t errlen)
{
    int fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == ELOOP)
            snprintf(err, errlen,
                     "%s/%s is a symbolic link; appsim's lock file is never a link. Remove it "
                     "(appsim did not make it) and run again",
                     t->is_device ? "/run/lock" : t->path, name);
        else if (t->is_device && (errno == EACCES || errno == EROFS))
            return LOCK_FILE_NONE; /* no lock directory for us: the O_EXCL claim guards writes */
        else
            snprintf(err, errlen, "cannot open the lock file %s of target %s: %s", name, t->path,
                     strerror(errno));
        return LOCK_FILE_FAILED;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "%s of target %s is not a regular file: remove it and run again",
                 name, t->path);
        return LOCK_FILE_FAILED;
    }
    return fd;
}

/* True when `name` in dfd is still the file fd holds (a releasing holder may have
 * removed it between our open and our flock). */
static bool still_linked(int dfd, const char *name, int fd)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int lock_in(st_target *t, int dfd, const char *name, char *err, size_t errlen)
{
    for (int attempt = 0; attempt < LOCK_RETRIES; attempt++) {
        int fd = open_lock_file(t, dfd, name, err, errlen);
        if (fd == LOCK_FILE_NONE) return SIM_EXIT_OK;
        if (fd == LOCK_FILE_FAILED) return SIM_EXIT_USAGE;
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            char who[1100];
            describe_holder(fd, who, sizeof who);
            close(fd);
            snprintf(err, errlen,
                     "target %s is in use by %s; two appsim runs on one target corrupt each "
                     "other's data: wait for it to finish (or stop it), then run again",
                     t->path, who);
            return SIM_EXIT_USAGE;
        }
        if (!still_linked(dfd, name, fd)) {
            close(fd);
            continue;
        }
        write_holder(fd);
        t->lock_fd = fd;
        return SIM_EXIT_OK;
    }
    snprintf(err, errlen, "cannot lock target %s: its lock file keeps changing", t->path);
    return SIM_EXIT_USAGE;
}

int st_target_lock(st_target *t, char *err, size_t errlen)
{
    if (t->read_only) return SIM_EXIT_OK;
    char name[256];
    int dfd = lock_dir_fd(t, name, sizeof name);
    if (dfd < 0) return SIM_EXIT_OK; /* no /run: the device's O_EXCL claim still guards writes */
    int rc = lock_in(t, dfd, name, err, errlen);
    if (t->is_device) close(dfd);
    return rc;
}

void st_target_unlock(st_target *t)
{
    if (t->lock_fd < 0) return;
    if (!t->is_device) {
        /* Nothing of appsim's left here: take the lock file away too, so that a refused
         * or cleaned-up target looks as it did before. Removed while still held, so no
         * other appsim can be holding it. */
        struct stat st;
        if (fstatat(t->dirfd, ST_MANIFEST_NAME, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT &&
            still_linked(t->dirfd, ST_LOCK_NAME, t->lock_fd))
            unlinkat(t->dirfd, ST_LOCK_NAME, 0);
    } else {
        /* A device's lock file names nothing once its holder is gone: removed while still
         * held, as above, so that /run/lock does not collect one per device ever used. */
        char name[256];
        int dfd = lock_dir_fd(t, name, sizeof name);
        if (dfd >= 0) {
            if (still_linked(dfd, name, t->lock_fd)) unlinkat(dfd, name, 0);
            close(dfd);
        }
    }
    close(t->lock_fd);
    t->lock_fd = -1;
}
