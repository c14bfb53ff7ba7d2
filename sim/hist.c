/*
 * sim/hist.c: log-linear latency histogram (the HDR idea, written for appsim).
 *
 * Layout (fixed, so that any two histograms merge exactly, across threads, runs and
 * result files): values are nanoseconds. Indexes 0..2047 hold the values 0..2047
 * exactly. Above, each power-of-two range [2^b, 2^(b+1)), b = 11..41, is split into
 * 1024 equal sub-buckets of width 2^(b-10). A bucket's width is at most 1/1024 of
 * its lower bound, and values are reported at the bucket's midpoint, so the relative
 * error of any percentile is below 1/2048 (0.05 %). Values from 2^42 ns (73 minutes)
 * up are clamped to the top bucket and counted.
 *
 * Storage: 33 chunks of 1024 counters, each allocated on first use, since a latency
 * distribution touches a handful of octaves. Single writer: counters are relaxed
 * atomics updated with plain load + store (no locked instruction), so a reporter
 * thread may read them while the owner records. Chunks are published with release
 * stores and read with acquire loads.
 *
 * Invariants:
 *   H1. one layout for every histogram (the constants below, checked at compile time;
 *       a result file's histogram names it, and sim_hist_from_json refuses another);
 *   H2. a histogram nobody is recording into has a count equal to the sum of its
 *       buckets, and clamped <= count; merges and deltas add counts and buckets alike,
 *       so a merge of such histograms keeps it. A merge of a meter still being recorded
 *       into (the interval reports) may see a record's bucket before its count; the
 *       deltas taken from it count their buckets. sim_hist_to_json asserts H2 for what
 *       goes into a result, where sim_hist_from_json would refuse a mismatch;
 *   H3. merged counts never wrap (asserted by sim_hist_merge).
 */
#include "sim/sim_internal.h"

#include <assert.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define SUB_BITS 10
#define SUB_COUNT (1u << SUB_BITS)                           /* 1024 per chunk */
#define LINEAR_LIMIT (2u * SUB_COUNT)                        /* 2048: exact below */
#define TOP_BIT 42                                           /* values < 2^42 */
#define NBUCKETS (LINEAR_LIMIT + (TOP_BIT - 11) * SUB_COUNT) /* 33792 */
#define NCHUNKS (NBUCKETS / SUB_COUNT)                       /* 33 */
#define MAX_VALUE ((1ull << TOP_BIT) - 1)
#define LAYOUT_NAME "loglinear-ns-1024x42"
/* The layout the comment above describes (and result files depend on). */
static_assert(NBUCKETS == 33792 && NCHUNKS == 33, "a result's bucket layout is fixed");
static_assert(NBUCKETS % SUB_COUNT == 0, "whole chunks");

typedef _Atomic uint64_t counter_t;

struct sim_hist {
    _Atomic(counter_t *) chunk[NCHUNKS];
    counter_t count;
    counter_t clamped;
    counter_t sum; /* ns; 2^64 ns is 584 years of summed latency */
    counter_t min;
    counter_t max;
};

static inline uint64_t ld(const counter_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}
static inline void st(counter_t *c, uint64_t v)
{
    atomic_store_explicit(c, v, memory_order_relaxed);
}

static inline uint32_t bucket_index(uint64_t v)
{
    assert(v <= MAX_VALUE); /* clamped by the caller */
    if (v < LINEAR_LIMIT) return (uint32_t)v;
    int b = 63 - __builtin_clzll(v); /* 11..41 */
    int shift = b - SUB_BITS;
    return LINEAR_LIMIT + (uint32_t)(b - 11) * SUB_COUNT + (uint32_t)((v >> shift) - SUB_COUNT);
}

/* Lowest value of bucket i, and its width. */
static inline uint64_t bucket_low(uint32_t i, uint64_t *width)
{
    if (i < LINEAR_LIMIT) {
        *width = 1;
        return i;
    }
    assert(i < NBUCKETS);
    uint32_t k = (i - LINEAR_LIMIT) / SUB_COUNT;
    uint64_t sub = (i - LINEAR_LIMIT) % SUB_COUNT + SUB_COUNT;
    int shift = (int)k + 1;
    *width = 1ull << shift;
    assert(*width * SUB_COUNT <= sub << shift); /* width <= 1/1024 of the lower bound */
    return sub << shift;
}

