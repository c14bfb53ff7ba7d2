#!/usr/bin/env bash
# Builds every tests/fuzz/fuzz_*.c harness with clang + libFuzzer (the core instrumented
# with -fsanitize=fuzzer-no-link,address, see -DAPPSIM_FUZZ) in its own build directory,
# and runs each for SECONDS (default 20) on its seed corpus tests/fuzz/corpus/<harness>/,
# as many at once as there are cores.
# New inputs go to a scratch corpus, never into the source tree. Exits non-zero when a
# harness crashes, leaks or times out (the reproducer is kept under $BUILD_DIR/artifacts).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-20}
BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
if ! command -v clang >/dev/null; then
  echo "fuzz.sh: clang is needed (scripts/deps.sh installs it)" >&2
  exit 2
fi
harnesses=()
for src in tests/fuzz/fuzz_*.c; do
  [ -e "$src" ] || continue
  harnesses+=("$(basename "$src" .c)")
done
if [ ${#harnesses[@]} -eq 0 ]; then
  echo "fuzz.sh: no harnesses under tests/fuzz" >&2
  exit 0
fi
CC=clang cmake -S . -B "$BUILD_DIR" -DAPPSIM_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target "${harnesses[@]}"
mkdir -p "$BUILD_DIR/artifacts"
# One harness per core at a time (libFuzzer runs one process): the same fuzzing time
# each, in a fraction of the wall time.
fuzz_one() {
  local h=$1 bin seeds work
  bin=$(find "$BUILD_DIR" -type f -name "$h" -perm -u+x | head -1)
  seeds=tests/fuzz/corpus/$h
  work=$BUILD_DIR/corpus/$h
  mkdir -p "$work"
  [ -d "$seeds" ] || { echo "fuzz.sh: $h has no seed corpus in $seeds" >&2; return 1; }
  if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 "$bin" -max_total_time="$SECONDS_EACH" \
      -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$BUILD_DIR/artifacts/$h-" "$work" "$seeds" 2>"$BUILD_DIR/$h.log"; then
    echo "fuzz.sh: $h FAILED; log $BUILD_DIR/$h.log, reproducer in $BUILD_DIR/artifacts/" >&2
    tail -40 "$BUILD_DIR/$h.log" >&2
    return 1
  fi
  echo "== $h for ${SECONDS_EACH}s: $(grep -E "stat::number_of_executed_units" "$BUILD_DIR/$h.log" | tail -1)"
}
jobs_max=$(nproc)
status=0
pids=()
for h in "${harnesses[@]}"; do
  fuzz_one "$h" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs_max" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done
exit $status
