/*
 * trace/capture/capture_cmd.c: `appsim trace capture --device /dev/X (--duration S | -- cmd...)
 * -o FILE`: records a block trace of a live device from the kernel's block
 * tracepoints and writes it in appsim's trace format (or another writable format).
 *
 * Each record: issue time (from the first issue), operation, offset and length on the
 * device (partition-relative for a partition), and the completion latency measured by
 * the kernel (issue to complete). Events are kept in memory until the end (32 bytes
 * each; --max-events bounds it, and events past the bound are counted as lost). Lost
 * events, from the kernel's counters, the page flags or the bound, are reported and
 * make the summary say the trace is incomplete.
 */
#include "trace/capture/capture_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAPTURE_DEFAULT_FORMAT "appsim"

static const char usage[] =
    "appsim trace capture --device /dev/X -o FILE [--force] (--duration S | -- command [args...])\n"
    "Records the block I/O of a device (a whole disk or a partition) from the kernel's\n"
    "block tracepoints, until --duration has passed or the command exits (whichever is\n"
    "first; the command is then sent SIGTERM). Needs root.";

/* Whole-disk kernel dev_t and the partition's sector range (len 0: whole disk). */
static int resolve_device(const char *path, uint32_t *kdev, uint64_t *start, uint64_t *len,
                          char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "--device %s: %s", path, strerror(errno));
        return SIM_ERR;
    }
    if (!S_ISBLK(st.st_mode)) {
        snprintf(err, errlen, "--device %s is not a block device", path);
        return SIM_ERR;
    }
    /* a partition's whole disk is traced, and its sectors kept */
    dev_t disk;
    char why[256];
    if (st_sysfs_partition(st.st_rdev, &disk, start, len, why, sizeof why)) {
        snprintf(err, errlen, "--device %s: %s", path, why);
        return SIM_ERR;
    }
    unsigned maj = major(disk), min = minor(disk);
    *kdev = (maj << 20) | min;
    return SIM_OK;
}

