/*
 * sim/alloc.c: the one allocation policy (sim/sim.h, "memory"). Every allocation of
 * appsim's own goes through these functions, which never return NULL.
 *
 * A reserve is held from start-up so that running out of memory the first time does
 * not have to end the process on the spot: the reserve is given back, the allocation
 * retried, and the shortage recorded as the process's fault, so a run in progress
 * stops at its next check and saves its result marked failed. Only when that is not
 * enough does the process exit here, with a message that says what it could not get.
 */
#include "sim/sim.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Enough for a run to stop and write its result (a JSON document of a few MiB at
 * most) once the shortage is noted. Only address space until touched. */
#define RESERVE_BYTES ((size_t)16 << 20)

static void *_Atomic reserve;

__attribute__((constructor)) static void take_reserve(void)
{
    atomic_store(&reserve, malloc(RESERVE_BYTES)); /* appsim-alloc: the reserve itself */
}

bool sim_alloc_reserve_held(void)
{
    return atomic_load(&reserve) != NULL;
}

/* No stdio and no allocation on the way out: only a stack buffer and write(2). */
__attribute__((noreturn)) static void out_of_memory(size_t bytes, const char *file, int line)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg,
                     "appsim: out of memory: %zu bytes could not be allocated (%s:%d); the "
                     "command stops without saving its result; give it more memory (ulimit -v, "
                     "the container's limit) or a smaller configuration\n",
                     bytes, file, line);
    if (n > (int)sizeof msg - 1) n = (int)sizeof msg - 1;
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, msg, (size_t)n);
        (void)w;
    }
    _exit(SIM_EXIT_NOMEM);
}

/* Called after an allocation of `bytes` failed: gives the reserve back (the caller
 * retries once) after noting the shortage so that runs stop; exits when the reserve is
 * spent or smaller than the request (giving it back could not help). */
static void release_reserve(size_t bytes, const char *file, int line)
{
    if (bytes > RESERVE_BYTES) out_of_memory(bytes, file, line);
    void *r = atomic_exchange(&reserve, NULL);
    if (!r) out_of_memory(bytes, file, line);
    free(r); /* appsim-alloc: the reserve itself */
    sim_fault_note_oom(bytes, file, line);
}

void *sim_xmalloc_at(size_t n, const char *file, int line)
{
    if (n == 0) n = 1; /* a real block, so that the result is never NULL */
    void *p;
    while (!(p = malloc(n))) /* appsim-alloc: the wrapper */
        release_reserve(n, file, line);
    return p;
}

void *sim_xcalloc_at(size_t count, size_t size, const char *file, int line)
{
    if (count == 0 || size == 0) count = size = 1;
    if (count > SIZE_MAX / size) out_of_memory(SIZE_MAX, file, line); /* no retry helps */
    void *p;
    while (!(p = calloc(count, size))) /* appsim-alloc: the wrapper */
        release_reserve(count * size, file, line);
    return p;
}

void *sim_xrealloc_at(void *p, size_t n, const char *file, int line)
{
    if (n == 0) n = 1; /* realloc(p, 0) may free p and return NULL */
    void *q;
    while (!(q = realloc(p, n))) /* appsim-alloc: the wrapper */
        release_reserve(n, file, line);
    return q;
}

char *sim_xstrdup_at(const char *s, const char *file, int line)
{
    size_t n = strlen(s) + 1;
    return memcpy(sim_xmalloc_at(n, file, line), s, n);
}

char *sim_xstrndup_at(const char *s, size_t max, const char *file, int line)
{
    size_t n = strnlen(s, max);
    char *d = sim_xmalloc_at(n + 1, file, line);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *sim_xvasprintf_at(const char *file, int line, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    /* n < 0: glibc fails so on a text over INT_MAX bytes, or without memory */
    char *s = n < 0 ? NULL : sim_xmalloc_at((size_t)n + 1, file, line);
    if (s) vsnprintf(s, (size_t)n + 1, fmt, again);
    va_end(again);
    if (!s) out_of_memory(SIZE_MAX, file, line);
    return s;
}

char *sim_xasprintf_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = sim_xvasprintf_at(file, line, fmt, ap);
    va_end(ap);
    return s;
}
