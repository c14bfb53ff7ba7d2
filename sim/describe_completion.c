/*
 * sim/describe_completion.c: bash and zsh completion for appsim, from the collected
 * option tables (describe.c). Both complete the command, its action or subcommand,
 * its options, a choice option's values, and file names where a path goes (string
 * options and positional arguments). Numbers, sizes and durations get no candidates.
 * Aliases (`--time` for `--duration`) are offered beside the option; old spellings
 * (sim_opt.deprecated) are not: the help does not show them and each use prints a note
 * asking for the new one, so completion should not teach them. They are still
 * recognised after the fact (bash completes their values, zsh skips their values).
 */
#include "sim/describe_internal.h"

#include <ctype.h>
#include <string.h>

/* s inside single quotes. */
static void sh_quoted(FILE *out, const char *s)
{
    fputc('\'', out);
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", out);
        else
            fputc(*s, out);
    fputc('\'', out);
}

/* "a|b|c" as "a b c". */
static void words_of_choices(FILE *out, const char *choices)
{
    for (const char *c = choices; *c; c++)
        fputc(*c == '|' ? ' ' : *c, out);
}

/* _appsim_value['COMMAND FLAG']: what follows the option (a choice, a path, nothing). */
static void bash_value(FILE *out, const d_table *t, const d_opt *o, const char *flag)
{
    fputs("_appsim_value[", out);
    sh_quoted(out, t->command);
    fprintf(out, "' %s']=", flag);
    if (o->choices) {
        fputs("'choice:", out);
        words_of_choices(out, o->choices);
        fputs("'\n", out);
    } else {
        fputs(o->path_value ? "path\n" : "none\n", out);
    }
}

/* The options offered are every name and alias; the values complete after old
 * spellings too. */
static void bash_table(FILE *out, const d_table *t)
{
    fputs("_appsim_opts[", out);
    sh_quoted(out, t->command);
    fputs("]='", out);
    for (size_t i = 0; i < t->nopts; i++) {
        fprintf(out, "%s ", t->opts[i].flag);
        for (char **a = t->opts[i].aliases; *a; a++)
            fprintf(out, "%s ", *a);
    }
    fputs("--help'\n", out);
    for (size_t i = 0; i < t->nopts; i++) {
        const d_opt *o = &t->opts[i];
        if (!o->takes_value) continue;
        bash_value(out, t, o, o->flag);
        for (char **a = o->aliases; *a; a++)
            bash_value(out, t, o, *a);
        for (char **a = o->old; *a; a++)
            bash_value(out, t, o, *a);
    }
}

static void bash_commands(FILE *out, const d_program *p)
{
    fputs("_appsim_commands='", out);
    for (size_t i = 0; i < p->ncmds; i++)
        fprintf(out, "%s ", p->cmds[i].cmd->name);
    fputs("--help --version'\n", out);
    for (size_t i = 0; i < p->ncmds; i++) {
        const d_command *c = &p->cmds[i];
        if (!c->nwords) continue;
        fprintf(out, "_appsim_words[%s]='", c->cmd->name);
        for (size_t w = 0; w < c->nwords; w++)
            fprintf(out, "%s%s", w ? " " : "", c->words[w]);
        fputs("'\n", out);
        for (size_t w = 0; w < c->nwords; w++)
            if (c->sub_table[w]) {
                fprintf(out, "_appsim_has_subcommands[%s]=1\n", c->cmd->name);
                break;
            }
    }
}

