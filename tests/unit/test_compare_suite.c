/*
 * `appsim suite`: a tiny custom suite end to end (with a fake command registered only in
 * this test binary), a resumed suite that skips its finished steps, refusal of bad suite
 * files, and the built-in review suite being the text of suites/review.ini.
 */
#include "sim/review/review_internal.h"
#include "sim/review/suite_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_compare_fixtures.h"

static char dir[256];
static int fake_calls;
static char fake_last_args[1024];

/* fakebench --target T --json FILE [--tps N] [--fail]: writes a result of N tps. */
static int fake_main(int argc, char **argv)
{
    const char *target = NULL, *json = NULL;
    double tps = 100;
    bool failflag = false;
    sim_opt opts[] = {
        {.name = "target", .kind = SIM_OPT_STRING, .dst = &target, .help = "t"},
        {.name = "json", .kind = SIM_OPT_STRING, .dst = &json, .help = "j"},
        {.name = "tps", .kind = SIM_OPT_DOUBLE, .dst = &tps, .help = "rate"},
        {.name = "fail", .kind = SIM_OPT_FLAG, .dst = &failflag, .help = "fail"},
        SIM_OPT_END,
    };
    char *pos[1];
    int npos;
    int rc = sim_opts_parse("fakebench", opts, argc, argv, pos, 1, &npos, "fakebench");
    /* Only runs count: the report asks the table of options too (a describe, no run). */
    if (rc == SIM_OPTS_HELP_SHOWN) return SIM_EXIT_OK;
    if (rc) return SIM_EXIT_USAGE;
    fake_calls++;
    fake_last_args[0] = 0;
    for (int i = 1; i < argc; i++) {
        strncat(fake_last_args, argv[i], sizeof fake_last_args - strlen(fake_last_args) - 2);
        strcat(fake_last_args, " ");
    }
    fx_run r = {.workload = "fakebench",
                .model = "FakeDrive",
                .path = target,
                .scale = 1,
                .duration = 10,
                .seconds = 10,
                .base_ns = 100000,
                .step_ns = 100,
                .n = (uint64_t)(tps * 10),
                .histograms = true,
                .interrupted = failflag};
    fx_write(&r, json);
    return failflag ? SIM_EXIT_FAIL : SIM_EXIT_OK;
}
static const sim_command fake_command = {
    .name = "fakebench", .summary = "test only", .main = fake_main};
SIM_REGISTER_COMMAND(fake_command)

static int setup(void **state)
{
    fx_tmpdir(dir, sizeof dir, "suite");
    fake_calls = 0;
    return 0;
}

static int teardown(void **state)
{
    fx_rmdir(dir);
    return 0;
}

static const char *path_in(const char *name)
{
    static char bufs[8][512];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, 512, "%s/%s", dir, name);
    return b;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int run_suite(const char *suite, const char *out, const char *extra)
{
    char *argv[12];
    int argc = 0;
    argv[argc++] = "suite";
    argv[argc++] = (char *)suite;
    argv[argc++] = "--target";
    argv[argc++] = dir;
    argv[argc++] = "-o";
    argv[argc++] = (char *)out;
    if (extra) argv[argc++] = (char *)extra;
    argv[argc] = NULL;
    return sim_find_command("suite")->main(argc, argv);
}

static const char tiny_suite[] = "# a tiny suite\n"
                                 "[suite]\n"
                                 "name = tiny\n"
                                 "description = test\n"
                                 "[fast]\n"
                                 "command = fakebench\n"
                                 "args = --target {target} --json {result}\n"
                                 "args.small = --tps 200\n"
                                 "args.full = --tps 999\n"
                                 "[slow]\n"
                                 "command = fakebench\n"
                                 "args = --target {target} --json '{result}' --tps 50\n"
                                 "[missing]\n"
                                 "command = no-such-command\n"
                                 "args = --json {result}\n";

static json_t *load(const char *path)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    assert_non_null(j);
    return j;
}

static const char *step_status(json_t *state, int i)
{
    return json_string_value(
        json_object_get(json_array_get(json_object_get(state, "steps"), (size_t)i), "status"));
}

