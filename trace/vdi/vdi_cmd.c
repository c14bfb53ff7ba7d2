/*
 * trace/vdi/vdi_cmd.c: `appsim vdi`: VDI boot and login storms (full and linked clones)
 * composed from one desktop's traces, replayed on the target at maximum rate and as
 * a rate curve through the trace replay (tr_replay_curve), reported like the labs'
 * VDI rows: peak IOPS with its latency, and the latency-versus-IOPS points.
 *
 * The target holds one data file per clone model ("vdi-full.data",
 * "vdi-linked.data") laid out as vdi_internal.h describes; the replay creates and
 * fills it once before the first I/O (the replica and the full-clone copies are
 * written once, as the labs fill the drive), and the storm addresses it without any
 * mapping (the layout is exactly the file). On a block device the layout is written
 * here, once per clone model, from offset 0. Every result says which phase traces
 * were captured and which were modeled.
 */
#include "trace/vdi/vdi_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "appsim vdi --target PATH --desktops N (--clones full|linked --phase "
    "boot|initial-login|monday-login | --all)\n"
    "Replays a VDI storm: N desktops booting or logging in at once, each with its own "
    "full copy of\nthe image or as linked clones of one replica, at maximum rate and "
    "over a rate curve.";

typedef struct combo {
    vdi_clones clones;
    vdi_phase phase;
} combo;

/* The latency of a curve point: over reads and writes together (merged histogram). */
static void point_latency(const json_t *pt, double *iops, double *mean_us, double *p99_us)
{
    *iops = json_number_value(json_object_get(pt, "iops"));
    *mean_us = json_number_value(json_object_get(pt, "mean_us"));
    *p99_us = json_number_value(json_object_get(pt, "p99_us"));
}

/* A device target has no data file for the replay to fill: lay the storm out here,
 * once per clone model, so that the replica and the copies are written before the
 * first measured I/O (as on a directory target). */
static int layout_device(st_target *t, uint64_t bytes, uint64_t seed, char *err, size_t errlen)
{
    int fd = -1;
    /* Checked before the device is opened for writing (which marks it). */
    uint64_t size = st_target_capacity(t);
    if (size < bytes) {
        char a[32], b[32];
        snprintf(err, errlen, "the storm's layout needs %s but %s holds %s: fewer --desktops",
                 sim_format_size(bytes, a, sizeof a), st_target_path(t),
                 sim_format_size(size, b, sizeof b));
        return SIM_EXIT_USAGE;
    }
    int rc = st_target_create_file(t, NULL, 0, &fd, err, errlen);
    if (rc) return rc;
    const size_t chunk = 4u << 20;
    uint64_t *buf = st_alloc_aligned(chunk);
    if (!buf) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return SIM_EXIT_FAIL;
    }
    sim_rng rng;
    sim_rng_seed(&rng, seed, 77);
    char a[32];
    sim_info("vdi: writing the layout (%s) on %s", sim_format_size(bytes, a, sizeof a),
             st_target_path(t));
    rc = 0;
    for (uint64_t off = 0; off < bytes && !sim_interrupted(); off += chunk) {
        /* Incompressible: a drive that compresses or deduplicates cannot shortcut it. */
        for (size_t i = 0; i < chunk / 8; i++)
            buf[i] = sim_rng_u64(&rng);
        size_t len = bytes - off < chunk ? (size_t)(bytes - off) : chunk;
        len = (len + 4095) / 4096 * 4096;
        if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len) {
            sim_fault_note(errno, "writing the layout on %s at offset %llu", st_target_path(t),
                           (unsigned long long)off);
            snprintf(err, errlen, "writing the layout at %llu on %s: %s", (unsigned long long)off,
                     st_target_path(t), strerror(errno));
            rc = SIM_EXIT_FAIL;
            break;
        }
    }
    if (rc == 0 && sim_interrupted()) {
        snprintf(err, errlen, "interrupted while writing the layout");
        rc = SIM_EXIT_FAIL;
    }
    if (rc == 0 && fdatasync(fd) != 0) {
        snprintf(err, errlen, "fdatasync %s: %s", st_target_path(t), strerror(errno));
        rc = SIM_EXIT_FAIL;
    }
    st_free_aligned(buf);
    close(fd);
    return rc;
}

