#!/usr/bin/env bash
# `appsim precondition` write rate against fio's sequential write, side by side on the
# same target: the same bytes (SIZE x 2 passes), bs=128k, iodepth=32, direct=1,
# ioengine=io_uring, ROUNDS alternating rounds (appsim, fio, appsim, fio, ...) so that
# both see the same machine load. Prints every round, the medians and their ratio;
# exits 1 when appsim's median is more than 10 % below fio's.
# Usage: tests/bench/precondition_vs_fio.sh TARGET [SIZE] [ROUNDS]
#   TARGET: a directory (appsim preconditions a SIZE file in it, fio writes its own
#   SIZE file there, both removed), or a scratch block device (OVERWRITTEN: appsim
#   with --allow-destroy --purge none, fio with --filename=DEVICE --size=the region
#   appsim writes, i.e. the device less its last MiB).
# Needs: fio, jq. Not run by ctest.
set -euo pipefail
cd "$(dirname "$0")/../.."
APPSIM=${APPSIM:-build/appsim}
TARGET=${1:?usage: $0 TARGET [SIZE] [ROUNDS]}
SIZE=${2:-1G}
ROUNDS=${3:-3}
command -v fio >/dev/null || { echo "fio is needed" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"; [ -d "$TARGET" ] && rm -f "$TARGET/fio-precondition.tmp"' EXIT
if [ -b "$TARGET" ]; then
  A_ARGS=(--allow-destroy --purge none)
  [ "$SIZE" = all ] || A_ARGS+=(--size "$SIZE")
else
  mkdir -p "$TARGET"
  A_ARGS=(--size "$SIZE")
fi
echo "== precondition vs fio on $TARGET, size $SIZE x 2 passes, bs 128k, qd 32, O_DIRECT, io_uring"
echo "   $(uptime)"
appsim_round() {
  "$APPSIM" precondition --target "$TARGET" "${A_ARGS[@]}" --quiet --json "$WORK/a.json" >/dev/null
  jq -r '.precondition | "appsim  \(.rate_mib_s | floor) MiB/s  (\(.bytes_written) bytes, \(.seconds * 100 | floor / 100) s)"' "$WORK/a.json"
  jq -r '.precondition.rate_mib_s' "$WORK/a.json" >> "$WORK/a.rates"
}
fio_round() {
  local region file
  region=$(jq -r '.precondition.region_bytes' "$WORK/a.json")
  if [ -b "$TARGET" ]; then file=$TARGET; else file=$TARGET/fio-precondition.tmp; fi
  fio --name=precondition --filename="$file" --rw=write --bs=128k --iodepth=32 --direct=1 \
    --ioengine=io_uring --size="$region" --loops=2 --output-format=json --output="$WORK/f.json" >/dev/null
  [ -b "$TARGET" ] || rm -f "$file"
  jq -r '.jobs[0].write | "fio     \(.bw_bytes / 1048576 | floor) MiB/s  (\(.io_bytes) bytes, \(.runtime / 10 | floor / 100) s)"' "$WORK/f.json"
  jq -r '.jobs[0].write.bw_bytes / 1048576' "$WORK/f.json" >> "$WORK/f.rates"
}
for r in $(seq 1 "$ROUNDS"); do appsim_round; fio_round; done
median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
a=$(median "$WORK/a.rates"); f=$(median "$WORK/f.rates")
ratio=$(awk -v a="$a" -v f="$f" 'BEGIN {printf "%.3f", a / f}')
echo "median: appsim $a MiB/s, fio $f MiB/s, appsim/fio = $ratio"
echo "   $(uptime)"
awk -v r="$ratio" 'BEGIN {exit !(r >= 0.9)}' || { echo "appsim is more than 10 % below fio"; exit 1; }