static void test_tiny_suite_end_to_end(void **state)
{
    const char *ini = path_in("tiny.ini"), *out = path_in("out");
    write_text(ini, tiny_suite);
    assert_int_equal(run_suite(ini, out, NULL), SIM_EXIT_OK);
    assert_int_equal(fake_calls, 2);
    /* Size-specific arguments follow the common ones. */
    assert_non_null(strstr(fake_last_args, "--tps 50"));
    json_t *fast = load(path_in("out/fast.json"));
    assert_double_equal(json_number_value(json_object_get(json_object_get(fast, "summary"), "tps")),
                        200.0, 1e-9);
    json_decref(fast);
    json_t *st = load(path_in("out/suite.json"));
    assert_string_equal(step_status(st, 0), "done");
    assert_string_equal(step_status(st, 1), "done");
    assert_string_equal(step_status(st, 2), "unavailable");
    assert_string_equal(json_string_value(json_object_get(st, "suite")), "tiny");
    json_decref(st);
    assert_int_equal(access(path_in("out/report.html"), F_OK), 0);
    assert_int_equal(access(path_in("out/missing.json"), F_OK), -1);

    /* The same directory again without --resume: refused, nothing rerun. */
    assert_int_equal(run_suite(ini, out, NULL), SIM_EXIT_USAGE);
    assert_int_equal(fake_calls, 2);
    /* With --resume: every step is finished; nothing rerun, the report rewritten. */
    assert_int_equal(run_suite(ini, out, "--resume"), SIM_EXIT_OK);
    assert_int_equal(fake_calls, 2);
    /* Another size in the same directory would mix results: refused. */
    assert_int_equal(run_suite(ini, out, "--size=full"), SIM_EXIT_USAGE);
    char *argv[] = {"suite",     (char *)ini, "--target", dir,    "-o",
                    (char *)out, "--resume",  "--size",   "full", NULL};
    assert_int_equal(sim_find_command("suite")->main(9, argv), SIM_EXIT_USAGE);
    assert_int_equal(fake_calls, 2);
}

static void test_explicit_options(void **state)
{
    const char *ini = path_in("tiny.ini"), *out = path_in("ovr");
    write_text(ini, tiny_suite);
    char *argv[] = {"suite", (char *)ini, "--target",       dir,
                    "-o",    (char *)out, "fast=--tps 300", NULL};
    assert_int_equal(sim_find_command("suite")->main(7, argv), SIM_EXIT_OK);
    json_t *fast = load(path_in("ovr/fast.json"));
    /* After the suite's own --tps 200: the explicit value wins. */
    assert_double_equal(json_number_value(json_object_get(json_object_get(fast, "summary"), "tps")),
                        300.0, 1e-9);
    json_decref(fast);
    json_t *st = load(path_in("ovr/suite.json"));
    assert_string_equal(json_string_value(json_array_get(json_object_get(st, "overrides"), 0)),
                        "fast=--tps 300");
    json_decref(st);
    int calls = fake_calls;
    char *bad[] = {"suite",        (char *)ini, "--target", dir, "-o", (char *)path_in("ovr2"),
                   "fats=--tps 1", NULL};
    assert_int_equal(sim_find_command("suite")->main(7, bad), SIM_EXIT_USAGE);
    assert_int_equal(fake_calls, calls);
}

static void test_dry_run_runs_nothing(void **state)
{
    const char *ini = path_in("tiny.ini"), *out = path_in("dry");
    write_text(ini, tiny_suite);
    assert_int_equal(run_suite(ini, out, "--dry-run"), SIM_EXIT_OK);
    assert_int_equal(fake_calls, 0);
    assert_int_equal(access(out, F_OK), -1);
}

