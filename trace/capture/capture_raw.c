/*
 * trace/capture/capture_raw.c: decoding of tracefs binary ring-buffer pages and pairing of
 * block_rq_issue / block_rq_complete events into per-I/O records.
 *
 * Page layout (events/header_page gives the offsets): a u64 timestamp, a commit
 * word whose low 30 bits are the bytes of event data and whose bits 31/30 say that
 * events were lost before this page (and that their count is stored after the data),
 * then the events. Each event starts with a 32-bit header: type_len (5 bits) and
 * time_delta (27 bits). type_len 1..28: 4 * type_len bytes of data follow; 0: the
 * next u32 is the length (including itself) and the data follows it; 29: padding
 * (delta 0: the rest of the page); 30: a time extension; 31: an absolute timestamp.
 * Event data starts with common_type (u16), the event id from the format file.
 */
#include "trace/capture/capture_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RB_MISSED_EVENTS (1ull << 31)
#define RB_MISSED_STORED (1ull << 30)
#define RB_COMMIT_MASK ((1ull << 30) - 1)
#define TS_MSB (0xf8ull << 56)

/* ------------------------------------------------------------------ format files */

/* Finds "name" as a field in a format text: "field:<type> <name>[..];\toffset:N;\tsize:M;" */
static int find_field(const char *text, const char *name, cap_field *f)
{
    f->offset = -1;
    f->size = 0;
    size_t nlen = strlen(name);
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *fl = memmem(line, len, "field:", 6);
        const char *semi = fl ? memchr(fl, ';', len - (size_t)(fl - line)) : NULL;
        if (semi) {
            /* The name is the last word before ';', without an array suffix. */
            const char *e = semi;
            const char *br = memchr(fl, '[', (size_t)(semi - fl));
            if (br) e = br;
            const char *b = e;
            while (b > fl && b[-1] != ' ' && b[-1] != ':')
                b--;
            if ((size_t)(e - b) == nlen && !memcmp(b, name, nlen)) {
                const char *o = memmem(semi, len - (size_t)(semi - line), "offset:", 7);
                const char *s = memmem(semi, len - (size_t)(semi - line), "size:", 5);
                if (o && s) {
                    f->offset = atoi(o + 7);
                    f->size = atoi(s + 5);
                    return SIM_OK;
                }
            }
        }
        line = end ? end + 1 : NULL;
    }
    return SIM_ERR;
}

int cap_parse_event_format(const char *text, cap_event_fmt *f)
{
    memset(f, 0, sizeof *f);
    f->id = -1;
    const char *id = strstr(text, "\nID:");
    if (!id && !strncmp(text, "ID:", 3)) id = text - 1;
    if (id) f->id = atoi(id + 4);
    int rc = 0;
    rc |= find_field(text, "dev", &f->dev);
    rc |= find_field(text, "sector", &f->sector);
    rc |= find_field(text, "nr_sector", &f->nr_sector);
    rc |= find_field(text, "rwbs", &f->rwbs);
    find_field(text, "error", &f->error); /* completions only */
    if (f->id < 0 || rc || f->dev.size != 4 || f->sector.size != 8 || f->nr_sector.size != 4 ||
        f->rwbs.size < 1)
        return SIM_ERR;
    return SIM_OK;
}

int cap_parse_header_page(const char *text, cap_layout *l)
{
    if (find_field(text, "timestamp", &l->ts) || find_field(text, "commit", &l->commit) ||
        find_field(text, "data", &l->data))
        return SIM_ERR;
    if (l->ts.size != 8 || (l->commit.size != 8 && l->commit.size != 4) || l->data.size <= 0)
        return SIM_ERR;
    return SIM_OK;
}

/* ------------------------------------------------------------------ pages */

static uint64_t rd(const unsigned char *p, int size)
{
    uint64_t v = 0;
    memcpy(&v, p, (size_t)size); /* little endian hosts: the low bytes */
    return v;
}

int cap_rwbs_op(const char *rwbs, size_t len)
{
    bool flush = false;
    for (size_t i = 0; i < len && rwbs[i]; i++) {
        switch (rwbs[i]) {
        case 'W':
            return TR_WRITE;
        case 'R':
            return TR_READ;
        case 'D':
            return TR_DISCARD;
        case 'F':
            flush = true;
            break;
        default:
            break;
        }
    }
    return flush ? TR_FLUSH : -1;
}

