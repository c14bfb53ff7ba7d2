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

/* Every leaf of v into leaves (path -> value), named by its path ("target.device.model",
 * "target.device.nvme.namespaces[0].nsid"); arrays of scalars are one leaf. */
static void leaves_of(const json_t *v, const char *prefix, int depth, json_t *leaves)
{
    if (json_is_object(v) && json_object_size(v) && depth < 6) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            char p[512];
            snprintf(p, sizeof p, "%s%s%s", prefix, *prefix ? "." : "", k);
            leaves_of(x, p, depth + 1, leaves);
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
                leaves_of(x, p, depth + 1, leaves);
            }
            return;
        }
    }
    json_object_set(leaves, prefix, (json_t *)v);
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
    if (!strcmp(mt->unit, "us")) cmp_buf_puts(b, " (ms)");
    cmp_buf_puts(b, "</th>");
    for (int d = 0; d < n; d++) {
        int e = 0;
        while (e < g->nentries && strcmp(g->entries[e].label, cols[d].label))
            e++;
        const cmp_cell *c = e < g->nentries ? &mt->cells[e] : NULL;
        if (c && c->unmet) {
            cmp_buf_puts(b, "<td class=\"unmet\" data-metric=\"");
            cmp_buf_html(b, mt->id);
            cmp_buf_puts(b, "\" data-drive=\"");
            cmp_buf_html(b, cols[d].label);
            cmp_buf_puts(b, "\">none met</td>");
            continue;
        }
        if (!c || !c->have) {
            cmp_buf_puts(b, "<td>&mdash;</td>");
            continue;
        }
        char v[64];
        report_format_value(v, sizeof v, c->value, mt->unit);
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

/* A table's headline rows: an OLTP curve's service-level TPS and max TPS, throughput and
 * p99, then each rate curve's peak and the
 * latency at it. */
static void summary_group(cmp_buf *b, const cmp_set *set, const drive_col *cols, int n,
                          const cmp_group *g, int gi)
{
    char title[300];
    cmp_group_title(g, title, sizeof title);
    char numbered[320];
    snprintf(numbered, sizeof numbered, "%d. %s", gi + 1, title);
    summary_row(b, set, cols, n, g, gi, metric_of(g, "service_level.tps"), numbered);
    summary_row(b, set, cols, n, g, gi, metric_of(g, "curve.max_tps"), numbered);
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
                    "IOPS and p99; for an OLTP curve its service-level TPS, the highest offered "
                    "rate it sustained within its latency limits, and its max TPS; for each "
                    "other rate curve the peak, the highest rate that kept up with its "
                    "arrivals, and the latency there). &#9733; = best of the table, "
                    "others as a percentage of it; &mdash; = not measured on that drive; none "
                    "met = no point within the limits; latencies in milliseconds.</p>\n"
                    "</section>\n");
}

/* ------------------------------------------------------------------ drives */

/* The rows of the drives table in reading order: a label, the leaf's path and how its
 * value reads. Leaves not listed follow under a name made from their path, so a field a
 * new appsim records is shown without a change here. */
typedef struct id_spec {
    const char *label, *path;
    report_kind kind;
} id_spec;

