/*
 * Directory targets: refusal paths (missing path, regular file, not enough space,
 * files appsim did not create), the manifest (written before creation, cleanup removes
 * exactly its files, tampered entries ignored, symlinks never followed for writing),
 * and O_DIRECT alignment from the target's block size. Runs in a scratch directory
 * under /tmp (ext4 on the test machine's disk).
 */
#include "storage/storage.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

static int setup(void **state)
{
    snprintf(root, sizeof root, "/tmp/appsim-test-target-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd);
}

static void sub(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", root, name);
}

static bool exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

static void write_file(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static st_target *open_dir(const char *name, bool create)
{
    char p[300], err[1024];
    sub(p, sizeof p, name);
    st_target_opts o = {.path = p, .existing_only = !create};
    st_target *t = NULL;
    int rc = st_target_open(&o, &t, err, sizeof err);
    if (rc) fprintf(stderr, "open %s: %s\n", p, err);
    assert_int_equal(rc, 0);
    return t;
}

static void test_missing_path_refused_nothing_created(void **state)
{
    char p[300], err[1024];
    sub(p, sizeof p, "missing/deeper");
    st_target_opts o = {.path = p};
    st_target *t = NULL;
    assert_int_equal(st_target_open(&o, &t, err, sizeof err), SIM_EXIT_USAGE);
    assert_null(t);
    assert_non_null(strstr(err, "does not exist"));
    assert_non_null(strstr(err, "parent")); /* only the last part is ever created */
    sub(p, sizeof p, "missing");
    assert_false(exists(p));
    /* A command that only reads or removes (check, cleanup) does not create it. */
    st_target_opts ro = {.path = p, .existing_only = true};
    assert_int_equal(st_target_open(&ro, &t, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "nothing there"));
    assert_false(exists(p));
    /* Opened to write, it is made, and taken away again when left empty. */
    st_target_opts o2 = {.path = p};
    assert_int_equal(st_target_open(&o2, &t, err, sizeof err), 0);
    assert_true(exists(p));
    st_target_close(t);
    assert_false(exists(p));
    st_target_opts o3 = {.path = ""};
    assert_int_equal(st_target_open(&o3, &t, err, sizeof err), SIM_EXIT_USAGE);
}

static void test_regular_file_refused(void **state)
{
    char p[300], err[1024];
    sub(p, sizeof p, "plain");
    write_file(p, "user data\n");
    st_target_opts o = {.path = p};
    st_target *t = NULL;
    assert_int_equal(st_target_open(&o, &t, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "regular file"));
    unlink(p);
}

static void test_create_dir(void **state)
{
    st_target *t = open_dir("made", true);
    assert_false(st_target_is_device(t));
    assert_false(st_target_buffered(t));
    char p[300];
    sub(p, sizeof p, "made");
    assert_true(exists(p));
    /* Opening writes nothing until a file is created. */
    sub(p, sizeof p, "made/.appsim-manifest");
    assert_false(exists(p));
    st_target_close(t);
}

static void test_space_check_names_both_numbers(void **state)
{
    st_target *t = open_dir("space", true);
    char err[1024];
    uint64_t cap = st_target_capacity(t);
    assert_true(cap > 0);
    assert_int_equal(st_target_check_space(t, 4096, err, sizeof err), 0);
    uint64_t need = cap + (1ull << 40);
    assert_int_equal(st_target_check_space(t, need, err, sizeof err), SIM_EXIT_USAGE);
    char num[32];
    snprintf(num, sizeof num, "%llu bytes", (unsigned long long)need);
    assert_non_null(strstr(err, num));
    assert_non_null(strstr(err, "is free"));
    st_target_close(t);
}

static void test_manifest_and_cleanup(void **state)
{
    st_target *t = open_dir("work", true);
    char p[300], err[1024];
    /* A file the user owns, before appsim starts. */
    sub(p, sizeof p, "work/user.db");
    write_file(p, "precious\n");
    int fd;
    assert_int_equal(st_target_create_file(t, "user.db", 0, &fd, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "did not create"));
    assert_false(st_target_owns(t, "user.db"));
    assert_int_equal(st_target_open_file(t, "user.db", 0, true, &fd, err, sizeof err),
                     SIM_EXIT_USAGE);
    assert_int_equal(st_target_remove_file(t, "user.db", err, sizeof err), SIM_EXIT_USAGE);
    /* Reading a foreign file is allowed. */
    assert_int_equal(st_target_open_file(t, "user.db", 0, false, &fd, err, sizeof err), 0);
    close(fd);

    assert_int_equal(st_target_create_file(t, "a.dat", 0, &fd, err, sizeof err), 0);
    close(fd);
    assert_int_equal(st_target_create_file(t, "b.dat", 0, &fd, err, sizeof err), 0);
    close(fd);
    assert_true(st_target_owns(t, "a.dat"));
    /* Re-creating a listed file reuses it. */
    assert_int_equal(st_target_create_file(t, "a.dat", 0, &fd, err, sizeof err), 0);
    close(fd);
    assert_int_equal(st_target_open_file(t, "a.dat", 0, true, &fd, err, sizeof err), 0);
    close(fd);
    /* Names that could escape the directory are refused. */
    assert_int_equal(st_target_create_file(t, "../x", 0, &fd, err, sizeof err), SIM_EXIT_USAGE);
    assert_int_equal(st_target_create_file(t, ".appsim-manifest", 0, &fd, err, sizeof err),
                     SIM_EXIT_USAGE);
    char fp[400];
    sub(p, sizeof p, "work/a.dat");
    assert_string_equal(st_target_file_path(t, "a.dat", fp, sizeof fp), p);

    /* Manifest lists both, in order, before anything else, and which file each is. */
    sub(p, sizeof p, "work/.appsim-manifest");
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char line[256];
    int names = 0, ids = 0;
    while (fgets(line, sizeof line, f))
        if (line[0] != '#') strchr(line, '\t') ? ids++ : names++;
    fclose(f);
    assert_int_equal(names, 2);
    assert_int_equal(ids, 2);

    /* A hand-added escape attempt and a user file are never deleted. */
    sub(p, sizeof p, "outside.txt");
    write_file(p, "outside\n");
    sub(p, sizeof p, "work/.appsim-manifest");
    f = fopen(p, "a");
    fputs("../outside.txt\n/etc/passwd\n", f);
    fclose(f);

    assert_int_equal(st_target_remove_file(t, "b.dat", err, sizeof err), 0);
    sub(p, sizeof p, "work/b.dat");
    assert_false(exists(p));
    assert_false(st_target_owns(t, "b.dat"));

    assert_int_equal(st_target_cleanup(t, err, sizeof err), 0);
    sub(p, sizeof p, "work/a.dat");
    assert_false(exists(p));
    sub(p, sizeof p, "work/.appsim-manifest");
    assert_false(exists(p));
    sub(p, sizeof p, "work/user.db");
    assert_true(exists(p));
    sub(p, sizeof p, "outside.txt");
    assert_true(exists(p));
    st_target_close(t);
}

static void test_symlink_never_written_through(void **state)
{
    st_target *t = open_dir("links", true);
    char p[300], victim[300], err[1024];
    int fd;
    assert_int_equal(st_target_create_file(t, "data", 0, &fd, err, sizeof err), 0);
    close(fd);
    /* Someone replaces appsim's file with a symlink to a user file (made first, so
     * that it cannot reuse the inode number of appsim's file). */
    sub(victim, sizeof victim, "victim.txt");
    write_file(victim, "keep me\n");
    sub(p, sizeof p, "links/data");
    unlink(p);
    assert_int_equal(symlink(victim, p), 0);
    assert_int_equal(st_target_open_file(t, "data", 0, true, &fd, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "symbolic link to"));
    assert_non_null(strstr(err, victim));
    assert_null(strstr(err, "--buffered"));
    assert_int_equal(st_target_create_file(t, "data", 0, &fd, err, sizeof err), SIM_EXIT_USAGE);
    assert_int_equal(st_target_open_file(t, "data", 0, false, &fd, err, sizeof err),
                     SIM_EXIT_USAGE);
    char lib[4200];
    assert_int_equal(st_target_library_path(t, "data", true, lib, sizeof lib, err, sizeof err),
                     SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "symbolic link to"));
    /* A hard link to a user file in its place: not the inode appsim recorded. */
    unlink(p);
    assert_int_equal(link(victim, p), 0);
    int hrc = st_target_open_file(t, "data", 0, true, &fd, err, sizeof err);
    if (hrc != SIM_EXIT_USAGE) fprintf(stderr, "hard link: rc %d %s\n", hrc, err);
    assert_int_equal(hrc, SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "not the file appsim created"));
    assert_int_equal(st_target_create_file(t, "data", 0, &fd, err, sizeof err), SIM_EXIT_USAGE);
    assert_int_equal(st_target_library_path(t, "data", true, lib, sizeof lib, err, sizeof err),
                     SIM_EXIT_USAGE);
    /* Gone altogether: created again, and the new file is the one recorded. */
    unlink(p);
    assert_int_equal(st_target_library_path(t, "data", false, lib, sizeof lib, err, sizeof err), 0);
    assert_int_equal(st_target_create_file(t, "data", 0, &fd, err, sizeof err), 0);
    close(fd);
    assert_int_equal(st_target_open_file(t, "data", 0, true, &fd, err, sizeof err), 0);
    close(fd);
    assert_int_equal(st_target_library_path(t, "data", true, lib, sizeof lib, err, sizeof err), 0);
    unlink(p);
    assert_int_equal(symlink(victim, p), 0);
    /* cleanup deletes only the file appsim created: a link in its place is left, named */
    assert_int_equal(st_target_cleanup(t, err, sizeof err), SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "1 left"));
    assert_true(exists(p));
    assert_true(exists(victim));
    st_target_close(t);
}

