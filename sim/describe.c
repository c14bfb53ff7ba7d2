/*
 * sim/describe.c: `appsim --man` and `appsim --completion bash|zsh`. The manual page
 * and the completion scripts are written from the option tables themselves, so they
 * cannot drift from what the commands accept: each command's main runs with "--help"
 * (once per action or subcommand) while a describer is set, and sim_opts_parse hands
 * over its table instead of parsing (sim_opts_set_describer); nothing is run. The
 * build writes the page and the scripts this way, and `cmake --install` installs them.
 */
#include "sim/describe_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *dup_or_empty(const char *s)
{
    char *d = sim_xstrdup(s ? s : "");
    return d;
}

/* "--name" for a long name, "-o" for a one-letter one. */
static char *flag_of(const char *name, size_t len)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s%.*s", len > 1 ? "--" : "-", (int)len, name);
    return dup_or_empty(buf);
}

/* "time|t|fio:runtime" as {"--time", "-t", "--runtime", NULL} (a peer's name as the
 * flag it is typed as); an empty array for NULL. */
static char **flags_of(const char *names)
{
    size_t n = 0, cap = 1;
    for (const char *p = names; p && *p; p++)
        cap += *p == '|';
    char **flags = sim_xcalloc(cap + 1, sizeof *flags);
    sim_alias a;
    for (const char *p = sim_alias_next(names, &a); p; p = sim_alias_next(p, &a))
        flags[n++] = flag_of(a.name, a.name_len);
    return flags;
}

static void free_flags(char **flags)
{
    for (char **f = flags; f && *f; f++)
        free(*f);
    free(flags);
}

static void opt_from(d_opt *d, const sim_opt *o)
{
    char buf[256];
    d->flag = flag_of(o->name, strlen(o->name));
    d->aliases = flags_of(o->aliases);
    d->old = flags_of(o->deprecated);
    d->hint = dup_or_empty(sim_opt_value_hint(o));
    d->help = dup_or_empty(o->help);
    sim_opt_default_text(o, buf, sizeof buf);
    d->deflt = dup_or_empty(buf);
    d->takes_value = o->kind != SIM_OPT_FLAG;
    d->path_value = o->kind == SIM_OPT_STRING;
    d->choices = o->kind == SIM_OPT_CHOICE   ? dup_or_empty(o->choices)
                 : o->kind == SIM_OPT_WARMUP ? dup_or_empty("steady")
                 : o->suggestions            ? dup_or_empty(o->suggestions)
                                             : NULL;
}

typedef struct walk {
    d_program *p;
    d_table *found; /* the table the last command gave */
} walk;

static d_table *table_named(const d_program *p, const char *command)
{
    for (size_t i = 0; i < p->ntables; i++)
        if (!strcmp(p->tables[i]->command, command)) return p->tables[i];
    return NULL;
}

static void describe(void *ctx, const char *command, const char *usage, const sim_opt *opts)
{
    walk *w = ctx;
    w->found = table_named(w->p, command);
    if (w->found) return; /* another action of the same command */
    d_table *t = sim_xcalloc(1, sizeof *t);
    t->command = dup_or_empty(command);
    t->usage = usage ? dup_or_empty(usage) : NULL;
    for (const sim_opt *o = opts; o->name; o++)
        t->nopts++;
    t->opts = sim_xcalloc(t->nopts ? t->nopts : 1, sizeof *t->opts);
    for (size_t i = 0; i < t->nopts; i++)
        opt_from(&t->opts[i], &opts[i]);
    d_table **grown = sim_xrealloc(w->p->tables, (w->p->ntables + 1) * sizeof *grown);
    w->p->tables = grown;
    w->p->tables[w->p->ntables++] = t;
    w->found = t;
}

/* The command's main with [word] --help; the table it gave, or NULL. */
static d_table *table_of(walk *w, const sim_command *cmd, const char *word)
{
    char *argv[4];
    int argc = 0;
    argv[argc++] = (char *)cmd->name;
    if (word) argv[argc++] = (char *)word;
    argv[argc++] = "--help";
    argv[argc] = NULL;
    w->found = NULL;
    cmd->main(argc, argv);
    return w->found;
}

