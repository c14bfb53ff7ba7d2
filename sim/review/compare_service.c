/*
 * sim/review/compare_service.c: OLTP rate curves (`tpcc run --curve`, `sysbench run
 * --curve`, user steps) and their service-level throughput in compare, report and suite.
 *
 * An OLTP curve is the result's "curve" object whose points carry achieved_tps
 * (docs/result-schema.md); its service-level throughput (service_level.tps) is the
 * highest offered rate whose point was sustained and met every latency limit. Two rows
 * come from it:
 *   - "service-level TPS", higher is better; a drive none of whose points met the limits
 *     has no value (the cell is "unmet") and ranks last;
 *   - "max TPS": the saturation point's achieved TPS (curve.max_tps) of a rate curve, the
 *     highest achieved TPS of the user steps of a user-step curve.
 * Several runs of one drive give the mean of their figures; a run that met the limits at
 * no point makes the drive's figure unmet (a drive that holds the limits only sometimes
 * does not hold them), with a warning naming the run.
 *
 * A service-level figure means something only against its limits: the group's row names
 * them, and results judged against different limits are not ranked on it (the row is
 * shown, unranked, and a note lists each result's limits).
 */
#include "sim/review/review_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SL_ID "service_level.tps"
#define MAX_TPS_ID "curve.max_tps"

bool cmp_curve_is_oltp(const json_t *points)
{
    size_t i;
    json_t *pt;
    json_array_foreach((json_t *)points, i,
                       pt) if (json_object_get(pt, "achieved_tps")) return true;
    return false;
}

const json_t *cmp_oltp_curve(const json_t *doc)
{
    const json_t *c = json_object_get(doc, "curve");
    const json_t *pts = json_object_get(c, "points");
    return json_is_object(c) && json_is_array(pts) && cmp_curve_is_oltp(pts) ? c : NULL;
}

void cmp_percentile_key(double pct, char *buf, size_t len)
{
    char num[32];
    snprintf(num, sizeof num, "%g", pct);
    size_t k = 0;
    buf[k++] = 'p';
    for (const char *p = num; *p && k + 1 < len; p++)
        if (*p != '.') buf[k++] = *p;
    buf[k] = 0;
}

/* "20 ms", "1.5 ms", "5 s", "250 us": the unit that keeps the figure readable. */
static void limit_text(char *buf, size_t len, double ms)
{
    if (ms >= 1000)
        snprintf(buf, len, "%g s", ms / 1000);
    else if (ms >= 1)
        snprintf(buf, len, "%g ms", ms);
    else
        snprintf(buf, len, "%g us", ms * 1000);
}

void cmp_limit_label(const json_t *limit, char *buf, size_t len)
{
    double pct = 0, ms = 0;
    cmp_num(limit, "percentile", &pct);
    cmp_num(limit, "limit_ms", &ms);
    const char *type = cmp_str(limit, "type");
    char key[32], lim[48];
    cmp_percentile_key(pct, key, sizeof key);
    limit_text(lim, sizeof lim, ms);
    snprintf(buf, len, "%s%s%s <= %s", type ? type : "", type ? " " : "", key, lim);
}

const json_t *cmp_service_limits(const json_t *doc)
{
    const json_t *l = json_object_get(json_object_get(doc, "service_level"), "limits");
    return json_is_array(l) && json_array_size(l) ? l : NULL;
}

char *cmp_service_limits_text(const json_t *doc)
{
    const json_t *limits = cmp_service_limits(doc);
    if (!limits) return NULL;
    cmp_buf b = {0};
    size_t i;
    json_t *l;
    json_array_foreach((json_t *)limits, i, l)
    {
        char one[160];
        cmp_limit_label(l, one, sizeof one);
        cmp_buf_printf(&b, "%s%s", i ? ", " : "", one);
    }
    return b.s;
}

/* The limit of `want` (same percentile and type) in limits, or NULL. */
static const json_t *same_limit(const json_t *limits, const json_t *want)
{
    double wp = -1, p;
    cmp_num(want, "percentile", &wp);
    const char *wt = cmp_str(want, "type");
    size_t i;
    json_t *l;
    json_array_foreach((json_t *)limits, i, l)
    {
        const char *t = cmp_str(l, "type");
        if (cmp_num(l, "percentile", &p) && p == wp && (t && wt ? !strcmp(t, wt) : t == wt))
            return l;
    }
    return NULL;
}

bool cmp_service_limits_equal(const json_t *a, const json_t *b)
{
    const json_t *la = cmp_service_limits(a), *lb = cmp_service_limits(b);
    if (!la || !lb) return !la && !lb;
    if (json_array_size(la) != json_array_size(lb)) return false;
    size_t i;
    json_t *l;
    json_array_foreach((json_t *)la, i, l)
    {
        const json_t *m = same_limit(lb, l);
        double x, y;
        if (!m || !cmp_num(l, "limit_ms", &x) || !cmp_num(m, "limit_ms", &y) || x != y)
            return false;
    }
    return true;
}

/* A point that measured something: not failed, not cut short. */
static bool point_counts(const json_t *pt)
{
    return !json_is_true(json_object_get(pt, "failed")) &&
           !json_is_true(json_object_get(pt, "interrupted"));
}

