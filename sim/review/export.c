/*
 * sim/review/export.c: `appsim export RESULT.json --csv FILE --hlog FILE`: a result's
 * series in the formats other tools read. --csv writes every interval series (the run's
 * own, and each curve point's) as one CSV table; --hlog writes every histogram (the
 * run's and each curve point's) as an HdrHistogram interval log (hdr_log.c).
 */
#include "sim/review/review_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CURVES 64

static const char usage_text[] =
    "appsim export RESULT.json [--csv FILE] [--hlog FILE]\n"
    "Writes a result's series for other tools: --csv every interval (throughput and\n"
    "latency per report interval, of the run and of each rate-curve point) as CSV;\n"
    "--hlog every latency histogram in HdrHistogram's interval log format (v1.3,\n"
    "compressed V2 histograms; exact, appsim's buckets are HdrHistogram's for 1 ns and\n"
    "3 significant digits), readable by HistogramLogProcessor and the HdrHistogram\n"
    "ports. FILE `-` is standard output (one of the two at a time).";

/* "2026-12-01T01:02:03Z" (or with fractional seconds) to seconds since the epoch. */
static double epoch_of(const char *iso)
{
    struct tm tm = {0};
    if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm)) return 0;
    return (double)timegm(&tm);
}

/* A tag or series name usable in both formats: no comma, space, quote or newline. */
static void clean_name(char *s)
{
    for (; *s; s++)
        if (*s == ',' || *s == ' ' || *s == '"' || *s == '\n' || *s == '\r') *s = '_';
}

static void point_name(const json_t *pt, size_t i, char *buf, size_t len)
{
    double f;
    if (json_is_true(json_object_get(pt, "max_rate_run")) ||
        (cmp_num(pt, "fraction", &f) && f == 0))
        snprintf(buf, len, "max");
    else if (cmp_num(pt, "fraction", &f))
        snprintf(buf, len, "%.0f%%", f * 100);
    else
        snprintf(buf, len, "point%zu", i);
}

/* ------------------------------------------------------------------ CSV */

static const char *const lat_cols[] = {"mean_us", "p50_us",  "p90_us", "p95_us",
                                       "p99_us",  "p999_us", "max_us"};
#define NLAT ((int)(sizeof lat_cols / sizeof lat_cols[0]))

static void csv_number(cmp_buf *b, const json_t *obj, const char *key)
{
    double v;
    char text[32];
    if (cmp_num(obj, key, &v)) cmp_buf_printf(b, "%s", sim_format_double(v, text, sizeof text));
}

static int csv_series(cmp_buf *b, const char *series, const json_t *intervals)
{
    size_t i;
    const json_t *iv;
    int rows = 0;
    json_array_foreach((json_t *)intervals, i, iv)
    {
        const char *phase = cmp_str(iv, "phase");
        cmp_buf_printf(b, "%s,", series);
        csv_number(b, iv, "t");
        cmp_buf_puts(b, ",");
        csv_number(b, iv, "seconds");
        cmp_buf_printf(b, ",%s,", phase ? phase : "");
        csv_number(b, iv, "rate");
        cmp_buf_puts(b, ",");
        csv_number(b, iv, "count");
        cmp_buf_puts(b, ",");
        csv_number(b, iv, "errors_per_s");
        const json_t *lat = json_object_get(iv, "latency_us");
        for (int k = 0; k < NLAT; k++) {
            cmp_buf_puts(b, ",");
            csv_number(b, lat, lat_cols[k]);
        }
        cmp_buf_puts(b, "\n");
        rows++;
    }
    return rows;
}

static int export_csv(cmp_buf *b, const json_t *doc)
{
    cmp_buf_puts(b, "series,t,seconds,phase,rate,count,errors_per_s");
    for (int k = 0; k < NLAT; k++)
        cmp_buf_printf(b, ",%s", lat_cols[k]);
    cmp_buf_puts(b, "\n");
    int rows = csv_series(b, "run", json_object_get(doc, "intervals"));
    const json_t *cv[MAX_CURVES];
    char *cn[MAX_CURVES];
    int nc = cmp_find_curves(doc, cv, cn, MAX_CURVES);
    for (int c = 0; c < nc; c++) {
        size_t i;
        const json_t *pt;
        json_array_foreach((json_t *)cv[c], i, pt)
        {
            char p[32], series[400];
            point_name(pt, i, p, sizeof p);
            snprintf(series, sizeof series, "%s@%s", cn[c], p);
            clean_name(series);
            const json_t *run = json_object_get(pt, "run");
            rows += csv_series(b, series, json_object_get(run ? run : pt, "intervals"));
        }
        free(cn[c]);
    }
    return rows;
}

/* ------------------------------------------------------------------ HdrHistogram log */

/* One line per histogram of hists ("all" untagged when untagged_all, so that a reader's
 * default, untagged view is the whole run; the others tagged prefix+key). */
static int hlog_histograms(cmp_buf *b, const json_t *hists, const char *prefix, bool untagged_all,
                           double start, double length, int *lines)
{
    const char *key;
    json_t *hj;
    json_object_foreach((json_t *)hists, key, hj)
    {
        char err[256];
        sim_hist *h = sim_hist_from_json(hj, err, sizeof err);
        if (!h) {
            sim_error("export: histograms.%s: %s", key, err);
            return SIM_ERR;
        }
        char tag[400];
        if (untagged_all && !strcmp(key, "all"))
            tag[0] = 0;
        else
            snprintf(tag, sizeof tag, "%s%s", prefix, key);
        clean_name(tag);
        bool empty = sim_hist_count(h) == 0; /* nothing to draw, as HdrHistogram skips */
        int rc = empty ? 0 : hdr_log_line(b, tag, start, length, h);
        sim_hist_free(h);
        if (rc) {
            sim_error("export: zlib failed to compress a histogram");
            return SIM_ERR;
        }
        *lines += !empty;
    }
    return SIM_OK;
}

