#!/usr/bin/env bash
# tests/bench/tpcc_vs_postgres.sh: appsim tpcc against its peer on the same disk, run by
# run: PostgreSQL with sysbench-tpcc (Percona-Lab's TPC-C-like workload for sysbench),
# at 1 and 16 connections (THREADS), TPS, latency and the disk's I/Os in flight, then the
# 16/1 ratios of each (docs/measurements/tpcc.md, "The PostgreSQL peer on the same disk").
# usage: SYSBENCH_TPCC=DIR tests/bench/tpcc_vs_postgres.sh APPSIM_DIR SCALE [DURATION (60)]
#        [WARMUP (30)]
#   SYSBENCH_TPCC  a checkout of github.com/Percona-Lab/sysbench-tpcc (tpcc.lua); it is not
#                  packaged by Debian, and appsim does not ship it
#   APPSIM_DIR     holds `appsim tpcc prepare --scale SCALE`
#   PG_CLUSTER     "15 main" (pg_ctlcluster's version and name; the server runs as its owner)
#   PG_USER        root: sysbench and psql connect through the socket as this role, which must
#                  be a superuser (`su postgres -c 'createuser -s root'`)
#   PG_DB          tpcc; prepared by sysbench-tpcc (--tables 1 --scale SCALE --use_fk 0, then
#                  VACUUM ANALYZE) when it does not exist (20 warehouses in 4 min 20 s on the
#                  2-core test VM)
#   TRX_LEVEL      RC (sysbench-tpcc's --trx_level: RC is PostgreSQL's default isolation and
#                  what HammerDB runs; sysbench-tpcc's own default, RR, aborts a transaction
#                  that meets a concurrent update of its row, 19 % of them at 16 threads and
#                  scale 10 on the test VM)
#   THREADS "1 16", ROUNDS 3 (every other round in reverse order); USERS: appsim's users,
#   by default 10 per warehouse (the spec's terminals), so that every warehouse is some
#   user's home as every sysbench-tpcc transaction draws its warehouse at random; appsim's
#   latencies therefore include the users' queue for a connection, sysbench's do not (its
#   threads are its users): compare TPS and the disk, not latency
# Same shape on both sides: no think time, the page cache dropped before every run, a
# buffer of 14.4 % of the database (appsim's default; PostgreSQL's shared_buffers set to
# 14.4 % of pg_database_size), the server in a memory cgroup of shared_buffers + PG_SLACK
# (168 MiB: backends and a little page cache) so that the page cache does not answer for
# the disk (appsim reads with O_DIRECT); durable commits on both (PostgreSQL's defaults:
# fsync, synchronous_commit, full_page_writes). Only the WARMUP-to-end part counts:
# sysbench's --report-checkpoints resets its statistics there; the disk's I/Os in flight
# are /proc/diskstats' weighted time over the same part. Needs root (drop_caches, the
# cgroup, pg_ctlcluster). The shared part is tests/bench/postgres_peer.sh.
set -euo pipefail
APPSIM=${APPSIM:-$(dirname "$0")/../../build/appsim}
T=${1:?appsim target directory}; S=${2:?scale}; D=${3:-60}; W=${4:-30}
SB=${SYSBENCH_TPCC:?set SYSBENCH_TPCC to a checkout of Percona-Lab/sysbench-tpcc}
PG_DB=${PG_DB:-tpcc}; PG_SLACK=${PG_SLACK:-168}; TRX_LEVEL=${TRX_LEVEL:-RC}
THREADS=${THREADS:-1 16}; ROUNDS=${ROUNDS:-3}; USERS=${USERS:-}
[ -f "$SB/tpcc.lua" ] || { echo "$SB/tpcc.lua not found: SYSBENCH_TPCC must be a sysbench-tpcc checkout" >&2; exit 2; }
# shellcheck source=tests/bench/postgres_peer.sh
. "$(dirname "$0")/postgres_peer.sh"
shape=(tpcc.lua --pgsql-db="$PG_DB" --tables=1 --scale="$S" --use_fk=0)

peer_init
if [ -z "$(peer_psql "select 1 from pg_database where datname = '$PG_DB'")" ]; then
  echo "preparing $PG_DB: sysbench-tpcc scale $S" >&2
  peer_psql "create database $PG_DB"
  (cd "$SB" && sysbench "${shape[@]}" --db-driver=pgsql --pgsql-host=/var/run/postgresql \
    --pgsql-user="$PG_USER" --threads=2 prepare >/dev/null)
  peer_psql "vacuum analyze" "$PG_DB"; peer_psql "checkpoint"
fi
pg_scale=$(peer_psql "select count(*) from warehouse1" "$PG_DB")
[ "$pg_scale" = "$S" ] || { echo "$PG_DB holds $pg_scale warehouses, not $S: drop it (dropdb $PG_DB) or name another PG_DB" >&2; exit 2; }
db_mb=$(peer_psql "select pg_database_size('$PG_DB') / 1048576")
sb_mb=$(( db_mb * 144 / 1000 )); (( sb_mb >= 16 )) || sb_mb=16
echo "PostgreSQL $PG_DB: $db_mb MiB" >&2
peer_cap "$sb_mb" $(( sb_mb + PG_SLACK ))

peer_run_pg() { (cd "$SB" && peer_pg_run "${shape[@]}" --threads="$1" --trx_level="$TRX_LEVEL"); }
peer_run_appsim() {
  peer_drop_cache
  local out="$T/peer-c$1.json"
  "$APPSIM" tpcc run --target "$T" --scale "$S" --pacing off --vusers "${USERS:-$(( S * 10 ))}" --connections "$1" \
    --duration "${D}s" --warmup "${W}s" --quiet --json "$out" >/dev/null
  peer_appsim_columns "$out"
}
peer_rounds