static inline uint64_t bucket_mid(uint32_t i)
{
    uint64_t w;
    uint64_t lo = bucket_low(i, &w);
    return lo + (w - 1) / 2;
}

sim_hist *sim_hist_new(void)
{
    sim_hist *h = sim_xcalloc(1, sizeof *h);
    st(&h->min, UINT64_MAX);
    return h;
}

void sim_hist_free(sim_hist *h)
{
    if (!h) return;
    for (uint32_t c = 0; c < NCHUNKS; c++)
        free((void *)atomic_load(&h->chunk[c]));
    free(h);
}

void sim_hist_reset(sim_hist *h)
{
    for (uint32_t c = 0; c < NCHUNKS; c++) {
        counter_t *p = atomic_load(&h->chunk[c]);
        if (p) memset((void *)p, 0, SUB_COUNT * sizeof *p);
    }
    st(&h->count, 0);
    st(&h->clamped, 0);
    st(&h->sum, 0);
    st(&h->min, UINT64_MAX);
    st(&h->max, 0);
}

static counter_t *chunk_for_write(sim_hist *h, uint32_t c)
{
    counter_t *p = atomic_load_explicit(&h->chunk[c], memory_order_acquire);
    if (!p) {
        p = sim_xcalloc(SUB_COUNT, sizeof *p);
        atomic_store_explicit(&h->chunk[c], p, memory_order_release);
    }
    return p;
}

static inline const counter_t *chunk_for_read(const sim_hist *h, uint32_t c)
{
    return atomic_load_explicit(&((sim_hist *)h)->chunk[c], memory_order_acquire);
}

void sim_hist_record_n(sim_hist *h, uint64_t v, uint64_t n)
{
    if (n == 0) return;
    if (v > MAX_VALUE) {
        v = MAX_VALUE;
        st(&h->clamped, ld(&h->clamped) + n);
    }
    uint32_t i = bucket_index(v);
    assert(i < NBUCKETS);
    counter_t *p = chunk_for_write(h, i / SUB_COUNT);
    counter_t *slot = &p[i % SUB_COUNT];
    st(slot, ld(slot) + n);
    st(&h->count, ld(&h->count) + n);
    st(&h->sum, ld(&h->sum) + v * n);
    if (v < ld(&h->min)) st(&h->min, v);
    if (v > ld(&h->max)) st(&h->max, v);
}

void sim_hist_record(sim_hist *h, uint64_t v)
{
    sim_hist_record_n(h, v, 1);
}

void sim_hist_merge(sim_hist *dst, const sim_hist *src)
{
    for (uint32_t c = 0; c < NCHUNKS; c++) {
        const counter_t *s = chunk_for_read(src, c);
        if (!s) continue;
        counter_t *d = NULL;
        for (uint32_t j = 0; j < SUB_COUNT; j++) {
            uint64_t n = ld(&s[j]);
            if (!n) continue;
            if (!d) d = chunk_for_write(dst, c);
            st(&d[j], ld(&d[j]) + n);
        }
    }
    assert(ld(&dst->count) + ld(&src->count) >= ld(&dst->count)); /* H3 */
    st(&dst->count, ld(&dst->count) + ld(&src->count));
    st(&dst->clamped, ld(&dst->clamped) + ld(&src->clamped));
    st(&dst->sum, ld(&dst->sum) + ld(&src->sum));
    if (ld(&src->min) < ld(&dst->min)) st(&dst->min, ld(&src->min));
    if (ld(&src->max) > ld(&dst->max)) st(&dst->max, ld(&src->max));
}

