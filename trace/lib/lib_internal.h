/*
 * trace/lib/lib_internal.h: what the pieces of the trace library share and nothing
 * outside trace/lib/ uses: the decompressing input stream, the parser state formats
 * read through, the writer state, the volume table, small number parsers that never
 * read past a field, and the output options and record copy of the subcommands that
 * rewrite a trace. The library's contract is trace/lib/lib.h.
 *
 * Invariants: a tr_parse always knows the line number (text) or the byte offset of
 * the record being parsed (binary), so every error can say where it is.
 */
#ifndef APPSIM_TRACE_LIB_INTERNAL_H
#define APPSIM_TRACE_LIB_INTERNAL_H

#include "trace/lib/lib.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ input */

/* A byte stream from a file or memory, decompressed when it starts with a gzip,
 * bzip2 or zstd magic. */
typedef struct tr_input tr_input;
int tr_input_open_file(const char *path, tr_input **out, char *err, size_t errlen);
int tr_input_open_mem(const void *buf, size_t len, tr_input **out, char *err, size_t errlen);
/* Bytes read (0 = end), or -1 with a message in tr_input_error(). */
long tr_input_read(tr_input *in, void *buf, size_t len);
int tr_input_rewind(tr_input *in);
const char *tr_input_error(const tr_input *in);
const char *tr_input_compression(const tr_input *in); /* "none", "gzip", ... */
void tr_input_close(tr_input *in);

/* ------------------------------------------------------------------ parsing */

#define TR_MAX_LINE 65536
#define TR_PARSE_STATE 512

struct tr_parse {
    tr_input *in;
    const char *name; /* for messages */
    unsigned char *buf;
    size_t cap, start, end; /* unread bytes are buf[start..end) */
    uint64_t base;          /* stream offset of buf[0] */
    int eof;
    uint64_t line;       /* text: number of the line being parsed (1-based) */
    uint64_t rec_offset; /* binary: stream offset of the record being parsed */
    char why[256];       /* reason of the last -1 */
    int fatal;           /* binary: the stream cannot be resynchronised after this -1 */
    /* Name table for formats that name their volumes (fio's file names). */
    char **names;
    uint32_t nnames, names_cap;
    /* Format-private state, zeroed at open and rewind. */
    _Alignas(16) unsigned char state[TR_PARSE_STATE];
};

/* Printf into p->why; returns TR_PARSE_BAD so parsers can `return tr_parse_fail(...)`. */
int tr_parse_fail(tr_parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Binary: a pointer to the next n bytes (n <= 1 MiB), or NULL at end (*avail says how
 * many bytes were left: 0 = a clean end, else a truncated record; SIZE_MAX = the input
 * failed, p->why set, p->fatal set). Does not consume. */
const unsigned char *tr_parse_peek(tr_parse *p, size_t n, size_t *avail);
void tr_parse_skip(tr_parse *p, size_t n); /* after a successful peek of >= n */
/* The next n bytes of a binary record, or NULL: *end = 1 at a clean end, otherwise a
 * truncated record or an input failure (p->why, p->fatal set). Does not consume. */
const unsigned char *tr_parse_record(tr_parse *p, size_t n, int *end);
/* Volume id for a name (fio file names), added on first sight; UINT32_MAX if full. */
uint32_t tr_parse_name_id(tr_parse *p, const char *name);

/* Fields of a delimited line: splits in place (no allocation), at most max fields;
 * returns how many (max + 1 when there were more). Leading/trailing blanks trimmed. */
int tr_split(char *line, char delim, char **fields, int max);
/* Whole-field parsers: the field must be entirely a number. SIM_OK or SIM_ERR. */
int tr_field_u64(const char *s, uint64_t *v);
int tr_field_hex_or_u64(const char *s, uint64_t *v);
/* Decimal with an optional fraction ("1487102040.123456789", "0.5", "12") times scale
 * (e.g. 1e9 for seconds to ns), exact to the ns, no float rounding. */
int tr_field_decimal(const char *s, uint64_t scale, uint64_t *v);
bool tr_blank_line(const char *s);

/* Little-endian loads. */
static inline uint16_t tr_le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t tr_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tr_le64(const unsigned char *p)
{
    return (uint64_t)tr_le32(p) | (uint64_t)tr_le32(p + 4) << 32;
}

/* ------------------------------------------------------------------ writers */

struct tr_emit {
    FILE *f; /* buffered output (plain or through a compressor) */
    const tr_writer_opts *opts;
    uint64_t records;
    uint64_t prev_time, prev_end;
    uint32_t prev_volume;
    bool seekable;
    long header_pos;
    char why[256]; /* a format's reason for refusing a record (errno EINVAL) */
};

/* ------------------------------------------------------------------ helpers */

/* Open-addressing map uint32 volume id -> dense index, for scan and info. */
typedef struct tr_volmap {
    uint32_t *keys;
    uint32_t *vals;
    uint32_t cap, n;
} tr_volmap;
/* Index of id (added when new). */
uint32_t tr_volmap_get(tr_volmap *m, uint32_t id);
void tr_volmap_free(tr_volmap *m);

/* The output options of the commands that write a trace (convert, slice, merge). */
#define TR_OUTPUT_OPTS(force, out, to, fio_file)                                                   \
    {.name = "force", .kind = SIM_OPT_FLAG, .dst = &(force), .help = "replace OUT if it exists"},  \
        {.name = "o",                                                                              \
         .kind = SIM_OPT_STRING,                                                                   \
         .dst = &(out),                                                                            \
         .output = SIM_OUTPUT_NEW,                                                                 \
         .help = "output file (- = stdout; .gz or .zst compresses)"},                              \
        {.name = "to",                                                                             \
         .kind = SIM_OPT_CHOICE,                                                                   \
         .dst = &(to),                                                                             \
         .help = "output format",                                                                  \
         .choices = "appsim|fio-v3"},                                                              \
    {                                                                                              \
        .name = "fio-file", .kind = SIM_OPT_STRING, .dst = &(fio_file),                            \
        .help = "fio-v3: the file or device name written in the log (default replay.data)"         \
    }

/* What a record filter of tr_copy_records answers. */
enum {
    TR_FILTER_STOP = -1, /* no later record is wanted */
    TR_FILTER_SKIP = 0,
    TR_FILTER_WRITE = 1, /* (the filter may have changed the record) */
};
/* Copies src into a new file OUT in format `to` (convert, slice, merge), through
 * rec_filter when given. */
int tr_copy_records(tr_source *src, const char *out, const char *to, const tr_writer_opts *wo,
                    int (*rec_filter)(void *ctx, tr_record *r), void *ctx, uint64_t *written);

#endif
