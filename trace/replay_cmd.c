/*
 * trace/replay_cmd.c: `appsim replay TRACE --target PATH [options]`: opens the trace
 * and the target, replays once (original timing, as fast as possible, looped) or runs
 * the rate curve, and writes the result document (--json FILE) and a text summary.
 */
#include "trace/replay_internal.h"

#include <stdlib.h>
#include <string.h>

#define USAGE                                                                                      \
    "appsim replay TRACE --target PATH [--timing original|afap] [--speed F] [--qd N]\n"            \
    "       [--region OFFSET:LENGTH] [--map none|wrap|scale] [--file-size SIZE]\n"                 \
    "       [--loop N | --duration D] [--curve [--curve-points 10,20,...]] [--json FILE]"

static int parse_region(const char *s, uint64_t *off, uint64_t *len)
{
    const char *colon = strchr(s, ':');
    if (!colon) return -1;
    char a[64];
    size_t n = (size_t)(colon - s);
    if (n == 0 || n >= sizeof a) return -1;
    memcpy(a, s, n);
    a[n] = 0;
    return sim_parse_size(a, off) || sim_parse_size(colon + 1, len) || *len == 0 ? -1 : 0;
}

static void print_curve(const json_t *curve)
{
    printf("\nrate curve: max %.0f IOPS\n", json_real_value(json_object_get(curve, "max_iops")));
    printf("  %6s %10s %10s %8s | %10s %9s %9s | %10s %9s %9s\n", "point", "target", "iops", "MB/s",
           "read iops", "mean us", "p99 us", "write iops", "mean us", "p99 us");
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(curve, "points"), i, p)
    {
        const json_t *r = json_object_get(p, "read"), *w = json_object_get(p, "write");
        char label[16];
        if (i == 0)
            snprintf(label, sizeof label, "max");
        else
            snprintf(label, sizeof label, "%.0f%%",
                     json_real_value(json_object_get(p, "fraction")) * 100);
        printf("  %6s %10.0f %10.0f %8.1f | %10.0f %9.1f %9.1f | %10.0f %9.1f %9.1f\n", label,
               json_real_value(json_object_get(p, "target_iops")),
               json_real_value(json_object_get(p, "iops")),
               json_real_value(json_object_get(p, "mbps")),
               json_real_value(json_object_get(r, "iops")),
               json_real_value(json_object_get(r, "mean_us")),
               json_real_value(json_object_get(r, "p99_us")),
               json_real_value(json_object_get(w, "iops")),
               json_real_value(json_object_get(w, "mean_us")),
               json_real_value(json_object_get(w, "p99_us")));
    }
}

static void print_replay(const json_t *st)
{
    const json_t *lag = json_object_get(st, "submission_lag_us");
    const json_t *pl = json_object_get(st, "placement");
    printf("  replay: %lld records, %lld issued, %lld errors, %lld passes; submission lag "
           "p50 %.1f us, p99 %.1f us, max %.1f us\n",
           (long long)json_integer_value(json_object_get(st, "records")),
           (long long)json_integer_value(json_object_get(st, "issued")),
           (long long)json_integer_value(json_object_get(st, "errors")),
           (long long)json_integer_value(json_object_get(st, "passes")),
           json_real_value(json_object_get(lag, "p50_us")),
           json_real_value(json_object_get(lag, "p99_us")),
           json_real_value(json_object_get(lag, "max_us")));
    printf("  placement: map %s, %lld aligned, %lld wrapped, %lld scaled; skipped: %lld "
           "zero-length, %lld trims on a file\n",
           json_string_value(json_object_get(pl, "map")),
           (long long)json_integer_value(json_object_get(pl, "aligned")),
           (long long)json_integer_value(json_object_get(pl, "wrapped")),
           (long long)json_integer_value(json_object_get(pl, "scaled")),
           (long long)json_integer_value(json_object_get(st, "zero_length_skipped")),
           (long long)json_integer_value(json_object_get(st, "trims_skipped")));
}

