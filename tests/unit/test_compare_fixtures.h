/*
 * tests/unit/test_compare_fixtures.h: result files with known contents for the compare,
 * report and suite tests. Histograms are real sim_hist histograms filled with the given
 * samples, so merged percentiles can be checked against the histogram of the union.
 */
#ifndef TEST_COMPARE_FIXTURES_H
#define TEST_COMPARE_FIXTURES_H

#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct fx_run {
    const char *workload; /* "tpcc" */
    const char *model;    /* target.model, or NULL for no target section */
    const char *serial;
    const char *path; /* target.path */
    int scale;        /* config.scale */
    double duration;  /* config.duration (soft) */
    double seconds;   /* measured seconds */
    uint64_t base_ns; /* samples: base_ns + i * step_ns, i < n */
    uint64_t step_ns;
    uint64_t n;
    bool histograms; /* write the histograms section */
    bool interrupted;
    int intervals;    /* number of interval entries */
    int curve_points; /* > 0: a "curve" with that many points */
} fx_run;

/* cmocka 1.1 has no floating-point assertion; this one prints both values. */
#define assert_double_equal(a, b, eps)                                                             \
    do {                                                                                           \
        double fx_a_ = (a), fx_b_ = (b);                                                           \
        if (!(fabs(fx_a_ - fx_b_) <= (eps))) {                                                     \
            print_error("%s = %.10g, expected %.10g (+-%g)\n", #a, fx_a_, fx_b_, (double)(eps));   \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

static inline sim_hist *fx_hist(const fx_run *r)
{
    sim_hist *h = sim_hist_new();
    for (uint64_t i = 0; i < r->n; i++)
        sim_hist_record(h, r->base_ns + i * r->step_ns);
    return h;
}

static inline json_t *fx_doc(const fx_run *r)
{
    sim_hist *h = fx_hist(r);
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("appsim-result/1"));
    json_object_set_new(doc, "tool", json_pack("{s:s,s:s}", "name", "appsim", "version", "t"));
    json_object_set_new(doc, "command", json_string("appsim test"));
    json_object_set_new(doc, "workload", json_string(r->workload));
    json_object_set_new(doc, "config",
                        json_pack("{s:i,s:f,s:s,s:i}", "scale", r->scale, "duration", r->duration,
                                  "target", r->path ? r->path : "/x", "seed", 7));
    if (r->model)
        json_object_set_new(doc, "target",
                            json_pack("{s:s,s:s,s:s}", "path", r->path ? r->path : "/x", "model",
                                      r->model, "serial", r->serial ? r->serial : "S0"));
    json_object_set_new(doc, "started_at", json_string("2026-11-29T19:00:00Z"));
    json_object_set_new(doc, "interrupted", json_boolean(r->interrupted));
    double rate = (double)r->n / r->seconds;
    json_t *s = json_pack("{s:s,s:f,s:I,s:I,s:f,s:o}", "unit", "tps", "tps", rate, "count",
                          (json_int_t)r->n, "errors", (json_int_t)0, "seconds", r->seconds,
                          "latency_us", sim_hist_summary_json(h));
    json_object_set_new(doc, "summary", s);
    json_object_set_new(doc, "per_type",
                        json_pack("{s:{s:I,s:I,s:f,s:o}}", "new_order", "count", (json_int_t)r->n,
                                  "errors", (json_int_t)0, "rate", rate, "latency_us",
                                  sim_hist_summary_json(h)));
    if (r->histograms)
        json_object_set_new(
            doc, "histograms",
            json_pack("{s:o,s:o}", "all", sim_hist_to_json(h), "new_order", sim_hist_to_json(h)));
    if (r->intervals) {
        json_t *iv = json_array();
        for (int i = 0; i < r->intervals; i++)
            json_array_append_new(iv, json_pack("{s:f,s:s,s:f,s:{s:f}}", "t", (double)(i + 1) * 10,
                                                "phase", i == 0 ? "warmup" : "measure", "rate",
                                                rate + i, "latency_us", "p99_us",
                                                (double)sim_hist_percentile(h, 99) / 1e3 + i));
        json_object_set_new(doc, "intervals", iv);
    }
    if (r->curve_points) {
        json_t *cv = json_array();
        for (int i = 0; i < r->curve_points; i++) {
            double iops = rate * (i + 1) / r->curve_points;
            json_array_append_new(cv, json_pack("{s:f,s:f,s:{s:f,s:f}}", "target_rate", iops,
                                                "iops", iops, "latency_us", "mean_us",
                                                100.0 + 50 * i, "p99_us", 300.0 + 100 * i));
        }
        json_object_set_new(doc, "curve", cv);
    }
    sim_hist_free(h);
    return doc;
}

static inline void fx_write(const fx_run *r, const char *path)
{
    json_t *doc = fx_doc(r);
    if (json_dump_file(doc, path, JSON_COMPACT)) {
        fprintf(stderr, "cannot write %s\n", path);
        abort();
    }
    json_decref(doc);
}

static inline void fx_tmpdir(char *dir, size_t len, const char *tag)
{
    snprintf(dir, len, "/tmp/appsim-%s-XXXXXX", tag);
    if (!mkdtemp(dir)) abort();
}

static inline void fx_rmdir(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) fprintf(stderr, "cannot remove %s\n", dir);
}

#endif
