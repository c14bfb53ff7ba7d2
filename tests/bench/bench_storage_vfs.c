/*
 * tests/bench/bench_storage_vfs.c: overhead of appsim's direct-I/O VFS with everything
 * in the buffer pool, against SQLite's default VFS (a buffered target: the page cache
 * and SQLite's own cache hold everything) on the same machine in the same run.
 *
 * usage: bench_storage_vfs [DIR] [SECONDS]   (DIR on the drive, default /tmp)
 * For sync=full and sync=off, rounds alternate the two VFSes (to share the machine's
 * noise) and the median TPS of each is reported with their ratio. The workload is the
 * tests' own (vfs_workload.h): 4 uniform point reads and 1 update per transaction, one
 * connection, a 2.5 MiB table, a 64 MiB buffer.
 */
#include "storage/storage.h"
#include "../unit/vfs_workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 5

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double run_round(const char *dir, bool buffered, const char *sync, double seconds)
{
    char err[1024];
    st_target_opts to = {.path = dir, .create_dir = true, .buffered = buffered};
    st_target *t = NULL;
    if (st_target_open(&to, &t, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    const uint64_t nrows = 10000;
    st_db_opts o = {.buffer_bytes = 64 << 20, .max_connections = 1, .sync = sync};
    st_db *db = NULL;
    bool exists = st_target_owns(t, "bench.db");
    if (st_db_open(t, "bench.db", &o, !exists, &db, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    sqlite3 *c = NULL;
    if (st_db_connect(db, &c, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    if (!exists && wl_load(c, nrows, 200)) {
        fprintf(stderr, "load failed\n");
        exit(1);
    }
    /* warm-up: everything into the pool (or SQLite's cache and the page cache) */
    wl_query_i64(c, "SELECT sum(length(pad)) FROM t");
    wl_conn w;
    wl_prepare(&w, c);
    sim_rng rng;
    sim_rng_seed(&rng, 11, 0);
    for (int i = 0; i < 200; i++)
        wl_txn(&w, &rng, nrows, 4, 0);
    uint64_t t0 = sim_now_ns(), end = t0 + (uint64_t)(seconds * 1e9);
    uint64_t n = 0;
    while (sim_now_ns() < end) {
        if (wl_txn(&w, &rng, nrows, 4, 0) != SQLITE_OK) {
            fprintf(stderr, "transaction failed\n");
            exit(1);
        }
        n++;
    }
    double tps = (double)n / ((double)(sim_now_ns() - t0) / 1e9);
    wl_finish(&w);
    sqlite3_close(c);
    st_db_close(db);
    st_target_close(t);
    return tps;
}

int main(int argc, char **argv)
{
    const char *base = argc > 1 ? argv[1] : "/tmp";
    double seconds = argc > 2 ? atof(argv[2]) : 3.0;
    char ddir[512], bdir[512];
    snprintf(ddir, sizeof ddir, "%s/appsim-bench-vfs-direct", base);
    snprintf(bdir, sizeof bdir, "%s/appsim-bench-vfs-buffered", base);
    static const char *const syncs[] = {"full", "off"};
    printf("%-6s %14s %14s %8s\n", "sync", "direct TPS", "default TPS", "ratio");
    for (int s = 0; s < 2; s++) {
        double d[ROUNDS], b[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            d[r] = run_round(ddir, false, syncs[s], seconds);
            b[r] = run_round(bdir, true, syncs[s], seconds);
        }
        qsort(d, ROUNDS, sizeof d[0], cmp_double);
        qsort(b, ROUNDS, sizeof b[0], cmp_double);
        printf("%-6s %14.0f %14.0f %8.3f\n", syncs[s], d[ROUNDS / 2], b[ROUNDS / 2],
               d[ROUNDS / 2] / b[ROUNDS / 2]);
        fflush(stdout);
    }
    for (int i = 0; i < 2; i++) {
        char err[512];
        st_target_opts to = {.path = i ? bdir : ddir};
        st_target *t = NULL;
        if (st_target_open(&to, &t, err, sizeof err) == 0) {
            st_target_cleanup(t, err, sizeof err);
            st_target_close(t);
        }
        rmdir(i ? bdir : ddir);
    }
    return 0;
}
