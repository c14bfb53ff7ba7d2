/*
 * sim/fault.c: the first storage fault of the process. A drive that returns ENOSPC or
 * EIO no longer measures what the user asked about, and a database that keeps being
 * written after a failed write can lose pages: so the first such error is recorded
 * here (by the storage engine, the SQLite VFS, the LMDB workload), every run then
 * stops as a guard would stop it, writers refuse further writes (sim_fault_noted),
 * the result is marked failed with the cause, and `appsim` exits non-zero with it.
 *
 * Running out of memory (sim/alloc.c) is recorded here too, with ENOMEM, so that a
 * run in progress stops and keeps its result the same way.
 *
 * Process-wide on purpose: one appsim process measures one target, and a fault seen
 * by one thread must stop the others before they write again.
 */
#include "sim/sim.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t fault_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int fault_errno; /* 0 = none; written after the message */
static char fault_msg[600];

bool sim_fault_errno_is_fatal(int err)
{
    switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EIO:
    case EROFS:
    case ENXIO:
    case ENODEV:
    case EFBIG:
        return true;
    default:
        return false;
    }
}

static const char *cause(int err)
{
    switch (err) {
    case ENOSPC:
        return "no space left on device";
    case EDQUOT:
        return "disk quota exceeded";
    case EIO:
        return "I/O error";
    case EROFS:
        return "read-only file system";
    case EFBIG:
        return "file too large";
    case ENOMEM:
        return "out of memory";
    default:
        return "device gone";
    }
}

bool sim_fault_note(int err, const char *fmt, ...)
{
    if (!sim_fault_errno_is_fatal(err)) return false;
    pthread_mutex_lock(&fault_mu);
    if (atomic_load(&fault_errno) == 0) {
        char what[400];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        snprintf(fault_msg, sizeof fault_msg, "%s %s", cause(err), what);
        atomic_store(&fault_errno, err);
        sim_warn("stopping: %s (the first storage error stops the run)", fault_msg);
    }
    pthread_mutex_unlock(&fault_mu);
    return true;
}

int sim_fault_noted(void)
{
    return atomic_load_explicit(&fault_errno, memory_order_acquire);
}

const char *sim_fault_message(void)
{
    return sim_fault_noted() ? fault_msg : NULL;
}

json_t *sim_fault_json(void)
{
    int err = sim_fault_noted();
    if (!err) return json_null();
    return json_pack("{s:s, s:i, s:s}", "cause", cause(err), "errno", err, "message", fault_msg);
}

void sim_fault_note_oom(size_t bytes, const char *file, int line)
{
    pthread_mutex_lock(&fault_mu);
    if (atomic_load(&fault_errno) == 0) {
        snprintf(fault_msg, sizeof fault_msg, "%s: %zu bytes could not be allocated (%s:%d)",
                 cause(ENOMEM), bytes, file, line);
        atomic_store(&fault_errno, ENOMEM);
        sim_warn("stopping: %s (the run stops and saves what it measured so far)", fault_msg);
    }
    pthread_mutex_unlock(&fault_mu);
}

void sim_fault_reset(void)
{
    pthread_mutex_lock(&fault_mu);
    atomic_store(&fault_errno, 0);
    fault_msg[0] = 0;
    pthread_mutex_unlock(&fault_mu);
}
