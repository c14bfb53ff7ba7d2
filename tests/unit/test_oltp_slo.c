/*
 * tests/unit/test_oltp_slo.c: service-level limits and the service-level choice of a
 * curve: --slo's forms (pNN, p99.9, p999, a type prefix, units) and its refusals, a
 * point judged against the limits from its histograms, the point that gives the
 * service level (the saturation run only when no open-loop point up to its rate
 * missed), the bracket the bisection refines, and the curve lists' parsers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "oltp/oltp.h"

static const char *const types[] = {"new_order", "payment"};

static void test_parse_forms(void **state)
{
    (void)state;
    oltp_slo s = {0};
    char err[512];
    assert_int_equal(oltp_slo_parse("p99<=20ms,new_order:p90<=5s,p999<=1.5s,P50<=300us", types, 2,
                                    &s, err, sizeof err),
                     SIM_OK);
    assert_int_equal(s.n, 4);
    assert_true(s.lim[0].percentile == 99 && s.lim[0].type == -1 && s.lim[0].limit_ms == 20);
    assert_true(s.lim[1].percentile == 90 && s.lim[1].type == 0 && s.lim[1].limit_ms == 5000);
    assert_true(s.lim[2].percentile > 99.899 && s.lim[2].percentile < 99.901);
    assert_true(s.lim[2].limit_ms == 1500);
    assert_true(s.lim[3].percentile == 50 && s.lim[3].limit_ms > 0.2999 &&
                s.lim[3].limit_ms < 0.3001);
    assert_string_equal(s.lim[0].source, "--slo");
    /* A second call appends (tpcc's defaults first, then --slo). */
    assert_int_equal(oltp_slo_parse("p99.9<=1m", types, 2, &s, err, sizeof err), SIM_OK);
    assert_int_equal(s.n, 5);
    assert_true(s.lim[4].limit_ms == 60000);
}

static void refused(const char *text, const char *says)
{
    oltp_slo s = {0};
    char err[512] = "";
    assert_int_equal(oltp_slo_parse(text, types, 2, &s, err, sizeof err), SIM_ERR);
    if (!strstr(err, says)) fail_msg("'%s': message '%s' does not say '%s'", text, err, says);
    /* Every refusal says what is accepted. */
    assert_non_null(strstr(err, "[TYPE:]pNN<=TIME"));
}

static void test_parse_refusals(void **state)
{
    (void)state;
    refused("p99<20ms", "no '<='");
    refused("p99<=20", "unit");
    refused("p99<=0ms", "above 0");
    refused("p100<=1s", "not a percentile");
    refused("p0<=1s", "not a percentile");
    refused("q99<=1s", "not a percentile");
    refused("p998<=1s", "not a percentile");
    refused("delivery:p90<=5s", "no transaction type 'delivery'");
    refused("p99<=fast", "unit");
    refused("", "[TYPE:]");
    refused(",", "[TYPE:]");
}

static sim_hist *hist_of(uint64_t each_ns, int n, uint64_t tail_ns, int ntail)
{
    sim_hist *h = sim_hist_new();
    for (int i = 0; i < n; i++)
        sim_hist_record(h, each_ns);
    for (int i = 0; i < ntail; i++)
        sim_hist_record(h, tail_ns);
    return h;
}

static void test_met(void **state)
{
    (void)state;
    oltp_slo s = {0};
    char err[512];
    assert_int_equal(oltp_slo_parse("p90<=10ms,payment:p99<=2ms", types, 2, &s, err, sizeof err),
                     SIM_OK);
    /* 95 at 1 ms, 5 at 50 ms: p90 1 ms; payment all at 1 ms. */
    sim_hist *all = hist_of(1000000, 95, 50000000, 5);
    sim_hist *no = hist_of(1000000, 45, 50000000, 5);
    sim_hist *pay = hist_of(1000000, 50, 0, 0);
    const sim_hist *per[2] = {no, pay};
    assert_true(oltp_slo_met(&s, all, per));
    /* payment's p99 at 5 ms misses its 2 ms limit */
    sim_hist *pay_slow = hist_of(1000000, 90, 5000000, 10);
    const sim_hist *per2[2] = {no, pay_slow};
    assert_false(oltp_slo_met(&s, all, per2));
    /* a type that ran nothing is not held against the point */
    sim_hist *none = sim_hist_new();
    const sim_hist *per3[2] = {no, none};
    assert_true(oltp_slo_met(&s, all, per3));
    /* the overall p90 over its limit */
    sim_hist *slow = hist_of(1000000, 80, 50000000, 20);
    assert_false(oltp_slo_met(&s, slow, per));
    /* a point that measured nothing does not meet limits */
    assert_false(oltp_slo_met(&s, none, per3));
    sim_hist_free(all);
    sim_hist_free(no);
    sim_hist_free(pay);
    sim_hist_free(pay_slow);
    sim_hist_free(none);
    sim_hist_free(slow);
}

