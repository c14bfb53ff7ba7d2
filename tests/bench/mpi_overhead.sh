#!/usr/bin/env bash
# The cost of running appsim's ranks under MPI (docs/mpi.md): the same sysbench run on
# the same 4 targets, once as a 4-rank job (mpirun -np 4, one merged result) and once as
# 4 separate appsim processes started by hand at the same moment (their TPS summed),
# pairs alternating which goes first. Reported per pair: the load average, the job's
# TPS, the sum of the 4 processes' TPS, their ratio, the CPU time per transaction of
# each side (appsim's own cost, from the results' "cpu" sections: less sensitive than
# TPS to what else runs on the CPU) and the cores each side kept busy while measuring
# (summed over its 4 processes). On a CPU-bound run the TPS ratio is the product of the
# busy ratio (below 1: something else, such as mpirun's own processes, took the ranks'
# CPU) and the inverse of the CPU-per-transaction ratio (above 1: the ranks themselves
# spend more per transaction); then the distribution of the ratios.
# Usage: tests/bench/mpi_overhead.sh [DIR] [SECONDS] [PAIRS]
#   ENGINE (sqlite), WORKLOAD (oltp_read_write), TABLE_SIZE (20000), THREADS (2),
#   WARMUP (seconds, 3),
#   CPUS (the CPU list every appsim process is held to with taskset; default 0),
#   MPIRUN_CPUS (the CPU list of mpirun itself, its runtime daemon and PMIx server;
#     default CPUS: when it differs, mpirun starts each rank through taskset -c CPUS),
#   MPIRUN_ARGS (extra mpirun options, e.g. "--mca btl self,vader"),
#   HAND_LAUNCH=mpirun: the 4 processes of the other side are started by mpirun too,
#     with MPI's variables removed from their environment, so that each runs alone as a
#     plain process: the pair then differs only in the ranks being MPI processes, and
#     its ratio is the ranks' own cost, mpirun's share of the CPU left out,
#   MODE=together: both sides at the same time instead of one after the other, the job
#     on one set of 4 targets and the processes on another (the sets swapped from pair
#     to pair; the processes started HAND_DELAY s later, 2.5: MPI's start-up), so that
#     both meet the same load from the rest of the machine, run at the same speed of the
#     CPU (a shared VM's core changes speed from minute to minute) and each thread gets
#     the same share of the CPU; the TPS of each side is then counted
#     over the window in which all 8 processes were measuring (from the 1 s interval
#     series), and the ratio says what the job makes of the same share.
# Needs: mpirun, python3. Not run by ctest. On a shared machine compare the two sides of
# one pair, never figures of different pairs.
set -euo pipefail
cd "$(dirname "$0")/../.."
APPSIM=$(realpath "${APPSIM:-build/appsim}")
DIR=${1:-/tmp/appsim-bench-mpi}
SECONDS_=${2:-20}
PAIRS=${3:-3}
ENGINE=${ENGINE:-sqlite}
WORKLOAD=${WORKLOAD:-oltp_read_write}
CPUS=${CPUS:-0}
MPIRUN_CPUS=${MPIRUN_CPUS:-$CPUS}
read -r -a EXTRA <<<"${MPIRUN_ARGS:-}"
command -v mpirun >/dev/null || { echo "mpirun is needed (apt-get install openmpi-bin)" >&2; exit 2; }
mkdir -p "$DIR"
PIN=(taskset -c "$CPUS" nice -n 5)
COMMON=(--engine "$ENGINE" --workload "$WORKLOAD" --tables 1 --table-size "${TABLE_SIZE:-20000}"
        --threads "${THREADS:-2}" --warmup "${WARMUP:-3}" --time "$SECONDS_" --quiet)
