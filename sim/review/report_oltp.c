/*
 * sim/review/report_oltp.c: the report's chart of an OLTP curve (`tpcc run --curve`,
 * `sysbench run --curve`, user steps): per drive (per run when a drive has several) the
 * latency of every point against the throughput it achieved, on a logarithmic latency
 * axis, with the service-level limits drawn as horizontal lines.
 *
 * What is drawn, in the drive's colour:
 *   - the mean latency as a solid line and the p99 as a dashed one, through the
 *     open-loop points in order of offered rate (user steps: in order of users), so the
 *     line bends back where a point achieved less than the one before;
 *   - every other limited percentile of all transactions as a dotted line, and of the
 *     limits on transaction types (TPC-C sets one per type) the type latency that comes
 *     closest to its limit, dash-dotted, so the chart stays readable;
 *   - points that did not sustain their offered rate as open rings;
 *   - a rate curve's saturation point (closed loop: its latency does not count queueing
 *     from an intended start) apart, as unjoined rings labelled "max";
 *   - the limits as dashed horizontal lines (one per percentile and value), the
 *     service-level TPS as a vertical dashed line.
 */
#include "sim/review/review_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 8 /* mean, p99 and up to six limits on other latencies */

/* One latency line: where in a point its value is (ms), and how it is drawn. */
typedef struct lat_line {
    char name[96];
    char key[32];  /* latency_ms key ("p99"), or per_type's "<key>_ms" */
    char type[64]; /* per_type entry, or "" for all transactions */
    const char *dash;
} lat_line;

static bool point_latency_ms(const json_t *pt, const lat_line *l, double *v)
{
    if (!l->type[0]) return cmp_num(json_object_get(pt, "latency_ms"), l->key, v);
    char k[48];
    snprintf(k, sizeof k, "%s_ms", l->key);
    return cmp_num(json_object_get(json_object_get(pt, "per_type"), l->type), k, v);
}

static lat_line limit_line(const json_t *lim)
{
    double pct = 0;
    cmp_num(lim, "percentile", &pct);
    lat_line l = {.dash = "2 3"};
    cmp_percentile_key(pct, l.key, sizeof l.key);
    const char *type = cmp_str(lim, "type");
    snprintf(l.type, sizeof l.type, "%s", type ? type : "");
    snprintf(l.name, sizeof l.name, "%s%s%s", l.type, l.type[0] ? " " : "", l.key);
    return l;
}

/* How close the curve's points come to the limit: their highest latency over it. */
static double closest_ratio(const json_t *pts, const json_t *lim)
{
    lat_line l = limit_line(lim);
    double limit, worst = -1, v;
    if (!cmp_num(lim, "limit_ms", &limit) || limit <= 0) return -1;
    size_t i;
    json_t *pt;
    json_array_foreach((json_t *)pts, i, pt) if (point_latency_ms(pt, &l, &v) && v / limit > worst)
        worst = v / limit;
    return worst;
}

/* The lines of a result: mean, p99, every limited percentile of all transactions not yet
 * drawn, and of the limits on transaction types (TPC-C sets one per type) the one the
 * points come closest to, so that the chart stays readable. */
static int lines_of(const json_t *doc, const json_t *pts, lat_line *lines)
{
    int n = 0;
    lines[n++] = (lat_line){"mean", "mean", "", NULL};
    lines[n++] = (lat_line){"p99", "p99", "", "6 4"};
    const json_t *limits = cmp_service_limits(doc), *closest = NULL;
    double closest_r = -1;
    size_t i;
    json_t *lim;
    json_array_foreach((json_t *)limits, i, lim)
    {
        if (cmp_str(lim, "type")) {
            double r = closest_ratio(pts, lim);
            if (r > closest_r) closest_r = r, closest = lim;
            continue;
        }
        lat_line l = limit_line(lim);
        bool seen = false;
        for (int k = 0; k < n; k++)
            seen = seen || (!strcmp(lines[k].key, l.key) && !lines[k].type[0]);
        if (!seen && n < MAX_LINES - 1) lines[n++] = l;
    }
    if (closest) {
        lines[n] = limit_line(closest);
        lines[n++].dash = "8 3 2 3";
    }
    return n;
}

/* The points of a curve joined by a line, in order of offered rate (users for user
 * steps); the saturation point is not among them. */
static int joined_points(const json_t *pts, const json_t **out)
{
    int n = 0;
    size_t i;
    json_t *pt;
    json_array_foreach((json_t *)pts, i, pt)
    {
        if (json_is_true(json_object_get(pt, "max_rate_run"))) continue;
        double key = NAN, k2;
        if (!cmp_num(pt, "offered_tps", &key)) cmp_num(pt, "vusers", &key);
        int j = n;
        while (j > 0) {
            const json_t *q = out[j - 1];
            if (!cmp_num(q, "offered_tps", &k2) && !cmp_num(q, "vusers", &k2)) k2 = NAN;
            if (isnan(key) || !(k2 > key)) break;
            out[j] = out[j - 1];
            j--;
        }
        out[j] = pt;
        n++;
    }
    return n;
}