static json_t *storm_json(tr_source *src, const vdi_storm_opts *so)
{
    /* One dry pass for the composition counts, then back to the start. */
    tr_record r;
    uint64_t last = 0;
    while (tr_next(src, &r) == TR_NEXT_RECORD)
        last = r.time_ns;
    vdi_storm_stats st;
    vdi_storm_stats_get(src, &st);
    tr_rewind(src);
    uint64_t first_start = UINT64_MAX, last_start = 0;
    for (uint32_t d = 0; d < so->desktops; d++) {
        uint64_t s = vdi_storm_start_ns(src, d);
        first_start = s < first_start ? s : first_start;
        last_start = s > last_start ? s : last_start;
    }
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f}", "records",
                     (json_int_t)st.records, "desktop_records", (json_int_t)st.source_records,
                     "own_copy_reads", (json_int_t)st.own_reads, "replica_reads",
                     (json_int_t)st.replica_reads, "delta_reads", (json_int_t)st.delta_reads,
                     "writes", (json_int_t)st.writes, "split_reads", (json_int_t)st.split_reads,
                     "first_start_s", (double)first_start / 1e9, "last_start_s",
                     (double)last_start / 1e9, "storm_span_s", (double)last / 1e9);
}

/* The command line of one invocation. */
typedef struct vdi_cli {
    st_target_opts to;
    const char *engine, *clones, *phase, *points, *json;
    const char *user_trace[VDI_NPHASES]; /* boot, initial login, Monday login */
    uint64_t desktops, qd, seed, warmup, measure, stagger;
    uint64_t job_desktops; /* --desktops: the job's; desktops is this rank's share */
    double jitter, stagger_frac, model_seconds;
    bool all, model_logins, quiet;
    double fr[32]; /* curve points as fractions of the maximum */
    int nfr;
    char points_pct[512]; /* the effective points, in percent, as recorded */
} vdi_cli;

/*
 * --curve-points is in percent, as in replay and io. Fractions of the maximum
 * (0.1,...,1.2), an older spelling, are still read; the rule that tells them apart: a
 * list whose every value is at most 2 is fractions (nobody asks for a curve that ends at
 * 2 % of the maximum), and is converted to percent with a note. The effective list is
 * what the result records.
 */
static int parse_points(vdi_cli *c)
{
    if (!c->points) return SIM_EXIT_OK;
    int n = tr_curve_parse_points(c->points, c->fr, 32);
    if (n < 0) {
        sim_error("vdi: --curve-points '%s': give percentages of the maximum rate, e.g. "
                  "10,50,100,120",
                  c->points);
        return SIM_EXIT_USAGE;
    }
    double top = 0;
    for (int i = 0; i < n; i++)
        top = c->fr[i] > top ? c->fr[i] : top;
    bool fractions = top <= 0.02;
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (fractions) c->fr[i] *= 100;
        len += (size_t)snprintf(c->points_pct + len, sizeof c->points_pct - len, "%s%g",
                                i ? "," : "", c->fr[i] * 100);
        if (len >= sizeof c->points_pct) return SIM_EXIT_USAGE;
    }
    if (fractions)
        sim_warn("vdi: --curve-points '%s' read as fractions of the maximum (every value is at "
                 "most 2), that is %s percent; please give percentages",
                 c->points, c->points_pct);
    c->points = c->points_pct;
    c->nfr = n;
    return SIM_EXIT_OK;
}

/* The storms to run: all six, or the one --clones and --phase name. */
static int plan_combos(const vdi_cli *c, combo *combos, int *ncombos)
{
    *ncombos = 0;
    if (c->all) {
        if (c->clones || c->phase) {
            sim_error("vdi: --all runs every clone model and phase; drop --clones/--phase");
            return SIM_EXIT_USAGE;
        }
        for (int k = 0; k < 2; k++)
            for (int p = 0; p < VDI_NPHASES; p++)
                combos[(*ncombos)++] = (combo){(vdi_clones)k, (vdi_phase)p};
        return SIM_EXIT_OK;
    }
    if (!c->clones || !c->phase) {
        sim_error("vdi: give --clones full|linked and --phase boot|initial-login|"
                  "monday-login, or --all");
        return SIM_EXIT_USAGE;
    }
    combo k = {!strcmp(c->clones, "full") ? VDI_FULL : VDI_LINKED, VDI_BOOT};
    for (int p = 0; p < VDI_NPHASES; p++)
        if (!strcmp(c->phase, vdi_phase_name((vdi_phase)p))) k.phase = (vdi_phase)p;
    combos[(*ncombos)++] = k;
    return SIM_EXIT_OK;
}

