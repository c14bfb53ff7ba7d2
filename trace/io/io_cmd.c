/*
 * trace/io/io_cmd.c: `appsim io --target PATH [--profile NAME[,NAME...] | --all] [options]`:
 * the labs' synthetic vdbench battery. Builds the jobs (built-in profiles, overridden
 * by any definition option given, or one custom definition), the section of the
 * target, fills it when asked, runs each job as one run or a rate curve, and writes
 * the result document (--json FILE, - = stdout and nothing else there) and a text
 * summary. Options take appsim's names; vdbench's (xfersize, rdpct, seekpct) and fio's
 * (rwmixread, iodepth, runtime, ramp_time, direct) are aliases of them, noted on use;
 * fio's bs, bssplit, rw, numjobs, offset and size are options of their own.
 */
#include "trace/io/io_internal.h"

#include <stdlib.h>
#include <string.h>

#define USAGE                                                                                      \
    "appsim io --target PATH [--profile NAME[,NAME...] | --all] [--curve [--curve-points "         \
    "10,...]]\n"                                                                                   \
    "       [--bs SIZE|(SIZE,PCT,...)|(MIN,MAX,STEP) | --bssplit 4k/70:8k/30] [--read-pct N]\n"    \
    "       [--random-pct N] [--threads N] [--section PCT | --offset SIZE --size SIZE] [--fill]\n" \
    "       [--warmup D] [--duration D] [--json FILE]\n"                                           \
    "appsim io --list"

#define MAX_JOBS 32
/* The data file of a directory target when --file-size is not given (recorded as 0, so
 * that results of device and directory targets keep one configuration). */
#define IO_DEFAULT_FILE_SIZE (4ull << 30)
#define MAX_POINTS 64

typedef struct io_cli {
    st_target_opts to;
    const char *engine, *profiles, *bs, *bssplit, *rw, *points, *json;
    double read_pct, random_pct, section_pct, rate;
    uint64_t threads, numjobs, align, offset, size, file_size, fill_bs, fill_qd;
    uint64_t warmup, steady_round, steady_rounds, duration, interval, seed;
    bool all, list, curve, fill, quiet;
} io_cli;

/* fio's --rw patterns: the read share (-1: a mix, --rwmixread's) and the random share. */
#define IO_RW_CHOICES "read|write|randread|randwrite|rw|readwrite|randrw"
static const struct {
    const char *name;
    double read_pct, random_pct;
} rw_patterns[] = {
    {"read", 100, 0}, {"write", 0, 0},      {"randread", 100, 100}, {"randwrite", 0, 100},
    {"rw", -1, 0},    {"readwrite", -1, 0}, {"randrw", -1, 100},
};

static bool given(const sim_opt *opts, const char *name)
{
    return sim_opts_find(opts, name)->set;
}

/* fio's --rw into --read-pct and --random-pct (what the result records), refusing a
 * share it contradicts. */
static int resolve_rw(io_cli *c, const sim_opt *opts, char *err, size_t errlen)
{
    if (!c->rw) return SIM_EXIT_OK;
    size_t i = 0;
    while (strcmp(rw_patterns[i].name, c->rw))
        i++;
    bool mix = rw_patterns[i].read_pct < 0;
    if (given(opts, "random-pct") || (!mix && given(opts, "read-pct"))) {
        snprintf(err, errlen,
                 "--rw %s sets the %s share itself; drop --%s (a mix of reads and writes: "
                 "--rw randrw --rwmixread PCT)",
                 c->rw, given(opts, "random-pct") ? "random" : "read",
                 given(opts, "random-pct") ? "random-pct" : "read-pct");
        return SIM_EXIT_USAGE;
    }
    if (!mix || !given(opts, "read-pct")) c->read_pct = mix ? 50 : rw_patterns[i].read_pct;
    c->random_pct = rw_patterns[i].random_pct;
    sim_note("io: --rw %s is fio's name for --read-pct %g --random-pct %g", c->rw, c->read_pct,
             c->random_pct);
    return SIM_EXIT_OK;
}

static void list_profiles(void)
{
    printf("%-22s %-28s %6s %8s %7s  %s\n", "profile", "xfersize", "rdpct", "seekpct", "threads",
           "note");
    for (const io_profile *const *p = io_profiles(); *p; p++)
        printf("%-22s %-28s %6g %8g %7u  %s\n", (*p)->name, (*p)->xfer, (*p)->read_pct,
               (*p)->random_pct, (*p)->threads, (*p)->approximation ? "approximation" : "labs'");
}

