/*
 * sim/result_steadiness.c: was the measured phase itself steady? The steady-state rule
 * (sim/steady.c, SNIA PTS) judges the warm-up's rounds under --warmup steady; here it
 * judges the measured phase after the fact, for every run: its intervals in five equal
 * parts, each part's rate its count over its seconds. A drive that changes speed while
 * it is measured (an SLC cache that fills, a cloud disk whose burst credit runs out, a
 * host cache that starts writing back) and a buffer pool still warming both show as a
 * phase that is not steady, and its averages then describe no single state of the
 * drive. The disk's read latency per part (when the intervals carry device_io) says
 * which of the two it was.
 */
#include "sim/sim_internal.h"

#include <math.h>
#include <string.h>

/* Each part needs a few intervals, or one slow interval decides the verdict. */
#define MIN_INTERVALS_PER_PART 2

json_t *sim_result_steadiness_json(const json_t *intervals, const char *unit)
{
    const sim_steady_rule rule = SIM_STEADY_RULE_PTS;
    const int parts = rule.window;
    size_t n = 0, i;
    const json_t *iv;
    json_array_foreach(intervals, i, iv)
    {
        const char *phase = json_string_value(json_object_get(iv, "phase"));
        if (phase && !strcmp(phase, "measure")) n++;
    }
    if (n < (size_t)parts * MIN_INTERVALS_PER_PART) return NULL;

    double count[parts], seconds[parts], reads[parts], read_us[parts];
    memset(count, 0, sizeof count);
    memset(seconds, 0, sizeof seconds);
    memset(reads, 0, sizeof reads);
    memset(read_us, 0, sizeof read_us);
    size_t k = 0;
    json_array_foreach(intervals, i, iv)
    {
        const char *phase = json_string_value(json_object_get(iv, "phase"));
        if (!phase || strcmp(phase, "measure")) continue;
        int p = (int)(k++ * (size_t)parts / n); /* parts of equal numbers of intervals */
        count[p] += sim_json_num(iv, "count");
        seconds[p] += sim_json_num(iv, "seconds");
        const json_t *dev = json_object_get(iv, "device_io");
        double r = sim_json_num(dev, "reads");
        reads[p] += r;
        read_us[p] += r * sim_json_num(dev, "read_latency_avg_us"); /* weighted by reads */
    }
    double rates[parts];
    json_t *jrates = json_array(), *jlat = json_array();
    for (int p = 0; p < parts; p++) {
        if (seconds[p] <= 0) {
            json_decref(jrates);
            json_decref(jlat);
            return NULL;
        }
        rates[p] = count[p] / seconds[p];
        json_array_append_new(jrates, json_real(rates[p]));
        json_array_append_new(jlat, reads[p] > 0 ? json_real(read_us[p] / reads[p]) : json_null());
    }
    sim_steady_eval ev = sim_steady_judge(rates, (size_t)parts, &rule);
    return json_pack(
        "{s:s, s:i, s:f, s:f, s:s, s:o, s:f, s:f, s:f, s:b, s:o}", "rule",
        "SNIA PTS on the measured phase in equal parts: max - min <= max_range x mean and the "
        "least-squares line changes by <= max_slope x mean",
        "parts", parts, "max_range", rule.max_range, "max_slope", rule.max_slope, "unit",
        unit ? unit : "ops", "rates", jrates, "mean", ev.mean, "range_pct",
        ev.mean > 0 ? 100 * ev.range / ev.mean : 0.0, "slope_pct",
        ev.mean > 0 ? 100 * ev.slope_change / ev.mean : 0.0, "steady", ev.steady,
        "device_read_latency_us", jlat);
}

void sim_result_print_steadiness(FILE *out, const json_t *doc)
{
    const json_t *ms = json_object_get(doc, "measure_steadiness");
    if (!json_is_object(ms)) return;
    bool steady = json_is_true(json_object_get(ms, "steady"));
    const char *unit = json_string_value(json_object_get(ms, "unit"));
    fprintf(out, "  %smeasured phase %s: %s by fifths",
            steady ? "" : "WARNING: ", steady ? "steady" : "NOT steady", unit ? unit : "rate");
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(ms, "rates"), i, v)
    {
        double rate = json_number_value(v); /* whole numbers, three digits below 100 */
        fprintf(out, rate >= 100 ? " %.0f" : " %.3g", rate);
    }
    fprintf(out, " (range %.0f %%, drift %.0f %% of the mean; the rule allows %.0f %% and %.0f %%)",
            sim_json_num(ms, "range_pct"), sim_json_num(ms, "slope_pct"),
            100 * sim_json_num(ms, "max_range"), 100 * sim_json_num(ms, "max_slope"));
    if (steady) {
        fputc('\n', out);
        return;
    }
    const json_t *lat = json_object_get(ms, "device_read_latency_us");
    if (json_is_number(json_array_get(lat, 0))) {
        fprintf(out, "; device read latency by fifths (ms)");
        json_array_foreach(lat, i, v)
        {
            if (json_is_number(v))
                fprintf(out, " %.3f", json_number_value(v) / 1000);
            else
                fprintf(out, " -");
        }
    }
    fprintf(out, ".\n  The figures average more than one state of the drive or its caches: "
                 "measure longer, after a longer --warmup (or --warmup steady), on a "
                 "preconditioned target.\n");
}
