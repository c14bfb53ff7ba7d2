/*
 * sim/review/report_svg.c: inline SVG charts for the HTML report: grouped bar charts and line
 * charts with linear, logarithmic or "nines" (percentile) axes. No scripts, no external
 * fonts: the charts are static markup that prints as drawn.
 *
 * Every drawn datum carries its value in data-* attributes (see compare_internal.h), so
 * what the browser draws can be checked against the result files.
 */
#include "sim/review/review_internal.h"

#include <math.h>
#include <string.h>

/* Drawn across the page width (the CSS scales the view box to it). */
#define W 1060.0
#define H 360.0
#define PX0 78.0 /* plot area */
#define PX1 820.0
#define PY0 40.0
#define PY1 300.0
#define LEGEND_X 840.0

static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                      "#E69F00", "#56B4E9", "#8C6D1F", "#000000"};
#define NPALETTE 8

const char *svg_color(int i)
{
    return palette[(i < 0 ? 0 : i) % NPALETTE];
}

svg_scale svg_scale_for(const double *v, int n)
{
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > 0) {
            lo = fmin(lo, v[i]);
            hi = fmax(hi, v[i]);
        }
    return hi > 10 * lo ? SVG_LOG : SVG_LINEAR;
}

svg_unit svg_latency_unit(const double *us, int n)
{
    double hi = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(us[i]) && us[i] > hi) hi = us[i];
    if (hi >= 1e6) return (svg_unit){"s", "seconds", 1e6};
    if (hi >= 1e3) return (svg_unit){"ms", "milliseconds", 1e3};
    return (svg_unit){"us", "microseconds", 1};
}

void svg_to_unit(double *v, int n, svg_unit u)
{
    for (int i = 0; i < n; i++)
        v[i] /= u.us;
}

bool svg_differ_tenfold(const double *v, int n)
{
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > 0) {
            lo = fmin(lo, v[i]);
            hi = fmax(hi, v[i]);
        }
    return hi >= 10 * lo;
}

bool svg_log_drawable(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] <= 0) return false;
    return true;
}

typedef struct axis {
    svg_scale scale;
    double lo, hi; /* in transformed units */
} axis;

static double tf(svg_scale s, double v)
{
    switch (s) {
    case SVG_LOG:
        return log10(v);
    case SVG_NINES:
        return -log10(1.0 - v / 100.0);
    case SVG_LINEAR:
        break;
    }
    return v;
}

static bool valid(svg_scale s, double v)
{
    if (!isfinite(v)) return false;
    if (s == SVG_LOG) return v > 0;
    if (s == SVG_NINES) return v > 0 && v < 100;
    return true;
}

