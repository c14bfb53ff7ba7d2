/*
 * oltp/sysbench_internal.h: the pieces of `appsim sysbench` shared by its own files
 * (options and main in sysbench_cmd.c, actions in sysbench_actions.c).
 */
#ifndef APPSIM_SYSBENCH_INTERNAL_H
#define APPSIM_SYSBENCH_INTERNAL_H

#include "oltp/oltp.h"

typedef struct sb_cmd {
    /* options, as parsed (defaults set by sysbench_cmd.c) */
    const char *engine_name, *target, *workload_name, *range_selects, *rand_type, *sync;
    const char *io_engine, *json_path, *load_via;
    /* SQLite: "shared" | "per-table"; NULL = as prepared (prepare: shared) */
    const char *table_files;
    const char *prefetch, *group_commit; /* SQLite: "on" | "off" */
    const char *cpu_sched;               /* the connections' threads: "batch" | "normal" */
    uint64_t tables, table_size, range_size;
    uint64_t point_selects, simple_ranges, sum_ranges, order_ranges, distinct_ranges;
    uint64_t index_updates, non_index_updates, delete_inserts;
    uint64_t rand_spec_iter, rand_spec_pct, rand_spec_res;
    double pareto_h, zipf_exp, rate;
    uint64_t threads, instances, time_ns, warmup_ns, report_ns, buffer, seed, max_retries;
    uint64_t events;         /* measured transactions after which the run ends; 0 = no limit */
    char workload_typed[64]; /* the workload named by sysbench's positional form */
    uint64_t steady_round_ns, steady_max_rounds; /* warmup_ns == SIM_WARMUP_STEADY */
    uint64_t keep_free; /* bytes prepare and run leave free on the target */
    uint64_t wal_limit; /* SQLite: the WAL's bound (0 = storage's default) */
    bool skip_trx, buffered, quiet;
    bool uniform;             /* open loop: evenly spaced arrivals */
    const char *threads_text; /* --threads: a count, or a list of them (user steps) */
    oltp_curve_cli curve;     /* --curve, its points and limits; user steps */
    char engine_help[160];    /* --engine's help text, naming the registered engines */

    /* resolved */
    const sb_engine_ops *engine;
    sb_event_cfg ev;
    st_target *t;
    int argc;
    char **argv;
    const sim_opt *opts;
} sb_cmd;

/* Options for opening instance i (runtime or loading settings). */
sb_db_opts sb_cmd_db_opts(const sb_cmd *c, int instance, bool loading);
/* Whether instance i's database file is present in the target. */
bool sb_cmd_instance_exists(const sb_cmd *c, int instance);

/* Actions: each returns an exit status and fills its section of the result doc. */
int sb_action_prepare(sb_cmd *c, json_t *doc);
int sb_action_run(sb_cmd *c, json_t *doc);
/* The prepared instances opened for runs (after the space check) into *dbs (closed
 * with sb_close_run, also after a failure); an exit status. */
int sb_open_run(sb_cmd *c, st_space_guard *space, void ***dbs);
void sb_close_run(sb_cmd *c, void **dbs);
/* One run with c's load on the open instances; with doc, its sections go into doc and
 * its summary is printed. *run is the finished run (the caller frees it); an exit
 * status (SIM_EXIT_FAIL when a connection could not open). */
int sb_run_once(sb_cmd *c, void **dbs, int n, st_space_guard *space, json_t *doc, sim_run **run,
                sim_vu_stats *stats);
/* The curve or user steps (oltp_curve_run) on the prepared instances (sysbench_curve.c). */
int sb_action_curve(sb_cmd *c, json_t *doc);
int sb_action_check(sb_cmd *c, json_t *doc);
int sb_action_cleanup(sb_cmd *c, json_t *doc);
/* 0, or SIM_EXIT_USAGE with a message saying what to do when the target holds the
 * instance files of an older appsim, numbered from 0 ("-i0"); cleanup removes them. */
int sb_action_old_layout(const sb_cmd *c);
/* For no action: 0 when every instance is prepared with these options (run only),
 * 1 when none is (prepare first), or a usage error with a message. */
int sb_action_needs_prepare(sb_cmd *c, int *needs);

#endif
