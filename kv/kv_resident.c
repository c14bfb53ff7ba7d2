/*
 * kv/kv_resident.c: how much RAM answered for an LMDB file, and the page faults the
 * process took.
 *
 * Residency is mincore() over a read-only mapping of the file (what fincore reports):
 * the pages of the file in the page cache, whoever mapped them. Page faults come from
 * getrusage(RUSAGE_SELF); a major fault is a read from the drive into a mapping,
 * which is how LMDB reads a page the cache does not hold.
 */
#include "kv/kv.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

int64_t kv_resident_bytes(const char *path, uint64_t *file_bytes)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) || st.st_size <= 0) {
        close(fd);
        if (file_bytes) *file_bytes = 0;
        return st.st_size == 0 ? 0 : -1;
    }
    size_t len = (size_t)st.st_size;
    if (file_bytes) *file_bytes = len;
    void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return -1;
    long page = sysconf(_SC_PAGESIZE);
    size_t pages = (len + (size_t)page - 1) / (size_t)page;
    unsigned char *vec = sim_xmalloc(pages);
    int64_t res = -1;
    if (mincore(map, len, vec) == 0) {
        res = 0;
        for (size_t i = 0; i < pages; i++)
            if (vec[i] & 1) res += page;
        if (res > (int64_t)len) res = (int64_t)len;
    }
    free(vec);
    munmap(map, len);
    return res;
}

int kv_drop_cache(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return SIM_ERR;
    int rc = fdatasync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) ? SIM_ERR : SIM_OK;
    close(fd);
    return rc;
}

typedef struct fault_snap {
    uint64_t major, minor;
} fault_snap;

static void *pf_snapshot(void *ctx)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru)) return NULL;
    fault_snap *s = sim_xmalloc(sizeof *s);
    s->major = (uint64_t)ru.ru_majflt;
    s->minor = (uint64_t)ru.ru_minflt;
    return s;
}

static json_t *pf_delta(void *ctx, const void *from, const void *to, double seconds, uint64_t units)
{
    const fault_snap *a = from, *b = to;
    uint64_t maj = b->major - a->major, min = b->minor - a->minor;
    json_t *j = json_pack("{s:I, s:I, s:f, s:f}", "major", (json_int_t)maj, "minor",
                          (json_int_t)min, "major_per_s", seconds > 0 ? maj / seconds : 0.0,
                          "minor_per_s", seconds > 0 ? min / seconds : 0.0);
    if (units)
        json_object_set_new(
            j, "per_unit",
            json_pack("{s:f, s:f}", "major", (double)maj / units, "minor", (double)min / units));
    json_object_set_new(j, "source", json_string("getrusage(RUSAGE_SELF), whole process"));
    return j;
}

static void pf_free(void *ctx, void *snap)
{
    free(snap);
}

const sim_probe_ops kv_page_fault_probe = {
    .name = "page_faults",
    .snapshot = pf_snapshot,
    .delta = pf_delta,
    .free_snapshot = pf_free,
};
