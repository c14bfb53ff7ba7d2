#!/usr/bin/env bash
# tests/bench/tpcc_vs_postgres.sh: appsim tpcc against its peer on the same disk, run by
# run: PostgreSQL with sysbench-tpcc (Percona-Lab, the TPC-C-like workload issue 13 names),
# at 1 and 16 connections (THREADS), TPS, latency and the disk's I/Os in flight, then the
# 16/1 ratios of each (docs/tpcc.md, "A second writer on this disk, and the peer's own
# ratio").
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
# cgroup, pg_ctlcluster).
set -euo pipefail
APPSIM=${APPSIM:-$(dirname "$0")/../../build/appsim}
T=${1:?appsim target directory}; S=${2:?scale}; D=${3:-60}; W=${4:-30}
SB=${SYSBENCH_TPCC:?set SYSBENCH_TPCC to a checkout of Percona-Lab/sysbench-tpcc}
PG_CLUSTER=${PG_CLUSTER:-15 main}; PG_DB=${PG_DB:-tpcc}; PG_USER=${PG_USER:-root}
PG_SLACK=${PG_SLACK:-168}; TRX_LEVEL=${TRX_LEVEL:-RC}; THREADS=${THREADS:-1 16}; ROUNDS=${ROUNDS:-3}; USERS=${USERS:-}
[[ $D =~ ^[1-9][0-9]*$ && $W =~ ^[0-9]+$ ]] || { echo "DURATION and WARMUP are whole seconds" >&2; exit 2; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a whole number of rounds, 1 or more" >&2; exit 2; }
[ -f "$SB/tpcc.lua" ] || { echo "$SB/tpcc.lua not found: SYSBENCH_TPCC must be a sysbench-tpcc checkout" >&2; exit 2; }
[ -w /proc/sys/vm/drop_caches ] || { echo "needs root: drops the page cache and makes a memory cgroup" >&2; exit 2; }
if ! command -v sysbench >/dev/null || ! command -v pg_ctlcluster >/dev/null; then
  echo "needs sysbench and postgresql (apt-get install sysbench postgresql)" >&2; exit 2
fi
read -r pg_ver pg_name <<<"$PG_CLUSTER"
pg_dir=$(pg_lsclusters -h | awk -v v="$pg_ver" -v n="$pg_name" '$1 == v && $2 == n {print $6}')
[ -n "$pg_dir" ] || { echo "no PostgreSQL cluster '$PG_CLUSTER' (pg_lsclusters)" >&2; exit 2; }
sysb() { (cd "$SB" && sysbench tpcc.lua --db-driver=pgsql --pgsql-host=/var/run/postgresql \
  --pgsql-user="$PG_USER" --pgsql-db="$PG_DB" --tables=1 --scale="$S" --use_fk=0 "$@"); }
psql_q() { psql -h /var/run/postgresql -U "$PG_USER" -d postgres -Atqc "$1"; }
disk=$(basename "$(findmnt -no SOURCE --target "$pg_dir")")
adisk=$(basename "$(findmnt -no SOURCE --target "$T")")
[ "$disk" = "$adisk" ] || echo "warning: PostgreSQL ($disk) and appsim ($adisk) are not on the same device" >&2

cg=/sys/fs/cgroup/memory/appsim-peer-pg
stop_pg() { pg_ctlcluster "$pg_ver" "$pg_name" stop >/dev/null 2>&1 || true; rmdir "$cg" 2>/dev/null || true; }
trap stop_pg EXIT
pg_ctlcluster "$pg_ver" "$pg_name" start 2>/dev/null || true
if [ -z "$(psql_q "select 1 from pg_database where datname = '$PG_DB'")" ]; then
  echo "preparing $PG_DB: sysbench-tpcc scale $S" >&2
  psql_q "create database $PG_DB"
  sysb --threads=2 prepare >/dev/null
  psql -h /var/run/postgresql -U "$PG_USER" -d "$PG_DB" -qc "vacuum analyze" -qc "checkpoint"
fi
pg_scale=$(psql -h /var/run/postgresql -U "$PG_USER" -d "$PG_DB" -Atqc "select count(*) from warehouse1")
[ "$pg_scale" = "$S" ] || { echo "$PG_DB holds $pg_scale warehouses, not $S: drop it (dropdb $PG_DB) or name another PG_DB" >&2; exit 2; }
db_mb=$(psql_q "select pg_database_size('$PG_DB') / 1048576")
sb_mb=$(( db_mb * 144 / 1000 )); (( sb_mb >= 16 )) || sb_mb=16
mkdir -p "$cg"; echo $(( (sb_mb + PG_SLACK) * 1048576 )) > "$cg/memory.limit_in_bytes"
echo "PostgreSQL $PG_DB: $db_mb MiB, shared_buffers ${sb_mb}MB, memory cgroup $(( sb_mb + PG_SLACK )) MiB; disk $disk" >&2
pg_ctlcluster "$pg_ver" "$pg_name" stop

drop_cache() { sync; echo 3 > /proc/sys/vm/drop_caches; }
diskstats() { awk -v d="$disk" '$3 == d {print $13, $14}' /proc/diskstats; } # io ms, weighted ms
cpustat() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; } # busy, all
ncpu=$(nproc)
# The columns: tps mean_ms p99_ms disk_qd util retries/s cores. PostgreSQL's cores are the
# machine's busy cores over the measured part (the server and sysbench's client: on this kind
# of machine they share it, as appsim's users and database share its process); appsim's are
# its process's (cpu.cores_busy).
run_pg() { # threads
  drop_cache
  sh -c 'echo $$ > "$1/cgroup.procs"; exec pg_ctlcluster "$2" "$3" start -- -o "-c shared_buffers=$4MB"' \
    sh "$cg" "$pg_ver" "$pg_name" "$sb_mb"
  local log; log=$(mktemp)
  sysb --threads="$1" --time=$(( W + D )) --report-checkpoints="$W" --percentile=99 --trx_level="$TRX_LEVEL" run >"$log" 2>&1 &
  local pid=$!
  sleep "$W"; local a c0 t0; a=$(diskstats); c0=$(cpustat); t0=$(date +%s%N)
  wait "$pid" || { cat "$log" >&2; exit 1; }
  local b c1 t1; b=$(diskstats); c1=$(cpustat); t1=$(date +%s%N)
  pg_ctlcluster "$pg_ver" "$pg_name" stop
  # the last report is the part after the checkpoint at WARMUP
  awk -v a="$a" -v b="$b" -v c0="$c0" -v c1="$c1" -v ncpu="$ncpu" -v ms=$(( (t1 - t0) / 1000000 )) '
    /transactions:/ {tps = $3; gsub(/[(]/, "", tps)} /ignored errors:/ {err = $4; gsub(/[(]/, "", err)}
    /avg:/ {mean = $2} /99th percentile:/ {p99 = $3}
    END {split(a, x, " "); split(b, y, " "); split(c0, u, " "); split(c1, v, " ")
         printf "%s %s %s %.2f %.2f %s %.2f\n", tps, mean, p99, (y[2] - x[2]) / ms, (y[1] - x[1]) / ms, err,
                ncpu * (v[1] - u[1]) / (v[2] - u[2])}' "$log"
  rm -f "$log"
}
run_appsim() { # connections -> the same fields (retries: transactions restarted on SQLITE_BUSY)
  drop_cache
  local out="$T/peer-c$1.json"
  "$APPSIM" tpcc run --target "$T" --scale "$S" --pacing off --vusers "${USERS:-$(( S * 10 ))}" --connections "$1" \
    --duration "${D}s" --warmup "${W}s" --quiet --json "$out" >/dev/null
  jq -r '.device_io as $d | "\(.summary.tps) \(.summary.latency_us.mean_us / 1000) \(.summary.latency_us.p99_us / 1000) \($d.queue_time_ms / ($d.seconds * 1000)) \($d.utilization) \(.summary.counters.retries / .summary.seconds) \(.cpu.cores_busy)"' "$out"
}

rows=$(mktemp); trap 'rm -f "$rows"; stop_pg' EXIT
printf '%-5s %-10s %4s %8s %8s %8s %8s %6s %9s %6s\n' round system conns tps mean_ms p99_ms disk_qd util retries/s cores
for ((r = 1; r <= ROUNDS; r++)); do
  order=$THREADS
  (( r % 2 == 0 )) && order=$(printf '%s\n' $THREADS | tac | tr '\n' ' ')
  for c in $order; do
    for sys in postgres appsim; do
      if [ $sys = postgres ]; then f=$(run_pg "$c"); else f=$(run_appsim "$c"); fi
      echo "$r $sys $c $f" | awk '{printf "%-5s %-10s %4s %8.1f %8.2f %8.1f %8.2f %6.2f %9.1f %6.2f\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10}' | tee -a "$rows"
    done
  done
done
first=$(printf '%s\n' $THREADS | head -n1); last=$(printf '%s\n' $THREADS | tail -n1)
[ "$first" != "$last" ] || exit 0
awk -v first="$first" -v last="$last" '
  function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { t[$1, $2, $3] = $4; q[$1, $2, $3] = $7; if ($1 > rounds) rounds = $1 }
  END {
    print ""
    split("postgres appsim", sys, " ")
    for (s = 1; s <= 2; s++) {
      rt = ""; rq = ""
      for (r = 1; r <= rounds; r++) {
        rt = rt " " t[r, sys[s], last] / t[r, sys[s], first]; rq = rq " " q[r, sys[s], last] / q[r, sys[s], first]
      }
      printf "%-9s %s -> %s connections, median of %d rounds: TPS %.2fx, disk I/Os in flight %.2fx\n", sys[s], first, last, rounds, median(rt), median(rq)
    }
  }' "$rows"
