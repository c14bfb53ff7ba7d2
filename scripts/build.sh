#!/usr/bin/env bash
# Configures and builds appsim in BUILD_DIR (default ./build). Extra arguments go to cmake.
# The configure step's progress goes to BUILD_DIR/configure.log; its warnings (an
# optional part left out: libnvme, Open MPI) go to stderr, and are repeated in one
# summary line after the build so that they are not lost above the compiler's output.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
mkdir -p "$BUILD_DIR"
status=0
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" \
  >"$BUILD_DIR/configure.log" 2>"$BUILD_DIR/configure.warnings" || status=$?
cat "$BUILD_DIR/configure.warnings" >&2
[ "$status" -eq 0 ] || { echo "build.sh: configure failed; its log: $BUILD_DIR/configure.log" >&2; exit "$status"; }
cmake --build "$BUILD_DIR" -j"$(nproc)"
if grep -q "CMake Warning" "$BUILD_DIR/configure.warnings" 2>/dev/null; then
  echo "build.sh: built; configure warned (see above, or $BUILD_DIR/configure.warnings)" >&2
fi
