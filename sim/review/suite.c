/*
 * sim/review/suite.c: `appsim suite NAME|FILE --target PATH -o DIR`: runs a battery of appsim
 * commands (a suite file, sim/review/suite_internal.h) one step after another, each writing its
 * result into DIR, then writes DIR/report.html and prints the comparison.
 *
 * Steps call other commands in-process through the command registry
 * (sim_find_command(name)->main), so the suite runs whatever workloads this build has;
 * a step whose command is missing is reported as unavailable, never skipped silently.
 *
 * Invariants:
 *   - a step is finished when DIR/<step>.json is a complete appsim result (loads, not
 *     interrupted); --resume never reruns a finished step, and nothing else in DIR is
 *     overwritten: an incomplete result is moved aside, never deleted;
 *   - DIR/suite.json records the suite, size, target and each step's status after every
 *     step, so a resumed suite refuses to mix results of another size or target.
 */
#include "sim/review/review_internal.h"
#include "sim/review/suite_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STATE_FILE "suite.json"
#define STATE_SCHEMA "appsim-suite/1"

typedef enum step_status {
    ST_PENDING,
    ST_DONE,        /* ran now and wrote a complete result */
    ST_FINISHED,    /* finished in an earlier run (--resume) */
    ST_UNAVAILABLE, /* command not in this build */
    ST_NEEDS_INPUT, /* e.g. {trace} without --trace */
    ST_FAILED,
    ST_INTERRUPTED,
} step_status;

static const char *const status_names[] = {
    "pending", "done", "finished-earlier", "unavailable", "needs-input", "failed", "interrupted"};

typedef struct step_state {
    step_status status;
    int exit_code;
    double seconds;
    char *message;
    char result[4096];
    suite_load load; /* how hard a step run now loaded the drive */
} step_state;

static void fmt_duration(char *buf, size_t len, double s)
{
    if (s < 0) s = 0;
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
    else if (t >= 60)
        snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, len, "%lds", t);
}

/* A finished step's result: loads as an appsim result and was not interrupted. */
static bool result_complete(const char *path, char *why, size_t len)
{
    if (access(path, F_OK)) {
        snprintf(why, len, "no result yet");
        return false;
    }
    cmp_result r;
    char err[1024];
    if (cmp_load_series(&r, path, CMP_SERIES_SKIP, err, sizeof err)) {
        snprintf(why, len, "%s", err);
        return false;
    }
    bool ok = !r.interrupted;
    if (!ok) snprintf(why, len, "%s: the run was interrupted or stopped early", path);
    free(r.path);
    free(r.label);
    free(r.drive_key);
    free(r.config_key);
    json_decref(r.doc);
    return ok;
}

/* Moves an incomplete result aside (never deletes what a user may want to inspect). */
static void move_aside(const char *path)
{
    char *dst = NULL;
    for (int i = 1; i < 1000; i++) {
        free(dst);
        dst = sim_xasprintf("%s.incomplete-%d", path, i);
        if (access(dst, F_OK)) break;
    }
    if (rename(path, dst) == 0)
        sim_warn("suite: kept the incomplete result as %s", dst);
    else
        sim_warn("suite: cannot move %s aside: %s", path, strerror(errno));
    free(dst);
}

/* Planned seconds of a step: its estimate, or warm-up plus measured duration found in
 * its arguments (--warmup, --duration, --time). 0 when unknown. */
static double planned_seconds(const suite_step *st, int size, char **words, int nwords)
{
    uint64_t ns;
    const char *est = st->size_estimate[size] ? st->size_estimate[size] : st->estimate;
    if (est && !sim_parse_duration(est, &ns)) return (double)ns / 1e9;
    /* The last value of each option wins, as on a command line. */
    static const char *const keys[] = {"--warmup", "--duration", "--time"};
    double last[3] = {0, 0, 0};
    for (int i = 0; i < nwords; i++) {
        for (int k = 0; k < 3; k++) {
            size_t kl = strlen(keys[k]);
            const char *val = NULL;
            if (!strcmp(words[i], keys[k]) && i + 1 < nwords)
                val = words[i + 1];
            else if (!strncmp(words[i], keys[k], kl) && words[i][kl] == '=')
                val = words[i] + kl + 1;
            if (val && !sim_parse_duration(val, &ns)) last[k] = (double)ns / 1e9;
        }
    }
    return last[0] + last[1] + last[2];
}

