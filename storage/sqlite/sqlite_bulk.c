/*
 * storage/sqlite/sqlite_bulk.c: builds a rowid table's b-tree and an index b-tree page by page
 * in SQLite's file format (https://sqlite.org/fileformat2.html, sections 1.3-1.6 and
 * 2.1), for bulk loads where SQLite's single writer is the bottleneck: its INSERT path
 * and CREATE INDEX sorter cost about 1.4 us per sysbench row, most of it in the sort.
 *
 * The caller creates the table and its index with SQL, so SQLite wrote the schema and
 * an empty leaf at each root page, and closes its connections. Rows then arrive in
 * increasing rowid order and index records in index order. Pages are packed full, as
 * SQLite's own appends leave them, and appended after the file's last page in the
 * order they complete. The roots, at the pages the schema names, and the header (page
 * count, change counter) are written by st_sqlite_bulk_close() once every tree is
 * complete, so SQLite reads the new trees on its next open, and a load that stops
 * early leaves the empty trees SQLite created. The page holding SQLite's lock bytes
 * (offset 2^30, so page 2^30 / page_size + 1 in files past 1 GiB) is skipped, as
 * SQLite's own allocator skips it.
 *
 * Level 0 holds the leaves and level L the interior pages L steps above them. Every
 * level fills one page at a time and hands each finished page to the level above,
 * with a key:
 *   - table trees (B+-trees): the largest rowid under the page;
 *   - index trees (B-trees): the entry that separates the page from the next one.
 *     That entry lives only in the parent, so a full leaf waits ("held") until the
 *     next entry shows that the separator is not the tree's last one.
 * A page's last child goes into its right-child pointer, not into a cell. SQLite
 * treats an interior page without cells, or a non-root leaf without entries, as
 * corrupt. So when a level ends with one child on its last page, the held page before
 * it gives up its last cell.
 */
#include "storage/sqlite/sqlite_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LEVELS 24      /* far beyond any page count SQLite allows */
#define MAX_KEY 64         /* interior index keys: a few integers */
#define WRITE_PAGES_MIN 16 /* pages gathered per pwrite (at least) */
#define WRITE_BYTES (1u << 20)
#define MAX_ROOTS 16 /* trees one bulk writer builds */
/* SQLite's PENDING_BYTE: the lock bytes sit at this offset, and SQLite never puts
 * b-tree content on the page that holds them (its "locking page", page
 * PENDING_BYTE / page_size + 1), treating a tree that points to it as corrupt. */
#define SQLITE_PENDING_BYTE 0x40000000ull

enum { LEAF_TABLE = 0x0d, INTERIOR_TABLE = 0x05, LEAF_INDEX = 0x0a, INTERIOR_INDEX = 0x02 };

typedef struct bulk_key {
    int64_t rowid;        /* table trees */
    uint8_t rec[MAX_KEY]; /* index trees: the separating entry's record */
    uint32_t len;
} bulk_key;

typedef struct bulk_level {
    uint8_t *page, *held;
    uint32_t ncells, content; /* cell count, start of the cell content area */
    uint32_t last_cell_size;  /* of the cell added last (at `content`) */
    bool pending;             /* a child received and not yet placed (interior) */
    uint32_t pending_child;
    bulk_key pending_key;
    bool has_held; /* a full page waiting, see the top of the file */
    uint32_t held_ncells, held_content, held_last_size, held_right;
    bulk_key held_key;
    int64_t max_rowid; /* table leaves: the largest rowid on the page */
} bulk_level;

struct st_sqlite_bulk {
    int fd;
    char path[4096];
    uint32_t page_size, usable;
    uint32_t first_new, next_pgno; /* appended pages: first_new .. next_pgno-1 */
    uint32_t lock_page;            /* SQLite's locking page: left out of every tree */
    bool format4;                  /* serial types 8 and 9 for 0 and 1 */
    uint8_t header[100];
    /* the tree being built */
    bool open_tree, index;
    uint32_t root, nlevels;
    int64_t last_rowid;
    uint64_t rows;
    bulk_level lv[MAX_LEVELS];
    /* gathered appended pages, written in one pwrite */
    uint8_t *wbuf;
    uint32_t wcap, wcount, wfirst;
    /* finished roots, written at close once every tree is complete */
    uint8_t *roots[MAX_ROOTS];
    uint32_t root_pgno[MAX_ROOTS], nroots;
    bool failed;
};

