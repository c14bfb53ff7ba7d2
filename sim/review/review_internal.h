/*
 * sim/review/review_internal.h: helpers shared by the files of sim/review/ (metrics,
 * JSON accessors, curve finder, string buffer, SVG charts); private to this folder and
 * its unit tests. The comparison model itself is public, in sim/review/review.h.
 */
#ifndef APPSIM_REVIEW_INTERNAL_H
#define APPSIM_REVIEW_INTERNAL_H

#include "sim/review/review.h"

/* The JSON document in path, read through a bounded buffer with its interval series
 * trimmed as `series` says (compare_read.c; review.h, cmp_load_series). NULL with err:
 * "cannot read: ...", "not JSON (line N: ...); ..." or "too large to load: ...". */
json_t *cmp_read_result(const char *path, cmp_series series, char *err, size_t errlen);
/* The same from an open stream, read to its end (the caller closes it). */
json_t *cmp_read_result_stream(FILE *f, cmp_series series, char *err, size_t errlen);

/* The label a result gets from its drive identity (model, serial, path), malloc'ed. */
char *cmp_identity_label(const json_t *doc, const char *path);
/* The ranks of the MPI job's result `job` as results of their own (compare_ranks.c):
 * *views (malloc'ed, *nviews entries, each to free with cmp_result_free) labelled
 * "PREFIX: rank K on HOST (TARGET)"; job itself is left as it was. 0, or -1 with err when
 * job is no MPI job's result. */
int cmp_rank_views(const cmp_result *job, const char *prefix, cmp_result **views, int *nviews,
                   char *err, size_t errlen);
/* Key configuration entries that do not change what is measured (paths, output files,
 * seeds, reporting); they never prevent ranking. Duration-like entries ("soft") are
 * reported when they differ but do not prevent ranking either. */
bool cmp_config_key_ignored(const char *key);
bool cmp_config_key_soft(const char *key);

/* Metric computation over a set of runs of one drive (compare_metrics.c). Appends to
 * *metrics (growing array) the metrics those runs have, values combined. */
typedef struct cmp_mlist {
    cmp_metric *m;
    int n, cap;
} cmp_mlist;
/* Computes the combined metrics of runs[0..n) into a list whose cells have one element;
 * warn (may be NULL) receives a malloc'ed message when something could not be combined. */
void cmp_metrics_for_runs(cmp_result **runs, int n, cmp_mlist *out, char **warn);
void cmp_mlist_free(cmp_mlist *l);
/* Appends one metric (a single cell) when `have`. */
void cmp_mlist_add(cmp_mlist *l, const char *id, const char *name, const char *unit,
                   cmp_better better, bool have, double value);
/* Appends a metric whose single cell is unmet (measured, no qualifying value). */
void cmp_mlist_add_unmet(cmp_mlist *l, const char *id, const char *name, const char *unit,
                         cmp_better better);
/* Appends msg to the "; "-separated warnings in *warn (warn may be NULL; a message
 * already there is not repeated). */
void cmp_warn_append(char **warn, const char *msg);
/* The row "foreign I/O share of the disk" (percent of the disk's bytes that were not
 * appsim's, over every measured phase of the runs) and a warning per run whose device
 * figures carry the foreign-I/O warning (compare_foreign.c). */
void cmp_foreign_metrics(cmp_result **runs, int n, cmp_mlist *out, char **warn);
/* Merged histogram of `key` ("all" or a type) over runs, or NULL when any run lacks it. */
sim_hist *cmp_merged_hist(cmp_result **runs, int n, const char *key);
/* Histogram stored under doc.histograms.<key>, or NULL. Caller frees. */
sim_hist *cmp_hist_of(const json_t *doc, const char *key);

/* First non-empty string under `key` in obj or its nested objects and arrays (up to
 * 3 levels below depth), e.g. "model" in target.device.model; NULL when none. */
const char *cmp_find_string(const json_t *obj, const char *key, int depth);

