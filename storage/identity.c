/*
 * storage/identity.c: which drive the target is, for the result's "target" section and
 * `appsim info`. Walks file -> filesystem (mountinfo) -> partition -> whole disk (sysfs)
 * and reads what the kernel knows about the disk. Nothing is guessed: a field the
 * kernel does not expose is null and named in "unknown"; virtual disks (virtio, loop,
 * zram, ...) are flagged "virtual" with a note saying the figures describe the virtual
 * device, not the physical drive behind it.
 */
#include "storage/target_internal.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* dir/name into p; false when it does not fit (then nothing is read through it). */
static bool sysfs_path(char *p, size_t len, const char *dir, const char *name)
{
    int n = snprintf(p, len, "%s/%s", dir, name);
    return n >= 0 && (size_t)n < len;
}

static json_t *attr(const char *dir, const char *name, json_t *unknown, const char *key)
{
    char p[PATH_MAX], buf[512];
    if (sysfs_path(p, sizeof p, dir, name) && st_sysfs_read(p, buf, sizeof buf) == 0 && buf[0]) {
        /* Trim padding some drives put in model and serial strings. */
        char *s = buf;
        while (*s == ' ')
            s++;
        return json_string(s);
    }
    if (unknown) json_array_append_new(unknown, json_string(key));
    return json_null();
}

static json_t *attr_u64(const char *dir, const char *name)
{
    char p[PATH_MAX], buf[64];
    if (!sysfs_path(p, sizeof p, dir, name) || st_sysfs_read(p, buf, sizeof buf) != 0 || !buf[0])
        return json_null();
    return json_integer((json_int_t)strtoull(buf, NULL, 10));
}

/* The bracketed entry of queue/scheduler: "none [mq-deadline] kyber" -> mq-deadline. */
static json_t *scheduler(const char *disk)
{
    char p[256], buf[256];
    snprintf(p, sizeof p, "/sys/block/%s/queue/scheduler", disk);
    if (st_sysfs_read(p, buf, sizeof buf) != 0) return json_null();
    char *l = strchr(buf, '['), *r = l ? strchr(l, ']') : NULL;
    if (l && r) {
        *r = 0;
        return json_string(l + 1);
    }
    return json_string(buf);
}

/* What kind of device: from the disk name and the sysfs device path. */
static const char *transport(const char *disk, const char *devpath, bool *is_virtual)
{
    *is_virtual = false;
    if (!strncmp(disk, "nvme", 4))
        return strstr(devpath, "/virtual/") ? (*is_virtual = true, "nvme-fabrics") : "nvme";
    if (!strncmp(disk, "loop", 4)) return *is_virtual = true, "loop";
    if (!strncmp(disk, "zram", 4)) return *is_virtual = true, "zram";
    if (!strncmp(disk, "ram", 3) || !strncmp(disk, "nullb", 5)) return *is_virtual = true, "memory";
    if (!strncmp(disk, "dm-", 3)) return *is_virtual = true, "device-mapper";
    if (!strncmp(disk, "md", 2)) return *is_virtual = true, "md";
    if (strstr(devpath, "/virtio")) return *is_virtual = true, "virtio";
    if (strstr(devpath, "/usb")) return "usb";
    if (strstr(devpath, "/ata")) return "ata";
    if (strstr(devpath, "/host")) return "scsi";
    return "unknown";
}

/* Vendor, model, serial, firmware and WWID (fields that cannot be read are listed in
 * unknown). */