static const id_spec target_rows[] = {
    {"target", "target.path", REPORT_TEXT},
    {"kind", "target.kind", REPORT_TEXT},
    {"device", "target.device.path", REPORT_TEXT},
    {"model", "target.device.model", REPORT_TEXT},
    {"serial", "target.device.serial", REPORT_TEXT},
    {"firmware", "target.device.firmware", REPORT_TEXT},
    {"vendor", "target.device.vendor", REPORT_TEXT},
    {"transport", "target.device.transport", REPORT_TEXT},
    {"capacity", "target.device.capacity_bytes", REPORT_SIZE},
    {"virtual device", "target.device.virtual", REPORT_TEXT},
    {"rotational", "target.device.rotational", REPORT_TEXT},
    {"write cache", "target.device.write_cache", REPORT_TEXT},
    {"FUA", "target.device.fua", REPORT_TEXT},
    {"logical block", "target.device.logical_block_size", REPORT_SIZE},
    {"physical block", "target.device.physical_block_size", REPORT_SIZE},
    {"I/O scheduler", "target.device.scheduler", REPORT_TEXT},
    {"requests queued (nr_requests)", "target.device.nr_requests", REPORT_TEXT},
    {"largest request (KiB)", "target.device.max_sectors_kb", REPORT_TEXT},
    {"optimal I/O size", "target.device.optimal_io_size", REPORT_SIZE},
    {"discard up to", "target.device.discard_max_bytes", REPORT_SIZE},
    {"WWID", "target.device.wwid", REPORT_TEXT},
    {"partition", "target.partition", REPORT_TEXT},
    {"filesystem", "target.filesystem.type", REPORT_TEXT},
    {"filesystem on", "target.filesystem.source", REPORT_TEXT},
    {"mounted at", "target.filesystem.mount_point", REPORT_TEXT},
    {"filesystem size", "target.filesystem.size_bytes", REPORT_SIZE},
    {"filesystem free", "target.filesystem.free_bytes", REPORT_SIZE},
    {"available to appsim", "target.available_bytes", REPORT_SIZE},
    {"filesystem block", "target.filesystem.block_size", REPORT_SIZE},
    {"direct I/O", "target.direct_io", REPORT_TEXT},
    {"page cache", "target.page_cache", REPORT_TEXT},
    {"I/O alignment", "target.alignment_bytes", REPORT_SIZE},
    {"memory alignment", "target.memory_alignment_bytes", REPORT_SIZE},
    {"preconditioning", "target.preconditioning", REPORT_TEXT},
    {"note", "target.device.note", REPORT_TEXT},
};

static const id_spec host_rows[] = {
    {"host name", "host.hostname", REPORT_TEXT}, {"CPU", "host.cpu", REPORT_TEXT},
    {"cores", "host.cores", REPORT_TEXT},        {"memory", "host.memory_bytes", REPORT_SIZE},
    {"kernel", "host.kernel", REPORT_TEXT},      {"architecture", "host.machine", REPORT_TEXT},
};

/* Leaves not shown as rows: the device's list of unknown fields (each is an em dash in
 * its row), its kernel name (in its path) and the target's resolved path. */
static const char *const hidden[] = {"target.device.unknown", "target.device.name",
                                     "target.realpath"};

typedef struct id_table {
    json_t **leaves; /* per drive: path -> value */
    int n;
    json_t *used; /* paths shown so far */
} id_table;

static void id_row(cmp_buf *b, id_table *t, const char *label, const char *path, report_kind kind)
{
    char *texts[t->n > 0 ? t->n : 1];
    bool any = false, differs = false;
    for (int d = 0; d < t->n; d++)
        any = any || json_object_get(t->leaves[d], path);
    json_object_set_new(t->used, path, json_true());
    if (!any) return;
    for (int d = 0; d < t->n; d++) {
        texts[d] = report_value_text(json_object_get(t->leaves[d], path), kind);
        differs = differs || (texts[d] == NULL) != (texts[0] == NULL) ||
                  (texts[d] && texts[0] && strcmp(texts[d], texts[0]));
    }
    cmp_buf_puts(b, "<tr><th>");
    cmp_buf_html(b, label);
    cmp_buf_puts(b, "</th>");
    for (int d = 0; d < t->n; d++) {
        cmp_buf_puts(b, differs && t->n > 1 ? "<td class=\"differs\">" : "<td>");
        if (texts[d])
            cmp_buf_html(b, texts[d]);
        else
            cmp_buf_puts(b, "&mdash;");
        cmp_buf_puts(b, "</td>");
        free(texts[d]);
    }
    cmp_buf_puts(b, "</tr>\n");
}

/* A leaf's path as a row label: without its part's prefix, words for underscores
 * ("target.device.nvme.mdts" -> "nvme mdts"); sizes by their "_bytes" ending. */
