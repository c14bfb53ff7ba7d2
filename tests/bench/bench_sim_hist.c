/*
 * Benchmark: cost of recording one latency sample (sim_hist_record) and of a
 * meter record (phase check + two histograms), in ns per sample. Not a test.
 */
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 50000000;
    /* Pre-generated latencies (log-uniform 1 us .. 100 ms) so the RNG is not timed. */
    enum { POOL = 1 << 16 };
    uint64_t *vals = malloc(POOL * sizeof *vals);
    sim_rng r;
    sim_rng_seed(&r, 9, 9);
    for (size_t i = 0; i < POOL; i++)
        vals[i] = (uint64_t)(1000.0 * __builtin_exp(sim_rng_double(&r) * 11.5));
    sim_hist *h = sim_hist_new();
    double t0 = cpu_s();
    for (size_t i = 0; i < n; i++)
        sim_hist_record(h, vals[i & (POOL - 1)]);
    double t1 = cpu_s();
    printf("sim_hist_record: %.2f ns per sample (%zu samples)\n", (t1 - t0) / (double)n * 1e9, n);

    static const char *const types[] = {"op"};
    sim_run_config c = {.type_names = types, .ntypes = 1, .quiet = true};
    sim_run *run = sim_run_new(&c);
    sim_meter *m = sim_run_meter(run, 0);
    sim_run_start(run);
    t0 = cpu_s();
    for (size_t i = 0; i < n; i++)
        sim_meter_record(m, 0, 0, vals[i & (POOL - 1)]);
    t1 = cpu_s();
    printf("sim_meter_record: %.2f ns per sample\n", (t1 - t0) / (double)n * 1e9);
    t0 = cpu_s();
    for (size_t i = 0; i < n / 10; i++)
        (void)sim_now_ns();
    t1 = cpu_s();
    printf("sim_now_ns: %.2f ns per call\n", (t1 - t0) / (double)(n / 10) * 1e9);
    sim_run_finish(run);
    sim_run_free(run);
    sim_hist_free(h);
    free(vals);
    return 0;
}
