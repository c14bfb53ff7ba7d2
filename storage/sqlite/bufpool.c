/*
 * storage/sqlite/bufpool.c: the buffer pool of one database instance, shared by all its
 * connections: a fixed number of aligned frames, a chained hash from (file, block) to
 * frame, and generalized CLOCK replacement: each frame has a usage count, raised by
 * every hit up to USAGE_MAX and lowered by one as the hand passes; the first unpinned,
 * clean frame at zero is the victim. With a single reference bit a page touched by
 * every transaction (the root and inner pages of the b-trees, a district's row) is
 * worth no more than a leaf read once, so at a buffer of a few percent of the data a
 * burst of leaf misses pushes inner pages out and each lookup then costs extra device
 * reads; counting uses keeps them resident, as PostgreSQL's clock sweep does (its
 * usage count also stops at 5).
 *
 * The frames are split into shards (up to 16, by a hash of the block), each with its
 * own mutex, hash table and clock hand, so connections on different blocks do not
 * queue on one lock. A shard's mutex guards its metadata and every copy into or out
 * of its frames' memory, so a reader never sees half of a write. Device I/O happens
 * outside the mutex: a frame being loaded is marked LOADING (others wait on the
 * condition variable), a frame being written to the device from its memory is pinned
 * (not evictable, so a later miss cannot read the block back from the device before
 * the write is there).
 */
#include "storage/sqlite/sqlite_internal.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { F_EMPTY, F_LOADING, F_VALID };

#define NIL UINT32_MAX
#define USAGE_MAX 5
/* An invalidated range of at most this share of the pool's frames is dropped by
 * looking its blocks up; a longer one by reading every frame's key. */
#define INVALIDATE_LOOKUP_SHARE 4

typedef struct bp_frame {
    uint64_t key;
    uint32_t next; /* hash chain */
    uint8_t state;
    uint8_t ref;
    uint8_t dirty;
    uint32_t pins;
} bp_frame;

/* One shard: a slice of the frames with its own lock, hash table and clock hand. A
 * block always lives in the shard its key hashes to, so shards share nothing. */
typedef struct bp_shard {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t unit;
    uint32_t base;    /* index of the shard's first frame in the pool */
    uint32_t nframes; /* the shard's frames */
    uint32_t hand;
    uint32_t mask; /* buckets - 1 */
    uint32_t *buckets;
    bp_frame *frames; /* the pool's frames from base, indexed from 0 */
    uint8_t *mem;
    uint64_t hits, misses, evictions, write_allocs, waits, dirty;
} __attribute__((aligned(64))) bp_shard;

struct bp_pool {
    uint32_t unit;
    uint32_t nframes;
    uint32_t nshards;   /* a power of two */
    uint32_t per_shard; /* frames per shard (the last one takes the remainder) */
    bp_shard *shards;
    bp_frame *frames;
    uint8_t *mem;
    size_t mem_len;
};

/* A frame's key: the file number above KEY_BLK_BITS, the block below. */
#define KEY_BLK_BITS 48
#define KEY_BLK_MASK ((1ULL << KEY_BLK_BITS) - 1)

static inline uint64_t make_key(uint32_t file, uint64_t blk)
{
    return ((uint64_t)file << KEY_BLK_BITS) | (blk & KEY_BLK_MASK);
}

static inline uint64_t key_blk(uint64_t key)
{
    return key & KEY_BLK_MASK;
}

static inline uint64_t key_file(uint64_t key)
{
    return key >> KEY_BLK_BITS;
}

/* Fibonacci hashing: the shard takes bits 20 and up of the product, a shard's bucket
 * bits 32 and up, so the two choices do not follow each other. Consecutive blocks of a
 * file spread evenly; the file number first moves a file's blocks by a large odd
 * offset, because multiplying the key as packed (file in bits 48 and up) would leave
 * every bit below 48 alone and put block b of the WAL in the bucket of block b of the
 * database (computed for the blocks of a scale-10 tpcc database and its WAL: 1.54
 * frames visited per hit against 1.37). */
static inline uint64_t mix_key(uint64_t key)
{
    return (key_blk(key) + key_file(key) * 0x632BE59BD9B4E019ULL) * 0x9E3779B97F4A7C15ULL;
}

