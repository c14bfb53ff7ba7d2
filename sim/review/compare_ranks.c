/*
 * sim/review/compare_ranks.c: `compare --ranks` and `report --ranks`: the ranks of an MPI
 * job's result (docs/mpi.md) shown as drives. Each rank becomes a result document of its
 * own, built from the job's: every run section (the top level, or a curve point's "run")
 * takes that rank's section of it (summary, per type, histograms, intervals, probes,
 * workload detail), the point's own rate and latency are recomputed from it, and the
 * document's target and host become the rank's. Figures that exist only for the whole
 * job (a curve point's offered load and saturation, the job's warm-up) are left out
 * rather than shown as the rank's.
 */
#include "sim/review/review_internal.h"

#include <stdlib.h>
#include <string.h>

/* What a rank's section says about itself, not about its run: kept off the run section. */
static bool identity_key(const char *k)
{
    return !strcmp(k, "rank") || !strcmp(k, "hostname") || !strcmp(k, "host") ||
           !strcmp(k, "target") || !strcmp(k, "histogram") || !strcmp(k, "histograms");
}

/* The job's figures on a curve point that no rank section holds a share of. */
static const char *const job_only_point_keys[] = {
    "target_iops", "offered_iops", "saturated", "mbps", "read", "write", "lag_us", "replay", NULL};

/* The job's summaries of a curve (or of what holds it, a VDI storm). */
static const char *const job_only_curve_keys[] = {"peak", "max_iops", "latency_vs_iops", NULL};

/* Replaces run section `run` (which has "ranks") by its rank k; identity goes to *ident. */
static bool adopt_rank(json_t *run, size_t k, json_t **ident)
{
    const json_t *rk = json_array_get(json_object_get(run, "ranks"), k);
    if (!json_is_object(rk)) return false;
    json_t *hists = json_object();
    const json_t *per_type = json_object_get(rk, "histograms");
    if (json_is_object(per_type)) json_object_update(hists, (json_t *)per_type);
    const json_t *all = json_object_get(rk, "histogram");
    if (all) json_object_set(hists, "all", (json_t *)all);
    /* Sections of the job that a rank's may not have: none rather than the job's. */
    static const char *const job_keys[] = {"warmup", "steady_state", "failure", "instances", NULL};
    for (int i = 0; job_keys[i]; i++)
        json_object_del(run, job_keys[i]);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)rk, key, v)
    {
        if (!identity_key(key)) json_object_set(run, key, v);
    }
    json_object_set_new(run, "histograms", hists);
    /* The rank's identity: from a section that has its target, else the first. */
    if (!*ident || (!json_is_object(json_object_get(*ident, "target")) &&
                    json_is_object(json_object_get(rk, "target")))) {
        json_decref(*ident);
        *ident = json_incref((json_t *)rk);
    }
    return true;
}

/* A curve point whose run is now a rank's: its rate and latency from that run. */
static void point_from_run(json_t *pt)
{
    const json_t *s = json_object_get(json_object_get(pt, "run"), "summary");
    if (!json_is_object(s)) return;
    for (int i = 0; job_only_point_keys[i]; i++)
        json_object_del(pt, job_only_point_keys[i]);
    const char *unit = cmp_str(s, "unit");
    const json_t *rate = unit ? json_object_get(s, unit) : NULL;
    if (rate && json_object_get(pt, "iops")) json_object_set(pt, "iops", (json_t *)rate);
    if (json_object_get(pt, "seconds"))
        json_object_set(pt, "seconds", json_object_get(s, "seconds"));
    const json_t *lat = json_object_get(s, "latency_us");
    static const char *const lat_keys[] = {"mean_us", "p50_us", "p99_us",
                                           "p999_us", "max_us", NULL};
    for (int i = 0; lat_keys[i]; i++)
        if (json_object_get(pt, lat_keys[i]) && json_object_get(lat, lat_keys[i]))
            json_object_set(pt, lat_keys[i], json_object_get(lat, lat_keys[i]));
}

/* Every run section under node takes rank k's figures. -1 when one lacks rank k. */
static int walk(json_t *node, size_t k, json_t **ident, int depth)
{
    if (depth > 8) return 0;
    if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v) if (walk(v, k, ident, depth + 1)) return -1;
        return 0;
    }
    if (!json_is_object(node)) return 0;
    bool is_run = json_is_array(json_object_get(node, "ranks"));
    if (is_run && !adopt_rank(node, k, ident)) return -1;
    if (is_run) {
        json_object_del(node, "ranks");
        json_object_del(node, "mpi");
    }
    const char *key;
    json_t *v;
    json_object_foreach(node, key, v)
    {
        if (!strcmp(key, "config") || !strcmp(key, "host") || !strcmp(key, "target")) continue;
        if (walk(v, k, ident, depth + 1)) return -1;
    }
    json_t *run = json_object_get(node, "run");
    if (json_is_object(run) && json_object_get(node, "fraction")) point_from_run(node);
    /* A curve's summaries were the job's: compare finds a rank's own from its points. */
    if (json_is_array(json_object_get(node, "points")) || json_object_get(node, "curve"))
        for (int i = 0; job_only_curve_keys[i]; i++)
            json_object_del(node, job_only_curve_keys[i]);
    return 0;
}

