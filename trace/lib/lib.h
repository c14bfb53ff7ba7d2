/*
 * trace/lib/lib.h: the trace library, as trace/'s other folders see it.
 *
 * trace/lib/ reads and writes block traces: the decompressing input, one file per
 * format (fmt_*.c, registered by name and detected), the file source with its sort
 * window, the writers, the one-pass scan, the format and subcommand registries with
 * the `appsim trace` command, and the subcommands that only read or rewrite a trace
 * (info, convert, slice, merge, formats). What the rest of appsim uses of it (tr_open,
 * tr_writer_*, tr_scan_source, the registries) is declared in trace/trace.h; this header
 * adds what trace/'s commands share with it: the common trace options and the opener
 * that prints its error. Its private pieces are in lib_internal.h, pair_internal.h and
 * footprint_internal.h, which no file outside trace/lib/ includes.
 *
 * Return codes (sim/sim.h): what decides how a command ends (opening a trace, the
 * writers, the scan, the subcommands, tr_open_cli) returns an exit status (SIM_EXIT_*);
 * helpers that only succeed or fail return a status (SIM_OK, or SIM_ERR with err); a
 * source's next() answers TR_NEXT_*, a format's parsers TR_PARSE_* (trace/trace.h).
 *
 * Includes: trace/trace.h and, through it, sim/sim.h and storage/storage.h; never a
 * header of trace/'s other folders (replay/, io/, vdi/, capture/), which stand above it.
 */
#ifndef APPSIM_TRACE_LIB_H
#define APPSIM_TRACE_LIB_H

#include "trace/trace.h"

#include <stdbool.h>
#include <stdint.h>

/* Common options of the trace subcommands (--format, --volume, --skip-bad,
 * --sort-window), so each subcommand declares them the same way. */
#define TR_SOURCE_OPTS(o, fmt, vol, skip, win)                                                     \
    {.name = "format",                                                                             \
     .kind = SIM_OPT_STRING,                                                                       \
     .dst = &(fmt),                                                                                \
     .help = "input format (default: detected)"},                                                  \
        {.name = "volume",                                                                         \
         .kind = SIM_OPT_U64,                                                                      \
         .dst = &(vol),                                                                            \
         .help = "only this volume (disk number, LUN, device id; default: all)",                   \
         .max = 4294967295.0},                                                                     \
        {.name = "skip-bad",                                                                       \
         .kind = SIM_OPT_FLAG,                                                                     \
         .dst = &(skip),                                                                           \
         .help = "count and skip malformed records"},                                              \
    {                                                                                              \
        .name = "sort-window", .kind = SIM_OPT_U64, .dst = &(win),                                 \
        .help = "records held to restore time order (default: 65536)", .min = 1, .max = 16777216   \
    }

/* Opens path with the common options; prints the error; returns an exit status. */
int tr_open_cli(const char *path, const char *format, const sim_opt *opts, uint64_t volume,
                bool skip_bad, uint64_t window, tr_source **out);

#endif
