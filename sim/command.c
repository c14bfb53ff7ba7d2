/*
 * sim/command.c: the command registry and the message helpers every command uses.
 * Commands register from constructors, before main, on one thread.
 */
#include "sim/sim_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_COMMANDS 32

static const sim_command *registry[MAX_COMMANDS + 1];
static int nregistered;
static bool quiet;

void sim_register_command(const sim_command *cmd)
{
    if (nregistered == MAX_COMMANDS) {
        fprintf(stderr, "appsim: too many commands registered\n");
        abort();
    }
    /* Keep the table sorted by name so that --help is stable. */
    int i = nregistered++;
    while (i > 0 && strcmp(registry[i - 1]->name, cmd->name) > 0) {
        registry[i] = registry[i - 1];
        i--;
    }
    registry[i] = cmd;
}

const sim_command *sim_find_command(const char *name)
{
    for (int i = 0; i < nregistered; i++)
        if (!strcmp(registry[i]->name, name)) return registry[i];
    return NULL;
}

const sim_command *const *sim_commands(void)
{
    return registry;
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
    char line[4096], who[300] = "";
    vsnprintf(line, sizeof line, fmt, ap);
    if (sim_ranks_size() > 1)
        snprintf(who, sizeof who, "rank %d on %s: ", sim_ranks_rank(), sim_ranks_host());
    fprintf(stderr, "appsim: %s%s%s\n", who, prefix, line);
}

void sim_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char line[4096];
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    sim_ranks_note_error(line);
    if (sim_ranks_size() > 1) /* one write, so that ranks' lines do not interleave */
        fprintf(stderr, "appsim: rank %d on %s: %s\n", sim_ranks_rank(), sim_ranks_host(), line);
    else
        fprintf(stderr, "appsim: %s\n", line);
}

void sim_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("warning: ", fmt, ap);
    va_end(ap);
}

void sim_info(const char *fmt, ...)
{
    /* Rank 0 speaks for the job; the others' lines would repeat it. */
    if (quiet || sim_ranks_rank() > 0) return;
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}

void sim_set_quiet(bool q)
{
    quiet = q;
}
