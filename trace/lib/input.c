/*
 * trace/lib/input.c: the byte stream under every trace reader. Plain files and memory
 * buffers are passed through; a stream that starts with the gzip, bzip2 or zstd magic
 * is decompressed on the fly (concatenated members/frames included), so a trace of any
 * length is read with a fixed amount of memory.
 *
 * Invariant: tr_input_read returns decompressed bytes in order; rewind restarts the
 * whole pipeline from the first raw byte.
 */
#include "trace/lib/lib_internal.h"

#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

enum { IN_PLAIN, IN_GZIP, IN_BZIP2, IN_ZSTD };
#define RAW_CAP (256 * 1024)

struct tr_input {
    int kind;
    int fd;                   /* -1 for memory */
    const unsigned char *mem; /* memory source */
    size_t memlen, mempos;
    unsigned char *raw; /* compressed bytes not yet consumed */
    size_t rawpos, rawlen;
    int raw_eof;
    int stream_end; /* the current member ended; another may follow */
    z_stream z;
    bz_stream bz;
    ZSTD_DStream *zs;
    int inited;
    char err[256];
};

static long raw_read(tr_input *in, void *buf, size_t len)
{
    if (in->fd < 0) {
        size_t n = in->memlen - in->mempos;
        if (n > len) n = len;
        memcpy(buf, in->mem + in->mempos, n);
        in->mempos += n;
        return (long)n;
    }
    for (;;) {
        ssize_t n = read(in->fd, buf, len);
        if (n >= 0) return (long)n;
        if (errno == EINTR) continue;
        snprintf(in->err, sizeof in->err, "read failed: %s", strerror(errno));
        return -1;
    }
}

static int raw_fill(tr_input *in)
{
    if (in->rawpos < in->rawlen || in->raw_eof) return SIM_OK;
    long n = raw_read(in, in->raw, RAW_CAP);
    if (n < 0) return SIM_ERR;
    in->rawpos = 0;
    in->rawlen = (size_t)n;
    if (n == 0) in->raw_eof = 1;
    return SIM_OK;
}

