/*
 * libFuzzer harness for the streaming reader of result files (sim/review/compare_read.c),
 * differential against jansson: the first byte picks what is kept of the series, the
 * rest is the file. Where the text holds no "intervals" (so nothing is trimmed) the
 * reader must accept exactly what jansson accepts and build the same document; with
 * series, a text jansson reads whole is never refused (trimming only drops faults).
 * Every refusal says why. Texts with a raw NUL byte are only read: jansson's handling of
 * them is not consistent.
 */
#include "sim/review/review_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 2) return 0; /* a series byte and a text (an empty file is no stream) */
    cmp_series series = (data[0] & 1) ? CMP_SERIES_SKIP : CMP_SERIES_CHARTED;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    FILE *f = fmemopen((void *)text, len, "rb");
    if (!f) return 0;
    char err[400] = "";
    json_t *got = cmp_read_result_stream(f, series, err, sizeof err);
    fclose(f);
    json_error_t je;
    json_t *want = json_loadb(text, len, JSON_DECODE_ANY, &je);
    bool series_in_text = memmem(text, len, "intervals", 9) != NULL;
    /* A raw NUL byte is never JSON; jansson takes one after a top-level number as the end
     * of the text ("1\0" loads) but not after anything else: no comparison then. */
    bool nul = memchr(text, 0, len) != NULL;
    if (nul) {
        /* nothing to compare: the reader only must not crash */
    } else if (!series_in_text) {
        if (!want != !got) abort(); /* one accepts what the other refuses */
        if (want && !json_equal(want, got)) abort();
    } else if (want && !got) {
        abort(); /* jansson reads the whole text: trimming can only drop faults */
    }
    if (!got && !err[0]) abort(); /* a refusal always says why */
    json_decref(want);
    json_decref(got);
    return 0;
}