void sim_hist_add_delta(sim_hist *dst, const sim_hist *a, const sim_hist *b)
{
    uint64_t added = 0, lo = UINT64_MAX, hi = 0;
    for (uint32_t c = 0; c < NCHUNKS; c++) {
        const counter_t *pa = chunk_for_read(a, c);
        if (!pa) continue;
        const counter_t *pb = chunk_for_read(b, c);
        for (uint32_t j = 0; j < SUB_COUNT; j++) {
            uint64_t na = ld(&pa[j]), nb = pb ? ld(&pb[j]) : 0;
            if (na <= nb) continue;
            counter_t *d = chunk_for_write(dst, c);
            st(&d[j], ld(&d[j]) + (na - nb));
            added += na - nb;
            uint32_t i = c * SUB_COUNT + j;
            uint64_t w, l = bucket_low(i, &w);
            if (l < lo) lo = l;
            if (l + w - 1 > hi) hi = l + w - 1;
        }
    }
    if (!added) return;
    /* The sum is exact; min and max of a delta are only known to the bucket. */
    st(&dst->count, ld(&dst->count) + added);
    st(&dst->sum, ld(&dst->sum) + (ld(&a->sum) - ld(&b->sum)));
    uint64_t amin = ld(&a->min), amax = ld(&a->max);
    if (lo < amin) lo = amin;
    if (hi > amax) hi = amax;
    if (lo < ld(&dst->min)) st(&dst->min, lo);
    if (hi > ld(&dst->max)) st(&dst->max, hi);
}

size_t sim_hist_dense_len(void)
{
    return NBUCKETS + 3;
}

void sim_hist_to_dense(const sim_hist *h, uint64_t *dense, uint64_t *min, uint64_t *max)
{
    for (uint32_t c = 0; c < NCHUNKS; c++) {
        const counter_t *p = chunk_for_read(h, c);
        for (uint32_t j = 0; j < SUB_COUNT; j++)
            dense[c * SUB_COUNT + j] = p ? ld(&p[j]) : 0;
    }
    dense[NBUCKETS] = ld(&h->count);
    dense[NBUCKETS + 1] = ld(&h->clamped);
    dense[NBUCKETS + 2] = ld(&h->sum);
    *min = ld(&h->min);
    *max = ld(&h->max);
}

void sim_hist_from_dense(sim_hist *h, const uint64_t *dense, uint64_t min, uint64_t max)
{
    sim_hist_reset(h);
    for (uint32_t c = 0; c < NCHUNKS; c++)
        for (uint32_t j = 0; j < SUB_COUNT; j++)
            if (dense[c * SUB_COUNT + j]) st(&chunk_for_write(h, c)[j], dense[c * SUB_COUNT + j]);
    st(&h->count, dense[NBUCKETS]);
    st(&h->clamped, dense[NBUCKETS + 1]);
    st(&h->sum, dense[NBUCKETS + 2]);
    st(&h->min, min);
    st(&h->max, max);
}

uint64_t sim_hist_count(const sim_hist *h)
{
    return ld(&h->count);
}
uint64_t sim_hist_clamped(const sim_hist *h)
{
    return ld(&h->clamped);
}
uint64_t sim_hist_min(const sim_hist *h)
{
    return ld(&h->count) ? ld(&h->min) : 0;
}
uint64_t sim_hist_max(const sim_hist *h)
{
    return ld(&h->max);
}

double sim_hist_mean(const sim_hist *h)
{
    uint64_t n = ld(&h->count);
    return n ? (double)ld(&h->sum) / (double)n : 0.0;
}

double sim_hist_stddev(const sim_hist *h)
{
    uint64_t n = ld(&h->count);
    if (n < 2) return 0.0;
    double mean = sim_hist_mean(h), acc = 0;
    for (uint32_t c = 0; c < NCHUNKS; c++) {
        const counter_t *p = chunk_for_read(h, c);
        if (!p) continue;
        for (uint32_t j = 0; j < SUB_COUNT; j++) {
            uint64_t k = ld(&p[j]);
            if (k) {
                double d = (double)bucket_mid(c * SUB_COUNT + j) - mean;
                acc += d * d * (double)k;
            }
        }
    }
    return sqrt(acc / (double)n);
}

