#!/usr/bin/env bash
# Quick start, command 2: build and run the whole test suite; non-zero on any failure.
# In CI (CI=true) it also checks the formatting (.clang-format), builds with -Werror and
# assert() on (the whole suite then checks the asserted invariants), runs the unit tests
# under ASan+UBSan, builds with -O3 (Release) and -Werror, runs cppcheck,
# and runs each fuzz harness briefly.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${CI:-}" = "true" ]; then
  echo "== formatting (.clang-format)"
  scripts/format.sh
  # The suite runs with assert() on (APPSIM_ASSERTS), so the integration tests check the
  # invariants the code states; the -O3 build below is the one without them.
  BUILD_DIR=build scripts/build.sh -DAPPSIM_WERROR=ON -DAPPSIM_ASSERTS=ON
else
  BUILD_DIR=build scripts/build.sh -DAPPSIM_ASSERTS=OFF
fi
ctest --test-dir build --output-on-failure -j2
if [ "${CI:-}" = "true" ]; then
  echo "== unit tests under ASan+UBSan"
  BUILD_DIR=build-asan BUILD_TYPE=Debug scripts/build.sh -DAPPSIM_SANITIZE=ON -DAPPSIM_WERROR=ON
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j2 -L unit
  echo "== -O3 build (Release), warnings as errors; built only, the tests ran above"
  BUILD_DIR=build-o3 BUILD_TYPE=Release scripts/build.sh -DAPPSIM_WERROR=ON
  echo "== static analysis (cppcheck)"
  cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability \
    --inline-suppr --suppress=missingIncludeSystem --library=.ci/cppcheck.cfg -I . sim storage oltp kv trace
  if ls tests/fuzz/fuzz_*.c >/dev/null 2>&1; then
    echo "== fuzzing each parser for a short time"
    scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
  fi
fi
