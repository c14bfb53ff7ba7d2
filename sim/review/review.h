/*
 * sim/review/review.h: comparing drives from result files, the folder behind
 * `appsim compare`, `appsim report` and `appsim suite` (docs/compare.md).
 *
 * Contract: this folder reads only result files (docs/result-schema.md) and calls only
 * sim/sim.h's public functions (histograms, options, atomic result writing, the command
 * registry); nothing in sim/'s core depends on it. The three commands register
 * themselves by name; other code may use the comparison model below to load, group and
 * rank results, print the tables or write the HTML report.
 *
 * Flow: result files are loaded and validated (cmp_load), grouped by workload and the
 * configuration that matters (cmp_build), repeated runs of one drive in one group are
 * combined into one column (histograms merged, never averaged), and each group becomes a
 * table of metrics (rows) by drives (columns) with the best marked and a rank.
 *
 * Invariants: a cmp_set owns every result document it loaded; groups and entries only
 * point into it. A metric's value is present only when it could be computed honestly
 * (e.g. percentiles of several runs only from their merged histograms).
 *
 * Return codes (sim/sim.h): the commands return exit statuses (SIM_EXIT_*); the
 * functions below return a status (SIM_OK, or SIM_ERR with err filled or a message
 * printed) and the command turns it into SIM_EXIT_USAGE or SIM_EXIT_FAIL.
 */
#ifndef APPSIM_REVIEW_H
#define APPSIM_REVIEW_H

#include "sim/sim.h"

/* One result file. */
typedef struct cmp_result {
    char *path;
    json_t *doc; /* owned */
    const char *workload;
    char *label;      /* column heading */
    char *drive_key;  /* runs with equal drive_key and config are combined */
    char *config_key; /* canonical JSON of the configuration that matters */
    json_t *config;   /* borrowed from doc; may be NULL */
    bool interrupted; /* ended early: interrupted, or stopped by a guard */
} cmp_result;

typedef enum cmp_better { CMP_NONE, CMP_HIGHER, CMP_LOWER } cmp_better;

/* One cell of a metric row: the combined value and the run-to-run spread. */
typedef struct cmp_cell {
    bool have;
    double value;
    int nruns;       /* runs that had this metric */
    double min, max; /* over those runs (equal to value for one run) */
    double pct;      /* value as a percentage of the row's best (when ranked) */
    bool best;
    /* Measured, but no value qualifies: no point of the drive's OLTP curve met its
     * service-level limits. have is false, so the drive ranks last on such a row. */
    bool unmet;
} cmp_cell;

typedef struct cmp_metric {
    char *id;   /* stable key: "rate", "lat.p99", "type.new_order.p99", ... */
    char *name; /* row heading */
    char *unit; /* "tps", "iops", "us", "" */
    cmp_better better;
    cmp_cell *cells; /* one per entry of the group */
} cmp_metric;

/* One drive (column) of a group: one or more runs. */
typedef struct cmp_entry {
    const char *label;
    cmp_result **runs;
    int nruns;
    int rank;           /* 1-based; 0 when the group is not ranked */
    sim_hist *hist_all; /* merged measured histogram of all types, or NULL */
} cmp_entry;

typedef struct cmp_group {
    const char *workload;
    json_t *config; /* borrowed: configuration of the first run */
    cmp_entry *entries;
    int nentries;
    cmp_metric *metrics;
    int nmetrics;
    char *note;      /* why this group is apart from others of its workload, or NULL */
    char *soft_note; /* settings that differ but do not prevent ranking, or NULL */
    char *rank_rule; /* how the rank was decided */
    char *warnings;  /* e.g. percentiles unavailable for combined runs without histograms */
    /* OLTP curves with service-level limits (compare_service.c): the limits every result
     * of the group was judged against ("p99 <= 20 ms; new_order p90 <= 5 s"), NULL when
     * they differ or there are none; and what the reader must know about the
     * service-level row (limits that differ, drives with no point within them), or NULL. */
    char *service_limits;
    char *service_note;
} cmp_group;

typedef struct cmp_set {
    cmp_result *results;
    int nresults;
    cmp_group *groups;
    int ngroups;
} cmp_set;

/* Loads and validates one file: SIM_OK, or SIM_ERR with err filled ("FILE: what is
 * wrong"; the caller exits with SIM_EXIT_USAGE). A suite's state file (suite.json,
 * "schema": "appsim-suite/1") is no result: CMP_LOAD_SKIPPED, with err saying so. */
enum { CMP_LOAD_SKIPPED = 1 };
int cmp_load(cmp_result *r, const char *path, char *err, size_t errlen);
/* What a load keeps of a result's interval series (each "intervals" array: one object per
 * report interval, of the run and of each curve point's run; most of a large result):
 * of each interval the fields report and export read (its time, length, phase, rate,
 * count, errors and latency percentiles), or nothing (compare reads none). Either way
 * the file streams through a bounded buffer: memory follows what is kept, and
 * everything else in the document is kept as written. cmp_load keeps CMP_SERIES_CHARTED. */
typedef enum cmp_series { CMP_SERIES_CHARTED, CMP_SERIES_SKIP } cmp_series;
int cmp_load_series(cmp_result *r, const char *path, cmp_series series, char *err, size_t errlen);
/* Frees what cmp_load allocated (for a result loaded on its own, outside a cmp_set). */
void cmp_result_free(cmp_result *r);
/* Loads every file (suite state files are skipped with a note on stderr), applies labels (labels
 * may be NULL or have fewer entries: the rest come from the drive identity), groups, combines and
 * ranks; interval series kept as cmp_load keeps them. SIM_OK, or SIM_ERR with err. */
int cmp_build(cmp_set *set, char **paths, int npaths, char **labels, int nlabels, char *err,
              size_t errlen);
/* The same; with `ranks`, each file must be the result of an MPI job (docs/mpi.md), and
 * each of its ranks becomes a drive of its own, labelled by rank, host and target (a
 * label given for the file prefixes its ranks' labels); `series` as in cmp_load_series. */
int cmp_build_ranks(cmp_set *set, char **paths, int npaths, char **labels, int nlabels, bool ranks,
                    cmp_series series, char *err, size_t errlen);
void cmp_set_free(cmp_set *set);

/* The heading of a group's table: the workload and the engine it ran on, e.g.
 * "sysbench (lmdb)", "tpcc (sqlite)", "vdi (io_uring)". */
void cmp_group_title(const cmp_group *g, char *buf, size_t len);

/* Output (compare_format.c). */
typedef enum cmp_format { CMP_TEXT, CMP_MARKDOWN, CMP_CSV, CMP_JSON } cmp_format;
int cmp_format_parse(const char *s, cmp_format *f);
void cmp_print(FILE *out, const cmp_set *set, cmp_format f);
json_t *cmp_to_json(const cmp_set *set);
/* Report (report*.c): writes the self-contained HTML report of set to path atomically.
 * SIM_OK, or SIM_ERR with a message printed. */
int report_write(const cmp_set *set, const char *path, const char *title);

#endif
