/*
 * sim/review/compare_read.c: a result file's JSON read in pieces, its interval series
 * trimmed before anything is built. A result's size is mostly its series: one object per
 * report interval (rate, latency, CPU, device counters, ...) for the run and for every
 * curve point's run, and an `io --all --curve` with a fine --report-interval writes
 * hundreds of MB of them. Built whole as a jansson document, such a file takes four to five
 * times its size in memory; compare reads none of the series, report and export only a
 * few fields of each interval. So the text streams through a small buffer and a
 * validating scanner copies what is kept into a compact text that jansson then parses:
 * memory follows what is kept, not the file's size.
 */
#include "sim/review/review_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper than any result (about 10 levels); jansson's own bound is 2048. */
#define MAX_DEPTH 512
#define KEY_MAX 64

/* What of an object is kept: everything (with series trimmed below it), one interval's
 * charted fields, or the charted percentiles of its latency. */
typedef enum keep_rule { KEEP_ALL, KEEP_INTERVAL, KEEP_LATENCY } keep_rule;

/* The fields of an interval that report and export read (report.c intervals_of,
 * export.c csv_series): a field they start to read is added here. */
static const char *const interval_fields[] = {"t",     "seconds",      "phase", "rate",
                                              "count", "errors_per_s", NULL};
static const char *const latency_fields[] = {"mean_us", "p50_us",  "p90_us", "p95_us",
                                             "p99_us",  "p999_us", "max_us", NULL};

typedef struct reader {
    FILE *f;
    unsigned char in[1 << 16];
    size_t pos, len;
    long line; /* of the next byte, from 1 */
    cmp_series series;
    char *out; /* the kept text, compact */
    size_t olen, ocap;
    char err[200]; /* the first error: of the text at err_line, or of reading (io) */
    long err_line;
    bool io;
} reader;

/* Records the first error; -1 to return. */
static int failed(reader *r, bool io, const char *what)
{
    if (!r->err[0]) {
        snprintf(r->err, sizeof r->err, "%s", what);
        r->err_line = r->line;
        r->io = io;
    }
    return -1;
}

static void cannot_read(reader *r)
{
    char msg[160];
    snprintf(msg, sizeof msg, "cannot read: %s", strerror(errno ? errno : EIO));
    failed(r, true, msg);
}

/* A syntax error; at the end of the file it is that the file ends too early (cut short). */
static int bad(reader *r, const char *what)
{
    bool at_end = r->pos == r->len && !r->err[0] && feof(r->f);
    return failed(r, false, at_end ? "unexpected end of file" : what);
}

static int peek(reader *r)
{
    if (r->err[0]) return -1;
    if (r->pos == r->len) {
        r->len = fread(r->in, 1, sizeof r->in, r->f);
        r->pos = 0;
        if (!r->len && ferror(r->f)) cannot_read(r);
        if (!r->len) return -1;
    }
    return r->in[r->pos];
}

static void emit(reader *r, int c, bool keep)
{
    if (!keep) return;
    if (r->olen == r->ocap) {
        /* appsim-alloc: the kept text grows with the file read: "too large to load" then
         * names the file and compare exits 2 (docs/compare.md) */
        char *p = realloc(r->out, r->ocap * 2);
        if (!p) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "too large to load: out of memory with %zu MiB of its text kept",
                     r->olen >> 20);
            failed(r, true, msg);
            return;
        }
        r->out = p;
        r->ocap *= 2;
    }
    r->out[r->olen++] = (char)c;
}

/* Consumes the next byte, copying it to the kept text when keep. */
static int take(reader *r, bool keep)
{
    int c = peek(r);
    if (c < 0) return c;
    r->pos++;
    if (c == '\n') r->line++;
    emit(r, c, keep);
    return c;
}

static int skip_space(reader *r)
{
    int c;
    while ((c = peek(r)) == ' ' || c == '\t' || c == '\n' || c == '\r')
        take(r, false);
    return c;
}

