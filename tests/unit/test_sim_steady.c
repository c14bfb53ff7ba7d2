/* The SNIA PTS steady-state rule (sim_steady_judge) on synthetic series, and a run
 * whose warm-up ends when its rate settles. */
#include "sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const sim_steady_rule pts = SIM_STEADY_RULE_PTS;

static void test_flat_is_steady(void **state)
{
    double x[] = {1000, 1000, 1000, 1000, 1000};
    sim_steady_eval ev = sim_steady_judge(x, 5, &pts);
    assert_true(ev.judged);
    assert_true(ev.steady);
    assert_true(fabs(ev.mean - 1000) < 1e-9);
    assert_true(ev.range == 0 && ev.slope_change < 1e-9);
}

static void test_too_few_rounds(void **state)
{
    double x[] = {1000, 1000, 1000, 1000};
    sim_steady_eval ev = sim_steady_judge(x, 4, &pts);
    assert_false(ev.judged);
    assert_false(ev.steady);
}

static void test_rising_fails_on_slope(void **state)
{
    /* +3.5 % a round: range 14 % of the mean passes, the line changes ~14 % > 10 %. */
    double x[] = {1000, 1035, 1070, 1105, 1140};
    sim_steady_eval ev = sim_steady_judge(x, 5, &pts);
    assert_true(ev.judged);
    assert_false(ev.steady);
    assert_true(ev.range <= 0.20 * ev.mean);
    assert_true(fabs(ev.slope_change - 140) < 1e-6);
    /* A gentle rise of 2 % a round: change 8 % of the mean, steady. */
    double y[] = {1000, 1020, 1040, 1060, 1080};
    assert_true(sim_steady_judge(y, 5, &pts).steady);
}

static void test_noisy_fails_on_range(void **state)
{
    /* No trend (slope 0) but a 30 % excursion. */
    double x[] = {1000, 1300, 1000, 1300, 1000, 1300, 1000, 1300, 1150};
    sim_steady_eval ev = sim_steady_judge(x + 2, 5, &pts);
    assert_false(ev.steady);
    assert_true(ev.range > 0.20 * ev.mean);
    /* Noise of +-5 % around a flat mean is steady. */
    double y[] = {1000, 1050, 950, 1020, 980};
    assert_true(sim_steady_judge(y, 5, &pts).steady);
}

static void test_step_settles_after_window(void **state)
{
    /* The rate drops from 1000 to 400 after the sixth sample (a throttle): steady at
     * first, not while the window straddles the step, steady again five samples after. */
    double x[12] = {1000, 1000, 1000, 1000, 1000, 1000, 400, 400, 400, 400, 400, 400};
    assert_true(sim_steady_judge(x, 6, &pts).steady);
    for (size_t n = 7; n <= 10; n++)
        assert_false(sim_steady_judge(x, n, &pts).steady);
    assert_true(sim_steady_judge(x, 11, &pts).steady);
    sim_steady_eval ev = sim_steady_judge(x, 12, &pts);
    assert_true(ev.steady);
    assert_true(fabs(ev.mean - 400) < 1e-9);
}

static void test_only_last_window_counts(void **state)
{
    double x[] = {10, 5000, 3, 1000, 1001, 999, 1000, 1002};
    assert_true(sim_steady_judge(x, 8, &pts).steady);
    assert_false(sim_steady_judge(x, 7, &pts).steady);
}

static void test_stalled_and_bad_values(void **state)
{
    double zero[] = {0, 0, 0, 0, 0};
    sim_steady_eval ev = sim_steady_judge(zero, 5, &pts);
    assert_true(ev.judged);
    assert_false(ev.steady);
    double nan_in[] = {1000, 1000, NAN, 1000, 1000};
    assert_false(sim_steady_judge(nan_in, 5, &pts).steady);
}

/* A worker completing about one unit every 200 us: steady from the start, so the
 * warm-up ends after the fifth round and the measured phase holds what follows. */
typedef struct worker_arg {
    sim_run *run;
    atomic_bool stop;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *a = p;
    sim_meter *m = sim_run_meter(a->run, 0);
    while (!atomic_load(&a->stop) && !sim_run_done(a->run)) {
        uint64_t t = sim_now_ns();
        nanosleep(&(struct timespec){0, 200000}, NULL);
        sim_meter_record(m, 0, t, sim_now_ns());
    }
    return NULL;
}

