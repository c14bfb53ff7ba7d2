/*
 * kv/kv_memcg.c: a memory cgroup around an LMDB run, so that the page cache LMDB reads
 * through (mmap) is limited to --buffer and the rest is re-read from the drive.
 *
 * The process (every thread) is moved into a fresh cgroup "appsim-<pid>" with the
 * limit; page cache charged earlier to another cgroup is not moved, so the caller
 * drops the data file's cached pages after entering (kv_drop_cache). Leaving moves
 * the process back to its previous cgroup and removes the directory, and unmounts
 * the hierarchy if it was mounted here. Invariant: a kv_memcg exists only while the
 * process is inside the cgroup it names.
 */
#include "kv/kv.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

struct kv_memcg {
    int version;        /* 1 or 2 */
    char root[256];     /* hierarchy mount point */
    char path[320];     /* our cgroup */
    char previous[320]; /* cgroup directory to return to */
    bool mounted_here;
    uint64_t limit;
};

static int write_str(const char *path, const char *val, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, val, strlen(val)) != (ssize_t)strlen(val)) {
        snprintf(err, errlen, "cannot write '%s' to %s: %s", val, path, strerror(errno));
        if (fd >= 0) close(fd);
        return SIM_ERR;
    }
    close(fd);
    return SIM_OK;
}

static int read_u64(const char *path, uint64_t *v)
{
    char buf[64];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return SIM_ERR;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return SIM_ERR;
    buf[n] = 0;
    if (!strncmp(buf, "max", 3)) {
        *v = UINT64_MAX;
        return SIM_OK;
    }
    *v = strtoull(buf, NULL, 10);
    return SIM_OK;
}

static bool file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* The v2 root has the memory controller available. */
static bool v2_has_memory(const char *root)
{
    char p[300], buf[512];
    snprintf(p, sizeof p, "%s/cgroup.controllers", root);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = 0;
    for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
        if (!strcmp(t, "memory")) return true;
    return false;
}

/* Our current cgroup in hierarchy `version` (from /proc/self/cgroup), as a directory
 * under root. */
static void current_cgroup(const kv_memcg *cg, char *out, size_t len)
{
    snprintf(out, len, "%s", cg->root);
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = 0;
        const char *ctrl = c1 + 1, *rel = c2 + 1;
        bool match = cg->version == 2 ? (line[0] == '0' && !*ctrl) : strstr(ctrl, "memory") != NULL;
        if (match) {
            snprintf(out, len, "%s%s", cg->root, strcmp(rel, "/") ? rel : "");
            break;
        }
    }
    fclose(f);
}

static int find_hierarchy(kv_memcg *cg, char *err, size_t errlen)
{
    if (v2_has_memory("/sys/fs/cgroup")) {
        cg->version = 2;
        snprintf(cg->root, sizeof cg->root, "/sys/fs/cgroup");
        return SIM_OK;
    }
    if (file_exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")) {
        cg->version = 1;
        snprintf(cg->root, sizeof cg->root, "/sys/fs/cgroup/memory");
        return SIM_OK;
    }
    /* Not mounted: mount the v1 memory controller privately (root only). */
    snprintf(cg->root, sizeof cg->root, "/run/appsim-memcg-%ld", (long)getpid());
    if (mkdir(cg->root, 0700) && errno != EEXIST) {
        snprintf(err, errlen, "no memory cgroup hierarchy is mounted and %s cannot be created: %s",
                 cg->root, strerror(errno));
        return SIM_ERR;
    }
    if (mount("cgroup", cg->root, "cgroup", MS_NOSUID | MS_NODEV | MS_NOEXEC, "memory")) {
        snprintf(err, errlen, "no memory cgroup hierarchy is mounted and mounting one failed: %s",
                 strerror(errno));
        rmdir(cg->root);
        return SIM_ERR;
    }
    cg->mounted_here = true;
    cg->version = 1;
    return SIM_OK;
}

/* A run killed outright (a second Ctrl-C exits at once) leaves its empty cgroup
 * behind: remove those of processes that no longer exist. */
static void remove_stale(const char *root)
{
    DIR *dir = opendir(root);
    if (!dir) return;
    struct dirent *de;
    while ((de = readdir(dir))) {
        long pid;
        char tail;
        if (sscanf(de->d_name, "appsim-%ld%c", &pid, &tail) != 1 || pid <= 0) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", root, de->d_name);
        rmdir(p); /* fails harmlessly if it still holds tasks */
    }
    closedir(dir);
}

