/*
 * io_uring -> psync fallback: with io_uring_setup blocked by a seccomp filter (as some
 * container runtimes do), the default engine must come up as psync with a warning and
 * still move data; an explicit psync works regardless. The filter is installed in a
 * forked child so that the rest of the test process keeps io_uring.
 */
#include "storage/storage.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int block_io_uring(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* Child: 0 when the default engine fell back to psync and did a read, else a code. */
static int child(const char *name)
{
    if (block_io_uring() != 0) return 10;
    char err[1024];
    st_engine *e = st_engine_open(name, 8, err, sizeof err);
    if (!e) return 11;
    if (strcmp(st_engine_name(e), "psync") != 0) return 12;
    int fd = open("/proc/self/stat", O_RDONLY);
    char buf[64];
    st_io io = {.op = ST_OP_READ, .fd = fd, .buf = buf, .len = sizeof buf};
    int64_t r = st_engine_do(e, &io);
    st_engine_close(e);
    close(fd);
    return r > 0 ? 0 : 13;
}

static int run_child(const char *name, char *out, size_t outlen)
{
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        _exit(child(name));
    }
    close(pipefd[1]);
    ssize_t n = read(pipefd[0], out, outlen - 1);
    out[n > 0 ? n : 0] = 0;
    close(pipefd[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static void test_default_falls_back_with_warning(void **state)
{
    char out[2048];
    assert_int_equal(run_child(NULL, out, sizeof out), 0);
    assert_non_null(strstr(out, "warning"));
    assert_non_null(strstr(out, "psync"));
    assert_non_null(strstr(out, "Operation not permitted"));
}

static void test_explicit_io_uring_falls_back_too(void **state)
{
    char out[2048];
    assert_int_equal(run_child("io_uring", out, sizeof out), 0);
    assert_non_null(strstr(out, "falling back"));
}

static void test_explicit_psync_no_warning(void **state)
{
    char out[2048];
    assert_int_equal(run_child("psync", out, sizeof out), 0);
    assert_null(strstr(out, "warning"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_falls_back_with_warning),
        cmocka_unit_test(test_explicit_io_uring_falls_back_too),
        cmocka_unit_test(test_explicit_psync_no_warning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
