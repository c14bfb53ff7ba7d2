/*
 * sim/signals.c: SIGINT/SIGTERM end the run cleanly (a flag the run polls, so the
 * result file is still written, marked interrupted; main() then exits 128 + signal);
 * a second signal exits at once.
 */
#include "sim/sim.h"

#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

static atomic_int signals_seen;
static atomic_int first_signal;

static void on_signal(int sig)
{
    int none = 0;
    atomic_compare_exchange_strong(&first_signal, &none, sig);
    if (atomic_fetch_add(&signals_seen, 1) > 0) {
        static const char msg[] = "\nappsim: second signal, exiting without a result\n";
        ssize_t r = write(2, msg, sizeof msg - 1);
        (void)r;
        _exit(128 + sig);
    }
}

void sim_signals_install(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

bool sim_interrupted(void)
{
    return atomic_load_explicit(&signals_seen, memory_order_relaxed) > 0;
}

int sim_interrupt_signal(void)
{
    return atomic_load(&first_signal);
}
