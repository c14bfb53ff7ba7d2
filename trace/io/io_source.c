/*
 * trace/io/io_source.c: a workload definition as a record source for the replay loop.
 * Each record draws its size from the distribution, reads with probability read_pct,
 * and goes to a random offset (aligned to `align`, or to its own size) with
 * probability random_pct, else continues one sequential stream from where the
 * previous sequential I/O ended, wrapping at the end of the section (vdbench seekpct).
 * Record times are only an order: the replay runs these as fast as possible or at a
 * fixed arrival rate, never on their timestamps.
 */
#include "trace/io/io_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct io_gen {
    tr_source src;
    io_spec spec;
    uint64_t length; /* section bytes */
    uint64_t limit, produced;
    uint64_t seq_next;
    uint32_t read_cut, random_cut; /* thresholds on 32 random bits */
    sim_rng rng;
} io_gen;

static uint32_t cut(double pct)
{
    return pct >= 100 ? UINT32_MAX : (uint32_t)(pct / 100.0 * 4294967296.0);
}

static int gen_next(tr_source *s, tr_record *r)
{
    io_gen *g = s->ctx;
    if (g->limit && g->produced >= g->limit) return TR_NEXT_END;
    uint32_t len = io_xfer_draw(&g->spec.xfer, &g->rng);
    uint64_t bits = sim_rng_u64(&g->rng);
    uint32_t op_bits = (uint32_t)bits, seek_bits = (uint32_t)(bits >> 32);
    bool read = g->read_cut == UINT32_MAX || op_bits < g->read_cut;
    bool random = g->random_cut == UINT32_MAX || seek_bits < g->random_cut;
    uint64_t off;
    if (random) {
        uint64_t a = g->spec.align ? g->spec.align : len;
        off = sim_rng_range(&g->rng, 0, (g->length - len) / a) * a;
    } else {
        off = g->seq_next;
        if (off + len > g->length) off = 0;
        g->seq_next = off + len;
    }
    memset(r, 0, sizeof *r);
    r->time_ns = g->produced++;
    r->offset = off;
    r->length = len;
    r->op = read ? TR_READ : TR_WRITE;
    r->latency_ns = TR_LATENCY_UNKNOWN;
    return TR_NEXT_RECORD;
}

static int gen_rewind(tr_source *s)
{
    (void)s; /* the stream continues: see io_internal.h */
    return SIM_OK;
}

static const char *gen_error(const tr_source *s)
{
    return "no error";
}

static void gen_close(tr_source *s)
{
    free(s->ctx);
}

static const tr_source_ops gen_ops = {gen_next, gen_rewind, gen_error, gen_close};

int io_source_open(const io_spec *s, uint64_t length, uint64_t limit, uint64_t seed,
                   tr_source **out, char *err, size_t errlen)
{
    if (length < io_xfer_max(&s->xfer)) {
        snprintf(err, errlen, "the section (%llu bytes) is smaller than the largest transfer",
                 (unsigned long long)length);
        return SIM_EXIT_USAGE;
    }
    io_gen *g = sim_xcalloc(1, sizeof *g);
    g->spec = *s;
    g->length = length;
    g->limit = limit;
    g->read_cut = s->read_pct <= 0 ? 0 : cut(s->read_pct);
    g->random_cut = s->random_pct <= 0 ? 0 : cut(s->random_pct);
    sim_rng_seed(&g->rng, seed, 0x696f);
    g->src.ops = &gen_ops;
    g->src.ctx = g;
    *out = &g->src;
    return SIM_EXIT_OK;
}

int io_source_scan(const io_spec *s, uint64_t length, tr_scan *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->volumes = sim_xcalloc(1, sizeof *out->volumes);
    out->nvolumes = 1;
    out->volumes[0].volume = 0;
    out->volumes[0].end = length;
    out->span = length;
    out->records = 1; /* endless; the replay only needs to know there is some I/O */
    out->max_length = io_xfer_max(&s->xfer);
    /* Random offsets are multiples of the alignment or of the I/O's own size, and the
     * sequential stream advances by sizes (and wraps to 0). */
    out->align_bits = (uint64_t)io_xfer_size_bits(&s->xfer) | s->align;
    return SIM_EXIT_OK;
}
