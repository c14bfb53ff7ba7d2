/*
 * `appsim compare` on result files with known contents: ranks, percentages of the best,
 * refusal to rank incomparable configurations, combination of repeated runs (merged
 * percentiles equal the percentile of the union), curves, refusal of non-results, the
 * four output formats, and other processes' share of the disk's I/O with its warning.
 */
#include "sim/review/review_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "test_compare_fixtures.h"

static char dir[256];

static int setup(void **state)
{
    fx_tmpdir(dir, sizeof dir, "cmp");
    return 0;
}

static int teardown(void **state)
{
    fx_rmdir(dir);
    return 0;
}

static char *file(const char *name)
{
    static char bufs[16][512];
    static int k;
    char *b = bufs[k++ % 16];
    snprintf(b, 512, "%s/%s", dir, name);
    return b;
}

static fx_run base(const char *model, uint64_t n, double seconds, uint64_t base_ns)
{
    return (fx_run){.workload = "tpcc",
                    .model = model,
                    .path = "/mnt/x",
                    .scale = 10,
                    .duration = 60,
                    .seconds = seconds,
                    .base_ns = base_ns,
                    .step_ns = 1000,
                    .n = n,
                    .histograms = true};
}

static const cmp_metric *metric(const cmp_group *g, const char *id)
{
    for (int i = 0; i < g->nmetrics; i++)
        if (!strcmp(g->metrics[i].id, id)) return &g->metrics[i];
    return NULL;
}

static int entry_of(const cmp_group *g, const char *label)
{
    for (int e = 0; e < g->nentries; e++)
        if (!strcmp(g->entries[e].label, label)) return e;
    return -1;
}

static void test_ranks_and_percentages(void **state)
{
    fx_run a = base("DriveA", 1000, 10, 100000);
    fx_run b = base("DriveB", 500, 10, 100000);
    fx_run c = base("DriveC", 800, 10, 100000);
    a.serial = "A1", b.serial = "B1", c.serial = "C1";
    fx_write(&a, file("a.json"));
    fx_write(&b, file("b.json"));
    fx_write(&c, file("c.json"));
    char *paths[] = {file("b.json"), file("a.json"), file("c.json")};
    cmp_set set;
    char err[512];
    assert_int_equal(cmp_build(&set, paths, 3, NULL, 0, err, sizeof err), 0);
    assert_int_equal(set.ngroups, 1);
    const cmp_group *g = &set.groups[0];
    assert_int_equal(g->nentries, 3);
    /* Columns in rank order: A (100 tps), C (80), B (50). */
    assert_string_equal(g->entries[0].label, "DriveA");
    assert_string_equal(g->entries[1].label, "DriveC");
    assert_string_equal(g->entries[2].label, "DriveB");
    for (int e = 0; e < 3; e++)
        assert_int_equal(g->entries[e].rank, e + 1);
    const cmp_metric *rate = metric(g, "rate");
    assert_non_null(rate);
    assert_true(rate->cells[0].best);
    assert_false(rate->cells[1].best);
    assert_double_equal(rate->cells[0].value, 100.0, 1e-9);
    assert_double_equal(rate->cells[1].pct, 80.0, 1e-9);
    assert_double_equal(rate->cells[2].pct, 50.0, 1e-9);
    /* Same latencies: all are best on latency, 100 %. */
    const cmp_metric *p99 = metric(g, "lat.p99");
    assert_non_null(p99);
    assert_true(p99->cells[2].best);
    assert_null(g->note);
    cmp_set_free(&set);
}

static void test_latency_breaks_ties(void **state)
{
    /* Equal throughput (as with paced TPC-C): the lower p99 ranks first. */
    fx_run slow = base("Slow", 1000, 10, 900000);
    fx_run fast = base("Fast", 1002, 10, 100000);
    slow.serial = "S", fast.serial = "F";
    fx_write(&slow, file("slow.json"));
    fx_write(&fast, file("fast.json"));
    char *paths[] = {file("fast.json"), file("slow.json")};
    cmp_set set;
    char err[512];
    assert_int_equal(cmp_build(&set, paths, 2, NULL, 0, err, sizeof err), 0);
    const cmp_group *g = &set.groups[0];
    assert_string_equal(g->entries[0].label, "Fast");
    assert_int_equal(g->entries[0].rank, 1);
    const cmp_metric *mean = metric(g, "lat.mean");
    assert_true(mean->cells[0].best);
    /* Slow mean = 900 us + 499.5 us; fast mean = 100 us + 500.5 us. */
    double sm = 900 + 999 * 0.5, fm = 100 + 1001 * 0.5;
    assert_double_equal(mean->cells[1].value, sm, sm * 1e-3);
    assert_double_equal(mean->cells[1].pct, 100 * sm / fm, 0.5);
    cmp_set_free(&set);
}

