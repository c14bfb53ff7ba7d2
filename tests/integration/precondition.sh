#!/usr/bin/env bash
# `appsim precondition` through the real binary, small sizes.
# Directory target: a preconditioning file of --size written --loops times (bytes
# written = 2 x size by default), removed afterwards unless --keep-file; the record
# (appsim-precondition.json, in the manifest) is what a later sysbench result reports
# under target.preconditioning. SIGINT mid-way: exit 130 and a record saying how much
# was written (complete = false). Bad options exit 2.
# Loop device (root only, else that part is skipped): --allow-destroy purges with a
# discard and writes 2 x the device up to appsim's mark; the record survives beside
# the mark, and a second run on the marked device needs no flag but is not purged.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect2() { set +e; "$@" >/dev/null 2>&1; local rc=$?; set -e; [ $rc -eq 2 ] || fail "exit $rc, not 2: $*"; }
D=$APPSIM_TMP/dir
M=$((1 << 20))

"$APPSIM" precondition --target "$D" --size 8M --json "$APPSIM_TMP/d.json" >"$APPSIM_TMP/d.out" 2>&1 \
  || fail "directory: $(cat "$APPSIM_TMP/d.out")"
jq -e --argjson m $M '.precondition | .complete and .bytes_written == 16 * $m and .region_bytes == 8 * $m
    and .passes == 2 and .block_bytes == 131072 and .queue_depth == 32 and .purge == "none"
    and .file_kept == false and .rate_mib_s > 0' "$APPSIM_TMP/d.json" >/dev/null \
  || fail "directory record: $(jq -c .precondition "$APPSIM_TMP/d.json")"
grep -q "ETA" "$APPSIM_TMP/d.out" || fail "progress line with ETA"
[ ! -e "$D/appsim-precondition.dat" ] || fail "the preconditioning file must be removed"
grep -qx "appsim-precondition.json" "$D/.appsim-manifest" || fail "record not in the manifest"

# options: loops, block size, queue depth; --keep-file keeps the file
"$APPSIM" precondition --target "$D" --size 3M --loops 3 --block-size 64K --qd 4 --keep-file --quiet \
  --json "$APPSIM_TMP/k.json" >/dev/null || fail "--loops 3"
jq -e --argjson m $M '.precondition | .bytes_written == 9 * $m and .passes == 3 and .block_bytes == 65536
    and .queue_depth == 4 and .file_kept' "$APPSIM_TMP/k.json" >/dev/null || fail "options: $(jq -c .precondition "$APPSIM_TMP/k.json")"
[ "$(stat -c %s "$D/appsim-precondition.dat")" -eq $((3 * M)) ] || fail "kept file size"

# a later result on the target names the preconditioning
"$APPSIM" sysbench --target "$D" --tables 1 --table-size 500 --time 1 --quiet \
  --json "$APPSIM_TMP/sb.json" >/dev/null || fail "sysbench on the preconditioned target"
jq -e --argjson m $M '.target.preconditioning | .bytes_written == 9 * $m and (.at | test("^20"))' \
  "$APPSIM_TMP/sb.json" >/dev/null || fail "sysbench result: $(jq -c .target.preconditioning "$APPSIM_TMP/sb.json")"

# SIGINT: 4 KiB writes at queue depth 1 are slow enough to be interrupted
set +e
"$APPSIM" precondition --target "$D" --size 64M --loops 8 --block-size 4K --qd 1 --quiet \
  --json "$APPSIM_TMP/i.json" >/dev/null 2>&1 &
pid=$!
sleep 1; kill -INT $pid; wait $pid; rc=$?
set -e
[ $rc -eq 130 ] || fail "interrupted run: exit $rc, not 130"
jq -e --argjson m $M '.complete == false and .interrupted and .bytes_written > 0
    and .bytes_written < 512 * $m and .bytes_written % 4096 == 0' "$D/appsim-precondition.json" >/dev/null \
  || fail "record after SIGINT: $(tr -s ' ' <"$D/appsim-precondition.json")"

expect2 "$APPSIM" precondition
expect2 "$APPSIM" precondition --target "$D" --size 1M --buffered
expect2 "$APPSIM" precondition --target "$D" --size 1M --block-size 6K
expect2 "$APPSIM" precondition --target "$D" --size 1M --purge discard
expect2 "$APPSIM" precondition --target "$D" --size 1M --loops 0
expect2 "$APPSIM" precondition --target "$D" --size 1P

if [ "$(id -u)" -ne 0 ]; then echo "ok (loop device part skipped: needs root)"; exit 0; fi
truncate -s 34M "$APPSIM_TMP/disk.img"
DEV=$(losetup -f --show --direct-io=on "$APPSIM_TMP/disk.img" 2>/dev/null) \
  || { echo "ok (loop device part skipped: losetup failed)"; exit 0; }
trap 'losetup -d "$DEV"' EXIT
region=$((33 * M)) # the device up to appsim's mark in its last MiB
expect2 "$APPSIM" precondition --target "$DEV" --purge discard
"$APPSIM" precondition --target "$DEV" --allow-destroy --quiet --json "$APPSIM_TMP/dev.json" >/dev/null \
  || fail "loop device"
jq -e --argjson r $region '.precondition | .complete and .region == "device" and .region_bytes == $r
    and .bytes_written == 2 * $r and .purge == "discard"' "$APPSIM_TMP/dev.json" >/dev/null \
  || fail "device record: $(jq -c .precondition "$APPSIM_TMP/dev.json")"
"$APPSIM" info --target "$DEV" --json "$APPSIM_TMP/info.json" >/dev/null 2>&1 || fail "info"
jq -e --argjson r $region '.target.preconditioning.bytes_written == 2 * $r' "$APPSIM_TMP/info.json" >/dev/null \
  || fail "info does not show the record"
expect2 "$APPSIM" precondition --target "$DEV" --purge discard
"$APPSIM" precondition --target "$DEV" --loops 1 --quiet --json "$APPSIM_TMP/dev2.json" >/dev/null 2>&1 \
  || fail "second run on the marked device"
jq -e --argjson r $region '.precondition | .bytes_written == $r and .purge == "none"
    and (.purge_note | test("allow-destroy"))' "$APPSIM_TMP/dev2.json" >/dev/null \
  || fail "second device record: $(jq -c .precondition "$APPSIM_TMP/dev2.json")"
echo "ok"
