#!/usr/bin/env bash
# tests/bench/sysbench_threads.sh: SQLite sysbench oltp_read_write at 1 and 16 threads
# (or THREADS), in PostgreSQL's shape (docs/measurements/sysbench.md, "Threads in
# PostgreSQL's shape"): for each round, each configuration of --prefetch and
# --group-commit (CONFIGS, "on,on off,off") and each thread count, drop the page cache
# (when allowed), run, and print TPS, mean and p99 latency, the disk's I/Os in flight
# (device_io queue_time_ms over wall time: every process on the disk counts), the run's
# own reads in flight (its threads' device read time over wall time), the disk's
# utilisation and foreign share, the threads' wait breakdown (% of their time: queued
# for writer locks, holding them, reads under them, group-commit sync, reads outside
# them, other), the cores used and the load average; then the 16/1 ratios.
# usage: tests/bench/sysbench_threads.sh TARGET_DIR [DURATION (60s)] [WARMUP (20s)]
#        [extra appsim sysbench options...]
# The target holds `appsim sysbench prepare --tables 8 --table-size 1000000` (or
# TABLES/SIZE); BUFFER (160M), ROUNDS (1); results in OUT.r<round>-<pf>-<gc>-t<threads>.json
# (OUT defaults to TARGET_DIR). Targets: TPS 16/1 at least 2.96x and I/Os
# in flight at least 4.55x (PostgreSQL 15 + sysbench on the same kind of disk;
# sysbench_vs_postgres.sh measures the peer beside appsim, run by run).
set -euo pipefail
APPSIM=${APPSIM:-$(dirname "$0")/../../build/appsim}
T=${1:?target directory}; D=${2:-60s}; W=${3:-20s}; shift $(( $# < 3 ? $# : 3 ))
THREADS=${THREADS:-1 16}; CONFIGS=${CONFIGS:-on,on off,off}; ROUNDS=${ROUNDS:-1}
TABLES=${TABLES:-8}; SIZE=${SIZE:-1000000}; BUFFER=${BUFFER:-160M}; OUT=${OUT:-$T}
drop_cache() {
  sync
  if [ -w /proc/sys/vm/drop_caches ]; then echo 1 > /proc/sys/vm/drop_caches
  else echo "warning: cannot drop the page cache (not allowed here)" >&2; fi
}
printf '%-5s %-7s %4s %8s %8s %8s %7s %7s %5s %6s | %5s %5s %5s %5s %5s %5s | %5s %s\n' \
  round pf,gc thr tps mean_ms p99_ms disk_qd own_rd util foreign lockq held rdhld gcsync rdout other cores load
for r in $(seq 1 "$ROUNDS"); do
  for cfg in $CONFIGS; do
    pf=${cfg%,*}; gc=${cfg#*,}
    for th in $THREADS; do
      out="$OUT.r$r-$pf-$gc-t$th.json"
      drop_cache
      "$APPSIM" sysbench run --target "$T" --tables "$TABLES" --table-size "$SIZE" \
        --threads "$th" --buffer "$BUFFER" --duration "$D" --warmup "$W" --prefetch "$pf" \
        --group-commit "$gc" --quiet --json "$out" "$@" >/dev/null
      load=$(cut -d' ' -f1 /proc/loadavg)
      jq -r --arg r "$r" --arg cfg "$cfg" --arg th "$th" --arg load "$load" '
        .device_io as $d | .sysbench.waits as $w | $w.share as $s |
        [$r, $cfg, $th, .summary.tps, .summary.latency_us.mean_us / 1000,
         .summary.latency_us.p99_us / 1000, $d.queue_time_ms / ($d.seconds * 1000),
         $w.own_reads_in_flight, $d.utilization, $d.foreign_io_share,
         ($s.writer_lock_queue, $s.writer_lock_held, $s.reads_under_writer_lock,
          $s.group_commit_sync, $s.reads_outside_writer_lock, $s.other | . * 100),
         .cpu.cores_busy, $load] | @tsv' "$out" |
        awk -F'\t' '{printf "%-5s %-7s %4s %8.1f %8.2f %8.1f %7.2f %7.2f %5.2f %6.2f | %5.1f %5.1f %5.1f %5.1f %5.1f %5.1f | %5.2f %s\n",
          $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18}'
    done
  done
done
# 16/1 (last/first of THREADS) per round and configuration
first=${THREADS%% *}; last=${THREADS##* }
for r in $(seq 1 "$ROUNDS"); do
  for cfg in $CONFIGS; do
    pf=${cfg%,*}; gc=${cfg#*,}
    jq -rn --slurpfile a "$OUT.r$r-$pf-$gc-t$first.json" --slurpfile b "$OUT.r$r-$pf-$gc-t$last.json" \
      --arg r "$r" --arg cfg "$cfg" --arg n "$first -> $last" '
      def q(x): x.device_io.queue_time_ms / (x.device_io.seconds * 1000);
      "round \($r) \($cfg) \($n) threads: TPS \($b[0].summary.tps / $a[0].summary.tps * 100 | round / 100)x, disk in flight \(q($b[0]) / q($a[0]) * 100 | round / 100)x, own reads in flight \($b[0].sysbench.waits.own_reads_in_flight / $a[0].sysbench.waits.own_reads_in_flight * 100 | round / 100)x"'
  done
done
