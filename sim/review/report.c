/*
 * sim/review/report.c: `appsim report RESULT.json... -o report.html`: one self-contained HTML file
 * (inline CSS and SVG, no scripts, fonts or links to fetch) with the comparison tables,
 * the charts the review labs publish, the drives' identities and the full
 * configurations. It is built from the same model as `appsim compare`, so the tables and
 * the charts cannot disagree. Written atomically (temporary file, fsync, rename).
 */
#include "sim/review/review_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILES 512

/* Percentiles drawn on the latency percentile curves (p50 to p99.99). */
static const double curve_pcts[] = {50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
#define NCURVE_PCTS ((int)(sizeof curve_pcts / sizeof curve_pcts[0]))

static const char css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;"
    "margin:1.5em 2em;color:#222;line-height:1.4}"
    "h1{font-size:1.6em}h2{border-bottom:2px solid #0072B2;padding-bottom:.2em;"
    "margin-top:2em}h3{font-size:1.05em;margin-top:1.5em}"
    "table{border-collapse:collapse;margin:.6em 0;font-size:.88em}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right;vertical-align:top}"
    "th:first-child,td:first-child{text-align:left}thead th{background:#eef3f8}"
    "td.best{font-weight:bold;background:#e6f4ea}td.unmet{color:#a00}td .pct{color:#666}td "
    ".spread{color:#888;"
    "font-size:.85em}table.kv td,table.kv th{text-align:left}"
    "table.opts th,table.opts td{text-align:left;font-size:.95em}table.opts th{font-weight:normal;"
    "color:#555;background:#f6f8fa}tr.part th{background:#eef3f8;text-align:left}"
    "table.cfg td.differs{background:#fff6e0}"
    ".note{color:#8a4b00}.warn{color:#a00}.config{font-family:monospace;font-size:.85em;"
    "word-break:break-all}svg.chart{display:block;margin:.8em 0;width:100%;height:auto}"
    "table.summary td{white-space:nowrap}table.drives td{word-break:break-word}table.drives "
    "td.differs{"
    "background:#fff6e0}.swatch{display:inline-block;width:.8em;height:.8em;"
    "margin-right:.3em;vertical-align:baseline}"
    "svg .title{font-weight:bold;font-size:14px}svg .tick,svg .legend{font-size:11px}"
    "svg .axis{font-size:12px}figure{margin:0}"
    "@media print{body{max-width:none;margin:0}section,svg.chart,table{break-inside:avoid}"
    "h2{break-before:auto}}";

static void html_table(cmp_buf *b, const cmp_group *g)
{
    cmp_buf_puts(b, "<table class=\"cmp\"><thead><tr><th>metric</th>");
    for (int e = 0; e < g->nentries; e++) {
        cmp_buf_puts(b, "<th>");
        cmp_buf_html(b, g->entries[e].label);
        cmp_buf_puts(b, "</th>");
    }
    cmp_buf_puts(b, "</tr></thead><tbody>\n");
    for (int m = 0; m < g->nmetrics; m++) {
        const cmp_metric *mt = &g->metrics[m];
        cmp_buf_puts(b, "<tr><th>");
        cmp_buf_html(b, mt->name);
        if (mt->unit[0] && strcmp(mt->unit, "tps") && strcmp(mt->unit, "iops"))
            cmp_buf_printf(b, " (%s)", report_unit_name(mt->unit));
        cmp_buf_puts(b, "</th>");
        for (int e = 0; e < g->nentries; e++) {
            const cmp_cell *c = &mt->cells[e];
            if (c->unmet) {
                cmp_buf_puts(b, "<td class=\"unmet\" data-metric=\"");
                cmp_buf_html(b, mt->id);
                cmp_buf_puts(b, "\">none met</td>");
                continue;
            }
            if (!c->have) {
                cmp_buf_puts(b, "<td>&mdash;</td>");
                continue;
            }
            char v[64];
            report_format_value(v, sizeof v, c->value, mt->unit);
            cmp_buf_printf(b, "<td%s data-metric=\"", c->best ? " class=\"best\"" : "");
            cmp_buf_html(b, mt->id);
            cmp_buf_printf(b, "\" data-value=\"%.10g\">%s", c->value, v);
            if (mt->better != CMP_NONE && c->best)
                cmp_buf_puts(b, " &#9733;");
            else if (mt->better != CMP_NONE && c->pct >= 0)
                cmp_buf_printf(b, " <span class=\"pct\">%.1f%%</span>", c->pct);
            if (c->nruns > 1 && c->min != c->max) {
                char lo[64], hi[64];
                report_format_value(lo, sizeof lo, c->min, mt->unit);
                report_format_value(hi, sizeof hi, c->max, mt->unit);
                cmp_buf_printf(b, "<br><span class=\"spread\">%s&ndash;%s</span>", lo, hi);
            }
            cmp_buf_puts(b, "</td>");
        }
        cmp_buf_puts(b, "</tr>\n");
    }
    cmp_buf_puts(b, "<tr><th>rank (runs)</th>");
    for (int e = 0; e < g->nentries; e++) {
        if (g->entries[e].rank)
            cmp_buf_printf(b, "<td>%d (%d)</td>", g->entries[e].rank, g->entries[e].nruns);
        else
            cmp_buf_printf(b, "<td>&mdash; (%d)</td>", g->entries[e].nruns);
    }
    cmp_buf_puts(b, "</tr></tbody></table>\n");
}

static int metric_index(const cmp_group *g, const char *id)
{
    for (int i = 0; i < g->nmetrics; i++)
        if (!strcmp(g->metrics[i].id, id)) return i;
    return -1;
}

static void chart_id(char *buf, size_t len, int gi, const char *what)
{
    snprintf(buf, len, "g%d-%s", gi + 1, what);
}

/* The drive's colour, the same in every chart: the order in which drives first appear
 * in the results. */
int report_drive_index(const cmp_set *set, const char *label)
{
    int k = 0;
    for (int i = 0; i < set->nresults; i++) {
        const char *l = set->results[i].label;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(set->results[j].label, l);
        if (seen) continue;
        if (!strcmp(l, label)) return k;
        k++;
    }
    return k;
}

const char *report_drive_color(const cmp_set *set, const char *label)
{
    return svg_color(report_drive_index(set, label));
}

/* value, and the run-to-run range when the drive has several runs with different values */
static void cell_values(const cmp_cell *c, double *v, double *lo, double *hi)
{
    *v = c->have ? c->value : NAN;
    bool range = c->have && c->nruns > 1 && c->min < c->max;
    *lo = range ? c->min : NAN;
    *hi = range ? c->max : NAN;
}

static void bars(cmp_buf *b, const cmp_set *set, const cmp_group *g, int gi)
{
    int ne = g->nentries;
    const char *cats[ne], *colors[ne];
    for (int e = 0; e < ne; e++) {
        cats[e] = g->entries[e].label;
        colors[e] = report_drive_color(set, cats[e]);
    }
    char id[64], title[200];
    int r = metric_index(g, "rate");
    if (r >= 0) {
        double vals[ne], lo[ne], hi[ne];
        for (int e = 0; e < ne; e++)
            cell_values(&g->metrics[r].cells[e], &vals[e], &lo[e], &hi[e]);
        const char *series[] = {g->metrics[r].name};
        chart_id(id, sizeof id, gi, "rate");
        snprintf(title, sizeof title, "%s per drive (higher is better)", g->metrics[r].name);
        svg_bar_chart(b, &(svg_bars){id, title, g->metrics[r].name, cats, colors, ne, series, 1,
                                     vals, lo, hi, SVG_LINEAR, NULL});
    }
    static const char *const lat_ids[] = {"lat.mean", "lat.p95", "lat.p99", "lat.p99.9"};
    static const char *const lat_names[] = {"mean", "p95", "p99", "p99.9"};
    const char *series[4];
    int idx[4], ns = 0;
    for (int i = 0; i < 4; i++) {
        int m = metric_index(g, lat_ids[i]);
        if (m >= 0) {
            idx[ns] = m;
            series[ns++] = lat_names[i];
        }
    }
    if (ns == 0) return;
    double vals[ne * ns], lo[ne * ns], hi[ne * ns];
    for (int e = 0; e < ne; e++)
        for (int s = 0; s < ns; s++)
            cell_values(&g->metrics[idx[s]].cells[e], &vals[e * ns + s], &lo[e * ns + s],
                        &hi[e * ns + s]);
    svg_scale ys = svg_scale_for(vals, ne * ns);
    /* the unit of the largest value drawn: a bar or the top of its run-to-run range */
    svg_unit u = svg_latency_unit(vals, ne * ns), uh = svg_latency_unit(hi, ne * ns);
    if (uh.us > u.us) u = uh;
    svg_to_unit(vals, ne * ns, u);
    svg_to_unit(lo, ne * ns, u);
    svg_to_unit(hi, ne * ns, u);
    chart_id(id, sizeof id, gi, "latency");
    snprintf(title, sizeof title, "Latency per drive, %s (lower is better%s)", u.word,
             ys == SVG_LOG ? "; logarithmic" : "");
    char ylabel[32];
    snprintf(ylabel, sizeof ylabel, "latency (%s)", u.name);
    svg_bar_chart(
        b, &(svg_bars){id, title, ylabel, cats, colors, ne, series, ns, vals, lo, hi, ys, u.name});
}

static void percentile_curves(cmp_buf *b, const cmp_set *set, const cmp_group *g, int gi)
{
    /* Curve-only results (replay --curve, vdi) keep their histograms per point. */
    if (metric_index(g, "rate") < 0) return;
    int ne = g->nentries, ns = 0;
    svg_series ser[ne];
    double xs[ne][NCURVE_PCTS], ys[ne][NCURVE_PCTS];
    for (int e = 0; e < ne; e++) {
        const sim_hist *h = g->entries[e].hist_all;
        if (!h || sim_hist_count(h) == 0) continue;
        for (int i = 0; i < NCURVE_PCTS; i++) {
            xs[ns][i] = curve_pcts[i];
            ys[ns][i] = (double)sim_hist_percentile(h, curve_pcts[i]) / 1e3;
        }
        ser[ns] = (svg_series){.name = g->entries[e].label,
                               .n = NCURVE_PCTS,
                               .x = xs[ns],
                               .y = ys[ns],
                               .color = report_drive_color(set, g->entries[e].label)};
        ns++;
    }
    svg_unit u = svg_latency_unit(&ys[0][0], ns * NCURVE_PCTS);
    svg_to_unit(&ys[0][0], ns * NCURVE_PCTS, u);
    cmp_buf missing = {0};
    for (int e = 0; e < ne; e++)
        if (!g->entries[e].hist_all || sim_hist_count(g->entries[e].hist_all) == 0) {
            cmp_buf_puts(&missing, missing.len ? ", " : "");
            cmp_buf_html(&missing, g->entries[e].label);
        }
    if (missing.s)
        cmp_buf_printf(b,
                       "<p class=\"note\">No latency histograms in the results of %s: no "
                       "percentile curve for %s.</p>\n",
                       missing.s, strchr(missing.s, ',') ? "them" : "it");
    cmp_buf_free(&missing);
    if (!ns) return;
    char id[64];
    chart_id(id, sizeof id, gi, "percentiles");
    char title[160], ylabel[32];
    snprintf(title, sizeof title, "Latency percentiles, p50 to p99.99, %s (merged histograms)",
             u.word);
    snprintf(ylabel, sizeof ylabel, "latency (%s)", u.name);
    svg_line_chart(b, &(svg_chart){id, title, "percentile", ylabel, u.name, SVG_NINES, SVG_LOG},
                   ser, ns);
}

/* One series per run; label "drive" or "drive (run k)". */
static char *run_name(const cmp_entry *en, int r)
{
    if (en->nruns == 1) return sim_xstrdup(en->label);
    return sim_xasprintf("%s (run %d)", en->label, r + 1);
}

/* One run's intervals as series data: t (end of each interval), t0 (its start), the rate
 * and the p99 latency (us). Malloc'ed arrays, n of them; warm_end moves to the latest end
 * of a warm-up interval. */
typedef struct run_intervals {
    double *t, *t0, *rate, *p99;
    int n;
} run_intervals;

static run_intervals intervals_of(const json_t *doc, double *warm_end)
{
    const json_t *iv = json_object_get(doc, "intervals");
    size_t n = json_is_array(iv) ? json_array_size(iv) : 0;
    run_intervals r = {sim_xmalloc((n + 1) * sizeof(double)), sim_xmalloc((n + 1) * sizeof(double)),
                       sim_xmalloc((n + 1) * sizeof(double)), sim_xmalloc((n + 1) * sizeof(double)),
                       (int)n};
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(iv, i);
        const char *phase = cmp_str(x, "phase");
        double tt, len;
        if (phase && !strcmp(phase, "warmup") && cmp_num(x, "t", &tt) && !(tt <= *warm_end))
            *warm_end = tt;
        if (!cmp_num(x, "t", &r.t[i])) r.t[i] = (double)i;
        /* the interval's own length; its start is the end less that */
        r.t0[i] = cmp_num(x, "seconds", &len) && len > 0 ? r.t[i] - len : NAN;
        if (!cmp_num(x, "rate", &r.rate[i])) r.rate[i] = NAN;
        if (!cmp_num(json_object_get(x, "latency_us"), "p99_us", &r.p99[i])) r.p99[i] = NAN;
    }
    return r;
}

