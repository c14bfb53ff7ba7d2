#!/usr/bin/env bash
# `appsim info` and `appsim cleanup` on a block device (a loop device): info describes it
# (loop, virtual, backing file, size) without the --allow-destroy flag and without
# writing; cleanup says there is nothing to remove and leaves the data alone. A replay
# needs --allow-destroy on the unmarked device, leaves appsim's mark in the last MiB
# (never overwritten: capacity ends there, even for a trace that writes everywhere), and
# the next replay needs no flag until mkswap puts a signature on the device. Needs root
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
# capacity for workloads ends at appsim's mark, at the start of the last MiB
jq -e '.target.available_bytes == 32505856' "$T/info.json" >/dev/null || fail "available_bytes"

out=$("$APPSIM" cleanup --target "$DEV" 2>&1) || fail "cleanup on a device: $out"
echo "$out" | grep -q "nothing to remove" || fail "cleanup message: $out"
[ "$(md5sum <"$T/disk.img")" = "$sum_before" ] || fail "info or cleanup changed the device"

# A trace writing 4 KiB at every 64 KiB of a 64 MiB span: with --map wrap it covers the
# whole device up to the mark.
for i in $(seq 0 1023); do echo "$((128166385295514663 + i * 1000)),hm,0,Write,$((i * 65536)),4096,100"; done > "$T/w.csv"
out=$("$APPSIM" replay "$T/w.csv" --target "$DEV" --map wrap --quiet 2>&1) && fail "replay on an unmarked device without the flag"
echo "$out" | grep -q -- "--allow-destroy" || fail "refusal message: $out"
"$APPSIM" replay "$T/w.csv" --target "$DEV" --map wrap --allow-destroy --quiet >/dev/null 2>&1 || fail "replay with --allow-destroy"
mark=$(tail -c 1048576 "$T/disk.img" | head -c 4096 | tr -d '\0')
echo "$mark" | grep -q "^appsim device mark v1" || fail "no mark in the last MiB: $(echo "$mark" | head -c 80)"
echo "$mark" | grep -q "^device_bytes=33554432" || fail "mark size: $mark"
out=$("$APPSIM" replay "$T/w.csv" --target "$DEV" --map wrap --quiet 2>&1) || fail "replay on the marked device without the flag: $out"
[ "$(tail -c 1048576 "$T/disk.img" | head -c 4096 | tr -d '\0')" = "$mark" ] || fail "the mark changed"
mkswap "$DEV" >/dev/null 2>&1 || fail "mkswap"
out=$("$APPSIM" replay "$T/w.csv" --target "$DEV" --map wrap --quiet 2>&1) && fail "replay after mkswap without the flag"
echo "$out" | grep -q "appsim's mark" || fail "refusal after mkswap: $out"
echo "storage device cli: ok"