/* One storm's entry of "storms": its peak (the maximum-rate run, point 0, the top of
 * the curve the labs quote as "peak IOPS at latency"; rate points past it are overload,
 * whose latency is queueing, not the drive's) and latency against IOPS per point. */
static json_t *storm_result(const vdi_cli *c, const combo *k, const vdi_phase_traces *pt,
                            const vdi_storm_opts *so, const char *fname, uint64_t layout,
                            json_t *comp, json_t *curve)
{
    double best = 0, best_mean = 0, best_p99 = 0;
    json_t *lat_iops = json_array();
    size_t idx;
    json_t *p;
    json_array_foreach(json_object_get(curve, "points"), idx, p)
    {
        double iops, mean, p99;
        point_latency(p, &iops, &mean, &p99);
        json_array_append_new(lat_iops, json_pack("{s:f, s:f, s:f, s:f}", "fraction",
                                                  json_number_value(json_object_get(p, "fraction")),
                                                  "iops", iops, "mean_us", mean, "p99_us", p99));
        if (idx == 0) {
            best = iops;
            best_mean = mean;
            best_p99 = p99;
        }
    }
    bool modeled = pt->t[k->phase].modeled;
    json_t *res =
        json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:s, s:I, s:o, s:{s:f, s:f, s:f}, s:o, s:o}",
                  "clones", vdi_clones_name(k->clones), "phase", vdi_phase_name(k->phase), "source",
                  modeled ? "modeled" : (pt->user[k->phase] ? "user capture" : "captured"),
                  "desktops", (json_int_t)c->desktops, "stagger_s", (double)so->stagger_ns / 1e9,
                  "jitter", c->jitter, "data_file", fname, "layout_bytes", (json_int_t)layout,
                  "composition", comp, "peak", "iops", best, "mean_us", best_mean, "p99_us",
                  best_p99, "latency_vs_iops", lat_iops, "curve", curve);
    json_object_set_new(res, "layout",
                        json_pack("{s:I, s:I, s:I}", "image_bytes", (json_int_t)pt->img.image_bytes,
                                  "delta_bytes",
                                  (json_int_t)(k->clones == VDI_LINKED ? pt->img.delta_bytes : 0),
                                  "copies", (json_int_t)(k->clones == VDI_FULL ? c->desktops : 1)));
    return res;
}

/* A device target must hold the largest of the storms' layouts: checked before the first
 * storm, so that a refusal runs nothing. SIM_EXIT_OK or SIM_EXIT_USAGE (message printed). */
static int check_device_size(const vdi_cli *c, st_target *t, const vdi_phase_traces *pt,
                             const combo *combos, int ncombos)
{
    if (!st_target_is_device(t)) return SIM_EXIT_OK; /* a file's space is checked as it is made */
    uint64_t need = 0, size = st_target_capacity(t);
    for (int i = 0; i < ncombos; i++) {
        uint64_t b = vdi_layout_bytes(&pt->img, combos[i].clones, (uint32_t)c->desktops);
        if (b > need) need = b;
    }
    if (need <= size) return SIM_EXIT_OK;
    char a[32], b[32];
    sim_error("vdi: the storm's layout needs %s but %s holds %s: use fewer --desktops or a "
              "larger device",
              sim_format_size(need, a, sizeof a), st_target_path(t),
              sim_format_size(size, b, sizeof b));
    return SIM_EXIT_USAGE;
}

/* Runs one storm (lays out the device first if needed) and appends its entry to
 * results. SIM_EXIT_OK or an exit status (message printed). */