uint64_t sim_hist_percentile(const sim_hist *h, double p)
{
    uint64_t n = ld(&h->count);
    if (!n) return 0;
    if (p <= 0) return sim_hist_min(h);
    if (p >= 100) return ld(&h->max);
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)n);
    if (rank < 1) rank = 1;
    assert(rank <= n); /* 0 < p < 100 */
    uint64_t seen = 0;
    for (uint32_t c = 0; c < NCHUNKS; c++) {
        const counter_t *q = chunk_for_read(h, c);
        if (!q) continue;
        for (uint32_t j = 0; j < SUB_COUNT; j++) {
            seen += ld(&q[j]);
            if (seen >= rank) {
                uint64_t v = bucket_mid(c * SUB_COUNT + j);
                /* The exact extremes bound every percentile. */
                if (v < ld(&h->min)) v = ld(&h->min);
                if (v > ld(&h->max)) v = ld(&h->max);
                return v;
            }
        }
    }
    return ld(&h->max);
}

void sim_hist_foreach(const sim_hist *h, void (*fn)(uint32_t index, uint64_t count, void *arg),
                      void *arg)
{
    for (uint32_t c = 0; c < NCHUNKS; c++) {
        const counter_t *p = chunk_for_read(h, c);
        if (!p) continue;
        for (uint32_t j = 0; j < SUB_COUNT; j++) {
            uint64_t k = ld(&p[j]);
            if (k) fn(c * SUB_COUNT + j, k, arg);
        }
    }
}

/* The sparse text form of the buckets (docs/result-schema.md): one entry per non-empty
 * bucket, "gap" or "gap:count", comma-separated, where gap is the distance in index from
 * the previous entry (the first entry's is its index) and a count of 1 is left out. A
 * list of [index, count] pairs costs about 45 bytes per bucket once the document is
 * indented and 60 bytes of parser nodes to read back; this costs about 3. */
typedef struct sparse_writer {
    char *s;
    size_t len, cap;
    uint32_t prev;
    uint64_t total; /* the buckets' counts, for H2 */
} sparse_writer;

static void sparse_put(uint32_t index, uint64_t count, void *arg)
{
    sparse_writer *w = arg;
    if (w->cap - w->len < 48) {
        w->cap = w->cap ? w->cap * 2 : 4096;
        w->s = sim_xrealloc(w->s, w->cap);
    }
    uint32_t gap = index - w->prev;
    int n = count == 1 ? snprintf(w->s + w->len, 48, "%s%u", w->len ? "," : "", gap)
                       : snprintf(w->s + w->len, 48, "%s%u:%llu", w->len ? "," : "", gap,
                                  (unsigned long long)count);
    w->len += (size_t)n;
    w->prev = index;
    w->total += count;
}

json_t *sim_hist_to_json(const sim_hist *h)
{
    sparse_writer w = {0};
    sim_hist_foreach(h, sparse_put, &w);
    /* H2: sim_hist_from_json refuses a count that does not match the buckets */
    assert(w.total == ld(&h->count) && ld(&h->clamped) <= ld(&h->count));
    json_t *sparse = json_stringn(w.s ? w.s : "", w.len);
    free(w.s);
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:o}", "layout", LAYOUT_NAME, "count",
                     (json_int_t)ld(&h->count), "sum_ns", (json_int_t)ld(&h->sum), "min_ns",
                     (json_int_t)sim_hist_min(h), "max_ns", (json_int_t)ld(&h->max), "clamped",
                     (json_int_t)ld(&h->clamped), "sparse", sparse);
}

static sim_hist *fail(sim_hist *h, char *err, size_t errlen, const char *why)
{
    if (err && errlen) snprintf(err, errlen, "histogram: %s", why);
    sim_hist_free(h);
    return NULL;
}

static void add_bucket(sim_hist *h, uint32_t idx, uint64_t n)
{
    assert(idx < NBUCKETS); /* the readers check the index they were given */
    counter_t *p = chunk_for_write(h, idx / SUB_COUNT);
    st(&p[idx % SUB_COUNT], ld(&p[idx % SUB_COUNT]) + n);
}

