/*
 * trace/capture_cmd.c: `appsim trace capture --device /dev/X (--duration S | -- cmd...)
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
#include "trace/capture_internal.h"

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
        return -1;
    }
    if (!S_ISBLK(st.st_mode)) {
        snprintf(err, errlen, "--device %s is not a block device", path);
        return -1;
    }
    unsigned maj = major(st.st_rdev), min = minor(st.st_rdev);
    *start = *len = 0;
    char sys[256], buf[64];
    snprintf(sys, sizeof sys, "/sys/dev/block/%u:%u/partition", maj, min);
    FILE *f = fopen(sys, "r");
    if (f) {
        fclose(f);
        /* A partition: trace its disk, keep its sectors. */
        snprintf(sys, sizeof sys, "/sys/dev/block/%u:%u/start", maj, min);
        f = fopen(sys, "r");
        if (!f || !fgets(buf, sizeof buf, f)) {
            if (f) fclose(f);
            snprintf(err, errlen, "cannot read %s", sys);
            return -1;
        }
        fclose(f);
        *start = strtoull(buf, NULL, 10);
        snprintf(sys, sizeof sys, "/sys/dev/block/%u:%u/size", maj, min);
        f = fopen(sys, "r");
        if (!f || !fgets(buf, sizeof buf, f)) {
            if (f) fclose(f);
            snprintf(err, errlen, "cannot read %s", sys);
            return -1;
        }
        fclose(f);
        *len = strtoull(buf, NULL, 10);
        snprintf(sys, sizeof sys, "/sys/dev/block/%u:%u/../dev", maj, min);
        f = fopen(sys, "r");
        if (!f || !fgets(buf, sizeof buf, f) || sscanf(buf, "%u:%u", &maj, &min) != 2) {
            if (f) fclose(f);
            snprintf(err, errlen, "cannot find the disk of partition %s", path);
            return -1;
        }
        fclose(f);
    }
    *kdev = (maj << 20) | min;
    return 0;
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

