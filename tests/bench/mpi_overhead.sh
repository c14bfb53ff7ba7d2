#!/usr/bin/env bash
# The cost of running appsim's ranks under MPI (docs/mpi.md): the same sysbench run on
# the same 4 targets, once as a 4-rank job (mpirun -np 4, one merged result) and once as
# 4 separate appsim processes started by hand at the same moment (their TPS summed),
# rounds alternating the two. Reported per round: the job's TPS, the sum of the 4
# processes' TPS, and their ratio; then the mean ratio.
# Usage: tests/bench/mpi_overhead.sh [DIR] [SECONDS] [ROUNDS]
#   ENGINE (sqlite), WORKLOAD (oltp_read_write), TABLE_SIZE (20000), THREADS (2),
#   CPUS (the CPU list every process is held to with taskset; default 0).
# Needs: mpirun, python3. Not run by ctest. Prints the load average before each round:
# on a shared machine compare the two lines of one round.
set -euo pipefail
cd "$(dirname "$0")/../.."
APPSIM=$(realpath "${APPSIM:-build/appsim}")
DIR=${1:-/tmp/appsim-bench-mpi}
SECONDS_=${2:-20}
ROUNDS=${3:-3}
ENGINE=${ENGINE:-sqlite}
WORKLOAD=${WORKLOAD:-oltp_read_write}
CPUS=${CPUS:-0}
command -v mpirun >/dev/null || { echo "mpirun is needed (apt-get install openmpi-bin)" >&2; exit 2; }
mkdir -p "$DIR"
PIN=(taskset -c "$CPUS" nice -n 5)
COMMON=(--engine "$ENGINE" --workload "$WORKLOAD" --tables 1 --table-size "${TABLE_SIZE:-20000}"
        --threads "${THREADS:-2}" --warmup 3 --time "$SECONDS_" --quiet)
for r in 0 1 2 3; do
  mkdir -p "$DIR/t$r"
  "${PIN[@]}" "$APPSIM" sysbench cleanup --engine "$ENGINE" --target "$DIR/t$r" >/dev/null 2>&1 || true
  "${PIN[@]}" "$APPSIM" sysbench prepare --engine "$ENGINE" --target "$DIR/t$r" --tables 1 \
    --table-size "${TABLE_SIZE:-20000}" --quiet >/dev/null
done
tps() { python3 -c 'import json,sys; print(sum(json.load(open(f))["summary"]["tps"] for f in sys.argv[1:]))' "$@"; }
echo "round  load-avg  mpi-4-ranks-tps  4-processes-tps  ratio"
ratios=()
for i in $(seq "$ROUNDS"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  job() {
    "${PIN[@]}" mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 "$APPSIM" \
      sysbench run --target "$DIR/t{rank}" "${COMMON[@]}" --json "$DIR/mpi.json" >/dev/null
  }
  by_hand() {
    local pids=() r
    for r in 0 1 2 3; do
      "${PIN[@]}" "$APPSIM" sysbench run --target "$DIR/t$r" "${COMMON[@]}" \
        --json "$DIR/solo$r.json" >/dev/null &
      pids+=($!)
    done
    wait "${pids[@]}"
  }
  # Odd rounds start with the job, even ones with the processes: the databases change
  # from run to run (oltp_read_write), so neither always comes first.
  if [ $((i % 2)) = 1 ]; then job; by_hand; else by_hand; job; fi
  a=$(tps "$DIR/mpi.json")
  b=$(tps "$DIR"/solo{0,1,2,3}.json)
  ratio=$(python3 -c "print(f'{$a / $b:.4f}')")
  ratios+=("$ratio")
  printf "%5d  %8s  %15.1f  %15.1f  %s\n" "$i" "$load" "$a" "$b" "$ratio"
done
python3 -c "import sys; r=[float(x) for x in sys.argv[1:]]; print(f'mean ratio {sum(r)/len(r):.4f} over {len(r)} rounds (1 = no overhead)')" "${ratios[@]}"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