uint64_t kv_min_buffer(uint64_t connections)
{
    return KV_MIN_BUFFER_BASE + KV_MIN_BUFFER_PER_CONNECTION * connections;
}

kv_memcg *kv_memcg_enter(uint64_t limit_bytes, char *err, size_t errlen)
{
    kv_memcg *cg = sim_xcalloc(1, sizeof *cg);
    cg->limit = limit_bytes;
    if (find_hierarchy(cg, err, errlen)) goto fail;
    if (!cg->mounted_here) remove_stale(cg->root);
    current_cgroup(cg, cg->previous, sizeof cg->previous);
    snprintf(cg->path, sizeof cg->path, "%s/appsim-%ld", cg->root, (long)getpid());
    if (mkdir(cg->path, 0755) && errno != EEXIST) {
        snprintf(err, errlen, "cannot create the memory cgroup %s: %s%s", cg->path, strerror(errno),
                 errno == EACCES || errno == EPERM ? " (run as root)" : "");
        goto fail_mount;
    }
    char p[400], v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)limit_bytes);
    if (cg->version == 2) {
        snprintf(p, sizeof p, "%s/memory.max", cg->path);
        if (write_str(p, v, err, errlen)) goto fail_dir;
        snprintf(p, sizeof p, "%s/memory.swap.max", cg->path);
        char ignore[8];
        write_str(p, "0", ignore, sizeof ignore); /* absent without swap accounting */
    } else {
        snprintf(p, sizeof p, "%s/memory.limit_in_bytes", cg->path);
        if (write_str(p, v, err, errlen)) goto fail_dir;
    }
    snprintf(p, sizeof p, "%s/cgroup.procs", cg->path);
    snprintf(v, sizeof v, "%ld", (long)getpid());
    if (write_str(p, v, err, errlen)) goto fail_dir;
    return cg;
fail_dir:
    rmdir(cg->path);
fail_mount:
    if (cg->mounted_here) {
        umount(cg->root);
        rmdir(cg->root);
    }
fail:
    free(cg);
    return NULL;
}

const char *kv_memcg_path(const kv_memcg *cg)
{
    return cg->path;
}

json_t *kv_memcg_json(const kv_memcg *cg)
{
    char p[400];
    uint64_t peak = 0, failcnt = 0, usage = 0;
    if (cg->version == 2) {
        snprintf(p, sizeof p, "%s/memory.peak", cg->path);
        read_u64(p, &peak);
        snprintf(p, sizeof p, "%s/memory.current", cg->path);
        read_u64(p, &usage);
    } else {
        snprintf(p, sizeof p, "%s/memory.max_usage_in_bytes", cg->path);
        read_u64(p, &peak);
        snprintf(p, sizeof p, "%s/memory.usage_in_bytes", cg->path);
        read_u64(p, &usage);
        snprintf(p, sizeof p, "%s/memory.failcnt", cg->path);
        read_u64(p, &failcnt);
    }
    return json_pack("{s:b, s:s, s:s, s:I, s:I, s:I, s:I}", "applied", 1, "version",
                     cg->version == 2 ? "v2" : "v1", "path", cg->path, "limit_bytes",
                     (json_int_t)cg->limit, "usage_bytes", (json_int_t)usage, "peak_bytes",
                     (json_int_t)peak, "limit_hits", (json_int_t)failcnt);
}

void kv_memcg_leave(kv_memcg *cg)
{
    if (!cg) return;
    char p[400], v[32], err[256];
    snprintf(p, sizeof p, "%s/cgroup.procs", cg->previous);
    snprintf(v, sizeof v, "%ld", (long)getpid());
    if (write_str(p, v, err, sizeof err)) {
        /* The previous cgroup went away: the root of the hierarchy always exists. */
        snprintf(p, sizeof p, "%s/cgroup.procs", cg->root);
        if (write_str(p, v, err, sizeof err)) sim_warn("leaving the memory cgroup: %s", err);
    }
    /* The kernel may need a moment to finish moving every thread. */
    for (int i = 0; i < 50 && rmdir(cg->path) && errno == EBUSY; i++)
        usleep(20000);
    if (file_exists(cg->path))
        sim_warn("could not remove the memory cgroup %s: %s", cg->path, strerror(errno));
    if (cg->mounted_here) {
        if (umount(cg->root) == 0) rmdir(cg->root);
    }
    free(cg);
}
