/*
 * trace/io/io_xfer.c: transfer-size distributions in the forms users bring from vdbench
 * (xfersize=4k, xfersize=(4k,70,8k,30), xfersize=(4k,64k,4k)) and fio (bs=4k,
 * bssplit=4k/70:8k/30), and drawing sizes from them.
 */
#include "trace/io/io_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int size_value(const char *s, uint32_t *out, char *err, size_t errlen)
{
    uint64_t v;
    if (sim_parse_size(s, &v) || v < 512 || v > IO_MAX_XFER) {
        snprintf(err, errlen, "'%s' is not a transfer size from 512 bytes to 16M", s);
        return SIM_ERR;
    }
    *out = (uint32_t)v;
    return SIM_OK;
}

/* Splits buf in place at sep into at most max fields; returns the count or -1. */
static int split(char *buf, char sep, char **f, int max)
{
    int n = 0;
    for (char *p = buf;;) {
        if (n == max) return -1;
        f[n++] = p;
        char *q = strchr(p, sep);
        if (!q) return n;
        *q = 0;
        p = q + 1;
    }
}

static int check_shares(io_xfer *x, char *err, size_t errlen)
{
    double sum = 0;
    for (int i = 0; i < x->nbins; i++) {
        if (x->pct[i] < 0 || x->pct[i] > 100) {
            snprintf(err, errlen, "a share of %g %% is outside 0..100", x->pct[i]);
            return SIM_ERR;
        }
        sum += x->pct[i];
    }
    if (fabs(sum - 100) > 0.01) {
        snprintf(err, errlen, "the shares add up to %g %%, not 100", sum);
        return SIM_ERR;
    }
    return SIM_OK;
}

/* vdbench's parenthesised forms: (size,pct,...) or (min,max,step). */
static int parse_vdbench(char *inner, io_xfer *x, char *err, size_t errlen)
{
    char *f[2 * IO_MAX_BINS];
    int n = split(inner, ',', f, 2 * IO_MAX_BINS);
    if (n < 0) {
        snprintf(err, errlen, "more than %d sizes", IO_MAX_BINS);
        return SIM_ERR;
    }
    if (n == 1) {
        x->kind = IO_XFER_FIXED;
        x->nbins = 1;
        x->pct[0] = 100;
        return size_value(f[0], &x->size[0], err, errlen);
    }
    if (n == 3) {
        x->kind = IO_XFER_RANGE;
        if (size_value(f[0], &x->min, err, errlen) || size_value(f[1], &x->max, err, errlen) ||
            size_value(f[2], &x->step, err, errlen))
            return SIM_ERR;
        if (x->max < x->min || (x->max - x->min) % x->step) {
            snprintf(err, errlen, "(min,max,step): max must be min plus a whole number of steps");
            return SIM_ERR;
        }
        return SIM_OK;
    }
    if (n % 2) {
        snprintf(err, errlen, "expected (size,percent,...) pairs or (min,max,step)");
        return SIM_ERR;
    }
    x->kind = IO_XFER_SPLIT;
    x->nbins = n / 2;
    for (int i = 0; i < x->nbins; i++) {
        if (size_value(f[2 * i], &x->size[i], err, errlen)) return SIM_ERR;
        if (sim_parse_double(f[2 * i + 1], &x->pct[i])) {
            snprintf(err, errlen, "'%s' is not a percentage", f[2 * i + 1]);
            return SIM_ERR;
        }
    }
    return check_shares(x, err, errlen);
}

/* fio's bssplit: size/pct:size/pct; empty shares split what the others leave. */
static int parse_bssplit(char *s, io_xfer *x, char *err, size_t errlen)
{
    char *f[IO_MAX_BINS];
    int n = split(s, ':', f, IO_MAX_BINS);
    if (n < 0) {
        snprintf(err, errlen, "more than %d sizes", IO_MAX_BINS);
        return SIM_ERR;
    }
    x->kind = IO_XFER_SPLIT;
    x->nbins = n;
    double given = 0;
    int empty = 0;
    for (int i = 0; i < n; i++) {
        char *slash = strchr(f[i], '/');
        if (slash) *slash = 0;
        if (size_value(f[i], &x->size[i], err, errlen)) return SIM_ERR;
        if (!slash || !slash[1]) {
            x->pct[i] = -1;
            empty++;
        } else if (sim_parse_double(slash + 1, &x->pct[i])) {
            snprintf(err, errlen, "'%s' is not a percentage", slash + 1);
            return SIM_ERR;
        } else {
            given += x->pct[i];
        }
    }
    for (int i = 0; i < n; i++)
        if (x->pct[i] < 0) x->pct[i] = (100 - given) / empty;
    return check_shares(x, err, errlen);
}

