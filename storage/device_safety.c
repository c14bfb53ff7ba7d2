/*
 * storage/device_safety.c: may this block device be written? Refuses a device when it
 * or one of its partitions is mounted (/proc/self/mountinfo), used as swap (/proc/swaps),
 * held by another driver (/sys/class/block/<dev>/holders), or cannot be claimed with
 * O_EXCL (which also catches users the first three miss); and a whole disk whose kernel
 * partitions hold a filesystem (probed at each partition's offset: libblkid on the
 * whole device sees only its start). Describes what is on a device
 * (libblkid: filesystem signature, partition table, partitions) so that the refusal
 * without --allow-destroy says what would be destroyed.
 *
 * Invariant: the O_EXCL descriptor returned stays open while appsim writes, so nobody
 * can mount the device under a running benchmark.
 */
#include "storage/target_internal.h"

#include <blkid/blkid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define MAX_PARTS 128

typedef struct devset {
    int n;
    dev_t dev[MAX_PARTS + 1];
    char name[MAX_PARTS + 1][256];
} devset;

/* The device itself and, for a whole disk, each of its partitions. */
static void collect(dev_t rdev, devset *s)
{
    char disk[64] = "", part[64] = "";
    s->n = 1;
    s->dev[0] = rdev;
    if (st_sysfs_disk_of(rdev, disk, sizeof disk, part, sizeof part) != 0) {
        snprintf(s->name[0], sizeof s->name[0], "%u:%u", major(rdev), minor(rdev));
        return;
    }
    snprintf(s->name[0], sizeof s->name[0], "%s", part[0] ? part : disk);
    if (part[0]) return;
    char dir[128];
    snprintf(dir, sizeof dir, "/sys/class/block/%s", disk);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d)) && s->n <= MAX_PARTS) {
        if (strncmp(de->d_name, disk, strlen(disk)) != 0) continue;
        char p[512], buf[64];
        snprintf(p, sizeof p, "%s/%s/partition", dir, de->d_name);
        if (access(p, F_OK) != 0) continue;
        snprintf(p, sizeof p, "%s/%s/dev", dir, de->d_name);
        unsigned ma, mi;
        if (st_sysfs_read(p, buf, sizeof buf) != 0 || sscanf(buf, "%u:%u", &ma, &mi) != 2) continue;
        s->dev[s->n] = makedev(ma, mi);
        snprintf(s->name[s->n], sizeof s->name[0], "%s", de->d_name);
        s->n++;
    }
    closedir(d);
}

static int find(const devset *s, dev_t d)
{
    for (int i = 0; i < s->n; i++)
        if (s->dev[i] == d) return i;
    return -1;
}

static int src_dev_index(const devset *s, const char *src)
{
    struct stat st;
    if (src[0] != '/' || stat(src, &st) != 0 || !S_ISBLK(st.st_mode)) return -1;
    return find(s, st.st_rdev);
}

static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] && r[3]) {
            *w++ = (char)strtol((char[]){r[1], r[2], r[3], 0}, NULL, 8);
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
}

static int check_mounts(const char *devpath, const devset *s, char *err, size_t errlen)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (!f) {
        snprintf(err, errlen,
                 "cannot read /proc/self/mountinfo to check whether %s is "
                 "mounted: %s",
                 devpath, strerror(errno));
        return SIM_EXIT_FAIL;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (!rc && getline(&line, &cap, f) > 0) {
        unsigned ma, mi;
        char mnt[4096];
        if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &ma, &mi, mnt) != 3) continue;
        char *dash = strstr(line, " - ");
        char fstype[64] = "", src[4096] = "";
        if (dash) sscanf(dash + 3, "%63s %4095s", fstype, src);
        int i = find(s, makedev(ma, mi));
        if (i < 0) i = src_dev_index(s, src);
        if (i >= 0) {
            unescape(mnt);
            snprintf(err, errlen,
                     "refusing to use block device %s: %s is mounted on %s (%s). appsim "
                     "never writes to a mounted device, with or without --allow-destroy; "
                     "unmount it first, or give a directory on it as the target",
                     devpath, s->name[i], mnt, fstype);
            rc = SIM_EXIT_USAGE;
        }
    }
    free(line);
    fclose(f);
    if (rc) return rc;
    f = fopen("/proc/swaps", "r");
    if (f) {
        char path[4096];
        while (!rc && fscanf(f, "%4095s%*[^\n]", path) == 1) {
            int i = src_dev_index(s, path);
            if (i >= 0) {
                snprintf(err, errlen,
                         "refusing to use block device %s: %s is in use as swap; swapoff it "
                         "first",
                         devpath, s->name[i]);
                rc = SIM_EXIT_USAGE;
            }
        }
        fclose(f);
    }
    return rc;
}

