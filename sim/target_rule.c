/*
 * sim/target_rule.c: may a missing --target be created? One rule for every command
 * (storage's st_target_open, and suite before its first step): only the last part of
 * the path, under a parent that is a directory, never under /dev.
 */
#include "sim/sim.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int sim_target_creatable(const char *path, char *why, size_t whylen)
{
    if (!strncmp(path, "/dev/", 5)) {
        snprintf(why, whylen,
                 "%s does not exist: a path under /dev is a device, and this one is not there "
                 "(`lsblk` lists the block devices)",
                 path);
        return SIM_ERR;
    }
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", path);
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/')
        parent[--n] = 0;
    char *slash = strrchr(parent, '/');
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else if (slash == parent)
        parent[1] = 0;
    else
        *slash = 0;
    struct stat st;
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, whylen,
                 "%s does not exist, nor does its parent directory %s: appsim creates only the "
                 "last part of a target's path; create the parent first (or check the path)",
                 path, parent);
        return SIM_ERR;
    }
    return SIM_OK;
}
