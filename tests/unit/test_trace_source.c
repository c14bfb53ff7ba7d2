/*
 * The layer under every reader: compressed input (gzip, concatenated gzip members,
 * bzip2, zstd, truncated streams), the bounded sort window and its counts, malformed
 * records (file:line and reason, or counted with skip_bad), detection failures, and
 * rewinding.
 */
#include "trace/trace.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <bzlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

static const char *csv = "Timestamp,Response,IOType,LUN,Offset,Size\n"
                         "10.000000003,0.001,R,0,4096,4096\n"
                         "10.000000001,0.001,W,0,0,512\n"
                         "10.000000002,0.001,R,1,8192,4096\n"
                         "10.5,0.001,R,0,12288,4096\n";

static int count(const void *buf, size_t len, const tr_open_opts *o, tr_source **keep, char *err,
                 size_t errlen)
{
    tr_source *s;
    if (tr_open_mem(buf, len, "mem.csv", o, &s, err, errlen)) return -100;
    tr_record r;
    int n = 0, rc;
    uint64_t prev = 0;
    while ((rc = tr_next(s, &r)) == 1) {
        assert_true(r.time_ns >= prev);
        prev = r.time_ns;
        n++;
    }
    if (rc < 0) snprintf(err, errlen, "%s", tr_error(s));
    if (keep)
        *keep = s;
    else
        tr_close(s);
    return rc < 0 ? -1 : n;
}

static size_t gzip(const char *in, size_t len, unsigned char *out, size_t cap)
{
    z_stream z = {0};
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    return n;
}

static void test_compressed(void **state)
{
    tr_open_opts o = {.volume = -1};
    char err[512];
    unsigned char buf[4096];
    size_t len = strlen(csv);
    size_t n = gzip(csv, len, buf, sizeof buf);
    assert_int_equal(count(buf, n, &o, NULL, err, sizeof err), 4);
    /* Two gzip members back to back (pigz, cat a.gz b.gz): both are read. */
    const char *more = "11.0,0.001,W,0,0,4096\n";
    size_t n2 = gzip(more, strlen(more), buf + n, sizeof buf - n);
    assert_int_equal(count(buf, n + n2, &o, NULL, err, sizeof err), 5);
    /* Truncated: an error, not a silent short trace. */
    assert_true(count(buf, n - 6, &o, NULL, err, sizeof err) < 0);
    assert_non_null(strstr(err, "gzip"));
    unsigned int bl = sizeof buf;
    assert_int_equal(
        BZ2_bzBuffToBuffCompress((char *)buf, &bl, (char *)csv, (unsigned)len, 9, 0, 0), BZ_OK);
    assert_int_equal(count(buf, bl, &o, NULL, err, sizeof err), 4);
    assert_true(count(buf, bl - 4, &o, NULL, err, sizeof err) < 0);
    size_t zl = ZSTD_compress(buf, sizeof buf, csv, len, 3);
    assert_false(ZSTD_isError(zl));
    assert_int_equal(count(buf, zl, &o, NULL, err, sizeof err), 4);
    assert_true(count(buf, zl - 3, &o, NULL, err, sizeof err) < 0);
    assert_non_null(strstr(err, "zstd"));
    /* Rewind through the decompressor. */
    tr_source *s;
    assert_int_equal(count(buf, zl, &o, &s, err, sizeof err), 4);
    assert_int_equal(tr_rewind(s), 0);
    tr_record r;
    int k = 0;
    while (tr_next(s, &r) == 1)
        k++;
    assert_int_equal(k, 4);
    tr_close(s);
}

