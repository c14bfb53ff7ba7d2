#!/usr/bin/env bash
# `appsim io` against fio on the same data file, same engine (io_uring), same queue
# depth, in the same run, rounds alternating appsim and fio:
#   4 KiB random read at QD 1, 32 and 128; 128 KiB sequential write at QD 32.
# Each tool runs DURATION seconds as fast as possible (no warm-up, so that every I/O
# it did is counted) over the whole file. Reported: IOPS (I/Os completed over the
# measured seconds) and CPU seconds per million I/Os (user + sys of the whole process,
# setup included, from /usr/bin/time). fio runs with norandommap (appsim keeps no
# random map either: both draw offsets independently) and direct=1.
# Usage: tests/bench/io_vs_fio.sh [DIR] [FILE_SIZE] [DURATION] [ROUNDS]
#   ZRAM=1 (root): both run on a zram device of FILE_SIZE the script creates and removes
#   (RAM-backed: the disk's noise out, the tools' own costs in), filled with random data.
# appsim's line names its submitter's scheduling policy (batch where io_uring serves the
# target with worker threads, e.g. zram; docs/io.md).
# Needs: fio, python3, /usr/bin/time. Not run by ctest. The load average is printed
# before every round and beside every pair's ratios (which tool goes first alternates
# with the round): on a shared machine, compare the two lines of one pair, and read the
# summary's counts and medians over many short rounds.
set -euo pipefail
cd "$(dirname "$0")/../.."
APPSIM=${APPSIM:-build/appsim}
DIR=${1:-/tmp/appsim-bench-io}
SIZE=${2:-1G}
DURATION=${3:-10}
ROUNDS=${4:-3}
command -v fio >/dev/null || { echo "fio is needed" >&2; exit 2; }
mkdir -p "$DIR/tgt"
DATA=$DIR/tgt/io.data
TARGET=(--target "$DIR/tgt" --file-size "$SIZE")
if [ "${ZRAM:-0}" = 1 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "ZRAM=1 needs root" >&2; exit 2; }
  ZID=$(cat /sys/class/zram-control/hot_add)
  DATA=/dev/zram$ZID
  # The device stays busy for a moment after the last tool exits: retry the removal
  # (a device left behind keeps its gigabyte of RAM).
  trap 'for _ in 1 2 3 4 5 6 7 8 9 10; do echo "$ZID" >/sys/class/zram-control/hot_remove 2>/dev/null && break; sleep 0.5; done' EXIT
  echo "$SIZE" >/sys/block/zram$ZID/disksize
  dd if=/dev/urandom of="$DATA" bs=1M oflag=direct status=none || true
  TARGET=(--target "$DATA" --allow-destroy)
  echo "== on $DATA (zram, $SIZE)"
fi
# Creates and fills the data file once (later runs reuse it).
"$APPSIM" io "${TARGET[@]}" --section 100 --duration 1 --warmup 0 --quiet >/dev/null

