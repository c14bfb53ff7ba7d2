/*
 * storage/device_mark.c: appsim's mark on a block device it was allowed to destroy.
 *
 * The first time appsim writes a device (with --allow-destroy), it leaves a 4 KiB mark
 * at the start of the device's last whole MiB, which appsim's own workloads never touch
 * (st_target_capacity ends before it). Later runs may write a device that carries the
 * mark without the flag, as long as libblkid finds no filesystem or partition table on
 * it: whatever a user puts on the device afterwards (mkfs, a partition table, LVM,
 * swap) has a signature that takes the permission away again, even though the mark at
 * the end may survive it.
 *
 * The mark is text, so that `tail -c 1M /dev/X | head -c 4096` shows what it is:
 *   appsim device mark v1
 *   device_bytes=<size of the device when marked>
 *   written_at=<UTC time>
 *   crc32=<zlib CRC-32 of the lines above, hex>
 * A mark is valid only with the right checksum and the device's current size.
 */
#include "storage/target_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define MARK_REGION (1ull << 20)
#define MARK_BYTES 4096
#define MARK_MAGIC "appsim device mark v1\n"

uint64_t st_device_mark_offset(uint64_t device_bytes)
{
    uint64_t whole = device_bytes / MARK_REGION * MARK_REGION;
    return whole >= 2 * MARK_REGION ? whole - MARK_REGION : 0;
}

/* The text before the checksum line, and its CRC. */
static uint32_t mark_crc(const char *text, size_t len)
{
    return (uint32_t)crc32(0L, (const Bytef *)text, (uInt)len);
}

bool st_device_mark_read(const char *devpath, uint64_t device_bytes, char *written_at, size_t len)
{
    if (written_at && len) written_at[0] = 0;
    uint64_t off = st_device_mark_offset(device_bytes);
    if (!off) return false;
    int fd = open(devpath, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[MARK_BYTES + 1];
    ssize_t n = pread(fd, buf, MARK_BYTES, (off_t)off);
    close(fd);
    if (n != MARK_BYTES) return false;
    buf[MARK_BYTES] = 0;
    if (strncmp(buf, MARK_MAGIC, strlen(MARK_MAGIC))) return false;
    char *crc_line = strstr(buf, "crc32=");
    if (!crc_line) return false;
    unsigned long crc = strtoul(crc_line + 6, NULL, 16);
    if (crc != mark_crc(buf, (size_t)(crc_line - buf))) return false;
    unsigned long long bytes = 0;
    const char *b = strstr(buf, "\ndevice_bytes=");
    if (!b || b > crc_line || sscanf(b, "\ndevice_bytes=%llu", &bytes) != 1 ||
        bytes != device_bytes)
        return false;
    const char *w = strstr(buf, "\nwritten_at=");
    if (w && w < crc_line && written_at && len) {
        w += strlen("\nwritten_at=");
        size_t wl = strcspn(w, "\n");
        if (wl >= len) wl = len - 1;
        memcpy(written_at, w, wl);
        written_at[wl] = 0;
    }
    return true;
}

int st_device_mark_write(const char *devpath, uint64_t device_bytes, char *err, size_t errlen)
{
    uint64_t off = st_device_mark_offset(device_bytes);
    if (!off) return SIM_EXIT_OK; /* smaller than 2 MiB: no room for a mark, always the flag */
    char *buf = st_alloc_aligned(MARK_BYTES);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return SIM_EXIT_FAIL;
    }
    memset(buf, 0, MARK_BYTES);
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int n = snprintf(buf, MARK_BYTES, MARK_MAGIC "device_bytes=%llu\nwritten_at=%s\n",
                     (unsigned long long)device_bytes, when);
    snprintf(buf + n, MARK_BYTES - (size_t)n, "crc32=%08x\n", mark_crc(buf, (size_t)n));
    int rc = 0;
    int fd = open(devpath, O_WRONLY | O_CLOEXEC | O_DIRECT);
    if (fd < 0 || pwrite(fd, buf, MARK_BYTES, (off_t)off) != MARK_BYTES || fdatasync(fd)) {
        snprintf(err, errlen, "cannot write appsim's mark on %s: %s", devpath, strerror(errno));
        rc = SIM_EXIT_FAIL;
    }
    if (fd >= 0) close(fd);
    st_free_aligned(buf);
    return rc;
}
