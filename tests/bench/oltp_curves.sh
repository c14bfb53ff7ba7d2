#!/usr/bin/env bash
# tests/bench/oltp_curves.sh: OLTP rate curves and service-level throughput on three
# drives of different speed (tests/bench/fidelity_drives.sh: `ram`, ext4 on zram; `disk`,
# ext4 on a direct-I/O loop device over a file on the machine's disk; `sloww`, the same
# loop device with appsim's writes capped at SLOWW_IOPS per second by a blkio throttle).
# On each drive, in its cgroups (the throttle and a memory limit of the buffer + 512 MiB):
#   tpcc      prepared once per drive with --keep-pristine (a run restores that copy,
#             so each curve starts from the same data), then `tpcc run --curve`:
#             THREADS users on THREADS connections without waits for the saturation
#             point, then open-loop points; limits: TPC-C's 90th-percentile limits per
#             type (always applied) and TPCC_SLO
#   sysbench  oltp_read_write on SQLite (SB_TABLES x SB_ROWS, --rand-type special),
#             prepared afresh per drive, then `sysbench run --curve` on THREADS threads;
#             limit: SB_SLO
# The p99 limits are loose enough for the write-capped drive to meet them at its lower
# points (its p99 at a quarter of its saturation rate: 230-400 ms in docs/fidelity.md),
# so that every drive has a service-level figure to rank.
# Every curve with --curve-points POINTS, --point-warmup WARMUP, --point-duration
# DURATION (DURATION_SLOWW on sloww: its checkpoints stall for seconds at 400 write IOPS)
# and --slo-refine REFINE. A point's p99 rests on its slowest 1 %: a 10-s point holds one
# checkpoint stall or none, and near the knee one burst of queueing, so its p99 swings
# from point to point; 30 s (60 s on sloww) hold several. Each result is OUT_DIR/WORKLOAD-DRIVE.json (its log
# beside it, .log); a result already there and complete is kept, so an interrupted
# harness resumes. OUT_DIR/meta.json holds the date, the machine, the drives and the
# settings; `tests/bench/oltp_curves_report.py OUT_DIR` prints the Markdown section.
# About 45 minutes with the defaults: each curve is the saturation point, the 6 listed
# points and at most REFINE bisection points, 5 + 30 s each (5 + 60 s on sloww).
# usage: sudo tests/bench/oltp_curves.sh [--drives LIST] [--workloads LIST] OUT_DIR
#   --drives LIST     ram,disk,sloww (any of fidelity_drives.sh's drives)
#   --workloads LIST  tpcc,sysbench
# Environment: APPSIM (build/appsim), POINTS (25,50,75,90,100,110), WARMUP (5s),
#   DURATION (30s), DURATION_SLOWW (60s), REFINE (2), THREADS (8), TPCC_SCALE (2), TPCC_BUFFER (32M),
#   TPCC_SLO (p99<=1s), SB_TABLES (4), SB_ROWS (100000), SB_BUFFER (16M),
#   SB_SLO (p99<=500ms), UNIFORM (0; 1: evenly spaced arrivals, --uniform),
#   OLTP_BACKING (OUT_DIR: where the loop devices' files live; on the disk under test),
#   FID_KEEP_IMAGES (0; 1: keep those files for the next run), SLOWW_IOPS (400) and the
#   drives' other settings (tests/bench/fidelity_drives.sh).
# Needs root (zram, loop devices, cgroups v1, drop_caches) and jq. Not run by ctest.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
APPSIM=$(realpath -m "${APPSIM:-$HERE/../../build/appsim}")
POINTS=${POINTS:-25,50,75,90,100,110} WARMUP=${WARMUP:-5s} DURATION=${DURATION:-30s}
DURATION_SLOWW=${DURATION_SLOWW:-60s}
REFINE=${REFINE:-2} THREADS=${THREADS:-8} UNIFORM=${UNIFORM:-0}
TPCC_SCALE=${TPCC_SCALE:-2} TPCC_BUFFER=${TPCC_BUFFER:-32M} TPCC_SLO=${TPCC_SLO:-p99<=1s}
SB_TABLES=${SB_TABLES:-4} SB_ROWS=${SB_ROWS:-100000} SB_BUFFER=${SB_BUFFER:-16M}
SB_SLO=${SB_SLO:-p99<=500ms}
drives=ram,disk,sloww workloads=tpcc,sysbench
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 1 ]; do
  case $1 in
  --drives) drives=$2 ;; --workloads) workloads=$2 ;;
  *) usage ;;
  esac
  shift 2
