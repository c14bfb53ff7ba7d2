/*
 * sim/review/compare_metrics.c: the metrics of one drive's runs in one configuration, combined.
 *
 * Combination rules (the measurement rules of the project):
 *   - throughput of several runs is their total count over their total measured seconds;
 *   - latency mean and percentiles come from the runs' merged histograms, never from
 *     averaged percentiles; without histograms a single run's summary is used, and for
 *     several runs only the count-weighted mean is given (percentiles stay empty and a
 *     warning says why);
 *   - an OLTP curve gives its service-level TPS and max TPS (compare_service.c);
 *   - any other curve's peak is vdbench's (the highest rate of a point that kept up with its
 *     arrivals, see peak_point) in each run; several runs give the mean
 *     of their peaks, and the latency at the peak from the merged peak-point histograms.
 */
#include "sim/review/review_internal.h"

#include <stdlib.h>
#include <string.h>

static void add_metric(cmp_mlist *l, const char *id, const char *name, const char *unit,
                       cmp_better better, bool have, double value)
{
    if (!have) return;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->m = sim_xrealloc(l->m, (size_t)l->cap * sizeof *l->m);
    }
    cmp_metric *m = &l->m[l->n++];
    memset(m, 0, sizeof *m);
    m->id = sim_xstrdup(id);
    m->name = sim_xstrdup(name);
    m->unit = sim_xstrdup(unit);
    m->better = better;
    m->cells = sim_xcalloc(1, sizeof *m->cells);
    m->cells[0].have = true;
    m->cells[0].value = value;
    m->cells[0].min = m->cells[0].max = value;
    m->cells[0].nruns = 1;
}

void cmp_mlist_free(cmp_mlist *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->m[i].id);
        free(l->m[i].name);
        free(l->m[i].unit);
        free(l->m[i].cells);
    }
    free(l->m);
    memset(l, 0, sizeof *l);
}

static sim_hist *hist_from(const json_t *hists, const char *key)
{
    const json_t *j = json_object_get(hists, key);
    if (!j) return NULL;
    char err[256];
    return sim_hist_from_json(j, err, sizeof err);
}

sim_hist *cmp_hist_of(const json_t *doc, const char *key)
{
    return hist_from(json_object_get(doc, "histograms"), key);
}

sim_hist *cmp_merged_hist(cmp_result **runs, int n, const char *key)
{
    sim_hist *acc = NULL;
    for (int i = 0; i < n; i++) {
        sim_hist *h = cmp_hist_of(runs[i]->doc, key);
        if (!h) {
            sim_hist_free(acc);
            return NULL;
        }
        if (!acc) {
            acc = h;
        } else {
            sim_hist_merge(acc, h);
            sim_hist_free(h);
        }
    }
    return acc;
}

static void append_warn(char **warn, const char *msg)
{
    if (!warn) return;
    if (*warn && strstr(*warn, msg)) return;
    size_t a = *warn ? strlen(*warn) : 0, b = strlen(msg);
    char *p = sim_xrealloc(*warn, a + b + 3);
    if (a) memcpy(p + a, "; ", 2), a += 2;
    memcpy(p + a, msg, b + 1);
    *warn = p;
}

void cmp_mlist_add(cmp_mlist *l, const char *id, const char *name, const char *unit,
                   cmp_better better, bool have, double value)
{
    add_metric(l, id, name, unit, better, have, value);
}

void cmp_mlist_add_unmet(cmp_mlist *l, const char *id, const char *name, const char *unit,
                         cmp_better better)
{
    add_metric(l, id, name, unit, better, true, 0);
    cmp_cell *c = &l->m[l->n - 1].cells[0];
    c->have = false;
    c->unmet = true;
}

void cmp_warn_append(char **warn, const char *msg)
{
    append_warn(warn, msg);
}

typedef struct lat_keys {
    const char *id, *name, *json;
    double pct; /* 0 = mean */
} lat_keys;

static const lat_keys lat_rows[] = {
    {"mean", "mean", "mean_us", 0},      {"p50", "p50", "p50_us", 50},
    {"p95", "p95", "p95_us", 95},        {"p99", "p99", "p99_us", 99},
    {"p99.9", "p99.9", "p999_us", 99.9},
};
static const int nlat_rows = (int)(sizeof lat_rows / sizeof lat_rows[0]);

/* Latency rows from: a merged histogram (hist), or one run's summary (lat, when n == 1),
 * or the count-weighted mean of several summaries (lats[], counts[]). */
