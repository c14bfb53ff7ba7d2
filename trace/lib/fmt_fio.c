/*
 * trace/lib/fmt_fio.c: fio's iolog, versions 2 and 3 (read), and version 3 (write, so a
 * replay can be cross-checked with `fio --read_iolog`).
 *   v2: "fio version 2 iolog", then "file action [offset length]"; the "wait" action
 *       delays the next I/O by its offset field in microseconds.
 *   v3: "fio version 3 iolog", then "timestamp file action [offset length]" with the
 *       timestamp in microseconds since the start (what fio writes).
 * Actions: add/open/close (file management, no I/O), read, write, trim, sync and
 * datasync (flushes). Each file name is a volume, numbered in order of appearance.
 */
#include "trace/lib/lib_internal.h"

#include <errno.h>
#include <string.h>

typedef struct fio_state {
    uint64_t wait_us; /* v2: accumulated waits */
} fio_state;

static int split_ws(char *line, char **tok, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (n == max) return max + 1;
        tok[n++] = t;
    }
    return n;
}

static int fio_parse(tr_parse *p, char *line, int version, tr_record *r)
{
    fio_state *st = (fio_state *)p->state;
    if (!strncmp(line, "fio version ", 12)) {
        char want[32];
        snprintf(want, sizeof want, "fio version %d iolog", version);
        if (strncmp(line, want, strlen(want)))
            return tr_parse_fail(p, "this is not a version %d iolog: '%.40s'", version, line);
        return TR_PARSE_NONE;
    }
    char *tok[7];
    int n = split_ws(line, tok, 6);
    int base = version == 3 ? 1 : 0;
    if (n < 2 + base || n > 4 + base)
        return tr_parse_fail(p, "expected '%sfile action [offset length]', found %d fields",
                             version == 3 ? "timestamp " : "", n);
    uint64_t ts_us = 0;
    if (version == 3 && tr_field_u64(tok[0], &ts_us))
        return tr_parse_fail(p, "bad timestamp '%s' (microseconds expected)", tok[0]);
    const char *file = tok[base], *act = tok[base + 1];
    bool io_fields = n == 4 + base;
    uint64_t off = 0, len = 0;
    if (io_fields && (tr_field_u64(tok[base + 2], &off) || tr_field_u64(tok[base + 3], &len)))
        return tr_parse_fail(p, "bad offset or length '%s %s'", tok[base + 2], tok[base + 3]);
    if (!strcmp(act, "add") || !strcmp(act, "open") || !strcmp(act, "close")) {
        if (tr_parse_name_id(p, file) == UINT32_MAX)
            return tr_parse_fail(p, "too many files in the log");
        return TR_PARSE_NONE;
    }
    if (!strcmp(act, "wait")) {
        if (version == 3) return tr_parse_fail(p, "'wait' is not allowed in a version 3 iolog");
        if (n != 4 || off > UINT64_MAX / 2 - st->wait_us)
            return tr_parse_fail(p, "bad wait: 'file wait microseconds 0' expected");
        st->wait_us += off;
        return TR_PARSE_NONE;
    }
    if (!strcmp(act, "read"))
        r->op = TR_READ;
    else if (!strcmp(act, "write"))
        r->op = TR_WRITE;
    else if (!strcmp(act, "trim"))
        r->op = TR_DISCARD;
    else if (!strcmp(act, "sync") || !strcmp(act, "datasync"))
        r->op = TR_FLUSH;
    else
        return tr_parse_fail(p, "unknown action '%s'", act);
    if (r->op != TR_FLUSH && !io_fields)
        return tr_parse_fail(p, "'%s' needs an offset and a length", act);
    if (len > UINT32_MAX)
        return tr_parse_fail(p, "length %llu is too large", (unsigned long long)len);
    uint32_t id = tr_parse_name_id(p, file);
    if (id == UINT32_MAX) return tr_parse_fail(p, "too many files in the log");
    uint64_t us = version == 3 ? ts_us : st->wait_us;
    if (us > UINT64_MAX / 1000) return tr_parse_fail(p, "timestamp out of range");
    r->time_ns = us * 1000;
    r->volume = id;
    r->offset = r->op == TR_FLUSH ? 0 : off;
    r->length = r->op == TR_FLUSH ? 0 : (uint32_t)len;
    return TR_PARSE_RECORD;
}

static int fio2_parse(tr_parse *p, char *line, size_t len, tr_record *r)
{
    return fio_parse(p, line, 2, r);
}

static int fio3_parse(tr_parse *p, char *line, size_t len, tr_record *r)
{
    return fio_parse(p, line, 3, r);
}

static const char *fio_name(const tr_emit *e)
{
    return e->opts && e->opts->fio_file ? e->opts->fio_file : "replay.data";
}

static int fio3_begin(tr_emit *e)
{
    const char *n = fio_name(e);
    return fprintf(e->f, "fio version 3 iolog\n0 %s add\n0 %s open\n", n, n) < 0 ? SIM_ERR : SIM_OK;
}

static int fio3_record(tr_emit *e, const tr_record *r)
{
    static const char *acts[] = {"read", "write", "sync", "trim"};
    if (e->records == 0) {
        e->prev_volume = r->volume;
    } else if (r->volume != e->prev_volume) {
        /* One file name for all: volumes would land on each other's offsets. */
        snprintf(e->why, sizeof e->why,
                 "the trace has several volumes (%u and %u) and a fio log names one file: "
                 "choose one with --volume N, or merge volumes into one offset space first",
                 e->prev_volume, r->volume);
        errno = EINVAL;
        return SIM_ERR;
    }
    e->prev_time = r->time_ns;
    return fprintf(e->f, "%llu %s %s %llu %u\n", (unsigned long long)(r->time_ns / 1000),
                   fio_name(e), acts[r->op & 3], (unsigned long long)r->offset, r->length) < 0
               ? -1
               : 0;
}

static int fio3_end(tr_emit *e)
{
    return fprintf(e->f, "%llu %s close\n", (unsigned long long)(e->prev_time / 1000),
                   fio_name(e)) < 0
               ? -1
               : 0;
}

static const tr_format fio2_format = {
    .name = "fio-v2",
    .description = "fio iolog version 2 (file action offset length; wait in us)",
    .text = true,
    .sorted = true,
    .parse_line = fio2_parse,
};
TR_REGISTER_FORMAT(fio2_format);

static const tr_format fio3_format = {
    .name = "fio-v3",
    .description = "fio iolog version 3 (timestamp us, file, action, offset, length)",
    .text = true,
    .parse_line = fio3_parse,
    .write_begin = fio3_begin,
    .write_record = fio3_record,
    .write_end = fio3_end,
};
TR_REGISTER_FORMAT(fio3_format);