/* One appsim per target: a second open for writing is refused at once, naming the
 * holder; the lock goes with its holder, and leaves no file behind when appsim keeps
 * nothing in the directory. */
static void test_target_lock(void **state)
{
    st_target *t = open_dir("locked", true);
    char err[1024], p[300], pid[32];
    st_target *t2 = NULL;
    st_target_opts o = {.path = NULL};
    sub(p, sizeof p, "locked");
    o.path = p;
    assert_int_equal(st_target_open(&o, &t2, err, sizeof err), SIM_EXIT_USAGE);
    assert_null(t2);
    snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
    assert_non_null(strstr(err, "in use by"));
    assert_non_null(strstr(err, pid));
    assert_non_null(strstr(err, "test_storage_target"));
    st_target_close(t);
    sub(p, sizeof p, "locked/.appsim-lock");
    assert_false(exists(p)); /* nothing of appsim's there: no lock file either */
    sub(p, sizeof p, "locked");
    assert_false(exists(p)); /* nor the directory it made for the run */

    assert_int_equal(st_target_open(&o, &t2, err, sizeof err), 0);
    st_target_close(t2);
}

static void test_direct_io_alignment(void **state)
{
    st_target *t = open_dir("align", true);
    uint32_t bs = st_target_block_size(t);
    assert_true(bs >= 512 && bs <= 65536);
    assert_int_equal(bs & (bs - 1), 0);
    char err[1024];
    int fd;
    assert_int_equal(st_target_create_file(t, "f", 0, &fd, err, sizeof err), 0);
    assert_true(fcntl(fd, F_GETFL) & O_DIRECT);
    char *buf = st_alloc_aligned(2 * 65536);
    assert_non_null(buf);
    assert_int_equal((uintptr_t)buf % 4096, 0);
    memset(buf, 0x5a, 2 * 65536);
    /* Aligned to the block size: accepted. */
    assert_int_equal(pwrite(fd, buf, bs, 0), (ssize_t)bs);
    assert_int_equal(pwrite(fd, buf, 4096, 4096), 4096);
    /* Misaligned offset and length: the kernel refuses them under O_DIRECT, which shows
     * the page cache is really bypassed. */
    assert_int_equal(pwrite(fd, buf, bs, bs / 2), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(pwrite(fd, buf, bs / 2, 0), -1);
    assert_int_equal(errno, EINVAL);
    close(fd);
    st_free_aligned(buf);
    st_target_close(t);

    /* Buffered opt-out: no O_DIRECT on the descriptor. */
    char p[300];
    sub(p, sizeof p, "align");
    st_target_opts o = {.path = p, .buffered = true};
    assert_int_equal(st_target_open(&o, &t, err, sizeof err), 0);
    assert_true(st_target_buffered(t));
    assert_int_equal(st_target_open_file(t, "f", 0, true, &fd, err, sizeof err), 0);
    assert_false(fcntl(fd, F_GETFL) & O_DIRECT);
    close(fd);
    st_target_cleanup(t, err, sizeof err);
    st_target_close(t);
}

static void test_read_only_target(void **state)
{
    char p[300], err[1024];
    sub(p, sizeof p, "ro");
    mkdir(p, 0755);
    st_target_opts o = {.path = p, .read_only = true};
    st_target *t;
    assert_int_equal(st_target_open(&o, &t, err, sizeof err), 0);
    int fd;
    assert_int_equal(st_target_create_file(t, "x", 0, &fd, err, sizeof err), SIM_EXIT_USAGE);
    sub(p, sizeof p, "ro/x");
    assert_false(exists(p));
    st_target_close(t);
}

/* The shared option entries parse into st_target_opts and the engine name. */
static void test_shared_option_entries(void **state)
{
    st_target_opts o = {0};
    const char *engine = "io_uring";
    sim_opt opts[] = {ST_TARGET_OPTIONS(o, engine), SIM_OPT_END};
    char *argv[] = {"x",          "--target",   "/tmp", "--allow-destroy",
                    "--buffered", "--ioengine", "psync"};
    int np = 0;
    assert_int_equal(sim_opts_parse("x", opts, 7, argv, NULL, 0, &np, NULL), 0);
    assert_string_equal(o.path, "/tmp");
    assert_true(o.allow_destroy);
    assert_true(o.buffered);
    assert_string_equal(engine, "psync");
    char *bad[] = {"x", "--ioengine", "aio"};
    assert_int_equal(sim_opts_parse("x", opts, 3, bad, NULL, 0, &np, NULL), SIM_EXIT_USAGE);
    /* Every choice is a registered engine. */
    assert_non_null(st_find_engine("io_uring"));
    assert_non_null(st_find_engine("psync"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_path_refused_nothing_created),
        cmocka_unit_test(test_regular_file_refused),
        cmocka_unit_test(test_create_dir),
        cmocka_unit_test(test_space_check_names_both_numbers),
        cmocka_unit_test(test_manifest_and_cleanup),
        cmocka_unit_test(test_symlink_never_written_through),
        cmocka_unit_test(test_target_lock),
        cmocka_unit_test(test_direct_io_alignment),
        cmocka_unit_test(test_read_only_target),
        cmocka_unit_test(test_shared_option_entries),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
