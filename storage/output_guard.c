/*
 * storage/output_guard.c: the output guard (sim_set_output_guard): an output path of a
 * command (--json, an export, a report) must never be one of its target's own files.
 * A result written over the database, the replay data or the manifest destroys what
 * appsim made and, for the manifest, what lets cleanup find it.
 *
 * A file of a directory target is the manifest or the lock (".appsim-*"), a name the
 * manifest lists, a name a workload creates (registered patterns, so that a file not yet
 * created is covered too), or a library's companion of one of these (SQLite's -wal,
 * -journal and -shm, LMDB's -lock). Outputs are written by renaming a new file over the
 * path, never through it, so a link elsewhere to a target file is not at risk: only the
 * name inside the target directory matters, however the path spells that directory.
 */
#include "storage/target_internal.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PATTERNS 32
static const char *patterns[MAX_PATTERNS];
static int npatterns;

void st_register_target_file_names(const char *pattern)
{
    if (npatterns == MAX_PATTERNS) {
        fprintf(stderr, "appsim: too many target file name patterns (at most %d)\n", MAX_PATTERNS);
        abort();
    }
    patterns[npatterns++] = pattern;
}

/* name without a library's companion suffix, into buf. */
static const char *base_of_companion(const char *name, char *buf, size_t len)
{
    static const char *const suffixes[] = {"-wal", "-journal", "-shm", "-lock"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        size_t s = strlen(suffixes[i]);
        if (n > s && !strcmp(name + n - s, suffixes[i])) {
            snprintf(buf, len, "%.*s", (int)(n - s), name);
            return buf;
        }
    }
    return name;
}

static bool listed(const st_target *t, const char *name)
{
    char **names = NULL;
    bool found = false;
    if (st_manifest_load(t, &names) != 0) return false;
    for (char **n = names; *n && !found; n++)
        found = !strcmp(*n, name);
    st_manifest_free(names);
    return found;
}

/* Why `name` in directory target t is the target's own (into why), or false. */
static bool own_name(const st_target *t, const char *name, char *why, size_t len)
{
    char base[NAME_MAX + 1];
    const char *b = base_of_companion(name, base, sizeof base);
    const char *kind = NULL;
    if (!strncmp(name, ".appsim-", 8))
        kind = "appsim's bookkeeping of the target";
    else if (listed(t, name) || (b != name && listed(t, b)))
        kind = "a file appsim created there (listed in its manifest)";
    for (int i = 0; !kind && i < npatterns; i++)
        if (!fnmatch(patterns[i], name, 0) || !fnmatch(patterns[i], b, 0))
            kind = "the name of a file appsim creates there";
    if (!kind) return false;
    snprintf(why, len,
             "%s/%s is %s, and the output would replace it; write the output outside the "
             "target's files (another name, or another directory)",
             t->path, name, kind);
    return true;
}

static bool guard(const sim_opt *opts, const char *path, char *why, size_t len)
{
    const sim_opt *o = opts ? sim_opts_find(opts, "target") : NULL;
    const char *target = o && o->kind == SIM_OPT_STRING ? *(const char *const *)o->dst : NULL;
    struct stat st;
    if (!target || stat(target, &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    char dir[PATH_MAX], copy[PATH_MAX], real_dir[PATH_MAX], real_target[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    snprintf(copy, sizeof copy, "%s", path);
    if (!realpath(dirname(dir), real_dir) || !realpath(target, real_target)) return false;
    if (strcmp(real_dir, real_target)) return false;
    st_target t = {.dirfd = open(real_target, O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (t.dirfd < 0) return false;
    snprintf(t.path, sizeof t.path, "%s", target);
    bool refused = own_name(&t, basename(copy), why, len);
    close(t.dirfd);
    return refused;
}

__attribute__((constructor)) static void st_install_output_guard(void)
{
    sim_set_output_guard(guard);
    st_register_target_file_names("appsim-*"); /* the preconditioning file and its record */
}
