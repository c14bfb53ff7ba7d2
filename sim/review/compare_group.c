/*
 * sim/review/compare_group.c: from loaded results to ranked tables. Results are grouped by
 * workload and the configuration that matters (sim/review/compare_load.c decides which keys
 * matter); groups of one workload with different configurations are never ranked against
 * each other and each says why. Inside a group, the runs of one drive become one column.
 *
 * Rank rule: for OLTP curves judged against the same service-level limits, by
 * service-level TPS (a drive with no point within the limits last), ties ordered by max
 * TPS (compare_service.c); other OLTP curves by max TPS; otherwise by throughput (TPS or IOPS; for
 * curve-only results the first curve's peak IOPS); drives whose throughput is within 1 % of each
 * other, or whose run-to-run ranges overlap, are tied on it and ordered by p99 latency, then mean
 * latency. This is how the labs read paced OLTP results: fast drives reach the same offered load
 * and latency separates them.
 */
#include "sim/review/review_internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TIE_FRACTION 0.01

void cmp_result_free(cmp_result *r)
{
    free(r->path);
    free(r->label);
    free(r->drive_key);
    free(r->config_key);
    json_decref(r->doc);
}

static void group_free(cmp_group *g)
{
    for (int i = 0; i < g->nentries; i++) {
        free(g->entries[i].runs);
        sim_hist_free(g->entries[i].hist_all);
    }
    free(g->entries);
    for (int i = 0; i < g->nmetrics; i++) {
        free(g->metrics[i].id);
        free(g->metrics[i].name);
        free(g->metrics[i].unit);
        free(g->metrics[i].cells);
    }
    free(g->metrics);
    free(g->note);
    free(g->soft_note);
    free(g->rank_rule);
    free(g->warnings);
    free(g->service_limits);
    free(g->service_note);
}

void cmp_set_free(cmp_set *set)
{
    for (int i = 0; i < set->ngroups; i++)
        group_free(&set->groups[i]);
    free(set->groups);
    for (int i = 0; i < set->nresults; i++)
        cmp_result_free(&set->results[i]);
    free(set->results);
    memset(set, 0, sizeof *set);
}

/* A short distinguishing tag for two drives that would otherwise share a label: the
 * serial when the clashing results have different serials, else the target path (two
 * targets on one disk). */
static char *distinguisher(const cmp_set *set, const cmp_result *r)
{
    const json_t *t = json_object_get(r->doc, "target");
    const char *serial = cmp_find_string(t, "serial", 0);
    bool serial_tells = serial && *serial;
    for (int j = 0; serial_tells && j < set->nresults; j++) {
        const cmp_result *o = &set->results[j];
        const char *os = cmp_find_string(json_object_get(o->doc, "target"), "serial", 0);
        if (o != r && !strcmp(o->label, r->label) && strcmp(o->drive_key, r->drive_key) && os &&
            !strcmp(os, serial))
            serial_tells = false;
    }
    if (serial_tells) return sim_xstrdup(serial);
    const char *p = cmp_str(t, "path");
    if (p && *p) return sim_xstrdup(p);
    return sim_xstrdup(r->path);
}

static const char *target_path(const cmp_result *r)
{
    const char *p = cmp_str(json_object_get(r->doc, "target"), "path");
    return p && *p ? p : NULL;
}

/* Two targets on one disk (two directories, two partitions) share the disk's serial,
 * but when both ran the same workload and configuration they are two things being
 * compared, not repeated runs: every result of that disk is then told apart by its
 * target path. A disk whose results each used one path per configuration keeps one
 * column (and one colour) whatever directory each workload ran in. */
