/* Result documents: atomic writing, required sections, interrupted runs, probes, runs
 * stopped early by a guard, and operations on a phase boundary counted in one phase. */
#include "sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/appsim-result-test-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static int count_files(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

typedef struct {
    int snaps;
} probe_ctx;
static void *p_snap(void *ctx)
{
    probe_ctx *p = ctx;
    int *v = malloc(sizeof *v);
    *v = ++p->snaps;
    return v;
}
static json_t *p_delta(void *ctx, const void *a, const void *b, double secs, uint64_t units)
{
    return json_pack("{s:i, s:I}", "snapshots_apart", *(const int *)b - *(const int *)a, "units",
                     (json_int_t)units);
}
static void p_free(void *ctx, void *s)
{
    free(s);
}
static const sim_probe_ops probe_ops = {
    .name = "device_io", .snapshot = p_snap, .delta = p_delta, .free_snapshot = p_free};

static void test_write_atomic_and_sections(void **state)
{
    static const char *const types[] = {"read", "write"};
    static const char *const counters[] = {"retries"};
    sim_run_config c = {.type_names = types,
                        .ntypes = 2,
                        .counter_names = counters,
                        .ncounters = 1,
                        .unit = "iops",
                        .duration_ns = 300000000ull,
                        .report_interval_ns = 100000000ull,
                        .quiet = true};
    sim_run *run = sim_run_new(&c);
    probe_ctx pc = {0};
    sim_run_add_probe(run, &probe_ops, &pc);
    sim_meter *m = sim_run_meter(run, 0);
    sim_run_start(run);
    while (!sim_run_done(run)) {
        uint64_t t = sim_now_ns();
        sim_meter_count(m, 0, 1);
        sim_meter_record(m, 0, t - 100000, t);
        sim_sleep_until_ns(t + 1000000);
    }
    sim_run_finish(run);
    uint64_t quiet = 7;
    sim_opt opts[] = {{.name = "depth", .kind = SIM_OPT_U64, .dst = &quiet, .help = "qd", .min = 1},
                      SIM_OPT_END};
    char *argv[] = {"replay", "--depth", "7", "it's quoted"};
    json_t *doc = sim_result_new("replay", 4, argv, opts);
    sim_result_put_run(doc, NULL, run);
    char path[512];
    snprintf(path, sizeof path, "%s/r.json", dir);
    assert_int_equal(sim_result_write(doc, path), 0);
    assert_int_equal(sim_result_write(doc, path), 0); /* replaces atomically */
    assert_int_equal(count_files(), 1);               /* no temporary left behind */
    json_error_t e;
    json_t *back = json_load_file(path, 0, &e);
    assert_non_null(back);
    static const char *keys[] = {"schema",     "tool",      "command",  "config",
                                 "host",       "summary",   "per_type", "intervals",
                                 "histograms", "device_io", "warmup"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!json_object_get(back, keys[i])) fail_msg("missing section %s", keys[i]);
    json_t *s = json_object_get(back, "summary");
    assert_true(json_real_value(json_object_get(s, "iops")) > 100);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(s, "counters"), "retries")),
                     json_integer_value(json_object_get(s, "count")));
    assert_true(json_array_size(json_object_get(back, "intervals")) >= 2);
    assert_string_equal(json_string_value(json_object_get(back, "command")),
                        "appsim replay --depth 7 'it'\\''s quoted'");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(back, "device_io"), "units")),
        json_integer_value(json_object_get(s, "count")));
    assert_false(json_is_true(json_object_get(back, "interrupted")));
    json_decref(back);
    json_decref(doc);
    sim_run_free(run);
}

/* A guard that asks for the stop on its third call (about 3 s into the run). */
static bool stop_on_third(void *ctx, char *why, size_t whylen)
{
    int *calls = ctx;
    if (++*calls < 3) return false;
    snprintf(why, whylen, "the test's guard");
    return true;
}

