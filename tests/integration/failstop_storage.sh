#!/usr/bin/env bash
# Fail-stop on storage errors, by fault injection:
#   - out of space: an ext4 on a loop device is filled (a fallocated ballast) to a
#     couple of MiB; tpcc, sysbench on SQLite and on LMDB run into ENOSPC;
#   - a failing drive: the loop device's backing file is sparse and lives on a small
#     tmpfs; once a ballast fills the tmpfs, every write to a block the backing file
#     does not hold yet fails, and the loop device answers EIO (ext4 then aborts its
#     journal). The raw loop device case (replay, vdi) punches the backing file's
#     blocks first, so that every write of the run needs a new one.
# A sysbench curve meets ENOSPC in its first point and stops there.
# Each run must stop at the first error: exit status 1, the cause on stderr ("no space
# left on device" / "I/O error"), a result marked failed with the cause; and once the
# space is back (ballast removed; after an EIO, e2fsck and a fresh mount) the database
# passes `check`. Needs root (loop devices, mounts): skipped (77) otherwise.
# APPSIM_TEST_RUN_SERIAL: loop devices and mounts.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
skip() { echo "skipped: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (loop devices and mounts)"
for c in losetup mkfs.ext4 e2fsck jq fallocate; do command -v $c >/dev/null || skip "$c missing"; done
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/tmpfs" "$APPSIM_TMP/mnt"
W=$APPSIM_TMP
LOOP="" LOOP2="" BG=""
cleanup() {
  [ -n "$BG" ] && kill "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
  mountpoint -q "$W/mnt" && umount "$W/mnt"
  [ -n "$LOOP" ] && losetup -d "$LOOP"
  [ -n "$LOOP2" ] && losetup -d "$LOOP2"
  mountpoint -q "$W/tmpfs" && umount "$W/tmpfs"
  true
}
trap cleanup EXIT
mount -t tmpfs -o size=256m tmpfs "$W/tmpfs" || skip "cannot mount a tmpfs"
truncate -s 400M "$W/tmpfs/fs.img"
LOOP=$(losetup -f --show "$W/tmpfs/fs.img") || skip "no loop device"
mkfs.ext4 -q -F -m 0 -E lazy_itable_init=1,lazy_journal_init=1 "$LOOP"
mount -o discard "$LOOP" "$W/mnt"

T=$W/mnt/t
SB=(--tables 1 --table-size 20000)
"$APPSIM" tpcc prepare --target "$T" --scale 1 --keep-free 0 --quiet >/dev/null
"$APPSIM" sysbench prepare --target "$T" "${SB[@]}" --keep-free 0 --quiet >/dev/null
"$APPSIM" sysbench prepare --target "$T" --engine lmdb "${SB[@]}" --keep-free 0 --quiet >/dev/null

avail() { df --output=avail -B1 "$1" | tail -1 | tr -d ' '; }
fill() { # dir, bytes to leave free (0: write until the filesystem is full)
  if [ "$2" = 0 ]; then
    dd if=/dev/zero of="$1/ballast" bs=1M status=none 2>/dev/null || true
  else
    local n=$(( $(avail "$1") - $2 ))
    [ $n -gt 0 ] && fallocate -l $n "$1/ballast"
  fi
  true
}
remount() { # after an EIO: ext4 aborted its journal; repair and mount again
  umount "$W/mnt"
  e2fsck -fy "$LOOP" >/dev/null 2>&1 || [ $? -le 2 ] || fail "e2fsck could not repair the filesystem"
  mount -o discard "$LOOP" "$W/mnt"
}
# name, cause regexp, command... : exit 1 within the run, stderr and result name the cause.
# With DURING set, the command runs in the background and DURING is run 2 s later (the
# drive starts failing mid-run); then the run itself must say it stopped (stopped_by).
# The runs are asked for RUN_S seconds: one that stopped at the error ends long before
# (its result's measured phase is shorter, and a generous deadline holds on a crowded
# core), one that kept going would run them all.
RUN_S=300
expect_stop() {
  local name=$1 cause=$2; shift 2
  local t0=$SECONDS rc=0 stopped=true
  if [ -n "${DURING:-}" ]; then
    "$@" --json "$W/$name.json" >"$W/$name.out" 2>"$W/$name.err" &
    BG=$!
    sleep 2; $DURING
    wait $BG || rc=$?
    BG=""
    stopped='(.stopped_by | test($c))'
  else
    "$@" --json "$W/$name.json" >"$W/$name.out" 2>"$W/$name.err" || rc=$?
  fi
  [ $rc = 1 ] || fail "$name: exit $rc, want 1: $(tail -3 "$W/$name.err")"
  [ $((SECONDS - t0)) -lt $((RUN_S / 3)) ] || fail "$name: took $((SECONDS - t0)) s to stop"
  jq -e --argjson d $RUN_S '(.summary.seconds // 0) < $d / 3' "$W/$name.json" >/dev/null ||
    fail "$name: measured $(jq .summary.seconds "$W/$name.json") s of $RUN_S: did not stop at the error"
  grep -Eq "failed: ($cause)" "$W/$name.err" || fail "$name: stderr does not name the cause: $(cat "$W/$name.err")"
  jq -e --arg c "$cause" ".failed == true and (.failure.cause | test(\$c)) and $stopped" \
    "$W/$name.json" >/dev/null || fail "$name: result not marked failed: $(jq -c '{failed, failure, stopped_by}' "$W/$name.json")"
}
check_tpcc() { "$APPSIM" tpcc check --target "$T" --scale 1 >"$W/check.out" 2>&1 || fail "tpcc check after $1: $(tail -5 "$W/check.out")"; }
check_sb() { "$APPSIM" sysbench check --target "$T" --engine "$1" "${SB[@]}" >"$W/check.out" 2>&1 || fail "sysbench $1 check after $2: $(tail -5 "$W/check.out")"; }

TPCC=("$APPSIM" tpcc run --target "$T" --scale 1 --pacing off --duration $RUN_S --warmup 0 --keep-free 0 --quiet)
SBR=("$APPSIM" sysbench run --target "$T" "${SB[@]}" --workload oltp_insert --threads 2 --time $RUN_S --keep-free 0 --quiet)

# 1. Out of space (case 3).
NOSPC="no space left on device"
fill "$W/mnt" $((2 << 20)); expect_stop tpcc-nospc "$NOSPC" "${TPCC[@]}"
rm "$W/mnt/ballast"; check_tpcc "ENOSPC"
fill "$W/mnt" $((2 << 20)); expect_stop sqlite-nospc "$NOSPC" "${SBR[@]}"
rm "$W/mnt/ballast"; check_sb sqlite "ENOSPC"
# A curve stops at the error as a run does: the point that met it is the last, failed.
SBC=("$APPSIM" sysbench run --target "$T" "${SB[@]}" --workload oltp_insert --threads 2 --curve
  --curve-points 50 --point-warmup 0 --point-duration $RUN_S --keep-free 0 --quiet)
fill "$W/mnt" $((2 << 20)); expect_stop sqlite-curve-nospc "$NOSPC" "${SBC[@]}"
jq -e '(.curve.points | length) == 1 and .curve.points[0].failed == true' "$W/sqlite-curve-nospc.json" \
  >/dev/null || fail "curve after ENOSPC: $(jq -c '[.curve.points[] | {index, failed}]' "$W/sqlite-curve-nospc.json")"
rm "$W/mnt/ballast"; check_sb sqlite "ENOSPC during a curve"
fill "$W/mnt" $((1 << 20)); expect_stop lmdb-nospc "$NOSPC" "${SBR[@]}" --engine lmdb
rm "$W/mnt/ballast"; check_sb lmdb "ENOSPC"
# replay (and vdi) size their data file before writing it: refused (exit 2), nothing written.
printf '%s\n' "128166372003061629,h,0,Write,0,4096,100" "128166372003061630,h,0,Read,$((64 << 20)),4096,100" >"$W/tiny.csv"
fill "$W/mnt" $((1 << 20))
rc=0; "$APPSIM" replay "$W/tiny.csv" --target "$T" --timing afap --quiet >/dev/null 2>"$W/replay-nospc.err" || rc=$?
[ $rc = 2 ] && grep -q "not enough space" "$W/replay-nospc.err" || fail "replay out of space: exit $rc: $(cat "$W/replay-nospc.err")"
[ ! -e "$T/replay.data" ] || fail "replay refused for space left a data file"
rm "$W/mnt/ballast"

# 2. The drive fails writes (case 7): EIO from the loop device.
# The loop driver reports a backing file that cannot grow as "critical space allocation"
# (ENOSPC to the writer, like a thin-provisioned volume that ran out), then ext4 aborts
# its journal (EIO, then EROFS): any of these is the drive failing.
EIO="I/O error|read-only file system|no space left on device"
DURING="fill $W/tmpfs 0"
expect_stop tpcc-eio "$EIO" "${TPCC[@]}"
rm "$W/tmpfs/ballast"; remount; check_tpcc "EIO"
expect_stop sqlite-eio "$EIO" "${SBR[@]}"
rm "$W/tmpfs/ballast"; remount; check_sb sqlite "EIO"
expect_stop lmdb-eio "$EIO" "${SBR[@]}" --engine lmdb
rm "$W/tmpfs/ballast"; remount; check_sb lmdb "EIO"
DURING=""

# replay and vdi on the raw loop device: laid out while there is room, then the backing
# file's blocks are punched (the last MiB keeps appsim's mark) and the tmpfs filled.
umount "$W/mnt"; losetup -d "$LOOP"; LOOP=""; rm "$W/tmpfs/fs.img"
truncate -s 48M "$W/tmpfs/dev.img"
LOOP2=$(losetup -f --show "$W/tmpfs/dev.img") || skip "no second loop device"
for i in $(seq 0 4095); do echo "$((128166372003061629 + i * 100)),h,0,Write,$((i * 8192)),4096,100"; done >"$W/seq.csv"
"$APPSIM" replay "$W/seq.csv" --target "$LOOP2" --allow-destroy --timing afap --quiet >/dev/null 2>&1 || fail "replay on the device"
punch() { fallocate --punch-hole --offset 0 --length $(( (47 << 20) )) "$W/tmpfs/dev.img"; fill "$W/tmpfs" 0; }
punch; expect_stop replay-eio "$EIO" "$APPSIM" replay "$W/seq.csv" --target "$LOOP2" --timing afap --quiet
jq -e '.replay.errors >= 1 and .replay.first_error != null' "$W/replay-eio.json" >/dev/null || fail "replay result: $(jq -c .replay "$W/replay-eio.json")"
rm "$W/tmpfs/ballast"
printf '%s\n' "fio version 3 iolog" "0 disk add" "0 disk open" >"$W/boot.log"
for i in $(seq 0 299); do echo "$((i * 1000)) disk write $((i * 16384)) 4096"; done >>"$W/boot.log"
VDI=("$APPSIM" vdi --target "$LOOP2" --clones full --phase boot --boot-trace "$W/boot.log" --desktops 1
     --curve-points 1.0 --point-warmup 0 --point-duration 2 --quiet)
"${VDI[@]}" >/dev/null 2>"$W/vdi.err" || fail "vdi on the device: $(cat "$W/vdi.err")"
punch; rc=0; "${VDI[@]}" -o "$W/vdi-eio.json" >/dev/null 2>"$W/vdi-eio.err" || rc=$?
[ $rc = 1 ] && grep -Eq "failed: ($EIO)" "$W/vdi-eio.err" || fail "vdi on a failing device: exit $rc: $(cat "$W/vdi-eio.err")"
jq -e --arg c "$EIO" '.failed == true and (.failure.cause | test($c))' "$W/vdi-eio.json" >/dev/null || fail "vdi result not marked failed"
echo ok