static void split_targets_on_one_disk(cmp_set *set)
{
    int n = set->nresults;
    bool split[n > 0 ? n : 1];
    for (int i = 0; i < n; i++)
        split[i] = false;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const cmp_result *a = &set->results[i], *b = &set->results[j];
            const char *pa = target_path(a), *pb = target_path(b);
            if (strncmp(a->drive_key, "serial:", 7) || strcmp(a->drive_key, b->drive_key) ||
                strcmp(a->workload, b->workload) || strcmp(a->config_key, b->config_key) || !pa ||
                !pb || !strcmp(pa, pb))
                continue;
            for (int k = 0; k < n; k++)
                if (!strcmp(set->results[k].drive_key, a->drive_key)) split[k] = true;
        }
    for (int i = 0; i < n; i++) {
        cmp_result *r = &set->results[i];
        if (!split[i]) continue;
        const char *p = target_path(r);
        char *k = sim_xasprintf("%s|path:%s", r->drive_key, p ? p : r->path);
        free(r->drive_key);
        r->drive_key = k;
    }
}

static void disambiguate_labels(cmp_set *set)
{
    int n = set->nresults;
    bool clash[n > 0 ? n : 1];
    for (int i = 0; i < n; i++) {
        cmp_result *a = &set->results[i];
        clash[i] = false;
        for (int j = 0; j < n; j++) {
            cmp_result *b = &set->results[j];
            if (j != i && !strcmp(a->label, b->label) && strcmp(a->drive_key, b->drive_key))
                clash[i] = true;
        }
    }
    char *tags[n > 0 ? n : 1];
    for (int i = 0; i < n; i++)
        tags[i] = clash[i] && strncmp(set->results[i].drive_key, "label:", 6)
                      ? distinguisher(set, &set->results[i])
                      : NULL;
    for (int i = 0; i < n; i++) {
        if (!tags[i]) continue;
        cmp_result *a = &set->results[i];
        char *l = sim_xasprintf("%s [%s]", a->label, tags[i]);
        free(tags[i]);
        free(a->label);
        a->label = l;
    }
}

static void describe_value(char *buf, size_t len, const json_t *v)
{
    if (!v) {
        snprintf(buf, len, "(not set)");
        return;
    }
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(10));
    snprintf(buf, len, "%s", s ? s : "?");
    free(s);
}

/* "scale 100 vs 10, buffer ..." for the keys (of kind soft or hard) that differ. */
static char *config_diff(const json_t *a, const json_t *b, bool soft)
{
    cmp_buf out = {0};
    json_t *keys = json_object();
    const char *k;
    json_t *v;
    if (json_is_object(a))
        json_object_foreach((json_t *)a, k, v) json_object_set_new(keys, k, json_true());
    if (json_is_object(b))
        json_object_foreach((json_t *)b, k, v) json_object_set_new(keys, k, json_true());
    json_object_foreach(keys, k, v)
    {
        if (cmp_config_key_ignored(k) || cmp_config_key_soft(k) != soft) continue;
        const json_t *va = json_object_get(a, k), *vb = json_object_get(b, k);
        if (va && vb && json_equal((json_t *)va, (json_t *)vb)) continue;
        char sa[128], sb[128];
        describe_value(sa, sizeof sa, va);
        describe_value(sb, sizeof sb, vb);
        cmp_buf_printf(&out, "%s%s %s vs %s", out.len ? ", " : "", k, sa, sb);
    }
    json_decref(keys);
    return out.s;
}

static int find_metric(const cmp_mlist *l, const char *id)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->m[i].id, id)) return i;
    return -1;
}

static int group_metric(const cmp_group *g, const char *id)
{
    for (int i = 0; i < g->nmetrics; i++)
        if (!strcmp(g->metrics[i].id, id)) return i;
    return -1;
}

