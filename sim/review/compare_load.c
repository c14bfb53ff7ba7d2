/*
 * sim/review/compare_load.c: loading one result file for compare/report/suite: validation
 * (anything that is not an appsim result is refused with the file and the reason), the
 * drive label and key from the target identity, and the configuration key that decides
 * which results may be ranked against each other.
 */
#include "sim/review/review_internal.h"

#include <stdlib.h>
#include <string.h>

#define SCHEMA_PREFIX "appsim-result/"
#define SCHEMA_VERSION 1

/* Options that say where things go or how they are shown, what is checked after the
 * run, or what is recorded under another key too: never what is measured. */
static const char *const ignored_keys[] = {
    "integrity", /* tpcc: the check after the measured phase (one-shot and run differ) */
    "keep-free", /* a guard: a run it stopped is marked (stopped_by) whatever the value */
    "rw",        /* io: fio's pattern, recorded as read-pct and random-pct */
    /* OLTP curves: the service-level limits judge the points, they do not change them;
     * compare reads the limits themselves (service_level.limits, defaults included) and
     * does not rank the service-level figure of results judged against different ones. */
    "slo",
    /* io's vdbench and fio names in results written while they were options of their own:
     * each holds the value of bs, read-pct, random-pct or threads. */
    "xfersize",
    "rdpct",
    "rwmixread",
    "seekpct",
    "iodepth",
    "target",
    "json",
    "output",
    "o",
    "report-interval",
    "quiet",
    "seed",
    "label",
    "keep-pristine",
    "skip-bad",
    "verbose",
    "progress",
    "allow-destroy",
    "cleanup",
    "help",
    "device",
    "path",
    "dir",
    NULL,
};
/* Options that change how long was measured: reported when they differ, not refused. */
static const char *const soft_keys[] = {"duration",     "time",
                                        "warmup",       "loop",
                                        "point-warmup", "point-duration",
                                        "steady-round", "steady-max-rounds",
                                        "events",       NULL};

static bool in_list(const char *const *list, const char *key)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], key)) return true;
    return false;
}

bool cmp_config_key_ignored(const char *key)
{
    return in_list(ignored_keys, key);
}

bool cmp_config_key_soft(const char *key)
{
    return in_list(soft_keys, key);
}

/* First string value under `key` in obj or its nested objects/arrays (depth-limited). */
const char *cmp_find_string(const json_t *obj, const char *key, int depth)
{
    if (!obj || depth > 3) return NULL;
    if (json_is_object(obj)) {
        const char *s = cmp_str(obj, key);
        if (s && *s) return s;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)obj, k, v)
        {
            if (json_is_object(v) || json_is_array(v)) {
                const char *r = cmp_find_string(v, key, depth + 1);
                if (r) return r;
            }
        }
    } else if (json_is_array(obj)) {
        size_t i;
        json_t *v;
        json_array_foreach((json_t *)obj, i, v)
        {
            const char *r = cmp_find_string(v, key, depth + 1);
            if (r) return r;
        }
    }
    return NULL;
}

static char *trimmed_dup(const char *s)
{
    while (*s == ' ')
        s++;
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ')
        n--;
    return sim_xstrndup(s, n);
}

static char *file_stem(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    if (n > 5 && !strcmp(b + n - 5, ".json")) n -= 5;
    return sim_xstrndup(b, n);
}

char *cmp_identity_label(const json_t *doc, const char *path)
{
    const json_t *t = json_object_get(doc, "target");
    const char *model = cmp_find_string(t, "model", 0);
    if (model) return trimmed_dup(model);
    const char *tp = cmp_str(t, "path");
    if (tp && *tp) return sim_xstrdup(tp);
    return file_stem(path);
}

static char *drive_key(const json_t *doc, const char *path)
{
    const json_t *t = json_object_get(doc, "target");
    const char *serial = cmp_find_string(t, "serial", 0);
    const char *model = cmp_find_string(t, "model", 0);
    const char *tp = cmp_str(t, "path");
    char buf[1024];
    if (serial)
        snprintf(buf, sizeof buf, "serial:%s|model:%s", serial, model ? model : "");
    else if (model || tp)
        snprintf(buf, sizeof buf, "model:%s|path:%s", model ? model : "", tp ? tp : "");
    else
        snprintf(buf, sizeof buf, "file:%s", path);
    return sim_xstrdup(buf);
}

static char *config_key(const json_t *config)
{
    json_t *c = json_object();
    if (json_is_object(config)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)config, k, v)
        {
            if (!cmp_config_key_ignored(k) && !cmp_config_key_soft(k)) json_object_set(c, k, v);
        }
    }
    char *s = json_dumps(c, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(c);
    return s ? s : sim_xstrdup("{}");
}

static int fail(char *err, size_t errlen, const char *path, const char *what)
{
    snprintf(err, errlen, "%s: %s", path, what);
    return SIM_ERR;
}

/* Every serialized histogram must parse: a damaged one is reported now rather than
 * silently dropped from a merge later. */
