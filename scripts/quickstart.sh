#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, and run the main job on its
# embedded default (a short TPC-C run on SQLite in ./appsim-data).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
mkdir -p appsim-data
# Pacing off: the quick start has 10 users, and at review pacing (4.74 s cycle) they
# would offer about 2 TPS; unpaced, the drive and the engine set the rate.
exec build/appsim tpcc --target ./appsim-data --pacing off --json appsim-data/result.json "$@"
