/*
 * trace/replay/replay_curve.c: the rate curve (vdbench's "curve" run). Point 0 replays the
 * trace as fast as possible at the given queue depth to find the maximum rate; each
 * further point replays it at a fixed fraction of that maximum with exponential
 * (Poisson) arrivals, its own warm-up and its own measured interval, the source
 * rewound and looped as needed. Points past 100 % show what happens beyond the
 * measured maximum: queueing, so latency climbs while IOPS stays flat.
 */
#include "trace/replay/replay_internal.h"

#include <stdlib.h>
#include <string.h>

static const double default_fractions[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6,
                                           0.7, 0.8, 0.9, 1.0, 1.1, 1.2};

static json_t *dir_json(const sim_run *run, int type, int counter, double secs)
{
    sim_hist *h = sim_run_merged_hist(run, type, -1);
    uint64_t n = sim_hist_count(h);
    double bytes = (double)sim_run_counter(run, counter, -1);
    json_t *j = json_pack(
        "{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I}", "count", (json_int_t)n, "iops",
        secs > 0 ? n / secs : 0.0, "mbps", secs > 0 ? bytes / secs / 1e6 : 0.0, "mean_us",
        sim_hist_mean(h) / 1e3, "p50_us", sim_hist_percentile(h, 50) / 1e3, "p99_us",
        sim_hist_percentile(h, 99) / 1e3, "p999_us", sim_hist_percentile(h, 99.9) / 1e3, "max_us",
        sim_hist_max(h) / 1e3, "errors", (json_int_t)sim_run_errors(run, type, -1));
    sim_hist_free(h);
    return j;
}

/* One point: a fresh run, replayed, summarised. */
static int point(tr_source *src, st_target *t, const tr_replay_opts *o, const tr_curve_opts *c,
                 double fraction, double target, json_t **out, double *iops, char *err,
                 size_t errlen)
{
    sim_run_config cfg;
    tr_replay_run_config(&cfg);
    cfg.warmup_ns = c->warmup_ns;
    cfg.duration_ns = c->measure_ns;
    cfg.report_interval_ns = c->report_interval_ns;
    cfg.quiet = c->quiet || !c->report_interval_ns;
    sim_run *run = sim_run_new(&cfg);
    sim_run_add_probe(run, &st_device_io_probe, t);
    json_t *stats = NULL;
    int rc = tr_replay(run, src, t, o, &stats, err, errlen);
    if (rc) {
        sim_run_free(run);
        return rc;
    }
    /* This rank's rate sets its next points' targets; from the run's section on, the
     * figures are the job's (summed over the ranks under mpirun, docs/mpi.md). */
    double secs = sim_run_measured_seconds(run);
    *iops = secs > 0 ? sim_run_count(run, -1, -1) / secs : 0;
    json_t *off = json_object_get(stats, "offered_in_measure");
    double offered = sim_ranks_total(off && secs > 0 ? json_integer_value(off) / secs : 0.0);
    double target_iops = sim_ranks_total(target);
    json_t *runj = json_object();
    sim_result_put_run(runj, NULL, run);
    secs = sim_run_measured_seconds(run);
    double job_iops = secs > 0 ? sim_run_count(run, -1, -1) / secs : 0;
    double bytes = (double)(sim_run_counter(run, 0, -1) + sim_run_counter(run, 1, -1));
    sim_hist *all = sim_run_merged_hist(run, -1, -1);
    json_t *p = json_pack(
        "{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:o, s:o}", "fraction", fraction,
        "target_iops", target_iops, "iops", job_iops, "mbps", secs > 0 ? bytes / secs / 1e6 : 0.0,
        "mean_us", sim_hist_mean(all) / 1e3, "p50_us", sim_hist_percentile(all, 50) / 1e3, "p99_us",
        sim_hist_percentile(all, 99) / 1e3, "p999_us", sim_hist_percentile(all, 99.9) / 1e3,
        "max_us", sim_hist_max(all) / 1e3, "seconds", secs, "read", dir_json(run, 0, 0, secs),
        "write", dir_json(run, 1, 1, secs));
    sim_hist_free(all);
    json_object_set(p, "lag_us", json_object_get(stats, "submission_lag_us"));
    if (off && secs > 0) {
        json_object_set_new(p, "offered_iops", json_real(offered));
        /* Saturated: the drive completed less than what arrived, so a queue built up
         * and the point's rate is the drive's, not the one asked for. */
        json_object_set_new(p, "saturated", json_boolean(job_iops < TR_CURVE_KEPT_UP * offered));
    }
    json_object_set_new(p, "replay", stats);
    json_object_set_new(p, "run", runj);
    json_object_set_new(p, "interrupted", json_boolean(sim_run_interrupted(run)));
    sim_run_free(run);
    *out = p;
    return SIM_EXIT_OK;
}