static int check_holders(const char *devpath, const devset *s, char *err, size_t errlen)
{
    for (int i = 0; i < s->n; i++) {
        char dir[320];
        snprintf(dir, sizeof dir, "/sys/class/block/%s/holders", s->name[i]);
        DIR *d = opendir(dir);
        if (!d) continue;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.') continue;
            snprintf(err, errlen,
                     "refusing to use block device %s: %s is held by %s (device-mapper, md "
                     "RAID or similar); remove that mapping first",
                     devpath, s->name[i], de->d_name);
            closedir(d);
            return SIM_EXIT_USAGE;
        }
        closedir(d);
    }
    return SIM_EXIT_OK;
}

int st_device_check_unused(const char *devpath, dev_t rdev, int *excl_fd, char *err, size_t errlen)
{
    *excl_fd = -1;
    devset s;
    collect(rdev, &s);
    int rc = check_mounts(devpath, &s, err, errlen);
    if (!rc) rc = check_holders(devpath, &s, err, errlen);
    if (rc) return rc;
    /* The kernel refuses an exclusive open while anything (a mount, a partition's
     * claim, another program's O_EXCL) holds the device. */
    int fd = open(devpath, O_RDONLY | O_EXCL | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen,
                 "refusing to use block device %s: it is in use (exclusive open failed: %s); "
                 "stop whatever holds it (a mount, a partition in use, another program)",
                 devpath, strerror(e));
        return e == EBUSY ? SIM_EXIT_USAGE : SIM_EXIT_FAIL;
    }
    *excl_fd = fd;
    return SIM_EXIT_OK;
}

static void append(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* "ext4 filesystem (label "x", UUID y)" for a superblock found on path, or "". */
static void describe_superblock(const char *path, char *out, size_t len)
{
    out[0] = 0;
    blkid_probe pr = blkid_new_probe_from_filename(path);
    if (!pr) return;
    blkid_probe_enable_superblocks(pr, 1);
    blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL |
                                              BLKID_SUBLKS_UUID | BLKID_SUBLKS_USAGE);
    blkid_probe_enable_partitions(pr, 0);
    if (blkid_do_safeprobe(pr) == 0) {
        const char *type = NULL, *label = NULL, *uuid = NULL;
        blkid_probe_lookup_value(pr, "TYPE", &type, NULL);
        blkid_probe_lookup_value(pr, "LABEL", &label, NULL);
        blkid_probe_lookup_value(pr, "UUID", &uuid, NULL);
        if (type) {
            append(out, len, "%s signature", type);
            if (label || uuid) {
                append(out, len, " (");
                if (label) append(out, len, "label \"%s\"%s", label, uuid ? ", " : "");
                if (uuid) append(out, len, "UUID %s", uuid);
                append(out, len, ")");
            }
        }
    }
    blkid_free_probe(pr);
}

/* The superblock libblkid finds in [offset, offset + size) of the open device fd, as
 * "ext4 signature (label ...)", or "". */
static void describe_range(int fd, uint64_t offset, uint64_t size, char *out, size_t len)
{
    out[0] = 0;
    blkid_probe pr = blkid_new_probe();
    if (!pr) return;
    if (blkid_probe_set_device(pr, fd, (blkid_loff_t)offset, (blkid_loff_t)size) == 0) {
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL |
                                                  BLKID_SUBLKS_UUID);
        blkid_probe_enable_partitions(pr, 0);
        const char *type = NULL, *label = NULL, *uuid = NULL;
        if (blkid_do_safeprobe(pr) == 0 && blkid_probe_lookup_value(pr, "TYPE", &type, NULL) == 0 &&
            type) {
            blkid_probe_lookup_value(pr, "LABEL", &label, NULL);
            blkid_probe_lookup_value(pr, "UUID", &uuid, NULL);
            append(out, len, "%s signature", type);
            if (label)
                append(out, len, " (label \"%s\")", label);
            else if (uuid)
                append(out, len, " (UUID %s)", uuid);
        }
    }
    blkid_free_probe(pr);
}

bool st_device_describe(const char *devpath, char *buf, size_t len)
{
    buf[0] = 0;
    char sb[512];
    describe_superblock(devpath, sb, sizeof sb);
    if (sb[0]) append(buf, len, "a %s", sb);

    int fd = open(devpath, O_RDONLY | O_CLOEXEC);
    blkid_probe pr = blkid_new_probe_from_filename(devpath);
    if (pr) {
        blkid_probe_enable_superblocks(pr, 0);
        blkid_probe_enable_partitions(pr, 1);
        if (blkid_do_safeprobe(pr) == 0) {
            /* Copy: the probe's value storage is reset when the list is fetched. */
            const char *v = NULL;
            char pt[32] = "";
            if (blkid_probe_lookup_value(pr, "PTTYPE", &v, NULL) == 0 && v)
                snprintf(pt, sizeof pt, "%s", v);
            const char *pttype = pt[0] ? pt : NULL;
            blkid_partlist ls = blkid_probe_get_partitions(pr);
            int n = ls ? blkid_partlist_numof_partitions(ls) : 0;
            if (pttype || n > 0) {
                append(buf, len, "%sa %s partition table with %d partition(s)",
                       buf[0] ? " and " : "", pttype ? pttype : "", n);
                for (int i = 0; i < n && i < 16; i++) {
                    blkid_partition p = blkid_partlist_get_partition(ls, i);
                    char sz[32];
                    uint64_t bytes = (uint64_t)blkid_partition_get_size(p) * 512;
                    append(buf, len, "%s #%d (%s", i ? "," : ":", blkid_partition_get_partno(p),
                           sim_format_size(bytes, sz, sizeof sz));
                    /* Probed on the whole device at the partition's range: the kernel
                     * may have registered no node for it (a table it has not read). */
                    char psb[512] = "";
                    if (fd >= 0)
                        describe_range(fd, (uint64_t)blkid_partition_get_start(p) * 512, bytes, psb,
                                       sizeof psb);
                    append(buf, len, "%s%s)", psb[0] ? ", " : "", psb);
                }
            }
        }
        blkid_free_probe(pr);
    }
    if (fd >= 0) close(fd);
    if (buf[0]) return true;
    snprintf(buf, len,
             "no filesystem signature or partition table that libblkid "
             "recognizes (it may still hold data)");
    return false;
}

