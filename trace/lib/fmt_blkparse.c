/*
 * trace/lib/fmt_blkparse.c: blkparse's default text output, e.g.
 *     8,0    3       17     0.000101360   697  D  WS 1234 + 8 [jbd2/sda1-8]
 * Only issue ('D') events become records: that is what the device was asked to do,
 * after the block layer merged and split the application's requests. Completion ('C')
 * events give each issue its captured response time (trace/lib/pair.c). Other events
 * (Q, G, I, M, P, U, ...) and the summary blkparse prints at the end are non-I/O
 * lines. The rwbs field gives the operation: D = discard, W = write, R = read, and a
 * flush without data (F with no sector) = flush. The volume is the device number
 * (major << 20 | minor, the kernel's dev_t).
 */
#include "trace/lib/pair_internal.h"

#include <stdio.h>
#include <string.h>

typedef struct blkparse_state {
    int in_summary; /* blkparse's per-CPU and total statistics follow the events */
    tr_pair *pair;  /* issues waiting for their completion (trace/lib/pair.c) */
} blkparse_state;

static int parse_dev(const char *s, uint32_t *dev)
{
    unsigned maj, min;
    char tail;
    if (sscanf(s, "%u,%u%c", &maj, &min, &tail) != 2 || maj > 4095 || min > 0xfffff) return SIM_ERR;
    *dev = maj << 20 | min;
    return SIM_OK;
}

static int blkparse_line(tr_parse *p, char *line, size_t len, tr_record *r)
{
    blkparse_state *st = (blkparse_state *)p->state;
    char *tok[12];
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t", &save); t && n < 12; t = strtok_r(NULL, " \t", &save))
        tok[n++] = t;
    uint32_t dev;
    if (n == 0 || parse_dev(tok[0], &dev) < 0) {
        /* The statistics section: "CPU0 (8,0):", "Total (8,0):", indented counters. */
        if (n > 0 && (!strncmp(tok[0], "CPU", 3) || !strcmp(tok[0], "Total"))) st->in_summary = 1;
        if (st->in_summary) return TR_PARSE_NONE;
        return tr_parse_fail(p, "not a blkparse event line (expected 'major,minor cpu seq "
                                "time pid action rwbs ...')");
    }
    if (n < 6) return tr_parse_fail(p, "event line with %d fields, at least 6 expected", n);
    uint64_t cpu, seq, t, pid;
    if (tr_field_u64(tok[1], &cpu) || tr_field_u64(tok[2], &seq))
        return tr_parse_fail(p, "bad cpu or sequence field");
    if (tr_field_decimal(tok[3], 1000000000ull, &t))
        return tr_parse_fail(p, "bad time '%s' (seconds expected)", tok[3]);
    if (tr_field_u64(tok[4], &pid)) return tr_parse_fail(p, "bad pid '%s'", tok[4]);
    if (strlen(tok[5]) > 2) return tr_parse_fail(p, "bad action '%s'", tok[5]);
    if (!strcmp(tok[5], "C")) {
        /* A completion: the response time of the issue of the same start sector. */
        uint64_t csector = 0;
        if (n >= 8 && tr_field_u64(tok[7], &csector) == 0 && st->pair &&
            csector <= UINT64_MAX / 512)
            tr_pair_complete(st->pair, dev, csector, t);
        else if (st->pair && n >= 7)
            tr_pair_complete(st->pair, dev, 0, t); /* a flush completes without a sector */
        return TR_PARSE_NONE;
    }
    if (strcmp(tok[5], "D")) return TR_PARSE_NONE; /* queue, merge, plug... events */
    if (n < 7) return tr_parse_fail(p, "issue event without an rwbs field");
    const char *rwbs = tok[6];
    for (const char *c = rwbs; *c; c++)
        if (!strchr("FWRDNSMAEB", *c)) return tr_parse_fail(p, "bad rwbs '%s'", rwbs);
    bool has_extent = n >= 10 && !strcmp(tok[8], "+");
    uint64_t sector = 0, nsect = 0;
    if (has_extent && (tr_field_u64(tok[7], &sector) || tr_field_u64(tok[9], &nsect) ||
                       sector > UINT64_MAX / 512 || nsect > UINT32_MAX / 512))
        return tr_parse_fail(p, "bad extent '%s + %s'", tok[7], tok[9]);
    if (strchr(rwbs, 'D'))
        r->op = TR_DISCARD;
    else if (strchr(rwbs, 'W'))
        r->op = TR_WRITE;
    else if (strchr(rwbs, 'R'))
        r->op = TR_READ;
    else if (strchr(rwbs, 'F'))
        r->op = TR_FLUSH;
    else
        return TR_PARSE_NONE; /* 'N': a request without data and without a flush */
    if (r->op != TR_FLUSH && !has_extent)
        return tr_parse_fail(p, "%s issue without 'sector + count'", tr_op_name(r->op));
    if (r->op == TR_FLUSH && nsect > 0) r->op = TR_WRITE;
    r->time_ns = t;
    r->volume = dev;
    r->offset = sector * 512;
    r->length = (uint32_t)(nsect * 512);
    if (tr_pair_issue(tr_pair_get(&st->pair), r, sector) < 0)
        return TR_PARSE_RECORD; /* too many held to pair: it goes out without its response time */
    return TR_PARSE_HELD;
}

static int blkparse_held(tr_parse *p, tr_record *out, bool end)
{
    return tr_pair_next(((blkparse_state *)p->state)->pair, out, end);
}

static void blkparse_reset(tr_parse *p)
{
    tr_pair_free(&((blkparse_state *)p->state)->pair);
}

static const tr_format blkparse_format = {
    .name = "blkparse",
    .description = "blkparse default text output (issue 'D' events)",
    .text = true,
    .parse_line = blkparse_line,
    .held = blkparse_held,
    .reset = blkparse_reset,
};
TR_REGISTER_FORMAT(blkparse_format);
