/*
 * trace/lib/parse.c: the helpers every format parser uses: binary peeks over the input
 * buffer, field splitting and exact number parsing, the name table, and the volume
 * map. Parsers never read past the bytes they were given: every number parser checks
 * the whole field and its range.
 */
#include "trace/lib/lib_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int tr_parse_fail(tr_parse *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
    return TR_PARSE_BAD;
}

/* Keeps at least n unread bytes in the buffer when the stream has them. */
static int fill(tr_parse *p, size_t n)
{
    while (p->end - p->start < n && !p->eof) {
        if (p->start > 0) {
            memmove(p->buf, p->buf + p->start, p->end - p->start);
            p->base += p->start;
            p->end -= p->start;
            p->start = 0;
        }
        if (p->end == p->cap) return SIM_OK;
        long r = tr_input_read(p->in, p->buf + p->end, p->cap - p->end);
        if (r < 0) return SIM_ERR;
        if (r == 0) p->eof = 1;
        p->end += (size_t)r;
    }
    return SIM_OK;
}

const unsigned char *tr_parse_peek(tr_parse *p, size_t n, size_t *avail)
{
    if (p->end - p->start < n && fill(p, n) < 0) {
        tr_parse_fail(p, "%s", tr_input_error(p->in));
        p->fatal = 1;
        *avail = SIZE_MAX; /* an input error, not an end */
        return NULL;
    }
    if (p->end - p->start < n) {
        *avail = p->end - p->start;
        return NULL;
    }
    *avail = p->end - p->start;
    return p->buf + p->start;
}

void tr_parse_skip(tr_parse *p, size_t n)
{
    p->start += n;
}

uint32_t tr_parse_name_id(tr_parse *p, const char *name)
{
    for (uint32_t i = 0; i < p->nnames; i++)
        if (!strcmp(p->names[i], name)) return i;
    if (p->nnames >= 65536) return UINT32_MAX;
    if (p->nnames == p->names_cap) {
        uint32_t cap = p->names_cap ? p->names_cap * 2 : 8;
        p->names = sim_xrealloc(p->names, cap * sizeof *p->names);
        p->names_cap = cap;
    }
    p->names[p->nnames] = sim_xstrdup(name);
    return p->nnames++;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        *--e = 0;
    return s;
}

int tr_split(char *line, char delim, char **fields, int max)
{
    int n = 0;
    char *s = line;
    for (;;) {
        char *d = strchr(s, delim);
        if (d) *d = 0;
        if (n == max) return max + 1;
        fields[n++] = trim(s);
        if (!d) return n;
        s = d + 1;
    }
}

int tr_field_u64(const char *s, uint64_t *v)
{
    if (!*s) return SIM_ERR;
    uint64_t x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return SIM_ERR;
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10) return SIM_ERR;
        x = x * 10 + d;
    }
    *v = x;
    return SIM_OK;
}

int tr_field_hex_or_u64(const char *s, uint64_t *v)
{
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        if (!*s) return SIM_ERR;
        uint64_t x = 0;
        for (; *s; s++) {
            int d = isdigit((unsigned char)*s) ? *s - '0'
                    : (*s >= 'a' && *s <= 'f') ? *s - 'a' + 10
                    : (*s >= 'A' && *s <= 'F') ? *s - 'A' + 10
                                               : -1;
            if (d < 0 || x >> 60) return SIM_ERR;
            x = x << 4 | (unsigned)d;
        }
        *v = x;
        return SIM_OK;
    }
    return tr_field_u64(s, v);
}

int tr_field_decimal(const char *s, uint64_t scale, uint64_t *v)
{
    if (!*s || scale == 0) return SIM_ERR;
    uint64_t ip = 0;
    const char *q = s;
    for (; *q >= '0' && *q <= '9'; q++) {
        unsigned d = (unsigned)(*q - '0');
        if (ip > (UINT64_MAX - d) / 10) return SIM_ERR;
        ip = ip * 10 + d;
    }
    bool digits = q > s;
    uint64_t frac = 0;
    if (*q == '.') {
        q++;
        /* Digits of the fraction down to 1/scale; further digits are truncated. */
        uint64_t unit = scale;
        for (; *q >= '0' && *q <= '9'; q++) {
            digits = true;
            if (unit >= 10) {
                unit /= 10;
                frac += (uint64_t)(*q - '0') * unit;
            }
        }
    }
    if (*q || !digits) return SIM_ERR;
    if (ip > (UINT64_MAX - frac) / scale) return SIM_ERR;
    *v = ip * scale + frac;
    return SIM_OK;
}

bool tr_blank_line(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s)) return false;
    return true;
}

uint32_t tr_volmap_get(tr_volmap *m, uint32_t id)
{
    if (m->n * 2 >= m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 64;
        uint32_t *k = sim_xmalloc(cap * sizeof *k), *v = sim_xmalloc(cap * sizeof *v);
        memset(v, 0xff, cap * sizeof *v);
        for (uint32_t i = 0; i < m->cap; i++) {
            if (m->vals[i] == UINT32_MAX) continue;
            uint32_t h = (m->keys[i] * 2654435761u) & (cap - 1);
            while (v[h] != UINT32_MAX)
                h = (h + 1) & (cap - 1);
            k[h] = m->keys[i];
            v[h] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = k;
        m->vals = v;
        m->cap = cap;
    }
    uint32_t h = (id * 2654435761u) & (m->cap - 1);
    while (m->vals[h] != UINT32_MAX) {
        if (m->keys[h] == id) return m->vals[h];
        h = (h + 1) & (m->cap - 1);
    }
    m->keys[h] = id;
    m->vals[h] = m->n;
    return m->n++;
}

void tr_volmap_free(tr_volmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

const unsigned char *tr_parse_record(tr_parse *p, size_t n, int *end)
{
    size_t avail;
    const unsigned char *b = tr_parse_peek(p, n, &avail);
    *end = 0;
    if (b) return b;
    if (avail == 0) {
        *end = 1;
    } else if (avail != SIZE_MAX) {
        tr_parse_fail(p, "truncated record: %zu of %zu bytes before the end of the file", avail, n);
        p->fatal = 1;
    }
    return NULL;
}
