/*
 * sim_x* allocation (sim/alloc.c): the results are real blocks for every size,
 * formatted strings are whole; out of memory, the first shortage gives the reserve back
 * and is recorded as the fault (the allocation still returns memory), and a shortage
 * the reserve cannot cover exits SIM_EXIT_NOMEM with a message naming the call. The
 * failure paths run in forked children, one under a small RLIMIT_AS.
 */
#include "sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
/* ASan's allocator stops the process on a failed allocation unless told to return
 * NULL, which is what the wrapper must see. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
#endif

static void test_every_size_gives_a_block(void **state)
{
    (void)state;
    void *p = sim_xmalloc(0);
    assert_non_null(p);
    p = sim_xrealloc(p, 0); /* realloc(p, 0) alone may free p and return NULL */
    assert_non_null(p);
    free(p);
    p = sim_xcalloc(0, 8);
    assert_non_null(p);
    free(p);
    char *s = sim_xstrndup("abcdef", 3);
    assert_string_equal(s, "abc");
    free(s);
    s = sim_xstrdup("");
    assert_string_equal(s, "");
    free(s);
}

static void test_asprintf_is_whole(void **state)
{
    (void)state;
    char wide[3000];
    memset(wide, 'x', sizeof wide - 1);
    wide[sizeof wide - 1] = 0;
    char *s = sim_xasprintf("%s|%d|%s", "a", 42, wide);
    assert_int_equal(strlen(s), 5 + strlen(wide));
    assert_memory_equal(s, "a|42|", 5);
    free(s);
}

/* Runs child() in a forked process with stderr into a pipe; its stderr in out. */
static int run_child(void (*child)(void), char *out, size_t len)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], STDERR_FILENO);
        child();
        _exit(99); /* child() must not return */
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < len && (n = read(fds[0], out + got, len - 1 - got)) > 0)
        got += (size_t)n;
    out[got] = 0;
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void huge_request(void)
{
    volatile size_t n = SIZE_MAX / 2;
    sim_xmalloc(n);
}

static void test_huge_request_exits(void **state)
{
    (void)state;
    char err[4096];
    assert_int_equal(run_child(huge_request, err, sizeof err), SIM_EXIT_NOMEM);
    assert_non_null(strstr(err, "appsim: out of memory:"));
    assert_non_null(strstr(err, "test_sim_alloc.c:")); /* where it was asked for */
    /* larger than the reserve: not noted as a fault the run could stop on */
    assert_null(strstr(err, "stopping"));
}

static size_t address_space_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %zu kB", &kib) == 1) break;
    if (f) fclose(f);
    return kib;
}

/* Allocates 1 MiB blocks under a limit 64 MiB above what the process maps: the first
 * shortage is survived (the fault is noted and the block returned, exit status 10 is
 * not reached), the next ends the process. */
static void exhaust(void)
{
    size_t kib = address_space_kib();
    if (!kib) _exit(98);
    struct rlimit rl = {.rlim_cur = (kib << 10) + (64u << 20), .rlim_max = RLIM_INFINITY};
    if (setrlimit(RLIMIT_AS, &rl)) _exit(97);
    if (!sim_alloc_reserve_held() || sim_fault_noted()) _exit(96);
    bool told = false;
    for (int i = 0; i < 4096; i++) {
        void *p = sim_xmalloc((size_t)1 << 20);
        if (!p) _exit(95);
        if (!told && sim_fault_noted() == ENOMEM && !sim_alloc_reserve_held()) {
            fprintf(stderr, "survived the first shortage\n");
            told = true;
        }
        if (sim_fault_noted() != 0 && sim_fault_noted() != ENOMEM) _exit(94);
    }
    _exit(10); /* 4 GiB under a 64 MiB limit: the limit did not hold */
}

static void test_shortage_uses_the_reserve_then_exits(void **state)
{
    (void)state;
#ifdef __SANITIZE_ADDRESS__
    skip(); /* ASan maps its shadow memory and quarantine under RLIMIT_AS itself */
#endif
    char err[1 << 16];
    int rc = run_child(exhaust, err, sizeof err);
    assert_int_equal(rc, SIM_EXIT_NOMEM);
    const char *stopping = strstr(err, "appsim: warning: stopping: out of memory: 1048576 bytes");
    const char *survived = strstr(err, "survived the first shortage");
    const char *died = strstr(err, "appsim: out of memory: 1048576 bytes could not be allocated");
    assert_non_null(stopping);
    assert_non_null(survived);
    assert_non_null(died);
    assert_true(stopping < survived && survived < died);
}

static int a_command(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return SIM_EXIT_OK;
}

/* A noted shortage is the process's fault: a result says "out of memory", and the
 * command's status becomes SIM_EXIT_NOMEM whatever it returned. */
static void test_shortage_fails_the_command(void **state)
{
    (void)state;
    const sim_command cmd = {.name = "alloc-test", .main = a_command};
    sim_fault_reset();
    assert_int_equal(sim_command_run(&cmd, 1, (char *[]){"alloc-test", NULL}), SIM_EXIT_OK);
    sim_fault_note_oom(4096, "here.c", 7);
    assert_int_equal(sim_fault_noted(), ENOMEM);
    json_t *f = sim_fault_json();
    assert_string_equal(json_string_value(json_object_get(f, "cause")), "out of memory");
    assert_non_null(strstr(json_string_value(json_object_get(f, "message")), "4096 bytes"));
    json_decref(f);
    assert_int_equal(sim_command_run(&cmd, 1, (char *[]){"alloc-test", NULL}), SIM_EXIT_NOMEM);
    assert_string_equal(sim_exit_name(SIM_EXIT_NOMEM), "out of memory");
    sim_fault_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_size_gives_a_block),
        cmocka_unit_test(test_asprintf_is_whole),
        cmocka_unit_test(test_huge_request_exits),
        cmocka_unit_test(test_shortage_uses_the_reserve_then_exits),
        cmocka_unit_test(test_shortage_fails_the_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
