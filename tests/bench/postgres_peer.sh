# shellcheck shell=bash
# tests/bench/postgres_peer.sh: sourced by tpcc_vs_postgres.sh and sysbench_vs_postgres.sh,
# which run appsim and its peer, PostgreSQL driven by sysbench, on the same disk, run by run.
# The caller sets T (appsim's target), D and W (measured and warm-up seconds), THREADS,
# ROUNDS, then calls peer_init, defines peer_run_pg THREADS (runs `peer_pg_run LUA ARGS...`)
# and peer_run_appsim CONNECTIONS, and calls peer_rounds. Both print the same columns:
#   tps mean_ms p99_ms disk_qd util retries/s cores
# PostgreSQL's cores are the machine's busy cores over the measured part (the server and
# sysbench's client: on this kind of machine they share it, as appsim's users and
# database share its process); appsim's are its process's (cpu.cores_busy). PostgreSQL's
# retries are sysbench's ignored errors (aborted and restarted transactions), appsim's its
# restarts on SQLITE_BUSY.
# Needs root (drop_caches, a memory cgroup, pg_ctlcluster).

PG_CLUSTER=${PG_CLUSTER:-15 main}; PG_USER=${PG_USER:-root}
# shellcheck source=tests/bench/rounds.sh
. "$(dirname "${BASH_SOURCE[0]}")/rounds.sh"
[[ $D =~ ^[1-9][0-9]*$ && $W =~ ^[0-9]+$ ]] || { echo "DURATION and WARMUP are whole seconds" >&2; exit 2; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a whole number of rounds, 1 or more" >&2; exit 2; }
[ -w /proc/sys/vm/drop_caches ] || { echo "needs root: drops the page cache and makes a memory cgroup" >&2; exit 2; }
if ! command -v sysbench >/dev/null || ! command -v pg_ctlcluster >/dev/null || ! command -v jq >/dev/null; then
  echo "needs sysbench, postgresql and jq (apt-get install sysbench postgresql jq)" >&2; exit 2
fi

# Finds the cluster and the disks, starts the server (for the caller's prepare and
# checks; peer_cap stops it) and stops it on exit.
peer_init() {
  read -r pg_ver pg_name <<<"$PG_CLUSTER"
  pg_dir=$(pg_lsclusters -h | awk -v v="$pg_ver" -v n="$pg_name" '$1 == v && $2 == n {print $6}')
  [ -n "$pg_dir" ] || { echo "no PostgreSQL cluster '$PG_CLUSTER' (pg_lsclusters)" >&2; exit 2; }
  disk=$(basename "$(findmnt -no SOURCE --target "$pg_dir")")
  local adisk; adisk=$(basename "$(findmnt -no SOURCE --target "$T")")
  [ "$disk" = "$adisk" ] || echo "warning: PostgreSQL ($disk) and appsim ($adisk) are not on the same device" >&2
  cg=/sys/fs/cgroup/memory/appsim-peer-pg
  peer_rows=$(mktemp)
  trap 'rm -f "$peer_rows"; peer_stop' EXIT
  pg_ctlcluster "$pg_ver" "$pg_name" start 2>/dev/null || true
  ncpu=$(nproc)
}
peer_stop() { pg_ctlcluster "$pg_ver" "$pg_name" stop >/dev/null 2>&1 || true; rmdir "$cg" 2>/dev/null || true; }
peer_psql() { psql -h /var/run/postgresql -U "$PG_USER" -d "${2:-postgres}" -Atqc "$1"; }

# The server's memory from now on: shared_buffers SB_MB and a memory cgroup of LIMIT_MB
# (so that the page cache cannot answer for the disk). Stops the server.
peer_cap() {
  pg_sb_mb=$1
  mkdir -p "$cg"; echo $(( $2 * 1048576 )) > "$cg/memory.limit_in_bytes"
  echo "PostgreSQL: shared_buffers ${1}MB, memory cgroup $2 MiB; disk $disk" >&2
  pg_ctlcluster "$pg_ver" "$pg_name" stop
}

peer_drop_cache() { sync; echo 3 > /proc/sys/vm/drop_caches; }
peer_diskstats() { awk -v d="$disk" '$3 == d {print $13, $14}' /proc/diskstats; } # io ms, weighted ms
peer_cpustat() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; } # busy, all