static void test_incomparable_configs_not_ranked(void **state)
{
    fx_run a = base("DriveA", 1000, 10, 100000);
    fx_run b = base("DriveB", 500, 10, 100000);
    a.serial = "A1", b.serial = "B1";
    b.scale = 100;
    fx_run c = base("DriveC", 700, 10, 100000);
    c.serial = "C1";
    c.duration = 120; /* soft difference: ranked, with a note */
    fx_write(&a, file("a.json"));
    fx_write(&b, file("b.json"));
    fx_write(&c, file("c.json"));
    char *paths[] = {file("a.json"), file("b.json"), file("c.json")};
    cmp_set set;
    char err[512];
    assert_int_equal(cmp_build(&set, paths, 3, NULL, 0, err, sizeof err), 0);
    assert_int_equal(set.ngroups, 2);
    assert_int_equal(set.groups[0].nentries, 2); /* A and C */
    assert_int_equal(set.groups[1].nentries, 1); /* B alone */
    assert_null(set.groups[0].note);
    assert_non_null(set.groups[1].note);
    assert_non_null(strstr(set.groups[1].note, "scale 10 vs 100"));
    assert_non_null(set.groups[0].soft_note);
    assert_non_null(strstr(set.groups[0].soft_note, "duration"));
    cmp_set_free(&set);

    /* Different workloads are separate tables without any note. */
    fx_run d = base("DriveA", 1000, 10, 100000);
    d.workload = "sysbench";
    fx_write(&d, file("d.json"));
    char *p2[] = {file("a.json"), file("d.json")};
    assert_int_equal(cmp_build(&set, p2, 2, NULL, 0, err, sizeof err), 0);
    assert_int_equal(set.ngroups, 2);
    assert_null(set.groups[1].note);
    cmp_set_free(&set);
}

static void test_repeated_runs_merge_histograms(void **state)
{
    fx_run r1 = base("DriveA", 3000, 10, 50000);
    fx_run r2 = base("DriveA", 1000, 20, 2000000);
    r2.step_ns = 7919;
    fx_run other = base("DriveB", 1000, 10, 100000);
    other.serial = "B";
    fx_write(&r1, file("r1.json"));
    fx_write(&r2, file("r2.json"));
    fx_write(&other, file("o.json"));
    char *paths[] = {file("r1.json"), file("o.json"), file("r2.json")};
    cmp_set set;
    char err[512];
    assert_int_equal(cmp_build(&set, paths, 3, NULL, 0, err, sizeof err), 0);
    const cmp_group *g = &set.groups[0];
    assert_int_equal(g->nentries, 2);
    int a = entry_of(g, "DriveA");
    assert_true(a >= 0);
    assert_int_equal(g->entries[a].nruns, 2);

    sim_hist *u = fx_hist(&r1), *h2 = fx_hist(&r2);
    sim_hist_merge(u, h2);
    const char *ids[] = {"lat.p50", "lat.p95", "lat.p99", "lat.p99.9"};
    const double pcts[] = {50, 95, 99, 99.9};
    for (int i = 0; i < 4; i++) {
        const cmp_metric *m = metric(g, ids[i]);
        assert_non_null(m);
        double want = (double)sim_hist_percentile(u, pcts[i]) / 1e3;
        assert_double_equal(m->cells[a].value, want, 1e-9);
    }
    assert_double_equal(metric(g, "lat.mean")->cells[a].value, sim_hist_mean(u) / 1e3, 1e-6);
    /* Averaging the runs' p99s would give a different figure: the test can tell. */
    sim_hist *h1 = fx_hist(&r1);
    double avg = (sim_hist_percentile(h1, 99) + sim_hist_percentile(h2, 99)) / 2e3;
    assert_true(fabs(avg - metric(g, "lat.p99")->cells[a].value) > 10);
    sim_hist_free(h1);
    sim_hist_free(h2);
    sim_hist_free(u);

    /* Throughput: total count over total seconds; spread = the runs' own rates. */
    const cmp_metric *rate = metric(g, "rate");
    assert_double_equal(rate->cells[a].value, 4000.0 / 30.0, 1e-9);
    assert_double_equal(rate->cells[a].min, 50.0, 1e-9);
    assert_double_equal(rate->cells[a].max, 300.0, 1e-9);
    assert_int_equal(rate->cells[a].nruns, 2);
    cmp_set_free(&set);
}

