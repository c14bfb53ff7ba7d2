/*
 * kv/kv.h: LMDB on the target drive: the sysbench tables as an engine of
 * `appsim sysbench --engine lmdb` (the same workload contract as oltp/).
 */
#ifndef APPSIM_KV_H
#define APPSIM_KV_H

#include "sim/sim.h"
#include "storage/storage.h"
#include "oltp/oltp.h"

/*
 * kv/ registers the "lmdb" engine of `appsim sysbench` (oltp/oltp.h, sb_engine_ops)
 * from kv/kv_sysbench.c; nothing needs to call it by name. The helpers below are the
 * memory policy it applies and are public for tests and for other LMDB workloads.
 *
 * Return codes: the engine follows oltp/oltp.h (exit statuses for open, metadata and
 * load; SB_OK / SB_RETRY / SB_FAIL for statements, named by sb_status_name); the
 * helpers below return NULL or a status (SIM_OK, or SIM_ERR with err) as each one says.
 * LMDB's own codes (MDB_*, or an errno) stay inside kv/, worded with mdb_strerror.
 */

/* ---- memory cgroup: make the page cache beyond --buffer come from the drive ---- */

typedef struct kv_memcg kv_memcg;

/*
 * Creates a memory cgroup limited to `limit_bytes` (cgroup v2 memory.max where the
 * unified hierarchy has the memory controller, else the v1 memory controller, mounted
 * on a private directory if it is not mounted yet) and moves the calling process into
 * it. Returns NULL with a reason in err when it cannot (not root, no controller).
 */
kv_memcg *kv_memcg_enter(uint64_t limit_bytes, char *err, size_t errlen);
/* {"applied":true, "version":"v1"|"v2", "path", "limit_bytes", "peak_bytes",
 *  "failcnt"} of the cgroup while it exists. */
json_t *kv_memcg_json(const kv_memcg *cg);
/*
 * The smallest limit a run with `connections` connections per instance is given: the
 * cgroup holds the process's own memory allocated after it entered (worker stacks,
 * latency histograms, LMDB's transactions, kernel memory) besides the cached pages of
 * the map, and below that the kernel's OOM killer ends the run (status 137, no result).
 * Measured on cgroup v1, 1-3 s runs: 0.4 MiB at 1 connection; at 16 and 64, 2.2 and
 * 5.7 MiB with oltp_read_write, 5.8 and 17.7 MiB with oltp_point_select (its latency
 * histograms spread over more buckets; each may reach 264 KiB). The minimum leaves
 * room for those and for cached pages: every workload ran at it with 1, 16 and 64.
 */
#define KV_MIN_BUFFER_BASE (4ull << 20)
#define KV_MIN_BUFFER_PER_CONNECTION (512ull << 10)
uint64_t kv_min_buffer(uint64_t connections);
/* The path of the cgroup directory (for tests). */
const char *kv_memcg_path(const kv_memcg *cg);
/* Moves the process back to where it was, removes the cgroup (and a private mount). */
void kv_memcg_leave(kv_memcg *cg);

/* Bytes of `path` resident in the page cache (as fincore reports); -1 on error. */
int64_t kv_resident_bytes(const char *path, uint64_t *file_bytes);
/* Drops the clean cached pages of `path` (after it was synced) so that later reads
 * are charged to, and limited by, the current memory cgroup. */
int kv_drop_cache(const char *path);

/* Process page faults (getrusage) as a sim/ probe named "page_faults": major and
 * minor over the phase and per transaction. ctx unused. */
extern const sim_probe_ops kv_page_fault_probe;

#endif
