/*
 * kv/kv.h: LMDB on the target drive: the sysbench tables as an engine of
 * `appsim sysbench --engine lmdb` (the same workload contract as oltp/).
 */
#ifndef APPSIM_KV_H
#define APPSIM_KV_H

#include "sim/sim.h"
#include "storage/storage.h"

#endif