typedef struct suite_ctx {
    const suite_def *def;
    const char *size, *target, *dir, *trace, *origin;
    int size_index;
    step_state *states;
    json_t *overrides; /* the STEP=ARGS given on the command line, for suite.json */
} suite_ctx;

/* Builds the step's argv (argv[0] = command) with placeholders expanded. */
static int step_argv(const suite_ctx *c, const suite_step *st, const char *result, char ***argv,
                     int *argc, char *err, size_t errlen)
{
    cmp_buf all = {0};
    if (st->args) cmp_buf_puts(&all, st->args);
    if (st->size_args[c->size_index]) {
        cmp_buf_puts(&all, " ");
        cmp_buf_puts(&all, st->size_args[c->size_index]);
    }
    char **words;
    int n;
    int rc = suite_split_words(all.s ? all.s : "", &words, &n, err, errlen);
    cmp_buf_free(&all);
    if (rc) return SIM_ERR;
    suite_vars v = {c->target, result, c->dir, c->size, c->trace};
    char **out = sim_xcalloc((size_t)n + 2, sizeof *out);
    out[0] = sim_xstrdup(st->command);
    for (int i = 0; i < n; i++) {
        out[i + 1] = suite_expand(words[i], &v, err, errlen);
        if (!out[i + 1]) {
            suite_free_words(out, i + 1);
            suite_free_words(words, n);
            return SIM_ERR;
        }
    }
    suite_free_words(words, n);
    *argv = out;
    *argc = n + 1;
    return SIM_OK;
}

static json_t *state_json(const suite_ctx *c)
{
    json_t *steps = json_array();
    for (int i = 0; i < c->def->nsteps; i++) {
        const step_state *s = &c->states[i];
        json_t *j = json_pack("{s:s,s:s,s:s,s:i,s:f}", "name", c->def->steps[i].name, "command",
                              c->def->steps[i].command, "status", status_names[s->status], "exit",
                              s->exit_code, "seconds", s->seconds);
        if (s->message) json_object_set_new(j, "message", json_string(s->message));
        if (s->result[0]) json_object_set_new(j, "result", json_string(s->result));
        if (s->load.known) json_object_set_new(j, "drive_busy", json_real(s->load.busy));
        json_array_append_new(steps, j);
    }
    return json_pack("{s:s,s:s,s:s,s:s,s:s?,s:O,s:o}", "schema", STATE_SCHEMA, "suite",
                     c->def->name, "size", c->size, "target", c->target, "trace", c->trace,
                     "overrides", c->overrides, "steps", steps);
}

static void save_state(const suite_ctx *c)
{
    char *path = sim_xasprintf("%s/%s", c->dir, STATE_FILE);
    json_t *j = state_json(c);
    if (sim_result_write(j, path)) sim_warn("suite: could not record progress in %s", path);
    json_decref(j);
    free(path);
}