static void test_runs_without_histograms(void **state)
{
    fx_run r1 = base("DriveA", 1000, 10, 50000);
    fx_run r2 = base("DriveA", 1000, 10, 80000);
    r1.histograms = r2.histograms = false;
    fx_write(&r1, file("n1.json"));
    fx_write(&r2, file("n2.json"));
    char *paths[] = {file("n1.json"), file("n2.json")};
    cmp_set set;
    char err[512];
    assert_int_equal(cmp_build(&set, paths, 2, NULL, 0, err, sizeof err), 0);
    const cmp_group *g = &set.groups[0];
    assert_int_equal(g->nentries, 1);
    /* The mean is exact (count-weighted); percentiles are not invented. */
    assert_true(metric(g, "lat.mean")->cells[0].have);
    assert_double_equal(metric(g, "lat.mean")->cells[0].value, (50 + 80) / 2.0 + 499.5, 0.5);
    assert_null(metric(g, "lat.p99"));
    assert_non_null(g->warnings);
    assert_non_null(strstr(g->warnings, "histograms"));
    cmp_set_free(&set);

    /* One run without histograms: its summary's percentiles are used. */
    char *one[] = {file("n1.json")};
    assert_int_equal(cmp_build(&set, one, 1, NULL, 0, err, sizeof err), 0);
    assert_true(metric(&set.groups[0], "lat.p99")->cells[0].have);
    cmp_set_free(&set);
}

/* A transaction type that never ran has a rate of 0 and no latency rows (a latency of 0
 * would look like the best). */
static void test_type_without_samples(void **state)
{
    for (int k = 0; k < 2; k++) {
        fx_run a = base("DriveA", 100, 10, 100000);
        a.histograms = k == 0;
        json_t *doc = fx_doc(&a);
        sim_hist *empty = sim_hist_new();
        json_object_set_new(json_object_get(doc, "per_type"), "delivery",
                            json_pack("{s:i,s:i,s:f,s:o}", "count", 0, "errors", 0, "rate", 0.0,
                                      "latency_us", sim_hist_summary_json(empty)));
        if (a.histograms)
            json_object_set_new(json_object_get(doc, "histograms"), "delivery",
                                sim_hist_to_json(empty));
        sim_hist_free(empty);
        assert_int_equal(json_dump_file(doc, file("z.json"), 0), 0);
        json_decref(doc);
        char *paths[] = {file("z.json")};
        cmp_set set;
        char err[512];
        assert_int_equal(cmp_build(&set, paths, 1, NULL, 0, err, sizeof err), 0);
        const cmp_group *g = &set.groups[0];
        assert_non_null(metric(g, "type.delivery.rate"));
        assert_null(metric(g, "type.delivery.lat.mean"));
        assert_null(metric(g, "type.delivery.lat.p99"));
        assert_non_null(metric(g, "type.new_order.lat.p99"));
        cmp_set_free(&set);
    }
}

static void test_labels_and_identity(void **state)
{
    fx_run a = base("Same Model", 1000, 10, 100000);
    fx_run b = base("Same Model", 900, 10, 100000);
    a.serial = "SER-A", b.serial = "SER-B";
    fx_run none = base(NULL, 800, 10, 100000);
    fx_write(&a, file("a.json"));
    fx_write(&b, file("b.json"));
    fx_write(&none, file("plain-run.json"));
    char *paths[] = {file("a.json"), file("b.json"), file("plain-run.json")};
    cmp_set set;
    char err[512];
    assert_int_equal(cmp_build(&set, paths, 3, NULL, 0, err, sizeof err), 0);
    const cmp_group *g = &set.groups[0];
    assert_int_equal(g->nentries, 3);
    assert_true(entry_of(g, "Same Model [SER-A]") >= 0);
    assert_true(entry_of(g, "Same Model [SER-B]") >= 0);
    assert_true(entry_of(g, "plain-run") >= 0);
    cmp_set_free(&set);

    /* --label: the same label makes two files runs of one drive. */
    char *labels[] = {"X", "X", "Y"};
    assert_int_equal(cmp_build(&set, paths, 3, labels, 3, err, sizeof err), 0);
    assert_int_equal(set.groups[0].nentries, 2);
    assert_int_equal(set.groups[0].entries[0].nruns + set.groups[0].entries[1].nruns, 3);
    cmp_set_free(&set);
}

