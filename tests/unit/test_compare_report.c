/*
 * `appsim report`: the HTML is self-contained (no scripts, links or fetched resources),
 * balanced, and holds every chart; then headless Chromium renders it and a probe script
 * (added to a copy, never to the report) measures each chart and data point: the SVG
 * elements exist with non-zero size and carry exactly the values of the results
 * (percentile curves from the merged histograms, bars, curves). Skipped with a reason
 * when Chromium is absent. Two drives' `appsim io` curves: one line per drive ordered by
 * rate, every point labelled with its percentage, the overload point never the peak.
 */
#include "sim/review/review_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_compare_fixtures.h"

static char dir[256];
static char report[512];
/* Drive A: two runs; drive B: one run; all tpcc with intervals; two replay curves. */
static fx_run a1, a2, b1, ca, cb;

static const char *path_in(const char *name)
{
    static char bufs[16][512];
    static int k;
    char *b = bufs[k++ % 16];
    snprintf(b, 512, "%s/%s", dir, name);
    return b;
}

/* An `appsim io` result: one profile's curve, the maximum-rate run, 50 %, 100 % and an
 * overloaded 120 % point (saturated), rates and mean latencies scaled by `speed`. */
static void write_io(const char *path, const char *model, const char *serial, double speed)
{
    static const double frac[] = {0, 0.5, 1.0, 1.2}, iops[] = {1010, 500, 990, 1000},
                        mean[] = {900, 100, 200, 5000};
    json_t *pts = json_array();
    for (int i = 0; i < 4; i++) {
        json_t *p = json_pack("{s:f, s:f, s:f, s:f, s:f}", "fraction", frac[i], "target_iops",
                              frac[i] * 1010 * speed, "iops", iops[i] * speed, "mean_us",
                              mean[i] / speed, "p99_us", 3 * mean[i] / speed);
        if (i > 0) {
            json_object_set_new(p, "saturated", json_boolean(i == 3));
            json_object_set_new(p, "offered_iops", json_real(frac[i] * 1010 * speed));
        } else {
            json_object_set_new(p, "max_rate_run", json_true());
        }
        json_array_append_new(pts, p);
    }
    json_t *doc = json_pack(
        "{s:s, s:{s:s,s:s}, s:s, s:s, s:{s:s,s:s}, s:{s:s,s:s,s:s}, s:s, s:b, s:[{s:s, s:{s:o}}]}",
        "schema", "appsim-result/1", "tool", "name", "appsim", "version", "t", "command",
        "appsim io", "workload", "io", "config", "profile", "4k-random-read", "target", path,
        "target", "path", "/x", "model", model, "serial", serial, "started_at",
        "2026-12-01T01:00:00Z", "interrupted", false, "profiles", "profile", "4k-random-read",
        "curve", "points", pts);
    if (json_dump_file(doc, path, JSON_COMPACT)) abort();
    json_decref(doc);
}

static int setup(void **state)
{
    fx_tmpdir(dir, sizeof dir, "report");
    a1 = (fx_run){.workload = "tpcc",
                  .model = "Drive <A> & co",
                  .serial = "A",
                  .path = "/a",
                  .scale = 10,
                  .duration = 60,
                  .seconds = 10,
                  .base_ns = 200000,
                  .step_ns = 1000,
                  .n = 2000,
                  .histograms = true,
                  .intervals = 6};
    a2 = a1;
    a2.base_ns = 900000;
    a2.step_ns = 3001;
    a2.n = 1000;
    b1 = a1;
    b1.model = "DriveB";
    b1.serial = "B";
    b1.base_ns = 400000;
    b1.n = 1500;
    ca = a1;
    ca.workload = "replay";
    ca.curve_points = 5;
    ca.intervals = 0;
    cb = b1;
    cb.workload = "replay";
    cb.curve_points = 5;
    cb.intervals = 0;
    fx_write(&a1, path_in("a1.json"));
    fx_write(&a2, path_in("a2.json"));
    fx_write(&b1, path_in("b1.json"));
    fx_write(&ca, path_in("ca.json"));
    fx_write(&cb, path_in("cb.json"));
    write_io(path_in("ia.json"), "Drive <A> & co", "A", 1.0);
    write_io(path_in("ib.json"), "DriveB", "B", 2.0);
    snprintf(report, sizeof report, "%s/report.html", dir);
    char *argv[] = {"report",
                    (char *)path_in("a1.json"),
                    (char *)path_in("b1.json"),
                    (char *)path_in("a2.json"),
                    (char *)path_in("ca.json"),
                    (char *)path_in("cb.json"),
                    (char *)path_in("ia.json"),
                    (char *)path_in("ib.json"),
                    "-o",
                    report,
                    NULL};
    return sim_find_command("report")->main(10, argv);
}

