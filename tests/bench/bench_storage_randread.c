/*
 * Benchmark: 4 KiB random O_DIRECT reads at a fixed queue depth through appsim's engine
 * (the loop a trace replay runs: keep qd I/Os in flight, submit every freed slot in one
 * batch and wait for a completion in the same call (st_engine_submit_reap), reap
 * whatever has completed, latency of each I/O into a sim/ meter). Prints
 * one line of JSON: IOPS, CPU seconds (user+system of the process) and CPU seconds per
 * million I/Os, latency percentiles. tests/bench/storage_randread.sh runs it next to
 * fio's io_uring engine on the same file. Not a test.
 *
 * usage: bench_storage_randread FILE|DEVICE QD SECONDS [io_uring|psync] [noreg]
 */
#include "storage/storage.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLK 4096

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s FILE QD SECONDS [io_uring|psync] [noreg]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    unsigned qd = (unsigned)strtoul(argv[2], NULL, 10);
    double secs = strtod(argv[3], NULL);
    const char *engine = argc > 4 ? argv[4] : "io_uring";
    bool reg = !(argc > 5 && !strcmp(argv[5], "noreg"));
    int fd = open(path, O_RDONLY | O_DIRECT);
    struct stat st;
    uint64_t size = 0;
    if (fd >= 0 && fstat(fd, &st) == 0)
        size = S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &size) == 0 ? size
                                                                          : (uint64_t)st.st_size;
    if (size < BLK) {
        perror(path);
        return 1;
    }
    uint64_t nblocks = size / BLK;
    char err[512];
    st_engine *e = st_engine_open(engine, qd, err, sizeof err);
    if (!e) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    uint8_t *bufs = st_alloc_aligned((size_t)qd * BLK);
    st_io *ios = calloc(qd, sizeof *ios);
    st_io **free_list = calloc(qd, sizeof *free_list), **done = calloc(qd, sizeof *done);
    if (reg) {
        st_engine_register_file(e, fd);
        st_engine_register_buffer(e, bufs, (size_t)qd * BLK);
    }
    static const char *const types[] = {"read"};
    sim_run_config cfg = {.type_names = types,
                          .ntypes = 1,
                          .unit = "iops",
                          .quiet = true,
                          .duration_ns = (uint64_t)(secs * 1e9)};
    sim_run *run = sim_run_new(&cfg);
    sim_meter *m = sim_run_meter(run, 0);
    st_engine_set_meter(e, m, 0, -1, -1);
    sim_rng rng;
    sim_rng_seed(&rng, 42, 1);
    unsigned nfree = qd;
    for (unsigned i = 0; i < qd; i++) {
        ios[i] = (st_io){.op = ST_OP_READ, .fd = fd, .buf = bufs + (size_t)i * BLK, .len = BLK};
        free_list[i] = &ios[i];
    }
    uint64_t errors = 0;
    sim_run_start(run);
    double c0 = cpu_s();
    uint64_t t0 = sim_now_ns();
    while (!sim_run_done(run)) {
        for (unsigned i = 0; i < nfree; i++)
            free_list[i]->offset = sim_rng_range(&rng, 0, nblocks - 1) * BLK;
        unsigned s = 0;
        int r = st_engine_submit_reap(e, free_list, nfree, &s, done, qd, 1);
        if (r < 0) {
            fprintf(stderr, "submit/reap: %s\n", strerror(-r));
            return 1;
        }
        memmove(free_list, free_list + s, (nfree - s) * sizeof *free_list);
        nfree -= s;
        for (int i = 0; i < r; i++) {
            errors += done[i]->result != BLK;
            free_list[nfree++] = done[i];
        }
    }
    uint64_t t1 = sim_now_ns();
    double c1 = cpu_s();
    /* Drain what is still in flight (not counted). */
    while (st_engine_inflight(e) > 0)
        if (st_engine_reap(e, done, qd, 1) < 0) break;
    sim_run_finish(run);
    uint64_t n = sim_run_count(run, 0, -1);
    double wall = (double)(t1 - t0) / 1e9;
    sim_hist *h = sim_run_merged_hist(run, 0, -1);
    printf("{\"tool\":\"appsim\",\"engine\":\"%s\",\"registered\":%s,\"qd\":%u,"
           "\"seconds\":%.3f,\"ios\":%llu,\"errors\":%llu,\"iops\":%.0f,\"cpu_s\":%.3f,"
           "\"cpu_s_per_million\":%.3f,\"lat_p50_us\":%.1f,\"lat_p99_us\":%.1f}\n",
           st_engine_name(e), reg ? "true" : "false", qd, wall, (unsigned long long)n,
           (unsigned long long)errors, (double)n / wall, c1 - c0,
           n ? (c1 - c0) / ((double)n / 1e6) : 0.0, sim_hist_percentile(h, 50) / 1e3,
           sim_hist_percentile(h, 99) / 1e3);
    sim_hist_free(h);
    sim_run_free(run);
    st_engine_close(e);
    close(fd);
    return errors ? 1 : 0;
}
