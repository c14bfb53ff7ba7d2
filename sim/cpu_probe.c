/*
 * sim/cpu_probe.c: the process's own CPU use, as a probe every run carries ("cpu" in
 * the result and in each interval): user and system seconds, the cores busy on
 * average, the CPUs the process may run on, and CPU time per unit of work. With
 * device_io it says why a run saturated: cores busy near the CPUs allowed means the
 * run was CPU-bound; far below, with the drive's queue full, it waited on the drive.
 */
#include "sim/sim_internal.h"

#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>

typedef struct cpu_snap {
    double user_s, system_s;
} cpu_snap;

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void *cpu_snapshot(void *ctx)
{
    (void)ctx;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru)) return NULL;
    cpu_snap *s = sim_xmalloc(sizeof *s);
    s->user_s = tv_s(ru.ru_utime);
    s->system_s = tv_s(ru.ru_stime);
    return s;
}

static int cpus_allowed(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set)) return 0;
    return CPU_COUNT(&set);
}

static json_t *cpu_delta(void *ctx, const void *from, const void *to, double seconds,
                         uint64_t units)
{
    (void)ctx;
    const cpu_snap *a = from, *b = to;
    double user = b->user_s - a->user_s, sys = b->system_s - a->system_s;
    return json_pack("{s:f, s:f, s:f, s:i, s:o}", "user_s", user, "system_s", sys, "cores_busy",
                     seconds > 0 ? (user + sys) / seconds : 0.0, "cpus_allowed", cpus_allowed(),
                     "cpu_us_per_unit",
                     units ? json_real((user + sys) * 1e6 / (double)units) : json_null());
}

static void cpu_free(void *ctx, void *snap)
{
    (void)ctx;
    free(snap);
}

const sim_probe_ops sim_cpu_probe = {
    .name = "cpu", .snapshot = cpu_snapshot, .delta = cpu_delta, .free_snapshot = cpu_free};
