/*
 * sim/result.c: the result document (docs/result-schema.md), written atomically, and
 * the text summary printed at the end of a run. The result file is the only thing
 * compare and report read, so everything a comparison needs goes in here.
 */
#include "sim/sim_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define SCHEMA "appsim-result/1"

static void append_quoted(char **buf, size_t *len, size_t *cap, const char *arg)
{
    bool plain = *arg != 0;
    for (const char *p = arg; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./,:+%@", *p))
            plain = false;
    size_t need = strlen(arg) * 4 + 4;
    if (*len + need + 1 > *cap) {
        *cap = (*len + need + 1) * 2;
        *buf = sim_xrealloc(*buf, *cap);
    }
    char *o = *buf + *len;
    if (*len) *o++ = ' ';
    if (plain) {
        o = stpcpy(o, arg);
    } else {
        *o++ = '\'';
        for (const char *p = arg; *p; p++) {
            if (*p == '\'')
                o = stpcpy(o, "'\\''");
            else
                *o++ = *p;
        }
        *o++ = '\'';
    }
    *o = 0;
    *len = (size_t)(o - *buf);
}

static json_t *utc_now(void)
{
    char buf[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return json_string(buf);
}

json_t *sim_host_json(void)
{
    json_t *h = json_object();
    char line[512], model[256] = "";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "model name", 10)) {
                char *c = strchr(line, ':');
                if (c) {
                    snprintf(model, sizeof model, "%s", c + 2);
                    model[strcspn(model, "\n")] = 0;
                }
                break;
            }
        fclose(f);
    }
    json_object_set_new(h, "cpu", json_string(model));
    json_object_set_new(h, "cores", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    json_object_set_new(h, "memory_bytes",
                        json_integer((json_int_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE)));
    struct utsname u;
    if (!uname(&u)) {
        json_object_set_new(h, "hostname", json_string(u.nodename));
        json_object_set_new(h, "kernel", json_string(u.release));
        json_object_set_new(h, "machine", json_string(u.machine));
    }
    return h;
}

json_t *sim_result_new(const char *command, int argc, char **argv, const sim_opt *opts)
{
    char *cmdline = NULL;
    size_t len = 0, cap = 0;
    append_quoted(&cmdline, &len, &cap, "appsim");
    for (int i = 0; i < argc; i++)
        append_quoted(&cmdline, &len, &cap, argv[i]);
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string(SCHEMA));
    json_object_set_new(doc, "tool",
                        json_pack("{s:s, s:s}", "name", "appsim", "version", APPSIM_VERSION));
    json_object_set_new(doc, "command", json_string(cmdline));
    json_object_set_new(doc, "workload", json_string(command));
    json_object_set_new(doc, "config", opts ? sim_opts_to_json(opts) : json_object());
    json_object_set_new(doc, "host", sim_host_json());
    json_object_set_new(doc, "started_at", utc_now());
    free(cmdline);
    return doc;
}

static json_t *counts_json(const sim_run *r, int instance)
{
    const sim_run_config *c = sim_run_cfg(r);
    json_t *j = json_object();
    for (int i = 0; i < c->ncounters; i++)
        json_object_set_new(j, c->counter_names[i],
                            json_integer((json_int_t)sim_run_counter(r, i, instance)));
    return j;
}

json_t *sim_result_summary_json(const sim_run *r, int instance)
{
    const sim_run_config *c = sim_run_cfg(r);
    double secs = sim_run_measured_seconds(r);
    uint64_t n = sim_run_count(r, -1, instance);
    sim_hist *all = sim_run_merged_hist(r, -1, instance);
    json_t *s = json_object();
    json_object_set_new(s, "unit", json_string(c->unit));
    json_object_set_new(s, c->unit, json_real(secs > 0 ? (double)n / secs : 0.0));
    json_object_set_new(s, "count", json_integer((json_int_t)n));
    json_object_set_new(s, "errors", json_integer((json_int_t)sim_run_errors(r, -1, instance)));
    json_object_set_new(s, "seconds", json_real(secs));
    json_object_set_new(s, "latency_us", sim_hist_summary_json(all));
    if (c->ncounters) json_object_set_new(s, "counters", counts_json(r, instance));
    sim_hist_free(all);
    return s;
}

