#!/usr/bin/env bash
# tests/bench/tpcc_cpu_ab.sh: CPU per transaction of two appsim builds on the same
# cached tpcc database, measured pair by pair (docs/measurements/sqlite-vfs.md, "CPU per
# block read").
# A and B alternate (A B, B A, A B, ...) so that a drift of the machine falls on both;
# each run is a closed loop with --pacing off and a buffer that holds the whole
# database, so the pool, not the drive, answers nearly every read.
# usage: tests/bench/tpcc_cpu_ab.sh APPSIM_A APPSIM_B TARGET_DIR [SCALE (10)]
#          [CONNECTIONS (8)] [ROUNDS (3)] [SECONDS (20)] [BUFFER (1G)]
# TARGET_DIR must hold a tpcc database of SCALE (`appsim tpcc prepare`); runs add rows.
# Prints one line per run and, per round, B's CPU per transaction and TPS over A's.
set -euo pipefail
A=${1:?appsim build A}; B=${2:?appsim build B}; T=${3:?target directory}
S=${4:-10}; C=${5:-8}; R=${6:-3}; D=${7:-20}; BUF=${8:-1G}
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 2; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

one() { # one BIN NAME: runs BIN, prints "tps cpu_us_per_txn pool_reads_per_txn"
  "$1" tpcc run --target "$T" --scale "$S" --vusers $((S * 10)) --connections "$C" \
    --pacing off --buffer "$BUF" --warmup 20s --duration "${D}s" --report-interval 0 --quiet \
    --json "$OUT/$2.json" >/dev/null
  jq -r '[.summary.tps, .cpu.cpu_us_per_unit,
          ((.db_pool.hits + .db_pool.misses) / .summary.count),
          (.database[0].page_reads // "copied")] | @tsv' "$OUT/$2.json"
}

printf 'round\tbuild\tTPS\tCPU us/txn\tpool block reads/txn\tpage reads\tload avg\n'
for r in $(seq 1 "$R"); do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for side in $order; do
    bin=$A; [ "$side" = B ] && bin=$B
    res=$(one "$bin" "r$r$side")
    printf '%s\t%s\t%s\t%s\n' "$r" "$side" "$res" "$(cut -d' ' -f1 /proc/loadavg)"
    echo "$res" > "$OUT/r$r$side.res"
  done
  read -r ta ca _ < "$OUT/r${r}A.res"
  read -r tb cb _ < "$OUT/r${r}B.res"
  awk -v r="$r" -v ta="$ta" -v tb="$tb" -v ca="$ca" -v cb="$cb" \
    'BEGIN { printf "round %s: B/A CPU per txn %.3f, TPS %.3f\n", r, cb / ca, tb / ta }'
done