static int detect(tr_input *in)
{
    /* Peek at the first raw bytes without losing them: they stay in in->raw. */
    while (in->rawlen < 4 && !in->raw_eof) {
        long n = raw_read(in, in->raw + in->rawlen, RAW_CAP - in->rawlen);
        if (n < 0) return SIM_ERR;
        if (n == 0) in->raw_eof = 1;
        in->rawlen += (size_t)n;
    }
    const unsigned char *b = in->raw;
    in->kind = IN_PLAIN;
    if (in->rawlen >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        in->kind = IN_GZIP;
    else if (in->rawlen >= 3 && b[0] == 'B' && b[1] == 'Z' && b[2] == 'h')
        in->kind = IN_BZIP2;
    else if (in->rawlen >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd)
        in->kind = IN_ZSTD;
    return SIM_OK;
}

static void codec_end(tr_input *in)
{
    if (!in->inited) return;
    if (in->kind == IN_GZIP)
        inflateEnd(&in->z);
    else if (in->kind == IN_BZIP2)
        BZ2_bzDecompressEnd(&in->bz);
    in->inited = 0;
}

static int codec_init(tr_input *in)
{
    codec_end(in);
    if (in->kind == IN_GZIP) {
        memset(&in->z, 0, sizeof in->z);
        if (inflateInit2(&in->z, 15 + 32) != Z_OK) {
            snprintf(in->err, sizeof in->err, "cannot start gzip decompression");
            return SIM_ERR;
        }
    } else if (in->kind == IN_BZIP2) {
        memset(&in->bz, 0, sizeof in->bz);
        if (BZ2_bzDecompressInit(&in->bz, 0, 0) != BZ_OK) {
            snprintf(in->err, sizeof in->err, "cannot start bzip2 decompression");
            return SIM_ERR;
        }
    } else if (in->kind == IN_ZSTD) {
        if (!in->zs) in->zs = ZSTD_createDStream();
        if (!in->zs || ZSTD_isError(ZSTD_initDStream(in->zs))) {
            snprintf(in->err, sizeof in->err, "cannot start zstd decompression");
            return SIM_ERR;
        }
    }
    in->inited = 1;
    in->stream_end = 0;
    return SIM_OK;
}

static int start(tr_input *in)
{
    in->rawpos = in->rawlen = 0;
    in->raw_eof = 0;
    if (detect(in) < 0) return SIM_ERR;
    return in->kind == IN_PLAIN ? 0 : codec_init(in);
}

static int open_common(tr_input *in, tr_input **out, char *err, size_t errlen)
{
    in->raw = sim_xmalloc(RAW_CAP);
    if (start(in) < 0) {
        snprintf(err, errlen, "%s", in->err);
        tr_input_close(in);
        return SIM_ERR;
    }
    *out = in;
    return SIM_OK;
}

int tr_input_open_file(const char *path, tr_input **out, char *err, size_t errlen)
{
    tr_input *in = sim_xcalloc(1, sizeof *in);
    in->fd = !strcmp(path, "-") ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
    if (in->fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        free(in);
        return SIM_ERR;
    }
    posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return open_common(in, out, err, errlen);
}

int tr_input_open_mem(const void *buf, size_t len, tr_input **out, char *err, size_t errlen)
{
    tr_input *in = sim_xcalloc(1, sizeof *in);
    in->fd = -1;
    in->mem = buf;
    in->memlen = len;
    return open_common(in, out, err, errlen);
}

/* What next_member finds; MEMBER_ERROR and MEMBER_NONE are also what the readers return
 * (-1: error, 0 bytes: the end). */
enum { MEMBER_ERROR = -1, MEMBER_NONE = 0, MEMBER_NEXT = 1 };

/* A new member may follow the end of a gzip member or bzip2 stream (pigz, pbzip2). */
static int next_member(tr_input *in)
{
    if (raw_fill(in) < 0) return MEMBER_ERROR;
    if (in->rawpos >= in->rawlen) return MEMBER_NONE; /* no more input: a clean end */
    if (codec_init(in) < 0) return MEMBER_ERROR;
    return MEMBER_NEXT;
}

static long read_gzip(tr_input *in, unsigned char *buf, size_t len)
{
    size_t produced = 0;
    while (produced == 0) {
        if (in->stream_end) {
            int r = next_member(in);
            if (r != MEMBER_NEXT) return r;
        }
        if (raw_fill(in) < 0) return -1;
        in->z.next_in = in->raw + in->rawpos;
        in->z.avail_in = (uInt)(in->rawlen - in->rawpos);
        in->z.next_out = buf;
        in->z.avail_out = (uInt)len;
        int rc = inflate(&in->z, Z_NO_FLUSH);
        in->rawpos = in->rawlen - in->z.avail_in;
        produced = len - in->z.avail_out;
        if (rc == Z_STREAM_END) {
            in->stream_end = 1;
        } else if (rc == Z_BUF_ERROR && in->raw_eof && in->rawpos >= in->rawlen) {
            snprintf(in->err, sizeof in->err, "gzip data ends early (truncated file)");
            return -1;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            snprintf(in->err, sizeof in->err, "gzip data is corrupt: %s",
                     in->z.msg ? in->z.msg : "inflate failed");
            return -1;
        } else if (produced == 0 && in->raw_eof && in->rawpos >= in->rawlen) {
            snprintf(in->err, sizeof in->err, "gzip data ends early (truncated file)");
            return -1;
        }
    }
    return (long)produced;
}

static long read_bzip2(tr_input *in, unsigned char *buf, size_t len)
{
    size_t produced = 0;
    while (produced == 0) {
        if (in->stream_end) {
            int r = next_member(in);
            if (r != MEMBER_NEXT) return r;
        }
        if (raw_fill(in) < 0) return -1;
        in->bz.next_in = (char *)in->raw + in->rawpos;
        in->bz.avail_in = (unsigned)(in->rawlen - in->rawpos);
        in->bz.next_out = (char *)buf;
        in->bz.avail_out = (unsigned)len;
        unsigned before_in = in->bz.avail_in;
        int rc = BZ2_bzDecompress(&in->bz);
        in->rawpos = in->rawlen - in->bz.avail_in;
        produced = len - in->bz.avail_out;
        if (rc == BZ_STREAM_END) {
            in->stream_end = 1;
        } else if (rc != BZ_OK) {
            snprintf(in->err, sizeof in->err, "bzip2 data is corrupt (code %d)", rc);
            return -1;
        } else if (in->raw_eof && before_in == in->bz.avail_in && produced == 0) {
            snprintf(in->err, sizeof in->err, "bzip2 data ends early (truncated file)");
            return -1;
        }
    }
    return (long)produced;
}

static long read_zstd(tr_input *in, unsigned char *buf, size_t len)
{
    ZSTD_outBuffer ob = {buf, len, 0};
    while (ob.pos == 0) {
        if (raw_fill(in) < 0) return -1;
        if (in->rawpos >= in->rawlen) {
            if (!in->stream_end) {
                snprintf(in->err, sizeof in->err, "zstd data ends early (truncated file)");
                return -1;
            }
            return 0;
        }
        ZSTD_inBuffer ib = {in->raw, in->rawlen, in->rawpos};
        size_t rc = ZSTD_decompressStream(in->zs, &ob, &ib);
        in->rawpos = ib.pos;
        if (ZSTD_isError(rc)) {
            snprintf(in->err, sizeof in->err, "zstd data is corrupt: %s", ZSTD_getErrorName(rc));
            return -1;
        }
        /* rc == 0: a frame is complete; more frames may follow. */
        in->stream_end = rc == 0;
    }
    return (long)ob.pos;
}

long tr_input_read(tr_input *in, void *buf, size_t len)
{
    if (len == 0) return 0;
    switch (in->kind) {
    case IN_GZIP:
        return read_gzip(in, buf, len);
    case IN_BZIP2:
        return read_bzip2(in, buf, len);
    case IN_ZSTD:
        return read_zstd(in, buf, len);
    default:
        break;
    }
    /* Plain: first the bytes detect() peeked at. */
    if (in->rawpos < in->rawlen) {
        size_t n = in->rawlen - in->rawpos;
        if (n > len) n = len;
        memcpy(buf, in->raw + in->rawpos, n);
        in->rawpos += n;
        return (long)n;
    }
    return raw_read(in, buf, len);
}

int tr_input_rewind(tr_input *in)
{
    if (in->fd < 0) {
        in->mempos = 0;
    } else if (lseek(in->fd, 0, SEEK_SET) != 0) {
        snprintf(in->err, sizeof in->err, "cannot rewind (not a regular file?): %s",
                 strerror(errno));
        return SIM_ERR;
    }
    return start(in);
}

const char *tr_input_error(const tr_input *in)
{
    return in->err;
}

const char *tr_input_compression(const tr_input *in)
{
    static const char *names[] = {"none", "gzip", "bzip2", "zstd"};
    return names[in->kind];
}

void tr_input_close(tr_input *in)
{
    if (!in) return;
    codec_end(in);
    if (in->zs) ZSTD_freeDStream(in->zs);
    if (in->fd >= 0) close(in->fd);
    free(in->raw);
    free(in);
}
