/*
 * sim/review/report_drives.c: the parts of the HTML report that put drives side by side
 * rather than per table: the summary at the top (each table's headline figures, one
 * column per drive) and the drive identity table (one column per drive, one row per
 * identity key, rows whose values differ highlighted), in place of one key/value table
 * per result file.
 */
#include "sim/review/review_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Calls fn for every leaf of v, named by its path ("target.device.model",
 * "host.cpus[0]"); arrays of scalars are one leaf (their JSON text). */
typedef void (*leaf_fn)(const char *key, const char *value, void *arg);

static void flatten(const json_t *v, const char *prefix, int depth, leaf_fn fn, void *arg)
{
    if (json_is_object(v) && depth < 6) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            char p[512];
            snprintf(p, sizeof p, "%s%s%s", prefix, *prefix ? "." : "", k);
            flatten(x, p, depth + 1, fn, arg);
        }
        return;
    }
    if (json_is_array(v) && depth < 6 && json_array_size(v) <= 32) {
        size_t i;
        json_t *x;
        bool scalars = true;
        json_array_foreach((json_t *)v, i, x) scalars = scalars && !json_is_object(x);
        if (!scalars) {
            json_array_foreach((json_t *)v, i, x)
            {
                char p[512];
                snprintf(p, sizeof p, "%s[%zu]", prefix, i);
                flatten(x, p, depth + 1, fn, arg);
            }
            return;
        }
    }
    if (json_is_string(v)) {
        fn(prefix, json_string_value(v), arg);
        return;
    }
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(10));
    fn(prefix, s ? s : "", arg);
    free(s);
}

static void kv_row(const char *key, const char *value, void *arg)
{
    cmp_buf *b = arg;
    cmp_buf_puts(b, "<tr><th>");
    cmp_buf_html(b, key);
    cmp_buf_puts(b, "</th><td>");
    cmp_buf_html(b, value);
    cmp_buf_puts(b, "</td></tr>\n");
}

void report_kv_rows(cmp_buf *b, const json_t *v, const char *prefix)
{
    flatten(v, prefix, 0, kv_row, b);
}

/* The drives of the set: each label once, in the order of first appearance (the order
 * of report_drive_index), with its first result and its number of results. */
typedef struct drive_col {
    const char *label;
    const cmp_result *first;
    int nfiles;
} drive_col;

static int drive_columns(const cmp_set *set, drive_col *cols)
{
    int n = 0;
    for (int i = 0; i < set->nresults; i++) {
        const cmp_result *r = &set->results[i];
        int k = report_drive_index(set, r->label);
        if (k == n) cols[n++] = (drive_col){r->label, r, 0};
        cols[k].nfiles++;
    }
    return n;
}

static void drive_headings(cmp_buf *b, const cmp_set *set, const drive_col *cols, int n,
                           const char *first)
{
    cmp_buf_puts(b, "<thead><tr><th>");
    cmp_buf_puts(b, first);
    cmp_buf_puts(b, "</th>");
    for (int d = 0; d < n; d++) {
        cmp_buf_printf(b, "<th><span class=\"swatch\" style=\"background:%s\"></span>",
                       report_drive_color(set, cols[d].label));
        cmp_buf_html(b, cols[d].label);
        cmp_buf_puts(b, "</th>");
    }
    cmp_buf_puts(b, "</tr></thead><tbody>\n");
}

/* ------------------------------------------------------------------ summary */

static int metric_of(const cmp_group *g, const char *id)
{
    for (int i = 0; i < g->nmetrics; i++)
        if (!strcmp(g->metrics[i].id, id)) return i;
    return -1;
}

static void summary_row(cmp_buf *b, const cmp_set *set, const drive_col *cols, int n,
                        const cmp_group *g, int gi, int m, const char *title)
{
    if (m < 0) return;
    const cmp_metric *mt = &g->metrics[m];
    cmp_buf_printf(b, "<tr><th><a href=\"#table-%d\">", gi + 1);
    cmp_buf_html(b, title);
    cmp_buf_puts(b, "</a>: ");
    cmp_buf_html(b, mt->name);
    if (!strcmp(mt->unit, "us")) cmp_buf_puts(b, " (us)");
    cmp_buf_puts(b, "</th>");
    for (int d = 0; d < n; d++) {
        int e = 0;
        while (e < g->nentries && strcmp(g->entries[e].label, cols[d].label))
            e++;
        const cmp_cell *c = e < g->nentries ? &mt->cells[e] : NULL;
        if (!c || !c->have) {
            cmp_buf_puts(b, "<td>-</td>");
            continue;
        }
        char v[64];
        cmp_format_value(v, sizeof v, c->value, mt->unit);
        cmp_buf_printf(b, "<td%s data-metric=\"", c->best ? " class=\"best\"" : "");
        cmp_buf_html(b, mt->id);
        cmp_buf_puts(b, "\" data-drive=\"");
        cmp_buf_html(b, cols[d].label);
        cmp_buf_printf(b, "\" data-value=\"%.10g\">%s", c->value, v);
        if (mt->better != CMP_NONE && c->best && g->nentries > 1)
            cmp_buf_puts(b, " &#9733;");
        else if (mt->better != CMP_NONE && c->pct >= 0 && !c->best)
            cmp_buf_printf(b, " <span class=\"pct\">%.1f%%</span>", c->pct);
        cmp_buf_puts(b, "</td>");
    }
    cmp_buf_puts(b, "</tr>\n");
}

/* A table's headline rows: throughput and p99, then each rate curve's peak and the
 * latency at it. */