static void test_guard_stops_run(void **state)
{
    sim_run_config c = {.duration_ns = 60000000000ull, .quiet = true};
    sim_run *run = sim_run_new(&c);
    int calls = 0;
    sim_run_add_guard(run, stop_on_third, &calls);
    sim_meter *m = sim_run_meter(run, 0);
    uint64_t t0 = sim_now_ns();
    sim_run_start(run);
    while (!sim_run_done(run)) {
        uint64_t t = sim_now_ns();
        sim_meter_record(m, 0, t - 100000, t);
        sim_sleep_until_ns(t + 1000000);
    }
    sim_run_finish(run);
    double waited = (double)(sim_now_ns() - t0) / 1e9;
    assert_int_equal(calls, 3);
    assert_true(waited > 2.5 && waited < 10);
    assert_string_equal(sim_run_stopped_by(run), "the test's guard");
    assert_false(sim_run_interrupted(run));
    assert_true(sim_run_measured_seconds(run) < 10);
    json_t *doc = sim_result_new("test", 0, NULL, NULL);
    sim_result_put_run(doc, NULL, run);
    assert_string_equal(json_string_value(json_object_get(doc, "stopped_by")), "the test's guard");
    assert_true(json_integer_value(json_object_get(json_object_get(doc, "summary"), "count")) > 0);
    json_decref(doc);
    sim_run_free(run);

    /* No guard: stopped_by is null. */
    sim_run_config q = {.duration_ns = 10000000ull, .quiet = true};
    run = sim_run_new(&q);
    sim_run_start(run);
    while (!sim_run_done(run))
        sim_sleep_until_ns(sim_now_ns() + 1000000);
    sim_run_finish(run);
    assert_null(sim_run_stopped_by(run));
    doc = sim_result_new("test", 0, NULL, NULL);
    sim_result_put_run(doc, NULL, run);
    assert_true(json_is_null(json_object_get(doc, "stopped_by")));
    json_decref(doc);
    sim_run_free(run);
}

/* An open-loop sample belongs to the phase of its arrival, not of its end: one that
 * arrived in the warm-up and ended in the measured phase is warm-up, one that arrived
 * in the measured phase and ended after it is measured (with its whole latency), one
 * that arrived at the end is dropped; the counts of each go with it. */
static void test_record_by_arrival(void **state)
{
    static const char *const counters[] = {"bytes"};
    sim_run_config c = {.warmup_ns = 20000000ull,
                        .duration_ns = 20000000ull,
                        .quiet = true,
                        .counter_names = counters,
                        .ncounters = 1};
    sim_run *run = sim_run_new(&c);
    sim_meter *m = sim_run_meter(run, 0);
    sim_run_start(run);
    uint64_t from = sim_run_measure_start_ns(run), to = sim_run_measure_end_ns(run);
    sim_meter_count(m, 0, 7);
    sim_meter_record_arrival(m, 0, from - 1000, from + 1000);
    sim_meter_count(m, 0, 11);
    sim_meter_record_arrival(m, 0, from + 1000, to + 5000000);
    sim_meter_count(m, 0, 13);
    sim_meter_record_arrival(m, 0, to, to + 1000);
    while (!sim_run_done(run))
        sim_sleep_until_ns(sim_now_ns() + 1000000);
    sim_run_finish(run);
    assert_int_equal(sim_run_count(run, 0, -1), 1);
    assert_int_equal(sim_run_counter(run, 0, -1), 11);
    sim_hist *h = sim_run_merged_hist(run, 0, -1);
    assert_int_equal(sim_hist_max(h), (to + 5000000) - (from + 1000));
    sim_hist_free(h);
    sim_run_free(run);
}

/* Runs `c` for about `run_ms` (open-ended when c->duration_ns is 0), recording 1 op per
 * 200 us, and checks the stored series: at most `max_points` points, and its counts and
 * seconds add up to the whole run (every point is exact, however wide). */
