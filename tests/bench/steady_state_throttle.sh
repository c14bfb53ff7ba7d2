#!/usr/bin/env bash
# --warmup steady on a target whose speed changes during the run: a loop device (over a
# file in DIR, --direct-io=on) whose cgroup v1 blkio write-IOPS throttle is lowered
# from FAST to SLOW after CHANGE seconds, under `appsim replay --timing afap` of 4 KiB
# random writes at QD 32. The steady-state rule should hold only once five rounds
# after the change are in the window. Prints every round and the verdict, and leaves
# the result in DIR/steady.json. Needs root, losetup, cgroup v1 blkio. Not run by ctest.
# Usage: tests/bench/steady_state_throttle.sh DIR [ROUND] [CHANGE] [FAST] [SLOW] [MEASURE]
set -euo pipefail
cd "$(dirname "$0")/../.."
APPSIM=${APPSIM:-$PWD/build/appsim}
DIR=${1:?usage: $0 DIR [ROUND] [CHANGE] [FAST] [SLOW] [MEASURE]}
ROUND=${2:-30s}
CHANGE=${3:-120}
FAST=${4:-3000}
SLOW=${5:-1000}
MEASURE=${6:-60s}
CG=/sys/fs/cgroup/blkio/appsim-steady-$$
[ -d /sys/fs/cgroup/blkio ] || { echo "needs cgroup v1 blkio" >&2; exit 2; }
mkdir -p "$DIR"
truncate -s 512M "$DIR/steady.img"
DEV=$(losetup -f --show --direct-io=on "$DIR/steady.img")
mkdir "$CG"
cleanup() { [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; sleep 0.5; rmdir "$CG" 2>/dev/null; losetup -d "$DEV"; rm -f "$DIR/steady.img"; }
trap cleanup EXIT
MM=$(lsblk -dno MAJ:MIN "$DEV" | tr -d ' ')
awk 'BEGIN { srand(7); print "fio version 3 iolog"; print "0 f add";
  for (i = 0; i < 100000; i++) printf "%d f write %d 4096\n", i, int(rand() * 65536) * 4096 }' > "$DIR/w.log"
echo "$MM $FAST" > "$CG/blkio.throttle.write_iops_device"
echo "== $DEV ($MM): write IOPS throttle $FAST, lowered to $SLOW after $CHANGE s; rounds of $ROUND"
echo "   $(uptime)"
sh -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$CG" "$APPSIM" replay "$DIR/w.log" \
  --target "$DEV" --allow-destroy --timing afap --qd 32 --warmup steady --steady-round "$ROUND" \
  --duration "$MEASURE" --json "$DIR/steady.json" &
pid=$!
sleep "$CHANGE"
echo "$MM $SLOW" > "$CG/blkio.throttle.write_iops_device"
echo "   [$(date -u +%T)] throttle lowered to $SLOW write IOPS"
wait "$pid"; pid=
echo "   $(uptime)"
jq -r '.steady_state | "verdict: reached=\(.reached) after \(.after_rounds) rounds; measured phase from \(.measure_start_s) s",
  (.rounds[] | "  round \(.round) t=\(.t | floor) s: \(.rate | floor) IOPS\(if .window_mean then ", range \(.range_pct | floor) %, slope \(.slope_pct | floor) %" else "" end)\(if .steady then "  steady" else "" end)")' "$DIR/steady.json"
jq -r '"measured: \(.summary.iops | floor) IOPS over \(.summary.seconds) s"' "$DIR/steady.json"
