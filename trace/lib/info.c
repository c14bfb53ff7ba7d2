/*
 * trace/lib/info.c: `appsim trace info TRACE`: what a trace holds, in one streaming pass:
 * operations and read/write mix, size distribution, footprint (unique bytes touched),
 * sequential share, IOPS and MB/s over time, duration, inter-arrival distribution,
 * the captured response times when the format has them, and the volumes.
 *
 * Memory stays bounded: the footprint is exact until its extent set fills, then
 * estimated by sampling (trace/lib/footprint.c, the method is reported); the time series
 * doubles its bucket width instead of growing past 1,000 buckets.
 */
#include "trace/lib/footprint_internal.h"

#include <stdlib.h>
#include <string.h>

#define SERIES_MAX 1000
#define NSIZE 13 /* <=512, 1K, ... 512K, 1M, >1M */

typedef struct info {
    uint64_t ops[4], bytes[4];
    uint64_t sizes[NSIZE];
    uint64_t seq, seq_candidates;
    tr_footprint fp;
    uint64_t *series_ops, *series_bytes;
    uint64_t width_ns;
    uint32_t nseries;
    sim_hist *gaps, *lat[2];
    uint64_t prev_time, last_time, records;
    tr_volmap vols;
    uint64_t *vol_ops, *vol_end;
    uint32_t vol_cap;
} info;

static void add_series(info *in, uint64_t t, uint64_t bytes)
{
    uint64_t b = t / in->width_ns;
    while (b >= SERIES_MAX) {
        for (uint32_t i = 0; i < SERIES_MAX / 2; i++) {
            in->series_ops[i] = in->series_ops[2 * i] + in->series_ops[2 * i + 1];
            in->series_bytes[i] = in->series_bytes[2 * i] + in->series_bytes[2 * i + 1];
        }
        memset(in->series_ops + SERIES_MAX / 2, 0, SERIES_MAX / 2 * sizeof(uint64_t));
        memset(in->series_bytes + SERIES_MAX / 2, 0, SERIES_MAX / 2 * sizeof(uint64_t));
        in->width_ns *= 2;
        in->nseries = (in->nseries + 1) / 2;
        b = t / in->width_ns;
    }
    if (b + 1 > in->nseries) in->nseries = (uint32_t)b + 1;
    in->series_ops[b]++;
    in->series_bytes[b] += bytes;
}

static int size_bucket(uint32_t len)
{
    int b = 0;
    for (uint64_t lim = 512; b < NSIZE - 1 && len > lim; lim *= 2)
        b++;
    return b;
}

static void account(info *in, const tr_record *r)
{
    in->records++;
    in->ops[r->op]++;
    in->bytes[r->op] += r->length;
    if (in->records > 1) sim_hist_record(in->gaps, r->time_ns - in->prev_time);
    in->prev_time = in->last_time = r->time_ns;
    uint32_t v = tr_volmap_get(&in->vols, r->volume);
    if (v >= in->vol_cap) {
        uint32_t cap = in->vol_cap ? in->vol_cap * 2 : 64;
        in->vol_ops = sim_xrealloc(in->vol_ops, cap * sizeof *in->vol_ops);
        in->vol_end = sim_xrealloc(in->vol_end, cap * sizeof *in->vol_end);
        memset(in->vol_ops + in->vol_cap, 0, (cap - in->vol_cap) * sizeof *in->vol_ops);
        memset(in->vol_end + in->vol_cap, 0xff, (cap - in->vol_cap) * sizeof *in->vol_end);
        in->vol_cap = cap;
    }
    in->vol_ops[v]++;
    if (r->op == TR_READ || r->op == TR_WRITE) {
        in->sizes[size_bucket(r->length)]++;
        if (in->vol_end[v] != UINT64_MAX) {
            in->seq_candidates++;
            if (r->offset == in->vol_end[v]) in->seq++;
        }
        in->vol_end[v] = r->offset + r->length;
        if (r->latency_ns != TR_LATENCY_UNKNOWN) sim_hist_record(in->lat[r->op], r->latency_ns);
    }
    if (r->op != TR_FLUSH) tr_footprint_add(&in->fp, r->volume, r->offset, r->length);
    add_series(in, r->time_ns, r->op == TR_READ || r->op == TR_WRITE ? r->length : 0);
}

static json_t *hist_json(const sim_hist *h)
{
    return sim_hist_summary_json(h);
}

