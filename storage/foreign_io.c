/*
 * storage/foreign_io.c: how much of a disk's traffic was not appsim's own. The block
 * counters of /sys/block/<disk>/stat count every process; the kernel's per-process
 * accounting (/proc/self/io: read_bytes, write_bytes, cancelled_write_bytes) counts the
 * bytes this process made the block layer move, over all its threads, io_uring's
 * workers included. The disk's bytes beyond appsim's own, per direction, are foreign:
 * another process, or the filesystem's own journal and metadata writes, which the
 * kernel charges to no process. Own bytes sent to other disks can only hide foreign
 * bytes, never invent them, so the figure is a lower bound.
 */
#include "storage/storage.h"

#include <stdio.h>
#include <string.h>

/* The keys of /proc/<pid>/io (Documentation/filesystems/proc.rst); a missing key
 * (kernel without task I/O accounting) makes the whole reading unusable. */
int st_own_io_parse(const char *text, st_own_io *out)
{
    static const char *const keys[] = {"read_bytes:", "write_bytes:", "cancelled_write_bytes:"};
    uint64_t *dst[] = {&out->read_bytes, &out->write_bytes, &out->cancelled_write_bytes};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *p = text;
        size_t n = strlen(keys[i]);
        /* Only at a line start: "write_bytes:" is also the tail of
         * "cancelled_write_bytes:". */
        while ((p = strstr(p, keys[i])) && p != text && p[-1] != '\n')
            p += n;
        unsigned long long v;
        if (!p || sscanf(p + n, "%llu", &v) != 1) return -1;
        *dst[i] = v;
    }
    return 0;
}

int st_own_io_read(st_own_io *out)
{
    FILE *f = fopen("/proc/self/io", "r");
    if (!f) return -1;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return st_own_io_parse(buf, out);
}

static uint64_t beyond(uint64_t disk, uint64_t own)
{
    return disk > own ? disk - own : 0;
}

st_foreign_io st_foreign_io_judge(uint64_t disk_read_bytes, uint64_t disk_write_bytes,
                                  const st_own_io *own_from, const st_own_io *own_to)
{
    uint64_t own_r = own_to->read_bytes - own_from->read_bytes;
    /* Dirtied then truncated before writeback never reached the disk. */
    uint64_t own_w = beyond(own_to->write_bytes - own_from->write_bytes,
                            own_to->cancelled_write_bytes - own_from->cancelled_write_bytes);
    return st_foreign_io_of(disk_read_bytes, disk_write_bytes, own_r, own_w);
}

st_foreign_io st_foreign_io_of(uint64_t disk_read_bytes, uint64_t disk_write_bytes, uint64_t own_r,
                               uint64_t own_w)
{
    st_foreign_io f = {0};
    f.own_read_bytes = own_r;
    f.own_write_bytes = own_w;
    f.read_bytes = beyond(disk_read_bytes, own_r);
    f.write_bytes = beyond(disk_write_bytes, own_w);
    uint64_t disk = disk_read_bytes + disk_write_bytes;
    f.share = disk ? (double)(f.read_bytes + f.write_bytes) / (double)disk : 0;
    f.warn = f.share > ST_FOREIGN_IO_WARN_SHARE &&
             f.read_bytes + f.write_bytes >= ST_FOREIGN_IO_WARN_MIN_BYTES;
    return f;
}