static void latency_metrics(cmp_mlist *l, const char *idp, const char *namep, sim_hist *hist,
                            const json_t *const *lats, const double *counts, int n, bool full,
                            char **warn, const char *what)
{
    char id[256], name[256];
    /* No samples, no latency: a type that never ran must not look like the fastest. */
    if (hist && sim_hist_count(hist) == 0) return;
    if (!hist) {
        bool all_zero = n > 0; /* every run says it had no sample (-1 = not said) */
        for (int i = 0; i < n; i++) {
            double c;
            if (!cmp_num(lats[i], "count", &c)) c = counts[i];
            all_zero = all_zero && c == 0;
        }
        if (all_zero) return;
    }
    for (int r = 0; r < nlat_rows; r++) {
        if (!full && (r == 1 || r == 4)) continue; /* per-type tables keep to mean, p95, p99 */
        bool have = false;
        double v = 0;
        if (hist && sim_hist_count(hist) > 0) {
            have = true;
            v = lat_rows[r].pct == 0 ? sim_hist_mean(hist) / 1e3
                                     : (double)sim_hist_percentile(hist, lat_rows[r].pct) / 1e3;
        } else if (n == 1) {
            have = cmp_num(lats[0], lat_rows[r].json, &v);
        } else if (lat_rows[r].pct == 0) {
            double sum = 0, cnt = 0;
            have = true;
            for (int i = 0; i < n; i++) {
                double m;
                if (!cmp_num(lats[i], "mean_us", &m) || counts[i] <= 0) {
                    have = false;
                    break;
                }
                sum += m * counts[i];
                cnt += counts[i];
            }
            if (have && cnt > 0)
                v = sum / cnt;
            else
                have = false;
        } else {
            char msg[300];
            snprintf(msg, sizeof msg,
                     "%s: percentiles of combined runs need the runs' histograms, which "
                     "some results lack",
                     what);
            append_warn(warn, msg);
        }
        snprintf(id, sizeof id, "%slat.%s", idp, lat_rows[r].id);
        snprintf(name, sizeof name, "%s%s latency", namep, lat_rows[r].name);
        add_metric(l, id, name, "us", CMP_LOWER, have, v);
    }
}

static const char *unit_of(const json_t *doc)
{
    const char *u = cmp_str(json_object_get(doc, "summary"), "unit");
    return u ? u : "tps";
}

static void summary_metrics(cmp_result **runs, int n, cmp_mlist *out, char **warn)
{
    const json_t *first = json_object_get(runs[0]->doc, "summary");
    if (!first) return;
    const char *unit = unit_of(runs[0]->doc);
    double count = 0, secs = 0, rate_sum = 0, errors = 0;
    bool by_count = true, have_rate = true, have_err = true;
    const json_t *lats[n];
    double counts[n];
    for (int i = 0; i < n; i++) {
        const json_t *s = json_object_get(runs[i]->doc, "summary");
        double c, t, r, e;
        if (cmp_num(s, "count", &c) && cmp_num(s, "seconds", &t) && t > 0) {
            count += c;
            secs += t;
        } else {
            by_count = false;
        }
        if (cmp_num(s, unit, &r))
            rate_sum += r;
        else
            have_rate = false;
        if (cmp_num(s, "errors", &e))
            errors += e;
        else
            have_err = false;
        lats[i] = json_object_get(s, "latency_us");
        counts[i] = cmp_num(s, "count", &c) ? c : -1;
    }
    bool have = by_count || have_rate;
    double rate = by_count ? count / secs : rate_sum / n;
    char name[64];
    snprintf(name, sizeof name, "%s", !strcmp(unit, "iops") ? "IOPS" : "TPS");
    add_metric(out, "rate", name, unit, CMP_HIGHER, have, rate);
    sim_hist *h = cmp_merged_hist(runs, n, "all");
    latency_metrics(out, "", "", h, lats, counts, n, true, warn, "overall latency");
    sim_hist_free(h);
    add_metric(out, "errors", "errors", "", CMP_NONE, have_err, errors);
}