static void run_intervals_free(run_intervals *r)
{
    free(r->t);
    free(r->t0);
    free(r->rate);
    free(r->p99);
}

/* Rate and p99 latency over time, one line per run, each interval's value held over its
 * interval. The rate axis is logarithmic when the runs' highest rates differ tenfold and
 * no interval completed nothing; the latency's unit is chosen from its values. */
static void over_time(cmp_buf *b, const cmp_set *set, const cmp_group *g, int gi,
                      const char *unit_name)
{
    int total = 0;
    for (int e = 0; e < g->nentries; e++)
        total += g->entries[e].nruns;
    svg_series rate[total > 0 ? total : 1], p99[total > 0 ? total : 1];
    run_intervals runs[total > 0 ? total : 1];
    char *names[total > 0 ? total : 1];
    double peaks[total > 0 ? total : 1];
    int ns = 0, np = 0;
    double warm_end = NAN;  /* the latest end of a warm-up interval over the runs */
    bool zero_rate = false; /* an interval that completed nothing: a log axis hides it */
    for (int e = 0; e < g->nentries; e++)
        for (int r = 0; r < g->entries[e].nruns; r++) {
            run_intervals ri = intervals_of(g->entries[e].runs[r]->doc, &warm_end);
            if (!ri.n) {
                run_intervals_free(&ri);
                continue;
            }
            runs[ns] = ri;
            names[ns] = run_name(&g->entries[e], r);
            const char *color = report_drive_color(set, g->entries[e].label);
            rate[ns] = (svg_series){.name = names[ns],
                                    .n = ri.n,
                                    .x = ri.t,
                                    .y = ri.rate,
                                    .color = color,
                                    .dashed = r > 0,
                                    .span_start = ri.t0};
            p99[ns] = (svg_series){.name = names[ns],
                                   .n = ri.n,
                                   .x = ri.t,
                                   .y = ri.p99,
                                   .color = color,
                                   .dashed = r > 0,
                                   .span_start = ri.t0};
            peaks[ns] = -INFINITY;
            for (int i = 0; i < ri.n; i++)
                if (isfinite(ri.rate[i])) peaks[ns] = fmax(peaks[ns], ri.rate[i]);
            zero_rate = zero_rate || !svg_log_drawable(ri.rate, ri.n);
            np += ri.n;
            ns++;
        }
    if (ns) {
        char id[64], title[200], ylabel[48];
        svg_scale rs = svg_differ_tenfold(peaks, ns) && !zero_rate ? SVG_LOG : SVG_LINEAR;
        chart_id(id, sizeof id, gi, "rate-time");
        snprintf(title, sizeof title, "%s over time (warm-up included, per interval%s)", unit_name,
                 rs == SVG_LOG ? "; logarithmic" : "");
        svg_line_chart_marked(b,
                              &(svg_chart){id, title, "seconds", unit_name, NULL, SVG_LINEAR, rs},
                              rate, ns, warm_end, "end of warm-up");
        double *all = sim_xmalloc(((size_t)np + 1) * sizeof *all);
        int k = 0;
        for (int s = 0; s < ns; s++)
            for (int i = 0; i < runs[s].n; i++)
                all[k++] = runs[s].p99[i];
        svg_unit u = svg_latency_unit(all, k);
        for (int s = 0; s < ns; s++)
            svg_to_unit(runs[s].p99, runs[s].n, u);
        svg_to_unit(all, k, u);
        chart_id(id, sizeof id, gi, "p99-time");
        snprintf(title, sizeof title, "p99 latency over time, %s", u.word);
        snprintf(ylabel, sizeof ylabel, "p99 latency (%s)", u.name);
        svg_line_chart_marked(
            b,
            &(svg_chart){id, title, "seconds", ylabel, u.name, SVG_LINEAR, svg_scale_for(all, k)},
            p99, ns, warm_end, "end of warm-up");
        free(all);
    }
    for (int i = 0; i < ns; i++) {
        free(names[i]);
        run_intervals_free(&runs[i]);
    }
}

