/*
 * sim/atomic.c: replacing a file atomically and durably, the one routine every writer of
 * results, reports and traces uses: the data goes to a temporary file beside the target
 * (same directory, so the rename cannot cross filesystems), which is fsynced, renamed
 * over the target, and the directory fsynced so that the rename itself survives a
 * crash. Readers see the old file or the whole new one, never a part.
 * A path that exists and is not a regular file (/dev/null, /dev/stdout, a FIFO) is written
 * in place: renaming over it would replace the device node or the pipe with a file.
 */
#include "sim/sim.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool sim_atomic_in_place(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* Writes all of data to fd; 0 or an errno value. */
static int write_all(int fd, const void *data, size_t len)
{
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fd, (const char *)data + done, len - done);
        if (w > 0)
            done += (size_t)w;
        else if (w < 0 && errno != EINTR)
            return errno;
        else if (w == 0)
            return EIO;
    }
    return 0;
}

static int write_in_place(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    int e = write_all(fd, data, len);
    if (close(fd) != 0 && !e) e = errno;
    return e;
}

int sim_atomic_tmp_name(const char *path, char *tmp, size_t len)
{
    int n = snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid());
    return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

int sim_atomic_commit(int fd, const char *tmp, const char *path)
{
    int e = 0;
    if (fsync(fd) != 0 || rename(tmp, path) != 0) e = errno;
    if (e) {
        unlink(tmp);
        return e;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return errno;
    if (fsync(dfd) != 0) e = errno;
    close(dfd);
    return e;
}

int sim_atomic_write(const char *path, const void *data, size_t len)
{
    if (sim_atomic_in_place(path)) return write_in_place(path, data, len);
    char tmp[4096];
    int e = -sim_atomic_tmp_name(path, tmp, sizeof tmp);
    if (e) return e;
    /* never through a link planted under the temporary name */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    e = write_all(fd, data, len);
    if (e) {
        close(fd);
        unlink(tmp);
        return e;
    }
    e = sim_atomic_commit(fd, tmp, path);
    if (close(fd) != 0 && !e) e = errno;
    return e;
}
