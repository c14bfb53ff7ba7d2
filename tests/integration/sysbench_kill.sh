#!/usr/bin/env bash
# tests/integration/sysbench_kill.sh: SIGKILL in the middle of a SQLite sysbench run with
# group commit and prefetch (the defaults, --sync full, 8 threads over 3 table files),
# then `check`: every table file opens (WAL recovery through the VFS), quick_check
# passes, and each table's rows agree with its k index (each file's commits are atomic).
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
T="$APPSIM_TMP/target"
fail() { echo "FAIL: $*" >&2; exit 1; }
SHAPE=(--tables 3 --table-size 5000)

"$APPSIM" sysbench prepare --target "$T" "${SHAPE[@]}" --quiet >/dev/null
"$APPSIM" sysbench run --target "$T" "${SHAPE[@]}" --threads 8 --time 60 --buffer 2M \
  --quiet --json "$APPSIM_TMP/killed.json" > "$APPSIM_TMP/run.out" 2>&1 &
pid=$!
# Kill while transactions are committing: wait until the run has done some work.
sleep 4
kill -0 $pid 2>/dev/null || { cat "$APPSIM_TMP/run.out"; fail "the run ended early"; }
kill -KILL $pid
wait $pid 2>/dev/null || true
[ -s "$T/sbtest-sqlite-i1-tables.db-wal" ] || fail "the run committed nothing before the kill"

set +e
"$APPSIM" sysbench check --target "$T" "${SHAPE[@]}" --json "$APPSIM_TMP/check.json" \
  > "$APPSIM_TMP/check.txt" 2>&1
rc=$?
set -e
cat "$APPSIM_TMP/check.txt"
[ $rc -eq 0 ] || fail "check exit status $rc"
jq -e '.check[0].index_consistent and .check[0].quick_check == "ok" and
       .check[0].rows == [5000, 5000, 5000]' "$APPSIM_TMP/check.json" >/dev/null \
  || fail "check after the kill: $(jq -c .check "$APPSIM_TMP/check.json")"

# The recovered tables run again, with commits grouped over the table files.
"$APPSIM" sysbench run --target "$T" "${SHAPE[@]}" --threads 8 --time 2 --buffer 2M --quiet \
  --json "$APPSIM_TMP/again.json" >/dev/null || fail "the run after recovery"
jq -e '.summary.errors == 0 and .summary.count > 0 and
       .engine.instances[0].group_commit.on and .engine.instances[0].group_commit.wal_syncs > 0' \
  "$APPSIM_TMP/again.json" >/dev/null || fail "run after recovery: $(jq -c .summary "$APPSIM_TMP/again.json")"
echo "sysbench kill: ok"