/* One curve's points as a line: ordered by rate (so the line never doubles back), each
 * labelled with its share of the maximum ("50%"; "max" for the maximum-rate run), with
 * the mean and the p99 latency of each point. */
typedef struct curve_line {
    double *x, *y, *y99;
    char **labels;
    int n;
} curve_line;

static void point_label(const json_t *pt, char *buf, size_t len)
{
    double f;
    buf[0] = 0;
    if (json_is_true(json_object_get(pt, "max_rate_run")) ||
        (cmp_num(pt, "fraction", &f) && f == 0))
        snprintf(buf, len, "max");
    else if (cmp_num(pt, "fraction", &f))
        snprintf(buf, len, "%.0f%%", f * 100);
}

static bool is_max_rate_run(const json_t *pt)
{
    double f;
    return json_is_true(json_object_get(pt, "max_rate_run")) ||
           (cmp_num(pt, "fraction", &f) && f == 0);
}

/* The controlled points of a curve (or, with max_run, its maximum-rate run: an
 * uncontrolled run whose latency is measured differently, drawn apart as a marker). */
static curve_line curve_line_of(const json_t *curve, bool max_run)
{
    size_t n = json_array_size(curve);
    curve_line l = {sim_xmalloc((n + 1) * sizeof(double)), sim_xmalloc((n + 1) * sizeof(double)),
                    sim_xmalloc((n + 1) * sizeof(double)), sim_xcalloc(n + 1, sizeof(char *)), 0};
    for (size_t i = 0; i < n; i++) {
        const json_t *pt = json_array_get(curve, i);
        if (is_max_rate_run(pt) != max_run) continue;
        double x, y, y99;
        if (!cmp_point_rate(pt, &x)) x = NAN;
        if (!cmp_num(cmp_point_latency(pt), "mean_us", &y)) y = NAN;
        if (!cmp_num(cmp_point_latency(pt), "p99_us", &y99)) y99 = NAN;
        char label[32];
        point_label(pt, label, sizeof label);
        /* insertion by rate; points without a rate keep their place at the end */
        int k = l.n;
        while (k > 0 && !isnan(x) && (isnan(l.x[k - 1]) || l.x[k - 1] > x)) {
            l.x[k] = l.x[k - 1];
            l.y[k] = l.y[k - 1];
            l.y99[k] = l.y99[k - 1];
            l.labels[k] = l.labels[k - 1];
            k--;
        }
        l.x[k] = x;
        l.y[k] = y;
        l.y99[k] = y99;
        l.labels[k] = label[0] ? sim_xstrdup(label) : NULL;
        l.n++;
    }
    return l;
}

