/*
 * sim/result_ranks.c: one result for a job of several ranks (docs/mpi.md). Each rank's
 * own section of a run (host, target and drive identity, summary, per type, its
 * histogram, device counters, when its measured phase started and stopped) is gathered
 * on rank 0; the histograms, errors and counters are summed bucket by bucket over the
 * ranks (sim_run_sum_ranks), so every percentile of the job is exact; the rate is the
 * sum of the ranks' rates; the interval series, which every rank starts again at its
 * measured phase, is summed interval by interval within each phase.
 */
#include "sim/sim_internal.h"

#include <math.h>
#include <string.h>
#include <time.h>

static json_t *utc(double unix_s)
{
    if (unix_s <= 0) return json_null();
    time_t t = (time_t)unix_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    char buf[64], out[80];
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, sizeof out, "%s.%06dZ", buf, (int)((unix_s - (double)t) * 1e6));
    return json_string(out);
}

json_t *sim_result_measure_json(const sim_run *r)
{
    double from, to;
    sim_run_measure_times(r, &from, &to);
    /* Nanoseconds as integers: a double printed to 10 digits would lose the spread. */
    return json_pack("{s:o, s:o, s:I, s:I}", "start", utc(from), "stop", utc(to), "start_unix_ns",
                     (json_int_t)(from * 1e9), "stop_unix_ns", (json_int_t)(to * 1e9));
}

/* This rank's histogram per type (its per-type percentiles, exactly), warm-up and
 * instances, as a run of one process has them. */
static void own_detail(json_t *me, const sim_run *r)
{
    const sim_run_config *c = sim_run_cfg(r);
    json_object_set_new(me, "histograms", sim_result_type_hists_json(r, false));
    json_object_set_new(me, "warmup", sim_result_warmup_json(r));
    if (c->instances > 1) json_object_set_new(me, "instances", sim_result_instances_json(r));
}

/* This rank's own section of run r. */
static json_t *own_section(const json_t *doc, const sim_run *r)
{
    json_t *me = json_object();
    json_object_set_new(me, "rank", json_integer(sim_ranks_rank()));
    json_object_set_new(me, "hostname", json_string(sim_ranks_host()));
    json_object_set(me, "host", json_object_get(doc, "host"));
    json_t *target = json_object_get(doc, "target");
    json_object_set_new(me, "target", target ? json_deep_copy(target) : json_null());
    json_object_set_new(me, "interrupted", json_boolean(sim_run_interrupted(r)));
    const char *stopped = sim_run_stopped_by(r);
    json_object_set_new(me, "stopped_by", stopped ? json_string(stopped) : json_null());
    json_object_set_new(me, "failed", json_boolean(sim_run_failed(r)));
    if (sim_run_failed(r)) json_object_set_new(me, "failure", sim_fault_json());
    json_object_set_new(me, "measure", sim_result_measure_json(r));
    json_object_set_new(me, "summary", sim_result_summary_json(r, -1));
    json_object_set_new(me, "per_type", sim_result_per_type_json(r, -1));
    sim_hist *all = sim_run_merged_hist(r, -1, -1);
    json_object_set_new(me, "histogram", sim_hist_to_json(all));
    sim_hist_free(all);
    own_detail(me, r);
    for (int i = 0; i < sim_run_nprobes(r); i++) {
        const char *name;
        json_t *p = sim_run_probe_json(r, i, &name);
        json_object_set_new(me, name, p ? p : json_null());
    }
    json_object_set_new(me, "intervals", json_deep_copy(sim_run_intervals(r)));
    return me;
}

/* The interval histograms were kept only to be summed here. */
static void drop_interval_histograms(json_t *intervals)
{
    size_t i;
    json_t *iv;
    json_array_foreach(intervals, i, iv) json_object_del(iv, "histogram");
}

/* The k-th interval of `phase` in one rank's series, or NULL. */
static json_t *nth_interval(const json_t *series, const char *phase, size_t k)
{
    size_t i, seen = 0;
    json_t *iv;
    json_array_foreach((json_t *)series, i, iv)
    {
        if (strcmp(json_string_value(json_object_get(iv, "phase")) ?: "", phase)) continue;
        if (seen++ == k) return iv;
    }
    return NULL;
}

