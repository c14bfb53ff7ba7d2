#!/usr/bin/env bash
# `appsim info` and `appsim cleanup` on a block device (a loop device): info describes it
# (loop, virtual, backing file, size) without the --allow-destroy flag and without
# writing; cleanup says there is nothing to remove and leaves the data alone. Needs root
# (losetup): skipped (77) otherwise.
set -u
fail() { echo "FAIL: $*"; exit 1; }
if [ "$(id -u)" -ne 0 ]; then echo "skipped: loop devices need root"; exit 77; fi
mkdir -p "$APPSIM_TMP"
T=$(mktemp -d "$APPSIM_TMP/dev.XXXXXX")
truncate -s 32M "$T/disk.img"
DEV=$(losetup -f --show "$T/disk.img" 2>/dev/null) || { rm -rf "$T"; echo "skipped: losetup failed"; exit 77; }
trap 'losetup -d "$DEV"; rm -rf "$T"' EXIT
printf 'appsim-marker' | dd of="$DEV" bs=512 seek=100 conv=notrunc status=none
sum_before=$(md5sum <"$T/disk.img")

out=$("$APPSIM" info --target "$DEV" --json "$T/info.json" 2>&1) || fail "info on $DEV: $out"
echo "$out" | grep -q "kind  *block_device" || fail "kind: $out"
jq -e --arg img "$T/disk.img" '.target.device | .transport == "loop" and .virtual == true
      and .backing_file == $img and .capacity_bytes == 33554432 and .logical_block_size == 512' \
  "$T/info.json" >/dev/null || fail "device identity: $(jq -c .target.device "$T/info.json")"
jq -e '.target.available_bytes == 33554432' "$T/info.json" >/dev/null || fail "available_bytes"

out=$("$APPSIM" cleanup --target "$DEV" 2>&1) || fail "cleanup on a device: $out"
echo "$out" | grep -q "nothing to remove" || fail "cleanup message: $out"
[ "$(md5sum <"$T/disk.img")" = "$sum_before" ] || fail "info or cleanup changed the device"
echo "storage device cli: ok"
