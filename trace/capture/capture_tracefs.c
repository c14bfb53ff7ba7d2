/*
 * trace/capture/capture_tracefs.c: a dedicated tracefs instance that records the block
 * events of one disk (see capture_internal.h for why binary pages are read).
 *
 * The instance ("instances/appsim-capture-<pid>") has its own ring buffers, filters
 * and clock, so a capture never changes the global tracing setup or another tool's
 * instance. Instances left by captures that died (their pid is gone) are removed. It uses the
 * "mono" clock (CLOCK_MONOTONIC) and no overwrite: when a buffer is full the kernel drops new
 * events and counts them, and those counts are reported (never silent). The instance is removed on
 * close.
 */
#include "trace/capture/capture_internal.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const event_names[CAP_NKINDS] = {
    [CAP_ISSUE] = "block_rq_issue",
    [CAP_COMPLETE] = "block_rq_complete",
    [CAP_REQUEUE] = "block_rq_requeue",
};

static int write_file(const char *dir, const char *name, const char *value, char *err,
                      size_t errlen)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return SIM_ERR;
    }
    size_t len = strlen(value);
    ssize_t n = write(fd, value, len);
    int e = errno;
    close(fd);
    if (n != (ssize_t)len) {
        snprintf(err, errlen, "cannot write '%s' to %s: %s", value, path,
                 n < 0 ? strerror(e) : "short write");
        return SIM_ERR;
    }
    return SIM_OK;
}

/* Reads a small text file into a malloc'd string; NULL when it cannot be opened. */
static char *read_text(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t cap = 8192, len = 0;
    char *buf = sim_xmalloc(cap);
    for (;;) {
        if (len + 1 >= cap) {
            cap *= 2;
            buf = sim_xrealloc(buf, cap);
        }
        ssize_t r = read(fd, buf + len, cap - len - 1);
        if (r <= 0) {
            buf[len] = 0;
            break;
        }
        len += (size_t)r;
    }
    close(fd);
    return buf;
}

/* The tracefs root: the usual mount point, the debugfs path, or a fresh mount. */
static int tracefs_root(char *root, size_t len, char *err, size_t errlen)
{
    struct stat st;
    if (stat("/sys/kernel/tracing/instances", &st) == 0) {
        snprintf(root, len, "/sys/kernel/tracing");
        return SIM_OK;
    }
    if (stat("/sys/kernel/debug/tracing/instances", &st) == 0) {
        snprintf(root, len, "/sys/kernel/debug/tracing");
        return SIM_OK;
    }
    if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0) {
        snprintf(err, errlen,
                 "tracefs is not mounted and mounting it on /sys/kernel/tracing failed: %s "
                 "(a kernel with CONFIG_FTRACE and block tracepoints is needed)",
                 strerror(errno));
        return SIM_ERR;
    }
    snprintf(root, len, "/sys/kernel/tracing");
    return SIM_OK;
}

/* Removes the instances of captures that died without cleaning up (a crash, SIGKILL):
 * "appsim-capture-<pid>" whose process no longer exists. Their buffers would keep
 * recording and holding memory. Instances of live captures are left alone. */
static void remove_stale_instances(const char *root)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/instances", root);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long pid;
        char tail;
        if (sscanf(e->d_name, "appsim-capture-%ld%c", &pid, &tail) != 1 || pid <= 0) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char inst[1024], ignore[64];
        snprintf(inst, sizeof inst, "%s/%s", dir, e->d_name);
        write_file(inst, "tracing_on", "0", ignore, sizeof ignore);
        if (rmdir(inst) == 0)
            fprintf(stderr, "appsim: removed the tracefs instance of a capture that died: %s\n",
                    inst);
    }
    closedir(d);
}

