#!/usr/bin/env bash
# A loop device holding a DOS partition table whose partition 1 holds ext4, with no
# partition devices registered (no partition scan): a replay on the whole device is
# refused with and without --allow-destroy, the refusal names the partition and its
# filesystem, and the device's bytes are unchanged. Needs root and loop devices:
# skipped (77) otherwise.
set -u
fail() { echo "FAIL: $*"; exit 1; }
if [ "$(id -u)" -ne 0 ]; then echo "skipped: loop devices need root"; exit 77; fi
for tool in losetup mkfs.ext4; do
  command -v $tool >/dev/null || { echo "skipped: $tool missing (util-linux, e2fsprogs)"; exit 77; }
done
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
T=$APPSIM_TMP
truncate -s 16M "$T/disk.img"
# A DOS partition table: partition 1, type 83 (Linux), sectors 2048 to 22527 (10 MiB).
printf '\000\000\000\000\203\000\000\000\000\010\000\000\000\120\000\000' |
  dd of="$T/disk.img" bs=1 seek=446 conv=notrunc status=none || fail "writing the table"
printf '\125\252' | dd of="$T/disk.img" bs=1 seek=510 conv=notrunc status=none || fail "writing the table"
truncate -s 10M "$T/part.img"
mkfs.ext4 -q -F -L precious "$T/part.img" || fail "mkfs.ext4"
dd if="$T/part.img" of="$T/disk.img" bs=1M seek=1 conv=notrunc status=none || fail "dd"
DEV=$(losetup -f --show "$T/disk.img" 2>/dev/null) || { echo "skipped: losetup failed"; exit 77; }
trap 'losetup -d "$DEV"' EXIT
[ ! -e "${DEV}p1" ] || { echo "skipped: the kernel registered ${DEV}p1 (partition scan on)"; exit 77; }
for i in $(seq 0 15); do echo "$((128166385295514663 + i * 1000)),hm,0,Write,$((i * 65536)),4096,100"; done >"$T/w.csv"
sum=$(md5sum <"$T/disk.img")
for flag in "" --allow-destroy; do
  out=$("$APPSIM" replay "$T/w.csv" --target "$DEV" --map wrap --timing afap $flag --quiet 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "replay ${flag:-without a flag}: exit $rc: $out"
  echo "$out" | grep -q "#1 (10.0 MiB at byte 1048576: ext4 signature (label \"precious\"" ||
    fail "the refusal does not name the partition's filesystem: $out"
done
[ "$(md5sum <"$T/disk.img")" = "$sum" ] || fail "the device was written"
out=$("$APPSIM" info --target "$DEV" 2>&1) || fail "info: $out"
echo "storage unregistered partitions: ok"