static double nice_step(double range)
{
    if (range <= 0) return 1;
    double raw = range / 5, mag = pow(10, floor(log10(raw))), norm = raw / mag;
    return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

/* The largest 1, 2 or 5 times a power of ten that is <= v (v > 0), and the smallest
 * that is >= v. */
static double step125_at_most(double v)
{
    double mag = pow(10, floor(log10(v)));
    double m = v / mag;
    return (m >= 5 ? 5 : m >= 2 ? 2 : 1) * mag;
}

static double step125_at_least(double v)
{
    double mag = pow(10, floor(log10(v)));
    double m = v / mag * (1 - 1e-12);
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * mag;
}

/* The ticks of a logarithmic axis: 1, 2 and 5 per decade when it spans two decades or
 * less, else the decades. Returns the count (at most max). */
static int log_ticks(const axis *a, double *ticks, int max)
{
    static const int mults[] = {1, 2, 5};
    bool dense = a->hi - a->lo <= 2 + 1e-9;
    int n = 0;
    for (double e = floor(a->lo); e <= ceil(a->hi) + 1e-9; e++)
        for (int k = 0; k < (dense ? 3 : 1); k++) {
            double v = mults[k] * pow(10, e), t = log10(v);
            if (t < a->lo - 1e-9 || t > a->hi + 1e-9 || n == max) continue;
            ticks[n++] = v;
        }
    return n;
}

static void fit_axis(axis *a, double mn, double mx, bool from_zero)
{
    if (!(mn <= mx)) {
        mn = 0;
        mx = 1;
    }
    switch (a->scale) {
    case SVG_LOG:
        a->lo = floor(log10(mn));
        a->hi = ceil(log10(mx));
        if (a->hi <= a->lo) a->hi = a->lo + 1;
        /* Within three decades the bounds are the nearest 1, 2 or 5 around the values, so
         * that 1,500 does not stretch the axis to 10,000. */
        if (log10(step125_at_least(mx)) - log10(step125_at_most(mn)) <= 3 + 1e-9) {
            a->lo = log10(step125_at_most(mn));
            a->hi = log10(step125_at_least(mx));
            if (a->hi <= a->lo) a->hi = a->lo + log10(2);
        }
        return;
    case SVG_NINES:
        a->lo = fmin(tf(SVG_NINES, 50), tf(SVG_NINES, mn));
        a->hi = fmax(ceil(tf(SVG_NINES, mx) - 1e-9), a->lo + 1);
        return;
    case SVG_LINEAR:
        if (from_zero && mn > 0) mn = 0;
        if (mx == mn) mx = mn + (mn == 0 ? 1 : fabs(mn) * 0.1);
        double step = nice_step(mx - mn);
        a->lo = floor(mn / step) * step;
        a->hi = ceil(mx / step) * step;
        return;
    }
}

static double px(const axis *a, double v, double p0, double p1)
{
    double t = tf(a->scale, v);
    return p0 + (t - a->lo) / (a->hi - a->lo) * (p1 - p0);
}

static void tick_label(char *buf, size_t len, double v)
{
    if (fabs(v) >= 1e4) {
        cmp_format_value(buf, len, round(v), "");
    } else if (fabs(v) >= 1 || v == 0) {
        snprintf(buf, len, "%.6g", v);
    } else {
        /* 0.00001, not 1e-05: six decimals, trailing zeros dropped */
        snprintf(buf, len, "%.6f", v);
        char *end = buf + strlen(buf) - 1;
        while (end > buf && *end == '0')
            *end-- = 0;
    }
}

static const char *scale_name(svg_scale s)
{
    return s == SVG_LOG ? "log" : s == SVG_NINES ? "nines" : "linear";
}

/* The chart's scales are attributes too (data-xscale, data-yscale), so a check can tell a
 * logarithmic axis from a linear one without reading the ticks. */
static void frame(cmp_buf *b, const char *id, const char *title, svg_scale xs, svg_scale ys,
                  const char *yunit)
{
    cmp_buf_printf(b,
                   "<svg class=\"chart\" data-chart=\"%s\" data-xscale=\"%s\" data-yscale=\"%s\" "
                   "data-yunit=\"",
                   id, scale_name(xs), scale_name(ys));
    cmp_buf_html(b, yunit ? yunit : "");
    cmp_buf_printf(b,
                   "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                   "viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
                   W, H, W, H);
    cmp_buf_puts(b, "<title>");
    cmp_buf_html(b, title);
    cmp_buf_puts(b, "</title>\n");
    cmp_buf_printf(b, "<text class=\"title\" x=\"%.0f\" y=\"22\">", PX0);
    cmp_buf_html(b, title);
    cmp_buf_puts(b, "</text>\n");
    cmp_buf_printf(b,
                   "<rect class=\"plot\" x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
                   "fill=\"none\" stroke=\"#888\"/>\n",
                   PX0, PY0, PX1 - PX0, PY1 - PY0);
}

/* Horizontal grid lines and labels of the y axis. */
static void y_ticks(cmp_buf *b, const axis *a, const char *label)
{
    if (a->scale == SVG_LOG) {
        double ticks[64];
        int n = log_ticks(a, ticks, 64);
        for (int i = 0; i < n; i++) {
            double y = px(a, ticks[i], PY1, PY0);
            char t[48];
            tick_label(t, sizeof t, ticks[i]);
            cmp_buf_printf(b,
                           "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"#ddd\"/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
                           "text-anchor=\"end\">%s</text>\n",
                           PX0, PX1, y, y, PX0 - 4, y + 4, t);
        }
    } else {
        double step = nice_step(a->hi - a->lo);
        for (double v = a->lo; v <= a->hi + step * 1e-6; v += step) {
            double y = px(a, v, PY1, PY0);
            char t[48];
            tick_label(t, sizeof t, fabs(v) < step * 1e-9 ? 0 : v);
            cmp_buf_printf(b,
                           "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"#ddd\"/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
                           "text-anchor=\"end\">%s</text>\n",
                           PX0, PX1, y, y, PX0 - 4, y + 4, t);
        }
    }
    cmp_buf_printf(b,
                   "<text class=\"axis\" transform=\"translate(16 %.0f) rotate(-90)\" "
                   "text-anchor=\"middle\">",
                   (PY0 + PY1) / 2);
    cmp_buf_html(b, label);
    cmp_buf_puts(b, "</text>\n");
}

static void x_ticks(cmp_buf *b, const axis *a, const char *label)
{
    if (a->scale == SVG_NINES) {
        for (double e = fmax(1, ceil(a->lo)); e <= a->hi + 1e-9; e++) {
            double p = 100.0 * (1 - pow(10, -e));
            double x = PX0 + (e - a->lo) / (a->hi - a->lo) * (PX1 - PX0);
            cmp_buf_printf(b,
                           "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"#ddd\"/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
                           "text-anchor=\"middle\">p%g</text>\n",
                           x, x, PY0, PY1, x, PY1 + 16, p);
        }
        if (a->lo < 0.31) {
            double x = px(a, 50, PX0, PX1);
            cmp_buf_printf(b,
                           "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
                           "text-anchor=\"middle\">p50</text>\n",
                           x, PY1 + 16);
        }
    } else if (a->scale == SVG_LOG) {
        double ticks[64];
        int n = log_ticks(a, ticks, 64);
        for (int i = 0; i < n; i++) {
            double x = px(a, ticks[i], PX0, PX1);
            char t[48];
            tick_label(t, sizeof t, ticks[i]);
            cmp_buf_printf(b,
                           "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"#ddd\"/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
                           "text-anchor=\"middle\">%s</text>\n",
                           x, x, PY0, PY1, x, PY1 + 16, t);
        }
    } else {
        double step = nice_step(a->hi - a->lo);
        for (double v = a->lo; v <= a->hi + step * 1e-6; v += step) {
            double x = px(a, v, PX0, PX1);
            char t[48];
            tick_label(t, sizeof t, fabs(v) < step * 1e-9 ? 0 : v);
            cmp_buf_printf(b,
                           "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"#ddd\"/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
                           "text-anchor=\"middle\">%s</text>\n",
                           x, x, PY0, PY1, x, PY1 + 16, t);
        }
    }
    cmp_buf_printf(b, "<text class=\"axis\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
                   (PX0 + PX1) / 2, PY1 + 38);
    cmp_buf_html(b, label);
    cmp_buf_puts(b, "</text>\n");
}

typedef struct legend_item {
    const char *name, *color;
    bool dashed;
    double opacity;
    const char *dash; /* the line's own pattern, or NULL for the default dashes */
} legend_item;

static void legend(cmp_buf *b, const legend_item *items, int n)
{
    for (int i = 0; i < n; i++) {
        double y = PY0 + 8 + i * 18;
        if (y > H - 10) break;
        if (items[i].dashed)
            cmp_buf_printf(b,
                           "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" "
                           "stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\"/>",
                           LEGEND_X, LEGEND_X + 14, y - 4, y - 4, items[i].color,
                           items[i].dash ? items[i].dash : "5 3");
        else
            cmp_buf_printf(b,
                           "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\" "
                           "fill-opacity=\"%.2f\"/>",
                           LEGEND_X, y - 10, items[i].color, items[i].opacity);
        cmp_buf_printf(b, "<text class=\"legend\" x=\"%.0f\" y=\"%.0f\">", LEGEND_X + 18, y);
        cmp_buf_html(b, items[i].name);
        cmp_buf_puts(b, "</text>\n");
    }
}

/* Bars within a drive's group are told apart by shade (mean darkest). */
static double shade(int s, int n)
{
    return n <= 1 ? 1.0 : 1.0 - 0.6 * s / (n - 1);
}

static void bar_range(cmp_buf *b, const svg_bars *c, const axis *ya, int cat, int s, double x,
                      double w)
{
    int k = cat * c->nseries + s;
    if (!c->lo || !c->hi || !(c->lo[k] < c->hi[k]) || !valid(ya->scale, c->lo[k])) return;
    double y0 = px(ya, c->lo[k], PY1, PY0), y1 = px(ya, c->hi[k], PY1, PY0), xm = x + w / 2;
    cmp_buf_printf(b,
                   "<g stroke=\"#222\" stroke-width=\"1.2\"><line class=\"range\" x1=\"%.2f\" "
                   "x2=\"%.2f\" y1=\"%.2f\" y2=\"%.2f\" data-series=\"",
                   xm, xm, y0, y1);
    cmp_buf_html(b, c->series[s]);
    cmp_buf_puts(b, "\" data-cat=\"");
    cmp_buf_html(b, c->cats[cat]);
    cmp_buf_printf(b,
                   "\" data-min=\"%.10g\" data-max=\"%.10g\"/><line x1=\"%.2f\" x2=\"%.2f\" "
                   "y1=\"%.2f\" y2=\"%.2f\"/><line x1=\"%.2f\" x2=\"%.2f\" y1=\"%.2f\" "
                   "y2=\"%.2f\"/></g>\n",
                   c->lo[k], c->hi[k], xm - w / 4, xm + w / 4, y0, y0, xm - w / 4, xm + w / 4, y1,
                   y1);
}

static void bar_axis(const svg_bars *c, axis *ya)
{
    double mn = INFINITY, mx = 0;
    for (int i = 0; i < c->ncats * c->nseries; i++) {
        double v = c->values[i], hi = c->hi ? c->hi[i] : NAN, lo = c->lo ? c->lo[i] : NAN;
        if (isfinite(hi) && hi > v) v = hi;
        if (isfinite(v) && v > mx) mx = v;
        if (isfinite(c->values[i]) && c->values[i] > 0) mn = fmin(mn, c->values[i]);
        if (isfinite(lo) && lo > 0) mn = fmin(mn, lo);
    }
    ya->scale = c->ys == SVG_LOG && mn < INFINITY ? SVG_LOG : SVG_LINEAR;
    fit_axis(ya, ya->scale == SVG_LOG ? mn : 0, mx, true);
}

void svg_bar_chart(cmp_buf *b, const svg_bars *c)
{
    axis ya = {SVG_LINEAR, 0, 0};
    bar_axis(c, &ya);
    frame(b, c->id, c->title, SVG_LINEAR, ya.scale, c->data_unit);
    y_ticks(b, &ya, c->yunit);
    int ncats = c->ncats, nseries = c->nseries;
    double slot = (PX1 - PX0) / (ncats > 0 ? ncats : 1);
    double bw = slot * 0.8 / (nseries > 0 ? nseries : 1);
    for (int cat = 0; cat < ncats; cat++) {
        double x0 = PX0 + cat * slot + slot * 0.1;
        const char *color = c->cat_colors ? c->cat_colors[cat] : svg_color(cat);
        for (int s = 0; s < nseries; s++) {
            double v = c->values[cat * nseries + s];
            if (!valid(ya.scale, v)) continue;
            double y = px(&ya, v, PY1, PY0);
            cmp_buf_printf(b,
                           "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                           "height=\"%.2f\" fill=\"%s\" fill-opacity=\"%.2f\" data-series=\"",
                           x0 + s * bw, y, bw * 0.92, PY1 - y, color, shade(s, nseries));
            cmp_buf_html(b, c->series[s]);
            cmp_buf_puts(b, "\" data-cat=\"");
            cmp_buf_html(b, c->cats[cat]);
            cmp_buf_printf(b, "\" data-value=\"%.10g\"><title>", v);
            char vt[64];
            cmp_format_value(vt, sizeof vt, v, c->yunit);
            cmp_buf_html(b, c->cats[cat]);
            cmp_buf_printf(b, " %s: %s</title></rect>\n", c->series[s], vt);
            bar_range(b, c, &ya, cat, s, x0 + s * bw, bw * 0.92);
            if (nseries > 1) {
                cmp_buf_printf(b,
                               "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
                               "text-anchor=\"middle\" font-size=\"9\">",
                               x0 + s * bw + bw * 0.46, PY1 + 12);
                cmp_buf_html(b, c->series[s]);
                cmp_buf_puts(b, "</text>\n");
            }
        }
        cmp_buf_printf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                       PX0 + cat * slot + slot / 2, PY1 + (nseries > 1 ? 28 : 16));
        cmp_buf_html(b, c->cats[cat]);
        cmp_buf_puts(b, "</text>\n");
    }
    legend_item items[ncats + nseries + 1];
    int ni = 0;
    for (int cat = 0; cat < ncats; cat++)
        items[ni++] = (legend_item){
            c->cats[cat], c->cat_colors ? c->cat_colors[cat] : svg_color(cat), false, 1.0, NULL};
    for (int s = 0; nseries > 1 && s < nseries; s++)
        items[ni++] = (legend_item){c->series[s], "#555", false, shade(s, nseries), NULL};
    bool ranges = false;
    for (int i = 0; c->lo && c->hi && i < ncats * nseries; i++)
        ranges = ranges || c->lo[i] < c->hi[i];
    if (ranges) items[ni++] = (legend_item){"run-to-run range (min-max)", "#222", true, 1.0, NULL};
    legend(b, items, ni);
    cmp_buf_puts(b, "</svg>\n");
}

