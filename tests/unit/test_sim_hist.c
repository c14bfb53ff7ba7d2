/*
 * Histogram accuracy against exact sorted percentiles (random, bimodal and
 * heavy-tailed data), merge exactness, JSON round trip, interval deltas.
 */
#include "sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double p)
{
    size_t rank = (size_t)ceil(p / 100.0 * (double)n);
    if (rank < 1) rank = 1;
    return sorted[rank - 1];
}

static void check_accuracy(uint64_t *v, size_t n, const char *what)
{
    sim_hist *h = sim_hist_new();
    long double sum = 0;
    for (size_t i = 0; i < n; i++) {
        sim_hist_record(h, v[i]);
        sum += v[i];
    }
    qsort(v, n, sizeof *v, cmp_u64);
    static const double ps[] = {1, 10, 50, 90, 95, 99, 99.9, 99.99};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        uint64_t want = exact_percentile(v, n, ps[i]);
        uint64_t got = sim_hist_percentile(h, ps[i]);
        double rel = want ? fabs((double)got - (double)want) / (double)want : (double)got;
        if (want >= 1000 && rel > 0.001)
            fail_msg("%s p%g: got %llu want %llu (rel %.5f)", what, ps[i], (unsigned long long)got,
                     (unsigned long long)want, rel);
    }
    assert_int_equal(sim_hist_count(h), n);
    assert_int_equal(sim_hist_min(h), v[0]);
    assert_int_equal(sim_hist_max(h), v[n - 1]);
    assert_true(fabs(sim_hist_mean(h) - (double)(sum / n)) < 1e-6 * (double)(sum / n) + 1);
    sim_hist_free(h);
}

#define N 200000

static void test_uniform(void **state)
{
    uint64_t *v = malloc(N * sizeof *v);
    sim_rng r;
    sim_rng_seed(&r, 1, 1);
    for (size_t i = 0; i < N; i++)
        v[i] = sim_rng_range(&r, 1000, 50000000); /* 1 us .. 50 ms */
    check_accuracy(v, N, "uniform");
    free(v);
}

static void test_bimodal(void **state)
{
    uint64_t *v = malloc(N * sizeof *v);
    sim_rng r;
    sim_rng_seed(&r, 2, 1);
    for (size_t i = 0; i < N; i++)
        v[i] = (i % 10 == 0) ? sim_rng_range(&r, 20000000, 40000000) /* 20-40 ms */
                             : sim_rng_range(&r, 80000, 120000);     /* 80-120 us */
    check_accuracy(v, N, "bimodal");
    free(v);
}

static void test_heavy_tail(void **state)
{
    uint64_t *v = malloc(N * sizeof *v);
    sim_rng r;
    sim_rng_seed(&r, 3, 1);
    for (size_t i = 0; i < N; i++) {
        /* Pareto, alpha 1.2, scale 50 us: tails out to hours. */
        double u = 1.0 - sim_rng_double(&r);
        double x = 50000.0 / pow(u, 1.0 / 1.2);
        v[i] = x > 3.6e12 ? (uint64_t)3.6e12 : (uint64_t)x;
    }
    check_accuracy(v, N, "pareto");
    free(v);
}

static void test_one_hour_in_range(void **state)
{
    sim_hist *h = sim_hist_new();
    uint64_t hour = 3600ull * 1000000000ull;
    sim_hist_record(h, hour);
    sim_hist_record(h, 1000); /* 1 us */
    assert_int_equal(sim_hist_clamped(h), 0);
    double rel = fabs((double)sim_hist_percentile(h, 100) - (double)hour) / (double)hour;
    assert_true(rel <= 0.001);
    assert_int_equal(sim_hist_percentile(h, 50), 1000);
    sim_hist_record(h, UINT64_MAX);
    assert_int_equal(sim_hist_clamped(h), 1);
    sim_hist_free(h);
}