static int export_hlog(cmp_buf *b, const json_t *doc, int *lines)
{
    char comment[300];
    snprintf(comment, sizeof comment, "appsim %s %s result, latencies in nanoseconds",
             APPSIM_VERSION, cmp_str(doc, "workload") ? cmp_str(doc, "workload") : "");
    hdr_log_header(b, epoch_of(cmp_str(doc, "started_at")), comment);
    const json_t *summary = json_object_get(doc, "summary");
    double warm = 0, secs = 0;
    cmp_num(json_object_get(doc, "warmup"), "seconds", &warm);
    cmp_num(summary, "seconds", &secs);
    if (hlog_histograms(b, json_object_get(doc, "histograms"), "", true, warm, secs, lines))
        return SIM_ERR;
    /* Curve points: the result does not record when each point started, so their
     * measured intervals are laid end to end in run order. */
    double t = 0;
    const json_t *cv[MAX_CURVES];
    char *cn[MAX_CURVES];
    int nc = cmp_find_curves(doc, cv, cn, MAX_CURVES), rc = 0;
    for (int c = 0; c < nc; c++) {
        size_t i;
        const json_t *pt;
        json_array_foreach((json_t *)cv[c], i, pt)
        {
            char p[32], prefix[400];
            double len = 0;
            point_name(pt, i, p, sizeof p);
            snprintf(prefix, sizeof prefix, "%s@%s/", cn[c], p);
            if (!cmp_num(pt, "seconds", &len))
                cmp_num(json_object_get(json_object_get(pt, "run"), "summary"), "seconds", &len);
            const json_t *hists = cmp_point_histograms(pt);
            if (!rc && hists) rc = hlog_histograms(b, hists, prefix, false, t, len, lines);
            t += len;
        }
        free(cn[c]);
    }
    return rc;
}

/* ------------------------------------------------------------------ command */

static int write_out(const char *path, const cmp_buf *b)
{
    if (!strcmp(path, "-")) {
        if (b->len && fwrite(b->s, 1, b->len, stdout) != b->len) return SIM_ERR;
        return fflush(stdout) ? SIM_ERR : SIM_OK;
    }
    /* Replaced whole, never written through a link that stands at path. */
    int e = sim_atomic_write(path, b->s ? b->s : "", b->len);
    if (e) {
        sim_error("export: writing %s failed: %s", path, strerror(e));
        return SIM_ERR;
    }
    return SIM_OK;
}

static int export_main(int argc, char **argv)
{
    const char *csv = NULL, *hlog = NULL;
    sim_opt opts[] = {
        {.name = "csv",
         .kind = SIM_OPT_STRING,
         .dst = &csv,
         .output = SIM_OUTPUT_REPLACE,
         .help = "write the interval series as CSV to FILE (- = standard output)"},
        {.name = "hlog",
         .kind = SIM_OPT_STRING,
         .dst = &hlog,
         .output = SIM_OUTPUT_REPLACE,
         .help = "write the histograms as an HdrHistogram interval log to FILE (- = standard "
                 "output)"},
        SIM_OPT_END,
    };
    char *files[2];
    int nfiles = 0;
    int rc = sim_opts_parse("export", opts, argc, argv, files, 2, &nfiles, usage_text);
    if (rc < 0) return SIM_EXIT_OK;
    if (rc) return SIM_EXIT_USAGE;
    if (nfiles != 1) {
        sim_error("export: give one result file (written by --json)");
        return SIM_EXIT_USAGE;
    }
    if (!csv && !hlog) {
        sim_error("export: say what to write: --csv FILE and/or --hlog FILE");
        return SIM_EXIT_USAGE;
    }
    if (csv && hlog && !strcmp(csv, "-") && !strcmp(hlog, "-")) {
        sim_error("export: only one of --csv and --hlog can go to standard output");
        return SIM_EXIT_USAGE;
    }
    cmp_result r;
    char err[1024];
    rc = cmp_load(&r, files[0], err, sizeof err);
    if (rc) {
        sim_error("export: %s", err);
        return SIM_EXIT_USAGE;
    }
    int status = SIM_EXIT_OK, lines = 0;
    if (csv) {
        cmp_buf b = {0};
        int rows = export_csv(&b, r.doc);
        if (write_out(csv, &b))
            status = SIM_EXIT_FAIL;
        else if (!rows)
            sim_warn("export: %s has no intervals (run with --report-interval)", files[0]);
        cmp_buf_free(&b);
    }
    if (hlog && status == SIM_EXIT_OK) {
        cmp_buf b = {0};
        if (export_hlog(&b, r.doc, &lines) || write_out(hlog, &b))
            status = SIM_EXIT_FAIL;
        else if (!lines)
            sim_warn("export: %s has no latency histograms", files[0]);
        cmp_buf_free(&b);
    }
    cmp_result_free(&r);
    return status;
}

static const sim_command export_command = {
    .name = "export",
    .summary = "write a result's interval series as CSV and its histograms as an HdrHistogram log",
    .main = export_main,
};
SIM_REGISTER_COMMAND(export_command)