static void curve_line_free(curve_line *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->labels[i]);
    free(l->labels);
    free(l->x);
    free(l->y);
    free(l->y99);
}

/* Log latency when the lines span more than a decade (saturated points would flatten
 * the rest of the curve on a linear axis). */
static svg_scale latency_scale(const curve_line *lines, int n)
{
    int total = 0;
    for (int s = 0; s < n; s++)
        total += 2 * lines[s].n;
    double *v = sim_xmalloc(((size_t)total + 1) * sizeof *v);
    int k = 0;
    for (int s = 0; s < n; s++)
        for (int i = 0; i < lines[s].n; i++) {
            v[k++] = lines[s].y[i];
            v[k++] = lines[s].y99[i];
        }
    svg_scale sc = svg_scale_for(v, k);
    free(v);
    return sc;
}

/* Converts the lines' latencies (mean and p99, us) to the unit their largest value
 * calls for; returns it. */
static svg_unit lines_to_unit(curve_line *lines, int n)
{
    svg_unit u = {"us", "microseconds", 1};
    for (int s = 0; s < n; s++) {
        svg_unit a = svg_latency_unit(lines[s].y, lines[s].n),
                 p = svg_latency_unit(lines[s].y99, lines[s].n);
        if (a.us > u.us) u = a;
        if (p.us > u.us) u = p;
    }
    for (int s = 0; s < n; s++) {
        svg_to_unit(lines[s].y, lines[s].n, u);
        svg_to_unit(lines[s].y99, lines[s].n, u);
    }
    return u;
}

