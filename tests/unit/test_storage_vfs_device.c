/*
 * The VFS seen from the block layer. Each case runs on a filesystem of its own on a
 * loop device, so that the device_io probe counts only this test's I/O even on a
 * machine shared with other work:
 *   - a database 4x larger than the buffer, uniform workload: device reads match the
 *     pool's misses, and fincore finds (almost) nothing of the database in the page
 *     cache after the run;
 *   - a buffer larger than the database: after warm-up the device sees (almost) only
 *     writes;
 *   - the same workload on a disk-backed loop device (direct I/O to the virtio disk)
 *     and on a tmpfs-backed one: the commit latency differs clearly.
 * Needs root, losetup and mkfs.ext4; skipped with the reason otherwise.
 */
#include "storage/sqlite/sqlite.h"
#include "vfs_workload.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct loopfs {
    char dir[256]; /* scratch: backing file and mount point */
    char mnt[300];
    char dev[64];
    bool mounted;
} loopfs;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

/* A fresh ext4 on a loop device over a file in base (a directory on the disk, or
 * /dev/shm for memory). false (and a reason on stderr) when the machine cannot. */
static bool loopfs_make(loopfs *l, const char *base, bool direct)
{
    memset(l, 0, sizeof *l);
    if (geteuid() != 0) {
        fprintf(stderr, "skipped: needs root for losetup and mount\n");
        return false;
    }
    snprintf(l->dir, sizeof l->dir, "%s/appsim-test-vfsdev-XXXXXX", base);
    if (!mkdtemp(l->dir)) return false;
    snprintf(l->mnt, sizeof l->mnt, "%s/mnt", l->dir);
    char out[300];
    snprintf(out, sizeof out, "%s/dev", l->dir);
    if (sh("truncate -s 192M %s/backing && mkdir %s && losetup %s -f --show %s/backing > %s "
           "2>/dev/null",
           l->dir, l->mnt, direct ? "--direct-io=on" : "", l->dir, out)) {
        fprintf(stderr, "skipped: cannot create a loop device\n");
        sh("rm -rf %s", l->dir);
        return false;
    }
    FILE *f = fopen(out, "r");
    if (!f || !fgets(l->dev, sizeof l->dev, f)) {
        if (f) fclose(f);
        sh("rm -rf %s", l->dir);
        return false;
    }
    fclose(f);
    l->dev[strcspn(l->dev, "\n")] = 0;
    if (sh("mkfs.ext4 -q -F %s >/dev/null 2>&1 && mount %s %s", l->dev, l->dev, l->mnt)) {
        fprintf(stderr, "skipped: cannot make or mount ext4 on %s\n", l->dev);
        sh("losetup -d %s; rm -rf %s", l->dev, l->dir);
        return false;
    }
    l->mounted = true;
    return true;
}

static void loopfs_drop(loopfs *l)
{
    if (l->mounted) sh("umount %s", l->mnt);
    if (l->dev[0]) sh("losetup -d %s", l->dev);
    if (l->dir[0]) sh("rm -rf %s", l->dir);
}

static st_target *open_target(const char *path)
{
    char err[1024];
    st_target_opts o = {.path = path};
    st_target *t = NULL;
    int rc = st_target_open(&o, &t, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    return t;
}

static st_db *open_db(st_target *t, uint64_t buffer, bool create)
{
    char err[1024];
    /* a small checkpoint trigger, so that the measured phases include checkpoints */
    st_db_opts o = {.buffer_bytes = buffer, .max_connections = 1, .checkpoint_wal_bytes = 1 << 20};
    st_db *db = NULL;
    int rc = st_db_open(t, "test.db", &o, create, &db, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    return db;
}

static sqlite3 *connect(st_db *db)
{
    char err[1024];
    sqlite3 *c = NULL;
    assert_int_equal(st_db_connect(db, &c, err, sizeof err), 0);
    return c;
}

static void assert_integrity(sqlite3 *c)
{
    char msg[512];
    bool ok = wl_integrity_ok(c, msg, sizeof msg);
    if (!ok) fprintf(stderr, "integrity_check: %s\n", msg);
    assert_true(ok);
}

static json_int_t jint(const json_t *j, const char *k)
{
    return json_integer_value(json_object_get(j, k));
}

/* Loads nrows into a new database, then closes it so the measured phase starts cold. */
static void load(st_target *t, uint64_t nrows)
{
    st_db *db = open_db(t, 8 << 20, true);
    sqlite3 *c = connect(db);
    assert_int_equal(wl_load(c, nrows, 200), 0);
    sqlite3_close(c);
    char err[512];
    assert_int_equal(st_db_checkpoint(db, err, sizeof err), 0);
    st_db_close(db);
}

typedef struct phase {
    json_t *dev;  /* device_io delta */
    json_t *pool; /* db_pool delta */
    sim_hist *lat;
} phase;

/* Runs n transactions and returns what the device and the pool saw meanwhile. */
static phase measure(st_target *t, st_db *db, wl_conn *w, sim_rng *rng, uint64_t nrows, int n)
{
    phase p = {.lat = sim_hist_new()};
    void *d0 = st_device_io_probe.snapshot(t);
    void *p0 = st_db_pool_probe.snapshot(db);
    assert_non_null(d0);
    uint64_t t0 = sim_now_ns();
    for (int i = 0; i < n; i++) {
        uint64_t s = sim_now_ns();
        assert_int_equal(wl_txn(w, rng, nrows, 4, 0), SQLITE_OK);
        sim_hist_record(p.lat, sim_now_ns() - s);
    }
    double secs = (double)(sim_now_ns() - t0) / 1e9;
    void *d1 = st_device_io_probe.snapshot(t);
    void *p1 = st_db_pool_probe.snapshot(db);
    p.dev = st_device_io_probe.delta(t, d0, d1, secs, (uint64_t)n);
    p.pool = st_db_pool_probe.delta(db, p0, p1, secs, (uint64_t)n);
    st_device_io_probe.free_snapshot(t, d0);
    st_device_io_probe.free_snapshot(t, d1);
    st_db_pool_probe.free_snapshot(db, p0);
    st_db_pool_probe.free_snapshot(db, p1);
    return p;
}

static void phase_free(phase *p)
{
    json_decref(p->dev);
    json_decref(p->pool);
    sim_hist_free(p->lat);
}

/* Resident bytes of a file in the page cache, from util-linux fincore. */
static long long fincore_bytes(const char *path)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "fincore --bytes --noheadings --output RES %s", path);
    FILE *f = popen(cmd, "r");
    long long v = -1;
    if (f) {
        if (fscanf(f, "%lld", &v) != 1) v = -1;
        pclose(f);
    }
    return v;
}

