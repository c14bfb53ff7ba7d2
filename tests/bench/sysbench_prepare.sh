#!/usr/bin/env bash
# Prepare speed of `appsim sysbench` per engine (sbtest schema with the k index), SQLite
# by both load paths (pages, the default, and sql), beside each engine's own bulk path
# on the same machine in the same run:
#   - SQLite: the sqlite3 CLI building the same table from generate_series (no row
#     strings from a client, same page cache settings) and then the same index;
#   - LMDB: mdb_load of appsim's own sbtest1 dump (mdb_dump) into a fresh environment.
# Usage: tests/bench/sysbench_prepare.sh [ROWS_PER_TABLE] [TABLES]   (default 1000000 4)
# Needs a built appsim (BUILD_DIR, default build). Scratch under ${BENCH_TMP:-/tmp}.
set -euo pipefail
cd "$(dirname "$0")/../.."
APPSIM=${APPSIM:-${BUILD_DIR:-build}/appsim}
ROWS=${1:-1000000}
TABLES=${2:-4}
D=$(mktemp -d "${BENCH_TMP:-/tmp}/appsim-bench-prepare-XXXXXX")
trap 'rm -rf "$D"' EXIT
now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }

echo "machine: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
run_prepare() { # label, engine, extra options...
  local label=$1 e=$2; shift 2
  rm -rf "$D/$e"; mkdir -p "$D/$e"
  "$APPSIM" sysbench prepare --engine $e --target "$D/$e" --tables "$TABLES" --table-size "$ROWS" \
    "$@" --quiet --json "$D/$e.json" >/dev/null
  printf "appsim %-22s prepare: %s rows/s (%s rows, %.2f s, %s bytes)\n" "$label" \
    "$(jq -r '.prepare.rows_per_s | floor' "$D/$e.json")" "$(jq .prepare.rows "$D/$e.json")" \
    "$(jq .prepare.seconds "$D/$e.json")" "$(jq .prepare.bytes "$D/$e.json")"
}
run_prepare "sqlite --load-via sql" sqlite --load-via sql
run_prepare "sqlite (pages)" sqlite
run_prepare "lmdb" lmdb

# Peer 1: the sqlite3 CLI, SQLite's fastest bulk path without a client
n=$((ROWS * TABLES))
t0=$(now)
{
  echo "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144; PRAGMA temp_store=MEMORY; PRAGMA threads=2;"
  for t in $(seq 1 "$TABLES"); do
    echo "CREATE TABLE sbtest$t(id INTEGER PRIMARY KEY, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL);"
    echo "INSERT INTO sbtest$t SELECT value, abs(random() % $ROWS) + 1,"
    echo "  printf('%011d-%011d-%011d-%011d-%011d-%011d-%011d-%011d-%011d-%011d', abs(random()%100000000000), abs(random()%100000000000), abs(random()%100000000000), abs(random()%100000000000), abs(random()%100000000000), abs(random()%100000000000), abs(random()%100000000000), abs(random()%100000000000), abs(random()%100000000000), abs(random()%100000000000)),"
    echo "  printf('%011d-%011d-%011d-%011d-%011d', abs(random()%100000000000), abs(random()%100000000000), abs(random()%100000000000), abs(random()%100000000000), abs(random()%100000000000))"
    echo "  FROM generate_series(1, $ROWS);"
    echo "CREATE INDEX k_$t ON sbtest$t(k);"
  done
} | sqlite3 "$D/peer.db" >/dev/null
t1=$(now)
sync "$D/peer.db" # coreutils: fsync of the file, as appsim's prepare ends
t2=$(now)
echo "sqlite3 CLI generate_series load + index: $(rate $n $t0 $t2) rows/s ($n rows)"

# Peer 2: mdb_load of the same rows (main table 1 only; appsim's figure includes the index)
mdb_dump -n -s sbtest1 "$D/lmdb/sbtest-lmdb-i1.mdb" > "$D/dump.txt"
t0=$(now)
mdb_load -n -s sbtest1 -f "$D/dump.txt" "$D/peer.mdb" 2>/dev/null
t1=$(now)
echo "mdb_load of sbtest1 ($ROWS rows, no index, from a text dump): $(rate "$ROWS" $t0 $t1) rows/s"
