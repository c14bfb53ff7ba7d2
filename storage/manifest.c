/*
 * storage/manifest.c: the list of files appsim created in a directory target
 * (".appsim-manifest"), the only files it may write or delete there.
 *
 * Format: text, one file name per line; lines starting with '#' are comments. A name is
 * appended and fdatasync'ed before the file is created, so a crash can leave a listed
 * name without a file (harmless: cleanup skips it) but never a created file that is not
 * listed. Removal rewrites the list into a temporary file and renames it over the
 * manifest. Callers hold the target's lock.
 */
#include "storage/target_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_TMP ST_MANIFEST_NAME ".tmp"
#define MANIFEST_HEADER                                                                            \
    "# appsim manifest: files appsim created in this directory, one per line.\n"                   \
    "# appsim writes and deletes only these; `appsim cleanup --target DIR` removes them.\n"

bool st_manifest_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > ST_NAME_MAX || !strcmp(name, ".") || !strcmp(name, "..")) return false;
    if (!strncmp(name, ST_MANIFEST_NAME, strlen(ST_MANIFEST_NAME))) return false;
    for (const char *p = name; *p; p++)
        if (*p == '/' || *p == '\n' || *p == '\r') return false;
    return true;
}

void st_manifest_free(char **names)
{
    if (!names) return;
    for (char **n = names; *n; n++)
        free(*n);
    free(names);
}

int st_manifest_load(const st_target *t, char ***out)
{
    *out = NULL;
    size_t cap = 16, n = 0;
    char **names = calloc(cap, sizeof *names);
    if (!names) return -ENOMEM;
    int fd = openat(t->dirfd, ST_MANIFEST_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            *out = names;
            return 0;
        }
        int e = errno;
        free(names);
        return -e;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        free(names);
        return -ENOMEM;
    }
    char *line = NULL;
    size_t linecap = 0;
    ssize_t len;
    while ((len = getline(&line, &linecap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (len == 0 || line[0] == '#') continue;
        if (!st_manifest_name_ok(line)) {
            /* A hand-edited manifest must not make appsim touch anything outside. */
            sim_warn("ignoring invalid name '%s' in %s/%s", line, t->path, ST_MANIFEST_NAME);
            continue;
        }
        if (n + 1 >= cap) {
            char **nn = realloc(names, 2 * cap * sizeof *names);
            if (!nn) break;
            names = nn;
            cap *= 2;
        }
        names[n++] = strdup(line);
        names[n] = NULL;
    }
    free(line);
    fclose(f);
    *out = names;
    return 0;
}

bool st_manifest_contains(const st_target *t, const char *name)
{
    char **names;
    if (st_manifest_load(t, &names) != 0) return false;
    bool found = false;
    for (char **n = names; *n && !found; n++)
        found = !strcmp(*n, name);
    st_manifest_free(names);
    return found;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

int st_manifest_add(st_target *t, const char *name)
{
    if (st_manifest_contains(t, name)) return 0;
    int fd = openat(t->dirfd, ST_MANIFEST_NAME,
                    O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return -errno;
    struct stat st;
    int e = fstat(fd, &st) == 0 ? 0 : -errno;
    bool fresh = !e && st.st_size == 0;
    if (!e && fresh) e = write_all(fd, MANIFEST_HEADER, strlen(MANIFEST_HEADER));
    if (!e) e = write_all(fd, name, strlen(name));
    if (!e) e = write_all(fd, "\n", 1);
    if (!e && fdatasync(fd) != 0) e = -errno;
    close(fd);
    if (!e && fresh) fsync(t->dirfd); /* the manifest's own directory entry */
    return e;
}

int st_manifest_remove(st_target *t, const char *name)
{
    char **names;
    int e = st_manifest_load(t, &names);
    if (e) return e;
    int fd =
        openat(t->dirfd, MANIFEST_TMP, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        e = -errno;
        st_manifest_free(names);
        return e;
    }
    e = write_all(fd, MANIFEST_HEADER, strlen(MANIFEST_HEADER));
    for (char **n = names; *n && !e; n++) {
        if (!strcmp(*n, name)) continue;
        e = write_all(fd, *n, strlen(*n));
        if (!e) e = write_all(fd, "\n", 1);
    }
    st_manifest_free(names);
    if (!e && fdatasync(fd) != 0) e = -errno;
    close(fd);
    if (!e && renameat(t->dirfd, MANIFEST_TMP, t->dirfd, ST_MANIFEST_NAME) != 0) e = -errno;
    if (e)
        unlinkat(t->dirfd, MANIFEST_TMP, 0);
    else
        fsync(t->dirfd);
    return e;
}

int st_manifest_delete(st_target *t)
{
    if (unlinkat(t->dirfd, ST_MANIFEST_NAME, 0) != 0 && errno != ENOENT) return -errno;
    fsync(t->dirfd);
    return 0;
}
