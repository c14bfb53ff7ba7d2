/*
 * trace/lib/writer.c: writes records in any format that has a writer, to a file, to
 * stdout ("-"), or through gzip / zstd when the name ends in .gz / .zst. The file is
 * written under a temporary name and renamed on a successful close, so an interrupted
 * convert never leaves a half-written trace under the final name.
 */
#include "trace/lib/lib_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

struct tr_writer {
    tr_emit e;
    const tr_format *fmt;
    FILE *raw;        /* the file under the compressor (or == e.f) */
    char *path, *tmp; /* tmp NULL: written in place (stdout, a device, a FIFO) */
    int failed_errno;
    /* compressors */
    z_stream z;
    int zinit;
    ZSTD_CStream *zs;
    unsigned char out[65536];
};

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int raw_put(tr_writer *w, const void *b, size_t n)
{
    return fwrite(b, 1, n, w->raw) == n ? SIM_OK : SIM_ERR;
}

static ssize_t gz_write(void *cookie, const char *buf, size_t len)
{
    tr_writer *w = cookie;
    w->z.next_in = (unsigned char *)buf;
    w->z.avail_in = (uInt)len;
    while (w->z.avail_in) {
        w->z.next_out = w->out;
        w->z.avail_out = sizeof w->out;
        if (deflate(&w->z, Z_NO_FLUSH) == Z_STREAM_ERROR) return -1;
        if (raw_put(w, w->out, sizeof w->out - w->z.avail_out)) return -1;
    }
    return (ssize_t)len;
}

static int gz_close(void *cookie)
{
    tr_writer *w = cookie;
    int rc;
    do {
        w->z.next_out = w->out;
        w->z.avail_out = sizeof w->out;
        rc = deflate(&w->z, Z_FINISH);
        if (rc == Z_STREAM_ERROR || raw_put(w, w->out, sizeof w->out - w->z.avail_out))
            return SIM_ERR;
    } while (rc != Z_STREAM_END);
    return SIM_OK;
}

static ssize_t zst_write(void *cookie, const char *buf, size_t len)
{
    tr_writer *w = cookie;
    ZSTD_inBuffer in = {buf, len, 0};
    while (in.pos < in.size) {
        ZSTD_outBuffer out = {w->out, sizeof w->out, 0};
        if (ZSTD_isError(ZSTD_compressStream2(w->zs, &out, &in, ZSTD_e_continue))) return -1;
        if (raw_put(w, w->out, out.pos)) return -1;
    }
    return (ssize_t)len;
}

static int zst_close(void *cookie)
{
    tr_writer *w = cookie;
    ZSTD_inBuffer in = {NULL, 0, 0};
    size_t left;
    do {
        ZSTD_outBuffer out = {w->out, sizeof w->out, 0};
        left = ZSTD_compressStream2(w->zs, &out, &in, ZSTD_e_end);
        if (ZSTD_isError(left) || raw_put(w, w->out, out.pos)) return SIM_ERR;
    } while (left);
    return SIM_OK;
}

static void free_writer(tr_writer *w)
{
    if (w->zinit) deflateEnd(&w->z);
    if (w->zs) ZSTD_freeCStream(w->zs);
    free(w->path);
    free(w->tmp);
    free(w);
}