static int check_histograms(const json_t *h, const char *where, const char *path, char *err,
                            size_t errlen)
{
    if (!h) return SIM_OK;
    if (!json_is_object(h)) return fail(err, errlen, path, "\"histograms\" is not an object");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)h, k, v)
    {
        char herr[256] = "";
        sim_hist *x = sim_hist_from_json(v, herr, sizeof herr);
        if (!x) {
            char msg[512];
            snprintf(msg, sizeof msg, "%shistograms.%s is malformed: %s", where, k, herr);
            return fail(err, errlen, path, msg);
        }
        sim_hist_free(x);
    }
    return SIM_OK;
}

/* The path ("summary.count") of the first negative number under v, into at; false when
 * there is none. Counts, rates, seconds and latencies are never negative: a result that
 * says so was altered or damaged, and would be ranked on nonsense. */
static bool find_negative(const json_t *v, char *at, size_t len)
{
    if (json_is_number(v)) return json_number_value(v) < 0;
    size_t used = strlen(at);
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            snprintf(at + used, len - used, ".%s", k);
            if (find_negative(x, at, len)) return true;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            snprintf(at + used, len - used, "[%zu]", i);
            if (find_negative(x, at, len)) return true;
        }
    }
    at[used] = 0;
    return false;
}

static int check_not_negative(const json_t *doc, const char *path, char *err, size_t errlen)
{
    static const char *const sections[] = {"summary", "per_type"};
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++) {
        char at[256];
        snprintf(at, sizeof at, "%s", sections[i]);
        const json_t *v = json_object_get(doc, sections[i]);
        if (v && find_negative(v, at, sizeof at)) {
            char msg[400];
            snprintf(msg, sizeof msg,
                     "%s is negative; counts, rates, seconds and latencies never are: the file "
                     "was altered or damaged, so it is not compared",
                     at);
            return fail(err, errlen, path, msg);
        }
    }
    return SIM_OK;
}

int cmp_load(cmp_result *r, const char *path, char *err, size_t errlen)
{
    return cmp_load_series(r, path, CMP_SERIES_CHARTED, err, errlen);
}

int cmp_load_series(cmp_result *r, const char *path, cmp_series series, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    char msg[400];
    json_t *doc = cmp_read_result(path, series, msg, sizeof msg);
    if (!doc) return fail(err, errlen, path, msg);
    const char *schema = cmp_str(doc, "schema");
    if (schema && !strncmp(schema, "appsim-suite/", 13)) {
        /* A suite directory holds its state beside the results: `compare DIR/X.json` with a glob
         * names it too, and it is no measurement. */
        json_decref(doc);
        snprintf(err, errlen, "%s: a suite's state file, not a result: skipped", path);
        return CMP_LOAD_SKIPPED;
    }
    if (!json_is_object(doc) || !schema || strncmp(schema, SCHEMA_PREFIX, strlen(SCHEMA_PREFIX))) {
        json_decref(doc);
        return fail(err, errlen, path,
                    "not an appsim result file (no \"schema\": \"appsim-result/1\"); give the "
                    "files written by --json");
    }
    int version = atoi(schema + strlen(SCHEMA_PREFIX));
    if (version != SCHEMA_VERSION) {
        snprintf(msg, sizeof msg,
                 "result schema \"%.40s\" is not the one this appsim reads (appsim-result/%d); "
                 "use the appsim version that wrote it",
                 schema, SCHEMA_VERSION);
        json_decref(doc);
        return fail(err, errlen, path, msg);
    }
    const char *wl = cmp_str(doc, "workload");
    if (!wl || !*wl) {
        json_decref(doc);
        return fail(err, errlen, path, "appsim result without a \"workload\"; file is damaged");
    }
    const json_t *summary = json_object_get(doc, "summary");
    if (summary && !json_is_object(summary)) {
        json_decref(doc);
        return fail(err, errlen, path, "\"summary\" is not an object; file is damaged");
    }
    const json_t *cv[1];
    char *cn[1] = {NULL};
    int ncurves = cmp_find_curves(doc, cv, cn, 1);
    free(cn[0]);
    if (!summary && ncurves == 0) {
        json_decref(doc);
        return fail(err, errlen, path,
                    "holds no measurement (no \"summary\" and no \"curve\"); the run did not "
                    "finish writing it");
    }
    const json_t *config = json_object_get(doc, "config");
    if (config && !json_is_object(config)) {
        json_decref(doc);
        return fail(err, errlen, path, "\"config\" is not an object; file is damaged");
    }
    if (check_not_negative(doc, path, err, errlen) ||
        check_histograms(json_object_get(doc, "histograms"), "", path, err, errlen)) {
        json_decref(doc);
        return SIM_ERR;
    }
    r->path = sim_xstrdup(path);
    r->doc = doc;
    r->workload = wl;
    r->config = (json_t *)config;
    r->config_key = config_key(config);
    r->label = cmp_identity_label(doc, path);
    r->drive_key = drive_key(doc, path);
    /* Ended early: Ctrl-C, or a guard such as --keep-free stopped it. */
    r->interrupted = json_is_true(json_object_get(doc, "interrupted")) ||
                     json_is_string(json_object_get(doc, "stopped_by"));
    return SIM_OK;
}
