#!/usr/bin/env bash
# Replay speed against fio, on the same trace, target and queue depth, in the same run:
#  1. as fast as possible: `appsim replay --timing afap --qd QD` vs fio replaying the
#     iolog v3 that `appsim trace convert` wrote (read_iolog, replay_no_stall=1,
#     io_uring, direct=1, iodepth=QD). IOPS and CPU seconds per million I/Os (user+sys
#     of the whole process, setup included), ROUNDS alternating rounds each.
#  2. timed replay at 50,000 IOPS (one I/O every 20 us for 2 s, original timing):
#     submission lag p50/p99/max, on the drive (O_DIRECT) and on a buffered /dev/shm
#     target (the replayer alone, the drive out of the picture).
# Usage: tests/bench/trace_replay_vs_fio.sh [DIR] [RECORDS] [QD] [ROUNDS]
#   DEVICE=/dev/zramN (or any scratch block device of >= 1 GiB, which is OVERWRITTEN):
#   replay part 1 on that device instead of a file in DIR (a RAM-backed zram device
#   takes the disk's noise out and compares the tools' own costs).
# Needs: fio, python3 (to read the JSON), /usr/bin/time. Not run by ctest.
set -euo pipefail
cd "$(dirname "$0")/../.."
APPSIM=${APPSIM:-build/appsim}
DIR=${1:-/tmp/appsim-bench-replay}
N=${2:-300000}
QD=${3:-32}
ROUNDS=${4:-3}
command -v fio >/dev/null || { echo "fio is needed" >&2; exit 2; }
rm -rf "$DIR"; mkdir -p "$DIR/tgt"
echo "== trace: $N random 4 KiB I/Os (70 % reads) over 1 GiB; qd $QD"
awk -v n="$N" 'BEGIN { srand(42); print "fio version 3 iolog"; print "0 f add";
  for (i = 0; i < n; i++) printf "%d f %s %d 4096\n", i, (rand() < 0.7 ? "read" : "write"),
    int(rand() * 262144) * 4096; }' > "$DIR/t.log"
"$APPSIM" trace convert "$DIR/t.log" -o "$DIR/t.apt" 2>/dev/null
TARGET=("$DIR/tgt")
DATA=$DIR/tgt/replay.data
if [ -n "${DEVICE:-}" ]; then
  echo "   on $DEVICE (overwritten), filled with random data first"
  dd if=/dev/urandom of="$DEVICE" bs=1M count=1024 oflag=direct status=none
  TARGET=("$DEVICE" --allow-destroy)
  DATA=$DEVICE
fi
"$APPSIM" trace convert "$DIR/t.apt" -o "$DIR/fio.log" --to fio-v3 --fio-file "$DATA" 2>/dev/null
# First run creates and fills the data file (1 GiB) and warms everything up.
"$APPSIM" replay "$DIR/t.apt" --target "${TARGET[@]}" --timing afap --qd "$QD" --quiet >/dev/null
appsim_round() {
  /usr/bin/time -f "%e %U %S" -o "$DIR/time.a" "$APPSIM" replay "$DIR/t.apt" --target "${TARGET[@]}" \
    --timing afap --qd "$QD" --quiet --json "$DIR/a.json" >/dev/null
  python3 - "$DIR/a.json" "$DIR/time.a" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); e, u, s = map(float, open(sys.argv[2]).read().split()[-3:])
n = d["replay"]["completed"]
print("appsim  %9.0f IOPS  %6.2f CPU s per million I/Os  (%d I/Os, %.2f s measured, wall %.2f s)"
      % (d["summary"]["iops"], (u + s) / n * 1e6, n, d["summary"]["seconds"], e))
PY
}
fio_round() {
  /usr/bin/time -f "%e %U %S" -o "$DIR/time.f" fio --name=replay --read_iolog="$DIR/fio.log" \
    --replay_no_stall=1 --ioengine=io_uring --iodepth="$QD" --direct=1 \
    --output-format=json --output="$DIR/f.json" >/dev/null
  python3 - "$DIR/f.json" "$DIR/time.f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); e, u, s = map(float, open(sys.argv[2]).read().split()[-3:])
j = d["jobs"][0]
n = j["read"]["total_ios"] + j["write"]["total_ios"]
secs = j["job_runtime"] / 1000.0
print("fio     %9.0f IOPS  %6.2f CPU s per million I/Os  (%d I/Os, %.2f s job runtime, wall %.2f s)"
      % (n / secs, (u + s) / n * 1e6, n, secs, e))
PY
}
for r in $(seq 1 "$ROUNDS"); do
  echo "-- round $r"
  appsim_round
  fio_round
done

echo "== timed replay at 50,000 IOPS (2 s, original timing)"
awk 'BEGIN { srand(7); print "fio version 3 iolog"; print "0 f add";
  for (i = 0; i < 100000; i++) printf "%d f read %d 4096\n", i * 20, int(rand() * 16384) * 4096; }' \
  > "$DIR/timed.log"
"$APPSIM" trace convert "$DIR/timed.log" -o "$DIR/timed.apt" 2>/dev/null
lag() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); l = d["replay"]["submission_lag_us"]
print("%-24s %8.0f IOPS  lag p50 %7.1f us  p99 %9.1f us  max %10.1f us"
      % (sys.argv[2], d["summary"]["iops"], l["p50_us"], l["p99_us"], l["max_us"]))
PY
}
"$APPSIM" replay "$DIR/timed.apt" --target "$DIR/tgt" --file-size 64M --qd "$QD" --quiet \
  --json "$DIR/t1.json" >/dev/null
lag "$DIR/t1.json" "drive, O_DIRECT, qd $QD"
# At 50,000 IOPS the drive's latency spikes of a few ms put more than QD I/Os in
# flight (Little's law), and the replayer must then wait for a slot: that lag is the
# queue-depth cap, shown honestly. With a depth that does not bind, the lag is the
# replayer's own timing.
"$APPSIM" replay "$DIR/timed.apt" --target "$DIR/tgt" --file-size 64M --qd 256 --quiet \
  --json "$DIR/t3.json" >/dev/null
lag "$DIR/t3.json" "drive, O_DIRECT, qd 256"
SHM=$(mktemp -d /dev/shm/appsim-bench-XXXXXX)
"$APPSIM" replay "$DIR/timed.apt" --target "$SHM" --buffered --file-size 64M --qd "$QD" --quiet \
  --json "$DIR/t2.json" >/dev/null
lag "$DIR/t2.json" "/dev/shm, buffered"
rm -rf "$SHM" "$DIR"
