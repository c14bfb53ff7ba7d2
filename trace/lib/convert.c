/*
 * trace/lib/convert.c: `appsim trace convert TRACE -o OUT --to FORMAT`: rewrites a trace
 * in another format (appsim's compact binary for fast repeated replays, fio's iolog v3
 * to cross-check a replay with fio), streaming, with the reader's counts reported.
 */
#include "trace/lib/lib_internal.h"

#include <string.h>

/* Copies src into a new file; the shared end of convert, slice and merge. rec_filter
 * answers TR_FILTER_*. */
int tr_copy_records(tr_source *src, const char *out, const char *to, const tr_writer_opts *wo,
                    int (*rec_filter)(void *ctx, tr_record *r), void *ctx, uint64_t *written)
{
    tr_writer *w;
    char err[1024];
    int rc = tr_writer_open(out, to, wo, &w, err, sizeof err);
    if (rc) {
        sim_error("%s", err);
        return rc;
    }
    tr_record r;
    int got;
    *written = 0;
    while ((got = tr_next(src, &r)) == TR_NEXT_RECORD) {
        int keep = rec_filter ? rec_filter(ctx, &r) : TR_FILTER_WRITE;
        if (keep == TR_FILTER_STOP) break;
        if (keep == TR_FILTER_SKIP) continue;
        if (tr_writer_put(w, &r) < 0) break;
        (*written)++;
    }
    if (got == TR_NEXT_ERROR) {
        sim_error("%s", tr_error(src));
        tr_writer_abort(w); /* no partial output under the final name */
        return SIM_EXIT_USAGE;
    }
    if ((rc = tr_writer_close(w, err, sizeof err)) != 0) {
        sim_error("%s", err);
        return rc;
    }
    return SIM_EXIT_OK;
}

static int convert_main(int argc, char **argv)
{
    const char *format = NULL, *out = NULL, *to = "appsim", *fio_file = NULL;
    uint64_t volume = 0, window = 65536;
    bool skip_bad = false, force = false;
    sim_opt opts[] = {
        TR_OUTPUT_OPTS(force, out, to, fio_file),
        TR_SOURCE_OPTS(opts, format, volume, skip_bad, window),
        SIM_OPT_END,
    };
    char *pos[1];
    int npos = 0;
    int rc = sim_opts_parse("trace convert", opts, argc, argv, pos, 1, &npos,
                            "appsim trace convert TRACE -o OUT [--to appsim|fio-v3]");
    if (rc) return sim_opts_exit_status(rc);
    if (npos != 1 || !out) {
        sim_error("trace convert needs a trace and -o OUT");
        return SIM_EXIT_USAGE;
    }
    if (fio_file && strcmp(to, "fio-v3")) {
        sim_error("--fio-file applies to --to fio-v3 only");
        return SIM_EXIT_USAGE;
    }
    tr_source *src;
    if ((rc = tr_open_cli(pos[0], format, opts, volume, skip_bad, window, &src))) return rc;
    uint64_t n = 0;
    tr_writer_opts wo = {.fio_file = fio_file, .overwrite = force};
    rc = tr_copy_records(src, out, to, &wo, NULL, NULL, &n);
    if (rc == 0) {
        json_t *st = tr_source_stats_json(src);
        sim_info("wrote %llu records to %s (%s); read %s: %lld skipped bad, %lld reordered",
                 (unsigned long long)n, out, to, tr_source_format(src),
                 (long long)json_integer_value(json_object_get(st, "skipped_bad")),
                 (long long)json_integer_value(json_object_get(st, "reordered")));
        json_decref(st);
    }
    tr_close(src);
    return rc;
}

static const tr_subcommand convert_sub = {
    "convert", "rewrite a trace in appsim's binary format or as a fio iolog v3", convert_main};
TR_REGISTER_SUBCOMMAND(convert_sub);
