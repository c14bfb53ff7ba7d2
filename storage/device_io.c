/*
 * storage/device_io.c: the "device_io" probe: the kernel's block-layer counters of the
 * whole disk under the target (/sys/block/<disk>/stat), sampled by sim/ at phase
 * boundaries and per interval, reported as deltas. This is what the drive was actually
 * asked to do, including I/O from other processes on the same disk, and what each
 * transaction cost it. Each snapshot also reads appsim's own I/O (/proc/self/io), so
 * that the delta can say how much of the disk's traffic was not appsim's
 * (foreign_io.c) and warn when the per-transaction figures are not this run's alone.
 *
 * Field order of the stat file (Documentation/block/stat.rst): read I/Os, read merges,
 * read sectors, read ticks (ms), write I/Os, write merges, write sectors, write ticks,
 * in flight, io ticks, time in queue, discard I/Os, discard merges, discard sectors,
 * discard ticks, flush I/Os, flush ticks. Older kernels stop after 11 or 15 fields;
 * missing ones read as absent, not zero.
 */
#include "storage/target_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    F_RD_IOS,
    F_RD_MERGES,
    F_RD_SECT,
    F_RD_TICKS,
    F_WR_IOS,
    F_WR_MERGES,
    F_WR_SECT,
    F_WR_TICKS,
    F_INFLIGHT,
    F_IO_TICKS,
    F_QUEUE_TICKS,
    F_DC_IOS,
    F_DC_MERGES,
    F_DC_SECT,
    F_DC_TICKS,
    F_FL_IOS,
    F_FL_TICKS,
    F_COUNT
};

typedef struct dio_snap {
    int nfields;
    uint64_t f[F_COUNT];
    bool have_own; /* own: this process's I/O at the same moment */
    st_own_io own;
} dio_snap;

static void *dio_snapshot(void *ctx)
{
    const st_target *t = ctx;
    if (!t || !t->disk[0]) return NULL;
    char p[128], buf[512];
    snprintf(p, sizeof p, "/sys/block/%s/stat", t->disk);
    if (st_sysfs_read(p, buf, sizeof buf) != 0) return NULL;
    dio_snap *s = sim_xcalloc(1, sizeof *s);
    char *c = buf, *end;
    while (s->nfields < F_COUNT) {
        uint64_t v = strtoull(c, &end, 10);
        if (end == c) break;
        s->f[s->nfields++] = v;
        c = end;
    }
    if (s->nfields < 11) {
        free(s);
        return NULL;
    }
    s->have_own = st_own_io_read(&s->own) == 0;
    return s;
}

static void dio_free(void *ctx, void *snap)
{
    free(snap);
}

static uint64_t d(const dio_snap *a, const dio_snap *b, int i)
{
    return b->f[i] >= a->f[i] ? b->f[i] - a->f[i] : 0; /* counters never go back */
}

/* Average device latency per op in microseconds from tick (ms) and op deltas. */
static json_t *avg_us(uint64_t ticks_ms, uint64_t ops)
{
    return ops ? json_real((double)ticks_ms * 1000.0 / (double)ops) : json_null();
}

static json_t *per_unit(uint64_t v, uint64_t units)
{
    return json_real((double)v / (double)units);
}

/* The foreign bytes, their share and the warning; `whose` says whose bytes were counted
 * as appsim's when not this process's alone. */
static void put_foreign(json_t *j, const st_foreign_io *f, uint64_t rb, uint64_t wb,
                        const char *whose)
{
    json_object_set_new(j, "foreign_read_bytes", json_integer((json_int_t)f->read_bytes));
    json_object_set_new(j, "foreign_write_bytes", json_integer((json_int_t)f->write_bytes));
    json_object_set_new(j, "foreign_io_share", json_real(f->share));
    json_object_del(j, "warning");
    if (f->warn)
        json_object_set_new(j, "warning",
                            json_sprintf("%.0f %% of the bytes %s moved (%.1f of %.1f MiB) were "
                                         "not appsim's%s: another process (or the filesystem's "
                                         "journal) used the disk, so these device figures are "
                                         "not this run's alone",
                                         f->share * 100,
                                         json_string_value(json_object_get(j, "disk")),
                                         (double)(f->read_bytes + f->write_bytes) / 1048576.0,
                                         (double)(rb + wb) / 1048576.0, whose ? whose : ""));
}

/* The disk's bytes against appsim's own; null figures when /proc/self/io is missing. */
static void add_foreign(json_t *j, const dio_snap *a, const dio_snap *b, uint64_t rb, uint64_t wb)
{
    static const char *const keys[] = {"own_read_bytes", "own_write_bytes", "foreign_read_bytes",
                                       "foreign_write_bytes", "foreign_io_share"};
    if (!a->have_own || !b->have_own) {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            json_object_set_new(j, keys[i], json_null());
        return;
    }
    st_foreign_io f = st_foreign_io_judge(rb, wb, &a->own, &b->own);
    json_object_set_new(j, keys[0], json_integer((json_int_t)f.own_read_bytes));
    json_object_set_new(j, keys[1], json_integer((json_int_t)f.own_write_bytes));
    put_foreign(j, &f, rb, wb, NULL);
}