static void test_run_ends_warmup_when_steady(void **state)
{
    sim_run_config cfg = {.unit = "iops", .duration_ns = 300000000ull, .quiet = true};
    sim_run_config_warmup(&cfg, SIM_WARMUP_STEADY, 100000000ull, 8);
    assert_int_equal(cfg.warmup_ns, 0);
    sim_run *run = sim_run_new(&cfg);
    worker_arg a = {.run = run};
    pthread_t th;
    sim_run_start(run);
    assert_int_equal(sim_run_measure_start_ns(run), UINT64_MAX);
    assert_int_equal(pthread_create(&th, NULL, worker, &a), 0);
    while (!sim_run_done(run))
        sim_sleep_until_ns(sim_now_ns() + 10000000ull);
    atomic_store(&a.stop, true);
    pthread_join(th, NULL);
    sim_run_finish(run);
    json_t *doc = json_object();
    sim_result_put_run(doc, NULL, run);
    json_t *st = json_object_get(doc, "steady_state");
    assert_non_null(st);
    json_t *rounds = json_object_get(st, "rounds");
    size_t n = json_array_size(rounds);
    /* A sleeping thread on a busy machine is not perfectly even: allow a few rounds. */
    if (json_is_true(json_object_get(st, "reached"))) {
        assert_in_range(n, 5, 8);
        assert_true(json_is_true(json_object_get(json_array_get(rounds, n - 1), "steady")));
        double start = json_real_value(json_object_get(st, "measure_start_s"));
        assert_true(start >= 0.5 - 0.01);
        assert_true(fabs(sim_run_measured_seconds(run) - 0.3) < 0.05);
        assert_true(sim_run_count(run, -1, -1) > 0);
    } else {
        assert_int_equal(n, 8);
        assert_true(json_is_true(json_object_get(st, "gave_up")));
    }
    json_decref(doc);
    sim_run_free(run);
}

/* A run stopped during a steady-state warm-up has an empty measured phase and says
 * steady state was not reached. */
static void test_run_finished_during_warmup(void **state)
{
    sim_run_config cfg = {.unit = "tps", .duration_ns = 1000000000ull, .quiet = true};
    sim_run_config_warmup(&cfg, SIM_WARMUP_STEADY, 10000000000ull, 25);
    sim_run *run = sim_run_new(&cfg);
    sim_run_start(run);
    sim_meter *m = sim_run_meter(run, 0);
    sim_meter_record(m, 0, sim_now_ns(), sim_now_ns());
    sim_run_finish(run);
    assert_true(sim_run_measured_seconds(run) == 0.0);
    assert_int_equal(sim_run_count(run, -1, -1), 0);
    json_t *doc = json_object();
    sim_result_put_run(doc, NULL, run);
    json_t *st = json_object_get(doc, "steady_state");
    assert_false(json_is_true(json_object_get(st, "reached")));
    assert_false(json_is_true(json_object_get(st, "gave_up")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "warmup"), "count")),
                     1);
    json_decref(doc);
    sim_run_free(run);
}

/* --warmup takes a duration or "steady"; the round options need "steady". */
static void test_warmup_option(void **state)
{
    uint64_t warmup = 5000000000ull, round = SIM_STEADY_DEFAULT_ROUND_NS,
             rounds = SIM_STEADY_DEFAULT_MAX_ROUNDS;
    sim_opt opts[] = {
        {.name = "warmup", .kind = SIM_OPT_WARMUP, .dst = &warmup, .help = "w"},
        SIM_STEADY_OPTS(&round, &rounds),
        SIM_OPT_END,
    };
    char *pos[1];
    int np = 0;
    char *a1[] = {"x", "--warmup", "steady", "--steady-round", "10s"};
    assert_int_equal(sim_opts_parse("x", opts, 5, a1, pos, 0, &np, NULL), 0);
    assert_true(warmup == SIM_WARMUP_STEADY);
    assert_true(round == 10000000000ull);
    assert_int_equal(sim_steady_opts_check("x", opts, warmup), 0);
    json_t *j = sim_opts_to_json(opts);
    assert_string_equal(json_string_value(json_object_get(j, "warmup")), "steady");
    json_decref(j);

    sim_opt opts2[] = {
        {.name = "warmup", .kind = SIM_OPT_WARMUP, .dst = &warmup, .help = "w"},
        SIM_STEADY_OPTS(&round, &rounds),
        SIM_OPT_END,
    };
    char *a2[] = {"x", "--warmup", "30s", "--steady-max-rounds", "9"};
    assert_int_equal(sim_opts_parse("x", opts2, 5, a2, pos, 0, &np, NULL), 0);
    assert_true(warmup == 30000000000ull);
    assert_int_equal(sim_steady_opts_check("x", opts2, warmup), SIM_EXIT_USAGE);
    char *a3[] = {"x", "--warmup", "stable"};
    assert_int_equal(sim_opts_parse("x", opts2, 3, a3, pos, 0, &np, NULL), SIM_EXIT_USAGE);
    char *a4[] = {"x", "--steady-max-rounds", "4"}; /* the window needs 5 */
    assert_int_equal(sim_opts_parse("x", opts2, 3, a4, pos, 0, &np, NULL), SIM_EXIT_USAGE);
}

/* A result's intervals: `warm` warm-up intervals, then the measured ones with counts
 * from rates[] (per second, 1-s intervals) and, when read_us is given, the disk's
 * reads (100 a second) and mean read latency. */
