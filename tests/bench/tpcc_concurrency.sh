#!/usr/bin/env bash
# tests/bench/tpcc_concurrency.sh: TPS and device queue depth against connections
# (docs/tpcc.md, "Concurrency"): for each connection count, restore the pristine copy,
# drop the page cache, run --pacing off, and print TPS, p99, the average number of
# I/Os in flight on the disk (device_io queue_time_ms over wall time: every process
# on the disk counts), this database's own I/Os in flight and reads in flight (the
# VFS's summed I/O times over wall time, db_pool probe), the disk's utilisation, the
# database's own device reads per transaction, and the load average.
# usage: tests/bench/tpcc_concurrency.sh TARGET_DIR SCALE [CONNS ("1 4 8 16 32")]
#        [DURATION (60s)] [WARMUP (30s)] [extra appsim tpcc options...]
# The target must hold a prepared database; with KEEP_PRISTINE=1 each run first
# restores the pristine copy (`prepare --keep-pristine`; about 2 minutes for 7 GB on
# the test VM), otherwise the runs follow each other on the growing database.
# Targets: both ratios 1 -> 16 connections at least 3 (PostgreSQL's ratios on the
# same kind of disk: TPS 2.96x, in flight 4.55x).
set -euo pipefail
APPSIM=${APPSIM:-$(dirname "$0")/../../build/appsim}
T=${1:?target directory}; S=${2:?scale}; CONNS=${3:-1 4 8 16 32}
D=${4:-60s}; W=${5:-30s}; shift $(( $# < 5 ? $# : 5 ))
USERS=${USERS:-160}
drop_cache() {
  sync
  if [ -w /proc/sys/vm/drop_caches ]; then echo 3 > /proc/sys/vm/drop_caches
  else echo "warning: cannot drop the page cache (not root)" >&2; fi
}
printf '%-6s %8s %9s %9s %8s %8s %6s %9s %s\n' conns tps p99_ms disk_qd own_qd own_rd_qd util reads/txn load
for c in $CONNS; do
  out="$T/conc-c$c.json"
  drop_cache
  "$APPSIM" tpcc run --target "$T" --scale "$S" ${KEEP_PRISTINE:+--keep-pristine} --pacing off \
    --vusers "$USERS" --connections "$c" --duration "$D" --warmup "$W" --quiet \
    --json "$out" "$@" >/dev/null
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  jq -r --arg c "$c" --arg load "$load" '
    .device_io as $d | .db_pool as $p |
    "\($c) \(.summary.tps) \(.summary.latency_us.p99_us / 1000) \($d.queue_time_ms / ($d.seconds * 1000)) \($p.io_in_flight) \($p.reads_in_flight) \($d.utilization) \($p.device_reads_per_unit) \($load)"' "$out" |
    awk '{printf "%-6s %8.1f %9.1f %9.2f %8.2f %8.2f %6.2f %9.1f %s %s %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11}'
done
