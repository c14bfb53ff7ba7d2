#!/usr/bin/env bash
# sysbench prepare at the labs' size: TABLES x ROWS (default 100 x 1,000,000, about
# 22 GB for SQLite) by one engine and load path, then every table checked by the
# engine itself: SQLite's `PRAGMA integrity_check` on each table file (two at a time)
# plus `appsim sysbench check`; LMDB `appsim sysbench check` (rows and k index of
# every table). Prints rows/s, bytes, check times and the load average; removes the
# databases at the end.
# Usage: tests/bench/sysbench_prepare_scale.sh DIR [sqlite-pages|sqlite-sql|lmdb] [TABLES] [ROWS]
# DIR is a directory on the drive to measure (it needs about 230 bytes x TABLES x
# ROWS free, plus appsim's --keep-free of 1 GiB). Needs a built appsim (BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/../.."
APPSIM=${APPSIM:-${BUILD_DIR:-build}/appsim}
DIR=${1:?usage: $0 DIR [sqlite-pages|sqlite-sql|lmdb] [TABLES] [ROWS]}
KIND=${2:-sqlite-pages}
TABLES=${3:-100}
ROWS=${4:-1000000}
case $KIND in
  sqlite-pages) OPTS=(--engine sqlite --load-via pages) ;;
  sqlite-sql) OPTS=(--engine sqlite --load-via sql) ;;
  lmdb) OPTS=(--engine lmdb) ;;
  *) echo "unknown kind $KIND" >&2; exit 2 ;;
esac
T="$DIR/appsim-prepare-scale-$KIND"
[ ! -e "$T" ] || { echo "$T exists; remove it first" >&2; exit 2; }
trap '"$APPSIM" sysbench cleanup "${OPTS[@]:0:2}" --target "$T" --quiet >/dev/null 2>&1 || true; rm -rf "$T"' EXIT
SHAPE=(--tables "$TABLES" --table-size "$ROWS")

echo "machine: $(nproc) cores, $(uname -r), $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "target: $(df -h "$DIR" | tail -1)"
"$APPSIM" sysbench prepare "${OPTS[@]}" "${SHAPE[@]}" --target "$T" --json "$T.prepare.json" --quiet >/dev/null
jq -r '.prepare | "prepare \(.engine): \(.rows) rows in \(.seconds | floor) s = \(.rows_per_s | floor) rows/s, \(.bytes) bytes, \(.loader_threads) loader threads"' "$T.prepare.json"
echo "load after prepare: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${KIND%%-*}" = sqlite ]; then
  t0=$(date +%s)
  bad=$(ls "$T"/sbtest-sqlite-i1-t*.db | xargs -P 2 -I{} sh -c \
    'r=$(sqlite3 "{}" "PRAGMA integrity_check"); [ "$r" = ok ] || echo "{}: $r"')
  [ -z "$bad" ] || { echo "integrity_check FAILED: $bad"; exit 1; }
  echo "PRAGMA integrity_check: ok on all $TABLES table files ($(($(date +%s) - t0)) s)"
fi
t0=$(date +%s)
"$APPSIM" sysbench check "${OPTS[@]:0:2}" "${SHAPE[@]}" --target "$T" --quiet --json "$T.check.json" >/dev/null \
  || { echo "appsim sysbench check FAILED"; exit 1; }
echo "appsim sysbench check: consistent ($(($(date +%s) - t0)) s)"
rm -f "$T.prepare.json" "$T.check.json"
