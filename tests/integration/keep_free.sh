#!/usr/bin/env bash
# --keep-free on the workloads whose files grow while they run (tpcc, sysbench): a run
# that starts with less free space than --keep-free is refused (exit 2), and one whose
# filesystem fills while it runs stops within seconds with a valid result that says why
# ("stopped_by") and exit status 1. The filling is a ballast file the test allocates
# beside the target and removes again. Prepare/load needs its estimate plus --keep-free.
# APPSIM_TEST_RUN_SERIAL: it reads the filesystem's free space, which other tests change.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
BALLAST="$APPSIM_TMP/ballast"
trap 'rm -f "$BALLAST"' EXIT
free_bytes() { df --output=avail -B1 "$APPSIM_TMP" | tail -1 | tr -d ' '; }
[ "$(free_bytes)" -gt $((2 << 30)) ] || { echo "skipped: less than 2 GiB free under $APPSIM_TMP"; exit 77; }

S="$APPSIM_TMP/sb"
"$APPSIM" sysbench prepare --target "$S" --tables 1 --table-size 20000 --quiet >/dev/null
T="$APPSIM_TMP/tpcc"
"$APPSIM" tpcc prepare --target "$T" --scale 1 --quiet >/dev/null

# refused before it starts
huge=$(( $(free_bytes) + (10 << 30) ))
set +e
"$APPSIM" sysbench run --target "$S" --tables 1 --table-size 20000 --time 2 --keep-free "$huge" --quiet >/dev/null 2>"$APPSIM_TMP/err1"; rc1=$?
"$APPSIM" tpcc run --target "$T" --scale 1 --duration 2 --warmup 0 --keep-free "$huge" --quiet >/dev/null 2>"$APPSIM_TMP/err2"; rc2=$?
"$APPSIM" sysbench prepare --target "$APPSIM_TMP/sb2" --tables 1 --table-size 1000 --keep-free "$huge" --quiet >/dev/null 2>"$APPSIM_TMP/err3"; rc3=$?
set -e
[ $rc1 = 2 ] && grep -q "keep-free" "$APPSIM_TMP/err1" || fail "sysbench run below --keep-free: exit $rc1, $(cat "$APPSIM_TMP/err1")"
[ $rc2 = 2 ] && grep -q "keep-free" "$APPSIM_TMP/err2" || fail "tpcc run below --keep-free: exit $rc2, $(cat "$APPSIM_TMP/err2")"
[ $rc3 = 2 ] && grep -q "keep-free" "$APPSIM_TMP/err3" || fail "sysbench prepare below --keep-free: exit $rc3, $(cat "$APPSIM_TMP/err3")"

# stopped while it runs: keep-free sits 64 MiB under the free space, then 512 MiB of
# ballast takes the filesystem below it
stop_case() { # name, json, command...
  local name=$1 json=$2; shift 2
  local keep=$(( $(free_bytes) - (64 << 20) ))
  "$@" --keep-free "$keep" --quiet --json "$json" >/dev/null 2>"$APPSIM_TMP/$name.err" &
  local pid=$!
  sleep 2
  fallocate -l 512M "$BALLAST" 2>/dev/null || dd if=/dev/zero of="$BALLAST" bs=1M count=512 status=none
  local t0=$SECONDS rc=0
  wait $pid || rc=$?
  rm -f "$BALLAST"
  [ $rc = 1 ] || fail "$name: exit $rc after the filesystem filled, want 1 ($(cat "$APPSIM_TMP/$name.err"))"
  [ $((SECONDS - t0)) -le 10 ] || fail "$name: took $((SECONDS - t0)) s to stop"
  jq -e '(.stopped_by | test("keep-free")) and .interrupted == false and .summary.count > 0
         and .summary.seconds < 25' "$json" >/dev/null || fail "$name: result $(jq -c '{stopped_by, interrupted, s: .summary.seconds}' "$json")"
  grep -q "stopping the run" "$APPSIM_TMP/$name.err" || fail "$name: no message on stderr"
}
stop_case sysbench "$APPSIM_TMP/sb.json" \
  "$APPSIM" sysbench run --target "$S" --tables 1 --table-size 20000 --threads 2 --time 30 --sync off
stop_case tpcc "$APPSIM_TMP/tpcc.json" \
  "$APPSIM" tpcc run --target "$T" --scale 1 --duration 30 --warmup 0 --pacing off --sync off
echo ok