#define P(off, ach, sus, met)                                                                      \
    {                                                                                              \
        (off), (ach), (sus), (met), true                                                           \
    }

static void test_pick_and_bracket(void **state)
{
    (void)state;
    double lo = 0, hi = 0;
    /* saturation 1000 met; 50 % met, 90 % missed: the open loop decides, 500. */
    oltp_point_outcome a[] = {P(0, 1000, true, true), P(500, 500, true, true),
                              P(900, 880, true, false)};
    assert_int_equal(oltp_service_level_pick(a, 3, true), 1);
    assert_true(oltp_service_level_bracket(a, 3, &lo, &hi));
    assert_true(lo == 500 && hi == 900);
    /* every open-loop point up to the saturation rate met: the saturation run gives it */
    oltp_point_outcome b[] = {P(0, 1000, true, true), P(500, 500, true, true),
                              P(1100, 1000, false, true)};
    assert_int_equal(oltp_service_level_pick(b, 3, true), 0);
    assert_false(oltp_service_level_bracket(b, 3, &lo, &hi));
    /* the highest offered rate that was sustained and met wins, in any order; a point
     * that met the limits but fell behind does not count */
    oltp_point_outcome c[] = {P(0, 1000, true, false), P(700, 695, true, true),
                              P(300, 300, true, true), P(800, 700, false, true),
                              P(750, 748, true, false)};
    assert_int_equal(oltp_service_level_pick(c, 5, true), 1);
    assert_true(oltp_service_level_bracket(c, 5, &lo, &hi));
    assert_true(lo == 700 && hi == 750);
    /* nothing passed: no service level, nothing to bisect */
    oltp_point_outcome d[] = {P(0, 1000, true, false), P(100, 100, true, false)};
    assert_int_equal(oltp_service_level_pick(d, 2, true), -1);
    assert_false(oltp_service_level_bracket(d, 2, &lo, &hi));
    /* a point cut short never counts */
    oltp_point_outcome e[] = {P(0, 1000, true, false), {400, 400, true, true, false}};
    assert_int_equal(oltp_service_level_pick(e, 2, true), -1);
    /* user steps: the highest achieved rate that met */
    oltp_point_outcome u[] = {P(0, 100, true, true), P(0, 400, true, true), P(0, 450, true, false)};
    assert_int_equal(oltp_service_level_pick(u, 3, false), 1);
}

static void test_lists(void **state)
{
    (void)state;
    double pct[8];
    uint64_t n[8];
    assert_int_equal(oltp_curve_parse_percents("10,50.5,120", pct, 8), 3);
    assert_true(pct[1] == 50.5 && pct[2] == 120);
    assert_int_equal(oltp_curve_parse_percents("0,50", pct, 8), -1);
    assert_int_equal(oltp_curve_parse_percents("1001", pct, 8), -1);
    assert_int_equal(oltp_curve_parse_percents("a", pct, 8), -1);
    assert_int_equal(oltp_curve_parse_percents("1,2,3", pct, 2), -1);
    assert_int_equal(oltp_curve_parse_counts("100,500,1000", 4096, n, 8), 3);
    assert_true(n[0] == 100 && n[2] == 1000);
    assert_int_equal(oltp_curve_parse_counts("4", 4096, n, 8), 1);
    assert_int_equal(oltp_curve_parse_counts("0,2", 4096, n, 8), -1);
    assert_int_equal(oltp_curve_parse_counts("5000", 4096, n, 8), -1);
    assert_int_equal(oltp_curve_parse_counts("2,x", 4096, n, 8), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_forms), cmocka_unit_test(test_parse_refusals),
        cmocka_unit_test(test_met),         cmocka_unit_test(test_pick_and_bracket),
        cmocka_unit_test(test_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
