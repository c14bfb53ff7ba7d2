# shellcheck shell=bash
# tests/bench/fidelity_engines.sh: the engines of the fidelity harness (sourced by
# tests/bench/fidelity.sh): PostgreSQL 15 ("postgres") and MariaDB 10.11's InnoDB
# ("innodb"), each a server the harness starts in its own data directory on the drive,
# driven by sysbench 1.0.20 (oltp_read_write, or Percona-Lab's sysbench-tpcc); and
# appsim ("appsim" on SQLite, "appsim-lmdb" for sysbench on LMDB).
# Settings (the same for every drive; never tuned per drive):
#   PostgreSQL: shared_buffers = cache ratio x database size; fsync, synchronous_commit,
#     full_page_writes on (its defaults); max_connections 40; everything else default.
#   InnoDB: innodb_buffer_pool_size = cache ratio x the schema's files;
#     innodb_flush_log_at_trx_commit=1, innodb_doublewrite=1, innodb_flush_method=O_DIRECT;
#     innodb_log_file_size left at its default (96M).
#   appsim: --buffer = cache ratio x its database files (O_DIRECT, so no page cache).
# Each server runs in the drive's cgroups with a memory limit of its buffer plus a slack
# for its processes' own memory (PG_SLACK_MB, MY_SLACK_MB), so that the page cache adds
# little to the cache the ratio sets; the result records the page cache the engine held.
# The client (sysbench) runs outside the cgroups: it does no disk I/O.

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_SLACK_MB=${PG_SLACK_MB:-96}
MY_SLACK_MB=${MY_SLACK_MB:-192}
FID_SOCK=/tmp/appsim-fidelity-sock
SB_TABLES=${SB_TABLES:-8}
SB_ROWS=${SB_ROWS:-250000}
TPCC_SCALE=${TPCC_SCALE:-3}
FID_THREADS=${FID_THREADS:-8}

sb_shape() { # the workload's sysbench arguments (from sysbench-tpcc's directory for tpcc)
  case $1 in
  sysbench) echo "oltp_read_write --tables=$SB_TABLES --table-size=$SB_ROWS --rand-type=special" ;;
  tpcc) echo "tpcc.lua --tables=1 --scale=$TPCC_SCALE --use_fk=0 --trx_level=RC" ;;
  esac
}

pg_ctl_as() { runuser -u postgres -- "$PG_BIN/pg_ctl" "$@"; }
pg_sql() { psql -h "$FID_SOCK" -U postgres -d "${2:-postgres}" -Atqc "$1"; }
my_sql() { mariadb -S "$FID_SOCK/my.sock" -u root -N -B -e "$1"; }
sb_conn() {
  case $1 in
  postgres) echo "--db-driver=pgsql --pgsql-host=$FID_SOCK --pgsql-user=postgres --pgsql-db=$2" ;;
  innodb) echo "--db-driver=mysql --mysql-socket=$FID_SOCK/my.sock --mysql-user=root --mysql-db=$2" ;;
  esac
}

# server_start ENGINE DATADIR BUFFER_MB: starts the server on DATADIR, in the drive's
# cgroups when FID_IN_CGROUP is set, and waits until it answers.
server_start() {
  local eng=$1 dir=$2 mb=$3
  mkdir -p "$FID_SOCK"; chmod 777 "$FID_SOCK"
  case $eng in
  postgres)
    sh -c '[ -z "$1" ] || { echo $$ >"$2/cgroup.procs"; echo $$ >"$3/cgroup.procs"; }; shift 3; exec "$@"' sh \
      "${FID_IN_CGROUP:-}" "$FID_CG_BLKIO" "$FID_CG_MEM" \
      runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$dir" -w -l "$dir/../postgres.log" \
      -o "-c shared_buffers=${mb}MB -c unix_socket_directories=$FID_SOCK -c listen_addresses='' -c max_connections=40" \
      start >/dev/null
    ;;
  innodb)
    sh -c '[ -z "$1" ] || { echo $$ >"$2/cgroup.procs"; echo $$ >"$3/cgroup.procs"; }; shift 3; exec "$@"' sh \
      "${FID_IN_CGROUP:-}" "$FID_CG_BLKIO" "$FID_CG_MEM" \
      mariadbd --no-defaults --datadir="$dir" --socket="$FID_SOCK/my.sock" --skip-networking \
      --user=root --pid-file="$FID_SOCK/my.pid" --log-error="$dir/../mariadb.log" \
      --innodb-buffer-pool-size="${mb}M" --innodb-flush-log-at-trx-commit=1 \
      --innodb-doublewrite=1 --innodb-flush-method=O_DIRECT --max-connections=40 &
    local i
    for ((i = 0; i < 600; i++)); do
      mariadb-admin -S "$FID_SOCK/my.sock" -u root ping >/dev/null 2>&1 && return 0
      sleep 0.1
    done
    echo "mariadbd did not start: see $dir/../mariadb.log" >&2; return 1
    ;;
  esac
}

