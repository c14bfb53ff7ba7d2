#!/usr/bin/env bash
# Fail-stop on storage errors through the page cache (--buffered: SQLite's own VFS),
# and the first error ending an LMDB run at once. The same faults as
# failstop_storage.sh: an ext4 on a loop device filled to a couple of MiB (ENOSPC), and
# a loop device whose backing file on a small tmpfs cannot grow (EIO mid-run). Each run
# must stop at the first error: exit status 1, the cause on stderr, the result marked
# failed with it, only the few transactions under way when it happened counted as
# errors; and once the space is back the database passes `check`. A precondition
# whose record does not fit stops the same way.
# Needs root (loop devices, mounts): skipped (77) otherwise.
# APPSIM_TEST_RUN_SERIAL: loop devices and mounts.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
skip() { echo "skipped: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (loop devices and mounts)"
for c in losetup mkfs.ext4 e2fsck jq fallocate; do command -v $c >/dev/null || skip "$c missing"; done
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/tmpfs" "$APPSIM_TMP/mnt"
W=$APPSIM_TMP
LOOP="" BG=""
cleanup() {
  [ -n "$BG" ] && kill "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
  mountpoint -q "$W/mnt" && umount "$W/mnt"
  [ -n "$LOOP" ] && losetup -d "$LOOP"
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
# name, cause regexp, most errors, command... : exit 1 long before the RUN_S asked for
# (a run that kept going fails the test when RUN_S ends),
# stderr and result name the cause, at most that many errors counted. With DURING set,
# the command runs in the background and DURING runs 2 s later (the drive fails mid-run).
RUN_S=30
expect_stop() {
  local name=$1 cause=$2 max_errors=$3; shift 3
  local t0=$SECONDS rc=0
  if [ -n "${DURING:-}" ]; then
    "$@" --json "$W/$name.json" >"$W/$name.out" 2>"$W/$name.err" &
    BG=$!
    sleep 2; $DURING
    wait $BG || rc=$?
    BG=""
  else
    "$@" --json "$W/$name.json" >"$W/$name.out" 2>"$W/$name.err" || rc=$?
  fi
  [ $rc = 1 ] || fail "$name: exit $rc, want 1: $(tail -3 "$W/$name.err")"
  [ $((SECONDS - t0)) -lt $((RUN_S / 3)) ] || fail "$name: took $((SECONDS - t0)) s to stop"
  grep -Eq "failed: ($cause)" "$W/$name.err" || fail "$name: stderr does not name the cause: $(cat "$W/$name.err")"
  jq -e --arg c "$cause" '.failed == true and (.failure.cause | test($c)) and (.stopped_by | test($c))' \
    "$W/$name.json" >/dev/null || fail "$name: result not marked failed: $(jq -c '{failed, failure, stopped_by}' "$W/$name.json")"
  local errors
  errors=$(jq '[.summary.errors // 0, .warmup.errors // 0] | add' "$W/$name.json")
  [ "$errors" -le "$max_errors" ] || fail "$name: $errors errors counted after the first stopped the run"
}
check_tpcc() { "$APPSIM" tpcc check --target "$T" --scale 1 >"$W/check.out" 2>&1 || fail "tpcc check after $1: $(tail -5 "$W/check.out")"; }
check_sb() { "$APPSIM" sysbench check --target "$T" --engine "$1" "${SB[@]}" >"$W/check.out" 2>&1 || fail "sysbench $1 check after $2: $(tail -5 "$W/check.out")"; }

TPCC=("$APPSIM" tpcc run --target "$T" --scale 1 --pacing off --duration $RUN_S --warmup 0 --keep-free 0 --quiet --buffered)
SBR=("$APPSIM" sysbench run --target "$T" "${SB[@]}" --workload oltp_insert --threads 2 --time $RUN_S --keep-free 0 --quiet)

# Out of space: SQLite through the page cache, and LMDB (which counted every refused
# transaction as an error until the scheduler's next look).
NOSPC="no space left on device"
fill "$W/mnt" $((2 << 20)); expect_stop tpcc-nospc "$NOSPC" 10 "${TPCC[@]}"
rm "$W/mnt/ballast"; check_tpcc "ENOSPC"
fill "$W/mnt" $((2 << 20)); expect_stop sqlite-nospc "$NOSPC" 2 "${SBR[@]}" --buffered
rm "$W/mnt/ballast"; check_sb sqlite "ENOSPC"
fill "$W/mnt" $((1 << 20)); expect_stop lmdb-nospc "$NOSPC" 2 "${SBR[@]}" --engine lmdb
rm "$W/mnt/ballast"; check_sb lmdb "ENOSPC"

# The drive fails writes mid-run (EIO, then ext4's read-only abort; see failstop_storage.sh).
EIO="I/O error|read-only file system|no space left on device"
DURING="fill $W/tmpfs 0"
expect_stop tpcc-eio "$EIO" 10 "${TPCC[@]}"
rm "$W/tmpfs/ballast"; remount; check_tpcc "EIO"
expect_stop sqlite-eio "$EIO" 2 "${SBR[@]}" --buffered
rm "$W/tmpfs/ballast"; remount; check_sb sqlite "EIO"
DURING=""

# precondition: its region fits, but the record it keeps beside it does not (ENOSPC).
# The free space is raised a block at a time from the region's size: the first run
# whose region can be allocated has no block left for its record (before it, the space
# check refuses the region, exit 2, or its allocation fails, precondition_alloc.sh).
for extra in $(seq 0 4096 65536); do
  rm -rf "$W/mnt/pc" "$W/mnt/ballast"
  fill "$W/mnt" $(( (32 << 20) + extra ))
  rc=0; "$APPSIM" precondition --target "$W/mnt/pc" --size 32M --loops 1 --keep-free 0 --quiet \
    --json "$W/pc.json" >/dev/null 2>"$W/pc.err" || rc=$?
  [ $rc = 2 ] || grep -q "allocating 32.0 MiB" "$W/pc.err" || break
done
[ $rc = 1 ] && grep -q "failed: $NOSPC writing the preconditioning record" "$W/pc.err" ||
  fail "precondition record out of space: exit $rc: $(cat "$W/pc.err")"
jq -e --arg c "$NOSPC" '.failed == true and .failure.cause == $c' "$W/pc.json" >/dev/null ||
  fail "precondition result not marked failed: $(jq -c '{failed, failure}' "$W/pc.json")"
rm "$W/mnt/ballast"
echo ok
