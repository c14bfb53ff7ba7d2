/*
 * trace/lib/source.c: a trace file (or buffer) as a tr_source. Reads through the
 * decompressing input, splits lines or binary records for the format's parser, drops
 * other volumes, restores time order within a bounded window, and rebases time to the
 * first record.
 *
 * Invariants: memory is bounded by the input buffer, the longest line and the sort
 * window whatever the trace's length; records leave in non-decreasing time (a record
 * later than the window allows is clamped to the last time emitted and counted as
 * "late"); every malformed record either fails the source with file:line (or byte
 * offset) and reason, or, with skip_bad, is counted.
 */
#include "trace/lib/lib_internal.h"

#include <stdlib.h>
#include <string.h>

#define BUF_CAP (1u << 20)
#define DEFAULT_WINDOW 65536

typedef struct heap_item {
    tr_record r;
    uint64_t seq; /* arrival order: keeps equal times stable */
} heap_item;

typedef struct file_source {
    tr_source src;
    tr_parse p;
    tr_input *in;
    const tr_format *fmt;
    tr_open_opts opts;
    char *name;
    uint32_t window;
    heap_item *heap;
    uint32_t nheap, heap_cap; /* grows up to window: small traces stay small */
    uint64_t seq;
    bool input_done, failed, have_base, any_emitted;
    uint64_t base, max_seen, last_emitted;
    /* counts of the current pass */
    uint64_t records, nonio, bad, reordered, late, other_volume, zero_length;
    uint64_t passes;
    char first_bad[1024];
    char err[1400];
} file_source;

static bool item_less(const heap_item *a, const heap_item *b)
{
    return a->r.time_ns < b->r.time_ns || (a->r.time_ns == b->r.time_ns && a->seq < b->seq);
}

static void heap_push(file_source *fs, const tr_record *r)
{
    uint32_t i = fs->nheap++;
    heap_item it = {*r, fs->seq++};
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!item_less(&it, &fs->heap[parent])) break;
        fs->heap[i] = fs->heap[parent];
        i = parent;
    }
    fs->heap[i] = it;
}

static tr_record heap_pop(file_source *fs)
{
    tr_record top = fs->heap[0].r;
    heap_item last = fs->heap[--fs->nheap];
    uint32_t i = 0, n = fs->nheap;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && item_less(&fs->heap[c + 1], &fs->heap[c])) c++;
        if (!item_less(&fs->heap[c], &last)) break;
        fs->heap[i] = fs->heap[c];
        i = c;
    }
    if (n) fs->heap[i] = last;
    return top;
}

static const char *where(file_source *fs, char *buf, size_t len)
{
    if (fs->fmt->text)
        snprintf(buf, len, "%s:%llu", fs->name, (unsigned long long)fs->p.line);
    else
        snprintf(buf, len, "%s: byte offset %llu", fs->name, (unsigned long long)fs->p.rec_offset);
    return buf;
}

/* One line into *line (NUL-terminated, without its newline): TR_NEXT_RECORD, TR_NEXT_END
 * or TR_NEXT_ERROR (the reason in p->why). */
static int next_line(tr_parse *p, char **line, size_t *len)
{
    for (;;) {
        unsigned char *s = p->buf + p->start;
        size_t have = p->end - p->start;
        unsigned char *nl = memchr(s, '\n', have);
        if (nl || (p->eof && have > 0)) {
            size_t n = nl ? (size_t)(nl - s) : have;
            if (n > 0 && s[n - 1] == '\r') s[n - 1] = 0;
            if (nl)
                *nl = 0;
            else if (p->end == p->cap) /* no room for a terminator: cannot happen below */
                return tr_parse_fail(p, "line longer than %d bytes", TR_MAX_LINE);
            else
                s[n] = 0;
            p->line++;
            p->start += nl ? n + 1 : n;
            *line = (char *)s;
            *len = n - (n > 0 && s[n - 1] == 0);
            return TR_NEXT_RECORD;
        }
        if (p->eof) return TR_NEXT_END;
        if (have > TR_MAX_LINE) {
            p->line++;
            return tr_parse_fail(p, "line longer than %d bytes (not a text trace?)", TR_MAX_LINE);
        }
        size_t avail;
        /* Ask for one byte more than we have: fill() compacts and reads. */
        if (!tr_parse_peek(p, have + 1, &avail) && avail == SIZE_MAX) return TR_NEXT_ERROR;
    }
}