static uint32_t get_be16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

static void put_be16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* SQLite's varint: big-endian groups of 7 bits, the 9th byte carrying 8. */
static uint32_t put_varint(uint8_t *p, uint64_t v)
{
    if (v <= 0x7f) {
        p[0] = (uint8_t)v;
        return 1;
    }
    if (v & (0xffull << 56)) {
        p[8] = (uint8_t)v;
        v >>= 8;
        for (int i = 7; i >= 0; i--) {
            p[i] = (uint8_t)((v & 0x7f) | 0x80);
            v >>= 7;
        }
        return 9;
    }
    uint8_t tmp[10];
    uint32_t n = 0;
    do {
        tmp[n++] = (uint8_t)((v & 0x7f) | 0x80);
        v >>= 7;
    } while (v);
    tmp[0] &= 0x7f;
    for (uint32_t i = 0; i < n; i++)
        p[i] = tmp[n - 1 - i];
    return n;
}

static uint32_t get_varint(const uint8_t *p, uint64_t *v)
{
    uint64_t x = 0;
    for (uint32_t i = 0; i < 8; i++) {
        x = (x << 7) | (p[i] & 0x7f);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    *v = (x << 8) | p[8];
    return 9;
}

static uint32_t varint_len(uint64_t v)
{
    uint8_t tmp[9];
    return put_varint(tmp, v);
}

/* ------------------------------------------------------------------ records */

static uint64_t int_serial_type(int64_t v, bool format4, uint32_t *body)
{
    if (format4 && (v == 0 || v == 1)) {
        *body = 0;
        return (uint64_t)(8 + v);
    }
    uint64_t u = v < 0 ? ~(uint64_t)v : (uint64_t)v; /* magnitude for the range tests */
    if (u <= 0x7f) return *body = 1, 1;
    if (u <= 0x7fff) return *body = 2, 2;
    if (u <= 0x7fffff) return *body = 3, 3;
    if (u <= 0x7fffffff) return *body = 4, 4;
    if (u <= 0x7fffffffffffull) return *body = 6, 5;
    return *body = 8, 6;
}

size_t st_sqlite_bulk_record(const st_sqlite_bulk *b, const st_sqlite_value *vals, int n,
                             uint8_t *out, size_t cap)
{
    uint64_t types[64];
    uint32_t bodies[64];
    if (n < 0 || n > 64) return 0;
    size_t hdr = 0, body = 0;
    for (int i = 0; i < n; i++) {
        switch (vals[i].type) {
        case ST_SQLITE_NULL:
            types[i] = 0;
            bodies[i] = 0;
            break;
        case ST_SQLITE_INT:
            types[i] = int_serial_type(vals[i].i, b->format4, &bodies[i]);
            break;
        case ST_SQLITE_TEXT:
            types[i] = 13 + 2 * (uint64_t)vals[i].len;
            bodies[i] = (uint32_t)vals[i].len;
            break;
        default:
            return 0;
        }
        hdr += varint_len(types[i]);
        body += bodies[i];
    }
    /* The header size counts its own varint: one byte up to 127, else two (64 columns
     * of at most 9-byte serial types stay far below 16,383). */
    size_t hsize = hdr + 1 <= 127 ? hdr + 1 : hdr + 2;
    if (hsize + body > cap) return 0;
    uint8_t *p = out + put_varint(out, hsize);
    for (int i = 0; i < n; i++)
        p += put_varint(p, types[i]);
    for (int i = 0; i < n; i++) {
        if (vals[i].type == ST_SQLITE_INT) {
            uint64_t v = (uint64_t)vals[i].i;
            for (uint32_t k = bodies[i]; k > 0; k--)
                *p++ = (uint8_t)(v >> (8 * (k - 1)));
        } else if (vals[i].type == ST_SQLITE_TEXT) {
            memcpy(p, vals[i].text, vals[i].len);
            p += vals[i].len;
        }
    }
    return (size_t)(p - out);
}

/* ------------------------------------------------------------------ page output */

static int pwrite_all(st_sqlite_bulk *b, const uint8_t *buf, size_t len, off_t off, char *err,
                      size_t errlen);

static int flush_writes(st_sqlite_bulk *b, char *err, size_t errlen)
{
    size_t len = (size_t)b->wcount * b->page_size;
    if (pwrite_all(b, b->wbuf, len, (off_t)(b->wfirst - 1) * b->page_size, err, errlen))
        return SIM_ERR;
    b->wcount = 0;
    return SIM_OK;
}

/* Appends a finished page; returns its page number (0 on a write error). The locking
 * page is stepped over as zeros (what SQLite leaves there), so the trees never use it
 * and the appended pages stay one contiguous run. */
static uint32_t emit(st_sqlite_bulk *b, const uint8_t *page, char *err, size_t errlen)
{
    if (b->wcount == b->wcap && flush_writes(b, err, errlen)) return 0;
    if (b->wcount == 0) b->wfirst = b->next_pgno;
    if (b->next_pgno == b->lock_page) {
        memset(b->wbuf + (size_t)b->wcount * b->page_size, 0, b->page_size);
        b->wcount++;
        b->next_pgno++;
        if (b->wcount == b->wcap && flush_writes(b, err, errlen)) return 0;
        if (b->wcount == 0) b->wfirst = b->next_pgno;
    }
    memcpy(b->wbuf + (size_t)b->wcount * b->page_size, page, b->page_size);
    b->wcount++;
    return b->next_pgno++;
}

/* Keeps a finished root for close: until then the schema's roots still hold the empty
 * leaves SQLite wrote, so an unfinished load leaves every tree valid and empty. */
static int write_root(st_sqlite_bulk *b, const uint8_t *page, char *err, size_t errlen)
{
    if (b->nroots == MAX_ROOTS) {
        snprintf(err, errlen, "bulk writer: more than %d trees in one file", MAX_ROOTS);
        b->failed = true;
        return SIM_ERR;
    }
    uint8_t *copy = sim_xmalloc(b->page_size);
    memcpy(copy, page, b->page_size);
    b->roots[b->nroots] = copy;
    b->root_pgno[b->nroots++] = b->root;
    return SIM_OK;
}

static int pwrite_all(st_sqlite_bulk *b, const uint8_t *buf, size_t len, off_t off, char *err,
                      size_t errlen)
{
    for (size_t done = 0; done < len;) {
        ssize_t w = pwrite(b->fd, buf + done, len - done, off + (off_t)done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC; /* pwrite returns 0 only when nothing fits */
            /* fail-stop (sim/fault.c): any write that did not happen is a storage fault */
            sim_fault_note(sim_fault_errno_is_fatal(e) ? e : EIO, "writing %s at offset %lld",
                           b->path, (long long)(off + (off_t)done));
            snprintf(err, errlen, "writing %s: %s", b->path, w < 0 ? strerror(e) : "short write");
            b->failed = true;
            return SIM_ERR;
        }
        done += (size_t)w;
    }
    return SIM_OK;
}

/* ------------------------------------------------------------------ pages */

static bool is_leaf(const uint8_t *page)
{
    return page[0] == LEAF_TABLE || page[0] == LEAF_INDEX;
}

static uint32_t header_size(const uint8_t *page)
{
    return is_leaf(page) ? 8 : 12;
}

static void page_start(st_sqlite_bulk *b, bulk_level *l, uint8_t flag)
{
    memset(l->page, 0, b->page_size);
    l->page[0] = flag;
    l->ncells = 0;
    l->content = b->usable;
    l->last_cell_size = 0;
    l->max_rowid = 0;
}

static bool page_fits(const bulk_level *l, uint32_t cell_size)
{
    uint32_t ptrs_end = header_size(l->page) + 2 * (l->ncells + 1);
    return ptrs_end + cell_size <= l->content;
}

/* Adds a cell made of two parts (a head of varints, then a payload, so that rows go
 * onto the page without being copied into a cell first). */
static void page_add_parts(bulk_level *l, const uint8_t *head, uint32_t hn, const uint8_t *body,
                           uint32_t bn)
{
    l->content -= hn + bn;
    memcpy(l->page + l->content, head, hn);
    if (bn) memcpy(l->page + l->content + hn, body, bn);
    put_be16(l->page + header_size(l->page) + 2 * l->ncells, l->content);
    l->ncells++;
    l->last_cell_size = hn + bn;
}

static void page_add(bulk_level *l, const uint8_t *cell, uint32_t size)
{
    page_add_parts(l, cell, size, NULL, 0);
}

/* Fills in the page header; right = the right-most child (interior pages). */
static void page_close(uint8_t *page, uint32_t ncells, uint32_t content, uint32_t right)
{
    put_be16(page + 1, 0); /* no freeblocks */
    put_be16(page + 3, ncells);
    put_be16(page + 5, content == 65536 ? 0 : content);
    page[7] = 0; /* no fragmented bytes */
    if (!is_leaf(page)) put_be32(page + 8, right);
}

/* Moves a level's page being filled into its held slot and starts a fresh one. */
static void hold_page(st_sqlite_bulk *b, bulk_level *l, uint32_t right, const bulk_key *key)
{
    uint8_t *t = l->held;
    l->held = l->page;
    l->page = t;
    l->has_held = true;
    l->held_ncells = l->ncells;
    l->held_content = l->content;
    l->held_last_size = l->last_cell_size;
    l->held_right = right;
    if (key) l->held_key = *key;
    page_start(b, l, l->held[0]);
}

/* Removes the held page's last cell and returns it decoded (child for interior pages;
 * the entry's record for index leaves). The held page has many cells when full. */
static void held_pop(bulk_level *l, uint32_t *child, bulk_key *key, bool index)
{
    const uint8_t *cell = l->held + l->held_content;
    uint32_t off = 0;
    if (!is_leaf(l->held)) {
        *child = st_get_be32(cell);
        off = 4;
    }
    uint64_t v;
    off += get_varint(cell + off, &v);
    if (index) {
        key->len = (uint32_t)v;
        memcpy(key->rec, cell + off, key->len);
    } else {
        key->rowid = (int64_t)v;
    }
    l->held_content += l->held_last_size;
    l->held_ncells--;
    put_be16(l->held + header_size(l->held) + 2 * l->held_ncells, 0);
    memset(l->held + l->held_content - l->held_last_size, 0, l->held_last_size);
}

static uint32_t interior_cell(const st_sqlite_bulk *b, uint8_t *cell, uint32_t child,
                              const bulk_key *key)
{
    put_be32(cell, child);
    if (!b->index) return 4 + put_varint(cell + 4, (uint64_t)key->rowid);
    uint32_t n = 4 + put_varint(cell + 4, key->len);
    memcpy(cell + n, key->rec, key->len);
    return n + key->len;
}

static int interior_add(st_sqlite_bulk *b, uint32_t level, uint32_t child, const bulk_key *key,
                        char *err, size_t errlen);

/* A full held page whose place is now known: out it goes, to the level above. */
static int release_held(st_sqlite_bulk *b, uint32_t level, char *err, size_t errlen)
{
    bulk_level *l = &b->lv[level];
    page_close(l->held, l->held_ncells, l->held_content, l->held_right);
    uint32_t pg = emit(b, l->held, err, errlen);
    if (!pg) return SIM_ERR;
    l->has_held = false;
    return interior_add(b, level + 1, pg, &l->held_key, err, errlen);
}

static int interior_add(st_sqlite_bulk *b, uint32_t level, uint32_t child, const bulk_key *key,
                        char *err, size_t errlen)
{
    if (level >= MAX_LEVELS) {
        snprintf(err, errlen, "b-tree deeper than %d levels", MAX_LEVELS);
        return SIM_ERR;
    }
    bulk_level *l = &b->lv[level];
    if (level >= b->nlevels) {
        b->nlevels = level + 1;
        page_start(b, l, b->index ? INTERIOR_INDEX : INTERIOR_TABLE);
        l->pending = false;
        l->has_held = false;
    }
    if (l->pending) {
        uint8_t cell[4 + 9 + MAX_KEY];
        uint32_t size = interior_cell(b, cell, l->pending_child, &l->pending_key);
        if (page_fits(l, size)) {
            page_add(l, cell, size);
            if (l->has_held && release_held(b, level, err, errlen)) return SIM_ERR;
        } else {
            /* Full: the pending child becomes its right child; the page waits. */
            hold_page(b, l, l->pending_child, &l->pending_key);
        }
    }
    l->pending = true;
    l->pending_child = child;
    l->pending_key = *key;
    return SIM_OK;
}

/* Writes a finished top page as the root, or hands it up. */
static int finish_page(st_sqlite_bulk *b, uint32_t level, const bulk_key *key, char *err,
                       size_t errlen);

static int interior_finish(st_sqlite_bulk *b, uint32_t level, uint32_t child, const bulk_key *key,
                           char *err, size_t errlen)
{
    if (interior_add(b, level, child, key, err, errlen)) return SIM_ERR;
    bulk_level *l = &b->lv[level];
    if (l->has_held) {
        /* The page being filled would hold only its right child: take the held page's
         * last cell, so both pages keep cells. */
        uint32_t moved_child = l->held_right;
        bulk_key moved_key = l->held_key, popped;
        uint32_t popped_child = 0;
        held_pop(l, &popped_child, &popped, b->index);
        l->held_right = popped_child;
        l->held_key = popped;
        if (release_held(b, level, err, errlen)) return SIM_ERR;
        uint8_t cell[4 + 9 + MAX_KEY];
        uint32_t size = interior_cell(b, cell, moved_child, &moved_key);
        page_add(l, cell, size);
    }
    page_close(l->page, l->ncells, l->content, l->pending_child);
    l->pending = false;
    return finish_page(b, level, &l->pending_key, err, errlen);
}

static int finish_page(st_sqlite_bulk *b, uint32_t level, const bulk_key *key, char *err,
                       size_t errlen)
{
    bulk_level *l = &b->lv[level];
    if (level + 1 >= b->nlevels) return write_root(b, l->page, err, errlen);
    uint32_t pg = emit(b, l->page, err, errlen);
    if (!pg) return SIM_ERR;
    return interior_finish(b, level + 1, pg, key, err, errlen);
}

/* ------------------------------------------------------------------ public API */

int st_sqlite_bulk_open(const char *path, st_sqlite_bulk **out, char *err, size_t errlen)
{
    *out = NULL;
    char wal[4200];
    struct stat st;
    snprintf(wal, sizeof wal, "%s-wal", path);
    if (stat(wal, &st) == 0 && st.st_size > 0) {
        snprintf(err, errlen, "%s has a non-empty WAL; checkpoint it before a bulk load", path);
        return SIM_ERR;
    }
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC); /* a checked path (st_db_library_path) */
    if (fd < 0) {
        snprintf(err, errlen, "opening %s: %s", path, strerror(errno));
        return SIM_ERR;
    }
    uint8_t h[100];
    if (pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h || fstat(fd, &st) ||
        memcmp(h, "SQLite format 3", 16)) {
        snprintf(err, errlen, "%s is not a SQLite database", path);
        close(fd);
        return SIM_ERR;
    }
    uint32_t psz = get_be16(h + 16) == 1 ? 65536 : get_be16(h + 16);
    const char *why = NULL;
    if (psz < 512 || psz > 65536 || (psz & (psz - 1)))
        why = "an invalid page size";
    else if (st_get_be32(h + 52))
        why = "auto-vacuum (pointer-map pages)";
    else if (st_get_be32(h + 56) != 1)
        why = "a text encoding other than UTF-8";
    else if (psz - h[20] < 480)
        why = "too many reserved bytes per page";
    if (why) {
        snprintf(err, errlen, "%s uses %s, which the bulk page writer does not produce", path, why);
        close(fd);
        return SIM_ERR;
    }
    uint32_t pages = st_get_be32(h + 28);
    if (!pages || st_get_be32(h + 24) != st_get_be32(h + 92)) pages = (uint32_t)(st.st_size / psz);
    st_sqlite_bulk *b = sim_xcalloc(1, sizeof *b);
    b->wcap = WRITE_BYTES / psz < WRITE_PAGES_MIN ? WRITE_PAGES_MIN : WRITE_BYTES / psz;
    b->wbuf = sim_xmalloc((size_t)b->wcap * psz);
    for (int i = 0; i < MAX_LEVELS; i++) {
        b->lv[i].page = sim_xmalloc(psz);
        b->lv[i].held = sim_xmalloc(psz);
    }
    b->fd = fd;
    snprintf(b->path, sizeof b->path, "%s", path);
    b->page_size = psz;
    b->usable = psz - h[20];
    b->first_new = b->next_pgno = pages + 1;
    st_sqlite_bulk_set_pending_byte(b, SQLITE_PENDING_BYTE);
    b->format4 = st_get_be32(h + 44) >= 4;
    memcpy(b->header, h, sizeof h);
    *out = b;
    return SIM_OK;
}

