/*
 * oltp/oltp.h: SQL workloads on SQLite (through storage/'s st_db).
 *
 * Commands offered (registered with sim/): `appsim tpcc` and `appsim sysbench`.
 * Each workload is an ops table; the sysbench tables run on more than one database
 * engine (SQLite here, LMDB in kv/), each engine registered by name.
 */
#ifndef APPSIM_OLTP_H
#define APPSIM_OLTP_H

#include "sim/sim.h"
#include "storage/storage.h"

/* ===== TPC-C (oltp/tpcc_*.c) ===== */



/* ===== sysbench tables (oltp/sysbench_*.c) ===== */



#endif