static void test_curves_peak(void **state)
{
    fx_run a = base("DriveA", 1000, 10, 100000);
    fx_run b = base("DriveB", 2000, 10, 100000);
    a.serial = "A", b.serial = "B";
    a.curve_points = b.curve_points = 4;
    a.workload = b.workload = "replay";
    fx_write(&a, file("ca.json"));
    fx_write(&b, file("cb.json"));
    char *paths[] = {file("ca.json"), file("cb.json")};
    cmp_set set;
    char err[512];
    assert_int_equal(cmp_build(&set, paths, 2, NULL, 0, err, sizeof err), 0);
    const cmp_group *g = &set.groups[0];
    const cmp_metric *peak = metric(g, "curve.curve.peak");
    assert_non_null(peak);
    int eb = entry_of(g, "DriveB");
    assert_double_equal(peak->cells[eb].value, 200.0, 1e-9);
    assert_true(peak->cells[eb].best);
    const cmp_metric *lat = metric(g, "curve.curve.lat.mean");
    assert_non_null(lat);
    assert_double_equal(lat->cells[eb].value, 250.0, 1e-9); /* the peak is the last point */
    cmp_set_free(&set);
}

/* The curve shapes the workloads write: replay --curve ({"curve": {"points": [...]}} with
 * each point's run and histograms) and vdi (an array of storms, each with a curve). */
static json_t *point(double iops, double mean, double p99, const sim_hist *h)
{
    json_t *p = json_pack("{s:f,s:f,s:f,s:f}", "fraction", iops / 1000, "iops", iops, "mean_us",
                          mean, "p99_us", p99);
    if (h)
        json_object_set_new(p, "run",
                            json_pack("{s:{s:I},s:{s:o}}", "summary", "count",
                                      (json_int_t)sim_hist_count(h), "histograms", "all",
                                      sim_hist_to_json(h)));
    return p;
}

static void write_curve_doc(const char *path, const char *wl, const char *model, json_t *body)
{
    json_t *doc =
        json_pack("{s:s,s:s,s:{s:i},s:{s:s,s:s}}", "schema", "appsim-result/1", "workload", wl,
                  "config", "qd", 32, "target", "model", model, "path", "/dev/x");
    json_object_update(doc, body);
    json_decref(body);
    assert_int_equal(json_dump_file(doc, path, 0), 0);
    json_decref(doc);
}

