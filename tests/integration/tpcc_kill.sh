#!/usr/bin/env bash
# tests/integration/tpcc_kill.sh: SIGKILL in the middle of a TPC-C run, then `check`:
# the database opens (WAL recovery through the VFS), SQLite's integrity check passes,
# and consistency conditions 1-4 hold (so do the others: every transaction is atomic).
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
T="$APPSIM_TMP/target"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$APPSIM" tpcc prepare --target "$T" --quiet
# Two delivery workers (one per 8 connections) on a delivery-heavy mix, first to the end
# of a short run (the deliveries are done and counted), then killed mid-run: the checks
# below cover deliveries committed by concurrent workers.
DMIX=(--connections 10 --mix 5,43,4,44,4)
"$APPSIM" tpcc run --target "$T" --pacing off --duration 2 --warmup 0 --quiet "${DMIX[@]}" \
  --json "$APPSIM_TMP/short.json" >/dev/null
[ "$(jq .tpcc.setup.delivery_workers_per_instance "$APPSIM_TMP/short.json")" = 2 ] ||
  fail "10 connections should have 2 delivery workers"
[ "$(jq .tpcc.delivery_deferred.count "$APPSIM_TMP/short.json")" -gt 0 ] ||
  fail "no deferred delivery was done"
"$APPSIM" tpcc run --target "$T" --pacing off --duration 60 --warmup 0 --quiet "${DMIX[@]}" \
  > "$APPSIM_TMP/run.out" 2>&1 &
pid=$!
# Kill while transactions are committing: wait until the run has done some work.
sleep 4
kill -0 $pid 2>/dev/null || { cat "$APPSIM_TMP/run.out"; fail "the run ended early"; }
kill -KILL $pid
wait $pid 2>/dev/null || true

set +e
"$APPSIM" tpcc check --target "$T" --integrity full > "$APPSIM_TMP/check.txt" 2>&1
rc=$?
set -e
cat "$APPSIM_TMP/check.txt"
grep -q "integrity_check .* pass" "$APPSIM_TMP/check.txt" || fail "integrity check"
for k in 1 2 3 4; do
  grep -E "^ *$k\. " "$APPSIM_TMP/check.txt" | grep -q " pass " || fail "condition $k"
done
# The run had marked the database as used (condition 11 no longer applies).
grep -q "after transactions" "$APPSIM_TMP/check.txt" || fail "the run left no trace"
[ $rc -eq 0 ] || fail "check exit status $rc"

# A run killed after listing its WAL in the manifest but before creating it leaves a
# listed name with no file: the next run creates the file instead of failing to open it.
rm -f "$T/tpcc-1.db-wal"
grep -q "^tpcc-1.db-wal" "$T/.appsim-manifest" || printf 'tpcc-1.db-wal\n' >>"$T/.appsim-manifest"
"$APPSIM" tpcc run --target "$T" --pacing off --duration 1 --warmup 0 --quiet >/dev/null ||
  fail "a listed but absent WAL stopped the next run"
echo "tpcc kill: ok"