/* The next raw record from the parser: TR_NEXT_RECORD, TR_NEXT_END or TR_NEXT_ERROR
 * (fs->err set). */
static int pull(file_source *fs, tr_record *r)
{
    char at[600];
    for (;;) {
        int rc;
        memset(r, 0, sizeof *r);
        r->latency_ns = TR_LATENCY_UNKNOWN;
        fs->p.why[0] = 0;
        bool end = false;
        if (fs->fmt->held && fs->fmt->held(&fs->p, r, false) == TR_PARSE_RECORD) {
            rc = TR_PARSE_RECORD; /* a record the format held back, now complete */
        } else if (fs->fmt->text) {
            char *line = NULL;
            size_t len = 0;
            int got = next_line(&fs->p, &line, &len);
            if (got == TR_NEXT_END) {
                end = true;
                rc = TR_PARSE_END;
            } else if (got == TR_NEXT_RECORD) {
                if (tr_blank_line(line)) continue;
                rc = fs->fmt->parse_line(&fs->p, line, len, r);
            } else {
                /* An unreadable stream or an over-long line: we cannot resynchronise. */
                snprintf(fs->err, sizeof fs->err, "%s: %s", where(fs, at, sizeof at), fs->p.why);
                return TR_NEXT_ERROR;
            }
        } else {
            fs->p.rec_offset = fs->p.base + fs->p.start;
            rc = fs->fmt->parse_bin(&fs->p, r);
            if (rc == TR_PARSE_END) end = true;
            if (rc < 0 && fs->p.why[0] == 0) tr_parse_fail(&fs->p, "malformed record");
            if (rc < 0 && fs->p.fatal) {
                snprintf(fs->err, sizeof fs->err, "%s: %s", where(fs, at, sizeof at), fs->p.why);
                return TR_NEXT_ERROR;
            }
        }
        if (end) {
            /* What the format still holds comes out before the end. */
            if (fs->fmt->held && fs->fmt->held(&fs->p, r, true) == TR_PARSE_RECORD)
                rc = TR_PARSE_RECORD;
            else
                return TR_NEXT_END;
        }
        if (rc == TR_PARSE_HELD) continue; /* held by the format */
        if (rc == TR_PARSE_RECORD) {
            if (r->op > TR_DISCARD)
                rc = tr_parse_fail(&fs->p, "unknown operation %u", r->op);
            else if (r->offset > UINT64_MAX - r->length)
                rc = tr_parse_fail(&fs->p, "I/O of %u bytes at offset %llu is out of range",
                                   r->length, (unsigned long long)r->offset);
        }
        if (rc == TR_PARSE_NONE) {
            fs->nonio++;
            continue;
        }
        if (rc < 0) {
            if (!fs->opts.skip_bad) {
                snprintf(fs->err, sizeof fs->err,
                         "%s: %s (--skip-bad counts and skips malformed records)",
                         where(fs, at, sizeof at), fs->p.why);
                return TR_NEXT_ERROR;
            }
            if (fs->bad++ == 0)
                snprintf(fs->first_bad, sizeof fs->first_bad, "%s: %s", where(fs, at, sizeof at),
                         fs->p.why);
            continue;
        }
        r->pos = fs->fmt->text ? fs->p.line : fs->p.rec_offset;
        if (fs->opts.volume >= 0 && r->volume != (uint64_t)fs->opts.volume) {
            fs->other_volume++;
            continue;
        }
        return TR_NEXT_RECORD;
    }
}

static int emit(file_source *fs, tr_record *out, tr_record r)
{
    if (fs->any_emitted && r.time_ns < fs->last_emitted) {
        fs->late++;
        r.time_ns = fs->last_emitted;
    }
    if (!fs->have_base) {
        fs->base = r.time_ns;
        fs->have_base = true;
    }
    fs->last_emitted = r.time_ns;
    fs->any_emitted = true;
    r.time_ns -= fs->base;
    if ((r.op == TR_READ || r.op == TR_WRITE) && r.length == 0) fs->zero_length++;
    fs->records++;
    *out = r;
    return TR_NEXT_RECORD;
}