done
[ $# -eq 1 ] || usage
case $1 in -*) usage ;; esac
OUT=$(realpath -m "$1")
[ -x "$APPSIM" ] || { echo "no appsim binary at $APPSIM: build it (scripts/build.sh) or set APPSIM" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "needs root: zram, loop devices, cgroups, drop_caches" >&2; exit 2; }
for c in jq losetup mkfs.ext4; do
  command -v $c >/dev/null || { echo "needs $c (apt-get install jq util-linux e2fsprogs)" >&2; exit 2; }
done
if [ ! -d /sys/fs/cgroup/blkio ] || [ ! -d /sys/fs/cgroup/memory ]; then
  echo "needs cgroup v1 blkio and memory hierarchies under /sys/fs/cgroup (the drives' caps)" >&2
  exit 2
fi
[[ $THREADS =~ ^[1-9][0-9]*$ && $REFINE =~ ^[0-9]+$ && $UNIFORM =~ ^[01]$ ]] ||
  { echo "THREADS is a whole number, 1 or more; REFINE 0 or more; UNIFORM 0 or 1" >&2; exit 2; }
[[ $TPCC_BUFFER =~ ^[1-9][0-9]*[MG]$ && $SB_BUFFER =~ ^[1-9][0-9]*[MG]$ ]] ||
  { echo "TPCC_BUFFER and SB_BUFFER are sizes in M or G (32M)" >&2; exit 2; }
IFS=, read -r -a D <<<"$drives"
IFS=, read -r -a W <<<"$workloads"
for w in "${W[@]}"; do
  case $w in tpcc | sysbench) ;; *) echo "unknown workload '$w' (tpcc, sysbench)" >&2; exit 2 ;; esac
done
# shellcheck source=tests/bench/fidelity_drives.sh
. "$HERE/fidelity_drives.sh"
for d in "${D[@]}"; do
  case " $FID_DRIVES_ALL " in *" $d "*) ;; *) echo "unknown drive '$d' ($FID_DRIVES_ALL)" >&2; exit 2 ;; esac
done
# Cgroups of this harness's own, so that it never moves the fidelity harness's limits.
FID_CG_BLKIO=/sys/fs/cgroup/blkio/appsim-oltp-curves
FID_CG_MEM=/sys/fs/cgroup/memory/appsim-oltp-curves

mkdir -p "$OUT"
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  drives_teardown
  drives_cgroups_remove
}
trap cleanup EXIT
trap 'exit 130' INT TERM
BACKING=${OLTP_BACKING:-$OUT}
drives_setup "$BACKING" "$OUT/mnt"
MACHINE="$(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, $(uname -sr), $(findmnt -no FSTYPE --target "$BACKING") on $(lsblk -ndo NAME,MODEL "$(findmnt -no SOURCE --target "$BACKING")" 2>/dev/null | xargs || echo '?')"

# write_meta: OUT/meta.json, the page's heading figures (rewritten at each start, so the
# date is that of the last pass; the results keep their own started_at).
write_meta() {
  local descs='{}' d
  for d in "${D[@]}"; do
    descs=$(jq -c --arg d "$d" --arg t "$(drive_describe "$d")" '. + {($d): $t}' <<<"$descs")
  done
  jq -n --arg date "$(date -u '+%F %H:%M UTC')" --arg machine "$MACHINE" --argjson drives "$descs" \
    --arg order "${drives}" --arg points "$POINTS" --arg warm "$WARMUP" --arg dur "$DURATION" --arg dur_sloww "$DURATION_SLOWW" \
    --argjson refine "$REFINE" --argjson threads "$THREADS" --argjson uniform "$UNIFORM" \
    --argjson scale "$TPCC_SCALE" --arg tbuf "$TPCC_BUFFER" --arg tslo "$TPCC_SLO" \
    --argjson sbt "$SB_TABLES" --argjson sbr "$SB_ROWS" --arg sbuf "$SB_BUFFER" --arg sslo "$SB_SLO" \
    '{date: $date, machine: $machine, drive_order: ($order | split(",")), drives: $drives,
      curve_points: $points, point_warmup: $warm, point_duration: $dur, point_duration_sloww: $dur_sloww, slo_refine: $refine,
      threads: $threads, arrivals: (if $uniform == 1 then "uniform" else "exponential" end),
      tpcc: {scale: $scale, buffer: $tbuf, slo: $tslo, limits: "TPC-C 90th-percentile limits per type and \($tslo)"},
      sysbench: {workload: "oltp_read_write", engine: "sqlite", tables: $sbt, table_size: $sbr,
                 rand_type: "special", buffer: $sbuf, slo: $sslo},
      command: "sudo tests/bench/oltp_curves.sh OUT_DIR"}' >"$OUT/meta.json"
}
write_meta