RATIOS=$DIR/ratios.txt
: >"$RATIOS"
appsim_round() { # label, then appsim's definition options
  local label=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$DIR/time.a" "$APPSIM" io "${TARGET[@]}" --section 100 \
    --warmup 0 --duration "$DURATION" --quiet --json "$DIR/a.json" "$@" >/dev/null
  python3 - "$DIR/a.json" "$DIR/time.a" "$label" <<'PY' | tee "$DIR/a.line"
import json, sys
d = json.load(open(sys.argv[1])); e, u, s = map(float, open(sys.argv[2]).read().split()[-3:])
r = d["profiles"][0]["replay"]; n = r["completed"]
print("  %-18s appsim %9.0f IOPS  %6.2f CPU s per million I/Os  (%d I/Os, wall %.1f s, "
      "submitter %s)" % (sys.argv[3], d["summary"]["iops"],
                         (u + s) / n * 1e6 if n else float("nan"), n, e, r["submitter_policy"]))
PY
}
fio_round() { # label, then fio's options
  local label=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$DIR/time.f" fio --name=io --filename="$DATA" \
    --ioengine=io_uring --direct=1 --norandommap --time_based --runtime="$DURATION" \
    --output-format=json --output="$DIR/f.json" "$@" >/dev/null
  python3 - "$DIR/f.json" "$DIR/time.f" "$label" <<'PY' | tee "$DIR/f.line"
import json, sys
d = json.load(open(sys.argv[1])); e, u, s = map(float, open(sys.argv[2]).read().split()[-3:])
j = d["jobs"][0]
n = j["read"]["total_ios"] + j["write"]["total_ios"]
secs = j["job_runtime"] / 1000.0
print("  %-18s fio    %9.0f IOPS  %6.2f CPU s per million I/Os  (%d I/Os, wall %.1f s)"
      % (sys.argv[3], n / secs if secs else 0.0, (u + s) / n * 1e6 if n else float("nan"), n, e))
PY
}
# One pair: both tools back to back (which goes first alternates with the round), then
# the pair's ratios: appsim/fio IOPS (>= 1 is the target) and CPU per I/O (<= 1).
pair() { # round, label, qd, appsim options..., --, fio options...
  local round=$1 label=$2 qd=$3; shift 3
  local a=() f=()
  while [ "$1" != "--" ]; do a+=("$1"); shift; done
  shift
  f=("$@")
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  if [ $((round % 2)) -eq 1 ]; then
    appsim_round "$label" --threads "$qd" "${a[@]}"
    fio_round "$label" --iodepth="$qd" "${f[@]}"
  else
    fio_round "$label" --iodepth="$qd" "${f[@]}"
    appsim_round "$label" --threads "$qd" "${a[@]}"
  fi
  python3 - "$DIR/a.line" "$DIR/f.line" "$label" "$load" <<'PY' | tee -a "$RATIOS"
import sys
a = open(sys.argv[1]).read().split(); f = open(sys.argv[2]).read().split()
ia, ca = float(a[a.index("IOPS") - 1]), float(a[a.index("CPU") - 1])
i_f, cf = float(f[f.index("IOPS") - 1]), float(f[f.index("CPU") - 1])
if ia > 0 and i_f > 0:
    print("  %-18s ratio  IOPS %.3f  CPU per I/O %.3f  (load %s)"
          % (sys.argv[3], ia / i_f, ca / cf, sys.argv[4]))
else:  # a stalled run: reported, left out of the summary
    print("  %-18s no ratio: a tool completed no I/O (load %s)" % (sys.argv[3], sys.argv[4]))
PY
}
for r in $(seq 1 "$ROUNDS"); do
  echo "-- round $r ($(uptime | sed 's/.*load/load/'))"
  for qd in 1 32 128; do
    pair "$r" "4k randread qd$qd" "$qd" --bs 4k --read-pct 100 --random-pct 100 -- \
      --rw=randread --bs=4k
  done
  pair "$r" "128k write qd32" 32 --bs 128k --read-pct 0 --random-pct 0 -- --rw=write --bs=128k
done
# Per pair over the rounds: how often appsim's IOPS was at least fio's and its CPU per
# I/O at most fio's, and the median ratios.
echo "== summary over $ROUNDS round(s)"
python3 - "$RATIOS" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    w = line.split()
    if "ratio" not in w:
        continue
    label = " ".join(w[:w.index("ratio")])
    rows.setdefault(label, []).append((float(w[w.index("IOPS") + 1]), float(w[w.index("I/O") + 1])))
for label, v in rows.items():
    io = [x[0] for x in v]; cpu = [x[1] for x in v]
    print("  %-18s IOPS ratio median %.3f (>= 1 in %d of %d)  CPU ratio median %.3f (<= 1 in %d of %d)"
          % (label, statistics.median(io), sum(x >= 1 for x in io), len(io),
             statistics.median(cpu), sum(x <= 1 for x in cpu), len(cpu)))
PY