void st_sqlite_bulk_set_pending_byte(st_sqlite_bulk *b, uint64_t offset)
{
    uint64_t page = offset / b->page_size + 1;
    b->lock_page = page > UINT32_MAX ? 0 : (uint32_t)page; /* 0: beyond any page */
}

int st_sqlite_bulk_begin(st_sqlite_bulk *b, bool index, uint32_t root, char *err, size_t errlen)
{
    if (b->open_tree || b->failed) {
        snprintf(err, errlen, "bulk writer: a tree is already open or a write failed");
        return SIM_ERR;
    }
    if (root < 2 || root >= b->first_new) {
        snprintf(err, errlen, "bulk writer: root page %u is not an existing page of %s", root,
                 b->path);
        return SIM_ERR;
    }
    b->open_tree = true;
    b->index = index;
    b->root = root;
    b->nlevels = 1;
    b->rows = 0;
    b->last_rowid = 0;
    b->lv[0].has_held = false;
    page_start(b, &b->lv[0], index ? LEAF_INDEX : LEAF_TABLE);
    return SIM_OK;
}

int st_sqlite_bulk_row(st_sqlite_bulk *b, int64_t rowid, const uint8_t *rec, size_t len, char *err,
                       size_t errlen)
{
    if (!b->open_tree || b->index) {
        snprintf(err, errlen, "bulk writer: no table tree open");
        return SIM_ERR;
    }
    if (b->rows && rowid <= b->last_rowid) {
        snprintf(err, errlen, "bulk writer: rowid %lld after %lld (rows must ascend)",
                 (long long)rowid, (long long)b->last_rowid);
        return SIM_ERR;
    }
    if (len > b->usable - 35) { /* the most a table leaf cell keeps on its page */
        snprintf(err, errlen, "bulk writer: a %zu-byte row needs overflow pages", len);
        return SIM_ERR;
    }
    uint8_t head[18];
    uint32_t hn = put_varint(head, len);
    hn += put_varint(head + hn, (uint64_t)rowid);
    uint32_t size = hn + (uint32_t)len;
    bulk_level *l = &b->lv[0];
    if (!page_fits(l, size)) {
        page_close(l->page, l->ncells, l->content, 0);
        uint32_t pg = emit(b, l->page, err, errlen);
        bulk_key key = {.rowid = l->max_rowid};
        if (!pg || interior_add(b, 1, pg, &key, err, errlen)) return SIM_ERR;
        page_start(b, l, LEAF_TABLE);
    }
    page_add_parts(l, head, hn, rec, (uint32_t)len);
    l->max_rowid = rowid;
    b->last_rowid = rowid;
    b->rows++;
    return SIM_OK;
}

