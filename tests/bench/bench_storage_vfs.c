/*
 * tests/bench/bench_storage_vfs.c: overhead of appsim's direct-I/O VFS with everything
 * in the buffer pool, against SQLite's default VFS (a buffered target: the page cache
 * and SQLite's own cache hold everything) on the same machine in the same run.
 *
 * usage: bench_storage_vfs [DIR] [SECONDS] [CONNECTIONS]   (defaults /tmp 3 1)
 * For sync=full and sync=off, rounds alternate the two VFSes (to share the machine's
 * noise) and the median TPS of each is reported with their ratio. The workload is the
 * tests' own (vfs_workload.h): 4 uniform point reads and 1 update per transaction
 * (BEGIN IMMEDIATE), CONNECTIONS threads each with its own connection, a 2.5 MiB
 * table, a 64 MiB buffer.
 */
#include "storage/sqlite/sqlite.h"
#include "../unit/vfs_workload.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 5
#define NROWS 10000
#define MAX_CONNS 16

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_storage_vfs: %s\n", what);
    exit(1);
}

typedef struct client {
    st_db *db;
    int id;
    _Atomic uint64_t *end_ns; /* 0 until every client is warm */
    uint64_t txns;
    atomic_int *ready;
} client;

static void *run_client(void *arg)
{
    client *cl = arg;
    char err[1024];
    sqlite3 *c = NULL;
    if (st_db_connect(cl->db, &c, err, sizeof err)) die(err);
    /* warm-up: everything into the pool (or SQLite's cache and the page cache) */
    wl_query_i64(c, "SELECT sum(length(pad)) FROM t");
    wl_conn w;
    if (wl_prepare(&w, c)) die("prepare failed");
    sim_rng rng;
    sim_rng_seed(&rng, 11, (uint64_t)cl->id);
    for (int i = 0; i < 100; i++)
        wl_txn(&w, &rng, NROWS, 4, 0);
    atomic_fetch_add(cl->ready, 1);
    uint64_t end;
    while ((end = atomic_load(cl->end_ns)) == 0)
        usleep(100);
    while (sim_now_ns() < end) {
        if (wl_txn(&w, &rng, NROWS, 4, 0) != SQLITE_OK) die("transaction failed");
        cl->txns++;
    }
    wl_finish(&w);
    sqlite3_close(c);
    return NULL;
}

static double run_round(const char *dir, bool buffered, const char *sync, double seconds, int conns)
{
    char err[1024];
    st_target_opts to = {.path = dir, .buffered = buffered};
    st_target *t = NULL;
    if (st_target_open(&to, &t, err, sizeof err)) die(err);
    st_db_opts o = {.buffer_bytes = 64 << 20, .max_connections = conns, .sync = sync};
    st_db *db = NULL;
    bool exists = st_target_owns(t, "bench.db");
    if (st_db_open(t, "bench.db", &o, !exists, &db, err, sizeof err)) die(err);
    if (!exists) {
        sqlite3 *c = NULL;
        if (st_db_connect(db, &c, err, sizeof err)) die(err);
        if (wl_load(c, NROWS, 200)) die("load failed");
        sqlite3_close(c);
    }
    client cl[MAX_CONNS];
    pthread_t th[MAX_CONNS];
    atomic_int ready = 0;
    _Atomic uint64_t end_ns = 0;
    for (int i = 0; i < conns; i++) {
        cl[i] = (client){.db = db, .id = i, .end_ns = &end_ns, .ready = &ready};
        if (pthread_create(&th[i], NULL, run_client, &cl[i])) die("pthread_create");
    }
    /* the measured window opens once every client is warm */
    while (atomic_load(&ready) < conns)
        usleep(1000);
    uint64_t t0 = sim_now_ns();
    atomic_store(&end_ns, t0 + (uint64_t)(seconds * 1e9));
    uint64_t total = 0;
    for (int i = 0; i < conns; i++) {
        pthread_join(th[i], NULL);
        total += cl[i].txns;
    }
    double secs = (double)(sim_now_ns() - t0) / 1e9;
    st_db_close(db);
    st_target_close(t);
    return (double)total / secs;
}

int main(int argc, char **argv)
{
    const char *base = argc > 1 ? argv[1] : "/tmp";
    double seconds = argc > 2 ? atof(argv[2]) : 3.0;
    int conns = argc > 3 ? atoi(argv[3]) : 1;
    if (seconds <= 0 || conns < 1 || conns > MAX_CONNS) {
        fprintf(stderr, "usage: bench_storage_vfs [DIR] [SECONDS > 0] [CONNECTIONS 1..%d]\n",
                MAX_CONNS);
        return 2;
    }
    char ddir[512], bdir[512];
    snprintf(ddir, sizeof ddir, "%s/appsim-bench-vfs-direct", base);
    snprintf(bdir, sizeof bdir, "%s/appsim-bench-vfs-buffered", base);
    static const char *const syncs[] = {"full", "off"};
    printf("connections %d, %.1f s rounds, median of %d\n", conns, seconds, ROUNDS);
    printf("%-6s %14s %14s %8s\n", "sync", "direct TPS", "default TPS", "ratio");
    for (int s = 0; s < 2; s++) {
        double d[ROUNDS], b[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            d[r] = run_round(ddir, false, syncs[s], seconds, conns);
            b[r] = run_round(bdir, true, syncs[s], seconds, conns);
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