bool cmp_oltp_max_tps(const json_t *curve, double *v)
{
    if (cmp_num(curve, "max_tps", v)) return true;
    const json_t *pts = json_object_get(curve, "points");
    bool have = false;
    size_t i;
    json_t *pt;
    json_array_foreach((json_t *)pts, i, pt)
    {
        double t;
        if (!point_counts(pt) || !cmp_num(pt, "achieved_tps", &t)) continue;
        if (json_is_true(json_object_get(pt, "max_rate_run"))) {
            *v = t; /* a rate curve's saturation point is its maximum by definition */
            return true;
        }
        if (!have || t > *v) *v = t;
        have = true;
    }
    return have;
}

/* One run's service-level figure: 1 with *v, 0 when no point met the limits, -1 when the
 * run has no service-level section (no limits were set). */
static int run_service_tps(const json_t *doc, double *v)
{
    const json_t *sl = json_object_get(doc, "service_level");
    if (!json_is_object(sl) || !cmp_oltp_curve(doc)) return -1;
    return cmp_num(sl, "tps", v) ? 1 : 0;
}

void cmp_service_metrics(cmp_result **runs, int n, cmp_mlist *out, char **warn)
{
    double sum = 0;
    int have = 0, unmet = 0, none = 0;
    for (int i = 0; i < n; i++) {
        double v;
        int r = run_service_tps(runs[i]->doc, &v);
        if (r > 0) sum += v, have++;
        if (r == 0) unmet++;
        if (r < 0) none++;
    }
    if (none == 0 && n > 0) {
        if (unmet && have) {
            for (int i = 0; i < n; i++) {
                double v;
                if (run_service_tps(runs[i]->doc, &v) != 0) continue;
                char msg[600];
                snprintf(msg, sizeof msg,
                         "%s: no point met the service-level limits in this run, so the "
                         "drive's service-level TPS is none",
                         runs[i]->path);
                cmp_warn_append(warn, msg);
            }
        }
        if (unmet)
            cmp_mlist_add_unmet(out, SL_ID, "service-level TPS", "tps", CMP_HIGHER);
        else
            cmp_mlist_add(out, SL_ID, "service-level TPS", "tps", CMP_HIGHER, true, sum / n);
    }
    double msum = 0;
    bool all = n > 0;
    for (int i = 0; i < n && all; i++) {
        const json_t *c = cmp_oltp_curve(runs[i]->doc);
        double v;
        all = c && cmp_oltp_max_tps(c, &v);
        if (all) msum += v;
    }
    cmp_mlist_add(out, MAX_TPS_ID, "max TPS", "tps", CMP_HIGHER, all, msum / n);
}

static int metric_at(const cmp_group *g, const char *id)
{
    for (int i = 0; i < g->nmetrics; i++)
        if (!strcmp(g->metrics[i].id, id)) return i;
    return -1;
}

/* Every result of the group with its limits, "DRIVE (FILE): LIMITS; ..." (malloc'ed). */
static char *limits_by_result(const cmp_group *g)
{
    cmp_buf b = {0};
    for (int e = 0; e < g->nentries; e++)
        for (int r = 0; r < g->entries[e].nruns; r++) {
            const cmp_result *res = g->entries[e].runs[r];
            char *t = cmp_service_limits_text(res->doc);
            cmp_buf_printf(&b, "%s%s (%s): %s", b.len ? "; " : "", g->entries[e].label, res->path,
                           t ? t : "no limits");
            free(t);
        }
    return b.s;
}

static void note_append(cmp_group *g, const char *msg)
{
    cmp_warn_append(&g->service_note, msg);
}

void cmp_service_group(cmp_group *g)
{
    int m = metric_at(g, SL_ID);
    if (m < 0) return;
    const json_t *first = g->entries[0].runs[0]->doc;
    bool same = true;
    for (int e = 0; e < g->nentries; e++)
        for (int r = 0; r < g->entries[e].nruns; r++)
            same = same && cmp_oltp_curve(g->entries[e].runs[r]->doc) &&
                   cmp_service_limits_equal(first, g->entries[e].runs[r]->doc);
    cmp_metric *mt = &g->metrics[m];
    free(mt->name);
    if (!same) {
        mt->better = CMP_NONE;
        mt->name = sim_xstrdup("service-level TPS (limits differ, not ranked)");
        char *by = limits_by_result(g);
        char *msg =
            sim_xasprintf("service-level TPS not ranked: the results were judged against different "
                          "limits (%s); run them with the same --slo to rank them on it",
                          by);
        note_append(g, msg);
        free(msg);
        free(by);
        return;
    }
    g->service_limits = cmp_service_limits_text(first);
    mt->name = sim_xasprintf("service-level TPS (%s)", g->service_limits);
    for (int e = 0; e < g->nentries; e++) {
        if (!mt->cells[e].unmet) continue;
        char msg[400];
        snprintf(msg, sizeof msg,
                 "%s: no point of its curve met %s (sustained and within the limits); it "
                 "ranks last on service-level TPS",
                 g->entries[e].label, g->service_limits);
        note_append(g, msg);
    }
}
