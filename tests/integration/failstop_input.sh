#!/usr/bin/env bash
# Hostile input and bad options: every offset and size from
# a trace is checked (an input error naming file:line, exit 2, nothing written), and
# every option is checked before anything is created or written.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/t"
W=$APPSIM_TMP
T=$W/t
# refused name exit-status message-regexp command...: the status, the message, and the
# target directory left exactly as it was (no data file, no database).
refused() {
  local name=$1 want=$2 msg=$3; shift 3
  local before rc=0
  before=$(ls -A "$T" | sort | tr '\n' ' ')
  "$@" >"$W/$name.out" 2>"$W/$name.err" || rc=$?
  [ $rc = "$want" ] || fail "$name: exit $rc, want $want: $(cat "$W/$name.err")"
  grep -Eq -- "$msg" "$W/$name.err" || fail "$name: message: $(cat "$W/$name.err")"
  [ "$(ls -A "$T" | sort | tr '\n' ' ')" = "$before" ] || fail "$name: the target changed: $(ls -A "$T")"
}
msr() { local t=128166372003061629; while [ $# -gt 0 ]; do echo "$t,h,$1,$2,$3,$4,100"; t=$((t + 1)); shift 4; done; }

# Case 5: an offset whose end wraps past 2^64 once rounded up (was a division by zero).
msr 0 Write 18446744073709547519 4096 >"$W/c5.csv"
refused case5 2 "c5.csv:1: .*reaches past" "$APPSIM" replay "$W/c5.csv" --target "$T" --timing afap --quiet
# Case 4: volume extents that sum past 2^64 (the placement wrapped and wrote outside --region).
msr 0 Write $((253 << 20)) 4096  0 Read 18446744073708498944 4096  1 Write 0 4096  1 Write $((1 << 20)) 4096 >"$W/c4.csv"
refused case4 2 "c4.csv:2: " "$APPSIM" replay "$W/c4.csv" --target "$T" --region 2M:1M --map wrap --timing afap --quiet
msr 0 Write $((1 << 62)) 4096  1 Write $((1 << 62)) 4096  2 Write $((1 << 62)) 4096 >"$W/c4b.csv"
refused case4-sum 2 "c4b.csv:2: volume 1 reaches .* side by side" "$APPSIM" replay "$W/c4b.csv" --target "$T" --map wrap --timing afap --quiet
# A 4 GiB - 1 request: refused (it was issued as 512 B, a uint32 wrapped).
msr 0 Write 0 4294967295 >"$W/big.csv"
refused big-io 2 "big.csv:1: an I/O of 4294967295 bytes" "$APPSIM" replay "$W/big.csv" --target "$T" --map wrap --timing afap --quiet
# Well-formed volumes in a small --region: every volume's slice lies inside the region.
msr 0 Write $((253 << 20)) 4096  0 Read $((512 << 20)) 4096  1 Write 0 4096  1 Write $((1 << 20)) 4096 >"$W/ok.csv"
"$APPSIM" replay "$W/ok.csv" --target "$T" --file-size 8M --region 2M:1M --map wrap --timing afap \
  --quiet --json "$W/ok.json" >/dev/null 2>"$W/ok.err" || fail "replay in a region: $(cat "$W/ok.err")"
jq -e '[.replay.placement.layout[] | .base >= 2097152 and .base + .size <= 3145728 and .size > 0]
       | length == 2 and all' "$W/ok.json" >/dev/null || fail "placement outside the region: $(jq -c .replay.placement "$W/ok.json")"
rm -f "$T/replay.data" "$T/.appsim-manifest"

# Case 8: options checked before anything is created.
refused sb-io-engine 2 "invalid value 'bogus' for --ioengine" "$APPSIM" sysbench prepare --target "$T/sb" --ioengine bogus --table-size 100 --quiet
[ ! -e "$T/sb" ] || fail "sysbench --ioengine bogus created the target"
t0=$SECONDS
# (vdi's old spelling --engine still reaches --ioengine)
refused vdi-engine 2 "invalid value 'bogus' for --ioengine" "$APPSIM" vdi --target "$T/vdi" --engine bogus --clones full --phase boot --quiet
[ $((SECONDS - t0)) -lt 5 ] && [ ! -e "$T/vdi" ] || fail "vdi --engine bogus was checked late"
refused vdi-point 2 "point-duration" "$APPSIM" vdi --target "$T/vdi" --point-warmup 0 --point-duration 0 --clones full --phase boot --quiet
refused replay-point 2 "point-duration" "$APPSIM" replay "$W/ok.csv" --target "$T" --curve --point-duration 0 --quiet
refused replay-loop 2 "--loop and --duration" "$APPSIM" replay "$W/ok.csv" --target "$T" --loop 2 --duration 3 --quiet
refused tpcc-buffer 2 "more than this machine's .* of memory: give at most" "$APPSIM" tpcc run --target "$T" --buffer 1T --quiet
# A sysbench run refused for lack of space writes no result file.
"$APPSIM" sysbench prepare --target "$T/sb" --tables 1 --table-size 200 --quiet >/dev/null
rc=0; "$APPSIM" sysbench run --target "$T/sb" --tables 1 --table-size 200 --time 1 --keep-free 1000T \
  --json "$W/refused.json" --quiet >/dev/null 2>"$W/refused.err" || rc=$?
[ $rc = 2 ] && grep -q "keep-free" "$W/refused.err" && [ ! -e "$W/refused.json" ] ||
  fail "refused sysbench run: exit $rc, $(cat "$W/refused.err"), result file $(ls "$W"/refused.json 2>&1)"
# A refusal leaves no empty target directory behind.
refused tpcc-no-db 2 "no database" "$APPSIM" tpcc run --target "$T/new" --duration 1 --quiet
[ ! -e "$T/new" ] || fail "a refused tpcc run left the directory it created"
# In a log, each interval line ends with what is left.
"$APPSIM" sysbench run --target "$T/sb" --tables 1 --table-size 200 --time 2 --warmup 0 \
  --report-interval 1 >/dev/null 2>"$W/log.err" || fail "sysbench run for the log: $(cat "$W/log.err")"
grep -Eq '^\[ +1s \] tps: .*, ETA 1 s$' "$W/log.err" || fail "no ETA on the interval lines: $(cat "$W/log.err")"
# The countdown on a terminal never goes below zero.
if command -v script >/dev/null; then
  script -qec "\"$APPSIM\" sysbench run --target \"$T/sb\" --tables 1 --table-size 200 --time 2" /dev/null \
    >"$W/tty.out" 2>&1 || fail "sysbench run on a terminal: $(tail -3 "$W/tty.out")"
  grep -aEq "run: measuring, [0-9]+ s of 2 s, .*ETA [0-9]+ s" "$W/tty.out" || fail "no countdown on a terminal"
  ! grep -aEq "ETA ([0-9]{4,}|[0-9]+ (min|h))" "$W/tty.out" || fail "countdown: $(grep -ao 'ETA [^\r]*' "$W/tty.out" | tail -2)"
fi
echo ok
