/*
 * storage/precondition_cmd.c: `appsim precondition --target PATH`, the SNIA PTS-E
 * preconditioning before a drive is measured: an optional purge, then the region
 * written sequentially --loops times (default twice) in 128 KiB writes at queue
 * depth 32, O_DIRECT. The target keeps a record of it (precondition_record.c) that
 * every later result on it reports.
 *
 * The region: on a block device, the device up to appsim's mark (or --size bytes of
 * it); on a directory, a preconditioning file of --size bytes (default: the free space
 * less --keep-free, at most PC_DIR_DEFAULT_SIZE; --whole: all of it), removed afterwards
 * unless --keep-file, so that the filesystem's free space, where the workloads' files
 * will be allocated, has been written end to end.
 */
#include "storage/storage.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PRECOND_FILE "appsim-precondition.dat"
/* A directory's default region: a filesystem is often shared, and writing all of its
 * free space twice is a choice to make with --whole, not a default. 64 GiB holds the
 * files of the workloads at their default and review sizes several times over. */
#define PC_DIR_DEFAULT_SIZE (64ull << 30)

typedef struct pc_opts {
    st_target_opts to;
    const char *engine, *purge, *json;
    uint64_t size, loops, block, qd, keep_free;
    bool whole, keep_file, quiet;
} pc_opts;

typedef struct pc_state {
    pc_opts *o;
    st_target *t;
    json_t *rec;
    uint64_t region;
    /* A storage failure before the first write (the file's allocation): the run failed,
     * and its result says so even when the error is no fail-stop kind (sim_fault_note). */
    bool alloc_failed;
    int alloc_errno; /* 0 when a signal interrupted it */
    char alloc_msg[512];
} pc_state;

