/* Option parsing: sizes, durations, ranges, choices, positional arguments, errors. */
#include "sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

static void test_sizes(void **state)
{
    uint64_t b;
    assert_int_equal(sim_parse_size("4096", &b), 0);
    assert_int_equal(b, 4096);
    assert_int_equal(sim_parse_size("4k", &b), 0);
    assert_int_equal(b, 4096);
    assert_int_equal(sim_parse_size("24G", &b), 0);
    assert_int_equal(b, 24ull << 30);
    assert_int_equal(sim_parse_size("512MiB", &b), 0);
    assert_int_equal(b, 512ull << 20);
    assert_int_equal(sim_parse_size("1.5G", &b), 0);
    assert_int_equal(b, 3ull << 29);
    assert_int_equal(sim_parse_size("2TB", &b), 0);
    assert_int_equal(b, 2ull << 40);
    assert_int_equal(sim_parse_size("", &b), -1);
    assert_int_equal(sim_parse_size("G", &b), -1);
    assert_int_equal(sim_parse_size("12X", &b), -1);
    assert_int_equal(sim_parse_size("-1", &b), -1);
    assert_int_equal(sim_parse_size("5GG", &b), -1);
}

static void test_durations(void **state)
{
    uint64_t ns;
    assert_int_equal(sim_parse_duration("30", &ns), 0);
    assert_int_equal(ns, 30000000000ull);
    assert_int_equal(sim_parse_duration("30m", &ns), 0);
    assert_int_equal(ns, 1800000000000ull);
    assert_int_equal(sim_parse_duration("500ms", &ns), 0);
    assert_int_equal(ns, 500000000ull);
    assert_int_equal(sim_parse_duration("2h", &ns), 0);
    assert_int_equal(ns, 7200000000000ull);
    assert_int_equal(sim_parse_duration("1h30m", &ns), 0);
    assert_int_equal(ns, 5400000000000ull);
    assert_int_equal(sim_parse_duration("2.5s", &ns), 0);
    assert_int_equal(ns, 2500000000ull);
    assert_int_equal(sim_parse_duration("10x", &ns), -1);
    assert_int_equal(sim_parse_duration("m", &ns), -1);
    assert_int_equal(sim_parse_duration("", &ns), -1);
}

typedef struct {
    uint64_t scale, buffer, duration;
    double ratio;
    bool flag;
    const char *mode, *name;
} vals;

static int parse(vals *v, sim_opt *opts, int argc, char **argv, char **pos, int *npos)
{
    return sim_opts_parse("test", opts, argc, argv, pos, 2, npos, NULL);
}

#define OPTS(v)                                                                                    \
    sim_opt opts[] = {                                                                             \
        {"scale", SIM_OPT_U64, &(v).scale, "warehouses", NULL, 1, 100000, false},                  \
        {"buffer", SIM_OPT_SIZE, &(v).buffer, "memory", NULL, 0, 0, false},                        \
        {"duration", SIM_OPT_DURATION, &(v).duration, "time", NULL, 0, 0, false},                  \
        {"ratio", SIM_OPT_DOUBLE, &(v).ratio, "ratio", NULL, 0, 1, false},                         \
        {"flag", SIM_OPT_FLAG, &(v).flag, "a flag", NULL, 0, 0, false},                            \
        {"pacing", SIM_OPT_CHOICE, &(v).mode, "pacing", "review|spec|off", 0, 0, false},           \
        {"o", SIM_OPT_STRING, &(v).name, "output", NULL, 0, 0, false},                             \
        SIM_OPT_END}

static void test_table(void **state)
{
    vals v = {
        .scale = 1, .buffer = 1 << 20, .duration = 1000000000ull, .ratio = 0.5, .mode = "review"};
    OPTS(v);
    char *argv[] = {"test",   "run",      "--scale", "20", "--buffer=64M", "--duration", "2m",
                    "--flag", "--pacing", "off",     "-o", "x.json",       "extra"};
    char *pos[2];
    int npos = 0;
    assert_int_equal(parse(&v, opts, 13, argv, pos, &npos), 0);
    assert_int_equal(v.scale, 20);
    assert_int_equal(v.buffer, 64ull << 20);
    assert_int_equal(v.duration, 120000000000ull);
    assert_true(v.flag);
    assert_string_equal(v.mode, "off");
    assert_string_equal(v.name, "x.json");
    assert_int_equal(npos, 2);
    assert_string_equal(pos[0], "run");
    assert_string_equal(pos[1], "extra");
    assert_true(sim_opts_find(opts, "scale")->set);
    assert_false(sim_opts_find(opts, "ratio")->set);
    json_t *cfg = sim_opts_to_json(opts);
    assert_int_equal(json_integer_value(json_object_get(cfg, "scale")), 20);
    assert_true(json_real_value(json_object_get(cfg, "ratio")) == 0.5); /* default recorded */
    assert_true(json_real_value(json_object_get(cfg, "duration")) == 120.0);
    json_decref(cfg);
}

static void test_errors(void **state)
{
    vals v = {.scale = 1, .mode = "review"};
    OPTS(v);
    char *pos[2];
    int npos;
    char *a1[] = {"test", "--scale", "0"}; /* below the minimum */
    assert_int_equal(parse(&v, opts, 3, a1, pos, &npos), SIM_EXIT_USAGE);
    char *a2[] = {"test", "--scale", "abc"};
    assert_int_equal(parse(&v, opts, 3, a2, pos, &npos), SIM_EXIT_USAGE);
    char *a3[] = {"test", "--pacing", "fast"};
    assert_int_equal(parse(&v, opts, 3, a3, pos, &npos), SIM_EXIT_USAGE);
    char *a4[] = {"test", "--nope"};
    assert_int_equal(parse(&v, opts, 2, a4, pos, &npos), SIM_EXIT_USAGE);
    char *a5[] = {"test", "--buffer"};
    assert_int_equal(parse(&v, opts, 2, a5, pos, &npos), SIM_EXIT_USAGE);
    char *a6[] = {"test", "a", "b", "c"};
    assert_int_equal(parse(&v, opts, 4, a6, pos, &npos), SIM_EXIT_USAGE);
    char *a7[] = {"test", "--ratio", "1.5"};
    assert_int_equal(parse(&v, opts, 3, a7, pos, &npos), SIM_EXIT_USAGE);
    char *a8[] = {"test", "--flag=yes"};
    assert_int_equal(parse(&v, opts, 2, a8, pos, &npos), SIM_EXIT_USAGE);
    char *a9[] = {"test", "--duration", "5 parsecs"};
    assert_int_equal(parse(&v, opts, 3, a9, pos, &npos), SIM_EXIT_USAGE);
    assert_int_equal(v.scale, 1); /* nothing half-applied from a refused value */
}

static void test_double_dash(void **state)
{
    vals v = {0};
    OPTS(v);
    char *argv[] = {"test", "--flag", "--", "--scale"};
    char *pos[2];
    int npos;
    assert_int_equal(parse(&v, opts, 4, argv, pos, &npos), 0);
    assert_int_equal(npos, 1);
    assert_string_equal(pos[0], "--scale");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),       cmocka_unit_test(test_durations),
        cmocka_unit_test(test_table),       cmocka_unit_test(test_errors),
        cmocka_unit_test(test_double_dash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
