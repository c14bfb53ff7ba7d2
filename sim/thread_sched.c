/*
 * sim/thread_sched.c: the CPU scheduling class of the threads that run transactions
 * (docs/sim.md, "Worker scheduling").
 *
 * On a machine with fewer cores than connections, a connection that wakes (its read
 * done, its commit durable) preempts whichever thread is running, and under SQLite's
 * one writer that is often the thread holding the writer lock: every other writer then
 * waits for a thread that is not running. Linux's SCHED_BATCH keeps the fair share of
 * SCHED_OTHER but a waking batch thread does not preempt the running one; it runs at
 * the next scheduling point instead. Any user may move its own threads to it.
 */
#include "sim/sim.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

int sim_thread_set_cpu_sched(const char *policy, char *err, size_t errlen)
{
    int want;
    if (!policy || !strcmp(policy, "normal"))
        want = SCHED_OTHER;
    else if (!strcmp(policy, "batch"))
        want = SCHED_BATCH;
    else {
        snprintf(err, errlen, "unknown CPU scheduling policy \"%s\" (batch or normal)", policy);
        return SIM_ERR;
    }
    struct sched_param sp = {.sched_priority = 0};
    int rc = pthread_setschedparam(pthread_self(), want, &sp);
    if (rc) {
        snprintf(err, errlen,
                 "cannot move the thread to the %s scheduling policy: %s; run with "
                 "--cpu-sched normal",
                 policy, strerror(rc));
        return SIM_ERR;
    }
    return SIM_OK;
}
