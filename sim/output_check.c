/*
 * sim/output_check.c: the check every output path gets before a command does anything
 * (sim_output_check in sim/sim.h). A result, export, report or trace is written at the
 * end of a command, often after a long run; a path that cannot take it must be refused
 * at the start, when nothing has been created or run yet.
 *
 * Writability is tried, not guessed from mode bits: root passes every access() test,
 * and ACLs, read-only mounts, quotas and pseudo-filesystems each say no in their own
 * way. A probe file is created beside the output with O_EXCL and removed at once.
 */
#include "sim/sim_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

static sim_output_guard_fn guard;

void sim_set_output_guard(sim_output_guard_fn fn)
{
    guard = fn;
}

/* The kernel's own filesystems: a file written there is not a file. */
static const char *pseudo_fs_name(long type)
{
    switch (type) {
    case PROC_SUPER_MAGIC:
        return "proc";
    case SYSFS_MAGIC:
        return "sysfs";
    case DEBUGFS_MAGIC:
        return "debugfs";
    case TRACEFS_MAGIC:
        return "tracefs";
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
        return "cgroup";
    case DEVPTS_SUPER_MAGIC:
        return "devpts";
    case SECURITYFS_MAGIC:
        return "securityfs";
    case BPF_FS_MAGIC:
        return "bpf";
    case PSTOREFS_MAGIC:
        return "pstore";
    case EFIVARFS_MAGIC:
        return "efivarfs";
    }
    return NULL;
}

/* Creates and removes a probe file in dir; 0 or the errno that refused it. */
static int probe_dir(const char *dir)
{
    char probe[PATH_MAX];
    for (int i = 0; i < 100; i++) {
        if (snprintf(probe, sizeof probe, "%s/.appsim-probe.%ld.%d", dir, (long)getpid(), i) >=
            (int)sizeof probe)
            return ENAMETOOLONG;
        int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            close(fd);
            unlink(probe);
            return 0;
        }
        if (errno != EEXIST) return errno;
    }
    return EEXIST;
}

/* The directory part of path ("." for a bare name) into buf. */
static void dir_of(const char *path, char *buf, size_t len)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(buf, len, "%s", dirname(copy));
}

/* Why path cannot be written (into why), or "" when it can. */
static void why_not_writable(const char *path, sim_output_kind kind, bool force, char *why,
                             size_t len)
{
    why[0] = 0;
    size_t n = strlen(path);
    struct stat st;
    if (n >= PATH_MAX - 64) {
        snprintf(why, len, "the path is too long");
        return;
    }
    if (path[n - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
        snprintf(why, len, "it is a directory; give a file name (e.g. %s%sresult.json)", path,
                 path[n - 1] == '/' ? "" : "/");
        return;
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(why, len,
                 "it is not a regular file (a device, FIFO or socket); give a file name, or - "
                 "for standard output");
        return;
    }
    if (kind == SIM_OUTPUT_NEW && !force && lstat(path, &st) == 0) {
        snprintf(why, len,
                 "it exists; remove it, choose another name, or pass --force to replace it");
        return;
    }
    char dir[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT)
            snprintf(why, len,
                     "the directory %s does not exist; create it (mkdir -p %s) or "
                     "choose another path",
                     dir, dir);
        else
            snprintf(why, len, "the directory %s cannot be used: %s", dir, strerror(errno));
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, len, "%s is not a directory", dir);
        return;
    }
    struct statfs sf;
    const char *pseudo = statfs(dir, &sf) == 0 ? pseudo_fs_name((long)sf.f_type) : NULL;
    if (pseudo) {
        snprintf(why, len,
                 "%s is on %s, a kernel filesystem that holds no files; choose a "
                 "path on a real filesystem",
                 dir, pseudo);
        return;
    }
    struct statvfs sv;
    if (statvfs(dir, &sv) == 0 && (sv.f_flag & ST_RDONLY)) {
        snprintf(why, len, "%s is on a read-only filesystem; choose a writable path", dir);
        return;
    }
    int e = probe_dir(dir);
    if (e)
        snprintf(why, len, "a file cannot be created in %s: %s; choose a writable path", dir,
                 strerror(e));
}

/* path with its directory resolved (no symlink, no ..), to tell two spellings of one
 * file apart; path itself when the directory does not resolve. */
static void canonical(const char *path, char *buf, size_t len)
{
    char dir[PATH_MAX], real[PATH_MAX], copy[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    snprintf(copy, sizeof copy, "%s", path);
    if (realpath(dir, real))
        snprintf(buf, len, "%s/%s", real, basename(copy));
    else
        snprintf(buf, len, "%s", path);
}

int sim_output_check_path(const char *cmd, const char *what, const char *path, sim_output_kind kind,
                          bool force, const sim_opt *opts)
{
    if (!path || sim_json_on_stdout(path) || sim_ranks_rank() > 0) return SIM_EXIT_OK;
    char why[3 * PATH_MAX];
    why_not_writable(path, kind, force, why, sizeof why);
    if (!why[0] && guard) guard(opts, path, why, sizeof why);
    if (!why[0]) return SIM_EXIT_OK;
    sim_error("%s: cannot write %s to %s: %s. Nothing was created or run", cmd, what, path, why);
    return SIM_EXIT_USAGE;
}

/* Whether path and other name one file (spelled either way). */
static bool same_file(const char *path, const char *other)
{
    char a[PATH_MAX + 256], b[PATH_MAX + 256];
    canonical(path, a, sizeof a);
    canonical(other, b, sizeof b);
    return !strcmp(a, b);
}

int sim_output_check(const char *cmd, const sim_opt *opts, char *const *inputs, int ninputs)
{
    const sim_opt *force = sim_opts_find(opts, "force");
    bool forced = force && force->kind == SIM_OPT_FLAG && *(bool *)force->dst;
    for (const sim_opt *o = opts; o->name; o++) {
        if (!o->output || o->kind != SIM_OPT_STRING) continue;
        const char *path = *(const char *const *)o->dst;
        char what[96];
        snprintf(what, sizeof what, "the %s%s file", o->name[1] ? "--" : "-", o->name);
        int rc = sim_output_check_path(cmd, what, path, o->output, forced, opts);
        if (rc) return rc;
        if (!path || sim_json_on_stdout(path) || sim_ranks_rank() > 0) continue;
        for (const sim_opt *p = opts; p != o; p++) {
            const char *q =
                p->output && p->kind == SIM_OPT_STRING ? *(const char *const *)p->dst : NULL;
            if (q && !sim_json_on_stdout(q) && same_file(path, q)) {
                sim_error("%s: --%s and --%s both name %s; give each its own file", cmd, p->name,
                          o->name, path);
                return SIM_EXIT_USAGE;
            }
        }
        struct stat st;
        for (int i = 0; i < ninputs; i++) /* an existing file given as an argument is read */
            if (stat(inputs[i], &st) == 0 && S_ISREG(st.st_mode) && same_file(path, inputs[i])) {
                sim_error("%s: %s %s is also what the command reads; write the output to "
                          "another file. Nothing was created or run",
                          cmd, what, path);
                return SIM_EXIT_USAGE;
            }
    }
    return SIM_EXIT_OK;
}
