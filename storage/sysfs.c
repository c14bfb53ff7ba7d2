/*
 * storage/sysfs.c: small readers for sysfs attributes and /proc/self/mountinfo, used to
 * walk from a target to its filesystem, partition and whole disk. All return -1 (and
 * leave outputs empty) when the information is absent rather than guessing.
 */
#include "storage/target_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int st_sysfs_read(const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return SIM_ERR;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0) {
        buf[0] = 0;
        return SIM_ERR;
    }
    buf[n] = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\0'))
        buf[--n] = 0;
    return SIM_OK;
}

int st_sysfs_disk_of(dev_t dev, char *disk, size_t disklen, char *part, size_t partlen)
{
    disk[0] = part[0] = 0;
    if (major(dev) == 0) return SIM_ERR; /* anonymous device (tmpfs, overlay, btrfs subvolume) */
    char link[64], real[PATH_MAX];
    snprintf(link, sizeof link, "/sys/dev/block/%u:%u", major(dev), minor(dev));
    if (!realpath(link, real)) return SIM_ERR;
    char probe[PATH_MAX + 16];
    snprintf(probe, sizeof probe, "%s/partition", real);
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", real);
    const char *name = basename(copy);
    if (access(probe, F_OK) == 0) {
        snprintf(part, partlen, "%s", name);
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", dirname(real));
        snprintf(disk, disklen, "%s", basename(parent));
    } else {
        snprintf(disk, disklen, "%s", name);
    }
    return SIM_OK;
}

/* Reads /sys/dev/block/MAJ:MIN/<attr> of dev; SIM_ERR naming the file in err. */
static int read_dev_attr(dev_t dev, const char *attr, char *buf, size_t len, char *err,
                         size_t errlen)
{
    char p[128];
    snprintf(p, sizeof p, "/sys/dev/block/%u:%u/%s", major(dev), minor(dev), attr);
    if (st_sysfs_read(p, buf, len) == SIM_OK) return SIM_OK;
    snprintf(err, errlen, "cannot read %s", p);
    return SIM_ERR;
}

int st_sysfs_partition(dev_t dev, dev_t *disk, uint64_t *start, uint64_t *sectors, char *err,
                       size_t errlen)
{
    *disk = dev;
    *start = *sectors = 0;
    char p[128], buf[64];
    snprintf(p, sizeof p, "/sys/dev/block/%u:%u/partition", major(dev), minor(dev));
    if (access(p, F_OK) != 0) return SIM_OK; /* a whole disk */
    if (read_dev_attr(dev, "start", buf, sizeof buf, err, errlen)) return SIM_ERR;
    *start = strtoull(buf, NULL, 10);
    if (read_dev_attr(dev, "size", buf, sizeof buf, err, errlen)) return SIM_ERR;
    *sectors = strtoull(buf, NULL, 10);
    unsigned ma, mi;
    if (read_dev_attr(dev, "../dev", buf, sizeof buf, err, errlen)) return SIM_ERR;
    if (sscanf(buf, "%u:%u", &ma, &mi) != 2) {
        snprintf(err, errlen, "cannot find the disk of partition %u:%u", major(dev), minor(dev));
        return SIM_ERR;
    }
    *disk = makedev(ma, mi);
    return SIM_OK;
}

static void unescape_octal(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] && r[3]) {
            *w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
}

static bool is_prefix(const char *mnt, const char *path)
{
    size_t n = strlen(mnt);
    if (!strcmp(mnt, "/")) return true;
    return !strncmp(mnt, path, n) && (path[n] == 0 || path[n] == '/');
}

int st_mount_of(const char *path, dev_t dev, char *fstype, size_t fslen, char *mnt, size_t mntlen,
                char *source, size_t srclen)
{
    fstype[0] = mnt[0] = source[0] = 0;
    char real[PATH_MAX];
    if (!realpath(path, real)) return SIM_ERR;
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (!f) return SIM_ERR;
    char *line = NULL;
    size_t cap = 0;
    size_t best = 0;
    bool best_devmatch = false;
    while (getline(&line, &cap, f) > 0) {
        unsigned ma, mi;
        char m[4096];
        if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &ma, &mi, m) != 3) continue;
        unescape_octal(m);
        if (!is_prefix(m, real)) continue;
        bool devmatch = makedev(ma, mi) == dev;
        size_t len = strlen(m);
        /* Prefer the mount whose device matches, then the deepest mount point. */
        if ((devmatch && !best_devmatch) || (devmatch == best_devmatch && len >= best)) {
            best = len;
            best_devmatch = devmatch;
            snprintf(mnt, mntlen, "%s", m);
            char *dash = strstr(line, " - ");
            char fs[64] = "", src[4096] = "";
            if (dash) sscanf(dash + 3, "%63s %4095s", fs, src);
            unescape_octal(src);
            snprintf(fstype, fslen, "%s", fs);
            snprintf(source, srclen, "%s", src);
        }
    }
    free(line);
    fclose(f);
    return mnt[0] ? SIM_OK : SIM_ERR;
}