static void check_series(sim_run_config *c, unsigned run_ms, size_t max_points)
{
    sim_run *run = sim_run_new(c);
    sim_meter *m = sim_run_meter(run, 0);
    sim_run_start(run);
    uint64_t stop = sim_now_ns() + run_ms * 1000000ull;
    while (!sim_run_done(run) && sim_now_ns() < stop) {
        uint64_t t = sim_now_ns();
        sim_meter_record(m, 0, t, t + 1000);
        sim_sleep_until_ns(t + 200000);
    }
    sim_run_finish(run);
    json_t *doc = sim_result_new("test", 0, NULL, NULL);
    sim_result_put_run(doc, NULL, run);
    const json_t *iv = json_object_get(doc, "intervals");
    size_t i;
    const json_t *p;
    uint64_t count = 0;
    double secs = 0, widest = 0;
    json_array_foreach(iv, i, p)
    {
        count += (uint64_t)json_integer_value(json_object_get(p, "count"));
        double s = json_real_value(json_object_get(p, "seconds"));
        secs += s;
        widest = s > widest ? s : widest;
    }
    if (json_array_size(iv) > max_points || json_array_size(iv) < 2)
        fail_msg("%zu points, expected 2..%zu", json_array_size(iv), max_points);
    assert_int_equal(count, sim_run_count(run, -1, 0));
    assert_true(fabs(secs - sim_run_measured_seconds(run)) < 0.01);
    assert_true(widest >= 4 * (double)c->report_interval_ns / 1e9); /* it did widen */
    json_decref(doc);
    sim_run_free(run);
}

static void test_series_bounded(void **state)
{
    /* Planned: 300 ms at 2 ms intervals into 8 points -> 32 intervals a point. */
    sim_run_config planned = {.duration_ns = 300000000ull,
                              .report_interval_ns = 2000000ull,
                              .quiet = true,
                              .series_max_points = 8};
    check_series(&planned, 1000, 8);
    /* Open-ended, 400 ms at 2 ms: 8 points, then 4 at x2, 6 at x4, 9 at x8, ... */
    sim_run_config open = {.report_interval_ns = 2000000ull, .quiet = true, .series_max_points = 8};
    check_series(&open, 400, 8 + 4 + 6 + 9 + 13);
}

static void test_unwritable_path(void **state)
{
    json_t *doc = sim_result_new("x", 0, NULL, NULL);
    assert_int_equal(sim_result_write(doc, "/nonexistent-dir/r.json"), -1);
    json_decref(doc);
}

/* A workload's loop as the engines run it: the operation's counts, then its work, then
 * its record (every fourth one a failure). Operation i counts i + 1, so that the counter
 * says which operations it holds. Returns after the run is done. */
/* A device or a FIFO given as the output is written in place: renaming a file over
 * /dev/null would replace the device node for every program on the machine. */
static void test_device_written_in_place(void **state)
{
    (void)state;
    struct stat before, after;
    assert_int_equal(stat("/dev/null", &before), 0);
    assert_true(S_ISCHR(before.st_mode));
    assert_int_equal(sim_atomic_write("/dev/null", "{}\n", 3), 0);
    assert_int_equal(stat("/dev/null", &after), 0);
    assert_true(S_ISCHR(after.st_mode));
    assert_int_equal(after.st_ino, before.st_ino);
    assert_true(sim_atomic_in_place("/dev/null"));
    char reg[300];
    snprintf(reg, sizeof reg, "%s/plain.json", dir);
    assert_false(sim_atomic_in_place(reg)); /* absent */
    assert_int_equal(sim_atomic_write(reg, "{}\n", 3), 0);
    assert_false(sim_atomic_in_place(reg)); /* a regular file: replaced atomically */
    assert_false(sim_atomic_in_place(dir));
}

