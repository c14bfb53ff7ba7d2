/*
 * sim/describe_internal.h: every command's option tables, collected without running
 * anything (describe.c), for the writers of the manual page (describe_man.c) and the
 * shell completion (describe_completion.c). Private to sim/.
 *
 * A table belongs to the command string its command gave sim_opts_parse: "tpcc" (the
 * same table for every action of tpcc) or "trace info" (a subcommand of trace with a
 * table of its own).
 */
#ifndef APPSIM_SIM_DESCRIBE_INTERNAL_H
#define APPSIM_SIM_DESCRIBE_INTERNAL_H

#include "sim/sim.h"

typedef struct d_opt {
    char *flag;    /* "--target" or "-o" */
    char *hint;    /* "DIR", "N", "a|b|c"; "" for a flag */
    char *help;    /* "" when none */
    char *deflt;   /* the default as the help shows it; "" when none */
    char *choices; /* "a|b|c" for a choice ("steady" for a warm-up); NULL otherwise */
    /* Other spellings as flags ("--time"), each NULL-terminated: the aliases are offered
     * like the option itself; the old spellings (sim_opt.deprecated) are recognised by
     * the completion (their values complete) but never offered, as the help never shows
     * them: completing them would teach the spelling that prints a note on every use. */
    char **aliases;
    char **old;
    bool takes_value;
    bool path_value; /* a string: a file, directory or device */
} d_opt;

typedef struct d_table {
    char *command; /* "tpcc", "trace info" */
    char *usage;   /* the command's usage text; NULL when it has none */
    d_opt *opts;
    size_t nopts;
} d_table;

typedef struct d_command {
    const sim_command *cmd;
    d_table *table;      /* its own table; NULL when only its subcommands have one */
    const char **words;  /* actions and subcommands (sim_command.actions); NULL-terminated */
    d_table **sub_table; /* per word: the subcommand's table, or NULL for an action */
    size_t nwords;
} d_command;

typedef struct d_program {
    d_command *cmds;
    size_t ncmds;
    d_table **tables; /* every distinct table, in the order found */
    size_t ntables;
} d_program;

/* Walks every registered command; 0, or SIM_EXIT_FAIL with a message when a command
 * gave no table. */
int d_program_collect(d_program *p);
void d_program_free(d_program *p);

/* `appsim --man` and `appsim --completion bash|zsh` (argv[0] is the option). */
int sim_describe_main(int argc, char **argv);

void d_write_man(FILE *out, const d_program *p);
void d_write_bash(FILE *out, const d_program *p);
void d_write_zsh(FILE *out, const d_program *p);

#endif
