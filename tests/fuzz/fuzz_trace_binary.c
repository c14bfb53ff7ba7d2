/*
 * libFuzzer harness for the binary trace parsers (blktrace, vscsi v1/v2, appsim) and the
 * decompressors under them: the first byte picks the format (or auto-detection), the
 * second whether malformed records are skipped, the rest is the trace. Every record is
 * read, the source rewound and read again; the records must come in time order.
 */
#include "trace/trace.h"

#include <stdlib.h>
#include <string.h>

static const char *formats[] = {NULL, "blktrace", "vscsi", "appsim"};

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (!tr_find_format("vscsi")) abort(); /* the formats must be linked in (whole archive) */
    if (size < 2) return 0;
    tr_open_opts o = {
        .format = formats[data[0] % (sizeof formats / sizeof *formats)],
        .skip_bad = data[1] & 1,
        .volume = (data[1] & 2) ? 0 : -1,
        .sort_window = (data[1] & 4) ? 4 : 0,
    };
    tr_source *s;
    char err[1024];
    if (tr_open_mem(data + 2, size - 2, "fuzz", &o, &s, err, sizeof err)) return 0;
    for (int pass = 0; pass < 2; pass++) {
        tr_record r;
        uint64_t prev = 0;
        while (tr_next(s, &r) == 1) {
            if (r.time_ns < prev || r.op > TR_DISCARD) abort();
            prev = r.time_ns;
        }
        json_decref(tr_source_stats_json(s));
        if (tr_rewind(s) < 0) break;
    }
    tr_close(s);
    return 0;
}
