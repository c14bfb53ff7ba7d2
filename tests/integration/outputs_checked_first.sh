#!/usr/bin/env bash
# Output paths are checked before anything is created or run: a missing directory, a
# directory, /proc, a device, a read-only filesystem, an existing trace without --force,
# and the target's own files (its database, -wal, the manifest, replay.data) are refused
# with exit 2 at once, nothing written, as is an output that names the command's input;
# and a refusal leaves nothing behind (no --json
# file, no data file created or resized).
set -uo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/work" "$APPSIM_TMP/log"
W=$APPSIM_TMP/work
L=$APPSIM_TMP/log
T=$W/tpcc
state() { ls -A --full-time -I .appsim-lock "$1" 2>/dev/null | md5sum; }
# refused NAME MESSAGE-REGEXP DIR command...: exit 2 within 5 s, the message, DIR as it was.
refused() {
  local name=$1 msg=$2 dir=$3; shift 3
  local before rc=0 t0
  before=$(state "$dir")
  t0=$(date +%s)
  "$@" >"$L/$name.out" 2>"$L/$name.err" || rc=$?
  [ $rc = 2 ] || fail "$name: exit $rc, want 2: $(cat "$L/$name.err")"
  [ $(($(date +%s) - t0)) -lt 5 ] || fail "$name: the refusal came after a run"
  grep -Eq -- "$msg" "$L/$name.err" || fail "$name: message: $(cat "$L/$name.err")"
  [ "$(state "$dir")" = "$before" ] || fail "$name: $dir changed: $(ls -A "$dir")"
}

"$APPSIM" tpcc prepare --target "$T" --scale 1 --buffered --quiet >"$L/prep.out" 2>&1 ||
  fail "prepare: $(cat "$L/prep.out")"
RUN=("$APPSIM" tpcc run --target "$T" --buffered --duration 30 --warmup 0 --quiet)
refused missing-dir "directory $W/nope does not exist" "$T" "${RUN[@]}" --json "$W/nope/r.json"
refused a-directory "is a directory" "$T" "${RUN[@]}" --json "$W"
refused proc "on proc, a kernel filesystem" "$T" "${RUN[@]}" --json /proc/appsim-r.json
refused device "not a regular file" "$T" "${RUN[@]}" --json /dev/null
refused database "tpcc-1.db is a file appsim created there" "$T" "${RUN[@]}" --json "$T/tpcc-1.db"
refused wal "tpcc-1.db-wal is" "$T" "${RUN[@]}" --json "$T/./tpcc-1.db-wal"
refused manifest "appsim's bookkeeping" "$T" "${RUN[@]}" --json "$T/.appsim-manifest"
refused sysbench-name "sbtest-lmdb-i1.mdb is the name of a file appsim creates" "$T" \
  "$APPSIM" sysbench prepare --engine lmdb --target "$T" --json "$T/sbtest-lmdb-i1.mdb"
refused two-outputs "both name" "$W" "$APPSIM" export --csv "$W/x" --hlog "$W/../$(basename "$W")/x" "$W/none.json"
"${RUN[@]}" --duration 1 --json "$W/r.json" >"$L/run.out" 2>&1 || fail "run: $(cat "$L/run.out")"
refused export-csv "directory /nonexistent does not exist" "$W" "$APPSIM" export --csv /nonexistent/x.csv "$W/r.json"
refused report-proc "on proc" "$W" "$APPSIM" report -o /proc/appsim-report.html "$W/r.json"
refused compare-dir "is a directory" "$W" "$APPSIM" compare -o "$W" "$W/r.json"
refused compare-input "is also what the command reads" "$W" "$APPSIM" compare -o "$W/r.json" "$W/r.json"
refused export-input "is also what the command reads" "$W" "$APPSIM" export --csv "$W/./r.json" "$W/r.json"
touch "$W/old.trace"
refused capture-exists "exists; remove it, choose another name, or pass --force" "$W" \
  "$APPSIM" trace capture --device /dev/null -o "$W/old.trace" --duration 1
refused capture-missing "directory /nonexistent does not exist" "$W" \
  "$APPSIM" trace capture --device /dev/null -o /nonexistent/x.trace --duration 1
if [ "$(id -u)" = 0 ] && mkdir -p "$W/ro" && mount -t tmpfs -o ro,size=1m appsim-out-ro "$W/ro" 2>/dev/null; then
  refused read-only "read-only filesystem" "$T" "${RUN[@]}" --json "$W/ro/r.json"
  umount "$W/ro"
else
  echo "read-only filesystem case skipped (needs root to mount a tmpfs)"
fi

# Refusals write no result and create nothing.
refused tpcc-buffer "too small" "$W" "${RUN[@]}" --buffer 100K --json "$W/b.json"
refused tpcc-wal "WAL limit" "$W" "${RUN[@]}" --wal-limit 1K --json "$W/w.json"
refused tpcc-space "space|free" "$W" "$APPSIM" tpcc prepare --target "$W/fresh" --keep-free 100T \
  --buffered --quiet --json "$W/s.json"
[ ! -e "$W/fresh" ] || [ -z "$(ls -A "$W/fresh")" ] || fail "tpcc-space left $(ls -A "$W/fresh")"
R=$W/replay
mkdir -p "$R"
{ echo "fio version 3 iolog"; echo "0 f add"
  for i in $(seq 0 63); do echo "$((i * 100)) f write $((i * 131072)) 4096"; done; } >"$W/t.log"
refused replay-region "region|needs" "$R" "$APPSIM" replay "$W/t.log" --target "$R" --region 0:512K --json "$W/rr.json"
refused replay-size "region|needs|file-size" "$R" "$APPSIM" replay "$W/t.log" --target "$R" --file-size 1.5 --json "$W/rs.json"
[ -z "$(ls -A "$R")" ] || fail "replay refusals left $(ls -A "$R")"
"$APPSIM" replay "$W/t.log" --target "$R" --timing afap --quiet --json "$W/ok.json" >/dev/null 2>"$L/ok.err" ||
  fail "replay: $(cat "$L/ok.err")"
size=$(stat -c %s "$R/replay.data")
refused replay-shrink "region|needs|file-size" "$R" "$APPSIM" replay "$W/t.log" --target "$R" --file-size 64K
[ "$(stat -c %s "$R/replay.data")" = "$size" ] || fail "a refused replay resized replay.data"
refused replay-data "replay.data is a file appsim created there" "$R" "$APPSIM" replay "$W/t.log" \
  --target "$R" --json "$R/replay.data"
for f in b w s rr rs; do [ ! -e "$W/$f.json" ] || fail "a refusal wrote $f.json"; done

# vdi on a device too small for the layout: exit 2, no result, the device not written.
if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null; then
  truncate -s 4M "$W/small.img"
  if LOOP=$(losetup --find --show "$W/small.img" 2>/dev/null); then
    trap 'losetup -d "$LOOP" 2>/dev/null' EXIT
    sum=$(md5sum <"$W/small.img")
    refused vdi-small "layout needs" "$W" "$APPSIM" vdi --target "$LOOP" --allow-destroy --clones full \
      --phase boot --desktops 8 --json "$W/v.json"
    [ ! -e "$W/v.json" ] || fail "vdi refusal wrote a result"
    [ "$(md5sum <"$W/small.img")" = "$sum" ] || fail "vdi refusal wrote on the device"
    losetup -d "$LOOP"; trap - EXIT
  fi
fi
echo "outputs checked first: ok"