/* The completion function itself: the same for every table. */
static const char bash_function[] =
    "_appsim() {\n"
    "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
    "    COMPREPLY=()\n"
    "    if ((COMP_CWORD == 1)); then\n"
    "        COMPREPLY=($(compgen -W \"$_appsim_commands\" -- \"$cur\"))\n"
    "        return\n"
    "    fi\n"
    "    local key=${COMP_WORDS[1]} first=2\n"
    "    if [[ -n ${_appsim_has_subcommands[$key]-} ]]; then\n"
    "        if ((COMP_CWORD == 2)); then\n"
    "            COMPREPLY=($(compgen -W \"${_appsim_words[$key]-} --help\" -- \"$cur\"))\n"
    "            return\n"
    "        fi\n"
    "        key=\"$key ${COMP_WORDS[2]}\" first=3\n"
    "    fi\n"
    "    # --option=value: bash splits the word at '='. (Unset lookups are empty: set -u.)\n"
    "    if [[ $cur == = ]]; then\n"
    "        cur=\n"
    "    elif [[ $prev == = ]]; then\n"
    "        prev=${COMP_WORDS[COMP_CWORD-2]-}\n"
    "    fi\n"
    "    local value=${_appsim_value[\"$key $prev\"]-}\n"
    "    case $value in\n"
    "    choice:*)\n"
    "        COMPREPLY=($(compgen -W \"${value#choice:}\" -- \"$cur\"))\n"
    "        return ;;\n"
    "    path)\n"
    "        compopt -o filenames 2>/dev/null\n"
    "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
    "        return ;;\n"
    "    none)\n"
    "        return ;;\n"
    "    esac\n"
    "    if [[ $cur == -* ]]; then\n"
    "        COMPREPLY=($(compgen -W \"${_appsim_opts[$key]-}\" -- \"$cur\"))\n"
    "        return\n"
    "    fi\n"
    "    local words=\n"
    "    ((COMP_CWORD == first)) && words=${_appsim_words[$key]-}\n"
    "    compopt -o filenames 2>/dev/null\n"
    "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\") $(compgen -f -- \"$cur\"))\n"
    "}\n"
    "complete -F _appsim appsim\n";

void d_write_bash(FILE *out, const d_program *p)
{
    fputs("# bash completion for appsim\n"
          "# Generated by `appsim --completion bash` from the commands' option tables.\n"
          "declare -gA _appsim_opts=() _appsim_value=() _appsim_words=() "
          "_appsim_has_subcommands=()\n",
          out);
    bash_commands(out, p);
    for (size_t i = 0; i < p->ntables; i++)
        bash_table(out, p->tables[i]);
    fputs(bash_function, out);
}

/* ------------------------------------------------------------------ zsh */

/* Text inside an _arguments spec inside single quotes: ' for the shell, and []:\
 * which _arguments reads as structure. */
static void zsh_spec_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", out);
        else if (strchr("[]:\\", *s)) {
            fputc('\\', out);
            fputc(*s, out);
        } else
            fputc(*s, out);
    }
}

static void zsh_function_name(FILE *out, const char *command)
{
    fputs("_appsim_", out);
    for (const char *c = command; *c; c++)
        fputc(isalnum((unsigned char)*c) ? *c : '_', out);
}

/* One spec: `prefix` is "" (offered), "(--a --b)" (offered, and no more once one of the
 * spellings is on the line) or "!" (recognised, its value skipped, never offered). */
static void zsh_spec(FILE *out, const d_opt *o, const char *prefix, const char *flag)
{
    fprintf(out, "    '%s%s%s[", prefix, flag, o->takes_value ? "=" : "");
    zsh_spec_text(out, o->help);
    fputc(']', out);
    if (o->takes_value) {
        fputc(':', out);
        zsh_spec_text(out, o->hint);
        fputc(':', out);
        if (o->choices) {
            fputc('(', out);
            words_of_choices(out, o->choices);
            fputc(')', out);
        } else if (o->path_value) {
            fputs("_files", out);
        } else {
            fputc(' ', out);
        }
    }
    fputs("' \\\n", out);
}

/* The option and its aliases (one exclusion group, so that completing one spelling
 * does not offer the other), then its old spellings, recognised but not offered. */