# complete FILE: a curve result not cut short by a signal or a storage fault.
complete() {
  [ -s "$1" ] && jq -e '(.interrupted | not) and (.failed | not) and ((.curve.points // []) | length) > 1' \
    "$1" >/dev/null 2>&1
}

# in_cgroups LOG CMD...: CMD in the drive's cgroups (made by drive_cgroups), output to LOG.
in_cgroups() {
  local log=$1
  shift
  sh -c 'echo $$ >"$1/cgroup.procs"; echo $$ >"$2/cgroup.procs"; shift 2; exec "$@"' sh \
    "$FID_CG_BLKIO" "$FID_CG_MEM" "$@" >"$log" 2>&1
}

# mebibytes SIZE: 32M -> 32, 1G -> 1024 (the memory limit's arithmetic).
mebibytes() {
  case $1 in
  *G) echo $((${1%G} * 1024)) ;;
  *) echo "${1%M}" ;;
  esac
}

# curve WORKLOAD DRIVE: prepares the drive's database (outside the cgroups: the load is
# not measured, and on sloww it would take minutes) and runs the curve in them.
curve() {
  local wl=$1 drive=$2 fs out t buf dur=$DURATION
  [ "$drive" != sloww ] || dur=$DURATION_SLOWW
  fs=$(drive_fs "$drive")
  out=$OUT/$wl-$drive.json
  if complete "$out"; then
    echo "$(date +%T) $wl on $drive: kept $out" >&2
    return 0
  fi
  rm -f "$out"
  t=$fs/curves-$drive/$wl
  mkdir -p "$(dirname "$t")"
  local curve_args=(--curve --curve-points "$POINTS" --point-warmup "$WARMUP" --point-duration "$dur"
    --slo-refine "$REFINE" --keep-free 64M --quiet --json "$out")
  [ "$UNIFORM" != 1 ] || curve_args+=(--uniform)
  local args
  if [ "$wl" = tpcc ]; then
    echo "$(date +%T) tpcc on $drive: prepare (scale $TPCC_SCALE, pristine copy kept)" >&2
    "$APPSIM" tpcc prepare --target "$t" --scale "$TPCC_SCALE" --keep-pristine --keep-free 64M --quiet \
      >"$out.prepare.log" 2>&1 || { echo "tpcc prepare failed: $out.prepare.log" >&2; tail -5 "$out.prepare.log" >&2; return 1; }
    buf=$TPCC_BUFFER
    args=(tpcc run --target "$t" --scale "$TPCC_SCALE" --keep-pristine --vusers "$THREADS" --connections "$THREADS"
      --pacing off --buffer "$buf" --slo "$TPCC_SLO")
  else
    echo "$(date +%T) sysbench on $drive: prepare ($SB_TABLES x $SB_ROWS rows)" >&2
    rm -rf "$t"
    "$APPSIM" sysbench prepare --target "$t" --engine sqlite --tables "$SB_TABLES" --table-size "$SB_ROWS" \
      --keep-free 64M --quiet >"$out.prepare.log" 2>&1 ||
      { echo "sysbench prepare failed: $out.prepare.log" >&2; tail -5 "$out.prepare.log" >&2; return 1; }
    buf=$SB_BUFFER
    args=(sysbench run --target "$t" --engine sqlite --tables "$SB_TABLES" --table-size "$SB_ROWS"
      --workload oltp_read_write --rand-type special --threads "$THREADS" --buffer "$buf" --slo "$SB_SLO")
  fi
  drop_cache
  drive_cgroups "$drive" $((($(mebibytes "$buf") + 512) * 1048576))
  echo "$(date +%T) $wl on $drive: curve (points $POINTS, $WARMUP + $dur each)" >&2
  local rc=0
  in_cgroups "$out.log" "$APPSIM" "${args[@]}" "${curve_args[@]}" || rc=$?
  if [ $rc -ne 0 ]; then
    echo "appsim exited $rc on $wl $drive: $out.log" >&2
    tail -5 "$out.log" >&2
    [ $rc -ne 130 ] && [ $rc -ne 143 ] || exit $rc
    return 1
  fi
  jq -r '"  max \(.curve.max_tps | . * 10 | round / 10) TPS, service level \(.service_level.tps // "none")"' "$out" >&2
}

failed=0
for wl in "${W[@]}"; do
  for d in "${D[@]}"; do curve "$wl" "$d" || failed=1; done
done
echo "results: $OUT (tests/bench/oltp_curves_report.py $OUT)" >&2
exit $failed
