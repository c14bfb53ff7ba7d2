/*
 * trace/replay/replay_cmd.c: `appsim replay TRACE --target PATH [options]`: opens the trace
 * and the target, replays once (original timing, as fast as possible, looped) or runs
 * the rate curve, and writes the result document (--json FILE) and a text summary.
 */
#include "trace/replay/replay_internal.h"

#include <stdlib.h>
#include <string.h>

#define USAGE                                                                                      \
    "appsim replay TRACE --target PATH [--timing original|afap] [--speed F] [--qd N]\n"            \
    "       [--region OFFSET:LENGTH] [--map none|wrap|scale] [--file-size SIZE]\n"                 \
    "       [--loop N | --duration D] [--curve [--curve-points 10,20,...]] [--json FILE]"

static int parse_region(const char *s, uint64_t *off, uint64_t *len)
{
    const char *colon = strchr(s, ':');
    if (!colon) return SIM_ERR;
    char a[64];
    size_t n = (size_t)(colon - s);
    if (n == 0 || n >= sizeof a) return SIM_ERR;
    memcpy(a, s, n);
    a[n] = 0;
    return sim_parse_size(a, off) || sim_parse_size(colon + 1, len) || *len == 0 ? SIM_ERR : SIM_OK;
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
    sim_result_print_curve_warning(stdout, "  ", json_object_get(curve, "points"));
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

/* One invocation's command line. */
typedef struct rp_cli {
    st_target_opts to;
    const char *engine, *format, *timing, *region, *map, *json_path, *points;
    uint64_t volume, window, qd, loops, file_size;
    uint64_t duration, warmup, interval, seed, steady_round, steady_rounds;
    uint64_t point_warmup, point_measure;
    double speed;
    bool skip_bad, curve, uniform, quiet, trims;
    double fr[64]; /* curve points as fractions of the maximum */
    int nfr;
} rp_cli;

/* The target and the trace to read. */
static void input_opts(rp_cli *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        ST_TARGET_OPTIONS_OLD(c->to, c->engine, "io-engine"),
        TR_SOURCE_OPTS(opts, c->format, c->volume, c->skip_bad, c->window),
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* How the records are played: timing, depth, and where on the target they land. */
static void playback_opts(rp_cli *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "timing",
         .kind = SIM_OPT_CHOICE,
         .dst = &c->timing,
         .help = "original: the captured timestamps; afap: as fast as possible at --qd",
         .choices = "original|afap"},
        {.name = "speed",
         .kind = SIM_OPT_DOUBLE,
         .dst = &c->speed,
         .help = "original timing: 2 = twice as fast",
         .min = 0.001,
         .max = 1000000},
        {.name = "qd",
         .kind = SIM_OPT_U64,
         .dst = &c->qd,
         .aliases = "fio:iodepth",
         .help = "most I/Os outstanding",
         .min = 1,
         .max = 4096},
        {.name = "region",
         .kind = SIM_OPT_STRING,
         .dst = &c->region,
         .help = "OFFSET:LENGTH of the data file or device to replay into (default: all of it)"},
        {.name = "map",
         .kind = SIM_OPT_CHOICE,
         .dst = &c->map,
         .help = "offsets beyond the region: refuse (none), wrap, or scale the trace onto it",
         .choices = "none|wrap|scale"},
        {.name = "file-size",
         .kind = SIM_OPT_SIZE,
         .dst = &c->file_size,
         .help = "directory target: size of the data file (default: the trace's extent)"},
        {.name = "trim-files",
         .kind = SIM_OPT_FLAG,
         .dst = &c->trims,
         .help =
             "issue trims on a file target as hole punches (default: counted and skipped, since "
             "reads of a hole would not reach the drive)"},
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* One replay: passes, length and phases. */
static void run_opts(rp_cli *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "loop",
         .kind = SIM_OPT_U64,
         .dst = &c->loops,
         .help = "passes over the trace",
         .min = 1,
         .max = 1e12},
        SIM_VOCAB_DURATION_PEERS(
            &c->duration, 0, ", looping the trace (default: one pass x --loop)", "|fio:runtime"),
        SIM_VOCAB_WARMUP_PEERS(&c->warmup,
                               "; \"steady\": until the IOPS is steady (SNIA PTS rule, rounds "
                               "of --steady-round; needs --duration)",
                               "fio:ramp_time"),
        SIM_STEADY_OPTS(&c->steady_round, &c->steady_rounds),
        SIM_VOCAB_REPORT_INTERVAL(&c->interval),
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* The rate curve, and the output. */
static void curve_opts(rp_cli *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "curve",
         .kind = SIM_OPT_FLAG,
         .dst = &c->curve,
         .help = "rate curve: a maximum-rate run, then fractions of that maximum"},
        SIM_VOCAB_CURVE_POINTS(&c->points, NULL),
        {.name = "point-warmup",
         .kind = SIM_OPT_DURATION,
         .dst = &c->point_warmup,
         .help = "curve: warm-up of each point"},
        {.name = "point-duration",
         .kind = SIM_OPT_DURATION,
         .dst = &c->point_measure,
         .help = "curve: measured interval of each point",
         .min = 0.001},
        {.name = "uniform",
         .kind = SIM_OPT_FLAG,
         .dst = &c->uniform,
         .help = "curve: evenly spaced arrivals instead of exponential"},
        SIM_VOCAB_SEED(&c->seed, "curve arrivals"),
        SIM_VOCAB_JSON(&c->json_path, NULL),
        SIM_VOCAB_QUIET(&c->quiet, "no progress lines"),
        SIM_OPT_END,
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* This invocation's options at their defaults and its option table in opts[0..n). */
static void replay_options(rp_cli *c, sim_opt *opts, size_t n)
{
    *c = (rp_cli){.engine = "io_uring",
                  .timing = "original",
                  .map = "none",
                  .window = 65536,
                  .qd = 32,
                  .loops = 1,
                  .interval = SIM_REPORT_INTERVAL_DEFAULT_NS,
                  .seed = 1,
                  .steady_round = SIM_STEADY_DEFAULT_ROUND_NS,
                  .steady_rounds = SIM_STEADY_DEFAULT_MAX_ROUNDS,
                  .point_warmup = 5000000000ull,
                  .point_measure = 20000000000ull,
                  .speed = 1.0};
    size_t at = 0;
    input_opts(c, opts, n, &at);
    playback_opts(c, opts, n, &at);
    run_opts(c, opts, n, &at);
    curve_opts(c, opts, n, &at);
}

/* No option may be accepted and ignored: each mode refuses the other's. */
static int check_modes(const rp_cli *c, const sim_opt *opts)
{
    static const char *const curve_only[] = {"curve-points", "point-warmup", "point-duration",
                                             "uniform", "seed"};
    static const char *const single_only[] = {
        "timing", "speed",           "loop",         "duration",
        "warmup", "report-interval", "steady-round", "steady-max-rounds"};
    for (size_t i = 0; i < sizeof curve_only / sizeof *curve_only; i++)
        if (!c->curve && sim_opts_find(opts, curve_only[i])->set) {
            sim_error("--%s needs --curve", curve_only[i]);
            return SIM_EXIT_USAGE;
        }
    for (size_t i = 0; i < sizeof single_only / sizeof *single_only; i++)
        if (c->curve && sim_opts_find(opts, single_only[i])->set) {
            sim_error("--curve sets its own timing and durations: --%s does not apply (use "
                      "--point-warmup and --point-duration)",
                      single_only[i]);
            return SIM_EXIT_USAGE;
        }
    int rc = sim_steady_opts_check("replay", opts, c->warmup);
    if (rc) return rc;
    if (c->warmup == SIM_WARMUP_STEADY && !c->duration) {
        sim_error("--warmup steady needs --duration: the trace loops through the warm-up "
                  "rounds, then is measured for that long");
        return SIM_EXIT_USAGE;
    }
    if (sim_opts_find(opts, "loop")->set && sim_opts_find(opts, "duration")->set) {
        sim_error("--loop and --duration both say when the replay ends: give --loop N for N "
                  "passes or --duration D to loop the trace for D");
        return SIM_EXIT_USAGE;
    }
    if (sim_opts_find(opts, "speed")->set && strcmp(c->timing, "original")) {
        sim_error("--speed applies to --timing original only");
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* The replay options from the command line; parses --region and --curve-points. */
static int replay_opts_of(rp_cli *c, tr_replay_opts *o)
{
    tr_replay_opts_default(o);
    o->timing = !strcmp(c->timing, "afap") ? TR_TIMING_AFAP : TR_TIMING_ORIGINAL;
    o->speed = c->speed;
    o->qd = (unsigned)c->qd;
    o->map = !strcmp(c->map, "wrap")    ? TR_MAP_WRAP
             : !strcmp(c->map, "scale") ? TR_MAP_SCALE
                                        : TR_MAP_NONE;
    o->file_size = c->file_size;
    o->loops = c->loops;
    o->duration_ns = c->duration;
    o->engine = c->engine;
    o->discard_files = c->trims;
    o->uniform = c->uniform;
    o->seed = c->seed;
    if (c->region && parse_region(c->region, &o->region_offset, &o->region_length)) {
        sim_error("--region '%s': OFFSET:LENGTH expected, e.g. 0:10G", c->region);
        return SIM_EXIT_USAGE;
    }
    if (c->points && (c->nfr = tr_curve_parse_points(c->points, c->fr, 64)) < 0) {
        sim_error("--curve-points '%s': percentages expected, e.g. 10,50,100,120", c->points);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* The rate curve into doc; its top-level summary (what compare reads) is the
 * maximum-rate run, the curve's peak; every point's own run stays under
 * curve.points[i].run. */
static int run_curve(const rp_cli *c, tr_source *src, st_target *t, const tr_replay_opts *o,
                     json_t *doc, char *err, size_t errlen)
{
    tr_curve_opts co = {c->nfr ? c->fr : NULL, c->nfr,   c->point_warmup,
                        c->point_measure,      c->quiet, 0};
    json_t *cj = NULL;
    int rc = tr_replay_curve(src, t, o, &co, &cj, err, errlen);
    if (rc) return rc;
    const json_t *max_run =
        json_object_get(json_array_get(json_object_get(cj, "points"), 0), "run");
    if (max_run) json_object_update(doc, (json_t *)max_run);
    json_object_set_new(doc, "curve", cj);
    if (!sim_json_on_stdout(c->json_path)) print_curve(cj);
    return SIM_EXIT_OK;
}

/* One replay (timed, as fast as possible, looped) into doc. */
static int run_once(const rp_cli *c, tr_source *src, st_target *t, const tr_replay_opts *o,
                    json_t *doc, char *err, size_t errlen)
{
    sim_run_config cfg;
    tr_replay_run_config(&cfg);
    sim_run_config_warmup(&cfg, c->warmup, c->steady_round, c->steady_rounds);
    cfg.duration_ns = c->duration;
    cfg.report_interval_ns = c->interval;
    cfg.quiet = c->quiet;
    sim_run *run = sim_run_new(&cfg);
    sim_run_add_probe(run, &st_device_io_probe, t);
    json_t *stats = NULL;
    int rc = tr_replay(run, src, t, o, &stats, err, errlen);
    if (rc == 0) {
        sim_result_put_run(doc, NULL, run);
        json_object_set_new(doc, "replay", stats);
        if (!sim_json_on_stdout(c->json_path)) {
            sim_result_print(stdout, doc);
            print_replay(stats);
        }
    }
    sim_run_free(run);
    return rc;
}

static int replay_main(int argc, char **argv)
{
    rp_cli c;
    sim_opt opts[48];
    replay_options(&c, opts, sizeof opts / sizeof *opts);
    char *pos[1];
    int npos = 0;
    int rc = sim_opts_parse("replay", opts, argc, argv, pos, 1, &npos, USAGE);
    if (rc) return sim_opts_exit_status(rc);
    sim_set_quiet(c.quiet);
    if (npos != 1 || !c.to.path) {
        sim_error("replay needs a trace and --target PATH\nusage: %s", USAGE);
        return SIM_EXIT_USAGE;
    }
    tr_replay_opts o;
    if ((rc = replay_opts_of(&c, &o)) || (rc = check_modes(&c, opts))) return rc;
    tr_source *src;
    if ((rc = tr_open_cli(pos[0], c.format, opts, c.volume, c.skip_bad, c.window, &src))) return rc;
    st_target *t;
    char err[1024];
    if ((rc = st_target_open(&c.to, &t, err, sizeof err))) {
        sim_error("%s", err);
        tr_close(src);
        return rc;
    }
    json_t *doc = sim_result_new("replay", argc, argv, opts);
    json_object_set_new(doc, "target", st_target_json(t));
    rc = c.curve ? run_curve(&c, src, t, &o, doc, err, sizeof err)
                 : run_once(&c, src, t, &o, doc, err, sizeof err);
    if (rc) sim_error("%s", err);
    json_object_set_new(doc, "trace", tr_source_stats_json(src));
    if (rc == 0)
        rc = sim_result_save(doc, c.json_path);
    else if (sim_result_save_stopped(doc, c.json_path, err))
        rc = SIM_EXIT_FAIL;
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