static void put_identity(json_t *d, const char *sys, const char *dev, json_t *unknown)
{
    json_object_set_new(d, "vendor", attr(dev, "vendor", unknown, "vendor"));
    json_object_set_new(d, "model", attr(dev, "model", unknown, "model"));
    /* Serial: NVMe and SCSI expose it under device/, virtio-blk on the disk itself. */
    json_t *serial = attr(dev, "serial", NULL, NULL);
    if (json_is_null(serial)) {
        json_decref(serial);
        serial = attr(sys, "serial", unknown, "serial");
    }
    char p[PATH_MAX + 64];
    json_object_set_new(d, "serial", serial);
    snprintf(p, sizeof p, "%s/firmware_rev", dev);
    if (access(p, F_OK) == 0)
        json_object_set_new(d, "firmware", attr(dev, "firmware_rev", unknown, "firmware"));
    else
        json_object_set_new(d, "firmware", attr(dev, "rev", unknown, "firmware"));
    json_t *wwid = attr(sys, "wwid", NULL, NULL);
    if (json_is_null(wwid)) {
        json_decref(wwid);
        wwid = attr(dev, "wwid", NULL, NULL);
    }
    json_object_set_new(d, "wwid", wwid);
}

/* Capacity and the block layer's queue settings. */
static void put_geometry(json_t *d, const char *disk, const char *sys)
{
    json_t *sectors = attr_u64(sys, "size");
    json_object_set_new(d, "capacity_bytes",
                        json_is_integer(sectors) ? json_integer(json_integer_value(sectors) * 512)
                                                 : json_null());
    json_decref(sectors);
    char q[PATH_MAX + 64];
    snprintf(q, sizeof q, "%s/queue", sys);
    json_object_set_new(d, "logical_block_size", attr_u64(q, "logical_block_size"));
    json_object_set_new(d, "physical_block_size", attr_u64(q, "physical_block_size"));
    json_object_set_new(d, "optimal_io_size", attr_u64(q, "optimal_io_size"));
    json_t *rot = attr_u64(q, "rotational");
    json_object_set_new(d, "rotational",
                        json_is_integer(rot) ? json_boolean(json_integer_value(rot)) : json_null());
    json_decref(rot);
    json_object_set_new(d, "scheduler", scheduler(disk));
    json_object_set_new(d, "nr_requests", attr_u64(q, "nr_requests"));
    json_object_set_new(d, "max_sectors_kb", attr_u64(q, "max_sectors_kb"));
    json_object_set_new(d, "discard_max_bytes", attr_u64(q, "discard_max_bytes"));
    json_object_set_new(d, "write_cache", attr(q, "write_cache", NULL, NULL));
    json_object_set_new(d, "fua", attr_u64(q, "fua"));
}

/* What a virtual disk sits on: a loop device's backing file, a dm or md device's
 * slaves. */
static void put_backing(json_t *d, const char *disk, const char *sys)
{
    if (!strncmp(disk, "loop", 4)) {
        char l[PATH_MAX + 64];
        snprintf(l, sizeof l, "%s/loop", sys);
        json_object_set_new(d, "backing_file", attr(l, "backing_file", NULL, NULL));
        json_t *dio = attr_u64(l, "dio");
        json_object_set_new(d, "loop_direct_io",
                            json_is_integer(dio) ? json_boolean(json_integer_value(dio))
                                                 : json_null());
        json_decref(dio);
    }
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/slaves", sys);
    DIR *dir = opendir(p);
    if (dir) {
        json_t *sl = json_array();
        struct dirent *de;
        while ((de = readdir(dir)))
            if (de->d_name[0] != '.') json_array_append_new(sl, json_string(de->d_name));
        closedir(dir);
        if (json_array_size(sl))
            json_object_set_new(d, "slaves", sl);
        else
            json_decref(sl);
    }
}