static void test_merge_equals_union(void **state)
{
    sim_hist *a = sim_hist_new(), *b = sim_hist_new(), *u = sim_hist_new();
    sim_rng r;
    sim_rng_seed(&r, 4, 1);
    for (int i = 0; i < 50000; i++) {
        uint64_t x = sim_rng_range(&r, 100, 900000000);
        sim_hist_record(i % 3 ? a : b, x);
        sim_hist_record(u, x);
    }
    sim_hist *m = sim_hist_new();
    sim_hist_merge(m, a);
    sim_hist_merge(m, b);
    for (double p = 0.5; p < 100; p += 0.5)
        assert_int_equal(sim_hist_percentile(m, p), sim_hist_percentile(u, p));
    assert_int_equal(sim_hist_count(m), sim_hist_count(u));
    assert_int_equal(sim_hist_min(m), sim_hist_min(u));
    assert_int_equal(sim_hist_max(m), sim_hist_max(u));
    assert_true(sim_hist_mean(m) == sim_hist_mean(u));
    sim_hist_free(a);
    sim_hist_free(b);
    sim_hist_free(u);
    sim_hist_free(m);
}

static void test_json_round_trip_and_merge(void **state)
{
    sim_hist *a = sim_hist_new(), *b = sim_hist_new(), *u = sim_hist_new();
    sim_rng r;
    sim_rng_seed(&r, 5, 1);
    for (int i = 0; i < 20000; i++) {
        uint64_t x = sim_rng_range(&r, 1, 5000000000ull);
        sim_hist_record(i & 1 ? a : b, x);
        sim_hist_record(u, x);
    }
    json_t *ja0 = sim_hist_to_json(a), *jb0 = sim_hist_to_json(b);
    char *sa = json_dumps(ja0, 0), *sb = json_dumps(jb0, 0);
    json_decref(ja0);
    json_decref(jb0);
    char err[128];
    json_t *ja = json_loads(sa, 0, NULL), *jb = json_loads(sb, 0, NULL);
    sim_hist *ra = sim_hist_from_json(ja, err, sizeof err);
    sim_hist *rb = sim_hist_from_json(jb, err, sizeof err);
    assert_non_null(ra);
    assert_non_null(rb);
    sim_hist_merge(ra, rb);
    for (double p = 1; p <= 100; p += 1)
        assert_int_equal(sim_hist_percentile(ra, p), sim_hist_percentile(u, p));
    assert_true(sim_hist_mean(ra) == sim_hist_mean(u));
    /* Malformed inputs are refused, not trusted. */
    json_t *bad = json_loads("{\"layout\":\"other\",\"buckets\":[]}", 0, NULL);
    assert_null(sim_hist_from_json(bad, err, sizeof err));
    json_t *bad2 = json_loads(
        "{\"layout\":\"loglinear-ns-1024x42\",\"count\":5,\"buckets\":[[1,2]]}", 0, NULL);
    assert_null(sim_hist_from_json(bad2, err, sizeof err));
    json_t *bad3 = json_loads(
        "{\"layout\":\"loglinear-ns-1024x42\",\"count\":1,\"buckets\":[[99999999,1]]}", 0, NULL);
    assert_null(sim_hist_from_json(bad3, err, sizeof err));
    json_decref(bad);
    json_decref(bad2);
    json_decref(bad3);
    json_decref(ja);
    json_decref(jb);
    free(sa);
    free(sb);
    sim_hist_free(a);
    sim_hist_free(b);
    sim_hist_free(u);
    sim_hist_free(ra);
    sim_hist_free(rb);
}

static void collect_pairs(uint32_t index, uint64_t count, void *arg)
{
    json_array_append_new(arg, json_pack("[II]", (json_int_t)index, (json_int_t)count));
}

static sim_hist *from_text(const char *text)
{
    char err[128];
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    sim_hist *h = sim_hist_from_json(j, err, sizeof err);
    json_decref(j);
    return h;
}

/* The sparse text form: only non-empty buckets, about 3 bytes each; the older list of
 * [index, count] pairs still reads to the same histogram. */
