#!/usr/bin/env bash
# SQLite prepare's two load paths give the same database: `--load-via pages` (b-tree
# pages written by appsim in SQLite's file format) and `--load-via sql` (INSERT, then
# CREATE INDEX) with the same seed hold identical rows, both pass SQLite's
# integrity_check, and the k index answers the same ranges. A prepare interrupted by
# Ctrl-C while writing pages leaves a valid file whose instance is marked incomplete,
# and prepare works again after cleanup. --load-via is refused for LMDB. The tables
# share one file (sbtest-sqlite-i1-tables.db) beside the instance's meta file; with
# --table-files per-table each has its own (sbtest-sqlite-i1-tN.db), loaded in
# parallel, with the same rows; cleanup removes them all.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v sqlite3 >/dev/null || { echo "skipped: the sqlite3 CLI is not installed"; exit 77; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }

SHAPE=(--tables 3 --table-size 30000 --seed 7)
for via in pages sql; do
  "$APPSIM" sysbench prepare --target "$APPSIM_TMP/$via" "${SHAPE[@]}" --load-via "$via" --quiet >/dev/null
done
"$APPSIM" sysbench prepare --target "$APPSIM_TMP/per-table" "${SHAPE[@]}" --table-files per-table \
  --quiet >/dev/null
[ ! -e "$APPSIM_TMP/pages/sbtest-sqlite-i1-t1.db" ] || fail "the shared layout made a file per table"
for t in 1 2 3; do
  [ ! -e "$APPSIM_TMP/per-table/sbtest-sqlite-i1-tables.db" ] || fail "per-table made the shared file"
  P="$APPSIM_TMP/pages/sbtest-sqlite-i1-tables.db" S="$APPSIM_TMP/per-table/sbtest-sqlite-i1-t$t.db"
  [ "$(sqlite3 "$S" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check of $S"
  diff=$(sqlite3 "$P" "ATTACH '$S' AS s;
    SELECT (SELECT count(*) FROM (SELECT * FROM main.sbtest$t EXCEPT SELECT * FROM s.sbtest$t))
         + (SELECT count(*) FROM (SELECT * FROM s.sbtest$t EXCEPT SELECT * FROM main.sbtest$t));")
  [ "$diff" = 0 ] || fail "sbtest$t differs between the layouts ($diff rows)"
  S="$APPSIM_TMP/sql/sbtest-sqlite-i1-tables.db"
  for db in "$P" "$S"; do
    [ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check of $db"
  done
  diff=$(sqlite3 "$P" "ATTACH '$S' AS s;
    SELECT (SELECT count(*) FROM (SELECT * FROM main.sbtest$t EXCEPT SELECT * FROM s.sbtest$t))
         + (SELECT count(*) FROM (SELECT * FROM s.sbtest$t EXCEPT SELECT * FROM main.sbtest$t));")
  [ "$diff" = 0 ] || fail "sbtest$t differs between the load paths ($diff rows)"
  q="SELECT count(*), sum(id), min(id), max(id) FROM sbtest$t INDEXED BY k_$t WHERE k BETWEEN 1000 AND 1500"
  [ "$(sqlite3 "$P" "$q")" = "$(sqlite3 "$S" "$q")" ] || fail "k index range differs on sbtest$t"
  [ "$(sqlite3 "$P" "SELECT count(*) FROM sbtest$t")" = 30000 ] || fail "sbtest$t row count"
done
[ "$(sqlite3 "$APPSIM_TMP/pages/sbtest-sqlite-i1.db" 'SELECT tables, table_size, complete FROM sbtest_meta')" = "3|30000|1" ] \
  || fail "meta row of the prepared instance"
# per-table runs as prepared, and a run asking for the other layout is refused
"$APPSIM" sysbench run --target "$APPSIM_TMP/per-table" "${SHAPE[@]}" --threads 2 --time 1 \
  --sync off --quiet --json "$APPSIM_TMP/pt.json" >/dev/null
jq -e '.summary.count > 0 and .engine.instances[0].table_files == "per-table"
       and (.engine.instances[0].files | length) == 3' "$APPSIM_TMP/pt.json" >/dev/null \
  || fail "run on per-table files"
set +e
"$APPSIM" sysbench run --target "$APPSIM_TMP/per-table" "${SHAPE[@]}" --table-files shared \
  --time 1 --quiet >/dev/null 2>"$APPSIM_TMP/mismatch.err"
rc=$?
set -e
[ $rc = 2 ] && grep -q 'prepared with --table-files per-table' "$APPSIM_TMP/mismatch.err" \
  || fail "a run asking for the other layout: exit $rc, $(cat "$APPSIM_TMP/mismatch.err")"
# the pages-loaded tables run and check like the others
"$APPSIM" sysbench run --target "$APPSIM_TMP/pages" "${SHAPE[@]}" --threads 2 --time 1 --sync off \
  --quiet --json "$APPSIM_TMP/run.json" >/dev/null
jq -e '.summary.count > 0 and .summary.errors == 0 and .engine.instances[0].table_files == "shared"' \
  "$APPSIM_TMP/run.json" >/dev/null || fail "run on pages-loaded tables"
"$APPSIM" sysbench check --target "$APPSIM_TMP/pages" "${SHAPE[@]}" --quiet >/dev/null || fail "check on pages-loaded tables"

# Ctrl-C while pages are being written (4 x 1M rows take over a second)
I="$APPSIM_TMP/interrupted"
"$APPSIM" sysbench prepare --target "$I" --tables 4 --table-size 1000000 --quiet >/dev/null 2>&1 &
pid=$!
sleep 0.4
kill -INT $pid
set +e; wait $pid; rc=$?; set -e
if [ $rc = 0 ]; then
  echo "note: prepare finished before Ctrl-C reached it; interrupt case not exercised"
else
  for f in "$I"/sbtest-sqlite-i1-t*.db; do
    [ "$(sqlite3 "$f" 'PRAGMA integrity_check')" = ok ] || fail "interrupted file $f is not valid"
  done
  [ "$(sqlite3 "$I/sbtest-sqlite-i1.db" 'SELECT complete FROM sbtest_meta')" = 0 ] || fail "interrupted instance not marked incomplete"
  set +e; "$APPSIM" sysbench run --target "$I" --tables 4 --table-size 1000000 --time 1 --quiet >/dev/null 2>&1; rc=$?; set -e
  [ $rc = 2 ] || fail "run on an interrupted prepare: exit $rc, want 2"
  "$APPSIM" sysbench cleanup --target "$I" --quiet >/dev/null
  [ -z "$(ls "$I" | grep sbtest || true)" ] || fail "cleanup left $(ls "$I")"
  "$APPSIM" sysbench prepare --target "$I" --tables 1 --table-size 5000 --quiet >/dev/null || fail "prepare after cleanup"
fi

set +e
"$APPSIM" sysbench prepare --engine lmdb --target "$APPSIM_TMP/lmdb" --load-via sql --quiet >/dev/null 2>&1; rc=$?
"$APPSIM" sysbench prepare --target "$APPSIM_TMP/bad" --load-via fast --quiet >/dev/null 2>&1; rc2=$?
set -e
[ $rc = 2 ] || fail "--load-via with LMDB: exit $rc, want 2"
[ $rc2 = 2 ] || fail "--load-via fast: exit $rc2, want 2"
echo "ok"