/* On --resume, the earlier run must have been the same suite, size and target. */
static int check_resume(const suite_ctx *c, bool resume)
{
    char *path = sim_xasprintf("%s/%s", c->dir, STATE_FILE);
    int rc = 0;
    if (access(path, F_OK) == 0) {
        if (!resume) {
            sim_error("suite: %s already holds a suite run (%s); add --resume to continue it "
                      "(finished steps are kept) or give another -o directory",
                      c->dir, STATE_FILE);
            rc = SIM_EXIT_USAGE;
        } else {
            json_error_t je;
            json_t *j = json_load_file(path, 0, &je);
            const char *keys[] = {"suite", "size", "target"};
            const char *want[] = {c->def->name, c->size, c->target};
            if (!j || strcmp(cmp_str(j, "schema") ? cmp_str(j, "schema") : "", STATE_SCHEMA)) {
                sim_error("suite: %s is not a suite state file; give another -o directory", path);
                rc = SIM_EXIT_USAGE;
            }
            for (int k = 0; k < 3 && !rc; k++) {
                const char *had = cmp_str(j, keys[k]);
                if (!had || strcmp(had, want[k])) {
                    sim_error("suite: cannot resume: %s was started with %s '%s', now '%s'; "
                              "use the same %s or another -o directory",
                              c->dir, keys[k], had ? had : "?", want[k], keys[k]);
                    rc = SIM_EXIT_USAGE;
                }
            }
            json_decref(j);
        }
    } else if (!resume) {
        /* No state file, but results from elsewhere would be overwritten. */
        for (int i = 0; i < c->def->nsteps && !rc; i++) {
            char *r = sim_xasprintf("%s/%s.json", c->dir, c->def->steps[i].name);
            if (access(r, F_OK) == 0) {
                sim_error("suite: %s exists; add --resume to keep finished steps, or give "
                          "another -o directory",
                          r);
                rc = SIM_EXIT_USAGE;
            }
            free(r);
        }
    }
    free(path);
    return rc;
}

static double now_s(void)
{
    return (double)sim_now_ns() / 1e9;
}

/* After a step: how hard it loaded the drive, and a warning when it left it mostly idle
 * (its figures then say more about the host than about the drive). */
static void report_load(step_state *ss, int i, int n, const char *name)
{
    json_error_t je;
    json_t *doc = json_load_file(ss->result, 0, &je);
    ss->load = suite_step_load(doc);
    json_decref(doc);
    char text[256];
    suite_load_text(&ss->load, text, sizeof text);
    if (suite_load_idle(&ss->load))
        sim_warn("suite: step %d/%d %s: %s: the drive was mostly idle, so this step's figures "
                 "measure the host more than the drive; give it more users, threads or data "
                 "than its buffer holds (STEP='OPTIONS')",
                 i + 1, n, name, text);
    else
        sim_info("suite: step %d/%d %s: %s", i + 1, n, name, text);
}

static void run_step(suite_ctx *c, int i, double *planned, bool resume)
{
    const suite_step *st = &c->def->steps[i];
    step_state *ss = &c->states[i];
    int n = c->def->nsteps;
    snprintf(ss->result, sizeof ss->result, "%s/%s.json", c->dir, st->name);
    char why[1200];
    if (resume && result_complete(ss->result, why, sizeof why)) {
        ss->status = ST_FINISHED;
        sim_info("suite: step %d/%d %s: finished in an earlier run, kept %s", i + 1, n, st->name,
                 ss->result);
        return;
    }
    const sim_command *cmd = sim_find_command(st->command);
    if (!cmd) {
        ss->status = ST_UNAVAILABLE;
        ss->message = sim_xasprintf("command '%s' is not part of this appsim build", st->command);
        ss->result[0] = 0;
        sim_warn("suite: step %d/%d %s: unavailable: %s", i + 1, n, st->name, ss->message);
        return;
    }
    char err[1024];
    char **argv;
    int argc;
    if (step_argv(c, st, ss->result, &argv, &argc, err, sizeof err)) {
        ss->status = ST_NEEDS_INPUT;
        ss->message = sim_xasprintf("%s", err);
        ss->result[0] = 0;
        sim_warn("suite: step %d/%d %s: not run: %s", i + 1, n, st->name, err);
        return;
    }
    if (access(ss->result, F_OK) == 0) move_aside(ss->result);
    double left = 0;
    for (int k = i; k < n; k++)
        left += planned[k];
    char pl[32], lf[32];
    fmt_duration(pl, sizeof pl, planned[i]);
    fmt_duration(lf, sizeof lf, left);
    cmp_buf line = {0};
    for (int k = 0; k < argc; k++)
        cmp_buf_printf(&line, "%s%s", k ? " " : "appsim ", argv[k]);
    sim_info("suite: step %d/%d %s: %s", i + 1, n, st->name, line.s);
    sim_info("suite: step %d/%d %s: planned %s (warm-up + measured, loading not counted); "
             "suite time left at least %s",
             i + 1, n, st->name, planned[i] > 0 ? pl : "unknown", lf);
    cmp_buf_free(&line);
    double t0 = now_s();
    ss->exit_code = sim_command_run(cmd, argc, argv);
    ss->seconds = now_s() - t0;
    suite_free_words(argv, argc);
    char took[32];
    fmt_duration(took, sizeof took, ss->seconds);
    if (sim_interrupted()) {
        ss->status = ST_INTERRUPTED;
        ss->message = sim_xasprintf("interrupted after %s", took);
    } else if (ss->exit_code != 0) {
        ss->status = ST_FAILED;
        ss->message = sim_xasprintf("'%s' exited with status %d", st->command, ss->exit_code);
    } else if (!result_complete(ss->result, why, sizeof why)) {
        ss->status = ST_FAILED;
        ss->message =
            sim_xasprintf("'%s' succeeded but left no complete result: %s", st->command, why);
    } else {
        ss->status = ST_DONE;
    }
    if (ss->status == ST_DONE) {
        sim_info("suite: step %d/%d %s: done in %s, result %s", i + 1, n, st->name, took,
                 ss->result);
        report_load(ss, i, n, st->name);
    } else
        sim_warn("suite: step %d/%d %s: %s: %s", i + 1, n, st->name, status_names[ss->status],
                 ss->message);
}

