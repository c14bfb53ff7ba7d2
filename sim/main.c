/*
 * sim/main.c: `appsim <command> [action] [options]`. Dispatches to the commands
 * that registered themselves (sim/sim.h, SIM_REGISTER_COMMAND).
 */
#include "sim/describe_internal.h"

#include <errno.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: appsim <command> [action] [options]\n"
                 "       appsim <command> --help | appsim --help | appsim --version\n\n"
                 "Compares storage drives on application-level metrics.\n\ncommands:\n");
    for (const sim_command *const *c = sim_commands(); *c; c++)
        fprintf(out, "  %-10s %s\n", (*c)->name, (*c)->summary);
    fprintf(out, "\nExit status: 0 success, 1 run failure (a storage error stops the run: the\n"
                 "result is marked failed), 2 usage error, 130 interrupted by SIGINT, 143 by\n"
                 "SIGTERM (the result of the interrupted run is still written).\n");
}

static int run_command(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return SIM_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return SIM_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("appsim %s\n", APPSIM_VERSION);
        return SIM_EXIT_OK;
    }
    /* Not in the usage: the build writes the man page and completion with these. */
    if (!strcmp(argv[1], "--man") || !strcmp(argv[1], "--completion"))
        return sim_describe_main(argc - 1, argv + 1);
    const sim_command *cmd = sim_find_command(argv[1]);
    if (!cmd) {
        const char *names[64] = {0};
        size_t n = 0;
        for (const sim_command *const *c = sim_commands(); *c && n + 1 < 64; c++)
            names[n++] = (*c)->name;
        return sim_refuse_unknown("command", argv[1], names, "`appsim --help` lists the commands");
    }
    sim_signals_install();
    int rc = sim_command_run(cmd, argc - 1, argv + 1);
    /* A storage fault outranks everything: the figures of this run are not the drive's. */
    if (sim_fault_noted() == ENOMEM)
        sim_error("failed: %s; the run stopped and its result (if any) is marked failed; give "
                  "appsim more memory (ulimit -v, the container's limit) or a smaller "
                  "configuration",
                  sim_fault_message());
    else if (sim_fault_noted())
        sim_error("failed: %s; the run stopped at this first storage error and its result "
                  "(if any) is marked failed; free space or fix the drive (then `check` "
                  "verifies a database)",
                  sim_fault_message());
    return rc;
}

int main(int argc, char **argv)
{
    /* Under mpirun or srun every rank runs the command; docs/mpi.md. */
    int rc = sim_ranks_init(&argc, &argv);
    if (rc) return rc;
    return sim_ranks_finish(run_command(argc, argv));
}
