#!/usr/bin/env bash
# tests/bench/fidelity.sh: does appsim rank drives as PostgreSQL and InnoDB do, and does
# it ask the drive for the same I/O per transaction? (docs/fidelity.md)
# For each workload (sysbench oltp_read_write; TPC-C: Percona-Lab's sysbench-tpcc for the
# servers, `appsim tpcc` for appsim), each drive (tests/bench/fidelity_drives.sh), each
# engine (tests/bench/fidelity_engines.sh) and each regime:
#   1  saturation: FID_THREADS closed-loop clients without think time;
#   2  the same offered load for every engine: --rate (open loop, latency from the
#      arrival, queueing included) for the servers' sysbench and for appsim
# it restores a pristine copy of the data (loaded once per engine and filesystem), drops
# the page cache, starts the engine in the drive's cgroups with a buffer of RATIO x its
# own data set, warms up WARMUP seconds and measures DURATION seconds: TPS, mean and
# p99 latency, the drive's reads, writes, bytes and flushes per transaction from
# /proc/diskstats of the drive's own device (appsim: its result's device_io), and the
# cores the machine kept busy over the measured phase (/proc/stat: the engine, its client
# and the kernel's I/O threads; appsim's own process is recorded beside it): with nearly
# all of them busy, a run is bound by the CPU, not the drive. With
# --io-ratios, regime-1 runs on the disk at more cache ratios add the per-transaction
# I/O at those ratios, and every disk run also records the sizes of its reads and writes
# (`appsim trace capture` of the device over the measured phase).
# One JSON line per run goes to OUT/results.jsonl (appended: a run already there is
# skipped, so an interrupted harness resumes); tests/bench/fidelity_report.py turns the
# file into docs/fidelity.md.
# usage: sudo SYSBENCH_TPCC=DIR tests/bench/fidelity.sh [options] OUT_DIR
#   --workloads LIST  tpcc,sysbench            --drives LIST  ram,disk,slowr,sloww,bw,qd4
#   --engines LIST    postgres,innodb,appsim,appsim-lmdb (appsim-lmdb: sysbench only)
#   --regimes LIST    1,2                      --ratio X      cache ratio (0.144)
#   --io-ratios LIST  extra cache ratios for the per-transaction I/O on the disk (0.5)
# Environment: DURATION (30), WARMUP (10), WARMUP2 (30: regime 2's warm-up; at the low
#   offered rate a cold cache fills slowly, and its misses would count as the drive's),
#   RATE_TPCC (12), RATE_SYSBENCH (20), APPSIM
#   (build/appsim), SYSBENCH_TPCC (../shared/peers/sysbench-tpcc), FID_BACKING (OUT_DIR:
#   where the loop devices' files live; on the disk under test), FID_KEEP_IMAGES (1: keep
#   those files, with the data loaded on them, for the next run), and the drives' and
#   engines' own settings (see their files).
# Needs root, sysbench, postgresql-15, mariadb-server, jq. Not run by ctest.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
APPSIM=$(realpath "${APPSIM:-$HERE/../../build/appsim}")
SYSBENCH_TPCC=$(realpath "${SYSBENCH_TPCC:-$HERE/../../../shared/peers/sysbench-tpcc}")
DURATION=${DURATION:-30} WARMUP=${WARMUP:-10} WARMUP2=${WARMUP2:-30}
RATE_TPCC=${RATE_TPCC:-12} RATE_SYSBENCH=${RATE_SYSBENCH:-20}
workloads=tpcc,sysbench engines=postgres,innodb,appsim,appsim-lmdb drives=ram,disk,slowr,sloww,bw,qd4
regimes=1,2 ratio=0.144 io_ratios=0.5
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 1 ]; do
  case $1 in
  --workloads) workloads=$2 ;; --engines) engines=$2 ;; --drives) drives=$2 ;;
  --regimes) regimes=$2 ;; --ratio) ratio=$2 ;; --io-ratios) io_ratios=$2 ;;
  *) usage ;;
  esac
  shift 2
