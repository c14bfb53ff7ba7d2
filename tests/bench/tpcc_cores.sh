#!/usr/bin/env bash
# tests/bench/tpcc_cores.sh: TPS against CPU cores (docs/measurements/tpcc.md, "Cores"):
# the same tpcc run under each `taskset` CPU list in turn, ROUNDS times alternating, on a
# target where the drive does not set the limit (a RAM-backed drive such as ext4 on
# zram); prints TPS, p99, the cores the process kept busy in the measured phase (from the
# result's per-interval CPU use), TPS per busy core, and from tpcc.waits the writer
# lock's mean hold per write transaction and its hand-over (granted, owner not yet
# running) per write transaction, both in ms. The machine should be otherwise quiet:
# another process on the cores is counted against appsim. TAG=name keeps the result
# files of one binary apart from another's (APPSIM=... TAG=... for an A/B).
# usage: tests/bench/tpcc_cores.sh TARGET_DIR SCALE [CPU_LISTS ("1 0,1")] [ROUNDS (2)]
#        [extra appsim tpcc run options, e.g. --instances 2 --connections 16]
# Defaults of the run: --pacing off, 1,000 users per instance, --buffer 160M,
# --warmup 20s, --duration 60s (each can be given again after the positional arguments).
# The target must hold a prepared database of that scale (and instance count).
set -euo pipefail
APPSIM=${APPSIM:-$(dirname "$0")/../../build/appsim}
T=${1:?target directory}; S=${2:?scale}; CPUS=${3:-1 0,1}; ROUNDS=${4:-2}
shift $(( $# < 4 ? $# : 4 ))
printf '%-5s %-8s %8s %9s %6s %13s %8s %9s %s\n' round cpus tps p99_ms cores tps/busy_core \
  hold_ms handover load
for r in $(seq 1 "$ROUNDS"); do
  for c in $CPUS; do
    out="$T/cores${TAG:+-$TAG}-r$r-c${c//,/_}.json"
    taskset -c "$c" "$APPSIM" tpcc run --target "$T" --scale "$S" --pacing off --vusers 1000 \
      --buffer 160M --warmup 20s --duration 60s --quiet --json "$out" "$@" >/dev/null
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    jq -r --arg r "$r" --arg c "$c" --arg load "$load" '
      [.intervals[] | select(.phase == "measure") | .cpu.cores_busy] as $b |
      ($b | add / length) as $cores |
      .tpcc.waits as $w |
      ([$w.totals[] | select(.held_ns > 0)] as $wr |
       {n: ([$wr[].transactions] | add), h: ([$wr[].handover_ns] | add)}) as $x |
      "\($r) \($c) \(.summary.tps) \(.summary.latency_us.p99_us / 1000) \($cores) \(.summary.tps / $cores) \($w.writer_lock_hold_us.all_writes.mean_us / 1000) \($x.h / $x.n / 1e6) \($load)"' "$out" |
      awk '{printf "%-5s %-8s %8.1f %9.1f %6.2f %13.1f %8.3f %9.3f %s %s %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11}'
  done
done