json_t *sim_result_per_type_json(const sim_run *r, int instance)
{
    const sim_run_config *c = sim_run_cfg(r);
    double secs = sim_run_measured_seconds(r);
    json_t *pt = json_object();
    for (int t = 0; t < c->ntypes; t++) {
        sim_hist *h = sim_run_merged_hist(r, t, instance);
        uint64_t n = sim_hist_count(h);
        json_object_set_new(pt, c->type_names[t],
                            json_pack("{s:I, s:I, s:f, s:o}", "count", (json_int_t)n, "errors",
                                      (json_int_t)sim_run_errors(r, t, instance), "rate",
                                      secs > 0 ? (double)n / secs : 0.0, "latency_us",
                                      sim_hist_summary_json(h)));
        sim_hist_free(h);
    }
    return pt;
}

json_t *sim_result_instances_json(const sim_run *r)
{
    json_t *inst = json_array();
    for (int i = 0; i < sim_run_cfg(r)->instances; i++) {
        json_t *one = json_object();
        json_object_set_new(one, "instance", json_integer(i + 1)); /* numbered from 1 */
        json_object_set_new(one, "summary", sim_result_summary_json(r, i));
        json_object_set_new(one, "per_type", sim_result_per_type_json(r, i));
        sim_hist *h = sim_run_merged_hist(r, -1, i);
        json_object_set_new(one, "histogram", sim_hist_to_json(h));
        sim_hist_free(h);
        json_array_append_new(inst, one);
    }
    return inst;
}

void sim_result_put_run(json_t *doc, const char *key, const sim_run *r)
{
    const sim_run_config *c = sim_run_cfg(r);
    /* Several ranks: rank 0 writes the job's figures, and each rank's own in "ranks". */
    json_t *ranks = sim_ranks_size() > 1 ? sim_result_merge_ranks(doc, (sim_run *)r) : NULL;
    json_t *dst = doc;
    if (key) {
        dst = json_object();
        json_object_set_new(doc, key, dst);
    }
    json_object_set_new(dst, "interrupted", json_boolean(sim_run_interrupted(r)));
    const char *stopped = sim_run_stopped_by(r);
    json_object_set_new(dst, "stopped_by", stopped ? json_string(stopped) : json_null());
    if (sim_run_failed(r)) {
        json_object_set_new(dst, "failed", json_true());
        json_object_set_new(dst, "failure", sim_fault_json());
        json_object_set_new(doc, "failed", json_true());
        json_object_set_new(doc, "failure", sim_fault_json());
    } else if (!json_object_get(doc, "failed")) {
        json_object_set_new(dst, "failed", json_false());
    }
    json_object_set_new(dst, "summary", sim_result_summary_json(r, -1));
    if (!ranks) json_object_set_new(dst, "measure", sim_result_measure_json(r));
    json_object_set_new(dst, "per_type", sim_result_per_type_json(r, -1));
    json_object_set_new(dst, "intervals", json_deep_copy(sim_run_intervals(r)));
    json_t *steadiness = sim_result_steadiness_json(sim_run_intervals(r), c->unit);
    json_object_set_new(dst, "measure_steadiness", steadiness ? steadiness : json_null());

    json_object_set_new(dst, "histograms", sim_result_type_hists_json(r, true));
    json_object_set_new(dst, "warmup", sim_result_warmup_json(r));
    json_t *steady = sim_run_steady_json(r);
    if (steady) json_object_set_new(dst, "steady_state", steady);

    if (ranks) {
        sim_result_put_ranks(doc, dst, ranks);
        return;
    }
    if (c->instances > 1) json_object_set_new(dst, "instances", sim_result_instances_json(r));
    for (int i = 0; i < sim_run_nprobes(r); i++) {
        const char *name;
        json_t *p = sim_run_probe_json(r, i, &name);
        json_object_set_new(dst, name, p ? p : json_null());
    }
}