static uint32_t index_max_local(const st_sqlite_bulk *b)
{
    return (b->usable - 12) * 64 / 255 - 23;
}

int st_sqlite_bulk_entry(st_sqlite_bulk *b, const uint8_t *rec, size_t len, char *err,
                         size_t errlen)
{
    if (!b->open_tree || !b->index) {
        snprintf(err, errlen, "bulk writer: no index tree open");
        return SIM_ERR;
    }
    if (len > MAX_KEY || len > index_max_local(b)) {
        snprintf(err, errlen, "bulk writer: a %zu-byte index entry is larger than it writes", len);
        return SIM_ERR;
    }
    bulk_level *l = &b->lv[0];
    if (l->has_held) {
        /* The held leaf's separator is not the last entry: it goes up. */
        page_close(l->held, l->held_ncells, l->held_content, 0);
        uint32_t pg = emit(b, l->held, err, errlen);
        l->has_held = false;
        if (!pg || interior_add(b, 1, pg, &l->held_key, err, errlen)) return SIM_ERR;
    }
    uint8_t cell[9 + MAX_KEY];
    uint32_t size = put_varint(cell, len);
    memcpy(cell + size, rec, len);
    size += (uint32_t)len;
    if (!page_fits(l, size)) {
        bulk_key sep = {.len = (uint32_t)len};
        memcpy(sep.rec, rec, len);
        hold_page(b, l, 0, &sep);
    } else {
        page_add(l, cell, size);
    }
    b->rows++;
    return SIM_OK;
}

