/*
 * sim/review/suite_internal.h: suite files for `appsim suite` (private to sim/review/suite*.c).
 *
 * A suite file is INI: an optional [suite] section (name, description) and one section
 * per step, run in file order:
 *
 *   [tpcc]
 *   command = tpcc                      ; a registered appsim command
 *   args = --target {target} --json {result} --instances 2
 *   args.small = --scale 2 --duration 60s   ; appended for --size small
 *   args.full = --scale 1500 --vusers 15000
 *   estimate = 3h                       ; optional: planned time when args do not say
 *   estimate.small = 10m                ; the same for one size
 *
 * Arguments are split like a shell would (quotes, backslash) and each word then has its
 * placeholders replaced: {target}, {result} (DIR/<step>.json), {dir}, {size}, {trace}.
 * Every step must write {result}: that is how the suite knows a step finished (and so
 * how --resume skips it). Unknown sections keys, sizes or placeholders are errors, so a
 * typo never silently changes a battery.
 */
#ifndef APPSIM_REVIEW_SUITE_INTERNAL_H
#define APPSIM_REVIEW_SUITE_INTERNAL_H

#include "sim/sim.h"

#include <jansson.h>

typedef struct suite_step {
    char *name;
    int line;
    char *command;
    char *description;
    char *args;             /* common arguments (may be NULL) */
    char *size_args[3];     /* small, medium, full (may be NULL) */
    char *estimate;         /* duration text or NULL */
    char *size_estimate[3]; /* estimate.small|medium|full, or NULL */
} suite_step;

typedef struct suite_def {
    char *name;
    char *description;
    suite_step *steps;
    int nsteps;
} suite_def;

extern const char *const suite_sizes[3]; /* "small", "medium", "full" */
int suite_size_index(const char *size);  /* -1 when unknown */

/* Parses suite text; origin names it in messages ("review (built-in)" or a path).
 * SIM_OK, or SIM_ERR with err ("origin:line: what is wrong"). */
int suite_parse(const char *text, const char *origin, suite_def *out, char *err, size_t errlen);
void suite_def_free(suite_def *d);

/* Splits a command-line string into words (shell-like quoting). The words are
 * malloc'ed, *argv NULL-terminated. SIM_OK, or SIM_ERR with err (unbalanced quote). */
int suite_split_words(const char *s, char ***argv, int *argc, char *err, size_t errlen);
void suite_free_words(char **argv, int argc);

typedef struct suite_vars {
    const char *target, *result, *dir, *size, *trace;
} suite_vars;
/* Replaces the placeholders in word; returns a malloc'ed string, or NULL with err when a
 * placeholder is unknown or has no value (e.g. {trace} without --trace). */
char *suite_expand(const char *word, const suite_vars *v, char *err, size_t errlen);
/* True when word uses placeholder name ("trace" for "{trace}"). */
bool suite_uses(const char *word, const char *name);

/* How hard a step loaded the drive (suite_load.c), from the device figures of its
 * result's busiest measured phase: the share of time the disk had I/O in flight and its
 * reads and writes per second; known is false when the result has none. */
typedef struct suite_load {
    bool known;
    double busy, read_iops, write_iops;
} suite_load;
suite_load suite_step_load(const json_t *doc);
/* True when the drive was busy less than a fifth of the time: the step measured the
 * host more than the drive. */
bool suite_load_idle(const suite_load *l);
/* "drive busy 87 % of its busiest measured phase (9,000 reads/s, ...)". */
void suite_load_text(const suite_load *l, char *buf, size_t len);

/* Built-in suites (suite_builtin.c): text of the named suite or NULL. */
const char *suite_builtin(const char *name);
/* NULL-terminated list of built-in suite names. */
const char *const *suite_builtin_names(void);

#endif
