/*
 * Benchmark: the virtual-user engine's own CPU cost. Users do no work (a unit is an
 * empty function), so all CPU is the engine's: scheduling, queues, recording.
 * Reports CPU seconds per wall second and per million units, wake-up lateness and
 * peak memory, for 15,000 and 100,000 users at the review pacing (4.74 s cycle)
 * and at a short cycle that stresses the scheduler.
 *
 * usage: bench_sim_vu [seconds]
 */
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

typedef struct {
    uint64_t cycle_ns;
} wl_t;

static void *w_open(void *wl, int i, int w)
{
    return wl;
}
static void w_close(void *wl, void *c) {}
static int w_run(void *wl, void *c, int i, uint32_t vu, sim_rng *rng, sim_meter *m)
{
    return 0;
}
static uint64_t w_delay(void *wl, int i, uint32_t vu, int last, sim_rng *rng)
{
    wl_t *w = wl;
    if (last < 0) return sim_rng_range(rng, 1, w->cycle_ns);
    return sim_rng_think_ns(rng, w->cycle_ns);
}
static const sim_vu_ops ops = {w_open, w_close, w_run, w_delay};

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void one(uint32_t users, double cycle_s, double seconds)
{
    static const char *const types[] = {"unit"};
    sim_run_config c = {.type_names = types,
                        .ntypes = 1,
                        .duration_ns = (uint64_t)(seconds * 1e9),
                        .warmup_ns = (uint64_t)(cycle_s * 1e9),
                        .quiet = true};
    sim_run *run = sim_run_new(&c);
    wl_t w = {(uint64_t)(cycle_s * 1e9)};
    sim_vu_config cfg = {.instances = 1, .vusers = users, .workers = 16, .seed = 1};
    double c0 = cpu_now();
    uint64_t t0 = sim_now_ns();
    sim_run_start(run);
    sim_vu_stats st;
    sim_vu_run(run, &cfg, &ops, &w, &st);
    sim_run_finish(run);
    double wall = (double)(sim_now_ns() - t0) / 1e9, cpu = cpu_now() - c0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%7u users, cycle %5.2f s: %8.0f units/s, CPU %.3f s per s (%.2f%% of one core), "
           "%.2f CPU s per million units, wake-up late p99 %.3f ms max %.3f ms, peak RSS %ld MiB\n",
           users, cycle_s, (double)st.units / wall, cpu / wall, cpu / wall * 100,
           st.units ? cpu / ((double)st.units / 1e6) : 0, (double)st.wake_late_p99_ns / 1e6,
           (double)st.wake_late_max_ns / 1e6, ru.ru_maxrss / 1024);
    sim_run_free(run);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 20;
    one(15000, 4.74, secs);
    one(100000, 4.74, secs);
    one(15000, 0.1, secs);
    one(100000, 0.5, secs);
    return 0;
}