/* The k-th interval of `phase` summed over the ranks; NULL when no rank has one. */
static json_t *sum_interval(json_t *ranks, const char *phase, size_t k)
{
    json_t *out = NULL;
    sim_hist *h = sim_hist_new();
    double rate = 0, errs = 0;
    json_int_t count = 0;
    int contributing = 0;
    size_t i;
    json_t *rk;
    json_array_foreach(ranks, i, rk)
    {
        json_t *iv = nth_interval(json_object_get(rk, "intervals"), phase, k);
        if (!iv) continue;
        if (!out)
            out = json_pack("{s:O, s:O, s:s}", "t", json_object_get(iv, "t"), "seconds",
                            json_object_get(iv, "seconds"), "phase", phase);
        contributing++;
        rate += json_number_value(json_object_get(iv, "rate"));
        errs += json_number_value(json_object_get(iv, "errors_per_s"));
        count += json_integer_value(json_object_get(iv, "count"));
        sim_hist *one = sim_hist_from_json(json_object_get(iv, "histogram"), NULL, 0);
        if (one) sim_hist_merge(h, one);
        sim_hist_free(one);
    }
    if (out) {
        json_object_set_new(out, "rate", json_real(rate));
        json_object_set_new(out, "count", json_integer(count));
        json_object_set_new(out, "errors_per_s", json_real(errs));
        json_object_set_new(out, "latency_us", sim_hist_summary_json(h));
        json_object_set_new(out, "ranks", json_integer(contributing));
    }
    sim_hist_free(h);
    return out;
}

static json_t *sum_intervals(json_t *ranks)
{
    json_t *series = json_array();
    static const char *const phases[] = {"warmup", "measure"};
    for (int p = 0; p < 2; p++)
        for (size_t k = 0;; k++) {
            json_t *iv = sum_interval(ranks, phases[p], k);
            if (!iv) break;
            json_array_append_new(series, iv);
        }
    return series;
}

/* The job's measured seconds: such that count / seconds is the sum of the ranks'
 * rates (each rank's count over its own measured seconds). */
static double job_seconds(json_t *ranks)
{
    double rates = 0, secs = 0, count = 0;
    size_t i;
    json_t *rk;
    json_array_foreach(ranks, i, rk)
    {
        json_t *s = json_object_get(rk, "summary");
        double n = (double)json_integer_value(json_object_get(s, "count"));
        double sec = json_number_value(json_object_get(s, "seconds"));
        if (sec > 0) rates += n / sec;
        secs += sec;
        count += n;
    }
    return rates > 0 ? count / rates : secs / (double)(i ? i : 1);
}

/* Rank k's delta of probe `name`: of its measured phase (phase NULL), else of its
 * interval `k` of `phase`. */
static json_t *probe_section(json_t *rk, const char *name, const char *phase, size_t k)
{
    json_t *where = phase ? nth_interval(json_object_get(rk, "intervals"), phase, k) : rk;
    json_t *p = json_object_get(where, name);
    return json_is_object(p) ? p : NULL;
}

/* Lets each probe correct its ranks' figures for what they share (device_io: ranks on
 * one disk count each other's I/O as their own), over the measured phase and over each
 * interval. */
static void adjust_probes(const sim_run *r, json_t *ranks)
{
    size_t n = json_array_size(ranks);
    json_t **secs = sim_xcalloc(n ? n : 1, sizeof *secs);
    const char **hosts = sim_xcalloc(n ? n : 1, sizeof *hosts);
    for (size_t i = 0; i < n; i++)
        hosts[i] = json_string_value(json_object_get(json_array_get(ranks, i), "hostname"));
    static const char *const phases[] = {NULL, "warmup", "measure"};
    for (int p = 0; p < sim_run_nprobes(r); p++) {
        const sim_probe_ops *ops = sim_run_probe_ops(r, p);
        if (!ops->ranks_adjust) continue;
        for (int ph = 0; ph < 3; ph++)
            for (size_t k = 0;; k++) {
                bool any = false;
                for (size_t i = 0; i < n; i++) {
                    secs[i] = probe_section(json_array_get(ranks, i), ops->name, phases[ph], k);
                    any |= secs[i] != NULL;
                }
                if (!any) break;
                ops->ranks_adjust(secs, hosts, n);
                if (!phases[ph]) break;
            }
    }
    free(secs);
    free(hosts);
}

