/*
 * OLTP rate curves in `appsim compare` and `appsim report`, on the hand-written results of
 * tests/integration/oltp_curve/ (the shape of docs/result-schema.md's curve and
 * service_level) and variants of them: the limits as text and their comparison, the max
 * TPS of rate and user-step curves, the rank by service-level TPS (not by max TPS), a
 * drive with no point within the limits last, repeated runs, results judged against
 * different limits left unranked on it, and the chart's points, rings and limit lines.
 */
#include "sim/review/review_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_compare_fixtures.h"

static char dir[256];

static int setup(void **state)
{
    fx_tmpdir(dir, sizeof dir, "oltp");
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

/* A fixture of tests/integration/oltp_curve/ ("fast", "slow", "loose", "users"). */
static json_t *fixture(const char *name)
{
    const char *src = getenv("APPSIM_SRC");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/integration/oltp_curve/%s.json", src ? src : ".", name);
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    if (!doc) fail_msg("%s: %s", path, err.text);
    return doc;
}

static void save(json_t *doc, const char *name)
{
    assert_int_equal(json_dump_file(doc, file(name), JSON_COMPACT), 0);
    json_decref(doc);
}

/* A copy of fixture `from` as another drive, with its service-level and max TPS set. */
static void variant(const char *from, const char *name, const char *model, double sl_tps,
                    double max_tps)
{
    json_t *d = fixture(from);
    json_object_set_new(json_object_get(d, "target"), "model", json_string(model));
    json_object_set_new(json_object_get(d, "target"), "serial", json_string(model));
    json_t *sl = json_object_get(d, "service_level");
    json_object_set_new(sl, "tps", sl_tps < 0 ? json_null() : json_real(sl_tps));
    json_object_set_new(json_object_get(d, "curve"), "max_tps", json_real(max_tps));
    save(d, name);
}

static const cmp_metric *metric(const cmp_group *g, const char *id)
{
    for (int i = 0; i < g->nmetrics; i++)
        if (!strcmp(g->metrics[i].id, id)) return &g->metrics[i];
    return NULL;
}

static void build(cmp_set *set, char **files, int n)
{
    char err[512] = "";
    if (cmp_build(set, files, n, NULL, 0, err, sizeof err)) fail_msg("cmp_build: %s", err);
}

static void test_limit_text_and_equality(void **state)
{
    char key[32], text[160];
    cmp_percentile_key(99.9, key, sizeof key);
    assert_string_equal(key, "p999");
    cmp_percentile_key(90, key, sizeof key);
    assert_string_equal(key, "p90");
    json_t *l =
        json_pack("{s:f,s:s,s:f}", "percentile", 90.0, "type", "new_order", "limit_ms", 5000.0);
    cmp_limit_label(l, text, sizeof text);
    assert_string_equal(text, "new_order p90 <= 5 s");
    json_decref(l);
    l = json_pack("{s:f,s:n,s:f}", "percentile", 99.0, "type", "limit_ms", 0.5);
    cmp_limit_label(l, text, sizeof text);
    assert_string_equal(text, "p99 <= 500 us");
    json_decref(l);

    json_t *fast = fixture("fast"), *slow = fixture("slow"), *loose = fixture("loose");
    char *t = cmp_service_limits_text(fast);
    assert_string_equal(t, "p99 <= 20 ms, new_order p90 <= 5 s");
    free(t);
    assert_true(cmp_service_limits_equal(fast, slow));
    assert_false(cmp_service_limits_equal(fast, loose)); /* p99 20 ms vs 50 ms */
    /* the order of the limits and their source do not matter */
    json_t *lims = json_object_get(json_object_get(slow, "service_level"), "limits");
    json_t *first = json_incref(json_array_get(lims, 0));
    json_array_remove(lims, 0);
    json_object_set_new(first, "source", json_string("somewhere else"));
    json_array_append_new(lims, first);
    assert_true(cmp_service_limits_equal(fast, slow));
    /* the same value on another type is another limit */
    json_object_set_new(json_array_get(lims, 0), "type", json_string("payment"));
    assert_false(cmp_service_limits_equal(fast, slow));
    /* limits against none */
    json_object_del(slow, "service_level");
    assert_false(cmp_service_limits_equal(fast, slow));
    assert_null(cmp_service_limits_text(slow));
    json_decref(fast);
    json_decref(slow);
    json_decref(loose);
}

static void test_max_tps(void **state)
{
    json_t *fast = fixture("fast"), *users = fixture("users");
    double v = 0;
    assert_true(cmp_oltp_max_tps(cmp_oltp_curve(fast), &v));
    assert_double_equal(v, 812.4, 1e-9);
    /* user steps: the highest achieved TPS (max_tps is null) */
    json_t *uc = (json_t *)cmp_oltp_curve(users);
    assert_true(cmp_oltp_max_tps(uc, &v));
    assert_double_equal(v, 1480.0, 1e-9);
    /* a failed step is no measurement */
    json_object_set_new(json_array_get(json_object_get(uc, "points"), 2), "failed", json_true());
    assert_true(cmp_oltp_max_tps(uc, &v));
    assert_double_equal(v, 1210.0, 1e-9);
    /* a rate curve without max_tps: its saturation point, even if a point went higher */
    json_t *fc = (json_t *)cmp_oltp_curve(fast);
    json_object_set_new(fc, "max_tps", json_null());
    json_object_set_new(json_array_get(json_object_get(fc, "points"), 0), "achieved_tps",
                        json_real(500.0));
    assert_true(cmp_oltp_max_tps(fc, &v));
    assert_double_equal(v, 500.0, 1e-9);
    /* an I/O curve is no OLTP curve */
    json_t *io = json_pack("{s:{s:[{s:f,s:f}]}}", "curve", "points", "iops", 10.0, "mean_us", 5.0);
    assert_null(cmp_oltp_curve(io));
    json_decref(io);
    json_decref(fast);
    json_decref(users);
}

/* A drive with the higher max TPS but the lower service-level TPS ranks second. */
static void test_ranked_by_service_level(void **state)
{
    variant("fast", "a.json", "Steady", 700, 720);
    variant("fast", "b.json", "Bursty", 400, 900);
    variant("fast", "c.json", "Never", -1, 950);
    char *files[] = {file("c.json"), file("b.json"), file("a.json")};
    cmp_set set;
    build(&set, files, 3);
    assert_int_equal(set.ngroups, 1);
    const cmp_group *g = &set.groups[0];
    assert_string_equal(g->entries[0].label, "Steady");
    assert_string_equal(g->entries[1].label, "Bursty");
    assert_string_equal(g->entries[2].label, "Never");
    assert_int_equal(g->entries[2].rank, 3);
    const cmp_metric *sl = metric(g, "service_level.tps");
    assert_non_null(sl);
    assert_string_equal(sl->name, "service-level TPS (p99 <= 20 ms, new_order p90 <= 5 s)");
    assert_int_equal(sl->better, CMP_HIGHER);
    assert_true(sl->cells[0].best);
    assert_double_equal(sl->cells[1].pct, 400.0 / 700 * 100, 1e-6);
    assert_false(sl->cells[2].have);
    assert_true(sl->cells[2].unmet);
    const cmp_metric *mx = metric(g, "curve.max_tps");
    assert_non_null(mx);
    assert_true(mx->cells[2].best); /* the never-met drive has the highest maximum */
    assert_string_equal(g->service_limits, "p99 <= 20 ms, new_order p90 <= 5 s");
    assert_non_null(strstr(g->service_note, "Never: no point of its curve met"));
    assert_non_null(strstr(g->rank_rule, "ranked by service-level TPS"));
    /* the I/O curve machinery does not read an OLTP curve as a peak */
    for (int i = 0; i < g->nmetrics; i++)
        assert_null(strstr(g->metrics[i].id, ".peak"));
    cmp_set_free(&set);
}

/* Ties on service-level TPS (within 1 %) are ordered by max TPS. */
static void test_tie_ordered_by_max_tps(void **state)
{
    variant("fast", "a.json", "Lower", 650, 700);
    variant("fast", "b.json", "Higher", 652, 800);
    char *files[] = {file("a.json"), file("b.json")};
    cmp_set set;
    build(&set, files, 2);
    assert_string_equal(set.groups[0].entries[0].label, "Higher");
    assert_non_null(strstr(set.groups[0].rank_rule, "ordered by max TPS"));
    cmp_set_free(&set);
}

/* Two runs of one drive: the mean of their figures; a run that met the limits nowhere
 * makes the drive's figure unmet, and a warning names the run. */
static void test_repeated_runs(void **state)
{
    variant("fast", "a1.json", "Same", 600, 800);
    variant("fast", "a2.json", "Same", 700, 820);
    variant("fast", "b1.json", "Flaky", 900, 900);
    variant("fast", "b2.json", "Flaky", -1, 900);
    char *files[] = {file("a1.json"), file("a2.json"), file("b1.json"), file("b2.json")};
    cmp_set set;
    build(&set, files, 4);
    const cmp_group *g = &set.groups[0];
    assert_string_equal(g->entries[0].label, "Same");
    const cmp_metric *sl = metric(g, "service_level.tps");
    assert_double_equal(sl->cells[0].value, 650, 1e-9);
    assert_double_equal(sl->cells[0].min, 600, 1e-9);
    assert_double_equal(sl->cells[0].max, 700, 1e-9);
    assert_int_equal(sl->cells[0].nruns, 2);
    assert_true(sl->cells[1].unmet);
    assert_int_equal(sl->cells[1].nruns, 2);
    assert_non_null(g->warnings);
    assert_non_null(strstr(g->warnings, "b2.json: no point met the service-level limits"));
    assert_null(strstr(g->warnings, "b1.json"));
    assert_double_equal(metric(g, "curve.max_tps")->cells[0].value, 810, 1e-9);
    cmp_set_free(&set);
}

/* Different limits: one table (the limits do not change the measurement), the
 * service-level row shown but unranked, the rank by max TPS, a note with every limit. */
static void test_different_limits_not_ranked(void **state)
{
    json_t *f = fixture("fast"), *l = fixture("loose");
    save(f, "fast.json");
    save(l, "loose.json");
    char *files[] = {file("loose.json"), file("fast.json")};
    cmp_set set;
    build(&set, files, 2);
    assert_int_equal(set.ngroups, 1);
    const cmp_group *g = &set.groups[0];
    const cmp_metric *sl = metric(g, "service_level.tps");
    assert_int_equal(sl->better, CMP_NONE);
    assert_false(sl->cells[0].best);
    assert_false(sl->cells[1].best);
    assert_null(g->service_limits);
    assert_non_null(strstr(g->service_note, "judged against different limits"));
    assert_non_null(strstr(g->service_note, "p99 <= 50 ms"));
    assert_non_null(strstr(g->service_note, "p99 <= 20 ms"));
    assert_non_null(strstr(g->rank_rule, "ranked by max TPS"));
    assert_string_equal(g->entries[0].label, "Fast Drive");
    json_t *j = cmp_to_json(&set);
    json_t *svc = json_object_get(json_array_get(json_object_get(j, "tables"), 0), "service_level");
    assert_true(json_is_false(json_object_get(svc, "ranked")));
    assert_true(json_is_null(json_object_get(svc, "limits")));
    json_decref(j);
    cmp_set_free(&set);
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char *s = calloc(1, 1 << 20);
    s[fread(s, 1, (1 << 20) - 1, fp)] = 0;
    fclose(fp);
    return s;
}

/* The chart's part of the report between data-chart="ID" and </svg> (malloc'ed). */
static char *chart(const char *html, const char *id)
{
    char want[128];
    snprintf(want, sizeof want, "data-chart=\"%s\"", id);
    const char *a = strstr(html, want);
    if (!a) return NULL;
    const char *z = strstr(a, "</svg>");
    return strndup(a, (size_t)(z - a));
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Per drive: the points in order of offered rate at their achieved TPS, the
 * unsustained one a ring, the saturation point apart, the limits as lines in the
 * chart's unit, the service-level TPS as a mark. */
static void test_report_chart(void **state)
{
    save(fixture("fast"), "fast.json");
    save(fixture("slow"), "slow.json");
    char *files[] = {file("fast.json"), file("slow.json")};
    cmp_set set;
    build(&set, files, 2);
    assert_int_equal(report_write(&set, file("r.html"), "t"), 0);
    cmp_set_free(&set);
    char *html = slurp(file("r.html"));
    char *c1 = chart(html, "g1-oltp-1"), *c2 = chart(html, "g1-oltp-2");
    assert_non_null(c1);
    assert_non_null(c2);
    assert_null(chart(html, "g1-curve-1")); /* not drawn as an I/O curve */
    assert_non_null(strstr(c1, "Fast Drive: latency in seconds (logarithmic)"));
    assert_non_null(strstr(c1, "data-yscale=\"log\""));
    /* mean through 40 %, 80 %, 100 %: achieved 324.1, 646.2, 700.3; seconds */
    const char *m1 = strstr(c1, "data-series=\"mean\" data-x=\"324.1\" data-y=\"0.0021\"");
    const char *m2 = strstr(c1, "data-series=\"mean\" data-x=\"646.2\" data-y=\"0.0049\"");
    const char *m3 = strstr(c1, "data-series=\"mean\" data-x=\"700.3\" data-y=\"0.31\"");
    assert_true(m1 && m2 && m3 && m1 < m2 && m2 < m3);
    /* the 100 % point did not sustain its rate: a ring on each of the three lines */
    assert_int_equal(count(c1, "data-hollow=\"true\""), 3);
    assert_non_null(strstr(c1, ">100%, not sustained<"));
    assert_non_null(strstr(c1, "data-series=\"new_order p90\" data-x=\"646.2\" data-y=\"0.008\""));
    assert_non_null(strstr(c1, "data-series=\"saturation (max)\" data-x=\"812.4\""));
    assert_non_null(strstr(c1, "class=\"limit\""));
    assert_non_null(strstr(c1, "data-y=\"0.02\"/>"));
    assert_non_null(strstr(c1, "data-y=\"5\"/>"));
    assert_non_null(strstr(c1, "class=\"mark\""));
    assert_non_null(strstr(c1, "data-x=\"650\"/>"));
    assert_null(strstr(c2, "class=\"mark\"")); /* the slow drive has no service-level TPS */
    assert_non_null(strstr(html, "class=\"unmet\" data-metric=\"service_level.tps\">none met"));
    assert_non_null(strstr(html, "Service level: judged against p99 &lt;= 20 ms"));
    free(c1);
    free(c2);
    free(html);
}

/* TPC-C's limits, one per type: limits of one value share one labelled line, and of the
 * type latencies only the one the points come closest to its limit is drawn. */
static void test_report_type_limits(void **state)
{
    json_t *d = fixture("fast");
    json_t *lims = json_object_get(json_object_get(d, "service_level"), "limits");
    json_array_remove(lims, 0); /* no limit on all transactions */
    json_array_append_new(lims, json_pack("{s:f,s:s,s:f,s:s}", "percentile", 90.0, "type",
                                          "payment", "limit_ms", 5000.0, "source", "t"));
    json_array_append_new(lims, json_pack("{s:f,s:s,s:f,s:s}", "percentile", 90.0, "type",
                                          "delivery", "limit_ms", 80000.0, "source", "t"));
    /* payment comes within 90 % of its limit at one point, new_order and delivery not */
    size_t i;
    json_t *pt;
    json_array_foreach(json_object_get(json_object_get(d, "curve"), "points"), i, pt)
    {
        json_t *per = json_object_get(pt, "per_type");
        json_object_set_new(per, "payment", json_pack("{s:f}", "p90_ms", i == 3 ? 4500.0 : 1.0));
        json_object_set_new(per, "delivery", json_pack("{s:f}", "p90_ms", 40000.0));
    }
    save(d, "t.json");
    char *files[] = {file("t.json")};
    cmp_set set;
    build(&set, files, 1);
    assert_string_equal(set.groups[0].service_limits,
                        "new_order p90 <= 5 s, payment p90 <= 5 s, delivery p90 <= 80 s");
    assert_int_equal(report_write(&set, file("r.html"), "t"), 0);
    cmp_set_free(&set);
    char *html = slurp(file("r.html"));
    char *c = chart(html, "g1-oltp-1");
    assert_non_null(c);
    assert_int_equal(count(c, "class=\"limit\""), 2);
    assert_non_null(strstr(c, ">p90 &lt;= 5 s: new_order, payment</text>"));
    assert_non_null(strstr(c, ">delivery p90 &lt;= 80 s</text>"));
    assert_non_null(strstr(c, "data-series=\"payment p90\""));
    assert_null(strstr(c, "data-series=\"new_order p90\""));
    assert_null(strstr(c, "data-series=\"delivery p90\""));
    free(c);
    free(html);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit_text_and_equality),
        cmocka_unit_test(test_max_tps),
        cmocka_unit_test_setup_teardown(test_ranked_by_service_level, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tie_ordered_by_max_tps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeated_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_different_limits_not_ranked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_chart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_type_limits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
