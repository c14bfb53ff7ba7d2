/*
 * sim/command.c: the command registry and the message helpers every command uses.
 * Commands register from constructors, before main, on one thread.
 */
#include "sim/sim_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

SIM_REGISTRY(registry, sim_command, "commands", 32);
static bool quiet;

const char *sim_exit_name(int status)
{
    switch (status) {
    case SIM_EXIT_OK:
        return "ok";
    case SIM_EXIT_FAIL:
        return "failed";
    case SIM_EXIT_USAGE:
        return "usage";
    case SIM_EXIT_NOMEM:
        return "out of memory";
    }
    return "unknown";
}

const char *sim_status_name(int status)
{
    switch (status) {
    case SIM_OK:
        return "ok";
    case SIM_ERR:
        return "error";
    }
    return "unknown";
}
/* The real stdout while --json - claims it (sim_json_claim_stdout), else -1. */
static int json_fd = -1;

void sim_register_command(const sim_command *cmd)
{
    sim_registry_add(&registry, cmd);
}

const sim_command *sim_find_command(const char *name)
{
    return sim_registry_find(&registry, name);
}

const sim_command *const *sim_commands(void)
{
    return (const sim_command *const *)registry.items;
}

void sim_json_claim_stdout(void)
{
    if (json_fd >= 0) return;
    fflush(stdout);
    json_fd = dup(STDOUT_FILENO);
    /* Text meant for stdout goes to stderr; if that fails, stdout stays as it was. */
    if (json_fd >= 0 && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        close(json_fd);
        json_fd = -1;
    }
}

int sim_json_stdout_fd(void)
{
    return json_fd;
}

static void release_stdout(void)
{
    if (json_fd < 0) return;
    fflush(stdout);
    dup2(json_fd, STDOUT_FILENO);
    close(json_fd);
    json_fd = -1;
}

int sim_command_run(const sim_command *cmd, int argc, char **argv)
{
    bool outer_quiet = quiet;
    quiet = false;
    int rc = cmd->main(argc, argv);
    release_stdout();
    quiet = outer_quiet;
    /* A storage fault outranks everything (the figures are not the drive's), then a
     * signal: whatever status the command returned after either. Out of memory is
     * recorded as a fault (sim/alloc.c) with its own status. */
    if (sim_fault_noted()) return sim_fault_noted() == ENOMEM ? SIM_EXIT_NOMEM : SIM_EXIT_FAIL;
    if (sim_interrupt_signal()) return 128 + sim_interrupt_signal();
    return rc;
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

void sim_note(const char *fmt, ...)
{
    if (sim_ranks_rank() > 0) return; /* rank 0 speaks for the job */
    va_list ap;
    va_start(ap, fmt);
    vmsg("note: ", fmt, ap);
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

bool sim_quiet(void)
{
    return quiet;
}
