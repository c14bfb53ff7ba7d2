/*
 * sim/progress.c: the progress line of every long step (preconditioning, loading,
 * warm-up and measured phase, checks): what is done, the share and the ETA. On a
 * terminal one line is rewritten once a second; otherwise (a log) a full line comes
 * every SIM_PROGRESS_LOG_NS, so that a log grows slowly but still says how far it got.
 */
#include "sim/sim.h"

#include <unistd.h>

#define SIM_PROGRESS_TTY_NS 1000000000ull
#define SIM_PROGRESS_LOG_NS 10000000000ull

void sim_progress_start(sim_progress *p, const char *what, uint64_t total, bool quiet)
{
    *p = (sim_progress){.what = what, .total = total, .quiet = quiet, .t0 = sim_now_ns()};
    p->tty = !quiet && isatty(2);
    p->next = p->t0 + (p->tty ? SIM_PROGRESS_TTY_NS : SIM_PROGRESS_LOG_NS);
}

bool sim_progress_due(sim_progress *p, uint64_t now)
{
    if (p->quiet || now < p->next) return false;
    p->next = now + (p->tty ? SIM_PROGRESS_TTY_NS : SIM_PROGRESS_LOG_NS);
    return true;
}

const char *sim_format_eta(double seconds, char *buf, size_t len)
{
    if (seconds < 0) seconds = 0;
    unsigned long long s = (unsigned long long)(seconds + 0.5);
    if (s < 120)
        snprintf(buf, len, "%llu s", s);
    else if (s < 7200)
        snprintf(buf, len, "%llu min %llu s", s / 60, s % 60);
    else
        snprintf(buf, len, "%llu h %llu min", s / 3600, s / 60 % 60);
    return buf;
}

void sim_progress_line(sim_progress *p, uint64_t now, uint64_t done, const char *detail, bool last)
{
    if (p->quiet) return;
    double secs = (double)(now - p->t0) / 1e9;
    double share = p->total ? (double)done / (double)p->total : 0;
    char eta[48] = "unknown";
    if (done > 0 && done <= p->total && secs > 0)
        sim_format_eta(secs * (double)(p->total - done) / (double)done, eta, sizeof eta);
    fprintf(stderr, "%s%s: %s (%.1f%%), ETA %s%s", p->tty ? "\r\033[K" : "", p->what, detail,
            100.0 * share, eta, p->tty && !last ? "" : "\n");
    fflush(stderr);
}

void sim_progress_clear(const sim_progress *p)
{
    if (p->tty) fputs("\r\033[K", stderr);
}