static int teardown(void **state)
{
    fx_rmdir(dir);
    return 0;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    cmp_buf b = {0};
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk - 1, f)) > 0) {
        chunk[n] = 0;
        cmp_buf_puts(&b, chunk);
    }
    fclose(f);
    if (len) *len = b.len;
    return b.s ? b.s : strdup("");
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void test_html_self_contained(void **state)
{
    char *html = slurp(report, NULL);
    assert_non_null(html);
    assert_true(!strncmp(html, "<!DOCTYPE html>", 15));
    assert_non_null(strstr(html, "</html>"));
    /* Nothing to fetch, nothing to run. */
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "<link"));
    assert_null(strstr(html, "src="));
    assert_null(strstr(html, "url("));
    assert_null(strstr(html, "@import"));
    assert_null(strstr(html, "https://"));
    /* The only http:// is the SVG namespace name, which is never fetched. */
    assert_int_equal(count(html, "http://"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    /* Balanced structure. */
    assert_int_equal(count(html, "<svg"), count(html, "</svg>"));
    assert_int_equal(count(html, "<table"), count(html, "</table>"));
    assert_int_equal(count(html, "<section"), count(html, "</section>"));
    /* Labels are escaped. */
    assert_non_null(strstr(html, "Drive &lt;A&gt; &amp; co"));
    assert_null(strstr(html, "Drive <A>"));
    /* Every chart. */
    const char *charts[] = {"g1-rate",     "g1-latency", "g1-percentiles", "g1-rate-time",
                            "g1-p99-time", "g2-rate",    "g2-curve-1",     "g3-curve-1"};
    for (size_t i = 0; i < sizeof charts / sizeof charts[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "data-chart=\"%s\"", charts[i]);
        if (!strstr(html, want)) print_error("missing chart %s\n", charts[i]);
        assert_non_null(strstr(html, want));
    }
    /* The warm-up boundary is marked on the charts over time (the fixtures' first
     * interval, ending at 10 s, is warm-up). */
    assert_non_null(strstr(html, "class=\"mark\""));
    assert_non_null(strstr(html, "data-x=\"10\"/><text class=\"tick\""));
    /* Identities and configurations as tables with names, not key paths. */
    assert_non_null(strstr(html, "<th>serial</th>"));
    assert_non_null(strstr(html, "<th>scale</th>"));
    assert_null(strstr(html, "target.serial"));
    assert_null(strstr(html, "config.scale"));
    assert_non_null(strstr(html, "appsim test"));
    /* One form for a missing value. */
    assert_null(strstr(html, "<td>-</td>"));
    /* Drive A's two runs (200 and 100 TPS) as a run-to-run range on its throughput bar;
     * the summary table and the side-by-side drive table are there. */
    char *rate_chart = strstr(html, "data-chart=\"g1-rate\"");
    assert_non_null(rate_chart);
    char *range = strstr(rate_chart, "class=\"range\"");
    assert_non_null(range);
    assert_true(range < strstr(rate_chart, "</svg>"));
    assert_non_null(strstr(range, "data-min=\"100\" data-max=\"200\""));
    assert_non_null(strstr(html, "<table class=\"summary\">"));
    assert_non_null(strstr(html, "<table class=\"kv drives\">"));
    /* Printable. */
    assert_non_null(strstr(html, "@media print"));
    /* io curves: every point labelled (4 per drive); the peak in the table is the 100 %
     * point (990 and 1980 IOPS), not the overloaded 120 % one or the maximum-rate run. */
    assert_int_equal(count(html, "class=\"ptlabel\""), 8);
    assert_int_equal(count(html, ">120%</text>"), 2);
    assert_int_equal(count(html, ">max</text>"), 2);
    char *peak = strstr(html, "4k-random-read peak IOPS");
    assert_non_null(peak);
    char *row_end = strstr(peak, "</tr>");
    assert_non_null(row_end);
    *row_end = 0;
    if (!strstr(peak, "990") || !strstr(peak, "1,980") || strstr(peak, "2,000"))
        print_error("peak row: %s\n", peak);
    assert_true(strstr(peak, "990") && strstr(peak, "1,980") && !strstr(peak, "2,000"));
    free(html);
}

/* ---------------------------------------------------------------- in the browser */

static const char probe_script[] =
    "<script>\n"
    "(function(){\n"
    "  var out = [];\n"
    "  document.querySelectorAll('svg.chart').forEach(function(svg){\n"
    "    var r = svg.getBoundingClientRect();\n"
    "    var items = [];\n"
    "    svg.querySelectorAll('rect.bar, circle.pt').forEach(function(el){\n"
    "      var b = el.getBoundingClientRect();\n"
    "      var d = el.dataset;\n"
    "      items.push({k: el.tagName, s: d.series, c: d.cat || '',\n"
    "        v: d.value !== undefined ? Number(d.value) : Number(d.y),\n"
    "        x: d.x !== undefined ? Number(d.x) : 0, w: b.width, h: b.height,\n"
    "        cx: b.left + b.width / 2, cy: b.top + b.height / 2});\n"
    "    });\n"
    "    var labels = [];\n"
    "    svg.querySelectorAll('text.ptlabel').forEach(function(el){\n"
    "      var b = el.getBoundingClientRect();\n"
    "      labels.push({s: el.dataset.series, t: el.textContent, w: b.width, h: b.height,\n"
    "        cx: b.left});\n"
    "    });\n"
    "    out.push({id: svg.dataset.chart, u: svg.dataset.yunit, w: r.width, h: r.height,\n"
    "      lines: svg.querySelectorAll('polyline.line').length, items: items,\n"
    "      labels: labels});\n"
    "  });\n"
    "  var pre = document.createElement('pre');\n"
    "  pre.id = 'measure';\n"
    "  pre.textContent = JSON.stringify(out);\n"
    "  document.body.appendChild(pre);\n"
    "})();\n"
    "</script>\n";

static const char *find_chromium(void)
{
    static const char *const cands[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser",
                                        "/usr/lib/chromium/chromium", NULL};
    for (int i = 0; cands[i]; i++)
        if (access(cands[i], X_OK) == 0) return cands[i];
    return NULL;
}

static void unescape(char *s)
{
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
    char *w = s;
    for (char *r = s; *r;) {
        bool done = false;
        for (size_t i = 0; i < sizeof ents / sizeof ents[0] && !done; i++) {
            size_t n = strlen(ents[i].ent);
            if (!strncmp(r, ents[i].ent, n)) {
                *w++ = ents[i].c;
                r += n;
                done = true;
            }
        }
        if (!done) *w++ = *r++;
    }
    *w = 0;
}

static json_t *render(void)
{
    const char *chromium = find_chromium();
    if (!chromium) return NULL;
    char *html = slurp(report, NULL);
    char *body = strstr(html, "</body>");
    assert_non_null(body);
    FILE *f = fopen(path_in("probe.html"), "w");
    fwrite(html, 1, (size_t)(body - html), f);
    fputs(probe_script, f);
    fputs(body, f);
    fclose(f);
    free(html);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "timeout 120 %s --headless --no-sandbox --disable-gpu "
             "--disable-background-networking --disable-component-update --disable-sync "
             "--no-first-run --user-data-dir=%s/profile --window-size=1200,900 --dump-dom "
             "'file://%s/probe.html' > %s/dom.html 2> %s/chromium.log",
             chromium, dir, dir, dir, dir);
    int rc = system(cmd);
    if (rc != 0) {
        char *log = slurp(path_in("chromium.log"), NULL);
        print_error("chromium failed (%d): %s\n", rc, log ? log : "");
        free(log);
        fail();
    }
    char *dom = slurp(path_in("dom.html"), NULL);
    assert_non_null(dom);
    char *start = strstr(dom, "<pre id=\"measure\">");
    assert_non_null(start);
    start += strlen("<pre id=\"measure\">");
    char *end = strstr(start, "</pre>");
    assert_non_null(end);
    *end = 0;
    unescape(start);
    json_error_t je;
    json_t *m = json_loads(start, 0, &je);
    if (!m) print_error("probe output is not JSON: %s\n", je.text);
    free(dom);
    return m;
}