int io_xfer_parse(const char *s, io_xfer *x, char *err, size_t errlen)
{
    memset(x, 0, sizeof *x);
    char buf[1024];
    size_t len = s ? strlen(s) : 0;
    if (len == 0 || len >= sizeof buf) {
        snprintf(err, errlen, "an empty or overlong transfer size");
        return SIM_ERR;
    }
    memcpy(buf, s, len + 1);
    if (buf[0] == '(') {
        if (buf[len - 1] != ')') {
            snprintf(err, errlen, "'%s': a '(' needs its ')'", s);
            return SIM_ERR;
        }
        buf[len - 1] = 0;
        return parse_vdbench(buf + 1, x, err, errlen);
    }
    if (strchr(buf, '/') || strchr(buf, ':')) return parse_bssplit(buf, x, err, errlen);
    x->kind = IO_XFER_FIXED;
    x->nbins = 1;
    x->pct[0] = 100;
    return size_value(buf, &x->size[0], err, errlen);
}

uint32_t io_xfer_draw(const io_xfer *x, sim_rng *rng)
{
    switch (x->kind) {
    case IO_XFER_FIXED:
        return x->size[0];
    case IO_XFER_RANGE:
        return x->min + (uint32_t)sim_rng_range(rng, 0, (x->max - x->min) / x->step) * x->step;
    default: {
        double u = sim_rng_double(rng) * 100.0;
        for (int i = 0; i < x->nbins - 1; i++) {
            if (u < x->pct[i]) return x->size[i];
            u -= x->pct[i];
        }
        return x->size[x->nbins - 1];
    }
    }
}

uint32_t io_xfer_max(const io_xfer *x)
{
    if (x->kind == IO_XFER_RANGE) return x->max;
    uint32_t m = 0;
    for (int i = 0; i < x->nbins; i++)
        if (x->pct[i] > 0 && x->size[i] > m) m = x->size[i];
    return m;
}

uint32_t io_xfer_size_bits(const io_xfer *x)
{
    /* min + k * step: the lowest set bit of a sum is at least the lower of the two. */
    if (x->kind == IO_XFER_RANGE) return x->min | x->step;
    uint32_t bits = 0;
    for (int i = 0; i < x->nbins; i++)
        if (x->pct[i] > 0) bits |= x->size[i];
    return bits;
}

uint32_t io_xfer_min(const io_xfer *x)
{
    if (x->kind == IO_XFER_RANGE) return x->min;
    uint32_t m = UINT32_MAX;
    for (int i = 0; i < x->nbins; i++)
        if (x->pct[i] > 0 && x->size[i] < m) m = x->size[i];
    return m;
}

double io_xfer_mean(const io_xfer *x)
{
    if (x->kind == IO_XFER_RANGE) return (x->min + (double)x->max) / 2;
    double m = 0;
    for (int i = 0; i < x->nbins; i++)
        m += x->size[i] * x->pct[i] / 100.0;
    return m;
}

static const char *short_size(uint32_t v, char *buf, size_t len)
{
    if (v % (1u << 20) == 0)
        snprintf(buf, len, "%um", v >> 20);
    else if (v % 1024 == 0)
        snprintf(buf, len, "%uk", v >> 10);
    else
        snprintf(buf, len, "%u", v);
    return buf;
}

void io_xfer_format(const io_xfer *x, char *buf, size_t len)
{
    char a[32], b[32], c[32];
    if (x->kind == IO_XFER_FIXED) {
        snprintf(buf, len, "%s", short_size(x->size[0], a, sizeof a));
    } else if (x->kind == IO_XFER_RANGE) {
        snprintf(buf, len, "(%s,%s,%s)", short_size(x->min, a, sizeof a),
                 short_size(x->max, b, sizeof b), short_size(x->step, c, sizeof c));
    } else {
        size_t k = (size_t)snprintf(buf, len, "(");
        for (int i = 0; i < x->nbins && k < len; i++)
            k += (size_t)snprintf(buf + k, len - k, "%s%s,%g", i ? "," : "",
                                  short_size(x->size[i], a, sizeof a), x->pct[i]);
        if (k < len) snprintf(buf + k, len - k, ")");
    }
}

json_t *io_xfer_json(const io_xfer *x)
{
    char s[512];
    io_xfer_format(x, s, sizeof s);
    json_t *j = json_pack("{s:s, s:f}", "xfersize", s, "mean_bytes", io_xfer_mean(x));
    if (x->kind == IO_XFER_RANGE) {
        json_object_set_new(j, "min_bytes", json_integer(x->min));
        json_object_set_new(j, "max_bytes", json_integer(x->max));
        json_object_set_new(j, "step_bytes", json_integer(x->step));
        return j;
    }
    json_t *bins = json_array();
    for (int i = 0; i < x->nbins; i++)
        json_array_append_new(bins,
                              json_pack("{s:i, s:f}", "bytes", (int)x->size[i], "pct", x->pct[i]));
    json_object_set_new(j, "sizes", bins);
    return j;
}