static void test_workload_curve_shapes(void **state)
{
    fx_run s1 = base("x", 500, 1, 20000), s2 = base("x", 700, 1, 60000);
    sim_hist *h1 = fx_hist(&s1), *h2 = fx_hist(&s2);
    write_curve_doc(file("r1.json"), "replay", "Fast",
                    json_pack("{s:{s:[o,o]}}", "curve", "points", point(1000, 40, 90, h1),
                              point(500, 30, 50, NULL)));
    write_curve_doc(file("r2.json"), "replay", "Fast",
                    json_pack("{s:{s:[o,o]}}", "curve", "points", point(1200, 80, 100, h2),
                              point(600, 30, 50, NULL)));
    write_curve_doc(file("r3.json"), "replay", "Slow",
                    json_pack("{s:{s:[o,o]}}", "curve", "points", point(300, 40, 90, NULL),
                              point(150, 30, 50, NULL)));
    char *paths[] = {file("r3.json"), file("r1.json"), file("r2.json")};
    cmp_set set;
    char err[512];
    assert_int_equal(cmp_build(&set, paths, 3, NULL, 0, err, sizeof err), 0);
    const cmp_group *g = &set.groups[0];
    assert_int_equal(g->nentries, 2);
    assert_string_equal(g->entries[0].label, "Fast"); /* ranked by peak IOPS */
    const cmp_metric *peak = metric(g, "curve.curve.peak");
    assert_non_null(peak);
    assert_double_equal(peak->cells[0].value, 1100, 1e-9); /* mean of the runs' peaks */
    assert_double_equal(peak->cells[0].min, 1000, 1e-9);
    assert_double_equal(peak->cells[0].max, 1200, 1e-9);
    /* Latency at the peak from the merged histograms of the two peak points. */
    sim_hist_merge(h1, h2);
    assert_double_equal(metric(g, "curve.curve.lat.p99")->cells[0].value,
                        (double)sim_hist_percentile(h1, 99) / 1e3, 1e-9);
    /* Without histograms, the point's own figures. */
    assert_double_equal(metric(g, "curve.curve.lat.p99")->cells[1].value, 90, 1e-9);
    cmp_set_free(&set);
    sim_hist_free(h1);
    sim_hist_free(h2);

    write_curve_doc(file("v1.json"), "vdi", "Fast",
                    json_pack("{s:[{s:s,s:s,s:{s:[o,o]}},{s:s,s:s,s:{s:[o]}}]}", "storms", "clones",
                              "full", "phase", "boot", "curve", "points",
                              point(2000, 100, 300, NULL), point(1000, 90, 200, NULL), "clones",
                              "linked", "phase", "boot", "curve", "points",
                              point(800, 150, 400, NULL)));
    char *vp[] = {file("v1.json")};
    assert_int_equal(cmp_build(&set, vp, 1, NULL, 0, err, sizeof err), 0);
    g = &set.groups[0];
    assert_non_null(metric(g, "curve.full/boot.peak"));
    assert_double_equal(metric(g, "curve.full/boot.peak")->cells[0].value, 2000, 1e-9);
    assert_double_equal(metric(g, "curve.linked/boot.peak")->cells[0].value, 800, 1e-9);
    assert_double_equal(metric(g, "curve.linked/boot.lat.mean")->cells[0].value, 150, 1e-9);
    cmp_set_free(&set);
}

static void expect_refused(const char *name, const char *content, const char *why)
{
    FILE *f = fopen(file(name), "w");
    fputs(content, f);
    fclose(f);
    char *paths[] = {file(name)};
    cmp_set set;
    char err[512] = "";
    assert_int_equal(cmp_build(&set, paths, 1, NULL, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, name));
    if (!strstr(err, why)) print_error("err: %s\n", err);
    assert_non_null(strstr(err, why));
    const sim_command *c = sim_find_command("compare");
    assert_non_null(c);
    char *argv[] = {"compare", file(name), NULL};
    assert_int_equal(c->main(2, argv), SIM_EXIT_USAGE);
}