static void reads_match_misses(void **state)
{
    loopfs l;
    if (!loopfs_make(&l, "/tmp", true)) skip();
    st_target *t = open_target(l.mnt);
    const uint64_t nrows = 40000; /* about 10 MiB */
    load(t, nrows);
    char path[512];
    snprintf(path, sizeof path, "%s/test.db", l.mnt);
    long long dbsize = 0;
    {
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        dbsize = ftell(f);
        fclose(f);
    }
    uint64_t buffer = (uint64_t)dbsize / 4;
    st_db *db = open_db(t, buffer, false);
    sqlite3 *c = connect(db);
    wl_conn w;
    assert_int_equal(wl_prepare(&w, c), 0);
    sim_rng rng;
    sim_rng_seed(&rng, 1, 0);
    phase warm = measure(t, db, &w, &rng, nrows, 300);
    phase_free(&warm);
    phase p = measure(t, db, &w, &rng, nrows, 1000);
    json_int_t reads = jint(p.dev, "reads"), misses = jint(p.pool, "misses");
    fprintf(stderr,
            "db %lld bytes, buffer %llu: %lld misses, %lld device reads (%.2f / %.2f per txn), "
            "%lld device writes, hit ratio %.3f, mean txn %.0f us\n",
            dbsize, (unsigned long long)buffer, (long long)misses, (long long)reads,
            (double)misses / 1000, (double)reads / 1000, (long long)jint(p.dev, "writes"),
            json_real_value(json_object_get(p.pool, "hit_ratio")), sim_hist_mean(p.lat) / 1e3);
    assert_true(misses > 1000); /* the workload does miss */
    long long diff = (long long)reads - (long long)misses;
    assert_true(diff < 0 ? -diff : diff <= misses / 10 + 20);
    phase_free(&p);
    assert_integrity(c);
    /* the WAL, written at every commit, is not in the page cache either */
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", path);
    long long wres = fincore_bytes(wal);
    fprintf(stderr, "fincore: %lld bytes of the WAL resident\n", wres);
    assert_true(wres >= 0);
    assert_true(wres <= 64 * 1024);
    wl_finish(&w);
    sqlite3_close(c);
    st_db_close(db);
    long long res = fincore_bytes(path);
    fprintf(stderr, "fincore: %lld of %lld bytes resident\n", res, dbsize);
    assert_true(res >= 0);
    assert_true(res <= dbsize / 50);
    st_target_close(t);
    loopfs_drop(&l);
}

static void warm_pool_only_writes(void **state)
{
    loopfs l;
    if (!loopfs_make(&l, "/tmp", true)) skip();
    st_target *t = open_target(l.mnt);
    const uint64_t nrows = 10000; /* about 2.5 MiB */
    load(t, nrows);
    st_db *db = open_db(t, 16 << 20, false);
    sqlite3 *c = connect(db);
    /* warm-up: a full scan brings every table page into the pool */
    assert_true(wl_query_i64(c, "SELECT sum(length(pad)) FROM t") > 0);
    wl_conn w;
    assert_int_equal(wl_prepare(&w, c), 0);
    sim_rng rng;
    sim_rng_seed(&rng, 2, 0);
    phase warm = measure(t, db, &w, &rng, nrows, 100);
    phase_free(&warm);
    phase p = measure(t, db, &w, &rng, nrows, 1000);
    json_int_t reads = jint(p.dev, "reads"), writes = jint(p.dev, "writes");
    fprintf(stderr,
            "warm pool: %lld device reads, %lld device writes, %lld misses, %lld checkpoints "
            "in 1000 txns\n",
            (long long)reads, (long long)writes, (long long)jint(p.pool, "misses"),
            (long long)jint(p.pool, "checkpoints"));
    assert_true(writes >= 1000); /* a WAL write per commit at least */
    assert_true(jint(p.pool, "checkpoints") > 0);
    assert_true(reads <= writes / 100 + 5);
    phase_free(&p);
    assert_integrity(c);
    wl_finish(&w);
    sqlite3_close(c);
    st_db_close(db);
    st_target_close(t);
    loopfs_drop(&l);
}