json_t *sim_result_type_hists_json(const sim_run *r, bool with_all)
{
    const sim_run_config *c = sim_run_cfg(r);
    json_t *hists = json_object();
    if (with_all) {
        sim_hist *all = sim_run_merged_hist(r, -1, -1);
        json_object_set_new(hists, "all", sim_hist_to_json(all));
        sim_hist_free(all);
    }
    for (int t = 0; t < c->ntypes; t++) {
        sim_hist *h = sim_run_merged_hist(r, t, -1);
        json_object_set_new(hists, c->type_names[t], sim_hist_to_json(h));
        sim_hist_free(h);
    }
    return hists;
}

json_t *sim_result_warmup_json(const sim_run *r)
{
    uint64_t werr;
    sim_hist *w = sim_run_warmup_hist(r, &werr);
    json_t *j = json_pack("{s:f, s:I, s:I, s:o}", "seconds", sim_run_warmup_seconds(r), "count",
                          (json_int_t)sim_hist_count(w), "errors", (json_int_t)werr, "latency_us",
                          sim_hist_summary_json(w));
    sim_hist_free(w);
    return j;
}

/* The document as text. A storage fault anywhere in the process marks every result
 * written after it (a curve, a VDI storm, a prepare): its figures are not the drive's.
 * So does a SIGINT or SIGTERM, whatever phase it stopped (a load, the filling of a data
 * file, a check after the run): appsim exits 130 or 143, and the result says why. */
static char *dump_marked(const json_t *doc)
{
    json_t *marked = NULL;
    bool fault = sim_fault_noted() && !json_is_true(json_object_get(doc, "failed"));
    bool signal = sim_interrupted() && !json_is_true(json_object_get(doc, "interrupted"));
    if (fault || signal) marked = json_copy((json_t *)doc);
    if (fault) {
        json_object_set_new(marked, "failed", json_true());
        json_object_set_new(marked, "failure", sim_fault_json());
    }
    if (signal) json_object_set_new(marked, "interrupted", json_true());
    if (marked) doc = marked;
    char *text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
    json_decref(marked);
    return text;
}

bool sim_json_on_stdout(const char *path)
{
    return path && !strcmp(path, "-");
}

int sim_result_save(const json_t *doc, const char *path)
{
    if (!path) return SIM_EXIT_OK;
    if (sim_ranks_rank() > 0) return SIM_EXIT_OK; /* rank 0 writes the job's result */
    if (!sim_json_on_stdout(path)) return sim_result_write(doc, path) ? SIM_EXIT_FAIL : SIM_EXIT_OK;
    char *text = dump_marked(doc);
    bool ok = text != NULL;
    int fd = sim_json_stdout_fd();
    if (ok && fd >= 0) { /* the real stdout, claimed by --json - */
        size_t len = strlen(text), done = 0;
        while (ok && done < len) {
            ssize_t w = write(fd, text + done, len - done);
            ok = w > 0;
            done += ok ? (size_t)w : 0;
        }
        ok = ok && write(fd, "\n", 1) == 1;
    } else if (ok) {
        ok = puts(text) >= 0 && fflush(stdout) == 0;
    }
    free(text);
    if (!ok) {
        sim_error("cannot write the result document to standard output: %s", strerror(errno));
        return SIM_EXIT_FAIL;
    }
    return SIM_EXIT_OK;
}

int sim_result_save_stopped(json_t *doc, const char *path, const char *why)
{
    if (!doc || !(sim_interrupted() || sim_fault_noted())) return SIM_EXIT_OK;
    if (!json_object_get(doc, "stopped_by"))
        json_object_set_new(doc, "stopped_by", json_string(why ? why : "stopped"));
    return sim_result_save(doc, path);
}

int sim_result_write(const json_t *doc, const char *path)
{
    if (sim_ranks_rank() > 0)
        return SIM_OK; /* rank 0 writes the job's result, with every rank's section */
    /* One buffer, written whole: json_dumpfd would issue a write() per token. */
    char *text = dump_marked(doc);
    if (!text) { /* jansson's own allocation failed */
        sim_error("cannot write the result file %s: out of memory", path);
        return SIM_ERR;
    }
    size_t len = strlen(text);
    char *whole = sim_xrealloc(text, len + 2);
    whole[len++] = '\n';
    whole[len] = 0;
    int e = sim_atomic_write(path, whole, len);
    free(whole);
    if (e) {
        sim_error("cannot write the result file %s: %s; choose a writable path with --json", path,
                  strerror(e));
        return SIM_ERR;
    }
    return SIM_OK;
}

