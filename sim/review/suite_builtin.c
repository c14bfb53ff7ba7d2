/* clang-format off */
/*
 * sim/review/suite_builtin.c: the suites built into the binary, so `appsim suite review` works
 * wherever the binary is copied. Generated from the .ini files in suites/ by suites/embed.sh (a unit
 * test, test_compare_suite, checks the two are identical): edit the .ini, then run it.
 */
#include "sim/review/suite_internal.h"

#include <string.h>

static const char suite_review[] =
    "# The storage review labs' battery (docs/compare.md; ../shared/docs/reference-methodology.md).\n"
    "# `appsim suite review --target PATH -o DIR --size small|medium|full`.\n"
    "# full is the published configuration; small and medium keep the shape at a scale that\n"
    "# fits a workstation, and every step of them loads the drive: the OLTP data sets are\n"
    "# larger than their buffers (reads reach the drive, not only commits), and small's few\n"
    "# TPC-C users run without waits. Copy this file (`appsim suite show review > my.ini`) to\n"
    "# make your own.\n"
    "\n"
    "[suite]\n"
    "name = review\n"
    "description = TPC-C-like OLTP, sysbench on SQLite and on LMDB, trace replay, the vdbench battery and VDI storms, as the review labs run them\n"
    "\n"
    "[tpcc]\n"
    "description = TPC-C-like OLTP on SQLite, 2 instances like the labs' 2 VMs\n"
    "command = tpcc\n"
    "args = --target {target} --json {result} --instances 2\n"
    "# small: 20 users at the review pacing (a 4.74 s cycle) would offer about 8 TPS, which\n"
    "# leaves a drive idle; without waits they keep it busy (about 900 TPS and 9,000 I/O per\n"
    "# second on a virtio disk). medium's 1,000 users at the review pacing offer about 420.\n"
    "args.small = --scale 2 --vusers 20 --pacing off --buffer 64M --warmup 30s --duration 2m\n"
    "args.medium = --scale 100 --vusers 1000 --buffer 2G --warmup 10m --duration 20m\n"
    "args.full = --scale 1500 --vusers 15000 --buffer 48G --warmup 150m --duration 30m\n"
    "\n"
    "[sysbench-sqlite]\n"
    "description = sysbench OLTP tables on SQLite, 4 instances like the labs' 4 VMs\n"
    "command = sysbench\n"
    "args = --engine sqlite --target {target} --json {result} --instances 4\n"
    "# small: 4 x 100,000 rows (about 80 MiB per instance) against a 64 MiB buffer, so that\n"
    "# reads reach the drive; 10,000 rows would fit the buffer and leave only the commits.\n"
    "args.small = --tables 4 --table-size 100000 --threads 8 --buffer 64M --warmup 30s --time 2m\n"
    "args.medium = --tables 16 --table-size 1000000 --threads 32 --buffer 2G --warmup 10m --time 20m\n"
    "args.full = --tables 100 --table-size 10000000 --threads 32 --buffer 24G --warmup 2h --time 1h\n"
    "\n"
    "[sysbench-lmdb]\n"
    "description = the same sysbench tables on LMDB\n"
    "command = sysbench\n"
    "args = --engine lmdb --target {target} --json {result} --instances 4\n"
    "args.small = --tables 4 --table-size 100000 --threads 8 --buffer 64M --warmup 30s --time 2m\n"
    "args.medium = --tables 16 --table-size 1000000 --threads 32 --buffer 2G --warmup 10m --time 20m\n"
    "args.full = --tables 100 --table-size 10000000 --threads 32 --buffer 24G --warmup 2h --time 1h\n"
    "\n"
    "[replay]\n"
    "description = a captured block trace replayed as a vdbench-style rate curve: the maximum rate, then 10 % to 120 % of it (needs --trace)\n"
    "command = replay\n"
    "args = {trace} --target {target} --json {result} --curve\n"
    "args.small = --point-warmup 2s --point-duration 5s\n"
    "args.medium = --point-warmup 5s --point-duration 20s\n"
    "args.full = --point-warmup 1m --point-duration 5m\n"
    "estimate.small = 2m\n"
    "estimate.medium = 6m\n"
    "estimate.full = 80m\n"
    "\n"
    "[io]\n"
    "description = the labs' vdbench battery: fifteen synthetic profiles (4K random, 16K/64K sequential, 70/30 mixes, SQL and Oracle approximations), each as a rate curve on a filled 25 % section\n"
    "command = io\n"
    "args = --all --curve --fill --target {target} --json {result}\n"
    "args.small = --file-size 1G --curve-points 50,100,120 --warmup 1s --duration 2s\n"
    "args.medium = --file-size 16G --curve-points 10,50,70,80,90,100,110,120 --warmup 5s --duration 15s\n"
    "args.full = --file-size 256G --warmup 30s --duration 1m\n"
    "estimate.small = 4m\n"
    "estimate.medium = 50m\n"
    "estimate.full = 300m\n"
    "\n"
    "[vdi]\n"
    "description = full- and linked-clone boot, initial-login and Monday-login storms, each as a rate curve\n"
    "command = vdi\n"
    "args = --all --target {target} --json {result}\n"
    "args.small = --desktops 8 --point-warmup 2s --point-duration 5s\n"
    "args.medium = --desktops 100 --point-warmup 5s --point-duration 20s\n"
    "args.full = --desktops 1000 --point-warmup 30s --point-duration 2m\n"
    "estimate.small = 10m\n"
    "estimate.medium = 35m\n"
    "estimate.full = 210m\n"
    ;

static const struct {
    const char *name;
    const char *text;
} builtins[] = {
    {"review", suite_review},
};

static const char *const names[] = {
    "review",
    NULL,
};

const char *suite_builtin(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (!strcmp(builtins[i].name, name))
            return builtins[i].text;
    return NULL;
}

const char *const *suite_builtin_names(void)
{
    return names;
}
