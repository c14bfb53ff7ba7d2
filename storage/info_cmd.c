/*
 * storage/info_cmd.c: `appsim info --target PATH [--json FILE]\nDescribes the target (filesystem,
 * partition, disk identity); writes nothing.`: prints what appsim knows about the target (kind,
 * filesystem, partition, whole disk, identity fields, NVMe identify data, what is unknown) and
 * optionally writes it as a result document. Opens the target read-only: info never creates or
 * changes anything.
 */
#include "storage/target_internal.h"

#include <string.h>

static void print_value(FILE *out, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        fputs(json_string_value(v), out);
        break;
    case JSON_INTEGER:
        fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        fprintf(out, "%g", json_real_value(v));
        break;
    case JSON_TRUE:
        fputs("yes", out);
        break;
    case JSON_FALSE:
        fputs("no", out);
        break;
    case JSON_NULL:
        fputs("-", out);
        break;
    case JSON_ARRAY: {
        size_t i;
        json_t *e;
        if (json_array_size(v) == 0) fputs("(none)", out);
        json_array_foreach(v, i, e)
        {
            if (i) fputs(", ", out);
            print_value(out, e);
        }
        break;
    }
    default:
        break;
    }
}

static void print_object(FILE *out, const json_t *o, int indent)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        if (json_is_object(v)) {
            fprintf(out, "%*s%s:\n", indent, "", k);
            print_object(out, v, indent + 2);
            continue;
        }
        fprintf(out, "%*s%-24s ", indent, "", k);
        print_value(out, v);
        fputc('\n', out);
    }
}

static int info_main(int argc, char **argv)
{
    const char *target = NULL, *json_path = NULL;
    sim_opt opts[] = {
        SIM_VOCAB_TARGET(&target, "PATH", "directory or block device to describe"),
        SIM_VOCAB_JSON(&json_path, NULL),
        SIM_OPT_END,
    };
    int np = 0;
    int rc = sim_opts_parse("info", opts, argc, argv, NULL, 0, &np,
                            "appsim info --target PATH [--json FILE]\nDescribes the target "
                            "(filesystem, partition, disk identity); writes nothing.");
    if (rc) return sim_opts_exit_status(rc);
    if (!target) {
        sim_error("info needs --target PATH (a directory on the drive, or a block device)");
        return SIM_EXIT_USAGE;
    }
    st_target_opts to = {.path = target, .read_only = true};
    st_target *t;
    char err[1024];
    rc = st_target_open(&to, &t, err, sizeof err);
    if (rc) {
        sim_error("%s", err);
        return rc;
    }
    json_t *j = st_target_json(t);
    st_target_close(t);
    if (!sim_json_on_stdout(json_path)) {
        printf("target %s\n", target);
        print_object(stdout, j, 2);
    }
    rc = SIM_EXIT_OK;
    if (json_path) {
        json_t *doc = sim_result_new("info", argc, argv, opts);
        json_object_set(doc, "target", j);
        rc = sim_result_save(doc, json_path);
        json_decref(doc);
    }
    json_decref(j);
    return rc;
}

static const sim_command info_command = {
    .name = "info",
    .summary = "describe a target: filesystem, partition, disk identity",
    .main = info_main,
};
SIM_REGISTER_COMMAND(info_command)