static void zsh_option(FILE *out, const d_opt *o)
{
    char group[512] = "";
    if (o->aliases[0]) {
        size_t n = (size_t)snprintf(group, sizeof group, "(%s", o->flag);
        for (char **a = o->aliases; *a && n < sizeof group; a++)
            n += (size_t)snprintf(group + n, sizeof group - n, " %s", *a);
        if (n + 1 < sizeof group)
            strcat(group, ")");
        else
            group[0] = 0; /* too many to exclude: all offered */
    }
    zsh_spec(out, o, group, o->flag);
    for (char **a = o->aliases; *a; a++)
        zsh_spec(out, o, group, *a);
    for (char **a = o->old; *a; a++)
        zsh_spec(out, o, "!", *a);
}

/* The function for one table; `words` are the command's actions (NULL: none). */
static void zsh_table(FILE *out, const d_table *t, const d_command *actions_of)
{
    zsh_function_name(out, t->command);
    fputs("() {\n  _arguments -S \\\n", out);
    for (size_t i = 0; i < t->nopts; i++)
        zsh_option(out, &t->opts[i]);
    fputs("    '(- *)--help[show the options of this command]' \\\n", out);
    if (actions_of && actions_of->nwords) {
        fputs("    '1:action:(", out);
        for (size_t w = 0; w < actions_of->nwords; w++)
            fprintf(out, "%s%s", w ? " " : "", actions_of->words[w]);
        fputs(")' \\\n", out);
    }
    fputs("    '*:file:_files'\n}\n\n", out);
}

static void zsh_subcommands(FILE *out, const d_command *c)
{
    zsh_function_name(out, c->cmd->name);
    fputs("() {\n  if (( CURRENT == 2 )); then\n    compadd --", out);
    for (size_t w = 0; w < c->nwords; w++)
        fprintf(out, " %s", c->words[w]);
    fputs("\n    return\n  fi\n  local sub=$words[2]\n  shift words\n  (( CURRENT-- ))\n"
          "  case $sub in\n",
          out);
    for (size_t w = 0; w < c->nwords; w++) {
        if (!c->sub_table[w]) continue;
        fprintf(out, "  %s) ", c->words[w]);
        zsh_function_name(out, c->sub_table[w]->command);
        fputs(" ;;\n", out);
    }
    fputs("  esac\n}\n\n", out);
}

static const d_command *command_of(const d_program *p, const d_table *t)
{
    for (size_t i = 0; i < p->ncmds; i++)
        if (p->cmds[i].table == t) return &p->cmds[i];
    return NULL;
}

static void zsh_main(FILE *out, const d_program *p)
{
    fputs("_appsim() {\n  local -a commands=(\n", out);
    for (size_t i = 0; i < p->ncmds; i++) {
        char item[512];
        snprintf(item, sizeof item, "%s:%s", p->cmds[i].cmd->name, p->cmds[i].cmd->summary);
        fputs("    ", out);
        sh_quoted(out, item);
        fputc('\n', out);
    }
    fputs("  )\n  if (( CURRENT == 2 )); then\n"
          "    _describe -t commands 'appsim command' commands\n    return\n  fi\n"
          "  local cmd=$words[2]\n  shift words\n  (( CURRENT-- ))\n  case $cmd in\n",
          out);
    for (size_t i = 0; i < p->ncmds; i++) {
        fprintf(out, "  %s) ", p->cmds[i].cmd->name);
        zsh_function_name(out, p->cmds[i].cmd->name);
        fputs(" ;;\n", out);
    }
    fputs("  esac\n}\n\n_appsim \"$@\"\n", out);
}

void d_write_zsh(FILE *out, const d_program *p)
{
    fputs("#compdef appsim\n"
          "# zsh completion for appsim\n"
          "# Generated by `appsim --completion zsh` from the commands' option tables.\n\n",
          out);
    for (size_t i = 0; i < p->ntables; i++) {
        const d_command *c = command_of(p, p->tables[i]);
        zsh_table(out, p->tables[i], c);
    }
    for (size_t i = 0; i < p->ncmds; i++)
        if (!p->cmds[i].table) zsh_subcommands(out, &p->cmds[i]);
    zsh_main(out, p);
}
