/*
 * libFuzzer harness for the writers and the appsim binary round trip: arbitrary
 * records (sorted by time first, as sources emit them) are written in appsim's format
 * and read back; every field must survive exactly.
 */
#include "trace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int cmp(const void *a, const void *b)
{
    const tr_record *x = a, *y = b;
    return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    enum { RS = 29 };
    size_t n = size / RS;
    if (n == 0 || n > 512) return 0;
    tr_record *in = calloc(n, sizeof *in);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = data + i * RS;
        memcpy(&in[i].time_ns, p, 8);
        memcpy(&in[i].offset, p + 8, 8);
        memcpy(&in[i].length, p + 16, 4);
        memcpy(&in[i].volume, p + 20, 4);
        in[i].op = p[24] & 3;
        uint32_t lat;
        memcpy(&lat, p + 25, 4);
        in[i].latency_ns = lat == 0xffffffffu ? TR_LATENCY_UNKNOWN : lat;
        if (in[i].offset > UINT64_MAX - in[i].length) in[i].offset = 0;
    }
    qsort(in, n, sizeof *in, cmp);
    char path[64];
    /* /dev/shm: the writer fsyncs on close, which a disk makes slow. */
    snprintf(path, sizeof path, "%s/appsim-fuzz-writer-%d.apt",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
    tr_writer *w;
    char err[512];
    if (tr_writer_open(path, "appsim", NULL, &w, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        abort();
    }
    for (size_t i = 0; i < n; i++)
        if (tr_writer_put(w, &in[i])) abort();
    if (tr_writer_close(w, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        abort();
    }
    tr_open_opts o = {.format = "appsim", .volume = -1};
    tr_source *s;
    if (tr_open(path, &o, &s, err, sizeof err)) abort();
    tr_record r;
    size_t k = 0;
    while (tr_next(s, &r) == 1) {
        const tr_record *e = &in[k++];
        if (r.time_ns != e->time_ns - in[0].time_ns || r.offset != e->offset ||
            r.length != e->length || r.volume != e->volume || r.op != e->op ||
            r.latency_ns != e->latency_ns)
            abort();
    }
    if (k != n || tr_error(s)[0]) abort();
    tr_close(s);
    unlink(path);
    free(in);
    return 0;
}
