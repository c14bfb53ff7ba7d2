/*
 * storage/manifest.c: the list of files appsim created in a directory target
 * (".appsim-manifest"), the only files it may write or delete there.
 *
 * Format: text, one file name per line; lines starting with '#' are comments. A name is
 * appended and fdatasync'ed before the file is created, so a crash can leave a listed
 * name without a file (harmless: cleanup skips it) but never a created file that is not
 * listed. Once the file exists, a line "NAME<TAB>DEV<TAB>INODE<TAB>BIRTH_NS" records
 * which file it is (the last such line wins): a listed name that now holds another
 * file (a hard link or a copy put in its place) is not the file appsim created and is
 * never written. Removal rewrites the list into a temporary file and renames it over
 * the manifest. Callers hold the target's lock.
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
    if (!strcmp(name, ST_LOCK_NAME)) return false;
    for (const char *p = name; *p; p++)
        if (*p == '/' || *p == '\n' || *p == '\r' || *p == '\t') return false;
    return true;
}

void st_manifest_free(char **names)
{
    if (!names) return;
    for (char **n = names; *n; n++)
        free(*n);
    free(names);
}

/* One listed name and, once its file exists, which file that is. */
typedef struct entry {
    char *name;
    bool has_id;
    st_file_id id;
} entry;

typedef struct entries {
    entry *v;
    size_t n, cap;
} entries;

static void entries_free(entries *es)
{
    for (size_t i = 0; i < es->n; i++)
        free(es->v[i].name);
    free(es->v);
    es->v = NULL;
    es->n = es->cap = 0;
}

static entry *entries_find(entries *es, const char *name)
{
    for (size_t i = 0; i < es->n; i++)
        if (!strcmp(es->v[i].name, name)) return &es->v[i];
    return NULL;
}

/* Adds or updates one parsed line ("NAME" or "NAME\tDEV\tINO\tBIRTH_NS"). */
static void entries_take_line(entries *es, const st_target *t, char *line)
{
    char *tab = strchr(line, '\t');
    bool has_id = false;
    unsigned long long dev = 0, ino = 0, btime = 0;
    if (tab) {
        *tab = 0;
        has_id = sscanf(tab + 1, "%llu\t%llu\t%llu", &dev, &ino, &btime) >= 2;
    }
    if (!st_manifest_name_ok(line)) {
        /* A hand-edited manifest must not make appsim touch anything outside. */
        sim_warn("ignoring invalid name '%s' in %s/%s", line, t->path, ST_MANIFEST_NAME);
        return;
    }
    entry *e = entries_find(es, line);
    if (!e) {
        if (es->n == es->cap) {
            size_t cap = es->cap ? 2 * es->cap : 16;
            es->v = sim_xrealloc(es->v, cap * sizeof *es->v);
            es->cap = cap;
        }
        e = &es->v[es->n];
        *e = (entry){.name = sim_xstrdup(line)};
        es->n++;
    }
    if (has_id) {
        e->has_id = true;
        e->id = (st_file_id){.dev = dev, .ino = ino, .btime_ns = btime};
    }
}

static int entries_load(const st_target *t, entries *es)
{
    *es = (entries){0};
    int fd = openat(t->dirfd, ST_MANIFEST_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -errno;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return -ENOMEM;
    }
    char *line = NULL;
    size_t linecap = 0;
    ssize_t len;
    while ((len = getline(&line, &linecap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (len == 0 || line[0] == '#') continue;
        entries_take_line(es, t, line);
    }
    free(line);
    fclose(f);
    return 0;
}

int st_manifest_load(const st_target *t, char ***out)
{
    *out = NULL;
    entries es;
    int e = entries_load(t, &es);
    if (e) return e;
    char **names = sim_xcalloc(es.n + 1, sizeof *names);
    for (size_t i = 0; i < es.n; i++) {
        names[i] = es.v[i].name; /* moved */
        es.v[i].name = NULL;
    }
    entries_free(&es);
    *out = names;
    return 0;
}

bool st_manifest_contains(const st_target *t, const char *name)
{
    entries es;
    if (entries_load(t, &es) != 0) return false;
    bool found = entries_find(&es, name) != NULL;
    entries_free(&es);
    return found;
}

int st_manifest_identity(const st_target *t, const char *name, st_file_id *id)
{
    entries es;
    int e = entries_load(t, &es);
    if (e) return e;
    entry *en = entries_find(&es, name);
    int r = !en ? -ENOENT : en->has_id ? 1 : 0;
    if (r == 1) *id = en->id;
    entries_free(&es);
    return r;
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

/* Appends one line to the manifest, durably. */
static int append_line(st_target *t, const char *line)
{
    int fd = openat(t->dirfd, ST_MANIFEST_NAME,
                    O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return -errno;
    struct stat st;
    int e = fstat(fd, &st) == 0 ? 0 : -errno;
    if (!e && !S_ISREG(st.st_mode)) e = -EINVAL;
    bool fresh = !e && st.st_size == 0;
    if (!e && fresh) e = write_all(fd, MANIFEST_HEADER, strlen(MANIFEST_HEADER));
    if (!e) e = write_all(fd, line, strlen(line));
    if (!e) e = write_all(fd, "\n", 1);
    if (!e && fdatasync(fd) != 0) e = -errno;
    close(fd);
    if (!e && fresh) fsync(t->dirfd); /* the manifest's own directory entry */
    return e;
}

int st_manifest_add(st_target *t, const char *name)
{
    if (st_manifest_contains(t, name)) return 0;
    return append_line(t, name);
}

static void format_entry(char *line, size_t len, const char *name, const st_file_id *id)
{
    snprintf(line, len, "%s\t%llu\t%llu\t%llu\n", name, (unsigned long long)id->dev,
             (unsigned long long)id->ino, (unsigned long long)id->btime_ns);
}

int st_manifest_set_identity(st_target *t, const char *name, const st_file_id *id)
{
    char line[ST_NAME_MAX + 80];
    format_entry(line, sizeof line, name, id);
    line[strlen(line) - 1] = 0; /* append_line adds the newline */
    return append_line(t, line);
}

int st_manifest_remove(st_target *t, const char *name)
{
    entries es;
    int e = entries_load(t, &es);
    if (e) return e;
    int fd =
        openat(t->dirfd, MANIFEST_TMP, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        e = -errno;
        entries_free(&es);
        return e;
    }
    e = write_all(fd, MANIFEST_HEADER, strlen(MANIFEST_HEADER));
    for (size_t i = 0; i < es.n && !e; i++) {
        const entry *en = &es.v[i];
        if (!strcmp(en->name, name)) continue;
        /* The bare name first, so that the file stays "one name per line" for anyone
         * reading it; then which file it is. */
        char line[ST_NAME_MAX + 80];
        snprintf(line, sizeof line, "%s\n", en->name);
        e = write_all(fd, line, strlen(line));
        if (!e && en->has_id) {
            format_entry(line, sizeof line, en->name, &en->id);
            e = write_all(fd, line, strlen(line));
        }
    }
    entries_free(&es);
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