static int fs_next(tr_source *s, tr_record *out)
{
    file_source *fs = s->ctx;
    if (fs->failed) return TR_NEXT_ERROR;
    tr_record r;
    if (fs->fmt->sorted) {
        int rc = pull(fs, &r);
        if (rc != TR_NEXT_RECORD) {
            fs->failed = rc == TR_NEXT_ERROR;
            return rc;
        }
        if (r.time_ns < fs->max_seen)
            fs->reordered++;
        else
            fs->max_seen = r.time_ns;
        return emit(fs, out, r);
    }
    while (!fs->input_done && fs->nheap < fs->window) {
        int rc = pull(fs, &r);
        if (rc == TR_NEXT_ERROR) {
            fs->failed = true;
            return TR_NEXT_ERROR;
        }
        if (rc == TR_NEXT_END) {
            fs->input_done = true;
            break;
        }
        if (fs->seq > 0 && r.time_ns < fs->max_seen)
            fs->reordered++;
        else
            fs->max_seen = r.time_ns;
        if (fs->nheap == fs->heap_cap) {
            uint32_t cap = fs->heap_cap * 2 < fs->window ? fs->heap_cap * 2 : fs->window;
            fs->heap = sim_xrealloc(fs->heap, (size_t)cap * sizeof *fs->heap);
            fs->heap_cap = cap;
        }
        heap_push(fs, &r);
    }
    if (fs->nheap == 0) return TR_NEXT_END;
    return emit(fs, out, heap_pop(fs));
}

static void reset_pass(file_source *fs)
{
    fs->p.start = fs->p.end = 0;
    fs->p.base = 0;
    fs->p.eof = 0;
    fs->p.line = 0;
    fs->p.rec_offset = 0;
    fs->p.fatal = 0;
    if (fs->fmt && fs->fmt->reset) fs->fmt->reset(&fs->p);
    memset(fs->p.state, 0, sizeof fs->p.state);
    fs->nheap = 0;
    fs->seq = 0;
    fs->input_done = fs->failed = fs->have_base = fs->any_emitted = false;
    fs->base = fs->max_seen = fs->last_emitted = 0;
    fs->records = fs->nonio = fs->bad = fs->reordered = fs->late = 0;
    fs->other_volume = fs->zero_length = 0;
    fs->first_bad[0] = 0;
    fs->err[0] = 0;
}

static int fs_rewind(tr_source *s)
{
    file_source *fs = s->ctx;
    if (tr_input_rewind(fs->in) < 0) {
        snprintf(fs->err, sizeof fs->err, "%s: %s", fs->name, tr_input_error(fs->in));
        fs->failed = true;
        return SIM_ERR;
    }
    reset_pass(fs);
    fs->passes++;
    return SIM_OK;
}

static const char *fs_error(const tr_source *s)
{
    const file_source *fs = s->ctx;
    return fs->err;
}

static void fs_close(tr_source *s)
{
    file_source *fs = s->ctx;
    if (fs->fmt && fs->fmt->reset) fs->fmt->reset(&fs->p);
    tr_input_close(fs->in);
    for (uint32_t i = 0; i < fs->p.nnames; i++)
        free(fs->p.names[i]);
    free(fs->p.names);
    free(fs->p.buf);
    free(fs->heap);
    free(fs->name);
    free(fs);
}

static const tr_source_ops file_ops = {fs_next, fs_rewind, fs_error, fs_close};

/* Scores a text format on the first complete lines of the stream: lines that parse
 * count for it, lines it recognises as headers or other events a little, malformed
 * lines strongly against it. */
typedef struct probe_note {
    int ok;          /* lines that parsed as I/O */
    char first[300]; /* the first malformed line's number and reason */
} probe_note;

