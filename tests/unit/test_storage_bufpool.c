/*
 * The buffer pool on its own (storage/sqlite/bufpool.c, private API in sqlite_internal.h):
 * hits and misses, CLOCK's second chance and usage counts, shards, dirty and pinned frames never
 * evicted, write-back hand-off, invalidation, a failed load leaving nothing behind, and several
 * threads reading and writing blocks whose content is checked on every read.
 */
#include "storage/sqlite/sqlite_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define UNIT 4096

/* The "device": block b of file f holds its version number v[f][b] in every word. */
#define NBLK 256
static _Atomic uint32_t dev[2][NBLK];
static atomic_int loads;
static bool fail_loads;

typedef struct ctx {
    int file;
} ctx;

static int64_t load(void *c, uint64_t blk, void *buf)
{
    int f = ((ctx *)c)->file;
    atomic_fetch_add(&loads, 1);
    if (fail_loads) return -EIO;
    if (blk >= NBLK) return 0; /* past the end */
    uint32_t v = atomic_load(&dev[f][blk]);
    uint32_t *w = buf;
    for (size_t i = 0; i < UNIT / 4; i++)
        w[i] = v;
    return UNIT;
}

static uint32_t read_word(bp_pool *p, int file, uint64_t blk, bool *hit)
{
    ctx c = {file};
    uint32_t v = 0;
    assert_int_equal(bp_read(p, (uint32_t)file, blk, 8, &v, sizeof v, load, &c, hit), 0);
    return v;
}

static void reset_dev(void)
{
    for (int f = 0; f < 2; f++)
        for (int b = 0; b < NBLK; b++)
            atomic_store(&dev[f][b], (uint32_t)(f * 1000 + b));
    atomic_store(&loads, 0);
    fail_loads = false;
}

static bp_span span(uint32_t file, uint64_t blk, uint32_t off, uint32_t len)
{
    return (bp_span){.file = file, .blk = blk, .off = off, .len = len};
}

static void hits_misses_and_clock(void **state)
{
    reset_dev();
    bp_pool *p = bp_new(4, UNIT);
    assert_non_null(p);
    bool hit;
    for (int b = 0; b < 4; b++) {
        assert_int_equal(read_word(p, 0, (uint64_t)b, &hit), b);
        assert_false(hit);
    }
    assert_int_equal(read_word(p, 0, 2, &hit), 2);
    assert_true(hit);
    /* Pool full, every reference bit set: the hand clears them all and evicts block 0,
     * then block 1; re-referenced block 2 keeps its place on the next pass. */
    read_word(p, 0, 10, &hit);
    assert_false(hit);
    read_word(p, 0, 2, &hit);
    assert_true(hit);
    read_word(p, 0, 11, &hit);
    assert_false(hit);
    read_word(p, 0, 2, &hit);
    assert_true(hit);
    read_word(p, 0, 0, &hit);
    assert_false(hit);
    bp_stats st;
    bp_get_stats(p, &st);
    assert_int_equal(st.hits, 3);
    assert_int_equal(st.misses, 7);
    assert_int_equal(st.evictions, 3);
    /* a block of the other file is a different block */
    assert_int_equal(read_word(p, 1, 0, &hit), 1000);
    assert_false(hit);
    bp_free(p);
}

/* Generalized CLOCK: a block hit often (an inner b-tree page) survives a burst of
 * blocks read once that would push it out of a one-bit CLOCK. */
static void usage_count_keeps_hot_blocks(void **state)
{
    reset_dev();
    bp_pool *p = bp_new(8, UNIT);
    bool hit;
    read_word(p, 0, 100, &hit);
    assert_false(hit);
    for (int i = 0; i < 5; i++)
        read_word(p, 0, 100, &hit);
    for (int b = 0; b < 14; b++) /* seven fill the pool, seven evict */
        read_word(p, 0, (uint64_t)b, &hit);
    assert_int_equal(read_word(p, 0, 100, &hit), 100);
    assert_true(hit);
    /* a block written but never read again is not hot: it goes with the next sweep */
    uint8_t page[UNIT];
    memset(page, 0, sizeof page);
    bp_pinned pin;
    assert_int_equal(bp_write_through(p, span(0, 200, 0, UNIT), page, NULL, &pin), 0);
    bp_unpin(p, pin.frame);
    for (int b = 20; b < 40; b++)
        read_word(p, 0, (uint64_t)b, &hit);
    read_word(p, 0, 200, &hit);
    assert_false(hit);
    bp_free(p);
}

/* A pool large enough to be sharded: frame handles, dirty hand-off, invalidation and
 * the statistics work across shards. */