static int finish(suite_ctx *c)
{
    int n = c->def->nsteps, nres = 0, failed = 0;
    char *files[n > 0 ? n : 1];
    printf("suite %s (%s, size %s) on %s\n", c->def->name, c->origin, c->size, c->target);
    for (int i = 0; i < n; i++) {
        step_state *s = &c->states[i];
        printf("  %-20s %-16s %s\n", c->def->steps[i].name, status_names[s->status],
               s->message ? s->message : s->result);
        if (s->status == ST_DONE || s->status == ST_FINISHED) files[nres++] = s->result;
        if (s->status == ST_FAILED || s->status == ST_INTERRUPTED) failed++;
    }
    if (nres) {
        cmp_set set;
        char err[1024];
        if (cmp_build(&set, files, nres, NULL, 0, err, sizeof err)) {
            sim_error("suite: %s", err);
            return SIM_EXIT_FAIL;
        }
        char *report = sim_xasprintf("%s/report.html", c->dir);
        char *title = sim_xasprintf("appsim suite %s (%s) on %s", c->def->name, c->size, c->target);
        int rc = report_write(&set, report, title);
        printf("\n");
        cmp_print(stdout, &set, CMP_TEXT);
        if (!rc) printf("report: %s\n", report);
        free(report);
        free(title);
        cmp_set_free(&set);
        if (rc) return SIM_EXIT_FAIL;
    } else {
        printf("no step produced a result; no report written\n");
        failed++;
    }
    for (int i = 0; i < n; i++)
        if (c->states[i].status == ST_INTERRUPTED) {
            sim_error("suite: interrupted; run the same command with --resume to continue "
                      "(finished steps are kept)");
            return SIM_EXIT_FAIL;
        }
    return failed ? SIM_EXIT_FAIL : SIM_EXIT_OK;
}

static int mkdirs(const char *dir)
{
    char *p = sim_xstrdup(dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0755) && errno != EEXIST) {
                free(p);
                return SIM_ERR;
            }
            *s = '/';
        }
    int rc = mkdir(p, 0755) && errno != EEXIST ? SIM_ERR : SIM_OK;
    free(p);
    return rc;
}

static char *read_text(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read suite file %s: %s", path, strerror(errno));
        return NULL;
    }
    cmp_buf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk - 1, f)) > 0) {
        chunk[n] = 0;
        if (strlen(chunk) != n) {
            fclose(f);
            cmp_buf_free(&b);
            snprintf(err, errlen, "%s is not a text suite file", path);
            return NULL;
        }
        cmp_buf_puts(&b, chunk);
    }
    fclose(f);
    return b.s ? b.s : sim_xstrdup("");
}