MODE=${MODE:-alternate}
if [ "$MODE" = together ]; then COMMON+=(--report-interval 1); else COMMON+=(--report-interval 0); fi
# The targets: set 0 (DIR/s0/t0-3) for both sides one after the other; side by side,
# the job on one set and the processes on the other (set 1, DIR/s1/t0-3).
JOB_SET=0 HAND_SET=0
SETS=0
[ "$MODE" = together ] && SETS="0 1"
for set in $SETS; do
  for r in 0 1 2 3; do
    t="$DIR/s$set/t$r"
    mkdir -p "$t"
    "${PIN[@]}" "$APPSIM" sysbench cleanup --engine "$ENGINE" --target "$t" >/dev/null 2>&1 || true
    "${PIN[@]}" "$APPSIM" sysbench prepare --engine "$ENGINE" --target "$t" --tables 1 \
      --table-size "${TABLE_SIZE:-20000}" --quiet >/dev/null
  done
done
RANK_PIN=() # mpirun on other CPUs than the ranks: each rank is held to CPUS on its own
[ "$MPIRUN_CPUS" != "$CPUS" ] && RANK_PIN=(taskset -c "$CPUS")
job() {
  taskset -c "$MPIRUN_CPUS" nice -n 5 mpirun --allow-run-as-root --oversubscribe --bind-to none \
    "${EXTRA[@]}" -np 4 "${RANK_PIN[@]}" "$APPSIM" sysbench run --target "$DIR/s$JOB_SET/t{rank}" \
    "${COMMON[@]}" --json "$DIR/mpi.json" >/dev/null
}
# The other side under mpirun as 4 plain processes (HAND_LAUNCH=mpirun): the variables by
# which appsim knows it is a rank (sim/ranks.c) removed, each its own target and result.
plain_under_mpirun() {
  # shellcheck disable=SC2016 # expanded by the shell mpirun starts
  taskset -c "$MPIRUN_CPUS" nice -n 5 mpirun --allow-run-as-root --oversubscribe --bind-to none \
    "${EXTRA[@]}" -np 4 "${RANK_PIN[@]}" sh -c 'r=$OMPI_COMM_WORLD_RANK d=$1 h=$2; shift 2
      exec env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_SIZE -u SLURM_STEP_NUM_TASKS \
        -u PMIX_RANK -u PMI_RANK "$@" --target "$d/s$h/t$r" --json "$d/solo$r.json"' \
    sh "$DIR" "$HAND_SET" "$APPSIM" sysbench run "${COMMON[@]}" >/dev/null
}
by_hand() {
  [ "${HAND_LAUNCH:-}" = mpirun ] && { plain_under_mpirun; return; }
  local pids=() r
  for r in 0 1 2 3; do
    "${PIN[@]}" "$APPSIM" sysbench run --target "$DIR/s$HAND_SET/t$r" "${COMMON[@]}" \
      --json "$DIR/solo$r.json" >/dev/null &
    pids+=($!)
  done
  wait "${pids[@]}"
}
# MODE=together: the job, and the processes HAND_DELAY seconds later.
together() {
  job &
  local j=$!
  sleep "${HAND_DELAY:-2.5}"
  by_hand
  wait $j
}
# MODE=together: each side's TPS over the window in which all 8 were measuring, the
# window's length (s), and each side's CPU microseconds per transaction and cores busy
# over the window. A measured interval's place in time: the measured
# phase's start plus its start relative to the first measured interval.
common_window() {
  python3 - "$DIR/mpi.json" "$DIR"/solo{0,1,2,3}.json <<'EOF'
import json, sys
job = json.load(open(sys.argv[1]))["ranks"]
hand = [json.load(open(f)) for f in sys.argv[2:]]
def series(run):
    m = [iv for iv in run["intervals"] if iv["phase"] == "measure"]
    t0 = m[0]["t"] - m[0]["seconds"]
    s0 = run["measure"]["start_unix_ns"] / 1e9
    return [(s0 + iv["t"] - iv["seconds"] - t0, s0 + iv["t"] - t0, iv["count"],
             iv["cpu"]["user_s"] + iv["cpu"]["system_s"]) for iv in m]
runs = job + hand
lo = max(r["measure"]["start_unix_ns"] for r in runs) / 1e9
hi = min(r["measure"]["stop_unix_ns"] for r in runs) / 1e9
def count(side):  # transactions and CPU s inside [lo, hi], an interval cut by it pro rata
    n = cpu = 0.0
    for r in side:
        for a, b, c, s in series(r):
            if b > a:
                share = max(0.0, min(b, hi) - max(a, lo)) / (b - a)
                n, cpu = n + c * share, cpu + s * share
    return n, cpu
w = hi - lo
if w <= 1:
    print("nan nan nan nan nan nan nan"); sys.exit()
(na, ca), (nb, cb) = count(job), count(hand)
print(f"{na / w:.1f} {nb / w:.1f} {w:.1f} {ca * 1e6 / na:.1f} {cb * 1e6 / nb:.1f} {ca / w:.3f} "
      f"{cb / w:.3f}")
EOF
}
# TPS, CPU microseconds per transaction, the cores busy while measuring (summed over the
# side's processes) and how far apart (ms) the measured phases started, of one side.
side() {
  python3 - "$@" <<'EOF'
import json, sys
docs = [json.load(open(f)) for f in sys.argv[1:]]
runs = docs[0]["ranks"] if len(docs) == 1 else docs
tps = docs[0]["summary"]["tps"] if len(docs) == 1 else sum(d["summary"]["tps"] for d in docs)
cpu = sum(r["cpu"]["user_s"] + r["cpu"]["system_s"] for r in runs)
n = sum(r["summary"]["count"] for r in runs)
busy = sum(r["cpu"]["cores_busy"] for r in runs)
starts = [r["measure"]["start_unix_ns"] for r in runs]
print(f"{tps:.1f} {cpu * 1e6 / n:.1f} {busy:.3f} {(max(starts) - min(starts)) / 1e6:.0f}")
EOF
}
echo "pair  load-avg  mpi-4-ranks-tps  4-processes-tps  ratio   cpu-us/txn mpi  by-hand" \
  "  cores-busy mpi  by-hand  start-spread-ms mpi  by-hand"
