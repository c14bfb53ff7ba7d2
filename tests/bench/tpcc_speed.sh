#!/usr/bin/env bash
# tests/bench/tpcc_speed.sh: the TPC-C load and saturation figures of
# docs/measurements/tpcc.md, through the real
# binary on a target directory:
#   1. load rate, one instance and two in parallel (warehouses per second per instance);
#   2. TPS at saturation (--pacing off) at the given scale.
# usage: tests/bench/tpcc_speed.sh TARGET_DIR [SCALE (10)] [DURATION (30)]
# Peers for the load (not run here): HammerDB about 16 s per warehouse, sysbench-tpcc
# about 55 s per warehouse, both on PostgreSQL on this kind of machine.
set -euo pipefail
APPSIM=${APPSIM:-$(dirname "$0")/../../build/appsim}
T=${1:?target directory}; S=${2:-10}; D=${3:-30}
run() { echo "+ $*" >&2; "$@"; }

run "$APPSIM" tpcc cleanup --target "$T/one" >/dev/null 2>&1 || true
run "$APPSIM" tpcc prepare --target "$T/one" --scale 2 --quiet --json "$T/load1.json"
jq -r '"load, 1 instance x 2 wh: \(.prepare.seconds) s, \(.prepare.warehouses_per_s_per_instance) wh/s per instance"' "$T/load1.json"
run "$APPSIM" tpcc cleanup --target "$T/one" >/dev/null

run "$APPSIM" tpcc prepare --target "$T/two" --scale 2 --instances 2 --quiet --json "$T/load2.json"
jq -r '"load, 2 instances x 2 wh in parallel: \(.prepare.seconds) s, \(.prepare.warehouses_per_s_per_instance) wh/s per instance"' "$T/load2.json"
run "$APPSIM" tpcc cleanup --target "$T/two" >/dev/null

run "$APPSIM" tpcc prepare --target "$T/sat" --scale "$S" --quiet --json "$T/loadS.json"
jq -r '"load, 1 instance x '"$S"' wh: \(.prepare.seconds) s, \(.prepare.warehouses_per_s_per_instance) wh/s"' "$T/loadS.json"
run "$APPSIM" tpcc run --target "$T/sat" --scale "$S" --pacing off --duration "$D" --warmup 10 \
  --quiet --json "$T/sat.json" >/dev/null
jq -r '"saturation, scale '"$S"': \(.summary.tps) TPS, tpmC \(.tpcc.rates.tpmC), mean \(.summary.latency_us.mean_us / 1000) ms, p99 \(.summary.latency_us.p99_us / 1000) ms"' "$T/sat.json"
