/*
 * oltp/sysbench_cmd.c: `appsim sysbench [prepare|run|check|cleanup] [options]`: option
 * table, validation and dispatch. The option names and defaults are sysbench's
 * (oltp_common.lua and sysbench's own --threads/--time/--rate/--rand-*), except
 * --rand-type, whose default is uniform as in sysbench 1.1 (sysbench 1.0.x, e.g. the
 * Debian package 1.0.20, defaults to special), and --time, whose default is 60 s.
 */
#include "oltp/sysbench_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
    "appsim sysbench [WORKLOAD] [prepare|run|check|cleanup] --target DIR [--engine sqlite|lmdb] "
    "[options]\n"
    "  no action: prepare if the tables are absent, then run; WORKLOAD (sysbench's form, e.g.\n"
    "  oltp_read_only or oltp_read_only.lua) is --workload";

static const char *const sb_actions[] = {"prepare", "run", "check", "cleanup", NULL};
static const char *const sb_workloads[] = {
    "oltp_read_write",   "oltp_read_only",    "oltp_write_only",
    "oltp_point_select", "oltp_update_index", "oltp_update_non_index",
    "oltp_insert",       "oltp_delete",       NULL};

static bool is_one_of(const char *const *words, const char *w)
{
    for (; *words; words++)
        if (!strcmp(*words, w)) return true;
    return false;
}

/* sysbench's script as it is typed: a name, NAME.lua or a path to it. */
static bool script_name(const char *arg, char *name, size_t len)
{
    const char *base = strrchr(arg, '/');
    base = base ? base + 1 : arg;
    size_t n = strlen(base);
    if (n > 4 && !strcmp(base + n - 4, ".lua")) n -= 4;
    snprintf(name, len, "%.*s", (int)n, base);
    return is_one_of(sb_workloads, name);
}

/* The positional words: [WORKLOAD] [ACTION], as sysbench takes them (`sysbench
 * oltp_read_only run`); the workload becomes --workload, noted. */
