/*
 * sim/review/hdr_log.c: appsim histograms in HdrHistogram's interval log format (v1.3),
 * so users' HdrHistogram tools (HistogramLogProcessor, HdrHistogramVisualizer, the
 * language ports' log readers) read them.
 *
 * appsim's bucket layout is HdrHistogram's for a lowest discernible value of 1 ns and 3
 * significant digits (2,048 exact values, then 1,024 sub-buckets per power of two), so
 * an appsim bucket index is an HdrHistogram counts index and the export is exact: no
 * re-bucketing. Each histogram is encoded as HdrHistogram's V2 encoding (big-endian
 * header, counts as ZigZag LEB128 with runs of zeros as negative counts), deflated with
 * zlib (the compressed V2 form), then base64.
 */
#include "sim/review/review_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define V2_COOKIE 0x1c849313u            /* V2 encoding, word size byte 0x10 */
#define V2_COMPRESSED_COOKIE 0x1c849314u /* the same, deflated */
#define HDR_SIGNIFICANT_DIGITS 3
#define HDR_LOWEST 1
#define HDR_HIGHEST ((1ull << 42) - 1) /* appsim's clamp: 33,792 counts, as appsim has */

typedef struct bytes {
    unsigned char *p;
    size_t len, cap;
} bytes;

static void put(bytes *b, const void *src, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = sim_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_be(bytes *b, uint64_t v, int nbytes)
{
    unsigned char x[8];
    for (int i = 0; i < nbytes; i++)
        x[i] = (unsigned char)(v >> (8 * (nbytes - 1 - i)));
    put(b, x, (size_t)nbytes);
}

/* ZigZag, then 7 bits a byte, low first; the ninth byte (never reached by counts below
 * 2^55) would carry 8 bits, as HdrHistogram's ZigZagEncoding does. */
static void put_zigzag(bytes *b, int64_t v)
{
    uint64_t z = v < 0 ? ((uint64_t)(-(v + 1)) << 1) | 1 : (uint64_t)v << 1;
    for (int i = 0; i < 8 && z >= 0x80; i++) {
        unsigned char c = (unsigned char)((z & 0x7f) | 0x80);
        put(b, &c, 1);
        z >>= 7;
    }
    unsigned char c = (unsigned char)z;
    put(b, &c, 1);
}

typedef struct counts_writer {
    bytes *b;
    int64_t next; /* next counts index to be written */
} counts_writer;

static void put_zeros(bytes *b, int64_t n)
{
    if (n == 1)
        put_zigzag(b, 0);
    else if (n > 1)
        put_zigzag(b, -n);
}

static void put_count(uint32_t index, uint64_t count, void *arg)
{
    counts_writer *w = arg;
    put_zeros(w->b, (int64_t)index - w->next);
    put_zigzag(w->b, (int64_t)count);
    w->next = (int64_t)index + 1;
}

/* The uncompressed V2 encoding of h. */
static void encode_v2(const sim_hist *h, bytes *out)
{
    put_be(out, V2_COOKIE, 4);
    put_be(out, 0, 4); /* payload length, filled below */
    put_be(out, 0, 4); /* normalizing index offset */
    put_be(out, HDR_SIGNIFICANT_DIGITS, 4);
    put_be(out, HDR_LOWEST, 8);
    put_be(out, HDR_HIGHEST, 8);
    double ratio = 1.0;
    uint64_t bits;
    memcpy(&bits, &ratio, sizeof bits);
    put_be(out, bits, 8);
    size_t start = out->len;
    counts_writer w = {out, 0};
    sim_hist_foreach(h, put_count, &w);
    uint32_t payload = (uint32_t)(out->len - start);
    for (int i = 0; i < 4; i++)
        out->p[4 + i] = (unsigned char)(payload >> (8 * (3 - i)));
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void base64(cmp_buf *out, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        char q[5] = {b64[v >> 18 & 63], b64[v >> 12 & 63], i + 1 < n ? b64[v >> 6 & 63] : '=',
                     i + 2 < n ? b64[v & 63] : '=', 0};
        cmp_buf_puts(out, q);
    }
}

int hdr_encode_compressed(const sim_hist *h, cmp_buf *out)
{
    bytes raw = {0}, z = {0};
    encode_v2(h, &raw);
    uLongf zlen = compressBound((uLong)raw.len);
    z.p = sim_xmalloc(8 + zlen);
    int rc = compress2(z.p + 8, &zlen, raw.p, (uLong)raw.len, Z_DEFAULT_COMPRESSION);
    free(raw.p);
    if (rc != Z_OK) {
        free(z.p);
        return SIM_ERR;
    }
    z.len = 0;
    z.cap = 8;
    put_be(&z, V2_COMPRESSED_COOKIE, 4);
    put_be(&z, zlen, 4);
    base64(out, z.p, 8 + zlen);
    free(z.p);
    return SIM_OK;
}

void hdr_log_header(cmp_buf *out, double start_epoch_s, const char *comment)
{
    cmp_buf_puts(out, "#[Histogram log format version 1.3]\n");
    if (comment) cmp_buf_printf(out, "#[%s]\n", comment);
    time_t t = (time_t)start_epoch_s;
    struct tm tm;
    char when[64] = "";
    if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%a %b %d %H:%M:%S UTC %Y", &tm);
    cmp_buf_printf(out, "#[StartTime: %.3f (seconds since epoch), %s]\n", start_epoch_s, when);
    cmp_buf_printf(out, "#[BaseTime: %.3f (seconds since epoch)]\n", start_epoch_s);
    cmp_buf_puts(out, "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
                      "\"Interval_Compressed_Histogram\"\n");
}

int hdr_log_line(cmp_buf *out, const char *tag, double start_s, double length_s, const sim_hist *h)
{
    if (tag && *tag) cmp_buf_printf(out, "Tag=%s,", tag);
    /* Interval_Max in milliseconds, HdrHistogram's default ratio for nanosecond data. */
    cmp_buf_printf(out, "%.3f,%.3f,%.3f,", start_s, length_s, (double)sim_hist_max(h) / 1e6);
    int rc = hdr_encode_compressed(h, out);
    cmp_buf_puts(out, "\n");
    return rc;
}