static int probe_text(const tr_format *f, const unsigned char *buf, size_t len, bool eof,
                      probe_note *note)
{
    tr_parse p = {0};
    note->ok = 0;
    note->first[0] = 0;
    char line[4096];
    int score = 0, lines = 0;
    size_t pos = 0;
    while (pos < len && lines < 24) {
        const unsigned char *nl = memchr(buf + pos, '\n', len - pos);
        if (!nl && !eof) break; /* an incomplete last line proves nothing */
        size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        size_t c = n < sizeof line - 1 ? n : sizeof line - 1;
        memcpy(line, buf + pos, c);
        line[c] = 0;
        if (c > 0 && line[c - 1] == '\r') line[--c] = 0;
        pos += n + 1;
        if (n >= sizeof line - 1) return -1;
        if (tr_blank_line(line)) continue;
        lines++;
        p.line = (uint64_t)lines;
        tr_record r;
        memset(&r, 0, sizeof r);
        int rc = f->parse_line(&p, line, c, &r);
        /* A few malformed lines do not hide the format (they are reported when read);
         * a format that fails on many lines is not the one. */
        score += rc == 1 || rc == 3 ? 10 : rc == 0 ? 1 : -30;
        note->ok += rc == 1 || rc == 3;
        if (rc < 0 && !note->first[0])
            snprintf(note->first, sizeof note->first, "line %d: %s", lines, p.why);
    }
    if (f->reset) f->reset(&p);
    for (uint32_t i = 0; i < p.nnames; i++)
        free(p.names[i]);
    free(p.names);
    return score;
}

static int detect(file_source *fs, char *err, size_t errlen)
{
    size_t avail;
    /* As much of the start as the buffer holds, up to 64 KiB. */
    const unsigned char *b = tr_parse_peek(&fs->p, 65536, &avail);
    if (!b && avail == SIZE_MAX) {
        snprintf(err, errlen, "%s: %s", fs->name, fs->p.why);
        return SIM_ERR;
    }
    b = fs->p.buf + fs->p.start;
    size_t len = fs->p.end - fs->p.start;
    if (len == 0) {
        snprintf(err, errlen, "%s: the trace is empty; nothing to detect (give --format)",
                 fs->name);
        return SIM_ERR;
    }
    const tr_format *best = NULL, *closest = NULL;
    int best_score = 0;
    probe_note note, closest_note = {0};
    for (const tr_format *const *f = tr_formats(); *f; f++) {
        int score;
        if ((*f)->probe)
            score = (*f)->probe(b, len);
        else if ((*f)->text) {
            score = probe_text(*f, b, len, fs->p.eof, &note);
            if (note.ok > closest_note.ok) {
                closest = *f;
                closest_note = note;
            }
        } else
            continue;
        if (score > best_score) {
            best = *f;
            best_score = score;
        }
    }
    if (!best && closest) {
        /* Say what it looked like and why it was not that, so a broken file of a known
         * format is not reported as an unknown one. */
        snprintf(err, errlen,
                 "%s: not recognised as any trace format; closest is %s, but %s (give "
                 "--format %s to read it and see every error)",
                 fs->name, closest->name, closest_note.first, closest->name);
        return SIM_ERR;
    }
    if (!best) {
        snprintf(err, errlen,
                 "%s: unknown trace format; give --format (`appsim trace formats` lists them)",
                 fs->name);
        return SIM_ERR;
    }
    fs->fmt = best;
    return SIM_OK;
}