static int positional_words(sb_cmd *c, const sim_opt *opts, char **pos, int npos,
                            const char **action)
{
    char *workload = c->workload_typed;
    *action = NULL;
    int i = 0;
    if (i < npos && !is_one_of(sb_actions, pos[i]) &&
        script_name(pos[i], workload, sizeof c->workload_typed)) {
        if (sim_opts_find(opts, "workload")->set && strcmp(c->workload_name, workload)) {
            sim_error("sysbench: the workload is given twice: %s and --workload %s; give one",
                      pos[i], c->workload_name);
            return SIM_EXIT_USAGE;
        }
        sim_note("sysbench: `%s` before the action is sysbench's form of --workload %s", pos[i],
                 workload);
        c->workload_name = workload;
        i++;
    }
    if (i < npos) {
        if (!is_one_of(sb_actions, pos[i]))
            return sim_refuse_unknown("sysbench action", pos[i], sb_actions,
                                      "use prepare, run, check or cleanup (or none: prepare if "
                                      "needed, then run), after the workload if one is named");
        *action = pos[i++];
    }
    if (i < npos) {
        sim_error("sysbench: unexpected argument '%s'; see `appsim sysbench --help`", pos[i]);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

#define U64(n, field, lo, hi, h)                                                                   \
    {                                                                                              \
        .name = n, .kind = SIM_OPT_U64, .dst = &c->field, .help = h, .min = lo, .max = hi          \
    }

/* This invocation's options at their defaults: nothing of an invocation is kept in
 * file-level state. */
static void sb_cli_defaults(sb_cmd *c)
{
    *c = (sb_cmd){
        .engine_name = "sqlite",
        .workload_name = "oltp_read_write",
        .range_selects = "on",
        .rand_type = "uniform",
        .sync = "full",
        .load_via = "pages",
        .prefetch = "on",
        .group_commit = "on",
        .cpu_sched = "batch",
        .tables = 1,
        .table_size = 10000,
        .range_size = 100,
        .point_selects = 10,
        .simple_ranges = 1,
        .sum_ranges = 1,
        .order_ranges = 1,
        .distinct_ranges = 1,
        .index_updates = 1,
        .non_index_updates = 1,
        .delete_inserts = 1,
        .rand_spec_iter = 12,
        .rand_spec_pct = 1,
        .rand_spec_res = 75,
        .pareto_h = 0.2,
        .zipf_exp = 0.8,
        .threads = 1,
        .threads_text = "1",
        .instances = 1,
        .time_ns = 60000000000ull,
        .report_ns = SIM_REPORT_INTERVAL_DEFAULT_NS,
        .io_engine = "io_uring",
        .steady_round_ns = SIM_STEADY_DEFAULT_ROUND_NS,
        .steady_max_rounds = SIM_STEADY_DEFAULT_MAX_ROUNDS,
        .seed = 1,
        .max_retries = 100,
        .keep_free = 1ull << 30,
    };
}

/* What runs: the target, the engine, the workload and its statement counts. */
static void workload_opts(sb_cmd *c, sim_opt *opts, size_t n, size_t *at)
{
    snprintf(c->engine_help, sizeof c->engine_help, "database engine: %s", sb_engine_names());
    const sim_opt part[] = {
        SIM_VOCAB_TARGET(&c->target, "DIR",
                         "directory on the drive under test (created if missing)"),
        {.name = "engine",
         .kind = SIM_OPT_CHOICE,
         .dst = &c->engine_name,
         .help = c->engine_help,
         .choices = sb_engine_names()},
        {.name = "workload",
         .kind = SIM_OPT_CHOICE,
         .dst = &c->workload_name,
         .help = "sysbench script",
         .choices = "oltp_read_write|oltp_read_only|oltp_write_only|oltp_point_select|"
                    "oltp_update_index|oltp_update_non_index|oltp_insert|oltp_delete"},
        /* sb_workloads lists the same names for sysbench's positional form. */
        U64("tables", tables, 1, 100000, "number of tables (sbtest1..N)"),
        U64("table-size", table_size, 1, 4294967295.0, "rows per table"),
        U64("range-size", range_size, 1, 1000000, "rows per range SELECT"),
        U64("point-selects", point_selects, 0, 1000000, "point SELECTs per transaction"),
        U64("simple-ranges", simple_ranges, 0, 1000000, "simple range SELECTs per transaction"),
        U64("sum-ranges", sum_ranges, 0, 1000000, "SELECT SUM() per transaction"),
        U64("order-ranges", order_ranges, 0, 1000000, "SELECT ... ORDER BY per transaction"),
        U64("distinct-ranges", distinct_ranges, 0, 1000000, "SELECT DISTINCT per transaction"),
        U64("index-updates", index_updates, 0, 1000000, "UPDATE of k per transaction"),
        U64("non-index-updates", non_index_updates, 0, 1000000, "UPDATE of c per transaction"),
        U64("delete-inserts", delete_inserts, 0, 1000000,
            "DELETE + INSERT of the same id per transaction"),
        {.name = "range-selects",
         .kind = SIM_OPT_CHOICE,
         .dst = &c->range_selects,
         .help = "run the range SELECTs at all",
         .choices = "on|off"},
        {.name = "skip-trx",
         .kind = SIM_OPT_FLAG,
         .dst = &c->skip_trx,
         .help = "no BEGIN/COMMIT: every statement commits on its own"},
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* Which rows: sysbench's --rand-* distributions. */
static void distribution_opts(sb_cmd *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "rand-type",
         .kind = SIM_OPT_CHOICE,
         .dst = &c->rand_type,
         .help = "id distribution (uniform = sysbench 1.1's default; 1.0.x used special)",
         .choices = "uniform|zipfian|pareto|gaussian|special"},
        U64("rand-spec-iter", rand_spec_iter, 1, 1000, "iterations for gaussian and special"),
        U64("rand-spec-pct", rand_spec_pct, 0, 100, "percent of the range that is 'special'"),
        U64("rand-spec-res", rand_spec_res, 0, 99, "percent of draws in the special range"),
        {.name = "rand-pareto-h",
         .kind = SIM_OPT_DOUBLE,
         .dst = &c->pareto_h,
         .help = "pareto shape h",
         .min = 0.001,
         .max = 0.999},
        {.name = "rand-zipfian-exp",
         .kind = SIM_OPT_DOUBLE,
         .dst = &c->zipf_exp,
         .help = "zipfian exponent",
         .min = 0,
         .max = 100},
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* How long and how hard: users, rate, phases, instances. */
static void load_opts(sb_cmd *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "threads",
         .kind = SIM_OPT_STRING,
         .dst = &c->threads_text,
         .metavar = "N[,N...]",
         .help = "connections (closed loop: users) per instance, 1 to 4096; a list (1,8,16) runs "
                 "one closed-loop point per count (user steps, docs/sysbench.md)"},
        {.name = "rate",
         .kind = SIM_OPT_DOUBLE,
         .dst = &c->rate,
         .help = "open loop: transactions per second per instance (0 = closed loop)",
         .min = 0,
         .max = 1e9},
        {.name = "uniform",
         .kind = SIM_OPT_FLAG,
         .dst = &c->uniform,
         .help = "open loop (--rate, --curve): evenly spaced arrivals instead of exponential"},
        SIM_VOCAB_DURATION(&c->time_ns, 0, " (0 = until interrupted or --events)"),
        U64("events", events, 0, 1e15,
            "end the measured phase after this many transactions, or at --duration if that "
            "comes first (0 = no limit)"),
        SIM_VOCAB_WARMUP(&c->warmup_ns, "; \"steady\": until the TPS is steady (SNIA PTS rule, "
                                        "rounds of --steady-round)"),
        SIM_STEADY_OPTS(&c->steady_round_ns, &c->steady_max_rounds),
        SIM_VOCAB_REPORT_INTERVAL(&c->report_ns),
        U64("instances", instances, 1, 256,
            "independent sets of tables and threads on the target (like VMs)"),
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* The database on the drive, and the output. */
static void database_opts(sb_cmd *c, sim_opt *opts, size_t n, size_t *at)
{
    const sim_opt part[] = {
        {.name = "buffer",
         .kind = SIM_OPT_SIZE,
         .dst = &c->buffer,
         .help = "database memory per instance: SQLite buffer pool (0 = 128 MiB); LMDB "
                 "memory cgroup limit (0 = none)"},
        {.name = "sync",
         .kind = SIM_OPT_CHOICE,
         .dst = &c->sync,
         .help = "commit durability",
         .choices = "full|normal|off"},
        ST_OPT_IOENGINE(c->io_engine, "io-engine"),
        {.name = "wal-limit",
         .kind = SIM_OPT_SIZE,
         .dst = &c->wal_limit,
         .help = "the SQLite WAL's bound per database: restarted from half of it on, writers held "
                 "back from 7/8 (0 = four checkpoint triggers, at least 64 MiB: the trigger is a "
                 "sixteenth of the buffer, 4-64 MiB; e.g. 1T "
                 "for practically none)"},
        {.name = "load-via",
         .kind = SIM_OPT_CHOICE,
         .dst = &c->load_via,
         .help = "SQLite prepare: pages (appsim writes the b-tree pages in SQLite's file "
                 "format) or sql (INSERT, then CREATE INDEX)",
         .choices = "pages|sql"},
        {.name = "table-files",
         .kind = SIM_OPT_CHOICE,
         .dst = &c->table_files,
         .help = "SQLite: shared (every table in one database file with one WAL, as a "
                 "server's one log; prepare's default) or per-table (a file and a WAL per "
                 "table); a run uses the layout prepare made (docs/sysbench.md)",
         .choices = "shared|per-table"},
        OLTP_OPT_PREFETCH(c->prefetch),
        OLTP_OPT_GROUP_COMMIT(c->group_commit),
        SIM_VOCAB_CPU_SCHED(&c->cpu_sched),
        ST_OPT_BUFFERED(c->buffered),
        SIM_VOCAB_SEED(&c->seed, "data and transactions"),
        U64("max-retries", max_retries, 0, 1000000,
            "retries of a transaction after a busy/conflict before it counts as an error"),
        {.name = "keep-free",
         .kind = SIM_OPT_SIZE,
         .dst = &c->keep_free,
         .help = "free space to leave on the target's filesystem: prepare needs its estimate "
                 "plus this, and a run stops when less is left (0 = no limit)"},
        SIM_VOCAB_JSON(&c->json_path, NULL),
        SIM_VOCAB_QUIET(&c->quiet, "no progress or interval lines on stderr"),
        OLTP_CURVE_OPTS(&c->curve),
        SIM_OPT_END,
    };
    SIM_OPTS_APPEND(opts, n, at, part);
}

/* This invocation's options at their defaults, and its option table (pointing into c)
 * in opts[0..n). */
static void sb_cli_init(sb_cmd *c, sim_opt *opts, size_t n)
{
    sb_cli_defaults(c);
    oltp_curve_cli_defaults(&c->curve);
    size_t at = 0;
    workload_opts(c, opts, n, &at);
    distribution_opts(c, opts, n, &at);
    load_opts(c, opts, n, &at);
    database_opts(c, opts, n, &at);
}

/* What the chosen database engine can do: options that do not apply to it are refused
 * (none is accepted and ignored) and recorded as not applicable. */
static int check_engine(sb_cmd *c, const sim_opt *opts)
{
    c->engine = sb_find_engine(c->engine_name);
    if (!c->engine) {
        sim_error("--engine %s: use one of %s", c->engine_name, sb_engine_names());
        return SIM_EXIT_USAGE;
    }
    if (c->buffer && c->engine->min_buffer && c->buffer < c->engine->min_buffer(c->threads)) {
        char a[32], b[32];
        sim_error("--buffer %s is too small for %s at --threads %llu: the minimum is %s (%s); "
                  "pass at least that, or --buffer 0 for no limit",
                  sim_format_size(c->buffer, a, sizeof a), c->engine->name,
                  (unsigned long long)c->threads,
                  sim_format_size(c->engine->min_buffer(c->threads), b, sizeof b),
                  c->engine->min_buffer_why);
        return SIM_EXIT_USAGE;
    }
    if (c->engine->on_vfs)
        return oltp_check_group_commit(opts, c->group_commit, c->sync, c->buffered);
    if (sim_opts_find(opts, "group-commit")->set) {
        sim_error("--group-commit applies to SQLite on appsim's VFS; LMDB syncs its own commits "
                  "(--sync)");
        return SIM_EXIT_USAGE;
    }
    c->group_commit = NULL; /* the result's config: not applicable */
    if (sim_opts_find(opts, "load-via")->set) {
        sim_error("--load-via applies to SQLite's prepare; LMDB loads with appending puts "
                  "(MDB_APPEND) in batched transactions");
        return SIM_EXIT_USAGE;
    }
    if (sim_opts_find(opts, "ioengine")->set || c->buffered || c->wal_limit) {
        sim_error("--ioengine, --buffered and --wal-limit apply to SQLite; LMDB always reads "
                  "through the page cache (mmap), limited by --buffer's memory cgroup, and "
                  "has no WAL");
        return SIM_EXIT_USAGE;
    }
    if (sim_opts_find(opts, "table-files")->set) {
        sim_error("--table-files applies to SQLite; LMDB keeps every table in one file "
                  "(named databases)");
        return SIM_EXIT_USAGE;
    }
    c->load_via = NULL; /* the result's config: not applicable */
    c->io_engine = NULL;
    return SIM_EXIT_OK;
}

/* The transaction mix and data distribution from the options. */
static int build_events(sb_cmd *c, const char *action)
{
    char err[1024];
    sb_event_cfg *ev = &c->ev;
    ev->engine = c->engine;
    if (sb_workload_parse(c->workload_name, &ev->workload)) {
        sim_error("--workload %s is not a sysbench OLTP script", c->workload_name);
        return SIM_EXIT_USAGE;
    }
    if (sb_dist_init(&ev->dist, c->rand_type, (unsigned)c->rand_spec_iter,
                     (unsigned)c->rand_spec_pct, (unsigned)c->rand_spec_res, c->pareto_h,
                     c->zipf_exp, err, sizeof err)) {
        sim_error("%s", err);
        return SIM_EXIT_USAGE;
    }
    ev->mix = (sb_mix){
        .point_selects = (uint32_t)c->point_selects,
        .simple_ranges = (uint32_t)c->simple_ranges,
        .sum_ranges = (uint32_t)c->sum_ranges,
        .order_ranges = (uint32_t)c->order_ranges,
        .distinct_ranges = (uint32_t)c->distinct_ranges,
        .index_updates = (uint32_t)c->index_updates,
        .non_index_updates = (uint32_t)c->non_index_updates,
        .delete_inserts = (uint32_t)c->delete_inserts,
        .range_size = (uint32_t)c->range_size,
        .range_selects = !strcmp(c->range_selects, "on"),
        .skip_trx = c->skip_trx,
    };
    ev->tables = (uint32_t)c->tables;
    ev->table_size = c->table_size;
    ev->max_retries = (uint32_t)c->max_retries;
    ev->prefetch = c->prefetch && !strcmp(c->prefetch, "on");
    sb_counts per = sb_expected_counts(ev->workload, &ev->mix);
    if (per.reads + per.writes == 0 && (!action || !strcmp(action, "run"))) {
        sim_error("%s with these counts runs no statement: raise one of the count options",
                  c->workload_name);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* A run, or the curve or user steps the options ask for. */
static int run(sb_cmd *c, json_t *doc)
{
    return oltp_curve_cli_active(&c->curve) ? sb_action_curve(c, doc) : sb_action_run(c, doc);
}

/* --threads (a count or a list), the curve options, and --uniform. */
static int check_load(sb_cmd *c, const sim_opt *opts)
{
    static const char *const single_only[] = {
        "duration", "warmup", "events", "rate", "steady-round", "steady-max-rounds", NULL};
    const char *type_names[1] = {c->workload_name};
    int rc = oltp_curve_cli_resolve("sysbench", opts, &c->curve, c->threads_text, "threads", 4096,
                                    single_only, type_names, 1);
    if (rc) return rc;
    c->threads = c->curve.steps[0];
    for (int i = 1; i < c->curve.nsteps; i++)
        if (c->curve.steps[i] > c->threads) c->threads = c->curve.steps[i];
    if (c->uniform && c->rate <= 0 && !c->curve.curve) {
        sim_error("sysbench: --uniform spaces open-loop arrivals evenly: it needs --rate or "
                  "--curve");
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* The action (none: prepare if needed, then run) on the open target. */
static int dispatch(sb_cmd *c, const char *action, json_t *doc)
{
    bool cleanup = action && !strcmp(action, "cleanup");
    int old = cleanup ? 0 : sb_action_old_layout(c);
    if (old) return old;
    if (!action) {
        int needs = 0;
        int rc = sb_action_needs_prepare(c, &needs);
        if (rc == 0 && needs) rc = sb_action_prepare(c, doc);
        if (rc == 0) rc = run(c, doc);
        return rc;
    }
    if (!strcmp(action, "prepare")) return sb_action_prepare(c, doc);
    if (!strcmp(action, "run")) return run(c, doc);
    if (!strcmp(action, "check")) return sb_action_check(c, doc);
    return sb_action_cleanup(c, doc);
}

static int sysbench_main(int argc, char **argv)
{
    sb_cmd cmd;
    sb_cmd *c = &cmd;
    sim_opt opts[80];
    sb_cli_init(c, opts, sizeof opts / sizeof *opts);
    char *pos[3];
    int npos = 0;
    int rc = sim_opts_parse("sysbench", opts, argc, argv, pos, 3, &npos, usage);
    if (rc) return sim_opts_exit_status(rc);
    if ((rc = sim_steady_opts_check("sysbench", opts, c->warmup_ns))) return rc;
    sim_set_quiet(c->quiet);
    c->argc = argc;
    c->argv = argv;
    c->opts = opts;
    const char *action;
    if ((rc = positional_words(c, opts, pos, npos, &action))) return rc;
    if ((rc = check_load(c, opts))) return rc;
    if (!c->target) {
        sim_error("sysbench needs --target DIR: a directory on the drive under test");
        return SIM_EXIT_USAGE;
    }
    if ((rc = check_engine(c, opts)) || (rc = build_events(c, action))) return rc;
    struct stat st;
    if (stat(c->target, &st) == 0 && !S_ISDIR(st.st_mode)) {
        sim_error("--target %s is not a directory: sysbench keeps its database files in a "
                  "directory on the drive's filesystem",
                  c->target);
        return SIM_EXIT_USAGE;
    }
    bool reads = action && (!strcmp(action, "check") || !strcmp(action, "cleanup"));
    st_target_opts to = {.path = c->target, .buffered = c->buffered, .existing_only = reads};
    char err[1024];
    if ((rc = st_target_open(&to, &c->t, err, sizeof err))) {
        sim_error("%s", err);
        return rc;
    }
    json_t *doc = sim_result_new("sysbench", argc, argv, opts);
    oltp_curve_cli_config(doc, "threads", &c->curve);
    json_object_set_new(doc, "target", st_target_json(c->t));
    rc = dispatch(c, action, doc);
    /* A refusal (bad options, no space to start) ran nothing: no result file. */
    if (rc != SIM_EXIT_USAGE && sim_result_save(doc, c->json_path) && rc == 0) rc = SIM_EXIT_FAIL;
    json_decref(doc);
    st_target_close(c->t);
    return rc;
}

static const char *const *sysbench_actions(void)
{
    return sb_actions;
}

static const sim_command sysbench_command = {
    .name = "sysbench",
    .summary = "sysbench OLTP tables and workloads on SQLite or LMDB",
    .main = sysbench_main,
    .actions = sysbench_actions,
};
SIM_REGISTER_COMMAND(sysbench_command)
