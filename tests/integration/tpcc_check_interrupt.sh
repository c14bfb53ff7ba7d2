#!/usr/bin/env bash
# tests/integration/tpcc_check_interrupt.sh: without an action, tpcc writes the run's
# result before the consistency check starts, and a SIGINT during the check stops it
# promptly without costing that result; the result then says it was interrupted.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
T="$APPSIM_TMP/target"
J="$APPSIM_TMP/result.json"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$APPSIM" tpcc prepare --target "$T" --quiet
# --integrity full makes the check long enough (seconds at scale 1) to interrupt.
"$APPSIM" tpcc --target "$T" --pacing off --duration 2s --warmup 0 --integrity full \
  --json "$J" > "$APPSIM_TMP/out.txt" 2>&1 &
pid=$!
for _ in $(seq 1 300); do [ -s "$J" ] && break; sleep 0.1; done
[ -s "$J" ] || { kill $pid; cat "$APPSIM_TMP/out.txt"; fail "no result file during the run"; }
# The file appeared when the measured phase ended: it holds the run's figures.
jq -e '.summary.tps > 0' "$J" > /dev/null || fail "the early result has no TPS"
still_checking=0
if kill -0 $pid 2>/dev/null; then
  still_checking=1
  kill -INT $pid
fi
start=$(date +%s)
set +e
wait $pid
rc=$?
set -e
took=$(( $(date +%s) - start ))
cat "$APPSIM_TMP/out.txt"
[ "$took" -le 5 ] || fail "the check took $took s to stop after SIGINT"
jq -e '.summary.tps > 0' "$J" > /dev/null || fail "the final result lost the run's figures"
if [ $still_checking = 1 ] && jq -e '.check.interrupted == true' "$J" > /dev/null; then
  [ $rc -ne 0 ] || fail "an interrupted check exited 0"
  grep -q "check interrupted" "$APPSIM_TMP/out.txt" || fail "no message for the interruption"
  # the run's figures are whole, but the command was interrupted: exit 130, and the
  # result says so at its top
  [ $rc = 130 ] || fail "an interrupted check exited $rc, want 130"
  jq -e '.interrupted == true' "$J" >/dev/null || fail "top-level interrupted: $(jq .interrupted "$J")"
fi
echo "ok: result written before the check; SIGINT stopped the check in $took s (rc $rc)"
