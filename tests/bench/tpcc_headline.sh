#!/usr/bin/env bash
# tests/bench/tpcc_headline.sh: the headline run (docs/measurements/tpcc.md, "The
# scale-500 headline"):
# review pacing, page cache dropped first, then the figures the targets are judged by:
# TPS against the offered load N / (Z + R), mean and p99, the 5-s intervals of the
# measured phase within 5 % of the offered load and with a p99 over 100 ms, the WAL's
# restarts and how long they held writers, CPU, and the disk (utilisation, read,
# write and flush latency); for each interval with a p99 over 100 ms, how late the
# harness's own timers were in it (`harness`) beside the disk's latencies, which tells
# a stall of the machine from a slow drive.
# usage: tests/bench/tpcc_headline.sh TARGET_DIR SCALE [USERS (10 per warehouse)]
#        [WARMUP (5m)] [DURATION (5m)] [extra appsim tpcc options...]
# The target must hold a prepared database of that scale. The result is kept in
# TARGET_DIR/headline-uUSERS.json (OUT= another path).
# Targets (scale 500, 5,000 users): TPS within 5 % of the offered load, p99 below
# 100 ms, and every 5-s interval within 5 % with a p99 below 100 ms.
set -euo pipefail
APPSIM=${APPSIM:-$(dirname "$0")/../../build/appsim}
T=${1:?target directory}; S=${2:?scale}; U=${3:-$((S * 10))}
W=${4:-5m}; D=${5:-5m}; shift $(( $# < 5 ? $# : 5 ))
OUT=${OUT:-$T/headline-u$U.json}
sync
if [ -w /proc/sys/vm/drop_caches ]; then echo 3 > /proc/sys/vm/drop_caches
else echo "warning: cannot drop the page cache (not root): the figures include it" >&2; fi
"$APPSIM" tpcc run --target "$T" --scale "$S" --vusers "$U" --warmup "$W" --duration "$D" \
  --quiet --json "$OUT" "$@" >/dev/null
jq -r '
  (.tpcc.per_instance[0].database.checkpoint.wal_limit) as $l |
  ([.intervals[] | select(.phase == "measure")]) as $iv |
  (.summary.latency_us.mean_us / 1e6) as $r |
  (if .tpcc.setup.mean_cycle_s > 0
   then .tpcc.setup.vusers_per_instance * (.tpcc.setup.instances // 1) / (.tpcc.setup.mean_cycle_s + $r)
   else .summary.tps end) as $offered |
  def r1: . * 10 | round / 10;
  "tps        \(.summary.tps | r1) (\(100 * .summary.tps / $offered | r1) % of the offered \($offered | r1))",
  "latency    mean \(.summary.latency_us.mean_us / 1000 | r1) ms, p99 \(.summary.latency_us.p99_us / 1000 | r1) ms, max \(.summary.latency_us.max_us / 1000 | r1) ms",
  "intervals  \($iv | length) of 5 s: \([$iv[] | select(.rate >= 0.95 * $offered)] | length) within 5 %, \([$iv[] | select(.latency_us.p99_us > 100000)] | length) with p99 > 100 ms (worst \([$iv[] | .latency_us.p99_us] | max / 1000 | r1) ms)",
  "restarts   \($l.wal_restarts // "-") (gave up \($l.restart_gave_up // "-")); writers held \($l.restart_held.ms_total // "-" | if type == "number" then r1 else . end) ms, longest \($l.restart_held.ms_max // "-" | if type == "number" then r1 else . end) ms",
  "slow       \([$iv[] | select(.latency_us.p99_us > 100000) | "t=\(.t) s: p99 \(.latency_us.p99_us / 1000 | r1) ms, harness late max \(.harness.late_max_us // 0 | . / 1000 | r1) ms, disk read \(.device_io.read_latency_avg_us // 0 | round) us, flush \(.device_io.flush_latency_avg_us // 0 | round) us"] | if length == 0 then "none" else join("; ") end)",
  "harness    timers late p99 \(.harness.late_p99_us // 0 | . / 1000 | r1) ms, max \(.harness.late_max_us // 0 | . / 1000 | r1) ms (inside every latency: the machine, not the drive)",
  "cpu        \(.cpu.cores_busy | . * 100 | round / 100) of \(.cpu.cpus_allowed) cores",
  "disk       util \(.device_io.utilization | . * 100 | round) %, read \(.device_io.read_latency_avg_us | round) us, write \(.device_io.write_latency_avg_us | round) us, flush \(.device_io.flush_latency_avg_us | round) us",
  "result     '"$OUT"'"' "$OUT"
