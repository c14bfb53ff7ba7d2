#!/usr/bin/env bash
# precondition when the region's allocation fails after the space check passed: on an
# ext4 whose free space is the region plus less than ext4 needs for the file's own
# metadata, fallocate says ENOSPC. That is a failed run, not a usage error: exit 1, the
# cause on stderr, a result marked failed, the unwritten file removed, and the target's
# earlier preconditioning record left as it was. A filesystem that cannot allocate up
# front (ext2) is preconditioned all the same, the writes allocating the file.
# Needs root (loop devices, mounts): skipped (77) otherwise.
# APPSIM_TEST_RUN_SERIAL: loop devices and mounts.
set -uo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
skip() { echo "skipped: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (loop devices and mounts)"
for c in losetup mkfs.ext4 mkfs.ext2 jq fallocate; do command -v $c >/dev/null || skip "$c missing"; done
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/m4" "$APPSIM_TMP/m2"
W=$APPSIM_TMP
L4="" L2=""
cleanup() {
  mountpoint -q "$W/m4" && umount "$W/m4"
  mountpoint -q "$W/m2" && umount "$W/m2"
  [ -n "$L4" ] && losetup -d "$L4"
  [ -n "$L2" ] && losetup -d "$L2"
  true
}
trap cleanup EXIT
truncate -s 64M "$W/ext4.img" "$W/ext2.img"
mkfs.ext4 -q -F -m 0 "$W/ext4.img" && mkfs.ext2 -q -F -m 0 "$W/ext2.img" || fail "mkfs"
L4=$(losetup -f --show "$W/ext4.img") || skip "no loop device"
L2=$(losetup -f --show "$W/ext2.img") || skip "no second loop device"
mount "$L4" "$W/m4" && mount -t ext2 "$L2" "$W/m2" || skip "cannot mount ext4 and ext2"

T=$W/m4/pc
"$APPSIM" precondition --target "$T" --size 1M --loops 1 --keep-free 0 --quiet >/dev/null 2>"$W/first.err" ||
  fail "a first precondition: $(cat "$W/first.err")"
cp "$T/appsim-precondition.json" "$W/record-before"

# (after a sync of that filesystem: blocks freed by a removal show once the journal commits)
avail() { sync -f "$1"; df --output=avail -B1 "$1" | tail -1 | tr -d ' '; }
# Free space raised a block (1 KiB here) at a time from the region's size: the space
# check passes from the first run that is not refused; fallocate needs a few more blocks.
for extra in $(seq 0 1024 16384); do
  rm -f "$W/m4/ballast" "$W/pc.json"
  fallocate -l $(( $(avail "$W/m4") - (16 << 20) - extra )) "$W/m4/ballast"
  rc=0; "$APPSIM" precondition --target "$T" --size 16M --loops 1 --keep-free 0 --quiet \
    --json "$W/pc.json" >"$W/pc.out" 2>"$W/pc.err" || rc=$?
  [ $rc = 2 ] && grep -q "does not fit" "$W/pc.err" || break
done
[ $rc = 1 ] || fail "allocation out of space: exit $rc, want 1: $(cat "$W/pc.err")"
grep -q "cannot allocate 16.0 MiB for .*appsim-precondition.dat: No space left on device" "$W/pc.err" ||
  fail "the cause on stderr: $(cat "$W/pc.err")"
grep -q "give a smaller --size or a larger --keep-free" "$W/pc.err" || fail "what to do: $(cat "$W/pc.err")"
jq -e '.failed == true and .failure.cause == "no space left on device"
       and (.failure.message | test("allocating 16.0 MiB"))
       and .precondition.complete == false and .precondition.bytes_written == 0' "$W/pc.json" >/dev/null ||
  fail "result not marked failed: $(jq -c '{failed, failure, p: .precondition}' "$W/pc.json" 2>&1)"
[ ! -e "$T/appsim-precondition.dat" ] || fail "the unwritten file stayed"
! grep -q "appsim-precondition.dat" "$T/.appsim-manifest" || fail "the manifest still lists the file"
cmp -s "$T/appsim-precondition.json" "$W/record-before" || fail "the earlier record was replaced"
rm -f "$W/m4/ballast"

# ext2: no fallocate; the O_DIRECT writes allocate the file.
rc=0; "$APPSIM" precondition --target "$W/m2/pc" --size 8M --loops 1 --keep-free 0 \
  --json "$W/pc2.json" >"$W/pc2.out" 2>"$W/pc2.err" || rc=$?
[ $rc = 0 ] || fail "ext2: exit $rc: $(cat "$W/pc2.err")"
grep -q "cannot allocate a file up front; the writes allocate" "$W/pc2.err" || fail "ext2 note: $(cat "$W/pc2.err")"
jq -e '.precondition.complete == true and .precondition.bytes_written == 8388608
       and .precondition.preallocated == false and .failed != true' "$W/pc2.json" >/dev/null ||
  fail "ext2 result: $(jq -c '{failed, p: .precondition}' "$W/pc2.json")"
echo "precondition allocation failures: ok"