static void boundary_workload(sim_run *run, sim_meter *m, uint64_t work_ns)
{
    for (uint64_t i = 0; !sim_run_done(run); i++) {
        sim_meter_count(m, 0, i + 1);
        uint64_t t0 = sim_now_ns();
        while (sim_now_ns() - t0 < work_ns) {
        } /* the operation: a phase boundary may pass meanwhile */
        if (i % 4 == 3)
            sim_meter_error(m, 0);
        else
            sim_meter_record(m, 0, t0, sim_now_ns());
    }
}

static void *finish_soon(void *arg)
{
    sim_sleep_until_ns(sim_now_ns() + 1500000);
    sim_run_finish(arg);
    return NULL;
}

/* Operations that straddle the start or the end of the measured phase (a fixed end, or
 * one moved by sim_run_finish from another thread, as Ctrl-C does) fall on one side
 * with all their figures, in every one of many tiny runs: the operations are recorded
 * in order, so the warm-up holds operations 0..s-1 and the measured phase the next m
 * (count plus errors), and the measured counter must be exactly their counts,
 * (s + 1) + ... + (s + m). */
static void test_phase_boundaries_agree(void **state)
{
    static const char *const counters[] = {"ops"};
    int measured_runs = 0;
    for (int i = 0; i < 300; i++) {
        bool cut = i % 2; /* odd runs: open-ended, finished by another thread */
        sim_run_config c = {.counter_names = counters,
                            .ncounters = 1,
                            .warmup_ns = 1000000,
                            .duration_ns = cut ? 0 : 2000000,
                            .quiet = true};
        sim_run *run = sim_run_new(&c);
        sim_meter *m = sim_run_meter(run, 0);
        sim_run_start(run);
        pthread_t th;
        if (cut) assert_int_equal(pthread_create(&th, NULL, finish_soon, run), 0);
        boundary_workload(run, m, 20000 + (uint64_t)(i % 7) * 5000);
        if (cut) pthread_join(th, NULL);
        sim_run_finish(run);
        json_t *doc = json_object();
        sim_result_put_run(doc, NULL, run);
        const json_t *w = json_object_get(doc, "warmup");
        uint64_t s = (uint64_t)(json_integer_value(json_object_get(w, "count")) +
                                json_integer_value(json_object_get(w, "errors")));
        json_decref(doc);
        uint64_t ops = sim_run_count(run, -1, -1) + sim_run_errors(run, -1, -1);
        uint64_t want = ops * (2 * s + ops + 1) / 2, counted = sim_run_counter(run, 0, -1);
        if (counted != want)
            fail_msg("run %d: warm-up %llu and measured %llu operations: the counter says %llu, "
                     "not %llu",
                     i, (unsigned long long)s, (unsigned long long)ops, (unsigned long long)counted,
                     (unsigned long long)want);
        measured_runs += ops > 0;
        sim_run_free(run);
    }
    assert_true(measured_runs > 0);
}

/* Exit statuses and statuses have names for messages; other numbers are not guessed. */
static void test_code_names(void **state)
{
    assert_string_equal(sim_exit_name(SIM_EXIT_OK), "ok");
    assert_string_equal(sim_exit_name(SIM_EXIT_FAIL), "failed");
    assert_string_equal(sim_exit_name(SIM_EXIT_USAGE), "usage");
    assert_string_equal(sim_exit_name(77), "unknown");
    assert_string_equal(sim_status_name(SIM_OK), "ok");
    assert_string_equal(sim_status_name(SIM_ERR), "error");
    assert_string_equal(sim_status_name(1), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_atomic_and_sections),
        cmocka_unit_test(test_guard_stops_run),
        cmocka_unit_test(test_unwritable_path),
        cmocka_unit_test(test_series_bounded),
        cmocka_unit_test(test_device_written_in_place),
        cmocka_unit_test(test_phase_boundaries_agree),
        cmocka_unit_test(test_code_names),
        cmocka_unit_test(test_record_by_arrival),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
