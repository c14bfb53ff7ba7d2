/*
 * oltp/oltp_curve.c: the curve driver tpcc and sysbench share (oltp.h, "Curves"). Each
 * point is one run of the workload's (run_point); the driver decides the points,
 * judges each (sustained, the response-time law, the service-level limits), bisects
 * the service level between the two points that bracket it, and writes the result's
 * "curve" and "service_level" sections and the printed table. A point that an
 * interrupt or a storage fault cut short ends the curve; the points so far stay.
 */
#include "oltp/oltp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double default_percents[] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120};

static const char curve_order[] = "saturation first, then the points in the order given; the "
                                  "database carries on between points (not restored)";
static const char users_order[] = "the user counts in the order given; the database carries on "
                                  "between points (not restored)";

typedef struct curve {
    const oltp_curve_cfg *cfg;
    const oltp_curve_ops *ops;
    void *ctx;
    json_t *points;
    oltp_point_outcome out[OLTP_CURVE_MAX_POINTS];
    int n;
    double max_tps;
    bool stopped;          /* interrupted or failed: no more points */
    json_t *doc_for_first; /* the result, which point 0's run fills as a run's would */
} curve;

static double ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

static json_t *latency_json(const sim_hist *h)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "mean", sim_hist_mean(h) / 1e6, "p50",
                     ms(sim_hist_percentile(h, 50)), "p90", ms(sim_hist_percentile(h, 90)), "p95",
                     ms(sim_hist_percentile(h, 95)), "p99", ms(sim_hist_percentile(h, 99)), "p999",
                     ms(sim_hist_percentile(h, 99.9)), "max", ms(sim_hist_max(h)));
}

static json_t *per_type_json(sim_hist *const *h, const char *const *names, int n)
{
    json_t *j = json_object();
    for (int t = 0; t < n; t++)
        json_object_set_new(
            j, names[t],
            json_pack("{s:I, s:f, s:f, s:f}", "count", (json_int_t)sim_hist_count(h[t]), "mean_ms",
                      sim_hist_mean(h[t]) / 1e6, "p90_ms", ms(sim_hist_percentile(h[t], 90)),
                      "p99_ms", ms(sim_hist_percentile(h[t], 99))));
    return j;
}

/* N = X (R + Z): the rate the users' cycle predicts, against the one measured. */
static json_t *law_json(const oltp_point_run *r, double achieved, double mean_s)
{
    double cycle = mean_s + r->think_s;
    double predicted = cycle > 0 ? (double)r->users / cycle : 0;
    return json_pack("{s:I, s:f, s:f, s:o}", "users", (json_int_t)r->users, "think_s", r->think_s,
                     "predicted_tps", predicted, "error_pct",
                     predicted > 0 ? json_real((achieved - predicted) / predicted * 100)
                                   : json_null());
}

/* Open loop: what arrived in the measured phase less what completed in it is what the
 * transactions in the system (queued or running) grew by. A point keeps up when that
 * growth, and its queue's, is at most the rest of OLTP_CURVE_SUSTAINED of its arrivals,
 * or at most what a point that keeps up may still hold when the phase ends: one
 * transaction per connection, and the arrivals of the longest time the harness's own
 * scheduler was late (a machine that stalled appsim, not the drive, queued those). */
static bool kept_up(const sim_vu_stats *vs, uint64_t done, uint64_t workers, double rate)
{
    double arrivals = (double)vs->arrivals_measured;
    double allowed = (1 - OLTP_CURVE_SUSTAINED) * arrivals;
    double harness = (double)workers + rate * (double)vs->wake_late_max_ns / 1e9;
    if (allowed < harness) allowed = harness;
    double queued = (double)vs->backlog_at_end - (double)vs->backlog_at_start;
    return arrivals - (double)done <= allowed && queued <= allowed;
}