static json_t *build(info *in, tr_source *src)
{
    double secs = in->last_time / 1e9;
    uint64_t rw = in->ops[TR_READ] + in->ops[TR_WRITE];
    uint64_t rwb = in->bytes[TR_READ] + in->bytes[TR_WRITE];
    json_t *j = json_object();
    json_object_set_new(j, "source", tr_source_stats_json(src));
    json_object_set_new(j, "records", json_integer((json_int_t)in->records));
    json_t *ops = json_object();
    for (int op = 0; op < 4; op++)
        json_object_set_new(ops, tr_op_name(op),
                            json_pack("{s:I, s:I}", "count", (json_int_t)in->ops[op], "bytes",
                                      (json_int_t)in->bytes[op]));
    json_object_set_new(j, "operations", ops);
    json_object_set_new(j, "read_share",
                        json_pack("{s:f, s:f}", "by_count",
                                  rw ? (double)in->ops[TR_READ] / rw : 0.0, "by_bytes",
                                  rwb ? (double)in->bytes[TR_READ] / rwb : 0.0));
    json_t *sizes = json_array();
    for (int b = 0; b < NSIZE; b++) {
        char label[32];
        if (b == NSIZE - 1)
            snprintf(label, sizeof label, ">%uK", (512u << (NSIZE - 2)) / 1024);
        else if (b == 0)
            snprintf(label, sizeof label, "<=512");
        else
            snprintf(label, sizeof label, "<=%uK", (512u << b) / 1024);
        json_array_append_new(
            sizes, json_pack("{s:s, s:I}", "size", label, "count", (json_int_t)in->sizes[b]));
    }
    json_object_set_new(j, "sizes", sizes);
    json_object_set_new(j, "mean_size", json_real(rw ? (double)rwb / rw : 0.0));
    json_object_set_new(j, "footprint", tr_footprint_json(&in->fp));
    json_object_set_new(j, "sequential_share",
                        json_real(in->seq_candidates ? (double)in->seq / in->seq_candidates : 0.0));
    json_object_set_new(j, "duration_s", json_real(secs));
    json_object_set_new(j, "iops", json_real(secs > 0 ? in->records / secs : 0.0));
    json_object_set_new(j, "mbps", json_real(secs > 0 ? rwb / secs / 1e6 : 0.0));
    json_object_set_new(j, "interarrival_us", hist_json(in->gaps));
    json_t *series = json_array();
    for (uint32_t i = 0; i < in->nseries; i++)
        json_array_append_new(series,
                              json_pack("{s:f, s:f, s:f}", "t", i * in->width_ns / 1e9, "iops",
                                        in->series_ops[i] / (in->width_ns / 1e9), "mbps",
                                        in->series_bytes[i] / (in->width_ns / 1e9) / 1e6));
    json_object_set_new(j, "series_interval_s", json_real(in->width_ns / 1e9));
    json_object_set_new(j, "series", series);
    if (sim_hist_count(in->lat[0]) + sim_hist_count(in->lat[1]) > 0)
        json_object_set_new(
            j, "captured_latency_us",
            json_pack("{s:o, s:o}", "read", hist_json(in->lat[0]), "write", hist_json(in->lat[1])));
    json_t *vols = json_array();
    for (uint32_t i = 0; i < in->vols.cap; i++) {
        if (in->vols.vals[i] == UINT32_MAX || json_array_size(vols) >= 256) continue;
        json_array_append_new(vols,
                              json_pack("{s:I, s:I}", "volume", (json_int_t)in->vols.keys[i],
                                        "records", (json_int_t)in->vol_ops[in->vols.vals[i]]));
    }
    json_object_set_new(j, "volumes", json_integer(in->vols.n));
    json_object_set_new(j, "volume_records", vols);
    return j;
}

