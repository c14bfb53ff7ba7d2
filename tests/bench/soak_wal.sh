#!/usr/bin/env bash
# tests/bench/soak_wal.sh: a long SQLite run (tpcc or sysbench) watched for bounded
# logs, files and memory over hours. Runs appsim with the given arguments, samples
# every SAMPLE seconds the process's resident memory and the sizes of the database and
# WAL files in the target, and at the end prints:
#   - per database: the WAL bound, the WAL's maximum, restarts, writers held back, the
#     database and WAL file sizes at start and end (from the result);
#   - peak RSS over the run, RSS after WARM seconds and its growth from then to the end;
#   - TPS of the first and the last 5 measured minutes (from the result's intervals) and
#     their ratio.
# Usage: APPSIM=build/appsim tests/bench/soak_wal.sh OUTDIR TARGET_DIR -- appsim-args...
#   e.g. tests/bench/soak_wal.sh /tmp/soak /mnt/zram/tpcc -- tpcc run --target /mnt/zram/tpcc \
#          --scale 3 --vusers 30 --connections 8 --pacing off --buffer 160M --duration 30m
# The run's arguments must not include --json (the script sets it).
# Environment: SAMPLE (seconds, default 10), WARM (seconds, default 180).
set -euo pipefail
APPSIM=${APPSIM:-appsim}
SAMPLE=${SAMPLE:-10}
WARM=${WARM:-180}
[ $# -ge 3 ] && [ "$3" = "--" ] || {
    echo "usage: $0 OUTDIR TARGET_DIR -- appsim-args..." >&2
    exit 2
}
out=$1 target=$2
shift 3
command -v jq >/dev/null || { echo "jq is not installed" >&2; exit 2; }
mkdir -p "$out"
samples="$out/samples.tsv"
printf 't_s\trss_kb\thwm_kb\tdb_bytes\twal_bytes\n' >"$samples"

"$APPSIM" "$@" --json "$out/result.json" >"$out/run.log" 2>&1 &
pid=$!
start=$(date +%s)
sizes() { # total bytes of the target's database files and of their WALs
    local db=0 wal=0 f s
    for f in "$target"/*; do
        [ -f "$f" ] || continue
        s=$(stat -c %s "$f")
        case "$f" in
        *-wal) wal=$((wal + s)) ;;
        *.db) db=$((db + s)) ;;
        esac
    done
    printf '%s\t%s' "$db" "$wal"
}
while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
    hwm=$(awk '/^VmHWM/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$rss" ] && printf '%s\t%s\t%s\t%s\n' "$(($(date +%s) - start))" "$rss" "$hwm" \
        "$(sizes)" >>"$samples"
    sleep "$SAMPLE"
done
rc=0
wait "$pid" || rc=$?
echo "appsim exited with $rc (log: $out/run.log)"
[ -s "$out/result.json" ] || { tail -5 "$out/run.log"; exit 1; }

echo "== databases (from the result)"
jq -r '[.. | objects | select(has("checkpoint") and has("files"))] | unique[] |
  "WAL bound \(.checkpoint.wal_limit.limit_bytes // "none") B, max \(.checkpoint.wal_bytes_max) B" +
  " (within: \(.checkpoint.wal_limit.within_limit // "n/a")), restarts \(.checkpoint.wal_limit.wal_restarts // 0)," +
  " restart checkpoints \(.checkpoint.wal_limit.restart_checkpoints // 0) (max \(.checkpoint.wal_limit.restart_ms_max // 0) ms)," +
  " writers held \(.checkpoint.wal_limit.writers_held.count // 0) times (max \(.checkpoint.wal_limit.writers_held.ms_max // 0) ms);" +
  " database \(.files.database.start_bytes) -> \(.files.database.end_bytes) B, WAL file \(.files.wal.start_bytes) -> \(.files.wal.end_bytes) B"' \
    "$out/result.json"

echo "== memory (samples every ${SAMPLE} s: $samples)"
awk -v warm="$WARM" 'NR > 1 {
    if ($2 > peak) peak = $2
    if ($1 <= warm) at_warm = $2
    if ($1 > warm && $2 > after) after = $2
    last = $2
} END {
    printf "peak RSS %.1f MiB; RSS at %d s %.1f MiB, highest after it %.1f MiB, at the end %.1f MiB", \
        peak / 1024, warm, at_warm / 1024, after / 1024, last / 1024
    if (at_warm > 0 && after > 0) printf " (growth after %d s: %+.1f %%)", warm, (after - at_warm) * 100 / at_warm
    printf "\n"
}' "$samples"
awk 'NR > 1 { if ($5 > w) w = $5 } END { printf "largest WAL file total seen in the samples: %d B\n", w }' "$samples"

echo "== throughput (measured phase, from the result's intervals)"
jq -r '[.intervals[] | select(.phase == "measure")] as $m | ($m[0].t - $m[0].seconds) as $t0 |
  ($m[-1].t) as $t1 |
  def tps(f): ([$m[] | select(f)] | if length == 0 then null else
      ((map(.count) | add) / (map(.seconds) | add)) end);
  tps(.t - $t0 <= 300) as $first | tps(.t > $t1 - 300) as $last |
  "first 5 min \($first) TPS, last 5 min \($last) TPS, last / first \(if $first and $last then ($last / $first * 1000 | round / 1000) else "n/a" end)"' \
    "$out/result.json"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$rc"
