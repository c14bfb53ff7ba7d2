/*
 * tests/unit/test_tpcc_rand.c: TPC-C random inputs, the C-Run rule, last names, the
 * mix parser and the shuffled deck, and the input generators' proportions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "oltp/tpcc_internal.h"

static void test_lastname(void **state)
{
    (void)state;
    char b[16];
    tpcc_lastname(0, b);
    assert_string_equal(b, "BARBARBAR");
    tpcc_lastname(371, b);
    assert_string_equal(b, "PRICALLYOUGHT");
    tpcc_lastname(999, b);
    assert_string_equal(b, "EINGEINGEING");
}

static void test_nurand_range_and_skew(void **state)
{
    (void)state;
    sim_rng r;
    sim_rng_seed(&r, 1, 2);
    static uint32_t hits[3001];
    for (int i = 0; i < 300000; i++) {
        uint32_t v = tpcc_nurand(&r, 1023, 123, 1, 3000);
        assert_true(v >= 1 && v <= 3000);
        hits[v]++;
    }
    /* Non-uniform: the most popular id is drawn far more often than the average 100. */
    uint32_t mx = 0;
    for (int i = 1; i <= 3000; i++)
        mx = hits[i] > mx ? hits[i] : mx;
    assert_true(mx > 300);
}

static void test_crun_rule(void **state)
{
    (void)state;
    sim_rng r;
    sim_rng_seed(&r, 3, 4);
    for (int i = 0; i < 2000; i++) {
        tpcc_consts load, run;
        tpcc_consts_load(&load, &r);
        assert_true(load.c_last <= 255 && load.c_id <= 1023 && load.ol_i_id <= 8191);
        tpcc_consts_run(&run, &load, &r);
        assert_true(run.c_last <= 255);
        uint32_t d = run.c_last > load.c_last ? run.c_last - load.c_last : load.c_last - run.c_last;
        assert_true(d >= 65 && d <= 119 && d != 96 && d != 112);
    }
    assert_false(tpcc_consts_valid_delta(100, 4));  /* 96 */
    assert_false(tpcc_consts_valid_delta(0, 112));  /* 112 */
    assert_false(tpcc_consts_valid_delta(10, 20));  /* too close */
    assert_true(tpcc_consts_valid_delta(200, 100)); /* 100 */
}

static void test_strings(void **state)
{
    (void)state;
    sim_rng r;
    sim_rng_seed(&r, 5, 6);
    char b[600];
    int orig = 0;
    for (int i = 0; i < 10000; i++) {
        int n = tpcc_astring(&r, b, 26, 50);
        assert_true(n >= 26 && n <= 50);
        assert_int_equal((int)strlen(b), n);
        n = tpcc_nstring(&r, b, 16, 16);
        assert_int_equal(n, 16);
        for (int k = 0; k < n; k++)
            assert_true(b[k] >= '0' && b[k] <= '9');
        tpcc_data_string(&r, b, 26, 50);
        orig += strstr(b, "ORIGINAL") != NULL;
    }
    assert_true(orig > 800 && orig < 1200);
}

static void test_mix_parse(void **state)
{
    (void)state;
    tpcc_mix m;
    char err[256];
    assert_int_equal(tpcc_mix_parse("45,43,4,4,4", &m, err, sizeof err), 0);
    assert_int_equal(m.pct[0], 45);
    assert_int_equal(m.pct[4], 4);
    assert_int_equal(tpcc_mix_parse("50,40,4,4,2", &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "minimum"));
    assert_int_equal(tpcc_mix_parse("45,43,4,4,5", &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "101"));
    assert_int_equal(tpcc_mix_parse("45,43,4,4", &m, err, sizeof err), -1);
    assert_int_equal(tpcc_mix_parse("45,43,4,4,4,1", &m, err, sizeof err), -1);
    assert_int_equal(tpcc_mix_parse("x", &m, err, sizeof err), -1);
}

static void test_deck(void **state)
{
    (void)state;
    tpcc_mix m;
    char err[256];
    assert_int_equal(tpcc_mix_parse("45,43,4,4,4", &m, err, sizeof err), 0);
    sim_rng r;
    sim_rng_seed(&r, 9, 9);
    tpcc_deck d;
    tpcc_deck_init(&d, &m, &r);
    /* Every window of 100 draws aligned to the deck holds the exact mix. */
    for (int pass = 0; pass < 5; pass++) {
        int n[TPCC_NTYPES] = {0};
        for (int i = 0; i < 100; i++)
            n[tpcc_deck_draw(&d, &m, &r)]++;
        for (int t = 0; t < TPCC_NTYPES; t++)
            assert_int_equal(n[t], m.pct[t]);
    }
}

static void test_input_generators(void **state)
{
    (void)state;
    sim_rng r;
    sim_rng_seed(&r, 11, 12);
    tpcc_consts c = {100, 200, 300};
    int rollbacks = 0, remote_lines = 0, lines = 0, remote_pay = 0, by_name = 0;
    for (int i = 0; i < 20000; i++) {
        tpcc_no_in no;
        tpcc_gen_new_order(&r, &c, 10, 3, &no);
        assert_true(no.ol_cnt >= 5 && no.ol_cnt <= 15);
        assert_true(no.d_id >= 1 && no.d_id <= 10);
        rollbacks += no.rollback;
        for (uint32_t k = 0; k < no.ol_cnt; k++) {
            lines++;
            remote_lines += no.supply_w_id[k] != 3;
            assert_true(no.supply_w_id[k] >= 1 && no.supply_w_id[k] <= 10);
            assert_true(no.qty[k] >= 1 && no.qty[k] <= 10);
        }
        tpcc_pay_in p;
        tpcc_gen_payment(&r, &c, 10, 3, &p);
        remote_pay += p.c_w_id != 3;
        by_name += p.by_name;
        assert_true(p.h_amount_cents >= 100 && p.h_amount_cents <= 500000);
    }
    assert_true(rollbacks > 120 && rollbacks < 290);                      /* 1 % */
    assert_true(remote_lines > lines / 200 && remote_lines < lines / 50); /* 1 % */
    assert_true(remote_pay > 2600 && remote_pay < 3400);                  /* 15 % */
    assert_true(by_name > 11500 && by_name < 12500);                      /* 60 % */
    /* One warehouse: nothing is remote. */
    tpcc_pay_in p;
    for (int i = 0; i < 1000; i++) {
        tpcc_gen_payment(&r, &c, 1, 1, &p);
        assert_int_equal(p.c_w_id, 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lastname),         cmocka_unit_test(test_nurand_range_and_skew),
        cmocka_unit_test(test_crun_rule),        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_mix_parse),        cmocka_unit_test(test_deck),
        cmocka_unit_test(test_input_generators),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
