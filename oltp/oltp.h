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

/*
 * `appsim tpcc [prepare|run|check|cleanup] --target DIR [options]` registers itself
 * with sim/ (SIM_REGISTER_COMMAND); nothing else in appsim calls into it, so it offers
 * no functions here. Its contract is the command line (docs/tpcc.md) and the result
 * document, which holds, beside sim/'s run sections (summary, per_type, intervals,
 * histograms, warmup, instances, device_io):
 *   "target"   st_target_json of the target;
 *   "database" one st_db_json (VFS, buffer pool counters, checkpoints) per instance;
 *   "prepare"  whether a load happened, its rows, seconds and warehouses/s;
 *   "tpcc"     setup (resolved users, connections, pacing, cycle, mix, buffer),
 *              rates (tpmC, nopm, efficiency_pct against 12.86 tpmC per warehouse),
 *              p90_limits per type (clause 5.2.5.3, pass/fail), delivery_deferred
 *              (deferred execution latency, histogram, skipped districts),
 *              per_instance figures, vu_engine statistics;
 *   "check"    integrity check and the twelve clause 3.3.2 conditions per instance.
 * Transaction types (per_type keys): new_order, payment, order_status, delivery
 * (the queueing response), stock_level. Counters: rollbacks, retries, busy_waits,
 * remote_order_lines, remote_payments, by_last_name.
 * Database files in the target: tpcc-<n>.db (and -wal), tpcc-<n>.pristine.
 */



/* ===== sysbench tables (oltp/sysbench_*.c) ===== */



#endif
