#!/usr/bin/env bash
# Benchmark: 4 KiB random O_DIRECT reads at QD 1, 32 and 128 on one file, appsim's
# io_uring engine (bench_storage_randread) against fio's io_uring engine, in the same
# run on the same file, alternating which goes first each round. Prints per-round lines
# and a markdown table of medians: IOPS and CPU seconds per million I/Os.
#   appsim: getrusage (user+system) of the process over the measured loop;
#   fio:    the job's usr_cpu+sys_cpu percentages times its runtime.
# fio runs twice per round: with its defaults, and with --fixedbufs --registerfiles
# (what appsim's engine uses), so both a default and a like-for-like peer are shown.
# Environment: BUILD_DIR (default build), BENCH_DIR (scratch dir, default /tmp),
# SECONDS_PER_RUN (default 5), ROUNDS (default 3), SIZE_MB (default 1024).
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
FILE="$BENCH_DIR/appsim-randread-bench.dat"
OUT=$(mktemp)
trap 'rm -f "$FILE" "$OUT"' EXIT
# Written once with random data and O_DIRECT, so no page cache and no sparse holes.
dd if=/dev/urandom of="$FILE" bs=1M count="$SIZE_MB" oflag=direct status=none

run_appsim() {
  "$BENCH" "$FILE" "$1" "$SECS" |
    jq -r --arg r "$2" '"\($r) appsim \(.qd) \(.iops) \(.cpu_s_per_million) \(.lat_p50_us) \(.lat_p99_us)"'
}
run_fio() { # qd round label extra-args...
  local qd=$1 r=$2 label=$3
  shift 3
  fio --name=randread --filename="$FILE" --ioengine=io_uring --direct=1 --rw=randread \
    --bs=4k --iodepth="$qd" --runtime="$SECS" --time_based --size="${SIZE_MB}M" \
    --randrepeat=0 --norandommap --lat_percentiles=1 "$@" --output-format=json 2>/dev/null |
    jq -r --arg r "$r" --arg l "$label" --arg q "$qd" '.jobs[0] as $j |
      ($j.read.total_ios / 1e6) as $mio |
      (($j.usr_cpu + $j.sys_cpu) / 100 * $j.job_runtime / 1000) as $cpu |
      "\($r) \($l) \($q) \($j.read.iops) \($cpu / $mio) \($j.read.lat_ns.percentile["50.000000"] / 1000) \($j.read.lat_ns.percentile["99.000000"] / 1000)"'
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
