/*
 * storage/precondition_record.c: what `appsim precondition` did, kept with the target
 * so that every later result on it can say so (st_target_json "preconditioning").
 *
 * Block device: one 4 KiB block right after appsim's mark, inside the device's last
 * MiB that no workload touches (device_mark.c); read only while the mark is valid, so
 * a device that was reformatted since shows no stale record. Text, like the mark:
 *   appsim precondition v1
 *   device_bytes=<size of the device>
 *   {JSON on one line}
 *   crc32=<CRC-32 of everything above, hex>
 * then zeros. Directory: the manifest-listed file "appsim-precondition.json", the JSON
 * padded with spaces to 4 KiB so that it is written with O_DIRECT like every other
 * target file (cleanup removes it with the rest). Both are rewritten in place, one
 * block, fdatasync'ed.
 */
#include "storage/target_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define RECORD_BYTES 4096
#define RECORD_MAGIC "appsim precondition v1\n"

static uint64_t device_record_offset(const st_target *t)
{
    uint64_t mark = st_device_mark_offset(t->device_bytes);
    return mark ? mark + RECORD_BYTES : 0;
}

static uint32_t text_crc(const char *text, size_t len)
{
    return (uint32_t)crc32(0L, (const Bytef *)text, (uInt)len);
}

/* The block's text for the record, 0 when it does not fit. */
static size_t format_block(const st_target *t, const char *json, char *block)
{
    memset(block, 0, RECORD_BYTES);
    int n;
    if (t->is_device) {
        n = snprintf(block, RECORD_BYTES, RECORD_MAGIC "device_bytes=%llu\n%s\n",
                     (unsigned long long)t->device_bytes, json);
        if (n < 0 || n + 16 >= RECORD_BYTES) return 0;
        n += snprintf(block + n, RECORD_BYTES - (size_t)n, "crc32=%08x\n",
                      text_crc(block, (size_t)n));
    } else {
        n = snprintf(block, RECORD_BYTES, "%s", json);
        if (n < 0 || n + 1 >= RECORD_BYTES) return 0;
        memset(block + n, ' ', RECORD_BYTES - 1 - (size_t)n);
        block[RECORD_BYTES - 1] = '\n';
    }
    return (size_t)n;
}

static int write_block(st_target *t, const char *block, char *err, size_t errlen)
{
    int fd = -1, rc = 0;
    uint64_t off = 0;
    if (t->is_device) {
        off = device_record_offset(t);
        /* The mark is written when the device is first opened for writing. */
        if (!off || !t->marked) {
            snprintf(err, errlen,
                     "%s has no appsim mark to keep the preconditioning record "
                     "beside (devices under 2 MiB have none)",
                     t->path);
            return SIM_EXIT_FAIL;
        }
        fd = open(t->path, O_WRONLY | O_CLOEXEC | O_DIRECT);
        if (fd < 0) rc = -errno;
    } else {
        rc = st_target_create_file(t, ST_PRECONDITION_RECORD, 0, &fd, err, errlen);
        if (rc) return rc;
    }
    if (!rc) {
        ssize_t w = pwrite(fd, block, RECORD_BYTES, (off_t)off);
        /* a write that fits nothing returns 0 or a short count, with no errno */
        rc = w == RECORD_BYTES ? 0 : w < 0 ? -errno : -ENOSPC;
        if (!rc && fdatasync(fd)) rc = -errno;
        /* fail-stop (sim/fault.c): the record is written on the target like the data */
        if (rc) sim_fault_note(-rc, "writing the preconditioning record on %s", t->path);
    }
    if (fd >= 0) close(fd);
    if (rc) {
        snprintf(err, errlen, "cannot write the preconditioning record on %s: %s", t->path,
                 strerror(rc < 0 ? -rc : EIO));
        return SIM_EXIT_FAIL;
    }
    return SIM_EXIT_OK;
}

int st_precondition_record_write(st_target *t, const json_t *rec, char *err, size_t errlen)
{
    char *json = json_dumps(rec, JSON_COMPACT | JSON_REAL_PRECISION(10));
    char *block = st_alloc_aligned(RECORD_BYTES);
    int rc = 0;
    if (!json || !block) {
        snprintf(err, errlen, "out of memory");
        rc = SIM_EXIT_FAIL;
    } else if (!format_block(t, json, block)) {
        snprintf(err, errlen, "the preconditioning record does not fit in %d bytes", RECORD_BYTES);
        rc = SIM_EXIT_FAIL;
    } else {
        rc = write_block(t, block, err, errlen);
    }
    free(json);
    st_free_aligned(block);
    return rc;
}

/* The JSON text inside a device's record block, validated; NULL when none. */
static const char *device_json_text(const st_target *t, char *block)
{
    if (strncmp(block, RECORD_MAGIC, strlen(RECORD_MAGIC))) return NULL;
    block[RECORD_BYTES - 1] = 0;
    char *crc_line = strstr(block, "\ncrc32=");
    if (!crc_line) return NULL;
    crc_line++;
    if (strtoul(crc_line + 6, NULL, 16) != text_crc(block, (size_t)(crc_line - block))) return NULL;
    unsigned long long bytes = 0;
    const char *p = block + strlen(RECORD_MAGIC);
    if (sscanf(p, "device_bytes=%llu\n", &bytes) != 1 || bytes != t->device_bytes) return NULL;
    p = strchr(p, '\n');
    if (!p) return NULL;
    crc_line[-1] = 0; /* the JSON line ends before the checksum line */
    return p + 1;
}

json_t *st_precondition_record_read(const st_target *t)
{
    int fd;
    uint64_t off = 0;
    if (t->is_device) {
        /* The mark is read here too: a target opened read-only (info) has not. */
        off = device_record_offset(t);
        if (!off || !st_device_mark_read(t->path, t->device_bytes, NULL, 0)) return NULL;
        fd = open(t->path, O_RDONLY | O_CLOEXEC);
    } else {
        fd = openat(t->dirfd, ST_PRECONDITION_RECORD, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) return NULL;
    char block[RECORD_BYTES + 1];
    ssize_t n = pread(fd, block, RECORD_BYTES, (off_t)off);
    close(fd);
    if (n <= 0) return NULL;
    block[n] = 0;
    const char *text = block;
    if (t->is_device && (n != RECORD_BYTES || !(text = device_json_text(t, block)))) return NULL;
    /* A directory's record is appsim's only if the manifest lists it. */
    if (!t->is_device && !st_manifest_contains(t, ST_PRECONDITION_RECORD)) return NULL;
    json_t *j = json_loads(text, 0, NULL);
    if (!json_is_object(j)) {
        json_decref(j);
        return NULL;
    }
    return j;
}