/* True when the highest rates of the lines (each drive's points and its maximum-rate
 * run) differ tenfold or more, the drives then being a decade apart, and no point has a
 * rate of 0 (which a log axis could not show). */
static bool peaks_differ_tenfold(const curve_line *lines, int n)
{
    double peaks[n > 0 ? n : 1];
    for (int s = 0; s < n; s++) {
        peaks[s] = NAN;
        for (int i = 0; i < lines[s].n; i++)
            if (isfinite(lines[s].x[i]) && !(lines[s].x[i] <= peaks[s])) peaks[s] = lines[s].x[i];
        if (!svg_log_drawable(lines[s].x, lines[s].n)) return false;
    }
    return svg_differ_tenfold(peaks, n);
}

/* The names of every curve in the group's results, each once. */
static int curve_names(const cmp_group *g, char **names, int max)
{
    int nnames = 0;
    for (int e = 0; e < g->nentries; e++)
        for (int r = 0; r < g->entries[e].nruns; r++) {
            const json_t *cv[16];
            char *cn[16];
            int nc = cmp_find_curves(g->entries[e].runs[r]->doc, cv, cn, 16);
            for (int i = 0; i < nc; i++) {
                bool seen = cmp_curve_is_oltp(cv[i]); /* drawn by report_oltp.c */
                for (int k = 0; k < nnames; k++)
                    seen = seen || !strcmp(names[k], cn[i]);
                if (!seen && nnames < max)
                    names[nnames++] = cn[i];
                else
                    free(cn[i]);
            }
        }
    return nnames;
}