/* The kernel's ring-buffer page layout and the block events' record formats. */
static int read_layout(cap_session *s, const char *root, char *err, size_t errlen)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/events/header_page", root);
    char *text = read_text(path);
    if (!text || cap_parse_header_page(text, &s->layout) != 0) {
        snprintf(err, errlen, "cannot read the ring-buffer page layout from %s", path);
        free(text);
        return SIM_ERR;
    }
    free(text);
    for (int k = 0; k < CAP_NKINDS; k++) {
        snprintf(path, sizeof path, "%s/events/block/%s/format", root, event_names[k]);
        text = read_text(path);
        if (!text || cap_parse_event_format(text, &s->layout.ev[k]) != 0) {
            snprintf(err, errlen,
                     "cannot read the %s event format from %s (kernel without block "
                     "tracepoints?)",
                     event_names[k], path);
            free(text);
            return SIM_ERR;
        }
        free(text);
    }
    return SIM_OK;
}

/* This process's own tracefs instance (stopped), its buffer, clock and the block
 * events enabled with a filter on the device. */
static int make_instance(cap_session *s, const char *root, uint32_t kdev, unsigned buffer_kb,
                         char *err, size_t errlen)
{
    remove_stale_instances(root);
    snprintf(s->inst, sizeof s->inst, "%s/instances/appsim-capture-%ld", root, (long)getpid());
    if (mkdir(s->inst, 0700) != 0) {
        snprintf(err, errlen, "cannot create the tracefs instance %s: %s", s->inst,
                 strerror(errno));
        s->inst[0] = 0;
        return SIM_ERR;
    }
    char val[64];
    snprintf(val, sizeof val, "%u", buffer_kb);
    if (write_file(s->inst, "tracing_on", "0", err, errlen) ||
        write_file(s->inst, "buffer_size_kb", val, err, errlen) ||
        write_file(s->inst, "trace_clock", "mono", err, errlen) ||
        write_file(s->inst, "options/overwrite", "0", err, errlen))
        return SIM_ERR;
    snprintf(val, sizeof val, "dev == %u", kdev);
    for (int k = 0; k < CAP_NKINDS; k++) {
        char ev[256];
        snprintf(ev, sizeof ev, "events/block/%s/filter", event_names[k]);
        if (write_file(s->inst, ev, val, err, errlen)) return SIM_ERR;
        snprintf(ev, sizeof ev, "events/block/%s/enable", event_names[k]);
        if (write_file(s->inst, ev, "1", err, errlen)) return SIM_ERR;
    }
    return SIM_OK;
}

/* One raw ring-buffer pipe per possible CPU, and a buffer for one page. */
static int open_cpu_pipes(cap_session *s, char *err, size_t errlen)
{
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    if (ncpu < 1) ncpu = 1;
    s->fds = sim_xmalloc((size_t)ncpu * sizeof *s->fds);
    s->bufsize = (size_t)(s->layout.data.offset + s->layout.data.size);
    if (s->bufsize < (size_t)sysconf(_SC_PAGESIZE)) s->bufsize = (size_t)sysconf(_SC_PAGESIZE);
    s->buf = sim_xmalloc(s->bufsize);
    char path[1024];
    for (long c = 0; c < ncpu; c++) {
        snprintf(path, sizeof path, "%s/per_cpu/cpu%ld/trace_pipe_raw", s->inst, c);
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            if (errno == ENOENT) continue; /* a CPU that is not possible on this machine */
            snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
            return SIM_ERR;
        }
        s->fds[s->ncpu++] = fd;
    }
    if (s->ncpu == 0) {
        snprintf(err, errlen, "no per-CPU ring buffers under %s/per_cpu", s->inst);
        return SIM_ERR;
    }
    return SIM_OK;
}

int cap_session_open(cap_session *s, uint32_t kdev, unsigned buffer_kb, size_t max_events,
                     char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->max_events = max_events;
    char root[256];
    if (tracefs_root(root, sizeof root, err, errlen) != 0) return SIM_ERR;
    if (read_layout(s, root, err, errlen) || make_instance(s, root, kdev, buffer_kb, err, errlen) ||
        open_cpu_pipes(s, err, errlen))
        return SIM_ERR;
    return write_file(s->inst, "tracing_on", "1", err, errlen);
}