static void build_rows(cmp_group *g, char **warn)
{
    int ne = g->nentries;
    cmp_mlist comb[ne];
    int cap = 0;
    for (int e = 0; e < ne; e++) {
        memset(&comb[e], 0, sizeof comb[e]);
        cmp_metrics_for_runs(g->entries[e].runs, g->entries[e].nruns, &comb[e], warn);
        g->entries[e].hist_all = cmp_merged_hist(g->entries[e].runs, g->entries[e].nruns, "all");
    }
    for (int e = 0; e < ne; e++) {
        for (int i = 0; i < comb[e].n; i++) {
            if (group_metric(g, comb[e].m[i].id) >= 0) continue;
            if (g->nmetrics == cap) {
                cap = cap ? cap * 2 : 32;
                g->metrics = sim_xrealloc(g->metrics, (size_t)cap * sizeof *g->metrics);
            }
            cmp_metric *m = &g->metrics[g->nmetrics++];
            m->id = sim_xstrdup(comb[e].m[i].id);
            m->name = sim_xstrdup(comb[e].m[i].name);
            m->unit = sim_xstrdup(comb[e].m[i].unit);
            m->better = comb[e].m[i].better;
            m->cells = sim_xcalloc((size_t)ne, sizeof *m->cells);
        }
    }
    for (int e = 0; e < ne; e++) {
        cmp_entry *en = &g->entries[e];
        for (int r = 0; r < en->nruns; r++) {
            cmp_mlist one = {0};
            cmp_metrics_for_runs(&en->runs[r], 1, &one, NULL);
            for (int i = 0; i < one.n; i++) {
                int gi = group_metric(g, one.m[i].id);
                if (gi < 0 || one.m[i].cells[0].unmet) continue;
                cmp_cell *c = &g->metrics[gi].cells[e];
                double v = one.m[i].cells[0].value;
                if (c->nruns == 0 || v < c->min) c->min = v;
                if (c->nruns == 0 || v > c->max) c->max = v;
                c->nruns++;
            }
            cmp_mlist_free(&one);
        }
        for (int gi = 0; gi < g->nmetrics; gi++) {
            int i = find_metric(&comb[e], g->metrics[gi].id);
            if (i < 0) continue;
            cmp_cell *c = &g->metrics[gi].cells[e];
            if (comb[e].m[i].cells[0].unmet) {
                c->unmet = true; /* no value: it ranks last, the group's note says why */
                c->nruns = en->nruns;
                continue;
            }
            c->have = true;
            c->value = comb[e].m[i].cells[0].value;
            if (c->nruns == 0) {
                c->min = c->max = c->value;
                c->nruns = 1;
            }
        }
        cmp_mlist_free(&comb[e]);
    }
}

static void mark_best(cmp_group *g)
{
    for (int i = 0; i < g->nmetrics; i++) {
        cmp_metric *m = &g->metrics[i];
        bool any = false;
        double best = 0;
        for (int e = 0; e < g->nentries; e++) {
            cmp_cell *c = &m->cells[e];
            c->pct = -1;
            c->best = false;
            if (!c->have || m->better == CMP_NONE) continue;
            if (!any || (m->better == CMP_HIGHER ? c->value > best : c->value < best))
                best = c->value;
            any = true;
        }
        if (!any) continue;
        for (int e = 0; e < g->nentries; e++) {
            cmp_cell *c = &m->cells[e];
            if (!c->have) continue;
            c->best = c->value == best;
            if (best != 0) c->pct = 100.0 * c->value / best;
        }
    }
}

/* The primary metric and, for drives tied on it, the metrics that order them (each in
 * its own direction); -1 = absent. */
typedef struct rank_ctx {
    const cmp_group *g;
    int primary;
    int tiebreak[2];
} rank_ctx;

static bool tied(const cmp_cell *a, const cmp_cell *b)
{
    double hi = fmax(fabs(a->value), fabs(b->value));
    if (hi == 0 || fabs(a->value - b->value) <= TIE_FRACTION * hi) return true;
    /* Within each other's run-to-run range: the difference is within noise. */
    return a->nruns > 1 && b->nruns > 1 && a->min <= b->max && b->min <= a->max;
}