static bool any_finite(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) return true;
    return false;
}

/* One curve's chart: per drive (per run when repeated) its mean latency, solid with
 * every point labelled, its p99, dashed in the same colour, and its maximum-rate run as
 * a ring labelled "max". */
static void curve_chart(cmp_buf *b, const cmp_set *set, const cmp_group *g, int gi, int c,
                        const char *name, int total)
{
    svg_series ser[3 * total];
    curve_line lines[2 * total];
    char *labels[3 * total];
    int nl = 0, ns = 0;
    for (int e = 0; e < g->nentries; e++)
        for (int r = 0; r < g->entries[e].nruns; r++) {
            const json_t *curve = cmp_curve_named(g->entries[e].runs[r]->doc, name);
            if (!curve || !json_array_size(curve)) continue;
            const char *color = report_drive_color(set, g->entries[e].label);
            char *run = run_name(&g->entries[e], r);
            curve_line *l = &lines[nl++];
            *l = curve_line_of(curve, false);
            labels[ns] = run;
            ser[ns++] = (svg_series){.name = run,
                                     .n = l->n,
                                     .x = l->x,
                                     .y = l->y,
                                     .labels = (const char *const *)l->labels,
                                     .color = color,
                                     .dashed = r > 0};
            if (any_finite(l->y99, l->n)) {
                labels[ns] = sim_xasprintf("%s p99", run);
                ser[ns] = (svg_series){.name = labels[ns],
                                       .n = l->n,
                                       .x = l->x,
                                       .y = l->y99,
                                       .color = color,
                                       .dashed = true};
                ns++;
            }
            curve_line *mx = &lines[nl++];
            *mx = curve_line_of(curve, true);
            if (!mx->n) continue;
            labels[ns] = sim_xasprintf("%s maximum-rate run", run);
            ser[ns] = (svg_series){.name = labels[ns],
                                   .n = mx->n,
                                   .x = mx->x,
                                   .y = mx->y,
                                   .labels = (const char *const *)mx->labels,
                                   .color = color,
                                   .unjoined = true};
            ns++;
        }
    if (ns) {
        char id[128], title[300], ylabel[32];
        svg_scale ys = latency_scale(lines, nl);
        svg_unit u = lines_to_unit(lines, nl);
        svg_scale xs = peaks_differ_tenfold(lines, nl) ? SVG_LOG : SVG_LINEAR;
        snprintf(id, sizeof id, "g%d-curve-%d", gi + 1, c + 1);
        snprintf(title, sizeof title,
                 "%s: mean (solid) and p99 (dashed) latency in %s against IOPS%s%s",
                 strcmp(name, "curve") ? name : g->workload, u.word,
                 ys == SVG_LOG ? ", log latency" : "", xs == SVG_LOG ? ", log IOPS" : "");
        snprintf(ylabel, sizeof ylabel, "latency (%s)", u.name);
        svg_line_chart(b, &(svg_chart){id, title, "IOPS", ylabel, u.name, xs, ys}, ser, ns);
    }
    for (int i = 0; i < ns; i++)
        free(labels[i]);
    for (int i = 0; i < nl; i++)
        curve_line_free(&lines[i]);
}