static inline uint32_t hash_key(const bp_shard *p, uint64_t key)
{
    return (uint32_t)(mix_key(key) >> 32) & p->mask;
}

static inline uint8_t *frame_mem(const bp_shard *p, uint32_t f)
{
    return p->mem + (size_t)f * p->unit;
}

/* Shards of at least this many frames: the dirty WAL and database blocks waiting for
 * their flush (about 512 at most) must never fill one shard. */
#define SHARD_MIN_FRAMES 1024
#define SHARDS_MAX 16

static bp_shard *shard_of(const bp_pool *p, uint64_t key)
{
    assert(p->nshards && (p->nshards & (p->nshards - 1)) == 0); /* a power of two: the mask */
    return &p->shards[(uint32_t)(mix_key(key) >> 20) & (p->nshards - 1)];
}

/* The shard that owns pool-wide frame index f. */
static bp_shard *shard_of_frame(const bp_pool *p, uint32_t f)
{
    assert(f < p->nframes);
    uint32_t i = f / p->per_shard;
    return &p->shards[i < p->nshards ? i : p->nshards - 1];
}

static inline bool on_chain(const bp_shard *p, uint32_t f)
{
    for (uint32_t g = p->buckets[hash_key(p, p->frames[f].key)]; g != NIL; g = p->frames[g].next)
        if (g == f) return true;
    return false;
}

/* The frame ownership rules P1-P4 (sqlite_internal.h) for frame f, p->mu held: asserted
 * after every change to a frame, so each check costs one hash chain. */
static inline bool frame_ok(const bp_shard *p, uint32_t f)
{
    const bp_frame *fr = &p->frames[f];
    if (f >= p->nframes || fr->ref > USAGE_MAX) return false;
    switch (fr->state) {
    case F_EMPTY: /* P1: off the hash; nobody holds it */
        return fr->pins == 0 && !fr->dirty && !on_chain(p, f);
    case F_LOADING: /* P2: pinned by its loader, clean */
        return fr->pins > 0 && !fr->dirty && on_chain(p, f);
    case F_VALID: /* P1, P3: on the hash; counted while dirty */
        return on_chain(p, f) && (!fr->dirty || p->dirty > 0);
    }
    return false;
}

/* The whole pool, when it is freed: every frame passes frame_ok, none is pinned or
 * loading any more (P4), and each shard's dirty count is its dirty frames (P5). */
static inline bool pool_ok(const bp_pool *pool)
{
    for (uint32_t i = 0; i < pool->nshards; i++) {
        const bp_shard *p = &pool->shards[i];
        uint64_t dirty = 0;
        for (uint32_t f = 0; f < p->nframes; f++) {
            if (!frame_ok(p, f) || p->frames[f].pins || p->frames[f].state == F_LOADING)
                return false;
            dirty += p->frames[f].dirty;
        }
        if (dirty != p->dirty) return false;
    }
    return true;
}

/* Memory for the frames' metadata and the hash buckets, both written whole when the pool
 * is made. Every block read touches a bucket and a frame's metadata at random, so with
 * 4 KiB pages nearly every lookup also misses the TLB (a page walk, costlier in a VM);
 * 2 MiB pages (transparent huge pages, which Linux gives on request in its default
 * "madvise" mode) make the walks rare. Not for the frames' memory: it is faulted in
 * block by block as misses fill the pool, and a huge-page fault there zeroes 2 MiB and
 * may compact memory first, in the middle of a cold pool's reads
 * (docs/measurements/sqlite-vfs.md, "CPU per block read"). Below 2 MiB, or where the
 * kernel refuses, it is ordinary memory. Aligned to at least `align`. */
#define HUGE_PAGE (2u << 20)
static void *alloc_meta(size_t len, size_t align)
{
    if (len >= HUGE_PAGE && align < HUGE_PAGE) align = HUGE_PAGE;
    if (align < sizeof(void *)) align = sizeof(void *); /* posix_memalign's minimum */
    void *m = NULL;
    /* appsim-alloc: the pool's tables, sized from --buffer; bp_new answers NULL and its
     * caller says the buffer does not fit */
    if (posix_memalign(&m, align, len)) return NULL;
#ifdef MADV_HUGEPAGE
    if (len >= HUGE_PAGE) (void)madvise(m, len, MADV_HUGEPAGE); /* a hint: fine if refused */
#endif
    return m;
}

