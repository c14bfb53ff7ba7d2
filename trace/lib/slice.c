/*
 * trace/lib/slice.c: `appsim trace slice TRACE -o OUT --from T --until T`: the records of a
 * time window (times since the trace's first record), written with times relative to
 * the window's start, so the slice replays as that part of the trace.
 */
#include "trace/lib/lib_internal.h"

#include <string.h>

typedef struct window {
    uint64_t from, until;
} window;

static int in_window(void *ctx, tr_record *r)
{
    const window *w = ctx;
    if (r->time_ns >= w->until)
        return TR_FILTER_STOP; /* records come in time order: nothing later can be inside */
    if (r->time_ns < w->from) return TR_FILTER_SKIP;
    r->time_ns -= w->from;
    return TR_FILTER_WRITE;
}

static int slice_main(int argc, char **argv)
{
    const char *format = NULL, *out = NULL, *to = "appsim", *fio_file = NULL;
    uint64_t volume = 0, sortwin = 65536, from = 0, until = 0;
    bool skip_bad = false, force = false;
    sim_opt opts[] = {
        TR_OUTPUT_OPTS(force, out, to, fio_file),
        {.name = "from",
         .kind = SIM_OPT_DURATION,
         .dst = &from,
         .help = "window start, since the first record"},
        {.name = "until",
         .kind = SIM_OPT_DURATION,
         .dst = &until,
         .help = "window end (default: the end of the trace)"},
        TR_SOURCE_OPTS(opts, format, volume, skip_bad, sortwin),
        SIM_OPT_END,
    };
    char *pos[1];
    int npos = 0;
    int rc = sim_opts_parse("trace slice", opts, argc, argv, pos, 1, &npos,
                            "appsim trace slice TRACE -o OUT [--from T] [--until T]");
    if (rc) return sim_opts_exit_status(rc);
    if (npos != 1 || !out) {
        sim_error("trace slice needs a trace and -o OUT");
        return SIM_EXIT_USAGE;
    }
    window w = {from, sim_opts_find(opts, "until")->set ? until : UINT64_MAX};
    if (w.until <= w.from) {
        sim_error("--until must be later than --from");
        return SIM_EXIT_USAGE;
    }
    if (fio_file && strcmp(to, "fio-v3")) {
        sim_error("--fio-file applies to --to fio-v3 only");
        return SIM_EXIT_USAGE;
    }
    tr_source *src;
    if ((rc = tr_open_cli(pos[0], format, opts, volume, skip_bad, sortwin, &src))) return rc;
    uint64_t n = 0;
    tr_writer_opts wo = {.fio_file = fio_file, .overwrite = force};
    rc = tr_copy_records(src, out, to, &wo, in_window, &w, &n);
    if (rc == 0) sim_info("wrote %llu records of the window to %s", (unsigned long long)n, out);
    tr_close(src);
    return rc;
}

static const tr_subcommand slice_sub = {"slice", "cut a time window out of a trace", slice_main};
TR_REGISTER_SUBCOMMAND(slice_sub);