/* Loads a built-in suite by name, or a suite file by path. */
static int load_suite(const char *what, suite_def *def, char **origin, char **text)
{
    char err[1024];
    const char *builtin = suite_builtin(what);
    bool is_file = strchr(what, '/') || strstr(what, ".ini") || access(what, F_OK) == 0;
    if (builtin && !is_file) {
        *text = sim_xstrdup(builtin);
        *origin = sim_xstrdup("built-in");
    } else if (is_file) {
        *text = read_text(what, err, sizeof err);
        if (!*text) {
            sim_error("suite: %s", err);
            return SIM_EXIT_USAGE;
        }
        *origin = sim_xstrdup(what);
    } else {
        cmp_buf names = {0};
        for (const char *const *n = suite_builtin_names(); *n; n++)
            cmp_buf_printf(&names, "%s%s", names.len ? ", " : "", *n);
        sim_error("suite: '%s' is neither a built-in suite (%s) nor a suite file", what, names.s);
        cmp_buf_free(&names);
        return SIM_EXIT_USAGE;
    }
    if (suite_parse(*text, *origin, def, err, sizeof err)) {
        sim_error("suite: %s", err);
        free(*text);
        free(*origin);
        return SIM_EXIT_USAGE;
    }
    if (!def->name) {
        const char *b = strrchr(what, '/');
        b = b ? b + 1 : what;
        size_t l = strlen(b);
        def->name = sim_xstrndup(b, l > 4 && !strcmp(b + l - 4, ".ini") ? l - 4 : l);
    }
    return SIM_EXIT_OK;
}

static const char usage_text[] =
    "appsim suite NAME|FILE.ini --target PATH -o DIR [--size small|medium|full] [--resume]\n"
    "            [--trace FILE] [--dry-run] [STEP='OPTIONS'...] [all='OPTIONS']\n"
    "appsim suite list | appsim suite show NAME\n"
    "Runs a battery of appsim commands, one result per step in DIR, then writes\n"
    "DIR/report.html and prints the comparison. Built-in: review (the labs' battery:\n"
    "tpcc, sysbench on SQLite and LMDB, replay, VDI). A suite file is INI with one\n"
    "section per step (see `appsim suite show review` and docs/compare.md).\n"
    "--resume continues an interrupted suite in the same DIR, never redoing finished steps.\n"
    "STEP='OPTIONS' adds explicit options to one step (all= to every step), after the\n"
    "suite's own, e.g. tpcc='--scale 50 --vusers 500'.";

/* `suite list` and `suite show NAME`: their exit status, or NOT_LIST_OR_SHOW. */
enum { NOT_LIST_OR_SHOW = -1 };
static int list_or_show(char **pos, int npos)
{
    if (npos == 1 && !strcmp(pos[0], "list")) {
        for (const char *const *n = suite_builtin_names(); *n; n++) {
            suite_def d;
            char err[512];
            if (suite_parse(suite_builtin(*n), *n, &d, err, sizeof err) == 0) {
                printf("%-10s %s\n", *n, d.description ? d.description : "");
                suite_def_free(&d);
            }
        }
        return SIM_EXIT_OK;
    }
    if (npos == 2 && !strcmp(pos[0], "show")) {
        const char *t = suite_builtin(pos[1]);
        if (!t) {
            sim_error("suite: no built-in suite '%s'; `appsim suite list` shows them", pos[1]);
            return SIM_EXIT_USAGE;
        }
        fputs(t, stdout);
        return SIM_EXIT_OK;
    }
    return NOT_LIST_OR_SHOW;
}

/* Explicit options: STEP=ARGS (or all=ARGS) after the suite, appended to the step's
 * arguments for this size, so they override the suite's values. */