static void test_resume_skips_finished_steps(void **state)
{
    const char *ini = path_in("r.ini"), *out = path_in("rout");
    write_text(ini, "[suite]\nname = r\n"
                    "[one]\ncommand = fakebench\nargs = --target {target} --json {result}\n"
                    "[two]\ncommand = fakebench\nargs = --target {target} --json {result} "
                    "--fail\n"
                    "[three]\ncommand = fakebench\nargs = --target {target} --json {result}\n");
    /* Step two fails and leaves an interrupted result; the others finish. */
    assert_int_equal(run_suite(ini, out, NULL), SIM_EXIT_FAIL);
    assert_int_equal(fake_calls, 3);
    json_t *st = load(path_in("rout/suite.json"));
    assert_string_equal(step_status(st, 0), "done");
    assert_string_equal(step_status(st, 1), "failed");
    assert_string_equal(step_status(st, 2), "done");
    json_decref(st);

    /* Fix the step and resume: only step two runs again; its incomplete result is
     * kept aside, not deleted. */
    write_text(ini, "[suite]\nname = r\n"
                    "[one]\ncommand = fakebench\nargs = --target {target} --json {result}\n"
                    "[two]\ncommand = fakebench\nargs = --target {target} --json {result}\n"
                    "[three]\ncommand = fakebench\nargs = --target {target} --json {result}\n");
    fake_calls = 0;
    assert_int_equal(run_suite(ini, out, "--resume"), SIM_EXIT_OK);
    assert_int_equal(fake_calls, 1);
    st = load(path_in("rout/suite.json"));
    assert_string_equal(step_status(st, 0), "finished-earlier");
    assert_string_equal(step_status(st, 1), "done");
    assert_string_equal(step_status(st, 2), "finished-earlier");
    json_decref(st);
    assert_int_equal(access(path_in("rout/two.json.incomplete-1"), F_OK), 0);
    assert_int_equal(access(path_in("rout/report.html"), F_OK), 0);
}

static void expect_bad_suite(const char *text, const char *why)
{
    const char *ini = path_in("bad.ini");
    write_text(ini, text);
    suite_def d;
    char err[512] = "";
    int rc = suite_parse(text, "bad.ini", &d, err, sizeof err);
    if (rc == 0) {
        suite_def_free(&d);
        /* Parsed: the command itself must refuse it before running anything. */
        int calls = fake_calls;
        assert_int_equal(run_suite(ini, path_in("badout"), NULL), SIM_EXIT_USAGE);
        assert_int_equal(fake_calls, calls);
        return;
    }
    if (!strstr(err, why)) print_error("err: %s\n", err);
    assert_non_null(strstr(err, why));
    assert_int_equal(run_suite(ini, path_in("badout"), NULL), SIM_EXIT_USAGE);
}

static void test_bad_suite_files(void **state)
{
    expect_bad_suite("[a]\ncommand = fakebench\nargz = x\n", "unknown key");
    expect_bad_suite("[a]\ncommand = fakebench\nargs.huge = x\n", "unknown size");
    expect_bad_suite("[a]\nargs = --json {result}\n", "no 'command");
    expect_bad_suite("[a]\ncommand = x\n[a]\ncommand = y\n", "step defined twice");
    expect_bad_suite("# nothing\n", "no steps");
    expect_bad_suite("key = value\n", "outside a section");
    expect_bad_suite("[a b]\ncommand = x\n", "step name");
    expect_bad_suite("[a]\ncommand = fakebench\nestimate = soon\n", "estimate");
    /* These parse, but the command refuses them before running any step. */
    expect_bad_suite("[a]\ncommand = fakebench\nargs = --target {target}\n", "");
    expect_bad_suite("[a]\ncommand = fakebench\nargs = --json {result} {tagret}\n", "");
    expect_bad_suite("[a]\ncommand = fakebench\nargs = --json \"{result}\n", "");
    assert_int_equal(run_suite("no-such-suite", path_in("x"), NULL), SIM_EXIT_USAGE);
}

