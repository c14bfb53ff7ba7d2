/*
 * sim/review/suite_load.c: how hard a suite step loaded the drive, read from its result:
 * the device figures (device_io: the disk's block-layer counters over a measured phase,
 * docs/result-schema.md) of its busiest measured phase (a run, or a curve point's run;
 * never a report interval, which may be warm-up). The suite prints it after each step
 * and warns when the drive was mostly idle, so that figures which measure the host more
 * than the drive are never taken for the drive's.
 */
#include "sim/review/review_internal.h"
#include "sim/review/suite_internal.h"

#include <string.h>

/* Below this share of the measured time with I/O in flight the drive counts as idle. */
#define IDLE_BELOW 0.20

static void busiest(const json_t *v, int depth, suite_load *best)
{
    if (depth > 8) return;
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach((json_t *)v, i, x) busiest(x, depth + 1, best);
        return;
    }
    if (!json_is_object(v)) return;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x)
    {
        if (!strcmp(k, "intervals")) continue;
        double u;
        if (!strcmp(k, "device_io") && cmp_num(x, "utilization", &u)) {
            if (!best->known || u > best->busy) {
                best->known = true;
                best->busy = u;
                if (!cmp_num(x, "read_iops", &best->read_iops)) best->read_iops = 0;
                if (!cmp_num(x, "write_iops", &best->write_iops)) best->write_iops = 0;
            }
            continue;
        }
        busiest(x, depth + 1, best);
    }
}

suite_load suite_step_load(const json_t *doc)
{
    suite_load l = {0};
    busiest(doc, 0, &l);
    return l;
}

bool suite_load_idle(const suite_load *l)
{
    return l->known && l->busy < IDLE_BELOW;
}

void suite_load_text(const suite_load *l, char *buf, size_t len)
{
    if (!l->known)
        snprintf(buf, len,
                 "drive load not recorded (no device figures: a target whose disk "
                 "appsim cannot name)");
    else
        snprintf(buf, len,
                 "drive busy %.0f %% of its busiest measured phase (%.0f reads/s, "
                 "%.0f writes/s)",
                 l->busy * 100, l->read_iops, l->write_iops);
}