/* The mean commit latency of the workload on a loop device over base; *p99 its p99 and
 * *sync_us the mean time of the WAL's fdatasync as the VFS saw it. */
static double mean_commit_us(const char *base, bool direct, double *p99, double *sync_us)
{
    loopfs l;
    if (!loopfs_make(&l, base, direct)) return -1;
    st_target *t = open_target(l.mnt);
    const uint64_t nrows = 5000;
    load(t, nrows);
    st_db *db = open_db(t, 8 << 20, false);
    sqlite3 *c = connect(db);
    wl_conn w;
    assert_int_equal(wl_prepare(&w, c), 0);
    sim_rng rng;
    sim_rng_seed(&rng, 3, 0);
    phase warm = measure(t, db, &w, &rng, nrows, 50);
    phase_free(&warm);
    phase p = measure(t, db, &w, &rng, nrows, 300);
    double mean = sim_hist_mean(p.lat) / 1e3;
    *p99 = (double)sim_hist_percentile(p.lat, 99) / 1e3;
    phase_free(&p);
    json_t *dj = st_db_json(db);
    *sync_us = json_number_value(json_object_get(json_object_get(dj, "wal_file"), "sync_avg_us"));
    json_decref(dj);
    assert_integrity(c);
    wl_finish(&w);
    sqlite3_close(c);
    st_db_close(db);
    st_target_close(t);
    loopfs_drop(&l);
    return mean;
}

static void device_speed_shows(void **state)
{
    double disk_p99, mem_p99, disk_sync, mem_sync;
    double disk = mean_commit_us("/tmp", true, &disk_p99, &disk_sync);
    if (disk < 0) skip();
    double mem = mean_commit_us("/dev/shm", false, &mem_p99, &mem_sync);
    if (mem < 0) skip();
    fprintf(stderr,
            "txn latency (4 reads + 1 update, sync=full): disk-backed loop mean %.0f us p99 "
            "%.0f us, WAL sync %.0f us; tmpfs-backed loop mean %.0f us p99 %.0f us, WAL sync "
            "%.0f us\n",
            disk, disk_p99, disk_sync, mem, mem_p99, mem_sync);
    /* A flush to the virtio disk costs far more than one to memory, and the commits show
     * it. The whole commit's time also holds the CPU's work, which under the sanitizers
     * and a parallel ctest can be most of it (a fast disk's commits were 1.8x a tmpfs
     * loop's there): so the flush itself, as the VFS timed it, must differ by more, and
     * the commits must be slower at all. */
    assert_true(disk_sync > 2 * mem_sync);
    assert_true(disk > mem);
}

/* ramfs has no direct I/O: the error names --buffered, and --buffered then works. */
static void no_direct_io_names_buffered(void **state)
{
    if (geteuid() != 0) {
        fprintf(stderr, "skipped: needs root to mount ramfs\n");
        skip();
    }
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/appsim-test-ramfs-XXXXXX");
    assert_non_null(mkdtemp(dir));
    if (sh("mount -t ramfs none %s", dir)) {
        rmdir(dir);
        fprintf(stderr, "skipped: cannot mount ramfs\n");
        skip();
    }
    char err[1024] = "";
    st_target_opts o = {.path = dir};
    st_target *t = NULL;
    int rc = st_target_open(&o, &t, err, sizeof err);
    if (rc == 0) {
        /* a target that let O_DIRECT through: st_db_open must catch it */
        st_db_opts dopts = {.buffer_bytes = 1 << 20};
        st_db *db = NULL;
        rc = st_db_open(t, "test.db", &dopts, true, &db, err, sizeof err);
        st_db_close(db);
        st_target_close(t);
    }
    fprintf(stderr, "ramfs: %s\n", err);
    assert_int_equal(rc, SIM_EXIT_USAGE);
    assert_non_null(strstr(err, "--buffered"));
    o.buffered = true;
    assert_int_equal(st_target_open(&o, &t, err, sizeof err), 0);
    st_db_opts dopts = {.buffer_bytes = 1 << 20};
    st_db *db = NULL;
    assert_int_equal(st_db_open(t, "test.db", &dopts, true, &db, err, sizeof err), 0);
    sqlite3 *c = connect(db);
    assert_int_equal(wl_load(c, 500, 100), 0);
    assert_integrity(c);
    sqlite3_close(c);
    st_db_close(db);
    st_target_close(t);
    sh("umount %s", dir);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_match_misses),
        cmocka_unit_test(warm_pool_only_writes),
        cmocka_unit_test(device_speed_shows),
        cmocka_unit_test(no_direct_io_names_buffered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