static int add_event(void *ctx, const cap_event *ev)
{
    cap_session *s = ctx;
    if (s->nev == s->max_events) {
        s->over_limit++;
        return SIM_OK;
    }
    if (s->nev == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 65536;
        if (nc > s->max_events) nc = s->max_events;
        /* appsim-alloc: the capture goes on; an event that finds no memory is counted lost
         * (lost_over_max_events), as one over --max-events is */
        cap_event *n = realloc(s->ev, nc * sizeof *n);
        if (!n) {
            s->over_limit++;
            return SIM_OK;
        }
        s->ev = n;
        s->cap = nc;
    }
    s->ev[s->nev++] = *ev;
    return SIM_OK;
}

/* Reads every page a CPU's buffer holds now. */
static int drain_cpu(cap_session *s, int fd, char *err, size_t errlen)
{
    for (;;) {
        ssize_t n = read(fd, s->buf, s->bufsize);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) return SIM_OK;
            snprintf(err, errlen, "reading trace_pipe_raw: %s", strerror(errno));
            return SIM_ERR;
        }
        if (n == 0) return SIM_OK;
        if (cap_decode_page(&s->layout, s->buf, (size_t)n, add_event, s, &s->missed_in_pages) != 0)
            s->bad_pages++;
    }
}

int cap_session_poll(cap_session *s, int wait_ms, char *err, size_t errlen)
{
    if (wait_ms > 0) {
        struct pollfd pf[256];
        int n = s->ncpu < 256 ? s->ncpu : 256;
        for (int i = 0; i < n; i++) {
            pf[i].fd = s->fds[i];
            pf[i].events = POLLIN;
        }
        /* The ring buffer wakes pollers only past a watermark; the timeout bounds the
         * delay either way. */
        if (poll(pf, (nfds_t)n, wait_ms) < 0 && errno != EINTR) {
            snprintf(err, errlen, "poll on trace_pipe_raw: %s", strerror(errno));
            return SIM_ERR;
        }
    }
    for (int i = 0; i < s->ncpu; i++)
        if (drain_cpu(s, s->fds[i], err, errlen) != 0) return SIM_ERR;
    return SIM_OK;
}

static uint64_t stat_value(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

int cap_session_stop(cap_session *s, uint64_t *lost_kernel, char *err, size_t errlen)
{
    *lost_kernel = 0;
    if (write_file(s->inst, "tracing_on", "0", err, errlen) != 0) return SIM_ERR;
    if (cap_session_poll(s, 0, err, errlen) != 0) return SIM_ERR;
    for (int c = 0;; c++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/per_cpu/cpu%d/stats", s->inst, c);
        char *text = read_text(path);
        if (!text) {
            if (c >= s->ncpu) break;
            continue;
        }
        *lost_kernel += stat_value(text, "overrun:") + stat_value(text, "dropped events:");
        free(text);
    }
    return SIM_OK;
}

void cap_session_close(cap_session *s)
{
    for (int i = 0; i < s->ncpu; i++)
        close(s->fds[i]);
    free(s->fds);
    free(s->buf);
    free(s->ev);
    if (s->inst[0]) {
        char e[256];
        write_file(s->inst, "tracing_on", "0", e, sizeof e);
        for (int k = 0; k < CAP_NKINDS; k++) {
            char ev[256];
            snprintf(ev, sizeof ev, "events/block/%s/enable", event_names[k]);
            write_file(s->inst, ev, "0", e, sizeof e);
        }
        if (rmdir(s->inst) != 0)
            fprintf(stderr, "appsim: warning: could not remove the tracefs instance %s: %s\n",
                    s->inst, strerror(errno));
    }
    memset(s, 0, sizeof *s);
}