static double num(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static void print_lat(const char *what, const json_t *h)
{
    printf("  %-22s p50 %.1f us, p99 %.1f us, max %.1f us, mean %.1f us (%lld)\n", what,
           num(h, "p50_us"), num(h, "p99_us"), num(h, "max_us"), num(h, "mean_us"),
           (long long)json_integer_value(json_object_get(h, "count")));
}

static void print_text(const json_t *j)
{
    const json_t *src = json_object_get(j, "source"), *ops = json_object_get(j, "operations");
    char a[32];
    printf("%s: %s trace (%s compression), %lld records over %.3f s\n",
           json_string_value(json_object_get(src, "file")),
           json_string_value(json_object_get(src, "format")),
           json_string_value(json_object_get(src, "compression")),
           (long long)json_integer_value(json_object_get(j, "records")), num(j, "duration_s"));
    for (int op = 0; op < 4; op++) {
        const json_t *o = json_object_get(ops, tr_op_name(op));
        printf("  %-6s %12lld  %s\n", tr_op_name(op),
               (long long)json_integer_value(json_object_get(o, "count")),
               sim_format_size((uint64_t)json_integer_value(json_object_get(o, "bytes")), a,
                               sizeof a));
    }
    const json_t *rs = json_object_get(j, "read_share");
    printf("  reads: %.1f %% of I/Os, %.1f %% of bytes; mean size %s; sequential %.1f %%\n",
           num(rs, "by_count") * 100, num(rs, "by_bytes") * 100,
           sim_format_size((uint64_t)num(j, "mean_size"), a, sizeof a),
           num(j, "sequential_share") * 100);
    const json_t *fp = json_object_get(j, "footprint");
    printf("  footprint: %s (%s); %lld volume(s)\n",
           sim_format_size((uint64_t)json_integer_value(json_object_get(fp, "bytes")), a, sizeof a),
           json_string_value(json_object_get(fp, "method")),
           (long long)json_integer_value(json_object_get(j, "volumes")));
    printf("  rate: %.1f IOPS, %.2f MB/s on average\n", num(j, "iops"), num(j, "mbps"));
    printf("  sizes:");
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(j, "sizes"), i, s)
    {
        json_int_t c = json_integer_value(json_object_get(s, "count"));
        if (c) printf(" %s:%lld", json_string_value(json_object_get(s, "size")), (long long)c);
    }
    printf("\n");
    print_lat("inter-arrival", json_object_get(j, "interarrival_us"));
    const json_t *lat = json_object_get(j, "captured_latency_us");
    if (lat) {
        print_lat("captured read latency", json_object_get(lat, "read"));
        print_lat("captured write latency", json_object_get(lat, "write"));
    }
    printf("  over time (every %.3g s):", num(j, "series_interval_s"));
    const json_t *series = json_object_get(j, "series");
    size_t n = json_array_size(series), step = n > 20 ? (n + 19) / 20 : 1;
    for (i = 0; i < n; i += step) {
        s = json_array_get(series, i);
        printf(" %.0f", num(s, "iops"));
    }
    printf(" IOPS\n");
    printf("  source: %lld reordered within the window, %lld late, %lld skipped bad, "
           "%lld non-I/O lines or events\n",
           (long long)json_integer_value(json_object_get(src, "reordered")),
           (long long)json_integer_value(json_object_get(src, "late_clamped")),
           (long long)json_integer_value(json_object_get(src, "skipped_bad")),
           (long long)json_integer_value(json_object_get(src, "non_io")));
}

static int info_main(int argc, char **argv)
{
    const char *format = NULL, *json_path = NULL;
    uint64_t volume = 0, window = 65536;
    bool skip_bad = false;
    sim_opt opts[] = {
        TR_SOURCE_OPTS(opts, format, volume, skip_bad, window),
        SIM_VOCAB_JSON(&json_path, NULL),
        SIM_OPT_END,
    };
    char *pos[1];
    int npos = 0;
    int rc = sim_opts_parse("trace info", opts, argc, argv, pos, 1, &npos,
                            "appsim trace info TRACE [--format F] [--volume N] [--json FILE]");
    if (rc) return sim_opts_exit_status(rc);
    if (npos != 1) {
        sim_error("trace info needs one trace file");
        return SIM_EXIT_USAGE;
    }
    tr_source *src;
    if ((rc = tr_open_cli(pos[0], format, opts, volume, skip_bad, window, &src))) return rc;
    info in = {.width_ns = 1000000000ull};
    tr_footprint_init(&in.fp);
    in.series_ops = sim_xcalloc(SERIES_MAX, sizeof(uint64_t));
    in.series_bytes = sim_xcalloc(SERIES_MAX, sizeof(uint64_t));
    in.gaps = sim_hist_new();
    in.lat[0] = sim_hist_new();
    in.lat[1] = sim_hist_new();
    tr_record r;
    int got;
    while ((got = tr_next(src, &r)) == TR_NEXT_RECORD)
        account(&in, &r);
    if (got == TR_NEXT_ERROR) {
        sim_error("%s", tr_error(src));
        rc = SIM_EXIT_USAGE;
    }
    if (rc == 0) {
        json_t *j = build(&in, src);
        if (!sim_json_on_stdout(json_path)) print_text(j);
        rc = sim_result_save(j, json_path);
        json_decref(j);
    }
    tr_footprint_free(&in.fp);
    free(in.series_ops);
    free(in.series_bytes);
    free(in.vol_ops);
    free(in.vol_end);
    tr_volmap_free(&in.vols);
    sim_hist_free(in.gaps);
    sim_hist_free(in.lat[0]);
    sim_hist_free(in.lat[1]);
    tr_close(src);
    return rc;
}

static const tr_subcommand info_sub = {"info", "describe a trace (mix, sizes, footprint, rate)",
                                       info_main};
TR_REGISTER_SUBCOMMAND(info_sub);
