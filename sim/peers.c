/*
 * sim/peers.c: options of the tools appsim's users come from (fio, sysbench) that have
 * no meaning here. Typed out of habit, each is refused with what appsim does instead,
 * rather than with a bare "unknown option" (and never accepted and ignored). The
 * peers' options that do have a meaning are aliases of appsim's own (sim_opt.aliases).
 */
#include "sim/sim.h"

#include <string.h>

typedef struct peer_refusal {
    const char *command;
    const char *name; /* a trailing '-' matches every name it starts (mysql-host, ...) */
    const char *why;
} peer_refusal;

#define FIO_TIME_BASED                                                                             \
    "fio's --time_based is how appsim always runs: --warmup, then --duration; drop it"
#define FIO_FILENAME                                                                               \
    "appsim takes the drive as --target DIR (it creates its data file inside) or --target "        \
    "/dev/DEVICE"

static const peer_refusal refusals[] = {
    {"io", "time_based", FIO_TIME_BASED},
    {"io", "filename", FIO_FILENAME},
    {"io", "directory", FIO_FILENAME},
    {"io", "name",
     "a job is a built-in --profile or the one definition the options give; drop --name"},
    {"io", "group_reporting",
     "appsim io reports each profile once, over all its outstanding I/Os; drop it"},
    {"io", "norandommap",
     "appsim io draws every random offset independently (there is no random map); drop it"},
    {"io", "randrepeat", "the offsets repeat for the same --seed; give --seed N instead"},
    {"io", "output-format", "the machine-readable result is --json FILE (- = stdout)"},
    {"replay", "time_based", FIO_TIME_BASED},
    {"replay", "filename", FIO_FILENAME},
    {"replay", "read_iolog",
     "the trace is appsim replay's first argument (`appsim trace formats` lists the formats)"},
    {"sysbench", "db-driver",
     "appsim sysbench runs an embedded database on the drive: --engine sqlite|lmdb"},
    {"sysbench", "mysql-",
     "appsim sysbench runs an embedded database, not a server: --engine "
     "sqlite|lmdb and --target DIR"},
    {"sysbench", "pgsql-",
     "appsim sysbench runs an embedded database, not a server: --engine "
     "sqlite|lmdb and --target DIR"},
    {"sysbench", "percentile",
     "the result reports p50, p95, p99, p99.9 and max, and keeps the whole histogram"},
    {"sysbench", "histogram", "the result keeps the whole latency histogram (--json FILE)"},
    {"sysbench", "db-ps-mode",
     "SQLite's statements are prepared once per connection; LMDB has none; drop it"},
};

const char *sim_peer_refusal(const char *command, const char *name)
{
    for (size_t i = 0; i < sizeof refusals / sizeof *refusals; i++) {
        const peer_refusal *r = &refusals[i];
        size_t len = strlen(r->name);
        bool prefix = r->name[len - 1] == '-';
        if (!strcmp(r->command, command) &&
            (prefix ? !strncmp(r->name, name, len) : !strcmp(r->name, name)))
            return r->why;
    }
    return NULL;
}