static int shard_init(bp_shard *s, bp_pool *p, uint32_t base, uint32_t n)
{
    s->unit = p->unit;
    s->base = base;
    s->nframes = n;
    s->frames = p->frames + base;
    s->mem = p->mem + (size_t)base * p->unit;
    uint32_t nb = 1;
    while (nb < n * 2u && nb < (1u << 31))
        nb <<= 1;
    s->mask = nb - 1;
    s->buckets = alloc_meta(sizeof(uint32_t) * nb, sizeof(uint32_t));
    if (!s->buckets) return SIM_ERR;
    memset(s->buckets, 0xff, sizeof(uint32_t) * nb);
    for (uint32_t i = 0; i < n; i++)
        s->frames[i].next = NIL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    return SIM_OK;
}

bp_pool *bp_new(uint64_t nframes, uint32_t unit)
{
    if (nframes < 2 || nframes >= NIL || unit < 512 || (unit & (unit - 1))) return NULL;
    bp_pool *p = sim_xcalloc(1, sizeof *p);
    p->unit = unit;
    p->nframes = (uint32_t)nframes;
    p->nshards = 1;
    while (p->nshards < SHARDS_MAX && nframes / (p->nshards * 2u) >= SHARD_MIN_FRAMES)
        p->nshards *= 2;
    p->per_shard = p->nframes / p->nshards;
    p->frames = alloc_meta((size_t)p->nframes * sizeof(bp_frame), sizeof(uint64_t));
    if (p->frames) memset(p->frames, 0, (size_t)p->nframes * sizeof(bp_frame));
    p->mem_len = (size_t)nframes * unit;
    void *mem = NULL;
    /* appsim-alloc: the pool itself, sized from --buffer (see alloc_meta) */
    if (posix_memalign(&mem, unit > 4096 ? unit : 4096, p->mem_len)) mem = NULL;
    p->mem = mem;
    void *sh = NULL;
    /* appsim-alloc: freed with the pool's other parts on the same path */
    if (posix_memalign(&sh, 64, sizeof(bp_shard) * p->nshards)) sh = NULL;
    p->shards = sh;
    if (!p->frames || !p->mem || !p->shards) {
        free(p->frames);
        free(p->mem);
        free(p->shards);
        free(p);
        return NULL;
    }
    memset(p->shards, 0, sizeof(bp_shard) * p->nshards);
    for (uint32_t i = 0; i < p->nshards; i++) {
        uint32_t base = i * p->per_shard;
        uint32_t n = i + 1 == p->nshards ? p->nframes - base : p->per_shard;
        if (shard_init(&p->shards[i], p, base, n)) {
            p->nshards = i; /* bp_free releases the shards made so far */
            bp_free(p);
            return NULL;
        }
    }
    return p;
}

void bp_free(bp_pool *p)
{
    if (!p) return;
    assert(pool_ok(p));
    for (uint32_t i = 0; i < p->nshards; i++) {
        pthread_mutex_destroy(&p->shards[i].mu);
        pthread_cond_destroy(&p->shards[i].cv);
        free(p->shards[i].buckets);
    }
    free(p->shards);
    free(p->frames);
    free(p->mem);
    free(p);
}

uint32_t bp_unit(const bp_pool *p)
{
    return p->unit;
}

void bp_get_stats(bp_pool *p, bp_stats *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < p->nshards; i++) {
        bp_shard *s = &p->shards[i];
        pthread_mutex_lock(&s->mu);
        out->hits += s->hits;
        out->misses += s->misses;
        out->evictions += s->evictions;
        out->write_allocs += s->write_allocs;
        out->waits += s->waits;
        out->dirty += s->dirty;
        pthread_mutex_unlock(&s->mu);
    }
    out->frames = p->nframes;
    out->unit = p->unit;
}

static uint32_t lookup(const bp_shard *p, uint64_t key)
{
    for (uint32_t f = p->buckets[hash_key(p, key)]; f != NIL; f = p->frames[f].next)
        if (p->frames[f].key == key && p->frames[f].state != F_EMPTY) return f;
    return NIL;
}