/* The series' line through its valid points, in their order. */
static void series_line(cmp_buf *b, const svg_series *sr, const char *color, svg_scale xs,
                        svg_scale ys, const axis *xa, const axis *ya)
{
    cmp_buf_printf(b,
                   "<polyline class=\"line\" fill=\"none\" stroke=\"%s\" "
                   "stroke-width=\"2\"%s%s%s data-series=\"",
                   color, sr->dash || sr->dashed ? " stroke-dasharray=\"" : "",
                   sr->dash     ? sr->dash
                   : sr->dashed ? "6 4"
                                : "",
                   sr->dash || sr->dashed ? "\"" : "");
    cmp_buf_html(b, sr->name);
    cmp_buf_puts(b, "\" points=\"");
    for (int i = 0; i < sr->n; i++) {
        double x = sr->x[i], y = sr->y[i];
        if (!valid(xs, x) || !valid(ys, y)) continue;
        /* an interval's value holds over the whole interval: a step from its start */
        if (sr->span_start && valid(xs, sr->span_start[i]) && sr->span_start[i] < x)
            cmp_buf_printf(b, "%.2f,%.2f ", px(xa, sr->span_start[i], PX0, PX1),
                           px(ya, y, PY1, PY0));
        cmp_buf_printf(b, "%.2f,%.2f ", px(xa, x, PX0, PX1), px(ya, y, PY1, PY0));
    }
    cmp_buf_puts(b, "\"/>\n");
}

