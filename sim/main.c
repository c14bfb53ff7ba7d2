/*
 * sim/main.c: `appsim <command> [action] [options]`. Dispatches to the commands
 * that registered themselves (sim/sim.h, SIM_REGISTER_COMMAND).
 */
#include "sim/sim.h"

#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: appsim <command> [action] [options]\n"
                 "       appsim <command> --help | appsim --help | appsim --version\n\n"
                 "Compares storage drives on application-level metrics.\n\ncommands:\n");
    for (const sim_command *const *c = sim_commands(); *c; c++)
        fprintf(out, "  %-10s %s\n", (*c)->name, (*c)->summary);
    fprintf(out, "\nExit status: 0 success, 1 run failure, 2 usage error.\n");
}

int main(int argc, char **argv)
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
    const sim_command *cmd = sim_find_command(argv[1]);
    if (!cmd) {
        sim_error("unknown command '%s'; `appsim --help` lists the commands", argv[1]);
        return SIM_EXIT_USAGE;
    }
    sim_signals_install();
    return cmd->main(argc - 1, argv + 1);
}