/* Latency against IOPS for every curve: one line per drive (per run when repeated). */
static void curves(cmp_buf *b, const cmp_set *set, const cmp_group *g, int gi)
{
    char *names[64];
    int nnames = curve_names(g, names, 64);
    int total = 0;
    for (int e = 0; e < g->nentries; e++)
        total += g->entries[e].nruns;
    for (int c = 0; c < nnames; c++) {
        curve_chart(b, set, g, gi, c, names[c], total);
        free(names[c]);
    }
}

static void group_section(cmp_buf *b, const cmp_set *set, const cmp_group *g, int gi)
{
    char heading[256];
    cmp_group_title(g, heading, sizeof heading);
    cmp_buf_printf(b, "<section class=\"group\" id=\"table-%d\"><h2>%d. ", gi + 1, gi + 1);
    cmp_buf_html(b, heading);
    cmp_buf_puts(b, "</h2>\n");
    report_config_brief(b, g);
    html_table(b, g);
    cmp_buf_puts(b, "<p>");
    if (g->rank_rule) {
        cmp_buf_html(b, g->rank_rule);
        cmp_buf_puts(b, "; &#9733; = best, others as a percentage of the best, run-to-run "
                        "range below when a drive has several runs.");
    }
    cmp_buf_puts(b, "</p>\n");
    if (g->service_limits) {
        cmp_buf_puts(b, "<p>Service level: judged against ");
        cmp_buf_html(b, g->service_limits);
        cmp_buf_puts(b, ".</p>\n");
    }
    if (g->service_note) {
        cmp_buf_puts(b, "<p class=\"note\">");
        cmp_buf_html(b, g->service_note);
        cmp_buf_puts(b, "</p>\n");
    }
    if (g->note) {
        cmp_buf_puts(b, "<p class=\"note\">Not comparable: ");
        cmp_buf_html(b, g->note);
        cmp_buf_puts(b, "</p>\n");
    }
    if (g->soft_note) {
        cmp_buf_puts(b, "<p class=\"note\">");
        cmp_buf_html(b, g->soft_note);
        cmp_buf_puts(b, "</p>\n");
    }
    if (g->warnings) {
        cmp_buf_puts(b, "<p class=\"warn\">");
        cmp_buf_html(b, g->warnings);
        cmp_buf_puts(b, "</p>\n");
    }
    int r = metric_index(g, "rate");
    bars(b, set, g, gi);
    percentile_curves(b, set, g, gi);
    over_time(b, set, g, gi, r >= 0 ? g->metrics[r].name : "rate");
    curves(b, set, g, gi);
    report_oltp_curves(b, set, g, gi);
    cmp_buf_puts(b, "</section>\n");
}

static int write_atomic(const char *path, const char *data, size_t len)
{
    int e = sim_atomic_write(path, data, len);
    if (e) sim_error("report: cannot write %s: %s", path, strerror(e));
    return e ? SIM_ERR : SIM_OK;
}