static json_t *dio_delta(void *ctx, const void *from, const void *to, double seconds,
                         uint64_t units)
{
    const st_target *t = ctx;
    const dio_snap *a = from, *b = to;
    bool ext = a->nfields >= 15 && b->nfields >= 15;
    bool fl = a->nfields >= 17 && b->nfields >= 17;
    uint64_t rd = d(a, b, F_RD_IOS), wr = d(a, b, F_WR_IOS);
    uint64_t rb = d(a, b, F_RD_SECT) * 512, wb = d(a, b, F_WR_SECT) * 512;
    uint64_t dc = ext ? d(a, b, F_DC_IOS) : 0, db = ext ? d(a, b, F_DC_SECT) * 512 : 0;
    uint64_t fls = fl ? d(a, b, F_FL_IOS) : 0;
    json_t *j = json_object();
    json_object_set_new(j, "disk", json_string(t->disk));
    json_object_set_new(j, "source", json_sprintf("/sys/block/%s/stat", t->disk));
    json_object_set_new(j, "note",
                        json_string("block-layer counters of the whole disk: they include "
                                    "I/O by other processes on the same disk (foreign_*)"));
    json_object_set_new(j, "seconds", json_real(seconds));
    json_object_set_new(j, "reads", json_integer((json_int_t)rd));
    json_object_set_new(j, "writes", json_integer((json_int_t)wr));
    json_object_set_new(j, "read_bytes", json_integer((json_int_t)rb));
    json_object_set_new(j, "write_bytes", json_integer((json_int_t)wb));
    json_object_set_new(j, "read_merges", json_integer((json_int_t)d(a, b, F_RD_MERGES)));
    json_object_set_new(j, "write_merges", json_integer((json_int_t)d(a, b, F_WR_MERGES)));
    json_object_set_new(j, "flushes", fl ? json_integer((json_int_t)fls) : json_null());
    json_object_set_new(j, "discards", ext ? json_integer((json_int_t)dc) : json_null());
    json_object_set_new(j, "discard_bytes", ext ? json_integer((json_int_t)db) : json_null());
    uint64_t io_ms = d(a, b, F_IO_TICKS);
    json_object_set_new(j, "io_time_ms", json_integer((json_int_t)io_ms));
    json_object_set_new(j, "queue_time_ms", json_integer((json_int_t)d(a, b, F_QUEUE_TICKS)));
    json_object_set_new(j, "utilization",
                        seconds > 0 ? json_real((double)io_ms / (seconds * 1000.0)) : json_null());
    json_object_set_new(j, "read_latency_avg_us", avg_us(d(a, b, F_RD_TICKS), rd));
    json_object_set_new(j, "write_latency_avg_us", avg_us(d(a, b, F_WR_TICKS), wr));
    json_object_set_new(j, "discard_latency_avg_us",
                        ext ? avg_us(d(a, b, F_DC_TICKS), dc) : json_null());
    json_object_set_new(j, "flush_latency_avg_us",
                        fl ? avg_us(d(a, b, F_FL_TICKS), fls) : json_null());
    if (seconds > 0) {
        json_object_set_new(j, "read_iops", json_real((double)rd / seconds));
        json_object_set_new(j, "write_iops", json_real((double)wr / seconds));
        json_object_set_new(j, "read_bytes_per_s", json_real((double)rb / seconds));
        json_object_set_new(j, "write_bytes_per_s", json_real((double)wb / seconds));
    }
    add_foreign(j, a, b, rb, wb);
    if (units > 0) {
        /* Only per-unit figures inside per_unit (readers iterate it); the count beside. */
        json_object_set_new(j, "units", json_integer((json_int_t)units));
        json_t *u = json_object();
        json_object_set_new(u, "reads", per_unit(rd, units));
        json_object_set_new(u, "writes", per_unit(wr, units));
        json_object_set_new(u, "read_bytes", per_unit(rb, units));
        json_object_set_new(u, "write_bytes", per_unit(wb, units));
        json_object_set_new(u, "flushes", fl ? per_unit(fls, units) : json_null());
        json_object_set_new(j, "per_unit", u);
    }
    return j;
}

static uint64_t u64(const json_t *j, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(j, key));
    return v > 0 ? (uint64_t)v : 0;
}

/* True when section a and b are on the same host and disk, with own bytes to count. */
static bool same_disk(const json_t *a, const char *ha, const json_t *b, const char *hb)
{
    const char *da = json_string_value(json_object_get(a, "disk"));
    const char *db = json_string_value(json_object_get(b, "disk"));
    return da && db && ha && hb && !strcmp(da, db) && !strcmp(ha, hb) &&
           json_is_integer(json_object_get(a, "own_read_bytes")) &&
           json_is_integer(json_object_get(b, "own_read_bytes"));
}

void st_device_io_ranks_adjust(json_t *const *sections, const char *const *hosts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_t *j = sections[i];
        if (!json_is_object(j)) continue;
        uint64_t own_r = 0, own_w = 0;
        int sharing = 0;
        for (size_t k = 0; k < n; k++) {
            if (!json_is_object(sections[k]) || !same_disk(j, hosts[i], sections[k], hosts[k]))
                continue;
            own_r += u64(sections[k], "own_read_bytes");
            own_w += u64(sections[k], "own_write_bytes");
            sharing++;
        }
        if (sharing < 2) continue;
        uint64_t rb = u64(j, "read_bytes"), wb = u64(j, "write_bytes");
        st_foreign_io f = st_foreign_io_of(rb, wb, own_r, own_w);
        json_object_set_new(j, "ranks_on_disk", json_integer(sharing));
        json_object_set_new(j, "ranks_own_read_bytes", json_integer((json_int_t)own_r));
        json_object_set_new(j, "ranks_own_write_bytes", json_integer((json_int_t)own_w));
        char whose[96];
        snprintf(whose, sizeof whose, " (counting the %d ranks of this job on the disk)", sharing);
        put_foreign(j, &f, rb, wb, whose);
    }
}

const sim_probe_ops st_device_io_probe = {
    .name = "device_io",
    .snapshot = dio_snapshot,
    .delta = dio_delta,
    .free_snapshot = dio_free,
    .ranks_adjust = st_device_io_ranks_adjust,
};