# Runs `sysbench ARGS... run` (from the caller's directory) against a freshly started,
# capped server with a cold page cache, W + D seconds, counting the part after W.
peer_pg_run() {
  peer_drop_cache
  sh -c 'echo $$ > "$1/cgroup.procs"; exec pg_ctlcluster "$2" "$3" start -- -o "-c shared_buffers=$4MB"' \
    sh "$cg" "$pg_ver" "$pg_name" "$pg_sb_mb"
  local log; log=$(mktemp)
  sysbench "$@" --db-driver=pgsql --pgsql-host=/var/run/postgresql --pgsql-user="$PG_USER" \
    --time=$(( W + D )) --report-checkpoints="$W" --percentile=99 run >"$log" 2>&1 &
  local pid=$!
  sleep "$W"; local a c0 t0; a=$(peer_diskstats); c0=$(peer_cpustat); t0=$(date +%s%N)
  wait "$pid" || { cat "$log" >&2; exit 1; }
  local b c1 t1; b=$(peer_diskstats); c1=$(peer_cpustat); t1=$(date +%s%N)
  pg_ctlcluster "$pg_ver" "$pg_name" stop
  # the last report is the part after the checkpoint at W
  awk -v a="$a" -v b="$b" -v c0="$c0" -v c1="$c1" -v ncpu="$ncpu" -v ms=$(( (t1 - t0) / 1000000 )) '
    /transactions:/ {tps = $3; gsub(/[(]/, "", tps)} /ignored errors:/ {err = $4; gsub(/[(]/, "", err)}
    /avg:/ {mean = $2} /99th percentile:/ {p99 = $3}
    END {split(a, x, " "); split(b, y, " "); split(c0, u, " "); split(c1, v, " ")
         printf "%s %s %s %.2f %.2f %s %.2f\n", tps, mean, p99, (y[2] - x[2]) / ms, (y[1] - x[1]) / ms, err,
                ncpu * (v[1] - u[1]) / (v[2] - u[2])}' "$log"
  rm -f "$log"
}

# The same columns from an appsim result file.
peer_appsim_columns() {
  jq -r '.device_io as $d | "\(.summary.tps) \(.summary.latency_us.mean_us / 1000) \(.summary.latency_us.p99_us / 1000) \($d.queue_time_ms / ($d.seconds * 1000)) \($d.utilization) \(.summary.counters.retries / .summary.seconds) \(.cpu.cores_busy)"' "$1"
}

# ROUNDS rounds of THREADS (every other round in reverse order), PostgreSQL then appsim
# at each count, then each system's median ratio of the last count to the first.
peer_rounds() {
  printf '%-5s %-10s %4s %8s %8s %8s %8s %6s %9s %6s\n' round system conns tps mean_ms p99_ms disk_qd util retries/s cores
  local r c sys f
  for ((r = 1; r <= ROUNDS; r++)); do
    for c in $(round_order "$r" "$THREADS"); do
      for sys in postgres appsim; do
        if [ $sys = postgres ]; then f=$(peer_run_pg "$c"); else f=$(peer_run_appsim "$c"); fi
        echo "$r $sys $c $f" | awk '{printf "%-5s %-10s %4s %8.1f %8.2f %8.1f %8.2f %6.2f %9.1f %6.2f\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10}' | tee -a "$peer_rows"
      done
    done
  done
  local first last
  first=$(printf '%s\n' $THREADS | head -n1); last=$(printf '%s\n' $THREADS | tail -n1)
  [ "$first" != "$last" ] || return 0
  awk -v first="$first" -v last="$last" "$MEDIAN_AWK"'
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
    }' "$peer_rows"
}
