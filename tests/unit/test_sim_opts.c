/* Option parsing: sizes, durations, ranges, choices, positional arguments, errors. */
#include "sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
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
        {.name = "scale",                                                                          \
         .kind = SIM_OPT_U64,                                                                      \
         .dst = &(v).scale,                                                                        \
         .help = "warehouses",                                                                     \
         .min = 1,                                                                                 \
         .max = 100000},                                                                           \
        {.name = "buffer", .kind = SIM_OPT_SIZE, .dst = &(v).buffer, .help = "memory"},            \
        {.name = "duration", .kind = SIM_OPT_DURATION, .dst = &(v).duration, .help = "time"},      \
        {.name = "ratio", .kind = SIM_OPT_DOUBLE, .dst = &(v).ratio, .help = "ratio", .max = 1},   \
        {.name = "flag", .kind = SIM_OPT_FLAG, .dst = &(v).flag, .help = "a flag"},                \
        {.name = "pacing",                                                                         \
         .kind = SIM_OPT_CHOICE,                                                                   \
         .dst = &(v).mode,                                                                         \
         .help = "pacing",                                                                         \
         .choices = "review|spec|off"},                                                            \
        {.name = "o", .kind = SIM_OPT_STRING, .dst = &(v).name, .help = "output"},                 \
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

/* The shared vocabulary's machinery: an alias, an old spelling, a bare old flag form
 * and the help text generated from the table. */
static void test_vocabulary(void **state)
{
    (void)state;
    uint64_t duration = 0, interval = SIM_REPORT_INTERVAL_DEFAULT_NS;
    const char *engine = "io_uring", *json = NULL;
    sim_opt opts[] = {
        SIM_VOCAB_DURATION(&duration, 0, ""),
        SIM_VOCAB_REPORT_INTERVAL(&interval),
        {.name = "ioengine",
         .kind = SIM_OPT_CHOICE,
         .dst = &engine,
         .choices = "io_uring|psync",
         .deprecated = "io-engine|engine",
         .help = "I/O engine"},
        SIM_VOCAB_JSON(&json, "o"),
        SIM_OPT_END,
    };
    opts[3].bare_value = "out.json"; /* not "-": the test keeps its stdout */
    char *a1[] = {"x", "--time", "7", "--io-engine", "psync", "-o", "r.json"};
    assert_int_equal(sim_opts_parse("x", opts, 7, a1, NULL, 0, NULL, NULL), 0);
    assert_int_equal(duration, 7000000000ull);
    assert_true(opts[0].set);
    assert_string_equal(engine, "psync");
    assert_string_equal(json, "r.json");
    /* Recorded under the one name only. */
    json_t *cfg = sim_opts_to_json(opts);
    assert_non_null(json_object_get(cfg, "duration"));
    assert_null(json_object_get(cfg, "time"));
    assert_null(json_object_get(cfg, "io-engine"));
    json_decref(cfg);
    /* The bare old flag form, before another option and at the end. */
    json = NULL;
    char *a2[] = {"x", "--json", "--engine", "io_uring"};
    assert_int_equal(sim_opts_parse("x", opts, 4, a2, NULL, 0, NULL, NULL), 0);
    assert_string_equal(json, "out.json");
    json = NULL;
    char *a3[] = {"x", "--json"};
    assert_int_equal(sim_opts_parse("x", opts, 2, a3, NULL, 0, NULL, NULL), 0);
    assert_string_equal(json, "out.json");
    /* Neither an alias nor an old spelling: refused. */
    char *a4[] = {"x", "--times", "7"};
    assert_int_equal(sim_opts_parse("x", opts, 3, a4, NULL, 0, NULL, NULL), SIM_EXIT_USAGE);
    /* Help: aliases listed, old spellings not, one default per line. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sim_opts_help(f, "x", NULL, opts);
    fclose(f);
    assert_non_null(strstr(text, "--duration TIME"));
    assert_non_null(strstr(text, "(also --time)"));
    assert_non_null(strstr(text, "--json FILE"));
    assert_non_null(strstr(text, "(default: 5s)"));
    assert_null(strstr(text, "io-engine"));
    assert_null(strstr(text, "(default: 10,20"));
    free(text);
}

static void test_edit_distance(void **state)
{
    (void)state;
    assert_int_equal(sim_edit_distance("", ""), 0);
    assert_int_equal(sim_edit_distance("", "abc"), 3);
    assert_int_equal(sim_edit_distance("abc", ""), 3);
    assert_int_equal(sim_edit_distance("target", "target"), 0);
    assert_int_equal(sim_edit_distance("targt", "target"), 1);      /* deletion */
    assert_int_equal(sim_edit_distance("tarrget", "target"), 1);    /* insertion */
    assert_int_equal(sim_edit_distance("durasion", "duration"), 1); /* substitution */
    assert_int_equal(sim_edit_distance("kitten", "sitting"), 3);
    assert_int_equal(sim_edit_distance("flaw", "lawn"), 2);
    assert_int_equal(sim_edit_distance("sysbnech", "sysbench"), 2); /* a swap: two edits */
}