int report_write(const cmp_set *set, const char *path, const char *title)
{
    cmp_buf b = {0};
    if (!title) title = "appsim drive comparison";
    cmp_buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<title>");
    cmp_buf_html(&b, title);
    cmp_buf_printf(&b, "</title>\n<style>%s</style>\n</head><body>\n<h1>", css);
    cmp_buf_html(&b, title);
    time_t now = time(NULL);
    struct tm tm;
    char when[64];
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    cmp_buf_printf(&b, "</h1>\n<p>Written by appsim %s on %s from %d result file%s.</p>\n",
                   APPSIM_VERSION, when, set->nresults, set->nresults == 1 ? "" : "s");
    cmp_buf_puts(&b, "<nav><ol><li><a href=\"#summary\">Summary</a></li>");
    for (int i = 0; i < set->ngroups; i++) {
        char heading[256];
        cmp_group_title(&set->groups[i], heading, sizeof heading);
        cmp_buf_printf(&b, "<li><a href=\"#table-%d\">", i + 1);
        cmp_buf_html(&b, heading);
        cmp_buf_printf(&b, "</a> (%d drive%s)</li>", set->groups[i].nentries,
                       set->groups[i].nentries == 1 ? "" : "s");
    }
    cmp_buf_puts(&b, "<li><a href=\"#drives\">Drives and hosts</a></li>"
                     "<li><a href=\"#configs\">Configurations</a></li></ol></nav>\n");
    report_summary(&b, set);
    for (int i = 0; i < set->ngroups; i++)
        group_section(&b, set, &set->groups[i], i);
    report_drives(&b, set);
    report_configurations(&b, set);
    cmp_buf_puts(&b, "</body></html>\n");
    int rc = write_atomic(path, b.s, b.len);
    cmp_buf_free(&b);
    return rc;
}

static const char usage_text[] =
    "appsim report RESULT.json|DIR... -o report.html [--label A,B,...] [--title TEXT] [--ranks]\n"
    "Writes one self-contained HTML file (no network, printable): a summary of the\n"
    "drives side by side, then per table the comparison and SVG charts (throughput and\n"
    "latency per drive, latency percentile curves from the merged histograms, throughput\n"
    "and p99 over time, mean and p99 latency against IOPS for every rate curve, per\n"
    "drive latency against achieved TPS for every OLTP curve with its limits drawn), the\n"
    "drives' identities side by side and the full configurations. A directory stands for\n"
    "its *.json files (a suite's output; suite.json is skipped). With --ranks, the ranks\n"
    "of an MPI job's result are the drives.";

static int report_main(int argc, char **argv)
{
    const char *output = NULL, *label = NULL, *title = NULL;
    bool ranks = false;
    sim_opt opts[] = {
        {.name = "output",
         .kind = SIM_OPT_STRING,
         .dst = &output,
         .output = SIM_OUTPUT_REPLACE,
         .help = "the HTML file to write (-o); required"},
        {.name = "label",
         .kind = SIM_OPT_STRING,
         .dst = &label,
         .help = "comma-separated drive labels, one per file or directory in order "
                 "(default: from the result)"},
        {.name = "title", .kind = SIM_OPT_STRING, .dst = &title, .help = "heading of the report"},
        {.name = "ranks",
         .kind = SIM_OPT_FLAG,
         .dst = &ranks,
         .help = "show the ranks of each MPI job's result as drives, labelled by rank, host and "
                 "target (docs/mpi.md)"},
        SIM_OPT_END,
    };
    char *files[MAX_FILES];
    int nfiles = 0;
    char **av = cmp_argv_short_o(argc, argv);
    int rc = sim_opts_parse("report", opts, argc, av, files, MAX_FILES, &nfiles, usage_text);
    free(av);
    if (rc == SIM_OPTS_HELP_SHOWN) return SIM_EXIT_OK;
    if (rc) return SIM_EXIT_USAGE;
    if (!nfiles) {
        sim_error("report: give one or more result files (written by --json)");
        return SIM_EXIT_USAGE;
    }
    if (!output || !*output) {
        sim_error("report: say where to write the report with -o FILE.html");
        return SIM_EXIT_USAGE;
    }
    cmp_set set;
    rc = cmp_build_labeled(&set, "report", files, nfiles, label, ranks, CMP_SERIES_CHARTED);
    if (rc) return rc;
    rc = report_write(&set, output, title);
    cmp_set_free(&set);
    if (rc) return SIM_EXIT_FAIL;
    sim_info("report: wrote %s", output);
    return SIM_EXIT_OK;
}

static const sim_command report_command = {
    .name = "report",
    .summary = "write an HTML report with charts comparing result files",
    .main = report_main,
};
SIM_REGISTER_COMMAND(report_command)
