/*
 * trace/io/io_profiles.c: the built-in profiles of `appsim io`: the vdbench battery the
 * review labs publish (reference methodology section 3), in their order. The first
 * nine are the labs' own definitions. The six database profiles are not published in
 * detail; they are built from what the database vendors document about the I/O of
 * SQL Server and Oracle (page and block sizes, read-ahead and multiblock reads, log
 * writes) and say so in every result. docs/io.md gives each definition and its sources.
 */
#include "trace/io/io_internal.h"

#include <string.h>

#define SQL_NOTE                                                                                   \
    "approximation: the labs do not publish their SQL profile; sizes from SQL Server's 8 KiB "     \
    "pages, 64 KiB extents, read-ahead and log writes (docs/io.md)"
#define ORACLE_NOTE                                                                                \
    "approximation: the labs do not publish their Oracle profile; sizes from Oracle's 8 KiB "      \
    "blocks, 1 MiB multiblock reads and redo writes (docs/io.md)"
/* SQL Server: 8 KiB page I/O, 64 KiB extent reads and gathered writes, read-ahead up to
 * 256 KiB here, small log writes. */
#define SQL_SIZES "(4k,5,8k,70,64k,20,256k,5)"
/* Oracle: 8 KiB single-block I/O, 16 KiB redo writes, 128 KiB gathered DBWR writes and
 * partial multiblock reads, 1 MiB full multiblock reads. */
#define ORACLE_SIZES "(8k,80,16k,5,128k,10,1m,5)"

static const io_profile profiles[] = {
    {"4k-random-read", "4 KiB random reads, 128 threads", "4k", 100, 100, 128, NULL},
    {"4k-random-write", "4 KiB random writes, 128 threads", "4k", 0, 100, 128, NULL},
    {"16k-sequential-read", "16 KiB sequential reads, 32 threads", "16k", 100, 0, 32, NULL},
    {"16k-sequential-write", "16 KiB sequential writes, 16 threads", "16k", 0, 0, 16, NULL},
    {"64k-sequential-read", "64 KiB sequential reads, 32 threads", "64k", 100, 0, 32, NULL},
    {"64k-sequential-write", "64 KiB sequential writes, 16 threads", "64k", 0, 0, 16, NULL},
    {"4k-random-70-30", "4 KiB random, 70 % reads, 64 threads", "4k", 70, 100, 64, NULL},
    {"8k-random-70-30", "8 KiB random, 70 % reads, 64 threads", "8k", 70, 100, 64, NULL},
    {"16k-random-70-30", "16 KiB random, 70 % reads, 64 threads", "16k", 70, 100, 64, NULL},
    {"sql", "SQL Server-like mix, 70 % reads, 80 % random, 64 threads", SQL_SIZES, 70, 80, 64,
     SQL_NOTE},
    {"sql-90-10", "SQL Server-like mix, 90 % reads, 80 % random, 64 threads", SQL_SIZES, 90, 80, 64,
     SQL_NOTE},
    {"sql-80-20", "SQL Server-like mix, 80 % reads, 80 % random, 64 threads", SQL_SIZES, 80, 80, 64,
     SQL_NOTE},
    {"oracle", "Oracle-like mix, 70 % reads, 80 % random, 64 threads", ORACLE_SIZES, 70, 80, 64,
     ORACLE_NOTE},
    {"oracle-90-10", "Oracle-like mix, 90 % reads, 80 % random, 64 threads", ORACLE_SIZES, 90, 80,
     64, ORACLE_NOTE},
    {"oracle-80-20", "Oracle-like mix, 80 % reads, 80 % random, 64 threads", ORACLE_SIZES, 80, 80,
     64, ORACLE_NOTE},
};

#define NPROFILES (sizeof profiles / sizeof *profiles)

const io_profile *const *io_profiles(void)
{
    static const io_profile *list[NPROFILES + 1];
    if (!list[0])
        for (size_t i = 0; i < NPROFILES; i++)
            list[i] = &profiles[i];
    return list;
}

const io_profile *io_profile_find(const char *name)
{
    for (size_t i = 0; i < NPROFILES; i++)
        if (!strcmp(profiles[i].name, name)) return &profiles[i];
    return NULL;
}

int io_profile_spec(const io_profile *p, io_spec *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (io_xfer_parse(p->xfer, &out->xfer, err, errlen)) return SIM_ERR;
    out->read_pct = p->read_pct;
    out->random_pct = p->random_pct;
    out->threads = p->threads;
    return SIM_OK;
}

json_t *io_spec_json(const io_spec *s)
{
    json_t *j = io_xfer_json(&s->xfer);
    json_object_set_new(j, "read_pct", json_real(s->read_pct));
    json_object_set_new(j, "random_pct", json_real(s->random_pct));
    json_object_set_new(j, "threads", json_integer(s->threads));
    if (s->align)
        json_object_set_new(j, "align_bytes", json_integer(s->align));
    else
        json_object_set_new(j, "align", json_string("transfer size"));
    return j;
}
