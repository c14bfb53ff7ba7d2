/*
 * Replay on a directory target under /tmp (ext4 on the test machine's disk):
 * accounting (every record issued exactly once or counted as skipped, bytes match the
 * trace), placement (refusal without mapping, wrap, alignment counted), looping,
 * timing fidelity (a 2 s trace in original timing takes 2 s within 2 %), and the rate
 * curve (points in order, each at its target rate within 5 % up to 80 % of the max).
 * APPSIM_TEST_RUN_SERIAL: the 2 s timing and the curve's rates are timing measurements.
 */
#include "trace/trace.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char root[256];
static st_target *target;
static char shm[] = "/dev/shm/appsim-test-curve-XXXXXX";
static bool have_shm;

static int setup(void **state)
{
    snprintf(root, sizeof root, "/tmp/appsim-test-replay-XXXXXX");
    if (!mkdtemp(root)) return -1;
    st_target_opts o = {.path = root};
    char err[512];
    if (st_target_open(&o, &target, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    sim_set_quiet(true);
    have_shm = mkdtemp(shm) != NULL;
    return 0;
}

static int teardown(void **state)
{
    char err[512], cmd[300];
    st_target_cleanup(target, err, sizeof err);
    st_target_close(target);
    if (have_shm) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", shm);
        if (system(cmd) != 0) return -1;
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd);
}

/* A fio v3 log in memory: n I/Os of size bytes every gap_us, random in 4 MiB, every
 * third a write, plus a zero-length read and a trim that a file target skips. */
static char *make_log(int n, unsigned gap_us, unsigned size, uint64_t *rbytes, uint64_t *wbytes)
{
    size_t cap = (size_t)n * 48 + 256;
    char *t = malloc(cap);
    size_t len = (size_t)sprintf(t, "fio version 3 iolog\n0 f add\n0 f open\n");
    uint64_t x = 12345;
    *rbytes = *wbytes = 0;
    for (int i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t off = (x >> 33) % ((4u << 20) / size) * size;
        bool w = i % 3 == 0;
        len += (size_t)sprintf(t + len, "%llu f %s %llu %u\n", (unsigned long long)i * gap_us,
                               w ? "write" : "read", (unsigned long long)off, size);
        *(w ? wbytes : rbytes) += size;
    }
    len += (size_t)sprintf(t + len, "%llu f read 0 0\n%llu f trim 0 4096\n",
                           (unsigned long long)n * gap_us, (unsigned long long)n * gap_us);
    return t;
}

static tr_source *open_log(const char *t)
{
    tr_open_opts o = {.volume = -1};
    tr_source *s;
    char err[512];
    assert_int_equal(tr_open_mem(t, strlen(t), "log", &o, &s, err, sizeof err), 0);
    return s;
}

static json_int_t geti(const json_t *j, const char *k)
{
    return json_integer_value(json_object_get(j, k));
}

static void test_accounting(void **state)
{
    uint64_t rb, wb;
    char *t = make_log(3000, 10, 4096, &rb, &wb);
    tr_source *s = open_log(t);
    tr_replay_opts o;
    tr_replay_opts_default(&o);
    o.timing = TR_TIMING_AFAP;
    o.qd = 16;
    o.loops = 2;
    sim_run_config cfg;
    tr_replay_run_config(&cfg);
    cfg.quiet = true;
    sim_run *run = sim_run_new(&cfg);
    json_t *st;
    char err[512];
    int rc = tr_replay(run, s, target, &o, &st, err, sizeof err);
    if (rc) fail_msg("%s", err);
    assert_int_equal(geti(st, "records"), 2 * 3002);
    assert_int_equal(geti(st, "issued"), 2 * 3000);
    /* every I/O aligned: the buffers are the I/O's size apart, no block of padding */
    assert_int_equal(geti(st, "buffer_bytes"), 4096);
    assert_int_equal(geti(st, "completed"), 2 * 3000);
    assert_int_equal(geti(st, "zero_length_skipped"), 2);
    assert_int_equal(geti(st, "trims_skipped"), 2);
    assert_int_equal(geti(st, "errors"), 0);
    assert_int_equal(geti(st, "passes"), 2);
    assert_int_equal(geti(st, "bytes_read"), 2 * rb);
    assert_int_equal(geti(st, "bytes_written"), 2 * wb);
    assert_int_equal(sim_run_count(run, 0, -1), 2 * 2000);
    assert_int_equal(sim_run_count(run, 1, -1), 2 * 1000);
    assert_int_equal(sim_run_counter(run, 0, -1), 2 * rb);
    /* ext4 takes O_DIRECT I/O without blocking: no io_uring worker, policy untouched */
    assert_true(json_is_true(json_object_get(st, "target_nowait")));
    if (sched_getscheduler(0) == SCHED_OTHER)
        assert_string_equal(json_string_value(json_object_get(st, "submitter_policy")), "normal");
    json_decref(st);
    sim_run_free(run);
    tr_close(s);
    free(t);
}

static void test_placement(void **state)
{
    /* 4 KiB I/Os at odd offsets up to 1 GiB: refused into a 1 MiB file, wrapped when
     * asked, and aligned to the block size (counted). */
    const char *t = "fio version 3 iolog\n0 f add\n"
                    "0 f read 1073741312 4096\n"
                    "5 f write 1000 3000\n"
                    "9 f read 4096 4096\n";
    tr_source *s = open_log(t);
    tr_replay_opts o;
    tr_replay_opts_default(&o);
    o.timing = TR_TIMING_AFAP;
    o.file_size = 1 << 20;
    o.file_name = "small.data";
    sim_run_config cfg;
    tr_replay_run_config(&cfg);
    sim_run *run = sim_run_new(&cfg);
    json_t *st;
    char err[512];
    assert_int_equal(tr_replay(run, s, target, &o, &st, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "--map"));
    sim_run_free(run);
    o.map = TR_MAP_WRAP;
    run = sim_run_new(&cfg);
    int rc = tr_replay(run, s, target, &o, &st, err, sizeof err);
    if (rc) fail_msg("%s", err);
    const json_t *pl = json_object_get(st, "placement");
    assert_int_equal(geti(st, "issued"), 3);
    assert_int_equal(geti(st, "errors"), 0);
    assert_int_equal(geti(pl, "wrapped"), 1);
    assert_int_equal(geti(pl, "aligned"), 1); /* 1000+3000 -> 0+4096 */
    /* an unaligned I/O can straddle a block: one block more than the largest I/O */
    uint32_t bs = st_target_buffered(target) ? 0 : st_target_block_size(target);
    assert_int_equal(geti(st, "buffer_bytes"), 4096 + bs);
    json_decref(st);
    sim_run_free(run);
    o.map = TR_MAP_SCALE;
    run = sim_run_new(&cfg);
    assert_int_equal(tr_replay(run, s, target, &o, &st, err, sizeof err), 0);
    assert_true(geti(json_object_get(st, "placement"), "scaled") == 3);
    assert_int_equal(geti(st, "errors"), 0);
    json_decref(st);
    sim_run_free(run);
    tr_close(s);
}

/* The slowest I/O of a finished run, in seconds. */
static double slowest_s(const sim_run *run)
{
    sim_hist *h = sim_run_merged_hist(run, -1, -1);
    double s = (double)sim_hist_max(h) / 1e9;
    sim_hist_free(h);
    return s;
}

static void test_timing(void **state)
{
    /* 2 s of reads, one every 2 ms, the last at exactly 2.000 s. */
    char *t = malloc(1 << 16);
    size_t len = (size_t)sprintf(t, "fio version 3 iolog\n0 f add\n");
    for (int i = 0; i <= 1000; i++)
        len += (size_t)sprintf(t + len, "%d f read %d 4096\n", i * 2000, (i % 256) * 4096);
    tr_source *s = open_log(t);
    tr_replay_opts o;
    tr_replay_opts_default(&o);
    o.file_name = "timing.data";
    sim_run_config cfg;
    tr_replay_run_config(&cfg);
    sim_run *run = sim_run_new(&cfg);
    json_t *st;
    char err[512];
    uint64_t t0 = sim_now_ns();
    int rc = tr_replay(run, s, target, &o, &st, err, sizeof err);
    if (rc) fail_msg("%s", err);
    double took = sim_run_measured_seconds(run);
    printf("2 s trace replayed in %.4f s (call %.4f s); lag p99 %.1f us\n", took,
           (sim_now_ns() - t0) / 1e9,
           json_real_value(json_object_get(json_object_get(st, "submission_lag_us"), "p99_us")));
    /* The run ends when the last read (due at 2.000 s) completes: 40 ms of slack plus
     * this run's slowest I/O, counted from its due time (a shared disk or core can hold
     * one read for tens of milliseconds). A timeline the replayer stretched or
     * squeezed still fails: latency runs from the due times it computed. */
    double slack = slowest_s(run);
    assert_true(took >= 1.96 && took <= 2.04 + slack);
    assert_int_equal(geti(st, "issued"), 1001);
    json_decref(st);
    sim_run_free(run);
    /* Twice as fast: 1 s. */
    o.speed = 2;
    run = sim_run_new(&cfg);
    assert_int_equal(tr_replay(run, s, target, &o, &st, err, sizeof err), 0);
    took = sim_run_measured_seconds(run);
    /* looser: 20 ms is one scheduler hiccup; and the last read's time, as above */
    assert_true(took >= 0.97 && took <= 1.05 + slowest_s(run));
    json_decref(st);
    sim_run_free(run);
    tr_close(s);
    free(t);
}

/* A buffered target in /dev/shm: tmpfs has no NOWAIT support on current kernels, so
 * io_uring serves it with worker threads and an afap replay runs its submitter as
 * SCHED_BATCH, restored afterwards; a paced replay keeps the default policy. Where the
 * kernel's tmpfs takes NOWAIT I/O, the policy must stay the default in both. */
static void test_submitter_policy(void **state)
{
    if (!have_shm || sched_getscheduler(0) != SCHED_OTHER) skip();
    st_target_opts to = {.path = shm, .buffered = true};
    st_target *t;
    char err[512];
    if (st_target_open(&to, &t, err, sizeof err)) fail_msg("%s", err);
    uint64_t rb, wb;
    char *log = make_log(500, 10, 4096, &rb, &wb);
    const char *expect[2] = {"batch", "normal"};
    for (int paced = 0; paced < 2; paced++) {
        tr_source *s = open_log(log);
        tr_replay_opts o;
        tr_replay_opts_default(&o);
        o.timing = paced ? TR_TIMING_RATE : TR_TIMING_AFAP;
        o.rate = 50000;
        o.file_name = "policy.data";
        sim_run_config cfg;
        tr_replay_run_config(&cfg);
        cfg.quiet = true;
        sim_run *run = sim_run_new(&cfg);
        json_t *st;
        if (tr_replay(run, s, t, &o, &st, err, sizeof err)) fail_msg("%s", err);
        bool nowait = json_is_true(json_object_get(st, "target_nowait"));
        char path[512];
        snprintf(path, sizeof path, "%s/policy.data", shm);
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(nowait, st_fd_nowait(fd, 4096));
        close(fd);
        printf("tmpfs: target_nowait %d, %s replay's policy %s\n", nowait, paced ? "paced" : "afap",
               json_string_value(json_object_get(st, "submitter_policy")));
        assert_string_equal(json_string_value(json_object_get(st, "submitter_policy")),
                            nowait ? "normal" : expect[paced]);
        assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
        assert_int_equal(geti(st, "completed"), 500);
        json_decref(st);
        sim_run_free(run);
        tr_close(s);
    }
    free(log);
    st_target_cleanup(t, err, sizeof err);
    st_target_close(t);
}

static void test_curve(void **state)
{
    /* The rate accuracy of the replayer, not the drive's speed, is under test here:
     * a buffered target in /dev/shm keeps the shared test machine's disk out of it. */
    if (!have_shm) skip();
    st_target_opts to = {.path = shm, .buffered = true};
    st_target *t;
    char err[512];
    if (st_target_open(&to, &t, err, sizeof err)) fail_msg("%s", err);
    uint64_t rb, wb;
    /* 256 KiB I/Os: copying them bounds the maximum rate to what a loaded machine can
     * schedule precisely at 20-80 %. */
    char *log = make_log(2000, 10, 256 << 10, &rb, &wb);
    tr_source *s = open_log(log);
    tr_replay_opts o;
    tr_replay_opts_default(&o);
    o.qd = 4;
    o.file_name = "curve.data";
    double fr[] = {0.2, 0.5, 0.8, 1.1};
    tr_curve_opts c = {fr, 4, 200000000ull, 1000000000ull, true, 0};
    json_t *curve;
    int rc = tr_replay_curve(s, t, &o, &c, &curve, err, sizeof err);
    if (rc) fail_msg("%s", err);
    const json_t *pts = json_object_get(curve, "points");
    assert_int_equal(json_array_size(pts), 5);
    double max = json_real_value(json_object_get(curve, "max_iops"));
    assert_true(max > 100);
    double prev = 0;
    int checked = 0;
    for (size_t i = 1; i < json_array_size(pts); i++) {
        const json_t *p = json_array_get(pts, i);
        double f = json_real_value(json_object_get(p, "fraction"));
        double target_iops = json_real_value(json_object_get(p, "target_iops"));
        double iops = json_real_value(json_object_get(p, "iops"));
        const json_t *lag = json_object_get(p, "lag_us");
        double lag50 = json_real_value(json_object_get(lag, "p50_us"));
        double lag99 = json_real_value(json_object_get(lag, "p99_us"));
        double lagmax = json_real_value(json_object_get(lag, "max_us"));
        double offered = json_real_value(json_object_get(p, "offered_iops"));
        printf("point %.0f %%: target %.0f, offered %.0f, got %.0f IOPS, lag p50 %.1f us, p99 "
               "%.1f us, max %.1f us\n",
               f * 100, target_iops, offered, iops, lag50, lag99, lagmax);
        /* The offered load (arrivals due in the measured second) is the target's whatever
         * the machine does, up to the Poisson spread of exponential arrivals: sqrt(n) for
         * n expected arrivals. Four standard deviations, so that a slow machine (a low
         * maximum, hence few arrivals) does not fail the test by chance. */
        double sigma = sqrt(target_iops * 1.0) / 1.0;
        assert_true(fabs(offered - target_iops) <= fmax(0.02 * target_iops, 4 * sigma));
        assert_true(f > prev);
        prev = f;
        assert_true(fabs(target_iops - f * max) < 1e-6 * max + 1);
        /* Where the machine kept the schedule (a shared CI box may stall the replayer
         * for tens of ms: then the lag says so and the point proves nothing), the rate
         * must be the offered load's within 5 % (the arrivals drawn, not their mean, are
         * what the replayer can be held to). */
        if (f <= 0.8 && lag99 < 2000 && lagmax < 25000) {
            assert_true(fabs(iops - offered) <= 0.05 * offered);
            checked++;
        }
        /* points wake on time: the default policy, also in the maximum-rate run */
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(p, "replay"), "submitter_policy")),
            "normal");
        /* reads and writes are reported apart */
        assert_true(json_real_value(json_object_get(json_object_get(p, "read"), "iops")) > 0);
        assert_true(json_real_value(json_object_get(json_object_get(p, "write"), "iops")) > 0);
    }
    printf("%d point(s) checked against their target rate\n", checked);
    json_decref(curve);
    tr_close(s);
    free(log);
    st_target_cleanup(t, err, sizeof err);
    st_target_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accounting), cmocka_unit_test(test_placement),
        cmocka_unit_test(test_timing),     cmocka_unit_test(test_submitter_policy),
        cmocka_unit_test(test_curve),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
