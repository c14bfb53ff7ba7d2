/*
 * The streaming reader of result files (sim/review/compare_read.c): it accepts and refuses
 * exactly what jansson does, builds the same document where there is no series, keeps of
 * each interval only the charted fields (or no series at all for compare), and names the
 * line of a syntax error in the file.
 */
#include "sim/review/review_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "test_compare_fixtures.h"

static char dir[256], path[512];

static int setup(void **state)
{
    fx_tmpdir(dir, sizeof dir, "cmpread");
    snprintf(path, sizeof path, "%s/doc.json", dir);
    return 0;
}

static int teardown(void **state)
{
    fx_rmdir(dir);
    return 0;
}

static void write_text(const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

/* Texts with no series: the reader and jansson agree on accepting, and on the document. */
static void test_agrees_with_jansson(void **state)
{
    static const char *const texts[] = {
        "{}",
        " [1, -2.5e3, 0, true, false, null, \"a\\\"b\\\\c\\/\\b\\f\\n\\r\\t\"]\n",
        "{\"k\": {\"n\": [[], {}, [[[1]]]]}, \"s\": \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}",
        "{\"u\": \"\\u00e9\\ud83d\\ude00\"}",
        "\"top\"",
        "9223372036854775807",
        "{\"a\": 1,}",
        "{\"a\" 1}",
        "[1 2]",
        "[01]",
        "[1.]",
        "[-]",
        "[1e]",
        "[tru]",
        "{\"a\": 1} x",
        "",
        "{",
        "{\"a\": \"unterminated",
        "[\"tab\there\"]",
        "[\"\\x\"]",
        "[\"\\u12\"]",
        "[\"\\u0000\"]",
        "[\"\\ud83d\"]",
        "[\"\\ude00\"]",
        "[\"\\ud83dx\"]",
        "[\"\xc3\"]",
        "[\"\xc0\xaf\"]",
        "[\"\xed\xa0\x80\"]",
        "[\"\xf5\x80\x80\x80\"]",
        "[9223372036854775808]",
        "[1e999]",
        "[1e-999]",
        "{'a': 1}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        write_text(texts[i], strlen(texts[i]));
        json_error_t je;
        json_t *want = json_load_file(path, JSON_DECODE_ANY, &je);
        char err[400] = "";
        json_t *got = cmp_read_result(path, CMP_SERIES_SKIP, err, sizeof err);
        if (!want != !got || (want && !json_equal(want, got)))
            fail_msg("text %zu (%s): jansson %s, reader %s (%s)", i, texts[i],
                     want ? "accepts" : je.text, got ? "accepts" : "refuses", err);
        if (!got) assert_non_null(strstr(err, "not JSON (line"));
        json_decref(want);
        json_decref(got);
    }
}

static const char series_doc[] =
    "{\"schema\": \"appsim-result/1\",\n"
    " \"intervals\": [\n"
    "  {\"t\": 1, \"seconds\": 1, \"phase\": \"warmup\", \"rate\": 10, \"count\": 10,\n"
    "   \"errors_per_s\": 0, \"cpu\": {\"user_s\": 1}, \"device_io\": {\"intervals\": [1]},\n"
    "   \"latency_us\": {\"count\": 10, \"mean_us\": 5, \"p99_us\": 9, \"stddev_us\": 1}},\n"
    "  {\"histogram\": [1, 2], \"t\": 2, \"rate\": 20}\n"
    " ],\n"
    " \"summary\": {\"intervals\": 2, \"latency_us\": {\"stddev_us\": 3}},\n"
    " \"profiles\": [{\"curve\": {\"points\": [{\"run\": {\"intervals\": [{\"t\": 3, \"x\": 1}],\n"
    "   \"histograms\": {\"all\": {}}}}]}}]}\n";

static void test_series_charted(void **state)
{
    write_text(series_doc, strlen(series_doc));
    char err[400] = "";
    json_t *got = cmp_read_result(path, CMP_SERIES_CHARTED, err, sizeof err);
    assert_non_null(got);
    json_t *want = json_loads(
        "{\"schema\": \"appsim-result/1\", \"intervals\": ["
        "{\"t\": 1, \"seconds\": 1, \"phase\": \"warmup\", \"rate\": 10, \"count\": 10, "
        "\"errors_per_s\": 0, \"latency_us\": {\"mean_us\": 5, \"p99_us\": 9}}, "
        "{\"t\": 2, \"rate\": 20}], "
        "\"summary\": {\"intervals\": 2, \"latency_us\": {\"stddev_us\": 3}}, "
        "\"profiles\": [{\"curve\": {\"points\": [{\"run\": {\"intervals\": [{\"t\": 3}], "
        "\"histograms\": {\"all\": {}}}}]}}]}",
        0, NULL);
    assert_non_null(want);
    if (!json_equal(want, got)) {
        char *s = json_dumps(got, JSON_SORT_KEYS);
        fail_msg("charted: %s", s);
    }
    json_decref(want);
    json_decref(got);
}

static void test_series_skipped(void **state)
{
    write_text(series_doc, strlen(series_doc));
    char err[400] = "";
    json_t *got = cmp_read_result(path, CMP_SERIES_SKIP, err, sizeof err);
    assert_non_null(got);
    json_t *want =
        json_loads("{\"schema\": \"appsim-result/1\", "
                   "\"summary\": {\"intervals\": 2, \"latency_us\": {\"stddev_us\": 3}}, "
                   "\"profiles\": [{\"curve\": {\"points\": [{\"run\": {"
                   "\"histograms\": {\"all\": {}}}}]}}]}",
                   0, NULL);
    if (!json_equal(want, got)) {
        char *s = json_dumps(got, JSON_SORT_KEYS);
        fail_msg("skipped: %s", s);
    }
    json_decref(want);
    json_decref(got);
}

/* A syntax error inside a skipped series is still found, at its line in the file. */
static void test_error_in_skipped_series(void **state)
{
    char text[sizeof series_doc];
    memcpy(text, series_doc, sizeof text);
    char *p = strstr(text, "\"rate\": 20");
    p[7] = 'x'; /* line 6 */
    write_text(text, strlen(text));
    char err[400] = "";
    assert_null(cmp_read_result(path, CMP_SERIES_SKIP, err, sizeof err));
    assert_non_null(strstr(err, "not JSON (line 6: invalid"));
    /* cut short inside the series */
    write_text(series_doc, (size_t)(strstr(series_doc, "{\"histogram\"") - series_doc + 5));
    assert_null(cmp_read_result(path, CMP_SERIES_SKIP, err, sizeof err));
    assert_non_null(strstr(err, "not JSON (line 6: unexpected end of file"));
}

static void test_deep_nesting_refused(void **state)
{
    enum { DEPTH = 100000 };
    char *text = malloc(DEPTH);
    memset(text, '[', DEPTH);
    write_text(text, DEPTH);
    free(text);
    char err[400] = "";
    assert_null(cmp_read_result(path, CMP_SERIES_CHARTED, err, sizeof err));
    assert_non_null(strstr(err, "nested too deeply"));
}

static void test_unreadable(void **state)
{
    char err[400] = "";
    assert_null(cmp_read_result(dir, CMP_SERIES_CHARTED, err, sizeof err));
    assert_non_null(strstr(err, "cannot read: Is a directory"));
    char missing[600];
    snprintf(missing, sizeof missing, "%s/none.json", dir);
    assert_null(cmp_read_result(missing, CMP_SERIES_CHARTED, err, sizeof err));
    assert_non_null(strstr(err, "cannot read: No such file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agrees_with_jansson),  cmocka_unit_test(test_series_charted),
        cmocka_unit_test(test_series_skipped),       cmocka_unit_test(test_error_in_skipped_series),
        cmocka_unit_test(test_deep_nesting_refused), cmocka_unit_test(test_unreadable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
