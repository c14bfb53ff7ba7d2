/*
 * Footprint (unique bytes touched): exact with overlapping, adjacent and per-volume
 * extents; estimated within 1 % once more separate extents arrive than the exact set
 * holds, and the method says so.
 */
#include "trace/lib/footprint_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

static void test_exact(void **state)
{
    tr_footprint f;
    tr_footprint_init(&f);
    tr_footprint_add(&f, 0, 0, 4096);
    tr_footprint_add(&f, 0, 2048, 4096); /* overlaps: +2048 */
    tr_footprint_add(&f, 0, 6144, 100);  /* adjacent: +100 */
    tr_footprint_add(&f, 1, 0, 4096);    /* other volume: +4096 */
    tr_footprint_add(&f, 0, 0, 0);       /* zero length: nothing */
    json_t *j = tr_footprint_json(&f);
    assert_int_equal(json_integer_value(json_object_get(j, "bytes")), 4096 + 2048 + 100 + 4096);
    assert_string_equal(json_string_value(json_object_get(j, "method")), "exact");
    json_decref(j);
    tr_footprint_free(&f);
}

static void test_estimate(void **state)
{
    tr_footprint f;
    tr_footprint_init(&f);
    /* 1.5 M distinct 4 KiB blocks, every other block (never merging), each twice. */
    const uint64_t n = 1500000;
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t i = 0; i < n; i++)
            tr_footprint_add(&f, (uint32_t)(i % 3), i * 8192, 4096);
    json_t *j = tr_footprint_json(&f);
    double got = (double)json_integer_value(json_object_get(j, "bytes"));
    double want = (double)n * 4096;
    printf("estimate %.0f of %.0f (%.3f %%), %s\n", got, want, (got - want) / want * 100,
           json_string_value(json_object_get(j, "method")));
    assert_true(fabs(got - want) / want < 0.01);
    assert_non_null(strstr(json_string_value(json_object_get(j, "method")), "estimated"));
    json_decref(j);
    tr_footprint_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact),
        cmocka_unit_test(test_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