/* The point's entry in curve.points, and its outcome for the service level. */
static json_t *point_json(curve *cv, const oltp_curve_req *req, const oltp_point_run *r,
                          oltp_point_outcome *o)
{
    const oltp_curve_ops *ops = cv->ops;
    sim_run *run = r->run;
    double secs = sim_run_measured_seconds(run);
    uint64_t done = sim_run_count(run, -1, -1);
    sim_hist *all = sim_run_merged_hist(run, -1, -1);
    sim_hist *per[64] = {NULL};
    for (int t = 0; t < ops->ntypes && t < 64; t++)
        per[t] = sim_run_merged_hist(run, t, -1);
    *o = (oltp_point_outcome){.offered = req->closed_loop ? 0 : req->rate,
                              .achieved = secs > 0 ? (double)done / secs : 0,
                              .sustained =
                                  req->closed_loop || kept_up(&r->vs, done, r->workers, req->rate),
                              .complete = !sim_run_interrupted(run) && !sim_run_failed(run)};
    bool limits = cv->cfg->slo && cv->cfg->slo->n;
    o->met = limits && oltp_slo_met(cv->cfg->slo, all, (const sim_hist *const *)per);
    json_t *p =
        json_pack("{s:i, s:o, s:o, s:I, s:b, s:f, s:b, s:o, s:I, s:b, s:b, s:f}", "index",
                  req->index, "percent",
                  !cv->cfg->users_kind && !req->saturation && cv->max_tps > 0
                      ? json_real(req->rate / cv->max_tps * 100)
                      : json_null(),
                  "offered_tps", req->closed_loop ? json_null() : json_real(req->rate), "vusers",
                  (json_int_t)r->vusers, "closed_loop", req->closed_loop, "achieved_tps",
                  o->achieved, "sustained", o->sustained, "latency_ms", latency_json(all), "errors",
                  (json_int_t)sim_run_errors(run, -1, -1), "interrupted", sim_run_interrupted(run),
                  "failed", sim_run_failed(run), "measured_s", secs);
    if (req->saturation) json_object_set_new(p, "max_rate_run", json_true());
    if (!req->closed_loop)
        json_object_set_new(p, "open_loop",
                            json_pack("{s:f, s:I, s:I, s:I, s:I, s:f}", "arrived_tps",
                                      secs > 0 ? (double)r->vs.arrivals_measured / secs : 0.0,
                                      "arrivals", (json_int_t)r->vs.arrivals_measured,
                                      "backlog_at_start", (json_int_t)r->vs.backlog_at_start,
                                      "backlog_at_end", (json_int_t)r->vs.backlog_at_end,
                                      "connections", (json_int_t)r->workers, "harness_late_max_ms",
                                      (double)r->vs.wake_late_max_ns / 1e6));
    if (ops->per_type)
        json_object_set_new(p, "per_type", per_type_json(per, ops->type_names, ops->ntypes));
    if (req->closed_loop)
        json_object_set_new(p, "response_time_law",
                            law_json(r, o->achieved, sim_hist_mean(all) / 1e9));
    if (limits) json_object_set_new(p, "slo_met", json_boolean(o->met));
    sim_hist_free(all);
    for (int t = 0; t < ops->ntypes && t < 64; t++)
        sim_hist_free(per[t]);
    return p;
}

/* Runs one point and appends it; an exit status. */
static int run_point(curve *cv, oltp_curve_req *req, json_t *doc)
{
    const oltp_curve_cfg *cfg = cv->cfg;
    req->index = cv->n;
    req->uniform = cfg->uniform;
    req->warmup_ns = cfg->warmup_ns;
    req->duration_ns = cfg->duration_ns;
    req->seed = cfg->seed + (uint64_t)cv->n;
    if (!cfg->quiet) {
        if (req->saturation)
            sim_info("curve: point 0, the maximum rate (closed loop, no waits)");
        else if (req->closed_loop)
            sim_info("curve: point %d, %llu users per instance", cv->n,
                     (unsigned long long)req->users);
        else
            sim_info("curve: point %d, %.1f transactions/s offered (%.1f %% of the maximum)", cv->n,
                     req->rate, req->rate / cv->max_tps * 100);
    }
    oltp_point_run r = {0};
    int rc = cv->ops->run_point(cv->ctx, req, doc, &r);
    if (rc) return rc;
    if (req->saturation) {
        double secs = sim_run_measured_seconds(r.run);
        cv->max_tps = secs > 0 ? (double)sim_run_count(r.run, -1, -1) / secs : 0;
    }
    json_array_append_new(cv->points, point_json(cv, req, &r, &cv->out[cv->n]));
    cv->stopped = !cv->out[cv->n].complete || sim_interrupted() || sim_fault_noted();
    bool failed = sim_run_failed(r.run) || sim_run_stopped_by(r.run);
    cv->n++;
    sim_run_free(r.run);
    return failed && !sim_interrupted() ? SIM_EXIT_FAIL : SIM_EXIT_OK;
}