static int decode_event(const cap_layout *l, const unsigned char *d, size_t dlen, uint64_t ts,
                        cap_sink sink, void *ctx)
{
    if (dlen < 2) return SIM_OK;
    int id = (int)rd(d, 2);
    for (int k = 0; k < CAP_NKINDS; k++) {
        const cap_event_fmt *f = &l->ev[k];
        if (f->id != id) continue;
        int need = f->rwbs.offset + f->rwbs.size;
        if (f->sector.offset + 8 > need) need = f->sector.offset + 8;
        if ((size_t)need > dlen) return SIM_ERR;
        cap_event ev = {0};
        ev.ts = ts;
        ev.kind = (uint8_t)k;
        ev.dev = (uint32_t)rd(d + f->dev.offset, 4);
        ev.sector = rd(d + f->sector.offset, 8);
        ev.nr_sector = (uint32_t)rd(d + f->nr_sector.offset, 4);
        if (f->error.offset >= 0 && f->error.size == 4 && (size_t)(f->error.offset + 4) <= dlen)
            ev.error = (int32_t)rd(d + f->error.offset, 4);
        int op = cap_rwbs_op((const char *)d + f->rwbs.offset, (size_t)f->rwbs.size);
        if (op < 0)
            return SIM_OK; /* no data and no flush (e.g. write-zeroes): not a trace record */
        ev.op = (uint8_t)op;
        return sink(ctx, &ev);
    }
    return SIM_OK;
}

int cap_decode_page(const cap_layout *l, const unsigned char *page, size_t len, cap_sink sink,
                    void *ctx, uint64_t *missed)
{
    size_t hdr = (size_t)l->data.offset;
    if (len < hdr) return SIM_ERR;
    uint64_t ts = rd(page + l->ts.offset, 8);
    uint64_t commit = rd(page + l->commit.offset, l->commit.size);
    size_t size = (size_t)(commit & RB_COMMIT_MASK);
    if (hdr + size > len) return SIM_ERR;
    if (commit & RB_MISSED_EVENTS) {
        uint64_t n = 1;
        if ((commit & RB_MISSED_STORED) && hdr + size + 8 <= len) n = rd(page + hdr + size, 8);
        *missed += n ? n : 1;
    }
    const unsigned char *p = page + hdr, *end = p + size;
    while (p + 4 <= end) {
        uint32_t h = (uint32_t)rd(p, 4);
        unsigned type_len = h & 31;
        uint64_t delta = h >> 5;
        if (type_len == 29) { /* padding */
            if (delta == 0) break;
            if (p + 8 > end) return SIM_ERR;
            p += 4 + rd(p + 4, 4);
            continue;
        }
        if (type_len == 30 || type_len == 31) {
            if (p + 8 > end) return SIM_ERR;
            uint64_t v = delta | (rd(p + 4, 4) << 27);
            if (type_len == 30) {
                ts += v;
            } else {
                if (ts & TS_MSB) {
                    v |= ts & TS_MSB;
                    if (v < ts) v += 1ull << 59;
                }
                ts = v;
            }
            p += 8;
            continue;
        }
        const unsigned char *data;
        size_t dlen;
        if (type_len == 0) {
            if (p + 8 > end) return SIM_ERR;
            uint64_t l0 = rd(p + 4, 4);
            if (l0 < 4) return SIM_ERR;
            data = p + 8;
            dlen = (size_t)l0 - 4;
        } else {
            data = p + 4;
            dlen = 4u * type_len;
        }
        if (data + dlen > end) return SIM_ERR;
        ts += delta;
        int rc = decode_event(l, data, dlen, ts, sink, ctx);
        if (rc < 0) return rc;
        p = data + dlen;
    }
    return SIM_OK;
}

/* ------------------------------------------------------------------ pairing */

static int cmp_event(const void *a, const void *b)
{
    const cap_event *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    /* Same instant: an issue before what ends it. */
    static const int order[CAP_NKINDS] = {[CAP_ISSUE] = 0, [CAP_REQUEUE] = 1, [CAP_COMPLETE] = 2};
    return order[x->kind] - order[y->kind];
}

#define NBUCKETS 4096u

typedef struct pend {
    uint64_t sector;
    uint64_t issue_ts;
    size_t rec;    /* index into the records */
    uint32_t next; /* next pending in the bucket, UINT32_MAX = none */
    uint8_t op;
} pend;

static uint32_t bucket_of(uint64_t sector, uint8_t op)
{
    uint64_t h = (sector * 0x9e3779b97f4a7c15ull) ^ op;
    return (uint32_t)(h >> 40) % NBUCKETS;
}

/* The pairing's state: one record per issue, and the issues still pending in buckets
 * by (sector, op), each bucket a FIFO. */
typedef struct pairing {
    tr_record *recs;
    bool *dropped; /* requeued: issued again later */
    pend *pool;    /* pool[i] belongs to recs[i] */
    uint32_t *head;
    size_t nrec;
    uint64_t t0, sector_base;
    bool have_t0;
} pairing;