static void point_label(const json_t *pt, const char *kind, char *buf, size_t len)
{
    double v;
    bool sustained = !json_is_false(json_object_get(pt, "sustained"));
    const char *tail = sustained ? "" : ", not sustained";
    if (kind && !strcmp(kind, "users") && cmp_num(pt, "vusers", &v))
        snprintf(buf, len, "%g user%s%s", v, v == 1 ? "" : "s", tail);
    else if (cmp_num(pt, "percent", &v))
        snprintf(buf, len, "%g%%%s", v, tail);
    else
        snprintf(buf, len, "%s", sustained ? "" : "not sustained");
}

/* Arrays of one chart, freed together. */
typedef struct oltp_chart {
    double *x, *y[MAX_LINES], *sx, *sy;
    bool *hollow;
    char **labels;
    int n, nsat;
} oltp_chart;

static void oltp_chart_free(oltp_chart *c, int nlines)
{
    free(c->x);
    for (int k = 0; k < nlines; k++)
        free(c->y[k]);
    free(c->sx);
    free(c->sy);
    free(c->hollow);
    for (int i = 0; i < c->n; i++)
        free(c->labels[i]);
    free(c->labels);
}

/* The chart's values: latencies in microseconds (the unit is chosen later). */
static void fill_chart(oltp_chart *c, const json_t *curve, const lat_line *lines, int nl)
{
    const json_t *pts = json_object_get(curve, "points");
    size_t np = json_array_size(pts);
    const json_t **order = sim_xmalloc((np + 1) * sizeof *order);
    c->n = joined_points(pts, order);
    c->x = sim_xmalloc((np + 1) * sizeof *c->x);
    c->hollow = sim_xcalloc(np + 1, sizeof *c->hollow);
    c->labels = sim_xcalloc(np + 1, sizeof *c->labels);
    for (int k = 0; k < nl; k++)
        c->y[k] = sim_xmalloc((np + 1) * sizeof *c->y[k]);
    const char *kind = cmp_str(curve, "kind");
    for (int i = 0; i < c->n; i++) {
        const json_t *pt = order[i];
        if (!cmp_num(pt, "achieved_tps", &c->x[i])) c->x[i] = NAN;
        c->hollow[i] = json_is_false(json_object_get(pt, "sustained"));
        char label[96];
        point_label(pt, kind, label, sizeof label);
        c->labels[i] = label[0] ? sim_xstrdup(label) : NULL;
        for (int k = 0; k < nl; k++) {
            double ms;
            c->y[k][i] = point_latency_ms(pt, &lines[k], &ms) ? ms * 1e3 : NAN;
        }
    }
    free(order);
    /* the saturation point: one ring per line at its own achieved rate */
    c->sx = sim_xmalloc((size_t)nl * sizeof *c->sx);
    c->sy = sim_xmalloc((size_t)nl * sizeof *c->sy);
    c->nsat = 0;
    size_t i;
    json_t *pt;
    json_array_foreach((json_t *)pts, i, pt)
    {
        double x, ms;
        if (!json_is_true(json_object_get(pt, "max_rate_run")) || c->nsat ||
            !cmp_num(pt, "achieved_tps", &x))
            continue;
        for (int k = 0; k < nl; k++) {
            c->sx[k] = x;
            c->sy[k] = point_latency_ms(pt, &lines[k], &ms) ? ms * 1e3 : NAN;
        }
        c->nsat = nl;
    }
}

/* Limits of one percentile and value are one line: the first is labelled with all of
 * them ("p90 <= 5 s: new_order, payment"), the others are dropped (NAN). */
static void merge_equal_limits(const json_t *limits, double *us, char (*text)[160], int n)
{
    double pct[n > 0 ? n : 1];
    for (int i = 0; i < n; i++)
        if (!cmp_num(json_array_get(limits, (size_t)i), "percentile", &pct[i])) pct[i] = NAN;
    for (int i = 0; i < n; i++) {
        char key[32], who[128] = "";
        size_t k = 0;
        int same = 0;
        for (int j = i; j < n && isfinite(us[i]); j++) {
            if (us[j] != us[i] || pct[j] != pct[i]) continue;
            const char *t = cmp_str(json_array_get(limits, (size_t)j), "type");
            if (k < sizeof who)
                k += (size_t)snprintf(who + k, sizeof who - k, "%s%s", k ? ", " : "",
                                      t ? t : "all transactions");
            if (j > i) us[j] = NAN;
            same++;
        }
        if (same < 2) continue;
        cmp_percentile_key(pct[i], key, sizeof key);
        const char *lim = strstr(text[i], "<= ");
        char merged[160];
        /* A label longer than the line's room is cut; the line itself is drawn whole. */
        if (snprintf(merged, sizeof merged, "%s %s: %s", key, lim ? lim : "", who) < 0) continue;
        memcpy(text[i], merged, sizeof merged);
    }
}