/* < 0 when entry a ranks before entry b. */
static int rank_cmp(const rank_ctx *rc, int a, int b)
{
    const cmp_metric *pm = &rc->g->metrics[rc->primary];
    const cmp_cell *ca = &pm->cells[a], *cb = &pm->cells[b];
    if (ca->have != cb->have) return ca->have ? -1 : 1;
    if (ca->have && !tied(ca, cb)) return ca->value > cb->value ? -1 : 1;
    for (int k = 0; k < 2; k++) {
        if (rc->tiebreak[k] < 0) continue;
        const cmp_metric *tm = &rc->g->metrics[rc->tiebreak[k]];
        const cmp_cell *la = &tm->cells[a], *lb = &tm->cells[b];
        if (la->have && lb->have && la->value != lb->value)
            return (tm->better == CMP_HIGHER) == (la->value > lb->value) ? -1 : 1;
    }
    if (ca->have && ca->value != cb->value) return ca->value > cb->value ? -1 : 1;
    return 0;
}

/* The primary metric and tie-breakers: an OLTP curve's service-level TPS when its
 * results share their limits (cmp_service_group left it ranked), ties ordered by max TPS;
 * else throughput, ties ordered by latency. */
static rank_ctx rank_metrics(const cmp_group *g)
{
    int sl = group_metric(g, "service_level.tps");
    if (sl >= 0 && g->metrics[sl].better == CMP_HIGHER)
        return (rank_ctx){g, sl, {group_metric(g, "curve.max_tps"), -1}};
    /* An OLTP curve's TPS row is its point 0's: for user steps the first step, so its
     * maximum is the throughput figure. */
    int max_tps = group_metric(g, "curve.max_tps");
    rank_ctx rc = {g,
                   max_tps >= 0 ? max_tps : group_metric(g, "rate"),
                   {group_metric(g, "lat.p99"), group_metric(g, "lat.mean")}};
    if (rc.primary < 0) {
        for (int i = 0; i < g->nmetrics; i++) {
            const char *id = g->metrics[i].id;
            size_t n = strlen(id);
            if (!strncmp(id, "curve.", 6) && n > 5 && !strcmp(id + n - 5, ".peak")) {
                rc.primary = i;
                char base[300];
                snprintf(base, sizeof base, "%.*slat.p99", (int)(n - 4), id);
                rc.tiebreak[0] = group_metric(g, base);
                snprintf(base, sizeof base, "%.*slat.mean", (int)(n - 4), id);
                rc.tiebreak[1] = group_metric(g, base);
                break;
            }
        }
    }
    return rc;
}

static void rank_group(cmp_group *g)
{
    rank_ctx rc = rank_metrics(g);
    if (rc.primary < 0) {
        g->rank_rule = sim_xstrdup("not ranked: the results have no throughput figure");
        return;
    }
    int ne = g->nentries;
    int order[ne];
    for (int i = 0; i < ne; i++)
        order[i] = i;
    for (int i = 1; i < ne; i++) {
        int x = order[i], j = i - 1;
        while (j >= 0 && rank_cmp(&rc, x, order[j]) < 0) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = x;
    }
    /* Put the columns in rank order (entries and every row's cells). */
    cmp_entry *ents = sim_xmalloc((size_t)ne * sizeof *ents);
    for (int i = 0; i < ne; i++) {
        ents[i] = g->entries[order[i]];
        ents[i].rank = i + 1;
    }
    memcpy(g->entries, ents, (size_t)ne * sizeof *ents);
    free(ents);
    cmp_cell tmp[ne];
    for (int m = 0; m < g->nmetrics; m++) {
        for (int i = 0; i < ne; i++)
            tmp[i] = g->metrics[m].cells[order[i]];
        memcpy(g->metrics[m].cells, tmp, (size_t)ne * sizeof *tmp);
    }
    bool service = !strcmp(g->metrics[rc.primary].id, "service_level.tps");
    const char *then = rc.tiebreak[0] >= 0 ? "p99 latency, then mean latency" : "mean latency";
    if (service) then = rc.tiebreak[0] >= 0 ? "max TPS" : "their order in the input";
    g->rank_rule = sim_xasprintf(
        "ranked by %s; drives within %.0f %% of each other or within each other's run-to-run "
        "range are ordered by %s",
        service ? "service-level TPS, the highest offered rate a drive sustained within the "
                  "limits (a drive with no such point ranks last)"
                : g->metrics[rc.primary].name,
        TIE_FRACTION * 100, then);
}