ratios=() cpus=() busys=()
for i in $(seq "$PAIRS"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  # Odd pairs start with the job, even ones with the processes: the databases change
  # from run to run (oltp_read_write), so neither always comes first. Side by side, odd
  # pairs put the job on set 0, even ones on set 1.
  if [ "$MODE" = together ]; then
    JOB_SET=$(((i + 1) % 2)) HAND_SET=$((i % 2))
    together
  elif [ $((i % 2)) = 1 ]; then job; by_hand; else by_hand; job; fi
  read -r a ca ba sa <<<"$(side "$DIR/mpi.json")"
  read -r b cb bb sb <<<"$(side "$DIR"/solo{0,1,2,3}.json)"
  if [ "$MODE" = together ]; then
    read -r a b w ca cb ba bb <<<"$(common_window)"
    [ "$w" = nan ] && { echo "pair $i: the two sides' measured phases hardly overlap; skipped"; continue; }
    printf "      over the %s s in which all 8 processes were measuring:\n" "$w"
  fi
  ratio=$(python3 -c "print(f'{$a / $b:.4f}')")
  ratios+=("$ratio")
  cpus+=("$(python3 -c "print(f'{$ca / $cb:.4f}')")")
  busys+=("$(python3 -c "print(f'{$ba / $bb:.4f}')")")
  printf "%4d  %8s  %15.1f  %15.1f  %s  %14.1f  %7.1f  %14s  %7s  %19s  %7s\n" "$i" "$load" "$a" \
    "$b" "$ratio" "$ca" "$cb" "$ba" "$bb" "$sa" "$sb"
done
python3 - "${#ratios[@]}" "${ratios[@]}" "${cpus[@]}" "${busys[@]}" <<'EOF'
import statistics as st, sys
n = int(sys.argv[1])
for k, name in enumerate(("TPS ratio (job / by hand; 1 = no cost)",
                          "CPU per transaction ratio (job / by hand)",
                          "cores busy ratio (job / by hand)")):
    v = sorted(float(x) for x in sys.argv[2 + k * n:2 + (k + 1) * n])
    sd = st.stdev(v) if len(v) > 1 else 0.0
    print(f"{name}: mean {st.mean(v):.4f} median {st.median(v):.4f} stdev {sd:.4f} "
          f"(95 % CI of the mean +-{1.96 * sd / len(v) ** 0.5:.4f}) min {v[0]:.4f} "
          f"max {v[-1]:.4f} over {len(v)} pairs")
EOF
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