/* The unit the chart's latencies and limits are drawn in (from their largest). */
static svg_unit chart_unit(const oltp_chart *c, int nl, const double *limits_us, int nlim)
{
    svg_unit u = svg_latency_unit(limits_us, nlim);
    for (int k = 0; k < nl; k++) {
        svg_unit a = svg_latency_unit(c->y[k], c->n);
        if (a.us > u.us) u = a;
    }
    svg_unit s = svg_latency_unit(c->sy, c->nsat);
    return s.us > u.us ? s : u;
}

/* One run's chart. */
static void run_chart(cmp_buf *b, const char *id, const char *who, const char *color,
                      const json_t *doc, const json_t *curve)
{
    lat_line lines[MAX_LINES];
    int nl = lines_of(doc, json_object_get(curve, "points"), lines);
    oltp_chart c = {0};
    fill_chart(&c, curve, lines, nl);
    const json_t *limits = cmp_service_limits(doc);
    int nlim = (int)json_array_size(limits);
    double lim_us[nlim > 0 ? nlim : 1];
    char lim_text[nlim > 0 ? nlim : 1][160];
    for (int i = 0; i < nlim; i++) {
        const json_t *l = json_array_get(limits, (size_t)i);
        lim_us[i] = cmp_num(l, "limit_ms", &lim_us[i]) ? lim_us[i] * 1e3 : NAN;
        cmp_limit_label(l, lim_text[i], sizeof lim_text[i]);
    }
    merge_equal_limits(limits, lim_us, lim_text, nlim);
    svg_unit u = chart_unit(&c, nl, lim_us, nlim);
    svg_series ser[MAX_LINES + 1];
    int ns = 0;
    for (int k = 0; k < nl; k++) {
        svg_to_unit(c.y[k], c.n, u);
        ser[ns++] = (svg_series){.name = lines[k].name,
                                 .n = c.n,
                                 .x = c.x,
                                 .y = c.y[k],
                                 .labels = k == 0 ? (const char *const *)c.labels : NULL,
                                 .color = color,
                                 .dash = lines[k].dash,
                                 .hollow = c.hollow};
    }
    static const char *const max_label[] = {"max", NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    if (c.nsat) {
        svg_to_unit(c.sy, c.nsat, u);
        ser[ns++] = (svg_series){.name = "saturation (max)",
                                 .n = c.nsat,
                                 .x = c.sx,
                                 .y = c.sy,
                                 .labels = max_label,
                                 .color = color,
                                 .unjoined = true};
    }
    svg_mark marks[nlim + 1];
    int nm = 0;
    for (int i = 0; i < nlim; i++)
        if (isfinite(lim_us[i])) marks[nm++] = (svg_mark){true, lim_us[i] / u.us, lim_text[i]};
    double sl;
    char sl_text[64];
    if (cmp_num(json_object_get(doc, "service_level"), "tps", &sl)) {
        char v[32];
        cmp_format_value(v, sizeof v, sl, "tps");
        snprintf(sl_text, sizeof sl_text, "service level %s TPS", v);
        marks[nm++] = (svg_mark){false, sl, sl_text};
    }
    char title[600], ylabel[48];
    snprintf(title, sizeof title, "%s: latency in %s (logarithmic) against achieved TPS", who,
             u.word);
    snprintf(ylabel, sizeof ylabel, "latency (%s)", u.name);
    svg_line_chart_marks(
        b, &(svg_chart){id, title, "achieved TPS", ylabel, u.name, SVG_LINEAR, SVG_LOG}, ser, ns,
        marks, nm);
    oltp_chart_free(&c, nl);
}

static const char how_to_read[] =
    "<p>Latency against achieved TPS, one chart per drive: the mean solid, the p99 dashed, "
    "another limited percentile dotted, the transaction type closest to its limit "
    "dash-dotted; points in order of offered rate (user steps: of "
    "users), labelled with their percent of the maximum; open rings did not sustain their "
    "offered rate; rings labelled max are the saturation point (closed loop, no queueing "
    "counted); dashed red lines are the service-level limits, the dashed grey line the "
    "service-level TPS.</p>\n";

void report_oltp_curves(cmp_buf *b, const cmp_set *set, const cmp_group *g, int gi)
{
    int k = 0;
    for (int e = 0; e < g->nentries; e++)
        for (int r = 0; r < g->entries[e].nruns; r++) {
            const cmp_entry *en = &g->entries[e];
            const json_t *doc = en->runs[r]->doc;
            const json_t *curve = cmp_oltp_curve(doc);
            if (!curve) continue;
            char id[64], who[256];
            snprintf(id, sizeof id, "g%d-oltp-%d", gi + 1, ++k);
            if (en->nruns > 1)
                snprintf(who, sizeof who, "%s (run %d)", en->label, r + 1);
            else
                snprintf(who, sizeof who, "%s", en->label);
            run_chart(b, id, who, report_drive_color(set, en->label), doc, curve);
        }
    if (k) cmp_buf_puts(b, how_to_read);
}