static void type_metrics(cmp_result **runs, int n, cmp_mlist *out, char **warn)
{
    const json_t *pt = json_object_get(runs[0]->doc, "per_type");
    if (!json_is_object(pt)) return;
    const char *type;
    json_t *tv;
    json_object_foreach((json_t *)pt, type, tv)
    {
        double count = 0, secs = 0, rate_sum = 0;
        bool by_count = true, have_rate = true, all = true;
        const json_t *lats[n];
        double counts[n];
        for (int i = 0; i < n; i++) {
            const json_t *t = json_object_get(json_object_get(runs[i]->doc, "per_type"), type);
            if (!t) {
                all = false;
                break;
            }
            double c, s, r;
            if (cmp_num(t, "count", &c) &&
                cmp_num(json_object_get(runs[i]->doc, "summary"), "seconds", &s) && s > 0) {
                count += c;
                secs += s;
            } else {
                by_count = false;
            }
            if (cmp_num(t, "rate", &r))
                rate_sum += r;
            else
                have_rate = false;
            lats[i] = json_object_get(t, "latency_us");
            counts[i] = cmp_num(t, "count", &c) ? c : -1;
        }
        if (!all) continue;
        char id[256], name[256];
        snprintf(id, sizeof id, "type.%s.rate", type);
        snprintf(name, sizeof name, "%s rate", type);
        add_metric(out, id, name, "/s", CMP_HIGHER, by_count || have_rate,
                   by_count ? count / secs : rate_sum / n);
        snprintf(id, sizeof id, "type.%s.", type);
        snprintf(name, sizeof name, "%s ", type);
        sim_hist *h = cmp_merged_hist(runs, n, type);
        char what[200];
        snprintf(what, sizeof what, "%s latency", type);
        latency_metrics(out, id, name, h, lats, counts, n, false, warn, what);
        sim_hist_free(h);
    }
}

/* Block-layer figures normalized per transaction (device_io.per_unit): raw totals
 * depend on the run length and are not compared. */
static const json_t *per_unit(const json_t *doc)
{
    const json_t *pu = json_object_get(json_object_get(doc, "device_io"), "per_unit");
    return json_is_object(pu) ? pu : NULL;
}

static void device_metrics(cmp_result **runs, int n, cmp_mlist *out)
{
    const json_t *dev = per_unit(runs[0]->doc);
    if (!dev) return;
    const char *unit = unit_of(runs[0]->doc);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)dev, key, v)
    {
        if (!json_is_number(v) || !strcmp(key, "units"))
            continue; /* "units" is the divisor itself */
        double sum = 0, w = 0;
        bool have = true;
        for (int i = 0; i < n; i++) {
            double x, c;
            if (!cmp_num(per_unit(runs[i]->doc), key, &x)) {
                have = false;
                break;
            }
            if (!cmp_num(json_object_get(runs[i]->doc, "summary"), "count", &c) || c <= 0) c = 1;
            sum += x * c;
            w += c;
        }
        char id[256], name[256];
        snprintf(id, sizeof id, "dev.%s", key);
        /* Latencies are per device operation already; counts are per unit of work. */
        bool lat = strstr(key, "latency") || strstr(key, "_us") || strstr(key, "_ms");
        if (lat)
            snprintf(name, sizeof name, "device %s", key);
        else
            snprintf(name, sizeof name, "device %s per %s", key,
                     !strcmp(unit, "iops") ? "I/O" : "transaction");
        for (char *p = name; *p; p++)
            if (*p == '_') *p = ' ';
        add_metric(out, id, name, "", lat ? CMP_LOWER : CMP_NONE, have && w > 0, sum / w);
    }
}

/* The drive's own latency per operation as the block layer saw it (*_latency_avg_us):
 * comparable across runs of any length. */
static void device_latency_metrics(cmp_result **runs, int n, cmp_mlist *out)
{
    const json_t *dev = json_object_get(runs[0]->doc, "device_io");
    if (!json_is_object(dev)) return;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)dev, key, v)
    {
        size_t kl = strlen(key);
        if (!json_is_number(v) || kl < 15 || strcmp(key + kl - 15, "_latency_avg_us")) continue;
        /* Weight each run by its operations of that kind when known. */
        char opkey[64];
        snprintf(opkey, sizeof opkey, "%.*ss", (int)(kl - 15), key);
        double sum = 0, w = 0;
        bool have = true;
        for (int i = 0; i < n; i++) {
            const json_t *d = json_object_get(runs[i]->doc, "device_io");
            double x, c;
            if (!cmp_num(d, key, &x)) {
                have = false;
                break;
            }
            if (!cmp_num(d, opkey, &c) || c <= 0) c = 1;
            sum += x * c;
            w += c;
        }
        char id[128], name[128];
        snprintf(id, sizeof id, "dev.%s", key);
        snprintf(name, sizeof name, "device %.*s latency, average", (int)(kl - 15), key);
        add_metric(out, id, name, "us", CMP_LOWER, have && w > 0, sum / w);
    }
}

const json_t *cmp_curve_named(const json_t *doc, const char *name)
{
    const json_t *cv[16];
    char *cn[16];
    int nc = cmp_find_curves(doc, cv, cn, 16);
    const json_t *found = NULL;
    for (int i = 0; i < nc; i++) {
        if (!strcmp(cn[i], name)) found = cv[i];
        free(cn[i]);
    }
    return found;
}

