#!/usr/bin/env bash
# Benchmark: 4 KiB random O_DIRECT reads at QD 1, 32 and 128 on one file, appsim's
# io_uring engine (bench_storage_randread) against fio's io_uring engine, in the same
# run on the same file, alternating which goes first each round. Prints per-round lines
# and a markdown table of medians: IOPS and CPU seconds per million I/Os.
# CPU is measured the same way for both: user+system time of the whole process tree
# from /usr/bin/time, so io_uring worker threads and fio's parent process count (fio's
# own usr_cpu/sys_cpu leaves out work the kernel punts to io-wq workers).
# fio runs twice per round: with its defaults, and with --fixedbufs --registerfiles
# (what appsim's engine uses), so both a default and a like-for-like peer are shown.
# Environment: BUILD_DIR (default build), BENCH_DIR (scratch dir, default /tmp),
# SECONDS_PER_RUN (default 5), ROUNDS (default 3), SIZE_MB (default 1024),
# ZRAM=1: run on a zram device the script creates (and removes) instead of a file, to
# see the engines' own cost on a device with microsecond latency (root only).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
BENCH_DIR=${BENCH_DIR:-/tmp}
SECS=${SECONDS_PER_RUN:-5}
ROUNDS=${ROUNDS:-3}
SIZE_MB=${SIZE_MB:-1024}
command -v fio >/dev/null || { echo "fio is not installed (scripts/deps.sh installs it)"; exit 1; }
command -v jq >/dev/null || { echo "jq is needed to read fio's JSON"; exit 1; }
cmake --build "$BUILD_DIR" --target bench_storage_randread >/dev/null
BENCH=$(find "$BUILD_DIR" -name bench_storage_randread -type f -perm -u+x | head -1)
command -v /usr/bin/time >/dev/null || { echo "/usr/bin/time is needed (Debian package time)"; exit 1; }
OUT=$(mktemp)
TIMES=$(mktemp)
if [ "${ZRAM:-0}" = 1 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "ZRAM=1 needs root"; exit 1; }
  ZID=$(cat /sys/class/zram-control/hot_add)
  FILE=/dev/zram$ZID
  trap 'echo "$ZID" >/sys/class/zram-control/hot_remove; rm -f "$OUT" "$TIMES"' EXIT
  echo "${SIZE_MB}M" >/sys/block/zram$ZID/disksize
else
  FILE="$BENCH_DIR/appsim-randread-bench.dat"
  trap 'rm -f "$FILE" "$OUT" "$TIMES"' EXIT
fi
# Written once with random data and O_DIRECT, so no page cache and no sparse holes.
dd if=/dev/urandom of="$FILE" bs=1M count="$SIZE_MB" oflag=direct status=none

cpu_of() { awk '{print $1 + $2}' "$TIMES"; }
run_appsim() {
  local line
  line=$(/usr/bin/time -o "$TIMES" -f "%U %S" "$BENCH" "$FILE" "$1" "$SECS")
  echo "$line" | jq -r --arg r "$2" --arg cpu "$(cpu_of)" \
    '"\($r) appsim \(.qd) \(.iops) \(($cpu | tonumber) / (.ios / 1e6)) \(.lat_p50_us) \(.lat_p99_us)"'
}
run_fio() { # qd round label extra-args...
  local qd=$1 r=$2 label=$3 json
  shift 3
  json=$(/usr/bin/time -o "$TIMES" -f "%U %S" fio --name=randread --filename="$FILE" \
    --ioengine=io_uring --direct=1 --rw=randread --bs=4k --iodepth="$qd" --runtime="$SECS" \
    --time_based --size="${SIZE_MB}M" --randrepeat=0 --norandommap --lat_percentiles=1 "$@" \
    --output-format=json 2>/dev/null)
  echo "$json" | jq -r --arg r "$r" --arg l "$label" --arg q "$qd" --arg cpu "$(cpu_of)" \
    '.jobs[0] as $j |
      "\($r) \($l) \($q) \($j.read.iops) \(($cpu | tonumber) / ($j.read.total_ios / 1e6)) \($j.read.lat_ns.percentile["50.000000"] / 1000) \($j.read.lat_ns.percentile["99.000000"] / 1000)"'
}

echo "# round tool qd iops cpu_s_per_million p50_us p99_us"
for r in $(seq 1 "$ROUNDS"); do
  for qd in 1 32 128; do
    if [ $((r % 2)) -eq 1 ]; then
      run_appsim "$qd" "$r" | tee -a "$OUT"
      run_fio "$qd" "$r" fio | tee -a "$OUT"
      run_fio "$qd" "$r" fio-fixed --fixedbufs --registerfiles | tee -a "$OUT"
    else
      run_fio "$qd" "$r" fio-fixed --fixedbufs --registerfiles | tee -a "$OUT"
      run_fio "$qd" "$r" fio | tee -a "$OUT"
      run_appsim "$qd" "$r" | tee -a "$OUT"
    fi
  done
done

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo
echo "| QD | tool | IOPS (median of $ROUNDS) | CPU s per million I/Os | p50 us | p99 us |"
echo "|---:|---|---:|---:|---:|---:|"
for qd in 1 32 128; do
  for tool in appsim fio fio-fixed; do
    sel() { awk -v t="$tool" -v q="$qd" -v c="$1" '$2==t && $3==q {print $c}' "$OUT" | median; }
    printf "| %s | %s | %.0f | %.2f | %.1f | %.1f |\n" "$qd" "$tool" "$(sel 4)" "$(sel 5)" \
      "$(sel 6)" "$(sel 7)"
  done
done