static int end_tree(st_sqlite_bulk *b, char *err, size_t errlen)
{
    bulk_level *l = &b->lv[0];
    bulk_key key = {.rowid = l->max_rowid};
    if (b->index && l->has_held) {
        /* The last entry was held as a separator: the held leaf's last entry separates
         * instead, and the last entry becomes the last leaf. */
        bulk_key sep = l->held_key, popped;
        uint32_t unused;
        held_pop(l, &unused, &popped, true);
        page_close(l->held, l->held_ncells, l->held_content, 0);
        uint32_t pg = emit(b, l->held, err, errlen);
        l->has_held = false;
        if (!pg || interior_add(b, 1, pg, &popped, err, errlen)) return SIM_ERR;
        uint8_t cell[9 + MAX_KEY];
        uint32_t size = put_varint(cell, sep.len);
        memcpy(cell + size, sep.rec, sep.len);
        page_add(l, cell, size + sep.len);
    }
    page_close(l->page, l->ncells, l->content, 0);
    if (finish_page(b, 0, &key, err, errlen)) return SIM_ERR;
    return b->wcount ? flush_writes(b, err, errlen) : 0;
}

int st_sqlite_bulk_end(st_sqlite_bulk *b, char *err, size_t errlen)
{
    if (!b->open_tree || b->failed) {
        snprintf(err, errlen, "bulk writer: no tree open, or a write failed");
        return SIM_ERR;
    }
    if (end_tree(b, err, errlen)) {
        b->failed = true; /* close() must not write roots of a half-built tree */
        return SIM_ERR;
    }
    b->open_tree = false;
    return SIM_OK;
}

