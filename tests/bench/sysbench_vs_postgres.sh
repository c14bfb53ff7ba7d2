#!/usr/bin/env bash
# tests/bench/sysbench_vs_postgres.sh: appsim sysbench (SQLite) against its peer,
# PostgreSQL with sysbench's own oltp_read_write, on the same disk, run by run, at
# 1 and 16 threads (THREADS): TPS, latency, the disk's I/Os in flight and the cores, then
# the 16/1 ratios of each (docs/measurements/sysbench.md, "The peer in the same run").
# usage: tests/bench/sysbench_vs_postgres.sh APPSIM_DIR [DURATION (30)] [WARMUP (10)]
#   APPSIM_DIR  holds `appsim sysbench prepare --tables TABLES --table-size SIZE`
#   TABLES 8, SIZE 1000000, BUFFER 160 (MiB: appsim's --buffer), PG_MEM 192 (MiB: the
#   server's memory cgroup), PG_SB 64 (MiB: shared_buffers): PostgreSQL's reference shape
#   ("8 x 1M rows, uniform ids, server memory capped at 192M"; appsim with 160M). PostgreSQL's
#   default 128 MB of shared_buffers left too little of 192 MiB for 16 backends: the
#   kernel killed one (cgroup out of memory) on the test VM.
#   PG_CLUSTER "15 main", PG_USER root (a superuser role: `su postgres -c 'createuser -s
#   root'`), PG_DB sbtest: prepared by sysbench (oltp_read_write prepare, then VACUUM
#   ANALYZE) when it does not exist
#   THREADS "1 16", ROUNDS 3 (every other round in reverse order)
# Both sides: --rand-type uniform, durable commits (PostgreSQL's defaults; appsim --sync
# full), the page cache dropped before every run, only the WARMUP-to-end part counted.
# Needs root. The shared part is tests/bench/postgres_peer.sh.
set -euo pipefail
APPSIM=${APPSIM:-$(dirname "$0")/../../build/appsim}
T=${1:?appsim target directory}; D=${2:-30}; W=${3:-10}
TABLES=${TABLES:-8}; SIZE=${SIZE:-1000000}; BUFFER=${BUFFER:-160}; PG_MEM=${PG_MEM:-192}; PG_SB=${PG_SB:-64}
PG_DB=${PG_DB:-sbtest}; THREADS=${THREADS:-1 16}; ROUNDS=${ROUNDS:-3}
# shellcheck source=tests/bench/postgres_peer.sh
. "$(dirname "$0")/postgres_peer.sh"
shape=(oltp_read_write --pgsql-db="$PG_DB" --tables="$TABLES" --table-size="$SIZE" --rand-type=uniform)

peer_init
if [ -z "$(peer_psql "select 1 from pg_database where datname = '$PG_DB'")" ]; then
  echo "preparing $PG_DB: sysbench oltp_read_write, $TABLES x $SIZE rows" >&2
  peer_psql "create database $PG_DB"
  sysbench "${shape[@]}" --db-driver=pgsql --pgsql-host=/var/run/postgresql --pgsql-user="$PG_USER" \
    --threads=2 prepare >/dev/null
  peer_psql "vacuum analyze" "$PG_DB"; peer_psql "checkpoint"
fi
pg_rows=$(peer_psql "select count(*) from sbtest$TABLES" "$PG_DB" 2>/dev/null || echo none)
[ "$pg_rows" = "$SIZE" ] || { echo "$PG_DB's sbtest$TABLES holds $pg_rows rows, not $SIZE: drop it (dropdb $PG_DB) or name another PG_DB" >&2; exit 2; }
echo "PostgreSQL $PG_DB: $(peer_psql "select pg_database_size('$PG_DB') / 1048576") MiB" >&2
peer_cap "$PG_SB" "$PG_MEM"

peer_run_pg() { peer_pg_run "${shape[@]}" --threads="$1"; }
peer_run_appsim() {
  peer_drop_cache
  local out="$T/peer-t$1.json"
  "$APPSIM" sysbench run --engine sqlite --target "$T" --tables "$TABLES" --table-size "$SIZE" \
    --rand-type uniform --buffer "${BUFFER}M" --threads "$1" --duration "${D}s" --warmup "${W}s" \
    --quiet --json "$out" >/dev/null
  peer_appsim_columns "$out"
}
peer_rounds
