/* The shared progress line: its form, the share and the ETA from the rate so far, when
 * lines are due, and silence when quiet. */
#include "sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What fn wrote on stderr (a log, not a terminal). */
static char *capture_stderr(void (*fn)(void *), void *ctx)
{
    char path[] = "/tmp/appsim-progress-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn(ctx);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    static char text[1024];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = 0;
    close(fd);
    unlink(path);
    return text;
}

static void quarter_done(void *ctx)
{
    sim_progress p;
    sim_progress_start(&p, "tpcc: loading", 100, *(bool *)ctx);
    /* 25 of 100 after 10 s: 30 s to go at that rate. */
    sim_progress_line(&p, p.t0 + 10000000000ull, 25, "25 of 100 warehouses", false);
}

static void test_line(void **state)
{
    (void)state;
    bool quiet = false;
    char *text = capture_stderr(quarter_done, &quiet);
    assert_string_equal(text, "tpcc: loading: 25 of 100 warehouses (25.0%), ETA 30 s\n");
    quiet = true;
    text = capture_stderr(quarter_done, &quiet);
    assert_string_equal(text, "");
}

static void nothing_done(void *ctx)
{
    (void)ctx;
    sim_progress p;
    sim_progress_start(&p, "sysbench: loading", 8, false);
    sim_progress_line(&p, p.t0 + 5000000000ull, 0, "0 of 8 tables", true);
}

static void test_eta_unknown_before_any(void **state)
{
    (void)state;
    char *text = capture_stderr(nothing_done, NULL);
    assert_string_equal(text, "sysbench: loading: 0 of 8 tables (0.0%), ETA unknown\n");
}

static void test_due(void **state)
{
    (void)state;
    sim_progress p;
    sim_progress_start(&p, "x", 10, false);
    p.tty = false; /* a log: every 10 s */
    p.next = p.t0 + 10000000000ull;
    assert_false(sim_progress_due(&p, p.t0 + 9000000000ull));
    assert_true(sim_progress_due(&p, p.t0 + 10000000000ull));
    assert_false(sim_progress_due(&p, p.t0 + 15000000000ull)); /* the next is 10 s later */
    assert_true(sim_progress_due(&p, p.t0 + 20000000000ull));
    sim_progress_start(&p, "x", 10, true);
    assert_false(sim_progress_due(&p, p.t0 + 100000000000ull)); /* quiet: never */
}

static void test_eta_text(void **state)
{
    (void)state;
    char buf[48];
    assert_string_equal(sim_format_eta(42.4, buf, sizeof buf), "42 s");
    assert_string_equal(sim_format_eta(185, buf, sizeof buf), "3 min 5 s");
    assert_string_equal(sim_format_eta(7800, buf, sizeof buf), "2 h 10 min");
    assert_string_equal(sim_format_eta(-3, buf, sizeof buf), "0 s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line),
        cmocka_unit_test(test_eta_unknown_before_any),
        cmocka_unit_test(test_due),
        cmocka_unit_test(test_eta_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