/* Soft settings (duration, warm-up) that differ inside a group. */
static void soft_differences(cmp_group *g)
{
    cmp_buf out = {0};
    const json_t *first = g->entries[0].runs[0]->config;
    for (int e = 0; e < g->nentries; e++)
        for (int r = 0; r < g->entries[e].nruns; r++) {
            char *d = config_diff(first, g->entries[e].runs[r]->config, true);
            if (d && *d && (!out.s || !strstr(out.s, d)))
                cmp_buf_printf(&out, "%s%s (%s)", out.len ? "; " : "", d,
                               g->entries[e].runs[r]->path);
            free(d);
        }
    if (out.s) g->soft_note = sim_xasprintf("measured differently but ranked anyway: %s", out.s);
    cmp_buf_free(&out);
}

static void interrupted_warning(cmp_group *g)
{
    for (int e = 0; e < g->nentries; e++)
        for (int r = 0; r < g->entries[e].nruns; r++)
            if (g->entries[e].runs[r]->interrupted) {
                char *msg = sim_xasprintf(
                    "%s ended early, interrupted or stopped (its measured phase is shorter)",
                    g->entries[e].runs[r]->path);
                if (g->warnings) {
                    char *w = sim_xasprintf("%s; %s", g->warnings, msg);
                    free(g->warnings);
                    free(msg);
                    g->warnings = w;
                } else {
                    g->warnings = msg;
                }
            }
}

static int add_group(cmp_set *set, cmp_result *r)
{
    for (int i = 0; i < set->ngroups; i++) {
        cmp_group *g = &set->groups[i];
        const cmp_result *f = g->entries[0].runs[0];
        if (strcmp(f->workload, r->workload) || strcmp(f->config_key, r->config_key)) continue;
        for (int e = 0; e < g->nentries; e++) {
            cmp_entry *en = &g->entries[e];
            if (!strcmp(en->runs[0]->drive_key, r->drive_key)) {
                en->runs = sim_xrealloc(en->runs, (size_t)(en->nruns + 1) * sizeof *en->runs);
                en->runs[en->nruns++] = r;
                return i;
            }
        }
        g->entries = sim_xrealloc(g->entries, (size_t)(g->nentries + 1) * sizeof *g->entries);
        cmp_entry *en = &g->entries[g->nentries++];
        memset(en, 0, sizeof *en);
        en->label = r->label;
        en->runs = sim_xmalloc(sizeof *en->runs);
        en->runs[0] = r;
        en->nruns = 1;
        return i;
    }
    set->groups = sim_xrealloc(set->groups, (size_t)(set->ngroups + 1) * sizeof *set->groups);
    cmp_group *g = &set->groups[set->ngroups++];
    memset(g, 0, sizeof *g);
    g->workload = r->workload;
    g->config = r->config;
    g->entries = sim_xcalloc(1, sizeof *g->entries);
    g->entries[0].label = r->label;
    g->entries[0].runs = sim_xmalloc(sizeof *g->entries[0].runs);
    g->entries[0].runs[0] = r;
    g->entries[0].nruns = 1;
    g->nentries = 1;
    return set->ngroups - 1;
}

/* Groups of the same workload: each one after the first says how it differs. */
static void incomparable_notes(cmp_set *set)
{
    for (int i = 0; i < set->ngroups; i++) {
        cmp_group *g = &set->groups[i];
        for (int j = 0; j < i; j++) {
            cmp_group *f = &set->groups[j];
            if (strcmp(f->workload, g->workload)) continue;
            char *d = config_diff(f->config, g->config, false);
            g->note = sim_xasprintf(
                "not ranked against the %s results of table %d (%s): the configuration "
                "differs in %s",
                g->workload, j + 1, f->entries[0].label, d && *d ? d : "settings");
            free(d);
            break;
        }
    }
}