static void print_lat_row(FILE *out, const char *name, const json_t *lat, json_int_t count)
{
    fprintf(out, "  %-18s %10lld %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", name, (long long)count,
            sim_json_num(lat, "mean_us") / 1000, sim_json_num(lat, "p50_us") / 1000,
            sim_json_num(lat, "p95_us") / 1000, sim_json_num(lat, "p99_us") / 1000,
            sim_json_num(lat, "p999_us") / 1000, sim_json_num(lat, "max_us") / 1000);
}

/* The headline, the latency table (all, then each type) and the counters. */
static void print_latency(FILE *out, const json_t *doc, const json_t *s, const char *unit)
{
    fprintf(out, "\n%s: %.2f %s over %.1f s measured (%lld done, %lld errors)%s\n",
            json_string_value(json_object_get(doc, "workload")), sim_json_num(s, unit), unit,
            sim_json_num(s, "seconds"), (long long)json_integer_value(json_object_get(s, "count")),
            (long long)json_integer_value(json_object_get(s, "errors")),
            json_is_true(json_object_get(doc, "failed"))         ? "  [FAILED]"
            : json_is_true(json_object_get(doc, "interrupted"))  ? "  [INTERRUPTED]"
            : json_is_string(json_object_get(doc, "stopped_by")) ? "  [STOPPED EARLY]"
                                                                 : "");
    fprintf(out, "  latency (ms)            count      mean       p50       p95       p99     "
                 "p99.9       max\n");
    print_lat_row(out, "all", json_object_get(s, "latency_us"),
                  json_integer_value(json_object_get(s, "count")));
    const json_t *pt = json_object_get(doc, "per_type");
    const char *k;
    const json_t *v;
    if (json_object_size(pt) > 1)
        json_object_foreach((json_t *)pt, k, v)
            print_lat_row(out, k, json_object_get(v, "latency_us"),
                          json_integer_value(json_object_get(v, "count")));
    const json_t *counters = json_object_get(s, "counters");
    if (json_object_size(counters)) {
        fprintf(out, " ");
        json_object_foreach((json_t *)counters, k, v)
            fprintf(out, " %s %lld", k, (long long)json_integer_value(v));
        fputc('\n', out);
    }
}

/* The disk's counters (and its foreign-I/O warning), the job's ranks, each rank's warning. */
static void print_device(FILE *out, const json_t *doc, const char *unit)
{
    const json_t *dev = json_object_get(doc, "device_io");
    if (json_is_object(dev)) {
        const json_t *per = json_object_get(dev, "per_unit");
        fprintf(out,
                "  device %s: %.0f reads/s, %.0f writes/s, avg device latency read %.3f ms write "
                "%.3f ms",
                json_string_value(json_object_get(dev, "disk"))
                    ? json_string_value(json_object_get(dev, "disk"))
                    : "?",
                sim_json_num(dev, "read_iops"), sim_json_num(dev, "write_iops"),
                sim_json_num(dev, "read_latency_avg_us") / 1000,
                sim_json_num(dev, "write_latency_avg_us") / 1000);
        if (json_is_object(per))
            fprintf(out, "; per %s: %.2f reads, %.2f writes",
                    unit[0] == 't' ? "transaction" : "I/O", sim_json_num(per, "reads"),
                    sim_json_num(per, "writes"));
        fputc('\n', out);
        const char *warning = json_string_value(json_object_get(dev, "warning"));
        if (warning) fprintf(out, "  WARNING: %s\n", warning);
    }
    const json_t *mpi = json_object_get(doc, "mpi");
    if (json_is_object(mpi))
        fprintf(out,
                "  %lld ranks on %zu host(s); measured phases started within %.3f ms and "
                "stopped within %.3f ms of each other\n",
                (long long)json_integer_value(json_object_get(mpi, "ranks")),
                json_array_size(json_object_get(mpi, "hosts")),
                sim_json_num(mpi, "measure_start_spread_ms"),
                sim_json_num(mpi, "measure_stop_spread_ms"));
    /* The disks' counters are the ranks' own (the job's level has none). */
    size_t i;
    const json_t *rk;
    json_array_foreach(json_object_get(doc, "ranks"), i, rk)
    {
        const char *w =
            json_string_value(json_object_get(json_object_get(rk, "device_io"), "warning"));
        if (w)
            fprintf(out, "  WARNING: rank %lld on %s: %s\n",
                    (long long)json_integer_value(json_object_get(rk, "rank")),
                    json_string_value(json_object_get(rk, "hostname")) ?: "?", w);
    }
}