static int run_storm(const vdi_cli *c, st_target *t, const vdi_phase_traces *pt, const combo *k,
                     bool laid_out[2], json_t *results)
{
    char err[1024] = "";
    const vdi_trace *tr = &pt->t[k->phase];
    vdi_trace_stats ts;
    vdi_trace_stats_of(tr, &ts);
    uint64_t layout = vdi_layout_bytes(&pt->img, k->clones, (uint32_t)c->desktops);
    vdi_storm_opts so = {
        .clones = k->clones,
        .desktops = (uint32_t)c->desktops,
        .stagger_ns =
            c->stagger ? c->stagger : (uint64_t)((double)ts.duration_ns * c->stagger_frac),
        .jitter = c->jitter,
        .seed = c->seed,
    };
    if (st_target_is_device(t) && !laid_out[k->clones]) {
        int rc = layout_device(t, layout, c->seed, err, sizeof err);
        if (rc) {
            sim_error("vdi: %s", err);
            return rc;
        }
        laid_out[k->clones] = true;
    }
    tr_source *src = NULL;
    if (vdi_storm_open(tr, &pt->img, &so, &src, err, sizeof err) != 0) {
        sim_error("vdi: %s", err);
        return SIM_EXIT_FAIL;
    }
    char fname[64];
    snprintf(fname, sizeof fname, "vdi-%s.data", vdi_clones_name(k->clones));
    tr_replay_opts ro;
    tr_replay_opts_default(&ro);
    ro.timing = TR_TIMING_AFAP;
    ro.qd = (unsigned)c->qd;
    ro.engine = c->engine;
    ro.region_offset = 0;
    ro.region_length = layout;
    ro.map = TR_MAP_NONE;
    ro.file_size = layout;
    ro.file_name = fname;
    ro.seed = c->seed;
    tr_curve_opts co = {.fractions = c->nfr ? c->fr : NULL,
                        .nfractions = c->nfr,
                        .warmup_ns = c->warmup,
                        .measure_ns = c->measure,
                        .quiet = c->quiet};
    sim_info("vdi: %s clones, %s (%s), %llu desktops, layout %.1f MiB in %s",
             vdi_clones_name(k->clones), vdi_phase_name(k->phase),
             tr->modeled ? "modeled" : "captured", (unsigned long long)c->desktops,
             (double)layout / (1 << 20), fname);
    json_t *comp = storm_json(src, &so);
    json_t *curve = NULL;
    int rc = tr_replay_curve(src, t, &ro, &co, &curve, err, sizeof err);
    tr_close(src);
    if (rc != 0) {
        sim_error("vdi: %s clones, %s: %s", vdi_clones_name(k->clones), vdi_phase_name(k->phase),
                  err);
        json_decref(comp);
        return rc;
    }
    json_array_append_new(results, storm_result(c, k, pt, &so, fname, layout, comp, curve));
    return SIM_EXIT_OK;
}

/* The table: one row per storm, like the labs' VDI rows. */
static void print_table(FILE *out, const vdi_cli *c, const json_t *results)
{
    fprintf(out, "\nVDI storms, %llu desktops on %s (qd %llu)\n", (unsigned long long)c->desktops,
            c->to.path, (unsigned long long)c->qd);
    fprintf(out, "%-7s %-14s %-12s %12s %10s %10s   latency vs IOPS (us @ IOPS)\n", "clones",
            "phase", "source", "peak IOPS", "mean us", "p99 us");
    size_t i;
    const json_t *r;
    json_array_foreach(results, i, r)
    {
        const json_t *pk = json_object_get(r, "peak");
        fprintf(out, "%-7s %-14s %-12s %12.0f %10.1f %10.1f  ",
                json_string_value(json_object_get(r, "clones")),
                json_string_value(json_object_get(r, "phase")),
                json_string_value(json_object_get(r, "source")),
                json_number_value(json_object_get(pk, "iops")),
                json_number_value(json_object_get(pk, "mean_us")),
                json_number_value(json_object_get(pk, "p99_us")));
        size_t j;
        const json_t *q;
        json_array_foreach(json_object_get(r, "latency_vs_iops"), j, q)
        {
            if (j == 0) continue; /* the max run is the peak column */
            fprintf(out, " %.0f@%.0f", json_number_value(json_object_get(q, "mean_us")),
                    json_number_value(json_object_get(q, "iops")));
        }
        fputc('\n', out);
        sim_result_print_curve_warning(out, "  ",
                                       json_object_get(json_object_get(r, "curve"), "points"));
    }
    fprintf(out, "source: captured = trace recorded with `appsim trace capture`; modeled = "
                 "calibrated to published per-desktop figures (docs/vdi.md)\n");
}