json_t *sim_result_merge_ranks(const json_t *doc, sim_run *r)
{
    json_t *me = own_section(doc, r);
    sim_run_sum_ranks(r);
    json_t *ranks = sim_ranks_gather(me);
    json_decref(me);
    drop_interval_histograms((json_t *)sim_run_intervals(r));
    if (!ranks) return NULL;
    adjust_probes(r, ranks);
    sim_run_adopt_merged(r, job_seconds(ranks), sum_intervals(ranks));
    size_t i;
    json_t *rk;
    json_array_foreach(ranks, i, rk) drop_interval_histograms(json_object_get(rk, "intervals"));
    return ranks;
}

/* max - min of a number over the ranks' sections, in ms. */
static double spread_ms(json_t *ranks, const char *key)
{
    double lo = INFINITY, hi = -INFINITY;
    size_t i;
    json_t *rk;
    json_array_foreach(ranks, i, rk)
    {
        double v = (double)json_integer_value(json_object_get(json_object_get(rk, "measure"), key));
        if (v <= 0) continue;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    return hi >= lo ? (hi - lo) / 1e6 : 0.0;
}

void sim_result_put_ranks(json_t *doc, json_t *dst, json_t *ranks)
{
    json_t *hosts = json_array();
    size_t i;
    json_t *rk;
    bool interrupted = false;
    json_array_foreach(ranks, i, rk)
    {
        const char *h = json_string_value(json_object_get(rk, "hostname"));
        bool seen = false;
        for (size_t j = 0; j < json_array_size(hosts); j++)
            seen |= !strcmp(json_string_value(json_array_get(hosts, j)), h ?: "");
        if (!seen) json_array_append_new(hosts, json_string(h ?: ""));
        interrupted |= json_is_true(json_object_get(rk, "interrupted"));
        if (json_is_null(json_object_get(dst, "stopped_by")) &&
            json_is_string(json_object_get(rk, "stopped_by")))
            json_object_set(dst, "stopped_by", json_object_get(rk, "stopped_by"));
        if (json_is_true(json_object_get(rk, "failed")) &&
            !json_is_true(json_object_get(dst, "failed"))) {
            json_t *f = json_deep_copy(json_object_get(rk, "failure"));
            if (json_is_object(f)) {
                json_object_set(f, "rank", json_object_get(rk, "rank"));
                json_object_set(f, "host", json_object_get(rk, "hostname"));
            }
            json_object_set_new(dst, "failed", json_true());
            json_object_set(dst, "failure", f);
            json_object_set_new(doc, "failed", json_true());
            json_object_set_new(doc, "failure", f);
        }
    }
    json_object_set_new(dst, "interrupted", json_boolean(interrupted));
    /* The disks' counters are each rank's (ranks may share a disk): in "ranks" only. */
    json_object_set_new(dst, "mpi",
                        json_pack("{s:i, s:o, s:f, s:f, s:s}", "ranks", (int)json_array_size(ranks),
                                  "hosts", hosts, "measure_start_spread_ms",
                                  spread_ms(ranks, "start_unix_ns"), "measure_stop_spread_ms",
                                  spread_ms(ranks, "stop_unix_ns"), "rate",
                                  "sum of the ranks' rates; latency from the ranks' histograms "
                                  "summed bucket by bucket"));
    json_object_set_new(dst, "ranks", ranks);
}

const json_t *sim_result_put_rank_detail(json_t *doc, const char *key, const json_t *mine)
{
    if (sim_ranks_size() < 2) return NULL;
    json_t *all = sim_ranks_gather(mine ? mine : json_null());
    if (!all) return NULL;
    json_t *ranks = json_object_get(doc, "ranks");
    size_t i;
    json_t *one;
    json_array_foreach(all, i, one)
    {
        json_t *rk = json_array_get(ranks, i);
        if (json_is_object(rk)) json_object_set(rk, key, one);
    }
    json_decref(all);
    return json_is_array(ranks) ? ranks : NULL;
}