/* The number of ranks of the job: the top level's "mpi", or any run section's. */
static size_t job_ranks(const json_t *doc)
{
    const json_t *mpi = json_object_get(doc, "mpi");
    if (json_is_object(mpi)) return (size_t)json_integer_value(json_object_get(mpi, "ranks"));
    const json_t *curves[1];
    char *names[1] = {NULL};
    if (cmp_find_curves(doc, curves, names, 1) < 1) return 0;
    free(names[0]);
    const json_t *run = json_object_get(json_array_get(curves[0], 0), "run");
    return json_array_size(json_object_get(run, "ranks"));
}

/* Rank k's view of the job's result doc, or NULL when a run section lacks rank k. */
static json_t *rank_doc(const json_t *doc, size_t k, const char *path)
{
    json_t *v = json_deep_copy(doc);
    json_t *ident = NULL; /* a reference: the sections are deleted */
    if (walk(v, k, &ident, 0)) {
        json_decref(ident);
        json_decref(v);
        return NULL;
    }
    /* A curve's points do not record each rank's target: none rather than rank 0's. */
    const json_t *target = json_object_get(ident, "target");
    json_object_set_new(v, "target", json_is_object(target) ? json_deep_copy(target) : json_null());
    if (json_is_object(json_object_get(ident, "host")))
        json_object_set(v, "host", json_object_get(ident, "host"));
    const char *host = cmp_str(ident, "hostname");
    json_object_set_new(v, "rank_of_job",
                        json_pack("{s:I, s:s, s:s}", "rank", (json_int_t)k, "hostname",
                                  host ? host : "", "job", path));
    json_decref(ident);
    return v;
}

/* "rank 2 on node1 (/mnt/ssd/appsim-2)": the rank's label. */
static char *rank_label(const json_t *view, size_t k, const char *prefix)
{
    const char *host = cmp_str(json_object_get(view, "rank_of_job"), "hostname");
    if (!host || !*host) host = cmp_str(json_object_get(view, "host"), "hostname");
    const char *tp = cmp_str(json_object_get(view, "target"), "path");
    return sim_xasprintf("%s%srank %zu on %s%s%s%s", prefix ? prefix : "", prefix ? ": " : "", k,
                         host ? host : "?", tp ? " (" : "", tp ? tp : "", tp ? ")" : "");
}

int cmp_rank_views(const cmp_result *job, const char *label, cmp_result **views, int *nviews,
                   char *err, size_t errlen)
{
    *views = NULL;
    *nviews = 0;
    size_t n = job_ranks(job->doc);
    if (n < 1) {
        snprintf(err, errlen,
                 "%s: not the result of an MPI job (no \"ranks\"); --ranks shows the ranks of "
                 "results written by `mpirun ... appsim ... --json FILE` (docs/mpi.md)",
                 job->path);
        return -1;
    }
    cmp_result *out = sim_xcalloc(n, sizeof *out);
    for (size_t k = 0; k < n; k++) {
        json_t *doc = rank_doc(job->doc, k, job->path);
        if (!doc) {
            snprintf(err, errlen,
                     "%s: a run of this job has no section for rank %zu of %zu; "
                     "the file is damaged",
                     job->path, k, n);
            for (size_t j = 0; j < k; j++)
                cmp_result_free(&out[j]);
            free(out);
            return -1;
        }
        cmp_result *r = &out[k];
        r->path = sim_xstrdup(job->path);
        r->doc = doc;
        r->workload = cmp_str(doc, "workload");
        r->config = json_object_get(doc, "config");
        r->config_key = sim_xstrdup(job->config_key);
        r->label = rank_label(doc, k, label);
        const char *tp = cmp_str(json_object_get(doc, "target"), "path");
        r->drive_key = sim_xasprintf("rank:%zu|host:%s|path:%s|label:%s", k,
                                     cmp_str(json_object_get(doc, "rank_of_job"), "hostname") ?: "",
                                     tp ?: "", label ?: "");
        r->interrupted = json_is_true(json_object_get(doc, "interrupted")) ||
                         json_is_string(json_object_get(doc, "stopped_by"));
    }
    *views = out;
    *nviews = (int)n;
    return 0;
}