static void sharded_pool(void **state)
{
    reset_dev();
    bp_pool *p = bp_new(4096, UNIT);
    assert_non_null(p);
    bool hit;
    for (int f = 0; f < 2; f++)
        for (int b = 0; b < NBLK; b++) {
            assert_int_equal(read_word(p, f, (uint64_t)b, &hit), f * 1000 + b);
            assert_false(hit);
        }
    for (int f = 0; f < 2; f++)
        for (int b = 0; b < NBLK; b++) {
            assert_int_equal(read_word(p, f, (uint64_t)b, &hit), f * 1000 + b);
            assert_true(hit);
        }
    ctx c = {1};
    uint8_t page[UNIT], out[UNIT];
    uint32_t fr[NBLK];
    bp_loader old = {load, &c};
    for (int b = 0; b < NBLK; b++) {
        memset(page, b, sizeof page);
        assert_int_equal(bp_write_back(p, span(1, (uint64_t)b, 0, UNIT), page, &old), 0);
    }
    bp_stats st;
    bp_get_stats(p, &st);
    assert_int_equal(st.dirty, NBLK);
    for (int b = 0; b < NBLK; b++) {
        assert_true(bp_take_dirty(p, 1, (uint64_t)b, out, &fr[b]));
        assert_int_equal(out[7], (uint8_t)b);
    }
    /* the pinned frames are released through the handles, whatever their shard */
    for (int b = 0; b < NBLK; b++)
        bp_unpin(p, fr[b]);
    bp_invalidate(p, 1, 100); /* waits for no pin: every one was released */
    read_word(p, 1, 50, &hit);
    assert_true(hit);
    assert_int_equal(read_word(p, 1, 150, &hit), 1150);
    assert_false(hit);
    bp_get_stats(p, &st);
    assert_int_equal(st.misses, 2 * NBLK + 1);
    assert_int_equal(st.hits, 2 * NBLK + 1);
    assert_int_equal(st.dirty, 0);
    assert_int_equal(st.evictions, 0);
    assert_int_equal(st.frames, 4096);
    bp_free(p);
}

static void dirty_and_pinned_stay(void **state)
{
    reset_dev();
    bp_pool *p = bp_new(3, UNIT);
    ctx c = {0};
    uint8_t page[UNIT];
    memset(page, 0xab, sizeof page);
    bp_loader old = {load, &c};
    bp_pinned pin;
    /* dirty (write-back) block 5, pinned (write-through) block 6 */
    assert_int_equal(bp_write_back(p, span(0, 5, 0, UNIT), page, &old), 0);
    assert_int_equal(bp_write_through(p, span(0, 6, 0, UNIT), page, &old, &pin), 0);
    assert_int_equal(((uint8_t *)pin.data)[100], 0xab);
    /* a whole-block write needs no device read */
    assert_int_equal(atomic_load(&loads), 0);
    bool hit;
    for (int b = 20; b < 40; b++)
        read_word(p, 0, (uint64_t)b, &hit); /* churn through the one free frame */
    read_word(p, 0, 5, &hit);
    assert_true(hit);
    read_word(p, 0, 6, &hit);
    assert_true(hit);
    bp_unpin(p, pin.frame);
    /* write-back hand-off: copied out once, then clean (evictable) */
    uint8_t out[UNIT];
    uint32_t f2;
    assert_true(bp_take_dirty(p, 0, 5, out, &f2));
    assert_int_equal(out[0], 0xab);
    bp_unpin(p, f2);
    assert_false(bp_take_dirty(p, 0, 5, out, &f2));
    bp_stats st;
    bp_get_stats(p, &st);
    assert_int_equal(st.dirty, 0);
    /* a partial write of a block on the device loads it first */
    uint16_t two = 0x1234;
    int before = atomic_load(&loads);
    assert_int_equal(bp_write_back(p, span(0, 50, 0, 2), &two, &old), 0);
    assert_int_equal(atomic_load(&loads), before + 1);
    uint32_t w = 0;
    assert_int_equal(bp_read(p, 0, 50, 4, &w, 4, load, &c, &hit), 0);
    assert_int_equal(w, 50); /* the rest of the block is the device's */
    /* without a loader (a block past the end of the file) it starts zeroed */
    before = atomic_load(&loads);
    assert_int_equal(bp_write_back(p, span(0, 60, 0, 2), &two, NULL), 0);
    assert_int_equal(atomic_load(&loads), before);
    assert_int_equal(bp_read(p, 0, 60, 4, &w, 4, load, &c, &hit), 0);
    assert_true(hit);
    assert_int_equal(w, 0);
    bp_free(p);
}