static void test_refuses_non_results(void **state)
{
    expect_refused("garbage.json", "this is not json", "not JSON");
    expect_refused("other.json", "{\"foo\": 1}", "not an appsim result");
    expect_refused("future.json", "{\"schema\": \"appsim-result/2\", \"workload\": \"x\"}",
                   "appsim-result/2");
    expect_refused("nowl.json", "{\"schema\": \"appsim-result/1\", \"summary\": {}}", "workload");
    expect_refused("empty.json", "{\"schema\": \"appsim-result/1\", \"workload\": \"tpcc\"}",
                   "no measurement");
    expect_refused("badhist.json",
                   "{\"schema\": \"appsim-result/1\", \"workload\": \"tpcc\", \"summary\": {},"
                   " \"histograms\": {\"all\": {\"buckets\": 3}}}",
                   "histograms.all");
    fx_run a = base("DriveA", 100, 10, 100000);
    fx_write(&a, file("twice.json"));
    char again[600];
    snprintf(again, sizeof again, "%s/../%s/twice.json", dir, strrchr(dir, '/') + 1);
    char *twice[] = {file("twice.json"), again};
    cmp_set set2;
    char err2[512] = "";
    assert_int_equal(cmp_build(&set2, twice, 2, NULL, 0, err2, sizeof err2), -1);
    assert_non_null(strstr(err2, "given twice"));
    char *paths[] = {file("does-not-exist.json")};
    cmp_set set;
    char err[512] = "";
    assert_int_equal(cmp_build(&set, paths, 1, NULL, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "does-not-exist.json"));
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void test_formats(void **state)
{
    fx_run a = base("DriveA", 1000, 10, 100000);
    fx_run b = base("DriveB", 500, 10, 100000);
    a.serial = "A", b.serial = "B";
    fx_write(&a, file("fa.json"));
    fx_write(&b, file("fb.json"));
    const sim_command *c = sim_find_command("compare");
    char out[512];
    snprintf(out, sizeof out, "%s", file("out.txt"));

    char *argv1[] = {"compare", file("fa.json"), file("fb.json"), "-o", out, NULL};
    assert_int_equal(c->main(5, argv1), 0);
    char *txt = slurp(out);
    assert_non_null(strstr(txt, "DriveA"));
    assert_non_null(strstr(txt, "100.0 *"));
    assert_non_null(strstr(txt, "(50.0%)"));
    assert_non_null(strstr(txt, "rank (runs)"));

    char *argv2[] = {"compare",       "--format", "markdown", file("fa.json"),
                     file("fb.json"), "--output", out,        NULL};
    assert_int_equal(c->main(7, argv2), 0);
    txt = slurp(out);
    assert_non_null(strstr(txt, "| metric | DriveA | DriveB |"));
    assert_non_null(strstr(txt, "**100.0** *"));

    char *argv3[] = {"compare", "--format=csv", file("fa.json"), file("fb.json"), "-o", out, NULL};
    assert_int_equal(c->main(6, argv3), 0);
    txt = slurp(out);
    assert_non_null(strstr(txt, "table,workload,metric_id"));
    assert_non_null(strstr(txt, "1,tpcc,rate,TPS,tps,DriveB,2,1,50,50,50,50,0"));

    char *argv4[] = {"compare",       "--format",      "json", "--label", "one,two",
                     file("fa.json"), file("fb.json"), "-o",   out,       NULL};
    assert_int_equal(c->main(9, argv4), 0);
    json_error_t je;
    json_t *j = json_load_file(out, 0, &je);
    assert_non_null(j);
    json_t *t0 = json_array_get(json_object_get(j, "tables"), 0);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(t0, "drives"), 0), "label")),
                        "one");
    json_decref(j);

    char *argv5[] = {"compare", "--label", "only-one", file("fa.json"), file("fb.json"), NULL};
    assert_int_equal(c->main(5, argv5), SIM_EXIT_USAGE);
    char *argv6[] = {"compare", "--format", "xml", file("fa.json"), NULL};
    assert_int_equal(c->main(4, argv6), SIM_EXIT_USAGE);
    char *argv7[] = {"compare", NULL};
    assert_int_equal(c->main(1, argv7), SIM_EXIT_USAGE);
}

/* A device_io section: rb/fr MiB read by the disk / not by appsim (no writes). */
static json_t *dev_io(double rb_mib, double fr_mib, const char *warning)
{
    double mib = 1048576;
    json_t *d =
        json_pack("{s:s,s:f,s:f,s:f,s:f,s:f}", "disk", "vdz", "read_bytes", rb_mib * mib,
                  "write_bytes", 0.0, "foreign_read_bytes", fr_mib * mib, "foreign_write_bytes",
                  0.0, "foreign_io_share", rb_mib > 0 ? fr_mib / rb_mib : 0.0);
    if (warning) json_object_set_new(d, "warning", json_string(warning));
    return d;
}

static void write_doc(json_t *doc, const char *path)
{
    assert_int_equal(json_dump_file(doc, path, JSON_COMPACT), 0);
    json_decref(doc);
}

/* Other processes' share of the disk's bytes: a row per drive (runs combined by bytes,
 * each run's share as the range), intervals not counted again, every measured phase of
 * a curve counted, and each warning under the table naming drive and file, in the text
 * and in the HTML report. */