static void test_sort_window(void **state)
{
    /* Reverse order: a window of 2 cannot fix it all; late records are clamped. */
    char text[2048] = "Timestamp,Response,IOType,LUN,Offset,Size\n";
    for (int i = 9; i >= 0; i--)
        sprintf(text + strlen(text), "1.%d,0.001,R,0,%d,4096\n", i, i * 4096);
    tr_open_opts o = {.volume = -1, .sort_window = 2};
    tr_source *s;
    char err[512];
    assert_int_equal(count(text, strlen(text), &o, &s, err, sizeof err), 10);
    json_t *j = tr_source_stats_json(s);
    assert_int_equal(json_integer_value(json_object_get(j, "reordered")), 9);
    assert_true(json_integer_value(json_object_get(j, "late_clamped")) > 0);
    json_decref(j);
    tr_close(s);
    /* A window as large as the trace sorts it completely. */
    o.sort_window = 16;
    assert_int_equal(count(text, strlen(text), &o, &s, err, sizeof err), 10);
    j = tr_source_stats_json(s);
    assert_int_equal(json_integer_value(json_object_get(j, "late_clamped")), 0);
    json_decref(j);
    tr_close(s);
}

static void test_malformed(void **state)
{
    const char *bad = "128166385295514663,hm,0,Write,9056014336,2048,2833\n"
                      "128166385295514700,hm,0,Write,9056014336,2048,2833\n"
                      "128166385295514878,hm,0,Wrote,512,4096,2617\n"
                      "128166385295515000,hm,0,Read,x,4096,2617\n"
                      "128166385295516000,hm,0,Read,0,4096,2617\n";
    tr_open_opts o = {.volume = -1, .format = "msr"};
    char err[1024];
    assert_int_equal(count(bad, strlen(bad), &o, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "mem.csv:3:"));
    assert_non_null(strstr(err, "Wrote"));
    assert_non_null(strstr(err, "--skip-bad"));
    o.skip_bad = true;
    tr_source *s;
    assert_int_equal(count(bad, strlen(bad), &o, &s, err, sizeof err), 3);
    json_t *j = tr_source_stats_json(s);
    assert_int_equal(json_integer_value(json_object_get(j, "skipped_bad")), 2);
    assert_non_null(strstr(json_string_value(json_object_get(j, "first_bad")), "mem.csv:3:"));
    json_decref(j);
    tr_close(s);
}

static void test_detection(void **state)
{
    tr_open_opts o = {.volume = -1};
    tr_source *s;
    char err[512];
    const char *junk = "hello world\nthis is not a trace\n";
    assert_int_not_equal(tr_open_mem(junk, strlen(junk), "junk", &o, &s, err, sizeof err), 0);
    assert_non_null(strstr(err, "--format"));
    assert_int_not_equal(tr_open_mem("", 0, "empty", &o, &s, err, sizeof err), 0);
    assert_non_null(strstr(err, "empty"));
    o.format = "nosuch";
    assert_int_equal(tr_open_mem(csv, strlen(csv), "x", &o, &s, err, sizeof err), SIM_EXIT_USAGE);
    /* An empty file with the format given is an empty trace, not an error. */
    o.format = "msr";
    assert_int_equal(tr_open_mem("", 0, "empty", &o, &s, err, sizeof err), 0);
    tr_record r;
    assert_int_equal(tr_next(s, &r), 0);
    tr_close(s);
    /* A binary blob under a text format: a line too long or a bad line, never a crash. */
    static char blob[200000];
    memset(blob, 'A', sizeof blob);
    assert_int_equal(count(blob, sizeof blob, &o, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "longer"));
}

/* A source's and a parser's answers have names; other numbers are not guessed. */
static void test_answer_names(void **state)
{
    assert_string_equal(tr_next_name(TR_NEXT_ERROR), "error");
    assert_string_equal(tr_next_name(TR_NEXT_END), "end");
    assert_string_equal(tr_next_name(TR_NEXT_RECORD), "record");
    assert_string_equal(tr_next_name(2), "unknown");
    assert_string_equal(tr_parse_name(TR_PARSE_BAD), "bad");
    assert_string_equal(tr_parse_name(TR_PARSE_NONE), "none");
    assert_string_equal(tr_parse_name(TR_PARSE_RECORD), "record");
    assert_string_equal(tr_parse_name(TR_PARSE_END), "end");
    assert_string_equal(tr_parse_name(TR_PARSE_HELD), "held");
    assert_string_equal(tr_parse_name(-2), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compressed),   cmocka_unit_test(test_sort_window),
        cmocka_unit_test(test_malformed),    cmocka_unit_test(test_detection),
        cmocka_unit_test(test_answer_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
