/*
 * sim/review/report_config.c: how the HTML report writes values (latencies in ms, sizes in
 * binary units, durations, missing values) and its configurations, as tables a reader
 * takes in at a glance: each option under its command-line name with its value in the
 * option's own terms (sizes in MiB or GiB, durations in ms, s or min, flags as yes or
 * no, one em dash for a value that is not there), never a JSON dump. The kind of each
 * option (size, duration, flag) comes from the command's own option table, so a new
 * option is shown rightly without a list here.
 */
#include "sim/review/review_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MISSING "&mdash;"

/* ------------------------------------------------------------------ values */

void report_size_text(char *buf, size_t len, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = bytes;
    while (fabs(v) >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0 || v == floor(v))
        snprintf(buf, len, "%.0f %s", v, units[u]);
    else
        snprintf(buf, len, "%.*f %s", fabs(v) < 10 ? 2 : 1, v, units[u]);
}

static void duration_text(char *buf, size_t len, double s)
{
    if (s == 0)
        snprintf(buf, len, "0 s");
    else if (fabs(s) < 1)
        snprintf(buf, len, "%.4g ms", s * 1e3);
    else if (fabs(s) < 120 || fmod(s, 60) != 0)
        snprintf(buf, len, "%.6g s", s);
    else if (fabs(s) < 7200 || fmod(s, 3600) != 0)
        snprintf(buf, len, "%.6g min", s / 60);
    else
        snprintf(buf, len, "%.6g h", s / 3600);
}

/* A JSON scalar as text: strings as they are, numbers in their shortest form, true and
 * false as yes and no; arrays of scalars joined with ", ". NULL (no text) for null. */
static char *scalar_text(const json_t *v)
{
    char *s = NULL;
    if (json_is_string(v)) return sim_xstrdup(json_string_value(v));
    if (json_is_boolean(v)) return sim_xstrdup(json_is_true(v) ? "yes" : "no");
    if (json_is_integer(v)) {
        return sim_xasprintf("%lld", (long long)json_integer_value(v));
    }
    if (json_is_real(v)) {
        s = sim_xasprintf("%.10g", json_real_value(v));
        return s;
    }
    if (json_is_array(v)) {
        cmp_buf b = {0};
        size_t i;
        json_t *x;
        json_array_foreach((json_t *)v, i, x)
        {
            char *t = scalar_text(x);
            cmp_buf_puts(&b, i ? ", " : "");
            cmp_buf_puts(&b, t ? t : "null");
            free(t);
        }
        return b.s ? b.s : sim_xstrdup("");
    }
    if (json_is_null(v) || !v) return NULL;
    return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(10));
}

char *report_value_text(const json_t *v, report_kind kind)
{
    char buf[64];
    if (json_is_number(v) && kind == REPORT_SIZE) {
        report_size_text(buf, sizeof buf, json_number_value(v));
        return sim_xstrdup(buf);
    }
    if (json_is_number(v) && kind == REPORT_DURATION) {
        duration_text(buf, sizeof buf, json_number_value(v));
        return sim_xstrdup(buf);
    }
    return scalar_text(v);
}

const char *report_unit_name(const char *unit)
{
    return !strcmp(unit, "us") ? "ms" : unit;
}

void report_format_value(char *buf, size_t len, double v, const char *unit)
{
    if (!strcmp(unit, "us"))
        cmp_format_value(buf, len, v / 1e3, "ms");
    else
        cmp_format_value(buf, len, v, unit);
}

/* ------------------------------------------------------------------ option kinds */

typedef struct kinds_ctx {
    json_t *kinds; /* option name -> report_kind */
} kinds_ctx;

static void take_kinds(void *arg, const char *command, const char *usage, const sim_opt *opts)
{
    (void)command;
    (void)usage;
    kinds_ctx *c = arg;
    for (const sim_opt *o = opts; o->name; o++) {
        report_kind k = o->kind == SIM_OPT_SIZE                                    ? REPORT_SIZE
                        : o->kind == SIM_OPT_DURATION || o->kind == SIM_OPT_WARMUP ? REPORT_DURATION
                                                                                   : REPORT_TEXT;
        json_object_set_new(c->kinds, o->name, json_integer(k));
    }
}

/* The kinds of the options of `command` (its table, as --help shows it): an object
 * name -> report_kind, empty when the command is not in this build. */
static json_t *option_kinds(const char *command)
{
    kinds_ctx c = {json_object()};
    const sim_command *cmd = command ? sim_find_command(command) : NULL;
    if (cmd) {
        char *argv[] = {(char *)cmd->name, "--help", NULL};
        sim_opts_set_describer(take_kinds, &c);
        cmd->main(2, argv);
        sim_opts_set_describer(NULL, NULL);
    }
    return c.kinds;
}

static report_kind kind_of(const json_t *kinds, const char *key)
{
    const json_t *k = json_object_get(kinds, key);
    return k ? (report_kind)json_integer_value(k) : REPORT_TEXT;
}

static void cell(cmp_buf *b, const char *text)
{
    if (text)
        cmp_buf_html(b, text);
    else
        cmp_buf_puts(b, MISSING);
}

/* ------------------------------------------------------------------ per table */