/* vdbench's peak: the highest rate among the controlled points (fraction > 0) that kept
 * up with their arrivals ("saturated": false), so an overload point, whose rate is the
 * drive's ceiling with a queue behind it, is never the peak. When the points say whether
 * they kept up and none did, the maximum-rate run (as replay and vdi report it). Curves
 * that do not say (older results): the highest-rate point. */
static const json_t *peak_point(const json_t *curve)
{
    const json_t *best = NULL, *kept = NULL, *max_run = NULL;
    double bestv = -1, keptv = -1;
    bool told = false;
    size_t i;
    json_t *pt;
    json_array_foreach((json_t *)curve, i, pt)
    {
        double v, f;
        if (!cmp_point_rate(pt, &v)) continue;
        if (v > bestv) {
            bestv = v;
            best = pt;
        }
        bool controlled = cmp_num(pt, "fraction", &f) && f > 0 &&
                          !json_is_true(json_object_get(pt, "max_rate_run"));
        if (!controlled && !max_run) max_run = pt;
        const json_t *sat = json_object_get(pt, "saturated");
        told = told || json_is_boolean(sat);
        if (json_is_false(sat) && controlled && v > keptv) {
            keptv = v;
            kept = pt;
        }
    }
    if (kept) return kept;
    return told && max_run ? max_run : best;
}

static void curve_metrics(cmp_result **runs, int n, cmp_mlist *out, char **warn)
{
    const json_t *cv[16];
    char *cn[16];
    int nc = cmp_find_curves(runs[0]->doc, cv, cn, 16);
    for (int c = 0; c < nc; c++) {
        /* An OLTP curve's figures are its own rows (compare_service.c), not an I/O peak. */
        if (cmp_curve_is_oltp(cv[c])) continue;
        const json_t *peaks[n];
        double counts[n];
        const json_t *lats[n];
        double sum = 0;
        bool ok = true;
        sim_hist *merged = NULL;
        bool hist_ok = true;
        for (int i = 0; i < n && ok; i++) {
            const json_t *curve = i == 0 ? cv[c] : cmp_curve_named(runs[i]->doc, cn[c]);
            peaks[i] = curve ? peak_point(curve) : NULL;
            double v;
            if (!peaks[i] || !cmp_point_rate(peaks[i], &v)) {
                ok = false;
                break;
            }
            sum += v;
            lats[i] = cmp_point_latency(peaks[i]);
            double cnt = -1;
            if (!cmp_num(peaks[i], "count", &cnt) && !cmp_num(lats[i], "count", &cnt))
                cmp_num(json_object_get(json_object_get(peaks[i], "run"), "summary"), "count",
                        &cnt);
            counts[i] = cnt;
            sim_hist *h = hist_ok ? hist_from(cmp_point_histograms(peaks[i]), "all") : NULL;
            if (!h) {
                hist_ok = false;
                sim_hist_free(merged);
                merged = NULL;
            } else if (!merged) {
                merged = h;
            } else {
                sim_hist_merge(merged, h);
                sim_hist_free(h);
            }
        }
        if (ok) {
            char id[300], name[300];
            const char *label = strcmp(cn[c], "curve") ? cn[c] : "curve";
            snprintf(id, sizeof id, "curve.%s.peak", cn[c]);
            snprintf(name, sizeof name, "%s peak IOPS", label);
            add_metric(out, id, name, "iops", CMP_HIGHER, true, sum / n);
            snprintf(id, sizeof id, "curve.%s.", cn[c]);
            snprintf(name, sizeof name, "%s at peak: ", label);
            char what[300];
            snprintf(what, sizeof what, "%s latency at peak", label);
            bool all_lats = true;
            for (int i = 0; i < n; i++)
                all_lats = all_lats && lats[i];
            if (merged || all_lats)
                latency_metrics(out, id, name, merged, lats, counts, n, false, warn, what);
        }
        sim_hist_free(merged);
    }
    for (int c = 0; c < nc; c++)
        free(cn[c]);
}

void cmp_metrics_for_runs(cmp_result **runs, int n, cmp_mlist *out, char **warn)
{
    cmp_service_metrics(runs, n, out, warn); /* the top line of an OLTP curve, first */
    summary_metrics(runs, n, out, warn);
    type_metrics(runs, n, out, warn);
    device_metrics(runs, n, out);
    device_latency_metrics(runs, n, out);
    cmp_foreign_metrics(runs, n, out, warn);
    curve_metrics(runs, n, out, warn);
}