static int apply_overrides(suite_ctx *cp, char **pos, int npos)
{
    const suite_def *def = cp->def;
    int rc = 0;
    for (int i = 1; i < npos && !rc; i++) {
        char *eq = strchr(pos[i], '=');
        bool found = false;
        if (eq) {
            size_t kl = (size_t)(eq - pos[i]);
            for (int k = 0; k < def->nsteps; k++) {
                suite_step *st = &def->steps[k];
                bool match = (kl == 3 && !strncmp(pos[i], "all", 3)) ||
                             (strlen(st->name) == kl && !strncmp(pos[i], st->name, kl));
                if (!match) continue;
                found = true;
                char **slot = &st->size_args[cp->size_index];
                char *joined =
                    sim_xasprintf("%s%s%s", *slot ? *slot : "", *slot ? " " : "", eq + 1);
                free(*slot);
                *slot = joined;
            }
        }
        if (!found) {
            cmp_buf names = {0};
            for (int k = 0; k < def->nsteps; k++)
                cmp_buf_printf(&names, "%s%s", k ? ", " : "", def->steps[k].name);
            sim_error("suite: '%s': explicit options are STEP=ARGS or all=ARGS, where STEP is "
                      "one of: %s",
                      pos[i], names.s);
            cmp_buf_free(&names);
            rc = SIM_EXIT_USAGE;
        }
        json_array_append_new(cp->overrides, json_string(pos[i]));
    }
    return rc;
}

/* The step's command line checked by its command's own parser, running nothing
 * (sim_opts_set_check_only): an unknown option or a bad value, in the suite file or in
 * a STEP=ARGS given, is refused before any step runs. A line that cannot be built yet
 * (a placeholder without its value) is left to the step, which says so when it comes. */
static int check_step_options(const suite_ctx *cp, const suite_step *st, const char *origin)
{
    char err[1024], **argv;
    int argc;
    char *result = sim_xasprintf("%s/%s.json", cp->dir, st->name);
    int built = step_argv(cp, st, result, &argv, &argc, err, sizeof err);
    free(result);
    if (built) return SIM_EXIT_OK;
    const sim_command *cmd = sim_find_command(st->command);
    if (!cmd) {
        suite_free_words(argv, argc);
        return SIM_EXIT_OK;
    }
    sim_opts_set_check_only(true);
    int rc = sim_command_run(cmd, argc, argv);
    sim_opts_set_check_only(false);
    suite_free_words(argv, argc);
    if (!rc) return SIM_EXIT_OK;
    sim_error("suite: %s: step %s: its command line is refused (above); correct the suite's "
              "arguments for it or the %s=ARGS given",
              origin, st->name, st->name);
    return SIM_EXIT_USAGE;
}

/* Checks every step's arguments before running anything (a typo in step 5 should not
 * be found after hours of steps 1 to 4) and plans each step's time into planned[]. */
static int check_steps(const suite_ctx *cp, const char *origin, double *planned)
{
    const suite_def *def = cp->def;
    const char *target = cp->target, *output = cp->dir, *size = cp->size, *trace = cp->trace;
    int rc = 0;
    for (int i = 0; i < def->nsteps; i++) {
        char err[1024], **words;
        int n;
        suite_vars v = {target, "x", output, size, trace ? trace : "x"};
        const suite_step *st = &def->steps[i];
        bool has_result = false;
        /* The same words step_argv will use: common arguments, then this size's. */
        char *all =
            sim_xasprintf("%s %s", st->args ? st->args : "",
                          st->size_args[cp->size_index] ? st->size_args[cp->size_index] : "");
        if (suite_split_words(all, &words, &n, err, sizeof err)) {
            sim_error("suite: %s: step %s: %s", origin, st->name, err);
            rc = SIM_EXIT_USAGE;
            free(all);
            break;
        }
        free(all);
        for (int k = 0; k < n && !rc; k++) {
            char *x = suite_expand(words[k], &v, err, sizeof err);
            if (!x) {
                sim_error("suite: %s: step %s: %s", origin, st->name, err);
                rc = SIM_EXIT_USAGE;
            }
            free(x);
            has_result = has_result || suite_uses(words[k], "result");
        }
        planned[i] = planned_seconds(st, cp->size_index, words, n);
        suite_free_words(words, n);
        if (!rc && !has_result) {
            sim_error("suite: %s: step %s: its arguments must contain {result} (where the "
                      "command writes its result, e.g. --json {result})",
                      origin, st->name);
            rc = SIM_EXIT_USAGE;
        }
        if (!rc) rc = check_step_options(cp, st, origin);
    }
    return rc;
}

