#!/usr/bin/env bash
# Interrupted runs: SIGINT makes appsim exit 130 and SIGTERM 143,
# after the run has written its result, marked "interrupted", for every command that
# runs a workload: tpcc, sysbench on SQLite and LMDB, replay, vdi.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/t"
W=$APPSIM_TMP
T=$W/t
SB=(--tables 1 --table-size 2000)
"$APPSIM" sysbench prepare --target "$T" "${SB[@]}" --quiet >/dev/null
"$APPSIM" sysbench prepare --target "$T" --engine lmdb "${SB[@]}" --quiet >/dev/null
"$APPSIM" tpcc prepare --target "$T" --scale 1 --quiet >/dev/null
for i in $(seq 0 999); do echo "$((i * 1000)) f write $((i % 256 * 4096)) 4096"; done |
  sed '1i fio version 3 iolog\n0 f add' >"$W/t.log"

# name, signal, want status, result path, command...: the signal 2 s into the run. A
# command whose interval lines go to stderr (--report-interval) gets it 2 s after its
# first one, so that on a crowded core the run is measuring by then, not still loading
# or filling its data file (at most 120 s).
interrupt() {
  local name=$1 sig=$2 want=$3 json=$4; shift 4
  "$@" >"$W/$name.out" 2>"$W/$name.err" &
  local pid=$! rc=0 i
  if [[ " $* " == *" --report-interval "* ]]; then
    for i in $(seq 1 1200); do
      grep -q '^\[ *[0-9]*s \]' "$W/$name.err" && break
      kill -0 $pid 2>/dev/null || break
      sleep 0.1
    done
  fi
  sleep 2
  kill -s "$sig" $pid
  wait $pid || rc=$?
  [ $rc = "$want" ] || fail "$name: exit $rc after SIG$sig, want $want: $(tail -3 "$W/$name.err")"
  jq -e '.interrupted == true' "$json" >/dev/null || fail "$name: no result marked interrupted"
}
RI=(--report-interval 0.5)
interrupt tpcc INT 130 "$W/tpcc.json" "$APPSIM" tpcc run --target "$T" --scale 1 --duration 30 --warmup 0 "${RI[@]}" --json "$W/tpcc.json"
interrupt sqlite TERM 143 "$W/sqlite.json" "$APPSIM" sysbench run --target "$T" "${SB[@]}" --time 30 "${RI[@]}" --json "$W/sqlite.json"
interrupt lmdb INT 130 "$W/lmdb.json" "$APPSIM" sysbench run --target "$T" --engine lmdb "${SB[@]}" --time 30 "${RI[@]}" --json "$W/lmdb.json"
interrupt replay TERM 143 "$W/replay.json" "$APPSIM" replay "$W/t.log" --target "$T" --duration 30 "${RI[@]}" --json "$W/replay.json"
interrupt vdi INT 130 "$W/vdi.json" "$APPSIM" vdi --target "$T" --clones full --phase boot --boot-trace "$W/t.log" \
  --desktops 1 --curve-points 1.0 --point-warmup 0 --point-duration 30 --quiet -o "$W/vdi.json"
echo ok
