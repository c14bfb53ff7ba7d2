/*
 * tests/bench/bench_tpcc_load.c: TPC-C load rate of the loader itself (generator thread
 * beside the SQLite writer) on a plain SQLite file, and the loaded file's size per
 * warehouse (the figure behind tpcc_estimate_bytes).
 *
 * usage: bench_tpcc_load DIR [SCALE] [INSTANCES]
 * Prints warehouses per second per instance and bytes per warehouse. Instances load in
 * parallel threads into DIR/bench-tpcc-<i>.db (removed afterwards).
 */
#include "oltp/tpcc_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct job {
    char path[512];
    int64_t scale;
    tpcc_load_stats st;
    int rc;
    char err[256];
} job;

static void *load_one(void *arg)
{
    job *j = arg;
    sqlite3 *db;
    unlink(j->path);
    if (sqlite3_open(j->path, &db) != SQLITE_OK) {
        j->rc = -1;
        return NULL;
    }
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536",
                 NULL, NULL, NULL);
    tpcc_load_opts o = {.scale = j->scale, .seed = 1, .quiet = true};
    j->rc = tpcc_load(db, &o, &j->st, j->err, sizeof j->err);
    sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    sqlite3_close(db);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [SCALE] [INSTANCES]\n", argv[0]);
        return 2;
    }
    int64_t scale = argc > 2 ? atoll(argv[2]) : 2;
    int n = argc > 3 ? atoi(argv[3]) : 1;
    job *jobs = calloc((size_t)n, sizeof *jobs);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    uint64_t t0 = sim_now_ns();
    for (int i = 0; i < n; i++) {
        snprintf(jobs[i].path, sizeof jobs[i].path, "%s/bench-tpcc-%d.db", argv[1], i + 1);
        jobs[i].scale = scale;
        pthread_create(&th[i], NULL, load_one, &jobs[i]);
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    double wall = (double)(sim_now_ns() - t0) / 1e9;
    for (int i = 0; i < n; i++) {
        if (jobs[i].rc) {
            fprintf(stderr, "instance %d: %s\n", i + 1, jobs[i].err);
            return 1;
        }
        struct stat st;
        stat(jobs[i].path, &st);
        printf("instance %d: scale %lld, %llu rows in %.2f s = %.2f wh/s, %.0f rows/s;"
               " generator busy %.2f s, writer waited %.2f s; file %lld bytes (%.1f MB/wh)\n",
               i + 1, (long long)scale, (unsigned long long)jobs[i].st.rows, jobs[i].st.seconds,
               (double)scale / jobs[i].st.seconds, (double)jobs[i].st.rows / jobs[i].st.seconds,
               jobs[i].st.gen_busy_seconds, jobs[i].st.writer_wait_seconds, (long long)st.st_size,
               (double)st.st_size / 1e6 / (double)scale);
        unlink(jobs[i].path);
        char p[600];
        snprintf(p, sizeof p, "%s-wal", jobs[i].path);
        unlink(p);
        snprintf(p, sizeof p, "%s-shm", jobs[i].path);
        unlink(p);
    }
    printf("all: %d instance(s) x %lld warehouses in %.2f s wall = %.2f wh/s per instance\n", n,
           (long long)scale, wall, (double)scale / wall);
    return 0;
}