/* "at least 23m30s (warm-up + measured; loading not counted)": the planned steps'
 * sum, and how many steps it leaves out for want of a figure. */
static void plan_total(const double *planned, int n, char *buf, size_t len)
{
    double total = 0;
    int unknown = 0;
    for (int i = 0; i < n; i++) {
        total += planned[i];
        unknown += planned[i] <= 0;
    }
    char tt[32];
    fmt_duration(tt, sizeof tt, total);
    if (unknown)
        snprintf(buf, len,
                 "at least %s (warm-up + measured; loading and %d step%s without a planned "
                 "time not counted)",
                 tt, unknown, unknown == 1 ? "" : "s");
    else
        snprintf(buf, len, "at least %s (warm-up + measured; loading not counted)", tt);
}

/* --dry-run: what would run, with the planned times; runs nothing, writes nothing. */
static void print_plan(const suite_ctx *cp, const char *origin, const double *planned)
{
    const suite_def *def = cp->def;
    const char *target = cp->target, *output = cp->dir, *size = cp->size;
    char total[160];
    plan_total(planned, def->nsteps, total, sizeof total);
    printf("suite %s (%s), size %s, target %s, results in %s\n", def->name, origin, size, target,
           output);
    printf("planned in all: %s\n", total);
    for (int i = 0; i < def->nsteps; i++) {
        const suite_step *st = &def->steps[i];
        char *result = sim_xasprintf("%s/%s.json", output, st->name);
        char err[1024], **sv, pl[32];
        int sc;
        fmt_duration(pl, sizeof pl, planned[i]);
        printf("%d/%d %s: ", i + 1, def->nsteps, st->name);
        if (step_argv(cp, st, result, &sv, &sc, err, sizeof err)) {
            printf("not run: %s\n", err);
        } else {
            printf("appsim");
            for (int k = 0; k < sc; k++)
                printf(" %s", sv[k]);
            if (!sim_find_command(st->command))
                printf("\n    unavailable: command '%s' is not part of this appsim build\n",
                       st->command);
            else
                printf("  (planned %s)\n", planned[i] > 0 ? pl : "unknown");
            suite_free_words(sv, sc);
        }
        free(result);
    }
}

/* The positional arguments and the required options: one suite, a target and -o DIR.
 * SIM_EXIT_OK or SIM_EXIT_USAGE (message printed). */