/* Bisects the offered rate between the bracketing points, at most cfg->refine times. */
static int refine(curve *cv, int *added)
{
    double lo, hi;
    *added = 0;
    while (*added < cv->cfg->refine && !cv->stopped && cv->n < OLTP_CURVE_MAX_POINTS &&
           oltp_service_level_bracket(cv->out, cv->n, &lo, &hi)) {
        oltp_curve_req req = {.rate = (lo + hi) / 2};
        int rc = run_point(cv, &req, NULL);
        if (rc) return rc;
        (*added)++;
    }
    return SIM_EXIT_OK;
}

static json_t *service_level_json(const curve *cv, int refined)
{
    const oltp_curve_cfg *cfg = cv->cfg;
    bool rate_kind = !cfg->users_kind;
    int best = oltp_service_level_pick(cv->out, cv->n, rate_kind);
    const oltp_point_outcome *b = best >= 0 ? &cv->out[best] : NULL;
    return json_pack(
        "{s:o, s:o, s:o, s:b, s:i, s:b}", "limits",
        oltp_slo_limits_json(cfg->slo, cv->ops->type_names), "tps",
        b ? json_real(best == 0 && rate_kind ? cv->max_tps : b->achieved) : json_null(),
        "point_index", best >= 0 ? json_integer(best) : json_null(), "refined", refined > 0,
        "refine_points", refined, "met_by_saturation", rate_kind && best == 0);
}

static void print_limits(const oltp_slo *s, const char *const *types)
{
    for (int i = 0; i < s->n; i++) {
        const oltp_slo_limit *l = &s->lim[i];
        char p[32];
        printf("%s%s%sp%s<=%gms", i ? ", " : "", l->type >= 0 ? types[l->type] : "",
               l->type >= 0 ? ":" : "", sim_format_double(l->percentile, p, sizeof p), l->limit_ms);
    }
}

/* The table of points, then the service level. */
static void print_curve(const curve *cv, const json_t *sl)
{
    const oltp_curve_cfg *cfg = cv->cfg;
    if (cfg->users_kind)
        printf("\nuser curve: %d point(s)\n", cv->n);
    else
        printf("\nrate curve: max %.1f TPS (point 0, closed loop, no waits)\n", cv->max_tps);
    printf("  %5s %8s %10s %10s %9s %10s %10s %10s %s\n", "point",
           cfg->users_kind ? "users" : "percent", "offered", "achieved", "sustained", "mean ms",
           "p90 ms", "p99 ms", sl ? "limits" : "");
    size_t i;
    const json_t *p;
    json_array_foreach(cv->points, i, p)
    {
        const json_t *lat = json_object_get(p, "latency_ms");
        const json_t *pc = json_object_get(p, "percent");
        char what[32], off[32];
        if (cfg->users_kind)
            snprintf(what, sizeof what, "%lld",
                     (long long)json_integer_value(json_object_get(p, "vusers")));
        else if (json_is_number(pc))
            snprintf(what, sizeof what, "%.1f", json_number_value(pc));
        else
            snprintf(what, sizeof what, "max");
        const json_t *o = json_object_get(p, "offered_tps");
        snprintf(off, sizeof off, json_is_number(o) ? "%.1f" : "-", json_number_value(o));
        const json_t *met = json_object_get(p, "slo_met");
        printf("  %5zu %8s %10s %10.1f %9s %10.3f %10.3f %10.3f %s%s\n", i, what, off,
               json_number_value(json_object_get(p, "achieved_tps")),
               json_is_true(json_object_get(p, "sustained")) ? "yes" : "NO",
               json_number_value(json_object_get(lat, "mean")),
               json_number_value(json_object_get(lat, "p90")),
               json_number_value(json_object_get(lat, "p99")),
               !met                ? ""
               : json_is_true(met) ? "met"
                                   : "MISSED",
               json_is_true(json_object_get(p, "interrupted")) ? " (interrupted)" : "");
    }
    if (!sl) return;
    const json_t *tps = json_object_get(sl, "tps");
    printf("service-level TPS: ");
    if (json_is_number(tps))
        printf("%.1f (point %lld%s)", json_number_value(tps),
               (long long)json_integer_value(json_object_get(sl, "point_index")),
               json_is_true(json_object_get(sl, "met_by_saturation")) ? ", the saturation run"
                                                                      : "");
    else
        printf("none: no point was sustained within the limits");
    printf("; limits ");
    print_limits(cfg->slo, cv->ops->type_names);
    printf("\n");
}