static void utc_now(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void record_progress(pc_state *s, uint64_t bytes, double secs)
{
    json_t *r = s->rec;
    json_object_set_new(r, "bytes_written", json_integer((json_int_t)bytes));
    json_object_set_new(r, "passes", json_real((double)bytes / (double)s->region));
    json_object_set_new(r, "seconds", json_real(secs));
    json_object_set_new(r, "rate_mib_s", json_real(secs > 0 ? (double)bytes / secs / 1048576 : 0));
}

/* Every ~10 s during the writes: the record on the target follows the progress, so
 * that even a kill -9 leaves it saying how much was written. */
static void checkpoint(void *ctx, uint64_t bytes, double secs)
{
    pc_state *s = ctx;
    char err[512];
    record_progress(s, bytes, secs);
    if (st_precondition_record_write(s->t, s->rec, err, sizeof err)) sim_warn("%s", err);
}

static int usage_error(const char *msg)
{
    sim_error("precondition: %s", msg);
    return SIM_EXIT_USAGE;
}

static int check_options(const pc_opts *o, const sim_opt *opts)
{
    if (!o->to.path) return usage_error("needs --target PATH (a directory or a block device)");
    if (o->to.buffered)
        return usage_error("writes with O_DIRECT, as the drive must see every byte; "
                           "--buffered does not apply");
    if (o->block % 4096) return usage_error("--block-size must be a multiple of 4 KiB");
    if (o->whole && o->size)
        return usage_error("--whole and --size both say how much to write: give one");
    struct stat st;
    bool dev = stat(o->to.path, &st) == 0 && S_ISBLK(st.st_mode);
    if (!strcmp(o->purge, "discard") && !dev)
        return usage_error("--purge discard applies to block devices only; a directory "
                           "target is not purged");
    if (!strcmp(o->purge, "discard") && !o->to.allow_destroy)
        return usage_error("--purge discard erases the whole device: add --allow-destroy");
    if (dev && (sim_opts_find(opts, "keep-file")->set || sim_opts_find(opts, "keep-free")->set))
        return usage_error("--keep-file and --keep-free apply to directory targets only");
    return SIM_EXIT_OK;
}

/* The region to precondition, a whole number of blocks. */
static int region_of(const pc_opts *o, st_target *t, uint64_t *region, char *err, size_t errlen)
{
    uint64_t cap = st_target_capacity(t), avail = cap;
    if (!st_target_is_device(t)) avail = cap > o->keep_free ? cap - o->keep_free : 0;
    uint64_t want = o->size ? o->size : avail;
    if (!o->size && !o->whole && !st_target_is_device(t) && avail > PC_DIR_DEFAULT_SIZE) {
        char d[32];
        want = PC_DIR_DEFAULT_SIZE;
        sim_info("precondition: writing %s of the directory's free space (the default); "
                 "--whole writes all of it less --keep-free, --size a chosen amount",
                 sim_format_size(want, d, sizeof d));
    }
    if (o->size && o->size > avail) {
        char a[32], w[32], k[32];
        snprintf(err, errlen, "--size %s does not fit: %s can take %s%s%s; choose a smaller --size",
                 sim_format_size(o->size, w, sizeof w), o->to.path,
                 sim_format_size(avail, a, sizeof a),
                 st_target_is_device(t) ? "" : " after --keep-free ",
                 st_target_is_device(t) ? "" : sim_format_size(o->keep_free, k, sizeof k));
        return SIM_EXIT_USAGE;
    }
    *region = want / o->block * o->block;
    if (*region == 0) {
        snprintf(err, errlen,
                 "nothing to precondition on %s: less than one block (%llu bytes) "
                 "available",
                 o->to.path, (unsigned long long)o->block);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* Purges the device (whole region) when asked and allowed; says what it did. */
static int purge(const pc_opts *o, st_target *t, int fd, uint64_t region, json_t *rec)
{
    const char *how = "none", *note = NULL;
    bool want = !strcmp(o->purge, "discard") || !strcmp(o->purge, "auto");
    if (!st_target_is_device(t))
        note = "directory target: nothing to purge";
    else if (!strcmp(o->purge, "none"))
        note = "--purge none";
    else if (!o->to.allow_destroy)
        note = "a purge needs --allow-destroy";
    if (want && !note) {
        uint64_t t0 = sim_now_ns(), range[2] = {0, region};
        if (ioctl(fd, BLKDISCARD, range) == 0) {
            how = "discard";
            json_object_set_new(rec, "purge_seconds", json_real((double)(sim_now_ns() - t0) / 1e9));
        } else if (!strcmp(o->purge, "discard")) {
            sim_error("precondition: discard of %s failed: %s", o->to.path, strerror(errno));
            return SIM_EXIT_FAIL;
        } else {
            note = errno == EOPNOTSUPP ? "the device does not support discard"
                                       : "discard failed; preconditioned without a purge";
        }
    }
    json_object_set_new(rec, "purge", json_string(how));
    json_object_set_new(rec, "purge_note", note ? json_string(note) : json_null());
    if (note) sim_info("precondition: no purge (%s)", note);
    return SIM_EXIT_OK;
}

/* The directory's file allocated up front, as fio lays out its file: the writes then
 * measure the drive, not the filesystem's block allocator. A filesystem without
 * fallocate (ext2, or ext4 on a file without extents) has the writes allocate it. Any
 * other error is a storage failure after the checks: the run fails (alloc_errno). */
static int allocate_file(pc_state *s, int fd, char *err, size_t errlen)
{
    if (fallocate(fd, 0, 0, (off_t)s->region) == 0) {
        json_object_set_new(s->rec, "preallocated", json_true());
        return SIM_EXIT_OK;
    }
    int e = errno;
    char size[32];
    sim_format_size(s->region, size, sizeof size);
    json_object_set_new(s->rec, "preallocated", json_false());
    if (e == EOPNOTSUPP) {
        sim_info("precondition: the filesystem of %s cannot allocate a file up front; the "
                 "writes allocate its %s as they go",
                 st_target_path(s->t), size);
        return SIM_EXIT_OK;
    }
    s->alloc_failed = true;
    if (e == EINTR && sim_interrupted()) { /* Ctrl-C: an interrupted run, not a failed one */
        snprintf(err, errlen, "interrupted while allocating %s for %s/%s; nothing was written",
                 size, st_target_path(s->t), PRECOND_FILE);
        return SIM_EXIT_FAIL;
    }
    s->alloc_errno = e;
    snprintf(s->alloc_msg, sizeof s->alloc_msg, "allocating %s for %s/%s", size,
             st_target_path(s->t), PRECOND_FILE);
    sim_fault_note(e, "%s", s->alloc_msg);
    return SIM_EXIT_FAIL;
}

/* What went wrong and what to do, once the file is gone (its blocks free again). */
static void alloc_failure_text(const pc_state *s, char *err, size_t errlen)
{
    char size[32], free_now[32];
    sim_format_size(s->region, size, sizeof size);
    sim_format_size(st_target_capacity(s->t), free_now, sizeof free_now);
    int e = s->alloc_errno;
    snprintf(err, errlen, "cannot allocate %s for %s/%s: %s (%s free now); nothing was written, %s",
             size, st_target_path(s->t), PRECOND_FILE, strerror(e), free_now,
             e == ENOSPC || e == EDQUOT
                 ? "the filesystem needs more than the region for its own metadata, or it "
                   "filled after the space check: give a smaller --size or a larger --keep-free"
                 : "the target's preconditioning record is unchanged");
}

static int open_region(pc_state *s, int *fd, char *err, size_t errlen)
{
    st_target *t = s->t;
    if (st_target_is_device(t)) return st_target_create_file(t, NULL, 0, fd, err, errlen);
    int rc = st_target_create_file(t, PRECOND_FILE, 0, fd, err, errlen);
    if (rc) return rc;
    rc = allocate_file(s, *fd, err, errlen);
    if (rc) {
        close(*fd);
        *fd = -1;
        /* Nothing was written to it: its blocks go back to the free space. */
        char rerr[512];
        if (st_target_remove_file(t, PRECOND_FILE, rerr, sizeof rerr)) sim_warn("%s", rerr);
        if (s->alloc_errno) alloc_failure_text(s, err, errlen);
    }
    return rc;
}

static json_t *new_record(const pc_opts *o, uint64_t region, bool dev)
{
    char at[32];
    utc_now(at, sizeof at);
    return json_pack("{s:s, s:s, s:b, s:b, s:I, s:I, s:I, s:i, s:i, s:b, s:s, s:o, s:I, s:f, "
                     "s:f, s:f}",
                     "tool", "appsim " APPSIM_VERSION, "at", at, "complete", false, "interrupted",
                     false, "region_bytes", (json_int_t)region, "total_bytes",
                     (json_int_t)(region * o->loops), "loops", (json_int_t)o->loops, "block_bytes",
                     (int)o->block, "queue_depth", (int)o->qd, "direct_io", true, "region",
                     dev ? "device" : "file", "file", dev ? json_null() : json_string(PRECOND_FILE),
                     "bytes_written", (json_int_t)0, "passes", 0.0, "seconds", 0.0, "rate_mib_s",
                     0.0);
}

/* Purge, record, write, record again. */
static int precondition(pc_state *s, int fd, st_precond_outcome *out, char *err, size_t errlen)
{
    int rc = purge(s->o, s->t, fd, s->region, s->rec);
    if (rc) return rc;
    if ((rc = st_precondition_record_write(s->t, s->rec, err, errlen))) return rc;
    st_precond_job job = {.region_bytes = s->region,
                          .total_bytes = s->region * s->o->loops,
                          .block_bytes = (uint32_t)s->o->block,
                          .queue_depth = (unsigned)s->o->qd,
                          .engine = s->o->engine,
                          .quiet = s->o->quiet,
                          .checkpoint = checkpoint,
                          .ctx = s};
    int wrc = st_precondition_write(fd, &job, out, err, errlen);
    if (fdatasync(fd))
        sim_warn("precondition: fdatasync of %s: %s", s->o->to.path, strerror(errno));
    char at[32];
    utc_now(at, sizeof at);
    record_progress(s, out->bytes_written, out->seconds);
    json_object_set_new(s->rec, "finished_at", json_string(at));
    json_object_set_new(s->rec, "engine", json_string(out->engine ? out->engine : "?"));
    json_object_set_new(s->rec, "complete",
                        json_boolean(!wrc && out->bytes_written == job.total_bytes));
    json_object_set_new(s->rec, "interrupted", json_boolean(out->interrupted));
    char rerr[512];
    rc = st_precondition_record_write(s->t, s->rec, rerr, sizeof rerr);
    if (rc) sim_error("%s", rerr);
    return wrc ? wrc : rc;
}

static void print_summary(const json_t *rec)
{
    char w[32], r[32];
    printf("precondition: %s written over a %s region (%.2f passes) in %.1f s = %.1f MiB/s, "
           "%lld KiB writes at queue depth %lld, purge %s%s\n",
           sim_format_size((uint64_t)json_integer_value(json_object_get(rec, "bytes_written")), w,
                           sizeof w),
           sim_format_size((uint64_t)json_integer_value(json_object_get(rec, "region_bytes")), r,
                           sizeof r),
           json_real_value(json_object_get(rec, "passes")),
           json_real_value(json_object_get(rec, "seconds")),
           json_real_value(json_object_get(rec, "rate_mib_s")),
           (long long)json_integer_value(json_object_get(rec, "block_bytes")) / 1024,
           (long long)json_integer_value(json_object_get(rec, "queue_depth")),
           json_object_get(rec, "purge") ? json_string_value(json_object_get(rec, "purge"))
                                         : "not reached",
           json_is_true(json_object_get(rec, "complete")) ? "" : "  [INCOMPLETE]");
}

/* The file on a directory target goes unless kept: its blocks return to the free space. */
static void finish_file(pc_state *s)
{
    if (st_target_is_device(s->t)) return;
    char err[512];
    bool kept = s->o->keep_file;
    if (!kept && st_target_remove_file(s->t, PRECOND_FILE, err, sizeof err)) {
        sim_warn("%s", err);
        kept = true;
    }
    json_object_set_new(s->rec, "file_kept", json_boolean(kept));
    if (st_precondition_record_write(s->t, s->rec, err, sizeof err)) sim_warn("%s", err);
}

/* The result of a run whose allocation failed with an error of no fail-stop kind (a
 * fail-stop one is marked by sim_result_save): failed all the same. */
static void mark_alloc_failure(const pc_state *s, json_t *doc)
{
    if (!s->alloc_errno) return;
    char msg[700];
    snprintf(msg, sizeof msg, "%s %s", strerror(s->alloc_errno), s->alloc_msg);
    const char *fault = sim_fault_message();
    json_object_set_new(doc, "stopped_by", json_string(fault ? fault : msg));
    if (sim_fault_noted()) return;
    json_object_set_new(doc, "failed", json_true());
    json_object_set_new(doc, "failure",
                        json_pack("{s:s, s:i, s:s}", "cause", strerror(s->alloc_errno), "errno",
                                  s->alloc_errno, "message", msg));
}

static int write_result(pc_state *s, int argc, char **argv, const sim_opt *opts)
{
    if (!s->o->json) return SIM_EXIT_OK;
    json_t *doc = sim_result_new("precondition", argc, argv, opts);
    json_object_set_new(doc, "target", st_target_json(s->t));
    json_object_set_new(doc, "precondition", json_deep_copy(s->rec));
    mark_alloc_failure(s, doc);
    int rc = sim_result_save(doc, s->o->json);
    json_decref(doc);
    return rc;
}

static int run_on_target(pc_opts *o, int argc, char **argv, const sim_opt *opts)
{
    char err[1024] = "";
    pc_state s = {.o = o};
    int rc = st_target_open(&o->to, &s.t, err, sizeof err);
    if (rc) {
        sim_error("%s", err);
        return rc;
    }
    int fd = -1;
    st_precond_outcome out = {0};
    if (!(rc = region_of(o, s.t, &s.region, err, sizeof err))) {
        s.rec = new_record(o, s.region, st_target_is_device(s.t));
        rc = open_region(&s, &fd, err, sizeof err);
        bool ran = !rc;
        if (ran) {
            rc = precondition(&s, fd, &out, err, sizeof err);
            close(fd);
            finish_file(&s);
        }
        /* A refusal (exit 2) leaves no result; a failed allocation is a failed run's. */
        if (ran || s.alloc_failed) {
            if (!sim_json_on_stdout(o->json)) print_summary(s.rec);
            int jrc = write_result(&s, argc, argv, opts);
            if (!rc) rc = jrc;
        }
        json_decref(s.rec);
    }
    if (rc && err[0]) sim_error("precondition: %s", err);
    st_target_close(s.t);
    /* Interrupted: the record says how far it got; main exits 130 or 143. */
    return rc;
}

static int precondition_main(int argc, char **argv)
{
    pc_opts o = {.engine = "io_uring",
                 .purge = "auto",
                 .loops = 2,
                 .block = 128 * 1024,
                 .qd = 32,
                 .keep_free = 1ull << 30};
    sim_opt opts[] = {
        ST_TARGET_OPTIONS(o.to, o.engine),
        {.name = "size",
         .kind = SIM_OPT_SIZE,
         .dst = &o.size,
         .help = "bytes to precondition (default: the whole device; on a directory its free "
                 "space less --keep-free, at most 64 GiB)"},
        {.name = "whole",
         .kind = SIM_OPT_FLAG,
         .dst = &o.whole,
         .help = "the whole device, or all of a directory's free space less --keep-free"},
        {.name = "loops",
         .kind = SIM_OPT_U64,
         .dst = &o.loops,
         .min = 1,
         .max = 1000,
         .help = "passes over the region (SNIA: twice the capacity)"},
        {.name = "block-size",
         .kind = SIM_OPT_SIZE,
         .dst = &o.block,
         .min = 4096,
         .max = 16 << 20,
         .help = "size of each sequential write"},
        {.name = "qd",
         .kind = SIM_OPT_U64,
         .dst = &o.qd,
         .min = 1,
         .max = 4096,
         .help = "writes in flight"},
        {.name = "purge",
         .kind = SIM_OPT_CHOICE,
         .dst = &o.purge,
         .choices = "auto|discard|none",
         .help = "block devices with --allow-destroy: discard the region first (auto: when the "
                 "device supports it)"},
        {.name = "keep-free",
         .kind = SIM_OPT_SIZE,
         .dst = &o.keep_free,
         .help = "directory: free space left by the default region or --whole, and the least "
                 "left"},
        {.name = "keep-file",
         .kind = SIM_OPT_FLAG,
         .dst = &o.keep_file,
         .help = "directory: keep the preconditioning file (default: removed, its blocks "
                 "returned to the free space)"},
        SIM_VOCAB_JSON(&o.json, NULL),
        SIM_VOCAB_QUIET(&o.quiet, "no progress line"),
        SIM_OPT_END,
    };
    int np = 0;
    int rc = sim_opts_parse("precondition", opts, argc, argv, NULL, 0, &np,
                            "appsim precondition --target DIR|DEVICE [options]");
    if (rc) return sim_opts_exit_status(rc);
    if ((rc = check_options(&o, opts))) return rc;
    sim_set_quiet(o.quiet);
    return run_on_target(&o, argc, argv, opts);
}

static const sim_command precondition_command = {
    .name = "precondition",
    .summary = "write the target end to end, twice (SNIA PTS preconditioning) and record it",
    .main = precondition_main,
};
SIM_REGISTER_COMMAND(precondition_command)