static void leftover_label(const char *path, char *buf, size_t len, report_kind *kind)
{
    static const char *const prefixes[] = {"target.device.", "target.", "host."};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(path, prefixes[i], strlen(prefixes[i]))) {
            path += strlen(prefixes[i]);
            break;
        }
    snprintf(buf, len, "%s", path);
    size_t l = strlen(buf);
    *kind = l > 6 && !strcmp(buf + l - 6, "_bytes") ? REPORT_SIZE : REPORT_TEXT;
    if (*kind == REPORT_SIZE) buf[l - 6] = 0;
    for (char *p = buf; *p; p++)
        if (*p == '_' || *p == '.') *p = ' ';
}

/* One part of the table: its listed rows, then the leaves under `prefix` not shown. */
static void id_part(cmp_buf *b, id_table *t, const char *heading, const id_spec *rows, int nrows,
                    const char *prefix)
{
    cmp_buf_printf(b, "<tr class=\"part\"><th colspan=\"%d\">", t->n + 1);
    cmp_buf_html(b, heading);
    cmp_buf_puts(b, "</th></tr>\n");
    for (int r = 0; r < nrows; r++)
        id_row(b, t, rows[r].label, rows[r].path, rows[r].kind);
    for (size_t h = 0; h < sizeof hidden / sizeof *hidden; h++)
        json_object_set_new(t->used, hidden[h], json_true());
    for (int d = 0; d < t->n; d++) {
        const char *path;
        json_t *v;
        json_object_foreach(t->leaves[d], path, v)
        {
            if (strncmp(path, prefix, strlen(prefix)) || json_object_get(t->used, path)) continue;
            char label[256];
            report_kind kind;
            leftover_label(path, label, sizeof label, &kind);
            id_row(b, t, label, path, kind);
        }
    }
}

void report_drives(cmp_buf *b, const cmp_set *set)
{
    drive_col cols[set->nresults > 0 ? set->nresults : 1];
    int n = drive_columns(set, cols);
    json_t *leaves[n > 0 ? n : 1];
    id_table t = {leaves, n, json_object()};
    for (int d = 0; d < n; d++) {
        leaves[d] = json_object();
        const json_t *doc = cols[d].first->doc;
        json_object_set_new(leaves[d], "files", json_integer(cols[d].nfiles));
        if (json_object_get(doc, "target"))
            leaves_of(json_object_get(doc, "target"), "target", 1, leaves[d]);
        if (json_object_get(doc, "host"))
            leaves_of(json_object_get(doc, "host"), "host", 1, leaves[d]);
    }
    cmp_buf_puts(b, "<section id=\"drives\"><h2>Drives and hosts</h2>\n<table class=\"kv "
                    "drives\">");
    drive_headings(b, set, cols, n, "");
    id_row(b, &t, "result files", "files", REPORT_TEXT);
    id_part(b, &t, "Target and drive", target_rows, (int)(sizeof target_rows / sizeof *target_rows),
            "target.");
    id_part(b, &t, "Host", host_rows, (int)(sizeof host_rows / sizeof *host_rows), "host.");
    for (int d = 0; d < n; d++)
        json_decref(leaves[d]);
    json_decref(t.used);
    cmp_buf_puts(b, "</tbody></table>\n<p>Each drive as its first result file recorded it; "
                    "highlighted rows differ between drives; sizes in binary units "
                    "(1 GiB = 1024<sup>3</sup> bytes); &mdash; = not recorded or not known "
                    "for that drive.</p>\n");
    for (int i = 0; i < set->nresults; i++)
        if (set->results[i].interrupted) {
            cmp_buf_puts(b, "<p class=\"warn\">");
            cmp_buf_html(b, set->results[i].path);
            cmp_buf_puts(b, " ended early (interrupted or stopped).</p>\n");
        }
    cmp_buf_puts(b, "</section>\n");
}