/* Numeric helpers over JSON (NULL-safe; missing or non-numeric gives false). */
bool cmp_num(const json_t *obj, const char *key, double *v);
const char *cmp_str(const json_t *obj, const char *key);
/* Every rate curve in doc: a "curve" key holding an array of points or an object with a
 * "points" array, found depth-first (into objects and arrays of objects). curves[i] is
 * the points array; names[i] (malloc'ed) says where: "curve" at the top level, else the
 * path of the object holding it, array elements named by their identifying fields
 * (e.g. "full/boot" for a VDI storm). Returns the count. */
int cmp_find_curves(const json_t *doc, const json_t **curves, char **names, int max);
/* The curve of that name in doc (as cmp_find_curves names them), or NULL. */
const json_t *cmp_curve_named(const json_t *doc, const char *name);
/* IOPS (or rate) of a curve point; false when absent. */
bool cmp_point_rate(const json_t *pt, double *v);
/* Latency summary of a curve point (object with mean_us, p99_us, ...), or NULL. */
const json_t *cmp_point_latency(const json_t *pt);
/* Serialized histograms of a curve point ({"all": H, ...}), or NULL. */
const json_t *cmp_point_histograms(const json_t *pt);

/* OLTP curves and their service-level throughput (compare_service.c). */
/* True when the points array belongs to an OLTP curve (its points carry achieved_tps). */
bool cmp_curve_is_oltp(const json_t *points);
/* The document's OLTP curve object ({"kind", "points", ...}), or NULL. */
const json_t *cmp_oltp_curve(const json_t *doc);
/* A curve's maximum: its max_tps, else the saturation point's or the highest achieved
 * TPS among points that neither failed nor were interrupted; false when none. */
bool cmp_oltp_max_tps(const json_t *curve, double *v);
/* The key of a percentile in a point's latency_ms and per_type ("p99", "p999"). */
void cmp_percentile_key(double pct, char *buf, size_t len);
/* One limit of service_level.limits as text: "p99 <= 20 ms", "new_order p90 <= 5 s". */
void cmp_limit_label(const json_t *limit, char *buf, size_t len);
/* doc's service_level.limits (a non-empty array), or NULL. */
const json_t *cmp_service_limits(const json_t *doc);
/* All of doc's limits as text, ", "-separated (malloc'ed); NULL when it has none. */
char *cmp_service_limits_text(const json_t *doc);
/* True when a and b were judged against the same limits (same percentiles, types and
 * values, in any order; the source is not compared), or neither has limits. */
bool cmp_service_limits_equal(const json_t *a, const json_t *b);
/* The rows "service-level TPS" (service_level.tps) and "max TPS" of runs' OLTP curves. */
void cmp_service_metrics(cmp_result **runs, int n, cmp_mlist *out, char **warn);
/* After a group's rows are built: names the limits in the service-level row, or leaves it
 * unranked when its results were judged against different limits; fills
 * service_limits and service_note. */
void cmp_service_group(cmp_group *g);

/* "12,650.3" style formatting of a metric value for tables. */
void cmp_format_value(char *buf, size_t len, double v, const char *unit);

