/*
 * storage/sqlite/wal_versions.c: which page versions a WAL frame supersedes, so that the
 * buffer pool lets them go first.
 *
 * A server changes a page in place in its buffer pool: one frame per page, however often
 * it is written. Under SQLite's WAL each commit appends a new copy of every page it
 * changed, and the pool caches blocks by file offset: the new frame, the page's previous
 * frame and its copy in the database file each take a pool frame. The old ones were read
 * often (the page is hot: that is why it is written again), so CLOCK's usage counts keep
 * them for several sweeps although no new reader asks for them (a new snapshot reads the
 * newest frame). At a cache of half the data, sysbench's hot rows pushed the colder half
 * of the working set out this way. Here the VFS remembers each page's newest frame in
 * the WAL; a new frame of the page demotes the previous frame's blocks and the page's
 * database blocks to the next victims (bp_demote: nothing is dropped, so a reader of an
 * older snapshot still finds them until the hand comes round).
 *
 * SQLite writes a frame as two calls: the 24-byte frame header (page number first,
 * big-endian), then the page. The WAL header (32 bytes at offset 0) starts a new
 * generation of frames and gives the page size; the map is emptied then.
 */
#include "storage/sqlite/sqlite_internal.h"

#include <string.h>

#define WAL_HEADER 32
#define FRAME_HEADER 24

static uint32_t slot_of(const vf_wal_versions *v, uint32_t pgno)
{
    return (pgno * 2654435761u) & (v->cap - 1);
}

static void grow(vf_wal_versions *v)
{
    uint32_t oldcap = v->cap;
    uint32_t *pg = v->pgno;
    uint64_t *off = v->off;
    v->cap = oldcap ? oldcap * 2 : 1024;
    v->pgno = sim_xcalloc(v->cap, sizeof *v->pgno);
    v->off = sim_xcalloc(v->cap, sizeof *v->off);
    for (uint32_t i = 0; i < oldcap; i++) {
        if (!pg[i]) continue;
        uint32_t s = slot_of(v, pg[i]);
        while (v->pgno[s])
            s = (s + 1) & (v->cap - 1);
        v->pgno[s] = pg[i];
        v->off[s] = off[i];
    }
    free(pg);
    free(off);
}

/* Records frame offset `off` as page pgno's newest; the previous one's offset, or 0. */
static uint64_t swap_newest(vf_wal_versions *v, uint32_t pgno, uint64_t off)
{
    if ((v->n + 1) * 4 > v->cap * 3) grow(v);
    uint32_t s = slot_of(v, pgno);
    while (v->pgno[s] && v->pgno[s] != pgno)
        s = (s + 1) & (v->cap - 1);
    uint64_t prev = v->pgno[s] ? v->off[s] : 0;
    if (!v->pgno[s]) v->n++;
    v->pgno[s] = pgno;
    v->off[s] = off;
    return prev;
}

void vf_wal_versions_note(vf_instance *vi, uint32_t wal_file, uint32_t db_file, const void *buf,
                          int amt, uint64_t off)
{
    vf_wal_versions *v = &vi->wal_versions;
    const uint8_t *p = buf;
    uint32_t unit = vi->unit;
    bool wal_header = off == 0 && amt >= WAL_HEADER;
    if (!wal_header && amt != FRAME_HEADER) return; /* a page, or no frame at all */
    pthread_mutex_lock(&v->mu);
    if (wal_header) { /* a new generation of frames */
        v->page_size = st_get_be32(p + 8) == 1 ? 65536 : st_get_be32(p + 8);
        if (v->cap) {
            memset(v->pgno, 0, v->cap * sizeof *v->pgno);
            v->n = 0;
        }
        /* every frame of the last generation is in the database now (SQLite restarts
         * the WAL only then): new readers read the database */
        uint64_t end = v->end;
        v->end = 0;
        pthread_mutex_unlock(&v->mu);
        if (end > WAL_HEADER) bp_demote(vi->pool, wal_file, 1, (end + unit - 1) / unit);
        return;
    }
    uint32_t page = v->page_size;
    uint32_t pgno = off >= WAL_HEADER && page ? st_get_be32(p) : 0;
    uint64_t prev = pgno ? swap_newest(v, pgno, off) : 0;
    if (pgno && off + FRAME_HEADER + page > v->end) v->end = off + FRAME_HEADER + page;
    pthread_mutex_unlock(&v->mu);
    if (!pgno) return;
    if (prev) {
        uint64_t from = prev + FRAME_HEADER, to = from + page;
        bp_demote(vi->pool, wal_file, from / unit, (to + unit - 1) / unit);
    }
    if (db_file != UINT32_MAX) {
        uint64_t from = (uint64_t)(pgno - 1) * page, to = from + page;
        bp_demote(vi->pool, db_file, from / unit, (to + unit - 1) / unit);
    }
}

void vf_wal_versions_free(vf_instance *vi)
{
    free(vi->wal_versions.pgno);
    free(vi->wal_versions.off);
    pthread_mutex_destroy(&vi->wal_versions.mu);
    memset(&vi->wal_versions, 0, sizeof vi->wal_versions);
}