static int check_args(char **pos, int npos, const char *target, const char *output)
{
    if (npos < 1 || !strcmp(pos[0], "list") || !strcmp(pos[0], "show")) {
        sim_error("suite: give one suite (a built-in name or a suite file); see "
                  "`appsim suite --help`");
        return SIM_EXIT_USAGE;
    }
    if (!target || !*target || !output || !*output) {
        sim_error("suite: --target PATH and -o DIR are required");
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* Before the first step: the target exists or its first step may create it (the rule
 * of every command), and the output directory is made. SIM_EXIT_OK or SIM_EXIT_USAGE
 * (message printed). */
static int check_dirs(const char *target, const char *output)
{
    /* Every step would fail on such a target: say so once, before running any. */
    char why[1024];
    if (access(target, F_OK) != 0 && sim_target_creatable(target, why, sizeof why)) {
        sim_error("suite: target %s", why);
        return SIM_EXIT_USAGE;
    }
    if (mkdirs(output)) {
        sim_error("suite: cannot create %s: %s", output, strerror(errno));
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* Runs the steps in order, saving the suite's state after each, until the last or an
 * interruption; then the report. An exit status. */
static int run_steps(suite_ctx *c, double *planned, bool resume)
{
    char total[160];
    plan_total(planned, c->def->nsteps, total, sizeof total);
    sim_info("suite: %s (%s), size %s, %d steps, results in %s", c->def->name, c->origin, c->size,
             c->def->nsteps, c->dir);
    sim_info("suite: planned in all: %s", total);
    for (int i = 0; i < c->def->nsteps; i++) {
        run_step(c, i, planned, resume);
        save_state(c);
        if (c->states[i].status == ST_INTERRUPTED) break;
    }
    return finish(c);
}

static int suite_main(int argc, char **argv)
{
    const char *target = NULL, *output = NULL, *size = "small", *trace = NULL;
    bool resume = false, dry_run = false;
    sim_opt opts[] = {
        SIM_VOCAB_TARGET(&target, "PATH", "file system directory or device every step runs on"),
        {.name = "output",
         .kind = SIM_OPT_STRING,
         .dst = &output,
         .help = "directory for the results, suite.json and report.html (-o)"},
        {.name = "size",
         .kind = SIM_OPT_CHOICE,
         .dst = &size,
         .choices = "small|medium|full",
         .help = "scale of the steps (full = the published configuration)"},
        {.name = "resume",
         .kind = SIM_OPT_FLAG,
         .dst = &resume,
         .help = "continue the suite in DIR, skipping finished steps"},
        {.name = "dry-run",
         .kind = SIM_OPT_FLAG,
         .dst = &dry_run,
         .help = "print each step's command line and planned time; run nothing"},
        {.name = "trace",
         .kind = SIM_OPT_STRING,
         .dst = &trace,
         .help = "block trace for the steps that replay one ({trace})"},
        SIM_OPT_END,
    };
    char *pos[64];
    int npos = 0;
    char **av = cmp_argv_short_o(argc, argv);
    int rc = sim_opts_parse("suite", opts, argc, av, pos, 64, &npos, usage_text);
    free(av);
    if (rc == SIM_OPTS_HELP_SHOWN) return SIM_EXIT_OK;
    if (rc) return SIM_EXIT_USAGE;
    if ((rc = list_or_show(pos, npos)) != NOT_LIST_OR_SHOW) return rc;
    if ((rc = check_args(pos, npos, target, output))) return rc;
    suite_def def;
    char *origin, *text;
    rc = load_suite(pos[0], &def, &origin, &text);
    if (rc) return rc;
    suite_ctx c = {&def, size, target, output, trace, origin, suite_size_index(size), NULL, NULL};
    c.overrides = json_array();
    rc = apply_overrides(&c, pos, npos);
    c.states = sim_xcalloc((size_t)def.nsteps, sizeof *c.states);
    double *planned = sim_xcalloc((size_t)def.nsteps, sizeof *planned);
    if (!rc) rc = check_steps(&c, origin, planned);
    if (!rc && dry_run)
        print_plan(&c, origin, planned);
    else if (!rc)
        rc = check_dirs(target, output);
    if (!rc && !dry_run) rc = check_resume(&c, resume);
    if (!rc && !dry_run) rc = run_steps(&c, planned, resume);
    for (int i = 0; i < def.nsteps; i++)
        free(c.states[i].message);
    free(c.states);
    json_decref(c.overrides);
    free(planned);
    suite_def_free(&def);
    free(origin);
    free(text);
    return rc;
}

/* list, show, and the built-in suites' names (a suite file is the other choice). */
static const char *const *suite_actions(void)
{
    static const char *words[16] = {"list", "show"};
    size_t n = 2;
    for (const char *const *s = suite_builtin_names(); *s && n + 1 < sizeof words / sizeof *words;
         s++)
        words[n++] = *s;
    words[n] = NULL;
    return words;
}

static const sim_command suite_command = {
    .name = "suite",
    .summary = "run a battery of workloads (e.g. the labs' review suite) and report",
    .main = suite_main,
    .actions = suite_actions,
};
SIM_REGISTER_COMMAND(suite_command)
