#!/usr/bin/env bash
# tests/integration/storage_target_lock.sh: one appsim per target.
# While a run holds a target, a second run, a check and a tpcc on the same directory are
# refused at once (exit 2) with the holder's pid and command line, and the database
# still passes check afterwards; `appsim info` (read-only) still works. A run killed
# with SIGKILL leaves no lock that blocks the next one; cleanup leaves nothing behind.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
W="$APPSIM_TMP"
T="$W/target"
fail() { echo "FAIL: $*" >&2; exit 1; }
sb=(--engine sqlite --target "$T" --table-size 2000)

"$APPSIM" sysbench prepare "${sb[@]}" --quiet
"$APPSIM" sysbench run "${sb[@]}" --time 30 --quiet >"$W/first.txt" 2>&1 &
first=$!
trap 'kill $first 2>/dev/null || true' EXIT
# The holder writes its pid into the lock file once it holds the lock.
for _ in $(seq 100); do
  grep -q "^pid $first\$" "$T/.appsim-lock" 2>/dev/null && break
  sleep 0.1
done
grep -q "^pid $first\$" "$T/.appsim-lock" || { cat "$W/first.txt"; fail "the first run never took the lock"; }

# second ARGS...: refused at once, naming the holder.
second() {
  local rc=0 t0 t1
  t0=$(date +%s%N)
  "$APPSIM" "$@" >"$W/second.txt" 2>&1 || rc=$?
  t1=$(date +%s%N)
  [ $rc -eq 2 ] || { cat "$W/second.txt"; fail "$*: exit $rc while the target is in use"; }
  grep -q "in use by appsim pid $first (.*sysbench run" "$W/second.txt" ||
    { cat "$W/second.txt"; fail "$*: the message does not name the holder"; }
  [ $(((t1 - t0) / 1000000)) -lt 5000 ] || fail "$*: took $(((t1 - t0) / 1000000)) ms to refuse"
  echo "ok: refused: $*"
}
second sysbench run "${sb[@]}" --time 2 --quiet
second sysbench check "${sb[@]}" --quiet
second tpcc run --target "$T" --duration 2 --quiet
second cleanup --target "$T"
"$APPSIM" info --target "$T" >/dev/null || fail "info (read-only) refused during a run"
kill -0 $first 2>/dev/null || { cat "$W/first.txt"; fail "the first run ended early"; }

# A holder killed outright leaves a lock file behind, but no lock.
kill -KILL $first
wait $first 2>/dev/null || true
[ -e "$T/.appsim-lock" ] || fail "expected the dead run's lock file to stay"
"$APPSIM" sysbench check "${sb[@]}" --quiet >/dev/null || fail "a dead run's lock blocked check"
"$APPSIM" sysbench run "${sb[@]}" --time 1 --quiet >/dev/null || fail "a dead run's lock blocked run"
"$APPSIM" cleanup --target "$T" >/dev/null
[ -z "$(ls -A "$T")" ] || fail "cleanup left $(ls -A "$T")"
echo "storage target lock: ok"