/* The series' points (each with its values as a tooltip) and their labels. */
static void series_points(cmp_buf *b, const svg_series *sr, const char *color, svg_scale xs,
                          svg_scale ys, const axis *xa, const axis *ya)
{
    double r = sr->unjoined ? 5 : sr->n > 100 ? 1.5 : 3;
    /* hollow rings for unjoined markers, lighter dots on dashed lines */
    char style[80] = "";
    if (sr->unjoined)
        snprintf(style, sizeof style, " stroke=\"%s\" stroke-width=\"2\"", color);
    else if (sr->dashed)
        snprintf(style, sizeof style, " fill-opacity=\"0.5\"");
    char ring[80];
    snprintf(ring, sizeof ring, " stroke=\"%s\" stroke-width=\"2\" data-hollow=\"true\"", color);
    for (int i = 0; i < sr->n; i++) {
        double x = sr->x[i], y = sr->y[i];
        if (!valid(xs, x) || !valid(ys, y)) continue;
        bool hollow = sr->hollow && sr->hollow[i];
        cmp_buf_printf(b,
                       "<circle class=\"pt\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.1f\" "
                       "fill=\"%s\"%s data-series=\"",
                       px(xa, x, PX0, PX1), px(ya, y, PY1, PY0), hollow ? fmax(r, 4) : r,
                       sr->unjoined || hollow ? "none" : color, hollow ? ring : style);
        cmp_buf_html(b, sr->name);
        cmp_buf_printf(b, "\" data-x=\"%.10g\" data-y=\"%.10g\"><title>", x, y);
        cmp_buf_html(b, sr->name);
        cmp_buf_printf(b, ": %g, %g</title></circle>\n", x, y);
        if (sr->labels && sr->labels[i]) {
            cmp_buf_printf(b,
                           "<text class=\"ptlabel\" x=\"%.2f\" y=\"%.2f\" fill=\"%s\" "
                           "font-size=\"10\" data-series=\"",
                           px(xa, x, PX0, PX1) + 4, px(ya, y, PY1, PY0) - 4, color);
            cmp_buf_html(b, sr->name);
            cmp_buf_puts(b, "\">");
            cmp_buf_html(b, sr->labels[i]);
            cmp_buf_puts(b, "</text>\n");
        }
    }
}

