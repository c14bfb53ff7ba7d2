/*
 * storage/sqlite/wal_versions.c: a WAL frame of a page makes the versions it supersedes
 * the buffer pool's next victims: the page's database block and its previous frame; a
 * new WAL header makes the whole last generation of frames go first. Checked through the
 * pool: a block hit often (usage count at its maximum) survives a sweep of new blocks
 * unless it was demoted.
 */
#include "storage/sqlite/sqlite_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#define UNIT 4096
#define DB 0
#define WAL 1

static int64_t load(void *c, uint64_t blk, void *buf)
{
    (void)c;
    memset(buf, (int)(blk & 0xff), UNIT);
    return UNIT;
}

static bool read_hit(bp_pool *p, uint32_t file, uint64_t blk)
{
    uint8_t b;
    bool hit;
    assert_int_equal(bp_read(p, file, blk, 0, &b, 1, load, NULL, &hit), 0);
    return hit;
}

static void make_hot(bp_pool *p, uint32_t file, uint64_t blk)
{
    for (int i = 0; i < 6; i++)
        read_hit(p, file, blk);
}

/* Reads n new blocks of a third file (each new block fills an empty frame, or evicts the
 * first frame at usage zero that the hand finds). */
static void sweep(bp_pool *p, int n)
{
    static uint64_t next = 1000;
    for (int i = 0; i < n; i++)
        read_hit(p, 2, next++);
}

static void put_be32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24), b[1] = (uint8_t)(v >> 16), b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
}

static void wal_header(vf_instance *vi)
{
    uint8_t h[32] = {0};
    put_be32(h + 8, UNIT);
    vf_wal_versions_note(vi, WAL, DB, h, sizeof h, 0);
}

static void frame_header(vf_instance *vi, uint32_t pgno, uint64_t off)
{
    uint8_t h[24] = {0};
    put_be32(h, pgno);
    vf_wal_versions_note(vi, WAL, DB, h, sizeof h, off);
}

static vf_instance *instance(uint64_t frames)
{
    vf_instance *vi = calloc(1, sizeof *vi);
    vi->pool = bp_new(frames, UNIT);
    vi->unit = UNIT;
    pthread_mutex_init(&vi->wal_versions.mu, NULL);
    return vi;
}

static void done(vf_instance *vi)
{
    vf_wal_versions_free(vi);
    bp_free(vi->pool);
    free(vi);
}

static void a_new_frame_demotes_the_database_block(void **state)
{
    (void)state;
    vf_instance *vi = instance(4);
    make_hot(vi->pool, DB, 4); /* page 5 */
    make_hot(vi->pool, DB, 9); /* page 10: not written */
    wal_header(vi);
    frame_header(vi, 5, 32);
    sweep(vi->pool, 3); /* two fill the pool, the third evicts */
    assert_false(read_hit(vi->pool, DB, 4));
    assert_true(read_hit(vi->pool, DB, 9));
    done(vi);
}

static void the_next_frame_demotes_the_previous_one(void **state)
{
    (void)state;
    vf_instance *vi = instance(6);
    wal_header(vi);
    uint64_t first = 32, second = 32 + 24 + UNIT;
    frame_header(vi, 7, first);
    /* the first frame's page spans WAL blocks 0 and 1; block 3 holds another page */
    make_hot(vi->pool, WAL, 0);
    make_hot(vi->pool, WAL, 1);
    make_hot(vi->pool, WAL, 3);
    frame_header(vi, 7, second);
    sweep(vi->pool, 5); /* three fill the pool, two evict */
    assert_false(read_hit(vi->pool, WAL, 1));
    assert_true(read_hit(vi->pool, WAL, 3));
    done(vi);
}

static void a_new_header_demotes_the_last_generation(void **state)
{
    (void)state;
    vf_instance *vi = instance(4);
    wal_header(vi);
    frame_header(vi, 3, 32);
    frame_header(vi, 4, 32 + 24 + UNIT);
    make_hot(vi->pool, WAL, 1);
    make_hot(vi->pool, WAL, 2);
    wal_header(vi);
    sweep(vi->pool, 3);
    assert_false(read_hit(vi->pool, WAL, 1));
    assert_false(read_hit(vi->pool, WAL, 2));
    /* and the map starts over: page 3's first frame of the new generation demotes no
     * frame of the old one */
    make_hot(vi->pool, WAL, 1);
    frame_header(vi, 3, 32);
    sweep(vi->pool, 2);
    assert_true(read_hit(vi->pool, WAL, 1));
    done(vi);
}

static void many_pages_grow_the_map(void **state)
{
    (void)state;
    vf_instance *vi = instance(4);
    wal_header(vi);
    for (uint32_t pg = 1; pg <= 5000; pg++)
        frame_header(vi, pg, 32 + (uint64_t)(pg - 1) * (24 + UNIT));
    assert_int_equal(vi->wal_versions.n, 5000);
    frame_header(vi, 4321, 32 + 5000ull * (24 + UNIT));
    assert_int_equal(vi->wal_versions.n, 5000);
    done(vi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_new_frame_demotes_the_database_block),
        cmocka_unit_test(the_next_frame_demotes_the_previous_one),
        cmocka_unit_test(a_new_header_demotes_the_last_generation),
        cmocka_unit_test(many_pages_grow_the_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