static void invalidate_and_failed_load(void **state)
{
    reset_dev();
    bp_pool *p = bp_new(8, UNIT);
    bool hit;
    for (int b = 0; b < 6; b++)
        read_word(p, 0, (uint64_t)b, &hit);
    atomic_store(&dev[0][4], 444);
    bp_invalidate(p, 0, 3); /* blocks 3.. go, 0..2 stay */
    read_word(p, 0, 2, &hit);
    assert_true(hit);
    assert_int_equal(read_word(p, 0, 4, &hit), 444);
    assert_false(hit);
    fail_loads = true;
    ctx c = {0};
    uint32_t v;
    assert_int_equal(bp_read(p, 0, 77, 0, &v, 4, load, &c, &hit), -EIO);
    fail_loads = false;
    assert_int_equal(read_word(p, 0, 77, &hit), 77);
    assert_false(hit); /* the failed load left no frame behind */
    bp_free(p);
}

/* A range drops exactly its blocks, whether short against the pool (looked up block
 * by block) or long (every frame's key read); other files keep theirs. */
static void invalidate_range_only(void **state)
{
    reset_dev();
    bp_pool *p = bp_new(64, UNIT); /* one shard; ranges of up to 16 blocks are looked up */
    bool hit;
    for (int b = 0; b < 40; b++)
        read_word(p, 0, (uint64_t)b, &hit);
    for (int b = 0; b < 10; b++)
        read_word(p, 1, (uint64_t)b, &hit);
    bp_invalidate_range(p, 0, 10, 14);
    bp_invalidate_range(p, 0, 20, 40);
    bp_invalidate_range(p, 0, 5, 5); /* empty */
    for (int b = 0; b < 40; b++) {
        read_word(p, 0, (uint64_t)b, &hit);
        bool dropped = (b >= 10 && b < 14) || b >= 20;
        assert_int_equal(hit, !dropped);
    }
    for (int b = 0; b < 10; b++) {
        read_word(p, 1, (uint64_t)b, &hit);
        assert_true(hit);
    }
    bp_free(p);
}

/* Readers check that every block they read holds one version throughout (no torn
 * copy) and never a version older than the device had before the read started. */
typedef struct th_arg {
    bp_pool *p;
    int id;
    atomic_int *errors;
} th_arg;

static void *reader_thread(void *a)
{
    th_arg *t = a;
    ctx c = {0};
    static _Thread_local uint32_t buf[UNIT / 4];
    uint64_t x = (uint64_t)t->id * 7919 + 1;
    for (int i = 0; i < 20000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t b = (x >> 33) % 64;
        uint32_t floor = atomic_load(&dev[0][b]);
        bool hit;
        if (bp_read(t->p, 0, b, 0, buf, UNIT, load, &c, &hit)) {
            atomic_fetch_add(t->errors, 1);
            continue;
        }
        for (size_t k = 1; k < UNIT / 4; k++)
            if (buf[k] != buf[0]) {
                atomic_fetch_add(t->errors, 1);
                break;
            }
        if (buf[0] < floor) atomic_fetch_add(t->errors, 1);
    }
    return NULL;
}

/* One writer (as SQLite has one): write-through, the device updated from the frame
 * while it is pinned, as the VFS does. */
static void *writer_thread(void *a)
{
    th_arg *t = a;
    ctx c = {0};
    static uint32_t page[UNIT / 4];
    uint64_t x = 99;
    for (int i = 0; i < 5000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t b = (x >> 33) % 64;
        uint32_t v = atomic_load(&dev[0][b]) + 1;
        for (size_t k = 0; k < UNIT / 4; k++)
            page[k] = v;
        bp_loader old = {load, &c};
        bp_pinned pin;
        if (bp_write_through(t->p, span(0, b, 0, UNIT), page, &old, &pin)) {
            atomic_fetch_add(t->errors, 1);
            continue;
        }
        atomic_store(&dev[0][b], ((uint32_t *)pin.data)[0]);
        bp_unpin(t->p, pin.frame);
    }
    return NULL;
}

static void threads_see_whole_current_blocks(void **state)
{
    reset_dev();
    bp_pool *p = bp_new(16, UNIT); /* 64 blocks over 16 frames: constant eviction */
    atomic_int errors = 0;
    pthread_t th[4];
    th_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (th_arg){p, i, &errors};
        assert_int_equal(
            pthread_create(&th[i], NULL, i == 0 ? writer_thread : reader_thread, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&errors), 0);
    bp_stats st;
    bp_get_stats(p, &st);
    assert_true(st.evictions > 0);
    bp_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hits_misses_and_clock),
        cmocka_unit_test(usage_count_keeps_hot_blocks),
        cmocka_unit_test(sharded_pool),
        cmocka_unit_test(dirty_and_pinned_stay),
        cmocka_unit_test(invalidate_and_failed_load),
        cmocka_unit_test(invalidate_range_only),
        cmocka_unit_test(threads_see_whole_current_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