/* vdbench's peak: the highest rate a controlled point achieved while keeping up with
 * its arrivals; the maximum-rate run only when no point kept up. */
static json_t *peak_json(const json_t *points)
{
    size_t best = 0, i;
    double best_iops = -1;
    const json_t *p;
    json_array_foreach(points, i, p)
    {
        double v = json_real_value(json_object_get(p, "iops"));
        if (i > 0 && !json_is_true(json_object_get(p, "saturated")) && v > best_iops) {
            best = i;
            best_iops = v;
        }
    }
    p = json_array_get(points, best);
    return json_pack("{s:I, s:f, s:f, s:f, s:f, s:b}", "point", (json_int_t)best, "fraction",
                     json_real_value(json_object_get(p, "fraction")), "iops",
                     json_real_value(json_object_get(p, "iops")), "mean_us",
                     json_real_value(json_object_get(p, "mean_us")), "p99_us",
                     json_real_value(json_object_get(p, "p99_us")), "max_rate_run", best == 0);
}

int tr_replay_curve(tr_source *src, st_target *t, const tr_replay_opts *o, const tr_curve_opts *c,
                    json_t **curve, char *err, size_t errlen)
{
    tr_curve_opts co = *c;
    if (!co.fractions || co.nfractions <= 0) {
        co.fractions = default_fractions;
        co.nfractions = (int)(sizeof default_fractions / sizeof *default_fractions);
    }
    if (!co.measure_ns) {
        snprintf(err, errlen, "each curve point needs a measured interval");
        return SIM_EXIT_USAGE;
    }
    tr_scan scan;
    int rc;
    if (o->scan)
        scan = *o->scan;
    else if ((rc = tr_scan_source(src, &scan, err, errlen)))
        return rc;
    tr_replay_opts po = *o;
    po.scan = &scan;
    po.loops = 0;
    po.duration_ns = 0; /* the point's run duration loops the source */
    json_t *points = json_array();
    json_t *doc = json_pack("{s:f, s:f, s:b}", "warmup_s", co.warmup_ns / 1e9, "measure_s",
                            co.measure_ns / 1e9, "exponential", !o->uniform);
    json_object_set_new(doc, "points", points);
    /* Point 0: the maximum rate. */
    po.timing = TR_TIMING_AFAP;
    po.timely_wakeups = true;
    json_t *p;
    double max_iops = 0, got;
    if (!c->quiet) sim_info("curve: measuring the maximum rate (qd %u)", o->qd);
    rc = point(src, t, &po, &co, 0, 0, &p, &max_iops, err, errlen);
    if (rc) goto fail;
    json_object_set_new(p, "max_rate_run", json_true());
    json_array_append_new(points, p);
    json_object_set_new(doc, "max_iops", json_real(max_iops));
    if (max_iops <= 0) {
        snprintf(err, errlen, "the maximum-rate run completed no I/O");
        rc = SIM_EXIT_FAIL;
        goto fail;
    }
    po.timing = TR_TIMING_RATE;
    for (int i = 0; i < co.nfractions && !sim_interrupted() && !sim_fault_noted(); i++) {
        po.rate = co.fractions[i] * max_iops;
        po.seed = o->seed + (uint64_t)i + 1;
        if (!c->quiet)
            sim_info("curve: %.0f %% of the maximum, %.0f IOPS", co.fractions[i] * 100, po.rate);
        rc = point(src, t, &po, &co, co.fractions[i], po.rate, &p, &got, err, errlen);
        if (rc) goto fail;
        json_array_append_new(points, p);
    }
    json_object_set_new(doc, "peak", peak_json(points));
    if (!o->scan) tr_scan_free(&scan);
    *curve = doc;
    return SIM_EXIT_OK;
fail:
    if (!o->scan) tr_scan_free(&scan);
    json_decref(doc);
    return rc;
}

int tr_curve_parse_points(const char *s, double *out, int max)
{
    int n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        double v;
        if (n == max || sim_parse_double(t, &v) || v <= 0 || v > 1000) return -1;
        out[n++] = v / 100.0;
    }
    return n > 0 ? n : -1;
}