int tr_writer_open(const char *path, const char *format, const tr_writer_opts *o, tr_writer **out,
                   char *err, size_t errlen)
{
    const tr_format *f = tr_find_format(format);
    if (!f || !f->write_record) {
        snprintf(err, errlen, "cannot write format '%s'; writable formats: appsim, fio-v3", format);
        return SIM_EXIT_USAGE;
    }
    tr_writer *w = sim_xcalloc(1, sizeof *w);
    w->fmt = f;
    w->e.opts = o;
    bool to_stdout = !strcmp(path, "-");
    if (to_stdout) {
        w->raw = stdout;
    } else {
        struct stat st;
        if (o && !o->overwrite && stat(path, &st) == 0) {
            snprintf(err, errlen,
                     "%s already exists: remove it, choose another name, or pass "
                     "--force to replace it",
                     path);
            free_writer(w);
            return SIM_EXIT_USAGE;
        }
        bool in_place = sim_atomic_in_place(path);
        w->path = sim_xstrdup(path);
        w->tmp = in_place ? NULL : sim_xmalloc(4096);
        if (!in_place && sim_atomic_tmp_name(path, w->tmp, 4096)) {
            free_writer(w);
            snprintf(err, errlen, "%s: the path is too long for its temporary file", path);
            return SIM_EXIT_USAGE;
        }
        w->raw = in_place ? fopen(path, "wb") : fopen(w->tmp, "wbx");
        if (!w->raw) {
            snprintf(err, errlen, "cannot create %s: %s", in_place ? path : w->tmp,
                     strerror(errno));
            free_writer(w);
            return SIM_EXIT_USAGE;
        }
    }
    if (!to_stdout && ends_with(path, ".gz")) {
        if (deflateInit2(&w->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            goto codec_fail;
        w->zinit = 1;
        cookie_io_functions_t io = {.write = gz_write, .close = gz_close};
        w->e.f = fopencookie(w, "w", io);
    } else if (!to_stdout && ends_with(path, ".zst")) {
        w->zs = ZSTD_createCStream();
        if (!w->zs || ZSTD_isError(ZSTD_CCtx_setParameter(w->zs, ZSTD_c_compressionLevel, 3)))
            goto codec_fail;
        cookie_io_functions_t io = {.write = zst_write, .close = zst_close};
        w->e.f = fopencookie(w, "w", io);
    } else {
        w->e.f = w->raw;
        w->e.seekable = !to_stdout;
    }
    if (!w->e.f) goto codec_fail;
    if (f->write_begin && f->write_begin(&w->e) < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        tr_writer_abort(w);
        return SIM_EXIT_FAIL;
    }
    *out = w;
    return SIM_EXIT_OK;
codec_fail:
    snprintf(err, errlen, "cannot start the compressor for %s", path);
    if (w->raw && w->raw != stdout) fclose(w->raw);
    if (w->tmp) unlink(w->tmp);
    free_writer(w);
    return SIM_EXIT_FAIL;
}

int tr_writer_put(tr_writer *w, const tr_record *r)
{
    if (w->failed_errno) return SIM_ERR;
    if (w->fmt->write_record(&w->e, r) < 0) {
        w->failed_errno = errno ? errno : EIO;
        return SIM_ERR;
    }
    w->e.records++;
    return SIM_OK;
}

void tr_writer_abort(tr_writer *w)
{
    if (w->e.f != w->raw) fclose(w->e.f);
    if (w->raw != stdout) {
        fclose(w->raw);
        if (w->tmp) unlink(w->tmp);
    } else {
        fflush(stdout);
    }
    free_writer(w);
}

int tr_writer_close(tr_writer *w, char *err, size_t errlen)
{
    int rc = 0;
    int e = w->failed_errno;
    if (!e && w->fmt->write_end && w->fmt->write_end(&w->e) < 0) e = errno ? errno : EIO;
    if (w->e.f != w->raw && fclose(w->e.f) != 0 && !e) e = errno ? errno : EIO;
    if (w->raw == stdout) {
        if (fflush(stdout) != 0 && !e) e = errno;
    } else if (!w->tmp) {
        if (fclose(w->raw) != 0 && !e) e = errno;
    } else {
        if (!e && fflush(w->raw) != 0) e = errno;
        if (!e) e = sim_atomic_commit(fileno(w->raw), w->tmp, w->path); /* and the directory */
        if (fclose(w->raw) != 0 && !e) e = errno;
        if (e) unlink(w->tmp);
    }
    if (e) {
        if (err)
            snprintf(err, errlen, "writing %s failed: %s", w->path ? w->path : "stdout",
                     w->e.why[0] ? w->e.why : strerror(e));
        rc = w->e.why[0] ? SIM_EXIT_USAGE : SIM_EXIT_FAIL;
    }
    free_writer(w);
    return rc;
}