static void unlink_frame(bp_shard *p, uint32_t f)
{
    uint32_t *pp = &p->buckets[hash_key(p, p->frames[f].key)];
    while (*pp != f) {
        assert(*pp != NIL); /* a frame being unlinked is on its key's chain */
        pp = &p->frames[*pp].next;
    }
    *pp = p->frames[f].next;
    p->frames[f].next = NIL;
}

static void link_frame(bp_shard *p, uint32_t f, uint64_t key)
{
    assert(f < p->nframes && lookup(p, key) == NIL); /* one frame per block */
    uint32_t b = hash_key(p, key);
    p->frames[f].key = key;
    p->frames[f].next = p->buckets[b];
    p->buckets[b] = f;
}

/* A hit: one more use, up to USAGE_MAX. */
static inline void touch_frame(bp_frame *fr)
{
    if (fr->ref < USAGE_MAX) fr->ref++;
}

/* CLOCK: USAGE_MAX + 1 full sweeps bring every usage count to zero, so the next one
 * finds a victim unless every frame is pinned, loading or dirty; then NIL, and the
 * caller waits for a release and looks the block up again (someone else may have
 * loaded it meanwhile). */
static uint32_t take_victim(bp_shard *p)
{
    for (uint64_t step = 0; step < (USAGE_MAX + 2ull) * p->nframes; step++) {
        uint32_t f = p->hand;
        p->hand = (p->hand + 1 == p->nframes) ? 0 : p->hand + 1;
        bp_frame *fr = &p->frames[f];
        if (fr->state == F_EMPTY) return f;
        if (fr->state != F_VALID || fr->pins || fr->dirty) continue;
        if (fr->ref) {
            fr->ref--;
            continue;
        }
        unlink_frame(p, f);
        fr->state = F_EMPTY;
        p->evictions++;
        assert(frame_ok(p, f)); /* P3: evicted only unpinned and clean */
        return f;
    }
    return NIL;
}

static void wait_release(bp_shard *p)
{
    p->waits++;
    pthread_cond_wait(&p->cv, &p->mu);
}

/* Loads block key into a fresh frame; called and returns with the mutex held, drops it
 * during the I/O. On success the frame is VALID and pinned once. */
static int load_frame(bp_shard *p, uint32_t f, uint64_t key, uint64_t blk, bp_load_fn load,
                      void *ctx, uint32_t *out)
{
    bp_frame *fr = &p->frames[f];
    assert(fr->state == F_EMPTY && fr->pins == 0); /* a victim from take_victim */
    fr->state = F_LOADING;
    fr->pins = 1;
    fr->ref = 1;
    fr->dirty = 0;
    link_frame(p, f, key);
    pthread_mutex_unlock(&p->mu);
    int64_t n = load(ctx, blk, frame_mem(p, f));
    if (n >= 0 && (uint64_t)n < p->unit) memset(frame_mem(p, f) + n, 0, p->unit - (size_t)n);
    pthread_mutex_lock(&p->mu);
    assert(fr->state == F_LOADING && frame_ok(p, f)); /* P2: nobody took it meanwhile */
    if (n < 0) {
        unlink_frame(p, f);
        fr->state = F_EMPTY;
        fr->pins = 0;
        pthread_cond_broadcast(&p->cv);
        assert(frame_ok(p, f));
        return (int)n;
    }
    fr->state = F_VALID;
    pthread_cond_broadcast(&p->cv);
    *out = f;
    return 0;
}

/* Finds a VALID frame for key, waiting out a load in progress. NIL when absent. */
static uint32_t find_valid(bp_shard *p, uint64_t key)
{
    for (;;) {
        uint32_t f = lookup(p, key);
        if (f == NIL || p->frames[f].state == F_VALID) return f;
        p->waits++;
        pthread_cond_wait(&p->cv, &p->mu);
    }
}

/* With p->mu held: the valid frame of key (returned), or else a victim frame to load it
 * into (*victim, and NIL returned), waiting for a release while every frame is pinned. */