static json_t *disk_json(const char *disk)
{
    json_t *d = json_object();
    json_t *unknown = json_array();
    char sys[PATH_MAX], dev[PATH_MAX], real[PATH_MAX] = "";
    snprintf(sys, sizeof sys, "/sys/block/%s", disk);
    snprintf(dev, sizeof dev, "/sys/block/%s/device", disk);
    if (!realpath(sys, real)) snprintf(real, sizeof real, "%s", sys);
    bool virt;
    const char *tr = transport(disk, real, &virt);
    json_object_set_new(d, "name", json_string(disk));
    char node[300];
    snprintf(node, sizeof node, "/dev/%s", disk);
    json_object_set_new(d, "path", json_string(node));
    json_object_set_new(d, "transport", json_string(tr));
    json_object_set_new(d, "virtual", json_boolean(virt));
    put_identity(d, sys, dev, unknown);
    put_geometry(d, disk, sys);
    put_backing(d, disk, sys);
    json_t *nvme = st_nvme_identify_json(disk);
    if (nvme) json_object_set_new(d, "nvme", nvme);
    json_object_set_new(d, "unknown", unknown);
    if (virt)
        json_object_set_new(
            d, "note",
            json_sprintf("virtual %s disk: these fields describe the virtual device; the "
                         "physical drive behind it (model, serial, firmware, its caches) is "
                         "not visible from here, and its figures include the host's layers",
                         tr));
    return d;
}

json_t *st_target_json(const st_target *t)
{
    json_t *j = json_object();
    char real[PATH_MAX];
    json_object_set_new(j, "path", json_string(t->path));
    json_object_set_new(j, "realpath", realpath(t->path, real) ? json_string(real) : json_null());
    json_object_set_new(j, "kind", json_string(t->is_device ? "block_device" : "directory"));
    json_object_set_new(j, "direct_io", json_boolean(!t->buffered));
    json_object_set_new(j, "page_cache", json_boolean(t->buffered));
    json_object_set_new(j, "alignment_bytes", json_integer(t->block_size));
    json_object_set_new(j, "memory_alignment_bytes", json_integer(t->dio_mem_align));
    json_object_set_new(j, "available_bytes", json_integer((json_int_t)st_target_capacity(t)));
    if (!t->is_device) {
        json_t *fs = json_object();
        json_object_set_new(fs, "type", t->fstype[0] ? json_string(t->fstype) : json_null());
        json_object_set_new(fs, "mount_point",
                            t->mount_point[0] ? json_string(t->mount_point) : json_null());
        json_object_set_new(fs, "source",
                            t->mount_source[0] ? json_string(t->mount_source) : json_null());
        struct statvfs v;
        if (fstatvfs(t->dirfd, &v) == 0) {
            json_object_set_new(fs, "size_bytes",
                                json_integer((json_int_t)((uint64_t)v.f_blocks * v.f_frsize)));
            json_object_set_new(fs, "free_bytes",
                                json_integer((json_int_t)((uint64_t)v.f_bavail * v.f_frsize)));
            json_object_set_new(fs, "block_size", json_integer((json_int_t)v.f_bsize));
        }
        json_object_set_new(j, "filesystem", fs);
    }
    json_object_set_new(j, "partition", t->part[0] ? json_string(t->part) : json_null());
    if (t->disk[0]) {
        if (t->part[0]) {
            char p[256];
            snprintf(p, sizeof p, "/sys/block/%s/%s", t->disk, t->part);
            json_t *pj = json_object();
            json_object_set_new(pj, "name", json_string(t->part));
            json_t *start = attr_u64(p, "start"), *size = attr_u64(p, "size");
            json_object_set_new(pj, "start_bytes",
                                json_is_integer(start)
                                    ? json_integer(json_integer_value(start) * 512)
                                    : json_null());
            json_object_set_new(pj, "size_bytes",
                                json_is_integer(size) ? json_integer(json_integer_value(size) * 512)
                                                      : json_null());
            json_decref(start);
            json_decref(size);
            json_object_set_new(j, "partition", pj);
        }
        json_object_set_new(j, "device", disk_json(t->disk));
    } else {
        json_object_set_new(j, "device", json_null());
        json_object_set_new(j, "note",
                            json_sprintf("no block device under %s (filesystem %s): there is "
                                         "no drive to identify or count",
                                         t->path, t->fstype[0] ? t->fstype : "unknown"));
    }
    json_t *pre = st_precondition_record_read(t);
    json_object_set_new(j, "preconditioning", pre ? pre : json_null());
    return j;
}