static void test_sparse_form(void **state)
{
    (void)state;
    sim_hist *h = sim_hist_new();
    sim_hist_record(h, 0);
    sim_hist_record_n(h, 2047, 3);
    sim_hist_record(h, 2048);
    sim_hist_record_n(h, 5000000, 7);
    sim_hist_record(h, 1ull << 50); /* clamped to the top bucket */
    json_t *j = sim_hist_to_json(h);
    const char *sparse = json_string_value(json_object_get(j, "sparse"));
    assert_non_null(sparse);
    assert_null(json_object_get(j, "buckets"));
    /* index 0, +2047 (count 3), +1, then the 5 ms and top buckets */
    assert_true(!strncmp(sparse, "0,2047:3,1,", 11));
    json_t *pairs = json_array();
    sim_hist_foreach(h, collect_pairs, pairs);
    assert_int_equal(json_array_size(pairs), 5);
    json_t *old = json_deep_copy(j);
    json_object_del(old, "sparse");
    json_object_set_new(old, "buckets", pairs);
    char err[128];
    sim_hist *a = sim_hist_from_json(j, err, sizeof err),
             *b = sim_hist_from_json(old, err, sizeof err);
    assert_non_null(a);
    assert_non_null(b);
    for (double p = 1; p <= 100; p += 0.5) {
        assert_int_equal(sim_hist_percentile(a, p), sim_hist_percentile(h, p));
        assert_int_equal(sim_hist_percentile(b, p), sim_hist_percentile(h, p));
    }
    assert_int_equal(sim_hist_clamped(a), 1);
    json_decref(j);
    json_decref(old);
    sim_hist_free(a);
    sim_hist_free(b);
    sim_hist_free(h);
    /* An empty histogram is an empty string; malformed strings are refused. */
    sim_hist *e = from_text("{\"layout\":\"loglinear-ns-1024x42\",\"count\":0,\"sparse\":\"\"}");
    assert_non_null(e);
    assert_int_equal(sim_hist_count(e), 0);
    sim_hist_free(e);
    static const char *const bad[] = {
        "5,0",                    /* gap 0 after the first: the same bucket twice */
        "5:0",                    /* a zero count is never written */
        "5,",                     /* trailing comma */
        ",5",                     /* leading comma */
        "5;3",                    /* wrong separator */
        "99999999",               /* past the last bucket */
        "33000,33000",            /* past the last bucket by the sum of gaps */
        "1:99999999999999999999", /* count overflows */
        "-1",                     /* sign */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[200];
        snprintf(text, sizeof text,
                 "{\"layout\":\"loglinear-ns-1024x42\",\"count\":1,\"sparse\":\"%s\"}", bad[i]);
        sim_hist *x = from_text(text);
        if (x) print_error("accepted malformed sparse form \"%s\"\n", bad[i]);
        assert_null(x);
    }
    /* A count that does not match the buckets is refused in either form. */
    assert_null(from_text("{\"layout\":\"loglinear-ns-1024x42\",\"count\":2,\"sparse\":\"5\"}"));
}

static void test_delta(void **state)
{
    sim_hist *cum = sim_hist_new(), *snap = sim_hist_new(), *later = sim_hist_new(),
             *d = sim_hist_new();
    for (int i = 0; i < 1000; i++)
        sim_hist_record(cum, 1000000);
    sim_hist_merge(snap, cum);
    for (int i = 0; i < 100; i++)
        sim_hist_record(cum, 5000000);
    sim_hist_merge(later, cum);
    sim_hist_add_delta(d, later, snap);
    assert_int_equal(sim_hist_count(d), 100);
    double rel = fabs((double)sim_hist_percentile(d, 50) - 5e6) / 5e6;
    assert_true(rel < 0.001);
    assert_true(fabs(sim_hist_mean(d) - 5e6) < 1);
    sim_hist_free(cum);
    sim_hist_free(snap);
    sim_hist_free(later);
    sim_hist_free(d);
}

static void test_stddev(void **state)
{
    sim_hist *h = sim_hist_new();
    for (int i = 0; i < 1000; i++)
        sim_hist_record(h, i % 2 ? 1000000 : 3000000); /* mean 2 ms, sd 1 ms */
    assert_true(fabs(sim_hist_stddev(h) - 1e6) < 1e3);
    sim_hist_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform),
        cmocka_unit_test(test_bimodal),
        cmocka_unit_test(test_heavy_tail),
        cmocka_unit_test(test_one_hour_in_range),
        cmocka_unit_test(test_merge_equals_union),
        cmocka_unit_test(test_json_round_trip_and_merge),
        cmocka_unit_test(test_delta),
        cmocka_unit_test(test_sparse_form),
        cmocka_unit_test(test_stddev),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
