#!/usr/bin/env bash
# tests/bench/tpcc_concurrency.sh: TPS and device queue depth against connections
# (docs/measurements/tpcc.md, "Connections against TPS"): for each connection count, restore the pristine copy,
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
# ROUNDS=n runs the sequence n times, every other round in reverse order (1 16, 16 1,
# ...), so that a slow or fast spell of the disk does not always fall on the same count:
# on the test VM one count's TPS differs by 10-15 % from run to run (the virtual disk's
# flush time), enough to move a ratio of two single runs by half a point. It then prints,
# per connection count, the median TPS and own queue depth over the rounds, and the
# ratio of the last count to the first within each round (a pair run next to each other)
# and the median of those. Rounds after the first keep their results in
# TARGET_DIR/conc-cC-rR.json.
# Targets: both ratios 1 -> 16 connections at least 3 (PostgreSQL's ratios on the
# same kind of disk with sysbench's oltp_read_write: TPS 2.96x, in flight 4.55x; with
# sysbench-tpcc at scale 20, CPU-bound on 2 cores: TPS 1.39x, in flight 2.53x, measured
# beside appsim by tests/bench/tpcc_vs_postgres.sh).
set -euo pipefail
APPSIM=${APPSIM:-$(dirname "$0")/../../build/appsim}
T=${1:?target directory}; S=${2:?scale}; CONNS=${3:-1 4 8 16 32}
D=${4:-60s}; W=${5:-30s}; shift $(( $# < 5 ? $# : 5 ))
USERS=${USERS:-160}
ROUNDS=${ROUNDS:-1}
# shellcheck source=tests/bench/rounds.sh
. "$(dirname "$0")/rounds.sh"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a whole number of rounds, 1 or more" >&2; exit 2; }
drop_cache() {
  sync
  if [ -w /proc/sys/vm/drop_caches ]; then echo 3 > /proc/sys/vm/drop_caches
  else echo "warning: cannot drop the page cache (not root)" >&2; fi
}
printf '%-5s %-6s %8s %9s %9s %8s %8s %6s %9s %s\n' round conns tps p99_ms disk_qd own_qd own_rd_qd util reads/txn load
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for ((r = 1; r <= ROUNDS; r++)); do
  for c in $(round_order "$r" "$CONNS"); do
    out="$T/conc-c$c.json"
    (( r > 1 )) && out="$T/conc-c$c-r$r.json"
    drop_cache
    "$APPSIM" tpcc run --target "$T" --scale "$S" ${KEEP_PRISTINE:+--keep-pristine} --pacing off \
      --vusers "$USERS" --connections "$c" --duration "$D" --warmup "$W" --quiet \
      --json "$out" "$@" >/dev/null
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    jq -r --arg r "$r" --arg c "$c" --arg load "$load" '
      .device_io as $d | .db_pool as $p |
      "\($r) \($c) \(.summary.tps) \(.summary.latency_us.p99_us / 1000) \($d.queue_time_ms / ($d.seconds * 1000)) \($p.io_in_flight) \($p.reads_in_flight) \($d.utilization) \($p.device_reads_per_unit) \($load)"' "$out" |
      awk '{printf "%-5s %-6s %8.1f %9.1f %9.2f %8.2f %8.2f %6.2f %9.1f %s %s %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12}' |
      tee -a "$rows"
  done
done
(( ROUNDS > 1 )) || exit 0
first=$(printf '%s\n' $CONNS | head -n1); last=$(printf '%s\n' $CONNS | tail -n1)
awk -v first="$first" -v last="$last" -v conns="$CONNS" "$MEDIAN_AWK"'
  { tps[$2] = tps[$2] " " $3; qd[$2] = qd[$2] " " $6; t[$1, $2] = $3; q[$1, $2] = $6; if ($1 > rounds) rounds = $1 }
  END {
    print ""
    printf "%-6s %12s %14s\n", "conns", "median_tps", "median_own_qd"
    n = split(conns, cs, " ")
    for (i = 1; i <= n; i++) printf "%-6s %12.1f %14.2f\n", cs[i], median(tps[cs[i]]), median(qd[cs[i]])
    if (first == last) exit
    for (r = 1; r <= rounds; r++) {
      rt = rt " " t[r, last] / t[r, first]; rq = rq " " q[r, last] / q[r, first]
      printf "round %d: %s -> %s connections TPS %.2fx, own queue depth %.2fx\n", r, first, last, t[r, last] / t[r, first], q[r, last] / q[r, first]
    }
    printf "median of %d rounds: TPS %.2fx, own queue depth %.2fx\n", rounds, median(rt), median(rq)
  }' "$rows"
