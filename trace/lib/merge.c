/*
 * trace/lib/merge.c: `appsim trace merge A B ... -o OUT`: several traces into one, in time
 * order (each trace's time starts at 0), each trace's volumes renumbered so that no
 * two traces share a volume: a replay then gives each its own region of the target.
 * Streaming: one pending record per input.
 */
#include "trace/lib/lib_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_INPUTS 64

typedef struct input {
    tr_source *src;
    tr_scan scan;
    uint32_t base; /* first new volume number of this input */
    tr_record rec;
    bool live;
} input;

static uint32_t renumber(const input *in, uint32_t volume)
{
    uint32_t lo = 0, hi = in->scan.nvolumes;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (in->scan.volumes[mid].volume < volume)
            lo = mid + 1;
        else
            hi = mid;
    }
    return in->base + lo;
}

/* Opens and scans each input; input i's volumes are numbered after those of the inputs
 * before it. An exit status (the message printed). */
static int open_inputs(char **pos, int npos, input *ins, const char *format, const sim_opt *opts,
                       uint64_t volume, bool skip_bad, uint64_t window)
{
    char err[1024];
    uint32_t next_vol = 0;
    for (int i = 0; i < npos; i++) {
        int rc = tr_open_cli(pos[i], format, opts, volume, skip_bad, window, &ins[i].src);
        if (rc) return rc;
        if ((rc = tr_scan_source(ins[i].src, &ins[i].scan, err, sizeof err))) {
            sim_error("%s", err);
            return rc;
        }
        ins[i].base = next_vol;
        next_vol += ins[i].scan.nvolumes;
        sim_info("%s: volumes become %u..%u", pos[i], ins[i].base, next_vol ? next_vol - 1 : 0);
    }
    return SIM_EXIT_OK;
}

/* The input's next record into in->rec (in->live: there is one). An exit status. */
static int advance(input *in)
{
    int g = tr_next(in->src, &in->rec);
    in->live = g == TR_NEXT_RECORD;
    if (g != TR_NEXT_ERROR) return SIM_EXIT_OK;
    sim_error("%s", tr_error(in->src));
    return SIM_EXIT_USAGE;
}

/* Writes the inputs' records in time order, the earliest head first; the count in *n.
 * An exit status (a write error is left for the writer's close to report). */
static int merge_records(input *ins, int npos, tr_writer *w, uint64_t *n)
{
    int rc = SIM_EXIT_OK;
    for (int i = 0; i < npos && rc == SIM_EXIT_OK; i++)
        rc = advance(&ins[i]);
    while (rc == SIM_EXIT_OK) {
        int best = -1;
        for (int i = 0; i < npos; i++)
            if (ins[i].live && (best < 0 || ins[i].rec.time_ns < ins[best].rec.time_ns)) best = i;
        if (best < 0) break;
        tr_record r = ins[best].rec;
        r.volume = renumber(&ins[best], r.volume);
        if (tr_writer_put(w, &r) < 0) break; /* the error is reported by close */
        (*n)++;
        rc = advance(&ins[best]);
    }
    return rc;
}

static int merge_main(int argc, char **argv)
{
    const char *format = NULL, *out = NULL, *to = "appsim", *fio_file = NULL;
    uint64_t volume = 0, window = 65536;
    bool skip_bad = false, force = false;
    sim_opt opts[] = {
        TR_OUTPUT_OPTS(force, out, to, fio_file),
        TR_SOURCE_OPTS(opts, format, volume, skip_bad, window),
        SIM_OPT_END,
    };
    char *pos[MAX_INPUTS];
    int npos = 0;
    int rc = sim_opts_parse("trace merge", opts, argc, argv, pos, MAX_INPUTS, &npos,
                            "appsim trace merge TRACE TRACE... -o OUT [--to appsim|fio-v3]");
    if (rc) return sim_opts_exit_status(rc);
    if (npos < 2 || !out) {
        sim_error("trace merge needs at least two traces and -o OUT");
        return SIM_EXIT_USAGE;
    }
    if (fio_file && strcmp(to, "fio-v3")) {
        sim_error("--fio-file applies to --to fio-v3 only");
        return SIM_EXIT_USAGE;
    }
    input *ins = sim_xcalloc((size_t)npos, sizeof *ins);
    char err[1024];
    tr_writer *w = NULL;
    rc = open_inputs(pos, npos, ins, format, opts, volume, skip_bad, window);
    tr_writer_opts wo = {.fio_file = fio_file, .overwrite = force};
    if (rc == 0 && (rc = tr_writer_open(out, to, &wo, &w, err, sizeof err))) sim_error("%s", err);
    uint64_t n = 0;
    if (rc == 0) rc = merge_records(ins, npos, w, &n);
    int crc = 0;
    if (w && rc)
        tr_writer_abort(w); /* an input failed: no partial output */
    else if (w)
        crc = tr_writer_close(w, err, sizeof err);
    if (crc && rc == 0) {
        sim_error("%s", err);
        rc = crc;
    }
    if (rc == 0)
        sim_info("merged %llu records from %d traces into %s", (unsigned long long)n, npos, out);
    for (int i = 0; i < npos; i++) {
        tr_close(ins[i].src);
        tr_scan_free(&ins[i].scan);
    }
    free(ins);
    return rc;
}

static const tr_subcommand merge_sub = {
    "merge", "merge traces in time order, each on its own volumes", merge_main};
TR_REGISTER_SUBCOMMAND(merge_sub);
