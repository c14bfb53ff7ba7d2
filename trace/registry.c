/*
 * trace/registry.c: the registries of trace/ (formats and `appsim trace` subcommands,
 * both filled by constructors before main) and the `appsim trace` command that
 * dispatches to a subcommand by name.
 */
#include "trace/trace_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_FORMATS 32
#define MAX_SUBCOMMANDS 32

static const tr_format *formats[MAX_FORMATS + 1];
static int nformats;
static const tr_subcommand *subs[MAX_SUBCOMMANDS + 1];
static int nsubs;

void tr_register_format(const tr_format *f)
{
    if (nformats == MAX_FORMATS) {
        fprintf(stderr, "appsim: too many trace formats registered\n");
        abort();
    }
    int i = nformats++;
    while (i > 0 && strcmp(formats[i - 1]->name, f->name) > 0) {
        formats[i] = formats[i - 1];
        i--;
    }
    formats[i] = f;
}

const tr_format *tr_find_format(const char *name)
{
    for (int i = 0; i < nformats; i++)
        if (!strcmp(formats[i]->name, name)) return formats[i];
    return NULL;
}

const tr_format *const *tr_formats(void)
{
    return formats;
}

const char *tr_op_name(int op)
{
    static const char *names[] = {"read", "write", "flush", "trim"};
    return op >= 0 && op <= TR_DISCARD ? names[op] : "unknown";
}

void tr_register_subcommand(const tr_subcommand *sub)
{
    if (nsubs == MAX_SUBCOMMANDS) {
        fprintf(stderr, "appsim: too many trace subcommands registered\n");
        abort();
    }
    int i = nsubs++;
    while (i > 0 && strcmp(subs[i - 1]->name, sub->name) > 0) {
        subs[i] = subs[i - 1];
        i--;
    }
    subs[i] = sub;
}

void tr_subcommands_help(FILE *out)
{
    for (int i = 0; i < nsubs; i++)
        fprintf(out, "  %-10s %s\n", subs[i]->name, subs[i]->summary);
}

static void usage(FILE *out)
{
    fprintf(out, "usage: appsim trace <subcommand> [options] ...\n"
                 "       appsim trace <subcommand> --help\n\n"
                 "Reads, describes and rewrites block I/O traces (see also `appsim replay`)."
                 "\n\nsubcommands:\n");
    tr_subcommands_help(out);
}

static int trace_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return SIM_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return SIM_EXIT_OK;
    }
    for (int i = 0; i < nsubs; i++)
        if (!strcmp(subs[i]->name, argv[1])) return subs[i]->main(argc - 1, argv + 1);
    sim_error("unknown trace subcommand '%s'; `appsim trace --help` lists them", argv[1]);
    return SIM_EXIT_USAGE;
}

/* The subcommands' names, once all have registered (after the constructors). */
static const char *const *trace_actions(void)
{
    static const char *names[MAX_SUBCOMMANDS + 1];
    for (int i = 0; i < nsubs; i++)
        names[i] = subs[i]->name;
    names[nsubs] = NULL;
    return names;
}

static const sim_command trace_command = {
    .name = "trace",
    .summary = "describe, convert, slice and merge block I/O traces",
    .main = trace_main,
    .actions = trace_actions,
};
SIM_REGISTER_COMMAND(trace_command);

/* `appsim trace formats`: what can be read and written. */
static int formats_main(int argc, char **argv)
{
    bool json = false;
    sim_opt opts[] = {
        {"json", SIM_OPT_FLAG, &json, "print JSON", NULL, 0, 0, false},
        SIM_OPT_END,
    };
    int rc = sim_opts_parse("trace formats", opts, argc, argv, NULL, 0, NULL,
                            "appsim trace formats [--json]");
    if (rc) return rc < 0 ? SIM_EXIT_OK : rc;
    json_t *arr = json_array();
    for (int i = 0; i < nformats; i++) {
        const tr_format *f = formats[i];
        bool w = f->write_record != NULL;
        if (json)
            json_array_append_new(arr,
                                  json_pack("{s:s, s:s, s:b, s:b}", "name", f->name, "description",
                                            f->description, "read", 1, "write", w));
        else
            printf("  %-10s %s%s\n", f->name, f->description, w ? " (read, write)" : "");
    }
    if (json) {
        char *s = json_dumps(arr, JSON_INDENT(2));
        printf("%s\n", s);
        free(s);
    }
    json_decref(arr);
    return SIM_EXIT_OK;
}

static const tr_subcommand formats_sub = {"formats", "list the trace formats", formats_main};
TR_REGISTER_SUBCOMMAND(formats_sub);