static int open_input(tr_input *in, const char *name, const tr_open_opts *opts, tr_source **out,
                      char *err, size_t errlen)
{
    file_source *fs = sim_xcalloc(1, sizeof *fs);
    fs->in = in;
    fs->p.in = in;
    fs->name = sim_xstrdup(name);
    fs->p.name = fs->name;
    fs->p.cap = BUF_CAP;
    fs->p.buf = sim_xmalloc(BUF_CAP);
    if (opts)
        fs->opts = *opts;
    else
        fs->opts.volume = -1;
    fs->window = fs->opts.sort_window ? fs->opts.sort_window : DEFAULT_WINDOW;
    fs->src.ops = &file_ops;
    fs->src.ctx = fs;
    if (fs->opts.format) {
        fs->fmt = tr_find_format(fs->opts.format);
        if (!fs->fmt) {
            snprintf(err, errlen, "unknown trace format '%s' (`appsim trace formats` lists them)",
                     fs->opts.format);
            fs_close(&fs->src);
            return SIM_EXIT_USAGE;
        }
    } else if (detect(fs, err, errlen) < 0) {
        fs_close(&fs->src);
        return SIM_EXIT_USAGE;
    }
    if (!(fs->fmt->text ? fs->fmt->parse_line != NULL : fs->fmt->parse_bin != NULL)) {
        snprintf(err, errlen, "format '%s' cannot be read", fs->fmt->name);
        fs_close(&fs->src);
        return SIM_EXIT_USAGE;
    }
    if (!fs->fmt->sorted) {
        fs->heap_cap = fs->window < 1024 ? fs->window : 1024;
        fs->heap = sim_xmalloc((size_t)fs->heap_cap * sizeof *fs->heap);
    }
    *out = &fs->src;
    return SIM_EXIT_OK;
}

int tr_open(const char *path, const tr_open_opts *opts, tr_source **out, char *err, size_t errlen)
{
    tr_input *in;
    if (tr_input_open_file(path, &in, err, errlen) < 0) return SIM_EXIT_USAGE;
    return open_input(in, path, opts, out, err, errlen);
}

int tr_open_mem(const void *buf, size_t len, const char *name, const tr_open_opts *opts,
                tr_source **out, char *err, size_t errlen)
{
    tr_input *in;
    if (tr_input_open_mem(buf, len, &in, err, errlen) < 0) return SIM_EXIT_USAGE;
    return open_input(in, name ? name : "(memory)", opts, out, err, errlen);
}

void tr_source_where(const tr_source *s, uint64_t pos, uint64_t n, char *buf, size_t len)
{
    if (s->ops != &file_ops) {
        snprintf(buf, len, "record %llu of the trace", (unsigned long long)n);
        return;
    }
    const file_source *fs = s->ctx;
    if (fs->fmt->text)
        snprintf(buf, len, "%s:%llu", fs->name, (unsigned long long)pos);
    else
        snprintf(buf, len, "%s: byte offset %llu", fs->name, (unsigned long long)pos);
}

const char *tr_source_format(const tr_source *s)
{
    return s->ops == &file_ops ? ((const file_source *)s->ctx)->fmt->name : NULL;
}

json_t *tr_source_stats_json(const tr_source *s)
{
    if (s->ops != &file_ops) return json_object();
    const file_source *fs = s->ctx;
    json_t *j = json_pack(
        "{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "file", fs->name, "format",
        fs->fmt->name, "compression", tr_input_compression(fs->in), "records",
        (json_int_t)fs->records, "non_io", (json_int_t)fs->nonio, "skipped_bad",
        (json_int_t)fs->bad, "reordered", (json_int_t)fs->reordered, "late_clamped",
        (json_int_t)fs->late, "other_volumes", (json_int_t)fs->other_volume, "zero_length",
        (json_int_t)fs->zero_length, "sort_window", (json_int_t)(fs->fmt->sorted ? 0 : fs->window));
    json_object_set_new(
        j, fs->fmt->text ? "lines" : "bytes",
        json_integer((json_int_t)(fs->fmt->text ? fs->p.line : fs->p.base + fs->p.start)));
    if (fs->opts.volume >= 0) json_object_set_new(j, "volume", json_integer(fs->opts.volume));
    if (fs->first_bad[0]) json_object_set_new(j, "first_bad", json_string(fs->first_bad));
    return j;
}

int tr_open_cli(const char *path, const char *format, const sim_opt *opts, uint64_t volume,
                bool skip_bad, uint64_t window, tr_source **out)
{
    const sim_opt *v = sim_opts_find(opts, "volume");
    tr_open_opts o = {
        .format = format,
        .skip_bad = skip_bad,
        .volume = v && v->set ? (int64_t)volume : -1,
        .sort_window = (uint32_t)window,
    };
    char err[600];
    int rc = tr_open(path, &o, out, err, sizeof err);
    if (rc) sim_error("%s", err);
    return rc;
}