static void pairing_free(pairing *pr)
{
    free(pr->recs);
    free(pr->dropped);
    free(pr->pool);
    free(pr->head);
}

/* Room for nissue issues. */
static void pairing_init(pairing *pr, size_t nissue, uint64_t sector_base)
{
    *pr = (pairing){.sector_base = sector_base};
    pr->recs = sim_xcalloc(nissue ? nissue : 1, sizeof *pr->recs);
    pr->dropped = sim_xcalloc(nissue ? nissue : 1, sizeof *pr->dropped);
    pr->pool = sim_xcalloc(nissue ? nissue : 1, sizeof *pr->pool);
    pr->head = sim_xmalloc(NBUCKETS * sizeof *pr->head);
    for (uint32_t b = 0; b < NBUCKETS; b++)
        pr->head[b] = UINT32_MAX;
}

/* An issue: a new record (its time from the first issue), pending at the end of its
 * bucket. */
static void add_issue(pairing *pr, const cap_event *e, bool data, uint32_t b)
{
    if (!pr->have_t0) {
        pr->t0 = e->ts;
        pr->have_t0 = true;
    }
    tr_record *r = &pr->recs[pr->nrec];
    r->time_ns = e->ts - pr->t0;
    r->op = e->op;
    r->offset = data ? (e->sector - pr->sector_base) * 512 : 0;
    r->length = data ? e->nr_sector * 512u : 0;
    r->latency_ns = TR_LATENCY_UNKNOWN;
    pend *p = &pr->pool[pr->nrec];
    p->sector = data ? e->sector : 0;
    p->op = e->op;
    p->issue_ts = e->ts;
    p->rec = pr->nrec;
    p->next = UINT32_MAX;
    /* Append: FIFO per (sector, op). */
    uint32_t *link = &pr->head[b];
    while (*link != UINT32_MAX)
        link = &pr->pool[*link].next;
    *link = (uint32_t)pr->nrec;
    pr->nrec++;
}

/* A completion or requeue ends the oldest pending issue of its (sector, op): the
 * record gets its latency, or is dropped (it will be issued again). */
static void end_issue(pairing *pr, const cap_event *e, bool data, uint32_t b, cap_pair_stats *st)
{
    uint64_t key = data ? e->sector : 0;
    uint32_t *link = &pr->head[b];
    while (*link != UINT32_MAX && !(pr->pool[*link].sector == key && pr->pool[*link].op == e->op))
        link = &pr->pool[*link].next;
    if (*link == UINT32_MAX) {
        if (e->kind == CAP_COMPLETE) st->unmatched_completes++;
        return;
    }
    pend *p = &pr->pool[*link];
    *link = p->next;
    if (e->kind == CAP_REQUEUE) {
        pr->dropped[p->rec] = true;
        st->requeued++;
        st->issued--;
        return;
    }
    pr->recs[p->rec].latency_ns = e->ts - p->issue_ts;
    st->completed++;
    if (e->error) st->errors++;
}

void cap_pair(cap_event *ev, size_t nev, uint64_t sector_base, uint64_t sector_len, tr_record **out,
              size_t *nout, cap_pair_stats *st)
{
    memset(st, 0, sizeof *st);
    *out = NULL;
    *nout = 0;
    if (nev > 1) qsort(ev, nev, sizeof *ev, cmp_event);
    size_t nissue = 0;
    for (size_t i = 0; i < nev; i++)
        nissue += ev[i].kind == CAP_ISSUE;
    pairing pr;
    pairing_init(&pr, nissue, sector_base);
    for (size_t i = 0; i < nev; i++) {
        const cap_event *e = &ev[i];
        bool data = e->op != TR_FLUSH;
        if (data && e->nr_sector == 0) {
            /* The flush machinery's own steps: a preflush-only write and the final
             * completion of a FUA/preflush write report no sectors; the flush request
             * they issue is traced separately. */
            st->flush_steps++;
            continue;
        }
        if (sector_len && data &&
            (e->sector < sector_base || e->sector >= sector_base + sector_len))
            continue; /* another partition of the same disk */
        uint32_t b = bucket_of(data ? e->sector : 0, e->op);
        if (e->kind == CAP_ISSUE) {
            add_issue(&pr, e, data, b);
            st->issued++;
        } else {
            end_issue(&pr, e, data, b, st);
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < pr.nrec; i++) {
        if (pr.dropped[i]) continue;
        if (pr.recs[i].latency_ns == TR_LATENCY_UNKNOWN) st->incomplete++;
        pr.recs[k++] = pr.recs[i];
    }
    *out = pr.recs;
    *nout = k;
    pr.recs = NULL; /* the caller's now */
    pairing_free(&pr);
}