static uint32_t find_or_victim(bp_shard *p, uint64_t key, uint32_t *victim)
{
    *victim = NIL;
    for (;;) {
        uint32_t f = find_valid(p, key);
        if (f != NIL) return f;
        *victim = take_victim(p);
        if (*victim != NIL) return NIL;
        wait_release(p);
    }
}

int bp_read(bp_pool *pool, uint32_t file, uint64_t blk, uint32_t off, void *dst, uint32_t len,
            bp_load_fn load, void *ctx, bool *hit)
{
    uint64_t key = make_key(file, blk);
    bp_shard *p = shard_of(pool, key);
    pthread_mutex_lock(&p->mu);
    uint32_t v, f = find_or_victim(p, key, &v);
    if (f != NIL) {
        assert(p->frames[f].state == F_VALID && frame_ok(p, f));
        p->hits++;
        touch_frame(&p->frames[f]);
        memcpy(dst, frame_mem(p, f) + off, len);
        pthread_mutex_unlock(&p->mu);
        *hit = true;
        return 0;
    }
    p->misses++;
    *hit = false;
    int rc = load_frame(p, v, key, blk, load, ctx, &f);
    if (rc == 0) {
        memcpy(dst, frame_mem(p, f) + off, len);
        p->frames[f].pins--;
        if (!p->frames[f].pins) pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* With p->mu held: stores src into the frame of block `at` (allocated, or loaded through
 * `old` for a partial write, see bp_write_back) and returns the frame pinned once in
 * *out; 0 or the load's -errno. */
static int store_pinned(bp_shard *p, bp_span at, const void *src, const bp_loader *old,
                        uint32_t *out)
{
    uint64_t key = make_key(at.file, at.blk);
    bool partial = at.off != 0 || at.len != p->unit;
    uint32_t v, f = find_or_victim(p, key, &v);
    if (f != NIL) {
        p->frames[f].pins++;
    } else if (old && partial) {
        p->misses++;
        int rc = load_frame(p, v, key, at.blk, old->load, old->ctx, &f);
        if (rc) return rc;
    } else {
        f = v;
        bp_frame *fr = &p->frames[f];
        assert(fr->state == F_EMPTY && fr->pins == 0);
        fr->state = F_VALID;
        fr->pins = 1;
        fr->dirty = 0;
        link_frame(p, f, key);
        if (partial) memset(frame_mem(p, f), 0, p->unit);
        p->write_allocs++;
    }
    bp_frame *fr = &p->frames[f];
    /* a write is not a reuse: WAL blocks written once and checkpoint copies would
     * otherwise look as hot as the inner pages */
    if (!fr->ref) fr->ref = 1;
    memcpy(frame_mem(p, f) + at.off, src, at.len);
    assert(fr->state == F_VALID && fr->pins > 0 && frame_ok(p, f)); /* P3, P4 */
    *out = f;
    return 0;
}

void bp_demote(bp_pool *pool, uint32_t file, uint64_t from_blk, uint64_t to_blk)
{
    for (uint64_t blk = from_blk; blk < to_blk; blk++) {
        uint64_t key = make_key(file, blk);
        bp_shard *p = shard_of(pool, key);
        pthread_mutex_lock(&p->mu);
        uint32_t f = lookup(p, key);
        if (f != NIL && p->frames[f].state == F_VALID) p->frames[f].ref = 0;
        pthread_mutex_unlock(&p->mu);
    }
}

int bp_write_back(bp_pool *pool, bp_span at, const void *src, const bp_loader *old)
{
    bp_shard *p = shard_of(pool, make_key(at.file, at.blk));
    pthread_mutex_lock(&p->mu);
    uint32_t f;
    int rc = store_pinned(p, at, src, old, &f);
    if (rc == 0) {
        bp_frame *fr = &p->frames[f];
        if (!fr->dirty) p->dirty++;
        fr->dirty = 1;
        fr->pins--;
        if (!fr->pins) pthread_cond_broadcast(&p->cv);
        assert(frame_ok(p, f) && p->dirty <= p->nframes); /* P2, P5 */
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int bp_write_through(bp_pool *pool, bp_span at, const void *src, const bp_loader *old,
                     bp_pinned *out)
{
    bp_shard *p = shard_of(pool, make_key(at.file, at.blk));
    pthread_mutex_lock(&p->mu);
    uint32_t f;
    int rc = store_pinned(p, at, src, old, &f);
    if (rc == 0) {
        out->frame = p->base + f;
        out->data = frame_mem(p, f);
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void bp_unpin(bp_pool *pool, uint32_t frame)
{
    bp_shard *p = shard_of_frame(pool, frame);
    pthread_mutex_lock(&p->mu);
    uint32_t f = frame - p->base;
    /* P4: one unpin per pin taken; a pinned frame is valid */
    assert(f < p->nframes && p->frames[f].pins > 0 && p->frames[f].state == F_VALID);
    if (--p->frames[f].pins == 0) pthread_cond_broadcast(&p->cv);
    assert(frame_ok(p, f));
    pthread_mutex_unlock(&p->mu);
}

bool bp_take_dirty(bp_pool *pool, uint32_t file, uint64_t blk, void *dst, uint32_t *frame)
{
    uint64_t key = make_key(file, blk);
    bp_shard *p = shard_of(pool, key);
    pthread_mutex_lock(&p->mu);
    uint32_t f = lookup(p, key);
    bool took = false;
    if (f != NIL && p->frames[f].state == F_VALID && p->frames[f].dirty) {
        memcpy(dst, frame_mem(p, f), p->unit);
        assert(p->dirty > 0); /* counts the dirty frames */
        p->frames[f].dirty = 0;
        p->dirty--;
        p->frames[f].pins++;
        *frame = p->base + f;
        took = true;
        assert(frame_ok(p, f)); /* P3, P5 */
    }
    pthread_mutex_unlock(&p->mu);
    return took;
}

/* With p->mu held: drops frame f (a block being invalidated) once no one pins it;
 * false when the caller must wait for a release and look again. */
static bool drop_frame(bp_shard *p, uint32_t f)
{
    bp_frame *fr = &p->frames[f];
    if (fr->state != F_VALID || fr->pins) return false;
    unlink_frame(p, f);
    assert(!fr->dirty || p->dirty > 0); /* P5 */
    if (fr->dirty) p->dirty--;
    fr->dirty = 0;
    fr->ref = 0;
    fr->state = F_EMPTY;
    assert(frame_ok(p, f));
    return true;
}

static void invalidate_shard(bp_shard *p, uint32_t file, uint64_t from_blk, uint64_t to_blk)
{
    pthread_mutex_lock(&p->mu);
    for (uint32_t f = 0; f < p->nframes; f++) {
        bp_frame *fr = &p->frames[f];
        for (;;) {
            uint64_t blk = key_blk(fr->key);
            if (fr->state == F_EMPTY || key_file(fr->key) != file || blk < from_blk ||
                blk >= to_blk || drop_frame(p, f))
                break;
            p->waits++;
            pthread_cond_wait(&p->cv, &p->mu);
        }
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void invalidate_block(bp_pool *pool, uint64_t key)
{
    bp_shard *p = shard_of(pool, key);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        uint32_t f = lookup(p, key);
        if (f == NIL) break;
        if (drop_frame(p, f)) {
            pthread_cond_broadcast(&p->cv); /* a frame is free for a waiting victim search */
            break;
        }
        p->waits++;
        pthread_cond_wait(&p->cv, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
}

/* A range short against the pool is looked up block by block; otherwise every frame's
 * key is read, shard by shard: a 6-GiB pool holds 1.5 million frames, and scanning
 * them all took 20-30 ms, with each shard locked while it was scanned. */
void bp_invalidate_range(bp_pool *pool, uint32_t file, uint64_t from_blk, uint64_t to_blk)
{
    if (to_blk <= from_blk) return;
    if (to_blk - from_blk <= pool->nframes / INVALIDATE_LOOKUP_SHARE) {
        for (uint64_t b = from_blk; b < to_blk; b++)
            invalidate_block(pool, make_key(file, b));
        return;
    }
    for (uint32_t i = 0; i < pool->nshards; i++)
        invalidate_shard(&pool->shards[i], file, from_blk, to_blk);
}

void bp_invalidate(bp_pool *pool, uint32_t file, uint64_t from_blk)
{
    bp_invalidate_range(pool, file, from_blk, UINT64_MAX);
}
