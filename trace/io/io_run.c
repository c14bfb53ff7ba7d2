/*
 * trace/io/io_run.c: running `appsim io` jobs. A job's records come from io_source.c and
 * go through the trace replay loop (replay_loop.c): one submitting thread keeping the
 * job's threads as outstanding I/Os on the engine, latency from each I/O's intended
 * start. The rate curve is the replay's (replay_curve.c): a maximum-rate run, then
 * fractions of it with exponential arrivals. The section of the target is the replay's
 * region, so every I/O lands inside it.
 */
#include "trace/io/io_internal.h"

#include <string.h>
#include <time.h>

static void replay_opts(const io_plan *p, const io_spec *s, const tr_scan *scan, tr_replay_opts *o)
{
    tr_replay_opts_default(o);
    o->qd = s->threads;
    o->qd_option = "--threads (or --iodepth)";
    o->engine = p->engine;
    o->region_offset = p->section_offset;
    o->region_length = p->section_length;
    o->map = TR_MAP_NONE;
    o->file_name = IO_DATA_FILE;
    o->file_size = st_target_is_device(p->t) ? 0 : p->data_bytes;
    o->seed = p->seed;
    o->scan = scan;
}

static json_t *utc_now(void)
{
    char buf[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return json_string(buf);
}

int io_fill(const io_plan *p, json_t **out, char *err, size_t errlen)
{
    io_spec s = {.read_pct = 0, .random_pct = 0, .threads = p->fill_qd};
    s.xfer.kind = IO_XFER_FIXED;
    s.xfer.nbins = 1;
    s.xfer.size[0] = p->fill_bs;
    s.xfer.pct[0] = 100;
    tr_scan scan;
    tr_source *src = NULL;
    int rc = io_source_scan(&s, p->section_length, &scan, err, errlen);
    if (rc) return rc;
    if ((rc = io_source_open(&s, p->section_length, p->section_length / p->fill_bs, p->seed, &src,
                             err, errlen))) {
        tr_scan_free(&scan);
        return rc;
    }
    tr_replay_opts o;
    replay_opts(p, &s, &scan, &o);
    o.timing = TR_TIMING_AFAP;
    sim_run_config cfg;
    tr_replay_run_config(&cfg);
    cfg.quiet = true;
    sim_run *run = sim_run_new(&cfg);
    char a[32];
    if (!p->quiet)
        sim_info("fill: writing the section end to end (%s in %u KiB writes, qd %u)",
                 sim_format_size(p->section_length, a, sizeof a), p->fill_bs / 1024, p->fill_qd);
    json_t *stats = NULL;
    rc = tr_replay(run, src, p->t, &o, &stats, err, errlen);
    if (rc == 0 && sim_run_interrupted(run)) {
        snprintf(err, errlen, "interrupted while filling the section");
        rc = SIM_EXIT_FAIL;
    }
    if (rc == 0) {
        double secs = sim_run_measured_seconds(run);
        json_int_t bytes = json_integer_value(json_object_get(stats, "bytes_written"));
        *out = json_pack("{s:I, s:I, s:I, s:I, s:f, s:f, s:O, s:I, s:o}", "offset",
                         (json_int_t)p->section_offset, "bytes", bytes, "block_bytes",
                         (json_int_t)p->fill_bs, "qd", (json_int_t)p->fill_qd, "seconds", secs,
                         "mbps", secs > 0 ? bytes / secs / 1e6 : 0.0, "engine",
                         json_object_get(stats, "engine"), "errors",
                         json_integer_value(json_object_get(stats, "errors")), "finished_at",
                         utc_now());
        if (json_integer_value(json_object_get(stats, "errors"))) {
            snprintf(err, errlen, "the fill had I/O errors (%s)",
                     json_string_value(json_object_get(stats, "first_error")));
            rc = SIM_EXIT_FAIL;
        }
    }
    json_decref(stats);
    sim_run_free(run);
    tr_close(src);
    tr_scan_free(&scan);
    return rc;
}

static json_t *entry_head(const io_job *j)
{
    json_t *e = json_pack("{s:s, s:o}", "profile", j->name, "definition", io_spec_json(&j->spec));
    if (j->description) json_object_set_new(e, "description", json_string(j->description));
    if (j->approximation) json_object_set_new(e, "approximation", json_string(j->approximation));
    return e;
}

/* One run: as fast as possible, or at a fixed arrival rate. */
static int one_run(const io_plan *p, tr_source *src, const tr_replay_opts *o, json_t *entry,
                   json_t *doc, char *err, size_t errlen)
{
    sim_run_config cfg;
    tr_replay_run_config(&cfg);
    sim_run_config_warmup(&cfg, p->warmup_ns, p->steady_round_ns, p->steady_max_rounds);
    cfg.duration_ns = p->duration_ns;
    cfg.report_interval_ns = p->report_interval_ns;
    cfg.quiet = p->quiet;
    sim_run *run = sim_run_new(&cfg);
    sim_run_add_probe(run, &st_device_io_probe, p->t);
    json_t *stats = NULL;
    int rc = tr_replay(run, src, p->t, o, &stats, err, errlen);
    if (rc == 0) {
        sim_result_put_run(doc, NULL, run);
        json_object_set_new(entry, "replay", stats);
    }
    sim_run_free(run);
    return rc;
}

int io_run_job(const io_plan *p, const io_job *j, json_t *entry, json_t *doc, char *err,
               size_t errlen)
{
    json_t *head = entry_head(j);
    json_object_update(entry, head);
    json_decref(head);
    tr_scan scan;
    tr_source *src = NULL;
    int rc = io_source_scan(&j->spec, p->section_length, &scan, err, errlen);
    if (rc) return rc;
    if ((rc = io_source_open(&j->spec, p->section_length, 0, p->seed, &src, err, errlen))) {
        tr_scan_free(&scan);
        return rc;
    }
    tr_replay_opts o;
    replay_opts(p, &j->spec, &scan, &o);
    if (p->curve) {
        tr_curve_opts co = {.fractions = p->fractions,
                            .nfractions = p->nfractions,
                            .warmup_ns = p->warmup_ns,
                            .measure_ns = p->duration_ns,
                            .quiet = p->quiet,
                            .report_interval_ns = p->report_interval_ns};
        json_t *cj = NULL;
        rc = tr_replay_curve(src, p->t, &o, &co, &cj, err, errlen);
        if (rc == 0) json_object_set_new(entry, "curve", cj);
    } else {
        o.timing = p->rate > 0 ? TR_TIMING_RATE : TR_TIMING_AFAP;
        o.rate = p->rate;
        rc = one_run(p, src, &o, entry, doc, err, errlen);
    }
    tr_close(src);
    tr_scan_free(&scan);
    return rc;
}