static int replay_main(int argc, char **argv)
{
    st_target_opts to = {0};
    const char *engine = "io_uring";
    const char *format = NULL, *timing = "original", *region = NULL, *map = "none";
    const char *json_path = NULL, *points = NULL;
    uint64_t volume = 0, window = 65536, qd = 32, loops = 1, file_size = 0;
    uint64_t duration = 0, warmup = 0, interval = 0, seed = 1;
    uint64_t steady_round = SIM_STEADY_DEFAULT_ROUND_NS,
             steady_rounds = SIM_STEADY_DEFAULT_MAX_ROUNDS;
    uint64_t point_warmup = 5000000000ull, point_measure = 20000000000ull;
    double speed = 1.0;
    bool skip_bad = false, curve = false, uniform = false, quiet = false, trims = false;
    sim_opt opts[] = {
        ST_TARGET_OPTIONS(to, engine),
        TR_SOURCE_OPTS(opts, format, volume, skip_bad, window),
        {"timing", SIM_OPT_CHOICE, &timing,
         "original: the captured timestamps; afap: as fast as possible at --qd", "original|afap", 0,
         0, false},
        {"speed", SIM_OPT_DOUBLE, &speed, "original timing: 2 = twice as fast", NULL, 0.001,
         1000000, false},
        {"qd", SIM_OPT_U64, &qd, "most I/Os outstanding", NULL, 1, 4096, false},
        {"region", SIM_OPT_STRING, &region,
         "OFFSET:LENGTH of the data file or device to replay into (default: all of it)", NULL, 0, 0,
         false},
        {"map", SIM_OPT_CHOICE, &map,
         "offsets beyond the region: refuse (none), wrap, or scale the trace onto it",
         "none|wrap|scale", 0, 0, false},
        {"file-size", SIM_OPT_SIZE, &file_size,
         "directory target: size of the data file (default: the trace's extent)", NULL, 0, 0,
         false},
        {"trim-files", SIM_OPT_FLAG, &trims,
         "issue trims on a file target as hole punches (default: counted and skipped, since "
         "reads of a hole would not reach the drive)",
         NULL, 0, 0, false},
        {"loop", SIM_OPT_U64, &loops, "passes over the trace", NULL, 1, 1e12, false},
        {"duration", SIM_OPT_DURATION, &duration,
         "measure this long, looping the trace (default: one pass x --loop)", NULL, 0, 0, false},
        {"warmup", SIM_OPT_WARMUP, &warmup,
         "warm-up before the measured phase; \"steady\": until the IOPS is steady (SNIA PTS "
         "rule, rounds of --steady-round; needs --duration)",
         NULL, 0, 0, false},
        SIM_STEADY_OPTS(&steady_round, &steady_rounds),
        {"report-interval", SIM_OPT_DURATION, &interval, "interval reports (0 = none)", NULL, 0, 0,
         false},
        {"curve", SIM_OPT_FLAG, &curve,
         "rate curve: a maximum-rate run, then fractions of that maximum", NULL, 0, 0, false},
        {"curve-points", SIM_OPT_STRING, &points,
         "curve points in percent of the maximum (default 10,20,...,120)", NULL, 0, 0, false},
        {"point-warmup", SIM_OPT_DURATION, &point_warmup, "curve: warm-up of each point", NULL, 0,
         0, false},
        {"point-duration", SIM_OPT_DURATION, &point_measure,
         "curve: measured interval of each point", NULL, 0.001, 0, false},
        {"uniform", SIM_OPT_FLAG, &uniform, "curve: evenly spaced arrivals instead of exponential",
         NULL, 0, 0, false},
        {"seed", SIM_OPT_U64, &seed, "random seed (curve arrivals)", NULL, 0, 0, false},
        {"json", SIM_OPT_STRING, &json_path, "write the result document to FILE (- = stdout)", NULL,
         0, 0, false},
        {"quiet", SIM_OPT_FLAG, &quiet, "no progress lines", NULL, 0, 0, false},
        SIM_OPT_END,
    };
    char *pos[1];
    int npos = 0;
    int rc = sim_opts_parse("replay", opts, argc, argv, pos, 1, &npos, USAGE);
    if (rc) return rc < 0 ? SIM_EXIT_OK : rc;
    sim_set_quiet(quiet);
    if (npos != 1 || !to.path) {
        sim_error("replay needs a trace and --target PATH\nusage: %s", USAGE);
        return SIM_EXIT_USAGE;
    }
    tr_replay_opts o;
    tr_replay_opts_default(&o);
    o.timing = !strcmp(timing, "afap") ? TR_TIMING_AFAP : TR_TIMING_ORIGINAL;
    o.speed = speed;
    o.qd = (unsigned)qd;
    o.map = !strcmp(map, "wrap") ? TR_MAP_WRAP : !strcmp(map, "scale") ? TR_MAP_SCALE : TR_MAP_NONE;
    o.file_size = file_size;
    o.loops = loops;
    o.duration_ns = duration;
    o.engine = engine;
    o.discard_files = trims;
    o.uniform = uniform;
    o.seed = seed;
    if (region && parse_region(region, &o.region_offset, &o.region_length)) {
        sim_error("--region '%s': OFFSET:LENGTH expected, e.g. 0:10G", region);
        return SIM_EXIT_USAGE;
    }
    double fr[64];
    int nfr = 0;
    if (points && (nfr = tr_curve_parse_points(points, fr, 64)) < 0) {
        sim_error("--curve-points '%s': percentages expected, e.g. 10,50,100,120", points);
        return SIM_EXIT_USAGE;
    }
    /* No option may be accepted and ignored: each mode refuses the other's. */
    static const char *const curve_only[] = {"curve-points", "point-warmup", "point-duration",
                                             "uniform", "seed"};
    static const char *const single_only[] = {
        "timing", "speed",           "loop",         "duration",
        "warmup", "report-interval", "steady-round", "steady-max-rounds"};
    for (size_t i = 0; i < sizeof curve_only / sizeof *curve_only; i++)
        if (!curve && sim_opts_find(opts, curve_only[i])->set) {
            sim_error("--%s needs --curve", curve_only[i]);
            return SIM_EXIT_USAGE;
        }
    for (size_t i = 0; i < sizeof single_only / sizeof *single_only; i++)
        if (curve && sim_opts_find(opts, single_only[i])->set) {
            sim_error("--curve sets its own timing and durations: --%s does not apply (use "
                      "--point-warmup and --point-duration)",
                      single_only[i]);
            return SIM_EXIT_USAGE;
        }
    if ((rc = sim_steady_opts_check("replay", opts, warmup))) return rc;
    if (warmup == SIM_WARMUP_STEADY && !duration) {
        sim_error("--warmup steady needs --duration: the trace loops through the warm-up "
                  "rounds, then is measured for that long");
        return SIM_EXIT_USAGE;
    }
    if (sim_opts_find(opts, "loop")->set && sim_opts_find(opts, "duration")->set) {
        sim_error("--loop and --duration both say when the replay ends: give --loop N for N "
                  "passes or --duration D to loop the trace for D");
        return SIM_EXIT_USAGE;
    }
    if (curve && point_measure == 0) {
        sim_error("--point-duration 0 leaves nothing to measure: give each curve point a "
                  "measured interval (e.g. 5s)");
        return SIM_EXIT_USAGE;
    }
    if (sim_opts_find(opts, "speed")->set && o.timing != TR_TIMING_ORIGINAL) {
        sim_error("--speed applies to --timing original only");
        return SIM_EXIT_USAGE;
    }
    tr_source *src;
    if ((rc = tr_open_cli(pos[0], format, opts, volume, skip_bad, window, &src))) return rc;
    st_target *t;
    char err[1024];
    if ((rc = st_target_open(&to, &t, err, sizeof err))) {
        sim_error("%s", err);
        tr_close(src);
        return rc;
    }
    /* --json -: the document alone on stdout, so that it can be piped. */
    bool to_stdout = json_path && !strcmp(json_path, "-");
    json_t *doc = sim_result_new("replay", argc, argv, opts);
    json_object_set_new(doc, "target", st_target_json(t));
    if (curve) {
        tr_curve_opts co = {fr, nfr, point_warmup, point_measure, quiet, 0};
        json_t *cj = NULL;
        rc = tr_replay_curve(src, t, &o, &co, &cj, err, sizeof err);
        if (rc == 0) {
            /* The top-level summary (what compare reads) is the maximum-rate run, the
             * curve's peak; every point's own run stays under curve.points[i].run. */
            const json_t *max_run =
                json_object_get(json_array_get(json_object_get(cj, "points"), 0), "run");
            if (max_run) json_object_update(doc, (json_t *)max_run);
            json_object_set_new(doc, "curve", cj);
            if (!to_stdout) print_curve(cj);
        }
    } else {
        sim_run_config cfg;
        tr_replay_run_config(&cfg);
        sim_run_config_warmup(&cfg, warmup, steady_round, steady_rounds);
        cfg.duration_ns = duration;
        cfg.report_interval_ns = interval;
        cfg.quiet = quiet;
        sim_run *run = sim_run_new(&cfg);
        sim_run_add_probe(run, &st_device_io_probe, t);
        json_t *stats = NULL;
        rc = tr_replay(run, src, t, &o, &stats, err, sizeof err);
        if (rc == 0) {
            sim_result_put_run(doc, NULL, run);
            json_object_set_new(doc, "replay", stats);
            if (!to_stdout) {
                sim_result_print(stdout, doc);
                print_replay(stats);
            }
        }
        sim_run_free(run);
    }
    if (rc) sim_error("%s", err);
    json_object_set_new(doc, "trace", tr_source_stats_json(src));
    if (rc == 0 && json_path) {
        if (!strcmp(json_path, "-")) {
            char *s = json_dumps(doc, JSON_INDENT(1));
            printf("%s\n", s);
            free(s);
        } else if (sim_result_write(doc, json_path) != 0) {
            rc = SIM_EXIT_FAIL;
        }
    }
    json_decref(doc);
    st_target_close(t);
    tr_close(src);
    return rc;
}

static const sim_command replay_command = {
    .name = "replay",
    .summary = "replay a block I/O trace on a target (timed, as fast as possible, or a rate curve)",
    .main = replay_main,
};
SIM_REGISTER_COMMAND(replay_command);