static void test_words_and_placeholders(void **state)
{
    char **w;
    int n;
    char err[256];
    assert_int_equal(suite_split_words(" a 'b c' \"d \\\"e\\\"\" f\\ g  ", &w, &n, err, sizeof err),
                     0);
    assert_int_equal(n, 4);
    assert_string_equal(w[0], "a");
    assert_string_equal(w[1], "b c");
    assert_string_equal(w[2], "d \"e\"");
    assert_string_equal(w[3], "f g");
    suite_free_words(w, n);
    assert_int_equal(suite_split_words("'open", &w, &n, err, sizeof err), -1);
    suite_vars v = {"/mnt/my drive", "/o/r.json", "/o", "small", NULL};
    char *x = suite_expand("--json={result}:{size}", &v, err, sizeof err);
    assert_string_equal(x, "--json=/o/r.json:small");
    free(x);
    x = suite_expand("{target}", &v, err, sizeof err);
    assert_string_equal(x, "/mnt/my drive");
    free(x);
    assert_null(suite_expand("{trace}", &v, err, sizeof err));
    assert_non_null(strstr(err, "--trace"));
    assert_null(suite_expand("{nope}", &v, err, sizeof err));
}

static void test_builtin_review_matches_file(void **state)
{
    const char *src = getenv("APPSIM_SRC");
    if (!src) skip();
    char path[1024];
    snprintf(path, sizeof path, "%s/suites/review.ini", src);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = 0;
    fclose(f);
    const char *builtin = suite_builtin("review");
    assert_non_null(builtin);
    if (strcmp(text, builtin))
        print_error("suites/review.ini and sim/review/suite_builtin.c differ: regenerate the "
                    "string in sim/review/suite_builtin.c from the file\n");
    assert_string_equal(text, builtin);
    suite_def d;
    char err[512];
    assert_int_equal(suite_parse(builtin, "review", &d, err, sizeof err), 0);
    assert_string_equal(d.name, "review");
    assert_true(d.nsteps >= 4);
    /* full is the published configuration. */
    bool scale = false, rows = false;
    for (int i = 0; i < d.nsteps; i++) {
        const char *fa = d.steps[i].size_args[2];
        scale = scale || (fa && strstr(fa, "--scale 1500") && strstr(fa, "--vusers 15000"));
        rows = rows || (fa && strstr(fa, "--tables 100") && strstr(fa, "--table-size 10000000") &&
                        strstr(fa, "--threads 32"));
    }
    assert_true(scale);
    assert_true(rows);
    suite_def_free(&d);
}

/* A step's drive load: its busiest measured phase (a run, a curve point's run), never a
 * report interval; idle below a fifth of the time; unknown without device figures. */
static void test_step_load(void **state)
{
    json_error_t je;
    json_t *paced = json_loads("{\"device_io\": {\"utilization\": 0.04, \"read_iops\": 372,"
                               " \"write_iops\": 377}, \"intervals\": [{\"device_io\":"
                               " {\"utilization\": 0.99}}]}",
                               0, &je);
    suite_load l = suite_step_load(paced);
    assert_true(l.known);
    assert_double_equal(l.busy, 0.04, 1e-12);
    assert_double_equal(l.read_iops, 372, 1e-12);
    assert_true(suite_load_idle(&l));
    char text[256];
    suite_load_text(&l, text, sizeof text);
    assert_non_null(strstr(text, "drive busy 4 %"));
    json_t *curve = json_loads("{\"curve\": {\"points\": [{\"run\": {\"device_io\": "
                               "{\"utilization\": 0.2}}}, {\"run\": {\"device_io\": "
                               "{\"utilization\": 0.9, \"write_iops\": 5}}}]}}",
                               0, &je);
    l = suite_step_load(curve);
    assert_double_equal(l.busy, 0.9, 1e-12);
    assert_double_equal(l.write_iops, 5, 1e-12);
    assert_false(suite_load_idle(&l));
    json_t *none = json_loads("{\"summary\": {\"tps\": 5}}", 0, &je);
    l = suite_step_load(none);
    assert_false(l.known);
    assert_false(suite_load_idle(&l));
    json_decref(paced);
    json_decref(curve);
    json_decref(none);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_load),
        cmocka_unit_test_setup_teardown(test_tiny_suite_end_to_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run_runs_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explicit_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_skips_finished_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_suite_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_words_and_placeholders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_builtin_review_matches_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