/* The points the configuration names, after point 0 of a rate curve. */
static int run_listed(curve *cv)
{
    const oltp_curve_cfg *cfg = cv->cfg;
    const double *pct = cfg->npercents ? cfg->percents : default_percents;
    int npct =
        cfg->npercents ? cfg->npercents : (int)(sizeof default_percents / sizeof *default_percents);
    int count = cfg->users_kind ? cfg->nusers : npct;
    for (int i = 0; i < count && !cv->stopped && cv->n < OLTP_CURVE_MAX_POINTS; i++) {
        oltp_curve_req req = {0};
        if (cfg->users_kind)
            req = (oltp_curve_req){.closed_loop = true, .users = cfg->users[i]};
        else
            req = (oltp_curve_req){.rate = pct[i] / 100 * cv->max_tps};
        /* Point 0 of a user curve is its first step: the result's summary is its run. */
        int rc = run_point(cv, &req, cfg->users_kind && i == 0 ? cv->doc_for_first : NULL);
        if (rc) return rc;
    }
    return SIM_EXIT_OK;
}

int oltp_curve_run(const oltp_curve_cfg *cfg, const oltp_curve_ops *ops, void *ctx, json_t *doc)
{
    curve cv = {.cfg = cfg, .ops = ops, .ctx = ctx, .points = json_array(), .doc_for_first = doc};
    json_t *cj = json_pack(
        "{s:s, s:s, s:o, s:f, s:f, s:s}", "kind", cfg->users_kind ? "users" : "rate", "order",
        cfg->users_kind ? users_order : curve_order, "max_tps", json_null(), "point_warmup_s",
        (double)cfg->warmup_ns / 1e9, "point_duration_s", (double)cfg->duration_ns / 1e9,
        "arrivals", cfg->uniform ? "uniform" : "exponential");
    json_object_set(cj, "points", cv.points);
    int rc = SIM_EXIT_OK, refined = 0;
    if (!cfg->users_kind) {
        oltp_curve_req sat = {.saturation = true, .closed_loop = true};
        rc = run_point(&cv, &sat, doc);
        if (!rc && !cv.stopped && cv.max_tps <= 0) {
            sim_error("curve: the saturation run completed no transaction; no rate to offer");
            rc = SIM_EXIT_FAIL;
        }
        if (!rc) json_object_set_new(cj, "max_tps", json_real(cv.max_tps));
    }
    if (!rc) rc = run_listed(&cv);
    bool limits = cfg->slo && cfg->slo->n;
    if (!rc && limits && !cfg->users_kind) rc = refine(&cv, &refined);
    json_t *sl = limits && cv.n ? service_level_json(&cv, refined) : NULL;
    json_object_set_new(cj, "interrupted", json_boolean(sim_interrupted()));
    json_object_set_new(doc, "curve", cj);
    if (sl) json_object_set_new(doc, "service_level", json_incref(sl));
    /* The summary is point 0's; a curve cut short is marked as a whole. */
    if (sim_interrupted()) json_object_set_new(doc, "interrupted", json_true());
    if (cv.n && !sim_json_on_stdout(cfg->json_path)) {
        print_curve(&cv, sl);
        fflush(stdout);
    }
    json_decref(sl);
    json_decref(cv.points);
    return rc;
}

int oltp_curve_parse_percents(const char *s, double *out, int max)
{
    int n = 0;
    char buf[1024];
    if (!s || strlen(s) >= sizeof buf) return -1;
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        double v;
        if (n == max || sim_parse_double(t, &v) || v <= 0 || v > 1000) return -1;
        out[n++] = v;
    }
    return n > 0 ? n : -1;
}

int oltp_curve_parse_counts(const char *s, uint64_t max_count, uint64_t *out, int max)
{
    int n = 0;
    char buf[1024];
    if (!s || strlen(s) >= sizeof buf) return -1;
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (n == max || sim_parse_u64(t, &v) || v < 1 || v > max_count) return -1;
        out[n++] = v;
    }
    return n > 0 ? n : -1;
}