/* The CPU the run used, the target's preconditioning and the steady-state verdict. */
static void print_context(FILE *out, const json_t *doc)
{
    const json_t *cpu = json_object_get(doc, "cpu");
    if (json_is_object(cpu))
        fprintf(out, "  cpu: %.2f cores busy of %d allowed (user %.1f s, system %.1f s)\n",
                sim_json_num(cpu, "cores_busy"),
                (int)json_integer_value(json_object_get(cpu, "cpus_allowed")),
                sim_json_num(cpu, "user_s"), sim_json_num(cpu, "system_s"));
    const json_t *pre = json_object_get(json_object_get(doc, "target"), "preconditioning");
    if (json_is_object(pre))
        fprintf(out, "  target preconditioned %s: %.0f MiB written (%.2f passes)%s\n",
                json_string_value(json_object_get(pre, "at")),
                sim_json_num(pre, "bytes_written") / 1048576.0, sim_json_num(pre, "passes"),
                json_is_true(json_object_get(pre, "complete")) ? "" : ", incomplete");
    else
        fprintf(out, "  target not preconditioned (appsim precondition --target ...)\n");
    const json_t *st = json_object_get(doc, "steady_state");
    if (json_is_object(st))
        fprintf(out, "  steady state %s after %lld round(s) of %.0f s; measured from %.0f s\n",
                json_is_true(json_object_get(st, "reached")) ? "reached"
                                                             : "NOT reached (measured anyway)",
                (long long)json_integer_value(json_object_get(st, "after_rounds")),
                sim_json_num(st, "round_s"), sim_json_num(st, "measure_start_s"));
}

void sim_result_put_cache(json_t *doc, uint64_t buffer_bytes, uint64_t data_bytes,
                          const char *buffer_is)
{
    json_t *c = json_object();
    json_object_set_new(c, "buffer_bytes", json_integer((json_int_t)buffer_bytes));
    json_object_set_new(c, "data_bytes", json_integer((json_int_t)data_bytes));
    json_object_set_new(c, "ratio",
                        buffer_bytes && data_bytes
                            ? json_real((double)buffer_bytes / (double)data_bytes)
                            : json_null());
    json_object_set_new(c, "buffer", json_string(buffer_is));
    json_object_set_new(c, "data",
                        json_string("the database files' bytes at the start of the run"));
    json_object_set_new(doc, "cache", c);
}

/* "cache: 31.7 MiB buffer for 220 MiB of data (ratio 0.144)" */
static void print_cache(FILE *out, const json_t *doc)
{
    const json_t *c = json_object_get(doc, "cache");
    if (!json_is_object(c)) return;
    char b[32], d[32];
    sim_format_size((uint64_t)json_integer_value(json_object_get(c, "buffer_bytes")), b, sizeof b);
    sim_format_size((uint64_t)json_integer_value(json_object_get(c, "data_bytes")), d, sizeof d);
    const json_t *r = json_object_get(c, "ratio");
    if (json_is_number(r))
        fprintf(
            out,
            "  cache: %s of buffer for %s of data (ratio %.3f; compare drives at equal ratios)\n",
            b, d, json_number_value(r));
    else
        fprintf(out,
                "  cache: no buffer bound of appsim's for %s of data (the page cache holds what it "
                "can)\n",
                d);
}

void sim_result_print(FILE *out, const json_t *doc)
{
    const json_t *s = json_object_get(doc, "summary");
    if (!s || sim_ranks_rank() > 0) return;
    const char *unit = json_string_value(json_object_get(s, "unit"));
    if (!unit) unit = "tps";
    print_latency(out, doc, s, unit);
    print_device(out, doc, unit);
    print_cache(out, doc);
    print_context(out, doc);
    sim_result_print_steadiness(out, doc);
}