static pid_t start_command(char **argv, char *err, size_t errlen)
{
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execvp(argv[0], argv);
        fprintf(stderr, "appsim: trace capture: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}

/* One invocation's command line. */
typedef struct cap_cli {
    const char *device, *output, *format, *json;
    uint64_t duration, buffer_kb, max_events;
    bool quiet, force;
    char **cmd; /* the command after "--", or NULL */
} cap_cli;

/* What a recording gave. */
typedef struct cap_outcome {
    const char *why; /* why it stopped */
    int child_status;
    uint64_t elapsed_ns, events, lost, lost_kernel, over_limit, bad_pages;
    tr_record *recs;
    size_t nrec;
    cap_pair_stats ps;
    uint64_t n[4], bytes[4]; /* per operation */
} cap_outcome;

/* Everything that can be refused is refused before recording: a capture can be long. */
static int check_cli(const cap_cli *c)
{
    if (!c->device || !c->output) {
        sim_error("trace capture: --device and -o are required; see `appsim trace capture "
                  "--help`");
        return SIM_EXIT_USAGE;
    }
    if (sim_json_on_stdout(c->json) && !strcmp(c->output, "-")) {
        sim_error("trace capture: -o - and --json - both want stdout; write one to a file");
        return SIM_EXIT_USAGE;
    }
    if (!c->cmd && c->duration == 0) {
        sim_error("trace capture: give --duration S, or a command after '--' to record "
                  "until it exits");
        return SIM_EXIT_USAGE;
    }
    const tr_format *fmt = tr_find_format(c->format);
    if (!fmt || !fmt->write_record) {
        sim_error("trace capture: --format %s is not a format appsim can write; "
                  "`appsim trace formats` lists them",
                  c->format);
        return SIM_EXIT_USAGE;
    }
    if (strcmp(c->output, "-") != 0 && !c->force && access(c->output, F_OK) == 0) {
        sim_error("trace capture: %s already exists: remove it, choose another name, or pass "
                  "--force to replace it",
                  c->output);
        return SIM_EXIT_USAGE;
    }
    if (geteuid() != 0) {
        sim_error("trace capture needs root: it reads the kernel's block tracepoints "
                  "through tracefs (run it with sudo)");
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* Polls the session until the duration passes, the command exits or a signal comes;
 * the command is stopped if still running. 0 or -1 (err set). */
static int poll_until_done(const cap_cli *c, cap_session *s, pid_t child, cap_outcome *o, char *err,
                           size_t errlen)
{
    uint64_t t_start = sim_now_ns();
    o->why = "duration reached";
    int rc = 0;
    for (;;) {
        if (cap_session_poll(s, 100, err, errlen) != 0) {
            rc = -1;
            break;
        }
        if (child > 0 && waitpid(child, &o->child_status, WNOHANG) == child) {
            child = 0;
            o->why = "command exited";
            break;
        }
        if (sim_interrupted()) {
            o->why = "interrupted";
            break;
        }
        if (c->duration && sim_now_ns() - t_start >= c->duration) break;
    }
    if (child > 0) {
        kill(child, SIGTERM);
        waitpid(child, &o->child_status, 0);
    }
    o->elapsed_ns = sim_now_ns() - t_start;
    return rc;
}

/* Records the device and pairs issues with completions into o->recs. */
static int record(const cap_cli *c, cap_outcome *o)
{
    char err[512] = "";
    uint32_t kdev;
    uint64_t part_start, part_len;
    if (resolve_device(c->device, &kdev, &part_start, &part_len, err, sizeof err) != 0) {
        sim_error("trace capture: %s", err);
        return SIM_EXIT_USAGE;
    }
    cap_session s;
    if (cap_session_open(&s, kdev, (unsigned)c->buffer_kb, c->max_events, err, sizeof err) != 0) {
        sim_error("trace capture: %s", err);
        cap_session_close(&s);
        return SIM_EXIT_FAIL;
    }
    pid_t child = 0;
    if (c->cmd && (child = start_command(c->cmd, err, sizeof err)) < 0) {
        sim_error("trace capture: %s", err);
        cap_session_close(&s);
        return SIM_EXIT_FAIL;
    }
    sim_info("trace capture: recording %s%s%s", c->device, c->cmd ? " while running " : "",
             c->cmd ? c->cmd[0] : "");
    int rc = poll_until_done(c, &s, child, o, err, sizeof err);
    if (rc == 0 && cap_session_stop(&s, &o->lost_kernel, err, sizeof err) != 0) rc = -1;
    if (rc != 0) {
        sim_error("trace capture: %s", err);
        cap_session_close(&s);
        return SIM_EXIT_FAIL;
    }
    cap_pair(s.ev, s.nev, part_start, part_len, &o->recs, &o->nrec, &o->ps);
    o->lost = o->lost_kernel + s.over_limit;
    if (s.missed_in_pages > o->lost) o->lost = s.missed_in_pages;
    o->events = s.nev;
    o->bad_pages = s.bad_pages;
    o->over_limit = s.over_limit;
    cap_session_close(&s);
    return SIM_EXIT_OK;
}

/* Writes o->recs to -o in --format, counting operations and bytes. */
static int write_trace(const cap_cli *c, cap_outcome *o)
{
    char err[512] = "";
    tr_writer *w = NULL;
    tr_writer_opts wo = {.fio_file = NULL, .overwrite = c->force};
    if (tr_writer_open(c->output, c->format, &wo, &w, err, sizeof err) != 0) {
        sim_error("trace capture: %s", err);
        return SIM_EXIT_FAIL;
    }
    for (size_t i = 0; i < o->nrec; i++) {
        if (tr_writer_put(w, &o->recs[i]) != 0) {
            sim_error("trace capture: writing %s: %s", c->output, strerror(errno));
            tr_writer_close(w, err, sizeof err);
            return SIM_EXIT_FAIL;
        }
        o->n[o->recs[i].op & 3]++;
        o->bytes[o->recs[i].op & 3] += o->recs[i].length;
    }
    if (tr_writer_close(w, err, sizeof err) != 0) {
        sim_error("trace capture: %s", err);
        return SIM_EXIT_FAIL;
    }
    return SIM_EXIT_OK;
}

/* The summary: --json FILE and the text (on stderr when the trace went to stdout). */
static int summarize(const cap_cli *c, const cap_outcome *o)
{
    const uint64_t *n = o->n;
    json_t *sum = json_pack(
        "{s:s, s:s, s:s, s:s, s:f, s:I, s:I, s:{s:I, s:I, s:I, s:I}, s:{s:I, s:I}, s:I, "
        "s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}",
        "device", c->device, "output", c->output, "format", c->format, "stopped", o->why, "seconds",
        (double)o->elapsed_ns / 1e9, "events", (json_int_t)o->events, "records",
        (json_int_t)o->nrec, "ops", "read", (json_int_t)n[TR_READ], "write",
        (json_int_t)n[TR_WRITE], "flush", (json_int_t)n[TR_FLUSH], "trim",
        (json_int_t)n[TR_DISCARD], "bytes", "read", (json_int_t)o->bytes[TR_READ], "write",
        (json_int_t)o->bytes[TR_WRITE], "lost_events", (json_int_t)o->lost, "lost_kernel",
        (json_int_t)o->lost_kernel, "lost_over_max_events", (json_int_t)o->over_limit, "bad_pages",
        (json_int_t)o->bad_pages, "incomplete", (json_int_t)o->ps.incomplete,
        "unmatched_completions", (json_int_t)o->ps.unmatched_completes, "requeued",
        (json_int_t)o->ps.requeued, "io_errors", (json_int_t)o->ps.errors, "complete",
        o->lost == 0 && o->bad_pages == 0);
    int rc = sim_result_save(sum, c->json);
    json_decref(sum);
    FILE *out = strcmp(c->output, "-") ? stdout : stderr;
    if (!sim_json_on_stdout(c->json)) {
        fprintf(out,
                "captured %zu I/Os from %s in %.1f s (%s): %llu reads, %llu writes, %llu "
                "flushes, %llu trims -> %s\n",
                o->nrec, c->device, (double)o->elapsed_ns / 1e9, o->why,
                (unsigned long long)n[TR_READ], (unsigned long long)n[TR_WRITE],
                (unsigned long long)n[TR_FLUSH], (unsigned long long)n[TR_DISCARD], c->output);
        fprintf(out,
                "lost events: %llu; issued but not completed: %llu; completions of earlier "
                "I/Os: %llu; requeued: %llu; I/O errors: %llu\n",
                (unsigned long long)o->lost, (unsigned long long)o->ps.incomplete,
                (unsigned long long)o->ps.unmatched_completes, (unsigned long long)o->ps.requeued,
                (unsigned long long)o->ps.errors);
    }
    if (o->lost || o->bad_pages)
        sim_warn("trace capture: %llu events were lost (ring buffer full or --max-events "
                 "reached) and %llu pages could not be decoded: the trace is incomplete; "
                 "raise --buffer-kb",
                 (unsigned long long)o->lost, (unsigned long long)o->bad_pages);
    return rc;
}

static int capture_main(int argc, char **argv)
{
    cap_cli c = {.format = CAPTURE_DEFAULT_FORMAT, .buffer_kb = 16384, .max_events = 64u << 20};
    sim_opt opts[] = {
        {.name = "device",
         .kind = SIM_OPT_STRING,
         .dst = &c.device,
         .help = "block device to record (disk or partition)"},
        {.name = "o",
         .kind = SIM_OPT_STRING,
         .dst = &c.output,
         .output = SIM_OUTPUT_NEW,
         .help = "trace file to write"},
        {.name = "duration",
         .kind = SIM_OPT_DURATION,
         .dst = &c.duration,
         .aliases = "time",
         .help = "record this long (with a command: at most this long)"},
        {.name = "format",
         .kind = SIM_OPT_STRING,
         .dst = &c.format,
         .help = "output format (`appsim trace formats`)"},
        {.name = "buffer-kb",
         .kind = SIM_OPT_U64,
         .dst = &c.buffer_kb,
         .help = "ring buffer per CPU, KiB",
         .min = 64,
         .max = 1 << 20},
        {.name = "max-events",
         .kind = SIM_OPT_U64,
         .dst = &c.max_events,
         .help = "events kept in memory (32 bytes each); more are counted as lost",
         .min = 1024},
        {.name = "force",
         .kind = SIM_OPT_FLAG,
         .dst = &c.force,
         .help = "replace an existing -o file"},
        {.name = "json",
         .kind = SIM_OPT_STRING,
         .dst = &c.json,
         .metavar = "FILE",
         .bare_value = "-",
         .output = SIM_OUTPUT_REPLACE,
         .help = "write the summary as JSON to FILE (- = stdout, and nothing else there)"},
        SIM_VOCAB_QUIET(&c.quiet, "no progress messages"),
        SIM_OPT_END,
    };
    int split = argc;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            split = i;
            break;
        }
    int npos = 0;
    int rc = sim_opts_parse("trace capture", opts, split, argv, NULL, 0, &npos, usage);
    if (rc) return sim_opts_exit_status(rc);
    sim_set_quiet(c.quiet);
    c.cmd = split + 1 < argc ? argv + split + 1 : NULL;
    if (split < argc && !c.cmd) {
        sim_error("trace capture: nothing after '--'; give a command or drop the '--'");
        return SIM_EXIT_USAGE;
    }
    if ((rc = check_cli(&c))) return rc;
    cap_outcome o = {0};
    rc = record(&c, &o);
    if (!rc) rc = write_trace(&c, &o);
    free(o.recs);
    if (rc) return rc;
    rc = summarize(&c, &o);
    if (c.cmd && WIFEXITED(o.child_status) && WEXITSTATUS(o.child_status) != 0 &&
        strcmp(o.why, "command exited") == 0) {
        sim_warn("trace capture: the command exited with status %d", WEXITSTATUS(o.child_status));
        return SIM_EXIT_FAIL;
    }
    return rc;
}

static const tr_subcommand capture_sub = {
    .name = "capture",
    .summary = "record a block trace of a live device (kernel tracepoints; root)",
    .main = capture_main,
};
TR_REGISTER_SUBCOMMAND(capture_sub);