server_stop() {
  case $1 in
  postgres) pg_ctl_as -D "$2" -m fast -w stop >/dev/null ;;
  innodb)
    local pid; pid=$(cat "$FID_SOCK/my.pid" 2>/dev/null || true)
    mariadb-admin -S "$FID_SOCK/my.sock" -u root shutdown >/dev/null 2>&1 || true
    [ -z "$pid" ] || while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    ;;
  esac
}

# engine_prepare ENGINE WORKLOAD DIR: loads the workload's data into DIR (a fresh
# directory) and leaves it at rest (server stopped, checkpointed).
engine_prepare() {
  local eng=$1 wl=$2 dir=$3 db=sbtest
  [ "$wl" = tpcc ] && db=tpcc
  mkdir -p "$dir"
  case $eng in
  postgres)
    chown postgres: "$dir"
    runuser -u postgres -- "$PG_BIN/initdb" -D "$dir/data" -A trust -U postgres --no-sync >/dev/null
    FID_IN_CGROUP='' server_start postgres "$dir/data" 128
    pg_sql "create database $db"
    # shellcheck disable=SC2046
    (cd "${SYSBENCH_TPCC:-.}" && sysbench $(sb_shape "$wl") $(sb_conn postgres $db) --threads=2 prepare >/dev/null)
    pg_sql "vacuum analyze" $db; pg_sql "checkpoint"
    pg_sql "select pg_database_size('$db')" >"$dir/data_bytes"
    server_stop postgres "$dir/data"
    ;;
  innodb)
    mariadb-install-db --no-defaults --datadir="$dir/data" --user=root \
      --auth-root-authentication-method=normal --skip-test-db >/dev/null 2>&1
    FID_IN_CGROUP='' server_start innodb "$dir/data" 128
    my_sql "create database $db"
    # shellcheck disable=SC2046
    (cd "${SYSBENCH_TPCC:-.}" && sysbench $(sb_shape "$wl") $(sb_conn innodb $db) --threads=2 prepare >/dev/null)
    my_sql "use $db; analyze table $(my_sql "select group_concat(table_name) from information_schema.tables where table_schema='$db'")" >/dev/null
    server_stop innodb "$dir/data"
    du -sb "$dir/data/$db" | cut -f1 >"$dir/data_bytes"
    ;;
  appsim | appsim-lmdb)
    if [ "$wl" = tpcc ]; then
      "$APPSIM" tpcc prepare --target "$dir/t" --keep-free 64M --scale "$TPCC_SCALE" --quiet >/dev/null
    else
      local e=sqlite; [ "$eng" = appsim ] || e=lmdb
      "$APPSIM" sysbench prepare --target "$dir/t" --keep-free 64M --engine $e --tables "$SB_TABLES" \
        --table-size "$SB_ROWS" --quiet >/dev/null
    fi
    appsim_data_bytes "$dir/t" >"$dir/data_bytes"
    ;;
  esac
}

# The database files' bytes in an appsim target (not its manifest or pristine copies).
appsim_data_bytes() {
  find "$1" -maxdepth 1 -type f \( -name '*.db' -o -name '*.mdb' \) -printf '%s\n' | awk '{s += $1} END {print s + 0}'
}
