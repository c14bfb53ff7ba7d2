/*
 * sim/review/compare_format.c: printing the comparison tables as text, Markdown, CSV or JSON.
 * Text and Markdown show metrics as rows and drives as columns (in rank order), the best
 * value marked with '*', the others as a percentage of the best, and the run-to-run range
 * [min-max] when a drive has several runs. CSV and JSON carry the same cells, one per
 * (metric, drive), for scripts.
 */
#include "sim/review/review_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cmp_format_parse(const char *s, cmp_format *f)
{
    static const struct {
        const char *name;
        cmp_format f;
    } names[] = {
        {"text", CMP_TEXT}, {"markdown", CMP_MARKDOWN}, {"csv", CMP_CSV}, {"json", CMP_JSON}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name)) {
            *f = names[i].f;
            return SIM_OK;
        }
    return SIM_ERR;
}

/* Thousands separators; decimals by magnitude so small latencies keep their digits. */
void cmp_format_value(char *buf, size_t len, double v, const char *unit)
{
    (void)unit;
    int dec = fabs(v) >= 100 ? 1 : fabs(v) >= 10 ? 2 : 3;
    if (v == floor(v) && fabs(v) < 1e15 && (!unit || !*unit)) dec = 0;
    char raw[64];
    snprintf(raw, sizeof raw, "%.*f", dec, fabs(v));
    char *dot = strchr(raw, '.');
    size_t intlen = dot ? (size_t)(dot - raw) : strlen(raw);
    char out[96];
    size_t k = 0;
    if (v < 0) out[k++] = '-';
    for (size_t i = 0; i < intlen; i++) {
        if (i && (intlen - i) % 3 == 0) out[k++] = ',';
        out[k++] = raw[i];
    }
    out[k] = 0;
    if (dot) snprintf(out + k, sizeof out - k, "%s", dot);
    snprintf(buf, len, "%s", out);
}

static void cell_text(char *buf, size_t len, const cmp_metric *m, const cmp_cell *c, bool markdown)
{
    if (!c->have) {
        snprintf(buf, len, "%s", c->unmet ? "none met" : "-");
        return;
    }
    char v[64], lo[64], hi[64], extra[160] = "";
    cmp_format_value(v, sizeof v, c->value, m->unit);
    size_t k = 0;
    if (c->nruns > 1 && c->min != c->max) {
        cmp_format_value(lo, sizeof lo, c->min, m->unit);
        cmp_format_value(hi, sizeof hi, c->max, m->unit);
        k += (size_t)snprintf(extra + k, sizeof extra - k, " [%s-%s]", lo, hi);
    }
    if (m->better != CMP_NONE) {
        if (c->best)
            snprintf(extra + k, sizeof extra - k, " *");
        else if (c->pct >= 0)
            snprintf(extra + k, sizeof extra - k, " (%.1f%%)", c->pct);
    }
    if (markdown && c->best && m->better != CMP_NONE)
        snprintf(buf, len, "**%s**%s", v, extra);
    else
        snprintf(buf, len, "%s%s", v, extra);
}

static char *config_line(const cmp_group *g)
{
    cmp_buf b = {0};
    const char *k;
    json_t *v;
    if (json_is_object(g->config)) json_object_foreach(g->config, k, v)
        {
            if (cmp_config_key_ignored(k)) continue;
            char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(10));
            cmp_buf_printf(&b, "%s%s=%s", b.len ? " " : "", k, s ? s : "?");
            free(s);
        }
    if (!b.s) cmp_buf_puts(&b, "(no configuration recorded)");
    return b.s;
}

static const char *metric_label(const cmp_metric *m, char *buf, size_t len)
{
    if (m->unit[0] && strcmp(m->unit, "tps") && strcmp(m->unit, "iops"))
        snprintf(buf, len, "%s (%s)", m->name, m->unit);
    else
        snprintf(buf, len, "%s", m->name);
    return buf;
}

/* The group's table as text cells: a heading row (the drives), one row per metric, and
 * the ranks; rows x cols, each cell malloc'ed (free_cells). */
static char ***table_cells(const cmp_group *g, bool markdown, int rows, int cols)
{
    int ne = g->nentries;
    char ***cells = sim_xcalloc((size_t)rows, sizeof *cells);
    for (int r = 0; r < rows; r++)
        cells[r] = sim_xcalloc((size_t)cols, sizeof **cells);
    cells[0][0] = sim_xstrdup("metric");
    char tmp[512];
    for (int e = 0; e < ne; e++) {
        cells[0][e + 1] = sim_xstrdup(g->entries[e].label);
    }
    for (int m = 0; m < g->nmetrics; m++) {
        cells[m + 1][0] = sim_xstrdup(metric_label(&g->metrics[m], tmp, sizeof tmp));
        for (int e = 0; e < ne; e++) {
            cell_text(tmp, sizeof tmp, &g->metrics[m], &g->metrics[m].cells[e], markdown);
            cells[m + 1][e + 1] = sim_xstrdup(tmp);
        }
    }
    cells[rows - 1][0] = sim_xstrdup("rank (runs)");
    for (int e = 0; e < ne; e++) {
        if (g->entries[e].rank)
            snprintf(tmp, sizeof tmp, "%d (%d)", g->entries[e].rank, g->entries[e].nruns);
        else
            snprintf(tmp, sizeof tmp, "- (%d)", g->entries[e].nruns);
        cells[rows - 1][e + 1] = sim_xstrdup(tmp);
    }
    return cells;
}