/* Applies the definition options the user gave to a job's spec. */
static int override(const io_cli *c, const sim_opt *opts, io_spec *s, char *err, size_t errlen)
{
    char why[256];
    const char *bs_name = given(opts, "bssplit") ? "bssplit" : given(opts, "bs") ? "bs" : NULL;
    if (bs_name && io_xfer_parse(!strcmp(bs_name, "bssplit") ? c->bssplit : c->bs, &s->xfer, why,
                                 sizeof why)) {
        snprintf(err, errlen, "--%s: %s", bs_name, why);
        return SIM_EXIT_USAGE;
    }
    if (given(opts, "read-pct") || c->rw) s->read_pct = c->read_pct;
    if (given(opts, "random-pct") || c->rw) s->random_pct = c->random_pct;
    if (given(opts, "threads")) s->threads = (unsigned)c->threads;
    if (c->numjobs > 1) s->threads *= (unsigned)c->numjobs;
    if (s->threads > 4096) {
        snprintf(err, errlen, "%u outstanding I/Os (threads x numjobs) is more than 4096",
                 s->threads);
        return SIM_EXIT_USAGE;
    }
    s->align = (uint32_t)c->align;
    return SIM_EXIT_OK;
}

static int add_profile(const char *name, io_job *jobs, int *n, char *err, size_t errlen)
{
    const io_profile *p = io_profile_find(name);
    if (!p) {
        snprintf(err, errlen, "no profile '%s'; `appsim io --list` shows them", name);
        return SIM_EXIT_USAGE;
    }
    if (*n == MAX_JOBS) {
        snprintf(err, errlen, "more than %d profiles", MAX_JOBS);
        return SIM_EXIT_USAGE;
    }
    io_job *j = &jobs[(*n)++];
    j->name = p->name;
    j->description = p->description;
    j->approximation = p->approximation;
    return io_profile_spec(p, &j->spec, err, errlen) ? SIM_EXIT_FAIL : 0;
}

static int build_jobs(const io_cli *c, const sim_opt *opts, io_job *jobs, int *n, char *buf,
                      size_t buflen, char *err, size_t errlen)
{
    int rc;
    *n = 0;
    if (c->all) {
        for (const io_profile *const *p = io_profiles(); *p; p++)
            if ((rc = add_profile((*p)->name, jobs, n, err, errlen))) return rc;
    } else if (c->profiles) {
        snprintf(buf, buflen, "%s", c->profiles);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
            if ((rc = add_profile(t, jobs, n, err, errlen))) return rc;
    } else {
        io_job *j = &jobs[(*n)++];
        memset(j, 0, sizeof *j);
        j->name = "custom";
        io_xfer_parse("4k", &j->spec.xfer, err, errlen);
        j->spec.read_pct = c->read_pct;
        j->spec.random_pct = c->random_pct;
        j->spec.threads = (unsigned)c->threads;
    }
    for (int i = 0; i < *n; i++)
        if ((rc = override(c, opts, &jobs[i].spec, err, errlen))) return rc;
    return SIM_EXIT_OK;
}

/* The section: --offset and --size (or --section percent of what follows the offset),
 * block-aligned, rounded down to whole MiB so that the fill covers it exactly. */
