#!/usr/bin/env bash
# TPS of oltp_read_write at 32 threads for both engines, side by side:
#   cached        --buffer larger than the data, --sync off
#   storage-bound data = 4 x --buffer (SQLite: the VFS buffer pool; LMDB: the memory
#                 cgroup), --sync off, so reads come from the drive
# Usage: tests/bench/sysbench_tps.sh [ROWS_PER_TABLE] [TABLES] [SECONDS]
#        (default 500000 4 20; data is about 225 bytes per row per engine)
# Needs a built appsim (BUILD_DIR, default build) and root for LMDB's memory cgroup.
# Scratch under ${BENCH_TMP:-/tmp} (put it on the drive under test).
set -euo pipefail
cd "$(dirname "$0")/../.."
APPSIM=${APPSIM:-${BUILD_DIR:-build}/appsim}
ROWS=${1:-500000}
TABLES=${2:-4}
SECS=${3:-20}
D=$(mktemp -d "${BENCH_TMP:-/tmp}/appsim-bench-tps-XXXXXX")
trap 'rm -rf "$D"' EXIT
echo "machine: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-7s %-14s %10s %10s %10s %10s %12s %12s %9s\n" engine mode buffer tps mean_ms p99_ms dev_reads/tx dev_writes/tx majflt/tx
for e in sqlite lmdb; do
  mkdir -p "$D/$e"
  S=(--engine $e --target "$D/$e" --tables "$TABLES" --table-size "$ROWS")
  "$APPSIM" sysbench prepare "${S[@]}" --quiet --json "$D/$e.prep.json" >/dev/null
  bytes=$(jq .prepare.bytes "$D/$e.prep.json")
  big=$(( bytes * 2 ))
  small=$(( bytes / 4 ))
  for mode in cached storage-bound; do
    buf=$big; [ $mode = storage-bound ] && buf=$small
    "$APPSIM" sysbench run "${S[@]}" --threads 32 --time "$SECS" --warmup 5 --sync off \
      --buffer "$buf" --quiet --json "$D/$e.$mode.json" >/dev/null
    jq -r --arg e $e --arg m $mode --arg b $buf '[$e, $m, ($b|tonumber/1048576|floor|tostring)+"M",
        (.summary.tps|floor), (.summary.latency_us.mean_us/1000*100|floor/100),
        (.summary.latency_us.p99_us/1000*100|floor/100),
        ((.device_io.per_unit.reads // 0)*100|floor/100), ((.device_io.per_unit.writes // 0)*100|floor/100),
        (if .page_faults then (.page_faults.per_unit.major*100|floor/100) else "-" end)] | @tsv' "$D/$e.$mode.json" |
      awk -F'\t' '{ printf "%-7s %-14s %10s %10s %10s %10s %12s %12s %9s\n", $1,$2,$3,$4,$5,$6,$7,$8,$9 }'
  done
done
