/*
 * sysbench id distributions and row strings: every draw stays in [lo, hi]; uniform is
 * flat; gaussian centres; special puts spec_res percent of draws in the middle
 * spec_pct percent; pareto and zipfian favour low ids with the expected ratios; c and
 * pad have sysbench's shape (groups of eleven digits joined by '-').
 */
#include "oltp/oltp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <math.h>
#include <string.h>

#define N 200000

static void init(sb_dist *d, const char *type)
{
    char err[256];
    assert_int_equal(sb_dist_init(d, type, 12, 1, 75, 0.2, 0.8, err, sizeof err), 0);
}

static void test_bounds(void **state)
{
    const char *types[] = {"uniform", "gaussian", "special", "pareto", "zipfian"};
    sim_rng rng;
    sim_rng_seed(&rng, 7, 0);
    for (unsigned t = 0; t < 5; t++) {
        sb_dist d;
        init(&d, types[t]);
        assert_string_equal(sb_rand_type_name(d.type), types[t]);
        for (int i = 0; i < 20000; i++) {
            uint64_t v = sb_dist_next(&d, &rng, 5, 17);
            assert_true(v >= 5 && v <= 17);
            assert_int_equal(sb_dist_next(&d, &rng, 9, 9), 9);
        }
    }
}

static void test_bad_params(void **state)
{
    sb_dist d;
    char err[256];
    assert_int_equal(sb_dist_init(&d, "normal", 12, 1, 75, 0.2, 0.8, err, sizeof err), -1);
    assert_non_null(strstr(err, "uniform"));
    assert_int_equal(sb_dist_init(&d, "special", 12, 1, 100, 0.2, 0.8, err, sizeof err), -1);
    assert_int_equal(sb_dist_init(&d, "pareto", 12, 1, 75, 1.0, 0.8, err, sizeof err), -1);
    assert_int_equal(sb_dist_init(&d, "zipfian", 12, 1, 75, 0.2, -1, err, sizeof err), -1);
    assert_int_equal(sb_dist_init(&d, "gaussian", 0, 1, 75, 0.2, 0.8, err, sizeof err), -1);
}

static void test_uniform_flat(void **state)
{
    sb_dist d;
    init(&d, "uniform");
    sim_rng rng;
    sim_rng_seed(&rng, 1, 1);
    unsigned hist[10] = {0};
    for (int i = 0; i < N; i++)
        hist[sb_dist_next(&d, &rng, 1, 10) - 1]++;
    for (int i = 0; i < 10; i++)
        assert_true(fabs(hist[i] - N / 10.0) < N / 10.0 * 0.05);
}

static void test_gaussian_centre(void **state)
{
    sb_dist d;
    init(&d, "gaussian");
    sim_rng rng;
    sim_rng_seed(&rng, 1, 2);
    double sum = 0;
    unsigned mid = 0;
    for (int i = 0; i < N; i++) {
        uint64_t v = sb_dist_next(&d, &rng, 1, 1000);
        sum += (double)v;
        mid += v > 400 && v <= 600;
    }
    assert_true(fabs(sum / N - 500.5) < 5);
    /* Mean of 12 uniforms: sd = 1000 * sqrt(1/144) = 83; +-100 holds ~77 %. */
    assert_true(mid > N * 0.70 && mid < N * 0.85);
}

static void test_special_hot_window(void **state)
{
    sb_dist d;
    init(&d, "special");
    sim_rng rng;
    sim_rng_seed(&rng, 1, 3);
    unsigned hot = 0;
    for (int i = 0; i < N; i++) {
        uint64_t v = sb_dist_next(&d, &rng, 1, 100000);
        /* 1 % of the range, centred: ids 49500..50500 */
        hot += v >= 49500 && v <= 50501;
    }
    /* 75 % land in the window on purpose, plus the gaussian share that falls there. */
    assert_true(hot > N * 0.75 && hot < N * 0.80);
}

static void test_pareto_skew(void **state)
{
    sb_dist d;
    init(&d, "pareto");
    sim_rng rng;
    sim_rng_seed(&rng, 1, 4);
    unsigned low = 0;
    for (int i = 0; i < N; i++)
        low += sb_dist_next(&d, &rng, 1, 1000) <= 200;
    /* h = 0.2: 80 % of draws in the first 20 % of the range. */
    assert_true(fabs(low - N * 0.8) < N * 0.01);
}

static void test_zipfian_ratios(void **state)
{
    sb_dist d;
    init(&d, "zipfian");
    sim_rng rng;
    sim_rng_seed(&rng, 1, 5);
    unsigned n1 = 0, n2 = 0, n10 = 0;
    for (int i = 0; i < N; i++) {
        uint64_t v = sb_dist_next(&d, &rng, 1, 1000000);
        n1 += v == 1;
        n2 += v == 2;
        n10 += v == 10;
    }
    /* P(k) ~ k^-0.8: P(1)/P(2) = 2^0.8 = 1.74, P(1)/P(10) = 6.31. */
    assert_true(n2 > 0 && n10 > 0);
    assert_true(fabs((double)n1 / n2 - 1.741) < 0.2);
    assert_true(fabs((double)n1 / n10 - 6.31) < 1.0);
    /* exponent 0: uniform */
    char err[64];
    assert_int_equal(sb_dist_init(&d, "zipfian", 12, 1, 75, 0.2, 0.0, err, sizeof err), 0);
    unsigned hist[4] = {0};
    for (int i = 0; i < N; i++)
        hist[sb_dist_next(&d, &rng, 1, 4) - 1]++;
    for (int i = 0; i < 4; i++)
        assert_true(fabs(hist[i] - N / 4.0) < N / 4.0 * 0.05);
}

static void check_groups(const char *s, int len, int groups)
{
    assert_int_equal(len, groups * 12 - 1);
    for (int i = 0; i < len; i++) {
        if (i % 12 == 11)
            assert_int_equal(s[i], '-');
        else
            assert_true(isdigit((unsigned char)s[i]));
    }
}

static void test_strings(void **state)
{
    sim_rng rng;
    sim_rng_seed(&rng, 3, 0);
    char c[SB_C_LEN + 1], pad[SB_PAD_LEN + 1], c2[SB_C_LEN + 1];
    unsigned digit_count[10] = {0};
    for (int i = 0; i < 1000; i++) {
        memset(c, 'x', sizeof c);
        memset(pad, 'x', sizeof pad);
        sb_gen_c(&rng, c);
        sb_gen_pad(&rng, pad);
        assert_int_equal(c[SB_C_LEN], 'x'); /* writes exactly SB_C_LEN */
        assert_int_equal(pad[SB_PAD_LEN], 'x');
        check_groups(c, SB_C_LEN, 10);
        check_groups(pad, SB_PAD_LEN, 5);
        for (int j = 0; j < SB_C_LEN; j++)
            if (c[j] != '-') digit_count[c[j] - '0']++;
    }
    for (int i = 0; i < 10; i++)
        assert_true(digit_count[i] > 10000 && digit_count[i] < 12000);
    sb_gen_c(&rng, c2);
    assert_memory_not_equal(c, c2, SB_C_LEN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_uniform_flat),
        cmocka_unit_test(test_gaussian_centre),
        cmocka_unit_test(test_special_hot_window),
        cmocka_unit_test(test_pareto_skew),
        cmocka_unit_test(test_zipfian_ratios),
        cmocka_unit_test(test_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
