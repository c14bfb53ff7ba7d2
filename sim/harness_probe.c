/*
 * sim/harness_probe.c: the harness's own lateness, as a probe ("harness" in the result
 * and in each interval): how late the virtual-user scheduler released users against
 * their due times (the run's lateness histogram, sim_run_late_hist). A user's latency runs from its
 * due time, so this lateness is inside every latency the run reports; where it is large while
 * device_io is quiet, the machine (its cores, or a stalled virtual machine) set the latency, not
 * the drive. The snapshot is a copy of the run's cumulative histogram (one writer, read
 * while it records: sim/hist.c); a window's figures are the difference of two.
 */
#include "sim/sim_internal.h"

#include <stdlib.h>

static void *late_snapshot(void *ctx)
{
    sim_hist *copy = sim_hist_new();
    if (copy) sim_hist_merge(copy, sim_run_late_hist(ctx));
    return copy;
}

static json_t *us_or_null(const sim_hist *h, double pct)
{
    if (!sim_hist_count(h)) return json_null();
    uint64_t ns = pct >= 100 ? sim_hist_max(h) : sim_hist_percentile(h, pct);
    return json_real((double)ns / 1000.0);
}

static json_t *late_delta(void *ctx, const void *from, const void *to, double seconds,
                          uint64_t units)
{
    (void)ctx;
    (void)seconds;
    (void)units;
    sim_hist *d = sim_hist_new();
    sim_hist_add_delta(d, to, from);
    json_t *j = json_pack("{s:I, s:o, s:o, s:o}", "timer_wakes", (json_int_t)sim_hist_count(d),
                          "late_p50_us", us_or_null(d, 50), "late_p99_us", us_or_null(d, 99),
                          "late_max_us", us_or_null(d, 100));
    sim_hist_free(d);
    return j;
}

static void late_free(void *ctx, void *snap)
{
    (void)ctx;
    sim_hist_free(snap);
}

const sim_probe_ops sim_harness_probe = {
    .name = "harness", .snapshot = late_snapshot, .delta = late_delta, .free_snapshot = late_free};