/* A dashed vertical line at mark_x, when it falls inside the x axis. */
static void vertical_mark(cmp_buf *b, svg_scale xs, const axis *xa, double mark_x,
                          const char *mark_label)
{
    if (!valid(xs, mark_x) || tf(xs, mark_x) < xa->lo || tf(xs, mark_x) > xa->hi) return;
    double x = px(xa, mark_x, PX0, PX1);
    cmp_buf_printf(b,
                   "<line class=\"mark\" x1=\"%.2f\" x2=\"%.2f\" y1=\"%.0f\" y2=\"%.0f\" "
                   "stroke=\"#555\" stroke-dasharray=\"4 3\" data-x=\"%.10g\"/>"
                   "<text class=\"tick\" x=\"%.2f\" y=\"%.0f\">",
                   x, x, PY0, PY1, mark_x, x + 3, PY0 + 12);
    cmp_buf_html(b, mark_label ? mark_label : "");
    cmp_buf_puts(b, "</text>\n");
}

/* A dashed horizontal line at y = mark_y with its label at the left end of the plot
 * (vertical marks label the top). */
static void horizontal_mark(cmp_buf *b, svg_scale ys, const axis *ya, double mark_y,
                            const char *label)
{
    if (!valid(ys, mark_y) || tf(ys, mark_y) < ya->lo - 1e-9 || tf(ys, mark_y) > ya->hi + 1e-9)
        return;
    double y = px(ya, mark_y, PY1, PY0);
    cmp_buf_printf(b,
                   "<line class=\"limit\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.2f\" y2=\"%.2f\" "
                   "stroke=\"#a00\" stroke-width=\"1.5\" stroke-dasharray=\"8 4\" "
                   "data-y=\"%.10g\"/><text class=\"tick\" x=\"%.0f\" y=\"%.2f\" "
                   "fill=\"#a00\">",
                   PX0, PX1, y, y, mark_y, PX0 + 4, y - 4);
    cmp_buf_html(b, label ? label : "");
    cmp_buf_puts(b, "</text>\n");
}