static uint64_t sysfs_u64(const char *name, const char *attr)
{
    char p[320], buf[64];
    snprintf(p, sizeof p, "/sys/class/block/%s/%s", name, attr);
    if (st_sysfs_read(p, buf, sizeof buf) != 0) return 0;
    return strtoull(buf, NULL, 10);
}

/* The partitions of the table libblkid reads on the whole device fd (whether or not the
 * kernel registered them: a loop device without partition scanning, a table written
 * since) that hold a signature, listed into out as "#1 (8.00 MiB at byte 1048576: ext4
 * signature ...)". Returns how many. */
static int table_partitions_with_data(int fd, char *out, size_t len)
{
    out[0] = 0;
    blkid_probe pr = blkid_new_probe();
    if (!pr) return 0;
    int found = 0;
    if (blkid_probe_set_device(pr, fd, 0, 0) == 0) {
        blkid_probe_enable_superblocks(pr, 0);
        blkid_probe_enable_partitions(pr, 1);
        blkid_partlist ls = blkid_do_safeprobe(pr) == 0 ? blkid_probe_get_partitions(pr) : NULL;
        int n = ls ? blkid_partlist_numof_partitions(ls) : 0;
        for (int i = 0; i < n; i++) {
            blkid_partition p = blkid_partlist_get_partition(ls, i);
            uint64_t start = (uint64_t)blkid_partition_get_start(p) * 512;
            uint64_t size = (uint64_t)blkid_partition_get_size(p) * 512;
            char what[512], sz[32];
            if (size == 0) continue;
            describe_range(fd, start, size, what, sizeof what);
            if (!what[0]) continue;
            append(out, len, "%s#%d (%s at byte %llu: %s)", found++ ? ", " : "",
                   blkid_partition_get_partno(p), sim_format_size(size, sz, sizeof sz),
                   (unsigned long long)start, what);
        }
    }
    blkid_free_probe(pr);
    return found;
}

int st_device_check_partitions(const char *devpath, dev_t rdev, char *err, size_t errlen)
{
    devset s;
    collect(rdev, &s);
    int fd = open(devpath, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return SIM_EXIT_OK; /* the caller's own open reports it */
    int rc = 0;
    for (int i = 1; i < s.n && !rc; i++) {
        /* sysfs gives the kernel's view (start and size in 512-byte sectors), whether
         * it came from a partition table or was added by hand (BLKPG, addpart). */
        uint64_t start = sysfs_u64(s.name[i], "start") * 512;
        uint64_t size = sysfs_u64(s.name[i], "size") * 512;
        char what[512];
        if (size == 0) continue;
        describe_range(fd, start, size, what, sizeof what);
        if (!what[0]) continue;
        char sz[32];
        snprintf(err, errlen,
                 "refusing to use block device %s: its partition %s (%s at byte %llu) holds "
                 "data libblkid recognizes: %s. appsim writes the whole device and would "
                 "destroy it, with or without --allow-destroy or appsim's mark; if nothing on "
                 "it is needed, wipe it (wipefs -a /dev/%s) and delete the partition "
                 "(delpart, or a new empty partition table), or give a directory on that "
                 "filesystem as the target",
                 devpath, s.name[i], sim_format_size(size, sz, sizeof sz),
                 (unsigned long long)start, what, s.name[i]);
        rc = SIM_EXIT_USAGE;
    }
    char list[2048];
    if (!rc && table_partitions_with_data(fd, list, sizeof list) > 0) {
        snprintf(err, errlen,
                 "refusing to use block device %s: its partition table (which the kernel may "
                 "not have registered: no partition devices) has partitions holding data "
                 "libblkid recognizes: %s. appsim writes the whole device and would destroy "
                 "them, with or without --allow-destroy or appsim's mark; if nothing on them "
                 "is needed, erase the table (wipefs -a %s; partx or kpartx show the "
                 "partitions first if in doubt), or give a directory on such a filesystem as "
                 "the target",
                 devpath, list, devpath);
        rc = SIM_EXIT_USAGE;
    }
    close(fd);
    return rc;
}