static void summary_group(cmp_buf *b, const cmp_set *set, const drive_col *cols, int n,
                          const cmp_group *g, int gi)
{
    char title[300];
    cmp_group_title(g, title, sizeof title);
    char numbered[320];
    snprintf(numbered, sizeof numbered, "%d. %s", gi + 1, title);
    summary_row(b, set, cols, n, g, gi, metric_of(g, "rate"), numbered);
    summary_row(b, set, cols, n, g, gi, metric_of(g, "lat.p99"), numbered);
    for (int m = 0; m < g->nmetrics; m++) {
        const char *id = g->metrics[m].id;
        size_t l = strlen(id);
        if (strncmp(id, "curve.", 6) || l < 11 || strcmp(id + l - 5, ".peak")) continue;
        summary_row(b, set, cols, n, g, gi, m, numbered);
        char lat[400];
        snprintf(lat, sizeof lat, "%.*slat.mean", (int)(l - 4), id);
        summary_row(b, set, cols, n, g, gi, metric_of(g, lat), numbered);
        snprintf(lat, sizeof lat, "%.*slat.p99", (int)(l - 4), id);
        summary_row(b, set, cols, n, g, gi, metric_of(g, lat), numbered);
    }
}

void report_summary(cmp_buf *b, const cmp_set *set)
{
    drive_col cols[set->nresults > 0 ? set->nresults : 1];
    int n = drive_columns(set, cols);
    cmp_buf_puts(b, "<section id=\"summary\"><h2>Summary</h2>\n<table class=\"summary\">");
    drive_headings(b, set, cols, n, "workload: figure");
    for (int gi = 0; gi < set->ngroups; gi++)
        summary_group(b, set, cols, n, &set->groups[gi], gi);
    cmp_buf_puts(b, "</tbody></table>\n<p>The headline figures of every table below (TPS or "
                    "IOPS and p99; for each rate curve the peak, the highest rate that kept up "
                    "with its arrivals, and the latency there). &#9733; = best of the table, "
                    "others as a percentage of it; - = not measured on that drive.</p>\n"
                    "</section>\n");
}

/* ------------------------------------------------------------------ drives */

typedef struct id_rows {
    char **keys;
    json_t **values; /* per key: object drive index -> value text */
    int n, cap;
    int drive;
} id_rows;

static void id_leaf(const char *key, const char *value, void *arg)
{
    id_rows *r = arg;
    int k = 0;
    while (k < r->n && strcmp(r->keys[k], key))
        k++;
    if (k == r->n) {
        if (r->n == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 32;
            r->keys = cmp_xrealloc(r->keys, (size_t)r->cap * sizeof *r->keys);
            r->values = cmp_xrealloc(r->values, (size_t)r->cap * sizeof *r->values);
        }
        r->keys[r->n] = strdup(key);
        r->values[r->n] = json_object();
        r->n++;
    }
    char d[16];
    snprintf(d, sizeof d, "%d", r->drive);
    json_object_set_new(r->values[k], d, json_string(value));
}

static void id_row(cmp_buf *b, const id_rows *r, int k, int n)
{
    const char *first = NULL;
    bool differs = false;
    for (int d = 0; d < n; d++) {
        char key[16];
        snprintf(key, sizeof key, "%d", d);
        const char *v = json_string_value(json_object_get(r->values[k], key));
        if (d == 0) first = v;
        differs = differs || (v == NULL) != (first == NULL) || (v && first && strcmp(v, first));
    }
    cmp_buf_puts(b, "<tr><th>");
    cmp_buf_html(b, r->keys[k]);
    cmp_buf_puts(b, "</th>");
    for (int d = 0; d < n; d++) {
        char key[16];
        snprintf(key, sizeof key, "%d", d);
        const char *v = json_string_value(json_object_get(r->values[k], key));
        cmp_buf_puts(b, differs && n > 1 ? "<td class=\"differs\">" : "<td>");
        cmp_buf_html(b, v ? v : "-");
        cmp_buf_puts(b, "</td>");
    }
    cmp_buf_puts(b, "</tr>\n");
}

void report_drives(cmp_buf *b, const cmp_set *set)
{
    drive_col cols[set->nresults > 0 ? set->nresults : 1];
    int n = drive_columns(set, cols);
    id_rows rows = {0};
    for (int d = 0; d < n; d++) {
        rows.drive = d;
        const json_t *doc = cols[d].first->doc;
        char files[32];
        snprintf(files, sizeof files, "%d", cols[d].nfiles);
        id_leaf("result files", files, &rows);
        const json_t *t = json_object_get(doc, "target");
        if (t)
            flatten(t, "target", 0, id_leaf, &rows);
        else
            id_leaf("target", "(not recorded)", &rows);
        const json_t *h = json_object_get(doc, "host");
        if (h) flatten(h, "host", 0, id_leaf, &rows);
    }
    cmp_buf_puts(b, "<section id=\"drives\"><h2>Drives and hosts</h2>\n<table class=\"kv "
                    "drives\">");
    drive_headings(b, set, cols, n, "identity");
    for (int k = 0; k < rows.n; k++) {
        id_row(b, &rows, k, n);
        free(rows.keys[k]);
        json_decref(rows.values[k]);
    }
    free(rows.keys);
    free(rows.values);
    cmp_buf_puts(b, "</tbody></table>\n<p>Each drive as its first result file recorded it; "
                    "highlighted rows differ between drives.</p>\n");
    for (int i = 0; i < set->nresults; i++)
        if (set->results[i].interrupted) {
            cmp_buf_puts(b, "<p class=\"warn\">");
            cmp_buf_html(b, set->results[i].path);
            cmp_buf_puts(b, " ended early (interrupted or stopped).</p>\n");
        }
    cmp_buf_puts(b, "</section>\n");
}