void report_config_brief(cmp_buf *b, const cmp_group *g)
{
    json_t *kinds = option_kinds(g->workload);
    const char *k;
    json_t *v;
    int n = 0;
    cmp_buf_puts(b, "<table class=\"opts\"><tbody><tr>");
    if (json_is_object(g->config)) json_object_foreach(g->config, k, v)
        {
            if (cmp_config_key_ignored(k)) continue;
            if (n && n % 4 == 0) cmp_buf_puts(b, "</tr>\n<tr>");
            char *t = report_value_text(v, kind_of(kinds, k));
            cmp_buf_puts(b, "<th>");
            cmp_buf_html(b, k);
            cmp_buf_puts(b, "</th><td>");
            cell(b, t);
            cmp_buf_puts(b, "</td>");
            free(t);
            n++;
        }
    if (!n) cmp_buf_puts(b, "<td>no configuration recorded</td>");
    cmp_buf_puts(b, "</tr></tbody></table>\n");
    json_decref(kinds);
}

/* ------------------------------------------------------------------ the section */

/* The results of a group in column order: each drive's runs in turn. */
static int group_results(const cmp_group *g, const cmp_result **out, char **heads, int max)
{
    int n = 0;
    for (int e = 0; e < g->nentries; e++)
        for (int r = 0; r < g->entries[e].nruns && n < max; r++) {
            out[n] = g->entries[e].runs[r];
            if (g->entries[e].nruns > 1) {
                heads[n] = sim_xasprintf("%s (run %d)", g->entries[e].label, r + 1);
            } else {
                heads[n] = sim_xstrdup(g->entries[e].label);
            }
            n++;
        }
    return n;
}

/* Every configuration key of the results, in the order of first appearance. */
static json_t *config_keys(const cmp_result *const *res, int n)
{
    json_t *keys = json_array(), *seen = json_object();
    for (int i = 0; i < n; i++) {
        const char *k;
        json_t *v;
        if (json_is_object(res[i]->config)) json_object_foreach(res[i]->config, k, v)
            {
                if (json_object_get(seen, k)) continue;
                json_object_set_new(seen, k, json_true());
                json_array_append_new(keys, json_string(k));
            }
    }
    json_decref(seen);
    return keys;
}

/* One row: the texts of the results, highlighted when they differ. */
static void config_row(cmp_buf *b, const char *name, char **texts, int n)
{
    bool differs = false;
    for (int i = 1; i < n; i++)
        differs = differs || (texts[i] == NULL) != (texts[0] == NULL) ||
                  (texts[i] && texts[0] && strcmp(texts[i], texts[0]));
    cmp_buf_puts(b, "<tr><th>");
    cmp_buf_html(b, name);
    cmp_buf_puts(b, "</th>");
    for (int i = 0; i < n; i++) {
        cmp_buf_puts(b, differs ? "<td class=\"differs\">" : "<td>");
        cell(b, texts[i]);
        cmp_buf_puts(b, "</td>");
    }
    cmp_buf_puts(b, "</tr>\n");
}

static void group_configs(cmp_buf *b, const cmp_set *set, const cmp_group *g, int gi)
{
    int max = 0;
    for (int e = 0; e < g->nentries; e++)
        max += g->entries[e].nruns;
    const cmp_result *res[max > 0 ? max : 1];
    char *heads[max > 0 ? max : 1], *texts[max > 0 ? max : 1];
    int n = group_results(g, res, heads, max);
    char title[256];
    cmp_group_title(g, title, sizeof title);
    cmp_buf_printf(b, "<h3>%d. ", gi + 1);
    cmp_buf_html(b, title);
    cmp_buf_puts(b, "</h3>\n<table class=\"kv cfg\"><thead><tr><th>option</th>");
    for (int i = 0; i < n; i++) {
        cmp_buf_printf(b, "<th><span class=\"swatch\" style=\"background:%s\"></span>",
                       report_drive_color(set, res[i]->label));
        cmp_buf_html(b, heads[i]);
        cmp_buf_puts(b, "</th>");
    }
    cmp_buf_puts(b, "</tr></thead><tbody>\n");
    for (int i = 0; i < n; i++) {
        const char *v = cmp_str(json_object_get(res[i]->doc, "tool"), "version");
        texts[i] = v ? sim_xasprintf("appsim %s", v) : NULL;
    }
    config_row(b, "tool", texts, n);
    for (int i = 0; i < n; i++) {
        free(texts[i]);
        texts[i] = sim_xstrdup(res[i]->path);
    }
    config_row(b, "result file", texts, n);
    for (int i = 0; i < n; i++)
        free(texts[i]);
    json_t *keys = config_keys(res, n), *kinds = option_kinds(g->workload);
    size_t k;
    json_t *key;
    json_array_foreach(keys, k, key)
    {
        const char *name = json_string_value(key);
        for (int i = 0; i < n; i++)
            texts[i] =
                report_value_text(json_object_get(res[i]->config, name), kind_of(kinds, name));
        config_row(b, name, texts, n);
        for (int i = 0; i < n; i++)
            free(texts[i]);
    }
    json_decref(keys);
    json_decref(kinds);
    cmp_buf_puts(b, "</tbody></table>\n");
    for (int i = 0; i < n; i++) {
        const char *cmd = cmp_str(res[i]->doc, "command");
        cmp_buf_puts(b, "<p class=\"config\">");
        cmp_buf_html(b, heads[i]);
        cmp_buf_puts(b, ": $ ");
        cell(b, cmd);
        cmp_buf_puts(b, "</p>\n");
        free(heads[i]);
    }
}

void report_configurations(cmp_buf *b, const cmp_set *set)
{
    cmp_buf_puts(b, "<section id=\"configs\"><h2>Configurations</h2>\n<p>Each table's runs side "
                    "by side, every option under its command-line name; highlighted rows differ "
                    "between runs, " MISSING " = not recorded by that run.</p>\n");
    for (int gi = 0; gi < set->ngroups; gi++)
        group_configs(b, set, &set->groups[gi], gi);
    cmp_buf_puts(b, "</section>\n");
}