void svg_line_chart_marked(cmp_buf *b, const svg_chart *c, const svg_series *series, int nseries,
                           double mark_x, const char *mark_label)
{
    svg_mark m = {false, mark_x, mark_label};
    svg_line_chart_marks(b, c, series, nseries, &m, isnan(mark_x) ? 0 : 1);
}

void svg_line_chart_marks(cmp_buf *b, const svg_chart *c, const svg_series *series, int nseries,
                          const svg_mark *marks, int nmarks)
{
    svg_scale xs = c->xs, ys = c->ys;
    double xmn = INFINITY, xmx = -INFINITY, ymn = INFINITY, ymx = -INFINITY;
    for (int s = 0; s < nseries; s++)
        for (int i = 0; i < series[s].n; i++) {
            double x = series[s].x[i], y = series[s].y[i];
            if (!valid(xs, x) || !valid(ys, y)) continue;
            const double *x0 = series[s].span_start;
            xmn = fmin(xmn, x0 && valid(xs, x0[i]) ? fmin(x0[i], x) : x);
            xmx = fmax(xmx, x);
            ymn = fmin(ymn, y);
            ymx = fmax(ymx, y);
        }
    for (int k = 0; k < nmarks; k++)
        if (marks[k].horizontal && valid(ys, marks[k].at) && isfinite(xmn)) {
            ymn = fmin(ymn, marks[k].at);
            ymx = fmax(ymx, marks[k].at);
        }
    axis xa = {xs, 0, 0}, ya = {ys, 0, 0};
    fit_axis(&xa, xmn, xmx, false);
    fit_axis(&ya, ymn, ymx, true);
    const char *id = c->id, *title = c->title, *xlabel = c->xlabel, *ylabel = c->ylabel;
    frame(b, id, title, xs, ya.scale, c->yunit);
    y_ticks(b, &ya, ylabel);
    x_ticks(b, &xa, xlabel);
    legend_item items[nseries > 0 ? nseries : 1];
    for (int s = 0; s < nseries; s++) {
        const char *color = series[s].color ? series[s].color : svg_color(s);
        items[s] = (legend_item){series[s].name, color, series[s].dashed || series[s].dash, 1.0,
                                 series[s].dash};
        if (!series[s].unjoined) series_line(b, &series[s], color, xs, ys, &xa, &ya);
        series_points(b, &series[s], color, xs, ys, &xa, &ya);
    }
    for (int k = 0; k < nmarks; k++) {
        if (marks[k].horizontal)
            horizontal_mark(b, ys, &ya, marks[k].at, marks[k].label);
        else
            vertical_mark(b, xs, &xa, marks[k].at, marks[k].label);
    }
    legend(b, items, nseries);
    cmp_buf_puts(b, "</svg>\n");
}

void svg_line_chart(cmp_buf *b, const svg_chart *c, const svg_series *series, int nseries)
{
    svg_line_chart_marked(b, c, series, nseries, NAN, NULL);
}