static json_t *chart(json_t *m, const char *id)
{
    size_t i;
    json_t *c;
    json_array_foreach(m, i,
                       c) if (!strcmp(json_string_value(json_object_get(c, "id")), id)) return c;
    print_error("chart %s not drawn\n", id);
    fail();
    return NULL;
}

static double num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

/* Microseconds per unit of the chart's values (data-yunit). */
static double us_per_unit(const json_t *chart)
{
    const char *u = json_string_value(json_object_get(chart, "u"));
    return !u ? 1 : !strcmp(u, "ms") ? 1e3 : !strcmp(u, "s") ? 1e6 : 1;
}

static void test_rendered_in_chromium(void **state)
{
    if (!find_chromium()) {
        fprintf(stderr, "SKIPPED: chromium is not installed (Debian package `chromium`, listed "
                        "in scripts/deps.sh); the browser check did not run\n");
        skip();
    }
    json_t *m = render();
    assert_non_null(m);
    assert_true(json_array_size(m) >= 7);
    size_t i;
    json_t *c;
    json_array_foreach(m, i, c)
    {
        assert_true(num(c, "w") > 100);
        assert_true(num(c, "h") > 100);
        size_t k;
        json_t *it;
        json_array_foreach(json_object_get(c, "items"), k, it)
        {
            assert_true(num(it, "w") > 0);
            assert_true(num(it, "h") > 0);
        }
    }

    /* Throughput bars: one per drive, values of the results, heights proportional. */
    json_t *rate = json_object_get(chart(m, "g1-rate"), "items");
    assert_int_equal(json_array_size(rate), 2);
    double va = 0, vb = 0, ha = 0, hb = 0;
    json_array_foreach(rate, i, c)
    {
        const char *cat = json_string_value(json_object_get(c, "c"));
        if (!strcmp(cat, "DriveB"))
            vb = num(c, "v"), hb = num(c, "h");
        else
            va = num(c, "v"), ha = num(c, "h");
    }
    assert_double_equal(va, (2000.0 + 1000.0) / 20.0, 1e-6); /* two runs combined */
    assert_double_equal(vb, 150.0, 1e-6);
    assert_double_equal(hb / ha, vb / va, 0.02);

    /* Percentile curves: 9 points per drive from p50 to p99.99, equal to the
     * percentiles of the merged histogram of each drive's runs. */
    sim_hist *ua = fx_hist(&a1), *h2 = fx_hist(&a2), *ub = fx_hist(&b1);
    sim_hist_merge(ua, h2);
    sim_hist_free(h2);
    json_t *pc = chart(m, "g1-percentiles");
    assert_int_equal(num(pc, "lines"), 2);
    json_t *pts = json_object_get(pc, "items");
    assert_int_equal(json_array_size(pts), 18);
    double last_cx = -1, last_cy = 1e9;
    const char *last_series = "";
    json_array_foreach(pts, i, c)
    {
        const char *s = json_string_value(json_object_get(c, "s"));
        const sim_hist *h = !strcmp(s, "DriveB") ? ub : ua;
        double p = num(c, "x");
        assert_double_equal(num(c, "v") * us_per_unit(pc), (double)sim_hist_percentile(h, p) / 1e3,
                            1e-6);
        if (strcmp(s, last_series)) {
            last_cx = -1;
            last_cy = 1e9;
            last_series = s;
        }
        /* Higher percentiles to the right and (not lower) up. */
        assert_true(num(c, "cx") > last_cx);
        assert_true(num(c, "cy") <= last_cy + 0.01);
        last_cx = num(c, "cx");
        last_cy = num(c, "cy");
    }
    sim_hist_free(ua);
    sim_hist_free(ub);

    /* Over time: one line per run (3), 6 intervals each. */
    json_t *rt = chart(m, "g1-rate-time");
    assert_int_equal(num(rt, "lines"), 3);
    assert_int_equal(json_array_size(json_object_get(rt, "items")), 18);

    /* Latency against IOPS: 5 points per drive at the results' IOPS and mean latency,
     * and the same 5 at the p99 latency (series "<drive> p99", drawn dashed). */
    json_t *cc = chart(m, "g2-curve-1"), *cv = json_object_get(cc, "items");
    assert_int_equal(json_array_size(cv), 20);
    int nmean = 0, np99 = 0;
    json_array_foreach(cv, i, c)
    {
        const char *s = json_string_value(json_object_get(c, "s"));
        bool p99 = strstr(s, " p99") != NULL;
        int k = (p99 ? np99++ : nmean++) % 5;
        const fx_run *r = !strncmp(s, "DriveB", 6) ? &cb : &ca;
        double rate_r = (double)r->n / r->seconds;
        assert_double_equal(num(c, "x"), rate_r * (k + 1) / 5, 1e-6);
        if (!p99) assert_double_equal(num(c, "v") * us_per_unit(cc), 100.0 + 50 * k, 1e-6);
    }
    assert_int_equal(nmean, 10);
    assert_int_equal(np99, 10);

    /* io: latency against IOPS for two drives, each line ordered by rate (x and the drawn
     * position both increasing), each point's label drawn, in the order of the rates;
     * per drive a mean and a p99 line and the maximum-rate run as an unjoined marker. */
    json_t *io = chart(m, "g3-curve-1");
    assert_int_equal(num(io, "lines"), 4);
    json_t *all = json_object_get(io, "items");
    assert_int_equal(json_array_size(all), 14);
    json_t *ip = json_array();
    int nmax = 0;
    json_array_foreach(all, i, c)
    {
        const char *s = json_string_value(json_object_get(c, "s"));
        if (strstr(s, "maximum-rate run")) {
            nmax++;
            /* the maximum-rate run: 1010 IOPS at 900 us for the first drive */
            if (!strncmp(s, "Drive <A>", 9)) assert_double_equal(num(c, "x"), 1010.0, 1e-6);
        } else if (!strstr(s, " p99")) {
            json_array_append(ip, c);
        }
    }
    assert_int_equal(nmax, 2);
    assert_int_equal(json_array_size(ip), 6);
    for (size_t k = 1; k < 6; k++) {
        json_t *p0 = json_array_get(ip, k - 1), *p1 = json_array_get(ip, k);
        if (k == 3) continue; /* the second drive's line starts */
        assert_true(num(p1, "x") > num(p0, "x"));
        assert_true(num(p1, "cx") > num(p0, "cx"));
    }
    /* each line starts at its 50 % point: 500 IOPS for the first drive, 1000 for DriveB */
    for (size_t k = 0; k < 6; k += 3) {
        json_t *p0 = json_array_get(ip, k);
        bool b = !strcmp(json_string_value(json_object_get(p0, "s")), "DriveB");
        assert_double_equal(num(p0, "x"), b ? 1000.0 : 500.0, 1e-6);
    }
    json_decref(ip);
    json_t *lb = json_object_get(io, "labels");
    assert_int_equal(json_array_size(lb), 8);
    static const char *const order[] = {"50%", "100%", "120%", "max"};
    json_array_foreach(lb, i, c)
    {
        assert_string_equal(json_string_value(json_object_get(c, "t")), order[i % 4]);
        assert_true(num(c, "w") > 0 && num(c, "h") > 0);
    }
    json_decref(m);
}

static void test_report_usage_errors(void **state)
{
    const sim_command *r = sim_find_command("report");
    char *noout[] = {"report", (char *)path_in("a1.json"), NULL};
    assert_int_equal(r->main(2, noout), SIM_EXIT_USAGE);
    char *nofiles[] = {"report", "-o", (char *)path_in("x.html"), NULL};
    assert_int_equal(r->main(3, nofiles), SIM_EXIT_USAGE);
    FILE *f = fopen(path_in("junk.json"), "w");
    fputs("[1,2,3]", f);
    fclose(f);
    char *junk[] = {"report", (char *)path_in("junk.json"), "-o", (char *)path_in("x.html"), NULL};
    assert_int_equal(r->main(4, junk), SIM_EXIT_USAGE);
    assert_int_equal(access(path_in("x.html"), F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_html_self_contained),
        cmocka_unit_test(test_rendered_in_chromium),
        cmocka_unit_test(test_report_usage_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
