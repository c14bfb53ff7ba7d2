#!/usr/bin/env bash
# SIGINT in the phases before a measurement still leaves a result that says so: while
# `replay` and `io` fill their data file (exit 130, "interrupted": true and where it
# stopped in "stopped_by"), during `sysbench prepare` (the prepare section and the top
# say interrupted), and a suite records the interrupted step with its real exit status.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"/t1 "$APPSIM_TMP"/t2 "$APPSIM_TMP"/t3 "$APPSIM_TMP"/t4
W=$APPSIM_TMP
BG=""
trap '[ -n "$BG" ] && kill -9 "$BG" 2>/dev/null; true' EXIT

# name, the stderr line to wait for ("": a second), command...: SIGINT once the line
# appears; exit 130.
interrupt_at() {
  local name=$1 line=$2; shift 2
  "$@" >"$W/$name.out" 2>"$W/$name.err" &
  BG=$!
  if [ -n "$line" ]; then
    for _ in $(seq 1 200); do grep -q "$line" "$W/$name.err" && break; sleep 0.05; done
    grep -q "$line" "$W/$name.err" || fail "$name: never got to '$line': $(cat "$W/$name.err")"
    sleep 0.3
  else
    sleep 1
  fi
  kill -INT "$BG"
  local rc=0; wait "$BG" || rc=$?; BG=""
  [ $rc = 130 ] || fail "$name: exit $rc, want 130: $(tail -3 "$W/$name.err")"
}

# replay and io: a data file of 4 GiB takes far longer to fill than the wait.
printf '%s\n' "128166372003061629,h,0,Write,0,4096,100" "128166372003061630,h,0,Read,$((4 << 30)),4096,100" >"$W/far.csv"
interrupt_at replay "filling" "$APPSIM" replay "$W/far.csv" --target "$W/t1" --timing afap --json "$W/replay.json"
jq -e '.interrupted == true and (.stopped_by | test("interrupted while filling .*replay.data"))' "$W/replay.json" >/dev/null ||
  fail "replay result: $(jq -c '{interrupted, stopped_by}' "$W/replay.json" 2>&1)"
interrupt_at io "filling" "$APPSIM" io --target "$W/t2" --file-size 4G --duration 2s --json "$W/io.json"
jq -e '.interrupted == true and (.stopped_by | test("interrupted while filling .*io.data"))' "$W/io.json" >/dev/null ||
  fail "io result: $(jq -c '{interrupted, stopped_by}' "$W/io.json" 2>&1)"

# sysbench prepare: its tables are incomplete, and the result says why. The load writes
# about 2 million rows a second: 16 tables of 400,000 rows take a few seconds, and the
# signal comes 0.3 s after the second table started.
interrupt_at sysbench "loading sbtest2 " "$APPSIM" sysbench prepare --target "$W/t3" --tables 16 \
  --table-size 400000 --json "$W/sb.json"
jq -e '.interrupted == true and .prepare.complete == false and .prepare.interrupted == true' "$W/sb.json" >/dev/null ||
  fail "sysbench prepare result: $(jq -c '{interrupted, prepare}' "$W/sb.json" 2>&1)"

# A suite whose step is interrupted records it with the step's exit status (130).
cat >"$W/one.ini" <<'INI'
[suite]
name = one
[fill]
command = io
args = --target {target} --json {result} --file-size 4G --duration 2s
INI
interrupt_at suite "filling" "$APPSIM" suite "$W/one.ini" --target "$W/t4" -o "$W/suite"
jq -e '.steps[0].status == "interrupted" and .steps[0].exit == 130' "$W/suite/suite.json" >/dev/null ||
  fail "suite state: $(jq -c .steps "$W/suite/suite.json" 2>&1)"
echo ok