static int capture_main(int argc, char **argv)
{
    const char *device = NULL, *output = NULL, *format = CAPTURE_DEFAULT_FORMAT;
    uint64_t duration = 0, buffer_kb = 16384, max_events = 64u << 20;
    bool json = false, quiet = false, force = false;
    sim_opt opts[] = {
        {.name = "device",
         .kind = SIM_OPT_STRING,
         .dst = &device,
         .help = "block device to record (disk or partition)"},
        {.name = "o", .kind = SIM_OPT_STRING, .dst = &output, .help = "trace file to write"},
        {.name = "duration",
         .kind = SIM_OPT_DURATION,
         .dst = &duration,
         .help = "record this long (with a command: at most this long)"},
        {.name = "format",
         .kind = SIM_OPT_STRING,
         .dst = &format,
         .help = "output format (`appsim trace formats`)"},
        {.name = "buffer-kb",
         .kind = SIM_OPT_U64,
         .dst = &buffer_kb,
         .help = "ring buffer per CPU, KiB",
         .min = 64,
         .max = 1 << 20},
        {.name = "max-events",
         .kind = SIM_OPT_U64,
         .dst = &max_events,
         .help = "events kept in memory (32 bytes each); more are counted as lost",
         .min = 1024},
        {.name = "force",
         .kind = SIM_OPT_FLAG,
         .dst = &force,
         .help = "replace an existing -o file"},
        {.name = "json",
         .kind = SIM_OPT_FLAG,
         .dst = &json,
         .help = "print the summary as JSON on stdout"},
        {.name = "quiet", .kind = SIM_OPT_FLAG, .dst = &quiet, .help = "no progress messages"},
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
    if (rc < 0) return SIM_EXIT_OK;
    if (rc) return rc;
    sim_set_quiet(quiet);
    char **cmd = split + 1 < argc ? argv + split + 1 : NULL;
    if (split < argc && !cmd) {
        sim_error("trace capture: nothing after '--'; give a command or drop the '--'");
        return SIM_EXIT_USAGE;
    }
    if (!device || !output) {
        sim_error("trace capture: --device and -o are required; see `appsim trace capture "
                  "--help`");
        return SIM_EXIT_USAGE;
    }
    if (!cmd && duration == 0) {
        sim_error("trace capture: give --duration S, or a command after '--' to record "
                  "until it exits");
        return SIM_EXIT_USAGE;
    }
    const tr_format *fmt = tr_find_format(format);
    if (!fmt || !fmt->write_record) {
        sim_error("trace capture: --format %s is not a format appsim can write; "
                  "`appsim trace formats` lists them",
                  format);
        return SIM_EXIT_USAGE;
    }
    /* Refuse before recording, not after: a capture can be long. */
    if (strcmp(output, "-") != 0 && !force && access(output, F_OK) == 0) {
        sim_error("trace capture: %s already exists: remove it, choose another name, or pass "
                  "--force to replace it",
                  output);
        return SIM_EXIT_USAGE;
    }
    if (geteuid() != 0) {
        sim_error("trace capture needs root: it reads the kernel's block tracepoints "
                  "through tracefs (run it with sudo)");
        return SIM_EXIT_USAGE;
    }
    char err[512] = "";
    uint32_t kdev;
    uint64_t part_start, part_len;
    if (resolve_device(device, &kdev, &part_start, &part_len, err, sizeof err) != 0) {
        sim_error("trace capture: %s", err);
        return SIM_EXIT_USAGE;
    }

    cap_session s;
    if (cap_session_open(&s, kdev, (unsigned)buffer_kb, max_events, err, sizeof err) != 0) {
        sim_error("trace capture: %s", err);
        cap_session_close(&s);
        return SIM_EXIT_FAIL;
    }
    uint64_t t_start = sim_now_ns();
    pid_t child = 0;
    int child_status = 0;
    if (cmd && (child = start_command(cmd, err, sizeof err)) < 0) {
        sim_error("trace capture: %s", err);
        cap_session_close(&s);
        return SIM_EXIT_FAIL;
    }
    sim_info("trace capture: recording %s%s%s", device, cmd ? " while running " : "",
             cmd ? cmd[0] : "");
    const char *why = "duration reached";
    rc = 0;
    for (;;) {
        if (cap_session_poll(&s, 100, err, sizeof err) != 0) {
            rc = -1;
            break;
        }
        if (child > 0) {
            pid_t w = waitpid(child, &child_status, WNOHANG);
            if (w == child) {
                child = 0;
                why = "command exited";
                break;
            }
        }
        if (sim_interrupted()) {
            why = "interrupted";
            break;
        }
        if (duration && sim_now_ns() - t_start >= duration) break;
    }
    if (child > 0) {
        kill(child, SIGTERM);
        waitpid(child, &child_status, 0);
    }
    uint64_t elapsed = sim_now_ns() - t_start;
    uint64_t lost_kernel = 0;
    if (rc == 0 && cap_session_stop(&s, &lost_kernel, err, sizeof err) != 0) rc = -1;
    if (rc != 0) {
        sim_error("trace capture: %s", err);
        cap_session_close(&s);
        return SIM_EXIT_FAIL;
    }

    tr_record *recs = NULL;
    size_t nrec = 0;
    cap_pair_stats ps;
    if (cap_pair(s.ev, s.nev, part_start, part_len, &recs, &nrec, &ps) != 0) {
        sim_error("trace capture: out of memory pairing %zu events", s.nev);
        cap_session_close(&s);
        return SIM_EXIT_FAIL;
    }
    uint64_t lost = lost_kernel + s.over_limit;
    if (s.missed_in_pages > lost) lost = s.missed_in_pages;
    uint64_t events = s.nev, bad_pages = s.bad_pages, over_limit = s.over_limit;
    cap_session_close(&s);

    tr_writer *w = NULL;
    uint64_t n[4] = {0}, bytes[4] = {0};
    tr_writer_opts wo = {.fio_file = NULL, .overwrite = force};
    if (tr_writer_open(output, format, &wo, &w, err, sizeof err) != 0) {
        sim_error("trace capture: %s", err);
        free(recs);
        return SIM_EXIT_FAIL;
    }
    for (size_t i = 0; i < nrec; i++) {
        if (tr_writer_put(w, &recs[i]) != 0) {
            sim_error("trace capture: writing %s: %s", output, strerror(errno));
            tr_writer_close(w, err, sizeof err);
            free(recs);
            return SIM_EXIT_FAIL;
        }
        n[recs[i].op & 3]++;
        bytes[recs[i].op & 3] += recs[i].length;
    }
    free(recs);
    if (tr_writer_close(w, err, sizeof err) != 0) {
        sim_error("trace capture: %s", err);
        return SIM_EXIT_FAIL;
    }

    json_t *sum =
        json_pack("{s:s, s:s, s:s, s:s, s:f, s:I, s:I, s:{s:I, s:I, s:I, s:I}, s:{s:I, s:I}, s:I, "
                  "s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}",
                  "device", device, "output", output, "format", format, "stopped", why, "seconds",
                  (double)elapsed / 1e9, "events", (json_int_t)events, "records", (json_int_t)nrec,
                  "ops", "read", (json_int_t)n[TR_READ], "write", (json_int_t)n[TR_WRITE], "flush",
                  (json_int_t)n[TR_FLUSH], "trim", (json_int_t)n[TR_DISCARD], "bytes", "read",
                  (json_int_t)bytes[TR_READ], "write", (json_int_t)bytes[TR_WRITE], "lost_events",
                  (json_int_t)lost, "lost_kernel", (json_int_t)lost_kernel, "lost_over_max_events",
                  (json_int_t)over_limit, "bad_pages", (json_int_t)bad_pages, "incomplete",
                  (json_int_t)ps.incomplete, "unmatched_completions",
                  (json_int_t)ps.unmatched_completes, "requeued", (json_int_t)ps.requeued,
                  "io_errors", (json_int_t)ps.errors, "complete", lost == 0 && bad_pages == 0);
    /* The summary goes where the trace does not (-o - writes the trace on stdout). */
    FILE *out = strcmp(output, "-") ? stdout : stderr;
    if (json) {
        json_dumpf(sum, out, JSON_INDENT(2));
        fputc('\n', out);
    } else {
        fprintf(out,
                "captured %zu I/Os from %s in %.1f s (%s): %llu reads, %llu writes, %llu "
                "flushes, %llu trims -> %s\n",
                nrec, device, (double)elapsed / 1e9, why, (unsigned long long)n[TR_READ],
                (unsigned long long)n[TR_WRITE], (unsigned long long)n[TR_FLUSH],
                (unsigned long long)n[TR_DISCARD], output);
        fprintf(out,
                "lost events: %llu; issued but not completed: %llu; completions of earlier "
                "I/Os: %llu; requeued: %llu; I/O errors: %llu\n",
                (unsigned long long)lost, (unsigned long long)ps.incomplete,
                (unsigned long long)ps.unmatched_completes, (unsigned long long)ps.requeued,
                (unsigned long long)ps.errors);
    }
    json_decref(sum);
    if (lost || bad_pages)
        sim_warn("trace capture: %llu events were lost (ring buffer full or --max-events "
                 "reached) and %llu pages could not be decoded: the trace is incomplete; "
                 "raise --buffer-kb",
                 (unsigned long long)lost, (unsigned long long)bad_pages);
    if (cmd && WIFEXITED(child_status) && WEXITSTATUS(child_status) != 0 &&
        strcmp(why, "command exited") == 0) {
        sim_warn("trace capture: the command exited with status %d", WEXITSTATUS(child_status));
        return SIM_EXIT_FAIL;
    }
    return SIM_EXIT_OK;
}

static const tr_subcommand capture_sub = {
    .name = "capture",
    .summary = "record a block trace of a live device (kernel tracepoints; root)",
    .main = capture_main,
};
TR_REGISTER_SUBCOMMAND(capture_sub);