done
[ $# -eq 1 ] || usage
OUT=$(realpath -m "$1")
[ "$(id -u)" -eq 0 ] || { echo "needs root: zram, loop devices, cgroups, drop_caches" >&2; exit 2; }
for c in sysbench jq psql mariadbd runuser losetup; do
  command -v $c >/dev/null || { echo "needs $c (apt-get install sysbench jq postgresql-15 mariadb-server)" >&2; exit 2; }
done
[ -f "$SYSBENCH_TPCC/tpcc.lua" ] || { echo "no sysbench-tpcc at $SYSBENCH_TPCC: set SYSBENCH_TPCC" >&2; exit 2; }
[ -x "$APPSIM" ] || { echo "no appsim binary at $APPSIM: build it (scripts/build.sh) or set APPSIM" >&2; exit 2; }
[[ $DURATION =~ ^[1-9][0-9]*$ && $WARMUP =~ ^[1-9][0-9]*$ && $WARMUP2 =~ ^[1-9][0-9]*$ ]] ||
  { echo "DURATION, WARMUP and WARMUP2 are whole seconds, 1 or more" >&2; exit 2; }
warmup_of() { if [ "$1" = 2 ]; then echo "$WARMUP2"; else echo "$WARMUP"; fi; }
# shellcheck source=tests/bench/fidelity_drives.sh
. "$HERE/fidelity_drives.sh"
# shellcheck source=tests/bench/fidelity_engines.sh
. "$HERE/fidelity_engines.sh"

mkdir -p "$OUT/logs"
RESULTS=$OUT/results.jsonl
touch "$RESULTS"
cleanup() {
  server_stop postgres "$FID_ROOT/ram/run/data" 2>/dev/null || true
  server_stop postgres "$FID_ROOT/disk/run/data" 2>/dev/null || true
  server_stop postgres "$FID_ROOT/qd/run/data" 2>/dev/null || true
  server_stop innodb x 2>/dev/null || true
  drives_teardown
  drives_cgroups_remove
}
trap cleanup EXIT
trap 'exit 130' INT TERM
drives_setup "${FID_BACKING:-$OUT}" "$OUT/mnt"
MACHINE="$(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, $(uname -sr), $(findmnt -no FSTYPE --target "${FID_BACKING:-$OUT}") on $(lsblk -ndo NAME,MODEL "$(findmnt -no SOURCE --target "${FID_BACKING:-$OUT}")" 2>/dev/null | xargs || echo '?')"

# pristine ENGINE WORKLOAD FS: the loaded data's directory on FS, loaded on first use
# (PostgreSQL and InnoDB load on the disk and are copied to the other filesystems).
pristine() {
  local eng=$1 wl=$2 fs=$3 p=$3/pristine/$1-$2
  if [ ! -f "$p/data_bytes" ]; then
    rm -rf "$p"
    local first=$FID_ROOT/disk/pristine/$eng-$wl
    if [ "$fs" != "$FID_ROOT/disk" ] && [ -f "$first/data_bytes" ]; then
      mkdir -p "$fs/pristine"; cp -a "$first" "$p"
    else
      echo "loading $eng $wl on $fs" >&2
      engine_prepare "$eng" "$wl" "$p"
    fi
  fi
  echo "$p"
}

# The last report of a sysbench run (after --report-checkpoints): "tps mean p99 count errors".
sysbench_figures() {
  awk '/transactions:/ {n = $2; tps = $3; gsub(/[(]/, "", tps)} /ignored errors:/ {err = $3}
       /avg:/ {mean = $2} /99th percentile:/ {p99 = $3}
       END {print tps, mean, p99, n, err}' "$1"
}

# capture_start DEV SUMMARY_JSON: records DEV's requests over the measured phase in the
# background (`appsim trace capture`); the caller takes $! and waits for it.
capture_start() {
  "$APPSIM" trace capture --device "/dev/$1" -o "$OUT/logs/cap.trace" --force --duration "${DURATION}s" \
    --quiet --json "$2" >/dev/null 2>&1 &
}

# capture_sizes SUMMARY_JSON: the captured requests' size histogram (`appsim trace info`),
# or null when nothing was captured; removes the trace.
capture_sizes() {
  local sizes=null
  if [ -f "$1" ]; then
    "$APPSIM" trace info "$OUT/logs/cap.trace" --json "$OUT/logs/info.json" >/dev/null 2>&1 &&
      sizes=$(jq -c '.sizes // null' "$OUT/logs/info.json" 2>/dev/null || echo null)
    rm -f "$OUT/logs/cap.trace"
  fi
  echo "$sizes"
}

# run_server ENGINE WORKLOAD DRIVE REGIME RATIO: one run of a server; prints its record.
run_server() {
  local eng=$1 wl=$2 drive=$3 regime=$4 r=$5 fs dev p db=sbtest slack
  fs=$(drive_fs "$drive"); dev=$(drive_dev "$drive")
  [ "$wl" = tpcc ] && db=tpcc
  p=$(pristine "$eng" "$wl" "$fs")
  rm -rf "$fs/run"; cp -a "$p" "$fs/run"
  local data mb; data=$(cat "$fs/run/data_bytes")
  mb=$(awk -v d="$data" -v r="$r" 'BEGIN {m = int(d * r / 1048576 + 0.5); print (m < 8 ? 8 : m)}')
  slack=$PG_SLACK_MB; [ "$eng" = innodb ] && slack=$MY_SLACK_MB
  drop_cache
  drive_cgroups "$drive" $(((mb + slack) * 1048576))
  FID_IN_CGROUP=1 server_start "$eng" "$fs/run/data" "$mb"
  local log=$OUT/logs/$eng-$wl-$drive-r$regime-$r.log rate=()
  if [ "$regime" = 2 ]; then
    if [ "$wl" = tpcc ]; then rate=(--rate="$RATE_TPCC"); else rate=(--rate="$RATE_SYSBENCH"); fi
  fi
  local warm; warm=$(warmup_of "$regime")
  # shellcheck disable=SC2046
  (cd "$SYSBENCH_TPCC" && exec sysbench $(sb_shape "$wl") $(sb_conn "$eng" $db) --threads="$FID_THREADS" \
    "${rate[@]}" --time=$((warm + DURATION)) --report-checkpoints="$warm" --percentile=99 \
    --report-interval=0 run) >"$log" 2>&1 &
  local pid=$! s0 s1 t0 t1 c0 c1 cap=() capj=$OUT/logs/$eng-$wl-$drive-r$regime-$r.capture.json
  sleep "$warm"
  s0=$(diskstats "$dev"); t0=$(date +%s%N); c0=$(cpu_jiffies)
  if [ "$drive" = disk ] && [ "$regime" = 1 ]; then capture_start "$dev" "$capj"; cap=($!); fi
  wait "$pid" || { echo "sysbench failed: $log" >&2; tail -5 "$log" >&2; server_stop "$eng" "$fs/run/data"; return 1; }
  s1=$(diskstats "$dev"); t1=$(date +%s%N); c1=$(cpu_jiffies)
  [ ${#cap[@]} -eq 0 ] || wait "${cap[0]}" || true
  local cache rss fail
  cache=$(awk '$1 == "total_cache" {print $2}' "$FID_CG_MEM/memory.stat")
  rss=$(awk '$1 == "total_rss" {print $2}' "$FID_CG_MEM/memory.stat")
  fail=$(cat "$FID_CG_MEM/memory.failcnt")
  server_stop "$eng" "$fs/run/data"
  if grep -q -E 'terminated by signal|Killed|out of memory' "$fs/run/postgres.log" "$fs/run/mariadb.log" 2>/dev/null; then
    echo "$eng died during the run (see $fs/run/*.log; memory cgroup $((mb + slack)) MiB): run not recorded" >&2
    return 1
  fi
  local sizes; sizes=$(capture_sizes "$capj")
  read -r tps mean p99 n err <<<"$(sysbench_figures "$log")"
  read -r a_r a_rs a_w a_ws a_f _ <<<"$s0"
  read -r b_r b_rs b_w b_ws b_f _ <<<"$s1"
  jq -nc --arg eng "$eng" --arg wl "$wl" --arg drive "$drive" --argjson regime "$regime" --argjson ratio "$r" \
    --argjson data "$data" --argjson buf $((mb * 1048576)) --argjson limit $(((mb + slack) * 1048576)) \
    --argjson tps "$tps" --argjson mean "$mean" --argjson p99 "$p99" --argjson n "$n" --argjson err "${err:-0}" \
    --argjson secs "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", (b - a) / 1e9}')" \
    --argjson rd $((b_r - a_r)) --argjson rb $(((b_rs - a_rs) * 512)) --argjson wr $((b_w - a_w)) \
    --argjson wb $(((b_ws - a_ws) * 512)) --argjson fl $((b_f - a_f)) --argjson sizes "$sizes" \
    --argjson cache "${cache:-0}" --argjson rss "${rss:-0}" --argjson fail "${fail:-0}" \
    --arg offered "${rate[*]:-}" --argjson cores_busy "$(cores_busy "$c0" "$c1")" --argjson cores "$(nproc)" \
    '{engine: $eng, workload: $wl, drive: $drive, regime: $regime, cache_ratio: $ratio,
      data_bytes: $data, buffer_bytes: $buf, memory_limit_bytes: $limit,
      offered_tps: (if $offered == "" then null else ($offered | sub("--rate="; "") | tonumber) end),
      tps: $tps, mean_ms: $mean, p99_ms: $p99, transactions: $n, errors: $err,
      device: {seconds: $secs, reads: $rd, read_bytes: $rb, writes: $wr, write_bytes: $wb, flushes: $fl},
      per_txn: {reads: ($rd / $n), read_bytes: ($rb / $n), writes: ($wr / $n), write_bytes: ($wb / $n), flushes: ($fl / $n)},
      cpu: {cores_busy: $cores_busy, cores: $cores, of: "machine"},
      io_sizes: $sizes, page_cache_at_end_bytes: $cache, rss_at_end_bytes: $rss, memory_limit_hits: $fail}'
}

# run_appsim ENGINE WORKLOAD DRIVE REGIME RATIO: one run of appsim; prints its record.
run_appsim() {
  local eng=$1 wl=$2 drive=$3 regime=$4 r=$5 fs dev
  fs=$(drive_fs "$drive"); dev=$(drive_dev "$drive")
  # appsim refuses a copied database (its manifest names the inode it created), so each
  # run loads afresh: seconds at these sizes.
  rm -rf "$fs/run"
  engine_prepare "$eng" "$wl" "$fs/run"
  local data buf; data=$(cat "$fs/run/data_bytes")
  buf=$(awk -v d="$data" -v r="$r" 'BEGIN {b = int(d * r / 1048576 + 0.5); print (b < 8 ? 8 : b)}')
  drop_cache
  # SQLite reads and writes with O_DIRECT (no page cache to bound); LMDB's --buffer is
  # its own memory cgroup, made by appsim.
  drive_cgroups "$drive" $(((buf + 512) * 1048576))
  local out=$OUT/logs/$eng-$wl-$drive-r$regime-$r.json args
  if [ "$wl" = tpcc ]; then
    args=(tpcc run --target "$fs/run/t" --keep-free 64M --scale "$TPCC_SCALE" --connections "$FID_THREADS" --buffer "${buf}M")
    args+=(--vusers "$FID_THREADS")
    if [ "$regime" = 1 ]; then args+=(--pacing off); else args+=(--rate "$RATE_TPCC"); fi
  else
    local e=sqlite; [ "$eng" = appsim ] || e=lmdb
    args=(sysbench run --target "$fs/run/t" --keep-free 64M --engine $e --tables "$SB_TABLES" --table-size "$SB_ROWS"
      --threads "$FID_THREADS" --rand-type special --buffer "${buf}M")
    [ "$regime" = 1 ] || args+=(--rate "$RATE_SYSBENCH")
  fi
  args+=(--duration "${DURATION}s" --warmup "$(warmup_of "$regime")s" --quiet --json "$out")
  local cap=() capj=$OUT/logs/$eng-$wl-$drive-r$regime-$r.capture.json
  sh -c 'echo $$ >"$1/cgroup.procs"; echo $$ >"$2/cgroup.procs"; shift 2; exec "$@"' sh \
    "$FID_CG_BLKIO" "$FID_CG_MEM" "$APPSIM" "${args[@]}" >"$out.log" 2>&1 &
  local pid=$! c0 c1
  sleep "$(warmup_of "$regime")"
  c0=$(cpu_jiffies)
  if [ "$drive" = disk ] && [ "$regime" = 1 ]; then
    capture_start "$dev" "$capj"
    cap=($!)
  fi
  wait "$pid" || { echo "appsim failed: $out.log" >&2; tail -5 "$out.log" >&2; return 1; }
  c1=$(cpu_jiffies)
  [ ${#cap[@]} -eq 0 ] || wait "${cap[0]}" || true
  local sizes; sizes=$(capture_sizes "$capj")
  local offered=null
  if [ "$regime" = 2 ]; then
    if [ "$wl" = tpcc ]; then offered=$RATE_TPCC; else offered=$RATE_SYSBENCH; fi
  fi
  jq -c --arg eng "$eng" --arg wl "$wl" --arg drive "$drive" --argjson regime "$regime" --argjson ratio "$r" \
    --argjson data "$data" --argjson buf $((buf * 1048576)) --argjson offered "$offered" --argjson sizes "$sizes" \
    --argjson cores "$(nproc)" --argjson machine_busy "$(cores_busy "$c0" "$c1")" \
    '.device_io as $d | .summary as $s |
     {engine: $eng, workload: $wl, drive: $drive, regime: $regime, cache_ratio: $ratio,
      data_bytes: $data, buffer_bytes: $buf, memory_limit_bytes: null, offered_tps: $offered,
      tps: $s.tps, mean_ms: ($s.latency_us.mean_us / 1000), p99_ms: ($s.latency_us.p99_us / 1000),
      transactions: $s.count, errors: $s.errors,
      device: {seconds: $d.seconds, reads: $d.reads, read_bytes: $d.read_bytes, writes: $d.writes,
               write_bytes: $d.write_bytes, flushes: $d.flushes},
      per_txn: {reads: ($d.reads / $s.count), read_bytes: ($d.read_bytes / $s.count),
                writes: ($d.writes / $s.count), write_bytes: ($d.write_bytes / $s.count),
                flushes: (($d.flushes // 0) / $s.count)},
      cpu: {cores_busy: $machine_busy, cores: $cores, of: "machine", appsim_process: .cpu.cores_busy},
      io_sizes: $sizes, appsim_cache: .cache}' "$out"
}

# run WORKLOAD DRIVE ENGINE REGIME RATIO: one run unless results.jsonl has it.
run() {
  local wl=$1 drive=$2 eng=$3 regime=$4 r=$5 rec
  if jq -c --arg e "$eng" --arg w "$wl" --arg d "$drive" --argjson g "$regime" --argjson r "$r" \
    'select(.engine == $e and .workload == $w and .drive == $d and .regime == $g and .cache_ratio == $r)' \
    "$RESULTS" | grep -q .; then
    return 0
  fi
  [ "$eng" != appsim-lmdb ] || [ "$wl" = sysbench ] || return 0
  echo "$(date +%T) $wl $drive $eng regime $regime ratio $r" >&2
  drive_cgroups "$drive" $((1 << 40))
  case $eng in
  postgres | innodb) rec=$(run_server "$eng" "$wl" "$drive" "$regime" "$r") || return 0 ;;
  *) rec=$(run_appsim "$eng" "$wl" "$drive" "$regime" "$r") || return 0 ;;
  esac
  jq -c --arg date "$(date -u +%F)" --arg machine "$MACHINE" --arg drive_desc "$(drive_describe "$drive")" \
    --argjson dur "$DURATION" --argjson warm "$(warmup_of "$regime")" --argjson threads "$FID_THREADS" \
    --arg shape "$(sb_shape "$wl")" \
    '. + {date: $date, machine: $machine, drive_description: $drive_desc, duration_s: $dur, warmup_s: $warm,
          threads: $threads, sysbench_shape: $shape}' <<<"$rec" >>"$RESULTS"
  jq -r '"  \(.tps) TPS, mean \(.mean_ms) ms, p99 \(.p99_ms) ms; per transaction \(.per_txn.reads | . * 100 | round / 100) reads, \(.per_txn.writes | . * 100 | round / 100) writes, \(.per_txn.flushes | . * 1000 | round / 1000) flushes"' <<<"$rec" >&2
}

IFS=, read -r -a W <<<"$workloads"; IFS=, read -r -a E <<<"$engines"
IFS=, read -r -a D <<<"$drives"; IFS=, read -r -a G <<<"$regimes"; IFS=, read -r -a IR <<<"$io_ratios"
for wl in "${W[@]}"; do
  for g in "${G[@]}"; do
    for d in "${D[@]}"; do
      for e in "${E[@]}"; do run "$wl" "$d" "$e" "$g" "$ratio"; done
    done
  done
  for ir in "${IR[@]}"; do
    [ -n "$ir" ] || continue
    for e in "${E[@]}"; do run "$wl" disk "$e" 1 "$ir"; done
  done
done
echo "results: $RESULTS (tests/bench/fidelity_report.py $RESULTS > docs/fidelity.md)" >&2