/* Growable string buffer used by the report and the formatters. */
typedef struct cmp_buf {
    char *s;
    size_t len, cap;
} cmp_buf;
void cmp_buf_printf(cmp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cmp_buf_puts(cmp_buf *b, const char *s);
/* Appends s with & < > " ' escaped for HTML/SVG text and attributes. */
void cmp_buf_html(cmp_buf *b, const char *s);
void cmp_buf_free(cmp_buf *b);

/* SVG charts (report_svg.c). Every chart is an <svg class="chart" data-chart=ID> whose
 * data elements carry their values: bars are <rect class="bar" data-series data-cat
 * data-value>, run-to-run ranges on them <line class="range" data-cat data-series
 * data-min data-max>, points are <circle class="pt" data-series data-x data-y>, so a test
 * (or a reader) can check what is drawn against the results. Values that are NAN are
 * absent. Colours are the callers': one per drive in every chart of a report. */
typedef enum svg_scale { SVG_LINEAR, SVG_LOG, SVG_NINES } svg_scale;
/* The i-th colour of the report's palette (colour-blind safe, cycles after 8). */
const char *svg_color(int i);
typedef struct svg_series {
    const char *name;
    int n;
    const double *x, *y;
    /* Optional: a label per point ("50%", "max"), drawn beside it as <text
     * class="ptlabel" data-series>; NULL = none. */
    const char *const *labels;
    const char *color; /* NULL: the palette by series index */
    bool dashed;       /* a second line of the same drive (p99, a repeated run) */
    bool unjoined;     /* points only, no line (e.g. a curve's maximum-rate run) */
    /* Optional: where each point's interval starts (x); the line then holds each value
     * over its interval, so series with different report intervals read alike and a
     * single interval is a line, not a dot. NULL = a line through the points. */
    const double *span_start;
    /* Optional: per point, true to draw it as an open ring with data-hollow="true" (e.g.
     * an OLTP point that did not sustain its offered rate). NULL = all filled. */
    const bool *hollow;
    /* Optional: the line's stroke-dasharray ("2 3"), in place of dashed's; NULL = none. */
    const char *dash;
} svg_series;
typedef struct svg_bars {
    const char *id, *title, *yunit;
    const char *const *cats; /* one group of bars per category (drive) */
    const char *const *cat_colors;
    int ncats;
    const char *const *series; /* bars within a group (mean, p95...), shaded */
    int nseries;
    const double *values;  /* [cat * nseries + series] */
    const double *lo, *hi; /* run-to-run range per value, or NULL */
    svg_scale ys;          /* SVG_LINEAR or SVG_LOG */
    const char *data_unit; /* the values' unit, as the chart's data-yunit ("ms"), or NULL */
} svg_bars;
void svg_bar_chart(cmp_buf *b, const svg_bars *c);
/* A line chart's frame: its id, title, axis labels and scales, and the unit of its y
 * values (data-yunit, e.g. "ms"; NULL when none). */
typedef struct svg_chart {
    const char *id, *title, *xlabel, *ylabel, *yunit;
    svg_scale xs, ys;
} svg_chart;
void svg_line_chart(cmp_buf *b, const svg_chart *c, const svg_series *series, int nseries);
/* The same with a dashed vertical marker at x = mark_x (e.g. the end of the warm-up),
 * labelled mark_label; NAN for none. */
void svg_line_chart_marked(cmp_buf *b, const svg_chart *c, const svg_series *series, int nseries,
                           double mark_x, const char *mark_label);
/* A labelled dashed line across the plot: vertical at x = at, or horizontal at y = at (a
 * latency limit; the y axis is stretched to hold it). Drawn as <line class="mark"
 * data-x> or <line class="limit" data-y>. */
typedef struct svg_mark {
    bool horizontal;
    double at;
    const char *label;
} svg_mark;
void svg_line_chart_marks(cmp_buf *b, const svg_chart *c, const svg_series *series, int nseries,
                          const svg_mark *marks, int nmarks);
/* SVG_LOG when the positive values of v[0..n) span more than a decade, else SVG_LINEAR. */
svg_scale svg_scale_for(const double *v, int n);
/* True when the largest positive value of v[0..n) is at least ten times the smallest
 * (e.g. two drives' peak rates: a linear axis would flatten the slower one). */
bool svg_differ_tenfold(const double *v, int n);
/* True when no finite value of v[0..n) is zero or negative: a logarithmic axis would
 * leave such a value (a rate of 0: a stall) out, so the axis stays linear. */
bool svg_log_drawable(const double *v, int n);
/* The unit a latency chart is drawn in, chosen from its largest value (microseconds
 * given): us below 1 ms, ms below 1 s, else s; `us` is how many microseconds one unit
 * holds. svg_to_unit divides v[0..n) by it. */
typedef struct svg_unit {
    const char *name, *word; /* "ms", "milliseconds" */
    double us;
} svg_unit;
svg_unit svg_latency_unit(const double *us, int n);
void svg_to_unit(double *v, int n, svg_unit u);

/* Report pieces (report*.c). A drive's colour is the same in every chart: the order in
 * which drives (labels) first appear among the results. */
int report_drive_index(const cmp_set *set, const char *label);
const char *report_drive_color(const cmp_set *set, const char *label);
/* Latency against achieved TPS for every OLTP curve of the group: one chart per drive
 * (per run when repeated), its limits drawn (report_oltp.c). */
void report_oltp_curves(cmp_buf *b, const cmp_set *set, const cmp_group *g, int gi);
/* The summary at the top: every table's headline figures, drives side by side. */
void report_summary(cmp_buf *b, const cmp_set *set);
/* The drives (and hosts) side by side: one column per drive, one row per identity key. */
void report_drives(cmp_buf *b, const cmp_set *set);
/* The configurations (report_config.c): a table's shared options as a compact table
 * under its heading, and the Configurations section (per table, its runs side by
 * side, one row per option). */
void report_config_brief(cmp_buf *b, const cmp_group *g);
void report_configurations(cmp_buf *b, const cmp_set *set);
/* How a value reads: as it is, as a size (bytes given), as a duration (seconds given). */
typedef enum report_kind { REPORT_TEXT, REPORT_SIZE, REPORT_DURATION } report_kind;
/* The value as the report shows it (malloc'ed); NULL for null or absent, which the
 * report shows as one em dash. Flags read yes or no, arrays as "a, b". */
char *report_value_text(const json_t *v, report_kind kind);
/* The report's tables give latencies in milliseconds: a metric's unit as the report
 * names it ("us" -> "ms"), and its value in that unit, formatted as compare does. */
const char *report_unit_name(const char *unit);
void report_format_value(char *buf, size_t len, double v, const char *unit);
/* "512 B", "4 KiB", "237.5 GiB": binary units, the largest that keeps the value >= 1. */
void report_size_text(char *buf, size_t len, double bytes);

/* HdrHistogram interval log (hdr_log.c). The log header (format version 1.3, start and
 * base time = the run's start, the column legend), then one line per histogram:
 * "[Tag=TAG,]start,length,max_ms,BASE64" where BASE64 is h in HdrHistogram's compressed
 * V2 encoding (exact: appsim's buckets are HdrHistogram's counts for 1 ns and 3
 * significant digits). Tags must hold no comma, space or newline. SIM_OK, or SIM_ERR when zlib
 * fails. */
void hdr_log_header(cmp_buf *out, double start_epoch_s, const char *comment);
int hdr_log_line(cmp_buf *out, const char *tag, double start_s, double length_s, const sim_hist *h);
int hdr_encode_compressed(const sim_hist *h, cmp_buf *out);

/* The files a compare/report command line names: a directory stands for every *.json
 * file in it, in name order, each with the directory's label. labels[i] (may be NULL)
 * belongs to args[i]. SIM_OK, or SIM_ERR with err. */
typedef struct cmp_inputs {
    char **files;        /* malloc'ed paths */
    const char **labels; /* borrowed from the caller's labels, or NULL */
    int n, cap;
} cmp_inputs;
int cmp_inputs_expand(cmp_inputs *in, char **args, int nargs, char **labels, int nlabels, char *err,
                      size_t errlen);
void cmp_inputs_free(cmp_inputs *in);

/* Splits "a,b,c" into labels pointing into *store (both malloc'ed); returns the count. */
int cmp_split_labels(const char *list, char ***labels, char **store);
/* The front of compare and report: splits --label (one per file, or none), loads (with
 * their series as `series` says) and groups the files into *set. Prints what was wrong and returns
 * SIM_EXIT_USAGE on bad input; 0 with *set to free by the caller. */
int cmp_build_labeled(cmp_set *set, const char *command, char **files, int nfiles,
                      const char *label, bool ranks, cmp_series series);

/* argv helper for commands that accept "-o FILE": rewrites "-o" to "--output" in a copy
 * of argv (the strings are shared). Caller frees the array. */
char **cmp_argv_short_o(int argc, char **argv);

#endif