static int expect(reader *r, int want, bool keep, const char *what)
{
    if (skip_space(r) != want) return bad(r, what);
    take(r, keep);
    return 0;
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The code unit of a \u escape (after its "\u"), or -1. */
static long escape_unit(reader *r, bool keep, char *key, size_t *k)
{
    long u = 0;
    for (int i = 0; i < 4; i++) {
        int c = take(r, keep), h = hex_value(c);
        if (h < 0) return -1;
        if (key && *k < KEY_MAX - 1) key[(*k)++] = (char)c;
        u = u * 16 + h;
    }
    return u;
}

/* A kept string is checked as jansson checks it (escapes, UTF-8, no NUL), so that jansson
 * refuses the kept text for want of memory only. */
static int string_escape(reader *r, bool keep, char *key, size_t *k, long *pending_high)
{
    int c = take(r, keep);
    if (key && *k < KEY_MAX - 1) key[(*k)++] = (char)c;
    if (c != 'u') {
        if (c <= 0 || !strchr("\"\\/bfnrt", c)) return bad(r, "invalid escape in a string");
        return *pending_high ? bad(r, "invalid Unicode escape in a string") : 0;
    }
    long u = escape_unit(r, keep, key, k);
    bool high = u >= 0xD800 && u <= 0xDBFF, low = u >= 0xDC00 && u <= 0xDFFF;
    if (u <= 0 || (*pending_high && !low) || (!*pending_high && low))
        return bad(r, u == 0 ? "\\u0000 in a string" : "invalid Unicode escape in a string");
    *pending_high = high;
    return 0;
}

/* The continuation bytes of a UTF-8 sequence led by c (>= 0x80). */
static int utf8_rest(reader *r, bool keep, char *key, size_t *k, int c)
{
    int n = c >= 0xC2 && c <= 0xDF   ? 1
            : c >= 0xE0 && c <= 0xEF ? 2
            : c >= 0xF0 && c <= 0xF4 ? 3
                                     : 0;
    if (!n) return bad(r, "invalid UTF-8 in a string");
    long cp = c & (0x3F >> n);
    for (int i = 0; i < n; i++) {
        int x = take(r, keep);
        if (x < 0x80 || x > 0xBF) return bad(r, "invalid UTF-8 in a string");
        if (key && *k < KEY_MAX - 1) key[(*k)++] = (char)x;
        cp = cp << 6 | (x & 0x3F);
    }
    static const long least[] = {0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return bad(r, "invalid UTF-8 in a string");
    return 0;
}

/* A string; its raw bytes (escapes as written) also go to key[] when key is given. */
static int string(reader *r, bool keep, char *key)
{
    size_t k = 0;
    long pending_high = 0; /* a \u high surrogate waiting for its low half */
    take(r, keep);         /* the opening quote */
    for (;;) {
        int c = take(r, keep);
        if (c < 0) return bad(r, "unterminated string");
        if (pending_high && c != '\\') return bad(r, "invalid Unicode escape in a string");
        if (c == '"') break;
        if (c < 0x20) return bad(r, "control character in a string");
        if (key && k < KEY_MAX - 1) key[k++] = (char)c;
        if (c == '\\' && string_escape(r, keep, key, &k, &pending_high)) return -1;
        if (c >= 0x80 && keep && utf8_rest(r, keep, key, &k, c)) return -1;
    }
    if (key) key[k] = 0;
    return 0;
}

/* Digits into text[*n] (as far as it holds); false when there is none. */
static bool digits(reader *r, bool keep, char *text, size_t *n, size_t cap)
{
    size_t before = *n;
    for (int c = peek(r); c >= '0' && c <= '9'; c = peek(r)) {
        if (*n < cap - 1) text[*n] = (char)c;
        (*n)++;
        take(r, keep);
    }
    return *n > before;
}

/* A number; a kept one must fit jansson's (a 64-bit integer, a finite double). */
static int number(reader *r, bool keep)
{
    char text[512];
    size_t n = 0;
    bool real = false;
    if (peek(r) == '-') text[n++] = (char)take(r, keep);
    if (peek(r) == '0')
        text[n++] = (char)take(r, keep);
    else if (!digits(r, keep, text, &n, sizeof text))
        return bad(r, "invalid number");
    if (peek(r) == '.') {
        real = true;
        if (n < sizeof text - 1) text[n] = '.';
        n++;
        take(r, keep);
        if (!digits(r, keep, text, &n, sizeof text)) return bad(r, "invalid number");
    }
    if (peek(r) == 'e' || peek(r) == 'E') {
        real = true;
        if (n < sizeof text - 1) text[n] = 'e';
        n++;
        take(r, keep);
        if (peek(r) == '+' || peek(r) == '-') {
            if (n < sizeof text - 1) text[n] = (char)peek(r);
            n++;
            take(r, keep);
        }
        if (!digits(r, keep, text, &n, sizeof text)) return bad(r, "invalid number");
    }
    if (!keep) return 0;
    if (n >= sizeof text) return bad(r, "number too long");
    text[n] = 0;
    errno = 0;
    if (real) {
        double d = strtod(text, NULL);
        if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL))
            return bad(r, "real number overflow");
    } else {
        (void)strtoll(text, NULL, 10);
        if (errno == ERANGE) return bad(r, "integer too big");
    }
    return 0;
}

static int literal(reader *r, bool keep)
{
    const char *word = peek(r) == 't' ? "true" : peek(r) == 'f' ? "false" : "null";
    for (const char *p = word; *p; p++)
        if (take(r, keep) != *p) return bad(r, "invalid literal");
    return 0;
}

static int value(reader *r, bool keep, keep_rule rule, int depth);

static bool listed(const char *const *list, const char *key)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], key)) return true;
    return false;
}