static void free_cells(char ***cells, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++)
            free(cells[r][c]);
        free(cells[r]);
    }
    free(cells);
}

/* A Markdown table (| escaped), numbers right-aligned. */
static void print_markdown_cells(FILE *out, char ***cells, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        fputc('|', out);
        for (int c = 0; c < cols; c++) {
            fputc(' ', out);
            for (const char *p = cells[r][c]; *p; p++) {
                if (*p == '|') fputc('\\', out);
                fputc(*p, out);
            }
            fputs(" |", out);
        }
        fputc('\n', out);
        if (r == 0) {
            fputc('|', out);
            for (int c = 0; c < cols; c++)
                fputs(c ? "---:|" : "---|", out);
            fputc('\n', out);
        }
    }
    fputc('\n', out);
}

/* Columns as wide as their widest cell: the metric left-aligned, figures right. */
static void print_text_cells(FILE *out, char ***cells, int rows, int cols)
{
    int width[cols];
    for (int c = 0; c < cols; c++) {
        width[c] = 0;
        for (int r = 0; r < rows; r++) {
            int w = (int)strlen(cells[r][c]);
            if (w > width[c]) width[c] = w;
        }
    }
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) {
            if (c == 0)
                fprintf(out, "%-*s", width[c], cells[r][c]);
            else
                fprintf(out, "  %*s", width[c], cells[r][c]);
        }
        fputc('\n', out);
    }
}

/* Under the table: the rank rule, and the group's notes and warnings. */
static void print_notes(FILE *out, const cmp_group *g, bool markdown)
{
    const char *pre = markdown ? "> " : "";
    if (g->rank_rule)
        fprintf(out, "%s%s; * = best, (%%) = percentage of the best", pre, g->rank_rule);
    fprintf(out, "%s", markdown ? "\n" : "\n");
    if (g->service_limits)
        fprintf(out, "%s%sservice level: judged against %s\n", markdown ? "\n" : "", pre,
                g->service_limits);
    if (g->service_note) fprintf(out, "%s%snote: %s\n", markdown ? "\n" : "", pre, g->service_note);
    if (g->note) fprintf(out, "%s%snote: %s\n", markdown ? "\n" : "", pre, g->note);
    if (g->soft_note) fprintf(out, "%s%snote: %s\n", markdown ? "\n" : "", pre, g->soft_note);
    if (g->warnings) fprintf(out, "%s%swarning: %s\n", markdown ? "\n" : "", pre, g->warnings);
    fputc('\n', out);
}

static void print_table(FILE *out, const cmp_group *g, int gi, bool markdown)
{
    int rows = g->nmetrics + 2, cols = g->nentries + 1;
    char ***cells = table_cells(g, markdown, rows, cols);
    char *cfg = config_line(g);
    char title[256];
    cmp_group_title(g, title, sizeof title);
    if (markdown) {
        fprintf(out, "## %d. %s\n\nconfiguration: `%s`\n\n", gi + 1, title, cfg);
        print_markdown_cells(out, cells, rows, cols);
    } else {
        fprintf(out, "== %d. %s\nconfiguration: %s\n", gi + 1, title, cfg);
        print_text_cells(out, cells, rows, cols);
    }
    free(cfg);
    print_notes(out, g, markdown);
    free_cells(cells, rows, cols);
}

static void csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void print_csv(FILE *out, const cmp_set *set)
{
    fputs("table,workload,metric_id,metric,unit,drive,rank,runs,value,min,max,pct_of_best,"
          "best\n",
          out);
    for (int gi = 0; gi < set->ngroups; gi++) {
        const cmp_group *g = &set->groups[gi];
        for (int m = 0; m < g->nmetrics; m++)
            for (int e = 0; e < g->nentries; e++) {
                const cmp_metric *mt = &g->metrics[m];
                const cmp_cell *c = &mt->cells[e];
                if (!c->have && !c->unmet) continue;
                fprintf(out, "%d,", gi + 1);
                csv_field(out, g->workload);
                fputc(',', out);
                csv_field(out, mt->id);
                fputc(',', out);
                csv_field(out, mt->name);
                fputc(',', out);
                csv_field(out, mt->unit);
                fputc(',', out);
                csv_field(out, g->entries[e].label);
                if (c->unmet) { /* measured, no qualifying value: empty figures */
                    fprintf(out, ",%d,%d,,,,,0\n", g->entries[e].rank, g->entries[e].nruns);
                    continue;
                }
                char v[32], lo[32], hi[32];
                fprintf(out, ",%d,%d,%s,%s,%s,", g->entries[e].rank, g->entries[e].nruns,
                        sim_format_double(c->value, v, sizeof v),
                        sim_format_double(c->min, lo, sizeof lo),
                        sim_format_double(c->max, hi, sizeof hi));
                if (c->pct >= 0) fprintf(out, "%.6g", c->pct);
                fprintf(out, ",%s\n", c->best ? "1" : "0");
            }
    }
}

