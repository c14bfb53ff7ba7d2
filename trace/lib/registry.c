/*
 * trace/lib/registry.c: the registries of trace/ (formats and `appsim trace` subcommands,
 * both filled by constructors before main) and the `appsim trace` command that
 * dispatches to a subcommand by name.
 */
#include "trace/lib/lib_internal.h"

#include <stdlib.h>
#include <string.h>

SIM_REGISTRY(format_registry, tr_format, "trace formats", 32);
SIM_REGISTRY(sub_registry, tr_subcommand, "trace subcommands", 32);

void tr_register_format(const tr_format *f)
{
    sim_registry_add(&format_registry, f);
}

const tr_format *tr_find_format(const char *name)
{
    return sim_registry_find(&format_registry, name);
}

const tr_format *const *tr_formats(void)
{
    return (const tr_format *const *)format_registry.items;
}

const char *tr_next_name(int answer)
{
    switch (answer) {
    case TR_NEXT_ERROR:
        return "error";
    case TR_NEXT_END:
        return "end";
    case TR_NEXT_RECORD:
        return "record";
    }
    return "unknown";
}

const char *tr_parse_name(int answer)
{
    switch (answer) {
    case TR_PARSE_BAD:
        return "bad";
    case TR_PARSE_NONE:
        return "none";
    case TR_PARSE_RECORD:
        return "record";
    case TR_PARSE_END:
        return "end";
    case TR_PARSE_HELD:
        return "held";
    }
    return "unknown";
}

const char *tr_op_name(int op)
{
    static const char *names[] = {"read", "write", "flush", "trim"};
    return op >= 0 && op <= TR_DISCARD ? names[op] : "unknown";
}

void tr_register_subcommand(const tr_subcommand *sub)
{
    sim_registry_add(&sub_registry, sub);
}

void tr_subcommands_help(FILE *out)
{
    for (const tr_subcommand *const *s = (const tr_subcommand *const *)sub_registry.items; *s; s++)
        fprintf(out, "  %-10s %s\n", (*s)->name, (*s)->summary);
}

static void usage(FILE *out)
{
    fprintf(out, "usage: appsim trace <subcommand> [options] ...\n"
                 "       appsim trace <subcommand> --help\n\n"
                 "Reads, describes and rewrites block I/O traces (see also `appsim replay`)."
                 "\n\nsubcommands:\n");
    tr_subcommands_help(out);
}

static const char *const *trace_actions(void);

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
    const tr_subcommand *sub = sim_registry_find(&sub_registry, argv[1]);
    if (sub) return sub->main(argc - 1, argv + 1);
    return sim_refuse_unknown("trace subcommand", argv[1], trace_actions(),
                              "`appsim trace --help` lists them");
}

/* The subcommands' names, once all have registered (after the constructors). */
static const char *const *trace_actions(void)
{
    static const char *names[32 + 1]; /* the registry's capacity, and its NULL */
    int n = 0;
    for (const tr_subcommand *const *s = (const tr_subcommand *const *)sub_registry.items;
         *s && n < 32; s++)
        names[n++] = (*s)->name;
    names[n] = NULL;
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
    const char *json = NULL;
    sim_opt opts[] = {
        SIM_VOCAB_JSON(&json, NULL),
        SIM_OPT_END,
    };
    opts[0].bare_value = "-"; /* the old `--json` flag printed JSON on stdout */
    int rc = sim_opts_parse("trace formats", opts, argc, argv, NULL, 0, NULL,
                            "appsim trace formats [--json FILE]");
    if (rc) return sim_opts_exit_status(rc);
    json_t *arr = json_array();
    for (const tr_format *const *fp = tr_formats(); *fp; fp++) {
        const tr_format *f = *fp;
        bool w = f->write_record != NULL;
        json_array_append_new(arr, json_pack("{s:s, s:s, s:b, s:b}", "name", f->name, "description",
                                             f->description, "read", 1, "write", w));
        if (!sim_json_on_stdout(json))
            printf("  %-10s %s%s\n", f->name, f->description, w ? " (read, write)" : "");
    }
    rc = sim_result_save(arr, json);
    json_decref(arr);
    return rc;
}

static const tr_subcommand formats_sub = {"formats", "list the trace formats", formats_main};
TR_REGISTER_SUBCOMMAND(formats_sub);