/* The target and the storm: clones, phase, desktops and their spread. */
static void storm_opts(vdi_cli *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        ST_TARGET_OPTIONS_OLD(c->to, c->engine, "engine"),
        {.name = "clones",
         .kind = SIM_OPT_CHOICE,
         .dst = &c->clones,
         .choices = "full|linked",
         .help = "full: own copy per desktop; linked: shared replica + per-desktop delta"},
        {.name = "phase",
         .kind = SIM_OPT_CHOICE,
         .dst = &c->phase,
         .choices = "boot|initial-login|monday-login",
         .help = "which storm"},
        {.name = "all",
         .kind = SIM_OPT_FLAG,
         .dst = &c->all,
         .help = "the six combinations the labs publish, one table"},
        {.name = "desktops",
         .kind = SIM_OPT_U64,
         .dst = &c->desktops,
         .help = "desktops in the storm",
         .min = 1,
         .max = 100000},
        {.name = "stagger",
         .kind = SIM_OPT_DURATION,
         .dst = &c->stagger,
         .help = "desktops start spread over this window (0: --stagger-fraction of the "
                 "phase trace's length)"},
        {.name = "stagger-fraction",
         .kind = SIM_OPT_DOUBLE,
         .dst = &c->stagger_frac,
         .help = "default stagger as a fraction of the phase trace's length",
         .max = 100},
        {.name = "jitter",
         .kind = SIM_OPT_DOUBLE,
         .dst = &c->jitter,
         .help = "each gap between a desktop's I/Os scaled by 1 +- U(0, jitter)",
         .max = 1},
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* What one desktop does: the user's own captures, or the model. */
static void desktop_trace_opts(vdi_cli *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "boot-trace",
         .kind = SIM_OPT_STRING,
         .dst = &c->user_trace[VDI_BOOT],
         .help = "your own capture of one desktop's boot (any trace format)"},
        {.name = "login-trace",
         .kind = SIM_OPT_STRING,
         .dst = &c->user_trace[VDI_INITIAL_LOGIN],
         .help = "your own capture of one desktop's first login"},
        {.name = "monday-trace",
         .kind = SIM_OPT_STRING,
         .dst = &c->user_trace[VDI_MONDAY_LOGIN],
         .help = "your own capture of one desktop's Monday login"},
        {.name = "model-logins",
         .kind = SIM_OPT_FLAG,
         .dst = &c->model_logins,
         .help = "model the login phases on published per-desktop figures instead of the "
                 "shipped captures"},
        {.name = "model-seconds",
         .kind = SIM_OPT_DOUBLE,
         .dst = &c->model_seconds,
         .help = "length of a modeled login phase (not published)",
         .min = 1,
         .max = 86400},
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* The replay of the storm (depth, curve points) and the output. */
static void run_opts(vdi_cli *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "qd",
         .kind = SIM_OPT_U64,
         .dst = &c->qd,
         .help = "most I/Os outstanding",
         .min = 1,
         .max = 4096},
        SIM_VOCAB_CURVE_POINTS(&c->points, NULL),
        {.name = "point-warmup",
         .kind = SIM_OPT_DURATION,
         .dst = &c->warmup,
         .help = "warm-up of each curve point"},
        {.name = "point-duration",
         .kind = SIM_OPT_DURATION,
         .dst = &c->measure,
         .help = "measured interval of each curve point",
         .min = 0.001},
        SIM_VOCAB_SEED(&c->seed, "desktop starts and jitter"),
        SIM_VOCAB_JSON(&c->json, "o"),
        SIM_VOCAB_QUIET(&c->quiet, "no progress lines"),
        SIM_OPT_END,
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* Under mpirun --desktops is the job's: each rank boots its share (docs/mpi.md).
 * SIM_EXIT_OK, or SIM_EXIT_USAGE when there are fewer desktops than ranks. */
static int rank_share(vdi_cli *c)
{
    c->job_desktops = c->desktops;
    if (sim_ranks_size() > 1) {
        uint64_t n = (uint64_t)sim_ranks_size(), r = (uint64_t)sim_ranks_rank();
        if (c->desktops < n) {
            sim_error("vdi: --desktops %llu is the job's total, spread over %llu ranks: give "
                      "at least one desktop per rank",
                      (unsigned long long)c->desktops, (unsigned long long)n);
            return SIM_EXIT_USAGE;
        }
        c->desktops = c->desktops / n + (r < c->desktops % n);
    }
    return SIM_EXIT_OK;
}

/* Parses the command line into c (opts: room for the table, which the result records);
 * SIM_EXIT_OK, SIM_OPTS_HELP_SHOWN or SIM_EXIT_USAGE. */
static int parse_cli(vdi_cli *c, sim_opt *opts, size_t nopts, int argc, char **argv)
{
    size_t at = 0;
    storm_opts(c, opts, nopts, &at);
    desktop_trace_opts(c, opts, nopts, &at);
    run_opts(c, opts, nopts, &at);
    /* vdi's old `--json` flag printed the document on stdout: now `--json -`. */
    ((sim_opt *)sim_opts_find(opts, "json"))->bare_value = "-";
    int npos = 0;
    int rc = sim_opts_parse("vdi", opts, argc, argv, NULL, 0, &npos, usage);
    if (rc) return rc;
    if (!c->to.path) {
        sim_error("vdi: --target is required (a directory on the drive, or a device)");
        return SIM_EXIT_USAGE;
    }
    rc = rank_share(c);
    if (rc) return rc;
    return parse_points(c);
}

static int vdi_main(int argc, char **argv)
{
    vdi_cli c = {.engine = "io_uring",
                 .desktops = 8,
                 .qd = 32,
                 .seed = 1,
                 .warmup = 2000000000ull,
                 .measure = 5000000000ull,
                 .jitter = 0.1,
                 .stagger_frac = 0.1,
                 .model_seconds = 60};
    sim_opt opts[40];
    int rc = parse_cli(&c, opts, sizeof opts / sizeof *opts, argc, argv);
    if (rc) return sim_opts_exit_status(rc);
    sim_set_quiet(c.quiet);
    combo combos[6];
    int ncombos = 0;
    if ((rc = plan_combos(&c, combos, &ncombos))) return rc;
    char err[1024] = "";
    vdi_phase_traces pt;
    if (vdi_phase_traces_load(&pt, c.user_trace, c.model_logins, c.model_seconds, c.seed, err,
                              sizeof err) != 0) {
        sim_error("vdi: %s", err);
        return SIM_EXIT_USAGE;
    }
    st_target *t = NULL;
    if ((rc = st_target_open(&c.to, &t, err, sizeof err)) != 0) {
        sim_error("vdi: %s", err);
        vdi_phase_traces_free(&pt);
        return rc;
    }
    json_t *doc = sim_result_new("vdi", argc, argv, opts);
    json_object_set_new(doc, "target", st_target_json(t));
    json_t *traces = json_object();
    for (int p = 0; p < VDI_NPHASES; p++)
        json_object_set_new(traces, vdi_phase_name((vdi_phase)p),
                            vdi_trace_json(&pt.t[p], pt.user[p]));
    json_object_set_new(doc, "desktop_traces", traces);
    json_object_set_new(doc, "desktops",
                        json_pack("{s:I, s:I}", "job", (json_int_t)c.job_desktops, "this_rank",
                                  (json_int_t)c.desktops));
    json_t *results = json_array();
    json_object_set_new(doc, "storms", results);
    bool laid_out[2] = {false, false};
    rc = check_device_size(&c, t, &pt, combos, ncombos);
    for (int i = 0; i < ncombos && rc == SIM_EXIT_OK && !sim_interrupted() && !sim_fault_noted();
         i++)
        rc = run_storm(&c, t, &pt, &combos[i], laid_out, results);
    st_target_close(t);
    vdi_phase_traces_free(&pt);
    if (json_array_size(results) > 0 && !sim_json_on_stdout(c.json))
        print_table(stdout, &c, results);
    if (sim_interrupted()) json_object_set_new(doc, "interrupted", json_true());
    /* A refusal before any storm ran is not a result. */
    bool refused = rc == SIM_EXIT_USAGE && json_array_size(results) == 0;
    int wrc = refused ? SIM_EXIT_OK : sim_result_save(doc, c.json);
    json_decref(doc);
    return rc ? rc : wrc;
}

static const sim_command vdi_command = {
    .name = "vdi",
    .summary = "VDI boot and login storms, full and linked clones, from desktop traces",
    .main = vdi_main,
};
SIM_REGISTER_COMMAND(vdi_command);
