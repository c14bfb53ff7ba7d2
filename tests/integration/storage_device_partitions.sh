#!/usr/bin/env bash
# tests/integration/storage_device_partitions.sh: a partitioned or held block
# device. A loop device appsim marked (so it may be written without --allow-destroy)
# gets a kernel partition (addpart, as BLKPG or a partition table would make) and
# mkfs.ext4 on it: a replay on the whole device is refused with and without
# --allow-destroy, the message names the partition and its filesystem, and the
# filesystem's bytes are unchanged. While one replay runs on the device, a second is
# refused at once naming the first one's pid. Needs root and loop devices: skipped (77)
# otherwise.
set -u
fail() { echo "FAIL: $*"; exit 1; }
if [ "$(id -u)" -ne 0 ]; then echo "skipped: loop devices need root"; exit 77; fi
for tool in addpart delpart mkfs.ext4; do
  command -v $tool >/dev/null || { echo "skipped: $tool missing (util-linux, e2fsprogs)"; exit 77; }
done
mkdir -p "$APPSIM_TMP"
T=$(mktemp -d "$APPSIM_TMP/part.XXXXXX")
truncate -s 32M "$T/disk.img"
DEV=$(losetup -f --show "$T/disk.img" 2>/dev/null) || { rm -rf "$T"; echo "skipped: losetup failed"; exit 77; }
bg=
cleanup() {
  [ -n "$bg" ] && kill "$bg" 2>/dev/null && wait "$bg" 2>/dev/null
  delpart "$DEV" 1 2>/dev/null
  losetup -d "$DEV"
  rm -rf "$T"
}
trap cleanup EXIT

# A trace of 4 KiB writes every 64 KiB, 50 ms apart in original timing (about 3 s).
for i in $(seq 0 63); do echo "$((128166385295514663 + i * 500000)),hm,0,Write,$((i * 65536)),4096,100"; done >"$T/w.csv"
"$APPSIM" replay "$T/w.csv" --target "$DEV" --map wrap --timing afap --allow-destroy --quiet >/dev/null 2>&1 ||
  fail "first replay with --allow-destroy"

# ---- case 2: one appsim per device
"$APPSIM" replay "$T/w.csv" --target "$DEV" --map wrap --quiet >"$T/first.txt" 2>&1 &
bg=$!
lock="/run/lock/appsim-dev-$(stat -c '%t-%T' "$DEV" | { IFS=- read -r a b; echo "$((16#$a))-$((16#$b))"; }).lock"
[ -d /run/lock ] || lock="/run/appsim-dev-${lock#/run/lock/appsim-dev-}"
for _ in $(seq 50); do grep -q "^pid $bg\$" "$lock" 2>/dev/null && break; sleep 0.1; done
grep -q "^pid $bg\$" "$lock" || { cat "$T/first.txt"; fail "the first replay never took $lock"; }
out=$("$APPSIM" replay "$T/w.csv" --target "$DEV" --map wrap --timing afap --quiet 2>&1); rc=$?
[ $rc -eq 2 ] || fail "second replay on a device in use: exit $rc: $out"
echo "$out" | grep -q "in use by appsim pid $bg (.*replay" || fail "message does not name the holder: $out"
wait "$bg" || { cat "$T/first.txt"; fail "the first replay failed"; }
bg=
echo "ok: a second replay on a device in use is refused"

# ---- case 6: a filesystem on a partition of a marked device
"$APPSIM" replay "$T/w.csv" --target "$DEV" --map wrap --timing afap --quiet >/dev/null 2>&1 ||
  fail "the marked device needs no flag"
addpart "$DEV" 1 2048 20480 2>/dev/null || { echo "skipped: addpart refused (no partitions on loop devices here)"; exit 77; }
[ -b "${DEV}p1" ] || udevadm settle 2>/dev/null
[ -b "${DEV}p1" ] || { echo "skipped: no node for ${DEV}p1"; exit 77; }
mkfs.ext4 -q -F -L precious "${DEV}p1" || fail "mkfs.ext4 on ${DEV}p1"
sum=$(dd if="$DEV" bs=1M skip=1 count=10 status=none | md5sum)
for flag in "" --allow-destroy; do
  out=$("$APPSIM" replay "$T/w.csv" --target "$DEV" --map wrap --timing afap $flag --quiet 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "replay ${flag:-without a flag} over a partition's filesystem: exit $rc"
  echo "$out" | grep -q "partition $(basename "$DEV")p1 .*ext4 signature (label \"precious\")" ||
    fail "the message does not name the partition's filesystem: $out"
  echo "ok: refused ${flag:-without a flag}"
done
[ "$(dd if="$DEV" bs=1M skip=1 count=10 status=none | md5sum)" = "$sum" ] || fail "the partition was written"
blkid -p "${DEV}p1" | grep -q 'LABEL="precious"' || fail "the filesystem is gone"
echo "storage device partitions: ok"