int st_sqlite_bulk_close(st_sqlite_bulk *b, char *err, size_t errlen)
{
    if (!b) return SIM_OK;
    int rc = 0;
    if (b->open_tree || b->failed) {
        /* Unfinished: leave the file as SQLite wrote it (empty trees), without the
         * appended pages. */
        if (!b->failed) snprintf(err, errlen, "bulk load of %s did not finish", b->path);
        if (ftruncate(b->fd, (off_t)(b->first_new - 1) * b->page_size))
            sim_warn("truncating %s after an unfinished bulk load: %s", b->path, strerror(errno));
        rc = -1;
    } else {
        for (uint32_t i = 0; i < b->nroots && !rc; i++)
            rc = pwrite_all(b, b->roots[i], b->page_size,
                            (off_t)(b->root_pgno[i] - 1) * b->page_size, err, errlen);
        uint8_t *h = b->header;
        uint32_t counter = st_get_be32(h + 24) + 1;
        put_be32(h + 24, counter);
        put_be32(h + 92, counter);
        put_be32(h + 28, b->next_pgno - 1);
        if (!rc) rc = pwrite_all(b, h, 100, 0, err, errlen);
    }
    close(b->fd);
    for (int i = 0; i < MAX_LEVELS; i++) {
        free(b->lv[i].page);
        free(b->lv[i].held);
    }
    for (uint32_t i = 0; i < b->nroots; i++)
        free(b->roots[i]);
    free(b->wbuf);
    free(b);
    return rc;
}

uint64_t st_sqlite_bulk_pages(const st_sqlite_bulk *b)
{
    return b->next_pgno - b->first_new;
}