static int collect_command(walk *w, d_command *dc)
{
    const sim_command *cmd = dc->cmd;
    dc->table = table_of(w, cmd, NULL);
    const char *const *words = cmd->actions ? cmd->actions() : NULL;
    while (words && words[dc->nwords])
        dc->nwords++;
    dc->words = sim_xcalloc(dc->nwords + 1, sizeof *dc->words);
    dc->sub_table = sim_xcalloc(dc->nwords + 1, sizeof *dc->sub_table);
    for (size_t i = 0; i < dc->nwords; i++) {
        dc->words[i] = words[i];
        d_table *t = table_of(w, cmd, words[i]);
        if (t && strcmp(t->command, cmd->name)) {
            dc->sub_table[i] = t;
        } else if (t) {
            dc->table = t;
        } else if (!dc->table) {
            sim_error("--man: `appsim %s %s --help` gave no option table", cmd->name, words[i]);
            return SIM_EXIT_FAIL;
        }
    }
    if (!dc->table && !dc->nwords) {
        sim_error("--man: `appsim %s --help` gave no option table", cmd->name);
        return SIM_EXIT_FAIL;
    }
    return SIM_EXIT_OK;
}

int d_program_collect(d_program *p)
{
    memset(p, 0, sizeof *p);
    for (const sim_command *const *c = sim_commands(); *c; c++)
        p->ncmds++;
    p->cmds = sim_xcalloc(p->ncmds ? p->ncmds : 1, sizeof *p->cmds);
    /* The commands print nothing in this mode, but their help screens (trace's list of
     * subcommands) must not reach the page: stdout is parked on /dev/null meanwhile. */
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    FILE *null = fopen("/dev/null", "w");
    if (saved < 0 || !null) {
        sim_error("--man: cannot set stdout aside");
        return SIM_EXIT_FAIL;
    }
    dup2(fileno(null), STDOUT_FILENO);
    walk w = {.p = p};
    sim_opts_set_describer(describe, &w);
    int rc = 0;
    for (size_t i = 0; i < p->ncmds && !rc; i++) {
        p->cmds[i].cmd = sim_commands()[i];
        rc = collect_command(&w, &p->cmds[i]);
    }
    sim_opts_set_describer(NULL, NULL);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    fclose(null);
    return rc;
}

void d_program_free(d_program *p)
{
    for (size_t i = 0; i < p->ntables; i++) {
        d_table *t = p->tables[i];
        for (size_t j = 0; j < t->nopts; j++) {
            d_opt *o = &t->opts[j];
            free(o->flag);
            free(o->hint);
            free(o->help);
            free(o->deflt);
            free(o->choices);
            free_flags(o->aliases);
            free_flags(o->old);
        }
        free(t->opts);
        free(t->command);
        free(t->usage);
        free(t);
    }
    free(p->tables);
    for (size_t i = 0; i < p->ncmds; i++) {
        free(p->cmds[i].words);
        free(p->cmds[i].sub_table);
    }
    free(p->cmds);
    memset(p, 0, sizeof *p);
}

/* argv[0] is "--man" or "--completion"; the page or script goes to stdout. */
int sim_describe_main(int argc, char **argv)
{
    bool man = !strcmp(argv[0], "--man");
    const char *shell = argc > 1 ? argv[1] : "";
    if ((man && argc != 1) ||
        (!man && (argc != 2 || (strcmp(shell, "bash") && strcmp(shell, "zsh"))))) {
        sim_error("usage: appsim --man | appsim --completion bash|zsh (writes to stdout)");
        return SIM_EXIT_USAGE;
    }
    d_program p;
    int rc = d_program_collect(&p);
    if (!rc) {
        if (man)
            d_write_man(stdout, &p);
        else if (!strcmp(shell, "bash"))
            d_write_bash(stdout, &p);
        else
            d_write_zsh(stdout, &p);
        if (fflush(stdout) || ferror(stdout)) {
            sim_error("%s: writing stdout failed", argv[0]);
            rc = SIM_EXIT_FAIL;
        }
    }
    d_program_free(&p);
    return rc;
}