/* Tables of one workload next to each other, in order of first appearance. */
static void order_groups(cmp_set *set)
{
    for (int i = 1; i < set->ngroups; i++) {
        cmp_group x = set->groups[i];
        int first = -1;
        for (int j = 0; j < i; j++)
            if (!strcmp(set->groups[j].workload, x.workload)) first = j;
        if (first < 0 || first == i - 1) continue;
        memmove(&set->groups[first + 2], &set->groups[first + 1],
                (size_t)(i - first - 1) * sizeof x);
        set->groups[first + 1] = x;
    }
}

/* Appends the results file i stands for to set: itself, or with `ranks` its ranks as
 * drives (compare_ranks.c): SIM_OK, CMP_LOAD_SKIPPED (a suite's state) or SIM_ERR with err. */
static int load_one(cmp_set *set, int *cap, const char *path, const char *label, bool ranks,
                    cmp_series series, char *err, size_t errlen)
{
    cmp_result r;
    int rc = cmp_load_series(&r, path, series, err, errlen);
    if (rc) return rc;
    if (label && *label) {
        free(r.label);
        free(r.drive_key);
        r.label = sim_xstrdup(label);
        r.drive_key = sim_xasprintf("label:%s", label);
    }
    cmp_result *add = &r;
    int nadd = 1;
    if (ranks && cmp_rank_views(&r, label && *label ? label : NULL, &add, &nadd, err, errlen)) {
        cmp_result_free(&r);
        return SIM_ERR;
    }
    if (set->nresults + nadd > *cap) {
        *cap = (set->nresults + nadd) * 2;
        set->results = sim_xrealloc(set->results, (size_t)*cap * sizeof *set->results);
    }
    memcpy(&set->results[set->nresults], add, (size_t)nadd * sizeof *add);
    set->nresults += nadd;
    if (add != &r) {
        cmp_result_free(&r);
        free(add);
    }
    return SIM_OK;
}

int cmp_build(cmp_set *set, char **paths, int npaths, char **labels, int nlabels, char *err,
              size_t errlen)
{
    return cmp_build_ranks(set, paths, npaths, labels, nlabels, false, CMP_SERIES_CHARTED, err,
                           errlen);
}

int cmp_build_ranks(cmp_set *set, char **paths, int npaths, char **labels, int nlabels, bool ranks,
                    cmp_series series, char *err, size_t errlen)
{
    memset(set, 0, sizeof *set);
    if (npaths <= 0) {
        snprintf(err, errlen, "no result files given");
        return SIM_ERR;
    }
    /* The same file twice would be counted as two runs. */
    for (int i = 0; i < npaths; i++) {
        char *ri = realpath(paths[i], NULL);
        for (int j = 0; ri && j < i; j++) {
            char *rj = realpath(paths[j], NULL);
            bool same = rj && !strcmp(ri, rj);
            free(rj);
            if (same) {
                snprintf(err, errlen, "%s: given twice (as %s too); give each result once",
                         paths[i], paths[j]);
                free(ri);
                return SIM_ERR;
            }
        }
        free(ri);
    }
    int cap = npaths;
    set->results = sim_xcalloc((size_t)npaths, sizeof *set->results);
    for (int i = 0; i < npaths; i++) {
        int rc = load_one(set, &cap, paths[i], i < nlabels ? labels[i] : NULL, ranks, series, err,
                          errlen);
        if (rc == CMP_LOAD_SKIPPED) {
            sim_info("%s", err);
            continue;
        }
        if (rc) {
            cmp_set_free(set);
            return SIM_ERR;
        }
    }
    if (!set->nresults) {
        snprintf(err, errlen, "no result files among the %d given (only suite state)", npaths);
        cmp_set_free(set);
        return SIM_ERR;
    }
    split_targets_on_one_disk(set);
    disambiguate_labels(set);
    for (int i = 0; i < set->nresults; i++)
        add_group(set, &set->results[i]);
    order_groups(set);
    incomparable_notes(set);
    for (int i = 0; i < set->ngroups; i++) {
        cmp_group *g = &set->groups[i];
        build_rows(g, &g->warnings);
        cmp_service_group(g);
        mark_best(g);
        rank_group(g);
        soft_differences(g);
        interrupted_warning(g);
    }
    return SIM_OK;
}