static json_t *intervals_of(int warm, const double *rates, const double *read_us, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < warm; i++)
        json_array_append_new(a, json_pack("{s:s, s:f, s:I}", "phase", "warmup", "seconds", 1.0,
                                           "count", (json_int_t)5));
    for (int i = 0; i < n; i++) {
        json_t *iv = json_pack("{s:s, s:f, s:I}", "phase", "measure", "seconds", 1.0, "count",
                               (json_int_t)rates[i]);
        if (read_us)
            json_object_set_new(iv, "device_io",
                                json_pack("{s:I, s:f}", "reads", (json_int_t)100,
                                          "read_latency_avg_us", read_us[i]));
        json_array_append_new(a, iv);
    }
    return a;
}

static char *printed(const json_t *ms)
{
    json_t *doc = json_object();
    json_object_set((json_t *)doc, "measure_steadiness", (json_t *)ms);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sim_result_print_steadiness(f, doc);
    fclose(f);
    json_decref(doc);
    return text;
}

/* The measured phase judged after the fact: in fifths of its intervals, warm-up
 * intervals left out; steady when flat, not when the drive slows halfway, and no
 * verdict for a phase too short to judge. */
static void test_measured_phase_steadiness(void **state)
{
    double flat[10] = {100, 102, 98, 101, 99, 100, 103, 97, 100, 100};
    double lat[10] = {90, 91, 90, 92, 90, 90, 91, 90, 92, 90};
    json_t *iv = intervals_of(3, flat, lat, 10);
    json_t *ms = sim_result_steadiness_json(iv, "tps");
    assert_non_null(ms);
    assert_true(json_is_true(json_object_get(ms, "steady")));
    assert_int_equal(json_array_size(json_object_get(ms, "rates")), 5);
    assert_true(fabs(json_real_value(json_array_get(json_object_get(ms, "rates"), 0)) - 101) <
                1e-9); /* (100 + 102) / 2 s: the warm-up's 5 a second left out */
    assert_true(
        fabs(json_real_value(json_array_get(json_object_get(ms, "device_read_latency_us"), 4)) -
             91) < 1e-9);
    char *text = printed(ms);
    assert_non_null(strstr(text, "measured phase steady: tps by fifths 101 99.5 99.5 100 100"));
    assert_null(strstr(text, "WARNING"));
    free(text);
    json_decref(ms);
    json_decref(iv);

    /* A drive that slows halfway (its reads ten times slower): not steady, and said. */
    double fall[10] = {1000, 1000, 1000, 1000, 1000, 300, 300, 300, 300, 300};
    double slow[10] = {80, 80, 80, 80, 80, 800, 800, 800, 800, 800};
    iv = intervals_of(0, fall, slow, 10);
    ms = sim_result_steadiness_json(iv, "tps");
    assert_non_null(ms);
    assert_false(json_is_true(json_object_get(ms, "steady")));
    assert_true(json_real_value(json_object_get(ms, "range_pct")) > 20);
    text = printed(ms);
    assert_non_null(strstr(text, "WARNING: measured phase NOT steady: tps by fifths 1000 1000 650 "
                                 "300 300"));
    assert_non_null(
        strstr(text, "device read latency by fifths (ms) 0.080 0.080 0.440 0.800 0.800"));
    free(text);
    json_decref(ms);
    json_decref(iv);

    /* Without the disk's counters: the rates alone, and nothing printed about reads;
     * rates below 100 keep three digits. */
    double small[10] = {10, 10, 10, 10, 10, 10, 10, 10, 10, 5};
    iv = intervals_of(0, small, NULL, 10);
    ms = sim_result_steadiness_json(iv, "tps");
    text = printed(ms);
    assert_non_null(strstr(text, "tps by fifths 10 10 10 10 7.5"));
    free(text);
    json_decref(ms);
    json_decref(iv);
    iv = intervals_of(0, fall, NULL, 10);
    ms = sim_result_steadiness_json(iv, "iops");
    assert_true(json_is_null(json_array_get(json_object_get(ms, "device_read_latency_us"), 0)));
    text = printed(ms);
    assert_non_null(strstr(text, "iops by fifths"));
    assert_null(strstr(text, "device read latency"));
    free(text);
    json_decref(ms);
    json_decref(iv);

    /* Nine measured intervals (fewer than two a fifth): no verdict, nothing printed. */
    iv = intervals_of(20, flat, lat, 9);
    assert_null(sim_result_steadiness_json(iv, "tps"));
    json_decref(iv);
    text = printed(NULL);
    assert_string_equal(text, "");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_is_steady),
        cmocka_unit_test(test_too_few_rounds),
        cmocka_unit_test(test_rising_fails_on_slope),
        cmocka_unit_test(test_noisy_fails_on_range),
        cmocka_unit_test(test_step_settles_after_window),
        cmocka_unit_test(test_only_last_window_counts),
        cmocka_unit_test(test_stalled_and_bad_values),
        cmocka_unit_test(test_run_ends_warmup_when_steady),
        cmocka_unit_test(test_run_finished_during_warmup),
        cmocka_unit_test(test_warmup_option),
        cmocka_unit_test(test_measured_phase_steadiness),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
