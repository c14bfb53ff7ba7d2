/*
 * storage/bufpool.c: the buffer pool of one database instance, shared by all its
 * connections: a fixed number of aligned frames, a chained hash from (file, block) to
 * frame, and CLOCK replacement (a reference bit per frame, cleared as the hand passes;
 * the first unreferenced, unpinned, clean frame is the victim).
 *
 * One mutex guards the metadata and every copy into or out of frame memory, so a
 * reader never sees half of a write. Device I/O happens outside the mutex: a frame
 * being loaded is marked LOADING (others wait on the condition variable), a frame
 * being written to the device from its memory is pinned (not evictable, so a later
 * miss cannot read the block back from the device before the write is there).
 */
#include "storage/sqlite_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { F_EMPTY, F_LOADING, F_VALID };

#define NIL UINT32_MAX

typedef struct bp_frame {
    uint64_t key;
    uint32_t next; /* hash chain */
    uint8_t state;
    uint8_t ref;
    uint8_t dirty;
    uint32_t pins;
} bp_frame;

struct bp_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t unit;
    uint32_t nframes;
    uint32_t hand;
    uint32_t mask; /* buckets - 1 */
    uint32_t *buckets;
    bp_frame *frames;
    uint8_t *mem;
    size_t mem_len;
    uint64_t hits, misses, evictions, write_allocs, waits, dirty;
};

static inline uint64_t make_key(uint32_t file, uint64_t blk)
{
    return ((uint64_t)file << 48) | (blk & ((1ULL << 48) - 1));
}

static inline uint32_t hash_key(const bp_pool *p, uint64_t key)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(h >> 32) & p->mask;
}

static inline uint8_t *frame_mem(const bp_pool *p, uint32_t f)
{
    return p->mem + (size_t)f * p->unit;
}

bp_pool *bp_new(uint64_t nframes, uint32_t unit)
{
    if (nframes < 2 || nframes >= NIL || unit < 512 || (unit & (unit - 1))) return NULL;
    bp_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->unit = unit;
    p->nframes = (uint32_t)nframes;
    uint32_t nb = 1;
    while (nb < p->nframes * 2u && nb < (1u << 31))
        nb <<= 1;
    p->mask = nb - 1;
    p->buckets = malloc(sizeof(uint32_t) * nb);
    p->frames = calloc(p->nframes, sizeof(bp_frame));
    p->mem_len = (size_t)nframes * unit;
    void *mem = NULL;
    if (posix_memalign(&mem, unit > 4096 ? unit : 4096, p->mem_len)) mem = NULL;
    p->mem = mem;
    if (!p->buckets || !p->frames || !p->mem) {
        bp_free(p);
        return NULL;
    }
    memset(p->buckets, 0xff, sizeof(uint32_t) * nb);
    for (uint32_t i = 0; i < p->nframes; i++)
        p->frames[i].next = NIL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    return p;
}

void bp_free(bp_pool *p)
{
    if (!p) return;
    if (p->frames) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
    }
    free(p->buckets);
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
    pthread_mutex_lock(&p->mu);
    out->hits = p->hits;
    out->misses = p->misses;
    out->evictions = p->evictions;
    out->write_allocs = p->write_allocs;
    out->waits = p->waits;
    out->frames = p->nframes;
    out->unit = p->unit;
    out->dirty = p->dirty;
    pthread_mutex_unlock(&p->mu);
}

static uint32_t lookup(const bp_pool *p, uint64_t key)
{
    for (uint32_t f = p->buckets[hash_key(p, key)]; f != NIL; f = p->frames[f].next)
        if (p->frames[f].key == key && p->frames[f].state != F_EMPTY) return f;
    return NIL;
}

static void unlink_frame(bp_pool *p, uint32_t f)
{
    uint32_t *pp = &p->buckets[hash_key(p, p->frames[f].key)];
    while (*pp != f)
        pp = &p->frames[*pp].next;
    *pp = p->frames[f].next;
    p->frames[f].next = NIL;
}

static void link_frame(bp_pool *p, uint32_t f, uint64_t key)
{
    uint32_t b = hash_key(p, key);
    p->frames[f].key = key;
    p->frames[f].next = p->buckets[b];
    p->buckets[b] = f;
}

/* CLOCK: two full sweeps clear every reference bit, so a third finds a victim unless
 * every frame is pinned, loading or dirty; then NIL, and the caller waits for a release
 * and looks the block up again (someone else may have loaded it meanwhile). */
static uint32_t take_victim(bp_pool *p)
{
    for (uint64_t step = 0; step < 3ull * p->nframes; step++) {
        uint32_t f = p->hand;
        p->hand = (p->hand + 1 == p->nframes) ? 0 : p->hand + 1;
        bp_frame *fr = &p->frames[f];
        if (fr->state == F_EMPTY) return f;
        if (fr->state != F_VALID || fr->pins || fr->dirty) continue;
        if (fr->ref) {
            fr->ref = 0;
            continue;
        }
        unlink_frame(p, f);
        fr->state = F_EMPTY;
        p->evictions++;
        return f;
    }
    return NIL;
}

static void wait_release(bp_pool *p)
{
    p->waits++;
    pthread_cond_wait(&p->cv, &p->mu);
}