static void test_foreign_io_share(void **state)
{
    fx_run a = base("DriveA", 1000, 10, 100000);
    fx_run b = base("DriveB", 500, 10, 100000);
    a.serial = "A", b.serial = "B";
    json_t *d = fx_doc(&a);
    json_object_set_new(d, "device_io",
                        dev_io(100, 60,
                               "60 % of the bytes vdz moved were not "
                               "appsim's (test)"));
    write_doc(d, file("a1.json"));
    d = fx_doc(&a);
    json_object_set_new(d, "device_io", dev_io(100, 0, NULL));
    write_doc(d, file("a2.json"));
    b.intervals = 2;
    d = fx_doc(&b);
    json_object_set_new(d, "device_io", dev_io(50, 5, NULL));
    /* an interval's figures are part of the phase's, never added again */
    json_object_set_new(json_array_get(json_object_get(d, "intervals"), 1), "device_io",
                        dev_io(50, 50, "interval (test)"));
    write_doc(d, file("b.json"));
    json_t *curve =
        json_pack("{s:[{s:f,s:f,s:{s:o}},{s:f,s:f,s:{s:o}}]}", "points", "fraction", 0.0, "iops",
                  900.0, "run", "device_io", dev_io(10, 9, "point (test)"), "fraction", 0.5, "iops",
                  450.0, "run", "device_io", dev_io(10, 1, NULL));
    d = json_pack("{s:s,s:{s:s,s:s},s:s,s:s,s:{s:f},s:{s:s,s:s},s:o}", "schema", "appsim-result/1",
                  "tool", "name", "appsim", "version", "t", "command", "x", "workload", "replay",
                  "config", "qd", 8.0, "target", "model", "DriveC", "serial", "C", "curve", curve);
    /* a curve's top-level figures repeat its maximum-rate point's: counted once */
    json_object_set_new(d, "device_io", dev_io(10, 9, "point (test)"));
    write_doc(d, file("c.json"));

    char *paths[] = {file("a1.json"), file("a2.json"), file("b.json"), file("c.json")};
    cmp_set set;
    char err[512];
    assert_int_equal(cmp_build(&set, paths, 4, NULL, 0, err, sizeof err), 0);
    const cmp_group *g = &set.groups[0];
    const cmp_metric *m = metric(g, "dev.foreign_io_share");
    assert_non_null(m);
    assert_string_equal(m->unit, "%");
    int ea = entry_of(g, "DriveA"), eb = entry_of(g, "DriveB");
    assert_double_equal(m->cells[ea].value, 30.0, 1e-9); /* 60 of 200 MiB */
    assert_double_equal(m->cells[ea].min, 0.0, 1e-9);
    assert_double_equal(m->cells[ea].max, 60.0, 1e-9);
    assert_double_equal(m->cells[eb].value, 10.0, 1e-9);
    assert_non_null(g->warnings);
    assert_non_null(strstr(g->warnings, "DriveA ("));
    assert_non_null(strstr(g->warnings, "a1.json): 60 % of the bytes vdz moved"));
    assert_null(strstr(g->warnings, "interval (test)"));
    const cmp_group *gc = &set.groups[1];
    m = metric(gc, "dev.foreign_io_share");
    assert_non_null(m);
    assert_double_equal(m->cells[0].value, 50.0, 1e-9); /* 10 of 20 MiB over both points */
    assert_non_null(strstr(gc->warnings, "foreign I/O in 1 of its 2 measured phases: point"));

    char out[512];
    snprintf(out, sizeof out, "%s", file("out.txt"));
    FILE *f = fopen(out, "w");
    cmp_print(f, &set, CMP_TEXT);
    fclose(f);
    char *txt = slurp(out);
    assert_non_null(strstr(txt, "foreign I/O share of the disk (%)"));
    assert_non_null(strstr(txt, "30.00 [0.000-60.00]"));
    assert_non_null(strstr(txt, "warning: DriveA"));
    snprintf(out, sizeof out, "%s", file("r.html"));
    assert_int_equal(report_write(&set, out, "t"), 0);
    f = fopen(out, "r");
    assert_non_null(f);
    char *html = calloc(1, 4 << 20);
    assert_non_null(html);
    html[fread(html, 1, (4 << 20) - 1, f)] = 0;
    fclose(f);
    assert_non_null(strstr(html, "foreign I/O share of the disk"));
    assert_non_null(strstr(html, "60 % of the bytes vdz moved were not appsim&#39;s (test)"));
    free(html);
    cmp_set_free(&set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ranks_and_percentages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_latency_breaks_ties, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incomparable_configs_not_ranked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeated_runs_merge_histograms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_runs_without_histograms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_type_without_samples, setup, teardown),
        cmocka_unit_test_setup_teardown(test_labels_and_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_curves_peak, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workload_curve_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_non_results, setup, teardown),
        cmocka_unit_test_setup_teardown(test_formats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_io_share, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