/* How the value of member `key` (its first byte c) of an object kept by `rule` is kept:
 * false when it is dropped, else *child says how its own members are. */
static bool member_kept(const reader *r, keep_rule rule, const char *key, int c, keep_rule *child)
{
    *child = KEEP_ALL;
    switch (rule) {
    case KEEP_ALL:
        if (strcmp(key, "intervals") || c != '[') return true;
        *child = KEEP_INTERVAL; /* for each element of the series */
        return r->series == CMP_SERIES_CHARTED;
    case KEEP_INTERVAL:
        if (!strcmp(key, "latency_us")) {
            *child = KEEP_LATENCY;
            return true;
        }
        return listed(interval_fields, key);
    case KEEP_LATENCY:
        return listed(latency_fields, key);
    }
    return true;
}

static int object(reader *r, bool keep, keep_rule rule, int depth)
{
    take(r, keep);
    if (skip_space(r) == '}') {
        take(r, keep);
        return 0;
    }
    bool any = false; /* a member kept: the next one kept needs a comma */
    for (;;) {
        size_t mark = r->olen;
        if (any) emit(r, ',', keep);
        char key[KEY_MAX];
        if (skip_space(r) != '"') return bad(r, "object key expected");
        if (string(r, keep, key) || expect(r, ':', keep, "':' expected")) return -1;
        keep_rule child;
        bool kept = member_kept(r, rule, key, skip_space(r), &child) && keep;
        if (keep && !kept && r->olen >= mark) r->olen = mark; /* the key goes too */
        if (value(r, kept, child, depth + 1)) return -1;
        any = any || kept;
        int c = skip_space(r);
        if (c == '}') {
            take(r, keep);
            return 0;
        }
        if (c != ',') return bad(r, "',' or '}' expected");
        take(r, false);
    }
}

/* Elements of a series (rule KEEP_INTERVAL) are intervals; of any other array, kept whole. */
static int array(reader *r, bool keep, keep_rule rule, int depth)
{
    take(r, keep);
    if (skip_space(r) == ']') {
        take(r, keep);
        return 0;
    }
    for (;;) {
        if (value(r, keep, rule == KEEP_INTERVAL ? KEEP_INTERVAL : KEEP_ALL, depth + 1)) return -1;
        int c = skip_space(r);
        if (c == ']') {
            take(r, keep);
            return 0;
        }
        if (c != ',') return bad(r, "',' or ']' expected");
        take(r, keep);
    }
}

static int value(reader *r, bool keep, keep_rule rule, int depth)
{
    if (depth > MAX_DEPTH) return bad(r, "nested too deeply");
    int c = skip_space(r);
    int rc;
    if (c == '{')
        rc = object(r, keep, rule, depth);
    else if (c == '[')
        rc = array(r, keep, rule, depth);
    else if (c == '"')
        rc = string(r, keep, NULL);
    else if (c == '-' || (c >= '0' && c <= '9'))
        rc = number(r, keep);
    else if (c == 't' || c == 'f' || c == 'n')
        rc = literal(r, keep);
    else
        rc = bad(r, c < 0 ? "unexpected end of file" : "invalid character");
    return r->err[0] ? -1 : rc;
}

/* Scans the whole file: SIM_OK, or SIM_ERR with r->err. */
/* Scans the whole of r->f: SIM_OK, or SIM_ERR with r->err. */
static int scan(reader *r)
{
    r->line = 1;
    if (!value(r, true, KEEP_ALL, 0) && skip_space(r) >= 0)
        bad(r, "end of file expected after the document");
    return r->err[0] ? SIM_ERR : SIM_OK;
}

json_t *cmp_read_result_stream(FILE *f, cmp_series series, char *err, size_t errlen)
{
    reader *r = sim_xcalloc(1, sizeof *r);
    r->f = f;
    r->series = series;
    r->ocap = 1 << 16;
    r->out = sim_xmalloc(r->ocap);
    int rc = scan(r);
    json_t *doc = NULL;
    if (rc && r->io)
        snprintf(err, errlen, "%s", r->err);
    else if (rc)
        snprintf(err, errlen, "not JSON (line %ld: %s); expected an appsim result file",
                 r->err_line, r->err);
    if (!rc) {
        json_error_t jerr;
        doc = json_loadb(r->out, r->olen, JSON_DECODE_ANY, &jerr);
        /* The scan checked what jansson checks: it failed for want of memory. */
        if (!doc)
            snprintf(err, errlen,
                     "too large to load: out of memory building the %zu MiB of its text kept%s%s",
                     r->olen >> 20, jerr.text[0] ? "; " : "", jerr.text);
    }
    free(r->out);
    free(r);
    return doc;
}

json_t *cmp_read_result(const char *path, cmp_series series, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read: %s", strerror(errno));
        return NULL;
    }
    json_t *doc = cmp_read_result_stream(f, series, err, errlen);
    fclose(f);
    return doc;
}