static int plan_section(const io_cli *c, const sim_opt *opts, io_plan *p, char *err, size_t errlen)
{
    uint32_t bs = st_target_block_size(p->t);
    bool dev = st_target_is_device(p->t);
    if (dev && sim_opts_find(opts, "file-size")->set) {
        snprintf(err, errlen,
                 "--file-size applies to directory targets; on a device the "
                 "section is a part of the device (--section, --offset, --size)");
        return SIM_EXIT_USAGE;
    }
    uint64_t file_size = c->file_size ? c->file_size : IO_DEFAULT_FILE_SIZE;
    p->data_bytes = dev ? st_target_capacity(p->t) : (file_size + bs - 1) / bs * bs;
    if (c->offset % bs || c->offset >= p->data_bytes) {
        snprintf(err, errlen,
                 "--offset %llu must be a multiple of the block size (%u) inside the data "
                 "(%llu bytes)",
                 (unsigned long long)c->offset, bs, (unsigned long long)p->data_bytes);
        return SIM_EXIT_USAGE;
    }
    uint64_t room = p->data_bytes - c->offset;
    uint64_t len =
        sim_opts_find(opts, "size")->set ? c->size : (uint64_t)(room * (c->section_pct / 100.0));
    if (len > room) {
        snprintf(err, errlen, "--offset plus --size (%llu bytes) go beyond the data (%llu bytes)",
                 (unsigned long long)(c->offset + len), (unsigned long long)p->data_bytes);
        return SIM_EXIT_USAGE;
    }
    len = len >= (1u << 20) ? len / (1u << 20) * (1u << 20) : len / bs * bs;
    if (len < (1u << 20)) {
        snprintf(err, errlen,
                 "the section is smaller than 1 MiB; give a larger --size, "
                 "--section or --file-size");
        return SIM_EXIT_USAGE;
    }
    p->section_offset = c->offset;
    p->section_length = len;
    return SIM_EXIT_OK;
}