/* The table's service level: the limits its results were judged against (text, and as
 * the first result recorded them), whether the row is ranked, and the note. */
static json_t *service_json(const cmp_group *g)
{
    const json_t *limits = cmp_service_limits(g->entries[0].runs[0]->doc);
    json_t *j = json_object();
    json_object_set_new(j, "limits",
                        g->service_limits ? json_string(g->service_limits) : json_null());
    json_object_set_new(j, "limits_list",
                        g->service_limits && limits ? json_deep_copy(limits) : json_null());
    json_object_set_new(j, "ranked", json_boolean(g->service_limits != NULL));
    json_object_set_new(j, "note", g->service_note ? json_string(g->service_note) : json_null());
    return j;
}

json_t *cmp_to_json(const cmp_set *set)
{
    json_t *root = json_object();
    json_object_set_new(root, "schema", json_string("appsim-compare/1"));
    json_t *tables = json_array();
    for (int gi = 0; gi < set->ngroups; gi++) {
        const cmp_group *g = &set->groups[gi];
        json_t *t = json_object();
        json_object_set_new(t, "workload", json_string(g->workload));
        json_object_set(t, "config", g->config ? g->config : json_null());
        json_t *drives = json_array();
        for (int e = 0; e < g->nentries; e++) {
            json_t *d = json_object();
            json_object_set_new(d, "label", json_string(g->entries[e].label));
            json_object_set_new(d, "rank", json_integer(g->entries[e].rank));
            json_t *files = json_array();
            for (int r = 0; r < g->entries[e].nruns; r++)
                json_array_append_new(files, json_string(g->entries[e].runs[r]->path));
            json_object_set_new(d, "files", files);
            json_array_append_new(drives, d);
        }
        json_object_set_new(t, "drives", drives);
        json_t *metrics = json_array();
        for (int m = 0; m < g->nmetrics; m++) {
            const cmp_metric *mt = &g->metrics[m];
            json_t *jm = json_object();
            json_object_set_new(jm, "id", json_string(mt->id));
            json_object_set_new(jm, "name", json_string(mt->name));
            json_object_set_new(jm, "unit", json_string(mt->unit));
            json_object_set_new(jm, "better",
                                json_string(mt->better == CMP_HIGHER  ? "higher"
                                            : mt->better == CMP_LOWER ? "lower"
                                                                      : "none"));
            json_t *vals = json_array();
            for (int e = 0; e < g->nentries; e++) {
                const cmp_cell *c = &mt->cells[e];
                if (c->unmet) {
                    json_array_append_new(
                        vals, json_pack("{s:n,s:i,s:b}", "value", "runs", c->nruns, "unmet", true));
                    continue;
                }
                if (!c->have) {
                    json_array_append_new(vals, json_null());
                    continue;
                }
                json_t *v = json_object();
                json_object_set_new(v, "value", json_real(c->value));
                json_object_set_new(v, "runs", json_integer(c->nruns));
                json_object_set_new(v, "min", json_real(c->min));
                json_object_set_new(v, "max", json_real(c->max));
                json_object_set_new(v, "pct_of_best",
                                    c->pct >= 0 ? json_real(c->pct) : json_null());
                json_object_set_new(v, "best", json_boolean(c->best));
                json_array_append_new(vals, v);
            }
            json_object_set_new(jm, "values", vals);
            json_array_append_new(metrics, jm);
        }
        json_object_set_new(t, "metrics", metrics);
        json_object_set_new(t, "rank_rule", g->rank_rule ? json_string(g->rank_rule) : json_null());
        json_object_set_new(t, "incomparable", g->note ? json_string(g->note) : json_null());
        json_object_set_new(t, "note", g->soft_note ? json_string(g->soft_note) : json_null());
        json_object_set_new(t, "warnings", g->warnings ? json_string(g->warnings) : json_null());
        if (g->service_limits || g->service_note)
            json_object_set_new(t, "service_level", service_json(g));
        json_array_append_new(tables, t);
    }
    json_object_set_new(root, "tables", tables);
    return root;
}

void cmp_print(FILE *out, const cmp_set *set, cmp_format f)
{
    switch (f) {
    case CMP_CSV:
        print_csv(out, set);
        return;
    case CMP_JSON: {
        json_t *j = cmp_to_json(set);
        json_dumpf(j, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        fputc('\n', out);
        json_decref(j);
        return;
    }
    case CMP_MARKDOWN:
        fprintf(out, "# appsim comparison\n\n");
        for (int i = 0; i < set->ngroups; i++)
            print_table(out, &set->groups[i], i, true);
        return;
    case CMP_TEXT:
        for (int i = 0; i < set->ngroups; i++)
            print_table(out, &set->groups[i], i, false);
        return;
    }
}