/* Reads an unsigned decimal number of at most 19 digits at *s; false when none. */
static bool read_number(const char **s, uint64_t *v)
{
    const char *p = *s;
    uint64_t x = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 19) {
        x = x * 10 + (uint64_t)(*p++ - '0');
        digits++;
    }
    if (!digits || (*p >= '0' && *p <= '9')) return false;
    *s = p;
    *v = x;
    return true;
}

/* The sparse text form (see sparse_put); returns the total count, or -1 when malformed. */
static int64_t read_sparse(sim_hist *h, const char *s)
{
    uint64_t index = 0, total = 0;
    bool first = true;
    while (*s) {
        uint64_t gap, n = 1;
        if (!first && *s++ != ',') return -1;
        if (!read_number(&s, &gap) || (!first && gap == 0)) return -1;
        if (*s == ':' && (s++, !read_number(&s, &n) || n == 0)) return -1;
        index += gap;
        if (index >= NBUCKETS || total + n < total || total + n > INT64_MAX) return -1;
        add_bucket(h, (uint32_t)index, n);
        total += n;
        first = false;
    }
    return (int64_t)total;
}

/* The list form of results written before the sparse one: [[index, count], ...]. */
static int64_t read_pairs(sim_hist *h, const json_t *buckets)
{
    uint64_t total = 0;
    size_t i;
    const json_t *b;
    json_array_foreach(buckets, i, b)
    {
        json_int_t idx, n;
        if (json_unpack((json_t *)b, "[II]", &idx, &n) || idx < 0 || idx >= NBUCKETS || n < 0 ||
            total + (uint64_t)n > INT64_MAX)
            return -1;
        add_bucket(h, (uint32_t)idx, (uint64_t)n);
        total += (uint64_t)n;
    }
    return (int64_t)total;
}

sim_hist *sim_hist_from_json(const json_t *j, char *err, size_t errlen)
{
    if (!json_is_object(j)) return fail(NULL, err, errlen, "not an object");
    const char *layout = json_string_value(json_object_get(j, "layout"));
    if (!layout || strcmp(layout, LAYOUT_NAME))
        return fail(NULL, err, errlen,
                    "unknown bucket layout (written by another appsim version?)");
    const json_t *sparse = json_object_get(j, "sparse");
    const json_t *buckets = json_object_get(j, "buckets");
    if (!json_is_string(sparse) && !json_is_array(buckets))
        return fail(NULL, err, errlen, "no buckets (neither \"sparse\" nor \"buckets\")");
    sim_hist *h = sim_hist_new();
    int64_t total =
        json_is_string(sparse) ? read_sparse(h, json_string_value(sparse)) : read_pairs(h, buckets);
    if (total < 0) return fail(h, err, errlen, "malformed bucket");
    json_int_t count = json_integer_value(json_object_get(j, "count"));
    if (count != total) return fail(h, err, errlen, "count does not match the buckets");
    st(&h->count, (uint64_t)total);
    st(&h->sum, (uint64_t)json_integer_value(json_object_get(j, "sum_ns")));
    st(&h->min, total ? (uint64_t)json_integer_value(json_object_get(j, "min_ns")) : UINT64_MAX);
    st(&h->max, (uint64_t)json_integer_value(json_object_get(j, "max_ns")));
    st(&h->clamped, (uint64_t)json_integer_value(json_object_get(j, "clamped")));
    return h;
}

json_t *sim_hist_summary_json(const sim_hist *h)
{
#define US(v) ((double)(v) / 1000.0)
    return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "count",
                     (json_int_t)sim_hist_count(h), "mean_us", US(sim_hist_mean(h)), "stddev_us",
                     US(sim_hist_stddev(h)), "min_us", US(sim_hist_min(h)), "p50_us",
                     US(sim_hist_percentile(h, 50)), "p90_us", US(sim_hist_percentile(h, 90)),
                     "p95_us", US(sim_hist_percentile(h, 95)), "p99_us",
                     US(sim_hist_percentile(h, 99)), "p999_us", US(sim_hist_percentile(h, 99.9)),
                     "p9999_us", US(sim_hist_percentile(h, 99.99)), "max_us", US(sim_hist_max(h)));
#undef US
}