static void test_suggest(void **state)
{
    (void)state;
    const char *const words[] = {"target", "threads", "duration", "json", "seed", "warmup"};
    size_t n = sizeof words / sizeof *words;
    assert_string_equal(sim_suggest("targt", words, n), "target");
    assert_string_equal(sim_suggest("thraeds", words, n), "threads");
    assert_string_equal(sim_suggest("jsn", words, n), "json");
    assert_string_equal(sim_suggest("dur", words, n), "duration"); /* a unique prefix */
    assert_string_equal(sim_suggest("warmpu", words, n), "warmup");
    assert_null(sim_suggest("xyz", words, n));
    assert_null(sim_suggest("size", words, n)); /* "seed" is two edits: too far for 4 letters */
    assert_null(sim_suggest("", words, n));
    const char *const ambiguous[] = {"report-interval", "report-html"};
    assert_null(sim_suggest("rep", ambiguous, 2)); /* a prefix of two: no guess */
}

/* A peer's name is accepted for appsim's option, a flag's peer form takes 0 or 1,
 * underscores read as dashes, and the help names the peer. */
static void test_peer_aliases(void **state)
{
    (void)state;
    uint64_t duration = 0, depth = 1;
    bool buffered = false;
    sim_opt opts[] = {
        SIM_VOCAB_DURATION_PEERS(&duration, 0, "", "|fio:runtime"),
        {.name = "threads", .kind = SIM_OPT_U64, .dst = &depth, .aliases = "fio:iodepth"},
        {.name = "buffered", .kind = SIM_OPT_FLAG, .dst = &buffered, .aliases = "fio:direct=0"},
        {.name = "read-pct", .kind = SIM_OPT_U64, .dst = &depth},
        SIM_OPT_END,
    };
    char *a1[] = {"x", "--runtime=3", "--iodepth", "16", "--direct=0"};
    assert_int_equal(sim_opts_parse("x", opts, 5, a1, NULL, 0, NULL, NULL), 0);
    assert_int_equal(duration, 3000000000ull);
    assert_int_equal(depth, 16);
    assert_true(buffered);
    char *a2[] = {"x", "--direct=1"};
    assert_int_equal(sim_opts_parse("x", opts, 2, a2, NULL, 0, NULL, NULL), 0);
    assert_false(buffered);
    char *a3[] = {"x", "--direct=2"};
    assert_int_equal(sim_opts_parse("x", opts, 2, a3, NULL, 0, NULL, NULL), SIM_EXIT_USAGE);
    char *a4[] = {"x", "--read_pct", "40"};
    assert_int_equal(sim_opts_parse("x", opts, 3, a4, NULL, 0, NULL, NULL), 0);
    assert_int_equal(depth, 40);
    json_t *cfg = sim_opts_to_json(opts);
    assert_null(json_object_get(cfg, "runtime"));
    assert_null(json_object_get(cfg, "iodepth"));
    json_decref(cfg);
    sim_alias a;
    const char *p = sim_alias_next("time|fio:runtime|fio:direct=0", &a);
    assert_int_equal(a.name_len, 4);
    assert_int_equal(a.peer_len, 0);
    assert_int_equal(a.flag_value, -1);
    p = sim_alias_next(p, &a);
    assert_memory_equal(a.peer, "fio", 3);
    assert_memory_equal(a.name, "runtime", 7);
    p = sim_alias_next(p, &a);
    assert_int_equal(a.name_len, 6);
    assert_int_equal(a.flag_value, 0);
    assert_null(sim_alias_next(p, &a));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sim_opts_help(f, "x", NULL, opts);
    fclose(f);
    assert_non_null(strstr(text, "(also --time, fio's --runtime)"));
    assert_non_null(strstr(text, "(also fio's --direct=0)"));
    free(text);
}

/* The shortest form that reads back as the same double. */
static void test_format_double(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(sim_format_double(2237.6, buf, sizeof buf), "2237.6");
    assert_string_equal(sim_format_double(0.1, buf, sizeof buf), "0.1");
    assert_string_equal(sim_format_double(1.0 / 3.0, buf, sizeof buf), "0.3333333333333333");
    assert_string_equal(sim_format_double(0.1 + 0.2, buf, sizeof buf), "0.30000000000000004");
    assert_string_equal(sim_format_double(100, buf, sizeof buf), "100");
    assert_string_equal(sim_format_double(-7.25e-9, buf, sizeof buf), "-7.25e-09");
    assert_string_equal(sim_format_double(0, buf, sizeof buf), "0");
    /* Every double comes back exactly. */
    const double samples[] = {2237.5999999999999, 1e300, 5e-324, 123456789.123456789,
                              9007199254740993.0, 0.7};
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        sim_format_double(samples[i], buf, sizeof buf);
        assert_true(strtod(buf, NULL) == samples[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),         cmocka_unit_test(test_durations),
        cmocka_unit_test(test_table),         cmocka_unit_test(test_errors),
        cmocka_unit_test(test_double_dash),   cmocka_unit_test(test_vocabulary),
        cmocka_unit_test(test_edit_distance), cmocka_unit_test(test_suggest),
        cmocka_unit_test(test_peer_aliases),  cmocka_unit_test(test_format_double),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