static int check_options(io_cli *c, const sim_opt *opts, char *err, size_t errlen)
{
    int rc = 0;
    static const char *const pairs[][2] = {{"bs", "bssplit"}, {"size", "section"}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (given(opts, pairs[i][0]) && given(opts, pairs[i][1])) {
            snprintf(err, errlen, "--%s and --%s say the same thing; give one", pairs[i][0],
                     pairs[i][1]);
            return SIM_EXIT_USAGE;
        }
    if (c->all && c->profiles) {
        snprintf(err, errlen, "--all and --profile: give one");
        return SIM_EXIT_USAGE;
    }
    if ((c->all || (c->profiles && strchr(c->profiles, ','))) && !c->curve) {
        snprintf(err, errlen, "several profiles are compared by their curves: add --curve");
        return SIM_EXIT_USAGE;
    }
    if (c->curve && sim_opts_find(opts, "rate")->set) {
        snprintf(err, errlen, "--rate sets one run's arrival rate; --curve sets its own rates");
        return SIM_EXIT_USAGE;
    }
    if ((rc = sim_steady_opts_check("io", opts, c->warmup))) {
        snprintf(err, errlen, "see `appsim io --help`");
        return rc;
    }
    if (c->curve && c->warmup == SIM_WARMUP_STEADY) {
        snprintf(err, errlen,
                 "--warmup steady applies to one run; each curve point has its "
                 "own --warmup DURATION");
        return SIM_EXIT_USAGE;
    }
    if (!c->curve && c->points) {
        snprintf(err, errlen, "--curve-points needs --curve");
        return SIM_EXIT_USAGE;
    }
    if (c->fill_bs < 4096 || c->fill_bs > (1u << 20) || (c->fill_bs & (c->fill_bs - 1))) {
        snprintf(err, errlen, "--fill-bs must be a power of two from 4K to 1M");
        return SIM_EXIT_USAGE;
    }
    if (!c->fill && (sim_opts_find(opts, "fill-bs")->set || sim_opts_find(opts, "fill-qd")->set)) {
        snprintf(err, errlen, "--fill-bs and --fill-qd need --fill");
        return SIM_EXIT_USAGE;
    }
    return resolve_rw(c, opts, err, errlen);
}

static json_t *section_json(const io_plan *p, const io_cli *c, const sim_opt *opts)
{
    json_t *j = json_pack("{s:I, s:I, s:I, s:s}", "offset", (json_int_t)p->section_offset, "length",
                          (json_int_t)p->section_length, "data_bytes", (json_int_t)p->data_bytes,
                          "data", st_target_is_device(p->t) ? "device" : IO_DATA_FILE);
    if (!sim_opts_find(opts, "size")->set)
        json_object_set_new(j, "percent", json_real(c->section_pct));
    return j;
}

/*
 * The config records every option at its value, but a profile replaces the definition
 * options the user did not give: record what ran instead. One job: its values; several
 * (each with its own): null, the values being in each job's "definition".
 */
static void record_effective(json_t *doc, const io_cli *c, const sim_opt *opts, const io_job *jobs,
                             int njobs)
{
    if (!c->profiles && !c->all) return;
    json_t *cfg = json_object_get(doc, "config");
    const io_job *one = njobs == 1 ? &jobs[0] : NULL;
    const io_profile *prof = one ? io_profile_find(one->name) : NULL;
    const struct {
        bool given;
        const char *name;
        json_t *value;
    } defs[] = {
        {given(opts, "bs") || given(opts, "bssplit"), "bs", prof ? json_string(prof->xfer) : NULL},
        {given(opts, "read-pct") || c->rw, "read-pct", one ? json_real(one->spec.read_pct) : NULL},
        {given(opts, "random-pct") || c->rw, "random-pct",
         one ? json_real(one->spec.random_pct) : NULL},
        {given(opts, "threads"), "threads", one ? json_integer(one->spec.threads) : NULL},
    };
    for (size_t d = 0; d < sizeof defs / sizeof *defs; d++) {
        if (!defs[d].given)
            json_object_set(cfg, defs[d].name, defs[d].value ? defs[d].value : json_null());
        json_decref(defs[d].value);
    }
}

/* Fill (when asked), then every job in turn; the document collects them. */
static int run_plan(const io_plan *p, const io_job *jobs, int njobs, json_t *doc, bool text,
                    char *err, size_t errlen)
{
    int rc = 0;
    if (p->fill) {
        json_t *f = NULL;
        if ((rc = io_fill(p, &f, err, errlen))) return rc;
        json_object_set_new(doc, "fill", f);
    } else {
        json_object_set_new(doc, "fill", json_null());
    }
    if (text) io_print_head(stdout, doc);
    json_t *entries = json_array();
    json_object_set_new(doc, "profiles", entries);
    for (int i = 0; i < njobs && !sim_interrupted(); i++) {
        if (!p->quiet) sim_info("io: %s (%d of %d)", jobs[i].name, i + 1, njobs);
        json_t *e = json_object();
        json_array_append_new(entries, e);
        if ((rc = io_run_job(p, &jobs[i], e, doc, err, errlen))) return rc;
        if (text) io_print_entry(stdout, e, doc);
    }
    json_object_set_new(doc, "interrupted", json_boolean(sim_interrupted()));
    return SIM_EXIT_OK;
}

static void warn_psync(const char *engine, const io_job *jobs, int n)
{
    if (strcmp(engine, "psync")) return;
    for (int i = 0; i < n; i++)
        if (jobs[i].spec.threads > 1) {
            sim_warn("psync runs one I/O at a time: the drive sees queue depth 1 whatever "
                     "--threads says (the result records the engine); use io_uring for depth");
            return;
        }
}

static int io_execute(io_cli *c, sim_opt *opts, int argc, char **argv)
{
    char err[1024], buf[1024];
    io_job jobs[MAX_JOBS];
    double fr[MAX_POINTS];
    int njobs = 0, nfr = 0, rc;
    if ((rc = check_options(c, opts, err, sizeof err)) ||
        (rc = build_jobs(c, opts, jobs, &njobs, buf, sizeof buf, err, sizeof err))) {
        sim_error("io: %s", err);
        return rc;
    }
    if (c->points && (nfr = tr_curve_parse_points(c->points, fr, MAX_POINTS)) < 0) {
        sim_error("io: --curve-points '%s': percentages expected, e.g. 10,50,100,120", c->points);
        return SIM_EXIT_USAGE;
    }
    warn_psync(c->engine, jobs, njobs);
    io_plan p = {.engine = c->engine,
                 .fill = c->fill,
                 .fill_bs = (uint32_t)c->fill_bs,
                 .fill_qd = (unsigned)c->fill_qd,
                 .curve = c->curve,
                 .fractions = nfr ? fr : NULL,
                 .nfractions = nfr,
                 .warmup_ns = c->warmup,
                 .steady_round_ns = c->steady_round,
                 .steady_max_rounds = c->steady_rounds,
                 .duration_ns = c->duration,
                 .report_interval_ns = c->interval,
                 .rate = c->rate,
                 .seed = c->seed,
                 .quiet = c->quiet};
    if ((rc = st_target_open(&c->to, &p.t, err, sizeof err))) {
        sim_error("%s", err);
        return rc;
    }
    bool to_stdout = sim_json_on_stdout(c->json);
    json_t *doc = NULL;
    if (!(rc = plan_section(c, opts, &p, err, sizeof err))) {
        doc = sim_result_new("io", argc, argv, opts);
        json_object_set_new(doc, "target", st_target_json(p.t));
        json_object_set_new(doc, "section", section_json(&p, c, opts));
        record_effective(doc, c, opts, jobs, njobs);
        rc = run_plan(&p, jobs, njobs, doc, !to_stdout, err, sizeof err);
    }
    if (rc) {
        sim_error("io: %s", err);
        if (sim_result_save_stopped(doc, c->json, err)) rc = SIM_EXIT_FAIL;
    } else {
        rc = sim_result_save(doc, c->json);
    }
    json_decref(doc);
    st_target_close(p.t);
    return rc;
}

/* The options' defaults (vdbench's: 4 KiB random reads, 8 threads; 5 s warm-up and 20 s
 * measured per run or curve point). */
static io_cli io_defaults(void)
{
    return (io_cli){.engine = "io_uring",
                    .bs = "4k",
                    .read_pct = 100,
                    .random_pct = 100,
                    .section_pct = 25,
                    .threads = 8,
                    .numjobs = 1,
                    .fill_bs = 128 << 10,
                    .fill_qd = 32,
                    .warmup = 5000000000ull,
                    .steady_round = SIM_STEADY_DEFAULT_ROUND_NS,
                    .steady_rounds = SIM_STEADY_DEFAULT_MAX_ROUNDS,
                    .duration = 20000000000ull,
                    .interval = SIM_REPORT_INTERVAL_DEFAULT_NS,
                    .seed = 1};
}

/* The built-in profiles' names, "a|b|c", for the shell completion of --profile. */
static const char *profile_names(void)
{
    static char names[2048];
    if (!names[0]) {
        size_t len = 0;
        for (const io_profile *const *p = io_profiles(); *p && len < sizeof names; p++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? "|" : "",
                                    (*p)->name);
    }
    return names;
}

/* Where and which: the target, and the built-in profiles. */
static void target_opts(io_cli *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        ST_TARGET_OPTIONS_OLD(c->to, c->engine, "io-engine"),
        {.name = "profile",
         .kind = SIM_OPT_STRING,
         .dst = &c->profiles,
         .help = "built-in profile(s), comma-separated; `--list` shows them",
         .suggestions = profile_names()},
        {.name = "all",
         .kind = SIM_OPT_FLAG,
         .dst = &c->all,
         .help = "every built-in profile in turn (the labs' battery)"},
        {.name = "list",
         .kind = SIM_OPT_FLAG,
         .dst = &c->list,
         .help = "list the built-in profiles and exit"},
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* The I/O pattern: sizes, mix, randomness and depth (fio's and vdbench's names too). */
static void pattern_opts(io_cli *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "bs",
         .kind = SIM_OPT_STRING,
         .dst = &c->bs,
         .help =
             "transfer size: 4k, or vdbench's (4k,70,8k,30) (size,percent pairs) or (4k,64k,4k) "
             "(min,max,step)",
         .aliases = "vdbench:xfersize"},
        {.name = "bssplit",
         .kind = SIM_OPT_STRING,
         .dst = &c->bssplit,
         .help = "fio's size split, e.g. 4k/70:8k/30 (instead of --bs)"},
        {.name = "rw",
         .kind = SIM_OPT_CHOICE,
         .dst = &c->rw,
         .choices = IO_RW_CHOICES,
         .help = "fio's pattern: sets --read-pct (a mix: --rwmixread, default 50) and "
                 "--random-pct (rand: 100, else 0)"},
        {.name = "read-pct",
         .kind = SIM_OPT_DOUBLE,
         .dst = &c->read_pct,
         .aliases = "vdbench:rdpct|fio:rwmixread",
         .help = "percent of I/Os that are reads",
         .max = 100},
        {.name = "random-pct",
         .kind = SIM_OPT_DOUBLE,
         .dst = &c->random_pct,
         .aliases = "vdbench:seekpct",
         .help = "percent of I/Os at random offsets; the others continue one sequential stream",
         .max = 100},
        {.name = "threads",
         .kind = SIM_OPT_U64,
         .dst = &c->threads,
         .aliases = "fio:iodepth",
         .help = "outstanding I/Os (vdbench threads)",
         .min = 1,
         .max = 4096},
        {.name = "numjobs",
         .kind = SIM_OPT_U64,
         .dst = &c->numjobs,
         .help = "fio: multiplies the outstanding I/Os (all kept by one submitting thread)",
         .min = 1,
         .max = 4096},
        {.name = "align",
         .kind = SIM_OPT_SIZE,
         .dst = &c->align,
         .help = "random offsets on multiples of this (0 = each I/O's own transfer size)",
         .max = IO_MAX_XFER},
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* The section of the drive, and its preconditioning. */
static void section_opts(io_cli *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "offset",
         .kind = SIM_OPT_SIZE,
         .dst = &c->offset,
         .help = "start of the section in the data file or device"},
        {.name = "size",
         .kind = SIM_OPT_SIZE,
         .dst = &c->size,
         .help = "length of the section (fio's name; instead of --section)",
         .min = 1048576},
        {.name = "section",
         .kind = SIM_OPT_DOUBLE,
         .dst = &c->section_pct,
         .help = "section as a percent of the data after --offset (the labs use 25)",
         .min = 0.001,
         .max = 100},
        {.name = "file-size",
         .kind = SIM_OPT_SIZE,
         .dst = &c->file_size,
         .help =
             "directory target: size of the data file appsim creates and fills once (0 = 4 GiB)"},
        {.name = "fill",
         .kind = SIM_OPT_FLAG,
         .dst = &c->fill,
         .help = "write the section end to end before the first run (preconditioning; recorded)"},
        {.name = "fill-bs",
         .kind = SIM_OPT_SIZE,
         .dst = &c->fill_bs,
         .help = "--fill: size of its sequential writes"},
        {.name = "fill-qd",
         .kind = SIM_OPT_U64,
         .dst = &c->fill_qd,
         .help = "--fill: outstanding writes",
         .min = 1,
         .max = 4096},
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* The runs (one, or a curve), their phases and the output. */
static void run_opts(io_cli *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "curve",
         .kind = SIM_OPT_FLAG,
         .dst = &c->curve,
         .help = "rate curve: a maximum-rate run, then fractions of that maximum"},
        SIM_VOCAB_CURVE_POINTS(&c->points, NULL),
        {.name = "rate",
         .kind = SIM_OPT_DOUBLE,
         .dst = &c->rate,
         .aliases = "fio:rate_iops",
         .help = "one run at this many I/Os per second (exponential arrivals; default: as fast as "
                 "possible)",
         .min = 0.001,
         .max = 1e9},
        SIM_VOCAB_WARMUP_PEERS(&c->warmup,
                               " of each run or curve point; one run: \"steady\" = until "
                               "the IOPS is steady (SNIA PTS rule, rounds of --steady-round)",
                               "fio:ramp_time"),
        SIM_STEADY_OPTS(&c->steady_round, &c->steady_rounds),
        SIM_VOCAB_DURATION_PEERS(&c->duration, 0.001, " of each run or curve point",
                                 "|fio:runtime"),
        SIM_VOCAB_REPORT_INTERVAL(&c->interval),
        SIM_VOCAB_SEED(&c->seed, "sizes, offsets, arrivals"),
        SIM_VOCAB_JSON(&c->json, NULL),
        SIM_VOCAB_QUIET(&c->quiet, "no progress lines"),
        SIM_OPT_END,
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* This invocation's options at their defaults and its option table in opts[0..n). */
static void io_options(io_cli *c, sim_opt *opts, size_t n)
{
    *c = io_defaults();
    size_t at = 0;
    target_opts(c, opts, n, &at);
    pattern_opts(c, opts, n, &at);
    section_opts(c, opts, n, &at);
    run_opts(c, opts, n, &at);
}

static int io_main(int argc, char **argv)
{
    io_cli c;
    sim_opt opts[48];
    io_options(&c, opts, sizeof opts / sizeof *opts);
    int rc = sim_opts_parse("io", opts, argc, argv, NULL, 0, NULL, USAGE);
    if (rc) return sim_opts_exit_status(rc);
    if (c.list) {
        list_profiles();
        return SIM_EXIT_OK;
    }
    sim_set_quiet(c.quiet);
    if (!c.to.path) {
        sim_error("io needs --target PATH (a directory on the drive, or a block device)\nusage: %s",
                  USAGE);
        return SIM_EXIT_USAGE;
    }
    return io_execute(&c, opts, argc, argv);
}

static const sim_command io_command = {
    .name = "io",
    .summary = "the labs' synthetic vdbench battery: profiles and custom workloads, as rate "
               "curves, on a section of the target",
    .main = io_main,
};
SIM_REGISTER_COMMAND(io_command);