/* Loads block key into a fresh frame; called and returns with the mutex held, drops it
 * during the I/O. On success the frame is VALID and pinned once. */
static int load_frame(bp_pool *p, uint32_t f, uint64_t key, uint64_t blk, bp_load_fn load,
                      void *ctx, uint32_t *out)
{
    bp_frame *fr = &p->frames[f];
    fr->state = F_LOADING;
    fr->pins = 1;
    fr->ref = 1;
    fr->dirty = 0;
    link_frame(p, f, key);
    pthread_mutex_unlock(&p->mu);
    int64_t n = load(ctx, blk, frame_mem(p, f));
    if (n >= 0 && (uint64_t)n < p->unit) memset(frame_mem(p, f) + n, 0, p->unit - (size_t)n);
    pthread_mutex_lock(&p->mu);
    if (n < 0) {
        unlink_frame(p, f);
        fr->state = F_EMPTY;
        fr->pins = 0;
        pthread_cond_broadcast(&p->cv);
        return (int)n;
    }
    fr->state = F_VALID;
    pthread_cond_broadcast(&p->cv);
    *out = f;
    return 0;
}

/* Finds a VALID frame for key, waiting out a load in progress. NIL when absent. */
static uint32_t find_valid(bp_pool *p, uint64_t key)
{
    for (;;) {
        uint32_t f = lookup(p, key);
        if (f == NIL || p->frames[f].state == F_VALID) return f;
        p->waits++;
        pthread_cond_wait(&p->cv, &p->mu);
    }
}

int bp_read(bp_pool *p, uint32_t file, uint64_t blk, uint32_t off, void *dst, uint32_t len,
            bp_load_fn load, void *ctx, bool *hit)
{
    uint64_t key = make_key(file, blk);
    pthread_mutex_lock(&p->mu);
    uint32_t f, v;
    for (;;) {
        f = find_valid(p, key);
        if (f != NIL) break;
        v = take_victim(p);
        if (v != NIL) break;
        wait_release(p);
    }
    if (f != NIL) {
        p->hits++;
        p->frames[f].ref = 1;
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

int bp_write(bp_pool *p, uint32_t file, uint64_t blk, uint32_t off, const void *src, uint32_t len,
             bool need_old, bp_load_fn load, void *ctx, bool dirty, uint32_t *frame, void **data)
{
    uint64_t key = make_key(file, blk);
    pthread_mutex_lock(&p->mu);
    uint32_t f, v = NIL;
    for (;;) {
        f = find_valid(p, key);
        if (f != NIL) break;
        v = take_victim(p);
        if (v != NIL) break;
        wait_release(p);
    }
    if (f != NIL) {
        p->frames[f].pins++;
    } else if (need_old && (off != 0 || len != p->unit)) {
        p->misses++;
        int rc = load_frame(p, v, key, blk, load, ctx, &f);
        if (rc) {
            pthread_mutex_unlock(&p->mu);
            return rc;
        }
    } else {
        f = v;
        bp_frame *fr = &p->frames[f];
        fr->state = F_VALID;
        fr->pins = 1;
        fr->dirty = 0;
        link_frame(p, f, key);
        if (off != 0 || len != p->unit) memset(frame_mem(p, f), 0, p->unit);
        p->write_allocs++;
    }
    bp_frame *fr = &p->frames[f];
    fr->ref = 1;
    memcpy(frame_mem(p, f) + off, src, len);
    if (dirty) {
        if (!fr->dirty) p->dirty++;
        fr->dirty = 1;
        fr->pins--;
        if (!fr->pins) pthread_cond_broadcast(&p->cv);
    } else {
        *frame = f;
        *data = frame_mem(p, f);
    }
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void bp_unpin(bp_pool *p, uint32_t frame)
{
    pthread_mutex_lock(&p->mu);
    if (--p->frames[frame].pins == 0) pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

bool bp_take_dirty(bp_pool *p, uint32_t file, uint64_t blk, void *dst, uint32_t *frame)
{
    uint64_t key = make_key(file, blk);
    pthread_mutex_lock(&p->mu);
    uint32_t f = lookup(p, key);
    bool took = false;
    if (f != NIL && p->frames[f].state == F_VALID && p->frames[f].dirty) {
        memcpy(dst, frame_mem(p, f), p->unit);
        p->frames[f].dirty = 0;
        p->dirty--;
        p->frames[f].pins++;
        *frame = f;
        took = true;
    }
    pthread_mutex_unlock(&p->mu);
    return took;
}

void bp_invalidate(bp_pool *p, uint32_t file, uint64_t from_blk)
{
    pthread_mutex_lock(&p->mu);
    for (uint32_t f = 0; f < p->nframes; f++) {
        bp_frame *fr = &p->frames[f];
        for (;;) {
            if (fr->state == F_EMPTY || (fr->key >> 48) != file ||
                (fr->key & ((1ULL << 48) - 1)) < from_blk)
                break;
            if (fr->state == F_VALID && !fr->pins) {
                unlink_frame(p, f);
                if (fr->dirty) p->dirty--;
                fr->dirty = 0;
                fr->ref = 0;
                fr->state = F_EMPTY;
                break;
            }
            p->waits++;
            pthread_cond_wait(&p->cv, &p->mu);
        }
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}
