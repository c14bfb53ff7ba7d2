/*
 * sim/curve_warning.c: the foreign-I/O warning under a rate curve's text table. Each
 * point of a curve is a run of its own with its own device figures (the point's
 * run.device_io, storage/device_io.c); a run's text prints their warning under its
 * device line (sim_result_print), and a curve table, which has no device line, says
 * in one line which points shared the disk with other processes.
 */
#include "sim/sim.h"

#include <string.h>

static const json_t *point_device_io(const json_t *p)
{
    const json_t *d = json_object_get(p, "device_io");
    return d ? d : json_object_get(json_object_get(p, "run"), "device_io");
}

void sim_result_print_curve_warning(FILE *out, const char *indent, const json_t *points)
{
    char names[512] = "";
    size_t len = 0;
    int warned = 0;
    double worst = 0;
    size_t i;
    const json_t *p;
    json_array_foreach(points, i, p)
    {
        const json_t *dev = point_device_io(p);
        if (!json_string_value(json_object_get(dev, "warning"))) continue;
        double share = json_number_value(json_object_get(dev, "foreign_io_share"));
        if (share > worst) worst = share;
        char name[32];
        if (i == 0)
            snprintf(name, sizeof name, "max");
        else
            snprintf(name, sizeof name, "%.0f%%",
                     json_number_value(json_object_get(p, "fraction")) * 100);
        if (len < sizeof names)
            len +=
                (size_t)snprintf(names + len, sizeof names - len, "%s%s", warned ? ", " : "", name);
        warned++;
    }
    if (!warned) return;
    fprintf(out,
            "%sWARNING: other processes used the disk during %s %s (up to %.0f %% of the disk's "
            "bytes were not appsim's; device_io.warning of each point in the result), so %s "
            "figures are not this run's alone\n",
            indent, warned > 1 ? "points" : "point", names, worst * 100,
            warned > 1 ? "those points'" : "that point's");
}
